/* gradwire dataplane: moves opaque packets between endpoints.
 *
 * A backend (DPDK ethdev, kernel UDP, later RDMA) is an ops table behind
 * this API; nothing here names a backend's own types. Packets are buffers
 * the backend owns (an mbuf, a slot of a sendmmsg ring): the application
 * allocates them, writes the gradwire packet header and a frame straight
 * into gw_pkt.data, and sends them — no copy between codec and NIC. The
 * backend builds and strips Ethernet/IPv4/UDP below data.
 *
 * Hot-path calls (alloc, free, tx_burst, rx_burst) never allocate memory
 * or make a syscall on the DPDK backend; gw_dp_wait() is how an idle
 * poller gives its core away.
 */
#ifndef GW_DATAPLANE_H
#define GW_DATAPLANE_H

#include <stddef.h>
#include <stdint.h>

#include <gw/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a packet goes or came from: IPv4 address and UDP port, plus the
 * Ethernet address for backends that write L2 headers themselves (all zero:
 * broadcast, which veth pairs and memif deliver). */
typedef struct gw_endpoint {
	uint32_t ip;       /* host byte order */
	uint16_t port;
	uint8_t mac[6];
} gw_endpoint;

/* Parses "A.B.C.D:PORT" or "A.B.C.D:PORT@aa:bb:cc:dd:ee:ff". 0 or GW_EINVAL. */
GW_API int gw_endpoint_parse(const char *s, gw_endpoint *ep);
/* Writes the same syntax into buf; returns GW_EINVAL if it does not fit. */
GW_API int gw_endpoint_format(const gw_endpoint *ep, char *buf, size_t len);

/* One packet. data points at the UDP payload: gradwire header + frame. */
typedef struct gw_pkt {
	uint8_t *data;
	uint32_t len;       /* bytes at data (rx: received; tx: to send) */
	uint32_t room;      /* bytes that may be written at data */
	gw_endpoint peer;   /* rx: the sender; tx: the destination */
	void *priv;         /* the backend's handle; do not touch */
} gw_pkt;

typedef struct gw_dp_stats {
	uint64_t rx_pkts, rx_bytes;
	uint64_t tx_pkts, tx_bytes;
	uint64_t rx_bad;        /* dropped below the gradwire header: short,
				 * not IPv4/UDP, bad checksum, wrong port */
	uint64_t tx_full;       /* packets the device queue refused */
	uint64_t idle_waits;    /* gw_dp_wait() calls that slept */
	/* Impairments (the impair_* options below): packets lost, held back,
	 * duplicated, corrupted on receive; tx_burst calls cut short. */
	uint64_t impair_lost, impair_reordered, impair_duplicated,
		 impair_corrupted, impair_txfull;
} gw_dp_stats;

typedef struct gw_dp_config {
	const char *backend;    /* "udp", "dpdk" */
	gw_endpoint local;      /* address and UDP port to receive on */
	uint32_t pool;          /* packets the backend must be able to hold
				 * allocated at once (windows + bursts); 0: 4096 */
	uint32_t burst;         /* largest rx/tx burst; 0: 32 */
	/* Backend arguments. dpdk: the EAL arguments (argv[0] first) as
	 * DPDK's own tools take them before "--", and "port=N" options are
	 * read from opts; udp: unused. */
	int argc;
	char **argv;
	/* "key=value,..." backend options, or NULL. Every backend also takes
	 * the impairment keys, applied to received packets, seeded and
	 * deterministic, for tests without tc netem:
	 *   impair_loss=P     drop with probability P (0 <= P <= 1)
	 *   impair_reorder=P  hold back until 1-4 later packets went up
	 *   impair_dup=P      hand up twice
	 *   impair_corrupt=P  flip one random bit of the UDP payload
	 *   impair_txfull=P   a tx_burst call refuses the packets from a random
	 *                     one on (counted in tx_full), as a full queue does
	 *   impair_seed=S     PRNG seed (default 1) */
	const char *opts;
} gw_dp_config;

typedef struct gw_dp gw_dp;

