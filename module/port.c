// SPDX-License-Identifier: GPL-2.0
/*
 * port.c - a device's one port as the data path sees it: whether it
 * carries traffic, its MTU, its GID.  Asked by the ops (device.c), by
 * rdma link (netdev.c), by address resolution (fabric.c) and by every
 * send (send.c, resp.c); it asks nobody.
 */
#include <linux/netdevice.h>
#include <rdma/ib_addr.h>

#include "krwq.h"

#define KRWQ_SUBNET_PREFIX	0xfe80000000000000ULL

/**
 * krwq_port_active() - whether a device's port carries traffic: always in
 * InfiniBand mode; while its netdev is up with carrier when netdev-bound.
 * @dev: the device.
 *
 * Context: any.
 * Return: true if active.
 */
bool krwq_port_active(struct krwq_dev *dev)
{
	return !dev->ndev ||
	       (netif_running(dev->ndev) && netif_carrier_ok(dev->ndev));
}

/**
 * krwq_port_mtu() - the port's active MTU: its netdev's, less RoCE's
 * headers, at most 4096.
 * @dev: the device.
 *
 * Context: any.
 * Return: IB_MTU_256 ... IB_MTU_4096.
 */
enum ib_mtu krwq_port_mtu(struct krwq_dev *dev)
{
	if (!dev->ndev)
		return KRWQ_MTU;
	return clamp(iboe_get_mtu(READ_ONCE(dev->ndev->mtu)), IB_MTU_256,
		     KRWQ_MTU);
}

/**
 * krwq_port_mtu_bytes() - the port's active MTU in bytes: the largest
 * datagram a UD QP may send.
 * @dev: the device.
 *
 * Context: any.
 * Return: 256 ... 4096.
 */
u32 krwq_port_mtu_bytes(struct krwq_dev *dev)
{
	return ib_mtu_enum_to_int(krwq_port_mtu(dev));
}

/**
 * krwq_path_mtu_bytes() - the payload of each packet but the last of a
 * connected QP's message on the wire: its path MTU, or the port's if that
 * is smaller.  Both ends of a connection must come to the same figure,
 * since a responder counts a READ's responses by it.
 * @qp: an RC or UC QP.
 *
 * Context: any.
 * Return: 256 ... 4096.
 */
u32 krwq_path_mtu_bytes(const struct krwq_qp *qp)
{
	return min_t(u32, ib_mtu_enum_to_int(qp->attr.path_mtu),
		     krwq_port_mtu_bytes(qp->dev));
}

/**
 * krwq_dev_gid() - the device's one GID: link-local prefix and node GUID.
 * @dev: the device.
 * @gid: where to put it.
 */
void krwq_dev_gid(struct krwq_dev *dev, union ib_gid *gid)
{
	gid->global.subnet_prefix = cpu_to_be64(KRWQ_SUBNET_PREFIX);
	gid->global.interface_id = dev->node_guid;
}
