/* Shared parts of the collective layer's receive-path harnesses
 * (fuzz_agg_rx.c, fuzz_worker_rx.c): their input formats, which
 * seeds_coll.c writes, an in-process fake dataplane, a reader of the fuzz
 * bytes and the packet seals (coll_fake.c). tests/fuzz/README.md has the
 * formats in prose.
 *
 * Only the public headers are needed here, so make_corpus (which does not
 * link the collective layer) can include the format part; the job layout
 * is an incomplete type for it. */
#ifndef GW_FUZZ_COLL_H
#define GW_FUZZ_COLL_H

#include <stddef.h>
#include <stdint.h>

#include <gw/collective.h>
#include <gw/dataplane.h>

/* ---- input formats ----------------------------------------------------- *
 *
 * Both harnesses start with FC_CFG_LEN bytes of job configuration:
 *
 *   [0] flags  FC_*: below
 *   [1] codecs bits 0-3 uplink, 4-7 downlink: an index into the harness's
 *              table (modulo its size)
 *   [2..3]     dim = 1 + (le16 % FC_DIM_MAX)
 *   [4]        chunk_elems = 40 * (1 + byte % 24)
 *   [5]        bits 0-2 window - 1; bits 3-7 deadline (1 + v) ms
 *   [6]        gradient seed
 *   [7]        the dataplanes: FC_TX1_* bits
 */
#define FC_CFG_LEN 8u
#define FC_DIM_MAX 4096u
#define FC_PAYLOAD_MAX 4096u   /* both fake dataplanes' packets */

/* cfg[0] of fuzz_agg_rx */
#define FC_AGG_WORKERS 0x03u   /* W - 1 */
#define FC_AGG_SHARDS2 0x04u   /* two shards (not with Sketched-SGD) */
#define FC_AGG_SHARD1 0x08u    /* this one is shard 1 of 2 */
#define FC_AGG_TOLERANT 0x10u  /* loss-tolerant mode */
#define FC_AGG_KEYED 0x20u     /* the job has a key */
#define FC_AGG_TWO_DP 0x40u    /* the shard serves two dataplanes */
#define FC_AGG_POOL2 0x80u     /* alloc refuses past 2 live packets */
/* Uplink codec table of both harnesses (cfg[1] bits 0-3, modulo
 * FC_NCODECS); index 4 is a Sketched-SGD job (countsketch up), index 5
 * hq, which comes down as hq (the shard's integer sums) whatever bits 4-7
 * say. Downlink (bits 4-7): the first four, modulo 4. New codecs go at
 * the end: an input that names an index below the old size keeps its
 * meaning. */
enum { FC_RAW = 0, FC_INT8, FC_3LC, FC_TOPK, FC_SKETCHED, FC_HQ, FC_NCODECS };

/* cfg[0] of fuzz_worker_rx */
#define FC_WK_KEYED 0x01u
#define FC_WK_TOLERANT 0x02u
#define FC_WK_SKETCHED 0x04u   /* gw_allreduce_sketched (codecs ignored);
				* uplink index FC_SKETCHED makes one too */
#define FC_WK_TWO_ROUNDS 0x08u
#define FC_WK_DEVICE 0x10u     /* device tensors: the "emu" executor (the
				* CUDA kernels' code) encodes and decodes;
				* a job with a codec it has no kernels for
				* (hq) stays on the host */
#define FC_WK_LAYOUT 0x20u     /* dense, dim >= 16: three tensors, the
				* middle one below min_elems 12 (raw) */
#define FC_WK_MOMENTUM 0x40u   /* dense: down_momentum 0.9 (the shard's
				* state change sent down; not with hq,
				* whose shard never holds floats) */
#define FC_WK_PIPELINED 0x80u  /* dense with FC_WK_LAYOUT, host tensors:
				* gw_allreduce_pipelined, each tensor in
				* memory of its own, handed over first */

/* cfg[7], both harnesses where it applies. TX1: tx_burst takes one
 * packet per call (the rest waits, as behind a full device queue). */
#define FC_TX1_SHARD 0x01u     /* the shard's dataplanes */
#define FC_TX1_WORKER 0x02u    /* fuzz_worker_rx: the worker's */
#define FC_POOL3_WORKER 0x04u  /* fuzz_worker_rx: the worker's pool holds 3 */
#define FC_ROUND_HIGH 0x08u    /* rounds up to 2^32 - 1: fuzz_agg_rx's round
				* bytes count from 0xffffff00, the worker
				* starts at round 0xfffffffe */
