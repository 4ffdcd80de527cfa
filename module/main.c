// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - module entry points of krwq.
 */
#include <linux/module.h>

static int __init krwq_init(void)
{
	pr_info("krwq: receive-queue core loaded\n");
	return 0;
}

static void __exit krwq_exit(void)
{
}

module_init(krwq_init);
module_exit(krwq_exit);

MODULE_DESCRIPTION("krwq: rdmavt-style receive queues with a C++ core");
MODULE_LICENSE("GPL");
