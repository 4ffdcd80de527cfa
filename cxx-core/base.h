// SPDX-License-Identifier: GPL-2.0
//
// base.h - the few building blocks the core uses instead of a standard
// library: fixed-width integers, a status code, and atomic index access
// with its memory order spelled out at every call.
#ifndef KRWQ_BASE_H
#define KRWQ_BASE_H

#include "krwq_core.h"

namespace krwq {

using u8 = unsigned char;
using u32 = unsigned int;
using u64 = unsigned long long;
using usize = decltype(sizeof(0));
using uptr = __UINTPTR_TYPE__;

static_assert(sizeof(u8) == 1 && sizeof(u32) == 4 && sizeof(u64) == 8,
	      "fixed-width types have the wrong width");
static_assert(sizeof(void *) == 8 && sizeof(usize) == 8, "LP64 only");

// A status is zero or a negative Linux errno, the value every krwq_rq_*
// function hands back to C.
enum class Status : int {
	kOk = 0,
	kNoMemory = -KRWQ_ENOMEM,
	kInvalid = -KRWQ_EINVAL,
};

constexpr int to_errno(Status s)
{
	return static_cast<int>(s);
}

// Shared indices are only ever touched through these, so every access
// names its ordering.  The builtins are the compiler's own; they need no
// runtime library and KCSAN/TSan see them as atomic.  They take the
// index by reference, so clang's thread-safety analysis checks an access
// to a guarded one like any other (-Wthread-safety-reference).
template <typename T>
inline T load_acquire(const T &x)
{
	return __atomic_load_n(&x, __ATOMIC_ACQUIRE);
}

template <typename T>
inline T load_relaxed(const T &x)
{
	return __atomic_load_n(&x, __ATOMIC_RELAXED);
}

template <typename T>
inline void store_release(T &x, T v)
{
	__atomic_store_n(&x, v, __ATOMIC_RELEASE);
}

template <typename T>
inline void store_relaxed(T &x, T v)
{
	__atomic_store_n(&x, v, __ATOMIC_RELAXED);
}

// Byte copy that the compiler may turn into memcpy; entries are small.
inline void copy_bytes(void *dst, const void *src, usize n)
{
	__builtin_memcpy(dst, src, n);
}

template <typename T>
inline T *byte_offset(void *base, usize off)
{
	return reinterpret_cast<T *>(static_cast<char *>(base) + off);
}

template <typename T>
inline const T *byte_offset(const void *base, usize off)
{
	return reinterpret_cast<const T *>(static_cast<const char *>(base) + off);
}

} // namespace krwq

#endif // KRWQ_BASE_H
