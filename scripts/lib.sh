# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared helpers for the krwq scripts; sourced, never run.

KRWQ_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KRWQ_CACHE=${KRWQ_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/krwq}

die() { echo "krwq: $*" >&2; exit 1; }
log() { echo "krwq: $*" >&2; }
# ok WHAT, bad WHAT: one passed or failed check of a stage script, counted
# in the caller's pass and fail (which it prints as "PASSED FAILED" last)
ok() { log "ok: $*"; pass=$((pass + 1)); }
bad() { log "FAILED: $*"; fail=$((fail + 1)); }
# warning_free LOG: a build LOG with no compiler warning or error (those
# it has go to stderr)
warning_free() { ! grep -iE 'warning:|error:' "$1" >&2; }

# build_user: user/'s programs built, one build at a time (two stages of
# make check may run side by side; both need them)
build_user() {
	mkdir -p "$KRWQ_ROOT/build"
	flock "$KRWQ_ROOT/build/.user.lock" make -s -C "$KRWQ_ROOT/user" >&2
}

# The dose make check must give per run: fuzz executions on the core and
# WQEs through krwq_stress, each at least this many.
# shellcheck disable=SC2034 # used by the scripts that source this file
KRWQ_DOSE_MIN=1000000

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

# need_pkgs PKG...: install missing Debian packages when root (without
# their recommends: the VM image takes files from them, and a recommend
# would only drag more into the host), else print the exact apt-get line
# and fail.
need_pkgs() {
	local missing=() p fd
	_krwq_missing() {
		missing=()
		for p in "$@"; do
			dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
				missing+=("$p")
		done
	}
	_krwq_missing "$@"
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		die "missing packages; run: sudo apt-get install -y --no-install-recommends ${missing[*]}"
	fi
	# one apt-get at a time on the machine (two stages of make check may
	# run side by side, one of them from a copy of the tree); what is
	# missing is looked at again once the lock is ours
	exec {fd}> /run/lock/krwq-apt.lock
	flock "$fd"
	_krwq_missing "$@"
	if [ ${#missing[@]} -gt 0 ]; then
		log "installing ${missing[*]}"
		if [ -z "${KRWQ_APT_UPDATED:-}" ]; then
			apt-get update -q >&2 || die "apt-get update failed"
			export KRWQ_APT_UPDATED=1
		fi
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			"${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
	fi
	exec {fd}>&-
}

# copy_tree DIR: a fresh copy of the tracked sources (and the untracked
# ones git does not ignore) in DIR
copy_tree() {
	rm -rf "$1"
	mkdir -p "$1"
	git -C "$KRWQ_ROOT" ls-files -z --cached --others --exclude-standard |
		rsync -a --from0 --files-from=- "$KRWQ_ROOT" "$1"
}

# dkms_in DIR ARG...: dkms ARG... on private trees under DIR (sources in
# DIR/src, builds in DIR/tree, installs in DIR/install), so that the
# machine's /usr/src, /var/lib/dkms and /lib/modules stay untouched
dkms_in() {
	local dir=$1
	shift
	dkms "$@" --sourcetree "$dir/src" --dkmstree "$dir/tree" --installtree "$dir/install"
}

# dkms_build DIR RELEASE KERNEL_DIR: DIR emptied, a copy of this tree as
# krwq's sources in it, then `dkms add` and `dkms build` for RELEASE against
# KERNEL_DIR there (dkms_in), dkms's output on stdout.  Status 0 when it
# built krwq.ko; its make log is then "$(dkms_built DIR RELEASE)/log/make.log".
dkms_build() {
	local dir=$1 rel=$2 kdir=$3 ver
	ver=$(krwq_version)
	rm -rf "$dir"
	copy_tree "$dir/src/krwq-$ver"
	mkdir -p "$dir/tree" "$dir/install/$rel"
	dkms_in "$dir" add -m krwq -v "$ver" &&
		dkms_in "$dir" build -m krwq -v "$ver" -k "$rel" --kernelsourcedir "$kdir" &&
		[ -f "$(dkms_built "$dir" "$rel")/module/krwq.ko" ]
}

# dkms_built DIR RELEASE: where dkms_build put its build for RELEASE
dkms_built() {
	echo "$1/tree/krwq/$(krwq_version)/$2/x86_64"
}

# dkms_failed_log DIR: the make log of a dkms_build in DIR that failed
# (dkms leaves it in its build folder and moves it only on success)
dkms_failed_log() {
	echo "$1/tree/krwq/$(krwq_version)/build/make.log"
}

# krwq_version: PACKAGE_VERSION of dkms.conf, the version's one definition
# (Kbuild makes it MODULE_VERSION).
krwq_version() {
	sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$/\1/p' "$KRWQ_ROOT/dkms.conf"
}

# The packages to build the test kernel and to run the VM, for need_pkgs.
# shellcheck disable=SC2034 # used by the scripts that source this file
KERNEL_BUILD_PKGS=(linux-source-6.1 build-essential flex bison bc libelf-dev libssl-dev dwarves
	xz-utils python3 kmod cpio)
# shellcheck disable=SC2034 # used by the scripts that source this file
VM_PKGS=(qemu-system-x86 busybox-static cpio kmod rdma-core ibverbs-utils ibverbs-providers
	libibverbs-dev rdmacm-utils libgcc-s1 perftest iproute2 gzip nvme-cli fio tcpdump
	nfs-kernel-server nfs-common rpcbind libtirpc-common netbase open-iscsi
	ucx-utils libucx0 libfabric-bin openmpi-bin libopenmpi3 openmpi-common libpmix2
	netcat-traditional)
# shellcheck disable=SC2034 # used by scripts/lint and scripts/check
LINT_PKGS=(sparse clang clang-format clang-tidy shellcheck pyflakes3)
# shellcheck disable=SC2034 # used by scripts/check-debian and scripts/check
DEBIAN_CHECK_PKGS=(dkms rsync libopenmpi-dev python3-pyverbs)

# kernel_src: where scripts/test-kernel unpacks Debian's linux-source-6.1
# (for its kunit.py, checkpatch.pl and kernel-doc too)
kernel_src() {
	echo "$KRWQ_CACHE/linux-source-$(dpkg-query -W -f='${Version}' linux-source-6.1)"
}

# kernel_dir [VARIANT]: the cache folder of the test kernel for the current
# source version and config fragment(s).  Prints the path; builds nothing.
kernel_dir() {
	local variant=${1:-default} ver hash frags
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
		die "linux-source-6.1 is not installed"
	frags=("$KRWQ_ROOT/scripts/test-kernel.config")
	[ "$variant" = default ] || frags+=("$KRWQ_ROOT/scripts/test-kernel-$variant.config")
	hash=$(cat "${frags[@]}" | sha256sum | cut -c1-12)
	echo "$KRWQ_CACHE/kernel-$ver-$variant-$hash"
}

# copy_to_root ROOT PATH: copy host file PATH to ROOT/PATH; a symlink is
# copied as a symlink, followed by what it points to.
copy_to_root() {
	local root=$1 p=$2 t
	if [ -e "$root$p" ] || [ -L "$root$p" ]; then return 0; fi
	[ -e "$p" ] || die "$p does not exist"
	mkdir -p "$root$(dirname "$p")"
	if [ -L "$p" ]; then
		cp -P "$p" "$root$p"
		t=$(readlink "$p")
		case $t in /*) ;; *) t=$(dirname "$p")/$t ;; esac
		copy_to_root "$root" "$(realpath -sm "$t")"
	else
		cp --preserve=mode,timestamps "$p" "$root$p"
	fi
}

# merge_usr ROOT: the /bin, /sbin, /lib and /lib64 that copy_to_root may
# have made as real folders in ROOT, moved under ROOT/usr (the image's
# /usr is merged: its /lib and friends are links there)
merge_usr() {
	local d
	for d in bin sbin lib lib64; do
		if [ -d "$1/$d" ] && [ ! -L "$1/$d" ]; then
			mkdir -p "$1/usr/$d"
			cp -a "$1/$d/." "$1/usr/$d/"
			rm -rf "${1:?}/$d"
		fi
	done
}

# elf_libs FILE...: every shared library (and the loader) ldd names for
# the dynamic ELF files among FILEs, one a line; dies on a missing one.
elf_libs() {
	local f
	for f in "$@"; do
		{ [ -f "$f" ] && [ "$(head -c4 "$f" | tr -d '\0')" = $'\x7fELF' ]; } || continue
		{ ldd "$f" 2>/dev/null || true; } | awk -v f="$f" '
			$2 == "=>" && $3 == "not" { print "krwq: " f ": " $1 " not found" > "/dev/stderr"; exit 1 }
			$2 == "=>" && $3 ~ /^\// { print $3; next }
			$1 ~ /^\// { print $1 }' || die "unresolved shared libraries"
	done | sort -u
}
