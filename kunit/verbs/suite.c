// SPDX-License-Identifier: GPL-2.0
/*
 * suite.c - the KUnit suite "krwq_verbs": krwq0 driven through the RDMA
 * core's kernel verbs, as an in-kernel consumer would.  Needs krwq.ko
 * loaded (it provides krwq0).  A few cases also look at what no verb
 * shows (an SRQ's cached count) or call a device helper directly (the ERR
 * re-flush budget, exported to KUnit by EXPORT_SYMBOL_IF_KUNIT).
 *
 * The fixture and the shared helpers are in env.c (env.h); the cases are
 * in one file per subject: send_rnr.c, receive.c, ud_uc.c, limits.c,
 * fast_reg.c, atomics_inline.c and long_copy.c.
 */
#include <kunit/test.h>

#include "env.h"

static struct kunit_case krwq_verbs_cases[] = {
	KUNIT_CASE(kv_send_recv),
	KUNIT_CASE(kv_post_with_irqs_off),
	KUNIT_CASE(kv_recv_capacity),
	KUNIT_CASE(kv_recv_in_reset),
	KUNIT_CASE(kv_flush_on_error),
	KUNIT_CASE(kv_too_small),
	KUNIT_CASE(kv_rdma_write_read),
	KUNIT_CASE(kv_rnr_retry_exceeded),
	KUNIT_CASE(kv_rnr_waits_for_receive),
	KUNIT_CASE(kv_srq_limit_and_resize),
	KUNIT_CASE(kv_ud),
	KUNIT_CASE(kv_cq_notify),
	KUNIT_CASE(kv_cq_moderation),
	KUNIT_CASE(kv_cq_core_handler_in_place),
	KUNIT_CASE(kv_cq_core_handler_on_vector_cpu),
	KUNIT_CASE(kv_cq_core_freed_with_ipi_queued),
	KUNIT_CASE(kv_cq_core_pollers),
	KUNIT_CASE(kv_cq_vectors),
	KUNIT_CASE(kv_cq_overflow),
	KUNIT_CASE(kv_limits_enforced),
	KUNIT_CASE_PARAM(kv_object_limit, kv_kind_params),
	KUNIT_CASE(kv_destroy_drops_completions),
	KUNIT_CASE(kv_foreign_sender_refused),
	KUNIT_CASE(kv_send_waits_for_peer_to_connect),
	KUNIT_CASE(kv_waiting_send_flushed),
	KUNIT_CASE(kv_error_flushes_any_opcode),
	KUNIT_CASE(kv_unreachable_lid),
	KUNIT_CASE(kv_gsi_only_with_mads),
	KUNIT_CASE(kv_fast_reg),
	KUNIT_CASE(kv_fast_reg_no_pages),
	KUNIT_CASE(kv_fast_reg_refused),
	KUNIT_CASE(kv_fast_reg_remap),
	KUNIT_CASE(kv_send_with_invalidate),
	KUNIT_CASE(kv_invalidate_never_waits_locked),
	KUNIT_CASE(kv_wire_invalidate_later),
	KUNIT_CASE(kv_inline),
	KUNIT_CASE(kv_inline_over_limit),
	KUNIT_CASE(kv_atomics),
	KUNIT_CASE(kv_atomics_concurrent),
	KUNIT_CASE(kv_rd_atomic_resources),
	KUNIT_CASE(kv_unsignaled_hold_slots),
	KUNIT_CASE(kv_srq_modify_mask),
	KUNIT_CASE(kv_srq_bad_lkey_counted),
	KUNIT_CASE(kv_uflush_budget_shared),
	KUNIT_CASE(kv_ud_too_long_dropped),
	KUNIT_CASE(kv_ud_qpn_over_24_bits),
	KUNIT_CASE(kv_uc_drops),
	KUNIT_CASE(kv_ud_too_long_srq),
	KUNIT_CASE(kv_big_copy_takes_interrupts),
	KUNIT_CASE(kv_invalidate_during_long_copy),
	KUNIT_CASE(kv_drain_waits_for_long_copy),
	KUNIT_CASE(kv_drain_srq_waits_for_long_copy),
	KUNIT_CASE(kv_reset_during_long_copy),
	KUNIT_CASE(kv_reset_srq_during_long_copy),
	KUNIT_CASE(kv_reset_with_busy_posters),
	{}
};

static struct kunit_suite krwq_verbs_suite = {
	.name = "krwq_verbs",
	.init = kv_init,
	.exit = kv_exit,
	.test_cases = krwq_verbs_cases,
};

kunit_test_suite(krwq_verbs_suite);
