/* gw-launch: one allreduce job on this machine (launch.h has the map). */
#include <errno.h>
#include <stdarg.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch.h"

static const char usage_text[] =
"gw-launch: one allreduce job on this machine — S aggregator shards and W\n"
"worker processes — joined by memif links (DPDK, no hugepages, no NIC), by\n"
"the kernel UDP backend on 127.0.0.1, or by UDP across the namespaces of\n"
"scripts/netns-star.sh (workers in gwn0.., shards in the hub gwhub, where\n"
"the bridge is: aggregation in the switch, each worker's link limited by\n"
"the star's tc tbf), or by the RDMA verbs backend (UD) on one RDMA\n"
"device's IP (--rdma-ip, default 10.0.0.1: the soft-RoCE guest of\n"
"scripts/rdma-vm.sh). Torn down on exit, failure, time-out or Ctrl-C.\n"
"\n"
"  gw-launch [--link memif|udp|netns|rdma] --workers W [--shards S]\n"
"            [launcher options] [job options] -- WORKER [worker options]\n"
"\n"
"Job options (--dim, --up, --down, --mode, --key-file, ...: every --NAME\n"
"VALUE that is not a launcher option) go to every process; worker options\n"
"to the workers only, each of which also gets its rank, the addresses\n"
"and, for memif, its EAL options. memif joins two processes only, so each\n"
"shard opens one memif port per worker and each worker one per shard\n"
"(gw-allreduce --ports S): S x W links. On udp every shard\n"
"and worker binds a port the kernel picks (--local 127.0.0.1:0), so jobs\n"
"started at once do not collide; each shard prints the endpoint it got,\n"
"which gw-launch gives the workers.\n"
"\n"
"Launcher options:\n"
"  --link L             memif, udp (default), netns or rdma\n"
"  --workers W          worker processes (1..64)\n"
"  --shards S           aggregator shards (1..16, default 1)\n"
"  --colocate           no shard processes: worker R hosts shard R on a\n"
"                       thread (gw-allreduce --host-shard), S = W, as\n"
"                       gw_member's co-located shards; --link udp (ports\n"
"                       picked free) or netns (shard R at worker R's IP)\n"
"  --rdma-ip IP         --link rdma: the address every process binds\n"
"                       (port 0: picked), an IP of an RDMA device\n"
"  --cores LIST         DPDK cores for every memif process (default: all)\n"
"  --agg-args 'ARGS'    more options for the shards only (split at blanks;\n"
"                       repeatable), e.g. --agg-args '--json'\n"
"  --rank-args 'R:ARGS' more options for worker R only (split at blanks;\n"
"                       repeatable), e.g. --rank-args '3:--lag-ms 40'\n"
"  --idle-exit MS       a shard leaves by itself MS after its last packet\n"
"                       (gw-aggregator --idle-exit-ms), even if gw-launch\n"
"                       is killed without a chance to stop it\n"
"  --restart N          loss-tolerant jobs: a worker that dies is started\n"
"                       again (N restarts in all) with --rejoin MS after\n"
"                       its options, and joins the job at its round\n"
"  --timeout SEC        stop the whole job after SEC seconds (exit 124)\n"
"  --logs DIR           keep every process's output in DIR: agg.S.out (the\n"
"                       shard's counters, JSON with --agg-args --json; on\n"
"                       udp after the line with its endpoint),\n"
"                       agg.S.err, w.R.out, w.R.err, and aggs (the shards'\n"
"                       endpoints, written once they are ready)\n"
"  --keep-logs DIR      the same as --logs\n"
"  --quiet              no process output on the console: only gw-launch's\n"
"                       messages, and the last lines of a process that failed\n"
"  -h, --help           this text\n"
"\n"
"Without --quiet, worker R's lines come prefixed \"[R] \" (its stdout on\n"
"stdout, its stderr on stderr), and the shards' lines prefixed \"[agg S] \"\n"
"on stderr once they have stopped.\n"
"\n"
"Exit status: 0 when every worker and shard exited 0; 1 when one failed\n"
"(named on stderr; every other process is stopped at once); 2 on a bad\n"
"command line, ours or the one a process refused (it exited 2); 124 on\n"
"--timeout; 130 when interrupted (docs/cli.md). In a loss-tolerant\n"
"job (--mode loss-tolerant) a worker that fails is named and the others go\n"
"on (restarted with --restart): 0 when the rest finished, 1 when none did.\n";

