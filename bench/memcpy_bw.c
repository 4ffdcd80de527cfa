// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy_bw.c - the physical limit of a copying loopback: copies from one
 * fixed buffer to another, SIZE bytes at a time, as fast as they go for
 * about half a second per size and method.  Two methods, because under
 * QEMU's TCG their speeds differ by orders of magnitude at some sizes:
 *   memcpy  glibc's memcpy() (it picks vector loops or non-temporal
 *           stores by size and the CPU's reported caches);
 *   movsb   one "rep movsb", what the kernel's copy routines use.
 * Prints one line per method and size:
 *   METHOD SIZE MIB_PER_S COPIES_PER_S
 * (MiB = 2^20 bytes, the unit of perftest's "MB/sec").
 *   memcpy_bw SIZE...
 * With --best, the time of one copy instead: rounds of ROUND_COPIES
 * copies, each round timed on its own, and the best round's time per copy
 * (a round the host did not preempt, with the buffers in the cache):
 *   METHOD SIZE US_PER_COPY
 *   memcpy_bw --best SIZE...
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void copy_libc(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
	/* the copy is used: keep the compiler from dropping it */
	__asm__ volatile("" : : "r"(dst) : "memory");
}

static void copy_movsb(void *dst, const void *src, size_t n)
{
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static void measure(const char *name, void (*copy)(void *, const void *, size_t),
		    char *dst, const char *src, size_t size)
{
	unsigned long copies = 0, batch = 1, n;
	double start = now(), elapsed;

	do {
		for (n = 0; n < batch; n++)
			copy(dst, src, size);
		copies += batch;
		if (batch < (1ul << 20))
			batch *= 2;
		elapsed = now() - start;
	} while (elapsed < 0.5);
	printf("%s %zu %.1f %.0f\n", name, size,
	       copies * (double)size / elapsed / (1 << 20), copies / elapsed);
}

#define ROUNDS 201
#define ROUND_COPIES 16

static void best(const char *name, void (*copy)(void *, const void *, size_t),
		 char *dst, const char *src, size_t size)
{
	double t, min = 1e9;
	int round, n;

	for (round = 0; round < ROUNDS; round++) {
		t = now();
		for (n = 0; n < ROUND_COPIES; n++)
			copy(dst, src, size);
		t = now() - t;
		if (t < min)
			min = t;
	}
	printf("%s %zu %.3f\n", name, size, min / ROUND_COPIES * 1e6);
}

int main(int argc, char **argv)
{
	bool per_copy = false;
	int i = 1;

	if (argc > 1 && !strcmp(argv[1], "--best")) {
		per_copy = true;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: memcpy_bw [--best] SIZE...\n");
		return 2;
	}
	for (; i < argc; i++) {
		size_t size = strtoul(argv[i], NULL, 0);
		char *src = malloc(size), *dst = malloc(size);

		if (!size || !src || !dst) {
			fprintf(stderr, "memcpy_bw: bad size %s\n", argv[i]);
			return 1;
		}
		memset(src, 0x5a, size);
		memset(dst, 0, size);
		if (per_copy) {
			best("memcpy", copy_libc, dst, src, size);
			best("movsb", copy_movsb, dst, src, size);
		} else {
			measure("memcpy", copy_libc, dst, src, size);
			measure("movsb", copy_movsb, dst, src, size);
		}
		free(src);
		free(dst);
	}
	return 0;
}
