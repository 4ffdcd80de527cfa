# SPDX-License-Identifier: GPL-2.0
"""scripts/lint's checks (`make lint`): what a kernel reviewer runs
first, and the C++ core's own linters; one count per file and tool.
scripts/lint's help lists them.  Each tool's output goes to
build/lint/TOOL.log, and what fails a check to standard error too.
"""

import glob
import os
import re
import shutil
import subprocess

from runner import kbuild, paths, pkgs, shell
from runner.shell import ROOT
from runner.stage import Tally

OUT = "build/lint"  # under ROOT

# The kernel C: every C file of the module, its KUnit suites and VM
# helpers, the host shim, and the seam header (C for the kernel, C++ for
# the core).
C_FILES = ("module/*.[ch]", "kunit/*.[ch]", "kunit/verbs/*.[ch]", "hostshim/*.c",
           "vmhelpers/*.c", "cxx-core/krwq_core.h")
SEAM_HEADER = "cxx-core/krwq_core.h"
# the C++ that clang-format reads (the seam header is C's style)
CXX_FORMAT = ("cxx-core/*.h", "cxx-core/*.cpp", "kunit/host/*.cpp")
CXX_UNITS = ("cxx-core/*.cpp",)
# the objects whose global functions must have kernel-doc
OBJECTS = ("module/*.o", "kunit/*.o", "kunit/verbs/*.o", "vmhelpers/*.o", "cxx-core/*.o")
# module/layout.o only computes the layout header's offsets
NOT_DOCUMENTED_OBJECTS = ("module/layout.o",)
# Generated symbols: the C++ core's own (mangled) functions, which are
# not the seam, the tracepoint machinery's, and module_init's aliases.
GENERATED = re.compile(r"_Z|__traceiter_|__SCT__|(init_module|cleanup_module)$")

# checkpatch --strict's findings ignored, per file:
#  module/seam.c EXPORT_SYMBOL: the exported functions are defined in
#    C++ (cxx-core/seam.cpp), which sees no kernel header and so cannot
#    hold the export; the exports stand together in seam.c instead.
#  module/trace.h OPEN_ENDED_LINE, PARENTHESIS_ALIGNMENT: TRACE_EVENT()'s
#    layout (TP_STRUCT__entry( opening a block, TP_* one tab in), which
#    every trace header in the kernel uses.
#  cxx-core/krwq_core.h BIT_MACRO: the header is also compiled as
#    freestanding C++ that sees no kernel header, so it has no BIT().
CHECKPATCH_IGNORES = {
    "module/seam.c": "EXPORT_SYMBOL",
    "module/trace.h": "OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT",
    "cxx-core/krwq_core.h": "BIT_MACRO",
}
# --strict: the checks the networking and staging maintainers require
# are cheap to satisfy here and catch real style drift
CHECKPATCH = ("--no-tree", "--strict", "--terse", "--show-types", "-q")

# the first line of a shell or a Python program
SH_SHEBANG = re.compile(rb"#! *(/usr)?/bin/(env +)?(ba)?sh( |$)")
PY_SHEBANG = re.compile(rb"#! *(/usr)?/bin/(env +)?python3( |$)")
DOCTEST = re.compile(r"^ *>>> ", re.MULTILINE)


def files(patterns):
    """The files PATTERNS name, pattern by pattern, each sorted."""
    return [f for p in patterns for f in sorted(glob.glob(p))]


def programs(names, suffix, shebang):
    """Of NAMES, those ending with SUFFIX or whose first line is SHEBANG."""
    def first_line(name):
        with open(name, "rb") as f:
            return f.readline().rstrip(b"\n")
    return [n for n in names if n.endswith(suffix) or shebang.match(first_line(n))]


