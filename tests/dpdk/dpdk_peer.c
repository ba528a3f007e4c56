/* Test peer for the DPDK backend: two of these, one per process, talk over a
 * real device (net_memif, net_af_xdp or net_af_packet on a veth).
 *
 *   dpdk_peer [EAL options] -- --role server|client --local IP:PORT
 *             [--peer IP:PORT[@MAC]] [--test xfer|bad] [--count N]
 *             [--backend dpdk|udp] [--opts K=V,...] [--timeout SEC]
 *
 * server  echoes what it does not understand, counts DATA packets (checking
 *         every byte) and acknowledges them, answers STATS with its
 *         gw_dp_stats, and leaves on BYE.
 * client  --test xfer: every payload size from 1 to payload_max is echoed
 *         back intact (lost ones are resent: the sender keeps its packets),
 *         then --count DATA packets of mixed sizes under a 128-packet
 *         window must all arrive, intact.
 *         --test bad: frames built by hand with DPDK (short, not IPv4, not
 *         UDP, wrong port, bad checksums, lying lengths, fragments) must each
 *         be dropped and counted in the server's rx_bad, while the same
 *         frames built correctly are delivered.
 *
 * Exit 0 pass, 1 fail (with a message), 2 bad arguments. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gw/dataplane.h>

#include "gw_util.h"

#include "dpdk_peer.h"

#define MAGIC 0x53545747u   /* "GWTS" little-endian */
enum { T_DATA = 2, T_ACK = 3, T_STATS = 4, T_BYE = 5 };
#define F_ACK_NOW 1
#define HDR 16              /* magic 4, type 1, flags 1, pad 2, seq 8 */
#define WINDOW 128
#define ACK_EVERY 16

struct peer_args {
	const char *backend, *opts, *test;
	bool server;
	gw_endpoint local, peer;
	uint64_t count;
	double timeout;
	int eal_argc;
	char **eal_argv;
};

double peer_now(void)
{
	return gw_now_s();
}

static uint8_t pattern(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 13 + i * 7);
}

void peer_put_hdr(uint8_t *p, int type, int flags, uint64_t seq)
{
	uint32_t m = MAGIC;
	memcpy(p, &m, 4);
	p[4] = (uint8_t)type;
	p[5] = (uint8_t)flags;
	p[6] = p[7] = 0;
	memcpy(p + 8, &seq, 8);
}

static int get_hdr(const gw_pkt *p, int *flags, uint64_t *seq)
{
	uint32_t m;
	if (p->len < HDR)
		return 0;
	memcpy(&m, p->data, 4);
	if (m != MAGIC)
		return 0;
	*flags = p->data[5];
	memcpy(seq, p->data + 8, 8);
	return p->data[4];
}

void peer_echo_fill(uint8_t *p, uint32_t len, uint32_t salt)
{
	/* Bytes 0 and 1 differ by 7, so this never starts with MAGIC. */
	for (uint32_t i = 0; i < len; i++)
		p[i] = pattern(salt, i);
}

/* Sends one packet, retrying a full queue for up to a second. */
static bool send_one(gw_dp *dp, gw_pkt *p)
{
	double end = peer_now() + 1;
	while (gw_dp_tx_burst(dp, &p, 1) != 1)
		if (peer_now() > end)
			return false;
	return true;
}

/* ---- server --------------------------------------------------------------- */

struct srv_stats {
	uint64_t data_ok, data_corrupt, echoed;
};

static bool reply(gw_dp *dp, const gw_endpoint *to, int type, uint64_t seq,
		  const uint64_t *vals, unsigned nvals)
{
	gw_pkt *p;
	if (gw_dp_alloc(dp, &p, 1) != 1)
		return false;
	peer_put_hdr(p->data, type, 0, seq);
	memcpy(p->data + HDR, vals, nvals * 8);
	p->len = HDR + nvals * 8;
	p->peer = *to;
	bool ok = send_one(dp, p);
	gw_dp_free(dp, &p, 1);
	return ok;
}

/* After BYE: closing a memif port loses what the peer has not read yet
 * (the reply to BYE), so keep answering repeated BYEs for a moment. */
static void linger(gw_dp *dp, const struct srv_stats *s)
{
	double end = peer_now() + 0.5;
	gw_pkt *pkts[32];
	while (peer_now() < end) {
		int n = gw_dp_rx_burst(dp, pkts, 32);
		for (int i = 0; i < n; i++) {
			int flags;
			uint64_t seq;
			if (get_hdr(pkts[i], &flags, &seq) == T_BYE) {
				gw_dp_stats st;
				gw_dp_stats_get(dp, &st);
				uint64_t v[5] = {s->data_ok, s->data_corrupt, st.rx_bad, st.rx_pkts,
						 s->echoed};
				reply(dp, &pkts[i]->peer, T_BYE, seq, v, 5);
			}
		}
		if (n > 0)
			gw_dp_free(dp, pkts, (unsigned)n);
		else
			gw_dp_wait(dp, 1000);
	}
}

