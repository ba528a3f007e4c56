/* The kernel UDP backend's paths (gso, gro, mmsg options; docs in
 * dataplane/udp/udp.c): every combination of GSO on the sender, GRO on the
 * receiver and sendmmsg/recvmmsg batching on both, under loss and
 * reordering from the impairment layer, hands up every packet the layer
 * did not drop exactly once, intact, with its sender, and the counters
 * (gw_dp_stats, gw_dp_paths_get) add up; a coalesced datagram read by
 * callers asking for fewer packets than it holds, or with a pool that runs
 * out, loses nothing; the options are refused by name; a kernel that
 * refuses the offloads (GW_UDP_PROBE_FAIL) leaves the plain path, said in
 * "refused". Two or three sockets on 127.0.0.1 in one process. */
#include <stdlib.h>
#include <time.h>

#include <gw/dataplane.h>

#include "../gw_test.h"

#define ROUNDS 20u         /* per combination: each sender sends ... */
#define PER_ROUND 32u      /* ... this many packets a round */
#define N_PER (ROUNDS * PER_ROUND)
#define BIG 1000u          /* most packets' size; every 9th is shorter */

static gw_dp *open_udp(const char *opts, uint32_t pool, uint32_t burst, int *rc)
{
	gw_dp_config c = {.backend = "udp", .opts = opts, .pool = pool, .burst = burst};
	gw_endpoint_parse("127.0.0.1:0", &c.local);
	gw_dp *dp = NULL;
	*rc = gw_dp_open(&c, &dp);
	return *rc == 0 ? dp : NULL;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Runs of 8 equal packets and a shorter one: GSO sends end at the short
 * one, and coalesced datagrams have a short last segment. */
static uint32_t size_of(uint32_t idx)
{
	return idx % 9 == 8 ? 300 + idx % 50 : BIG;
}

static uint8_t byte_of(uint32_t idx, unsigned sender, uint32_t j)
{
	return (uint8_t)(idx * 31 + j * 7 + sender);
}

static void fill(gw_pkt *p, uint32_t idx, unsigned sender, const gw_endpoint *to)
{
	p->len = size_of(idx);
	gw_test_st32(p->data, idx);
	p->data[4] = (uint8_t)sender;
	for (uint32_t j = 5; j < p->len; j++)
		p->data[j] = byte_of(idx, sender, j);
	p->peer = *to;
}

struct sink {
	const gw_endpoint *from;   /* each sender's address */
	unsigned senders;
	uint8_t *seen;             /* [sender * N_PER + idx] */
	uint32_t n_max;
	uint64_t handed, inversions;
	int64_t last;
};

/* Checks one packet handed up: a known index and sender, its size and
 * bytes, the sender's address, never seen before. */
static void take(struct sink *k, const gw_pkt *p)
{
	GW_CHECK(p->len >= 5, "packet of %u bytes", p->len);
	uint32_t idx = gw_test_ld32(p->data);
	unsigned s = p->data[4];
	GW_CHECK(idx < k->n_max && s < k->senders, "unknown packet %u from %u", idx, s);
	GW_CHECK(p->len == size_of(idx), "packet %u: %u bytes, sent %u", idx, p->len,
		 size_of(idx));
	for (uint32_t j = 5; j < p->len; j++)
		GW_CHECK(p->data[j] == byte_of(idx, s, j), "packet %u byte %u differs", idx, j);
	GW_CHECK(p->peer.ip == k->from[s].ip && p->peer.port == k->from[s].port,
		 "packet %u of sender %u came from port %u, sent from %u", idx, s,
		 p->peer.port, k->from[s].port);
	GW_CHECK(!k->seen[s * k->n_max + idx]++, "packet %u of sender %u twice", idx, s);
	if (s == 0 && (int64_t)idx < k->last)
		k->inversions++;
	if (s == 0)
		k->last = idx;
	k->handed++;
}

static void send_all(gw_dp *dp, gw_pkt **pk, unsigned n)
{
	unsigned sent = 0;
	double t0 = now_s();
	while (sent < n) {
		int r = gw_dp_tx_burst(dp, pk + sent, n - sent);
		GW_CHECK(r >= 0, "tx_burst: %s", gw_error_name(r));
		sent += (unsigned)r;
		GW_CHECK(now_s() - t0 < 5, "tx_burst refused packets for 5 s");
	}
}

/* Receives until every packet sent is handed up or was dropped by the
 * impairment layer (its held ones come up within 1 ms), asking for
 * 1..32 packets a call so coalesced datagrams are split across calls. */
static void drain(gw_dp *b, struct sink *k, uint64_t sent)
{
	gw_pkt *pk[32];
	double t0 = now_s();
	for (unsigned call = 0;; call++) {
		gw_dp_stats st;
		gw_dp_stats_get(b, &st);
		if (k->handed + st.impair_lost >= sent)
			break;
		GW_CHECK(now_s() - t0 < 5, "%llu of %llu packets accounted for after 5 s",
			 (unsigned long long)(k->handed + st.impair_lost),
			 (unsigned long long)sent);
		int r = gw_dp_rx_burst(b, pk, 1 + call % 32);
		GW_CHECK(r >= 0, "rx_burst: %s", gw_error_name(r));
		for (int i = 0; i < r; i++)
			take(k, pk[i]);
		gw_dp_free(b, pk, (unsigned)r);
		if (!r)
			gw_dp_wait(b, 1000);
	}
}

struct combo {
	int gso, gro, mmsg;
};

/* Whether path bit is on as asked: on if asked and the kernel has it (else
 * in "refused"), off if not asked. */
static void check_path(const gw_dp_paths *p, uint32_t bit, int asked, const char *who)
{
	if (asked)
		GW_CHECK((p->on & bit) || (p->refused & bit), "%s: path %#x neither on nor "
			 "refused", who, bit);
	else
		GW_CHECK(!(p->on & bit) && !(p->refused & bit), "%s: path %#x on or refused "
			 "though turned off", who, bit);
}

static void check_counters(const struct combo *c, gw_dp *const *tx, gw_dp *b,
			   const struct sink *k)
{
	gw_dp_stats sb, sa;
	gw_dp_paths pb, pa;
	gw_dp_stats_get(b, &sb);
	GW_OK_CALL(gw_dp_paths_get(b, &pb));
	uint64_t total = 2ull * N_PER;
	GW_CHECK(sb.rx_pkts == total && gw_dp_drops(b) == 0 && sb.rx_bad == 0,
		 "backend received %llu of %llu, socket dropped %lld, rx_bad %llu",
		 (unsigned long long)sb.rx_pkts, (unsigned long long)total,
		 (long long)gw_dp_drops(b), (unsigned long long)sb.rx_bad);
	GW_CHECK(k->handed == total - sb.impair_lost, "handed up %llu, expected %llu",
		 (unsigned long long)k->handed, (unsigned long long)(total - sb.impair_lost));
	GW_CHECK(sb.impair_lost > 0 && sb.impair_reordered > 0 && k->inversions > 0,
		 "impairment: lost %llu, reordered %llu, %llu inversions",
		 (unsigned long long)sb.impair_lost, (unsigned long long)sb.impair_reordered,
		 (unsigned long long)k->inversions);
	check_path(&pb, GW_DP_PATH_GRO, c->gro, "receiver");
	check_path(&pb, GW_DP_PATH_MMSG, c->mmsg, "receiver");
	/* A receive call per datagram at least without mmsg (the calls that
	 * found none count too, so more are fine). */
	uint64_t dgrams = sb.rx_pkts - pb.rx_gro_pkts + pb.rx_gro_dgrams;
	GW_CHECK(pb.rx_calls > 0 && (c->mmsg || pb.rx_calls >= dgrams),
		 "%llu receive calls for %llu datagrams", (unsigned long long)pb.rx_calls,
		 (unsigned long long)dgrams);
	GW_CHECK(pb.rx_gro_pkts <= sb.rx_pkts && pb.rx_gro_dgrams <= pb.rx_gro_pkts,
		 "GRO counted %llu packets in %llu datagrams", (unsigned long long)pb.rx_gro_pkts,
		 (unsigned long long)pb.rx_gro_dgrams);
	if (!(pb.on & GW_DP_PATH_GRO))
		GW_CHECK(pb.rx_gro_pkts == 0, "GRO off, %llu packets coalesced",
			 (unsigned long long)pb.rx_gro_pkts);
	for (int s = 0; s < 2; s++) {
		gw_dp_stats_get(tx[s], &sa);
		GW_OK_CALL(gw_dp_paths_get(tx[s], &pa));
		check_path(&pa, GW_DP_PATH_GSO, c->gso, "sender");
		check_path(&pa, GW_DP_PATH_MMSG, c->mmsg, "sender");
		GW_CHECK(sa.tx_pkts == N_PER && sa.tx_full == 0, "sender %d: tx_pkts %llu",
			 s, (unsigned long long)sa.tx_pkts);
		uint64_t msgs = sa.tx_pkts - pa.tx_gso_pkts + pa.tx_gso_sends;
		GW_CHECK(c->mmsg ? pa.tx_calls < msgs : pa.tx_calls == msgs,
			 "sender %d: %llu send calls for %llu messages", s,
			 (unsigned long long)pa.tx_calls, (unsigned long long)msgs);
		if (pa.on & GW_DP_PATH_GSO) {
			GW_CHECK(pa.tx_gso_sends > 0 && pa.tx_gso_pkts > pa.tx_gso_sends,
				 "sender %d: GSO on, %llu GSO sends", s,
				 (unsigned long long)pa.tx_gso_sends);
			/* Over loopback a GSO send reaches a GRO socket whole. */
			if (pb.on & GW_DP_PATH_GRO)
				GW_CHECK(pb.rx_gro_dgrams > 0, "GSO and GRO on, nothing coalesced");
		} else {
			GW_CHECK(pa.tx_gso_sends == 0 && pa.tx_gso_pkts == 0,
				 "sender %d: GSO off, %llu GSO sends", s,
				 (unsigned long long)pa.tx_gso_sends);
		}
	}
}

static void test_combo(void **state)
{
	const struct combo *c = *state;
	char txo[64], rxo[160];
	snprintf(txo, sizeof(txo), "gso=%d,mmsg=%d", c->gso, c->mmsg);
	snprintf(rxo, sizeof(rxo), "gro=%d,mmsg=%d,impair_loss=0.05,impair_reorder=0.1,"
		 "impair_seed=%d", c->gro, c->mmsg, 1 + c->gso * 4 + c->gro * 2 + c->mmsg);
	print_message("  sender %s, receiver %s\n", txo, rxo);
	int rc;
	gw_dp *tx[2] = {open_udp(txo, 0, 0, &rc), open_udp(txo, 0, 0, &rc)};
	gw_dp *b = open_udp(rxo, 0, 0, &rc);
	GW_CHECK(tx[0] && tx[1] && b, "open: %s", gw_error_detail());
	gw_endpoint from[2], to;
	gw_dp_local(tx[0], &from[0]);
	gw_dp_local(tx[1], &from[1]);
	gw_dp_local(b, &to);
	struct sink k = {.from = from, .senders = 2, .n_max = N_PER, .last = -1};
	k.seen = calloc(2 * N_PER, 1);
	GW_CHECK(k.seen, "out of memory");
	gw_pkt *pk[PER_ROUND];
	uint64_t sent = 0;
	for (uint32_t r = 0; r < ROUNDS; r++) {
		for (unsigned s = 0; s < 2; s++) {
			GW_CHECK(gw_dp_alloc(tx[s], pk, PER_ROUND) == PER_ROUND, "alloc");
			for (uint32_t i = 0; i < PER_ROUND; i++)
				fill(pk[i], r * PER_ROUND + i, s, &to);
			send_all(tx[s], pk, PER_ROUND);
			gw_dp_free(tx[s], pk, PER_ROUND);
			sent += PER_ROUND;
		}
		drain(b, &k, sent);
	}
	check_counters(c, tx, b, &k);
	free(k.seen);
	gw_dp_close(tx[0]);
	gw_dp_close(tx[1]);
	gw_dp_close(b);
}

/* Sends n packets of BIG bytes in one tx_burst: one GSO send with GSO on
 * (a sender burst of 64 takes them in one message). */
static void send_run(gw_dp *a, const gw_endpoint *to, uint32_t n)
{
	gw_pkt *pk[64];
	GW_CHECK(n <= 64 && gw_dp_alloc(a, pk, n) == (int)n, "alloc");
	for (uint32_t i = 0; i < n; i++) {
		fill(pk[i], i, 0, to);
		pk[i]->len = BIG;   /* all equal: one run */
		for (uint32_t j = 5; j < BIG; j++)
			pk[i]->data[j] = byte_of(i, 0, j);
	}
	send_all(a, pk, n);
	gw_dp_free(a, pk, n);
}

/* Packet i of send_run, in order: each is its own segment, intact. */
static void take_run(const gw_pkt *p, uint32_t want, const gw_endpoint *from)
{
	GW_CHECK(p->len == BIG && gw_test_ld32(p->data) == want,
		 "packet %u of %u bytes where %u was next", gw_test_ld32(p->data), p->len, want);
	for (uint32_t j = 5; j < BIG; j++)
		GW_CHECK(p->data[j] == byte_of(want, 0, j), "packet %u byte %u differs", want, j);
	GW_CHECK(p->peer.port == from->port, "packet %u from port %u", want, p->peer.port);
}

/* One coalesced datagram of 40 segments, read 1 and then 3 packets a
 * call: all 40 come up in order with one receive call, and while some are
 * staged the dataplane says a packet waits (wait and wait_any return at
 * once, though the socket is empty). */
static void test_small_n(void **state)
{
	(void)state;
	int rc;
	gw_dp *a = open_udp(NULL, 0, 64, &rc), *b = open_udp("gro=1", 0, 0, &rc);
	GW_CHECK(a && b, "open: %s", gw_error_detail());
	gw_dp_paths pa, pb;
	gw_dp_paths_get(a, &pa);
	gw_dp_paths_get(b, &pb);
	if (!(pa.on & GW_DP_PATH_GSO) || !(pb.on & GW_DP_PATH_GRO)) {
		gw_dp_close(a), gw_dp_close(b);
		print_message("  skip: this kernel has no UDP GSO or GRO\n");
		skip();
	}
	gw_endpoint from, to;
	gw_dp_local(a, &from);
	gw_dp_local(b, &to);
	send_run(a, &to, 40);
	gw_pkt *pk[3];
	uint32_t got = 0;
	double t0 = now_s();
	while (got == 0) {
		GW_CHECK(now_s() - t0 < 2, "the run never arrived");
		if (gw_dp_rx_burst(b, pk, 1) == 1) {
			take_run(pk[0], got++, &from);
			gw_dp_free(b, pk, 1);
		} else {
			gw_dp_wait(b, 1000);
		}
	}
	double t1 = now_s();
	GW_OK_CALL(gw_dp_wait(b, 500000));
	GW_OK_CALL(gw_dp_wait_any(&b, 1, 500000));
	GW_CHECK(now_s() - t1 < 0.2, "waits slept %.3f s with 39 packets staged",
		 now_s() - t1);
	while (got < 40) {
		int r = gw_dp_rx_burst(b, pk, 3);
		GW_CHECK(r == (int)GW_MIN(3u, 40 - got), "rx_burst gave %d with %u staged", r,
			 40 - got);
		for (int i = 0; i < r; i++)
			take_run(pk[i], got++, &from);
		gw_dp_free(b, pk, (unsigned)r);
	}
	gw_dp_paths_get(b, &pb);
	gw_dp_stats st;
	gw_dp_stats_get(b, &st);
	GW_CHECK(pb.rx_gro_dgrams == 1 && pb.rx_gro_pkts == 40 && st.rx_pkts == 40 &&
		 st.rx_bytes == 40 * BIG && st.rx_bad == 0,
		 "%llu coalesced datagrams of %llu packets, rx_pkts %llu, rx_bad %llu",
		 (unsigned long long)pb.rx_gro_dgrams, (unsigned long long)pb.rx_gro_pkts,
		 (unsigned long long)st.rx_pkts, (unsigned long long)st.rx_bad);
	GW_CHECK(gw_dp_rx_burst(b, pk, 3) == 0, "a packet after the run");
	gw_dp_close(a);
	gw_dp_close(b);
}

/* A receiver whose pool holds 16 packets: a 40-segment datagram comes up
 * 16 at a time as the caller frees them, nothing lost, nothing read from
 * the socket while segments are staged. */
static void test_pool_short(void **state)
{
	(void)state;
	int rc;
	gw_dp *a = open_udp(NULL, 0, 64, &rc), *b = open_udp("gro=1", 16, 0, &rc);
	GW_CHECK(a && b, "open: %s", gw_error_detail());
	gw_endpoint from, to;
	gw_dp_local(a, &from);
	gw_dp_local(b, &to);
	send_run(a, &to, 40);
	gw_pkt *pk[32];
	uint32_t got = 0;
	double t0 = now_s();
	while (got < 40) {
		GW_CHECK(now_s() - t0 < 2, "%u of 40 packets after 2 s", got);
		int r = gw_dp_rx_burst(b, pk, 32);
		GW_CHECK(r >= 0 && r <= 16, "rx_burst gave %d from a pool of 16", r);
		if (r == 16) {
			gw_pkt *more;
			GW_CHECK(gw_dp_rx_burst(b, &more, 1) == 0, "a packet from an empty pool");
		}
		for (int i = 0; i < r; i++)
			take_run(pk[i], got++, &from);
		gw_dp_free(b, pk, (unsigned)r);
		if (!r)
			gw_dp_wait(b, 1000);
	}
	gw_dp_stats st;
	gw_dp_stats_get(b, &st);
	GW_CHECK(st.rx_pkts == 40 && gw_dp_drops(b) == 0, "rx_pkts %llu",
		 (unsigned long long)st.rx_pkts);
	gw_dp_close(a);
	gw_dp_close(b);
}

/* Sends 100 packets from a to b and checks they all arrive intact. */
static void exchange(gw_dp *a, gw_dp *b)
{
	gw_endpoint from, to;
	gw_dp_local(a, &from);
	gw_dp_local(b, &to);
	struct sink k = {.from = &from, .senders = 1, .n_max = 100, .last = -1};
	k.seen = calloc(100, 1);
	gw_pkt *pk[50];
	for (uint32_t r = 0; r < 2; r++) {
		GW_CHECK(k.seen && gw_dp_alloc(a, pk, 50) == 50, "alloc");
		for (uint32_t i = 0; i < 50; i++)
			fill(pk[i], r * 50 + i, 0, &to);
		send_all(a, pk, 50);
		gw_dp_free(a, pk, 50);
		drain(b, &k, (r + 1) * 50ull);
	}
	free(k.seen);
}

/* gso=0,gro=0,mmsg=0: no path on, none refused, a syscall per packet
 * each way; bad values refused naming the option. */
static void test_plain_options(void **state)
{
	(void)state;
	int rc;
	gw_dp *a = open_udp("gso=0,gro=0,mmsg=0", 0, 0, &rc);
	gw_dp *b = open_udp("gso=0,gro=0,mmsg=0", 0, 0, &rc);
	GW_CHECK(a && b, "open: %s", gw_error_detail());
	exchange(a, b);
	gw_dp_paths pa, pb;
	GW_OK_CALL(gw_dp_paths_get(a, &pa));
	GW_OK_CALL(gw_dp_paths_get(b, &pb));
	GW_CHECK(pa.on == 0 && pa.refused == 0 && pb.on == 0 && pb.refused == 0,
		 "paths on %#x/%#x, refused %#x/%#x", pa.on, pb.on, pa.refused, pb.refused);
	GW_CHECK(pa.tx_calls == 100 && pb.rx_calls >= 100 && pb.rx_gro_pkts == 0,
		 "%llu sends, %llu receives for 100 packets", (unsigned long long)pa.tx_calls,
		 (unsigned long long)pb.rx_calls);
	gw_dp_close(a);
	gw_dp_close(b);
	const char *bad[] = {"gro=2", "gro=", "gro=on", "mmsg=-1", "mmsg=11", "gso=x"};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad); i++) {
		gw_dp *dp = open_udp(bad[i], 0, 0, &rc);
		char key[8];
		snprintf(key, sizeof(key), "%.4s", bad[i]);
		GW_CHECK(!dp && rc == GW_EINVAL && strstr(gw_error_detail(), key),
			 "opts '%s': %s, detail '%s'", bad[i], gw_error_name(rc),
			 gw_error_detail());
	}
	gw_dp_paths p;
	GW_EXPECT_RC(gw_dp_paths_get(NULL, &p), GW_EINVAL, "a NULL dp");
}

