#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM: SRP (SCSI RDMA Protocol) in loopback over each
# device given, the kernel's target (ib_srpt under LIO, configured in
# configfs) and its initiator (ib_srp, which logs in through its sysfs
# add_target) on the same RDMA device, connected through rdma_cm.  One
# TAP line per check, then "N passed, N failed".
#
#   srp.sh DEVICE...
#
# DEVICE is TYPE:NAME (krwq:krwqe0, rxe:rxe0) or a bare rxeN, optionally
# followed by @MIB, the size written for that device (default SIZE_MIB,
# else 256).  Each gets a dummy netdev with 192.0.2.1/24, then:
#  - a memory-backed null_blk (1 GiB) as LIO's iblock backstore;
#  - ib_srpt listening through rdma_cm on port 5555, its target port
#    named after the device's GID 0, LUN 0 on the backstore, an ACL for
#    the initiator (rdma_cm logins name it by its IP address);
#  - ib_srp logging in to 192.0.2.1:5555; the SCSI disk LIO-ORG shows;
#  - fio writes SIZE_MIB with a crc32c pattern, the caches are dropped,
#    fio reads it back and verifies it (nvmeof-lib.sh's helpers);
#  - the SRP remote port deleted, the target torn down in configfs, the
#    modules unloaded: nothing may be left.
# Each device gets a pass for each value in SRP_SRQ (default 0) of the
# target port's use_srq attribute (1: ib_srpt receives on one SRQ of the
# device).  Debian 6.1.192's ib_srpt WARNs in srpt_cache_put when it
# releases a channel that received on an SRQ (the channel has no request
# buffer cache to put), on rdma_rxe as on krwq; the VM runner fails a run
# with a WARNING, so make check runs use_srq=0 only and SRP_SRQ="0 1"
# runs both (the data verifies in both).
# Every command and sysfs write runs under timeout.  scripts/vm puts the
# libraries in /krwq/lib.
# shellcheck source=scripts/guest/tap.sh
. /krwq/lib/tap.sh
# shellcheck source=scripts/guest/nvmeof-lib.sh
. /krwq/lib/nvmeof-lib.sh
tap_t0=$(cut -d. -f1 /proc/uptime)
log=/tmp/srp.log
addr=192.0.2.1
cm_port=5555
lio=$cfs/target

# write_to FILE VALUE: VALUE written to the sysfs or configfs FILE under
# timeout (a login, a logout or a port's enable can block on the fabric)
write_to() {
	# shellcheck disable=SC2016 # the inner shell expands them
	timeout 60 sh -c 'echo "$2" > "$1"' write_to "$1" "$2"
}

# target_port DEV: ib_srpt's name of DEV's port 1: the interface ID of
# GID 0 (fe80::...), as xxxx:xxxx:xxxx:xxxx
target_port() {
	sed 's/^fe80:0000:0000:0000://' "/sys/class/infiniband/$1/ports/1/gids/0"
}

# srp_disk: the SCSI disk LIO exports to this initiator (vendor LIO-ORG)
srp_disk() {
	for sd in /sys/block/sd*; do
		# SCSI pads the vendor to 8 characters: "LIO-ORG "
		case $(cat "$sd/device/vendor" 2> /dev/null) in
		LIO-ORG*) [ -b "/dev/${sd##*/}" ] && echo "${sd##*/}" && return 0 ;;
		esac
	done
	return 1
}

# srp_target_up DEV SRQ: backstore, ib_srpt and the target port of DEV
# (its attribute use_srq set to SRQ), enabled
srp_target_up() {
	tp=$(target_port "$1")
	tpg=$lio/srpt/$tp/$tp
	{
		timeout 60 modprobe null_blk nr_devices=1 gb=$nullb_gb memory_backed=1 &&
			wait_for 10 test -b /dev/nullb0 &&
			timeout 60 modprobe configfs &&
			{ grep -q " $cfs configfs " /proc/mounts ||
				timeout 30 mount -t configfs configfs $cfs; } &&
			timeout 60 modprobe -a target_core_mod target_core_iblock ib_srpt &&
			mkdir -p $lio/core/iblock_0/nullb &&
			echo udev_path=/dev/nullb0 > $lio/core/iblock_0/nullb/control &&
			echo 1 > $lio/core/iblock_0/nullb/enable
	} > "$log" 2>&1
	report $? "LIO: iblock backstore on /dev/nullb0 ($nullb_gb GiB, memory-backed), ib_srpt loaded"
	{
		{ [ -d $lio/srpt ] || mkdir $lio/srpt; } &&
			echo $cm_port > $lio/srpt/discovery_auth/rdma_cm_port &&
			mkdir "$lio/srpt/$tp" "$tpg" && mkdir "$tpg/lun/lun_0" &&
			ln -s $lio/core/iblock_0/nullb "$tpg/lun/lun_0/nullb" &&
			mkdir "$tpg/acls/$addr" && mkdir "$tpg/acls/$addr/lun_0" &&
			ln -s "$tpg/lun/lun_0" "$tpg/acls/$addr/lun_0/lun_0" &&
			echo "$2" > "$tpg/attrib/use_srq" &&
			write_to "$tpg/enable" 1 &&
			wait_for 20 cm_listening "$cm_port"
	} >> "$log" 2>&1
	report $? "ib_srpt: target port $tp of $1, LUN 0 on the backstore, ACL $addr, use_srq=$2, listening on rdma_cm port $cm_port"
}

