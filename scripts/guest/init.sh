#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The test VM's /init: scripts/vm copies this file into every boot.  It
# mounts what the guest needs, loads krwq.ko, runs the one command in
# /krwq and ends every run alike: kmemleak's final scans, the gcov
# counts, the kernel log, the command's status, power off.  The run's
# own values are sh assignments in /krwq/vm.env, which scripts/vm writes
# for each boot (scripts/runner/boot.py, vm_env):
#   KRWQ_LOAD      shell code that loads krwq.ko; empty with --no-module
#   KRWQ_CMD       the command, given to /bin/sh -c
#   KRWQ_KMEMLEAK  0: no final kmemleak scans
#   KRWQ_HELPER    a module to load and unload first (krwq_vm_kmemleak.ko,
#                  which hides KASAN's shadow from kmemleak), or empty
#   KRWQ_GCOV      1: print /sys/kernel/debug/gcov's counts at the end
#   M_*            the marker lines printed for the host to read (defined
#                  in scripts/runner/markers.py); their order and bytes
#                  are the console protocol the runner (scripts/runner/)
#                  parses
# This runs under dash, the guest's /bin/sh, before anything else is up.

KRWQ_LOAD='' KRWQ_CMD='' KRWQ_KMEMLEAK='' KRWQ_HELPER='' KRWQ_GCOV=''
M_BEGIN='' M_CMD_END='' M_SETUP_FAILED='' M_LEAK_BEGIN='' M_LEAK_END=''
M_DMESG_BEGIN='' M_DMESG_END='' M_GCOV_BEGIN='' M_GCOV_END='' M_EXIT='' M_TIMES=''
# shellcheck source=/dev/null # written by scripts/vm for the run
. /krwq/vm.env

setup_failed=
start=
end=
uptime_s() { read -r u _ < /proc/uptime; echo "${u%.*}"; }

# finish STATUS: the end of every run, after which the guest is off
finish() {
	status=$1
	echo "$M_CMD_END"
	[ -z "$setup_failed" ] || echo "$M_SETUP_FAILED"
	leaks=/sys/kernel/debug/kmemleak
	if [ -w $leaks ] && [ "$KRWQ_KMEMLEAK" != 0 ]; then
		# kmemleak reports an object only once it is older than 5 s and
		# two scans in a row found no reference to it: a first scan,
		# then a second one at least 6 s after the command ended.  Under
		# TCG a scan takes some 6 s with the helper loaded first, 14 to
		# 28 s without it.
		echo scan > $leaks
		while [ "$(uptime_s)" -lt $((end + 6)) ]; do sleep 1; done
		echo scan > $leaks
		echo "$M_LEAK_BEGIN"
		cat $leaks
		echo "$M_LEAK_END"
	fi
	gcov=/sys/kernel/debug/gcov
	if [ -n "$KRWQ_GCOV" ] && [ -d $gcov ]; then
		# debugfs gives every .gcda a size of 0, and tar would copy
		# that many bytes: each is read into a tmpfs first.  (An
		# unloaded module's counts stay in debugfs, summed over its
		# loads.)
		find $gcov -name '*.gcda' | while read -r f; do
			mkdir -p "/tmp/gcov${f%/*}"
			cat "$f" > "/tmp/gcov$f"
		done
		echo "$M_GCOV_BEGIN"
		if [ -d /tmp/gcov ]; then
			tar -C "/tmp/gcov$gcov" -czf - . | base64
		fi
		echo "$M_GCOV_END"
	fi
	echo "$M_DMESG_BEGIN"
	dmesg
	echo "$M_DMESG_END"
	echo "$M_TIMES$start $end@@"
	echo "$M_EXIT$status@@"
	reboot -f
	sleep 60
}

# setup_failed WHY...: the command cannot run; say why and finish
setup_failed() {
	echo "krwq-vm: $*" >&2
	setup_failed=1
	end=$(uptime_s)
	finish 1
}

echo "$M_BEGIN"
export PATH=/krwq/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root USER=root LOGNAME=root TERM=dumb NO_COLOR=1
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
hostname krwq-vm
ip link set lo up
chown 1000:1000 /home/krwq

cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
# jiffies or refined-jiffies: the TSC never calibrated
case $cs in
*jiffies)
	setup_failed "CLOCKSOURCE IS $cs: the guest has no real clock" \
		"(the kernel needs ACPI, HPET and X86_PM_TIMER)"
	;;
esac
if [ -n "$KRWQ_HELPER" ] && ! { insmod "$KRWQ_HELPER" && rmmod krwq_vm_kmemleak; }; then
	setup_failed "FAILED: the kmemleak helper $KRWQ_HELPER"
fi
if [ -n "$KRWQ_LOAD" ] && ! eval "$KRWQ_LOAD"; then
	setup_failed "FAILED: $KRWQ_LOAD"
fi

cd /krwq || setup_failed "no /krwq in the image"
start=$(uptime_s)
/bin/sh -c "$KRWQ_CMD" < /dev/null
status=$?
cd /
end=$(uptime_s)
finish "$status"
