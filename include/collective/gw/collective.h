/* gradwire collectives: allreduce of compressed gradients through a
 * sharded software aggregator (a parameter server, or what SwitchML and
 * ATP do in a switch), over any dataplane backend.
 *
 * A tensor of dim float32 elements is cut into chunks of chunk_elems
 * elements; chunk c belongs to aggregator shard c % shards. Each worker
 * encodes its gradient with the uplink codec, one frame per chunk, and
 * sends each frame to the chunk's shard. The shard decode-accumulates
 * every worker's frame into a slot exactly once (a per-worker bitmap);
 * when all workers are in — or, in loss-tolerant mode, when the chunk's
 * deadline has passed — it encodes the sum with the downlink codec and
 * sends it to every worker. Workers decode-accumulate the results into
 * their output: after one call every worker holds the same sum.
 *
 * Slots are reused SwitchML-style: each of a shard's `window` slots has two
 * copies, so a finished chunk's result (the shadow copy) answers
 * retransmissions while the next chunk of that slot fills the other copy.
 * A worker sends a shard's chunk p only once it holds the result of the
 * chunk that used the other copy before it (p - window), which tells the
 * shard that this worker no longer needs that result: once every worker
 * has said so the copy can be reset.
 *
 * Wire: UP and RESULT packets (docs/wire-format.md §5), header checksum
 * plus the frame's own; with a job key every packet also carries a keyed
 * BLAKE2b MAC (libsodium) and unauthenticated packets are dropped.
 */
#ifndef GW_COLLECTIVE_H
#define GW_COLLECTIVE_H

#include <signal.h>

#include <gw/codec.h>
#include <gw/dataplane.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GW_KEY_LEN 32u            /* job key bytes */
#define GW_COLL_WORKERS_MAX 1024u  /* contributor bitmap: 128 bytes */
#define GW_COLL_SHARDS_MAX 256u
#define GW_COLL_WINDOW_MAX 4096u

typedef enum gw_coll_mode {
	/* Selective repeat until every worker's chunk is in: the result is
	 * bit-identical to a loss-free run. */
	GW_COLL_RELIABLE = 0,
	/* A chunk still short of contributions deadline_us after its first
	 * one is finished without them; a worker left out puts its frame
	 * back into its error-feedback buffer (sent next round) and the call
	 * reports the chunk short. Results themselves still reach every
	 * worker (they retransmit until they have them), so every replica
	 * applies the same sum. */
	GW_COLL_LOSS_TOLERANT = 1,
} gw_coll_mode;

/* The protocol engine a job runs: what goes on the wire between workers
 * and shards. Each is one entry of the collective's engine table. */
typedef enum gw_coll_engine {
	/* gw_allreduce(): every coordinate, chunk by chunk, through the
	 * job's uplink and downlink codecs. */
	GW_COLL_DENSE = 0,
	/* Sketched-SGD's two rounds (below), a sparse result
	 * (gw_allreduce_result); the uplink codec is countsketch, the
	 * downlink key sets. */
	GW_COLL_SKETCHED = 1,
} gw_coll_engine;

/* Sketched-SGD's own fields (engine GW_COLL_SKETCHED). */
typedef struct gw_sketched_job {
	/* k coordinates updated per step (0: gw_sketched_sizes_default),
	 * candidates P k queried in the second round (0: 4 k), worker
	 * momentum rho in [0, 1). The sketch's rows, cols and seed are the
	 * job's up_params ("rows=5,cols=2000"); cols defaults to
	 * gw_sketched_sizes_default's, not the codec's. */
	uint32_t topk, candidates;
	float momentum;
} gw_sketched_job;

#define GW_COLL_TENSORS_MAX 1048576u

