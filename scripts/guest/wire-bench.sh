#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# wire-bench.sh - the in-VM half of scripts/bench's "wire" boot: perftest
# over RoCEv2 between network namespaces, krwq against rdma_rxe, in one
# boot.  krwq.ko is loaded with the given module parameters (wire on):
#
#   initial namespace            kwa                       kwb
#   rxe0 on vrx  <--veth-->  krwqw0 on vka
#   198.18.0.1               198.18.0.2
#                            krwqw1 on vab  <--veth-->  krwqw2 on vba
#                            198.18.1.1                 198.18.1.2
#
# The pairs, each client sending to its server (perftest without rdma_cm:
# each side names its GID by index, the handshake over TCP):
#   kk  krwqw1 (kwa) to krwqw2 (kwb): krwq to krwq through the veth
#   kr  krwqw0 (kwa) to rxe0: krwq to rxe through the veth
#   rr  rxe0 to itself.  rdma_rxe (6.1) has one UDP socket, the initial
#       namespace's, and takes a packet only from a netdev it is bound
#       to, so two rxe devices in one kernel can reach each other only
#       through rxe's loopback, which skips the IP stack and the netdev:
#       every packet built, its ICRC computed and checked, none sent
#   kl  krwqw1 to itself: krwq's local path, where no packet is built
# The tests: ib_send_bw at 64 B, 4 KiB and 64 KiB, ib_send_lat at 64 B
# (RC, then UD), ib_write_bw and ib_read_bw at 4 KiB; the pairs alternate
# per test, in the order kk rr kr kl, then again reversed, so that a
# drift of the host's load favours none.  The path MTU is the veths'
# (1500: 1024).
# The floor: udp_floor between kwa and kwb, the kk pair's path, with no
# RDMA stack (its latency, then a stream of each size), before the tests
# and after them.
# Then, with every packet delayed 1 ms on each veth end (netem), the RC
# window: ib_send_bw and ib_write_bw at 4 KiB between kk, kr and rk,
# alternating kk kr rk, then reversed (no ib_read_bw: rxe 6.1's
# requester, reading over this link, can end in a warning of its
# completer's, rxe_comp.c:756):
#   rk  rxe0 to krwqw0 (kwa): rxe's requester, over kr's link
# Prints BENCH wire METRIC PAIR VALUE per run, PAIR "udp" for the floor
# (the report takes the mean of each pair's runs), BENCH-ERROR WHAT when
# a run fails, and BENCH-DONE.
#
#   wire-bench.sh DIR [NAME=VALUE]...
# DIR holds krwq.ko and udp_floor.
# scripts/vm puts these libraries in /krwq/lib
# shellcheck source=tap.sh
. /krwq/lib/tap.sh
# shellcheck source=module.sh
. /krwq/lib/module.sh
# shellcheck source=roce.sh
. /krwq/lib/roce.sh
dir=$1
shift
tmp=/tmp/wire-bench
port=19000
mkdir -p $tmp

insmod_deps "$dir/krwq.ko" "$@" || { echo "BENCH-ERROR insmod krwq.ko $*"; exit 1; }
{ modprobe rdma_rxe && wire_topology &&
	rdma link add rxe0 type rxe netdev vrx &&
	ip netns exec kwa rdma link add krwqw0 type krwq netdev vka &&
	ip netns exec kwa rdma link add krwqw1 type krwq netdev vab &&
	ip netns exec kwb rdma link add krwqw2 type krwq netdev vba &&
	wait_for 20 gid_index krwqw0 198.18.0.2 &&
	wait_for 20 gid_index krwqw1 198.18.1.1 &&
	wait_for 20 gid_index krwqw2 198.18.1.2 &&
	wait_for 20 gid_index rxe0 198.18.0.1; } > $tmp/setup.log 2>&1 || {
	echo "BENCH-ERROR setting up the namespaces and devices"
	sed 's/^/# /' $tmp/setup.log
	exit 1
}

# ends PAIR: sets sns sdev saddr (the server's namespace, device and
# address) and cns cdev caddr (the client's)
ends() {
	case $1 in
	kk) set -- kwb krwqw2 198.18.1.2 kwa krwqw1 198.18.1.1 ;;
	kr) set -- - rxe0 198.18.0.1 kwa krwqw0 198.18.0.2 ;;
	rr) set -- - rxe0 198.18.0.1 - rxe0 198.18.0.1 ;;
	kl) set -- kwa krwqw1 198.18.1.1 kwa krwqw1 198.18.1.1 ;;
	rk) set -- kwa krwqw0 198.18.0.2 - rxe0 198.18.0.1 ;;
	esac
	sns=$1 sdev=$2 saddr=$3 cns=$4 cdev=$5 caddr=$6
}

