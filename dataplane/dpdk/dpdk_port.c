/* DPDK backend: EAL start-up and the one ethdev port a gw_dp drives.
 *
 * The EAL is a process-wide singleton that cannot be started twice, so the
 * first gw_dp_open() starts it with that config's argv and later opens reuse
 * it (their argv is ignored). A port is driven by one gw_dp at a time. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_log.h>

#include "dpdk_internal.h"

#define LOG(level, ...) RTE_LOG(level, USER1, "gradwire dpdk: " __VA_ARGS__)

static bool eal_started, eal_failed;
static bool port_busy[RTE_MAX_ETHPORTS];

/* rte_eal_init() prints its whole usage (about 100 lines) on stdout for
 * one bad option, and cannot be told not to: stdout goes to a file while
 * it runs. After a success the file is copied to stdout as it was; after
 * a failure only its log lines ("EAL: ...") go on, to stderr, and the
 * usage is dropped (the bad option is named on stderr by getopt). */
struct captured {
	int saved;   /* stdout's own file, -1: not captured */
	FILE *f;
};

static void capture_stdout(struct captured *c)
{
	c->saved = -1;
	fflush(stdout);
	c->f = tmpfile();
	if (!c->f)
		return;
	c->saved = dup(STDOUT_FILENO);
	if (c->saved < 0 || dup2(fileno(c->f), STDOUT_FILENO) < 0) {
		if (c->saved >= 0)
			close(c->saved);
		c->saved = -1;
		fclose(c->f);
		c->f = NULL;
	}
}

