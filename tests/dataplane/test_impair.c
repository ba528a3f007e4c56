/* The impairment layer (impair_* options, handled by dp.c for every
 * backend): options are taken out before the backend parses the rest; loss,
 * duplication, reordering and one-bit corruption happen at about the asked
 * rates, are counted, and are the same for the same seed; a held packet is
 * released even when nothing follows it; a "full device queue" refuses the
 * tail of some tx bursts. Runs on the UDP backend over
 * 127.0.0.1 in one process. */
#include <unistd.h>

#include <gw/dataplane.h>

#include "../gw_test.h"
#include "dp_internal.h"   /* a backend's ops, to see what a wait asks of it */

#define N_PKTS 4000u
#define PAYLOAD 64u

static gw_dp *open_udp(const char *opts, int *rc)
{
	gw_dp_config c = {.backend = "udp", .opts = opts};
	gw_endpoint_parse("127.0.0.1:0", &c.local);
	gw_dp *dp = NULL;
	*rc = gw_dp_open(&c, &dp);
	return *rc == 0 ? dp : NULL;
}

static void test_options(void **state)
{
	(void)state;
	int rc;
	gw_dp *dp = open_udp("impair_loss=0.5", &rc);
	GW_CHECK(dp, "impair_loss alone: %s", gw_error_name(rc));
	gw_dp_close(dp);
	dp = open_udp("payload=1000,impair_dup=0.1,impair_seed=9", &rc);
	GW_CHECK(dp, "payload + impair keys: %s", gw_error_name(rc));
	GW_CHECK(gw_dp_payload_max(dp) == 1000, "the backend's own key was lost: payload %u",
		 gw_dp_payload_max(dp));
	gw_dp_close(dp);
	dp = open_udp("impair_corrupt=1,payload=900,impair_reorder=0", &rc);
	GW_CHECK(dp && gw_dp_payload_max(dp) == 900, "keys after an impair key");
	gw_dp_close(dp);
	const char *bad[] = {"impair_bogus=1", "impair_loss=1.5", "impair_loss=-0.1",
			     "impair_loss=abc", "impair_loss=", "impair_seed=-1",
			     "impair_seed=x", "nosuch=1", "impair_loss=0.1,nosuch=1",
			     "impair_loss"};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad); i++) {
		dp = open_udp(bad[i], &rc);
		GW_CHECK(!dp && rc == GW_EINVAL, "opts '%s' accepted (%s)", bad[i],
			 gw_error_name(rc));
	}
}

struct rxlog {
	uint64_t *h;      /* content hash of each packet handed up */
	int32_t *idx;     /* original index, -1 if not recognised */
	size_t n, cap;
	size_t one_bit;   /* handed up with exactly one bit flipped */
	size_t inversions;
	gw_dp_stats st;
};

static void fill_payload(uint8_t *p, uint32_t i)
{
	gw_test_st32(p, i);
	gw_test_st32(p + 4, i);
	for (unsigned j = 8; j < PAYLOAD; j++)
		p[j] = (uint8_t)(i * 7 + j);
}

