// SPDX-License-Identifier: GPL-2.0
/*
 * netdev.c - netdev-bound krwq devices.  `rdma link add NAME type krwq
 * netdev DEV` creates one (the RDMA core's link ops), `rdma link delete
 * NAME` removes it (the RDMA core's own unregistration, allowed by
 * IBK_ALLOW_USER_UNREG), and a netdevice notifier keeps its port in step
 * with DEV: active while DEV is up with carrier, gone when DEV goes.
 *
 * A netdevice notifier runs under RTNL, where unregistering an RDMA device
 * (which takes RTNL itself, through its clients) would deadlock, so DEV's
 * going away queues the unregistration on krwq_unreg_wq instead.
 */
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <rdma/rdma_netlink.h>

#include "krwq.h"

static struct workqueue_struct *krwq_unreg_wq;
static DEFINE_MUTEX(krwq_link_lock);	/* one newlink at a time */

/* An unregistration queued by DEV's going away. */
struct krwq_unreg {
	struct work_struct work;
	struct krwq_dev *dev;	/* its struct device held until done */
};

static void krwq_unreg_work(struct work_struct *work)
{
	struct krwq_unreg *u = container_of(work, struct krwq_unreg, work);

	/* a no-op if `rdma link delete` got there first */
	ib_unregister_device(&u->dev->ibdev);
	put_device(&u->dev->ibdev.dev);
	kfree(u);
}

/* Queues @dev's unregistration, holding its struct device until then. */
static void krwq_unregister_later(struct krwq_dev *dev)
{
	struct krwq_unreg *u = kmalloc(sizeof(*u), GFP_KERNEL);

	/* without memory the device stays, holding DEV, until rmmod */
	if (!u)
		return;
	INIT_WORK(&u->work, krwq_unreg_work);
	u->dev = dev;
	get_device(&dev->ibdev.dev);
	queue_work(krwq_unreg_wq, &u->work);
}

/* Tells the port's users when DEV's admin state or carrier changed it. */
static void krwq_port_changed(struct krwq_dev *dev)
{
	bool active = krwq_port_active(dev);
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = 1,
		.event = active ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
	};

	/* netdevice notifiers run one at a time, under RTNL */
	if (dev->port_was_active != active) {
		dev->port_was_active = active;
		ib_dispatch_event(&ev);
	}
}

static int krwq_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct krwq_dev *dev;

	if (event != NETDEV_UNREGISTER && event != NETDEV_UP &&
	    event != NETDEV_DOWN && event != NETDEV_CHANGE)
		return NOTIFY_DONE;
	dev = krwq_fabric_find_netdev(ndev);
	if (!dev)
		return NOTIFY_DONE;
	if (event == NETDEV_UNREGISTER)
		krwq_unregister_later(dev);
	else
		krwq_port_changed(dev);
	put_device(&dev->ibdev.dev);
	return NOTIFY_DONE;
}

static struct notifier_block krwq_netdev_notifier = {
	.notifier_call = krwq_netdev_event,
};

static int krwq_newlink(const char *name, struct net_device *ndev)
{
	struct krwq_dev *dev;
	int ret;

	/* RoCE runs over Ethernet; not over loopback, tunnels or IPoIB */
	if (ndev->type != ARPHRD_ETHER)
		return -EINVAL;
	mutex_lock(&krwq_link_lock);
	dev = krwq_fabric_find_netdev(ndev);
	if (dev) {
		put_device(&dev->ibdev.dev);
		ret = -EEXIST;
	} else {
		ret = krwq_dev_add_netdev(name, ndev);
	}
	mutex_unlock(&krwq_link_lock);
	return ret;
}

static struct rdma_link_ops krwq_link_ops = {
	.type = "krwq",
	.newlink = krwq_newlink,
};

/**
 * krwq_netdev_init() - accept `rdma link add ... type krwq` and follow
 * netdevs.
 *
 * Context: module init.
 * Return: 0, -ENOMEM, or the notifier's registration error.
 */
int krwq_netdev_init(void)
{
	int ret;

	krwq_unreg_wq = alloc_ordered_workqueue("krwq_unreg", 0);
	if (!krwq_unreg_wq)
		return -ENOMEM;
	ret = register_netdevice_notifier(&krwq_netdev_notifier);
	if (ret) {
		destroy_workqueue(krwq_unreg_wq);
		return ret;
	}
	rdma_link_register(&krwq_link_ops);
	return 0;
}

/**
 * krwq_netdev_exit() - no more new netdev-bound devices, and every
 * unregistration a vanished netdev queued is done.  The devices still
 * bound are the caller's to remove.
 *
 * Context: module exit.
 */
void krwq_netdev_exit(void)
{
	rdma_link_unregister(&krwq_link_ops);
	unregister_netdevice_notifier(&krwq_netdev_notifier);
	destroy_workqueue(krwq_unreg_wq);	/* runs what is queued */
}
