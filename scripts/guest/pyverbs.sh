#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own test suite (its tests/, run by run_tests.py over
# python3-pyverbs), inside the test VM, on krwq's devices.  Prints TAP,
# one line per test that ran on a krwq device (passed, or failed or
# raised), and per device one line for the run itself (the suite ran to
# its end and said OK, and at least MIN_PASSED tests passed: a device
# on which the traffic tests all skip would otherwise pass).  Tests the
# suite skips (a verb krwq does not offer, a vendor's extension,
# hardware that is not there) are not counted; "#" lines give their
# number by reason.  Ends with "N passed, N failed".
#   pyverbs.sh DEVICE...
# DEVICE is one of
#   krwq0          the IB-mode device krwq.ko makes;
#   NAME=NETDEV    a netdev-bound krwq device NAME, made here on NETDEV;
#   rxe0=NETDEV    the peer: rdma_rxe on NETDEV, the suite run the same
#                  way, its tally as a "#" line only (not counted).
# NETDEV gets 192.0.2.1/28 (.17 for rxe0).  md0 and md1 are made here,
# dummies; eth0 is `scripts/vm --link none`'s NIC, whose driver is loaded
# here.  A krwq device on a NETDEV that a device carries (eth0; krwq.ko
# loaded with netdev_parent=1) must show it in its sysfs device/net/
# folder, where the suite looks for a device's netdev, and the suite's
# rdma_cm tests must then run and pass there.
# At the end the devices made here are removed, the dummies deleted and
# eth0 set down, for the parts that run after this one in the same boot.
# scripts/pyverbs-root's folder must be in the image: python3 and pyverbs
# in /usr, the suite in /krwq/rdma-core/tests.
log=/tmp/pyverbs.log
suite=/krwq/rdma-core
# the seed of the suite's random draws (run_suite)
pyverbs_seed=4791
# krwq0 passed 48-54 of the suite's 273 tests in make check's boots
# before the draws were seeded (some pick attributes at random that
# libipathverbs refuses, and skip), the device on eth0, whose rdma_cm
# tests run, 58-65
MIN_PASSED=40
tap_t0=$(cut -d. -f1 /proc/uptime)
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh
# shellcheck source=roce.sh
. /krwq/lib/roce.sh

# make_netdev NETDEV ADDR: NETDEV up with ADDR/28
make_netdev() {
	case $1 in
	md*) ip link add "$1" type dummy ;;
	eth0)
		timeout 60 modprobe -a virtio_pci virtio_net &&
			wait_for 20 test -e /sys/class/net/eth0
		;;
	esac &&
		ip link set "$1" up &&
		ip addr add "$2/28" dev "$1"
}

# dad_done NETDEV: NETDEV has its link-local IPv6 address, and none of
# its addresses is tentative.  The link-local address can appear only
# after the device is made, so its absence is not yet "done".
dad_done() {
	dd_addrs=$(ip -6 addr show dev "$1") &&
		case $dd_addrs in
		*tentative*) false ;;
		*"inet6 fe80:"*) true ;;
		*) false ;;
		esac
}

# make_device NAME NETDEV: NAME (krwq, or rxe for rxe*) on NETDEV, its
# port active and NETDEV's IPv6 addresses through duplicate address
# detection: the suite's AH test makes an AH to GID 0, the link-local
# address, and the RDMA core cannot resolve a tentative address's
# (ETIMEDOUT)
make_device() {
	case $1 in
	rxe*) md_type=rxe md_addr=192.0.2.17 ;;
	*) md_type=krwq md_addr=192.0.2.1 ;;
	esac
	{
		make_netdev "$2" "$md_addr" &&
			{ [ "$md_type" = krwq ] || timeout 60 modprobe rdma_rxe; } &&
			timeout 60 rdma link add "$1" type "$md_type" netdev "$2"
	} > "$log" 2>&1 &&
		wait_for 10 grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" &&
		wait_for 20 dad_done "$2"
}

