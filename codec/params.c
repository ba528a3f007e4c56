/* Parameter names and bounds: the generic ones every codec accepts, then
 * whatever the codec's ops table lists. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"

static const char *const names[GW_PARAM_COUNT_] = {
	[GW_PARAM_MAX_FRAME_ELEMS] = "max_frame_elems",
	[GW_PARAM_SPARSITY] = "sparsity",
	[GW_PARAM_SEED] = "seed",
	[GW_PARAM_FRACTION] = "fraction",
	[GW_PARAM_QUANTILES] = "quantiles",
	[GW_PARAM_GROUPS] = "groups",
	[GW_PARAM_ROWS] = "rows",
	[GW_PARAM_COL_RATIO] = "col_ratio",
	[GW_PARAM_COLS] = "cols",
	[GW_PARAM_INDEX] = "index",
	[GW_PARAM_POLICY] = "policy",
	[GW_PARAM_FPR] = "fpr",
	[GW_PARAM_HASHES] = "hashes",
	[GW_PARAM_VALUE] = "value",
	[GW_PARAM_DEGREE] = "degree",
	[GW_PARAM_PIECES] = "pieces",
	[GW_PARAM_LEVELS] = "levels",
	[GW_PARAM_BUCKET] = "bucket",
	[GW_PARAM_SPARSIFIER] = "sparsifier",
	[GW_PARAM_ZLEVEL] = "zlevel",
	[GW_PARAM_CLIP] = "clip",
	[GW_PARAM_BITS] = "bits",
	[GW_PARAM_ROTATE] = "rotate",
	[GW_PARAM_ROUNDING] = "rounding",
};

/* Names of the values of enumerated parameters, value i at index i. */
static const char *const *const value_names[GW_PARAM_COUNT_] = {
	[GW_PARAM_INDEX] = (const char *const[]){"raw", "bloom", "rle", "delta", NULL},
	[GW_PARAM_POLICY] = (const char *const[]){"p0", "p1", "p2", NULL},
	[GW_PARAM_VALUE] = (const char *const[]){"f32", "deflate", "qsgd", "poly", "dexp",
						 NULL},
	[GW_PARAM_SPARSIFIER] = (const char *const[]){"none", "topr", "randr", NULL},
	[GW_PARAM_ROUNDING] = (const char *const[]){"nearest", "stochastic", NULL},
};

static const struct gw_param_spec generic[] = {
	{GW_PARAM_MAX_FRAME_ELEMS, {0, UINT32_MAX, 0, 1}},
};

const char *gw_param_name(gw_param p)
{
	return (unsigned)p < GW_PARAM_COUNT_ ? names[p] : NULL;
}

int gw_param_by_name(const char *name)
{
	if (!name)
		return GW_ERR(GW_EINVAL);
	for (int p = 0; p < GW_PARAM_COUNT_; p++)
		if (names[p] && !strcmp(names[p], name))
			return p;
	return GW_ERR(GW_EPARAM);
}

static const struct gw_param_spec *find(const struct gw_codec_ops *ops,
					gw_param p)
{
	for (size_t i = 0; i < GW_ARRAY_SIZE(generic); i++)
		if (generic[i].param == p)
			return &generic[i];
	for (size_t i = 0; i < ops->nparams; i++)
		if (ops->params[i].param == p)
			return &ops->params[i];
	return NULL;
}

int gw_param_bounds(int id, gw_param p, gw_bounds *b)
{
	const struct gw_codec_ops *ops = gw_codec_ops(id);
	if (!ops)
		return GW_ERR(GW_ECODEC);
	const struct gw_param_spec *s = find(ops, p);
	if (!s)
		return GW_ERR(GW_EPARAM);
	if (b)
		*b = s->bounds;
	return GW_OK;
}

void gw_params_defaults(const struct gw_codec_ops *ops, double *v)
{
	for (int p = 0; p < GW_PARAM_COUNT_; p++) {
		const struct gw_param_spec *s = find(ops, (gw_param)p);
		v[p] = s ? s->bounds.def : 0;
	}
}

