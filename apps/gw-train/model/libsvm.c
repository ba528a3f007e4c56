/* LIBSVM text -> CSR. The text is untrusted and not NUL-terminated, so
 * the parser never looks past len: each line is cut out with memchr, and
 * every number is copied into a small bounded buffer before strtod sees
 * it (strtod on the raw text could run past the end). Numbers go through
 * strtod in the C locale the apps run in ("1.5", not "1,5"). */
#include "libsvm.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/common.h>

#include "gw_util.h"

/* Longest number token accepted: more than any float needs, in any
 * notation a writer would use ("-1.234567890123456789e-38"). */
#define NUM_MAX 96

struct parser {
	const char *path;   /* for gw_svm_load's "PATH:N: why", else NULL */
	uint64_t line;      /* 1-based, for messages */
	uint32_t limit;     /* largest index accepted */
	char *err;
	size_t errlen;
	/* the arrays being built, and their capacities in elements */
	struct gw_svm d;
	size_t rows_cap, nnz_cap;
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(struct parser *p, int code, const char *fmt, ...)
{
	if (p->err && p->errlen) {
		int k = p->path ? snprintf(p->err, p->errlen, "%s:%llu: ", p->path,
					   (unsigned long long)p->line)
				: snprintf(p->err, p->errlen, "line %llu: ",
					   (unsigned long long)p->line);
		if (k >= 0 && (size_t)k < p->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(p->err + k, p->errlen - (size_t)k, fmt, ap);
			va_end(ap);
		}
	}
	return GW_ERR(code);
}

/* The capacity, doubled from *cap, that holds need elements of the
 * largest size elem, so n appends cost O(n). 0 or GW_ENOMEM (overflow). */
static int next_cap(size_t cap, size_t need, size_t elem, size_t *out)
{
	size_t c = cap ? cap : 256;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return GW_ENOMEM;
		c *= 2;
	}
	if (c > SIZE_MAX / elem)
		return GW_ENOMEM;
	*out = c;
	return 0;
}

/* Grows two parallel arrays (elements of ea and eb bytes) to cap c. The
 * first may end up bigger than the second on failure: harmless, as *cap
 * only moves once both have grown. */
static int grow_pair(void **a, size_t ea, void **b, size_t eb, size_t *cap, size_t need)
{
	size_t c;
	if (need <= *cap)
		return 0;
	if (next_cap(*cap, need, ea > eb ? ea : eb, &c) < 0)
		return GW_ENOMEM;
	void *na = realloc(*a, c * ea);
	if (!na)
		return GW_ENOMEM;
	*a = na;
	void *nb = realloc(*b, c * eb);
	if (!nb)
		return GW_ENOMEM;
	*b = nb;
	*cap = c;
	return 0;
}

/* Room for need rows: label holds rows, start rows + 1, so one capacity
 * of need = rows + 2 serves both. (void * locals, not casts of &p->d.*,
 * so no float * is written through a void ** lvalue.) */
static int reserve_rows(struct parser *p, size_t need)
{
	void *a = p->d.label, *b = p->d.start;
	int rc = grow_pair(&a, sizeof(*p->d.label), &b, sizeof(*p->d.start), &p->rows_cap, need);
	p->d.label = a;
	p->d.start = b;
	return rc;
}

static int reserve_nnz(struct parser *p, size_t need)
{
	void *a = p->d.col, *b = p->d.val;
	int rc = grow_pair(&a, sizeof(*p->d.col), &b, sizeof(*p->d.val), &p->nnz_cap, need);
	p->d.col = a;
	p->d.val = b;
	return rc;
}

