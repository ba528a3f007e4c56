/* Kernel UDP backend: sendmmsg/recvmmsg on one non-blocking socket. It runs
 * anywhere with no setup and is the baseline the DPDK backend is measured
 * against, so it is the best the kernel path honestly does: packets come
 * from a fixed pool allocated at open, so the hot path allocates nothing;
 * it does make syscalls, which is the point of the comparison, but as few
 * as it can: a tx burst is one sendmmsg, in which each run of equal-size
 * packets to one peer is one UDP GSO send (UDP_SEGMENT: the kernel walks
 * its stack once per run and cuts the datagrams at the device, or at the
 * receiving socket over loopback; the datagrams on the wire are the same).
 *
 * Options ("key=value,..."):
 *   payload=N   largest UDP payload, 64..65507 (default 1472: a 1500 MTU)
 *   gso=0|1     UDP GSO on transmit (default 1 where the kernel has it). 0
 *               for a peer that reads the device below the IP stack without
 *               segmenting (AF_PACKET on a veth): it would see the runs
 *               unsegmented. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../dp_internal.h"

#define UDP_PAYLOAD_MAX 65507u   /* IPv4: 65535 - 20 - 8 */
/* Segments of one UDP GSO send: UDP_MAX_SEGMENTS (64; newer kernels 128). */
#define UDP_GSO_SEGS_MAX 64u
/* Socket buffers, as the kernel reports them: enough for a full window of
 * the reliable stream in flight plus bursts. */
#define UDP_SOCKBUF (8 << 20)
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103          /* linux/udp.h; glibc before 2.28 lacks it */
#endif

/* Control message space for one UDP_SEGMENT (tx) or one SO_RXQ_OVFL
 * drop count (rx). */
union udp_cmsg {
	char buf[CMSG_SPACE(sizeof(uint32_t))];
	struct cmsghdr align;
};

struct udp_pkt {
	gw_pkt pkt;
	struct udp_pkt *next;    /* free list */
};

struct udp_dp {
	struct gw_dp dp;
	int fd;
	int gso;                 /* send equal-size runs as UDP GSO sends */
	uint32_t npkts;
	struct udp_pkt *pkts, *free_list;
	uint8_t *mem;
	/* One slot per message of a burst; iov has one per packet. */
	struct mmsghdr *msgs;
	struct iovec *iov;
	struct sockaddr_in *addrs;
	union udp_cmsg *cmsgs;
	uint32_t *segs;          /* packets in each tx message */
	uint32_t drops;          /* the socket's receive drops (SO_RXQ_OVFL) */
};

struct udp_opts {
	uint32_t payload;
	int gso;
};

static int udp_opt(void *arg, const char *key, const char *val)
{
	struct udp_opts *o = arg;
	char *end;
	unsigned long v = strtoul(val, &end, 10);
	int num = *val && !*end && *val != '-';
	if (!strcmp(key, "payload")) {
		if (!num || v < 64 || v > UDP_PAYLOAD_MAX)
			return GW_ERRF(GW_EINVAL, "udp: payload=%s: not a whole number in "
				       "[64, %u]", val, (unsigned)UDP_PAYLOAD_MAX);
		o->payload = (uint32_t)v;
	} else if (!strcmp(key, "gso")) {
		if (!num || v > 1)
			return GW_ERRF(GW_EINVAL, "udp: gso=%s: not 0 or 1", val);
		o->gso = (int)v;
	} else {
		return GW_ERRF(GW_EINVAL, "udp: option '%s' not understood (payload, gso)", key);
	}
	return GW_OK;
}

static void udp_close(gw_dp *dp)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	if (u->fd >= 0)
		close(u->fd);
	GW_FREE_ALL(u->pkts, u->mem, u->msgs, u->iov, u->addrs, u->cmsgs, u->segs, u);
}

static void to_sockaddr(const gw_endpoint *ep, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(ep->ip);
	sa->sin_port = htons(ep->port);
}

/* Sets a socket buffer to UDP_SOCKBUF. An unprivileged SO_RCVBUF/SO_SNDBUF
 * is capped by net.core.rmem_max/wmem_max (208 KiB by default: less than a
 * stream window of full-MTU packets, which then drops and retransmits);
 * the FORCE variant passes the cap with CAP_NET_ADMIN and fails harmlessly
 * without it. */
