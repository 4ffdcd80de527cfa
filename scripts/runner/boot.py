# SPDX-License-Identifier: GPL-2.0
"""One boot of the test VM: Boot declares it, run() carries it out.

run() builds the guest's initrd (the base image of scripts/initramfs,
initramfs.py, cached, and a small per-run overlay: /init, /krwq/vm.env,
krwq.ko, the --add files and the libraries they need), boots it under
QEMU bounded by timeout(1), copies the console to the log while it
streams COMMAND's lines to standard output, then hands the log to
judge.verdict for the exit status.
"""

import dataclasses
import fcntl
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time

from runner import console, initramfs, judge, markers, paths, pkgs, rootfs, shell
from runner.shell import ROOT, die, log

# the guest scripts' libraries, put in the guest's /krwq/lib
GUEST_LIBS = ("tap.sh", "pair.sh", "roce.sh", "module.sh", "nvmeof-lib.sh", "nfs-lib.sh")
# the kmemleak helper's name in the guest (vmhelpers/vm_kmemleak.c)
GUEST_HELPER = "/krwq/vm/krwq_vm_kmemleak.ko"
# where the consoles are kept: each run's while it runs, the last one's after
LOG_DIR = os.path.join(ROOT, "build", "vm")


@dataclasses.dataclass
class Boot:
    """A boot, as scripts/vm's options and environment declare it."""

    command: str  # shell code for the guest's /bin/sh -c
    kernel: str = "test"  # KRWQ_KERNEL: test or debian
    kernel_dir: str = ""  # KRWQ_KERNEL_DIR; "" for the kernel's default
    accel: str = ""  # KRWQ_VM_ACCEL: kvm or tcg; "" to probe
    smp: str = "2"  # KRWQ_VM_SMP: the guest's CPUs
    module: bool = True  # load krwq.ko before COMMAND (not --no-module)
    params: list = dataclasses.field(default_factory=list)  # --param NAME=VALUE
    kmemleak: bool = True  # kmemleak on from boot (not --no-kmemleak)
    scans: str = "1"  # KRWQ_VM_KMEMLEAK: "0" skips the final scans
    adds: list = dataclasses.field(default_factory=list)  # --add HOST[:GUEST]
    timeout: int = 600  # --timeout: seconds before the guest is killed
    link_role: str = ""  # --link: listen, connect, none; "" for no NIC
    link_port: int = 0  # --link's loopback port
    gcov_dir: str = ""  # KRWQ_VM_GCOV: where the gcov counts go
    log: str = os.path.join(LOG_DIR, "last-console.log")  # KRWQ_VM_LOG
    boot_file: str = ""  # KRWQ_BOOT_FILE: make check's table of boots

    def final_scans(self):
        """Whether the run ends with kmemleak's scans."""
        return self.kmemleak and self.scans != "0"


def kernel_build_dir(boot):
    """The build folder of the kernel BOOT boots (scripts/test-kernel's or
    scripts/debian-kernel's unless KRWQ_KERNEL_DIR names one)."""
    k = boot.kernel_dir
    if boot.kernel not in ("test", "debian"):
        die(f"KRWQ_KERNEL={boot.kernel}: want test or debian")
    if not k:
        k = output([os.path.join(ROOT, "scripts", f"{boot.kernel}-kernel")])
    if not os.path.isfile(os.path.join(k, "arch/x86/boot/bzImage")):
        die(f"no bzImage in {k}/arch/x86/boot")
    return k


def output(argv):
    """ARGV's standard output, stripped; its failure is the run's."""
    got = shell.run(argv, stdout=subprocess.PIPE, text=True)
    if got.returncode:
        sys.exit(got.returncode)
    return got.stdout.strip()


def modinfo(field, module):
    """modinfo -F FIELD MODULE's lines; none when it fails."""
    got = subprocess.run(["modinfo", "-F", field, module], stdout=subprocess.PIPE, text=True)
    return got.stdout.splitlines()


def vermagic(module, kdir):
    """(the release MODULE is built for, the one KDIR boots); "" for what
    is unknown."""
    try:
        with open(os.path.join(kdir, "release")) as f:
            want = f.read().strip()
    except FileNotFoundError:
        want = ""
        try:
            with open(os.path.join(kdir, "include/generated/utsrelease.h")) as f:
                m = re.search(r'^#define UTS_RELEASE "(.*)"$', f.read(), re.M)
                want = m.group(1) if m else ""
        except OSError:
            pass
    have = (modinfo("vermagic", module) or [""])[0].split(" ")[0]
    return have, want


