# SPDX-License-Identifier: GPL-2.0
"""The dose of a make check run: how much work its stages gave the code
(fuzz executions, WQEs through krwq_stress, bad inputs, injected
faults, unload cycles), as "NAME COUNT" lines in the file scripts/check
names in KRWQ_DOSE_FILE.  The stages add to it (add()); the dose stage
reads it back (read()) and wants MIN of the fuzz executions and of the
stress WQEs; scripts/results.py keeps it in summary.json.
"""

import os

from runner.shell import log

# The dose make check must give per run: fuzz executions on the core and
# WQEs through krwq_stress (under KASAN and KCSAN together), each at
# least this many.
MIN = 1000000


def add(name, count):
    """COUNT added to the figure NAME of make check's dose (nothing when
    KRWQ_DOSE_FILE names no file: outside make check).  A line that
    cannot be written is said, and fails nothing here: the dose stage
    finds the figure short."""
    path = os.environ.get("KRWQ_DOSE_FILE", "")
    if not path:
        return
    try:
        with open(path, "a") as f:
            f.write(f"{name} {count}\n")
    except OSError as e:
        log(f"dose: {name} {count} not recorded: {e}")


def read(path):
    """The dose file at PATH: its "NAME COUNT" lines summed by name; no
    file is no dose.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", delete=False) as f:
    ...     _ = f.write("fuzz_execs 10\\nbad line\\nfuzz_execs 5\\nunload_cycles 50\\n")
    >>> read(f.name), read(f.name + ".none")
    ({'fuzz_execs': 15, 'unload_cycles': 50}, {})
    >>> os.remove(f.name)
    """
    dose = {}
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                fields = line.split()
                if len(fields) == 2 and fields[1].isdigit():
                    dose[fields[0]] = dose.get(fields[0], 0) + int(fields[1])
    return dose
