// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - per-device counters, per CPU so that counting costs the hot
 * paths no shared cache line, read through the RDMA core's hardware
 * counter interface (`rdma statistic show link krwq0/1`).
 */
#include <linux/percpu.h>

#include "krwq.h"

static const struct rdma_stat_desc krwq_stat_descs[KRWQ_STAT_MAX] = {
	[KRWQ_STAT_RX_POSTED] = { .name = "rx_posted" },
	[KRWQ_STAT_RX_TAKEN] = { .name = "rx_taken" },
	[KRWQ_STAT_RX_FULL] = { .name = "rx_post_full" },
	[KRWQ_STAT_RX_FLUSHED] = { .name = "rx_flushed" },
	[KRWQ_STAT_SRQ_LIMIT] = { .name = "srq_limit_events" },
	[KRWQ_STAT_RNR_RETRIES] = { .name = "rnr_retries" },
	[KRWQ_STAT_ACK_TIMEOUTS] = { .name = "ack_timeouts" },
	[KRWQ_STAT_CQ_OVERFLOWS] = { .name = "cq_overflows" },
	[KRWQ_STAT_LOOPBACK_BYTES] = { .name = "loopback_bytes" },
	[KRWQ_STAT_UD_DROPPED] = { .name = "ud_dropped" },
	[KRWQ_STAT_RX_DROPPED] = { .name = "rx_dropped" },
	[KRWQ_STAT_LOCAL_MSGS] = { .name = "local_msgs" },
	[KRWQ_STAT_WIRE_TX] = { .name = "wire_tx_packets" },
	[KRWQ_STAT_WIRE_TX_DROPPED] = { .name = "wire_tx_dropped" },
	[KRWQ_STAT_WIRE_RX] = { .name = "wire_rx_packets" },
	[KRWQ_STAT_WIRE_RX_DROPPED] = { .name = "wire_rx_dropped" },
	[KRWQ_STAT_WIRE_ICRC_ERRORS] = { .name = "wire_icrc_errors" },
	[KRWQ_STAT_INV_WAITS] = { .name = "inv_waits" },
	[KRWQ_STAT_CQ_HELD] = { .name = "cq_events_held" },
};

/**
 * krwq_alloc_hw_port_stats() - ib_device_ops.alloc_hw_port_stats.
 * @ibdev: the device.
 * @port: its port (1).
 *
 * Return: the counter set, read afresh at every query.
 */
struct rdma_hw_stats *krwq_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return rdma_alloc_hw_stats_struct(krwq_stat_descs, KRWQ_STAT_MAX, 0);
}

/**
 * krwq_get_hw_stats() - ib_device_ops.get_hw_stats: sum the CPUs' counts.
 * @ibdev: the device.
 * @stats: from krwq_alloc_hw_port_stats().
 * @port: its port.
 * @index: a single counter to update, or all of them.
 *
 * Return: the number of counters.
 */
int krwq_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct krwq_dev *dev = to_kdev(ibdev);
	int cpu, i;

	for (i = 0; i < KRWQ_STAT_MAX; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(dev->stats, cpu)->v[i];
		stats->value[i] = sum;
	}
	return KRWQ_STAT_MAX;
}
