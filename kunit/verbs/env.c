// SPDX-License-Identifier: GPL-2.0
/*
 * env.c - the fixture of the KUnit suite "krwq_verbs" (struct kv_env:
 * krwq0, a PD, two CQs, an SRQ and the connected RC QPs a and b, made for
 * each case), and the helpers that the cases of several files use: QPs
 * and connecting them, posting, polling, waiting for an event or a state,
 * the device's counters, fast-registration regions.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/scatterlist.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "../counter.h"
#include "../qp_state.h"
#include "env.h"

/**
 * kv_event() - the asynchronous event handler of the fixture's QPs, CQs
 * and SRQ: counts each event in kv_env.events.
 * @ev: the event.
 * @ctx: the fixture.
 */
void kv_event(struct ib_event *ev, void *ctx)
{
	struct kv_env *v = ctx;

	if (ev->event <= IB_EVENT_GID_CHANGE)
		atomic_inc(&v->events[ev->event]);
}

/**
 * kv_comp() - the completion handler of the fixture's CQs: counts its
 * calls in kv_env.comp_calls.
 * @cq: the CQ.
 * @ctx: the fixture.
 */
void kv_comp(struct ib_cq *cq, void *ctx)
{
	struct kv_env *v = ctx;

	atomic_inc(&v->comp_calls);
}

/**
 * kv_qp() - a QP on the fixture's PD and CQs: KV_DEPTH WRs of 4 SGEs
 * each way, 64 bytes inline, every send WR signaled.
 * @v: the fixture.
 * @type: the QP's type.
 * @srq: on the fixture's SRQ, not a receive queue of its own.
 *
 * Return: the QP, which the caller destroys, or an ERR_PTR().
 */
struct ib_qp *kv_qp(struct kv_env *v, enum ib_qp_type type, bool srq)
{
	struct ib_qp_init_attr init = {
		.event_handler = kv_event,
		.qp_context = v,
		.send_cq = v->scq,
		.recv_cq = v->rcq,
		.srq = srq ? v->srq : NULL,
		.cap = {
			.max_send_wr = KV_DEPTH, .max_recv_wr = KV_DEPTH,
			.max_send_sge = 4, .max_recv_sge = 4,
			.max_inline_data = 64,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = type,
	};

	return ib_create_qp(v->pd, &init);
}

/**
 * kv_new_qp() - a QP of one case beyond a and b, as kv_qp() makes it.
 * @v: the fixture.
 * @type: the QP's type.
 * @srq: on the fixture's SRQ.
 *
 * kv_exit() destroys it if the case did not get to kv_free_qp() (a
 * failed assertion), before the CQs it uses.
 *
 * Return: the QP, or an ERR_PTR(): -ENOSPC with KV_EXTRA_QPS in use.
 */
struct ib_qp *kv_new_qp(struct kv_env *v, enum ib_qp_type type, bool srq)
{
	struct ib_qp *qp = kv_qp(v, type, srq);
	int i;

	if (IS_ERR(qp))
		return qp;
	for (i = 0; i < KV_EXTRA_QPS; i++) {
		if (!v->extra[i]) {
			v->extra[i] = qp;
			return qp;
		}
	}
	ib_destroy_qp(qp);
	return ERR_PTR(-ENOSPC);
}

/**
 * kv_free_qp() - destroy a QP of kv_new_qp().
 * @v: the fixture.
 * @qp: the QP.
 */
void kv_free_qp(struct kv_env *v, struct ib_qp *qp)
{
	int i;

	for (i = 0; i < KV_EXTRA_QPS; i++)
		if (v->extra[i] == qp)
			v->extra[i] = NULL;
	ib_destroy_qp(qp);
}

/**
 * kv_connect_rd() - RESET (or INIT) -> INIT -> RTR -> RTS, aimed at QP
 * @dest behind LID @lid.
 * @qp: the QP.
 * @lid: the peer's LID (RC, UC).
 * @dest: the peer's QP number (RC, UC).
 * @rnr_retry: the RC requester's RNR retry count (7: for ever).
 * @timeout: the RC requester's local ACK timeout (0: never).
 * @retry_cnt: the RC requester's retry count.
 * @rd_atom: both the RC QP's initiator depth and its responder resources.
 *
 * Return: 0, or the first failing ib_modify_qp()'s errno.
 */
int kv_connect_rd(struct ib_qp *qp, u16 lid, u32 dest, u8 rnr_retry,
		  u8 timeout, u8 retry_cnt, u8 rd_atom)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_ATOMIC,
		.qkey = KV_QKEY,
	};
	int mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT;
	int ret;

	mask |= qp->qp_type == IB_QPT_UD ? IB_QP_QKEY : IB_QP_ACCESS_FLAGS;
	ret = ib_modify_qp(qp, &a, mask);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTR;
	mask = IB_QP_STATE;
	if (qp->qp_type != IB_QPT_UD) {
		a.path_mtu = IB_MTU_4096;
		a.dest_qp_num = dest;
		a.rq_psn = 0;
		a.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
		rdma_ah_set_dlid(&a.ah_attr, lid);
		rdma_ah_set_port_num(&a.ah_attr, 1);
		mask |= IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN;
		if (qp->qp_type == IB_QPT_RC) {
			a.max_dest_rd_atomic = rd_atom;
			a.min_rnr_timer = 1;
			mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
		}
	}
	ret = ib_modify_qp(qp, &a, mask);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	mask = IB_QP_STATE | IB_QP_SQ_PSN;
	if (qp->qp_type == IB_QPT_RC) {
		a.timeout = timeout;
		a.retry_cnt = retry_cnt;
		a.rnr_retry = rnr_retry;
		a.max_rd_atomic = rd_atom;
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	}
	return ib_modify_qp(qp, &a, mask);
}

