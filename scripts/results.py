#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""results.py - the figures of make check and make bench, from their JSON.

  results.py summary DIR COMMIT   write DIR/summary.json from the files
                                  scripts/check leaves in DIR (tally, dose,
                                  boots.tsv, jobs) and print where the
                                  time went
  results.py table [SUMMARY]      print that table again from a summary.json
  results.py doc OUT              write OUT (docs/results.md) from
                                  build/check/summary.json,
                                  build/check/blktests.md and build/bench.json

summary.json is {"commit", "date", "seconds", "wall", "passed", "failed",
"stages": [{"stage", "passed", "failed", "seconds", "cpu"}], "dose": {NAME: N},
"boots": [{"kernel", "seconds", "status", "cpu", "command"}],
"jobs": [{"job", "cpu"}], "cpu_busy", "cpu_seconds", "failures": [LINE],
"failure_stage", "failure_detail": [LINE]}:
cpu_busy is the share of the machine's CPU time that was busy over the
run (all CPUs, from /proc/stat) and cpu_seconds that busy time; a
stage's or a background job's cpu the CPU seconds it and the processes
it waited for used (null for the stages whose work a job did: fuzz,
dose); a boot's cpu the CPU seconds it used (QEMU's, and
the copy of its console).  failures are the lines of the
failing stages' logs that name a failed check, each after its stage's
name (read_failures); failure_detail the first one's TAP diagnostics,
from the log of failure_stage (first_failure_detail), printed last so
that the tail of a run's output says why it failed.
"""

import datetime
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from runner import dose  # noqa: E402  the dose file's one reader, scripts/runner/dose.py


def read_tally(path):
    """scripts/check's tally: one "STAGE PASSED FAILED SECONDS CPU" line a
    stage; CPU is None where it was not measured."""
    stages = []
    with open(path) as f:
        for line in f:
            # CPU: "-" where not measured (fuzz, dose), none before 2026-12
            name, passed, failed, secs, *cpu = line.split()
            stages.append({"stage": name, "passed": int(passed), "failed": int(failed),
                           "seconds": int(secs),
                           "cpu": int(cpu[0]) if cpu and cpu[0] != "-" else None})
    return stages


def read_jobs(path):
    """scripts/check's background jobs that ended: "JOB CPU" lines."""
    jobs = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                name, cpu = line.split()
                jobs.append({"job": name, "cpu": int(cpu)})
    return jobs


def read_boots(path):
    """scripts/vm's record of each boot: KERNEL, SECONDS, STATUS, CPU,
    COMMAND."""
    boots = []
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                kernel, secs, status, cpu, command = (line.rstrip("\n").split("\t", 4)
                                                      + [""])[:5]
                try:
                    boots.append({"kernel": kernel, "seconds": float(secs),
                                  "status": int(status), "cpu": int(cpu),
                                  "command": command.strip()})
                except ValueError:
                    continue  # a line cut short: the boot's figures are lost, not the run's
    return boots


# A failed check as a stage's log has it: the host's "FAILED" lines
# (runner/stage.py's Tally.bad, after "krwq: " and its part's name), GoogleTest's
# and kunit.py's "[  FAILED  ]" and "[FAILED]" (after kunit.py's time), or
# a guest's TAP or KTAP "not ok", indented or not, that is not a TODO.
FAILURE = re.compile(r"^\s*(?:\[[\d:]+\] )?(?:krwq: (?:[\w-]+: )?)?"
                     r"(FAILED\b.*|\[ *FAILED *\] .*|not ok \d+.*)$")


def capped(lines, limit):
    """LINES, the ones past LIMIT replaced by one line that counts them."""
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


def read_failures(folder, stages, per_stage=10, limit=40):
    """The failed checks that each failing stage's log FOLDER/STAGE.log
    names, each once, at most PER_STAGE a stage and LIMIT in all, as
    "STAGE: LINE"; a failing stage whose log names none, or that has no
    log, gets a line that says so."""
    found = []
    for s in stages:
        if not s["failed"]:
            continue
        path = os.path.join(folder, f"{s['stage']}.log")
        lines = []
        if os.path.exists(path):
            with open(path, errors="replace") as f:
                for line in f:
                    m = FAILURE.match(line.rstrip("\n"))
                    text = m and m[1][:160]
                    if text and "# TODO" not in text and text not in lines:
                        lines.append(text)
        if not lines:
            why = "none named in its log" if os.path.exists(path) else "it has no log of its own"
            lines = [f"{s['failed']} failed, {why}"]
        found += [f"{s['stage']}: {line}" for line in capped(lines, per_stage)]
    return capped(found, limit)


