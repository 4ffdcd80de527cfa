/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in for the two verbs structures the receive queue touches. */
#ifndef KRWQ_HOST_IB_VERBS_H
#define KRWQ_HOST_IB_VERBS_H
#include <linux/types.h>

struct ib_sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

struct ib_cqe;

struct ib_recv_wr {
	struct ib_recv_wr *next;
	union {
		u64 wr_id;
		struct ib_cqe *wr_cqe;
	};
	struct ib_sge *sg_list;
	int num_sge;
};
#endif
