/*
 * simfence.c - what crosses simulated nodes: the host core's px_hc
 * (hostcore/px_hostcore.h) on SimGrid. Fences (one px_coll per
 * participant set, the per-set queue, failing in step), the news of a dead
 * or departed process (simnode.c calls px_hc_departed when a process that
 * finalized ends), lost nodes and direct modex are the core's; this file gives it
 * mailboxes, simulated time and the server engine, and takes its
 * measurements (simnode.c is the node).
 *
 * Messages. A px_hc message travels as one MSG_HC (tag: the collective's
 * epoch, for the plane a message prefers; planes.c), charged to the
 * network as the core says it stands for: a collective message at its
 * size with the bytes it carries (px_coll's sizes_only below), the news of
 * a death at a px_coll header, that of a departure at its length (the
 * epochs it names), a direct modex request at 64 bytes and an
 * answer at 32 bytes and its data. A send that fails (the peer's host is
 * off, a link is cut) counts as that peer failing.
 *
 * Collected data exists once per run. Every node's allgather result is
 * the same bytes (the nodes' contributions in member order), so the core
 * runs px_coll with sizes_only: its messages carry the blocks' lengths and
 * are charged at their full size, and the bytes wait aside in a sim_share,
 * keyed by (set, epoch): each node puts its contribution there as it
 * starts, the first node to complete concatenates them, and every node
 * hands the host's callback that one buffer, which the server passes on to
 * its clients by reference (region_wrap). 4,096 nodes x 16 processes
 * collecting 256 B each is then 20 MB in all, not 20 MB per node.
 *
 * The algorithm is the fence's own pmixlab.*.algo key when the server
 * passes it on, else pmixsim's --algo (or the environment's
 * PMIXLAB_FENCE_ALGO / PMIXLAB_BARRIER_ALGO), else auto; fences without a
 * PMIX_TIMEOUT get --coll-timeout. Failures (docs/simulation.md,
 * "Faults") follow the core's rule, pmixd's: once a process of the job
 * has died, every cross-node fence of the job fails.
 */
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"
#include "px_hc_engine.h"
#include "px_hostcore.h"

#define DMX_REQ_BYTES 64 /* simulated size of a direct modex request */
#define DMX_RESP_HDR 32  /* and of an answer's header */
/* How long the news of departures waits at a node (simulated seconds), so
 * that what it learned from many nodes goes on in one message per child
 * (px_hc_config.news_window; docs/simulation.md, "Departures"). A node's
 * blocking sends make most of the batches: news queues while it sends.
 * 100 ns adds about 0.2 us per hop; a window of a nanosecond or less is
 * not kept exactly by SimGrid's clock and cost more.
 *
 * Sanitized builds send at once (0): there SimGrid runs actors as threads
 * (main.c), and with a window the end of a 2 x 2 run deadlocked every
 * time: a node's wait that expired for the window's timer left its
 * pending receive unable to take a process's later MSG_CLOSE, so that
 * process never ended (not seen with ucontexts, nor with thread contexts
 * in a plain build; not understood yet). Their runs then pass on news at
 * the end of each call, as pmixd does. */
#ifdef __SANITIZE_ADDRESS__
#define SIM_NEWS_WINDOW 0.0
#else
#define SIM_NEWS_WINDOW 100e-9
#endif

double sim_news_window(void)
{
    return SIM_NEWS_WINDOW;
}

/* ---- px_hc ops ---- */

/* Send a message of the host core of job `job` (0: the run's, else a
 * spawned job's index: the receiver's MSG_HC status). */
