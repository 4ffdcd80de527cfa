/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in for the kernel's layout markers: on the host, layout.c is
 * built as a program that prints krwq_layout.h instead of assembly that
 * Kbuild post-processes.
 */
#ifndef KRWQ_HOST_KBUILD_H
#define KRWQ_HOST_KBUILD_H
#include <stddef.h>
#include <stdio.h>

#define DEFINE(sym, val) printf("#define %s %zu\n", #sym, (size_t)(val))
#define OFFSET(sym, str, mem) DEFINE(sym, offsetof(struct str, mem))
#define BLANK() printf("\n")
#endif