/* The dense engine's own fields (engine GW_COLL_DENSE; NULL: all zero).
 * (GRADWIRE_0.5: 0.4 refused any.)
 *
 * tensors: the flat tensor of dim elements is ntensors tensors laid end to
 * end (a model's layers), of tensor_elems[i] elements each, summing to
 * dim; 0: one tensor. No chunk straddles two, and each has its own
 * compression context in each direction: a worker encodes tensor by
 * tensor (3LC's m, TernGrad's statistics and the error buffer's slice
 * are that tensor's), a shard chunk by chunk, each chunk inside one
 * tensor. Frames carry the tensor's index and count from its first
 * element (docs/wire-format.md §5.7).
 *
 * min_elems: tensors of fewer elements (biases, norms) go raw both ways,
 * one chunk each, as 3LC leaves batch-norm layers uncompressed; 0: none.
 * At most what one raw frame of a packet holds.
 *
 * down_momentum: state changes on the downlink (3LC's placement): 0 (the
 * default) sends the sum of the workers' gradients down, and the
 * workers' optimizers apply momentum; mu in (0, 1) makes each shard keep
 * v <- mu v + sum per chunk and send v, so the workers' optimizers run
 * with momentum 0 and apply what they receive. The shard's error buffer
 * then holds what v's compression left out. */
typedef struct gw_dense_job {
	uint32_t ntensors;
	const uint64_t *tensor_elems;
	uint32_t min_elems;
	float down_momentum;
} gw_dense_job;

/* What workers and aggregators of one job must agree on. */
typedef struct gw_coll_job {
	uint32_t job;           /* packets of other jobs are dropped */
	uint64_t dim;           /* tensor elements */
	uint32_t chunk_elems;   /* elements per chunk: a multiple of 40, and
				 * one chunk's frame must fit one packet with
				 * either codec; 0: gw_coll_chunk_elems() */
	uint16_t workers;       /* W, 1 .. GW_COLL_WORKERS_MAX */
	uint16_t shards;        /* S, 1 .. GW_COLL_SHARDS_MAX */
	uint32_t window;        /* slots per shard = chunks a worker has in
				 * flight per shard; 0: 64 */
	int up_codec, down_codec;          /* gw_codec_id; 0: the engine's
					    * (dense: raw; down after an hq
					    * uplink: hq, its integer sum) */
	/* "name=value,..." codec parameters (gw_param_by_name), or NULL.
	 * max_frame_elems is the layer's own. */
	const char *up_params, *down_params;
	gw_coll_mode mode;
	uint32_t deadline_us;   /* loss-tolerant: see above; 0: 20000 */
	const uint8_t *key;     /* GW_KEY_LEN bytes, or NULL: no MAC */
	gw_coll_engine engine;
	/* The engine's own fields, read when the job is checked or a
	 * communicator or shard is made (not kept): GW_COLL_SKETCHED: a
	 * gw_sketched_job, GW_COLL_DENSE: a gw_dense_job; NULL for the
	 * engine's defaults. */
	const void *engine_params;
} gw_coll_job;

/* Largest chunk (a multiple of 40 elements) whose frame fits one packet of
 * payload_max bytes with both codecs of job (found by encoding a worst
 * case), or GW_E* with a detail (gw_error_detail). */
GW_API int gw_coll_chunk_elems(const gw_coll_job *job, uint32_t payload_max);

/* Validates job (ranges, codecs, their parameters, the engine's fields):
 * 0, or GW_E* with a detail (gw_error_detail) that names the bad field,
 * e.g. "shards: must be 1 .. 256". (GRADWIRE_0.2: 0.1 returned the text
 * through a second argument, and still does for binaries built against
 * it.) */
GW_API int gw_coll_job_check(const gw_coll_job *job);

/* Reads a job key: 64 hex digits (whitespace around them allowed) from the
 * file at path. 0 or GW_EINVAL / GW_EIO, with a detail. */
GW_API int gw_coll_key_load(const char *path, uint8_t key[GW_KEY_LEN]);

/* ---- worker ------------------------------------------------------------- */

typedef struct gw_comm gw_comm;

typedef struct gw_comm_config {
	gw_coll_job job;
	uint16_t rank;                /* 0 .. workers - 1 */
	const gw_endpoint *shards;    /* job.shards endpoints, shard i first */
	uint32_t rto_us;              /* retransmission timeout; 0: 5000 */
	uint32_t timeout_ms;          /* one allreduce gives up after; 0: 60000 */
	uint32_t first_round;         /* round of the first call; then +1 each */
} gw_comm_config;

