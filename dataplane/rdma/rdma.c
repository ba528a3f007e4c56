/* RDMA verbs backend: one gradwire packet is one UD datagram.
 *
 * UD keeps the invariant every other backend keeps: a packet decodes
 * alone, and a lost one loses one frame, which selective repeat re-sends
 * (reliable mode) or error feedback absorbs (loss-tolerant). RC would turn
 * a loss into a QP error, UC a lost packet into a lost message
 * (docs/dataplane-rdma.md).
 *
 * Open: bind a librdmacm id in the UDP port space to the local IP:port
 * (which picks the device and port that own the IP), one PD, one MR over
 * the whole packet pool, a send CQ, a receive CQ on a completion channel,
 * and a UD QP whose Q_Key is RDMA_UDP_QKEY, the key rdma_cm hands out for
 * that port space. Nothing on the hot path allocates, registers or makes
 * a syscall: sends post work requests (inline when small, a completion
 * asked for every SIGNAL_EVERY), receives poll the CQ and re-post the
 * buffers they hand up; only gw_dp_wait sleeps, on the completion channel
 * and the CM channel together.
 *
 * A datagram carries no port of its own: each send is SEND_WITH_IMM, the
 * immediate being the sender's port, and the receiver takes the sender's
 * IP from the GRH (docs/wire-format.md, "RDMA UD framing").
 *
 * Options ("key=value,..."):
 *   dev=NAME        fail unless the local IP is on this device (rxe0, mlx5_0)
 *   port=N          and on this port of it
 *   gid_index=N     source GID index of every address handle (default:
 *                   the one rdma_cm picks, the RoCEv2 GID of the local IP)
 *   payload=N       largest packet, 64 .. the active path MTU (default the
 *                   path MTU: 256 .. 4096)
 *   rq=N, sq=N      receive and send queue depths (default 512, 512) */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdma_internal.h"

#define SIGNAL_EVERY 16u
#define INLINE_WANT 256u
#define CM_LOOK_NS 1000000ull   /* a busy receiver still answers peers this often */
#define CM_LOOK_POLLS 64u

struct rdma_opts {
	char dev[64];
	int port, gid_index;
	uint32_t payload, rq, sq;
};

static int num(const char *val, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(val, &end, 10);
	if (!*val || *end || *val == '-' || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int rdma_opt(void *arg, const char *key, const char *val)
{
	struct rdma_opts *o = arg;
	unsigned long v;
	if (!strcmp(key, "dev")) {
		if (!*val || strlen(val) >= sizeof(o->dev))
			return GW_ERRF(GW_EINVAL, "rdma: dev=%s: not a device name", val);
		strcpy(o->dev, val);
	} else if (!strcmp(key, "port")) {
		if (num(val, 1, 255, &v))
			return GW_ERRF(GW_EINVAL, "rdma: port=%s: not a port number 1..255", val);
		o->port = (int)v;
	} else if (!strcmp(key, "gid_index")) {
		if (num(val, 0, 255, &v))
			return GW_ERRF(GW_EINVAL, "rdma: gid_index=%s: not in 0..255", val);
		o->gid_index = (int)v;
	} else if (!strcmp(key, "payload")) {
		if (num(val, 64, 4096, &v))
			return GW_ERRF(GW_EINVAL, "rdma: payload=%s: not in 64..4096", val);
		o->payload = (uint32_t)v;
	} else if (!strcmp(key, "rq") || !strcmp(key, "sq")) {
		if (num(val, 16, 65536, &v))
			return GW_ERRF(GW_EINVAL, "rdma: %s=%s: not in 16..65536", key, val);
		*(key[0] == 'r' ? &o->rq : &o->sq) = (uint32_t)v;
	} else {
		return GW_ERRF(GW_EINVAL, "rdma: option '%s' not understood (dev, port, "
			       "gid_index, payload, rq, sq)", key);
	}
	return GW_OK;
}

static void rdma_close(gw_dp *dp)
{
	struct rdma_dp *r = (struct rdma_dp *)dp;
	rdma_peers_free(r);
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->scq)
		ibv_destroy_cq(r->scq);
	if (r->rcq)
		ibv_destroy_cq(r->rcq);
	if (r->chan)
		ibv_destroy_comp_channel(r->chan);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->listen)
		rdma_destroy_id(r->listen);
	if (r->ec)
		rdma_destroy_event_channel(r->ec);
	GW_FREE_ALL(r->mem, r->slots, r->sq, r->wr, r->rwr, r->sge, r->wc, r->stash, r);
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 0;
}

