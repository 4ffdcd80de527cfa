# SPDX-License-Identifier: GPL-2.0
"""scripts/coverage (`make coverage`): line and branch coverage of the
core on the host (clang's source-based coverage, turned into an lcov
tracefile by llvm-cov) and of krwq.ko under make check's VM stages on
the gcov test kernel (lcov over each boot's .gcda files, added up).

Each report is read back from its lcov tracefile into summary.txt
(lcov's own table), summary.md (lines and branches per file, Markdown)
and unreached.txt (the lines no test ran, the branches never taken),
and drawn by genhtml into html/.  The stages' own pass/fail counts are
logged, not judged: make check does that.
"""

import glob
import locale
import os
import re
import shutil
import subprocess
import sys

from runner import kbuild, markers, paths, pkgs, shell, stage
from runner.shell import ROOT, die, log

OUT = os.path.join(ROOT, "build", "coverage")
STAGES = ("vm", "hostile", "trace")
LCOV = ("lcov", "--quiet", "--rc", "lcov_branch_coverage=1")
USAGE = "usage: scripts/coverage [host | module [STAGE]... | report]"
HOST_PKGS = ("clang", "llvm", "libclang-rt-14-dev", "libgtest-dev", "lcov")
HOST_TITLE = "krwq core on the host (GoogleTest, fuzz corpus replay)"
# the lines of lcov --summary that summary.txt keeps
TOTALS = re.compile(r" +(lines|functions|branches)")
# GoogleTest's line on what ran
GTEST_RAN = re.compile(r"[0-9]+ tests? from [0-9]+ test suites? ran")


# --- the core on the host: GoogleTest and the fuzz corpus replayed

def host():
    """build/coverage/host: the core under GoogleTest and under the seed
    corpus replayed through the libFuzzer target, both built by clang
    with source-based coverage (build/host-cov, kunit/host/host.mk)."""
    folder = os.path.join(OUT, "host")
    profiles = os.path.join(folder, "profiles")
    pkgs.need_pkgs(HOST_PKGS)
    shell.must(["make", "-s", "build/host-cov/rq_test", "build/host-cov/rq_fuzz"])
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(profiles)
    gtest_log = os.path.join(folder, "gtest.log")
    if not shell.logged(["build/host-cov/rq_test"], gtest_log,
                  LLVM_PROFILE_FILE=os.path.join(profiles, "gtest-%p.profraw")):
        log(f"host GoogleTest failed (see {gtest_log}); counting what ran")
    corpus = collated(files_under("kunit/host/fuzz-corpus"))
    fuzz_log = os.path.join(folder, "fuzz.log")
    if not shell.logged(["build/host-cov/rq_fuzz", *corpus], fuzz_log,
                  LLVM_PROFILE_FILE=os.path.join(profiles, "fuzz-%p.profraw")):
        log(f"the corpus replay failed (see {fuzz_log}); counting what ran")
    ran = "\n".join(GTEST_RAN.findall("\n".join(markers.read_lines(gtest_log))))
    log(f"host: GoogleTest: {ran or 'nothing ran'}; {len(corpus)} corpus inputs replayed")
    profdata = os.path.join(folder, "host.profdata")
    # a pattern that matches nothing stays itself, as in the shell
    raws = os.path.join(profiles, "*.profraw")
    shell.must(["llvm-profdata", "merge", "-o", profdata,
          *(collated(glob.glob(glob.escape(profiles) + "/*.profraw")) or [raws])])
    all_info = os.path.join(folder, "all.info")
    with open(all_info, "wb") as f:
        shell.must(["llvm-cov", "export", "-format=lcov", "-instr-profile", profdata,
              "build/host-cov/rq_test", "-object", "build/host-cov/rq_fuzz"], stdout=f)
    info = os.path.join(folder, "host.info")
    shell.must([*LCOV, "--extract", all_info, f"{ROOT}/cxx-core/*", "-o", info])
    report(info, folder, HOST_TITLE)


# --- krwq.ko in the VM

