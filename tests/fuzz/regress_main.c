/* Replays fuzz inputs without libFuzzer: linked with one harness it becomes
 * regress_<name>, which runs LLVMFuzzerTestOneInput once on every file named
 * on the command line or found (recursively, in name order) in a directory
 * named there. Any compiler will do; a sanitizer build catches more.
 *
 *	regress_raw build/tests/fuzz/corpus/raw tests/fuzz/regress/raw
 *
 * A file whose name ends in ".ok" must be accepted by the harness's "as is"
 * step, one ending in ".GW_E<NAME>" (e.g. "huge-payload.GW_ELENGTH") must be
 * rejected with exactly that code (see gw_fuzz_last_rc in fuzz_common.h);
 * other names carry no expectation: the harness's own checks apply.
 * Arguments starting with '-' are ignored, so a libFuzzer command line
 * works too. Exit status: 0 if every input passed; a failing input aborts
 * (after naming it on stderr) or, for expectations, exits 1 at the end. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"

/* libFuzzer calls it first when a harness defines it. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static const char *current;   /* input being run, for crash reports */
static unsigned long ran, failed;

static void say_current(void)
{
	if (!current)
		return;
	static const char pre[] = "regress: crashed on input ";
	ssize_t w = write(STDERR_FILENO, pre, sizeof(pre) - 1);
	w = write(STDERR_FILENO, current, strlen(current));
	w = write(STDERR_FILENO, "\n", 1);
	(void)w;
}

static void on_signal(int sig)
{
	say_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* AddressSanitizer calls this (when linked in) before it reports an error. */
void __asan_on_error(void);
void __asan_on_error(void)
{
	say_current();
}

static int read_file(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 4096, n = 0;
	uint8_t *b = malloc(cap);
	while (b) {
		n += fread(b + n, 1, cap - n, f);
		if (n < cap)
			break;
		uint8_t *nb = realloc(b, cap * 2);
		if (!nb) {
			free(b);
			b = NULL;
			break;
		}
		b = nb;
		cap *= 2;
	}
	int err = ferror(f);
	fclose(f);
	if (!b || err) {
		free(b);
		return -1;
	}
	*data = b;
	*size = n;
	return 0;
}

static void check_expectation(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	if (!dot)
		return;
	const char *want = dot + 1;
	int rc = gw_fuzz_last_rc;
	if (!strcmp(want, "ok")) {
		if (rc == GW_FUZZ_RC_NONE || rc < 0) {
			fprintf(stderr, "regress: %s: expected acceptance, got %s\n",
				path, rc == GW_FUZZ_RC_NONE ? "no result"
							    : gw_error_name(rc));
			failed++;
		}
	} else if (!strncmp(want, "GW_E", 4)) {
		if (rc == GW_FUZZ_RC_NONE || rc >= 0 ||
		    strcmp(gw_error_name(rc), want) != 0) {
			fprintf(stderr, "regress: %s: expected %s, got %s\n", path,
				want,
				rc == GW_FUZZ_RC_NONE ? "no result"
				: rc >= 0	      ? "acceptance"
						      : gw_error_name(rc));
			failed++;
		}
	}
}

static int run_file(const char *path)
{
	uint8_t *data;
	size_t size;
	if (read_file(path, &data, &size) < 0) {
		fprintf(stderr, "regress: cannot read %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	if (getenv("GW_FUZZ_VERBOSE"))
		fprintf(stderr, "regress: %s (%zu bytes)\n", path, size);
	current = path;
	gw_fuzz_last_rc = GW_FUZZ_RC_NONE;
	LLVMFuzzerTestOneInput(data, size);
	check_expectation(path);
	current = NULL;
	free(data);
	ran++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "regress: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);

	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "regress: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				abort();
			names = nn;
		}
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		names[n] = malloc(len);
		if (!names[n])
			abort();
		snprintf(names[n], len, "%s/%s", path, e->d_name);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (run_path(names[i]) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n"
				"Runs the fuzz harness on every input given.\n",
			argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	signal(SIGABRT, on_signal);
	signal(SIGSEGV, on_signal);
	signal(SIGBUS, on_signal);
	signal(SIGFPE, on_signal);
	signal(SIGILL, on_signal);

	int rc = 0, paths = 0;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		paths++;
		if (run_path(argv[i]) < 0)
			rc = 1;
	}
	printf("regress: %lu inputs from %d paths, %lu failed expectations\n",
	       ran, paths, failed);
	return rc || failed ? 1 : 0;
}