/* Why no device can be opened, in words: this host's kernel may have no
 * RDMA at all (ibv_get_device_list() fails with ENOSYS). */
static int no_device(const gw_endpoint *local)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	int e = errno;
	if (l)
		ibv_free_device_list(l);
	char ep[40];
	gw_endpoint_format(local, ep, sizeof(ep));
	if (!l)
		return GW_ERRF(GW_EIO, "rdma: no RDMA devices (ibv_get_device_list: %s%s)",
			       strerror(e), e == ENOSYS ? ": this kernel has no RDMA; "
			       "scripts/rdma-vm.sh runs commands in a guest with soft-RoCE" : "");
	if (!n)
		return GW_ERRF(GW_EIO, "rdma: no RDMA devices");
	return GW_ERRF(GW_EIO, "rdma: no RDMA device has the address %s (bind it to the "
		       "IP of a RoCE netdev or an IPoIB interface)", ep);
}

static int setup_qp(struct rdma_dp *r)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = r->scq, .recv_cq = r->rcq, .qp_type = IBV_QPT_UD,
		.cap = {.max_send_wr = r->sq_depth, .max_recv_wr = r->rq_depth,
			.max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = INLINE_WANT},
		.sq_sig_all = 0};
	r->qp = ibv_create_qp(r->pd, &ia);
	if (!r->qp) {   /* a device without inline sends */
		ia.cap.max_inline_data = 0;
		r->qp = ibv_create_qp(r->pd, &ia);
	}
	if (!r->qp)
		return GW_ERRF(GW_EIO, "rdma: ibv_create_qp (UD, %u/%u WRs): %s",
			       r->sq_depth, r->rq_depth, strerror(errno));
	r->max_inline = ia.cap.max_inline_data;
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0,
				.port_num = r->port_num, .qkey = RDMA_UDP_QKEY};
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_QKEY))
		return GW_ERRF(GW_EIO, "rdma: QP to INIT: %s", strerror(errno));
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR};
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE))
		return GW_ERRF(GW_EIO, "rdma: QP to RTR: %s", strerror(errno));
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .sq_psn = 0};
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return GW_ERRF(GW_EIO, "rdma: QP to RTS: %s", strerror(errno));
	return GW_OK;
}

static struct rdma_slot *slot_get(struct rdma_dp *r)
{
	struct rdma_slot *s = r->free_list;
	if (s) {
		r->free_list = s->next;
		s->refs = 1;
		s->pkt.len = 0;
		s->pkt.room = r->dp.payload_max;
	}
	return s;
}

static void slot_put(struct rdma_dp *r, struct rdma_slot *s)
{
	if (--s->refs)
		return;
	s->next = r->free_list;
	r->free_list = s;
}

/* Keeps the receive ring full, posting what is missing as one chain (the
 * send chain's SGE array, which tx_burst fills afresh each call); a buffer
 * the pool cannot give now is posted by a later call. */
static int refill(struct rdma_dp *r)
{
	struct ibv_recv_wr *wr = r->rwr;
	for (;;) {
		uint32_t k = 0, want = GW_MIN(r->rq_depth - r->rq_posted, r->chain_max);
		for (; k < want; k++) {
			struct rdma_slot *s = slot_get(r);
			if (!s)
				break;
			r->sge[k] = (struct ibv_sge){
				.addr = (uintptr_t)(s->pkt.data - RDMA_GRH_LEN),
				.length = RDMA_GRH_LEN + RDMA_MTU_MAX, .lkey = r->mr->lkey};
			wr[k] = (struct ibv_recv_wr){.wr_id = (uintptr_t)s, .sg_list = &r->sge[k],
						     .num_sge = 1};
			if (k)
				wr[k - 1].next = &wr[k];
		}
		if (!k)
			return GW_OK;
		struct ibv_recv_wr *bad = NULL;
		uint32_t posted = k;
		if (ibv_post_recv(r->qp, wr, &bad))
			posted = bad ? (uint32_t)(bad - wr) : 0;
		r->rq_posted += posted;
		for (uint32_t i = posted; i < k; i++)
			slot_put(r, (struct rdma_slot *)(uintptr_t)wr[i].wr_id);
		if (posted < k)
			return GW_ERRF(GW_EIO, "rdma: ibv_post_recv failed");
		if (k < want)
			return GW_OK;   /* the pool is dry */
	}
}

