/* Fuzzes the worker's receive path inside gw_allreduce() and
 * gw_allreduce_sketched() (collective/worker.c, sketched_worker.c): one
 * worker (W = 1, one shard, so it alone completes every sum) and an
 * in-process shard, joined in one thread by two fake dataplanes
 * (coll_fake.c). The worker's tx_burst hands each UP straight to
 * coll_agg_input(); the shard's tx_burst queues each packet for the
 * worker's rx_burst, after reading one record of the input, which may
 * inject hostile packets before it or lose it.
 *
 * Input (fuzz_coll.h): a job configuration, then records, one per packet
 * the shard sends (op modulo FW_NOPS; the bytes past the end read as 0):
 *
 *   FW_PASS
 *   FW_MUTATE off:u16 xor:u8 mode:u8 field:u8 val:u32
 *       a copy of the genuine packet: header field `field % 10` (none,
 *       round, chunk, rank, tensor, sack_len, flags, type, job, body cut
 *       to val bytes) set to val, body[off] ^= xor, sealed as mode & 3
 *       says (FS_*: the job's key, another key, no MAC; FS_RAW: the
 *       genuine bytes with byte off ^= xor, nothing re-sealed)
 *   FW_RAW len:u16 bytes[len]
 *   FW_DUP     the genuine packet twice
 *   FW_DROP    the genuine packet lost (at most FW_DROPS_MAX a round)
 *   FW_REPLAY idx:u8   a copy of genuine packet idx (of every round so far)
 *   FW_CRAFT type:u8 flags:u8 sack:u8 rank:u16 job:u8 round:i8 tensor:u8
 *       chunk:u32 mode:u8 len:u16 body[len]
 *       a RESULT (type 0) of those fields around body (sack 0: the job's
 *       bitmap length; job 0: the job's; round relative to the worker's),
 *       sealed as mode & 3 says
 *   FW_HOLD t:u8  the genuine packet delivered (t + 1) x 100 us later
 *       (at most FW_HOLDS_MAX a round), behind what came meanwhile
 *   FW_STALL n:u8  the next n % 128 tx_bursts (with packets) of the worker
 *       (bit 7: of the shard) take nothing, as a full device queue
 *
 * Time is the harness's (fuzz_coll.h): each look at the clock takes 1 us,
 * each wait of the worker what it asks for, so timers and the 10 s call
 * timeout behave the same on every replay and cost no real time.
 *
 * Injected packets come before the genuine one. One that is byte for byte
 * a packet the shard sent is counted as that genuine packet; any other is
 * hostile. The harness counts what the worker's rx_burst hands up: genuine
 * packets of the current round, genuine ones of an earlier round, hostile.
 *
 * With FC_WK_DEVICE the worker's tensors are device tensors of the "emu"
 * executor: the CUDA kernels' code (emulated) encodes the chunks and
 * decodes every RESULT the worker accepts, under the same checks.
 * FC_WK_LAYOUT gives a dense job a layout (gw_dense_job: three tensors,
 * each its own context, the middle one raw), FC_WK_MOMENTUM the shard's
 * momentum; the oracle models both. FC_WK_PIPELINED (with a layout, host
 * tensors) runs gw_allreduce_pipelined instead, each tensor in memory of
 * its own, handed over before the call, its results read from there.
 * An hq job (uplink FC_HQ) comes down as the shard's integer sums: the
 * worker quantises each chunk on the scale the last result named, and the
 * oracle models that too; it has no device kernels, so stays on the host.
 *
 * Checks, aborting on a violation:
 *  - every call returns GW_OK or a GW_E* code; coll_agg_input() GW_OK or
 *    GW_ENOMEM; every packet either side sends parses (the shard's are
 *    RESULTs it would accept itself, to the worker's address, or in a
 *    reliable hq job a CTRL MISMATCH: a frame on another scale refused,
 *    which fails the call and comes only after a packet sealed with the
 *    job's key was handed up);
 *  - a dense call that returns GW_OK counted every packet it received once
 *    (results + duplicates + stale + foreign + bad + corrupt +
 *    unauthenticated + forged = packets handed up) and left nothing queued
 *    to send; every packet the dataplanes lent came back at the end;
 *  - a round of a keyed job in which no hostile packet sealed with the
 *    job's key is handed up (nothing else can pass the MAC), after rounds
 *    that succeeded without one either: the call returns
 *    GW_OK; foreign + bad + corrupt + unauthenticated + forged = hostile
 *    packets, stale = genuine packets of earlier rounds; dense: results =
 *    chunks, results + duplicates = genuine packets of this round, and out
 *    is the oracle's result bit for bit (tests/oracle/: the whole job in
 *    one process, fed the same gradients since the first call);
 *    Sketched-SGD: the update is k ascending keys below dim, applied, one
 *    contributor, and it is the oracle's update bit for bit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "sketched.h"
#include "dp_internal.h"
#include "fuzz_coll.h"
#include "fuzz_common.h"
#include "oracle.h"

#define JOB_ID 0x776b72u
/* Virtual time (fuzz_coll.h): long enough for the worst the records can
 * do (two losses at the largest RTO, four held packets), and a run that
 * does time out takes at most this many 1-ms waits. */
