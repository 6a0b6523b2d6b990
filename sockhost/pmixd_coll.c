/*
 * pmixd_coll.c - pmixd's side of the host core: the daemon's px_hc
 * (hostcore/px_hostcore.h), which owns fences across nodes (a px_coll per
 * participant set, the per-set queue, failing in step), the news of a dead
 * rank, lost daemons and direct modex, on the daemons' TCP mesh and the
 * daemon's timer list.
 *
 * Messages. Every px_hc message travels as one PD_HC frame to the node it
 * is for (pmixd_peer_send: queued for a daemon that has not connected
 * yet). A send our side refuses (no memory, a frame over the limit) is
 * that message's failure, not the peer's; a daemon we cannot reach counts
 * as lost.
 *
 * Threads. The PMIx server library calls the fence_nb and direct_modex
 * upcalls, and answers PMIx_server_dmodex_request, on its progress
 * thread: they only queue an item (with copies of what they were given)
 * under `qmu` and poke the main loop (job_wake), which hands it to the
 * core. The main thread never holds `qmu` while it calls the library.
 *
 * The algorithm of a fence is its own key, else PMIXLAB_FENCE_ALGO /
 * PMIXLAB_BARRIER_ALGO (read when the job starts), else auto. With
 * PMIXLAB_PMIXD_TRACE=1 every daemon writes a line per cross-node fence to
 * stderr: set, epoch, algorithm ("aborted" for an epoch this node failed
 * itself), status, time. Failures follow the core's rules (docs/pmixd.md):
 * a dead rank or a lost daemon fails every running, queued and later fence
 * with PMIX_ERR_PROC_TERM_WO_SYNC; direct modex requests to a lost daemon
 * fail with PMIX_ERR_UNREACH.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmixd.h"
#include "px_hostcore.h"
#include "pmixd_proto.h"

enum {
    IT_FENCE,
    IT_DMDX,
    IT_DMDX_ANSWER
};

/* An upcall, or an answer of the server, waiting for the main thread. */
struct inbox_item {
    inbox_item *next;
    int kind;
    pmix_proc_t *procs; /* IT_FENCE: the participants; IT_DMDX: one */
    size_t nprocs;
    pmix_info_t *info;
    size_t ninfo;
    char *data; /* IT_FENCE: the node's contribution; IT_DMDX_ANSWER: the record */
    size_t ndata;
    pmix_modex_cbfunc_t cbfunc; /* IT_FENCE, IT_DMDX */
    void *cbdata;
    pmix_dmodex_response_fn_t answer; /* IT_DMDX_ANSWER: the core's callback */
    void *answer_arg;
    pmix_status_t status;
};

/* The Standard's module carries no context: the one daemon of this process. */
static pmixd_ctx *g_d;

static void push(pmixd_ctx *d, inbox_item *it)
{
    pthread_mutex_lock(&d->qmu);
    if (d->qtail != NULL)
        d->qtail->next = it;
    else
        d->qhead = it;
    d->qtail = it;
    pthread_mutex_unlock(&d->qmu);
    job_wake(&d->j);
}

static void free_item(inbox_item *it)
{
    free(it->procs);
    if (it->info != NULL)
        PMIx_Info_free(it->info, it->ninfo);
    free(it->data);
    free(it);
}

/* ---- upcalls (progress thread) ---- */

static pmix_status_t up_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata)
{
    inbox_item *it = calloc(1, sizeof *it);
    if (it == NULL)
        return PMIX_ERR_NOMEM;
    it->kind = IT_FENCE;
    if ((nprocs > 0 && (it->procs = malloc(nprocs * sizeof *procs)) == NULL) ||
        (ninfo > 0 && (it->info = PMIx_Info_create(ninfo)) == NULL) ||
        (ndata > 0 && (it->data = malloc(ndata)) == NULL)) {
        free_item(it);
        return PMIX_ERR_NOMEM;
    }
    if (nprocs > 0)
        memcpy(it->procs, procs, nprocs * sizeof *procs);
    it->nprocs = nprocs;
    for (size_t i = 0; i < ninfo; i++)
        PMIx_Info_xfer(&it->info[i], &info[i]);
    it->ninfo = ninfo;
    if (ndata > 0)
        memcpy(it->data, data, ndata);
    it->ndata = ndata;
    it->cbfunc = cbfunc;
    it->cbdata = cbdata;
    push(g_d, it);
    return PMIX_SUCCESS;
}

static pmix_status_t up_dmodex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                               pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    pmixd_ctx *d = g_d;
    /* the core would say so too; answered here, the server needs no hop */
    if (px_jobmap_node_of(&d->map, proc->rank) == (uint32_t)d->node ||
        strncmp(proc->nspace, d->map.nspace, PMIX_MAX_NSLEN) != 0)
        return PMIX_ERR_NOT_FOUND;
    inbox_item *it = calloc(1, sizeof *it);
    if (it == NULL || (it->procs = malloc(sizeof *proc)) == NULL) {
        free(it);
        return PMIX_ERR_NOMEM;
    }
    it->kind = IT_DMDX;
    it->procs[0] = *proc;
    it->nprocs = 1;
    it->cbfunc = cbfunc;
    it->cbdata = cbdata;
    push(d, it);
    return PMIX_SUCCESS;
}