static int rdma_open(const gw_dp_config *cfg, gw_dp **out)
{
	struct rdma_opts o = {.gid_index = -1, .rq = 512, .sq = 512};
	int rc = gw_dp_opts_each(cfg->opts, rdma_opt, &o);
	if (rc < 0)
		return rc;
	if (!cfg->local.ip)
		return GW_ERRF(GW_EINVAL, "rdma: the local address must be an IP of an RDMA "
			       "device, not 0.0.0.0");
	struct rdma_dp *r = calloc(1, sizeof(*r));
	if (!r)
		return GW_ERR(GW_ENOMEM);
	r->gid_index = o.gid_index;
	r->ec = rdma_create_event_channel();
	if (!r->ec) {
		rc = no_device(&cfg->local);
		goto fail;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(cfg->local.ip),
				 .sin_port = htons(cfg->local.port)};
	if (rdma_create_id(r->ec, &r->listen, NULL, RDMA_PS_UDP) < 0) {
		r->listen = NULL;
		rc = no_device(&cfg->local);
		goto fail;
	}
	if (rdma_bind_addr(r->listen, (struct sockaddr *)&sa) < 0 || !r->listen->verbs) {
		char ep[40];
		gw_endpoint_format(&cfg->local, ep, sizeof(ep));
		rc = errno == EADDRINUSE ? GW_ERRF(GW_EIO, "rdma: %s is taken", ep)
					 : no_device(&cfg->local);
		goto fail;
	}
	r->ctx = r->listen->verbs;
	r->port_num = r->listen->port_num;
	const char *dev = ibv_get_device_name(r->ctx->device);
	if ((o.dev[0] && strcmp(o.dev, dev)) || (o.port && o.port != r->port_num)) {
		char ep[40];
		gw_endpoint_format(&cfg->local, ep, sizeof(ep));
		rc = GW_ERRF(GW_EINVAL, "rdma: %s is on %s port %u, not %s port %d", ep, dev,
			     r->port_num, o.dev[0] ? o.dev : dev, o.port ? o.port : r->port_num);
		goto fail;
	}
	struct ibv_port_attr pa;
	if (ibv_query_port(r->ctx, r->port_num, &pa)) {
		rc = GW_ERRF(GW_EIO, "rdma: ibv_query_port %s/%u: %s", dev, r->port_num,
			     strerror(errno));
		goto fail;
	}
	uint32_t mtu = mtu_bytes(pa.active_mtu);
	if (pa.state != IBV_PORT_ACTIVE || !mtu) {
		rc = GW_ERRF(GW_EIO, "rdma: %s port %u is not active", dev, r->port_num);
		goto fail;
	}
	if (o.payload > mtu) {
		rc = GW_ERRF(GW_EINVAL, "rdma: payload=%u: above %s's active path MTU %u",
			     o.payload, dev, mtu);
		goto fail;
	}
	r->dp.payload_max = o.payload ? o.payload : mtu;
	r->dp.burst = cfg->burst ? cfg->burst : 32;
	struct ibv_device_attr da;
	if (ibv_query_device(r->ctx, &da)) {
		rc = GW_ERRF(GW_EIO, "rdma: ibv_query_device %s: %s", dev, strerror(errno));
		goto fail;
	}
	r->rq_depth = GW_MIN(o.rq, (uint32_t)da.max_qp_wr);
	r->sq_depth = GW_MIN(o.sq, (uint32_t)da.max_qp_wr);
	/* The caller's packets, the receive ring, a burst in hand. */
	r->nslots = (cfg->pool ? cfg->pool : 4096) + r->rq_depth + r->dp.burst;
	/* Receive buffers hold IB's largest MTU whatever payload= says: a UD
	 * datagram longer than its buffer completes with a length error, and
	 * rxe then takes the QP to the error state (tests/rdma/
	 * test_rdma_hostile.c saw it stop receiving), so one datagram could
	 * silence a gw_dp. Longer than payload_max is dropped in rx_burst. */
	r->slot_size = (RDMA_GRH_LEN + RDMA_MTU_MAX + 63) & ~(size_t)63;
	r->slots = calloc(r->nslots, sizeof(*r->slots));
	r->sq = calloc(r->sq_depth, sizeof(*r->sq));
	r->chain_max = r->sq_depth;
	r->wr = calloc(r->chain_max, sizeof(*r->wr));
	r->rwr = calloc(r->chain_max, sizeof(struct ibv_recv_wr));
	r->sge = calloc(r->chain_max, sizeof(*r->sge));
	r->wc = calloc(GW_MAX(r->dp.burst, SIGNAL_EVERY), sizeof(*r->wc));
	r->stash = calloc(r->dp.burst, sizeof(*r->stash));
	r->peers = calloc(RDMA_PEERS, sizeof(*r->peers));
	if (posix_memalign((void **)&r->mem, 4096, r->slot_size * r->nslots))
		r->mem = NULL;
	if (!r->slots || !r->sq || !r->wr || !r->rwr || !r->sge || !r->wc || !r->stash || !r->peers || !r->mem) {
		rc = GW_ERR(GW_ENOMEM);
		goto fail;
	}
	for (uint32_t i = r->nslots; i-- > 0;) {
		struct rdma_slot *s = &r->slots[i];
		s->pkt.data = r->mem + (size_t)i * r->slot_size + RDMA_GRH_LEN;
		s->pkt.priv = s;
		s->next = r->free_list;
		r->free_list = s;
	}
	r->pd = ibv_alloc_pd(r->ctx);
	r->mr = r->pd ? ibv_reg_mr(r->pd, r->mem, r->slot_size * r->nslots,
				   IBV_ACCESS_LOCAL_WRITE) : NULL;
	r->chan = ibv_create_comp_channel(r->ctx);
	r->scq = ibv_create_cq(r->ctx, (int)r->sq_depth, NULL, NULL, 0);
	r->rcq = r->chan ? ibv_create_cq(r->ctx, (int)r->rq_depth, NULL, r->chan, 0) : NULL;
	if (!r->pd || !r->mr || !r->chan || !r->scq || !r->rcq) {
		rc = GW_ERRF(GW_EIO, "rdma: %s: %s on %s", !r->pd ? "ibv_alloc_pd" :
			     !r->mr ? "ibv_reg_mr" : !r->chan ? "ibv_create_comp_channel" :
			     "ibv_create_cq", strerror(errno), dev);
		goto fail;
	}
	if ((rc = setup_qp(r)) < 0 || (rc = refill(r)) < 0)
		goto fail;
	if (rdma_listen(r->listen, 64) < 0) {
		rc = GW_ERRF(GW_EIO, "rdma: rdma_listen: %s", strerror(errno));
		goto fail;
	}
	/* Non-blocking channels: a look at either never sleeps. */
	if (fcntl(r->ec->fd, F_SETFL, fcntl(r->ec->fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    fcntl(r->chan->fd, F_SETFL, fcntl(r->chan->fd, F_GETFL) | O_NONBLOCK) < 0) {
		rc = GW_ERRF(GW_EIO, "rdma: fcntl: %s", strerror(errno));
		goto fail;
	}
	r->dp.local = cfg->local;
	r->dp.local.port = ntohs(rdma_get_src_port(r->listen));
	*out = &r->dp;
	return GW_OK;
fail:
	rdma_close(&r->dp);
	return rc;
}

static int rdma_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct rdma_dp *r = (struct rdma_dp *)dp;
	unsigned i = 0;
	for (struct rdma_slot *s; i < n && (s = slot_get(r)); i++)
		pkts[i] = &s->pkt;
	return (int)i;
}

static void rdma_free(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct rdma_dp *r = (struct rdma_dp *)dp;
	for (unsigned i = 0; i < n; i++)
		slot_put(r, pkts[i]->priv);
}

/* Send completions: a signalled one means every send before it is done. */
static int reap(struct rdma_dp *r)
{
	int n = ibv_poll_cq(r->scq, (int)SIGNAL_EVERY, r->wc);
	for (int i = 0; i < n; i++) {
		if (r->wc[i].status != IBV_WC_SUCCESS) {
			snprintf(r->failed, sizeof(r->failed), "send completion: %s",
				 ibv_wc_status_str(r->wc[i].status));
			return GW_ERRF(GW_EIO, "rdma: %s", r->failed);
		}
		uint64_t upto = r->wc[i].wr_id;
		for (; r->sq_tail <= upto; r->sq_tail++) {
			struct rdma_slot **s = &r->sq[r->sq_tail % r->sq_depth];
			if (*s)
				slot_put(r, *s);
			*s = NULL;
		}
	}
	return n < 0 ? GW_ERRF(GW_EIO, "rdma: ibv_poll_cq (send)") : GW_OK;
}

static int rdma_tx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct rdma_dp *r = (struct rdma_dp *)dp;
	if (r->failed[0])
		return GW_ERRF(GW_EIO, "rdma: the QP failed earlier (%s)", r->failed);
	if (r->resolving && gw_now_ns() - r->cm_ns >= CM_LOOK_NS / 10) {
		int rc = rdma_cm_poll(r);
		if (rc < 0)
			return rc;
	}
	/* The burst's sends go in one chained ibv_post_send: one doorbell
	 * (on rxe, one system call) per burst rather than per packet. */
	n = GW_MIN(n, r->chain_max);
	unsigned k = 0;
	int rc = GW_OK;
	for (; k < n; k++) {
		gw_pkt *p = pkts[k];
		struct rdma_peer *peer = rdma_peer_get(r, &p->peer, 1);
		if (!peer) {
			char ep[40];
			gw_endpoint_format(&p->peer, ep, sizeof(ep));
			rc = GW_ERRF(GW_ENOMEM, "rdma: more than %u peers (sending to %s)",
				     RDMA_PEERS / 2, ep);
			break;
		}
		if (peer->state != PEER_READY) {
			rc = rdma_peer_resolve(r, peer);
			break;   /* refused until resolved, as by a full queue */
		}
		if (r->sq_head + k - r->sq_tail >= r->sq_depth) {
			if ((rc = reap(r)) < 0 || r->sq_head + k - r->sq_tail >= r->sq_depth)
				break;
		}
		if (p->len > dp->payload_max || !p->len) {
			rc = GW_ERRF(GW_EINVAL, "rdma: a packet of %u bytes (1..%u)", p->len,
				     dp->payload_max);
			break;
		}
		int inl = p->len <= r->max_inline;
		/* Signalled every SIGNAL_EVERY and when the ring is about full,
		 * so a reap always finds one. */
		int sig = ++r->unsignalled >= SIGNAL_EVERY ||
			  r->sq_head + k - r->sq_tail + 1 >= r->sq_depth;
		if (sig)
			r->unsignalled = 0;
		r->sge[k] = (struct ibv_sge){.addr = (uintptr_t)p->data, .length = p->len,
					     .lkey = r->mr->lkey};
		r->wr[k] = (struct ibv_send_wr){
			.wr_id = r->sq_head + k, .sg_list = &r->sge[k], .num_sge = 1,
			.opcode = IBV_WR_SEND_WITH_IMM,
			.send_flags = (inl ? IBV_SEND_INLINE : 0) | (sig ? IBV_SEND_SIGNALED : 0),
			.imm_data = htonl(dp->local.port),
			.wr.ud = {.ah = peer->ah, .remote_qpn = peer->qpn,
				  .remote_qkey = peer->qkey}};
		if (k)
			r->wr[k - 1].next = &r->wr[k];
	}
	unsigned sent = k;
	struct ibv_send_wr *bad = NULL;
	if (k && ibv_post_send(r->qp, r->wr, &bad)) {
		/* Those from bad on were not posted: refused, as by a full
		 * queue; the next send is signalled in case bad was. */
		sent = bad ? (unsigned)(bad - r->wr) : 0;
		r->unsignalled = SIGNAL_EVERY;
	}
	for (unsigned i = 0; i < sent; i++) {
		gw_pkt *p = pkts[i];
		int inl = r->wr[i].send_flags & IBV_SEND_INLINE;
		struct rdma_slot *sl = p->priv;
		r->sq[r->sq_head % r->sq_depth] = inl ? NULL : sl;
		if (!inl)
			sl->refs++;
		r->sq_head++;
		dp->stats.tx_bytes += p->len;
	}
	dp->stats.tx_pkts += sent;
	if (!sent && rc < 0)
		return rc;
	dp->stats.tx_full += n - sent;
	if (r->sq_head - r->sq_tail > r->sq_depth / 2)
		reap(r);
	return (int)sent;
}

