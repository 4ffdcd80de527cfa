/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krwq_core.h - the seam between the kernel C module and the C++ receive
 * queue core.  This is the only header both languages include.
 *
 * The core implements the logic of rdmavt's struct rvt_krwq (post, take,
 * count, SRQ limit, resize, flush, reset) on memory that the C side owns:
 * struct krwq_rq and struct krwq_krwq are defined in module/rq.h, allocated
 * and lock-initialised by C, and only reached here through pointers.  The
 * core checks its view of that memory at build time against offsets that
 * Kbuild generates from the real C definitions (module/layout.c).
 *
 * Direction C -> C++: the krwq_rq_*() functions below.
 * Direction C++ -> C: krwq_spin_lock_irqsave()/krwq_spin_unlock_irqrestore(),
 * krwq_assert_held() and the flush sink callback; nothing else.
 *
 * Lock order (the one place it is written down; lockdep checks it):
 *   p_lock  ->  c_lock  ->  completion queue lock
 * A function that needs both ring locks takes p_lock first.  The flush sink
 * runs with the ring lock(s) held and may take a CQ lock, never a ring lock.
 */
#ifndef KRWQ_CORE_H
#define KRWQ_CORE_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Only C's own integer types cross the seam: unsigned int is the kernel's
 * u32 and unsigned long long its u64 (module/seam.c checks both).
 */

/* Linux errno values; the C side checks them against <linux/errno.h>. */
enum krwq_errno {
	KRWQ_ENOMEM = 12,
	KRWQ_EINVAL = 22,
	KRWQ_EMSGSIZE = 90,
};

/* Hard limits of the core itself; devices choose smaller ones. */
#define KRWQ_CORE_MAX_SGE 255u		/* num_sge is a u8 in the WQE */
#define KRWQ_CORE_MAX_WR (1u << 24)	/* slots stay far below 2^31 */

/**
 * enum krwq_rq_state - what a receive queue accepts, from its QP's state.
 * @KRWQ_RQ_RESET: posts fail with -EINVAL, nothing is taken (QP RESET).
 * @KRWQ_RQ_POST_ONLY: posts are queued, nothing is taken (QP INIT).
 * @KRWQ_RQ_ACTIVE: posts are queued and taken (RTR, RTS, SQD, SQE; SRQs).
 * @KRWQ_RQ_FLUSH: posts complete at once as flushed, nothing is taken (ERR).
 */
enum krwq_rq_state {
	KRWQ_RQ_RESET = 0,
	KRWQ_RQ_POST_ONLY = 1,
	KRWQ_RQ_ACTIVE = 2,
	KRWQ_RQ_FLUSH = 3,
};

struct krwq_rq;
struct krwq_krwq;
struct ib_recv_wr;
struct ib_sge;

/**
 * struct krwq_geometry - the sizes of one ring.
 * @slots: entries in the ring, max_wr + 1 (one slot always stays empty).
 * @stride: bytes from one entry to the next.
 * @ring_bytes: slots * stride.
 */
struct krwq_geometry {
	unsigned int slots;
	unsigned int stride;
	unsigned long long ring_bytes;
};

/**
 * struct krwq_sink - where flushed receive work requests are reported.
 * @flushed: called once per flushed WR, in posting order, with ring locks
 *           held; must not sleep and must not take a ring lock.
 * @ctx: passed back to @flushed.
 */
struct krwq_sink {
	void (*flushed)(void *ctx, unsigned long long wr_id);
	void *ctx;
};

/**
 * enum krwq_take_outcome - what krwq_rq_take() found at the ring's tail.
 * @KRWQ_TAKE_TOO_SMALL: krwq_rq_take_fitting() only: the WQE's entries hold
 *                       fewer bytes than needed; it stays at the tail.
 * @KRWQ_TAKE_MALFORMED: a user-mapped ring held a WQE with more entries
 *                       than max_sge: it is consumed, its wr_id reported
 *                       and num_sge left 0; complete it in error.
 * @KRWQ_TAKE_EMPTY: nothing posted, or the ring is not KRWQ_RQ_ACTIVE.
 * @KRWQ_TAKE_TAKEN: a WQE was consumed and copied out.
 *
 * The values are the plain int results the seam had before it named
 * them, so a trace's ret field reads the same; compare with the names.
 */
