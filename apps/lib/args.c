/* The command line: the split at "--" and strict numbers (app.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

void app_split_args(int argc, char **argv, struct app_args *a)
{
	int dd = 0;
	for (int i = 1; i < argc && !dd; i++)
		if (!strcmp(argv[i], "--"))
			dd = i;
	a->eal_argv = argv;
	a->eal_argc = dd ? dd : 1;
	if (dd)
		argv[dd] = argv[0];
	a->first = dd;
	a->argc = argc - dd;
	a->argv = argv + dd;
}

/* A range's end as the message shows it. */
static void show_u64(char *buf, size_t len, uint64_t v)
{
	if (v == UINT64_MAX)
		snprintf(buf, len, "2^64 - 1");
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

bool app_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out,
		   char *why, size_t whylen)
{
	/* strtoull would take space and a sign first (and wrap "-1"), and
	 * read a leading 0 as octal: only digits, in base 10 or after 0x. */
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *d = hex ? s + 2 : s;
	bool digit = hex ? isxdigit((unsigned char)*d) : isdigit((unsigned char)*d);
	char *end = (char *)d;
	errno = 0;
	unsigned long long v = digit ? strtoull(d, &end, hex ? 16 : 10) : 0;
	if (!digit || *end || errno || v < lo || v > hi) {
		char l[32], h[32];
		show_u64(l, sizeof(l), lo);
		show_u64(h, sizeof(h), hi);
		snprintf(why, whylen, "not a whole number in [%s, %s]", l, h);
		return false;
	}
	*out = v;
	return true;
}

bool app_parse_double(const char *s, double lo, double hi, unsigned open, double *out,
		      char *why, size_t whylen)
{
	char *end;
	double v = strtod(s, &end);
	bool ok = end != s && !*end && !isspace((unsigned char)*s) &&
		  ((open & APP_OPEN_LO) ? v > lo : v >= lo) &&
		  ((open & APP_OPEN_HI) ? v < hi : v <= hi);   /* NaN fails both */
	if (!ok) {
		snprintf(why, whylen, "not a number in %c%g, %g%c",
			 (open & APP_OPEN_LO) ? '(' : '[', lo, hi,
			 (open & APP_OPEN_HI) ? ')' : ']');
		return false;
	}
	*out = v;
	return true;
}

static void refused(const char *prog, const char *opt, const char *s, const char *why)
{
	if (prog)
		fprintf(stderr, "%s: --%s: '%s' is %s\n", prog, opt, s, why);
}

bool app_opt_u64(const char *prog, const char *opt, const char *s, uint64_t lo,
		 uint64_t hi, uint64_t *out)
{
	char why[96];
	if (app_parse_u64(s, lo, hi, out, why, sizeof(why)))
		return true;
	refused(prog, opt, s, why);
	return false;
}

bool app_opt_double(const char *prog, const char *opt, const char *s, double lo,
		    double hi, unsigned open, double *out)
{
	char why[96];
	if (app_parse_double(s, lo, hi, open, out, why, sizeof(why)))
		return true;
	refused(prog, opt, s, why);
	return false;
}
