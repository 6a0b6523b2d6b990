/*
 * test_hostcore_hc.c - px_hc, a node's cross-node operations (host core),
 * driven as a host drives it: several nodes' px_hc in one process, a FIFO
 * of messages between them, a clock and timers the test moves, and a
 * local direct modex that answers with the rank's name. The same code runs
 * under pmixd and pmixsim.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "px_hostcore.h"

#define MAXN 128

typedef struct msg {
    struct msg *next;
    uint32_t from, to;
    void *data;
    size_t len;
} msg;

struct px_coll_timer {
    struct px_coll_timer *next;
    double at;
    void (*cb)(void *);
    void *arg;
};

typedef struct net net;
typedef struct node {
    net *w;
    uint32_t id;
    px_hc *hc;
    char broken_why[64];
    uint32_t drops;  /* ops->drop calls */
    uint64_t ctxids; /* context ids made here */
} node;

struct net {
    uint32_t n;
    px_jobmap map;
    px_jobmap child; /* a spawned job over the same nodes (test_second_job) */
    node nodes[MAXN];
    msg *head, *tail;
    px_coll_timer *timers;
    double now;
    bool down[MAXN];      /* sends to it fail: its host is gone */
    unsigned refuse_reps; /* DMX_REP sends refused as out of memory */
    unsigned sent_kind[PX_HC_DEPARTED + 1];
    double news_window; /* px_hc_config.news_window of nodes made next */
};

/* ---- a fence's outcome ---- */

typedef struct outcome {
    bool done;
    pmix_status_t status;
    char data[256];
    size_t len;
} outcome;

static void fence_cb(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                     pmix_release_cbfunc_t rel, void *relarg)
{
    outcome *o = cbdata;
    assert_false(o->done); /* exactly once */
    o->done = true;
    o->status = status;
    if (data != NULL && ndata < sizeof(o->data)) {
        memcpy(o->data, data, ndata);
        o->len = ndata;
    }
    if (rel != NULL)
        rel(relarg);
}

/* ---- ops ---- */

static pmix_status_t op_send(void *ctx, uint32_t to, void *data, size_t len, const px_hc_sent *what)
{
    node *nd = ctx;
    net *w = nd->w;
    msg *m;

    assert_true(what->kind >= PX_HC_COLL && what->kind <= PX_HC_DEPARTED);
    w->sent_kind[what->kind]++;
    if (what->kind == PX_HC_DMX_REP && w->refuse_reps > 0) {
        w->refuse_reps--;
        free(data);
        return PMIX_ERR_NOMEM;
    }
    if (w->down[to]) {
        free(data);
        return PMIX_ERR_UNREACH;
    }
    m = calloc(1, sizeof(*m));
    assert_non_null(m);
    *m = (msg){.from = nd->id, .to = to, .data = data, .len = len};
    if (w->tail != NULL)
        w->tail->next = m;
    else
        w->head = m;
    w->tail = m;
    return PMIX_SUCCESS;
}

static px_coll_timer *op_timer_start(void *ctx, double s, void (*cb)(void *), void *arg)
{
    net *w = ((node *)ctx)->w;
    px_coll_timer *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    *t = (px_coll_timer){.next = w->timers, .at = w->now + s, .cb = cb, .arg = arg};
    w->timers = t;
    return t;
}

static void op_timer_cancel(void *ctx, px_coll_timer *t)
{
    net *w = ((node *)ctx)->w;
    for (px_coll_timer **pp = &w->timers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            free(t);
            return;
        }
    }
    fail_msg("a timer cancelled twice or after it fired");
}

static double op_now(void *ctx)
{
    return ((node *)ctx)->w->now;
}

static pmix_status_t op_dmodex_local(void *ctx, const pmix_proc_t *proc,
                                     pmix_dmodex_response_fn_t cb, void *cbdata)
{
    node *nd = ctx;
    char rec[32];
    int n = snprintf(rec, sizeof(rec), "rank%u@%u", proc->rank, nd->id);
    const px_jobmap *m = strcmp(proc->nspace, "hcjob") == 0 ? &nd->w->map : &nd->w->child;
    if (m->nspace == NULL || px_jobmap_node_of(m, proc->rank) != nd->id)
        return PMIX_ERR_NOT_FOUND;
    cb(PMIX_SUCCESS, rec, (size_t)n, cbdata); /* at once, from inside */
    return PMIX_SUCCESS;
}

static void op_drop(void *ctx, uint32_t peer)
{
    ((node *)ctx)->drops++;
    (void)peer;
}

static uint64_t op_ctxid(void *ctx)
{
    node *nd = ctx;
    return (uint64_t)nd->id << 32 | ++nd->ctxids; /* unique per node and call */
}

static void op_broken(void *ctx, const char *why)
{
    snprintf(((node *)ctx)->broken_why, sizeof(((node *)ctx)->broken_why), "%s", why);
}

static const px_hc_ops ops = {
    .version = PX_HC_OPS_VERSION,
    .send = op_send,
    .timer_start = op_timer_start,
    .timer_cancel = op_timer_cancel,
    .now = op_now,
    .dmodex_local = op_dmodex_local,
    .drop = op_drop,
    .broken = op_broken,
    .ctxid = op_ctxid,
};

/* ---- the network ---- */

