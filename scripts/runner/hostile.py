# SPDX-License-Identifier: GPL-2.0
"""scripts/check-hostile's one boot: scripts/guest/hostile.sh's bad
inputs, raw uverbs fuzz, allocation faults and unloads under load,
KUnit's krwq_faults beside them; its TAP counted, its totals given to
the dose."""

import os
import re
import time

from runner import dose, kunit, markers, stage
from runner.shell import ROOT, log

OUT = stage.OUT
CONSOLE = "build/vm/hostile-console.log"  # its own, so that it can run beside other boots
FAULTS = "krwq_kunit_faults.ko"


def boot(fuzz_secs, cycles):
    """The boot: hostile.sh fuzzing for FUZZ_SECS seconds and unloading
    CYCLES times, with KUnit's krwq_faults in the guest."""
    return stage.Vm(f"sh /krwq/add/hostile.sh {fuzz_secs} {cycles}", 1500,
                    adds=("scripts/guest/hostile.sh", f"{FAULTS}:/krwq/{FAULTS}"),
                    console=os.path.join(ROOT, CONSOLE))


def total(lines, head):
    """The number that ends the first of LINES that starts with HEAD
    ("bad inputs:"); 0 when there is none.

    >>> total(["fuzz calls: 12 of 15", "bad inputs: 131", "bad inputs: 2"], "bad inputs:")
    131
    >>> total(["fuzz calls: 12 of x"], "fuzz calls:"), total([], "cycles:")
    (0, 0)
    """
    line = next((line for line in lines if line.startswith(head)), "")
    m = re.search(r"[0-9]+$", line)
    return int(m.group()) if m else 0


def kunit_faults(lines):
    """The faults KUnit's krwq_faults injected: every "faults injected: N"
    in its KTAP LINES, added up.

    >>> kunit_faults(["    # pd: faults injected: 3", "    # cq: faults injected: 4", "ok 1"])
    7
    """
    return sum(int(n) for line in lines for n in re.findall(r"faults injected: ([0-9]+)", line))


def main(args):
    """scripts/check-hostile [FUZZ_SECONDS [CYCLES]]; prints "PASSED
    FAILED" last."""
    # as the shell's ${1:-20} and ${2:-50}: an empty argument is the default
    fuzz_secs, cycles = (list(args[:2]) + ["", ""])[:2]
    fuzz_secs, cycles = fuzz_secs or "20", cycles or "50"
    os.chdir(ROOT)
    os.makedirs(OUT, exist_ok=True)
    t = stage.Tally()
    if not stage.build_user():
        t.bad("user/ does not build")
        print(t.line(), flush=True)
        return 1
    if not (os.path.isfile("krwq.ko") and os.path.isfile(FAULTS)):
        t.bad(f"krwq.ko or {FAULTS} not built")
        print(t.line(), flush=True)
        return 1

    # not hostile.log: scripts/check keeps that for the stage's story
    out = os.path.join(OUT, "hostile-vm.log")
    start = time.monotonic()
    # the guest's lines as they come, less the KTAP it copies out for kunit.py
    rc = boot(fuzz_secs, cycles).run(out, echo=True, hide=("KTAP-BEGIN", "KTAP-END"))
    secs = int(time.monotonic() - start)
    lines = markers.read_lines(out)

    # the guest script's own TAP lines (each program folded into one)
    got = stage.last_summary(lines)
    if got:
        t.add(*got[:2])
    else:
        t.bad(f"hostile.sh: no summary line ({CONSOLE})")

    # KUnit krwq_faults; a skipped case injected no fault: that is a
    # failure here
    p, f, s = kunit.marked_tally("krwq_faults", out, os.path.join(ROOT, OUT))
    t.add(p, f + s)
    log(f"KUnit krwq_faults: {p} passed, {f} failed, {s} skipped")

    if rc != 0 and t.failed == 0:
        t.bad(f"the VM run failed (status {rc}; {CONSOLE})")

    bad_inputs, fuzz_calls = total(lines, "bad inputs:"), total(lines, "fuzz calls:")
    user_faults, done_cycles = total(lines, "faults injected:"), total(lines, "cycles:")
    kernel_faults = kunit_faults(markers.read_lines(os.path.join(OUT, "kunit-krwq_faults.ktap")))
    log(f"hostile: {bad_inputs} bad inputs, {fuzz_calls} fuzz calls in {fuzz_secs} s, "
        f"{user_faults + kernel_faults} allocation faults injected "
        f"({user_faults} through user verbs, {kernel_faults} through kernel verbs), "
        f"{done_cycles} insmod/rmmod cycles; VM {secs} s")
    dose.add("bad_inputs", bad_inputs)
    dose.add("uverbs_calls", fuzz_calls)
    dose.add("faults_injected", user_faults + kernel_faults)
    dose.add("unload_cycles", done_cycles)
    print(t.line(), flush=True)
    return 0
