/* Seeds of the collective receive-path harnesses (fuzz_agg_rx.c,
 * fuzz_worker_rx.c), in the input formats of fuzz_coll.h. Each fuzz_agg_rx
 * seed sends genuine chunks of every rank, so finalize (and with
 * Sketched-SGD both phases) runs, then mutations, crafted and raw packets;
 * each fuzz_worker_rx seed completes its calls, some with every kind of
 * hostile packet injected. Written by make_corpus through its
 * mc_write_file(). */
#include <stdio.h>
#include <string.h>

#include "fuzz_coll.h"
#include "oracle.h"
#include "seeds_dr.h"

struct seed {
	uint8_t b[8192];
	size_t n;
};

static void put8(struct seed *s, uint32_t v)
{
	if (s->n < sizeof(s->b))
		s->b[s->n++] = (uint8_t)v;
}

static void put16(struct seed *s, uint32_t v)
{
	put8(s, v & 0xff);
	put8(s, v >> 8);
}

static void put32(struct seed *s, uint32_t v)
{
	put16(s, v & 0xffff);
	put16(s, v >> 16);
}

/* The configuration bytes (fuzz_coll.h); dim < FC_DIM_MAX, chunk a
 * multiple of 40 up to 960. */
static void config(struct seed *s, uint8_t flags, unsigned up, unsigned down,
		   uint32_t dim, uint32_t chunk, uint32_t window, uint32_t deadline_ms,
		   uint8_t last)
{
	s->n = 0;
	put8(s, flags);
	put8(s, up | down << 4);
	put16(s, dim - 1);
	put8(s, chunk / 40 - 1);
	put8(s, (window - 1) | (deadline_ms - 1) << 3);
	put8(s, 0x5e);
	put8(s, last);
}

/* ---- fuzz_agg_rx ------------------------------------------------------- */

struct agg_job {
	uint32_t W, dim, chunk, shards, shard;
	int sketched;
	uint8_t cfg7;             /* Sketched-SGD's k and candidates */
};

/* Chunks the shard owns (dense), or of both phases (Sketched-SGD: the
 * sizes of the oracle, tests/oracle/). */
static uint32_t agg_chunks(const struct agg_job *j, uint32_t *phase_a)
{
	if (j->sketched) {
		gw_coll_job job = {.dim = j->dim, .up_codec = GW_CODEC_COUNTSKETCH};
		struct oracle_sk_sizes sz;
		fc_sketch_sizes(&job, j->cfg7);
		if (oracle_sk_sizes(&job, &sz) < 0)
			return *phase_a = 0;
		*phase_a = sz.csk.rows * ((sz.csk.cols + j->chunk - 1) / j->chunk);
		return *phase_a + (sz.m + j->chunk - 1) / j->chunk;
	}
	uint32_t n = (j->dim + j->chunk - 1) / j->chunk;
	*phase_a = n;
	return j->shard < n ? (n - j->shard + j->shards - 1) / j->shards : 0;
}

/* An UP; with FM_MUTATE, frame byte off ^= x. */
static void up_at(struct seed *s, uint32_t rank, uint32_t chunk, uint32_t round,
		  uint8_t mode, uint32_t off, uint8_t x)
{
	put8(s, FA_UP);
	put8(s, rank);
	put16(s, chunk);
	put8(s, round);
	put8(s, mode);
	if (mode & FM_MUTATE) {
		put16(s, off);
		put8(s, x);
	}
}

static void up(struct seed *s, uint32_t rank, uint32_t chunk, uint32_t round, uint8_t mode)
{
	up_at(s, rank, chunk, round, mode, 40 + chunk * 7, 0x10);
}

/* Chunks [lo, hi) of round from the ranks in the mask, chunk by chunk, as
 * workers obeying the window rule send them. */
static void ups(struct seed *s, const struct agg_job *j, uint32_t lo, uint32_t hi,
		uint32_t round, uint32_t ranks)
{
	for (uint32_t c = lo; c < hi; c++)
		for (uint32_t r = 0; r < j->W; r++)
			if (ranks >> r & 1)
				up(s, r, c, round, (c + r) % 3 ? 0 : FM_RETX);
}

static void tick(struct seed *s, uint32_t dt)
{
	put8(s, FA_TICK);
	put16(s, dt);
}

