/* gw-allreduce --train-lr: a toy training loop for soak runs, so that a
 * long job has a loss that must fall and parameters whose replicas can be
 * compared step by step. Every rank holds parameters p (from 0) and
 * minimises 0.5 |p - t|^2 for one target t shared by all: its gradient is
 * p - t plus a fixed noise of its own (round 0's synthetic gradient,
 * scaled), the allreduce sums the ranks' gradients, and every rank steps
 * p -= lr * sum / W. Replicas given the same sums stay bit-identical;
 * noise that does not cancel keeps every round's gradient non-trivial.
 * Rank 0 may write p after each round (a checkpoint, renamed into place),
 * which a restarted rank reads before it rejoins: the framework's state
 * sync, here a file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_hash.h"
#include "toy.h"

int toy_init(struct toy *t, uint64_t n, double lr, const float *noise, const char *resume)
{
	*t = (struct toy){.n = n, .lr = lr};
	t->p = calloc(n, sizeof(float));
	t->t = malloc(n * sizeof(float));
	t->noise = malloc(n * sizeof(float));
	if (!t->p || !t->t || !t->noise)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		t->t[i] = (float)(0.5 * sin(0.001 * (double)i));
		t->noise[i] = 0.05f * noise[i];
	}
	if (resume) {
		FILE *f = fopen(resume, "rb");
		size_t got = f ? fread(t->p, sizeof(float), n, f) : 0;
		if (f)
			fclose(f);
		if (got != n) {
			fprintf(stderr, "gw-allreduce: --param-file %s: %zu of %llu parameters\n",
				resume, got, (unsigned long long)n);
			return -1;
		}
	}
	return 0;
}

void toy_free(struct toy *t)
{
	free(t->p);
	free(t->t);
	free(t->noise);
}

void toy_grad(const struct toy *t, float *g)
{
	for (uint64_t i = 0; i < t->n; i++)
		g[i] = t->p[i] - t->t[i] + t->noise[i];
}

void toy_step(struct toy *t, const float *sum, uint32_t workers)
{
	float s = (float)(t->lr / workers);
	for (uint64_t i = 0; i < t->n; i++)
		t->p[i] -= s * sum[i];
}

double toy_loss(const struct toy *t)
{
	double l = 0;
	for (uint64_t i = 0; i < t->n; i++) {
		double d = (double)t->p[i] - (double)t->t[i];
		l += d * d;
	}
	return 0.5 * l / (double)t->n;
}

uint64_t toy_hash(const struct toy *t)
{
	return gw_xxh3(t->p, t->n * sizeof(float), 0);
}

int toy_save(const struct toy *t, const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	int ok = f && fwrite(t->p, sizeof(float), t->n, f) == t->n;
	if (f && fclose(f) != 0)
		ok = 0;
	return ok && rename(tmp, path) == 0 ? 0 : -1;
}
