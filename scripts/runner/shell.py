# SPDX-License-Identifier: GPL-2.0
"""What scripts/lib.sh defines, asked of bash, and the runner's messages.

The bash scripts and the runner share lib.sh's values (the splat list,
the dmesg markers, the cache folder): both read the one definition there
instead of keeping a copy each.
"""

import functools
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB_SH = os.path.join(ROOT, "scripts", "lib.sh")


def log(msg):
    """MSG on standard error after "krwq: ", as lib.sh's log() prints it;
    text that came in as undecodable bytes (surrogateescape) goes out as
    those bytes."""
    sys.stderr.flush()
    sys.stderr.buffer.write(f"krwq: {msg}\n".encode("utf-8", "surrogateescape"))
    sys.stderr.flush()


def die(msg):
    """log(MSG) and end the run with status 1 (SystemExit: the run's
    clean-up still happens)."""
    log(msg)
    sys.exit(1)


def bash(snippet, *args, **kwargs):
    """SNIPPET run by bash with ARGS as "$@", after lib.sh, under the
    options scripts/vm always ran its helpers with (set -euo pipefail).
    KWARGS go to subprocess.run; standard error is ours."""
    script = f"set -euo pipefail; shopt -s inherit_errexit; . {shlex.quote(LIB_SH)}; {snippet}"
    return subprocess.run(["bash", "-c", script, "krwq", *args], **kwargs)


@functools.cache
def values():
    """lib.sh's values the runner reads: KRWQ_CACHE, KRWQ_SPLATS,
    M_DMESG_BEGIN and M_DMESG_END, by name."""
    names = ("KRWQ_CACHE", "KRWQ_SPLATS", "M_DMESG_BEGIN", "M_DMESG_END")
    got = bash("printf '%s\\0' " + " ".join(f'"${n}"' for n in names),
               check=True, stdout=subprocess.PIPE, text=True)
    return dict(zip(names, got.stdout.split("\0")))

