/* hostcuda's runtime API (cuda_runtime_api.h, hostcuda.h): device memory
 * is host memory, streams are queues run when the host waits for them,
 * registration is checked page by page as CUDA does it. One lock guards
 * the process-wide state (streams' queues, registrations, the sticky
 * error); kernels run without it, on the thread that waits. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hc_internal.h"

#define HCU_REG_MAX 256

enum op_kind { OP_KERNEL, OP_COPY, OP_SET };

struct op {
	enum op_kind kind;
	struct hcu_kernel k;
	void *dst;
	const void *src;
	size_t n;
	int v;
	struct op *next;
};

struct gw_hcu_stream {
	int dev;
	struct op *head, *tail;
	unsigned pending;
	struct gw_hcu_stream *next;   /* every stream, for device-wide waits */
};

static pthread_mutex_t hcu_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gw_hcu_stream *hcu_streams;
static struct gw_hcu_stream hcu_legacy[16];   /* each device's default stream */
static int hcu_ndev = -1;
static int hcu_sticky;
static uint64_t hcu_nlaunch;
static int hcu_lastdev = -1;
static struct { uintptr_t lo, hi; } hcu_reg[HCU_REG_MAX];
static unsigned hcu_nreg;
static struct { unsigned nth; int err; } hcu_faults[GW_HCU_NFAULTS];
static uint64_t hcu_seed_v, hcu_epoch;
static int hcu_seeded;

static _Thread_local int hcu_dev;           /* the thread's current device */
static _Thread_local cudaError_t hcu_last;  /* what cudaGetLastError returns */
static _Thread_local uint64_t hcu_rng, hcu_rng_epoch;
static _Thread_local int hcu_rng_set;

/* ---- schedules -------------------------------------------------------------- */

uint64_t gw_hcu_seed(void)
{
	pthread_mutex_lock(&hcu_mu);
	if (!hcu_seeded) {
		const char *e = getenv("GW_HCU_SEED");
		hcu_seed_v = e && *e ? strtoull(e, NULL, 0) : 1;
		hcu_seeded = 1;
	}
	uint64_t s = hcu_seed_v;
	pthread_mutex_unlock(&hcu_mu);
	return s;
}

void gw_hcu_set_seed(uint64_t seed)
{
	pthread_mutex_lock(&hcu_mu);
	hcu_seed_v = seed;
	hcu_seeded = 1;
	hcu_epoch++;
	pthread_mutex_unlock(&hcu_mu);
}

