/*
 * toolsrv.c - the server side of a tool (px_toolsrv.h says what it does).
 *
 * The host table below answers the server engine's upcalls for the tool:
 * tool_connected names a peer (and checks that a peer asking for the name
 * of a job this tool started is that job's process), client_connected2
 * refuses registered clients (a tool starts no clients of its own), and
 * notify_event hands a peer's event to the tool's own handlers. Every
 * upcall runs under the platform's lock, which the tool's client engine
 * shares, so the client engine is called directly.
 *
 * Peers are remembered by name when accepted (the engine reports no
 * tool's departure): `peers` is what PMIx_tool_set_server waits for,
 * `launchers` where the tool's events for processes beyond its peers go.
 * Both are bounded (PX_SERVER_MAX_TOOLS names each, the oldest dropped).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "tool/px_toolsrv.h"

typedef struct ts_job {
    char nspace[PMIX_MAX_NSLEN + 1];
    uint32_t nprocs;
    pid_t *pids; /* per rank, 0 until started */
} ts_job;

struct px_toolsrv {
    px_client *own;
    px_server *srv;
    px_server_host host;
    ts_job *jobs;
    size_t njobs;
    pid_t *allpids; /* px_toolsrv_pids */
    size_t nallpids;
    pmix_proc_t peers[PX_SERVER_MAX_TOOLS];
    size_t npeers, next_peer;
    pmix_proc_t launchers[PX_SERVER_MAX_TOOLS];
    size_t nlaunchers, next_launcher;
    unsigned ntools; /* names given: "<ns>.tool.<n>" */
};

/* Add `p` to a bounded set of names (the oldest goes when it is full). */
static void set_add(pmix_proc_t *set, size_t *n, size_t *next, const pmix_proc_t *p)
{
    for (size_t i = 0; i < *n; i++)
        if (PMIx_Check_procid(&set[i], p))
            return;
    if (*n < PX_SERVER_MAX_TOOLS) {
        set[(*n)++] = *p;
        return;
    }
    set[*next] = *p;
    *next = (*next + 1) % PX_SERVER_MAX_TOOLS;
}

/* Whether `p` is in `set`, a wildcard rank on either side matching every
 * rank of its namespace. */
static bool set_has(const pmix_proc_t *set, size_t n, const pmix_proc_t *p)
{
    for (size_t i = 0; i < n; i++)
        if (PMIx_Check_nspace(set[i].nspace, p->nspace) &&
            (set[i].rank == p->rank || p->rank == PMIX_RANK_WILDCARD ||
             set[i].rank == PMIX_RANK_WILDCARD))
            return true;
    return false;
}

static ts_job *job_of(px_toolsrv *t, const char *nspace)
{
    for (size_t i = 0; i < t->njobs; i++)
        if (PMIx_Check_nspace(t->jobs[i].nspace, nspace))
            return &t->jobs[i];
    return NULL;
}

/* ---- the host table ---- */

