/* The collective harnesses' fake dataplane, input reader and seals
 * (fuzz_coll.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "coll_internal.h"
#include "dp_internal.h"
#include "fuzz_coll.h"
#include "fuzz_common.h"

/* ---- reading the input ------------------------------------------------- */

uint8_t fc_u8(struct fc_in *in)
{
	if (!in->n) {
		in->over = 1;
		return 0;
	}
	in->n--;
	return *in->p++;
}

uint16_t fc_u16(struct fc_in *in)
{
	uint16_t lo = fc_u8(in);
	return (uint16_t)(lo | fc_u8(in) << 8);
}

uint32_t fc_u32(struct fc_in *in)
{
	uint32_t lo = fc_u16(in);
	return lo | (uint32_t)fc_u16(in) << 16;
}

void fc_bytes(struct fc_in *in, uint8_t *dst, size_t len)
{
	size_t n = len < in->n ? len : in->n;
	memcpy(dst, in->p, n);
	memset(dst + n, 0, len - n);
	in->p += n;
	in->n -= n;
	if (n < len)
		in->over = 1;
}

/* ---- packets ----------------------------------------------------------- */

gw_pkt *fc_pkt_new(uint32_t len)
{
	gw_pkt *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->data = malloc(len ? len : 1);
	if (!p->data) {
		free(p);
		return NULL;
	}
	p->room = len;
	return p;
}

void fc_pkt_free(gw_pkt *p)
{
	if (p) {
		free(p->data);
		free(p);
	}
}

/* ---- the fake dataplane ------------------------------------------------ */

struct fc_rxq {
	gw_pkt *p;
	int tag;
};

struct fc_dp {
	struct gw_dp dp;        /* first: the library sees a gw_dp */
	struct fc_hooks h;
	uint32_t live;          /* packets allocated from this dataplane now */
	uint32_t stall;         /* tx_bursts still to refuse */
	uint64_t sent;
	struct fc_rxq *q;       /* receive queue: q[head .. n) wait */
	uint32_t head, n, cap;
};

static struct fc_dp *fake(gw_dp *dp)
{
	return (struct fc_dp *)dp;
}

static int fake_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct fc_dp *d = fake(dp);
	unsigned i = 0;
	for (; i < n && (!d->h.pool || d->live < d->h.pool); i++) {
		if (!(pkts[i] = fc_pkt_new(dp->payload_max)))
			break;
		d->live++;
	}
	return (int)i;
}

static void fake_free(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct fc_dp *d = fake(dp);
	for (unsigned i = 0; i < n; i++) {
		GW_FUZZ_CHECKF(pkts[i] && d->live, "gw_dp_free of a packet not allocated");
		fc_pkt_free(pkts[i]);
		d->live--;
	}
}

static int fake_tx(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct fc_dp *d = fake(dp);
	if (d->stall && n) {
		d->stall--;
		return 0;
	}
	if (d->h.tx_max && n > d->h.tx_max)
		n = d->h.tx_max;
	for (unsigned i = 0; i < n; i++) {
		GW_FUZZ_CHECKF(pkts[i]->len <= pkts[i]->room && pkts[i]->len <= dp->payload_max,
			       "tx of %u bytes in a packet of %u", pkts[i]->len, pkts[i]->room);
		d->sent++;
		d->h.on_tx(dp, pkts[i]);
	}
	return (int)n;
}

static int fake_rx(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct fc_dp *d = fake(dp);
	if (d->h.on_poll)
		d->h.on_poll(dp);
	unsigned i = 0;
	for (; i < n && d->head < d->n; i++) {
		struct fc_rxq e = d->q[d->head++];
		pkts[i] = e.p;
		d->live++;   /* the receiver frees it */
		if (d->h.on_rx)
			d->h.on_rx(dp, e.p, e.tag);
	}
	if (d->head == d->n)
		d->head = d->n = 0;
	return (int)i;
}

static int fake_wait(gw_dp *dp, unsigned timeout_us)
{
	struct fc_dp *d = fake(dp);
	if (d->h.on_wait)
		d->h.on_wait(dp, timeout_us);
	return GW_OK;
}

/* The fake's packets come from malloc, one by one: one region spanning
 * the address space stands for "all of them", which the emulated
 * executor maps onto itself (a frame outside it would still be refused). */
static int fake_regions(gw_dp *dp, gw_dp_region *r, unsigned max)
{
	if (!fake(dp)->h.regions)
		return GW_EUNSUPPORTED;
	if (max)
		r[0] = (gw_dp_region){(void *)(uintptr_t)4096, (SIZE_MAX >> 1) - 4096};
	return 1;
}