static void sock_buf(int fd, int opt, int force_opt)
{
	int want = UDP_SOCKBUF, got = 0;
	socklen_t len = sizeof(got);
	setsockopt(fd, SOL_SOCKET, opt, &want, sizeof(want));
	if (getsockopt(fd, SOL_SOCKET, opt, &got, &len) == 0 && got < want) {
		int half = want / 2;   /* the kernel doubles what it is given */
		setsockopt(fd, SOL_SOCKET, force_opt, &half, sizeof(half));
	}
}

static int udp_open(const gw_dp_config *cfg, gw_dp **out)
{
	/* Payload size: the loopback and veth MTUs here are large, but a
	 * datagram beyond the path MTU fragments; default to what fits a
	 * 1500-byte MTU, "payload=N" to change it. */
	struct udp_opts o = {.payload = 1500 - 28, .gso = 1};
	int rc = gw_dp_opts_each(cfg->opts, udp_opt, &o);
	if (rc < 0)
		return rc;
	uint32_t payload = o.payload;
	struct udp_dp *u = calloc(1, sizeof(*u));
	if (!u)
		return GW_ERR(GW_ENOMEM);
	u->fd = -1;
	u->npkts = cfg->pool ? cfg->pool : 4096;
	u->dp.burst = cfg->burst ? cfg->burst : 32;
	u->dp.payload_max = payload;
	u->pkts = calloc(u->npkts, sizeof(*u->pkts));
	u->mem = malloc((size_t)u->npkts * payload);
	u->msgs = calloc(u->dp.burst, sizeof(*u->msgs));
	u->iov = calloc(u->dp.burst, sizeof(*u->iov));
	u->addrs = calloc(u->dp.burst, sizeof(*u->addrs));
	u->cmsgs = calloc(u->dp.burst, sizeof(*u->cmsgs));
	u->segs = calloc(u->dp.burst, sizeof(*u->segs));
	if (!u->pkts || !u->mem || !u->msgs || !u->iov || !u->addrs || !u->cmsgs ||
	    !u->segs) {
		rc = GW_ERR(GW_ENOMEM);
		goto fail;
	}
	/* The pool resident from the start, as a DPDK mempool's hugepages
	 * are: left to first touch, a long run's RSS crept up for minutes as
	 * the free list reached packets it had not used yet (bench/soak.sh
	 * saw +16 % over 10 minutes with no allocation at all). */
	/* (a store per page: malloc + memset 0 is folded into calloc, which
	 * touches nothing) */
	for (size_t off = 0; off < (size_t)u->npkts * payload; off += 4096)
		((volatile uint8_t *)u->mem)[off] = 0;
	for (uint32_t i = 0; i < u->npkts; i++) {
		u->pkts[i].pkt.data = u->mem + (size_t)i * payload;
		u->pkts[i].pkt.room = payload;
		u->pkts[i].pkt.priv = &u->pkts[i];
		u->pkts[i].next = u->free_list;
		u->free_list = &u->pkts[i];
	}
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0) {
		rc = GW_ERRF(GW_EIO, "udp: socket: %s", strerror(errno));
		goto fail;
	}
	sock_buf(u->fd, SO_RCVBUF, SO_RCVBUFFORCE);
	sock_buf(u->fd, SO_SNDBUF, SO_SNDBUFFORCE);
	int one = 1;   /* drops reported with each datagram (udp_drops) */
	(void)setsockopt(u->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	/* A segment size of 0 (the default) turns nothing on: it asks
	 * whether the kernel knows UDP_SEGMENT (4.18 on). */
	int zero = 0;
	u->gso = o.gso && setsockopt(u->fd, SOL_UDP, UDP_SEGMENT, &zero, sizeof(zero)) == 0;
	struct sockaddr_in sa;
	to_sockaddr(&cfg->local, &sa);
	socklen_t len = sizeof(sa);
	if (bind(u->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(u->fd, (struct sockaddr *)&sa, &len) < 0) {
		char ep[40];
		gw_endpoint_format(&cfg->local, ep, sizeof(ep));
		rc = GW_ERRF(GW_EIO, "udp: bind to %s: %s", ep, strerror(errno));
		goto fail;
	}
	u->dp.local = cfg->local;
	u->dp.local.port = ntohs(sa.sin_port);   /* port 0 picks one */
	*out = &u->dp;
	return GW_OK;
fail:
	udp_close(&u->dp);
	return rc;
}

static int udp_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	unsigned i = 0;
	for (; i < n && u->free_list; i++) {
		struct udp_pkt *p = u->free_list;
		u->free_list = p->next;
		p->pkt.len = 0;
		p->pkt.room = dp->payload_max;
		pkts[i] = &p->pkt;
	}
	return (int)i;
}

