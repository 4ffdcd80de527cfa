# SPDX-License-Identifier: GPL-2.0
"""scripts/check-blktests: blktests at a pinned commit, what its tests
call that busybox lacks, siw.ko built for Debian's kernel, one boot of
that kernel running scripts/guest/blktests.sh, and its "@@blktests"
lines read back into a table and a count.

The guest's lines (scripts/guest/blktests.sh says what each means):
  @@blktests DEVICE TEST STATUS
  @@blktests-why DEVICE TEST REASON[; REASON...]
  @@blktests-status DEVICE GROUP RC BOUND OWN
"""

import glob
import os
import re
import shlex
import shutil
import subprocess

from runner import boot, markers, paths, pkgs, rootfs, shell, stage
from runner.shell import ROOT, log, log_lines

OUT = stage.OUT
URL = os.environ.get("BLKTESTS_URL", "https://github.com/osandov/blktests")
# the commit the results in docs/results.md were made with
COMMIT = os.environ.get("BLKTESTS_COMMIT", "613b8377e4d30fb5b0e0e0882885b3bf103b2c7c")
GROUPS = ("nvme", "srp")
TEST = re.compile(r"(nvme|srp)(/[0-9]+)?")
DEVICES = ("krwq", "rxe", "siw")  # the passes, in the guest's order
CONSOLE = "build/vm/blktests-console.log"
# what blktests runs that busybox lacks: the programs of these packages
TOOL_PKGS = ("bash", "coreutils", "util-linux", "mount", "gawk", "sed", "grep", "gzip",
             "findutils", "bsdextrautils", "e2fsprogs", "xfsprogs")
# the srp group's: udev whole (the nvme tests run without its daemon, and
# then udevadm settle returns at once), multipath-tools, dmsetup and its
# rules, and sg_reset; their programs, libraries, plugins and rules
SRP_PKGS = ("udev", "multipath-tools", "dmsetup", "sg3-utils")
PKGS = ("git", "build-essential", "linux-source-6.1", *TOOL_PKGS, *SRP_PKGS)
# the modules of Debian's package the guest loads beside krwq.ko and siw.ko
MODULES = ("drivers/block/loop", "fs/ext4/ext4", "fs/jbd2/jbd2", "fs/mbcache", "lib/crc16",
           "fs/xfs/xfs", "lib/libcrc32c")


class Fatal(Exception):
    """The run cannot go on: one failure, and "PASSED FAILED" still
    comes last."""


def program_file(path):
    """Whether PATH, a file of TOOL_PKGS, is a program the guest gets.

    >>> [program_file(p) for p in ("/usr/bin/gawk", "/sbin/mkfs", "/usr/share/doc/x")]
    [True, True, False]
    """
    return path.startswith(("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/"))


def srp_file(path):
    """Whether PATH, a file of SRP_PKGS, is one the guest gets: programs,
    libraries, plugins and rules, not pkg-config files, systemd units or
    tmpfiles.

    >>> [srp_file(p) for p in ("/lib/udev/rules.d/x.rules", "/usr/lib/x/pkgconfig/y.pc",
    ...                        "/lib/systemd/system/z.service", "/etc/multipath.conf")]
    [True, False, False, False]
    """
    if "/pkgconfig/" in path or path.startswith(("/lib/systemd/system/",
                                                 "/usr/lib/tmpfiles.d/")):
        return False
    return path.startswith(("/bin/", "/sbin/", "/lib/", "/usr/bin/", "/usr/sbin/", "/usr/lib/"))


def package_files(pkg, wanted):
    """The files dpkg lists for PKG that WANTED picks and that are there
    (a regular file, or a link: mkfs.ext4 -> mke2fs comes with its
    target)."""
    got = subprocess.run(["dpkg", "-L", pkg], stdout=subprocess.PIPE, text=True, check=False)
    return [f for f in got.stdout.splitlines()
            if wanted(f) and (os.path.isfile(f) or os.path.islink(f))]


def table(lines):
    """The rows (TEST, krwq's, rxe's and siw's status) of the guest's
    "@@blktests" LINES, sorted; "-" for a device with none.

    >>> table(["@@blktests krwq nvme/003 passed", "@@blktests rxe nvme/003 failed",
    ...        "@@blktests krwq nvme/041 not run", "# @@blktests siw x y"])
    [('nvme/003', 'passed', 'failed', '-'), ('nvme/041', 'not run', '-', '-')]
    """
    status = {}
    for line in lines:
        m = re.fullmatch(r"@@blktests ([a-z]*) ([^ ]*) (.*)", line)
        if m:
            status.setdefault(m.group(2), {})[m.group(1)] = m.group(3)
    rows = [(t, *(s.get(d) or "-" for d in DEVICES)) for t, s in status.items()]
    return sorted(rows, key=lambda r: "\t".join(r))