static void fake_close(gw_dp *dp)
{
	(void)dp;
}

static const struct gw_dp_ops fake_ops = {
	.name = "fuzz",
	.close = fake_close,
	.alloc = fake_alloc,
	.free = fake_free,
	.tx_burst = fake_tx,
	.rx_burst = fake_rx,
	.wait = fake_wait,
	.regions = fake_regions,
};

gw_dp *fc_dp_new(const gw_endpoint *local, uint32_t payload_max,
		 const struct fc_hooks *hooks)
{
	struct fc_dp *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->dp.ops = &fake_ops;
	d->dp.local = *local;
	d->dp.payload_max = payload_max;
	d->dp.burst = COLL_RX_BURST;
	d->h = *hooks;
	return &d->dp;
}

void fc_dp_delete(gw_dp *dp)
{
	if (!dp)
		return;
	struct fc_dp *d = fake(dp);
	for (uint32_t i = d->head; i < d->n; i++)
		fc_pkt_free(d->q[i].p);
	free(d->q);
	GW_FUZZ_CHECKF(d->live == 0, "%u packets never came back to the dataplane", d->live);
	free(d);
}

void *fc_dp_arg(gw_dp *dp)
{
	return fake(dp)->h.arg;
}

uint64_t fc_dp_sent(gw_dp *dp)
{
	return fake(dp)->sent;
}

void fc_dp_stall(gw_dp *dp, unsigned calls)
{
	fake(dp)->stall += calls;
}

void fc_dp_push(gw_dp *dp, const uint8_t *data, uint32_t len,
		const gw_endpoint *peer, int tag)
{
	struct fc_dp *d = fake(dp);
	if (d->n == d->cap) {
		uint32_t cap = d->cap ? 2 * d->cap : 64;
		struct fc_rxq *q = realloc(d->q, cap * sizeof(*q));
		GW_FUZZ_CHECKF(q, "no memory for the receive queue");
		d->q = q;
		d->cap = cap;
	}
	gw_pkt *p = fc_pkt_new(len);
	GW_FUZZ_CHECKF(p, "no memory for a packet");
	memcpy(p->data, data, len);
	p->len = len;
	p->peer = *peer;
	d->q[d->n++] = (struct fc_rxq){.p = p, .tag = tag};
}

/* ---- the clock --------------------------------------------------------- */

static int clock_on;
static uint64_t clock_ns;

void fc_clock_start(void)
{
	clock_on = 1;
	clock_ns = 1000000000ull;
}

void fc_clock_stop(void)
{
	clock_on = 0;
}

void fc_clock_advance(uint64_t ns)
{
	clock_ns += ns;
}

uint64_t fc_clock_ns(void)
{
	return clock_ns;
}

/* Replaces the C library's for the whole program (fuzz_coll.h). Nothing
 * in this file calls it, so its static state is safe from the leaf
 * attribute of the library's declaration. */
int clock_gettime(clockid_t id, struct timespec *ts)
{
	if (!clock_on || id != CLOCK_MONOTONIC)
		return (int)syscall(SYS_clock_gettime, id, ts);
	clock_ns += 1000;
	ts->tv_sec = (time_t)(clock_ns / 1000000000u);
	ts->tv_nsec = (long)(clock_ns % 1000000000u);
	return 0;
}

/* ---- seals ------------------------------------------------------------- */

uint32_t fc_seal(const struct coll_layout *L, int mode, uint8_t *p,
		 struct gw_pkt_hdr *h, uint32_t body_len)
{
	struct coll_layout other = *L;
	switch (mode & FM_SEAL) {
	case FS_RIGHT:
		return coll_seal(L, p, h, body_len);
	case FS_WRONG:
		/* Another key: the MAC is well-formed and does not verify. */
		other.keyed = 1;
		for (unsigned i = 0; i < GW_KEY_LEN; i++)
			other.key[i] = (uint8_t)(L->key[i] ^ 0x5a ^ i);
		return coll_seal(&other, p, h, body_len);
	case FS_NOMAC:
		other.keyed = 0;
		h->flags &= (uint8_t)~GW_PKT_F_MAC;
		return coll_seal(&other, p, h, body_len);
	default:
		/* The checksum of another payload length: what a bit flip in
		 * transit leaves. */
		h->flags |= GW_PKT_F_FRAME;
		gw_pkt_write(p, h, (uint64_t)body_len + 1u);
		return GW_PKT_HDR_LEN + body_len;
	}
}

/* The harnesses run on virtual time in one thread: no heartbeat thread,
 * no CTRL packet of liveness (its behaviour has tests of its own). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("GW_LIVENESS_MS", "0", 1);
	return 0;
}