#define TIMEOUT_MS 10000u
#define RTO_US 1000u
/* rx tags: a genuine packet's is tag_of(its round); hostile ones are
 * HOSTILE, or SEALED when they carry the job's MAC (they may be taken: the
 * exact checks are off for a round that hands one up). */
#define HOSTILE (-1)
#define SEALED (-2)
#define MISMATCH (-3)   /* the shard's CTRL MISMATCH (hq) */

/* The rx tag of a genuine packet of round: rounds of one run differ in
 * their low bits, and a tag is never negative. */
static int tag_of(uint32_t round)
{
	return (int)(round & 0x3fffffffu);
}

/* The uplink by the index of fuzz_coll.h (FC_SKETCHED: a Sketched-SGD
 * job, as FC_WK_SKETCHED makes; FC_HQ: hq both ways); the downlink one
 * of the first four. */
static const int codecs[FC_NCODECS] = {GW_CODEC_RAW, GW_CODEC_INT8, GW_CODEC_3LC,
				       GW_CODEC_TOPK, GW_CODEC_COUNTSKETCH, GW_CODEC_HQ};

static const uint8_t job_key[GW_KEY_LEN] = "gradwire fuzz_worker_rx job key";

struct genuine {
	uint8_t *data;
	uint32_t len;
	int tag;                   /* tag_of(its round) */
};

struct held {
	uint8_t *data;
	uint32_t len;
	int tag;
	uint64_t due;              /* virtual ns */
};

struct run {
	gw_dp *wdp, *adp;          /* the worker's, the shard's */
	gw_comm *c;
	gw_gpu *gpu;               /* FC_WK_DEVICE: the emulated executor */
	gw_agg *a;
	const struct coll_layout *L;
	gw_endpoint wep, aep;
	struct fc_in in;
	uint8_t seed;
	uint32_t round;            /* the worker's round */
	int pipelined;             /* FC_WK_PIPELINED taken */
	uint32_t ptag;             /* its last round's tag */
	unsigned drops, holds;     /* this round */
	struct held hold[2 * FW_HOLDS_MAX];   /* a round's may wait into the next */
	unsigned nhold;
	int right_key;             /* a SEALED packet was handed up this round */
	int tainted;               /* an earlier round failed, had one, or
				    * (loss-tolerant) left a phase or chunk
				    * short: shard, worker and oracle may
				    * disagree now */
	uint64_t cur, old, hostile;   /* handed up this round */
	uint64_t mismatches;       /* MISMATCHes the shard sent */
	int refused;               /* one was handed up */
	struct genuine *gen;       /* every distinct packet the shard sent */
	uint32_t ngen, capgen;
	uint8_t *buf;              /* a packet being built */
	struct oracle_dense *od;   /* the job in one process, one of them */
	struct oracle_sketched *os;
};

static void check_rc(int rc, const char *what)
{
	GW_FUZZ_CHECKF(rc == GW_OK || rc == GW_ENOMEM, "%s returned %s", what,
		       gw_error_name(rc));
}

/* The tag of the genuine packet data[0..len) is, or HOSTILE. */
static int classify(const struct run *r, const uint8_t *data, uint32_t len)
{
	for (uint32_t i = 0; i < r->ngen; i++)
		if (r->gen[i].len == len && !memcmp(r->gen[i].data, data, len))
			return r->gen[i].tag;
	return HOSTILE;
}

