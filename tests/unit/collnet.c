/*
 * collnet.c - the simulated network of the coll/ tests (see collnet.h).
 *
 * One binary min-heap of events ordered by (time, sequence number). A
 * timer handle is owned by its heap event until it fires (freed just
 * before its callback runs, as px_coll forgets it then) or is popped
 * cancelled; a timer of a dead member is moved to an orphan list instead,
 * because its px_coll may still cancel it when it is destroyed.
 */
#include "collnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    EV_DELIVER,
    EV_TIMER,
    EV_CALL
};

struct px_coll_timer {
    struct px_coll_timer *next; /* orphan list */
    uint32_t owner;
    bool cancelled;
    void (*cb)(void *arg);
    void *arg;
};

typedef struct ev {
    double t;
    uint64_t seq;
    int kind;
    uint32_t to, from;
    void *msg;
    size_t len;
    px_coll_timer *timer;
    void (*fn)(void *arg);
    void *arg;
} ev;

typedef struct node {
    collnet *w;
    uint32_t m;
    px_coll *c;
    bool dead;
    int64_t die_at; /* -1: never */
    uint64_t data_sent;
    uint64_t fail_sends; /* data sends still to refuse with fail_status */
    pmix_status_t fail_status;
    uint64_t fail_notices; /* ABORT sends still to refuse with notice_status */
    pmix_status_t notice_status;
    size_t live_timers;
} node;

struct collnet {
    collnet_cfg cfg;
    px_coll_ops ops;
    node *nodes;
    ev **heap;
    size_t nheap, capheap;
    uint64_t seq;
    double now;
    uint64_t rng;
    px_coll_timer *orphans;
};

uint64_t collnet_rand(collnet *w)
{
    /* xorshift64* */
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return w->rng * 0x2545F4914F6CDD1DULL;
}

double collnet_uniform(collnet *w, double a, double b)
{
    return a + (b - a) * ((double)(collnet_rand(w) >> 11) / (double)(1ULL << 53));
}

