# SPDX-License-Identifier: GPL-2.0
"""scripts/check-fuzz's run: the receive-queue core under libFuzzer
against its reference model (kunit/host/rq_fuzz.cpp, ASan and UBSan
on), one process per CPU, each on a scratch corpus of its own and the
seed corpus; their final statistics added up, the executions given to
the dose.  Its environment (FUZZ_RUNS, FUZZ_SECONDS, FUZZ_JOBS,
FUZZ_MERGE) is described in scripts/check-fuzz."""

import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys

from runner import dose, kbuild, pkgs, shell
from runner.shell import ROOT, log, log_lines

SEEDS = "kunit/host/fuzz-corpus"
OUT = "build/fuzz"
FUZZER = f"{OUT}/rq_fuzz"
# a hang is one input that runs 60 s: generous, since a loaded machine
# can stall for seconds an input that takes milliseconds
OPTIONS = ("-print_final_stats=1", "-timeout=60", "-rss_limit_mb=2048", "-max_len=4096",
           f"-artifact_prefix={OUT}/")
# what a failing process says of its failure, to show
FAILURE = re.compile(r"rq_fuzz: divergence|ERROR:|SUMMARY:|runtime error")


def bounds(env, cpus):
    """(executions wanted, seconds, processes) from the environment ENV:
    FUZZ_SECONDS without FUZZ_RUNS fuzzes for that long, without a count;
    else until FUZZ_RUNS (dose.MIN by default) executions, bounded in
    time only by FUZZ_SECONDS; FUZZ_JOBS processes, CPUS by default.

    >>> bounds({}, 2), bounds({"FUZZ_SECONDS": "600"}, 2)
    ((1000000, 0, 2), (0, 600, 2))
    >>> bounds({"FUZZ_RUNS": "20000", "FUZZ_SECONDS": "60", "FUZZ_JOBS": "3"}, 2)
    (20000, 60, 3)
    """
    if env.get("FUZZ_SECONDS") and not env.get("FUZZ_RUNS"):
        want, secs = 0, int(env["FUZZ_SECONDS"])
    else:
        want, secs = int(env.get("FUZZ_RUNS") or dose.MIN), int(env.get("FUZZ_SECONDS") or 0)
    return want, secs, int(env.get("FUZZ_JOBS") or cpus)


def limits(want, secs, jobs):
    """libFuzzer's bounds for each of JOBS processes: SECS seconds, and
    WANT executions shared out (rounded up), where they are not 0.

    >>> limits(1000000, 0, 3), limits(0, 600, 2)
    (['-runs=333334'], ['-max_total_time=600'])
    """
    limit = [f"-max_total_time={secs}"] if secs > 0 else []
    return limit + ([f"-runs={-(-want // jobs)}"] if want > 0 else [])


def count_files(folder):
    """The regular files in FOLDER (not below it)."""
    return sum(1 for e in os.scandir(folder) if e.is_file(follow_symlinks=False))


def stat(logs, name):
    """The final statistic NAME ("stat::NAME: N", -print_final_stats)
    added up over the texts LOGS; None when no process printed it.

    >>> stat(["stat::number_of_executed_units: 10\\n", "stat::number_of_executed_units: 5\\n"],
    ...      "number_of_executed_units"), stat(["x"], "number_of_executed_units")
    (15, None)
    """
    found = [m.group(1) for text in logs
             for m in re.finditer(r"^stat::" + name + r": *(\S*)", text, re.M)]
    if not found:
        return None
    return sum(int(m.group()) if (m := re.match(r"[0-9]+", v)) else 0 for v in found)


def coverage(logs):
    """The most edges a process reported ("cov: N"), or "cov: ?".

    >>> coverage(["#2 INITED cov: 54 ft: 60", "#9 NEW cov: 61 ft: 70"]), coverage([""])
    ('cov: 61', 'cov: ?')
    """
    found = [m.group() for text in logs for m in re.finditer(r"cov: [0-9]*", text)]
    return max(found, key=lambda c: int(c[5:] or 0)) if found else "cov: ?"