static void remember(struct run *r, const gw_pkt *p, int tag)
{
	if (classify(r, p->data, p->len) != HOSTILE)
		return;
	if (r->ngen == r->capgen) {
		r->capgen = r->capgen ? 2 * r->capgen : 64;
		r->gen = realloc(r->gen, r->capgen * sizeof(*r->gen));
		GW_FUZZ_CHECK(r->gen);
	}
	uint8_t *d = malloc(p->len);
	GW_FUZZ_CHECK(d);
	memcpy(d, p->data, p->len);
	r->gen[r->ngen++] = (struct genuine){.data = d, .len = p->len, .tag = tag};
}

/* Queues data[0..len) for the worker, tagged with what it is. */
static void inject(struct run *r, const uint8_t *data, uint32_t len, int sealed_right)
{
	int tag = classify(r, data, len);
	if (tag == HOSTILE && sealed_right)
		tag = SEALED;
	fc_dp_push(r->wdp, data, len, &r->aep, tag);
}

/* ---- records ----------------------------------------------------------- */

static void rec_mutate(struct run *r, const gw_pkt *g)
{
	const struct coll_layout *L = r->L;
	uint16_t off = fc_u16(&r->in);
	uint8_t x = fc_u8(&r->in);
	uint8_t mode = fc_u8(&r->in);
	uint8_t field = fc_u8(&r->in) % 10;
	uint32_t val = fc_u32(&r->in);
	if ((mode & FM_SEAL) == FS_RAW) {
		memcpy(r->buf, g->data, g->len);
		r->buf[off % g->len] ^= x;
		inject(r, r->buf, g->len, 0);
		return;
	}
	gw_pkt_hdr h;
	GW_FUZZ_CHECK(gw_pkt_parse(g->data, g->len, &h) == 0);
	uint32_t blen = g->len - GW_PKT_HDR_LEN - (L->keyed ? GW_PKT_MAC_LEN : 0);
	memcpy(r->buf + GW_PKT_HDR_LEN, g->data + GW_PKT_HDR_LEN, blen);
	h.flags &= (uint8_t)~(GW_PKT_F_FRAME | GW_PKT_F_MAC);
	switch (field) {
	case 1: h.round = val; break;
	case 2: h.chunk = val; break;
	case 3: h.rank = (uint16_t)val; break;
	case 4: h.tensor = val; break;
	case 5: h.sack_len = (uint8_t)val; break;
	case 6: h.flags = (uint8_t)val; break;
	case 7: h.type = (uint8_t)val; break;
	case 8: h.job = val; break;
	case 9: blen = val % (blen + 1); break;
	default: break;
	}
	if (blen)
		r->buf[GW_PKT_HDR_LEN + off % blen] ^= x;
	uint32_t len = fc_seal(L, mode, r->buf, &h, blen);
	inject(r, r->buf, len, (mode & FM_SEAL) == FS_RIGHT);
}

static void rec_raw(struct run *r)
{
	uint32_t len = fc_u16(&r->in) % (FC_PAYLOAD_MAX + 1);
	fc_bytes(&r->in, r->buf, len);
	inject(r, r->buf, len, 0);
}

static void rec_craft(struct run *r)
{
	const struct coll_layout *L = r->L;
	gw_pkt_hdr h = {0};
	uint8_t type = fc_u8(&r->in);
	h.type = type ? type : GW_PKT_RESULT;
	h.flags = fc_u8(&r->in);
	uint8_t sack = fc_u8(&r->in);
	h.sack_len = sack ? sack : (uint8_t)L->bitmap_len;
	h.rank = fc_u16(&r->in);
	uint8_t job = fc_u8(&r->in);
	h.job = job ? job : L->job.job;
	h.round = r->round + (uint32_t)(int32_t)(int8_t)fc_u8(&r->in);
	h.tensor = fc_u8(&r->in);
	h.chunk = fc_u32(&r->in);
	uint8_t mode = fc_u8(&r->in);
	uint32_t len = fc_u16(&r->in) % (FC_PAYLOAD_MAX - GW_PKT_HDR_LEN - GW_PKT_MAC_LEN + 1);
	fc_bytes(&r->in, r->buf + GW_PKT_HDR_LEN, len);
	uint32_t n = fc_seal(L, mode, r->buf, &h, len);
	inject(r, r->buf, n, (mode & FM_SEAL) == FS_RIGHT);
}

