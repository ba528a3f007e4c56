/* Endpoint exchange through MPI (see coll_mpi.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_mpi.h"

#ifdef GW_HAVE_MPI
#include <mpi.h>

struct rec {
	int32_t shard;     /* 1: a shard, 0: a worker */
	uint32_t ip;
	uint16_t port;
	uint8_t mac[6];
};

int cli_mpi_init(int *argc, char ***argv, const char *prog)
{
	int asked = 0;
	for (int i = 1; i < *argc; i++)
		asked |= !strcmp((*argv)[i], "--mpi");
	if (!asked)
		return 0;
	if (MPI_Init(argc, argv) != MPI_SUCCESS) {
		fprintf(stderr, "%s: --mpi: MPI_Init failed\n", prog);
		return -1;
	}
	return 1;
}

void cli_mpi_finalize(void)
{
	int up = 0, down = 0;
	MPI_Initialized(&up);
	MPI_Finalized(&down);
	if (up && !down)
		MPI_Finalize();
}

int cli_mpi_exchange(const char *prog, int is_shard, const gw_endpoint *mine,
		     unsigned nshards, unsigned nworkers, gw_endpoint *shards,
		     unsigned *index)
{
	int size, me;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	struct rec r = {.shard = is_shard, .ip = mine->ip, .port = mine->port};
	memcpy(r.mac, mine->mac, 6);
	struct rec *all = calloc((size_t)size, sizeof(*all));
	if (!all)
		return -1;
	MPI_Allgather(&r, sizeof(r), MPI_BYTE, all, sizeof(r), MPI_BYTE, MPI_COMM_WORLD);
	unsigned ns = 0, nw = 0;
	for (int i = 0; i < size; i++) {
		if (i == me)
			*index = all[i].shard ? ns : nw;
		if (all[i].shard) {
			if (ns < nshards)
				shards[ns] = (gw_endpoint){.ip = all[i].ip, .port = all[i].port};
			if (ns < nshards)
				memcpy(shards[ns].mac, all[i].mac, 6);
			ns++;
		} else {
			nw++;
		}
	}
	free(all);
	if (ns != nshards || nw != nworkers) {
		fprintf(stderr, "%s: --mpi: mpirun started %u shards and %u workers, the "
			"job has %u and %u\n", prog, ns, nw, nshards, nworkers);
		return -1;
	}
	return 0;
}
#else
int cli_mpi_init(int *argc, char ***argv, const char *prog)
{
	for (int i = 1; i < *argc; i++)
		if (!strcmp((*argv)[i], "--mpi")) {
			fprintf(stderr, "%s: --mpi: this build has no MPI (install "
				"libopenmpi-dev and rebuild)\n", prog);
			return -1;
		}
	return 0;
}

void cli_mpi_finalize(void)
{
}

int cli_mpi_exchange(const char *prog, int is_shard, const gw_endpoint *mine,
		     unsigned nshards, unsigned nworkers, gw_endpoint *shards,
		     unsigned *index)
{
	(void)is_shard, (void)mine, (void)nshards, (void)nworkers, (void)shards,
	(void)index;
	fprintf(stderr, "%s: --mpi: this build has no MPI\n", prog);
	return -1;
}
#endif
