# SPDX-License-Identifier: GPL-2.0
"""scripts/check-builds' checks: the module builds, and its build guards
fail the builds they should.

  1. krwq.ko and the KUnit modules build without a warning against the
     test kernel (retpoline, rethunk, SLS, IBT, KASAN, lockdep, ftrace);
  2. reordering a member of struct krwq_kring fails the build;
  3. a C++ object that needs operator new fails the build;
  4. krwq.ko builds without a warning against Debian's headers made as
     an earlier 6.1 release has them, without ib_device_ops'
     pre_destroy_cq and struct_size_t (older_headers);
  5. `dkms build` (dkms.conf) works against the test kernel's tree.

The build against Debian's stock linux-headers-amd64 without a warning,
and `dkms build` for it, are scripts/check-debian's: its `dkms install`
needs that build anyway.  The guards build against those headers.
"""

import dataclasses
import os
import re
import shutil
import typing

from runner import debiankernel, kbuild, paths, stage
from runner.shell import ROOT, log
from runner.stage import Tally

OUT = stage.OUT
# the modules the test kernel's build must leave
MODULES = ("krwq.ko", "krwq_kunit.ko", "krwq_kunit_cm.ko", "krwq_kunit_route.ko",
           "krwq_kunit_rc.ko")
# The guards build only the object the change reaches: its rule makes
# the layout header and checks the object as every build does, without
# compiling the rest of the module first.
GUARD_OBJECT = "cxx-core/seam.o"

# guard 2: two members of struct krwq_kring swapped
KRING_MEMBERS = ("\tu32 tail;\n", "\tu32 count;\n")
# guard 3: a core object that needs the C++ runtime's operator new
NEEDS_NEW = '\nextern "C" int *krwq_guard_probe(void) { return new int(1); }\n'


def copy_changed(name, path, change):
    """A fresh copy of the tree in build/NAME with CHANGE applied to the
    text of its file PATH; the copy's folder, or None when CHANGE left
    the text as it was."""
    src = os.path.join(ROOT, "build", name)
    # a file copy_tree could not copy is named, and shows in the build
    paths.copy_tree(src)
    target = os.path.join(src, path)
    with open(target, encoding="utf-8") as f:
        text = f.read()
    changed = change(text)
    if changed == text:
        return None
    with open(target, "w", encoding="utf-8") as f:
        f.write(changed)
    return src


def swap_kring_members(text):
    """TEXT with the first "tail" member line and the "count" line after
    it swapped."""
    tail, count = KRING_MEMBERS
    return text.replace(tail + count, count + tail, 1)


@dataclasses.dataclass
class Guard:
    """A build guard: the tree copied to build/NAME and CHANGE applied
    to its file PATH must fail to build the guard object, its log saying
    WHY.  WHAT names the change in the checks' lines (UNCHANGED when the
    change could not be made); PASSED is the passing check's text."""

    name: str
    path: str
    change: typing.Callable[[str], str]
    why: str
    what: str
    unchanged: str
    passed: str

    def check(self, t, kdir):
        """The guard's one check, against the kernel tree KDIR."""
        log_file = f"{OUT}/build-{self.name}.log"
        label = self.name.replace("-", " ")
        src = copy_changed(self.name, self.path, self.change)
        if src is None:
            t.bad(f"{label}: {self.unchanged}")
        elif kbuild.build(kdir, src, log_file, GUARD_OBJECT):
            t.bad(f"{label}: {self.what} still builds")
        else:
            with open(log_file, encoding="utf-8", errors="replace") as f:
                said = self.why in f.read()
            t.check(said, f"{label}: {self.passed}",
                    f"{label}: build failed for another reason ({log_file})")


# What Linux 6.1's stable releases added that krwq uses where it can, and
# must build without (Debian 12's point-release kernel, 6.1.0-50, has
# neither): each (header, its text, the text the older header stands in
# for it with)
NEWER_61 = (("include/rdma/ib_verbs.h", "\tint (*pre_destroy_cq)(struct ib_cq *cq);",
             "\tint (*krwq_check_no_pre_destroy_cq)(struct ib_cq *cq);"),
            ("include/linux/overflow.h", "#define struct_size_t(",
             "#define krwq_check_no_struct_size_t("))