static void udp_free(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	for (unsigned i = 0; i < n; i++) {
		struct udp_pkt *p = pkts[i]->priv;
		p->next = u->free_list;
		u->free_list = p;
	}
}

/* How many of pkts[0..n) can go as one UDP GSO send: a run to one peer
 * whose packets all have the first one's length, but for a shorter last
 * one, within the kernel's limits on segments and on the total. */
static unsigned gso_run(gw_pkt *const *pkts, unsigned n)
{
	const gw_pkt *p0 = pkts[0];
	uint32_t size = p0->len, total = size;
	unsigned k = 1;
	if (!size)
		return 1;
	n = GW_MIN(n, UDP_GSO_SEGS_MAX);
	while (k < n) {
		const gw_pkt *p = pkts[k];
		if (!p->len || p->len > size || total + p->len > UDP_PAYLOAD_MAX ||
		    p->peer.ip != p0->peer.ip || p->peer.port != p0->peer.port)
			break;
		total += p->len;
		k++;
		if (p->len < size)
			break;
	}
	return k;
}

static int udp_tx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	unsigned sent = 0;
	while (sent < n) {
		/* Up to a burst of packets per sendmmsg, one message per
		 * GSO run (per packet without GSO). */
		unsigned b = GW_MIN(n - sent, dp->burst), m = 0;
		for (unsigned i = 0; i < b; m++) {
			gw_pkt **run = pkts + sent + i;
			unsigned k = u->gso ? gso_run(run, b - i) : 1;
			for (unsigned j = 0; j < k; j++)
				u->iov[i + j] = (struct iovec){run[j]->data, run[j]->len};
			to_sockaddr(&run[0]->peer, &u->addrs[m]);
			struct msghdr *mh = &u->msgs[m].msg_hdr;
			*mh = (struct msghdr){
				.msg_name = &u->addrs[m], .msg_namelen = sizeof(u->addrs[m]),
				.msg_iov = &u->iov[i], .msg_iovlen = k};
			if (k > 1) {
				mh->msg_control = u->cmsgs[m].buf;
				mh->msg_controllen = sizeof(u->cmsgs[m].buf);
				struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
				cm->cmsg_level = SOL_UDP;
				cm->cmsg_type = UDP_SEGMENT;
				cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
				uint16_t seg = (uint16_t)run[0]->len;
				memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
			}
			u->segs[m] = k;
			i += k;
		}
		int r = sendmmsg(u->fd, u->msgs, m, 0);
		if (r < 0 && u->segs[0] > 1 &&
		    (errno == EMSGSIZE || errno == EINVAL || errno == EIO)) {
			/* The route refuses GSO (a path MTU below the segment
			 * size: EMSGSIZE, EINVAL on older kernels; a device
			 * without checksum offload on older kernels: EIO):
			 * plain datagrams from now on, which IP fragments as
			 * it always did. */
			u->gso = 0;
			continue;
		}
		if (r <= 0) {
			if (r < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR &&
			    errno != ECONNREFUSED)
				return sent ? (int)sent : GW_ERR(GW_EIO);
			dp->stats.tx_full += n - sent;
			break;
		}
		unsigned np = 0;
		for (int i = 0; i < r; i++)
			np += u->segs[i];
		for (unsigned i = 0; i < np; i++)
			dp->stats.tx_bytes += pkts[sent + i]->len;
		dp->stats.tx_pkts += np;
		sent += np;
	}
	return (int)sent;
}