# run_suite DEVICE: the whole suite on DEVICE, its verbose output in
# /tmp/pyverbs-DEVICE.log, and per test "ok NAME", "bad NAME" or
# "skip NAME REASON" in /tmp/pyverbs-DEVICE.results; sets rs_ok, whether
# it ran to its end and said OK
run_suite() {
	rs_out=/tmp/pyverbs-$1.log
	echo "# $1: rdma-core's suite, its random draws seeded with $pyverbs_seed"
	# unbuffered: the rdma_cm tests fork, and a child would write the
	# parent's buffered lines again.  The suite draws some tests'
	# attributes from Python's random module and skips a draw the device
	# cannot meet; seeded, each run skips the same tests, so the count
	# does not move between runs.
	(cd "$suite" && PYTHONPATH=$suite PYTHONUNBUFFERED=1 \
		timeout 600 python3 -c 'import random, runpy, sys
random.seed(int(sys.argv[1]))
sys.argv = ["tests/run_tests.py"] + sys.argv[2:]
sys.path.insert(0, "tests")
runpy.run_path(sys.argv[0], run_name="__main__")' "$pyverbs_seed" --dev "$1" -v) > "$rs_out" 2>&1
	rs_rc=$?
	# unittest -v: "name (module.Class.name) ... RESULT", or that name
	# alone on a line and the first line of its docstring before the
	# " ... "; RESULT on the same line or, after a test's own output, on
	# a later one
	awk '
		/ \.\.\. / {
			if ($2 ~ /^\(tests\./) name = $1 " " $2
			else if (prev ~ /^[^ ]+ \(tests\.[^ ]+\)$/) name = prev
			else name = "(unnamed)"
			sub(/.* \.\.\. /, "")
		}
		{ prev = $0 }
		name == "" { next }
		/^ok$/ { print "ok " name; name = ""; next }
		/^skipped / { print "skip " name " " substr($0, 9); name = ""; next }
		/^(FAIL|ERROR)$/ { print "bad " name; name = ""; next }
		/^expected failure$/ { print "skip " name " (expected failure)"; name = ""; next }
		/^unexpected success$/ { print "bad " name; name = "" }
	' "$rs_out" > "/tmp/pyverbs-$1.results"
	rs_ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$rs_out")
	rs_passed=$(grep -c '^ok ' "/tmp/pyverbs-$1.results")
	rs_ok=1
	[ "$rs_rc" = 0 ] && [ -n "$rs_ran" ] && grep -q '^OK' "$rs_out" &&
		! grep -q '^FAILED' "$rs_out" && rs_ok=0
}

# tally DEVICE: "P passed, F failed, S skipped" of run_suite's results
tally() {
	awk '{ n[$1]++ } END { printf "%d passed, %d failed, %d skipped\n", n["ok"], n["bad"], n["skip"] }' \
		"/tmp/pyverbs-$1.results"
}

# skips DEVICE: "#" lines, the skipped tests' count by reason
skips() {
	echo "# $1: $(grep -c '^skip ' "/tmp/pyverbs-$1.results") tests skipped, by reason:"
	sed -n 's/^skip [^ ]* [^ ]* //p' "/tmp/pyverbs-$1.results" | sort | uniq -c | sort -rn |
		sed 's/^/#   /'
}

# check DEVICE: run_suite on DEVICE, reported as TAP
check() {
	run_suite "$1"
	while read -r ck_kind ck_test ck_rest; do
		case $ck_kind in
		ok) report 0 "$1 $ck_test $ck_rest" ;;
		bad)
			report 1 "$1 $ck_test $ck_rest" "$(awk -v t="$ck_test $ck_rest" '
				/^(FAIL|ERROR): / && index($0, t) { on = 1; next }
				on && /^(FAIL|ERROR): |^-+$/ && ++seen > 1 { exit }
				on { print }' "$rs_out" | tail -n 20)"
			;;
		esac
	done < "/tmp/pyverbs-$1.results"
	skips "$1"
	[ $rs_ok = 0 ] && [ "$rs_passed" -ge $MIN_PASSED ]
	report $? "$1 rdma-core tests/ ran to its end, OK, $rs_passed of ${rs_ran:-no} tests passed (at least $MIN_PASSED)" \
		"$(tail -n 15 "$rs_out")"
}

# cm_ran DEVICE: the suite's rdma_cm tests ran on DEVICE, none skipped
# for want of a netdev, at least one passed
cm_ran() {
	! grep -q "^skip .* doesn't have net interface" "/tmp/pyverbs-$1.results" &&
		grep -q '^ok [^ ]* (tests\.test_rdmacm\.' "/tmp/pyverbs-$1.results"
}

made=
for spec in "$@"; do
	dev=${spec%%=*} nd=
	case $spec in
	*=*)
		nd=${spec#*=}
		made="$made $spec"
		make_device "$dev" "$nd"
		md_rc=$?
		case $dev in
		rxe*)
			if [ $md_rc != 0 ]; then
				echo "# peer $dev on $nd: not made"
				sed 's/^/#   /' "$log"
				continue
			fi
			;;
		*)
			report $md_rc "$dev on $nd, port ACTIVE"
			[ $md_rc = 0 ] || continue
			;;
		esac
		;;
	esac
	case $dev in
	rxe*)
		run_suite "$dev"
		echo "# peer $dev: $(tally "$dev"); ran to its end: $([ $rs_ok = 0 ] && echo yes || echo no)"
		sed -n 's/^bad /#   failed on the peer: /p' "/tmp/pyverbs-$dev.results"
		skips "$dev"
		;;
	*)
		on_nic=
		[ -z "$nd" ] || [ ! -e "/sys/class/net/$nd/device" ] || on_nic=$nd
		if [ -n "$on_nic" ]; then
			ls "/sys/class/infiniband/$dev/device/net/" > "$log" 2>&1
			grep -qx "$nd" "$log"
			report $? "$dev's sysfs device/net/ lists $nd, the netdev it is bound to"
		fi
		check "$dev"
		if [ -n "$on_nic" ]; then
			cm_ran "$dev"
			report $? "$dev: the suite's rdma_cm tests ran, and passed" \
				"$(grep -e '(tests\.test_rdmacm\.' -e "doesn't have net interface" \
					"/tmp/pyverbs-$dev.results" | head -n 15)"
		fi
		echo "# $dev: $(tally "$dev")"
		;;
	esac
done
for spec in $made; do
	timeout 60 rdma link delete "${spec%%=*}" 2> /dev/null
	case ${spec#*=} in
	md*) ip link del "${spec#*=}" 2> /dev/null ;;
	*) ip addr flush dev "${spec#*=}" 2> /dev/null && ip link set "${spec#*=}" down ;;
	esac
done
tap_summary
