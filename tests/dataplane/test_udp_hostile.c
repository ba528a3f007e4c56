/* The UDP backend's GRO path on hostile metadata: recvmmsg and recvmsg are
 * wrapped (-Wl,--wrap, tests/dataplane/meson.build) so that the control
 * message the backend reads says what a buggy or hostile kernel might: a
 * segment size of 0, negative, larger than the datagram, a cmsg too short
 * to hold one, a datagram flagged cut short (MSG_TRUNC). The backend hands
 * up only bytes it received, in order, and counts what it cut (rx_bad);
 * under ASan it reads and writes nothing out of bounds. Also, unforged:
 * segments larger than payload_max are cut and counted as the plain path
 * cuts datagrams. Loopback, one process. */
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <time.h>

#include <gw/dataplane.h>

#include "../gw_test.h"

#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/* What the wrappers write into each message's control data. */
static struct forge {
	int on;
	int seg;          /* the UDP_GRO segment size */
	int short_cmsg;   /* cmsg_len too short for an int */
	int trunc;        /* set MSG_TRUNC */
} forge_cfg;

static void forge(struct msghdr *mh, size_t cap)
{
	if (!forge_cfg.on)
		return;
	if (forge_cfg.trunc)
		mh->msg_flags |= MSG_TRUNC;
	if (cap < CMSG_SPACE(sizeof(int)))
		return;
	memset(mh->msg_control, 0, cap);
	mh->msg_controllen = CMSG_SPACE(sizeof(int));
	struct cmsghdr *c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_GRO;
	c->cmsg_len = forge_cfg.short_cmsg ? CMSG_LEN(2) : CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &forge_cfg.seg, sizeof(int));
}

int __real_recvmmsg(int fd, struct mmsghdr *m, unsigned n, int flags, struct timespec *t);
int __wrap_recvmmsg(int fd, struct mmsghdr *m, unsigned n, int flags, struct timespec *t);
int __wrap_recvmmsg(int fd, struct mmsghdr *m, unsigned n, int flags, struct timespec *t)
{
	size_t cap[64];
	for (unsigned i = 0; i < n && i < 64; i++)
		cap[i] = m[i].msg_hdr.msg_controllen;
	int r = __real_recvmmsg(fd, m, n, flags, t);
	for (int i = 0; i < r && i < 64; i++)
		forge(&m[i].msg_hdr, cap[i]);
	return r;
}

ssize_t __real_recvmsg(int fd, struct msghdr *mh, int flags);
ssize_t __wrap_recvmsg(int fd, struct msghdr *mh, int flags);
ssize_t __wrap_recvmsg(int fd, struct msghdr *mh, int flags)
{
	size_t cap = mh->msg_controllen;
	ssize_t r = __real_recvmsg(fd, mh, flags);
	if (r >= 0)
		forge(mh, cap);
	return r;
}

