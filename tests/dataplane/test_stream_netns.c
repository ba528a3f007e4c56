/* The two-process stream across two network namespaces joined by a veth
 * pair (tests/net/netns.sh): sender in one, receiver in the other, each
 * started with `ip netns exec`. Clean, and with gradwire's impairment
 * layer (5% loss + corruption + reordering); with --netem (the test
 * test_stream_netem), tc netem loss on the veth instead, which skips (77)
 * where `tc qdisc add ... netem` fails (this kernel). Skips (77) where
 * namespaces cannot be made: not root, no iproute2, no netns support. */
#include <sys/wait.h>
#include <unistd.h>

#include "stream_harness.h"

#include "../gw_test.h"

static const char *peer, *netns_sh;
static char prefix[16], ns_a[24], ns_b[24], ip_a[32], ip_b[32];

static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void read_cmd(char *out, size_t len, const char *fmt, const char *a, const char *b)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, fmt, netns_sh, a, b);
	FILE *f = popen(cmd, "r");
	GW_CHECK(f, "popen %s", cmd);
	GW_CHECK(fgets(out, (int)len, f), "no output from %s", cmd);
	pclose(f);
	out[strcspn(out, "\n")] = 0;
}

static void down(void)
{
	if (prefix[0])
		sh("'%s' down %s >/dev/null 2>&1", netns_sh, prefix);
}

static int setup(void **state)
{
	(void)state;
	snprintf(prefix, sizeof prefix, "gws%d", (int)(getpid() % 100000));
	if (sh("'%s' up %s 1500 >/dev/null", netns_sh, prefix) != 0) {
		prefix[0] = 0;
		return -1;
	}
	snprintf(ns_a, sizeof ns_a, "%sa", prefix);
	snprintf(ns_b, sizeof ns_b, "%sb", prefix);
	read_cmd(ip_a, sizeof ip_a, "'%s' addr %s %s", prefix, "a");
	read_cmd(ip_b, sizeof ip_b, "'%s' addr %s %s", prefix, "b");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	down();
	return 0;
}

static sh_cfg base(const char *codec, const char *opts)
{
	sh_cfg c = {.peer = peer, .codec = codec, .opts = opts, .ns_tx = ns_a,
		    .ns_rx = ns_b, .ip_tx = ip_a, .ip_rx = ip_b, .timeout_ms = 30000};
	return c;
}

static void report(const char *what, sh_result *res)
{
	print_message("  %s: %llu chunks, %llu retransmits, rx bad+corrupt %llu, %.2f s\n",
		      what, (unsigned long long)sh_stat(&res->tx, "chunks"),
		      (unsigned long long)sh_stat(&res->tx, "retransmits"),
		      (unsigned long long)(sh_stat(&res->rx, "bad") + sh_stat(&res->rx, "corrupt")),
		      res->wall_s);
}

static void test_clean(void **state)
{
	(void)state;
	const char *codecs[] = {"raw", "int8"};
	for (int i = 0; i < 2; i++) {
		sh_cfg c = base(codecs[i], NULL);
		sh_result res;
		sh_check_run(&c, &res);
		report(codecs[i], &res);
		sh_result_free(&res);
	}
}

static void test_impaired(void **state)
{
	(void)state;
	sh_cfg c = base("int8", "impair_loss=0.05,impair_corrupt=0.02,impair_reorder=0.05,"
				"impair_seed=21");
	sh_result res;
	sh_check_run(&c, &res);
	GW_CHECK(sh_stat(&res.tx, "retransmits") > 0, "loss but no retransmission");
	GW_CHECK(sh_stat(&res.rx, "corrupt") > 0, "corruption not detected");
	report("int8 impaired", &res);
	sh_result_free(&res);
}

/* --netem: set when tc netem is missing, so that the run ends in a skip
 * meson shows (77), not in a pass. */
static int netem_missing;

static void test_netem(void **state)
{
	(void)state;
	if (sh("'%s' netem %s 'loss 3%%' >/dev/null 2>&1", netns_sh, prefix) != 0) {
		netem_missing = 1;
		return;
	}
	sh_cfg c = base("raw", NULL);
	sh_result res;
	sh_check_run(&c, &res);
	GW_CHECK(sh_stat(&res.tx, "retransmits") > 0, "netem loss but no retransmission");
	report("raw over netem loss 3%", &res);
	sh_result_free(&res);
	sh("'%s' netem %s 'delay 0ms' >/dev/null 2>&1", netns_sh, prefix);
}

int main(int argc, char **argv)
{
	sh_require("test_stream_netns", argc, argv);
	peer = argv[1];
	if (argc < 3 || access(argv[2], X_OK) != 0) {
		fprintf(stderr, "test_stream_netns: SKIP: needs the path of tests/net/netns.sh\n");
		return 77;
	}
	netns_sh = argv[2];
	int rc = sh("'%s' check", netns_sh);
	if (rc != 0) {
		fprintf(stderr, "test_stream_netns: SKIP: network namespaces cannot be made here "
			"(netns.sh check exited %d)\n", rc);
		return 77;
	}
	/* tc netem runs as a test of its own (test_stream_netem: this program
	 * with --netem), which skips where the kernel has no netem. */
	if (argc > 3 && !strcmp(argv[3], "--netem")) {
		const struct CMUnitTest netem[] = {cmocka_unit_test(test_netem)};
		rc = cmocka_run_group_tests(netem, setup, teardown);
		down();
		if (!rc && netem_missing) {
			fprintf(stderr, "test_stream_netns --netem: SKIP: tc netem is not available "
				"on this kernel (the impairment layer covers loss: test_stream_netns)\n");
			return 77;
		}
		return rc;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_impaired),
	};
	rc = cmocka_run_group_tests(tests, setup, teardown);
	down();
	return rc;
}
