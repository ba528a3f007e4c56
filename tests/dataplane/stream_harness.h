/* Two-process stream tests: runs stream_peer as receiver and sender (on
 * 127.0.0.1 or inside network namespaces), and computes in-process the
 * decode-accumulated tensors the receiver must produce, bit for bit. */
#ifndef GW_STREAM_HARNESS_H
#define GW_STREAM_HARNESS_H

#include <stddef.h>
#include <stdint.h>

typedef struct sh_cfg {
	const char *peer;        /* path of stream_peer (argv[1] of the test) */
	const char *codec;       /* "raw", "int8", ... */
	const char *backend;     /* default "udp" */
	unsigned rounds;         /* default 2 */
	const char *opts;        /* backend options of BOTH ends (impairment) */
	const char *ns_tx, *ns_rx;   /* network namespaces, or NULL */
	const char *ip_tx, *ip_rx;   /* local addresses; default 127.0.0.1 */
	unsigned timeout_ms;     /* each peer's stream timeout; default 20000 */
	unsigned window;         /* 0: the stream's default */
	int no_sparse;           /* leave out the sparse logreg trace */
	int no_frames;           /* --no-frames: packet checksums cover frames */
} sh_cfg;

#define SH_MAX_STATS 32
typedef struct sh_stats {
	int n;
	char key[SH_MAX_STATS][64];
	uint64_t val[SH_MAX_STATS];
} sh_stats;

typedef struct sh_result {
	sh_stats tx, rx;
	float *out;              /* the receiver's --out file */
	size_t out_n;            /* floats */
	double wall_s;           /* both processes, start to finish */
} sh_result;

/* Exits 77 with a message unless the traces and the peer program exist. */
void sh_require(const char *prog, int argc, char **argv);

/* The trace files a run streams: six dense cnn tensors of iteration 1,
 * then (unless no_sparse) the sparse logreg iteration 1 (dim 2^20). */
void sh_inputs(const sh_cfg *cfg, const char **paths, int *sparse, int *n);

/* Runs rx then tx; fails the cmocka test (with both logs) if either exits
 * non-zero or the pair runs past its deadline (then both are killed). */
void sh_run_pair(const sh_cfg *cfg, sh_result *res);
void sh_result_free(sh_result *res);

/* The receiver's expected output, computed in this process: the same
 * encoders, error feedback and frame budget, decoded into zeroed vectors. */
float *sh_reference(const sh_cfg *cfg, size_t *n);

/* Value of a counter from a stats file; fails the test if absent. */
uint64_t sh_stat(const sh_stats *st, const char *key);

/* Runs cfg, compares with the reference bit for bit, checks that nothing
 * malformed got through: per side, bad + corrupt equals the packets the
 * impairment layer corrupted. Returns the result for further checks. */
void sh_check_run(const sh_cfg *cfg, sh_result *res);

#endif