typedef struct gw_allreduce_info {
	uint32_t round;
	uint32_t chunks;          /* chunks of the tensor */
	uint32_t short_chunks;    /* finished without every worker */
	const uint32_t *shorts;   /* their indices, ascending; valid until the
				   * next call */
	uint32_t left_out;        /* of them, chunks without this worker: its
				   * frame went back to its error buffer */
	uint64_t bytes_up;        /* UDP payload bytes this worker sent */
	uint64_t bytes_down;      /* and received (RESULT packets, repeats too) */
	/* The same without re-sends and repeats: first transmissions, and
	 * results (pieces) taken. They depend on the data only, not on timing:
	 * what the protocol costs on a loss-free network. */
	uint64_t bytes_up_once, bytes_down_once;
} gw_allreduce_info;

typedef struct gw_comm_stats {
	uint64_t rounds, chunks_sent, retransmits, results, bytes_up;
	uint64_t bytes_down;      /* RESULT bytes received, repeats included */
	uint64_t duplicates;      /* results received again */
	uint64_t stale;           /* another round, tensor, or a chunk not sent */
	uint64_t foreign;         /* another job */
	uint64_t bad;             /* malformed, wrong type, frame outside its
				   * chunk or of the wrong codec */
	uint64_t corrupt;         /* header or frame checksum */
	uint64_t unauthenticated; /* no MAC while the job has a key */
	uint64_t forged;          /* a MAC that does not verify */
	uint64_t short_chunks, left_out;
} gw_comm_stats;

/* NULL on a bad config (see gw_coll_job_check), a backend whose packets
 * cannot hold a chunk, or no memory; gw_error_detail() says which. The
 * communicator keeps its own copy of the config (shards and key included)
 * and an error-feedback buffer of job.dim elements for lossy uplink
 * codecs and for loss-tolerant mode. */
GW_API gw_comm *gw_comm_create(gw_dp *dp, const gw_comm_config *cfg);
/* The same with a dataplane per shard: dps[s] reaches shard s (ndp =
 * job.shards), as a memif worker needs, whose every port joins it to one
 * process; ndp = 1 is gw_comm_create(dps[0], cfg). Packets are sized for
 * the smallest payload of the ndp. */
GW_API gw_comm *gw_comm_create_ports(gw_dp *const *dps, unsigned ndp,
				     const gw_comm_config *cfg);
GW_API void gw_comm_free(gw_comm *c);              /* accepts NULL */

/* Device tensors: from now on grad and out of gw_allreduce are pointers
 * into g's memory (a CUDA device's, or the host emulation's; see
 * <gw/gpudirect.h>), encoded by gpudirect's kernels straight into packet
 * memory, which this call registers with g, and results decoded by them
 * into out. The error buffer moves to g's memory too (gw_comm_residual
 * then returns a pointer there). Before the first allreduce only; c does
 * not own g, which must outlive it. GW_EUNSUPPORTED with a detail: not the
 * dense engine, a codec without kernels (raw, bf16, int8, 3lc and topk
 * have them), or a backend that cannot name its packet
 * memory. (GRADWIRE_0.3) */
typedef struct gw_gpu gw_gpu;
GW_API int gw_comm_set_gpu(gw_comm *c, gw_gpu *g);
/* After gw_comm_set_gpu: how frames reach the NIC, and why not from GPU
 * memory by dma-buf (the probes of gw_gpu_dmabuf and gw_dp_dmabuf); NULL
 * without an executor. (GRADWIRE_0.3) */
GW_API const char *gw_comm_gpu_handoff(const gw_comm *c);

/* Liveness: c heartbeats to its shards every ms / 8 (from a thread between
 * calls, so a long backward pass is alive) and judges each shard with a
 * failure detector over the gaps between its packets (docs/collective.md,
 * "Faults"): a shard silent for at least ms, for longer than its own
 * history makes likely (or for 5 ms whatever its history), is suspected
 * and probed; one that stays silent ms more is dead, and the call fails
 * with GW_EPEER naming it. So a dead shard is named 2 ms after it died
 * (at most 6 ms for one whose packets came late before), and a live one
 * that is only slow is not. A call also fails with GW_EPEER when a shard
 * reports a worker dead or gone, and with GW_ECONFIG, naming the setting,
 * when a shard was told otherwise (dim, workers, payload, codecs, key,
 * ...). Default 1000 ms from gw_comm_create (the environment's
 * GW_LIVENESS_MS, where set, replaces it for every communicator and
 * shard); 0 turns it off; below 10 is refused. A clean gw_comm_free says
 * goodbye to the shards. GW_EPEER and GW_ECONFIG stay: later calls fail
 * the same way. (GRADWIRE_0.3) */
