/*
 * client_api.c - the Standard's client calls, as a thin shim over the
 * client engine.
 *
 * Every call finds the caller's px_api_client through the binding, takes
 * the engine lock, calls the engine, and releases the lock. Blocking calls
 * then wait on a px_wait that the operation's callback wakes. Answers the
 * engine can give from local memory (most Gets) come back before the lock
 * is released: no thread hop, no wait.
 *
 * Non-blocking calls hand the user's callback to the engine, which calls
 * it (with the engine lock held) from whatever thread progresses the
 * engine, never before the call returns. Where the engine answers at once
 * (PMIx_Get_nb of local data, PMIx_Notify_event, the registration calls)
 * the callback is deferred to the progress thread, and so is the callback
 * of PMIx_Fence_nb for a fence whose only participant is the caller (the
 * Standard would allow PMIX_OPERATION_SUCCEEDED there; Open MPI does not).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/px_api.h"
#include "common/px_common.h"
#include "platform/px_posix.h"

/* ---- process-wide state: the binding and the real process's client ---- */

static px_api_client default_client = {.init_lock = PTHREAD_MUTEX_INITIALIZER,
                                       .external_progress = -1};

static px_api_client *default_current(void *arg)
{
    return &default_client;
}

static const px_api_binding default_binding = {
    .current = default_current,
    .open = px_api_posix_open,
    .arg = NULL,
};

static const px_api_binding *binding = &default_binding;

void px_api_set_binding(const px_api_binding *b)
{
    binding = b != NULL ? b : &default_binding;
}

static px_api_client *current(void)
{
    return binding->current(binding->arg);
}

px_api_client *px_api_current(void)
{
    return current();
}

/* ---- the posix binding ---- */

static void posix_progress(px_api_client *ac)
{
    px_posix_progress(ac->priv);
}

static void posix_need_progress(px_api_client *ac)
{
    if (ac->external_progress != 1)
        (void)px_posix_start_thread(ac->priv);
}

/* The platform stops first (no delivery, no timer after it), then the
 * engine goes, cancelling the timers of its pending requests on the
 * platform, which is freed last. */
static void posix_teardown(px_api_client *ac)
{
    px_posix_stop(ac->priv);
    px_client_destroy(ac->client);
    px_posix_destroy(ac->priv);
    ac->client = NULL;
    ac->priv = NULL;
}

pmix_status_t px_api_posix_open(void *arg, px_api_client *ac, const pmix_info_t info[],
                                size_t ninfo, char *errbuf, size_t errlen)
{
    const char *ns = getenv("PMIX_NAMESPACE");
    const char *rank = getenv("PMIX_RANK");
    const char *uri = getenv("PMIX_SERVER_URI");
    pmix_proc_t self;
    px_posix *p;
    px_client *c;
    char *end;
    unsigned long r;
    pmix_status_t rc;

    if (ns == NULL || rank == NULL || uri == NULL) {
        snprintf(errbuf, errlen,
                 "no PMIx server found: %s is not set in the environment"
                 " (start the program with a PMIx launcher such as pmixrun)",
                 ns == NULL     ? "PMIX_NAMESPACE"
                 : rank == NULL ? "PMIX_RANK"
                                : "PMIX_SERVER_URI");
        return PMIX_ERR_UNREACH;
    }
    r = strtoul(rank, &end, 10);
    if (*rank == '\0' || *end != '\0' || r >= PMIX_RANK_VALID || strlen(ns) > PMIX_MAX_NSLEN) {
        snprintf(errbuf, errlen, "malformed PMIX_NAMESPACE or PMIX_RANK in the environment");
        return PMIX_ERR_BAD_PARAM;
    }
    memset(&self, 0, sizeof(self));
    snprintf(self.nspace, sizeof(self.nspace), "%s", ns);
    self.rank = (pmix_rank_t)r;
    /* No progress thread yet: blocking calls drive the loop themselves
     * until something needs progress in the background (need_progress). */
    p = px_posix_create(true, errbuf, errlen);
    if (p == NULL)
        return PMIX_ERR_OUT_OF_RESOURCE;
    c = px_client_create(px_posix_ops(), p, &self);
    if (c == NULL) {
        px_posix_destroy(p);
        snprintf(errbuf, errlen, "out of memory");
        return PMIX_ERR_NOMEM;
    }
    rc = px_posix_connect(p, uri, 0, px_client_sink(), c, errbuf, errlen);
    if (rc != PMIX_SUCCESS) {
        px_client_destroy(c); /* the engine before its platform, as in posix_teardown */
        px_posix_destroy(p);
        return rc;
    }
    px_api_posix_adopt(ac, p, c);
    return PMIX_SUCCESS;
}

void px_api_posix_adopt(px_api_client *ac, px_posix *p, px_client *c)
{
    ac->client = c;
    ac->pops = px_posix_ops();
    ac->pctx = p;
    ac->priv = p;
    ac->progress = posix_progress;
    ac->need_progress = posix_need_progress;
    ac->teardown = posix_teardown;
}

/* ---- blocking on engine operations ---- */

typedef struct sync_op {
    px_wait w;
    px_api_client *ac;
    pmix_status_t status;
    pmix_value_t *value;
    pmix_info_t *info;
    size_t ninfo;
} sync_op;

static void sync_op_cb(pmix_status_t status, void *cbdata)
{
    sync_op *s = cbdata;

    s->status = status;
    s->ac->pops->wake(s->ac->pctx, &s->w);
}

static void sync_value_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    sync_op *s = cbdata;

    s->status = status;
    if (status == PMIX_SUCCESS && kv != NULL && px_value_copy(&s->value, kv) != PMIX_SUCCESS)
        s->status = PMIX_ERR_NOMEM;
    s->ac->pops->wake(s->ac->pctx, &s->w);
}