static gw_dp *open_udp(const char *opts, uint32_t burst)
{
	gw_dp_config c = {.backend = "udp", .opts = opts, .burst = burst};
	gw_endpoint_parse("127.0.0.1:0", &c.local);
	gw_dp *dp = NULL;
	int rc = gw_dp_open(&c, &dp);
	GW_CHECK(rc == 0, "open '%s': %s", opts ? opts : "", gw_error_detail());
	return dp;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Byte at offset j of what the sender sent, across a whole run. */
static uint8_t stream_byte(uint32_t j)
{
	return (uint8_t)(j * 13 + 5);
}

/* Sends n packets of size bytes in one tx_burst (one GSO send where the
 * sender has GSO), together the stream's bytes 0 .. n * size. */
static void send_run(gw_dp *a, gw_dp *b, uint32_t n, uint32_t size)
{
	gw_endpoint to;
	gw_dp_local(b, &to);
	gw_pkt *pk[64];
	GW_CHECK(n <= 64 && gw_dp_alloc(a, pk, n) == (int)n, "alloc");
	for (uint32_t i = 0; i < n; i++) {
		pk[i]->len = size;
		pk[i]->peer = to;
		for (uint32_t j = 0; j < size; j++)
			pk[i]->data[j] = stream_byte(i * size + j);
	}
	GW_CHECK(gw_dp_tx_burst(a, pk, n) == (int)n, "tx_burst");
	gw_dp_free(a, pk, n);
}

struct want {
	uint32_t pkts;     /* packets handed up */
	uint32_t len;      /* each one's length ... */
	uint32_t last;     /* ... but the last one's */
	uint32_t step;     /* stream offset between packets */
	uint64_t bad;      /* rx_bad */
};

/* Receives until w->pkts came (2 s at most, then 20 ms for any extra),
 * reading 1..4 packets a call; checks lengths and bytes and rx_bad. */
static void expect(gw_dp *b, const struct want *w, const char *what)
{
	gw_pkt *pk[4];
	uint32_t got = 0;
	double t0 = now_s(), all_in = 0;
	for (unsigned call = 0;; call++) {
		double t = now_s();
		if (got >= w->pkts && !all_in)
			all_in = t;
		if ((!all_in && t - t0 > 2) || (all_in && t - all_in > 0.02))
			break;
		int r = gw_dp_rx_burst(b, pk, 1 + call % 4);
		GW_CHECK(r >= 0, "%s: rx_burst %d", what, r);
		for (int i = 0; i < r; i++, got++) {
			GW_CHECK(got < w->pkts, "%s: more than %u packets", what, w->pkts);
			uint32_t len = got + 1 == w->pkts ? w->last : w->len;
			GW_CHECK(pk[i]->len == len, "%s: packet %u of %u bytes, want %u", what, got,
				 pk[i]->len, len);
			for (uint32_t j = 0; j < len; j++)
				GW_CHECK(pk[i]->data[j] == stream_byte(got * w->step + j),
					 "%s: packet %u byte %u differs", what, got, j);
		}
		gw_dp_free(b, pk, (unsigned)r);
		if (!r)
			gw_dp_wait(b, 1000);
	}
	gw_dp_stats st;
	gw_dp_stats_get(b, &st);
	GW_CHECK(got == w->pkts && st.rx_pkts == w->pkts && st.rx_bad == w->bad,
		 "%s: %u packets (want %u), rx_pkts %llu, rx_bad %llu (want %llu)", what, got,
		 w->pkts, (unsigned long long)st.rx_pkts, (unsigned long long)st.rx_bad,
		 (unsigned long long)w->bad);
}

/* One case: a sender with tx_opts sends n packets of size bytes; a GRO
 * receiver (payload 1472) with rx_opts reads them with the forged cmsg. */
static void run_case(const char *what, const char *tx_opts, const char *rx_opts, uint32_t n,
		     uint32_t size, const struct want *w)
{
	gw_dp *a = open_udp(tx_opts, 64), *b = open_udp(rx_opts, 0);
	gw_dp_paths pb;
	gw_dp_paths_get(b, &pb);
	if (strstr(rx_opts, "gro=1") && !(pb.on & GW_DP_PATH_GRO)) {
		gw_dp_close(a), gw_dp_close(b);
		print_message("  skip %s: this kernel has no UDP GRO\n", what);
		return;
	}
	forge_cfg.on = 1;
	send_run(a, b, n, size);
	expect(b, w, what);
	forge_cfg.on = 0;
	gw_dp_close(a);
	gw_dp_close(b);
}

/* A segment size of 0, negative, or beyond the datagram: the datagram is
 * one packet, as without GRO: cut to payload_max and counted. */
static void test_bad_segment_size(void **state)
{
	(void)state;
	const struct want one = {.pkts = 1, .len = 1472, .last = 1472, .step = 0, .bad = 1};
	int segs[] = {0, -5, 40001, 1 << 30};
	for (size_t i = 0; i < GW_ARRAY_SIZE(segs); i++) {
		forge_cfg = (struct forge){.seg = segs[i]};
		char what[32];
		snprintf(what, sizeof(what), "segment size %d", segs[i]);
		run_case(what, "gso=1", "gro=1", 40, 1000, &one);
		run_case(what, "gso=1", "gro=1,mmsg=0", 40, 1000, &one);
	}
	/* Exactly the datagram's length: one packet of it. */
	forge_cfg = (struct forge){.seg = 100};
	const struct want whole = {.pkts = 1, .len = 100, .last = 100};
	run_case("segment size = length", "gso=0", "gro=1", 1, 100, &whole);
}

/* A segment size the sender never used splits the bytes it received at
 * that size; a cmsg too short to hold one is ignored. */
static void test_odd_segment_size(void **state)
{
	(void)state;
	forge_cfg = (struct forge){.seg = 7};
	const struct want sevens = {.pkts = 15, .len = 7, .last = 2, .step = 7};
	run_case("segment size 7 of 100", "gso=0", "gro=1", 1, 100, &sevens);
	forge_cfg = (struct forge){.seg = 1};
	const struct want ones = {.pkts = 300, .len = 1, .last = 1, .step = 1};
	run_case("segment size 1 of 300", "gso=0", "gro=1", 1, 300, &ones);
	forge_cfg = (struct forge){.seg = 7, .short_cmsg = 1};
	const struct want whole = {.pkts = 1, .len = 100, .last = 100};
	run_case("short cmsg", "gso=0", "gro=1", 1, 100, &whole);
}

/* A coalesced datagram flagged cut short: its segments come up, the last
 * one counted in rx_bad; and a plain one, as the plain path counts it. */
static void test_truncated(void **state)
{
	(void)state;
	forge_cfg = (struct forge){.seg = 1000, .trunc = 1};
	const struct want run = {.pkts = 40, .len = 1000, .last = 1000, .step = 1000, .bad = 1};
	run_case("cut short, 40 segments", "gso=1", "gro=1", 40, 1000, &run);
	forge_cfg = (struct forge){.seg = 0, .trunc = 1};
	const struct want one = {.pkts = 1, .len = 100, .last = 100, .bad = 1};
	run_case("cut short, one datagram", "gso=0", "gro=1", 1, 100, &one);
	run_case("cut short, plain path", "gso=0", "gro=0", 1, 100, &one);
}

/* Unforged: segments above the receiver's payload_max (a sender with a
 * larger one) are each cut to it and counted, with GRO as without. */
static void test_oversize_segments(void **state)
{
	(void)state;
	forge_cfg = (struct forge){.on = 0};
	const struct want cut = {.pkts = 10, .len = 1472, .last = 1472, .step = 3000, .bad = 10};
	gw_dp *a = open_udp("payload=4000,gso=1", 64);
	for (int gro = 0; gro < 2; gro++) {
		gw_dp *b = open_udp(gro ? "gro=1" : "gro=0", 0);
		send_run(a, b, 10, 3000);
		expect(b, &cut, gro ? "3000-byte segments, GRO" : "3000-byte datagrams");
		gw_dp_close(b);
	}
	gw_dp_close(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_segment_size),
		cmocka_unit_test(test_odd_segment_size),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_oversize_segments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
