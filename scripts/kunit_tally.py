#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""kunit_tally.py JSON - the cases of one KTAP document, as the kernel's
own `kunit.py parse --json` wrote them to JSON: prints "PASSED FAILED
SKIPPED" over the suite's cases.  A parameterised case counts once, by
its own result.  A document without a case, or one that cannot be read,
is one failure."""

import json
import sys


def status(case):
    """A case's result.  A parameterised case is a group without a status
    of its own: it failed if a parameter failed, was skipped if all were."""
    if "status" in case:
        return case["status"]
    kids = [status(c) for c in case.get("test_cases", []) + case.get("sub_groups", [])]
    if not kids or any(k not in ("PASS", "SKIP") for k in kids):
        return "FAIL"
    return "SKIP" if all(k == "SKIP" for k in kids) else "PASS"


def main(path):
    try:
        with open(path) as f:
            root = json.load(f)
        assert isinstance(root, dict)
    except Exception:
        print(0, 1, 0)
        return 0
    cases = [status(c) for g in root.get("sub_groups", [])
             for c in g.get("test_cases", []) + g.get("sub_groups", [])]
    passed = cases.count("PASS")
    skipped = cases.count("SKIP")
    failed = len(cases) - passed - skipped
    print(passed, failed if cases else 1, skipped)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
