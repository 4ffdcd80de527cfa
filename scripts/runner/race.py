# SPDX-License-Identifier: GPL-2.0
"""scripts/check-race's run: krwq built from a copy of the tree against
the KCSAN test kernel, one boot of it (KUnit's suites, then the clients
on krwq0), and the kernel's complaints read back, KCSAN's reports sorted
by whether krwq code is in them."""

import collections
import glob
import os
import re
import shutil
import sys
import time

from runner import judge, kbuild, kunit, markers, paths, pkgs, shell, splats, stage
from runner.shell import ROOT, log

OUT = os.path.join(ROOT, "build", "race")
SRC = os.path.join(OUT, "src")  # the copy the modules are built in
# scripts/vm of the copy keeps its console under the copy
CONSOLE = os.path.join(SRC, "build", "vm", "last-console.log")

# the suites' results are read from the kernel log, which the VM runner
# prints at the end of every run; kmemleak off: leaks are the KASAN
# kernel's boots' to find (docs/testing.md)
COMMAND = '''insmod /krwq/krwq_kunit.ko || exit 1
rmmod krwq_kunit
sh /krwq/add/clients.sh krwq0'''

# a line of a KCSAN report that names krwq: its modules, its functions,
# the core's mangled C++ names
KRWQ = re.compile(r"\[krwq(_kunit)?\]|krwq_|_ZN4krwq")
RULE = "===================="  # the rule that ends a KCSAN report


def boot(kdir):
    """The boot on the KCSAN kernel in KDIR, run by the copy's scripts/vm
    so that the modules built there are the ones loaded."""
    return stage.Vm(COMMAND, 2400, adds=("scripts/guest/clients.sh",), kmemleak=False,
                    console=CONSOLE, kernel_dir=kdir,
                    program=os.path.join(SRC, "scripts", "vm"))


def sort_reports(lines, regex):
    """The console's LINES sorted: KCSAN's reports, each from its "BUG:
    KCSAN:" line to the rule that ends it, into those that name krwq
    code and the others; the other lines REGEX (the splat list) matches.
    Returns (reports, ours, theirs, splat lines): a report that never
    ends is counted, as one of the others, but kept in neither list.

    >>> rep = ["[ 1.0] BUG: KCSAN: data-race in f / g", "[ 1.0] f+0x1 [krwq]",
    ...        "[ 1.0] =================================="]
    >>> other = ["[ 2.0] BUG: KCSAN: data-race in h / i", "[ 2.0] h+0x1", rep[2]]
    >>> n, ours, theirs, splat = sort_reports(["[ 0.5] WARNING: x"] + rep + other
    ...                                       + ["[ 3.0] BUG: KCSAN: cut"], re.compile("WARNING:"))
    >>> n, len(ours), len(theirs), splat
    (3, 1, 1, ['[ 0.5] WARNING: x'])
    """
    n, ours, theirs, splat = 0, [], [], []
    report, mine = None, False
    for line in lines:
        if "BUG: KCSAN:" in line:
            report, mine = [], False
            n += 1
        if report is not None:
            report.append(line)
            mine = mine or bool(KRWQ.search(line))
            if RULE in line and len(report) > 1:
                (ours if mine else theirs).append(report)
                report = None
            continue
        if regex.search(line):
            splat.append(line)
    return n, ours, theirs, splat


def write_reports(path, reports):
    """REPORTS into PATH, each followed by an empty line; no file for
    none."""
    if reports:
        markers.write_lines(path, [line for r in reports for line in r + [""]])


def kinds(reports):
    """What the REPORTS are, counted, as uniq -c lines joined by ";"
    (each after "BUG: KCSAN: ", sorted).

    >>> kinds([["x BUG: KCSAN: data-race in b"], ["BUG: KCSAN: data-race in a"],
    ...        ["BUG: KCSAN: data-race in b"]])
    '      1 data-race in a;      2 data-race in b;'
    """
    what = collections.Counter(re.sub(r".*BUG: KCSAN: ", "", line)
                               for r in reports for line in r if "BUG: KCSAN" in line)
    return "".join(f"{n:7d} {w};" for w, n in sorted(what.items()))


def build(kdir, t):
    """krwq's modules and user/ built in a fresh copy of the tree against
    KDIR; False, the story told, when the modules do not build (user/
    failing is one failed check of T)."""
    # a file copy_tree could not copy is named, and shows in the build
    # that follows
    paths.copy_tree(SRC)
    build_log = os.path.join(OUT, "build.log")
    if not kbuild.build(kdir, SRC, build_log):
        stage.show_file(build_log, last=20)
        log(f"krwq does not build against the KCSAN kernel ({build_log})")
        return False
    sys.stderr.flush()
    if shell.run(["make", "-s", "-C", os.path.join(SRC, "user")], stdout=sys.stderr).returncode:
        t.bad("user/ does not build")
    return True


def kcsan_kernel():
    """The KCSAN test kernel's build folder (scripts/test-kernel builds it
    once, then finds it in the cache); None, the story told, when there
    is none."""
    kdir = kbuild.test_kernel("kcsan")
    if kdir is None:
        return None
    try:
        with open(os.path.join(kdir, ".config")) as f:
            if "CONFIG_KCSAN=y" in f.read().splitlines():
                return kdir
    except OSError:
        pass
    log(f"{kdir} has no KCSAN")
    return None


