// SPDX-License-Identifier: GPL-2.0
/*
 * floors.c - what nothing in the guest can beat, measured in the boot
 * whose end-to-end figures it bounds:
 *   syscall    one null system call, syscall(SYS_getppid): the floor of
 *              every verb that enters the kernel (a stock ipathverbs
 *              ibv_post_send is one such call);
 *   ring_post  one receive WQE of one SGE written into a ring laid out as
 *              krwq's user-mapped receive ring (head, tail, then entries
 *              of a wr_id, a count and the scatter list), the producer
 *              index published with a release store: the floor of ABI 2's
 *              ibv_post_recv, without the provider's lock and checks.
 * Each is the best of ROUNDS rounds of a fixed number of operations (a
 * round the host did not preempt), in nanoseconds per operation:
 *   syscall_ns N
 *   ring_post_ns N
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 31
#define SYSCALLS_PER_ROUND 2000
#define RING_SLOTS 4096		/* as deep as krwq_post_rate's queue */
#define RING_SGES 1

struct ring_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct ring_wqe {
	uint64_t wr_id;
	uint8_t num_sge;
	uint8_t padding[7];
	struct ring_sge sg_list[RING_SGES];
};

struct ring {
	uint32_t head;
	uint32_t tail;
	struct ring_wqe wq[];
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double syscall_floor(void)
{
	double t, best = 1e18;
	int round, i;

	for (round = 0; round < ROUNDS; round++) {
		t = now_ns();
		for (i = 0; i < SYSCALLS_PER_ROUND; i++)
			syscall(SYS_getppid);
		t = now_ns() - t;
		if (t < best)
			best = t;
	}
	return best / SYSCALLS_PER_ROUND;
}

/*
 * One post: the slot after head must not be tail (the ring is not full),
 * the WQE is written, then head moves on with a release store so that a
 * consumer that sees the new head sees the WQE.
 */
static int ring_post(struct ring *r, uint64_t wr_id, const struct ring_sge *sge)
{
	uint32_t head = r->head;
	uint32_t next = head + 1 == RING_SLOTS ? 0 : head + 1;
	struct ring_wqe *w = &r->wq[head];

	if (next == __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE))
		return -1;
	w->wr_id = wr_id;
	w->num_sge = 1;
	w->sg_list[0] = *sge;
	__atomic_store_n(&r->head, next, __ATOMIC_RELEASE);
	return 0;
}

static double ring_floor(void)
{
	size_t bytes = sizeof(struct ring) + RING_SLOTS * sizeof(struct ring_wqe);
	struct ring_sge sge = { .addr = 0x1000, .length = 64, .lkey = 1 };
	double t, best = 1e18;
	struct ring *r;
	int round, i;

	r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return -1;
	for (round = 0; round < ROUNDS; round++) {
		/* an empty ring, as after the consumer took everything */
		r->head = 0;
		r->tail = 0;
		t = now_ns();
		for (i = 0; i < RING_SLOTS - 1; i++)
			if (ring_post(r, i, &sge))
				return -1;
		t = now_ns() - t;
		if (t < best)
			best = t;
	}
	munmap(r, bytes);
	return best / (RING_SLOTS - 1);
}

int main(void)
{
	double ring = ring_floor();

	if (ring < 0) {
		fprintf(stderr, "floors: the ring could not be mapped or filled\n");
		return 1;
	}
	printf("syscall_ns %.1f\n", syscall_floor());
	printf("ring_post_ns %.2f\n", ring);
	return 0;
}
