# SPDX-License-Identifier: GPL-2.0
"""The module built with Kbuild against a kernel tree, and with DKMS on
private trees: what scripts/check-builds and scripts/check-debian build.

DKMS runs with its source, build and install trees under one folder of
ours (its --sourcetree, --dkmstree and --installtree), so that the
machine's /usr/src, /var/lib/dkms and /lib/modules stay untouched.
"""

import os
import re
import shutil
import subprocess
import sys

from runner import paths, shell
from runner.shell import ROOT

# what makes a build log not clean
WARNING = "warning:|error:"


def jobs():
    """make's -j for a build here: the CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def test_kernel(variant="default"):
    """The test kernel's build folder of VARIANT (scripts/test-kernel
    builds it once, then finds it in the cache); None when it cannot."""
    return shell.output([os.path.join(ROOT, "scripts", "test-kernel"), "--variant", variant])


def build(kdir, src, log_file, target="modules"):
    """make TARGET of the module in SRC against the kernel tree KDIR,
    its output in LOG_FILE; whether it succeeded."""
    with open(log_file, "wb") as f:
        return shell.run(["make", f"-j{jobs()}", "-C", kdir, f"M={src}", target],
                         stdout=f, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL).returncode == 0


def warning_free(log_file, ignore_case=True):
    """Whether the build log LOG_FILE has no compiler warning or error
    (any case: modpost's "WARNING:" too, unless not IGNORE_CASE); the
    lines that do go to standard error."""
    warning = re.compile(WARNING, re.IGNORECASE if ignore_case else 0)
    with open(log_file, encoding="utf-8", errors="replace") as f:
        found = [line for line in f if warning.search(line)]
    sys.stderr.writelines(found)
    sys.stderr.flush()
    return not found


class Dkms:
    """dkms on the private trees under FOLDER: sources in FOLDER/src,
    builds in FOLDER/tree, installs in FOLDER/install; its output is
    added to the file LOG, which build() starts afresh."""

    def __init__(self, folder, log_file):
        self.dir = folder
        self.log = log_file
        self.version = paths.krwq_version()

    def run(self, *args):
        """dkms ARGS on the private trees; whether it succeeded."""
        with open(self.log, "ab") as out:
            return shell.run(["dkms", *args, "--sourcetree", f"{self.dir}/src",
                              "--dkmstree", f"{self.dir}/tree",
                              "--installtree", f"{self.dir}/install"],
                             stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL).returncode == 0

    def built(self, rel):
        """Where build() puts its build for kernel release REL."""
        return f"{self.dir}/tree/krwq/{self.version}/{rel}/x86_64"

    def failed_log(self):
        """The make log of a build that failed: dkms leaves it in its
        build folder and moves it only on success."""
        return f"{self.dir}/tree/krwq/{self.version}/build/make.log"

    def build(self, rel, kdir):
        """The folder emptied, a copy of this tree as krwq's sources in
        it, then `dkms add` and `dkms build` for release REL against the
        kernel tree KDIR; whether it built krwq.ko (its make log is then
        built(REL)/log/make.log)."""
        open(self.log, "wb").close()
        shutil.rmtree(self.dir, ignore_errors=True)
        # a file copy_tree could not copy is named, and shows in the
        # build that follows
        paths.copy_tree(f"{self.dir}/src/krwq-{self.version}")
        os.makedirs(f"{self.dir}/tree", exist_ok=True)
        os.makedirs(f"{self.dir}/install/{rel}", exist_ok=True)
        return (self.run("add", "-m", "krwq", "-v", self.version)
                and self.run("build", "-m", "krwq", "-v", self.version, "-k", rel,
                             "--kernelsourcedir", kdir)
                and os.path.isfile(f"{self.built(rel)}/module/krwq.ko"))

    def install(self, rel, kdir):
        """`dkms install` of the build for REL (no depmod: it would index
        the host's /lib/modules/REL; the guest runs its own); whether
        krwq.ko is then in the install tree."""
        return (self.run("install", "-m", "krwq", "-v", self.version, "-k", rel,
                         "--kernelsourcedir", kdir, "--no-depmod")
                and os.path.isfile(self.installed(rel)))

    def installed(self, rel):
        """Where install() puts krwq.ko for REL."""
        return f"{self.dir}/install/{rel}/updates/dkms/krwq.ko"

    def remove(self, rel):
        """`dkms remove` for REL; whether it left nothing of krwq
        installed, nor in DKMS's tree."""
        if not self.run("remove", "-m", "krwq", "-v", self.version, "-k", rel, "--no-depmod"):
            return False
        for _, _, files in os.walk(f"{self.dir}/install"):
            if any(f.startswith("krwq.ko") for f in files):
                return False
        return not os.path.lexists(f"{self.dir}/tree/krwq")
