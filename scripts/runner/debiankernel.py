# SPDX-License-Identifier: GPL-2.0
"""scripts/debian-kernel: Debian's own kernel for the VM, fetched once
and cached, laid out like a test-kernel build tree so that scripts/vm
and scripts/initramfs take it unchanged:

  DIR/arch/x86/boot/bzImage           the package's vmlinuz
  DIR/modules-root/lib/modules/REL/   the package's modules that the VM
                                      needs (MODULES, with their
                                      modules.dep closure), depmod'ed
  DIR/package/                        the package, unpacked whole
  DIR/release                         REL

The package is the one linux-image-amd64 points at, for exactly the
version of the installed linux-headers-amd64; its .deb is kept in
$KRWQ_CACHE/debian-debs.  DIR is $KRWQ_CACHE/debian-kernel-VERSION-HASH,
HASH covering the code that lays it out (CODE).
"""

import fcntl
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys

from runner import paths, pkgs, shell
from runner.shell import ROOT, die, log

# What krwq needs from the package's modules: the RDMA core and its
# user-space verbs interface; rdma_ucm, user space's rdma_cm (it brings
# rdma_cm and the IB CM); dummy, the netdevs the guest scripts bind
# devices to, and 8021q for VLANs on them (cm.sh); for NVMe over Fabrics
# (nvmeof.sh) the RDMA host and target, null_blk and configfs; rdma_rxe
# as the sanity peer, with the crc32 it asks the crypto API for;
# virtio_pci and virtio_net, the NIC of a guest linked to another
# (scripts/vm --link, scripts/check-hosts); for SRP (srp.sh) the
# initiator, ib_srpt under LIO with its iblock backstore, and the SCSI
# disk driver; for NFS over RDMA (nfs.sh) the server, the client's NFSv3
# and NFSv4 and RPC over RDMA (rpcrdma); for iSER (iser.sh) LIO's iSCSI
# target with its iSER transport (ib_isert), the crc32c its login asks
# the crypto API for, and the iSER initiator (ib_iser); netem, the
# link's faults of the two-guest stage (hosts.sh); for blktests' srp
# group (scripts/check-blktests) the SCSI generic driver, the SCSI
# device handlers, dm-multipath with its path selectors, IPoIB, the MAD
# interface, scsi_debug and the I/O schedulers it tries.
MODULES = (
    "ib_core", "ib_uverbs", "rdma_ucm", "dummy", "8021q", "nvme_rdma", "nvmet_rdma",
    "null_blk", "configfs", "rdma_rxe", "crc32_generic", "virtio_pci", "virtio_net",
    "ib_srp", "ib_srpt", "target_core_iblock", "sd_mod", "nfsd", "nfsv3", "nfsv4",
    "rpcrdma", "iscsi_target_mod", "ib_isert", "ib_iser", "crc32c_generic", "sch_netem",
    "sg", "scsi_dh_alua", "scsi_dh_emc", "scsi_dh_rdac", "dm_multipath", "dm_queue_length",
    "dm_service_time", "ib_ipoib", "ib_umad", "scsi_debug", "kyber_iosched", "bfq",
)
# Everything else the VM uses (the 8250 serial console, the initramfs,
# devtmpfs, debugfs, tracefs, ACPI clocks) is built into Debian's
# kernel; check_builtins() keeps that true.
BUILTINS = (
    "CONFIG_SERIAL_8250_CONSOLE", "CONFIG_BLK_DEV_INITRD", "CONFIG_RD_GZIP",
    "CONFIG_DEVTMPFS", "CONFIG_DEBUG_FS", "CONFIG_TRACING", "CONFIG_UNIX", "CONFIG_INET",
    "CONFIG_HPET_TIMER", "CONFIG_X86_PM_TIMER",
)
META = "linux-image-amd64"
HEADERS = "linux-headers-amd64"
# the code that lays the tree out, all of it in the tree's hash
CODE = (os.path.join(ROOT, "scripts", "debian-kernel"), __file__)
USAGE = "usage: scripts/debian-kernel [module]"


def output(argv):
    """ARGV's standard output; "" when it failed."""
    got = shell.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return got.stdout if got.returncode == 0 else ""


