/*
 * pmixd_coll.c - the cross-node half of pmixd's server host: fences over
 * px_coll among the daemons, direct modex between daemons, and what a
 * failure does to them.
 *
 * The upcalls (up_fence, up_dmodex: px_server_host functions whose
 * context is the daemon, installed as the job's `cross` table) and the
 * answers of job_dmodex_request (dmdx_answer) run on the main thread,
 * inside a turn of the loop, like everything else of the daemon: they do
 * the work at once (do_fence, do_dmdx, send_dmdx_reply), and may complete
 * the engine's callback before they return.
 *
 * Fences. The library makes one fence_nb upcall per fence per node, with
 * the node's records. The participants name a *fence set* (the host
 * core's px_fence_set: order and repeats do not matter, and the whole job,
 * by wildcard or by every rank, is one set): its id is a hash of them, the
 * same on every node, and its members are the nodes that host a
 * participant, in node order. Each set has one px_coll; successive fences
 * of the set are its epochs, run one at a time in the order the upcalls
 * come (a later one waits in the set's queue), which is the same order on
 * every node because every process fences a given set in program order. A
 * collecting fence is an allgather of the nodes' records (the result is
 * their concatenation, what the library wants back), any other fence a
 * barrier. The algorithm is the fence's own (its pmixlab.fence.algo or
 * pmixlab.barrier.algo info, which the library passes to the host), else
 * PMIXLAB_FENCE_ALGO (collecting) or PMIXLAB_BARRIER_ALGO (others), read
 * when the job starts, else auto. A fence's own key that names no usable
 * algorithm fails that fence with PMIX_ERR_BAD_PARAM, but the node still
 * takes the set's epoch for it, only to fail it (px_coll_start_failed, as
 * for a failed local participant): the members may disagree (one node's
 * participants pass a bad key, the others a good one or none), and a node
 * that skipped the epoch would pair its next fence with the others'
 * current one. The ABORT notice ends that epoch on the other members with
 * the same status, so the set stays in step; a fence that px_coll_start
 * refuses is failed the same way. PMIX_TIMEOUT of the fence becomes
 * px_coll's timeout. With PMIXLAB_PMIXD_TRACE=1 every daemon writes a
 * line per cross-node fence to stderr: set, epoch, algorithm ("aborted"
 * for an epoch this node failed itself), status, time. A PD_COLL frame
 * carries the set's member list, so a daemon that has not had the upcall
 * yet can make the set when the first message of its peers arrives.
 *
 * Direct modex. A Get of a rank of another node becomes a PD_DMDX_REQ to
 * that rank's daemon, which asks its server (job_dmodex_request:
 * answered when the rank has committed) and sends the record back. The
 * requests a daemon waits on are the host core's table (px_dmx_*).
 *
 * Failures (docs/pmixd.md). A rank of this node that dies, or a peer
 * daemon whose connection drops, *breaks* the job here: every fence that is
 * running or queued fails with PMIX_ERR_PROC_TERM_WO_SYNC, and so does
 * every later one. A dead rank is also announced to every other daemon
 * (PD_BROKEN), which breaks the job there; a lost daemon is also reported
 * to the px_coll of every set it was a member of (px_coll_peer_failed),
 * and its pending direct modex requests fail with PMIX_ERR_UNREACH.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmixd.h"
#include "px_hostcore.h"
#include "pmixd_proto.h"

typedef struct fence_req {
    struct fence_req *next;
    bool collect;
    pmix_status_t local_fail; /* a local participant failed: fail this epoch */
    px_coll_choice choice;
    double timeout;
    double started; /* for the trace */
    char *data;
    size_t ndata;
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
    bool answered;
} fence_req;

struct fence_set {
    fence_set *next;
    pmixd_ctx *d;
    uint64_t id;
    uint32_t n;
    uint32_t *members; /* node ids, ascending */
    px_coll *coll;
    fence_req *running;
    fence_req *qhead, *qtail;
};

static void free_release(void *p)
{
    free(p);
}

static void answer(fence_req *q, pmix_status_t st, px_coll_result *res);
static void free_req(fence_req *q);
static void do_fence(pmixd_ctx *d, uint64_t id, uint32_t n, const uint32_t *members, fence_req *q);
static void do_dmdx(pmixd_ctx *d, int node, pmix_rank_t rank, pmix_modex_cbfunc_t cbfunc,
                    void *cbdata);