def failure_detail(lines, limit=25):
    """The diagnostics of the first failed check in LINES (a stage's log),
    at most LIMIT, after the check's own line: for a TAP "not ok" the
    comment lines that follow it, but the "# at N s" times; for a
    "[FAILED]" of kunit.py or GoogleTest, or a "FAILED", which come after
    their reasons, the lines since the test or check before, their
    kunit.py times left out.  [] when no check failed.

    >>> failure_detail(["ok 1 - a", "# at 3 s", "not ok 2 - b", "# why",
    ...                 "  # indented", "# at 9 s", "ok 3 - c", "# not b's"])
    ['not ok 2 - b', '# why', '  # indented']
    >>> failure_detail(["[10:00:01] [PASSED] a", "[10:00:02]     # b: EXPECTATION FAILED",
    ...                 "[10:00:02]     Expected 1 == 2", "[10:00:02] [FAILED] b"])
    ['[FAILED] b', '    # b: EXPECTATION FAILED', '    Expected 1 == 2']
    >>> failure_detail(["ok 1 - a"])
    []
    """
    before, out = [], []
    for line in lines:
        line = line.rstrip("\n")
        if out:
            if not line.lstrip().startswith("#"):
                break
            if not re.match(r"^# at \d+ s$", line.strip()):
                out.append(line[:200])
            continue
        m = FAILURE.match(line)
        if not m or "# TODO" in m[1]:
            text = re.sub(r"^\[[\d:]+\] ", "", line)
            if re.match(r"^\s*(=+ )?\[ *(PASSED|FAILED|RUN|OK|SKIPPED) *\]|^krwq: ok: ", text):
                before = []
            elif text.strip():
                before.append(text[:200])
            continue
        out.append(m[1][:160])
        if not m[1].startswith("not ok"):
            return capped(out + before[-(limit - 1):], limit)
    return capped(out, limit)


def first_failure_detail(folder, stages):
    """failure_detail of the first failing stage's log that names a failed
    check, with the stage's name; (None, []) when none does."""
    for s in stages:
        path = os.path.join(folder, f"{s['stage']}.log")
        if s["failed"] and os.path.exists(path):
            with open(path, errors="replace") as f:
                detail = failure_detail(f)
            if detail:
                return s["stage"], detail
    return None, []


def kernel_name(kernel):
    """A short name for a cached kernel's folder, and "kmemleak=off" after
    it for a boot without kmemleak (scripts/vm's "+kmemleak=off")."""
    kernel, off, _ = kernel.partition("+kmemleak=off")
    return f"{folder_name(kernel)}, kmemleak=off" if off else folder_name(kernel)


def folder_name(kernel):
    """kernel_name's short name, without the kmemleak mark."""
    if kernel.startswith("debian-kernel"):
        return "debian"
    for variant in ("default", "kcsan", "gcov", "bench"):
        if f"-{variant}-" in kernel:
            return "test" if variant == "default" else variant
    return kernel


