/*
 * server_api.c - the Standard's server calls: one default server engine
 * per process, on the posix platform, behind the Standard's host module.
 *
 * The Standard's pmix_server_module_t upcalls carry no host context, so
 * the adapter below passes the module itself as the engine's host
 * context and forwards each upcall. Hosts that want several servers in one
 * process (pmixsim) use the engine (server/px_server.h) directly.
 *
 * Rendezvous: PMIx_server_init listens on a Unix socket in the directory
 * given by PMIX_SERVER_TMPDIR (created with mode 0700 if missing), or in a
 * private directory it creates under $TMPDIR (or /tmp) and removes at
 * PMIx_server_finalize. PMIx_server_setup_fork tells each client where.
 *
 * Callbacks to the host. Calls that take a callback return PMIX_SUCCESS
 * and call it later, from the library's progress thread with no lock of
 * ours held, never from inside the host's call (as OpenPMIx does; Slurm's
 * plugin takes anything else as a failure, and may hold a lock of its own
 * that its callbacks take). The completions the host gets for upcalls
 * never wait for the engine lock. Both go through px_defer.h, which says
 * why.
 *
 * Tools. With PMIX_SERVER_TOOL_SUPPORT (or PMIX_SERVER_SYSTEM_SUPPORT)
 * the server accepts tools of its own user and writes rendezvous files
 * (px_rndz.h) into its directory, as OpenPMIx does: one by its pid, one by
 * its namespace if the host named it (PMIX_SERVER_NSPACE), removed at
 * PMIx_server_finalize; with
 * PMIX_SERVER_SYSTEM_SUPPORT also the system file, in PMIX_SYSTEM_TMPDIR
 * (the attribute, else as px_rndz.h says). The module's tool_connected
 * names each tool; its query answers what tools and clients ask the host.
 *
 * Events. A server process has handlers too (Slurm registers a default
 * one): they live in a client engine of their own that never connects,
 * which gives them the client's chains and ordering. PMIx_Notify_event in
 * the server process runs them, and for ranges beyond the process also
 * reaches the server's clients.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/px_api.h"
#include "api/px_defer.h"
#include "api/px_rndz.h"
#include "client/px_client.h"
#include "common/px_common.h"
#include "platform/px_posix.h"
#include "server/px_server.h"

static struct {
    bool active;
    int refcount; /* PMIx_server_init calls not yet balanced */
    pmix_server_module_t module;
    px_posix *posix;
    px_server *srv;
    px_defer *defer; /* callbacks to the host (px_defer.h) */
    px_client *evc;  /* the server process's event handlers */
    char *uri;
    char dir[512];
    bool made_dir;
    bool tools;              /* tool support: rendezvous files are written */
    char sysdir[512];        /* where the system file is, if one was written */
    char **rndz;             /* names of the files written in dir (NULL-terminated) */
    pthread_mutex_t rndz_mu; /* guards rndz; zeroed is valid (glibc) */
} S;

bool px_api_server_active(void)
{
    return S.active;
}

/* ---- the adapter: px_server_host over pmix_server_module_t ---- */

/* Each upcall that takes a completion gets px_defer's in place of the
 * engine's (px_defer.h, rule 2). */

/* The legacy upcall has no callback (as in OpenPMIx 4): its answer is
 * final. Hosts written for it (Slurm) return PMIX_SUCCESS and never call
 * back. */
static pmix_status_t ad_connected(void *hctx, const pmix_proc_t *proc, void *obj,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    pmix_status_t rc;

    if (m->client_connected == NULL)
        return PMIX_OPERATION_SUCCEEDED;
    rc = m->client_connected(proc, obj, NULL, NULL);
    return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
}

/* The engine says who the peer is (PMIX_PROC_PID, PMIX_USERID,
 * PMIX_GRPID); a host with client_connected2 hears it, and gets px_defer's
 * completion in place of the engine's, as every upcall with one does. */