static void send_dmdx_reply(pmixd_ctx *d, int node, uint32_t reqid, pmix_status_t status,
                            const char *data, size_t ndata, unsigned tries);

/* ---- upcalls (the main thread, inside a turn of the loop) ---- */

static pmix_status_t up_fence(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    pmixd_ctx *d = hctx;
    job *j = &d->j;
    px_fence_req req;
    px_coll_choice choice;
    char err[512];

    /* A local participant failed (or timed out): req.local_status. This
     * node then fails its epoch of the set (px_coll_start_failed), which
     * ends it on the other nodes too and keeps the set in step. */
    px_fence_req_read(info, ninfo, &req);
    pmix_status_t local_fail = req.local_status;
    choice = req.collect ? d->fence_choice : d->barrier_choice;
    if (local_fail == PMIX_SUCCESS && req.algo != NULL &&
        px_coll_parse(req.collect ? PX_COLL_ALLGATHER : PX_COLL_BARRIER, req.algo, &choice, err,
                      sizeof err) != PMIX_SUCCESS) {
        /* The other members may have a good key (or none) and run this
         * fence: take the set's epoch anyway, only to fail it, so that it
         * ends everywhere and the next fence of the set pairs right. */
        fprintf(stderr, "pmixd %s: a fence's %s: %s\n", j->hostname,
                req.collect ? PX_COLL_KEY_FENCE : PX_COLL_KEY_BARRIER, err);
        local_fail = PMIX_ERR_BAD_PARAM;
    }
    /* The participant set names the collective (host core): its id, and
     * its members, the nodes that host a participant. */
    fence_req *q = calloc(1, sizeof *q);
    px_fence_set set = {0};
    pmix_status_t rc = PMIX_ERR_NOMEM;
    if (q == NULL)
        goto fail;
    px_jobmap map = {.nspace = j->nspace,
                     .nprocs = (uint32_t)j->nprocs,
                     .nnodes = (uint32_t)j->nnodes,
                     .rank_node = j->rank_node};
    if ((rc = px_fence_set_make(&map, procs, nprocs, &set)) != PMIX_SUCCESS)
        goto fail;
    if (ndata > 0 && req.collect && local_fail == PMIX_SUCCESS) {
        q->data = malloc(ndata);
        if (q->data == NULL)
            goto fail;
        memcpy(q->data, data, ndata);
        q->ndata = ndata;
    }
    q->collect = req.collect;
    q->local_fail = local_fail;
    q->choice = choice;
    q->timeout = req.timeout;
    q->cbfunc = cbfunc;
    q->cbdata = cbdata;
    if (d->stopping) {
        answer(q, PMIX_ERR_PROC_TERM_WO_SYNC, NULL);
        free_req(q);
    } else {
        do_fence(d, set.id, set.nmembers, set.members, q); /* explicit: the map is given */
    }
    free(set.members);
    return PMIX_SUCCESS;
fail:
    free(set.members);
    if (q != NULL)
        free(q->data);
    free(q);
    return rc;
}

static pmix_status_t up_dmodex(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                               size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    pmixd_ctx *d = hctx;
    job *j = &d->j;
    if (strncmp(proc->nspace, j->nspace, PMIX_MAX_NSLEN) != 0 ||
        proc->rank >= (pmix_rank_t)j->nprocs || (int)j->rank_node[proc->rank] == d->node)
        return PMIX_ERR_NOT_FOUND;
    do_dmdx(d, (int)j->rank_node[proc->rank], proc->rank, cbfunc, cbdata);
    return PMIX_SUCCESS;
}

/* What the job's server table hands pmixd (job.cross). */
static const px_server_host cross_host = {
    .version = PX_SERVER_HOST_VERSION,
    .fence_nb = up_fence,
    .direct_modex = up_dmodex,
};

typedef struct dmdx_ctx {
    pmixd_ctx *d;
    int node;
    uint32_t reqid;
} dmdx_ctx;

/* job_dmodex_request's answer (the main thread, maybe inside the call):
 * the record, borrowed for the call, goes to the requesting node. */
static void dmdx_answer(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    dmdx_ctx *c = cbdata;
    bool ok = status == PMIX_SUCCESS;
    send_dmdx_reply(c->d, c->node, c->reqid, status, ok ? data : NULL, ok ? sz : 0, 0);
    free(c);
}

/* ---- fence sets (main thread) ---- */