uint64_t hcu_rand(void)
{
	if (!hcu_rng_set || hcu_rng_epoch != hcu_epoch) {
		hcu_rng = gw_hcu_seed() * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
		hcu_rng_epoch = hcu_epoch;
		hcu_rng_set = 1;
	}
	uint64_t z = (hcu_rng += 0x9e3779b97f4a7c15ull);   /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- errors ------------------------------------------------------------------- */

void gw_hcu_fail(enum gw_hcu_fault kind, unsigned nth, int err)
{
	if (kind >= GW_HCU_NFAULTS)
		return;
	pthread_mutex_lock(&hcu_mu);
	hcu_faults[kind].nth = nth;
	hcu_faults[kind].err = err;
	pthread_mutex_unlock(&hcu_mu);
}

/* cudaSuccess, or the injected error for this call of kind. */
static cudaError_t fault(enum gw_hcu_fault kind)
{
	cudaError_t e = cudaSuccess;
	pthread_mutex_lock(&hcu_mu);
	if (hcu_faults[kind].nth && --hcu_faults[kind].nth == 0)
		e = (cudaError_t)hcu_faults[kind].err;
	pthread_mutex_unlock(&hcu_mu);
	return e;
}

static cudaError_t sticky(void)
{
	pthread_mutex_lock(&hcu_mu);
	cudaError_t e = (cudaError_t)hcu_sticky;
	pthread_mutex_unlock(&hcu_mu);
	return e;
}

int gw_hcu_clear_sticky(void)
{
	pthread_mutex_lock(&hcu_mu);
	int e = hcu_sticky;
	hcu_sticky = 0;
	pthread_mutex_unlock(&hcu_mu);
	return e;
}

static cudaError_t set_last(cudaError_t e)
{
	if (e != cudaSuccess)
		hcu_last = e;
	return e;
}

cudaError_t gw_hcu_get_last_error(void)
{
	cudaError_t e = hcu_last;
	hcu_last = cudaSuccess;
	return e != cudaSuccess ? e : sticky();
}

cudaError_t gw_hcu_peek_last_error(void)
{
	return hcu_last != cudaSuccess ? hcu_last : sticky();
}

const char *gw_hcu_error_string(cudaError_t e)
{
	switch (e) {
	case cudaSuccess: return "no error";
	case cudaErrorInvalidValue: return "invalid argument";
	case cudaErrorMemoryAllocation: return "out of memory";
	case cudaErrorInvalidConfiguration: return "invalid configuration argument";
	case cudaErrorInvalidDevicePointer: return "invalid device pointer";
	case cudaErrorInvalidDevice: return "invalid device ordinal";
	case cudaErrorNoDevice: return "no CUDA-capable device is detected";
	case cudaErrorInvalidResourceHandle: return "invalid resource handle";
	case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
	case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
	case cudaErrorHostMemoryAlreadyRegistered:
		return "part or all of the requested memory range is already mapped";
	case cudaErrorHostMemoryNotRegistered:
		return "pointer does not correspond to a registered memory region";
	case cudaErrorLaunchFailure: return "unspecified launch failure";
	}
	return "unrecognized error code";
}

/* ---- devices -------------------------------------------------------------------- */

static int ndev(void)
{
	pthread_mutex_lock(&hcu_mu);
	if (hcu_ndev < 0) {
		const char *e = getenv("GW_HCU_DEVICES");
		long n = e && *e ? strtol(e, NULL, 10) : 2;
		hcu_ndev = n < 0 ? 0 : n > 16 ? 16 : (int)n;
		for (int d = 0; d < 16; d++)
			hcu_legacy[d].dev = d;
	}
	int n = hcu_ndev;
	pthread_mutex_unlock(&hcu_mu);
	return n;
}

cudaError_t gw_hcu_get_device_count(int *n)
{
	if (!n)
		return set_last(cudaErrorInvalidValue);
	*n = ndev();
	return *n ? cudaSuccess : set_last(cudaErrorNoDevice);
}

cudaError_t gw_hcu_get_device(int *dev)
{
	if (!dev)
		return set_last(cudaErrorInvalidValue);
	*dev = hcu_dev;
	return cudaSuccess;
}

cudaError_t gw_hcu_set_device(int dev)
{
	if (dev < 0 || dev >= ndev())
		return set_last(cudaErrorInvalidDevice);
	hcu_dev = dev;
	return cudaSuccess;
}

uint64_t gw_hcu_launches(void)
{
	pthread_mutex_lock(&hcu_mu);
	uint64_t n = hcu_nlaunch;
	pthread_mutex_unlock(&hcu_mu);
	return n;
}

int gw_hcu_last_device(void)
{
	pthread_mutex_lock(&hcu_mu);
	int d = hcu_lastdev;
	pthread_mutex_unlock(&hcu_mu);
	return d;
}

/* ---- streams ---------------------------------------------------------------------- */

/* The stream work goes to: s, or the current device's default stream.
 * NULL (cudaErrorInvalidResourceHandle) for a stream of another device. */
static struct gw_hcu_stream *stream_for(cudaStream_t s)
{
	if (ndev() == 0)
		return NULL;
	if (!s)
		return &hcu_legacy[hcu_dev];
	return s->dev == hcu_dev ? s : NULL;
}

cudaError_t gw_hcu_stream_create(cudaStream_t *s, unsigned flags)
{
	(void)flags;   /* no stream waits for the default stream here */
	if (!s)
		return set_last(cudaErrorInvalidValue);
	if (ndev() == 0)
		return set_last(cudaErrorNoDevice);
	struct gw_hcu_stream *x = calloc(1, sizeof(*x));
	if (!x)
		return set_last(cudaErrorMemoryAllocation);
	x->dev = hcu_dev;
	pthread_mutex_lock(&hcu_mu);
	x->next = hcu_streams;
	hcu_streams = x;
	pthread_mutex_unlock(&hcu_mu);
	*s = x;
	return cudaSuccess;
}

static void enqueue(struct gw_hcu_stream *s, struct op *o)
{
	pthread_mutex_lock(&hcu_mu);
	if (s->tail)
		s->tail->next = o;
	else
		s->head = o;
	s->tail = o;
	s->pending++;
	pthread_mutex_unlock(&hcu_mu);
}

static void drop_op(struct op *o)
{
	if (o->kind == OP_KERNEL && o->k.drop)
		o->k.drop(o->k.c);
	free(o);
}

/* Runs s's queue in order. After a kernel fails the error is sticky: the
 * rest of the queue is dropped, as a GPU's context is lost. */
static cudaError_t drain(struct gw_hcu_stream *s)
{
	for (;;) {
		pthread_mutex_lock(&hcu_mu);
		struct op *o = s->head;
		if (o) {
			s->head = o->next;
			if (!s->head)
				s->tail = NULL;
			s->pending--;
		}
		int dead = hcu_sticky;
		pthread_mutex_unlock(&hcu_mu);
		if (!o)
			break;
		if (!dead) {
			cudaError_t e = cudaSuccess;
			if (o->kind == OP_KERNEL) {
				e = hcu_run_kernel(&o->k);
			} else if (o->kind == OP_COPY) {
				memmove(o->dst, o->src, o->n);
			} else {
				memset(o->dst, o->v, o->n);
			}
			if (e != cudaSuccess) {
				pthread_mutex_lock(&hcu_mu);
				if (!hcu_sticky)
					hcu_sticky = e;
				pthread_mutex_unlock(&hcu_mu);
			}
		}
		drop_op(o);
	}
	return sticky();
}

cudaError_t gw_hcu_stream_sync(cudaStream_t s)
{
	struct gw_hcu_stream *x = stream_for(s);
	if (!x)
		return set_last(ndev() ? cudaErrorInvalidResourceHandle : cudaErrorNoDevice);
	return set_last(drain(x));
}

cudaError_t gw_hcu_device_sync(void)
{
	if (ndev() == 0)
		return set_last(cudaErrorNoDevice);
	drain(&hcu_legacy[hcu_dev]);
	for (;;) {   /* streams are only added at the head: walk a snapshot */
		pthread_mutex_lock(&hcu_mu);
		struct gw_hcu_stream *x = hcu_streams;
		while (x && !(x->dev == hcu_dev && x->head))
			x = x->next;
		pthread_mutex_unlock(&hcu_mu);
		if (!x)
			break;
		drain(x);
	}
	return set_last(sticky());
}

cudaError_t gw_hcu_stream_destroy(cudaStream_t s)
{
	if (!s)
		return set_last(cudaErrorInvalidResourceHandle);
	drain(s);   /* CUDA finishes a destroyed stream's work */
	pthread_mutex_lock(&hcu_mu);
	for (struct gw_hcu_stream **p = &hcu_streams; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	pthread_mutex_unlock(&hcu_mu);
	free(s);
	return cudaSuccess;
}

unsigned gw_hcu_pending(void)
{
	unsigned n = 0;
	pthread_mutex_lock(&hcu_mu);
	for (struct gw_hcu_stream *x = hcu_streams; x; x = x->next)
		n += x->pending;
	for (int d = 0; d < 16; d++)
		n += hcu_legacy[d].pending;
	pthread_mutex_unlock(&hcu_mu);
	return n;
}

static int dim_ok(struct gw_hcu_dim d, unsigned max_x, unsigned max_yz)
{
	return d.x && d.y && d.z && d.x <= max_x && d.y <= max_yz && d.z <= max_yz;
}

void gw_hcu_launch(const char *name, struct gw_hcu_dim grid, struct gw_hcu_dim block,
		   struct gw_hcu_stream *s, void (*run)(void *), void (*drop)(void *), void *c)
{
	cudaError_t e = run ? fault(GW_HCU_LAUNCH) : cudaErrorMemoryAllocation;
	struct gw_hcu_stream *x = stream_for(s);
	if (e == cudaSuccess && !x)
		e = ndev() ? cudaErrorInvalidResourceHandle : cudaErrorNoDevice;
	if (e == cudaSuccess &&
	    (!dim_ok(grid, 0x7fffffffu, 65535u) || !dim_ok(block, 1024u, 1024u) ||
	     block.z > 64u || (uint64_t)block.x * block.y * block.z > 1024u))
		e = cudaErrorInvalidConfiguration;
	if (e == cudaSuccess && sticky())
		e = sticky();
	struct op *o = e == cudaSuccess ? calloc(1, sizeof(*o)) : NULL;
	if (e == cudaSuccess && !o)
		e = cudaErrorMemoryAllocation;
	if (e != cudaSuccess) {
		if (drop)
			drop(c);
		set_last(e);
		return;
	}
	o->kind = OP_KERNEL;
	o->k = (struct hcu_kernel){name, grid, block, x->dev, run, drop, c};
	pthread_mutex_lock(&hcu_mu);
	hcu_nlaunch++;
	hcu_lastdev = x->dev;
	pthread_mutex_unlock(&hcu_mu);
	enqueue(x, o);
}

/* ---- memory ------------------------------------------------------------------------- */

cudaError_t gw_hcu_malloc(void **p, size_t n)
{
	if (!p)
		return set_last(cudaErrorInvalidValue);
	*p = NULL;
	cudaError_t e = ndev() ? fault(GW_HCU_MALLOC) : cudaErrorNoDevice;
	if (e != cudaSuccess)
		return set_last(e);
	/* Aligned as cudaMalloc's (256 bytes), never zeroed: as on a GPU,
	 * what no kernel wrote is garbage. */
	size_t len = n ? (n + 255) / 256 * 256 : 256;
	void *m = aligned_alloc(256, len);
	if (!m)
		return set_last(cudaErrorMemoryAllocation);
	memset(m, 0xa5, n);
	*p = m;
	return cudaSuccess;
}

cudaError_t gw_hcu_free(void *p)
{
	free(p);
	return cudaSuccess;
}

cudaError_t gw_hcu_host_alloc(void **p, size_t n, unsigned flags)
{
	(void)flags;
	return gw_hcu_malloc(p, n);
}

cudaError_t gw_hcu_free_host(void *p)
{
	free(p);
	return cudaSuccess;
}

static uintptr_t page(void)
{
	static uintptr_t pg;
	if (!pg)
		pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	return pg;
}

cudaError_t gw_hcu_host_register(void *p, size_t n, unsigned flags)
{
	(void)flags;
	if (!p || !n)
		return set_last(cudaErrorInvalidValue);
	cudaError_t e = ndev() ? fault(GW_HCU_REGISTER) : cudaErrorNoDevice;
	if (e != cudaSuccess)
		return set_last(e);
	/* CUDA pins whole pages: a range sharing one with another
	 * registration is refused. */
	uintptr_t lo = (uintptr_t)p / page() * page();
	uintptr_t hi = ((uintptr_t)p + n + page() - 1) / page() * page();
	pthread_mutex_lock(&hcu_mu);
	for (unsigned i = 0; i < hcu_nreg && e == cudaSuccess; i++)
		if (lo < hcu_reg[i].hi && hcu_reg[i].lo < hi)
			e = cudaErrorHostMemoryAlreadyRegistered;
	if (e == cudaSuccess && hcu_nreg == HCU_REG_MAX)
		e = cudaErrorMemoryAllocation;
	if (e == cudaSuccess) {
		hcu_reg[hcu_nreg].lo = lo;
		hcu_reg[hcu_nreg].hi = hi;
		hcu_nreg++;
	}
	pthread_mutex_unlock(&hcu_mu);
	return set_last(e);
}

cudaError_t gw_hcu_host_unregister(void *p)
{
	uintptr_t lo = (uintptr_t)p / page() * page();
	cudaError_t e = cudaErrorHostMemoryNotRegistered;
	pthread_mutex_lock(&hcu_mu);
	for (unsigned i = 0; i < hcu_nreg; i++)
		if (hcu_reg[i].lo == lo) {
			hcu_reg[i] = hcu_reg[--hcu_nreg];
			e = cudaSuccess;
			break;
		}
	pthread_mutex_unlock(&hcu_mu);
	return set_last(e);
}

cudaError_t gw_hcu_host_dev_ptr(void **dev, void *host, unsigned flags)
{
	(void)flags;
	if (!dev || !host)
		return set_last(cudaErrorInvalidValue);
	*dev = host;   /* one address space, as with UVA */
	return cudaSuccess;
}

static cudaError_t queue_mem(enum op_kind kind, void *dst, const void *src, int v, size_t n,
			     cudaStream_t s)
{
	if (!dst || (kind == OP_COPY && !src))
		return set_last(cudaErrorInvalidValue);
	cudaError_t e = fault(kind == OP_COPY ? GW_HCU_COPY : GW_HCU_MEMSET);
	struct gw_hcu_stream *x = stream_for(s);
	if (e == cudaSuccess && !x)
		e = ndev() ? cudaErrorInvalidResourceHandle : cudaErrorNoDevice;
	if (e == cudaSuccess && sticky())
		e = sticky();
	if (e != cudaSuccess)
		return set_last(e);
	if (!n)
		return cudaSuccess;
	struct op *o = calloc(1, sizeof(*o));
	if (!o)
		return set_last(cudaErrorMemoryAllocation);
	*o = (struct op){.kind = kind, .dst = dst, .src = src, .n = n, .v = v};
	enqueue(x, o);
	return cudaSuccess;
}

cudaError_t gw_hcu_memcpy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
				cudaStream_t s)
{
	(void)k;
	return queue_mem(OP_COPY, dst, src, 0, n, s);
}

cudaError_t gw_hcu_memset_async(void *p, int v, size_t n, cudaStream_t s)
{
	return queue_mem(OP_SET, p, NULL, v, n, s);
}

/* The synchronous forms: on the default stream, which they wait for. */
cudaError_t gw_hcu_memcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
	cudaError_t e = gw_hcu_memcpy_async(dst, src, n, k, NULL);
	return e != cudaSuccess ? e : gw_hcu_stream_sync(NULL);
}

cudaError_t gw_hcu_memset(void *p, int v, size_t n)
{
	cudaError_t e = gw_hcu_memset_async(p, v, n, NULL);
	return e != cudaSuccess ? e : gw_hcu_stream_sync(NULL);
}
