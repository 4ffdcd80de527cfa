# SPDX-License-Identifier: GPL-2.0
"""scripts/check-trace's one boot: krwq's trace events (module/trace.h)
read through tracefs by scripts/guest/trace.sh, its TAP checks counted,
and one check more for a clean VM run."""

import os

from runner import markers, stage
from runner.shell import ROOT

OUT = stage.OUT
CONSOLE = "build/vm/trace-console.log"  # its own, so that it can run beside other boots

# abi=1: every receive is posted through the kernel, so krwq_post_recv
# fires for the user programs too (with ABI 2 they write mapped rings)
BOOT = stage.Vm("sh /krwq/add/trace.sh", 900, params=("abi=1",),
                adds=("scripts/guest/trace.sh",), console=os.path.join(ROOT, CONSOLE))


def main(_args):
    """scripts/check-trace; prints "PASSED FAILED" last."""
    os.chdir(ROOT)
    os.makedirs(OUT, exist_ok=True)
    t = stage.Tally()
    if not stage.build_user():
        print("0 1", flush=True)
        return 1
    out = os.path.join(OUT, "trace-vm.log")
    rc = BOOT.run(out, echo=True)
    got = stage.last_summary(markers.read_lines(out))
    if got:
        t.add(*got[:2])
    else:
        t.bad("trace.sh printed no summary")
    t.check(rc == 0, "the trace VM run is clean",
            f"the trace VM run (status {rc}; {CONSOLE})")
    print(t.line(), flush=True)
    return 0
