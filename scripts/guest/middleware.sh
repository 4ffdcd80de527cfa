#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Middleware on krwq, inside the test VM, as Debian ships it: UCX's
# ucx_perftest over its rc_verbs and ud_verbs transports, a two-rank Open
# MPI job over UCX (rc_verbs, ud_verbs and self: no shared memory) whose
# data is checked (krwq_mpi_check), and on a netdev-bound device also
# libfabric's fi_pingpong over verbs (msg, and rdm through ofi_rxm) and
# rsockets (riostream, rcopy, and a plain TCP program through
# librspreload).  Server and client share the device.  Prints TAP,
# ending with "N passed, N failed".
#   middleware.sh DEVICE...
# DEVICE is krwq0 (the IB-mode device krwq.ko makes) or krwqe0, which is
# made here on a dummy netdev with 192.0.2.1/28.  Each program's run is
# also checked against the device's counters: a client that quietly fell
# back to TCP or shared memory would leave them still.
log=/tmp/middleware.log
port=18800
tap_t0=$(cut -d. -f1 /proc/uptime)
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh
# shellcheck source=pair.sh
. /krwq/lib/pair.sh
# shellcheck source=roce.sh
. /krwq/lib/roce.sh

addr=192.0.2.1
rspreload=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so

# msgs DEVICE: how many messages (SEND, WRITE, READ, atomic or datagram)
# DEVICE has carried so far
msgs() { stat_of "$1" local_msgs; }

# moved DEVICE BEFORE: DEVICE carried at least 50 messages since msgs
# printed BEFORE.  rdma_cm's own datagrams (a handful per connection) go
# through the device too, so a program that connected and then fell back
# to TCP moves it by less; every run here moves it by hundreds.
moved() {
	mv_now=$(msgs "$1")
	[ "$mv_now" -ge $(($2 + 50)) ] 2> /dev/null && return 0
	echo "local_msgs of $1 went from $2 to $mv_now: the traffic did not go through it" >> "$log"
	return 1
}

# serve_rdma PORT: wait, at most 60 s, until the server started last
# ($sp) listens on PORT or has ended
serve_rdma() {
	k=0
	until cm_listening "$1" || ! kill -0 "$sp" 2> /dev/null || [ $k -ge 600 ]; do
		sleep 0.1
		k=$((k + 1))
	done
}

# end_server: the server ($sp) ended, or killed if its client failed
# (crc), so that it does not wait out its timeout; sets src and puts the
# server's output in $log after the client's, as pair.sh does
end_server() {
	[ "$crc" = 0 ] || kill "$sp" 2> /dev/null
	wait "$sp"
	src=$?
	echo "--- server" >> "$log"
	cat /tmp/server.log >> "$log"
}

# make_roce NAME: NAME on dummy netdev md0 with $addr, its port active
make_roce() {
	{
		ip link add md0 type dummy &&
			ip link set md0 up &&
			ip addr add $addr/28 dev md0 &&
			rdma link add "$1" type krwq netdev md0
	} > "$log" 2>&1 &&
		wait_for 10 grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state"
}

