#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# hosts.sh - two machines: runs in each of two VMs whose eth0s are joined
# by a link (scripts/vm --link; scripts/check-hosts starts both).  Every
# packet between them crosses the link, so RoCEv2 leaves one kernel and
# enters the other.
#   hosts.sh serve   host A (192.0.2.1, 2001:db8:f::1): krwqa, a krwq
#                    device on eth0, and an NVMe over Fabrics target on
#                    it (a memory-backed null_blk, 192.0.2.1:4420), and
#                    the kernel's NFS server (a tmpfs exported, nfsd on
#                    rdma port 20049); then it answers host B's requests
#                    (below) until B says "done", and tears all of it
#                    down
#   hosts.sh drive   host B (192.0.2.2, 2001:db8:f::2): the tests against
#                    A, first with krwqb, a krwq device on eth0, then,
#                    krwq unloaded, with rxeb, rdma_rxe's, on eth0:
#                    rping -V over IPv4 and IPv6 with the server on A,
#                    rping -V with the server on B, ib_send_bw,
#                    ib_write_bw and ib_read_bw -R, and NVMe-oF both
#                    ways: B's nvme-rdma against A's target, and A's
#                    against a target on B, each SIZE_MIB (default 64)
#                    written and verified, and NFS over RDMA (NFSv3 and
#                    NFSv4.2, B's client against A's nfsd, NFS_MIB
#                    (default 32) written and verified each); then,
#                    krwqb against krwqa, NVMe-oF (16 MiB verified)
#                    through netem's 3% loss, 1% duplication, 25%
#                    reordering and 0.5% corruption
#                    on both ends of the link, one at a time
#   hosts.sh bench-serve   host A for `scripts/bench --only hosts`: as
#                    serve, and at the end whichever device serves then
#                    is taken down
#   hosts.sh bench-drive   host B: NVMe-oF 4 KiB random reads at iodepth 1
#                    and 32 (bench_fio) from B's nvme-rdma to A's target,
#                    for each pair of devices in turn: krwqb to krwqa
#                    (kk), rxeb to krwqa (rk), then, A's target moved to
#                    rxea (swap-to-rxe), rxeb to rxea (rr) and krwqb to
#                    rxea (kr)
# Each prints TAP and ends with "N passed, N failed"; bench-drive prints
# its figures as "BENCH hosts METRIC PAIR VALUE" lines too.
#
# The requests: B sends one line to A's TCP port 7000 (busybox nc; A runs
# one `hosts.sh request` per connection) and reads the answer:
#   hello                   "hello": A is up, its device ready
#   serve PORT CMD...       starts the server CMD in the background and
#                           answers "ready" once an rdma_cm ID listens on
#                           PORT, else "not listening" and its output
#   result PORT             waits for the server on PORT to end (60 s,
#                           then kills it); answers "status N" and its
#                           output
#   run SECONDS CMD...      runs CMD (a client) under timeout, its stdin
#                           not the socket; answers "status N" and its
#                           output
#   done                    A may tear down and end
# Words are split on blanks: no argument holds one.
# scripts/vm puts the libraries in /krwq/lib
# shellcheck source=scripts/guest/tap.sh
. /krwq/lib/tap.sh
# shellcheck source=scripts/guest/nvmeof-lib.sh
. /krwq/lib/nvmeof-lib.sh
# shellcheck source=scripts/guest/nfs-lib.sh
. /krwq/lib/nfs-lib.sh
tap_t0=$(cut -d. -f1 /proc/uptime)
log=/tmp/hosts.log
a4=192.0.2.1 a6=2001:db8:f::1
b4=192.0.2.2 b6=2001:db8:f::2
rport=7000
nqn=nqn.2026-12.org.example.krwq:hosts-a
nqn_b=nqn.2026-12.org.example.krwq:hosts-b
size_mib=${SIZE_MIB:-64}
# what each NFS mount writes and verifies: NVMe-oF's SIZE_MIB already
# takes the path through long transfers, and time is the boot's
nfs_mib=${NFS_MIB:-32}
# srv_of PORT: where the files of the server on PORT go (sets srv); each
# test has a port of its own, so a server that outlived its test never
# answers for the next
srv_of() { srv=/tmp/hosts-srv-$1; }
done_flag=/tmp/hosts.done
# fio's bound within one of A's runs for B (ask's "run"): 64 MiB under TCG
# takes 15-25 s
fio_tmo=300

