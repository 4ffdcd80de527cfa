# SPDX-License-Identifier: GPL-2.0
"""The lines the guest's /init (scripts/guest/init.sh) prints on the
console, for the runner and the stages to find its parts by; and a log
file's lines, read and written.

They reach the guest in /krwq/vm.env (boot.vm_env), so that this file
holds their only definitions.
"""

BEGIN = "@@krwq-vm-begin@@"  # /init has started; COMMAND's lines follow
CMD_END = "@@krwq-vm-command-end@@"  # COMMAND has ended
SETUP_FAILED = "@@krwq-vm-setup-failed@@"  # COMMAND never ran
LEAK_BEGIN = "@@krwq-vm-kmemleak-begin@@"  # kmemleak's report after its scans
LEAK_END = "@@krwq-vm-kmemleak-end@@"
GCOV_BEGIN = "@@krwq-vm-gcov-begin@@"  # the .gcda files, a base64'd tar.gz
GCOV_END = "@@krwq-vm-gcov-end@@"
EXIT = "@@krwq-vm-exit:"  # then COMMAND's status and "@@"
TIMES = "@@krwq-vm-times:"  # then the uptime at COMMAND's start and end, "@@"
KVM_OK = "@@krwq-kvm-ok@@"  # the KVM probe's guest has run
# the kernel log that /init prints at the end of every run
DMESG_BEGIN = "@@krwq-vm-dmesg-begin@@"
DMESG_END = "@@krwq-vm-dmesg-end@@"


def guest_names():
    """The markers as init.sh names them: {M_BEGIN: "@@krwq-vm-begin@@", ...}."""
    return {"M_BEGIN": BEGIN, "M_CMD_END": CMD_END, "M_SETUP_FAILED": SETUP_FAILED,
            "M_LEAK_BEGIN": LEAK_BEGIN, "M_LEAK_END": LEAK_END,
            "M_DMESG_BEGIN": DMESG_BEGIN, "M_DMESG_END": DMESG_END,
            "M_GCOV_BEGIN": GCOV_BEGIN, "M_GCOV_END": GCOV_END,
            "M_EXIT": EXIT, "M_TIMES": TIMES}


def section(lines, begin, end):
    """The LINES between a line that holds BEGIN and the next that holds
    END, every such part in turn.

    >>> section(["a", "x @@b@@", "1", "2", "@@e@@ y", "3", "@@b@@", "4"], "@@b@@", "@@e@@")
    ['1', '2', '4']
    """
    out, on = [], False
    for line in lines:
        if end in line:
            on = False
        if on:
            out.append(line)
        if begin in line:
            on = True
    return out


def read_lines(path):
    """PATH's lines as awk reads them: split at newlines only, bytes that
    are not UTF-8 kept (surrogateescape)."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        text = f.read()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def write_lines(path, lines):
    """LINES into PATH, one a line, undecodable bytes as they came
    (read_lines' other way)."""
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write("".join(line + "\n" for line in lines))
