/* gw-allreduce's parts (main.c: the options and --check; run.c: a
 * worker's rounds). */
#ifndef GW_ALLREDUCE_H
#define GW_ALLREDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "coll_cli.h"

struct opts {
	uint64_t rank, rounds, seed, timeout_ms, rto_us, first_round, lag_ms, ports;
	const char *aggs, *dump, *check;
	/* --check --left R:K: rank R ran K rounds and left (loss-tolerant
	 * eviction): its gradients count K rounds, its received sums are its
	 * own. left_rank = UINT64_MAX: none. */
	uint64_t left_rank, left_rounds;
	uint64_t rejoin_ms;        /* --rejoin: gw_comm_join before the first call */
	double train_lr;           /* --train-lr: the toy training loop (toy.c) */
	const char *param_file;    /* --param-file: rank 0 writes it, a rejoiner reads it */
	uint64_t until_round;      /* --until-round: stop once the job's round is this */
	bool have_rank, verify, json, host_shard, same_grad;
	const char *gpu;
	gw_endpoint shard[GW_COLL_SHARDS_MAX];
	unsigned nshard;
};

/* Rank w's gradient of round r: heavy-tailed, a quarter zeros. The
 * model, --check and every rank compute every rank's from the seed. */
void synth(float *g, uint64_t n, uint64_t seed, uint64_t w, uint64_t r);

/* A worker's job, from the parsed options: the process's exit code. */
int worker_run(struct cli *c, struct opts *o);

#endif /* GW_ALLREDUCE_H */
