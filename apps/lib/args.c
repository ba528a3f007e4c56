/* The command line: the split at "--" and strict numbers (app.h). */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
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

void app_bad_option(const char *prog, const char *help, char **argv, const char *shorts)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	if (!arg)
		arg = "";
	bool is_long = !strncmp(arg, "--", 2);
	if (is_long && optopt && strchr(arg, '='))
		fprintf(stderr, "%s: %.*s: takes no value\n", prog, (int)strcspn(arg, "="), arg);
	else if (is_long && optopt)
		fprintf(stderr, "%s: %s: needs a value\n", prog, arg);
	else if (is_long || !optopt)
		fprintf(stderr, "%s: unknown option '%s'\n", prog, arg);
	else if (shorts && optopt != ':' && strchr(shorts, optopt) &&
		 strchr(shorts, optopt)[1] == ':')
		fprintf(stderr, "%s: -%c: needs a value\n", prog, optopt);
	else
		fprintf(stderr, "%s: unknown option '-%c'\n", prog, optopt);
	fprintf(stderr, "%s: '%s --help' lists the options\n", prog, help ? help : prog);
}

bool app_eal_check(const char *prog, const struct app_args *a, const char *backend)
{
	if (a->eal_argc <= 1 || (backend && !strcmp(backend, "dpdk")))
		return true;
	fprintf(stderr, "%s: EAL option '%s' before '--': only --backend dpdk takes EAL "
		"options (this is --backend %s)\n", prog, a->eal_argv[1],
		backend ? backend : "udp");
	return false;
}

int app_backend_missing(const char *name)
{
	static const char *const known[] = {"udp", "dpdk", "rdma"};
	for (size_t i = 0; name && i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(name, known[i]))
			return APP_EXIT_MISSING;
	return APP_EXIT_USAGE;
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
