/* LIBSVM reader: exact CSR of valid text (comments, blank lines, CRLF, a
 * last line without '\n'), every rejection as GW_EINVAL with "line N: why",
 * dim_max, gw_svm_dense and its GW_ERANGE, gw_svm_load's messages. Inputs
 * sit in guarded buffers, so a read past len faults. */
#include "../gw_test.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "libsvm.h"

/* Parses len bytes placed at the very end of a guarded block. */
static int parse_n(const char *text, size_t len, uint32_t dim_max,
		   struct gw_svm *d, char *err, size_t errlen)
{
	gw_test_guard g;
	gw_test_guard_copy(&g, text, len);
	int rc = gw_svm_parse((const char *)g.p, len, dim_max, d, err, errlen);
	gw_test_guard_free(&g);
	return rc;
}

static int parse_s(const char *text, uint32_t dim_max, struct gw_svm *d,
		   char *err, size_t errlen)
{
	return parse_n(text, strlen(text), dim_max, d, err, errlen);
}

static void expect_empty(const struct gw_svm *d, const char *what)
{
	GW_CHECK(d->rows == 0 && d->nnz == 0 && d->dim == 0 && !d->label &&
			 !d->start && !d->col && !d->val,
		 "%s: a refused parse must leave the data set empty", what);
}

static void test_valid(void **state)
{
	(void)state;
	static const char text[] =
		"# a header comment\n"
		"1 1:0.5 3:-2\n"
		"\n"
		"-1 2:1e-3   # trailing comment\r\n"
		"   \t \r\n"
		"0.5\r\n"
		"  +1\t4:7  10:1";           /* no final newline */
	struct gw_svm d;
	char err[128];
	GW_OK_CALL(parse_s(text, 0, &d, err, sizeof(err)));
	GW_CHECK(err[0] == '\0', "no message on success, got \"%s\"", err);
	GW_CHECK(d.rows == 4 && d.nnz == 5 && d.dim == 10,
		 "rows %u nnz %llu dim %u, expected 4 5 10", d.rows,
		 (unsigned long long)d.nnz, d.dim);
	static const float label[] = {1, -1, 0.5f, 1};
	static const uint64_t start[] = {0, 2, 3, 3, 5};
	static const uint32_t col[] = {0, 2, 1, 3, 9};
	static const float val[] = {0.5f, -2, 1e-3f, 7, 1};
	for (int r = 0; r < 4; r++)
		GW_CHECK(d.label[r] == label[r], "label[%d] = %g, expected %g", r,
			 d.label[r], label[r]);
	for (int r = 0; r <= 4; r++)
		GW_CHECK(d.start[r] == start[r], "start[%d] = %llu, expected %llu",
			 r, (unsigned long long)d.start[r],
			 (unsigned long long)start[r]);
	for (int k = 0; k < 5; k++)
		GW_CHECK(d.col[k] == col[k] && d.val[k] == val[k],
			 "entry %d = %u:%g, expected %u:%g", k, d.col[k], d.val[k],
			 col[k], val[k]);
	gw_svm_free(&d);
	expect_empty(&d, "gw_svm_free");
	gw_svm_free(&d);     /* twice is fine */
	gw_svm_free(NULL);
}

static void test_empty_inputs(void **state)
{
	(void)state;
	static const char *const texts[] = {"", "\n", "# only\n# comments",
					    "\r\n\r\n", "  \t"};
	for (size_t i = 0; i < GW_ARRAY_SIZE(texts); i++) {
		struct gw_svm d;
		GW_OK_CALL(parse_s(texts[i], 0, &d, NULL, 0));
		GW_CHECK(d.rows == 0 && d.nnz == 0 && d.dim == 0 && d.start &&
				 d.start[0] == 0,
			 "text %zu: expected no rows and start = {0}", i);
		gw_svm_free(&d);
	}
	struct gw_svm d;
	GW_OK_CALL(gw_svm_parse(NULL, 0, 0, &d, NULL, 0));
	GW_CHECK(d.rows == 0, "NULL text of length 0 is empty");
	gw_svm_free(&d);
	GW_EXPECT_RC(gw_svm_parse(NULL, 1, 0, &d, NULL, 0), GW_EINVAL,
		     "NULL text of length 1");
	GW_EXPECT_RC(gw_svm_parse("1", 1, 0, NULL, NULL, 0), GW_EINVAL,
		     "NULL data set");
}

struct bad {
	const char *text;
	size_t len;            /* 0: strlen */
	uint32_t dim_max;
	unsigned line;
	const char *why;       /* a word the message must contain */
};

