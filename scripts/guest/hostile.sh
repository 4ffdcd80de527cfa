#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The hostile-input, fault and unload tests of krwq, inside the test VM
# (scripts/check-hostile runs it; krwq.ko is loaded):
#   hostile.sh [FUZZ_SECONDS [CYCLES]]
#  1. krwq_hostile verbs, fuzz and faults as the unprivileged user krwq
#     (uid 1000; /dev/infiniband/uverbs* are 0666, so no privilege is
#     needed), with the fault injection knobs set by root first;
#     then KUnit's krwq_faults (/krwq/krwq_kunit_faults.ko, if given):
#     the same allocation faults in the kernel verbs, its KTAP between
#     KTAP-BEGIN/KTAP-END lines for the host to parse;
#  2. a pingpong on krwq0 afterwards;
#  3. rmmod while a pingpong runs, while ib_send_bw runs, and while a
#     process holds QPs without traffic; a pingpong after each re-insert;
#     insmod with out-of-range parameters, which must be refused;
#  4. CYCLES insmod/rmmod cycles in a row, the device checked after
#     each insert, a pingpong at the end.
# Prints TAP; each program's own TAP lines are folded in as one line
# each with their counts; the last line is "N passed, N failed".  The VM
# runner's final kmemleak scan covers everything above.
fuzz_secs=${1:-20}
cycles=${2:-50}
log=/tmp/hostile-step.log
tap_t0=$(cut -d. -f1 /proc/uptime)
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh

as_user() {	# as_user CMD...: run CMD as the user krwq
	su krwq -s /bin/sh -c "$*"
}

# tap PROGRAM-OUTPUT NAME: fold a TAP program's result into one line,
# showing its failed checks
tap() {
	last=$(tail -n 1 "$1")
	grep -E '^(not ok|# )' "$1" | grep -v '^# ok' | sed 's/^/  /' | head -n 60
	case $last in
	*" passed, 0 failed") report 0 "$2: $last" ;;
	*) cp "$1" $log; report 1 "$2: ${last:-no summary}" ;;
	esac
}

pingpong() {	# pingpong PORT: an RC pingpong on krwq0 with data checks
	timeout 60 ibv_rc_pingpong -d krwq0 -p "$1" -n 100 -s 1024 -c > /tmp/pp-s.log 2>&1 &
	s=$!
	# the server may take a while to listen on a loaded host: retry
	k=0
	while :; do
		sleep 1
		timeout 60 ibv_rc_pingpong -d krwq0 -p "$1" -n 100 -s 1024 -c 127.0.0.1 > $log 2>&1
		c=$?
		k=$((k + 1))
		{ grep -q "Couldn't connect" $log && [ $k -lt 20 ] &&
			kill -0 $s 2> /dev/null; } || break
	done
	wait $s
	s=$?
	cat /tmp/pp-s.log >> $log
	[ "$c" = 0 ] && [ "$s" = 0 ] && grep -q 'iters in' $log
}

loaded() { grep -q '^krwq ' /proc/modules; }

# --- fault injection: sleeping allocations may fail, quietly --------------
for d in failslab fail_page_alloc; do
	echo N > /sys/kernel/debug/$d/ignore-gfp-wait
	echo 0 > /sys/kernel/debug/$d/verbose
done
# vmalloc's pages are __GFP_HIGHMEM ones: let them fail too
echo N > /sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem
echo 0 > /sys/kernel/debug/fail_page_alloc/min-order
# pinned memory of an unprivileged user counts against RLIMIT_MEMLOCK
# shellcheck disable=SC3045 # dash, the guest's /bin/sh, has ulimit -l
ulimit -l unlimited

ls -l /dev/infiniband/ > $log 2>&1
grep -q '^crw-rw-rw-.* uverbs0$' $log
report $? "/dev/infiniband/uverbs0 is open to every user (0666)"

# --- 1. hostile user space, unprivileged ----------------------------------
as_user krwq_hostile -d krwq0 verbs > /tmp/verbs.log 2>&1
grep -m1 '^# bad inputs:' /tmp/verbs.log | sed 's/^# //'
tap /tmp/verbs.log "krwq_hostile verbs (as uid $(as_user id -u))"

as_user krwq_hostile -d krwq0 fuzz "$fuzz_secs" > /tmp/fuzz.log 2>&1
grep '^# \(fuzzing\|errors\|fuzz calls\|ioctl:\)' /tmp/fuzz.log | sed 's/^# /  /'
grep -m1 '^fuzz calls:' /tmp/fuzz.log
tap /tmp/fuzz.log "krwq_hostile fuzz, $fuzz_secs s (as uid 1000)"

# With ABI 2, ipathverbs resizes a CQ or SRQ in two steps (the command,
# then munmap and mmap of the new ring in user space); fail-nth counts
# the task's own mmap allocations too, and a fault there leaves the
# provider without a ring after the kernel resized: the provider's limit,
# not a kernel state.  So the walk runs with every verb in the kernel.
rmmod krwq && insmod /krwq/krwq.ko abi=1
as_user krwq_hostile -d krwq0 faults > /tmp/faults.log 2>&1
grep '^ok\|^not ok' /tmp/faults.log | sed 's/^/  /'
grep -m1 '^faults injected:' /tmp/faults.log
tap /tmp/faults.log "krwq_hostile faults, uverbs ABI 1 (as uid 1000)"
rmmod krwq && insmod /krwq/krwq.ko

