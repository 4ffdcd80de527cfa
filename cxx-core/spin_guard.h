// SPDX-License-Identifier: GPL-2.0
//
// spin_guard.h - RAII ownership of one of a ring's spinlocks.  The lock
// itself is a kernel spinlock_t that the core only knows as bytes; taking
// and dropping it goes through the seam (irqsave, since receives may be
// posted from interrupt context).  The guard is a scoped capability: for
// clang's analysis the lock is held from its construction to the end of
// its scope.
#ifndef KRWQ_SPIN_GUARD_H
#define KRWQ_SPIN_GUARD_H

#include "layout.h"

namespace krwq {

class [[nodiscard]] TA_SCOPED_CAP SpinGuard {
public:
	explicit SpinGuard(SpinLock &lock) TA_ACQ(lock) : lock_(lock), flags_(lock.lock_irqsave())
	{
	}
	~SpinGuard() TA_REL() { lock_.unlock_irqrestore(flags_); }

	SpinGuard(const SpinGuard &) = delete;
	SpinGuard &operator=(const SpinGuard &) = delete;
	SpinGuard(SpinGuard &&) = delete;
	SpinGuard &operator=(SpinGuard &&) = delete;

private:
	SpinLock &lock_;
	const unsigned long flags_;
};

} // namespace krwq

#endif // KRWQ_SPIN_GUARD_H
