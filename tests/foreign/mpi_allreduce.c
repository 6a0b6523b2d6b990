/*
 * mpi_allreduce - ITERS MPI_Allreduce calls of one double (default 100)
 * after a warm-up one, timed on rank 0 between two barriers. Built with
 * Open MPI's mpicc, never by this build: it measures how a launcher
 * (pmixrun or mpirun) leaves Open MPI to run, not our code. Used by
 * bench/mpi_allreduce.sh and the foreign.openmpi_allreduce test: with more
 * ranks than cores, a rank that is not told to yield when idle spins on a
 * core that another rank needs, and each call takes a scheduler tick.
 *
 * Prints "allreduce np=N iters=I total_s=T per_call_us=U sum_ok=1|0".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double in = rank + 1.0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int ok = 1;
    for (int i = 0; i < iters; i++) {
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (out != size * (size + 1) / 2.0)
            ok = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("allreduce np=%d iters=%d total_s=%.3f per_call_us=%.1f sum_ok=%d\n", size, iters, t,
               t / iters * 1e6, ok);
    MPI_Finalize();
    return ok ? 0 : 1;
}
