// SPDX-License-Identifier: GPL-2.0
/*
 * ah.c - address handles, for UD sends: a copy of the attributes, checked
 * for sense, with where they lead resolved once (fabric.c).
 */
#include "krwq.h"

/**
 * krwq_ah_attr_ok() - whether an address vector suits a device: an IB one
 * with a unicast LID in InfiniBand mode, a RoCE one with a GRH when
 * netdev-bound; port 1 or unset.
 * @dev: the device.
 * @attr: the address vector.
 *
 * Context: any.
 * Return: true if it does.
 */
bool krwq_ah_attr_ok(struct krwq_dev *dev, const struct rdma_ah_attr *attr)
{
	u32 port = rdma_ah_get_port_num(attr);

	if (port && port != 1)
		return false;
	if (dev->ndev)
		return attr->type == RDMA_AH_ATTR_TYPE_ROCE &&
		       (rdma_ah_get_ah_flags(attr) & IB_AH_GRH);
	return attr->type == RDMA_AH_ATTR_TYPE_IB && rdma_ah_get_dlid(attr) &&
	       rdma_ah_get_dlid(attr) < be16_to_cpu(IB_MULTICAST_LID_BASE);
}

/**
 * krwq_create_ah() - ib_device_ops.create_ah and .create_user_ah.
 * @ibah: allocated by the RDMA core.
 * @init: the attributes.
 * @udata: user data (none is exchanged).
 *
 * An address no krwq device holds is accepted: datagrams sent to it are
 * dropped, as on a fabric where the peer is unreachable.
 *
 * Context: any (the RDMA core may create an AH in atomic context).
 * Return: 0, -EINVAL for a bad port, LID or kind of address, -ENOMEM past
 * max_ah.
 */
int krwq_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata)
{
	struct krwq_dev *dev = to_kdev(ibah->device);
	struct rdma_ah_attr *attr = init->ah_attr;
	struct krwq_ah *ah = to_kah(ibah);

	if (rdma_ah_get_port_num(attr) != 1 || !krwq_ah_attr_ok(dev, attr))
		return -EINVAL;
	if (atomic_inc_return(&dev->n_ah) > KRWQ_MAX_AH) {
		atomic_dec(&dev->n_ah);
		return -ENOMEM;
	}
	krwq_fabric_route(dev, attr, &ah->route);
	ah->attr = *attr;
	ah->attr.grh.sgid_attr = NULL;	/* not kept: unreferenced */
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