/**
 * kv_connect_to() - kv_connect_rd() with one RDMA READ or atomic each way.
 * @qp: the QP.
 * @lid: the peer's LID (RC, UC).
 * @dest: the peer's QP number (RC, UC).
 * @rnr_retry: the RC requester's RNR retry count (7: for ever).
 * @timeout: the RC requester's local ACK timeout (0: never).
 * @retry_cnt: the RC requester's retry count.
 *
 * Return: 0, or the first failing ib_modify_qp()'s errno.
 */
int kv_connect_to(struct ib_qp *qp, u16 lid, u32 dest, u8 rnr_retry,
		  u8 timeout, u8 retry_cnt)
{
	return kv_connect_rd(qp, lid, dest, rnr_retry, timeout, retry_cnt, 1);
}

/**
 * kv_connect_retry() - kv_connect_to() a QP of krwq0's own port (KV_LID).
 * @qp: the QP.
 * @dest: the peer's QP number (RC, UC).
 * @rnr_retry: the RC requester's RNR retry count (7: for ever).
 * @timeout: the RC requester's local ACK timeout (0: never).
 * @retry_cnt: the RC requester's retry count.
 *
 * Return: 0, or the first failing ib_modify_qp()'s errno.
 */
int kv_connect_retry(struct ib_qp *qp, u32 dest, u8 rnr_retry,
		     u8 timeout, u8 retry_cnt)
{
	return kv_connect_to(qp, KV_LID, dest, rnr_retry, timeout, retry_cnt);
}

/**
 * kv_connect() - kv_connect_retry() with ACK timeout 14 and retry count 7.
 * @qp: the QP.
 * @dest: the peer's QP number (RC, UC).
 * @rnr_retry: the RC requester's RNR retry count (7: for ever).
 *
 * Return: 0, or the first failing ib_modify_qp()'s errno.
 */
int kv_connect(struct ib_qp *qp, u32 dest, u8 rnr_retry)
{
	return kv_connect_retry(qp, dest, rnr_retry, 14, 7);
}

/**
 * kv_counter() - a counter of krwq0's port, as rdma statistic shows it.
 * @v: the fixture.
 * @name: the counter's name.
 *
 * Return: its value, or U64_MAX if the port has no such counter.
 */
u64 kv_counter(struct kv_env *v, const char *name)
{
	return krwq_test_counter(v->dev, name);
}

/**
 * kv_init() - the suite's init: the fixture of one case.
 * @t: the case; its priv becomes the fixture.
 *
 * krwq0, a PD with an unsafe global rkey, a send and a receive CQ, an
 * SRQ, and the RC QPs a and b connected to each other.
 *
 * Return: 0, or a negative errno.
 */
