/* Kernel UDP backend: sendmmsg/recvmmsg on one non-blocking socket. It runs
 * anywhere with no setup and is the baseline the DPDK backend is measured
 * against, so it is the best the kernel path honestly does: packets come
 * from a fixed pool allocated at open, so the hot path allocates nothing;
 * it does make syscalls, which is the point of the comparison, but as few
 * as it can: a tx burst is one sendmmsg, in which each run of equal-size
 * packets to one peer is one UDP GSO send (UDP_SEGMENT: the kernel walks
 * its stack once per run and cuts the datagrams at the device, or at the
 * receiving socket over loopback; the datagrams on the wire are the same).
 * On receive, UDP GRO hands such a run (or, from a NIC, what the driver
 * coalesced) up as one datagram that udp_rx.c splits into pool packets,
 * one per datagram sent, as the plain path would: docs/dataplane-udp.md.
 *
 * Options ("key=value,..."):
 *   payload=N   largest UDP payload, 64..65507 (default 1472: a 1500 MTU);
 *               payload=auto: the MTU of the interface holding the local
 *               address, at most 9000 (jumbo frames), less 28 (IPv4 +
 *               UDP); 1472 where that is not known (a wildcard address)
 *   gso=0|1     UDP GSO on transmit (default 1 where the kernel has it). 0
 *               for a peer that reads the device below the IP stack without
 *               segmenting (AF_PACKET on a veth): it would see the runs
 *               unsegmented.
 *   gro=0|1     UDP GRO on receive (default 1 where the kernel has it, 5.0
 *               on): coalesced datagrams read at once into staging buffers
 *               (64 KiB per message of a burst, up to 64) and copied out
 *               segment by segment; segments a caller did not ask for wait
 *               there for the next rx_burst.
 *   mmsg=0|1    a burst per sendmmsg/recvmmsg (default 1); 0: a sendmsg per
 *               message (a packet, or a GSO run) and a recvmsg per datagram,
 *               the path of kernels or sandboxes without them (ENOSYS turns
 *               it on by itself).
 * An offload the kernel refuses (the probe at open: old kernels; a route
 * that refuses GSO later) leaves the plain path. gw_dp_paths_get() says
 * which paths are on, which were refused, and counts syscalls, GSO sends
 * and GRO datagrams. GW_UDP_PROBE_FAIL=gso,gro (environment) makes the
 * probes fail as an old kernel's do, to test that fallback. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "udp.h"

/* Segments of one UDP GSO send: UDP_MAX_SEGMENTS (64; newer kernels 128). */
#define UDP_GSO_SEGS_MAX 64u
/* Socket buffers, as the kernel reports them: enough for a full window of
 * the reliable stream in flight plus bursts. */
#define UDP_SOCKBUF (8 << 20)

struct udp_opts {
	uint32_t payload;
	int gso, gro, mmsg;
};

static int opt_bool(const char *key, const char *val, int *out)
{
	if ((val[0] != '0' && val[0] != '1') || val[1])
		return GW_ERRF(GW_EINVAL, "udp: %s=%s: not 0 or 1", key, val);
	*out = val[0] == '1';
	return GW_OK;
}

static int udp_opt(void *arg, const char *key, const char *val)
{
	struct udp_opts *o = arg;
	if (!strcmp(key, "payload")) {
		char *end;
		if (!strcmp(val, "auto")) {
			o->payload = 0;   /* udp_open looks the device up */
			return GW_OK;
		}
		unsigned long v = strtoul(val, &end, 10);
		if (!*val || *end || *val == '-' || v < 64 || v > UDP_PAYLOAD_MAX)
			return GW_ERRF(GW_EINVAL, "udp: payload=%s: not 'auto' or a whole number "
				       "in [64, %u]", val, (unsigned)UDP_PAYLOAD_MAX);
		o->payload = (uint32_t)v;
		return GW_OK;
	}
	if (!strcmp(key, "gso"))
		return opt_bool(key, val, &o->gso);
	if (!strcmp(key, "gro"))
		return opt_bool(key, val, &o->gro);
	if (!strcmp(key, "mmsg"))
		return opt_bool(key, val, &o->mmsg);
	return GW_ERRF(GW_EINVAL, "udp: option '%s' not understood (payload, gso, gro, mmsg)",
		       key);
}

static void udp_close(gw_dp *dp)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	if (u->fd >= 0)
		close(u->fd);
	udp_rx_teardown(u);
	GW_FREE_ALL(u->pkts, u->mem, u->msgs, u->iov, u->addrs, u->cmsgs, u->segs, u);
}

static void to_sockaddr(const gw_endpoint *ep, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(ep->ip);
	sa->sin_port = htons(ep->port);
}