/* A genuine packet from the shard: checked, remembered, and passed on
 * after what the next record injects. */
static void shard_tx(gw_dp *dp, gw_pkt *p)
{
	struct run *r = fc_dp_arg(dp);
	gw_pkt_hdr h;
	const uint8_t *body;
	uint32_t blen;
	if (coll_pkt_type(p) == GW_PKT_CTRL) {
		/* A reliable hq shard refusing a frame on another scale: it
		 * happens only after the worker took a forged result, and it
		 * ends the worker's call (check_dense). */
		struct coll_ctrl m;
		GW_FUZZ_CHECKF(coll_ctrl_read(r->L, p, &m) == COLL_OK &&
			       m.kind == COLL_CTRL_MISMATCH && r->L->job.up_codec == GW_CODEC_HQ &&
			       r->L->job.mode == GW_COLL_RELIABLE,
			       "the shard sent a CTRL of kind %u", m.kind);
		GW_FUZZ_CHECK(!memcmp(&p->peer, &r->wep, sizeof(r->wep)));
		r->mismatches++;
		fc_dp_push(r->wdp, p->data, p->len, &r->aep, MISMATCH);
		return;
	}
	enum coll_verdict v = coll_accept(r->L, p, GW_PKT_RESULT, &h, &body, &blen);
	GW_FUZZ_CHECKF(v == COLL_OK, "the shard sent a packet it would reject: %d", (int)v);
	GW_FUZZ_CHECK(!memcmp(&p->peer, &r->wep, sizeof(r->wep)));
	remember(r, p, tag_of(h.round));
	int copies = 1;
	uint8_t op = r->in.n ? fc_u8(&r->in) % FW_NOPS : FW_PASS;
	switch (op) {
	case FW_MUTATE:
		rec_mutate(r, p);
		break;
	case FW_RAW:
		rec_raw(r);
		break;
	case FW_DUP:
		copies = 2;
		break;
	case FW_DROP:
		if (r->drops < FW_DROPS_MAX) {
			r->drops++;
			copies = 0;
		}
		break;
	case FW_REPLAY: {
		const struct genuine *g = &r->gen[fc_u8(&r->in) % r->ngen];
		inject(r, g->data, g->len, 0);
		break;
	}
	case FW_CRAFT:
		rec_craft(r);
		break;
	case FW_HOLD: {
		uint64_t t = fc_u8(&r->in) + 1u;
		if (r->holds < FW_HOLDS_MAX && r->nhold < GW_ARRAY_SIZE(r->hold)) {
			uint8_t *d = malloc(p->len);
			GW_FUZZ_CHECK(d);
			memcpy(d, p->data, p->len);
			r->hold[r->nhold++] = (struct held){.data = d, .len = p->len,
				.tag = tag_of(h.round), .due = fc_clock_ns() + t * 100000u};
			r->holds++;
			copies = 0;
		}
		break;
	}
	case FW_STALL: {
		uint8_t n = fc_u8(&r->in);
		fc_dp_stall(n & 0x80 ? r->adp : r->wdp, n & 0x7fu);
		break;
	}
	default:
		break;
	}
	for (int i = 0; i < copies; i++)
		fc_dp_push(r->wdp, p->data, p->len, &r->aep, tag_of(h.round));
}

/* What the worker sends goes straight to the shard, from the worker's
 * address. */
static void worker_tx(gw_dp *dp, gw_pkt *p)
{
	struct run *r = fc_dp_arg(dp);
	gw_pkt_hdr h;
	GW_FUZZ_CHECKF(gw_pkt_parse(p->data, p->len, &h) == 0 && h.type == GW_PKT_UP,
		       "the worker sent a packet that does not parse");
	GW_FUZZ_CHECK(!memcmp(&p->peer, &r->aep, sizeof(r->aep)));
	gw_pkt up = *p;
	up.peer = r->wep;
	check_rc(coll_agg_input(r->a, 0, &up, gw_now_ns()), "coll_agg_input");
	coll_agg_flush(r->a);
}

