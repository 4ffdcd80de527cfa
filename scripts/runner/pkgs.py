# SPDX-License-Identifier: GPL-2.0
"""The Debian packages the scripts need, and need_pkgs, which makes sure
they are installed.
"""

import fcntl
import os
import subprocess
import sys

from runner import shell
from runner.shell import die, log

# to build the test kernel (scripts/test-kernel)
KERNEL_BUILD_PKGS = ("linux-source-6.1", "build-essential", "flex", "bison", "bc", "libelf-dev",
                     "libssl-dev", "dwarves", "xz-utils", "python3", "kmod", "cpio")
# to run the VM: QEMU, and what scripts/initramfs takes files from
VM_PKGS = ("qemu-system-x86", "busybox-static", "cpio", "kmod", "rdma-core", "ibverbs-utils",
           "ibverbs-providers", "libibverbs-dev", "rdmacm-utils", "libgcc-s1", "perftest",
           "iproute2", "gzip", "nvme-cli", "fio", "tcpdump", "nfs-kernel-server", "nfs-common",
           "rpcbind", "libtirpc-common", "netbase", "open-iscsi", "ucx-utils", "libucx0",
           "libfabric-bin", "openmpi-bin", "libopenmpi3", "openmpi-common", "libpmix2",
           "netcat-traditional")
# scripts/lint's tools (scripts/check installs them too)
LINT_PKGS = ("sparse", "clang", "clang-format", "clang-tidy", "shellcheck", "pyflakes3")
# scripts/check-debian's (and scripts/check's)
DEBIAN_CHECK_PKGS = ("dkms", "libopenmpi-dev", "python3-pyverbs")
# one apt-get at a time on the machine: two stages of make check may run
# side by side, one of them from a copy of the tree
APT_LOCK = "/run/lock/krwq-apt.lock"


def missing(names):
    """Those of NAMES that dpkg does not have installed (a name may carry
    its architecture, as in libc6:amd64), asked in one go."""
    got = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${binary:Package} "
                          "${Package}:${Architecture} ${Status}\n", *names],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    have = set()
    for line in got.stdout.splitlines():
        fields = line.split(" ", 3)
        if len(fields) == 4 and "ok installed" in fields[3]:
            have.update(fields[:3])
    return [p for p in names if p not in have]


def version(pkg, quiet=True):
    """The installed version of PKG, or None (dpkg-query's complaint on
    standard error unless QUIET)."""
    got = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL if quiet else None, text=True)
    return got.stdout if got.returncode == 0 else None


def versions(names):
    """The lines "PACKAGE VERSION" of the packages NAMES (dpkg's names,
    with their architecture where they have one), sorted, as dpkg-query
    prints them; None when dpkg-query fails (one is not installed)."""
    got = subprocess.run(["dpkg-query", "-W", "-f=${binary:Package} ${Version}\n", *names],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if got.returncode:
        return None
    return sorted(got.stdout.splitlines())


def need_pkgs(names):
    """Install those of the packages NAMES that are missing, when root,
    without their recommends (the VM image takes files from them, and a
    recommend would only drag more into the host); else print the exact
    apt-get line and end the run with status 1.  apt-get update runs once per run: its
    KRWQ_APT_UPDATED in the environment reaches the scripts run after."""
    absent = missing(names)
    if not absent:
        return
    if os.geteuid() != 0:
        die("missing packages; run: sudo apt-get install -y --no-install-recommends "
            + " ".join(absent))
    with open(APT_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # what is missing is looked at again once the lock is ours
        absent = missing(names)
        if not absent:
            return
        log(f"installing {' '.join(absent)}")
        if not os.environ.get("KRWQ_APT_UPDATED"):
            if shell.run(["apt-get", "update", "-q"], stdout=sys.stderr).returncode:
                die("apt-get update failed")
            os.environ["KRWQ_APT_UPDATED"] = "1"
        got = shell.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *absent],
                        stdout=sys.stderr, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
        if got.returncode:
            die(f"apt-get install {' '.join(absent)} failed")
