// SPDX-License-Identifier: GPL-2.0
/*
 * udp_floor.c - the floor of RoCEv2 on a path: plain UDP datagrams as
 * long as RoCEv2's packets, between the same two ends, with no RDMA
 * stack.  Whatever a RoCEv2 device does, its packets cross the path's IP
 * and UDP layers and netdevs (here a veth between namespaces) at least
 * this slowly.
 *
 *   udp_floor serve PORT
 *	answers each datagram with the flag ECHO by sending it back, and
 *	each with the flag LAST by a 16-byte acknowledgment of its message
 *	that counts the message datagrams received since the last with the
 *	flag START (a run's first); runs until killed.  Both ends poll their socket without
 *	sleeping, as perftest polls its completion queues.
 *   udp_floor lat ADDR PORT ROUNDS
 *	ROUNDS round trips of one 80-byte datagram (a 64-byte RoCEv2 SEND
 *	Only: 12 bytes of BTH, 64 of payload, 4 of ICRC); prints
 *	"lat_us_64 US": half the median round trip, the one-way figure
 *	perftest's ib_send_lat reports.
 *   udp_floor bw ADDR PORT SIZE MESSAGES
 *	MESSAGES messages of SIZE bytes, each cut into datagrams of 1024
 *	bytes of payload (a path MTU of 1024) with 16 bytes of headers
 *	(BTH and ICRC's room), each message acknowledged by one datagram
 *	at its last, up to WINDOW messages unacknowledged; prints
 *	"bw_mibs_SIZE MIB_PER_S" (payload bytes, MiB = 2^20, as perftest).
 * Exits 1 with a message on stderr when a datagram is lost (no answer
 * within a second, or an acknowledgment that counts fewer datagrams than
 * were sent): the floor is of a path that loses nothing.
 * IPv4 only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
	HDR_BYTES = 16,		/* BTH (12) and ICRC (4) of a RoCEv2 packet */
	MTU_PAYLOAD = 1024,
	LAT_PAYLOAD = 64,
	WINDOW = 128,		/* perftest's default send queue depth */
	/*
	 * the kernel doubles it: a window of 64 KiB messages, 8192
	 * datagrams of about 2.3 KiB each in memory, fits
	 */
	SOCK_BUF = 32 << 20,
	FLAG_ECHO = 1,
	FLAG_LAST = 2,
	FLAG_START = 4,		/* a run's first datagram: the count starts */
};

/*
 * the first bytes of every datagram: which message, what to do, and in
 * an acknowledgment the message datagrams the server has had
 */
struct floor_hdr {
	uint32_t msg;
	uint32_t flags;
	uint32_t count;
};

_Static_assert(sizeof(struct floor_hdr) <= HDR_BYTES, "the header fits the BTH's room");

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int open_socket(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int size = SOCK_BUF;

	if (fd < 0)
		die("socket");
	/* root in the guest: past rmem_max, so that a window never drops */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size)))
		die("setsockopt");
	return fd;
}

/* positive: a count from the command line, else exit 2 */
static long positive(const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || v <= 0) {
		fprintf(stderr, "udp_floor: %s is no positive number\n", arg);
		exit(2);
	}
	return v;
}

static struct sockaddr_in address_of(const char *addr, const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	long p = positive(port);

	if (p > 65535) {
		fprintf(stderr, "udp_floor: %s is no port\n", port);
		exit(2);
	}
	sa.sin_port = htons(p);
	if (addr && inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "udp_floor: %s is no IPv4 address\n", addr);
		exit(1);
	}
	return sa;
}

static _Noreturn void serve(const char *port)
{
	struct sockaddr_in sa = address_of(NULL, port), from;
	unsigned char buf[HDR_BYTES + MTU_PAYLOAD];
	uint32_t received = 0;
	int fd = open_socket();

	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("bind");
	for (;;) {
		socklen_t len = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &len);
		struct floor_hdr h;

		if (n < (ssize_t)sizeof(h))
			continue;
		memcpy(&h, buf, sizeof(h));
		if (h.flags & FLAG_ECHO) {
			sendto(fd, buf, n, 0, (struct sockaddr *)&from, len);
			continue;
		}
		if (h.flags & FLAG_START)
			received = 0;
		received++;
		if (h.flags & FLAG_LAST) {
			h.count = received;
			memcpy(buf, &h, sizeof(h));
			sendto(fd, buf, HDR_BYTES, 0, (struct sockaddr *)&from, len);
		}
	}
}

