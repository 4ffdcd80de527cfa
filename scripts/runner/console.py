# SPDX-License-Identifier: GPL-2.0
"""The guest's console as it comes: kept in a file, COMMAND's part shown.

QEMU's serial console carries the kernel's and /init's lines with
carriage returns and the odd terminal escape; the log keeps them
without, and standard output gets only what the guest printed between
markers.BEGIN and markers.CMD_END, each line as soon as it is whole, so
that a caller sees a long command's progress live.
"""

import re

from runner import markers

# carriage returns and terminal escapes (CSI sequences, and two-byte ones)
ESCAPES = re.compile(rb"\r|\x1b\[[0-9;?]*[A-Za-z]|\x1b[A-Za-z]")


def clean(line):
    """LINE (bytes, its newline gone) without escapes or carriage returns.

    >>> clean(b"\\x1b[0;32mok\\x1b[0m\\r")
    b'ok'
    """
    return ESCAPES.sub(b"", line)


class Console:
    """The copy of one boot's console: every line to LOG (a binary file),
    COMMAND's lines to OUT (a binary stream, None for none).

    >>> import io
    >>> log, out = io.BytesIO(), io.BytesIO()
    >>> console = Console(log, out)
    >>> for line in [b"boot\\n", b"@@krwq-vm-begin@@\\n", b"hi\\r\\n",
    ...              b"end@@krwq-vm-command-end@@\\n", b"dmesg"]:
    ...     console.feed(line)
    >>> out.getvalue()
    b'hi\\nend\\n'
    >>> log.getvalue()
    b'boot\\n@@krwq-vm-begin@@\\nhi\\nend@@krwq-vm-command-end@@\\ndmesg\\n'
    """

    def __init__(self, log, out):
        self.log, self.out = log, out
        self.begin, self.end = markers.BEGIN.encode(), markers.CMD_END.encode()
        self.seen = False  # markers.BEGIN has come
        self.showing = False  # between it and markers.CMD_END

    def feed(self, raw):
        """One line of the console, RAW as read (bytes, with its newline
        if it has one)."""
        line = clean(raw.rstrip(b"\n"))
        self.log.write(line + b"\n")
        self.log.flush()
        if not self.seen and self.begin in line:
            self.seen = self.showing = True
        elif self.showing and self.end in line:
            self.show(line[:line.index(self.end)], partial=True)
            self.showing = False
        elif self.showing:
            self.show(line)

    def show(self, line, partial=False):
        """LINE to standard output, flushed; with PARTIAL (the text before
        the end marker on its line) only when there is some.  A reader
        that went away stops the showing, not the run: the console log
        and the verdict still come."""
        if self.out is None or (partial and not line):
            return
        try:
            self.out.write(line + b"\n")
            self.out.flush()
        except BrokenPipeError:
            self.out = None

    def copy(self, stream):
        """Every line of STREAM (a binary pipe) through feed, to its end."""
        for raw in iter(stream.readline, b""):
            self.feed(raw)