def field(record, name):
    """The first NAME: field of an apt or dpkg RECORD, or "".

    >>> field("Package: a\\nVersion: 1\\nVersion: 2\\n", "Version")
    '1'
    """
    m = re.search(rf"^{re.escape(name)}: *(.*)$", record, re.MULTILINE)
    return m.group(1).strip() if m else ""


def first_dependency(depends, pattern):
    """The first package of a Depends field DEPENDS whose name matches
    PATTERN, its version constraint off; "" when none does.

    >>> first_dependency("linux-image-6.1.0-57-amd64 (= 6.1.1), x", r"linux-image-[0-9]")
    'linux-image-6.1.0-57-amd64'
    """
    for dep in depends.split(","):
        name = re.split(r"[ (]", dep.strip(), maxsplit=1)[0]
        if re.match(pattern, name):
            return name
    return ""


def image_package(version):
    """The linux-image-N package that linux-image-amd64 VERSION points
    at; apt's lists are brought up to date once when they lack it."""
    def show():
        return output(["apt-cache", "show", f"{META}={version}"])
    record = show()
    if (field(record, "Version") != version and os.geteuid() == 0
            and not os.environ.get("KRWQ_APT_UPDATED")):
        if shell.run(["apt-get", "update", "-q"], stdout=sys.stderr).returncode:
            die("apt-get update failed")
        os.environ["KRWQ_APT_UPDATED"] = "1"
        record = show()
    if field(record, "Version") != version:
        die(f"apt has no {META} {version} to match the installed {HEADERS} {version}; "
            f"if the archive moved on, upgrade: apt-get install --no-install-recommends {HEADERS}")
    pkg = first_dependency(field(record, "Depends"), r"linux-image-[0-9]")
    if not pkg:
        die(f"{META} {version} depends on no linux-image-N package")
    return pkg


def headers_dir():
    """The installed headers tree of linux-headers-amd64."""
    dep = first_dependency(output(["dpkg-query", "-W", "-f=${Depends}", HEADERS]),
                           r"linux-headers-[0-9]")
    if not dep or not os.path.isdir(f"/usr/src/{dep}"):
        die(f"{HEADERS} {pkgs.version(HEADERS)}: no /usr/src/{dep}")
    return f"/usr/src/{dep}"


def check_builtins(config):
    """Every option of BUILTINS is =y in the kernel's CONFIG."""
    with open(config, encoding="utf-8") as f:
        have = set(f.read().splitlines())
    for option in BUILTINS:
        if f"{option}=y" not in have:
            die(f"Debian's kernel has no {option}=y; scripts/debian-kernel needs it")


def download(pkg, version):
    """PKG's .deb at VERSION, fetched once into $KRWQ_CACHE/debian-debs;
    its path."""
    debs = os.path.join(paths.cache(), "debian-debs")
    deb = os.path.join(debs, f"{pkg}_{version}_amd64.deb")
    os.makedirs(debs, exist_ok=True)
    if not os.path.isfile(deb):
        log(f"debian-kernel: downloading {pkg} {version}")
        # as root, apt's _apt sandbox user cannot write to this cache
        sandbox = ["-o", "APT::Sandbox::User=root"] if os.geteuid() == 0 else []
        if shell.run(["apt-get", "download", "-q", *sandbox, f"{pkg}={version}"],
                     cwd=debs, stdout=sys.stderr).returncode:
            die(f"apt-get download {pkg}={version} failed")
        if not os.path.isfile(deb):
            die(f"apt-get download did not make {deb}")
    return deb


