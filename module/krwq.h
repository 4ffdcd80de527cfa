/* SPDX-License-Identifier: GPL-2.0 */
/*
 * krwq.h - the objects of a krwq device and how they relate.
 *
 * One ib_device per krwq%d, one port, software virtual addressing (no DMA
 * device: kernel consumers' "DMA addresses" are kernel virtual addresses).
 * Every receive queue and SRQ is a ring of the C++ core (rq.h).
 *
 * Lock order.  This is the one place it is written down; everything else
 * (cxx-core/krwq_core.h, the docs, the core's lock annotations) refers
 * here.  lockdep checks all of it at run time, and clang's thread-safety
 * analysis the ring locks' part at build time (make lint).
 *
 *   qp->s_lock  ->  qp->r_lock  ->  ring p_lock  ->  ring c_lock  ->  cq->lock
 *
 * The ring locks are the two spinlocks of a struct krwq_kring, taken only
 * by the C++ core (krwq_core.h says which function takes which); the core's
 * flush sink runs under them and may take a cq->lock, nothing before it.
 * qp->s_lock serialises a QP's send queue and its state changes; its
 * r_lock serialises the responder side: a delivery into the QP holds it
 * from the state check through the receive completion (a long one lets
 * it go between 16 KiB pieces, below), and a state change takes it too,
 * so a receive in progress is finished before the receive flush and
 * nothing lands after a receive drain.  A send is delivered in
 * the context that posted it (or the RNR retry work) holding the sender's
 * s_lock and the destination's r_lock, never the destination's s_lock, so
 * no two s_locks (and no two r_locks) are ever held together.  What the
 * destination must do under its own s_lock (go to ERR after a responder
 * error) is handed to its err_work.  Asynchronous event handlers, and
 * completion handlers other than the RDMA core's own, run from work items,
 * never under a krwq lock.  The core's completion handlers (a CQ of
 * ib_alloc_cq(), a user CQ) only schedule a poller or queue an event, so
 * they are called in place under cq->lock, or from an IPI on the CPU of
 * the CQ's completion vector (cq.c), in hard interrupt context and under
 * no krwq lock, or from a held event's moder_timer, in hard interrupt
 * context under cq->lock alone (cq->lock is taken with interrupts off
 * everywhere, and the timer's base lock nests inside it).  The locks they
 * take (a work pool's; a user CQ's event queue, its wait queue and, for
 * SIGIO, the fasync, owner, tasklist and sighand locks) are all irq-safe
 * and never held around a call into krwq.
 *
 * A long copy does not keep interrupts off throughout: every 16 KiB the
 * sender drops both locks for a moment and takes them again, in the same
 * order (resp.c, "letting interrupts in").  What the locks would have
 * kept meanwhile is kept by state instead: the sender's sq_running (a
 * RESET of the sender waits for it), the destination's r_busy (its move
 * to ERR leaves the receive flush, or an SRQ QP's LAST_WQE_REACHED, to
 * the delivery, so nothing lands after a receive drain) and r_gen (a
 * RESET of the destination abandons the delivery; an SRQ's WQE then
 * completes flushed, and the RESET, holding no lock, sleeps until r_busy
 * is 0, so that completion comes before it returns).  The destination's
 * send-queue flush waits for such a delivery too (sq_flush_deferred,
 * then send_work), so a drain of a QP on an SRQ, which waits only for a
 * send-queue marker, ends after it; and destroying the QP waits for it
 * (the sender holds a reference).
 *
 * Two sleeping locks sit outside all of these: an SRQ's resize_mutex is
 * taken before its ring locks, and a mapped ring's entry mutex (mmap.c)
 * is taken only under the mm's mmap_lock, around no other krwq lock.
 * dev->uflush_lock is a leaf, taken with no other krwq lock held.
 *
 * The wire (net.c) adds no order.  In softirq, with interrupts off, a
 * request that comes in is delivered holding only the destination's
 * r_lock, as a datagram from the fabric is, and an answer to an RC
 * requester is taken holding its s_lock (r_lock under it, when the
 * answer moves the QP to ERR).  A packet going out is built under the
 * sender's s_lock or the responder's r_lock and sent once every krwq lock
 * is released; a READ's responses are built with none held.
 * dev->tx_q.lock and the sockets' krwq_net_lock (a mutex, process context
 * only) are leaves.
 */
#ifndef KRWQ_H
#define KRWQ_H

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "krwq_core.h"
#include "rq.h"

/* Device limits: reported by query_device and enforced at create time. */
#define KRWQ_MAX_QP		1024
#define KRWQ_MAX_QP_WR		16384
#define KRWQ_MAX_SGE		32
#define KRWQ_MAX_CQ		1024
#define KRWQ_MAX_CQE		65536
#define KRWQ_MAX_SRQ		256
#define KRWQ_MAX_SRQ_WR		65536
#define KRWQ_MAX_SRQ_SGE	32
#define KRWQ_MAX_MR		65536
#define KRWQ_MAX_MR_SIZE	SZ_4G
#define KRWQ_MAX_PD		4096
#define KRWQ_MAX_AH		4096
/* bounds the time one post spends delivering one message */
#define KRWQ_MAX_MSG_SIZE	(16U << 20)
/*
 * Responder resources (max_dest_rd_atomic): READs and atomics a QP takes
 * in flight from its peer; an RC responder on the wire keeps as many
 * atomic results for requesters that ask again.  rxe's figure: the active
 * side of an rdma_cm connection takes the passive side's initiator depth
 * as its responder resources, and perftest and others on rxe ask for
 * rxe's whole 128.
 */
