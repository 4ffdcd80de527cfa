// SPDX-License-Identifier: GPL-2.0
//
// spin_guard.h - RAII ownership of one of a ring's spinlocks.  The lock
// itself is a kernel spinlock_t that the core only knows as bytes; taking
// and dropping it goes through the seam (irqsave, since receives may be
// posted from interrupt context).
#ifndef KRWQ_SPIN_GUARD_H
#define KRWQ_SPIN_GUARD_H

#include "base.h"

namespace krwq {

class [[nodiscard]] SpinGuard {
public:
	explicit SpinGuard(void *lock) : lock_(lock), flags_(krwq_spin_lock_irqsave(lock)) {}
	~SpinGuard() { krwq_spin_unlock_irqrestore(lock_, flags_); }

	SpinGuard(const SpinGuard &) = delete;
	SpinGuard &operator=(const SpinGuard &) = delete;
	SpinGuard(SpinGuard &&) = delete;
	SpinGuard &operator=(SpinGuard &&) = delete;

private:
	void *const lock_;
	const unsigned long flags_;
};

} // namespace krwq

#endif // KRWQ_SPIN_GUARD_H
