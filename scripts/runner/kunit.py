# SPDX-License-Identifier: GPL-2.0
"""KUnit's results read back from a boot: the KTAP of a suite taken from
a console log (marked by the guest, or as the kernel logged it), parsed
by the kernel's own tools/testing/kunit/kunit.py and counted one per
case; and what krwq_stress moved, for the dose.

check-vm's kunit group, check-race and check-hostile read their suites
here.
"""

import json
import os
import re
import sys

from runner import dose, markers, paths, shell, stage
from runner.shell import log

# The suites of krwq_kunit.ko, which run when it is loaded; a new suite
# of it that is not named here is counted by no stage.
SUITES = ("krwq_rq", "krwq_verbs", "krwq_stress", "krwq_wire", "krwq_uc_wire")

# a kernel log line's timestamp, at its start
STAMP = re.compile(r"\[ *[0-9.]+\] ")
# a krwq_stress round as the kernel logs it
ROUND = re.compile(r"^\[ *[0-9.]*\] *# stress_[a-z_]*: round [0-9]*: [0-9]* WQEs")


def marked(tag, lines):
    """The KTAP that LINES (a boot's output) hold between the lines
    "KTAP-BEGIN TAG" and "KTAP-END TAG": a guest's copy of a suite's
    debugfs results.  As sed's range did: the lines of every such part,
    less the first line and the last of them all (one part's markers);
    a part that never ends runs to the last line.

    >>> marked("s", ["x", "KTAP-BEGIN s", "KTAP version 1", "ok 1 s", "KTAP-END s", "y"])
    ['KTAP version 1', 'ok 1 s']
    >>> marked("s", ["KTAP-BEGIN t", "ok 1 t", "KTAP-END t"])
    []
    """
    begin, end = f"KTAP-BEGIN {tag}", f"KTAP-END {tag}"
    out, on = [], False
    for line in lines:
        if on:
            out.append(line)
            on = line != end
        elif line == begin:
            out.append(line)
            on = True
    return out[1:-1]


def logged(suite, lines):
    """SUITE's KTAP as the kernel logged it when its module loaded (the
    kernel log in the console log LINES, between the dmesg markers),
    made the only suite of a document: its lines from "#
    Subtest: SUITE" to its own "ok N SUITE", timestamps off, that "ok"
    made "ok 1".  KUnit's debugfs results file keeps only the last
    parameter's lines of a parameterised case; the log has them all.

    >>> log = ["[    1.0] x", "[    1.1]     # Subtest: s", "[    1.2]     ok 1 c",
    ...        "not the kernel's", "[    1.3] ok 4 s", "[    1.4] after"]
    >>> logged("s", log)
    ['KTAP version 1', '1..1', '    # Subtest: s', '    ok 1 c', 'ok 1 s']
    """
    subtest = re.compile(r" *# Subtest: " + suite)
    result = re.compile(r" *(not )?ok [0-9]+ " + suite + r"( |$)")
    out, on = [], False
    for line in lines:
        m = STAMP.match(line)
        if not m:
            continue
        line = line[m.end():]
        if subtest.fullmatch(line):
            on = True
            out += ["KTAP version 1", "1..1"]
        if not on:
            continue
        if result.match(line):
            out.append(re.sub(r"ok [0-9]+ ", "ok 1 ", line, count=1))
            break
        out.append(line)
    return out


def dmesg(console):
    """The kernel log the console log at CONSOLE holds (what the guest's
    /init prints between the dmesg markers)."""
    begin, end = markers.DMESG_BEGIN, markers.DMESG_END
    return markers.section(markers.read_lines(console), begin, end)


def kunit_py():
    """The kernel's own KUnit tool, in the source scripts/test-kernel
    unpacks (paths.kernel_src)."""
    return os.path.join(paths.kernel_src(), "tools", "testing", "kunit", "kunit.py")


def status(case):
    """A case's result in kunit.py's JSON.  A parameterised case is a
    group without a status of its own: it failed if a parameter failed,
    was skipped if all were.

    >>> status({"test_cases": [{"status": "PASS"}, {"status": "SKIP"}]})
    'PASS'
    >>> status({"test_cases": [{"status": "SKIP"}]}), status({"test_cases": []})
    ('SKIP', 'FAIL')
    """
    if "status" in case:
        return case["status"]
    kids = [status(c) for c in case.get("test_cases", []) + case.get("sub_groups", [])]
    if not kids or any(k not in ("PASS", "SKIP") for k in kids):
        return "FAIL"
    return "SKIP" if all(k == "SKIP" for k in kids) else "PASS"


