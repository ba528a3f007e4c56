/* Datagrams that are not gradwire's, sent straight at an RDMA gw_dp with
 * raw verbs (a UD QP of the test's own, the peer resolved through
 * librdmacm as the backend resolves one): a SEND without the immediate, an
 * immediate that is no port (0, or above 65535), and one longer than the
 * gw_dp takes. Each must be dropped and counted in rx_bad, never
 * delivered, and the gw_dp must keep receiving: after each, a well-formed
 * datagram (immediate = a port) arrives with its bytes and the sender's
 * IP:port. Whether its bytes are a gradwire packet is the stream's and the
 * aggregator's business (their rx 'bad' counters), not the backend's.
 * Needs an RDMA device at 10.0.0.1 (GW_RDMA_IP): scripts/rdma-vm.sh; skips
 * (77) elsewhere with the backend's reason. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <gw/dataplane.h>

#include "gw_util.h"

#include "../gw_rdma_test.h"
#include "../gw_test.h"

#define PAYLOAD 1024u           /* the victim's buffers (payload=) */
#define BIG 2048u               /* a datagram longer than that */
#define WAIT_NS 10000000000ull  /* any one exchange: 10 s (TCG is slow) */

static const char *ip;
static gw_dp *victim;
static gw_endpoint victim_ep;

/* The test's sender: its own UD QP on the same device. */
static struct {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint32_t qpn, qkey;
	uint8_t buf[BIG];
} tx;

/* Lets the victim run (it answers the resolution from its rx path) while
 * the sender's CM event comes; NULL after WAIT_NS. */
static struct rdma_cm_event *cm_event(enum rdma_cm_event_type want)
{
	uint64_t end = gw_now_ns() + WAIT_NS;
	while (gw_now_ns() < end) {
		struct rdma_cm_event *ev;
		if (rdma_get_cm_event(tx.ec, &ev) == 0) {
			if (ev->event == want && ev->status == 0)
				return ev;
			print_error("rdma_cm: %s (status %d), waiting for %s\n",
				    rdma_event_str(ev->event), ev->status, rdma_event_str(want));
			rdma_ack_cm_event(ev);
			return NULL;
		}
		gw_pkt *p[8];
		gw_dp_wait(victim, 2000);
		int n = gw_dp_rx_burst(victim, p, 8);
		if (n > 0)
			gw_dp_free(victim, p, (unsigned)n);
	}
	return NULL;
}

