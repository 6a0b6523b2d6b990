/*
 * hello - the smallest useful PMIx program.
 *
 * Run it under any PMIx launcher, e.g. `pmixrun -n 4 ./hello`. Each process
 * connects to its local PMIx server (PMIx_Init), learns its rank (returned by
 * PMIx_Init) and the size of its job (job-level information, available at
 * once without any communication), waits for every process of the job
 * (PMIx_Fence), prints one line and disconnects (PMIx_Finalize).
 *
 * It uses nothing but the Standard's API, so it builds unchanged against any
 * PMIx implementation.
 */
#include <stdio.h>

#include <pmix.h>

int main(void)
{
    pmix_proc_t myproc, job;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    unsigned size;

    /* Connect to the local server; myproc receives our namespace and rank. */
    rc = PMIx_Init(&myproc, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "hello: PMIx_Init failed: %s (is this running under a PMIx launcher?)\n",
                PMIx_Error_string(rc));
        return 1;
    }

    /* Job-level data is asked of the whole namespace: rank PMIX_RANK_WILDCARD. */
    PMIX_PROC_LOAD(&job, myproc.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "hello: rank %u: PMIx_Get(PMIX_JOB_SIZE) failed: %s\n", myproc.rank,
                PMIx_Error_string(rc));
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    if (val->type != PMIX_UINT32) {
        fprintf(stderr, "hello: rank %u: PMIX_JOB_SIZE has type %s, expected %s\n", myproc.rank,
                PMIx_Data_type_string(val->type), PMIx_Data_type_string(PMIX_UINT32));
        PMIX_VALUE_RELEASE(val);
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    /* A barrier across the whole namespace (procs = NULL); no data moves. */
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "hello: rank %u: PMIx_Fence failed: %s\n", myproc.rank,
                PMIx_Error_string(rc));
        PMIx_Finalize(NULL, 0);
        return 1;
    }

    printf("hello from rank %u of %u\n", myproc.rank, size);
    fflush(stdout);

    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "hello: rank %u: PMIx_Finalize failed: %s\n", myproc.rank,
                PMIx_Error_string(rc));
        return 1;
    }
    return 0;
}