static struct opts o;
static struct job j;
static struct sup sup;
static const char *timeout_arg;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* NAME VALUE MAX: VALUE is a whole number in 1..MAX. */
static unsigned count(const char *name, const char *v, unsigned max)
{
	char *end;
	unsigned long x = strtoul(v, &end, 10);
	if (!*v || *end || strspn(v, "0123456789") != strlen(v) || strlen(v) > 9 || x < 1 ||
	    x > max)
		die("%s: '%s' is not a number in 1..%u", name, v, max);
	return (unsigned)x;
}

/* The first of name (a path, or searched in PATH) that is an executable
 * file, into out; false if none. */
static bool find_exe(const char *name, char *out, size_t len)
{
	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "/usr/local/bin:/usr/bin:/bin"), *save = NULL;
	bool found = false;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", d, name);
		struct stat st;
		found = stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0;
	}
	free(copy);
	return found;
}

static void rank_args(const char *v)
{
	const char *colon = strchr(v, ':');
	if (!colon || colon == v || strspn(v, "0123456789") != (size_t)(colon - v))
		die("--rank-args: '%s' is not RANK:ARGS", v);
	unsigned long r = strtoul(v, NULL, 10);
	if (r >= MAX_WORKERS)   /* and below --workers, once that is known */
		die("--rank-args: rank %lu is not below --workers (at most %u)", r, MAX_WORKERS);
	char *old = o.rank_extra[r];
	size_t n = (old ? strlen(old) : 0) + strlen(colon + 1) + 2;
	char *s = malloc(n);
	snprintf(s, n, "%s %s", old ? old : "", colon + 1);
	free(old);
	o.rank_extra[r] = s;
}

static void split_words(const char *v, const char **out, unsigned *n)
{
	char *copy = strdup(v), *save = NULL;
	for (char *t = strtok_r(copy, " \t", &save); t && *n < MAX_ARGS;
	     t = strtok_r(NULL, " \t", &save))
		out[(*n)++] = t;
}

/* One launcher option with its value; false if it is a job option. */
static bool launcher_opt(const char *name, const char *v)
{
	if (!strcmp(name, "--link")) {
		const char *names[] = {"udp", "memif", "netns", "rdma"};
		unsigned i = 0;
		while (i < 4 && strcmp(v, names[i]))
			i++;
		if (i == 4)
			die("--link: '%s' is not memif, udp, netns or rdma", v);
		o.link = (enum link)i;
	} else if (!strcmp(name, "--rdma-ip")) {
		unsigned a, b, c, d;
		char tail;
		if (sscanf(v, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || strspn(v, "0123456789.") != strlen(v))
			die("--rdma-ip: '%s' is not an IPv4 address", v);
		o.rdma_ip = v;
	} else if (!strcmp(name, "--workers")) {
		o.workers = count("--workers", v, MAX_WORKERS);
	} else if (!strcmp(name, "--shards")) {
		o.shards = count("--shards", v, MAX_SHARDS);
	} else if (!strcmp(name, "--cores")) {
		o.cores = v;
	} else if (!strcmp(name, "--logs") || !strcmp(name, "--keep-logs")) {
		o.logs = v;
	} else if (!strcmp(name, "--idle-exit")) {
		o.idle_ms = count("--idle-exit", v, 86400000);
	} else if (!strcmp(name, "--timeout")) {
		char *end;
		double t = strtod(v, &end);
		if (!*v || *end || strspn(v, "0123456789.") != strlen(v) || !(t > 0))
			die("--timeout: '%s' is not a positive number of seconds", v);
		o.timeout_s = t;
		timeout_arg = v;
	} else if (!strcmp(name, "--restart")) {
		if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 3 || atoi(v) > 100)
			die("--restart: '%s' is not a number in 0..100", v);
		o.restart = (unsigned)atoi(v);
	} else if (!strcmp(name, "--agg-args")) {
		split_words(v, o.agg_extra, &o.nagg);
	} else if (!strcmp(name, "--rank-args")) {
		rank_args(v);
	} else {
		return false;
	}
	return true;
}

