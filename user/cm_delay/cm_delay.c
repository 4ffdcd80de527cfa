// SPDX-License-Identifier: GPL-2.0
/*
 * cm_delay.so - an LD_PRELOAD library that delays librdmacm calls, for the
 * test harness's perftest -R runs.
 *
 * perftest 4.5 (Debian 12) opens its data connection in a race: after the
 * two sides' handshake the client calls rdma_connect() at once, while the
 * server only then creates, binds and listens on the ID that is to accept
 * it.  A client that wins the race is rejected by the CM ("invalid
 * service ID", RDMA_CM_EVENT_REJECTED with status 8), and perftest's retry
 * of that connection reuses the IDs it has just destroyed.  Under TCG a
 * stalled virtual CPU is enough to lose the race now and then, on any
 * device.
 *
 *   KRWQ_DELAY_CONNECT_MS=N  every rdma_connect() waits N ms first, by
 *                            default CONNECT_DELAY_MS (the client side:
 *                            the harness's cure)
 *   KRWQ_DELAY_LISTEN_MS=N   every rdma_listen() after the first waits N
 *                            ms first (the server side: makes the client
 *                            win the race, to show the failure on demand)
 * A value that is not a number of milliseconds up to MAX_DELAY_MS counts
 * as unset.  librdmacm's own calls (rsockets) go through these too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

/* librdmacm's types, only passed through (no librdmacm-dev needed) */
struct rdma_cm_id;
struct rdma_conn_param;

/*
 * The server's steps from the handshake to its listen are a few system
 * calls; this covers a server that lags behind its client by up to half a
 * second, a stalled virtual CPU included.
 */
#define CONNECT_DELAY_MS 500
#define MAX_DELAY_MS 60000

/* delay_ms_from - the delay environment variable @name names, else @dflt */
static long delay_ms_from(const char *name, long dflt)
{
	const char *value = getenv(name);
	char *end;
	long ms;

	if (!value || !*value)
		return dflt;
	ms = strtol(value, &end, 10);
	if (*end || ms < 0 || ms > MAX_DELAY_MS)
		return dflt;
	return ms;
}

/* sleep_ms - sleep @ms milliseconds, leaving errno as it was */
static void sleep_ms(long ms)
{
	struct timespec left = { .tv_sec = ms / 1000,
				 .tv_nsec = (ms % 1000) * 1000000L };
	int saved = errno;

	if (!ms)
		return;
	while (nanosleep(&left, &left) && errno == EINTR)
		;
	errno = saved;
}

/* next_symbol - librdmacm's own definition of @name, or NULL */
static void *next_symbol(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

typedef int connect_fn(struct rdma_cm_id *id, struct rdma_conn_param *param);
typedef int listen_fn(struct rdma_cm_id *id, int backlog);

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	connect_fn *real = next_symbol("rdma_connect");

	if (!real) {
		errno = ELIBACC;
		return -1;
	}
	sleep_ms(delay_ms_from("KRWQ_DELAY_CONNECT_MS", CONNECT_DELAY_MS));
	return real(id, param);
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	static atomic_int listens;
	listen_fn *real = next_symbol("rdma_listen");

	if (!real) {
		errno = ELIBACC;
		return -1;
	}
	if (atomic_fetch_add(&listens, 1) > 0)
		sleep_ms(delay_ms_from("KRWQ_DELAY_LISTEN_MS", 0));
	return real(id, backlog);
}