typedef struct local_ask {
    pmixd_ctx *d;
    pmix_dmodex_response_fn_t answer;
    void *arg;
} local_ask;

/* PMIx_server_dmodex_request's answer: any thread, maybe inside the call. */
static void local_answered(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    local_ask *a = cbdata;
    inbox_item *it = calloc(1, sizeof *it);
    if (it != NULL) {
        it->kind = IT_DMDX_ANSWER;
        it->answer = a->answer;
        it->answer_arg = a->arg;
        it->status = status;
        if (status == PMIX_SUCCESS && sz > 0) {
            if ((it->data = malloc(sz)) != NULL) {
                memcpy(it->data, data, sz);
                it->ndata = sz;
            } else {
                it->status = PMIX_ERR_NOMEM;
            }
        }
        push(a->d, it);
    } else {
        /* cannot hop: the requester's own timeout ends its Get */
        fprintf(stderr, "pmixd %s: out of memory answering a direct modex request\n",
                a->d->j.hostname);
    }
    free(a);
}

/* ---- the core's operations (main thread) ---- */

static pmix_status_t hc_send(void *ctx, uint32_t node, void *msg, size_t len,
                             const px_hc_sent *what)
{
    pmixd_ctx *d = ctx;
    if (what->kind == PX_HC_DMX_REP && d->nomem_replies > 0) {
        d->nomem_replies--; /* the test hook: as if memory ran out */
        free(msg);
        return PMIX_ERR_NOMEM;
    }
    tl_buf b = {.data = msg, .len = len, .cap = len};
    int rc = pmixd_peer_send(d, (int)node, PD_HC, &b);
    free(msg);
    return rc == 0            ? PMIX_SUCCESS
           : rc == TL_ENOMEM  ? PMIX_ERR_NOMEM
           : rc == TL_ETOOBIG ? PMIX_ERR_OUT_OF_RESOURCE
                              : PMIX_ERR_UNREACH;
}

static px_coll_timer *hc_timer_start(void *ctx, double seconds, void (*cb)(void *arg), void *arg)
{
    pmixd_ctx *d = ctx;
    px_coll_timer *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->at = now_s() + seconds;
    t->cb = cb;
    t->arg = arg;
    t->next = d->timers;
    d->timers = t;
    return t;
}

static void hc_timer_cancel(void *ctx, px_coll_timer *timer)
{
    pmixd_ctx *d = ctx;
    for (px_coll_timer **pp = &d->timers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == timer) {
            *pp = timer->next;
            free(timer);
            return;
        }
    }
}

static double hc_now(void *ctx)
{
    return now_s();
}

static pmix_status_t hc_dmodex_local(void *ctx, const pmix_proc_t *proc,
                                     pmix_dmodex_response_fn_t cb, void *cbdata)
{
    local_ask *a = calloc(1, sizeof *a);
    if (a == NULL)
        return PMIX_ERR_NOMEM;
    *a = (local_ask){ctx, cb, cbdata};
    pmix_status_t rc = PMIx_server_dmodex_request(proc, local_answered, a);
    if (rc != PMIX_SUCCESS)
        free(a);
    return rc;
}

static void hc_drop(void *ctx, uint32_t node)
{
    pmixd_peer_drop(ctx, (int)node);
}

static void hc_log(void *ctx, const char *line)
{
    fprintf(stderr, "pmixd %s: %s\n", ((pmixd_ctx *)ctx)->j.hostname, line);
}

/* PMIXLAB_PMIXD_TRACE: the fence that just ended here. */
static void hc_fence_end(void *ctx, const px_hc_fence_info *fi, pmix_status_t status)
{
    pmixd_ctx *d = ctx;
    char name[64] = "?";
    if (!d->trace)
        return;
    if (fi->aborted)
        snprintf(name, sizeof name, "aborted"); /* this node failed the epoch itself */
    else if (fi->resolved != NULL)
        px_coll_choice_format(fi->resolved, name, sizeof name);
    fprintf(stderr, "pmixd %s: fence set %016llx epoch %u: %s %s on %u nodes: %s in %.1f us\n",
            d->j.hostname, (unsigned long long)fi->set, fi->epoch,
            fi->kind == PX_COLL_ALLGATHER ? "allgather" : "barrier", name, fi->nmembers,
            status == PMIX_SUCCESS ? "ok" : PMIx_Error_string(status),
            (now_s() - fi->started) * 1e6);
}

static const px_hc_ops hc_ops = {
    .version = PX_HC_OPS_VERSION,
    .send = hc_send,
    .timer_start = hc_timer_start,
    .timer_cancel = hc_timer_cancel,
    .now = hc_now,
    .dmodex_local = hc_dmodex_local,
    .drop = hc_drop,
    .log = hc_log,
    .fence_end = hc_fence_end,
};

/* ---- the main thread's side ---- */

