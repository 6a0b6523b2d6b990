/*
 * simfence.c - the simulated nodes' fences: the cross-node collective a
 * node runs for each fence_nb upcall of its server (simnode.c is the node,
 * simdmx.c its direct modex).
 *
 * Fences. The server engine aggregates the node's participants and makes
 * one fence_nb upcall per fence. The host runs a px_coll collective among
 * the nodes that host participants: a barrier, or an allgather of the
 * nodes' records when the fence collects data. Each distinct participant
 * set is one px_coll among the nodes that host its participants (the host
 * core's px_fence_set: its id a hash of the ranks, run->all_id for the
 * whole job), created on first use; messages for a collective a node has
 * not created yet wait in `early`, but for the whole job's, which a node
 * creates when the first message comes. Fences on one px_coll run one
 * after the other, in the order of their upcalls (the same order on every
 * node, as the Standard requires of back-to-back fences); a fence whose
 * local participants failed or timed out here still takes its epoch, only
 * to fail it on every node (px_coll_start_failed). The algorithm is
 * chosen with px_coll_choose: the fence's own pmixlab.*.algo key when the
 * server passes it on, else pmixsim's --algo (or the environment's
 * PMIXLAB_FENCE_ALGO / PMIXLAB_BARRIER_ALGO), else auto. A choice this
 * node cannot run (a key naming no usable algorithm, which the other
 * nodes may not share) fails the fence the same way, with
 * PMIX_ERR_BAD_PARAM: the epoch is taken and failed, never skipped, so
 * the nodes stay in step.
 *
 * Collected data exists once per run. Every node's allgather result is
 * the same bytes (the nodes' contributions in member order), so the
 * px_coll run with sizes_only: its messages carry the blocks' lengths and
 * are charged to the network at their full size (coll_send_sized), and
 * the bytes wait aside in a sim_share, keyed by (set, epoch): each node
 * puts its contribution there as it starts, the first node to complete
 * concatenates them, and every node hands the host's callback that one
 * buffer, which the server passes on to its clients by reference
 * (region_wrap). 4,096 nodes x 16 processes collecting 256 B each is
 * then 20 MB in all, not 20 MB per node.
 *
 * Failures (docs/simulation.md, "Faults"), the rule of pmixd: once a
 * process of the job has died, every cross-node fence of the job fails.
 * A node whose process died, or that learns of a dead node, *breaks*
 * (sim_node_break): its running fence is answered at once with
 * PMIX_ERR_PROC_TERM_WO_SYNC (the px_coll goes on until it ends, so that
 * it still answers its peers), its queued fences fail, and so does every
 * later one. A process's death also travels to the other nodes as
 * MSG_BROKEN notices; a dead node is reported to the px_coll of every set
 * it belongs to (px_coll_peer_failed), which fails the running collective
 * there and floods an ABORT notice to its members. A send that fails (the
 * peer's host is off, a link is cut) counts as that peer failing.
 */
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"
#include "px_hostcore.h"

typedef struct sim_fence {
    struct sim_fence *next;
    px_coll_kind kind;
    void *data;
    size_t ndata;
    double timeout;
    char algo[64]; /* the fence's own choice (PX_COLL_KEY_*), "" if none */
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
    bool answered;            /* the node broke while it ran: the server has its answer */
    pmix_status_t local_fail; /* a local participant failed: fail this epoch */
} sim_fence;

struct sim_coll {
    sim_coll *next;
    sim_node *node;
    uint64_t id;
    uint32_t n, me;
    uint32_t *members; /* node ids, sorted; NULL: every node, member i is node i */
    px_coll *c;
    px_coll_groups *groups; /* hier groups of a subset of nodes (coords.c), or NULL */
    sim_fence *queue;       /* waiting to start, FIFO */
    sim_fence *running;
};

static uint32_t node_of_member(const sim_coll *sc, uint32_t m)
{
    return sc->members != NULL ? sc->members[m] : m;
}

