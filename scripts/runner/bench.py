# SPDX-License-Identifier: GPL-2.0
"""scripts/bench's parts (`make bench`): the host's Google Benchmark run,
krwq.ko and the bench module built in a copy of the tree for the bench
kernel, the VM boots (guest-bench.sh once per uverbs ABI, abi-bench.sh,
guest-ulp.sh, wire-bench.sh), each one stage.Vm, scripts/check-hosts
--bench for the two machines, and bench/report.py over what they wrote.

Everything goes to build/bench (OUT), the report to build/bench.json,
OUT/table.md and build/bench*.png; the host's load average before and
after each part to OUT/load.tsv.  A benchmark that cannot run ends the
run (status non-zero); a missed goal is the report's to show.
"""

import contextlib
import dataclasses
import glob
import os
import shlex
import shutil
import subprocess
import sys
import time

from runner import kbuild, markers, pkgs, shell, stage
from runner.shell import ROOT, die, log

USAGE = ("usage: scripts/bench [--kernel bench|default] "
         "[--only host|e2e|abi|ulp|wire|hosts]... [--host-only] [--param NAME=VALUE]...")
# the parts, in the order they run, and those that boot the bench kernel
PARTS = ("host", "e2e", "abi", "ulp", "wire", "hosts")
VM_PARTS = ("e2e", "abi", "ulp", "wire")
OUT = "build/bench"  # under ROOT
GUEST = f"{OUT}/guest"  # what the boots get as /krwq/bench
TREE = os.path.join(ROOT, OUT, "tree")  # the copy krwq.ko is built in
# the host part's packages; the VM parts' come on top of the kernel's
# and the VM's
HOST_PKGS = ("g++", "python3", "libbenchmark-dev", "libboost-dev", "gnuplot-nox")
VM_EXTRA_PKGS = ("libibverbs-dev", "linux-perf")
# what goes into the copy: the module's sources and its Kbuild
TREE_FILES = ("Kbuild", "dkms.conf")
TREE_DIRS = ("module", "cxx-core", "kunit", "vmhelpers")
# the user-space programs the boots run beside krwq.ko
FLOORS = ("build/bench/memcpy_bw", "build/bench/floors", "build/bench/udp_floor")
GUEST_SCRIPTS = ("scripts/guest/guest-bench.sh", "scripts/guest/guest-ulp.sh",
                 "scripts/guest/wire-bench.sh")
MODINFO = "/sbin/modinfo"
VM_FAILED = "(build/vm/last-console.log)"  # where a failed boot's story is


class Usage(Exception):
    """A command line scripts/bench does not take; its text is USAGE or
    what an option lacks."""


@dataclasses.dataclass
class Options:
    """scripts/bench's command line: the kernel VARIANT, the module
    PARAMS for every boot, the PARTS asked for (all when none was)."""

    variant: str = "bench"
    params: list = dataclasses.field(default_factory=list)
    parts: list = dataclasses.field(default_factory=list)

    def want(self, part):
        """Whether PART is to run."""
        return part in (self.parts or PARTS)

    def vm(self):
        """Whether a part that boots the bench kernel is to run."""
        return any(self.want(p) for p in VM_PARTS)


def parse(args):
    """The Options of scripts/bench ARGS; Usage when they are not
    scripts/bench's.

    >>> o = parse(["--only", "ulp", "--param", "abi=2", "--host-only"])
    >>> o.variant, o.params, [p for p in PARTS if o.want(p)], o.vm()
    ('bench', ['abi=2'], ['host', 'ulp'], True)
    >>> o = parse([])
    >>> [p for p in PARTS if o.want(p)] == list(PARTS), parse(["--host-only"]).vm()
    (True, False)
    >>> for bad in (["--only", "nope"], ["--kernel"], ["--param"], ["-x"]):
    ...     try:
    ...         parse(bad)
    ...     except Usage as e:
    ...         print("USAGE" if str(e) == USAGE else e)
    USAGE
    --kernel needs a variant
    --param needs NAME=VALUE
    USAGE
    """
    o = Options()
    args = list(args)
    while args:
        a = args.pop(0)
        if a == "--host-only":
            o.parts.append("host")
            continue
        if a not in ("--kernel", "--param", "--only"):
            raise Usage(USAGE)
        value = args.pop(0) if args else None
        if a == "--kernel":
            if value is None:
                raise Usage("--kernel needs a variant")
            o.variant = value
        elif a == "--param":
            if value is None:
                raise Usage("--param needs NAME=VALUE")
            o.params.append(value)
        elif value not in PARTS:
            raise Usage(USAGE)
        else:
            o.parts.append(value)
    return o