class Lint:
    """One run: its tally and the logs in build/lint."""

    def __init__(self):
        self.tally = Tally()

    @staticmethod
    def tool(argv, log_name, env=None):
        """ARGV with its output added to build/lint/LOG_NAME; whether it
        succeeded."""
        with open(os.path.join(OUT, log_name), "ab") as out:
            try:
                return shell.run(argv, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=env).returncode == 0
            except OSError as e:  # the tool is missing: its check fails, the rest run
                out.write(f"{argv[0]}: {e}\n".encode())
                return False

    @staticmethod
    def lines(log_name):
        """The lines of build/lint/LOG_NAME."""
        with open(os.path.join(OUT, log_name), encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()

    def checkpatch(self, ksrc, c_files):
        """checkpatch.pl --strict on every C file: one run for the files
        with nothing ignored and one for each other (perl's start-up is
        most of its time); a file passes when no finding names it."""
        t = self.tally
        script = os.path.join(ksrc, "scripts", "checkpatch.pl")
        plain = [f for f in c_files if f not in CHECKPATCH_IGNORES]
        self.tool([script, *CHECKPATCH, "-f", *plain], "checkpatch.log")
        for f in c_files:
            if f in CHECKPATCH_IGNORES:
                self.tool([script, *CHECKPATCH, "--ignore", CHECKPATCH_IGNORES[f], "-f", f],
                          "checkpatch.log")
        log = self.lines("checkpatch.log")
        for f in c_files:
            finding = re.compile(re.escape(f) + r":[0-9]+: (ERROR|WARNING|CHECK):")
            found = [line for line in log if finding.match(line)]
            shell.log_lines(found)
            t.check(not found, f"checkpatch --strict {f}",
                    f"checkpatch --strict {f} (build/lint/checkpatch.log)")
        if not any(line.startswith("total: ") for line in log):
            t.bad("checkpatch did not run (build/lint/checkpatch.log)")

    def sparse(self, kdir):
        """sparse on every C file of the modules: C=2 checks each one
        whether or not it is rebuilt."""
        built = self.tool(["make", "-C", kdir, f"M={ROOT}", "C=2", "CHECK=sparse", "modules"],
                          "sparse.log")
        checked = sum(line.startswith("  CHECK") for line in self.lines("sparse.log"))
        self.tally.check(built and kbuild.warning_free(os.path.join(OUT, "sparse.log"),
                                                       ignore_case=False),
                         f"sparse (make C=2): {checked} files clean",
                         "sparse (make C=2; build/lint/sparse.log)")

    def kernel_doc(self, ksrc, c_files):
        """kernel-doc -none -v on the C files, and every function the
        objects export to other objects (nm: T) documented.  The C++
        objects' extern "C" functions are documented in the seam header;
        their mangled ones are the core's own, not the seam."""
        t = self.tally
        self.tool([os.path.join(ksrc, "scripts", "kernel-doc"), "-none", "-v", *c_files],
                  "kernel-doc.log")
        log = self.lines("kernel-doc.log")
        said = [line for line in log if ": info: Scanning doc for " not in line]
        shell.log_lines(said)
        t.check(not said, f"kernel-doc -none -v: {len(log)} comments, no warnings",
                "kernel-doc -none -v (build/lint/kernel-doc.log)")
        scanned = re.compile(r".*: info: Scanning doc for [a-z]* *([A-Za-z0-9_]*)")
        documented = {m.group(1) for line in log if (m := scanned.fullmatch(line))}
        defined = []
        for o in files(OBJECTS):
            if o in NOT_DOCUMENTED_OBJECTS:
                continue
            got = shell.run(["nm", "--defined-only", o], stdout=subprocess.PIPE, text=True)
            for row in got.stdout.splitlines():
                fields = row.split()
                if len(fields) == 3 and fields[1] == "T" and not GENERATED.match(fields[2]):
                    defined.append(f"{fields[2]} {o}")
        defined.sort()
        with open(os.path.join(OUT, "globals"), "w", encoding="utf-8") as f:
            f.write("".join(d + "\n" for d in defined))
        missing = [d for d in defined if d.split()[0] not in documented]
        if not defined:
            t.bad("kernel-doc coverage: no module objects to read (did the build run?)")
        elif missing:
            shell.log_lines([f"    undocumented: {m}" for m in missing])
            t.bad(f"kernel-doc coverage: {len(missing)} global functions without kernel-doc")
        else:
            t.ok(f"kernel-doc coverage: all {len(defined)} global functions documented")

    def callgraph(self):
        """module/*.c call each other one way only (docs/architecture.md),
        read from the sparse build's objects."""
        if self.tool(["scripts/callgraph", "--check"], "callgraph.log"):
            self.tally.ok("callgraph: no circle among module/*.c")
        else:
            shell.log_lines(self.lines("callgraph.log"))
            self.tally.bad("callgraph: module/*.c call each other in a circle "
                           "(build/lint/callgraph.log)")

    def clang(self, cxx_format):
        """clang-format on the C++; clang-tidy and clang's thread-safety
        analysis on the core's units, with the core's own flags for clang
        (cxx-core/core.mk) and the layout header the kernel build made.
        The analysis fails a guarded field touched without its lock, a
        helper called without the locks it requires, a lock held at a
        return, or (-beta: acquired_before) c_lock taken before p_lock;
        GCC, which builds the module, has no such check, and the
        annotations expand to nothing there."""
        t = self.tally
        for f in cxx_format:
            t.check(self.tool(["clang-format", "--dry-run", "--Werror", "--style=file", f],
                              "clang-format.log"),
                    f"clang-format {f}",
                    f"clang-format {f} (scripts/lint --format rewrites it; "
                    "build/lint/clang-format.log)")
        got = shell.run(["make", "-s", "--no-print-directory", "core-flags-clang"],
                        stdout=subprocess.PIPE, text=True)
        flags = got.stdout.split() if got.returncode == 0 else []
        if not flags:
            t.bad("make core-flags-clang printed nothing")
        includes = ["-Icxx-core", "-Igenerated"]
        for f in files(CXX_UNITS):
            t.check(self.tool(["clang-tidy", "--quiet", f, "--", "-x", "c++", *flags, *includes],
                              "clang-tidy.log"),
                    f"clang-tidy {f}", f"clang-tidy {f} (build/lint/clang-tidy.log)")
        for f in files(CXX_UNITS):
            t.check(self.tool(["clang++", "-fsyntax-only", *flags, "-Wthread-safety",
                               "-Wthread-safety-beta", "-Werror", *includes, f],
                              "thread-safety.log"),
                    f"clang -Wthread-safety {f}",
                    f"clang -Wthread-safety {f} (build/lint/thread-safety.log)")

    def shellcheck(self, names):
        """shellcheck on every shell script: the scripts are the test
        suite, and a quoting slip there can hide a failure.  The guest's
        are POSIX sh (dash in the VM), the host's bash; shellcheck takes
        the dialect from the #! line or a "shellcheck shell=" line."""
        t = self.tally
        scripts = programs(names, ".sh", SH_SHEBANG)
        if not scripts:
            t.bad("shellcheck: no shell scripts found (is this a git tree?)")
        for f in scripts:
            if self.tool(["shellcheck", "-f", "gcc", f], "shellcheck.log"):
                t.ok(f"shellcheck {f}")
            else:
                shell.log_lines([line for line in self.lines("shellcheck.log") if f"{f}:" in line])
                t.bad(f"shellcheck {f} (build/lint/shellcheck.log)")

    def python(self, names):
        """pyflakes on every Python program (an unused import or a name
        that does not exist is found here, not in the middle of a run),
        then the examples in the modules' docstrings run as tests.
        doctest reads a file without .py as text, not as a module;
        scripts/ is on the path for scripts/runner/'s modules, which
        import each other as runner.*, and no __pycache__ is left."""
        t = self.tally
        found = programs(names, ".py", PY_SHEBANG)
        for f in found:
            if self.tool(["pyflakes3", f], "pyflakes.log"):
                t.ok(f"pyflakes {f}")
            else:
                shell.log_lines([line for line in self.lines("pyflakes.log") if f"{f}:" in line])
                t.bad(f"pyflakes {f} (build/lint/pyflakes.log)")
        env = dict(os.environ, PYTHONPATH="scripts", PYTHONDONTWRITEBYTECODE="1")
        for f in found:
            if not f.endswith(".py"):
                continue
            with open(f, encoding="utf-8", errors="replace") as src:
                if not DOCTEST.search(src.read()):
                    continue
            t.check(self.tool(["python3", "-m", "doctest", f], "doctest.log", env=env),
                    f"doctest {f}", f"doctest {f} (build/lint/doctest.log)")


def main(args):
    """scripts/lint [--format]; prints "PASSED FAILED" last, and fails
    when a check did."""
    if args not in ([], ["--format"]):
        shell.die("usage: scripts/lint [--format]")
    pkgs.need_pkgs(pkgs.KERNEL_BUILD_PKGS + pkgs.LINT_PKGS)
    os.chdir(ROOT)
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    kdir = kbuild.test_kernel()
    if kdir is None:
        print("0 1", flush=True)
        return 1
    ksrc = paths.kernel_src()

    c_files = files(C_FILES)
    cxx_format = [f for f in files(CXX_FORMAT) if f != SEAM_HEADER]
    if args:
        shell.run(["clang-format", "-i", "--style=file", *cxx_format])
    lint = Lint()
    lint.checkpatch(ksrc, c_files)
    lint.sparse(kdir)
    lint.kernel_doc(ksrc, c_files)
    lint.callgraph()
    lint.clang(cxx_format)
    names = [n for n in paths.tree_files() if os.path.isfile(n)]
    lint.shellcheck(names)
    lint.python(names)
    print(lint.tally.line(), flush=True)
    return 0 if lint.tally.failed == 0 else 1
