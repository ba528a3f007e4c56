/* The kernel UDP backend's receive side: one recvmmsg per burst straight
 * into pool packets (the plain path), or, with UDP GRO, into staging
 * buffers that hold a datagram the kernel coalesced, which is then split
 * into pool packets. Either way a caller sees one gw_pkt per datagram the
 * peer sent, with the same sender, the same rx_bad for one cut short and
 * the same SO_RXQ_OVFL drop count.
 *
 * Why GRO pays despite the copy: over loopback a GSO sender's run reaches
 * a GRO socket as one buffer, where without GRO the kernel cuts it into
 * datagrams at the receiving socket (an skb each, queued and dequeued one
 * by one); from a NIC, the driver's GRO does the same for a plain sender.
 * One copy of a 1.4 KB segment is cheaper than that per-datagram work.
 *
 * A coalesced datagram can hold more segments than the caller asked for:
 * what is left stays staged for the next call (and ready()/wait() say a
 * packet is waiting), so nothing is lost to a small n. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "udp.h"

/* Staging buffers at most: a burst of up to 64 datagrams per call, 4 MiB. */
#define UDP_GRO_MSGS_MAX 64u

static unsigned gro_msgs(const struct udp_dp *u)
{
	return GW_MIN(u->dp.burst, UDP_GRO_MSGS_MAX);
}

int udp_rx_setup(struct udp_dp *u)
{
	unsigned b = u->dp.burst;
	u->rx_msgs = calloc(b, sizeof(*u->rx_msgs));
	u->rx_iov = calloc(b, sizeof(*u->rx_iov));
	u->rx_addrs = calloc(b, sizeof(*u->rx_addrs));
	u->rx_cmsgs = calloc(b, sizeof(*u->rx_cmsgs));
	if (!u->rx_msgs || !u->rx_iov || !u->rx_addrs || !u->rx_cmsgs)
		return GW_ERR(GW_ENOMEM);
	if (!u->gro)
		return GW_OK;
	size_t len = (size_t)gro_msgs(u) * UDP_GRO_BUF;
	u->gro_mem = malloc(len);
	u->gro_msgs = calloc(gro_msgs(u), sizeof(*u->gro_msgs));
	if (!u->gro_mem || !u->gro_msgs)
		return GW_ERR(GW_ENOMEM);
	/* Resident from the start, as the pool is (udp_pool_init). */
	for (size_t off = 0; off < len; off += 4096)
		((volatile uint8_t *)u->gro_mem)[off] = 0;
	return GW_OK;
}

void udp_rx_teardown(struct udp_dp *u)
{
	GW_FREE_ALL(u->rx_msgs, u->rx_iov, u->rx_addrs, u->rx_cmsgs, u->gro_mem, u->gro_msgs);
}

/* Points message slot i at buf[0..len). */
static void rx_slot(struct udp_dp *u, unsigned i, void *buf, size_t len)
{
	u->rx_iov[i] = (struct iovec){buf, len};
	u->rx_msgs[i].msg_hdr = (struct msghdr){
		.msg_name = &u->rx_addrs[i], .msg_namelen = sizeof(u->rx_addrs[i]),
		.msg_iov = &u->rx_iov[i], .msg_iovlen = 1,
		.msg_control = u->rx_cmsgs[i].buf, .msg_controllen = sizeof(u->rx_cmsgs[i].buf)};
}

/* Receives into the first m slots: one recvmmsg, or with mmsg=0 one
 * recvmsg per datagram. Returns how many came (0 when none waited). A
 * kernel or seccomp filter without recvmmsg (ENOSYS) leaves the
 * per-datagram path for good. */
static unsigned rx_call(struct udp_dp *u, unsigned m)
{
	if (u->mmsg) {
		u->ctr.rx_calls++;
		int r = recvmmsg(u->fd, u->rx_msgs, m, MSG_DONTWAIT, NULL);
		if (r >= 0 || errno != ENOSYS)
			return r > 0 ? (unsigned)r : 0;
		u->mmsg = 0;
		u->refused |= GW_DP_PATH_MMSG;
	}
	unsigned i = 0;
	for (; i < m; i++) {
		u->ctr.rx_calls++;
		ssize_t r = recvmsg(u->fd, &u->rx_msgs[i].msg_hdr, MSG_DONTWAIT);
		if (r < 0)
			break;
		u->rx_msgs[i].msg_len = (unsigned)r;
	}
	return i;
}