GW_API int gw_comm_set_liveness(gw_comm *c, uint32_t ms);

/* Start-up: a shard not heard from at all is "not yet up", not silent
 * (its process may still be setting up its EAL, its links, its memory):
 * calls wait for it up to ms after the first call began, then fail with
 * GW_EPEER, "shard 1 (10.77.1.201:7000) never came up in 30 s". Default
 * 30000 ms (GW_STARTUP_MS in the environment replaces it for every
 * communicator and shard); 0: no limit of its own (the call's timeout
 * still holds). (GRADWIRE_0.4) */
GW_API int gw_comm_set_startup(gw_comm *c, uint32_t ms);

/* What liveness saw: peers suspected and cleared by a probe's answer or
 * a late packet, probes, and two distributions in µs (quantiles of a
 * histogram with four buckets to an octave, so within 19 %): how late
 * this process's heartbeats left after their time (its own starvation),
 * and the gaps between its peers' packets that the detector learns from
 * (theirs, and the network's). */
typedef struct gw_liveness_stats {
	uint64_t suspected, cleared;        /* peers suspected; of them, heard again */
	uint64_t probes_sent, probes_answered;
	uint64_t never_up;                  /* peers that never came up in time */
	uint64_t hb_sent;                   /* heartbeats sent on schedule */
	uint64_t hb_late_p50_us, hb_late_p99_us, hb_late_max_us;
	uint64_t gaps;                      /* gap samples */
	uint64_t gap_p50_us, gap_p99_us, gap_p999_us, gap_max_us;
} gw_liveness_stats;
/* Between calls, or from c's report function. (GRADWIRE_0.4) */
GW_API void gw_comm_liveness_get(const gw_comm *c, gw_liveness_stats *s);

/* Loss-tolerant rejoin: a worker restarted with the rank (and key) of one
 * the job evicted calls this before its first allreduce. It says hello
 * until every shard has answered (a shard takes a new process of a rank
 * once the old one is gone: within the liveness interval of its death),
 * and moves c to the round the job goes on with (*round, if not NULL):
 * its calls from then on are that round's. Its parameters are the
 * framework's to restore (gw-train: a broadcast from rank 0). 0, or
 * GW_ETIMEDOUT naming how many shards answered, GW_EUNSUPPORTED in a
 * reliable job, GW_ESTATE after a call or with liveness off.
 * (GRADWIRE_0.3) */
GW_API int gw_comm_join(gw_comm *c, uint32_t timeout_ms, uint32_t *round);

/* Counters while running: fn(arg) every ms while a call of c runs (from
 * the calling thread, between packets, so what it reads is consistent);
 * between calls the caller reports itself. 0 turns it off. The same for a
 * shard, from its serving thread. (GRADWIRE_0.3) */
typedef void (*gw_report_fn)(void *arg);
GW_API int gw_comm_set_report(gw_comm *c, uint32_t ms, gw_report_fn fn, void *arg);

/* out[0..dim) <- the sum over workers of their (compressed) grad[0..dim).
 * grad and out may be the same array. Returns 0 and fills *info (if not
 * NULL), or GW_ETIMEDOUT / GW_E* (GW_EUNSUPPORTED: the job's result is
 * not dense, see gw_allreduce_result); after an error the error buffer still holds
 * everything not known to be delivered, out is undefined. */
GW_API int gw_allreduce(gw_comm *c, const float *grad, float *out,
			gw_allreduce_info *info);

