/* The Sketched-SGD shard answers a worker's re-sent phase once per pass
 * (coll_sketch_new_pass): these pin down what a pass is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gw_test.h"

#include "sketched.h"

/* A whole pass of ascending chunks starts one pass, at its first chunk. */
static void one_answer_per_pass(void **st)
{
	(void)st;
	uint64_t last = 0;
	int starts = 0;
	for (int pass = 0; pass < 3; pass++)
		for (uint32_t c = 0; c < 400; c++)
			starts += coll_sketch_new_pass(&last, 7, 1, c);
	assert_int_equal(starts, 3);
}

/* One shard's chunks in the order given: each a new pass (want 1) or not,
 * from a fresh state. */
struct chunk {
	uint32_t round;
	int phase;
	uint32_t chunk;
	int want;
};

static void expect_passes(const struct chunk *c, size_t n)
{
	uint64_t last = 0;
	for (const struct chunk *e = c; e < c + n; e++) {
		if (e->want)
			assert_true(coll_sketch_new_pass(&last, e->round, e->phase, e->chunk));
		else
			assert_false(coll_sketch_new_pass(&last, e->round, e->phase, e->chunk));
	}
}

/* A pass may lose its first chunks: it starts wherever it is first seen. */
static void pass_starts_where_it_is_first_seen(void **st)
{
	(void)st;
	static const struct chunk c[] = {{7, 0, 5, 1}, {7, 0, 9, 0}, {7, 0, 2, 1}};
	expect_passes(c, GW_ARRAY_SIZE(c));
}

/* After a receipt a worker sends only its phase's last chunk: each is a
 * pass of its own, and so is a duplicate of the same chunk. */
static void single_chunk_passes(void **st)
{
	(void)st;
	uint64_t last = 0;
	for (int i = 0; i < 4; i++)
		assert_true(coll_sketch_new_pass(&last, 3, 1, 407));
}

/* A new phase or round starts a pass even at a higher chunk. */
static void new_stage_starts_a_pass(void **st)
{
	(void)st;
	static const struct chunk c[] = {
		{3, 0, 1, 1}, {3, 1, 2, 1}, {4, 1, 3, 1}, {4, 1, 4, 0}, {UINT32_MAX, 1, 5, 1},
	};
	expect_passes(c, GW_ARRAY_SIZE(c));
}

GW_TEST_MAIN("sketch_pass", 0,
	     cmocka_unit_test(one_answer_per_pass),
	     cmocka_unit_test(pass_starts_where_it_is_first_seen),
	     cmocka_unit_test(single_chunk_passes),
	     cmocka_unit_test(new_stage_starts_a_pass))
