# SPDX-License-Identifier: GPL-2.0
"""scripts/check-host's checks: the core on the host, the shared
receive-queue cases under GoogleTest, once built with ASan+UBSan and
once with TSan (kunit/host/host.mk), counted by GoogleTest's own JSON
report."""

import json
import os
import sys

from runner import shell, stage
from runner.shell import ROOT, log

VARIANTS = ("asan", "tsan")


def counts(report):
    """(passed, failed) of GoogleTest's JSON REPORT (a dict): its tests
    less the failed and the disabled ones, and the failed ones.

    >>> counts({"tests": 53, "failures": 0, "disabled": 0}), counts({"tests": 53, "failures": 2})
    ((53, 0), (51, 2))
    """
    return report["tests"] - report["failures"] - report.get("disabled", 0), report["failures"]


def variant(name):
    """build/host-NAME/rq_test run, its story on standard error: (passed,
    failed).  No report, or one that cannot be read, is a run that
    crashed before writing it (a sanitizer's report): one failure; so is
    a failing status with no failed test."""
    path = f"build/host-{name}/results.json"
    stage.remove(path)
    sys.stderr.flush()
    # halt_on_error: TSan's first report ends the run with a failing status
    rc = shell.run([f"build/host-{name}/rq_test", f"--gtest_output=json:{path}"],
                   stdout=sys.stderr, env=dict(os.environ, TSAN_OPTIONS="halt_on_error=1")
                   ).returncode
    try:
        with open(path) as f:
            passed, failed = counts(json.load(f))
    except (OSError, ValueError, KeyError, TypeError):
        passed, failed = 0, 1
    if rc != 0 and failed == 0:
        failed = 1
    return passed, failed


def main(_args):
    """scripts/check-host; prints "PASSED FAILED" last."""
    os.chdir(ROOT)
    sys.stderr.flush()
    if shell.run(["make", "-s"] + [f"build/host-{v}/rq_test" for v in VARIANTS],
                 stdout=sys.stderr).returncode:
        print("0 1", flush=True)
        return 1
    passed = failed = 0
    for v in VARIANTS:
        p, f = variant(v)
        log(f"host {v}: {p} passed, {f} failed")
        passed, failed = passed + p, failed + f
    print(passed, failed, flush=True)
    return 0
