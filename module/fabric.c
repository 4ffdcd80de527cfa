// SPDX-License-Identifier: GPL-2.0
/*
 * fabric.c - the host-wide fabric that joins every krwq device: which
 * device an address names, and what a datagram's receiver is told of its
 * source.
 *
 * A send whose destination is a krwq device on this host is delivered into
 * that device's QP, and no packet is made.  An address no krwq device
 * holds names nobody here: a netdev-bound device's send to it goes on the
 * wire (net.c), and an InfiniBand-mode device's is lost, like one to a
 * peer that is unreachable on a real fabric.
 * InfiniBand-mode devices (krwq0 ...) are addressed by LID; netdev-bound
 * (RoCE) devices by a GID of their GID table, which the RDMA core fills
 * from the netdev's IP addresses, together with the MAC the core resolved
 * for it, and only within the sender's network namespace.
 *
 * An address is resolved once, when an AH is created or a connected QP is
 * given its path, into the destination device's fabric id; a send then
 * finds the device by id (krwq_fabric_dev_rcu()), which costs one xarray
 * load.  Ids are handed out cyclically, so a QP still aimed at a deleted
 * device does not reach its successor.
 *
 * Locking: krwq_fabric_lock (a mutex) serialises joining and leaving;
 * lookups run under RCU and are safe in any context.  A device leaves the
 * fabric from its dealloc_driver, after the RDMA core has destroyed all of
 * its QPs, and its memory outlives an RCU grace period after that.
 */
#include <kunit/visibility.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <rdma/ib_cache.h>

#include "krwq.h"

static DEFINE_MUTEX(krwq_fabric_lock);
static DEFINE_XARRAY_ALLOC(krwq_fabric_devs);	/* fabric id -> krwq_dev */
static u32 krwq_fabric_next;

/**
 * krwq_fabric_join() - give a device its fabric id and make it findable.
 * @dev: the device, not yet registered.
 *
 * Context: process; takes krwq_fabric_lock.
 * Return: 0 or -ENOMEM.
 */
int krwq_fabric_join(struct krwq_dev *dev)
{
	int ret;

	mutex_lock(&krwq_fabric_lock);
	ret = xa_alloc_cyclic(&krwq_fabric_devs, &dev->fabric_id, dev,
			      XA_LIMIT(0, KRWQ_NO_DEST - 1), &krwq_fabric_next,
			      GFP_KERNEL);
	mutex_unlock(&krwq_fabric_lock);
	return ret < 0 ? ret : 0;
}

/**
 * krwq_fabric_leave() - make a device unfindable, and wait until no
 * lookup can still be using it.
 * @dev: the device.
 *
 * Context: process; takes krwq_fabric_lock; sleeps for an RCU grace period.
 */
void krwq_fabric_leave(struct krwq_dev *dev)
{
	mutex_lock(&krwq_fabric_lock);
	xa_erase(&krwq_fabric_devs, dev->fabric_id);
	mutex_unlock(&krwq_fabric_lock);
	synchronize_rcu();
}

/**
 * krwq_fabric_dev_rcu() - the device with a fabric id.
 * @id: from krwq_fabric_route().
 *
 * Context: the caller holds rcu_read_lock(); the device stays valid until
 * it drops it, and any QP of it found meanwhile by krwq_qp_get() keeps it
 * valid after that.
 * Return: the device, or NULL.
 */
struct krwq_dev *krwq_fabric_dev_rcu(u32 id)
{
	return xa_load(&krwq_fabric_devs, id);
}

/**
 * krwq_fabric_find_netdev() - the netdev-bound device bound to @ndev.
 * @ndev: the netdev.
 *
 * Context: process; takes krwq_fabric_lock.
 * Return: the device with a reference on its struct device (put_device()
 * it; the device may be unregistered meanwhile), or NULL.
 */
struct krwq_dev *krwq_fabric_find_netdev(struct net_device *ndev)
{
	struct krwq_dev *dev, *found = NULL;
	unsigned long id;

	mutex_lock(&krwq_fabric_lock);
	xa_for_each(&krwq_fabric_devs, id, dev) {
		if (dev->ndev == ndev) {
			get_device(&dev->ibdev.dev);
			found = dev;
			break;
		}
	}
	mutex_unlock(&krwq_fabric_lock);
	return found;
}

/**
 * krwq_fabric_any() - some device still in the fabric, with a reference on
 * its struct device; for tearing them all down.
 *
 * Context: process; takes krwq_fabric_lock.
 * Return: the device (put_device() it), or NULL when none is left.
 */
struct krwq_dev *krwq_fabric_any(void)
{
	struct krwq_dev *dev;
	unsigned long id = 0;

	mutex_lock(&krwq_fabric_lock);
	dev = xa_find(&krwq_fabric_devs, &id, ULONG_MAX, XA_PRESENT);
	if (dev)
		get_device(&dev->ibdev.dev);
	mutex_unlock(&krwq_fabric_lock);
	return dev;
}

/**
 * krwq_fabric_by_netdev_rcu() - the netdev-bound device bound to @ndev.
 * @ndev: the netdev.
 *
 * Context: the caller holds rcu_read_lock(); the device stays valid until
 * it drops it.
 * Return: the device, or NULL.
 */
struct krwq_dev *krwq_fabric_by_netdev_rcu(struct net_device *ndev)
{
	struct krwq_dev *dev;
	unsigned long id;

	xa_for_each(&krwq_fabric_devs, id, dev)
		if (dev->ndev == ndev)
			return dev;
	return NULL;
}