static const struct bad bad_inputs[] = {
	{"1 1:1\nabc 1:1\n", 0, 0, 2, "label"},
	{"1 1:1\n\n# c\n 2:1\n", 0, 0, 4, "label"},
	{"nan 1:1\n", 0, 0, 1, "label"},
	{"1 1:1\n-inf 2:1\n", 0, 0, 2, "label"},
	{"1e39 1:1\n", 0, 0, 1, "label"},         /* finite double, not float */
	{"1x 1:1\n", 0, 0, 1, "label"},
	{"1 0:1\n", 0, 0, 1, "index 0"},
	{"1 1:1\n1 3:1 2:1\n", 0, 0, 2, "previous"},
	{"1 3:1 3:2\n", 0, 0, 1, "previous"},
	{"1 1:1 5:1\n", 0, 4, 1, "above"},
	{"1 1\n", 0, 0, 1, "':'"},
	{"1 1:1 2\r\n", 0, 0, 1, "':'"},
	{"1 1:\n", 0, 0, 1, "missing value"},
	{"1 1: 2\n", 0, 0, 1, "missing value"},
	{"1 :1\n", 0, 0, 1, "missing index"},
	{"1 1:nan\n", 0, 0, 1, "not finite"},
	{"1 1:inf\n", 0, 0, 1, "not finite"},
	{"1 1:-1e39\n", 0, 0, 1, "not finite"},
	{"1 99999999999999999999999999:1\n", 0, 0, 1, "above"},
	{"1 4294967296:1\n", 0, 0, 1, "above"},
	{"1 4294967295:1\n", 0, 0, 1, "above"},   /* limit is UINT32_MAX - 1 */
	{"1 1:1x\n", 0, 0, 1, "not a number"},
	{"1 1:0x\n", 0, 0, 1, "not a number"},
	{"1 1:1:1\n", 0, 0, 1, "not a number"},
	{"1 -1:1\n", 0, 0, 1, "decimal"},
	{"1 +1:1\n", 0, 0, 1, "decimal"},
	{"1 0x1:1\n", 0, 0, 1, "decimal"},
	{"1 1:1 qid:3\n", 0, 0, 1, "decimal"},
	{"1 1:1\r2:3\n", 0, 0, 1, "not a number"},  /* a lone CR is no break */
	{"1 1:1\n1 2:1\0\n", 13, 0, 2, "not a number"},  /* embedded NUL */
	{"1 1:1\n1 2\0:1\n", 13, 0, 2, "decimal"},
	{"1 1:1\n\n\n\n\n\n\n\n\n\n\n1 1:0.000000000000000000000000000000000000"
	 "0000000000000000000000000000000000000000000000000000000000000001\n",
	 0, 0, 12, "not a number"},                /* longer than any float */
};

static void test_rejections(void **state)
{
	(void)state;
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad_inputs); i++) {
		const struct bad *b = &bad_inputs[i];
		size_t len = b->len ? b->len : strlen(b->text);
		struct gw_svm d;
		char err[256], want[32];
		memset(&d, 0xa5, sizeof(d));
		GW_EXPECT_RC(parse_n(b->text, len, b->dim_max, &d, err, sizeof(err)),
			     GW_EINVAL, "input %zu must be refused", i);
		expect_empty(&d, "refused input");
		snprintf(want, sizeof(want), "line %u: ", b->line);
		GW_CHECK(!strncmp(err, want, strlen(want)),
			 "input %zu: message \"%s\" must start with \"%s\"", i,
			 err, want);
		GW_CHECK(strstr(err, b->why) != NULL,
			 "input %zu: message \"%s\" must say \"%s\"", i, err,
			 b->why);
		/* every prefix is parsed without reading past it, too */
		for (size_t n = 0; n < len; n++) {
			int rc = parse_n(b->text, n, b->dim_max, &d, NULL, 0);
			GW_CHECK(rc == 0 || rc == GW_EINVAL,
				 "input %zu cut to %zu bytes: rc %d", i, n, rc);
			gw_svm_free(&d);
		}
	}
}

static void test_dim_max(void **state)
{
	(void)state;
	struct gw_svm d;
	char err[128];
	GW_OK_CALL(parse_s("1 2:1 4:1\n", 4, &d, err, sizeof(err)));
	GW_CHECK(d.dim == 4, "dim %u, expected 4", d.dim);
	gw_svm_free(&d);
	GW_EXPECT_RC(parse_s("1 2:1\n-1 2:1 4:1\n", 3, &d, err, sizeof(err)),
		     GW_EINVAL, "index 4 with dim_max 3");
	GW_CHECK(!strncmp(err, "line 2: ", 8), "message \"%s\"", err);
	GW_OK_CALL(parse_s("1 4294967294:2.5\n", 0, &d, err, sizeof(err)));
	GW_CHECK(d.dim == 4294967294u && d.col[0] == 4294967293u &&
			 d.val[0] == 2.5f,
		 "largest index: dim %u col %u", d.dim, d.col[0]);
	gw_svm_free(&d);
	/* a message that does not fit is cut, never overflowed */
	char small[12];
	memset(small, 'x', sizeof(small));
	GW_EXPECT_RC(parse_s("1 9:1\n", 3, &d, small, 8), GW_EINVAL, "small err");
	GW_CHECK(!strcmp(small, "line 1:") && small[8] == 'x',
		 "truncated message \"%.8s\"", small);
}