static void answer(fence_req *q, pmix_status_t st, px_coll_result *res)
{
    if (q->answered)
        return;
    q->answered = true;
    if (st == PMIX_SUCCESS && res != NULL && res->size > 0 && res->data != NULL) {
        char *data = (char *)res->data;
        res->data = NULL;
        q->cbfunc(PMIX_SUCCESS, data, res->size, q->cbdata, free_release, data);
    } else {
        q->cbfunc(st, NULL, 0, q->cbdata, NULL, NULL);
    }
}

static void free_req(fence_req *q)
{
    free(q->data);
    free(q);
}

/* PMIXLAB_PMIXD_TRACE: the fence that just ended on set s. */
static void trace_fence(const fence_set *s, const fence_req *q, pmix_status_t status)
{
    px_coll_kind kind = q->collect ? PX_COLL_ALLGATHER : PX_COLL_BARRIER;
    px_coll_choice resolved;
    char name[64] = "?";

    if (px_coll_resolve(&q->choice, kind, s->n, 0, NULL, &resolved) == PMIX_SUCCESS)
        px_coll_choice_format(&resolved, name, sizeof name);
    if (q->local_fail != PMIX_SUCCESS)
        snprintf(name, sizeof name, "aborted"); /* this node failed the epoch itself */
    fprintf(stderr, "pmixd %s: fence set %016llx epoch %u: %s %s on %u nodes: %s in %.1f us\n",
            s->d->j.hostname, (unsigned long long)s->id, px_coll_epoch(s->coll),
            q->collect ? "allgather" : "barrier", name, s->n,
            status == PMIX_SUCCESS ? "ok" : PMIx_Error_string(status),
            (now_s() - q->started) * 1e6);
}

static void fence_done(pmix_status_t status, px_coll_result *res, void *cbdata)
{
    fence_set *s = cbdata;
    fence_req *q = s->running;
    s->running = NULL;
    if (q != NULL && s->d->trace)
        trace_fence(s, q, status);
    if (q != NULL) {
        answer(q, status, res);
        free_req(q);
    }
}

static void pump(fence_set *s)
{
    pmixd_ctx *d = s->d;
    while (s->qhead != NULL && (s->running == NULL || d->broken || s->coll == NULL)) {
        fence_req *q = s->qhead;
        s->qhead = q->next;
        if (s->qhead == NULL)
            s->qtail = NULL;
        if (d->broken || s->coll == NULL) { /* at once, even behind a running one */
            answer(q, PMIX_ERR_PROC_TERM_WO_SYNC, NULL);
            free_req(q);
            continue;
        }
        px_coll_args a = {
            .kind = q->collect ? PX_COLL_ALLGATHER : PX_COLL_BARRIER,
            .choice = q->choice,
            .timeout = q->timeout,
        };
        s->running = q;
        q->started = now_s();
        pmix_status_t rc;
        if (q->local_fail == PMIX_SUCCESS) {
            rc = px_coll_start(s->coll, &a, q->data, q->ndata, fence_done, s);
            if (rc == PMIX_SUCCESS)
                continue; /* fence_done may have run (and freed q) already */
            /* Refused (a choice that cannot serve this set, no memory): the
             * epoch is not taken yet; fail it, as for a bad key, so that
             * the set stays in step on every member. */
            fprintf(stderr, "pmixd %s: cannot start a cross-node fence: %s\n", d->j.hostname,
                    PMIx_Error_string(rc));
            q->local_fail = rc;
        }
        rc = px_coll_start_failed(s->coll, q->local_fail, fence_done, s);
        if (rc != PMIX_SUCCESS) {
            s->running = NULL;
            fprintf(stderr, "pmixd %s: cannot fail a cross-node fence: %s\n", d->j.hostname,
                    PMIx_Error_string(rc));
            answer(q, rc, NULL);
            free_req(q);
        }
    }
}

/* What a failed pmixd_peer_send means: our own failure (no memory, a
 * frame over the limit) or a daemon we cannot reach. */
static pmix_status_t send_status(int rc)
{
    return rc == 0            ? PMIX_SUCCESS
           : rc == TL_ENOMEM  ? PMIX_ERR_NOMEM
           : rc == TL_ETOOBIG ? PMIX_ERR_OUT_OF_RESOURCE
                              : PMIX_ERR_UNREACH;
}

