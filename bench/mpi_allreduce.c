/* mpi_allreduce: the baseline gradwire's allreduce is measured against.
 * Every rank sums a float32 tensor with MPI_Allreduce(MPI_SUM) in place,
 * as data-parallel training does with its gradients, and rank 0 reports
 * the time of one allreduce. Human output is a table; --json prints one
 * object for bench scripts.
 *
 *   mpirun -np W mpi_allreduce [--elems N] [--reps R] [--warmup K] [--json]
 *
 * Exit codes: 0 ok, 1 the run failed (wrong sum, no memory), 2 bad command
 * line. */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "app.h"

#define EUSAGE 2
/* Elements each rank checks after a rep: enough to catch a misplaced or
 * missing segment, few enough to cost nothing next to the transfer. */
#define CHECK_ELEMS 65536

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mpirun -np W mpi_allreduce [--elems N] [--reps R] [--warmup K] [--json]\n"
		"  --elems N    float32 elements per rank (default 16777216 = 64 MiB)\n"
		"  --reps R     timed allreduces (default 5)\n"
		"  --warmup K   untimed allreduces first, 0 for none (default 1)\n"
		"  --json       one JSON object instead of the table\n");
}

/* Small integers, so every partial sum is exact in float32 whatever order
 * MPI adds the ranks in (exact up to 65536 ranks), and the check can ask
 * for equality. The rank term makes a rank's missing share visible. */
static inline float value(uint64_t i, int rank)
{
	return (float)((int)((i * 7 + (uint64_t)rank * 13) & 255) - 128);
}

static void fill(float *buf, uint64_t n, int rank)
{
	for (uint64_t i = 0; i < n; i++)
		buf[i] = value(i, rank);
}

/* Checks [lo, hi) against the sum over all ranks; returns the mismatches
 * and, if talk, names the first one. */
