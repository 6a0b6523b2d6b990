/*
 * mpi_ring.c - an MPI program for the foreign-client test: built by Open
 * MPI's mpicc (so against Open MPI's own PMIx component and the OpenPMIx
 * headers it was built with), it runs under pmixrun with our
 * libpmix.so.2. MPI_Init exercises the whole PMIx start-up of Open MPI 4.1
 * (job data, modex, fences); a ring exchange and an allreduce prove the
 * processes found each other's endpoints.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, sum = 0, one = 1, token = -1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        MPI_Sendrecv(&rank, 1, MPI_INT, next, 7, &token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    } else {
        token = 0;
    }
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("mpi_ring: rank %d of %d got %d from its left, allreduce %d\n", rank, size, token, sum);
    MPI_Finalize();
    return sum == size && token == (rank + size - 1) % size ? 0 : 1;
}
