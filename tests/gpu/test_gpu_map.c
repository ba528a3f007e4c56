/* The map of registered packet memory (gpudirect/map.c): a packet's host
 * address becomes the device's address of the same bytes when they lie
 * inside one region, and nothing otherwise (a straddling or foreign
 * buffer is refused, never half-translated); overlapping or empty regions
 * and a full map are refused. */
#include "../gw_test.h"
#include "map.h"

static void test_translate(void **state)
{
	(void)state;
	static uint8_t a[4096], b[1000];
	struct gw_gpu_map m = {0};
	/* Device addresses far from the host's, as a GPU's would be. */
	uint8_t *da = (uint8_t *)(uintptr_t)0x7f0000000000ull, *db = da + 0x100000;
	GW_CHECK(gw_gpu_map_add(&m, a, da, sizeof(a)) == 0, "add a");
	GW_CHECK(gw_gpu_map_add(&m, b, db, sizeof(b)) == 0, "add b");
	GW_CHECK(gw_gpu_map_dev(&m, a, 1) == da, "a's start");
	GW_CHECK(gw_gpu_map_dev(&m, a + 100, 1400) == da + 100, "a packet in a");
	GW_CHECK(gw_gpu_map_dev(&m, a + 4096 - 64, 64) == da + 4096 - 64, "a's last bytes");
	GW_CHECK(gw_gpu_map_dev(&m, a + 4096 - 64, 65) == NULL, "past a's end");
	GW_CHECK(gw_gpu_map_dev(&m, b + 10, 990) == db + 10, "a packet in b");
	static uint8_t c[16];
	GW_CHECK(gw_gpu_map_dev(&m, c, 1) == NULL, "memory never registered");
	GW_CHECK(gw_gpu_map_dev(&m, NULL, 1) == NULL && gw_gpu_map_dev(NULL, a, 1) == NULL,
		 "NULLs");
}

static void test_refusals(void **state)
{
	(void)state;
	static uint8_t a[256];
	struct gw_gpu_map m = {0};
	GW_CHECK(gw_gpu_map_add(&m, a, a, 0) == GW_EINVAL, "empty region");
	GW_CHECK(gw_gpu_map_add(&m, NULL, a, 8) == GW_EINVAL, "NULL host");
	GW_CHECK(gw_gpu_map_add(&m, a, a, 128) == 0, "add");
	GW_CHECK(gw_gpu_map_add(&m, a + 127, a, 8) == GW_EINVAL, "overlap");
	GW_CHECK(gw_gpu_map_add(&m, a + 128, a + 128, 8) == 0, "adjacent is fine");
	while (m.n < GW_GPU_MAP_MAX)
		GW_CHECK(gw_gpu_map_add(&m, a + 136 + m.n, a, 1) == 0, "fill");
	GW_CHECK(gw_gpu_map_add(&m, a + 250, a, 1) == GW_ENOMEM, "full");
}

GW_TEST_MAIN("gpu-map", 0, cmocka_unit_test(test_translate), cmocka_unit_test(test_refusals))