static int run_server(gw_dp *dp, const struct peer_args *a)
{
	struct srv_stats s = {0};
	double end = peer_now() + a->timeout;
	gw_pkt *pkts[32];
	while (peer_now() < end) {
		int n = gw_dp_rx_burst(dp, pkts, 32);
		if (n <= 0) {
			gw_dp_wait(dp, 2000);
			continue;
		}
		for (int i = 0; i < n; i++) {
			gw_pkt *p = pkts[i];
			int flags = 0;
			uint64_t seq = 0;
			int type = get_hdr(p, &flags, &seq);
			if (type == T_DATA) {
				bool ok = true;
				for (uint32_t k = HDR; k < p->len && ok; k++)
					ok = p->data[k] == pattern(seq, k);
				ok ? s.data_ok++ : s.data_corrupt++;
				if (flags & F_ACK_NOW) {
					uint64_t v[2] = {s.data_ok, s.data_corrupt};
					reply(dp, &p->peer, T_ACK, seq, v, 2);
				}
			} else if (type == T_STATS || type == T_BYE) {
				gw_dp_stats st;
				gw_dp_stats_get(dp, &st);
				uint64_t v[5] = {s.data_ok, s.data_corrupt, st.rx_bad, st.rx_pkts,
						 s.echoed};
				reply(dp, &p->peer, type, seq, v, 5);
				if (type == T_BYE) {
					gw_dp_free(dp, pkts + i, (unsigned)(n - i));
					linger(dp, &s);
					printf("server: %llu data packets, %llu echoed, rx_bad %llu\n",
					       (unsigned long long)s.data_ok,
					       (unsigned long long)s.echoed,
					       (unsigned long long)st.rx_bad);
					return 0;
				}
			} else {
				/* Echo: the received packet goes back as it is
				 * (its peer is the sender). */
				if (send_one(dp, p))
					s.echoed++;
			}
		}
		gw_dp_free(dp, pkts, (unsigned)n);
	}
	fprintf(stderr, "server: FAIL: no BYE within %.0f s\n", a->timeout);
	return 1;
}

/* ---- client --------------------------------------------------------------- */

/* Waits up to timeout_s for a reply of type (0: an echo, anything not
 * ours); returns it (the caller frees) or NULL. Other packets are freed. */
gw_pkt *peer_await(gw_dp *dp, int type, uint64_t seq, double timeout_s)
{
	double end = peer_now() + timeout_s;
	gw_pkt *p;
	while (peer_now() < end) {
		if (gw_dp_rx_burst(dp, &p, 1) != 1) {
			gw_dp_wait(dp, 1000);
			continue;
		}
		int flags;
		uint64_t s = 0;
		int t = get_hdr(p, &flags, &s);
		if (t == type && (type == 0 || s == seq))
			return p;
		gw_dp_free(dp, &p, 1);
	}
	return NULL;
}

/* Server statistics: v[0] data ok, v[1] corrupt, v[2] rx_bad, v[3] rx_pkts,
 * v[4] echoed. */
bool peer_stats(gw_dp *dp, const gw_endpoint *srv, int type, uint64_t seq, uint64_t v[5])
{
	for (int attempt = 0; attempt < 20; attempt++) {
		gw_pkt *p;
		if (gw_dp_alloc(dp, &p, 1) != 1)
			return false;
		peer_put_hdr(p->data, type, 0, seq);
		p->len = HDR;
		p->peer = *srv;
		bool sent = send_one(dp, p);
		gw_dp_free(dp, &p, 1);
		if (!sent)
			continue;
		gw_pkt *r = peer_await(dp, type, seq, 0.25);
		if (r && r->len >= HDR + 40) {
			memcpy(v, r->data + HDR, 40);
			gw_dp_free(dp, &r, 1);
			return true;
		}
		if (r)
			gw_dp_free(dp, &r, 1);
	}
	return false;
}