static pmix_status_t hc_send_job(sim_node *n, uint32_t job, uint32_t node, void *msg, size_t len,
                                 const px_hc_sent *what)
{
    sim_run *run = n->ep.run;
    double wire = (double)what->wire;
    sim_msg *m;

    if (what->kind == PX_HC_COLL && what->type == 1) {
        sim_fstat *f = sim_fstat_get(run, what->set, what->epoch, false);
        if (f != NULL) {
            f->msgs++;
            f->bytes += what->wire;
        }
    }
    if (what->kind == PX_HC_DEPARTED && len >= 5) {
        const uint8_t *b = msg; /* u8 kind, u32 records (hc.c) */
        run->depart_msgs++;
        run->depart_recs +=
            (uint32_t)b[1] | (uint32_t)b[2] << 8 | (uint32_t)b[3] << 16 | (uint32_t)b[4] << 24;
    }
    if (what->kind == PX_HC_BROKEN)
        wire = PX_COLL_HDR_SIZE;
    else if (what->kind == PX_HC_DMX_REQ)
        wire = DMX_REQ_BYTES;
    else if (what->kind == PX_HC_DMX_REP)
        wire = DMX_RESP_HDR + (double)what->wire;
    m = sim_msg_new(MSG_HC, msg, len);
    m->from = n->id;
    m->tag = what->kind == PX_HC_COLL ? what->epoch : 0;
    m->status = (pmix_status_t)job;
    if (sim_send(&run->nodes[node].ep, m, wire) != 0)
        return PMIX_ERR_UNREACH;
    return PMIX_SUCCESS;
}

static pmix_status_t hc_send(void *ctx, uint32_t node, void *msg, size_t len,
                             const px_hc_sent *what)
{
    return hc_send_job(ctx, 0, node, msg, len, what);
}

struct px_coll_timer {
    struct px_timer *t;
};

typedef struct hc_tmr {
    struct px_coll_timer handle;
    void (*cb)(void *);
    void *arg;
} hc_tmr;

static void hc_timer_fire(void *arg)
{
    hc_tmr *ct = arg;
    void (*cb)(void *) = ct->cb;
    void *cbarg = ct->arg;

    free(ct);
    cb(cbarg);
}

static px_coll_timer *hc_timer_start(void *ctx, double seconds, void (*cb)(void *), void *arg)
{
    sim_node *n = ctx;
    hc_tmr *ct = calloc(1, sizeof(*ct));

    if (ct == NULL)
        return NULL;
    ct->cb = cb;
    ct->arg = arg;
    ct->handle.t = sim_timer_add(&n->ep, seconds, hc_timer_fire, ct);
    if (ct->handle.t == NULL) {
        free(ct);
        return NULL;
    }
    return &ct->handle;
}

static void hc_timer_cancel(void *ctx, px_coll_timer *timer)
{
    sim_node *n = ctx;
    hc_tmr *ct = (hc_tmr *)timer;

    sim_timer_cancel(&n->ep, ct->handle.t);
    free(ct);
}

static double hc_now(void *ctx)
{
    return sgw_now();
}

static pmix_status_t hc_dmodex_local(void *ctx, const pmix_proc_t *proc,
                                     pmix_dmodex_response_fn_t cb, void *cbdata)
{
    return px_server_dmodex_request(((sim_node *)ctx)->srv, proc, cb, cbdata);
}

static void hc_log(void *ctx, const char *line)
{
    sim_node *n = ctx;
    sim_logf(n->ep.run, "node %u: %s", n->id, line);
}

static const px_coll_groups *hc_groups(void *ctx, const uint32_t *members, uint32_t n,
                                       px_coll_groups **owned)
{
    return sim_net_groups(((sim_node *)ctx)->ep.run, members, n, owned);
}

static void hc_fence_start(void *ctx, const px_hc_fence_info *fi)
{
    sim_node *n = ctx;
    sim_run *run = n->ep.run;
    sim_fstat *st = sim_fstat_get(run, fi->set, fi->epoch, true);

    if (st != NULL) {
        if (st->nstart == 0) {
            const char *want = fi->kind == PX_COLL_ALLGATHER ? run->fence_algo : run->barrier_algo;
            st->kind = fi->kind;
            st->nnodes = fi->nmembers;
            st->t_first_start = sgw_now();
            if (fi->resolved != NULL) {
                st->resolved = *fi->resolved;
                px_coll_choice_format(&st->resolved, st->algo, sizeof(st->algo));
            } else {
                snprintf(st->algo, sizeof(st->algo), "%s", want[0] ? want : "auto");
            }
        }
        st->nstart++;
        st->contrib += fi->contrib;
        st->t_last_start = sgw_now();
    }
    sim_event(run, "fence-start\tnode %u\tset %llx epoch %u", n->id, (unsigned long long)fi->set,
              fi->epoch);
}