#define KRWQ_MAX_RD_ATOM	128
/*
 * Initiator depth (max_rd_atomic): what a QP may ask of its peer.  rxe's
 * figure, since perftest sets one side's max_rd_atomic to what the other
 * device allows.
 */
#define KRWQ_MAX_INIT_RD_ATOM	128
#define KRWQ_MAX_INLINE		512	/* rxe's: 32 SGEs' worth */
#define KRWQ_MAX_FAST_REG_PAGES	512	/* one fast registration's pages */
/* the device's local DMA lkey: index 0, which no table entry has */
#define KRWQ_LOCAL_DMA_LKEY	0x7f
#define KRWQ_QPN_MIN		16	/* below: reserved (QP0/QP1 and spares) */
#define KRWQ_QPN_MAX		(KRWQ_QPN_MIN + 8 * KRWQ_MAX_QP)
#define KRWQ_UD_GRH_BYTES	40
#define KRWQ_MTU		IB_MTU_4096
#define KRWQ_MTU_BYTES		4096
/*
 * A QP in ERR whose receive ring user space maps (ABI 2) is looked at
 * every KRWQ_UFLUSH_MS, backing off to KRWQ_UFLUSH_MAX_MS while it finds
 * nothing: what user space posted since completes as flushed, as a post
 * through the kernel would at once.  One look flushes at most
 * KRWQ_UFLUSH_BATCH WRs, and a device at most KRWQ_UFLUSH_RATE a second,
 * so a process that keeps scribbling heads costs the kernel a bounded
 * amount of time.
 */
#define KRWQ_UFLUSH_MS		10
#define KRWQ_UFLUSH_MAX_MS	1000
#define KRWQ_UFLUSH_BATCH	256
#define KRWQ_UFLUSH_RATE	65536
/* a netdev-bound device's port: RoCE v1 and v2 GIDs of its netdev's IPs */
#define KRWQ_ROCE_GID_TBL_LEN	128
#define KRWQ_NO_DEST		U32_MAX	/* a fabric id naming no device */

extern struct workqueue_struct *krwq_wq;

/*
 * The uverbs ABI of rdma-core's ipathverbs provider the devices speak
 * (module parameter "abi", main.c):
 *   1: every verb goes through the kernel; no ring is mapped.
 *   2: user space maps its QP receive rings, SRQ rings and CQ rings, and
 *      posts receives and polls completions without a system call.
 */
extern unsigned int krwq_abi;

/*
 * A user create call gets mapped rings when the device speaks ABI 2 and
 * the caller left room for the ring's offset after the core's response
 * (a caller that did not gets kernel rings, as with ABI 1).
 */
static inline bool krwq_wants_mapped_ring(struct ib_udata *udata)
{
	return krwq_abi >= 2 && udata && udata->outlen >= sizeof(u64);
}

/* Per-device counters (stats.c), shown by `rdma statistic`. */
enum krwq_stat {
	KRWQ_STAT_RX_POSTED,		/* receive WRs accepted by a post */
	KRWQ_STAT_RX_TAKEN,		/* receive WQEs taken by a delivery */
	KRWQ_STAT_RX_FULL,		/* posts refused: ring full */
	KRWQ_STAT_RX_FLUSHED,		/* receive WRs flushed, never taken */
	KRWQ_STAT_SRQ_LIMIT,		/* SRQ limit events */
	KRWQ_STAT_RNR_RETRIES,		/* RNR waits of RC senders */
	KRWQ_STAT_ACK_TIMEOUTS,		/* RC sends nobody answered, retried */
	KRWQ_STAT_CQ_OVERFLOWS,		/* completions lost to a full CQ */
	KRWQ_STAT_LOOPBACK_BYTES,	/* payload bytes delivered */
	KRWQ_STAT_UD_DROPPED,		/* datagrams to nobody, or refused */
	KRWQ_STAT_RX_DROPPED,		/* UD/UC messages dropped, WQE kept */
	KRWQ_STAT_LOCAL_MSGS,		/* messages sent through the fabric */
	KRWQ_STAT_WIRE_TX,		/* packets handed to the IP stack */
	KRWQ_STAT_WIRE_TX_DROPPED,	/* packets the IP stack refused */
	KRWQ_STAT_WIRE_RX,		/* packets in, headers and ICRC good */
	KRWQ_STAT_WIRE_RX_DROPPED,	/* packets in, dropped (not ICRC) */
	KRWQ_STAT_WIRE_ICRC_ERRORS,	/* packets in with a bad ICRC */
	KRWQ_STAT_INV_WAITS,		/* invalidations left for later */
	KRWQ_STAT_CQ_HELD,		/* completions whose event moderation held */
	KRWQ_STAT_MAX
};

struct krwq_stats {
	u64 v[KRWQ_STAT_MAX];
};

