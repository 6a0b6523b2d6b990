/*
 * test_coll_algos.c - every collective algorithm of coll/, failure-free,
 * on the simulated network (collnet.c): random delivery order, duplicated
 * and delayed messages, back-to-back epochs with members racing ahead.
 *
 * For every variant (algorithm, parameters, groups) and every member count
 * 1..64, each member runs three epochs; every allgather result must equal
 * the contributions (variable sizes, a fifth of them empty) in member
 * order, every member must complete every epoch, nothing may stay queued
 * or armed, and the data messages of each epoch must be exactly the
 * textbook count, computed here independently of coll/ (and equal to what
 * px_coll_messages says). Symmetric algorithms are also checked per
 * member: dissemination and Bruck send ceil(lg n) messages each, the ring
 * n - 1.
 *
 * The seeds are fixed: every run replays exactly.
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

#define MAXN 4096
#define MAXEPOCHS 16

typedef struct variant {
    const char *value; /* as PMIXLAB_*_ALGO takes it */
    px_coll_kind kind;
    int groups;
} variant;

static const variant barriers[] = {
    {"dissemination", PX_COLL_BARRIER, COLLG_FLAT}, {"tree", PX_COLL_BARRIER, COLLG_FLAT},
    {"tree:3", PX_COLL_BARRIER, COLLG_FLAT},        {"tree:8", PX_COLL_BARRIER, COLLG_FLAT},
    {"recdbl", PX_COLL_BARRIER, COLLG_FLAT},        {"hier", PX_COLL_BARRIER, COLLG_FLAT},
    {"hier", PX_COLL_BARRIER, COLLG_RUNS3},         {"hier:tree:3", PX_COLL_BARRIER, COLLG_RR5},
    {"hier:recdbl", PX_COLL_BARRIER, COLLG_RANDOM},
};

static const variant allgathers[] = {
    {"ring", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"recdbl", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"bruck", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"tree", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"tree:4", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"hier", PX_COLL_ALLGATHER, COLLG_FLAT},
    {"hier:ring", PX_COLL_ALLGATHER, COLLG_RUNS3},
    {"hier:bruck", PX_COLL_ALLGATHER, COLLG_RR5},
    {"hier:recdbl:3", PX_COLL_ALLGATHER, COLLG_RANDOM},
    {"hier:tree:2", PX_COLL_ALLGATHER, COLLG_SINGLE},
    {"hier:ring:one", PX_COLL_ALLGATHER, COLLG_RUNS3},
};

/* ---- textbook counts, computed here, not by coll/ ---- */

static uint64_t lg_up(uint64_t n)
{
    uint64_t l = 0;
    while ((1ULL << l) < n) {
        l++;
    }
    return l;
}

static uint64_t flat_count(const char *name, uint64_t n)
{
    uint64_t p = 1;

    while (p * 2 <= n) {
        p *= 2;
    }
    if (strcmp(name, "dissemination") == 0 || strcmp(name, "bruck") == 0) {
        return n * lg_up(n);
    }
    if (strcmp(name, "tree") == 0) {
        return 2 * (n - 1);
    }
    if (strcmp(name, "recdbl") == 0) {
        return p * lg_up(p) + 2 * (n - p);
    }
    if (strcmp(name, "ring") == 0) {
        return n * (n - 1);
    }
    fail_msg("no count for %s", name);
    return 0;
}

static uint64_t textbook(const px_coll_choice *ch, uint64_t n, const px_coll_groups *g)
{
    const char *name = px_coll_algo_name(ch->algo);

    if (strcmp(name, "hier") == 0 && ch->leaders == PX_COLL_LEADERS_ALL) {
        /* even groups: c columns of G members, then G groups of c (Bruck) */
        uint64_t ngroups = px_coll_groups_count(g), c = n / ngroups;
        assert_int_equal(c * ngroups, n);
        return c * flat_count(px_coll_algo_name(ch->inner), ngroups) +
               ngroups * flat_count("bruck", c);
    }
    if (strcmp(name, "hier") == 0) {
        uint64_t ngroups = px_coll_groups_count(g);
        return 2 * (n - ngroups) + flat_count(px_coll_algo_name(ch->inner), ngroups);
    }
    return flat_count(name, n);
}

