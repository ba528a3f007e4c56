/* Seeds of the DeepReduce section harnesses (fuzz_dr_*.c), written by
 * make_corpus through its mc_write_file(). */
#ifndef GW_SEEDS_DR_H
#define GW_SEEDS_DR_H

#include <stddef.h>

typedef void (*seed_write_fn)(const char *harness, const char *name,
			      const void *data, size_t len);

/* Writes the seeds of harness `name` if it is one of the file's (NULL:
 * all of them); returns 1 if it was, 0 if not. */
int seeds_dr_index(const char *name, seed_write_fn write);
int seeds_dr_value(const char *name, seed_write_fn write);
/* And those of the RDMA receive harness (seeds_rdma.c). */
int seeds_rdma(const char *name, seed_write_fn write);
/* And those of hq's loops (seeds_hq_kern.c). */
int seeds_hq_kern(const char *name, seed_write_fn write);

#endif