# --- both hosts

# link_up ADDR4 ADDR6: eth0, the link to the other host, up with ADDR4/24
# and ADDR6/64
link_up() {
	{
		timeout 60 modprobe -a virtio_pci virtio_net &&
			wait_for 20 test -e /sys/class/net/eth0 &&
			ip link set eth0 up &&
			ip addr add "$1/24" dev eth0 &&
			ip -6 addr add "$2/64" dev eth0 nodad
	} > "$log" 2>&1
	report $? "eth0 (virtio-net, the link) up with $1/24 and $2/64"
}

# server_start CMD...: CMD in the background under timeout (300 s), its
# output in $srv.log, its exit status in $srv.rc when it ends; nothing
# of it holds this shell's standard streams (on A, the request's socket)
server_start() {
	rm -f "$srv.rc" "$srv.pid"
	(
		timeout 300 "$@" > "$srv.log" 2>&1 &
		echo $! > "$srv.pid"
		wait $!
		echo $? > "$srv.rc"
	) < /dev/null > /dev/null 2>&1 &
	wait_for 10 test -s "$srv.pid"
}

server_ended() { [ -s "$srv.rc" ]; }

# server_settle SECONDS: wait for the server to end, killing it after
# SECONDS; prints its exit status
server_settle() {
	wait_for "$1" server_ended || kill "$(cat "$srv.pid")" 2> /dev/null
	wait_for 10 server_ended
	cat "$srv.rc" 2> /dev/null || echo none
}

# listening_or_ended PORT: the server listens on PORT, or gave up
listening_or_ended() { cm_listening "$1" || server_ended; }

# to_rxe DEV RXE: this host's krwq device DEV deleted and krwq.ko
# unloaded, rdma_rxe loaded (it binds RoCEv2's UDP port as it loads,
# which krwq held) and its device RXE added on eth0
to_rxe() {
	check "rdma link delete $1" 60 rdma link delete "$1"
	check "rmmod krwq" 60 rmmod krwq
	timeout 60 modprobe crc32_generic 2> /dev/null
	check "modprobe rdma_rxe" 60 modprobe rdma_rxe
	link_add rxe "$2" eth0
}

# --- host A

# request: one request from B, read from stdin, answered on stdout
request() {
	read -r rq_line || return 0
	# shellcheck disable=SC2086 # the request's words
	set -- $rq_line
	rq_what=$1
	shift
	case $rq_what in
	hello) echo hello ;;
	serve)
		rq_port=$1
		shift
		srv_of "$rq_port"
		server_start "$@"
		if wait_for 60 listening_or_ended "$rq_port" && cm_listening "$rq_port"; then
			echo ready
		else
			echo "not listening"
			cat "$srv.log"
		fi ;;
	result)
		srv_of "$1"
		echo "status $(server_settle 60)"
		cat "$srv.log" ;;
	run)
		rq_secs=$1
		shift
		timeout "$rq_secs" "$@" < /dev/null > /tmp/hosts-run.log 2>&1
		echo "status $?"
		cat /tmp/hosts-run.log ;;
	done)
		touch $done_flag
		echo bye ;;
	*) echo "unknown request $rq_what" ;;
	esac
}

# serve_until_done [nfs]: krwqa and the target on it up (with nfs, an
# NFS server too), B's requests served until B says "done"
serve_until_done() {
	link_up $a4 $a6
	link_add krwq krwqa eth0
	modules_up 0
	target_up "$nqn" $a4
	[ "${1:-}" != nfs ] || nfs_server_up
	rm -f $done_flag
	nc -ll -p $rport -e /bin/sh /krwq/add/hosts.sh request &
	nc_pid=$!
	wait_for 10 sh -c "netstat -ltn | grep -q ':$rport '"
	report $? "requests served on TCP port $rport"
	echo "# waiting for host B"
	# B's tests take minutes; bounded by the VM's own timeout too
	wait_for 1500 test -e $done_flag
	report $? "host B said done"
	kill $nc_pid 2> /dev/null
}

