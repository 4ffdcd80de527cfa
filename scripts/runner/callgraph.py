# SPDX-License-Identifier: GPL-2.0
"""scripts/callgraph: which file of module/ calls which, read from the
built objects.  An edge A -> B when A.o has an undefined symbol that B.o
defines as a global function (nm: T); a function pointer taken (the ops
table, a timer) counts as a call.  Static inlines of headers are in the
objects that use them, so they count for their callers.
"""

import glob
import graphlib
import os
import subprocess
import sys

from runner import shell
from runner.shell import ROOT

# module/layout.o only computes the layout header's offsets
SKIPPED = ("module/layout.o",)


def symbols(obj, *options):
    """The rows of `nm OPTIONS OBJ`, split in fields."""
    got = shell.run(["nm", *options, obj], stdout=subprocess.PIPE, text=True, check=True)
    return [row.split() for row in got.stdout.splitlines()]


def calls():
    """The calls between module/'s objects: {(caller.c, callee.c):
    [symbol, ...]}, symbols sorted; None without objects."""
    objs = [o for o in sorted(glob.glob("module/*.o")) if o not in SKIPPED]
    if not objs:
        return None
    source = {o: o[:-len(".o")] + ".c" for o in objs}
    defined = {}
    for o in objs:
        for row in symbols(o, "--defined-only"):
            if len(row) == 3 and row[1] == "T":
                defined[row[2]] = source[o]
    edges = {}
    for o in objs:
        for row in symbols(o, "-u"):
            callee = defined.get(row[-1])
            if callee:
                edges.setdefault((source[o], callee), []).append(row[-1])
    return {edge: sorted(names) for edge, names in edges.items()}


def circle(edges):
    """A circle of calls among EDGES' files, as a list of files that
    starts and ends with the same one, or None.

    >>> circle({("a.c", "b.c"): [], ("b.c", "c.c"): []}) is None
    True
    >>> c = circle({("a.c", "b.c"): [], ("b.c", "a.c"): [], ("c.c", "a.c"): []})
    >>> c[0] == c[-1], sorted(set(c))
    (True, ['a.c', 'b.c'])
    """
    sorter = graphlib.TopologicalSorter()
    for caller, callee in edges:
        sorter.add(callee, caller)
    try:
        sorter.prepare()
    except graphlib.CycleError as e:
        return e.args[1]
    return None


def main(args):
    """scripts/callgraph [--check]; returns the exit status: 2 without
    objects, 1 for a circle under --check."""
    if args not in ([], ["--check"]):
        shell.die("usage: scripts/callgraph [--check]")
    os.chdir(ROOT)
    edges = calls()
    if edges is None:
        sys.stderr.write("callgraph: no module/*.o; build first\n")
        return 2
    if args:
        found = circle(edges)
        if found:
            sys.stderr.write("callgraph: module/*.c call each other in a circle:\n")
            sys.stderr.write("".join(f"  {f}\n" for f in found))
            return 1
        return 0
    for caller, callee in sorted(edges):
        print(f"{caller} -> {callee}: {' '.join(edges[(caller, callee)])}")
    return 0
