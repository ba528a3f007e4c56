/* LIBSVM / SVMlight text data: one example per line,
 *   label idx:val idx:val ...   (indices 1-based, strictly ascending)
 * '#' starts a comment; blank lines are skipped. Loaded into CSR form. */
#ifndef GW_TRAIN_LIBSVM_H
#define GW_TRAIN_LIBSVM_H

#include <stddef.h>
#include <stdint.h>

struct gw_svm {
	uint32_t rows;
	uint32_t dim;       /* largest index seen (1-based) = columns needed */
	uint64_t nnz;
	float *label;       /* rows */
	uint64_t *start;    /* rows + 1: row r holds entries [start[r], start[r+1]) */
	uint32_t *col;      /* nnz, 0-based (file index - 1), ascending per row */
	float *val;         /* nnz, finite */
};

/* Parses len bytes of text (need not be NUL-terminated). An index above
 * dim_max (0: no limit but UINT32_MAX - 1) is an error. Returns 0, or
 * GW_EINVAL with err (if not NULL) holding "line N: why", or GW_ENOMEM.
 * On error *d is left empty (nothing to free). */
int gw_svm_parse(const char *text, size_t len, uint32_t dim_max,
		 struct gw_svm *d, char *err, size_t errlen);

/* gw_svm_parse of a whole file; err then reads "PATH:N: why", or
 * "PATH: <strerror>" with GW_EIO when it cannot be read. */
int gw_svm_load(const char *path, uint32_t dim_max, struct gw_svm *d,
		char *err, size_t errlen);

/* Rows as a dense row-major matrix X[rows][cols] (zeros elsewhere).
 * GW_ERANGE if some index is >= cols. */
int gw_svm_dense(const struct gw_svm *d, uint32_t cols, float *X);

void gw_svm_free(struct gw_svm *d);

#endif
