/*
 * test_coll_faults.c - a member dies at every round of every algorithm;
 * no survivor may wait forever, and each ends within a bound.
 *
 * For each variant and member count, a dry run counts the data messages
 * each member sends in one epoch. Then for every k from 0 to that count, a
 * member d that sends at least k messages dies instead of making its k-th
 * send (k = 0: before its first; k = its count: after the whole epoch, at
 * the first send of the next one). Every member runs two epochs. Three
 * ways to learn about it, rotating with k:
 *
 *   REPORT  no timeouts; px_coll_peer_failed(d) is told to ONE survivor,
 *           at a random time up to 20 message delays after the death;
 *   SILENT  nobody is told; every member has a timeout T;
 *   BOTH    a timeout, reports to a random subset of survivors at random
 *           times, and the network refuses sends to d (as TCP would).
 *
 * Checks: the event queue drains (a member still waiting without a timer
 * would leave its epoch undone); every survivor completes both epochs;
 * epoch 2 fails everywhere (d never contributes); an epoch-1 success
 * carries the right result; when d died before sending anything
 * (k = 0) every survivor fails epoch 1 too; statuses match the mode
 * (PMIX_ERR_PROC_TERM_WO_SYNC for reports, PMIX_ERR_TIMEOUT for silence);
 * and every failure comes within the bound:
 *
 *   reported: max(start, first report + 2 ceil(lg n) dmax): the ABORT
 *             flood needs at most 2 ceil(lg n) hops of at most dmax;
 *   silent:   max start of the epoch + (rounds + 1) dmax + T: progress
 *             stops within the rounds of the critical path, then the
 *             watchdog fires T later.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collnet.h"

#define MAXN 64
#define DMIN 0.001
#define DMAX 0.010
#define TIMEOUT 1.0
#define EPS 1e-9

enum {
    REPORT,
    SILENT,
    BOTH
};

typedef struct variant {
    const char *value;
    px_coll_kind kind;
    int groups;
} variant;

static const variant variants[] = {
    {"dissemination", PX_COLL_BARRIER, COLLG_FLAT},
    {"tree", PX_COLL_BARRIER, COLLG_FLAT},
    {"tree:3", PX_COLL_BARRIER, COLLG_FLAT},
    {"recdbl", PX_COLL_BARRIER, COLLG_FLAT},
    {"hier:dissemination", PX_COLL_BARRIER, COLLG_RUNS3},
    {"ring", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"recdbl", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"bruck", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"tree", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"tree:4", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"hier", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"hier:ring", PX_COLL_ALLGATHER, COLLG_RUNS3},
    {"hier:bruck", PX_COLL_ALLGATHER, COLLG_RR5},
    {"hier:recdbl", PX_COLL_ALLGATHER, COLLG_RANDOM},
    {"hier:tree:3", PX_COLL_ALLGATHER, COLLG_SINGLE},
    {"hier:tree", PX_COLL_BARRIER, COLLG_RR5},
};

static const uint32_t sizes[] = {2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                 13, 14, 15, 16, 17, 31, 32, 33, 63, 64};

typedef struct fault fault;

typedef struct report {
    fault *f;
    uint32_t to;
} report;

struct fault {
    const variant *v;
    px_coll_choice ch;
    uint32_t n;
    const px_coll_groups *g;
    int mode;
    uint32_t victim;
    double t_kill, t_report; /* first report; -1 none */
    uint32_t reported[MAXN];
    uint32_t nreported;
    collnet *w;
    uint64_t sends[MAXN]; /* dry run: data messages per member per epoch */
    report reports[MAXN];
};

static void args_of(void *arg, uint32_t m, uint32_t epoch, px_coll_args *a)
{
    fault *f = arg;

    a->kind = f->v->kind;
    a->choice = f->ch;
    a->timeout = f->mode == REPORT ? 0 : TIMEOUT;
}

static void do_report(void *arg)
{
    report *r = arg;
    fault *f = r->f;

    if (f->t_report < 0 || collnet_now(f->w) < f->t_report) {
        f->t_report = collnet_now(f->w);
    }
    px_coll_peer_failed(collnet_coll(f->w, r->to), f->victim);
}