void udp_to_endpoint(const struct sockaddr_in *sa, gw_endpoint *ep)
{
	memset(ep, 0, sizeof(*ep));
	ep->ip = ntohl(sa->sin_addr.s_addr);
	ep->port = ntohs(sa->sin_port);
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

/* Whether the comma-separated list names name. */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p;) {
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return 1;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

/* One SOL_UDP setsockopt that asks whether the kernel has an offload.
 * GW_UDP_PROBE_FAIL=gso,gro makes the named probes fail as a kernel
 * without them does (ENOPROTOOPT), so the fallback is tested on kernels
 * that have both. */
static int probe(int fd, const char *name, int opt, int val)
{
	const char *env = getenv("GW_UDP_PROBE_FAIL");
	if (env && listed(env, name)) {
		errno = ENOPROTOOPT;
		return -1;
	}
	return setsockopt(fd, SOL_UDP, opt, &val, sizeof(val));
}

/* The offloads asked for that the kernel has: GSO with a segment size of
 * 0 (the default, turning nothing on: it asks whether the kernel knows
 * UDP_SEGMENT, 4.18 on); GRO by turning it on (5.0 on). One it refuses
 * leaves the plain path, and a bit in "refused" (gw_dp_paths_get). */
static void udp_probe(struct udp_dp *u, const struct udp_opts *o)
{
	u->mmsg = o->mmsg;
	u->gso = o->gso && probe(u->fd, "gso", UDP_SEGMENT, 0) == 0;
	u->gro = o->gro && probe(u->fd, "gro", UDP_GRO, 1) == 0;
	u->refused = (o->gso && !u->gso ? GW_DP_PATH_GSO : 0) |
		     (o->gro && !u->gro ? GW_DP_PATH_GRO : 0);
}

/* The pool, resident from the start as a DPDK mempool's hugepages are:
 * left to first touch, a long run's RSS crept up for minutes as the free
 * list reached packets it had not used yet (bench/soak.sh saw +16 % over
 * 10 minutes with no allocation at all). (A store per page: malloc +
 * memset 0 is folded into calloc, which touches nothing.) */
static void udp_pool_init(struct udp_dp *u, uint32_t payload)
{
	for (size_t off = 0; off < (size_t)u->npkts * payload; off += 4096)
		((volatile uint8_t *)u->mem)[off] = 0;
	for (uint32_t i = 0; i < u->npkts; i++) {
		u->pkts[i].pkt.data = u->mem + (size_t)i * payload;
		u->pkts[i].pkt.room = payload;
		u->pkts[i].pkt.priv = &u->pkts[i];
		u->pkts[i].next = u->free_list;
		u->free_list = &u->pkts[i];
	}
}

static int udp_bind(struct udp_dp *u, const gw_endpoint *local)
{
	struct sockaddr_in sa;
	to_sockaddr(local, &sa);
	socklen_t len = sizeof(sa);
	if (bind(u->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(u->fd, (struct sockaddr *)&sa, &len) < 0) {
		char ep[40];
		gw_endpoint_format(local, ep, sizeof(ep));
		return GW_ERRF(GW_EIO, "udp: bind to %s: %s", ep, strerror(errno));
	}
	u->dp.local = *local;
	u->dp.local.port = ntohs(sa.sin_port);   /* port 0 picks one */
	return GW_OK;
}

/* payload=auto: the MTU of the interface that holds ip (host order),
 * capped at a jumbo frame (9000: what datacenter networks configure; the
 * loopback's 64 KiB would make chunks no real link carries), less the
 * IPv4 and UDP headers; 1472 when no interface holds it. */
static uint32_t auto_payload(uint32_t ip)
{
	uint32_t mtu = 1500;
	struct ifaddrs *ifs;
	if (ip && getifaddrs(&ifs) == 0) {
		for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
			    ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr) != ip)
				continue;
			int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			struct ifreq r;
			memset(&r, 0, sizeof(r));
			snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", i->ifa_name);
			if (fd >= 0 && ioctl(fd, SIOCGIFMTU, &r) == 0 && r.ifr_mtu >= 576)
				mtu = GW_MIN((uint32_t)r.ifr_mtu, 9000u);
			if (fd >= 0)
				close(fd);
			break;
		}
		freeifaddrs(ifs);
	}
	return mtu - 28;
}

static int udp_open(const gw_dp_config *cfg, gw_dp **out)
{
	/* Payload size: the loopback and veth MTUs here are large, but a
	 * datagram beyond the path MTU fragments; default to what fits a
	 * 1500-byte MTU, "payload=N" to change it. */
	struct udp_opts o = {.payload = 1500 - 28, .gso = 1, .gro = 1, .mmsg = 1};
	int rc = gw_dp_opts_each(cfg->opts, udp_opt, &o);
	if (rc < 0)
		return rc;
	uint32_t payload = o.payload ? o.payload : auto_payload(cfg->local.ip);
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
	udp_pool_init(u, payload);
	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0) {
		rc = GW_ERRF(GW_EIO, "udp: socket: %s", strerror(errno));
		goto fail;
	}
	sock_buf(u->fd, SO_RCVBUF, SO_RCVBUFFORCE);
	sock_buf(u->fd, SO_SNDBUF, SO_SNDBUFFORCE);
	int one = 1;   /* drops reported with each datagram (udp_drops) */
	(void)setsockopt(u->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	udp_probe(u, &o);
	if ((rc = udp_rx_setup(u)) < 0 || (rc = udp_bind(u, &cfg->local)) < 0)
		goto fail;
	*out = &u->dp;
	return GW_OK;
fail:
	udp_close(&u->dp);
	return rc;
}