def complaints(t, console, folder, vm_rc, vm_log):
    """The kernel's complaints in the console log at CONSOLE, checked in
    T: KCSAN's reports sorted by whether krwq is in them (kept in
    FOLDER/kcsan-krwq.txt and kcsan-other.txt), the other splats
    (FOLDER/other-splats.txt; kmemleak's reports too, though none come
    in a boot without kmemleak); then VM_RC, scripts/vm's status, when
    nothing else explains it (its story in VM_LOG).  Returns the KCSAN
    reports, and of them krwq's."""
    ours_txt = os.path.join(folder, "kcsan-krwq.txt")
    splats_txt = os.path.join(folder, "other-splats.txt")
    stage.remove(*glob.glob(os.path.join(folder, "kcsan-*.txt")), splats_txt)
    regex = re.compile(splats.pattern().pattern + "|unreferenced object")
    total, ours, theirs, other_splats = sort_reports(markers.read_lines(console), regex)
    write_reports(ours_txt, ours)
    write_reports(os.path.join(folder, "kcsan-other.txt"), theirs)
    if other_splats:
        markers.write_lines(splats_txt, other_splats)
    other = total - len(ours)
    log(f"KCSAN: {total} report(s): {len(ours)} involving krwq, {other} elsewhere in the kernel")
    if not ours:
        t.ok("no KCSAN report involves krwq code")
    else:
        stage.show_file(ours_txt, first=60)
        t.bad(f"KCSAN: {len(ours)} data race report(s) in krwq code ({ours_txt})")
    if other:
        log(f"KCSAN reports outside krwq (not failed): {kinds(theirs)}")
    if other_splats:
        stage.show_file(splats_txt, first=20)
        t.bad(f"kernel splats other than KCSAN ({console})")
    why = run_failure(vm_rc, command_status(console), total, bool(other_splats))
    if why:
        stage.show_file(vm_log, last=20)
        t.bad(f"the VM run failed ({why}; {vm_log})")
    return total, len(ours)


def command_status(console):
    """COMMAND's own exit status, as the guest's /init printed it last in
    the console log at CONSOLE; None when it printed none."""
    found = judge.EXIT.findall("\n".join(markers.read_lines(console)))
    return int(found[-1]) if found else None


def run_failure(vm_rc, command, reports, splatted):
    """Why the boot failed, beyond what its splats already count, or None.
    scripts/vm's status VM_RC is 1 for any KCSAN report (REPORTS of them),
    so it alone cannot tell a guest that failed from a kernel that raced
    outside krwq: COMMAND (its own status, None when the guest printed
    none) and the time-out status 124 say it.  A crash is already counted
    by its splat (SPLATTED).

    >>> run_failure(1, 0, 2, False) is None      # a race outside krwq
    True
    >>> run_failure(1, 3, 2, False)              # COMMAND failed beside one
    'status 1, COMMAND 3'
    >>> run_failure(124, None, 1, False)
    'status 124, timed out'
    >>> run_failure(1, None, 0, False), run_failure(1, None, 0, True)
    ('status 1, no exit status', None)
    >>> run_failure(1, 0, 0, False)              # a complaint the judge saw
    'status 1'
    """
    if vm_rc == 0:
        return None
    if vm_rc == 124:
        return "status 124, timed out"
    if command is None:
        return None if splatted else f"status {vm_rc}, no exit status"
    if command:
        return f"status {vm_rc}, COMMAND {command}"
    return None if reports or splatted else f"status {vm_rc}"


def main(_args):
    """scripts/check-race; prints "PASSED FAILED" last."""
    os.chdir(ROOT)
    pkgs.need_pkgs(pkgs.KERNEL_BUILD_PKGS + pkgs.VM_PKGS)
    start = time.monotonic()
    t = stage.Tally()
    kdir = kcsan_kernel()
    if not kdir or not build(kdir, t):
        print("0 1", flush=True)
        return 1

    console_copy = os.path.join(OUT, "last-console.log")
    console_out, vm_log = os.path.join(OUT, "console.out"), os.path.join(OUT, "vm.log")
    stage.remove(console_copy)  # and the console itself, as every Vm.run does
    vm_start = time.monotonic()
    vm_rc = boot(kdir).run(console_out, err=vm_log)
    vm_secs = int(time.monotonic() - vm_start)
    open(CONSOLE, "a").close()  # a run that left none is read as an empty one
    shutil.copyfile(CONSOLE, console_copy)

    # --- KUnit, one count per case (kunit.py parses the KTAP)
    t.add(*kunit.suites(console_copy, OUT, " under KCSAN"))
    kunit.stress_report(console_copy, "stress_wqes_kcsan")

    # --- the clients
    got = stage.last_summary(markers.read_lines(console_out))
    if got:
        t.add(*got[:2])
        log(f"clients on krwq0 under KCSAN: {got[2]}")
    else:
        t.bad(f"clients on krwq0: no summary line ({console_out})")

    complaints(t, CONSOLE, OUT, vm_rc, vm_log)
    log(f"check-race: VM run {vm_secs}s, whole stage {int(time.monotonic() - start)}s")
    print(t.line(), flush=True)
    return 0
