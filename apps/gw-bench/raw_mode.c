/* gw-bench raw: the dataplane's ceiling — fixed-size packets with no
 * protocol, one process sending (--role tx) and one receiving (--role rx)
 * over the same device the stream uses. Each payload starts with a 64-bit
 * sequence number, so the receiver counts what it missed; --verify fills
 * and checks every byte. Packets are allocated, written, sent and freed as
 * a sender of real frames would; the sender retries what the queue
 * refuses, so it never drops.
 *
 *   gw-bench raw [EAL options] -- --backend dpdk|udp --role tx|rx
 *       --local IP:PORT [--peer IP:PORT[@MAC]] --size BYTES|max ... */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gw/dataplane.h>

#include "bench.h"

#define RAW_HDR 16              /* seq (8) + magic (8) */
#define RAW_MAGIC 0x5741524157475752ull   /* "RWGWRAW" + 'W', little-endian */
#define RAW_SIZE_MIN 64
#define BURST_MAX 64

static volatile sig_atomic_t force_quit;

static void on_signal(int sig)
{
	(void)sig;
	force_quit = 1;
}

struct raw_args {
	const char *backend, *opts;
	bool tx, json, verify;
	gw_endpoint local, peer;
	bool have_local, have_peer, size_max, duration_set;
	bool progress;          /* a progress line on stderr (a terminal) */
	uint64_t size, count, burst;
	double duration, idle_s;
	struct app_args args;     /* [EAL options] -- [app options] */
};

struct raw_result {
	uint64_t pkts, bytes, lost, corrupt, wrong_size;
	double seconds;
	gw_dp_stats st;
	gw_dp_paths pa;           /* zero where the backend has no such paths */
	uint32_t size, payload_max;
};

static void usage(FILE *f)
{
	char built[64];
	gw_dp_backends_text(built, sizeof(built));
	fprintf(f,
"usage: gw-bench raw [EAL options] -- --backend dpdk|udp --role tx|rx\n"
"                    --local IP:PORT [--peer IP:PORT[@MAC]] --size BYTES|max\n"
"                    [--duration SEC] [--count N] [--burst N] [--opts K=V,...]\n"
"                    [--idle SEC] [--verify] [--json]\n\n"
"  EAL options        DPDK's own, before \"--\" (dpdk backend only), e.g.\n"
"                     -l 0 --no-huge --no-pci -m 256 --no-shconf --file-prefix=tx\n"
"                     --vdev=net_memif0,role=server,socket=/tmp/m.sock,socket-abstract=no\n"
"  --backend NAME     dataplane backend (built here: %s)\n"
"  --role tx|rx       send or receive\n"
"  --local IP:PORT    this end's address (rx: the port it receives on)\n"
"  --peer IP:PORT[@MAC]  where tx sends (MAC: the receiver's; default broadcast)\n"
"  --size BYTES|max   UDP payload of every packet, %d .. the port's MTU - 28\n"
"  --duration SEC     tx: how long to send; rx: how long after the first\n"
"                     packet to stop at the latest (default 5; 60 with --count)\n"
"  --count N          tx: send N packets; rx: stop after N (default: no limit);\n"
"                     whichever of count and duration comes first ends the run\n"
"  --burst N          packets per burst, 1..%d (default 32)\n"
"  --opts K=V,...     backend options (dpdk: port=N, mtu=N, link_wait=S;\n"
"                     udp: payload=N, gso=0|1, gro=0|1, mmsg=0|1)\n"
"  --idle SEC         rx: stop after this long without a packet once\n"
"                     traffic started (default 1)\n"
"  --verify           tx fills every payload byte, rx checks them\n"
"  --json             one JSON object instead of the table\n",
		built, RAW_SIZE_MIN, BURST_MAX);
}

static inline uint8_t pattern(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 7 + i);
}

