# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# nvmeof-lib.sh - NVMe over Fabrics on RDMA in loopback inside the test
# VM, the steps: an RDMA device on a dummy netdev, the modules (null_blk,
# nvmet, nvmet-rdma, nvme-rdma), the target in configfs (a null_blk
# namespace behind an RDMA port), the host's `nvme connect` and
# `nvme disconnect`, each undone again.  Every step reports a TAP line
# through tap.sh's report.  Sourced, after tap.sh, by nvmeof.sh (the
# test) and scripts/guest/guest-ulp.sh (make bench); it sources roce.sh itself;
# scripts/vm puts all three libraries in /krwq/lib.
#
# Sets: log (each step's output), cfs, hostnqn, nullb_gb, fio_tmo; the
# I/O helpers read size_mib, which the caller sets.
log=/tmp/nvmeof.log
cfs=/sys/kernel/config
hostnqn=nqn.2026-12.org.example.krwq:host
# null_blk's size parameter is in GiB: 1 GiB, allocated as written
nullb_gb=1

# shellcheck source=roce.sh
. /krwq/lib/roce.sh

# a failure shows the command's output, the kernel's last words and what
# nvme-cli sees
tap_detail() {
	[ -f "$log" ] && tail -n 20 "$log"
	echo "--- dmesg (last 15 lines)"
	dmesg | tail -n 15
	echo "--- nvme list"
	timeout 20 nvme list 2>&1 | tail -n 8
}

now() { cut -d. -f1 /proc/uptime; }

# check NAME SECONDS COMMAND...: COMMAND under timeout, output in $log
check() {
	ck_name=$1 ck_secs=$2
	shift 2
	timeout "$ck_secs" "$@" > "$log" 2>&1
	report $? "$ck_name"
}

loaded() { grep -q "^$1 " /proc/modules; }

# --- the RDMA device

# device_spec PROG SPEC: a device as the test scripts name it on their
# command line, TYPE:NAME, rxeN or siwN, each optionally @MIB (its own
# dose, else SIZE_MIB or 256), into type, name and size_mib; anything
# else ends PROG with status 2
# shellcheck disable=SC2034 # type and name are the caller's
device_spec() {
	size_mib=${SIZE_MIB:-256}
	ds_spec=$2
	case $ds_spec in
	*@*) size_mib=${ds_spec##*@} ds_spec=${ds_spec%@*} ;;
	esac
	case $ds_spec in
	*:*) type=${ds_spec%%:*} name=${ds_spec#*:} ;;
	rxe*) type=rxe name=$ds_spec ;;
	siw*) type=siw name=$ds_spec ;;
	*) echo "$1: $ds_spec: want TYPE:NAME, rxeN or siwN" >&2; exit 2 ;;
	esac
}

# device_up TYPE NAME NETDEV ADDR: NETDEV (dummy) with ADDR, NAME on it
device_up() {
	ip link add "$3" type dummy && ip link set "$3" up &&
		ip addr add "$4/24" dev "$3" > "$log" 2>&1
	report $? "$3 up with $4/24"
	case $1 in
	rxe)
		# Debian's rdma_rxe asks the crypto API for crc32, a module there
		timeout 60 modprobe crc32_generic 2> /dev/null
		check "modprobe rdma_rxe" 60 modprobe rdma_rxe ;;
	siw) check "modprobe siw" 60 modprobe siw ;;
	krwq) loaded krwq; report $? "krwq.ko is loaded" "" ;;
	esac
	link_add "$@"
}

# link_add TYPE NAME NETDEV: `rdma link add`, and the port ACTIVE on NETDEV
link_add() {
	timeout 60 rdma link add "$2" type "$1" netdev "$3" > "$log" 2>&1 &&
		wait_for 20 sh -c "rdma link show $2/1 | grep -q 'state ACTIVE.*netdev $3'"
	report $? "rdma link add $2 type $1 netdev $3: port ACTIVE"
}

# device_down NAME NETDEV
device_down() {
	if [ -e "/sys/class/infiniband/$1" ]; then
		check "rdma link delete $1" 120 rdma link delete "$1"
	fi
	timeout 30 ip link del "$2"
}

# --- the modules

# modules_up SRQ: null_blk, the target (use_srq=SRQ) and the host
modules_up() {
	timeout 60 modprobe null_blk nr_devices=1 gb=$nullb_gb memory_backed=1 > "$log" 2>&1 &&
		wait_for 10 test -b /dev/nullb0 &&
		[ "$(cat /sys/block/nullb0/size)" = $((nullb_gb * 2097152)) ]
	report $? "null_blk: /dev/nullb0, memory-backed, $nullb_gb GiB"
	{
		timeout 60 modprobe configfs &&
			timeout 60 modprobe nvmet &&
			timeout 60 modprobe nvmet-rdma use_srq="$1" &&
			timeout 60 modprobe nvme-rdma
	} > "$log" 2>&1 &&
		{ grep -q " $cfs configfs " /proc/mounts ||
			timeout 30 mount -t configfs configfs $cfs >> "$log" 2>&1; } &&
		[ -d $cfs/nvmet ]
	report $? "modprobe nvmet, nvmet-rdma use_srq=$1, nvme-rdma; configfs mounted"
	want=N
	[ "$1" = 1 ] && want=Y
	[ "$(cat /sys/module/nvmet_rdma/parameters/use_srq 2> /dev/null)" = $want ]
	report $? "nvmet-rdma's use_srq is $want" \
		"use_srq: $(cat /sys/module/nvmet_rdma/parameters/use_srq 2>&1)"
}

