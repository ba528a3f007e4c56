/* Fuzzes CTRL packets (collective/coll_ctrl.c, wire-format §5.10), the
 * receive path of liveness and of the job digest. Input: byte 0 picks the
 * receiver's layout (bit 0: keyed), the rest is used twice:
 *
 *  (a) as a packet, as it arrives: coll_ctrl_read() never reads past it
 *      (a heap block of exactly its size) and returns a verdict; one it
 *      accepts (COLL_OK) is a CTRL of the job, 160 bytes (+ the MAC when
 *      keyed), kind 1-4, role 0-1, reserved bytes zero, and its fields are
 *      the wire bytes; written again with coll_ctrl_write() from what was
 *      read, it is the same packet (seq aside, the text up to its NUL).
 *  (b) as the fields of a CTRL the layout writes (kind, role, sender,
 *      round, subject, silence, incarnation, text): read back, it is accepted with
 *      exactly those fields and the layout's digest, and the digest shows
 *      no difference with itself; one flipped bit, anywhere, is rejected
 *      (checksum or MAC) — a flip in the checksum field included.
 * Digests of the input's bytes are compared both ways: a difference is
 * named both ways or neither. */
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"
#include "fuzz_common.h"

static struct coll_layout layout(int keyed)
{
	struct coll_layout L = {0};
	L.job = (gw_coll_job){.job = 0x63746c, .dim = 100000, .workers = 4, .shards = 2,
			      .chunk_elems = 320, .window = 64, .up_codec = GW_CODEC_RAW,
			      .down_codec = GW_CODEC_3LC, .mode = GW_COLL_RELIABLE};
	L.payload = 1472;
	if (keyed) {
		L.keyed = 1;
		for (unsigned i = 0; i < GW_KEY_LEN; i++)
			L.key[i] = (uint8_t)(i * 7 + 1);
		L.key_fp = 0x0123456789abcdefull;
	}
	return L;
}

static void check_accepted(const struct coll_layout *L, const uint8_t *p, size_t len,
			   const struct coll_ctrl *m)
{
	GW_FUZZ_CHECK(len == GW_PKT_HDR_LEN + COLL_CTRL_LEN + (L->keyed ? GW_PKT_MAC_LEN : 0));
	const uint8_t *b = p + GW_PKT_HDR_LEN;
	GW_FUZZ_CHECK(p[GW_PKT_OFF_TYPE] == GW_PKT_CTRL);
	GW_FUZZ_CHECK(m->kind >= COLL_CTRL_HEARTBEAT && m->kind <= COLL_CTRL_KIND_MAX);
	GW_FUZZ_CHECK(m->role <= COLL_ROLE_SHARD && m->kind == b[0] && m->role == b[1]);
	static const int reserved[][2] = {{2, 4}, {65, 72}};
	for (size_t r = 0; r < sizeof(reserved) / sizeof(reserved[0]); r++)
		for (int i = reserved[r][0]; i < reserved[r][1]; i++)
			GW_FUZZ_CHECKF(!b[i], "reserved byte %d is %u", i, b[i]);
	GW_FUZZ_CHECK(m->subject == gw_fuzz_ld32(b + 4) && m->silent_ms == gw_fuzz_ld32(b + 8) &&
		      m->incarnation == gw_fuzz_ld32(b + 12));
	GW_FUZZ_CHECK(m->from == (uint16_t)(p[6] | p[7] << 8));
	GW_FUZZ_CHECK(m->d.tensors == gw_fuzz_ld32(b + 24) && m->d.layout == gw_fuzz_ld32(b + 28));
	/* Written again from what was read: the same body. */
	uint8_t q[GW_PKT_HDR_LEN + COLL_CTRL_LEN + GW_PKT_MAC_LEN];
	struct coll_ctrl w = *m;
	uint32_t n = coll_ctrl_write(L, q, &w);
	GW_FUZZ_CHECK(n == len);
	size_t tl = strnlen((const char *)b + 72, COLL_CTRL_TEXT);
	if (tl < COLL_CTRL_TEXT - 1) {
		int zero_tail = 1;
		for (size_t i = 72 + tl; i < COLL_CTRL_LEN; i++)
			zero_tail &= !b[i];
		/* The layout's own digest went out; the read one came in. */
		struct coll_digest mine;
		coll_digest_of(L, &mine);
		if (zero_tail && !memcmp(&mine, &m->d, sizeof(mine)))
			GW_FUZZ_CHECK(!memcmp(q + GW_PKT_HDR_LEN, b, COLL_CTRL_LEN));
	}
}

