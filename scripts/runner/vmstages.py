# SPDX-License-Identifier: GPL-2.0
"""scripts/check-vm's groups: each one boot of the test VM, declared as
data (a Group: its guest parts, scripts/vm's options), then the checks
read back from what the boot printed.

A group's guest command is a list of Parts, each a piece of guest shell
code between markers of its own ("@@part-begin NAME@@" and "@@part-end
NAME rc=STATUS@@"), so that one boot's output splits into a file per
part under build/check.  A part's file usually ends with a guest
script's "N passed, N failed" line (scripts/guest/tap.sh), which the
tally adds; a part that ended with a failing status without a failed
check of its own to show for it, or never ended, is one failure more.

KUnit's suites and the dose of krwq_stress are read by runner.kunit,
which check-race and check-hostile share; user/'s build is
stage.build_user.  Every count goes through stage.Tally,
which prints "ok: ..." and "FAILED: ...".
"""

import base64
import binascii
import dataclasses
import gzip
import os
import re
import shutil
import subprocess
import zlib

from runner import kunit, markers, pkgs, shell, stage
from runner.markers import write_lines
from runner.shell import ROOT, log
from runner.stage import Tally, summary_of

OUT = stage.OUT
GROUPS = ("kunit", "user", "wire", "wire-volume", "cm", "teardown", "guard")


@dataclasses.dataclass
class Part:
    """One part of a boot's guest command: COMMAND (guest shell code) run
    between NAME's markers.  Its lines go to build/check/FILE, and their
    last, "N passed, N failed", is counted as LABEL when SUMMARY; with no
    FILE the part is read only by CHECK.  CHECK(run), if any, makes the
    part's own checks after that."""

    name: str
    command: str
    file: str = ""
    label: str = ""
    summary: bool = True
    check: object = None

    def shell(self):
        """The guest shell code of the part, markers and all, as one
        piece of the boot's command.

        >>> print(Part("x", "true").shell(), end="")
        echo "@@part-begin x@@"; true
        echo "@@part-end x rc=$?@@"
        """
        return (f'echo "@@part-begin {self.name}@@"; {self.command}\n'
                f'echo "@@part-end {self.name} rc=$?@@"\n')


@dataclasses.dataclass
class Group:
    """One group's boot: its PARTS, scripts/vm run's options (TIMEOUT,
    PARAMS, ADDS, KMEMLEAK), its output in build/check/LOG.  LABEL names
    the boot in the check that it ended well (with UNLESS_FAILED only
    counted when no check of the boot failed already: a failed check
    already fails a part's status); THEN(run), if any, comes last."""

    log: str
    parts: list
    label: str
    timeout: int
    params: tuple = ()
    adds: tuple = ()
    kmemleak: bool = True
    unless_failed: bool = False
    then: object = None

    def command(self):
        """The guest command: the parts one after the other (a command
        substitution in the shell's version dropped the last newline).

        >>> Group("x.log", [Part("a", "true"), Part("b", "false")], "x", 1).command()[-33:]
        'false\\necho "@@part-end b rc=$?@@"'
        """
        return "".join(p.shell() for p in self.parts).rstrip("\n")

    def vm(self, console):
        """The boot as scripts/vm runs it, its console kept in CONSOLE.

        >>> Group("x.log", [Part("a", "true")], "x", 60, params=("wire=0",),
        ...       adds=("s.sh",), kmemleak=False).vm("c.log").args()[2:9]
        ['--timeout', '60', '--no-kmemleak', '--param', 'wire=0', '--add', 's.sh']
        """
        return stage.Vm(self.command(), self.timeout, self.params, self.adds, self.kmemleak,
                        console=console)


def part_status(lines, name):
    """The exit statuses part NAME's end marker gives in LINES (none
    when it never ended).

    >>> part_status(["@@part-end a rc=3@@", "@@part-end ab rc=0@@"], "a")
    ['3']
    """
    end = re.compile(r"@@part-end " + re.escape(name) + r" rc=([0-9]*)@@")
    return [m.group(1) for line in lines if (m := end.fullmatch(line))]


