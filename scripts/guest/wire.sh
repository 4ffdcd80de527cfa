#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM, krwq.ko loaded (wire on, the default): RoCEv2
# on the wire between network namespaces joined by veth pairs, krwq
# against rdma_rxe and against krwq.  One TAP line per check, then
# "N passed, N failed".
#
#   initial namespace            kwa                       kwb
#   rxe0 on vrx  <--veth-->  krwqw0 on vka
#   198.18.0.1, fd00:18::1   198.18.0.2, fd00:18::2
#                            krwqw1 on vab  <--veth-->  krwqw2 on vba
#                            198.18.1.1, fd00:19::1     198.18.1.2, fd00:19::2
#
#  - each CPU takes the packets a veth hands it: rxe's RC streams reach
#    krwq's responder reordered, and its PSN sequence NAKs have rxe
#    resend (ib_write_bw and ib_send_bw from rxe0);
#  - rdma_rxe holds UDP port 4791 in the initial namespace, so a krwq
#    device there is refused, with a message, and nothing is left of it;
#  - UD through the wire, data checked: ibv_ud_pingpong krwq <-> rxe both
#    ways over IPv4 and IPv6, and krwq <-> krwq between kwa and kwb;
#  - UC through the wire, messages of several packets: ibv_uc_pingpong
#    (data checked) and ib_write_bw -c UC, krwq <-> rxe both ways, and
#    krwq <-> krwq;
#  - RC through the wire: ibv_rc_pingpong (data checked), ib_write_bw,
#    ib_send_bw, ib_read_bw and ib_atomic_bw krwq <-> rxe, rping (data
#    checked) krwq <-> rxe and krwq <-> krwq;
#    udaddy (rdma_cm: SIDR over QP1, then UD) krwq <-> rxe;
#  - rdma_cm, each way krwq <-> rxe and krwq <-> krwq: rping over IPv4 and
#    IPv6 (data checked), ucmatose, perftest -R (ib_send_bw, ib_write_bw
#    and ib_read_bw at 64 B, 4 KiB and 64 KiB; ib_atomic_bw); rstream
#    krwq <-> krwq (data checked);
#  - netem on both links, each fault alone: 3% loss, 1% duplication, 25%
#    reordering, 0.5% corruption; rping krwq <-> rxe both ways and krwq
#    <-> krwq, rstream krwq <-> krwq, data checked; ibv_rc_pingpong
#    (duplication, reordering), perftest READs and atomics and resends
#    counted (loss);
#  - KUnit's krwq_rc_req and krwq_rc_resp: an RC QP on krwqw1 whose peer
#    the test plays, late answers to its requester, duplicates and
#    packets out of sequence to its responder;
#  - krwqw0 to itself, in one namespace, goes through the fabric: not a
#    packet;
#  - the counters: packets out and in, messages on the local path;
#  - a capture of krwq <-> rxe traffic, printed for the host's tshark;
#  - packets corrupted on the link (netem) fail their ICRC, are dropped
#    and counted; the wire works again afterwards;
#  - under rping traffic: the netdev down (the sending end fails with
#    RETRY_EXC_ERR, the wire works again once it is up), rdma link delete
#    and rmmod (the devices go at once, the applications end by
#    themselves); krwq.ko is then loaded again with its parameters.
#
#   wire.sh [volume|faults]
#
# volume: after the namespaces and devices, only the UD, UC and RC runs
# and the rdma_cm applications and perftest, each way; faults: only what
# follows them (netem, KUnit's RC peer, udaddy, the capture, one
# namespace, the corruption and the teardown).  Both by default.  make
# check runs them in separate boots: volume alone without kmemleak,
# faults in the fabric's boot (scripts/check-vm).  A check that walks a
# new path of krwq's goes where kmemleak is (faults), not only in volume
# (docs/testing.md, "Which boots track leaks").
case ${1:-all} in
all | volume | faults) phase=${1:-all} ;;
*) echo "usage: wire.sh [volume|faults]" >&2; exit 2 ;;
esac
# want PART: whether this run has PART
want() { [ "$phase" = all ] || [ "$phase" = "$1" ]; }
log=/tmp/wire.log
port=18900
# round trips of a pingpong, iterations of perftest, pings of rping
pp_iters=100 pf_iters=200 rp_iters=50
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh
# shellcheck source=pair.sh
. /krwq/lib/pair.sh
# shellcheck source=roce.sh
. /krwq/lib/roce.sh
# each result preceded by its time: where the boot's minutes go
tap_t0=$(cut -d. -f1 /proc/uptime)

# tap_detail (tap.sh's, redefined): a failure shows the last lines of
# the log and where every RC and UC QP of the krwq devices stands
# (`rdma resource show qp -dd`: krwq's send queue and wire state)
tap_detail() {
	tap_log_tail
	# the RDMA core's namespace mode is shared: any namespace sees all
	rdma -dd resource show qp 2> /dev/null | grep -E '^link krwq.* type (RC|UC) '
}

# pair_log CRC SRC: after the client's output in $log, its errors (last,
# so that a failure's tail shows them) and exit status CRC, then "---
# server", the server's output, errors and exit status SRC
pair_log() {
	{
		cat /tmp/client.err
		echo "client: exit status $1"
		echo "--- server"
		cat /tmp/server.log /tmp/server.err
		echo "server: exit status $2"
	} >> $log
}