struct krwq_dev;
struct krwq_net_socks;
struct krwq_run;

enum krwq_mr_kind { KRWQ_MR_DMA, KRWQ_MR_USER, KRWQ_MR_FAST };

struct krwq_mr {
	struct ib_mr ibmr;
	struct krwq_dev *dev;
	enum krwq_mr_kind kind;
	u32 key;		/* what lookups match: ibmr's lkey may run ahead */
	bool valid;		/* KRWQ_MR_FAST: registered, not invalidated */
	int access;
	u64 iova;
	u64 length;
	struct ib_umem *umem;
	struct page **pages;	/* KRWQ_MR_USER: the pinned pages, in order */
	unsigned long offset;	/* of iova within pages[0] (or page_list[0]) */
	/*
	 * KRWQ_MR_FAST: kernel addresses of pages.  map_mr_sg fills
	 * page_list for the next IB_WR_REG_MR, which copies it to reg_pages:
	 * what copies through the registration in force use.
	 */
	u64 *page_list, *reg_pages;
	u32 max_pages, npages;	/* their size, and what map_mr_sg filled */
	u32 reg_npages;		/* what REG_MR copied */
	u8 page_shift;		/* of the registration's page size */
	refcount_t users;	/* 1 for the registration + one per user */
	struct completion released;
	struct rcu_head rcu;
};

/*
 * struct krwq_dev - one krwq RDMA device, of one of two kinds:
 *  - InfiniBand mode (krwq0 ... from num_devices): an IB port whose LID is
 *    index + 1, addressed by LID;
 *  - netdev-bound (rdma link add NAME type krwq netdev DEV, netdev.c): an
 *    Ethernet (RoCE) port following DEV, addressed by the GIDs the RDMA
 *    core derives from DEV's IP addresses.  @ndev is DEV, held by the RDMA
 *    core from registration to unregistration.  Its sends to addresses
 *    no krwq device in its namespace holds go on the wire (net.c), through
 *    @wire, its namespace's UDP sockets, unless the module has wire=0.
 * Every device is on the host's fabric (fabric.c) under @fabric_id.
 */
struct krwq_dev {
	struct ib_device ibdev;
	unsigned int index;
	u16 lid;		/* 0 on a netdev-bound device */
	struct net_device *ndev;	/* NULL in InfiniBand mode */
	u32 fabric_id;
	bool port_was_active;		/* as last told; under RTNL (netdev.c) */
	__be64 node_guid;
	struct xarray qps;	/* qpn -> struct krwq_qp, lookups under RCU */
	struct xarray mrs;	/* key index -> struct krwq_mr, under RCU */
	u32 next_mr_index;
	u32 next_qpn;
	atomic_t n_qp, n_cq, n_srq, n_mr, n_pd, n_ah;
	spinlock_t uflush_lock;		/* the re-flush budget: */
	unsigned long uflush_stamp;	/* jiffies of the last refill */
	u32 uflush_tokens;		/* WRs it may still flush */
	struct krwq_stats __percpu *stats;
	struct krwq_mr local_dma_mr;	/* what KRWQ_LOCAL_DMA_LKEY names */
	struct krwq_net_socks *wire;	/* NULL: reached only by the fabric */
	struct sk_buff_head tx_q;	/* packets tx_work sends (tx.c) */
	struct work_struct tx_work;
};

static inline void krwq_count(struct krwq_dev *dev, enum krwq_stat s, u64 n)
{
	this_cpu_add(dev->stats->v[s], n);
}

struct krwq_ucontext {
	struct ib_ucontext ibuc;
};

struct krwq_pd {
	struct ib_pd ibpd;
};

/**
 * struct krwq_route - where an address vector leads (fabric.c).
 * @dest: the fabric id of the device holding the address, or KRWQ_NO_DEST.
 * @net_type: the header a UD receiver finds in its first 40 bytes.
 * @sgid: the source GID that header carries.
 */
struct krwq_route {
	u32 dest;
	enum rdma_network_type net_type;
	union ib_gid sgid;
};

/* The message a connected responder is in the middle of (struct krwq_wire_rx). */
enum krwq_wire_msg {
	KRWQ_WIRE_MSG_NONE,	/* between messages */
	KRWQ_WIRE_MSG_SEND,	/* a SEND: into wire_rx.t */
	KRWQ_WIRE_MSG_WRITE,	/* an RDMA WRITE: at wire_rx.va through rkey */
	KRWQ_WIRE_MSG_DROP,	/* one being dropped, up to its last packet */
};

