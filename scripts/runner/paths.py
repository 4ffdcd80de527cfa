# SPDX-License-Identifier: GPL-2.0
"""The project's places: its cache folder, the test kernel's source and
build folders in it, a copy of the source tree; and krwq's version."""

import hashlib
import os
import re
import shutil
import subprocess

from runner import pkgs
from runner.shell import ROOT, die, log

# the Debian package of the test kernel's source
KERNEL_SOURCE_PKG = "linux-source-6.1"
# held while user/'s programs build (stage.build_user), shared while a
# boot copies them
USER_LOCK = os.path.join(ROOT, "build", ".user.lock")


def cache():
    """KRWQ_CACHE: where the kernels, images and downloads are kept
    (default: krwq/ in the user's cache folder)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("KRWQ_CACHE") or os.path.join(base, "krwq")


def kernel_src():
    """Where scripts/test-kernel unpacks Debian's linux-source-6.1 (for
    its kunit.py, checkpatch.pl and kernel-doc too).  With the package
    missing, dpkg-query says so and the folder has no version."""
    return os.path.join(cache(), "linux-source-" + (pkgs.version(KERNEL_SOURCE_PKG, quiet=False)
                                                    or ""))


def kernel_dir(variant=""):
    """The cache folder of the test kernel for the installed source
    version and the config fragment(s) of VARIANT ("" or default: the
    one of scripts/test-kernel.config; else that and the one of
    scripts/test-kernel-VARIANT.config).  Only a name: it builds
    nothing."""
    variant = variant or "default"
    ver = pkgs.version(KERNEL_SOURCE_PKG)
    if ver is None:
        die(f"{KERNEL_SOURCE_PKG} is not installed")
    digest = hashlib.sha256()
    for frag in kernel_fragments(variant):
        try:
            with open(frag, "rb") as f:
                digest.update(f.read())
        except OSError as e:
            die(f"kernel_dir: {e}")
    return os.path.join(cache(), f"kernel-{ver}-{variant}-{digest.hexdigest()[:12]}")


def kernel_fragments(variant=""):
    """The config fragments of the test kernel's VARIANT, base first:
    scripts/test-kernel.config, then for a VARIANT other than ""
    or default scripts/test-kernel-VARIANT.config on top."""
    frags = [os.path.join(ROOT, "scripts", "test-kernel.config")]
    if variant and variant != "default":
        frags.append(os.path.join(ROOT, "scripts", f"test-kernel-{variant}.config"))
    return frags


def krwq_version():
    """PACKAGE_VERSION of dkms.conf, the version's one definition
    (Kbuild makes it MODULE_VERSION)."""
    with open(os.path.join(ROOT, "dkms.conf")) as f:
        return "\n".join(re.findall(r'^PACKAGE_VERSION="([^"\n]*)"$', f.read(), re.M))


def tree_files():
    """The tree's files, relative to ROOT: those git tracks (a tracked
    file deleted but not committed still named) and the untracked ones
    it does not ignore."""
    listed = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], stdout=subprocess.PIPE, check=True).stdout
    return [name for name in os.fsdecode(listed).split("\0") if name]


def copy_tree(to, fresh=True):
    """A copy at TO of the tracked sources and of the untracked ones git
    does not ignore, links kept links, modes and times kept: FRESH, TO
    is emptied first; else what TO holds is updated, its builds kept.  A
    tracked file that is gone is reported, the rest still copied, and
    the result is False."""
    if fresh:
        shutil.rmtree(to, ignore_errors=True)
    os.makedirs(to, exist_ok=True)
    whole = True
    for name in tree_files():
        src, dst = os.path.join(ROOT, name), os.path.join(to, name)
        if not os.path.lexists(src):
            log(f"copy_tree: no {src}")
            whole = False
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.isdir(src) and not os.path.islink(src):
            os.makedirs(dst, exist_ok=True)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)
    return whole