static net *net_new_window(uint32_t nnodes, uint32_t ppn, unsigned dmx_tries, double window)
{
    net *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    assert_true(nnodes <= MAXN);
    w->n = nnodes;
    w->news_window = window;
    w->map = (px_jobmap){.nspace = "hcjob", .nprocs = nnodes * ppn, .nnodes = nnodes, .ppn = ppn};
    for (uint32_t i = 0; i < nnodes; i++) {
        px_hc_config cfg = {
            .node = i, .job = &w->map, .dmx_tries = dmx_tries, .news_window = w->news_window};
        w->nodes[i].w = w;
        w->nodes[i].id = i;
        w->nodes[i].hc = px_hc_create(&ops, &w->nodes[i], &cfg);
        assert_non_null(w->nodes[i].hc);
    }
    return w;
}

static net *net_new(uint32_t nnodes, uint32_t ppn, unsigned dmx_tries)
{
    return net_new_window(nnodes, ppn, dmx_tries, 0);
}

/* Deliver every queued message (and what they cause); then, if `timers`,
 * fire the earliest timer and go on, until nothing is left. */
static void net_run(net *w, bool timers)
{
    for (;;) {
        while (w->head != NULL) {
            msg *m = w->head;
            w->head = m->next;
            if (w->head == NULL)
                w->tail = NULL;
            if (!w->down[m->to])
                assert_int_equal(px_hc_deliver(w->nodes[m->to].hc, m->from, m->data, m->len),
                                 PMIX_SUCCESS);
            free(m->data);
            free(m);
        }
        if (!timers || w->timers == NULL)
            return;
        px_coll_timer *first = w->timers, **pp, **fp = &w->timers;
        for (pp = &w->timers; *pp != NULL; pp = &(*pp)->next) {
            if ((*pp)->at < first->at) {
                first = *pp;
                fp = pp;
            }
        }
        *fp = first->next;
        if (first->at > w->now)
            w->now = first->at;
        first->cb(first->arg);
        free(first);
    }
}

static void net_free(net *w)
{
    net_run(w, false);
    for (uint32_t i = 0; i < w->n; i++)
        px_hc_destroy(w->nodes[i].hc);
    assert_null(w->timers); /* destroy cancelled every timer */
    free(w);
}

/* One node's fence_nb upcall: its participants `ranks` (count n, none:
 * the whole job), collecting `data` if not NULL, with an algorithm key. */
