/* hostcuda's kernels (hostcuda.h): a block's threads are fibers on one OS
 * thread. The scheduler starts every fiber, each runs until it reaches
 * __syncthreads() or returns; when all have stopped, either all are at the
 * barrier (the next phase starts, in a new order) or all returned (the
 * block is done). Anything else is a barrier not every thread reached,
 * which a GPU does not define: the kernel fails, as synccheck would say.
 *
 * Switching is a few instructions on x86-64 (callee-saved registers and
 * the stack pointer), ucontext elsewhere: a grid of a million threads runs
 * in milliseconds. Stacks are kept per OS thread and reused. Under
 * AddressSanitizer each switch is announced to it, so the fibers' stacks
 * are checked as any other. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hc_internal.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HCU_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HCU_ASAN 1
#endif
#ifdef HCU_ASAN
#include <sanitizer/common_interface_defs.h>
#define HCU_STACK (256u << 10)
#else
#define HCU_STACK (64u << 10)
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#define HCU_THREADS_MAX 1024u
#define HCU_SHARED_MAX (48u << 10)   /* CUDA's static shared memory per block */

enum { F_RUN, F_BAR, F_DONE };

struct fiber {
#if defined(__x86_64__)
	void *sp;
#else
	ucontext_t uc;
#endif
	struct gw_hcu_self self;
	int state;
	size_t shoff;       /* the next __shared__ declaration's offset */
	uint8_t *stack;
	size_t color;       /* the stack's top lowered by this much, so that the
			     * fibers' hot frames do not all fall in one cache set */
	void *fake;         /* ASan's fake stack while switched out */
};

struct sched {
#if defined(__x86_64__)
	void *sp;
#else
	ucontext_t uc;
#endif
	struct fiber *f, *cur;
	unsigned nf;        /* fibers (and stacks) made */
	uint32_t *order;
	const struct hcu_kernel *k;
	uint8_t shared[HCU_SHARED_MAX] __attribute__((aligned(64)));
	size_t shared_hi;   /* bytes the block declared (and filled) */
	uint8_t fill;       /* the block's garbage byte */
	const char *fault;  /* why the block failed, or NULL */
	const void *sbottom;   /* ASan: the scheduler's stack */
	size_t ssize;
};

static _Thread_local struct sched *hcu_s;
/* The running fiber's coordinates, read by threadIdx and friends without
 * a call (__thread: no C++ TLS wrapper). */
__thread const struct gw_hcu_self *gw_hcu_cur;

#if defined(__x86_64__)
/* void hcu_swap(void **save, void *to): saves the callee-saved registers
 * on the current stack and its pointer in *save, then resumes `to`. */
__asm__(".text\n"
	".p2align 4\n"
	".type hcu_swap,@function\n"
	"hcu_swap:\n"
	"\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
	"\tret\n"
	".size hcu_swap, .-hcu_swap\n");
void hcu_swap(void **save, void *to) __attribute__((visibility("hidden")));
#endif

static void to_fiber(struct sched *s, struct fiber *f)
{
	s->cur = f;
	gw_hcu_cur = &f->self;
#ifdef HCU_ASAN
	void *fake = NULL;
	__sanitizer_start_switch_fiber(&fake, f->stack, HCU_STACK);
#endif
#if defined(__x86_64__)
	hcu_swap(&s->sp, f->sp);
#else
	swapcontext(&s->uc, &f->uc);
#endif
#ifdef HCU_ASAN
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	s->cur = NULL;
	gw_hcu_cur = NULL;
}

/* From a fiber back to the scheduler; dying: it will not be resumed. */
static void to_sched(struct sched *s, struct fiber *f, int dying)
{
#ifdef HCU_ASAN
	__sanitizer_start_switch_fiber(dying ? NULL : &f->fake, s->sbottom, s->ssize);
#else
	(void)dying;
#endif
#if defined(__x86_64__)
	hcu_swap(&f->sp, s->sp);
#else
	swapcontext(&f->uc, &s->uc);
#endif
#ifdef HCU_ASAN
	__sanitizer_finish_switch_fiber(f->fake, &s->sbottom, &s->ssize);
#endif
}

