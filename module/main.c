// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - module entry points of krwq: the devices and the workqueue
 * their deferred work (completion handlers, RNR retries, QP errors) runs on.
 */
#include <linux/module.h>
#include <linux/slab.h>

#include "krwq.h"

#define KRWQ_MAX_DEVICES 16

static unsigned int num_devices = 1;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "RDMA devices to create, krwq0 ... (1-16, default 1)");

unsigned int krwq_abi = 2;
module_param_named(abi, krwq_abi, uint, 0444);
MODULE_PARM_DESC(abi, "uverbs ABI of rdma-core's ipathverbs provider: 1 = every verb through the kernel, 2 = mapped receive and completion rings (default 2)");

struct workqueue_struct *krwq_wq;
static struct krwq_dev **krwq_devs;
static unsigned int krwq_ndevs;

static void krwq_remove_all(void)
{
	while (krwq_ndevs)
		krwq_dev_remove(krwq_devs[--krwq_ndevs]);
	kfree(krwq_devs);
	krwq_devs = NULL;
}

static int __init krwq_init(void)
{
	int ret;

	if (!num_devices || num_devices > KRWQ_MAX_DEVICES)
		return -EINVAL;
	if (krwq_abi != 1 && krwq_abi != 2)
		return -EINVAL;
	krwq_wq = alloc_workqueue("krwq", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!krwq_wq)
		return -ENOMEM;
	krwq_devs = kcalloc(num_devices, sizeof(*krwq_devs), GFP_KERNEL);
	if (!krwq_devs) {
		ret = -ENOMEM;
		goto err_wq;
	}
	for (; krwq_ndevs < num_devices; krwq_ndevs++) {
		ret = krwq_dev_add(krwq_ndevs, &krwq_devs[krwq_ndevs]);
		if (ret)
			goto err_devs;
	}
	return 0;

err_devs:
	krwq_remove_all();
err_wq:
	destroy_workqueue(krwq_wq);
	return ret;
}

static void __exit krwq_exit(void)
{
	krwq_remove_all();
	destroy_workqueue(krwq_wq);
}

module_init(krwq_init);
module_exit(krwq_exit);

MODULE_DESCRIPTION("krwq: a loopback RDMA device with rdmavt-style receive queues in C++");
MODULE_LICENSE("GPL");
