# SPDX-License-Identifier: GPL-2.0
"""scripts/check-debian's checks: krwq on Debian's own kernel, built and
installed with DKMS as a Debian user would, then one boot of that kernel
running the guest programs of PROGRAMS, each counted by its last line
"N passed, N failed".  scripts/check-debian's help says what each
program checks.
"""

import os
import shutil
import subprocess
import sys

from runner import kbuild, markers, pkgs, shell, stage
from runner.shell import ROOT, log
from runner.stage import Tally

OUT = stage.OUT
CONSOLE = "build/vm/debian-console.log"

# The guest's programs, in order; each ends with "N passed, N failed".
# rxe0 and krwqe0 share the initial namespace (wire=0: krwq keeps off
# the wire).  pyverbs.sh binds krwqe0 to eth0, the NIC --link none
# gives the guest, whose function is its device's parent
# (netdev_parent=1; the others are on dummies, which have none).
PROGRAMS = (
    "sh /krwq/add/debian.sh {rel}",
    "sh /krwq/add/clients.sh krwq0",
    "krwq_verbs_test -d krwq0",
    "sh /krwq/add/pyverbs.sh krwq0 krwqe0=eth0 rxe0=md1",
    "sh /krwq/add/middleware.sh krwq0 krwqe0",
    "sh /krwq/add/nvmeof.sh krwq:krwqe0 rxe0@16",
    "sh /krwq/add/srp.sh krwq:krwqe0 rxe0@64",
    "sh /krwq/add/nfs.sh krwq:krwqe0 rxe0@64",
    "sh /krwq/add/iser.sh --rmmod krwq:krwqe0 rxe0@64",
    "sh /krwq/add/cm.sh krwq:krwqe0 krwq:krwqv0%10",
)
# after them, when `dkms install` worked: its krwq.ko through modprobe
DKMS_PROGRAM = "sh /krwq/add/dkms.sh {rel} {version}"
GUEST_SCRIPTS = ("debian", "clients", "nvmeof", "cm", "srp", "nfs", "iser", "middleware",
                 "pyverbs")


def dkms_build_install(t, dkms, rel):
    """`dkms build` for Debian's release REL against its headers, that
    build free of warnings, then `dkms install` (the build first, so
    that the two are checked apart: the install then only copies);
    whether the install worked."""
    headers = f"/usr/src/linux-headers-{rel}"
    make_log = f"{dkms.built(rel)}/log/make.log"
    built = dkms.build(rel, headers) and os.path.isfile(make_log)
    t.check(built, f"dkms build for {rel}", f"dkms build for {rel} ({dkms.log})")
    # the build against Debian's headers without a warning: dkms's make
    # log, under the kernel's log/ when the build succeeded, in its build
    # folder when not
    copy = f"{OUT}/build-debian.log"
    stage.remove(copy)
    try:
        shutil.copyfile(make_log, copy)
        clean = kbuild.warning_free(copy)
    except OSError:
        clean = False
    if not clean and not os.path.exists(copy):
        try:
            shutil.copyfile(dkms.failed_log(), copy)
        except OSError:
            pass
    t.check(clean, f"Debian linux-headers-{rel} build, no warnings",
            f"Debian headers build ({copy}, {dkms.log})")
    installed = os.path.isfile(make_log) and dkms.install(rel, headers)
    t.check(installed, f"dkms install krwq/{dkms.version} for {rel}",
            f"dkms install krwq/{dkms.version} for {rel} ({dkms.log})")
    return installed


def boot(rel, pyroot, dkms_ko, version):
    """Debian's kernel booted with the guest programs (and dkms.sh when
    DKMS_KO, the installed krwq.ko, is given); returns the exit status
    and the count of programs to expect.  The output goes to
    build/check/debian-vm.log, then to standard error."""
    programs = [p.format(rel=rel) for p in PROGRAMS]
    adds = [f"scripts/guest/{s}.sh" for s in GUEST_SCRIPTS]
    adds += [f"{pyroot}/usr:/usr", f"{pyroot}/krwq/rdma-core:/krwq/rdma-core"]
    if dkms_ko:
        adds += [f"{dkms_ko}:/lib/modules/{rel}/updates/dkms/krwq.ko", "scripts/guest/dkms.sh"]
        programs.append(DKMS_PROGRAM.format(rel=rel, version=version))
    vm = stage.Vm("; ".join(programs), timeout=3600, params=("wire=0", "netdev_parent=1"),
                  adds=tuple(adds), link="none", kernel="debian",
                  console=os.path.join(ROOT, CONSOLE))
    log(f"booting Debian's {rel}")
    out = f"{OUT}/debian-vm.log"
    rc = vm.run(out)
    stage.show_file(out)
    return rc, len(programs)


def count_summaries(t, expected):
    """The guest programs' summary lines in build/check/debian-vm.log
    added to the tally; fewer than EXPECTED is one failure."""
    n = 0
    for line in markers.read_lines(f"{OUT}/debian-vm.log"):
        m = stage.SUMMARY.fullmatch(line)
        if m:
            t.add(int(m.group(1)), int(m.group(2)))
            n += 1
    if n != expected:
        t.bad(f"{expected - n} of the {expected} guest programs printed no summary")


def main(args):
    """The checks; prints "PASSED FAILED" last."""
    os.chdir(ROOT)
    os.makedirs(OUT, exist_ok=True)
    t = Tally()
    pkgs.need_pkgs(pkgs.DEBIAN_CHECK_PKGS)
    kdir = shell.output(["scripts/debian-kernel"])
    if kdir is None:
        print("0 1", flush=True)
        return 1
    with open(os.path.join(kdir, "release"), encoding="utf-8") as f:
        rel = f.read().strip()
    if shell.run(["make", "-s", "-C", "user", "all", "mpi"], stdout=sys.stderr).returncode:
        t.bad("user/ does not build")
        print(t.line(), flush=True)
        return 1
    pyroot = os.path.join(ROOT, "build", "pyverbs-root")
    if shell.run(["scripts/pyverbs-root", pyroot], stdout=subprocess.DEVNULL).returncode:
        t.bad("scripts/pyverbs-root")
        print(t.line(), flush=True)
        return 1

    dkms = kbuild.Dkms(os.path.join(ROOT, "build", "dkms-debian"), f"{OUT}/dkms-debian.log")
    installed = dkms_build_install(t, dkms, rel)
    rc, expected = boot(rel, pyroot, dkms.installed(rel) if installed else None, dkms.version)
    count_summaries(t, expected)
    t.check(rc == 0, "the Debian VM run is clean (no kernel splat, status 0)",
            f"the Debian VM run (status {rc}; {CONSOLE})")
    if installed:
        t.check(dkms.remove(rel),
                f"dkms remove krwq/{dkms.version} for {rel} leaves nothing installed",
                f"dkms remove krwq/{dkms.version} for {rel} ({dkms.log})")
    print(t.line(), flush=True)
    return 0