static uint64_t check(const float *buf, uint64_t lo, uint64_t hi, int rank, int ranks,
		      bool talk)
{
	uint64_t bad = 0;
	for (uint64_t i = lo; i < hi; i++) {
		double want = 0;
		for (int r = 0; r < ranks; r++)
			want += value(i, r);
		if (buf[i] != (float)want && bad++ == 0 && talk)
			fprintf(stderr, "mpi_allreduce: rank %d: element %llu is %g, expected %g\n",
				rank, (unsigned long long)i, (double)buf[i], want);
	}
	return bad;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Parses the command line on every rank before any collective, so a bad
 * line makes all ranks leave through MPI_Finalize instead of leaving some
 * waiting in a collective. Returns -1 to go on, else the exit code. */
static int parse(int argc, char **argv, bool talk, uint64_t *elems, uint64_t *reps,
		 uint64_t *warmup, bool *json)
{
	static const struct option opts[] = {
		{"elems", required_argument, 0, 'n'}, {"reps", required_argument, 0, 'r'},
		{"warmup", required_argument, 0, 'w'}, {"json", no_argument, 0, 'j'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	/* Only rank 0 talks, so W ranks parsing the same bad line print it once. */
	const char *prog = talk ? "mpi_allreduce" : NULL;
	int c;

	opterr = 0;  /* our message names the argument; getopt's would repeat per rank */
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		/* MPI counts are int. */
		case 'n': ok = app_opt_u64(prog, "elems", optarg, 1, INT_MAX, elems); break;
		case 'r': ok = app_opt_u64(prog, "reps", optarg, 1, 1000000, reps); break;
		case 'w': ok = app_opt_u64(prog, "warmup", optarg, 0, 1000000, warmup); break;
		case 'j': *json = true; break;
		case 'h':
			if (talk)
				usage(stdout);
			return 0;
		default:
			if (talk) {
				fprintf(stderr, "mpi_allreduce: %s: unknown option or missing value\n",
					argv[optind - 1]);
				usage(stderr);
			}
			return EUSAGE;
		}
		if (!ok)
			return EUSAGE;
	}
	if (optind < argc) {
		if (talk)
			fprintf(stderr, "mpi_allreduce: unexpected argument '%s'\n", argv[optind]);
		return EUSAGE;
	}
	return -1;
}

int main(int argc, char **argv)
{
	uint64_t elems = 16777216, reps = 5, warmup = 1;
	bool json = false;
	int rank, ranks;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	int rc = parse(argc, argv, rank == 0, &elems, &reps, &warmup, &json);
	if (rc >= 0) {
		MPI_Finalize();
		return rc;
	}

	float *buf = malloc(elems * sizeof(float));
	double *times = malloc(reps * sizeof(double));
	if (!buf || !times) {
		fprintf(stderr, "mpi_allreduce: rank %d: cannot allocate %llu bytes\n",
			rank, (unsigned long long)(elems * sizeof(float)));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}

	/* Each rank checks the start of its own 1/W share, so together the
	 * ranks look at every segment a ring or a reduce-scatter hands out. */
	uint64_t lo = elems / (uint64_t)ranks * (uint64_t)rank;
	uint64_t hi = lo + CHECK_ELEMS < elems ? lo + CHECK_ELEMS : elems;
	uint64_t bad = 0;
	for (uint64_t k = 0; k < warmup + reps; k++) {
		/* In place sums the sums of the rep before; refill (untimed) so
		 * every rep adds the same exact values. */
		fill(buf, elems, rank);
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		MPI_Allreduce(MPI_IN_PLACE, buf, (int)elems, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		double t = MPI_Wtime() - t0, tmax = 0;
		/* A rep is done when its slowest rank is. */
		MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (k >= warmup)
			times[k - warmup] = tmax;
		/* Name only the first mismatch: the same bug repeats every rep. */
		bad += check(buf, lo, hi, rank, ranks, bad == 0);
	}
	uint64_t bad_all = 0;
	MPI_Allreduce(&bad, &bad_all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	free(buf);
	if (bad_all) {
		if (rank == 0)
			fprintf(stderr, "mpi_allreduce: %llu wrong sums in %llu allreduces over %d ranks\n",
				(unsigned long long)bad_all,
				(unsigned long long)(warmup + reps), ranks);
		free(times);
		MPI_Finalize();
		return 1;
	}

	if (rank == 0) {
		qsort(times, reps, sizeof(double), cmp_double);
		double med = reps % 2 ? times[reps / 2]
				      : (times[reps / 2 - 1] + times[reps / 2]) / 2;
		double bytes = (double)elems * sizeof(float);
		/* What a ring allreduce puts on each rank's link, 2(W-1)/W of the
		 * tensor, per second: comparable to the link rate. */
		double bus_gbit = 2.0 * (ranks - 1) / ranks * bytes * 8 / med / 1e9;
		if (json) {
			const struct app_json_member m[] = {
				APP_JS("tool", "mpi_allreduce"), APP_JU("ranks", (uint64_t)ranks),
				APP_JU("elems", elems), APP_JF("bytes", 0, bytes),
				APP_JU("reps", reps), APP_JG("median_s", 6, med),
				APP_JG("min_s", 6, times[0]), APP_JG("elems_per_s", 6, elems / med),
				APP_JG("max_s", 6, times[reps - 1]), APP_JU("warmup", warmup),
				APP_JF("bus_gbit_s", 4, bus_gbit),
			};
			struct app_json j;
			app_json_begin(&j, stdout, true);
			app_json_members(&j, m, APP_JSON_N(m));
			app_json_end(&j);
		} else {
			printf("  ------------------- mpi_allreduce -------------------\n");
			printf("  ranks: %-6d elems: %-12llu bytes: %.0f\n",
			       ranks, (unsigned long long)elems, bytes);
			printf("  reps: %-7llu warmup: %llu\n",
			       (unsigned long long)reps, (unsigned long long)warmup);
			printf("  time: median %.6g s  min %.6g s  max %.6g s\n",
			       med, times[0], times[reps - 1]);
			printf("  rate: %.4g elems/s  bus %.3f Gbit/s per rank\n",
			       elems / med, bus_gbit);
			printf("  -----------------------------------------------------\n");
		}
	}
	free(times);
	MPI_Finalize();
	return 0;
}