enum krwq_take_outcome {
	KRWQ_TAKE_TOO_SMALL = -KRWQ_EMSGSIZE,
	KRWQ_TAKE_MALFORMED = -KRWQ_EINVAL,
	KRWQ_TAKE_EMPTY = 0,
	KRWQ_TAKE_TAKEN = 1,
};

/* krwq_taken.flags */
#define KRWQ_TAKEN_LIMIT_REACHED 0x1u	/* raise IB_EVENT_SRQ_LIMIT_REACHED */

/**
 * struct krwq_taken - one work request taken from a ring, copied out.
 * @wr_id: the work request's id.
 * @num_sge: scatter entries copied into @sg_list.
 * @flags: KRWQ_TAKEN_* bits.
 * @sg_list: caller's array with room for the queue's max_sge entries.
 */
struct krwq_taken {
	unsigned long long wr_id;
	unsigned int num_sge;
	unsigned int flags;
	struct ib_sge *sg_list;
};

/*
 * Implemented by the core (cxx-core/seam.cpp).  Every out-parameter is
 * written on every return, so no caller reads stale stack:
 *  - krwq_rq_geometry(): @geo, all zero on error;
 *  - krwq_rq_post(): @bad_wr, NULL on success, and @posted (if not NULL),
 *    the WRs before @bad_wr;
 *  - krwq_rq_take(), krwq_rq_take_fitting(): wr_id, num_sge and flags of
 *    @out, all 0 on an empty take (sg_list is the caller's array; num_sge
 *    entries of it are filled, also when the WQE is too small);
 *  - krwq_rq_resize(): @old_storage, NULL on error.
 */
int krwq_rq_geometry(unsigned int max_wr, unsigned int max_sge,
		     struct krwq_geometry *geo);
/* krwq_rq_init() flags */
#define KRWQ_RING_USER 0x1u	/* storage is a user-mapped struct krwq_rwq */

int krwq_rq_init(struct krwq_rq *rq, struct krwq_krwq *kwq, void *storage,
		 unsigned int flags, unsigned int max_wr, unsigned int max_sge);
int krwq_rq_post(struct krwq_rq *rq, const struct ib_recv_wr *wr,
		 const struct ib_recv_wr **bad_wr,
		 const struct krwq_sink *sink, unsigned int *posted);
enum krwq_take_outcome krwq_rq_take(struct krwq_rq *rq,
				    struct krwq_taken *out);
/*
 * krwq_rq_take() for a message of @need bytes: a WQE whose entries hold
 * fewer is left at the head of the ring, where the next take finds it
 * again, and -KRWQ_EMSGSIZE returned (a responder that drops what does
 * not fit, as UD and UC do, keeps the WQE).  Same locks and contexts.
 */
enum krwq_take_outcome krwq_rq_take_fitting(struct krwq_rq *rq,
					    struct krwq_taken *out,
					    unsigned int need);
unsigned int krwq_rq_count(struct krwq_rq *rq);
void krwq_rq_set_state(struct krwq_rq *rq, enum krwq_rq_state state,
		       const struct krwq_sink *sink);
/* In KRWQ_RQ_FLUSH: flushes up to @max WRs posted since; returns how many. */
unsigned int krwq_rq_flush(struct krwq_rq *rq, unsigned int max,
			   const struct krwq_sink *sink);
enum krwq_rq_state krwq_rq_get_state(struct krwq_rq *rq);
int krwq_rq_set_limit(struct krwq_rq *rq, unsigned int limit);
unsigned int krwq_rq_limit(struct krwq_rq *rq);
int krwq_rq_resize(struct krwq_rq *rq, void *storage, unsigned int max_wr,
		   const unsigned int *limit, void **old_storage);

/* Implemented by the kernel side (module/seam.c, or the host test seam). */
unsigned long krwq_spin_lock_irqsave(void *lock);
void krwq_spin_unlock_irqrestore(void *lock, unsigned long flags);
void krwq_assert_held(const void *lock);

#ifdef __cplusplus
}
#endif

#endif /* KRWQ_CORE_H */
