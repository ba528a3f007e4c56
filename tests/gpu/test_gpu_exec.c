/* The executor (gpudirect/gpu.c over gpu_cuda.c) as the "cuda" one runs on
 * a GPU, here the "emu" build of the same code over hostcuda: the promises
 * gw/gpudirect.h makes and what a GPU would do to break them —
 *  - on GW_EBUDGET the error buffer is as before (3lc; top-k, a batch
 *    whose later chunk does not fit puts back the earlier ones');
 *  - a launch (or 3lc's memset) that fails midway returns with nothing
 *    queued (a GPU would go on writing into packets the caller then
 *    frees), and the message is CUDA's error, not the "no error" of an
 *    error read twice;
 *  - an executor opened on device 1 launches there from a thread whose
 *    current device is 0, and leaves that thread's device as it was;
 *  - packet regions that share a page register (CUDA pins whole pages),
 *    and the page stays pinned while either holds it;
 *  - two executors on two threads at once (co-located shards) give what
 *    each gives alone: the kernels' shared memory is per block, not a
 *    static two threads would share;
 *  - a device name that is not one is refused with a message. */
#include <pthread.h>
#include <unistd.h>

#include <cuda_runtime_api.h>   /* hostcuda's (GW_HOSTCUDA) */
#include <gw/gpudirect.h>

#include "../gw_test.h"

/* A tensor of n floats and its error buffer, executor memory. */
struct tensor {
	float *g, *e;
	uint64_t n;
};

static void tensor_make(gw_gpu *x, struct tensor *t, uint64_t n, int spread, gw_test_rng *r)
{
	t->n = n;
	GW_CHECK((t->g = gw_gpu_alloc(x, n * 4)) && (t->e = gw_gpu_alloc(x, n * 4)),
		 "executor memory");
	float *h = malloc(n * 4);
	GW_CHECK(h, "out of memory");
	for (uint64_t i = 0; i < n; i++)
		h[i] = gw_test_uniform(r, -1, 1) * (spread && i % spread ? 1e-3f : 1.0f);
	GW_OK_CALL(gw_gpu_copy(x, t->g, h, n * 4));
	for (uint64_t i = 0; i < n; i++)
		h[i] = gw_test_uniform(r, -1e-3f, 1e-3f);
	GW_OK_CALL(gw_gpu_copy(x, t->e, h, n * 4));
	free(h);
}

static void tensor_free(gw_gpu *x, struct tensor *t)
{
	gw_gpu_free(x, t->g);
	gw_gpu_free(x, t->e);
}

/* n packet slots of room bytes in one registered region. */
struct slots {
	uint8_t *mem, *bufs[64];
	uint32_t lens[64];
};

static void slots_make(gw_gpu *x, struct slots *s, uint32_t n, uint32_t room)
{
	GW_CHECK(n <= 64 && (s->mem = calloc(n, room)), "out of memory");
	for (uint32_t i = 0; i < n; i++)
		s->bufs[i] = s->mem + (size_t)i * room;
	GW_OK_CALL(gw_gpu_register(x, s->mem, (size_t)n * room));
}

/* An executor opened as name, a tensor of n floats on it and nslots packet
 * slots of 1424 bytes. GW_EINVAL (nothing made) if name does not open. */
struct rig {
	gw_gpu *x;
	struct tensor t;
	struct slots s;
};

static int rig_open(struct rig *k, const char *name, uint64_t n, uint32_t nslots,
		    gw_test_rng *r)
{
	k->x = gw_gpu_open(name);
	if (!k->x)
		return GW_EINVAL;
	tensor_make(k->x, &k->t, n, 0, r);
	slots_make(k->x, &k->s, nslots, 1424);
	return 0;
}

/* A batch of n chunks of chunk_elems from the rig's tensor (dim elements,
 * feedback into its e) into its slots, room bytes each. */
static struct gw_gpu_chunks rig_chunks(struct rig *k, int codec, uint64_t dim,
				       uint32_t chunk_elems, uint32_t n, uint32_t room)
{
	return (struct gw_gpu_chunks){.codec = codec, .tensor = 1, .g = k->t.g, .e = k->t.e,
				      .dim = dim, .chunk_elems = chunk_elems, .first = 0,
				      .n = n, .bufs = k->s.bufs, .room = room,
				      .lens = k->s.lens};
}

static void rig_close(struct rig *k)
{
	tensor_free(k->x, &k->t);
	gw_gpu_close(k->x);
	free(k->s.mem);
}

