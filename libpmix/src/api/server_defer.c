/*
 * server_defer.c - the Standard server's calls to its host, made from the
 * library's side of the loop. The rules, and why, are in px_defer.h.
 *
 * How it works. A queued call is a px_hcall: what to call (`kind` and the
 * function), its arguments, and for an engine's completion the host's
 * release function to call after it. Queueing appends to a list under
 * `mu` and sends the async handle; the handle's callback, on the loop's
 * thread with no lock held, takes the whole list and makes the calls in
 * order. An engine's completion takes the engine lock itself (the engine's
 * completions are written for any thread); a host's function runs with no
 * lock of ours held, so it may call the library again.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api/px_defer.h"
#include "common/px_common.h"

typedef enum {
    HC_OP,       /* host: pmix_op_cbfunc_t */
    HC_REG,      /* host: pmix_hdlr_reg_cbfunc_t */
    HC_RELEASE,  /* host: pmix_release_cbfunc_t */
    HC_DMODEX,   /* host: pmix_dmodex_response_fn_t, with a copy of the data */
    HC_APP,      /* host: pmix_setup_application_cbfunc_t */
    HC_E_OP,     /* engine: pmix_op_cbfunc_t */
    HC_E_MODEX,  /* engine: pmix_modex_cbfunc_t, then the host's release */
    HC_E_INFO,   /* engine: pmix_info_cbfunc_t, then the host's release */
    HC_E_LOOKUP, /* engine: pmix_lookup_cbfunc_t, with a copy of the data */
    HC_E_TOOL,   /* engine: pmix_tool_connection_cbfunc_t, with a copy of the name */
    HC_E_SPAWN,  /* engine: pmix_spawn_cbfunc_t, with a copy of the namespace */
} hc_kind;

typedef struct px_hcall {
    struct px_hcall *next;
    hc_kind kind;
    union {
        pmix_op_cbfunc_t op;
        pmix_hdlr_reg_cbfunc_t reg;
        pmix_release_cbfunc_t rel;
        pmix_dmodex_response_fn_t dmx;
        pmix_setup_application_cbfunc_t app;
        pmix_modex_cbfunc_t modex;
        pmix_info_cbfunc_t info;
        pmix_tool_connection_cbfunc_t tool;
        pmix_lookup_cbfunc_t lookup;
        pmix_spawn_cbfunc_t spawn;
    } fn;
    void *cbdata;
    pmix_status_t status;
    pmix_proc_t proc; /* HC_E_TOOL */
    size_t id;
    const char *data; /* HC_DMODEX, HC_E_MODEX */
    size_t ndata;
    char *data_copy;   /* freed after the call (then data points here) */
    pmix_info_t *info; /* HC_E_INFO */
    size_t ninfo;
    pmix_info_t *info_copy;
    pmix_pdata_t *pdata;           /* HC_E_LOOKUP: a copy, ninfo entries */
    pmix_release_cbfunc_t release; /* the host's, after an engine completion */
    void *release_cbdata;
} px_hcall;

struct px_defer {
    px_posix *p;
    px_posix_async *async;
    pthread_mutex_t mu;
    px_hcall *head, *tail;
};

struct px_defer_wrap {
    px_defer *d;
    atomic_int refs;    /* the host's and the adapter's */
    atomic_bool called; /* the host called the completion */
    union {
        pmix_op_cbfunc_t op;
        pmix_modex_cbfunc_t modex;
        pmix_info_cbfunc_t info;
        pmix_tool_connection_cbfunc_t tool;
        pmix_lookup_cbfunc_t lookup;
        pmix_spawn_cbfunc_t spawn;
    } fn;
    void *cbdata;
};

static void hcall_free(px_hcall *h)
{
    free(h->data_copy);
    if (h->info_copy != NULL)
        PMIx_Info_free(h->info_copy, h->ninfo);
    if (h->pdata != NULL)
        PMIx_Pdata_free(h->pdata, h->ninfo);
    free(h);
}

