// SPDX-License-Identifier: GPL-2.0
//
// layout.h - the core's view of memory that C defines (module/rq.h and the
// kernel's struct ib_sge / struct ib_recv_wr).  Every size and offset is
// checked against krwq_layout.h, which Kbuild generates from the real C
// definitions for the kernel being built against; a change on the C side
// that this view does not follow fails the build here.
//
// One name per thing: the view of C's struct krwq_<name> (or ib_<name>)
// is krwq::<Name>, and its members keep C's names, so a reader who knows
// one side can read the other.
#ifndef KRWQ_LAYOUT_H
#define KRWQ_LAYOUT_H

#include "base.h"
#include "krwq_layout.h"
#include "thread_annotations.h"

namespace krwq {

// struct ib_sge
struct Sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

// struct ib_recv_wr (the wr_id member is a union with a pointer)
struct RecvWr {
	const RecvWr *next;
	u64 wr_id;
	const Sge *sg_list;
	int num_sge;
};

// struct krwq_rwqe: a header, then num_sge scatter entries
struct Rwqe {
	u64 wr_id;
	u8 num_sge;
	u8 padding[7];

	Sge *sg_list() { return byte_offset<Sge>(this, KRWQ_RWQE_SG_LIST); }
	const Sge *sg_list() const { return byte_offset<Sge>(this, KRWQ_RWQE_SG_LIST); }
};

// struct krwq_rwq: a user-mappable ring
struct Rwq {
	u32 head;
	u32 tail;

	Rwqe *entries() { return byte_offset<Rwqe>(this, KRWQ_RWQ_WQ); }
};

// spinlock_t, opaque to the core: only its address is used, and only
// through the seam's lock functions.  Taking one directly is for
// SpinGuard; the analysis (thread_annotations.h) cannot see into the C
// side, so these three are where it stops and trusts.
struct TA_CAP("spinlock") alignas(KRWQ_SPINLOCK_ALIGN) SpinLock {
	unsigned char bytes[KRWQ_SPINLOCK_SIZE];