/* More rows and entries than the first allocation, to exercise growth. */
static void test_growth(void **state)
{
	(void)state;
	const uint32_t rows = 700, per = 300;
	size_t cap = (size_t)rows * per * 16 + 1, n = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	for (uint32_t r = 0; r < rows; r++) {
		n += (size_t)snprintf(text + n, cap - n, "%d", (int)(r % 3) - 1);
		for (uint32_t j = 0; j < per; j++)
			n += (size_t)snprintf(text + n, cap - n, " %u:%u",
					      r + 2 * j + 1, j);
		if (r % 2)
			text[n++] = '\r';   /* CRLF and LF mixed */
		text[n++] = '\n';
	}
	struct gw_svm d;
	GW_OK_CALL(parse_n(text, n, 0, &d, NULL, 0));
	GW_CHECK(d.rows == rows && d.nnz == (uint64_t)rows * per &&
			 d.dim == rows - 1 + 2 * (per - 1) + 1,
		 "rows %u nnz %llu dim %u", d.rows, (unsigned long long)d.nnz,
		 d.dim);
	for (uint32_t r = 0; r < rows; r++) {
		GW_CHECK(d.label[r] == (float)((int)(r % 3) - 1) &&
				 d.start[r] == (uint64_t)r * per,
			 "row %u: label %g start %llu", r, d.label[r],
			 (unsigned long long)d.start[r]);
		for (uint32_t j = 0; j < per; j++) {
			uint64_t k = d.start[r] + j;
			GW_CHECK(d.col[k] == r + 2 * j && d.val[k] == (float)j,
				 "row %u entry %u: %u:%g", r, j, d.col[k], d.val[k]);
		}
	}
	gw_svm_free(&d);
	free(text);
}

static void test_dense(void **state)
{
	(void)state;
	struct gw_svm d;
	GW_OK_CALL(parse_s("1 1:1 3:3\n-1\n0 2:-2\n", 0, &d, NULL, 0));
	float X[3 * 4];
	gw_test_fill(X, 12, 99);
	GW_OK_CALL(gw_svm_dense(&d, 4, X));
	static const float want[12] = {1, 0, 3, 0, 0, 0, 0, 0, 0, -2, 0, 0};
	for (int i = 0; i < 12; i++)
		GW_CHECK(X[i] == want[i], "X[%d] = %g, expected %g", i, X[i],
			 want[i]);
	GW_OK_CALL(gw_svm_dense(&d, 3, X));
	gw_test_fill(X, 12, 99);
	GW_EXPECT_RC(gw_svm_dense(&d, 2, X), GW_ERANGE, "column 2 with 2 cols");
	for (int i = 0; i < 12; i++)
		GW_CHECK(X[i] == 99, "a refused gw_svm_dense wrote X[%d]", i);
	GW_EXPECT_RC(gw_svm_dense(NULL, 3, X), GW_EINVAL, "NULL data set");
	gw_svm_free(&d);
}

static void test_load(void **state)
{
	(void)state;
	struct gw_svm d;
	char err[512];
	const char *missing = "/nonexistent-gradwire-dir/train.svm";
	GW_EXPECT_RC(gw_svm_load(missing, 0, &d, err, sizeof(err)), GW_EIO,
		     "missing file");
	expect_empty(&d, "missing file");
	char want[512];
	snprintf(want, sizeof(want), "%s: %s", missing, strerror(ENOENT));
	GW_CHECK(!strcmp(err, want), "message \"%s\", expected \"%s\"", err,
		 want);

	char path[] = "/tmp/gw_test_libsvm_XXXXXX";
	int fd = mkstemp(path);
	GW_CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	static const char text[] = "1 1:2\n# x\n-1 2:oops\n";
	GW_CHECK(write(fd, text, sizeof(text) - 1) == (ssize_t)sizeof(text) - 1,
		 "write");
	close(fd);
	GW_EXPECT_RC(gw_svm_load(path, 0, &d, err, sizeof(err)), GW_EINVAL,
		     "bad line 3");
	snprintf(want, sizeof(want), "%s:3: ", path);
	GW_CHECK(!strncmp(err, want, strlen(want)),
		 "message \"%s\" must start with \"%s\"", err, want);

	fd = open(path, O_WRONLY | O_TRUNC);
	GW_CHECK(fd >= 0, "reopen: %s", strerror(errno));
	GW_CHECK(write(fd, "1 1:2\n-1 2:3", 12) == 12, "write");
	close(fd);
	GW_OK_CALL(gw_svm_load(path, 0, &d, err, sizeof(err)));
	GW_CHECK(d.rows == 2 && d.nnz == 2 && d.dim == 2 && d.val[1] == 3,
		 "loaded rows %u nnz %llu dim %u", d.rows,
		 (unsigned long long)d.nnz, d.dim);
	gw_svm_free(&d);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_empty_inputs),
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_dim_max),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_dense),
		cmocka_unit_test(test_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