def read(path):
    """PATH's text, undecodable bytes replaced; "" when it is missing."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def fuzz(limit, jobs):
    """JOBS libFuzzer processes with LIMIT, each on its scratch corpus
    OUT/corpus-I and the seeds, its output in OUT/fuzz-I.log; whether
    all ended well.  Stopped, each gets a SIGTERM (shell.child)."""
    with contextlib.ExitStack() as stack:
        procs = []
        for i in range(jobs):
            os.makedirs(f"{OUT}/corpus-{i}", exist_ok=True)
            out = stack.enter_context(open(f"{OUT}/fuzz-{i}.log", "wb"))
            procs.append(stack.enter_context(shell.child(
                [FUZZER, *limit, *OPTIONS, f"{OUT}/corpus-{i}", SEEDS],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)))
        return all([p.wait() == 0 for p in procs])


def merge():
    """The scratch corpora's inputs that found new coverage merged into
    the seed corpus (FUZZ_MERGE=1, make fuzz), for committing."""
    before = count_files(SEEDS)
    with open(f"{OUT}/fuzz-0.log", "ab") as f:
        rc = shell.run([FUZZER, "-merge=1", "-max_len=4096", SEEDS,
                        *sorted(glob.glob(f"{OUT}/corpus-*"))],
                       stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
    if rc:
        log(f"fuzz: merging into {SEEDS} failed (see {OUT}/fuzz-0.log)")
    log(f"fuzz: {count_files(SEEDS) - before} new seed inputs in {SEEDS}")


def main(_args):
    """scripts/check-fuzz; prints "1 0" or "0 1" last."""
    pkgs.need_pkgs(["clang", "libclang-rt-14-dev"])
    os.chdir(ROOT)
    try:
        want, secs, jobs = bounds(os.environ, kbuild.jobs())
    except ValueError as e:
        shell.die(f"FUZZ_RUNS, FUZZ_SECONDS and FUZZ_JOBS take a number: {e}")
    sys.stderr.flush()
    if shell.run(["make", "-s", FUZZER], stdout=sys.stderr).returncode:
        print("0 1", flush=True)
        return 1
    # the last run's scratch corpora, logs and reproducers
    for pattern in ("corpus*", "fuzz*.log", "crash-*", "timeout-*", "oom-*", "leak-*"):
        for path in glob.glob(f"{OUT}/{pattern}"):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.remove(path)

    limit = limits(want, secs, jobs)
    log(f"fuzzing the receive-queue core: {jobs} process(es), {' '.join(limit)} "
        f"({count_files(SEEDS)} seed inputs)")
    ok = fuzz(limit, jobs)

    logs = [read(p) for p in sorted(glob.glob(f"{OUT}/fuzz-*.log"))]
    runs = stat(logs, "number_of_executed_units")
    rate = stat(logs, "average_exec_per_sec")
    if not ok or runs is None:
        log_lines([line for text in logs for line in text.splitlines()
                   if FAILURE.search(line)][:5])
        repro = next((p for pattern in ("crash-*", "oom-*", "timeout-*")
                      for p in sorted(glob.glob(f"{OUT}/{pattern}"))), "")
        log(f"fuzz: FAILED after {'?' if runs is None else runs} executions; reproducer: {repro}")
        log(f"fuzz: replay it with {FUZZER} FILE; logs in {OUT}/fuzz-*.log")
        print("0 1", flush=True)
        return 1
    dose.add("fuzz_execs", runs)
    log(f"fuzz: {runs} executions ({'' if rate is None else rate}/s over {jobs} processes), "
        f"{coverage(logs)} edges, no divergence, no sanitizer report")
    if runs < want:
        log(f"fuzz: FAILED: {runs} executions, fewer than the {want} asked for")
        print("0 1", flush=True)
        return 1
    if os.environ.get("FUZZ_MERGE", "0") == "1":
        merge()
    print("1 0", flush=True)
    return 0