/* Held packets whose time has come join the worker's queue. */
static void release(struct run *r)
{
	for (unsigned i = 0; i < r->nhold;) {
		struct held *k = &r->hold[i];
		if (fc_clock_ns() < k->due) {
			i++;
			continue;
		}
		fc_dp_push(r->wdp, k->data, k->len, &r->aep, k->tag);
		free(k->data);
		*k = r->hold[--r->nhold];
	}
}

static void worker_poll(gw_dp *dp)
{
	release(fc_dp_arg(dp));
}

static void worker_rx(gw_dp *dp, const gw_pkt *p, int tag)
{
	struct run *r = fc_dp_arg(dp);
	(void)p;
	/* A packet with the job's MAC may be taken, whichever round it was
	 * made in: the exact checks are off for the round it arrives in. */
	if (tag == SEALED)
		r->right_key = 1;
	if (tag == MISMATCH) {
		r->refused = 1;
		return;
	}
	if (tag == HOSTILE || tag == SEALED)
		r->hostile++;
	else if (tag == tag_of(r->round))
		r->cur++;
	else
		r->old++;
}

/* An idle worker sleeps as long as it asks (in virtual time); the
 * shard's deadline scan runs meanwhile. */
static void worker_wait(gw_dp *dp, unsigned timeout_us)
{
	struct run *r = fc_dp_arg(dp);
	fc_clock_advance(1000ull * timeout_us);
	check_rc(coll_agg_tick(r->a, gw_now_ns()), "coll_agg_tick");
	coll_agg_flush(r->a);
}

/* ---- the calls --------------------------------------------------------- */

static float grad_at(const struct run *r, uint32_t round, uint64_t i)
{
	uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)round << 40 ^ r->seed;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 29;
	/* Never -0 nor non-finite: 0 + g is g, bit for bit. */
	return (float)(h >> 41) * 0x1p-20f - 4.0f;
}

static uint64_t rejected(const gw_comm_stats *s)
{
	return s->foreign + s->bad + s->corrupt + s->unauthenticated + s->forged;
}

/* The checks of a dense call (see the top of the file); want: the
 * oracle's result. */
static void check_dense(struct run *r, int rc, const gw_comm_stats *b,
			const gw_comm_stats *e, const float *want, const float *out)
{
	const struct coll_layout *L = r->L;
	uint64_t got = r->cur + r->old + r->hostile;
	/* Every chunk has its result: nothing may wait to be sent into the
	 * next round. */
	const struct dense_worker *dw = r->c->eng;
	GW_FUZZ_CHECKF(rc != GW_OK || dw->txq_n == 0, "%u packets still queued", dw->txq_n);
	/* A MISMATCH fails the call (GW_ECONFIG, unless it failed already),
	 * and in a keyed job comes only to a worker that was handed a packet
	 * sealed with the job's key (a forged result's next scale). */
	GW_FUZZ_CHECKF(!r->refused || rc != GW_OK, "a MISMATCH handed up, and the call "
		       "succeeded");
	GW_FUZZ_CHECKF(!r->refused || !L->keyed || r->right_key || r->tainted, "round %u: "
		       "the shard refused a frame of a worker no forged packet reached",
		       r->round);
	if (rc == GW_OK)
		GW_FUZZ_CHECKF(e->results - b->results + e->duplicates - b->duplicates +
			       e->stale - b->stale + rejected(e) - rejected(b) == got,
			       "%llu packets handed up, not all counted once",
			       (unsigned long long)got);
	if (!L->keyed || r->right_key || r->tainted)
		return;
	GW_FUZZ_CHECKF(rc == GW_OK, "round %u: %s with no packet that could pass",
		       r->round, gw_error_name(rc));
	GW_FUZZ_CHECKF(rejected(e) - rejected(b) == r->hostile,
		       "%llu hostile packets, %llu rejected", (unsigned long long)r->hostile,
		       (unsigned long long)(rejected(e) - rejected(b)));
	GW_FUZZ_CHECK(e->stale - b->stale == r->old);
	GW_FUZZ_CHECK(e->results - b->results == L->chunks);
	GW_FUZZ_CHECK(e->results - b->results + e->duplicates - b->duplicates == r->cur);
	GW_FUZZ_CHECKF(!memcmp(out, want, L->job.dim * sizeof(float)),
		       "round %u: out is not the oracle's result", r->round);
}

/* The checks of a Sketched-SGD call; want: the oracle's update, dense;
 * out: room for the call's. */
