// SPDX-License-Identifier: GPL-2.0
/*
 * krwq_mpi_check - a two-rank MPI job whose every byte is checked, for the
 * middleware part of the test harness (scripts/guest/middleware.sh runs it
 * under Open MPI's mpirun, over UCX on a krwq device).
 *
 * Rank 0 sends a message of each size in sizes[] ITERATIONS times; rank 1
 * checks it against the pattern for that size and round and answers with
 * the pattern's complement, which rank 0 checks in turn.  Then both ranks
 * reduce an array of ints with MPI_SUM and check every element of the
 * result against its closed form.
 *
 * Rank 0 prints one line per size and phase.  Each phase's error count is
 * summed over both ranks (MPI_Allreduce), so both ranks exit 0 only if
 * every check held on both.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERATIONS 20
#define REDUCE_LEN (64 * 1024)

/* up to 1 MiB: eager sends and rendezvous (RDMA READ or WRITE) alike */
static const int sizes[] = { 1, 64, 4096, 65536, 1 << 20 };
#define N_SIZES (sizeof(sizes) / sizeof(sizes[0]))

/* pattern_byte - the byte at @i of the message of @size in @round */
static unsigned char pattern_byte(int size, int round, int i)
{
	uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)size * 40503u ^
		     (uint32_t)round * 0x9e3779b9u;

	/* mixed, so that size and round reach the byte kept */
	x ^= x >> 16;
	x *= 0x45d9f3bu;
	x ^= x >> 16;
	return (unsigned char)x;
}

static void fill(unsigned char *buf, int size, int round, unsigned char mask)
{
	for (int i = 0; i < size; i++)
		buf[i] = pattern_byte(size, round, i) ^ mask;
}

/* the number of bytes of @buf that differ from the pattern */
static long mismatches(const unsigned char *buf, int size, int round, unsigned char mask)
{
	long bad = 0;

	for (int i = 0; i < size; i++)
		bad += buf[i] != (unsigned char)(pattern_byte(size, round, i) ^ mask);
	return bad;
}

/* ping_pong - rank 0 and 1 trade every size; returns the bad bytes seen */
static long ping_pong(int rank, unsigned char *buf)
{
	long bad = 0;

	for (size_t s = 0; s < N_SIZES; s++) {
		int size = sizes[s];
		double t0 = MPI_Wtime();

		for (int round = 0; round < ITERATIONS; round++) {
			if (rank == 0) {
				fill(buf, size, round, 0);
				MPI_Send(buf, size, MPI_BYTE, 1, round, MPI_COMM_WORLD);
				memset(buf, 0, (unsigned int)size);
				MPI_Recv(buf, size, MPI_BYTE, 1, round, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad += mismatches(buf, size, round, 0xff);
			} else {
				memset(buf, 0, (unsigned int)size);
				MPI_Recv(buf, size, MPI_BYTE, 0, round, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				bad += mismatches(buf, size, round, 0);
				fill(buf, size, round, 0xff);
				MPI_Send(buf, size, MPI_BYTE, 0, round, MPI_COMM_WORLD);
			}
		}
		if (rank == 0)
			printf("ping-pong %7d B: %d round trips, %.1f us each\n", size,
			       ITERATIONS, (MPI_Wtime() - t0) * 1e6 / ITERATIONS);
	}
	return bad;
}

/* reduce_sum - MPI_Allreduce of REDUCE_LEN ints; returns the bad ones */
static long reduce_sum(int rank, int ranks)
{
	int *in = malloc(REDUCE_LEN * sizeof(*in));
	int *out = malloc(REDUCE_LEN * sizeof(*out));
	long bad = 0;

	if (!in || !out) {
		free(in);
		free(out);
		return REDUCE_LEN;
	}
	for (int i = 0; i < REDUCE_LEN; i++) {
		in[i] = i * (rank + 1);
		out[i] = -1;
	}
	MPI_Allreduce(in, out, REDUCE_LEN, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	/* the sum of i * (r + 1) over ranks r is i * ranks * (ranks + 1) / 2 */
	for (int i = 0; i < REDUCE_LEN; i++)
		bad += out[i] != i * ranks * (ranks + 1) / 2;
	free(in);
	free(out);
	return bad;
}

int main(int argc, char **argv)
{
	int rank, ranks;
	long bad, total = 0, errors = 0;
	unsigned char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	if (ranks != 2) {
		if (rank == 0)
			fprintf(stderr, "krwq_mpi_check: needs 2 ranks, has %d\n", ranks);
		MPI_Finalize();
		return 2;
	}
	buf = malloc(sizes[N_SIZES - 1]);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);

	bad = ping_pong(rank, buf);
	MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	errors += total;
	if (rank == 0)
		printf("ping-pong: %ld bad bytes\n", total);

	bad = reduce_sum(rank, ranks);
	MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	errors += total;
	if (rank == 0)
		printf("allreduce of %d ints: %ld bad\n", REDUCE_LEN, total);

	free(buf);
	MPI_Finalize();
	/* both ranks saw the same totals, so they agree on the verdict */
	if (rank == 0 && !errors)
		printf("krwq_mpi_check: every byte checked on both ranks\n");
	return errors ? 1 : 0;
}
