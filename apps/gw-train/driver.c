/* The gw-train driver: runs gw-launch (one aggregator and W workers, the
 * workers being this same binary with --rank), turns rank 0's records into
 * progress lines, and compares with a raw baseline when asked. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "train.h"

#define ARGV_MAX 128

struct argv {
	char *v[ARGV_MAX];
	char own[ARGV_MAX][32];   /* storage of numbers turned into text */
	unsigned n;
};

static void add(struct argv *a, const char *s)
{
	if (a->n < ARGV_MAX - 1)
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static void add_num(struct argv *a, const char *opt, const char *fmt, double v)
{
	if (a->n >= ARGV_MAX - 2)
		return;
	add(a, opt);
	snprintf(a->own[a->n], sizeof(a->own[0]), fmt, v);
	add(a, a->own[a->n]);
}

/* gw-launch beside this binary (the build tree, or an install's bindir),
 * else from PATH. */
static const char *launcher(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 16);
	if (n > 0) {
		buf[n] = 0;
		/* Installed: the same bindir. Build tree: apps/gw-train/gw-train
		 * beside apps/gw-launch. */
		for (int up = 0; up < 2; up++) {
			char *slash = strrchr(buf, '/');
			if (!slash)
				break;
			*slash = 0;
			size_t l = strlen(buf);
			snprintf(buf + l, len - l, "/gw-launch");
			if (access(buf, X_OK) == 0)
				return buf;
			buf[l] = 0;
		}
	}
	return "gw-launch";
}

static const char *fwd_value(const struct train_opts *o, const char *name)
{
	const char *v = NULL;
	for (unsigned i = 0; i < o->nfwd; i++)
		if (!strcmp(o->fwd[i][0], name))
			v = o->fwd[i][1];
	return v;
}

/* "3lc(s=1.75)", or "int8/raw" when the downlink differs. */
static void default_label(const struct train_opts *o, char *buf, size_t len)
{
	const char *up = fwd_value(o, "up"), *down = fwd_value(o, "down");
	const char *upp = fwd_value(o, "up-params"), *downp = fwd_value(o, "down-params");
	up = up ? up : "raw";
	down = down ? down : "raw";
	int n = snprintf(buf, len, "%s%s%s%s", up, upp ? "(" : "", upp ? upp : "", upp ? ")" : "");
	if (n > 0 && (size_t)n < len &&
	    (strcmp(up, down) || (upp && (!downp || strcmp(upp, downp))) || (!upp && downp)))
		snprintf(buf + n, len - (size_t)n, "/%s%s%s%s", down, downp ? "(" : "",
			 downp ? downp : "", downp ? ")" : "");
}

static void progress(const struct train_opts *o, const char *label, const struct record *r)
{
	fprintf(stdout, "%-14s epoch %6.2f  step %6llu  %8.3f s  loss %-9.4g test acc %6.2f%%"
		"  sent %8.3f MB/worker", label, r->epoch, (unsigned long long)r->step,
		r->time_s, isfinite(r->train_loss) ? r->train_loss : r->test_loss,
		r->test_acc * 100, r->bytes_up / 1e6);
	if (r->ratio > 0)
		fprintf(stdout, "  float32/sent %.1f", r->ratio);
	fputc('\n', stdout);
	(void)o;
	fflush(stdout);
}

static void show_tail(const char *path, int lines)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char **ring = calloc((size_t)lines, sizeof(char *));
	char buf[2048];
	unsigned long n = 0;
	while (ring && fgets(buf, sizeof(buf), f)) {
		free(ring[n % lines]);
		ring[n % lines] = strdup(buf);
		n++;
	}
	fclose(f);
	unsigned long from = n > (unsigned long)lines ? n - lines : 0;
	for (unsigned long i = from; ring && i < n; i++)
		fputs(ring[i % lines] ? ring[i % lines] : "", stderr);
	for (int i = 0; ring && i < lines; i++)
		free(ring[i]);
	free(ring);
}

/* gw-launch's own lines and the workers' rejoins, from its log. */
static void show_faults(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[2048];
	while (f && fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "gw-launch: ", 11) || strstr(buf, " rejoins the job at "))
			fputs(buf, stderr);
	if (f)
		fclose(f);
}

/* One whole job through gw-launch; rank 0's records go to run. raw: the
 * baseline, with raw up and down whatever the options say. */