serve() {
	serve_until_done nfs
	# its ICRC errors are B's to judge: B's faults corrupt packets
	c_tx=$(stat_of krwqa wire_tx_packets) c_rx=$(stat_of krwqa wire_rx_packets)
	c_bad=$(stat_of krwqa wire_icrc_errors)
	[ "$c_tx" -gt 0 ] && [ "$c_rx" -gt 0 ]
	report $? "krwqa's counters: $c_tx packets out, $c_rx in, $c_bad ICRC errors"
	nfs_server_down
	nfs_modules_gone
	target_down "$nqn"
	modules_down
	check "rdma link delete krwqa" 60 rdma link delete krwqa
	tap_summary
}

bench_serve() {
	serve_until_done
	target_down "$nqn"
	modules_down
	for d in krwqa rxea; do
		[ ! -e "/sys/class/infiniband/$d" ] ||
			check "rdma link delete $d" 60 rdma link delete $d
	done
	tap_summary
}

# swap_to_rxe: at B's request, A's target moves from krwqa to rxea
swap_to_rxe() {
	target_down "$nqn"
	modules_down
	to_rxe krwqa rxea
	modules_up 0
	target_up "$nqn" $a4
	tap_summary
}

# --- host B

# ask REQUEST...: REQUEST to A; its answer on stdout (a run of the
# NVMe-oF host takes minutes)
ask() {
	echo "$*" | timeout 1300 nc -w 5 $a4 $rport
}

a_answers() { ask hello | grep -qx hello; }

# remote_pair TEXT PORT SERVER CLIENT: SERVER (words) on A listening on
# PORT, CLIENT (words) here against it; reports TEXT when both exit 0
# and the client's output matches $want_client and the server's
# $want_server (extended regular expressions).  The log holds the
# client's output, then A's answer about the server.
remote_pair() {
	rp_text=$1 rp_port=$2 rp_server=$3 rp_client=$4
	ask serve "$rp_port" "$rp_server" > /tmp/hosts-ask.log
	if ! grep -qx ready /tmp/hosts-ask.log; then
		cp /tmp/hosts-ask.log $log
		# the server must not outlive its test
		ask result "$rp_port" >> $log
		report 1 "$label $rp_text"
		return
	fi
	# shellcheck disable=SC2086 # the client's words
	tap_run $log timeout 300 $rp_client
	rp_crc=$?
	echo "--- server" >> $log
	ask result "$rp_port" >> $log
	rp_src=$(sed -n '/^--- server$/{n;s/^status //p}' $log)
	echo "client exited $rp_crc, server $rp_src" >> $log
	[ $rp_crc = 0 ] && [ "$rp_src" = 0 ] &&
		sed '/^--- server$/,$d' $log | grep -Eq "$want_client" &&
		sed -n '/^--- server$/,$p' $log | grep -Eq "$want_server"
	report $? "$label $rp_text"
}

# local_pair TEXT PORT SERVER CLIENT: SERVER here listening on PORT,
# CLIENT on A (run); checked as remote_pair's
local_pair() {
	lp_text=$1 lp_port=$2
	srv_of "$lp_port"
	# shellcheck disable=SC2086 # the server's words
	server_start $3
	wait_for 60 cm_listening "$lp_port"
	ask run 300 "$4" > $log
	lp_crc=$(sed -n '1s/^status //p' $log)
	lp_src=$(server_settle 60)
	{ echo "--- server"; cat "$srv.log"; echo "client exited $lp_crc, server $lp_src"; } >> $log
	[ "$lp_crc" = 0 ] && [ "$lp_src" = 0 ] &&
		sed '/^--- server$/,$d' $log | grep -Eq "$want_client" &&
		sed -n '/^--- server$/,$p' $log | grep -Eq "$want_server"
	report $? "$label $lp_text"
}