/* ---- pipelined rounds: tensors handed over as they become ready -------- *
 *
 * A framework's backward pass produces a model's gradients tensor by
 * tensor. A dense job with a layout (gw_dense_job's tensor_elems) runs a
 * round whose tensors the caller hands over one at a time, from any
 * thread, while the round runs, so the first tensors are on the wire
 * while later ones are still being computed:
 *
 *   thread A: gw_allreduce_pipelined(c, tag, &info)     runs the round
 *   thread B: gw_comm_tensor_ready(c, tag, t, data, dtype, scale)  each t
 *   thread C: gw_comm_tensor_wait(c, tag, t, ms)        its results in
 *
 * Each tensor's values are read from data in place (float32; bf16 and
 * fp16 are widened into a scratch of one tensor as its first chunk is
 * encoded, the encoder's statistics needing all of it) and its results
 * are written back into data chunk by chunk as they come, multiplied by
 * scale (1/W for an average) and narrowed to dtype while the chunk is in
 * cache: no flat copy of the model, no pass of its own for the scaling. Chunks go in the layout's order: a tensor
 * handed over before the ones ahead of it in the layout waits for them
 * (correct in any order, fastest in the layout's). tag names the round
 * (nonzero, not the previous round's); tensors may be handed over before
 * the round's call starts. The caller leaves data alone from its
 * hand-over until tensor_wait returns 0 for it. The error buffer is kept
 * by element of the layout, as gw_allreduce keeps it, so both calls may
 * be mixed in one job. A device executor (gw_comm_set_gpu) is not taken
 * (GW_EUNSUPPORTED). (GRADWIRE_0.6) */
typedef enum gw_dtype {
	GW_DTYPE_F32 = 0,
	GW_DTYPE_BF16 = 1,
	GW_DTYPE_F16 = 2,
} gw_dtype;

/* Tensor `tensor` of the layout is ready for round tag. GW_EINVAL (a bad
 * argument, named), GW_ESTATE (handed over twice for tag), or 0. */
GW_API int gw_comm_tensor_ready(gw_comm *c, uint32_t tag, uint32_t tensor, void *data,
				gw_dtype dtype, float scale);

/* Runs round tag until every tensor's results are in: 0 and *info as
 * gw_allreduce gives, or its errors. Tensors not handed over by the
 * timeout (gw_comm_config's timeout_ms from the call's start) fail it. */
GW_API int gw_allreduce_pipelined(gw_comm *c, uint32_t tag, gw_allreduce_info *info);

/* Waits up to timeout_ms for tensor's results of round tag: 0, the
 * round's error (it failed, or was cancelled), or GW_ETIMEDOUT. */
GW_API int gw_comm_tensor_wait(gw_comm *c, uint32_t tag, uint32_t tensor,
			       uint32_t timeout_ms);

/* Round tag fails with rc (a GW_E*, the caller's reason: a tensor it
 * cannot hand over): a call running it returns rc at its next step (its
 * frames go back to the error buffer), one not yet started at once, and
 * waiters wake with rc. */
GW_API int gw_comm_round_cancel(gw_comm *c, uint32_t tag, int rc);

/* ---- Sketched-SGD: the two-round heavy-hitter allreduce ------------------ *
 *
 * Algorithm 3 of Ivkin et al. (NeurIPS 2019), distributed for real: each
 * worker keeps momentum u <- rho u + g and error accumulation v <- v + u,
 * and sends the count sketch of v (countsketch frames, one slice of one
 * table row per packet). The shard adds the slices cell by cell — the sum
 * of sketches is the sketch of the sum — and runs HEAVYMIX: it estimates
 * all dim coordinates from the summed table, picks the P k largest
 * estimates (radix select, no sort) and sends those indices to every
 * worker as delta-binary key sets. Round two: every worker sends its exact
 * v at those indices (float32, in index order), the shard sums them,
 * keeps the k largest and sends that k-sparse update to every worker,
 * which zeroes u and v where it was applied (momentum correction and
 * factor masking). Per worker and step: |S| + P k floats up, P k keys and
 * k key/value pairs down, whatever the number of workers.
 *
 * One shard (HEAVYMIX needs the whole table), reliable or loss-tolerant
 * mode as for gw_allreduce. Reliable: the update is bit-identical to the
 * algorithm run in one process over the same gradients (sums in rank
 * order). Loss-tolerant: a phase finishes at its deadline with the workers
 * whose every packet of it arrived; a worker left out of the second round
 * keeps its v at the updated coordinates (applied == 0), so no gradient
 * mass is lost: updates applied plus every worker's v equal every
 * gradient (with momentum 0). Wire: docs/wire-format.md §5.8. */
