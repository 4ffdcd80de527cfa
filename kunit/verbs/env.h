/* SPDX-License-Identifier: GPL-2.0 */
/*
 * env.h - the fixture of the KUnit suite "krwq_verbs" (kunit/verbs/):
 * krwq0 with a PD, two CQs, an SRQ and a connected RC pair, made for
 * each case by kv_init() and freed by kv_exit() (env.c); the helpers
 * that the cases of several files use (env.c); and the cases, which
 * suite.c lists.
 */
#ifndef KRWQ_KUNIT_VERBS_ENV_H
#define KRWQ_KUNIT_VERBS_ENV_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#define KV_DEPTH	16
#define KV_BUF		4096
#define KV_LID		1	/* krwq0's port LID */
#define KV_QKEY		0x11111111	/* the Q_Key of the cases' UD QPs */
#define KV_EXTRA_QPS	4	/* QPs a test may create beyond a and b */

/**
 * struct kv_env - the fixture of one case, its kunit->priv.
 * @t: the case.
 * @dev: krwq0.
 * @pd: a PD with an unsafe global rkey.
 * @scq: the send CQ of kv_qp()'s QPs, of KV_DEPTH * 4 entries.
 * @rcq: their receive CQ, as large.
 * @a: an RC QP connected to @b.
 * @b: an RC QP connected to @a.
 * @extra: the QPs of kv_new_qp().
 * @srq: an SRQ of KV_DEPTH WRs of 4 SGEs.
 * @abuf: KV_BUF bytes, zeroed.
 * @bbuf: KV_BUF bytes, zeroed.
 * @big_src: a long message's source (long_copy.c); kv_exit() frees it.
 * @big_dst: its destination; kv_exit() frees it.
 * @events: how many of each asynchronous event kv_event() has seen.
 * @comp_calls: how many times kv_comp() was called.
 */
struct kv_env {
	struct kunit *t;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_qp *a, *b;
	struct ib_qp *extra[KV_EXTRA_QPS];
	struct ib_srq *srq;
	u8 *abuf, *bbuf;
	u8 *big_src, *big_dst;
	atomic_t events[IB_EVENT_GID_CHANGE + 1];
	atomic_t comp_calls;
};

/* env.c: the fixture */
int kv_init(struct kunit *t);
void kv_exit(struct kunit *t);
void kv_event(struct ib_event *ev, void *ctx);
void kv_comp(struct ib_cq *cq, void *ctx);

/* env.c: QPs, connecting them, counters */
struct ib_qp *kv_qp(struct kv_env *v, enum ib_qp_type type, bool srq);
struct ib_qp *kv_new_qp(struct kv_env *v, enum ib_qp_type type, bool srq);
void kv_free_qp(struct kv_env *v, struct ib_qp *qp);
int kv_pair(struct kv_env *v, struct ib_qp **c, struct ib_qp **d);
int kv_connect_rd(struct ib_qp *qp, u16 lid, u32 dest, u8 rnr_retry,
		  u8 timeout, u8 retry_cnt, u8 rd_atom);
int kv_connect_to(struct ib_qp *qp, u16 lid, u32 dest, u8 rnr_retry,
		  u8 timeout, u8 retry_cnt);
int kv_connect_retry(struct ib_qp *qp, u32 dest, u8 rnr_retry,
		     u8 timeout, u8 retry_cnt);
int kv_connect(struct ib_qp *qp, u32 dest, u8 rnr_retry);
u64 kv_counter(struct kv_env *v, const char *name);

/* env.c: posting, polling, waiting */
int kv_poll(struct ib_cq *cq, struct ib_wc *wc, int n);
int kv_wait_event(struct kv_env *v, enum ib_event_type type, int want);
enum ib_qp_state kv_wait_state(struct ib_qp *qp, enum ib_qp_state want);
int kv_post_recv(struct kv_env *v, struct ib_qp *qp, u64 wr_id, u8 *buf,
		 u32 len);
int kv_post_srq(struct kv_env *v, struct ib_srq *srq, u64 wr_id, u32 lkey);
int kv_send(struct kv_env *v, struct ib_qp *qp, u64 wr_id, u8 *buf, u32 len);
int kv_write(struct kv_env *v, struct ib_qp *qp, u8 *src, u32 len,
	     u64 remote, u32 rkey);