#define FC_AGG_W8 0x10u        /* fuzz_agg_rx: W + 8 (a 2-byte bitmap) */
#define FC_SK_TOPK 0x60u       /* Sketched-SGD k: default, 1, 5, 50 */
#define FC_SK_CAND_K 0x80u     /* Sketched-SGD: candidates = k */

/* fuzz_agg_rx records, after the configuration: an op byte (modulo
 * FA_NOPS), then its arguments (multi-byte ones little-endian; bytes past
 * the input's end read as 0, and the record that runs out ends the run):
 *
 *   FA_TICK   dt:u16          now += (dt + 1) * 16 us; the deadline scan
 *   FA_UP     rank:u8 chunk:u16 round:u8 mode:u8 [off:u16 xor:u8]
 *             a genuine UP: the harness's gradient of (rank, round),
 *             chunk encoded with the job's uplink codec as a worker does
 *             (hq: on the scale the shard's result of the chunk's round
 *             before named, else its latest, else 0, with the round's
 *             rotation seed);
 *             rank < 0x80 is taken modulo W, else as is (0xff: 255 or
 *             more); rounds count from 0xffffff00 with FC_ROUND_HIGH;
 *             chunk counts this
 *             shard's chunks (FM_ANY_CHUNK: all of the tensor's);
 *             Sketched-SGD: chunks of phase A, then of phase B
 *   FA_CRAFT  type:u8 flags:u8 sack:u8 rank:u16 job:u8 round:u8 tensor:u8
 *             chunk:u32 mode:u8 len:u16 body[len]
 *             a packet of those fields around body (job 0: the job's
 *             id, else the byte); type 0 is UP
 *   FA_RAW    len:u16 bytes[len]   a packet as it is
 *   FA_AGAIN  the last packet again
 *
 * The mode byte of FA_UP and FA_CRAFT: */
enum { FA_TICK = 0, FA_UP, FA_CRAFT, FA_RAW, FA_AGAIN, FA_NOPS };
#define FM_SEAL 0x03u          /* FS_*: how the packet is sealed */
#define FM_MUTATE 0x04u        /* FA_UP: body[off % len] ^= xor */
#define FM_FRAME_SEAL 0x08u    /* ... then re-seal the frame's checksum */
#define FM_RETX 0x10u
#define FM_DP1 0x20u           /* arrives on the second dataplane */
#define FM_MOVED 0x40u         /* from another address than its rank's */
#define FM_ANY_CHUNK 0x80u
enum {
	FS_RIGHT = 0,   /* coll_seal with the job's key (or none) */
	FS_WRONG,       /* a MAC with another key */
	FS_NOMAC,       /* a valid checksum, no MAC */
	FS_RAW,         /* the header's checksum left wrong, no MAC */
};

/* fuzz_worker_rx records: read one per packet the shard sends the worker,
 * which a record may precede with injected packets (see fuzz_worker_rx.c
 * for the arguments); op modulo FW_NOPS. Without records every packet
 * passes. */
enum {
	FW_PASS = 0,
	FW_MUTATE,   /* off:u16 xor:u8 mode:u8 field:u8 val:u32 */
	FW_RAW,      /* len:u16 bytes[len] */
	FW_DUP,      /* the genuine packet twice */
	FW_DROP,     /* lost (at most FW_DROPS_MAX per round) */
	FW_REPLAY,   /* idx:u8 a copy of an earlier genuine packet */
	FW_CRAFT,    /* type flags sack rank:u16 job round:i8 tensor chunk:u32
		      * mode len:u16 body[len] */
	FW_HOLD,     /* t:u8 delivered (t + 1) x 100 us later (virtual time;
		      * at most FW_HOLDS_MAX a round) */
	FW_STALL,    /* n:u8 the next n % 128 tx_bursts that have packets take
		      * none (bit 7: the shard's, else the worker's) */
	FW_NOPS
};
#define FW_DROPS_MAX 2u
#define FW_HOLDS_MAX 4u

/* Writes the seeds of harness name if it is one of these two (NULL: both)
 * through write (make_corpus's mc_write_file); 1 if it was, 0 if not.
 * seeds_coll.c. */
int seeds_coll(const char *name, void (*write)(const char *harness, const char *file,
					       const void *data, size_t len));

/* ---- reading the input ------------------------------------------------- */

struct fc_in {
	const uint8_t *p;
	size_t n;
	int over;       /* a read went past the end */
};