def reasons(lines):
    """{TEST: REASONS} of the tests that did not run on krwq, as the
    guest's "@@blktests-why krwq" LINES give them.

    >>> reasons(["@@blktests-why krwq nvme/041 a; b", "@@blktests-why rxe nvme/041 c"])
    {'nvme/041': 'a; b'}
    """
    why = {}
    for line in lines:
        m = re.fullmatch(r"@@blktests-why krwq ([^ ]*) (.*)", line)
        if m:
            why[m.group(1)] = m.group(2)
    return why


def first_reason(why):
    """WHY's first reason, and how many more it gives.

    >>> first_reason("a; b; c"), first_reason("a"), first_reason("")
    ('a (and 2 more)', 'a', '')
    """
    parts = why.split("; ")
    return parts[0] + (f" (and {len(parts) - 1} more)" if len(parts) > 1 else "")


def counts(rows, column):
    """The statuses of ROWS' COLUMN (1: krwq, 2: rxe, 3: siw), said.

    >>> counts([("a", "passed", "failed", "-"), ("b", "not run", "passed", "-")], 1)
    '1 passed, 0 failed, 1 not run'
    """
    got = [r[column] for r in rows]
    return (f"{got.count('passed')} passed, {got.count('failed')} failed, "
            f"{got.count('not run')} not run")


def markdown(rows, why, rel):
    """build/check/blktests.md's lines: the counts of each device, then
    the table, with the first reason a test did not run on krwq."""
    lines = [f"blktests {COMMIT[:7]} on Debian's {rel} (nvme: `nvme_trtype=rdma`): "
             f"krwq {counts(rows, 1)}; rdma_rxe {counts(rows, 2)}; siw {counts(rows, 3)}.",
             "", "| test | krwq | rdma_rxe | siw | not run because |",
             "| --- | --- | --- | --- | --- |"]
    for t, k, r, s in rows:
        lines.append(f"| {t} | {k} | {r} | {s} | {first_reason(why.get(t, ''))} |")
    return lines


def judge_rows(t, rows):
    """One count in tally T per test and device that ran; a failure for a
    test with no status on a device; krwq's failures that a peer passes
    named."""
    for test, k, r, s in rows:
        for st in (k, r, s):
            if st == "passed":
                t.passed += 1
            elif st == "failed":
                t.failed += 1
            elif st == "-":
                t.bad(f"{test} has no status on one device")
        if k == "failed":
            peers = [name for name, st in (("rdma_rxe", r), ("siw", s)) if st == "passed"]
            if peers:
                log(f"krwq fails {test}, which {' and '.join(peers)} "
                    f"pass{'es' if len(peers) == 1 else ''}")


def pass_status(lines, device, group):
    """(RC, BOUND, OWN) of DEVICE's GROUP pass, from the guest's first
    "@@blktests-status" line for it; None when there is none.

    >>> pass_status(["@@blktests-status krwq nvme 1 35 35"], "krwq", "nvme")
    (1, 35, 35)
    >>> pass_status(["@@blktests-status krwq nvme 1 35 35"], "rxe", "nvme") is None
    True
    """
    for line in lines:
        m = re.fullmatch(rf"@@blktests-status {device} {group} ([0-9]+) ([0-9]+) ([0-9]+)",
                         line)
        if m:
            return tuple(int(x) for x in m.groups())
    return None


def judge_passes(t, lines, groups):
    """A failure for each pass (a group on a device) that reported no
    status or ran out of time, for a krwq pass in which no test bound a
    krwq device, and for an rxe or siw pass in which one did or in which
    none bound the pass's own device."""
    for g in groups:
        for d in DEVICES:
            got = pass_status(lines, d, g)
            if got is None:
                t.bad(f"{d}'s {g} pass reported no status")
                continue
            rc, bound, own = got
            if rc == 124:
                t.bad(f"{d}'s {g} pass ran out of time")
            elif d == "krwq" and bound == 0:
                t.bad(f"no test of krwq's {g} pass bound a krwq device: "
                      "the override was not used")
            elif d != "krwq" and bound != 0:
                t.bad(f"{bound} tests of {d}'s {g} pass ran on a krwq device")
            elif d != "krwq" and own == 0:
                t.bad(f"no test of {d}'s {g} pass bound a {d} device")


