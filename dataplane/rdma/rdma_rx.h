/* What one UD receive completion delivered: a gradwire packet and its
 * sender's IP:port, or a datagram that is not one of ours. Kept apart from
 * the verbs calls (no libibverbs header here) so the fuzz harness
 * (tests/fuzz/fuzz_rdma_rx.c) runs it on any host, with the bytes a device
 * or a hostile peer could leave in the GRH area. */
#ifndef GW_DP_RDMA_RX_H
#define GW_DP_RDMA_RX_H

#include <stdint.h>

#include <gw/dataplane.h>

/* Every UD receive buffer starts with 40 bytes the device fills with the
 * GRH (for RoCEv2 over IPv4: 20 undefined bytes, then the IPv4 header). */
#define RDMA_GRH_LEN 40u

/* The fields of a struct ibv_wc that matter here. */
typedef struct rdma_rx_wc {
	uint8_t ok;        /* status IBV_WC_SUCCESS */
	uint8_t grh;       /* IBV_WC_GRH: the GRH area holds a header */
	uint8_t imm;       /* IBV_WC_WITH_IMM */
	uint32_t byte_len; /* bytes written, the 40 of the GRH area included */
	uint32_t imm_data; /* as the completion holds it: network order */
} rdma_rx_wc;

/* The sender's IPv4 address (host order) in a 40-byte GRH area, 0 if it
 * holds none (docs/wire-format.md §5.9). */
uint32_t rdma_grh_ip(const uint8_t *grh);

/* GW_OK with *peer (IP from the GRH, port from the immediate) and *len
 * (the packet's bytes after the GRH area), or GW_ECORRUPT when the
 * completion is not a gradwire datagram: an error status, no GRH, no
 * immediate, an immediate that is not a port (0, or above 65535), nothing
 * after the GRH, more than room bytes after it, or a GRH with no IPv4
 * source. Reads the 40 bytes at grh only. */
int rdma_rx_classify(const rdma_rx_wc *wc, const uint8_t *grh, uint32_t room,
		     gw_endpoint *peer, uint32_t *len);

#endif
