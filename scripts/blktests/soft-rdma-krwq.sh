# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# krwq's one change to blktests, appended by scripts/check-blktests to
# the copy's common/multipath-over-rdma, so that it is sourced wherever
# that file is and its definitions win.
#
# What it changes: with USE_KRWQ set (blktests' config), start_soft_rdma
# loads krwq (with num_devices=0, so that the only krwq devices are
# netdev-bound, as rdma_rxe's and siw's are) instead of rdma_rxe or siw
# and binds a krwq device to each netdev that blktests would bind its
# own device to, and stop_soft_rdma deletes those devices and unloads
# krwq.  Without USE_KRWQ both behave
# as blktests wrote them (the copies below run the originals), and
# start_soft_rdma only adds to the test's full log what the other case
# adds: the links it left, the record scripts/guest/blktests.sh counts.
# The tests themselves, their requirements (the nvme group still asks
# for rdma_rxe or siw to be available) and their pass criteria are
# untouched.

declare -F start_soft_rdma stop_soft_rdma > /dev/null ||
	{ echo "soft-rdma-krwq.sh: blktests has no start_soft_rdma or stop_soft_rdma" >&2; exit 1; }
eval "blktests_$(declare -f start_soft_rdma)"
eval "blktests_$(declare -f stop_soft_rdma)"

start_soft_rdma() {
	if [ -z "$USE_KRWQ" ]; then
		blktests_start_soft_rdma || return $?
		rdma link show >> "$FULL"
		return
	fi
	{
	# no IB-mode krwq0: blktests logs in through every RDMA device, and
	# each must have a netdev, as rdma_rxe's and siw's do
	modprobe krwq num_devices=0 || return $?
	(
		cd /sys/class/net &&
			for i in *; do
				[ -e "$i" ] || continue
				[ "$i" = lo ] && continue
				[ "$(<"$i/addr_len")" = 6 ] || continue
				[ "$(<"$i/carrier")" = 1 ] || continue
				has_soft_rdma "$i" && continue
				rdma link add "${i}_krwq" type krwq netdev "$i" ||
					echo "Failed to bind krwq to $i"
			done
	)
	# the record scripts/guest/blktests.sh counts: the links made
	rdma link show | grep '_krwq/'
	} >> "$FULL"
}

stop_soft_rdma() {
	[ -n "$USE_KRWQ" ] || { blktests_stop_soft_rdma; return; }
	{
	rdma link |
		sed -n 's,^link[[:blank:]]*\([^/]*\)/.* netdev .*,\1,p' |
		while read -r i; do
			rdma link del "$i" || echo "Failed to remove $i"
		done
	if ! _unload_module krwq 10; then
		echo "Unloading krwq failed"
		return 1
	fi
	} >> "$FULL"
}
