// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - module entry points of krwq: the devices and the workqueue
 * their deferred work (completion handlers, RNR retries, QP errors) runs on.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/rdma_netlink.h>

#include "krwq.h"

#define KRWQ_MAX_DEVICES 16

static unsigned int num_devices = 1;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "IB-mode RDMA devices to create, krwq0 ... (0-16, default 1; 0: only the netdev-bound ones rdma link add makes)");

unsigned int krwq_abi = 2;
module_param_named(abi, krwq_abi, uint, 0444);
MODULE_PARM_DESC(abi, "uverbs ABI of rdma-core's ipathverbs provider: 1 = every verb through the kernel, 2 = mapped receive and completion rings (default 2)");

struct workqueue_struct *krwq_wq;

/* Unregisters every device, of both kinds; each leaves the fabric. */
static void krwq_remove_all(void)
{
	struct krwq_dev *dev, *last = NULL;

	while ((dev = krwq_fabric_any())) {
		/* an unregistered device has left: never the same one twice */
		if (WARN_ON(dev == last)) {
			put_device(&dev->ibdev.dev);
			break;
		}
		krwq_dev_remove(dev);
		put_device(&dev->ibdev.dev);
		last = dev;
	}
}

static int __init krwq_init(void)
{
	struct krwq_dev *dev;
	unsigned int i;
	int ret;

	if (num_devices > KRWQ_MAX_DEVICES) {
		pr_err("krwq: num_devices=%u is out of range 0-%u\n",
		       num_devices, KRWQ_MAX_DEVICES);
		return -EINVAL;
	}
	if (krwq_abi != 1 && krwq_abi != 2) {
		pr_err("krwq: abi=%u is not 1 or 2\n", krwq_abi);
		return -EINVAL;
	}
	krwq_wq = alloc_workqueue("krwq", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!krwq_wq)
		return -ENOMEM;
	ret = krwq_net_init();
	if (ret) {
		destroy_workqueue(krwq_wq);
		return ret;
	}
	for (i = 0; i < num_devices; i++) {
		ret = krwq_dev_add(i, &dev);
		if (ret)
			goto err_devs;
	}
	ret = krwq_netdev_init();
	if (ret)
		goto err_devs;
	return 0;

err_devs:
	krwq_remove_all();
	krwq_dev_wait_all_released();
	krwq_net_exit();
	destroy_workqueue(krwq_wq);
	return ret;
}

static void __exit krwq_exit(void)
{
	krwq_netdev_exit();
	krwq_remove_all();
	krwq_dev_wait_all_released();
	krwq_net_exit();
	destroy_workqueue(krwq_wq);
}

module_init(krwq_init);
module_exit(krwq_exit);

MODULE_DESCRIPTION("krwq: a loopback RDMA device with rdmavt-style receive queues in C++");
MODULE_LICENSE("GPL");
/* Kbuild passes dkms.conf's PACKAGE_VERSION */
MODULE_VERSION(KRWQ_VERSION);
/*
 * Without ib_uverbs krwq0 is useless to user space; where ib_umem_get()
 * (in ib_uverbs) already makes it a dependency, this only says so to the
 * tools that read soft dependencies.
 */
MODULE_SOFTDEP("pre: ib_uverbs");
MODULE_ALIAS_RDMA_LINK("krwq");