static void run(px_hcall *h)
{
    switch (h->kind) {
    case HC_OP: h->fn.op(h->status, h->cbdata); break;
    case HC_REG: h->fn.reg(h->status, h->id, h->cbdata); break;
    case HC_RELEASE: h->fn.rel(h->cbdata); break;
    case HC_DMODEX: h->fn.dmx(h->status, h->data_copy, h->ndata, h->cbdata); break;
    case HC_APP: h->fn.app(h->status, NULL, 0, h->cbdata, NULL, NULL); break;
    case HC_E_OP: h->fn.op(h->status, h->cbdata); break;
    case HC_E_MODEX: h->fn.modex(h->status, h->data, h->ndata, h->cbdata, NULL, NULL); break;
    case HC_E_INFO: h->fn.info(h->status, h->info, h->ninfo, h->cbdata, NULL, NULL); break;
    case HC_E_TOOL: h->fn.tool(h->status, &h->proc, h->cbdata); break;
    case HC_E_LOOKUP: h->fn.lookup(h->status, h->pdata, h->ninfo, h->cbdata); break;
    case HC_E_SPAWN: h->fn.spawn(h->status, h->proc.nspace, h->cbdata); break;
    }
    /* The engine has copied what it keeps: the host may have it back. */
    if (h->release != NULL)
        h->release(h->release_cbdata);
}

/* The async callback: the loop's thread, no lock held. */
static void drain(void *arg)
{
    px_defer *d = arg;
    px_hcall *list;

    pthread_mutex_lock(&d->mu);
    list = d->head;
    d->head = d->tail = NULL;
    pthread_mutex_unlock(&d->mu);
    while (list != NULL) {
        px_hcall *h = list;
        list = h->next;
        run(h);
        hcall_free(h);
    }
}

px_defer *px_defer_create(px_posix *p)
{
    px_defer *d = calloc(1, sizeof(*d));

    if (d == NULL)
        return NULL;
    if (pthread_mutex_init(&d->mu, NULL) != 0) {
        free(d);
        return NULL;
    }
    d->p = p;
    d->async = px_posix_async_create(p, drain, d);
    if (d->async == NULL) {
        pthread_mutex_destroy(&d->mu);
        free(d);
        return NULL;
    }
    return d;
}

void px_defer_destroy(px_defer *d)
{
    if (d == NULL)
        return;
    px_posix_async_destroy(d->async);
    while (d->head != NULL) {
        px_hcall *h = d->head;
        d->head = h->next;
        hcall_free(h);
    }
    pthread_mutex_destroy(&d->mu);
    free(d);
}

static px_hcall *hcall_new(hc_kind kind, void *cbdata, pmix_status_t status)
{
    px_hcall *h = calloc(1, sizeof(*h));

    if (h != NULL) {
        h->kind = kind;
        h->cbdata = cbdata;
        h->status = status;
    }
    return h;
}

static void enqueue(px_defer *d, px_hcall *h)
{
    pthread_mutex_lock(&d->mu);
    if (d->tail != NULL)
        d->tail->next = h;
    else
        d->head = h;
    d->tail = h;
    pthread_mutex_unlock(&d->mu);
    px_posix_async_send(d->async);
}

pmix_status_t px_defer_op(px_defer *d, pmix_op_cbfunc_t fn, pmix_status_t status, void *cbdata)
{
    px_hcall *h;

    if (fn == NULL)
        return PMIX_SUCCESS;
    if ((h = hcall_new(HC_OP, cbdata, status)) == NULL)
        return PMIX_ERR_NOMEM;
    h->fn.op = fn;
    enqueue(d, h);
    return PMIX_SUCCESS;
}

