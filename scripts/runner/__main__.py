# SPDX-License-Identifier: GPL-2.0
"""The runner's helpers for the bash scripts: scripts/lib.sh's wrappers
call them here, so that each has one definition, in Python.

  PYTHONPATH=scripts python3 -B -m runner COMMAND [ARG...]

(-B: no __pycache__ in the tree.)

  values NAME...          each value on a line: KRWQ_CACHE, or a package
                          list of pkgs.py (KERNEL_BUILD_PKGS, VM_PKGS,
                          LINT_PKGS, DEBIAN_CHECK_PKGS), words split by
                          spaces
  need_pkgs PKG...        pkgs.need_pkgs; then prints KRWQ_APT_UPDATED,
                          for the bash caller to export (a child cannot
                          set its parent's environment)
  copy_tree DIR           paths.copy_tree
  copy_to_root ROOT PATH...  rootfs.copy_to_root ROOT PATH, for each PATH
  merge_usr ROOT          rootfs.merge_usr
  elf_libs FILE...        rootfs.elf_libs, one a line
  kernel_src              paths.kernel_src
  kernel_dir [VARIANT]    paths.kernel_dir

A failure is status 1 with the reason on standard error, as lib.sh's die.
"""

import os
import sys

from runner import paths, pkgs, rootfs, shell
from runner.shell import die


def say(lines):
    """LINES on standard output, one a line, undecodable bytes as they
    came."""
    sys.stdout.buffer.write(b"".join(os.fsencode(line) + b"\n" for line in lines))
    sys.stdout.flush()


def value(name):
    """What values prints for NAME."""
    if name == "KRWQ_CACHE":
        return paths.cache()
    if name in pkgs.LISTS:
        return " ".join(pkgs.LISTS[name])
    die(f"runner: no value {name}")


def main(argv):
    """COMMAND ARG... (ARGV); returns the exit status."""
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    if command == "values":
        say(value(name) for name in args)
    elif command == "need_pkgs":
        pkgs.need_pkgs(args)
        say([os.environ.get("KRWQ_APT_UPDATED", "")])
    elif command == "copy_tree" and len(args) == 1:
        return 0 if paths.copy_tree(args[0]) else 1
    elif command == "copy_to_root" and args:
        for path in args[1:]:
            rootfs.copy_to_root(args[0], path)
    elif command == "merge_usr" and len(args) == 1:
        rootfs.merge_usr(args[0])
    elif command == "elf_libs":
        say(rootfs.elf_libs(args))
    elif command == "kernel_src" and not args:
        say([paths.kernel_src()])
    elif command == "kernel_dir" and len(args) <= 1:
        say([paths.kernel_dir(*args)])
    else:
        sys.stderr.write(__doc__)
        die(f"runner: no such command: {' '.join(argv)}")
    return 0


if __name__ == "__main__":
    sys.exit(shell.entry(main))
