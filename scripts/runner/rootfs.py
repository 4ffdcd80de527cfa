# SPDX-License-Identifier: GPL-2.0
"""A guest's root folder made of the host's files: files copied in at
their own paths, symbolic links with what they point to, the shared
libraries ELF programs need, a /usr-merged layout, and the folder packed
as a newc cpio, the initramfs format.

scripts/initramfs builds the base image with these, scripts/vm the
per-run overlay, scripts/pyverbs-root and scripts/check-blktests the
folders they add to their boots.
"""

import os
import shutil
import stat
import subprocess

from runner import shell
from runner.shell import die, log

# the top folders a merged /usr holds under usr/ (the image's /bin, /sbin,
# /lib and /lib64 are links there)
MERGED = ("bin", "sbin", "lib", "lib64")


def copy_to_root(root, path):
    """Host file PATH (absolute) copied to ROOT/PATH with its mode and
    times, unless something is there already; a symbolic link is copied
    as a link, followed by what it points to.  A PATH that does not exist
    (or a link to nothing) ends the run.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as host, tempfile.TemporaryDirectory() as root:
    ...     lib = host + "/lib"
    ...     os.mkdir(lib)
    ...     open(lib + "/libx.so.1.2", "w").close()
    ...     os.symlink("../lib/./libx.so.1.2", lib + "/libx.so.1")
    ...     copy_to_root(root, lib + "/libx.so.1")
    ...     os.readlink(root + lib + "/libx.so.1"), os.path.isfile(root + lib + "/libx.so.1.2")
    ('../lib/./libx.so.1.2', True)
    """
    to = root + path
    while True:
        if os.path.lexists(to):
            return
        if not os.path.exists(path):
            die(f"{path} does not exist")
        os.makedirs(os.path.dirname(to), exist_ok=True)
        if not os.path.islink(path):
            shutil.copyfile(path, to)
            st = os.stat(path)
            os.chmod(to, stat.S_IMODE(st.st_mode))
            os.utime(to, ns=(st.st_atime_ns, st.st_mtime_ns))
            return
        target = os.readlink(path)
        os.symlink(target, to)
        # the target, its ".." taken as written, not through links
        path = os.path.normpath(os.path.join(os.path.dirname(path), target))
        to = root + path


def merge_into(src, dst):
    """The files, links and folders of SRC copied into the folder DST
    (made if need be), as cp -a does: modes, times and links kept, a
    folder merged with one already there, anything else replaced."""
    os.makedirs(dst, exist_ok=True)
    for entry in os.scandir(src):
        to = os.path.join(dst, entry.name)
        if entry.is_dir(follow_symlinks=False):
            if os.path.lexists(to) and not os.path.isdir(to):
                os.remove(to)
            merge_into(entry.path, to)
            continue
        if os.path.lexists(to):
            os.remove(to)
        shutil.copy2(entry.path, to, follow_symlinks=False)
    shutil.copystat(src, dst)


def merge_usr(root):
    """The /bin, /sbin, /lib and /lib64 that copy_to_root may have made
    as real folders in ROOT, moved under ROOT/usr (the image's /usr is
    merged: its /lib and friends are links there).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     copy_to_root(root, "/lib64/ld-linux-x86-64.so.2")
    ...     merge_usr(root)
    ...     sorted(os.listdir(root)), os.path.lexists(root + "/usr/lib64/ld-linux-x86-64.so.2")
    (['usr'], True)
    """
    for d in MERGED:
        top = os.path.join(root, d)
        if os.path.isdir(top) and not os.path.islink(top):
            merge_into(top, os.path.join(root, "usr", d))
            shutil.rmtree(top)


def is_elf(path):
    """Whether PATH is a regular file (links followed) that starts as an
    ELF file does."""
    if not os.path.isfile(path):
        return False
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def ldd_paths(text):
    """The paths of the libraries and the loader in ldd's output TEXT, and
    the names of the libraries it could not find.

    >>> ldd_paths("\\tlinux-vdso.so.1 (0x00007ffd)\\n"
    ...           "\\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2b)\\n"
    ...           "\\tlibgone.so.1 => not found\\n"
    ...           "\\t/lib64/ld-linux-x86-64.so.2 (0x00007f2c)\\n")
    (['/lib/x86_64-linux-gnu/libc.so.6', '/lib64/ld-linux-x86-64.so.2'], ['libgone.so.1'])
    """
    found, missing = [], []
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 3 and w[1] == "=>" and w[2] == "not":
            missing.append(w[0])
        elif len(w) >= 3 and w[1] == "=>" and w[2].startswith("/"):
            found.append(w[2])
        elif w and w[0].startswith("/"):
            found.append(w[0])
    return found, missing


def elf_libs(files):
    """Every shared library (and the loader) ldd names for the dynamic ELF
    files among FILES, sorted, each once.  A library ldd cannot find ends
    the run, named with the first file that lacks one.

    >>> libs = elf_libs(["/usr/bin/ls", "/etc/hostname"])
    >>> "/lib64/ld-linux-x86-64.so.2" in libs, len(libs) == len(set(libs))
    (True, True)
    """
    libs = set()
    for f in files:
        if not is_elf(f):
            continue
        got = subprocess.run(["ldd", f], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        found, missing = ldd_paths(os.fsdecode(got.stdout))
        if missing:
            log(f"{f}: {missing[0]} not found")
            die("unresolved shared libraries")
        libs.update(found)
    return sorted(libs, key=os.fsencode)


def tree_paths(root):
    """The paths under ROOT, relative to it, links not followed, in the
    byte order of their names (an image's members in a fixed order: the
    same files make the same archive)."""
    paths = []
    for top, dirs, files in os.walk(root):
        rel = os.path.relpath(top, root)
        for name in dirs + files:
            paths.append(name if rel == "." else os.path.join(rel, name))
    return sorted(paths, key=os.fsencode)


def write_newc(root, paths, out):
    """PATHS (under ROOT, as they are to be named in the archive) packed
    into the open file OUT as a newc cpio, every member owned by root; a
    cpio that fails ends the run."""
    listing = b"".join(os.fsencode(p) + b"\n" for p in paths)
    if shell.run(["cpio", "--quiet", "-o", "-H", "newc", "-R", "0:0"], cwd=root,
                 input=listing, stdout=out).returncode:
        die(f"could not pack {root}")