/* Every size 1..payload_max, each echoed back byte for byte. */
static int test_sizes(gw_dp *dp, const struct peer_args *a)
{
	uint32_t max = gw_dp_payload_max(dp);
	unsigned resent = 0;
	for (uint32_t size = 1; size <= max; size++) {
		gw_pkt *p;
		if (gw_dp_alloc(dp, &p, 1) != 1) {
			fprintf(stderr, "client: FAIL: alloc at size %u\n", size);
			return 1;
		}
		if (p->room < size) {
			fprintf(stderr, "client: FAIL: room %u < payload_max %u\n", p->room, max);
			return 1;
		}
		peer_echo_fill(p->data, size, size);
		p->len = size;
		p->peer = a->peer;
		gw_pkt *r = NULL;
		/* The same packet is sent again until its echo comes back: the
		 * sender still owns it after tx_burst. */
		for (int attempt = 0; attempt < 10 && !r; attempt++) {
			if (attempt)
				resent++;
			if (!send_one(dp, p))
				continue;
			r = peer_await(dp, 0, 0, 0.2);
			if (r && (r->len != size || memcmp(r->data, p->data, size))) {
				fprintf(stderr, "client: FAIL: size %u came back as %u bytes%s\n",
					size, r->len, r->len == size ? ", different" : "");
				return 1;
			}
		}
		if (p->len != size || p->data[0] != pattern(size, 0)) {
			fprintf(stderr, "client: FAIL: sent packet changed under the sender\n");
			return 1;
		}
		gw_dp_free(dp, &p, 1);
		if (!r) {
			fprintf(stderr, "client: FAIL: no echo of a %u-byte packet after 10 tries\n",
				size);
			return 1;
		}
		if (r->peer.ip != a->peer.ip || r->peer.port != a->peer.port) {
			fprintf(stderr, "client: FAIL: echo from the wrong address\n");
			return 1;
		}
		gw_dp_free(dp, &r, 1);
	}
	printf("client: sizes 1..%u echoed intact (%u resent)\n", max, resent);
	return 0;
}

static uint32_t data_size(uint64_t seq, uint32_t max)
{
	return HDR + (uint32_t)((seq * 37) % (max - HDR + 1));
}

/* count DATA packets, mixed sizes, at most WINDOW unacknowledged. */
static int test_window(gw_dp *dp, const struct peer_args *a)
{
	uint32_t max = gw_dp_payload_max(dp);
	uint64_t sent = 0, acked = 0, bytes = 0;
	double t0 = peer_now(), last_progress = t0;
	while (acked < a->count) {
		if (peer_now() - last_progress > 3) {
			fprintf(stderr, "client: FAIL: stalled at %llu of %llu acknowledged "
				"(%llu sent): packets were lost\n", (unsigned long long)acked,
				(unsigned long long)a->count, (unsigned long long)sent);
			return 1;
		}
		unsigned want = (unsigned)GW_TEST_MIN(a->count - sent, WINDOW - (sent - acked));
		want = want > 32 ? 32 : want;
		gw_pkt *pk[32];
		int k = want ? gw_dp_alloc(dp, pk, want) : 0;
		for (int i = 0; i < k; i++) {
			uint64_t seq = sent + (uint64_t)i;
			uint32_t size = data_size(seq, max);
			bool ack = seq % ACK_EVERY == ACK_EVERY - 1 || seq + 1 == a->count;
			peer_put_hdr(pk[i]->data, T_DATA, ack ? F_ACK_NOW : 0, seq);
			for (uint32_t j = HDR; j < size; j++)
				pk[i]->data[j] = pattern(seq, j);
			pk[i]->len = size;
			pk[i]->peer = a->peer;
			bytes += size;
		}
		int s = 0;
		double give_up = peer_now() + 3;
		while (s < k && peer_now() < give_up)
			s += gw_dp_tx_burst(dp, pk + s, (unsigned)(k - s));
		if (s < k) {
			fprintf(stderr, "client: FAIL: device queue full for 3 s\n");
			return 1;
		}
		gw_dp_free(dp, pk, (unsigned)k);
		sent += (uint64_t)k;
		gw_pkt *r[32];
		int n = gw_dp_rx_burst(dp, r, 32);
		if (n <= 0 && !k)
			gw_dp_wait(dp, 200);
		for (int i = 0; i < n; i++) {
			int flags;
			uint64_t seq, v[2];
			if (get_hdr(r[i], &flags, &seq) == T_ACK && r[i]->len >= HDR + 16) {
				memcpy(v, r[i]->data + HDR, 16);
				if (v[1]) {
					fprintf(stderr, "client: FAIL: server saw %llu corrupt packets\n",
						(unsigned long long)v[1]);
					return 1;
				}
				if (v[0] > acked) {
					acked = v[0];
					last_progress = peer_now();
				}
			}
		}
		gw_dp_free(dp, r, (unsigned)(n > 0 ? n : 0));
	}
	double s = peer_now() - t0;
	printf("client: %llu packets (%llu bytes) in a %d-packet window arrived intact, "
	       "%.3f Mpps\n", (unsigned long long)a->count, (unsigned long long)bytes, WINDOW,
	       a->count / s / 1e6);
	return 0;
}

