/* The reliable stream's receive path (stream.c has the whole design):
 * parsing and acknowledging what arrives, which the sender shares, and
 * the receiver and linger. */
#include <string.h>

#include "stream_internal.h"

/* ---- common receive path ---------------------------------------------------- */

int stream_accept(gw_stream *s, const gw_pkt *p, gw_pkt_hdr *h)
{
	int rc = gw_pkt_parse(p->data, p->len, h);
	if (rc == GW_ECHECKSUM) {
		s->st.corrupt++;
		return 0;
	}
	if (rc < 0) {
		s->st.bad++;
		return 0;
	}
	if (h->job != s->cfg.job) {
		s->st.foreign++;
		return 0;
	}
	if (h->type != GW_PKT_DATA && h->type != GW_PKT_ACK) {
		s->st.bad++;   /* aggregation packets are not a stream's */
		return 0;
	}
	if ((h->flags & GW_PKT_F_FRAME) && !s->cfg.frames) {
		s->st.bad++;   /* payload unchecked, and deliver() would not check it */
		return 0;
	}
	return 1;
}

/* Sends an ACK to `to`; the bitmap (sack_len bytes) from rbits when
 * sack_len > 0. Returns 1 if the device took it. */
static int send_ack(gw_stream *s, const gw_endpoint *to, uint32_t round,
		    uint32_t tensor, uint32_t cum, uint32_t sack_len)
{
	gw_pkt *p;
	if (gw_dp_alloc(s->dp, &p, 1) != 1)
		return 0;
	if (p->room < GW_PKT_HDR_LEN + sack_len)
		sack_len = p->room - GW_PKT_HDR_LEN;
	uint8_t *bm = p->data + GW_PKT_HDR_LEN;
	for (uint32_t j = 0; j < sack_len; j++) {
		/* Bits [cum + 8j, cum + 8j + 8) of the ring. */
		uint32_t b = (cum + 8 * j) & (RCV_RANGE - 1), w = b / 64, o = b % 64;
		uint64_t v = s->rbits[w] >> o;
		if (o > 56)
			v |= s->rbits[(w + 1) % (RCV_RANGE / 64)] << (64 - o);
		bm[j] = (uint8_t)v;
	}
	gw_pkt_hdr h = {.type = GW_PKT_ACK, .sack_len = (uint8_t)sack_len,
			.rank = s->cfg.rank, .job = s->cfg.job, .round = round,
			.tensor = tensor, .chunk = cum, .seq = s->seq++};
	gw_pkt_write(p->data, &h, gw_pkt_payload_hash(bm, sack_len));
	p->len = GW_PKT_HDR_LEN + sack_len;
	p->peer = *to;
	int rc = gw_dp_tx_burst(s->dp, &p, 1);
	gw_dp_free(s->dp, &p, 1);
	if (rc == 1)
		s->st.acks_sent++;
	return rc == 1;
}

static struct done *done_find(gw_stream *s, uint32_t round, uint32_t tensor,
			      uint16_t rank)
{
	for (uint32_t i = 0; i < DONE_HISTORY; i++) {
		struct done *d = &s->done[i];
		if (d->valid && d->round == round && d->tensor == tensor &&
		    d->rank == rank)
			return d;
	}
	return NULL;
}

void stream_other_data(gw_stream *s, const gw_pkt *p, const gw_pkt_hdr *h)
{
	struct done *d = done_find(s, h->round, h->tensor, h->rank);
	if (!d) {
		s->st.stale++;
		return;
	}
	s->st.duplicates++;
	send_ack(s, &p->peer, d->round, d->tensor, d->total, 0);
}

int stream_wait_until(gw_stream *s, uint64_t now, uint64_t until, uint64_t end)
{
	uint64_t t = GW_MIN(until, end);
	uint64_t us = t > now ? (t - now + 999) / 1000 : 0;
	return gw_dp_wait(s->dp, (unsigned)GW_MAX(1u, GW_MIN(us, IDLE_WAIT_US)));
}