def module(stages):
    """build/coverage/module: krwq.ko built with KRWQ_GCOV=1 from a copy
    of the tree against the gcov test kernel, the VM stages STAGES (all
    by default) run from that copy, each boot's gcov counts brought out
    into module/gcda, then module_report()."""
    folder = os.path.join(OUT, "module")
    src = os.path.join(folder, "src")
    stages = stages or list(STAGES)
    for s in stages:
        if s not in STAGES:
            die(f"no stage {s} (one of: {' '.join(STAGES)})")
    pkgs.need_pkgs(pkgs.KERNEL_BUILD_PKGS + pkgs.VM_PKGS + ("lcov",))
    kdir = kbuild.test_kernel("gcov")
    if kdir is None:
        sys.exit(1)  # scripts/test-kernel said why
    try:
        gcov = "CONFIG_GCOV_KERNEL=y" in markers.read_lines(os.path.join(kdir, ".config"))
    except OSError:
        gcov = False
    if not gcov:
        die(f"{kdir} has no CONFIG_GCOV_KERNEL")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "gcda"))
    module_build(src, kdir)
    for s in stages:
        log(f"coverage: stage {s} on the gcov kernel")
        stage_log = os.path.join(folder, f"stage-{s}.log")
        counts = run_stage(s, src, kdir, stage_log)
        log(f"coverage: stage {s}: {counts or 'no'} passed/failed counts ({stage_log})")
    module_report()


def module_build(src, kdir):
    """krwq's modules built with KRWQ_GCOV=1 in a fresh copy of the tree
    at SRC against the kernel tree KDIR; the run ends when they do not
    build, or built no .gcno."""
    if not paths.copy_tree(src):
        sys.exit(1)  # copy_tree named what it could not copy
    build_log = os.path.join(OUT, "module", "build.log")
    if not shell.logged(["make", "-C", kdir, f"M={src}", "KRWQ_GCOV=1", "modules"], build_log):
        stage.show_file(build_log, last=20)
        die(f"the gcov build failed ({build_log})")
    if not any(n.endswith(".gcno") for _, dirs, names in os.walk(os.path.join(src, "module"))
               for n in dirs + names):
        die("the build made no .gcno: is GCOV_PROFILE in Kbuild?")


def run_stage(name, src, kdir, stage_log):
    """scripts/check-NAME run in the copy SRC on the gcov kernel KDIR, its
    boots' gcov counts into module/gcda (KRWQ_VM_GCOV), its standard
    error in STAGE_LOG; the last line of its standard output ("PASSED
    FAILED"), "" when it printed none."""
    env = dict(os.environ, KRWQ_KERNEL_DIR=kdir,
               KRWQ_VM_GCOV=os.path.join(OUT, "module", "gcda"))
    with open(stage_log, "wb") as err:
        try:
            got = shell.run([f"scripts/check-{name}"], cwd=src, env=env,
                            stdout=subprocess.PIPE, stderr=err)
        except OSError as e:
            err.write(f"scripts/check-{name}: {e.strerror}\n".encode())
            return ""
    lines = split_lines(got.stdout.decode("utf-8", "surrogateescape"))
    return lines[-1] if lines else ""


def module_report():
    """module/module.info: a tracefile of every instrumented line at 0
    (the files no boot reached count too) added to those of the boots in
    module/gcda, kept to module/ and cxx-core/; then its report()."""
    folder = os.path.join(OUT, "module")
    src = os.path.join(folder, "src")
    if not os.path.isdir(src):
        die(f"no gcov build in {src}: run scripts/coverage module first")
    lcov_log = os.path.join(folder, "lcov.log")
    base = os.path.join(folder, "base.info")
    with open(lcov_log, "wb") as err:
        shell.must([*LCOV, "--capture", "--initial", "--directory", src, "--base-directory", src,
              "-o", base], stderr=err)
    infos = ["-a", base]
    n = 0
    for b in collated(glob.glob(glob.escape(folder) + "/gcda/boot.*")):
        if not os.path.isdir(b + src):
            continue
        # the guest's .gcda beside the build's .gcno, where gcov looks
        for gcda in named_under(b + src, ".gcda"):
            try:
                shutil.copy(gcda[len(b):].removesuffix(".gcda") + ".gcno",
                            gcda.removesuffix(".gcda") + ".gcno")
            except OSError as e:
                die(f"cp: {e}")
        with open(lcov_log, "ab") as err:
            shell.must([*LCOV, "--capture", "--directory", b + src, "--base-directory", src,
                  "-o", b + ".info"], stderr=err)
        infos += ["-a", b + ".info"]
        n += 1
    if n == 0:
        die(f"no boot brought gcov counts out ({folder}/gcda is empty)")
    all_info = os.path.join(folder, "all.info")
    shell.must([*LCOV, *infos, "-o", all_info])
    info = os.path.join(folder, "module.info")
    shell.must([*LCOV, "--extract", all_info, f"{src}/module/*", f"{src}/cxx-core/*", "-o", info])
    report(info, folder, f"krwq.ko in the test VM (gcov, {n} boot(s))")


# --- a report from a tracefile

