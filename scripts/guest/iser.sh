#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM: iSER (iSCSI Extensions for RDMA) in loopback
# over each device given, LIO's iSCSI target with an iSER portal (ib_isert,
# configured in configfs) and open-iscsi's initiator (iscsid, iscsiadm,
# ib_iser) on the same RDMA device.  One TAP line per check, then
# "N passed, N failed".
#
#   iser.sh [--rmmod] DEVICE...
#
# DEVICE is TYPE:NAME (krwq:krwqe0, rxe:rxe0) or a bare rxeN, optionally
# followed by @MIB, the size written for that device (default SIZE_MIB,
# else 256).  Each gets a dummy netdev with 192.0.2.1/24, then:
#  - the target: an iblock backstore on a memory-backed null_blk (1 GiB),
#    a target IQN with LUN 0 on it, a portal on 192.0.2.1:3260 switched to
#    iSER, no authentication, ACLs made on demand;
#  - the initiator: iscsid, a node record on the "iser" interface, the
#    login (the LIO-ORG disk shows, rdma resource shows the QPs), fio's
#    crc32c pattern written and verified, the logout;
#  - LOGINS (default 20) more logins and logouts in a row, each login
#    showing the disk and each logout removing it;
#  - with --rmmod (krwq devices only): a login, then `rmmod krwq` with
#    the session up; the module must go, the session then fails and is
#    logged out, and krwq.ko is loaded again;
#  - the initiator stopped, the target torn down, the modules unloaded.
# Every command and sysfs write runs under timeout.  scripts/vm puts the
# libraries in /krwq/lib.
# shellcheck source=scripts/guest/tap.sh
. /krwq/lib/tap.sh
# shellcheck source=scripts/guest/nvmeof-lib.sh
. /krwq/lib/nvmeof-lib.sh
tap_t0=$(cut -d. -f1 /proc/uptime)
log=/tmp/iser.log
addr=192.0.2.1
portal=$addr:3260
iqn=iqn.2026-12.org.example.krwq:disk1
lio=$cfs/target
tpg=$lio/iscsi/$iqn/tpgt_1
logins=${LOGINS:-20}

# write_to FILE VALUE: VALUE written to a configfs FILE under timeout
write_to() {
	# shellcheck disable=SC2016 # the inner shell expands them
	timeout 60 sh -c 'echo "$2" > "$1"' write_to "$1" "$2"
}

# lio_disk: the SCSI disk LIO exports (vendor "LIO-ORG ", padded)
lio_disk() {
	for sd in /sys/block/sd*; do
		case $(cat "$sd/device/vendor" 2> /dev/null) in
		LIO-ORG*) [ -b "/dev/${sd##*/}" ] && echo "${sd##*/}" && return 0 ;;
		esac
	done
	return 1
}

no_lio_disk() { ! lio_disk; }

iser_target_up() {
	{
		timeout 60 modprobe null_blk nr_devices=1 gb=$nullb_gb memory_backed=1 &&
			wait_for 10 test -b /dev/nullb0 &&
			timeout 60 modprobe configfs &&
			{ grep -q " $cfs configfs " /proc/mounts ||
				timeout 30 mount -t configfs configfs $cfs; } &&
			# the target's login asks the crypto API for crc32c, a
			# module on Debian's kernel that nothing loads here
			{ timeout 60 modprobe crc32c_generic 2> /dev/null || true; } &&
			timeout 60 modprobe -a target_core_mod target_core_iblock iscsi_target_mod ib_isert &&
			mkdir -p $lio/core/iblock_0/nullb &&
			write_to $lio/core/iblock_0/nullb/control udev_path=/dev/nullb0 &&
			write_to $lio/core/iblock_0/nullb/enable 1 &&
			mkdir -p "$tpg/lun/lun_0" &&
			ln -s $lio/core/iblock_0/nullb "$tpg/lun/lun_0/nullb" &&
			mkdir "$tpg/np/$portal" && write_to "$tpg/np/$portal/iser" 1 &&
			write_to "$tpg/attrib/authentication" 0 &&
			write_to "$tpg/attrib/generate_node_acls" 1 &&
			write_to "$tpg/attrib/demo_mode_write_protect" 0 &&
			write_to "$tpg/attrib/cache_dynamic_acls" 1 &&
			write_to "$tpg/enable" 1 &&
			[ "$(cat "$tpg/np/$portal/iser")" = 1 ] &&
			wait_for 20 cm_listening 3260
	} > "$log" 2>&1
	report $? "LIO: $iqn, LUN 0 on /dev/nullb0, portal $portal with iSER, listening through rdma_cm"
}

iser_target_down() {
	{
		write_to "$tpg/enable" 0 && rmdir "$tpg/np/$portal" &&
			rm "$tpg/lun/lun_0/nullb" && rmdir "$tpg/lun/lun_0" &&
			rmdir "$tpg" && rmdir "$lio/iscsi/$iqn" && rmdir $lio/iscsi &&
			rmdir $lio/core/iblock_0/nullb && rmdir $lio/core/iblock_0
	} > "$log" 2>&1
	report $? "target torn down in configfs"
}