static void release_stdout(struct captured *c, bool ok)
{
	if (c->saved < 0)
		return;
	fflush(stdout);
	dup2(c->saved, STDOUT_FILENO);
	close(c->saved);
	rewind(c->f);
	char line[1024];
	while (fgets(line, sizeof(line), c->f)) {
		size_t n = strspn(line, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if (ok)
			fputs(line, stdout);
		else if (n && line[n] == ':' && strncmp(line, "Usage:", 6))
			fputs(line, stderr);   /* a log line, not the usage */
	}
	fflush(stdout);
	fclose(c->f);
}

int gw_dpdk_eal_init(const gw_dp_config *cfg)
{
	if (eal_started)
		return GW_OK;
	if (eal_failed)   /* rte_eal_init() cannot be retried in one process */
		return GW_ERR(GW_EIO);
	static char default_name[] = "gradwire";
	char *fallback[] = {default_name, NULL};
	int argc = cfg->argc > 0 && cfg->argv ? cfg->argc : 1;
	char **src = cfg->argc > 0 && cfg->argv ? cfg->argv : fallback;
	/* rte_eal_init() permutes argv and may keep pointers into it for the
	 * life of the process: give it a copy of the array that stays. */
	static char **argv;   /* static: it lives as long as the EAL */
	argv = calloc((size_t)argc + 2, sizeof(*argv));
	if (!argv)
		return GW_ERR(GW_ENOMEM);
	memcpy(argv, src, (size_t)argc * sizeof(*argv));
	/* DPDK 22.11 warns at every start that no legacy telemetry client
	 * registered ("No legacy callbacks, legacy socket not created"): the
	 * v2 socket, which gw_dp_publish serves, is there all the same. Only
	 * that line is silenced, and only where the caller set no level of
	 * its own for lib.telemetry. */
	static char quiet[] = "--log-level=lib.telemetry:error";
	bool telemetry_level = false;
	for (int i = 1; i < argc; i++)
		telemetry_level |= strstr(argv[i], "lib.telemetry") != NULL;
	if (!telemetry_level)
		argv[argc++] = quiet;
	/* getopt names a bad option after argv[0]: the program's name, not
	 * the path it was started by; and says it only where opterr is on (an
	 * app may have turned it off for its own options). */
	static char *name;
	const char *slash = strrchr(argv[0], '/');
	if (slash && slash[1] && (name = strdup(slash + 1)))
		argv[0] = name;
	int opterr_was = opterr;
	opterr = 1;
	struct captured cap;
	capture_stdout(&cap);
	int rc = rte_eal_init(argc, argv);
	release_stdout(&cap, rc >= 0);
	opterr = opterr_was;
	if (rc < 0) {
		eal_failed = true;
		int e = rte_errno;
		/* EACCES: no hugepage information (none reserved or mounted,
		 * or not ours to use); ENOMEM: no memory to map. */
		return GW_ERRF(GW_EIO, "dpdk: rte_eal_init: %s%s", rte_strerror(e),
			       e == EINVAL ? " (a bad EAL option before '--': named above)"
			       : e == EACCES || e == ENOMEM ? " (no hugepages to use: give the "
			       "EAL option --no-huge, with -m MB, or reserve hugepages)" : "");
	}
	eal_started = true;
	return GW_OK;
}

int gw_dpdk_port_claim(uint16_t port)
{
	if (!rte_eth_dev_is_valid_port(port)) {
		return GW_ERRF(GW_EIO, "dpdk: port %u: no such port (%u available)",
			port, rte_eth_dev_count_avail());
	}
	if (port_busy[port]) {
		return GW_ERRF(GW_EINVAL, "dpdk: port %u: already open in this process", port);
	}
	port_busy[port] = true;
	return GW_OK;
}

void gw_dpdk_port_release(uint16_t port)
{
	port_busy[port] = false;
}

/* The MTU of the kernel interface under a port that sits on one (AF_XDP,
 * AF_PACKET: "iface=NAME" in its device arguments), or 0. The ethdev layer
 * starts every port at 1500 whatever the interface has. */
static unsigned kernel_mtu(const struct rte_eth_dev_info *info)
{
	if (!info->device || !info->driver_name ||
	    (strcmp(info->driver_name, "net_af_xdp") && strcmp(info->driver_name, "net_af_packet")))
		return 0;
	const struct rte_devargs *da = rte_dev_devargs(info->device);
	const char *at = da && da->args ? strstr(da->args, "iface=") : NULL;
	if (!at)
		return 0;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	at += strlen("iface=");
	size_t n = strcspn(at, ",");
	if (n == 0 || n >= sizeof(ifr.ifr_name))
		return 0;
	memcpy(ifr.ifr_name, at, n);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int rc = ioctl(fd, SIOCGIFMTU, &ifr);
	close(fd);
	return rc == 0 && ifr.ifr_mtu > 0 ? (unsigned)ifr.ifr_mtu : 0;
}

/* The port's MTU (or want, if given), within what the device allows. */
static int pick_mtu(uint16_t port, const struct rte_eth_dev_info *info, uint16_t want,
		    uint16_t *mtu)
{
	uint16_t cur = RTE_ETHER_MTU;
	unsigned kmtu = kernel_mtu(info);
	if (kmtu && kmtu <= UINT16_MAX)
		cur = (uint16_t)kmtu;
	else if (rte_eth_dev_get_mtu(port, &cur) != 0 || cur == 0)
		cur = RTE_ETHER_MTU;
	uint16_t m = want ? want : cur;
	/* A frame of MTU + Ethernet header must fit what the port receives. */
	uint32_t frame_max = info->max_rx_pktlen;
	if (frame_max > RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN &&
	    m > frame_max - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN && !want)
		m = (uint16_t)(frame_max - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN);
	if (m > info->max_mtu && !want)
		m = info->max_mtu;
	if (m < info->min_mtu || m > info->max_mtu || m < 68 + 28) {
		return GW_ERRF(GW_EINVAL, "dpdk: port %u: MTU %u outside [%u, %u]", port,
			m, info->min_mtu, info->max_mtu);
	}
	*mtu = m;
	return GW_OK;
}

/* rte_eth_dev_configure() from what d holds; rx interrupts on request. */
static int configure(struct dpdk_dp *d, bool rx_intr)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	conf.rxmode.mtu = d->mtu;
	conf.rxmode.offloads = (d->rx_ip_offload ? RTE_ETH_RX_OFFLOAD_IPV4_CKSUM : 0) |
			       (d->rx_udp_offload ? RTE_ETH_RX_OFFLOAD_UDP_CKSUM : 0);
	conf.txmode.offloads = (d->tx_ip_offload ? RTE_ETH_TX_OFFLOAD_IPV4_CKSUM : 0) |
			       (d->tx_udp_offload ? RTE_ETH_TX_OFFLOAD_UDP_CKSUM : 0);
	conf.intr_conf.rxq = rx_intr;
	d->intr = rx_intr;
	return rte_eth_dev_configure(d->port, 1, 1, &conf);
}

