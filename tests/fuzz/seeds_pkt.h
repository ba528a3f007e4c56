/* The packets of fuzz_pkt.c's seeds and of its hostile set (hostile_pkt.c):
 * headers as the stream and the allreduce send them, and packets sealed by
 * the dataplane's own writer. Defined in seeds_pkt.c. */
#ifndef GW_SEEDS_PKT_H
#define GW_SEEDS_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gw/wire.h>

/* A packet of header h and payload[0..plen) into out, sealed by the
 * dataplane's own writer; returns its length. */
size_t mc_make_pkt(uint8_t *out, const gw_pkt_hdr *h, const uint8_t *payload,
		   size_t plen);

/* A DATA header as a stream sends it; an ACK with a cumulative ack. */
gw_pkt_hdr mc_pkt_data(uint32_t chunk, uint8_t flags);
gw_pkt_hdr mc_pkt_ack(uint32_t cum, uint8_t sack_len);

/* An UP of worker 2, and a RESULT of shard 1, as the allreduce sends them
 * (tensor 0, FRAME always; flags adds RETX or MAC). */
gw_pkt_hdr mc_pkt_up(uint32_t chunk, uint8_t flags);
gw_pkt_hdr mc_pkt_result(uint32_t chunk, uint8_t flags, uint8_t sack_len);

/* The payload of an UP (bm = 0) or RESULT into out: bitmap[0..bm), the
 * frame, then 16 random bytes in the place of a MAC if mac; its length. */
size_t mc_agg_payload(uint8_t *out, const uint8_t *bitmap, size_t bm,
		      const uint8_t *frame, size_t flen, bool mac);

/* sack bytes of bitmap: random, bit 0 (the cumulative chunk) clear */
void mc_sack_bitmap(uint8_t *b, size_t n);

#endif