static bool before(const ev *a, const ev *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push(collnet *w, ev *e)
{
    size_t i;

    if (w->nheap == w->capheap) {
        size_t cap = w->capheap ? 2 * w->capheap : 256;
        ev **h = realloc(w->heap, cap * sizeof(*h));
        if (h == NULL) {
            abort();
        }
        w->heap = h;
        w->capheap = cap;
    }
    e->seq = w->seq++;
    i = w->nheap++;
    while (i > 0 && before(e, w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = e;
}

static ev *pop(collnet *w)
{
    ev *top, *last;
    size_t i = 0;

    if (w->nheap == 0) {
        return NULL;
    }
    top = w->heap[0];
    last = w->heap[--w->nheap];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = l;
        if (l >= w->nheap) {
            break;
        }
        if (r < w->nheap && before(w->heap[r], w->heap[l])) {
            s = r;
        }
        if (!before(w->heap[s], last)) {
            break;
        }
        w->heap[i] = w->heap[s];
        i = s;
    }
    if (w->nheap > 0) {
        w->heap[i] = last;
    }
    return top;
}

static ev *new_ev(int kind, double t)
{
    ev *e = calloc(1, sizeof(*e));

    if (e == NULL) {
        abort();
    }
    e->kind = kind;
    e->t = t;
    return e;
}

static void schedule_delivery(collnet *w, double t, uint32_t to, uint32_t from, const void *msg,
                              size_t len)
{
    ev *e = new_ev(EV_DELIVER, t);

    e->to = to;
    e->from = from;
    e->len = len;
    e->msg = malloc(len ? len : 1);
    if (e->msg == NULL) {
        abort();
    }
    memcpy(e->msg, msg, len);
    push(w, e);
}

void collnet_kill(collnet *w, uint32_t m)
{
    if (w->nodes[m].dead) {
        return;
    }
    w->nodes[m].dead = true;
    if (w->cfg.on_kill != NULL) {
        w->cfg.on_kill(w->cfg.arg, w, m);
    }
}

static pmix_status_t op_send(void *ctx, uint32_t to, void *msg, size_t len)
{
    node *nd = ctx;
    collnet *w = nd->w;
    px_coll_msg_info h;

    if (nd->dead) {
        free(msg);
        return PMIX_SUCCESS;
    }
    if (px_coll_msg_peek(msg, len, &h) != PMIX_SUCCESS || to >= w->cfg.n || to == nd->m) {
        fprintf(stderr, "collnet: member %u sent a bad message to %u\n", nd->m, to);
        abort();
    }
    if (h.type == 1) {
        if (nd->die_at >= 0 && nd->data_sent == (uint64_t)nd->die_at) {
            collnet_kill(w, nd->m);
            free(msg);
            return PMIX_SUCCESS;
        }
        if (nd->fail_sends > 0) {
            nd->fail_sends--;
            free(msg);
            return nd->fail_status;
        }
        nd->data_sent++;
    } else if (nd->fail_notices > 0) {
        nd->fail_notices--;
        free(msg);
        return nd->notice_status;
    }
    if (w->cfg.on_send != NULL) {
        w->cfg.on_send(w->cfg.arg, nd->m, to, &h, len);
    }
    if (w->cfg.refuse_dead && w->nodes[to].dead) {
        free(msg);
        return PMIX_ERR_UNREACH;
    }
    schedule_delivery(w, w->now + collnet_uniform(w, w->cfg.dmin, w->cfg.dmax), to, nd->m, msg,
                      len);
    if (w->cfg.pdup > 0 && collnet_uniform(w, 0, 1) < w->cfg.pdup) {
        schedule_delivery(w, w->now + collnet_uniform(w, w->cfg.dmin, 2 * w->cfg.dmax), to, nd->m,
                          msg, len);
    }
    if (w->cfg.pcorrupt > 0 && collnet_uniform(w, 0, 1) < w->cfg.pcorrupt) {
        uint8_t *bad = msg;
        size_t badlen = len;
        if (collnet_rand(w) % 4 == 0) {
            badlen = (size_t)(collnet_rand(w) % len);
        } else {
            for (int flips = 1 + (int)(collnet_rand(w) % 3); flips > 0; flips--) {
                bad[collnet_rand(w) % len] ^= (uint8_t)(1u << (collnet_rand(w) % 8));
            }
        }
        schedule_delivery(w, w->now + collnet_uniform(w, 0, 2 * w->cfg.dmax), to, nd->m, bad,
                          badlen);
    }
    free(msg);
    return PMIX_SUCCESS;
}

static px_coll_timer *op_timer_start(void *ctx, double seconds, void (*cb)(void *), void *arg)
{
    node *nd = ctx;
    collnet *w = nd->w;
    px_coll_timer *t = calloc(1, sizeof(*t));
    ev *e;

    if (t == NULL) {
        return NULL;
    }
    t->owner = nd->m;
    t->cb = cb;
    t->arg = arg;
    e = new_ev(EV_TIMER, w->now + (seconds > 0 ? seconds : 0));
    e->timer = t;
    push(w, e);
    nd->live_timers++;
    return t;
}

static void op_timer_cancel(void *ctx, px_coll_timer *t)
{
    node *nd = ctx;

    if (t->cancelled) {
        fprintf(stderr, "collnet: timer cancelled twice\n");
        abort();
    }
    t->cancelled = true;
    nd->live_timers--;
}

static double op_now(void *ctx)
{
    return ((node *)ctx)->w->now;
}

collnet *collnet_create(const collnet_cfg *cfg)
{
    collnet *w = calloc(1, sizeof(*w));

    if (w == NULL) {
        return NULL;
    }
    w->cfg = *cfg;
    w->rng = cfg->seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL;
    if (w->rng == 0) {
        w->rng = 1;
    }
    w->ops.version = PX_COLL_OPS_VERSION;
    w->ops.send = op_send;
    w->ops.timer_start = op_timer_start;
    w->ops.timer_cancel = op_timer_cancel;
    w->ops.now = op_now;
    w->nodes = calloc(cfg->n, sizeof(*w->nodes));
    if (w->nodes == NULL) {
        abort();
    }
    for (uint32_t m = 0; m < cfg->n; m++) {
        px_coll_config cc = {cfg->id, cfg->n, m, cfg->groups, 0};
        w->nodes[m].w = w;
        w->nodes[m].m = m;
        w->nodes[m].die_at = -1;
        w->nodes[m].c = px_coll_create(&w->ops, &w->nodes[m], &cc);
        if (w->nodes[m].c == NULL) {
            abort();
        }
    }
    return w;
}

static void free_ev(ev *e)
{
    if (e->kind == EV_DELIVER) {
        free(e->msg);
    } else if (e->kind == EV_TIMER) {
        free(e->timer);
    }
    free(e);
}

void collnet_destroy(collnet *w)
{
    if (w == NULL) {
        return;
    }
    for (uint32_t m = 0; m < w->cfg.n; m++) {
        px_coll_destroy(w->nodes[m].c);
    }
    for (size_t i = 0; i < w->nheap; i++) {
        free_ev(w->heap[i]);
    }
    while (w->orphans != NULL) {
        px_coll_timer *t = w->orphans;
        w->orphans = t->next;
        free(t);
    }
    free(w->heap);
    free(w->nodes);
    free(w);
}

px_coll *collnet_coll(collnet *w, uint32_t m)
{
    return w->nodes[m].c;
}

uint32_t collnet_n(const collnet *w)
{
    return w->cfg.n;
}

double collnet_now(const collnet *w)
{
    return w->now;
}

size_t collnet_pending(const collnet *w)
{
    size_t k = 0;

    for (size_t i = 0; i < w->nheap; i++) {
        if (w->heap[i]->kind != EV_TIMER || !w->heap[i]->timer->cancelled) {
            k++;
        }
    }
    return k;
}

static void run_one(collnet *w, ev *e)
{
    w->now = e->t > w->now ? e->t : w->now;
    switch (e->kind) {
    case EV_DELIVER:
        if (!w->nodes[e->to].dead) {
            px_coll_deliver(w->nodes[e->to].c, e->from, e->msg, e->len);
        }
        free_ev(e);
        break;
    case EV_TIMER: {
        px_coll_timer *t = e->timer;
        free(e);
        if (t->cancelled) {
            free(t);
        } else if (w->nodes[t->owner].dead) {
            t->next = w->orphans; /* its px_coll may still cancel it */
            w->orphans = t;
        } else {
            void (*cb)(void *) = t->cb;
            void *arg = t->arg;
            w->nodes[t->owner].live_timers--;
            free(t);
            cb(arg);
        }
        break;
    }
    case EV_CALL: {
        void (*fn)(void *) = e->fn;
        void *arg = e->arg;
        free(e);
        fn(arg);
        break;
    }
    }
}

size_t collnet_run(collnet *w, size_t max_events)
{
    size_t k = 0;

    while (k < max_events) {
        ev *e = pop(w);
        if (e == NULL) {
            break;
        }
        run_one(w, e);
        k++;
    }
    return k;
}

void collnet_call_at(collnet *w, double t, void (*fn)(void *), void *arg)
{
    ev *e = new_ev(EV_CALL, t > w->now ? t : w->now);

    e->fn = fn;
    e->arg = arg;
    push(w, e);
}

void collnet_inject(collnet *w, double t, uint32_t to, uint32_t from, const void *msg, size_t len)
{
    schedule_delivery(w, t > w->now ? t : w->now, to, from, msg, len);
}

bool collnet_dead(const collnet *w, uint32_t m)
{
    return w->nodes[m].dead;
}

void collnet_die_at_send(collnet *w, uint32_t m, uint64_t k)
{
    w->nodes[m].die_at = (int64_t)k;
}

void collnet_fail_sends(collnet *w, uint32_t m, uint64_t k, pmix_status_t status)
{
    w->nodes[m].fail_sends = k;
    w->nodes[m].fail_status = status;
}

void collnet_fail_notices(collnet *w, uint32_t m, uint64_t k, pmix_status_t status)
{
    w->nodes[m].fail_notices = k;
    w->nodes[m].notice_status = status;
}

size_t collnet_live_timers(const collnet *w, uint32_t m)
{
    return w->nodes[m].live_timers;
}

uint64_t collnet_data_sent(const collnet *w, uint32_t m)
{
    return w->nodes[m].data_sent;
}

/* ---- sessions: every member runs a sequence of epochs ---- */

struct collsess {
    collnet *w;
    collsess_cfg cfg;
    collrec *recs; /* n * epochs, [m * epochs + (epoch - 1)] */
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

size_t collsess_contrib(const collsess *s, uint32_t m, uint32_t epoch, uint8_t *buf)
{
    uint64_t h = mix(s->cfg.seed ^ mix(((uint64_t)epoch << 32) | m));
    size_t len = s->cfg.maxlen ? (size_t)(h % (s->cfg.maxlen + 1)) : 0;

    if ((h >> 40) % 5 == 0) {
        len = 0; /* plenty of empty contributions */
    }
    for (size_t i = 0; buf != NULL && i < len; i++) {
        buf[i] = (uint8_t)mix(h + i);
    }
    return len;
}

collrec *collsess_rec(collsess *s, uint32_t m, uint32_t epoch)
{
    return &s->recs[(size_t)m * s->cfg.epochs + (epoch - 1)];
}

static bool check_result(collsess *s, uint32_t epoch, const px_coll_result *res)
{
    uint32_t n = collnet_n(s->w);
    uint8_t *buf = malloc(s->cfg.maxlen + 1);
    bool ok = res != NULL && res->nmembers == n && res->offsets != NULL && res->offsets[0] == 0;

    for (uint32_t i = 0; ok && i < n; i++) {
        size_t len = collsess_contrib(s, i, epoch, buf);
        if (res->offsets[i + 1] - res->offsets[i] != len ||
            (len > 0 && memcmp(res->data + res->offsets[i], buf, len) != 0)) {
            ok = false;
        }
    }
    if (ok && res->offsets[n] != res->size) {
        ok = false;
    }
    free(buf);
    return ok;
}

static void sess_start(void *arg);

static void sess_done(pmix_status_t status, px_coll_result *res, void *cbdata)
{
    collrec *rec = cbdata;
    collsess *s = rec->sess;
    collnet *w = s->w;

    if (rec->done) {
        fprintf(stderr, "collsess: member %u epoch %u completed twice\n", rec->m, rec->epoch);
        abort();
    }
    rec->done = true;
    rec->status = status;
    rec->t_done = collnet_now(w);
    if (status == PMIX_SUCCESS) {
        rec->result_ok =
            rec->kind == PX_COLL_BARRIER ? res == NULL : check_result(s, rec->epoch, res);
    }
    if (s->cfg.on_done != NULL) {
        s->cfg.on_done(s->cfg.arg, rec);
    }
    if (rec->epoch < s->cfg.epochs) {
        collrec *next = collsess_rec(s, rec->m, rec->epoch + 1);
        double gap = s->cfg.gap_of != NULL ? s->cfg.gap_of(s->cfg.arg, rec->m, rec->epoch + 1)
                                           : collnet_uniform(w, 0, s->cfg.gap);
        if (gap == 0) {
            sess_start(next); /* inside the callback: races ahead */
        } else {
            collnet_call_at(w, collnet_now(w) + gap, sess_start, next);
        }
    }
}

static void sess_start(void *arg)
{
    collrec *rec = arg;
    collsess *s = rec->sess;
    px_coll_args a;
    uint8_t *buf;
    size_t len;

    if (collnet_dead(s->w, rec->m)) {
        return;
    }
    memset(&a, 0, sizeof(a));
    s->cfg.args(s->cfg.arg, rec->m, rec->epoch, &a);
    rec->kind = a.kind;
    buf = malloc(s->cfg.maxlen + 1);
    len = collsess_contrib(s, rec->m, rec->epoch, buf);
    rec->started = true;
    rec->t_start = collnet_now(s->w);
    rec->start_rc = px_coll_start(collnet_coll(s->w, rec->m), &a, buf, len, sess_done, rec);
    free(buf);
}

collsess *collsess_create(collnet *w, const collsess_cfg *cfg)
{
    collsess *s = calloc(1, sizeof(*s));
    uint32_t n = collnet_n(w);

    if (s == NULL) {
        abort();
    }
    s->w = w;
    s->cfg = *cfg;
    s->recs = calloc((size_t)n * cfg->epochs, sizeof(*s->recs));
    if (s->recs == NULL) {
        abort();
    }
    for (uint32_t m = 0; m < n; m++) {
        for (uint32_t e = 1; e <= cfg->epochs; e++) {
            collrec *r = collsess_rec(s, m, e);
            r->sess = s;
            r->m = m;
            r->epoch = e;
        }
    }
    return s;
}

void collsess_go(collsess *s)
{
    for (uint32_t m = 0; m < collnet_n(s->w); m++) {
        collnet_call_at(s->w, collnet_uniform(s->w, 0, s->cfg.spread), sess_start,
                        collsess_rec(s, m, 1));
    }
}

void collsess_destroy(collsess *s)
{
    if (s != NULL) {
        free(s->recs);
        free(s);
    }
}

px_coll_groups *collnet_make_groups(int how, uint32_t n, uint64_t seed)
{
    uint32_t *labels;
    px_coll_groups *g;
    uint64_t x = seed | 1;

    if (how == COLLG_FLAT) {
        return NULL;
    }
    labels = malloc((size_t)n * sizeof(*labels));
    if (labels == NULL) {
        abort();
    }
    for (uint32_t m = 0; m < n; m++) {
        switch (how) {
        case COLLG_RUNS3: labels[m] = m / 3; break;
        case COLLG_RR5: labels[m] = 1000 - m % 5; break;
        case COLLG_RANDOM:
            x = mix(x + m);
            labels[m] = (uint32_t)(x % (n / 4 + 1)) * 7919u;
            break;
        default: labels[m] = m; break;
        }
    }
    g = px_coll_groups_create(n, labels);
    free(labels);
    if (g == NULL) {
        abort();
    }
    return g;
}