# pingpong_pair T NAME SNS SDEV SADDR CNS CDEV CADDR [HADDR]:
# ibv_T_pingpong (ud: 512-byte datagrams; uc, rc: 4 KiB messages, four
# packets each at the path MTU of 1024), data checked, the server on SDEV in SNS,
# the client on CDEV in CNS; each side names its own GID by its address,
# and the client reaches the server's TCP handshake at HADDR (default
# SADDR; the pingpong's server listens on IPv4 only)
pingpong_pair() {
	pp_t=$1
	shift
	pp_size=512
	[ "$pp_t" != ud ] && pp_size=4096
	port=$((port + 1))
	sg=$(gid_index "$3" "$4") && cg=$(gid_index "$6" "$7")
	if [ -z "$sg" ] || [ -z "$cg" ]; then
		report 1 "$1" "no GID for $4 on $3 or for $7 on $6"
		return
	fi
	ns_pair "$1" "$2" "$5" "listening_in $2 $port" 'iters in' \
		"ibv_${pp_t}_pingpong -d $3 -g $sg -p $port -n $pp_iters -s $pp_size -c" \
		"ibv_${pp_t}_pingpong -d $6 -g $cg -p $port -n $pp_iters -s $pp_size -c ${8:-$4}"
}

# perf_pair NAME "TEST ARGS" SNS SDEV SADDR CNS CDEV CADDR: perftest's
# TEST (ib_write_bw ...) with ARGS (-c UC -s 16384 ...), pf_iters iterations,
# the server on SDEV in SNS, the client on CDEV in CNS reaching its
# handshake at SADDR; both must end well and the client report its line
perf_pair() {
	sg=$(gid_index "$4" "$5") && cg=$(gid_index "$7" "$8")
	if [ -z "$sg" ] || [ -z "$cg" ]; then
		report 1 "$1" "no GID for $5 on $4 or for $8 on $7"
		return
	fi
	perftest_tries "$1" perf_once "$@"
}

# perf_once: one run of perf_pair's, its arguments and $sg, $cg
perf_once() {
	port=$((port + 1))
	ns_run "$1" "$3" "$6" "listening_in $3 $port" "^ *[0-9]+ +$pf_iters " \
		"$2 -d $4 -x $sg -n $pf_iters -p $port" \
		"$2 -d $7 -x $cg -n $pf_iters -p $port $5"
}

# rping_pair NAME SNS SADDR CNS [GRACE]: rdma_cm's rping, rp_iters pings
# of 4 KiB checked by the client (-V), the server bound to SADDR in SNS;
# GRACE as ns_run's
rping_pair() {
	port=$((port + 1))
	ns_pair "$1" "$2" "$4" "cm_listening $port" '' \
		"rping -s -a $3 -p $port -C $rp_iters -S 4096 -V" \
		"rping -c -a $3 -p $port -C $rp_iters -S 4096 -V" ${5:+"$5"}
}

# udaddy_pair NAME SNS SADDR CNS: rdma_cm's UD example, the server bound to
# SADDR in SNS (on udaddy's fixed port, 7174), the client in CNS
udaddy_pair() {
	ns_pair "$1" "$2" "$4" "cm_listening 7174" 'data transfers complete' \
		"udaddy -b $3 -C 20" "udaddy -s $3 -C 20"
}

# ns_pair NAME SNS CNS READY REGEX "SERVER" "CLIENT" [GRACE]: SERVER
# (words) in network namespace SNS, then, once READY (words: a command)
# succeeds or a minute has passed, CLIENT (words) in CNS; both must exit
# 0 and the client's output match REGEX (extended; empty: anything).
# GRACE as ns_run's.
ns_pair() {
	ns_run "$@"
	report $? "$1"
}

# ns_run NAME SNS CNS READY REGEX "SERVER" "CLIENT" [GRACE]: ns_pair's
# run, without its report: the status says whether it passed.  A server
# whose client failed has 10 s to end, then is killed.  With
# GRACE, a server still running GRACE seconds after its client passed is
# killed, and passes if that kill is what ended it and it wrote nothing
# on its standard error: for a server that may wait on a message the
# faults lost after the test's last check (rping's DREQ, below).
ns_run() {
	# ns_exec: $! is the server's, for the kill
	# shellcheck disable=SC2086 # SERVER is words
	ns_exec "$2" timeout 120 $6 > /tmp/server.log 2> /tmp/server.err &
	np_s=$!
	# shellcheck disable=SC2086 # READY is words
	wait_for 60 $4
	# shellcheck disable=SC2086 # CLIENT is words
	in_ns "$3" timeout 90 $7 > $log 2> /tmp/client.err
	np_c=$?
	np_killed=
	if [ -n "${8:-}" ] && [ $np_c = 0 ] && ! wait_for "$8" pid_gone $np_s; then
		kill $np_s 2> /dev/null
		np_killed=1
	fi
	# a server whose client failed may wait for it until its timeout:
	# 10 s, then it is killed (and fails), so a run to be made again
	# (perftest_again) does not wait out the rest of its two minutes
	[ $np_c = 0 ] || wait_for 10 pid_gone $np_s || kill $np_s 2> /dev/null
	wait $np_s
	np_sc=$?
	# ended by that kill (SIGTERM), and not by an error of its own
	if [ -n "$np_killed" ] && [ $np_sc = 143 ] && ! [ -s /tmp/server.err ]; then
		echo "# $1: the server still waited $8 s after its client passed: ended"
		np_sc=0
	fi
	pair_log $np_c $np_sc
	[ $np_c = 0 ] && [ $np_sc = 0 ] && { [ -z "$5" ] || grep -Eq "$5" $log; }
}

# pid_gone PID: process PID has ended
# shellcheck disable=SC2317 # called through wait_for
pid_gone() {
	! kill -0 "$1" 2> /dev/null
}

