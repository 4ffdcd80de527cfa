/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in: the UAPI types, plus the kernel-internal short names. */
#ifndef KRWQ_HOST_TYPES_H
#define KRWQ_HOST_TYPES_H
#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

typedef __u8 u8;
typedef __u32 u32;
typedef __u64 u64;

/* the kernel has it from compiler_attributes.h, included everywhere */
#define __aligned(x) __attribute__((__aligned__(x)))
#endif