/* A receive that completed in error: where the device took the QP to the
 * error state with it, nothing arrives any more, which must be said rather
 * than waited out. A syscall, but only on this path. */
static void rx_error(struct rdma_dp *r, enum ibv_wc_status st)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	if (!r->failed[0] && (ibv_query_qp(r->qp, &a, IBV_QP_STATE, &ia) || a.qp_state == IBV_QPS_ERR))
		snprintf(r->failed, sizeof(r->failed), "receive completion: %s",
			 ibv_wc_status_str(st));
}

static int rdma_rx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct rdma_dp *r = (struct rdma_dp *)dp;
	n = GW_MIN(n, dp->burst);
	struct ibv_wc *wcs = r->wc;
	int got;
	if (r->stash_n) {   /* what gw_dp_wait found after arming the CQ */
		got = (int)GW_MIN(n, r->stash_n - r->stash_at);
		wcs = r->stash + r->stash_at;
		r->stash_at += (uint32_t)got;
		if (r->stash_at == r->stash_n)
			r->stash_n = r->stash_at = 0;
	} else {
		got = ibv_poll_cq(r->rcq, (int)n, r->wc);
	}
	if (got < 0)
		return GW_ERRF(GW_EIO, "rdma: ibv_poll_cq (receive)");
	if (!got && r->failed[0])
		return GW_ERRF(GW_EIO, "rdma: the QP failed (%s): nothing more arrives", r->failed);
	unsigned k = 0;
	for (int i = 0; i < got; i++) {
		struct ibv_wc *wc = &wcs[i];
		struct rdma_slot *s = (struct rdma_slot *)(uintptr_t)wc->wr_id;
		r->rq_posted--;
		rdma_rx_wc in = {.ok = wc->status == IBV_WC_SUCCESS,
				 .grh = !!(wc->wc_flags & IBV_WC_GRH),
				 .imm = !!(wc->wc_flags & IBV_WC_WITH_IMM),
				 .byte_len = wc->byte_len, .imm_data = wc->imm_data};
		gw_pkt *p = &s->pkt;
		uint32_t len;
		if (rdma_rx_classify(&in, p->data - RDMA_GRH_LEN, dp->payload_max, &p->peer,
				     &len) < 0) {
			/* Not one of ours; a flush is the QP going down. */
			if (wc->status != IBV_WC_WR_FLUSH_ERR)
				dp->stats.rx_bad++;
			if (wc->status != IBV_WC_SUCCESS && wc->status != IBV_WC_WR_FLUSH_ERR)
				rx_error(r, wc->status);
			slot_put(r, s);
			continue;
		}
		p->len = len;
		dp->stats.rx_bytes += p->len;
		pkts[k++] = p;
	}
	dp->stats.rx_pkts += k;
	int rc = refill(r);
	/* Peers' resolutions are answered even while packets keep coming;
	 * the clock is read every CM_LOOK_POLLS calls only, as a
	 * busy-polling caller would otherwise read it once per call. */
	if (rc == GW_OK && !(++r->polls % CM_LOOK_POLLS) && gw_now_ns() - r->cm_ns >= CM_LOOK_NS)
		rc = rdma_cm_poll(r);   /* answer peers' resolutions while busy */
	if (rc < 0 && !k)
		return rc;
	return (int)k;
}