def check_vermagic(module, kdir):
    """MODULE is built for the kernel that boots (a plain `make` builds
    against the host's kernel instead)."""
    have, want = vermagic(module, kdir)
    if have != want:
        die(f"{module} is built for {have or '?'}, the VM boots {want or '?'}: "
            'make KDIR="$(scripts/test-kernel)"')


def kernel_config(kdir):
    """KDIR's .config, or the config-* of Debian's package there."""
    config = os.path.join(kdir, ".config")
    if os.path.isfile(config):
        return config
    for top, _, files in os.walk(os.path.join(kdir, "package", "boot")):
        for name in files:
            if name.startswith("config-"):
                return os.path.join(top, name)
    return None


def config_has(kdir, line):
    """Whether KDIR's kernel config has LINE (a regular expression of a
    whole line)."""
    config = kernel_config(kdir)
    if not config:
        return False
    with open(config, errors="replace") as f:
        return re.search(f"^{line}$", f.read(), re.M) is not None


def check_link(boot, kdir):
    """With --link, the kernel has virtio-net, built in or a module
    (Debian's has, the test kernel has not)."""
    if boot.link_role and not config_has(kdir, "CONFIG_VIRTIO_NET=[ym]"):
        die(f"--link: the kernel in {kdir} has no CONFIG_VIRTIO_NET (KRWQ_KERNEL=debian has)")


def pick_helper(boot, kdir):
    """The kmemleak helper (vmhelpers/vm_kmemleak.c) to load first, or "":
    wanted when the kernel has generic KASAN and kmemleak and the final
    scans are on, since kmemleak then scans KASAN's shadow too."""
    helper = os.path.join(ROOT, "krwq_vm_kmemleak.ko")
    if not boot.final_scans() or boot.kernel != "test":
        return ""
    if not (config_has(kdir, "CONFIG_KASAN_GENERIC=y")
            and config_has(kdir, "CONFIG_DEBUG_KMEMLEAK=y")):
        return ""
    if not os.path.isfile(helper):
        log(f"vm: no {helper}: kmemleak's final scans will read KASAN's shadow too (slower)")
        return ""
    # optional: one built for another kernel is left out, not fatal
    have, want = vermagic(helper, kdir)
    if have != want:
        log(f"vm: {helper} is built for another kernel: left out (slower kmemleak scans)")
        return ""
    return helper


def check_params(boot, module):
    """Every --param names a parameter of MODULE: the kernel would only
    note an unknown one and load the module anyway."""
    if not boot.params:
        return
    known = [p.split(":")[0] for p in modinfo("parm", module)]
    for p in boot.params:
        name = p.split("=")[0]
        if name not in known:
            die(f"--param {p}: {module} has no parameter {name} (it has: {' '.join(known)})")


def qemu_argv(boot, accel, kdir, initrd, link=True):
    """QEMU's command line for BOOT, its NIC left out unless LINK.

    tsc=reliable: under TCG the guest's TSC is the host's, monotonic over
    the vCPUs, but the clocksource watchdog, thrown off by the
    emulation's stalls, would swap it for the HPET, whose every read (one
    each gettimeofday()) traps to QEMU; perftest, which fits its cycle
    counts to gettimeofday(), then fails on a loaded host ("r^2 < 0.9").
    initramfs_async=0: pid 1 unpacks the initramfs itself; left to a
    worker, pid 1 sleeps in wait_for_initramfs meanwhile, and on a busy
    host the hung-task detector took that for a task stuck for 30 s.
    """
    nic = ["-nic", "none"]
    if link and boot.link_role:
        backend = "hubport,id=link,hubid=0"
        mac = "52:54:00:4b:52:01"
        if boot.link_role != "none":
            if boot.link_role != "listen":
                mac = "52:54:00:4b:52:02"
            backend = f"socket,id=link,{boot.link_role}=127.0.0.1:{boot.link_port}"
        nic = ["-netdev", backend, "-device", f"virtio-net-pci,netdev=link,mac={mac}"]
    append = ("console=ttyS0 quiet panic=-1 printk.time=1 log_buf_len=4M dummy.numdummies=0"
              " no5lvl tsc=reliable initramfs_async=0")
    if not boot.kmemleak:
        append += " kmemleak=off"
    return ["qemu-system-x86_64", "-accel", accel, "-cpu", "max", "-smp", boot.smp,
            "-m", "2048", "-nographic", "-no-reboot", *nic,
            "-kernel", os.path.join(kdir, "arch/x86/boot/bzImage"), "-initrd", initrd,
            "-append", append]