def report(t, lines, tests, rel):
    """The run's results from the guest's LINES: build/check/blktests.tsv,
    blktests-why.tsv and blktests.md written, the table shown, and the
    counts and checks added to tally T."""
    rows = table(lines)
    with open(os.path.join(OUT, "blktests.tsv"), "w") as f:
        f.writelines("\t".join(r) + "\n" for r in rows)
    if not rows:
        t.bad(f"the guest reported no blktests result ({OUT}/blktests-vm.log)")
    why = reasons(lines)
    with open(os.path.join(OUT, "blktests-why.tsv"), "w") as f:
        f.writelines(f"{k}\t{v}\n" for k, v in why.items())
    md = markdown(rows, why, rel)
    with open(os.path.join(OUT, "blktests.md"), "w") as f:
        f.writelines(line + "\n" for line in md)
    log_lines(md)
    judge_rows(t, rows)
    judge_passes(t, lines, sorted({x.split("/")[0] for x in tests}))
    log(f"krwq: {counts(rows, 1)}; rdma_rxe: {counts(rows, 2)}; siw: {counts(rows, 3)}")


def blktests_tree(bt):
    """blktests at COMMIT in BT, from BLKTESTS_DIR or the cache's clone
    (cloned or fetched as need be), its src/ helpers built and the
    override appended."""
    src = os.environ.get("BLKTESTS_DIR") or os.path.join(paths.cache(), "blktests")
    if not os.path.exists(src):
        log(f"cloning {URL} into {src}")
        if subprocess.run(["git", "clone", "-q", URL, src]).returncode:
            raise Fatal(f"cannot clone blktests; set BLKTESTS_DIR to a clone of {URL}")
    elif not os.environ.get("BLKTESTS_DIR") and subprocess.run(
            ["git", "-C", src, "cat-file", "-e", f"{COMMIT}^{{commit}}"],
            stderr=subprocess.DEVNULL).returncode:
        if subprocess.run(["git", "-C", src, "fetch", "-q"]).returncode:
            raise Fatal(f"cannot fetch blktests into {src}")
    os.makedirs(bt)
    archive = subprocess.Popen(["git", "-C", src, "archive", COMMIT], stdout=subprocess.PIPE)
    untar = subprocess.run(["tar", "-x", "-C", bt], stdin=archive.stdout)
    archive.stdout.close()
    if archive.wait() or untar.returncode:
        raise Fatal(f"blktests at {COMMIT}: not in {src}")
    if not shell.logged(["make", "-s", "-C", bt], os.path.join(OUT, "blktests-build.log")):
        raise Fatal(f"blktests' helpers do not build ({OUT}/blktests-build.log)")
    with open(os.path.join(ROOT, "scripts", "blktests", "soft-rdma-krwq.sh")) as f, \
            open(os.path.join(bt, "common", "multipath-over-rdma"), "a") as to:
        to.write(f.read())


def guest_tools(root):
    """The programs, libraries, plugins and rules of TOOL_PKGS and
    SRP_PKGS copied into the root folder ROOT, under a merged /usr."""
    picked = [f for p in TOOL_PKGS for f in package_files(p, program_file)]
    picked += [f for p in SRP_PKGS for f in package_files(p, srp_file)]
    # multipath's plugins are opened at run time, so scripts/vm's search
    # of the executables' libraries misses theirs
    picked += rootfs.elf_libs(sorted(glob.glob("/lib/multipath/*.so")))
    for f in picked:
        rootfs.copy_to_root(root, f)
    rootfs.merge_usr(root)


def debian_kernel():
    """(Debian's kernel tree as scripts/debian-kernel lays it out, its
    release, krwq.ko built for it)."""
    kdir = shell.output(["scripts/debian-kernel"])
    if kdir is None:  # it said why
        raise Fatal("scripts/debian-kernel")
    with open(os.path.join(kdir, "release")) as f:
        rel = f.read().strip()
    ko = shell.output(["scripts/debian-kernel", "module"])
    if ko is None:
        raise Fatal(f"krwq.ko for Debian's {rel} does not build")
    return kdir, rel, ko