static void on_kill(void *arg, collnet *w, uint32_t m)
{
    fault *f = arg;

    f->t_kill = collnet_now(w);
    if (f->mode == SILENT) {
        return;
    }
    f->nreported = 0;
    if (f->mode == REPORT) {
        uint32_t to = (uint32_t)(collnet_rand(w) % (f->n - 1));
        f->reported[f->nreported++] = to >= m ? to + 1 : to;
    } else {
        for (uint32_t s = 0; s < f->n; s++) {
            if (s != m && collnet_rand(w) % 3 == 0) {
                f->reported[f->nreported++] = s;
            }
        }
        if (f->nreported == 0) {
            f->reported[f->nreported++] = (m + 1) % f->n;
        }
    }
    for (uint32_t i = 0; i < f->nreported; i++) {
        f->reports[i].f = f;
        f->reports[i].to = f->reported[i];
        collnet_call_at(w, collnet_now(w) + collnet_uniform(w, 0, 20 * DMAX), do_report,
                        &f->reports[i]);
    }
}

static uint32_t ceil_lg(uint32_t n)
{
    uint32_t l = 0;
    while ((1u << l) < n) {
        l++;
    }
    return l;
}

/* One failure-free epoch: how many data messages each member sends. */
static void dry_run(fault *f)
{
    collnet_cfg nc = {0};
    collsess_cfg sc = {0};
    collnet *w;
    collsess *s;

    nc.n = f->n;
    nc.seed = 1;
    nc.dmin = DMIN;
    nc.dmax = DMAX;
    nc.groups = f->g;
    w = collnet_create(&nc);
    sc.epochs = 1;
    sc.maxlen = 8;
    sc.seed = 1;
    sc.args = args_of;
    sc.arg = f;
    s = collsess_create(w, &sc);
    f->mode = REPORT;
    collsess_go(s);
    collnet_run(w, (size_t)10 * 1000 * 1000);
    for (uint32_t m = 0; m < f->n; m++) {
        assert_true(collsess_rec(s, m, 1)->done);
        f->sends[m] = collnet_data_sent(w, m);
    }
    collsess_destroy(s);
    collnet_destroy(w);
}

/* Outcomes per mode over a test, to prove both kinds happen. */
static unsigned long n_ok[3], n_err[3];

static void check_run(fault *f, collsess *s, uint32_t k)
{
    px_coll_choice res;
    uint32_t rounds, L = ceil_lg(f->n);
    double start_max[3] = {0, 0, 0};
    const char *what = f->v->value;

    assert_int_equal(px_coll_resolve(&f->ch, f->v->kind, f->n, 0, f->g, &res), PMIX_SUCCESS);
    rounds = px_coll_rounds(&res, f->n, f->g);
    assert_true(collnet_dead(f->w, f->victim));
    for (uint32_t e = 1; e <= 2; e++) {
        for (uint32_t m = 0; m < f->n; m++) {
            collrec *rec = collsess_rec(s, m, e);
            if (m != f->victim && rec->t_start > start_max[e]) {
                start_max[e] = rec->t_start;
            }
        }
    }
    for (uint32_t m = 0; m < f->n; m++) {
        if (m == f->victim) {
            continue;
        }
        for (uint32_t e = 1; e <= 2; e++) {
            collrec *rec = collsess_rec(s, m, e);
            double bound;
            if (!rec->done) {
                fail_msg("%s n=%u k=%u mode %d victim %u: member %u never completed epoch %u "
                         "(started %d)",
                         what, f->n, k, f->mode, f->victim, m, e, rec->started);
            }
            assert_int_equal(rec->start_rc, PMIX_SUCCESS);
            if (rec->status == PMIX_SUCCESS) {
                if (e == 2 || k == 0 || !rec->result_ok) {
                    fail_msg("%s n=%u k=%u mode %d victim %u: member %u epoch %u succeeded "
                             "(result ok %d)",
                             what, f->n, k, f->mode, f->victim, m, e, rec->result_ok);
                }
                n_ok[f->mode]++;
                continue;
            }
            n_err[f->mode]++;
            if (f->mode == REPORT) {
                assert_int_equal(rec->status, PMIX_ERR_PROC_TERM_WO_SYNC);
            } else if (f->mode == SILENT) {
                assert_int_equal(rec->status, PMIX_ERR_TIMEOUT);
            } else if (rec->status != PMIX_ERR_TIMEOUT) {
                assert_int_equal(rec->status, PMIX_ERR_PROC_TERM_WO_SYNC);
            }
            if (f->mode == SILENT) {
                bound = start_max[e] + (rounds + 1) * DMAX + TIMEOUT;
            } else {
                bound = f->t_report + 2 * L * DMAX;
                if (rec->t_start > bound) {
                    bound = rec->t_start;
                }
            }
            if (rec->t_done > bound + EPS) {
                fail_msg("%s n=%u k=%u mode %d: member %u epoch %u ended at %.6f, bound %.6f", what,
                         f->n, k, f->mode, m, e, rec->t_done, bound);
            }
        }
        assert_int_equal(collnet_live_timers(f->w, m), 0);
        assert_false(px_coll_busy(collnet_coll(f->w, m)));
    }
}