static void sync_info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                         pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    sync_op *s = cbdata;

    s->status = status;
    if (ninfo > 0 && (s->info = PMIx_Info_create(ninfo)) != NULL) {
        for (size_t i = 0; i < ninfo; i++)
            PMIx_Info_xfer(&s->info[i], &info[i]);
        s->ninfo = ninfo;
    }
    if (release_fn != NULL)
        release_fn(release_cbdata);
    s->ac->pops->wake(s->ac->pctx, &s->w);
}

/* A non-blocking call or a handler: background progress is needed now. */
static void need_progress(px_api_client *ac)
{
    if (ac->need_progress != NULL)
        ac->need_progress(ac);
}

/* The caller's state if PMIx_Init has run, else NULL. */
static px_api_client *ready(void)
{
    px_api_client *ac = current();

    return ac->refcount > 0 && ac->client != NULL ? ac : NULL;
}

/* A blocking call from inside a callback (on the thread that runs the
 * loop) could never complete: the loop would wait for itself. */
static bool in_callback(px_api_client *ac)
{
    bool in;

    if (ac->pops->in_callback == NULL)
        return false;
    ac->pops->lock(ac->pctx);
    in = ac->pops->in_callback(ac->pctx);
    ac->pops->unlock(ac->pctx);
    if (!in)
        return false;
    if (ac->pops->log != NULL)
        ac->pops->log(ac->pctx, PX_LOG_ERROR,
                      "a blocking PMIx call was made from inside a PMIx callback; it returns "
                      "PMIX_ERR_WOULD_BLOCK (use the non-blocking form there)");
    return true;
}

/* Finish a blocking call: `rc` is what the engine returned. */
static pmix_status_t finish(sync_op *s, pmix_status_t rc)
{
    if (rc == PMIX_OPERATION_SUCCEEDED)
        return PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS)
        return rc;
    s->ac->pops->wait(s->ac->pctx, &s->w);
    return s->status;
}

/* For the other files of the shim (px_api.h). */
px_api_client *px_api_ready(void)
{
    return ready();
}

bool px_api_in_callback(px_api_client *ac)
{
    return in_callback(ac);
}

px_api_client *px_api_for_blocking(pmix_status_t *rc)
{
    px_api_client *ac = ready();

    *rc = ac == NULL ? PMIX_ERR_INIT : in_callback(ac) ? PMIX_ERR_WOULD_BLOCK : PMIX_SUCCESS;
    return *rc == PMIX_SUCCESS ? ac : NULL;
}

px_api_client *px_api_for_nonblocking(void)
{
    px_api_client *ac = ready();

    if (ac != NULL)
        px_api_need_progress(ac);
    return ac;
}

void px_api_need_progress(px_api_client *ac)
{
    need_progress(ac);
}

/* ---- init / finalize ---- */

static const char *const model_keys[] = {
    PMIX_PROGRAMMING_MODEL, PMIX_MODEL_LIBRARY_NAME,    PMIX_MODEL_LIBRARY_VERSION,
    PMIX_THREADING_MODEL,   PMIX_MODEL_NUM_THREADS,     PMIX_MODEL_NUM_CPUS,
    PMIX_MODEL_CPU_TYPE,    PMIX_MODEL_AFFINITY_POLICY,
};

/* Record the programming-model attributes as the process's own data and
 * raise PMIX_MODEL_DECLARED locally with them. The event is not for
 * default handlers (PMIX_EVENT_NON_DEFAULT): libraries such as Open MPI
 * treat whatever reaches their default handler as an error and abort. The
 * first declaration stays the process's data (what a Get of
 * PMIX_PROGRAMMING_MODEL reads): a later one (OpenMP inside an MPI
 * program) is announced by its event but replaces nothing. The client
 * engine keeps each declaration's event for handlers registered later
 * (client/events.c).
 *
 * Not inlined, nor stop_in_init below: their pmix_info_t arrays (5 kB here,
 * 1.6 kB there) would become part of PMIx_Init's frame, under which the
 * whole handshake runs. A simulated process's stack is resident as deep as
 * it was ever used, so 6 kB more there cost pmixsim 140 MB at 65,536 nodes
 * (docs/simulation.md, "Memory"). */
