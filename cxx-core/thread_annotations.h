// SPDX-License-Identifier: GPL-2.0
//
// thread_annotations.h - the core's locking rules, written where a
// compiler can check them.  Under clang each macro becomes one of its
// thread-safety attributes, and `make lint` compiles the core with
// -Wthread-safety -Werror, so a function that touches a guarded field
// without its lock, or calls a helper without the locks the helper
// requires, or returns with a lock still held, fails lint.  GCC (which
// builds the module) has no such analysis: there they expand to nothing.
//
// The analysis sees only the core's own code.  Where the core's contract
// with its C callers says "the caller holds the lock", the run-time half
// is SpinLock::assert_held(), which is lockdep_assert_held() in the kernel.
#ifndef KRWQ_THREAD_ANNOTATIONS_H
#define KRWQ_THREAD_ANNOTATIONS_H

#ifdef __clang__
#define KRWQ_THREAD_ATTR(...) __attribute__((__VA_ARGS__))
#else
#define KRWQ_THREAD_ATTR(...)
#endif

// On a type: its objects are locks; `kind` names them in diagnostics.
#define TA_CAP(kind) KRWQ_THREAD_ATTR(capability(kind))
// On a type: an object of it holds a lock from construction to destruction.
#define TA_SCOPED_CAP KRWQ_THREAD_ATTR(scoped_lockable)

// On a member: read or written only with `lock` held.
#define TA_GUARDED(lock) KRWQ_THREAD_ATTR(guarded_by(lock))
// On a pointer member: what it points to is read or written only with
// `lock` held (the pointer itself is not guarded).
#define TA_PT_GUARDED(lock) KRWQ_THREAD_ATTR(pt_guarded_by(lock))
// On a lock member: it is taken before `locks` whenever both are held.
#define TA_ACQ_BEFORE(...) KRWQ_THREAD_ATTR(acquired_before(__VA_ARGS__))
// On a lock member: it is taken after `locks` whenever both are held.
#define TA_ACQ_AFTER(...) KRWQ_THREAD_ATTR(acquired_after(__VA_ARGS__))

// On a function: its caller must hold `locks`, and still holds them after.
#define TA_REQ(...) KRWQ_THREAD_ATTR(requires_capability(__VA_ARGS__))
// On a function: its caller must not hold `locks`; it takes them itself.
#define TA_EXCL(...) KRWQ_THREAD_ATTR(locks_excluded(__VA_ARGS__))
// On a function: it takes `locks` (or, on a lock's member function, the
// lock itself) and returns with them held.
#define TA_ACQ(...) KRWQ_THREAD_ATTR(acquire_capability(__VA_ARGS__))
// On a function: it drops `locks` (or the lock itself), which were held.
#define TA_REL(...) KRWQ_THREAD_ATTR(release_capability(__VA_ARGS__))
// On a function: it checks at run time that `locks` (or the lock itself)
// are held; the analysis takes them as held after the call.
#define TA_ASSERT(...) KRWQ_THREAD_ATTR(assert_capability(__VA_ARGS__))

// On a function: the analysis skips its body.  Only for the few lines
// that hand a lock to the C side, which the analysis cannot see into;
// each use says why.
#define TA_NO_ANALYSIS KRWQ_THREAD_ATTR(no_thread_safety_analysis)

#endif // KRWQ_THREAD_ANNOTATIONS_H