int kv_init(struct kunit *t)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 4 * KV_DEPTH };
	struct ib_srq_init_attr srq_attr = {
		.event_handler = kv_event,
		.attr = { .max_wr = KV_DEPTH, .max_sge = 4 },
	};
	struct kv_env *v;

	v = kunit_kzalloc(t, sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	t->priv = v;
	v->t = t;
	v->dev = ib_device_get_by_name("krwq0", RDMA_DRIVER_QIB);
	if (!v->dev)
		return -ENODEV;
	v->abuf = kunit_kzalloc(t, KV_BUF, GFP_KERNEL);
	v->bbuf = kunit_kzalloc(t, KV_BUF, GFP_KERNEL);
	v->pd = ib_alloc_pd(v->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (!v->abuf || !v->bbuf || IS_ERR(v->pd))
		return -ENOMEM;
	v->scq = ib_create_cq(v->dev, kv_comp, kv_event, v, &cq_attr);
	v->rcq = ib_create_cq(v->dev, kv_comp, kv_event, v, &cq_attr);
	srq_attr.srq_context = v;
	v->srq = ib_create_srq(v->pd, &srq_attr);
	if (IS_ERR(v->scq) || IS_ERR(v->rcq) || IS_ERR(v->srq))
		return -ENOMEM;
	v->a = kv_qp(v, IB_QPT_RC, false);
	v->b = kv_qp(v, IB_QPT_RC, false);
	if (IS_ERR(v->a) || IS_ERR(v->b))
		return -ENOMEM;
	if (kv_connect(v->a, v->b->qp_num, 7) || kv_connect(v->b, v->a->qp_num, 7))
		return -EIO;
	return 0;
}

/**
 * kv_exit() - the suite's exit: frees what the case left of the fixture.
 * @t: the case.
 *
 * The QPs of kv_new_qp(), a and b, the SRQ, the CQs, the PD, krwq0's
 * reference and the buffers of a long copy.
 */
void kv_exit(struct kunit *t)
{
	struct kv_env *v = t->priv;
	int i;

	if (!v || !v->dev)
		return;
	for (i = 0; i < KV_EXTRA_QPS; i++)
		if (v->extra[i])
			ib_destroy_qp(v->extra[i]);
	if (!IS_ERR_OR_NULL(v->a))
		ib_destroy_qp(v->a);
	if (!IS_ERR_OR_NULL(v->b))
		ib_destroy_qp(v->b);
	if (!IS_ERR_OR_NULL(v->srq))
		ib_destroy_srq(v->srq);
	if (!IS_ERR_OR_NULL(v->scq))
		ib_destroy_cq(v->scq);
	if (!IS_ERR_OR_NULL(v->rcq))
		ib_destroy_cq(v->rcq);
	if (!IS_ERR_OR_NULL(v->pd))
		ib_dealloc_pd(v->pd);
	ib_device_put(v->dev);
	vfree(v->big_src);
	vfree(v->big_dst);
}

/**
 * kv_poll() - poll @n completions from @cq within two seconds.
 * @cq: the CQ.
 * @wc: room for @n completions.
 * @n: how many.
 *
 * Return: how many it got, or ib_poll_cq()'s negative errno.
 */
int kv_poll(struct ib_cq *cq, struct ib_wc *wc, int n)
{
	unsigned long end = jiffies + 2 * HZ;
	int got = 0;

	while (got < n && time_before(jiffies, end)) {
		int r = ib_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		if (got < n)
			usleep_range(100, 200);
	}
	return got;
}

/**
 * kv_wait_event() - wait up to two seconds for the fixture to have seen
 * @want events of @type (events are delivered from a work item).
 * @v: the fixture.
 * @type: the event.
 * @want: how many.
 *
 * Return: how many events of @type the fixture has seen.
 */
int kv_wait_event(struct kv_env *v, enum ib_event_type type, int want)
{
	unsigned long end = jiffies + 2 * HZ;

	while (atomic_read(&v->events[type]) < want && time_before(jiffies, end))
		usleep_range(500, 1000);
	return atomic_read(&v->events[type]);
}

/**
 * kv_wait_state() - wait up to two seconds for @qp to be in state @want
 * (the move to ERR after a responder error is deferred).
 * @qp: the QP.
 * @want: the state.
 *
 * Return: the state it is in then, or -1 if ib_query_qp() failed.
 */
enum ib_qp_state kv_wait_state(struct ib_qp *qp, enum ib_qp_state want)
{
	unsigned long end = jiffies + 2 * HZ;
	int state;

	do {
		state = krwq_test_qp_state(qp);
		if (state < 0 || state == want)
			break;
		usleep_range(500, 1000);
	} while (time_before(jiffies, end));
	return state;
}

/**
 * kv_post_recv() - post a receive of @len bytes at @buf to @qp.
 * @v: the fixture, whose PD's local DMA lkey it uses.
 * @qp: the QP.
 * @wr_id: the WR's ID.
 * @buf: the buffer.
 * @len: its length.
 *
 * Return: ib_post_recv()'s.
 */
int kv_post_recv(struct kv_env *v, struct ib_qp *qp, u64 wr_id, u8 *buf,
		 u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = v->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}

/**
 * kv_send() - post a signaled SEND of @len bytes at @buf on @qp.
 * @v: the fixture, whose PD's local DMA lkey it uses.
 * @qp: the QP.
 * @wr_id: the WR's ID.
 * @buf: the payload.
 * @len: its length.
 *
 * Return: ib_post_send()'s.
 */
int kv_send(struct kv_env *v, struct ib_qp *qp, u64 wr_id, u8 *buf, u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = v->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr, &bad);
}

