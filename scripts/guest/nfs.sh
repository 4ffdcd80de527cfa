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
#  - the server stopped and the modules unloaded.
# Every command runs under timeout.  scripts/vm puts the libraries in
# /krwq/lib.
# shellcheck source=scripts/guest/tap.sh
. /krwq/lib/tap.sh
# shellcheck source=scripts/guest/nvmeof-lib.sh
. /krwq/lib/nvmeof-lib.sh
tap_t0=$(cut -d. -f1 /proc/uptime)
log=/tmp/nfs.log
addr=192.0.2.1
export_dir=/srv/nfs
mnt=/mnt/nfs
nfsd_fs=/proc/fs/nfsd

# server_up: rpcbind, the export, mountd, nfsd and its RDMA listener
server_up() {
	{
		timeout 60 modprobe -a nfsd nfsv3 nfsv4 rpcrdma &&
			mkdir -p $export_dir /var/lib/nfs /run/rpcbind $mnt &&
			mount -t tmpfs -o size=1g tmpfs $export_dir &&
			{ grep -q " $nfsd_fs nfsd " /proc/mounts || mount -t nfsd nfsd $nfsd_fs; } &&
			# Debian's rpcbind drops to the user _rpc, or exits
			{ grep -q '^_rpc:' /etc/passwd ||
				echo '_rpc:x:100:65534::/run/rpcbind:/bin/false' >> /etc/passwd; } &&
			timeout 30 rpcbind -w && wait_for 10 pidof rpcbind &&
			echo "$export_dir 192.0.2.0/24(rw,no_root_squash,fsid=0,no_subtree_check,insecure)" \
				> /etc/exports &&
			timeout 30 exportfs -ra &&
			timeout 30 rpc.mountd &&
			# NFSv4's grace period holds new opens back after nfsd
			# starts (90 s by default)
			echo 10 > $nfsd_fs/nfsv4leasetime && echo 10 > $nfsd_fs/nfsv4gracetime &&
			timeout 60 rpc.nfsd 4 &&
			echo "rdma 20049" > $nfsd_fs/portlist &&
			grep -qx 'rdma 20049' $nfsd_fs/portlist
	} > "$log" 2>&1
	report $? "NFS server: $export_dir (tmpfs) exported, nfsd listening on rdma 20049" \
		"$(cat "$log"; cat $nfsd_fs/portlist 2>&1; dmesg | tail -n 8)"
}

# server_down: nfsd stopped, mountd and rpcbind gone, the export undone
server_down() {
	{
		timeout 60 rpc.nfsd 0 && timeout 30 exportfs -ua &&
			killall rpc.mountd rpcbind &&
			wait_for 10 sh -c '! pidof rpc.mountd && ! pidof rpcbind' &&
			umount $nfsd_fs && umount $export_dir
	} > "$log" 2>&1
	report $? "NFS server stopped: no nfsd threads, mountd and rpcbind gone"
}

# mount_rdma VERS: the export mounted at $mnt over RDMA, NFS version VERS
mount_rdma() {
	case $1 in
	3) src=$addr:$export_dir extra=,nolock ;;
	*) src=$addr:/ extra= ;;
	esac
	timeout 120 mount.nfs "$src" $mnt -o "vers=$1,proto=rdma,port=20049$extra" > "$log" 2>&1 &&
		grep " $mnt nfs" /proc/mounts | grep "vers=$1" | grep -q "proto=rdma"
	report $? "mount.nfs $src, vers=$1, proto=rdma: mounted, /proc/mounts says rdma" \
		"$(cat "$log"; grep " $mnt " /proc/mounts; dmesg | tail -n 8)"
}

# rc_qps DEV: DEV's connected RC QPs
rc_qps() {
	timeout 30 rdma resource show qp link "$1/1" | grep -c 'type RC state RTS'
}

modules_gone() {
	timeout 120 modprobe -r nfsv4 nfsv3 nfs nfsd rpcrdma > "$log" 2>&1
	left=
	for m in nfsv4 nfsv3 nfs nfsd rpcrdma; do
		! loaded $m || left="$left $m"
	done
	[ -z "$left" ]
	report $? "modprobe -r nfsv4 nfsv3 nfs nfsd rpcrdma" "still loaded:$left; $(cat "$log")"
}

if [ $# -lt 1 ]; then
	echo "usage: nfs.sh DEVICE... (TYPE:NAME, rxeN or siwN, each optionally @MIB)" >&2
	exit 2
fi
for spec in "$@"; do
	device_spec nfs.sh "$spec"
	echo "# $name ($type) on nfs0, $addr"
	device_up "$type" "$name" nfs0 $addr
	server_up
	for vers in 3 4.2; do
		echo "# $name: NFSv$vers"
		mount_rdma $vers
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
	server_down
	modules_gone
	device_down "$name" nfs0
done
tap_summary
