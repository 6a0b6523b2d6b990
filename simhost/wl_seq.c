/*
 * seq - a workload that runs a sequence of PMIx steps given on its command
 * line: the "built-in sequence" of scenario files (docs/scenarios.md).
 *
 *     seq STEP...
 *
 *   put:SIZE              put a fresh value of SIZE bytes (PMIX_GLOBAL) under
 *                         the key pmixsim.seq.N, N = 1, 2... counting puts,
 *                         and commit it
 *   fence[:OPT,OPT...]    PMIx_Fence over the whole job (or, with parity,
 *                         over the ranks of this rank's parity) with these
 *                         options:
 *                           collect         PMIX_COLLECT_DATA
 *                           timeout=S       PMIX_TIMEOUT, in seconds
 *                           algo=NAME       pmixlab.fence.algo and
 *                                           pmixlab.barrier.algo (coll/)
 *                           algo@R=NAME     rank R passes NAME instead (a
 *                                           fence whose processes disagree)
 *                           parity          the ranks of my parity only: the
 *                                           even and the odd ranks fence as
 *                                           two sets on the same nodes
 *                           expect=STATUS   the fence must return STATUS
 *                                           (a name: PMIX_ERR_BAD_PARAM or
 *                                           err_bad_param), and the
 *                                           sequence goes on
 *   get:PEER[:N]          get put N (default: the latest) of PEER and check
 *                         every byte; PEER is next, prev or a rank
 *   leave:RANK            rank RANK calls PMIx_Finalize and exits (status
 *                         0); the others go on: their later fences over the
 *                         job fail with PMIX_ERR_LOST_CONNECTION (expect=)
 *
 * Every process runs the same steps. The first step that fails ends the
 * sequence with a line on stderr naming the rank, the step and the status;
 * rank 0 prints one line at the end when all went well. Like every
 * workload, it keeps its state in main's frame (pmixsim runs thousands of
 * copies in one address space) and runs under pmixrun as well
 * (pmixsim_seq).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <pmix.h>

#define MAX_INFO 8
#define BAD_STEP 1 /* not a PMIx status: the step cannot be read */
#define LEFT 2     /* not a PMIx status: this process left (leave:RANK) */

static void fill(unsigned char *buf, size_t size, pmix_rank_t rank, unsigned n)
{
    for (size_t i = 0; i < size; i++)
        buf[i] = (unsigned char)(rank * 131u + n * 17u + i);
}

static int usage(const char *step)
{
    fprintf(stderr,
            "seq: bad step '%s'\n"
            "usage: seq STEP...  with STEP put:SIZE |\n"
            "                    fence[:collect,timeout=S,algo=NAME,algo@RANK=NAME,\n"
            "                          parity,expect=STATUS] |\n"
            "                    get:next|prev|RANK[:N] | leave:RANK\n",
            step);
    return 2;
}

/* The status named `name` (PMIX_ERR_TIMEOUT, err_timeout, SUCCESS...), or
 * PMIX_SUCCESS with *ok false if there is none. */
static pmix_status_t status_named(const char *name, bool *ok)
{
    size_t skip = strncasecmp(name, "PMIX_", 5) == 0 ? 5 : 0;

    for (pmix_status_t st = 0; st >= -1000; st--) {
        const char *s = PMIx_Error_string(st);
        if (s != NULL && strncasecmp(s, "PMIX_", 5) == 0 && strcasecmp(s + 5, name + skip) == 0) {
            *ok = true;
            return st;
        }
    }
    *ok = false;
    return PMIX_SUCCESS;
}

/* fence[:OPT,...] for rank `me`: the info array and the expected status;
 * returns the count, or -1. */
