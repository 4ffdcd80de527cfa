# SPDX-License-Identifier: GPL-2.0
"""scripts/wire-vectors: kunit/wire_vectors.h, the ICRC vectors of
KUnit's krwq_wire, made again from what rdma_rxe sends.

One boot of the test VM without krwq.ko runs scripts/guest/capture-rxe.sh,
where rdma_rxe sends RoCEv2 packets to a namespace in which nobody
answers and tcpdump captures them; the capture comes out over the
console (gzipped, base64 between @@pcap-begin@@ and @@pcap-end@@, as
wire.sh's does), and scripts/pcap2vectors.py makes the header of it.
"""

import os
import sys

from runner import shell, stage
from runner.shell import ROOT, log
from runner.vmstages import pcap_from

OUT = "build/wire"  # under ROOT
HEADER = "kunit/wire_vectors.h"


def main(args):
    """scripts/wire-vectors; returns the exit status."""
    if args:
        shell.die("usage: scripts/wire-vectors")
    os.chdir(ROOT)
    os.makedirs(OUT, exist_ok=True)
    capture_log = f"{OUT}/capture.log"
    rc = stage.Vm("sh /krwq/add/capture-rxe.sh", timeout=300, module=False,
                  adds=("scripts/guest/capture-rxe.sh",)).run(capture_log)
    if rc:
        shell.die(f"the capture's boot failed (status {rc}; {capture_log})")
    pcap = f"{OUT}/rxe.pcap"
    if not pcap_from(capture_log, pcap, sys.stderr):
        shell.die(f"no capture in {capture_log}")
    with open(f"{HEADER}.tmp", "wb") as f:
        made = shell.run(["scripts/pcap2vectors.py", pcap], stdout=f).returncode == 0
    if not made:
        stage.remove(f"{HEADER}.tmp")
        shell.die(f"scripts/pcap2vectors.py {pcap} failed")
    os.replace(f"{HEADER}.tmp", HEADER)
    with open(HEADER, encoding="utf-8") as f:
        count = sum(line.startswith('\t{ "') for line in f)
    log(f"{HEADER}: {count} packets")
    return 0