pmix_status_t px_defer_reg(px_defer *d, pmix_hdlr_reg_cbfunc_t fn, pmix_status_t status, size_t id,
                           void *cbdata)
{
    px_hcall *h;

    if (fn == NULL)
        return PMIX_SUCCESS;
    if ((h = hcall_new(HC_REG, cbdata, status)) == NULL)
        return PMIX_ERR_NOMEM;
    h->fn.reg = fn;
    h->id = id;
    enqueue(d, h);
    return PMIX_SUCCESS;
}

pmix_status_t px_defer_release(px_defer *d, pmix_release_cbfunc_t fn, void *cbdata)
{
    px_hcall *h;

    if (fn == NULL)
        return PMIX_SUCCESS;
    if ((h = hcall_new(HC_RELEASE, cbdata, PMIX_SUCCESS)) == NULL)
        return PMIX_ERR_NOMEM;
    h->fn.rel = fn;
    enqueue(d, h);
    return PMIX_SUCCESS;
}

pmix_status_t px_defer_dmodex(px_defer *d, pmix_dmodex_response_fn_t fn, pmix_status_t status,
                              const char *data, size_t ndata, void *cbdata)
{
    px_hcall *h;

    if (fn == NULL)
        return PMIX_SUCCESS;
    if ((h = hcall_new(HC_DMODEX, cbdata, status)) == NULL)
        return PMIX_ERR_NOMEM;
    h->fn.dmx = fn;
    if (data != NULL && ndata > 0) {
        if ((h->data_copy = malloc(ndata)) == NULL) {
            free(h);
            return PMIX_ERR_NOMEM;
        }
        memcpy(h->data_copy, data, ndata);
        h->ndata = ndata;
    }
    enqueue(d, h);
    return PMIX_SUCCESS;
}

pmix_status_t px_defer_app(px_defer *d, pmix_setup_application_cbfunc_t fn, pmix_status_t status,
                           void *cbdata)
{
    px_hcall *h;

    if (fn == NULL)
        return PMIX_SUCCESS;
    if ((h = hcall_new(HC_APP, cbdata, status)) == NULL)
        return PMIX_ERR_NOMEM;
    h->fn.app = fn;
    enqueue(d, h);
    return PMIX_SUCCESS;
}

/* ---- completions handed to a host in place of the engine's ---- */

static px_defer_wrap *wrap_new(px_defer *d, void *cbdata)
{
    px_defer_wrap *w = calloc(1, sizeof(*w));

    if (w != NULL) {
        w->d = d;
        atomic_init(&w->refs, 2);
        atomic_init(&w->called, false);
        w->cbdata = cbdata;
    }
    return w;
}

static void wrap_unref(px_defer_wrap *w)
{
    if (atomic_fetch_sub(&w->refs, 1) == 1)
        free(w);
}

px_defer_wrap *px_defer_wrap_op(px_defer *d, pmix_op_cbfunc_t fn, void *cbdata)
{
    px_defer_wrap *w = wrap_new(d, cbdata);

    if (w != NULL)
        w->fn.op = fn;
    return w;
}

px_defer_wrap *px_defer_wrap_modex(px_defer *d, pmix_modex_cbfunc_t fn, void *cbdata)
{
    px_defer_wrap *w = wrap_new(d, cbdata);

    if (w != NULL)
        w->fn.modex = fn;
    return w;
}

px_defer_wrap *px_defer_wrap_info(px_defer *d, pmix_info_cbfunc_t fn, void *cbdata)
{
    px_defer_wrap *w = wrap_new(d, cbdata);

    if (w != NULL)
        w->fn.info = fn;
    return w;
}

px_defer_wrap *px_defer_wrap_tool(px_defer *d, pmix_tool_connection_cbfunc_t fn, void *cbdata)
{
    px_defer_wrap *w = wrap_new(d, cbdata);

    if (w != NULL)
        w->fn.tool = fn;
    return w;
}

px_defer_wrap *px_defer_wrap_lookup(px_defer *d, pmix_lookup_cbfunc_t fn, void *cbdata)
{
    px_defer_wrap *w = wrap_new(d, cbdata);

    if (w != NULL)
        w->fn.lookup = fn;
    return w;
}