/* A number token [s, s+n) as a double: the whole token must parse. */
static int to_double(const char *s, size_t n, double *out)
{
	char buf[NUM_MAX + 1];
	if (n == 0 || n > NUM_MAX)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	/* An embedded NUL stops strtod early and so fails this too. */
	if (end != buf + n)
		return -1;
	*out = v;
	return 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One "idx:val" token; appends it to the current row. prev is the row's
 * last column + 1 (0 at its start), so indices must exceed it. */
static int parse_pair(struct parser *p, const char *s, size_t n, uint64_t *prev)
{
	const char *colon = memchr(s, ':', n);
	if (!colon)
		return fail(p, GW_EINVAL, "expected index:value, found no ':'");
	size_t ni = (size_t)(colon - s);
	if (ni == 0)
		return fail(p, GW_EINVAL, "missing index before ':'");
	/* Digits only: strtoul would take signs, spaces and hex. Stop
	 * accumulating once past the limit, so nothing overflows. */
	uint64_t idx = 0;
	int big = 0;
	for (size_t i = 0; i < ni; i++) {
		if (s[i] < '0' || s[i] > '9')
			return fail(p, GW_EINVAL, "index is not a decimal number");
		if (!big)
			idx = idx * 10 + (uint64_t)(s[i] - '0');
		if (idx > p->limit)
			big = 1;
	}
	if (big)
		return fail(p, GW_EINVAL, "index above the limit %u", p->limit);
	if (idx == 0)
		return fail(p, GW_EINVAL, "index 0 (indices start at 1)");
	if (idx <= *prev)
		return fail(p, GW_EINVAL,
			    "index %llu not above the previous %llu",
			    (unsigned long long)idx, (unsigned long long)*prev);

	size_t nv = n - ni - 1;
	double v;
	if (nv == 0)
		return fail(p, GW_EINVAL, "missing value after index %llu",
			    (unsigned long long)idx);
	if (to_double(colon + 1, nv, &v) < 0)
		return fail(p, GW_EINVAL, "value of index %llu is not a number",
			    (unsigned long long)idx);
	/* finite as a double may still overflow the float we store */
	if (!isfinite((float)v))
		return fail(p, GW_EINVAL, "value of index %llu is not finite "
			    "as a float", (unsigned long long)idx);

	struct gw_svm *d = &p->d;
	if (d->nnz >= SIZE_MAX || reserve_nnz(p, (size_t)d->nnz + 1) < 0)
		return fail(p, GW_ENOMEM, "out of memory");
	d->col[d->nnz] = (uint32_t)(idx - 1);
	d->val[d->nnz] = (float)v;
	d->nnz++;
	if (idx > d->dim)
		d->dim = (uint32_t)idx;
	*prev = idx;
	return 0;
}

/* One line without its '\n': a label, then pairs, then maybe a comment. */
static int parse_line(struct parser *p, const char *s, size_t n)
{
	if (n && s[n - 1] == '\r')
		n--;                       /* CRLF files */
	const char *hash = memchr(s, '#', n);
	const char *e = hash ? hash : s + n;
	while (s < e && is_blank(*s))
		s++;
	if (s == e)
		return 0;                  /* blank or comment only */

	struct gw_svm *d = &p->d;
	if (d->rows == UINT32_MAX - 1)
		return fail(p, GW_EINVAL, "more than %u rows", UINT32_MAX - 1);
	const char *t = s;
	while (s < e && !is_blank(*s))
		s++;
	double y;
	if (to_double(t, (size_t)(s - t), &y) < 0)
		return fail(p, GW_EINVAL, "label is not a number");
	if (!isfinite((float)y))
		return fail(p, GW_EINVAL, "label is not finite as a float");
	if (reserve_rows(p, (size_t)d->rows + 2) < 0)
		return fail(p, GW_ENOMEM, "out of memory");

	uint64_t prev = 0;
	for (;;) {
		while (s < e && is_blank(*s))
			s++;
		if (s == e)
			break;
		t = s;
		while (s < e && !is_blank(*s))
			s++;
		int rc = parse_pair(p, t, (size_t)(s - t), &prev);
		if (rc < 0)
			return rc;
	}
	d->label[d->rows] = (float)y;
	d->rows++;
	d->start[d->rows] = d->nnz;
	return 0;
}

static int parse(struct parser *p, const char *text, size_t len,
		 uint32_t dim_max, struct gw_svm *out)
{
	memset(&p->d, 0, sizeof(p->d));
	p->rows_cap = p->nnz_cap = 0;
	p->limit = dim_max ? dim_max : UINT32_MAX - 1;
	p->line = 0;
	int rc = 0;
	if (reserve_rows(p, 1) < 0) {
		rc = fail(p, GW_ENOMEM, "out of memory");
		goto out;
	}
	p->d.start[0] = 0;
	const char *s = text, *end = text + len;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		/* the last line may lack its '\n' */
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		p->line++;
		rc = parse_line(p, s, n);
		if (rc < 0)
			goto out;
		s = nl ? nl + 1 : end;
	}
out:
	if (rc < 0) {
		gw_svm_free(&p->d);
		memset(out, 0, sizeof(*out));
		return rc;
	}
	*out = p->d;
	return 0;
}

