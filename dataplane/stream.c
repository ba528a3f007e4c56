/* Reliable stream: selective repeat over any dataplane backend.
 *
 * Sender: chunks are filled in order straight into packet buffers (after
 * the 32-byte header) while fewer than `window` are unacknowledged. A chunk
 * is sent once the next one has been filled (or fill() said there is no
 * next), so the last chunk goes out with LAST set. Each packet stays with
 * its slot until acknowledged; every transmission arms a per-chunk deadline
 * (RTO from RFC 6298 estimates, doubled per retransmission of that chunk)
 * and moves the chunk to the tail of the retransmission queue, a list in
 * order of last transmission — O(1) per packet and per acknowledged chunk,
 * where a heap cost a sift each. Deadlines fire only once ACKs have made
 * no progress for an RTO, at most RTO_BURST per timeout, the interval
 * doubling per timeout in a row (RFC 6298 back-off); the timeout scans the
 * queue from its oldest end, as far as chunks sent an RTO ago reach. A SACK showing
 * DUPTHRESH chunks delivered that were first sent after a missing chunk's
 * last transmission retransmits it at once (fast retransmit). Packets the
 * device refuses stay queued, in order, for the next iteration.
 * Retransmissions rewrite only seq and the RETX flag: the checksum is
 * re-sealed from the payload hash kept at fill time, the frame is not
 * touched. With cfg.frames the payload is a self-checked frame (flag
 * FRAME) and is not hashed at all: the receiver's deliver() verifies it.
 *
 * Receiver: a 1024-bit ring of chunks received above the cumulative point;
 * each new chunk is delivered at once, duplicates are dropped. An ACK
 * (cumulative + bitmap) goes out every ACK_EVERY_MAX new chunks, at once
 * on a gap, a duplicate or LAST, before the receiver sleeps with nothing
 * left to read, and otherwise DELACK_US after the first unacknowledged
 * chunk. Done when LAST and every chunk below it are in; the tensor then
 * enters a history whose retransmissions are re-acknowledged by every
 * later call (recv, send, linger).
 *
 * Preallocated at create: slots, transmit queue, receive burst. The
 * loops allocate nothing; an idle loop sleeps in gw_dp_wait().
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream_internal.h"

static uint32_t pow2_above(uint32_t v)
{
	uint32_t r = 1;
	while (r <= v)
		r <<= 1;
	return r;
}

gw_stream *gw_stream_create(gw_dp *dp, const gw_stream_config *cfg)
{
	gw__detail_clear();
	if (!dp || !cfg) {
		gw__detail(GW_EINVAL, "%s: missing", dp ? "cfg" : "dp");
		return NULL;
	}
	gw_stream_config c = *cfg;
	if (!c.window)
		c.window = WINDOW_DEF;
	if (!c.rto_us)
		c.rto_us = RTO_DEF_US;
	if (!c.timeout_ms)
		c.timeout_ms = TIMEOUT_DEF_MS;
	if (c.window > GW_STREAM_WINDOW_MAX) {
		gw__detail(GW_EINVAL, "window: %u, at most %u", c.window, GW_STREAM_WINDOW_MAX);
		return NULL;
	}
	if (gw_dp_payload_max(dp) < GW_PKT_HDR_LEN + 1) {
		gw__detail(GW_EINVAL, "dp: payloads of %u bytes hold no packet header",
			   gw_dp_payload_max(dp));
		return NULL;
	}
	if (gw_stream_wire_register() < 0) {
		gw__detail(GW_EINVAL, "packet types: DATA or ACK registered with other rules");
		return NULL;
	}
	gw_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dp = dp;
	s->cfg = c;
	s->ring = pow2_above(c.window);
	s->ack_every = GW_MAX(1u, GW_MIN(ACK_EVERY_MAX, c.window / 8));
	s->rto_min_ns = (uint64_t)GW_MIN(RTO_MIN_US, c.rto_us) * 1000u;
	s->slots = calloc(s->ring, sizeof(*s->slots));
	s->txq = calloc(s->ring, sizeof(*s->txq));
	s->txc = calloc(s->ring, sizeof(*s->txc));
	s->freeq = calloc(s->ring, sizeof(*s->freeq));
	if (!s->slots || !s->txq || !s->txc || !s->freeq) {
		gw_stream_free(s);
		return NULL;
	}
	s->rq_head = s->rq_tail = NO_POS;
	return s;
}

void gw_stream_free(gw_stream *s)
{
	if (!s)
		return;
	GW_FREE_ALL(s->slots, s->txq, s->txc, s->freeq, s);
}

void gw_stream_stats_get(const gw_stream *s, gw_stream_stats *st)
{
	if (s && st)
		*st = s->st;
}

/* ---- retransmission queue ------------------------------------------------- */