def older_headers(headers, to):
    """A copy in TO of Debian's headers tree HEADERS and of the -common
    tree its Makefile includes, with NEWER_61 taken out where the headers
    have it (headers of an earlier release lack it already); the copy of
    HEADERS.  ValueError (or OSError) says why it could not be made.
    Their relative links (scripts, tools) are made absolute."""
    with open(os.path.join(headers, "Makefile"), encoding="utf-8") as f:
        makefile = f.read()
    m = re.fullmatch(r"include (/\S+)/Makefile\n?", makefile)
    if not m:
        raise ValueError(f"{headers}/Makefile includes no -common tree")
    common = m.group(1)
    shutil.rmtree(to, ignore_errors=True)
    copies = {}
    for tree in (headers, common):
        copies[tree] = os.path.join(to, os.path.basename(tree))
        shutil.copytree(tree, copies[tree], symlinks=True)
        for name in os.listdir(tree):
            link = os.path.join(tree, name)
            if os.path.islink(link) and not os.path.isabs(os.readlink(link)):
                os.remove(os.path.join(copies[tree], name))
                os.symlink(os.path.realpath(link), os.path.join(copies[tree], name))
    with open(os.path.join(copies[headers], "Makefile"), "w", encoding="utf-8") as f:
        f.write(makefile.replace(common, copies[common]))
    for header, newer, older in NEWER_61:
        path = os.path.join(copies[common], header)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if text.count(newer) > 1:
            raise ValueError(f"{header} has {newer!r} more than once")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(newer, older))
    return copies[headers]


def check_older_61(t, headers):
    """One check: krwq.ko builds without a warning against HEADERS as an
    earlier 6.1 release has them (older_headers)."""
    what = "build against 6.1 headers without pre_destroy_cq and struct_size_t"
    log_file = f"{OUT}/build-older-6.1.log"
    try:
        kdir = older_headers(headers, os.path.join(ROOT, "build", "older-6.1-headers"))
    except (OSError, ValueError) as e:
        t.bad(f"{what}: {e}")
        return
    src = os.path.join(ROOT, "build", "older-6.1")
    paths.copy_tree(src)
    t.check(kbuild.build(kdir, src, log_file) and kbuild.warning_free(log_file)
            and os.path.isfile(os.path.join(src, "krwq.ko")),
            f"{what}, no warnings", f"{what} ({log_file})")


GUARDS = (
    Guard("layout-guard", "module/rq.h", swap_kring_members, "is not where C puts it",
          "a reordered struct krwq_kring", "could not reorder struct krwq_kring",
          "reordered struct krwq_kring fails the build"),
    Guard("runtime-guard", "cxx-core/seam.cpp", lambda text: text + NEEDS_NEW, "_Znwm",
          "a core object using operator new", "could not add operator new",
          "operator new in the core fails the build"),
)


def main(args):
    """The checks; prints "PASSED FAILED" last."""
    os.chdir(ROOT)
    os.makedirs(OUT, exist_ok=True)
    t = Tally()
    kdir = kbuild.test_kernel()
    if kdir is None:
        print("0 1", flush=True)
        return 1
    log(f"building against the test kernel ({kdir})")
    log_file = f"{OUT}/build-test-kernel.log"
    t.check(kbuild.build(kdir, ROOT, log_file) and kbuild.warning_free(log_file)
            and all(os.path.isfile(m) for m in MODULES),
            "test kernel build, no warnings", f"test kernel build ({log_file})")

    try:
        debian_kdir = debiankernel.headers_dir()
    except SystemExit:  # it said why
        t.bad("no headers tree of linux-headers-amd64 for the build guards")
        print(t.line(), flush=True)
        return 0
    for g in GUARDS:
        g.check(t, debian_kdir)
    check_older_61(t, debian_kdir)

    with open(os.path.join(kdir, "include", "config", "kernel.release"),
              encoding="utf-8") as f:
        rel = f.read().strip()
    dkms = kbuild.Dkms(os.path.join(ROOT, "build", "dkms"), f"{OUT}/dkms.log")
    t.check(dkms.build(rel, kdir), f"dkms build for {rel}", f"dkms build for {rel} ({dkms.log})")
    print(t.line(), flush=True)
    return 0
