/* Impairment layer: seeded, deterministic loss, reordering, duplication and
 * bit corruption of received packets, for every backend alike. dp.c takes
 * the impair_* keys out of gw_dp_config.opts before the backend sees them
 * and runs gw_dp_rx_burst()/gw_dp_wait() through here when any is set.
 *
 *   impair_loss=P      drop a received packet with probability P
 *   impair_reorder=P   hold a packet back until 1-4 later ones have been
 *                      handed up (or IMPAIR_HOLD_US passed), with prob. P
 *   impair_dup=P       hand a packet up twice, with probability P
 *   impair_corrupt=P   flip one random bit of the UDP payload, prob. P
 *   impair_txfull=P    a gw_dp_tx_burst() call refuses its packets from a
 *                      random one on, as a full device queue does, prob. P
 *   impair_seed=S      PRNG seed (default 1): the same seed and the same
 *                      arriving packets give the same impairments
 *
 * P is a decimal in [0, 1]. Counted in gw_dp_stats.impair_*. Private. */
#ifndef GW_IMPAIR_H
#define GW_IMPAIR_H

#include "dp_internal.h"

/* Splits opts: the impair_* keys configure *im (NULL when there are none),
 * every other pair is copied, in order, into *rest (malloc'd; NULL when
 * none is left) for the backend. GW_EINVAL on an unknown impair_* key or a
 * bad value, GW_ENOMEM. */
int gw_impair_split(const char *opts, struct gw_impair **im, char **rest);

/* Gives the held packets back to the backend and frees im (NULL is fine). */
void gw_impair_free(gw_dp *dp, struct gw_impair *im);

/* rx_burst of dp's backend with the impairments applied. */
int gw_impair_rx(gw_dp *dp, gw_pkt **pkts, unsigned n);

/* tx_burst of dp's backend, cut short at a random packet (the rest refused,
 * counted in tx_full) with probability impair_txfull per call. */
int gw_impair_tx(gw_dp *dp, gw_pkt **pkts, unsigned n);

/* How long gw_dp_wait() may sleep: 0 when a held packet is already due,
 * otherwise timeout_us capped at the time the oldest held one falls due. */
unsigned gw_impair_wait_us(gw_dp *dp, unsigned timeout_us);

#endif /* GW_IMPAIR_H */
