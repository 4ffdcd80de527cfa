// SPDX-License-Identifier: GPL-2.0
/*
 * krwq_vm_guard: part of the test VM runner's own test (scripts/check-vm),
 * not of krwq.  Its init warns and leaks 128 bytes, then succeeds, so a VM
 * run whose command loads it exits 0 and the runner must still fail the
 * run: once for the WARNING, once for kmemleak's report of the leak (the
 * bytes spell "krwq leak guard").  Never load it anywhere else.
 */
#include <linux/bug.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

static int __init vm_guard_init(void)
{
	char *leak = kmalloc(128, GFP_KERNEL);

	if (leak)
		strscpy(leak, "krwq leak guard", 128);
	WARN_ON(1);
	return 0;
}
module_init(vm_guard_init);

MODULE_DESCRIPTION("krwq test VM: a warning and a leak the runner must catch");
MODULE_LICENSE("GPL");