/* Sleeps on the receive CQ's channel and the CM channel until either has
 * something or timeout_us passed. Arming the CQ first, then polling it
 * once more, closes the race with a completion that came in between. */
static int rdma_wait(gw_dp *dp, unsigned timeout_us)
{
	struct rdma_dp *r = (struct rdma_dp *)dp;
	dp->stats.idle_waits++;
	if (r->stash_n)
		return GW_OK;
	if (ibv_req_notify_cq(r->rcq, 0))
		return GW_ERRF(GW_EIO, "rdma: ibv_req_notify_cq");
	/* A completion that came before the CQ was armed raises no event:
	 * look once more, and keep what is found for the next rx_burst. */
	int n = ibv_poll_cq(r->rcq, (int)dp->burst, r->stash);
	if (n != 0) {
		r->stash_n = n > 0 ? (uint32_t)n : 0;
		return n > 0 ? GW_OK : GW_ERRF(GW_EIO, "rdma: ibv_poll_cq (receive)");
	}
	struct pollfd pfd[2] = {{.fd = r->chan->fd, .events = POLLIN},
				{.fd = r->ec->fd, .events = POLLIN}};
	struct timespec ts = {.tv_sec = timeout_us / 1000000u,
			      .tv_nsec = (long)(timeout_us % 1000000u) * 1000};
	int rc = ppoll(pfd, 2, &ts, NULL);
	if (rc < 0 && errno != EINTR)
		return GW_ERRF(GW_EIO, "rdma: ppoll: %s", strerror(errno));
	if (rc > 0 && (pfd[0].revents & POLLIN)) {
		struct ibv_cq *cq;
		void *ctx;
		if (ibv_get_cq_event(r->chan, &cq, &ctx) == 0)
			ibv_ack_cq_events(cq, 1);
	}
	if (rc > 0 && (pfd[1].revents & POLLIN))
		return rdma_cm_poll(r);
	return GW_OK;
}

