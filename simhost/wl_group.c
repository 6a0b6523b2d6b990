/*
 * group - group construction as pmixsim measures it: N constructs of a
 * group of every process, each with a context id, optionally after every
 * process put BYTES, each followed by its destruct.
 *
 *     group [--iters N] [--size BYTES] [--check]
 *
 * An iteration puts a fresh value of BYTES bytes (PMIX_GLOBAL) and commits
 * it (with --size), constructs group "pmixsim.gI" of the whole job with
 * PMIX_GROUP_ASSIGN_CONTEXT_ID, reads the context id from the construct's
 * results, and destructs the group. --check reads the next rank's value
 * after the construct (data put before a construct is readable by every
 * member after it) and makes every process put its context id and compare
 * it with rank 0's after a fence: one id for the group everywhere. Rank 0
 * prints one line at the end.
 *
 * A plain PMIx program (it also runs under pmixrun) with no state outside
 * main's frame.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

static void fill(unsigned char *buf, size_t size, pmix_rank_t rank, int iter)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = (unsigned char)(rank * 13u + (unsigned)iter * 5u + i);
}

static int usage(void)
{
    fprintf(stderr, "usage: group [--iters N] [--size BYTES] [--check]\n");
    return 2;
}

/* The context id in a construct's results, or 0. */
static uint64_t ctxid_of(const pmix_info_t *res, size_t nres)
{
    for (size_t i = 0; i < nres; i++)
        if (PMIX_CHECK_KEY(&res[i], PMIX_GROUP_CONTEXT_ID) && res[i].value.type == PMIX_SIZE)
            return (uint64_t)res[i].value.data.size;
    return 0;
}

/* --check: the next rank's value, put before the construct. */
static int check_peer(const pmix_proc_t *me, uint32_t nprocs, size_t size, int it)
{
    pmix_proc_t peer;
    pmix_value_t *val = NULL;
    unsigned char *want = malloc(size);
    int bad = 0;
    pmix_status_t rc;

    PMIX_PROC_LOAD(&peer, me->nspace, (me->rank + 1) % nprocs);
    rc = PMIx_Get(&peer, "pmixsim.group", NULL, 0, &val);
    if (want != NULL)
        fill(want, size, peer.rank, it);
    if (rc != PMIX_SUCCESS || want == NULL || val->type != PMIX_BYTE_OBJECT ||
        val->data.bo.size != size || memcmp(val->data.bo.bytes, want, size) != 0) {
        fprintf(stderr, "group: rank %u: the value of rank %u is wrong (%s)\n", me->rank, peer.rank,
                PMIx_Error_string(rc));
        bad = 1;
    }
    free(want);
    if (val != NULL)
        PMIX_VALUE_RELEASE(val);
    return bad;
}

/* --check: every process's id is rank 0's. */
static int check_ctxid(const pmix_proc_t *me, uint64_t id, int it)
{
    char key[32];
    pmix_value_t v, *val = NULL;
    pmix_proc_t zero;
    pmix_info_t refresh;
    bool yes = true;
    int bad = 0;
    pmix_status_t rc;

    snprintf(key, sizeof(key), "pmixsim.ctx%d", it);
    PMIX_VALUE_LOAD(&v, &id, PMIX_UINT64);
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Fence(NULL, 0, NULL, 0);
    PMIX_PROC_LOAD(&zero, me->nspace, 0);
    PMIX_INFO_LOAD(&refresh, PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Get(&zero, key, &refresh, 1, &val);
    if (rc != PMIX_SUCCESS || val->type != PMIX_UINT64 || val->data.uint64 != id) {
        fprintf(stderr, "group: rank %u: context id %" PRIu64 " is not rank 0's (%s)\n", me->rank,
                id, PMIx_Error_string(rc));
        bad = 1;
    }
    PMIX_INFO_DESTRUCT(&refresh);
    if (val != NULL)
        PMIX_VALUE_RELEASE(val);
    return bad;
}

int main(int argc, char **argv)
{
    int iters = 1, errors = 0;
    size_t size = 0;
    bool check = false;
    pmix_proc_t me, job;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    uint32_t nprocs;
    uint64_t first = 0, last = 0;
    unsigned char *buf = NULL;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--check") == 0)
            check = true;
        else
            return usage();
    }
    if (iters < 1)
        return usage();
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "group: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_PROC_LOAD(&job, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val) != PMIX_SUCCESS || val->type != PMIX_UINT32) {
        fprintf(stderr, "group: rank %u: no PMIX_JOB_SIZE\n", me.rank);
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
        char name[32];
        pmix_info_t assign, *res = NULL;
        size_t nres = 0;
        bool yes = true;
        uint64_t id;

        rc = PMIX_SUCCESS;
        if (size > 0) {
            pmix_value_t v;
            fill(buf, size, me.rank, it);
            memset(&v, 0, sizeof(v));
            v.type = PMIX_BYTE_OBJECT;
            v.data.bo.bytes = (char *)buf;
            v.data.bo.size = size;
            rc = PMIx_Put(PMIX_GLOBAL, "pmixsim.group", &v);
            if (rc == PMIX_SUCCESS)
                rc = PMIx_Commit();
        }
        snprintf(name, sizeof(name), "pmixsim.g%d", it);
        PMIX_INFO_LOAD(&assign, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Group_construct(name, &job, 1, &assign, 1, &res, &nres);
        PMIX_INFO_DESTRUCT(&assign);
        id = ctxid_of(res, nres);
        if (res != NULL)
            PMIX_INFO_FREE(res, nres);
        if (rc == PMIX_SUCCESS && id == 0) {
            fprintf(stderr, "group: rank %u: construct %d gave no context id\n", me.rank, it);
            errors++;
            break;
        }
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "group: rank %u: construct %d failed: %s\n", me.rank, it,
                    PMIx_Error_string(rc));
            errors++;
            break;
        }
        if (it == 0)
            first = id;
        else if (id == last)
            errors++, fprintf(stderr, "group: rank %u: construct %d reused id %" PRIu64 "\n",
                              me.rank, it, id);
        last = id;
        if (check && size > 0 && nprocs > 1)
            errors += check_peer(&me, nprocs, size, it);
        if (check)
            errors += check_ctxid(&me, id, it);
        rc = PMIx_Group_destruct(name, NULL, 0);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "group: rank %u: destruct %d failed: %s\n", me.rank, it,
                    PMIx_Error_string(rc));
            errors++;
        }
    }
    free(buf);
    if (me.rank == 0 && errors == 0)
        printf("group: %u processes, %d constructs with %zu bytes each: ok, context ids %" PRIu64
               "..%" PRIu64 "\n",
               nprocs, iters, size, first, last);
    rc = PMIx_Finalize(NULL, 0);
    return errors == 0 && rc == PMIX_SUCCESS ? 0 : 1;
}