/* e after a refused call: bit for bit what it was. */
static void e_unchanged(gw_gpu *x, const struct tensor *t, const float *before,
			const char *what)
{
	float *now = malloc(t->n * 4);
	GW_CHECK(now, "out of memory");
	GW_OK_CALL(gw_gpu_copy(x, now, t->e, t->n * 4));
	for (uint64_t i = 0; i < t->n; i++)
		GW_CHECK(gw_test_bits(now[i]) == gw_test_bits(before[i]),
			 "%s: e[%llu] %08x, was %08x", what, (unsigned long long)i,
			 gw_test_bits(now[i]), gw_test_bits(before[i]));
	free(now);
}

static void test_budget_keeps_e(void **state)
{
	(void)state;
	gw_test_rng r = {3};
	/* 3lc: 1000 elements a chunk, no zero runs: 200 bytes, and a frame of
	 * 160 has room for fewer. */
	struct rig rg;
	GW_CHECK(rig_open(&rg, "emu", 8000, 4, &r) == 0, "emu: %s", gw_error_detail());
	float *before = malloc(rg.t.n * 4);
	GW_CHECK(before, "out of memory");
	GW_OK_CALL(gw_gpu_copy(rg.x, before, rg.t.e, rg.t.n * 4));
	struct gw_gpu_chunks j = rig_chunks(&rg, GW_CODEC_3LC, 4000, 1000, 4, 200);
	j.sparsity = 1.0;
	GW_CHECK(gw_gpu_encode_chunks(rg.x, &j) == GW_EBUDGET, "3lc over budget: %s",
		 gw_error_detail());
	e_unchanged(rg.x, &rg.t, before, "3lc");
	/* top-k, 10 entries of each 2000-element chunk: the first chunks'
	 * entries adjacent (a frame of 36 + 4 * 10 + 9 one-byte gaps), the
	 * last's 199 apart (two-byte gaps, 94 bytes), and room for 90: the
	 * batch is refused after the first chunks were encoded, and their e
	 * must come back. */
	float *h = malloc(rg.t.n * 4);
	GW_CHECK(h, "out of memory");
	for (uint64_t i = 0; i < rg.t.n; i++) {
		int big = i >= 6000 ? i % 199 == 0 : i % 2000 < 10;
		h[i] = big ? 10.0f + (float)(i % 7) : 1e-4f * (float)(i % 13);
	}
	GW_OK_CALL(gw_gpu_copy(rg.x, rg.t.g, h, rg.t.n * 4));
	j.codec = GW_CODEC_TOPK;
	j.fraction = 0.005;
	j.dim = rg.t.n;
	j.chunk_elems = 2000;
	j.room = 90;
	GW_CHECK(gw_gpu_encode_chunks(rg.x, &j) == GW_EBUDGET, "top-k over budget: %s",
		 gw_error_detail());
	GW_CHECK(strstr(gw_error_detail(), "chunk 3"), "the chunk that did not fit: %s",
		 gw_error_detail());
	e_unchanged(rg.x, &rg.t, before, "top-k");
	/* The same batch with room for every chunk: it goes, and e moves. */
	j.room = 1424;
	GW_OK_CALL(gw_gpu_encode_chunks(rg.x, &j));
	free(h);
	free(before);
	rig_close(&rg);
}

static void test_failed_launch_drains(void **state)
{
	(void)state;
	gw_test_rng r = {4};
	struct rig rg;
	GW_CHECK(rig_open(&rg, "emu", 8000, 8, &r) == 0, "emu: %s", gw_error_detail());
	struct gw_gpu_chunks j = rig_chunks(&rg, GW_CODEC_TOPK, rg.t.n, 1000, 8, 1424);
	j.fraction = 0.01;
	uint64_t l0 = gw_hcu_launches();
	GW_CHECK(gw_gpu_encode_chunks(rg.x, &j) == GW_OK, "top-k: %s", gw_error_detail());
	uint64_t per_batch = gw_hcu_launches() - l0;
	GW_CHECK(per_batch > 16, "%llu launches a batch", (unsigned long long)per_batch);
	/* A launch in the batch's second half fails: the first half's are
	 * queued and must be waited for before the call returns. */
	gw_hcu_fail(GW_HCU_LAUNCH, (unsigned)(per_batch * 5 / 8), cudaErrorLaunchOutOfResources);
	GW_CHECK(gw_gpu_encode_chunks(rg.x, &j) == GW_EIO, "a failed launch: %s",
		 gw_error_detail());
	GW_CHECK(gw_hcu_pending() == 0, "%u operations still queued after the error",
		 gw_hcu_pending());
	GW_CHECK(strstr(gw_error_detail(), "too many resources requested for launch"),
		 "the message names CUDA's error: %s", gw_error_detail());
	/* 3lc's max launch zeroes its word with a memset first: a memset that
	 * fails is the call's error (unchecked, the max ran over garbage). */
	struct gw_gpu_chunks k = j;
	k.codec = GW_CODEC_3LC;
	k.sparsity = 1.0;
	gw_hcu_fail(GW_HCU_MEMSET, 1, cudaErrorInvalidValue);
	GW_CHECK(gw_gpu_encode_chunks(rg.x, &k) < 0 && strstr(gw_error_detail(), "3lc max"),
		 "a failed memset: %s", gw_error_detail());
	GW_CHECK(gw_hcu_pending() == 0, "queued after a failed memset");
	/* A failed decode launch, alone: the same. */
	int32_t rcs[8];
	GW_OK_CALL(gw_gpu_encode_chunks(rg.x, &j));
	gw_hcu_fail(GW_HCU_LAUNCH, 1, cudaErrorLaunchOutOfResources);
	GW_CHECK(gw_gpu_decode(rg.x, GW_CODEC_TOPK, (const uint8_t *const *)rg.s.bufs,
			       rg.s.lens, 8, rg.t.g, rg.t.n, rcs) == GW_EIO,
		 "a failed decode launch");
	GW_CHECK(gw_hcu_pending() == 0, "queued after a failed decode");
	/* And the executor works again. */
	GW_OK_CALL(gw_gpu_decode(rg.x, GW_CODEC_TOPK, (const uint8_t *const *)rg.s.bufs,
				 rg.s.lens, 8, rg.t.g, rg.t.n, rcs));
	rig_close(&rg);
}