static pmix_status_t c_send(void *ctx, uint32_t to, void *msg, size_t len)
{
    fence_set *s = ctx;
    tl_buf b = {0};
    tl_put_u32(&b, s->n);
    for (uint32_t i = 0; i < s->n; i++)
        tl_put_u32(&b, s->members[i]);
    tl_put_bytes(&b, msg, len);
    free(msg);
    int rc = to < s->n ? pmixd_peer_send(s->d, (int)s->members[to], PD_COLL, &b) : -1;
    tl_buf_free(&b);
    /* Our own failure fails this fence, not the peer for good (px_coll.h) */
    return send_status(rc);
}

/* Put `t` on the daemon's timer list, to fire `seconds` from now; the
 * list frees it (after its callback, or in coll_fini). */
static void timer_link(pmixd_ctx *d, px_coll_timer *t, double seconds, void (*cb)(void *arg),
                       void *arg)
{
    t->at = now_s() + seconds;
    t->cb = cb;
    t->arg = arg;
    t->next = d->timers;
    d->timers = t;
}

static px_coll_timer *c_timer_start(void *ctx, double seconds, void (*cb)(void *arg), void *arg)
{
    px_coll_timer *t = calloc(1, sizeof *t);
    if (t != NULL)
        timer_link(((fence_set *)ctx)->d, t, seconds, cb, arg);
    return t;
}

static void c_timer_cancel(void *ctx, px_coll_timer *timer)
{
    pmixd_ctx *d = ((fence_set *)ctx)->d;
    for (px_coll_timer **pp = &d->timers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == timer) {
            *pp = timer->next;
            free(timer);
            return;
        }
    }
}

static double c_now(void *ctx)
{
    return now_s();
}

static const px_coll_ops coll_ops = {
    .version = PX_COLL_OPS_VERSION,
    .send = c_send,
    .timer_start = c_timer_start,
    .timer_cancel = c_timer_cancel,
    .now = c_now,
};

