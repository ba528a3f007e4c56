/* The RDMA verbs backend's private types: one UD QP per gw_dp, the packet
 * pool under one MR, and the peers (IP:port -> address handle, QPN, Q_Key)
 * resolved through librdmacm's UDP port space (rdma_peers.c). */
#ifndef GW_DP_RDMA_INTERNAL_H
#define GW_DP_RDMA_INTERNAL_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "../dp_internal.h"
#include "rdma_rx.h"

#define RDMA_MTU_MAX 4096u        /* IB's largest MTU: a UD datagram's most */
#define RDMA_PEERS 4096u          /* open addressing; at most half used */
#define RDMA_RESOLVE_MS 2000      /* rdma_cm's address and route timeouts */
#define RDMA_RETRY_NS 200000000ull /* a failed resolution is tried again after */

struct rdma_slot {
	gw_pkt pkt;
	uint32_t refs;            /* the caller's, plus one per posted send */
	struct rdma_slot *next;   /* free list */
};

enum { PEER_EMPTY = 0, PEER_RESOLVING, PEER_READY, PEER_FAILED };

struct rdma_peer {
	uint32_t ip;
	uint16_t port;
	uint8_t state;
	struct ibv_ah *ah;
	uint32_t qpn, qkey;
	struct rdma_cm_id *id;    /* while resolving */
	uint64_t retry_ns;        /* PEER_FAILED: not before */
};

struct rdma_dp {
	struct gw_dp dp;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen;
	struct ibv_context *ctx;  /* the listen id's device */
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t port_num;
	int gid_index;            /* -1: the one rdma_cm chose */
	uint32_t max_inline;
	uint8_t *mem;
	size_t slot_size;
	uint32_t nslots;
	struct rdma_slot *slots, *free_list;
	/* Receive ring: rq_depth buffers posted at all times. */
	uint32_t rq_depth, rq_posted;
	/* Send ring: what each posted send holds (NULL: inline), released
	 * in order when a signalled completion at or after it arrives. */
	uint32_t sq_depth;
	struct rdma_slot **sq;
	uint64_t sq_head, sq_tail; /* posted, completed */
	uint32_t unsignalled;
	struct ibv_send_wr *wr;   /* a burst's chain, up to chain_max */
	struct ibv_recv_wr *rwr;  /* refill's chain */
	struct ibv_sge *sge;      /* either chain's, filled afresh each call */
	uint32_t chain_max;
	char failed[64];          /* a completion error that left the QP unusable */
	struct rdma_peer *peers;
	uint32_t npeers;
	uint32_t resolving;
	uint64_t cm_ns;           /* last look at the CM channel */
	uint32_t polls;           /* rx_burst calls */
	struct ibv_wc *wc;        /* burst */
	struct ibv_wc *stash;     /* burst: found by gw_dp_wait, for rx_burst */
	uint32_t stash_n, stash_at;
};

/* rdma_peers.c */
struct rdma_peer *rdma_peer_get(struct rdma_dp *r, const gw_endpoint *ep, int add);
int rdma_peer_resolve(struct rdma_dp *r, struct rdma_peer *p);
int rdma_cm_poll(struct rdma_dp *r);
void rdma_peers_free(struct rdma_dp *r);

#endif