static void hc_fence_end(void *ctx, const px_hc_fence_info *fi, pmix_status_t status)
{
    sim_node *n = ctx;
    sim_run *run = n->ep.run;
    sim_fstat *st = sim_fstat_get(run, fi->set, fi->epoch, false);

    if (st != NULL) {
        st->nend++;
        if (status != PMIX_SUCCESS) {
            st->nfail++;
            st->status = status;
        }
        st->t_last_end = sgw_now();
        if (st->nend == st->nnodes) {
            sim_progress(run, st);
            if (run->nkjobs > 0)
                sim_spawn_fence_done(run, st);
        }
    }
    if (status != PMIX_SUCCESS && run->nfaults == 0)
        sim_logf(run, "node %u: fence on %u nodes failed: %s", n->id, fi->nmembers,
                 PMIx_Error_string(status));
    sim_event(run, "fence-end\tnode %u\tset %llx epoch %u\t%s", n->id, (unsigned long long)fi->set,
              fi->epoch, status == PMIX_SUCCESS ? "ok" : PMIx_Error_string(status));
}

static void hc_broken(void *ctx, const char *why)
{
    sim_node *n = ctx;

    n->broken = true;
    sim_event(n->ep.run, "broken\tnode %u\t%s", n->id, why);
}

/* ---- collected data, once per run ---- */

typedef struct sim_share {
    struct sim_share *next;
    uint64_t id;
    uint32_t epoch, n;
    uint32_t ended; /* members whose epoch ended (the run's hold goes at n) */
    void **data;    /* contributions by member, until the result is built */
    size_t *len;
    uint8_t *result;
    size_t size;
    bool built;
    int refs; /* the run's table, and each host callback given the result */
} sim_share;

static sim_share *share_get(sim_run *run, uint64_t id, uint32_t epoch, uint32_t n)
{
    sim_share *sh;

    for (sh = run->shares; sh != NULL; sh = sh->next)
        if (sh->id == id && sh->epoch == epoch)
            return sh;
    sh = calloc(1, sizeof(*sh));
    if (sh == NULL || (sh->data = calloc(n, sizeof(*sh->data))) == NULL ||
        (sh->len = calloc(n, sizeof(*sh->len))) == NULL) {
        fprintf(stderr, "pmixsim: out of memory\n");
        abort();
    }
    sh->id = id;
    sh->epoch = epoch;
    sh->n = n;
    sh->refs = 1;
    sh->next = run->shares;
    run->shares = sh;
    return sh;
}

static void share_unref(void *arg)
{
    sim_share *sh = arg;

    if (--sh->refs > 0)
        return;
    for (uint32_t i = 0; i < sh->n; i++)
        free(sh->data[i]);
    free(sh->data);
    free(sh->len);
    free(sh->result);
    free(sh);
}

/* One member of the share's set ended its epoch: once all have, the
 * run's table lets go (callbacks still holding the result keep it). */
static void share_ended(sim_run *run, sim_share *sh)
{
    if (++sh->ended < sh->n)
        return;
    for (sim_share **pp = &run->shares; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == sh) {
            *pp = sh->next;
            break;
        }
    }
    share_unref(sh);
}

/* The result, built by the first member to complete: the contributions in
 * member order, which must match px_coll's offsets. */
static pmix_status_t share_build(sim_share *sh, const px_coll_result *res)
{
    size_t at = 0;

    if (sh->built)
        return sh->size == res->size ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
    if (res->nmembers != sh->n)
        return PMIX_ERR_BAD_PARAM;
    for (uint32_t i = 0; i < sh->n; i++)
        if (res->offsets[i + 1] - res->offsets[i] != sh->len[i])
            return PMIX_ERR_BAD_PARAM;
    if (res->size > 0 && (sh->result = malloc(res->size)) == NULL)
        return PMIX_ERR_NOMEM;
    for (uint32_t i = 0; i < sh->n; i++) {
        if (sh->len[i] > 0)
            memcpy(sh->result + at, sh->data[i], sh->len[i]);
        at += sh->len[i];
        free(sh->data[i]);
        sh->data[i] = NULL;
    }
    sh->size = res->size;
    sh->built = true;
    return PMIX_SUCCESS;
}

