/* Private to the collective layer: the job layout, the engine ops table,
 * what a communicator and a shard hold whatever engine they run, and
 * sealing / accepting UP and RESULT packets.
 *
 * The layer is a protocol layer between codec/ + dataplane/ and apps/.
 * What goes on the wire for a job is its engine's (struct coll_engine, in
 * the shape of testpmd's fwd_engine): the dense allreduce (dense.c,
 * dense_worker*.c, dense_agg.c) and Sketched-SGD's two rounds (sketched.c,
 * sketched_worker.c, sketched_agg.c). The common part (comm.c, agg.c,
 * coll_common.c, coll_wire.c) checks jobs, owns the packets' seal and MAC,
 * the shard's transmit queues and serve loop, and calls the engine; it
 * never asks which engine it runs. */
#ifndef GW_COLL_INTERNAL_H
#define GW_COLL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <gw/collective.h>
#include <gw/gpudirect.h>
#include <gw/sketch.h>
#include <gw/wire.h>

#include "coll_fd.h"
#include "gw_util.h"

#define COLL_WINDOW_DEF 64u
#define COLL_DEADLINE_DEF_US 20000u
#define COLL_CHUNK_ALIGN 40u      /* groups of 5 (3lc, terngrad) and 8 */
#define COLL_RX_BURST 32u
#define COLL_RTO_DEF_US 5000u
#define COLL_TIMEOUT_DEF_MS 60000u
/* 200 ms: the RTO must be able to exceed the RTT, and a window of jumbo
 * frames queued on a 100 Mbit/s link is already 46 ms of it (a lower cap
 * re-sent every queued chunk, for ever). */
#define COLL_RTO_MAX_NS 200000000ull
#define COLL_IDLE_WAIT_US 1000u
#define COLL_TX_RETRY_US 50u      /* a shard whose transmit queue is stuck */

/* ---- the job layout --------------------------------------------------- */

/* The dense engine's part of a layout (dense.c). */
/* A tensor of a dense job's layout: elements [start, start + n) of the
 * flat tensor, chunks [first, first + chunks). raw: below min_elems,
 * sent raw both ways in one chunk. */
struct coll_tensor {
	uint64_t start, n;
	uint32_t first, chunks;
	uint8_t raw;
};

struct coll_dense {
	/* [0] uplink, [1] downlink: the codec's frames are sparse. Such a
	 * chunk is encoded as a tensor of its own, so its keys count from
	 * the chunk's first element (wire-format §5.7). */
	uint8_t sparse[2];
	/* gw_dense_job's layout: nt tensors (owned; freed by
	 * coll_layout_fini), or nt = 0 and t NULL: one tensor of dim, no
	 * options (min_elems alone makes a layout of one tensor). */
	struct coll_tensor *t;
	uint32_t nt, min_elems;
	float momentum;           /* down_momentum: 0 off */
	uint64_t fp;              /* the digest's layout: 0 for the default */
};

/* Sketched-SGD's part (sketched.c): what both ends derive from the job.
 * Phase A (UP tensor SK_T_SKETCH): chunk c is slice c % fpr of table row
 * c / fpr, chunk_elems cells. Phase B (UP tensor SK_T_VALUES): chunk c is
 * candidate values [c * chunk_elems, ...). RESULTs: key-set pieces,
 * candidates (tensor SK_T_SKETCH) and the update (SK_T_VALUES), piece i
 * holding entries [i * per, ...). */
struct coll_sketch {
	gw_csk csk;
	uint32_t k, m;              /* update entries, candidates (P k) */
	float momentum;
	uint32_t fpr;               /* phase-A chunks per table row */
	uint32_t chunks[2];         /* phase A, phase B */
	uint32_t per[2];            /* keys per RESULT piece: candidates, update */
	uint32_t pieces[2];
};

struct coll_engine;
struct coll_digest;