static void one_fault(fault *f, uint32_t k, uint64_t seed)
{
    collnet_cfg nc = {0};
    collsess_cfg sc = {0};
    collsess *s;
    uint32_t eligible = 0, pick;

    for (uint32_t m = 0; m < f->n; m++) {
        eligible += f->sends[m] >= k;
    }
    assert_true(eligible > 0);
    pick = (uint32_t)((seed * 2654435761u) % eligible);
    for (uint32_t m = 0; m < f->n; m++) {
        if (f->sends[m] >= k && pick-- == 0) {
            f->victim = m;
            break;
        }
    }
    f->mode = (int)((k + f->n) % 3);
    f->t_report = -1;
    f->nreported = 0;

    nc.n = f->n;
    nc.seed = seed;
    nc.dmin = DMIN;
    nc.dmax = DMAX;
    nc.pdup = 0.1;
    nc.refuse_dead = f->mode == BOTH;
    nc.id = seed;
    nc.groups = f->g;
    nc.on_kill = on_kill;
    nc.arg = f;
    f->w = collnet_create(&nc);
    collnet_die_at_send(f->w, f->victim, k);

    sc.epochs = 2;
    sc.maxlen = 16;
    sc.seed = seed;
    sc.spread = 0.02;
    sc.gap = (k % 2) ? 0 : 0.005;
    sc.args = args_of;
    sc.arg = f;
    s = collsess_create(f->w, &sc);
    collsess_go(s);
    collnet_run(f->w, (size_t)50 * 1000 * 1000);
    assert_int_equal(collnet_pending(f->w), 0);
    check_run(f, s, k);
    collsess_destroy(s);
    collnet_destroy(f->w);
    f->w = NULL;
}

static void faults_of(const variant *v, uint64_t salt)
{
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        fault f;
        uint64_t most = 0;
        char err[256];

        memset(&f, 0, sizeof(f));
        f.v = v;
        f.n = sizes[i];
        if (px_coll_parse(v->kind, v->value, &f.ch, err, sizeof(err)) != PMIX_SUCCESS) {
            fail_msg("%s", err);
        }
        f.g = collnet_make_groups(v->groups, f.n, 3 + f.n);
        dry_run(&f);
        for (uint32_t m = 0; m < f.n; m++) {
            most = f.sends[m] > most ? f.sends[m] : most;
        }
        for (uint32_t k = 0; k <= most; k++) {
            one_fault(&f, k, salt * 1000003 + f.n * 101 + k);
            if (f.n <= 17) {
                one_fault(&f, k, salt * 1000033 + f.n * 103 + k + 7);
            }
        }
        px_coll_groups_destroy((px_coll_groups *)f.g);
    }
}

static void check_outcomes(void)
{
    for (int mode = 0; mode < 3; mode++) {
        assert_true(n_ok[mode] > 0);
        assert_true(n_err[mode] > 0);
        n_ok[mode] = n_err[mode] = 0;
    }
}

static void test_barrier_faults(void **state)
{
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        if (variants[i].kind == PX_COLL_BARRIER) {
            faults_of(&variants[i], i + 1);
        }
    }
    check_outcomes();
}

static void test_allgather_faults(void **state)
{
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        if (variants[i].kind == PX_COLL_ALLGATHER) {
            faults_of(&variants[i], i + 1);
        }
    }
    check_outcomes();
}

/* Two members die, each reported to one (other) survivor. A notice may be
 * forwarded to the second dead member before anybody knows it is dead;
 * the second report is news, so members forward again, around it. Two
 * failed members can also hide each other from their only reporters
 * (notice.c), so this runs either on a network that refuses sends to dead
 * members, as TCP does (no timeouts: bound last report + 2 ceil(lg n)
 * dmax), or with timeouts (bound: the silent one, checked loosely here). */
typedef struct two two;

typedef struct two_rep {
    two *t;
    uint32_t to, victim;
} two_rep;

struct two {
    uint32_t n, victims[2];
    collnet *w;
    double t_last;
    two_rep rep[2];
    px_coll_choice ch;
    px_coll_kind kind;
    bool refuse; /* else: timeouts */
};

static void two_args(void *arg, uint32_t m, uint32_t epoch, px_coll_args *a)
{
    two *t = arg;

    a->kind = t->kind;
    a->choice = t->ch;
    a->timeout = t->refuse ? 0 : TIMEOUT;
}

