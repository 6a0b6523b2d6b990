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
 * One thread. The server engine's fence_nb and direct_modex upcalls
 * (px_server_host functions whose context is the daemon, installed as the
 * job's `cross` table) and the answers of the local direct modex requests
 * (job_dmodex_request) come on the main thread, inside a turn of the loop
 * (pmixd.h): they hand what they were given to the core at once, without
 * a copy, and the core may complete them before they return.
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
#include "px_hc_engine.h"
#include "px_hostcore.h"
#include "pmixd_proto.h"

/* ---- upcalls (the main thread, inside a turn of the loop) ---- */

static pmix_status_t up_fence(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    pmixd_ctx *d = hctx;
    if (d->stopping || d->hc == NULL) {
        cbfunc(PMIX_ERR_PROC_TERM_WO_SYNC, NULL, 0, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    return px_hc_fence(d->hc, procs, nprocs, info, ninfo, data, ndata, cbfunc, cbdata);
}

static pmix_status_t up_dmodex(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                               size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    pmixd_ctx *d = hctx;
    if (d->hc == NULL)
        return PMIX_ERR_NOT_FOUND;
    return px_hc_dmodex(d->hc, proc, info, ninfo, cbfunc, cbdata);
}

static pmix_status_t up_group(void *hctx, const px_group_req *req, px_group_cbfunc_t cbfunc,
                              void *cbdata)
{
    pmixd_ctx *d = hctx;
    if (d->stopping || d->hc == NULL) {
        cbfunc(PMIX_GROUP_MEMBER_FAILED, false, 0, NULL, 0, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    return px_hc_group_upcall(d->hc, req, cbfunc, cbdata);
}

/* A client's event for the other nodes: to pmixrun, which sends it on to
 * every other daemon (pmixrun_events.c). */
static void up_notify(void *hctx, pmix_status_t status, const pmix_proc_t *source,
                      pmix_data_range_t range, const pmix_info_t info[], size_t ninfo)
{
    pmixd_ctx *d = hctx;
    tl_buf b = {0};
    if (d->stopping || d->j.nnodes < 2)
        return;
    if (events_pack(&b, status, source, range, info, ninfo) == 0)
        tl_send(&d->parent, PD_EVENT, &b);
    else
        fprintf(stderr, "pmixd %s: cannot pack an event of %s:%u for the other nodes\n",
                d->j.hostname, source->nspace, (unsigned)source->rank);
    tl_buf_free(&b);
}

/* Job control's signal for `ranks`, which may live on any node: to pmixrun,
 * which sends it to every daemon (pmixrun_jctrl.c). */
static pmix_status_t jctrl_up(void *ctx, int sig, const uint32_t *ranks, size_t n)
{
    pmixd_ctx *d = ctx;
    tl_buf b = {0};
    int rc;
    if (d->stopping)
        return PMIX_ERR_PROC_TERM_WO_SYNC; /* the job is ending */
    jctrl_pack(&b, sig, ranks, n);
    rc = tl_send(&d->parent, PD_JCTRL, &b);
    tl_buf_free(&b);
    return rc == 0 ? PMIX_SUCCESS : rc == TL_ENOMEM ? PMIX_ERR_NOMEM : PMIX_ERR_UNREACH;
}

/* What the job's server table hands pmixd (job.cross). */
static const px_server_host cross_host = {
    .version = PX_SERVER_HOST_VERSION,
    .fence_nb = up_fence,
    .direct_modex = up_dmodex,
    .group = up_group,
    .notify_event = up_notify,
};

/* ---- the core's operations ---- */

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

/* The server answers on this thread, maybe before this returns: straight
 * to the core, which allows that. */
static pmix_status_t hc_dmodex_local(void *ctx, const pmix_proc_t *proc,
                                     pmix_dmodex_response_fn_t cb, void *cbdata)
{
    pmixd_ctx *d = ctx;
    return job_dmodex_request(&d->j, proc, cb, cbdata);
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

/* The groups' context ids this daemon makes, as node `d->node`: unique
 * in the daemon set without asking anyone (px_ctxid_next). */
static uint64_t hc_ctxid(void *ctx)
{
    pmixd_ctx *d = ctx;
    return px_ctxid_next(&d->ctxids);
}

/* The hier groups of a fence's nodes, from the network's coordinates as
 * pmixrun sent them (pmixrun_net.c): by leaf switch, then by the switches
 * above, marked switched so that auto may pick hier, as pmixsim does.
 * The flat default (no description) gives none: one flat group. */
static const px_coll_groups *hc_groups(void *ctx, const uint32_t *members, uint32_t n,
                                       px_coll_groups **owned)
{
    pmixd_ctx *d = ctx;
    *owned = NULL;
    if (!d->j.net_loaded || d->j.net.flat)
        return NULL;
    return *owned = px_netmap_groups(&d->j.net, members, n);
}

static const px_hc_ops hc_ops = {
    .version = PX_HC_OPS_VERSION,
    /* the mesh, the daemon's timer list, the clock */
    .send = hc_send,
    .drop = hc_drop,
    .now = hc_now,
    .timer_start = hc_timer_start,
    .timer_cancel = hc_timer_cancel,
    /* this node's server, groups' ids, the daemon's stderr */
    .dmodex_local = hc_dmodex_local,
    .ctxid = hc_ctxid,
    .groups = hc_groups,
    .log = hc_log,
    .fence_end = hc_fence_end,
};

/* ---- what the daemon learns ---- */

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
    j->cross = &cross_host;
    j->cross_ctx = d;
    j->jctrl_up = jctrl_up;
    j->jctrl_ctx = d;
    j->spawn = spawnd_up; /* to pmixrun (pmixd_spawn.c) */
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
    d->ctxids.node = (uint32_t)d->node;
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
}
