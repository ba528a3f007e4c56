/* The two-process stream of test_stream_udp under gradwire's own
 * impairment layer (this kernel has no tc netem): loss of 1% and 5%,
 * reordering, duplication, bit corruption, a device queue that refuses
 * packets, and all at once, applied to
 * what each end receives (data at the receiver, acks at the sender). The
 * decoded tensors stay bit-exact, every corrupted packet is dropped and
 * counted (by the packet checksum, or by the frame's own at decode), no
 * chunk is delivered twice, and each run ends by itself: every
 * gw_stream_send and gw_stream_recv returned within its own timeout
 * (timeout_ms; a call that gives up makes stream_peer exit non-zero) and
 * no peer had to be killed at the harness's hang deadline — sh_run_pair
 * fails the test on either. The wall time is printed, never checked: a
 * loaded machine stretches it without anything being wrong. */
#include "stream_harness.h"

#include "../gw_test.h"

static const char *peer;

static void run_cfg(const char *codec, const char *opts, int no_frames, sh_result *res)
{
	sh_cfg cfg = {.peer = peer, .codec = codec, .opts = opts, .timeout_ms = 30000,
		      .no_frames = no_frames};
	sh_check_run(&cfg, res);
	print_message("  %s %s: %llu chunks, %llu retransmits, rx dup %llu, "
		      "bad+corrupt rx %llu tx %llu, %.2f s\n", codec, opts,
		      (unsigned long long)sh_stat(&res->tx, "chunks"),
		      (unsigned long long)sh_stat(&res->tx, "retransmits"),
		      (unsigned long long)sh_stat(&res->rx, "duplicates"),
		      (unsigned long long)(sh_stat(&res->rx, "bad") + sh_stat(&res->rx, "corrupt")),
		      (unsigned long long)(sh_stat(&res->tx, "bad") + sh_stat(&res->tx, "corrupt")),
		      res->wall_s);
}

static void run(const char *codec, const char *opts, sh_result *res)
{
	run_cfg(codec, opts, 0, res);
}

static void loss(const char *opts)
{
	const char *codecs[] = {"raw", "int8"};
	for (int i = 0; i < 2; i++) {
		sh_result res;
		run(codecs[i], opts, &res);
		GW_CHECK(sh_stat(&res.rx, "dp_impair_lost") > 0, "no data packet was lost");
		GW_CHECK(sh_stat(&res.tx, "retransmits") > 0, "losses but no retransmission");
		sh_result_free(&res);
	}
}

static void test_loss_1(void **state)
{
	(void)state;
	loss("impair_loss=0.01,impair_seed=11");
}

static void test_loss_5(void **state)
{
	(void)state;
	loss("impair_loss=0.05,impair_seed=12");
}

static void test_reorder(void **state)
{
	(void)state;
	sh_result res;
	run("raw", "impair_reorder=0.1,impair_seed=13", &res);
	GW_CHECK(sh_stat(&res.rx, "dp_impair_reordered") > 0, "nothing was reordered");
	sh_result_free(&res);
}

static void test_duplicate(void **state)
{
	(void)state;
	sh_result res;
	run("int8", "impair_dup=0.05,impair_seed=14", &res);
	GW_CHECK(sh_stat(&res.rx, "dp_impair_duplicated") > 0, "nothing was duplicated");
	GW_CHECK(sh_stat(&res.rx, "duplicates") > 0, "duplicates were not noticed");
	sh_result_free(&res);
}

/* Both checksum layouts: frames checked by their own checksum at decode
 * (the packet checksum covers the header), and packet checksums over the
 * frame (--no-frames). Either way every corrupted packet is counted. */
static void test_corrupt(void **state)
{
	(void)state;
	for (int no_frames = 0; no_frames < 2; no_frames++) {
		sh_result res;
		run_cfg("raw", "impair_corrupt=0.03,impair_seed=15", no_frames, &res);
		GW_CHECK(sh_stat(&res.rx, "dp_impair_corrupted") > 0, "nothing was corrupted");
		GW_CHECK(sh_stat(&res.rx, "corrupt") > 0,
			 "no corrupted packet failed a checksum (no_frames %d)", no_frames);
		sh_result_free(&res);
	}
}

/* The device queue refuses a tail of 30% of the tx_burst calls (both
 * ends): refused packets are retried in order, nothing is lost or sent
 * twice by it. */
static void test_tx_full(void **state)
{
	(void)state;
	sh_result res;
	run("raw", "impair_txfull=0.3,impair_seed=17", &res);
	GW_CHECK(sh_stat(&res.tx, "dp_tx_full") > 0 && sh_stat(&res.tx, "dp_impair_txfull") > 0,
		 "no tx_burst was cut short");
	GW_CHECK(sh_stat(&res.rx, "duplicates") <= sh_stat(&res.tx, "retransmits"),
		 "more duplicates than retransmissions");
	print_message("  tx_full: %llu packets refused in %llu calls\n",
		      (unsigned long long)sh_stat(&res.tx, "dp_tx_full"),
		      (unsigned long long)sh_stat(&res.tx, "dp_impair_txfull"));
	sh_result_free(&res);
}

static void test_everything(void **state)
{
	(void)state;
	const char *codecs[] = {"raw", "int8"};
	for (int i = 0; i < 2; i++) {
		sh_result res;
		run(codecs[i], "impair_loss=0.05,impair_reorder=0.05,impair_dup=0.05,"
			       "impair_corrupt=0.05,impair_txfull=0.05,impair_seed=16", &res);
		sh_result_free(&res);
	}
}

int main(int argc, char **argv)
{
	sh_require("test_stream_impair", argc, argv);
	peer = argv[1];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loss_1),
		cmocka_unit_test(test_loss_5),
		cmocka_unit_test(test_reorder),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_tx_full),
		cmocka_unit_test(test_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
