/* Two-process stream tests (see stream_harness.h). */
#include "stream_harness.h"

#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../gw_test.h"
#include "gw_util.h"

#define SH_MTU 1500u
#define SH_DEADLINE_S 90.0   /* a pair that takes longer has hung */

void sh_require(const char *prog, int argc, char **argv)
{
	gw_test_require_traces(prog);
	if (argc < 2 || access(argv[1], X_OK) != 0) {
		fprintf(stderr, "%s: SKIP: needs the path of stream_peer as its argument\n", prog);
		exit(77);
	}
}

void sh_inputs(const sh_cfg *cfg, const char **paths, int *sparse, int *n)
{
	static char buf[8][4096];
	const char *dir = gw_test_traces_dir();
	int k = 0;
	for (int i = 0; i < GW_TEST_CNN_TENSORS; i++, k++) {
		snprintf(buf[k], sizeof buf[k], "%s/%s", dir, gw_test_dense_traces[i]);
		paths[k] = buf[k];
		sparse[k] = 0;
	}
	if (!cfg->no_sparse) {
		snprintf(buf[k], sizeof buf[k], "%s/%s", dir, gw_test_sparse_traces[0]);
		paths[k] = buf[k];
		sparse[k++] = 1;
	}
	*n = k;
}

static void parse_stats(const char *path, sh_stats *st)
{
	FILE *f = fopen(path, "r");
	GW_CHECK(f, "stats file %s missing", path);
	st->n = 0;
	char key[64];
	unsigned long long v;
	while (st->n < SH_MAX_STATS && fscanf(f, "%63s %llu", key, &v) == 2) {
		snprintf(st->key[st->n], sizeof st->key[0], "%s", key);
		st->val[st->n++] = v;
	}
	fclose(f);
}

uint64_t sh_stat(const sh_stats *st, const char *key)
{
	for (int i = 0; i < st->n; i++)
		if (!strcmp(st->key[i], key))
			return st->val[i];
	fail_msg("counter %s not in the stats file", key);
	return 0;
}

static void dump(const char *what, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[512];
	print_message("---- %s (%s)\n", what, path);
	while (fgets(line, sizeof line, f))
		print_message("  %s", line);
	fclose(f);
}

/* argv for one peer; strings live in store. */
struct args {
	char *v[80];
	int n;
	char store[40][4096];
	int ns;
};