static void up_tool_connected(void *hctx, const pmix_info_t info[], size_t ninfo,
                              pmix_tool_connection_cbfunc_t cbfunc, void *cbdata)
{
    px_toolsrv *t = hctx;
    const char *want = px_info_string(info, ninfo, PMIX_TOOL_NSPACE);
    const pmix_info_t *rk = px_info_find(info, ninfo, PMIX_TOOL_RANK);
    const pmix_info_t *pi = px_info_find(info, ninfo, PMIX_PROC_PID);
    uint64_t v;
    pmix_proc_t p;
    ts_job *j;

    memset(&p, 0, sizeof(p));
    if (want != NULL && want[0] != '\0') {
        PMIx_Load_nspace(p.nspace, want);
        p.rank =
            rk != NULL && px_value_get_number(&rk->value, &v) == PMIX_SUCCESS ? (pmix_rank_t)v : 0;
    } else {
        snprintf(p.nspace, sizeof(p.nspace), "%.200s.tool.%u", px_client_self(t->own)->nspace,
                 ++t->ntools);
        p.rank = 0;
    }
    if (PMIx_Check_nspace(p.nspace, px_client_self(t->own)->nspace)) {
        cbfunc(PMIX_ERR_NO_PERMISSIONS, NULL, cbdata); /* the tool's own name */
        return;
    }
    if ((j = job_of(t, p.nspace)) != NULL) {
        /* a process this tool started: only that one */
        if (p.rank >= j->nprocs || pi == NULL ||
            px_value_get_number(&pi->value, &v) != PMIX_SUCCESS || j->pids[p.rank] == 0 ||
            (pid_t)v != j->pids[p.rank]) {
            cbfunc(PMIX_ERR_NO_PERMISSIONS, NULL, cbdata);
            return;
        }
        set_add(t->launchers, &t->nlaunchers, &t->next_launcher, &p);
    }
    set_add(t->peers, &t->npeers, &t->next_peer, &p);
    cbfunc(PMIX_SUCCESS, &p, cbdata);
}

/* A tool registers no clients: any HELLO as one is refused. */
static pmix_status_t up_client_connected2(void *hctx, const pmix_proc_t *proc, void *obj,
                                          const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)hctx;
    (void)proc;
    (void)obj;
    (void)info;
    (void)ninfo;
    (void)cbfunc;
    (void)cbdata;
    return PMIX_ERR_NO_PERMISSIONS;
}

/* A peer's event whose range goes beyond it: the tool's own handlers. */
static void up_notify(void *hctx, pmix_status_t status, const pmix_proc_t *source,
                      pmix_data_range_t range, const pmix_info_t info[], size_t ninfo)
{
    px_toolsrv *t = hctx;
    const pmix_info_t *cr = px_info_find(info, ninfo, PMIX_EVENT_CUSTOM_RANGE);
    const pmix_proc_t *self = px_client_self(t->own);

    if (status == PMIX_LAUNCHER_READY)
        set_add(t->launchers, &t->nlaunchers, &t->next_launcher, source);
    if (range == PMIX_RANGE_CUSTOM && cr != NULL) {
        /* only if it names this tool */
        bool me = false;
        if (cr->value.type == PMIX_PROC && cr->value.data.proc != NULL)
            me = set_has(cr->value.data.proc, 1, self);
        else if (cr->value.type == PMIX_DATA_ARRAY && cr->value.data.darray != NULL &&
                 cr->value.data.darray->type == PMIX_PROC)
            me = set_has(cr->value.data.darray->array, cr->value.data.darray->size, self);
        if (!me)
            return;
    }
    if (range == PMIX_RANGE_NAMESPACE && !PMIx_Check_nspace(source->nspace, self->nspace))
        return;
    (void)px_client_notify(t->own, status, source, PMIX_RANGE_PROC_LOCAL, info, ninfo, NULL, NULL);
}

px_toolsrv *px_toolsrv_create(px_client *own, const px_platform_ops *pops, void *pctx, uint32_t uid)
{
    px_toolsrv *t = calloc(1, sizeof(*t));

    if (t == NULL)
        return NULL;
    t->own = own;
    t->host.version = PX_SERVER_HOST_VERSION;
    t->host.client_connected2 = up_client_connected2;
    t->host.tool_connected = up_tool_connected;
    t->host.notify_event = up_notify;
    t->srv = px_server_create(&t->host, t, pops, pctx);
    if (t->srv == NULL || px_server_tools(t->srv, px_client_self(own), uid) != PMIX_SUCCESS) {
        px_server_destroy(t->srv);
        free(t);
        return NULL;
    }
    return t;
}

void px_toolsrv_destroy(px_toolsrv *t)
{
    if (t == NULL)
        return;
    px_server_destroy(t->srv);
    for (size_t i = 0; i < t->njobs; i++)
        free(t->jobs[i].pids);
    free(t->jobs);
    free(t->allpids);
    free(t);
}

