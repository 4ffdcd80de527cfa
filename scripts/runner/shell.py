# SPDX-License-Identifier: GPL-2.0
"""The runner's messages, its children, and its scripts' way out."""

import contextlib
import os
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(msg):
    """MSG on standard error after "krwq: ", as every script of the
    project prints its messages;
    text that came in as undecodable bytes (surrogateescape) goes out as
    those bytes."""
    sys.stderr.flush()
    sys.stderr.buffer.write(f"krwq: {msg}\n".encode("utf-8", "surrogateescape"))
    sys.stderr.flush()


def log_lines(lines):
    """LINES on standard error as they are, no "krwq: " before them."""
    sys.stderr.flush()
    sys.stderr.buffer.write("".join(line + "\n" for line in lines)
                            .encode("utf-8", "surrogateescape"))
    sys.stderr.flush()


def die(msg):
    """log(MSG) and end the run with status 1 (SystemExit: the run's
    clean-up still happens)."""
    log(msg)
    sys.exit(1)


def entry(main, doc=None):
    """The exit status of MAIN(ARGS), run as a script's whole program
    with the script's ARGS: a SIGTERM or SIGHUP ends it like an error
    (SystemExit: its children get their SIGTERM from child() and its
    clean-up happens), as does ^C; a signal ignored on entry (nohup's
    SIGHUP) stays ignored, as a shell leaves it.  With DOC, -h and
    --help print DOC instead."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, lambda s, _f: sys.exit(128 + s))
    args = sys.argv[1:]
    if doc and any(a in ("-h", "--help") for a in args):
        sys.stdout.write(doc)
        return 0
    try:
        return main(args)
    except KeyboardInterrupt:
        return 128 + signal.SIGINT


@contextlib.contextmanager
def child(argv, **kwargs):
    """subprocess.Popen(ARGV, **KWARGS) as a context: a child still
    running when we are stopped (a signal's SystemExit, ^C, an error)
    gets a SIGTERM and is waited for, where subprocess.run would SIGKILL
    it.  The project's scripts clean up in their EXIT traps
    (scripts/initramfs removes its half-built image) and timeout(1)
    passes a SIGTERM on to the QEMU it bounds; a SIGKILL skips both."""
    with subprocess.Popen(argv, **kwargs) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait()


def output(argv):
    """ARGV's standard output, stripped, its standard error ours; None
    when it failed."""
    got = run(argv, stdout=subprocess.PIPE, text=True)
    return got.stdout.strip() if got.returncode == 0 else None


def run(argv, check=False, **kwargs):
    """subprocess.run(ARGV, check=CHECK, **KWARGS), its child stopped as
    child() stops it."""
    data = kwargs.pop("input", None)
    if data is not None:
        kwargs["stdin"] = subprocess.PIPE
    with child(argv, **kwargs) as proc:
        out, err = proc.communicate(data)
    done = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    if check:
        done.check_returncode()
    return done


def exit_status(rc):
    """The exit status a shell gives for a child's return code RC: a
    signal N (-N) is 128 + N.

    >>> exit_status(2), exit_status(-15)
    (2, 143)
    """
    return 128 - rc if rc < 0 else rc


def must(argv, **kwargs):
    """run(ARGV, **KWARGS), for a step the run cannot go on without: when
    it fails, the run ends with its exit status (127 when it cannot
    start, its reason said)."""
    sys.stdout.flush()
    try:
        rc = run(argv, **kwargs).returncode
    except OSError as e:
        log(f"{argv[0]}: {e.strerror}")
        sys.exit(127)
    if rc:
        sys.exit(exit_status(rc))


def logged(argv, log_file, **env):
    """ARGV run with its standard output and error in the file LOG_FILE
    (one it cannot start says so there), the variables ENV added to its
    environment; whether it succeeded."""
    with open(log_file, "wb") as f:
        try:
            return run(argv, stdout=f, stderr=subprocess.STDOUT,
                       env=dict(os.environ, **env)).returncode == 0
        except OSError as e:
            f.write(f"{argv[0]}: {e.strerror}\n".encode())
            return False
