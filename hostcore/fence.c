/*
 * fence.c - a fence's request as the server engine hands it to its host
 * (px_hostcore.h): the info array of a fence_nb upcall read once, here,
 * for every host.
 */
#include <stdlib.h>
#include <string.h>

#include <pmix_common.h>

#include "px_coll.h"
#include "px_hostcore.h"

static bool is(const pmix_info_t *in, const char *key)
{
    return strncmp(in->key, key, PMIX_MAX_KEYLEN) == 0;
}

void px_fence_req_read(const pmix_info_t info[], size_t ninfo, px_fence_req *out)
{
    const char *algo[2] = {NULL, NULL}; /* barrier, allgather */

    memset(out, 0, sizeof(*out));
    out->local_status = PMIX_SUCCESS;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];
        if (is(in, PMIX_LOCAL_COLLECTIVE_STATUS)) {
            if (in->value.type == PMIX_STATUS && in->value.data.status != PMIX_SUCCESS)
                out->local_status = in->value.data.status;
        } else if (is(in, PMIX_COLLECT_DATA)) {
            out->collect = in->value.type != PMIX_BOOL || in->value.data.flag;
        } else if (is(in, PMIX_TIMEOUT)) {
            if (in->value.type == PMIX_INT && in->value.data.integer > 0)
                out->timeout = in->value.data.integer;
        } else if (is(in, PX_COLL_KEY_BARRIER)) {
            if (in->value.type == PMIX_STRING)
                algo[0] = in->value.data.string;
        } else if (is(in, PX_COLL_KEY_FENCE)) {
            if (in->value.type == PMIX_STRING)
                algo[1] = in->value.data.string;
        }
    }
    out->algo = algo[out->collect ? 1 : 0];
}

/* ---- participant sets ---- */

#define FNV_BASIS 14695981039346656037ull
#define FNV_PRIME 1099511628211ull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* Ids 0 and 1 are kept out: 0 reads as "no collective" in places. */
static uint64_t finish(uint64_t h)
{
    return h < 2 ? h + 2 : h;
}

uint64_t px_fence_set_all_id(const char *nspace)
{
    static const uint8_t all = 0xff; /* no rank's bytes start a set with it alone */
    uint64_t h = fnv(FNV_BASIS, nspace, strnlen(nspace, PMIX_MAX_NSLEN));
    return finish(fnv(fnv(h, "", 1), &all, 1));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void px_fence_set_fini(px_fence_set *s)
{
    if (s != NULL) {
        free(s->members);
        s->members = NULL;
    }
}

pmix_status_t px_fence_set_make(const px_jobmap *m, const pmix_proc_t procs[], size_t nprocs,
                                px_fence_set *out)
{
    uint32_t *ranks = NULL, *nodes = NULL;
    size_t n = 0, k = 0;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < nprocs; i++) {
        if (strncmp(procs[i].nspace, m->nspace, PMIX_MAX_NSLEN) != 0)
            return PMIX_ERR_NOT_SUPPORTED; /* fences across namespaces: not yet */
        if (procs[i].rank == PMIX_RANK_WILDCARD)
            goto all;
        if (procs[i].rank >= m->nprocs)
            return PMIX_ERR_BAD_PARAM;
    }
    if (nprocs == 0)
        goto all;
    if ((ranks = malloc(nprocs * sizeof(*ranks))) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < nprocs; i++)
        ranks[i] = procs[i].rank;
    qsort(ranks, nprocs, sizeof(*ranks), cmp_u32);
    for (size_t i = 0; i < nprocs; i++)
        if (i == 0 || ranks[i] != ranks[i - 1])
            ranks[n++] = ranks[i];
    if (n == m->nprocs) {
        free(ranks);
        goto all;
    }
    if ((nodes = malloc(n * sizeof(*nodes))) == NULL)
        goto fail;
    uint64_t h = fnv(FNV_BASIS, m->nspace, strnlen(m->nspace, PMIX_MAX_NSLEN));
    h = fnv(h, "", 1);
    for (size_t i = 0; i < n; i++) {
        uint8_t b[4] = {(uint8_t)ranks[i], (uint8_t)(ranks[i] >> 8), (uint8_t)(ranks[i] >> 16),
                        (uint8_t)(ranks[i] >> 24)};
        h = fnv(h, b, sizeof(b));
        nodes[i] = px_jobmap_node_of(m, ranks[i]);
    }
    qsort(nodes, n, sizeof(*nodes), cmp_u32);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || nodes[i] != nodes[i - 1])
            nodes[k++] = nodes[i];
    free(ranks);
    out->id = finish(h);
    out->nmembers = (uint32_t)k;
    out->members = nodes;
    return PMIX_SUCCESS;
all:
    out->id = px_fence_set_all_id(m->nspace);
    out->all = true;
    if (m->rank_node == NULL) { /* blocks: the first nodes, as many as hold ranks */
        uint32_t ppn = m->ppn != 0 ? m->ppn : (m->nprocs + m->nnodes - 1) / m->nnodes;
        uint32_t used = ppn != 0 ? (m->nprocs + ppn - 1) / ppn : 0;
        out->nmembers = used < m->nnodes ? used : m->nnodes;
        return PMIX_SUCCESS;
    }
    if ((nodes = calloc(m->nnodes, sizeof(*nodes))) == NULL)
        return PMIX_ERR_NOMEM;
    for (uint32_t r = 0; r < m->nprocs; r++)
        if (m->rank_node[r] < m->nnodes)
            nodes[m->rank_node[r]] = 1;
    for (uint32_t i = 0; i < m->nnodes; i++)
        if (nodes[i] != 0)
            nodes[k++] = i;
    out->nmembers = (uint32_t)k;
    out->members = nodes;
    return PMIX_SUCCESS;