/* Whether c holds size bytes of data, inside the control data the kernel
 * wrote: a cmsg_len too short, or one claiming more than there is, is
 * ignored rather than read. */
static bool cmsg_holds(const struct msghdr *mh, const struct cmsghdr *c, size_t size)
{
	const char *end = (const char *)mh->msg_control + mh->msg_controllen;
	return c->cmsg_len >= CMSG_LEN(size) && (const char *)CMSG_DATA(c) + size <= end;
}

/* What received message i says besides its data: the sender, and the
 * kernel's count of datagrams this socket dropped (a full receive buffer)
 * as of it, losses the counters would not see. Returns the UDP_GRO
 * segment size, 0 when there is none (not coalesced). */
static uint32_t rx_meta(struct udp_dp *u, unsigned i, gw_endpoint *peer)
{
	struct msghdr *mh = &u->rx_msgs[i].msg_hdr;
	uint32_t seg = 0;
	udp_to_endpoint(&u->rx_addrs[i], peer);
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL &&
		    cmsg_holds(mh, c, sizeof(uint32_t))) {
			uint32_t d;
			memcpy(&d, CMSG_DATA(c), sizeof(d));
			if (d - u->drops < 0x80000000u)
				u->drops = d;
		} else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
			   cmsg_holds(mh, c, sizeof(int))) {
			int s;
			memcpy(&s, CMSG_DATA(c), sizeof(s));
			seg = s > 0 ? (uint32_t)s : 0;
		}
	}
	return seg;
}

/* ---- the plain path: a datagram per pool packet --------------------------- */