/* A job with its defaults filled in, and the derived layout. */
struct coll_layout {
	gw_coll_job job;          /* params, key and engine_params: NULL here */
	const struct coll_engine *eng;
	uint8_t key[GW_KEY_LEN];
	int keyed;
	uint32_t chunks;          /* UP chunks of a call, all phases */
	uint32_t bitmap_len;      /* RESULT contributor bitmap bytes */
	/* What coll_layout_open saw, for the digest every CTRL carries: the
	 * payload it was opened for and a fingerprint of the key (never the
	 * key). Codec parameters are not compared: frames carry their own,
	 * and chunk_elems (which they size) is. */
	uint32_t payload;
	uint64_t key_fp;
	union {                   /* the engine's own */
		struct coll_dense dense;
		struct coll_sketch sk;
	};
};

/* Fills the defaults, checks the job (the engine's part too), copies the
 * key, registers the packet types. 0 or GW_E* with *why. */
int coll_layout_init(struct coll_layout *L, const gw_coll_job *job,
		     const char **why);

/* Frees what a layout owns (a dense job's tensors); L stays valid for
 * nothing else. Accepts a layout whose init failed. */
void coll_layout_fini(struct coll_layout *L);

/* coll_layout_init for a communicator or shard whose packets hold
 * payload_max bytes, checking that a chunk fits them: 0, or GW_E* with
 * the detail (gw_error_detail) set. */
int coll_layout_open(struct coll_layout *L, const gw_coll_job *job, uint32_t payload_max);

/* The common defaults and checks of job (in place): 0 or GW_EINVAL with
 * *why. */
int coll_job_defaults(gw_coll_job *j, const char **why);

/* Registers UP and RESULT with the packet header (coll_wire.c;
 * idempotent): every layout does, and whatever parses collective packets
 * without a job (tests, fuzz harnesses) calls it first. */
int coll_wire_register(void);

/* An encoder for codec with params ("k=v,...") and frames of at most
 * chunk_elems elements. NULL and *why on failure. */
gw_encoder *coll_encoder(int codec, const char *params, uint32_t chunk_elems,
			 const char **why);

/* ---- engines ------------------------------------------------------------ */

struct gw_comm;
struct gw_agg;

/* An UP as a shard's engine gets it: parsed and authenticated, from a
 * worker of the job, its frame's header valid (coll_agg_input). */
struct coll_up {
	gw_pkt_hdr h;
	const uint8_t *frame;
	uint32_t len;
	gw_frame_info fi;
	gw_endpoint peer;         /* where it came from */
	unsigned dp;              /* on which of the shard's dataplanes */
};

/* One protocol engine. Optional ops are NULL and the one caller that dispatches them answers
 * for their absence (GW_EUNSUPPORTED, or nothing to do): the rule of the
 * backends' gw_dp_ops too. */
struct coll_engine {
	const char *name;
	gw_coll_engine id;
	int up_codec, down_codec;   /* the job's codecs when it names none */
	/* Its uplink codec is this engine's own (gw_coll_engine_for). */
	int (*claims)(int up_codec);
	/* What a round gives back: allreduce fills a dense out, or
	 * allreduce_sparse a sparse update (the other is NULL). */
	gw_result_kind result;
	/* Shards a job of W workers needs when each worker's process serves
	 * its own (gw_member's co-located shards). */
	uint32_t (*colocated_shards)(uint32_t workers);
	/* Its defaults and checks of a job whose common part is checked:
	 * fills L's union member and L->chunks. 0 or GW_E* with *why. */
	int (*layout)(struct coll_layout *L, const gw_coll_job *job, const char **why);
	/* Optional: frees what layout allocated in L's union member. */
	void (*layout_fini)(struct coll_layout *L);
	/* Optional: its part of the digest every CTRL carries. */
	void (*digest)(const struct coll_layout *L, struct coll_digest *d);
	/* 0 if one chunk of n elements of job j (defaults filled) fits a
	 * packet of payload_max bytes each way; x: n worst-case values or
	 * NULL. GW_EBUDGET (with *why) if not. */
	int (*chunk_fits)(const gw_coll_job *j, uint32_t n, uint32_t payload_max,
			  const float *x, const char **why);
	/* gw_coll_chunk_elems() of a job with its defaults filled; *why
	 * (may stay NULL) on an error. */
	int (*chunk_elems)(const gw_coll_job *j, uint32_t payload_max, const char **why);