/**
 * struct krwq_wire_rx - a UC or RC responder's state for messages that
 * come from the wire packet by packet (resp.c).  Under the QP's r_lock.
 * @epsn: the PSN expected next.
 * @msg: the message in progress (enum krwq_wire_msg).
 * @held: @t is a receive WQE taken (its scatter list in the QP's w_sge)
 *        and not completed: the SEND in progress fills it, or, when a
 *        message was dropped part way, the next SEND reuses it.  A move
 *        to ERR completes it flushed, before the ring's WQEs; a RESET
 *        discards it with the QP's ring, or, an SRQ's, completes it
 *        flushed.
 * @t: that WQE.
 * @off: bytes of the message in progress so far.
 * @va: an RDMA WRITE's next address.
 * @rkey: an RDMA WRITE's R_Key.
 * @len: an RDMA WRITE's DMA length, from its RETH.
 * @msn: RC: the messages done, for the AETH of each answer.
 * @nak_sent: RC: a PSN sequence error NAK went out for @epsn; no other
 *            until a packet with @epsn comes.
 * @atomics: RC: the last KRWQ_MAX_RD_ATOM atomics' results, by PSN, for
 *           a requester that asks again (its answer lost): it gets the
 *           same result, not a second operation.  NULL on other QPs.
 * @atomic_next: the slot of @atomics written next.
 * @inv_wait: RC: a SEND_WITH_INV is placed whole, but its region was
 *            still in a copy; the QP's inv_work (or the requester's
 *            retry of the last packet) finishes it, and packets wait.
 * @inv: that last packet's opcode, SE and AckReq bits, PSN and R_Key.
 *
 * Of RC, @msg is NONE, SEND or WRITE: a message that cannot go on makes
 * the responder NAK it and go to ERR, or wait (RNR) with the state kept.
 */
struct krwq_wire_rx {
	u32 epsn;
	u8 msg;
	bool held;
	struct krwq_taken t;
	u32 off;
	u64 va;
	u32 rkey, len;
	u32 msn;
	bool nak_sent;
	bool inv_wait;
	struct {
		u8 opcode;
		bool se, ack_req;
		u32 psn, rkey;
	} inv;
	struct krwq_wire_atomic *atomics;
	u8 atomic_next;
};

/*
 * One atomic's result an RC responder on the wire keeps, by PSN; each RC
 * QP has KRWQ_MAX_RD_ATOM of them (krwq_wire_rx.atomics), allocated on
 * their own so that other QPs do not pay for them.
 */
struct krwq_wire_atomic {
	u32 psn;
	bool valid;
	u64 orig;
};

static_assert(KRWQ_MAX_RD_ATOM - 1 <= U8_MAX,
	      "krwq_wire_rx.atomic_next indexes every slot of atomics");

/* What an RC requester on the wire waits for (struct krwq_wire_req). */
enum krwq_wire_await {
	KRWQ_WIRE_AWAIT_NONE,	/* nothing: the WQE at sq_tail is not sent */
	KRWQ_WIRE_AWAIT_ANSWER,	/* the answer to it, until sq_timer's timeout */
	KRWQ_WIRE_AWAIT_RNR,	/* its RNR wait, then it goes again */
};

/*
 * The most PSNs an RC requester on the wire has unanswered: WQEs go out
 * behind the WQE at sq_tail while it awaits its answer, up to this many
 * PSNs past its first.
 */
#define KRWQ_WIRE_WINDOW_PSNS	128

/*
 * The most wire packets one call of req.c's krwq_sq_xmit() sends; the
 * QP's send_work sends the rest.  Twice the RC window, so that a run at
 * the window's edge goes out whole from its own caller, and only a
 * message longer than that, or a queue that the other CPU keeps filling,
 * is left to the work item.
 */
#define KRWQ_SQ_XMIT_BUDGET	(2 * KRWQ_WIRE_WINDOW_PSNS)

/**
 * struct krwq_wire_req - an RC requester's state on the wire (wire_req.c
 * builds the packets, comp.c takes the answers), under the QP's s_lock.
 * The WQE at sq_tail (the head) goes out, and while it awaits its answer
 * the WQEs behind it follow (@ahead), within KRWQ_WIRE_WINDOW_PSNS and,
 * for RDMA READs and atomics, the QP's initiator depth (max_rd_atomic);
 * an answer completes every SEND and WRITE it covers, in order (and each
 * REG_MR or LOCAL_INV executed behind one of them, with it), and a
 * READ or atomic completes by its own answer.  A timeout, a PSN sequence
 * error NAK or an RNR NAK sends the head again and the WQEs behind it
 * after it, with the PSNs they had (go-back-N).
 * @first_psn: the first PSN of the head; it is resent from it.
 * @last_psn: the PSN whose answer completes it (a READ's last response).
 * @next_resp: a READ's response PSN expected next.
 * @read_off: a READ's bytes received so far.  A READ's resend after
 *            responses came keeps both (krwq_wire_send_rc()).
 * @read_gap: a response came past @next_resp, and what is left of the READ
 *            was asked for again from @next_resp; not again until that
 *            one comes.
 * @await: enum krwq_wire_await.
 * @timed_out: no answer came in time (or a PSN sequence error NAK did):
 *             the resend counts against retry_cnt.
 * @resume_psn: where a PSN sequence error NAK said the responder's packets
 *              stopped; the resend of a SEND or WRITE starts there, when
 *              @resume is set.
 * @resume: see @resume_psn.
 * @taken_psn: the furthest PSN of the head a PSN sequence error NAK has
 *             named (@first_psn until one has): the responder took every
 *             packet before it.  A NAK past it is progress
 *             (krwq_wire_nak()).
 * @sent: @first_psn to @last_psn are the head's: it went out at least
 *        once, so an ACK of @last_psn (an atomic's acknowledgment of
 *        @first_psn) completes it whatever the requester waits for
 *        (krwq_wire_answer()).
 * @answered: such an ACK (or an atomic's acknowledgment, its result
 *            written) came while a run of the send queue had let s_lock
 *            go, sending the head again: the run completes the WQE
 *            instead of sending it again.
 * @ahead: how many WQEs behind the head went out (or, local ones, were
 *         executed) while it awaited its answer (each one's last PSN in
 *         its wire_last_psn); 0 whenever
 *         the requester awaits anything else.
 * @rd_atomic_ahead: how many of those are RDMA READs or atomics.
 * @acked_past: an ACK of @acked_past_psn came past the head, a READ or
 *              atomic whose own answer had not come: it completes what
 *              it covers once the head is done (krwq_wire_past_head()).
 * @acked_past_psn: see @acked_past.
 * @nak_past: likewise the first NAK or RNR NAK past such a head, of
 *            @nak_past_psn with AETH @nak_past_syndrome: it is taken once
 *            the head is done, by the WQE it names.
 * @nak_past_psn: see @nak_past.
 * @nak_past_syndrome: see @nak_past.
 * @ahead_blocked: the WQE behind those did not check out (or, a local
 *                 one, could not be executed now): none goes ahead until
 *                 the requester goes back (krwq_wire_go_back()) or is
 *                 idle; that WQE then fails, or is executed, in its turn
 *                 as the head.
 */