static void fill(gw_pkt *p, const struct raw_args *a, uint64_t seq, uint32_t size)
{
	memcpy(p->data, &seq, 8);
	uint64_t magic = RAW_MAGIC;
	memcpy(p->data + 8, &magic, 8);
	if (a->verify)
		for (uint32_t i = RAW_HDR; i < size; i++)
			p->data[i] = pattern(seq, i);
	p->len = size;
	p->peer = a->peer;
}

static int run_tx(gw_dp *dp, const struct raw_args *a, uint32_t size, struct raw_result *r)
{
	gw_pkt *pend[BURST_MAX];
	unsigned np = 0, burst = (unsigned)a->burst;
	uint64_t seq = 0;
	double t0 = app_now_s(), next_progress = t0 + 1, now = t0;
	while (!force_quit) {
		if (a->count && seq == a->count && np == 0)
			break;
		if (now - t0 >= a->duration)
			break;
		unsigned want = burst - np;
		if (a->count && seq + want > a->count)
			want = (unsigned)(a->count - seq);
		int k = want ? gw_dp_alloc(dp, pend + np, want) : 0;
		for (int i = 0; i < k; i++)
			fill(pend[np + (unsigned)i], a, seq++, size);
		np += (unsigned)k;
		int s = gw_dp_tx_burst(dp, pend, np);
		if (s < 0) {
			fprintf(stderr, "gw-bench: tx failed: %s\n", gw_strerror(s));
			gw_dp_free(dp, pend, np);
			return -1;
		}
		/* The sender keeps what it sent; raw has no use for it. */
		gw_dp_free(dp, pend, (unsigned)s);
		np -= (unsigned)s;
		memmove(pend, pend + s, np * sizeof(pend[0]));
		now = app_now_s();
		if (a->progress && now >= next_progress) {
			gw_dp_stats st;
			gw_dp_stats_get(dp, &st);
			fprintf(stderr, "  tx %llu packets, %.3f Mpps\r", (unsigned long long)st.tx_pkts,
				st.tx_pkts / (now - t0) / 1e6);
			next_progress = now + 1;
		}
	}
	gw_dp_free(dp, pend, np);
	r->seconds = app_now_s() - t0;
	gw_dp_stats_get(dp, &r->st);
	(void)gw_dp_paths_get(dp, &r->pa);
	r->pkts = r->st.tx_pkts;
	r->bytes = r->st.tx_bytes;
	/* Closing a memif port loses what the receiver has not read yet:
	 * stay a moment (untimed) so the last packets arrive. */
	double end = app_now_s() + 0.5;
	while (app_now_s() < end && !force_quit) {
		int n = gw_dp_rx_burst(dp, pend, BURST_MAX);
		if (n > 0)
			gw_dp_free(dp, pend, (unsigned)n);
		else
			gw_dp_wait(dp, 10000);
	}
	return 0;
}

static void check(const struct raw_args *a, gw_pkt *p, uint32_t size, struct raw_result *r,
		  uint64_t *lo, uint64_t *hi)
{
	uint64_t seq, magic;
	if (p->len != size || p->len < RAW_HDR) {
		r->wrong_size++;
		return;
	}
	memcpy(&seq, p->data, 8);
	memcpy(&magic, p->data + 8, 8);
	if (magic != RAW_MAGIC) {
		r->corrupt++;
		return;
	}
	if (seq < *lo)
		*lo = seq;
	if (seq > *hi)
		*hi = seq;
	if (a->verify)
		for (uint32_t i = RAW_HDR; i < size; i++)
			if (p->data[i] != pattern(seq, i)) {
				r->corrupt++;
				break;
			}
}