def pack_root(root, out):
    """ROOT's contents as a gzip'd newc cpio at OUT (rootfs.write_newc),
    each path named from "./"."""
    with open(out, "wb") as f:
        with shell.child(["gzip", "-n", "-1"], stdin=subprocess.PIPE, stdout=f) as gzip:
            rootfs.write_newc(root, ["./" + p for p in rootfs.tree_paths(root)], gzip.stdin)
            gzip.stdin.close()
            if gzip.wait():
                die(f"could not pack {root} into {out}")


def initrd(base, overlay, out):
    """OUT: the base image BASE, then the gzip'd OVERLAY (the kernel
    unpacks one archive after the other, the second over the first)."""
    with open(out, "wb") as f:
        for part in (base, overlay):
            with open(part, "rb") as p:
                shutil.copyfileobj(p, f)


def kvm_works(boot, kdir, base):
    """Whether a KVM guest boots to its /init within 15 s (the probe has
    no NIC, whatever BOOT's --link)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        with open(os.path.join(root, "init"), "w") as f:
            f.write(f"#!/bin/busybox sh\n/bin/busybox echo {markers.KVM_OK}\n"
                    "/bin/busybox reboot -f\n")
        os.chmod(os.path.join(root, "init"), 0o755)
        pack_root(root, os.path.join(tmp, "overlay.cpio.gz"))
        initrd(base, os.path.join(tmp, "overlay.cpio.gz"), os.path.join(tmp, "initrd"))
        argv = qemu_argv(boot, "kvm", kdir, os.path.join(tmp, "initrd"), link=False)
        # shell.run: stopped, timeout(1) still bounds the probe's QEMU
        got = shell.run(["timeout", "-k", "2", "15", *argv], stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        return markers.KVM_OK.encode() in got.stdout


def pick_accel(boot, kdir, base):
    """kvm or tcg: KRWQ_VM_ACCEL, else the verdict of a KVM probe, cached
    for this boot of the host (one probe at a time)."""
    if boot.accel:
        return boot.accel
    folder = os.path.join(paths.cache(), "vm")
    with open("/proc/sys/kernel/random/boot_id") as f:
        cache = os.path.join(folder, "accel-" + f.read().strip())
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isfile(cache):
            verdict = "tcg"
            if os.access("/dev/kvm", os.R_OK | os.W_OK):
                log("vm: probing KVM (a 15 s test boot)")
                if kvm_works(boot, kdir, base):
                    verdict = "kvm"
            for name in os.listdir(folder):
                if name.startswith("accel-"):
                    os.remove(os.path.join(folder, name))
            with open(cache, "w") as f:
                f.write(verdict + "\n")
            log(f"vm: using {verdict} (cached in {cache})")
    with open(cache) as f:
        return f.read().strip()


def guest_path(host, guest):
    """Where the --add of HOST lands in the guest: GUEST ("" for
    /krwq/add/), HOST's name added when it ends in "/", under the merged
    /usr of the base image (/bin/x is /usr/bin/x).

    >>> guest_path("scripts/guest/demo.sh", "")
    '/krwq/add/demo.sh'
    >>> guest_path("build/bench/floors/", "/krwq/")
    '/krwq/floors'
    >>> guest_path("/usr/bin/perf", "/bin/perf")
    '/usr/bin/perf'
    """
    g = guest or "/krwq/add/"
    if not g.startswith("/"):
        die(f"--add {host}:{g}: the guest path must be absolute")
    if g.endswith("/"):
        g += os.path.basename(host.rstrip("/")) or "/"
    if g.startswith(("/bin/", "/sbin/", "/lib/", "/lib64/")):
        g = "/usr" + g
    return g


def add_files(boot, root):
    """The --add paths copied into ROOT, symbolic links followed; a
    folder is merged into one already there."""
    for add in boot.adds:
        host, _, guest = add.partition(":")
        if not os.path.exists(host):
            die(f"--add {host}: no such file or folder")
        to = root + guest_path(host, guest)
        try:
            os.makedirs(os.path.dirname(to), exist_ok=True)
            if os.path.isdir(host):
                shutil.copytree(host, to, copy_function=shutil.copy, dirs_exist_ok=True)
            else:
                shutil.copy(host, to)
        except (OSError, shutil.Error) as e:
            die(f"--add {add}: {e}")


def add_missing_libs(root, base_files):
    """The shared libraries that ROOT's executables need and the base
    image (whose paths BASE_FILES lists) lacks, copied into ROOT."""
    exes = []
    for top, _, files in os.walk(root):
        for name in files:
            path = os.path.join(top, name)
            st = os.lstat(path)
            if name != "init" and stat.S_ISREG(st.st_mode) and st.st_mode & stat.S_IXUSR:
                exes.append(path)
    if not exes:
        return
    with open(base_files, errors="surrogateescape") as f:
        have = set(f.read().splitlines())
    for lib in rootfs.elf_libs(exes):
        rel = lib[1:] if lib.startswith("/") else lib
        if rel.startswith(("bin/", "sbin/", "lib/", "lib64/")):
            rel = "usr/" + rel
        if rel not in have:
            rootfs.copy_to_root(root, lib)
    rootfs.merge_usr(root)


def vm_env(boot, helper):
    """/krwq/vm.env, the run's values for the guest's /init
    (scripts/guest/init.sh): sh assignments, each value quoted.

    >>> print(vm_env(Boot("echo 'hi'", params=["wire=0"]), ""), end="")
    ... # doctest: +ELLIPSIS
    # written by scripts/vm for one boot; read by /init
    KRWQ_LOAD='. /krwq/lib/module.sh && insmod_deps /krwq/krwq.ko wire=0'
    KRWQ_CMD='echo '"'"'hi'"'"''
    KRWQ_KMEMLEAK=1
    KRWQ_HELPER=''
    KRWQ_GCOV=''
    M_BEGIN=@@krwq-vm-begin@@
    ...
    """
    load = ""
    if boot.module:
        # its dependencies first (a modular RDMA core, Debian's; the UDP
        # tunnel): module.sh's insmod_deps, as the bench's boots load it
        load = " ".join([". /krwq/lib/module.sh && insmod_deps /krwq/krwq.ko",
                         *map(shlex.quote, boot.params)])
    values = {"KRWQ_LOAD": load, "KRWQ_CMD": boot.command,
              "KRWQ_KMEMLEAK": "1" if boot.final_scans() else "0",
              "KRWQ_HELPER": GUEST_HELPER if helper else "",
              "KRWQ_GCOV": "1" if boot.gcov_dir else "",
              **markers.guest_names()}
    return "# written by scripts/vm for one boot; read by /init\n" + "".join(
        f"{name}={shlex.quote(value)}\n" for name, value in values.items())


def make_overlay(boot, root, module, helper, base_files):
    """ROOT: /init and its vm.env, the project's modules, programs and
    guest libraries, the --add files and the libraries they need."""
    os.makedirs(os.path.join(root, "krwq", "bin"))
    os.makedirs(os.path.join(root, "krwq", "lib"))
    for name in GUEST_LIBS:
        shutil.copy(os.path.join(ROOT, "scripts", "guest", name), os.path.join(root, "krwq", "lib"))
    if boot.module and not os.path.isfile(module):
        die(f'no {module}: build it (make KDIR="$(scripts/test-kernel)") or pass --no-module')
    shutil.copy(os.path.join(ROOT, "scripts", "guest", "init.sh"), os.path.join(root, "init"))
    os.chmod(os.path.join(root, "init"), 0o755)
    with open(os.path.join(root, "krwq", "vm.env"), "w", errors="surrogateescape") as f:
        f.write(vm_env(boot, helper))
    if boot.module:
        check_params(boot, module)
    if os.path.isfile(module):
        shutil.copy(module, os.path.join(root, "krwq", "krwq.ko"))
    kunit = os.path.join(ROOT, "krwq_kunit.ko")
    if boot.kernel == "test" and os.path.isfile(kunit):
        shutil.copy(kunit, os.path.join(root, "krwq"))
    if helper:
        os.makedirs(os.path.dirname(root + GUEST_HELPER))
        shutil.copy(helper, root + GUEST_HELPER)
    user = os.path.join(ROOT, "build", "user")
    if os.path.isdir(user):
        # under stage.build_user's lock, shared: never a program that a
        # build beside this run is writing
        with open(paths.USER_LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_SH)
            for entry in os.scandir(user):
                if entry.is_file(follow_symlinks=False) and entry.stat().st_mode & stat.S_IXUSR:
                    shutil.copy(entry.path, os.path.join(root, "krwq", "bin"))
    add_files(boot, root)
    add_missing_libs(root, base_files)


def boot_qemu(boot, argv, console_log):
    """ARGV (QEMU) under timeout(1), its console copied to CONSOLE_LOG and
    COMMAND's lines to standard output.  Returns timeout's status (124:
    timed out; 137: QEMU had to be killed) and the CPU seconds of QEMU
    and of the copy.

    -k 5: a QEMU that ignores the timeout's SIGTERM is killed 5 s later.
    --foreground: QEMU stays in our process group, so that a ^C at the
    terminal reaches it too (timeout would otherwise move itself and
    QEMU to a group of their own, out of the terminal's reach).
    The CPU is what the kernel adds up for the children we have waited
    for (timeout, and QEMU, which timeout waits for) and our own time
    meanwhile, which is the console's copy: the boot's cost, nothing
    before or after it.
    """
    before = os.times()
    with open(console_log, "wb") as f:
        # stopped, QEMU goes with us (shell.child)
        with shell.child(["timeout", "--foreground", "-k", "5", str(boot.timeout), *argv],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT) as proc:
            console.Console(f, sys.stdout.buffer).copy(proc.stdout)
            proc.wait()
    after = os.times()
    cpu = sum(after[:4]) - sum(before[:4])
    status = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    return status, cpu


def run(boot):
    """Carry out BOOT; returns scripts/vm's exit status."""
    pkgs.need_pkgs(pkgs.VM_PKGS)
    kdir = kernel_build_dir(boot)
    module = os.path.join(ROOT, "krwq.ko")
    if boot.kernel == "debian" and boot.module:
        module = output([os.path.join(ROOT, "scripts", "debian-kernel"), "module"])
    if boot.module and os.path.isfile(module):
        check_vermagic(module, kdir)
    check_link(boot, kdir)
    helper = pick_helper(boot, kdir)
    base = initramfs.image(kdir)
    accel = pick_accel(boot, kdir, base)

    console_log = os.path.join(LOG_DIR, f"console.{os.getpid()}.log")
    tmp = tempfile.mkdtemp()
    try:
        root = os.path.join(tmp, "root")
        os.mkdir(root)
        base_files = base[:-len(".cpio")] if base.endswith(".cpio") else base
        make_overlay(boot, root, module, helper, base_files + ".files")
        pack_root(root, os.path.join(tmp, "overlay.cpio.gz"))
        initrd(base, os.path.join(tmp, "overlay.cpio.gz"), os.path.join(tmp, "initrd"))

        os.makedirs(LOG_DIR, exist_ok=True)
        argv = qemu_argv(boot, accel, kdir, os.path.join(tmp, "initrd"))
        start = time.monotonic_ns()
        qemu_status, cpu = boot_qemu(boot, argv, console_log)
        seconds = judge.tenths((time.monotonic_ns() - start) // 100_000_000)
        # judged, and its gcov counts taken, from this run's own file,
        # before it becomes KRWQ_VM_LOG, which another run may share
        if boot.gcov_dir:
            judge.save_gcov(console_log, boot.gcov_dir, boot.log)
        status = judge.verdict(console_log, qemu_status, seconds, boot.timeout, boot.log)
        try:
            shutil.move(console_log, boot.log)
        except OSError as e:
            die(f"vm: no console log {boot.log}: {e}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if os.path.exists(console_log):
            os.remove(console_log)
    judge.record_boot(boot, kdir, seconds, status, int(cpu))
    return status