/* ---- receiver ------------------------------------------------------------------ */

struct rcv {
	uint32_t round, tensor;
	uint32_t cum, high;      /* high: 1 + highest chunk received */
	uint32_t total;          /* chunks on the wire, once LAST was seen */
	int have_total, locked, empty;
	uint16_t rank;
	gw_endpoint peer;
	uint32_t unacked;
	int ack_now;
	uint64_t ack_due;        /* 0: no delayed ack pending */
	uint32_t delivered;
};

static int rbit(gw_stream *s, uint32_t c)
{
	uint32_t b = c & (RCV_RANGE - 1);
	return (int)(s->rbits[b / 64] >> (b % 64) & 1u);
}

static void rbit_set(gw_stream *s, uint32_t c, int v)
{
	uint32_t b = c & (RCV_RANGE - 1);
	if (v)
		s->rbits[b / 64] |= 1ull << (b % 64);
	else
		s->rbits[b / 64] &= ~(1ull << (b % 64));
}

static int rcv_ack(gw_stream *s, struct rcv *r)
{
	uint32_t sack = 0;
	if (r->high > r->cum)
		sack = GW_MIN((r->high - r->cum + 7) / 8, GW_PKT_SACK_MAX);
	if (!send_ack(s, &r->peer, r->round, r->tensor, r->cum, sack))
		return 0;
	r->unacked = 0;
	r->ack_now = 0;
	r->ack_due = 0;
	return 1;
}

/* One DATA packet of the tensor being received. Returns deliver()'s error
 * to abort, else 0. */
static int rcv_data(gw_stream *s, struct rcv *r, const gw_pkt *p,
		    const gw_pkt_hdr *h, gw_stream_deliver_fn deliver, void *arg)
{
	if (r->locked && h->rank != r->rank) {
		s->st.stale++;   /* another sender's copy of this tensor */
		return 0;
	}
	int frame = (h->flags & GW_PKT_F_FRAME) != 0;
	uint32_t c = h->chunk;
	int last = (h->flags & GW_PKT_F_LAST) != 0;
	if ((r->have_total && (c >= r->total || (last && c + 1 != r->total))) ||
	    (last && !r->have_total && c + 1 < r->high)) {
		s->st.bad++;     /* contradicts the LAST seen, or chunks above it */
		return 0;
	}
	if (!r->locked) {
		r->locked = 1;
		r->rank = h->rank;
	}
	r->peer = p->peer;
	if (c < r->cum || (c - r->cum < RCV_RANGE && rbit(s, c))) {
		s->st.duplicates++;
		r->ack_now = 1;   /* our ACK may have been lost */
		return 0;
	}
	if (c - r->cum >= RCV_RANGE) {
		s->st.stale++;   /* beyond any sender's window */
		return 0;
	}
	uint32_t len = p->len - GW_PKT_HDR_LEN;
	if (len) {
		int rc = deliver(arg, c, p->data + GW_PKT_HDR_LEN, len);
		if (rc == GW_ECHECKSUM && frame) {
			s->st.corrupt++;   /* the frame was damaged on the way */
			return 0;
		}
		if (rc < 0)
			return rc;
		s->st.delivered++;
		r->delivered++;
	} else {
		r->empty = 1;   /* the empty-tensor marker (gw_pkt_parse checked) */
	}
	if (last) {
		r->have_total = 1;
		r->total = c + 1;
		r->ack_now = 1;
	}
	if (c == r->cum) {
		r->cum++;
		while (r->cum < r->high && rbit(s, r->cum)) {
			rbit_set(s, r->cum, 0);
			r->cum++;
		}
	} else {
		rbit_set(s, c, 1);
	}
	r->high = GW_MAX(r->high, c + 1);
	if (r->high > r->cum)
		r->ack_now = 1;   /* a gap: tell the sender at once */
	r->unacked++;
	return 0;
}

