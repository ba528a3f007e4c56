/* Oracles of the allreduce: in-process models of what a job must deliver,
 * written apart from collective/ with the public codec and sketch API
 * only. If the collective layer and a model disagree, one of them got the
 * protocol wrong. gw-allreduce checks every round against them; the fuzz
 * harnesses of the collective's receive paths (tests/fuzz/) check the
 * shard's results and the worker's returns with them. */
#ifndef GW_ORACLE_H
#define GW_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include <gw/collective.h>
#include <gw/sketch.h>

/* ---- one chunk (chunk.c) -------------------------------------------------
 *
 * A chunk is a tensor of its own on the wire when the codec's frames are
 * sparse (keys from the chunk's start), a window [base, base + len) of
 * the whole tensor when they are dense. */

/* An encoder of codec with params ("k=v,...", NULL for none) and frames of
 * at most k elements; NULL on a bad parameter or no memory. */
gw_encoder *oracle_encoder(int codec, const char *params, uint32_t k);

/* 1 if the codec's frames with these params are sparse, 0 if dense, or
 * GW_E*. */
int oracle_frames_sparse(int codec, const char *params);

/* The one frame that holds all of t, as a worker sends a chunk: its
 * length, or GW_E* (GW_EBUDGET when t does not fit one frame of room
 * bytes). The encoder is idle again afterwards either way. */
int oracle_encode_one(gw_encoder *e, const gw_tensor *t, uint8_t *frame, size_t room);

/* Adds frame (n bytes, of the chunk [base, base + len)) into dst, which
 * holds that chunk. 0 or GW_E*. */
int oracle_decode_chunk(int sparse, const uint8_t *frame, size_t n, float *dst,
			uint64_t base, uint32_t len);

/* A shard's sum, one contribution at a time: the frame decoded into part
 * (zeroed first, len floats), then added into sum. Called in rank order
 * on a zeroed sum it is the 0 + g0 + g1 + ... a shard must send. */
int oracle_chunk_add(int sparse, const uint8_t *frame, size_t n, uint64_t base,
		     uint32_t len, float *part, float *sum);

/* ---- a dense job (dense.c) ------------------------------------------------
 *
 * Every worker's encoder (with its error feedback), the shard's per-chunk
 * sum in rank order and its downlink encoder (with its own feedback). Fed
 * the same gradients, it produces the bit-exact result the real job must
 * deliver while no chunk is short. */
struct oracle_dense;

struct oracle_dense *oracle_dense_create(const gw_coll_job *job);
void oracle_dense_free(struct oracle_dense *r);   /* accepts NULL */
/* The round number of the next oracle_dense_round (the job's first call's,
 * 0 unless set): hq rotates each chunk by a seed of the round. */
void oracle_dense_set_round(struct oracle_dense *r, uint32_t round);
/* grads[w] for every worker w; out (dim floats): this round's result. */
int oracle_dense_round(struct oracle_dense *r, const float *const *grads, float *out);

/* ---- Sketched-SGD (sketched.c) --------------------------------------------
 *
 * Algorithm 3 in one process over every worker's gradient: momentum and
 * error accumulation per worker, the summed sketch, HEAVYMIX and the
 * second round. It produces the update the real job must deliver, while
 * no round is short. */

/* A job's sizes, derived from the job alone (the defaults documented with
 * gw_coll_job and gw_sketched_sizes), on purpose apart from the
 * collective's own derivation. 0, or -1 if the job's sizes are invalid. */
struct oracle_sk_sizes {
	uint32_t k, m;        /* updated per step, candidates */
	gw_csk csk;           /* the sketch */
};
int oracle_sk_sizes(const gw_coll_job *job, struct oracle_sk_sizes *s);

struct oracle_sketched;

struct oracle_sketched *oracle_sketched_create(const gw_coll_job *job);
void oracle_sketched_free(struct oracle_sketched *s);   /* accepts NULL */
/* g[w] for every worker w; out (dim floats): the update of this round,
 * zero off its k coordinates. */
int oracle_sketched_round(struct oracle_sketched *s, const float *const *g, float *out);

#endif