int gw_dpdk_port_configure(struct dpdk_dp *d, uint16_t want_mtu, uint16_t *nb_rxd,
			   uint16_t *nb_txd)
{
	struct rte_eth_dev_info info;
	uint16_t port = d->port;
	int rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0) {
		return GW_ERRF(GW_EIO, "dpdk: port %u: dev_info: %s", port, rte_strerror(-rc));
	}
	rc = pick_mtu(port, &info, want_mtu, &d->mtu);
	if (rc < 0)
		return rc;
	/* Checksums go to the port where it offers them. */
	d->tx_ip_offload = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	d->tx_udp_offload = info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	d->rx_ip_offload = info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
	d->rx_udp_offload = info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
	/* Ask for rx interrupts; a port without them may refuse the
	 * configuration, and is configured again for polling only. */
	rc = configure(d, true);
	if (rc != 0)
		rc = configure(d, false);
	if (rc != 0) {
		return GW_ERRF(GW_EIO, "dpdk: port %u: configure (MTU %u): %s", port, d->mtu,
			rte_strerror(-rc));
	}
	/* Some drivers take the MTU at configure time only as a number; ask
	 * the driver too, and believe what the port then reports. */
	uint16_t mtu = d->mtu;
	if (want_mtu)
		rte_eth_dev_set_mtu(port, mtu);
	if (rte_eth_dev_get_mtu(port, &d->mtu) != 0 || d->mtu == 0)
		d->mtu = mtu;

	if (rte_eth_dev_adjust_nb_rx_tx_desc(port, nb_rxd, nb_txd) != 0) {
		return GW_ERRF(GW_EIO, "dpdk: port %u: descriptor counts refused", port);
	}
	if (rte_eth_macaddr_get(port, &d->mac) != 0)
		memset(&d->mac, 0, sizeof(d->mac));
	return GW_OK;
}

/* Raises a log type to CRIT for a call whose errors are expected here;
 * returns what to restore (-1: nothing). */
static int log_quiet(const char *logtype)
{
	int t = rte_log_register(logtype);
	int level = t >= 0 ? rte_log_get_level((uint32_t)t) : -1;
	if (level >= 0)
		rte_log_set_level((uint32_t)t, RTE_LOG_CRIT);
	return level;
}

static void log_restore(const char *logtype, int level)
{
	int t = rte_log_register(logtype);
	if (t >= 0 && level >= 0)
		rte_log_set_level((uint32_t)t, (uint32_t)level);
}

/* A memif client connects once, when its port starts: started before its
 * server made the socket, it fails to start or stays down. (Its default
 * role is client.) Retrying the start connects again. */
static bool memif_client(uint16_t port)
{
	struct rte_eth_dev_info info;
	if (rte_eth_dev_info_get(port, &info) != 0 || !info.driver_name ||
	    strcmp(info.driver_name, "net_memif") || !info.device)
		return false;
	const struct rte_devargs *da = rte_dev_devargs(info.device);
	const char *args = da && da->args ? da->args : "";
	return !strstr(args, "role=server") && !strstr(args, "role=master");
}

/* Puts the rx queue's interrupt into our own epoll set, so gw_dp_wait()
 * can sleep on it with a microsecond timeout (ppoll on the set). */
static void intr_setup(struct dpdk_dp *d)
{
	if (!d->intr)
		return;
	d->intr = false;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		return;
	/* Most virtual devices have no rx interrupt: ethdev says so at
	 * error level, which is no error here. */
	int level = log_quiet("lib.ethdev");
	int rc = rte_eth_dev_rx_intr_ctl_q(d->port, 0, d->epfd, RTE_INTR_EVENT_ADD, NULL);
	/* Enable/disable may be unsupported where the event is the queue's
	 * own fd, always armed (net_tap): that is fine. */
	if (rc == 0)
		rte_eth_dev_rx_intr_disable(d->port, 0);
	log_restore("lib.ethdev", level);
	if (rc != 0) {
		close(d->epfd);
		d->epfd = -1;
		return;
	}
	d->intr = true;
}