# the same walk over the kernel verbs, from KUnit (parsed on the host)
if [ -f /krwq/krwq_kunit_faults.ko ]; then
	insmod /krwq/krwq_kunit_faults.ko
	echo "KTAP-BEGIN krwq_faults"
	cat /sys/kernel/debug/kunit/krwq_faults/results
	echo "KTAP-END krwq_faults"
	rmmod krwq_kunit_faults
fi

pingpong 18801
report $? "ibv_rc_pingpong on krwq0 after the hostile programs"

# --- 2. unload under load ---------------------------------------------------
# a pingpong long enough to be running when rmmod comes
ibv_rc_pingpong -d krwq0 -p 18802 -n 100000000 > /dev/null 2>&1 & s=$!
sleep 1
ibv_rc_pingpong -d krwq0 -p 18802 -n 100000000 127.0.0.1 > /dev/null 2>&1 & c=$!
sleep 3
timeout 60 rmmod krwq > $log 2>&1
r=$?
kill $s $c 2> /dev/null; wait $s $c
! loaded && [ $r = 0 ]
report $? "rmmod while ibv_rc_pingpong runs"
insmod /krwq/krwq.ko && pingpong 18803
report $? "re-insert, then ibv_rc_pingpong passes"

ib_send_bw -d krwq0 -D 30 -p 18804 > /dev/null 2>&1 & s=$!
sleep 1
ib_write_bw -d krwq0 -D 30 -p 18805 > /dev/null 2>&1 & s2=$!
sleep 1
ib_send_bw -d krwq0 -D 30 -p 18804 127.0.0.1 > /dev/null 2>&1 & c=$!
ib_write_bw -d krwq0 -D 30 -p 18805 127.0.0.1 > /dev/null 2>&1 & c2=$!
sleep 4
timeout 60 rmmod krwq > $log 2>&1
r=$?
kill $s $c $s2 $c2 2> /dev/null; wait $s $c $s2 $c2
! loaded && [ $r = 0 ]
report $? "rmmod while ib_send_bw and ib_write_bw run"
insmod /krwq/krwq.ko && pingpong 18806
report $? "re-insert, then ibv_rc_pingpong passes"

# QPs, CQs, MRs held without traffic: a pingpong server waiting for its peer
ibv_rc_pingpong -d krwq0 -p 18807 > /tmp/held1.log 2>&1 & s=$!
ibv_srq_pingpong -d krwq0 -p 18808 > /tmp/held2.log 2>&1 & s2=$!
i=0
while [ $i -lt 30 ] && ! rdma resource show krwq0 | grep -q 'qp [1-9]'; do
	sleep 1
	i=$((i + 1))
done
rdma resource show krwq0 > $log 2>&1
timeout 60 rmmod krwq >> $log 2>&1
r=$?
kill $s $s2 2> /dev/null; wait $s $s2
cat /tmp/held1.log /tmp/held2.log >> $log
! loaded && [ $r = 0 ] && grep -q 'qp [1-9]' $log
report $? "rmmod while processes hold QPs, an SRQ, CQs and MRs (no traffic)"
insmod /krwq/krwq.ko && pingpong 18809
report $? "re-insert, then ibv_rc_pingpong passes"

# --- out-of-range module parameters: each insert refused, nothing left
# loaded; then a plain insert works
rmmod krwq
: > $log
bad=0
for p in num_devices=17 abi=0 abi=3; do
	if insmod /krwq/krwq.ko $p >> $log 2>&1 || loaded; then
		echo "insmod krwq.ko $p was not refused" >> $log
		bad=$((bad + 1))
		rmmod krwq >> $log 2>&1
	fi
done
insmod /krwq/krwq.ko >> $log 2>&1 && [ $bad = 0 ]
report $? "insmod with num_devices=17, abi=0 or 3 refused; a plain insmod then works"

# --- num_devices=0: no IB-mode device, as rdma_rxe and siw make none at
# load; a netdev-bound device is still made on demand, and the module
# unloads with it bound
rmmod krwq
: > $log
{
	insmod /krwq/krwq.ko num_devices=0 && loaded &&
		[ -z "$(ls /sys/class/infiniband)" ] &&
		ip link add hz0 type dummy && ip link set hz0 up &&
		rdma link add hz0_krwq type krwq netdev hz0 &&
		[ "$(ls /sys/class/infiniband)" = hz0_krwq ] &&
		rdma link show hz0_krwq/1 | grep -q 'netdev hz0' &&
		timeout 60 rmmod krwq && ! loaded &&
		[ -z "$(ls /sys/class/infiniband)" ]
} >> $log 2>&1
r=$?
ip link delete hz0 2> /dev/null
ls /sys/class/infiniband >> $log 2>&1
report $r "insmod with num_devices=0: no device until rdma link add makes one; rmmod with it bound"
loaded || insmod /krwq/krwq.ko >> $log 2>&1

# --- 3. insert/remove cycles ------------------------------------------------
# (krwq0's port read from sysfs after each insert; a pingpong at the end)
i=0 bad=0
: > $log
while [ $i -lt "$cycles" ]; do
	i=$((i + 1))
	if ! rmmod krwq >> $log 2>&1 || ! insmod /krwq/krwq.ko >> $log 2>&1; then
		echo "cycle $i: rmmod/insmod failed" >> $log
		bad=$((bad + 1))
		break
	fi
	if ! grep -q ACTIVE /sys/class/infiniband/krwq0/ports/1/state 2>> $log; then
		echo "cycle $i: krwq0 not active after insmod" >> $log
		bad=$((bad + 1))
	fi
done
echo "cycles: $i"
[ $bad = 0 ]
report $? "$i rmmod/insmod cycles in a row, krwq0 active after every insert"
pingpong 18810
report $? "ibv_rc_pingpong after the cycles"

tap_summary
