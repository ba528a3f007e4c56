/* hostcuda: CUDA on the CPU, so that gw_cuda.cu's own kernels run on every
 * machine. Each thread of a block is a fiber; __syncthreads() is a barrier
 * at which the block's fibers switch; between barriers the fibers run one
 * at a time in an order drawn from a seeded generator, as are the blocks
 * of a grid, so a race or a missing barrier changes the result under some
 * schedule. Shared memory is one arena per block, filled with a pattern
 * drawn per block before the block starts, so a read of shared memory no
 * thread wrote sees garbage, not zeros. Atomics are what they are on one
 * OS thread: fibers switch only at barriers.
 *
 * Streams are queues: a launch, copy or memset on a stream runs when the
 * host waits for that stream (cudaStreamSynchronize, cudaDeviceSynchronize,
 * a synchronous copy for the default stream), so host code that reads a
 * result before waiting reads what a GPU would give it then — nothing yet.
 * Each host thread has a current device (0 at start; GW_HCU_DEVICES
 * devices, default 2); a stream belongs to the device current when it was
 * made and refuses work from a thread whose current device is another, as
 * CUDA does. cudaHostRegister pins whole pages: a range that shares a page
 * with a registered one is refused as CUDA refuses it.
 *
 * The knobs below are for tests (tests/gpu). */
#ifndef GW_HOSTCUDA_H
#define GW_HOSTCUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The seed of the schedules (blocks' order, threads' order between
 * barriers, shared memory's fill): GW_HCU_SEED in the environment, else 1.
 * Setting it restarts the sequence on every host thread. */
void gw_hcu_set_seed(uint64_t seed);
uint64_t gw_hcu_seed(void);

/* Fault injection: the nth call from now (1: the next) of kind fails with
 * err (a cudaError_t) — a launch at launch time (what cudaGetLastError
 * then returns), a copy, a memset, a registration, an allocation. */
enum gw_hcu_fault { GW_HCU_LAUNCH, GW_HCU_COPY, GW_HCU_MEMSET, GW_HCU_REGISTER, GW_HCU_MALLOC,
		    GW_HCU_NFAULTS };
void gw_hcu_fail(enum gw_hcu_fault kind, unsigned nth, int err);

/* Work queued on every stream and not yet run. */
unsigned gw_hcu_pending(void);

/* Kernels run since the process started, and the device of the last one. */
uint64_t gw_hcu_launches(void);
int gw_hcu_last_device(void);

/* An error a kernel raised (a barrier that not every thread of a block
 * reached, shared memory over the limit): sticky, as on a GPU, until this
 * clears it. 0 when none. */
int gw_hcu_clear_sticky(void);

/* ---- for cuda_runtime.h's launches ---- */

struct gw_hcu_dim { unsigned x, y, z; };
struct gw_hcu_stream;

struct gw_hcu_self {
	struct gw_hcu_dim thread, block, block_dim, grid_dim;
};

/* The running fiber's coordinates (NULL outside a kernel). */
extern __thread const struct gw_hcu_self *gw_hcu_cur;

/* Queues a kernel on stream s: run(c) is one thread's body, drop(c) frees
 * c once the kernel has run (or is refused). Launch errors go where
 * cudaGetLastError finds them. */
void gw_hcu_launch(const char *name, struct gw_hcu_dim grid, struct gw_hcu_dim block,
		   struct gw_hcu_stream *s, void (*run)(void *), void (*drop)(void *), void *c);

void gw_hcu_syncthreads(void);

/* n bytes of the block's shared memory at alignment al: the calling
 * thread's next __shared__ declaration (every thread of a block declares
 * the same ones in the same order, so they get the same addresses). */
void *gw_hcu_shared(size_t n, size_t al);

#ifdef __cplusplus
}
#endif
#endif
