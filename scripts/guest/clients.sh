#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs unmodified rdma-core and perftest clients against each DEVICE given,
# server and client on loopback, and prints one TAP line per client run,
# ending with "N passed, N failed".  Runs inside the test VM:
#   clients.sh DEVICE...     (rxe0 is created on a dummy netdev if named)
port=18600
log=/tmp/clients.log
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh

# a failure shows the client's and the server's output, less addresses
tap_detail() {
	grep -v -e ' address: ' -e '^ GID: ' -e '^---' "$log" | tail -n 25
}

# listening PORT: a TCP socket listens on PORT (state 0A in /proc/net)
listening() {
	cat /proc/net/tcp /proc/net/tcp6 2> /dev/null |
		awk -v p="$(printf ':%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
			END { exit !f }'
}

# pair CHECK-REGEX NAME PROGRAM ARGS...: server and client, both must exit 0
# and the client's output must match CHECK-REGEX.
pair() {
	re=$1 name=$2
	shift 2
	try=1
	while :; do
		run_pair "$@"
		# perftest times itself by fitting the TSC against
		# gettimeofday(); should the host preempt a vCPU badly enough
		# that fit fails ("r^2 < 0.9"; scripts/vm's tsc=reliable makes
		# that rare) and perftest exits 1 before it reports anything.
		# That is the measuring tool, not the device: run the pair again.
		{ grep -q "Can't produce a report" "$log" && [ $try -lt 3 ]; } || break
		echo "# $name: perftest could not calibrate its clock, run $try of 3"
		try=$((try + 1))
	done
	ok=1
	[ "$crc" = 0 ] && [ "$src" = 0 ] && grep -Eq "$re" "$log" && ok=0
	[ $ok = 0 ] || echo "# client exited $crc, server $src"
	report $ok "$name"
}

# run_pair PROGRAM ARGS...: one server and one client on a fresh port; sets
# crc and src to their exit statuses and leaves both outputs in $log
run_pair() {
	port=$((port + 1))
	timeout 300 "$@" -p $port > /tmp/server.log 2>&1 &
	spid=$!
	# a fixed sleep loses the race to a server slow to set up (TCG, load)
	i=0
	while ! listening $port && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	timeout 300 "$@" -p $port 127.0.0.1 > "$log" 2>&1
	crc=$?
	wait $spid
	src=$?
	cat /tmp/server.log >> "$log"
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
	if [ "$dev" != rxe0 ]; then
		# the device's counters moved with all that traffic; with ABI 2
		# receives are posted into mapped rings, never through the
		# kernel, so only takes and bytes count them
		counters="rx_taken loopback_bytes"
		[ "$(abi_of "$dev")" = 1 ] && counters="rx_posted $counters"
		rdma statistic show link "$dev/1" > "$log" 2>&1
		ok=0
		for c in $counters; do
			v=$(tr ' ' '\n' < "$log" | grep -A1 -x "$c" | tail -n 1)
			[ -n "$v" ] && [ "$v" -gt 0 ] 2>/dev/null || ok=1
		done
		report $ok "$label rdma statistic: $(echo "$counters" | sed 's/ /, /g') moved"
	fi
done
tap_summary
