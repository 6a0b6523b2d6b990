/*
 * mpi_pubsub.c - MPI's name service on pmixlab's data service: built by
 * Open MPI's mpicc, run under pmixrun with our libpmix.so.2. Rank 0
 * publishes a service name (MPI_Publish_name: PMIx_Publish with Open MPI
 * 4.1's defaults, range session, persistence app), every rank looks it
 * up (MPI_Lookup_name: PMIx_Lookup) and checks the port name, rank 1 then
 * tries to publish the same name and must be refused, and rank 0
 * unpublishes it, after which a lookup must fail. Each rank prints one
 * "mpi_pubsub: rank R ok" line or a FAIL line.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define SERVICE "pmixlab-mpi-service"

int main(int argc, char **argv)
{
    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME] = "";
    int rank, size, rc, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* name service errors are reported, not fatal */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    snprintf(port, sizeof(port), "pmixlab-port-of-%d-ranks", size);
    if (rank == 0 && (rc = MPI_Publish_name(SERVICE, MPI_INFO_NULL, port)) != MPI_SUCCESS) {
        printf("FAIL: rank 0: MPI_Publish_name returned %d\n", rc);
        bad = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Lookup_name(SERVICE, MPI_INFO_NULL, found);
    if (rc != MPI_SUCCESS || strcmp(found, port) != 0) {
        printf("FAIL: rank %d: MPI_Lookup_name returned %d, port '%s'\n", rank, rc, found);
        bad = 1;
    }
    if (rank == 1 && MPI_Publish_name(SERVICE, MPI_INFO_NULL, "another") == MPI_SUCCESS) {
        printf("FAIL: rank 1: a second MPI_Publish_name of the same name succeeded\n");
        bad = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && (rc = MPI_Unpublish_name(SERVICE, MPI_INFO_NULL, port)) != MPI_SUCCESS) {
        printf("FAIL: rank 0: MPI_Unpublish_name returned %d\n", rc);
        bad = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1 && MPI_Lookup_name(SERVICE, MPI_INFO_NULL, found) == MPI_SUCCESS) {
        printf("FAIL: rank %d: MPI_Lookup_name found an unpublished name\n", rank);
        bad = 1;
    }
    if (!bad)
        printf("mpi_pubsub: rank %d ok, port %s\n", rank, port);
    MPI_Finalize();
    return bad;
}
