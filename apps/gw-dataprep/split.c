/* Rows, the seeded train/test split, and the files: each output is
 * written to PREFIX.<part>.svm.tmp, flushed to disk, and renamed only once
 * both parts are complete, so a reader never sees half a file. A SIGINT,
 * SIGTERM or SIGHUP while writing removes the .tmp files before the
 * process dies. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataprep.h"
#include "gw_rand.h"

void dp_err(const char *fmt, ...)
{
	va_list ap;

	fputs("gw-dataprep: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int buf_reserve(struct dp_buf *b, size_t extra)
{
	size_t cap;
	char *p;

	if (b->len + extra + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1) {
		if (cap > SIZE_MAX / 2)
			return -1;
		cap *= 2;
	}
	p = realloc(b->p, cap);
	if (!p)
		return -1;
	b->p = p;
	b->cap = cap;
	return 0;
}

int dp_buf_printf(struct dp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap > b->len ? b->cap - b->len : 0;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return DP_EDATA;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return 0;
		}
		if (buf_reserve(b, (size_t)n) != 0) {
			dp_err("out of memory");
			return DP_EDATA;
		}
	}
}

void dp_buf_free(struct dp_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int dp_rows_add(struct dp_rows *r, const struct dp_buf *b)
{
	char *s;

	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		char **l = realloc(r->line, cap * sizeof(*l));

		if (!l)
			goto nomem;
		r->line = l;
		r->cap = cap;
	}
	s = malloc(b->len + 1);
	if (!s)
		goto nomem;
	if (b->len)   /* b->p may be NULL when empty */
		memcpy(s, b->p, b->len);
	s[b->len] = '\0';
	r->line[r->n++] = s;
	return 0;
nomem:
	dp_err("out of memory after %zu rows", r->n);
	return DP_EDATA;
}

void dp_rows_free(struct dp_rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->line[i]);
	free(r->line);
	memset(r, 0, sizeof(*r));
}

int dp_slurp(const char *path, struct dp_buf *buf)
{
	FILE *f = fopen(path, "rb");
	size_t got;

	buf->len = 0;
	if (!f) {
		dp_err("%s: %s", path, strerror(errno));
		return DP_EDATA;
	}
	do {
		if (buf_reserve(buf, 65536) != 0) {
			fclose(f);
			dp_err("%s: out of memory", path);
			return DP_EDATA;
		}
		got = fread(buf->p + buf->len, 1, buf->cap - buf->len - 1, f);
		buf->len += got;
	} while (got > 0);
	if (ferror(f)) {
		int e = errno;

		fclose(f);
		dp_err("%s: %s", path, strerror(e ? e : EIO));
		return DP_EDATA;
	}
	fclose(f);
	buf->p[buf->len] = '\0';
	return 0;
}

/* Uniform in [0, bound) from splitmix64, the one PRNG of the split: draws
 * above the largest multiple of bound are drawn again, so there is no
 * modulo bias. */
static uint64_t uniform(uint64_t *state, uint64_t bound)
{
	uint64_t lim = UINT64_MAX - UINT64_MAX % bound, x;

	do
		x = gw_splitmix64(state);
	while (x >= lim);
	return x % bound;
}

/* The .tmp files being written, for the signal handler. */
static char tmp_path[2][PATH_MAX];
static volatile sig_atomic_t tmp_live;

static void on_signal(int sig)
{
	if (tmp_live) {
		unlink(tmp_path[0]);
		unlink(tmp_path[1]);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int write_part(const char *path, char *const *line,
		      const size_t *order, size_t from, size_t to)
{
	FILE *f = fopen(path, "w");
	int bad;

	if (!f) {
		dp_err("%s: %s", path, strerror(errno));
		return DP_EDATA;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	for (size_t i = from; i < to; i++)
		if (fputs(line[order[i]], f) == EOF)
			break;
	bad = ferror(f) || fflush(f) != 0 || fsync(fileno(f)) != 0;
	if (bad) {
		int e = errno;

		fclose(f);
		dp_err("%s: %s", path, strerror(e ? e : EIO));
		return DP_EDATA;
	}
	if (fclose(f) != 0) {
		dp_err("%s: %s", path, strerror(errno));
		return DP_EDATA;
	}
	return 0;
}

int dp_write_split(const struct dp_rows *r, const char *prefix,
		   double test_frac, uint64_t seed, size_t *n_train, size_t *n_test)
{
	static const char *const part[2] = { "train", "test" };
	char final[2][PATH_MAX];
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	uint64_t state = seed;
	size_t *order, nt;
	int rc = 0;

	if (r->n < 2) {
		dp_err("%zu row%s: a train/test split needs at least 2", r->n,
		       r->n == 1 ? "" : "s");
		return DP_EDATA;
	}
	for (int p = 0; p < 2; p++) {
		int a = snprintf(final[p], PATH_MAX, "%s.%s.svm", prefix, part[p]);
		int b = snprintf(tmp_path[p], PATH_MAX, "%s.%s.svm.tmp", prefix, part[p]);

		if (a < 0 || b < 0 || a >= PATH_MAX || b >= PATH_MAX) {
			dp_err("--out %s: path too long", prefix);
			return DP_EUSAGE;
		}
	}

	/* Fisher-Yates from the back: swap i with a uniform j in [0, i]. */
	order = malloc(r->n * sizeof(*order));
	if (!order) {
		dp_err("out of memory");
		return DP_EDATA;
	}
	for (size_t i = 0; i < r->n; i++)
		order[i] = i;
	for (size_t i = r->n - 1; i > 0; i--) {
		size_t j = (size_t)uniform(&state, (uint64_t)i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	nt = (size_t)floor(test_frac * (double)r->n + 0.5);
	if (nt < 1)
		nt = 1;
	if (nt > r->n - 1)
		nt = r->n - 1;

	/* Live before the handler is in: a signal from here on removes them. */
	tmp_live = 1;
	sigemptyset(&sa.sa_mask);
	for (int s = 0; s < 3; s++)
		sigaction(sigs[s], &sa, &old[s]);
	rc = write_part(tmp_path[0], r->line, order, nt, r->n);
	if (rc == 0)
		rc = write_part(tmp_path[1], r->line, order, 0, nt);
	for (int p = 0; rc == 0 && p < 2; p++) {
		if (rename(tmp_path[p], final[p]) != 0) {
			dp_err("rename %s -> %s: %s", tmp_path[p], final[p],
			       strerror(errno));
			rc = DP_EDATA;
		}
	}
	if (rc != 0) {
		unlink(tmp_path[0]);
		unlink(tmp_path[1]);
	}
	tmp_live = 0;
	for (int s = 0; s < 3; s++)
		sigaction(sigs[s], &old[s], NULL);
	free(order);
	*n_train = r->n - nt;
	*n_test = nt;
	return rc;
}