static void fiber_main(void)
{
	struct sched *s = hcu_s;
	struct fiber *f = s->cur;
#ifdef HCU_ASAN
	__sanitizer_finish_switch_fiber(NULL, &s->sbottom, &s->ssize);
#endif
	s->k->run(s->k->c);
	f->state = F_DONE;
	to_sched(s, f, 1);
	abort();   /* a finished fiber is never resumed */
}

/* Fiber f ready to start the kernel's body on its stack. */
static void fiber_start(struct sched *s, struct fiber *f)
{
	(void)s;
	f->state = F_RUN;
	f->shoff = 0;
#if defined(__x86_64__)
	uint64_t *sp = (uint64_t *)(void *)(f->stack + HCU_STACK - f->color);
	*--sp = 0;                              /* fiber_main's return address */
	*--sp = (uint64_t)(uintptr_t)fiber_main;   /* where hcu_swap's ret goes */
	for (int i = 0; i < 6; i++)
		*--sp = 0;                      /* rbp rbx r12..r15 */
	f->sp = sp;
#else
	getcontext(&f->uc);
	f->uc.uc_stack.ss_sp = f->stack;
	f->uc.uc_stack.ss_size = HCU_STACK;
	f->uc.uc_link = NULL;
	makecontext(&f->uc, fiber_main, 0);
#endif
}

/* A thread's scheduler and stacks go with the thread. */
static pthread_key_t sched_key;
static pthread_once_t sched_once = PTHREAD_ONCE_INIT;

static void sched_free(void *p)
{
	struct sched *s = p;
	for (unsigned i = 0; i < s->nf; i++)
		munmap(s->f[i].stack - 4096, HCU_STACK + 4096);
	free(s->f);
	free(s->order);
	free(s);
}

static void sched_key_make(void)
{
	pthread_key_create(&sched_key, sched_free);
}

