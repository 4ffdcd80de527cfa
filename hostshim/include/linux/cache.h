/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KRWQ_HOST_CACHE_H
#define KRWQ_HOST_CACHE_H
#define SMP_CACHE_BYTES 64
#define ____cacheline_aligned_in_smp __attribute__((__aligned__(SMP_CACHE_BYTES)))
#endif
