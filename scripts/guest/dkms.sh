#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Inside the VM booted with KRWQ_KERNEL=debian, after the other tests:
# the krwq.ko that `dkms install` put in the modules tree on the host
# (scripts/check-debian adds it at /lib/modules/RELEASE/updates/dkms) is
# found, loaded and unloaded by modprobe, as on a machine running
# Debian's kernel.  One TAP line per check, then "N passed, N failed".
#   dkms.sh RELEASE VERSION   (VERSION: dkms.conf's PACKAGE_VERSION)
rel=$1 ver=$2
mods=/lib/modules/$rel
log=/tmp/dkms-check.log
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh

loaded() { grep -q "^$1 " /proc/modules; }

# the runner insmod'ed /krwq/krwq.ko, the same sources built without DKMS
if loaded krwq; then
	tap_check "the runner's krwq.ko unloads" rmmod krwq
fi
tap_check "the DKMS module is installed at updates/dkms" test -f "$mods/updates/dkms/krwq.ko"
tap_check "depmod indexes it" sh -c "depmod -a $rel && grep -q '^updates/dkms/krwq.ko:' $mods/modules.dep"
tap_check "modinfo finds it by name" \
	sh -c "modinfo -n krwq | grep -qx '$mods/updates/dkms/krwq.ko' && modinfo -F version krwq | grep -qx '$ver'"
tap_check "its soft dependency on ib_uverbs is in modules.softdep" \
	grep -q '^softdep krwq pre: ib_uverbs$' "$mods/modules.softdep"
tap_check "modprobe krwq" modprobe krwq
tap_check "the loaded module is version $ver" grep -qx "$ver" /sys/module/krwq/version
tap_check "ib_core and ib_uverbs are loaded with it" sh -c 'grep -q "^ib_core " /proc/modules && grep -q "^ib_uverbs " /proc/modules'
tap_check "krwq0's port is active" sh -c 'ibv_devinfo -d krwq0 | grep -q PORT_ACTIVE'
# modprobe -r also removes the dependencies nothing else uses, and exits 1
# when another module still holds one (after cm.sh, rdma_ucm holds
# ib_uverbs): what counts is that krwq itself is gone
modprobe -r krwq > $log 2>&1
! loaded krwq
report $? "modprobe -r krwq removes it"
tap_summary
