#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs unmodified rdma-core, perftest and UCX clients against each DEVICE given,
# server and client on loopback, and prints one TAP line per client run,
# ending with "N passed, N failed".  Runs inside the test VM:
#   clients.sh DEVICE...     (rxe0 is created on a dummy netdev if named)
port=18600
log=/tmp/clients.log
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh
# shellcheck source=pair.sh
. /krwq/lib/pair.sh

# counter NAME: NAME's value in the `rdma statistic show` output in $log
# (0 if it is not there, so that the sums below stay arithmetic)
counter() {
	v=$(tr ' ' '\n' < "$log" | grep -A1 -x "$1" | tail -n 1)
	case $v in
	'' | *[!0-9]*) echo 0 ;;
	*) echo "$v" ;;
	esac
}

# abi_of DEVICE: the uverbs ABI version its driver reports
abi_of() {
	for u in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$u/ibdev")" = "$1" ] && cat "$u/abi_version" && return
	done
	echo unknown
}

# perftest prints a table row of numbers under its header
row='^ *[0-9]+ +[0-9]+ +[0-9.]+'

for dev in "$@"; do
	# rxe0 is RoCE: its clients name GID index 0 (-g 0, perftest's -x 0)
	gid=''
	if [ "$dev" = rxe0 ]; then
		if ! { modprobe rdma_rxe &&
			ip link add dummy0 type dummy &&
			ip link set dummy0 up &&
			rdma link add rxe0 type rxe netdev dummy0; }; then
			report 1 "create rxe0"
			continue
		fi
		gid=0
	fi
	label=$dev
	[ "$dev" != rxe0 ] && label="$dev, ABI $(abi_of "$dev")"
	ibv_devinfo -v -d "$dev" > "$log" 2>&1
	grep -q 'PORT_ACTIVE' "$log" && ! grep -qi warn "$log"
	report $? "$label ibv_devinfo -v: port active, no provider warnings"

	pair 'iters in' "$label ibv_rc_pingpong 4 KiB, data checked" ibv_rc_pingpong -d "$dev" ${gid:+-g "$gid"} -n 200 -s 4096 -c
	pair 'iters in' "$label ibv_rc_pingpong 64 B, completion events" ibv_rc_pingpong -d "$dev" ${gid:+-g "$gid"} -n 200 -s 64 -e -c
	pair 'iters in' "$label ibv_uc_pingpong 4 KiB, data checked" ibv_uc_pingpong -d "$dev" ${gid:+-g "$gid"} -n 200 -s 4096 -c
	pair 'iters in' "$label ibv_ud_pingpong 1000 B, data checked" ibv_ud_pingpong -d "$dev" ${gid:+-g "$gid"} -n 200 -s 1000 -c
	pair 'iters in' "$label ibv_srq_pingpong 16 QPs on one SRQ, data checked" ibv_srq_pingpong -d "$dev" ${gid:+-g "$gid"} -n 50 -c
	# rxe moves 64 KiB messages at well under 1 MiB/s under TCG on a busy
	# host: fewer iterations keep the sanity peer inside its timeout
	iters=1000
	[ "$dev" = rxe0 ] && iters=200
	pair "$row" "$label ib_send_bw" ib_send_bw -d "$dev" ${gid:+-x "$gid"} -n "$iters"
	pair "$row" "$label ib_send_lat" ib_send_lat -d "$dev" ${gid:+-x "$gid"} -n "$iters"
	pair "$row" "$label ib_write_bw" ib_write_bw -d "$dev" ${gid:+-x "$gid"} -n "$iters"
	pair "$row" "$label ib_read_bw" ib_read_bw -d "$dev" ${gid:+-x "$gid"} -n "$iters"
	# inline data (copied at post, from user memory) and atomics
	pair "$row" "$label ib_send_lat, 128 B inline" ib_send_lat -d "$dev" ${gid:+-x "$gid"} -n "$iters" -s 128 -I 128
	pair "$row" "$label ib_write_bw, 64 B inline" ib_write_bw -d "$dev" ${gid:+-x "$gid"} -n "$iters" -s 64 -I 64
	pair "$row" "$label ib_atomic_bw fetch-and-add" ib_atomic_bw -d "$dev" ${gid:+-x "$gid"} -n "$iters" -A FETCH_AND_ADD
	pair "$row" "$label ib_atomic_bw compare-and-swap" ib_atomic_bw -d "$dev" ${gid:+-x "$gid"} -n "$iters" -A CMP_AND_SWAP
	# UCX over its rc_verbs transport: RDMA WRITE, SEND, and the device
	# atomics, which UCX 1.13 uses only on a device reporting
	# IBV_ATOMIC_HCA ("does not support required 64-bit atomic" else)
	for t in put_bw am_lat add_lat fadd cswap; do
		pair '^Final:' "$label ucx_perftest -x rc_verbs -t $t" ucx_perftest -- \
			ucx_perftest -d "$dev:1" -x rc_verbs -t "$t" -n "$iters"
	done
	if [ "$dev" != rxe0 ]; then
		# the device's counters moved with all that traffic, and they
		# add up: every receive taken or flushed was counted as posted
		# (with ABI 2 when the kernel first saw it in the mapped ring)
		counters="rx_posted rx_taken loopback_bytes"
		rdma statistic show link "$dev/1" > "$log" 2>&1
		ok=0
		for c in $counters; do
			[ "$(counter "$c")" -gt 0 ] 2>/dev/null || ok=1
		done
		report $ok "$label rdma statistic: $(echo "$counters" | sed 's/ /, /g') moved"
		[ "$(counter rx_posted)" -ge $(($(counter rx_taken) + $(counter rx_flushed))) ]
		report $? "$label rdma statistic: rx_posted >= rx_taken + rx_flushed"
	fi
done
tap_summary