static void fence(net *w, uint32_t nd, const uint32_t *ranks, size_t n, const char *data,
                  const char *algo, int timeout, outcome *o)
{
    pmix_proc_t procs[64];
    pmix_info_t info[3];
    size_t ninfo = 0;
    bool yes = true;

    assert_true(n < 64);
    for (size_t i = 0; i < n; i++)
        PMIx_Load_procid(&procs[i], "hcjob", ranks[i]);
    if (n == 0)
        PMIx_Load_procid(&procs[n++], "hcjob", PMIX_RANK_WILDCARD);
    if (data != NULL)
        PMIx_Info_load(&info[ninfo++], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if (algo != NULL)
        PMIx_Info_load(&info[ninfo++], data != NULL ? PX_COLL_KEY_FENCE : PX_COLL_KEY_BARRIER, algo,
                       PMIX_STRING);
    if (timeout > 0)
        PMIx_Info_load(&info[ninfo++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    memset(o, 0, sizeof(*o));
    assert_int_equal(px_hc_fence(w->nodes[nd].hc, procs, n, info, ninfo, (char *)data,
                                 data != NULL ? strlen(data) : 0, fence_cb, o),
                     PMIX_SUCCESS);
    for (size_t i = 0; i < ninfo; i++)
        PMIx_Info_destruct(&info[i]);
}

/* ---- tests ---- */

/* Two sets of different ranks on the same four nodes, fenced in a
 * different order on each node: each pairs with its own set, and the
 * collected data is the set's contributions in node order. */
static void test_sets_pair(void **state)
{
    net *w = net_new(4, 2, 0);
    const uint32_t even[] = {0, 2, 4, 6}, odd[] = {1, 3, 5, 7};
    outcome a[4], b[4];
    char want_a[64] = "", want_b[64] = "", buf[32];

    for (uint32_t i = 0; i < 4; i++) {
        snprintf(buf, sizeof(buf), "A%u;", i);
        strcat(want_a, buf);
        snprintf(buf, sizeof(buf), "B%u;", i);
        strcat(want_b, buf);
    }
    for (uint32_t i = 0; i < 4; i++) {
        char da[8], db[8];
        snprintf(da, sizeof(da), "A%u;", i);
        snprintf(db, sizeof(db), "B%u;", i);
        if (i % 2 == 0) {
            fence(w, i, even, 4, da, "ring", 0, &a[i]);
            fence(w, i, odd, 4, db, NULL, 0, &b[i]);
        } else {
            fence(w, i, odd, 4, db, NULL, 0, &b[i]);
            fence(w, i, even, 4, da, "ring", 0, &a[i]);
        }
        net_run(w, false); /* some nodes hear of a set before their upcall */
    }
    net_run(w, false);
    for (uint32_t i = 0; i < 4; i++) {
        assert_true(a[i].done && b[i].done);
        assert_int_equal(a[i].status, PMIX_SUCCESS);
        assert_int_equal(b[i].status, PMIX_SUCCESS);
        assert_int_equal(a[i].len, strlen(want_a));
        assert_memory_equal(a[i].data, want_a, a[i].len);
        assert_memory_equal(b[i].data, want_b, b[i].len);
    }
    assert_true(w->sent_kind[PX_HC_COLL] > 0);
    net_free(w);
}

/* A subset of nodes: only they take part; a node outside it hears nothing. */
static void test_subset(void **state)
{
    net *w = net_new(8, 1, 0);
    const uint32_t ranks[] = {1, 2, 3, 6}; /* nodes 1-3 and 6: two runs */
    outcome o[8];

    for (uint32_t i = 0; i < 4; i++)
        fence(w, ranks[i], ranks, 4, NULL, "dissemination", 0, &o[ranks[i]]);
    net_run(w, false);
    for (uint32_t i = 0; i < 4; i++) {
        assert_true(o[ranks[i]].done);
        assert_int_equal(o[ranks[i]].status, PMIX_SUCCESS);
    }
    net_free(w);
}

/* One node's fence names no usable algorithm: the epoch is failed on every
 * member with PMIX_ERR_BAD_PARAM, and the next fence of the set runs in
 * step everywhere. */
static void test_bad_key_in_step(void **state)
{
    net *w = net_new(4, 1, 0);
    outcome o[4], p[4];

    for (uint32_t i = 0; i < 4; i++)
        fence(w, i, NULL, 0, NULL, i == 2 ? "nosuch" : "tree", 0, &o[i]);
    net_run(w, true);
    for (uint32_t i = 0; i < 4; i++) {
        assert_true(o[i].done);
        assert_int_equal(o[i].status, PMIX_ERR_BAD_PARAM);
    }
    for (uint32_t i = 0; i < 4; i++)
        fence(w, i, NULL, 0, "x", NULL, 0, &p[i]);
    net_run(w, true);
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(p[i].status, PMIX_SUCCESS);
        assert_int_equal(p[i].len, 4);
    }
    net_free(w);
}

/* A rank of node 5 dies: the news reaches all 16 nodes down the tree,
 * even with node 6 (an inner node of the tree) unreachable; a running
 * fence fails on every node, and so does a later one, at once. */
static void test_break_spreads(void **state)
{
    net *w = net_new(16, 1, 0);
    outcome o[16], later;

    for (uint32_t i = 0; i < 16; i++)
        if (i != 5 && i != 6)
            fence(w, i, NULL, 0, NULL, NULL, 0, &o[i]);
    net_run(w, false);
    w->down[6] = true;
    px_hc_break(w->nodes[5].hc, 5, true, "a local process died");
    net_run(w, false);
    for (uint32_t i = 0; i < 16; i++) {
        if (i == 6)
            continue;
        assert_true(px_hc_broken(w->nodes[i].hc));
        if (i != 5) {
            assert_true(o[i].done);
            assert_int_equal(o[i].status, PMIX_ERR_PROC_TERM_WO_SYNC);
        }
    }
    assert_string_equal(w->nodes[5].broken_why, "a local process died");
    assert_string_equal(w->nodes[9].broken_why, "a process of the job died");
    fence(w, 3, NULL, 0, NULL, NULL, 0, &later);
    assert_true(later.done);
    assert_int_equal(later.status, PMIX_ERR_PROC_TERM_WO_SYNC);
    w->down[6] = false;
    net_free(w);
}

/* Rank 0 (node 0) finalizes and exits after joining epoch 1 of the whole
 * job's set, which the other nodes have not all reached: the news must
 * not fail epoch 1 (rank 0 is in it), but epoch 2 fails everywhere: on
 * the nodes already running it when the news comes, and at once, without
 * taking the epoch, on those whose upcall comes later. A subset without
 * rank 0 is not touched. Then ranks of an unknown set. */
static void test_departed(void **state)
{
    net *w = net_new(4, 1, 0);
    outcome e1[4], e2[4], sub[4];
    const uint32_t others[] = {1, 2, 3};

    fence(w, 0, NULL, 0, NULL, NULL, 0, &e1[0]);
    fence(w, 1, NULL, 0, NULL, NULL, 0, &e1[1]);
    net_run(w, false);
    px_hc_departed(w->nodes[0].hc, 0, true);
    net_run(w, false); /* the news arrives before nodes 2 and 3 fence */
    fence(w, 2, NULL, 0, NULL, NULL, 0, &e1[2]);
    fence(w, 3, NULL, 0, NULL, NULL, 0, &e1[3]);
    net_run(w, false);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(e1[i].status, PMIX_SUCCESS);
    /* epoch 2: node 1 before the news of a second departure... */
    fence(w, 1, NULL, 0, NULL, NULL, 0, &e2[1]);
    assert_true(e2[1].done); /* rank 0 joined only epoch 1 */
    assert_int_equal(e2[1].status, PMIX_ERR_LOST_CONNECTION);
    fence(w, 2, NULL, 0, NULL, NULL, 0, &e2[2]);
    assert_int_equal(e2[2].status, PMIX_ERR_LOST_CONNECTION);
    /* a set without rank 0 still runs */
    for (uint32_t i = 0; i < 3; i++)
        fence(w, others[i], others, 3, "s", NULL, 0, &sub[others[i]]);
    net_run(w, false);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(sub[others[i]].status, PMIX_SUCCESS);

    /* A fence running when the news comes: rank 3 (node 3) leaves having
     * joined nothing of the set {1, 2, 3}'s second epoch. */
    fence(w, 1, others, 3, "t", NULL, 0, &sub[1]);
    fence(w, 2, others, 3, "t", NULL, 0, &sub[2]);
    net_run(w, false);
    assert_false(sub[1].done);
    px_hc_departed(w->nodes[3].hc, 3, true);
    net_run(w, false);
    assert_int_equal(sub[1].status, PMIX_ERR_LOST_CONNECTION);
    assert_int_equal(sub[2].status, PMIX_ERR_LOST_CONNECTION);
    assert_false(px_hc_broken(w->nodes[1].hc)); /* no death: the job goes on */
    net_free(w);
}

/* The end of a run: the processes of half the nodes (the odd ones) leave
 * at one time, after a fence of the whole job. The news is batched
 * (px_hc_config.news_window): each node passes on what it learned in one
 * message per child and window, over at most lg N windows, and a record
 * t hops from its origin has fewer children left: about N lg^2 N / 2
 * messages (3,136 here) where one message per departure and node was
 * N^2 / 2 (8,128). Every node still learns every departure, within lg N
 * windows. */
static void test_departures_batched(void **state)
{
    const uint32_t n = MAXN, lg = 7; /* 2^7 = 128 */
    const double window = 1e-3;
    net *w = net_new_window(n, 1, 0, window);
    outcome o[MAXN];
    unsigned msgs;

    for (uint32_t i = 0; i < n; i++)
        fence(w, i, NULL, 0, NULL, NULL, 0, &o[i]);
    net_run(w, false);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(o[i].status, PMIX_SUCCESS);
    for (uint32_t i = 1; i < n; i += 2)
        px_hc_departed(w->nodes[i].hc, i, true);
    assert_int_equal(w->sent_kind[PX_HC_DEPARTED], 0); /* waiting for the window */
    net_run(w, true);
    msgs = w->sent_kind[PX_HC_DEPARTED];
    print_message("departures: %u nodes, %u left, %u messages, last at %.3f ms\n", n, n / 2, msgs,
                  w->now * 1e3);
    assert_true(msgs > 0);
    assert_true(msgs <= n * lg * lg / 2);
    assert_true(w->now <= lg * window + 1e-9);
    /* Every even node knows its odd neighbour left: a fence of the two
     * fails at once, without a message. */
    for (uint32_t i = 0; i < n; i += 2) {
        uint32_t pair[] = {i, i + 1};
        fence(w, i, pair, 2, NULL, NULL, 0, &o[i]);
        assert_true(o[i].done);
        assert_int_equal(o[i].status, PMIX_ERR_LOST_CONNECTION);
    }
    /* and a fence of the whole job fails everywhere */
    for (uint32_t i = 0; i < n; i += 2) {
        fence(w, i, NULL, 0, NULL, NULL, 0, &o[i]);
        assert_true(o[i].done);
        assert_int_equal(o[i].status, PMIX_ERR_LOST_CONNECTION);
    }
    net_free(w);
}

/* Rank 2 leaves and its news waits for its window; rank 3 dies on the
 * same node (node 1 of 4 x 2) before the window closes: the departure's
 * news is dropped (it would race the death's), the death's goes out, and
 * every node fails its fences with the death's status. */
static void test_departure_queued_then_death(void **state)
{
    net *w = net_new_window(4, 2, 0, 1e-3);
    outcome o[4];

    (void)state;
    px_hc_departed(w->nodes[1].hc, 2, true);
    assert_int_equal(w->sent_kind[PX_HC_DEPARTED], 0);
    px_hc_break(w->nodes[1].hc, 3, true, "rank 3 died");
    net_run(w, true);
    assert_int_equal(w->sent_kind[PX_HC_DEPARTED], 0);
    assert_true(w->sent_kind[PX_HC_BROKEN] > 0);
    for (uint32_t i = 0; i < 4; i++) {
        fence(w, i, NULL, 0, NULL, NULL, 0, &o[i]);
        assert_true(o[i].done);
        assert_int_equal(o[i].status, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
    net_free(w);
}

/* Rank 0 dies: every node learns it. Then rank 1, whose fence failed with
 * that death, finalizes and exits: node 1 keeps the departure to itself
 * (no message), since spreading it would only race the death's news to
 * nodes that have not heard it yet, failing their fences with another
 * status; and a later fence still fails with the death's status. */
static void test_departed_after_death(void **state)
{
    net *w = net_new(4, 1, 0);
    outcome o[4], later;

    for (uint32_t i = 1; i < 4; i++)
        fence(w, i, NULL, 0, NULL, NULL, 0, &o[i]);
    net_run(w, false);
    px_hc_break(w->nodes[0].hc, 0, true, "a local process died");
    net_run(w, false);
    for (uint32_t i = 1; i < 4; i++)
        assert_int_equal(o[i].status, PMIX_ERR_PROC_TERM_WO_SYNC);
    px_hc_departed(w->nodes[1].hc, 1, true);
    assert_null(w->head); /* nothing sent */
    fence(w, 2, NULL, 0, NULL, NULL, 0, &later);
    assert_true(later.done);
    assert_int_equal(later.status, PMIX_ERR_PROC_TERM_WO_SYNC);
    net_free(w);
}

typedef struct gout {
    bool done;
    pmix_status_t status;
    bool has;
    uint64_t ctxid;
    char data[64];
    size_t len;
} gout;

static void group_cb(pmix_status_t status, bool has, uint64_t ctxid, const char *data, size_t ndata,
                     void *cbdata, pmix_release_cbfunc_t rel, void *arg)
{
    gout *o = cbdata;
    assert_false(o->done);
    *o = (gout){.done = true, .status = status, .has = has, .ctxid = ctxid};
    if (data != NULL && ndata < sizeof(o->data)) {
        memcpy(o->data, data, ndata);
        o->len = ndata;
    }
    if (rel != NULL)
        rel(arg);
}

static void group(net *w, uint32_t nd, pmix_group_operation_t op, const char *name,
                  const uint32_t *ranks, size_t n, const char *data, bool ctxid,
                  pmix_status_t local, gout *o)
{
    pmix_proc_t procs[16];
    for (size_t i = 0; i < n; i++)
        PMIx_Load_procid(&procs[i], "hcjob", ranks[i]);
    px_hc_group_req req = {.op = op,
                           .grp = name,
                           .procs = procs,
                           .nprocs = n,
                           .assign_ctxid = ctxid,
                           .local_status = local,
                           .data = data,
                           .ndata = data != NULL ? strlen(data) : 0};
    memset(o, 0, sizeof(*o));
    assert_int_equal(px_hc_group(w->nodes[nd].hc, &req, group_cb, o), PMIX_SUCCESS);
}

/* Group operations: a construct over members on three of four nodes
 * gathers every node's data in node order and one context id, made by the
 * lowest member node; a second group gets another id; a destruct asks
 * for none; a member node's local failure fails the construct on every
 * node; a group of a departed rank fails; a bad request is refused. */
static void test_groups(void **state)
{
    net *w = net_new(4, 2, 0);
    const uint32_t m[] = {3, 2, 7}; /* nodes 1, 1, 3: members in group order */
    const uint32_t m2[] = {0, 5};   /* nodes 0 and 2 */
    gout a[4], b[4], d[4];
    uint32_t nodes[] = {1, 3};

    group(w, 3, PMIX_GROUP_CONSTRUCT, "ocean", m, 3, "C", true, PMIX_SUCCESS, &a[3]);
    group(w, 1, PMIX_GROUP_CONSTRUCT, "ocean", m, 3, "AB", true, PMIX_SUCCESS, &a[1]);
    net_run(w, false);
    for (int i = 0; i < 2; i++) {
        gout *o = &a[nodes[i]];
        assert_true(o->done);
        assert_int_equal(o->status, PMIX_SUCCESS);
        assert_true(o->has);
        assert_int_equal(o->ctxid, (uint64_t)1 << 32 | 1); /* node 1's first */
        assert_int_equal(o->len, 3);
        assert_memory_equal(o->data, "ABC", 3);
    }
    assert_int_equal(w->nodes[3].ctxids, 0);
    /* another group over other nodes: node 0 makes its id */
    group(w, 0, PMIX_GROUP_CONSTRUCT, "ice", m2, 2, "x", true, PMIX_SUCCESS, &b[0]);
    group(w, 2, PMIX_GROUP_CONSTRUCT, "ice", m2, 2, "y", true, PMIX_SUCCESS, &b[2]);
    net_run(w, false);
    assert_int_equal(b[0].status, PMIX_SUCCESS);
    assert_int_equal(b[2].ctxid, b[0].ctxid);
    assert_int_equal(b[0].ctxid, (uint64_t)0 << 32 | 1);
    assert_memory_equal(b[2].data, "xy", 2);
    /* destruct: no id */
    group(w, 1, PMIX_GROUP_DESTRUCT, "ocean", m, 3, NULL, false, PMIX_SUCCESS, &d[1]);
    group(w, 3, PMIX_GROUP_DESTRUCT, "ocean", m, 3, NULL, false, PMIX_SUCCESS, &d[3]);
    net_run(w, false);
    assert_int_equal(d[1].status, PMIX_SUCCESS);
    assert_false(d[1].has);
    assert_int_equal(d[3].len, 0);
    /* a member of node 3 failed: the construct fails on node 1 too */
    group(w, 1, PMIX_GROUP_CONSTRUCT, "ocean", m, 3, "AB", true, PMIX_SUCCESS, &a[1]);
    group(w, 3, PMIX_GROUP_CONSTRUCT, "ocean", m, 3, NULL, true, PMIX_ERR_PROC_TERM_WO_SYNC, &a[3]);
    net_run(w, false);
    assert_int_equal(a[1].status, PMIX_GROUP_MEMBER_FAILED);
    assert_int_equal(a[3].status, PMIX_GROUP_MEMBER_FAILED);
    /* rank 7 finalized and left: a construct that names it fails at once,
     * as for a member that died (PMIX_GROUP_MEMBER_FAILED, not a fence's
     * PMIX_ERR_LOST_CONNECTION) */
    px_hc_departed(w->nodes[3].hc, 7, true);
    net_run(w, false);
    group(w, 1, PMIX_GROUP_CONSTRUCT, "ocean", m, 3, "AB", true, PMIX_SUCCESS, &a[1]);
    assert_int_equal(a[1].status, PMIX_GROUP_MEMBER_FAILED);
    /* bad requests */
    pmix_proc_t p;
    PMIx_Load_procid(&p, "hcjob", 1);
    px_hc_group_req bad = {.op = PMIX_GROUP_CONSTRUCT, .grp = NULL, .procs = &p, .nprocs = 1};
    assert_int_equal(px_hc_group(w->nodes[0].hc, &bad, group_cb, &a[0]), PMIX_ERR_BAD_PARAM);
    bad.grp = "g";
    bad.op = 99;
    assert_int_equal(px_hc_group(w->nodes[0].hc, &bad, group_cb, &a[0]), PMIX_ERR_BAD_PARAM);
    net_free(w);
}

/* Node 2 is lost while a fence runs and a direct modex waits on it: both
 * fail on the survivors (the fence with PMIX_ERR_PROC_TERM_WO_SYNC, the
 * request with PMIX_ERR_UNREACH), and a new request to it fails at once. */
static void test_node_lost(void **state)
{
    net *w = net_new(4, 2, 0);
    outcome o[4], get, again;
    pmix_proc_t p;

    for (uint32_t i = 0; i < 4; i++)
        if (i != 2)
            fence(w, i, NULL, 0, "d", NULL, 0, &o[i]);
    w->down[2] = true; /* the request to node 2 goes, but nothing comes back */
    PMIx_Load_procid(&p, "hcjob", 5);
    memset(&get, 0, sizeof(get));
    assert_int_equal(px_hc_dmodex(w->nodes[0].hc, &p, NULL, 0, fence_cb, &get), PMIX_ERR_UNREACH);
    w->down[2] = false;
    assert_int_equal(px_hc_dmodex(w->nodes[0].hc, &p, NULL, 0, fence_cb, &get), PMIX_SUCCESS);
    w->down[2] = true;
    net_run(w, false);
    assert_false(get.done);
    for (uint32_t i = 0; i < 4; i++)
        if (i != 2)
            px_hc_node_lost(w->nodes[i].hc, 2);
    net_run(w, true);
    assert_true(get.done);
    assert_int_equal(get.status, PMIX_ERR_UNREACH);
    for (uint32_t i = 0; i < 4; i++) {
        if (i == 2)
            continue;
        assert_true(o[i].done);
        assert_int_equal(o[i].status, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
    memset(&again, 0, sizeof(again));
    assert_int_equal(px_hc_dmodex(w->nodes[1].hc, &p, NULL, 0, fence_cb, &again), PMIX_ERR_UNREACH);
    w->down[2] = false;
    net_free(w);
}

/* Direct modex: a rank of another node comes back from its node; one of
 * this node (or of another namespace) is the server's own business. */
static void test_dmodex(void **state)
{
    net *w = net_new(3, 2, 0);
    outcome get;
    pmix_proc_t p;

    PMIx_Load_procid(&p, "hcjob", 5);
    memset(&get, 0, sizeof(get));
    assert_int_equal(px_hc_dmodex(w->nodes[0].hc, &p, NULL, 0, fence_cb, &get), PMIX_SUCCESS);
    net_run(w, false);
    assert_true(get.done);
    assert_int_equal(get.status, PMIX_SUCCESS);
    assert_int_equal(get.len, strlen("rank5@2"));
    assert_memory_equal(get.data, "rank5@2", get.len);
    PMIx_Load_procid(&p, "hcjob", 1);
    assert_int_equal(px_hc_dmodex(w->nodes[0].hc, &p, NULL, 0, fence_cb, &get), PMIX_ERR_NOT_FOUND);
    PMIx_Load_procid(&p, "other", 5);
    assert_int_equal(px_hc_dmodex(w->nodes[0].hc, &p, NULL, 0, fence_cb, &get), PMIX_ERR_NOT_FOUND);
    net_free(w);
}

/* A second job over the same nodes (a spawned namespace): unknown until
 * px_hc_job_add, then its fence runs among its own nodes only, a Get of
 * its rank goes to that rank's node, a group over both namespaces spans
 * the nodes of both, and its departed process fails its later fences on
 * every node (not the first job's); once removed it is unknown again. */
static void test_second_job(void **state)
{
    net *w = net_new(3, 2, 0);
    static const uint32_t child_node[] = {2, 0};
    outcome f[3], get;
    gout g[3];
    pmix_proc_t p[2];

    (void)state;
    PMIx_Load_procid(&p[0], "hcjob.s1", PMIX_RANK_WILDCARD);
    assert_int_equal(px_hc_fence(w->nodes[0].hc, p, 1, NULL, 0, NULL, 0, fence_cb, &f[0]),
                     PMIX_ERR_NOT_SUPPORTED);
    PMIx_Load_procid(&p[0], "hcjob.s1", 0);
    assert_int_equal(px_hc_dmodex(w->nodes[1].hc, &p[0], NULL, 0, fence_cb, &get),
                     PMIX_ERR_NOT_FOUND);
    w->child = (px_jobmap){.nspace = "hcjob.s1", .nprocs = 2, .nnodes = 3, .rank_node = child_node};
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(px_hc_job_add(w->nodes[i].hc, &w->child), PMIX_SUCCESS);
    assert_int_equal(px_hc_job_add(w->nodes[0].hc, &w->child), PMIX_ERR_BAD_PARAM);
    px_jobmap wide = {.nspace = "hcjob.s2", .nprocs = 2, .nnodes = 4};
    assert_int_equal(px_hc_job_add(w->nodes[0].hc, &wide), PMIX_ERR_BAD_PARAM);

    /* the child's fence: nodes 0 and 2, data in node order */
    PMIx_Load_procid(&p[0], "hcjob.s1", PMIX_RANK_WILDCARD);
    for (uint32_t nd = 0; nd < 3; nd += 2) {
        memset(&f[nd], 0, sizeof(f[nd]));
        assert_int_equal(
            px_hc_fence(w->nodes[nd].hc, p, 1, NULL, 0, nd == 0 ? "a" : "b", 1, fence_cb, &f[nd]),
            PMIX_SUCCESS);
    }
    net_run(w, false);
    for (uint32_t nd = 0; nd < 3; nd += 2) {
        assert_true(f[nd].done);
        assert_int_equal(f[nd].status, PMIX_SUCCESS);
    }

    /* a Get of child rank 0 from node 1 goes to node 2 */
    PMIx_Load_procid(&p[0], "hcjob.s1", 0);
    memset(&get, 0, sizeof(get));
    assert_int_equal(px_hc_dmodex(w->nodes[1].hc, &p[0], NULL, 0, fence_cb, &get), PMIX_SUCCESS);
    net_run(w, false);
    assert_true(get.done);
    assert_int_equal(get.status, PMIX_SUCCESS);
    assert_memory_equal(get.data, "rank0@2", strlen("rank0@2"));

    /* parent rank 2 (node 1) and the whole child (nodes 0, 2): all three */
    PMIx_Load_procid(&p[0], "hcjob", 2);
    PMIx_Load_procid(&p[1], "hcjob.s1", PMIX_RANK_WILDCARD);
    for (uint32_t nd = 0; nd < 3; nd++) {
        px_hc_group_req req = {.op = PMIX_GROUP_CONSTRUCT,
                               .grp = "pmix.connect.x",
                               .procs = p,
                               .nprocs = 2,
                               .data = "x",
                               .ndata = 1};
        memset(&g[nd], 0, sizeof(g[nd]));
        assert_int_equal(px_hc_group(w->nodes[nd].hc, &req, group_cb, &g[nd]), PMIX_SUCCESS);
        if (nd < 2)
            assert_false(g[nd].done); /* it waits for node 2 */
    }
    net_run(w, false);
    for (uint32_t nd = 0; nd < 3; nd++) {
        assert_true(g[nd].done);
        assert_int_equal(g[nd].status, PMIX_SUCCESS);
    }

    /* child rank 1 (node 0) finalizes and exits after the first fence:
     * node 2's next fence of the child fails, a first-job fence runs */
    PMIx_Load_procid(&p[0], "hcjob.s1", 1);
    px_hc_departed_proc(w->nodes[0].hc, &p[0], true);
    net_run(w, false);
    PMIx_Load_procid(&p[0], "hcjob.s1", PMIX_RANK_WILDCARD);
    memset(&f[2], 0, sizeof(f[2]));
    assert_int_equal(px_hc_fence(w->nodes[2].hc, p, 1, NULL, 0, NULL, 0, fence_cb, &f[2]),
                     PMIX_SUCCESS);
    net_run(w, false);
    assert_true(f[2].done);
    assert_int_equal(f[2].status, PMIX_ERR_LOST_CONNECTION);
    for (uint32_t nd = 0; nd < 3; nd++)
        fence(w, nd, NULL, 0, NULL, NULL, 0, &f[nd]);
    net_run(w, false);
    for (uint32_t nd = 0; nd < 3; nd++)
        assert_int_equal(f[nd].status, PMIX_SUCCESS);

    for (uint32_t i = 0; i < 3; i++)
        px_hc_job_remove(w->nodes[i].hc, "hcjob.s1");
    PMIx_Load_procid(&p[0], "hcjob.s1", PMIX_RANK_WILDCARD);
    assert_int_equal(px_hc_fence(w->nodes[0].hc, p, 1, NULL, 0, NULL, 0, fence_cb, &f[0]),
                     PMIX_ERR_NOT_SUPPORTED);
    net_free(w);
}

/* An answer that cannot go becomes an error answer; an error answer
 * refused for want of memory is sent again from a timer; after the tries,
 * the link to the requester is dropped. */
static void test_dmodex_answer_refused(void **state)
{
    net *w = net_new(2, 1, 3);
    outcome get;
    pmix_proc_t p;

    PMIx_Load_procid(&p, "hcjob", 1);
    w->refuse_reps = 3; /* the data, then two error answers */
    memset(&get, 0, sizeof(get));
    assert_int_equal(px_hc_dmodex(w->nodes[0].hc, &p, NULL, 0, fence_cb, &get), PMIX_SUCCESS);
    net_run(w, true);
    assert_true(get.done);
    assert_int_equal(get.status, PMIX_ERR_NOMEM);
    assert_int_equal(w->nodes[1].drops, 0);

    w->refuse_reps = 100; /* never: given up after 3 tries */
    memset(&get, 0, sizeof(get));
    assert_int_equal(px_hc_dmodex(w->nodes[0].hc, &p, NULL, 0, fence_cb, &get), PMIX_SUCCESS);
    net_run(w, true);
    assert_int_equal(w->nodes[1].drops, 1);
    assert_false(get.done); /* the adapter's drop ends it (px_hc_node_lost) */
    px_hc_node_lost(w->nodes[0].hc, 1);
    assert_true(get.done);
    assert_int_equal(get.status, PMIX_ERR_UNREACH);
    net_free(w);
}

/* A node whose processes never fence: PMIX_TIMEOUT ends the fence on the
 * others with PMIX_ERR_TIMEOUT, never a hang. */
static void test_timeout(void **state)
{
    net *w = net_new(3, 1, 0);
    outcome o[3];

    fence(w, 0, NULL, 0, NULL, NULL, 2, &o[0]);
    fence(w, 1, NULL, 0, NULL, NULL, 2, &o[1]);
    net_run(w, true);
    assert_true(o[0].done && o[1].done);
    assert_int_equal(o[0].status, PMIX_ERR_TIMEOUT);
    assert_int_equal(o[1].status, PMIX_ERR_TIMEOUT);
    assert_true(w->now >= 2.0);
    net_free(w);
}

/* Malformed messages change nothing: short, unknown kind, a news of a
 * death from outside the job, and a real collective message whose member
 * runs go past the job, are not ascending, or leave this node out; the
 * message as it was sent is then taken. */
static void test_malformed(void **state)
{
    net *w = net_new(4, 1, 0);
    px_hc *hc = w->nodes[1].hc;
    uint8_t junk[64] = {0}, *bad;
    outcome o[4];
    msg *m = NULL;

    assert_int_equal(px_hc_deliver(hc, 0, junk, 0), PMIX_ERR_BAD_PARAM);
    junk[0] = 9;
    assert_int_equal(px_hc_deliver(hc, 0, junk, 8), PMIX_ERR_BAD_PARAM);
    junk[0] = PX_HC_BROKEN;
    junk[1] = 7; /* origin outside the job */
    assert_int_equal(px_hc_deliver(hc, 0, junk, 9), PMIX_ERR_BAD_PARAM);
    assert_false(px_hc_broken(hc));
    assert_int_equal(px_hc_deliver(hc, 9, junk, 9), PMIX_ERR_BAD_PARAM); /* no such sender */
    /* departures: one record announced, none there; a record from a node
     * outside the job; a record of a rank outside the job */
    memset(junk, 0, sizeof(junk));
    junk[0] = PX_HC_DEPARTED;
    junk[1] = 1;
    assert_int_equal(px_hc_deliver(hc, 0, junk, 5), PMIX_ERR_BAD_PARAM);
    junk[5] = 7;
    assert_int_equal(px_hc_deliver(hc, 0, junk, 17), PMIX_ERR_BAD_PARAM);
    junk[5] = 0;
    junk[9] = 9;
    assert_int_equal(px_hc_deliver(hc, 0, junk, 17), PMIX_ERR_BAD_PARAM);
    junk[9] = 0;
    junk[13] = 1; /* one set announced, none there */
    assert_int_equal(px_hc_deliver(hc, 0, junk, 17), PMIX_ERR_BAD_PARAM);
    junk[0] = 9;

    /* node 0's first message of a whole-job barrier to node 1 */
    fence(w, 0, NULL, 0, NULL, "dissemination", 0, &o[0]);
    for (msg *x = w->head; x != NULL; x = x->next)
        if (x->to == 1 && m == NULL)
            m = x;
    assert_non_null(m);
    assert_int_equal(((uint8_t *)m->data)[0], PX_HC_COLL);
    bad = malloc(m->len + 8);
    assert_non_null(bad);
    memcpy(bad, m->data, m->len);
    bad[9] = 5; /* one run of 5 nodes from 0: past the job */
    assert_int_equal(px_hc_deliver(hc, 0, bad, m->len), PMIX_ERR_BAD_PARAM);
    bad[5] = 2; /* from node 2, 2 nodes: leaves node 1 out */
    bad[9] = 2;
    assert_int_equal(px_hc_deliver(hc, 0, bad, m->len), PMIX_ERR_BAD_PARAM);
    /* two runs, the second before the first: 2..3 then 0..1 */
    memcpy(bad, m->data, 1);
    memset(bad + 1, 0, 20);
    bad[1] = 2;
    bad[5] = 2, bad[9] = 2, bad[13] = 0, bad[17] = 2;
    memcpy(bad + 21, (uint8_t *)m->data + 13, m->len - 13);
    assert_int_equal(px_hc_deliver(hc, 0, bad, m->len + 8), PMIX_ERR_BAD_PARAM);
    free(bad);
    /* nothing was made of them: the fence runs as if they never came */
    for (uint32_t i = 1; i < 4; i++)
        fence(w, i, NULL, 0, NULL, "dissemination", 0, &o[i]);
    net_run(w, false);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(o[i].status, PMIX_SUCCESS);
    net_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sets_pair),
        cmocka_unit_test(test_subset),
        cmocka_unit_test(test_bad_key_in_step),
        cmocka_unit_test(test_break_spreads),
        cmocka_unit_test(test_departed),
        cmocka_unit_test(test_departed_after_death),
        cmocka_unit_test(test_departures_batched),
        cmocka_unit_test(test_departure_queued_then_death),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_node_lost),
        cmocka_unit_test(test_dmodex),
        cmocka_unit_test(test_dmodex_answer_refused),
        cmocka_unit_test(test_second_job),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
