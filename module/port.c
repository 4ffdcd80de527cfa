// SPDX-License-Identifier: GPL-2.0
/*
 * port.c - a device's one port as the data path sees it: whether it
 * carries traffic, its MTU, its GID.  Asked by the ops (device.c), by
 * rdma link (netdev.c), by address resolution (fabric.c) and by every
 * send (req.c, resp.c); it asks nobody.
 */
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

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
 * krwq_port_wc_vlan() - mark a receive completion of @dev's with the VLAN
 * its packet came over: the VLAN of the netdev whose address is the
 * packet's destination GID (an address of a VLAN netdev on top of the
 * bound one).  The RDMA core picks the GID an answer goes from by the
 * VLAN a completion names (none: 0xffff), so without it the IB CM finds
 * no GID for a REQ that came over a VLAN, and drops it.
 * @dev: the receiving device.
 * @wc: the completion, for a kernel consumer (user space's completions
 *      have no place for the VLAN).
 * @dgid: the packet's destination GID.
 *
 * Context: any; takes the GID table's lock for reading.
 */
void krwq_port_wc_vlan(struct krwq_dev *dev, struct ib_wc *wc,
		       const union ib_gid *dgid)
{
	const struct ib_gid_attr *attr;
	u16 vlan_id = 0xffff;

	if (!dev->ndev)
		return;
	/* RoCE v1 and v2 entries of one address share its netdev */
	attr = rdma_find_gid_by_port(&dev->ibdev, dgid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, 1, NULL);
	if (IS_ERR(attr))
		attr = rdma_find_gid_by_port(&dev->ibdev, dgid,
					     IB_GID_TYPE_ROCE, 1, NULL);
	if (IS_ERR(attr))
		return;
	if (!rdma_read_gid_l2_fields(attr, &vlan_id, NULL) &&
	    vlan_id < VLAN_N_VID) {
		wc->wc_flags |= IB_WC_WITH_VLAN;
		wc->vlan_id = vlan_id;
	}
	rdma_put_gid_attr(attr);
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
