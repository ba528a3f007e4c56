/* Peers of the RDMA backend: a gradwire endpoint IP:port names the UD QP
 * of the gw_dp bound to it, as librdmacm's UDP port space (RDMA_PS_UDP)
 * names it. A sender resolves the address and route, then "connects"
 * (a SIDR request, answered by the peer's listener with its QPN and
 * Q_Key) and keeps an address handle per peer; the listener's side of the
 * same exchange is answered here too. All of it runs on one non-blocking
 * event channel, so resolution never blocks a tx_burst: packets to a peer
 * not yet resolved are refused as a full queue refuses them, and go once
 * it is. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "rdma_internal.h"

static uint32_t peer_hash(uint32_t ip, uint16_t port)
{
	uint64_t k = ((uint64_t)ip << 16 | port) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(k >> 40) & (RDMA_PEERS - 1);
}

struct rdma_peer *rdma_peer_get(struct rdma_dp *r, const gw_endpoint *ep, int add)
{
	for (uint32_t i = peer_hash(ep->ip, ep->port), n = 0; n < RDMA_PEERS;
	     i = (i + 1) & (RDMA_PEERS - 1), n++) {
		struct rdma_peer *p = &r->peers[i];
		if (p->state == PEER_EMPTY) {
			if (!add || r->npeers >= RDMA_PEERS / 2)
				return NULL;
			*p = (struct rdma_peer){.ip = ep->ip, .port = ep->port,
						.state = PEER_FAILED};
			r->npeers++;
			return p;
		}
		if (p->ip == ep->ip && p->port == ep->port)
			return p;
	}
	return NULL;
}

static void to_sin(uint32_t ip, uint16_t port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(ip);
	sa->sin_port = htons(port);
}

static void peer_fail(struct rdma_dp *r, struct rdma_peer *p)
{
	if (p->id) {
		rdma_destroy_id(p->id);
		p->id = NULL;
		r->resolving--;
	}
	p->state = PEER_FAILED;
	p->retry_ns = gw_now_ns() + RDMA_RETRY_NS;
}

int rdma_peer_resolve(struct rdma_dp *r, struct rdma_peer *p)
{
	if (p->state != PEER_FAILED || gw_now_ns() < p->retry_ns)
		return GW_OK;
	struct sockaddr_in src, dst;
	to_sin(r->dp.local.ip, 0, &src);
	to_sin(p->ip, p->port, &dst);
	if (rdma_create_id(r->ec, &p->id, p, RDMA_PS_UDP) < 0) {
		p->id = NULL;
		return GW_ERRF(GW_EIO, "rdma: rdma_create_id: %s", strerror(errno));
	}
	p->state = PEER_RESOLVING;
	r->resolving++;
	if (rdma_resolve_addr(p->id, (struct sockaddr *)&src, (struct sockaddr *)&dst,
			      RDMA_RESOLVE_MS) < 0)
		peer_fail(r, p);
	return GW_OK;
}

/* The peer's SIDR reply: its QPN, Q_Key and the address handle's attributes. */
static void peer_ready(struct rdma_dp *r, struct rdma_peer *p, const struct rdma_ud_param *ud)
{
	struct ibv_ah_attr attr = ud->ah_attr;
	if (r->gid_index >= 0)
		attr.grh.sgid_index = (uint8_t)r->gid_index;
	struct ibv_ah *ah = ibv_create_ah(r->pd, &attr);
	if (!ah) {
		p->state = PEER_FAILED;   /* the id goes once the event is acked */
		return;
	}
	if (p->ah)
		ibv_destroy_ah(p->ah);
	p->ah = ah;
	p->qpn = ud->qp_num;
	p->qkey = ud->qkey;
	/* The id is done with: acked events hold no reference to it. */
	p->state = PEER_READY;
}

/* A listener's connect request: answered with this gw_dp's QP. For UD the
 * request's id carries no connection, so it goes once answered. */
static void answer(struct rdma_dp *r, struct rdma_cm_id *id)
{
	struct rdma_conn_param cp = {.qp_num = r->qp->qp_num};
	if (rdma_accept(id, &cp) < 0)
		rdma_reject(id, NULL, 0);
}

int rdma_cm_poll(struct rdma_dp *r)
{
	struct rdma_cm_event *ev;
	r->cm_ns = gw_now_ns();
	while (rdma_get_cm_event(r->ec, &ev) == 0) {
		struct rdma_cm_id *id = ev->id;
		struct rdma_peer *p = id != r->listen && ev->listen_id == NULL ? id->context : NULL;
		enum rdma_cm_event_type type = ev->event;
		struct rdma_ud_param ud = ev->param.ud;
		int status = ev->status;
		int drop = 0;
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			answer(r, id);
			drop = 1;
		} else if (p && p->id == id) {
			switch (type) {
			case RDMA_CM_EVENT_ADDR_RESOLVED:
				if (rdma_resolve_route(id, RDMA_RESOLVE_MS) < 0)
					p->state = PEER_FAILED;
				break;
			case RDMA_CM_EVENT_ROUTE_RESOLVED: {
				struct rdma_conn_param cp = {.qp_num = r->qp->qp_num};
				if (rdma_connect(id, &cp) < 0)
					p->state = PEER_FAILED;
				break;
			}
			case RDMA_CM_EVENT_ESTABLISHED:
				if (status == 0)
					peer_ready(r, p, &ud);
				else
					p->state = PEER_FAILED;
				break;
			default:   /* ADDR/ROUTE_ERROR, UNREACHABLE, REJECTED */
				p->state = PEER_FAILED;
				break;
			}
		}
		rdma_ack_cm_event(ev);
		if (drop)
			rdma_destroy_id(id);
		if (p && p->id == id && p->state != PEER_RESOLVING) {
			int ok = p->state == PEER_READY;
			rdma_destroy_id(id);
			p->id = NULL;
			r->resolving--;
			if (!ok)
				peer_fail(r, p);
		}
	}
	return errno == EAGAIN || errno == EWOULDBLOCK ? GW_OK
						       : GW_ERRF(GW_EIO, "rdma: rdma_get_cm_event: %s",
								 strerror(errno));
}

void rdma_peers_free(struct rdma_dp *r)
{
	if (!r->peers)
		return;
	for (uint32_t i = 0; i < RDMA_PEERS; i++) {
		struct rdma_peer *p = &r->peers[i];
		if (p->id)
			rdma_destroy_id(p->id);
		if (p->ah)
			ibv_destroy_ah(p->ah);
	}
	free(r->peers);
	r->peers = NULL;
}
