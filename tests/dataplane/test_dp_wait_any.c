/* gw_dp_wait_any(): one wait over several dataplanes wakes for a packet on
 * any of them, not only the first; it falls back to waiting on each in
 * turn where one is impaired (held packets only its own wait knows); it
 * refuses a bad list by name; with GW_DP_WAIT_SLEEP it does not spin after
 * traffic. Runs on the UDP backend over 127.0.0.1 in
 * one process; the memif case runs in tests/collective/test_launch.sh
 * (a shard with a port per worker, a worker with one per shard).
 * Nothing here is timed: why a wait ended is read from the dataplanes'
 * wait_any_timeouts (dp_internal.h), what it did from its calls into the
 * backend's ops, counted. */
#include <sys/prctl.h>
#include <time.h>

#include <gw/dataplane.h>

#include "../gw_test.h"
#include "dp_internal.h"   /* a backend's ops, to count a wait's looks;
			    * wait_any_timeouts */

/* The timeout of the waits that must wake for a packet. Its length is no
 * part of any check (a wait that slept it out is counted in
 * wait_any_timeouts); it only bounds how long a failing run takes. */
#define LONG_US 10000000u

static gw_dp *open_udp(const char *opts)
{
	gw_dp_config c = {.backend = "udp", .opts = opts};
	gw_endpoint_parse("127.0.0.1:0", &c.local);
	gw_dp *dp = NULL;
	int rc = gw_dp_open(&c, &dp);
	GW_CHECK(rc == 0, "udp open (%s): %s", opts ? opts : "", gw_error_name(rc));
	return dp;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t timeouts(gw_dp *const *dps, unsigned n)
{
	uint64_t t = 0;
	for (unsigned i = 0; i < n; i++)
		t += dps[i]->wait_any_timeouts;
	return t;
}

static void send_one(gw_dp *from, gw_dp *to, uint8_t tag)
{
	gw_pkt *p;
	GW_CHECK(gw_dp_alloc(from, &p, 1) == 1, "alloc");
	p->data[0] = tag;
	p->len = 1;
	gw_dp_local(to, &p->peer);
	GW_CHECK(gw_dp_tx_burst(from, &p, 1) == 1, "tx");
	gw_dp_free(from, &p, 1);
}

/* The udp backend's ops with ready() and arm() counted: how often a wait
 * looks for a packet, and whether it armed the ports' wake-ups. While
 * looks_left is set, the look that brings it to 0 sends a packet from
 * late_from to late_to once it has answered: a packet that comes after
 * the wait's last look, which only poll() over the armed ports sees. */
static const struct gw_dp_ops *udp_ops;
static struct gw_dp_ops counted_ops;
static unsigned long ready_calls, arm_calls;
static unsigned looks_left;
static gw_dp *late_from, *late_to;

static bool counted_ready(gw_dp *dp)
{
	ready_calls++;
	bool r = udp_ops->ready(dp);
	if (looks_left && !--looks_left)
		send_one(late_from, late_to, 0x48);
	return r;
}

static int counted_arm(gw_dp *dp)
{
	arm_calls++;
	return udp_ops->arm(dp);
}

static void count_ops(gw_dp **dps, unsigned n)
{
	udp_ops = dps[0]->ops;
	counted_ops = *udp_ops;
	counted_ops.ready = counted_ready;
	counted_ops.arm = counted_arm;
	for (unsigned i = 0; i < n; i++)
		dps[i]->ops = &counted_ops;
}

static void uncount_ops(gw_dp **dps, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		dps[i]->ops = udp_ops;
}

/* Receives the packet tagged tag on dps[at]. */
static void rx_tag(gw_dp **dps, unsigned n, unsigned at, uint8_t tag)
{
	gw_pkt *p = NULL;
	int got = 0;
	/* Loopback hands a datagram over at once; the impaired fallback may
	 * have ended its turn on another port first. */
	for (int i = 0; i < 1000 && got == 0; i++) {
		got = gw_dp_rx_burst(dps[at], &p, 1);
		if (!got)
			gw_dp_wait_any(dps, n, 1000);
	}
	GW_CHECK(got == 1 && p->len == 1 && p->data[0] == tag, "dps[%u] received %d", at, got);
	gw_dp_free(dps[at], &p, 1);
}

/* Waits over dps[0..n) and then receives what is on dps[at]: the wait
 * must have ended because of it, not by running out its LONG_US (which
 * every dataplane would count in wait_any_timeouts). */
static void wait_then_rx(gw_dp **dps, unsigned n, unsigned at, uint8_t tag)
{
	uint64_t before = timeouts(dps, n);
	int rc = gw_dp_wait_any(dps, n, LONG_US);
	GW_CHECK(rc == 0, "wait_any: %s", gw_error_name(rc));
	GW_CHECK(timeouts(dps, n) == before, "the wait ran out its timeout with a packet on "
		 "dps[%u]", at);
	rx_tag(dps, n, at, tag);
}

static void test_wakes_for_any(void **state)
{
	(void)state;
	gw_dp *tx = open_udp(NULL);
	gw_dp *dps[3] = {open_udp(NULL), open_udp(NULL), open_udp(NULL)};
	/* A packet there before the wait. */
	for (unsigned at = 0; at < 3; at++) {
		send_one(tx, dps[at], (uint8_t)(0x40 + at));
		wait_then_rx(dps, 3, at, (uint8_t)(0x40 + at));
	}
	/* A packet that comes while the wait sleeps: sent right after its
	 * last look (GW_DP_WAIT_SLEEP: one look a port once all are armed,
	 * then poll()), to each port in turn. The wait armed every port,
	 * looked no more after the packet came (no stepped sleep) and did
	 * not run out: poll() woke for it. */
	count_ops(dps, 3);
	for (unsigned i = 0; i < 3; i++)
		GW_CHECK(gw_dp_set_wait(dps[i], GW_DP_WAIT_SLEEP) == 0, "set_wait");
	for (unsigned at = 0; at < 3; at++) {
		unsigned long k0 = ready_calls, a0 = arm_calls;
		uint64_t t0 = timeouts(dps, 3);
		late_from = tx, late_to = dps[at], looks_left = 3;
		GW_CHECK(gw_dp_wait_any(dps, 3, LONG_US) == 0, "wait_any: %s", gw_error_detail());
		GW_CHECK(looks_left == 0 && ready_calls - k0 == 3 && arm_calls - a0 == 3,
			 "dps[%u]: %lu looks, %lu ports armed, not 3 and 3", at, ready_calls - k0,
			 arm_calls - a0);
		GW_CHECK(timeouts(dps, 3) == t0, "poll() slept out its timeout with a packet on "
			 "dps[%u]", at);
		rx_tag(dps, 3, at, 0x48);
	}
	/* Nothing pending: the wait looks once a port, sleeps in poll() and
	 * runs out, which each dataplane counts, and says so with GW_OK; and
	 * not before its deadline. That last is the API's promise, not a
	 * speed: poll() sleeps on the same clock at least the time left, and
	 * a loaded machine only makes a wait longer. */
	uint64_t idle0[3];
	for (unsigned i = 0; i < 3; i++)
		idle0[i] = dps[i]->wait_any_timeouts;
	unsigned long k0 = ready_calls;
	uint64_t t0 = gw_now_ns();
	GW_CHECK(gw_dp_wait_any(dps, 3, 20000) == 0, "idle wait");
	uint64_t t1 = gw_now_ns();
	for (unsigned i = 0; i < 3; i++)
		GW_CHECK(dps[i]->wait_any_timeouts == idle0[i] + 1, "the idle wait: dps[%u] "
			 "counted %llu timeouts, not 1", i,
			 (unsigned long long)(dps[i]->wait_any_timeouts - idle0[i]));
	GW_CHECK(ready_calls - k0 == 3, "the idle wait looked %lu times", ready_calls - k0);
	GW_CHECK(t1 - t0 >= 20000ull * 1000u, "an idle 20 ms wait returned before its deadline, "
		 "after %llu ns", (unsigned long long)(t1 - t0));
	uncount_ops(dps, 3);
	for (unsigned i = 0; i < 3; i++)
		gw_dp_close(dps[i]);
	gw_dp_close(tx);
}

static void test_impaired_in_turn(void **state)
{
	(void)state;
	gw_dp *tx = open_udp(NULL);
	/* Impaired, but losing nothing: only the wait's path changes. */
	gw_dp *dps[2] = {open_udp(NULL), open_udp("impair_dup=0,impair_seed=3")};
	/* In turn: no port's wake-up armed (a held packet raises none). */
	count_ops(dps, 2);
	unsigned long a0 = arm_calls;
	send_one(tx, dps[1], 0x51);
	wait_then_rx(dps, 2, 1, 0x51);
	send_one(tx, dps[0], 0x52);
	wait_then_rx(dps, 2, 0, 0x52);
	GW_CHECK(arm_calls == a0, "waits over an impaired dataplane armed %lu wake-ups",
		 arm_calls - a0);
	uncount_ops(dps, 2);
	gw_dp_close(dps[0]);
	gw_dp_close(dps[1]);
	gw_dp_close(tx);
}

static void test_bad_lists(void **state)
{
	(void)state;
	gw_dp *dp = open_udp(NULL);
	gw_dp *dps[GW_DP_WAIT_ANY_MAX + 1];
	for (unsigned i = 0; i <= GW_DP_WAIT_ANY_MAX; i++)
		dps[i] = dp;
	GW_CHECK(gw_dp_wait_any(NULL, 1, 10) == GW_EINVAL, "NULL list");
	GW_CHECK(strstr(gw_error_detail(), "dps"), "detail: %s", gw_error_detail());
	GW_CHECK(gw_dp_wait_any(dps, 0, 10) == GW_EINVAL, "n = 0");
	GW_CHECK(gw_dp_wait_any(dps, GW_DP_WAIT_ANY_MAX + 1, 10) == GW_EINVAL, "n too large");
	GW_CHECK(strstr(gw_error_detail(), "n is"), "detail: %s", gw_error_detail());
	gw_dp *holes[2] = {dp, NULL};
	GW_CHECK(gw_dp_wait_any(holes, 2, 10) == GW_EINVAL, "a NULL entry");
	GW_CHECK(strstr(gw_error_detail(), "dps[1]"), "detail: %s", gw_error_detail());
	GW_CHECK(gw_dp_wait_any(dps, GW_DP_WAIT_ANY_MAX, 10) == 0, "the largest list");
	gw_dp_close(dp);
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define IDLE_WAITS 2000
#define IDLE_US 50u   /* the default policy polls for 20 us of each */

struct idle {
	double cpu, wall;     /* the thread's CPU time, the wall time (printed) */
	unsigned long looks;  /* ready() calls */
	uint64_t timeouts;    /* wait_any_timeouts, both dataplanes' */
};

/* IDLE_WAITS idle waits over dps[0..2), each right after a packet came on
 * dps[0] (an active link, on which the default policy polls first): what
 * the waits alone took. */
static struct idle idle_waits(gw_dp *tx, gw_dp **dps)
{
	struct idle r = {0, 0, 0, 0};
	for (int i = 0; i < IDLE_WAITS; i++) {
		send_one(tx, dps[0], 0x60);
		gw_pkt *p = NULL;
		while (gw_dp_rx_burst(dps[0], &p, 1) == 0)
			gw_dp_wait(dps[0], 1000);
		gw_dp_free(dps[0], &p, 1);
		unsigned long k0 = ready_calls;
		uint64_t o0 = timeouts(dps, 2);
		double c0 = cpu_s(), t0 = now_s();
		GW_CHECK(gw_dp_wait_any(dps, 2, IDLE_US) == 0, "idle wait");
		r.cpu += cpu_s() - c0;
		r.wall += now_s() - t0;
		r.looks += ready_calls - k0;
		r.timeouts += timeouts(dps, 2) - o0;
	}
	return r;
}

/* GW_DP_WAIT_SLEEP: a wait with traffic just seen does not spin. Two
 * observations of behaviour, neither a speed, both exact whatever the
 * load:
 * - how often the wait looks for a packet: sleeping, once per dataplane
 *   (the look that closes the race with a packet that came before the
 *   wake-up was armed), then poll(); polling, at least once more, and on
 *   for 20 us.
 * - how it ended: every wait slept in poll() to its timeout, which each
 *   dataplane counts (wait_any_timeouts), so none came back early from a
 *   spin or a stepped sleep.
 * Where the time goes (CPU time against wall time, each policy's) is
 * printed, not checked: about half on the CPU while polling here, 20 us
 * of each 50 us. A timer slack of 1 ns keeps the sleeps near 50 us
 * instead of 100. */
static void test_sleep_policy_does_not_spin(void **state)
{
	(void)state;
	int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	gw_dp *tx = open_udp(NULL);
	gw_dp *dps[2] = {open_udp(NULL), open_udp(NULL)};
	count_ops(dps, 2);
	struct idle spin = idle_waits(tx, dps);
	print_message("spin:  %.1f ms on the CPU in %.1f ms of waits, %.1f looks a wait\n",
		      spin.cpu * 1e3, spin.wall * 1e3, (double)spin.looks / IDLE_WAITS);
	for (unsigned i = 0; i < 2; i++)
		GW_CHECK(gw_dp_set_wait(dps[i], GW_DP_WAIT_SLEEP) == 0, "set_wait: %s",
			 gw_error_detail());
	struct idle sl = idle_waits(tx, dps);
	print_message("sleep: %.1f ms on the CPU in %.1f ms of waits, %.1f looks a wait\n",
		      sl.cpu * 1e3, sl.wall * 1e3, (double)sl.looks / IDLE_WAITS);
	GW_CHECK(sl.looks == 2ul * IDLE_WAITS, "sleep policy: %lu looks in %d waits over 2 "
		 "dataplanes", sl.looks, IDLE_WAITS);
	GW_CHECK(sl.timeouts == 2ull * IDLE_WAITS, "sleep policy: %llu timeouts counted in %d "
		 "idle waits over 2 dataplanes", (unsigned long long)sl.timeouts, IDLE_WAITS);
	/* A bad policy, or no dataplane, is refused by name. */
	GW_CHECK(gw_dp_set_wait(dps[0], (gw_dp_wait_policy)7) == GW_EINVAL, "policy 7");
	GW_CHECK(strstr(gw_error_detail(), "policy 7"), "detail: %s", gw_error_detail());
	GW_CHECK(gw_dp_set_wait(NULL, GW_DP_WAIT_SLEEP) == GW_EINVAL, "NULL dp");
	for (unsigned i = 0; i < 2; i++) {
		dps[i]->ops = udp_ops;
		gw_dp_close(dps[i]);
	}
	gw_dp_close(tx);
	if (slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wakes_for_any),
		cmocka_unit_test(test_impaired_in_turn),
		cmocka_unit_test(test_bad_lists),
		cmocka_unit_test(test_sleep_policy_does_not_spin),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