static void add(struct args *a, const char *s)
{
	GW_CHECK(a->n < 79, "too many peer arguments");
	a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static const char *fmt(struct args *a, const char *f, ...)
{
	GW_CHECK(a->ns < 40, "too many peer argument strings");
	va_list ap;
	va_start(ap, f);
	vsnprintf(a->store[a->ns], sizeof a->store[0], f, ap);
	va_end(ap);
	return a->store[a->ns++];
}

static void peer_args(struct args *a, const sh_cfg *cfg, int tx, const char *dir,
		      const char *peer_ep)
{
	memset(a, 0, sizeof(*a));
	const char *ns = tx ? cfg->ns_tx : cfg->ns_rx;
	if (ns) {
		add(a, "ip");
		add(a, "netns");
		add(a, "exec");
		add(a, ns);
	}
	add(a, cfg->peer);
	add(a, "--backend");
	add(a, cfg->backend ? cfg->backend : "udp");
	add(a, "--role");
	add(a, tx ? "tx" : "rx");
	const char *ip = tx ? cfg->ip_tx : cfg->ip_rx;
	add(a, "--local");
	add(a, fmt(a, "%s:0", ip ? ip : "127.0.0.1"));
	if (peer_ep) {
		add(a, "--peer");
		add(a, peer_ep);
	}
	add(a, "--codec");
	add(a, cfg->codec);
	add(a, "--mtu");
	add(a, fmt(a, "%u", SH_MTU));
	add(a, "--rounds");
	add(a, fmt(a, "%u", cfg->rounds ? cfg->rounds : 2));
	add(a, "--timeout-ms");
	add(a, fmt(a, "%u", cfg->timeout_ms ? cfg->timeout_ms : 20000));
	if (cfg->window) {
		add(a, "--window");
		add(a, fmt(a, "%u", cfg->window));
	}
	if (cfg->no_frames)
		add(a, "--no-frames");
	if (cfg->opts) {
		add(a, "--opts");
		add(a, cfg->opts);
	}
	const char *paths[8];
	int sparse[8], n;
	sh_inputs(cfg, paths, sparse, &n);
	for (int i = 0; i < n; i++) {
		add(a, sparse[i] ? "--sparse" : "--input");
		add(a, paths[i]);
	}
	add(a, "--stats");
	add(a, fmt(a, "%s/%s.stats", dir, tx ? "tx" : "rx"));
	if (!tx) {
		add(a, "--ready");
		add(a, fmt(a, "%s/ready", dir));
		add(a, "--out");
		add(a, fmt(a, "%s/out.f32", dir));
	}
}

static pid_t spawn(struct args *a, const char *log)
{
	pid_t pid = fork();
	GW_CHECK(pid >= 0, "fork failed: %s", strerror(errno));
	if (pid == 0) {
		FILE *f = freopen(log, "w", stderr);
		if (f)
			dup2(fileno(stderr), 1);
		execvp(a->v[0], a->v);
		fprintf(stderr, "exec %s: %s\n", a->v[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Waits for pid until deadline; kills it past that. Returns the exit
 * status, or -1 on timeout. */
static int reap(pid_t pid, double deadline)
{
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (gw_now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(5000);
	}
}

void sh_run_pair(const sh_cfg *cfg, sh_result *res)
{
	memset(res, 0, sizeof(*res));
	char dir[] = "/tmp/gw_stream_XXXXXX";
	GW_CHECK(mkdtemp(dir), "mkdtemp failed: %s", strerror(errno));
	char log_rx[4200], log_tx[4200], ready[4200], path[4200];
	snprintf(log_rx, sizeof log_rx, "%s/rx.log", dir);
	snprintf(log_tx, sizeof log_tx, "%s/tx.log", dir);
	snprintf(ready, sizeof ready, "%s/ready", dir);

	double t0 = gw_now_s(), deadline = t0 + SH_DEADLINE_S;
	struct args *a = calloc(1, sizeof(*a));
	GW_CHECK(a, "out of memory");
	peer_args(a, cfg, 0, dir, NULL);
	pid_t rx = spawn(a, log_rx);

	/* rx binds port 0 and says where it is. */
	char ep[128] = "";
	while (gw_now_s() < t0 + 20) {
		FILE *f = fopen(ready, "r");
		if (f) {
			int ok = fscanf(f, "%127s", ep) == 1;
			fclose(f);
			if (ok)
				break;
		}
		int st;
		if (waitpid(rx, &st, WNOHANG) == rx) {
			dump("receiver log", log_rx);
			fail_msg("receiver exited before it was ready (status %d)", st);
		}
		usleep(2000);
	}
	if (!ep[0]) {
		kill(rx, SIGKILL);
		waitpid(rx, NULL, 0);
		dump("receiver log", log_rx);
		fail_msg("receiver never became ready");
	}
	peer_args(a, cfg, 1, dir, ep);
	pid_t tx = spawn(a, log_tx);
	free(a);
	int rtx = reap(tx, deadline);
	int rrx = reap(rx, deadline);
	res->wall_s = gw_now_s() - t0;
	if (rtx != 0 || rrx != 0) {
		dump("sender log", log_tx);
		dump("receiver log", log_rx);
		fail_msg("peers failed: tx %s %d, rx %s %d (%.1f s)",
			 rtx < 0 ? "hung, killed" : "exit", rtx,
			 rrx < 0 ? "hung, killed" : "exit", rrx, res->wall_s);
	}
	dump("sender log", log_tx);
	dump("receiver log", log_rx);
	snprintf(path, sizeof path, "%s/tx.stats", dir);
	parse_stats(path, &res->tx);
	snprintf(path, sizeof path, "%s/rx.stats", dir);
	parse_stats(path, &res->rx);
	snprintf(path, sizeof path, "%s/out.f32", dir);
	res->out = gw_test_load_f32(path, &res->out_n);
	GW_CHECK(res->out, "receiver output %s missing", path);

	const char *files[] = {"rx.log", "tx.log", "rx.stats", "tx.stats", "out.f32", "ready"};
	for (size_t i = 0; i < GW_ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

void sh_result_free(sh_result *res)
{
	free(res->out);
	res->out = NULL;
}

float *sh_reference(const sh_cfg *cfg, size_t *n)
{
	int id = gw_codec_by_name(cfg->codec);
	GW_CHECK(id > 0, "unknown codec %s", cfg->codec);
	int lossy = (gw_codec_caps(id) & GW_CODEC_LOSSY) != 0;
	unsigned rounds = cfg->rounds ? cfg->rounds : 2;
	int nt = GW_TEST_CNN_TENSORS + (cfg->no_sparse ? 0 : 1);
	gw_test_dense d[GW_TEST_CNN_TENSORS];
	gw_test_sparse sp;
	gw_tensor t[GW_TEST_CNN_TENSORS + 1];
	size_t total = 0, off[GW_TEST_CNN_TENSORS + 2];
	for (int i = 0; i < nt; i++) {
		off[i] = total;
		if (i < GW_TEST_CNN_TENSORS) {
			gw_test_load_dense(i, &d[i]);
			t[i] = gw_test_dense_tensor((uint32_t)i, d[i].v, d[i].n);
		} else {
			gw_test_load_sparse(0, &sp);
			t[i] = gw_test_sparse_tensor((uint32_t)i, sp.dim, sp.keys, 32,
						     sp.vals, sp.nnz);
		}
		total += t[i].dim;
	}
	float *out = calloc(total, sizeof(float));
	GW_CHECK(out, "out of memory");
	gw_encoder *enc[GW_TEST_CNN_TENSORS + 1];
	gw_ef *ef[GW_TEST_CNN_TENSORS + 1] = {0};
	for (int i = 0; i < nt; i++) {
		enc[i] = gw_test_encoder(id);
		if (lossy) {
			ef[i] = gw_ef_create(t[i].dim);
			GW_OK_CALL(gw_encoder_set_ef(enc[i], ef[i]));
		}
	}
	for (unsigned r = 0; r < rounds; r++)
		for (int i = 0; i < nt; i++) {
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc[i], &t[i], SH_MTU - GW_PKT_RESERVE, &fr));
			gw_test_decode_all(&fr, out + off[i], t[i].dim);
			gw_test_frames_free(&fr);
		}
	for (int i = 0; i < nt; i++) {
		gw_encoder_free(enc[i]);
		gw_ef_free(ef[i]);
		if (i < GW_TEST_CNN_TENSORS)
			gw_test_dense_free(&d[i]);
		else
			gw_test_sparse_free(&sp);
	}
	*n = total;
	return out;
}

void sh_check_run(const sh_cfg *cfg, sh_result *res)
{
	size_t n;
	float *ref = sh_reference(cfg, &n);
	sh_run_pair(cfg, res);
	GW_CHECK(res->out_n == n, "receiver wrote %zu floats, expected %zu", res->out_n, n);
	size_t diff = 0, first = n;
	for (size_t i = 0; i < n; i++)
		if (gw_test_bits(res->out[i]) != gw_test_bits(ref[i])) {
			if (!diff++)
				first = i;
		}
	GW_CHECK(diff == 0, "codec %s: %zu of %zu values differ from the in-process "
		 "decode, first at %zu (%a vs %a)", cfg->codec, diff, n, first,
		 first < n ? (double)res->out[first] : 0.0,
		 first < n ? (double)ref[first] : 0.0);
	free(ref);

	/* Every packet the impairment layer corrupted was caught, and nothing
	 * else was malformed; nothing came from another job. With frames
	 * checked at decode (not --no-frames), a DATA packet whose damage is
	 * in the frame and which is dropped unread — a duplicate, or of a
	 * tensor not being received — is counted as that, not as corrupt. */
	const sh_stats *side[2] = {&res->tx, &res->rx};
	const char *name[2] = {"sender", "receiver"};
	for (int k = 0; k < 2; k++) {
		uint64_t caught = sh_stat(side[k], "bad") + sh_stat(side[k], "corrupt");
		uint64_t corrupted = sh_stat(side[k], "dp_impair_corrupted");
		uint64_t unread = sh_stat(side[k], "duplicates") + sh_stat(side[k], "stale");
		int exact = cfg->no_frames || k == 0;   /* the sender gets ACKs only */
		GW_CHECK(exact ? caught == corrupted
			       : caught <= corrupted && corrupted - caught <= unread,
			 "%s: %llu packets dropped as bad or corrupt (%llu unread), "
			 "but the impairment layer corrupted %llu", name[k],
			 (unsigned long long)caught, (unsigned long long)unread,
			 (unsigned long long)corrupted);
		GW_CHECK(sh_stat(side[k], "foreign") == 0, "%s saw foreign packets", name[k]);
	}
	GW_CHECK(sh_stat(&res->rx, "delivered") == sh_stat(&res->tx, "chunks"),
		 "receiver delivered %llu chunks, sender sent %llu",
		 (unsigned long long)sh_stat(&res->rx, "delivered"),
		 (unsigned long long)sh_stat(&res->tx, "chunks"));
	GW_CHECK(sh_stat(&res->rx, "chunks") == sh_stat(&res->tx, "chunks"),
		 "receiver counted %llu chunks, sender %llu",
		 (unsigned long long)sh_stat(&res->rx, "chunks"),
		 (unsigned long long)sh_stat(&res->tx, "chunks"));
}
