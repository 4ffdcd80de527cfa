#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-bench.sh - the in-VM half of scripts/bench.  Loads krwq.ko with the
# given module parameters, then, in this one boot:
#  - with --kernel: rdmavt, and krwq_bench.ko (rdmavt against krwq in the
#    kernel; it prints its own results to the kernel log);
#  - rxe0 on a dummy netdev, as clients.sh makes it;
#  - memcpy_bw at the message sizes (the copying loopback's limit);
#  - each end-to-end client on krwq0 then on rxe0, back to back, so that
#    both devices see the same conditions.
# Prints one line per figure:  BENCH <part> <metric> <device> <value>
#   guest-bench.sh DIR [--kernel] [NAME=VALUE]...
# DIR holds krwq.ko, krwq_bench.ko and memcpy_bw.
dir=$1
shift
kernel=0
if [ "${1:-}" = --kernel ]; then
	kernel=1
	shift
fi
port=18800
tmp=/tmp/bench
mkdir -p $tmp

insmod "$dir/krwq.ko" "$@" || { echo "BENCH-ERROR insmod krwq.ko $*"; exit 1; }

if [ $kernel = 1 ]; then
	if modprobe rdmavt && insmod "$dir/krwq_bench.ko"; then
		# the best round is the figure; the median is kept for reference
		dmesg | sed -n 's/.*krwq_bench: result \([a-z0-9_]*\) \([a-z]*\) \([0-9.]*\) median \([0-9.]*\)$/BENCH kernel \1 \2 \3/p'
		dmesg | sed -n 's/.*krwq_bench: result \([a-z0-9_]*\) \([a-z]*\) \([0-9.]*\) median \([0-9.]*\)$/BENCH kernel_median \1 \2 \4/p'
		rmmod krwq_bench
	else
		echo "BENCH-ERROR krwq_bench.ko"
		dmesg | grep -E 'krwq_bench|rdmavt|rvt' | tail -n 20
	fi
fi

modprobe rdma_rxe &&
	ip link add dummy0 type dummy &&
	ip link set dummy0 up &&
	rdma link add rxe0 type rxe netdev dummy0 || echo "BENCH-ERROR rxe0"

"$dir/memcpy_bw" 64 4096 65536 | while read -r what size mibs _; do
	echo "BENCH e2e ${what}_mibs_$size memcpy $mibs"
done

# flags DEV: what rxe needs (a GID index for rdma-core, RoCE for perftest)
# gid_of DEVICE: the GID index its clients name (-g, perftest's -x): 0 on
# rxe0, which is RoCE; none on krwq0
gid_of() { if [ "$1" = rxe0 ]; then echo 0; fi; }

# pair LOG JSON PROGRAM ARGS...: server, then the client on 127.0.0.1; the
# client's output in LOG and, unless JSON is "-", its perftest JSON report
# in JSON; fails if either side fails.
pair() {
	log=$1 json=$2
	shift 2
	port=$((port + 1))
	sj="" cj=""
	if [ "$json" != - ]; then
		rm -f "$json"
		sj=$tmp/server.json cj=$json
	fi
	timeout 300 "$@" ${sj:+--out_json "--out_json_file=$sj"} -p $port > "$tmp/server.log" 2>&1 &
	spid=$!
	# the server may take a while to listen in a loaded VM: retry the
	# client while it cannot connect, for up to a minute
	tries=0
	while :; do
		sleep 1
		timeout 300 "$@" ${cj:+--out_json "--out_json_file=$cj"} -p $port 127.0.0.1 > "$log" 2>&1
		crc=$?
		tries=$((tries + 1))
		{ [ $crc != 0 ] && [ $tries -lt 60 ] && grep -q "Couldn't connect" "$log"; } || break
	done
	wait $spid
	src=$?
	[ "$crc" = 0 ] && [ "$src" = 0 ] && return 0
	echo "BENCH-ERROR $* (client $crc, server $src)"
	sed 's/^/# /' "$log" $tmp/server.log | tail -n 20
	return 1
}

# json_field FILE KEY: a value from perftest's --out_json report, whose
# lines read "KEY: VALUE,"
json_field() {
	sed -n "s/^$2: *\([0-9.eE+-]*\),*\$/\1/p" "$1" | head -n 1
}

rc_pingpong() {	# SIZE
	for dev in krwq0 rxe0; do
		g=$(gid_of $dev)
		pair $tmp/pp.log - ibv_rc_pingpong -d $dev ${g:+-g "$g"} -s "$1" -n 500 || continue
		v=$(sed -n 's/.* = \([0-9.]*\) usec\/iter$/\1/p' $tmp/pp.log)
		echo "BENCH e2e rc_pingpong_us_$1 $dev $v"
	done
}

send_lat() {	# SIZE
	for dev in krwq0 rxe0; do
		g=$(gid_of $dev)
		pair $tmp/lat.log $tmp/out.json \
			ib_send_lat -d $dev ${g:+-x "$g"} -s "$1" -n 500 || continue
		echo "BENCH e2e send_lat_typical_us_$1 $dev $(json_field $tmp/out.json t_typical)"
	done
}

bw() {	# TEST SIZE ITERS
	for dev in krwq0 rxe0; do
		g=$(gid_of $dev)
		pair $tmp/bw.log $tmp/out.json \
			"ib_$1_bw" -d $dev ${g:+-x "$g"} -s "$2" -n "$3" || continue
		echo "BENCH e2e $1_bw_mibs_$2 $dev $(json_field $tmp/out.json BW_average)"
		echo "BENCH e2e $1_bw_mmps_$2 $dev $(json_field $tmp/out.json MsgRate)"
	done
}

rc_pingpong 64
rc_pingpong 4096
send_lat 64
bw send 64 2000
bw send 4096 2000
bw send 65536 500
bw write 4096 2000
echo "BENCH-DONE"