int udp_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n)
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

void udp_free(gw_dp *dp, gw_pkt **pkts, unsigned n)
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

/* Fills the message slots for pkts[0..b): one per GSO run (per packet
 * without GSO). Returns the number of messages. */
static unsigned tx_messages(struct udp_dp *u, gw_pkt **pkts, unsigned b)
{
	unsigned m = 0;
	for (unsigned i = 0; i < b; m++) {
		gw_pkt **run = pkts + i;
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
	return m;
}

/* Sends the first m messages: one sendmmsg, or with mmsg=0 one sendmsg
 * each. Returns how many went, or -1 with errno when the first did not.
 * A kernel or seccomp filter without sendmmsg (ENOSYS) leaves the
 * per-message path for good. */
static int tx_call(struct udp_dp *u, unsigned m)
{
	if (u->mmsg) {
		u->ctr.tx_calls++;
		int r = sendmmsg(u->fd, u->msgs, m, 0);
		if (r >= 0 || errno != ENOSYS)
			return r;
		u->mmsg = 0;
		u->refused |= GW_DP_PATH_MMSG;
	}
	unsigned i = 0;
	for (; i < m; i++) {
		u->ctr.tx_calls++;
		ssize_t r = sendmsg(u->fd, &u->msgs[i].msg_hdr, 0);
		if (r < 0)
			return i ? (int)i : -1;
		u->msgs[i].msg_len = (unsigned)r;
	}
	return (int)i;
}

/* Books r sent messages; returns the packets in them. */
static unsigned tx_sent(struct udp_dp *u, gw_pkt **pkts, int r)
{
	unsigned np = 0;
	for (int i = 0; i < r; i++) {
		np += u->segs[i];
		if (u->segs[i] > 1) {
			u->ctr.tx_gso_sends++;
			u->ctr.tx_gso_pkts += u->segs[i];
		}
	}
	for (unsigned i = 0; i < np; i++)
		u->dp.stats.tx_bytes += pkts[i]->len;
	u->dp.stats.tx_pkts += np;
	return np;
}

static int udp_tx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	unsigned sent = 0;
	while (sent < n) {
		/* Up to a burst of packets per call. */
		unsigned m = tx_messages(u, pkts + sent, GW_MIN(n - sent, dp->burst));
		int r = tx_call(u, m);
		if (r < 0 && u->segs[0] > 1 &&
		    (errno == EMSGSIZE || errno == EINVAL || errno == EIO)) {
			/* The route refuses GSO (a path MTU below the segment
			 * size: EMSGSIZE, EINVAL on older kernels; a device
			 * without checksum offload on older kernels: EIO):
			 * plain datagrams from now on, which IP fragments as
			 * it always did. */
			u->gso = 0;
			u->refused |= GW_DP_PATH_GSO;
			continue;
		}
		if (r <= 0) {
			if (r < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR &&
			    errno != ECONNREFUSED)
				return sent ? (int)sent : GW_ERR(GW_EIO);
			dp->stats.tx_full += n - sent;
			break;
		}
		sent += tx_sent(u, pkts + sent, r);
	}
	return (int)sent;
}

/* gw_dp_paths_get(): what udp_probe and the transmit path settled on. */
static void udp_paths(const gw_dp *dp, gw_dp_paths *p)
{
	const struct udp_dp *u = (const struct udp_dp *)dp;
	*p = u->ctr;
	p->on = (u->mmsg ? GW_DP_PATH_MMSG : 0) | (u->gso ? GW_DP_PATH_GSO : 0) |
		(u->gro ? GW_DP_PATH_GRO : 0);
	p->refused = u->refused;
}

/* gw_dp_regions(): one allocation holds every packet's data. */
static int udp_regions(gw_dp *dp, gw_dp_region *r, unsigned max)
{
	struct udp_dp *u = (struct udp_dp *)dp;
	if (max)
		r[0] = (gw_dp_region){u->mem, (size_t)u->npkts * u->dp.payload_max};
	return 1;
}

/* gw_dp_wait_any(): the socket is its own wake-up (udp_ready: udp_rx.c). */
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
	.paths = udp_paths,
};
GW_DP_BACKEND(gw_dp_udp_ops)

