/* Kernel UDP backend: sendmmsg/recvmmsg on one non-blocking socket. It runs
 * anywhere with no setup and is the baseline the DPDK backend is measured
 * against. Packets come from a fixed pool allocated at open, so the hot
 * path allocates nothing; it does make syscalls, which is the point of the
 * comparison. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../dp_internal.h"

#define UDP_PAYLOAD_MAX 65507u   /* IPv4: 65535 - 20 - 8 */

struct udp_pkt {
	gw_pkt pkt;
	struct udp_pkt *next;    /* free list */
};

struct udp_dp {
	struct gw_dp dp;
	int fd;
	uint32_t npkts;
	struct udp_pkt *pkts, *free_list;
	uint8_t *mem;
	struct mmsghdr *msgs;
	struct iovec *iov;
	struct sockaddr_in *addrs;
};

static int udp_payload_from_opts(void *arg, const char *key, const char *val)
{
	uint32_t *payload = arg;
	if (strcmp(key, "payload"))
		return GW_ERR(GW_EINVAL);
	char *end;
	unsigned long v = strtoul(val, &end, 10);
	if (*end || v < 64 || v > UDP_PAYLOAD_MAX)
		return GW_ERR(GW_EINVAL);
	*payload = (uint32_t)v;
	return GW_OK;
}

static void udp_close(gw_dp *dp)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	if (u->fd >= 0)
		close(u->fd);
	free(u->pkts);
	free(u->mem);
	free(u->msgs);
	free(u->iov);
	free(u->addrs);
	free(u);
}

static void to_sockaddr(const gw_endpoint *ep, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(ep->ip);
	sa->sin_port = htons(ep->port);
}

static int udp_open(const gw_dp_config *cfg, gw_dp **out)
{
	/* Payload size: the loopback and veth MTUs here are large, but a
	 * datagram beyond the path MTU fragments; default to what fits a
	 * 1500-byte MTU, "payload=N" to change it. */
	uint32_t payload = 1500 - 28;
	int rc = gw_dp_opts_each(cfg->opts, udp_payload_from_opts, &payload);
	if (rc < 0)
		return rc;
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
	if (!u->pkts || !u->mem || !u->msgs || !u->iov || !u->addrs) {
		rc = GW_ERR(GW_ENOMEM);
		goto fail;
	}
	for (uint32_t i = 0; i < u->npkts; i++) {
		u->pkts[i].pkt.data = u->mem + (size_t)i * payload;
		u->pkts[i].pkt.room = payload;
		u->pkts[i].pkt.priv = &u->pkts[i];
		u->pkts[i].next = u->free_list;
		u->free_list = &u->pkts[i];
	}
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0) {
		rc = GW_ERR(GW_EIO);
		goto fail;
	}
	int big = 8 << 20;
	setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(u->fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	struct sockaddr_in sa;
	to_sockaddr(&cfg->local, &sa);
	socklen_t len = sizeof(sa);
	if (bind(u->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(u->fd, (struct sockaddr *)&sa, &len) < 0) {
		rc = GW_ERR(GW_EIO);
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

static int udp_tx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	unsigned sent = 0;
	while (sent < n) {
		unsigned b = GW_MIN(n - sent, dp->burst);
		for (unsigned i = 0; i < b; i++) {
			gw_pkt *p = pkts[sent + i];
			to_sockaddr(&p->peer, &u->addrs[i]);
			u->iov[i] = (struct iovec){p->data, p->len};
			u->msgs[i].msg_hdr = (struct msghdr){
				.msg_name = &u->addrs[i], .msg_namelen = sizeof(u->addrs[i]),
				.msg_iov = &u->iov[i], .msg_iovlen = 1};
		}
		int r = sendmmsg(u->fd, u->msgs, b, 0);
		if (r <= 0) {
			if (r < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR &&
			    errno != ECONNREFUSED)
				return sent ? (int)sent : GW_ERR(GW_EIO);
			dp->stats.tx_full += n - sent;
			break;
		}
		for (int i = 0; i < r; i++)
			dp->stats.tx_bytes += pkts[sent + i]->len;
		dp->stats.tx_pkts += (unsigned)r;
		sent += (unsigned)r;
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
			.msg_iov = &u->iov[i], .msg_iovlen = 1};
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
		dp->stats.rx_bytes += p->len;
	}
	dp->stats.rx_pkts += (unsigned)got;
	udp_free(dp, pkts + got, n - (unsigned)got);
	return got;
}

static int udp_wait(gw_dp *dp, unsigned timeout_us)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	struct pollfd pfd = {.fd = u->fd, .events = POLLIN};
	dp->stats.idle_waits++;
	/* poll() takes milliseconds: round up so short waits still sleep. */
	int r = poll(&pfd, 1, (int)((timeout_us + 999) / 1000));
	return r < 0 && errno != EINTR ? GW_ERR(GW_EIO) : GW_OK;
}

const struct gw_dp_ops gw_dp_udp_ops = {
	.name = "udp",
	.open = udp_open,
	.close = udp_close,
	.alloc = udp_alloc,
	.free = udp_free,
	.tx_burst = udp_tx_burst,
	.rx_burst = udp_rx_burst,
	.wait = udp_wait,
};