	/* The worker: its state in c->eng, made from the config (the codec
	 * parameters are there, no longer in c->L). */
	int (*comm_init)(struct gw_comm *c, const gw_comm_config *cfg);
	void (*comm_fini)(struct gw_comm *c);
	int (*allreduce)(struct gw_comm *c, const float *grad, float *out,
			 gw_allreduce_info *info);
	int (*allreduce_sparse)(struct gw_comm *c, const float *grad,
				gw_sparse_update *up, gw_allreduce_info *info);
	/* Optional: a round whose tensors are handed over while it runs
	 * (c->pipe, which the engine makes in comm_init when it can run one). */
	int (*allreduce_pipelined)(struct gw_comm *c, uint32_t tag, gw_allreduce_info *info);
	const float *(*residual)(const struct gw_comm *c);
	/* Optional: the worker's tensors live in g's memory from now on
	 * (gw_comm_set_gpu). */
	int (*set_gpu)(struct gw_comm *c, gw_gpu *g);

	/* The shard: state in a->eng; input takes one UP that the common
	 * part accepted (GW_OK, or GW_E* when the shard cannot go on), tick
	 * finishes what is past its deadline in loss-tolerant mode.
	 * Transmissions stay queued until coll_agg_flush(). */
	int (*agg_init)(struct gw_agg *a, const gw_agg_config *cfg);
	void (*agg_fini)(struct gw_agg *a);
	int (*agg_input)(struct gw_agg *a, const struct coll_up *up, uint64_t now);
	int (*agg_tick)(struct gw_agg *a, uint64_t now);
	/* Optional: worker w was found silent or said goodbye. */
	void (*agg_gone)(struct gw_agg *a, uint32_t w, uint64_t now);
};

extern const struct coll_engine coll_dense_engine;      /* dense.c */
extern const struct coll_engine coll_sketched_engine;   /* sketched.c */

/* The engine of id, or NULL. */
const struct coll_engine *coll_engine_of(gw_coll_engine id);
/* The checks of gw_{comm,agg}_set_{liveness,startup}: obj (named obj_name)
 * is given, and ms is 0 or at least 10. GW_OK or GW_EINVAL naming field. */
int coll_live_arg(const void *obj, const char *obj_name, const char *field, uint32_t ms);
/* The engine that claims uplink codec up (the dense engine takes the rest). */
const struct coll_engine *coll_engine_for(int up_codec);
/* GW_ETIMEDOUT with a detail naming the round, what is missing (fmt) and
 * the shard (index and endpoint) that did not answer. */
int coll_timeout(const gw_comm *c, uint32_t shard, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));


/* Reorders p[0..n) so that the packets to each peer are adjacent, in the
 * order each peer first appears and, per peer, in their own order (tmp:
 * room for n). A worker's chunks go to shards in turn and a shard's
 * results to every worker in turn; grouped, each peer's run of
 * equal-size packets is one UDP GSO send (and one GRO receive) instead
 * of one per packet. Datagrams promise no order across peers. */
void coll_group_by_peer(gw_pkt **p, uint32_t n, gw_pkt **tmp);

/* ---- the worker (comm.c) ----------------------------------------------------- */

/* Liveness (comm_live.c). */
struct comm_live {
	uint64_t liveness_ns;          /* 0: off */
	struct coll_fd_cfg fdc;        /* the detector's, from liveness_ns */
	uint64_t startup_ns;           /* a shard never heard: given this long */
	uint64_t first_call_ns;        /* the first call's start (0: none yet) */
	struct coll_fd *fd;            /* per shard: its detector */
	uint64_t begin_ns, next_hb_ns; /* this call's */
	uint64_t sent, received;       /* CTRL packets */
	gw_liveness_stats ls;          /* counters; the histograms below */
	struct coll_hist late, gaps;   /* heartbeats' lateness, peers' gaps */
	int rc;                        /* sticky: GW_EPEER, GW_ECONFIG */
	char why[320], hint[240];
	uint64_t report_ns, next_report_ns;   /* gw_comm_set_report */
	gw_report_fn report;
	void *report_arg;
	uint32_t *shard_round;         /* per shard: its CTRL's round (+1, 0: none) */
	uint32_t incarnation;          /* ours, in every CTRL we send */
	uint32_t *shard_incarnation;   /* per shard: its process's (0: not heard) */
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int ready, running, stop;
};