static int run_rx(gw_dp *dp, const struct raw_args *a, uint32_t size, struct raw_result *r)
{
	gw_pkt *pkts[BURST_MAX];
	uint64_t lo = UINT64_MAX, hi = 0, got = 0;
	double t0 = app_now_s(), first = 0, last = 0, next_progress = 0;
	/* Before traffic starts: wait as long as a sender could take to come
	 * up (the EAL, a memif link) plus its run. */
	double start_limit = t0 + a->duration + 30;
	double now = t0;
	unsigned empty = 0;
	while (!force_quit) {
		int n = gw_dp_rx_burst(dp, pkts, (unsigned)a->burst);
		/* A busy poll reads the clock every 64 empty polls only: in a
		 * guest whose clock is slow to read (scripts/rdma-vm.sh's)
		 * the reads took a quarter of the receiver's time. */
		if (n > 0 || !got || !(++empty % 64))
			now = app_now_s();
		if (n > 0) {
			if (!got)
				first = now;
			last = now;
			for (int i = 0; i < n; i++)
				check(a, pkts[i], size, r, &lo, &hi);
			gw_dp_free(dp, pkts, (unsigned)n);
			got += (unsigned)n;
			if (a->count && got >= a->count)
				break;
		} else if (!got) {
			if (now > start_limit)
				break;
			gw_dp_wait(dp, 1000);
		} else if (now - last > a->idle_s) {
			break;
		}
		if (got && now - first > a->duration)
			break;
		if (got && a->progress && now >= next_progress) {
			fprintf(stderr, "  rx %llu packets, %.3f Mpps\r", (unsigned long long)got,
				now > first ? got / (now - first) / 1e6 : 0.0);
			next_progress = now + 1;
		}
	}
	gw_dp_stats_get(dp, &r->st);
	(void)gw_dp_paths_get(dp, &r->pa);
	r->pkts = got;
	r->bytes = r->st.rx_bytes;
	/* The first burst landed at `first`; rate over the packets after it
	 * would need per-packet times, so count them all over first..last. */
	r->seconds = last > first ? last - first : 0;
	/* Lost: what a bounded run did not deliver, else the gaps between
	 * the lowest and highest sequence number seen. */
	uint64_t good = got - r->wrong_size - r->corrupt;
	if (a->count)
		r->lost = a->count > good ? a->count - good : 0;
	else
		r->lost = got && hi >= lo && hi - lo + 1 > good ? hi - lo + 1 - good : 0;
	if (!got)
		fprintf(stderr, "gw-bench: rx: no packet arrived\n");
	return got ? 0 : -1;
}

/* "mmsg,gso,gro": the kernel paths in use (gw_dp_paths_get), "-" for none. */
static const char *paths_name(uint32_t on, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", on & GW_DP_PATH_MMSG ? "mmsg," : "",
		 on & GW_DP_PATH_GSO ? "gso," : "", on & GW_DP_PATH_GRO ? "gro," : "");
	size_t n = strlen(buf);
	if (n)
		buf[n - 1] = 0;
	else
		snprintf(buf, len, "-");
	return buf;
}