# perftest_cm NAME SNS SDEV SADDR CNS CDEV SIZE ITERS "TEST ARGS":
# perftest's TEST over rdma_cm (-R), the server on SDEV in SNS, the client
# on CDEV in CNS connecting to SADDR through cm_delay.so (perftest's own
# race between its server's two listens, user/cm_delay/); the client
# must report its row for SIZE bytes and ITERS iterations.  A run whose
# client could not fit perftest's clock (the guest loaded) goes again, up
# to three runs (perftest_tries), as perf_pair's does.
perftest_cm() {
	perftest_tries "$1" perftest_cm_once "$@"
}

# perftest_cm_once: one run of perftest_cm's, its arguments
perftest_cm_once() {
	port=$((port + 1))
	ns_run "$1" "$2" "$5" "cm_listening $port" "^ *$7 +$8 +[0-9.]+" \
		"$9 -d $3 -R -p $port" \
		"env LD_PRELOAD=/krwq/bin/cm_delay.so $9 -d $6 -R -p $port $4"
}

# --- the namespaces, rxe0 and the krwq devices
{ modprobe rdma_rxe && wire_topology &&
	rdma link add rxe0 type rxe netdev vrx; } > $log 2>&1
report $? "namespaces kwa and kwb, veth pairs, rxe0 on vrx"

# rxe holds port 4791 here: a krwq device in this namespace is refused
{ ip link add dwx type dummy && ip link set dwx up; } > $log 2>&1
! rdma link add krwqx type krwq netdev dwx > $log 2>&1 &&
	grep -q 'Address already in use' $log &&
	! [ -e /sys/class/infiniband/krwqx ] &&
	dmesg | grep -q 'krwq: UDP port 4791 is taken in dwx'
report $? "rdma link add in rxe's namespace: refused (EADDRINUSE), with a message, no device"
ip link del dwx > /dev/null 2>&1

{ ip netns exec kwa rdma link add krwqw0 type krwq netdev vka &&
	ip netns exec kwa rdma link add krwqw1 type krwq netdev vab &&
	ip netns exec kwb rdma link add krwqw2 type krwq netdev vba &&
	wait_for 20 gid_index krwqw0 198.18.0.2 &&
	wait_for 20 gid_index krwqw0 fd00:0018:0000:0000:0000:0000:0000:0002 &&
	wait_for 20 gid_index krwqw1 198.18.1.1 &&
	wait_for 20 gid_index krwqw1 fd00:0019:0000:0000:0000:0000:0000:0001 &&
	wait_for 20 gid_index krwqw2 198.18.1.2 &&
	wait_for 20 gid_index krwqw2 fd00:0019:0000:0000:0000:0000:0000:0002 &&
	wait_for 20 gid_index rxe0 198.18.0.1 &&
	wait_for 20 gid_index rxe0 fd00:0018:0000:0000:0000:0000:0000:0001; } > $log 2>&1
report $? "krwqw0 and krwqw1 in kwa, krwqw2 in kwb, their GIDs (one socket per namespace)"