/* The hostile tail every agg seed ends with. */
static void agg_hostile(struct seed *s)
{
	up(s, 0, 0, 0, FM_MUTATE);                       /* frame checksum */
	up(s, 1, 1, 0, FM_MUTATE | FM_FRAME_SEAL);       /* re-sealed frame */
	up(s, 0, 0, 1, FS_WRONG);
	up(s, 1, 0, 1, FS_NOMAC | FM_DP1);
	up(s, 0x83, 0, 0, FS_RAW | FM_ANY_CHUNK);
	put8(s, FA_AGAIN);
	put8(s, FA_CRAFT);                               /* an UP of tensor 1 */
	put8(s, 0);
	put8(s, 0);
	put8(s, 0);
	put16(s, 0);
	put8(s, 0);
	put8(s, 0);
	put8(s, 1);
	put32(s, 0);
	put8(s, FS_RIGHT);
	put16(s, 8);
	for (int i = 0; i < 8; i++)
		put8(s, 'G' + i);
	put8(s, FA_RAW);
	put16(s, 12);
	for (int i = 0; i < 12; i++)
		put8(s, i == 0 ? 'G' : i == 1 ? 'P' : i == 2 ? 1 : 3);
}

/* hq (wire-format §4.11): in round `round` of the shard's first chunk,
 * worker 1's frame with its params changed and re-sealed — the scale, the
 * seed, the rotation flag, the bits — each refused (reliable: a MISMATCH
 * to it), one changed in transit (not re-sealed: corrupt), then every
 * rank's genuine frame, which finish it. Frame bytes 36.. are hq's
 * params: bits, width, flags, reserved, contributors, seed, scale, next. */
static void hq_refusals(struct seed *s, uint32_t W, uint32_t round)
{
	static const struct {
		uint16_t off;
		uint8_t x;
	} bad[] = {{50, 0x01}, {51, 0x40}, {46, 0x02}, {38, 0x01}, {36, 0x04}, {40, 0x01}};
	up(s, 0, 0, round, 0);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		up_at(s, 1, 0, round, FM_MUTATE | FM_FRAME_SEAL, bad[i].off, bad[i].x);
	up_at(s, 1, 0, round, FM_MUTATE, 50, 0x01);
	for (uint32_t r = 1; r < W; r++)
		up(s, r, 0, round, 0);
}

static void agg_seed(seed_write_fn write, const char *name, uint8_t flags,
		     unsigned upc, unsigned downc, uint32_t dim, uint32_t chunk,
		     uint32_t window, int rounds, int tolerant_tail, uint8_t dp)
{
	struct seed s;
	struct agg_job j = {.W = 1 + (flags & FC_AGG_WORKERS) + (dp & FC_AGG_W8 ? 8 : 0),
			    .dim = dim, .chunk = chunk, .sketched = upc == FC_SKETCHED,
			    .cfg7 = dp};
	j.shards = (flags & FC_AGG_SHARDS2) && !j.sketched ? 2 : 1;
	j.shard = j.shards > 1 && (flags & FC_AGG_SHARD1) ? 1 : 0;
	config(&s, flags, upc, downc, dim, chunk, window, 4, dp);
	uint32_t a, n = agg_chunks(&j, &a);
	uint32_t all = (1u << j.W) - 1;
	for (int r = 0; r < rounds; r++) {
		if (j.sketched) {
			ups(&s, &j, 0, a, (uint32_t)r, all);   /* phase A: candidates */
			ups(&s, &j, a, n, (uint32_t)r, all);   /* phase B: the update */
		} else {
			ups(&s, &j, 0, n, (uint32_t)r, all);
		}
	}
	if (tolerant_tail) {
		/* The last rank late: the deadline finishes the round short. */
		uint32_t most = all >> 1;
		uint32_t r = (uint32_t)rounds;
		ups(&s, &j, 0, j.sketched ? a : n, r, most);
		tick(&s, 1000);
		if (j.sketched) {
			ups(&s, &j, a, n, r, most);
			tick(&s, 1000);
		}
		ups(&s, &j, 0, j.sketched ? a : n, r, all & ~most);
	}
	if (upc == FC_HQ && j.W > 1)
		hq_refusals(&s, j.W, (uint32_t)rounds + !!tolerant_tail);
	agg_hostile(&s);
	write("agg_rx", name, s.b, s.n);
}