static int run_job(const struct train_opts *o, bool raw, const char *label, struct run *run)
{
	char self[PATH_MAX], lpath[PATH_MAX], errlog[] = "/tmp/gw-train.XXXXXX";
	ssize_t sn = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sn <= 0) {
		fprintf(stderr, "gw-train: cannot find its own binary\n");
		return -1;
	}
	self[sn] = 0;
	struct argv *a = calloc(1, sizeof(*a));
	if (!a)
		return -1;
	add(a, launcher(lpath, sizeof(lpath)));
	add(a, "--link");
	add(a, o->link);
	add_num(a, "--workers", "%.0f", (double)o->launch_workers);
	add_num(a, "--shards", "%.0f", (double)o->launch_shards);
	if (o->keep_logs) {
		add(a, "--keep-logs");
		add(a, o->keep_logs);
	}
	if (o->restart)
		add_num(a, "--restart", "%.0f", (double)o->restart);
	add_num(a, "--dim", "%.0f", (double)train_nparams(o));
	/* A tensor of the job per layer's weights and biases (their own 3LC
	 * m), unless told otherwise. */
	static char layout[96];
	if (!o->one_tensor && !fwd_value(o, "layout")) {
		train_layout(o, layout, sizeof(layout));
		add(a, "--layout");
		add(a, layout);
	}
	if (o->shard_momentum && o->momentum > 0 && !fwd_value(o, "down-momentum"))
		add_num(a, "--down-momentum", "%.17g", o->momentum);
	for (unsigned i = 0; i < o->nfwd; i++) {
		if (raw && (!strcmp(o->fwd[i][0], "up") || !strcmp(o->fwd[i][0], "down") ||
			    !strcmp(o->fwd[i][0], "up-params") ||
			    !strcmp(o->fwd[i][0], "down-params")))
			continue;
		char *opt = a->own[a->n];
		snprintf(opt, sizeof(a->own[0]), "--%s", o->fwd[i][0]);
		add(a, opt);
		add(a, o->fwd[i][1]);
	}
	add(a, "--");
	add(a, self);
	add(a, "--model");
	add(a, o->model_name);
	add(a, "--train");
	add(a, o->train_path);
	add(a, "--test");
	add(a, o->test_path);
	add(a, "--label");
	add(a, label);
	add_num(a, "--features", "%.0f", (double)o->features);
	add_num(a, "--hidden", "%.0f", (double)o->hidden);
	add_num(a, "--classes", "%.0f", (double)o->classes);
	add_num(a, "--epochs", "%.0f", (double)o->epochs);
	add_num(a, "--min-epochs", "%.0f", (double)o->min_epochs);
	add_num(a, "--batch", "%.0f", (double)o->batch);
	add_num(a, "--evals", "%.0f", (double)o->evals);
	add_num(a, "--seed", "%.0f", (double)o->seed);
	add_num(a, "--lr", "%.17g", o->lr);
	add_num(a, "--momentum", "%.17g", o->momentum);
	add_num(a, "--l2", "%.17g", o->l2);
	add_num(a, "--timeout-ms", "%.0f", (double)o->timeout_ms);
	if (o->step_ms)
		add_num(a, "--step-ms", "%.0f", (double)o->step_ms);
	if (o->rto_us)
		add_num(a, "--rto-us", "%.0f", (double)o->rto_us);
	if (o->target_acc >= 0)
		add_num(a, "--target-acc", "%.17g", o->target_acc);
	if (o->verbose)
		add(a, "--verbose");
	if (o->cosine)
		add(a, "--cosine");
	/* Restarts: the replicas every rank writes, for the one that rejoins. */
	char state[] = "/tmp/gw-train-state.XXXXXX", replicas[sizeof(state) + 16] = "";
	if (o->restart) {
		if (!mkdtemp(state)) {
			fprintf(stderr, "gw-train: cannot create a folder in /tmp: %s\n",
				strerror(errno));
			free(a);
			return -1;
		}
		snprintf(replicas, sizeof(replicas), "%s/replica", state);
		add(a, "--param-file");
		add(a, replicas);
	}

	int out[2], errfd = -1, rc = -1;
	if (!o->verbose && (errfd = mkstemp(errlog)) < 0) {
		fprintf(stderr, "gw-train: cannot create a log in /tmp: %s\n", strerror(errno));
		goto done;
	}
	if (pipe(out) < 0) {
		fprintf(stderr, "gw-train: pipe: %s\n", strerror(errno));
		goto done;
	}
	pid_t pid;
	int e = app_spawn(&pid, a->v, out[1], errfd, out[0]);
	close(out[1]);
	if (e != 0) {
		fprintf(stderr, "gw-train: cannot start %s: %s\n", a->v[0], strerror(e));
		close(out[0]);
		goto done;
	}
	FILE *f = fdopen(out[0], "r");
	char line[4096];
	while (f && fgets(line, sizeof(line), f)) {
		const char *l = line;
		struct record r;
		char lab[64];
		if (!strncmp(l, "[0] ", 4) && record_parse(l + 4, &r, lab, sizeof(lab)) == 0) {
			run_push(run, &r);
			snprintf(run->label, sizeof(run->label), "%s", lab);
			if (o->json)
				fputs(l + 4, stdout), fflush(stdout);
			else
				progress(o, lab, &r);
		} else if (o->verbose) {
			fputs(l, stdout);
		}
	}
	if (f)
		fclose(f);
	int st = app_wait(pid);
	char how[48];
	if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && run->n > 0) {
		rc = 0;
		/* A loss-tolerant job that went on without a worker (or with it
		 * restarted) says so. */
		if (errfd >= 0)
			show_faults(errlog);
	} else {
		fprintf(stderr, "gw-train: the %s job failed (%s); its last messages:\n",
			label, st < 0 ? strerror(errno) : app_status_text(st, how, sizeof(how)));
		if (errfd >= 0)
			show_tail(errlog, 25);
	}