struct on_thread {
	gw_gpu *x;
	struct tensor *t;
	struct slots *s;
	int rc, dev_before, dev_after, launched_on;
};

static void *encode_on_thread(void *arg)
{
	struct on_thread *o = arg;
	cudaGetDevice(&o->dev_before);
	struct gw_gpu_chunks j = {.codec = GW_CODEC_INT8, .tensor = 1, .g = o->t->g,
				  .dim = o->t->n, .chunk_elems = 1000, .first = 0, .n = 4,
				  .bufs = o->s->bufs, .room = 1424, .lens = o->s->lens};
	o->rc = gw_gpu_encode_chunks(o->x, &j);
	o->launched_on = gw_hcu_last_device();
	cudaGetDevice(&o->dev_after);
	return NULL;
}

static void test_device_from_any_thread(void **state)
{
	(void)state;
	gw_test_rng r = {5};
	/* Opened while device 1 is current (as a rank on cuda:1 opens it). */
	GW_CHECK(cudaSetDevice(1) == cudaSuccess, "hostcuda has a device 1 (GW_HCU_DEVICES)");
	struct rig rg;
	GW_CHECK(rig_open(&rg, "emu", 4000, 4, &r) == 0, "emu: %s", gw_error_detail());
	cudaSetDevice(0);
	/* A new thread (a progress thread) starts on device 0. */
	struct on_thread o = {.x = rg.x, .t = &rg.t, .s = &rg.s};
	pthread_t th;
	GW_CHECK(pthread_create(&th, NULL, encode_on_thread, &o) == 0, "thread");
	pthread_join(th, NULL);
	GW_CHECK(o.dev_before == 0, "a new thread's device is 0 (%d)", o.dev_before);
	GW_CHECK(o.rc == GW_OK, "encode from a thread on device 0: %s", gw_error_detail());
	GW_CHECK(o.launched_on == 1, "launched on device %d, not the executor's 1",
		 o.launched_on);
	GW_CHECK(o.dev_after == 0, "the thread's device left at %d", o.dev_after);
	rig_close(&rg);
	/* Named: emu:1 is device 1 whatever is current. */
	gw_gpu *x = gw_gpu_open("emu:1");
	struct tensor t;
	GW_CHECK(x, "emu:1: %s", gw_error_detail());
	tensor_make(x, &t, 1000, 0, &r);
	GW_CHECK(gw_hcu_last_device() == 1, "emu:1's copies on device %d", gw_hcu_last_device());
	tensor_free(x, &t);
	gw_gpu_close(x);
}

