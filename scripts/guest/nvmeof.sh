#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM: NVMe over Fabrics on RDMA in loopback over each
# device given, the kernel's target (nvmet-rdma, configfs, a memory-backed
# null_blk namespace) and its host (nvme-rdma, through nvme-cli) on the
# same RDMA device.  One TAP line per check, then "N passed, N failed".
#
#   nvmeof.sh [--teardown] DEVICE...
#
# DEVICE is TYPE:NAME (krwq:krwqe0, rxe:rxe0, siw:siw0) or a bare rxeN or
# siwN, optionally followed by @MIB, the size written for that device.  Each gets its own dummy netdev and a documentation address
# (192.0.2.1, 198.51.100.1, 203.0.113.1, in that order), then
#  - without --teardown: twice, with nvmet-rdma's use_srq=0 and =1: load
#    the modules, set up the target, `nvme connect`, check the controller
#    and namespace, write SIZE_MIB of a crc32c-verifiable pattern with
#    direct I/O, drop the caches, verify it in a separate read pass,
#    `nvme disconnect`, tear the target down, unload the modules;
#  - with --teardown: write the pattern, start more writes elsewhere on
#    the namespace, delete the RDMA device under them (`rdma link
#    delete`), check that the controller goes and the I/O fails within
#    bounds, add the device again, reconnect and verify the pattern.
#    nvme-rdma deletes its controllers on a device that goes away (its
#    ib_client's remove), so there are no reconnect attempts to wait
#    out; --ctrl-loss-tmo=10 --reconnect-delay=2 bound the case where the
#    controller would only lose its connection.  nvmet-rdma's listener
#    goes with the device too: the port is linked to the subsystem again
#    to listen on the new one.
# Every command runs under timeout.  Environment: SIZE_MIB (default 256).
# scripts/vm puts both libraries in /krwq/lib
# shellcheck source=scripts/guest/tap.sh
. /krwq/lib/tap.sh
# shellcheck source=scripts/guest/nvmeof-lib.sh
. /krwq/lib/nvmeof-lib.sh
bglog=/tmp/nvmeof-bg.log
size_mib=${SIZE_MIB:-256}
tap_t0=$(cut -d. -f1 /proc/uptime)
# --- what runs on the device

# cm_qps DEV: the number of DEV's connected kernel QPs made through
# rdma_cm (the RDMA core names rdma_cm, not its caller, as their owner)
cm_qps() {
	timeout 30 rdma resource show qp link "$1/1" | grep 'type RC state RTS' |
		grep -c 'comm \[rdma_cm\]'
}

# srqs_of DEV: the number of nvmet-rdma's SRQs on DEV
srqs_of() {
	timeout 30 rdma resource show srq dev "$1" | grep -c 'comm \[nvmet_rdma\]'
}

# one_pass NAME ADDR SRQ: one run of the plain sequence with use_srq=SRQ
one_pass() {
	name=$1 addr=$2 srq=$3
	nqn=nqn.2026-12.org.example.krwq:$name-srq$srq
	echo "# $name, use_srq=$srq"
	modules_up "$srq"
	target_up "$nqn" "$addr"
	if connect "$nqn" "$addr"; then
		# admin queue and at least one I/O queue, each a host and a target QP
		nq=$(cm_qps "$name")
		[ "$nq" -ge 4 ]
		report $? "rdma resource: $name carries $nq connected RC QPs of rdma_cm" \
			"$(rdma resource show qp link "$name/1" 2>&1)"
		nsrq=$(srqs_of "$name")
		if [ "$srq" = 1 ]; then
			[ "$nsrq" -ge 1 ] && ! dmesg | grep -q 'SRQ requested but not supported'
			report $? "rdma resource: nvmet-rdma receives on $nsrq SRQ(s) of $name" \
				"$(rdma resource show srq dev "$name" 2>&1; dmesg | grep -i srq | tail -n 3)"
		else
			[ "$nsrq" = 0 ]
			report $? "rdma resource: no SRQ of nvmet-rdma on $name with use_srq=0" \
				"$(rdma resource show srq dev "$name" 2>&1)"
		fi
		[ -z "$ns" ] || write_and_verify "$ns"
		disconnect "$nqn"
	fi
	# a failed connect may leave a controller behind
	if ctrl_of "$nqn" > /dev/null; then timeout 60 nvme disconnect -n "$nqn" > /dev/null 2>&1; fi
	target_down "$nqn"
	modules_down
}