static int udp_rx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	n = (unsigned)udp_alloc(dp, pkts, GW_MIN(n, dp->burst));
	if (!n)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		u->iov[i] = (struct iovec){pkts[i]->data, pkts[i]->room};
		u->msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &u->addrs[i], .msg_namelen = sizeof(u->addrs[i]),
			.msg_iov = &u->iov[i], .msg_iovlen = 1,
			.msg_control = u->cmsgs[i].buf, .msg_controllen = sizeof(u->cmsgs[i].buf)};
	}
	int r = recvmmsg(u->fd, u->msgs, n, MSG_DONTWAIT, NULL);
	int got = r > 0 ? r : 0;
	for (int i = 0; i < got; i++) {
		gw_pkt *p = pkts[i];
		p->len = u->msgs[i].msg_len;
		memset(&p->peer, 0, sizeof(p->peer));
		p->peer.ip = ntohl(u->addrs[i].sin_addr.s_addr);
		p->peer.port = ntohs(u->addrs[i].sin_port);
		if (u->msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
			dp->stats.rx_bad++;   /* larger than our buffers: counted, kept short */
		/* The kernel's count of datagrams this socket dropped (a full
		 * receive buffer), as of this one: losses the counters above
		 * would not see. */
		struct msghdr *mh = &u->msgs[i].msg_hdr;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
				uint32_t d;
				memcpy(&d, CMSG_DATA(c), sizeof(d));
				if (d - u->drops < 0x80000000u)
					u->drops = d;
			}
		dp->stats.rx_bytes += p->len;
	}
	dp->stats.rx_pkts += (unsigned)got;
	udp_free(dp, pkts + got, n - (unsigned)got);
	return got;
}

/* Sleeps until a datagram is readable or timeout_us has passed. ppoll()
 * keeps the microseconds that poll()'s millisecond timeout rounded up, so
 * a stream's sub-millisecond deadline (an RTO's remainder, a refused
 * send's back-off) is not stretched to 1 ms.
 *
 * The thread's timer slack (50 us by default) is left as the caller set
 * it. The DPDK backend's back-off sleeps in many short steps, each
 * stretched by the slack; here one ppoll() ends at once when a datagram
 * comes (a wake-up no slack delays), the timer fires only when none came,
 * and a 1 us slack measured no gain in stream throughput, with or without
 * loss: not worth changing the caller's thread. */
static int udp_wait(gw_dp *dp, unsigned timeout_us)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	struct pollfd pfd = {.fd = u->fd, .events = POLLIN};
	struct timespec ts = {.tv_sec = timeout_us / 1000000u,
			      .tv_nsec = (long)(timeout_us % 1000000u) * 1000};
	dp->stats.idle_waits++;
	int r = ppoll(&pfd, 1, &ts, NULL);
	return r < 0 && errno != EINTR ? GW_ERR(GW_EIO) : GW_OK;
}

/* gw_dp_drops(): the kernel's count, as of the last datagram received. */
static uint64_t udp_drops(gw_dp *dp)
{
	return ((struct udp_dp *)dp)->drops;
}

/* gw_dp_regions(): one allocation holds every packet's data. */
static int udp_regions(gw_dp *dp, gw_dp_region *r, unsigned max)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	if (max)
		r[0] = (gw_dp_region){u->mem, (size_t)u->npkts * u->dp.payload_max};
	return 1;
}

/* gw_dp_wait_any(): the socket is its own wake-up. */
static bool udp_ready(gw_dp *dp)
{
	struct pollfd pfd = {.fd = ((struct udp_dp *)dp)->fd, .events = POLLIN};
	return poll(&pfd, 1, 0) > 0;
}

static int udp_arm(gw_dp *dp)
{
	return ((struct udp_dp *)dp)->fd;
}

static void udp_disarm(gw_dp *dp)
{
	(void)dp;
}

/* Global, not static: linkers of the static archive name it (-u). */
const struct gw_dp_ops gw_dp_udp_ops = {
	.name = "udp",
	.open = udp_open,
	.close = udp_close,
	.alloc = udp_alloc,
	.free = udp_free,
	.tx_burst = udp_tx_burst,
	.rx_burst = udp_rx_burst,
	.wait = udp_wait,
	.ready = udp_ready,
	.arm = udp_arm,
	.disarm = udp_disarm,
	.regions = udp_regions,
	.drops = udp_drops,
};
GW_DP_BACKEND(gw_dp_udp_ops)

