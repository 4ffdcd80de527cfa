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

# build_user: user/'s programs built, one build at a time (two stages of
# make check may run side by side; both need them)
build_user() {
	mkdir -p "$KRWQ_ROOT/build"
	flock "$KRWQ_ROOT/build/.user.lock" make -s -C "$KRWQ_ROOT/user" >&2
}

# dose NAME COUNT: add COUNT to the figure NAME of make check's dose
# report (the file scripts/check names in KRWQ_DOSE_FILE; nothing outside
# make check).
dose() {
	[ -n "${KRWQ_DOSE_FILE:-}" ] && echo "$1 $2" >> "$KRWQ_DOSE_FILE"
	return 0
}

# The kernel's complaints, as an extended regular expression over its log
# lines: any of them fails a VM run (scripts/vm: scripts/runner/splats.py
# reads it from here) and the race stage (scripts/check-race, where
# KCSAN's own reports are sorted apart first).  kmemleak's leak reports
# are read from the runner's own scan.  It goes to awk through -v, which
# reads backslash escapes, and to Python's re: keep it words joined by
# "|", with no backslash nor any other operator.
KRWQ_SPLATS='BUG:|WARNING:|Oops|KASAN|UBSAN|general protection fault'
KRWQ_SPLATS+='|possible circular locking dependency|possible recursive locking'
KRWQ_SPLATS+='|inconsistent lock state|suspicious RCU usage|lock held when returning'
KRWQ_SPLATS+='|bad unlock balance|DEBUG_LOCKS_WARN_ON|Kernel panic'
KRWQ_SPLATS+='|blocked for more than|soft lockup|self-detected stall|rcu: INFO'
# kmemleak told about an address it does not track (scripts/vm's helper)
KRWQ_SPLATS+='|kmemleak: Trying to color unknown object|kmemleak: Found object by alias'

# The lines between which a VM run's console log holds the kernel log
# that the guest's /init prints at the end of every run (scripts/vm
# hands them to it; scripts/runner/markers.py reads them from here).
M_DMESG_BEGIN=@@krwq-vm-dmesg-begin@@
M_DMESG_END=@@krwq-vm-dmesg-end@@

# section LOG BEGIN END: the lines of LOG between two marker lines.
section() {
	awk -v b="$2" -v e="$3" 'index($0, e) { on = 0 } on { print } index($0, b) { on = 1 }' "$1"
}

# vm_dmesg CONSOLE: the kernel log in the VM console log CONSOLE
vm_dmesg() {
	section "$1" "$M_DMESG_BEGIN" "$M_DMESG_END"
}

# kunit_marked TAG LOG: the KTAP that LOG holds between the lines
# "KTAP-BEGIN TAG" and "KTAP-END TAG" (a guest's copy of a suite's
# debugfs results)
kunit_marked() {
	sed -n "/^KTAP-BEGIN $1\$/,/^KTAP-END $1\$/p" "$2" | sed '1d;$d'
}

# kunit_logged SUITE CONSOLE: SUITE's KTAP as the kernel logged it when
# its module loaded (the kernel messages of the VM console log CONSOLE),
# as the only suite of a document.  KUnit's debugfs results file keeps
# only the last parameter's lines of a parameterised case; the log has
# them all.
kunit_logged() {
	vm_dmesg "$2" | awk -v s="$1" '
		!/^\[ *[0-9.]+\] / { next }
		{ sub(/^\[ *[0-9.]+\] /, "") }
		$0 ~ "^ *# Subtest: " s "$" { on = 1; print "KTAP version 1"; print "1..1" }
		!on { next }
		$0 ~ "^ *(not )?ok [0-9]+ " s "( |$)" { sub(/ok [0-9]+ /, "ok 1 "); print; exit }
		{ print }'
}

# kunit_tally KTAP JSON: KTAP parsed by the kernel's own kunit.py into
# JSON; prints "PASSED FAILED SKIPPED" over the suite's cases, a
# parameterised case counting once by its own result (no case at all is
# one failure)
kunit_tally() {
	rm -f "$2"
	python3 "$(kernel_src)/tools/testing/kunit/kunit.py" parse \
		--json="$2" "$1" >&2
	python3 "$KRWQ_ROOT/scripts/kunit_tally.py" "$2" || echo "0 1 0"
}

# The suites of krwq_kunit.ko, which run when it is loaded.
# shellcheck disable=SC2034 # used by the scripts that source this file
KRWQ_KUNIT_SUITES="krwq_rq krwq_verbs krwq_stress krwq_wire krwq_uc_wire"

# kunit_suites CONSOLE DIR WHERE: the KRWQ_KUNIT_SUITES of the VM console
# log CONSOLE, each kept as DIR/kunit-SUITE.{ktap,json} and logged with
# WHERE; prints "PASSED FAILED" over them all
kunit_suites() {
	local s p f all_p=0 all_f=0 ktap
	for s in $KRWQ_KUNIT_SUITES; do
		ktap=$2/kunit-$s.ktap
		kunit_logged "$s" "$1" > "$ktap"
		read -r p f _ < <(kunit_tally "$ktap" "${ktap%.ktap}.json")
		log "KUnit $s$3: $p passed, $f failed"
		all_p=$((all_p + p)) all_f=$((all_f + f))
	done
	echo "$all_p $all_f"
}

# stress_report CONSOLE NAME: show what each krwq_stress round moved, from
# the kernel's messages in the VM console log CONSOLE (KUnit's results
# file keeps only a parameterised case's last round), and add the WQEs to
# the dose figure NAME
stress_report() {
	local n re='^\[ *[0-9.]*\] *# stress_[a-z_]*: round [0-9]*: [0-9]* WQEs'
	vm_dmesg "$1" | grep -E "$re" | sed 's/^\[[^]]*\] *# /krwq:   /' >&2
	n=$(vm_dmesg "$1" | grep -E "$re" | sed 's/.*: round [0-9]*: \([0-9]*\) WQEs.*/\1/' |
		awk '{ s += $1 } END { print s + 0 }')
	dose "$2" "$n"
}

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
