/* SPDX-License-Identifier: GPL-2.0 */
/* Host stand-in: a ring lock is a pthread mutex, which TSan understands. */
#ifndef KRWQ_HOST_SPINLOCK_TYPES_H
#define KRWQ_HOST_SPINLOCK_TYPES_H
#include <pthread.h>
typedef struct {
	pthread_mutex_t mutex;
} spinlock_t;
#endif