int gw_stream_recv(gw_stream *s, uint32_t round, uint32_t tensor,
		   gw_stream_deliver_fn deliver, void *arg)
{
	if (!s || !deliver)
		return GW_ERR(GW_EINVAL);
	uint64_t now = gw_now_ns();
	uint64_t end = now + (uint64_t)s->cfg.timeout_ms * 1000000u;
	struct rcv r = {.round = round, .tensor = tensor};
	memset(s->rbits, 0, sizeof(s->rbits));
	/* Receiving this tensor again: forget that it was finished. */
	for (uint32_t i = 0; i < DONE_HISTORY; i++)
		if (s->done[i].round == round && s->done[i].tensor == tensor)
			s->done[i].valid = 0;

	for (;;) {
		now = gw_now_ns();
		int n = gw_dp_rx_burst(s->dp, s->rx, RX_BURST);
		if (n < 0)
			return n;
		int rc = GW_OK, i = 0;
		for (; i < n && rc >= 0; i++) {
			gw_pkt_hdr h;
			if (!stream_accept(s, s->rx[i], &h))
				continue;
			if (h.type == GW_PKT_ACK)
				s->st.stale++;   /* acknowledges a send of ours that is over */
			else if (h.round != round || h.tensor != tensor)
				stream_other_data(s, s->rx[i], &h);
			else
				rc = rcv_data(s, &r, s->rx[i], &h, deliver, arg);
		}
		if (n > 0)
			gw_dp_free(s->dp, s->rx, (unsigned)n);
		if (rc < 0)
			return rc;

		if (r.have_total && r.cum == r.total) {
			/* The final ACK; a full device queue gets a few more
			 * tries, then the sender's retransmission asks again. */
			for (int k = 0; k < ACK_TRIES && !rcv_ack(s, &r); k++)
				;
			struct done *d = &s->done[s->done_next++ % DONE_HISTORY];
			*d = (struct done){round, tensor, r.total, r.rank, 1};
			return r.empty ? 0 : (int)GW_MIN(r.delivered, (uint32_t)INT32_MAX);
		}
		if (r.unacked && !r.ack_due)
			r.ack_due = now + DELACK_US * 1000u;
		int ack_refused = 0;
		if (r.locked && (r.ack_now || r.unacked >= s->ack_every ||
				 (r.ack_due && now >= r.ack_due)))
			ack_refused = !rcv_ack(s, &r);

		if (now >= end)
			return GW_ERR(GW_ETIMEDOUT);
		if (n == 0 && !ack_refused && r.unacked) {
			/* Nothing more to read: acknowledge before sleeping, as
			 * a backend's wait may oversleep the delayed-ack time. */
			ack_refused = !rcv_ack(s, &r);
		}
		if (n == 0 && !ack_refused) {
			uint64_t until = now + IDLE_WAIT_US * 1000ull;
			rc = stream_wait_until(s, now, until, end);
			if (rc < 0)
				return rc;
		}
	}
}

int gw_stream_linger(gw_stream *s, uint32_t ms)
{
	if (!s)
		return GW_ERR(GW_EINVAL);
	uint64_t now = gw_now_ns(), end = now + (uint64_t)ms * 1000000u;
	while (now < end) {
		int n = gw_dp_rx_burst(s->dp, s->rx, RX_BURST);
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++) {
			gw_pkt_hdr h;
			if (!stream_accept(s, s->rx[i], &h))
				continue;
			if (h.type == GW_PKT_ACK)
				s->st.stale++;
			else
				stream_other_data(s, s->rx[i], &h);
		}
		if (n > 0)
			gw_dp_free(s->dp, s->rx, (unsigned)n);
		else if (stream_wait_until(s, now, end, end) < 0)
			return GW_ERR(GW_EIO);
		now = gw_now_ns();
	}
	return GW_OK;
}