class Run:
    """One run of scripts/check-vm: its tally and the console file of
    its boots (KRWQ_VM_LOG, one per run, so that two runs can share the
    machine)."""

    def __init__(self, groups):
        self.tally = Tally()
        tag = "-".join(groups)
        self.console = os.path.join(ROOT, "build", "vm", f"check-vm-{tag}-console.log")
        self.log = ""  # the last boot's output, build/check/*.log
        self.lines = []  # its lines
        self.rc = 0  # its exit status

    # -- one boot
    def keep_console(self, to):
        """A copy of the last boot's console at TO; False when it left
        none."""
        try:
            shutil.copyfile(self.console, to)
            return True
        except OSError:
            return False

    def boot(self, group):
        """GROUP's boot, then its parts' checks and the boot's own."""
        self.log = os.path.join(OUT, group.log)
        self.rc = group.vm(self.console).run(self.log, echo=True)
        self.keep_console(self.log[:-len(".log")] + "-console.log")
        self.lines = markers.read_lines(self.log)
        for part in group.parts:
            if part.file:
                self.part_result(part)
            if part.check:
                part.check(self)
        self.boot_ok(group.label, group.unless_failed)
        if group.then:
            group.then(self)

    def part_result(self, part):
        """PART's lines of the boot's output into its file, its summary
        counted; a failing status without a failed check in them, or no
        end, is one failure."""
        path = os.path.join(OUT, part.file)
        lines = markers.section(self.lines, f"@@part-begin {part.name}@@",
                                f"@@part-end {part.name} ")
        write_lines(path, lines)
        if part.summary:
            self.summary(path, part.label)
        rc = "\n".join(part_status(self.lines, part.name))
        if rc != "0" and not any(line.startswith("not ok") for line in lines):
            why = f"exit status {rc}" if rc else "never ended"
            self.tally.bad(f"{part.label}: {why} ({self.log})")

    def summary(self, path, label):
        """The "N passed, N failed" last line of PATH added as LABEL; no
        such line is a failure."""
        lines = markers.read_lines(path)
        got = summary_of(lines)
        if got:
            self.tally.add(*got)
            log(f"{label}: {lines[-1]}")
        else:
            self.tally.bad(f"{label}: no summary line ({path}; {self.console})")

    def boot_ok(self, label, unless_failed=False):
        """A splat (kmemleak's too), a crash or a timeout, which the
        runner reports as a failing status, fails the boot's LABEL; with
        UNLESS_FAILED only when no check of the boot failed already."""
        if unless_failed and any(line.startswith("not ok") for line in self.lines):
            return
        if self.rc != 0:
            self.tally.bad(f"{label}: the VM run failed (status {self.rc}; {self.console})")

    def grep(self, pattern):
        """Whether a line of the boot's output matches PATTERN at its
        start."""
        return any(re.match(pattern, line) for line in self.lines)


# --- the groups

def group_kunit(run):
    """KUnit, then KUnit's krwq_cm, in one boot.
     - krwq_kunit.ko: the suites run as it loads; their results are read
       from the kernel log, which the VM runner prints at the end of
       every run.
     - krwq_cm (krwq_kunit_cm.ko, scripts/guest/kunit-cm.sh): rdma_cm from
       the kernel (listen, connect, accept, reject, disconnect, sends both
       ways, UD through SIDR) on rxe0 and on a krwq device bound to a
       netdev, each on a dummy netdev of its own.  A skipped case had no
       address to work on: a failure here."""
    t = run.tally
    cm_devs = ("rxe0:rxe", "krwqe0:krwq")
    kunit_log = os.path.join(OUT, "kunit-console.log")
    console_copy = os.path.join(OUT, "kunit-vm-console.log")
    try:
        os.remove(console_copy)
    except FileNotFoundError:
        pass
    # the bounds the two had as boots of their own, added up.  rxe0 and
    # krwqe0 share the initial namespace, where rdma_rxe holds RoCEv2's
    # UDP port, so krwq keeps off the wire (wire=0) in this boot and in
    # the other boots that put the two side by side.
    rc = stage.Vm("insmod /krwq/krwq_kunit.ko; sh /krwq/add/kunit-cm.sh " + " ".join(cm_devs),
                  2100, params=("wire=0",),
                  adds=("scripts/guest/kunit-cm.sh", "krwq_kunit_cm.ko:/krwq/krwq_kunit_cm.ko"),
                  console=run.console).run(kunit_log)
    if not run.keep_console(console_copy):
        open(console_copy, "a").close()

    t.add(*kunit.suites(console_copy, os.path.join(ROOT, OUT), ""))
    kunit.stress_report(console_copy, "stress_wqes_kasan")
    lines = markers.read_lines(kunit_log)
    for line in lines:
        if re.match(r"# (kunit-cm\.sh|krwq_cm on)", line):
            log("  " + line[2:])
    for d in cm_devs:
        d = d.split(":")[0]
        p, f, sk = kunit.marked_tally(f"krwq_cm@{d}", kunit_log, os.path.join(ROOT, OUT))
        log(f"KUnit krwq_cm on {d}: {p} passed, {f} failed, {sk} skipped")
        t.add(p, f + sk)
        t.check(f"CM-UNLOAD ok {d}" in lines, f"krwq_kunit_cm.ko unloads after its run on {d}",
                f"krwq_kunit_cm.ko unload after its run on {d} ({kunit_log})")
    if rc != 0:
        t.bad(f"the KUnit VM run itself (status {rc}; {run.console})")