struct krwq_wire_req {
	u32 first_psn;
	u32 last_psn;
	u32 next_resp;
	u32 read_off;
	bool read_gap;
	u8 await;
	bool timed_out;
	u32 resume_psn;
	bool resume;
	u32 taken_psn;
	bool sent;
	bool answered;
	u32 ahead;
	u32 rd_atomic_ahead;
	bool acked_past;
	u32 acked_past_psn;
	bool nak_past;
	u32 nak_past_psn;
	u8 nak_past_syndrome;
	bool ahead_blocked;
};

/*
 * krwq_wire_go_back - the WQEs sent ahead of the head count as not sent:
 * they go again behind it, once it goes again, and are answered again.
 */
static inline void krwq_wire_go_back(struct krwq_wire_req *req)
{
	req->ahead = 0;
	req->rd_atomic_ahead = 0;
	req->acked_past = false;
	req->nak_past = false;
	req->ahead_blocked = false;
}

/*
 * krwq_wire_req_idle - the requester waits for nothing and has nothing in
 * flight: the WQE at sq_tail (if any) has not been sent.  PSNs stay.
 */
static inline void krwq_wire_req_idle(struct krwq_wire_req *req)
{
	req->await = KRWQ_WIRE_AWAIT_NONE;
	req->timed_out = false;
	req->resume = false;
	req->sent = false;
	req->answered = false;
	krwq_wire_go_back(req);
}

struct krwq_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
	struct krwq_route route;
};

/*
 * struct krwq_cq_uring - a completion ring user space maps (ABI 2), in the
 * layout of rdma-core's ipathverbs provider: the kernel writes entries at
 * @head, user space polls from @tail; both wrap at cqe + 1 slots.
 */
struct krwq_cq_uring {
	u32 head;	/* written by the kernel only (release) */
	u32 tail;	/* written by user space: untrusted (acquire) */
	struct ib_uverbs_wc queue[];
};

struct krwq_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* the ring, head, tail, notify, flags */
	struct ib_wc *ring;	/* kernel ring, slots = cqe + 1; or NULL */
	struct krwq_cq_uring *uring;	/* user-mapped ring (ABI 2); or NULL */
	struct rdma_user_mmap_entry *mmap;	/* uring's */
	bool mapped;		/* uring, not ring; set at create */
	u32 slots;
	u32 head;		/* next to fill (the kernel's own, for both) */
	u32 tail;		/* next to poll (kernel ring only) */
	u8 notify;		/* 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP */
	bool overflowed;
	bool handler_schedules;	/* comp_handler only schedules: called in place */
	bool dying;		/* no more handler calls: the CQ is going away */
	int cpu;		/* its comp_vector's CPU, or -1: any CPU */
	call_single_data_t notify_ipi;	/* the handler called on @cpu */
	atomic_t ipis_queued;	/* notify_ipi queued, its handler not yet run */
	/*
	 * Event moderation (rdma_set_cq_moderation(), the RDMA core's
	 * adaptive moderation): an armed CQ's event waits for moder_count completions
	 * or moder_usec after the first, whichever comes first; held counts
	 * those waiting.  Under @lock.
	 */
	u16 moder_count;
	u16 moder_usec;
	u16 held;
	struct hrtimer moder_timer;	/* ends the wait of a held event */
	struct work_struct notify_work;
	struct work_struct event_work;	/* IB_EVENT_CQ_ERR */
};

struct krwq_srq {
	struct ib_srq ibsrq;
	struct krwq_rq rq;
	struct mutex resize_mutex;	/* serialises resizes of a mapped ring */
	struct rdma_user_mmap_entry *mmap;	/* rq's; under resize_mutex */
	bool mapped;		/* rq is user-mapped (ABI 2); set at create */
	struct work_struct event_work;	/* IB_EVENT_SRQ_LIMIT_REACHED */
};