/* payload=auto: the loopback's MTU (64 KiB) capped at a jumbo frame,
 * less IPv4 and UDP; a wildcard address names no interface: 1472. A bad
 * payload is refused naming the option. */
static void test_payload_auto(void **state)
{
	(void)state;
	int rc;
	gw_dp *dp = open_udp("payload=auto", 0, 0, &rc);
	GW_CHECK(dp, "open: %s", gw_error_detail());
	GW_CHECK(gw_dp_payload_max(dp) == 9000 - 28, "auto payload on lo: %u",
		 gw_dp_payload_max(dp));
	gw_dp_close(dp);
	gw_dp_config c = {.backend = "udp", .opts = "payload=auto"};
	gw_endpoint_parse("0.0.0.0:0", &c.local);
	GW_OK_CALL(gw_dp_open(&c, &dp));
	GW_CHECK(gw_dp_payload_max(dp) == 1500 - 28, "auto payload, any address: %u",
		 gw_dp_payload_max(dp));
	gw_dp_close(dp);
	const char *bad[] = {"payload=autox", "payload=63", "payload=65508", "payload="};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad); i++) {
		dp = open_udp(bad[i], 0, 0, &rc);
		GW_CHECK(!dp && rc == GW_EINVAL && strstr(gw_error_detail(), "payload"),
			 "opts '%s': %s, detail '%s'", bad[i], gw_error_name(rc),
			 gw_error_detail());
	}
}

