#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM: NFS over RDMA in loopback over each device
# given, the kernel's NFS server (nfsd with svcrdma listening on port
# 20049) and its client (xprtrdma) on the same RDMA device.  One TAP line
# per check, then "N passed, N failed".
#
#   nfs.sh DEVICE...
#
# DEVICE is TYPE:NAME (krwq:krwqe0, rxe:rxe0) or a bare rxeN, optionally
# followed by @MIB, the size written for that device (default SIZE_MIB,
# else 256).  Each gets a dummy netdev with 192.0.2.1/24, then:
#  - the server: rpcbind, a tmpfs exported to 192.0.2.0/24 (exportfs,
#    rpc.mountd), nfsd's threads (rpc.nfsd) and an RDMA listener on port
#    20049 (nfsd's portlist);
#  - for NFSv3 and NFSv4.2 in turn: mount.nfs with proto=rdma,port=20049
#    (the mount's options say rdma), the RC QPs of both sides in rdma
#    resource, fio's crc32c pattern written to a file with direct I/O,
#    the caches dropped, the pattern read back and verified, umount;
#  - for a krwq device, NFSv4.2 under I/O (under_io): the netdev taken
#    down and up, then the device deleted and added again, while fio
#    writes; the hard mount carries on once the path is back, and the
#    data written before and during both cuts verifies;
#  - the server stopped and the modules unloaded.
# Every command runs under timeout (a command stuck where no signal
# reaches it is bounded only by the VM's own), and the background fio is
# waited for at most 600 s, then ended by a forced unmount.  scripts/vm
# puts the libraries in /krwq/lib.
# shellcheck source=scripts/guest/tap.sh
. /krwq/lib/tap.sh
# shellcheck source=scripts/guest/nvmeof-lib.sh
. /krwq/lib/nvmeof-lib.sh
# shellcheck source=scripts/guest/nfs-lib.sh
. /krwq/lib/nfs-lib.sh
tap_t0=$(cut -d. -f1 /proc/uptime)
log=/tmp/nfs.log
addr=192.0.2.1

# rc_qps DEV: DEV's connected RC QPs
rc_qps() {
	timeout 30 rdma resource show qp link "$1/1" | grep -c 'type RC state RTS'
}

# nfs_writes: the NFS WRITE calls this client has sent (mountstats)
nfs_writes() {
	awk '$1 == "WRITE:" { n += $2 } END { print n + 0 }' /proc/self/mountstats
}

# nfs_connects: the times this client's RDMA transports connected
# (mountstats' "xprt: rdma" lines: after "rdma", a 0, the bind count,
# then the connect count, awk's $5)
nfs_connects() {
	awk '$1 == "xprt:" && $2 == "rdma" { n += $5 } END { print n + 0 }' /proc/self/mountstats
}

# writes_past N: more than N NFS WRITEs sent
writes_past() {
	[ "$(nfs_writes)" -gt "$1" ]
}

# bg_writes FILE: fio writing FILE (64 MiB, crc32c) in the background
# and reading it back to verify when done; bg is its process, $bglog its
# output.  Returns once its writes go to the server.
bg_writes() {
	bglog=/tmp/nfs-bg.log
	bw0=$(nfs_writes)
	timeout -s KILL 600 fio --name=krwq-nfs-bg --filename="$1" --ioengine=libaio \
		--direct=1 --rw=write --bs=128k --iodepth=4 --size=64M \
		--verify=crc32c > "$bglog" 2>&1 &
	bg=$!
	# fio takes seconds to start under TCG
	wait_for 60 writes_past $((bw0 + 8)) && kill -0 $bg 2> /dev/null
	report $? "fio is writing $1 ($(($(nfs_writes) - bw0)) NFS WRITEs so far)" "$(cat "$bglog")"
}

# bg_gone: the background fio has ended
bg_gone() {
	! kill -0 "$bg" 2> /dev/null
}