fail:
    free(ranks);
    free(nodes);
    return rc;
}

/* ---- participant sets over several namespaces ---- */

static const px_jobmap *job_named(const px_jobmap *const jobs[], size_t njobs, const char *ns)
{
    for (size_t i = 0; i < njobs; i++)
        if (jobs[i] != NULL && strncmp(jobs[i]->nspace, ns, PMIX_MAX_NSLEN) == 0)
            return jobs[i];
    return NULL;
}

static int cmp_job(const void *a, const void *b)
{
    const px_jobmap *x = *(const px_jobmap *const *)a, *y = *(const px_jobmap *const *)b;
    return strncmp(x->nspace, y->nspace, PMIX_MAX_NSLEN);
}

pmix_status_t px_fence_set_make_jobs(const px_jobmap *const jobs[], size_t njobs,
                                     const pmix_proc_t procs[], size_t nprocs, px_fence_set *out)
{
    const px_jobmap **named = NULL;
    uint32_t *ranks = NULL, *nodes = NULL, nnodes = 0;
    size_t nnamed = 0, k = 0;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    memset(out, 0, sizeof(*out));
    if (njobs == 0 || jobs[0] == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (nprocs == 0)
        return px_fence_set_make(jobs[0], procs, 0, out);
    for (size_t i = 1; i < nprocs; i++)
        if (strncmp(procs[i].nspace, procs[0].nspace, PMIX_MAX_NSLEN) != 0)
            goto several;
    {
        const px_jobmap *m = job_named(jobs, njobs, procs[0].nspace);
        return m == NULL ? PMIX_ERR_NOT_SUPPORTED : px_fence_set_make(m, procs, nprocs, out);
    }
several:
    /* The namespaces named, each once, in name order: the id does not
     * depend on the order the processes were listed in. */
    if ((named = malloc(nprocs * sizeof(*named))) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < nprocs; i++) {
        const px_jobmap *m = job_named(jobs, njobs, procs[i].nspace);
        bool seen = false;
        if (m == NULL) {
            rc = PMIX_ERR_NOT_SUPPORTED; /* a namespace this host does not run */
            goto fail;
        }
        if (procs[i].rank != PMIX_RANK_WILDCARD && procs[i].rank >= m->nprocs) {
            rc = PMIX_ERR_BAD_PARAM;
            goto fail;
        }
        for (size_t j = 0; j < nnamed && !seen; j++)
            seen = named[j] == m;
        if (!seen)
            named[nnamed++] = m;
        if (m->nnodes > nnodes)
            nnodes = m->nnodes;
    }
    qsort(named, nnamed, sizeof(*named), cmp_job);
    if ((ranks = malloc(nprocs * sizeof(*ranks))) == NULL ||
        (nodes = calloc(nnodes, sizeof(*nodes))) == NULL)
        goto fail;
    uint64_t h = FNV_BASIS;
    for (size_t j = 0; j < nnamed; j++) {
        const px_jobmap *m = named[j];
        size_t n = 0, d = 0;
        bool all = false;
        for (size_t i = 0; i < nprocs; i++) {
            if (strncmp(procs[i].nspace, m->nspace, PMIX_MAX_NSLEN) != 0)
                continue;
            if (procs[i].rank == PMIX_RANK_WILDCARD)
                all = true;
            else
                ranks[n++] = procs[i].rank;
        }
        qsort(ranks, n, sizeof(*ranks), cmp_u32);
        for (size_t i = 0; i < n; i++)
            if (i == 0 || ranks[i] != ranks[i - 1])
                ranks[d++] = ranks[i];
        all = all || d == m->nprocs; /* every rank listed is the wildcard */
        h = fnv(fnv(h, m->nspace, strnlen(m->nspace, PMIX_MAX_NSLEN)), "", 1);
        if (all) {
            static const uint8_t every = 0xff;
            h = fnv(h, &every, 1);
            for (uint32_t r = 0; r < m->nprocs; r++) {
                uint32_t nd = px_jobmap_node_of(m, r);
                if (nd < nnodes)
                    nodes[nd] = 1;
            }
        } else {
            for (size_t i = 0; i < d; i++) {
                uint8_t b[4] = {(uint8_t)ranks[i], (uint8_t)(ranks[i] >> 8),
                                (uint8_t)(ranks[i] >> 16), (uint8_t)(ranks[i] >> 24)};
                h = fnv(h, b, sizeof(b));
                uint32_t nd = px_jobmap_node_of(m, ranks[i]);
                if (nd < nnodes)
                    nodes[nd] = 1;
            }
        }
        h = fnv(h, "\n", 1); /* ends this namespace's part */
    }
    for (uint32_t i = 0; i < nnodes; i++)
        if (nodes[i] != 0)
            nodes[k++] = i;
    free(named);
    free(ranks);
    out->id = finish(h);
    out->nmembers = (uint32_t)k;
    out->members = nodes;
    return PMIX_SUCCESS;
fail:
    free(named);
    free(ranks);
    free(nodes);
    return rc;
}