def fill(out, pkg, version):
    """OUT laid out from PKG at VERSION."""
    deb = download(pkg, version)
    package = os.path.join(out, "package")
    os.makedirs(package)
    shell.run(["dpkg-deb", "-x", deb, package], check=True)
    orders = glob.glob(os.path.join(package, "lib", "modules", "*", "modules.order"))
    if len(orders) != 1:
        die(f"{pkg}: not one lib/modules/<release> tree")
    rel = os.path.basename(os.path.dirname(orders[0]))
    # the package leaves modules.dep to its postinst
    shell.run(["depmod", "-b", package, rel], check=True)
    check_builtins(os.path.join(package, "boot", f"config-{rel}"))
    os.makedirs(os.path.join(out, "arch", "x86", "boot"))
    os.symlink(f"../../../package/boot/vmlinuz-{rel}",
               os.path.join(out, "arch", "x86", "boot", "bzImage"))

    # the closure of MODULES under the package's own modules.dep
    needed = set()
    for module in MODULES:
        got = shell.run(["modprobe", "-d", package, "-S", rel, "--show-depends", module],
                        stdout=subprocess.PIPE, text=True)
        if got.returncode:
            die(f"{pkg} has no module {module}")
        needed.update(line.split()[1] for line in got.stdout.splitlines()
                      if line.split()[:1] == ["insmod"])
    mods = os.path.join(package, "lib", "modules", rel)
    root = os.path.join(out, "modules-root")
    os.makedirs(os.path.join(root, "lib", "modules", rel))
    for name in ["modules.order", *sorted(os.path.basename(p) for p in
                                          glob.glob(os.path.join(mods, "modules.builtin*")))]:
        shutil.copy(os.path.join(mods, name), os.path.join(root, "lib", "modules", rel))
    for path in sorted(needed):
        inside = os.path.relpath(path, package)
        os.makedirs(os.path.dirname(os.path.join(root, inside)), exist_ok=True)
        shutil.copy(path, os.path.join(root, inside))
    shell.run(["depmod", "-b", root, rel], check=True)
    names = " ".join(os.path.basename(p) for p in sorted(needed))
    log(f"debian-kernel: {rel} with {len(needed)} modules: {names}")
    with open(os.path.join(out, "release"), "w", encoding="utf-8") as f:
        f.write(rel + "\n")
    open(os.path.join(out, ".krwq-built"), "w").close()


def kernel():
    """The laid-out tree, fetched and made once (one fetcher at a time:
    the others wait, then find it done); the trees of older versions of
    this code or of the package go, with the initramfs images made for
    them."""
    pkgs.need_pkgs([HEADERS, "kmod"])
    version = pkgs.version(HEADERS)
    digest = hashlib.sha256()
    for path in CODE:
        with open(path, "rb") as f:
            digest.update(f.read())
    cache = paths.cache()
    out = os.path.join(cache, f"debian-kernel-{version}-{digest.hexdigest()[:12]}")
    os.makedirs(cache, exist_ok=True)
    with open(out + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isfile(os.path.join(out, ".krwq-built")):
            shutil.rmtree(out, ignore_errors=True)
            fill(out, image_package(version), version)
            name = os.path.basename(out)
            for old in glob.glob(os.path.join(cache, "debian-kernel-*")) + glob.glob(
                    os.path.join(cache, "initramfs", "base-debian-kernel-*")):
                if old in (out, out + ".lock") or os.path.basename(old).startswith(
                        f"base-{name}-"):
                    continue
                if os.path.isdir(old) and not os.path.islink(old):
                    shutil.rmtree(old)
                else:
                    os.remove(old)
    return out


def module(kdir):
    """krwq.ko built against linux-headers-amd64 in build/debian-build, a
    copy of the tree kept between runs (the repository root holds the
    test kernel's build); its path."""
    headers = headers_dir()
    with open(os.path.join(kdir, "release"), encoding="utf-8") as f:
        rel = f.read().strip()
    if os.path.basename(headers) != f"linux-headers-{rel}":
        die(f"headers {headers} are not for the image's release {rel}")
    src = os.path.join(ROOT, "build", "debian-build")
    if not paths.copy_tree(src, fresh=False):
        die(f"could not copy the tree to {src}")
    if shell.run(["make", "-s", "-C", headers, f"M={src}", "modules"],
                 stdout=sys.stderr).returncode:
        die(f"krwq.ko does not build against {headers}")
    return os.path.join(src, "krwq.ko")


def main(args):
    """scripts/debian-kernel [module]: the tree's path, or with module
    krwq.ko's, on standard output."""
    if args == []:
        print(kernel(), flush=True)
    elif args == ["module"]:
        print(module(kernel()), flush=True)
    else:
        die(USAGE)
    return 0