/* ---- one run ---- */

typedef struct run {
    const variant *v;
    px_coll_choice ch; /* parsed */
    uint32_t n;
    const px_coll_groups *g;
    uint64_t per_epoch[MAXEPOCHS + 1];
    uint64_t per_member[MAXEPOCHS + 1][MAXN];
    uint64_t notices;
    /* mixed runs: the variant of each epoch */
    const variant *const *seq;
    px_coll_choice seq_ch[MAXEPOCHS + 1];
    uint32_t slow; /* member that starts each epoch late (race test) */
    bool race;
} run;

static void on_send(void *arg, uint32_t from, uint32_t to, const px_coll_msg_info *h, size_t len)
{
    run *r = arg;

    if (h->type != 1) {
        r->notices++;
        return;
    }
    assert_true(h->epoch >= 1 && h->epoch <= MAXEPOCHS);
    r->per_epoch[h->epoch]++;
    r->per_member[h->epoch][from]++;
}

static void args_of(void *arg, uint32_t m, uint32_t epoch, px_coll_args *a)
{
    run *r = arg;

    if (r->seq != NULL) {
        a->kind = r->seq[epoch]->kind;
        a->choice = r->seq_ch[epoch];
    } else {
        a->kind = r->v->kind;
        a->choice = r->ch;
    }
}

static double gap_of(void *arg, uint32_t m, uint32_t epoch)
{
    run *r = arg;

    /* Everybody races into the next epoch from inside the callback, except
     * one slow member, who gives the others time to run ahead. */
    return m == r->slow ? 0.05 : 0;
}

static void parse_or_fail(const variant *v, px_coll_choice *ch)
{
    char err[512];

    if (px_coll_parse(v->kind, v->value, ch, err, sizeof(err)) != PMIX_SUCCESS) {
        fail_msg("parse %s: %s", v->value, err);
    }
}

static uint64_t queued_total(collnet *w)
{
    uint64_t q = 0;

    for (uint32_t m = 0; m < collnet_n(w); m++) {
        q += px_coll_get_stats(collnet_coll(w, m))->queued;
    }
    return q;
}

/* Run `epochs` epochs among n members with contributions of up to maxlen
 * bytes; check everything; return how many messages were queued as early
 * arrivals. */
static uint64_t run_sized(run *r, uint32_t epochs, uint64_t seed, double pdup, double gap,
                          uint32_t maxlen)
{
    collnet_cfg nc = {0};
    collsess_cfg sc = {0};
    collnet *w;
    collsess *s;
    uint64_t queued;

    nc.n = r->n;
    nc.seed = seed;
    nc.dmin = 0.001;
    nc.dmax = 0.010;
    nc.pdup = pdup;
    nc.id = 0xC011EC7ULL + seed;
    nc.groups = r->g;
    nc.on_send = on_send;
    nc.arg = r;
    w = collnet_create(&nc);
    assert_non_null(w);

    sc.epochs = epochs;
    sc.maxlen = maxlen;
    sc.seed = seed;
    sc.spread = 0.02;
    sc.gap = gap;
    sc.gap_of = r->race ? gap_of : NULL;
    sc.args = args_of;
    sc.arg = r;
    s = collsess_create(w, &sc);
    collsess_go(s);
    collnet_run(w, (size_t)50 * 1000 * 1000);

    assert_int_equal(collnet_pending(w), 0);
    for (uint32_t m = 0; m < r->n; m++) {
        const px_coll_stats *st = px_coll_get_stats(collnet_coll(w, m));
        for (uint32_t e = 1; e <= epochs; e++) {
            collrec *rec = collsess_rec(s, m, e);
            if (!rec->done || rec->status != PMIX_SUCCESS || !rec->result_ok) {
                fail_msg("%s n=%u member %u epoch %u: started %d rc %d done %d status %d ok %d",
                         r->seq ? "mixed" : r->v->value, r->n, m, e, rec->started, rec->start_rc,
                         rec->done, rec->status, rec->result_ok);
            }
        }
        assert_int_equal(collnet_live_timers(w, m), 0);
        assert_int_equal(px_coll_queued(collnet_coll(w, m)), 0);
        assert_false(px_coll_busy(collnet_coll(w, m)));
        assert_int_equal(px_coll_epoch(collnet_coll(w, m)), epochs);
        assert_int_equal(st->malformed, 0);
        assert_int_equal(st->mismatched, 0);
        assert_int_equal(st->overflow, 0);
        assert_int_equal(st->too_far, 0);
        assert_int_equal(st->completed, epochs);
        assert_int_equal(st->failed, 0);
    }
    assert_int_equal(r->notices, 0);
    queued = queued_total(w);
    collsess_destroy(s);
    collnet_destroy(w);
    return queued;
}

