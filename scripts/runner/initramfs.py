# SPDX-License-Identifier: GPL-2.0
"""scripts/initramfs: the test VM's base initramfs, built once and cached.

The image is an uncompressed newc cpio holding a static busybox, dash as
/bin/sh (the busybox shell would run its own applets instead of kmod's
or iproute2's tools, whatever PATH says), rdma-core's user space
(libibverbs with the providers of krwq, rdma_rxe and siw, librdmacm,
ibverbs-utils, rdmacm-utils, perftest), iproute2's ip, rdma and tc,
kmod, nvme-cli's nvme and fio (for NVMe over Fabrics; only those two
programs of their packages), tcpdump (packet captures of RoCE traffic
between namespaces), UCX's ucx_perftest and libraries, libfabric's
fi_pingpong and fi_info, Open MPI's launcher with its and PMIx's
plug-ins, the traditional nc, every shared library those need (and
libgcc_s, which glibc loads at run time), and the test kernel's
installed modules.  It has no /init: scripts/vm appends a small per-run
archive with /init and the project's files.

Uncompressed, because under TCG the guest's own inflate of the gzip'd
image (39 MB, 101 MB unpacked) took 10-20 s of every boot, and on a
loaded host it alone set off the 30 s hung-task report in
wait_for_initramfs.

The image is $KRWQ_CACHE/initramfs/base-KERNEL-HASH.cpio, KERNEL being
the kernel folder's name and HASH covering the code that decides what
the image holds (CODE), the versions of the packages its files are
picked from and the listing of the kernel's modules tree.  Beside it,
.pkgs lists the packages its files came from (a change of their
versions rebuilds it) and .files the image's paths.  Building one
removes the older images of the same KERNEL.
"""

import fcntl
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile

from runner import paths, pkgs, rootfs, shell
from runner.shell import ROOT, die, log

# The files taken by name: (package, regular expression over the paths
# dpkg lists for it), in the order they are picked.
PICKS = (
    ("busybox-static", r"/bin/busybox$"),
    ("dash", r"/bin/(dash|sh)$"),
    ("ibverbs-utils", r"/s?bin/[^/]+$"),
    ("rdmacm-utils", r"/s?bin/[^/]+$"),
    ("perftest", r"/s?bin/[^/]+$"),
    ("iproute2", r"/s?bin/(ip|rdma|tc)$"),
    ("tcpdump", r"/s?bin/tcpdump$"),
    ("kmod", r"/s?bin/[^/]+$"),
    ("nvme-cli", r"/s?bin/nvme$"),
    ("fio", r"/bin/fio$"),
    ("libibverbs1", r"\.so[.0-9]*$"),
    ("librdmacm1", r"\.so[.0-9]*$"),
    # the providers of the guests' devices only: libibverbs loads every
    # provider /etc/libibverbs.d names in each process that opens a
    # device, and under TCG the other fourteen cost about 0.35 s a process
    # (ibv_devinfo 0.64 s with all seventeen, 0.28 s with these three)
    ("ibverbs-providers", r"/(lib)?(ipathverbs|rxe|siw)(-rdmav[0-9]+\.so|\.driver)$"),
    # no program links libgcc_s, but glibc dlopen()s libgcc_s.so.1 to
    # unwind a thread in pthread_exit() and pthread_cancel() (rping's
    # threads do both; without it rping aborts with "libgcc_s.so.1 must
    # be installed for pthread_exit to work")
    ("libgcc-s1", r"/libgcc_s\.so\.1$"),
    # NFS over RDMA (scripts/guest/nfs.sh): the server's daemons, the
    # client's mount helper, the portmapper for NFSv3, and the tables
    # libtirpc and they read
    ("nfs-kernel-server", r"/sbin/(rpc\.nfsd|rpc\.mountd|exportfs)$"),
    ("nfs-common", r"/sbin/(mount|umount)\.nfs4?$"),
    ("rpcbind", r"/sbin/rpcbind$"),
    ("libtirpc-common", r"^/etc/netconfig$"),
    ("netbase", r"^/etc/(rpc|services|protocols)$"),
    # UCX (scripts/guest/clients.sh): ucx_perftest, and the transports'
    # plug-ins, which libuct loads by name from its ucx/ folder
    ("ucx-utils", r"/bin/ucx_perftest$"),
    ("libucx0", r"\.so[.0-9]*$"),
    # libfabric and Open MPI (scripts/guest/middleware.sh): the tests'
    # programs, the MCA and PMIx plug-ins that Open MPI and PMIx load by
    # name, and their parameter files and help texts (what an error
    # message of theirs is made of)
    ("libfabric-bin", r"/bin/fi_(pingpong|info)$"),
    ("openmpi-bin", r"(/bin/(orterun|orted)|^/etc/openmpi/.*)$"),
    ("libopenmpi3", r"\.so[.0-9]*$"),
    ("libpmix2", r"(\.so[.0-9]*|\.txt|\.conf)$"),
    ("openmpi-common", r"/help-[^/]*\.txt$"),
    # a plain TCP program, dynamically linked (busybox's nc is static, so
    # LD_PRELOAD would not reach it), for librspreload; OpenBSD's nc
    # fails there on any device (rsockets refuse its SO_REUSEPORT, and
    # its accept() then fails)
    ("netcat-traditional", r"/bin/nc\.traditional$"),
    # iSER (scripts/guest/iser.sh): open-iscsi's daemon and tool
    ("open-iscsi", r"/sbin/(iscsid|iscsiadm)$"),
    ("open-iscsi", r"^/etc/iscsi/iscsid\.conf$"),
)
# The packages whose files are picked by name.  The libraries the picked
# programs link against come from whatever packages ldd leads to; the
# image's .pkgs records those too.
SRC_PKGS = tuple(dict.fromkeys(pkg for pkg, _ in PICKS))