static int sender_up(void)
{
	struct sockaddr_in src = {.sin_family = AF_INET}, dst = src;
	inet_pton(AF_INET, ip, &src.sin_addr);
	dst.sin_addr.s_addr = htonl(victim_ep.ip);
	dst.sin_port = htons(victim_ep.port);
	tx.ec = rdma_create_event_channel();
	if (!tx.ec || fcntl(tx.ec->fd, F_SETFL, O_NONBLOCK) < 0 ||
	    rdma_create_id(tx.ec, &tx.id, NULL, RDMA_PS_UDP) < 0 ||
	    rdma_resolve_addr(tx.id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000) < 0)
		return -1;
	struct rdma_cm_event *ev = cm_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	if (!ev)
		return -1;
	rdma_ack_cm_event(ev);
	tx.pd = ibv_alloc_pd(tx.id->verbs);
	tx.cq = tx.pd ? ibv_create_cq(tx.id->verbs, 16, NULL, NULL, 0) : NULL;
	tx.mr = tx.cq ? ibv_reg_mr(tx.pd, tx.buf, sizeof(tx.buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp_init_attr qa = {.send_cq = tx.cq, .recv_cq = tx.cq, .qp_type = IBV_QPT_UD,
				      .cap = {.max_send_wr = 8, .max_recv_wr = 1,
					      .max_send_sge = 1, .max_recv_sge = 1}};
	/* For UD, librdmacm takes the QP to RTS itself. */
	if (!tx.mr || rdma_create_qp(tx.id, tx.pd, &qa) < 0 ||
	    rdma_resolve_route(tx.id, 2000) < 0)
		return -1;
	if (!(ev = cm_event(RDMA_CM_EVENT_ROUTE_RESOLVED)))
		return -1;
	rdma_ack_cm_event(ev);
	struct rdma_conn_param cp = {.qp_num = tx.id->qp->qp_num};
	if (rdma_connect(tx.id, &cp) < 0 || !(ev = cm_event(RDMA_CM_EVENT_ESTABLISHED)))
		return -1;
	tx.ah = ibv_create_ah(tx.pd, &ev->param.ud.ah_attr);
	tx.qpn = ev->param.ud.qp_num;
	tx.qkey = ev->param.ud.qkey;
	rdma_ack_cm_event(ev);
	return tx.ah ? 0 : -1;
}

static int group_setup(void **state)
{
	(void)state;
	char local[64];
	snprintf(local, sizeof(local), "%s:0", ip);
	gw_dp_config dc = {.backend = "rdma", .opts = "payload=1024"};
	if (gw_endpoint_parse(local, &dc.local) < 0 || gw_dp_open(&dc, &victim) < 0) {
		print_error("opening the rdma gw_dp at %s: %s\n", local, gw_error_detail());
		return -1;
	}
	gw_dp_local(victim, &victim_ep);
	if (gw_dp_payload_max(victim) != PAYLOAD) {
		print_error("payload=1024 gave a payload_max of %u\n", gw_dp_payload_max(victim));
		return -1;
	}
	if (sender_up() < 0) {
		print_error("the test's sender could not reach the gw_dp: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tx.ah)
		ibv_destroy_ah(tx.ah);
	if (tx.id && tx.id->qp)
		rdma_destroy_qp(tx.id);
	if (tx.mr)
		ibv_dereg_mr(tx.mr);
	if (tx.cq)
		ibv_destroy_cq(tx.cq);
	if (tx.pd)
		ibv_dealloc_pd(tx.pd);
	if (tx.id)
		rdma_destroy_id(tx.id);
	if (tx.ec)
		rdma_destroy_event_channel(tx.ec);
	gw_dp_close(victim);
	return 0;
}

/* Posts one datagram of len bytes (with imm unless imm < 0) and waits for
 * its send completion. */
static void send_raw(uint32_t len, int64_t imm, uint8_t fill)
{
	memset(tx.buf, fill, len);
	struct ibv_sge sge = {.addr = (uintptr_t)tx.buf, .length = len, .lkey = tx.mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1,
				 .opcode = imm < 0 ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM,
				 .send_flags = IBV_SEND_SIGNALED,
				 .imm_data = imm < 0 ? 0 : htonl((uint32_t)imm),
				 .wr = {.ud = {.ah = tx.ah, .remote_qpn = tx.qpn,
					       .remote_qkey = tx.qkey}}},
			   *bad;
	GW_CHECK(ibv_post_send(tx.id->qp, &wr, &bad) == 0, "ibv_post_send: %s", strerror(errno));
	uint64_t end = gw_now_ns() + WAIT_NS;
	struct ibv_wc wc;
	int n;
	while ((n = ibv_poll_cq(tx.cq, 1, &wc)) == 0 && gw_now_ns() < end)
		nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
	GW_CHECK(n == 1 && wc.status == IBV_WC_SUCCESS, "the send did not complete: %s",
		 n == 1 ? ibv_wc_status_str(wc.status) : "no completion in 10 s");
}

static uint64_t rx_bad(void)
{
	gw_dp_stats st;
	gw_dp_stats_get(victim, &st);
	return st.rx_bad;
}

/* Receives until one packet arrives or rx_bad reaches bad_want; returns
 * the packets received (at most one kept in *got). */
static int receive(uint64_t bad_want, gw_pkt **got)
{
	uint64_t end = gw_now_ns() + WAIT_NS;
	int n = 0;
	while (!n && rx_bad() < bad_want && gw_now_ns() < end) {
		gw_dp_wait(victim, 100000);
		n = gw_dp_rx_burst(victim, got, 1);
		GW_CHECK(n >= 0, "rx_burst failed: %s", gw_error_detail());
	}
	return n;
}

/* A well-formed datagram still arrives whole, from the sender's IP and
 * the port its immediate names. */
static void still_receives(void)
{
	uint64_t bad = rx_bad();
	send_raw(200, 4242, 0x5a);
	gw_pkt *p;
	GW_CHECK(receive(UINT64_MAX, &p) == 1, "nothing arrived after the hostile datagram");
	gw_endpoint want;
	char s[64];
	snprintf(s, sizeof(s), "%s:4242", ip);
	gw_endpoint_parse(s, &want);
	GW_CHECK(p->len == 200 && p->peer.ip == want.ip && p->peer.port == 4242,
		 "got %u bytes from %08x:%u", p->len, p->peer.ip, p->peer.port);
	for (uint32_t i = 0; i < p->len; i++)
		GW_CHECK(p->data[i] == 0x5a, "byte %u changed", i);
	gw_dp_free(victim, &p, 1);
	GW_CHECK(rx_bad() == bad, "a well-formed datagram was counted bad");
}

static void dropped(uint32_t len, int64_t imm)
{
	uint64_t bad = rx_bad();
	send_raw(len, imm, 0xa5);
	gw_pkt *p;
	int n = receive(bad + 1, &p);
	if (n)
		gw_dp_free(victim, &p, 1);
	GW_CHECK(n == 0, "a datagram that is not gradwire's was delivered (%u bytes)",
		 n ? p->len : 0);
	GW_CHECK(rx_bad() == bad + 1, "rx_bad went from %llu to %llu", (unsigned long long)bad,
		 (unsigned long long)rx_bad());
	still_receives();
}

static void test_well_formed(void **state)
{
	(void)state;
	still_receives();
}

static void test_no_immediate(void **state)
{
	(void)state;
	dropped(200, -1);
}

static void test_port_zero(void **state)
{
	(void)state;
	dropped(200, 0);
}

static void test_immediate_above_ports(void **state)
{
	(void)state;
	dropped(200, 65536 + 4242);
}

/* Longer than the gw_dp's payload_max (payload=1024) though within the
 * path MTU: dropped by the backend. Its receive buffers hold 4096 bytes
 * whatever payload= says; with buffers of payload_max this datagram
 * completed with a length error and rxe stopped the QP (the check after
 * it failed: nothing arrived any more). */
static void test_longer_than_payload_max(void **state)
{
	(void)state;
	dropped(BIG, 4242);
}

/* The dma-buf probe (gw_dp_dmabuf) on soft-RoCE: rxe registers no
 * dma-buf memory, so a GPU's frames go through the MR over the packet
 * slots; the probe says so without failing the dataplane, which still
 * receives. */
static void test_dmabuf_probe(void **state)
{
	(void)state;
	int rc = gw_dp_dmabuf(victim);
	GW_CHECK(rc == 0, "rxe: gw_dp_dmabuf returned %d", rc);
	GW_CHECK(strstr(gw_error_detail(), "does not register dma-buf memory"), "detail: %s",
		 gw_error_detail());
	printf("rxe: %s\n", gw_error_detail());
	still_receives();
}

int main(void)
{
	ip = gw_rdma_test_ip("test_rdma_hostile");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_well_formed),
		cmocka_unit_test(test_no_immediate),
		cmocka_unit_test(test_port_zero),
		cmocka_unit_test(test_immediate_above_ports),
		cmocka_unit_test(test_longer_than_payload_max),
		cmocka_unit_test(test_dmabuf_probe),
	};
	return cmocka_run_group_tests_name("rdma_hostile", tests, group_setup, group_teardown);
}