static struct slot *slot_of(gw_stream *s, uint32_t chunk)
{
	return &s->slots[chunk & (s->ring - 1)];
}

/* A chunk's retransmission deadline: RTO doubled per retransmission. */
static uint64_t deadline(const gw_stream *s, const struct slot *sl)
{
	unsigned shift = GW_MIN(sl->tx - 1u, 6u);
	return sl->sent_ns + GW_MIN(s->rto_ns << shift, (uint64_t)RTO_MAX_US * 1000u);
}

static void rq_unlink(gw_stream *s, uint32_t c)
{
	struct slot *sl = slot_of(s, c);
	if (!sl->linked)
		return;
	if (sl->prev != NO_POS)
		slot_of(s, sl->prev)->next = sl->next;
	else
		s->rq_head = sl->next;
	if (sl->next != NO_POS)
		slot_of(s, sl->next)->prev = sl->prev;
	else
		s->rq_tail = sl->prev;
	sl->linked = 0;
}

/* Chunk c was just (re)transmitted: it becomes the newest. */
static void rq_append(gw_stream *s, uint32_t c)
{
	struct slot *sl = slot_of(s, c);
	rq_unlink(s, c);
	sl->prev = s->rq_tail;
	sl->next = NO_POS;
	if (s->rq_tail != NO_POS)
		slot_of(s, s->rq_tail)->next = c;
	else
		s->rq_head = c;
	s->rq_tail = c;
	sl->linked = 1;
	/* A scan's bound covers the chunks it saw, not this one. */
	s->rq_scan_ns = GW_MIN(s->rq_scan_ns, deadline(s, sl));
}

/* The earliest any deadline in the queue can be (UINT64_MAX: empty). The
 * queue is in order of transmission, so the oldest chunk's plain RTO
 * bounds everyone's; a scan that found nothing due raised the bound. */
static uint64_t rq_first_due(const gw_stream *s)
{
	if (s->rq_head == NO_POS)
		return UINT64_MAX;
	const struct slot *sl = &s->slots[s->rq_head & (s->ring - 1)];
	return GW_MAX(sl->sent_ns + s->rto_ns, s->rq_scan_ns);
}

/* ---- sender ------------------------------------------------------------------ */

static void rtt_sample(gw_stream *s, uint64_t r)
{
	if (!s->have_rtt) {
		s->srtt_ns = r;
		s->rttvar_ns = r / 2;
		s->have_rtt = 1;
	} else {
		uint64_t d = s->srtt_ns > r ? s->srtt_ns - r : r - s->srtt_ns;
		s->rttvar_ns = (3 * s->rttvar_ns + d) / 4;
		s->srtt_ns = (7 * s->srtt_ns + r) / 8;
	}
	uint64_t rto = s->srtt_ns + 4 * s->rttvar_ns;
	s->rto_ns = GW_MIN(GW_MAX(rto, s->rto_min_ns), (uint64_t)RTO_MAX_US * 1000u);
	s->rq_scan_ns = 0;   /* deadlines moved */
}

/* Queues chunk c for (re)transmission with a fresh header. */
static void queue_tx(gw_stream *s, uint32_t c)
{
	struct slot *sl = slot_of(s, c);
	rq_unlink(s, c);   /* back in the queue once the device takes it */
	gw_pkt_hdr h = {.type = GW_PKT_DATA,
			.flags = (uint8_t)((sl->last ? GW_PKT_F_LAST : 0) |
					   (sl->tx ? GW_PKT_F_RETX : 0) |
					   (s->cfg.frames ? GW_PKT_F_FRAME : 0)),
			.rank = s->cfg.rank, .job = s->cfg.job, .round = s->round,
			.tensor = s->tensor, .chunk = c, .seq = s->seq++};
	gw_pkt_write(sl->pkt->data, &h, sl->hash);
	sl->pkt->peer = s->to;
	sl->queued = 1;
	/* Chunks numbered from here up are first sent after this packet. */
	sl->mark = s->sent_upto;
	s->txq[s->txq_n] = sl->pkt;
	s->txc[s->txq_n++] = c;
}