# run PAIR METRIC KEY TEST ARGS...: perftest's TEST with ARGS between the
# ends of PAIR; prints the client's --out_json KEY as METRIC
run() {
	ru_pair=$1 ru_metric=$2 ru_key=$3
	shift 3
	ends "$ru_pair"
	port=$((port + 1))
	if ! { sg=$(gid_index "$sdev" "$saddr") && cg=$(gid_index "$cdev" "$caddr"); }; then
		echo "BENCH-ERROR $ru_pair: no GID"
		return
	fi
	rm -f $tmp/out.json
	in_ns "$sns" timeout 300 "$@" -d "$sdev" -x "$sg" -p $port > $tmp/server.log 2>&1 &
	ru_s=$!
	wait_for 60 listening_in "$sns" $port
	in_ns "$cns" timeout 300 "$@" -d "$cdev" -x "$cg" -p $port \
		--out_json --out_json_file=$tmp/out.json "$saddr" > $tmp/client.log 2>&1
	ru_c=$?
	wait $ru_s
	ru_sc=$?
	ru_v=$(perftest_json $tmp/out.json "$ru_key")
	if [ $ru_c = 0 ] && [ $ru_sc = 0 ] && [ -n "$ru_v" ]; then
		echo "BENCH wire $ru_metric $ru_pair $ru_v"
	else
		echo "BENCH-ERROR $ru_pair $* (client $ru_c, server $ru_sc)"
		sed 's/^/# /' $tmp/client.log $tmp/server.log | tail -n 20
	fi
}

# udp_bound NS PORT: a UDP socket is bound to PORT in NS (pair.sh's
# socket_on, in NS)
udp_bound() {
	in_ns "$1" sh -c ". /krwq/lib/pair.sh; socket_on $2 07 /proc/net/udp"
}

# floor: udp_floor's latency and streams between kwa and kwb.  The server
# polls without sleeping, so it must be gone before anything else runs:
# it is started as a command of its own (not through a function, which
# the shell would run in a child of its own), so that $! is udp_floor's
# and the kill ends it
floor() {
	port=$((port + 1))
	ip netns exec kwb "$dir/udp_floor" serve $port &
	fl_s=$!
	wait_for 10 udp_bound kwb $port
	for fl_args in "lat 5000" "bw 64 20000" "bw 4096 5000" "bw 65536 500"; do
		# shellcheck disable=SC2086 # fl_args is words
		set -- $fl_args
		fl_mode=$1
		shift
		if in_ns kwa timeout 120 "$dir/udp_floor" "$fl_mode" 198.18.1.2 $port "$@" \
			> $tmp/floor.log 2>&1; then
			read -r fl_metric fl_v < $tmp/floor.log
			echo "BENCH wire $fl_metric udp $fl_v"
		else
			echo "BENCH-ERROR udp_floor $fl_args: $(cat $tmp/floor.log)"
		fi
	done
	kill $fl_s
	wait $fl_s 2> /dev/null
	! udp_bound kwb $port || echo "BENCH-ERROR the udp_floor server outlived its kill"
}

# each METRIC KEY TEST ARGS...: run on every pair, twice, the second
# round in the reverse order
each() {
	for p in kk rr kr kl kl kr rr kk; do
		run "$p" "$@"
	done
}

floor
each send_bw_mibs_64 BW_average ib_send_bw -s 64 -n 2000
each send_bw_mibs_4096 BW_average ib_send_bw -s 4096 -n 1000
each send_bw_mibs_65536 BW_average ib_send_bw -s 65536 -n 200
each send_lat_typical_us_64 t_typical ib_send_lat -s 64 -n 500
each send_lat_ud_typical_us_64 t_typical ib_send_lat -c UD -s 64 -n 500
each write_bw_mibs_4096 BW_average ib_write_bw -s 4096 -n 1000
each read_bw_mibs_4096 BW_average ib_read_bw -s 4096 -n 1000
floor

# the window: netem delays every packet 1 ms on each veth end, a round
# trip of 2 ms, where a requester that waited for each message's answer
# would do 2 KiB/ms; rk is rxe0's requester to krwqw0, over the same link
if wire_netem "delay 1ms limit 10000" > $tmp/netem.log 2>&1; then
	for p in kk kr rk rk kr kk; do
		run "$p" send_bw_mibs_4096_delay BW_average ib_send_bw -s 4096 -n 1000
	done
	for p in kk kr rk rk kr kk; do
		run "$p" write_bw_mibs_4096_delay BW_average ib_write_bw -s 4096 -n 1000
	done
else
	echo "BENCH-ERROR netem: $(cat $tmp/netem.log)"
fi
wire_netem none
for d in krwqw0 krwqw1 krwqw2; do
	echo "# $d: $(rdma statistic show link $d/1 2> /dev/null)"
done
echo "BENCH-DONE"