uint8_t fc_u8(struct fc_in *in);
uint16_t fc_u16(struct fc_in *in);
uint32_t fc_u32(struct fc_in *in);
/* Copies up to len bytes (zeros past the end) into dst. */
void fc_bytes(struct fc_in *in, uint8_t *dst, size_t len);

/* ---- the fake dataplane ------------------------------------------------ *
 *
 * Packets are heap blocks of exactly their room, so AddressSanitizer sees
 * any access past it. tx_burst hands each packet to on_tx, which must not
 * keep it (the caller keeps and frees it, as gw_dp_tx_burst() says);
 * rx_burst calls on_poll, then pops the receive queue (fc_dp_push),
 * calling on_rx for each packet it hands up; wait calls on_wait and
 * returns at once. */
struct fc_hooks {
	void (*on_tx)(gw_dp *dp, gw_pkt *p);
	void (*on_poll)(gw_dp *dp);              /* optional: before rx_burst */
	void (*on_rx)(gw_dp *dp, const gw_pkt *p, int tag);   /* optional */
	void (*on_wait)(gw_dp *dp, unsigned timeout_us);      /* optional */
	void *arg;              /* fc_dp_arg() */
	uint32_t pool;          /* most packets allocated at once (0: no limit) */
	uint32_t tx_max;        /* most packets one tx_burst takes (0: all) */
	int regions;            /* names its packet memory (gw_dp_regions) */
};

/* A fake dataplane at local with packets of payload_max bytes; NULL on no
 * memory. */
gw_dp *fc_dp_new(const gw_endpoint *local, uint32_t payload_max,
		 const struct fc_hooks *hooks);
/* Frees what is still queued and the dataplane; every packet it allocated
 * must have come back (aborts otherwise: a leak of the code under test). */
void fc_dp_delete(gw_dp *dp);
void *fc_dp_arg(gw_dp *dp);
/* Queues a copy of data[0..len) (a packet of exactly len bytes) from peer,
 * with tag for on_rx. */
void fc_dp_push(gw_dp *dp, const uint8_t *data, uint32_t len,
		const gw_endpoint *peer, int tag);
/* Packets transmitted so far. */
uint64_t fc_dp_sent(gw_dp *dp);
/* The next calls tx_bursts with packets take none (a stalled device). */
void fc_dp_stall(gw_dp *dp, unsigned calls);

/* A packet of exactly len bytes (at least 1) outside any pool. */
gw_pkt *fc_pkt_new(uint32_t len);
void fc_pkt_free(gw_pkt *p);

/* ---- the clock --------------------------------------------------------- *
 *
 * coll_fake.c defines clock_gettime(), which the collective layer reads
 * its time through (gw_now_ns()): while the harness's clock runs,
 * CLOCK_MONOTONIC is virtual, starting at 1 s, advancing 1 us at each look
 * and as much as fc_clock_advance() says (a wait); otherwise, and for every
 * other clock, it is the system's. Retransmission timers, backoff and
 * timeouts then behave the same on every replay of an input and cost no
 * real time. */
void fc_clock_start(void);
void fc_clock_stop(void);
void fc_clock_advance(uint64_t ns);
uint64_t fc_clock_ns(void);   /* without advancing it */

/* ---- jobs -------------------------------------------------------------- */

/* A countsketch-uplink job becomes a Sketched-SGD job, its k and
 * candidates from cfg[7] (FC_SK_TOPK, FC_SK_CAND_K); other jobs are left
 * alone. The engine fields live in a static: a harness has one job at a
 * time, and the library copies them when the job is used. */
static inline void fc_sketch_sizes(gw_coll_job *job, uint8_t cfg7)
{
	static const uint32_t topk[] = {0, 1, 5, 50};
	static gw_sketched_job sk;
	if (job->up_codec != GW_CODEC_COUNTSKETCH)
		return;
	sk = (gw_sketched_job){.topk = topk[(cfg7 & FC_SK_TOPK) >> 5]};
	if (cfg7 & FC_SK_CAND_K)
		sk.candidates = sk.topk;   /* 0 with k: the defaults */
	job->engine = GW_COLL_SKETCHED;
	job->engine_params = &sk;
}

/* ---- seals ------------------------------------------------------------- */

struct coll_layout;
struct gw_pkt_hdr;

/* Seals the packet at p (header h, body_len bytes of body after the header,
 * room for a MAC after it) the way mode (FS_*) says, for job layout L.
 * Returns the packet length. */
uint32_t fc_seal(const struct coll_layout *L, int mode, uint8_t *p,
		 struct gw_pkt_hdr *h, uint32_t body_len);

#endif /* GW_FUZZ_COLL_H */