static int rx_plain(struct udp_dp *u, gw_pkt **pkts, unsigned n)
{
	gw_dp *dp = &u->dp;
	n = (unsigned)udp_alloc(dp, pkts, n);
	if (!n)
		return 0;
	for (unsigned i = 0; i < n; i++)
		rx_slot(u, i, pkts[i]->data, pkts[i]->room);
	unsigned got = rx_call(u, n);
	for (unsigned i = 0; i < got; i++) {
		gw_pkt *p = pkts[i];
		p->len = u->rx_msgs[i].msg_len;
		(void)rx_meta(u, i, &p->peer);
		if (u->rx_msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
			dp->stats.rx_bad++;   /* larger than our buffers: counted, kept short */
		dp->stats.rx_bytes += p->len;
	}
	dp->stats.rx_pkts += got;
	udp_free(dp, pkts + got, n - got);
	return (int)got;
}

/* ---- the GRO path: staged datagrams split into pool packets --------------- */

/* Receives up to m datagrams into the staging buffers and records each:
 * its length, its segment size (the kernel's, when it is one a split can
 * use: above 0 and below the length; otherwise the datagram is one
 * packet, as on the plain path), whether it was cut short. */
static void gro_recv(struct udp_dp *u, unsigned m)
{
	m = GW_MIN(m, gro_msgs(u));
	for (unsigned i = 0; i < m; i++)
		rx_slot(u, i, u->gro_mem + (size_t)i * UDP_GRO_BUF, UDP_GRO_BUF);
	unsigned got = rx_call(u, m);
	for (unsigned i = 0; i < got; i++) {
		struct udp_gro_msg *g = &u->gro_msgs[i];
		uint32_t seg = rx_meta(u, i, &g->peer);
		g->len = GW_MIN(u->rx_msgs[i].msg_len, UDP_GRO_BUF);
		g->seg = seg && seg < g->len ? seg : g->len;
		g->off = 0;
		g->bad_tail = (u->rx_msgs[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
		if (g->seg < g->len) {
			u->ctr.rx_gro_dgrams++;
			u->ctr.rx_gro_pkts += (g->len + g->seg - 1) / g->seg;
		}
	}
	u->gro_count = got;
	u->gro_next = 0;
}

/* The next segment of the staged datagram g into p. A segment beyond
 * payload_max is cut to it and counted in rx_bad, as the plain path's
 * MSG_TRUNC is; so is the last one of a datagram the kernel cut short. */
static void gro_segment(struct udp_dp *u, struct udp_gro_msg *g, const uint8_t *data,
			gw_pkt *p)
{
	uint32_t seg = GW_MIN(g->seg, g->len - g->off);
	uint32_t take = GW_MIN(seg, u->dp.payload_max);
	memcpy(p->data, data + g->off, take);
	p->len = take;
	p->peer = g->peer;
	g->off += seg;
	if (take < seg || (g->bad_tail && g->off >= g->len))
		u->dp.stats.rx_bad++;
	u->dp.stats.rx_bytes += take;
	u->dp.stats.rx_pkts++;
}

/* Hands up staged segments into pool packets, at most n; returns how
 * many. A datagram of 0 bytes is one packet of 0 bytes. */
static unsigned gro_split(struct udp_dp *u, gw_pkt **pkts, unsigned n)
{
	unsigned got = 0;
	while (got < n && u->gro_next < u->gro_count) {
		struct udp_gro_msg *g = &u->gro_msgs[u->gro_next];
		if (udp_alloc(&u->dp, &pkts[got], 1) != 1)
			break;   /* pool empty: the rest stays staged */
		const uint8_t *data = u->gro_mem + (size_t)u->gro_next * UDP_GRO_BUF;
		gro_segment(u, g, data, pkts[got++]);
		if (g->off >= g->len)
			u->gro_next++;
	}
	return got;
}

static bool gro_staged(const struct udp_dp *u)
{
	return u->gro_next < u->gro_count;
}

static int rx_gro(struct udp_dp *u, gw_pkt **pkts, unsigned n)
{
	unsigned got = gro_split(u, pkts, n);
	if (got < n && !gro_staged(u) && u->free_list) {
		gro_recv(u, n - got);
		got += gro_split(u, pkts + got, n - got);
	}
	return (int)got;
}

int udp_rx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	n = GW_MIN(n, dp->burst);
	return u->gro ? rx_gro(u, pkts, n) : rx_plain(u, pkts, n);
}

/* Sleeps until a datagram is readable or timeout_us has passed; at once
 * when segments are staged. ppoll() keeps the microseconds that poll()'s
 * millisecond timeout rounded up, so a stream's sub-millisecond deadline
 * (an RTO's remainder, a refused send's back-off) is not stretched to 1 ms.
 *
 * The thread's timer slack (50 us by default) is left as the caller set
 * it. The DPDK backend's back-off sleeps in many short steps, each
 * stretched by the slack; here one ppoll() ends at once when a datagram
 * comes (a wake-up no slack delays), the timer fires only when none came,
 * and a 1 us slack measured no gain in stream throughput, with or without
 * loss: not worth changing the caller's thread. */
int udp_wait(gw_dp *dp, unsigned timeout_us)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	if (gro_staged(u))
		return GW_OK;
	struct pollfd pfd = {.fd = u->fd, .events = POLLIN};
	struct timespec ts = {.tv_sec = timeout_us / 1000000u,
			      .tv_nsec = (long)(timeout_us % 1000000u) * 1000};
	dp->stats.idle_waits++;
	int r = ppoll(&pfd, 1, &ts, NULL);
	return r < 0 && errno != EINTR ? GW_ERR(GW_EIO) : GW_OK;
}

/* gw_dp_wait_any(): staged segments, or a datagram on the socket. */
bool udp_ready(gw_dp *dp)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	struct pollfd pfd = {.fd = u->fd, .events = POLLIN};
	return gro_staged(u) || poll(&pfd, 1, 0) > 0;
}

/* gw_dp_drops(): the kernel's count, as of the last datagram received. */
uint64_t udp_drops(gw_dp *dp)
{
	return ((struct udp_dp *)dp)->drops;
}
