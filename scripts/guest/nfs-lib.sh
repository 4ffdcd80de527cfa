# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# nfs-lib.sh - NFS over RDMA inside a test VM, the steps: the kernel's
# NFS server (nfsd, svcrdma on port 20049) exporting a tmpfs to
# 192.0.2.0/24, and the client's mount over RDMA.  Each step reports a
# TAP line through tap.sh's report.  Sourced, after tap.sh and
# nvmeof-lib.sh (which brings roce.sh's wait_for), by nfs.sh (client and
# server in one kernel) and hosts.sh (the server on host A, the client
# on host B); scripts/vm puts it in /krwq/lib.
#
# Sets export_dir, mnt and nfsd_fs; the steps write their output to the
# caller's $log (nvmeof-lib.sh's, unless the caller sets its own).
: "${log:=/tmp/nfs.log}"
export_dir=/srv/nfs
mnt=/mnt/nfs
nfsd_fs=/proc/fs/nfsd

# nfs_server_up: rpcbind, the export, mountd, nfsd and its RDMA listener
nfs_server_up() {
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

# nfs_server_down: nfsd stopped, mountd and rpcbind gone, the export undone
nfs_server_down() {
	{
		timeout 60 rpc.nfsd 0 && timeout 30 exportfs -ua &&
			killall rpc.mountd rpcbind &&
			wait_for 10 sh -c '! pidof rpc.mountd && ! pidof rpcbind' &&
			umount $nfsd_fs && umount $export_dir
	} > "$log" 2>&1
	report $? "NFS server stopped: no nfsd threads, mountd and rpcbind gone"
}

# nfs_mount VERS ADDR: the export of the server at ADDR mounted at $mnt
# over RDMA, NFS version VERS
nfs_mount() {
	mkdir -p $mnt
	case $1 in
	3) nm_src=$2:$export_dir nm_extra=,nolock ;;
	*) nm_src=$2:/ nm_extra= ;;
	esac
	timeout 120 mount.nfs "$nm_src" $mnt -o "vers=$1,proto=rdma,port=20049$nm_extra" > "$log" 2>&1 &&
		grep " $mnt nfs" /proc/mounts | grep "vers=$1" | grep -q "proto=rdma"
	report $? "mount.nfs $nm_src, vers=$1, proto=rdma: mounted, /proc/mounts says rdma" \
		"$(cat "$log"; grep " $mnt " /proc/mounts; dmesg | tail -n 8)"
}

# nfs_modules_gone: the NFS client's and server's modules unloaded, and
# none of them left (what is not loaded counts as gone)
nfs_modules_gone() {
	timeout 120 modprobe -r nfsv4 nfsv3 nfs nfsd rpcrdma > "$log" 2>&1
	ng_left=
	for m in nfsv4 nfsv3 nfs nfsd rpcrdma; do
		! loaded $m || ng_left="$ng_left $m"
	done
	[ -z "$ng_left" ]
	report $? "modprobe -r nfsv4 nfsv3 nfs nfsd rpcrdma" "still loaded:$ng_left; $(cat "$log")"
}