# The user boot's guest code (expanded by the guest's shell, not here).
RING_CMD = '''krwq_ring_test -d krwq0; rc=$?
ibv_rc_pingpong -d krwq0 -n 100 -s 4096 -c > /tmp/pp.log 2>&1 & s=$!
sleep 1
if ibv_rc_pingpong -d krwq0 -n 100 -s 4096 -c 127.0.0.1 >> /tmp/pp.log 2>&1 && wait $s
then echo "PINGPONG-AFTER ok"; else kill $s; cat /tmp/pp.log; echo "PINGPONG-AFTER failed"; fi
[ $rc = 0 ]'''
RELOAD_CMD = '''if rmmod krwq && insmod /krwq/krwq.ko && rmmod krwq
then echo "RELOAD ok"; else echo "RELOAD failed"; fi'''
# rmmod while processes hold krwq0: idle, and in the middle of traffic.
# With ABI 2 a process that only polls its mapped rings does not notice
# (its next system call fails, and it gets IBV_EVENT_DEVICE_FATAL), so
# the processes are killed afterwards; their mappings go with them.
RMMOD_CMD = '''( ibv_rc_pingpong -d krwq0 -p 19000 > /dev/null 2>&1 & p=$!
sleep 2
timeout 60 rmmod krwq || exit 1
kill $p 2> /dev/null; wait $p
insmod /krwq/krwq.ko abi=2 || exit 1
ib_send_bw -d krwq0 -D 4 -p 19001 > /dev/null 2>&1 & s=$!
sleep 1
ib_send_bw -d krwq0 -D 4 -p 19001 127.0.0.1 > /dev/null 2>&1 & c=$!
sleep 3
timeout 60 rmmod krwq || exit 1
kill $s $c 2> /dev/null; wait $s; wait $c
! grep -q "^krwq " /proc/modules )'''


def ring_checks(run):
    """krwq_ring_test's TAP without the pingpong's line, counted; then the
    pingpong another process ran after the hostile writer."""
    log_path = os.path.join(OUT, "ring-test.log")
    tap = os.path.join(OUT, "ring-test.tap")
    lines = markers.read_lines(log_path)
    write_lines(tap, [line for line in lines if not line.startswith("PINGPONG-AFTER")])
    run.summary(tap, "krwq_ring_test")
    run.tally.check(any(line.startswith("PINGPONG-AFTER ok") for line in lines),
                    "ibv_rc_pingpong in another process after the hostile writer",
                    f"ibv_rc_pingpong after the hostile writer ({log_path})")


def rmmod_check(run):
    run.tally.check("@@part-end rmmod rc=0@@" in run.lines,
                    "rmmod while processes hold krwq0 (idle and under traffic)",
                    f"rmmod with users ({run.log}; {run.console})")


def reload_check(run):
    run.tally.check(run.grep("RELOAD ok"), "krwq.ko unloads and reloads cleanly",
                    f"krwq.ko unload/reload ({run.log})")