__attribute__((noinline)) static void declare_model(px_api_client *ac, const pmix_info_t info[],
                                                    size_t ninfo)
{
    pmix_info_t model[9];
    size_t n = 0;
    bool yes = true;

    for (size_t k = 0; k < sizeof(model_keys) / sizeof(model_keys[0]); k++) {
        const pmix_info_t *i = px_info_find(info, ninfo, model_keys[k]);
        if (i != NULL)
            model[n++] = *i; /* shallow: only read below */
    }
    if (n == 0)
        return;
    ac->pops->lock(ac->pctx);
    for (size_t k = 0; k < n && !ac->model_declared; k++)
        (void)px_client_put(ac->client, PMIX_INTERNAL, model[k].key, &model[k].value);
    ac->model_declared = true;
    PMIx_Info_load(&model[n], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    (void)px_client_notify(ac->client, PMIX_MODEL_DECLARED, px_client_self(ac->client),
                           PMIX_RANGE_PROC_LOCAL, model, n + 1, NULL, NULL);
    PMIx_Info_destruct(&model[n]);
    ac->pops->unlock(ac->pctx);
}

/* ---- stop in init (PMIX_DEBUG_STOP_IN_INIT) ----
 *
 * A job launched for a debugger carries PMIX_DEBUG_STOP_IN_INIT in its job
 * data: PMIX_PROC_RANK (this rank, or PMIX_RANK_WILDCARD for all; the
 * Standard's type) or a PMIX_BOOL (older launchers). Such a process, in its
 * first PMIx_Init, announces PMIX_READY_FOR_DEBUG (PMIX_BREAKPOINT
 * "pmix-init", PMIX_EVENT_NON_DEFAULT, range session: the server's tools
 * hear it) and waits until a
 * PMIX_DEBUGGER_RELEASE event reaches it, or until its server is gone (then
 * PMIx_Init goes on and the calls that need the server fail). It waits as
 * the blocking calls do (the platform's wait), so a simulated process
 * waits in simulated time. A release
 * with PMIX_EVENT_CUSTOM_RANGE releases only the processes it names. */

/* The wait of one process (on the stack of its PMIx_Init, handed to the
 * handler as its PMIX_EVENT_RETURN_OBJECT: simulated processes each have
 * their own). `done` is set, and the waiter woken, once. */
typedef struct dbg_wait {
    px_api_client *ac;
    px_wait w;
    bool done;
    pmix_proc_t self;
} dbg_wait;

static bool names_me(const pmix_proc_t *p, size_t n, const pmix_proc_t *self)
{
    for (size_t i = 0; i < n; i++)
        if (PMIx_Check_nspace(p[i].nspace, self->nspace) &&
            (p[i].rank == PMIX_RANK_WILDCARD || p[i].rank == self->rank))
            return true;
    return false;
}

/* Whether a release with `info` is for `self`: no PMIX_EVENT_CUSTOM_RANGE,
 * or one that names it. */
static bool release_is_mine(const pmix_info_t info[], size_t ninfo, const pmix_proc_t *self)
{
    const pmix_info_t *r = px_info_find(info, ninfo, PMIX_EVENT_CUSTOM_RANGE);

    if (r == NULL)
        return true;
    if (r->value.type == PMIX_PROC && r->value.data.proc != NULL)
        return names_me(r->value.data.proc, 1, self);
    if (r->value.type == PMIX_DATA_ARRAY && r->value.data.darray != NULL &&
        r->value.data.darray->type == PMIX_PROC)
        return names_me(r->value.data.darray->array, r->value.data.darray->size, self);
    return false;
}

/* Runs on the loop, under the engine lock: for PMIX_DEBUGGER_RELEASE, and
 * for PMIX_ERR_LOST_CONNECTION (nobody will release us then; the event goes
 * on to the other handlers). */
static void dbg_release(size_t id, pmix_status_t status, const pmix_proc_t *source,
                        pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                        pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    const pmix_info_t *o = px_info_find(info, ninfo, PMIX_EVENT_RETURN_OBJECT);
    dbg_wait *d = o != NULL && o->value.type == PMIX_POINTER ? o->value.data.ptr : NULL;
    bool lost = status == PMIX_ERR_LOST_CONNECTION;
    bool mine = d != NULL && (lost || release_is_mine(info, ninfo, &d->self));

    (void)id;
    (void)source;
    (void)results;
    (void)nresults;
    if (mine && !d->done) {
        d->done = true;
        d->ac->pops->wake(d->ac->pctx, &d->w);
    }
    if (cbfunc != NULL)
        cbfunc(mine && !lost ? PMIX_EVENT_ACTION_COMPLETE : PMIX_SUCCESS, NULL, 0, NULL, NULL,
               cbdata);
}

/* Whether the job data asks this process to stop in PMIx_Init. */
static bool asked_to_stop(const pmix_proc_t *self)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    pmix_info_t opt;
    bool yes = true, stop = false;

    PMIX_LOAD_PROCID(&wild, self->nspace, PMIX_RANK_WILDCARD);
    PMIx_Info_load(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    if (PMIx_Get(&wild, PMIX_DEBUG_STOP_IN_INIT, &opt, 1, &v) == PMIX_SUCCESS && v != NULL) {
        if (v->type == PMIX_BOOL)
            stop = v->data.flag;
        else if (v->type == PMIX_PROC_RANK)
            stop = v->data.rank == PMIX_RANK_WILDCARD || v->data.rank == self->rank;
        PMIx_Value_free(v, 1);
    }
    PMIx_Info_destruct(&opt);
    return stop;
}

/* The first PMIx_Init's last step; the client's name is set by then and
 * stays until PMIx_Finalize. */
__attribute__((noinline)) static void stop_in_init(px_api_client *ac)
{
    pmix_status_t codes[2] = {PMIX_DEBUGGER_RELEASE, PMIX_ERR_LOST_CONNECTION};
    pmix_info_t bp[2], obj;
    dbg_wait d;
    bool yes = true, up;
    pmix_status_t rc;

    memset(&d, 0, sizeof(d));
    d.ac = ac;
    d.self = *px_client_self(ac->client);
    if (!asked_to_stop(&d.self))
        return;
    PMIx_Info_load(&obj, PMIX_EVENT_RETURN_OBJECT, &d, PMIX_POINTER);
    rc = PMIx_Register_event_handler(codes, 2, &obj, 1, dbg_release, NULL, NULL);
    PMIx_Info_destruct(&obj);
    if (rc < 0) {
        fprintf(stderr, "pmix: PMIx_Init: cannot wait for the debugger (%s): not stopping\n",
                PMIx_Error_string(rc));
        return;
    }
    /* not for default handlers: the other ranks hear it too, and libraries
     * such as Open MPI abort on what reaches theirs (declare_model) */
    PMIx_Info_load(&bp[0], PMIX_BREAKPOINT, "pmix-init", PMIX_STRING);
    PMIx_Info_load(&bp[1], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    (void)PMIx_Notify_event(PMIX_READY_FOR_DEBUG, &d.self, PMIX_RANGE_SESSION, bp, 2, NULL, NULL);
    PMIx_Info_destruct(&bp[0]);
    PMIx_Info_destruct(&bp[1]);
    ac->pops->lock(ac->pctx);
    up = px_client_connected(ac->client); /* a loss before the handler was there */
    ac->pops->unlock(ac->pctx);
    if (up)
        ac->pops->wait(ac->pctx, &d.w);
    (void)PMIx_Deregister_event_handler((size_t)rc, NULL, NULL);
}

PMIX_EXPORT pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
    px_api_client *ac;
    pmix_status_t rc = PMIX_SUCCESS;
    const pmix_info_t *ep;
    int want_ext = -1;
    char err[256] = "";
    bool first = false;
    sync_op s;

    ac = current();
    pthread_mutex_lock(&ac->init_lock);
    ep = px_info_find(info, ninfo, PMIX_EXTERNAL_PROGRESS);
    if (ep != NULL)
        want_ext = px_info_flag(info, ninfo, PMIX_EXTERNAL_PROGRESS);
    if (ac->refcount > 0) {
        if (want_ext >= 0 && ac->external_progress >= 0 && want_ext != ac->external_progress) {
            pthread_mutex_unlock(&ac->init_lock);
            return PMIX_ERR_BAD_PARAM; /* conflicts with the first PMIx_Init */
        }
        if (want_ext >= 0 && ac->external_progress < 0 && want_ext == 1) {
            pthread_mutex_unlock(&ac->init_lock);
            return PMIX_ERR_BAD_PARAM; /* progress is already running in a thread */
        }
        ac->refcount++;
        goto done;
    }
    rc = binding->open(binding->arg, ac, info, ninfo, err, sizeof(err));
    if (rc != PMIX_SUCCESS) {
        pthread_mutex_unlock(&ac->init_lock);
        fprintf(stderr, "pmix: PMIx_Init failed: %s (%s)\n", err[0] ? err : "cannot connect",
                PMIx_Error_string(rc));
        return rc;
    }
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    rc = finish(&s, ENGINE(ac, px_client_connect(ac->client, info, ninfo, sync_op_cb, &s)));
    if (rc != PMIX_SUCCESS) {
        ac->teardown(ac);
        pthread_mutex_unlock(&ac->init_lock);
        fprintf(stderr,
                "pmix: PMIx_Init failed: the server refused or dropped the connection"
                " (%s)\n",
                PMIx_Error_string(rc));
        return rc;
    }
    ac->external_progress = want_ext;
    ac->refcount = 1;
    first = true;
done:
    if (proc != NULL)
        *proc = *px_client_self(ac->client);
    pthread_mutex_unlock(&ac->init_lock);
    declare_model(ac, info, ninfo);
    if (first)
        stop_in_init(ac);
    return PMIX_SUCCESS;
}

PMIX_EXPORT int PMIx_Initialized(void)
{
    return current()->refcount > 0 || px_api_server_active();
}

PMIX_EXPORT const char *PMIx_Get_version(void)
{
    return "4.2.0 (pmixlab 0.1.0)";
}

PMIX_EXPORT pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo)
{
    px_api_client *ac;
    pmix_status_t rc;
    sync_op s;

    ac = current();
    if (ac->refcount > 0 && ac->client != NULL && in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK; /* it would wait for the loop it runs in */
    pthread_mutex_lock(&ac->init_lock);
    if (ready() == NULL) {
        pthread_mutex_unlock(&ac->init_lock);
        return PMIX_ERR_INIT;
    }
    if (--ac->refcount > 0) {
        pthread_mutex_unlock(&ac->init_lock);
        return PMIX_SUCCESS;
    }
    ac->refcount = 1; /* still usable for the embedded barrier */
    rc = PMIX_SUCCESS;
    if (px_info_flag(info, ninfo, PMIX_EMBED_BARRIER)) {
        memset(&s, 0, sizeof(s));
        s.ac = ac;
        rc = finish(&s, ENGINE(ac, px_client_fence(ac->client, NULL, 0, NULL, 0, sync_op_cb, &s)));
    }
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    {
        /* finalize even if the barrier failed: the server must not take
         * this process for dead (its peers' fences would fail) */
        pmix_status_t frc = finish(&s, ENGINE(ac, px_client_finalize(ac->client, sync_op_cb, &s)));
        if (rc == PMIX_SUCCESS)
            rc = frc;
    }
    ac->refcount = 0;
    ac->external_progress = -1;
    ac->model_declared = false;
    ac->teardown(ac);
    pthread_mutex_unlock(&ac->init_lock);
    return rc == PMIX_ERR_UNREACH ? PMIX_SUCCESS : rc;
}

PMIX_EXPORT void PMIx_Progress(void)
{
    px_api_client *ac = ready();

    if (ac != NULL && ac->progress != NULL)
        ac->progress(ac);
}

PMIX_EXPORT pmix_status_t PMIx_Abort(int status, const char msg[], pmix_proc_t procs[],
                                     size_t nprocs)
{
    px_api_client *ac = ready();
    sync_op s;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK;
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    return finish(
        &s, ENGINE(ac, px_client_abort(ac->client, status, msg, procs, nprocs, sync_op_cb, &s)));
}

/* ---- put / commit / get ---- */

PMIX_EXPORT pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val)
{
    px_api_client *ac = ready();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    return ENGINE(ac, px_client_put(ac->client, scope, key, val));
}