void sim_shares_fini(sim_run *run)
{
    while (run->shares != NULL) {
        sim_share *sh = run->shares;
        run->shares = sh->next;
        share_unref(sh);
    }
}

static void hc_share_put(void *ctx, uint64_t set, uint32_t epoch, uint32_t nmembers, uint32_t me,
                         void *data, size_t len)
{
    sim_share *sh = share_get(((sim_node *)ctx)->ep.run, set, epoch, nmembers);

    free(sh->data[me]);
    sh->data[me] = data;
    sh->len[me] = len;
}

static pmix_status_t hc_share_result(void *ctx, uint64_t set, uint32_t epoch,
                                     const px_coll_result *res, char **data,
                                     pmix_release_cbfunc_t *release, void **arg)
{
    sim_share *sh = share_get(((sim_node *)ctx)->ep.run, set, epoch, res->nmembers);
    pmix_status_t rc = share_build(sh, res);

    if (rc != PMIX_SUCCESS)
        return rc;
    sh->refs++; /* the host callback's, until the server releases it */
    *data = (char *)sh->result;
    *release = share_unref;
    *arg = sh;
    return PMIX_SUCCESS;
}

static void hc_share_ended(void *ctx, uint64_t set, uint32_t epoch, uint32_t nmembers)
{
    sim_run *run = ((sim_node *)ctx)->ep.run;
    share_ended(run, share_get(run, set, epoch, nmembers));
}

static uint64_t hc_ctxid(void *ctx)
{
    return px_ctxid_next(&((sim_node *)ctx)->ctxids);
}

static const px_hc_ops hc_ops = {
    .version = PX_HC_OPS_VERSION,
    .send = hc_send,
    .timer_start = hc_timer_start,
    .timer_cancel = hc_timer_cancel,
    .now = hc_now,
    .dmodex_local = hc_dmodex_local,
    .ctxid = hc_ctxid,
    .log = hc_log,
    .groups = hc_groups,
    .fence_start = hc_fence_start,
    .fence_end = hc_fence_end,
    .broken = hc_broken,
    .share_put = hc_share_put,
    .share_result = hc_share_result,
    .share_ended = hc_share_ended,
};

/* ---- a spawned job's host core on a node ---- */

/* The ops of a spawned job's px_hc: the node's, with the job's index on
 * its messages; no groups (its sets are not the run's nodes), and a death
 * among its processes breaks only that job's core. */
typedef struct sim_khc kid_ctx;

static pmix_status_t khc_send(void *ctx, uint32_t node, void *msg, size_t len,
                              const px_hc_sent *what)
{
    kid_ctx *c = ctx;
    return hc_send_job(c->n, c->k->idx, node, msg, len, what);
}

static px_coll_timer *khc_timer_start(void *ctx, double seconds, void (*cb)(void *), void *arg)
{
    return hc_timer_start(((kid_ctx *)ctx)->n, seconds, cb, arg);
}

static void khc_timer_cancel(void *ctx, px_coll_timer *timer)
{
    hc_timer_cancel(((kid_ctx *)ctx)->n, timer);
}

static pmix_status_t khc_dmodex_local(void *ctx, const pmix_proc_t *proc,
                                      pmix_dmodex_response_fn_t cb, void *cbdata)
{
    return hc_dmodex_local(((kid_ctx *)ctx)->n, proc, cb, cbdata);
}

static uint64_t khc_ctxid(void *ctx)
{
    return hc_ctxid(((kid_ctx *)ctx)->n);
}

static void khc_log(void *ctx, const char *line)
{
    kid_ctx *c = ctx;
    sim_logf(c->n->ep.run, "node %u: %s: %s", c->n->id, c->k->nspace, line);
}

static void khc_fence_start(void *ctx, const px_hc_fence_info *fi)
{
    hc_fence_start(((kid_ctx *)ctx)->n, fi);
}

