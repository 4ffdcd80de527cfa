# SPDX-License-Identifier: GPL-2.0
"""scripts/check-hosts' two machines: two boots of Debian's kernel, each
with krwq.ko, their eth0s joined by QEMU's socket netdev on the host's
loopback (scripts/vm --link).  Host A runs `scripts/guest/hosts.sh
serve`, host B `hosts.sh drive` against it; each guest's TAP summary
counts, and each run must be clean.  With --bench, the same two guests
with one CPU each run hosts.sh's bench actions for scripts/bench.
"""

import dataclasses
import os
import signal
import subprocess
import time

from runner import markers, shell, stage
from runner.shell import ROOT, log
from runner.stage import Tally

# A port above Linux's default ephemeral range (32768-60999), so that no
# outgoing connection holds it.
PORTS = range(62100, 62200)
LISTEN = "0A"  # a socket's state in /proc/net/tcp*: TCP_LISTEN


@dataclasses.dataclass
class Mode:
    """What the two guests run (hosts.sh's SERVE and DRIVE actions), where
    their output goes (OUT, under ROOT), their CPUs (SMP, KRWQ_VM_SMP)
    and kmemleak's scans (SCANS, stage.Vm's); "" leaves the default."""

    out: str
    serve: str
    drive: str
    smp: str = ""
    scans: str = ""


MODES = {
    None: Mode(stage.OUT, "serve", "drive"),
    "--bench": Mode("build/bench", "bench-serve", "bench-drive", smp="1", scans="0"),
}


def listening(port):
    """Whether a TCP socket of the host listens on PORT, over IPv4 or
    IPv6: read from /proc, since a probe that connected would take
    QEMU's one connection."""
    want = f":{port:04X}"
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as f:
                rows = [line.split() for line in f][1:]
        except FileNotFoundError:
            continue
        if any(len(r) > 3 and r[3] == LISTEN and r[1].endswith(want) for r in rows):
            return True
    return False


class Host:
    """One guest: scripts/vm run with hosts.sh ACTION, linked to the other
    through PORT in ROLE (listen or connect), its output in
    OUT/hosts-NAME.log, its console in build/vm/hosts-NAME-console.log,
    added to the list STARTED as soon as it runs.  It runs in a session
    of its own, so that stopping it reaches the QEMU and everything else
    it started."""

    def __init__(self, name, role, port, action, mode, started):
        self.name = name
        self.log = os.path.join(mode.out, f"hosts-{name}.log")
        self.console = f"build/vm/hosts-{name}-console.log"
        vm = stage.Vm(f"sh /krwq/add/hosts.sh {action}", timeout=1800,
                      adds=("scripts/guest/hosts.sh",), link=f"{role}:{port}", kernel="debian",
                      console=os.path.join(ROOT, self.console), scans=mode.scans)
        env = vm.env()
        if mode.smp:
            env["KRWQ_VM_SMP"] = mode.smp
        with open(self.log, "wb") as f:
            self.proc = subprocess.Popen(vm.args(), stdout=f, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         env=env)
        started.append(self)

    def running(self):
        """Whether it has not ended."""
        return self.proc.poll() is None

    def wait_end(self, seconds):
        """Whether it ended within SECONDS."""
        try:
            self.proc.wait(seconds)
            return True
        except subprocess.TimeoutExpired:
            return False

    def signal(self, sig):
        """SIG to its whole session."""
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass


def stop(hosts):
    """HOSTS and everything they started gone: a SIGTERM, one grace
    period of 5 s for them all, then a SIGKILL."""
    hosts = [h for h in hosts if h.running()]
    for h in hosts:
        h.signal(signal.SIGTERM)
    if hosts:
        time.sleep(5)
    for h in hosts:
        h.signal(signal.SIGKILL)
        h.proc.wait()


def free_port():
    """The first port of PORTS nothing listens on; None if there is none."""
    return next((p for p in PORTS if not listening(p)), None)


def wait_listening(host, port, seconds):
    """Whether PORT is listened on before HOST ends or SECONDS pass."""
    end = time.monotonic() + seconds
    while not listening(port) and host.running() and time.monotonic() < end:
        time.sleep(0.5)
    return listening(port)


def result(t, host, label):
    """HOST's output on standard error, its last summary line counted,
    and its run's status checked; LABEL names it."""
    lines = markers.read_lines(host.log)
    shell.log_lines([f"--- host {label}", *lines])
    last = stage.last_summary(lines)
    if last:
        t.add(last[0], last[1])
    else:
        t.bad(f"host {label} printed no summary")
    rc = host.proc.returncode
    t.check(rc == 0, f"host {label}'s run is clean (no kernel splat, status 0)",
            f"host {label}'s run (status {rc}; {host.console})")


def run_pair(t, mode):
    """Host A, then host B once A listens; B's end, then A's (A ends once
    B said "done"; A left waiting by a B that never said it is stopped
    after 120 s).  False when the pair could not start."""
    port = free_port()
    if port is None:
        t.bad(f"no free TCP port in {PORTS.start}-{PORTS.stop - 1} for the link")
        return False
    hosts = []
    try:
        log(f"hosts: host A listens on 127.0.0.1:{port}")
        a = Host("a", "listen", port, mode.serve, mode, hosts)
        # B's QEMU connects at its start, so A's must listen by then; it
        # does once scripts/vm has built the guest's image (on a cold
        # cache, minutes)
        if not wait_listening(a, port, 300):
            t.bad(f"host A's QEMU is not listening on port {port} ({a.log})")
            stop([a])
            stage.show_file(a.log)
            return False
        b = Host("b", "connect", port, mode.drive, mode, hosts)
        b.proc.wait()
        if not a.wait_end(120):
            t.bad("host A still running 120 s after host B ended: stopped")
            stop([a])
        for h, label in ((a, "A"), (b, "B")):
            result(t, h, label)
        return True
    finally:
        # a signal or an error on the way: each guest is in a session of
        # its own, out of reach of whatever stops this one
        stop(hosts)


def main(args):
    """scripts/check-hosts [--bench]; prints "PASSED FAILED" last."""
    if len(args) > 1 or (args and args[0] not in MODES):
        shell.die("usage: scripts/check-hosts [--bench]")
    mode = MODES[args[0] if args else None]
    os.chdir(ROOT)
    os.makedirs(mode.out, exist_ok=True)
    os.makedirs("build/vm", exist_ok=True)
    t = Tally()
    # built once here, before two boots would build them at once
    if shell.run(["scripts/debian-kernel", "module"], stdout=subprocess.DEVNULL).returncode:
        print("0 1", flush=True)
        return 1
    if not stage.build_user():
        t.bad("user/ does not build")
        print(t.line(), flush=True)
        return 1
    started = run_pair(t, mode)
    print(t.line(), flush=True)
    return 0 if started else 1
