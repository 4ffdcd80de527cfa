#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM: the same measurements on krwq0 with uverbs
# ABI 2 (mapped rings) and ABI 1 (every verb through the kernel), one
# after the other in one boot, reloading krwq.ko in between.  Prints one
# line per ABI:
#   abi=N post_recv_calls_per_s=N send_lat_64_typical_us=N \
#     send_bw_64_mpps=N send_bw_64k_mbps=N
# (perftest's own columns: t_typical, MsgRate, BW average), and, given
# bench/floors.c's program, its floors in the same boot:
#   floors syscall_ns=N ring_post_ns=N
#   abi-bench.sh [SECONDS_PER_RATE_RUN [KRWQ_KO [FLOORS]]]
secs=${1:-3}
ko=${2:-/krwq/krwq.ko}
floors=${3:-}
port=19500
# shellcheck source=pair.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/pair.sh
# shellcheck source=module.sh
. /krwq/lib/module.sh
log=/tmp/perf.log
pair_timeout=120

if [ -n "$floors" ]; then
	echo "floors $("$floors" | sed 's/ /=/' | tr '\n' ' ')"
fi

# perf COLUMN PROGRAM ARGS...: server and client on loopback; prints the
# client's value in COLUMN (1-based) of perftest's result row
perf() {
	col=$1
	shift
	run_pair "$@"
	sed '/^--- server$/,$d' "$log" |
		awk -v c="$col" '/^ *[0-9]+ +[0-9]+ +[0-9.]+/ { v = $c } END { print v + 0 }'
}

for abi in 2 1; do
	rmmod krwq 2> /dev/null
	insmod_deps "$ko" abi=$abi || exit 1
	rate=$(krwq_post_rate -d krwq0 -t "$secs" | sed -n 's/.*post_recv_calls_per_s=\([0-9]*\).*/\1/p')
	lat=$(perf 5 ib_send_lat -d krwq0 -s 64 -n 2000)
	mpps=$(perf 5 ib_send_bw -d krwq0 -s 64 -n 20000)
	mbps=$(perf 4 ib_send_bw -d krwq0 -s 65536 -n 2000)
	echo "abi=$abi post_recv_calls_per_s=${rate:-0} send_lat_64_typical_us=$lat send_bw_64_mpps=$mpps send_bw_64k_mbps=$mbps"
done
