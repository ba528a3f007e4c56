/* Stream edges: bad configurations are refused; a send with nobody
 * listening and a receive with nobody sending end with GW_ETIMEDOUT in
 * bounded time and give every packet back to the pool; the empty tensor
 * (fill() returns 0 at once) arrives as 0 chunks; and a sender whose final
 * acknowledgements are lost (half of all ACKs dropped) still finishes
 * every tensor — the receiver re-acknowledges from its history at the
 * next receive and from gw_stream_linger() at the end. Sender and receiver
 * are two processes (fork) over UDP on 127.0.0.1. */
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gw/dataplane.h>
#include <gw/stream.h>

#include "../gw_test.h"
#include "gw_util.h"

#define N_TENSORS 40
#define POOL 1024

static gw_dp *open_udp(const char *opts, uint32_t pool)
{
	gw_dp_config c = {.backend = "udp", .opts = opts, .pool = pool};
	gw_endpoint_parse("127.0.0.1:0", &c.local);
	gw_dp *dp = NULL;
	int rc = gw_dp_open(&c, &dp);
	GW_CHECK(rc == 0, "gw_dp_open(udp, %s): %s", opts ? opts : "", gw_error_name(rc));
	return dp;
}

/* All of the pool can be allocated: nothing leaked. */
static void check_pool(gw_dp *dp, unsigned pool)
{
	gw_pkt **p = calloc(pool, sizeof(*p));
	GW_CHECK(p, "out of memory");
	int n = gw_dp_alloc(dp, p, pool);
	GW_CHECK(n == (int)pool, "only %d of %u packets are back in the pool", n, pool);
	gw_dp_free(dp, p, (unsigned)n);
	free(p);
}

static void test_config(void **state)
{
	(void)state;
	gw_dp *dp = open_udp(NULL, 0);
	gw_stream_config c = {.window = GW_STREAM_WINDOW_MAX + 1};
	GW_CHECK(!gw_stream_create(dp, &c), "window above the maximum accepted");
	GW_CHECK(!gw_stream_create(NULL, &c) && !gw_stream_create(dp, NULL), "NULL accepted");
	c.window = GW_STREAM_WINDOW_MAX;
	gw_stream *s = gw_stream_create(dp, &c);
	GW_CHECK(s, "the maximum window refused");
	GW_EXPECT_RC(gw_stream_send(s, NULL, 0, 0, NULL, NULL), GW_EINVAL, "NULL send");
	GW_EXPECT_RC(gw_stream_recv(s, 0, 0, NULL, NULL), GW_EINVAL, "NULL recv");
	GW_EXPECT_RC(gw_stream_linger(NULL, 1), GW_EINVAL, "NULL linger");
	gw_stream_free(s);
	gw_stream_free(NULL);
	gw_dp_close(dp);
	/* The smallest payload the UDP backend takes (64 bytes) holds the
	 * header and a frame of 32 bytes. */
	gw_dp *tiny = open_udp("payload=64", 0);
	c.window = 0;
	s = gw_stream_create(tiny, &c);
	GW_CHECK(s, "64-byte payloads refused");
	gw_stream_free(s);
	gw_dp_close(tiny);
}

struct frames_arg {
	uint32_t n;          /* chunks to produce */
	uint32_t tag;
	size_t len;
};

static int fill(void *arg, uint32_t chunk, uint8_t *buf, size_t room)
{
	struct frames_arg *a = arg;
	if (chunk >= a->n)
		return 0;
	size_t len = GW_MIN(a->len, room);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(a->tag * 31 + chunk * 7 + i);
	return (int)len;
}

struct sink {
	uint32_t tag;
	uint32_t calls;
	int bad;
	uint8_t seen[8];
};

static int deliver(void *arg, uint32_t chunk, const uint8_t *frame, size_t len)
{
	struct sink *k = arg;
	k->calls++;
	if (chunk >= 8 || k->seen[chunk]++ || len != 600)
		k->bad = 1;
	for (size_t i = 0; i < len; i++)
		if (frame[i] != (uint8_t)(k->tag * 31 + chunk * 7 + i))
			k->bad = 1;
	return 0;
}

