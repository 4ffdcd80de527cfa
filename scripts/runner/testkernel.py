# SPDX-License-Identifier: GPL-2.0
"""scripts/test-kernel: the test kernel, built once from Debian's
linux-source-6.1 and the checked-in config fragments, cached under
$KRWQ_CACHE by source version and fragment hash (paths.kernel_dir).

A VARIANT merges scripts/test-kernel-VARIANT.config on top of the base
fragment, scripts/test-kernel.config (paths.kernel_fragments).  The build's folder holds the
kernel's objects, its build log, and modules-root/ (modules_install's);
.krwq-built marks it complete.  The source is unpacked once, for every
variant, in paths.kernel_src().
"""

import fcntl
import os
import shutil
import subprocess
import tempfile
import time

from runner import kbuild, paths, pkgs, shell
from runner.shell import die, log

SOURCE_TARBALL = "/usr/src/linux-source-6.1.tar.xz"
BUILT = ".krwq-built"
UNPACKED = ".krwq-unpacked"
# progress on standard error every this many seconds of the build
PROGRESS = 30
USAGE = "usage: scripts/test-kernel [--variant NAME]"


def wanted(frags):
    """The options FRAGS set, the last fragment's word on each, as
    {"CONFIG_X": "y"}.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".config") as a:
    ...     _ = a.write("# c\\nCONFIG_A=y\\nCONFIG_B=n\\nCONFIG_A=m\\n"); a.flush()
    ...     wanted([a.name])
    {'CONFIG_A': 'm', 'CONFIG_B': 'n'}
    """
    want = {}
    for frag in frags:
        with open(frag, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line.startswith("CONFIG_") and "=" in line:
                    option, value = line.split("=", 1)
                    want[option] = value
    return want


def unpack(src):
    """linux-source-6.1's tarball unpacked at SRC, once: the source is
    shared by every variant, and make check builds two at once, so one
    unpacks while the others wait for it."""
    with open(src + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isfile(os.path.join(src, UNPACKED)):
            return
        log(f"unpacking linux-source-6.1 {pkgs.version('linux-source-6.1')}")
        shutil.rmtree(src, ignore_errors=True)
        parent = os.path.dirname(src)
        with tempfile.TemporaryDirectory(prefix="linux-source-6.1.tmp-", dir=parent) as tmp:
            shell.run(["tar", "-C", tmp, "-xf", SOURCE_TARBALL], check=True)
            os.rename(os.path.join(tmp, "linux-source-6.1"), src)
        open(os.path.join(src, UNPACKED), "w").close()


def configure(src, out, frags):
    """OUT's .config: allnoconfig, the fragments merged, olddefconfig;
    every option the fragments ask for must have survived."""
    os.makedirs(out, exist_ok=True)
    quiet = {"stdout": subprocess.DEVNULL}
    shell.run(["make", "-s", "-C", src, f"O={out}", "allnoconfig"], check=True, **quiet)
    shell.run([os.path.join(src, "scripts", "kconfig", "merge_config.sh"), "-m", "-O", out,
               os.path.join(out, ".config"), *frags], check=True, **quiet)
    shell.run(["make", "-s", "-C", src, f"O={out}", "olddefconfig"], check=True, **quiet)
    with open(os.path.join(out, ".config"), encoding="utf-8") as f:
        have = f.read().splitlines()
    set_to = dict(line.split("=", 1) for line in have if line.startswith("CONFIG_") and "=" in line)
    clean = True
    for option, value in wanted(frags).items():
        if value == "n":
            if option in set_to:
                log(f"{option} is set, wanted n")
                clean = False
        elif set_to.get(option) != value:
            log(f"{option}={value} did not stick")
            clean = False
    if not clean:
        die("the config fragment does not apply cleanly")


def compiled(build_log):
    """The objects the build log says were compiled so far."""
    try:
        with open(build_log, encoding="utf-8", errors="replace") as f:
            return sum(line.startswith("  CC") for line in f)
    except FileNotFoundError:
        return 0


def build(src, out, variant):
    """The kernel and its modules built in OUT, progress logged, then
    installed in OUT/modules-root."""
    log(f"building the test kernel ({variant}) in {out}; this takes a while on 2 cores")
    build_log = os.path.join(out, "build.log")
    start = time.monotonic()
    with open(build_log, "wb") as f, \
            shell.child(["make", "-C", src, f"O={out}", f"-j{kbuild.jobs()}", "bzImage",
                         "modules"], stdout=f, stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL) as proc:
        while True:
            try:
                rc = proc.wait(PROGRESS)
                break
            except subprocess.TimeoutExpired:
                took = time.monotonic() - start
                log(f"  ... {took:.0f}s, {compiled(build_log)} objects compiled")
    if rc:
        with open(build_log, encoding="utf-8", errors="replace") as f:
            shell.log_lines(f.read().splitlines()[-40:])
        die(f"kernel build failed; full log in {build_log}")
    modules_root = os.path.join(out, "modules-root")
    shutil.rmtree(modules_root, ignore_errors=True)
    shell.run(["make", "-s", "-C", src, f"O={out}", f"INSTALL_MOD_PATH={modules_root}",
               "modules_install"], check=True, stdout=subprocess.DEVNULL)
    log(f"test kernel built in {time.monotonic() - start:.0f}s")


def kernel(variant):
    """VARIANT's build folder, built when not yet (one builder at a time:
    a second caller waits, then finds it built)."""
    pkgs.need_pkgs(pkgs.KERNEL_BUILD_PKGS)
    out = paths.kernel_dir(variant)
    os.makedirs(paths.cache(), exist_ok=True)
    with open(out + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isfile(os.path.join(out, BUILT)):
            src = paths.kernel_src()
            unpack(src)
            configure(src, out, paths.kernel_fragments(variant))
            build(src, out, variant)
            open(os.path.join(out, BUILT), "w").close()
    return out


def main(args):
    """scripts/test-kernel [--variant NAME]: the build folder's path on
    standard output."""
    # None of a calling make's flags (make check runs `make -s lint`):
    # its -s would leave the build log no "CC" lines to count, and a
    # variable given on its command line would build a kernel that the
    # cache key (the fragments) does not describe.
    for name in ("MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKELEVEL"):
        os.environ.pop(name, None)
    if args == []:
        variant = "default"
    elif len(args) == 2 and args[0] == "--variant":
        variant = args[1]
    else:
        die(USAGE)
    print(kernel(variant), flush=True)
    return 0