/* env.c: fast-registration regions */
struct ib_mr *kv_fr_mr(struct kv_env *v, void *buf, u32 len, u32 pages,
		       struct scatterlist *sg);
void kv_fr_free(struct kv_env *v, struct ib_mr *mr, struct scatterlist *sg);
int kv_reg(struct ib_qp *qp, struct ib_mr *mr, int access, u64 wr_id);
int kv_local_inv(struct ib_qp *qp, u32 rkey, u64 wr_id);

/* The cases, in suite.c's order within each file. */

/* send_rnr.c: send and receive, RDMA, RNR, connecting, errors */
void kv_send_recv(struct kunit *t);
void kv_post_with_irqs_off(struct kunit *t);
void kv_rdma_write_read(struct kunit *t);
void kv_rnr_retry_exceeded(struct kunit *t);
void kv_rnr_waits_for_receive(struct kunit *t);
void kv_destroy_drops_completions(struct kunit *t);
void kv_foreign_sender_refused(struct kunit *t);
void kv_send_waits_for_peer_to_connect(struct kunit *t);
void kv_waiting_send_flushed(struct kunit *t);
void kv_error_flushes_any_opcode(struct kunit *t);
void kv_unreachable_lid(struct kunit *t);
void kv_gsi_only_with_mads(struct kunit *t);

/* receive.c: receive queues and SRQs */
void kv_recv_capacity(struct kunit *t);
void kv_recv_in_reset(struct kunit *t);
void kv_flush_on_error(struct kunit *t);
void kv_too_small(struct kunit *t);
void kv_srq_limit_and_resize(struct kunit *t);
void kv_srq_modify_mask(struct kunit *t);
void kv_srq_bad_lkey_counted(struct kunit *t);
void kv_uflush_budget_shared(struct kunit *t);

/* ud_uc.c: UD and UC */
void kv_ud(struct kunit *t);
void kv_ud_too_long_dropped(struct kunit *t);
void kv_ud_qpn_over_24_bits(struct kunit *t);
void kv_uc_drops(struct kunit *t);
void kv_ud_too_long_srq(struct kunit *t);

/* limits.c: object limits and CQs */
void kv_cq_notify(struct kunit *t);
void kv_cq_moderation(struct kunit *t);
void kv_cq_core_handler_in_place(struct kunit *t);
void kv_cq_core_handler_on_vector_cpu(struct kunit *t);
void kv_cq_core_freed_with_ipi_queued(struct kunit *t);
void kv_cq_core_pollers(struct kunit *t);
void kv_cq_vectors(struct kunit *t);
void kv_cq_overflow(struct kunit *t);
void kv_limits_enforced(struct kunit *t);
void kv_object_limit(struct kunit *t);
const void *kv_kind_params(const void *prev, char *desc);

/* fast_reg.c: fast registration and invalidation */
void kv_fast_reg(struct kunit *t);
void kv_fast_reg_no_pages(struct kunit *t);
void kv_fast_reg_refused(struct kunit *t);
void kv_fast_reg_remap(struct kunit *t);
void kv_send_with_invalidate(struct kunit *t);
void kv_invalidate_never_waits_locked(struct kunit *t);
void kv_wire_invalidate_later(struct kunit *t);

/* atomics_inline.c: inline data, atomics, send queue slots */
void kv_inline(struct kunit *t);
void kv_inline_over_limit(struct kunit *t);
void kv_atomics(struct kunit *t);
void kv_atomics_concurrent(struct kunit *t);
void kv_rd_atomic_resources(struct kunit *t);
void kv_unsignaled_hold_slots(struct kunit *t);

/* long_copy.c: long messages, and what happens while they are copied */
void kv_big_copy_takes_interrupts(struct kunit *t);
void kv_invalidate_during_long_copy(struct kunit *t);
void kv_drain_waits_for_long_copy(struct kunit *t);
void kv_drain_srq_waits_for_long_copy(struct kunit *t);
void kv_reset_during_long_copy(struct kunit *t);
void kv_reset_srq_during_long_copy(struct kunit *t);
void kv_reset_with_busy_posters(struct kunit *t);

#endif /* KRWQ_KUNIT_VERBS_ENV_H */
