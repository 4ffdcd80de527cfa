/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vt.h - the verbs helpers of krwq_verbs_test: the opened device, memory,
 * queue pairs and their state machine, posting, and bounded waits for
 * completions and asynchronous events (nothing here can hang a check).
 *
 * Every helper that can fail takes the struct run of the current check,
 * records why with fail() and returns false (or NULL).
 */
#ifndef KRWQ_VT_H
#define KRWQ_VT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "tap.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define TIMEOUT_MS	5000	/* for a completion or event that must come */
#define QUIET_MS	250	/* to decide that nothing (more) comes */
#define UD_QKEY		0x11110000u
#define SLOT		64	/* bytes of one small receive buffer */
#define ACC_ALL		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	bool eth;		/* Ethernet link layer: addresses need a GRH */
	unsigned int mtu;	/* active MTU in bytes */
	int abi;		/* the device's uverbs ABI version, or -1 */
};

extern struct env env;

/* Opens device @name (NULL: the first) into env; returns why not, or NULL. */
const char *env_open(const char *name);
void env_close(void);

/* --- memory --- */

struct buf {
	unsigned char *p;
	size_t len;
	struct ibv_mr *mr;
};

bool buf_new(struct run *r, struct buf *b, size_t len, int access);
void buf_free(struct buf *b);
struct ibv_sge sge_at(const struct buf *b, size_t off, uint32_t len);
void fill(void *p, size_t n, uint32_t seed);
/* Index of the first byte of p[0..n) that is not c, or n. */
size_t first_not(const void *p, size_t n, unsigned char c);

/* Mappings of a uverbs device file in this process (rings, with ABI 2). */
int uverbs_mappings(void);

/* --- objects --- */

struct ibv_cq *cq_new(struct run *r, int cqe, struct ibv_comp_channel *ch);
struct ibv_srq *srq_new(struct run *r, uint32_t max_wr, uint32_t max_sge);
bool srq_attr(struct run *r, struct ibv_srq *srq, struct ibv_srq_attr *a);

struct qp_cfg {
	enum ibv_qp_type type;		/* 0: RC */
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	uint32_t send_wr, recv_wr;	/* 0: 64 */
	uint32_t send_sge, recv_sge;	/* 0: 1 */
	uint32_t max_inline;		/* max_inline_data */
};

struct ibv_qp *qp_new(struct run *r, const struct qp_cfg *c);
bool qp_caps(struct run *r, struct ibv_qp *qp, struct ibv_qp_cap *cap);
int qp_state(struct ibv_qp *qp);	/* enum ibv_qp_state, or -1 */
const char *state_str(int s);
bool qp_move(struct run *r, struct ibv_qp *qp, enum ibv_qp_state s);
bool qp_to_init(struct run *r, struct ibv_qp *qp);
bool qp_to_rtr(struct run *r, struct ibv_qp *qp, uint32_t dest_qpn,
	       uint8_t min_rnr_timer);
bool qp_to_rts(struct run *r, struct ibv_qp *qp, uint8_t rnr_retry);
void fill_ah(struct ibv_ah_attr *ah);

/*
 * Two QPs of the device connected to each other: qp[0] sends, qp[1]
 * receives (from its own queue or an SRQ).  Each has its own send and
 * receive CQ and a 64 KiB buffer registered with ACC_ALL.
 */
struct pair {
	struct ibv_qp *qp[2];
	struct ibv_cq *scq[2], *rcq[2];
	struct buf buf[2];
	struct ibv_ah *ah;		/* UD: to the port */
	uint8_t rnr_retry, min_rnr_timer;
};

struct pair_cfg {
	enum ibv_qp_type type;		/* 0: RC */
	uint32_t recv_wr, recv_sge, send_sge;
	uint32_t send_wr;		/* 0: 64 */
	uint32_t max_inline;		/* max_inline_data of both QPs */
	struct ibv_srq *srq;		/* for qp[1] */
	struct ibv_comp_channel *channel;	/* for qp[1]'s receive CQ */
	bool set_rnr;			/* else rnr_retry 2, min_rnr_timer 1 */
	uint8_t rnr_retry, min_rnr_timer;
};

