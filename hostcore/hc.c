/*
 * hc.c - a node's cross-node operations (px_hostcore.h, "px_hc"): fence
 * sets over px_coll, the news of a dead process, lost nodes, and direct
 * modex routing, for every host.
 *
 * Messages between the px_hc of a job's nodes, little-endian:
 *
 *   COLL     u8 1, u32 nruns, nruns x (u32 first, u32 count), px_coll msg
 *            (the set's member nodes as runs of consecutive ids)
 *   BROKEN   u8 2, u32 origin node, u32 rank (PMIX_RANK_INVALID: none)
 *   DMX_REQ  u8 3, u32 request id, u32 rank, u16 nspace length, nspace
 *   DMX_REP  u8 4, u32 request id, i32 status, data (the rest)
 *   DEPARTED u8 5, u32 nrecs, nrecs x (u32 origin node, u32 rank, u32 nsets,
 *            nsets x (u64 set, u32 epoch)): departures, each with the last
 *            epoch of each set the rank joined
 *
 * The news of departures is batched (px_gone.h): a node queues each record
 * for each child it must tell, by destination, and sends one message per
 * destination when its window closes (px_hc_config.news_window; 0: at the
 * end of the call that queued them). At the end of a run, when every node
 * hears of every process, a node passes on in one message what it learned
 * from many, so the messages grow as N log N rather than N^2.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_gone.h"
#include "px_hostcore.h"

#define DMX_RETRY_FIRST 0.01 /* seconds; doubling to 1 s */
#define DMX_RETRY_TRIES 20

typedef struct hc_fence {
    struct hc_fence *next;
    px_coll_kind kind;
    px_coll_args args;
    pmix_status_t local_fail; /* fail this epoch on every member */
    bool choice_ok;           /* args.choice is this fence's (else local_fail says why) */
    void *data;
    size_t ndata;
    double started;
    uint32_t epoch;
    pmix_modex_cbfunc_t cbfunc; /* a fence's, or NULL */
    px_hc_group_cb gcb;         /* a group operation's, or NULL */
    bool ctxid_here;            /* this node makes the group's context id */
    void *cbdata;
    bool answered; /* the node broke while it ran: the server has its answer */
} hc_fence;

typedef struct hc_set {
    struct hc_set *next;
    px_hc *hc;
    uint64_t id;
    uint32_t n, me;
    uint32_t *members; /* node ids, ascending; NULL: nodes 0 .. n - 1 */
    px_coll *coll;
    px_coll_groups *groups;     /* owned hier groups, or NULL */
    const px_coll_groups *hier; /* the groups px_coll runs with (owned or shared), or NULL */
    uint8_t *hdr;               /* a COLL message's header for this set (type and runs) */
    size_t hdrlen;
    hc_fence *qhead, *qtail;
    hc_fence *running;
    bool pumping;
    /* Its participants, once an upcall named them: the whole job, or
     * `nranks` sorted ranks. Not known for a set made from a message. */
    bool known, all;
    pmix_rank_t *ranks;
    uint32_t nranks;
    /* A participant finalized and exited after joining the set's epochs
     * up to this one: a later epoch fails (UINT32_MAX: none). */
    uint32_t fail_after;
} hc_set;

typedef struct hc_retry hc_retry;

struct px_hc {
    const px_hc_ops *ops;
    void *ctx;
    px_hc_config cfg;
    hc_set *sets;
    bool broken;
    uint32_t *lost; /* lost nodes, ascending */
    uint32_t nlost;
    /* Departed ranks, each with the epochs of each set it had joined, as
     * its node counted them (a set not listed: none), and the news still
     * to pass on. */
    px_gone gone;
    px_outbox out;
    px_coll_timer *news_timer;
    bool flushing;
    px_dmx_table dmx;
    hc_retry *retries;
    /* The jobs whose processes this node serves: jobs[0] the first
     * (cfg.job), then the ones px_hc_job_add gave. */
    const px_jobmap **jobs;
    size_t njobs;
    /* Departures name a process by one number: its rank plus its job's
     * base (0 for the first job; each added job's the next free number,
     * so the same on every node, which add the jobs in the same order). */
    uint32_t *bases;
    uint32_t next_base;
};

