/* The kernel UDP backend's own header: the handle udp.c (options, open,
 * transmit) and udp_rx.c (receive, GRO) share. Nothing outside this folder
 * includes it. */
#ifndef GW_DP_UDP_H
#define GW_DP_UDP_H

#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include "../dp_internal.h"

#define UDP_PAYLOAD_MAX 65507u   /* IPv4: 65535 - 20 - 8 */
/* One coalesced datagram (UDP GRO): the kernel builds them up to 64 KiB
 * (its GRO limit, and what a GSO sender may send); a larger one (an admin
 * raised gro_ipv4_max_size) arrives truncated and is counted in rx_bad. */
#define UDP_GRO_BUF 65536u
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103          /* linux/udp.h; glibc before 2.28 lacks it */
#endif
#ifndef UDP_GRO
#define UDP_GRO 104              /* linux/udp.h (5.0 on); old headers lack it */
#endif

/* Control message space for one UDP_SEGMENT (tx). */
union udp_cmsg {
	char buf[CMSG_SPACE(sizeof(uint32_t))];
	struct cmsghdr align;
};

/* On receive: the SO_RXQ_OVFL drop count and, with GRO, the segment size
 * (an int), so that neither is cut off (MSG_CTRUNC). */
union udp_rx_cmsg {
	char buf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

struct udp_pkt {
	gw_pkt pkt;
	struct udp_pkt *next;    /* free list */
};

/* A received datagram of the GRO path, not yet all handed up: its data
 * stays in its staging buffer until rx_burst has pool packets and room
 * for every segment (a caller may ask for fewer packets than it holds). */
struct udp_gro_msg {
	uint32_t len;            /* bytes received */
	uint32_t seg;            /* segment size; len when not coalesced */
	uint32_t off;            /* bytes already handed up */
	uint8_t bad_tail;        /* the datagram was cut short: its last
				  * segment is counted in rx_bad */
	gw_endpoint peer;
};

struct udp_dp {
	struct gw_dp dp;
	int fd;
	int gso;                 /* send equal-size runs as UDP GSO sends */
	int gro;                 /* receive coalesced datagrams (UDP_GRO) */
	int mmsg;                /* a burst per sendmmsg/recvmmsg call */
	uint32_t refused;        /* GW_DP_PATH_* the kernel refused */
	uint32_t npkts;
	struct udp_pkt *pkts, *free_list;
	uint8_t *mem;
	/* Transmit: one slot per message of a burst; iov has one per packet. */
	struct mmsghdr *msgs;
	struct iovec *iov;
	struct sockaddr_in *addrs;
	union udp_cmsg *cmsgs;
	uint32_t *segs;          /* packets in each tx message */
	/* Receive: its own slots, since the GRO path keeps what it received
	 * across calls while tx_burst reuses the transmit ones. */
	struct mmsghdr *rx_msgs;
	struct iovec *rx_iov;
	struct sockaddr_in *rx_addrs;
	union udp_rx_cmsg *rx_cmsgs;
	/* GRO: a staging buffer of UDP_GRO_BUF per message, the datagrams
	 * the last receive call got, and the one being split (gro_next). */
	uint8_t *gro_mem;
	struct udp_gro_msg *gro_msgs;
	unsigned gro_count, gro_next;
	uint32_t drops;          /* the socket's receive drops (SO_RXQ_OVFL) */
	gw_dp_paths ctr;         /* gw_dp_paths_get's counters (on, refused:
				  * filled when asked) */
};

/* udp.c */
int udp_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n);
void udp_free(gw_dp *dp, gw_pkt **pkts, unsigned n);
void udp_to_endpoint(const struct sockaddr_in *sa, gw_endpoint *ep);

/* udp_rx.c */
int udp_rx_setup(struct udp_dp *u);      /* GW_OK or GW_ENOMEM */
void udp_rx_teardown(struct udp_dp *u);
int udp_rx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n);
int udp_wait(gw_dp *dp, unsigned timeout_us);
bool udp_ready(gw_dp *dp);
uint64_t udp_drops(gw_dp *dp);

#endif /* GW_DP_UDP_H */