/* The InfiniBand-mode device with LID @lid. */
static u32 krwq_fabric_by_lid(u16 lid)
{
	struct krwq_dev *dev;
	unsigned long id;
	u32 found = KRWQ_NO_DEST;

	rcu_read_lock();
	xa_for_each(&krwq_fabric_devs, id, dev) {
		if (!dev->ndev && dev->lid == lid) {
			found = id;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/*
 * Whether @dev is the netdev-bound device a RoCE address leads to: its
 * GID table holds @gid with @type, and the netdev of that GID entry (the
 * bound netdev, or a VLAN upon it) is in @net and has the MAC @dmac (when
 * the RDMA core resolved one; zero otherwise).  The GID table is only
 * looked at while the device is registered (its refcount taken), since
 * the RDMA core frees it during unregistration.  A MAC changing meanwhile
 * is read old or new, or torn into a mismatch: never a wrong match.
 */
static bool krwq_fabric_holds(struct krwq_dev *dev, const struct net *net,
			      const u8 *dmac, const union ib_gid *gid,
			      enum ib_gid_type type)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	bool holds;

	if (!dev->ndev || !ib_device_try_get(&dev->ibdev))
		return false;
	attr = rdma_find_gid_by_port(&dev->ibdev, gid, type, 1, NULL);
	if (IS_ERR(attr)) {
		ib_device_put(&dev->ibdev);
		return false;
	}
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	holds = !IS_ERR(ndev) && net_eq(dev_net(ndev), net) &&
		(is_zero_ether_addr(dmac) || ether_addr_equal(ndev->dev_addr, dmac));
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	ib_device_put(&dev->ibdev);
	return holds;
}

/*
 * The netdev-bound device a RoCE address of @from's leads to: one in
 * network namespace @net that holds @gid with @type and, if the RDMA core
 * resolved @dmac, has that MAC; @from itself first.  Two namespaces may
 * each hold the same address, and one namespace may hold it on two
 * netdevs: the namespace and the MAC tell them apart.
 */
static u32 krwq_fabric_by_gid(struct krwq_dev *from, const struct net *net,
			      const u8 *dmac, const union ib_gid *gid,
			      enum ib_gid_type type)
{
	struct krwq_dev *dev;
	unsigned long id;
	u32 found = KRWQ_NO_DEST;

	if (krwq_fabric_holds(from, net, dmac, gid, type))
		return from->fabric_id;
	rcu_read_lock();
	xa_for_each(&krwq_fabric_devs, id, dev) {
		if (dev != from && krwq_fabric_holds(dev, net, dmac, gid, type)) {
			found = id;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/*
 * Where a RoCE address of @from's is resolved: @net, the network
 * namespace of the source GID's netdev (the bound netdev, or a VLAN upon
 * it; the bound netdev when there is no source GID), and @dmac, the MAC
 * the RDMA core resolved, or zeroes where it names no one device: the
 * core resolves a local address reached through a bound source netdev
 * (as user verbs' address vectors are) to the source's own MAC, whichever
 * local netdev holds the address.  The source GID's attribute holds its
 * netdev, and a netdev its namespace.
 */
static void krwq_fabric_source(struct krwq_dev *from,
			       const struct ib_gid_attr *sgid,
			       const u8 *resolved, const struct net **net,
			       u8 *dmac)
{
	struct net_device *ndev = from->ndev;

	rcu_read_lock();
	if (sgid) {
		struct net_device *s = rdma_read_gid_attr_ndev_rcu(sgid);

		if (!IS_ERR(s))
			ndev = s;
	}
	*net = dev_net(ndev);
	if (ether_addr_equal(resolved, ndev->dev_addr))
		eth_zero_addr(dmac);
	else
		ether_addr_copy(dmac, resolved);
	rcu_read_unlock();
}

/**
 * krwq_fabric_route() - resolve an address vector of @from's into where it
 * leads.
 * @from: the sending device.
 * @ah: the address vector, checked for its kind already: an IB one (by
 *      DLID) on an InfiniBand-mode device, a RoCE one (by DGID, with the
 *      source GID's attributes) on a netdev-bound device.
 * @route: filled in; route->dest is KRWQ_NO_DEST when no krwq device
 *         in the source's network namespace holds the address (with the
 *         MAC the RDMA core resolved for it, if that names a device).
 *
 * Context: any; takes no krwq lock (the RDMA core's GID table lock, read).
 */
void krwq_fabric_route(struct krwq_dev *from, const struct rdma_ah_attr *ah,
		       struct krwq_route *route)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);
	const struct ib_gid_attr *sgid = grh->sgid_attr;
	const struct net *net;
	u8 dmac[ETH_ALEN];

	if (!from->ndev) {
		route->dest = krwq_fabric_by_lid(rdma_ah_get_dlid(ah));
		route->net_type = RDMA_NETWORK_IB;
		krwq_dev_gid(from, &route->sgid);
		return;
	}
	krwq_fabric_source(from, sgid, ah->roce.dmac, &net, dmac);
	if (sgid) {
		route->dest = krwq_fabric_by_gid(from, net, dmac, &grh->dgid,
						 sgid->gid_type);
		route->net_type = rdma_gid_attr_network_type(sgid);
		route->sgid = sgid->gid;
		return;
	}
	/* no source attributes (not from the RDMA core): RoCE v2 */
	route->dest = krwq_fabric_by_gid(from, net, dmac, &grh->dgid,
					 IB_GID_TYPE_ROCE_UDP_ENCAP);
	route->net_type = ipv6_addr_v4mapped((struct in6_addr *)&grh->dgid) ?
			  RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
	memset(&route->sgid, 0, sizeof(route->sgid));
}
EXPORT_SYMBOL_IF_KUNIT(krwq_fabric_route);