/* A send work request as the send queue keeps it. */
struct krwq_swqe {
	u64 wr_id;
	enum ib_wr_opcode opcode;
	int send_flags;
	__be32 imm_data;
	u32 num_sge;
	u32 length;		/* total of the SGE lengths */
	u64 remote_addr;	/* RDMA, atomics */
	u32 rkey;		/* RDMA, atomics; the key LOCAL_INV/SEND_WITH_INV name */
	union {
		struct {		/* IB_WR_REG_MR */
			struct krwq_mr *mr;
			u32 key;
			int access;
		} reg;
		struct {		/* IB_WR_ATOMIC_* */
			u64 compare_add;
			u64 swap;
		} atomic;
	};
	u32 remote_qpn;		/* UD */
	u32 remote_qkey;
	struct rdma_ah_attr ah;	/* UD: a copy, so AH lifetime is moot */
	struct krwq_route route;	/* UD: the AH's */
	/* RC on the wire, sent ahead: its last PSN (a local WQE: the one before) */
	u32 wire_last_psn;
	/*
	 * a REG_MR or LOCAL_INV executed ahead, behind a head awaiting its
	 * answer (RC on the wire): it completes with the WQE before it
	 */
	bool local_done;
	/* the SGEs; with IB_SEND_INLINE instead the payload, copied at post */
	struct ib_sge sg_list[];
};

struct krwq_qp {
	struct ib_qp ibqp;
	struct krwq_dev *dev;
	struct krwq_srq *srq;
	struct krwq_rq rq;	/* unused (kwq NULL) with an SRQ */
	struct krwq_sink rq_sink;	/* rq's flushes: krwq_rq_flushed(qp) */
	struct rdma_user_mmap_entry *rq_mmap;	/* rq is user-mapped (ABI 2) */

	spinlock_t s_lock;	/* the send queue, state changes */
	spinlock_t r_lock;	/* the responder side: deliveries, drains */
	enum ib_qp_state state;	/* written under s_lock and r_lock */
	struct krwq_swqe *sq;	/* ring of sq_slots entries of sq_stride */
	/*
	 * sq ring: [sq_tail, sq_head) waits to be executed; [sq_free,
	 * sq_tail) was executed unsignaled and holds its slot until a later
	 * completion or a flush frees it
	 */
	u32 sq_slots, sq_stride, sq_head, sq_tail, sq_free;
	u32 sq_err_head;	/* sq_head when the QP last went to ERR */
	u32 max_send_sge;
	u32 max_inline;		/* max_inline_data */
	bool sq_sig_all;
	u32 wire_psn;		/* the next packet's PSN on the wire */
	struct krwq_wire_req wire_req;
	u8 rnr_tries;		/* RNR NAKs seen by the WQE at sq_tail */
	u8 ack_tries;		/* ACK timeouts seen by the WQE at sq_tail */
	bool sq_waiting;	/* sq_timer will resume the send queue */
	/*
	 * A run of the send queue (req.c) owns the WQE at sq_tail and the
	 * scratch below, also while it has dropped s_lock to let interrupts
	 * in; a RESET waits until it is over.  Under s_lock.
	 */
	bool sq_running;
	unsigned int sq_run_waiters;	/* modify/destroy waiting for its end */
	/*
	 * Set while they wait: no new run starts, and the one under way ends
	 * at its next WQE, so that posters cannot keep a RESET waiting.
	 */
	bool sq_stop;
	bool sq_inv_counted;	/* the WQE at sq_tail counted in inv_waits */
	struct krwq_run *run;	/* that run's state, while sq_running */
	/*
	 * The packets runs built for the wire, in the order built, and
	 * whether a caller is sending them (krwq_sq_xmit()).  Under s_lock.
	 */
	struct sk_buff_head wire_txq;
	bool wire_tx_busy;
	atomic_t comm_est_sent;

	/*
	 * attributes kept for query_qp and used by delivery; those delivery
	 * reads are written under s_lock and r_lock, so a sender reads a
	 * destination's under r_lock (qp_state is only for query_qp)
	 */
	struct ib_qp_attr attr;
	struct krwq_route route;	/* of attr.ah_attr (RC, UC) */
	int attr_mask_seen;

	/* scratch for the send being executed: the run's (sq_running) */
	struct ib_sge r_sge[KRWQ_MAX_SGE];	/* the receive WQE taken */
	struct krwq_mr *r_mrs[KRWQ_MAX_SGE];	/* its regions */
	struct krwq_mr *s_mrs[KRWQ_MAX_SGE];	/* the send's own regions */
	struct ib_sge inline_sge;		/* an inline payload's */
	/*
	 * the completer's (comp.c), under s_lock: the regions a READ
	 * response or an atomic's result is written into, while a run that
	 * let s_lock go holds s_mrs
	 */
	struct krwq_mr *c_mrs[KRWQ_MAX_SGE];
	/*
	 * a receive from the wire's scratch, under r_lock: a UD datagram's
	 * (held throughout), or a UC message's receive WQE (wire_rx.held)
	 */
	struct ib_sge w_sge[KRWQ_MAX_SGE];
	struct krwq_mr *w_mrs[KRWQ_MAX_SGE];
	struct krwq_wire_rx wire_rx;