static void test_regions_share_a_page(void **state)
{
	(void)state;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem = aligned_alloc(pg, 3 * pg);
	GW_CHECK(mem, "out of memory");
	gw_gpu *a = gw_gpu_open("emu"), *b = gw_gpu_open("emu");
	GW_CHECK(a && b, "emu: %s", gw_error_detail());
	/* Two pools meeting mid-page, as mempools without hugepages do; one
	 * executor, then two (two co-located shards). */
	GW_OK_CALL(gw_gpu_register(a, mem, pg + pg / 2));
	GW_OK_CALL(gw_gpu_register(a, mem + pg + pg / 2, pg + pg / 2));
	GW_CHECK(gw_gpu_registered(a, mem, pg) && gw_gpu_registered(a, mem + 2 * pg, pg),
		 "both regions registered");
	GW_OK_CALL(gw_gpu_register(b, mem + pg + pg / 2, pg + pg / 2));
	/* CUDA itself refuses the shared page again: it is pinned. */
	GW_CHECK(cudaHostRegister(mem + pg, pg, cudaHostRegisterMapped) ==
		 cudaErrorHostMemoryAlreadyRegistered, "the shared page is pinned");
	gw_gpu_close(a);
	GW_CHECK(cudaHostRegister(mem + pg, pg, cudaHostRegisterMapped) ==
		 cudaErrorHostMemoryAlreadyRegistered, "b still holds the shared page");
	/* (a's first page stays pinned too: CUDA unpins a registration whole,
	 * and it was registered with the shared page.) b encodes into its
	 * region, the refused registrations above notwithstanding: they left
	 * an error for cudaGetLastError, which must not pass for a launch's. */
	gw_test_rng r = {9};
	struct tensor t;
	tensor_make(b, &t, 4000, 0, &r);
	uint8_t *bufs[4];
	uint32_t lens[4];
	for (int i = 0; i < 4; i++)
		bufs[i] = mem + pg + pg / 2 + (size_t)i * 1424;
	struct gw_gpu_chunks j = {.codec = GW_CODEC_INT8, .tensor = 1, .g = t.g, .dim = t.n,
				  .chunk_elems = 1000, .first = 0, .n = 4, .bufs = bufs,
				  .room = 1424, .lens = lens};
	GW_CHECK(gw_gpu_encode_chunks(b, &j) == GW_OK, "encode into the region: %s",
		 gw_error_detail());
	tensor_free(b, &t);
	gw_gpu_close(b);
	GW_CHECK(cudaHostRegister(mem, 3 * pg, cudaHostRegisterMapped) == cudaSuccess,
		 "every page unpinned once both are closed");
	cudaHostUnregister(mem);
	free(mem);
}

/* One executor's int8 frames of a tensor, on the calling thread. */
struct job {
	uint64_t seed;
	uint8_t frames[4 * 1424];
	uint32_t lens[4];
	int rc;
};

static void *int8_job(void *arg)
{
	struct job *b = arg;
	gw_test_rng r = {b->seed};
	struct rig rg;
	if ((b->rc = rig_open(&rg, "emu", 4000, 4, &r)))
		return NULL;
	struct gw_gpu_chunks j = rig_chunks(&rg, GW_CODEC_INT8, rg.t.n, 1000, 4, 1424);
	j.lens = b->lens;
	for (int round = 0; round < 20 && (b->rc = gw_gpu_encode_chunks(rg.x, &j)) == GW_OK;
	     round++)
		;
	memcpy(b->frames, rg.s.mem, sizeof(b->frames));
	rig_close(&rg);
	return NULL;
}

static void test_two_threads(void **state)
{
	(void)state;
	static struct job alone[2], both[2];
	for (int i = 0; i < 2; i++) {
		alone[i].seed = both[i].seed = 10 + (uint64_t)i;
		int8_job(&alone[i]);
		GW_CHECK(alone[i].rc == GW_OK, "alone %d: %d %s", i, alone[i].rc, gw_error_detail());
	}
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		GW_CHECK(pthread_create(&th[i], NULL, int8_job, &both[i]) == 0, "thread");
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		GW_CHECK(both[i].rc == GW_OK, "thread %d: %s", i, gw_error_detail());
		GW_CHECK(!memcmp(both[i].frames, alone[i].frames, sizeof(both[i].frames)) &&
			 !memcmp(both[i].lens, alone[i].lens, sizeof(both[i].lens)),
			 "executor %d's frames on two threads differ from alone", i);
	}
}

static void test_bad_names(void **state)
{
	(void)state;
	static const char *bad[] = {"emu:", "emu:x", "emu:-1", "emu:1x", "emu:7", "gpu", "cuda:", "cud", "emu0"};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad); i++) {
		gw_gpu *x = gw_gpu_open(bad[i]);
		GW_CHECK(!x, "'%s' opened", bad[i]);
		GW_CHECK(gw_error_detail() && *gw_error_detail(), "'%s': no message", bad[i]);
		printf("'%s': %s\n", bad[i], gw_error_detail());
	}
}

GW_TEST_MAIN("gpu-exec", 0, cmocka_unit_test(test_budget_keeps_e),
	     cmocka_unit_test(test_failed_launch_drains),
	     cmocka_unit_test(test_device_from_any_thread),
	     cmocka_unit_test(test_regions_share_a_page), cmocka_unit_test(test_two_threads),
	     cmocka_unit_test(test_bad_names))