/* A kernel without UDP_SEGMENT and UDP_GRO (GW_UDP_PROBE_FAIL makes the
 * probes fail as one does): the plain paths, "refused" says which, and
 * packets still arrive; one probe failing leaves the other. */
static void test_probe_failure(void **state)
{
	(void)state;
	int rc;
	setenv("GW_UDP_PROBE_FAIL", "gso,gro", 1);
	gw_dp *a = open_udp(NULL, 0, 64, &rc), *b = open_udp(NULL, 0, 0, &rc);
	setenv("GW_UDP_PROBE_FAIL", "gro", 1);
	gw_dp *c = open_udp(NULL, 0, 0, &rc);
	unsetenv("GW_UDP_PROBE_FAIL");
	GW_CHECK(a && b && c, "open: %s", gw_error_detail());
	exchange(a, b);
	gw_dp_paths pa, pb, pc;
	gw_dp_paths_get(a, &pa);
	gw_dp_paths_get(b, &pb);
	gw_dp_paths_get(c, &pc);
	uint32_t both = GW_DP_PATH_GSO | GW_DP_PATH_GRO;
	GW_CHECK(pa.on == GW_DP_PATH_MMSG && pa.refused == both && pb.on == GW_DP_PATH_MMSG &&
		 pb.refused == both, "on %#x/%#x, refused %#x/%#x", pa.on, pb.on, pa.refused,
		 pb.refused);
	GW_CHECK(pa.tx_gso_sends == 0 && pb.rx_gro_pkts == 0, "an offload ran though refused");
	GW_CHECK(!(pc.on & GW_DP_PATH_GRO) && pc.refused == GW_DP_PATH_GRO,
		 "GRO probe failing alone: on %#x, refused %#x", pc.on, pc.refused);
	gw_dp_close(a);
	gw_dp_close(b);
	gw_dp_close(c);
}

static struct combo combos[8];
static const char *const combo_names[8] = {
	"gso0_gro0_mmsg0", "gso0_gro0_mmsg1", "gso0_gro1_mmsg0", "gso0_gro1_mmsg1",
	"gso1_gro0_mmsg0", "gso1_gro0_mmsg1", "gso1_gro1_mmsg0", "gso1_gro1_mmsg1",
};

int main(void)
{
	for (int i = 0; i < 8; i++)
		combos[i] = (struct combo){.gso = i >> 2 & 1, .gro = i >> 1 & 1, .mmsg = i & 1};
	/* One test per combination, named by it. */
#define COMBO(i) {combo_names[i], test_combo, NULL, NULL, &combos[i]}
	const struct CMUnitTest tests[] = {
		COMBO(0), COMBO(1), COMBO(2), COMBO(3), COMBO(4), COMBO(5), COMBO(6), COMBO(7),
		cmocka_unit_test(test_small_n),
		cmocka_unit_test(test_pool_short),
		cmocka_unit_test(test_plain_options),
		cmocka_unit_test(test_probe_failure),
		cmocka_unit_test(test_payload_auto),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
