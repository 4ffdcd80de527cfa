# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared helpers for the krwq scripts; sourced, never run.

KRWQ_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() { echo "krwq: $*" >&2; exit 1; }
log() { echo "krwq: $*" >&2; }

# krwq_py COMMAND ARG...: the helpers of scripts/runner/__main__.py, where
# the wrappers of this file (need_pkgs, copy_tree, copy_to_root,
# merge_usr, elf_libs, kernel_src, kernel_dir) and the
# values below have their one definition, in Python.  -B: no __pycache__
# in the tree.
krwq_py() {
	PYTHONPATH="$KRWQ_ROOT/scripts" python3 -B -m runner "$@"
}

# python3 runs those helpers, need_pkgs among them, so it is the one
# package need_pkgs cannot bring: without it, root installs it here
# (no lock: without python3 no other need_pkgs runs), anyone else is
# told need_pkgs' apt-get line.
if ! command -v python3 > /dev/null; then
	[ "$(id -u)" -eq 0 ] ||
		die "missing packages; run: sudo apt-get install -y --no-install-recommends python3"
	log "installing python3"
	if [ -z "${KRWQ_APT_UPDATED:-}" ]; then
		apt-get update -q >&2 || die "apt-get update failed"
		export KRWQ_APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3 >&2 ||
		die "apt-get install python3 failed"
fi

# KRWQ_CACHE, the cache folder (runner/paths.py), and the packages to
# build the test kernel, to run the VM, for scripts/lint and for
# scripts/check-debian, for need_pkgs (runner/pkgs.py)
_krwq_values=$(krwq_py values KRWQ_CACHE KERNEL_BUILD_PKGS VM_PKGS LINT_PKGS DEBIAN_CHECK_PKGS) ||
	die "scripts/runner gave no values"
# shellcheck disable=SC2034 # used by the scripts that source this file
{
	IFS= read -r KRWQ_CACHE
	read -r -a KERNEL_BUILD_PKGS
	read -r -a VM_PKGS
	read -r -a LINT_PKGS
	read -r -a DEBIAN_CHECK_PKGS
} <<< "$_krwq_values"
unset _krwq_values

# ok WHAT, bad WHAT: one passed or failed check of a stage script, counted
# in the caller's pass and fail (which it prints as "PASSED FAILED" last)
ok() { log "ok: $*"; pass=$((pass + 1)); }
bad() { log "FAILED: $*"; fail=$((fail + 1)); }

# need_pkgs PKG...: install missing Debian packages when root, else print
# the exact apt-get line and fail (runner/pkgs.py); KRWQ_APT_UPDATED, set
# when it ran apt-get update, is exported here, for the next ones
need_pkgs() {
	local updated
	updated=$(krwq_py need_pkgs "$@") || exit
	[ -z "$updated" ] || export KRWQ_APT_UPDATED="$updated"
}

# copy_tree DIR: a fresh copy of the tracked sources (and the untracked
# ones git does not ignore) in DIR (runner/paths.py)
copy_tree() { krwq_py copy_tree "$@"; }

# kernel_src: where scripts/test-kernel unpacks Debian's linux-source-6.1
# (runner/paths.py)
kernel_src() { krwq_py kernel_src; }

# kernel_dir [VARIANT]: the cache folder of the test kernel for the current
# source version and config fragment(s).  Prints the path; builds nothing
# (runner/paths.py).
kernel_dir() { krwq_py kernel_dir "$@" || exit; }

# copy_to_root ROOT PATH...: copy each host file PATH to ROOT/PATH; a
# symlink is copied as a symlink, followed by what it points to
# (runner/rootfs.py)
copy_to_root() { krwq_py copy_to_root "$@" || exit; }

# merge_usr ROOT: the /bin, /sbin, /lib and /lib64 that copy_to_root may
# have made as real folders in ROOT, moved under ROOT/usr (runner/rootfs.py)
merge_usr() { krwq_py merge_usr "$@"; }

# elf_libs FILE...: every shared library (and the loader) ldd names for
# the dynamic ELF files among FILEs, one a line; fails on a missing one
# (runner/rootfs.py)
elf_libs() { krwq_py elf_libs "$@"; }
