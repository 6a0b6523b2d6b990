/*
 * mpi_mpmd - an Open MPI program started as several application contexts
 * (pmixrun -n 2 mpi_mpmd a : -n 2 mpi_mpmd b): every rank prints its rank,
 * the size of MPI_COMM_WORLD (all contexts together), MPI_APPNUM (which
 * Open MPI reads from PMIX_APPNUM) and its first argument, after an
 * allreduce over the whole world.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, flag = 0, one = 1, sum = 0, *appnum = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("mpi_mpmd: rank %d of %d appnum %d arg %s allreduce %d\n", rank, size,
           flag && appnum != NULL ? *appnum : -1, argc > 1 ? argv[1] : "-", sum);
    MPI_Finalize();
    return 0;
}
