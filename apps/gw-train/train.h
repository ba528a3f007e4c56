/* gw-train: data-parallel training whose gradients travel through the
 * gradwire allreduce. One binary, two roles: without --rank it is the
 * driver (starts gw-launch, which starts the aggregator and W copies of
 * this binary as workers, and reads rank 0's records); with --rank (or
 * --mpi) it is a worker. */
#ifndef GW_TRAIN_H
#define GW_TRAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "coll_cli.h"

enum model_kind { MODEL_LOGREG, MODEL_SVM, MODEL_LINREG, MODEL_MLP };

#define FWD_MAX 32   /* job options the driver forwards to gw-launch */

struct train_opts {
	enum model_kind model;
	const char *model_name;
	const char *data_dir, *train_path, *test_path;
	uint64_t epochs, min_epochs, batch, hidden, features, classes, evals, seed, step_ms;
	double lr, momentum, l2, target_acc;     /* target_acc < 0: none */
	bool json, verbose;
	/* 3LC's placements (docs/3lc-paper.md): one_tensor, the whole model
	 * one tensor of the job (before 0.5; default: each layer's weights
	 * and biases a tensor); shard_momentum, the momentum at the shards,
	 * which send the state change; cosine, the learning rate decays to 0
	 * over the run's steps (the paper's schedule). */
	bool one_tensor, shard_momentum, cosine;
	/* driver */
	const char *link, *keep_logs, *plot, *baseline_from, *label;
	bool baseline;
	uint64_t launch_workers, launch_shards;
	const char *launcher_opt;   /* a job option gw-launch sets, if given */
	const char *fwd[FWD_MAX][2];
	unsigned nfwd;
	/* worker */
	uint64_t rank, timeout_ms, rto_us;
	bool have_rank;
	const char *aggs;
	uint64_t rejoin_ms;        /* --rejoin: a restarted worker joins the job */
	const char *param_file;    /* --param-file: replicas written, a rejoiner's read */
	uint64_t restart;          /* driver --restart: gw-launch's, loss-tolerant */
};

/* One evaluation point of a run, as rank 0 prints it (one JSON line). */
struct record {
	double epoch, time_s, train_loss, test_loss, test_acc;
	uint64_t step, bytes_up, retransmits;
	/* RESULT bytes taken; 0 in records written before it was kept. With
	 * bytes_up, the total traffic Sketched-SGD's target is stated in. */
	uint64_t bytes_down;
	double ratio;   /* raw float32 bytes of the gradients / bytes_up */
};

struct run {
	char label[64];
	struct record *rec;
	unsigned n, cap;
};

/* The model's tensors (layers' weights and biases) in parameter order, as
 * "N,N,..." in buf: the job's --layout. */
void train_layout(const struct train_opts *o, char *buf, size_t len);

/* worker.c */
int train_worker(struct cli *c, struct train_opts *o);

/* driver.c */
int train_driver(struct train_opts *o, int argc, char **argv);
size_t train_nparams(const struct train_opts *o);

/* runs.c: records in and out, time to a target, plots */
void record_print_json(FILE *f, const struct train_opts *o, const char *up,
		       const char *down, const struct record *r);
int record_parse(const char *line, struct record *r, char *label, size_t labellen);
int run_push(struct run *run, const struct record *r);
int run_load(const char *path, struct run *run);
void run_free(struct run *run);
/* Seconds until the first record with test_acc >= acc, or -1. */
double run_time_to(const struct run *run, double acc);
int runs_plot(const char *prefix, const struct run *runs, unsigned n);

#endif
