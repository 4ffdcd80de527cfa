#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the Debian-kernel VM of scripts/check-blktests: blktests'
# nvme group (with nvme_trtype=rdma) and its srp group, or some of their
# tests, once with krwq as the soft-RDMA device (USE_KRWQ,
# scripts/blktests/soft-rdma-krwq.sh), once with rdma_rxe (USE_RXE) and
# once with siw (blktests' default when USE_RXE is not set; the host
# built siw.ko, which Debian's kernel lacks, and it comes beside
# krwq.ko).  The nvme tests run first, on all three devices, then the
# srp tests.  Prints blktests' whole output as comment lines, then one
# line per test and device,
#   @@blktests DEVICE TEST STATUS
# STATUS being blktests' own: passed, failed or "not run"; for each test
# that did not run
#   @@blktests-why DEVICE TEST REASON[; REASON...]
# and for each pass (a group on a device)
#   @@blktests-status DEVICE GROUP RC BOUND OWN
# RC being ./check's exit status (1 when a test failed, 124 when the pass
# ran out of time), BOUND the number of tests whose full log shows a
# krwq device bound and OWN the number that show one of DEVICE's (the
# override's record: on krwq's pass BOUND is more than none, or the
# override was not used; on rxe's and siw's BOUND is none and OWN more
# than none, or blktests bound another device).  A failed
# test's diff, dmesg and the end of its full log follow it as comment
# lines.
#
#   blktests.sh TEST...      (nvme, srp, nvme/NNN or srp/NNN...)
#
# blktests binds its device to every netdev with a MAC and a carrier:
# here one dummy netdev, bt0, with 192.0.2.1/24, which nvme_trtype=rdma
# then uses as the target's address.  krwq and siw are loaded by
# modprobe (from /lib/modules, so that siw's libcrc32c, and the crc32c
# it asks the crypto API for, come with it); krwq with wire=0: both ends
# are in this kernel, where krwq delivers without packets, and rdma_rxe,
# which blktests' requirement check loads, holds UDP port 4791.
#
# The nvme tests keep their images on ext4 on a null_blk device; the srp
# tests make null_blk devices of their own (they reload the module), so
# that ext4 is gone before them and their results go to a tmpfs.  The
# srp tests find their multipath devices through the links udev makes
# (/dev/disk/by-id/dm-uuid-mpath-*), and multipathd learns of paths from
# udev's events: systemd-udevd runs for them, as on the maintainers'
# machines, and not for the nvme tests, which never needed it.
bt=/krwq/blktests
rel=$(uname -r)