if want volume; then
	# --- UD on the wire
	tx0=$(stat_of krwqw0 wire_tx_packets)
	rx0=$(stat_of krwqw0 wire_rx_packets)
	pingpong_pair ud "ibv_ud_pingpong IPv4, rxe0 server, krwqw0 client (kwa), data checked" \
		- rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
	pingpong_pair ud "ibv_ud_pingpong IPv4, krwqw0 server (kwa), rxe0 client, data checked" \
		kwa krwqw0 198.18.0.2 - rxe0 198.18.0.1
	pingpong_pair ud "ibv_ud_pingpong IPv6, rxe0 server, krwqw0 client (kwa), data checked" \
		- rxe0 fd00:0018:0000:0000:0000:0000:0000:0001 kwa krwqw0 fd00:0018:0000:0000:0000:0000:0000:0002 198.18.0.1
	pingpong_pair ud "ibv_ud_pingpong IPv6, krwqw0 server (kwa), rxe0 client, data checked" \
		kwa krwqw0 fd00:0018:0000:0000:0000:0000:0000:0002 - rxe0 fd00:0018:0000:0000:0000:0000:0000:0001 198.18.0.2
	tx1=$(stat_of krwqw0 wire_tx_packets)
	rx1=$(stat_of krwqw0 wire_rx_packets)
	# four pingpongs of 100 round trips each, each side sending 100 or more
	[ $((tx1 - tx0)) -ge 400 ] && [ $((rx1 - rx0)) -ge 400 ] &&
		[ "$(stat_of krwqw0 wire_icrc_errors)" = 0 ] && has_stat krwqw0 wire_icrc_errors
	report $? "krwqw0's counters: $((tx1 - tx0)) packets out, $((rx1 - rx0)) in (400 or more each), no ICRC error"

	# krwq to krwq across namespaces: the packets go out on one side and come
	# in on the other, counted on both
	a0=$(stat_of krwqw1 wire_tx_packets) b0=$(stat_of krwqw2 wire_rx_packets)
	l0=$(($(stat_of krwqw1 local_msgs) + $(stat_of krwqw2 local_msgs)))
	pingpong_pair ud "ibv_ud_pingpong IPv4, krwqw1 (kwa) server, krwqw2 (kwb) client, data checked" \
		kwa krwqw1 198.18.1.1 kwb krwqw2 198.18.1.2
	a1=$(stat_of krwqw1 wire_tx_packets) b1=$(stat_of krwqw2 wire_rx_packets)
	l1=$(($(stat_of krwqw1 local_msgs) + $(stat_of krwqw2 local_msgs)))
	[ $((a1 - a0)) -ge 100 ] && [ $((b1 - b0)) -ge 100 ] && [ "$l1" = "$l0" ] &&
		has_stat krwqw1 local_msgs && has_stat krwqw2 local_msgs
	report $? "krwqw1 sent $((a1 - a0)) packets and krwqw2 took $((b1 - b0)) off the wire (100 or more each), none by the fabric"

	# --- UC on the wire: messages of several packets, each way
	pingpong_pair uc "ibv_uc_pingpong IPv4, rxe0 server, krwqw0 client (kwa), 4 KiB in 4 packets, data checked" \
		- rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
	pingpong_pair uc "ibv_uc_pingpong IPv6, krwqw0 server (kwa), rxe0 client, 4 KiB in 4 packets, data checked" \
		kwa krwqw0 fd00:0018:0000:0000:0000:0000:0000:0002 - rxe0 fd00:0018:0000:0000:0000:0000:0000:0001 198.18.0.2
	perf_pair "ib_write_bw -c UC, rxe0 server, krwqw0 client (kwa): 200 writes of 16 packets" \
		"ib_write_bw -c UC -s 16384" - rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
	perf_pair "ib_write_bw -c UC, krwqw0 server (kwa), rxe0 client: 200 writes of 16 packets" \
		"ib_write_bw -c UC -s 16384" kwa krwqw0 198.18.0.2 - rxe0 198.18.0.1
	a0=$(stat_of krwqw1 wire_tx_packets) b0=$(stat_of krwqw2 wire_rx_packets)
	pingpong_pair uc "ibv_uc_pingpong IPv4, krwqw1 (kwa) server, krwqw2 (kwb) client, data checked" \
		kwa krwqw1 198.18.1.1 kwb krwqw2 198.18.1.2
	a1=$(stat_of krwqw1 wire_tx_packets) b1=$(stat_of krwqw2 wire_rx_packets)
	[ $((a1 - a0)) -ge 400 ] && [ $((b1 - b0)) -ge 400 ]
	report $? "UC krwqw1 to krwqw2: $((a1 - a0)) packets out, $((b1 - b0)) in (400 or more each: 100 messages of 4 packets)"

	# --- RC on the wire: sends, writes, reads and atomics, each way
	pingpong_pair rc "ibv_rc_pingpong IPv4, rxe0 server, krwqw0 client (kwa), 4 KiB in 4 packets, data checked" \
		- rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
	pingpong_pair rc "ibv_rc_pingpong IPv6, krwqw0 server (kwa), rxe0 client, 4 KiB in 4 packets, data checked" \
		kwa krwqw0 fd00:0018:0000:0000:0000:0000:0000:0002 - rxe0 fd00:0018:0000:0000:0000:0000:0000:0001 198.18.0.2
	# rxe's requester with a QP timeout of about a second (-u 18), not
	# perftest's 67 ms: an ACK timeout that fires while the ACK is on its way
	# can have rxe 6.1 resend with its PSNs one off, which krwq's responder
	# (as rxe's) refuses as an invalid request (docs/wire.md)
	perf_pair "ib_write_bw (RC), krwqw0 server (kwa), rxe0 client: 200 writes of 16 packets" \
		"ib_write_bw -s 16384 -u 18" kwa krwqw0 198.18.0.2 - rxe0 198.18.0.1
	perf_pair "ib_send_bw (RC), rxe0 server, krwqw0 client (kwa): 200 sends of 16 packets" \
		"ib_send_bw -s 16384" - rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
	perf_pair "ib_read_bw, rxe0 server, krwqw0 client (kwa): 200 reads of 16 responses" \
		"ib_read_bw -s 16384" - rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
	perf_pair "ib_read_bw, krwqw0 server (kwa), rxe0 client: 200 reads of 16 responses" \
		"ib_read_bw -s 16384" kwa krwqw0 198.18.0.2 - rxe0 198.18.0.1
	perf_pair "ib_atomic_bw, rxe0 server, krwqw0 client (kwa)" \
		"ib_atomic_bw" - rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
	perf_pair "ib_atomic_bw, krwqw0 server (kwa), rxe0 client" \
		"ib_atomic_bw" kwa krwqw0 198.18.0.2 - rxe0 198.18.0.1
	rping_pair "rping (rdma_cm, RC): rxe0 server, client in kwa on krwqw0, data checked" \
		- 198.18.0.1 kwa
	rping_pair "rping (rdma_cm, RC): server in kwa on krwqw1, client in kwb on krwqw2, data checked" \
		kwa 198.18.1.1 kwb
	rping_pair "rping (rdma_cm, RC): server in kwa on krwqw0, rxe0 client, data checked" \
		kwa 198.18.0.2 -
	rping_pair "rping over IPv6: rxe0 server, client in kwa on krwqw0, data checked" \
		- fd00:18::1 kwa
	rping_pair "rping over IPv6: server in kwa on krwqw0, rxe0 client, data checked" \
		kwa fd00:18::2 -
	rping_pair "rping over IPv6: server in kwa on krwqw1, client in kwb on krwqw2, data checked" \
		kwa fd00:19::1 kwb

	# --- rdma_cm applications and perftest over rdma_cm, each way
	port=$((port + 1))
	ns_pair "ucmatose: rxe0 server, client in kwa on krwqw0, 4 connections x 50 messages each way" \
		- kwa "cm_listening $port" '^data transfers complete' \
		"ucmatose -b 198.18.0.1 -p $port -c 4 -C 50 -S 1024" \
		"ucmatose -s 198.18.0.1 -p $port -c 4 -C 50 -S 1024"
	port=$((port + 1))
	ns_pair "ucmatose: server in kwa on krwqw0, rxe0 client, 4 connections x 50 messages each way" \
		kwa - "cm_listening $port" '^data transfers complete' \
		"ucmatose -b 198.18.0.2 -p $port -c 4 -C 50 -S 1024" \
		"ucmatose -s 198.18.0.2 -p $port -c 4 -C 50 -S 1024"
	port=$((port + 1))
	ns_pair "ucmatose: server in kwb on krwqw2, client in kwa on krwqw1, 4 connections x 50 messages each way" \
		kwb kwa "cm_listening $port" '^data transfers complete' \
		"ucmatose -b 198.18.1.2 -p $port -c 4 -C 50 -S 1024" \
		"ucmatose -s 198.18.1.2 -p $port -c 4 -C 50 -S 1024"
	# rstream krwq <-> rxe is left out: on this kernel rsocket traffic trips
	# KASAN in rxe itself (rxe_mr_copy), as cm.sh notes
	port=$((port + 1))
	ns_pair "rstream (rsocket): server in kwb on krwqw2, client in kwa on krwqw1, 100 x 64 KiB each way, data verified" \
		kwb kwa "cm_listening $port" '^custom +64k +100 +1 ' \
		"rstream -b 198.18.1.2 -p $port -S 65536 -C 100 -T v" \
		"rstream -s 198.18.1.2 -p $port -S 65536 -C 100 -T v"
	# (tap.sh counts in n: the iterations are cm_iters)
	for size in 64 4096 65536; do
		cm_iters=100
		[ $size = 65536 ] && cm_iters=20
		for t in ib_send_bw ib_write_bw ib_read_bw; do
			perftest_cm "$t -R, $cm_iters x $size B: rxe0 server, client in kwa on krwqw0" \
				- rxe0 198.18.0.1 kwa krwqw0 $size $cm_iters "$t -s $size -n $cm_iters"
			perftest_cm "$t -R, $cm_iters x $size B: server in kwa on krwqw0, rxe0 client" \
				kwa krwqw0 198.18.0.2 - rxe0 $size $cm_iters "$t -s $size -n $cm_iters"
			perftest_cm "$t -R, $cm_iters x $size B: server in kwb on krwqw2, client in kwa on krwqw1" \
				kwb krwqw2 198.18.1.2 kwa krwqw1 $size $cm_iters "$t -s $size -n $cm_iters"
		done
	done
	perftest_cm "ib_atomic_bw -R: rxe0 server, client in kwa on krwqw0" \
		- rxe0 198.18.0.1 kwa krwqw0 8 100 "ib_atomic_bw -n 100"
	perftest_cm "ib_atomic_bw -R: server in kwa on krwqw0, rxe0 client" \
		kwa krwqw0 198.18.0.2 - rxe0 8 100 "ib_atomic_bw -n 100"
	perftest_cm "ib_atomic_bw -R: server in kwb on krwqw2, client in kwa on krwqw1" \
		kwb krwqw2 198.18.1.2 kwa krwqw1 8 100 "ib_atomic_bw -n 100"