static void logf_(px_hc *hc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(px_hc *hc, const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (hc->ops->log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    hc->ops->log(hc->ctx, line);
}

/* The name of `node` for a log line: the job map's, else "node N". */
static const char *name_of(const px_hc *hc, uint32_t node, char *buf, size_t len)
{
    const px_jobmap *job = hc->cfg.job;
    const char *name = job->node_name != NULL ? job->node_name(job->ctx, node) : NULL;

    if (name != NULL)
        return name;
    snprintf(buf, len, "node %u", node);
    return buf;
}

/* ---- little-endian encoding ---- */

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ---- lost nodes ---- */

/* Sorted arrays of ids (lost nodes, departed ranks). */
static bool ids_has(const uint32_t *v, uint32_t n, uint32_t id)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid] == id)
            return true;
        if (v[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Insert `id`; false when memory runs out (nothing changed). */
static bool ids_add(uint32_t **v, uint32_t *n, uint32_t id)
{
    uint32_t i = 0;
    uint32_t *grown;

    if (ids_has(*v, *n, id))
        return true;
    if ((grown = realloc(*v, (*n + 1) * sizeof(*grown))) == NULL)
        return false;
    *v = grown;
    while (i < *n && grown[i] < id)
        i++;
    memmove(&grown[i + 1], &grown[i], (*n - i) * sizeof(*grown));
    grown[i] = id;
    (*n)++;
    return true;
}

static bool is_lost(const px_hc *hc, uint32_t node)
{
    return ids_has(hc->lost, hc->nlost, node);
}

static void mark_lost(px_hc *hc, uint32_t node)
{
    /* without memory the sets it belongs to still learn it (px_hc_node_lost) */
    (void)ids_add(&hc->lost, &hc->nlost, node);
}

/* ---- sets ---- */

static uint32_t node_of_member(const hc_set *s, uint32_t m)
{
    return s->members != NULL ? s->members[m] : m;
}

static bool member_of_node(const hc_set *s, uint32_t node, uint32_t *m)
{
    uint32_t lo = 0, hi = s->n;

    if (s->members == NULL) {
        *m = node;
        return node < s->n;
    }
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->members[mid] == node) {
            *m = mid;
            return true;
        }
        if (s->members[mid] < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* The member list as runs of consecutive node ids, after the type byte:
 * the header of every COLL message of the set, made once. */
static int runs_make(hc_set *s)
{
    uint32_t nruns = 0;
    uint8_t *at;

    for (uint32_t i = 0; i < s->n; nruns++) {
        uint32_t first = node_of_member(s, i), count = 1;
        while (i + count < s->n && node_of_member(s, i + count) == first + count)
            count++;
        i += count;
    }
    s->hdrlen = 5 + 8 * (size_t)nruns;
    if ((s->hdr = malloc(s->hdrlen)) == NULL)
        return -1;
    s->hdr[0] = PX_HC_COLL;
    at = put32(s->hdr + 1, nruns);
    for (uint32_t i = 0; i < s->n;) {
        uint32_t first = node_of_member(s, i), count = 1;
        while (i + count < s->n && node_of_member(s, i + count) == first + count)
            count++;
        at = put32(put32(at, first), count);
        i += count;
    }
    return 0;
}

static pmix_status_t c_send_sized(void *ctx, uint32_t to, void *msg, size_t len, size_t wire)
{
    hc_set *s = ctx;
    px_hc *hc = s->hc;
    size_t hdr = s->hdrlen;
    uint8_t *m;
    px_coll_msg_info h;
    px_hc_sent what = {.kind = PX_HC_COLL, .wire = wire, .set = s->id};

    if (to >= s->n || (m = malloc(hdr + len)) == NULL) {
        free(msg);
        return to >= s->n ? PMIX_ERR_BAD_PARAM : PMIX_ERR_NOMEM;
    }
    memcpy(m, s->hdr, hdr);
    memcpy(m + hdr, msg, len);
    free(msg);
    if (px_coll_msg_peek(m + hdr, len, &h) == PMIX_SUCCESS) {
        what.epoch = h.epoch;
        what.type = h.type;
    }
    return hc->ops->send(hc->ctx, node_of_member(s, to), m, hdr + len, &what);
}

static pmix_status_t c_send(void *ctx, uint32_t to, void *msg, size_t len)
{
    return c_send_sized(ctx, to, msg, len, len);
}

static px_coll_timer *c_timer_start(void *ctx, double seconds, void (*cb)(void *), void *arg)
{
    px_hc *hc = ((hc_set *)ctx)->hc;
    return hc->ops->timer_start(hc->ctx, seconds, cb, arg);
}

static void c_timer_cancel(void *ctx, px_coll_timer *t)
{
    px_hc *hc = ((hc_set *)ctx)->hc;
    hc->ops->timer_cancel(hc->ctx, t);
}

static double c_now(void *ctx)
{
    px_hc *hc = ((hc_set *)ctx)->hc;
    return hc->ops->now(hc->ctx);
}

static const px_coll_ops coll_ops = {
    .version = PX_COLL_OPS_VERSION,
    .send = c_send,
    .timer_start = c_timer_start,
    .timer_cancel = c_timer_cancel,
    .now = c_now,
    .send_sized = c_send_sized,
};

static void set_check_gone(px_hc *hc, hc_set *s);

static bool of_first(const px_hc *hc, const pmix_proc_t *p)
{
    return strncmp(p->nspace, hc->cfg.job->nspace, PMIX_MAX_NSLEN) == 0;
}

/* The job of namespace `ns` (its index in hc->jobs), or -1. */
static int job_index(const px_hc *hc, const char *ns)
{
    for (size_t i = 0; i < hc->njobs; i++)
        if (strncmp(ns, hc->jobs[i]->nspace, PMIX_MAX_NSLEN) == 0)
            return (int)i;
    return -1;
}

/* Note the participants an upcall names (`procs`, checked by
 * px_fence_set_make_jobs), once, by their departure numbers (hc->bases):
 * the first job's wildcard as `all`, another job's as all its numbers. */
static void set_know(hc_set *s, const pmix_proc_t procs[], size_t nprocs)
{
    px_hc *hc = s->hc;
    uint32_t n = 0;

    if (s->known)
        return;
    for (size_t i = 0; i < nprocs; i++)
        if (procs[i].rank == PMIX_RANK_WILDCARD && of_first(hc, &procs[i]))
            s->all = true;
    if (nprocs == 0)
        s->all = true;
    for (size_t i = 0; i < nprocs; i++) {
        int k = job_index(hc, procs[i].nspace);
        if (k < 0 || (k == 0 && s->all))
            continue;
        uint32_t first = procs[i].rank == PMIX_RANK_WILDCARD ? 0 : procs[i].rank;
        uint32_t last = procs[i].rank == PMIX_RANK_WILDCARD ? hc->jobs[k]->nprocs : first + 1;
        for (uint32_t r = first; r < last; r++)
            if (!ids_add(&s->ranks, &n, hc->bases[k] + r)) {
                free(s->ranks);
                s->ranks = NULL;
                s->nranks = 0;
                s->all = false;
                return; /* not known: departures will not find this set */
            }
    }
    s->nranks = n;
    s->known = true;
    set_check_gone(s->hc, s);
}

static bool set_names(const hc_set *s, pmix_rank_t rank)
{
    return s->known &&
           ((s->all && rank < s->hc->cfg.job->nprocs) || ids_has(s->ranks, s->nranks, rank));
}

/* If `s` names departed rank `rank`, whose list is `l`, lower the last
 * epoch it may still run to the one the rank joined; false if `s` does not
 * name it. */
static bool gone_applies(hc_set *s, pmix_rank_t rank, const px_gone_list *l)
{
    uint32_t e;

    if (!set_names(s, rank))
        return false;
    e = px_gone_epoch(l, s->id);
    if (e < s->fail_after)
        s->fail_after = e;
    return true;
}

/* Apply what is known of departures to `s` (its participants known): a
 * walk of the departures known, once per set. */
static void set_check_gone(px_hc *hc, hc_set *s)
{
    for (uint32_t i = 0; i < hc->gone.cap; i++) {
        const px_gone_entry *e = &hc->gone.at[i];
        if (e->num1 != 0)
            (void)gone_applies(s, e->num1 - 1, px_gone_list_at(&hc->gone, e->list));
    }
}

static hc_set *set_find(px_hc *hc, uint64_t id)
{
    for (hc_set *s = hc->sets; s != NULL; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

/* A new set (taking `members`, which may be NULL: nodes 0 .. n - 1), or
 * NULL if this node is not a member or memory runs out (`members` is
 * freed then). */
static hc_set *set_make(px_hc *hc, uint64_t id, uint32_t *members, uint32_t n)
{
    hc_set *s = calloc(1, sizeof(*s));
    px_coll_config cfg;

    if (s == NULL) {
        free(members);
        return NULL;
    }
    s->hc = hc;
    s->id = id;
    s->n = n;
    s->members = members;
    s->fail_after = UINT32_MAX;
    if (n == 0 || !member_of_node(s, hc->cfg.node, &s->me) || runs_make(s) != 0)
        goto fail;
    memset(&cfg, 0, sizeof(cfg));
    cfg.id = id;
    cfg.nmembers = n;
    cfg.me = s->me;
    cfg.sizes_only = hc->cfg.sizes_only;
    if (hc->ops->groups != NULL)
        cfg.groups = s->hier = hc->ops->groups(hc->ctx, members, n, &s->groups);
    s->coll = px_coll_create(&coll_ops, s, &cfg);
    if (s->coll == NULL)
        goto fail;
    for (uint32_t i = 0; i < hc->nlost; i++) {
        uint32_t m;
        if (member_of_node(s, hc->lost[i], &m))
            px_coll_peer_failed(s->coll, m);
    }
    s->next = hc->sets;
    hc->sets = s;
    return s;
fail:
    px_coll_groups_destroy(s->groups);
    free(s->ranks);
    free(s->hdr);
    free(s->members);
    free(s);
    return NULL;
}

/* ---- fences ---- */

static void fence_free(hc_fence *f)
{
    free(f->data);
    free(f);
}

static void fence_info(const hc_set *s, const hc_fence *f, px_coll_choice *resolved,
                       px_hc_fence_info *out)
{
    memset(out, 0, sizeof(*out));
    out->set = s->id;
    out->epoch = f->epoch;
    out->nmembers = s->n;
    out->kind = f->kind;
    out->contrib = f->ndata;
    out->started = f->started;
    out->aborted = f->local_fail != PMIX_SUCCESS;
    if (f->choice_ok &&
        px_coll_resolve(&f->args.choice, f->kind, s->n, 0, s->hier, resolved) == PMIX_SUCCESS)
        out->resolved = resolved;
}

/* The server's answer to a failed fence or group operation. */
static void fence_fail(hc_fence *f, pmix_status_t status)
{
    /* For a group, a process that died is a member that failed (under
     * the job-wide rule, any death of the job fails every operation), and
     * so is one that finalized and exited before joining: the Standard's
     * PMIX_GROUP_MEMBER_FAILED is for a member that fails or terminates,
     * and the member's own server says the same (server/group.c). */
    if (f->gcb != NULL &&
        (status == PMIX_ERR_PROC_TERM_WO_SYNC || status == PMIX_ERR_LOST_CONNECTION))
        status = PMIX_GROUP_MEMBER_FAILED;
    if (f->gcb != NULL)
        f->gcb(status, false, 0, NULL, 0, f->cbdata, NULL, NULL);
    else
        f->cbfunc(status, NULL, 0, f->cbdata, NULL, NULL);
}

/* A group operation's result: every node's block is a u8 flag, a u64
 * context id (from the node that makes it) and that node's data; the
 * server gets the data concatenated and the id. */
static void group_answer(hc_fence *f, const px_coll_result *res, const uint8_t *data)
{
    uint64_t ctxid = 0;
    bool has = false;
    size_t out = 0;
    uint8_t *cat = NULL;

    for (uint32_t i = 0; i < res->nmembers; i++) {
        uint64_t len = res->offsets[i + 1] - res->offsets[i];
        const uint8_t *b = data + res->offsets[i];
        if (len < 9) {
            fence_fail(f, PMIX_ERR_BAD_PARAM);
            return;
        }
        if (b[0]) {
            has = true;
            ctxid = (uint64_t)get32(b + 1) | (uint64_t)get32(b + 5) << 32;
        }
        out += len - 9;
    }
    if (out > 0 && (cat = malloc(out)) == NULL) {
        fence_fail(f, PMIX_ERR_NOMEM);
        return;
    }
    out = 0;
    for (uint32_t i = 0; i < res->nmembers; i++) {
        uint64_t len = res->offsets[i + 1] - res->offsets[i];
        if (len > 9)
            memcpy(cat + out, data + res->offsets[i] + 9, len - 9);
        out += len - 9;
    }
    f->gcb(PMIX_SUCCESS, has, ctxid, (const char *)cat, out, f->cbdata, free, cat);
}

static void count_end(hc_set *s, hc_fence *f, pmix_status_t status)
{
    px_hc *hc = s->hc;
    px_coll_choice resolved;
    px_hc_fence_info fi;

    if (hc->ops->fence_end == NULL)
        return;
    fence_info(s, f, &resolved, &fi);
    hc->ops->fence_end(hc->ctx, &fi, status);
}

static void pump(hc_set *s);

/* The next fence of `s` would take an epoch that a departed participant
 * never joined: it fails without taking it, on every node alike. */
static bool past_departure(const hc_set *s)
{
    return s->fail_after != UINT32_MAX && px_coll_epoch(s->coll) + 1 > s->fail_after;
}

static void fence_done(pmix_status_t status, px_coll_result *res, void *cbdata)
{
    hc_set *s = cbdata;
    px_hc *hc = s->hc;
    hc_fence *f = s->running;
    bool shared = hc->cfg.sizes_only && f != NULL && f->kind == PX_COLL_ALLGATHER;

    s->running = NULL;
    if (f == NULL)
        return;
    if (!f->answered) {
        char *data = NULL;
        size_t size = 0;
        pmix_release_cbfunc_t release = NULL;
        void *rarg = NULL;
        if (status == PMIX_SUCCESS && res != NULL && res->size > 0) {
            if (shared) {
                status =
                    hc->ops->share_result(hc->ctx, s->id, f->epoch, res, &data, &release, &rarg);
                if (status != PMIX_SUCCESS)
                    logf_(hc, "collected data of %zu bytes does not match the contributions: %s",
                          res->size, PMIx_Error_string(status));
            } else if (res->data != NULL) {
                data = (char *)res->data;
                res->data = NULL;
                release = free;
                rarg = data;
            }
            size = status == PMIX_SUCCESS ? res->size : 0;
        }
        count_end(s, f, status);
        f->answered = true;
        if (status != PMIX_SUCCESS) {
            fence_fail(f, status);
        } else if (f->gcb != NULL) {
            if (res == NULL || data == NULL)
                fence_fail(f, PMIX_ERR_BAD_PARAM); /* every block has its header */
            else
                group_answer(f, res, (const uint8_t *)data);
            if (release != NULL)
                release(rarg);
        } else if (data != NULL) {
            f->cbfunc(status, data, size, f->cbdata, release, rarg);
        } else {
            f->cbfunc(status, NULL, 0, f->cbdata, NULL, NULL);
        }
    }
    if (shared)
        hc->ops->share_ended(hc->ctx, s->id, f->epoch, s->n);
    fence_free(f);
    pump(s);
}

/* Start the queued fences of `s` while none runs; with the job broken,
 * fail them at once, even behind a running one. */
static void pump(hc_set *s)
{
    px_hc *hc = s->hc;

    if (s->pumping)
        return; /* the outer call goes on */
    s->pumping = true;
    while (s->qhead != NULL && (s->running == NULL || hc->broken || past_departure(s))) {
        hc_fence *f = s->qhead;
        px_coll_choice resolved;
        px_hc_fence_info fi;
        pmix_status_t rc;

        s->qhead = f->next;
        if (s->qhead == NULL)
            s->qtail = NULL;
        if (hc->broken || past_departure(s)) {
            fence_fail(f, hc->broken ? PMIX_ERR_PROC_TERM_WO_SYNC : PMIX_ERR_LOST_CONNECTION);
            fence_free(f);
            continue;
        }
        s->running = f;
        f->started = hc->ops->now(hc->ctx);
        f->epoch = px_coll_epoch(s->coll) + 1;
        if (hc->ops->fence_start != NULL) {
            fence_info(s, f, &resolved, &fi);
            hc->ops->fence_start(hc->ctx, &fi);
        }
        if (f->local_fail == PMIX_SUCCESS && f->ctxid_here) {
            /* made as the epoch starts, so ids follow the order of the
             * maker's operations; a failed epoch spends none */
            uint64_t id = hc->ops->ctxid(hc->ctx);
            uint8_t *b = f->data;
            b[0] = 1;
            put32(put32(b + 1, (uint32_t)id), (uint32_t)(id >> 32));
        }
        if (f->local_fail == PMIX_SUCCESS) {
            const void *contrib = f->data;
            if (hc->cfg.sizes_only && f->kind == PX_COLL_ALLGATHER) {
                /* the bytes wait aside; px_coll moves their size */
                hc->ops->share_put(hc->ctx, s->id, f->epoch, s->n, s->me, f->data, f->ndata);
                f->data = NULL;
                contrib = NULL;
            }
            rc = px_coll_start(s->coll, &f->args, contrib, f->ndata, fence_done, s);
            if (rc == PMIX_SUCCESS)
                continue; /* fence_done may have run (and freed f) already */
            /* Refused (a choice that cannot serve this set, no memory):
             * the epoch is not taken yet; fail it, as for a bad key, so
             * that the set stays in step on every member. */
            logf_(hc, "cannot start a fence on %u nodes: %s; failing it on every node", s->n,
                  PMIx_Error_string(rc));
            f->local_fail = rc;
        }
        rc = px_coll_start_failed(s->coll, f->local_fail, fence_done, s);
        if (rc != PMIX_SUCCESS) {
            s->running = NULL;
            logf_(hc, "cannot fail a fence: %s", PMIx_Error_string(rc));
            count_end(s, f, rc);
            fence_fail(f, rc);
            if (hc->cfg.sizes_only && f->kind == PX_COLL_ALLGATHER)
                hc->ops->share_ended(hc->ctx, s->id, f->epoch, s->n);
            fence_free(f);
        }
    }
    s->pumping = false;
}

static void enqueue(hc_set *s, hc_fence *f, const pmix_proc_t procs[], size_t nprocs)
{
    set_know(s, procs, nprocs);
    if (s->qtail != NULL)
        s->qtail->next = f;
    else
        s->qhead = f;
    s->qtail = f;
    pump(s);
}

pmix_status_t px_hc_fence(px_hc *hc, const pmix_proc_t procs[], size_t nprocs,
                          const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                          pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    px_fence_req req;
    px_fence_set set;
    hc_set *s;
    hc_fence *f;
    char err[256] = "";
    const char *dflt;
    pmix_status_t rc;

    px_fence_req_read(info, ninfo, &req);
    if (hc->broken) {
        cbfunc(PMIX_ERR_PROC_TERM_WO_SYNC, NULL, 0, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    /* The participant set names the collective: fences of other ranks on
     * the same nodes are another collective. */
    if ((rc = px_fence_set_make_jobs(hc->jobs, hc->njobs, procs, nprocs, &set)) != PMIX_SUCCESS)
        return rc;
    f = calloc(1, sizeof(*f));
    if (f == NULL) {
        px_fence_set_fini(&set);
        return PMIX_ERR_NOMEM;
    }
    f->kind = req.collect ? PX_COLL_ALLGATHER : PX_COLL_BARRIER;
    f->local_fail = req.local_status;
    f->args.kind = f->kind;
    f->args.timeout = req.timeout > 0 ? req.timeout : hc->cfg.coll_timeout;
    dflt = req.collect ? hc->cfg.fence_algo : hc->cfg.barrier_algo;
    if (req.algo != NULL)
        rc = px_coll_parse(f->kind, req.algo, &f->args.choice, err, sizeof(err));
    else
        rc = px_coll_choose(f->kind, NULL, dflt != NULL && dflt[0] ? dflt : NULL, &f->args.choice,
                            err, sizeof(err));
    f->choice_ok = rc == PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS && f->local_fail == PMIX_SUCCESS) {
        /* The other members may have a good key (or none) and run this
         * fence: take the set's epoch anyway, only to fail it, so that it
         * ends everywhere and the next fence of the set pairs right. */
        if (req.algo != NULL)
            logf_(hc, "a fence's %s: %s", req.collect ? PX_COLL_KEY_FENCE : PX_COLL_KEY_BARRIER,
                  err);
        else
            logf_(hc, "a fence's algorithm: %s", err);
        f->local_fail = PMIX_ERR_BAD_PARAM;
    }
    if (req.collect && ndata > 0 && f->local_fail == PMIX_SUCCESS) {
        if ((f->data = malloc(ndata)) == NULL) {
            px_fence_set_fini(&set);
            free(f);
            return PMIX_ERR_NOMEM;
        }
        memcpy(f->data, data, ndata);
    }
    f->ndata = req.collect ? ndata : 0;
    f->cbfunc = cbfunc;
    f->cbdata = cbdata;
    s = set_find(hc, set.id);
    if (s == NULL) {
        s = set_make(hc, set.id, set.members, set.nmembers);
        set.members = NULL; /* taken */
    }
    px_fence_set_fini(&set);
    if (s == NULL) {
        fence_free(f);
        return PMIX_ERR_NOMEM;
    }
    enqueue(s, f, procs, nprocs);
    return PMIX_SUCCESS;
}

pmix_status_t px_hc_group(px_hc *hc, const px_hc_group_req *req, px_hc_group_cb cb, void *cbdata)
{
    px_fence_set set;
    hc_set *s;
    hc_fence *f;
    char err[256] = "";
    uint64_t id;
    size_t nlen;
    pmix_status_t rc;

    if (req->grp == NULL || (nlen = strnlen(req->grp, PMIX_MAX_NSLEN + 1)) > PMIX_MAX_NSLEN ||
        (req->op != PMIX_GROUP_CONSTRUCT && req->op != PMIX_GROUP_DESTRUCT) ||
        (req->assign_ctxid && hc->ops->ctxid == NULL))
        return PMIX_ERR_BAD_PARAM;
    if (hc->broken) {
        cb(PMIX_GROUP_MEMBER_FAILED, false, 0, NULL, 0, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    if ((rc = px_fence_set_make_jobs(hc->jobs, hc->njobs, req->procs, req->nprocs, &set)) !=
        PMIX_SUCCESS)
        return rc;
    /* A group operation is its own collective: the members' set, the
     * operation and the group's name (FNV-1a over them). */
    id = set.id ^ 0x9e3779b97f4a7c15ull * (uint64_t)(req->op + 1);
    for (size_t i = 0; i < nlen; i++) {
        id ^= (uint8_t)req->grp[i];
        id *= 1099511628211ull;
    }
    if ((f = calloc(1, sizeof(*f))) == NULL || (f->data = malloc(9 + req->ndata)) == NULL) {
        free(f);
        px_fence_set_fini(&set);
        return PMIX_ERR_NOMEM;
    }
    memset(f->data, 0, 9);
    if (req->ndata > 0)
        memcpy((uint8_t *)f->data + 9, req->data, req->ndata);
    f->ndata = 9 + req->ndata;
    f->kind = f->args.kind = PX_COLL_ALLGATHER;
    f->local_fail = req->local_status;
    f->args.timeout = req->timeout > 0 ? req->timeout : hc->cfg.coll_timeout;
    rc = px_coll_choose(f->kind, NULL,
                        hc->cfg.fence_algo != NULL && hc->cfg.fence_algo[0] ? hc->cfg.fence_algo
                                                                            : NULL,
                        &f->args.choice, err, sizeof(err));
    f->choice_ok = rc == PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS && f->local_fail == PMIX_SUCCESS)
        f->local_fail = PMIX_ERR_BAD_PARAM;
    /* the lowest member node makes the context id */
    f->ctxid_here = req->assign_ctxid && (set.members != NULL ? set.members[0] : 0) == hc->cfg.node;
    f->gcb = cb;
    f->cbdata = cbdata;
    s = set_find(hc, id);
    if (s == NULL) {
        s = set_make(hc, id, set.members, set.nmembers);
        set.members = NULL; /* taken */
    }
    px_fence_set_fini(&set);
    if (s == NULL) {
        fence_free(f);
        return PMIX_ERR_NOMEM;
    }
    enqueue(s, f, req->procs, req->nprocs);
    return PMIX_SUCCESS;
}

static pmix_status_t got_coll(px_hc *hc, uint32_t from, const uint8_t *p, size_t len)
{
    uint32_t nruns, n = 0, nnodes = hc->cfg.job->nnodes, m, *members = NULL;
    size_t hdr;
    px_coll_msg_info mi;
    hc_set *s;
    bool all;

    if (len < 4)
        return PMIX_ERR_BAD_PARAM;
    nruns = get32(p);
    if (nruns == 0 || nruns > nnodes || (len - 4) / 8 < nruns)
        return PMIX_ERR_BAD_PARAM;
    hdr = 4 + 8 * (size_t)nruns;
    if (px_coll_msg_peek(p + hdr, len - hdr, &mi) != PMIX_SUCCESS)
        return PMIX_ERR_BAD_PARAM;
    s = set_find(hc, mi.id);
    if (s == NULL) {
        /* Check the runs: ascending, disjoint, inside the job. */
        uint64_t next = 0;
        for (uint32_t i = 0; i < nruns; i++) {
            uint64_t first = get32(p + 4 + 8 * i), count = get32(p + 8 + 8 * i);
            if (count == 0 || first < next || first + count > nnodes)
                return PMIX_ERR_BAD_PARAM;
            next = first + count;
            n += (uint32_t)count;
        }
        all = nruns == 1 && get32(p + 4) == 0;
        if (!all) {
            uint32_t at = 0;
            if ((members = malloc(n * sizeof(*members))) == NULL)
                return PMIX_ERR_NOMEM;
            for (uint32_t i = 0; i < nruns; i++)
                for (uint32_t k = 0; k < get32(p + 8 + 8 * i); k++)
                    members[at++] = get32(p + 4 + 8 * i) + k;
        }
        if ((s = set_make(hc, mi.id, members, n)) == NULL)
            return PMIX_ERR_BAD_PARAM; /* not for us */
    }
    if (!member_of_node(s, from, &m))
        return PMIX_ERR_BAD_PARAM;
    (void)px_coll_deliver(s->coll, m, p + hdr, len - hdr);
    pump(s);
    return PMIX_SUCCESS;
}

/* ---- the news of a death ---- */

/* Send a copy of `msg` (news: a death, a departure) to the children of
 * relative rank r in the binomial tree rooted at `origin` (largest subtree
 * first); a child that cannot be reached has its own children served from
 * here. */
static void tree_send(px_hc *hc, uint32_t origin, uint32_t r, const uint8_t *msg, size_t len,
                      const px_hc_sent *what)
{
    uint32_t nn = hc->cfg.job->nnodes;
    int k = 31;

    while (k >= 0 && ((uint32_t)1 << k) >= nn)
        k--;
    for (; k >= 0; k--) {
        uint32_t step = (uint32_t)1 << k, child;
        uint8_t *m;
        if (step <= r || (uint64_t)r + step >= nn)
            continue;
        child = (uint32_t)(((uint64_t)origin + r + step) % nn);
        if (is_lost(hc, child) || (m = malloc(len)) == NULL) {
            tree_send(hc, origin, r + step, msg, len, what);
            continue;
        }
        memcpy(m, msg, len);
        if (hc->ops->send(hc->ctx, child, m, len, what) != PMIX_SUCCESS)
            tree_send(hc, origin, r + step, msg, len, what);
    }
}

/* The news of a death from `origin`, from relative rank r on. */
static void send_subtree(px_hc *hc, uint8_t kind, uint32_t origin, pmix_rank_t rank, uint32_t r)
{
    uint8_t m[9];
    px_hc_sent what = {.kind = (px_hc_kind)kind, .wire = 8};

    m[0] = kind;
    put32(put32(m + 1, origin), rank);
    tree_send(hc, origin, r, m, sizeof(m), &what);
}

static void do_break(px_hc *hc, const char *why)
{
    if (hc->broken)
        return;
    hc->broken = true;
    if (hc->ops->broken != NULL)
        hc->ops->broken(hc->ctx, why);
    for (hc_set *s = hc->sets; s != NULL; s = s->next) {
        hc_fence *f = s->running;
        if (f != NULL && !f->answered) {
            /* kept until px_coll ends it, so that it still answers its peers */
            f->answered = true;
            count_end(s, f, PMIX_ERR_PROC_TERM_WO_SYNC);
            fence_fail(f, PMIX_ERR_PROC_TERM_WO_SYNC);
        }
        pump(s);
    }
}

void px_hc_break(px_hc *hc, pmix_rank_t rank, bool tell, const char *why)
{
    uint32_t nn = hc->cfg.job->nnodes;

    do_break(hc, why != NULL ? why : "the job broke");
    if (tell && nn > 1)
        send_subtree(hc, PX_HC_BROKEN, hc->cfg.node, rank, 0);
}

/* Fail what departure `rank` (noted, with list `l`) makes hopeless:
 * queued fences and a running one past the epochs the rank joined. */
static void depart(px_hc *hc, pmix_rank_t rank, const px_gone_list *l)
{
    for (hc_set *s = hc->sets; s != NULL; s = s->next) {
        hc_fence *f = s->running;
        if (!gone_applies(s, rank, l))
            continue;
        if (f != NULL && !f->answered && f->epoch > s->fail_after) {
            /* as for a broken job: px_coll goes on until it ends */
            f->answered = true;
            count_end(s, f, PMIX_ERR_LOST_CONNECTION);
            fence_fail(f, PMIX_ERR_LOST_CONNECTION);
        }
        pump(s);
    }
}

/* Queue `rec` for the children of relative rank r in the binomial tree
 * rooted at rec->origin (largest subtree first); a lost child has its own
 * children served from here. False when memory ran out. */
static bool news_route(px_hc *hc, const px_news_rec *rec, uint32_t r)
{
    uint32_t nn = hc->cfg.job->nnodes;
    bool ok = true;
    int k = 31;

    while (k >= 0 && ((uint32_t)1 << k) >= nn)
        k--;
    for (; k >= 0; k--) {
        uint32_t step = (uint32_t)1 << k, child;
        if (step <= r || (uint64_t)r + step >= nn)
            continue;
        child = (uint32_t)(((uint64_t)rec->origin + r + step) % nn);
        if (is_lost(hc, child))
            ok = news_route(hc, rec, r + step) && ok;
        else if (px_outbox_add(&hc->out, child, rec) != 0)
            ok = false;
    }
    return ok;
}

#define NEWS_MAX_RECS 4096 /* records per message */

/* Send the records of slot `i` from its `sent` on, in messages of at most
 * NEWS_MAX_RECS. A destination that cannot be reached has its records
 * passed to its children in each record's tree (new records of other
 * slots). */
static void news_send_slot(px_hc *hc, uint32_t i)
{
    uint32_t nn = hc->cfg.job->nnodes;

    while (hc->out.slots[i].sent < hc->out.slots[i].n) {
        const px_outbox_slot *sl = &hc->out.slots[i];
        uint32_t first = sl->sent, dest = sl->dest;
        uint32_t n = sl->n - first < NEWS_MAX_RECS ? sl->n - first : NEWS_MAX_RECS;
        size_t len = 5;
        uint8_t *m, *p;
        pmix_status_t rc;

        hc->out.slots[i].sent += n;
        for (uint32_t k = 0; k < n; k++)
            len += 12 + 12 * (size_t)px_gone_list_at(&hc->gone, sl->recs[first + k].list)->nsets;
        if ((m = malloc(len)) == NULL) {
            logf_(hc,
                  "out of memory passing on that %u processes left; fences elsewhere may "
                  "wait for their timeout",
                  n);
            continue;
        }
        m[0] = PX_HC_DEPARTED;
        p = put32(m + 1, n);
        for (uint32_t k = 0; k < n; k++) {
            const px_news_rec *rec = &sl->recs[first + k];
            const px_gone_list *l = px_gone_list_at(&hc->gone, rec->list);
            p = put32(put32(put32(p, rec->origin), rec->num), l->nsets);
            for (uint32_t j = 0; j < l->nsets; j++) {
                p = put32(put32(p, (uint32_t)l->sets[j]), (uint32_t)(l->sets[j] >> 32));
                p = put32(p, l->epochs[j]);
            }
        }
        px_hc_sent what = {.kind = PX_HC_DEPARTED, .wire = len - 1};
        rc = hc->ops->send(hc->ctx, dest, m, len, &what);
        if (rc == PMIX_SUCCESS)
            continue;
        for (uint32_t k = 0; k < n; k++) {
            /* a copy: routing may move the slots */
            px_news_rec rec = hc->out.slots[i].recs[first + k];
            (void)news_route(hc, &rec, (dest + nn - rec.origin) % nn);
        }
    }
}

/* Send what the outbox holds: one message per destination. Re-routed
 * records may land in a slot already sent, so the pass repeats until
 * every slot is sent; each re-route goes deeper in its tree, so it ends. */
static void news_flush(px_hc *hc)
{
    bool more = true;

    if (hc->flushing)
        return; /* the outer call goes on */
    if (hc->broken) {
        /* the death's news is on its way and fails every fence; the
         * departures would only race it (px_hostcore.h, "Departures") */
        px_outbox_fini(&hc->out);
        return;
    }
    hc->flushing = true;
    while (more) {
        more = false;
        for (uint32_t i = 0; i < hc->out.nslots; i++)
            if (hc->out.slots[i].sent < hc->out.slots[i].n) {
                news_send_slot(hc, i);
                more = true;
            }
    }
    px_outbox_fini(&hc->out);
    hc->flushing = false;
}

static void news_fire(void *arg)
{
    px_hc *hc = arg;

    hc->news_timer = NULL;
    news_flush(hc);
}

/* News was queued: send it now, or when the window closes. */
static void news_queued(px_hc *hc)
{
    if (hc->out.nslots == 0 || hc->flushing)
        return;
    if (hc->cfg.news_window <= 0) {
        news_flush(hc);
        return;
    }
    if (hc->news_timer == NULL)
        hc->news_timer = hc->ops->timer_start(hc->ctx, hc->cfg.news_window, news_fire, hc);
    if (hc->news_timer == NULL)
        news_flush(hc);
}

void px_hc_departed(px_hc *hc, pmix_rank_t rank, bool tell)
{
    uint32_t n = 0, list;
    uint64_t *sets = NULL;
    uint32_t *epochs = NULL;

    if (rank >= hc->next_base || px_gone_has(&hc->gone, rank) || hc->broken)
        return; /* broken: the death's news is on its way (px_hostcore.h) */
    for (hc_set *s = hc->sets; s != NULL; s = s->next)
        n += set_names(s, rank);
    if (n > 0 && ((sets = malloc(n * sizeof(*sets))) == NULL ||
                  (epochs = malloc(n * sizeof(*epochs))) == NULL))
        goto nomem;
    /* The epochs this node takes with the rank in them: those it took,
     * and those queued (their local participants, the rank among them,
     * all joined). */
    n = 0;
    for (hc_set *s = hc->sets; s != NULL; s = s->next) {
        uint32_t q = 0;
        if (!set_names(s, rank))
            continue;
        for (hc_fence *f = s->qhead; f != NULL; f = f->next)
            q++;
        sets[n] = s->id;
        epochs[n++] = px_coll_epoch(s->coll) + q;
    }
    if (px_gone_add(&hc->gone, rank, n, sets, epochs, &list) != 0)
        goto nomem;
    free(sets);
    free(epochs);
    depart(hc, rank, px_gone_list_at(&hc->gone, list));
    if (tell && hc->cfg.job->nnodes > 1) {
        px_news_rec rec = {.origin = hc->cfg.node, .num = rank, .list = list};
        if (!news_route(hc, &rec, 0))
            logf_(hc,
                  "out of memory passing on that rank %u left; its fences elsewhere may "
                  "wait for their timeout",
                  rank);
        news_queued(hc);
    }
    return;
nomem:
    free(sets);
    free(epochs);
    logf_(hc, "out of memory noting that rank %u left; its fences may wait for their timeout",
          rank);
}

void px_hc_departed_proc(px_hc *hc, const pmix_proc_t *proc, bool tell)
{
    int k = job_index(hc, proc->nspace);
    if (k >= 0 && proc->rank < hc->jobs[k]->nprocs)
        px_hc_departed(hc, hc->bases[k] + proc->rank, tell);
}

/* A DEPARTED message: checked whole before anything changes. */
static pmix_status_t got_gone(px_hc *hc, const uint8_t *p, size_t len)
{
    uint32_t nrecs, nn = hc->cfg.job->nnodes;
    const uint8_t *at;
    size_t left;
    pmix_status_t rc = PMIX_SUCCESS;

    if (len < 4)
        return PMIX_ERR_BAD_PARAM;
    nrecs = get32(p);
    at = p + 4;
    left = len - 4;
    for (uint32_t i = 0; i < nrecs; i++) {
        uint32_t nsets;
        if (left < 12 || get32(at) >= nn || get32(at + 4) >= hc->next_base)
            return PMIX_ERR_BAD_PARAM;
        nsets = get32(at + 8);
        if ((left - 12) / 12 < nsets)
            return PMIX_ERR_BAD_PARAM;
        at += 12 + 12 * (size_t)nsets;
        left -= 12 + 12 * (size_t)nsets;
    }
    if (left != 0)
        return PMIX_ERR_BAD_PARAM;
    at = p + 4;
    for (uint32_t i = 0; i < nrecs; i++) {
        uint32_t origin = get32(at), rank = get32(at + 4), nsets = get32(at + 8), list;
        uint64_t *sets = NULL;
        uint32_t *epochs = NULL;
        const uint8_t *e = at + 12;
        int added;

        at += 12 + 12 * (size_t)nsets;
        if (px_gone_has(&hc->gone, rank))
            continue; /* each node hears once per tree; a repeat changes nothing */
        if (nsets > 0 && ((sets = malloc(nsets * sizeof(*sets))) == NULL ||
                          (epochs = malloc(nsets * sizeof(*epochs))) == NULL)) {
            free(sets);
            rc = PMIX_ERR_NOMEM;
            continue;
        }
        for (uint32_t j = 0; j < nsets; j++, e += 12) {
            sets[j] = (uint64_t)get32(e) | (uint64_t)get32(e + 4) << 32;
            epochs[j] = get32(e + 8);
        }
        added = px_gone_add(&hc->gone, rank, nsets, sets, epochs, &list);
        free(sets);
        free(epochs);
        if (added != 0) {
            rc = PMIX_ERR_NOMEM;
            continue;
        }
        depart(hc, rank, px_gone_list_at(&hc->gone, list));
        px_news_rec rec = {.origin = origin, .num = rank, .list = list};
        if (!news_route(hc, &rec, (hc->cfg.node + nn - origin) % nn))
            rc = PMIX_ERR_NOMEM;
    }
    news_queued(hc);
    return rc;
}

bool px_hc_broken(const px_hc *hc)
{
    return hc->broken;
}

void px_hc_node_lost(px_hc *hc, uint32_t node)
{
    if (node >= hc->cfg.job->nnodes || node == hc->cfg.node)
        return;
    mark_lost(hc, node);
    do_break(hc, "a node was lost");
    for (hc_set *s = hc->sets; s != NULL; s = s->next) {
        uint32_t m;
        if (member_of_node(s, node, &m))
            px_coll_peer_failed(s->coll, m);
        pump(s);
    }
    px_dmx_node_lost(&hc->dmx, node);
}

/* ---- direct modex ---- */

pmix_status_t px_hc_dmodex(px_hc *hc, const pmix_proc_t *proc, const pmix_info_t info[],
                           size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    const px_jobmap *job = NULL;
    size_t nslen = strnlen(proc->nspace, PMIX_MAX_NSLEN);
    uint32_t node, id;

    for (size_t i = 0; i < hc->njobs && job == NULL; i++)
        if (strncmp(proc->nspace, hc->jobs[i]->nspace, PMIX_MAX_NSLEN) == 0)
            job = hc->jobs[i];
    if (job == NULL)
        return PMIX_ERR_NOT_FOUND;
    uint8_t *m;
    pmix_status_t rc;
    px_hc_sent what = {.kind = PX_HC_DMX_REQ};

    (void)info;
    (void)ninfo;
    if (strncmp(proc->nspace, job->nspace, PMIX_MAX_NSLEN) != 0 || proc->rank >= job->nprocs)
        return PMIX_ERR_NOT_FOUND;
    node = px_jobmap_node_of(job, proc->rank);
    if (node == hc->cfg.node || node >= job->nnodes)
        return PMIX_ERR_NOT_FOUND;
    if (is_lost(hc, node))
        return PMIX_ERR_UNREACH;
    if ((id = px_dmx_add(&hc->dmx, node, cbfunc, cbdata)) == 0)
        return PMIX_ERR_NOMEM;
    what.wire = 10 + nslen;
    if ((m = malloc(11 + nslen)) == NULL) {
        px_dmx_cancel(&hc->dmx, id);
        return PMIX_ERR_NOMEM;
    }
    m[0] = PX_HC_DMX_REQ;
    put32(put32(m + 1, id), proc->rank);
    m[9] = (uint8_t)nslen;
    m[10] = (uint8_t)(nslen >> 8);
    memcpy(m + 11, proc->nspace, nslen);
    rc = hc->ops->send(hc->ctx, node, m, 11 + nslen, &what);
    if (rc != PMIX_SUCCESS) {
        px_dmx_cancel(&hc->dmx, id);
        return rc == PMIX_ERR_NOMEM || rc == PMIX_ERR_OUT_OF_RESOURCE ? rc : PMIX_ERR_UNREACH;
    }
    return PMIX_SUCCESS;
}

/* An error answer that could not go for want of memory, sent again from a
 * timer: DMX_RETRY_FIRST seconds later, doubling to 1 s, cfg.dmx_tries
 * times in all; then the link to the requester's node is dropped (a node
 * that cannot find a few bytes for seconds cannot serve it), so that its
 * Gets and fences fail instead of waiting. */
struct hc_retry {
    hc_retry *next;
    px_hc *hc;
    px_coll_timer *timer;
    uint32_t node, reqid;
    pmix_status_t status;
    unsigned tries;
};

static void send_answer(px_hc *hc, uint32_t node, uint32_t reqid, pmix_status_t status,
                        const char *data, size_t ndata, unsigned tries);

static void retry_fire(void *arg)
{
    hc_retry *r = arg;
    px_hc *hc = r->hc;

    for (hc_retry **pp = &hc->retries; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    send_answer(hc, r->node, r->reqid, r->status, NULL, 0, r->tries);
    free(r);
}

static void retry_arm(px_hc *hc, uint32_t node, uint32_t reqid, pmix_status_t status,
                      unsigned tries)
{
    double delay = DMX_RETRY_FIRST * (double)(1u << (tries < 8 ? tries - 1 : 7));
    unsigned most = hc->cfg.dmx_tries > 0 ? hc->cfg.dmx_tries : DMX_RETRY_TRIES;
    hc_retry *r = tries < most ? calloc(1, sizeof(*r)) : NULL;
    char nbuf[32];

    if (r != NULL) {
        *r = (hc_retry){.hc = hc, .node = node, .reqid = reqid, .status = status, .tries = tries};
        r->timer = hc->ops->timer_start(hc->ctx, delay < 1.0 ? delay : 1.0, retry_fire, r);
        if (r->timer != NULL) {
            r->next = hc->retries;
            hc->retries = r;
            return;
        }
        free(r);
    }
    logf_(hc,
          "gave up telling %s that its direct modex request failed (%s) after %u tries: "
          "out of memory; dropping the link to it",
          name_of(hc, node, nbuf, sizeof(nbuf)), PMIx_Error_string(status), tries);
    if (hc->ops->drop != NULL)
        hc->ops->drop(hc->ctx, node);
}

/* `tries`: error answers already refused for want of memory (0 for an
 * answer's first send). */
static void send_answer(px_hc *hc, uint32_t node, uint32_t reqid, pmix_status_t status,
                        const char *data, size_t ndata, unsigned tries)
{
    uint8_t *m = malloc(9 + ndata);
    px_hc_sent what = {.kind = PX_HC_DMX_REP, .wire = ndata};
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (m != NULL) {
        m[0] = PX_HC_DMX_REP;
        put32(put32(m + 1, reqid), (uint32_t)status);
        if (ndata > 0)
            memcpy(m + 9, data, ndata);
        rc = hc->ops->send(hc->ctx, node, m, 9 + ndata, &what);
    }
    if ((rc == PMIX_ERR_NOMEM || rc == PMIX_ERR_OUT_OF_RESOURCE) && ndata > 0) {
        /* The answer cannot go: send why, or the requester's Get would
         * wait for ever (or until its own PMIX_TIMEOUT). */
        char nbuf[32];
        logf_(hc, "cannot send %zu bytes of direct modex data to %s: %s", ndata,
              name_of(hc, node, nbuf, sizeof(nbuf)), PMIx_Error_string(rc));
        send_answer(hc, node, reqid, rc, NULL, 0, 0);
    } else if (rc == PMIX_ERR_NOMEM) {
        retry_arm(hc, node, reqid, status, tries + 1); /* a few bytes: later */
    }
}

typedef struct dmx_asked {
    px_hc *hc;
    uint32_t node, reqid;
} dmx_asked;

static void local_answer(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    dmx_asked *a = cbdata;

    send_answer(a->hc, a->node, a->reqid, status, status == PMIX_SUCCESS ? data : NULL,
                status == PMIX_SUCCESS ? sz : 0, 0);
    free(a);
}

static pmix_status_t got_dmx_req(px_hc *hc, uint32_t from, const uint8_t *p, size_t len)
{
    pmix_proc_t proc;
    size_t nslen;
    dmx_asked *a;
    pmix_status_t rc;
    uint32_t reqid;

    if (len < 10)
        return PMIX_ERR_BAD_PARAM;
    nslen = (size_t)p[8] | (size_t)p[9] << 8;
    if (nslen > PMIX_MAX_NSLEN || len - 10 != nslen)
        return PMIX_ERR_BAD_PARAM;
    reqid = get32(p);
    memset(&proc, 0, sizeof(proc));
    memcpy(proc.nspace, p + 10, nslen);
    proc.rank = get32(p + 4);
    if ((a = calloc(1, sizeof(*a))) == NULL) {
        send_answer(hc, from, reqid, PMIX_ERR_NOMEM, NULL, 0, 0);
        return PMIX_SUCCESS;
    }
    *a = (dmx_asked){hc, from, reqid};
    rc = hc->ops->dmodex_local(hc->ctx, &proc, local_answer, a);
    if (rc != PMIX_SUCCESS) {
        free(a);
        send_answer(hc, from, reqid, rc, NULL, 0, 0);
    }
    return PMIX_SUCCESS;
}

static pmix_status_t got_dmx_rep(px_hc *hc, const uint8_t *p, size_t len)
{
    uint32_t reqid;
    pmix_status_t status;
    char *copy = NULL;
    size_t n;

    if (len < 8)
        return PMIX_ERR_BAD_PARAM;
    reqid = get32(p);
    status = (pmix_status_t)get32(p + 4);
    n = len - 8;
    if (status == PMIX_SUCCESS && n > 0) {
        if ((copy = malloc(n)) == NULL)
            status = PMIX_ERR_NOMEM;
        else
            memcpy(copy, p + 8, n);
    }
    px_dmx_answer(&hc->dmx, reqid, status, copy, copy != NULL ? n : 0, copy != NULL ? free : NULL,
                  copy);
    return PMIX_SUCCESS;
}

/* ---- messages ---- */

pmix_status_t px_hc_deliver(px_hc *hc, uint32_t from, const void *msg, size_t len)
{
    const uint8_t *p = msg;

    if (len < 1 || from >= hc->cfg.job->nnodes || from == hc->cfg.node)
        return PMIX_ERR_BAD_PARAM;
    switch (p[0]) {
    case PX_HC_COLL: return got_coll(hc, from, p + 1, len - 1);
    case PX_HC_BROKEN:
        if (len != 9 || get32(p + 1) >= hc->cfg.job->nnodes)
            return PMIX_ERR_BAD_PARAM;
        if (!hc->broken) {
            uint32_t origin = get32(p + 1), nn = hc->cfg.job->nnodes;
            do_break(hc, "a process of the job died");
            send_subtree(hc, PX_HC_BROKEN, origin, get32(p + 5), (hc->cfg.node + nn - origin) % nn);
        }
        return PMIX_SUCCESS;
    case PX_HC_DEPARTED: return got_gone(hc, p + 1, len - 1);
    case PX_HC_DMX_REQ: return got_dmx_req(hc, from, p + 1, len - 1);
    case PX_HC_DMX_REP: return got_dmx_rep(hc, p + 1, len - 1);
    default: return PMIX_ERR_BAD_PARAM;
    }
}

/* ---- life ---- */

px_hc *px_hc_create(const px_hc_ops *ops, void *ctx, const px_hc_config *cfg)
{
    px_hc *hc;

    if (ops == NULL || ops->version != PX_HC_OPS_VERSION || ops->send == NULL ||
        ops->timer_start == NULL || ops->timer_cancel == NULL || ops->now == NULL ||
        ops->dmodex_local == NULL || cfg == NULL || cfg->job == NULL ||
        cfg->node >= cfg->job->nnodes)
        return NULL;
    if (cfg->sizes_only &&
        (ops->share_put == NULL || ops->share_result == NULL || ops->share_ended == NULL))
        return NULL;
    if ((hc = calloc(1, sizeof(*hc))) == NULL)
        return NULL;
    hc->ops = ops;
    hc->ctx = ctx;
    hc->cfg = *cfg;
    if ((hc->jobs = malloc(sizeof(*hc->jobs))) == NULL ||
        (hc->bases = malloc(sizeof(*hc->bases))) == NULL) {
        free(hc->jobs);
        free(hc);
        return NULL;
    }
    hc->jobs[0] = cfg->job;
    hc->bases[0] = 0;
    hc->njobs = 1;
    hc->next_base = cfg->job->nprocs;
    return hc;
}

pmix_status_t px_hc_job_add(px_hc *hc, const px_jobmap *m)
{
    const px_jobmap **more;
    uint32_t *bases;

    if (m == NULL || m->nspace == NULL || m->nnodes != hc->cfg.job->nnodes || m->nprocs == 0 ||
        m->nprocs > PMIX_RANK_VALID - hc->next_base)
        return PMIX_ERR_BAD_PARAM;
    for (size_t i = 0; i < hc->njobs; i++)
        if (strncmp(hc->jobs[i]->nspace, m->nspace, PMIX_MAX_NSLEN) == 0)
            return PMIX_ERR_BAD_PARAM;
    if ((more = realloc(hc->jobs, (hc->njobs + 1) * sizeof(*more))) == NULL)
        return PMIX_ERR_NOMEM;
    hc->jobs = more;
    if ((bases = realloc(hc->bases, (hc->njobs + 1) * sizeof(*bases))) == NULL)
        return PMIX_ERR_NOMEM;
    hc->bases = bases;
    hc->bases[hc->njobs] = hc->next_base;
    hc->next_base += m->nprocs;
    hc->jobs[hc->njobs++] = m;
    return PMIX_SUCCESS;
}

void px_hc_job_remove(px_hc *hc, const char *nspace)
{
    for (size_t i = 1; i < hc->njobs; i++)
        if (strncmp(hc->jobs[i]->nspace, nspace, PMIX_MAX_NSLEN) == 0) {
            memmove(&hc->jobs[i], &hc->jobs[i + 1], (hc->njobs - i - 1) * sizeof(*hc->jobs));
            memmove(&hc->bases[i], &hc->bases[i + 1], (hc->njobs - i - 1) * sizeof(*hc->bases));
            hc->njobs--; /* its numbers are not given again */
            return;
        }
}

void px_hc_destroy(px_hc *hc)
{
    if (hc == NULL)
        return;
    while (hc->sets != NULL) {
        hc_set *s = hc->sets;
        hc->sets = s->next;
        px_coll_destroy(s->coll);
        px_coll_groups_destroy(s->groups);
        while (s->qhead != NULL) {
            hc_fence *f = s->qhead;
            s->qhead = f->next;
            fence_free(f);
        }
        if (s->running != NULL)
            fence_free(s->running);
        free(s->ranks);
        free(s->hdr);
        free(s->members);
        free(s);
    }
    while (hc->retries != NULL) {
        hc_retry *r = hc->retries;
        hc->retries = r->next;
        hc->ops->timer_cancel(hc->ctx, r->timer);
        free(r);
    }
    px_dmx_fini(&hc->dmx);
    free(hc->jobs);
    free(hc->bases);
    free(hc->lost);
    if (hc->news_timer != NULL)
        hc->ops->timer_cancel(hc->ctx, hc->news_timer);
    px_gone_fini(&hc->gone);
    px_outbox_fini(&hc->out);
    free(hc);
}