static void check_sketched(struct run *r, int rc, const gw_comm_stats *b,
			   const gw_comm_stats *e, const float *want, float *out,
			   const gw_sparse_update *up)
{
	const struct coll_layout *L = r->L;
	if (!L->keyed || r->right_key || r->tainted)
		return;
	GW_FUZZ_CHECKF(rc == GW_OK, "round %u: %s with no packet that could pass",
		       r->round, gw_error_name(rc));
	GW_FUZZ_CHECKF(rejected(e) - rejected(b) == r->hostile,
		       "%llu hostile packets, %llu rejected (bad %llu)",
		       (unsigned long long)r->hostile,
		       (unsigned long long)(rejected(e) - rejected(b)),
		       (unsigned long long)(e->bad - b->bad));
	GW_FUZZ_CHECK(e->stale - b->stale == r->old);
	GW_FUZZ_CHECK(up->nnz == L->sk.k && up->applied && up->contributors == 1);
	memset(out, 0, L->job.dim * sizeof(float));
	for (uint32_t i = 0; i < up->nnz; i++) {
		uint64_t k = up->keys[i];
		GW_FUZZ_CHECK(k < L->job.dim && (!i || k > up->keys[i - 1]));
		out[k] = up->values[i];
	}
	for (uint64_t i = 0; i < L->job.dim; i++)
		GW_FUZZ_CHECKF(!memcmp(&out[i], &want[i], sizeof(float)), "round %u: the "
			       "update at %llu is %g, the oracle's %g", r->round,
			       (unsigned long long)i, out[i], want[i]);
}

/* A pipelined round over the layout's tensors, each copied into memory of
 * its own (so a read or write past a tensor is one past an allocation)
 * and handed over before the call; their results gathered into out. */
static int pipelined_round(struct run *r, const float *grad, float *out,
			   gw_allreduce_info *info)
{
	const struct coll_layout *L = r->L;
	uint32_t tag = ++r->ptag;
	float *t[3] = {NULL, NULL, NULL};
	int rc = GW_OK;
	for (uint32_t i = 0; i < L->dense.nt && rc == GW_OK; i++) {
		const struct coll_tensor *T = &L->dense.t[i];
		t[i] = malloc(T->n * sizeof(float));
		GW_FUZZ_CHECK(t[i] != NULL);
		memcpy(t[i], grad + T->start, T->n * sizeof(float));
		rc = gw_comm_tensor_ready(r->c, tag, i, t[i], GW_DTYPE_F32, 1.0f);
		GW_FUZZ_CHECKF(rc == GW_OK, "tensor_ready %u: %d", i, rc);
	}
	rc = gw_allreduce_pipelined(r->c, tag, info);
	for (uint32_t i = 0; i < L->dense.nt; i++) {
		const struct coll_tensor *T = &L->dense.t[i];
		int w = gw_comm_tensor_wait(r->c, tag, i, 0);
		/* Every tensor is done when the round is; a failed round
		 * wakes its waiters with its code. */
		GW_FUZZ_CHECKF(rc == GW_OK ? w == GW_OK : w < 0, "round %d, tensor %u: %d",
			       rc, i, w);
		memcpy(out + T->start, t[i], T->n * sizeof(float));
		free(t[i]);
	}
	return rc;
}

