/*
 * spawn_api.c - the Standard's PMIx_Spawn and PMIx_Connect /
 * PMIx_Disconnect over the client engine.
 *
 * Spawn is one request to the server's host (client/spawn.c). The
 * non-blocking form calls back exactly once, after it returned; the
 * blocking form waits for the same request and copies the new namespace
 * out.
 *
 * Connect is a collective of the processes named, which may span several
 * namespaces; it runs as a group construct (client/group.c and
 * server/group.c, with the host's group upcall when the processes span
 * nodes) of a group whose name every participant derives alike from the
 * set: "pmix.connect." and a hash of the sorted, distinct processes. Each
 * participant then holds the data its peers committed before the connect,
 * as after a collecting fence, and its server knows the other namespaces'
 * jobs. Disconnect destructs that group. So a set is connected once at a
 * time (a second connect of the same set before the disconnect gets
 * PMIX_ERR_EXISTS), and every participant must name the processes the same
 * way: a namespace as its wildcard, or every rank of it. PMIX_TIMEOUT
 * bounds both, as for a group.
 */
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "px_api.h"

typedef struct ssync {
    px_wait w;
    px_api_client *ac;
    pmix_status_t status;
    pmix_nspace_t nspace;
} ssync;

static void ssync_spawn(pmix_status_t status, pmix_nspace_t nspace, void *cbdata)
{
    ssync *s = cbdata;

    s->status = status;
    if (nspace != NULL)
        PMIx_Load_nspace(s->nspace, nspace);
    s->ac->pops->wake(s->ac->pctx, &s->w);
}

static void ssync_op(pmix_status_t status, void *cbdata)
{
    ssync *s = cbdata;

    s->status = status;
    s->ac->pops->wake(s->ac->pctx, &s->w);
}

static void ssync_info(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                       pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    if (release_fn != NULL)
        release_fn(release_cbdata);
    ssync_op(status, cbdata);
}

/* The caller's client for a blocking call, or NULL with *rc set; `s`
 * cleared and bound to it. */
static px_api_client *blocking(ssync *s, pmix_status_t *rc)
{
    memset(s, 0, sizeof(*s));
    s->ac = px_api_for_blocking(rc);
    return s->ac;
}

static pmix_status_t ssync_wait(ssync *s, pmix_status_t rc)
{
    if (rc != PMIX_SUCCESS)
        return rc;
    s->ac->pops->wait(s->ac->pctx, &s->w);
    return s->status;
}

/* ---- spawn ---- */

/* A spawn the tool did itself, answered from the caller's progress. */
typedef struct tspawn {
    pmix_spawn_cbfunc_t cbfunc;
    void *cbdata;
    pmix_status_t status;
    pmix_nspace_t nspace;
} tspawn;

static void tspawn_done(void *arg)
{
    tspawn *t = arg;

    t->cbfunc(t->status, t->nspace, t->cbdata);
    free(t);
}