int gw_encoder_set_param(gw_encoder *enc, gw_param p, double v)
{
	if (!enc)
		return GW_ERR(GW_EINVAL);
	const struct gw_param_spec *s = find(enc->ops, p);
	if (!s)
		return GW_ERR(GW_EPARAM);
	/* NaN fails both comparisons, so test for "inside" rather than "out". */
	if (!(v >= s->bounds.lo && v <= s->bounds.hi))
		return GW_ERR(GW_EBOUNDS);
	if (s->bounds.integer && v != (double)(int64_t)v)
		return GW_ERR(GW_EBOUNDS);
	if (enc->active)
		return GW_ERR(GW_ESTATE);
	enc->param[p] = v;
	enc->set_mask |= 1u << p;
	return GW_OK;
}

int gw_encoder_get_param(const gw_encoder *enc, gw_param p, double *v)
{
	if (!enc || !v)
		return GW_ERR(GW_EINVAL);
	if (!find(enc->ops, p))
		return GW_ERR(GW_EPARAM);
	*v = enc->param[p];
	return GW_OK;
}

int gw_param_value(gw_param p, const char *text, double *v)
{
	if (!text || !v)
		return GW_ERR(GW_EINVAL);
	if ((unsigned)p >= GW_PARAM_COUNT_)
		return GW_ERR(GW_EPARAM);
	const char *const *nm = value_names[p];
	for (int i = 0; nm && nm[i]; i++)
		if (!strcmp(nm[i], text)) {
			*v = i;
			return GW_OK;
		}
	char *end;
	errno = 0;
	double d = strtod(text, &end);
	if (end == text || *end || errno)
		return GW_ERR(GW_EINVAL);
	*v = d;
	return GW_OK;
}

const char *gw_param_value_name(gw_param p, double v)
{
	if ((unsigned)p >= GW_PARAM_COUNT_ || !value_names[p])
		return NULL;
	for (int i = 0; value_names[p][i]; i++)
		if (v == i)
			return value_names[p][i];
	return NULL;
}

/* The names p accepts, "a|b|c", for messages. */
/* b's range as a reader takes it: "[1, 2)" for a bound kept just below a
 * round number (3LC's sparsity stops short of 2), "(0, 1]" for one kept
 * just above 0 (top-k's fraction starts at DBL_MIN), else "[lo, hi]". */
static void range_text(const gw_bounds *b, char *buf, size_t len)
{
	double lo = b->lo, hi = b->hi;
	const char *open = "[", *close = "]";
	if (lo > 0.0 && lo <= DBL_MIN) {
		lo = 0.0;
		open = "(";
	}
	char t[32];
	double up = nextafter(hi, INFINITY);
	snprintf(t, sizeof(t), "%g", up);
	if (strtod(t, NULL) == up) {
		snprintf(t, sizeof(t), "%g", hi);
		if (strtod(t, NULL) != hi) {
			hi = up;
			close = ")";
		}
	}
	snprintf(buf, len, "%s%g, %g%s", open, lo, hi, close);
}

static void list_names(gw_param p, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = 0; value_names[p] && value_names[p][i]; i++) {
		size_t at = strlen(buf);
		snprintf(buf + at, len - at, "%s%s", i ? "|" : "", value_names[p][i]);
	}
}

/* One "name=value" of length n at kv. */
_Static_assert(GW_PARAM_COUNT_ <= 64, "set_one's bit per parameter");

/* One "name=value" of a list; *seen (a bit per parameter) refuses a
 * parameter the list gave before: the last one silently winning hides a
 * typo. */
