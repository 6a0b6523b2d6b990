/*
 * debug_target - a client for the tool tests (tests/integration/debug.sh):
 * something for a tool to look at.
 *
 *   debug_target hang     every rank but the last calls PMIx_Fence; the last
 *                         sleeps (100 s) and never arrives, so the others
 *                         wait in the fence: what pmixstack should show
 *   debug_target hangall every rank waits in PMIx_Fence for ever: the last in a
 *                         fence of itself and rank 0, the others in one of the
 *                         whole job, which the last never joins (nor rank 0
 *                         the other): one merged stack of every rank
 *   debug_target hello    PMIx_Init, then "hello from rank R of N" on stdout
 *                         and "note from rank R" on stderr, PMIx_Finalize
 *   debug_target where    PMIx_Init, "rank R of N on HOST" on stdout (HOST:
 *                         its PMIX_HOSTNAME), then a fence of the whole job
 *                         (across its nodes) and PMIx_Finalize
 *
 * Exits 0 unless a call fails (its status on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix.h>

int main(int argc, char **argv)
{
    pmix_proc_t me, wild;
    pmix_value_t *val = NULL;
    uint32_t size = 0;
    pmix_status_t rc;

    if (argc != 2 || (strcmp(argv[1], "hang") != 0 && strcmp(argv[1], "hangall") != 0 &&
                      strcmp(argv[1], "hello") != 0 && strcmp(argv[1], "where") != 0)) {
        fprintf(stderr, "usage: debug_target hang|hangall|hello|where\n");
        return 2;
    }
    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "debug_target: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_UINT32) {
        fprintf(stderr, "debug_target: PMIX_JOB_SIZE: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    size = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    if (strcmp(argv[1], "hangall") == 0) {
        pmix_proc_t pair[2];
        PMIX_LOAD_PROCID(&pair[0], me.nspace, 0);
        PMIX_LOAD_PROCID(&pair[1], me.nspace, size - 1);
        if (me.rank == size - 1 && size > 1)
            rc = PMIx_Fence(pair, 2, NULL, 0);
        else
            rc = PMIx_Fence(NULL, 0, NULL, 0);
        fprintf(stderr, "debug_target: rank %u: the fence ended: %s\n", me.rank,
                PMIx_Error_string(rc));
    } else if (strcmp(argv[1], "hang") == 0) {
        if (me.rank == size - 1) {
            sleep(100);
        } else {
            rc = PMIx_Fence(NULL, 0, NULL, 0);
            fprintf(stderr, "debug_target: rank %u: the fence ended: %s\n", me.rank,
                    PMIx_Error_string(rc));
        }
    } else if (strcmp(argv[1], "where") == 0) {
        rc = PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &val);
        if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_STRING) {
            fprintf(stderr, "debug_target: PMIX_HOSTNAME: %s\n", PMIx_Error_string(rc));
            return 1;
        }
        printf("rank %u of %u on %s\n", me.rank, size, val->data.string);
        fflush(stdout);
        PMIX_VALUE_RELEASE(val);
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "debug_target: rank %u: PMIx_Fence: %s\n", me.rank,
                    PMIx_Error_string(rc));
            return 1;
        }
    } else {
        printf("hello from rank %u of %u\n", me.rank, size);
        fflush(stdout);
        fprintf(stderr, "note from rank %u\n", me.rank);
    }
    rc = PMIx_Finalize(NULL, 0);
    return rc == PMIX_SUCCESS ? 0 : 1;
}