struct gw_comm {
	gw_dp *dp;                    /* dps[0]: the one dataplane of most jobs */
	gw_dp **dps;                  /* ndp = 1, or one per shard */
	unsigned ndp;
	struct coll_layout L;
	uint16_t rank;
	gw_endpoint *shards;
	uint64_t rto_min_ns;          /* the config's RTO, a floor */
	uint64_t timeout_ns;          /* one call gives up after */
	uint32_t round, seq;
	gw_pkt *rx[COLL_RX_BURST];
	gw_comm_stats st;
	/* This call's bytes (gw_allreduce_info). */
	uint64_t bytes_up, bytes_down, bytes_up_once, bytes_down_once;
	void *eng;                    /* the engine's state */
	char gpu_handoff[256];        /* gw_comm_gpu_handoff, once a GPU is set */
	uint64_t calls;               /* allreduce calls begun */
	pthread_mutex_t call_mu;      /* held by a call: the heartbeat thread
				       * sends only between calls */
	int call_mu_ready;
	struct comm_live live;
	struct coll_pipe *pipe;       /* pipelined rounds (comm_pipe.c), or NULL */
};

/* Pipelined rounds (comm_pipe.c): what the threads that hand tensors
 * over, run the round and wait for results share. A tensor's fields are
 * written before its ready tag is stored (release) and read after it is
 * loaded (acquire); done tags and a failed round's rc are published under
 * mu, with cv broadcast, for the waiters. */
struct coll_pipe_tensor {
	void *data;
	float scale;
	uint8_t dtype;               /* gw_dtype */
	_Atomic uint32_t ready;      /* tag of the round it was handed to */
	_Atomic uint32_t done;       /* tag of the round whose results are in */
};