# bg_done WHAT: the background fio ended well, all 64 MiB written and
# verified.  On a hard mount whose path never came back fio waits for its
# I/O where no signal ends it, so after 600 s a forced unmount fails
# that I/O; status 1 if fio had to be ended so (the caller stops there).
bg_done() {
	if ! wait_for 600 bg_gone; then
		report 1 "$1: fio still waiting after 600 s" "$(tail -n 20 "$bglog"; dmesg | tail -n 10)"
		timeout 60 umount -f $mnt > "$log" 2>&1
		wait_for 60 bg_gone && wait $bg
		return 1
	fi
	wait $bg
	bg_rc=$?
	[ $bg_rc = 0 ] && grep -q 'err= 0:' "$bglog" &&
		grep -Eq '^ *WRITE: .*io=64(\.0)?MiB ' "$bglog" &&
		grep -Eq '^ *READ: .*io=64(\.0)?MiB ' "$bglog" &&
		! grep -Eqi 'verify.*(bad|fail)' "$bglog"
	report $? "$1: fio's 64 MiB written and verified (status $bg_rc)" \
		"$(tail -n 20 "$bglog"; dmesg | tail -n 10)"
}

# under_io NAME TYPE: NFSv4.2 over NAME with fio writing, through two
# cuts: the netdev down for 5 s, then NAME deleted and added again.  The
# mount is hard, so the client waits and carries on by itself once the
# path is back.  A pattern written before the cuts must verify after.
under_io() {
	echo "# $1: NFSv4.2 under I/O, the path cut twice"
	nfs_mount 4.2 $addr
	grep -q " $mnt nfs" /proc/mounts || return
	ui_mib=$size_mib
	size_mib=16
	write_and_verify $mnt/kept
	# the check of the check zeroed the first block: write it again
	fio_pattern $mnt/kept --do_verify=0
	fio_ok $? WRITE
	report $? "fio: $mnt/kept written again whole"

	bg_writes $mnt/bg-netdev
	check "ip link set nfs0 down, under I/O" 30 ip link set nfs0 down
	sleep 5
	check "ip link set nfs0 up" 30 ip link set nfs0 up
	bg_done "nfs0 down for 5 s and up again" || return

	bg_writes $mnt/bg-device
	ui_c0=$(nfs_connects)
	t0=$(now)
	check "rdma link delete $1 under I/O" 120 rdma link delete "$1"
	echo "# the delete took $(($(now) - t0)) s"
	link_add "$2" "$1" nfs0
	bg_done "$1 deleted and added again" || return
	ui_c1=$(nfs_connects)
	[ "$ui_c1" -gt "$ui_c0" ]
	report $? "the client connected again over the new $1 (connects $ui_c0 -> $ui_c1)" \
		"$(grep -A2 'xprt:' /proc/self/mountstats)"

	check "drop the page cache" 30 sh -c 'sync && echo 3 > /proc/sys/vm/drop_caches'
	verify_pattern $mnt/kept
	rm -f $mnt/kept $mnt/bg-netdev $mnt/bg-device
	check "umount $mnt" 60 umount $mnt
	size_mib=$ui_mib
}

if [ $# -lt 1 ]; then
	echo "usage: nfs.sh DEVICE... (TYPE:NAME, rxeN or siwN, each optionally @MIB)" >&2
	exit 2
fi
for spec in "$@"; do
	device_spec nfs.sh "$spec"
	echo "# $name ($type) on nfs0, $addr"
	device_up "$type" "$name" nfs0 $addr
	nfs_server_up
	for vers in 3 4.2; do
		echo "# $name: NFSv$vers"
		nfs_mount $vers $addr
		if grep -q " $mnt nfs" /proc/mounts; then
			nq=$(rc_qps "$name")
			[ "$nq" -ge 2 ]
			report $? "rdma resource: $name carries $nq connected RC QPs (client's and server's)" \
				"$(rdma resource show qp link "$name/1" 2>&1)"
			write_and_verify $mnt/pattern
			rm -f $mnt/pattern
			check "umount $mnt" 60 umount $mnt
		fi
	done
	[ "$type" != krwq ] || under_io "$name" "$type"
	nfs_server_down
	nfs_modules_gone
	device_down "$name" nfs0
done
tap_summary