static void print(const struct raw_args *a, const struct raw_result *r)
{
	char paths[32];
	paths_name(r->pa.on, paths, sizeof(paths));
	uint64_t calls = a->tx ? r->pa.tx_calls : r->pa.rx_calls;
	double pps = r->seconds > 0 ? r->pkts / r->seconds : 0;
	double gbps = pps * r->size * 8 / 1e9;
	double l2 = pps * (r->size + 42) * 8 / 1e9;   /* Ethernet + IPv4 + UDP */
	const char *role = a->tx ? "tx" : "rx";
	if (a->json) {
		const struct app_json_member m[] = {
			APP_JS("mode", "raw"), APP_JS("backend", a->backend), APP_JS("role", role),
			APP_JU("size", r->size), APP_JU("payload_max", r->payload_max),
			APP_JU("packets", r->pkts), APP_JU("bytes", r->bytes),
			APP_JF("seconds", 6, r->seconds), APP_JF("pps", 1, pps),
			APP_JF("mpps", 4, pps / 1e6), APP_JF("gbps", 4, gbps),
			APP_JF("l2_gbps", 4, l2), APP_JU("drops", r->lost),
			APP_JU("corrupt", r->corrupt), APP_JU("wrong_size", r->wrong_size),
			APP_JU("rx_bad", r->st.rx_bad), APP_JU("tx_full", r->st.tx_full),
			APP_JU("idle_waits", r->st.idle_waits), APP_JS("paths", paths),
			APP_JU("syscalls", calls),
			APP_JU("coalesced", a->tx ? r->pa.tx_gso_pkts : r->pa.rx_gro_pkts),
		};
		struct app_json j;
		app_json_begin(&j, stdout, true);
		app_json_members(&j, m, APP_JSON_N(m));
		app_json_end(&j);
		return;
	}
	printf("  ------------- raw %s, backend %s, %u-byte payload -------------\n",
	       role, a->backend, r->size);
	if (a->tx)
		printf("  TX-packets: %-14llu TX-bytes: %-16llu TX-refused: %llu (retried)\n",
		       (unsigned long long)r->pkts, (unsigned long long)r->bytes,
		       (unsigned long long)r->st.tx_full);
	else
		printf("  RX-packets: %-14llu RX-bytes: %-16llu RX-bad: %llu\n"
		       "  RX-dropped: %-14llu RX-corrupt: %-14llu RX-wrong-size: %llu\n",
		       (unsigned long long)r->pkts, (unsigned long long)r->bytes,
		       (unsigned long long)r->st.rx_bad, (unsigned long long)r->lost,
		       (unsigned long long)r->corrupt, (unsigned long long)r->wrong_size);
	printf("  Throughput: %10.4f Mpps  %10.3f Gbit/s payload  %10.3f Gbit/s L2\n",
	       pps / 1e6, gbps, l2);
	printf("  Time: %.3f s   idle waits: %llu\n", r->seconds,
	       (unsigned long long)r->st.idle_waits);
	printf("  Paths: %-16s syscalls: %-14llu %s: %llu\n", paths,
	       (unsigned long long)calls, a->tx ? "in GSO sends" : "from GRO",
	       (unsigned long long)(a->tx ? r->pa.tx_gso_pkts : r->pa.rx_gro_pkts));
	printf("  ------------------------------------------------------------------\n");
}