static fence_set *set_find(pmixd_ctx *d, uint64_t id)
{
    for (fence_set *s = d->sets; s != NULL; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

/* A new set; NULL if the member list is not valid for this node. */
static fence_set *set_make(pmixd_ctx *d, uint64_t id, uint32_t n, const uint32_t *members)
{
    int me = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (members[i] >= (uint32_t)d->j.nnodes || (i > 0 && members[i] <= members[i - 1]))
            return NULL;
        if ((int)members[i] == d->node)
            me = (int)i;
    }
    if (me < 0)
        return NULL;
    fence_set *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->members = malloc(n * sizeof *s->members);
    if (s->members == NULL) {
        free(s);
        return NULL;
    }
    memcpy(s->members, members, n * sizeof *s->members);
    s->d = d;
    s->id = id;
    s->n = n;
    px_coll_config cfg = {.id = id, .nmembers = n, .me = (uint32_t)me};
    s->coll = px_coll_create(&coll_ops, s, &cfg);
    for (uint32_t i = 0; s->coll != NULL && i < n; i++)
        if (d->peer_lost[members[i]])
            px_coll_peer_failed(s->coll, i);
    s->next = d->sets;
    d->sets = s;
    return s;
}

/* ---- failures ---- */

static void fail_all(pmixd_ctx *d)
{
    for (fence_set *s = d->sets; s != NULL; s = s->next) {
        if (s->running != NULL)
            answer(s->running, PMIX_ERR_PROC_TERM_WO_SYNC, NULL); /* kept until px_coll ends */
        pump(s);
    }
}

void coll_break(pmixd_ctx *d, int rank, bool tell)
{
    if (!d->broken) {
        d->broken = true;
        fail_all(d);
    }
    if (!tell)
        return;
    tl_buf b = {0};
    tl_put_u32(&b, (uint32_t)rank);
    tl_put_u32(&b, (uint32_t)d->node);
    for (int n = 0; n < d->j.nnodes; n++)
        pmixd_peer_send(d, n, PD_BROKEN, &b);
    tl_buf_free(&b);
}

void coll_peer_lost(pmixd_ctx *d, int node)
{
    coll_break(d, -1, false);
    for (fence_set *s = d->sets; s != NULL; s = s->next) {
        for (uint32_t i = 0; s->coll != NULL && i < s->n; i++)
            if ((int)s->members[i] == node)
                px_coll_peer_failed(s->coll, i);
        pump(s);
    }
    px_dmx_node_lost(&d->dmdx, (uint32_t)node);
}

/* ---- the main thread's side ---- */

static void do_fence(pmixd_ctx *d, uint64_t id, uint32_t n, const uint32_t *members, fence_req *q)
{
    fence_set *s = set_find(d, id);
    if (s == NULL)
        s = set_make(d, id, n, members);
    if (s == NULL) {
        answer(q, PMIX_ERR_NOMEM, NULL);
        free_req(q);
        return;
    }
    if (s->qtail != NULL)
        s->qtail->next = q;
    else
        s->qhead = q;
    s->qtail = q;
    pump(s);
}

static void do_dmdx(pmixd_ctx *d, int node, pmix_rank_t rank, pmix_modex_cbfunc_t cbfunc,
                    void *cbdata)
{
    uint32_t id = d->peer_lost[node] ? 0 : px_dmx_add(&d->dmdx, (uint32_t)node, cbfunc, cbdata);
    if (id == 0) {
        cbfunc(d->peer_lost[node] ? PMIX_ERR_UNREACH : PMIX_ERR_NOMEM, NULL, 0, cbdata, NULL, NULL);
        return;
    }
    tl_buf b = {0};
    tl_put_u32(&b, id);
    tl_put_u32(&b, rank);
    int rc = pmixd_peer_send(d, node, PD_DMDX_REQ, &b);
    tl_buf_free(&b);
    if (rc != 0) {
        px_dmx_cancel(&d->dmdx, id);
        cbfunc(send_status(rc), NULL, 0, cbdata, NULL, NULL);
    }
}

/* An error reply (no data) that could not go either, for want of memory:
 * sent again from a timer, DMDX_RETRY_FIRST seconds later, doubling to 1 s,
 * DMDX_RETRY_TRIES times in all, so that the requester's Get returns the
 * reason instead of waiting for ever. After the last try the connection
 * to the requester's node is dropped: a daemon that cannot find a few
 * bytes for seconds cannot serve that node, and its Gets and fences then
 * fail (PMIX_ERR_UNREACH, PMIX_ERR_PROC_TERM_WO_SYNC) instead of waiting.
 * The timer is the first member: the timer list frees the whole retry
 * (after its callback, or at the end). */
#define DMDX_RETRY_FIRST 0.01
#define DMDX_RETRY_TRIES 20

typedef struct dmdx_retry {
    px_coll_timer t;
    pmixd_ctx *d;
    int node;
    uint32_t reqid;
    pmix_status_t status;
    unsigned tries; /* sends that failed so far */
} dmdx_retry;

static void dmdx_retry_fire(void *arg)
{
    dmdx_retry *r = arg;
    send_dmdx_reply(r->d, r->node, r->reqid, r->status, NULL, 0, r->tries);
}

static void dmdx_retry_arm(pmixd_ctx *d, int node, uint32_t reqid, pmix_status_t status,
                           unsigned tries)
{
    double delay = DMDX_RETRY_FIRST * (double)(1u << (tries < 8 ? tries - 1 : 7));
    unsigned most = d->dmdx_tries > 0 ? d->dmdx_tries : DMDX_RETRY_TRIES;
    dmdx_retry *r = tries < most ? calloc(1, sizeof *r) : NULL;

    if (r == NULL) {
        fprintf(stderr,
                "pmixd %s: gave up telling %s that its direct modex request failed (%s) after "
                "%u tries: out of memory; dropping the connection to its daemon\n",
                d->j.hostname, d->j.node_names[node], PMIx_Error_string(status), tries);
        pmixd_peer_drop(d, node);
        return;
    }
    *r = (dmdx_retry){.d = d, .node = node, .reqid = reqid, .status = status, .tries = tries};
    timer_link(d, &r->t, delay < 1.0 ? delay : 1.0, dmdx_retry_fire, r);
}

/* `tries`: error replies already refused for want of memory (0 for an
 * answer's first send). */
static void send_dmdx_reply(pmixd_ctx *d, int node, uint32_t reqid, pmix_status_t status,
                            const char *data, size_t ndata, unsigned tries)
{
    tl_buf b = {0};
    tl_put_u32(&b, reqid);
    tl_put_u32(&b, (uint32_t)status);
    tl_put_bytes(&b, data, ndata);
    int rc = pmixd_peer_send(d, node, PD_DMDX_REP, &b);
    tl_buf_free(&b);
    if ((rc == TL_ENOMEM || rc == TL_ETOOBIG) && ndata > 0) {
        /* The answer cannot go: send why, or the requester's Get would
         * wait for ever (or until its own PMIX_TIMEOUT). A daemon we cannot
         * reach fails its requests itself (coll_peer_lost). */
        fprintf(stderr, "pmixd %s: cannot send %zu bytes of direct modex data to %s: %s\n",
                d->j.hostname, ndata, d->j.node_names[node], PMIx_Error_string(send_status(rc)));
        send_dmdx_reply(d, node, reqid, send_status(rc), NULL, 0, 0);
    } else if (rc == TL_ENOMEM) {
        dmdx_retry_arm(d, node, reqid, status, tries + 1); /* a few bytes: later */
    }
}

static void got_coll(pmixd_ctx *d, int from, tl_reader *r)
{
    uint32_t n = tl_get_u32(r);
    if (r->bad || n == 0 || n > (uint32_t)d->j.nnodes)
        return;
    uint32_t *members = calloc(n, sizeof *members);
    if (members == NULL)
        return;
    for (uint32_t i = 0; i < n; i++)
        members[i] = tl_get_u32(r);
    size_t len;
    const void *msg = tl_get_bytes(r, &len);
    px_coll_msg_info mi;
    if (r->bad || px_coll_msg_peek(msg, len, &mi) != PMIX_SUCCESS) {
        free(members);
        return;
    }
    fence_set *s = set_find(d, mi.id);
    if (s == NULL)
        s = set_make(d, mi.id, n, members);
    free(members);
    if (s == NULL || s->coll == NULL)
        return;
    for (uint32_t i = 0; i < s->n; i++) {
        if ((int)s->members[i] == from) {
            px_coll_deliver(s->coll, i, msg, len);
            break;
        }
    }
    pump(s);
}

static void got_dmdx_req(pmixd_ctx *d, int from, tl_reader *r)
{
    uint32_t reqid = tl_get_u32(r), rank = tl_get_u32(r);
    if (r->bad)
        return;
    dmdx_ctx *c = calloc(1, sizeof *c);
    pmix_status_t rc = PMIX_ERR_NOMEM;
    if (c != NULL) {
        *c = (dmdx_ctx){d, from, reqid};
        rc = job_dmodex_request(&d->j, rank, dmdx_answer, c);
    }
    if (rc != PMIX_SUCCESS) {
        free(c);
        send_dmdx_reply(d, from, reqid, rc, NULL, 0, 0);
    }
}

static void got_dmdx_rep(pmixd_ctx *d, tl_reader *r)
{
    uint32_t reqid = tl_get_u32(r);
    pmix_status_t status = (pmix_status_t)tl_get_u32(r);
    size_t len;
    const void *data = tl_get_bytes(r, &len);
    if (r->bad)
        return;
    char *copy = status == PMIX_SUCCESS && len > 0 ? malloc(len) : NULL;
    if (status == PMIX_SUCCESS && len > 0 && copy == NULL)
        status = PMIX_ERR_NOMEM;
    if (copy != NULL)
        memcpy(copy, data, len);
    px_dmx_answer(&d->dmdx, reqid, status, copy, copy != NULL ? len : 0,
                  copy != NULL ? free_release : NULL, copy);
}

void coll_frame(pmixd_ctx *d, int from, uint8_t type, const uint8_t *p, size_t len)
{
    tl_reader r = {.p = p, .left = len};
    switch (type) {
    case PD_COLL: got_coll(d, from, &r); break;
    case PD_BROKEN: coll_break(d, (int)tl_get_u32(&r), false); break;
    case PD_DMDX_REQ: got_dmdx_req(d, from, &r); break;
    case PD_DMDX_REP: got_dmdx_rep(d, &r); break;
    default: break;
    }
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
    bool fired = false;
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
        fired = true;
    }
    if (fired)
        for (fence_set *s = d->sets; s != NULL; s = s->next)
            pump(s);
}

/* ---- life ---- */

void coll_init(pmixd_ctx *d)
{
    d->j.cross = &cross_host;
    d->j.cross_ctx = d;
}

void coll_fini(pmixd_ctx *d)
{
    while (d->sets != NULL) {
        fence_set *s = d->sets;
        d->sets = s->next;
        px_coll_destroy(s->coll);
        if (s->running != NULL)
            free_req(s->running);
        while (s->qhead != NULL) {
            fence_req *q = s->qhead;
            s->qhead = q->next;
            free_req(q);
        }
        free(s->members);
        free(s);
    }
    while (d->timers != NULL) {
        px_coll_timer *t = d->timers;
        d->timers = t->next;
        free(t);
    }
    px_dmx_fini(&d->dmdx);
}
