/*
 * mpi_spawn.c - MPI_Comm_spawn under pmixrun (Open MPI 4.1).
 *
 * The first job (every rank) spawns two copies of this program; each child
 * finds its parent through MPI_Comm_get_parent. Across the
 * intercommunicator, parent rank 0 sends child i the number 100 + i, the
 * child answers with twice that plus its world size, and every child
 * takes part in an allreduce over its own world; then both sides
 * disconnect. Each process prints one line and exits 0 only if every value
 * is right.
 */
#include <mpi.h>
#include <stdio.h>

#define NCHILDREN 2

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    int rank, size, ok = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        int errs[NCHILDREN], rsize = 0;
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, NCHILDREN, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       errs);
        MPI_Comm_remote_size(inter, &rsize);
        if (rsize != NCHILDREN) {
            printf("mpi_spawn: FAIL: parent rank %d sees %d children\n", rank, rsize);
            ok = 0;
        }
        for (int i = 0; i < NCHILDREN; i++)
            if (errs[i] != MPI_SUCCESS) {
                printf("mpi_spawn: FAIL: child %d error %d\n", i, errs[i]);
                ok = 0;
            }
        if (rank == 0) {
            for (int i = 0; i < NCHILDREN; i++) {
                int v = 100 + i, back = 0;
                MPI_Send(&v, 1, MPI_INT, i, 1, inter);
                MPI_Recv(&back, 1, MPI_INT, i, 2, inter, MPI_STATUS_IGNORE);
                if (back != 2 * v + NCHILDREN) {
                    printf("mpi_spawn: FAIL: child %d answered %d, not %d\n", i, back,
                           2 * v + NCHILDREN);
                    ok = 0;
                }
            }
        }
        MPI_Comm_disconnect(&inter);
        if (ok)
            printf("mpi_spawn: parent rank %d of %d ok\n", rank, size);
    } else {
        int v = 0, sum = 0, psize = 0;
        MPI_Comm_remote_size(parent, &psize);
        MPI_Recv(&v, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE);
        if (v != 100 + rank) {
            printf("mpi_spawn: FAIL: child %d got %d\n", rank, v);
            ok = 0;
        }
        v = 2 * v + size;
        MPI_Send(&v, 1, MPI_INT, 0, 2, parent);
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (sum != size * (size - 1) / 2) {
            printf("mpi_spawn: FAIL: child allreduce %d\n", sum);
            ok = 0;
        }
        MPI_Comm_disconnect(&parent);
        if (ok)
            printf("mpi_spawn: child rank %d of %d ok, %d parents\n", rank, size, psize);
    }
    fflush(stdout);
    MPI_Finalize();
    return ok ? 0 : 1;
}
