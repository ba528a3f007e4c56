/* The Sketched-SGD shard answers a worker's re-sent phase once per pass
 * (coll_sketch_new_pass): these pin down what a pass is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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

/* A pass may lose its first chunks: it starts wherever it is first seen. */
static void pass_starts_where_it_is_first_seen(void **st)
{
	(void)st;
	uint64_t last = 0;
	assert_true(coll_sketch_new_pass(&last, 7, 0, 5));
	assert_false(coll_sketch_new_pass(&last, 7, 0, 9));
	assert_true(coll_sketch_new_pass(&last, 7, 0, 2));
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
	uint64_t last = 0;
	assert_true(coll_sketch_new_pass(&last, 3, 0, 1));
	assert_true(coll_sketch_new_pass(&last, 3, 1, 2));
	assert_true(coll_sketch_new_pass(&last, 4, 1, 3));
	assert_false(coll_sketch_new_pass(&last, 4, 1, 4));
	assert_true(coll_sketch_new_pass(&last, UINT32_MAX, 1, 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_answer_per_pass),
		cmocka_unit_test(pass_starts_where_it_is_first_seen),
		cmocka_unit_test(single_chunk_passes),
		cmocka_unit_test(new_stage_starts_a_pass),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