# teardown NAME TYPE NETDEV ADDR: the RDMA device goes under I/O
teardown() {
	name=$1 type=$2 netdev=$3 addr=$4
	nqn=nqn.2026-12.org.example.krwq:$name-teardown
	# the host gives up on a lost controller after 10 s, retrying each 2 s
	tmo=10
	echo "# $name, the device deleted under I/O"
	modules_up 0
	target_up "$nqn" "$addr"
	if connect "$nqn" "$addr" --ctrl-loss-tmo=$tmo --reconnect-delay=2; then
		t0=$(now)
		fio_pattern "$ns" --do_verify=0
		fio_ok $? WRITE
		report $? "fio: $size_mib MiB pattern written to /dev/$ns ($(($(now) - t0)) s)"
		# random writes to the upper half, which the pattern does not cover
		timeout 600 fio --name=krwq-nvmeof-bg --filename="/dev/$ns" \
			--ioengine=libaio --direct=1 --rw=randwrite --bs=4k --iodepth=16 \
			--offset=$((nullb_gb * 512))M --size=$((nullb_gb * 512))M \
			--time_based --runtime=500 > "$bglog" 2>&1 &
		bg=$!
		# fio takes seconds to start under TCG: wait for its first writes
		w0=$(awk '{ print $5 }' "/sys/block/$ns/stat")
		wait_for 60 sh -c "[ \$(awk '{ print \$5 }' /sys/block/$ns/stat) -gt $w0 ]"
		sleep 3
		w1=$(awk '{ print $5 }' "/sys/block/$ns/stat")
		kill -0 $bg 2> /dev/null && [ "$w1" -gt "$w0" ]
		report $? "fio is writing to /dev/$ns ($((w1 - w0)) writes done)" "$(cat "$bglog")"
		t0=$(now)
		check "rdma link delete $name under I/O" 120 rdma link delete "$name"
		echo "# the delete took $(($(now) - t0)) s"
		wait_for $((tmo + 30)) sh -c "! ls /sys/class/nvme/$ctrl"
		report $? "the host's controller $ctrl is gone within $((tmo + 30)) s ($(($(now) - t0)) s)"
		wait_for 60 sh -c "! kill -0 $bg"
		report $? "fio stops within 60 s of the delete" "$(tail -n 5 "$bglog")"
		kill $bg 2> /dev/null
		wait $bg
		rc=$?
		[ $rc != 0 ] && [ $rc != 124 ] && [ $rc != 137 ] &&
			grep -Eq 'err= *[1-9]|Input/output error|No such device' "$bglog"
		report $? "fio's I/O failed with an I/O error, status $rc" "$(tail -n 20 "$bglog")"
		[ ! -b "/dev/$ns" ]
		report $? "/dev/$ns is gone"
		timeout 20 nvme list > "$log" 2>&1
		report $? "nvme list still answers"

		link_add "$type" "$name" "$netdev"
		# the listener went with the device: unlink and link again
		{ port_unlink "$nqn" && port_link "$nqn"; } > "$log" 2>&1
		report $? "target port 1 listens again on $addr"
		if connect "$nqn" "$addr"; then
			verify_pattern "$ns"
			disconnect "$nqn"
		fi
	fi
	if ctrl_of "$nqn" > /dev/null; then timeout 60 nvme disconnect -n "$nqn" > /dev/null 2>&1; fi
	target_down "$nqn"
	modules_down
}

mode=plain
if [ "${1:-}" = --teardown ]; then
	mode=teardown
	shift
fi
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
	echo "usage: nvmeof.sh [--teardown] DEVICE... (TYPE:NAME, rxeN or siwN; 1 to 3)" >&2
	exit 2
fi
i=0
for spec in "$@"; do
	i=$((i + 1))
	# DEVICE@MIB: this device's size (the sanity peer's may be smaller)
	device_spec nvmeof.sh "$spec"
	case $i in
	1) addr=192.0.2.1 ;;
	2) addr=198.51.100.1 ;;
	3) addr=203.0.113.1 ;;
	esac
	netdev=nvmeof$i
	echo "# $name ($type) on $netdev, $addr"
	device_up "$type" "$name" "$netdev" "$addr"
	if [ $mode = plain ]; then
		one_pass "$name" "$addr" 0
		one_pass "$name" "$addr" 1
	else
		teardown "$name" "$type" "$netdev" "$addr"
	fi
	device_down "$name" "$netdev"
done
tap_summary
