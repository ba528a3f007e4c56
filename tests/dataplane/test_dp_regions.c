/* gw_dp_regions(): every packet buffer a dataplane hands out lies inside
 * one of the regions it names (what a GPU registers once so that it can
 * write frames into packets without a copy), on the UDP backend and, where
 * it is built, on DPDK over a null device; bad arguments are refused by
 * name. */
#include <gw/dataplane.h>

#include "../gw_test.h"

#define POOL 96u

static void check_pool(gw_dp *dp, const char *what)
{
	gw_dp_region r[16];
	int n = gw_dp_regions(dp, r, 16);
	GW_CHECK(n >= 1 && n <= 16, "%s: %d regions", what, n);
	GW_CHECK(gw_dp_regions(dp, NULL, 0) == n, "%s: the count without room", what);
	gw_pkt *p[POOL];
	int got = gw_dp_alloc(dp, p, POOL);
	GW_CHECK(got > 0, "%s: alloc", what);
	for (int i = 0; i < got; i++) {
		int inside = 0;
		for (int k = 0; k < n; k++) {
			uint8_t *lo = r[k].addr, *hi = lo + r[k].len;
			inside |= p[i]->data >= lo && p[i]->data + p[i]->room <= hi;
		}
		GW_CHECK(inside, "%s: packet %d's data [%p, +%u) is in no region", what, i,
			 (void *)p[i]->data, p[i]->room);
	}
	gw_dp_free(dp, p, (unsigned)got);
}

static void test_udp(void **state)
{
	(void)state;
	gw_dp_config c = {.backend = "udp", .pool = POOL};
	gw_endpoint_parse("127.0.0.1:0", &c.local);
	gw_dp *dp = NULL;
	GW_CHECK(gw_dp_open(&c, &dp) == 0, "udp open");
	check_pool(dp, "udp");
	gw_dp_region r;
	GW_CHECK(gw_dp_regions(NULL, &r, 1) == GW_EINVAL, "NULL dp");
	GW_CHECK(gw_dp_regions(dp, NULL, 1) == GW_EINVAL, "NULL regions with room");
	GW_CHECK(strstr(gw_error_detail(), "r is NULL"), "detail: %s", gw_error_detail());
	/* No dma-buf from a socket: a GPU's frames go through these regions. */
	GW_CHECK(gw_dp_dmabuf(dp) == 0, "udp claims dma-buf");
	GW_CHECK(strstr(gw_error_detail(), "udp backend sends from host memory only"),
		 "detail: %s", gw_error_detail());
	GW_CHECK(gw_dp_dmabuf(NULL) == GW_EINVAL, "NULL dp");
	gw_dp_close(dp);
}

static void test_dpdk_null(void **state)
{
	(void)state;
	char *argv[] = {"test_dp_regions", "-l", "0", "--no-huge", "--no-pci", "-m", "128",
			"--no-shconf", "--file-prefix=gwregions", "--log-level=lib.eal:error",
			"--vdev=net_null0", NULL};
	gw_dp_config c = {.backend = "dpdk", .pool = POOL, .argc = 11, .argv = argv,
			  .opts = "link_wait=0"};
	gw_endpoint_parse("10.0.0.1:7000", &c.local);
	gw_dp *dp = NULL;
	int rc = gw_dp_open(&c, &dp);
	if (rc < 0) {
		/* Not built here, or no EAL: the UDP case stands alone. */
		printf("dpdk: not checked (%s: %s)\n", gw_error_name(rc), gw_error_detail());
		return;
	}
	check_pool(dp, "dpdk net_null");
	GW_CHECK(gw_dp_dmabuf(dp) == 0, "dpdk claims dma-buf");
	gw_dp_close(dp);
}

GW_TEST_MAIN("dp-regions", 0, cmocka_unit_test(test_udp), cmocka_unit_test(test_dpdk_null))