PMIX_EXPORT pmix_status_t PMIx_Commit(void)
{
    px_api_client *ac = ready();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    return ENGINE(ac, px_client_commit(ac->client));
}

PMIX_EXPORT pmix_status_t PMIx_Store_internal(const pmix_proc_t *proc, const char key[],
                                              pmix_value_t *val)
{
    px_api_client *ac = ready();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    return ENGINE(ac, px_client_store_internal(ac->client, proc, key, val));
}

/* PMIx_Get from inside a callback: only what the process holds can be
 * answered (PMIX_OPTIONAL), since a reply from the server could only come
 * after the callback returns. */
static pmix_status_t get_in_callback(px_api_client *ac, const pmix_proc_t *proc, const char key[],
                                     const pmix_info_t info[], size_t ninfo, pmix_value_t **val)
{
    pmix_info_t *local = PMIx_Info_create(ninfo + 1);
    pmix_value_t *out = NULL;
    bool yes = true;
    pmix_status_t rc;

    if (local == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < ninfo; i++)
        PMIx_Info_xfer(&local[i], &info[i]);
    PMIx_Info_load(&local[ninfo], PMIX_OPTIONAL, &yes, PMIX_BOOL);
    rc = ENGINE(ac, px_client_get(ac->client, proc, key, local, ninfo + 1, &out, NULL, NULL));
    PMIx_Info_free(local, ninfo + 1);
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        *val = out;
        return PMIX_SUCCESS;
    }
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[],
                                   const pmix_info_t info[], size_t ninfo, pmix_value_t **val)
{
    px_api_client *ac = ready();
    pmix_value_t *out = NULL;
    pmix_status_t rc;
    sync_op s;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (val == NULL)
        return PMIX_ERR_BAD_PARAM;
    *val = NULL;
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    /* one hold of the lock for the check and the lookup (in_callback is
     * called with it held) */
    ac->pops->lock(ac->pctx);
    if (ac->pops->in_callback != NULL && ac->pops->in_callback(ac->pctx)) {
        ac->pops->unlock(ac->pctx);
        return get_in_callback(ac, proc, key, info, ninfo, val);
    }
    rc = px_client_get(ac->client, proc, key, info, ninfo, &out, sync_value_cb, &s);
    ac->pops->unlock(ac->pctx);
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        *val = out;
        return PMIX_SUCCESS;
    }
    rc = finish(&s, rc);
    if (rc == PMIX_SUCCESS)
        *val = s.value;
    else if (s.value != NULL)
        PMIx_Value_free(s.value, 1);
    return rc;
}

