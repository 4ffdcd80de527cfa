/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rq_cases.h - the list of shared receive-queue cases (rq_cases.c).
 * RQ_CASES(X) expands X(name) once per case, in run order.
 */
#ifndef KRWQ_RQ_CASES_H
#define KRWQ_RQ_CASES_H

#include "rq_env.h"

#define RQ_CASES(X) \
	X(geometry_sizes) \
	X(geometry_limits) \
	X(new_ring_is_reset) \
	X(post_in_reset_fails) \
	X(post_then_take) \
	X(post_exact_capacity) \
	X(post_list_full_midway) \
	X(post_too_many_sge) \
	X(post_negative_sge) \
	X(post_zero_sge) \
	X(post_empty_list) \
	X(post_copies_sges) \
	X(post_wraps_in_order) \
	X(post_in_init_not_taken) \
	X(post_in_error_flushes) \
	X(post_in_error_checks_sge) \
	X(post_in_error_needs_sink) \
	X(take_empty) \
	X(take_only_when_active) \
	X(take_fifo_long_run) \
	X(count_never_exceeds_length) \
	X(cached_count_refresh) \
	X(limit_fires_once) \
	X(limit_rearm) \
	X(limit_above_max_wr) \
	X(limit_zero_disarms) \
	X(limit_quiet_above) \
	X(flush_in_order) \
	X(flush_twice_is_empty) \
	X(reset_empties) \
	X(reset_after_error_reuse) \
	X(resize_keeps_order) \
	X(resize_too_small) \
	X(resize_to_exact_fit) \
	X(resize_below_limit) \
	X(resize_over_core_max) \
	X(resize_repeatedly) \
	X(user_ring_take) \
	X(user_ring_bad_head) \
	X(user_ring_bad_num_sge) \
	X(user_ring_tail_is_kernels) \
	X(user_ring_kernel_post) \
	X(user_ring_resize) \
	X(user_ring_reset) \
	X(threads_one_producer) \
	X(threads_two_producers) \
	X(threads_resize_under_load)

#define RQ_DECLARE_CASE(name) void rq_case_##name(rq_test *t);
RQ_CASES(RQ_DECLARE_CASE)
#undef RQ_DECLARE_CASE

#endif /* KRWQ_RQ_CASES_H */
