// SPDX-License-Identifier: GPL-2.0
/*
 * rq_views.c - the raw views of rq_env.h, the same in the kernel (KUnit)
 * and on the host, where hostshim/include stands in for the kernel
 * headers module/rq.h needs.
 */
#include "../module/rq.h"
#include "rq_env.h"

u32 rq_env_slots(struct krwq_rq *rq)
{
	return rq->slots;
}

u32 rq_env_cached_count(struct krwq_rq *rq)
{
	/* the consumer's field, read racily on purpose by the checks */
	return __atomic_load_n(&rq->kwq->count, __ATOMIC_RELAXED);
}

u32 *rq_env_user_head(struct krwq_rq *rq)
{
	return rq->wq ? &rq->wq->head : NULL;
}

u32 *rq_env_user_tail(struct krwq_rq *rq)
{
	return rq->wq ? &rq->wq->tail : NULL;
}

void *rq_env_entry(struct krwq_rq *rq, u32 idx)
{
	return (char *)rq->kwq->curr_wq + (size_t)idx * rq->stride;
}