# modules_down: unload them all; each must go
modules_down() {
	timeout 120 modprobe -r nvme-rdma nvmet-rdma nvmet null_blk > "$log" 2>&1
	rc=$?
	left=
	for m in nvme_rdma nvme_fabrics nvmet_rdma nvmet null_blk; do
		! loaded $m || left="$left $m"
	done
	# modprobe's status also covers the dependencies it tries to drop
	# after them (on Debian's kernel it is 1 with all five gone): what
	# counts is that the modules are gone
	[ -z "$left" ]
	report $? "modprobe -r nvme-rdma nvmet-rdma nvmet null_blk" \
		"modprobe -r: status $rc; still loaded:$left; $(cat "$log")"
}

# --- the target

# target_up NQN ADDR: subsystem NQN, namespace 1 on /dev/nullb0, port 1 on
# ADDR:4420 over RDMA, the subsystem linked into the port (which makes
# nvmet-rdma listen; the link fails when it cannot)
target_up() {
	s=$cfs/nvmet/subsystems/$1 p=$cfs/nvmet/ports/1
	{
		mkdir "$s" && echo 1 > "$s/attr_allow_any_host" &&
			mkdir "$s/namespaces/1" &&
			echo /dev/nullb0 > "$s/namespaces/1/device_path" &&
			echo 1 > "$s/namespaces/1/enable"
	} > "$log" 2>&1
	report $? "target: subsystem $1, namespace 1 on /dev/nullb0 enabled"
	{
		mkdir "$p" && echo rdma > "$p/addr_trtype" &&
			echo ipv4 > "$p/addr_adrfam" && echo "$2" > "$p/addr_traddr" &&
			echo 4420 > "$p/addr_trsvcid" && port_link "$1"
	} > "$log" 2>&1
	report $? "target: port 1 rdma $2:4420, subsystem linked in (listening)"
}

port_link() {
	ln -s "$cfs/nvmet/subsystems/$1" "$cfs/nvmet/ports/1/subsystems/$1"
}

port_unlink() {
	rm "$cfs/nvmet/ports/1/subsystems/$1"
}

# target_down NQN: unlink, remove the port, disable and remove the
# namespace, remove the subsystem; nothing of it may be left
target_down() {
	s=$cfs/nvmet/subsystems/$1 p=$cfs/nvmet/ports/1
	{
		{ [ ! -e "$p/subsystems/$1" ] || port_unlink "$1"; } &&
			rmdir "$p" && echo 0 > "$s/namespaces/1/enable" &&
			rmdir "$s/namespaces/1" && rmdir "$s" &&
			[ -z "$(ls $cfs/nvmet/ports)" ] && [ -z "$(ls $cfs/nvmet/subsystems)" ]
	} > "$log" 2>&1
	report $? "target torn down in configfs"
}

# --- the host

# ctrl_of NQN: the host's controller (nvmeN) connected to NQN
ctrl_of() {
	for nc in /sys/class/nvme/nvme*; do
		[ "$(cat "$nc/subsysnqn" 2> /dev/null)" = "$1" ] && echo "${nc##*/}" && return 0
	done
	return 1
}