def abi_parts(abi):
    """The parts of ABI's half of the user boot:
     - krwq_verbs_test: ibv_post_recv semantics end to end, through
       libibverbs (user/);
     - ABI 2 only, krwq_ring_test: the mapped rings themselves and a
       hostile writer scribbling into them; then another process must
       still be able to use the device (a pingpong);
     - unmodified rdma-core, perftest and UCX clients (clients.sh), with
       rxe0 as the sanity peer with ABI 2;
     - ABI 2 only, last: rmmod while processes hold krwq0 (it leaves
       krwq.ko unloaded, so ABI 1 loads it again, with wire=0);
     - ABI 1 only, last: krwq.ko unloaded, loaded again and unloaded (a
       process still using krwq0 would fail it), with a clean kmemleak
       scan at the end of the boot (the runner scans after every boot)."""
    devs = "krwq0 rxe0" if abi == 2 else "krwq0"
    load = "insmod /krwq/krwq.ko abi=1 wire=0 || exit 1; " if abi == 1 else ""
    parts = [Part(f"verbs-abi{abi}", f"{load}krwq_verbs_test -d krwq0",
                  f"verbs-test-abi{abi}.log", f"krwq_verbs_test, ABI {abi}")]
    if abi == 2:
        parts.append(Part("ring", RING_CMD, "ring-test.log", "krwq_ring_test", summary=False,
                          check=ring_checks))
    parts.append(Part(f"clients-abi{abi}", f"sh /krwq/add/clients.sh {devs}",
                      f"clients-abi{abi}.log", f"clients, ABI {abi}"))
    if abi == 2:
        parts.append(Part("rmmod", RMMOD_CMD, check=rmmod_check))
    else:
        parts.append(Part("reload", RELOAD_CMD, check=reload_check))
    return parts


def group_user(run):
    """User space on krwq0 with each uverbs ABI, in one boot: first ABI 2
    (the mapped rings, and the default), then, krwq.ko loaded again,
    ABI 1 (abi_parts).  krwq.ko is loaded with wire=0 (no device of its
    is on the wire): rxe0 holds RoCEv2's UDP port in the initial
    namespace.  The boot takes about 300 s under TCG; the bound is for a
    busy host."""
    run.boot(Group("user.log", abi_parts(2) + abi_parts(1),
                   "user space on krwq0, ABI 2 and ABI 1", 3600, params=("abi=2", "wire=0"),
                   adds=("scripts/guest/clients.sh",)))


def group_wire(run):
    """The fabric: krwq0 <-> krwq1 by LID, netdev-bound devices by GID,
    the port following its netdev, rdma link add/delete; and the wire:
    RoCEv2 between network namespaces, krwq against rxe and against
    krwq.  One boot, two parts, the wire first: fabric.sh leaves a krwq
    device in the initial namespace, whose UDP port rdma_rxe would then
    not get.  Then Wireshark's view of the wire's capture (wire_decode)."""
    run.boot(Group("fabric.log", [
        Part("wire", "sh /krwq/add/wire.sh faults", "fabric-wire.log",
             "wire (RoCEv2 between namespaces)"),
        Part("fabric", "sh /krwq/add/fabric.sh", "fabric-fabric.log", "fabric"),
    ], "fabric and wire", 1800, params=("num_devices=2",),
        adds=("scripts/guest/fabric.sh", "scripts/guest/wire.sh",
              "krwq_kunit_route.ko:/krwq/krwq_kunit_route.ko",
              "krwq_kunit_rc.ko:/krwq/krwq_kunit_rc.ko"),
        unless_failed=True, then=lambda r: wire_decode(r, os.path.join(OUT, "fabric-wire.log"))))


def group_wire_volume(run):
    """The wire's volume: krwq against rxe and against krwq through every
    transport, perftest test and rdma_cm application wire.sh runs, each
    way, in a boot without kmemleak (docs/testing.md: which boots track
    leaks)."""
    run.boot(Group("wire-volume.log", [
        Part("wire-volume", "sh /krwq/add/wire.sh volume", "wire-volume-tap.log",
             "wire, volume (RoCEv2 between namespaces)"),
    ], "wire, volume", 1800, adds=("scripts/guest/wire.sh",), kmemleak=False,
        unless_failed=True))


def pcap_from(path, pcap, err):
    """The capture a guest script (wire.sh, capture-rxe.sh) printed into
    PATH (gzipped, base64 between @@pcap-begin@@ and @@pcap-end@@)
    written to PCAP; why not to ERR (an open file), and False."""
    lines = [line.replace("\r", "") for line in markers.read_lines(path)]
    encoded = "".join(markers.section(lines, "@@pcap-begin@@", "@@pcap-end@@"))
    try:
        data = gzip.decompress(base64.b64decode(encoded.encode("ascii"), validate=True))
    except (binascii.Error, UnicodeEncodeError, OSError, EOFError, zlib.error) as e:
        err.write(f"the capture: {e}\n")
        return False
    with open(pcap, "wb") as f:
        f.write(data)
    if not encoded:
        err.write("the capture: none\n")
        return False
    return True


