#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the Debian-kernel VM of scripts/check-blktests: blktests'
# nvme group (or some of its tests) with nvme_trtype=rdma, once with krwq
# as the soft-RDMA device (USE_KRWQ, scripts/blktests/soft-rdma-krwq.sh),
# once with rdma_rxe (USE_RXE) and once with siw (blktests' default when
# USE_RXE is not set; the host built siw.ko, which Debian's kernel
# lacks, and it comes beside krwq.ko).  Prints blktests' whole output as
# comment lines, then one line per test and device,
#   @@blktests DEVICE TEST STATUS
# STATUS being blktests' own: passed, failed or "not run"; for each test
# that did not run
#   @@blktests-why DEVICE TEST REASON[; REASON...]
# and for each pass
#   @@blktests-status DEVICE RC BOUND OWN
# RC being ./check's exit status (1 when a test failed, 124 when the pass
# ran out of time), BOUND the number of tests whose full log shows a
# krwq device bound and OWN the number that show one of DEVICE's (the
# override's record: on krwq's pass BOUND is more than none, or the
# override was not used; on rxe's and siw's BOUND is none and OWN more
# than none, or blktests bound another device).  A failed
# test's diff, dmesg and the end of its full log follow it as comment
# lines.
#
#   blktests.sh TEST...      (nvme, or nvme/NNN...)
#
# blktests binds its device to every netdev with a MAC and a carrier:
# here one dummy netdev, bt0, with 192.0.2.1/24, which nvme_trtype=rdma
# then uses as the target's address.  krwq and siw are loaded by
# modprobe (from /lib/modules, so that siw's libcrc32c, and the crc32c
# it asks the crypto API for, come with it); krwq with wire=0: both ends
# are in this kernel, where krwq delivers without packets, and rdma_rxe,
# which blktests' requirement check loads, holds UDP port 4791.
bt=/krwq/blktests
rel=$(uname -r)

# bash's process substitution reads /dev/fd/N
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mkdir -p "/lib/modules/$rel/extra"
cp /krwq/mods/*.ko "/lib/modules/$rel/extra/"
depmod -a
# the device nodes whose opening loads their module, which udev makes at
# boot on a real system (kmod static-nodes): blktests unloads loop after
# a test that loaded it, and a later losetup must load it again by
# opening /dev/loop-control
kmod static-nodes --format=tmpfiles | while read -r type path mode _ _ _ devno; do
	[ -e "$path" ] && continue
	case $type in
	d) mkdir -p "$path" ;;
	[cb]*) mknod -m "$mode" "$path" "${type%"${type#?}"}" "${devno%:*}" "${devno#*:}" ;;
	esac
done
modprobe configfs
grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs configfs /sys/kernel/config
mkdir -p /etc/modprobe.d
echo "options krwq wire=0" > /etc/modprobe.d/krwq.conf
# The tests' images live in their output folder: on ext4, since nvmet's
# file backend opens them with O_DIRECT, which the guest's root (a
# ramfs) refuses with EINVAL.  A memory-backed null_blk holds it; discard
# gives a deleted image's memory back.
mkdir -p /mnt/bt
if ! { modprobe null_blk nr_devices=1 gb=1 memory_backed=1 discard=1 &&
	mkfs.ext4 -q /dev/nullb0 && mount -o discard /dev/nullb0 /mnt/bt; }; then
	echo "FAILED: no ext4 on /dev/nullb0 for the tests' images"
	exit 1
fi
ip link add bt0 type dummy
ip addr add 192.0.2.1/24 dev bt0
ip link set bt0 up

for dev in krwq rxe siw; do
	case $dev in
	# USE_RXE too: the nvme group's requirement names rdma_rxe or siw
	krwq) use='USE_KRWQ=1
USE_RXE=1' ;;
	rxe) use='USE_RXE=1' ;;
	# blktests binds siw where neither is set
	siw) use= ;;
	esac
	cat > $bt/config <<-EOF
		nvme_trtype=rdma
		QUICK_RUN=1
		TIMEOUT=20
		nvme_img_size=512M
		$use
	EOF
	res=/mnt/bt/blktests-$dev
	t0=$(cut -d. -f1 /proc/uptime)
	(cd $bt && timeout 5400 bash ./check -o $res "$@") > /tmp/blktests-$dev.log 2>&1
	rc=$?
	echo "# blktests on $dev: status $rc, $(($(cut -d. -f1 /proc/uptime) - t0)) s"
	sed 's/^/# /' /tmp/blktests-$dev.log
	# the override records the links each test had in its full log
	bound=$(grep -l '^link [^ ]*_krwq/' "$res"/*/*/*.full 2> /dev/null | wc -l)
	own=$(grep -l "^link [^ ]*_$dev/" "$res"/*/*/*.full 2> /dev/null | wc -l)
	echo "@@blktests-status $dev $rc $bound $own"
	# why each test did not run: the indented lines after its status
	awk -v dev=$dev '
		function flush() { if (t != "" && why != "") print "@@blktests-why " dev " " t " " why; t = why = "" }
		/\[not run\] *$/ { flush(); t = $1; if (match($0, /bd=[a-z]+/)) t = t ":bd_" substr($0, RSTART + 3, RLENGTH - 3); next }
		/^    / && t != "" { sub(/^ +/, ""); if ($0 !~ /^runtime/) why = why (why == "" ? "" : "; ") $0; next }
		{ flush() }
		END { flush() }' /tmp/blktests-$dev.log
	for f in "$res"/*/*/*; do
		# a test's status file has no dot: .out, .out.bad, .full, .dmesg
		# and .runtime are beside it
		case ${f##*/} in *.*) continue ;; esac
		[ -f "$f" ] || continue
		# RESULTS/nodev_tr_rdma[_bd_file]/GROUP/NNN: the folder's
		# suffix names the variant (the nvme group runs each target
		# test with a block device, then with a file, behind nvmet)
		test=${f%/*}
		variant=${test%/*}
		variant=${variant##*/nodev_tr_rdma}
		test=${test##*/}/${f##*/}${variant:+:${variant#_}}
		st=$(sed -n 's/^status\t//p' "$f")
		case $st in
		pass) st=passed ;;
		fail) st=failed ;;
		esac
		echo "@@blktests $dev $test ${st:-unknown}"
		if [ "$st" = failed ]; then
			sed 's/^/#   diff: /' "$f.out.bad"
			sed 's/^/#   dmesg: /' "$f.dmesg" 2> /dev/null
			tail -n 30 "$f.full" 2> /dev/null | sed 's/^/#   full: /'
		fi
	done
	# nothing of this pass may reach the next: a device left bound to
	# bt0 would make blktests skip binding its own there
	for l in $(rdma link show | sed -n 's,^link \([^/]*\)/.* netdev .*,\1,p'); do
		echo "# left after $dev's pass: $l, deleted"
		rdma link delete "$l"
	done
	modprobe -r krwq 2> /dev/null
	losetup -a | sed 's/^/# left: /'
done
