# SPDX-License-Identifier: GPL-2.0
"""scripts/vm's command line and environment, made a boot.Boot."""

import os
import re
import shlex
import sys

from runner import boot
from runner.shell import die

USAGE = """\
usage: scripts/vm run [OPTION]... -- COMMAND [ARG...]

Boots the krwq test kernel in QEMU (KVM when it works, else TCG),
loads krwq.ko and runs COMMAND [ARG...] through /bin/sh -c in /krwq,
as root.  COMMAND is shell code taken as is; each ARG is appended
quoted.  Exits with COMMAND's status, or 1 if COMMAND succeeded but the
kernel reported a splat (BUG, WARNING, Oops, KASAN, UBSAN, lockdep,
kmemleak, panic, hung task, soft lockup, RCU stall), or the guest
crashed or never finished; 124 on timeout.

options:
  --no-module            do not insmod /krwq/krwq.ko before COMMAND
  --no-kmemleak          boot with kmemleak=off: no allocation is
                         tracked and no final scan is made (for
                         boots whose worth is volume, not the life of
                         objects: under TCG kmemleak's tracking, one
                         global lock taken by every allocation and
                         free, more than doubles the CPU time of a
                         traffic-heavy boot beside another guest)
  --param NAME=VALUE     a krwq.ko module parameter (repeatable)
  --add HOST[:GUEST]     copy a file or folder into the guest; GUEST
                         defaults to /krwq/add/<basename>; a folder
                         is merged into one already there
                         (repeatable)
  --timeout SECONDS      kill the guest after this long (default 600)
  --link ROLE:PORT       give the guest a network link, eth0 (a
                         virtio-net NIC, module virtio_net), to
                         another guest: QEMU's socket netdev on
                         127.0.0.1:PORT, ROLE listen (this guest's
                         MAC is 52:54:00:4b:52:01) or connect (its
                         peer, 52:54:00:4b:52:02; start it once the
                         listener's QEMU listens).
  --link none            eth0 as above, but on a QEMU hub of its own:
                         what it sends goes nowhere.  Without --link
                         the guest has no network at all.

In the guest: /krwq/krwq.ko and /krwq/krwq_kunit.ko from the repository
root, the executables of build/user in /krwq/bin (on PATH), the
guest scripts' libraries in /krwq/lib (tap.sh: TAP helpers;
pair.sh: a server and its client on loopback; roce.sh: GID
indices and counters of RoCE devices; module.sh: insmod with
dependencies; nvmeof-lib.sh:
NVMe over Fabrics set-up and teardown; nfs-lib.sh: the NFS
server and an RDMA mount), busybox,
kmod, ip, rdma, ibverbs-utils, rdmacm-utils, perftest, the kernel's
modules (modprobe rdma_rxe works), a user krwq (uid 1000).

The full console log is kept in build/vm/last-console.log, or in
KRWQ_VM_LOG (two guests at once need one each).
Environment: KRWQ_KERNEL=debian  boot Debian's own linux-image-amd64
(scripts/debian-kernel) with krwq.ko built against the matching
linux-headers-amd64 (no krwq_kunit.ko: Debian has no KUnit);
KRWQ_KERNEL_DIR  kernel build dir (default: the output of
scripts/test-kernel); KRWQ_VM_ACCEL  kvm or tcg, skipping the probe;
KRWQ_VM_SMP=N  the guest's CPUs (default 2; the bench's two guests
take one each, one per host CPU);
KRWQ_VM_KMEMLEAK=0  skip the final kmemleak scans (about 12 s in TCG
with krwq_vm_kmemleak.ko, below; 30-55 s without);
KRWQ_VM_GCOV=DIR  at the end, bring the gcov counts of the guest's
/sys/kernel/debug/gcov (a KRWQ_GCOV=1 build on a gcov kernel, see
scripts/coverage) out over the console, into a new folder DIR/boot.*
holding the guest's paths.
With a KASAN and kmemleak kernel, the guest first loads and unloads
krwq_vm_kmemleak.ko from the repository root (vmhelpers/vm_kmemleak.c):
kmemleak's scans then skip KASAN's shadow, two thirds of their time.
"""


def parse_run(args, env=os.environ):
    """The Boot that `scripts/vm run ARGS...` declares, with ENV's
    KRWQ_* settings.  COMMAND is shell code as given; each ARG after it
    is appended quoted.

    >>> b = parse_run(["--no-module", "--param", "wire=0", "--link", "listen:62100",
    ...                "--", "sh x.sh", "a b", "c"], env={})
    >>> b.command, b.module, b.params, b.link_role, b.link_port, b.timeout
    ("sh x.sh 'a b' c", False, ['wire=0'], 'listen', 62100, 600)
    """
    b = boot.Boot(command="")
    i = 0
    while i < len(args):
        a = args[i]
        value = args[i + 1] if i + 1 < len(args) else None
        if a == "--no-module":
            b.module = False
        elif a == "--no-kmemleak":
            b.kmemleak = False
        elif a == "--param":
            if value is None:
                die("--param needs NAME=VALUE")
            if not re.match(r"[A-Za-z_][A-Za-z0-9_.]*=.", value, re.S):
                die(f"--param {value}: want NAME=VALUE")
            b.params.append(value)
        elif a == "--add":
            if value is None:
                die("--add needs HOST_PATH[:GUEST_PATH]")
            b.adds.append(value)
        elif a == "--timeout":
            if value is None or not re.fullmatch(r"[1-9][0-9]*", value):
                die("--timeout needs a number of seconds")
            b.timeout = int(value)
        elif a == "--link":
            b.link_role, b.link_port = parse_link(value)
        elif a == "--":
            i += 1
            break
        elif a in ("-h", "--help"):
            sys.stdout.write(USAGE)
            sys.exit(0)
        else:
            die(f"unknown option {a} (COMMAND goes after --; see scripts/vm --help)")
        i += 1 if a in ("--no-module", "--no-kmemleak") else 2
    rest = args[i:]
    if not rest or not rest[0]:
        die("no COMMAND (see scripts/vm --help)")
    b.command = " ".join([rest[0], *map(shlex.quote, rest[1:])])
    from_env(b, env)
    return b


def parse_link(value):
    """--link VALUE as (role, port): ("none", 0), or listen or connect and
    a port."""
    if value == "none":
        return "none", 0
    m = re.fullmatch(r"(listen|connect):([1-9][0-9]*)", value or "")
    if not m or int(m.group(2)) > 65535:
        die("--link needs listen:PORT, connect:PORT or none")
    return m.group(1), int(m.group(2))


def from_env(b, env):
    """B's settings from the environment (an empty variable is an unset
    one, as the shell's ${VAR:-default} had it)."""
    b.kernel = env.get("KRWQ_KERNEL") or "test"
    b.kernel_dir = env.get("KRWQ_KERNEL_DIR") or ""
    b.accel = env.get("KRWQ_VM_ACCEL") or ""
    b.smp = env.get("KRWQ_VM_SMP") or "2"
    b.scans = env.get("KRWQ_VM_KMEMLEAK") or "1"
    b.gcov_dir = env.get("KRWQ_VM_GCOV") or ""
    b.log = env.get("KRWQ_VM_LOG") or b.log
    b.boot_file = env.get("KRWQ_BOOT_FILE") or ""


def main(argv):
    """scripts/vm ARGV...; returns its exit status."""
    sub = argv[0] if argv else ""
    if sub == "run":
        return boot.run(parse_run(argv[1:]))
    if sub in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    sys.stderr.write(USAGE)
    if sub:
        die(f"unknown subcommand {sub}")
    return 1