static int flush_tx(gw_stream *s, int *refused)
{
	if (!s->txq_n)
		return GW_OK;
	int r = gw_dp_tx_burst(s->dp, s->txq, s->txq_n);
	if (r < 0)
		return r;
	/* Deadlines count from when the device took the packets, not from
	 * the start of the iteration: filling a window of frames and a large
	 * sendmmsg take a good part of a millisecond. */
	uint64_t now = gw_now_ns();
	for (uint32_t i = 0; i < (uint32_t)r; i++) {
		uint32_t c = s->txc[i];
		struct slot *sl = slot_of(s, c);
		sl->queued = 0;
		if (sl->tx++)
			s->st.retransmits++;
		else
			s->st.chunks_sent++;
		sl->sent_ns = now;
		rq_append(s, c);
	}
	/* What the device refused stays queued, in order, for the next
	 * iteration (which first backs off). */
	uint32_t left = s->txq_n - (uint32_t)r;
	if (left) {
		*refused = 1;
		memmove(s->txq, s->txq + r, left * sizeof(*s->txq));
		memmove(s->txc, s->txc + r, left * sizeof(*s->txc));
	}
	s->txq_n = left;
	return GW_OK;
}

/* When the retransmission timer fires: an RTO after the last progress or
 * timeout, doubled per timeout in a row. */
static uint64_t timer_due(const gw_stream *s)
{
	uint64_t rto = GW_MIN(s->rto_ns << GW_MIN(s->backoff, 8u),
			      (uint64_t)RTO_MAX_US * 1000u);
	return s->timer_ns + rto;
}

static void ack_chunk(gw_stream *s, uint32_t c, uint64_t now, uint64_t *sample)
{
	struct slot *sl = slot_of(s, c);
	if (!sl->pkt)
		return;
	if (sl->tx == 1)
		*sample = now - sl->sent_ns;   /* Karn: never from a retransmission */
	s->timer_ns = now;
	s->backoff = 0;
	rq_unlink(s, c);
	if (sl->queued) {
		/* A retransmission the device refused: it is not needed now. */
		for (uint32_t i = 0; i < s->txq_n; i++)
			if (s->txc[i] == c) {
				memmove(s->txq + i, s->txq + i + 1, (s->txq_n - i - 1) * sizeof(*s->txq));
				memmove(s->txc + i, s->txc + i + 1, (s->txq_n - i - 1) * sizeof(*s->txc));
				s->txq_n--;
				break;
			}
		sl->queued = 0;
	}
	s->freeq[s->freeq_n++] = sl->pkt;
	sl->pkt = NULL;
}

static void sender_ack(gw_stream *s, const gw_pkt *p, const gw_pkt_hdr *h,
		       uint64_t now)
{
	if (h->round != s->round || h->tensor != s->tensor) {
		s->st.stale++;
		return;
	}
	if (p->peer.ip != s->to.ip || p->peer.port != s->to.port) {
		s->st.foreign++;
		return;
	}
	uint32_t cum = h->chunk;
	if (cum > s->sent_upto) {
		s->st.bad++;   /* acknowledges chunks never sent */
		return;
	}
	s->st.acks_received++;
	uint64_t sample = 0;
	for (uint32_t c = s->base; c < cum; c++)
		ack_chunk(s, c, now, &sample);
	const uint8_t *bm = p->data + GW_PKT_HDR_LEN;
	for (uint32_t j = 0; j < h->sack_len; j++) {
		if (!bm[j])
			continue;
		for (uint32_t b = 0; b < 8; b++) {
			uint32_t c = cum + 8 * j + b;
			if (!(bm[j] >> b & 1u) || c < s->base || c >= s->sent_upto)
				continue;
			ack_chunk(s, c, now, &sample);
			s->sack_high = GW_MAX(s->sack_high, c + 1);
		}
	}
	if (sample)
		rtt_sample(s, sample);
	while (s->base < s->sent_upto && !slot_of(s, s->base)->pkt)
		s->base++;
}