# against DEV: the tests with DEV, this host's device, against A's krwqa
against() {
	dev=$1
	label="$dev -> krwqa:"
	ag_t0=$(now)
	# rping -V checks every ping's data; -v shows each, the 100th last
	want_client='^ping data: rdma-ping-99: ' want_server='^server ping data: rdma-ping-99: '
	for ad in "$a4 IPv4" "$a6 IPv6"; do
		port=$((port + 1))
		remote_pair "rping over ${ad#* }, server on A, 100 x 4 KiB, data verified" $port \
			"rping -s -a ${ad% *} -p $port -C 100 -S 4096 -V -v" \
			"rping -c -a ${ad% *} -p $port -C 100 -S 4096 -V -v"
	done
	port=$((port + 1))
	local_pair "rping over IPv4, server on B, 100 x 4 KiB, data verified" $port \
		"rping -s -a $b4 -p $port -C 100 -S 4096 -V -v" \
		"rping -c -a $b4 -p $port -C 100 -S 4096 -V -v"

	# perftest prints its result row under the header
	want_client='^ *[0-9]+ +[0-9]+ +[0-9.]+' want_server=.
	for pt in ib_send_bw ib_write_bw ib_read_bw; do
		port=$((port + 1))
		remote_pair "$pt -R, 64 KiB x 200" $port \
			"$pt -d krwqa -R -n 200 -p $port" \
			"env LD_PRELOAD=/krwq/bin/cm_delay.so $pt -d $dev -R -n 200 -p $port $a4"
	done

	echo "# $label NVMe-oF: nvme-rdma here, nvmet-rdma on A"
	check "modprobe nvme-rdma" 60 modprobe nvme-rdma
	nvme_host "$nqn" $a4

	echo "# $label NVMe-oF: nvmet-rdma here, nvme-rdma on A"
	modules_up 0
	target_up "$nqn_b" $b4
	ask run 1200 sh /krwq/add/hosts.sh nvme-host "$nqn_b" $b4 > $log
	[ "$(sed -n '1s/^status //p' $log)" = 0 ]
	report $? "$label A's nvme-rdma against this target: connect, $size_mib MiB written and verified, disconnect ($(grep -c '^ok ' $log) checks)"
	target_down "$nqn_b"
	modules_down

	nfs_client "$dev"
	echo "# $label $(($(now) - ag_t0)) s"
}

# nfs_client DEV: NFS over RDMA, the client here on DEV, A's nfsd on
# krwqa: for NFSv3 and NFSv4.2, the mount, the client's RC QP on DEV,
# NFS_MIB written, the caches dropped, read back and verified; then the
# client's modules unloaded
nfs_client() {
	echo "# $label NFS over RDMA: the client here, nfsd on A"
	check "modprobe -a nfsv3 nfsv4 rpcrdma" 60 modprobe -a nfsv3 nfsv4 rpcrdma
	nfc_mib=$size_mib
	size_mib=$nfs_mib
	for vers in 3 4.2; do
		nfs_mount $vers $a4
		grep -q " $mnt nfs" /proc/mounts || continue
		nfc_qps=$(timeout 30 rdma resource show qp link "$1/1" | grep -c 'type RC state RTS')
		nfc_aqps=$(ask run 30 rdma resource show qp link krwqa/1 | grep -c 'type RC state RTS')
		[ "$nfc_qps" -ge 1 ] && [ "$nfc_aqps" -ge 1 ]
		report $? "$label NFSv$vers: rdma resource shows connected RC QPs, the client's on $1 ($nfc_qps), nfsd's on krwqa ($nfc_aqps)" \
			"$(rdma resource show qp link "$1/1" 2>&1)"
		write_and_verify "$mnt/$1-v$vers"
		rm -f "$mnt/$1-v$vers"
		check "$label umount $mnt (NFSv$vers)" 60 umount $mnt
	done
	size_mib=$nfc_mib
	nfs_modules_gone
}

# nvme_host NQN ADDR [nvme connect option...]: the host's part: connect
# to NQN at ADDR, write and verify the pattern, disconnect
nvme_host() {
	if connect "$@"; then
		write_and_verify "$ns"
		disconnect "$1"
	fi
}

# icrc_of_a: krwqa's ICRC errors, as A's rdma tool counts them; "?" if
# A did not say (no answer, or no such counter)
icrc_of_a() {
	ia_out=$(ask run 30 rdma statistic show link krwqa/1)
	ia_n=$(echo "$ia_out" | tr ' ' '\n' | grep -A1 -x wire_icrc_errors | tail -n 1)
	case $ia_out in
	"status 0"*) ;;
	*) ia_n= ;;
	esac
	case $ia_n in
	'' | *[!0-9]*) echo "?" ;;
	*) echo "$ia_n" ;;
	esac
}

# counted N...: each N is a count (not "?" or empty)
counted() {
	for cn; do
		case $cn in '' | *[!0-9]*) return 1 ;; esac
	done
}

# netem_off: no netem on either end of the link, each cleared whatever
# became of the other
netem_off() {
	tc qdisc del dev eth0 root > $log 2>&1
	no_rc=$?
	ask run 30 /sbin/tc qdisc del dev eth0 root >> $log
	grep -qx 'status 0' $log && [ $no_rc = 0 ]
}

