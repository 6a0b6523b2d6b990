/*
 * fence - the measurement workload of pmixsim: N fences, barriers or
 * fences that collect S bytes from every process.
 *
 *     fence [--iters N] [--size BYTES] [--check] [--embed-barrier]
 *
 * Every process initializes, then runs N iterations. With --size 0 (the
 * default) an iteration is a plain PMIx_Fence (a barrier). With a size, an
 * iteration puts a fresh value of that many bytes (PMIX_GLOBAL), commits it
 * and runs a fence with PMIX_COLLECT_DATA; --check then reads the next
 * rank's value and verifies every byte. Rank 0 prints one line at the end.
 * --embed-barrier finalizes with PMIX_EMBED_BARRIER (one more fence).
 *
 * Like every workload, it is a plain PMIx program (it also runs under
 * pmixrun) and keeps no state outside main's frame: pmixsim runs thousands
 * of copies in one address space.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

static void fill(unsigned char *buf, size_t size, pmix_rank_t rank, int iter)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = (unsigned char)(rank * 31u + (unsigned)iter * 7u + i);
}

static int usage(void)
{
    fprintf(stderr, "usage: fence [--iters N] [--size BYTES] [--check] [--embed-barrier]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int iters = 1, errors = 0;
    size_t size = 0;
    bool check = false, embed = false;
    pmix_info_t fin;
    pmix_proc_t me, job;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    uint32_t nprocs;
    unsigned char *buf = NULL;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--check") == 0)
            check = true;
        else if (strcmp(argv[i], "--embed-barrier") == 0)
            embed = true;
        else
            return usage();
    }
    if (iters < 1)
        return usage();
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "fence: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_PROC_LOAD(&job, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val) != PMIX_SUCCESS || val->type != PMIX_UINT32) {
        fprintf(stderr, "fence: rank %u: no PMIX_JOB_SIZE\n", me.rank);
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    if (size > 0 && (buf = malloc(size)) == NULL) {
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    for (int it = 0; it < iters && errors == 0; it++) {
        if (size == 0) {
            rc = PMIx_Fence(NULL, 0, NULL, 0);
        } else {
            pmix_value_t v;
            pmix_info_t collect;
            bool yes = true;
            fill(buf, size, me.rank, it);
            memset(&v, 0, sizeof(v));
            v.type = PMIX_BYTE_OBJECT;
            v.data.bo.bytes = (char *)buf;
            v.data.bo.size = size;
            rc = PMIx_Put(PMIX_GLOBAL, "pmixsim.fence", &v);
            if (rc == PMIX_SUCCESS)
                rc = PMIx_Commit();
            PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
            if (rc == PMIX_SUCCESS)
                rc = PMIx_Fence(NULL, 0, &collect, 1);
            PMIX_INFO_DESTRUCT(&collect);
        }
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "fence: rank %u: iteration %d failed: %s\n", me.rank, it,
                    PMIx_Error_string(rc));
            errors++;
            break;
        }
        if (check && size > 0 && nprocs > 1) {
            pmix_proc_t peer;
            unsigned char *want = malloc(size);
            PMIX_PROC_LOAD(&peer, me.nspace, (me.rank + 1) % nprocs);
            val = NULL;
            rc = PMIx_Get(&peer, "pmixsim.fence", NULL, 0, &val);
            if (want != NULL)
                fill(want, size, peer.rank, it);
            if (rc != PMIX_SUCCESS || want == NULL || val->type != PMIX_BYTE_OBJECT ||
                val->data.bo.size != size || memcmp(val->data.bo.bytes, want, size) != 0) {
                fprintf(stderr, "fence: rank %u: the value of rank %u is wrong (%s)\n", me.rank,
                        peer.rank, PMIx_Error_string(rc));
                errors++;
            }
            free(want);
            if (val != NULL)
                PMIX_VALUE_RELEASE(val);
        }
    }
    free(buf);
    if (me.rank == 0 && errors == 0)
        printf("fence: %u processes, %d %s of %zu bytes: ok\n", nprocs, iters,
               size ? "collecting fences" : "barriers", size);
    PMIX_INFO_LOAD(&fin, PMIX_EMBED_BARRIER, &embed, PMIX_BOOL);
    rc = PMIx_Finalize(&fin, 1);
    PMIX_INFO_DESTRUCT(&fin);
    if (rc != PMIX_SUCCESS)
        fprintf(stderr, "fence: rank %u: PMIx_Finalize failed: %s\n", me.rank,
                PMIx_Error_string(rc));
    return errors == 0 && rc == PMIX_SUCCESS ? 0 : 1;
}
