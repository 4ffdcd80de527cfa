// SPDX-License-Identifier: GPL-2.0
/*
 * ah.c - address handles, for UD sends.  The device is its own and only
 * destination, so an AH is a copy of its attributes checked for sense.
 */
#include "krwq.h"

/**
 * krwq_create_ah() - ib_device_ops.create_ah and .create_user_ah.
 * @ibah: allocated by the RDMA core.
 * @init: the attributes.
 * @udata: user data (none is exchanged).
 *
 * Return: 0, -EINVAL for a bad port or LID, -ENOMEM past max_ah.
 */
int krwq_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	struct krwq_dev *dev = to_kdev(ibah->device);
	struct rdma_ah_attr *attr = init->ah_attr;

	if (rdma_ah_get_port_num(attr) != 1 || attr->type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	if (!rdma_ah_get_dlid(attr) || rdma_ah_get_dlid(attr) >= be16_to_cpu(IB_MULTICAST_LID_BASE))
		return -EINVAL;
	if (atomic_inc_return(&dev->n_ah) > KRWQ_MAX_AH) {
		atomic_dec(&dev->n_ah);
		return -ENOMEM;
	}
	to_kah(ibah)->attr = *attr;
	return 0;
}

/**
 * krwq_query_ah() - ib_device_ops.query_ah.
 * @ibah: the AH.
 * @attr: filled with its attributes.
 *
 * Return: 0.
 */
int krwq_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_kah(ibah)->attr;
	return 0;
}

/**
 * krwq_destroy_ah() - ib_device_ops.destroy_ah.
 * @ibah: the AH; sends already posted with it kept their own copy.
 * @flags: RDMA_DESTROY_AH_* (nothing sleeps here anyway).
 *
 * Return: 0.
 */
int krwq_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_kdev(ibah->device)->n_ah);
	return 0;
}
