/* mpirun as a launcher: the processes of a job started by mpirun (MPMD:
 * the shards first, then the workers) swap their endpoints with one
 * MPI_Allgather and never use MPI again — gradients go over gradwire.
 * Built when an MPI is found (GW_HAVE_MPI); otherwise --mpi is refused. */
#ifndef GW_COLL_MPI_H
#define GW_COLL_MPI_H

#include <stdint.h>

#include <gw/dataplane.h>

/* MPI_Init when argv holds "--mpi"; returns 1 if MPI is up, 0 if not asked,
 * -1 (after a message) if asked but not built in or failed. */
int cli_mpi_init(int *argc, char ***argv, const char *prog);
void cli_mpi_finalize(void);

/* Every process gives its role (shard or worker) and endpoint; returns 0
 * and this process's index among its role (shard index or worker rank),
 * fills shards[0..nshards) (the shards' endpoints, shard 0 first), and
 * checks that the job has exactly nshards shards and nworkers workers. */
int cli_mpi_exchange(const char *prog, int is_shard, const gw_endpoint *mine,
		     unsigned nshards, unsigned nworkers, gw_endpoint *shards,
		     unsigned *index);

#endif