static void khc_fence_end(void *ctx, const px_hc_fence_info *fi, pmix_status_t status)
{
    hc_fence_end(((kid_ctx *)ctx)->n, fi, status);
}

static void khc_broken(void *ctx, const char *why)
{
    kid_ctx *c = ctx;
    sim_event(c->n->ep.run, "broken\tnode %u\t%s: %s", c->n->id, c->k->nspace, why);
}

static void khc_share_put(void *ctx, uint64_t set, uint32_t epoch, uint32_t nmembers, uint32_t me,
                          void *data, size_t len)
{
    hc_share_put(((kid_ctx *)ctx)->n, set, epoch, nmembers, me, data, len);
}

static pmix_status_t khc_share_result(void *ctx, uint64_t set, uint32_t epoch,
                                      const px_coll_result *res, char **data,
                                      pmix_release_cbfunc_t *release, void **arg)
{
    return hc_share_result(((kid_ctx *)ctx)->n, set, epoch, res, data, release, arg);
}

static void khc_share_ended(void *ctx, uint64_t set, uint32_t epoch, uint32_t nmembers)
{
    hc_share_ended(((kid_ctx *)ctx)->n, set, epoch, nmembers);
}

static const px_hc_ops khc_ops = {
    .version = PX_HC_OPS_VERSION,
    .send = khc_send,
    .timer_start = khc_timer_start,
    .timer_cancel = khc_timer_cancel,
    .now = hc_now,
    .dmodex_local = khc_dmodex_local,
    .ctxid = khc_ctxid,
    .log = khc_log,
    .fence_start = khc_fence_start,
    .fence_end = khc_fence_end,
    .broken = khc_broken,
    .share_put = khc_share_put,
    .share_result = khc_share_result,
    .share_ended = khc_share_ended,
};

int sim_hc_create_job(struct sim_khc *c)
{
    sim_run *run = c->n->ep.run;
    px_hc_config cfg = {
        .node = c->n->id,
        .job = &c->k->map,
        .fence_algo = run->fence_algo,
        .barrier_algo = run->barrier_algo,
        .coll_timeout = run->opt.coll_timeout,
        .sizes_only = true,
        .news_window = SIM_NEWS_WINDOW,
    };

    c->hc = px_hc_create(&khc_ops, c, &cfg);
    return c->hc != NULL ? 0 : -1;
}

/* ---- the node's side ---- */

int sim_hc_create(sim_node *n)
{
    sim_run *run = n->ep.run;
    px_hc_config cfg = {
        .node = n->id,
        .job = &run->map,
        .fence_algo = run->fence_algo,
        .barrier_algo = run->barrier_algo,
        .coll_timeout = run->opt.coll_timeout,
        .sizes_only = true, /* the bytes go through a sim_share */
        .news_window = SIM_NEWS_WINDOW,
    };

    n->ctxids.node = n->id;
    n->hc = px_hc_create(&hc_ops, n, &cfg);
    return n->hc != NULL ? 0 : -1;
}

pmix_status_t sim_host_fence(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                             const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                             pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    px_hc *hc = sim_hc_of_procs(hctx, procs, nprocs);

    if (hc == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return px_hc_fence(hc, procs, nprocs, info, ninfo, data, ndata, cbfunc, cbdata);
}

pmix_status_t sim_host_dmodex(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                              size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    px_hc *hc = sim_hc_of_nspace(hctx, proc->nspace);

    if (hc == NULL)
        return PMIX_ERR_NOT_FOUND;
    return px_hc_dmodex(hc, proc, info, ninfo, cbfunc, cbdata);
}

pmix_status_t sim_host_group(void *hctx, const px_group_req *req, px_group_cbfunc_t cbfunc,
                             void *cbdata)
{
    px_hc *hc = sim_hc_of_procs(hctx, req->procs, req->nprocs);

    if (hc == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return px_hc_group_upcall(hc, req, cbfunc, cbdata);
}

void sim_node_lost(sim_node *n, uint32_t dead)
{
    sim_event(n->ep.run, "detect\tnode %u\tnode %u is gone", n->id, dead);
    px_hc_node_lost(n->hc, dead);
}