static int set_one(gw_encoder *enc, const char *kv, size_t n, uint64_t *seen)
{
	char item[128];
	if (n >= sizeof(item)) {
		return GW_ERRF(GW_EINVAL, "parameter '%.20s...': too long", kv);
	}
	memcpy(item, kv, n);
	item[n] = '\0';
	char *eq = strchr(item, '=');
	if (!eq) {
		return GW_ERRF(GW_EINVAL, "parameter '%s': expected name=value", item);
	}
	*eq = '\0';
	const char *val = eq + 1;
	int p = gw_param_by_name(item);
	const struct gw_param_spec *s = p < 0 ? NULL : find(enc->ops, (gw_param)p);
	if (!s) {
		return GW_ERRF(GW_EPARAM, "parameter '%s': not a parameter of codec %s", item,
		    enc->ops->name);
	}
	if ((*seen >> p) & 1u)
		return GW_ERRF(GW_EINVAL, "parameter %s: given twice", item);
	*seen |= 1ull << p;
	double v;
	char names_buf[96];
	list_names((gw_param)p, names_buf, sizeof(names_buf));
	if (gw_param_value((gw_param)p, val, &v) < 0) {
		if (*names_buf)
			return GW_ERRF(GW_EINVAL, "parameter %s: '%s' is not one of %s", item,
				       val, names_buf);
		return GW_ERRF(GW_EINVAL, "parameter %s: '%s' is not a number", item, val);
	}
	int rc = gw_encoder_set_param(enc, (gw_param)p, v);
	if (rc == GW_EBOUNDS && *names_buf)
		return gw__detail(rc, "parameter %s: '%s' is not one of %s", item, val,
				  names_buf);
	if (rc == GW_EBOUNDS) {
		char range[80];
		range_text(&s->bounds, range, sizeof(range));
		return gw__detail(rc, "parameter %s: %s is outside %s%s", item, val, range,
				  s->bounds.integer ? " or not a whole number" : "");
	}
	if (rc < 0)
		return gw__detail(rc, "parameter %s: %s", item, gw_strerror(rc));
	return rc;
}

int gw_encoder_set_params(gw_encoder *enc, const char *list)
{
	gw__detail_clear();
	if (!enc || !list) {
		return GW_ERRF(GW_EINVAL, "no encoder or no parameter list");
	}
	uint64_t seen = 0;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n == 0) {
			return GW_ERRF(GW_EINVAL, "empty parameter in '%s'", list);
		}
		int rc = set_one(enc, p, n, &seen);
		if (rc < 0)
			return rc;
		p += n;
		if (*p == ',' && !*++p) {
			return GW_ERRF(GW_EINVAL, "empty parameter at the end of '%s'", list);
		}
	}
	return GW_OK;
}

int gw_encoder_check_params(const gw_encoder *enc)
{
	gw__detail_clear();
	if (!enc)
		return GW_ERR(GW_EINVAL);
	char buf[200];
	const char *why = enc->ops->combo ? enc->ops->combo(enc, buf, sizeof(buf)) : NULL;
	if (!why)
		return GW_OK;
	return GW_ERRF(GW_EPARAM, "%s", why);
}

gw_encoder *gw_encoder_from_string(const char *spec)
{
	gw__detail_clear();
	if (!spec) {
		gw__detail(0, "no codec string");
		return NULL;
	}
	char name[32];
	size_t n = strcspn(spec, ":");
	if (n == 0 || n >= sizeof(name)) {
		gw__detail(0, "'%s' does not start with a codec name", spec);
		return NULL;
	}
	memcpy(name, spec, n);
	name[n] = '\0';
	int id = gw_codec_by_name(name);
	if (id < 0) {
		gw__detail(0, "unknown codec '%s'", name);
		return NULL;
	}
	gw_encoder *enc = gw_encoder_create(id);
	if (!enc) {
		gw__detail(0, "out of memory");
		return NULL;
	}
	if (spec[n] == ':' && !spec[n + 1]) {
		gw__detail(0, "'%s': no parameters after ':'", spec);
		gw_encoder_free(enc);
		return NULL;
	}
	if ((spec[n] == ':' && gw_encoder_set_params(enc, spec + n + 1) < 0) ||
	    gw_encoder_check_params(enc) < 0) {
		gw_encoder_free(enc);
		return NULL;
	}
	return enc;
}