# ns_of NQN: the namespace block device of NQN that has a /dev node (with
# native multipath the per-path nvmeNcMnK disks are hidden and have none)
ns_of() {
	for nb in /sys/block/nvme*; do
		nb_dev=${nb##*/}
		[ "$(cat "$nb/device/subsysnqn" 2> /dev/null)" = "$1" ] && [ -b "/dev/$nb_dev" ] &&
			echo "$nb_dev" && return 0
	done
	return 1
}

# connect NQN ADDR [nvme connect option...]: connect, and check the
# controller (live, rdma, ADDR:4420) and its namespace; sets ctrl and ns
connect() {
	nqn=$1 addr=$2
	shift 2
	ctrl='' ns=''
	check "nvme connect -t rdma -a $addr -s 4420 -n $nqn $*" 120 \
		nvme connect -t rdma -a "$addr" -s 4420 -n "$nqn" --hostnqn="$hostnqn" "$@"
	wait_for 30 ctrl_of "$nqn"
	ctrl=$(ctrl_of "$nqn")
	c=/sys/class/nvme/$ctrl
	[ -n "$ctrl" ] && [ "$(cat "$c/transport")" = rdma ] &&
		grep -q "traddr=$addr,trsvcid=4420" "$c/address" &&
		[ "$(cat "$c/state")" = live ]
	report $? "controller $ctrl: live, transport rdma, traddr=$addr,trsvcid=4420" \
		"$( [ -z "$ctrl" ] || head "$c/transport" "$c/address" "$c/state" 2>&1)"
	[ -n "$ctrl" ] || return 1
	wait_for 90 ns_of "$nqn"
	ns=$(ns_of "$nqn")
	[ -n "$ns" ] && [ "$(cat "/sys/block/$ns/size")" = $((nullb_gb * 2097152)) ]
	report $? "namespace /dev/$ns: $nullb_gb GiB, as null_blk" \
		"$(ls "$c" /sys/block 2>&1; dmesg | tail -n 8)"
	[ -n "$ns" ]
}

# disconnect NQN: `nvme disconnect`; the controller and namespace go
disconnect() {
	timeout 60 nvme disconnect -n "$1" > "$log" 2>&1 &&
		grep -q 'disconnected 1 controller' "$log" &&
		wait_for 30 sh -c "! ls /sys/class/nvme/$ctrl && [ ! -b /dev/$ns ]"
	report $? "nvme disconnect -n $1: $ctrl and /dev/$ns gone"
}

# --- I/O: a pattern fio can verify, size_mib MiB (the caller sets it)

# fio's own bound: 256 MiB over rxe under TCG and KASAN took 640-750 s
# on a loaded host
fio_tmo=1500

# io_path TARGET: where the I/O goes: TARGET itself when it is a path
# (a file, as on NFS), else /dev/TARGET (a block device's name)
io_path() {
	case $1 in
	/*) echo "$1" ;;
	*) echo "/dev/$1" ;;
	esac
}

# fio_pattern TARGET [fio option...]: SIZE_MIB in 128 KiB blocks with a
# crc32c verify header in each; with --do_verify=0 it
# lays the pattern down, with --verify_only=1 it reads it back and checks
# it (the same job, so the same offsets and seed).  From offset 0, or
# fio_offset MiB if set: fio's verify checks each block's offset and
# crc, not which run wrote it, so only a range no earlier run wrote
# shows a write that never landed.  A shallow queue: rxe
# under TCG and KASAN answers in softirq, and 16 deep it starved a vCPU
# into soft lockups
# shellcheck disable=SC2154 # size_mib: the caller's
fio_pattern() {
	fp_target=$1
	shift
	timeout $fio_tmo fio --name=krwq-nvmeof --filename="$(io_path "$fp_target")" \
		--ioengine=libaio --direct=1 --rw=write --bs=128k --iodepth=4 \
		--size="${size_mib}M" --verify=crc32c ${fio_offset:+--offset=${fio_offset}M} \
		"$@" > "$log" 2>&1
}

# fio_ok STATUS WHAT: fio exited 0, its job reports err= 0, WHAT (READ or
# WRITE) moved SIZE_MIB (fio prints 3 digits: io=32.0MiB, io=256MiB) in
# as many 128 KiB I/Os, and no verify complaint
fio_ok() {
	blocks=$((size_mib * 8))
	issued="total=0,$blocks,"
	[ "$2" = READ ] && issued="total=$blocks,"
	[ "$1" = 0 ] && grep -q 'err= 0:' "$log" &&
		grep -Eq "^ *$2: .*io=${size_mib}(\.0)?MiB " "$log" &&
		grep -q "issued rwts: $issued" "$log" &&
		! grep -Eqi 'verify.*(bad|fail)' "$log"
}

# write_and_verify TARGET: the pattern written, the caches dropped, the
# pattern verified; then the check of the check: a range holding no
# pattern must fail to verify (on a device, its last 8 MiB, never
# written; in a file, its first block, overwritten with zeros)
write_and_verify() {
	t0=$(now)
	fio_pattern "$1" --do_verify=0
	fio_ok $? WRITE
	report $? "fio: $size_mib MiB written to $(io_path "$1"), direct, crc32c pattern ($(($(now) - t0)) s)"
	check "drop the page cache" 30 sh -c 'sync && echo 3 > /proc/sys/vm/drop_caches'
	verify_pattern "$1"
	case $1 in
	/*)
		what="its first block zeroed"
		offset=0
		dd if=/dev/zero of="$1" bs=128k count=1 conv=notrunc 2> /dev/null && sync ;;
	*)
		what="a range never written"
		offset=$((nullb_gb * 1024 - 8)) ;;
	esac
	timeout 300 fio --name=krwq-nvmeof --filename="$(io_path "$1")" --ioengine=libaio \
		--direct=1 --rw=write --bs=128k --offset="${offset}M" \
		--size=1M --verify=crc32c --verify_only=1 > "$log" 2>&1
	rc=$?
	[ $rc != 0 ] && [ $rc != 124 ] && grep -q 'verify: bad magic header' "$log"
	report $? "fio's verify rejects $what (status $rc)"
}

verify_pattern() {
	t0=$(now)
	fio_pattern "$1" --verify_only=1
	fio_ok $? READ
	report $? "fio: $size_mib MiB read back from $(io_path "$1") and verified, no verify errors ($(($(now) - t0)) s)"
}
