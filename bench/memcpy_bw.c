// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy_bw.c - the physical limit of a copying loopback: memcpy() from
 * one fixed buffer to another, SIZE bytes at a time, as fast as it goes
 * for about half a second per size.  Prints one line per size:
 *   memcpy SIZE MiB_PER_S COPIES_PER_S
 * (MiB = 2^20 bytes, the unit perftest's "MB/sec" column uses).
 *   memcpy_bw SIZE...
 */
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

int main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: memcpy_bw SIZE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		size_t size = strtoul(argv[i], NULL, 0);
		unsigned long copies = 0, batch = 1;
		char *src = malloc(size), *dst = malloc(size);
		double start, elapsed;

		if (!size || !src || !dst) {
			fprintf(stderr, "memcpy_bw: bad size %s\n", argv[i]);
			return 1;
		}
		memset(src, 0x5a, size);
		memset(dst, 0, size);
		start = now();
		do {
			for (unsigned long n = 0; n < batch; n++) {
				memcpy(dst, src, size);
				/* the copy is used: keep the compiler from dropping it */
				__asm__ volatile("" : : "r"(dst) : "memory");
			}
			copies += batch;
			if (batch < (1ul << 20))
				batch *= 2;
			elapsed = now() - start;
		} while (elapsed < 0.5);
		printf("memcpy %zu %.1f %.0f\n", size,
		       copies * (double)size / elapsed / (1 << 20), copies / elapsed);
		free(src);
		free(dst);
	}
	return 0;
}