def wire_decode(run, path):
    """The wire as a decoder no one here wrote reads it: Wireshark's
    tshark on the capture wire.sh took between krwqw0 and rxe0 (in PATH,
    pcap_from).  Every UDP datagram to port 4791 must decode as
    InfiniBand (a BTH and its opcode's headers); with checksum
    verification on, none may be malformed, every IPv4 header checksum
    must verify, and no expert mark may appear but one.  Both rxe and
    krwq send RoCEv2 with a UDP checksum of 0, since the ICRC covers the
    packet (tshark does not check the ICRC; KUnit's krwq_wire does); over
    IPv6 tshark calls that illegal (RFC 6935 allows it for tunnels), and
    that mark, on IPv6 only, is the one let through."""
    t = run.tally
    pcap = os.path.join(OUT, "wire.pcap")
    err_path = os.path.join(OUT, "wire-tshark.err")
    tshark = ["tshark", "-r", pcap, "-o", "ip.check_checksum:TRUE",
              "-o", "udp.check_checksum:TRUE"]
    failed = False
    with open(err_path, "w") as err:
        if not pcap_from(path, pcap, err):
            t.bad(f"tshark: no capture, or a damaged one, in {path} ({err_path})")
            return

        def count(display_filter):
            """The packets of the capture DISPLAY_FILTER matches; a tshark
            that fails (a filter it rejects) fails the check."""
            nonlocal failed
            got = shell.run(tshark + ["-Y", display_filter], stdout=subprocess.PIPE,
                            stderr=err)
            failed = failed or got.returncode != 0
            return got.stdout.count(b"\n")

        udp = count("udp.dstport == 4791")
        ib = count("udp.dstport == 4791 && infiniband.bth.opcode")
        t.check(not failed and udp >= 300 and ib == udp,
                f"tshark: {udp} RoCEv2 packets between krwqw0 and rxe0, each a BTH it decodes",
                f"tshark: {ib} of {udp} RoCEv2 packets decode as InfiniBand, "
                f"300 or more wanted ({pcap}, {err_path})")
        ip4 = count("ip && udp.dstport == 4791")
        good4 = count('ip.checksum.status == "Good" && udp.dstport == 4791')
        marked = count('_ws.malformed || ip.checksum.status == "Bad" || '
                       'udp.checksum.status == "Bad"')
        zero6 = count('ipv6 && udp.checksum == 0 && udp.checksum.status == "Illegal"')
        expert = shell.run(tshark + ["-q", "-z", "expert"], stdout=subprocess.PIPE,
                           stderr=err, text=True, errors="replace").stdout
        others = sum(1 for line in expert.splitlines()
                     if line.split() and line.split()[0].isdigit()
                     and not re.search(r"UDP +Illegal checksum value \(0\)$", line))
        if count('udp.checksum.status == "Illegal"') != zero6:
            others += 1
    t.check(not failed and ip4 > 0 and good4 == ip4 and marked == 0 and others == 0,
            f"tshark: none malformed, {good4} IPv4 header checksums good, no expert mark but "
            f"IPv6's UDP checksum of 0 ({zero6})",
            f"tshark: {marked} malformed or with a bad checksum, {good4} of {ip4} IPv4 "
            f"checksums good, {others} other expert marks ({pcap}, {err_path})")


# rdma_cm and NVMe over Fabrics over netdev-bound devices, krwq's krwqe0
# and rxe0 as the sanity peer.  nvme-rdma needs fast registration
# (IB_DEVICE_MEM_MGT_EXTENSIONS, else "Memory registrations not
# supported"), nvmet-rdma local_dma_lkey, inline data and, with
# use_srq=1, an SRQ.  Under KASAN krwq moves 64 MiB each time, enough to
# wrap every queue many times over, and rxe, the sanity peer, 16 MiB:
# enough to show the checks pass on the kernel's own driver (under TCG
# and KASAN rxe takes about 25 s a pass for 16 MiB).  The debian stage
# moves 256 MiB through krwq on Debian's kernel.
def group_cm(run):
    """In one boot without kmemleak: nvmeof.sh, the kernel's NVMe host and
    target in loopback; then cm.sh: rping, ucmatose, udaddy,
    rdma_server/client, rstream, perftest -R, IPv6 rping (NVMe-oF first:
    cm.sh leaves its devices behind, nvmeof.sh does not)."""
    run.boot(Group("cm.log", [
        Part("plain", "sh /krwq/add/nvmeof.sh krwq:krwqe0@64 rxe0@16", "nvmeof-plain.log",
             "nvmeof (plain)"),
        Part("cm", "sh /krwq/add/cm.sh krwq:krwqe0 rxe0", "cm-cm.log",
             "cm.sh krwq:krwqe0 rxe0"),
    ], "cm.sh and nvmeof (plain)", 3600, params=("wire=0",),
        adds=("scripts/guest/cm.sh", "scripts/guest/nvmeof.sh"), kmemleak=False))