px_defer_wrap *px_defer_wrap_spawn(px_defer *d, pmix_spawn_cbfunc_t fn, void *cbdata)
{
    px_defer_wrap *w = wrap_new(d, cbdata);

    if (w != NULL)
        w->fn.spawn = fn;
    return w;
}

void px_defer_wrap_done(px_defer_wrap *w, pmix_status_t rc)
{
    if (w == NULL)
        return;
    /* The host will not call back: its reference goes too. */
    if (rc != PMIX_SUCCESS && !atomic_load(&w->called))
        wrap_unref(w);
    wrap_unref(w);
}

/* The engine lock, if this thread can have it without waiting. */
static bool engine_now(px_defer *d)
{
    return px_posix_trylock(d->p);
}

static void engine_done(px_defer *d)
{
    px_posix_ops()->unlock(d->p);
}

void px_defer_op_cb(pmix_status_t status, void *cbdata)
{
    px_defer_wrap *w = cbdata;
    px_defer *d = w->d;
    px_hcall *h;

    atomic_store(&w->called, true);
    if (engine_now(d)) {
        w->fn.op(status, w->cbdata);
        engine_done(d);
    } else if ((h = hcall_new(HC_E_OP, w->cbdata, status)) != NULL) {
        h->fn.op = w->fn.op;
        enqueue(d, h);
    } else {
        /* No memory to queue it: wait for the lock after all (rare). */
        w->fn.op(status, w->cbdata);
    }
    wrap_unref(w);
}

void px_defer_modex_cb(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                       pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    px_defer_wrap *w = cbdata;
    px_defer *d = w->d;
    px_hcall *h;

    atomic_store(&w->called, true);
    /* The posix platform has no region_wrap: the engine copies what it
     * keeps before its completion returns, and never calls release_fn. */
    if (engine_now(d)) {
        w->fn.modex(status, data, ndata, w->cbdata, NULL, NULL);
        engine_done(d);
        if (px_defer_release(d, release_fn, release_cbdata) != PMIX_SUCCESS)
            release_fn(release_cbdata); /* no memory: late is better than never */
        wrap_unref(w);
        return;
    }
    h = hcall_new(HC_E_MODEX, w->cbdata, status);
    if (h != NULL) {
        h->fn.modex = w->fn.modex;
        h->data = data;
        h->ndata = ndata;
        h->release = release_fn;
        h->release_cbdata = release_cbdata;
        /* Without a release function the data is the host's again once
         * we return: keep a copy. */
        if (release_fn == NULL && data != NULL && ndata > 0) {
            h->data_copy = malloc(ndata);
            if (h->data_copy == NULL) {
                hcall_free(h);
                h = NULL;
            } else {
                memcpy(h->data_copy, data, ndata);
                h->data = h->data_copy;
            }
        }
    }
    if (h != NULL) {
        enqueue(d, h);
    } else {
        w->fn.modex(status == PMIX_SUCCESS ? PMIX_ERR_NOMEM : status, NULL, 0, w->cbdata, NULL,
                    NULL);
        if (release_fn != NULL)
            release_fn(release_cbdata);
    }
    wrap_unref(w);
}

void px_defer_info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    px_defer_wrap *w = cbdata;
    px_defer *d = w->d;
    px_hcall *h;

    atomic_store(&w->called, true);
    if (engine_now(d)) {
        w->fn.info(status, info, ninfo, w->cbdata, NULL, NULL);
        engine_done(d);
        if (px_defer_release(d, release_fn, release_cbdata) != PMIX_SUCCESS)
            release_fn(release_cbdata);
        wrap_unref(w);
        return;
    }
    h = hcall_new(HC_E_INFO, w->cbdata, status);
    if (h != NULL) {
        h->fn.info = w->fn.info;
        h->info = info;
        h->ninfo = ninfo;
        h->release = release_fn;
        h->release_cbdata = release_cbdata;
        if (release_fn == NULL && info != NULL && ninfo > 0) {
            h->info_copy = PMIx_Info_create(ninfo);
            if (h->info_copy == NULL) {
                hcall_free(h);
                h = NULL;
            } else {
                for (size_t i = 0; i < ninfo; i++)
                    PMIx_Info_xfer(&h->info_copy[i], &info[i]);
                h->info = h->info_copy;
            }
        }
    }
    if (h != NULL) {
        enqueue(d, h);
    } else {
        w->fn.info(status == PMIX_SUCCESS ? PMIX_ERR_NOMEM : status, NULL, 0, w->cbdata, NULL,
                   NULL);
        if (release_fn != NULL)
            release_fn(release_cbdata);
    }
    wrap_unref(w);
}