static void two_report(void *arg)
{
    two_rep *r = arg;

    r->t->t_last = collnet_now(r->t->w);
    px_coll_peer_failed(collnet_coll(r->t->w, r->to), r->victim);
}

static void two_kill(void *arg, collnet *w, uint32_t m)
{
    two *t = arg;
    int i = m == t->victims[0] ? 0 : 1;
    uint32_t to;

    do {
        to = (uint32_t)(collnet_rand(w) % t->n);
    } while (to == t->victims[0] || to == t->victims[1]);
    t->rep[i].t = t;
    t->rep[i].to = to;
    t->rep[i].victim = m;
    collnet_call_at(w, collnet_now(w) + collnet_uniform(w, 0, 10 * DMAX), two_report, &t->rep[i]);
}

static void test_two_failures(void **state)
{
    static const uint32_t ns[] = {5, 9, 16, 33, 64};

    for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
        for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
            for (uint64_t seed = 1; seed <= 6; seed++) {
                two t;
                collnet_cfg nc = {0};
                collsess_cfg sc = {0};
                collsess *s;
                px_coll_groups *g;

                memset(&t, 0, sizeof(t));
                t.n = ns[i];
                t.kind = variants[v].kind;
                assert_int_equal(px_coll_parse(t.kind, variants[v].value, &t.ch, NULL, 0),
                                 PMIX_SUCCESS);
                g = collnet_make_groups(variants[v].groups, t.n, seed);
                nc.n = t.n;
                nc.seed = seed * 7919 + v * 31 + i;
                nc.dmin = DMIN;
                nc.dmax = DMAX;
                nc.pdup = 0.1;
                nc.groups = g;
                nc.on_kill = two_kill;
                nc.arg = &t;
                t.refuse = seed % 2;
                nc.refuse_dead = t.refuse;
                t.w = collnet_create(&nc);
                t.victims[0] = (uint32_t)(collnet_rand(t.w) % t.n);
                do {
                    t.victims[1] = (uint32_t)(collnet_rand(t.w) % t.n);
                } while (t.victims[1] == t.victims[0]);
                /* Every member sends at least once per epoch. */
                collnet_die_at_send(t.w, t.victims[0], collnet_rand(t.w) % 2);
                collnet_die_at_send(t.w, t.victims[1], collnet_rand(t.w) % 2);
                sc.epochs = 2;
                sc.maxlen = 8;
                sc.seed = seed;
                sc.spread = 0.02;
                sc.args = two_args;
                sc.arg = &t;
                s = collsess_create(t.w, &sc);
                collsess_go(s);
                collnet_run(t.w, 10 * 1000 * 1000);
                assert_int_equal(collnet_pending(t.w), 0);
                /* The second may never make its k-th send: the first death can
                 * end both epochs before it does; it is a survivor then. */
                assert_true(collnet_dead(t.w, t.victims[0]) || collnet_dead(t.w, t.victims[1]));
                for (uint32_t m = 0; m < t.n; m++) {
                    if (collnet_dead(t.w, m)) {
                        continue;
                    }
                    for (uint32_t e = 1; e <= 2; e++) {
                        collrec *rec = collsess_rec(s, m, e);
                        double base = rec->t_start > t.t_last ? rec->t_start : t.t_last;
                        double bound = t.refuse ? base + 2 * ceil_lg(t.n) * DMAX
                                                : rec->t_start + 2 * TIMEOUT + t.n * DMAX;
                        if (!rec->done || (e == 2 && rec->status == PMIX_SUCCESS) ||
                            (rec->status == PMIX_SUCCESS && !rec->result_ok) ||
                            (rec->status != PMIX_SUCCESS && rec->t_done > bound + EPS) ||
                            (t.refuse && rec->status != PMIX_SUCCESS &&
                             rec->status != PMIX_ERR_PROC_TERM_WO_SYNC)) {
                            fail_msg("%s n=%u victims %u %u: member %u epoch %u done %d status "
                                     "%d at %.4f (last report %.4f)",
                                     variants[v].value, t.n, t.victims[0], t.victims[1], m, e,
                                     rec->done, rec->status, rec->t_done, t.t_last);
                        }
                    }
                }
                collsess_destroy(s);
                collnet_destroy(t.w);
                px_coll_groups_destroy(g);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_barrier_faults, teardown_leaks),
        cmocka_unit_test_teardown(test_allgather_faults, teardown_leaks),
        cmocka_unit_test_teardown(test_two_failures, teardown_leaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
