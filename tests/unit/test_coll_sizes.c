/*
 * test_coll_sizes.c - px_coll's sizes_only mode (what pmixsim uses so that
 * collected data is not copied through every simulated node) against the
 * ordinary mode: the same messages, between the same members, in the same
 * order, each announcing as its wire size exactly the size the ordinary
 * message has; the same result offsets; no result data.
 *
 * The network here is a FIFO queue, one thread, no randomness: both modes
 * see the same delivery order, so their message sequences must match one
 * for one. Every allgather algorithm, flat and hierarchical (several group
 * maps), for 1 to 40 members with contributions of 0 to 300 bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collnet.h"
#include "px_coll.h"

typedef struct sent {
    uint32_t from, to;
    size_t len, wire;
} sent;

typedef struct qmsg {
    struct qmsg *next;
    uint32_t from, to;
    void *msg;
    size_t len;
} qmsg;

typedef struct world world;

typedef struct member {
    world *w;
    uint32_t m;
    px_coll *c;
    bool done;
    pmix_status_t status;
    uint64_t *offsets;
    bool had_data;
} member;

struct world {
    uint32_t n;
    bool sizes_only;
    member *mem;
    qmsg *head, *tail;
    sent *log;
    size_t nlog, caplog;
};

static void record(world *w, uint32_t from, uint32_t to, size_t len, size_t wire)
{
    if (w->nlog == w->caplog) {
        w->caplog = w->caplog ? 2 * w->caplog : 64;
        w->log = realloc(w->log, w->caplog * sizeof(*w->log));
        assert_non_null(w->log);
    }
    w->log[w->nlog++] = (sent){from, to, len, wire};
}

static pmix_status_t push(member *me, uint32_t to, void *msg, size_t len, size_t wire)
{
    world *w = me->w;
    qmsg *q = malloc(sizeof(*q));

    assert_non_null(q);
    q->next = NULL;
    q->from = me->m;
    q->to = to;
    q->msg = msg;
    q->len = len;
    if (w->tail != NULL)
        w->tail->next = q;
    else
        w->head = q;
    w->tail = q;
    record(w, me->m, to, len, wire);
    return PMIX_SUCCESS;
}

static pmix_status_t op_send(void *ctx, uint32_t to, void *msg, size_t len)
{
    member *me = ctx;

    assert_false(me->w->sizes_only); /* sizes_only must use send_sized */
    return push(me, to, msg, len, len);
}

static pmix_status_t op_send_sized(void *ctx, uint32_t to, void *msg, size_t len, size_t wire)
{
    member *me = ctx;

    assert_true(me->w->sizes_only);
    assert_true(wire >= len);
    return push(me, to, msg, len, wire);
}

static const px_coll_ops ops = {
    .version = PX_COLL_OPS_VERSION,
    .send = op_send,
    .send_sized = op_send_sized,
};

static void on_done(pmix_status_t status, px_coll_result *res, void *cbdata)
{
    member *me = cbdata;

    me->done = true;
    me->status = status;
    if (res != NULL) {
        me->offsets = res->offsets;
        res->offsets = NULL; /* ours */
        me->had_data = res->data != NULL;
    }
}

/* Member m's contribution length: 0 to 300 bytes, some empty. */
static size_t contrib_len(uint32_t m)
{
    return (m % 5 == 3) ? 0 : (size_t)((m * 97 + 13) % 301);
}

static void run_world(world *w, uint32_t n, bool sizes_only, const char *algo,
                      const px_coll_groups *g)
{
    px_coll_args args;
    uint8_t buf[301];

    memset(w, 0, sizeof(*w));
    w->n = n;
    w->sizes_only = sizes_only;
    w->mem = calloc(n, sizeof(*w->mem));
    assert_non_null(w->mem);
    memset(&args, 0, sizeof(args));
    args.kind = PX_COLL_ALLGATHER;
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, algo, &args.choice, NULL, 0), PMIX_SUCCESS);
    for (uint32_t m = 0; m < n; m++) {
        px_coll_config cfg = {0};
        cfg.id = 42;
        cfg.nmembers = n;
        cfg.me = m;
        cfg.groups = g;
        cfg.sizes_only = sizes_only;
        w->mem[m].w = w;
        w->mem[m].m = m;
        w->mem[m].c = px_coll_create(&ops, &w->mem[m], &cfg);
        assert_non_null(w->mem[m].c);
    }
    for (uint32_t m = 0; m < n; m++) {
        size_t len = contrib_len(m);
        memset(buf, (int)m, sizeof(buf));
        assert_int_equal(
            px_coll_start(w->mem[m].c, &args, sizes_only ? NULL : buf, len, on_done, &w->mem[m]),
            PMIX_SUCCESS);
    }
    while (w->head != NULL) {
        qmsg *q = w->head;
        w->head = q->next;
        if (w->head == NULL)
            w->tail = NULL;
        assert_int_equal(px_coll_deliver(w->mem[q->to].c, q->from, q->msg, q->len), PMIX_SUCCESS);
        free(q->msg);
        free(q);
    }
}

