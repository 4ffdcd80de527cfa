# SPDX-License-Identifier: GPL-2.0
"""scripts/pyverbs-root: the folder that gives the test VM rdma-core's
own test suite, as Debian ships it.

  usr/bin/python3                 Debian's python3.11
  usr/lib/python3.11/             its standard library, less the parts
                                  no test imports (tkinter, idlelib, ...)
  usr/lib/python3/dist-packages/pyverbs/   python3-pyverbs
  usr/lib/x86_64-linux-gnu/       the libraries their extension modules
                                  link against
  krwq/rdma-core/tests/           rdma-core's tests/, from the rdma-core
                                  package's documentation folder (where
                                  Debian keeps it, most files gzip'd), of
                                  the same version as python3-pyverbs

Every module is compiled ahead, with hashes that are not checked: under
TCG the guest would otherwise compile each import again in every boot,
and the copy into the image does not keep the sources' times.

scripts/check-debian adds the folder to its boot (scripts/vm --add
OUT/usr:/usr --add OUT/krwq/rdma-core:/krwq/rdma-core);
scripts/guest/pyverbs.sh runs the suite there.
"""

import fnmatch
import gzip
import os
import shutil
import subprocess
import sys

from runner import pkgs, rootfs
from runner.shell import die

USAGE = "usage: scripts/pyverbs-root OUT"
SUITE = "/usr/share/doc/rdma-core/tests"
PYVERBS = "/usr/lib/python3/dist-packages/pyverbs"
# Left out of the standard library: what is for building, testing, GUIs,
# installers and documentation.  Its top folders, whatever else is
# named so below them left in:
STDLIB_LEFT_OUT_DIRS = ("test", "idlelib", "tkinter", "turtledemo", "lib2to3", "ensurepip",
                        "pydoc_data", "distutils", "venv", "sqlite3", "curses", "dbm")
# its top files and folders (patterns):
STDLIB_LEFT_OUT_TOP = ("config-*",)
# the extension modules of its lib-dynload/ (patterns):
STDLIB_LEFT_OUT_DYNLOAD = ("_test*", "_xx*", "xx*", "_ctypes_test*", "_ssl.*", "_hashlib.*",
                           "_sqlite3.*", "_dbm.*", "nis.*", "_crypt.*", "_curses*", "readline.*",
                           "ossaudiodev.*", "audioop.*")


def left_out(stdlib):
    """copytree's ignore function for the standard library at STDLIB:
    the names in a folder that are not copied (__pycache__ nowhere)."""
    def ignored(folder, names):
        rel = os.path.relpath(folder, stdlib)
        out = {n for n in names if n == "__pycache__"}
        if rel == ".":
            out |= {n for n in names if any(fnmatch.fnmatchcase(n, p) for p in STDLIB_LEFT_OUT_TOP)}
            out |= {n for n in names if n in STDLIB_LEFT_OUT_DIRS
                    and os.path.isdir(os.path.join(folder, n))
                    and not os.path.islink(os.path.join(folder, n))}
        elif rel == "lib-dynload":
            out |= {n for n in names
                    if any(fnmatch.fnmatchcase(n, p) for p in STDLIB_LEFT_OUT_DYNLOAD)}
        return out
    return ignored


def gunzip_tree(top):
    """Every gzip'd regular file under TOP replaced by its contents, named
    without .gz, with the mode and times of the .gz, as gunzip does."""
    for folder, _, names in os.walk(top):
        for name in names:
            path = os.path.join(folder, name)
            if not name.endswith(".gz") or name == ".gz" or os.path.islink(path):
                continue
            plain = path[:-len(".gz")]
            with gzip.open(path, "rb") as src, open(plain, "xb") as dst:
                shutil.copyfileobj(src, dst)
            shutil.copystat(path, plain)
            os.remove(path)


def build(out):
    """OUT made afresh: Debian's python3, its standard library, pyverbs and
    rdma-core's tests, the libraries they need, every module compiled."""
    pkgs.need_pkgs(["python3", "python3-pyverbs", "rdma-core"])
    py = os.path.realpath("/usr/bin/python3")
    ver = py.rsplit("/python", 1)[-1]
    stdlib = f"/usr/lib/python{ver}"
    if not os.path.isfile(os.path.join(SUITE, "run_tests.py")):
        die(f"no {SUITE}/run_tests.py (rdma-core's documentation folder)")
    pyverbs_ver, core_ver = pkgs.version("python3-pyverbs"), pkgs.version("rdma-core")
    if pyverbs_ver != core_ver:
        die(f"python3-pyverbs {pyverbs_ver} and rdma-core {core_ver} differ: "
            "the suite would not match its bindings")

    shutil.rmtree(out, ignore_errors=True)
    for d in ("usr/bin", "usr/lib/python3/dist-packages", "krwq/rdma-core"):
        os.makedirs(os.path.join(out, d))
    shutil.copy(py, os.path.join(out, "usr/bin/python3"))
    shutil.copytree(stdlib, os.path.join(out, f"usr/lib/python{ver}"), symlinks=True,
                    ignore=left_out(stdlib))
    shutil.copytree(PYVERBS, os.path.join(out, "usr/lib/python3/dist-packages/pyverbs"),
                    symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    tests = os.path.join(out, "krwq/rdma-core/tests")
    shutil.copytree(SUITE, tests, symlinks=True, copy_function=shutil.copy)
    gunzip_tree(tests)

    # the libraries of the extension modules (the python binary's own come
    # through scripts/vm's look at the overlay's executables)
    sos = [os.path.join(folder, n) for folder, dirs, files in os.walk(os.path.join(out, "usr/lib"))
           for n in dirs + files if n.endswith(".so")]
    for lib in rootfs.elf_libs(sos):
        rootfs.copy_to_root(out, lib)
    rootfs.merge_usr(out)

    got = subprocess.run([py, "-m", "compileall", "-q", "-j", "0",
                          "--invalidation-mode", "unchecked-hash",
                          os.path.join(out, f"usr/lib/python{ver}"),
                          os.path.join(out, "usr/lib/python3/dist-packages"),
                          os.path.join(out, "krwq/rdma-core")], stdout=subprocess.DEVNULL)
    if got.returncode:
        die(f"{py} -m compileall failed in {out}")


def main(argv):
    """scripts/pyverbs-root ARGV...: OUT built and printed; returns the
    exit status."""
    if len(argv) != 1:
        print(USAGE, file=sys.stderr)
        return 1
    build(argv[0])
    print(argv[0], flush=True)
    return 0