static struct sched *sched_get(unsigned threads)
{
	struct sched *s = hcu_s;
	if (!s) {
		pthread_once(&sched_once, sched_key_make);
		s = calloc(1, sizeof(*s));
		if (!s)
			return NULL;
		hcu_s = s;
		pthread_setspecific(sched_key, s);
	}
	if (s->nf >= threads)
		return s;
	struct fiber *f = realloc(s->f, threads * sizeof(*f));
	uint32_t *o = realloc(s->order, threads * sizeof(*o));
	if (f)
		s->f = f;
	if (o)
		s->order = o;
	if (!f || !o)
		return NULL;
	for (unsigned i = s->nf; i < threads; i++) {
		memset(&s->f[i], 0, sizeof(s->f[i]));
		/* A guard page under each stack: an overflow faults. */
		uint8_t *m = mmap(NULL, HCU_STACK + 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		mprotect(m, 4096, PROT_NONE);
		s->f[i].stack = m + 4096;
		s->f[i].color = (size_t)(i * 1104u) % (32u << 10) / 16 * 16;
		s->nf = i + 1;
	}
	return s;
}

static void shuffle(uint32_t *a, uint32_t n)
{
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)(((hcu_rand() >> 32) * i) >> 32), t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

static void block_fail(struct sched *s, const char *why)
{
	if (!s->fault)
		s->fault = why;
}

/* Fiber slot i set to run thread t of block bidx from its start. */
static void slot_start(struct sched *s, unsigned i, unsigned t, const struct gw_hcu_dim *bidx)
{
	const struct hcu_kernel *k = s->k;
	struct fiber *f = &s->f[i];
	f->self.thread = (struct gw_hcu_dim){t % k->block.x, t / k->block.x % k->block.y,
					     t / (k->block.x * k->block.y)};
	f->self.block = *bidx;
	f->self.block_dim = k->block;
	f->self.grid_dim = k->grid;
	fiber_start(s, f);
}

/* One block, its threads in a drawn order. The first runs on slot 0: if it
 * returns without a barrier, none of the block's threads may reach one, so
 * the others run one after another on that same stack (most kernels: one
 * element a thread, no barrier), and one that does reach a barrier is the
 * divergence it is. Otherwise every thread gets a fiber of its own and the
 * block runs phase by phase, the order drawn again for each phase.
 * 0, or -1 with s->fault set. */
static int run_block(struct sched *s, const struct gw_hcu_dim *bidx)
{
	unsigned nt = s->k->block.x * s->k->block.y * s->k->block.z;
	s->fill = (uint8_t)hcu_rand();
	s->shared_hi = 0;
	for (unsigned t = 0; t < nt; t++)
		s->order[t] = t;
	shuffle(s->order, nt);
	slot_start(s, 0, s->order[0], bidx);
	to_fiber(s, &s->f[0]);
	if (s->fault)
		return -1;
	if (s->f[0].state == F_DONE) {
		for (unsigned i = 1; i < nt; i++) {
			slot_start(s, 0, s->order[i], bidx);
			to_fiber(s, &s->f[0]);
			if (s->fault)
				return -1;
			if (s->f[0].state != F_DONE) {
				block_fail(s, "__syncthreads() not reached by every thread of the block");
				return -1;
			}
		}
		return 0;
	}
	for (unsigned i = 1; i < nt; i++)
		slot_start(s, i, s->order[i], bidx);
	unsigned first = 1;   /* slot 0 has run its first phase */
	for (;;) {
		for (unsigned i = 0; i < nt; i++)
			s->order[i] = i;
		shuffle(s->order + first, nt - first);
		for (unsigned i = first; i < nt && !s->fault; i++)
			to_fiber(s, &s->f[s->order[i]]);
		if (s->fault)
			return -1;
		unsigned bar = 0, done = 0;
		for (unsigned i = 0; i < nt; i++) {
			bar += s->f[i].state == F_BAR;
			done += s->f[i].state == F_DONE;
		}
		if (done == nt)
			return 0;
		if (bar != nt) {
			block_fail(s, "__syncthreads() not reached by every thread of the block");
			return -1;
		}
		for (unsigned i = 0; i < nt; i++)
			s->f[i].state = F_RUN;
		first = 0;
	}
}

cudaError_t hcu_run_kernel(const struct hcu_kernel *k)
{
	unsigned nt = k->block.x * k->block.y * k->block.z;
	uint64_t nb = (uint64_t)k->grid.x * k->grid.y * k->grid.z;
	struct sched *s = sched_get(nt);
	uint32_t *border = malloc(nb * sizeof(*border));
	if (!s || !border || s->k) {
		free(border);
		fprintf(stderr, "hostcuda: %s: %s\n", k->name,
			s && s->k ? "a kernel launched from a kernel" : "out of memory");
		return cudaErrorLaunchOutOfResources;
	}
	for (uint64_t b = 0; b < nb; b++)
		border[b] = (uint32_t)b;
	shuffle(border, (uint32_t)nb);
	s->k = k;
	s->fault = NULL;
	cudaError_t rc = cudaSuccess;
	for (uint64_t i = 0; i < nb; i++) {
		uint32_t b = border[i];
		struct gw_hcu_dim bidx = {b % k->grid.x, b / k->grid.x % k->grid.y,
					  b / (k->grid.x * k->grid.y)};
		if (run_block(s, &bidx) < 0) {
			fprintf(stderr, "hostcuda: kernel %s, block (%u,%u,%u): %s (seed %llu)\n",
				k->name, bidx.x, bidx.y, bidx.z, s->fault,
				(unsigned long long)gw_hcu_seed());
			rc = cudaErrorLaunchFailure;
			break;
		}
	}
	s->k = NULL;
	free(border);
	return rc;
}

void gw_hcu_syncthreads(void)
{
	struct sched *s = hcu_s;
	if (!s || !s->cur) {
		fprintf(stderr, "hostcuda: __syncthreads() outside a kernel\n");
		abort();
	}
	struct fiber *f = s->cur;
	f->state = F_BAR;
	to_sched(s, f, 0);
}

void *gw_hcu_shared(size_t n, size_t al)
{
	struct sched *s = hcu_s;
	if (!s || !s->cur) {
		fprintf(stderr, "hostcuda: __shared__ declared outside a kernel\n");
		abort();
	}
	struct fiber *f = s->cur;
	size_t off = (f->shoff + al - 1) / al * al;
	if (off + n > HCU_SHARED_MAX) {
		/* The kernel cannot go on: its thread stops here, the block fails. */
		block_fail(s, "more than 48 KiB of __shared__ memory");
		f->state = F_DONE;
		to_sched(s, f, 1);
		abort();
	}
	f->shoff = off + n;
	if (f->shoff > s->shared_hi) {   /* first declared: garbage, as on a GPU */
		memset(s->shared + s->shared_hi, s->fill, f->shoff - s->shared_hi);
		s->shared_hi = f->shoff;
	}
	return s->shared + off;
}