# fault_round FAULT: faults()'s round under netem FAULT on both ends
fault_round() {
	fault=$1
	fl_b=$(stat_of krwqb wire_icrc_errors) fl_a=$(icrc_of_a)
	# A's by its path: busybox's timeout, which runs A's requests,
	# would run its own tc applet
	# shellcheck disable=SC2086 # the fault is words
	tc qdisc replace dev eth0 root netem $fault > $log 2>&1 &&
		ask run 30 /sbin/tc qdisc replace dev eth0 root netem $fault >> $log &&
		grep -qx 'status 0' $log
	report $? "$label netem $fault on both ends of the link"
	echo "# $label netem $fault: NVMe-oF, nvme-rdma here, nvmet-rdma on A"
	# Through loss, a lost CM message is sent again after the CM's
	# response timeout (about 4 s), and the controller's set-up, which
	# sends no command while an I/O queue connects, can outlast the
	# default 5 s keep-alive timeout: the target then drops the
	# controller and the I/O queue's connect is refused (seen once in
	# 3% loss).  A lossy link's host allows more.
	fio_offset=$fl_off nvme_host "$nqn" $a4 --keep-alive-tmo=30
	fl_off=$((fl_off + size_mib))
	fl_b2=$(stat_of krwqb wire_icrc_errors) fl_a2=$(icrc_of_a)
	case $fault in
	corrupt*)
		counted "$fl_a" "$fl_a2" && [ "$fl_b2" -gt "$fl_b" ] && [ "$fl_a2" -gt "$fl_a" ]
		report $? "$label netem $fault: corrupted packets failed their ICRC and were dropped (krwqb $fl_b -> $fl_b2, krwqa $fl_a -> $fl_a2)"
		;;
	*)
		counted "$fl_a" "$fl_a2" && [ "$fl_b2" = "$fl_b" ] && [ "$fl_a2" = "$fl_a" ]
		report $? "$label netem $fault: no ICRC error at either end (krwqb $fl_b2, krwqa $fl_a2)"
		;;
	esac
}

# faults: NVMe-oF through netem on both ends of the link, each of
# roce.sh's faults alone (each_fault).  Each time this host's
# nvme-rdma connects to A's target and writes 16 MiB, reads them back and
# verifies them: the kernel's own RC traffic (capsules by SEND, data by
# RDMA READ and WRITE), nothing lost or written twice.  Each round
# writes a range of its own that no run wrote before (from 64 MiB on:
# fio's verify would pass an earlier run's blocks), within fio_tmo of
# 200 s a step, so that a failing round still ends inside the boot's
# time.  The corrupted packets must fail their ICRC at both ends.  Sets
# a_icrc: krwqa's ICRC errors after the faults.
faults() {
	fl_mib=$size_mib fl_tmo=$fio_tmo
	size_mib=16 fio_tmo=200
	fl_off=64
	check "modprobe nvme-rdma" 60 modprobe nvme-rdma
	each_fault fault_round
	netem_off
	report $? "$label netem off both ends of the link"
	a_icrc=$(icrc_of_a)
	# modprobe -r's status covers the dependencies it then tries to drop:
	# what counts is that nvme-rdma is gone (as modules_down)
	timeout 60 modprobe -r nvme-rdma > $log 2>&1
	! loaded nvme_rdma
	report $? "modprobe -r nvme-rdma: gone"
	size_mib=$fl_mib fio_tmo=$fl_tmo
}

drive() {
	# each test's port, across both devices' rounds
	port=18800
	link_up $b4 $b6
	wait_for 300 a_answers
	report $? "host A answers on $a4:$rport"

	link_add krwq krwqb eth0
	against krwqb
	c_tx=$(stat_of krwqb wire_tx_packets) c_bad=$(stat_of krwqb wire_icrc_errors)
	c_local=$(stat_of krwqb local_msgs) c_abad=$(icrc_of_a)
	has_stat krwqb wire_icrc_errors && [ "$c_tx" -gt 0 ] && [ "$c_bad" = 0 ] &&
		[ "$c_abad" = 0 ]
	report $? "krwqb's counters: $c_tx packets out, $c_bad ICRC errors (krwqa $c_abad), $c_local messages on the local path"
	faults
	to_rxe krwqb rxeb
	against rxeb
	c_abad=$(icrc_of_a)
	counted "$a_icrc" "$c_abad" && [ "$c_abad" = "$a_icrc" ]
	report $? "krwqa: no ICRC error from rxeb's packets ($a_icrc, then $c_abad)"
	check "rdma link delete rxeb" 60 rdma link delete rxeb

	ask "done" > /dev/null
	tap_summary
}

