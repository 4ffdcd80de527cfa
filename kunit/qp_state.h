/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qp_state.h - a QP's state as ib_query_qp() reports it, for the KUnit
 * suites.
 */
#ifndef KRWQ_KUNIT_QP_STATE_H
#define KRWQ_KUNIT_QP_STATE_H

#include <linux/compiler.h>
#include <rdma/ib_verbs.h>

/*
 * @qp's state now, or -1 if ib_query_qp() fails.  Out of line: the two
 * attribute structures are large, and the callers are test cases with
 * big frames of their own.
 */
static __maybe_unused noinline_for_stack int krwq_test_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

#endif /* KRWQ_KUNIT_QP_STATE_H */