static void rounds(struct run *r, int n)
{
	const struct coll_layout *L = r->L;
	uint64_t dim = L->job.dim;
	float *grad = malloc(dim * sizeof(float));
	float *out = malloc(dim * sizeof(float));
	float *want = malloc(dim * sizeof(float));
	GW_FUZZ_CHECK(grad && out && want);
	for (int call = 0; call < n; call++, r->round++) {
		for (uint64_t i = 0; i < dim; i++)
			grad[i] = grad_at(r, r->round, i);
		const float *g = grad;
		GW_FUZZ_CHECK((r->os ? oracle_sketched_round(r->os, &g, want)
				     : oracle_dense_round(r->od, &g, want)) == 0);
		r->drops = r->holds = 0;
		r->right_key = r->refused = 0;
		r->cur = r->old = r->hostile = 0;
		gw_comm_stats b, e;
		gw_comm_stats_get(r->c, &b);
		int rc;
		gw_allreduce_info info = {0};
		if (L->eng == &coll_sketched_engine) {
			gw_sparse_update up = {0};
			rc = gw_allreduce_sketched(r->c, grad, &up, &info);
			gw_comm_stats_get(r->c, &e);
			/* Loss-tolerant: a phase the shard closed at its deadline
			 * without this worker (a slow device queue is enough)
			 * differs from the oracle's, which has every worker in
			 * every phase, and so does every round after it (the
			 * worker keeps what was left out). */
			r->tainted |= rc == GW_OK && info.short_chunks > 0;
			check_sketched(r, rc, &b, &e, want, out, &up);
		} else if (r->pipelined) {
			rc = pipelined_round(r, grad, out, &info);
			gw_comm_stats_get(r->c, &e);
			r->tainted |= rc == GW_OK && info.short_chunks > 0;   /* as below */
			check_dense(r, rc, &b, &e, want, out);
		} else {
			rc = gw_allreduce(r->c, grad, out, &info);
			gw_comm_stats_get(r->c, &e);
			r->tainted |= rc == GW_OK && info.short_chunks > 0;   /* as above */
			check_dense(r, rc, &b, &e, want, out);
		}
		GW_FUZZ_CHECKF(rc == GW_OK || (rc < 0 && rc > GW_E_LAST),
			       "gw_allreduce returned %d", rc);
		if (getenv("GW_FUZZ_VERBOSE"))
			fprintf(stderr, "worker_rx: round %u: %s, results %llu, handed up "
				"%llu + %llu old + %llu hostile, rejected %llu, exact %d, "
				"retransmits %llu, clock %.3f ms, short %u, mismatches %llu\n",
				r->round, gw_error_name(rc),
				(unsigned long long)(e.results - b.results),
				(unsigned long long)r->cur, (unsigned long long)r->old,
				(unsigned long long)r->hostile,
				(unsigned long long)(rejected(&e) - rejected(&b)),
				L->keyed && !r->right_key && !r->tainted,
				(unsigned long long)(e.retransmits - b.retransmits),
				(double)(fc_clock_ns() - 1000000000ull) / 1e6, info.short_chunks,
				(unsigned long long)r->mismatches);
		/* A worker that gave up on a round leaves the shard waiting
		 * for it (reliable mode), and one that took a forged packet
		 * may have sent what the shard did not expect. */
		r->tainted |= rc != GW_OK || r->right_key;
	}
	free(grad);
	free(out);
	free(want);
}

/* ---- set-up ------------------------------------------------------------ */