static void seeds_agg(seed_write_fn write)
{
	agg_seed(write, "raw-w2-keyed", 1 | FC_AGG_KEYED, FC_RAW, FC_RAW, 1000, 200, 2, 2,
		 0, 0);
	agg_seed(write, "raw-w4-window1", 3 | FC_AGG_KEYED | FC_AGG_TWO_DP, FC_RAW, FC_RAW,
		 333, 80, 1, 3, 0, FC_TX1_SHARD);
	agg_seed(write, "int8-3lc-shard1-tolerant",
		 2 | FC_AGG_SHARDS2 | FC_AGG_SHARD1 | FC_AGG_TOLERANT, FC_INT8, FC_3LC, 2500,
		 400, 4, 1, 1, 0);
	agg_seed(write, "3lc-int8-w1", 0, FC_3LC, FC_INT8, 1200, 120, 8, 2, 0, 0);
	agg_seed(write, "topk-raw-w3-pool2", 2 | FC_AGG_KEYED | FC_AGG_POOL2, FC_TOPK,
		 FC_RAW, 4000, 960, 2, 2, 0, 0);
	agg_seed(write, "raw-topk-tolerant", 1 | FC_AGG_TOLERANT | FC_AGG_SHARDS2, FC_RAW,
		 FC_TOPK, 1500, 240, 3, 1, 1, 0);
	agg_seed(write, "sketched-w2-keyed", 1 | FC_AGG_KEYED, FC_SKETCHED, 0, 2000, 40, 1,
		 2, 0, 0);
	agg_seed(write, "sketched-w3-tolerant", 2 | FC_AGG_TOLERANT, FC_SKETCHED, 0, 3000,
		 80, 1, 1, 1, FC_TX1_SHARD);
	agg_seed(write, "int8-raw-w10-high-rounds", 1 | FC_AGG_KEYED, FC_INT8, FC_RAW, 700,
		 160, 2, 2, 0, FC_AGG_W8 | FC_ROUND_HIGH);
	agg_seed(write, "sketched-w2-k5", 1 | FC_AGG_TOLERANT, FC_SKETCHED, 0, 900, 40, 1,
		 2, 1, 0x40 | FC_SK_CAND_K | FC_ROUND_HIGH);
	/* hq: integer sums, each round on the scale the last result named. */
	agg_seed(write, "hq-w4-keyed", 3 | FC_AGG_KEYED, FC_HQ, 0, 1500, 200, 2, 3, 0, 0);
	agg_seed(write, "hq-w3-shard1-tolerant",
		 2 | FC_AGG_SHARDS2 | FC_AGG_SHARD1 | FC_AGG_TOLERANT, FC_HQ, 0, 2000, 240, 3,
		 2, 1, FC_TX1_SHARD);
	agg_seed(write, "hq-w2-unkeyed-pool2", 1 | FC_AGG_POOL2, FC_HQ, 0, 700, 80, 1, 2, 0,
		 0);
	agg_seed(write, "hq-w10-high-rounds", 1 | FC_AGG_KEYED | FC_AGG_TWO_DP, FC_HQ, 0, 900,
		 120, 2, 2, 0, FC_AGG_W8 | FC_ROUND_HIGH);
}

/* ---- fuzz_worker_rx ---------------------------------------------------- */