static void as_is(const struct coll_layout *L, const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);
	GW_FUZZ_CHECK(p);
	memcpy(p, data, size);
	gw_pkt pkt = {.data = p, .len = (uint32_t)size, .room = (uint32_t)size};
	struct coll_ctrl m;
	enum coll_verdict v = coll_ctrl_read(L, &pkt, &m);
	GW_FUZZ_CHECK(v >= COLL_OK && v <= COLL_FORGED);
	if (v == COLL_OK)
		check_accepted(L, p, size, &m);
	free(p);
}

static void derived(const struct coll_layout *L, const uint8_t *data, size_t size)
{
	uint8_t f[48] = {0};
	memcpy(f, data, size < sizeof(f) ? size : sizeof(f));
	struct coll_ctrl m = {.kind = (uint8_t)(1 + f[0] % 4), .role = f[1] & 1,
			      .from = (uint16_t)(f[2] | f[3] << 8), .round = gw_fuzz_ld32(f + 4),
			      .subject = gw_fuzz_ld32(f + 8), .silent_ms = gw_fuzz_ld32(f + 12),
			      .incarnation = gw_fuzz_ld32(f + 44)};
	for (size_t i = 0; i < 31; i++)
		m.text[i] = (char)(f[16 + i] ? f[16 + i] : 0);
	uint8_t p[GW_PKT_HDR_LEN + COLL_CTRL_LEN + GW_PKT_MAC_LEN];
	uint32_t len = coll_ctrl_write(L, p, &m);
	gw_pkt pkt = {.data = p, .len = len, .room = len};
	struct coll_ctrl r;
	GW_FUZZ_CHECK(coll_ctrl_read(L, &pkt, &r) == COLL_OK);
	GW_FUZZ_CHECK(r.kind == m.kind && r.role == m.role && r.from == m.from &&
		      r.round == m.round && r.subject == m.subject && r.silent_ms == m.silent_ms &&
		      r.incarnation == m.incarnation);
	GW_FUZZ_CHECK(!strncmp(r.text, m.text, COLL_CTRL_TEXT));
	char why[160];
	struct coll_digest mine;
	coll_digest_of(L, &mine);
	GW_FUZZ_CHECK(!coll_digest_diff(&mine, &r.d, why, sizeof(why)));
	check_accepted(L, p, len, &r);
	size_t bit = (size_t)gw_fuzz_ld32(f + 40) % (8u * len);
	p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	GW_FUZZ_CHECKF(coll_ctrl_read(L, &pkt, &r) != COLL_OK, "bit %zu flipped, accepted", bit);
}

/* Two digests from the input: a difference is named both ways or neither. */
static void digests(const uint8_t *data, size_t size)
{
	uint8_t f[2][40] = {{0}};
	for (size_t i = 0; i < sizeof(f); i++)
		f[i / 40][i % 40] = i < size ? data[i] : 0;
	struct coll_digest d[2];
	for (int k = 0; k < 2; k++)
		d[k] = (struct coll_digest){.dim = gw_fuzz_ld32(f[k]) % 4, .key_fp = f[k][4] % 2,
			.workers = f[k][5] % 3, .shards = f[k][6] % 2, .chunk_elems = f[k][7] % 2,
			.payload = f[k][8] % 2, .window = f[k][9] % 2, .engine = f[k][10] % 3,
			.up = f[k][11] % 12, .down = f[k][12] % 12, .mode = f[k][13] % 2,
			.keyed = f[k][14] % 2};
	char a[160], b[160];
	int x = coll_digest_diff(&d[0], &d[1], a, sizeof(a));
	int y = coll_digest_diff(&d[1], &d[0], b, sizeof(b));
	GW_FUZZ_CHECK(x == y);
	GW_FUZZ_CHECK(!coll_digest_diff(&d[0], &d[0], a, sizeof(a)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	GW_FUZZ_CHECK(coll_wire_register() == 0);   /* what a layout does */
	struct coll_layout L = layout(data[0] & 1);
	as_is(&L, data + 1, size - 1);
	derived(&L, data + 1, size - 1);
	digests(data + 1, size - 1);
	gw_fuzz_last_rc = GW_OK;
	return 0;
}