def group_teardown(run):
    """In one boot with kmemleak, each device deleted under NVMe-oF I/O,
    then removed under rdma_cm traffic: rdma link delete for both, then
    rmmod for krwq (each teardown deletes its netdevs, so the next can
    take the addresses; NVMe-oF's first, since cm.sh --teardown rmmod
    leaves krwq.ko unloaded)."""
    run.boot(Group("teardown.log", [
        Part("teardown", "sh /krwq/add/nvmeof.sh --teardown krwq:krwqe0@64 rxe0@16",
             "nvmeof-teardown.log", "nvmeof (teardown)"),
        Part("link", "sh /krwq/add/cm.sh --teardown link krwq:krwqe0 rxe0",
             "cm-teardown-link.log", "cm.sh --teardown link krwq:krwqe0 rxe0"),
        Part("rmmod", "sh /krwq/add/cm.sh --teardown rmmod krwq:krwqe0",
             "cm-teardown-rmmod.log", "cm.sh --teardown rmmod krwq:krwqe0"),
    ], "the NVMe-oF and rdma_cm teardowns", 3600, params=("wire=0",),
        adds=("scripts/guest/nvmeof.sh", "scripts/guest/cm.sh")))


def group_guard(run):
    """The runner catches a kernel warning and a leak even when the
    command succeeds: krwq_vm_guard.ko (vmhelpers/vm_guard.c), whose init
    warns and leaks 128 bytes, loaded by a command that exits 0;
    kmemleak must see the leak with the runner's helper
    (vmhelpers/vm_kmemleak.c) loaded, as in every boot."""
    t = run.tally
    guard = "krwq_vm_guard.ko"
    out = os.path.join(OUT, "warn-guard.log")
    if not os.path.isfile(guard):
        t.bad(f"warn guard: no {guard} (built with the modules against the test kernel)")
        t.bad(f"leak guard: no {guard}")
        return
    rc = stage.Vm(f"insmod /krwq/add/{guard}", module=False, adds=(guard,), console=run.console,
                  scans="1").run(out, err=subprocess.STDOUT)
    if rc == 0:
        t.bad("warn guard: a WARN_ON in module init went unnoticed")
        t.bad("leak guard: a leak in module init went unnoticed")
        return
    lines = markers.read_lines(out)
    t.check(any(re.search(r"WARNING:.*vm_guard", line) for line in lines),
            "warn guard: WARN_ON(1) in module init fails the VM run",
            f"warn guard: the run failed without reporting the warning ({out})")
    t.check(any("unreferenced object" in line for line in lines)
            and any("krwq leak guard" in line for line in lines),
            "leak guard: kmemleak reports the 128 bytes leaked in module init",
            f"leak guard: the run failed without reporting the leak ({out})")


RUNS = {"kunit": group_kunit, "user": group_user, "wire": group_wire,
        "wire-volume": group_wire_volume, "cm": group_cm, "teardown": group_teardown,
        "guard": group_guard}


def main(groups):
    """scripts/check-vm GROUPS...; prints "PASSED FAILED" last."""
    # Wireshark's decoder, for the capture of the wire boot
    pkgs.need_pkgs(["tshark"])
    os.chdir(ROOT)
    groups = list(groups) or list(GROUPS)
    run = Run(groups)
    os.makedirs(OUT, exist_ok=True)
    os.makedirs(os.path.join("build", "vm"), exist_ok=True)
    # user/'s programs, which the groups' guests run (krwq_verbs_test,
    # krwq_ring_test, cm.sh's cm_delay.so, ...)
    if not stage.build_user():
        run.tally.bad("user/ does not build")
    for g in groups:
        if g not in RUNS:
            run.tally.bad(f"scripts/check-vm: no group {g}")
            continue
        try:
            RUNS[g](run)
        except Exception as e:  # counted; the other groups still run
            run.tally.bad(f"group {g} could not run: {e!r}")
    print(run.tally.line(), flush=True)
    return 0