typedef struct gw_sparse_update {
	uint32_t nnz;             /* k */
	const uint64_t *keys;     /* ascending; valid until the next call */
	const float *values;      /* sum of the contributors' v at keys */
	int applied;              /* this worker's v was in the sum (and its u
				   * and v were zeroed there) */
	uint32_t contributors;    /* workers in the second round's sum */
} gw_sparse_update;

/* What a round gives back, described without naming the engine that made
 * it: the dense sum, or a sparse update (Sketched-SGD's). A caller that
 * handles both runs every engine, present and future. (GRADWIRE_0.8) */
typedef enum gw_result_kind {
	GW_RESULT_DENSE = 0,      /* every coordinate: the sum over workers */
	GW_RESULT_SPARSE = 1,     /* nnz coordinates: apply w -= lr * values / W */
} gw_result_kind;

typedef struct gw_result {
	gw_result_kind kind;
	gw_sparse_update sparse;  /* kind GW_RESULT_SPARSE; zero otherwise */
} gw_result;

/* The kind of result c's rounds give, known from the job alone. */
GW_API gw_result_kind gw_comm_result_kind(const gw_comm *c);

/* One round of c's job, whatever its engine, with this worker's gradient
 * grad[0..dim). out (dim floats, may be grad): the result as a dense
 * gradient: the sum, or zero but at a sparse result's keys. out may be
 * NULL only when the result is sparse and r is given. r (may be NULL):
 * the result's kind and, when sparse, the update (valid until the next
 * call). Otherwise as gw_allreduce. (GRADWIRE_0.8) */
GW_API int gw_allreduce_result(gw_comm *c, const float *grad, float *out,
			       gw_result *r, gw_allreduce_info *info);

/* The engine that runs a job whose uplink is up_codec (0: the default):
 * countsketch is Sketched-SGD's, every other codec the dense engine's.
 * What a front end sets as gw_coll_job.engine when its user names only a
 * codec. (GRADWIRE_0.8) */
GW_API gw_coll_engine gw_coll_engine_for(int up_codec);

/* GRADWIRE_0.1's form of a Sketched-SGD step: gw_allreduce_result's
 * sparse update in *up. GW_EUNSUPPORTED on a job whose result is dense.
 * Kept for its callers; new code calls gw_allreduce_result. */
GW_API int gw_allreduce_sketched(gw_comm *c, const float *grad,
				 gw_sparse_update *up, gw_allreduce_info *info);

/* The error-feedback buffer (dim floats), or NULL when the job has none.
 * Sketched-SGD: the error accumulation v. */
GW_API const float *gw_comm_residual(const gw_comm *c);
GW_API void gw_comm_stats_get(const gw_comm *c, gw_comm_stats *st);

/* ---- aggregator --------------------------------------------------------- */

typedef struct gw_agg gw_agg;

typedef struct gw_agg_config {
	gw_coll_job job;
	uint16_t shard;           /* this shard, 0 .. shards - 1 */
} gw_agg_config;

typedef struct gw_agg_stats {
	uint64_t ups, results_sent, results_resent, bytes_down;
	uint64_t chunks_done, chunks_short;
	uint64_t duplicates;      /* an UP already counted */
	uint64_t late;            /* an UP for a chunk finished without it */
	uint64_t stale;           /* an old round or chunk, another tensor */
	uint64_t early;           /* held back: its slot's previous result is
				   * not yet known to be with every worker */
	uint64_t foreign, bad, corrupt, unauthenticated, forged;
	uint64_t tx_refused;      /* results the device would not take */
} gw_agg_stats;

/* A shard serving workers through ndp dataplanes (one UDP socket, or one
 * memif port per worker): it answers a worker on the dataplane and address
 * its last accepted packet came from. NULL on a bad config or no memory;
 * gw_error_detail() says which. */