done:
	if (errfd >= 0) {
		close(errfd);
		unlink(errlog);
	}
	if (replicas[0]) {
		char p[sizeof(replicas) + 32];
		for (uint64_t r = 0; r < o->launch_workers; r++) {
			snprintf(p, sizeof(p), "%s.%llu", replicas, (unsigned long long)r);
			unlink(p);
			strcat(p, ".tmp");
			unlink(p);
		}
		rmdir(state);
	}
	free(a);
	return rc;
}

static const struct record *last(const struct run *r)
{
	return &r->rec[r->n - 1];
}

/* The baseline's target (its final accuracy, less half a point) and each
 * run's time to it (-1: never reached). */
struct versus {
	double target, tb, tr, speedup;
};

/* The run's --json summary line, against the baseline if there is one. */
static void summary_json(const struct train_opts *o, const struct run *run,
			 const struct run *base, const struct versus *v)
{
	const struct record *f = last(run);
	struct app_json j;
	app_json_begin(&j, stdout, false);
	app_json_str(&j, "tool", "gw-train");
	app_json_bool(&j, "summary", true);
	app_json_str(&j, "label", run->label);
	if (base)
		app_json_str(&j, "baseline", base->label);
	app_json_str(&j, "model", o->model_name);
	app_json_u64(&j, "workers", o->launch_workers);
	app_json_f(&j, "final_acc", 4, f->test_acc * 100);
	if (!base) {
		const struct app_json_member m[] = {
			APP_JG("epochs", 4, f->epoch), APP_JF("time_s", 6, f->time_s),
			APP_JU("bytes_up", f->bytes_up), APP_JU("bytes_down", f->bytes_down),
			APP_JG("ratio", 6, f->ratio),
		};
		app_json_members(&j, m, APP_JSON_N(m));
		app_json_end(&j);
		return;
	}
	const struct record *b = last(base);
	/* Total traffic, up and down, baseline over this run: null when
	 * either side's records predate bytes_down. */
	double traffic = f->bytes_down && b->bytes_down ?
		(double)(b->bytes_up + b->bytes_down) / (double)(f->bytes_up + f->bytes_down) : NAN;
	const struct app_json_member m[] = {
		APP_JF("baseline_acc", 4, b->test_acc * 100),
		APP_JF("acc_diff", 4, (f->test_acc - b->test_acc) * 100),
		APP_JF("target_acc", 4, v->target * 100), APP_JF("time_s", 6, f->time_s),
		APP_JF("baseline_time_s", 6, b->time_s),
		APP_JF("time_to_target_s", 6, v->tr >= 0 ? v->tr : NAN),
		APP_JF("baseline_time_to_target_s", 6, v->tb), APP_JG("speedup", 6, v->speedup),
		APP_JU("bytes_up", f->bytes_up), APP_JU("baseline_bytes_up", b->bytes_up),
		APP_JU("bytes_down", f->bytes_down), APP_JU("baseline_bytes_down", b->bytes_down),
		APP_JG("traffic_ratio", 6, traffic),
	};
	app_json_members(&j, m, APP_JSON_N(m));
	app_json_end(&j);
}