# The code that decides what the image holds, all of it in the image's
# hash: the entry point, this module and the runner's modules it uses.
CODE = (os.path.join(ROOT, "scripts", "initramfs"), __file__, paths.__file__, pkgs.__file__,
        rootfs.__file__, shell.__file__)

USAGE = "usage: scripts/initramfs KERNEL_DIR"

# the image's users and groups, and its name service's tables
PASSWD = "root:x:0:0:root:/root:/bin/sh\nkrwq:x:1000:1000:krwq test user:/home/krwq:/bin/sh\n"
GROUP = "root:x:0:\nkrwq:x:1000:\n"
HOSTS = "127.0.0.1\tlocalhost krwq-vm\n::1\t\tlocalhost ip6-localhost\n"
NSSWITCH = "passwd: files\ngroup: files\nhosts: files\n"


def modules_dir(kdir):
    """The installed modules tree of the kernel built in KDIR."""
    top = os.path.join(kdir, "modules-root", "lib", "modules")
    deps = sorted(glob.glob(os.path.join(glob.escape(top), "*", "modules.dep")))
    if not deps or not os.path.isfile(deps[0]):
        die(f"no {top}/<release>/modules.dep; was the kernel built by scripts/test-kernel?")
    if len(deps) > 1:
        die(f"more than one module tree under {top}")
    return os.path.dirname(deps[0])


def tree_listing(top):
    """Each path under TOP (TOP too, as "."), with its size, time and
    link target, one a line in byte order: what changes when the tree
    does."""
    lines = []
    for rel in [".", *rootfs.tree_paths(top)]:
        path = os.path.join(top, rel)
        st = os.lstat(path)
        target = os.readlink(path) if os.path.islink(path) else ""
        lines.append(os.fsencode(f"{rel} {st.st_size} {st.st_mtime_ns} {target}\n"))
    return b"".join(lines)


def cache_key(mods):
    """The image's hash: of CODE, the picked packages' versions and the
    listing of the kernel's modules tree MODS."""
    digest = hashlib.sha256()
    for path in CODE:
        with open(path, "rb") as f:
            digest.update(f.read())
    versions = pkgs.versions(SRC_PKGS)
    if versions is None:
        die(f"initramfs: not all of {' '.join(SRC_PKGS)} are installed")
    digest.update("".join(line + "\n" for line in versions).encode())
    digest.update(tree_listing(mods))
    return digest.hexdigest()[:16]


def pkg_paths(pkg, regex):
    """The files (not folders; links too) of PKG whose path REGEX
    matches; none matching at all ends the run."""
    got = subprocess.run(["dpkg", "-L", pkg], stdout=subprocess.PIPE, text=True,
                         errors="surrogateescape")
    if got.returncode:
        die(f"initramfs: dpkg -L {pkg} failed")
    matched = [p for p in got.stdout.splitlines() if re.search(regex, p)]
    if not matched:
        die(f"initramfs: no file of {pkg} matches {regex}")
    return [p for p in matched if os.path.islink(p) or os.path.isfile(p)]


def pick_files():
    """The files taken by name from the packages (PICKS), in order."""
    return [p for pkg, regex in PICKS for p in pkg_paths(pkg, regex)]


def owner_pkgs(files):
    """The lines "PACKAGE VERSION" of every package owning FILES, sorted,
    each once (dpkg is asked about the path, where it leads, and its
    alias in the merged /usr, since it knows a file by the path its
    package ships it at)."""
    asked = []
    for p in files:
        asked += [p, os.path.realpath(p), p[len("/usr"):] if p.startswith("/usr/") else "/usr" + p]
    got = subprocess.run(["dpkg", "-S", *asked], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, errors="surrogateescape")
    owners = set()
    for line in got.stdout.splitlines():
        if not line.startswith("diversion"):
            owners.update(line.split(": ", 1)[0].split(", "))
    owners.discard("")
    lines = pkgs.versions(sorted(owners))
    if lines is None:
        die("initramfs: dpkg-query knows not every package the files came from")
    return sorted(set(lines))