typedef struct later_value {
    pmix_value_cbfunc_t cbfunc;
    void *cbdata;
    pmix_status_t status;
    pmix_value_t *value; /* NULL when status is an error */
} later_value;

static void call_value_cb(void *arg)
{
    later_value *l = arg;

    l->cbfunc(l->status, l->value, l->cbdata);
    PMIx_Value_free(l->value, 1);
    free(l);
}

PMIX_EXPORT pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[],
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_value_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();
    pmix_value_t *out = NULL;
    pmix_status_t rc;
    later_value *l;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    need_progress(ac);
    if (cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM;
    l = malloc(sizeof(*l));
    if (l == NULL)
        return PMIX_ERR_NOMEM;
    ac->pops->lock(ac->pctx);
    rc = px_client_get(ac->client, proc, key, info, ninfo, &out, cbfunc, cbdata);
    if (rc == PMIX_OPERATION_SUCCEEDED || (rc != PMIX_SUCCESS && rc != PMIX_ERR_BAD_PARAM &&
                                           rc != PMIX_ERR_NOMEM && rc != PMIX_ERR_INIT)) {
        /* Answered from local memory, or a key that is not there (as
         * OpenPMIx does, its programs wait for the callback whatever
         * happened): the callback still comes after we return. */
        l->cbfunc = cbfunc;
        l->cbdata = cbdata;
        l->status = rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc;
        l->value = out;
        rc = px_client_defer(ac->client, call_value_cb, l);
        if (rc != PMIX_SUCCESS)
            PMIx_Value_free(out, 1);
        else
            l = NULL;
    }
    ac->pops->unlock(ac->pctx);
    free(l);
    return rc;
}

/* ---- callbacks after the call returns ---- */

typedef struct later_op {
    pmix_op_cbfunc_t opcb;
    pmix_hdlr_reg_cbfunc_t regcb;
    pmix_status_t status;
    size_t id;
    void *cbdata;
} later_op;

static void call_op_cb(void *arg)
{
    later_op *l = arg;

    if (l->regcb != NULL)
        l->regcb(l->status, l->id, l->cbdata);
    else
        l->opcb(l->status, l->cbdata);
    free(l);
}

/* Call a completion callback with `status` after the caller's API call has
 * returned. */
static pmix_status_t later(px_api_client *ac, pmix_op_cbfunc_t opcb, pmix_hdlr_reg_cbfunc_t regcb,
                           pmix_status_t status, size_t id, void *cbdata)
{
    later_op *l = malloc(sizeof(*l));
    pmix_status_t rc;

    if (l == NULL)
        return PMIX_ERR_NOMEM;
    l->opcb = opcb;
    l->regcb = regcb;
    l->status = status;
    l->id = id;
    l->cbdata = cbdata;
    rc = px_client_defer(ac->client, call_op_cb, l);
    if (rc != PMIX_SUCCESS)
        free(l);
    return rc;
}

pmix_status_t px_api_defer(void (*fn)(void *arg), void *arg)
{
    px_api_client *ac = ready();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    need_progress(ac);
    return ENGINE(ac, px_client_defer(ac->client, fn, arg));
}

/* ---- fence ---- */

/* How often a fence waiting on the fence page drives the connection when
 * there is no progress thread: a server that died must not leave it asleep
 * for ever (unless its death ends this process: page_bound, then there is
 * no deadline). Frames still to be written (a PCOLLECT behind a full
 * socket) are pushed after 1 ms, then less and less often while they stay
 * queued (a server that stops reading must not get a busy poll). */
#define PAGE_POLL_SECONDS 0.1
#define PAGE_PUSH_SECONDS 0.001

/* A blocking fence among the processes of a node shares a page with them
 * and needs no message, or one (px_page.h). Returns PX_LBAR_DONE when the
 * fence is complete (*status its result), PX_LBAR_SERVER or PX_LBAR_NONE
 * when the fence goes to the server (arrived on the page, or not). */