static unsigned hamming(const uint8_t *a, const uint8_t *b)
{
	unsigned d = 0;
	for (unsigned j = 0; j < PAYLOAD; j++)
		d += (unsigned)__builtin_popcount((unsigned)(a[j] ^ b[j]));
	return d;
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static void record(struct rxlog *lg, const gw_pkt *p, int32_t *last)
{
	if (lg->n == lg->cap) {
		lg->cap = lg->cap ? 2 * lg->cap : 8192;
		lg->h = realloc(lg->h, lg->cap * sizeof(*lg->h));
		lg->idx = realloc(lg->idx, lg->cap * sizeof(*lg->idx));
		GW_CHECK(lg->h && lg->idx, "out of memory");
	}
	GW_CHECK(p->len == PAYLOAD, "packet of %u bytes", p->len);
	int32_t idx = -1;
	uint8_t ref[PAYLOAD];
	uint32_t cand[2] = {gw_test_ld32(p->data), gw_test_ld32(p->data + 4)};
	for (int k = 0; k < 2 && idx < 0; k++) {
		if (cand[k] >= N_PKTS)
			continue;
		fill_payload(ref, cand[k]);
		unsigned d = hamming(ref, p->data);
		if (d <= 1) {
			idx = (int32_t)cand[k];
			lg->one_bit += d;
		}
	}
	GW_CHECK(idx >= 0, "packet %zu matches no sent packet within one bit", lg->n);
	if (idx < *last)
		lg->inversions++;
	*last = idx;
	lg->h[lg->n] = fnv(p->data, p->len);
	lg->idx[lg->n++] = idx;
}

/* Sends N_PKTS numbered packets from a clean endpoint to one with opts;
 * logs what comes up. Batches small enough for the socket buffer. */
static void run(const char *opts, struct rxlog *lg)
{
	int rc;
	gw_dp *a = open_udp(NULL, &rc), *b = open_udp(opts, &rc);
	GW_CHECK(a && b, "open: %s", gw_error_name(rc));
	gw_endpoint to;
	gw_dp_local(b, &to);
	memset(lg, 0, sizeof(*lg));
	int32_t last = -1;
	gw_pkt *pk[64];
	for (uint32_t i = 0; i < N_PKTS; i += 64) {
		unsigned n = GW_MIN(64u, N_PKTS - i);
		GW_CHECK(gw_dp_alloc(a, pk, n) == (int)n, "alloc");
		for (unsigned k = 0; k < n; k++) {
			fill_payload(pk[k]->data, i + k);
			pk[k]->len = PAYLOAD;
			pk[k]->peer = to;
		}
		unsigned sent = 0;
		while (sent < n) {
			int r = gw_dp_tx_burst(a, pk + sent, n - sent);
			GW_CHECK(r >= 0, "tx_burst: %s", gw_error_name(r));
			sent += (unsigned)r;
		}
		gw_dp_free(a, pk, n);
		/* Drain: until 20 ms pass with nothing new (held packets come
		 * up after at most 1 ms on their own). */
		double quiet = 0;
		while (quiet < 0.02) {
			int r = gw_dp_rx_burst(b, pk, 32);
			GW_CHECK(r >= 0, "rx_burst: %s", gw_error_name(r));
			for (int k = 0; k < r; k++)
				record(lg, pk[k], &last);
			gw_dp_free(b, pk, (unsigned)r);
			if (r == 0) {
				gw_dp_wait(b, 2000);
				quiet += 0.002;
			} else {
				quiet = 0;
			}
		}
	}
	gw_dp_stats_get(b, &lg->st);
	gw_dp_close(a);
	gw_dp_close(b);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static void test_rates_and_counts(void **state)
{
	(void)state;
	struct rxlog lg;
	run("impair_loss=0.1,impair_dup=0.1,impair_reorder=0.1,impair_corrupt=0.1,"
	    "impair_seed=42", &lg);
	const gw_dp_stats *s = &lg.st;
	print_message("  lost %llu dup %llu reordered %llu corrupted %llu of %u; "
		      "%zu handed up, %zu inversions\n",
		      (unsigned long long)s->impair_lost, (unsigned long long)s->impair_duplicated,
		      (unsigned long long)s->impair_reordered,
		      (unsigned long long)s->impair_corrupted, N_PKTS, lg.n, lg.inversions);
	GW_CHECK(s->rx_pkts == N_PKTS, "backend received %llu of %u",
		 (unsigned long long)s->rx_pkts, N_PKTS);
	uint64_t lo = N_PKTS / 10 * 7 / 10, hi = N_PKTS / 10 * 13 / 10;
	GW_CHECK(s->impair_lost >= lo && s->impair_lost <= hi, "lost %llu",
		 (unsigned long long)s->impair_lost);
	GW_CHECK(s->impair_duplicated >= lo * 9 / 10 && s->impair_duplicated <= hi,
		 "duplicated %llu", (unsigned long long)s->impair_duplicated);
	GW_CHECK(s->impair_reordered >= lo * 9 / 10 && s->impair_reordered <= hi,
		 "reordered %llu", (unsigned long long)s->impair_reordered);
	GW_CHECK(s->impair_corrupted >= lo * 9 / 10 && s->impair_corrupted <= hi * 11 / 10,
		 "corrupted %llu", (unsigned long long)s->impair_corrupted);
	/* Nothing vanished but the losses; nothing appeared but duplicates. */
	GW_CHECK(lg.n == N_PKTS - s->impair_lost + s->impair_duplicated,
		 "%zu handed up, expected %llu", lg.n,
		 (unsigned long long)(N_PKTS - s->impair_lost + s->impair_duplicated));
	GW_CHECK(lg.one_bit == s->impair_corrupted, "%zu packets had one bit flipped, "
		 "%llu counted", lg.one_bit, (unsigned long long)s->impair_corrupted);
	GW_CHECK(lg.inversions > 0, "reordering produced no inversion");
	free(lg.h);
	free(lg.idx);
}

static void test_deterministic(void **state)
{
	(void)state;
	const char *o1 = "impair_loss=0.05,impair_dup=0.05,impair_reorder=0.05,"
			 "impair_corrupt=0.05,impair_seed=7";
	const char *o2 = "impair_loss=0.05,impair_dup=0.05,impair_reorder=0.05,"
			 "impair_corrupt=0.05,impair_seed=8";
	struct rxlog a, b, c;
	run(o1, &a);
	run(o1, &b);
	run(o2, &c);
	/* Which packets were lost, duplicated and how corrupted depends on
	 * the seed only; the order held packets come back in may depend on
	 * timing, so compare the sorted contents. */
	qsort(a.h, a.n, sizeof(uint64_t), cmp_u64);
	qsort(b.h, b.n, sizeof(uint64_t), cmp_u64);
	qsort(c.h, c.n, sizeof(uint64_t), cmp_u64);
	GW_CHECK(a.n == b.n && !memcmp(a.h, b.h, a.n * sizeof(uint64_t)),
		 "same seed, different packets (%zu vs %zu)", a.n, b.n);
	GW_CHECK(a.st.impair_lost == b.st.impair_lost &&
		 a.st.impair_duplicated == b.st.impair_duplicated &&
		 a.st.impair_reordered == b.st.impair_reordered &&
		 a.st.impair_corrupted == b.st.impair_corrupted, "same seed, different counts");
	GW_CHECK(a.n != c.n || memcmp(a.h, c.h, a.n * sizeof(uint64_t)),
		 "another seed gave the same packets");
	free(a.h), free(a.idx), free(b.h), free(b.idx), free(c.h), free(c.idx);
}

/* impair_txfull: about the asked share of tx_burst calls refuses a tail;
 * what the call reports sent is what arrives. */
static void test_tx_full(void **state)
{
	(void)state;
	int rc;
	gw_dp *a = open_udp("impair_txfull=0.25,impair_seed=3", &rc), *b = open_udp(NULL, &rc);
	GW_CHECK(a && b, "open");
	gw_endpoint to;
	gw_dp_local(b, &to);
	gw_pkt *pk[32];
	uint64_t sent = 0, calls = 400;
	for (uint64_t i = 0; i < calls; i++) {
		GW_CHECK(gw_dp_alloc(a, pk, 8) == 8, "alloc");
		for (int k = 0; k < 8; k++) {
			fill_payload(pk[k]->data, (uint32_t)(sent + k) % N_PKTS);
			pk[k]->len = PAYLOAD;
			pk[k]->peer = to;
		}
		int r = gw_dp_tx_burst(a, pk, 8);
		GW_CHECK(r >= 0 && r <= 8, "tx_burst returned %d", r);
		sent += (uint64_t)r;
		gw_dp_free(a, pk, 8);
		int got;
		while ((got = gw_dp_rx_burst(b, pk, 32)) > 0)
			gw_dp_free(b, pk, (unsigned)got);
	}
	usleep(20000);
	int got;
	while ((got = gw_dp_rx_burst(b, pk, 32)) > 0)
		gw_dp_free(b, pk, (unsigned)got);
	gw_dp_stats sa, sb;
	gw_dp_stats_get(a, &sa);
	gw_dp_stats_get(b, &sb);
	GW_CHECK(sa.impair_txfull >= calls / 8 && sa.impair_txfull <= calls * 3 / 8,
		 "%llu of %llu calls cut short", (unsigned long long)sa.impair_txfull,
		 (unsigned long long)calls);
	GW_CHECK(sa.tx_full + sent == calls * 8 && sa.tx_pkts == sent && sb.rx_pkts == sent,
		 "sent %llu, refused %llu, device took %llu, received %llu",
		 (unsigned long long)sent, (unsigned long long)sa.tx_full,
		 (unsigned long long)sa.tx_pkts, (unsigned long long)sb.rx_pkts);
	gw_dp_close(a);
	gw_dp_close(b);
}

/* The udp backend's wait, with what gw_dp_wait() asks of it recorded
 * while a packet is held back (counted reordered, not yet handed up). */
static const struct gw_dp_ops *udp_ops;
static struct gw_dp_ops recorded_ops;
static unsigned held_waits, held_wait_max_us;
static int handed_up;

static int recorded_wait(gw_dp *dp, unsigned timeout_us)
{
	if (dp->stats.impair_reordered && !handed_up) {
		held_waits++;
		held_wait_max_us = GW_MAX(held_wait_max_us, timeout_us);
	}
	return udp_ops->wait(dp, timeout_us);
}

/* impair.c's IMPAIR_HOLD_US: a held packet is released after this. */
#define HOLD_US 1000u

/* Every packet held back, nothing after it: still handed up, and
 * gw_dp_wait() does not sleep past its release: while the packet is held,
 * what it asks of the backend's wait is cut to the release (at most
 * HOLD_US), not the caller's 100 ms. Nothing here is timed. */
static void test_hold_release(void **state)
{
	(void)state;
	int rc;
	gw_dp *a = open_udp(NULL, &rc), *b = open_udp("impair_reorder=1", &rc);
	GW_CHECK(a && b, "open");
	udp_ops = b->ops;
	recorded_ops = *udp_ops;
	recorded_ops.wait = recorded_wait;
	b->ops = &recorded_ops;
	held_waits = held_wait_max_us = 0;
	handed_up = 0;
	gw_endpoint to;
	gw_dp_local(b, &to);
	gw_pkt *p;
	GW_CHECK(gw_dp_alloc(a, &p, 1) == 1, "alloc");
	fill_payload(p->data, 5);
	p->len = PAYLOAD;
	p->peer = to;
	GW_CHECK(gw_dp_tx_burst(a, &p, 1) == 1, "tx");
	gw_dp_free(a, &p, 1);
	/* Bounded only so that a packet never released cannot hang the test. */
	for (int i = 0; i < 2000 && !handed_up; i++) {
		handed_up = gw_dp_rx_burst(b, &p, 1);
		if (!handed_up)
			gw_dp_wait(b, 100000);
	}
	GW_CHECK(handed_up == 1 && gw_test_ld32(p->data) == 5, "held packet never came up");
	gw_dp_free(b, &p, 1);
	gw_dp_stats st;
	gw_dp_stats_get(b, &st);
	GW_CHECK(st.impair_reordered == 1, "reordered %llu", (unsigned long long)st.impair_reordered);
	print_message("  %u waits while the packet was held, the longest asked %u us\n",
		      held_waits, held_wait_max_us);
	GW_CHECK(held_wait_max_us <= HOLD_US, "while a packet was held, gw_dp_wait(100 ms) asked "
		 "the backend to sleep %u us, past the packet's release (%u us)",
		 held_wait_max_us, HOLD_US);
	b->ops = udp_ops;
	gw_dp_close(a);
	gw_dp_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_rates_and_counts),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_tx_full),
		cmocka_unit_test(test_hold_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
