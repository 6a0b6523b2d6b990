/*
 * mpi_connect.c - MPI_Comm_accept / MPI_Comm_connect under pmixrun
 * (Open MPI 4.1).
 *
 * The world splits in two halves. The first half's rank 0 opens a port and
 * publishes it under a service name; the second half looks it up (after a
 * barrier of the world, so the name is there) and connects while the first
 * half accepts. Across the new intercommunicator each rank of the first
 * half sends its world rank to the rank of the same index in the second
 * half, which checks it and answers with it plus 1000; an allreduce over
 * the merged intercommunicator sums every world rank. Both halves then
 * disconnect. One "ok" line per rank; "FAIL:" lines and exit 1 otherwise.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int wrank, wsize, ok = 1;
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm half, inter, merged;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int side = wrank < wsize / 2 ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, side, wrank, &half);
    int hrank;
    MPI_Comm_rank(half, &hrank);
    if (side == 0 && hrank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MPI_Publish_name("pmixlab-connect", MPI_INFO_NULL, port);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (side == 0) {
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter);
    } else {
        if (hrank == 0)
            MPI_Lookup_name("pmixlab-connect", MPI_INFO_NULL, port);
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter);
    }
    int rsize = 0;
    MPI_Comm_remote_size(inter, &rsize);
    if (rsize != (side == 0 ? wsize - wsize / 2 : wsize / 2)) {
        printf("mpi_connect: FAIL: rank %d sees %d remote ranks\n", wrank, rsize);
        ok = 0;
    }
    if (side == 0 && hrank < rsize) {
        int back = 0;
        MPI_Send(&wrank, 1, MPI_INT, hrank, 1, inter);
        MPI_Recv(&back, 1, MPI_INT, hrank, 2, inter, MPI_STATUS_IGNORE);
        if (back != wrank + 1000) {
            printf("mpi_connect: FAIL: rank %d got %d back\n", wrank, back);
            ok = 0;
        }
    } else if (side == 1 && hrank < rsize) {
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, hrank, 1, inter, MPI_STATUS_IGNORE);
        if (v != hrank) {
            printf("mpi_connect: FAIL: rank %d got %d, not %d\n", wrank, v, hrank);
            ok = 0;
        }
        v += 1000;
        MPI_Send(&v, 1, MPI_INT, hrank, 2, inter);
    }
    int sum = 0;
    MPI_Intercomm_merge(inter, side, &merged);
    MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, merged);
    if (sum != wsize * (wsize - 1) / 2) {
        printf("mpi_connect: FAIL: rank %d allreduce %d\n", wrank, sum);
        ok = 0;
    }
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    if (side == 0 && hrank == 0) {
        MPI_Unpublish_name("pmixlab-connect", MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
    if (ok)
        printf("mpi_connect: rank %d side %d ok\n", wrank, side);
    fflush(stdout);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return ok ? 0 : 1;
}