def make_skeleton(root):
    """ROOT made a merged-/usr root with users, hosts, /tmp and homes."""
    for d in rootfs.MERGED:
        os.makedirs(os.path.join(root, "usr", d))
    for d in ("dev", "proc", "sys", "run", "tmp", "root", "home/krwq", "etc", "mnt", "var"):
        os.makedirs(os.path.join(root, d))
    for d in rootfs.MERGED:
        os.symlink(f"usr/{d}", os.path.join(root, d))
    os.symlink("../run", os.path.join(root, "var", "run"))
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    os.chmod(os.path.join(root, "root"), 0o700)
    for name, text in (("passwd", PASSWD), ("group", GROUP), ("hostname", "krwq-vm\n"),
                       ("hosts", HOSTS), ("nsswitch.conf", NSSWITCH)):
        with open(os.path.join(root, "etc", name), "w") as f:
            f.write(text)


def fill_root(root, mods):
    """Every file of the image put into ROOT, the kernel's modules MODS
    last; returns the lines "PACKAGE VERSION" of the packages they came
    from."""
    make_skeleton(root)
    picked = pick_files()
    if not picked:
        die(f"no files found in {' '.join(SRC_PKGS)}")
    log(f"initramfs: {len(picked)} files from {' '.join(SRC_PKGS)}")
    for p in picked:
        rootfs.copy_to_root(root, p)

    log("initramfs: resolving shared libraries")
    libs = rootfs.elf_libs(picked)
    for p in libs:
        rootfs.copy_to_root(root, p)
    log(f"initramfs: {len(libs)} shared libraries")

    release = os.path.basename(mods)
    copied = os.path.join(root, "lib", "modules", release)
    shutil.copytree(mods, copied, symlinks=True)
    for link in ("build", "source"):  # to the kernel's build folder
        if os.path.lexists(os.path.join(copied, link)):
            os.remove(os.path.join(copied, link))
    log(f"initramfs: modules of {release}")
    return owner_pkgs(picked + libs)


def build_image(mods, out):
    """The image built at OUT, with its .pkgs and .files beside it; what a
    build stopped half-way (an error, a signal) leaves is removed."""
    base = out[:-len(".cpio")]
    root = tempfile.mkdtemp(prefix=os.path.basename(base) + ".root.", dir=os.path.dirname(out))
    try:
        with open(root + ".pkgs", "w") as f:
            f.write("".join(line + "\n" for line in fill_root(root, mods)))
        du = subprocess.run(["du", "-sk", root], stdout=subprocess.PIPE, text=True).stdout
        log(f"initramfs: packing {du.split()[0]} KiB")
        names = rootfs.tree_paths(root)
        with open(root + ".files", "wb") as f:
            f.write(b"".join(os.fsencode(n) + b"\n" for n in names))
        with open(root + ".cpio", "wb") as f:
            rootfs.write_newc(root, names, f)
        os.rename(root + ".pkgs", base + ".pkgs")
        os.rename(root + ".files", base + ".files")
        os.rename(root + ".cpio", out)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        for left in glob.glob(glob.escape(root) + ".*"):
            os.remove(left)
    log(f"initramfs: {out} ({os.path.getsize(out) // 1024} KiB)")


def is_fresh(out):
    """Whether the image OUT exists and the packages it took files from
    still have the versions it was built with."""
    base = out[:-len(".cpio")]
    if not all(os.path.isfile(p) for p in (out, base + ".pkgs", base + ".files")):
        return False
    with open(base + ".pkgs") as f:
        lines = f.read().splitlines()
    names = [line.split(" ")[0] for line in lines]
    return bool(names) and pkgs.versions(names) == lines


def prune(prefix, keep):
    """The images PREFIX* (and their .pkgs and .files) other than KEEP
    removed."""
    for image in glob.glob(glob.escape(prefix) + "*.cpio") + glob.glob(glob.escape(prefix)
                                                                        + "*.cpio.gz"):
        if image != keep and os.path.isfile(image):
            base = image[:image.rindex(".cpio")]
            for f in (image, base + ".pkgs", base + ".files"):
                if os.path.exists(f):
                    os.remove(f)


def image(kdir):
    """The path of the base image for the kernel built in KDIR, built
    first unless a fresh one is cached (one builder at a time: the others
    wait, then find it built)."""
    folder = os.path.join(paths.cache(), "initramfs")
    os.makedirs(folder, exist_ok=True)
    prefix = os.path.join(folder, f"base-{os.path.basename(kdir)}-")
    mods = modules_dir(kdir)
    out = prefix + cache_key(mods) + ".cpio"
    with open(os.path.join(folder, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_fresh(out):
            log(f"initramfs: building {out}")
            build_image(mods, out)
            prune(prefix, out)
    return out


def main(argv):
    """scripts/initramfs ARGV...: the image's path on standard output,
    progress on standard error; returns the exit status."""
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 1
    if not os.path.isdir(argv[0]):
        die(f"no kernel dir {argv[0]}")
    kdir = os.path.abspath(argv[0])
    pkgs.need_pkgs(pkgs.VM_PKGS)
    print(image(kdir), flush=True)
    return 0