static pmix_status_t ad_connected2(void *hctx, const pmix_proc_t *proc, void *obj,
                                   const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->client_connected2 == NULL)
        return ad_connected(hctx, proc, obj, cbfunc, cbdata);
    if ((w = px_defer_wrap_op(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->client_connected2(proc, obj, (pmix_info_t *)info, ninfo, px_defer_op_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

static pmix_status_t ad_finalized(void *hctx, const pmix_proc_t *proc, void *obj,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->client_finalized == NULL)
        return PMIX_OPERATION_SUCCEEDED;
    if ((w = px_defer_wrap_op(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->client_finalized(proc, obj, px_defer_op_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

static pmix_status_t ad_abort(void *hctx, const pmix_proc_t *proc, void *obj, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->abort == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_op(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->abort(proc, obj, status, msg, procs, nprocs, px_defer_op_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

static pmix_status_t ad_fence(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->fence_nb == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_modex(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->fence_nb(procs, nprocs, info, ninfo, data, ndata, px_defer_modex_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

static pmix_status_t ad_dmodex(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                               size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->direct_modex == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_modex(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->direct_modex(proc, info, ninfo, px_defer_modex_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

static pmix_status_t ad_jctrl(void *hctx, const pmix_proc_t *requestor, const pmix_proc_t targets[],
                              size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                              pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->job_control == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_info(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->job_control(requestor, targets, ntargets, directives, ndirs, px_defer_info_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

/* A group upcall's engine completion, kept while the host works. */
typedef struct ad_grp {
    px_group_cbfunc_t fn;
    void *cbdata;
} ad_grp;

/* The host's answer to a group upcall (through px_defer's completion):
 * its PMIX_GROUP_CONTEXT_ID, and its PMIX_GROUP_ENDPT_DATA (one per node,
 * or one holding every node's data) concatenated, for the engine. */
static void ad_group_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                          pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    ad_grp *g = cbdata;
    bool has_ctxid = false;
    uint64_t ctxid = 0;
    size_t total = 0, off = 0;
    char *data;

    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_GROUP_CONTEXT_ID) == 0)
            has_ctxid = px_value_get_number(&info[i].value, &ctxid) == PMIX_SUCCESS;
        else if (strcmp(info[i].key, PMIX_GROUP_ENDPT_DATA) == 0 &&
                 info[i].value.type == PMIX_BYTE_OBJECT)
            total += info[i].value.data.bo.size;
    }
    data = malloc(total ? total : 1);
    if (data == NULL && status == PMIX_SUCCESS)
        status = PMIX_ERR_NOMEM;
    for (size_t i = 0; i < ninfo && data != NULL; i++) {
        if (strcmp(info[i].key, PMIX_GROUP_ENDPT_DATA) == 0 &&
            info[i].value.type == PMIX_BYTE_OBJECT && info[i].value.data.bo.size > 0) {
            memcpy(data + off, info[i].value.data.bo.bytes, info[i].value.data.bo.size);
            off += info[i].value.data.bo.size;
        }
    }
    g->fn(status, has_ctxid, ctxid, data, data != NULL ? total : 0, g->cbdata, NULL, NULL);
    free(data);
    free(g);
    if (release_fn != NULL)
        release_fn(release_cbdata);
}

/* The engine's typed group request as the Standard's group upcall: the
 * directives the host needs, this node's data as PMIX_GROUP_ENDPT_DATA,
 * a local failure as PMIX_LOCAL_COLLECTIVE_STATUS. PMIX_TIMEOUT is not
 * passed: the library enforces it, and the Standard asks such libraries
 * not to hand it to the host as well. */
static pmix_status_t ad_group(void *hctx, const px_group_req *req, px_group_cbfunc_t cbfunc,
                              void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    pmix_info_t info[5];
    size_t n = 0;
    bool yes = true;
    px_defer_wrap *w;
    ad_grp *g;
    pmix_status_t rc;

    if (m->group == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((g = malloc(sizeof(*g))) == NULL)
        return PMIX_ERR_NOMEM;
    g->fn = cbfunc;
    g->cbdata = cbdata;
    if ((w = px_defer_wrap_info(S.defer, ad_group_done, g)) == NULL) {
        free(g);
        return PMIX_ERR_NOMEM;
    }
    memset(info, 0, sizeof(info));
    if (req->assign_ctxid)
        PMIx_Info_load(&info[n++], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    if (req->optional)
        PMIx_Info_load(&info[n++], PMIX_GROUP_OPTIONAL, &yes, PMIX_BOOL);
    if (req->notify_termination)
        PMIx_Info_load(&info[n++], PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
    if (req->ndata > 0) {
        pmix_byte_object_t bo = {.bytes = (char *)req->data, .size = req->ndata};
        PMIx_Info_load(&info[n++], PMIX_GROUP_ENDPT_DATA, &bo, PMIX_BYTE_OBJECT);
    }
    if (req->local_status != PMIX_SUCCESS)
        PMIx_Info_load(&info[n++], PMIX_LOCAL_COLLECTIVE_STATUS, &req->local_status, PMIX_STATUS);
    rc = m->group(req->op, (char *)req->grp, req->procs, req->nprocs, info, n, px_defer_info_cb, w);
    px_defer_wrap_done(w, rc);
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&info[i]);
    if (rc == PMIX_SUCCESS)
        return rc;
    free(g);
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        /* done at once, with nothing from other nodes: this node's data */
        cbfunc(PMIX_SUCCESS, false, 0, req->data, req->ndata, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    return rc;
}

static pmix_status_t ad_publish(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->publish == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_op(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->publish(proc, info, ninfo, px_defer_op_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

static pmix_status_t ad_lookup(void *hctx, const pmix_proc_t *proc, char **keys,
                               const pmix_info_t info[], size_t ninfo, pmix_lookup_cbfunc_t cbfunc,
                               void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->lookup == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_lookup(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->lookup(proc, keys, info, ninfo, px_defer_lookup_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

static pmix_status_t ad_unpublish(void *hctx, const pmix_proc_t *proc, char **keys,
                                  const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                  void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->unpublish == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_op(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->unpublish(proc, keys, info, ninfo, px_defer_op_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

/* The Standard's tool_connected returns nothing: the host always calls
 * back. */
static void ad_tool(void *hctx, const pmix_info_t info[], size_t ninfo,
                    pmix_tool_connection_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;

    if (m->tool_connected == NULL || (w = px_defer_wrap_tool(S.defer, cbfunc, cbdata)) == NULL) {
        cbfunc(m->tool_connected == NULL ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOMEM, NULL, cbdata);
        return;
    }
    m->tool_connected((pmix_info_t *)info, ninfo, px_defer_tool_cb, w);
    px_defer_wrap_done(w, PMIX_SUCCESS);
}

static pmix_status_t ad_query(void *hctx, const pmix_proc_t *requestor,
                              const pmix_query_t queries[], size_t nqueries,
                              pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->query == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_info(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->query((pmix_proc_t *)requestor, (pmix_query_t *)queries, nqueries, px_defer_info_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

/* The Standard's spawn upcall takes no const: the host gets the engine's
 * copies, borrowed for the call. */
static pmix_status_t ad_spawn(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                              size_t ninfo, const pmix_app_t apps[], size_t napps,
                              pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    if (m->spawn == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_spawn(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->spawn(proc, job_info, ninfo, apps, napps, px_defer_spawn_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

/* A tool's or client's pull: the module's iof_pull says whether the host
 * will deliver (PMIx_server_IOF_deliver); a module without one does not. */
static pmix_status_t ad_iof_pull(void *hctx, const pmix_proc_t *requestor,
                                 const pmix_proc_t procs[], size_t nprocs, const pmix_info_t dirs[],
                                 size_t ndirs, pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    pmix_status_t rc;

    (void)requestor;
    if (m->iof_pull == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((w = px_defer_wrap_op(S.defer, cbfunc, cbdata)) == NULL)
        return PMIX_ERR_NOMEM;
    rc = m->iof_pull(procs, nprocs, dirs, ndirs, channels, px_defer_op_cb, w);
    px_defer_wrap_done(w, rc);
    return rc;
}

/* A push (PMIx_IOF_push) for a Standard host: the module's push_stdin gets
 * the bytes as a byte object (the end of input as an empty one with
 * PMIX_IOF_COMPLETE added to the directives), and may keep them and the
 * directives until it calls back: both are copies, freed then. */
typedef struct ad_push {
    pmix_byte_object_t bo;
    pmix_info_t *dirs;
    size_t ndirs;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} ad_push;

static void ad_push_free(ad_push *p)
{
    free(p->bo.bytes);
    PMIx_Info_free(p->dirs, p->ndirs);
    free(p);
}

static void ad_push_done(pmix_status_t status, void *cbdata)
{
    ad_push *p = cbdata;
    pmix_op_cbfunc_t fn = p->cbfunc;
    void *arg = p->cbdata;

    ad_push_free(p);
    fn(status, arg);
}

static pmix_status_t ad_push_stdin(void *hctx, const pmix_proc_t *source,
                                   const pmix_proc_t targets[], size_t ntargets,
                                   const pmix_info_t dirs[], size_t ndirs, const void *data,
                                   size_t len, bool eof, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;
    px_defer_wrap *w;
    ad_push *p;
    pmix_status_t rc;
    bool yes = true;

    if (m->push_stdin == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if ((p = calloc(1, sizeof(*p))) == NULL)
        return PMIX_ERR_NOMEM;
    p->cbfunc = cbfunc;
    p->cbdata = cbdata;
    p->ndirs = ndirs + (eof ? 1 : 0);
    if ((p->ndirs > 0 && (p->dirs = PMIx_Info_create(p->ndirs)) == NULL) ||
        (len > 0 && (p->bo.bytes = malloc(len)) == NULL)) {
        p->ndirs = p->dirs != NULL ? p->ndirs : 0;
        ad_push_free(p);
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < ndirs; i++)
        PMIx_Info_xfer(&p->dirs[i], &dirs[i]);
    if (eof)
        PMIx_Info_load(&p->dirs[ndirs], PMIX_IOF_COMPLETE, &yes, PMIX_BOOL);
    if (len > 0)
        memcpy(p->bo.bytes, data, len);
    p->bo.size = len;
    if ((w = px_defer_wrap_op(S.defer, ad_push_done, p)) == NULL) {
        ad_push_free(p);
        return PMIX_ERR_NOMEM;
    }
    rc = m->push_stdin(source, targets, ntargets, p->dirs, p->ndirs, &p->bo, px_defer_op_cb, w);
    px_defer_wrap_done(w, rc);
    if (rc != PMIX_SUCCESS)
        ad_push_free(p); /* no callback comes */
    return rc;
}

/* The host keeps the info until it calls back: hand it a copy, freed then. */
typedef struct ad_event {
    pmix_info_t *info;
    size_t ninfo;
} ad_event;

static void ad_event_done(pmix_status_t status, void *cbdata)
{
    ad_event *e = cbdata;
    (void)status;
    PMIx_Info_free(e->info, e->ninfo);
    free(e);
}

/* An event for the other nodes: the Standard's notify_event upcall. */
static void ad_notify(void *hctx, pmix_status_t status, const pmix_proc_t *source,
                      pmix_data_range_t range, const pmix_info_t info[], size_t ninfo)
{
    const pmix_server_module_t *m = hctx;
    ad_event *e;

    if (m->notify_event == NULL || (e = calloc(1, sizeof(*e))) == NULL)
        return;
    if (ninfo > 0 && (e->info = PMIx_Info_create(ninfo)) == NULL) {
        free(e);
        return;
    }
    for (size_t i = 0; i < ninfo; i++)
        PMIx_Info_xfer(&e->info[i], &info[i]);
    e->ninfo = ninfo;
    if (m->notify_event(status, source, range, e->info, e->ninfo, ad_event_done, e) != PMIX_SUCCESS)
        ad_event_done(PMIX_SUCCESS, e);
}

static const px_server_host adapter = {
    .version = PX_SERVER_HOST_VERSION,
    .client_connected = ad_connected,
    .client_finalized = ad_finalized,
    .abort = ad_abort,
    .fence_nb = ad_fence,
    .direct_modex = ad_dmodex,
    .job_control = ad_jctrl,
    .client_connected2 = ad_connected2,
    .group = ad_group,
    .publish = ad_publish,
    .lookup = ad_lookup,
    .unpublish = ad_unpublish,
    .tool_connected = ad_tool,
    .query = ad_query,
    .notify_event = ad_notify,
    .spawn = ad_spawn,
    .iof_pull = ad_iof_pull,
    .push_stdin = ad_push_stdin,
};

/* ---- rendezvous files for tools ---- */

/* Write the file for `key` (a pid or a namespace) into the server's
 * directory and remember its name. Failure is reported, not fatal: tools
 * can still be given the URI. */
static void rndz_add_locked(const char *name);

static void rndz_add(const char *key)
{
    char name[600];

    px_rndz_name(key, name, sizeof(name));
    pthread_mutex_lock(&S.rndz_mu);
    rndz_add_locked(name);
    pthread_mutex_unlock(&S.rndz_mu);
}

static void rndz_add_locked(const char *name)
{
    size_t n = 0;
    char **v;

    while (S.rndz != NULL && S.rndz[n] != NULL)
        if (strcmp(S.rndz[n++], name) == 0)
            return; /* written already */
    if (px_rndz_write(S.dir, name, S.uri, 0600) != 0) {
        fprintf(stderr, "pmix: cannot write the rendezvous file %s/%s: %s\n", S.dir, name,
                strerror(errno));
        return;
    }
    if ((v = realloc(S.rndz, (n + 2) * sizeof(char *))) == NULL || (v[n] = strdup(name)) == NULL) {
        if (v != NULL)
            S.rndz = v;
        px_rndz_remove(S.dir, name); /* could not remember it: do not leave it */
        return;
    }
    v[n + 1] = NULL;
    S.rndz = v;
}

static void rndz_clear(void)
{
    for (size_t i = 0; S.rndz != NULL && S.rndz[i] != NULL; i++) {
        px_rndz_remove(S.dir, S.rndz[i]);
        free(S.rndz[i]);
    }
    free(S.rndz);
    S.rndz = NULL;
    if (S.sysdir[0] != '\0') {
        char name[300];
        px_rndz_name(NULL, name, sizeof(name));
        px_rndz_remove(S.sysdir, name);
    }
}

/* PMIX_SERVER_TOOL_SUPPORT / _SYSTEM_SUPPORT at PMIx_server_init: let the
 * engine accept tools, write the files. */
static pmix_status_t tools_start(const pmix_info_t info[], size_t ninfo, const pmix_proc_t *self)
{
    bool sys = px_info_flag(info, ninfo, PMIX_SERVER_SYSTEM_SUPPORT) == 1;
    char pid[32];
    pmix_status_t rc;

    if (px_info_flag(info, ninfo, PMIX_SERVER_TOOL_SUPPORT) != 1 && !sys)
        return PMIX_SUCCESS;
    px_posix_ops()->lock(S.posix);
    rc = px_server_tools(S.srv, self, (uint32_t)getuid());
    px_posix_ops()->unlock(S.posix);
    if (rc != PMIX_SUCCESS)
        return rc;
    S.tools = true;
    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    rndz_add(pid);
    if (px_info_string(info, ninfo, PMIX_SERVER_NSPACE) != NULL)
        rndz_add(self->nspace);
    if (sys) {
        const char *d = px_info_string(info, ninfo, PMIX_SYSTEM_TMPDIR);
        char name[300];
        if (d != NULL)
            snprintf(S.sysdir, sizeof(S.sysdir), "%s", d);
        else
            px_rndz_system_dir(S.sysdir, sizeof(S.sysdir));
        px_rndz_name(NULL, name, sizeof(name));
        if (px_rndz_write(S.sysdir, name, S.uri, 0644) != 0) {
            fprintf(stderr,
                    "pmix: PMIx_server_init: cannot write the system rendezvous file %s/%s:"
                    " %s\n",
                    S.sysdir, name, strerror(errno));
            S.sysdir[0] = '\0';
            return PMIX_ERR_FILE_OPEN_FAILURE;
        }
    }
    return PMIX_SUCCESS;
}

/* ---- init / finalize ---- */

/* The server's own name, the source of the events it raises:
 * PMIX_SERVER_NSPACE and PMIX_SERVER_RANK if the host gave them. */
static const pmix_proc_t *server_proc(const pmix_info_t info[], size_t ninfo, pmix_proc_t *self)
{
    const char *ns = px_info_string(info, ninfo, PMIX_SERVER_NSPACE);
    const pmix_info_t *rk = px_info_find(info, ninfo, PMIX_SERVER_RANK);
    uint64_t v;

    memset(self, 0, sizeof(*self));
    snprintf(self->nspace, sizeof(self->nspace), "%s", ns != NULL ? ns : "pmix-server");
    if (rk != NULL && px_value_get_number(&rk->value, &v) == PMIX_SUCCESS)
        self->rank = (pmix_rank_t)v;
    return self;
}

/* Stop the platform, then free what runs on it, then the platform. Nothing
 * queued for the host is called after this. */
static void teardown(void)
{
    px_posix_stop(S.posix);
    px_defer_destroy(S.defer);
    px_client_destroy(S.evc);
    px_server_destroy(S.srv);
    px_posix_destroy(S.posix);
}

PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[],
                                           size_t ninfo)
{
    const pmix_info_t *dir = px_info_find(info, ninfo, PMIX_SERVER_TMPDIR);
    char err[256] = "";
    pmix_status_t rc;
    pmix_proc_t self;

    if (S.active) {
        S.refcount++; /* one default server per process, reference-counted */
        return PMIX_SUCCESS;
    }
    memset(&S, 0, sizeof(S));
    if (module != NULL)
        S.module = *module;
    if (dir != NULL && dir->value.type == PMIX_STRING && dir->value.data.string != NULL) {
        snprintf(S.dir, sizeof(S.dir), "%s", dir->value.data.string);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(S.dir, sizeof(S.dir), "%s/pmix-server.%ld", tmp && *tmp ? tmp : "/tmp",
                 (long)getpid());
        S.made_dir = true;
    }
    S.posix = px_posix_create(false, err, sizeof(err));
    if (S.posix == NULL) {
        fprintf(stderr, "pmix: PMIx_server_init: %s\n", err);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    S.srv = px_server_create(&adapter, &S.module, px_posix_ops(), S.posix);
    S.defer = px_defer_create(S.posix);
    S.evc = px_client_create(px_posix_ops(), S.posix, server_proc(info, ninfo, &self));
    if (S.srv == NULL || S.defer == NULL || S.evc == NULL) {
        teardown();
        return PMIX_ERR_NOMEM;
    }
    rc = px_posix_listen(S.posix, S.dir, px_server_sink(), S.srv, &S.uri, err, sizeof(err));
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmix: PMIx_server_init: cannot listen in %s: %s\n", S.dir, err);
        teardown();
        return rc;
    }
    rc = tools_start(info, ninfo, &self);
    if (rc != PMIX_SUCCESS) {
        rndz_clear();
        teardown();
        return rc;
    }
    S.active = true;
    S.refcount = 1;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_server_finalize(void)
{
    char sock[600];

    if (!S.active)
        return PMIX_ERR_INIT;
    if (--S.refcount > 0)
        return PMIX_SUCCESS;
    /* Nothing is delivered after px_posix_stop; the server's pending timers
     * are cancelled through the platform, which must still be there. */
    teardown();
    rndz_clear();
    snprintf(sock, sizeof(sock), "%s/pmix.sock", S.dir);
    (void)unlink(sock);
    if (S.made_dir)
        (void)rmdir(S.dir);
    free(S.uri);
    memset(&S, 0, sizeof(S));
    return PMIX_SUCCESS;
}

#define LOCKED(call)                     \
    ({                                   \
        pmix_status_t rc__;              \
        px_posix_ops()->lock(S.posix);   \
        rc__ = (call);                   \
        px_posix_ops()->unlock(S.posix); \
        rc__;                            \
    })

/* Registration calls: with a callback, PMIX_SUCCESS now and the callback
 * later (as OpenPMIx does, and Slurm requires; the Standard would allow
 * PMIX_OPERATION_SUCCEEDED without a callback); an error now means no
 * callback. Without one, the call is blocking. */
static pmix_status_t later(pmix_status_t rc, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    if (rc != PMIX_SUCCESS || cbfunc == NULL)
        return rc;
    return px_defer_op(S.defer, cbfunc, PMIX_SUCCESS, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const char nspace[], int nlocalprocs,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    return later(LOCKED(px_server_register_nspace(S.srv, nspace, nlocalprocs, info, ninfo)), cbfunc,
                 cbdata);
}

PMIX_EXPORT void PMIx_server_deregister_nspace(const char nspace[], pmix_op_cbfunc_t cbfunc,
                                               void *cbdata)
{
    if (!S.active) {
        if (cbfunc != NULL)
            cbfunc(PMIX_ERR_INIT, cbdata); /* no server, no loop to call from */
        return;
    }
    px_posix_ops()->lock(S.posix);
    px_server_deregister_nspace(S.srv, nspace);
    px_posix_ops()->unlock(S.posix);
    (void)px_defer_op(S.defer, cbfunc, PMIX_SUCCESS, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                                      void *server_object, pmix_op_cbfunc_t cbfunc,
                                                      void *cbdata)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    return later(LOCKED(px_server_register_client(S.srv, proc, uid, gid, server_object)), cbfunc,
                 cbdata);
}

PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata)
{
    if (!S.active) {
        if (cbfunc != NULL)
            cbfunc(PMIX_ERR_INIT, cbdata);
        return;
    }
    px_posix_ops()->lock(S.posix);
    px_server_deregister_client(S.srv, proc);
    px_posix_ops()->unlock(S.posix);
    (void)px_defer_op(S.defer, cbfunc, PMIX_SUCCESS, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env)
{
    pmix_status_t rc;
    char *entry, **e;
    size_t n = 0;

    if (!S.active)
        return PMIX_ERR_INIT;
    rc = LOCKED(px_server_setup_fork(S.srv, proc, env));
    if (rc != PMIX_SUCCESS)
        return rc;
    /* how to reach us: PMIX_SERVER_URI */
    while ((*env)[n] != NULL) {
        if (strncmp((*env)[n], "PMIX_SERVER_URI=", 16) == 0) {
            free((*env)[n]);
            break;
        }
        n++;
    }
    if (asprintf(&entry, "PMIX_SERVER_URI=%s", S.uri) < 0)
        return PMIX_ERR_NOMEM;
    if ((*env)[n] != NULL) {
        (*env)[n] = entry;
        return PMIX_SUCCESS;
    }
    e = realloc(*env, (n + 2) * sizeof(char *));
    if (e == NULL) {
        free(entry);
        return PMIX_ERR_NOMEM;
    }
    e[n] = entry;
    e[n + 1] = NULL;
    *env = e;
    return PMIX_SUCCESS;
}

/* The host's answer function and its cbdata, while the engine looks. */
typedef struct dmx_req {
    pmix_dmodex_response_fn_t fn;
    void *cbdata;
} dmx_req;

/* The engine's answer (engine lock held, maybe inside the host's call):
 * the host gets it later, from the queue. */
static void dmx_answer(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    dmx_req *q = cbdata;

    if (px_defer_dmodex(S.defer, q->fn, status, data, sz, q->cbdata) != PMIX_SUCCESS)
        (void)px_defer_dmodex(S.defer, q->fn, PMIX_ERR_NOMEM, NULL, 0, q->cbdata);
    free(q);
}

PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                                     pmix_dmodex_response_fn_t cbfunc, void *cbdata)
{
    dmx_req *q;
    pmix_status_t rc;

    if (!S.active)
        return PMIX_ERR_INIT;
    if (cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM;
    if ((q = malloc(sizeof(*q))) == NULL)
        return PMIX_ERR_NOMEM;
    q->fn = cbfunc;
    q->cbdata = cbdata;
    rc = LOCKED(px_server_dmodex_request(S.srv, proc, dmx_answer, q));
    if (rc != PMIX_SUCCESS)
        free(q); /* the engine will not answer */
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const char nspace[], pmix_info_t info[],
                                                        size_t ninfo,
                                                        pmix_setup_application_cbfunc_t cbfunc,
                                                        void *cbdata)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    if (nspace == NULL || cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM;
    /* This library needs no application-level setup from the fabric or
     * other local subsystems: the answer is an empty list, after we return. */
    return px_defer_app(S.defer, cbfunc, PMIX_SUCCESS, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const char nspace[], pmix_info_t info[],
                                                          size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                          void *cbdata)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    if (nspace == NULL)
        return PMIX_ERR_BAD_PARAM;
    /* Nothing to prepare locally (see setup_application): the callback, if
     * any, says so after we return. */
    return later(PMIX_SUCCESS, cbfunc, cbdata);
}

/* ---- process sets ---- */

/* The engine records the set and tells the server's clients (every one
 * connected, whatever its namespace: the Standard's "all local clients");
 * the server process's own handlers hear it too, from the loop, as they
 * hear what PMIx_Notify_event raises there. Blocking, as in OpenPMIx: the
 * set is in the table, and the event on its way to every client, when
 * this returns. */
static pmix_status_t pset_event(pmix_status_t code, const char *name, const pmix_proc_t members[],
                                size_t nmembers)
{
    pmix_info_t ev[3];
    pmix_data_array_t da = {.type = PMIX_PROC, .size = nmembers, .array = (void *)members};
    size_t n = 0;
    pmix_status_t rc;

    memset(ev, 0, sizeof(ev));
    PMIx_Load_key(ev[n].key, PMIX_PSET_NAME);
    ev[n].value.type = PMIX_STRING;
    ev[n++].value.data.string = (char *)name;
    if (code == PMIX_PROCESS_SET_DEFINE) {
        PMIx_Load_key(ev[n].key, PMIX_PSET_MEMBERS);
        ev[n].value.type = PMIX_DATA_ARRAY;
        ev[n++].value.data.darray = &da;
    }
    PMIx_Load_key(ev[n].key, PMIX_EVENT_NON_DEFAULT); /* as the clients get it (server/psets.c) */
    ev[n].value.type = PMIX_BOOL;
    ev[n++].value.data.flag = true;
    rc = px_client_notify(S.evc, code, px_client_self(S.evc), PMIX_RANGE_PROC_LOCAL, ev, n, NULL,
                          NULL);
    return rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc;
}

PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(const pmix_proc_t members[],
                                                         size_t nmembers, const char *pset_name)
{
    pmix_status_t rc;

    if (!S.active)
        return PMIX_ERR_INIT;
    px_posix_ops()->lock(S.posix);
    rc = px_server_define_process_set(S.srv, px_client_self(S.evc), pset_name, members, nmembers);
    if (rc == PMIX_SUCCESS)
        (void)pset_event(PMIX_PROCESS_SET_DEFINE, pset_name, members, nmembers);
    px_posix_ops()->unlock(S.posix);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(const char *pset_name)
{
    pmix_status_t rc;

    if (!S.active)
        return PMIX_ERR_INIT;
    px_posix_ops()->lock(S.posix);
    rc = px_server_delete_process_set(S.srv, px_client_self(S.evc), pset_name);
    if (rc == PMIX_SUCCESS)
        (void)pset_event(PMIX_PROCESS_SET_DELETE, pset_name, NULL, 0);
    px_posix_ops()->unlock(S.posix);
    return rc;
}

pmix_status_t px_api_server_query(const pmix_query_t queries[], size_t nqueries, pmix_info_t **info,
                                  size_t *ninfo)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    return LOCKED(px_server_query_psets(S.srv, queries, nqueries, info, ninfo));
}

/* ---- events in the server process (called by client_api.c) ---- */

pmix_status_t px_api_server_register_event(const pmix_status_t codes[], size_t ncodes,
                                           const pmix_info_t info[], size_t ninfo,
                                           pmix_notification_fn_t evhdlr,
                                           pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata)
{
    size_t id = 0;
    pmix_status_t rc;

    if (!S.active)
        return PMIX_ERR_INIT;
    px_posix_ops()->lock(S.posix);
    rc = px_client_register_event(S.evc, codes, ncodes, info, ninfo, evhdlr, &id);
    if (rc == PMIX_SUCCESS && cbfunc != NULL) {
        rc = px_defer_reg(S.defer, cbfunc, PMIX_SUCCESS, id, cbdata);
        if (rc != PMIX_SUCCESS)
            (void)px_client_deregister_event(S.evc, id);
    }
    px_posix_ops()->unlock(S.posix);
    if (cbfunc == NULL && rc == PMIX_SUCCESS)
        return (pmix_status_t)id; /* the blocking form returns the handler's id */
    return rc;
}

pmix_status_t px_api_server_deregister_event(size_t ref, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t rc;

    if (!S.active)
        return PMIX_ERR_INIT;
    rc = LOCKED(px_client_deregister_event(S.evc, ref));
    if (rc == PMIX_SUCCESS)
        rc = px_defer_op(S.defer, cbfunc, PMIX_SUCCESS, cbdata);
    return rc;
}

/* PMIx_server_IOF_deliver: a host's process output, sent to the clients
 * and tools whose pulls match it (server/iof.c). The bytes are copied into
 * the messages before this returns; cbfunc runs later from the loop. */
PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source,
                                                  pmix_iof_channel_t channel,
                                                  const pmix_byte_object_t *bo,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)info;
    (void)ninfo;
    if (!S.active)
        return PMIX_ERR_INIT;
    if (source == NULL || bo == NULL || (bo->bytes == NULL && bo->size > 0) ||
        (channel != PMIX_FWD_STDOUT_CHANNEL && channel != PMIX_FWD_STDERR_CHANNEL &&
         channel != PMIX_FWD_STDDIAG_CHANNEL))
        return PMIX_ERR_BAD_PARAM;
    px_posix_ops()->lock(S.posix);
    (void)px_server_iof_deliver(S.srv, source, channel, bo->bytes, bo->size);
    px_posix_ops()->unlock(S.posix);
    return px_defer_op(S.defer, cbfunc, PMIX_SUCCESS, cbdata);
}

pmix_status_t px_api_server_notify(pmix_status_t status, const pmix_proc_t *source,
                                   pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                   pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t rc;

    if (!S.active)
        return PMIX_ERR_INIT;
    px_posix_ops()->lock(S.posix);
    /* this process's handlers run from the loop, never inside this call */
    rc = px_client_notify(S.evc, status, source, range, info, ninfo, NULL, NULL);
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        rc = PMIX_SUCCESS;
        if (range != PMIX_RANGE_PROC_LOCAL)
            px_server_notify(S.srv, status, source != NULL ? source : px_client_self(S.evc), range,
                             info, ninfo);
    }
    px_posix_ops()->unlock(S.posix);
    if (rc == PMIX_SUCCESS)
        rc = px_defer_op(S.defer, cbfunc, PMIX_SUCCESS, cbdata);
    return rc;
}
