/* Fuzzes gw_svm_parse (apps/gw-train/model/libsvm.c), the reader of the
 * LIBSVM text gw-train loads from disk. The input is the text itself, in a
 * heap block of exactly its size, so AddressSanitizer sees a read past
 * len (the text is not NUL-terminated). Checks:
 *  - the result is 0, GW_EINVAL (with "line N: ..." in err) or GW_ENOMEM,
 *    and a refused parse leaves the data set empty;
 *  - an accepted one is valid CSR: start[0] = 0, start monotone up to nnz,
 *    columns ascending per row and < dim, dim = largest column + 1,
 *    labels and values finite; rows and nnz match a count of the data
 *    lines and of their tokens, made here independently;
 *  - dim_max: with dim_max = D the parse succeeds exactly when the
 *    unlimited one does with dim <= D, and gives the same data;
 *  - gw_svm_dense writes the rows at cols = dim, refuses cols = dim - 1.
 * gw_fuzz_last_rc is the unlimited parse's code, for regress/libsvm/'s
 * *.ok and *.GW_EINVAL names. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gw/common.h>

#include "fuzz_common.h"
#include "libsvm.h"

/* The reader's grammar, counted the simple way: lines split at '\n', a
 * final '\r' dropped, cut at '#'; a line with any non-blank byte is a row,
 * and every blank-separated token after its first is one entry. */
static void count_rows(const uint8_t *t, size_t n, uint64_t *rows,
		       uint64_t *nnz)
{
	*rows = *nnz = 0;
	size_t s = 0;
	while (s < n) {
		size_t e = s;
		while (e < n && t[e] != '\n')
			e++;
		size_t next = e + 1, end = e;
		if (end > s && t[end - 1] == '\r')
			end--;
		for (size_t i = s; i < end; i++)
			if (t[i] == '#') {
				end = i;
				break;
			}
		uint64_t tokens = 0;
		for (size_t i = s; i < end; i++)
			if (t[i] != ' ' && t[i] != '\t' &&
			    (i == s || t[i - 1] == ' ' || t[i - 1] == '\t'))
				tokens++;
		if (tokens) {
			(*rows)++;
			*nnz += tokens - 1;
		}
		s = next;
	}
}

static void check_csr(const struct gw_svm *d, const uint8_t *t, size_t n)
{
	GW_FUZZ_CHECK(d->start && d->start[0] == 0);
	GW_FUZZ_CHECK(d->start[d->rows] == d->nnz);
	uint32_t maxc1 = 0;
	for (uint32_t r = 0; r < d->rows; r++) {
		GW_FUZZ_CHECKF(isfinite(d->label[r]), "row %u: label %g", r,
			       d->label[r]);
		GW_FUZZ_CHECK(d->start[r] <= d->start[r + 1]);
		for (uint64_t k = d->start[r]; k < d->start[r + 1]; k++) {
			GW_FUZZ_CHECKF(d->col[k] < d->dim, "row %u: col %u, dim %u",
				       r, d->col[k], d->dim);
			GW_FUZZ_CHECKF(k == d->start[r] || d->col[k - 1] < d->col[k],
				       "row %u: cols %u then %u", r, d->col[k - 1],
				       d->col[k]);
			GW_FUZZ_CHECKF(isfinite(d->val[k]), "row %u: value %g", r,
				       d->val[k]);
			if (d->col[k] + 1 > maxc1)
				maxc1 = d->col[k] + 1;
		}
	}
	GW_FUZZ_CHECKF(d->dim == maxc1, "dim %u, largest column + 1 = %u",
		       d->dim, maxc1);
	uint64_t rows, nnz;
	count_rows(t, n, &rows, &nnz);
	GW_FUZZ_CHECKF(d->rows == rows && d->nnz == nnz,
		       "rows %u nnz %llu, the text has %llu and %llu", d->rows,
		       (unsigned long long)d->nnz, (unsigned long long)rows,
		       (unsigned long long)nnz);
}

static void check_refused(int rc, const struct gw_svm *d, const char *err)
{
	GW_FUZZ_CHECKF(rc == GW_EINVAL || rc == GW_ENOMEM, "rc %d", rc);
	GW_FUZZ_CHECK(d->rows == 0 && d->nnz == 0 && d->dim == 0 && !d->label &&
		      !d->start && !d->col && !d->val);
	if (rc == GW_EINVAL)
		GW_FUZZ_CHECKF(!strncmp(err, "line ", 5), "message \"%s\"", err);
}

static int same(const struct gw_svm *a, const struct gw_svm *b)
{
	return a->rows == b->rows && a->nnz == b->nnz && a->dim == b->dim &&
	       !memcmp(a->label, b->label, a->rows * sizeof(float)) &&
	       !memcmp(a->start, b->start, (a->rows + 1) * sizeof(uint64_t)) &&
	       (!a->nnz || (!memcmp(a->col, b->col, a->nnz * sizeof(uint32_t)) &&
			    !memcmp(a->val, b->val, a->nnz * sizeof(float))));
}

static void check_dense(const struct gw_svm *d)
{
	if (!d->rows || !d->dim || (uint64_t)d->rows * d->dim > (1u << 16))
		return;
	float *X = malloc((size_t)d->rows * d->dim * sizeof(float));
	GW_FUZZ_CHECK(X != NULL);
	GW_FUZZ_CHECK(gw_svm_dense(d, d->dim, X) == 0);
	for (uint32_t r = 0; r < d->rows; r++) {
		uint64_t k = d->start[r];
		for (uint32_t c = 0; c < d->dim; c++) {
			float want = 0;
			if (k < d->start[r + 1] && d->col[k] == c)
				want = d->val[k++];
			GW_FUZZ_CHECK(memcmp(&X[(size_t)r * d->dim + c], &want, 4) == 0);
		}
	}
	if (d->nnz)
		GW_FUZZ_CHECK(gw_svm_dense(d, d->dim - 1, X) == GW_ERANGE);
	free(X);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly size bytes: a read past the end is a heap overflow */
	char *text = malloc(size ? size : 1);
	if (!text)
		return 0;
	if (size)
		memcpy(text, data, size);

	struct gw_svm d, lim;
	char err[160];
	memset(err, 0, sizeof(err));
	int rc = gw_svm_parse(text, size, 0, &d, err, sizeof(err));
	gw_fuzz_last_rc = rc;
	GW_FUZZ_CHECK(memchr(err, '\0', sizeof(err)) != NULL);
	if (rc == 0) {
		check_csr(&d, data, size);
		check_dense(&d);
	} else {
		check_refused(rc, &d, err);
	}

	/* a limit taken from the input, so both sides of it are reached */
	uint32_t dim_max = size ? 1u + data[size - 1] % 64 : 1;
	int rl = gw_svm_parse(text, size, dim_max, &lim, err, sizeof(err));
	if (rc == 0 && d.dim <= dim_max) {
		GW_FUZZ_CHECKF(rl == 0, "refused with dim_max %u, dim %u: %s",
			       dim_max, d.dim, err);
		GW_FUZZ_CHECK(same(&d, &lim));
	} else if (rc == 0) {
		GW_FUZZ_CHECKF(rl == GW_EINVAL, "dim %u above dim_max %u: rc %d",
			       d.dim, dim_max, rl);
	} else {
		GW_FUZZ_CHECKF(rl < 0, "dim_max %u accepted what no limit refused",
			       dim_max);
	}
	if (rl < 0)
		check_refused(rl, &lim, err);

	gw_svm_free(&d);
	gw_svm_free(&lim);
	free(text);
	return 0;
}