/* Opens a backend. Returns 0 and *out, or GW_E* (GW_EUNSUPPORTED if the
 * backend was not built in, GW_EINVAL for an option it does not take,
 * GW_EIO if the device cannot be brought up), with a detail
 * (gw_error_detail) naming the option or the device and why. */
GW_API int gw_dp_open(const gw_dp_config *cfg, gw_dp **out);
GW_API void gw_dp_close(gw_dp *dp);                 /* accepts NULL */

/* Names of the backends built into this library, NULL-terminated. */
GW_API const char *const *gw_dp_backends(void);
/* The same as one line, "udp, dpdk, rdma", for messages: the length it
 * needs (as snprintf), buf cut to len. (GRADWIRE_0.8) */
GW_API size_t gw_dp_backends_text(char *buf, size_t len);
GW_API const char *gw_dp_backend_name(const gw_dp *dp);
GW_API int gw_dp_local(const gw_dp *dp, gw_endpoint *ep);

/* Largest UDP payload (gradwire header + frame) one packet carries: the
 * port's MTU minus IPv4 and UDP headers, never a hard-coded 1500. */
GW_API uint32_t gw_dp_payload_max(const gw_dp *dp);

/* Allocates up to n packets with len = 0 and room = payload_max; returns
 * how many (0 when the pool is exhausted). */
GW_API int gw_dp_alloc(gw_dp *dp, gw_pkt **pkts, unsigned n);
/* Gives packets back to the pool. */
GW_API void gw_dp_free(gw_dp *dp, gw_pkt **pkts, unsigned n);

/* Queues pkts[0..n) for sending to each pkt->peer. The caller KEEPS every
 * packet (the backend holds its own reference until the device is done),
 * so a reliable sender can send the same packet again and frees it when it
 * is acknowledged. Returns how many were queued, in order; the rest were
 * refused by a full queue (counted in tx_full) and may be retried. */
GW_API int gw_dp_tx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n);

/* Receives up to n packets; the caller frees them. Returns the count. */
GW_API int gw_dp_rx_burst(gw_dp *dp, gw_pkt **pkts, unsigned n);

/* Idle back-off: returns when a packet may be ready or after timeout_us,
 * sleeping (rx interrupt, poll() or a short nanosleep) rather than
 * spinning, so more pollers than cores all progress. */
GW_API int gw_dp_wait(gw_dp *dp, unsigned timeout_us);

/* gw_dp_wait() over dps[0..n), 1 <= n <= GW_DP_WAIT_ANY_MAX: returns when
 * a packet may be ready on any of them, or after timeout_us. A process
 * that serves several ports (a shard with a memif port per worker, a
 * worker with one per shard) sleeps on all at once: one poll() over their
 * wake-up descriptors where every backend has one, else short sleeps that
 * look at each in between. */
#define GW_DP_WAIT_ANY_MAX 64
GW_API int gw_dp_wait_any(gw_dp *const *dps, unsigned n, unsigned timeout_us);

/* What an idle wait does before it sleeps. */
typedef enum gw_dp_wait_policy {
	/* The default: while packets came in the last millisecond, poll for
	 * about 20 us first (gw_dp_wait_any over several dataplanes; the
	 * dpdk backend's spin_us), since a peer mid-transfer answers sooner
	 * than a sleep and a wake-up take. */
	GW_DP_WAIT_SPIN = 0,
	/* Sleep as soon as nothing is due: no polling phase. The right one
	 * where more processes poll than there are cores (4 ranks and 4
	 * shards on 2 cores): there a spin holds the core that the peer it
	 * waits for needs. */
	GW_DP_WAIT_SLEEP = 1,
} gw_dp_wait_policy;

/* Sets dp's idle-wait policy (default GW_DP_WAIT_SPIN); GW_EINVAL with a
 * detail for a NULL dp or an unknown policy. gw_dp_wait_any() polls only
 * when every dataplane it waits on allows it. (GRADWIRE_0.6) */
GW_API int gw_dp_set_wait(gw_dp *dp, gw_dp_wait_policy policy);