fi

# the faults, the capture and the teardown: the other part
want faults || { tap_summary; exit; }

# --- faults on the links, each alone, at a lossy network's rates: 3% of
# packets lost, 1% duplicated, 25% reordered (sent ahead of the others,
# which wait 1 ms), 0.5% corrupted.  netem sits on both ends of both
# links, vrx and vka (rxe0 <-> krwqw0) and vab and vba (krwqw1 <->
# krwqw2), so the faults hit rdma_cm's MADs, the RoCEv2 packets each way
# and the answers alike.  Through each: rping each way krwq <-> rxe and
# krwq <-> krwq and rstream krwq <-> krwq, data checked: nothing lost,
# nothing twice, nothing out of order.  ibv_rc_pingpong (data checked)
# runs where nothing is lost: its last message's acknowledgment, lost,
# would have its sender retry against a peer that has already gone, as
# on any network; rping and rstream end through rdma_cm's disconnect,
# which flushes such a send.  Under loss, perftest's READs and atomics
# too, and krwq's requesters must have sent again.  The rxe link shares
# the faults, so a failure there may be rxe's own (how rxe 6.1 resends
# after a timeout: docs/wire.md); a failure's detail shows where each
# krwq QP stands on the wire.
# resends: krwq's requesters' resends so far, after a timeout or a PSN
# sequence error NAK
resends() {
	echo $(($(stat_of krwqw0 ack_timeouts) + $(stat_of krwqw1 ack_timeouts) +
		$(stat_of krwqw2 ack_timeouts)))
}
# rping under faults: its client ends with rdma_disconnect() and at once
# destroys its rdma_cm ID, which stops the kernel's CM from sending its
# DREQ again: one DREQ lost, and the server waits for a disconnect that
# never comes.  So the server gets 10 s after its client passed (ns_run's
# GRACE); one that fails ends by itself, with its error.
# fault_round FAULT: the round under netem FAULT
fault_round() {
	fault=$1
	t0=$(resends)
	wire_netem "$fault" > $log 2>&1
	report $? "tc netem $fault on vrx, vka, vab and vba"
	rping_pair "netem $fault: rping, rxe0 server, client in kwa on krwqw0, data checked" \
		- 198.18.0.1 kwa 10
	rping_pair "netem $fault: rping, server in kwa on krwqw0, rxe0 client, data checked" \
		kwa 198.18.0.2 - 10
	rping_pair "netem $fault: rping, server in kwa on krwqw1, client in kwb on krwqw2, data checked" \
		kwa 198.18.1.1 kwb 10
	port=$((port + 1))
	ns_pair "netem $fault: rstream, server in kwb on krwqw2, client in kwa on krwqw1, 20 x 64 KiB each way, data verified" \
		kwb kwa "cm_listening $port" '^custom +64k +20 +1 ' \
		"rstream -b 198.18.1.2 -p $port -S 65536 -C 20 -T v" \
		"rstream -s 198.18.1.2 -p $port -S 65536 -C 20 -T v"
	case $fault in
	loss*)
		perf_pair "netem $fault: ib_read_bw 16 KiB, krwqw1 (kwa) server, krwqw2 (kwb) client" \
			"ib_read_bw -s 16384" kwa krwqw1 198.18.1.1 kwb krwqw2 198.18.1.2
		perf_pair "netem $fault: ib_atomic_bw, krwqw1 (kwa) server, krwqw2 (kwb) client" \
			"ib_atomic_bw" kwa krwqw1 198.18.1.1 kwb krwqw2 198.18.1.2
		t1=$(resends)
		[ "$t1" -gt "$t0" ]
		report $? "netem $fault: krwq's requesters sent again (ack_timeouts $t0 -> $t1)"
		;;
	duplicate* | delay*)
		pingpong_pair rc "netem $fault: ibv_rc_pingpong, krwqw1 (kwa) server, krwqw2 (kwb) client, data checked" \
			kwa krwqw1 198.18.1.1 kwb krwqw2 198.18.1.2
		;;
	esac
}
# The neighbours resolved before the faults: rping's address resolution
# gives ARP 2 s, with one retransmission at 1 s, and under 3% loss each
# way both tries of a first contact fail now and then (about 0.35% by
# the loss rate): the kernel's ARP, not RDMA under loss.  In make
# check's boot (faults only) nothing has crossed either link before.
{ ping -c 1 -W 5 198.18.0.2 && in_ns kwa ping -c 1 -W 5 198.18.1.2; } > $log 2>&1
report $? "ping over vrx-vka and vab-vba before the faults: neighbours resolved"
rp_iters=20
each_fault fault_round
wire_netem none > /dev/null 2>&1
rp_iters=50