static int setup(struct run *r, const uint8_t *cfg)
{
	uint8_t f = cfg[0];
	int ui = (cfg[1] & 15) % FC_NCODECS;
	int sk = (f & FC_WK_SKETCHED) || ui == FC_SKETCHED, hq = !sk && ui == FC_HQ;
	gw_coll_job job = {
		.job = JOB_ID,
		.dim = 1 + (cfg[2] | cfg[3] << 8) % FC_DIM_MAX,
		.chunk_elems = 40u * (1u + cfg[4] % 24u),
		.workers = 1,
		.shards = 1,
		.window = 1u + (cfg[5] & 7u),
		.up_codec = sk ? GW_CODEC_COUNTSKETCH : codecs[ui],
		.down_codec = sk ? GW_CODEC_RAW : hq ? GW_CODEC_HQ : codecs[(cfg[1] >> 4) % 4],
		.mode = f & FC_WK_TOLERANT ? GW_COLL_LOSS_TOLERANT : GW_COLL_RELIABLE,
		.deadline_us = 1000u * (1u + (cfg[5] >> 3)),
		.key = f & FC_WK_KEYED ? job_key : NULL,
	};
	/* Read when the worker, the shard and the oracle are made below. */
	uint64_t tens[3];
	/* hq's shard holds no floats to keep momentum in: its jobs refuse it. */
	gw_dense_job dj = {.down_momentum = f & FC_WK_MOMENTUM && !hq ? 0.9f : 0.0f};
	if ((f & FC_WK_LAYOUT) && job.dim >= 16) {
		tens[1] = 1 + (job.dim / 7) % 11;
		tens[0] = (job.dim - tens[1]) / 2;
		tens[2] = job.dim - tens[0] - tens[1];
		dj.ntensors = 3;
		dj.tensor_elems = tens;
		dj.min_elems = 12;
	}
	if (!sk && (dj.ntensors || dj.down_momentum > 0.0f)) {
		job.engine = GW_COLL_DENSE;
		job.engine_params = &dj;
	}
	fc_sketch_sizes(&job, cfg[7]);
	r->seed = cfg[6];
	r->round = cfg[7] & FC_ROUND_HIGH ? 0xfffffffeu : 0;
	r->wep = (gw_endpoint){.ip = 0x0a000002u, .port = 7000};
	r->aep = (gw_endpoint){.ip = 0x0a000001u, .port = 9000};
	struct fc_hooks wh = {.on_tx = worker_tx, .on_poll = worker_poll,
			      .on_rx = worker_rx, .on_wait = worker_wait, .arg = r,
			      .pool = cfg[7] & FC_POOL3_WORKER ? 3 : 0,
			      .tx_max = cfg[7] & FC_TX1_WORKER ? 1 : 0,
			      .regions = !!(f & FC_WK_DEVICE)};
	struct fc_hooks ah = {.on_tx = shard_tx, .arg = r,
			      .tx_max = cfg[7] & FC_TX1_SHARD ? 1 : 0};
	r->wdp = fc_dp_new(&r->wep, FC_PAYLOAD_MAX, &wh);
	r->adp = fc_dp_new(&r->aep, FC_PAYLOAD_MAX, &ah);
	r->buf = malloc(FC_PAYLOAD_MAX + GW_PKT_MAC_LEN);
	if (!r->wdp || !r->adp || !r->buf)
		return -1;
	gw_agg_config ac = {.job = job, .shard = 0};
	gw_comm_config cc = {.job = job, .rank = 0, .shards = &r->aep, .rto_us = RTO_US,
			     .timeout_ms = TIMEOUT_MS, .first_round = r->round};
	if (!(r->a = gw_agg_create(&r->adp, 1, &ac)) || !(r->c = gw_comm_create(r->wdp, &cc)))
		return -1;
	/* A job the device path refuses (Sketched-SGD, a codec it has no
	 * kernels for: hq) stays a CPU job. */
	if ((f & FC_WK_DEVICE) && !sk && gw_gpu_takes(job.up_codec) &&
	    gw_gpu_takes(job.down_codec) &&
	    (!(r->gpu = gw_gpu_open("emu")) || gw_comm_set_gpu(r->c, r->gpu) < 0))
		GW_FUZZ_CHECKF(0, "the emulated executor refused a dense job: %s",
			       gw_error_detail());
	r->L = &r->a->L;
	r->pipelined = (f & FC_WK_PIPELINED) && dj.ntensors && !r->gpu && !sk;
	/* The oracle of the job as given: it derives what was left out on
	 * its own. */
	if (r->L->eng == &coll_sketched_engine)
		r->os = oracle_sketched_create(&job);
	else
		r->od = oracle_dense_create(&job);
	if (r->od)
		oracle_dense_set_round(r->od, r->round);
	GW_FUZZ_CHECKF(r->os || r->od, "no oracle for a job the worker took");
	return 0;
}

static void run_free(struct run *r)
{
	/* The worker and the shard give their packets back first. */
	gw_comm_free(r->c);
	gw_gpu_close(r->gpu);
	gw_agg_free(r->a);
	fc_dp_delete(r->wdp);
	fc_dp_delete(r->adp);
	for (uint32_t i = 0; i < r->ngen; i++)
		free(r->gen[i].data);
	for (unsigned i = 0; i < r->nhold; i++)
		free(r->hold[i].data);
	free(r->gen);
	free(r->buf);
	oracle_dense_free(r->od);
	oracle_sketched_free(r->os);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < FC_CFG_LEN)
		return 0;
	struct run r = {0};
	fc_clock_start();
	if (setup(&r, data) == 0) {
		r.in = (struct fc_in){.p = data + FC_CFG_LEN, .n = size - FC_CFG_LEN};
		rounds(&r, data[0] & FC_WK_TWO_ROUNDS ? 2 : 1);
		gw_fuzz_last_rc = GW_OK;   /* ran to the end, every check held */
	} else if (getenv("GW_FUZZ_VERBOSE")) {
		fprintf(stderr, "worker_rx: the job was refused\n");
	}
	run_free(&r);
	fc_clock_stop();
	return 0;
}