static void test_send_timeout(void **state)
{
	(void)state;
	gw_dp *dp = open_udp(NULL, POOL);
	gw_dp *closed = open_udp(NULL, 0);
	gw_endpoint to;
	gw_dp_local(closed, &to);
	gw_dp_close(closed);   /* nobody listens there now */
	gw_stream_config c = {.job = 1, .timeout_ms = 300};
	gw_stream *s = gw_stream_create(dp, &c);
	struct frames_arg a = {.n = 1000, .tag = 1, .len = 1000};
	double t0 = gw_now_s();
	int rc = gw_stream_send(s, &to, 0, 0, fill, &a);
	double dt = gw_now_s() - t0;
	GW_EXPECT_RC(rc, GW_ETIMEDOUT, "send with nobody listening");
	GW_CHECK(dt >= 0.29 && dt < 1.5, "timed out after %.3f s, not ~0.3 s", dt);
	check_pool(dp, POOL);
	t0 = gw_now_s();
	struct sink k = {0};
	rc = gw_stream_recv(s, 0, 0, deliver, &k);
	dt = gw_now_s() - t0;
	GW_EXPECT_RC(rc, GW_ETIMEDOUT, "receive with nobody sending");
	GW_CHECK(dt >= 0.29 && dt < 1.5, "timed out after %.3f s, not ~0.3 s", dt);
	check_pool(dp, POOL);
	gw_stream_free(s);
	gw_dp_close(dp);
}

/* ---- two processes ---------------------------------------------------------- */

/* Tensor t has t % 4 chunks: every fourth one is empty. */
static uint32_t chunks_of(uint32_t t)
{
	return t % 4;
}

/* The receiver: N_TENSORS tensors, then a linger; exit status says how it
 * went, its stats go up the pipe. */
static void receiver(gw_dp *dp, int wfd)
{
	gw_stream_config c = {.job = 9, .rank = 2, .timeout_ms = 20000};
	gw_stream *s = gw_stream_create(dp, &c);
	int status = s ? 0 : 10;
	for (uint32_t t = 0; t < N_TENSORS && !status; t++) {
		struct sink k = {.tag = t};
		int n = gw_stream_recv(s, 1, t, deliver, &k);
		if (n != (int)chunks_of(t) || k.calls != chunks_of(t) || k.bad)
			status = 20;
	}
	if (!status && gw_stream_linger(s, 1500) < 0)
		status = 30;
	gw_stream_stats st = {0};
	gw_stream_stats_get(s, &st);
	if (write(wfd, &st, sizeof st) != (ssize_t)sizeof st)
		status = 40;
	gw_stream_free(s);
	gw_dp_close(dp);
	_exit(status);
}

static void test_lost_final_acks(void **state)
{
	(void)state;
	gw_dp *rdp = open_udp(NULL, 0);
	gw_endpoint to;
	gw_dp_local(rdp, &to);
	int fds[2];
	GW_CHECK(pipe(fds) == 0, "pipe");
	pid_t pid = fork();
	GW_CHECK(pid >= 0, "fork");
	if (pid == 0) {
		close(fds[0]);
		receiver(rdp, fds[1]);
	}
	close(fds[1]);
	gw_dp_close(rdp);   /* the child has its own copy of the socket */

	/* Half of the ACKs this sender receives are dropped. */
	gw_dp *dp = open_udp("impair_loss=0.5,impair_seed=77", POOL);
	gw_stream_config c = {.job = 9, .rank = 1, .timeout_ms = 20000, .rto_us = 1000};
	gw_stream *s = gw_stream_create(dp, &c);
	GW_CHECK(s, "create");
	double t0 = gw_now_s();
	for (uint32_t t = 0; t < N_TENSORS; t++) {
		struct frames_arg a = {.n = chunks_of(t), .tag = t, .len = 600};
		int n = gw_stream_send(s, &to, 1, t, fill, &a);
		GW_CHECK(n == (int)chunks_of(t), "tensor %u: send returned %d (%s), expected %u",
			 t, n, n < 0 ? gw_error_name(n) : "", chunks_of(t));
	}
	double dt = gw_now_s() - t0;
	gw_stream_stats st;
	gw_dp_stats ds;
	gw_stream_stats_get(s, &st);
	gw_dp_stats_get(dp, &ds);
	check_pool(dp, POOL);
	gw_stream_free(s);
	gw_dp_close(dp);

	gw_stream_stats rst = {0};
	ssize_t got = read(fds[0], &rst, sizeof rst);
	close(fds[0]);
	int status;
	GW_CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	GW_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "receiver failed (status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	GW_CHECK(got == (ssize_t)sizeof rst, "no stats from the receiver");
	print_message("  %u tensors in %.2f s: %llu ACKs dropped, %llu retransmits, "
		      "receiver re-acked %llu duplicates\n", N_TENSORS, dt,
		      (unsigned long long)ds.impair_lost, (unsigned long long)st.retransmits,
		      (unsigned long long)rst.duplicates);
	GW_CHECK(ds.impair_lost > 0 && st.retransmits > 0, "no ACK was lost");
	GW_CHECK(rst.duplicates > 0, "the receiver never re-acknowledged a finished tensor");
	uint64_t want = 0;
	for (uint32_t t = 0; t < N_TENSORS; t++)
		want += chunks_of(t);
	GW_CHECK(rst.delivered == want, "receiver delivered %llu chunks, expected %llu",
		 (unsigned long long)rst.delivered, (unsigned long long)want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_send_timeout),
		cmocka_unit_test(test_lost_final_acks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