# bash's process substitution reads /dev/fd/N
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
# under kernel/, where blktests' _have_module looks for a module's file
mkdir -p "/lib/modules/$rel/kernel/krwq-extra"
cp /krwq/mods/*.ko "/lib/modules/$rel/kernel/krwq-extra/"
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
ip link add bt0 type dummy
ip addr add 192.0.2.1/24 dev bt0
ip link set bt0 up

nvme_tests='' srp_tests=''
for t in "$@"; do
	case $t in
	nvme*) nvme_tests="$nvme_tests $t" ;;
	srp*) srp_tests="$srp_tests $t" ;;
	esac
done

# run_pass DEVICE GROUP RESULTS SECONDS TEST...: TESTs (of GROUP) once
# on DEVICE, their results in the folder RESULTS, within SECONDS
# seconds, and what they did reported as the header says
run_pass() {
	rp_dev=$1 rp_group=$2 rp_res=$3 rp_secs=$4
	shift 4
	case $rp_dev in
	# USE_RXE too: the groups' requirements name rdma_rxe or siw
	krwq) rp_use='USE_KRWQ=1
USE_RXE=1' ;;
	rxe) rp_use='USE_RXE=1' ;;
	# blktests binds siw where neither is set
	siw) rp_use= ;;
	esac
	cat > $bt/config <<-EOC
		nvme_trtype=rdma
		QUICK_RUN=1
		TIMEOUT=20
		nvme_img_size=512M
		$rp_use
	EOC
	rp_log=/tmp/blktests-$rp_dev-$rp_group.log
	rp_t0=$(cut -d. -f1 /proc/uptime)
	(cd $bt && timeout "$rp_secs" bash ./check -o "$rp_res" "$@") > "$rp_log" 2>&1
	rp_rc=$?
	echo "# blktests $rp_group on $rp_dev: status $rp_rc, $(($(cut -d. -f1 /proc/uptime) - rp_t0)) s"
	sed 's/^/# /' "$rp_log"
	# the override records the links each test had in its full log
	rp_bound=$(grep -l '^link [^ ]*_krwq/' "$rp_res"/*/*/*.full 2> /dev/null | wc -l)
	rp_own=$(grep -l "^link [^ ]*_$rp_dev/" "$rp_res"/*/*/*.full 2> /dev/null | wc -l)
	echo "@@blktests-status $rp_dev $rp_group $rp_rc $rp_bound $rp_own"
	# why each test did not run: the indented lines after its status
	awk -v dev="$rp_dev" '
		function flush() { if (t != "" && why != "") print "@@blktests-why " dev " " t " " why; t = why = "" }
		/\[not run\] *$/ { flush(); t = $1; if (match($0, /bd=[a-z]+/)) t = t ":bd_" substr($0, RSTART + 3, RLENGTH - 3); next }
		/^    / && t != "" { sub(/^ +/, ""); if ($0 !~ /^runtime/) why = why (why == "" ? "" : "; ") $0; next }
		{ flush() }
		END { flush() }' "$rp_log"
	for f in "$rp_res"/*/*/*; do
		# a test's status file has no dot: .out, .out.bad, .full, .dmesg
		# and .runtime are beside it
		case ${f##*/} in *.*) continue ;; esac
		[ -f "$f" ] || continue
		# RESULTS/nodev_tr_rdma[_bd_file]/GROUP/NNN (nvme) or
		# RESULTS/nodev/srp/NNN: the folder's suffix names the variant
		# (the nvme group runs each target test with a block device,
		# then with a file, behind nvmet)
		test=${f%/*}
		variant=${test%/*}
		variant=${variant##*/nodev}
		variant=${variant#_tr_rdma}
		test=${test##*/}/${f##*/}${variant:+:${variant#_}}
		st=$(sed -n 's/^status\t//p' "$f")
		case $st in
		pass) st=passed ;;
		fail) st=failed ;;
		esac
		echo "@@blktests $rp_dev $test ${st:-unknown}"
		if [ "$st" = failed ]; then
			sed 's/^/#   diff: /' "$f.out.bad"
			sed 's/^/#   dmesg: /' "$f.dmesg" 2> /dev/null
			tail -n 30 "$f.full" 2> /dev/null | sed 's/^/#   full: /'
		fi
	done
	# nothing of this pass may reach the next: a device left bound to
	# bt0 would make blktests skip binding its own there
	for l in $(rdma link show | sed -n 's,^link \([^/]*\)/.* netdev .*,\1,p'); do
		echo "# left after $rp_dev's $rp_group pass: $l, deleted"
		rdma link delete "$l"
	done
	modprobe -r krwq 2> /dev/null
	losetup -a | sed 's/^/# left: /'
}

mkdir -p /mnt/bt
if [ -n "$nvme_tests" ]; then
	# The tests' images live in their output folder: on ext4, since
	# nvmet's file backend opens them with O_DIRECT, which the guest's
	# root (a ramfs) refuses with EINVAL.  A memory-backed null_blk
	# holds it; discard gives a deleted image's memory back.
	if ! { modprobe null_blk nr_devices=1 gb=1 memory_backed=1 discard=1 &&
		mkfs.ext4 -q /dev/nullb0 && mount -o discard /dev/nullb0 /mnt/bt; }; then
		echo "FAILED: no ext4 on /dev/nullb0 for the tests' images"
		exit 1
	fi
	for dev in krwq rxe siw; do
		# shellcheck disable=SC2086 # the tests are words
		run_pass $dev nvme /mnt/bt/blktests-$dev 5400 $nvme_tests
	done
	if ! { umount /mnt/bt && modprobe -r null_blk; }; then
		# the srp tests would fail for want of null_blk, not of RDMA
		echo "FAILED: the nvme tests' null_blk is still held; no srp pass"
		srp_tests=''
	fi
fi
if [ -n "$srp_tests" ]; then
	mount -t tmpfs -o size=2g tmpfs /mnt/bt
	mkdir -p /run/udev
	/lib/systemd/systemd-udevd --daemon || echo "# systemd-udevd did not start"
	udevadm trigger --type=subsystems --action=add
	udevadm trigger --type=devices --action=add
	udevadm settle
	for dev in krwq rxe siw; do
		# shellcheck disable=SC2086 # the tests are words
		run_pass $dev srp /mnt/bt/blktests-srp-$dev 3600 $srp_tests
	done
	udevadm control --exit
fi