static void check(bool shards_given);
static void find_programs(const char *argv0);

static void parse(int argc, char **argv)
{
	o.shards = 1;
	o.rdma_ip = "10.0.0.1";
	bool workers_given = false, shards_given = false;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (!strcmp(a, "--quiet") || !strcmp(a, "--colocate")) {
			*(a[2] == 'q' ? &o.quiet : &o.colocate) = true;
			continue;
		}
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (strncmp(a, "--", 2))
			die("unexpected argument '%s' (the worker command goes after --)", a);
		if (i + 1 >= argc)
			die("%s: needs a value", a);
		const char *v = argv[++i];
		workers_given |= !strcmp(a, "--workers");
		shards_given |= !strcmp(a, "--shards");
		if (!launcher_opt(a, v)) {
			if (o.njob + 2 > MAX_ARGS)
				die("too many job options");
			o.job[o.njob++] = a;
			o.job[o.njob++] = v;
			if (!strcmp(a, "--mode"))
				o.tolerant = !strcmp(v, "loss-tolerant");
		}
	}
	if (i >= argc)
		die("no worker command after --");
	o.wargv = argv + i;
	o.wargc = argc - i;
	if (!workers_given)
		count("--workers", "", MAX_WORKERS);
	check(shards_given);
	find_programs(argv[0]);
}

/* What the options say together. */
static void check(bool shards_given)
{
	if (o.colocate) {
		if (o.link != LINK_UDP && o.link != LINK_NETNS)
			die("--colocate: --link udp or netns (a %s port is opened once per process)",
			    o.link == LINK_MEMIF ? "memif" : "rdma");
		if (shards_given && o.shards != o.workers)
			die("--colocate: every worker hosts one shard, so --shards must be "
			    "--workers (%u)", o.workers);
		if (o.workers > MAX_SHARDS)
			die("--colocate: at most %u shards, so at most %u workers", MAX_SHARDS,
			    MAX_SHARDS);
		if (o.idle_ms)
			die("--idle-exit: no shard processes with --colocate");
		o.shards = o.workers;
	}
	for (unsigned r = o.workers; r < MAX_WORKERS; r++)
		if (o.rank_extra[r])
			die("--rank-args: rank %u is not below --workers %u", r, o.workers);
	if (o.restart && !o.tolerant)
		die("--restart: only a loss-tolerant job (--mode loss-tolerant) goes on while a "
		    "worker restarts");
	if (o.restart && o.colocate)
		die("--restart: not with --colocate (a worker's death takes its shard with it)");
	for (unsigned w = 0; o.link == LINK_NETNS && w < o.workers; w++) {
		char ns[64];
		snprintf(ns, sizeof(ns), "/run/netns/gwn%u", w);
		if (access(ns, F_OK))
			die("--link netns: namespace gwn%u missing (scripts/netns-star.sh up %u "
			    "[RATE])", w, o.workers);
	}
	if (o.link == LINK_NETNS && access("/run/netns/gwhub", F_OK))
		die("--link netns: namespace gwhub missing");
	if (!o.cores) {
		static char cores[32];
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		snprintf(cores, sizeof(cores), "0-%ld", (ncpu > 0 ? ncpu : 1) - 1);
		o.cores = cores;
	}
	if (o.idle_ms) {
		static char ms[24];
		snprintf(ms, sizeof(ms), "%llu", (unsigned long long)o.idle_ms);
		o.agg_extra[o.nagg++] = "--idle-exit-ms";
		o.agg_extra[o.nagg++] = ms;
	}
}

/* The worker as found, and gw-aggregator beside us, else in PATH. */
static void find_programs(const char *argv0)
{
	if (!find_exe(o.wargv[0], o.worker, sizeof(o.worker)))
		die("worker '%s': not found", o.wargv[0]);
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(o.agg, sizeof(o.agg), "%s/gw-aggregator", self);
	if (access(o.agg, X_OK) && !find_exe("gw-aggregator", o.agg, sizeof(o.agg)))
		die("gw-aggregator: not found beside %s or on PATH", argv0);
}