	refcount_t users;	/* 1 while in the device table + lookups */
	struct completion released;
	struct timer_list sq_timer;
	/* retries, long send queues, wire packets krwq_sq_xmit() left */
	struct work_struct send_work;
	struct work_struct err_work;	/* to ERR on a responder error */
	struct delayed_work inv_work;	/* wire_rx.inv_wait, tried again */
	bool err_pending;		/* err_work is due; under r_lock */
	/*
	 * Deliveries into this QP part done while their sender let
	 * interrupts in (resp.c); a move to ERR leaves the receive flush to
	 * the last of them, and the send queue's flush too (a drain's marker
	 * WR completes there, and must come after what they deliver; on an
	 * SRQ it is all a drain waits for); a RESET bumps r_gen so that they
	 * are abandoned, and waits for them to go (r_busy_waiters).  All
	 * five under r_lock.
	 */
	u32 r_busy;
	u32 r_busy_waiters;
	u32 r_gen;
	bool r_flush_deferred;
	bool sq_flush_deferred;
	unsigned long events;		/* bits of pending ib_event_type */
	struct work_struct event_work;	/* delivers them */
	struct delayed_work uflush_work; /* ERR + mapped ring: flush new posts */
	unsigned int uflush_ms;		/* its current period; under r_lock */
};

static inline struct krwq_dev *to_kdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct krwq_dev, ibdev);
}

static inline struct krwq_pd *to_kpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct krwq_pd, ibpd);
}

static inline struct krwq_ah *to_kah(struct ib_ah *ibah)
{
	return container_of(ibah, struct krwq_ah, ibah);
}

static inline struct krwq_mr *to_kmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct krwq_mr, ibmr);
}

static inline struct krwq_cq *to_kcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct krwq_cq, ibcq);
}

static inline struct krwq_srq *to_ksrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct krwq_srq, ibsrq);
}

static inline struct krwq_qp *to_kqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct krwq_qp, ibqp);
}

static inline struct krwq_cq *krwq_send_cq(struct krwq_qp *qp)
{
	return to_kcq(qp->ibqp.send_cq);
}

static inline struct krwq_cq *krwq_recv_cq(struct krwq_qp *qp)
{
	return to_kcq(qp->ibqp.recv_cq);
}

/**
 * krwq_qp_get() - find a QP by number and take a reference.
 * @dev: the device.
 * @qpn: the QP number.
 *
 * Return: the QP, to be released with krwq_qp_put(), or NULL.
 */
static inline struct krwq_qp *krwq_qp_get(struct krwq_dev *dev, u32 qpn)
{
	struct krwq_qp *qp;

	rcu_read_lock();
	qp = xa_load(&dev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->users))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

/**
 * krwq_qp_put() - release a reference from krwq_qp_get().
 * @qp: the QP.
 */
static inline void krwq_qp_put(struct krwq_qp *qp)
{
	if (refcount_dec_and_test(&qp->users))
		complete(&qp->released);
}

/* mmap.c */
void *krwq_ring_alloc(size_t bytes);
struct rdma_user_mmap_entry *krwq_mmap_insert(struct ib_udata *udata,
					      void *ring, size_t bytes,
					      u64 *offset);
struct rdma_user_mmap_entry *krwq_mmap_offer(struct ib_udata *udata,
					     void *ring, size_t bytes);
void krwq_mmap_remove(struct rdma_user_mmap_entry *entry);
int krwq_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void krwq_mmap_free(struct rdma_user_mmap_entry *entry);

