/* A memif peer's departure waits for a burst of ours that is inside the
 * PMD (dataplane/dpdk/dpdk_guard.c): the PMD's munmap is ours once a memif
 * port is open; a burst on a port whose link is down never enters the
 * PMD; and a link torn down while a burst is inside unmaps only once that
 * burst has left. Both ends of one memif link live in this process (a
 * server port and a client port on one socket), so the teardown is the
 * client's own, on this thread, while a second thread holds a burst open.
 * Skips (77) where the backend is not built or no memif port opens. */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <gw/dataplane.h>

#include "../gw_test.h"
#include "dpdk/dpdk_internal.h"

static gw_dp *server, *client;
static char sock[64];

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int open_port(unsigned port, unsigned link_wait_s, gw_dp **dp)
{
	char opts[48];
	snprintf(opts, sizeof(opts), "port=%u,link_wait=%u", port, link_wait_s);
	gw_dp_config c = {.backend = "dpdk", .pool = 256, .opts = opts};
	gw_endpoint_parse(port ? "10.9.0.2:7000" : "10.9.0.1:7000", &c.local);
	return gw_dp_open(&c, dp);
}

static int setup(void **state)
{
	(void)state;
	snprintf(sock, sizeof(sock), "/tmp/gw-guard-%d.sock", (int)getpid());
	char vs[128], vc[128], prefix[48];
	snprintf(vs, sizeof(vs), "--vdev=net_memif0,role=server,id=0,socket=%s,socket-abstract=no",
		 sock);
	snprintf(vc, sizeof(vc), "--vdev=net_memif1,role=client,id=0,socket=%s,socket-abstract=no",
		 sock);
	snprintf(prefix, sizeof(prefix), "--file-prefix=gwguard%d", (int)getpid());
	static char *argv[16];
	char *a[] = {"test_memif_guard", "-l", "0", "--no-huge", "--no-pci", "-m", "256",
		     "--no-shconf", prefix, "--log-level=lib.eal:error",
		     "--log-level=pmd.net.memif:error", vs, vc};
	for (unsigned i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		argv[i] = strdup(a[i]);
	gw_dp_config c = {.backend = "dpdk", .argc = (int)(sizeof(a) / sizeof(a[0])),
			  .argv = argv, .pool = 256, .opts = "port=0,link_wait=0"};
	gw_endpoint_parse("10.9.0.1:7000", &c.local);
	int rc = gw_dp_open(&c, &server);
	if (rc < 0) {
		printf("SKIP: no memif port here (%s: %s)\n", gw_error_name(rc), gw_error_detail());
		exit(77);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (client)
		gw_dp_close(client);
	if (server)
		gw_dp_close(server);
	unlink(sock);
	return 0;
}

static void hooked_once_a_port_is_open(void **state)
{
	(void)state;
	GW_CHECK(gw_dpdk_guard_installed(), "librte_net_memif's munmap is not guarded");
	GW_CHECK(((struct dpdk_dp *)server)->guard, "the memif server port is not guarded");
}

static void link_down_keeps_bursts_out(void **state)
{
	(void)state;
	/* No client yet: the server's link is down. */
	gw_pkt *p[8];
	GW_CHECK(gw_dp_rx_burst(server, p, 8) == 0, "a burst on a link that is down");
	GW_CHECK(atomic_load(&gw_dpdk_guard_inside) == 0, "the burst stayed counted in");
	int n = gw_dp_alloc(server, p, 2);
	GW_CHECK(n == 2, "alloc");
	for (int i = 0; i < n; i++) {
		p[i]->len = 64;
		gw_endpoint_parse("10.9.0.2:7000", &p[i]->peer);
	}
	GW_CHECK(gw_dp_tx_burst(server, p, 2) == 0, "sent on a link that is down");
	GW_CHECK(atomic_load(&gw_dpdk_guard_inside) == 0, "the burst stayed counted in");
	gw_dp_free(server, p, 2);
}

struct holder {
	uint64_t hold_ns, left_ns;
};

/* A burst inside the PMD for hold_ns, as a descheduled poller would be. */
static void *hold_burst(void *arg)
{
	struct holder *h = arg;
	atomic_fetch_add(&gw_dpdk_guard_inside, 1);
	struct timespec t = {.tv_sec = 0, .tv_nsec = (long)h->hold_ns};
	nanosleep(&t, NULL);
	h->left_ns = now_ns();
	atomic_fetch_sub(&gw_dpdk_guard_inside, 1);
	return NULL;
}

static void teardown_waits_for_a_burst_inside(void **state)
{
	(void)state;
	GW_OK_CALL(open_port(1, 5, &client));
	/* Traffic both ways first: the regions are mapped and in use. */
	gw_pkt *p[4];
	GW_CHECK(gw_dp_alloc(client, p, 1) == 1, "alloc");
	p[0]->len = 64;
	gw_endpoint_parse("10.9.0.1:7000", &p[0]->peer);
	GW_CHECK(gw_dp_tx_burst(client, p, 1) == 1, "client send");
	gw_dp_free(client, p, 1);
	int got = 0;
	for (int i = 0; i < 1000 && !got; i++) {
		got = gw_dp_rx_burst(server, p, 4);
		if (!got)
			usleep(1000);
	}
	GW_CHECK(got == 1, "the server got %d packets", got);
	gw_dp_free(server, p, (unsigned)got);

	struct holder h = {.hold_ns = 300000000ull};
	pthread_t t;
	GW_CHECK(pthread_create(&t, NULL, hold_burst, &h) == 0, "thread");
	usleep(50000);
	/* Closing the client disconnects it: memif unmaps its regions. */
	gw_dp_close(client);
	uint64_t closed = now_ns();
	client = NULL;
	pthread_join(t, NULL);
	GW_CHECK(closed >= h.left_ns, "the regions went %.1f ms before the burst left",
		 (double)(h.left_ns - closed) / 1e6);
}

GW_TEST_MAIN_GROUP("memif-guard", 0, setup, teardown,
		   cmocka_unit_test(hooked_once_a_port_is_open),
		   cmocka_unit_test(link_down_keeps_bursts_out),
		   cmocka_unit_test(teardown_waits_for_a_burst_inside))
