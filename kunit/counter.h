/* SPDX-License-Identifier: GPL-2.0 */
/*
 * counter.h - a krwq device's counter, read the way `rdma statistic`
 * reads it (through the device's hw_stats ops), for the KUnit suites.
 */
#ifndef KRWQ_KUNIT_COUNTER_H
#define KRWQ_KUNIT_COUNTER_H

#include <linux/string.h>
#include <rdma/ib_verbs.h>

/* Port 1's counter @name on @dev, or U64_MAX if it has none. */
static inline u64 krwq_test_counter(struct ib_device *dev, const char *name)
{
	const struct ib_device_ops *ops = &dev->ops;
	struct rdma_hw_stats *st = ops->alloc_hw_port_stats(dev, 1);
	u64 value = U64_MAX;
	int i;

	if (!st)
		return value;
	ops->get_hw_stats(dev, st, 1, st->num_counters);
	for (i = 0; i < st->num_counters; i++)
		if (!strcmp(st->descs[i].name, name))
			value = st->value[i];
	rdma_free_hw_stats_struct(st);
	return value;
}

#endif /* KRWQ_KUNIT_COUNTER_H */