/* The memory every packet buffer of dp lies in, so that a device can be
 * given it once and then write packet data without a copy: a GPU that
 * registers it for mapped access (cudaHostRegister) and encodes straight
 * into packets, or a NIC. Fills up to max regions into r and returns how
 * many there are (more than max: call again with room), GW_EUNSUPPORTED
 * where the backend cannot say, GW_EINVAL on bad arguments. Every
 * gw_pkt's data[0..room) from gw_dp_alloc() lies inside one region. */
typedef struct gw_dp_region {
	void *addr;
	size_t len;
} gw_dp_region;
GW_API int gw_dp_regions(gw_dp *dp, gw_dp_region *r, unsigned max);

/* Whether dp's device could send from GPU memory exported as a dma-buf
 * (ibv_reg_dmabuf_mr), probed as NCCL probes it: a registration of no
 * buffer, which a kernel and provider without support refuse with
 * EOPNOTSUPP or EPROTONOSUPPORT, and others with EBADF. 1: yes; 0: no,
 * with a detail (gw_error_detail) saying why; GW_EINVAL for a NULL dp.
 * (GRADWIRE_0.3) */
GW_API int gw_dp_dmabuf(gw_dp *dp);

/* Packets lost before the backend saw them: udp, the socket's receive
 * drops (a full buffer; the kernel's SO_RXQ_OVFL count as of the last
 * datagram received); dpdk, the port's imissed + rx_nombuf. With
 * gw_dp_stats it accounts for everything sent to dp. GW_EUNSUPPORTED where
 * the backend cannot say. (GRADWIRE_0.3) */
GW_API int64_t gw_dp_drops(gw_dp *dp);

/* Counters of the layer above (a shard's, a worker's), for the backend's
 * own monitoring, kept with a snapshot of dp's counters: DPDK serves them
 * on its telemetry socket (dpdk-telemetry.py: /gradwire/ports,
 * /gradwire/stats,PORT). Call from the thread that uses dp; names up to
 * 31 characters. GW_EUNSUPPORTED where the backend has no monitoring of
 * its own (udp, rdma: use --stats-interval). (GRADWIRE_0.3) */
GW_API int gw_dp_publish(gw_dp *dp, const char *const *names, const uint64_t *vals,
			 unsigned n);

GW_API void gw_dp_stats_get(const gw_dp *dp, gw_dp_stats *st);

/* Which of its cheaper kernel paths a dataplane takes, and how much they
 * batch: the udp backend's mmsg, gso and gro options as the kernel allowed
 * them. A struct of its own rather than fields at the end of gw_dp_stats,
 * which gw_dp_stats_get copies whole into a caller's struct of 0.1's size.
 * Counters only grow; "on" may lose a bit while running (a route that
 * refuses GSO turns it off, and the bit moves to "refused"). */
#define GW_DP_PATH_MMSG 0x1u   /* a burst per sendmmsg/recvmmsg call */
#define GW_DP_PATH_GSO 0x2u    /* UDP GSO: a run of equal-size packets per send */
#define GW_DP_PATH_GRO 0x4u    /* UDP GRO: datagrams the kernel coalesced, read
				* at once and split into packets */
typedef struct gw_dp_paths {
	uint32_t on;             /* GW_DP_PATH_* in use now */
	uint32_t refused;        /* GW_DP_PATH_* asked for that the kernel
				  * refused (an old kernel at open, a route
				  * later): the plain path runs instead */
	uint64_t tx_calls, rx_calls;          /* send and receive syscalls */
	uint64_t tx_gso_sends, tx_gso_pkts;   /* GSO sends, the packets in them */
	uint64_t rx_gro_dgrams, rx_gro_pkts;  /* coalesced datagrams received,
					       * the packets split from them */
} gw_dp_paths;
/* Fills *p: GW_OK, GW_EINVAL (NULL), or GW_EUNSUPPORTED with *p zeroed
 * where the backend takes no such paths (dpdk, rdma). (GRADWIRE_0.6) */
GW_API int gw_dp_paths_get(const gw_dp *dp, gw_dp_paths *p);

#ifdef __cplusplus
}
#endif
#endif /* GW_DATAPLANE_H */