static int run_client(gw_dp *dp, const struct peer_args *a)
{
	int rc;
	if (!strcmp(a->test, "bad"))
		rc = peer_test_bad(dp, &a->local, &a->peer);
	else
		rc = test_sizes(dp, a) || test_window(dp, a);
	uint64_t v[5];
	if (!peer_stats(dp, &a->peer, T_BYE, 99, v)) {
		fprintf(stderr, "client: FAIL: server did not answer BYE\n");
		return 1;
	}
	if (rc == 0 && !strcmp(a->test, "xfer") && (v[0] != a->count || v[1] != 0)) {
		fprintf(stderr, "client: FAIL: server counted %llu good and %llu corrupt of %llu\n",
			(unsigned long long)v[0], (unsigned long long)v[1],
			(unsigned long long)a->count);
		return 1;
	}
	return rc;
}

/* ---- main ----------------------------------------------------------------- */

static int parse(int argc, char **argv, struct peer_args *a)
{
	static const struct option opts[] = {
		{"role", required_argument, 0, 'r'}, {"local", required_argument, 0, 'l'},
		{"peer", required_argument, 0, 'p'}, {"test", required_argument, 0, 't'},
		{"count", required_argument, 0, 'c'}, {"backend", required_argument, 0, 'b'},
		{"opts", required_argument, 0, 'o'}, {"timeout", required_argument, 0, 'T'},
		{0, 0, 0, 0}};
	int c;
	const char *role = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r': role = optarg; break;
		case 'l':
			if (gw_endpoint_parse(optarg, &a->local)) {
				fprintf(stderr, "dpdk_peer: --local: bad '%s'\n", optarg);
				return -1;
			}
			break;
		case 'p':
			if (gw_endpoint_parse(optarg, &a->peer)) {
				fprintf(stderr, "dpdk_peer: --peer: bad '%s'\n", optarg);
				return -1;
			}
			break;
		case 't': a->test = optarg; break;
		case 'c': a->count = strtoull(optarg, NULL, 10); break;
		case 'b': a->backend = optarg; break;
		case 'o': a->opts = optarg; break;
		case 'T': a->timeout = strtod(optarg, NULL); break;
		default: return -1;
		}
	}
	if (!role || (strcmp(role, "server") && strcmp(role, "client"))) {
		fprintf(stderr, "dpdk_peer: --role: server or client\n");
		return -1;
	}
	a->server = !strcmp(role, "server");
	if (strcmp(a->test, "xfer") && strcmp(a->test, "bad")) {
		fprintf(stderr, "dpdk_peer: --test: xfer or bad\n");
		return -1;
	}
	if (!a->server && !a->peer.port) {
		fprintf(stderr, "dpdk_peer: --peer: required for the client\n");
		return -1;
	}
	if (a->count < 1 || a->timeout <= 0) {
		fprintf(stderr, "dpdk_peer: --count and --timeout must be positive\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct peer_args a = {.backend = "dpdk", .test = "xfer", .count = 100000,
			      .timeout = 60};
	int app = 0;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			app = i;
			break;
		}
	a.eal_argc = app ? app : 1;
	a.eal_argv = argv;
	if (app)
		argv[app] = argv[0];
	if (parse(argc - app, argv + app, &a) < 0)
		return 2;

	gw_dp_config cfg = {.backend = a.backend, .local = a.local, .argc = a.eal_argc,
			    .argv = a.eal_argv, .opts = a.opts};
	gw_dp *dp;
	int rc = gw_dp_open(&cfg, &dp);
	if (rc < 0) {
		fprintf(stderr, "dpdk_peer: %s: open failed: %s\n", a.server ? "server" : "client",
			gw_strerror(rc));
		return 1;
	}
	if (a.server) {
		printf("server: ready, payload_max %u\n", gw_dp_payload_max(dp));
		fflush(stdout);
	}
	rc = a.server ? run_server(dp, &a) : run_client(dp, &a);
	gw_dp_stats st;
	gw_dp_stats_get(dp, &st);
	printf("%s: rx %llu tx %llu rx_bad %llu tx_full %llu idle_waits %llu\n",
	       a.server ? "server" : "client", (unsigned long long)st.rx_pkts,
	       (unsigned long long)st.tx_pkts, (unsigned long long)st.rx_bad,
	       (unsigned long long)st.tx_full, (unsigned long long)st.idle_waits);
	gw_dp_close(dp);
	if (rc == 0 && !a.server)
		printf("client: PASS\n");
	return rc ? 1 : 0;
}