/* gw_dp_regions(): the slots' one allocation, the memory the MR covers. */
static int rdma_regions(gw_dp *dp, gw_dp_region *r, unsigned max)
{
	struct rdma_dp *d = (struct rdma_dp *)dp;
	if (max)
		r[0] = (gw_dp_region){d->mem, d->slot_size * d->nslots};
	return 1;
}

/* gw_dp_dmabuf(): a registration of no buffer (fd -1). A kernel or
 * provider without dma-buf support refuses the call itself; one with it
 * gets as far as the descriptor. soft-RoCE (rxe) has none. */
static int rdma_dmabuf(gw_dp *dp)
{
	struct rdma_dp *d = (struct rdma_dp *)dp;
	const char *dev = d->ctx ? ibv_get_device_name(d->ctx->device) : "?";
	errno = 0;
	struct ibv_mr *mr = ibv_reg_dmabuf_mr(d->pd, 0, 0, 0, -1, IBV_ACCESS_LOCAL_WRITE);
	int e = errno;
	if (mr) {   /* not expected of fd -1; whatever it is, it is not kept */
		ibv_dereg_mr(mr);
		return 1;
	}
	if (e == EOPNOTSUPP || e == EPROTONOSUPPORT || e == ENOSYS || e == 0) {
		gw__detail(GW_OK, "dma-buf: %s does not register dma-buf memory (%s)", dev,
			   e ? strerror(e) : "refused");
		return 0;
	}
	return 1;
}

/* Global, not static: linkers of the static archive name it (-u). */
const struct gw_dp_ops gw_dp_rdma_ops = {
	.name = "rdma",
	.open = rdma_open,
	.close = rdma_close,
	.alloc = rdma_alloc,
	.free = rdma_free,
	.tx_burst = rdma_tx_burst,
	.rx_burst = rdma_rx_burst,
	.wait = rdma_wait,
	.regions = rdma_regions,
	.dmabuf = rdma_dmabuf,
};
GW_DP_BACKEND(gw_dp_rdma_ops)