int gw_svm_parse(const char *text, size_t len, uint32_t dim_max,
		 struct gw_svm *d, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!d)
		return GW_ERR(GW_EINVAL);
	memset(d, 0, sizeof(*d));
	if (!text && len)
		return GW_ERR(GW_EINVAL);
	struct parser p = {.err = err, .errlen = errlen};
	return parse(&p, text ? text : "", len, dim_max, d);
}

/* Whole file into memory (regular file or not: grows as it reads). */
static int read_all(FILE *f, char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap);
	if (!b)
		return GW_ENOMEM;
	for (;;) {
		n += fread(b + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *nb = cap <= SIZE_MAX / 2 ? realloc(b, cap * 2) : NULL;
		if (!nb) {
			free(b);
			return GW_ENOMEM;
		}
		b = nb;
		cap *= 2;
	}
	if (ferror(f)) {
		free(b);
		return GW_EIO;
	}
	*buf = b;
	*len = n;
	return 0;
}

int gw_svm_load(const char *path, uint32_t dim_max, struct gw_svm *d,
		char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (!d)
		return GW_ERR(GW_EINVAL);
	memset(d, 0, sizeof(*d));
	if (!path)
		return GW_ERR(GW_EINVAL);
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return GW_ERR(GW_EIO);
	}
	char *text = NULL;
	size_t len = 0;
	errno = 0;
	int rc = read_all(f, &text, &len);
	int saved = errno;
	fclose(f);
	if (rc < 0) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path,
				 rc == GW_ENOMEM ? "out of memory"
				 : saved	 ? strerror(saved)
						 : "read error");
		return GW_ERR(rc);
	}
	struct parser p = {.path = path, .err = err, .errlen = errlen};
	rc = parse(&p, text, len, dim_max, d);
	free(text);
	return rc;
}

int gw_svm_dense(const struct gw_svm *d, uint32_t cols, float *X)
{
	if (!d || (!X && d->rows && cols))
		return GW_ERR(GW_EINVAL);
	if (cols && d->rows > SIZE_MAX / sizeof(float) / cols)
		return GW_ERR(GW_EINVAL);
	/* Check first, so a refused call writes nothing. */
	for (uint64_t k = 0; k < d->nnz; k++)
		if (d->col[k] >= cols)
			return GW_ERR(GW_ERANGE);
	if (d->rows && cols)
		memset(X, 0, (size_t)d->rows * cols * sizeof(float));
	for (uint32_t r = 0; r < d->rows; r++) {
		float *x = X + (size_t)r * cols;
		for (uint64_t k = d->start[r]; k < d->start[r + 1]; k++)
			x[d->col[k]] = d->val[k];
	}
	return 0;
}

void gw_svm_free(struct gw_svm *d)
{
	if (!d)
		return;
	free(d->label);
	free(d->start);
	free(d->col);
	free(d->val);
	memset(d, 0, sizeof(*d));
}