def loadavg():
    """The host's load average over the last minute, as /proc/loadavg
    has it."""
    with open("/proc/loadavg") as f:
        return f.read().split(" ")[0]


@contextlib.contextmanager
def measured(label):
    """A part's run: the load average before and after it, as the line
    LABEL<TAB>BEFORE<TAB>AFTER of OUT/load.tsv once it has run (none
    when it ended the run)."""
    before = loadavg()
    yield
    with open(f"{OUT}/load.tsv", "a") as f:
        f.write(f"{label}\t{before}\t{loadavg()}\n")


def commit_id():
    """The commit measured: HEAD's short hash (12 digits), -dirty with
    changes to tracked files; "unknown" outside git."""
    got = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    commit = got.stdout.strip() if got.returncode == 0 else "unknown"
    if subprocess.run(["git", "diff", "--quiet", "HEAD"], stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode:
        commit += "-dirty"
    return commit


def fresh(folder):
    """FOLDER emptied (rm -rf, then mkdir -p)."""
    if os.path.isdir(folder) and not os.path.islink(folder):
        shutil.rmtree(folder)
    elif os.path.lexists(folder):
        os.remove(folder)
    os.makedirs(folder)


def host_part():
    """1. the C++ core under Google Benchmark beside Boost.Lockfree's
    spsc_queue; report.py's options for its JSON."""
    log("host: Google Benchmark, krwq core against spsc_queue")
    shell.must(["make", "-s", "build/host-bench/host_bench"])
    with measured("host part"):
        shell.must(["build/host-bench/host_bench", "--benchmark_min_time=0.3",
              "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true",
              f"--benchmark_out={OUT}/host.json", "--benchmark_out_format=json"],
             stdout=sys.stderr)
    return ["--host", f"{OUT}/host.json"]


def functions(nm_lines, obj):
    """The lines "FUNCTION OBJ" of the functions nm's NM_LINES (nm
    --defined-only of OBJ) say OBJ defines: symbols of type t or T, as
    awk's '$2 ~ /^[tT]$/ { print $3, f }' picks them.

    >>> functions(["0000000000000000 T krwq_post_recv", "0000000000000040 t rq_push",
    ...            "0000000000000000 D krwq_ops", "0000000000000000 r __func__.1",
    ...            "0000000000000080 T"], "module/rq.o")
    ['krwq_post_recv module/rq.o', 'rq_push module/rq.o', ' module/rq.o']
    """
    out = []
    for line in nm_lines:
        fields = line.split()
        if len(fields) > 1 and fields[1] in ("t", "T"):
            out.append(f"{fields[2] if len(fields) > 2 else ''} {obj}")
    return out


def list_functions(tree, path):
    """krwq's functions and the object files of TREE that define them
    (module/*.o, then cxx-core/*.o), one "FUNCTION FILE" a line into
    PATH: bench/report.py splits the ULP profile's krwq samples by them
    (KRWQ_ROLES)."""
    lines = []
    for pattern in ("module/*.o", "cxx-core/*.o"):
        # a pattern that matches nothing goes to nm as it is, which
        # fails: a build that left no objects ends the run
        pattern = os.path.join(tree, pattern)
        for obj in sorted(glob.glob(pattern)) or [pattern]:
            got = shell.run(["nm", "--defined-only", obj], stdout=subprocess.PIPE,
                            text=True, errors="surrogateescape")
            if got.returncode:
                sys.exit(shell.exit_status(got.returncode))
            lines += functions(got.stdout.splitlines(), os.path.relpath(obj, tree))
    markers.write_lines(path, lines)


def has_abi(ko):
    """Whether the module KO has an `abi` parameter (modinfo -F parm)."""
    got = subprocess.run([MODINFO, "-F", "parm", ko], stdout=subprocess.PIPE, text=True,
                         errors="surrogateescape")
    return got.returncode == 0 and any(line.startswith("abi:")
                                       for line in got.stdout.splitlines())


def build(kdir, e2e):
    """krwq.ko for the kernel in KDIR, built in a copy of the module's
    sources (TREE) so that the repository's own krwq.ko (the test
    kernel's) stays; krwq's functions listed; the floors and user/
    built; GUEST filled with what the boots run, with E2E the bench
    module krwq_bench.ko too."""
    os.makedirs(os.path.join(TREE, "scripts"))
    os.makedirs(os.path.join(TREE, "bench"))
    for name in TREE_FILES:
        shutil.copy(name, TREE)
    for name in TREE_DIRS:
        # cp -r: links kept links, modes kept, times not
        shutil.copytree(name, os.path.join(TREE, name), symlinks=True,
                        copy_function=shutil.copy)
    shutil.copy("scripts/check-cxx-object", os.path.join(TREE, "scripts"))
    for name in ("bench/Kbuild", "bench/krwq_bench.c"):
        shutil.copy(name, os.path.join(TREE, "bench"))
    shell.must(["make", "-s", "-C", kdir, f"M={TREE}", "modules"], stdout=sys.stderr)
    list_functions(TREE, f"{OUT}/krwq-functions.txt")
    shell.must(["make", "-s", *FLOORS])
    shell.must(["make", "-s", "user"], stdout=sys.stderr)
    os.makedirs(GUEST)
    for name in (os.path.join(TREE, "krwq.ko"), *FLOORS):
        shutil.copy(name, GUEST)
    if e2e:
        shell.must(["make", "-s", "-C", kdir, f"M={TREE}/bench",
              f"KBUILD_EXTRA_SYMBOLS={TREE}/Module.symvers", "modules"], stdout=sys.stderr)
        shutil.copy(os.path.join(TREE, "bench", "krwq_bench.ko"), GUEST)
    for name in GUEST_SCRIPTS:
        shutil.copy(name, GUEST)


def guest_command(script, *args):
    """The guest's command: sh SCRIPT ARGS..., each quoted as scripts/vm
    quotes the ARGs after its COMMAND.

    >>> guest_command("/krwq/bench/guest-bench.sh", "/krwq/bench", "--kernel", "abi=1")
    'sh /krwq/bench/guest-bench.sh /krwq/bench --kernel abi=1'
    >>> guest_command("/krwq/bench/wire-bench.sh", "/krwq/bench", "x=a b")
    "sh /krwq/bench/wire-bench.sh /krwq/bench 'x=a b'"
    """
    return " ".join(["sh", *map(shlex.quote, (script, *args))])


def bench_vm(kdir, command, timeout, *adds):
    """One boot of the kernel in KDIR running COMMAND for at most TIMEOUT
    seconds, with the files ADDS: no krwq.ko loaded for it (the guest
    scripts load their own), no final kmemleak scans."""
    return stage.Vm(command, timeout, adds=adds, module=False, kernel_dir=kdir, scans="0")


def finished(path):
    """Whether the guest's output PATH has its script's BENCH-DONE line."""
    return any(line.startswith("BENCH-DONE") for line in markers.read_lines(path))


def boot(vm, out, failed, script=None):
    """VM run, its output into OUT; the run ends with FAILED (and where
    the console is) when scripts/vm fails, and when SCRIPT (a guest
    script's name) printed no BENCH-DONE line."""
    if vm.run(out):
        die(f"{failed} {VM_FAILED}")
    if script and not finished(out):
        die(f"{script} did not finish ({out})")


def vm_parts(o):
    """2.-6.: the boots of the bench kernel (the Options O ask for);
    report.py's options for their output."""
    pkgs.need_pkgs(pkgs.KERNEL_BUILD_PKGS + pkgs.VM_PKGS + VM_EXTRA_PKGS)
    kdir = kbuild.test_kernel(o.variant)
    if kdir is None:
        sys.exit(1)  # scripts/test-kernel has said why
    build(kdir, o.want("e2e"))
    abi = has_abi(os.path.join(TREE, "krwq.ko"))
    report = []

    # one boot per uverbs ABI the module offers (abi=1 and abi=2 once it
    # has the parameter); the in-kernel part runs in the first boot only
    runs = ["abi=1", "abi=2"] if abi else [""]
    first = ["--kernel"]
    for run in runs if o.want("e2e") else []:
        tag, also = run or "default", [run] if run else []
        log(f"VM ({o.variant} kernel{', ' + run if run else ''}): rdmavt, krwq0, rxe0")
        out = f"{OUT}/guest-{tag}.log"
        with measured(f"VM boot{f' ({run})' if run else ''}"):
            boot(bench_vm(kdir, guest_command("/krwq/bench/guest-bench.sh", "/krwq/bench",
                                              *first, *o.params, *also),
                          3600, f"{GUEST}:/krwq/bench"),
                 out, "the VM run failed", "guest-bench.sh")
            report += ["--guest", f"{out}{':' + run if run else ''}"]
        first = []

    # ABI 2 against ABI 1 in one boot: ibv_post_recv calls per second
    # (krwq_post_rate, user/post_rate/), ib_send_lat and ib_send_bw;
    # krwq.ko reloaded
    if o.want("abi") and abi:
        log(f"VM ({o.variant} kernel): krwq0 with ABI 2, then ABI 1")
        with measured("VM boot (ABI 2 against ABI 1)"):
            boot(bench_vm(kdir, "sh /krwq/add/abi-bench.sh 3 /krwq/abi/krwq.ko /krwq/add/floors",
                          1800, f"{TREE}/krwq.ko:/krwq/abi/krwq.ko",
                          "scripts/guest/abi-bench.sh", "build/bench/floors"),
                 f"{OUT}/abi.log", "the ABI VM run failed")
            report += ["--abi", f"{OUT}/abi.log"]

    # upper-layer users: NVMe-oF and rping on krwqe0 and rxe0,
    # interrupts-off sections on krwq0
    if o.want("ulp"):
        log(f"VM ({o.variant} kernel): NVMe-oF, rping set-ups, interrupts off")
        with measured("VM boot (ULP, interrupts off)"):
            # perf (linux-perf's, which matches the test kernel's 6.1)
            # samples the CPUs during each fio job
            boot(bench_vm(kdir, guest_command("/krwq/bench/guest-ulp.sh", "/krwq/bench",
                                              *o.params),
                          1800, f"{GUEST}:/krwq/bench", "/usr/bin/perf:/krwq/bench/perf"),
                 f"{OUT}/ulp.log", "the ULP VM run failed", "guest-ulp.sh")
            report += ["--ulp", f"{OUT}/ulp.log",
                       "--krwq-functions", f"{OUT}/krwq-functions.txt"]

    # RoCEv2 between namespaces: krwq and rxe over veths
    if o.want("wire"):
        log(f"VM ({o.variant} kernel): perftest on the wire, krwq and rxe")
        with measured("VM boot (wire)"):
            boot(bench_vm(kdir, guest_command("/krwq/bench/wire-bench.sh", "/krwq/bench",
                                              *o.params),
                          1800, f"{GUEST}:/krwq/bench"),
                 f"{OUT}/wire.log", "the wire VM run failed", "wire-bench.sh")
            report += ["--wire", f"{OUT}/wire.log"]
    return report + ["--variant", o.variant]


def counts_of(line):
    """(passed, failed) of the "PASSED FAILED" LINE, the words before
    its last space and after its first.

    >>> counts_of("149 0"), counts_of("")
    (('149', '0'), ('', ''))
    """
    return line.rsplit(" ", 1)[0], line.split(" ", 1)[-1]


def hosts_part():
    """7. two machines: NVMe-oF between two VMs of Debian's kernel, one
    CPU each, joined as in make check's hosts stage (scripts/check-hosts
    --bench); report.py's options for host B's figures."""
    log("two VMs of Debian's kernel: NVMe-oF over RoCEv2, krwq and rxe")
    a_log, b_log = f"{OUT}/hosts-a.log", f"{OUT}/hosts-b.log"
    with measured("two VMs (hosts)"):
        sys.stdout.flush()
        got = shell.run([os.path.join(ROOT, "scripts", "check-hosts"), "--bench"],
                        stdout=subprocess.PIPE, text=True, errors="surrogateescape")
        if got.returncode:
            sys.exit(shell.exit_status(got.returncode))
        try:
            figures = any(line.startswith("BENCH hosts ") for line in markers.read_lines(b_log))
        except OSError:
            figures = False
        if not figures:
            die(f"no figures from the two VMs ({a_log}, {b_log})")
        lines = got.stdout.splitlines()
        passed, failed = counts_of(lines[-1] if lines else "")
        if failed != "0":
            log(f"the two VMs' checks: {passed} passed, {failed} failed ({b_log})")
    return ["--hosts", b_log]


def main(args):
    """scripts/bench ARGS: the parts asked for, then the report."""
    try:
        o = parse(args)
    except Usage as e:
        die(str(e))
    os.chdir(ROOT)
    pkgs.need_pkgs(HOST_PKGS)
    fresh(OUT)
    # what build/bench.json's meta records: the commit (-dirty with local
    # changes), when, the kernel variant, and the host's load average
    # before and after each part
    commit = commit_id()
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    open(f"{OUT}/load.tsv", "w").close()
    report = []
    if o.want("host"):
        report += host_part()
    if o.vm():
        report += vm_parts(o)
    if o.want("hosts"):
        report += hosts_part()
    shell.must(["python3", "bench/report.py", *report, "--commit", commit, "--date", date,
          "--load", f"{OUT}/load.tsv", "--json", "build/bench.json", "--md", f"{OUT}/table.md",
          "--png", "build/bench.png", "--send-png", "build/bench-send.png",
          "--ulp-png", "build/bench-ulp.png"])
    log(f"wrote build/bench.json, build/bench.png, {OUT}/table.md")
    return 0