/* The host's data is borrowed for the call (pmix_lookup_cbfunc_t has no
 * release function): copied when the completion is queued. */
void px_defer_lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    px_defer_wrap *w = cbdata;
    px_defer *d = w->d;
    px_hcall *h;

    atomic_store(&w->called, true);
    if (engine_now(d)) {
        w->fn.lookup(status, data, ndata, w->cbdata);
        engine_done(d);
        wrap_unref(w);
        return;
    }
    h = hcall_new(HC_E_LOOKUP, w->cbdata, status);
    if (h != NULL && data != NULL && ndata > 0) {
        h->pdata = PMIx_Pdata_create(ndata);
        if (h->pdata == NULL) {
            hcall_free(h);
            h = NULL;
        } else {
            h->ninfo = ndata;
            for (size_t i = 0; i < ndata; i++)
                PMIx_Pdata_xfer(&h->pdata[i], &data[i]);
        }
    }
    if (h != NULL) {
        h->fn.lookup = w->fn.lookup;
        enqueue(d, h);
    } else {
        w->fn.lookup(status == PMIX_SUCCESS ? PMIX_ERR_NOMEM : status, NULL, 0, w->cbdata);
    }
    wrap_unref(w);
}

void px_defer_tool_cb(pmix_status_t status, pmix_proc_t *proc, void *cbdata)
{
    px_defer_wrap *w = cbdata;
    px_defer *d = w->d;
    px_hcall *h;
    pmix_proc_t copy;

    atomic_store(&w->called, true);
    memset(&copy, 0, sizeof(copy));
    if (proc != NULL)
        copy = *proc;
    else if (status == PMIX_SUCCESS)
        status = PMIX_ERR_BAD_PARAM; /* accepted, but under no name */
    if (engine_now(d)) {
        w->fn.tool(status, &copy, w->cbdata);
        engine_done(d);
    } else if ((h = hcall_new(HC_E_TOOL, w->cbdata, status)) != NULL) {
        h->fn.tool = w->fn.tool;
        h->proc = copy;
        enqueue(d, h);
    } else {
        w->fn.tool(status, &copy, w->cbdata); /* no memory to queue it (rare) */
    }
    wrap_unref(w);
}

/* The namespace is borrowed for the call: copied when the completion is
 * queued. */
void px_defer_spawn_cb(pmix_status_t status, pmix_nspace_t nspace, void *cbdata)
{
    px_defer_wrap *w = cbdata;
    px_defer *d = w->d;
    px_hcall *h;
    pmix_proc_t copy;

    atomic_store(&w->called, true);
    memset(&copy, 0, sizeof(copy));
    if (nspace != NULL)
        PMIx_Load_nspace(copy.nspace, nspace);
    if (engine_now(d)) {
        w->fn.spawn(status, copy.nspace, w->cbdata);
        engine_done(d);
    } else if ((h = hcall_new(HC_E_SPAWN, w->cbdata, status)) != NULL) {
        h->fn.spawn = w->fn.spawn;
        h->proc = copy;
        enqueue(d, h);
    } else {
        w->fn.spawn(status, copy.nspace, w->cbdata); /* no memory to queue it (rare) */
    }
    wrap_unref(w);
}
