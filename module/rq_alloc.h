/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KRWQ_RQ_ALLOC_H
#define KRWQ_RQ_ALLOC_H

#include <linux/types.h>

struct krwq_rq;
struct ib_udata;
struct rdma_user_mmap_entry;

/* krwq_rq_alloc() flags */
#define KRWQ_ALLOC_RESIZABLE 0x1u	/* entries apart from the header (SRQs) */

int krwq_rq_alloc(struct krwq_rq *rq, u32 max_wr, u32 max_sge,
		  unsigned int flags, int node);
int krwq_rq_alloc_user(struct krwq_rq *rq, u32 max_wr, u32 max_sge, int node);
int krwq_rq_alloc_mapped(struct krwq_rq *rq, u32 max_wr, u32 max_sge,
			 struct ib_udata *udata,
			 struct rdma_user_mmap_entry **entry);
size_t krwq_rq_mapped_bytes(const struct krwq_rq *rq);
void *krwq_rq_storage_alloc(const struct krwq_rq *rq, u32 max_wr,
			    size_t *bytes);
void krwq_rq_storage_free(const struct krwq_rq *rq, void *storage);
int krwq_rq_resize_alloc(struct krwq_rq *rq, u32 max_wr, const u32 *limit);
void krwq_rq_free(struct krwq_rq *rq);

#endif /* KRWQ_RQ_ALLOC_H */