GW_API gw_agg *gw_agg_create(gw_dp **dps, unsigned ndp, const gw_agg_config *cfg);
GW_API void gw_agg_free(gw_agg *a);                /* accepts NULL */

/* Serves until *stop becomes non-zero (a signal handler sets it), or
 * until idle_exit_ms pass without a packet once at least one came (0:
 * never). Returns 0, or GW_E* on a device error. */
GW_API int gw_agg_serve(gw_agg *a, volatile sig_atomic_t *stop,
			uint32_t idle_exit_ms);

GW_API void gw_agg_stats_get(const gw_agg *a, gw_agg_stats *st);

/* Liveness (as gw_comm_set_liveness): the shard heartbeats to the workers
 * it knows every ms / 8 and finds a worker silent for ms, or one that said
 * goodbye, gone. Reliable mode: a worker waiting on a chunk that can no
 * longer finish is told which worker is gone (its call fails with
 * GW_EPEER naming it); loss-tolerant mode: the worker is evicted, its
 * slots stop waiting for it, and it is back when heard again. A worker
 * told other settings is answered with what differs, and gw_agg_serve
 * returns GW_ECONFIG naming it. Default 1000 ms; 0 turns it off.
 * Call before serving. (GRADWIRE_0.3) */
GW_API int gw_agg_set_liveness(gw_agg *a, uint32_t ms);
/* Start-up (as gw_comm_set_startup): once the first worker is heard, a
 * worker not heard within ms is gone, "never came up in 30 s" (reliable:
 * every worker waiting on it is told; loss-tolerant: the job goes on
 * without it until it comes). Call before serving. (GRADWIRE_0.4) */
GW_API int gw_agg_set_startup(gw_agg *a, uint32_t ms);
/* As gw_comm_liveness_get; from another thread while the shard serves,
 * approximate. (GRADWIRE_0.4) */
GW_API void gw_agg_liveness_get(const gw_agg *a, gw_liveness_stats *s);
GW_API int gw_agg_set_report(gw_agg *a, uint32_t ms, gw_report_fn fn, void *arg);

typedef struct gw_agg_faults {
	uint64_t ctrl_sent, ctrl_received;   /* CTRL packets */
	uint64_t gone;            /* workers found silent or gone, all told */
	uint64_t back;            /* of them, heard again */
	uint64_t gone_now;        /* gone at this moment */
	uint64_t problems;        /* notes (gw_agg_problem) */
	uint64_t impostors;       /* CTRL packets claiming a known worker from
				   * another address (ignored) */
} gw_agg_faults;
/* Safe from another thread while the shard serves, as is gw_agg_problem:
 * the latest note (a worker told otherwise, a CTRL that failed the MAC
 * but shows another key) into buf; its length. (GRADWIRE_0.3) */
GW_API void gw_agg_faults_get(const gw_agg *a, gw_agg_faults *f);
GW_API int gw_agg_problem(gw_agg *a, char *buf, size_t len);

/* ---- co-located shard --------------------------------------------------- *
 *
 * A shard served by a progress thread of the calling process, so that
 * each worker of a job can host one (shard i in worker i's process, with
 * shards == workers): the job needs no aggregator process, and its
 * traffic takes the reduce-scatter / all-gather pattern. The shard keeps
 * its own dataplane (never the worker's). (GRADWIRE_0.3) */
typedef struct gw_agg_thread gw_agg_thread;

/* Starts gw_agg_serve(a) (no idle exit) on a new thread. The shard stays
 * the caller's: touch it again (stats, free) only after gw_agg_join. NULL
 * with a detail when no thread can be made. */
GW_API gw_agg_thread *gw_agg_spawn(gw_agg *a);
/* 1 while the thread serves; once gw_agg_serve returned by itself (a
 * device error), what it returned, with its detail. */
GW_API int gw_agg_thread_status(const gw_agg_thread *t);
/* Stops the thread and waits for it (one idle wait at most, about 1 ms);
 * returns what gw_agg_serve returned, with its detail. Accepts NULL. */
GW_API int gw_agg_join(gw_agg_thread *t);

#ifdef __cplusplus
}
#endif
#endif /* GW_COLLECTIVE_H */
