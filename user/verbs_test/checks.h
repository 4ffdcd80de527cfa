/* SPDX-License-Identifier: GPL-2.0 */
/*
 * checks.h - the groups of checks of krwq_verbs_test.  Each runs on its
 * own QPs, CQs and memory and reports the checks verbs_test.c lists for it.
 */
#ifndef KRWQ_CHECKS_H
#define KRWQ_CHECKS_H

#include "tap.h"

/* rq_checks.c: posting to a QP's own receive queue, flushing */
void t_rq_capacity(struct run *r);
void t_rq_sge(struct run *r);
void t_rq_reset(struct run *r);
void t_rq_on_srq(struct run *r);
void t_rq_flush(struct run *r);
void t_rq_post_in_err(struct run *r);
void t_rq_reuse(struct run *r);
void t_rq_destroy(struct run *r);

/* srq_checks.c: the shared receive queue */
void t_srq_capacity(struct run *r);
void t_srq_limit(struct run *r);
void t_srq_modify(struct run *r);
void t_srq_qp_error(struct run *r);
void t_srq_bad_lkey(struct run *r);

/* data_checks.c: what receives get */
void t_rc_send(struct run *r);
void t_rdma(struct run *r);
void t_short_recv(struct run *r);
void t_rnr(struct run *r);
void t_ud(struct run *r);
void t_cq_channel(struct run *r);
void t_bad_lkey(struct run *r);

#endif /* KRWQ_CHECKS_H */
