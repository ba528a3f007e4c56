/* Shared by dpdk_peer.c and dpdk_inject.c: the peers' small message format
 * and client helpers. */
#ifndef DPDK_PEER_H
#define DPDK_PEER_H

#include <stdbool.h>
#include <stdint.h>

#include <gw/dataplane.h>

#define GW_TEST_MIN(a, b) ((a) < (b) ? (a) : (b))

double peer_now(void);
/* Writes the 16-byte message header (magic, type, flags, seq). */
void peer_put_hdr(uint8_t *p, int type, int flags, uint64_t seq);
/* Fills an echo payload (never mistaken for a message). */
void peer_echo_fill(uint8_t *p, uint32_t len, uint32_t salt);
/* Waits for a reply of type (0: an echo) and seq; NULL on timeout. */
gw_pkt *peer_await(gw_dp *dp, int type, uint64_t seq, double timeout_s);
/* Asks the server for its counters (type: STATS 4 or BYE 5): v[0] data ok,
 * v[1] corrupt, v[2] rx_bad, v[3] rx_pkts, v[4] echoed. */
bool peer_stats(gw_dp *dp, const gw_endpoint *srv, int type, uint64_t seq, uint64_t v[5]);
/* The --test bad client (dpdk_inject.c). */
int peer_test_bad(gw_dp *dp, const gw_endpoint *local, const gw_endpoint *srv);

#endif