void coll_break(pmixd_ctx *d, int rank, bool tell)
{
    if (d->hc != NULL)
        px_hc_break(d->hc, rank >= 0 ? (pmix_rank_t)rank : PMIX_RANK_INVALID, tell,
                    rank >= 0 ? "a local rank died" : "the job broke");
}

void coll_departed(pmixd_ctx *d, int rank)
{
    if (d->hc != NULL)
        px_hc_departed(d->hc, (pmix_rank_t)rank, true);
}

void coll_peer_lost(pmixd_ctx *d, int node)
{
    if (d->hc != NULL)
        px_hc_node_lost(d->hc, (uint32_t)node);
}

void coll_inbox(pmixd_ctx *d)
{
    pthread_mutex_lock(&d->qmu);
    inbox_item *it = d->qhead;
    d->qhead = d->qtail = NULL;
    pthread_mutex_unlock(&d->qmu);
    while (it != NULL) {
        inbox_item *next = it->next;
        pmix_status_t rc;
        switch (it->kind) {
        case IT_FENCE:
            if (d->stopping || d->hc == NULL) {
                it->cbfunc(PMIX_ERR_PROC_TERM_WO_SYNC, NULL, 0, it->cbdata, NULL, NULL);
                break;
            }
            rc = px_hc_fence(d->hc, it->procs, it->nprocs, it->info, it->ninfo, it->data, it->ndata,
                             it->cbfunc, it->cbdata);
            if (rc != PMIX_SUCCESS)
                it->cbfunc(rc, NULL, 0, it->cbdata, NULL, NULL);
            break;
        case IT_DMDX:
            rc = d->hc != NULL ? px_hc_dmodex(d->hc, &it->procs[0], NULL, 0, it->cbfunc, it->cbdata)
                               : PMIX_ERR_NOT_FOUND;
            if (rc != PMIX_SUCCESS)
                it->cbfunc(rc, NULL, 0, it->cbdata, NULL, NULL);
            break;
        case IT_DMDX_ANSWER: it->answer(it->status, it->data, it->ndata, it->answer_arg); break;
        default: break;
        }
        free_item(it);
        it = next;
    }
}

void coll_frame(pmixd_ctx *d, int from, uint8_t type, const uint8_t *p, size_t len)
{
    if (type != PD_HC || d->hc == NULL)
        return;
    if (px_hc_deliver(d->hc, (uint32_t)from, p, len) != PMIX_SUCCESS)
        fprintf(stderr, "pmixd %s: a malformed message from %s's daemon, dropped\n", d->j.hostname,
                d->j.node_names[from]);
}

/* ---- timers ---- */

int coll_timeout_ms(pmixd_ctx *d)
{
    if (d->timers == NULL)
        return -1;
    double first = d->timers->at;
    for (px_coll_timer *t = d->timers; t != NULL; t = t->next)
        if (t->at < first)
            first = t->at;
    double ms = (first - now_s()) * 1000.0;
    return ms <= 0 ? 0 : (int)ms + 1;
}

void coll_timers(pmixd_ctx *d)
{
    for (;;) {
        double t0 = now_s();
        px_coll_timer **pp = &d->timers;
        while (*pp != NULL && (*pp)->at > t0)
            pp = &(*pp)->next;
        if (*pp == NULL)
            break;
        px_coll_timer *t = *pp;
        *pp = t->next;
        t->cb(t->arg);
        free(t);
    }
}

/* ---- life ---- */

static const char *node_name(void *ctx, uint32_t node)
{
    return ((pmixd_ctx *)ctx)->j.node_names[node];
}

int coll_init(pmixd_ctx *d)
{
    job *j = &d->j;
    g_d = d;
    j->fence_fn = up_fence;
    j->dmodex_fn = up_dmodex;
    d->map = (px_jobmap){.nspace = j->nspace,
                         .nprocs = (uint32_t)j->nprocs,
                         .nnodes = (uint32_t)j->nnodes,
                         .rank_node = j->rank_node,
                         .node_name = node_name,
                         .ctx = d};
    px_hc_config cfg = {
        .node = (uint32_t)d->node,
        .job = &d->map,
        .fence_algo = getenv(PX_COLL_ENV_FENCE),
        .barrier_algo = getenv(PX_COLL_ENV_BARRIER),
        .dmx_tries = d->dmdx_tries,
    };
    d->hc = px_hc_create(&hc_ops, d, &cfg);
    if (d->hc == NULL) {
        fprintf(stderr, "pmixd %s: out of memory\n", j->hostname);
        return -1;
    }
    return 0;
}

void coll_fini(pmixd_ctx *d)
{
    px_hc_destroy(d->hc);
    d->hc = NULL;
    while (d->timers != NULL) {
        px_coll_timer *t = d->timers;
        d->timers = t->next;
        free(t);
    }
    pthread_mutex_lock(&d->qmu);
    inbox_item *it = d->qhead;
    d->qhead = d->qtail = NULL;
    pthread_mutex_unlock(&d->qmu);
    while (it != NULL) {
        inbox_item *next = it->next;
        free_item(it);
        it = next;
    }
}