static int parse(int argc, char **argv, struct raw_args *a)
{
	static const struct option opts[] = {
		{"backend", required_argument, 0, 'b'}, {"role", required_argument, 0, 'r'},
		{"local", required_argument, 0, 'l'}, {"peer", required_argument, 0, 'p'},
		{"size", required_argument, 0, 's'}, {"duration", required_argument, 0, 'd'},
		{"count", required_argument, 0, 'c'}, {"burst", required_argument, 0, 'B'},
		{"opts", required_argument, 0, 'o'}, {"idle", required_argument, 0, 'i'},
		{"verify", no_argument, 0, 'v'}, {"json", no_argument, 0, 'j'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	const char *role = NULL;
	int c;
	optind = 1;
	opterr = 0;   /* app_bad_option says it, named for the program */
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true;
		switch (c) {
		case 'b': a->backend = optarg; break;
		case 'r': role = optarg; break;
		case 'l':
			ok = gw_endpoint_parse(optarg, &a->local) == 0;
			if (!ok)
				fprintf(stderr, "gw-bench: --local: '%s' is not IP:PORT\n", optarg);
			a->have_local = true;
			break;
		case 'p':
			ok = gw_endpoint_parse(optarg, &a->peer) == 0;
			if (!ok)
				fprintf(stderr, "gw-bench: --peer: '%s' is not IP:PORT[@MAC]\n", optarg);
			a->have_peer = true;
			break;
		case 's':
			if (!strcmp(optarg, "max"))
				a->size_max = true;
			else
				ok = bench_u64("size", optarg, RAW_SIZE_MIN, 65535, &a->size);
			break;
		case 'd':
			ok = bench_num("duration", optarg, 0.001, 86400, &a->duration);
			a->duration_set = true;
			break;
		case 'c': ok = bench_u64("count", optarg, 1, UINT64_MAX / 2, &a->count); break;
		case 'B': ok = bench_u64("burst", optarg, 1, BURST_MAX, &a->burst); break;
		case 'o': a->opts = optarg; break;
		case 'i': ok = bench_num("idle", optarg, 0.001, 3600, &a->idle_s); break;
		case 'v': a->verify = true; break;
		case 'j': a->json = true; break;
		case 'h': usage(stdout); exit(0);
		default: app_bad_option("gw-bench", "gw-bench raw", argv, ""); return -1;
		}
		if (!ok)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "gw-bench: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!a->backend) {
		fprintf(stderr, "gw-bench: --backend: required\n");
		return -1;
	}
	int rc = bench_backend_check(a->backend);
	if (rc)
		return -rc;
	if (!app_eal_check("gw-bench", &a->args, a->backend))
		return -1;
	if (!role || (strcmp(role, "tx") && strcmp(role, "rx"))) {
		fprintf(stderr, "gw-bench: --role: give tx or rx\n");
		return -1;
	}
	a->tx = !strcmp(role, "tx");
	if (!a->have_local) {
		fprintf(stderr, "gw-bench: --local: required\n");
		return -1;
	}
	if (a->tx && !a->have_peer) {
		fprintf(stderr, "gw-bench: --peer: required with --role tx\n");
		return -1;
	}
	if (!a->size && !a->size_max) {
		fprintf(stderr, "gw-bench: --size: required\n");
		return -1;
	}
	if (a->count && !a->duration_set)
		a->duration = 60;   /* a bounded count: time is only a safety net */
	return 0;
}

int bench_raw_main(int argc, char **argv)
{
	struct raw_args a = {.duration = 5, .burst = 32, .idle_s = 1};
	/* argv[0] ("raw") is the EAL's program name. */
	app_split_args(argc, argv, &a.args);
	int prc = parse(a.args.argc, a.args.argv, &a);
	if (prc < 0)
		return prc == -APP_EXIT_MISSING ? APP_EXIT_MISSING : BENCH_EUSAGE;

	gw_dp_config cfg = {.backend = a.backend, .local = a.local, .burst = (uint32_t)a.burst,
			    .argc = a.args.eal_argc, .argv = a.args.eal_argv, .opts = a.opts};
	gw_dp *dp = NULL;
	int rc = gw_dp_open(&cfg, &dp);
	if (rc == GW_EINVAL) {
		fprintf(stderr, "gw-bench: --opts: '%s' refused by backend %s: %s\n",
			a.opts ? a.opts : "", a.backend, gw_error_detail());
		return BENCH_EUSAGE;
	}
	if (rc < 0) {
		fprintf(stderr, "gw-bench: --backend %s: open failed: %s: %s\n", a.backend,
			gw_strerror(rc), gw_error_detail());
		return 1;
	}
	struct raw_result r = {.payload_max = gw_dp_payload_max(dp)};
	r.size = a.size_max ? r.payload_max : (uint32_t)a.size;
	if (r.size > r.payload_max || r.size < RAW_SIZE_MIN) {
		fprintf(stderr, "gw-bench: --size: %u is outside %d .. %u (this port's MTU - 28)\n",
			r.size, RAW_SIZE_MIN, r.payload_max);
		gw_dp_close(dp);
		return BENCH_EUSAGE;
	}
	a.progress = !a.json && isatty(2);
	struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	rc = a.tx ? run_tx(dp, &a, r.size, &r) : run_rx(dp, &a, r.size, &r);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (a.progress)
		fprintf(stderr, "\n");
	if (rc == 0)
		print(&a, &r);
	gw_dp_close(dp);
	return rc ? 1 : 0;
}
