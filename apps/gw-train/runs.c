/* Records of a run: printed by rank 0 as JSON lines, read back by the
 * driver (and from files, for --baseline-from and --plot-only), and
 * plotted with gnuplot. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "train.h"

/* One record as a JSON line; a value that is not finite (a diverged loss)
 * is null, as JSON has no NaN. */
void record_print_json(FILE *f, const struct train_opts *o, const char *up,
		       const char *down, const struct record *r)
{
	const struct app_json_member m[] = {
		APP_JS("tool", "gw-train"), APP_JS("label", o->label ? o->label : up),
		APP_JS("model", o->model_name), APP_JS("up", up), APP_JS("down", down),
		APP_JU("step", r->step), APP_JG("epoch", 9, r->epoch),
		APP_JG("time_s", 9, r->time_s), APP_JG("train_loss", 9, r->train_loss),
		APP_JG("test_loss", 9, r->test_loss), APP_JG("test_acc", 9, r->test_acc * 100),
		APP_JU("bytes_up", r->bytes_up), APP_JU("bytes_down", r->bytes_down),
		APP_JU("retransmits", r->retransmits), APP_JG("ratio", 9, r->ratio),
	};
	struct app_json j;
	app_json_begin(&j, f, false);
	app_json_members(&j, m, APP_JSON_N(m));
	app_json_end(&j);
}

/* The number after "key": in line, or NAN (null, or missing). */
static double get_num(const char *line, const char *key, bool *found)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(line, pat);
	if (!p) {
		*found = false;
		return NAN;
	}
	p += strlen(pat);
	if (!strncmp(p, "null", 4))
		return NAN;
	char *end;
	double v = strtod(p, &end);
	if (end == p)
		*found = false;
	return v;
}

int record_parse(const char *line, struct record *r, char *label, size_t labellen)
{
	if (!strstr(line, "\"tool\":\"gw-train\"") || strstr(line, "\"summary\""))
		return -1;
	bool ok = true;
	r->epoch = get_num(line, "epoch", &ok);
	r->step = (uint64_t)get_num(line, "step", &ok);
	r->time_s = get_num(line, "time_s", &ok);
	r->train_loss = get_num(line, "train_loss", &ok);
	r->test_loss = get_num(line, "test_loss", &ok);
	r->test_acc = get_num(line, "test_acc", &ok) / 100;
	r->bytes_up = (uint64_t)get_num(line, "bytes_up", &ok);
	r->retransmits = (uint64_t)get_num(line, "retransmits", &ok);
	bool have_down = true;   /* older records lack it */
	double down = get_num(line, "bytes_down", &have_down);
	r->bytes_down = have_down && isfinite(down) ? (uint64_t)down : 0;
	r->ratio = get_num(line, "ratio", &ok);
	const char *l = strstr(line, "\"label\":\"");
	if (!ok || !l || !isfinite(r->time_s) || !isfinite(r->test_acc))
		return -1;
	l += 9;
	const char *e = strchr(l, '"');
	if (!e || (size_t)(e - l) >= labellen)
		return -1;
	memcpy(label, l, (size_t)(e - l));
	label[e - l] = 0;
	return 0;
}

int run_push(struct run *run, const struct record *r)
{
	if (run->n == run->cap) {
		unsigned cap = run->cap ? run->cap * 2 : 64;
		struct record *n = realloc(run->rec, cap * sizeof(*n));
		if (!n)
			return -1;
		run->rec = n;
		run->cap = cap;
	}
	run->rec[run->n++] = *r;
	return 0;
}

int run_load(const char *path, struct run *run)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "gw-train: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char line[4096];
	struct record r;
	while (fgets(line, sizeof(line), f))
		if (record_parse(line, &r, run->label, sizeof(run->label)) == 0 &&
		    run_push(run, &r) < 0)
			break;
	fclose(f);
	if (run->n == 0) {
		fprintf(stderr, "gw-train: %s: no gw-train records in it\n", path);
		return -1;
	}
	return 0;
}