PMIX_EXPORT pmix_status_t PMIx_Spawn_nb(const pmix_info_t job_info[], size_t ninfo,
                                        const pmix_app_t apps[], size_t napps,
                                        pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = px_api_for_nonblocking();
    tspawn *t;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (cbfunc != NULL && (t = calloc(1, sizeof(*t))) != NULL) {
        /* a tool with a server side and no server starts them itself */
        t->status = px_api_tool_spawn(job_info, ninfo, apps, napps, t->nspace);
        if (t->status != PMIX_ERR_NOT_SUPPORTED) {
            pmix_status_t rc = t->status;
            t->cbfunc = cbfunc;
            t->cbdata = cbdata;
            if (rc == PMIX_SUCCESS && (rc = px_api_defer(tspawn_done, t)) == PMIX_SUCCESS)
                return PMIX_SUCCESS;
            free(t);
            return rc;
        }
        free(t);
    }
    return ENGINE(ac, px_client_spawn(ac->client, job_info, ninfo, apps, napps, cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Spawn(const pmix_info_t job_info[], size_t ninfo,
                                     const pmix_app_t apps[], size_t napps, pmix_nspace_t nspace)
{
    ssync s;
    pmix_status_t rc;
    px_api_client *ac = blocking(&s, &rc);

    if (nspace != NULL)
        memset(nspace, 0, sizeof(pmix_nspace_t));
    if (ac == NULL)
        return rc;
    /* a tool with a server side and no server starts them itself */
    rc = px_api_tool_spawn(job_info, ninfo, apps, napps, s.nspace);
    if (rc != PMIX_ERR_NOT_SUPPORTED) {
        if (rc == PMIX_SUCCESS && nspace != NULL)
            PMIx_Load_nspace(nspace, s.nspace);
        return rc;
    }
    rc = ENGINE(ac, px_client_spawn(ac->client, job_info, ninfo, apps, napps, ssync_spawn, &s));
    rc = ssync_wait(&s, rc);
    if (rc == PMIX_SUCCESS && nspace != NULL)
        PMIx_Load_nspace(nspace, s.nspace);
    return rc;
}

/* ---- connect and disconnect ---- */

static int proc_cmp(const void *a, const void *b)
{
    const pmix_proc_t *x = a, *y = b;
    int c = strncmp(x->nspace, y->nspace, PMIX_MAX_NSLEN);

    if (c != 0)
        return c;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The connection's group name: "pmix.connect." and the FNV-1a hash of
 * the sorted, distinct processes. PMIX_ERR_BAD_PARAM for no process. */
static pmix_status_t connect_name(const pmix_proc_t procs[], size_t nprocs, char *name, size_t len)
{
    pmix_proc_t *sorted;
    uint64_t h = 14695981039346656037ull;

    if (procs == NULL || nprocs == 0)
        return PMIX_ERR_BAD_PARAM;
    if ((sorted = malloc(nprocs * sizeof(*sorted))) == NULL)
        return PMIX_ERR_NOMEM;
    memcpy(sorted, procs, nprocs * sizeof(*sorted));
    qsort(sorted, nprocs, sizeof(*sorted), proc_cmp);
    for (size_t i = 0; i < nprocs; i++) {
        if (i > 0 && proc_cmp(&sorted[i - 1], &sorted[i]) == 0)
            continue;
        size_t l = strnlen(sorted[i].nspace, PMIX_MAX_NSLEN);
        for (size_t k = 0; k <= l; k++) { /* the terminating NUL separates */
            h ^= k < l ? (unsigned char)sorted[i].nspace[k] : 0;
            h *= 1099511628211ull;
        }
        for (int k = 0; k < 4; k++) {
            h ^= (sorted[i].rank >> (8 * k)) & 0xff;
            h *= 1099511628211ull;
        }
    }
    free(sorted);
    snprintf(name, len, "pmix.connect.%016llx", (unsigned long long)h);
    return PMIX_SUCCESS;
}

typedef struct conn_cb {
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} conn_cb;

static void connect_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                         pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    conn_cb *cc = cbdata;

    if (release_fn != NULL)
        release_fn(release_cbdata);
    if (cc->cbfunc != NULL)
        cc->cbfunc(status, cc->cbdata);
    free(cc);
}

PMIX_EXPORT pmix_status_t PMIx_Connect_nb(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = px_api_for_nonblocking();
    char name[PMIX_MAX_NSLEN + 1];
    pmix_status_t rc;
    conn_cb *cc;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if ((rc = connect_name(procs, nprocs, name, sizeof(name))) != PMIX_SUCCESS)
        return rc;
    if ((cc = malloc(sizeof(*cc))) == NULL)
        return PMIX_ERR_NOMEM;
    cc->cbfunc = cbfunc;
    cc->cbdata = cbdata;
    rc = ENGINE(ac, px_client_group_construct(ac->client, name, procs, nprocs, info, ninfo,
                                              connect_done, cc));
    if (rc != PMIX_SUCCESS)
        free(cc);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Connect(const pmix_proc_t procs[], size_t nprocs,
                                       const pmix_info_t info[], size_t ninfo)
{
    ssync s;
    char name[PMIX_MAX_NSLEN + 1];
    pmix_status_t rc;
    px_api_client *ac = blocking(&s, &rc);

    if (ac == NULL)
        return rc;
    if ((rc = connect_name(procs, nprocs, name, sizeof(name))) != PMIX_SUCCESS)
        return rc;
    rc = ENGINE(ac, px_client_group_construct(ac->client, name, procs, nprocs, info, ninfo,
                                              ssync_info, &s));
    return ssync_wait(&s, rc);
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect_nb(const pmix_proc_t procs[], size_t nprocs,
                                             const pmix_info_t info[], size_t ninfo,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = px_api_for_nonblocking();
    char name[PMIX_MAX_NSLEN + 1];
    pmix_status_t rc;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if ((rc = connect_name(procs, nprocs, name, sizeof(name))) != PMIX_SUCCESS)
        return rc;
    return ENGINE(ac, px_client_group_destruct(ac->client, name, info, ninfo, cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Disconnect(const pmix_proc_t procs[], size_t nprocs,
                                          const pmix_info_t info[], size_t ninfo)
{
    ssync s;
    char name[PMIX_MAX_NSLEN + 1];
    pmix_status_t rc;
    px_api_client *ac = blocking(&s, &rc);

    if (ac == NULL)
        return rc;
    if ((rc = connect_name(procs, nprocs, name, sizeof(name))) != PMIX_SUCCESS)
        return rc;
    rc = ENGINE(ac, px_client_group_destruct(ac->client, name, info, ninfo, ssync_op, &s));
    return ssync_wait(&s, rc);
}
