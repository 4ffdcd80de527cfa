# SPDX-License-Identifier: GPL-2.0
"""The kernel's complaints that fail a VM run, and their finder.

The list, SPLATS, fails every VM run (scripts/vm) and the race stage
(runner.race, which sorts KCSAN's reports apart first and adds
kmemleak's "unreferenced object").  kmemleak's leaks are not in it:
they come from the report of the runner's own final scans
(markers.LEAK_BEGIN).
"""

import functools
import re

from runner import markers

# The kernel's complaints: a log line that holds one of these fails the
# run.
SPLATS = (
    "BUG:", "WARNING:", "Oops", "KASAN", "UBSAN", "general protection fault",
    "possible circular locking dependency", "possible recursive locking",
    "inconsistent lock state", "suspicious RCU usage", "lock held when returning",
    "bad unlock balance", "DEBUG_LOCKS_WARN_ON", "Kernel panic",
    "blocked for more than", "soft lockup", "self-detected stall", "rcu: INFO",
    # kmemleak told about an address it does not track (the runner's
    # helper module, vmhelpers/vm_kmemleak.c)
    "kmemleak: Trying to color unknown object", "kmemleak: Found object by alias",
)

# a kernel log line: "[   12.345678] ...", its timestamp anywhere
STAMP = re.compile(r"\[ *[0-9]+\.[0-9]+\] ")
# a line of the kmemleak report, as kernel_text marks them
LEAK = "[kmemleak] "
LEAK_HEAD = LEAK + "unreferenced object"
# the last line of a report: "---[ end trace ...]---", or a "=====" rule
# (KASAN's, UBSAN's, lockdep's)
END = re.compile(r"---\[ end |^\[ *[0-9.]+\] =+$")
# at most this many reports are shown, each at most this many lines long
SHOWN, WINDOW = 5, 40


@functools.cache
def pattern():
    """SPLATS as one regular expression.

    >>> bool(pattern().search("[  1.0] BUG: unable to handle")), bool(pattern().search("ok"))
    (True, False)
    """
    return re.compile("|".join(re.escape(s) for s in SPLATS))


def kernel_text(lines):
    """The lines of a console log (LINES) that may hold complaints: once
    the guest printed its dmesg, that kernel log and the kmemleak
    report, each line of the report after "[kmemleak] "; before that
    (a crash, a timeout), the whole console."""
    begin, end = markers.DMESG_BEGIN, markers.DMESG_END
    if any(end in line for line in lines):
        text = (markers.section(lines, begin, end)
                + [LEAK + line for line in
                   markers.section(lines, markers.LEAK_BEGIN, markers.LEAK_END)])
    else:
        text = list(lines)
    while text and text[-1] == "":  # what the shell's $(...) left out
        text.pop()
    return text


def find(text, regex=None):
    """The complaints in TEXT (kernel_text's lines), as lines to show
    indented: each report from two lines before its first line (a leak:
    from its first) to its end, at most WINDOW lines; at most SHOWN
    reports, then how many more there are.  REGEX: pattern()'s stand-in.

    >>> log = ["[    1.000000] ok", "[    2.000000] WARNING: at x.c:1 f+0x1/0x2",
    ...        "[    2.000001] Call Trace:", "[    2.000002] ---[ end trace 0 ]---",
    ...        "[    3.000000] after"]
    >>> find(log, re.compile("WARNING:"))
    ['    [    1.000000] ok', '    [    2.000000] WARNING: at x.c:1 f+0x1/0x2', \
'    [    2.000001] Call Trace:', '    [    2.000002] ---[ end trace 0 ]---']
    >>> find(["[kmemleak] unreferenced object 0xff (size 8):", "[kmemleak]   comm x",
    ...       "[kmemleak] unreferenced object 0xfe (size 8):"], re.compile("BUG:"))
    ['    [kmemleak] unreferenced object 0xff (size 8):', '    [kmemleak]   comm x', \
'    [kmemleak] unreferenced object 0xfe (size 8):']
    """
    regex = regex or pattern()
    hits, leaks = heads(text, regex)
    out, shown, last, i = [], 0, -1, 0
    while i < len(hits) and shown < SHOWN:
        h = hits[i]
        i += 1
        if h <= last:  # inside the report shown before
            continue
        start = max(h if h in leaks else h - 2, last + 1)
        if last >= 0 and start > last + 1:
            out.append("    ...")
        j = start
        while j < len(text) and j < h + WINDOW:
            if h in leaks and j > h and not text[j].startswith(LEAK + " "):
                break  # the leak's own lines are indented
            out.append("    " + text[j])
            j += 1
            if h not in leaks and j - 1 > h and END.search(text[j - 1]):
                break
        last, shown = j - 1, shown + 1
    more = sum(1 for h in hits[i:] if h > last)
    if more:
        out.append(f"    ... and {more} more (see the console log)")
    return out


def heads(text, regex):
    """The indexes of TEXT's lines that start a complaint (a kernel log
    line REGEX matches, or a leak of the kmemleak report), and the set
    of those that are leaks."""
    hits, leaks = [], set()
    for n, line in enumerate(text):
        if STAMP.search(line) and regex.search(line):
            hits.append(n)
        elif line.startswith(LEAK_HEAD):
            hits.append(n)
            leaks.add(n)
    return hits, leaks


def headline(text, regex=None):
    """The first complaint's own line, less its "[kmemleak] " and its
    timestamp, at most 90 characters: the name a summary gives the
    failure; "" when there is none.

    >>> headline(["[    2.000000] BUG: KASAN: use-after-free in f"], re.compile("BUG:"))
    'BUG: KASAN: use-after-free in f'
    """
    hits, _ = heads(text, regex or pattern())
    if not hits:
        return ""
    return re.sub(r"^(\[kmemleak\] )?(\[ *[0-9.]+\] )?", "", text[hits[0]], count=1)[:90]
