#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Inside the VM booted with KRWQ_KERNEL=debian: is this Debian's own
# kernel, with the RDMA core loaded from its package and krwq.ko built for
# it?  One TAP line per check, then "N passed, N failed".
#   debian.sh RELEASE      (the release the package ships, e.g. 6.1.0-57-amd64)
rel=$1
log=/tmp/debian-check.log
# shellcheck source=tap.sh # scripts/vm puts it in /krwq/lib
. /krwq/lib/tap.sh


tap_check "uname -r is the package's release $rel" test "$(uname -r)" = "$rel"
tap_check "/proc/version: built by Debian" grep -q 'debian-kernel@lists.debian.org' /proc/version
for m in ib_core ib_uverbs; do
	tap_check "$m is a loaded module from the package's tree" \
		sh -c "grep -q '^$m ' /proc/modules && modinfo -n $m | grep -q '^/lib/modules/$rel/kernel/'"
done
tap_check "krwq.ko's vermagic is $rel" sh -c "modinfo -F vermagic /krwq/krwq.ko | grep -q '^$rel '"
tap_check "krwq0 is registered" test -d /sys/class/infiniband/krwq0
tap_summary
