/* Prefix scans over uint32_t arrays in three launches, for kernels whose
 * output positions depend on what came before (3lc's zero-run tokens):
 *
 *   tile:   each block scans a tile of GW_KS_TILE values (every thread its
 *           GW_KS_ITEMS consecutive ones, thread 0 the threads' totals)
 *           into out, exclusively or inclusively, and writes the tile's
 *           total into tiles[b];
 *   tiles:  one block: an exclusive scan of tiles[] in place;
 *   apply:  every value gets its tile's prefix.
 *
 * The operator is a sum or a maximum of integers, so the result does not
 * depend on how the work is split or in what order the blocks run: the
 * GPU and hostcuda/ (any of its schedules) give the same words. */
#ifndef GW_KERN_SCAN_H
#define GW_KERN_SCAN_H

#include "gw_hd.h"

#define GW_KS_THREADS 256u
#define GW_KS_ITEMS 8u
#define GW_KS_TILE (GW_KS_THREADS * GW_KS_ITEMS)

enum { GW_KS_SUM, GW_KS_MAX };

struct gw_ks_scan {
	int op;                 /* GW_KS_SUM or GW_KS_MAX */
	int inclusive;
	const uint32_t *in;     /* n values (NULL: make(ctx, i) gives them) */
	uint32_t *out;
	uint32_t *tiles;        /* one word per tile */
	uint64_t n;
};

struct gw_ks_shared {
	uint32_t part[GW_KS_THREADS];
};

GW_HD uint32_t gw_ks_op(int op, uint32_t a, uint32_t b)
{
	return op == GW_KS_SUM ? a + b : a > b ? a : b;
}

GW_HD uint32_t gw_ks_tiles(uint64_t n)
{
	return (uint32_t)((n + GW_KS_TILE - 1) / GW_KS_TILE);
}

/* Phase 1 of tile b, every thread: its items' total. */
GW_HD void gw_ks_tile_reduce(const struct gw_ks_scan *s, uint32_t b, uint32_t tid,
			     struct gw_ks_shared *sh)
{
	uint64_t i0 = (uint64_t)b * GW_KS_TILE + (uint64_t)tid * GW_KS_ITEMS;
	uint32_t acc = 0;
	for (uint32_t k = 0; k < GW_KS_ITEMS && i0 + k < s->n; k++)
		acc = gw_ks_op(s->op, acc, s->in[i0 + k]);
	sh->part[tid] = acc;
}

/* Phase 2, thread 0: the threads' exclusive prefixes; the tile total. */
GW_HD void gw_ks_tile_prefix(const struct gw_ks_scan *s, uint32_t b, struct gw_ks_shared *sh)
{
	uint32_t acc = 0;
	for (uint32_t t = 0; t < GW_KS_THREADS; t++) {
		uint32_t v = sh->part[t];
		sh->part[t] = acc;
		acc = gw_ks_op(s->op, acc, v);
	}
	s->tiles[b] = acc;
}

/* Phase 3, every thread: its items, scanned within the tile. */
GW_HD void gw_ks_tile_write(const struct gw_ks_scan *s, uint32_t b, uint32_t tid,
			    const struct gw_ks_shared *sh)
{
	uint64_t i0 = (uint64_t)b * GW_KS_TILE + (uint64_t)tid * GW_KS_ITEMS;
	uint32_t acc = sh->part[tid];
	for (uint32_t k = 0; k < GW_KS_ITEMS && i0 + k < s->n; k++) {
		uint32_t v = s->in[i0 + k];
		uint32_t next = gw_ks_op(s->op, acc, v);
		s->out[i0 + k] = s->inclusive ? next : acc;
		acc = next;
	}
}

/* The tiles launch, one block of GW_KS_THREADS threads over the tiles'
 * totals: thread tid takes a run of them (its share), a block scan of the
 * runs' totals gives each run its start, and each thread scans its run in
 * place, exclusively — the serial scan's words, in parallel. */
GW_HD uint32_t gw_ks_tiles_share(const struct gw_ks_scan *s)
{
	return (gw_ks_tiles(s->n) + GW_KS_THREADS - 1) / GW_KS_THREADS;
}

GW_HD void gw_ks_tiles_reduce(const struct gw_ks_scan *s, uint32_t tid, struct gw_ks_shared *sh)
{
	uint32_t nt = gw_ks_tiles(s->n), c = gw_ks_tiles_share(s), acc = 0;
	for (uint32_t b = tid * c; b < nt && b < (tid + 1) * c; b++)
		acc = gw_ks_op(s->op, acc, s->tiles[b]);
	sh->part[tid] = acc;
}

/* Thread 0: the runs' exclusive prefixes. */
GW_HD void gw_ks_tiles_prefix(const struct gw_ks_scan *s, struct gw_ks_shared *sh)
{
	uint32_t acc = 0;
	for (uint32_t t = 0; t < GW_KS_THREADS; t++) {
		uint32_t v = sh->part[t];
		sh->part[t] = acc;
		acc = gw_ks_op(s->op, acc, v);
	}
}

GW_HD void gw_ks_tiles_write(const struct gw_ks_scan *s, uint32_t tid,
			     const struct gw_ks_shared *sh)
{
	uint32_t nt = gw_ks_tiles(s->n), c = gw_ks_tiles_share(s), acc = sh->part[tid];
	for (uint32_t b = tid * c; b < nt && b < (tid + 1) * c; b++) {
		uint32_t v = s->tiles[b];
		s->tiles[b] = acc;
		acc = gw_ks_op(s->op, acc, v);
	}
}

/* The apply launch, one value. */
GW_HD void gw_ks_apply(const struct gw_ks_scan *s, uint64_t i)
{
	s->out[i] = gw_ks_op(s->op, s->out[i], s->tiles[i / GW_KS_TILE]);
}

#endif
