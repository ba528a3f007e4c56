/* What the RDMA tests do first: the address of the RDMA device to use
 * (GW_RDMA_IP, default 10.0.0.1, which scripts/rdma-vm.sh's soft-RoCE
 * guest has), after checking that an rdma gw_dp opens there. Exits 77
 * (SKIP) with the backend's reason when none does, 1 on a bad GW_RDMA_IP. */
#ifndef GW_RDMA_TEST_H
#define GW_RDMA_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include <gw/dataplane.h>

static inline const char *gw_rdma_test_ip(const char *prog)
{
	const char *ip = getenv("GW_RDMA_IP") ? getenv("GW_RDMA_IP") : "10.0.0.1";
	char local[64];
	snprintf(local, sizeof(local), "%s:0", ip);
	gw_dp_config dc = {.backend = "rdma"};
	if (gw_endpoint_parse(local, &dc.local) < 0) {
		fprintf(stderr, "%s: GW_RDMA_IP '%s' is not an IPv4 address\n", prog, ip);
		exit(1);
	}
	gw_dp *dp;
	if (gw_dp_open(&dc, &dp) < 0) {
		fprintf(stderr, "%s: SKIP: %s\n", prog, gw_error_detail());
		exit(77);
	}
	gw_dp_close(dp);
	return ip;
}

#endif
