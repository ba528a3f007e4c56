/* gw-flood: an intruder for tests and measurements. While a keyed job
 * runs it sends, as fast as the dataplane takes them, UP packets of four
 * kinds at a shard: without a MAC (unauthenticated), with a MAC of another
 * key (forged), of another job (foreign), and, holding the job key, of an
 * old round (stale: what a replay or a stale copy of a worker sends).
 * None may be summed; each must be counted in the shard's counter of its
 * kind. It prints what it sent, per kind (--json: one object).
 *
 *   gw-flood --agg IP:PORT --key-file F --workers W --dim N [job options]
 *            [--kinds unauth,forged,foreign,stale] [--seconds S]
 *            [--stale-round R] [--rank R] [--json]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/codec.h>

#include "coll_cli.h"
#include "coll_internal.h"

enum { K_UNAUTH, K_FORGED, K_FOREIGN, K_STALE, K_N };
static const char *const kind_names[K_N] = {"unauth", "forged", "foreign", "stale"};

static void usage(FILE *f)
{
	fprintf(f,
"usage: gw-flood --agg IP:PORT --key-file F --workers W --dim N [options]\n\n"
"  --agg IP:PORT      the shard to flood (shard 0 of the job)\n"
"  --kinds LIST       unauth,forged,foreign,stale (default: all four)\n"
"  --seconds S        how long (default 2, at most 600)\n"
"  --rank R           the worker the packets claim to be (default 0)\n"
"  --stale-round R    the round of 'stale' packets (default 0)\n"
"  --json             what was sent as one JSON object\n\n");
	cli_job_usage(f);
}

/* One sealed UP of chunk 0 (a frame of zeros), as L seals it. */
static uint32_t build(const struct coll_layout *L, uint8_t *p, uint32_t job, uint32_t round,
		      uint16_t rank, uint32_t seq, const uint8_t *frame, uint32_t flen)
{
	memcpy(p + GW_PKT_HDR_LEN, frame, flen);
	gw_pkt_hdr h = {.type = GW_PKT_UP, .rank = rank, .job = job, .round = round,
			.tensor = 0, .chunk = 0, .seq = seq};
	return coll_seal(L, p, &h, flen);
}