	unsigned long lock_irqsave() TA_ACQ() TA_NO_ANALYSIS
	{
		return krwq_spin_lock_irqsave(this);
	}
	void unlock_irqrestore(unsigned long flags) TA_REL() TA_NO_ANALYSIS
	{
		krwq_spin_unlock_irqrestore(this, flags);
	}
	// lockdep_assert_held() in the kernel; a check of the owner on the host
	void assert_held() const TA_ASSERT() { krwq_assert_held(this); }
};

// struct krwq_kring
// Who reads and writes each member, and with which lock: the contract at
// the top of receive_queue.h.  Only what is never touched without its lock
// is TA_GUARDED; the indices are also read lock-free, by the other side.
// TA_ACQ_BEFORE is module/krwq.h's lock order, for the analysis.
struct KernelRing {
	SpinLock p_lock TA_ACQ_BEFORE(c_lock);
	u32 head;
	alignas(KRWQ_CACHE_LINE) SpinLock c_lock;
	u32 tail;
	u32 count TA_GUARDED(c_lock);
	Rwqe *curr_wq;
};

// struct krwq_rq
struct Rq {
	Rwq *wq;
	KernelRing *kwq;
	u32 slots;
	u32 stride;
	u32 limit TA_GUARDED(kwq->c_lock); // but ReceiveQueue::limit() reads it lock-free
	u8 max_sge;
	u8 state;
};

#define KRWQ_CHECK_SIZE(type, c_size) \
	static_assert(sizeof(type) == (c_size), #type " differs in size from its C definition")
#define KRWQ_CHECK_OFFSET(type, member, c_off) \
	static_assert(__builtin_offsetof(type, member) == (c_off), \
		      #type "::" #member " is not where C puts it")

KRWQ_CHECK_SIZE(Sge, KRWQ_SGE_SIZE);
KRWQ_CHECK_OFFSET(Sge, addr, KRWQ_SGE_ADDR);
KRWQ_CHECK_OFFSET(Sge, length, KRWQ_SGE_LENGTH);
KRWQ_CHECK_OFFSET(Sge, lkey, KRWQ_SGE_LKEY);

KRWQ_CHECK_SIZE(RecvWr, KRWQ_RECV_WR_SIZE);
KRWQ_CHECK_OFFSET(RecvWr, next, KRWQ_RECV_WR_NEXT);
KRWQ_CHECK_OFFSET(RecvWr, wr_id, KRWQ_RECV_WR_WR_ID);
KRWQ_CHECK_OFFSET(RecvWr, sg_list, KRWQ_RECV_WR_SG_LIST);
KRWQ_CHECK_OFFSET(RecvWr, num_sge, KRWQ_RECV_WR_NUM_SGE);

KRWQ_CHECK_SIZE(Rwqe, KRWQ_RWQE_SIZE);
KRWQ_CHECK_OFFSET(Rwqe, wr_id, KRWQ_RWQE_WR_ID);
KRWQ_CHECK_OFFSET(Rwqe, num_sge, KRWQ_RWQE_NUM_SGE);
static_assert(KRWQ_RWQE_SG_LIST == sizeof(Rwqe), "sg_list must follow the WQE header");
static_assert(KRWQ_RWQE_SG_LIST % alignof(Sge) == 0, "sg_list must be aligned for Sge");

KRWQ_CHECK_SIZE(Rwq, KRWQ_RWQ_SIZE);
KRWQ_CHECK_OFFSET(Rwq, head, KRWQ_RWQ_HEAD);
KRWQ_CHECK_OFFSET(Rwq, tail, KRWQ_RWQ_TAIL);
static_assert(KRWQ_RWQ_WQ == sizeof(Rwq), "user entries must follow head and tail");

KRWQ_CHECK_SIZE(SpinLock, KRWQ_SPINLOCK_SIZE);
KRWQ_CHECK_SIZE(KernelRing, KRWQ_KRING_SIZE);
KRWQ_CHECK_OFFSET(KernelRing, p_lock, KRWQ_KRING_P_LOCK);
KRWQ_CHECK_OFFSET(KernelRing, head, KRWQ_KRING_HEAD);
KRWQ_CHECK_OFFSET(KernelRing, c_lock, KRWQ_KRING_C_LOCK);
KRWQ_CHECK_OFFSET(KernelRing, tail, KRWQ_KRING_TAIL);
KRWQ_CHECK_OFFSET(KernelRing, count, KRWQ_KRING_COUNT);
KRWQ_CHECK_OFFSET(KernelRing, curr_wq, KRWQ_KRING_CURR_WQ);
static_assert(KRWQ_KRING_WQ == __builtin_offsetof(KernelRing, curr_wq) + sizeof(void *),
	      "wq[] must follow curr_wq");
static_assert(KRWQ_KRING_C_LOCK % KRWQ_CACHE_LINE == 0, "c_lock must start a cache line");
static_assert(KRWQ_KRING_C_LOCK >= KRWQ_KRING_HEAD + sizeof(u32),
	      "the consumer lock must not share a line with the producer side");

KRWQ_CHECK_SIZE(Rq, KRWQ_RQ_SIZE);
KRWQ_CHECK_OFFSET(Rq, wq, KRWQ_RQ_WQ);
KRWQ_CHECK_OFFSET(Rq, kwq, KRWQ_RQ_KWQ);
KRWQ_CHECK_OFFSET(Rq, slots, KRWQ_RQ_SLOTS);
KRWQ_CHECK_OFFSET(Rq, stride, KRWQ_RQ_STRIDE);
KRWQ_CHECK_OFFSET(Rq, limit, KRWQ_RQ_LIMIT);
KRWQ_CHECK_OFFSET(Rq, max_sge, KRWQ_RQ_MAX_SGE);
KRWQ_CHECK_OFFSET(Rq, state, KRWQ_RQ_STATE);

#undef KRWQ_CHECK_SIZE
#undef KRWQ_CHECK_OFFSET

} // namespace krwq

#endif // KRWQ_LAYOUT_H