# ucx DEVICE ROCE: ucx_perftest over rc_verbs and ud_verbs.  On RoCE,
# UCX 1.13's ud_verbs reads the packet's kind from wc.sl the way one
# vendor's NIC encodes it, and drops krwq's (and rxe's) datagrams unless
# told not to check (docs/using.md)
ucx() {
	for tl_test in rc_verbs:put_bw rc_verbs:am_bw ud_verbs:am_lat ud_verbs:am_bw; do
		tl=${tl_test%:*} t=${tl_test#*:}
		before=$(msgs "$1")
		run_pair env UCX_UD_ETH_DGID_CHECK=n ucx_perftest -- \
			env UCX_UD_ETH_DGID_CHECK=n ucx_perftest -d "$1:1" -x "$tl" -t "$t" -n 1000
		[ $crc = 0 ] && [ $src = 0 ] &&
			sed '/^--- server$/,$d' "$log" | grep -q '^Final:' && moved "$1" "$before"
		report $? "$1 ucx_perftest -x $tl -t $t"
	done
}

# mpi DEVICE: krwq_mpi_check on two ranks, UCX on DEVICE only, launched
# here without ssh (plm isolated)
mpi() {
	before=$(msgs "$1")
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		timeout 600 orterun -np 2 --oversubscribe --bind-to none --mca plm isolated \
		--mca pml ucx --mca btl self --mca osc '^ucx' \
		-x UCX_NET_DEVICES="$1:1" -x UCX_TLS=rc_verbs,ud_verbs,self \
		-x UCX_UD_ETH_DGID_CHECK=n krwq_mpi_check > "$log" 2>&1 &&
		grep -q '^krwq_mpi_check: every byte checked' "$log" &&
		moved "$1" "$before"
	report $? "$1 Open MPI over UCX (rc_verbs, ud_verbs, self), 2 ranks: ping-pong 1 B-1 MiB and allreduce, data checked"
}

# fabric DEVICE: fi_pingpong over libfabric's verbs provider, connected
# (msg) and reliable-datagram (rdm, ofi_rxm over verbs).  ofi_rxm sizes
# its CQ for FI_UNIVERSE_SIZE peers, by default more entries than krwq's
# (or rxe's) max_cqe
fabric() {
	for ep in msg rdm; do
		port=$((port + 1))
		before=$(msgs "$1")
		p=verbs
		[ $ep = msg ] || p='verbs;ofi_rxm'
		FI_UNIVERSE_SIZE=16 timeout 300 fi_pingpong -p "$p" -e $ep -d "$1" -B $port -I 10 -S all -c \
			> /tmp/server.log 2>&1 &
		sp=$!
		wait_listening $port $sp
		FI_UNIVERSE_SIZE=16 timeout 300 fi_pingpong -p "$p" -e $ep -d "$1" -P $port -I 10 -S all -c $addr \
			> "$log" 2>&1
		crc=$?
		end_server
		[ $crc = 0 ] && [ $src = 0 ] &&
			sed '/^--- server$/,$d' "$log" | grep -q '^1m ' && moved "$1" "$before"
		report $? "$1 fi_pingpong -p '$p' -e $ep, every size of -S all (1 MiB among them), data checked"
	done
}

# rsockets DEVICE: librdmacm's socket layer, by its own test programs and
# under an unmodified TCP program
rsockets() {
	port=$((port + 1))
	timeout 300 riostream -b $addr -p $port -S 65536 -C 100 -T v > /tmp/server.log 2>&1 &
	sp=$!
	serve_rdma $port
	before=$(msgs "$1")
	timeout 300 riostream -s $addr -p $port -S 65536 -C 100 -T v > "$log" 2>&1
	crc=$?
	end_server
	[ $crc = 0 ] && [ $src = 0 ] && moved "$1" "$before"
	report $? "$1 riostream (rsocket, RDMA-mapped I/O), 100 x 64 KiB each way, data verified"

	# 8 MiB of random bytes copied by rcopy, and back by a TCP program
	# whose sockets librspreload turns into rsockets
	head -c 8388608 /dev/urandom > /tmp/src.bin
	want=$(md5sum < /tmp/src.bin)
	port=$((port + 1))
	timeout 300 rcopy -p $port > /tmp/server.log 2>&1 &
	sp=$!
	serve_rdma $port
	before=$(msgs "$1")
	rm -f /tmp/rcopy.bin
	timeout 300 rcopy /tmp/src.bin $addr:/tmp/rcopy.bin -p $port > "$log" 2>&1
	crc=$?
	kill $sp 2> /dev/null
	wait $sp
	[ $crc = 0 ] && [ "$(md5sum < /tmp/rcopy.bin)" = "$want" ] && moved "$1" "$before"
	report $? "$1 rcopy (rsocket), 8 MiB file, copy identical"

	port=$((port + 1))
	rm -f /tmp/nc.bin
	LD_PRELOAD=$rspreload timeout 300 nc.traditional -l -s $addr -p $port > /tmp/nc.bin 2> /tmp/server.log &
	sp=$!
	serve_rdma $port
	before=$(msgs "$1")
	LD_PRELOAD=$rspreload timeout 300 nc.traditional -q 0 $addr $port < /tmp/src.bin > "$log" 2>&1
	crc=$?
	end_server
	[ $crc = 0 ] && [ $src = 0 ] && [ "$(md5sum < /tmp/nc.bin)" = "$want" ] && moved "$1" "$before"
	report $? "$1 nc through librspreload (TCP as rsockets), 8 MiB, copy identical"
	rm -f /tmp/src.bin /tmp/rcopy.bin /tmp/nc.bin
}

for dev in "$@"; do
	roce=0
	if [ ! -e "/sys/class/infiniband/$dev" ]; then
		make_roce "$dev"
		r=$?
		report $r "$dev made on a dummy netdev, port active"
		[ $r = 0 ] || continue
		roce=1
	fi
	ucx "$dev"
	mpi "$dev"
	[ $roce = 0 ] || {
		fabric "$dev"
		rsockets "$dev"
		# what the boot's later parts find is what they made
		rdma link delete "$dev" && ip link del md0
		report $? "$dev deleted, and its netdev"
	}
done
tap_summary
