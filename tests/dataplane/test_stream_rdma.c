/* The two-process stream of test_stream_udp over the RDMA backend (UD
 * verbs): bit-exact clean, and under gradwire's impairment layer (loss,
 * reorder, duplicates, corruption) with every corrupted packet counted.
 * It needs an RDMA device with the address 10.0.0.1 (GW_RDMA_IP to
 * change): scripts/rdma-vm.sh provides one (soft-RoCE in a QEMU guest);
 * elsewhere it skips (77) with the reason the backend gives. */
#include <stdlib.h>

#include <gw/dataplane.h>

#include "stream_harness.h"

#include "../gw_rdma_test.h"
#include "../gw_test.h"

static const char *peer, *ip;

static void run(const char *codec, const char *opts, sh_result *res)
{
	sh_cfg cfg = {.peer = peer, .codec = codec, .backend = "rdma", .opts = opts,
		      .ip_tx = ip, .ip_rx = ip, .timeout_ms = 30000, .rounds = 1};
	sh_check_run(&cfg, res);
	print_message("  %s %s: %llu chunks, %llu retransmits, bad+corrupt rx %llu, %.2f s\n",
		      codec, opts ? opts : "clean",
		      (unsigned long long)sh_stat(&res->tx, "chunks"),
		      (unsigned long long)sh_stat(&res->tx, "retransmits"),
		      (unsigned long long)(sh_stat(&res->rx, "bad") + sh_stat(&res->rx, "corrupt")),
		      res->wall_s);
}

static void test_clean(void **state)
{
	(void)state;
	const char *codecs[] = {"raw", "bf16"};
	for (int i = 0; i < 2; i++) {
		sh_result res;
		run(codecs[i], NULL, &res);
		GW_CHECK(sh_stat(&res.rx, "bad") + sh_stat(&res.rx, "corrupt") == 0,
			 "a clean link delivered bad packets");
		sh_result_free(&res);
	}
}

static void test_loss(void **state)
{
	(void)state;
	sh_result res;
	run("int8", "impair_loss=0.02,impair_seed=21", &res);
	GW_CHECK(sh_stat(&res.rx, "dp_impair_lost") > 0, "no data packet was lost");
	GW_CHECK(sh_stat(&res.tx, "retransmits") > 0, "losses but no retransmission");
	sh_result_free(&res);
}

static void test_everything(void **state)
{
	(void)state;
	sh_result res;
	run("raw", "impair_loss=0.03,impair_reorder=0.03,impair_dup=0.03,impair_corrupt=0.03,"
		   "impair_seed=22", &res);
	GW_CHECK(sh_stat(&res.rx, "dp_impair_corrupted") > 0, "nothing was corrupted");
	GW_CHECK(sh_stat(&res.rx, "duplicates") > 0, "duplicates were not noticed");
	sh_result_free(&res);
}

int main(int argc, char **argv)
{
	sh_require("test_stream_rdma", argc, argv);
	peer = argv[1];
	ip = gw_rdma_test_ip("test_stream_rdma");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