# srp_target_down: the target port, the backstore and srpt's fabric gone
srp_target_down() {
	{
		write_to "$tpg/enable" 0 &&
			rm "$tpg/acls/$addr/lun_0/lun_0" && rmdir "$tpg/acls/$addr/lun_0" &&
			rmdir "$tpg/acls/$addr" && rm "$tpg/lun/lun_0/nullb" &&
			rmdir "$tpg/lun/lun_0" && rmdir "$tpg" && rmdir "$lio/srpt/$tp" &&
			rmdir $lio/srpt && rmdir $lio/core/iblock_0/nullb && rmdir $lio/core/iblock_0
	} > "$log" 2>&1
	report $? "target torn down in configfs"
}

# login DEV: ib_srp logs in to the target through rdma_cm; sets disk
login() {
	guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
	disk=
	{
		timeout 60 modprobe -a ib_srp sd_mod &&
			wait_for 10 test -e "/sys/class/infiniband_srp/srp-$1-1/add_target" &&
			write_to "/sys/class/infiniband_srp/srp-$1-1/add_target" \
				"id_ext=$guid,ioc_guid=$guid,src=$addr,dest=$addr:$cm_port"
	} > "$log" 2>&1
	report $? "ib_srp: add_target to $addr:$cm_port through srp-$1-1"
	wait_for 60 srp_disk
	disk=$(srp_disk)
	[ -n "$disk" ] && [ "$(cat "/sys/block/$disk/size")" = $((nullb_gb * 2097152)) ]
	report $? "SCSI disk /dev/$disk from LIO-ORG: $nullb_gb GiB, as the backstore" \
		"$(ls /sys/class/scsi_host /sys/block 2>&1; dmesg | tail -n 12)"
}

# logout: the SRP remote ports deleted; the disk goes
logout() {
	for rp in /sys/class/srp_remote_ports/port-*; do
		[ -e "$rp/delete" ] && write_to "$rp/delete" 1
	done
	wait_for 30 sh -c "! ls /sys/class/srp_remote_ports/port-* && ! ls /sys/block/sd*"
	report $? "SRP remote port deleted: its disk gone" "$(ls /sys/class/srp_remote_ports /sys/block 2>&1)"
}

# srp_qps DEV: DEV's connected RC QPs (ib_srp's and ib_srpt's, made
# through rdma_cm)
srp_qps() {
	timeout 30 rdma resource show qp link "$1/1" | grep -c 'type RC state RTS'
}

modules_gone() {
	timeout 120 modprobe -r ib_srp ib_srpt target_core_iblock target_core_mod null_blk sd_mod > "$log" 2>&1
	left=
	for m in ib_srp ib_srpt target_core_iblock target_core_mod null_blk; do
		! loaded $m || left="$left $m"
	done
	[ -z "$left" ]
	report $? "modprobe -r ib_srp ib_srpt target_core_iblock target_core_mod null_blk" \
		"still loaded:$left; $(cat "$log")"
}

# one_pass DEV SRQ: the target (use_srq=SRQ), a login, the pattern
# written and verified, the logout and the teardown
one_pass() {
	echo "# $1, use_srq=$2"
	srp_target_up "$1" "$2"
	login "$1"
	if [ -n "$disk" ]; then
		nq=$(srp_qps "$1")
		[ "$nq" -ge 2 ]
		report $? "rdma resource: $1 carries $nq connected RC QPs (ib_srp's and ib_srpt's)" \
			"$(rdma resource show qp link "$1/1" 2>&1)"
		# the listing must work: a failed one would count no SRQ
		timeout 30 rdma resource show srq dev "$1" > /tmp/srp-srq.txt 2>&1
		srq_rc=$?
		nsrq=$(grep -c 'comm \[ib_srpt\]' /tmp/srp-srq.txt)
		if [ "$2" = 1 ]; then
			[ $srq_rc = 0 ] && [ "$nsrq" -ge 1 ]
			report $? "rdma resource: ib_srpt receives on $nsrq SRQ(s) of $1" \
				"$(rdma resource show srq dev "$1" 2>&1)"
		else
			[ $srq_rc = 0 ] && [ "$nsrq" = 0 ]
			report $? "rdma resource: no SRQ of ib_srpt on $1 with use_srq=0" \
				"$(rdma resource show srq dev "$1" 2>&1)"
		fi
		write_and_verify "$disk"
	fi
	logout
	srp_target_down
	modules_gone
}

if [ $# -lt 1 ]; then
	echo "usage: srp.sh DEVICE... (TYPE:NAME, rxeN or siwN, each optionally @MIB)" >&2
	exit 2
fi
for spec in "$@"; do
	device_spec srp.sh "$spec"
	echo "# $name ($type) on srp0, $addr"
	device_up "$type" "$name" srp0 $addr
	for srq in ${SRP_SRQ:-0}; do
		one_pass "$name" "$srq"
	done
	device_down "$name" srp0
done
tap_summary