int main(int argc, char **argv)
{
	struct cli c;
	cli_init(&c, "gw-flood");
	const char *agg = NULL, *kinds = "unauth,forged,foreign,stale";
	uint64_t seconds = 2, rank = 0, stale_round = 0;
	bool json = false;
	static const struct option own[] = {
		{"agg", 1, 0, 'a'}, {"kinds", 1, 0, 'k'}, {"seconds", 1, 0, 's'},
		{"rank", 1, 0, 'r'}, {"stale-round", 1, 0, 'S'}, {"json", 0, 0, 'j'},
		{"help", 0, 0, 'h'}, {0, 0, 0, 0},
	};
	struct option lo[CLI_LONGOPTS_MAX];   /* the shared options, then own */
	cli_longopts(own, lo);
	app_split_args(argc, argv, &c.args);
	int ac = c.args.argc, opt, li;
	char **av = c.args.argv;
	bool ok = true;
	opterr = 0;   /* app_bad_option says it, named for the program */
	while (ok && (opt = getopt_long(ac, av, "h", lo, &li)) != -1) {
		switch (opt) {
		case CLI_OPT:
			ok = cli_job_opt(&c, lo[li].name, optarg) > 0;
			break;
		case 'a':
			agg = optarg;
			break;
		case 'k':
			kinds = optarg;
			break;
		case 's':
			ok = app_opt_u64(c.prog, "seconds", optarg, 1, 600, &seconds);
			break;
		case 'r':
			ok = app_opt_u64(c.prog, "rank", optarg, 0, GW_COLL_WORKERS_MAX - 1, &rank);
			break;
		case 'S':
			ok = app_opt_u64(c.prog, "stale-round", optarg, 0, UINT32_MAX, &stale_round);
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			app_bad_option(c.prog, NULL, av, "h");
			ok = false;
		}
	}
	if (!ok)
		return cli_refused(&c);
	if (!agg || !c.key_file || !c.o.workers || !c.o.dim) {
		fprintf(stderr, "gw-flood: --%s: missing (a flood is of a keyed job: the "
			"shard must tell its workers from the intruder)\n",
			!agg ? "agg" : !c.key_file ? "key-file" : !c.o.workers ? "workers" : "dim");
		return 2;
	}
	int want[K_N] = {0};
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", kinds);
	for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
		int k = 0;
		while (k < K_N && strcmp(t, kind_names[k]))
			k++;
		if (k == K_N) {
			fprintf(stderr, "gw-flood: --kinds: '%s' is not unauth, forged, foreign or "
				"stale\n", t);
			return 2;
		}
		want[k] = 1;
	}
	gw_endpoint shard[GW_COLL_SHARDS_MAX];
	unsigned nshard = 0;
	if (cli_parse_aggs(c.prog, agg, shard, &nshard) < 0)
		return 2;
	if (!c.local) {
		fprintf(stderr, "gw-flood: --local is required\n");
		return 2;
	}
	if (!app_eal_check(c.prog, &c.args, c.backend))
		return 2;
	gw_dp *dp = NULL;
	gw_coll_job job;
	int rc = 1;
	if (cli_open_dp(&c, 0, &dp) < 0 || cli_job(&c, dp, &job) < 0)
		goto out;
	/* Four ways to seal: the job's key; none; another key. */
	struct coll_layout right = {0}, none = {0}, other = {0};
	right.keyed = other.keyed = 1;
	memcpy(right.key, c.key, GW_KEY_LEN);
	memcpy(other.key, c.key, GW_KEY_LEN);
	other.key[0] ^= 0x5a;
	/* A raw frame of chunk 0. */
	uint32_t n0 = (uint32_t)GW_MIN((uint64_t)job.chunk_elems, job.dim);
	float *zeros = calloc(n0, sizeof(float));
	uint8_t frame[GW_FRAME_MAX];
	gw_encoder *enc = gw_encoder_create(GW_CODEC_RAW);
	gw_tensor t = {.id = 0, .dim = n0, .values = zeros};
	int flen = zeros && enc ? gw_encode_begin(enc, &t) : GW_ENOMEM;
	if (flen >= 0)
		flen = gw_encode_next(enc, frame, gw_dp_payload_max(dp) - GW_PKT_HDR_LEN -
				      GW_PKT_MAC_LEN);
	gw_encoder_free(enc);
	free(zeros);
	if (flen <= 0) {
		fprintf(stderr, "gw-flood: cannot encode a frame of chunk 0: %s\n", gw_strerror(flen));
		goto out;
	}
	uint64_t sent[K_N] = {0}, refused = 0, end = app_now_ns() + seconds * 1000000000ull;
	uint32_t seq = 0;
	int k = 0;
	while (app_now_ns() < end) {
		gw_pkt *p[32];
		int n = gw_dp_alloc(dp, p, 32);
		int kinds_of[32];
		for (int i = 0; i < n; i++) {
			while (!want[k])
				k = (k + 1) % K_N;
			const struct coll_layout *L = k == K_UNAUTH ? &none : k == K_FORGED ? &other
										: &right;
			uint32_t jid = k == K_FOREIGN ? job.job + 1 : job.job;
			uint32_t round = k == K_STALE ? (uint32_t)stale_round : (uint32_t)stale_round + 7;
			p[i]->len = build(L, p[i]->data, jid, round, (uint16_t)rank, seq++, frame,
					  (uint32_t)flen);
			p[i]->peer = shard[0];
			kinds_of[i] = k;
			k = (k + 1) % K_N;
		}
		int m = n > 0 ? gw_dp_tx_burst(dp, p, (unsigned)n) : 0;
		m = m > 0 ? m : 0;
		for (int i = 0; i < m; i++)
			sent[kinds_of[i]]++;
		refused += (uint64_t)(n - m);
		if (n > 0)   /* sent or not, the packets are ours again */
			gw_dp_free(dp, p, (unsigned)n);
		/* Nothing comes back that matters; drain what does. */
		gw_pkt *rx[32];
		int r = gw_dp_rx_burst(dp, rx, 32);
		if (r > 0)
			gw_dp_free(dp, rx, (unsigned)r);
	}
	uint64_t total = sent[0] + sent[1] + sent[2] + sent[3];
	if (json) {
		printf("{\"tool\":\"gw-flood\",\"seconds\":%llu,\"sent\":%llu,\"unauth\":%llu,"
		       "\"forged\":%llu,\"foreign\":%llu,\"stale\":%llu,\"refused\":%llu,"
		       "\"pps\":%.0f}\n", (unsigned long long)seconds, (unsigned long long)total,
		       (unsigned long long)sent[K_UNAUTH], (unsigned long long)sent[K_FORGED],
		       (unsigned long long)sent[K_FOREIGN], (unsigned long long)sent[K_STALE],
		       (unsigned long long)refused, (double)total / (double)seconds);
	} else {
		printf("gw-flood: %llu packets in %llu s (%.0f/s): %llu unauth, %llu forged, %llu "
		       "foreign, %llu stale\n", (unsigned long long)total,
		       (unsigned long long)seconds, (double)total / (double)seconds,
		       (unsigned long long)sent[K_UNAUTH], (unsigned long long)sent[K_FORGED],
		       (unsigned long long)sent[K_FOREIGN], (unsigned long long)sent[K_STALE]);
	}
	rc = 0;
out:
	gw_dp_close(dp);
	return rc;
}