bool pair_new(struct run *r, struct pair *p, const struct pair_cfg *c);
bool pair_connect(struct run *r, struct pair *p);	/* both from RESET */
void pair_free(struct pair *p);

/* --- posting --- */

/* One receive on a QP (srq NULL) or an SRQ; ENOMEM etc. are failures. */
bool recv_post(struct run *r, struct ibv_qp *qp, struct ibv_srq *srq,
	       uint64_t wr_id, struct ibv_sge *sg, int n);
/* One receive of SLOT bytes at slot (wr_id % 1024) of b. */
bool recv_slot(struct run *r, struct ibv_qp *qp, struct ibv_srq *srq,
	       uint64_t wr_id, struct buf *b);
/* Posts @wr on qp[0] of the pair (UD: to qp[1] with UD_QKEY). */
bool pair_post(struct run *r, struct pair *p, struct ibv_send_wr *wr);
/* A signaled send WR from qp[0] of the pair (UD: to qp[1] with UD_QKEY). */
bool pair_send(struct run *r, struct pair *p, uint64_t wr_id,
	       enum ibv_wr_opcode op, struct ibv_sge *sg, int n,
	       uint32_t imm);
/*
 * Sends 8 bytes from qp[0] and checks that both sides complete
 * successfully and that the receive taken is @expect.
 */
bool deliver(struct run *r, struct pair *p, uint64_t expect);

/* A recognisable wr_id that uses all 64 bits. */
uint64_t wr_tag(uint32_t tag, uint32_t i);
/* Link list[0..n) with wr_ids ids[] and one SGE each from sg (or none). */
void link_wrs(struct ibv_recv_wr *list, int n, const uint64_t *ids,
	      struct ibv_sge *sg);
/* Where bad_wr points, in words. */
const char *bad_str(const struct ibv_recv_wr *bad,
		    const struct ibv_recv_wr *list, int n);
/* A post must have returned @want with bad_wr at list[@at]. */
void expect_post_error(struct run *r, int ret, int want,
		       const struct ibv_recv_wr *bad,
		       const struct ibv_recv_wr *list, int n, int at,
		       const char *what);

/*
 * Sends 8 bytes from qp[0] to a receiver that must have no receive left:
 * the send ends in IBV_WC_RNR_RETRY_EXC_ERR and nothing is received.
 * qp[0] is in ERR afterwards.
 */
bool expect_rnr(struct run *r, struct pair *p, const char *what);

/* --- completions --- */

/* Poll until n completions or ms elapsed; returns the number, -1 on error. */
int cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);
bool cq_get(struct run *r, struct ibv_cq *cq, struct ibv_wc *wc,
	    const char *what);
bool cq_quiet(struct run *r, struct ibv_cq *cq, int ms, const char *what);
const char *wc_str(const struct ibv_wc *wc);
/* opcode < 0: any; qp_num 0: any. */
bool wc_is(struct run *r, const struct ibv_wc *wc, uint64_t wr_id,
	   enum ibv_wc_status status, int opcode, uint32_t qp_num,
	   const char *what);
/*
 * Exactly ids[0..n) flushed from qp, in order, then nothing more.  Return:
 * false if flushes are missing, extra or out of order; an opcode other
 * than IBV_WC_RECV fails the check but returns true (the caller goes on).
 */
bool expect_flushed(struct run *r, struct ibv_cq *cq, struct ibv_qp *qp,
		    const uint64_t *ids, int n);

/* --- asynchronous events --- */

/* Matching events (type on obj) seen within ms, stopping at want. */
int async_wait(enum ibv_event_type type, const void *obj, int want, int ms);

double now_ms(void);

#endif /* KRWQ_VT_H */