static void world_free(world *w)
{
    for (uint32_t m = 0; m < w->n; m++) {
        px_coll_destroy(w->mem[m].c);
        free(w->mem[m].offsets);
    }
    free(w->mem);
    free(w->log);
}

static void compare(const char *algo, uint32_t n, const px_coll_groups *g)
{
    world real, phantom;

    run_world(&real, n, false, algo, g);
    run_world(&phantom, n, true, algo, g);
    if (real.nlog != phantom.nlog)
        fail_msg("%s n=%u: %zu messages, %zu with sizes only", algo, n, real.nlog, phantom.nlog);
    for (size_t i = 0; i < real.nlog; i++) {
        const sent *a = &real.log[i], *b = &phantom.log[i];
        if (a->from != b->from || a->to != b->to || a->len != b->wire)
            fail_msg("%s n=%u message %zu: %u->%u %zu bytes; sizes only: %u->%u wire %zu", algo, n,
                     i, a->from, a->to, a->len, b->from, b->to, b->wire);
        assert_true(b->len <= b->wire);
    }
    for (uint32_t m = 0; m < n; m++) {
        uint64_t want = 0;
        assert_true(real.mem[m].done && phantom.mem[m].done);
        assert_int_equal(real.mem[m].status, PMIX_SUCCESS);
        assert_int_equal(phantom.mem[m].status, PMIX_SUCCESS);
        assert_false(phantom.mem[m].had_data);
        for (uint32_t k = 0; k <= n; k++) {
            assert_int_equal(phantom.mem[m].offsets[k], real.mem[m].offsets[k]);
            assert_int_equal(real.mem[m].offsets[k], want);
            if (k < n)
                want += contrib_len(k);
        }
        assert_int_equal(px_coll_get_stats(phantom.mem[m].c)->sent_bytes,
                         px_coll_get_stats(real.mem[m].c)->sent_bytes);
    }
    world_free(&real);
    world_free(&phantom);
}

static void test_flat(void **state)
{
    static const char *algos[] = {"recdbl", "ring", "bruck", "tree", "tree:3"};

    for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++)
        for (uint32_t n = 1; n <= 40; n++)
            compare(algos[a], n, NULL);
}

static void test_hier(void **state)
{
    static const char *algos[] = {"hier", "hier:ring", "hier:bruck:3", "hier:recdbl"};
    static const int maps[] = {COLLG_FLAT, COLLG_RUNS3, COLLG_RR5, COLLG_RANDOM, COLLG_SINGLE};

    for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
        for (size_t k = 0; k < sizeof(maps) / sizeof(maps[0]); k++) {
            for (uint32_t n = 1; n <= 40; n++) {
                px_coll_groups *g = collnet_make_groups(maps[k], n, 5 + n);
                compare(algos[a], n, g);
                px_coll_groups_destroy(g);
            }
        }
    }
}

/* sizes_only needs send_sized: refused without it. */
static void test_needs_send_sized(void **state)
{
    px_coll_ops bare = ops;
    px_coll_config cfg = {0};

    bare.send_sized = NULL;
    cfg.id = 1;
    cfg.nmembers = 2;
    cfg.sizes_only = true;
    assert_null(px_coll_create(&bare, NULL, &cfg));
    cfg.sizes_only = false;
    px_coll *c = px_coll_create(&bare, NULL, &cfg);
    assert_non_null(c);
    px_coll_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat),
        cmocka_unit_test(test_hier),
        cmocka_unit_test(test_needs_send_sized),
    };
    return cmocka_run_group_tests_name("coll_sizes", tests, NULL, NULL);
}
