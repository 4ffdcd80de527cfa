// SPDX-License-Identifier: GPL-2.0
/*
 * pd.c - protection domains.
 */
#include "krwq.h"

/**
 * krwq_alloc_pd() - the ib_device_ops.alloc_pd of krwq.
 * @ibpd: allocated by the RDMA core.
 * @udata: user data (none is exchanged).
 *
 * Return: 0, or -ENOMEM past the device's max_pd.
 */
int krwq_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct krwq_dev *dev = to_kdev(ibpd->device);

	if (atomic_inc_return(&dev->n_pd) > KRWQ_MAX_PD) {
		atomic_dec(&dev->n_pd);
		return -ENOMEM;
	}
	return 0;
}

/**
 * krwq_dealloc_pd() - the ib_device_ops.dealloc_pd of krwq.
 * @ibpd: the PD; the RDMA core has checked it is unused.
 * @udata: user data.
 *
 * Return: 0.
 */
int krwq_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_kdev(ibpd->device)->n_pd);
	return 0;
}
