/* Two processes over the kernel UDP backend on 127.0.0.1: the receiver's
 * decode-accumulated tensors equal the in-process decode bit for bit, for
 * a lossless and a lossy codec, over real gradient traces (six dense CNN
 * tensors and one sparse logistic-regression gradient of ~600 packets, two
 * rounds with error feedback carried across them). Without impairment no
 * packet is malformed and every chunk is delivered exactly once. */
#include "stream_harness.h"

#include "../gw_test.h"

static const char *peer;

static void run_codec(const char *codec)
{
	sh_cfg cfg = {.peer = peer, .codec = codec};
	sh_result res;
	sh_check_run(&cfg, &res);
	GW_CHECK(sh_stat(&res.rx, "bad") == 0 && sh_stat(&res.rx, "corrupt") == 0,
		 "clean loopback run saw malformed packets");
	GW_CHECK(sh_stat(&res.rx, "delivered") > 600, "too few chunks (%llu) to fill a window",
		 (unsigned long long)sh_stat(&res.rx, "delivered"));
	print_message("  %s: %llu chunks, %llu retransmits, %llu acks, %.2f s\n", codec,
		      (unsigned long long)sh_stat(&res.tx, "chunks"),
		      (unsigned long long)sh_stat(&res.tx, "retransmits"),
		      (unsigned long long)sh_stat(&res.rx, "acks_sent"), res.wall_s);
	sh_result_free(&res);
}

static void test_raw(void **state)
{
	(void)state;
	run_codec("raw");
}

static void test_int8(void **state)
{
	(void)state;
	run_codec("int8");
}

/* A window of 4 chunks: many more window turns, same bits. */
static void test_small_window(void **state)
{
	(void)state;
	sh_cfg cfg = {.peer = peer, .codec = "raw", .window = 4, .rounds = 1};
	sh_result res;
	sh_check_run(&cfg, &res);
	sh_result_free(&res);
}

int main(int argc, char **argv)
{
	sh_require("test_stream_udp", argc, argv);
	peer = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_int8),
		cmocka_unit_test(test_small_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