# --- an RC QP of krwqw1's whose peer KUnit plays: krwq_rc_req answers
# its requester, krwq_rc_resp sends to its responder, where each case
# puts a packet (/krwq/krwq_kunit_rc.ko); the QP's own packets go to
# 198.18.1.2, where no QP takes them
insmod /krwq/krwq_kunit_rc.ko rc_dev=krwqw1 rc_src=198.18.1.1 \
	rc_peer=198.18.1.2 > $log 2>&1
for st in req resp; do
	cp /sys/kernel/debug/kunit/krwq_rc_$st/results "/tmp/rc-$st.ktap" 2>> $log
done
rmmod krwq_kunit_rc >> $log 2>&1
for c in req:rw_late_ack_after_nak req:rw_late_atomic_ack_after_timeout \
	req:rw_late_atomic_ack_during_resend_run \
	req:rw_late_read_resp_after_timeout req:rw_late_read_resp_during_resend_run \
	req:rw_read_resp_filling_not_last_fails \
	req:rw_late_ack_in_rnr_wait req:rw_ack_during_resend_run \
	req:rw_naks_with_progress_not_counted req:rw_read_resend_asks_for_rest \
	req:rw_window_sends_ahead req:rw_window_nak_goes_back \
	req:rw_window_rnr_goes_back req:rw_window_read_behind_send \
	req:rw_window_reads_within_depth req:rw_window_local_goes_ahead \
	req:rw_window_local_after_read req:rw_window_fenced_local_waits \
	req:rw_window_local_once_across_go_back \
	req:rw_window_ack_past_read \
	req:rw_window_nak_past_read \
	req:rw_read_resp_leaves_run_regions req:rw_packets_leave_in_order \
	req:rw_xmit_budget_hands_off req:rw_irqs_off_post_leaves_to_send_work \
	req:rw_reset_drops_unsent \
	req:rw_window_ack_during_run \
	resp:rr_duplicate_send_once resp:rr_out_of_sequence_naks_once \
	resp:rr_duplicate_atomic_replayed resp:rr_duplicate_read_read_again \
	resp:rr_write_resumed_mid_message resp:rr_write_past_its_length_refused; do
	st=${c%%:*} c=${c#*:}
	grep -Eq "^ *ok [0-9]+ (- )?$c\$" "/tmp/rc-$st.ktap"
	report $? "KUnit krwq_rc_$st: $c" "$(grep -v '^ *ok ' "/tmp/rc-$st.ktap" | tail -n 20; cat $log)"
done

udaddy_pair "udaddy (rdma_cm SIDR, then UD): rxe0 server, client in kwa on krwqw0" \
	- 198.18.0.1 kwa
udaddy_pair "udaddy (rdma_cm SIDR, then UD): server in kwa on krwqw0, rxe0 client" \
	kwa 198.18.0.2 -

# --- a capture of krwq <-> rxe on vrx, which the host reads with tshark
# (scripts/check-vm), a decoder no one here wrote: UD, UC and RC packets
# from both ends over IPv4 and IPv6, multi-packet messages, READ responses
# and atomics, and rdma_cm's MADs on QP1.  Short runs, to keep the
# capture small; printed gzipped and base64-encoded between @@pcap-begin@@
# and @@pcap-end@@.
pp_iters=10 pf_iters=20 rp_iters=5
tcpdump -Z root -U -s 0 -i vrx -w /tmp/wire.pcap udp port 4791 > /tmp/tcpdump.log 2>&1 &
td=$!
wait_for 10 grep -q 'listening on' /tmp/tcpdump.log
report $? "tcpdump on vrx, for tshark on the host"
pingpong_pair ud "capture: ibv_ud_pingpong IPv6, rxe0 server, krwqw0 client (kwa)" \
	- rxe0 fd00:0018:0000:0000:0000:0000:0000:0001 kwa krwqw0 fd00:0018:0000:0000:0000:0000:0000:0002 198.18.0.1
pingpong_pair uc "capture: ibv_uc_pingpong IPv4, krwqw0 server (kwa), rxe0 client" \
	kwa krwqw0 198.18.0.2 - rxe0 198.18.0.1
pingpong_pair rc "capture: ibv_rc_pingpong IPv6, krwqw0 server (kwa), rxe0 client" \
	kwa krwqw0 fd00:0018:0000:0000:0000:0000:0000:0002 - rxe0 fd00:0018:0000:0000:0000:0000:0000:0001 198.18.0.2
perf_pair "capture: ib_write_bw -c UC, rxe0 server, krwqw0 client (kwa)" \
	"ib_write_bw -c UC -s 4096" - rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
perf_pair "capture: ib_read_bw, krwqw0 server (kwa), rxe0 client" \
	"ib_read_bw -s 4096" kwa krwqw0 198.18.0.2 - rxe0 198.18.0.1
perf_pair "capture: ib_read_bw, rxe0 server, krwqw0 client (kwa)" \
	"ib_read_bw -s 4096" - rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
perf_pair "capture: ib_atomic_bw -A CMP_AND_SWAP, krwqw0 server (kwa), rxe0 client" \
	"ib_atomic_bw -A CMP_AND_SWAP" kwa krwqw0 198.18.0.2 - rxe0 198.18.0.1
perf_pair "capture: ib_atomic_bw, rxe0 server, krwqw0 client (kwa)" \
	"ib_atomic_bw" - rxe0 198.18.0.1 kwa krwqw0 198.18.0.2
rping_pair "capture: rping, rxe0 server, client in kwa on krwqw0" \
	- 198.18.0.1 kwa
pp_iters=100 pf_iters=200 rp_iters=50
sleep 1
kill -INT $td
wait $td
pc=$(wc -c < /tmp/wire.pcap)
[ "$pc" -gt 100000 ]
report $? "tcpdump ended, its capture $pc bytes (more than 100,000)" "$(cat /tmp/tcpdump.log)"
echo "@@pcap-begin@@"
gzip -c /tmp/wire.pcap | base64
echo "@@pcap-end@@"

# --- within one namespace: the fabric, not a packet.  Both ends are on
# krwqw0: the kernel resolves an address of vka's through vab by ARP on
# vab's link (where nobody answers), so krwqw1 cannot name krwqw0.
tx0=$(stat_of krwqw0 wire_tx_packets)
l0=$(stat_of krwqw0 local_msgs)
pingpong_pair ud "ibv_ud_pingpong krwqw0 server and client, in kwa, data checked" \
	kwa krwqw0 198.18.0.2 kwa krwqw0 198.18.0.2
[ "$(stat_of krwqw0 wire_tx_packets)" = "$tx0" ] &&
	[ $(($(stat_of krwqw0 local_msgs) - l0)) -ge 200 ]
report $? "krwqw0 to itself: no packet out, 200 or more local messages"

# --- corruption on the link: every frame rxe0 sends on vrx has a bit
# flipped.  perftest's handshake goes over a second veth pair (vc0, vc1),
# which nothing corrupts; the UD sends of its client get through to
# krwqw0 where the flip lands past the IP and UDP headers (about nine in
# ten), and fail their ICRC there.
{ ip link add vc0 type veth peer name vc1 netns kwa &&
	ip addr add 10.99.0.1/24 dev vc0 && ip -n kwa addr add 10.99.0.2/24 dev vc1 &&
	ip link set vc0 up && ip -n kwa link set vc1 up &&
	tc qdisc add dev vrx root netem corrupt 100%; } > $log 2>&1
report $? "tc netem corrupt 100% on vrx; a clean veth pair for handshakes"
# icrc_errors_since E0 N: krwqw0 has counted N or more ICRC errors
# since it counted E0
icrc_errors_since() {
	[ $(($(stat_of krwqw0 wire_icrc_errors) - $1)) -ge "$2" ]
}
e0=$(stat_of krwqw0 wire_icrc_errors)
port=$((port + 1))
sg=$(gid_index krwqw0 198.18.0.2)
cg=$(gid_index rxe0 198.18.0.1)
ip netns exec kwa timeout 60 ib_send_bw -d krwqw0 -x "$sg" -c UD -n 50 -s 512 \
	-p $port > /tmp/server.log 2>&1 &
cs=$!
wait_for 60 listening_in kwa $port
timeout 60 ib_send_bw -d rxe0 -x "$cg" -c UD -n 50 -s 512 -p $port 10.99.0.2 > $log 2>&1 &
cc=$!
# The server waits for datagrams that never come, and the client, once
# it has sent them, for the server's closing handshake: both would run
# to their timeouts.  Stop both once the errors are counted.
wait_for 60 icrc_errors_since "$e0" 25
kill $cs $cc 2> /dev/null
wait $cs
wait $cc
tc qdisc del dev vrx root > /dev/null 2>&1
e1=$(stat_of krwqw0 wire_icrc_errors)
[ $((e1 - e0)) -ge 25 ]
report $? "50 datagrams corrupted on the link: $((e1 - e0)) failed their ICRC at krwqw0 (25 or more)"

# --- the wire again after that, and teardown
pingpong_pair ud "ibv_ud_pingpong IPv4 after the corruption, rxe0 server, krwqw0 client" \
	- rxe0 198.18.0.1 kwa krwqw0 198.18.0.2

# --- teardown under wire traffic, each while rping runs (-C 0: until
# stopped): the netdev going down, rdma link delete, rmmod.  Nothing may
# hang: the applications end by themselves and the removals complete; the
# boot's splat check and kmemleak scan see the rest.

# bg NAME SECONDS NS CMD...: CMD in namespace NS in the background, its
# output in /tmp/NAME.log and, once it ended, its status in /tmp/NAME.rc
bg() {
	bg_n=$1 bg_t=$2 bg_ns=$3
	shift 3
	rm -f "/tmp/$bg_n.rc"
	: > "/tmp/$bg_n.log"
	{
		in_ns "$bg_ns" timeout "$bg_t" "$@" > "/tmp/$bg_n.log" 2>&1
		echo $? > "/tmp/$bg_n.rc"
	} &
}
ended() { [ -s "/tmp/$1.rc" ]; }
both_ended() { ended rp-s && ended rp-c; }
# pinged N: the rping client has verified N pings or more
pinged() { [ "$(grep -c '^ping data: ' /tmp/rp-c.log)" -ge "$1" ]; }

# rping_bg SNS SADDR CNS: rping between SADDR in SNS and a client in CNS,
# in the background, until at least 20 pings went both ways
rping_bg() {
	port=$((port + 1))
	bg rp-s 300 "$1" rping -s -a "$2" -p $port -C 0 -S 4096 -V
	sleep 3
	bg rp-c 300 "$3" rping -c -a "$2" -p $port -C 0 -S 4096 -V -v
	wait_for 120 pinged 20
}

# rp_state: what became of both sides, for a failure's detail
rp_state() {
	for a in rp-s rp-c; do
		echo "$a: $(cat "/tmp/$a.rc" 2> /dev/null || echo running)"
		grep -v '^ping data: ' "/tmp/$a.log" | tail -n 3
	done
}

# rp_end: stop what is left of the rping pair; status 1 if it lingers
rp_end() {
	killall -9 rping 2> /dev/null
	wait_for 10 both_ended
}

rping_bg kwa 198.18.1.1 kwb
report $? "rping krwqw1 (kwa) <-> krwqw2 (kwb) carries traffic" "$(rp_state)"
ip netns exec kwa rdma -dd resource show qp link krwqw1/1 > $log 2>&1
grep -Eq 'type RC .* drv_sq_tail [0-9]+ .* drv_wire_await [0-9]+ .* drv_wire_rx_epsn 0x[0-9a-f]+' $log
report $? "rdma resource show qp -dd: krwqw1's RC QP with its send queue and wire state"
# With the link down, the end that was sending runs out of retries; the
# other may be waiting for a receive, which no RC QP gives up on, and is
# stopped.
ip -n kwb link set vba down
wait_for 60 grep -q 'completion failed status 12' /tmp/rp-s.log /tmp/rp-c.log
report $? "vba down under rping: an end's send fails with RETRY_EXC_ERR (12) within 60 s" "$(rp_state)"
rp_end
report $? "both ends stopped, their QPs destroyed with the link down" "$(rp_state)"
ip -n kwb link set vba up
wait_for 30 gid_index krwqw2 198.18.1.2 > $log 2>&1
report $? "vba up again: krwqw2's GID for 198.18.1.2 is back"
rping_pair "rping krwqw1 (kwa) <-> krwqw2 (kwb) after vba came back, data checked" \
	kwa 198.18.1.1 kwb

rping_bg - 198.18.0.1 kwa
report $? "rping rxe0 <-> krwqw0 (kwa) carries traffic" "$(rp_state)"
in_ns kwa timeout 60 rdma link delete krwqw0 > $log 2>&1 &&
	! [ -e /sys/class/infiniband/krwqw0 ]
report $? "rdma link delete krwqw0 under rping: done, device gone"
wait_for 60 ended rp-c
report $? "the rping client on krwqw0 ends by itself within 60 s" "$(rp_state)"
rp_end
report $? "rxe0's rping server, whose peer went, stopped" "$(rp_state)"

rping_bg kwa 198.18.1.1 kwb
report $? "rping krwqw1 (kwa) <-> krwqw2 (kwb) carries traffic, before rmmod" "$(rp_state)"
params=$(for p in /sys/module/krwq/parameters/*; do printf '%s=%s ' "${p##*/}" "$(cat "$p")"; done)
timeout 60 rmmod krwq > $log 2>&1 && ! [ -e /sys/module/krwq ]
report $? "rmmod krwq under rping between krwqw1 and krwqw2: done, module gone"
wait_for 60 both_ended
report $? "both rping ends end by themselves within 60 s of the rmmod" "$(rp_state)"
rp_end
# shellcheck disable=SC2086 # NAME=VALUE words
insmod /krwq/krwq.ko $params > $log 2>&1
report $? "krwq.ko loaded again as before ($params)"
{ rdma link delete rxe0 && ip link del vc0 && ip link del vrx &&
	ip netns del kwa && ip netns del kwb &&
	modprobe -r rdma_rxe; } > $log 2>&1
report $? "the devices, namespaces and rdma_rxe removed"

tap_summary
