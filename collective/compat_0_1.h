/* The 0.1 layouts of the structs 0.2 changed (GRADWIRE_0.1's
 * gw_coll_job, gw_comm_config, gw_agg_config): what compat_0_1.c converts
 * from, and what tests/abi_0_1.c, a program written for 0.1, passes. Not
 * installed. */
#ifndef GW_COMPAT_0_1_H
#define GW_COMPAT_0_1_H

#include <gw/collective.h>

struct job_v01 {
	uint32_t job;
	uint64_t dim;
	uint32_t chunk_elems;
	uint16_t workers, shards;
	uint32_t window;
	int up_codec, down_codec;
	const char *up_params, *down_params;
	gw_coll_mode mode;
	uint32_t deadline_us;
	const uint8_t *key;
	uint32_t topk, candidates;   /* Sketched-SGD, when up_codec is countsketch */
	float momentum;
};

struct comm_config_v01 {
	struct job_v01 job;
	uint16_t rank;
	const gw_endpoint *shards;
	uint32_t rto_us, timeout_ms, first_round;
};

struct agg_config_v01 {
	struct job_v01 job;
	uint16_t shard;
};

#endif /* GW_COMPAT_0_1_H */