/* ---- the job ------------------------------------------------------------ */

/* A process's log file: agg.S.EXT or w.R.EXT. */
static void log_path(char *buf, size_t n, enum role role, unsigned id, const char *ext)
{
	snprintf(buf, n, "%s/%s.%u.%s", j.logs, role == ROLE_WORKER ? "w" : "agg", id, ext);
}

/* The shards whose lines why() quoted: show_shards leaves them out. */
static bool quoted[MAX_SHARDS];
/* Exit 2 for a process that refused its command line (exit 2): the job's
 * options were bad, not its run. */
static int fail_rc = 1;

static void why(const struct proc *p)
{
	char name[32], how[48], path[4200], line[4096];
	fprintf(stderr, PROG ": %s failed (%s)\n", proc_name(p, name, sizeof(name)),
		proc_how(p->status, how, sizeof(how)));
	if (WIFEXITED(p->status) && WEXITSTATUS(p->status) == 2)
		fail_rc = 2;
	if (p->role == ROLE_WORKER && !o.quiet)
		return;   /* its lines were on the console */
	if (p->role == ROLE_SHARD && p->id < MAX_SHARDS)
		quoted[p->id] = true;
	log_path(path, sizeof(path), p->role, p->id, "err");
	/* Its first message ("gw-...: ", the first error), then its last 8
	 * lines: the first error is what went wrong, the last lines how it
	 * ended. */
	FILE *f = fopen(path, "r");
	char tail[8][4096], first[4096] = "";
	unsigned n = 0, first_at = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (!first[0] && !strncmp(line, "gw-", 3) && strstr(line, ": ")) {
			snprintf(first, sizeof(first), "%s", line);
			first_at = n;
		}
		snprintf(tail[n++ % 8], sizeof(tail[0]), "%s", line);
	}
	if (f)
		fclose(f);
	if (first[0] && n > 8 && first_at < n - 8)
		fprintf(stderr, PROG ":   %s%s" PROG ":   ...\n", first,
			strchr(first, '\n') ? "" : "\n");
	for (unsigned i = n > 8 ? n - 8 : 0; i < n; i++)
		fprintf(stderr, PROG ":   %s%s", tail[i % 8],
			strchr(tail[i % 8], '\n') ? "" : "\n");
}

/* The shards' output, once they stopped: not their ready and endpoint
 * lines. */
