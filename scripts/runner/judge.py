# SPDX-License-Identifier: GPL-2.0
"""After a boot: the verdict on its console log, the gcov counts the
guest printed, and the boot's line in make check's table of boots."""

import base64
import binascii
import os
import re
import shutil
import subprocess
import tempfile

from runner import markers, splats
from runner.shell import log, log_lines

EXIT = re.compile(re.escape(markers.EXIT) + r"([0-9]+)@@")
TIMES = re.compile(re.escape(markers.TIMES) + r"([0-9]+) ([0-9]+)@@")


def tenths(n):
    """N tenths of a second as "12.3".

    >>> tenths(123), tenths(7)
    ('12.3', '0.7')
    """
    return f"{n // 10}.{n % 10}"


def verdict(path, qemu_status, seconds, timeout, shown=None):
    """The exit status of the run whose console log is at PATH: 124 when
    QEMU_STATUS (timeout's) says the guest was killed, 1 when the guest's
    setup failed or no exit status came, else COMMAND's, made 1 when it
    was 0 and the kernel complained.  Why a run failed goes to standard
    error, with the kernel's complaints; SECONDS is the run's time,
    TIMEOUT the --timeout, SHOWN the name the messages give the log
    (where it will be kept; PATH by default)."""
    lines = markers.read_lines(path)
    path = shown or path
    whole = "\n".join(lines)
    text = splats.kernel_text(lines)
    found = splats.find(text)
    if found:
        log("vm: the kernel complained:")
        log_lines(found)
    if qemu_status in (124, 137):
        log(f"vm: TIMED OUT after {timeout}s; the guest was killed (console log: {path})")
        return 124
    if markers.SETUP_FAILED in whole:
        log(f"vm: the guest's setup failed before COMMAND ran (console log: {path})")
        return 1
    status = EXIT.findall(whole)
    if not status:
        log(f"vm: the guest crashed or hung: no exit status (QEMU status {qemu_status}; "
            f"console log: {path})")
        if not found:
            log_lines(["    " + line for line in lines[-30:]])
        return 1
    status = int(status[-1])
    times = TIMES.findall(whole)
    if times:
        start, end = map(int, times[-1])
        log(f"vm: {seconds}s in all; COMMAND started {start}s after the kernel, "
            f"ran about {end - start}s")
    if found:
        first = splats.headline(text)
        named = f' "{first}"' if first else ""
        log(f"vm: FAILED: kernel splat{named} (COMMAND's status {status}; console log: {path})")
        status = status or 1
    elif status:
        log(f"vm: COMMAND exited with status {status} (console log: {path})")
    return status


def save_gcov(path, folder, shown=None):
    """The gcov counts the guest printed into the console log at PATH (a
    base64'd tar.gz of its /sys/kernel/debug/gcov's .gcda files),
    unpacked into a new folder FOLDER/boot.*; a warning, naming the log
    SHOWN (PATH by default), not a failure, when there are none."""
    os.makedirs(folder, exist_ok=True)
    to = tempfile.mkdtemp(prefix="boot.", dir=folder)
    encoded = "".join(markers.section(markers.read_lines(path),
                                      markers.GCOV_BEGIN, markers.GCOV_END))
    try:
        data = base64.b64decode(encoded.replace(" ", "").encode("ascii", "replace"))
        unpacked = subprocess.run(["tar", "-C", to, "-xzf", "-"], input=data,
                                  stderr=subprocess.DEVNULL).returncode == 0
    except (binascii.Error, ValueError):
        unpacked = False
    if not unpacked or not any(name.endswith(".gcda")
                               for _, _, files in os.walk(to) for name in files):
        log(f"vm: no gcov counts came out of the guest (KRWQ_VM_GCOV; console log: "
            f"{shown or path})")
        shutil.rmtree(to, ignore_errors=True)


def boot_line(kernel, seconds, status, cpu, command):
    """The line of one boot in the KRWQ_BOOT_FILE that scripts/check names
    (results.read_boots reads it): the kernel booted, its seconds, the
    exit status, the CPU seconds the boot used (QEMU's and the console's
    copy) and COMMAND's first 72 characters, its newlines and tabs made
    spaces (with the one the shell's version added at its end).

    >>> boot_line("kernel-6.1-default-08e8", "41.2", 0, 39, "sh /krwq/add/x.sh\\n\\ta b")
    'kernel-6.1-default-08e8\\t41.2\\t0\\t39\\tsh /krwq/add/x.sh  a b \\n'
    """
    words = (command + "\n").replace("\n", " ").replace("\t", " ")[:72]
    return f"{kernel}\t{seconds}\t{status}\t{cpu}\t{words}\n"


def record_boot(boot, kdir, seconds, status, cpu):
    """BOOT's line into KRWQ_BOOT_FILE, when make check names one: KDIR's
    kernel, "+kmemleak=off" after it for a boot without kmemleak."""
    if not boot.boot_file:
        return
    kernel = os.path.basename(kdir.rstrip("/")) + ("" if boot.kmemleak else "+kmemleak=off")
    try:
        with open(boot.boot_file, "a", errors="surrogateescape") as f:
            f.write(boot_line(kernel, seconds, status, cpu, boot.command))
    except OSError:
        pass  # a lost line of the table fails nothing