/*
 * wait_answer: the next datagram's header, polled for without sleeping
 * (as perftest polls its completion queue), within a second, else exit 1
 */
static struct floor_hdr wait_answer(int fd)
{
	unsigned char buf[HDR_BYTES + MTU_PAYLOAD];
	double deadline = now() + 1;
	struct floor_hdr h;
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) < 0) {
		if (errno != EAGAIN)
			die("recv");
		if (now() > deadline) {
			fputs("udp_floor: no answer within a second: a datagram was lost\n",
			      stderr);
			exit(1);
		}
	}
	if (n < (ssize_t)sizeof(h)) {
		fprintf(stderr, "udp_floor: a datagram too short\n");
		exit(1);
	}
	memcpy(&h, buf, sizeof(h));
	return h;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int latency(int fd, long rounds)
{
	unsigned char buf[HDR_BYTES + LAT_PAYLOAD] = { 0 };
	struct floor_hdr h = { .flags = FLAG_ECHO };
	double *rtt = calloc(rounds, sizeof(*rtt));
	long i;

	if (!rtt)
		die("calloc");
	for (i = 0; i < rounds; i++) {
		double t0 = now();

		h.msg = i;
		memcpy(buf, &h, sizeof(h));
		if (send(fd, buf, sizeof(buf), 0) != sizeof(buf))
			die("send");
		if (wait_answer(fd).msg != (uint32_t)i) {
			fprintf(stderr, "udp_floor: an answer out of order\n");
			return 1;
		}
		rtt[i] = now() - t0;
	}
	qsort(rtt, rounds, sizeof(*rtt), compare_doubles);
	printf("lat_us_%d %.2f\n", LAT_PAYLOAD, rtt[rounds / 2] / 2 * 1e6);
	free(rtt);
	return 0;
}

static void send_message(int fd, uint32_t msg, long size)
{
	unsigned char buf[HDR_BYTES + MTU_PAYLOAD] = { 0 };
	struct floor_hdr h = { .msg = msg };
	long left;

	for (left = size; left > 0; left -= MTU_PAYLOAD) {
		long payload = left < MTU_PAYLOAD ? left : MTU_PAYLOAD;
		ssize_t len = HDR_BYTES + payload;

		h.flags = left <= MTU_PAYLOAD ? FLAG_LAST : 0;
		if (msg == 0 && left == size)
			h.flags |= FLAG_START;
		memcpy(buf, &h, sizeof(h));
		if (send(fd, buf, len, 0) != len)
			die("send");
	}
}

static int bandwidth(int fd, long size, long messages)
{
	long per_msg = (size + MTU_PAYLOAD - 1) / MTU_PAYLOAD;
	long sent = 0, acked = 0;
	double t0 = now(), secs;
	struct floor_hdr h;

	while (acked < messages) {
		while (sent < messages && sent - acked < WINDOW)
			send_message(fd, sent++, size);
		/* acknowledgments come in order: the path loses and reorders nothing */
		h = wait_answer(fd);
		if (h.msg != (uint32_t)acked) {
			fprintf(stderr, "udp_floor: an acknowledgment out of order\n");
			return 1;
		}
		acked++;
		if (h.count != (uint32_t)(acked * per_msg)) {
			fprintf(stderr, "udp_floor: a datagram was lost: %u of %ld came\n",
				h.count, acked * per_msg);
			return 1;
		}
	}
	secs = now() - t0;
	printf("bw_mibs_%ld %.2f\n", size, size * (double)messages / secs / (1 << 20));
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	int fd;

	if (argc == 3 && !strcmp(argv[1], "serve"))
		serve(argv[2]);
	if ((argc != 5 || strcmp(argv[1], "lat")) && (argc != 6 || strcmp(argv[1], "bw"))) {
		fprintf(stderr, "usage: udp_floor serve PORT | lat ADDR PORT ROUNDS | "
			"bw ADDR PORT SIZE MESSAGES\n");
		return 2;
	}
	sa = address_of(argv[2], argv[3]);
	fd = open_socket();
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		die("connect");
	if (argc == 5)
		return latency(fd, positive(argv[4]));
	return bandwidth(fd, positive(argv[4]), positive(argv[5]));
}