/**
 * kv_fr_mr() - a fast-registration region for @len bytes of @buf, which
 * it maps for the device.
 * @v: the fixture.
 * @buf: the memory, page aligned.
 * @len: its length.
 * @pages: the region's page list size.
 * @sg: the scatterlist it maps, kept for unmapping.
 *
 * Return: the region, for kv_fr_free(), or an ERR_PTR().
 */
struct ib_mr *kv_fr_mr(struct kv_env *v, void *buf, u32 len, u32 pages,
		       struct scatterlist *sg)
{
	struct ib_mr *mr = ib_alloc_mr(v->pd, IB_MR_TYPE_MEM_REG, pages);

	if (IS_ERR(mr))
		return mr;
	sg_init_one(sg, buf, len);
	if (ib_dma_map_sg(v->dev, sg, 1, DMA_BIDIRECTIONAL) != 1) {
		ib_dereg_mr(mr);
		return ERR_PTR(-EIO);
	}
	return mr;
}

/**
 * kv_fr_free() - unmap and deregister a region of kv_fr_mr().
 * @v: the fixture.
 * @mr: the region.
 * @sg: its scatterlist.
 */
void kv_fr_free(struct kv_env *v, struct ib_mr *mr, struct scatterlist *sg)
{
	ib_dma_unmap_sg(v->dev, sg, 1, DMA_BIDIRECTIONAL);
	ib_dereg_mr(mr);
}

/**
 * kv_reg() - post a signaled IB_WR_REG_MR of @mr with the next key variant.
 * @qp: the QP.
 * @mr: the region.
 * @access: the access it gives.
 * @wr_id: the WR's ID.
 *
 * Return: ib_post_send()'s.
 */
int kv_reg(struct ib_qp *qp, struct ib_mr *mr, int access, u64 wr_id)
{
	struct ib_reg_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = mr, .access = access,
	};
	const struct ib_send_wr *bad;

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	wr.key = mr->rkey;
	return ib_post_send(qp, &wr.wr, &bad);
}

/**
 * kv_local_inv() - post a signaled IB_WR_LOCAL_INV of @rkey on @qp.
 * @qp: the QP.
 * @rkey: the key.
 * @wr_id: the WR's ID.
 *
 * Return: ib_post_send()'s.
 */
int kv_local_inv(struct ib_qp *qp, u32 rkey, u64 wr_id)
{
	struct ib_send_wr wr = {
		.wr_id = wr_id, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED, .ex.invalidate_rkey = rkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr, &bad);
}

/**
 * kv_write() - post a signaled RDMA WRITE (wr_id 50) of @len bytes at
 * @src to @remote under @rkey.
 * @v: the fixture, whose PD's local DMA lkey it uses.
 * @qp: the QP.
 * @src: the local buffer.
 * @len: its length.
 * @remote: the remote address.
 * @rkey: its key.
 *
 * Return: ib_post_send()'s.
 */
int kv_write(struct kv_env *v, struct ib_qp *qp, u8 *src, u32 len,
	     u64 remote, u32 rkey)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)src, .length = len,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 50, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = remote, .rkey = rkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr.wr, &bad);
}

/**
 * kv_pair() - a connected RC pair of kv_new_qp(): *@c -> *@d and back.
 * @v: the fixture.
 * @c: the first QP.
 * @d: the second.
 *
 * Return: 0, -ENOMEM if a QP was not made, -EIO if they did not connect.
 */
int kv_pair(struct kv_env *v, struct ib_qp **c, struct ib_qp **d)
{
	*c = kv_new_qp(v, IB_QPT_RC, false);
	*d = kv_new_qp(v, IB_QPT_RC, false);
	if (IS_ERR(*c) || IS_ERR(*d))
		return -ENOMEM;
	if (kv_connect(*c, (*d)->qp_num, 7) || kv_connect(*d, (*c)->qp_num, 7))
		return -EIO;
	return 0;
}

/**
 * kv_post_srq() - post a receive of 64 bytes at bbuf to @srq with @lkey.
 * @v: the fixture.
 * @srq: the SRQ.
 * @wr_id: the WR's ID.
 * @lkey: the key of the receive's one SGE.
 *
 * Return: ib_post_srq_recv()'s.
 */
int kv_post_srq(struct kv_env *v, struct ib_srq *srq, u64 wr_id, u32 lkey)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)v->bbuf, .length = 64, .lkey = lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_srq_recv(srq, &wr, &bad);
}
