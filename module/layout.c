// SPDX-License-Identifier: GPL-2.0
/*
 * layout.c - extracts the layout of the structures the C++ core shares
 * with C.  Kbuild compiles this to assembly and turns the markers into
 * krwq_layout.h (the way the kernel makes asm-offsets.h); the core
 * static_asserts its own view of the memory against every value here.
 */
#include <linux/kbuild.h>
#include <linux/stddef.h>

#include "rq.h"

int main(void);

int main(void)
{
	DEFINE(KRWQ_SPINLOCK_SIZE, sizeof(spinlock_t));
	DEFINE(KRWQ_SPINLOCK_ALIGN, __alignof__(spinlock_t));
	DEFINE(KRWQ_CACHE_LINE, SMP_CACHE_BYTES);
	BLANK();
	DEFINE(KRWQ_KRING_SIZE, sizeof(struct krwq_kring));
	OFFSET(KRWQ_KRING_P_LOCK, krwq_kring, p_lock);
	OFFSET(KRWQ_KRING_HEAD, krwq_kring, head);
	OFFSET(KRWQ_KRING_C_LOCK, krwq_kring, c_lock);
	OFFSET(KRWQ_KRING_TAIL, krwq_kring, tail);
	OFFSET(KRWQ_KRING_COUNT, krwq_kring, count);
	OFFSET(KRWQ_KRING_CURR_WQ, krwq_kring, curr_wq);
	OFFSET(KRWQ_KRING_WQ, krwq_kring, wq);
	BLANK();
	DEFINE(KRWQ_RWQE_SIZE, sizeof(struct krwq_rwqe));
	OFFSET(KRWQ_RWQE_WR_ID, krwq_rwqe, wr_id);
	OFFSET(KRWQ_RWQE_NUM_SGE, krwq_rwqe, num_sge);
	OFFSET(KRWQ_RWQE_SG_LIST, krwq_rwqe, sg_list);
	BLANK();
	DEFINE(KRWQ_RWQ_SIZE, sizeof(struct krwq_rwq));
	OFFSET(KRWQ_RWQ_HEAD, krwq_rwq, head);
	OFFSET(KRWQ_RWQ_TAIL, krwq_rwq, tail);
	OFFSET(KRWQ_RWQ_WQ, krwq_rwq, wq);
	BLANK();
	DEFINE(KRWQ_RQ_SIZE, sizeof(struct krwq_rq));
	OFFSET(KRWQ_RQ_WQ, krwq_rq, wq);
	OFFSET(KRWQ_RQ_KWQ, krwq_rq, kwq);
	OFFSET(KRWQ_RQ_SLOTS, krwq_rq, slots);
	OFFSET(KRWQ_RQ_STRIDE, krwq_rq, stride);
	OFFSET(KRWQ_RQ_LIMIT, krwq_rq, limit);
	OFFSET(KRWQ_RQ_MAX_SGE, krwq_rq, max_sge);
	OFFSET(KRWQ_RQ_STATE, krwq_rq, state);
	BLANK();
	DEFINE(KRWQ_SGE_SIZE, sizeof(struct ib_sge));
	OFFSET(KRWQ_SGE_ADDR, ib_sge, addr);
	OFFSET(KRWQ_SGE_LENGTH, ib_sge, length);
	OFFSET(KRWQ_SGE_LKEY, ib_sge, lkey);
	BLANK();
	DEFINE(KRWQ_RECV_WR_SIZE, sizeof(struct ib_recv_wr));
	OFFSET(KRWQ_RECV_WR_NEXT, ib_recv_wr, next);
	OFFSET(KRWQ_RECV_WR_WR_ID, ib_recv_wr, wr_id);
	OFFSET(KRWQ_RECV_WR_SG_LIST, ib_recv_wr, sg_list);
	OFFSET(KRWQ_RECV_WR_NUM_SGE, ib_recv_wr, num_sge);
	return 0;
}