static int fence_on_page(px_api_client *ac, const pmix_proc_t procs[], size_t nprocs,
                         const pmix_info_t info[], size_t ninfo, pmix_status_t *status)
{
    const px_platform_ops *ops = ac->pops;
    px_lbar lb;
    uint32_t *word;
    double polled;
    int k;

    ops->lock(ac->pctx);
    k = px_client_lbar_arrive(ac->client, procs, nprocs, info, ninfo, &lb);
    word = k == PX_LBAR_WAIT ? px_client_lbar_word(&lb) : NULL;
    ops->unlock(ac->pctx);
    /* The clock is read only when a wait ends with the fence still open
     * (two reads per fence took 1% of a collect round's CPU at 64): the
     * first such read starts the period, so a dead server is seen within
     * two periods. */
    polled = -1;
    double push_wait = PAGE_PUSH_SECONDS;
    while (k == PX_LBAR_WAIT) {
        bool push = ops->out_pending != NULL && ops->out_pending(ac->pctx);
        double now;
        if (push && ac->progress != NULL)
            ac->progress(ac);
        (void)ops->page_wait(ac->pctx, word, lb.seen,
                             push       ? push_wait
                             : lb.bound ? -1
                                        : PAGE_POLL_SECONDS);
        if (push && push_wait < PAGE_POLL_SECONDS)
            push_wait *= 2;
        ops->lock(ac->pctx);
        k = px_client_lbar_check(ac->client, &lb);
        ops->unlock(ac->pctx);
        if (k != PX_LBAR_WAIT || ac->progress == NULL)
            continue;
        /* by the clock, not by how the wait ended: signals may end every
         * wait early */
        now = ops->now(ac->pctx);
        if (polled < 0) {
            polled = now;
        } else if (now - polled >= PAGE_POLL_SECONDS) {
            ac->progress(ac); /* read the connection (a progress thread, if any, does) */
            polled = now;
            ops->lock(ac->pctx);
            k = px_client_lbar_check(ac->client, &lb);
            ops->unlock(ac->pctx);
        }
    }
    if (k == PX_LBAR_DONE)
        *status = lb.status;
    return k;
}

PMIX_EXPORT pmix_status_t PMIx_Fence(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo)
{
    px_api_client *ac = ready();
    sync_op s;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK;
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    pmix_status_t lb_status = PMIX_SUCCESS;

    switch (fence_on_page(ac, procs, nprocs, info, ninfo, &lb_status)) {
    case PX_LBAR_DONE: return lb_status;
    case PX_LBAR_SERVER:
        return finish(&s, ENGINE(ac, px_client_fence_arrived(ac->client, procs, nprocs, info, ninfo,
                                                             sync_op_cb, &s)));
    default:
        return finish(&s, ENGINE(ac, px_client_fence(ac->client, procs, nprocs, info, ninfo,
                                                     sync_op_cb, &s)));
    }
}

PMIX_EXPORT pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t info[], size_t ninfo,
                                        pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();

    pmix_status_t rc;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    need_progress(ac);
    ac->pops->lock(ac->pctx);
    rc = px_client_fence(ac->client, procs, nprocs, info, ninfo, cbfunc, cbdata);
    /* The caller alone: done. The Standard would let us return
     * PMIX_OPERATION_SUCCEEDED, but Open MPI 4.1 takes anything but
     * PMIX_SUCCESS as a failure (a 1-rank MPI_Init aborted), so the
     * callback runs, after we return. */
    if (rc == PMIX_OPERATION_SUCCEEDED)
        rc = cbfunc != NULL ? later(ac, cbfunc, NULL, PMIX_SUCCESS, 0, cbdata) : PMIX_SUCCESS;
    ac->pops->unlock(ac->pctx);
    return rc;
}

/* ---- events ---- */