static uint64_t run_one(run *r, uint32_t epochs, uint64_t seed, double pdup, double gap)
{
    return run_sized(r, epochs, seed, pdup, gap, 24);
}

static void check_counts(run *r, uint32_t epochs)
{
    for (uint32_t e = 1; e <= epochs; e++) {
        const px_coll_choice *pick = r->seq ? &r->seq_ch[e] : &r->ch;
        const variant *v = r->seq ? r->seq[e] : r->v;
        px_coll_choice res;
        uint64_t want;
        const char *name;

        assert_int_equal(px_coll_resolve(pick, v->kind, r->n, 0, r->g, &res), PMIX_SUCCESS);
        want = textbook(&res, r->n, r->g);
        if (r->per_epoch[e] != want) {
            fail_msg("%s n=%u epoch %u: %llu data messages, textbook %llu", v->value, r->n, e,
                     (unsigned long long)r->per_epoch[e], (unsigned long long)want);
        }
        assert_int_equal(px_coll_messages(&res, r->n, r->g), want);
        name = px_coll_algo_name(res.algo);
        for (uint32_t m = 0; m < r->n; m++) {
            if (strcmp(name, "dissemination") == 0 || strcmp(name, "bruck") == 0) {
                assert_int_equal(r->per_member[e][m], lg_up(r->n));
            } else if (strcmp(name, "ring") == 0) {
                assert_int_equal(r->per_member[e][m], r->n - 1);
            }
        }
    }
}

static void sweep(const variant *vs, size_t nv)
{
    for (size_t i = 0; i < nv; i++) {
        for (uint32_t n = 1; n <= 64; n++) {
            run *r = calloc(1, sizeof(*r));
            assert_non_null(r);
            r->v = &vs[i];
            r->n = n;
            parse_or_fail(r->v, &r->ch);
            r->g = collnet_make_groups(r->v->groups, n, 77 + n);
            /* Odd sizes race from inside the callback, even ones wait a
             * little between epochs; all see duplicates. */
            run_one(r, 3, 1000 * i + n, 0.15, (n % 2) ? 0 : 0.01);
            check_counts(r, 3);
            px_coll_groups_destroy((px_coll_groups *)r->g);
            free(r);
        }
    }
}

static void test_barriers(void **state)
{
    sweep(barriers, sizeof(barriers) / sizeof(barriers[0]));
}

static void test_allgathers(void **state)
{
    sweep(allgathers, sizeof(allgathers) / sizeof(allgathers[0]));
}

/* Back to back, every epoch another algorithm and kind, members racing
 * into the next epoch from inside their callbacks while one slow member
 * lags behind: messages of the next epoch (and its algorithm) arrive
 * before the current one is over, and must be queued, not mixed in. */