/* The retransmission timer fired: resends up to RTO_BURST chunks whose
 * deadline passed, oldest transmission first. Chunks sent within the last
 * RTO end the scan (so does everything after them); one whose doubled
 * deadline is still ahead is passed over. If nothing was due, the scan
 * remembers the earliest deadline it saw and is not repeated before it. */
static void sender_timeout(gw_stream *s, uint64_t now)
{
	unsigned k = 0;
	uint64_t next_due = UINT64_MAX;
	uint32_t c = s->rq_head;
	while (c != NO_POS && k < RTO_BURST) {
		struct slot *sl = slot_of(s, c);
		uint32_t nx = sl->next;
		if (sl->sent_ns + s->rto_ns > now) {
			next_due = GW_MIN(next_due, sl->sent_ns + s->rto_ns);
			break;
		}
		uint64_t due = deadline(s, sl);
		if (due <= now) {
			queue_tx(s, c);   /* leaves the queue until it is sent */
			k++;
		} else {
			next_due = GW_MIN(next_due, due);
		}
		c = nx;
	}
	if (k) {
		s->timer_ns = now;
		s->backoff++;   /* doubles until an ACK makes progress */
		s->rq_scan_ns = 0;
	} else {
		s->rq_scan_ns = next_due;
	}
}

static void sender_release(gw_stream *s)
{
	for (uint32_t c = s->base; c < s->next; c++) {
		struct slot *sl = slot_of(s, c);
		if (sl->pkt)
			gw_dp_free(s->dp, &sl->pkt, 1);
		sl->pkt = NULL;
		sl->linked = 0;
		sl->queued = 0;
	}
	s->rq_head = s->rq_tail = NO_POS;
	s->txq_n = 0;
	if (s->spare_n)
		gw_dp_free(s->dp, s->spare, s->spare_n);
	s->spare_n = 0;
}

/* Fills chunks while the window has room; returns GW_E* from fill(). */
static int sender_fill(gw_stream *s, gw_stream_fill_fn fill, void *arg)
{
	while (!s->eof && s->next - s->base <= s->cfg.window) {
		if (!s->spare_n) {
			/* Buffers for the room the window has, in one call. */
			uint32_t want = GW_MIN(s->base + s->cfg.window + 1 - s->next, RX_BURST);
			int got = gw_dp_alloc(s->dp, s->spare, want);
			if (got <= 0)
				break;
			s->spare_n = (uint32_t)got;
		}
		gw_pkt *p = s->spare[--s->spare_n];
		size_t room = GW_MIN((size_t)p->room - GW_PKT_HDR_LEN,
				     (size_t)GW_PKT_PAYLOAD_MAX);
		int n = fill(arg, s->next, p->data + GW_PKT_HDR_LEN, room);
		if (n < 0 || (size_t)n > room) {
			gw_dp_free(s->dp, &p, 1);
			return n < 0 ? n : GW_ERR(GW_ELENGTH);
		}
		if (n == 0) {
			s->eof = 1;
			if (s->next) {
				gw_dp_free(s->dp, &p, 1);
				slot_of(s, s->next - 1)->last = 1;
				break;
			}
			/* The empty tensor: one marker packet, chunk 0, LAST. */
			s->empty = 1;
		} else if (s->next == GW_PKT_CHUNK_LIMIT - 1) {
			gw_dp_free(s->dp, &p, 1);
			return GW_ERR(GW_ERANGE);
		}
		struct slot *sl = slot_of(s, s->next);
		*sl = (struct slot){.pkt = p, .last = (uint8_t)s->eof};
		sl->hash = gw_pkt_payload_seed(s->cfg.frames ? GW_PKT_F_FRAME : 0, 0,
					       p->data + GW_PKT_HDR_LEN, (size_t)n);
		p->len = GW_PKT_HDR_LEN + (uint32_t)n;
		s->next++;
	}
	return GW_OK;
}