px_server *px_toolsrv_server(px_toolsrv *t)
{
    return t->srv;
}

pmix_status_t px_toolsrv_add_job(px_toolsrv *t, const char *nspace, uint32_t nprocs,
                                 const pmix_info_t info[], size_t ninfo)
{
    ts_job *v;
    pmix_status_t rc;

    if (nspace == NULL || strlen(nspace) > PMIX_MAX_NSLEN || nprocs == 0 ||
        job_of(t, nspace) != NULL)
        return PMIX_ERR_BAD_PARAM;
    if ((v = realloc(t->jobs, (t->njobs + 1) * sizeof(*v))) == NULL)
        return PMIX_ERR_NOMEM;
    t->jobs = v;
    v = &t->jobs[t->njobs];
    memset(v, 0, sizeof(*v));
    if ((v->pids = calloc(nprocs, sizeof(pid_t))) == NULL)
        return PMIX_ERR_NOMEM;
    rc = px_server_register_nspace(t->srv, nspace, 0, info, ninfo);
    if (rc != PMIX_SUCCESS) {
        free(v->pids);
        return rc;
    }
    PMIx_Load_nspace(v->nspace, nspace);
    v->nprocs = nprocs;
    t->njobs++;
    return PMIX_SUCCESS;
}

void px_toolsrv_job_pid(px_toolsrv *t, const char *nspace, pmix_rank_t rank, pid_t pid)
{
    ts_job *j = job_of(t, nspace);
    pid_t *v;

    if (j == NULL || rank >= j->nprocs)
        return;
    j->pids[rank] = pid;
    if ((v = realloc(t->allpids, (t->nallpids + 1) * sizeof(*v))) == NULL)
        return; /* not reaped by finalize then: the tool's own wait may */
    t->allpids = v;
    t->allpids[t->nallpids++] = pid;
}

const pid_t *px_toolsrv_pids(px_toolsrv *t, size_t *n)
{
    *n = t->nallpids;
    return t->allpids;
}

/* The processes custom range `cr` names: *n of them. */
static const pmix_proc_t *targets(const pmix_info_t *cr, size_t *n)
{
    *n = 0;
    if (cr->value.type == PMIX_PROC && cr->value.data.proc != NULL) {
        *n = 1;
        return cr->value.data.proc;
    }
    if (cr->value.type == PMIX_DATA_ARRAY && cr->value.data.darray != NULL &&
        cr->value.data.darray->type == PMIX_PROC) {
        *n = cr->value.data.darray->size;
        return cr->value.data.darray->array;
    }
    return NULL;
}

void px_toolsrv_notify(px_toolsrv *t, pmix_status_t status, const pmix_proc_t *source,
                       pmix_data_range_t range, const pmix_info_t info[], size_t ninfo)
{
    const pmix_proc_t *src = source != NULL ? source : px_client_self(t->own);
    const pmix_info_t *cr;

    if (range == PMIX_RANGE_PROC_LOCAL)
        return;
    px_server_notify(t->srv, status, src, range, info, ninfo);
    if (range != PMIX_RANGE_CUSTOM ||
        (cr = px_info_find(info, ninfo, PMIX_EVENT_CUSTOM_RANGE)) == NULL)
        return;
    size_t n;
    const pmix_proc_t *p = targets(cr, &n);
    bool beyond = false;
    for (size_t i = 0; i < n && !beyond; i++)
        beyond = !set_has(t->peers, t->npeers, &p[i]); /* a process no peer of ours is */
    for (size_t i = 0; beyond && i < t->nlaunchers; i++)
        if (!set_has(p, n, &t->launchers[i])) /* those in range have it already */
            px_server_notify_proc(t->srv, status, src, &t->launchers[i], info, ninfo);
}

bool px_toolsrv_has_peer(px_toolsrv *t, const pmix_proc_t *proc)
{
    return set_has(t->peers, t->npeers, proc);
}