static void test_mixed_back_to_back(void **state)
{
    static const uint32_t sizes[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                     12, 13, 14, 15, 16, 17, 31, 32, 33, 63, 64};
    const variant
        *all[sizeof(barriers) / sizeof(barriers[0]) + sizeof(allgathers) / sizeof(allgathers[0])];
    size_t nall = 0;
    uint64_t queued = 0;

    for (size_t i = 0; i < sizeof(barriers) / sizeof(barriers[0]); i++) {
        if (barriers[i].groups == COLLG_FLAT) {
            all[nall++] = &barriers[i];
        }
    }
    for (size_t i = 0; i < sizeof(allgathers) / sizeof(allgathers[0]); i++) {
        if (allgathers[i].groups == COLLG_FLAT) {
            all[nall++] = &allgathers[i];
        }
    }
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        const variant *seq[MAXEPOCHS + 1];
        run *r = calloc(1, sizeof(*r));
        assert_non_null(r);
        r->n = sizes[k];
        r->seq = seq;
        r->race = true;
        r->slow = (uint32_t)(k * 5) % r->n;
        for (uint32_t e = 1; e <= 12; e++) {
            seq[e] = all[(e * 7 + k) % nall];
            parse_or_fail(seq[e], &r->seq_ch[e]);
        }
        queued += run_one(r, 12, 5000 + k, 0.1, 0);
        check_counts(r, 12);
        free(r);
    }
    assert_true(queued > 0); /* early arrivals did happen */
}

/* The same with heavy duplication (every message likely twice) and wide
 * delays, for the algorithms that store future rounds. */
static void test_heavy_duplication(void **state)
{
    for (size_t i = 0; i < sizeof(allgathers) / sizeof(allgathers[0]); i++) {
        for (uint32_t n = 2; n <= 33; n += 5) {
            run *r = calloc(1, sizeof(*r));
            assert_non_null(r);
            r->v = &allgathers[i];
            r->n = n;
            parse_or_fail(r->v, &r->ch);
            r->g = collnet_make_groups(r->v->groups, n, 5 + n);
            run_one(r, 4, 9000 + 100 * i + n, 0.9, 0);
            check_counts(r, 4);
            px_coll_groups_destroy((px_coll_groups *)r->g);
            free(r);
        }
    }
}

/* Larger member counts, once each: the same checks at 1000 members, and
 * at 4096 for the barriers. */
static void test_large(void **state)
{
    static const variant large[] = {
        {"dissemination", PX_COLL_BARRIER, COLLG_FLAT},
        {"tree:4", PX_COLL_BARRIER, COLLG_FLAT},
        {"hier:dissemination", PX_COLL_BARRIER, COLLG_RUNS3},
        {"bruck", PX_COLL_ALLGATHER, COLLG_FLAT},
        {"recdbl", PX_COLL_ALLGATHER, COLLG_FLAT},
        {"hier:bruck", PX_COLL_ALLGATHER, COLLG_RANDOM},
    };
    static const uint32_t sizes[] = {1000, 4096};

    for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++) {
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            run *r;
            if (sizes[k] > 1000 && large[i].kind != PX_COLL_BARRIER) {
                continue;
            }
            r = calloc(1, sizeof(*r));
            assert_non_null(r);
            r->v = &large[i];
            r->n = sizes[k];
            parse_or_fail(r->v, &r->ch);
            r->g = collnet_make_groups(r->v->groups, r->n, 11);
            run_sized(r, 2, 777 + i * 10 + k, 0.05, 0, 4);
            check_counts(r, 2);
            px_coll_groups_destroy((px_coll_groups *)r->g);
            free(r);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_barriers, teardown_leaks),
        cmocka_unit_test_teardown(test_allgathers, teardown_leaks),
        cmocka_unit_test_teardown(test_mixed_back_to_back, teardown_leaks),
        cmocka_unit_test_teardown(test_heavy_duplication, teardown_leaks),
        cmocka_unit_test_teardown(test_large, teardown_leaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