int gw_stream_send(gw_stream *s, const gw_endpoint *to, uint32_t round,
		   uint32_t tensor, gw_stream_fill_fn fill, void *arg)
{
	if (!s || !to || !fill)
		return GW_ERR(GW_EINVAL);
	uint64_t start = gw_now_ns();
	uint64_t end = start + (uint64_t)s->cfg.timeout_ms * 1000000u;
	/* RTT estimates carry over between tensors sent to the same place. */
	if (!s->have_rtt || s->to.ip != to->ip || s->to.port != to->port) {
		s->have_rtt = 0;
		s->rto_ns = (uint64_t)s->cfg.rto_us * 1000u;
	}
	s->to = *to;
	s->round = round;
	s->tensor = tensor;
	s->base = s->next = s->sent_upto = 0;
	s->eof = s->empty = 0;
	s->txq_n = s->freeq_n = 0;
	s->rq_head = s->rq_tail = NO_POS;
	s->rq_scan_ns = 0;
	s->timer_ns = 0;
	s->backoff = 0;
	int rc = GW_OK;

	for (;;) {
		uint64_t now = gw_now_ns();
		int progress = 0, refused = 0;

		/* 1. acknowledgements (and re-acks of finished tensors) */
		int n = gw_dp_rx_burst(s->dp, s->rx, RX_BURST);
		if (n < 0) {
			rc = n;
			break;
		}
		s->sack_high = 0;
		for (int i = 0; i < n; i++) {
			gw_pkt_hdr h;
			if (!stream_accept(s, s->rx[i], &h))
				continue;
			if (h.type == GW_PKT_ACK)
				sender_ack(s, s->rx[i], &h, now);
			else
				stream_other_data(s, s->rx[i], &h);
		}
		if (n > 0) {
			gw_dp_free(s->dp, s->rx, (unsigned)n);
			progress = 1;
		}
		if (s->freeq_n) {
			gw_dp_free(s->dp, s->freeq, s->freeq_n);
			s->freeq_n = 0;
		}
		if (s->eof && s->base == s->next) {
			rc = s->empty ? 0 : (int)GW_MIN(s->next, (uint32_t)INT32_MAX);
			break;
		}

		/* 2. fast retransmit: chunks sent after c were delivered, c not */
		if (s->sack_high) {
			for (uint32_t c = s->base; c + 1 < s->sack_high; c++) {
				struct slot *sl = slot_of(s, c);
				if (sl->pkt && !sl->queued && sl->tx &&
				    s->sack_high >= sl->mark + DUPTHRESH)
					queue_tx(s, c);
			}
		}

		/* 3. retransmission deadlines, once ACKs have stopped making
		 * progress for an RTO (RFC 6298 restarts its one timer on
		 * every such ACK): a window of packets sent at once is acked
		 * over the time the receiver takes to drain it, which RTT
		 * samples of its first packets do not show. A timeout resends
		 * the RTO_BURST oldest expired chunks and restarts the timer,
		 * so a receiver that only stalled gets a few duplicates, not
		 * a window of them; SACKs drive the rest. */
		if (rq_first_due(s) <= now && timer_due(s) <= now)
			sender_timeout(s, now);

		/* 4. new chunks; each goes out once its successor is filled */
		rc = sender_fill(s, fill, arg);
		if (rc < 0)
			break;
		/* In flight stays below base + window (the receiver's range). */
		uint32_t ready = s->eof ? s->next : (s->next ? s->next - 1 : 0);
		ready = GW_MIN(ready, s->base + s->cfg.window);
		while (s->sent_upto < ready) {
			s->sent_upto++;
			queue_tx(s, s->sent_upto - 1);
		}

		/* 5. hand the batch to the device */
		if (s->txq_n)
			progress = 1;
		rc = flush_tx(s, &refused);
		if (rc < 0)
			break;

		if (now >= end) {
			rc = GW_ERR(GW_ETIMEDOUT);
			break;
		}
		if (!progress || refused) {
			uint64_t until = s->rq_head != NO_POS
					 ? GW_MAX(rq_first_due(s), timer_due(s))
					 : now + IDLE_WAIT_US * 1000ull;
			if (refused)   /* the device queue is full: back off a little */
				until = now + REFUSED_WAIT_US * 1000ull;
			rc = stream_wait_until(s, now, until, end);
			if (rc < 0)
				break;
		}
	}
	if (s->freeq_n) {
		gw_dp_free(s->dp, s->freeq, s->freeq_n);
		s->freeq_n = 0;
	}
	sender_release(s);
	return rc;
}