/* One record of each kind, those that keep the oracle first. */
static void worker_hostile(struct seed *s, int right_key)
{
	put8(s, FW_PASS);
	put8(s, FW_MUTATE);          /* another key, a flipped frame byte */
	put16(s, 40);
	put8(s, 0x01);
	put8(s, FS_WRONG);
	put8(s, 0);
	put32(s, 0);
	put8(s, FW_MUTATE);          /* no MAC, another chunk */
	put16(s, 0);
	put8(s, 0);
	put8(s, FS_NOMAC);
	put8(s, 2);
	put32(s, 1);
	put8(s, FW_MUTATE);          /* a bit flipped in transit */
	put16(s, 9);
	put8(s, 0x80);
	put8(s, FS_RAW);
	put8(s, 0);
	put32(s, 0);
	put8(s, FW_DUP);
	put8(s, FW_RAW);
	put16(s, 6);
	for (int i = 0; i < 6; i++)
		put8(s, "GP\1\4\0\1"[i]);
	put8(s, FW_REPLAY);
	put8(s, 0);
	put8(s, FW_DROP);
	put8(s, FW_STALL);           /* the worker's next 20 tx_bursts refused */
	put8(s, 20);
	put8(s, FW_HOLD);            /* 1.2 ms late: past the first RTO */
	put8(s, 11);
	put8(s, FW_STALL);           /* the shard's next 3 */
	put8(s, 0x83);
	put8(s, FW_CRAFT);
	put8(s, 0);
	put8(s, 0);
	put8(s, 0);
	put16(s, 0);
	put8(s, 0);
	put8(s, 0xff);               /* the round before */
	put8(s, 0);
	put32(s, 0);
	put8(s, FS_WRONG);
	put16(s, 16);
	for (int i = 0; i < 16; i++)
		put8(s, i == 0 ? 1 : 'W');
	if (right_key) {
		put8(s, FW_MUTATE);  /* the job's key: a forged result */
		put16(s, 50);
		put8(s, 0x40);
		put8(s, FS_RIGHT);
		put8(s, 0);
		put32(s, 0);
	}
}

static void worker_seed(seed_write_fn write, const char *name, uint8_t flags,
			unsigned upc, unsigned downc, uint32_t dim, uint32_t chunk,
			uint32_t window, int hostile, uint8_t dp)
{
	struct seed s;
	config(&s, flags, upc, downc, dim, chunk, window, 2, dp);
	if (hostile)
		worker_hostile(&s, hostile > 1);
	write("worker_rx", name, s.b, s.n);
}