# --- the bench, host B

# fio's measured seconds per job, after 2 s of warm-up
bench_secs=${BENCH_SECS:-10}

# bench_fio PAIR: 4 KiB random reads on /dev/$ns at iodepth 1 and 32;
# one "BENCH hosts METRIC PAIR IOPS" line per job (fio's terse output,
# whose eighth field is the read IOPS), or a BENCH-ERROR line
bench_fio() {
	for qd in 1 32; do
		timeout 120 fio --name=bench --filename="/dev/$ns" --ioengine=libaio \
			--direct=1 --rw=randread --bs=4k --iodepth=$qd --time_based \
			--runtime="$bench_secs" --ramp_time=2 --output-format=terse \
			> /tmp/hosts-fio.log 2>&1
		bf_iops=$(grep -m 1 '^3;' /tmp/hosts-fio.log | cut -d';' -f8)
		case $bf_iops in
		'' | *[!0-9.]*)
			echo "BENCH-ERROR fio at iodepth $qd, pair $1"
			tail -n 10 /tmp/hosts-fio.log | sed 's/^/# /' ;;
		*) echo "BENCH hosts randread_4k_qd${qd}_iops $1 $bf_iops" ;;
		esac
	done
}

# bench_pair PAIR: this host's nvme-rdma, on the device it has now,
# against A's target: connected, bench_fio, disconnected
bench_pair() {
	if connect "$nqn" $a4; then
		bench_fio "$1"
		disconnect "$nqn"
	fi
	# what the pair cost each end, for the reader of the log
	for bp_dev in /sys/class/infiniband/*; do
		rdma statistic show link "${bp_dev##*/}/1" 2>&1 | sed "s/^/# $1 B: /"
	done
	ask run 30 sh -c 'rdma statistic show link' | sed "s/^/# $1 A: /"
	ping -c 3 -q $a4 2>&1 | tail -n 1 | sed "s/^/# $1 ping: /"
}

# to_krwq DEV: this host's rxe device DEV deleted and rdma_rxe unloaded;
# krwq.ko loaded and krwqb added on eth0
to_krwq() {
	check "rdma link delete $1" 60 rdma link delete "$1"
	# modprobe -r's status covers the dependencies it then tries to
	# drop, which krwq needs: what counts is that rdma_rxe is gone
	timeout 60 modprobe -r rdma_rxe > $log 2>&1
	! loaded rdma_rxe
	report $? "modprobe -r rdma_rxe: gone"
	check "insmod krwq.ko" 60 sh -c ". /krwq/lib/module.sh && insmod_deps /krwq/krwq.ko"
	link_add krwq krwqb eth0
}

bench_drive() {
	link_up $b4 $b6
	wait_for 300 a_answers
	report $? "host A answers on $a4:$rport"
	check "modprobe nvme-rdma" 60 modprobe nvme-rdma
	link_add krwq krwqb eth0
	bench_pair kk
	to_rxe krwqb rxeb
	bench_pair rk
	ask run 600 sh /krwq/add/hosts.sh swap-to-rxe > $log
	[ "$(sed -n '1s/^status //p' $log)" = 0 ]
	report $? "A's target moved from krwqa to rxea" "$(cat $log)"
	bench_pair rr
	to_krwq rxeb
	bench_pair kr
	check "rdma link delete krwqb" 60 rdma link delete krwqb
	timeout 60 modprobe -r nvme-rdma > $log 2>&1
	ask "done" > /dev/null
	tap_summary
}

case ${1:-} in
serve) serve ;;
drive) drive ;;
bench-serve) bench_serve ;;
bench-drive) bench_drive ;;
request) request ;;
# A, at B's request: the host against B's target
nvme-host) nvme_host "$2" "$3"; tap_summary ;;
swap-to-rxe) swap_to_rxe ;;
*) echo "usage: hosts.sh serve|drive|bench-serve|bench-drive" >&2; exit 2 ;;
esac