static inline bool krwq_qp_is_ud(struct krwq_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/* What a QP does in a state: the bits of krwq_state_ops(). */
enum krwq_state_op {
	KRWQ_POST_SEND = BIT(0),	/* post_send accepts WRs */
	KRWQ_RUN_SEND = BIT(1),		/* the send queue is executed */
	KRWQ_FLUSH_SEND = BIT(2),	/* send WRs complete as flushed */
	KRWQ_POST_RECV = BIT(3),	/* post_recv accepts WRs */
	KRWQ_RECEIVE = BIT(4),		/* arriving messages are delivered */
	KRWQ_FLUSH_RECV = BIT(5),	/* receive WRs complete as flushed */
};

/**
 * krwq_state_ops() - what a QP does in a state, in one table (rdmavt's
 * ib_rvt_state_ops): post_send and the run of the send queue (req.c),
 * delivery (resp.c), the ERR re-flush and the receive ring's state
 * (qp.c) all ask it.
 * @state: the QP's state.
 *
 * post_recv itself asks the receive ring, whose state qp.c sets from
 * this table (RESET, POST_ONLY or ACTIVE) and the move to ERR to FLUSH,
 * under the ring locks, so that a post racing the move is never lost.
 *
 * Return: enum krwq_state_op bits.
 */
static inline unsigned int krwq_state_ops(enum ib_qp_state state)
{
	static const u8 ops[IB_QPS_ERR + 1] = {
		[IB_QPS_RESET] = 0,
		[IB_QPS_INIT] = KRWQ_POST_RECV,
		[IB_QPS_RTR] = KRWQ_POST_RECV | KRWQ_RECEIVE,
		[IB_QPS_RTS] = KRWQ_POST_SEND | KRWQ_RUN_SEND |
			       KRWQ_POST_RECV | KRWQ_RECEIVE,
		[IB_QPS_SQD] = KRWQ_POST_SEND | KRWQ_POST_RECV | KRWQ_RECEIVE,
		[IB_QPS_SQE] = KRWQ_POST_SEND | KRWQ_POST_RECV | KRWQ_RECEIVE,
		[IB_QPS_ERR] = KRWQ_POST_SEND | KRWQ_FLUSH_SEND |
			       KRWQ_POST_RECV | KRWQ_FLUSH_RECV,
	};

	return ops[state];
}

/* device.c */
int krwq_dev_add(unsigned int index, struct krwq_dev **out);
int krwq_dev_add_netdev(const char *name, struct net_device *ndev);
void krwq_dev_remove(struct krwq_dev *dev);
void krwq_dev_wait_all_released(void);

/* port.c */
bool krwq_port_active(struct krwq_dev *dev);
enum ib_mtu krwq_port_mtu(struct krwq_dev *dev);
u32 krwq_port_mtu_bytes(struct krwq_dev *dev);
u32 krwq_path_mtu_bytes(const struct krwq_qp *qp);
void krwq_port_wc_vlan(struct krwq_dev *dev, struct ib_wc *wc,
		       const union ib_gid *dgid);
void krwq_dev_gid(struct krwq_dev *dev, union ib_gid *gid);

/* fabric.c */
int krwq_fabric_join(struct krwq_dev *dev);
void krwq_fabric_leave(struct krwq_dev *dev);
struct krwq_dev *krwq_fabric_dev_rcu(u32 id);
struct krwq_dev *krwq_fabric_find_netdev(struct net_device *ndev);
struct krwq_dev *krwq_fabric_any(void);
struct krwq_dev *krwq_fabric_by_netdev_rcu(struct net_device *ndev);
void krwq_fabric_route(struct krwq_dev *from, const struct rdma_ah_attr *ah,
		       struct krwq_route *route);

/* netdev.c */
int krwq_netdev_init(void);
void krwq_netdev_exit(void);

/* net.c */
int krwq_net_init(void);
void krwq_net_exit(void);
int krwq_net_attach(struct krwq_dev *dev);
void krwq_net_detach(struct krwq_dev *dev);
bool krwq_wire_reaches(const struct krwq_dev *dev,
		       const struct krwq_route *route);

/* stats.c */
struct rdma_hw_stats *krwq_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int krwq_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);

/* pd.c, ah.c */
int krwq_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int krwq_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
bool krwq_ah_attr_ok(struct krwq_dev *dev, const struct rdma_ah_attr *attr);
int krwq_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		   struct ib_udata *udata);
int krwq_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int krwq_destroy_ah(struct ib_ah *ibah, u32 flags);

/* mr.c */
struct ib_mr *krwq_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *krwq_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
int krwq_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *krwq_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int krwq_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int krwq_mr_fast_reg(struct krwq_mr *mr, struct ib_pd *pd, u32 key, int access);
int krwq_mr_invalidate(struct krwq_dev *dev, struct ib_pd *pd, u32 key);
int krwq_mr_atomic(struct krwq_mr *mr, u64 addr, bool cmp_swap, u64 cmp_add,
		   u64 swap, u64 *orig);
struct krwq_mr *krwq_mr_get(struct krwq_dev *dev, struct ib_pd *pd, u32 key,
			    int access, u64 addr, u64 len);
void krwq_mr_put(struct krwq_mr *mr);

/**
 * struct krwq_sge_cursor - a walk over a scatter list of memory regions.
 * @sge: the current entry.
 * @left: entries after @sge.
 * @mrs: the regions, one per entry, held for the walk.
 * @off: bytes of @sge already used.
 * @held: the whole list's regions (NULL for an empty entry), all held
 *        until the message is done, those behind @sge too.
 * @nheld: entries in @held.
 */
struct krwq_sge_cursor {
	const struct ib_sge *sge;
	u32 left;
	struct krwq_mr **mrs;
	u32 off;
	struct krwq_mr *const *held;
	u32 nheld;
};

bool krwq_cursor_revoked(const struct krwq_sge_cursor *c);
int krwq_copy(struct krwq_sge_cursor *dst, struct krwq_sge_cursor *src,
	      u32 len);
int krwq_write(struct krwq_sge_cursor *dst, const void *buf, u32 len);

/* cq.c */
int krwq_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int krwq_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int krwq_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int krwq_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc);
int krwq_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
bool krwq_cq_enter(struct krwq_cq *cq, const struct ib_wc *wc, bool solicited);
int krwq_pre_destroy_cq(struct ib_cq *ibcq);
int krwq_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period);
void krwq_cq_clean(struct krwq_cq *cq, struct ib_qp *ibqp);

/* srq.c */
int krwq_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int krwq_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int krwq_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int krwq_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int krwq_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
void krwq_srq_limit_event(struct krwq_srq *srq);

/* qp.c */
int krwq_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int krwq_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int krwq_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int krwq_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int krwq_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int krwq_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);

/* req.c */
int krwq_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);

#endif /* KRWQ_H */