static void seeds_worker(seed_write_fn write)
{
	uint8_t k = FC_WK_KEYED, two = FC_WK_TWO_ROUNDS, sk = FC_WK_SKETCHED;
	worker_seed(write, "raw-keyed", k | two, FC_RAW, FC_RAW, 1000, 200, 2, 0, 0);
	worker_seed(write, "raw-keyed-hostile", k | two, FC_RAW, FC_RAW, 1000, 120, 1, 1,
		    FC_TX1_WORKER | FC_TX1_SHARD);
	worker_seed(write, "raw-keyed-forged", k | two, FC_RAW, FC_RAW, 777, 80, 4, 2, 0);
	worker_seed(write, "int8-3lc-tolerant", k | FC_WK_TOLERANT, FC_INT8, FC_3LC, 3000,
		    400, 8, 1, FC_POOL3_WORKER);
	worker_seed(write, "topk-raw-unkeyed", two, FC_TOPK, FC_RAW, 2000, 960, 1, 1,
		    FC_TX1_SHARD);
	worker_seed(write, "3lc-topk", k, FC_3LC, FC_TOPK, 1500, 240, 3, 1, 0);
	worker_seed(write, "sketched-keyed", k | two | sk, 0, 0, 2000, 40, 1, 0, 0);
	worker_seed(write, "sketched-keyed-hostile", k | two | sk, 0, 0, 3000, 80, 1, 1,
		    FC_TX1_WORKER | FC_POOL3_WORKER);
	worker_seed(write, "sketched-tolerant-forged", FC_WK_TOLERANT | sk, 0, 0, 1000, 40,
		    1, 2, 0);
	worker_seed(write, "raw-keyed-high-rounds", k | two, FC_RAW, FC_RAW, 500, 40, 2, 1,
		    FC_ROUND_HIGH);
	worker_seed(write, "sketched-k50-high-rounds", k | two | sk, 0, 0, 4000, 120, 1, 1,
		    0x60 | FC_ROUND_HIGH);
	/* Device tensors (the emulated CUDA kernels encode and decode). */
	uint8_t dev = FC_WK_DEVICE;
	worker_seed(write, "dev-raw-keyed-hostile", dev | k | two, FC_RAW, FC_RAW, 1000, 120, 1,
		    1, FC_TX1_WORKER | FC_TX1_SHARD);
	worker_seed(write, "dev-int8-3lc-tolerant", dev | k | FC_WK_TOLERANT, FC_INT8, FC_3LC,
		    3000, 400, 8, 1, FC_POOL3_WORKER);
	worker_seed(write, "dev-topk-raw-unkeyed", dev | two, FC_TOPK, FC_RAW, 2000, 960, 1, 1,
		    FC_TX1_SHARD);
	worker_seed(write, "dev-3lc-topk-forged", dev | k, FC_3LC, FC_TOPK, 1500, 240, 3, 2, 0);
	/* A layout (three tensors, one raw) and the shard's momentum, on the
	 * CPU and the device. */
	uint8_t lay = FC_WK_LAYOUT | FC_WK_MOMENTUM;
	worker_seed(write, "layout-3lc-keyed", lay | k | two, FC_3LC, FC_3LC, 2500, 240, 3, 1,
		    0);
	worker_seed(write, "layout-topk-tolerant", lay | FC_WK_TOLERANT, FC_TOPK, FC_INT8, 3000,
		    400, 4, 1, FC_POOL3_WORKER);
	worker_seed(write, "dev-layout-3lc-hostile", dev | lay | k | two, FC_3LC, FC_RAW, 2000,
		    120, 2, 1, FC_TX1_WORKER | FC_TX1_SHARD);
	worker_seed(write, "dev-layout-topk-tolerant", dev | FC_WK_LAYOUT | FC_WK_TOLERANT,
		    FC_TOPK, FC_3LC, 1800, 240, 3, 1, 0);
	/* Pipelined rounds: the tensors in memory of their own, in place. */
	uint8_t pipe = FC_WK_PIPELINED | FC_WK_LAYOUT;
	worker_seed(write, "pipe-3lc-keyed", pipe | FC_WK_MOMENTUM | k | two, FC_3LC, FC_3LC,
		    2500, 240, 3, 1, 0);
	worker_seed(write, "pipe-int8-raw-tolerant", pipe | FC_WK_TOLERANT | two, FC_INT8,
		    FC_RAW, 3000, 400, 4, 1, FC_POOL3_WORKER);
	worker_seed(write, "pipe-topk-hostile", pipe | k | two, FC_TOPK, FC_RAW, 2000, 120, 2,
		    1, FC_TX1_WORKER | FC_TX1_SHARD);
	/* hq both ways: the shard's integer sums, the worker on the scale
	 * the last result named; with a layout (a raw tensor), pipelined,
	 * and device tensors (hq stays on the host). */
	worker_seed(write, "hq-keyed-hostile", k | two, FC_HQ, 0, 2000, 240, 2, 1, 0);
	worker_seed(write, "hq-tolerant", k | FC_WK_TOLERANT | two, FC_HQ, 0, 1500, 120, 3, 1,
		    FC_POOL3_WORKER);
	worker_seed(write, "hq-layout-forged", FC_WK_LAYOUT | k | two, FC_HQ, 0, 2500, 240, 3,
		    2, 0);
	worker_seed(write, "pipe-hq-keyed", pipe | k | two, FC_HQ, 0, 3000, 400, 4, 1,
		    FC_TX1_WORKER | FC_TX1_SHARD);
	worker_seed(write, "dev-hq-high-rounds", dev | k | two, FC_HQ, 0, 1000, 120, 1, 1,
		    FC_ROUND_HIGH);
}

/* fuzz_ctrl: a byte of layout, then fields (kinds, roles, texts). */
static void seeds_ctrl(seed_write_fn write)
{
	for (int keyed = 0; keyed < 2; keyed++)
		for (int kind = 0; kind < 4; kind++) {
			uint8_t s[64] = {(uint8_t)keyed, (uint8_t)kind, (uint8_t)(kind & 1), 3, 0,
					 7, 0, 0, 0, 2};
			memcpy(s + 17, "said goodbye", 12);
			char name[32];
			snprintf(name, sizeof(name), "k%d-kind%d", keyed, kind + 1);
			write("ctrl", name, s, sizeof(s));
		}
}

int seeds_coll(const char *name, seed_write_fn write)
{
	int hit = 0;
	if (!name || !strcmp(name, "ctrl")) {
		seeds_ctrl(write);
		hit = 1;
	}
	if (!name || !strcmp(name, "agg_rx")) {
		seeds_agg(write);
		hit = 1;
	}
	if (!name || !strcmp(name, "worker_rx")) {
		seeds_worker(write);
		hit = 1;
	}
	return hit;
}