static int fence_info(const char *opts, pmix_rank_t me, pmix_info_t info[MAX_INFO],
                      pmix_status_t *expect, bool *parity)
{
    char copy[256], *save = NULL;
    const char *algo = NULL, *mine = NULL;
    int n = 0;

    if (strlen(opts) >= sizeof(copy))
        return -1;
    strcpy(copy, opts);
    for (char *o = strtok_r(copy, ",", &save); o != NULL; o = strtok_r(NULL, ",", &save)) {
        if (n + 2 > MAX_INFO)
            return -1;
        if (strcmp(o, "collect") == 0) {
            bool yes = true;
            PMIX_INFO_LOAD(&info[n++], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        } else if (strncmp(o, "timeout=", 8) == 0) {
            int t = atoi(o + 8);
            if (t <= 0)
                return -1;
            PMIX_INFO_LOAD(&info[n++], PMIX_TIMEOUT, &t, PMIX_INT);
        } else if (strncmp(o, "algo=", 5) == 0 && o[5] != '\0') {
            algo = o + 5;
        } else if (strncmp(o, "algo@", 5) == 0) {
            char *end;
            unsigned long r = strtoul(o + 5, &end, 10);
            if (end == o + 5 || *end != '=' || end[1] == '\0')
                return -1;
            if (r == me)
                mine = end + 1;
        } else if (strcmp(o, "parity") == 0) {
            *parity = true;
        } else if (strncmp(o, "expect=", 7) == 0) {
            bool ok;
            *expect = status_named(o + 7, &ok);
            if (!ok)
                return -1;
        } else {
            return -1;
        }
    }
    if (mine != NULL)
        algo = mine;
    if (algo != NULL) {
        if (n + 2 > MAX_INFO)
            return -1;
        PMIX_INFO_LOAD(&info[n++], "pmixlab.fence.algo", algo, PMIX_STRING);
        PMIX_INFO_LOAD(&info[n++], "pmixlab.barrier.algo", algo, PMIX_STRING);
    }
    return n;
}

/* One step; returns PMIX_SUCCESS, an error, or BAD_STEP. */
static pmix_status_t step(const char *s, const pmix_proc_t *me, uint32_t nprocs, unsigned *nputs,
                          size_t *sizes, size_t maxputs)
{
    pmix_status_t rc;

    if (strncmp(s, "put:", 4) == 0) {
        char key[PMIX_MAX_KEYLEN + 1];
        pmix_value_t v;
        char *end;
        size_t size = strtoull(s + 4, &end, 10);
        unsigned char *buf;
        if (*end != '\0' || *nputs >= maxputs)
            return BAD_STEP;
        buf = malloc(size ? size : 1);
        if (buf == NULL)
            return PMIX_ERR_NOMEM;
        ++*nputs;
        sizes[*nputs] = size;
        fill(buf, size, me->rank, *nputs);
        snprintf(key, sizeof(key), "pmixsim.seq.%u", *nputs);
        memset(&v, 0, sizeof(v));
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = (char *)buf;
        v.data.bo.size = size;
        rc = PMIx_Put(PMIX_GLOBAL, key, &v);
        free(buf);
        return rc == PMIX_SUCCESS ? PMIx_Commit() : rc;
    }
    if (strcmp(s, "fence") == 0 || strncmp(s, "fence:", 6) == 0) {
        pmix_info_t info[MAX_INFO];
        pmix_status_t expect = PMIX_SUCCESS;
        bool parity = false;
        pmix_proc_t *procs = NULL;
        size_t nprocs_in = 0;
        int n = s[5] == ':' ? fence_info(s + 6, me->rank, info, &expect, &parity) : 0;
        if (n < 0)
            return BAD_STEP;
        if (parity) { /* the ranks of my parity: another set on the same nodes */
            procs = calloc(nprocs / 2 + 1, sizeof(*procs));
            if (procs == NULL)
                return PMIX_ERR_NOMEM;
            for (pmix_rank_t r = me->rank % 2; r < nprocs; r += 2)
                PMIX_PROC_LOAD(&procs[nprocs_in++], me->nspace, r);
        }
        rc = PMIx_Fence(procs, nprocs_in, n ? info : NULL, (size_t)n);
        free(procs);
        for (int i = 0; i < n; i++)
            PMIX_INFO_DESTRUCT(&info[i]);
        if (rc != expect && expect != PMIX_SUCCESS) {
            fprintf(stderr, "seq: rank %u: the fence returned %s, expected %s\n", me->rank,
                    PMIx_Error_string(rc), PMIx_Error_string(expect));
            return rc != PMIX_SUCCESS ? rc : PMIX_ERROR;
        }
        return rc == expect ? PMIX_SUCCESS : rc;
    }
    if (strncmp(s, "leave:", 6) == 0) {
        char *end;
        unsigned long r = strtoul(s + 6, &end, 10);
        if (end == s + 6 || *end != '\0' || r >= nprocs)
            return BAD_STEP;
        return r == me->rank ? LEFT : PMIX_SUCCESS;
    }
    if (strncmp(s, "get:", 4) == 0) {
        char peer_s[32], key[PMIX_MAX_KEYLEN + 1], *colon, *end;
        unsigned which = *nputs;
        pmix_proc_t peer;
        pmix_value_t *val = NULL;
        unsigned char *want;
        long r;
        snprintf(peer_s, sizeof(peer_s), "%s", s + 4);
        if ((colon = strchr(peer_s, ':')) != NULL) {
            *colon = '\0';
            which = (unsigned)strtoul(colon + 1, &end, 10);
            if (*end != '\0')
                return BAD_STEP;
        }
        if (which < 1 || which > *nputs)
            return BAD_STEP;
        if (strcmp(peer_s, "next") == 0)
            r = (long)((me->rank + 1) % nprocs);
        else if (strcmp(peer_s, "prev") == 0)
            r = (long)((me->rank + nprocs - 1) % nprocs);
        else if ((r = strtol(peer_s, &end, 10)) < 0 || *end != '\0' || r >= (long)nprocs)
            return BAD_STEP;
        PMIX_PROC_LOAD(&peer, me->nspace, (pmix_rank_t)r);
        snprintf(key, sizeof(key), "pmixsim.seq.%u", which);
        rc = PMIx_Get(&peer, key, NULL, 0, &val);
        if (rc != PMIX_SUCCESS)
            return rc;
        want = malloc(sizes[which] ? sizes[which] : 1);
        if (want != NULL)
            fill(want, sizes[which], peer.rank, which);
        if (want == NULL || val->type != PMIX_BYTE_OBJECT || val->data.bo.size != sizes[which] ||
            memcmp(val->data.bo.bytes, want, sizes[which]) != 0) {
            fprintf(stderr, "seq: rank %u: the value %s of rank %ld is wrong\n", me->rank, key, r);
            rc = PMIX_ERR_BAD_PARAM;
        }
        free(want);
        PMIX_VALUE_RELEASE(val);
        return rc;
    }
    return BAD_STEP;
}

int main(int argc, char **argv)
{
    pmix_proc_t me, job;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    uint32_t nprocs;
    unsigned nputs = 0;
    size_t *sizes;
    int failed = 0;

    if (argc < 2)
        return usage("(none)");
    sizes = calloc((size_t)argc + 1, sizeof(*sizes));
    if (sizes == NULL)
        return 1;
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "seq: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        free(sizes);
        return 1;
    }
    PMIX_PROC_LOAD(&job, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val) != PMIX_SUCCESS || val->type != PMIX_UINT32) {
        fprintf(stderr, "seq: rank %u: no PMIX_JOB_SIZE\n", me.rank);
        PMIx_Finalize(NULL, 0);
        free(sizes);
        return 1;
    }
    nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    for (int i = 1; i < argc && failed == 0; i++) {
        rc = step(argv[i], &me, nprocs, &nputs, sizes, (size_t)argc);
        if (rc == BAD_STEP) {
            failed = usage(argv[i]);
        } else if (rc == LEFT) {
            free(sizes);
            return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
        } else if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "seq: rank %u: step %d (%s) failed: %s\n", me.rank, i, argv[i],
                    PMIx_Error_string(rc));
            failed = 1;
        }
    }
    if (me.rank == 0 && failed == 0)
        printf("seq: %u processes, %d steps: ok\n", nprocs, argc - 1);
    free(sizes);
    rc = PMIx_Finalize(NULL, 0);
    return failed != 0 ? failed : rc == PMIX_SUCCESS ? 0 : 1;
}