def report(info, folder, title):
    """FOLDER's summary.txt (TITLE, lcov's totals and per-file list),
    unreached.txt, summary.md and html/ from the tracefile INFO; the
    summary shown on standard error too."""
    summary_txt = os.path.join(folder, "summary.txt")
    with open(summary_txt, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(title + "\n")
        got = shell.run(["lcov", "--rc", "lcov_branch_coverage=1", "--summary", info],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        totals = [line for line in split_lines(got.stdout.decode("utf-8", "surrogateescape"))
                  if TOTALS.match(line)]
        f.writelines(line + "\n" for line in totals)
        if not totals:
            sys.exit(1)
        if got.returncode:
            sys.exit(shell.exit_status(got.returncode))
        got = shell.run(["lcov", "--rc", "lcov_branch_coverage=1", "--list", info],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        listed = (shorten(line) for line in
                  split_lines(got.stdout.decode("utf-8", "surrogateescape")))
        f.writelines(line + "\n" for line in listed if line != "[]")
        if got.returncode:
            sys.exit(shell.exit_status(got.returncode))
    tracefile = markers.read_lines(info)
    unreached_txt = os.path.join(folder, "unreached.txt")
    markers.write_lines(unreached_txt,
                        [shorten(line) for line in unreached(tracefile, source_lines)])
    markers.write_lines(os.path.join(folder, "summary.md"),
                        [shorten(line) for line in table(tracefile)])
    html = os.path.join(folder, "html")
    shutil.rmtree(html, ignore_errors=True)
    try:
        drawn = shell.run(["genhtml", "--quiet", "--branch-coverage", "--title", title,
                           "-o", html, info], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        drawn = False
    if not drawn:
        log(f"genhtml failed (no HTML in {folder})")
    shell.log_lines(markers.read_lines(summary_txt))
    log(f"coverage: {summary_txt}, unreached lines in {unreached_txt}, {html}/index.html")


def unreached(tracefile, read_source):
    """unreached.txt's lines for the lines TRACEFILE of an lcov tracefile:
    "FILE:LINE: SOURCE" for every line with a count of 0, in the
    tracefile's order, then "FILE:LINE: N branch(es) never taken" for
    every line with a branch never taken ("-" or 0), by file name and line.
    READ_SOURCE(FILE) gives FILE's lines ([] when it cannot).

    >>> info = ["SF:a.c", "DA:1,3", "DA:2,0", "BRDA:10,0,0,-", "BRDA:10,0,1,0",
    ...         "BRDA:9,0,0,1", "BRDA:9,0,1,0", "DA:7,0", "end_of_record"]
    >>> got = unreached(info, lambda f: ["int a;", "  b();"])
    >>> got[:2]
    ['a.c:2:   b();', 'a.c:7: ']
    >>> got[2:]
    ['a.c:9: 1 branch(es) never taken', 'a.c:10: 2 branch(es) never taken']
    """
    out, branches = [], {}
    sf, src = "", []
    for line in tracefile:
        if line.startswith("SF:"):
            sf = line[3:]
            src = read_source(sf)
        elif line.startswith("DA:"):
            a = line[3:].split(",")
            if count(a[1] if len(a) > 1 else None) == 0:
                n = count(a[0])
                out.append(f"{sf}:{n}: {src[n - 1] if 0 < n <= len(src) else ''}")
        elif line.startswith("BRDA:"):
            a = line[5:].split(",")
            taken = a[3] if len(a) > 3 else None
            if count(taken) == 0:
                key = f"{sf}:{a[0]}"
                branches[key] = branches.get(key, 0) + 1
    never = [f"{k}: {n} branch(es) never taken" for k, n in branches.items()]
    return out + sorted(never, key=natural)


def table(tracefile):
    """summary.md's lines for the lines TRACEFILE of an lcov tracefile: a
    Markdown table of the lines and the branches hit of every file (its
    rows in sort(1)'s order), then their totals; "-" where a file has
    none.

    >>> for line in table(["SF:b.c", "LF:3", "LH:1", "end_of_record",
    ...                    "SF:a.c", "LF:8", "LH:8", "BRF:4", "BRH:3", "end_of_record"]):
    ...     print(line)
    | file | lines | branches |
    | --- | --- | --- |
    | `a.c` | 100.0% (8 of 8) | 75.0% (3 of 4) |
    | `b.c` | 33.3% (1 of 3) | - |
    | all | 81.8% (9 of 11) | 75.0% (3 of 4) |
    """
    files, got = [], {}
    totals = {"LF": 0, "LH": 0, "BRF": 0, "BRH": 0}
    sf = ""
    for line in tracefile:
        key, _, value = line.partition(":")
        if key == "SF":
            sf = value
            files.append(sf)
        elif key in totals:
            got[sf, key] = value
            totals[key] += count(value)
    rows = [f"| `{f}` | {pct(got.get((f, 'LH')), got.get((f, 'LF')))} | "
            f"{pct(got.get((f, 'BRH')), got.get((f, 'BRF')))} |" for f in files]
    total = f"| all | {pct(totals['LH'], totals['LF'])} | {pct(totals['BRH'], totals['BRF'])} |"
    return ["| file | lines | branches |", "| --- | --- | --- |"] + collated(rows) + [total]


def pct(hit, found):
    """"P% (HIT of FOUND)", P with one decimal; "-" when FOUND is 0 or
    None (none found, or no such line in the tracefile).  HIT and FOUND
    are numbers, or the tracefile's strings (None: 0).

    >>> pct(1, 3), pct("2", "3"), pct(None, "4"), pct(0, 0), pct(1, None)
    ('33.3% (1 of 3)', '66.7% (2 of 3)', '0.0% (0 of 4)', '-', '-')
    """
    hit, found = count(hit), count(found)
    if not found:
        return "-"
    return f"{100 * hit / found:.1f}% ({int(hit)} of {int(found)})"


def count(field):
    """An lcov tracefile's count FIELD as a number: 0 for "-" (a branch
    never reached), for anything not a count and for none (None).

    >>> count("12"), count("0"), count("-"), count(None), count(3)
    (12, 0, 0, 0, 3)
    """
    if isinstance(field, int):
        return field
    return int(field) if field and field.isdigit() else 0


def natural(line):
    """A sort key that orders LINE's runs of digits by their value: file
    names, then line numbers (sort -V's order for these lines).

    >>> sorted(["f.c:10: 1", "f_b.c:1: 1", "f.c:9: 1", "F.c:2: 1"], key=natural)
    ['F.c:2: 1', 'f.c:9: 1', 'f.c:10: 1', 'f_b.c:1: 1']
    """
    return [int(p) if i % 2 else p for i, p in enumerate(re.split(r"([0-9]+)", line))]


def shorten(line, root=ROOT):
    """LINE less the first ROOT/build/coverage/module/src/, then the first
    ROOT/ (the copy's and the tree's paths made relative, once a line).

    >>> shorten("/r/build/coverage/module/src/module/rq.c:3: /r/x", "/r")
    'module/rq.c:3: x'
    >>> shorten("/r/cxx-core/rq.cpp:3: /r/x", "/r")
    'cxx-core/rq.cpp:3: /r/x'
    >>> shorten("[/r/cxx-core/]", "/r"), shorten("[/r/]", "/r")
    ('[cxx-core/]', '[]')
    """
    line = line.replace(f"{root}/build/coverage/module/src/", "", 1)
    return line.replace(f"{root}/", "", 1)


# --- the helpers

def collated(names):
    """NAMES sorted as sort(1) and the shell's globs sort them, by the
    locale's collation (main() takes LC_COLLATE from the environment;
    else bytes' order, which is C.UTF-8's)."""
    return sorted(names, key=locale.strxfrm)


def split_lines(text):
    """TEXT's lines, split at newlines only (markers.read_lines' way).

    >>> split_lines("a\\n\\nb\\n"), split_lines("a"), split_lines("")
    (['a', '', 'b'], ['a'], [])
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def source_lines(path):
    """The lines of the source file PATH; []
    when it cannot be read."""
    try:
        return markers.read_lines(path)
    except (OSError, ValueError):
        return []


def files_under(folder):
    """The plain files under FOLDER, at any depth (find -type f)."""
    return [os.path.join(top, n) for top, _, names in os.walk(folder) for n in names
            if os.path.isfile(os.path.join(top, n))
            and not os.path.islink(os.path.join(top, n))]


def named_under(folder, suffix):
    """What under FOLDER has a name ending with SUFFIX (find -name)."""
    return [os.path.join(top, n) for top, dirs, names in os.walk(folder)
            for n in dirs + names if n.endswith(suffix)]


def main(args):
    """scripts/coverage [host | module [STAGE]... | report]."""
    os.chdir(ROOT)
    try:
        # sort(1)'s order and the shell's globs' (collated())
        locale.setlocale(locale.LC_COLLATE, "")
    except locale.Error:
        pass
    what = args[0] if args and args[0] else "all"
    if what == "all":
        if len(args) > 1:
            die(f"usage: see the head of {sys.argv[0]}")
        host()
        module([])
    elif what == "host":
        host()
    elif what == "module":
        module(args[1:])
    elif what == "report":
        module_report()
    else:
        die(USAGE)
    return 0