def count(root):
    """(passed, failed, skipped) over the cases of kunit.py's JSON ROOT
    (one KTAP document: its suites' cases, a parameterised case once, by
    its own result); a document without a case, or one that is not what
    kunit.py writes, is one failure.

    >>> suite = {"test_cases": [{"status": "PASS"}, {"status": "FAIL"}, {"status": "SKIP"},
    ...                         {"test_cases": [{"status": "PASS"}, {"status": "PASS"}]}]}
    >>> count({"sub_groups": [suite]}), count({"sub_groups": []}), count([])
    ((2, 1, 1), (0, 1, 0), (0, 1, 0))
    """
    try:
        cases = [status(c) for g in root.get("sub_groups", [])
                 for c in g.get("test_cases", []) + g.get("sub_groups", [])]
    except (AttributeError, TypeError):
        return 0, 1, 0
    passed, skipped = cases.count("PASS"), cases.count("SKIP")
    return passed, len(cases) - passed - skipped if cases else 1, skipped


def tally(ktap, json_path):
    """The KTAP document in the file KTAP parsed by the kernel's own
    kunit.py into JSON_PATH (its story on standard error; it fails on a
    failed case, and the count goes on), then counted (count()): returns
    (passed, failed, skipped); a document it could not read is one
    failure.  The paths are made absolute: kunit.py works in the kernel's
    source folder."""
    ktap, json_path = os.path.abspath(ktap), os.path.abspath(json_path)
    stage.remove(json_path)
    sys.stderr.flush()
    shell.run([sys.executable, kunit_py(), "parse", f"--json={json_path}", ktap],
              stdout=sys.stderr)
    try:
        with open(json_path) as f:
            root = json.load(f)
    except (OSError, ValueError):
        return 0, 1, 0
    return count(root)


def marked_tally(tag, path, folder):
    """The KTAP that the file PATH (a boot's output) holds between
    "KTAP-BEGIN TAG" and "KTAP-END TAG" (marked()), kept as
    FOLDER/kunit-TAG.{ktap,json}: (passed, failed, skipped) over its
    cases (tally())."""
    ktap = os.path.join(folder, f"kunit-{tag}.ktap")
    markers.write_lines(ktap, marked(tag, markers.read_lines(path)))
    return tally(ktap, ktap[:-len(".ktap")] + ".json")


def suites(console, folder, where):
    """SUITES in the console log at CONSOLE, each kept as
    FOLDER/kunit-SUITE.{ktap,json} and logged with WHERE (" under
    KCSAN"); returns (passed, failed) over them all (a skipped case is
    neither)."""
    kernel_log = dmesg(console)
    passed = failed = 0
    for s in SUITES:
        ktap = os.path.join(folder, f"kunit-{s}.ktap")
        markers.write_lines(ktap, logged(s, kernel_log))
        p, f, _ = tally(ktap, ktap[:-len(".ktap")] + ".json")
        log(f"KUnit {s}{where}: {p} passed, {f} failed")
        passed, failed = passed + p, failed + f
    return passed, failed


def stress_rounds(lines):
    """The krwq_stress rounds among the kernel log LINES: each round's
    line, less its timestamp and "# ", and the WQEs it moved.

    >>> stress_rounds(["[   9.5]     # stress_qp: round 2: 30000 WQEs in 812 ms", "[ 9.6] ok"])
    [('stress_qp: round 2: 30000 WQEs in 812 ms', 30000)]
    """
    rounds = []
    for line in lines:
        if ROUND.search(line):
            wqes = re.match(r".*: round [0-9]*: ([0-9]*) WQEs", line).group(1)
            rounds.append((re.sub(r"^\[[^]]*\] *# ", "", line, count=1), int(wqes or 0)))
    return rounds


def stress_report(console, name):
    """What each krwq_stress round moved, from the kernel log in the
    console log at CONSOLE, shown (KUnit's results file keeps only a
    parameterised case's last round), and the WQEs added to the dose
    figure NAME; returns them."""
    rounds = stress_rounds(dmesg(console))
    for line, _ in rounds:
        log("  " + line)
    wqes = sum(n for _, n in rounds)
    dose.add(name, wqes)
    return wqes