static int queues_start(struct dpdk_dp *d, uint16_t nb_rxd, uint16_t nb_txd)
{
	uint16_t port = d->port;
	int socket = rte_eth_dev_socket_id(port);
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	struct rte_eth_txconf txc = info.default_txconf;
	txc.offloads = (d->tx_ip_offload ? RTE_ETH_TX_OFFLOAD_IPV4_CKSUM : 0) |
		       (d->tx_udp_offload ? RTE_ETH_TX_OFFLOAD_UDP_CKSUM : 0);
	struct rte_eth_rxconf rxc = info.default_rxconf;
	rxc.offloads = (d->rx_ip_offload ? RTE_ETH_RX_OFFLOAD_IPV4_CKSUM : 0) |
		       (d->rx_udp_offload ? RTE_ETH_RX_OFFLOAD_UDP_CKSUM : 0);
	rc = rte_eth_rx_queue_setup(port, 0, nb_rxd, (unsigned)socket, &rxc, d->pool);
	if (rc == 0)
		rc = rte_eth_tx_queue_setup(port, 0, nb_txd, (unsigned)socket, &txc);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	return rc;
}

int gw_dpdk_port_start(struct dpdk_dp *d, uint16_t nb_rxd, uint16_t nb_txd,
		       unsigned wait_ms)
{
	int rc = queues_start(d, nb_rxd, nb_txd);
	if (rc != 0 && d->intr) {
		/* Some NICs refuse rx interrupts only when started. */
		if (configure(d, false) == 0)
			rc = queues_start(d, nb_rxd, nb_txd);
	}
	if (rc != 0 && wait_ms && memif_client(d->port)) {
		uint64_t hz = rte_get_timer_hz();
		uint64_t end = rte_get_timer_cycles() + hz * wait_ms / 1000;
		int level = log_quiet("pmd.net.memif");
		while (rc != 0 && rte_get_timer_cycles() < end) {
			rte_delay_us_sleep(100 * 1000);
			rc = rte_eth_dev_start(d->port);
		}
		log_restore("pmd.net.memif", level);
	}
	if (rc != 0) {
		return GW_ERRF(GW_EIO, "dpdk: port %u: start: %s", d->port, rte_strerror(-rc));
	}
	d->started = true;
	intr_setup(d);
	return GW_OK;
}

/* A memif client whose link stays down is restarted (it connects again:
 * its server may have refused it while it still held a departed client's
 * connection), but only after RETRY_S: the handshake runs on both
 * processes' interrupt threads and takes over a second on a loaded host,
 * and a stop in the middle of it races the interrupt thread (seen: a
 * worker's eal-intr-thread segfaulting in librte_eal while restarts came
 * every 0.5 s). */
#define RETRY_S 3

bool gw_dpdk_link_wait(uint16_t port, unsigned timeout_ms)
{
	uint64_t hz = rte_get_timer_hz(), now = rte_get_timer_cycles();
	uint64_t end = now + hz * timeout_ms / 1000, retry = now + hz * RETRY_S;
	bool reconnect = memif_client(port);
	for (;;) {
		struct rte_eth_link link;
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(port, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			return true;
		now = rte_get_timer_cycles();
		if (now >= end)
			return false;
		if (reconnect && now >= retry) {
			int level = log_quiet("pmd.net.memif");
			rte_eth_dev_stop(port);
			rte_eth_dev_start(port);
			log_restore("pmd.net.memif", level);
			retry = now + hz * RETRY_S;
		}
		rte_delay_us_sleep(10 * 1000);
	}
}

void gw_dpdk_port_stop(struct dpdk_dp *d)
{
	if (d->epfd >= 0) {
		if (d->intr)
			rte_eth_dev_rx_intr_ctl_q(d->port, 0, d->epfd, RTE_INTR_EVENT_DEL, NULL);
		close(d->epfd);
		d->epfd = -1;
	}
	if (d->started) {
		rte_eth_dev_stop(d->port);
		d->started = false;
	}
	/* Closing releases the device (a memif socket, an XDP program);
	 * the EAL stays up for the rest of the process. */
	rte_eth_dev_close(d->port);
}
