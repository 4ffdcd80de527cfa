/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krwq_core.h - the seam between the kernel C module and the C++ receive
 * queue core, and its contract.  This is the only header both languages
 * include.
 *
 * The core implements the logic of rdmavt's struct rvt_krwq (post, take,
 * count, SRQ limit, resize, flush, reset) on memory that the C side owns:
 * struct krwq_rq and struct krwq_kring are defined in module/rq.h, allocated
 * and lock-initialised by C, and only reached here through pointers.  The
 * core checks its view of that memory at build time against offsets that
 * Kbuild generates from the real C definitions (module/layout.c).
 *
 * Direction C -> C++: the krwq_rq_*() functions below.
 * Direction C++ -> C: krwq_spin_lock_irqsave()/krwq_spin_unlock_irqrestore(),
 * krwq_assert_held() and the flush sink callback; nothing else.
 *
 * Locks.  Each ring has two spinlocks in its struct krwq_kring: p_lock
 * serialises producers (posting), c_lock consumers (taking); whatever
 * changes the ring as a whole takes both.  The core takes and drops them
 * itself, always with interrupts saved, and never returns with one held;
 * each function below says which it takes.  A caller must hold neither
 * lock of the ring it passes, nor any lock that comes after them in the
 * lock order.  The lock order, ring locks included, is written down once,
 * in module/krwq.h; lockdep checks it, and the core's own part of it is
 * also checked at build time (cxx-core/thread_annotations.h).
 *
 * Contexts.  No function here sleeps or allocates, and all of them may
 * run in any context, hard interrupts included, unless its comment says
 * otherwise: what needs process context (allocating and freeing ring
 * memory) is the C side's job.
 *
 * Out-parameters are written on every return, errors included, so no
 * caller reads stale stack.
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
struct krwq_kring;
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
 * @flushed: called once per flushed WR, with its wr_id.
 * @ctx: passed back to @flushed.
 *
 * When: krwq_rq_post() on a ring in KRWQ_RQ_FLUSH calls it for each WR of
 * the list instead of queueing it; krwq_rq_set_state() to KRWQ_RQ_FLUSH
 * and krwq_rq_flush() call it for each WR still in the ring.  Calls come
 * in posting order, from the thread that called into the core, before
 * that call returns.
 *
 * Under which locks: the ring's p_lock (from krwq_rq_post()) or p_lock
 * and c_lock (from krwq_rq_set_state() and krwq_rq_flush()), with
 * interrupts disabled, plus whatever the caller of the core held.
 *
 * What it may do: complete the WR (enter an IB_WC_WR_FLUSH_ERR completion
 * under a completion queue's lock, which comes after the ring locks in the
 * lock order), count it, trace it, take other locks that come after the
 * ring locks.
 *
 * What it must not do: sleep or allocate with GFP_KERNEL; take a ring
 * lock, of this ring or any other (every ring's locks share one lockdep
 * class each); call any krwq_rq_*() function; take a lock that comes
 * before the ring locks in the lock order (a QP's s_lock or r_lock);
 * call a completion handler directly (it may post, which would take the
 * p_lock it runs under); free or resize the ring.
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

/* Implemented by the core (cxx-core/seam.cpp). */

/**
 * krwq_rq_geometry() - the sizes of a ring for @max_wr work requests.
 * @max_wr: work requests the ring must hold, at most KRWQ_CORE_MAX_WR.
 * @max_sge: scatter entries per work request, at most KRWQ_CORE_MAX_SGE.
 * @geo: set to the ring's slots, stride and bytes; all zero on error.
 *
 * Context: Any context.  Takes no lock; reads and writes nothing else.
 *
 * Return: 0, or -KRWQ_EINVAL if @max_wr or @max_sge is over the core's
 * limit.
 */
int krwq_rq_geometry(unsigned int max_wr, unsigned int max_sge,
		     struct krwq_geometry *geo);

/* krwq_rq_init() flags */
#define KRWQ_RING_USER 0x1u	/* storage is a user-mapped struct krwq_rwq */

/**
 * krwq_rq_init() - set up a receive queue on memory the caller allocated.
 * @rq: the descriptor to fill in.
 * @kwq: the ring's locks and indices, with both spinlocks initialised
 *       (spin_lock_init()) and nobody else able to reach them yet.
 * @storage: the entries, krwq_rq_geometry(@max_wr, @max_sge)'s ring_bytes
 *           of them: @kwq's inline wq[], a separate allocation, or with
 *           KRWQ_RING_USER a struct krwq_rwq followed by the entries.
 * @flags: KRWQ_RING_USER or 0.
 * @max_wr: work requests the ring holds.
 * @max_sge: scatter entries per work request.
 *
 * The ring starts empty in KRWQ_RQ_RESET with no SRQ limit armed; a user
 * ring is published full, so user space cannot post until it leaves RESET.
 *
 * Context: Any context.  Takes and releases p_lock, then c_lock; the
 * caller holds neither (no one else can, yet).
 *
 * Return: 0, or -KRWQ_EINVAL if the sizes are over the core's limits (then
 * @rq is left as it was).
 */
int krwq_rq_init(struct krwq_rq *rq, struct krwq_kring *kwq, void *storage,
		 unsigned int flags, unsigned int max_wr, unsigned int max_sge);

/**
 * struct krwq_posted - what krwq_rq_post() did.
 * @err: 0 when every WR was posted, else a negative errno (below).
 * @count: the number of WRs before the first one not posted (all of them
 *         on success): queued, or in KRWQ_RQ_FLUSH completed through
 *         the sink.
 *
 * Eight trivially copyable bytes, so on x86-64 and arm64 it comes back in
 * one register: a caller that counts what it posted has no local whose
 * address escapes, which would cost every post a stack-protector check.
 */
struct krwq_posted {
	int err;
	unsigned int count;
};

/**
 * krwq_rq_post() - queue a list of receive work requests.
 * @rq: the ring.
 * @wr: the first of a NULL-terminated list; NULL posts nothing.
 * @bad_wr: set to the first WR not posted, or NULL when all were.
 * @sink: where WRs posted in KRWQ_RQ_FLUSH are completed; may be NULL
 *        only if the ring cannot be in KRWQ_RQ_FLUSH.
 *
 * WRs are checked and queued one by one; those before *@bad_wr stay
 * queued (or flushed) even when the call fails.  A user-mapped ring's
 * head is read and validated once per call.
 *
 * Context: Any context.  Takes and releases the ring's p_lock; the caller
 * holds neither ring lock.  In KRWQ_RQ_FLUSH, @sink runs under p_lock.
 *
 * Return: a struct krwq_posted whose err is 0 when every WR was posted;
 * -KRWQ_EINVAL for a ring in KRWQ_RQ_RESET, a WR with a negative num_sge
 * or more than the ring's max_sge, a WR in KRWQ_RQ_FLUSH with no @sink,
 * or a user ring whose head is out of range; -KRWQ_ENOMEM when the ring
 * is full.
 */
struct krwq_posted krwq_rq_post(struct krwq_rq *rq,
				const struct ib_recv_wr *wr,
				const struct ib_recv_wr **bad_wr,
				const struct krwq_sink *sink);

/**
 * krwq_rq_take() - take the oldest posted receive work request.
 * @rq: the ring.
 * @out: where it is copied: wr_id, num_sge and flags are always written
 *       (all 0 for KRWQ_TAKE_EMPTY); num_sge entries of the caller's
 *       sg_list, which must have room for the ring's max_sge, are filled.
 *
 * The entry is copied once and never read again, so a user ring that
 * changes it meanwhile cannot make the kernel act on two versions.  When
 * a take leaves fewer entries than the armed SRQ limit, the limit is
 * disarmed and KRWQ_TAKEN_LIMIT_REACHED set in @out->flags: the caller
 * raises IB_EVENT_SRQ_LIMIT_REACHED.
 *
 * Context: Any context.  Takes and releases the ring's c_lock; the caller
 * holds neither ring lock (it may hold locks that come before them, such
 * as the destination QP's r_lock).
 *
 * Return: KRWQ_TAKE_TAKEN, KRWQ_TAKE_EMPTY (nothing posted, or the ring is
 * not in KRWQ_RQ_ACTIVE) or KRWQ_TAKE_MALFORMED (a user ring's entry had
 * too many scatter entries: consumed, to be completed in error).
 */
enum krwq_take_outcome krwq_rq_take(struct krwq_rq *rq,
				    struct krwq_taken *out);

/**
 * krwq_rq_take_fitting() - krwq_rq_take() for a message of @need bytes.
 * @rq: the ring.
 * @out: as for krwq_rq_take(); for KRWQ_TAKE_TOO_SMALL it holds the entry
 *       that did not fit.
 * @need: bytes the entry's scatter list must hold; 0 takes any entry.
 *
 * An entry that holds fewer bytes stays at the head of the ring, where
 * the next take finds it again (a responder that drops what does not
 * fit, as UD and UC do, keeps the WQE).
 *
 * Context: As krwq_rq_take(): any context, takes and releases c_lock.
 *
 * Return: as krwq_rq_take(), or KRWQ_TAKE_TOO_SMALL when the entry is too
 * small for @need (nothing consumed).
 */
enum krwq_take_outcome krwq_rq_take_fitting(struct krwq_rq *rq,
					    struct krwq_taken *out,
					    unsigned int need);

/**
 * krwq_rq_count() - how many work requests are posted.
 * @rq: the ring.
 *
 * Also refreshes the consumers' cached count.
 *
 * Context: Any context.  Takes and releases the ring's c_lock; the caller
 * holds neither ring lock.
 *
 * Return: the entries between the ring's tail and its head as read now
 * (0 for a user ring whose head is out of range); posts and takes may
 * change it before the caller looks.
 */
unsigned int krwq_rq_count(struct krwq_rq *rq);

/**
 * krwq_rq_set_state() - move a ring to @state, following its QP.
 * @rq: the ring.
 * @state: the new state.
 * @sink: for KRWQ_RQ_FLUSH, where every WR still in the ring is completed;
 *        NULL drops them without a report.
 *
 * To KRWQ_RQ_FLUSH: every posted WR goes to @sink, oldest first, and the
 * ring is left empty.  To or from KRWQ_RQ_RESET: the ring is emptied
 * (whatever user space wrote in RESET is dropped), and a user ring entering
 * RESET is published full.  Other moves only change what is accepted.
 *
 * Context: Any context.  Takes and releases p_lock, then c_lock; the
 * caller holds neither.  @sink runs under both.
 */
void krwq_rq_set_state(struct krwq_rq *rq, enum krwq_rq_state state,
		       const struct krwq_sink *sink);

/**
 * krwq_rq_flush() - in KRWQ_RQ_FLUSH, complete WRs posted since.
 * @rq: the ring.
 * @max: the most WRs to complete in this call.
 * @sink: where they are completed; NULL drops them without a report.
 *
 * For rings user space maps: its posts never enter the kernel, so what it
 * posted after the move to KRWQ_RQ_FLUSH is flushed by calling this
 * periodically, oldest first, in batches of @max.
 *
 * Context: Any context.  Takes and releases p_lock, then c_lock; the
 * caller holds neither.  @sink runs under both.
 *
 * Return: the WRs completed; 0 if the ring is not in KRWQ_RQ_FLUSH.
 */
unsigned int krwq_rq_flush(struct krwq_rq *rq, unsigned int max,
			   const struct krwq_sink *sink);

/**
 * krwq_rq_get_state() - the ring's state.
 * @rq: the ring.
 *
 * Context: Any context.  Takes and releases the ring's c_lock; the caller
 * holds neither ring lock.
 *
 * Return: the state last set by krwq_rq_set_state() (KRWQ_RQ_RESET after
 * krwq_rq_init()).
 */
enum krwq_rq_state krwq_rq_get_state(struct krwq_rq *rq);

/**
 * krwq_rq_set_limit() - arm (or with 0 disarm) the SRQ limit.
 * @rq: the ring.
 * @limit: fire when a take leaves fewer than this many entries; 0 disarms.
 *
 * A limit fires once: the take that crosses it disarms it and reports
 * KRWQ_TAKEN_LIMIT_REACHED.
 *
 * Context: Any context.  Takes and releases the ring's c_lock; the caller
 * holds neither ring lock.
 *
 * Return: 0, or -KRWQ_EINVAL if @limit is above the ring's max_wr (the
 * armed limit is then unchanged).
 */
int krwq_rq_set_limit(struct krwq_rq *rq, unsigned int limit);

/**
 * krwq_rq_limit() - the armed SRQ limit.
 * @rq: the ring.
 *
 * Context: Any context.  Takes no lock: the value may be one a concurrent
 * krwq_rq_set_limit() or take is replacing, which is fine for a query.
 *
 * Return: the limit, or 0 when none is armed.
 */
unsigned int krwq_rq_limit(struct krwq_rq *rq);

/**
 * krwq_rq_resize() - move a ring's entries to new storage of @max_wr.
 * @rq: the ring; its entries must not be @kwq's inline wq[] (an inline
 *      ring cannot move), and user rings stay user rings.
 * @storage: the new entries, zeroed, sized as for krwq_rq_init() with the
 *           ring's max_sge; a struct krwq_rwq and entries for a user ring.
 * @max_wr: the new capacity.
 * @limit: NULL to keep the armed SRQ limit, else the limit to arm with it.
 * @old_storage: set to the memory the ring used before, for the caller to
 *               free; NULL on error (then @storage is still the caller's).
 *
 * The posted entries move in order; producers and consumers wait on the
 * ring locks while they do.  The locks themselves stay where they are, in
 * @rq's struct krwq_kring.
 *
 * Context: Any context, though the caller, who allocates @storage and
 * frees *@old_storage, is usually in process context.  Takes and releases
 * p_lock, then c_lock; the caller holds neither.
 *
 * Return: 0, or -KRWQ_EINVAL if @max_wr is over the core's limit, cannot
 * hold what is posted, or is below the (new or armed) limit.
 */
int krwq_rq_resize(struct krwq_rq *rq, void *storage, unsigned int max_wr,
		   const unsigned int *limit, void **old_storage);

/*
 * Implemented by the kernel side (module/seam.c; hostshim/host_seam.c
 * and kunit/host/rq_fuzz.cpp on the host), called only by the core.
 */

/**
 * krwq_spin_lock_irqsave() - take a ring lock for the core.
 * @lock: &kwq->p_lock or &kwq->c_lock of a struct krwq_kring.
 *
 * The kernel side must disable interrupts while it is held: rings are
 * posted to and taken from in interrupt context.
 *
 * Context: Any context; spins.  The core calls it in the lock order.
 *
 * Return: the saved interrupt state, for krwq_spin_unlock_irqrestore().
 */
unsigned long krwq_spin_lock_irqsave(void *lock);

/**
 * krwq_spin_unlock_irqrestore() - drop a ring lock the core took.
 * @lock: the lock passed to krwq_spin_lock_irqsave().
 * @flags: what that call returned.
 *
 * Context: Any context; @lock is held by the caller.
 */
void krwq_spin_unlock_irqrestore(void *lock, unsigned long flags);

/**
 * krwq_assert_held() - check that the calling thread holds a ring lock.
 * @lock: &kwq->p_lock or &kwq->c_lock of a struct krwq_kring.
 *
 * The run-time half of the core's "the caller holds the lock":
 * lockdep_assert_held() in the kernel (nothing without lockdep), a check
 * of the lock's owner on the host.
 *
 * Context: Any context.  Takes no lock.
 */
void krwq_assert_held(const void *lock);

#ifdef __cplusplus
}
#endif

#endif /* KRWQ_CORE_H */