initiator_up() {
	{
		timeout 60 modprobe -a ib_iser sd_mod &&
			mkdir -p /etc/iscsi/nodes /etc/iscsi/send_targets /etc/iscsi/ifaces \
				/var/lib/iscsi /run/lock/iscsi &&
			echo "InitiatorName=iqn.2026-12.org.example.krwq:host" > /etc/iscsi/initiatorname.iscsi &&
			{ pidof iscsid || timeout 30 iscsid; } &&
			wait_for 10 pidof iscsid &&
			timeout 60 iscsiadm -m node -o new -T $iqn -p $portal -I iser
	} > "$log" 2>&1
	report $? "initiator: iscsid running, node $iqn at $portal on interface iser"
}

initiator_down() {
	{
		timeout 60 iscsiadm -m node -o delete -T $iqn -p $portal -I iser &&
			killall iscsid && wait_for 10 sh -c '! pidof iscsid'
	} > "$log" 2>&1
	report $? "initiator: node record deleted, iscsid stopped"
}

# login [quiet]: log in over iSER; sets disk.  Quiet: no TAP line, the
# status only
login() {
	timeout 120 iscsiadm -m node -T $iqn -p $portal -I iser --login > "$log" 2>&1 &&
		wait_for 60 lio_disk
	li=$?
	disk=$(lio_disk)
	[ -n "${1:-}" ] && return $li
	[ $li = 0 ] && [ "$(cat "/sys/block/$disk/size")" = $((nullb_gb * 2097152)) ] &&
		timeout 30 iscsiadm -m session -P 1 2> /dev/null | grep -q 'Iface Transport: iser'
	report $? "iscsiadm --login over iser: /dev/$disk, $nullb_gb GiB, the session's transport iser" \
		"$(cat "$log"; timeout 30 iscsiadm -m session -P 1 2>&1 | tail -n 12; dmesg | tail -n 8)"
}

# logout [quiet]: the session ends, the disk goes
logout() {
	timeout 120 iscsiadm -m node -T $iqn -p $portal -I iser --logout > "$log" 2>&1 &&
		wait_for 30 no_lio_disk
	lo=$?
	[ -n "${1:-}" ] && return $lo
	report $lo "iscsiadm --logout: the session and /dev/$disk gone" "$(cat "$log")"
}

modules_gone() {
	timeout 120 modprobe -r ib_iser ib_isert iscsi_target_mod target_core_iblock target_core_mod \
		null_blk > "$log" 2>&1
	left=
	for m in ib_iser ib_isert iscsi_target_mod target_core_iblock target_core_mod null_blk; do
		! loaded $m || left="$left $m"
	done
	[ -z "$left" ]
	report $? "modprobe -r ib_iser ib_isert iscsi_target_mod target_core_iblock target_core_mod null_blk" \
		"still loaded:$left; $(cat "$log")"
}

# churn: LOGINS logins and logouts in a row
churn() {
	ch_t0=$(now)
	ch_ok=0 ch_first=
	k=0
	while [ $k -lt "$logins" ]; do
		k=$((k + 1))
		if login quiet && logout quiet; then
			ch_ok=$((ch_ok + 1))
		elif [ -z "$ch_first" ]; then
			ch_first="round $k: $(tail -n 5 "$log")"
			logout quiet
		fi
	done
	[ $ch_ok = "$logins" ]
	report $? "$ch_ok of $logins logins and logouts in a row, each showing and removing the disk ($(($(now) - ch_t0)) s)" \
		"first failure, $ch_first"
}

# rmmod_under_session NAME: log in, rmmod krwq with the session up, the
# session logged out, krwq.ko back
rmmod_under_session() {
	login quiet
	report $? "login before rmmod krwq"
	timeout 120 rmmod krwq > "$log" 2>&1
	report $? "rmmod krwq with an iSER session up" "$(cat "$log"; dmesg | tail -n 12)"
	! loaded krwq && [ ! -e "/sys/class/infiniband/$1" ]
	report $? "krwq and $1 gone"
	timeout 120 iscsiadm -m node -T $iqn -p $portal -I iser --logout > "$log" 2>&1
	wait_for 60 no_lio_disk
	report $? "the failed session logged out, its disk gone" "$(cat "$log"; ls /sys/block)"
	timeout 60 insmod /krwq/krwq.ko wire=0 > "$log" 2>&1
	report $? "krwq.ko loaded again"
}

rmmod=0
if [ "${1:-}" = --rmmod ]; then
	rmmod=1
	shift
fi
if [ $# -lt 1 ]; then
	echo "usage: iser.sh [--rmmod] DEVICE... (TYPE:NAME, rxeN or siwN, each optionally @MIB)" >&2
	exit 2
fi
for spec in "$@"; do
	device_spec iser.sh "$spec"
	echo "# $name ($type) on iser0, $addr"
	device_up "$type" "$name" iser0 $addr
	iser_target_up
	initiator_up
	login
	if [ -n "$disk" ]; then
		nq=$(timeout 30 rdma resource show qp link "$name/1" | grep -c 'type RC state RTS')
		[ "$nq" -ge 2 ]
		report $? "rdma resource: $name carries $nq connected RC QPs (ib_iser's and ib_isert's)" \
			"$(rdma resource show qp link "$name/1" 2>&1)"
		write_and_verify "$disk"
	fi
	logout
	churn
	if [ $rmmod = 1 ] && [ "$type" = krwq ]; then
		rmmod_under_session "$name"
	fi
	initiator_down
	iser_target_down
	modules_gone
	if [ -e "/sys/class/infiniband/$name" ]; then
		device_down "$name" iser0
	else
		timeout 30 ip link del iser0
	fi
done
tap_summary