struct coll_pipe {
	uint32_t nt;
	struct coll_pipe_tensor *t;
	_Atomic uint32_t cancel_tag;
	_Atomic int cancel_rc;
	uint32_t fail_tag;           /* under mu */
	int fail_rc;
	char why[320];               /* the failed round's detail */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

int coll_pipe_create(gw_comm *c, uint32_t nt);
/* c's pipe for round tag, or GW_E* naming what is missing. */
int coll_pipe_of(gw_comm *c, uint32_t tag, struct coll_pipe **out);
void coll_pipe_free(gw_comm *c);
/* The running round's view: ready (acquire), done and failed (publish). */
static inline int coll_pipe_ready(const struct coll_pipe *p, uint32_t t, uint32_t tag)
{
	return atomic_load_explicit(&p->t[t].ready, memory_order_acquire) == tag;
}
static inline int coll_pipe_cancelled(struct coll_pipe *p, uint32_t tag)
{
	return atomic_load_explicit(&p->cancel_tag, memory_order_acquire) == tag
		? atomic_load_explicit(&p->cancel_rc, memory_order_relaxed) : 0;
}
void coll_pipe_done(struct coll_pipe *p, uint32_t t, uint32_t tag);
void coll_pipe_failed(struct coll_pipe *p, uint32_t tag, int rc);

/* Liveness of a communicator (comm_live.c): init starts the heartbeats
 * (COLL_LIVENESS_DEF_MS), set changes the interval (0: off), fini says
 * goodbye. A call begins with begin; its loop calls poll (heartbeats, a
 * silent shard, what CTRL packets said: GW_OK or the call's error) and
 * hands every CTRL packet to input, and every accepted packet of shard s
 * to heard. */
int comm_live_init(gw_comm *c);
int comm_live_set(gw_comm *c, uint32_t ms);
void comm_live_fini(gw_comm *c);
void comm_live_begin(gw_comm *c, uint64_t now);
void comm_live_rebase(gw_comm *c, uint64_t now);
int comm_live_poll(gw_comm *c, uint64_t now, int drained);
void comm_live_input(gw_comm *c, const gw_pkt *pkt, uint64_t now);
void comm_live_heard(gw_comm *c, uint32_t shard, uint64_t now);
int comm_live_join(gw_comm *c, uint32_t timeout_ms, uint32_t *round);
void comm_live_stats(const gw_comm *c, gw_liveness_stats *s);

/* A call's stretch of work without the dataplane (a first touch of out,
 * a sketch of the gradient: seconds, on a loaded host): between offline
 * and online the heartbeat thread may send, as between calls. */
void coll_comm_offline(gw_comm *c);
void coll_comm_online(gw_comm *c);

/* The dataplane that reaches shard s. */
static inline gw_dp *coll_dp_to(const gw_comm *c, uint32_t shard)
{
	return c->dps[c->ndp > 1 ? shard : 0];
}

/* ---- the shard (agg.c) ------------------------------------------------------- */

#define PENDING_MAX 4096u

struct wk {                /* a worker, as the shard last heard from it */
	gw_endpoint ep;
	unsigned dp;
	uint8_t known;
	uint32_t incarnation;      /* its process's, from CTRL (0: none yet) */
	uint32_t replaced;         /* the process's before it, if one was */
};

struct txq {
	gw_pkt *p[PENDING_MAX];
	gw_pkt *tmp[PENDING_MAX];  /* coll_group_by_peer's */
	uint32_t n;
};

/* The shard's liveness (agg_live.c). */
enum { COLL_GONE_SILENT = 1, COLL_GONE_LEFT = 2, COLL_GONE_REPLACED = 3, COLL_GONE_NEVER = 4 };
struct agg_live {
	uint64_t liveness_ns, next_hb_ns, next_judge_ns;
	struct coll_fd_cfg fdc;    /* the detector's, from liveness_ns */
	uint64_t startup_ns;       /* a worker never heard: given this long */
	uint64_t first_ns;         /* the first worker heard (0: none yet) */
	uint8_t *gone;             /* per worker: 0 or COLL_GONE_* */
	uint32_t *silent_ms;       /* per worker: how long, when found silent */
	uint64_t *heard;           /* per worker: its last packet of any kind
				    * (heard_ns counts gradients only) */
	struct coll_fd *fd;        /* per worker: its detector */
	gw_liveness_stats ls;      /* counters; the histograms below */
	struct coll_hist late, gaps;
	uint32_t ngone;
	uint64_t sent, received, evicted, rejoined, problems;
	uint64_t impostors;        /* CTRL claiming a worker from elsewhere */
	uint32_t *joined;          /* per worker: the round + 1 it came back at
				    * (0: never gone); it holds nothing before */
	uint32_t nback;            /* workers back, ever */
	/* Per worker, loss-tolerant: evicted and not yet seen at a position
	 * the shard still holds (an accepted UP). Its results of the rounds
	 * it missed are gone (its acks were taken for granted), so it is not
	 * waited for; a stale UP of it means it is stuck in such a round,
	 * and it is told (agg_live_tell_behind). */
	uint8_t *behind;
	uint32_t nbehind;
	uint32_t incarnation;      /* this shard process's, in its CTRL */
	uint32_t round;            /* the highest round of an accepted UP + 1
				    * (0: none yet): what a joining worker
				    * is told, in every CTRL's round field */
	int rc;                    /* GW_ECONFIG: serving stops at rc_at */
	uint64_t rc_at;
	char why[320];
	char problem[320];         /* the latest note (gw_agg_problem) */
	/* Why the shard closes, in its BYE ("" : "the shard closed"); set by
	 * the process hosting it, read once its thread was joined. */
	char bye[88];               /* COLL_CTRL_TEXT, defined below */
	pthread_mutex_t mu;        /* problem, read from another thread */
	int ready;
	uint64_t report_ns, next_report_ns;   /* gw_agg_set_report */
	gw_report_fn report;
	void *report_arg;
};

struct gw_agg {
	gw_dp **dps;
	unsigned ndp;
	struct coll_layout L;
	uint16_t shard;
	uint32_t res_room;         /* RESULT packet bytes: the smallest payload */
	struct wk *wk;
	struct txq *txq;           /* one per dataplane */
	uint32_t seq;
	uint64_t scan_ns;
	gw_agg_stats st;
	gw_pkt *rx[COLL_RX_BURST];
	void *eng;                 /* the engine's state */
	/* When each worker's last packet was accepted (gw_now_ns, 0: never).
	 * Atomic: the process hosting a co-located shard reads it from its
	 * worker's thread to name a peer that went silent. */
	_Atomic uint64_t *heard_ns;
	struct agg_live live;
};

/* Liveness of a shard (agg_live.c): input takes a CTRL packet, tick
 * heartbeats and finds silent workers (GW_ECONFIG once a worker showed
 * other settings), seen marks a worker heard (back, if it was gone), bye
 * tells every worker the shard leaves, tell_dead tells worker `to` that w
 * is gone. */
int agg_live_init(gw_agg *a);
void agg_live_set(gw_agg *a, uint32_t ms);
void agg_live_fini(gw_agg *a);
/* How long the serve loop may sleep before the next heartbeat is due. */
uint64_t agg_live_wait_ns(const gw_agg *a, uint64_t now);
void agg_live_input(gw_agg *a, unsigned di, const gw_pkt *pkt, uint64_t now);
int agg_live_tick(gw_agg *a, uint64_t now, int drained);
void agg_live_seen(gw_agg *a, uint32_t w, uint64_t now);
void agg_live_bye(gw_agg *a, const char *why);
/* What the shard's BYE will say when it is freed: a co-located shard
 * closing because its process's call failed passes that failure on, so
 * a worker that hears the BYE first still learns the first cause. */
void agg_live_bye_reason(gw_agg *a, const char *why);   /* NULL: none */
void agg_live_tell_dead(gw_agg *a, uint32_t to, uint32_t w);
/* Worker w's UP was accepted: it is at a position the shard holds, and
 * waited for again. */
void agg_live_caught_up(gw_agg *a, uint32_t w);
/* Worker w, evicted, sent an UP of a position the shard no longer holds:
 * it is told that it was left behind (a DEAD naming itself). */
void agg_live_tell_behind(gw_agg *a, uint32_t w);
void agg_live_stats(const gw_agg *a, gw_liveness_stats *s);
void agg_live_send(gw_agg *a, uint32_t w, uint8_t kind, uint32_t subject,
		   uint32_t silent_ms, const char *text);
void agg_live_reply(gw_agg *a, unsigned di, const gw_endpoint *to, uint8_t kind,
		    const char *text);
/* A packet to an address on dataplane di (not a worker's known one). */
void coll_agg_send_to(gw_agg *a, unsigned di, const gw_endpoint *to, const uint8_t *pkt,
		      uint32_t len);


/* Worker w's heard_ns: safe from any thread while the shard serves. */
uint64_t coll_agg_heard(const gw_agg *a, uint32_t w);

/* The shard's receive path, one packet at a time: gw_agg_serve() feeds it
 * from the dataplanes, the fuzz harnesses (tests/fuzz/fuzz_agg_rx.c) from
 * their input, so both exercise the same code. It accepts the packet
 * (parse, job, type, MAC), checks the rank and the frame's header, and
 * hands the UP to the engine. */
int coll_agg_input(gw_agg *a, unsigned di, const gw_pkt *pkt, uint64_t now);
/* Loss-tolerant mode: the engine finishes what is past its deadline at
 * now (a no-op in reliable mode); the caller flushes. */
int coll_agg_tick(gw_agg *a, uint64_t now);

/* A copy of pkt[0..len) to worker w at its last known address, and the
 * flush of every queue. */
void coll_agg_send(gw_agg *a, uint32_t w, const uint8_t *pkt, uint32_t len);
uint32_t coll_agg_flush(gw_agg *a);   /* packets sent */
/* Packets waiting in the transmit queue of dataplane d. */
uint32_t coll_agg_queued(const gw_agg *a, unsigned d);

/* What a received packet is (coll_accept, coll_ctrl_read). */
enum coll_verdict {
	COLL_OK = 0, COLL_BAD, COLL_CORRUPT, COLL_FOREIGN, COLL_UNAUTH, COLL_FORGED,
};

/* ---- control packets (coll_ctrl.c) ------------------------------------------ *
 * CTRL (wire-format §5.9): liveness and the job's settings, either way.
 * Every one carries the sender's digest of the job, so two processes told
 * different things find out at the first packet and say which. */

#define COLL_CTRL_LEN 160u
#define COLL_CTRL_TEXT 88u
_Static_assert(sizeof(((struct agg_live *)0)->bye) == COLL_CTRL_TEXT,
	       "agg_live.bye holds one CTRL text");
/* PROBE: "are you there?", asked of a suspected peer, answered at once
 * with a HEARTBEAT. */
enum { COLL_CTRL_HEARTBEAT = 1, COLL_CTRL_BYE, COLL_CTRL_DEAD, COLL_CTRL_MISMATCH,
       COLL_CTRL_PROBE, COLL_CTRL_KIND_MAX = COLL_CTRL_PROBE };
enum { COLL_ROLE_WORKER = 0, COLL_ROLE_SHARD = 1 };
#define COLL_LIVENESS_DEF_MS 1000u
#define COLL_STARTUP_DEF_MS 30000u
/* COLL_LIVENESS_DEF_MS, or GW_LIVENESS_MS from the environment. */
uint32_t coll_liveness_default(void);
/* COLL_STARTUP_DEF_MS, or GW_STARTUP_MS from the environment. */
uint32_t coll_startup_default(void);
/* A random nonzero number a process picks for each communicator or shard
 * it makes: a peer that hears another one from the same rank or shard
 * knows a new process has taken its place (CTRL's incarnation). */
uint32_t coll_incarnation(void);

/* What every process of a job must agree on. */
struct coll_digest {
	uint64_t dim, key_fp;
	uint32_t workers, shards, chunk_elems, payload, window;
	uint32_t tensors, layout;  /* the dense layout: tensors (0: one) and
				    * a hash of it (coll_dense.fp) */
	uint8_t engine, up, down, mode, keyed;
};

struct coll_ctrl {
	uint8_t kind, role;
	uint16_t from;             /* the sender's rank or shard */
	uint32_t round;            /* the sender's round */
	uint32_t subject;          /* DEAD: the silent worker */
	uint32_t silent_ms;        /* DEAD: how long */
	uint32_t incarnation;      /* the sending process's (0: none said) */
	struct coll_digest d;
	char text[COLL_CTRL_TEXT]; /* BYE, MISMATCH: why (NUL-terminated) */
};

void coll_digest_of(const struct coll_layout *L, struct coll_digest *d);
/* 0 when they agree; else 1 and why: the first setting that differs,
 * "payload: 8972 there, 1472 here". */
int coll_digest_diff(const struct coll_digest *here, const struct coll_digest *there,
		     char *why, size_t n);
/* A CTRL packet at p (room for COLL_CTRL_LEN + header + MAC), sealed
 * with the job's key; returns its length. m's digest is L's. */
uint32_t coll_ctrl_write(const struct coll_layout *L, uint8_t *p, struct coll_ctrl *m);
/* Parses a received CTRL: COLL_OK and *m, or a rejection. A packet that
 * parses but fails the MAC (COLL_UNAUTH, COLL_FORGED) still fills *m:
 * its digest may only explain, never decide. */
enum coll_verdict coll_ctrl_read(const struct coll_layout *L, const gw_pkt *pkt,
				 struct coll_ctrl *m);
/* The packet's type, from its header alone (0 if too short). */
static inline uint8_t coll_pkt_type(const gw_pkt *p)
{
	return p->len > GW_PKT_OFF_TYPE ? p->data[GW_PKT_OFF_TYPE] : 0;
}

/* ---- packets (coll_common.c) --------------------------------------------- */

/* Bytes a packet of this job spends besides its frame: header, bitmap
 * (RESULT), MAC. */
static inline uint32_t coll_overhead(const struct coll_layout *L, int result)
{
	return GW_PKT_HDR_LEN + (result ? L->bitmap_len : 0) +
	       (L->keyed ? GW_PKT_MAC_LEN : 0);
}

/* A job key from len characters of text: exactly 64 hex digits, else
 * GW_EINVAL (no detail: the caller names where the text came from). */
int coll_key_parse(const char *s, size_t len, uint8_t key[GW_KEY_LEN]);

/* Writes header h at p for a body (bitmap + frame) of body_len bytes
 * already at p + GW_PKT_HDR_LEN, and the MAC after it when keyed. Sets the
 * FRAME and MAC flags. Returns the packet length. */
uint32_t coll_seal(const struct coll_layout *L, uint8_t *p, gw_pkt_hdr *h,
		   uint32_t body_len);

/* Parses and authenticates a received packet of type want: on COLL_OK
 * fills *h and the body (bitmap + frame, MAC excluded). */
enum coll_verdict coll_accept(const struct coll_layout *L, const gw_pkt *pkt,
			      uint8_t want, gw_pkt_hdr *h, const uint8_t **body,
			      uint32_t *body_len);

/* Adds one to the counter of a rejection verdict (worker and shard
 * count the same five). */
static inline void coll_count(enum coll_verdict v, uint64_t *bad, uint64_t *corrupt,
			      uint64_t *foreign, uint64_t *unauth, uint64_t *forged)
{
	uint64_t *c[] = {NULL, bad, corrupt, foreign, unauth, forged};
	if (v > COLL_OK && v <= COLL_FORGED)
		(*c[v])++;
}

/* coll_accept() of an UP at a shard, or of a RESULT at a worker, with the
 * rejection counted: 1 if the packet is to be taken. */
static inline int coll_agg_accept(gw_agg *a, const gw_pkt *pkt, gw_pkt_hdr *h,
				  const uint8_t **body, uint32_t *len)
{
	enum coll_verdict v = coll_accept(&a->L, pkt, GW_PKT_UP, h, body, len);
	coll_count(v, &a->st.bad, &a->st.corrupt, &a->st.foreign,
		   &a->st.unauthenticated, &a->st.forged);
	return v == COLL_OK;
}

static inline int coll_comm_accept(gw_comm *c, const gw_pkt *pkt, gw_pkt_hdr *h,
				   const uint8_t **body, uint32_t *len)
{
	enum coll_verdict v = coll_accept(&c->L, pkt, GW_PKT_RESULT, h, body, len);
	coll_count(v, &c->st.bad, &c->st.corrupt, &c->st.foreign,
		   &c->st.unauthenticated, &c->st.forged);
	return v == COLL_OK;
}

/* A worker's frame that did not decode: nothing was added, and its
 * re-send tries again. */
static inline void coll_agg_decode_failed(gw_agg *a, int rc)
{
	if (rc == GW_ECHECKSUM)
		a->st.corrupt++;
	else
		a->st.bad++;
}

/* Contributors in a RESULT's bitmap (bitmap_len bytes), or -1 when a bit
 * of a rank that does not exist is set. */
static inline int coll_contributors(const struct coll_layout *L, const uint8_t *bm)
{
	uint32_t n = 0, tail = L->job.workers % 8;
	for (uint32_t i = 0; i < L->bitmap_len; i++)
		n += (uint32_t)__builtin_popcount(bm[i]);
	if (tail && (bm[L->bitmap_len - 1] >> tail))
		return -1;
	return (int)n;
}

#endif /* GW_COLL_INTERNAL_H */
