// SPDX-License-Identifier: GPL-2.0
/*
 * krwq_vm_kmemleak: part of the test VM runner (scripts/vm), not of krwq.
 *
 * On x86-64, generic KASAN takes the shadow of the linear map from
 * memblock with kmemleak tracking left on, so every kmemleak scan reads
 * the whole shadow: an eighth of the guest's memory, 256 MiB of a 2 GiB
 * guest, each word of it through KASAN-instrumented code.  Under TCG that
 * is most of a scan's time.  The shadow holds shadow bytes, never a
 * pointer, so no reference can hide in it: this module marks each of its
 * blocks for kmemleak to skip (kmemleak_ignore_phys); the marks outlive
 * the module.  scripts/vm loads and unloads it before a run's command
 * when the kernel has both KASAN and kmemleak.
 *
 * A block is what KASAN's set-up mapped at one page-table level: a 4 KiB,
 * 2 MiB or 1 GiB allocation, each one memblock allocation and so one
 * kmemleak object starting where the mapping starts.  Holes between the
 * ranges of memory are not mapped, and read-only mappings (the shared
 * early shadow page) are no kmemleak object: both are skipped.  Memory
 * hot-added later would get a shadow kmemleak does not track this way;
 * the test VM has none, and a mark that misses is a kmemleak complaint
 * the runner fails the run on.  The shadow of the kernel image and of
 * the CPU entry area stays scanned: a few MiB.
 */
#include <linux/kasan.h>
#include <linux/kmemleak.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <asm/pgtable.h>

static int __init vm_kmemleak_init(void)
{
	unsigned long addr = (unsigned long)kasan_mem_to_shadow((void *)PAGE_OFFSET);
	unsigned long end = (unsigned long)kasan_mem_to_shadow(high_memory);
	unsigned long blocks = 0, bytes = 0;

	while (addr < end) {
		unsigned long size, base;
		unsigned int level;
		pte_t *pte = lookup_address(addr, &level);

		if (!pte) {
			addr += PAGE_SIZE;
			continue;
		}
		size = page_level_size(level);
		base = addr & ~(size - 1);
		if (!pte_present(*pte) || !pte_write(*pte)) {
			addr = base + size;
			continue;
		}
		kmemleak_ignore_phys(slow_virt_to_phys((void *)base));
		blocks++;
		bytes += size;
		addr = base + size;
	}
	/* no "KASAN" in the line: the VM runner takes that for a splat */
	pr_info("krwq_vm_kmemleak: kmemleak skips %lu shadow blocks, %lu MiB\n",
		blocks, bytes >> 20);
	return 0;
}

static void __exit vm_kmemleak_exit(void)
{
}

module_init(vm_kmemleak_init);
module_exit(vm_kmemleak_exit);
MODULE_DESCRIPTION("krwq test VM: kmemleak skips the KASAN shadow");
MODULE_LICENSE("GPL");