static bool member_of_node(const sim_coll *sc, uint32_t node, uint32_t *m)
{
    uint32_t lo = 0, hi = sc->n;

    if (sc->members == NULL) {
        *m = node;
        return node < sc->n;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (sc->members[mid] == node) {
            *m = mid;
            return true;
        }
        if (sc->members[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* ---- px_coll ops ---- */

struct px_coll_timer {
    struct px_timer *t;
};

/* A px_coll message of `len` bytes that stands for `wire` bytes (the
 * contributions' bytes are in the sim_share): the network carries `wire`. */
static pmix_status_t coll_send_sized(void *ctx, uint32_t to, void *msg, size_t len, size_t wire)
{
    sim_coll *sc = ctx;
    sim_run *run = sc->node->ep.run;
    px_coll_msg_info h;
    sim_msg *m;

    if (to >= sc->n) {
        free(msg);
        return PMIX_ERR_BAD_PARAM;
    }
    if (px_coll_msg_peek(msg, len, &h) == PMIX_SUCCESS && h.type == 1) {
        sim_fstat *f = sim_fstat_get(run, sc->id, h.epoch, false);
        if (f != NULL) {
            f->msgs++;
            f->bytes += wire;
        }
    }
    m = sim_msg_new(MSG_COLL, msg, len);
    m->from = sc->node->id;
    if (sim_send(&run->nodes[node_of_member(sc, to)].ep, m, (double)wire) != 0)
        return PMIX_ERR_UNREACH; /* px_coll counts `to` failed */
    return PMIX_SUCCESS;
}

static pmix_status_t coll_send(void *ctx, uint32_t to, void *msg, size_t len)
{
    return coll_send_sized(ctx, to, msg, len, len);
}

typedef struct coll_tmr {
    struct px_coll_timer handle;
    void (*cb)(void *);
    void *arg;
} coll_tmr;

static void coll_timer_fire(void *arg)
{
    coll_tmr *ct = arg;
    void (*cb)(void *) = ct->cb;
    void *cbarg = ct->arg;

    free(ct);
    cb(cbarg);
}

static px_coll_timer *coll_timer_start(void *ctx, double seconds, void (*cb)(void *), void *arg)
{
    sim_coll *sc = ctx;
    coll_tmr *ct = calloc(1, sizeof(*ct));

    if (ct == NULL)
        return NULL;
    ct->cb = cb;
    ct->arg = arg;
    ct->handle.t = sim_timer_add(&sc->node->ep, seconds, coll_timer_fire, ct);
    if (ct->handle.t == NULL) {
        free(ct);
        return NULL;
    }
    return &ct->handle;
}

static void coll_timer_cancel(void *ctx, px_coll_timer *timer)
{
    sim_coll *sc = ctx;
    coll_tmr *ct = (coll_tmr *)timer;

    sim_timer_cancel(&sc->node->ep, ct->handle.t);
    free(ct);
}

static double coll_now(void *ctx)
{
    return sgw_now();
}

static const px_coll_ops coll_ops = {
    .version = PX_COLL_OPS_VERSION,
    .send = coll_send,
    .timer_start = coll_timer_start,
    .timer_cancel = coll_timer_cancel,
    .now = coll_now,
    .send_sized = coll_send_sized,
};

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

/* ---- collectives ---- */

static void deliver_coll(sim_coll *sc, sim_msg *m)
{
    uint32_t from;

    if (member_of_node(sc, m->from, &from))
        (void)px_coll_deliver(sc->c, from, m->data, m->len);
    sim_msg_free(m);
}

static sim_coll *coll_create(sim_node *n, uint64_t id, uint32_t *members, uint32_t count)
{
    sim_coll *sc = calloc(1, sizeof(*sc));
    px_coll_config cfg;

    if (sc == NULL)
        return NULL;
    sc->node = n;
    sc->id = id;
    sc->n = count;
    sc->members = members;
    if (!member_of_node(sc, n->id, &sc->me)) {
        free(sc);
        return NULL;
    }
    memset(&cfg, 0, sizeof(cfg));
    cfg.id = id;
    cfg.nmembers = count;
    cfg.me = sc->me;
    cfg.groups = sim_net_groups(n->ep.run, members, count, &sc->groups);
    cfg.sizes_only = true; /* the bytes go through a sim_share */
    sc->c = px_coll_create(&coll_ops, sc, &cfg);
    if (sc->c == NULL) {
        px_coll_groups_destroy(sc->groups);
        free(sc);
        return NULL;
    }
    sc->next = n->colls;
    n->colls = sc;
    /* Messages that came before we knew of this collective. */
    for (sim_msg **pp = &n->early; *pp != NULL;) {
        sim_msg *m = *pp;
        px_coll_msg_info h;
        if (px_coll_msg_peek(m->data, m->len, &h) == PMIX_SUCCESS && h.id == id) {
            *pp = m->next;
            deliver_coll(sc, m);
        } else {
            pp = &m->next;
        }
    }
    return sc;
}

static void start_next(sim_coll *sc);

/* This node's part of the running collective ended with `status`: count
 * it in the fence's measurements and the event log. */
static void count_end(sim_coll *sc, pmix_status_t status)
{
    sim_run *run = sc->node->ep.run;
    sim_fstat *st = sim_fstat_get(run, sc->id, px_coll_epoch(sc->c), false);

    if (st != NULL) {
        st->nend++;
        if (status != PMIX_SUCCESS) {
            st->nfail++;
            st->status = status;
        }
        st->t_last_end = sgw_now();
        if (st->nend == st->nnodes)
            sim_progress(run, st);
    }
    if (status != PMIX_SUCCESS && run->nfaults == 0)
        sim_logf(run, "node %u: fence on %u nodes failed: %s", sc->node->id, sc->n,
                 PMIx_Error_string(status));
    sim_event(run, "fence-end\tnode %u\tset %llx epoch %u\t%s", sc->node->id,
              (unsigned long long)sc->id, px_coll_epoch(sc->c),
              status == PMIX_SUCCESS ? "ok" : PMIx_Error_string(status));
}

static void fence_done(pmix_status_t status, px_coll_result *res, void *cbdata)
{
    sim_coll *sc = cbdata;
    sim_run *run = sc->node->ep.run;
    sim_fence *f = sc->running;
    sim_share *sh = NULL;

    sc->running = NULL;
    if (f != NULL && f->kind == PX_COLL_ALLGATHER)
        sh = share_get(run, sc->id, px_coll_epoch(sc->c), sc->n);
    if (f != NULL && f->answered) {
        /* sim_node_break answered it and counted it: only free it. */
        if (sh != NULL)
            share_ended(run, sh);
        free(f->data);
        free(f);
        start_next(sc);
        return;
    }
    if (status == PMIX_SUCCESS && sh != NULL && res != NULL) {
        pmix_status_t rc = share_build(sh, res);
        if (rc != PMIX_SUCCESS) {
            sim_logf(run,
                     "node %u: collected data of %zu bytes does not match the"
                     " contributions: %s",
                     sc->node->id, res->size, PMIx_Error_string(rc));
            status = rc;
        }
    }
    count_end(sc, status);
    if (f != NULL) {
        if (status == PMIX_SUCCESS && sh != NULL && sh->size > 0) {
            sh->refs++; /* the host callback's, until the server releases it */
            f->cbfunc(status, (char *)sh->result, sh->size, f->cbdata, share_unref, sh);
        } else {
            f->cbfunc(status, NULL, 0, f->cbdata, NULL, NULL);
        }
        free(f->data);
        free(f);
    }
    if (sh != NULL)
        share_ended(run, sh);
    start_next(sc);
}

static void start_next(sim_coll *sc)
{
    sim_run *run = sc->node->ep.run;

    while (sc->running == NULL && sc->queue != NULL) {
        sim_fence *f = sc->queue;
        px_coll_args args;
        char err[256];
        const char *want = f->kind == PX_COLL_ALLGATHER ? run->fence_algo : run->barrier_algo;
        pmix_status_t rc;
        sim_fstat *st;
        uint32_t epoch = px_coll_epoch(sc->c) + 1;

        sc->queue = f->next;
        memset(&args, 0, sizeof(args));
        args.kind = f->kind;
        args.timeout = f->timeout > 0 ? f->timeout : run->opt.coll_timeout;
        err[0] = '\0';
        rc = px_coll_choose(f->kind, f->algo[0] ? f->algo : NULL, want[0] ? want : NULL,
                            &args.choice, err, sizeof(err));
        st = sim_fstat_get(run, sc->id, epoch, true);
        if (st != NULL) {
            if (st->nstart == 0) {
                st->kind = f->kind;
                st->nnodes = sc->n;
                st->t_first_start = sgw_now();
                if (rc == PMIX_SUCCESS && px_coll_resolve(&args.choice, f->kind, sc->n, 0, NULL,
                                                          &st->resolved) == PMIX_SUCCESS)
                    px_coll_choice_format(&st->resolved, st->algo, sizeof(st->algo));
                else
                    snprintf(st->algo, sizeof(st->algo), "%s", want[0] ? want : "auto");
            }
            st->nstart++;
            st->contrib += f->ndata;
            st->t_last_start = sgw_now();
        }
        sc->running = f;
        sim_event(run, "fence-start\tnode %u\tset %llx epoch %u", sc->node->id,
                  (unsigned long long)sc->id, epoch);
        if (f->local_fail == PMIX_SUCCESS && rc == PMIX_SUCCESS) {
            if (f->kind == PX_COLL_ALLGATHER) {
                /* the bytes wait in the share; px_coll moves their size */
                sim_share *sh = share_get(run, sc->id, epoch, sc->n);
                free(sh->data[sc->me]);
                sh->data[sc->me] = f->data;
                sh->len[sc->me] = f->ndata;
                f->data = NULL;
            }
            rc = px_coll_start(sc->c, &args, NULL, f->ndata, fence_done, sc);
            if (rc == PMIX_SUCCESS)
                continue; /* fence_done may already have run */
        }
        if (f->local_fail == PMIX_SUCCESS) {
            /* A choice this node cannot run (the fence's own key names no
             * usable algorithm, while other nodes may run theirs), or one
             * px_coll_start refused: the epoch is still taken, only to be
             * failed, so that it ends on every node and the next fence of
             * the set pairs the same epoch everywhere. */
            sim_logf(run, "node %u: cannot start a fence: %s%s%s; failing it on every node",
                     sc->node->id, PMIx_Error_string(rc), err[0] ? ": " : "", err);
            f->local_fail = rc;
        }
        rc = px_coll_start_failed(sc->c, f->local_fail, fence_done, sc);
        if (rc != PMIX_SUCCESS) {
            sc->running = NULL;
            sim_logf(run, "node %u: cannot fail a fence: %s", sc->node->id, PMIx_Error_string(rc));
            if (st != NULL) {
                st->nend++;
                st->nfail++;
                st->status = rc;
            }
            f->cbfunc(rc, NULL, 0, f->cbdata, NULL, NULL);
            free(f->data);
            free(f);
        }
    }
}

pmix_status_t sim_host_fence(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                             const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                             pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    sim_node *n = hctx;
    sim_run *run = n->ep.run;
    px_jobmap map = {
        .nspace = run->nspace, .nprocs = run->nprocs, .nnodes = run->nnodes, .ppn = run->opt.ppn};
    px_fence_req req;
    px_fence_set set;
    pmix_status_t rc;
    sim_coll *sc;
    sim_fence *f, **pp;

    /* A local participant failed or was late (req.local_status): this node
     * fails its epoch of the set (px_coll_start_failed), which ends it on
     * the other nodes too and keeps the set in step. */
    px_fence_req_read(info, ninfo, &req);
    if (n->broken) {
        cbfunc(PMIX_ERR_PROC_TERM_WO_SYNC, NULL, 0, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    /* The participant set names the collective (host core): fences of
     * other ranks on the same nodes are another collective. */
    if ((rc = px_fence_set_make(&map, procs, nprocs, &set)) != PMIX_SUCCESS)
        return rc;
    for (sc = n->colls; sc != NULL; sc = sc->next)
        if (sc->id == set.id)
            break;
    if (sc != NULL) {
        px_fence_set_fini(&set);
    } else if ((sc = coll_create(n, set.id, set.members, set.nmembers)) == NULL) {
        px_fence_set_fini(&set);
        return PMIX_ERR_NOMEM;
    }
    f = calloc(1, sizeof(*f));
    if (f == NULL || (ndata > 0 && (f->data = malloc(ndata)) == NULL)) {
        free(f);
        return PMIX_ERR_NOMEM;
    }
    if (ndata > 0)
        memcpy(f->data, data, ndata);
    f->ndata = ndata;
    f->local_fail = req.local_status;
    f->kind = req.collect ? PX_COLL_ALLGATHER : PX_COLL_BARRIER;
    f->timeout = req.timeout;
    if (req.algo != NULL)
        snprintf(f->algo, sizeof(f->algo), "%s", req.algo);
    f->cbfunc = cbfunc;
    f->cbdata = cbdata;
    for (pp = &sc->queue; *pp != NULL; pp = &(*pp)->next)
        ;
    *pp = f;
    start_next(sc);
    return PMIX_SUCCESS;
}

/* ---- failures ---- */

void sim_node_break(sim_node *n, const char *why)
{
    sim_run *run = n->ep.run;

    if (n->broken)
        return;
    n->broken = true;
    sim_event(run, "broken\tnode %u\t%s", n->id, why);
    for (sim_coll *sc = n->colls; sc != NULL; sc = sc->next) {
        sim_fence *f = sc->running;
        if (f != NULL && !f->answered) {
            f->answered = true;
            count_end(sc, PMIX_ERR_PROC_TERM_WO_SYNC);
            f->cbfunc(PMIX_ERR_PROC_TERM_WO_SYNC, NULL, 0, f->cbdata, NULL, NULL);
        }
        while (sc->queue != NULL) {
            f = sc->queue;
            sc->queue = f->next;
            f->cbfunc(PMIX_ERR_PROC_TERM_WO_SYNC, NULL, 0, f->cbdata, NULL, NULL);
            free(f->data);
            free(f);
        }
    }
}

void sim_node_lost(sim_node *n, uint32_t dead)
{
    sim_run *run = n->ep.run;

    sim_event(run, "detect\tnode %u\tnode %u is gone", n->id, dead);
    sim_node_break(n, "a node was lost");
    for (sim_coll *sc = n->colls; sc != NULL; sc = sc->next) {
        uint32_t m;
        if (member_of_node(sc, dead, &m))
            px_coll_peer_failed(sc->c, m);
    }
    sim_dmx_lost(n, dead);
}

/* ---- the node's side ---- */

void sim_coll_dispatch(sim_node *n, sim_msg *m)
{
    px_coll_msg_info h;

    if (px_coll_msg_peek(m->data, m->len, &h) != PMIX_SUCCESS) {
        sim_msg_free(m);
        return;
    }
    for (sim_coll *sc = n->colls; sc != NULL; sc = sc->next) {
        if (sc->id == h.id) {
            deliver_coll(sc, m);
            return;
        }
    }
    if (h.id == n->ep.run->all_id && coll_create(n, h.id, NULL, n->ep.run->nnodes)) {
        deliver_coll(n->colls, m);
        return;
    }
    m->next = n->early; /* kept until this node joins that collective */
    n->early = m;
}

void sim_colls_fini(sim_node *n)
{
    while (n->colls != NULL) {
        sim_coll *sc = n->colls;
        n->colls = sc->next;
        px_coll_destroy(sc->c);
        px_coll_groups_destroy(sc->groups);
        while (sc->queue != NULL) {
            sim_fence *f = sc->queue;
            sc->queue = f->next;
            free(f->data);
            free(f);
        }
        if (sc->running != NULL) {
            free(sc->running->data);
            free(sc->running);
        }
        free(sc->members);
        free(sc);
    }
    while (n->early != NULL) {
        sim_msg *m = n->early;
        n->early = m->next;
        sim_msg_free(m);
    }
}