void run_free(struct run *run)
{
	free(run->rec);
	memset(run, 0, sizeof(*run));
}

double run_time_to(const struct run *run, double acc)
{
	for (unsigned i = 0; i < run->n; i++)
		if (run->rec[i].test_acc >= acc)
			return run->rec[i].time_s;
	return -1;
}

/* A label inside gnuplot's single quotes: a quote would end it (labels
 * from record files are not checked like --label). */
static const char *plot_safe(const char *label)
{
	static char buf[64];
	size_t n = 0;
	for (; *label && n < sizeof(buf) - 1; label++)
		buf[n++] = *label == '\'' ? '`' : *label;
	buf[n] = 0;
	return buf;
}

/* PREFIX.dat (one gnuplot data block per run), PREFIX.gp, PREFIX.png. */
int runs_plot(const char *prefix, const struct run *runs, unsigned n)
{
	char dat[4096], gp[4096], png[4096];
	snprintf(dat, sizeof(dat), "%s.dat", prefix);
	snprintf(gp, sizeof(gp), "%s.gp", prefix);
	snprintf(png, sizeof(png), "%s.png", prefix);
	FILE *d = fopen(dat, "w"), *g = fopen(gp, "w");
	if (!d || !g) {
		fprintf(stderr, "gw-train: --plot: cannot write %s: %s\n", d ? gp : dat,
			strerror(errno));
		if (d)
			fclose(d);
		if (g)
			fclose(g);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		fprintf(d, "# %s\n# time_s MB_up_per_worker train_loss test_acc\n",
			runs[i].label);
		for (unsigned j = 0; j < runs[i].n; j++) {
			const struct record *r = &runs[i].rec[j];
			fprintf(d, "%.6f %.6f %.6g %.4f\n", r->time_s, r->bytes_up / 1e6,
				isfinite(r->train_loss) ? r->train_loss : r->test_loss,
				r->test_acc * 100);
		}
		fputs("\n\n", d);
	}
	fprintf(g, "set terminal png size 1400,1000\nset output '%s'\n"
		"set multiplot layout 2,2\nset grid\nset key bottom right\n", png);
	/* Log axes: codecs differ from raw by orders of magnitude in time and
	 * bytes, and a diverging run's loss would flatten every other curve.
	 * The first record (time 0, nothing sent) falls off a log axis. */
	static const struct { const char *x, *y; int cx, cy; bool logy; } panel[] = {
		{"training time (s, log)", "training loss (log)", 1, 3, true},
		{"training time (s, log)", "test accuracy (%)", 1, 4, false},
		{"MB sent per worker (log)", "training loss (log)", 2, 3, true},
		{"MB sent per worker (log)", "test accuracy (%)", 2, 4, false},
	};
	for (unsigned p = 0; p < 4; p++) {
		fprintf(g, "set xlabel '%s'\nset ylabel '%s'\nset logscale x\n%s\nplot ",
			panel[p].x, panel[p].y,
			panel[p].logy ? "set logscale y" : "unset logscale y");
		for (unsigned i = 0; i < n; i++)
			fprintf(g, "%s'%s' index %u using %d:%d with linespoints title '%s'",
				i ? ", " : "", dat, i, panel[p].cx, panel[p].cy,
				plot_safe(runs[i].label));
		fputs("\n", g);
	}
	fputs("unset multiplot\n", g);
	fclose(d);
	if (fclose(g) != 0)
		return -1;
	char *argv[] = {"gnuplot", gp, NULL};
	pid_t pid;
	if (app_spawn(&pid, argv, -1, -1, -1) != 0) {
		fprintf(stderr, "gw-train: --plot: gnuplot not found (scripts/install-deps.sh "
			"installs gnuplot-nox); data left in %s\n", dat);
		return -1;
	}
	int st = app_wait(pid);
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "gw-train: --plot: gnuplot failed on %s\n", gp);
		return -1;
	}
	return 0;
}