PMIX_EXPORT pmix_status_t PMIx_Register_event_handler(pmix_status_t codes[], size_t ncodes,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_notification_fn_t evhdlr,
                                                      pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();
    pmix_status_t rc;
    size_t id = 0;

    if (ac == NULL) /* a server process has handlers too */
        return px_api_server_register_event(codes, ncodes, info, ninfo, evhdlr, cbfunc, cbdata);
    need_progress(ac);
    ac->pops->lock(ac->pctx);
    rc = px_client_register_event(ac->client, codes, ncodes, info, ninfo, evhdlr, &id);
    if (rc == PMIX_SUCCESS && cbfunc != NULL) {
        rc = later(ac, NULL, cbfunc, PMIX_SUCCESS, id, cbdata);
        if (rc != PMIX_SUCCESS)
            (void)px_client_deregister_event(ac->client, id);
    } else if (cbfunc != NULL) {
        /* A registration the library refused: the callback says so, with
         * no handler id (SIZE_MAX), as OpenPMIx's does; its programs wait
         * for that callback whatever happened. */
        rc = later(ac, NULL, cbfunc, rc, SIZE_MAX, cbdata);
    }
    ac->pops->unlock(ac->pctx);
    if (cbfunc == NULL && rc == PMIX_SUCCESS)
        return (pmix_status_t)id; /* the blocking form returns the handler's id */
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Deregister_event_handler(size_t evhdlr_ref, pmix_op_cbfunc_t cbfunc,
                                                        void *cbdata)
{
    px_api_client *ac = ready();
    pmix_status_t rc;

    if (ac == NULL)
        return px_api_server_deregister_event(evhdlr_ref, cbfunc, cbdata);
    if (cbfunc != NULL)
        need_progress(ac);
    ac->pops->lock(ac->pctx);
    rc = px_client_deregister_event(ac->client, evhdlr_ref);
    /* An id that names no handler is reported through the callback
     * (PMIX_ERR_NOT_FOUND), as OpenPMIx does: its programs wait for the
     * callback. The blocking form returns it. */
    if (cbfunc != NULL && (rc == PMIX_SUCCESS || rc == PMIX_ERR_NOT_FOUND))
        rc = later(ac, cbfunc, NULL, rc, 0, cbdata);
    ac->pops->unlock(ac->pctx);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Notify_event(pmix_status_t status, const pmix_proc_t *source,
                                            pmix_data_range_t range, const pmix_info_t info[],
                                            size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();
    pmix_status_t rc;

    if (ac == NULL)
        return px_api_server_notify(status, source, range, info, ninfo, cbfunc, cbdata);
    if (cbfunc != NULL)
        need_progress(ac);
    ac->pops->lock(ac->pctx);
    rc = px_client_notify(ac->client, status, source, range, info, ninfo, NULL, NULL);
    px_api_tool_notify(ac, status, source, range, info, ninfo); /* a tool's own peers */
    /* With a callback, a notice the server could not be sent is reported
     * through it (after the local handlers ran), as OpenPMIx does. */
    if (rc == PMIX_OPERATION_SUCCEEDED)
        rc = cbfunc != NULL ? later(ac, cbfunc, NULL, PMIX_SUCCESS, 0, cbdata) : PMIX_SUCCESS;
    else if (cbfunc != NULL)
        rc = later(ac, cbfunc, NULL, rc, 0, cbdata);
    ac->pops->unlock(ac->pctx);
    return rc;
}

/* ---- output forwarding (client/iof.c) ---- */

static void sync_reg_cb(pmix_status_t status, size_t id, void *cbdata)
{
    sync_op *s = cbdata;

    s->status = status;
    s->ninfo = id;
    s->ac->pops->wake(s->ac->pctx, &s->w);
}

/* PMIx_IOF_pull: with regcbfunc NULL it blocks until the server answered
 * and returns the handler's id (positive) or an error, as the event
 * registration does. The channels asked are PMIX_FWD_STDOUT_CHANNEL,
 * _STDERR_ and _STDDIAG_; PMIX_IOF_TAG_OUTPUT applies where cbfunc is
 * NULL (the library writes the output to this process's stdout/stderr). */
PMIX_EXPORT pmix_status_t PMIx_IOF_pull(const pmix_proc_t procs[], size_t nprocs,
                                        const pmix_info_t directives[], size_t ndirs,
                                        pmix_iof_channel_t channel, pmix_iof_cbfunc_t cbfunc,
                                        pmix_hdlr_reg_cbfunc_t regcbfunc, void *regcbdata)
{
    px_api_client *ac = ready();
    pmix_status_t rc;
    size_t id = 0;
    sync_op s;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    need_progress(ac); /* output comes from the loop */
    if (regcbfunc != NULL)
        return ENGINE(ac, px_client_iof_pull(ac->client, procs, nprocs, directives, ndirs, channel,
                                             cbfunc, regcbfunc, regcbdata, &id));
    if (in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK;
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    rc = finish(&s, ENGINE(ac, px_client_iof_pull(ac->client, procs, nprocs, directives, ndirs,
                                                  channel, cbfunc, sync_reg_cb, &s, &id)));
    return rc == PMIX_SUCCESS ? (pmix_status_t)s.ninfo : rc;
}

/* PMIx_IOF_push: `bo` for the stdin of `targets`; bo NULL (or empty with
 * PMIX_IOF_COMPLETE) ends that input (the targets read end of file), and
 * PMIX_IOF_COMPLETE with data sends the data then the end. With cbfunc
 * NULL it blocks until the server's host delivered the bytes to every
 * target (a pipe that is full holds it: the pusher goes at the pace of
 * the readers). PMIX_IOF_PUSH_STDIN (the library reading this process's
 * own stdin) is not supported: docs/abi.md. */
PMIX_EXPORT pmix_status_t PMIx_IOF_push(const pmix_proc_t targets[], size_t ntargets,
                                        pmix_byte_object_t *bo, const pmix_info_t directives[],
                                        size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();
    bool eof = bo == NULL || px_info_flag(directives, ndirs, PMIX_IOF_COMPLETE);
    bool data = bo != NULL && bo->size > 0;
    pmix_status_t rc;
    sync_op s;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (px_info_flag(directives, ndirs, PMIX_IOF_PUSH_STDIN))
        return PMIX_ERR_NOT_SUPPORTED;
    if (bo != NULL && bo->size > 0 && bo->bytes == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (!data && !eof)
        return cbfunc != NULL ? ENGINE(ac, later(ac, cbfunc, NULL, PMIX_SUCCESS, 0, cbdata))
                              : PMIX_SUCCESS; /* nothing to send */
    if (cbfunc == NULL && in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK;
    need_progress(ac);
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    ac->pops->lock(ac->pctx);
    rc = PMIX_SUCCESS;
    /* data then end: one request each, delivered in order; the caller hears
     * of the last */
    if (data)
        rc = px_client_iof_push(ac->client, targets, ntargets, bo->bytes, bo->size, false,
                                directives, ndirs,
                                eof              ? NULL
                                : cbfunc != NULL ? cbfunc
                                                 : sync_op_cb,
                                eof              ? NULL
                                : cbfunc != NULL ? cbdata
                                                 : &s);
    if (rc == PMIX_SUCCESS && eof)
        rc = px_client_iof_push(ac->client, targets, ntargets, NULL, 0, true, directives, ndirs,
                                cbfunc != NULL ? cbfunc : sync_op_cb, cbfunc != NULL ? cbdata : &s);
    ac->pops->unlock(ac->pctx);
    return cbfunc != NULL ? rc : finish(&s, rc);
}

PMIX_EXPORT pmix_status_t PMIx_IOF_deregister(size_t iofhdlr, const pmix_info_t directives[],
                                              size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();
    pmix_status_t rc;
    sync_op s;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (cbfunc != NULL) {
        need_progress(ac);
        ac->pops->lock(ac->pctx);
        rc = px_client_iof_deregister(ac->client, iofhdlr, directives, ndirs, cbfunc, cbdata);
        if (rc == PMIX_OPERATION_SUCCEEDED)
            rc = later(ac, cbfunc, NULL, PMIX_SUCCESS, 0, cbdata);
        ac->pops->unlock(ac->pctx);
        return rc;
    }
    if (in_callback(ac)) {
        /* the handler is gone at once; the server is told without waiting */
        rc = ENGINE(ac,
                    px_client_iof_deregister(ac->client, iofhdlr, directives, ndirs, NULL, NULL));
        return rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc;
    }
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    rc = ENGINE(ac,
                px_client_iof_deregister(ac->client, iofhdlr, directives, ndirs, sync_op_cb, &s));
    if (rc == PMIX_OPERATION_SUCCEEDED)
        return PMIX_SUCCESS;
    rc = finish(&s, rc);
    return rc == PMIX_ERR_UNREACH || rc == PMIX_ERR_LOST_CONNECTION ? PMIX_SUCCESS : rc;
}

/* ---- job control ---- */

PMIX_EXPORT pmix_status_t PMIx_Job_control_nb(const pmix_proc_t targets[], size_t ntargets,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    need_progress(ac);
    return ENGINE(ac, px_client_job_control(ac->client, targets, ntargets, directives, ndirs,
                                            cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Job_control(const pmix_proc_t targets[], size_t ntargets,
                                           const pmix_info_t directives[], size_t ndirs,
                                           pmix_info_t **results, size_t *nresults)
{
    px_api_client *ac = ready();
    pmix_status_t rc;
    sync_op s;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK;
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    rc = finish(&s, ENGINE(ac, px_client_job_control(ac->client, targets, ntargets, directives,
                                                     ndirs, sync_info_cb, &s)));
    if (results != NULL && nresults != NULL) {
        *results = s.info;
        *nresults = s.ninfo;
    } else {
        PMIx_Info_free(s.info, s.ninfo);
    }
    return rc;
}

/* ---- publish / lookup (the host's data service) ---- */

PMIX_EXPORT pmix_status_t PMIx_Publish_nb(const pmix_info_t info[], size_t ninfo,
                                          pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    need_progress(ac);
    return ENGINE(ac, px_client_publish(ac->client, info, ninfo, cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Publish(const pmix_info_t info[], size_t ninfo)
{
    px_api_client *ac = ready();
    sync_op s;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK;
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    return finish(&s, ENGINE(ac, px_client_publish(ac->client, info, ninfo, sync_op_cb, &s)));
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                            pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    need_progress(ac);
    return ENGINE(ac, px_client_unpublish(ac->client, keys, info, ninfo, cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_Unpublish(char **keys, const pmix_info_t info[], size_t ninfo)
{
    px_api_client *ac = ready();
    sync_op s;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK;
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    return finish(&s,
                  ENGINE(ac, px_client_unpublish(ac->client, keys, info, ninfo, sync_op_cb, &s)));
}

PMIX_EXPORT pmix_status_t PMIx_Lookup_nb(char **keys, const pmix_info_t info[], size_t ninfo,
                                         pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    px_api_client *ac = ready();

    if (ac == NULL)
        return PMIX_ERR_INIT;
    need_progress(ac);
    return ENGINE(ac, px_client_lookup(ac->client, keys, info, ninfo, cbfunc, cbdata));
}

/* A blocking lookup: the caller's array, filled by key as answers come. */
typedef struct lookup_sync {
    sync_op op;
    pmix_pdata_t *data;
    size_t ndata;
    bool *filled;
} lookup_sync;

static void sync_lookup_cb(pmix_status_t status, pmix_pdata_t found[], size_t nfound, void *cbdata)
{
    lookup_sync *l = cbdata;

    l->op.status = status;
    for (size_t k = 0; k < nfound; k++) {
        for (size_t i = 0; i < l->ndata; i++) {
            pmix_pdata_t *d = &l->data[i];
            if (l->filled[i] || !PMIx_Check_key(d->key, found[k].key))
                continue;
            l->filled[i] = true;
            d->proc = found[k].proc;
            if (PMIx_Value_xfer(&d->value, &found[k].value) != PMIX_SUCCESS)
                l->op.status = PMIX_ERR_NOMEM;
            break;
        }
    }
    l->op.ac->pops->wake(l->op.ac->pctx, &l->op.w);
}

/* The Standard's blocking form: the keys are data[i].key; each found one
 * gets its publisher and value in place (the others are left as the
 * caller made them: PMIX_PDATA_CONSTRUCT makes them PMIX_UNDEF). Returns the data service's status
 * (PMIX_SUCCESS, PMIX_ERR_PARTIAL_SUCCESS, PMIX_ERR_NOT_FOUND, PMIX_ERR_TIMEOUT...). */
PMIX_EXPORT pmix_status_t PMIx_Lookup(pmix_pdata_t data[], size_t ndata, const pmix_info_t info[],
                                      size_t ninfo)
{
    px_api_client *ac = ready();
    lookup_sync l;
    char **keys;
    pmix_status_t rc;

    if (ac == NULL)
        return PMIX_ERR_INIT;
    if (data == NULL || ndata == 0)
        return PMIX_ERR_BAD_PARAM;
    if (in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK;
    keys = calloc(ndata + 1, sizeof(char *));
    memset(&l, 0, sizeof(l));
    l.filled = calloc(ndata, sizeof(bool));
    if (keys == NULL || l.filled == NULL) {
        free(keys);
        free(l.filled);
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < ndata; i++)
        keys[i] = data[i].key; /* borrowed: the engine packs them at once */
    l.op.ac = ac;
    l.data = data;
    l.ndata = ndata;
    rc = finish(&l.op,
                ENGINE(ac, px_client_lookup(ac->client, keys, info, ninfo, sync_lookup_cb, &l)));
    free(keys);
    free(l.filled);
    return rc;
}

/* ---- queries the server answers (query.c) ---- */

pmix_status_t px_api_query_server(const pmix_query_t queries[], size_t nqueries,
                                  pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_info_t **info,
                                  size_t *ninfo)
{
    px_api_client *ac = ready();
    pmix_status_t rc;
    sync_op s;

    if (ac == NULL) {
        if (cbfunc != NULL)
            return PMIX_ERR_INIT;
        return px_api_server_query(queries, nqueries, info, ninfo);
    }
    if (cbfunc != NULL) {
        need_progress(ac);
        return ENGINE(ac, px_client_query(ac->client, queries, nqueries, cbfunc, cbdata));
    }
    if (in_callback(ac))
        return PMIX_ERR_WOULD_BLOCK;
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    rc = finish(&s, ENGINE(ac, px_client_query(ac->client, queries, nqueries, sync_info_cb, &s)));
    *info = s.info;
    *ninfo = s.ninfo;
    return rc;
}
