/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rq.h - the memory of a krwq receive queue, as C defines it.
 *
 * struct krwq_kring mirrors rdmavt's struct rvt_krwq member for member
 * (Linux 6.1 include/rdma/rdmavt_qp.h), struct krwq_rwqe mirrors
 * struct rvt_rwqe and struct krwq_rwq mirrors the user-mappable
 * struct rvt_rwq that rdma-core's ipathverbs provider writes with ABI 2.
 * Where rdmavt declares the entries as an array of struct rvt_rwqe, an
 * array of a struct that ends in a flexible array, these declare bytes
 * at the same offset: an entry's size is the ring's stride.
 * The C++ core never sees these definitions: it sees the offsets that
 * layout.c extracts from them, and static_asserts its own view against
 * those.  Reorder a member here and the core stops compiling.
 */
#ifndef KRWQ_RQ_H
#define KRWQ_RQ_H

#include <linux/cache.h>
#include <linux/spinlock_types.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

/**
 * struct krwq_rwqe - one receive work queue entry in a ring.
 * @wr_id: the poster's work request id.
 * @num_sge: valid entries in @sg_list.
 * @padding: keeps @sg_list 8-byte aligned, as rdmavt's ABI has it.
 * @sg_list: the scatter list; the ring's stride leaves room for max_sge.
 */
struct krwq_rwqe {
	u64 wr_id;
	u8 num_sge;
	u8 padding[7];
	struct ib_sge sg_list[];
};

/**
 * struct krwq_rwq - a ring that user space maps (uverbs ABI 2).
 * @head: next slot user space fills; written by the producer.
 * @tail: next slot the kernel takes; published by the kernel.
 * @wq: the entries, each a struct krwq_rwqe with room for max_sge
 *      scatter entries (struct krwq_rq's stride): bytes, not an array of
 *      struct krwq_rwqe, since that struct ends in a flexible array.
 */
struct krwq_rwq {
	u32 head;
	u32 tail;
	u8 wq[] __aligned(8);
};

/**
 * struct krwq_kring - the kernel's side of a receive ring.
 * @p_lock: serialises producers (posting).
 * @head: next slot to fill in a kernel-owned ring.
 * @c_lock: serialises consumers; on its own cache line, away from @p_lock.
 * @tail: next slot to take; the kernel's own copy even for user rings.
 * @count: entries known to be posted; a lower bound, owned by consumers.
 * @curr_wq: where the entries live: @wq, a separate kernel ring, or the
 *           entries of a user-mapped struct krwq_rwq.
 * @wq: the inline kernel-owned ring (unused when @curr_wq points elsewhere);
 *      entries of struct krwq_rq's stride, as in struct krwq_rwq.
 */
struct krwq_kring {
	spinlock_t p_lock;	/* producers */
	u32 head;
	spinlock_t c_lock ____cacheline_aligned_in_smp;
	u32 tail;
	u32 count;
	void *curr_wq;
	u8 wq[] __aligned(8);
};

/**
 * struct krwq_rq - one receive queue or SRQ ring, as its owner holds it.
 * @wq: the user-mapped ring, or NULL for a kernel-owned one.
 * @kwq: locks, kernel indices and (for QPs) the inline entries.
 * @slots: entries in the ring (max_wr + 1; one always stays empty).
 * @stride: bytes per entry.
 * @limit: SRQ limit; 0 when disarmed.  Written under c_lock.
 * @max_sge: scatter entries a WQE may hold.
 * @state: enum krwq_rq_state.  Written with both ring locks held.
 */
struct krwq_rq {
	struct krwq_rwq *wq;
	struct krwq_kring *kwq;
	u32 slots;
	u32 stride;
	u32 limit;
	u8 max_sge;
	u8 state;
};

#endif /* KRWQ_RQ_H */
