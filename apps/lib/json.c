/* JSON lines (app.h): one object per line, written member by member. */
#include <assert.h>
#include <math.h>

#include "app.h"

/* The separator before a member and its key. */
static void key(struct app_json *j, const char *k)
{
	if (j->more[j->depth])
		fputs(j->spaced ? ", " : ",", j->f);
	j->more[j->depth] = true;
	fprintf(j->f, "\"%s\":%s", k, j->spaced ? " " : "");
}

void app_json_begin(struct app_json *j, FILE *f, bool spaced)
{
	*j = (struct app_json){.f = f, .spaced = spaced};
	fputc('{', f);
}

void app_json_object(struct app_json *j, const char *k)
{
	key(j, k);
	fputc('{', j->f);
	assert(j->depth + 1 < APP_JSON_DEPTH);
	j->more[++j->depth] = false;
}

void app_json_end(struct app_json *j)
{
	fputc('}', j->f);
	if (j->depth)
		j->depth--;
	else
		fputc('\n', j->f);
}

void app_json_str(struct app_json *j, const char *k, const char *s)
{
	key(j, k);
	if (!s) {
		fputs("null", j->f);
		return;
	}
	fputc('"', j->f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(j->f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(j->f, "\\u%04x", *p);
		else
			fputc(*p, j->f);
	}
	fputc('"', j->f);
}

void app_json_u64(struct app_json *j, const char *k, uint64_t v)
{
	key(j, k);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

/* fmt: "%.*f" or "%.*g". */
static void number(struct app_json *j, const char *k, const char *fmt, int prec, double v)
{
	key(j, k);
	if (isfinite(v))
		fprintf(j->f, fmt, prec, v);
	else
		fputs("null", j->f);
}

void app_json_f(struct app_json *j, const char *k, int prec, double v)
{
	number(j, k, "%.*f", prec, v);
}

void app_json_g(struct app_json *j, const char *k, int prec, double v)
{
	number(j, k, "%.*g", prec, v);
}

void app_json_bool(struct app_json *j, const char *k, bool v)
{
	key(j, k);
	fputs(v ? "true" : "false", j->f);
}

void app_json_null(struct app_json *j, const char *k)
{
	key(j, k);
	fputs("null", j->f);
}

void app_json_members(struct app_json *j, const struct app_json_member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (m[i].kind) {
		case APP_JSON_STR: app_json_str(j, m[i].key, m[i].s); break;
		case APP_JSON_U64: app_json_u64(j, m[i].key, m[i].u); break;
		case APP_JSON_FIX: app_json_f(j, m[i].key, m[i].prec, m[i].d); break;
		case APP_JSON_GEN: app_json_g(j, m[i].key, m[i].prec, m[i].d); break;
		case APP_JSON_BOOL: app_json_bool(j, m[i].key, m[i].u != 0); break;
		}
	}
}