def build_siw(rel, ko):
    """siw.ko built from the folder of Debian's kernel source whose
    version is the headers' (the test kernel's unpacked source, else the
    package's tarball), against the headers krwq.ko KO was built against,
    in build/debian-siw; its path."""
    hdr = f"/usr/src/linux-headers-{rel}"
    sver, hver = pkgs.version("linux-source-6.1"), pkgs.version(f"linux-headers-{rel}")
    if sver != hver:
        raise Fatal(f"linux-source-6.1 is {sver}, linux-headers-{rel} {hver}: "
                    "siw.ko would not match")
    siw = os.path.join(ROOT, "build", "debian-siw")
    shutil.rmtree(siw, ignore_errors=True)
    os.makedirs(siw)
    ksrc = paths.kernel_src()
    if os.path.isfile(os.path.join(ksrc, ".krwq-unpacked")):
        shutil.copytree(os.path.join(ksrc, "drivers/infiniband/sw/siw"), siw,
                        dirs_exist_ok=True)
    elif subprocess.run(["tar", "-xJf", "/usr/src/linux-source-6.1.tar.xz", "-C", siw,
                         "--strip-components=5",
                         "linux-source-6.1/drivers/infiniband/sw/siw"]).returncode:
        raise Fatal(f"no siw sources in linux-source-6.1 {sver}")
    if not shell.logged(["make", "-s", "-C", hdr, f"M={siw}", "CONFIG_RDMA_SIW=m", "modules"],
                        os.path.join(OUT, "siw-build.log")):
        raise Fatal(f"siw.ko does not build against {hdr} ({OUT}/siw-build.log)")
    built = os.path.join(siw, "siw.ko")
    if boot.modinfo("vermagic", built) != boot.modinfo("vermagic", ko):
        raise Fatal("siw.ko's vermagic is not krwq.ko's")
    return built


def prepare(root, tests):
    """The guest's files in ROOT (build/blktests-root): blktests, the
    tools, Debian's config and modules, siw.ko; (the release, krwq.ko,
    blktests' folder)."""
    shutil.rmtree(root, ignore_errors=True)
    bt = os.path.join(root, "krwq", "blktests")
    blktests_tree(bt)
    guest_tools(root)
    kdir, rel, ko = debian_kernel()
    kmods = os.path.join(kdir, "package", "lib", "modules", rel)
    os.makedirs(os.path.join(root, "boot"))
    os.makedirs(os.path.join(root, "mods"))
    try:
        shutil.copy(os.path.join(kdir, "package", "boot", f"config-{rel}"),
                    os.path.join(root, "boot"))
    except OSError:
        raise Fatal(f"no config-{rel} in Debian's package")
    for m in MODULES:
        try:
            shutil.copy(os.path.join(kmods, "kernel", m + ".ko"), os.path.join(root, "mods"))
        except OSError:
            raise Fatal(f"no {m}.ko in Debian's {rel}")
    shutil.copy(build_siw(rel, ko), os.path.join(root, "mods"))
    return rel, ko, bt


def main(args):
    """scripts/check-blktests [TEST]...; prints "PASSED FAILED" last."""
    os.chdir(ROOT)
    os.makedirs(OUT, exist_ok=True)
    tests = args or list(GROUPS)
    t = stage.Tally()
    try:
        for x in tests:
            if not TEST.fullmatch(x):
                raise Fatal(f"{x}: only the nvme and srp groups and their tests run here")
        pkgs.need_pkgs([*pkgs.VM_PKGS, *PKGS])
        root = os.path.join("build", "blktests-root")
        rel, ko, bt = prepare(root, tests)
    except Fatal as e:
        t.bad(str(e))
        print(t.line(), flush=True)
        return 1
    log(f"booting Debian's {rel} for blktests {' '.join(tests)}")
    vmlog = os.path.join(OUT, "blktests-vm.log")
    vm = stage.Vm(" ".join(["sh /krwq/add/blktests.sh", *map(shlex.quote, tests)]), 28000,
                  module=False, kernel="debian", console=os.path.join(ROOT, CONSOLE),
                  adds=(f"{root}/usr:/usr", f"{root}/boot:/boot", f"{root}/mods:/krwq/mods",
                        f"{bt}:/krwq/blktests", f"{ko}:/krwq/mods/krwq.ko",
                        "scripts/guest/blktests.sh"))
    rc = vm.run(vmlog, echo=True)
    report(t, markers.read_lines(vmlog), tests, rel)
    if rc:
        t.bad(f"the blktests VM run (status {rc}; {CONSOLE})")
    print(t.line(), flush=True)
    return 0

