# SPDX-License-Identifier: GPL-2.0
"""What the stage programs of make check share: the tally of their
checks, the guest scripts' summary lines, and one run of scripts/vm
declared as data (their entry is shell.entry).

Every stage prints its story on standard error and "PASSED FAILED" as
its last line of standard output; scripts/check reads that line.
"""

import dataclasses
import fcntl
import os
import re
import subprocess
import sys

from runner import markers, paths, shell
from runner.shell import ROOT, log, log_lines


class Tally:
    """A stage's passed and failed checks, "PASSED FAILED" at the end.

    >>> t = Tally()
    >>> t.add(3, 1)
    >>> t.line()
    '3 1'
    """

    def __init__(self):
        self.passed = self.failed = 0

    def ok(self, what):
        """One passed check: "krwq: ok: WHAT" on standard error."""
        log(f"ok: {what}")
        self.passed += 1

    def bad(self, what):
        """One failed check: "krwq: FAILED: WHAT" on standard error, the
        line scripts/results.py picks out of a failing stage's log."""
        log(f"FAILED: {what}")
        self.failed += 1

    def check(self, good, what, failed_what):
        """ok(WHAT) if GOOD, else bad(FAILED_WHAT)."""
        if good:
            self.ok(what)
        else:
            self.bad(failed_what)

    def add(self, passed, failed):
        """PASSED and FAILED checks counted elsewhere (a guest script's
        summary, KUnit's cases)."""
        self.passed += passed
        self.failed += failed

    def line(self):
        """The stage's last line: "PASSED FAILED"."""
        return f"{self.passed} {self.failed}"


SUMMARY = re.compile(r"([0-9]+) passed, ([0-9]+) failed")
OUT = "build/check"  # under ROOT: the stages' logs and results


def summary_of(lines):
    """(passed, failed) of a guest script's last line "N passed, N
    failed" (scripts/guest/tap.sh's tap_summary), or None.

    >>> summary_of(["ok 1 - a", "3 passed, 0 failed"]), summary_of(["3 passed"]), summary_of([])
    ((3, 0), None, None)
    """
    m = SUMMARY.fullmatch(lines[-1] if lines else "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def last_summary(lines):
    """The last of LINES that is a summary "N passed, N failed", wherever
    it stands (a boot's output goes on after its guest script's), as
    (passed, failed, line); None when there is none.

    >>> last_summary(["1 passed, 1 failed", "2 passed, 0 failed", "x 1 passed, 0 failed", "end"])
    (2, 0, '2 passed, 0 failed')
    >>> last_summary(["ok 1 - a"]) is None
    True
    """
    for line in reversed(lines):
        m = SUMMARY.fullmatch(line)
        if m:
            return int(m.group(1)), int(m.group(2)), line
    return None


def build_user():
    """user/'s programs built (make -s -C user, its output on standard
    error), one build at a time: two stages of make check may run side
    by side, and both need them.  Whether the build worked."""
    os.makedirs(os.path.dirname(paths.USER_LOCK), exist_ok=True)
    with open(paths.USER_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return shell.run(["make", "-s", "-C", os.path.join(ROOT, "user")],
                         stdout=sys.stderr, stdin=subprocess.DEVNULL).returncode == 0


def remove(*paths):
    """PATHS removed, where they are (rm -f)."""
    for path in paths:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def show_file(path, first=None, last=None):
    """PATH's lines on standard error: all, the FIRST ones or the LAST
    ones (sed -n 1,Np and tail -n N); nothing when it is missing."""
    try:
        lines = markers.read_lines(path)
    except OSError:
        return
    if first is not None:
        lines = lines[:first]
    if last is not None:
        lines = lines[-last:] if last else []
    log_lines(lines)


@dataclasses.dataclass
class Vm:
    """One run of scripts/vm, declared as data: COMMAND (guest shell
    code) and scripts/vm run's options (TIMEOUT, PARAMS, ADDS, KMEMLEAK,
    MODULE, LINK), and its environment: CONSOLE (KRWQ_VM_LOG), KERNEL
    (KRWQ_KERNEL: "debian" for Debian's), KERNEL_DIR (KRWQ_KERNEL_DIR),
    SCANS (KRWQ_VM_KMEMLEAK), each "" to leave the caller's.  PROGRAM
    is the scripts/vm to run: this tree's, or that of a copy (check-race
    builds one for its kernel)."""

    command: str
    timeout: int = 600
    params: tuple = ()
    adds: tuple = ()
    kmemleak: bool = True
    module: bool = True
    link: str = ""
    console: str = ""
    kernel: str = ""
    kernel_dir: str = ""
    scans: str = ""
    program: str = os.path.join(ROOT, "scripts", "vm")

    def args(self):
        """scripts/vm's command line.

        >>> " ".join(Vm("x", 60, params=("wire=0",), adds=("s.sh",), kmemleak=False,
        ...             program="vm").args())
        'vm run --timeout 60 --no-kmemleak --param wire=0 --add s.sh -- x'
        """
        args = [self.program, "run", "--timeout", str(self.timeout)]
        if not self.kmemleak:
            args.append("--no-kmemleak")
        if not self.module:
            args.append("--no-module")
        if self.link:
            args += ["--link", self.link]
        for p in self.params:
            args += ["--param", p]
        for a in self.adds:
            args += ["--add", a]
        return args + ["--", self.command]

    def env(self):
        """The environment scripts/vm runs in: ours, with the values this
        run names."""
        env = dict(os.environ)
        for name, value in (("KRWQ_VM_LOG", self.console), ("KRWQ_KERNEL", self.kernel),
                            ("KRWQ_KERNEL_DIR", self.kernel_dir),
                            ("KRWQ_VM_KMEMLEAK", self.scans)):
            if value:
                env[name] = value
        return env

    def run(self, out, echo=False, hide=None, err=None):
        """Boot: scripts/vm's standard output (COMMAND's lines) into the
        file OUT and, with ECHO, onto standard error as it comes, less the
        parts HIDE marks (a (BEGIN, END) pair of line starts: hidden());
        its standard error to ERR (a path, or subprocess.STDOUT for OUT)
        or ours.  The console of an earlier
        run goes first, so that a boot that never wrote one is not read
        or named with another's.  Returns scripts/vm's exit status; a
        stop (a signal, ^C) stops scripts/vm with SIGTERM (shell.child)."""
        if self.console:
            remove(self.console)
        errf = open(err, "wb") if err and err != subprocess.STDOUT else None
        hiding = hidden(hide) if hide else None
        try:
            with open(out, "wb") as f, \
                    shell.child(self.args(), stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                stderr=errf or err, env=self.env()) as proc:
                for line in iter(proc.stdout.readline, b""):
                    f.write(line)
                    if echo and not (hiding and hiding(line)):
                        sys.stderr.buffer.write(line)
                        sys.stderr.flush()
                return proc.wait()
        finally:
            if errf:
                errf.close()


def hidden(marks):
    """A function that says, line by line (bytes), whether a line is
    hidden: MARKS is a (BEGIN, END) pair, and the lines hidden run from
    one that starts with BEGIN to the next that starts with END, both
    included, or to the end when none does (sed's /^BEGIN/,/^END/d).

    >>> h = hidden(("KTAP-BEGIN", "KTAP-END"))
    >>> [h(x) for x in (b"a", b"KTAP-BEGIN x", b"KTAP-END x", b"KTAP-END y", b"b")]
    [False, True, True, False, False]
    """
    begin, end = (m.encode() for m in marks)
    on = False

    def hide(line):
        nonlocal on
        if on:
            on = not line.startswith(end)
            return True
        on = line.startswith(begin)
        return on
    return hide