static void show_shards(void)
{
	char path[4200], line[4096];
	for (unsigned s = 0; !o.colocate && s < o.shards; s++) {
		for (int k = 0; k < 2 && !quoted[s]; k++) {
			snprintf(path, sizeof(path), "%s/agg.%u.%s", j.logs, s, k ? "err" : "out");
			FILE *f = fopen(path, "r");
			while (f && fgets(line, sizeof(line), f)) {
				size_t n = strlen(line);
				if (n && line[n - 1] == '\n')
					line[--n] = '\0';
				char ep[48];
				snprintf(ep, sizeof(ep), "gw-aggregator shard %u: endpoint ", s);
				if ((!strncmp(line, "gw-aggregator: shard ", 21) && n >= 7 &&
				     !strcmp(line + n - 7, ", ready")) ||
				    !strncmp(line, ep, strlen(ep)) || strstr(line, "\"endpoint\":"))
					continue;
				fprintf(stderr, "[agg %u] %s\n", s, line);
			}
			if (f)
				fclose(f);
		}
	}
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Everything stopped, the shards' lines shown, our folder removed. */
static void __attribute__((noreturn)) finish(int rc)
{
	sup_stop_all(&sup, SIGTERM, 5000);
	if (!o.quiet)
		show_shards();
	if (j.run[0])
		nftw(j.run, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	exit(rc);
}

static void interrupted(void)
{
	fprintf(stderr, PROG ": interrupted, stopping everything\n");
	finish(130);
}

/* Starts shard or worker id with the command line job.c made for it, its
 * output in agg.S.out/err or w.R.out/err (a restart's appended to the
 * first run's). */
static void start(enum role role, unsigned id, bool rejoin)
{
	struct argv a = {.n = 0};
	char out[4200], err[4200];
	if (role == ROLE_SHARD)
		job_shard_cmd(&j, id, &a);
	else
		job_worker_cmd(&j, id, rejoin, &a);
	log_path(out, sizeof(out), role, id, "out");
	log_path(err, sizeof(err), role, id, "err");
	struct proc *p = sup_spawn(&sup, role, id, &a, out, err, rejoin);
	argv_free(&a);
	if (!p)
		finish(1);
}

/* Every shard started, and each one ready with its endpoint known. */
static void start_shards(void)
{
	for (unsigned s = 0; s < o.shards; s++) {
		if (o.link == LINK_MEMIF)
			snprintf(j.eps[s], sizeof(j.eps[s]), "10.77.1.%u:7000", 200 + s);
		else if (o.link == LINK_NETNS)
			snprintf(j.eps[s], sizeof(j.eps[s]), "10.77.0.254:%u", 7000 + s);
		start(ROLE_SHARD, s, false);
	}
	bool waiting[MAX_SHARDS];
	char what[1024];
	for (uint64_t give_up = now_ns() + 60000000000ull;;) {
		unsigned left = 0;
		for (unsigned s = 0; s < o.shards; s++) {
			job_read_endpoint(&j, s);
			waiting[s] = !j.eps[s][0] || !job_shard_ready(&j, s);
			left += waiting[s];
		}
		if (!left)
			return;
		bool sig, late;
		struct proc *p = sup_wait(&sup, 50, &sig, &late);
		if (sig)
			interrupted();
		if (p) {
			why(p);
			fprintf(stderr, PROG ": shard %u failed to start\n", p->id);
			finish(fail_rc);
		}
		job_not_up(&j, waiting, what, sizeof(what));
		if (late) {
			fprintf(stderr, PROG ": timed out after %s s: %s\n", timeout_arg, what);
			finish(124);
		}
		if (now_ns() >= give_up) {   /* by the clock: output wakes sup_wait */
			fprintf(stderr, PROG ": after 60 s, %s\n", what);
			finish(1);
		}
	}
}

/* Until every worker is done; the first failure (a loss-tolerant job: a
 * worker's with no restart left, or every worker's) ends the job. */
static void supervise(void)
{
	unsigned left = o.workers, finished = 0, restarts = 0, nlost = 0, lost[MAX_WORKERS];
	while (left) {
		bool sig, late;
		struct proc *p = sup_wait(&sup, 1000, &sig, &late);
		if (sig)
			interrupted();
		if (late) {
			char still[512] = "";
			size_t at = 0;
			for (unsigned i = 0; i < sup.n; i++)
				if (sup.p[i].live && sup.p[i].role == ROLE_WORKER && at < sizeof(still))
					at += (size_t)snprintf(still + at, sizeof(still) - at, " %u",
							       sup.p[i].id);
			fprintf(stderr, PROG ": timed out after %s s; still running: worker%s\n",
				timeout_arg, still);
			finish(124);
		}
		if (!p)
			continue;
		bool ok = proc_ok(p->status);
		if (!ok && o.tolerant && p->role == ROLE_WORKER) {
			/* The shards evict it and the others go on; a restart
			 * rejoins at the job's round. */
			why(p);
			if (restarts < o.restart) {
				restarts++;
				fprintf(stderr, PROG ": loss-tolerant: the others go on; worker %u "
					"restarted (%u of %u), rejoining\n", p->id, restarts, o.restart);
				start(ROLE_WORKER, p->id, true);
			} else {
				fprintf(stderr, PROG ": loss-tolerant: the others go on without "
					"worker %u\n", p->id);
				lost[nlost++] = p->id;
				left--;
			}
			continue;
		}
		if (!ok) {
			why(p);
			finish(fail_rc);
		}
		if (p->role == ROLE_WORKER) {
			left--;
			finished++;
		}
		/* A shard that left by itself (--idle-exit): the workers still
		 * running may not need it. */
	}
	if (nlost) {
		if (!finished) {
			fprintf(stderr, PROG ": loss-tolerant: every worker failed\n");
			finish(1);
		}
		fprintf(stderr, PROG ": loss-tolerant: the job finished without worker");
		for (unsigned i = 0; i < nlost; i++)
			fprintf(stderr, " %u", lost[i]);
		fputc('\n', stderr);
	}
}

/* The workers are done: the shards print what they counted and leave;
 * each has 10 s, or is named and killed. */
static int stop_shards(void)
{
	int rc = 0;
	for (unsigned i = 0; i < sup.n; i++)
		if (sup.p[i].live && sup.p[i].role == ROLE_SHARD)
			kill(sup.p[i].pid, SIGINT);
	/* 10 s by the clock: output wakes sup_wait early. */
	for (uint64_t end = now_ns() + 10000000000ull; now_ns() < end;) {
		bool any = false, sig, late;
		for (unsigned i = 0; i < sup.n; i++)
			any |= sup.p[i].live && sup.p[i].role == ROLE_SHARD;
		if (!any)
			break;
		struct proc *p = sup_wait(&sup, 100, &sig, &late);
		if (sig)
			interrupted();
		if (p && p->role == ROLE_SHARD && !proc_ok(p->status) &&
		    !(WIFSIGNALED(p->status) && WTERMSIG(p->status) == SIGKILL)) {
			why(p);
			rc = 1;
		}
	}
	for (unsigned i = 0; i < sup.n; i++) {
		if (!sup.p[i].live || sup.p[i].role != ROLE_SHARD)
			continue;
		fprintf(stderr, PROG ": shard %u did not stop 10 s after SIGINT: killed\n",
			sup.p[i].id);
		kill(sup.p[i].pid, SIGKILL);
		rc = 1;
	}
	return rc;
}

static void make_dirs(void)
{
	j.self = getpid();
	if (o.logs) {
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "%s", o.logs);
		/* mkdir -p */
		for (char *at = cmd + 1; *at; at++)
			if (*at == '/') {
				*at = '\0';
				mkdir(cmd, 0755);
				*at = '/';
			}
		if (mkdir(cmd, 0755) && errno != EEXIST)
			die("--logs: cannot create '%s'", o.logs);
		snprintf(j.logs, sizeof(j.logs), "%s", o.logs);
		snprintf(cmd, sizeof(cmd), "%s/aggs", o.logs);
		unlink(cmd);
	}
	/* Our own folder for memif's sockets, and for the logs without
	 * --logs; removed at the end. */
	if (o.link == LINK_MEMIF || !o.logs) {
		snprintf(j.run, sizeof(j.run), "/tmp/gw-launch.XXXXXX");
		if (!mkdtemp(j.run)) {
			fprintf(stderr, PROG ": cannot make a folder in /tmp: %s\n", strerror(errno));
			exit(1);
		}
		if (!o.logs)
			snprintf(j.logs, sizeof(j.logs), "%s", j.run);
	}
}

static void write_aggs(void)
{
	size_t at = 0;
	for (unsigned s = 0; s < o.shards; s++)
		at += (size_t)snprintf(j.aggs + at, sizeof(j.aggs) - at, "%s%s", s ? "," : "",
				       j.eps[s]);
	char tmp[4200], dst[4200];
	snprintf(tmp, sizeof(tmp), "%s/aggs.tmp", j.logs);
	snprintf(dst, sizeof(dst), "%s/aggs", j.logs);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%s\n", j.aggs);
		fclose(f);
		rename(tmp, dst);
	}
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	j.o = &o;
	make_dirs();
	if (sup_init(&sup, o.quiet, o.timeout_s) < 0) {
		fprintf(stderr, PROG ": signals: %s\n", strerror(errno));
		finish(1);
	}
	if (o.colocate) {
		if (job_colocated_eps(&j) < 0)
			finish(1);
	} else {
		start_shards();
	}
	write_aggs();
	for (unsigned w = 0; w < o.workers; w++)
		start(ROLE_WORKER, w, false);
	supervise();
	finish(stop_shards());
}