def table(summary):
    """Where the time went: the stages, where their CPU time and the
    background jobs' went, then the boots, longest first."""
    total = summary["seconds"] or 1
    out = [f"make check at {summary['commit']}, {summary['date']}: "
           f"{summary['passed']} passed, {summary['failed']} failed, "
           f"{summary['seconds']} s ({summary['seconds'] / 60:.1f} min)", "",
           *(["Share: of the run's wall time; two stages run side by side, so the",
               "shares add up to more than 100%.", ""]
             if summary.get("wall") else []),
           "| stage | passed | failed | seconds | share | CPU s |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for s in summary["stages"]:
        out.append(f"| {s['stage']} | {s['passed']} | {s['failed']} | {s['seconds']} | "
                   f"{100 * s['seconds'] / total:.0f}% | "
                   f"{'-' if s.get('cpu') is None else s['cpu']} |")
    if summary.get("cpu_busy") is not None:
        out += ["", f"The CPUs were {100 * summary['cpu_busy']:.0f}% busy over the run."]
    if summary.get("cpu_seconds") is not None:
        staged = sum(s.get("cpu") or 0 for s in summary["stages"])
        jobs = summary.get("jobs", [])
        background = sum(j["cpu"] for j in jobs)
        busy = summary["cpu_seconds"]
        # per-process and /proc/stat figures round apart: never below 0
        rest = max(0, busy - staged - background)
        rows = [("the stages", staged),
                *((f"background job {j['job']}", j["cpu"]) for j in jobs),
                ("everything else (the runner, apt-get, processes no stage "
                 "waited for, other processes, steal)", rest),
                ("the machine's busy time", busy)]
        out += ["", "Where the CPU time went (CPU s):", "",
                "| what | CPU s | share |", "| --- | ---: | ---: |",
                *(f"| {what} | {cpu:.0f} | {100 * cpu / (busy or 1):.0f}% |"
                  for what, cpu in rows)]
    boots = sorted(summary["boots"], key=lambda b: -b["seconds"])
    if boots:
        vm = sum(b["seconds"] for b in boots)
        out += ["", f"{len(boots)} VM boots, {vm:.0f} s in all (CPU: the CPU seconds "
                "the boot used, QEMU's and its console's copy):", "",
                "| kernel | seconds | CPU | status | command |",
                "| --- | ---: | ---: | ---: | --- |"]
        for b in boots:
            cmd = b["command"][:48].replace("|", "\\|")
            out.append(f"| {kernel_name(b['kernel'])} | {b['seconds']:.0f} | "
                       f"{b.get('cpu', '?')} | {b['status']} | `{cmd}` |")
    # last, so that the tail of a run's output names what failed
    if summary.get("failures"):
        out += ["", "Failed checks:", *(f"- {line}" for line in summary["failures"])]
    if summary.get("failure_detail"):
        out += ["", f"The first one, as {summary['failure_stage']}.log tells it:",
                *(f"    {line}" for line in summary["failure_detail"])]
    return "\n".join(out)


def bench_table(rows, report):
    """The bench rows, compact: the figure, its peer, the ratio and the goal.
    Values are formatted by bench/report.py's fmt and compare."""
    out = ["| benchmark | krwq | against its peer | goal met |", "| --- | ---: | --- | --- |"]
    for r in rows:
        met = report.met_word(r)
        out.append(f"| {r['name']} | {report.fmt(r['krwq'])} {r['unit'].split(',')[0]} | "
                   f"{report.compare(r)} | {met} |")
    return "\n".join(out)


def summary_cmd(folder, commit, out=sys.stdout, seconds=None, cpu_busy=None,
                cpu_seconds=None):
    """Write FOLDER/summary.json, print the table on OUT, return the summary.
    SECONDS: the run's wall time (stages side by side overlap); without it,
    the stages' seconds added up.  CPU_BUSY and CPU_SECONDS: the busy share
    of the CPUs over the run and that busy time in seconds, if known."""
    stages = read_tally(os.path.join(folder, "tally"))
    try:
        failures = read_failures(folder, stages)
        failure_stage, detail = first_failure_detail(folder, stages)
    except OSError as e:  # a list that cannot be read must not fail the run
        failures = [f"the stages' logs could not be read: {e}"]
        failure_stage, detail = None, []
    summary = {
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": seconds if seconds is not None else sum(s["seconds"] for s in stages),
        "wall": seconds is not None,  # seconds is the run's wall time
        "passed": sum(s["passed"] for s in stages),
        "failed": sum(s["failed"] for s in stages),
        "stages": stages,
        "dose": dose.read(os.path.join(folder, "dose")),
        "boots": read_boots(os.path.join(folder, "boots.tsv")),
        "jobs": read_jobs(os.path.join(folder, "jobs")),
        "cpu_busy": cpu_busy,
        "cpu_seconds": None if cpu_seconds is None else round(cpu_seconds),
        "failures": failures,
        "failure_stage": failure_stage,
        "failure_detail": detail,
    }
    with open(os.path.join(folder, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    print(table(summary), file=out, flush=True)
    return summary


def doc_cmd(out):
    sys.dont_write_bytecode = True  # no __pycache__ in the tree
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import report  # bench/report.py: the bench table's one renderer

    parts = ["# Results", "",
             "Generated by `make results` (`scripts/results.py doc`) from the last",
             "`make check` (`build/check/summary.json`), the last `make",
             "check-blktests` (`build/check/blktests.md`) and the last `make bench`",
             "(`build/bench.json`). How the tests and benchmarks work is in",
             "[testing.md](testing.md) and [benchmarks.md](benchmarks.md); the",
             "figures live here only.", ""]
    check = os.path.join(ROOT, "build/check/summary.json")
    bench = os.path.join(ROOT, "build/bench.json")
    if not os.path.exists(check) and not os.path.exists(bench):
        print("results.py: neither build/check/summary.json nor build/bench.json; "
              "run make check or make bench first", file=sys.stderr)
        return 1
    if os.path.exists(check):
        with open(check) as f:
            summary = json.load(f)
        figures = summary["dose"]  # not dose, the module
        parts += ["## make check", "", table(summary), ""]
        if figures:
            parts += ["Dose of that run: "
                      + "; ".join(f"{k} {v:,}" for k, v in sorted(figures.items())) + ".", ""]
    blktests = os.path.join(ROOT, "build/check/blktests.md")
    if os.path.exists(blktests):
        with open(blktests) as f:
            parts += ["## make check-blktests", "", f.read().rstrip("\n"), ""]
    if os.path.exists(bench):
        with open(bench) as f:
            data = json.load(f)
        rows = data["rows"]
        goals = [r for r in rows if r["met"] is not None]
        met = sum(1 for r in goals if r["met"])
        parts += ["## make bench", "", report.conditions(data["meta"]), "",
                  f"Goals met: {met} of {len(goals)}. The full table, with units, peer values "
                  "and notes, is `build/bench/table.md`.", "", bench_table(rows, report), ""]
    with open(out, "w") as f:
        f.write("\n".join(parts))
    return 0


def main(argv):
    if len(argv) == 4 and argv[1] == "summary":
        summary_cmd(argv[2], argv[3])
        return 0
    if len(argv) in (2, 3) and argv[1] == "table":
        path = argv[2] if len(argv) == 3 else os.path.join(ROOT, "build/check/summary.json")
        with open(path) as f:
            print(table(json.load(f)))
        return 0
    if len(argv) == 3 and argv[1] == "doc":
        return doc_cmd(argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