static void summary(const struct train_opts *o, const struct run *run, const struct run *base)
{
	const struct record *f = last(run);
	struct versus v = {0};
	if (base) {
		v.target = last(base)->test_acc - 0.005;
		v.tb = run_time_to(base, v.target);
		v.tr = run_time_to(run, v.target);
		v.speedup = v.tr > 0 ? v.tb / v.tr : v.tr == 0 ? INFINITY : NAN;
	}
	if (o->json) {
		summary_json(o, run, base, &v);
		return;
	}
	if (!base) {
		printf("gw-train: %s: test accuracy %.2f%% after %.2f epochs, %.2f s of "
		       "training, %.3f MB sent per worker (x%.1f smaller than float32)\n",
		       run->label, f->test_acc * 100, f->epoch, f->time_s,
		       f->bytes_up / 1e6, f->ratio);
		return;
	}
	const struct record *b = last(base);
	printf("gw-train: %s: final test accuracy %.2f%% (%s: %.2f%%, %+.2f points), "
	       "%.3f MB sent per worker (%s: %.3f MB)\n", run->label, f->test_acc * 100,
	       base->label, b->test_acc * 100, (f->test_acc - b->test_acc) * 100,
	       f->bytes_up / 1e6, base->label, b->bytes_up / 1e6);
	if (f->bytes_down && b->bytes_down)
		printf("gw-train: %s: %.3f MB up and down per worker (%s: %.3f MB): x%.2f less "
		       "traffic\n", run->label, (f->bytes_up + f->bytes_down) / 1e6, base->label,
		       (b->bytes_up + b->bytes_down) / 1e6,
		       (double)(b->bytes_up + b->bytes_down) / (double)(f->bytes_up + f->bytes_down));
	if (v.tr >= 0)
		printf("gw-train: time to %.2f%% (%s's final less 0.5 points): %s %.3f s, %s "
		       "%.3f s: speedup x%.2f\n", v.target * 100, base->label, base->label, v.tb,
		       run->label, v.tr, v.speedup);
	else
		printf("gw-train: %s never reached %.2f%% (%s's final less 0.5 points; %s took "
		       "%.2f s)\n", run->label, v.target * 100, base->label, base->label, v.tb);
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	interrupted = sig;
}

static bool readable(const char *what, const char *path)
{
	FILE *f = fopen(path, "r");
	if (f) {
		fclose(f);
		return true;
	}
	fprintf(stderr, "gw-train: %s: %s: %s%s\n", what, path, strerror(errno),
		errno == ENOENT ? " (scripts/fetch-data.sh fetches and converts the data)" : "");
	return false;
}

int train_driver(struct train_opts *o, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (o->launcher_opt) {
		fprintf(stderr, "gw-train: --%s: set by gw-train and gw-launch, not by hand\n",
			o->launcher_opt);
		return 2;
	}
	if (o->baseline && o->baseline_from) {
		fprintf(stderr, "gw-train: --baseline and --baseline-from exclude each other\n");
		return 2;
	}
	if (!readable("--train", o->train_path) || !readable("--test", o->test_path))
		return 2;
	char label[64];
	if (o->label)
		snprintf(label, sizeof(label), "%s", o->label);
	else
		default_label(o, label, sizeof(label));
	o->label = label;
	/* Ctrl-C reaches gw-launch too (one process group), which tears the
	 * job down; the driver outlives it to report. A handler, not SIG_IGN,
	 * because an ignored signal stays ignored across exec. */
	struct sigaction sa = {.sa_handler = on_sigint, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct run base = {0}, run = {0};
	struct run *pbase = NULL;
	int rc = 1;
	if (o->baseline_from) {
		if (run_load(o->baseline_from, &base) < 0)
			goto done;
		pbase = &base;
	} else if (o->baseline) {
		snprintf(base.label, sizeof(base.label), "raw");
		if (run_job(o, true, "raw", &base) < 0)
			goto done;
		pbase = &base;
	}
	if (interrupted || run_job(o, false, label, &run) < 0)
		goto done;
	summary(o, &run, pbase);
	rc = 0;
	if (o->plot) {
		struct run both[2] = {base, run};
		if (runs_plot(o->plot, pbase ? both : &run, pbase ? 2 : 1) < 0)
			rc = 1;
		else if (!o->json)
			printf("gw-train: plots in %s.png\n", o->plot);
	}
done:
	run_free(&base);
	run_free(&run);
	return interrupted ? 130 : rc;
}
