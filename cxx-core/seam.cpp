// SPDX-License-Identifier: GPL-2.0
//
// seam.cpp - the extern "C" entry points of krwq_core.h.  Each one turns
// the C pointers into the core's views and its result into an errno.
#include "receive_queue.h"

using krwq::ReceiveQueue;
using krwq::RecvWr;

namespace {

// The C side hands out `struct ib_recv_wr` and `struct ib_sge`, which the
// core knows as RecvWr and Sge (layout.h checks that they agree).
const RecvWr *as_recv_wr(const ib_recv_wr *wr)
{
	return reinterpret_cast<const RecvWr *>(wr);
}

} // namespace

extern "C" {

int krwq_rq_geometry(unsigned int max_wr, unsigned int max_sge, krwq_geometry *geo)
{
	return krwq::to_errno(krwq::compute_geometry(max_wr, max_sge, geo));
}

int krwq_rq_init(krwq_rq *rq, krwq_kring *kwq, void *storage, unsigned int flags,
		 unsigned int max_wr, unsigned int max_sge)
{
	krwq_geometry geo{};
	const auto status = krwq::compute_geometry(max_wr, max_sge, &geo);
	if (status == krwq::Status::kOk)
		ReceiveQueue(rq).init(reinterpret_cast<krwq::KernelRing *>(kwq), storage,
				      flags & KRWQ_RING_USER, geo, max_sge);
	return krwq::to_errno(status);
}

krwq_posted krwq_rq_post(krwq_rq *rq, const ib_recv_wr *wr, const ib_recv_wr **bad_wr,
			 const krwq_sink *sink)
{
	const RecvWr *bad = nullptr;
	krwq::u32 n = 0;
	const auto status = ReceiveQueue(rq).post(as_recv_wr(wr), &bad, sink, &n);
	*bad_wr = reinterpret_cast<const ib_recv_wr *>(bad); // null on success
	return { krwq::to_errno(status), n };
}
static_assert(sizeof(krwq_posted) == 8 && __is_trivially_copyable(krwq_posted),
	      "krwq_posted comes back in one register");

krwq_take_outcome krwq_rq_take(krwq_rq *rq, krwq_taken *out)
{
	return static_cast<krwq_take_outcome>(ReceiveQueue(rq).take(out));
}

krwq_take_outcome krwq_rq_take_fitting(krwq_rq *rq, krwq_taken *out, unsigned int need)
{
	return static_cast<krwq_take_outcome>(ReceiveQueue(rq).take(out, need));
}

unsigned int krwq_rq_count(krwq_rq *rq)
{
	return ReceiveQueue(rq).count();
}

void krwq_rq_set_state(krwq_rq *rq, krwq_rq_state state, const krwq_sink *sink)
{
	ReceiveQueue(rq).set_state(state, sink);
}

unsigned int krwq_rq_flush(krwq_rq *rq, unsigned int max, const krwq_sink *sink)
{
	return ReceiveQueue(rq).flush(max, sink);
}

enum krwq_rq_state krwq_rq_get_state(krwq_rq *rq)
{
	return ReceiveQueue(rq).state();
}

int krwq_rq_set_limit(krwq_rq *rq, unsigned int limit)
{
	return krwq::to_errno(ReceiveQueue(rq).set_limit(limit));
}

unsigned int krwq_rq_limit(krwq_rq *rq)
{
	return ReceiveQueue(rq).limit();
}

int krwq_rq_resize(krwq_rq *rq, void *storage, unsigned int max_wr, const unsigned int *limit,
		   void **old_storage)
{
	return krwq::to_errno(ReceiveQueue(rq).resize(storage, max_wr, limit, old_storage));
}

} // extern "C"
