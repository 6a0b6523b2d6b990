/*
 * test_coll.c - coll/'s interface: the catalog, the auto rule, parsing the
 * PMIXLAB_*_ALGO values, counts, groups, argument checks, the message
 * header, hostile input (malformed, foreign, too early, too many), members
 * that disagree on the algorithm, reported failures while idle, timeouts,
 * refused sends, and ownership of results.
 *
 * The algorithms themselves are swept in test_coll_algos.c, failures at
 * every round in test_coll_faults.c. Messages crafted here follow the
 * header layout of docs/collectives.md, written with this file's own
 * encoder, so a change of the wire format shows up here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collnet.h"

static const px_coll_algo *A(const char *name)
{
    const px_coll_algo *a = px_coll_algo_by_name(name);
    assert_non_null(a);
    return a;
}

/* ---- the header, per docs/collectives.md ---- */

static void le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void hdr(uint8_t *p, uint8_t type, uint8_t algo, uint8_t phase, uint16_t param, uint64_t id,
                uint32_t epoch, uint32_t round, uint32_t sender, uint32_t n)
{
    p[0] = 'P';
    p[1] = 'C';
    p[2] = 1;
    p[3] = type;
    p[4] = algo;
    p[5] = phase;
    le16(p + 6, param);
    le64(p + 8, id);
    le32(p + 16, epoch);
    le32(p + 20, round);
    le32(p + 24, sender);
    le32(p + 28, n);
}

/* ---- a transport that keeps what is sent ---- */

typedef struct sent {
    uint32_t to;
    uint8_t *msg;
    size_t len;
} sent;

typedef struct capture {
    sent msgs[64];
    size_t n;
    pmix_status_t refuse; /* returned by send when non-zero */
} capture;

static pmix_status_t cap_send(void *ctx, uint32_t to, void *msg, size_t len)
{
    capture *c = ctx;

    if (c->refuse != PMIX_SUCCESS || c->n == 64) {
        free(msg);
        return c->refuse;
    }
    c->msgs[c->n].to = to;
    c->msgs[c->n].msg = msg;
    c->msgs[c->n].len = len;
    c->n++;
    return PMIX_SUCCESS;
}

static void cap_clear(capture *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->msgs[i].msg);
    }
    c->n = 0;
}

static const px_coll_ops cap_ops = {PX_COLL_OPS_VERSION, cap_send, NULL, NULL, NULL};

typedef struct done {
    int calls;
    pmix_status_t status;
    size_t size;
    uint32_t nmembers;
    uint8_t data[256];
    uint64_t offsets[8];
    bool take;
    uint8_t *taken;
    uint64_t *taken_offsets;
} done;

static void on_done(pmix_status_t status, px_coll_result *res, void *cbdata)
{
    done *d = cbdata;

    d->calls++;
    d->status = status;
    if (res != NULL) {
        d->size = res->size;
        d->nmembers = res->nmembers;
        if (res->size <= sizeof(d->data) && res->size > 0) {
            memcpy(d->data, res->data, res->size);
        }
        for (uint32_t i = 0; i <= res->nmembers && i < 8; i++) {
            d->offsets[i] = res->offsets[i];
        }
        if (d->take) {
            d->taken = res->data;
            d->taken_offsets = res->offsets;
            res->data = NULL;
            res->offsets = NULL;
        }
    }
}

/* ---- catalog, auto, parsing ---- */

static void test_catalog(void **state)
{
    static const char *names[] = {"dissemination", "tree", "recdbl", "ring", "bruck", "hier"};
    size_t count = 0;

    for (size_t i = 0; px_coll_algo_at(i) != NULL; i++) {
        const px_coll_algo *a = px_coll_algo_at(i);
        count++;
        assert_ptr_equal(px_coll_algo_by_name(px_coll_algo_name(a)), a);
        assert_ptr_equal(px_coll_algo_by_id(px_coll_algo_id(a)), a);
        assert_true(px_coll_algo_id(a) >= 1 && px_coll_algo_id(a) <= 255);
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(px_coll_algo_id(px_coll_algo_at(j)), px_coll_algo_id(a));
        }
    }
    assert_int_equal(count, 6);
    for (size_t i = 0; i < 6; i++) {
        assert_non_null(px_coll_algo_by_name(names[i]));
    }
    assert_ptr_equal(px_coll_algo_by_name("RING"), A("ring"));
    assert_null(px_coll_algo_by_name("rings"));
    assert_null(px_coll_algo_by_name(NULL));
    assert_null(px_coll_algo_by_id(0));
    assert_string_equal(px_coll_algo_name(NULL), "auto");

    assert_true(px_coll_algo_supports(A("dissemination"), PX_COLL_BARRIER));
    assert_false(px_coll_algo_supports(A("dissemination"), PX_COLL_ALLGATHER));
    assert_false(px_coll_algo_supports(A("ring"), PX_COLL_BARRIER));
    assert_false(px_coll_algo_supports(A("bruck"), PX_COLL_BARRIER));
    assert_true(px_coll_algo_supports(A("tree"), PX_COLL_BARRIER));
    assert_true(px_coll_algo_supports(A("recdbl"), PX_COLL_ALLGATHER));
    assert_true(px_coll_algo_supports(A("hier"), PX_COLL_BARRIER));
    assert_false(px_coll_algo_supports(A("hier"), (px_coll_kind)7));
}

static void test_auto_rule(void **state)
{
    for (uint32_t n = 1; n < 5000; n += 37) {
        assert_ptr_equal(px_coll_auto(PX_COLL_BARRIER, n, 0), A("dissemination"));
        assert_ptr_equal(px_coll_auto(PX_COLL_BARRIER, n, 1 << 30), A("dissemination"));
    }
    assert_ptr_equal(px_coll_auto(PX_COLL_ALLGATHER, 32, 0), A("recdbl"));
    assert_ptr_equal(px_coll_auto(PX_COLL_ALLGATHER, 33, 0), A("bruck"));
    assert_ptr_equal(px_coll_auto(PX_COLL_ALLGATHER, 1, 0), A("recdbl"));
    assert_ptr_equal(px_coll_auto(PX_COLL_ALLGATHER, 64, 512 * 1024), A("ring"));
    assert_ptr_equal(px_coll_auto(PX_COLL_ALLGATHER, 64, 512 * 1024 - 1), A("recdbl"));
    assert_ptr_equal(px_coll_auto(PX_COLL_ALLGATHER, 48, 1 << 20), A("ring"));
    assert_ptr_equal(px_coll_auto(PX_COLL_ALLGATHER, 65, 1 << 20), A("bruck"));
    assert_ptr_equal(px_coll_auto(PX_COLL_ALLGATHER, 128, 1 << 20), A("recdbl"));
    assert_ptr_equal(px_coll_auto(PX_COLL_ALLGATHER, 65536, 0), A("recdbl"));
    assert_null(px_coll_auto((px_coll_kind)0, 4, 0));
}

static void parse_ok(px_coll_kind kind, const char *value, const char *algo, const char *inner,
                     unsigned radix)
{
    px_coll_choice ch;
    char err[512], back[64];
    px_coll_choice again;

    if (px_coll_parse(kind, value, &ch, err, sizeof(err)) != PMIX_SUCCESS) {
        fail_msg("parse \"%s\": %s", value ? value : "(null)", err);
    }
    assert_string_equal(err, "");
    assert_string_equal(px_coll_algo_name(ch.algo), algo);
    if (inner != NULL) {
        assert_string_equal(px_coll_algo_name(ch.inner), inner);
    } else {
        assert_null(ch.inner);
    }
    assert_int_equal(ch.radix, radix);
    /* What format writes, parse reads back the same. */
    px_coll_choice_format(&ch, back, sizeof(back));
    assert_int_equal(px_coll_parse(kind, back, &again, NULL, 0), PMIX_SUCCESS);
    assert_ptr_equal(again.algo, ch.algo);
    assert_ptr_equal(again.inner, ch.inner);
    assert_int_equal(again.radix, ch.radix);
}

static void parse_bad(px_coll_kind kind, const char *value, const char *must_say)
{
    px_coll_choice ch;
    char err[512];

    memset(&ch, 0x5a, sizeof(ch));
    assert_int_equal(px_coll_parse(kind, value, &ch, err, sizeof(err)), PMIX_ERR_BAD_PARAM);
    assert_null(ch.algo); /* zeroed */
    if (strstr(err, must_say) == NULL || strstr(err, "valid") == NULL ||
        strstr(err, "auto") == NULL) {
        fail_msg("error for \"%s\" is \"%s\"", value, err);
    }
}

static void test_parse(void **state)
{
    char err[512];
    px_coll_choice ch;

    parse_ok(PX_COLL_BARRIER, NULL, "auto", NULL, 0);
    parse_ok(PX_COLL_BARRIER, "", "auto", NULL, 0);
    parse_ok(PX_COLL_ALLGATHER, "AUTO", "auto", NULL, 0);
    parse_ok(PX_COLL_BARRIER, "dissemination", "dissemination", NULL, 0);
    parse_ok(PX_COLL_BARRIER, "Tree", "tree", NULL, 0);
    parse_ok(PX_COLL_BARRIER, "tree:4", "tree", NULL, 4);
    parse_ok(PX_COLL_ALLGATHER, "tree:255", "tree", NULL, 255);
    parse_ok(PX_COLL_BARRIER, "recdbl", "recdbl", NULL, 0);
    parse_ok(PX_COLL_ALLGATHER, "ring", "ring", NULL, 0);
    parse_ok(PX_COLL_ALLGATHER, "bruck", "bruck", NULL, 0);
    parse_ok(PX_COLL_ALLGATHER, "hier", "hier", NULL, 0);
    parse_ok(PX_COLL_ALLGATHER, "hier:ring", "hier", "ring", 0);
    parse_ok(PX_COLL_ALLGATHER, "hier:auto:3", "hier", NULL, 3);
    parse_ok(PX_COLL_ALLGATHER, "hier:tree:8", "hier", "tree", 8);
    parse_ok(PX_COLL_BARRIER, "hier:dissemination", "hier", "dissemination", 0);
    parse_ok(PX_COLL_ALLGATHER, "hier:all", "hier", NULL, 0);
    parse_ok(PX_COLL_ALLGATHER, "hier:ring:ALL", "hier", "ring", 0);
    parse_ok(PX_COLL_ALLGATHER, "hier:tree:4:one", "hier", "tree", 4);
    parse_ok(PX_COLL_ALLGATHER, "hier:3:one", "hier", NULL, 3);
    parse_ok(PX_COLL_ALLGATHER, "hier:ring:4:all", "hier", "ring", 4);
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "hier:bruck:all", &ch, NULL, 0),
                     PMIX_SUCCESS);
    assert_int_equal(ch.leaders, PX_COLL_LEADERS_ALL);
    assert_int_equal(px_coll_parse(PX_COLL_BARRIER, "hier:one", &ch, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(ch.leaders, PX_COLL_LEADERS_ONE);
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "hier:ring", &ch, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(ch.leaders, PX_COLL_LEADERS_DEFAULT);

    parse_bad(PX_COLL_ALLGATHER, "rings", "unknown allgather algorithm \"rings\"");
    parse_bad(PX_COLL_ALLGATHER, "dissemination", "dissemination does not do an allgather");
    parse_bad(PX_COLL_BARRIER, "ring", "ring does not do a barrier");
    parse_bad(PX_COLL_BARRIER, "bruck", "bruck");
    parse_bad(PX_COLL_BARRIER, "tree:1", "radix");
    parse_bad(PX_COLL_BARRIER, "tree:256", "radix");
    parse_bad(PX_COLL_BARRIER, "tree:x", "radix");
    parse_bad(PX_COLL_BARRIER, "tree:-2", "radix");
    parse_bad(PX_COLL_BARRIER, "tree:2:2", "radix");
    parse_bad(PX_COLL_ALLGATHER, "ring:3", "takes no parameter");
    parse_bad(PX_COLL_ALLGATHER, "hier:hier", "hier cannot run \"hier\"");
    parse_bad(PX_COLL_ALLGATHER, "hier:dissemination", "among group leaders");
    parse_bad(PX_COLL_BARRIER, "hier:ring", "among group leaders");
    parse_bad(PX_COLL_ALLGATHER, "hier:ring:1", "bad radix");
    parse_bad(PX_COLL_ALLGATHER, "hier:ring:2:2", "bad parameter");
    parse_bad(PX_COLL_ALLGATHER, "hier:all:ring", "bad parameter");
    parse_bad(PX_COLL_ALLGATHER, "hier:ring:2:all:x", "too many");
    parse_bad(PX_COLL_ALLGATHER, "tree:", "empty parameter");
    parse_bad(PX_COLL_ALLGATHER, ":tree", "empty parameter");
    parse_bad(PX_COLL_ALLGATHER, "hier::2", "empty parameter");
    parse_bad(PX_COLL_ALLGATHER,
              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
              "too long");

    /* The list names the values for the kind asked, and only those. */
    assert_int_equal(px_coll_parse(PX_COLL_BARRIER, "nope", &ch, err, sizeof(err)),
                     PMIX_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "dissemination"));
    assert_non_null(strstr(err, "tree[:RADIX]"));
    assert_non_null(strstr(err, "hier[:INNER][:RADIX][:one|all]"));
    assert_null(strstr(err, "ring"));
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "nope", &ch, err, sizeof(err)),
                     PMIX_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "ring"));
    assert_non_null(strstr(err, "bruck"));
    assert_null(strstr(err, "dissemination"));
    /* A short buffer is truncated, not overrun; NULL is fine. */
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "nope", &ch, err, 8), PMIX_ERR_BAD_PARAM);
    assert_int_equal(strlen(err), 7);
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "nope", &ch, NULL, 0), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_coll_parse((px_coll_kind)9, "ring", &ch, err, sizeof(err)),
                     PMIX_ERR_BAD_PARAM);
}

static void test_choose(void **state)
{
    px_coll_choice ch;
    char err[512];

    /* info wins over the environment, the environment over auto */
    assert_int_equal(px_coll_choose(PX_COLL_ALLGATHER, "ring", "bruck", &ch, err, sizeof(err)),
                     PMIX_SUCCESS);
    assert_ptr_equal(ch.algo, A("ring"));
    assert_int_equal(px_coll_choose(PX_COLL_ALLGATHER, NULL, "bruck", &ch, err, sizeof(err)),
                     PMIX_SUCCESS);
    assert_ptr_equal(ch.algo, A("bruck"));
    assert_int_equal(px_coll_choose(PX_COLL_ALLGATHER, NULL, NULL, &ch, err, sizeof(err)),
                     PMIX_SUCCESS);
    assert_null(ch.algo);
    assert_int_equal(px_coll_choose(PX_COLL_ALLGATHER, "auto", "ring", &ch, err, sizeof(err)),
                     PMIX_SUCCESS);
    assert_null(ch.algo);
    /* errors name their source */
    assert_int_equal(px_coll_choose(PX_COLL_ALLGATHER, NULL, "rong", &ch, err, sizeof(err)),
                     PMIX_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "PMIXLAB_FENCE_ALGO: unknown allgather algorithm \"rong\""));
    assert_int_equal(px_coll_choose(PX_COLL_BARRIER, NULL, "rong", &ch, err, sizeof(err)),
                     PMIX_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "PMIXLAB_BARRIER_ALGO: "));
    assert_int_equal(px_coll_choose(PX_COLL_BARRIER, "ring", "tree", &ch, err, sizeof(err)),
                     PMIX_ERR_BAD_PARAM);
    assert_non_null(strstr(err, "info key pmixlab.barrier.algo: ring does not do a barrier"));
}

static void test_resolve_and_counts(void **state)
{
    px_coll_choice in = {NULL, NULL, 0, 0}, out;
    px_coll_groups *g;
    static const uint32_t labels[7] = {0, 0, 0, 1, 1, 1, 2};

    assert_int_equal(px_coll_resolve(&in, PX_COLL_BARRIER, 5, 0, NULL, &out), PMIX_SUCCESS);
    assert_ptr_equal(out.algo, A("dissemination"));
    assert_int_equal(out.radix, 0);
    assert_int_equal(px_coll_messages(&out, 5, NULL), 15);
    assert_int_equal(px_coll_rounds(&out, 5, NULL), 3);

    in.algo = A("tree");
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 5, 0, NULL, &out), PMIX_SUCCESS);
    assert_int_equal(out.radix, 2);
    assert_int_equal(px_coll_messages(&out, 5, NULL), 8);
    assert_int_equal(px_coll_rounds(&out, 5, NULL), 6);
    out.radix = 3;
    assert_int_equal(px_coll_rounds(&out, 9, NULL), 4);
    assert_int_equal(px_coll_rounds(&out, 10, NULL), 6);

    in.algo = A("recdbl");
    in.radix = 7; /* ignored: recdbl takes none */
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 6, 0, NULL, &out), PMIX_SUCCESS);
    assert_int_equal(out.radix, 0);
    assert_int_equal(px_coll_messages(&out, 6, NULL), 4 * 2 + 2 * 2);
    assert_int_equal(px_coll_rounds(&out, 6, NULL), 4);
    assert_int_equal(px_coll_messages(&out, 8, NULL), 24);
    assert_int_equal(px_coll_rounds(&out, 8, NULL), 3);

    in.algo = A("ring");
    in.radix = 0;
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 5, 0, NULL, &out), PMIX_SUCCESS);
    assert_int_equal(px_coll_messages(&out, 5, NULL), 20);
    assert_int_equal(px_coll_rounds(&out, 5, NULL), 4);
    in.algo = A("bruck");
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 5, 0, NULL, &out), PMIX_SUCCESS);
    assert_int_equal(px_coll_messages(&out, 5, NULL), 15);
    assert_int_equal(px_coll_messages(&out, 65536, NULL), 65536ULL * 16);

    /* hier: 3 groups {0,1,2} {3,4,5} {6}; leaders' auto for 3 is bruck */
    g = px_coll_groups_create(7, labels);
    assert_non_null(g);
    in.algo = A("hier");
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 7, 0, g, &out), PMIX_SUCCESS);
    assert_ptr_equal(out.inner, A("bruck"));
    assert_int_equal(out.radix, 2);
    assert_int_equal(px_coll_messages(&out, 7, g), 2 * (7 - 3) + 3 * 2);
    assert_int_equal(px_coll_rounds(&out, 7, g), 2 * 2 + 2);
    assert_int_equal(px_coll_resolve(&in, PX_COLL_BARRIER, 7, 0, g, &out), PMIX_SUCCESS);
    assert_ptr_equal(out.inner, A("dissemination"));
    in.inner = A("ring");
    assert_int_equal(px_coll_resolve(&in, PX_COLL_BARRIER, 7, 0, g, &out), PMIX_ERR_BAD_PARAM);
    in.inner = A("hier");
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 7, 0, g, &out), PMIX_ERR_BAD_PARAM);
    px_coll_groups_destroy(g);

    /* Every member a leader: only over groups of one size; 2 groups of 4:
     * 4 columns of 2 (recdbl, 2 messages each), 2 groups of 4 (Bruck, 8). */
    in.inner = NULL;
    in.leaders = PX_COLL_LEADERS_ALL;
    g = px_coll_groups_create(7, labels);
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 7, 0, g, &out), PMIX_ERR_BAD_PARAM);
    px_coll_groups_destroy(g);
    {
        static const uint32_t even[8] = {5, 5, 9, 9, 5, 9, 5, 9};
        g = px_coll_groups_create(8, even);
    }
    assert_non_null(g);
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 8, 0, g, &out), PMIX_SUCCESS);
    assert_ptr_equal(out.inner, A("recdbl"));
    assert_int_equal(out.leaders, PX_COLL_LEADERS_ALL);
    assert_int_equal(px_coll_messages(&out, 8, g), 4 * 2 + 2 * 8);
    assert_int_equal(px_coll_rounds(&out, 8, g), 1 + 2);
    in.radix = 4; /* no tree anywhere: no radix, so that members agree */
    in.inner = A("ring");
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 8, 0, g, &out), PMIX_SUCCESS);
    assert_int_equal(out.radix, 0);
    in.inner = A("tree"); /* a tree among the columns keeps it */
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 8, 0, g, &out), PMIX_SUCCESS);
    assert_int_equal(out.radix, 4);
    in.inner = NULL;
    in.radix = 0;
    in.leaders = 0; /* the default for an allgather over even groups */
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 8, 0, g, &out), PMIX_SUCCESS);
    assert_int_equal(out.leaders, PX_COLL_LEADERS_ALL);
    assert_int_equal(px_coll_resolve(&in, PX_COLL_BARRIER, 8, 0, g, &out), PMIX_SUCCESS);
    assert_int_equal(out.leaders, PX_COLL_LEADERS_ONE);
    /* auto: hier over even, switched groups for an allgather only */
    in.algo = NULL;
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 8, 0, g, &out), PMIX_SUCCESS);
    assert_ptr_equal(out.algo, A("recdbl")); /* not switched */
    px_coll_groups_set_switched(g, true);
    px_coll_groups_set_switched(NULL, true);
    assert_int_equal(px_coll_resolve(&in, PX_COLL_ALLGATHER, 8, 0, g, &out), PMIX_SUCCESS);
    assert_ptr_equal(out.algo, A("hier"));
    assert_int_equal(out.leaders, PX_COLL_LEADERS_ALL);
    assert_ptr_equal(px_coll_auto_groups(PX_COLL_BARRIER, 8, 0, g), A("dissemination"));
    assert_ptr_equal(px_coll_auto_groups(PX_COLL_ALLGATHER, 8, 0, NULL), A("recdbl"));
    assert_ptr_equal(px_coll_auto_groups(PX_COLL_ALLGATHER, 8, 1 << 20, g), A("ring"));
    px_coll_groups_destroy(g);
    g = px_coll_groups_create(7, labels); /* uneven: flat */
    px_coll_groups_set_switched(g, true);
    assert_ptr_equal(px_coll_auto_groups(PX_COLL_ALLGATHER, 7, 0, g), A("bruck"));
    px_coll_groups_destroy(g);

    in.algo = A("ring");
    in.inner = NULL;
    assert_int_equal(px_coll_resolve(&in, PX_COLL_BARRIER, 7, 0, NULL, &out), PMIX_ERR_BAD_PARAM);
    in.algo = A("tree");
    in.radix = 1;
    assert_int_equal(px_coll_resolve(&in, PX_COLL_BARRIER, 7, 0, NULL, &out), PMIX_ERR_BAD_PARAM);
    in.radix = 0;
    assert_int_equal(px_coll_resolve(&in, PX_COLL_BARRIER, 0, 0, NULL, &out), PMIX_ERR_BAD_PARAM);
}

static void test_groups(void **state)
{
    static const uint32_t labels[6] = {5, 5, 1, 1, 5, 9};
    uint32_t c0[3] = {1, 7, 1}, c1[3] = {1, 7, 2}, c2[3] = {0, 3, 3}, c3[3] = {1, 8, 0};
    pmix_coord_t coords[4];
    px_coll_groups *g = px_coll_groups_create(6, labels);

    assert_non_null(g);
    assert_int_equal(px_coll_groups_count(g), 3);
    /* groups numbered by leader: {0,1,4} {2,3} {5} */
    assert_int_equal(px_coll_groups_leader(g, 0), 0);
    assert_int_equal(px_coll_groups_leader(g, 1), 2);
    assert_int_equal(px_coll_groups_leader(g, 2), 5);
    assert_int_equal(px_coll_groups_size(g, 0), 3);
    assert_int_equal(px_coll_groups_size(g, 1), 2);
    assert_int_equal(px_coll_groups_size(g, 2), 1);
    assert_int_equal(px_coll_groups_of(g, 4), 0);
    assert_int_equal(px_coll_groups_of(g, 3), 1);
    assert_int_equal(px_coll_groups_of(g, 5), 2);
    assert_int_equal(px_coll_groups_size(g, 3), 0);
    px_coll_groups_destroy(g);
    px_coll_groups_destroy(NULL);
    assert_int_equal(px_coll_groups_count(NULL), 1);
    assert_null(px_coll_groups_create(0, labels));
    assert_null(px_coll_groups_create(3, NULL));

    /* by coordinates: the first two dimensions make the group */
    memset(coords, 0, sizeof(coords));
    coords[0].coord = c0;
    coords[1].coord = c1;
    coords[2].coord = c2;
    coords[3].coord = c3;
    for (int i = 0; i < 4; i++) {
        coords[i].dims = 3;
    }
    g = px_coll_groups_from_coords(4, coords, 2);
    assert_non_null(g);
    assert_int_equal(px_coll_groups_count(g), 3);
    assert_int_equal(px_coll_groups_of(g, 0), px_coll_groups_of(g, 1));
    assert_int_not_equal(px_coll_groups_of(g, 0), px_coll_groups_of(g, 2));
    assert_int_not_equal(px_coll_groups_of(g, 0), px_coll_groups_of(g, 3));
    px_coll_groups_destroy(g);
    g = px_coll_groups_from_coords(4, coords, 0); /* no dimension: one group */
    assert_int_equal(px_coll_groups_count(g), 1);
    px_coll_groups_destroy(g);
    coords[2].dims = 1;
    assert_null(px_coll_groups_from_coords(4, coords, 2));
}

/* ---- contexts and arguments ---- */

static void test_create_and_args(void **state)
{
    capture cap = {{{0}}, 0, 0};
    px_coll_ops ops = cap_ops;
    px_coll_config cfg = {42, 4, 1, NULL, 0};
    static const uint32_t labels[3] = {0, 0, 1};
    px_coll_groups *g = px_coll_groups_create(3, labels);
    px_coll_args args;
    done d;
    px_coll *c;
    uint8_t byte = 7;

    assert_null(px_coll_create(NULL, &cap, &cfg));
    ops.version = 2;
    assert_null(px_coll_create(&ops, &cap, &cfg));
    ops = cap_ops;
    ops.send = NULL;
    assert_null(px_coll_create(&ops, &cap, &cfg));
    assert_null(px_coll_create(&cap_ops, &cap, NULL));
    cfg.nmembers = 0;
    assert_null(px_coll_create(&cap_ops, &cap, &cfg));
    cfg.nmembers = 4;
    cfg.me = 4;
    assert_null(px_coll_create(&cap_ops, &cap, &cfg));
    cfg.me = 1;
    cfg.groups = g; /* 3 members, not 4 */
    assert_null(px_coll_create(&cap_ops, &cap, &cfg));
    cfg.groups = NULL;
    px_coll_destroy(NULL);

    c = px_coll_create(&cap_ops, &cap, &cfg);
    assert_non_null(c);
    assert_int_equal(px_coll_epoch(c), 0);
    memset(&args, 0, sizeof(args));
    memset(&d, 0, sizeof(d));
    /* refused arguments: nothing happens, no callback, no epoch */
    assert_int_equal(px_coll_start(c, &args, NULL, 0, on_done, &d), PMIX_ERR_BAD_PARAM);
    args.kind = PX_COLL_ALLGATHER;
    assert_int_equal(px_coll_start(c, &args, &byte, (size_t)UINT32_MAX + 1, on_done, &d),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_coll_start(c, &args, NULL, 3, on_done, &d), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_coll_start(c, &args, &byte, 1, NULL, &d), PMIX_ERR_BAD_PARAM);
    args.timeout = -1;
    assert_int_equal(px_coll_start(c, &args, &byte, 1, on_done, &d), PMIX_ERR_BAD_PARAM);
    args.timeout = NAN;
    assert_int_equal(px_coll_start(c, &args, &byte, 1, on_done, &d), PMIX_ERR_BAD_PARAM);
    args.timeout = 5; /* no timer ops */
    assert_int_equal(px_coll_start(c, &args, &byte, 1, on_done, &d), PMIX_ERR_NOT_SUPPORTED);
    args.timeout = 0;
    args.choice.algo = A("dissemination");
    assert_int_equal(px_coll_start(c, &args, &byte, 1, on_done, &d), PMIX_ERR_BAD_PARAM);
    args.choice.algo = A("hier");
    args.choice.inner = A("hier");
    assert_int_equal(px_coll_start(c, &args, &byte, 1, on_done, &d), PMIX_ERR_BAD_PARAM);
    assert_int_equal(d.calls, 0);
    assert_int_equal(px_coll_epoch(c), 0);
    assert_int_equal(cap.n, 0);

    /* a good start; a second one is busy */
    memset(&args.choice, 0, sizeof(args.choice));
    assert_int_equal(px_coll_start(c, &args, &byte, 1, on_done, &d), PMIX_SUCCESS);
    assert_true(px_coll_busy(c));
    assert_int_equal(px_coll_epoch(c), 1);
    assert_int_equal(px_coll_start(c, &args, &byte, 1, on_done, &d), PMIX_ERR_RESOURCE_BUSY);
    assert_true(cap.n > 0);
    assert_int_equal(d.calls, 0);
    /* destroying it mid-way frees everything and calls nobody */
    px_coll_destroy(c);
    assert_int_equal(d.calls, 0);
    cap_clear(&cap);
    px_coll_groups_destroy(g);
}

static void test_single_member(void **state)
{
    capture cap = {{{0}}, 0, 0};
    px_coll_config cfg = {1, 1, 0, NULL, 0};
    px_coll *c = px_coll_create(&cap_ops, &cap, &cfg);
    px_coll_args args;
    done d;

    assert_non_null(c);
    memset(&args, 0, sizeof(args));
    for (size_t i = 0; px_coll_algo_at(i) != NULL; i++) {
        const px_coll_algo *a = px_coll_algo_at(i);
        args.choice.algo = a;
        if (px_coll_algo_supports(a, PX_COLL_ALLGATHER)) {
            memset(&d, 0, sizeof(d));
            args.kind = PX_COLL_ALLGATHER;
            /* completes before start returns, with the contribution */
            assert_int_equal(px_coll_start(c, &args, "hello", 5, on_done, &d), PMIX_SUCCESS);
            assert_int_equal(d.calls, 1);
            assert_int_equal(d.status, PMIX_SUCCESS);
            assert_int_equal(d.size, 5);
            assert_int_equal(d.nmembers, 1);
            assert_memory_equal(d.data, "hello", 5);
            assert_int_equal(d.offsets[1], 5);
            memset(&d, 0, sizeof(d));
            assert_int_equal(px_coll_start(c, &args, NULL, 0, on_done, &d), PMIX_SUCCESS);
            assert_int_equal(d.calls, 1);
            assert_int_equal(d.size, 0);
            assert_int_equal(d.offsets[0], 0);
            assert_int_equal(d.offsets[1], 0);
        }
        if (px_coll_algo_supports(a, PX_COLL_BARRIER)) {
            memset(&d, 0, sizeof(d));
            args.kind = PX_COLL_BARRIER;
            assert_int_equal(px_coll_start(c, &args, NULL, 0, on_done, &d), PMIX_SUCCESS);
            assert_int_equal(d.calls, 1);
            assert_int_equal(d.status, PMIX_SUCCESS);
        }
    }
    assert_int_equal(cap.n, 0);
    assert_false(px_coll_busy(c));
    px_coll_destroy(c);
}

/* The header of a real message, byte by byte. */
static void test_header(void **state)
{
    capture cap = {{{0}}, 0, 0};
    px_coll_config cfg = {0x1122334455667788ULL, 5, 2, NULL, 0};
    px_coll *c = px_coll_create(&cap_ops, &cap, &cfg);
    px_coll_args args;
    px_coll_msg_info h;
    uint8_t *p;
    done d;

    memset(&args, 0, sizeof(args));
    memset(&d, 0, sizeof(d));
    args.kind = PX_COLL_ALLGATHER;
    args.choice.algo = A("tree");
    args.choice.radix = 3;
    /* member 2 is a leaf of the radix-3 tree over 5: it sends its block to 0 */
    assert_int_equal(px_coll_start(c, &args, "abc", 3, on_done, &d), PMIX_SUCCESS);
    assert_int_equal(cap.n, 1);
    assert_int_equal(cap.msgs[0].to, 0);
    p = cap.msgs[0].msg;
    assert_int_equal(cap.msgs[0].len, 32 + 4 + 4 + 4 + 3);
    assert_int_equal(p[0], 'P');
    assert_int_equal(p[1], 'C');
    assert_int_equal(p[2], 1); /* version */
    assert_int_equal(p[3], 1); /* data */
    assert_int_equal(p[4], px_coll_algo_id(A("tree")));
    assert_int_equal(p[5], 0);               /* phase */
    assert_int_equal(p[6] | (p[7] << 8), 3); /* radix */
    assert_int_equal(p[8], 0x88);            /* id, little-endian */
    assert_int_equal(p[15], 0x11);
    assert_int_equal(p[16], 1); /* epoch 1 */
    assert_int_equal(p[20], 0); /* round 0: gather */
    assert_int_equal(p[24], 2); /* sender */
    assert_int_equal(p[28], 5); /* nmembers */
    assert_int_equal(p[32], 2); /* range: first 2 */
    assert_int_equal(p[36], 1); /*        count 1 */
    assert_int_equal(p[40], 3); /*        length 3 */
    assert_memory_equal(p + 44, "abc", 3);
    assert_int_equal(px_coll_msg_peek(p, cap.msgs[0].len, &h), PMIX_SUCCESS);
    assert_int_equal(h.id, 0x1122334455667788ULL);
    assert_int_equal(h.epoch, 1);
    assert_int_equal(h.sender, 2);
    assert_int_equal(h.param, 3);

    /* peek refuses what is not a header */
    assert_int_equal(px_coll_msg_peek(p, 31, &h), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_coll_msg_peek(NULL, 32, &h), PMIX_ERR_BAD_PARAM);
    p[0] ^= 1;
    assert_int_equal(px_coll_msg_peek(p, 32, &h), PMIX_ERR_BAD_PARAM);
    p[0] ^= 1;
    p[2] = 2;
    assert_int_equal(px_coll_msg_peek(p, 32, &h), PMIX_ERR_BAD_PARAM);
    p[2] = 1;
    p[3] = 3;
    assert_int_equal(px_coll_msg_peek(p, 32, &h), PMIX_ERR_BAD_PARAM);
    p[3] = 1;
    p[5] = 4;
    assert_int_equal(px_coll_msg_peek(p, 32, &h), PMIX_ERR_BAD_PARAM);
    p[5] = 0;
    p[3] = 2; /* a notice must not name an algorithm */
    assert_int_equal(px_coll_msg_peek(p, 32, &h), PMIX_ERR_BAD_PARAM);
    px_coll_destroy(c);
    cap_clear(&cap);
}

/* ---- hostile input during real runs ---- */

typedef struct hostile {
    const char *value;
    px_coll_kind kind;
    px_coll_choice ch;
    uint8_t algo;
    uint16_t param;
    uint64_t id;
    uint32_t n;
    collnet *w;
} hostile;

static void hostile_args(void *arg, uint32_t m, uint32_t epoch, px_coll_args *a)
{
    hostile *h = arg;

    a->kind = h->kind;
    a->choice = h->ch;
}

/* Inject a message that every member must refuse, at a random time. */
static void inject(hostile *h, uint32_t to, uint32_t from, const uint8_t *msg, size_t len)
{
    collnet_inject(h->w, collnet_uniform(h->w, 0, 0.06), to, from, msg, len);
}

static void inject_garbage(hostile *h)
{
    uint8_t m[128];

    for (int i = 0; i < 400; i++) {
        uint32_t to = (uint32_t)(collnet_rand(h->w) % h->n);
        uint32_t from = (to + 1 + (uint32_t)(collnet_rand(h->w) % (h->n - 1))) % h->n;
        uint32_t epoch = 1 + (uint32_t)(collnet_rand(h->w) % 2);
        uint32_t round = (uint32_t)(collnet_rand(h->w) % 3);
        size_t len = 32;

        switch (i % 13) {
        case 0: /* random bytes */
            len = (size_t)(collnet_rand(h->w) % sizeof(m));
            for (size_t k = 0; k < len; k++) {
                m[k] = (uint8_t)collnet_rand(h->w);
            }
            break;
        case 1: /* a header cut short */
            hdr(m, 1, h->algo, 0, h->param, h->id, epoch, round, from, h->n);
            len = (size_t)(collnet_rand(h->w) % 32);
            break;
        case 2: /* another member count */
            hdr(m, 1, h->algo, 0, h->param, h->id, epoch, round, from, h->n + 1);
            break;
        case 3: /* sender field is not the transport's sender */
            hdr(m, 1, h->algo, 0, h->param, h->id, epoch, round,
                (from + 1) % h->n == to ? (from + 2) % h->n : (from + 1) % h->n, h->n);
            if (h->n < 3) {
                le32(m + 24, to); /* claims to be the receiver */
            }
            break;
        case 4: /* a round beyond any algorithm's */
            hdr(m, 1, h->algo, 0, h->param, h->id, epoch, 1000000 + round, from, h->n);
            break;
        case 5: /* a phase the algorithm does not have (flat: 0 only; hier: 1..3) */
            hdr(m, 1, h->algo, h->value[0] == 'h' ? 0 : 1, h->param, h->id, epoch, round, from,
                h->n);
            len = 40;
            le32(m + 32, 0);
            le32(m + 36, 0);
            break;
        case 6: /* an unknown algorithm id */
            hdr(m, 1, 200, 0, h->param, h->id, epoch, round, from, h->n);
            break;
        case 7: /* another collective id: foreign */
            hdr(m, 1, h->algo, 0, h->param, h->id + 1, epoch, round, from, h->n);
            break;
        case 8: /* far in the future */
            hdr(m, 1, h->algo, 0, h->param, h->id, epoch + 20, round, from, h->n);
            break;
        case 9: /* a notice with a positive status */
            hdr(m, 2, 0, 0, 0, h->id, epoch, 0, from, h->n);
            le32(m + 32, 5);
            le32(m + 36, from);
            le32(m + 40, 0);
            len = 44;
            break;
        case 10: /* a notice naming a member out of range */
            hdr(m, 2, 0, 0, 0, h->id, epoch, 0, from, h->n);
            le32(m + 32, (uint32_t)PMIX_ERR_TIMEOUT);
            le32(m + 36, from);
            le32(m + 40, 1);
            le32(m + 44, h->n + 3);
            len = 48;
            break;
        case 11: /* a notice whose list is cut short, or too short at all */
            hdr(m, 2, 0, 0, 0, h->id, epoch, 0, from, h->n);
            le32(m + 32, (uint32_t)PMIX_ERR_TIMEOUT);
            le32(m + 36, from);
            le32(m + 40, 2);
            le32(m + 44, 0);
            len = (i / 13) % 2 ? 48 : 36;
            break;
        case 12: /* a payload that cannot be a range (barriers: a payload at all) */
            hdr(m, 1, h->algo, h->value[0] == 'h' ? 1 : 0, h->param, h->id, epoch, round, from,
                h->n);
            le32(m + 32, 0);
            le32(m + 36, 0xffffffffu); /* count */
            len = 44;
            break;
        }
        inject(h, to, from, m, len);
    }
}

static void test_hostile_input(void **state)
{
    static const struct {
        const char *value;
        px_coll_kind kind;
    } runs[] = {
        {"dissemination", PX_COLL_BARRIER}, {"tree:3", PX_COLL_BARRIER},
        {"recdbl", PX_COLL_BARRIER},        {"ring", PX_COLL_ALLGATHER},
        {"recdbl", PX_COLL_ALLGATHER},      {"bruck", PX_COLL_ALLGATHER},
        {"tree", PX_COLL_ALLGATHER},        {"hier:bruck", PX_COLL_ALLGATHER},
        {"hier", PX_COLL_BARRIER},
    };

    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        for (uint32_t n = 2; n <= 11; n += 3) {
            hostile h;
            collnet_cfg nc = {0};
            collsess_cfg sc = {0};
            collsess *s;
            px_coll_choice res;
            px_coll_groups *g =
                collnet_make_groups(runs[i].value[0] == 'h' ? COLLG_RUNS3 : COLLG_FLAT, n, 1);
            uint64_t malformed = 0, foreign = 0, too_far = 0;

            memset(&h, 0, sizeof(h));
            h.value = runs[i].value;
            h.kind = runs[i].kind;
            h.n = n;
            h.id = 0xabcdef + i;
            assert_int_equal(px_coll_parse(h.kind, h.value, &h.ch, NULL, 0), PMIX_SUCCESS);
            assert_int_equal(px_coll_resolve(&h.ch, h.kind, n, 0, g, &res), PMIX_SUCCESS);
            h.algo = (uint8_t)px_coll_algo_id(res.algo);
            h.param = res.algo == A("tree") ? (uint16_t)res.radix
                      : res.algo == A("hier")
                          ? (uint16_t)(px_coll_algo_id(res.inner) | (res.radix << 8))
                          : 0;
            nc.n = n;
            nc.seed = 31 * i + n;
            nc.dmin = 0.001;
            nc.dmax = 0.01;
            nc.pdup = 0.2;
            nc.id = h.id;
            nc.groups = g;
            h.w = collnet_create(&nc);
            sc.epochs = 3;
            sc.maxlen = 12;
            sc.seed = nc.seed;
            sc.spread = 0.02;
            sc.args = hostile_args;
            sc.arg = &h;
            s = collsess_create(h.w, &sc);
            collsess_go(s);
            inject_garbage(&h);
            collnet_run(h.w, 10 * 1000 * 1000);
            assert_int_equal(collnet_pending(h.w), 0);
            for (uint32_t m = 0; m < n; m++) {
                const px_coll_stats *st = px_coll_get_stats(collnet_coll(h.w, m));
                for (uint32_t e = 1; e <= 3; e++) {
                    collrec *rec = collsess_rec(s, m, e);
                    if (!rec->done || rec->status != PMIX_SUCCESS || !rec->result_ok) {
                        fail_msg("%s n=%u member %u epoch %u: done %d status %d ok %d", h.value, n,
                                 m, e, rec->done, rec->status, rec->result_ok);
                    }
                }
                malformed += st->malformed;
                foreign += st->foreign;
                too_far += st->too_far;
                assert_int_equal(st->mismatched, 0);
                assert_int_equal(st->failed, 0);
            }
            assert_true(malformed > 0);
            assert_true(foreign > 0);
            assert_true(too_far > 0);
            collsess_destroy(s);
            collnet_destroy(h.w);
            px_coll_groups_destroy(g);
        }
    }
}

/* Corrupted copies of real messages (bit flips, truncation) delivered
 * besides the originals. A corrupted copy that still passes every check
 * may be taken for the original (a flipped data byte) or fail an epoch
 * (a flipped algorithm id, a flipped notice): results are not checked.
 * What is: no crash, no leak (ASan), and every member ends every epoch,
 * without timeouts. */
static void test_corrupted_copies(void **state)
{
    static const char *const values[] = {"dissemination", "tree:3", "recdbl", "ring",
                                         "recdbl",        "bruck",  "tree",   "hier:bruck"};
    static const px_coll_kind kinds[] = {PX_COLL_BARRIER,   PX_COLL_BARRIER,   PX_COLL_BARRIER,
                                         PX_COLL_ALLGATHER, PX_COLL_ALLGATHER, PX_COLL_ALLGATHER,
                                         PX_COLL_ALLGATHER, PX_COLL_ALLGATHER};
    uint64_t malformed = 0;

    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        for (uint32_t n = 2; n <= 17; n += 5) {
            hostile h;
            collnet_cfg nc = {0};
            collsess_cfg sc = {0};
            collsess *s;
            px_coll_groups *g = collnet_make_groups(COLLG_RUNS3, n, 2);

            memset(&h, 0, sizeof(h));
            h.kind = kinds[i];
            assert_int_equal(px_coll_parse(h.kind, values[i], &h.ch, NULL, 0), PMIX_SUCCESS);
            nc.n = n;
            nc.seed = 71 * i + n;
            nc.dmin = 0.001;
            nc.dmax = 0.01;
            nc.pdup = 0.1;
            nc.pcorrupt = 0.3;
            nc.id = 5;
            nc.groups = g;
            h.w = collnet_create(&nc);
            sc.epochs = 4;
            sc.maxlen = 12;
            sc.seed = nc.seed;
            sc.spread = 0.02;
            sc.args = hostile_args;
            sc.arg = &h;
            s = collsess_create(h.w, &sc);
            collsess_go(s);
            collnet_run(h.w, 10 * 1000 * 1000);
            assert_int_equal(collnet_pending(h.w), 0);
            for (uint32_t m = 0; m < n; m++) {
                for (uint32_t e = 1; e <= 4; e++) {
                    if (!collsess_rec(s, m, e)->done) {
                        fail_msg("%s n=%u: member %u never ended epoch %u", values[i], n, m, e);
                    }
                }
                malformed += px_coll_get_stats(collnet_coll(h.w, m))->malformed;
            }
            collsess_destroy(s);
            collnet_destroy(h.w);
            px_coll_groups_destroy(g);
        }
    }
    assert_true(malformed > 0);
}

/* ---- members that disagree ---- */

typedef struct disagree {
    int how;
} disagree;

static void disagree_args(void *arg, uint32_t m, uint32_t epoch, px_coll_args *a)
{
    disagree *d = arg;

    a->kind = PX_COLL_ALLGATHER;
    switch (d->how) {
    case 0: a->choice.algo = px_coll_algo_by_name(m % 2 ? "ring" : "bruck"); break;
    case 1: /* auto with different size hints: recdbl vs ring for 32 */
        a->size_hint = m == 5 ? (1 << 20) : 0;
        break;
    default:
        /* Same algorithm, another radix for member 3: nobody ever sends to
         * member 3 and it never sends (it waits for children that are not
         * its children), so no message crosses the disagreement: only the
         * timeout can end it. */
        a->choice.algo = px_coll_algo_by_name("tree");
        a->choice.radix = m == 3 ? 3 : 2;
        a->timeout = 1.0;
        break;
    }
}

static void test_disagreement(void **state)
{
    for (int how = 0; how < 3; how++) {
        disagree d = {how};
        collnet_cfg nc = {0};
        collsess_cfg sc = {0};
        collnet *w;
        collsess *s;
        uint64_t mismatched = 0;

        nc.n = 32;
        nc.seed = 99 + how;
        nc.dmin = 0.001;
        nc.dmax = 0.01;
        w = collnet_create(&nc);
        sc.epochs = 2;
        sc.maxlen = 8;
        sc.seed = 5;
        sc.args = disagree_args;
        sc.arg = &d;
        s = collsess_create(w, &sc);
        collsess_go(s);
        collnet_run(w, 10 * 1000 * 1000);
        assert_int_equal(collnet_pending(w), 0);
        /* Without timeouts (how 0, 1) every member still ends, with an
         * error, in both epochs: a message crossed the disagreement. */
        for (uint32_t m = 0; m < 32; m++) {
            for (uint32_t e = 1; e <= 2; e++) {
                collrec *rec = collsess_rec(s, m, e);
                if (!rec->done || (rec->status != PMIX_ERR_BAD_PARAM &&
                                   (how < 2 || rec->status != PMIX_ERR_TIMEOUT))) {
                    fail_msg("how %d member %u epoch %u: started %d done %d status %d", how, m, e,
                             rec->started, rec->done, rec->status);
                }
            }
            mismatched += px_coll_get_stats(collnet_coll(w, m))->mismatched;
        }
        assert_true(how == 2 || mismatched > 0);
        collsess_destroy(s);
        collnet_destroy(w);
    }
}

/* ---- the early queue is bounded ---- */

static void test_early_queue_bounds(void **state)
{
    capture cap = {{{0}}, 0, 0};
    px_coll_config cfg = {7, 8, 0, NULL, 0};
    px_coll *c = px_coll_create(&cap_ops, &cap, &cfg);
    uint8_t m[64];
    uint32_t ring = px_coll_algo_id(A("ring"));
    const px_coll_stats *st = px_coll_get_stats(c);
    size_t cap_count = 4 * 8 + 16;

    /* idle at epoch 1: epochs 1 to 5 are queued, the same message twice
     * counts once, more than the cap overflows, epoch 6 is too far */
    for (uint32_t r = 0; r < 3 * cap_count; r++) {
        hdr(m, 1, (uint8_t)ring, 0, 0, 7, 1 + r % 5, r, 7, 8);
        le32(m + 32, 6);
        le32(m + 36, 1);
        le32(m + 40, 0);
        assert_true(px_coll_deliver(c, 7, m, 44) != PMIX_ERR_BAD_PARAM);
        px_coll_deliver(c, 7, m, 44);
    }
    assert_int_equal(px_coll_queued(c), cap_count);
    assert_int_equal(st->queued, cap_count);
    assert_true(st->overflow > 0);
    assert_true(st->duplicates >= cap_count);
    hdr(m, 1, (uint8_t)ring, 0, 0, 7, 6, 0, 7, 8);
    assert_int_equal(px_coll_deliver(c, 7, m, 32), PMIX_SUCCESS);
    assert_int_equal(st->too_far, 1);
    px_coll_destroy(c); /* frees the queue */

    /* a byte cap */
    cfg.early_bytes_max = 100;
    c = px_coll_create(&cap_ops, &cap, &cfg);
    st = px_coll_get_stats(c);
    for (uint32_t r = 0; r < 5; r++) {
        hdr(m, 1, (uint8_t)ring, 0, 0, 7, 1, r, 7, 8);
        px_coll_deliver(c, 7, m, 44);
    }
    assert_int_equal(px_coll_queued(c), 2);
    assert_int_equal(st->overflow, 3);
    px_coll_destroy(c);
}

/* ---- failures while idle, notices, timeouts, refused sends ---- */

static void test_peer_failed_while_idle(void **state)
{
    collnet_cfg nc = {0};
    collnet *w;
    done d[6];
    px_coll_args args;

    nc.n = 6;
    nc.seed = 3;
    nc.dmin = 0.001;
    nc.dmax = 0.01;
    w = collnet_create(&nc);
    memset(d, 0, sizeof(d));
    memset(&args, 0, sizeof(args));
    args.kind = PX_COLL_BARRIER;

    px_coll_peer_failed(collnet_coll(w, 0), 0);  /* myself: ignored */
    px_coll_peer_failed(collnet_coll(w, 0), 99); /* out of range: ignored */
    px_coll_peer_failed(NULL, 1);
    assert_int_equal(px_coll_get_stats(collnet_coll(w, 0))->notices_sent, 0);
    px_coll_peer_failed(collnet_coll(w, 0), 3);
    px_coll_peer_failed(collnet_coll(w, 0), 3); /* idempotent */
    collnet_kill(w, 3);
    collnet_run(w, 100000); /* the notice floods while everybody is idle */
    for (uint32_t m = 0; m < 6; m++) {
        if (m == 3) {
            continue;
        }
        /* every survivor knows: its start fails at once */
        assert_int_equal(px_coll_start(collnet_coll(w, m), &args, NULL, 0, on_done, &d[m]),
                         PMIX_SUCCESS);
        assert_int_equal(d[m].calls, 1);
        assert_int_equal(d[m].status, PMIX_ERR_PROC_TERM_WO_SYNC);
        assert_int_equal(px_coll_epoch(collnet_coll(w, m)), 1);
    }
    /* ... and keeps failing */
    assert_int_equal(px_coll_start(collnet_coll(w, 1), &args, NULL, 0, on_done, &d[1]),
                     PMIX_SUCCESS);
    assert_int_equal(d[1].calls, 2);
    collnet_run(w, 100000);
    collnet_destroy(w);
}

typedef struct later {
    collnet *w;
    uint32_t m;
    px_coll_args args;
    done *d;
} later;

static void start_later(void *arg)
{
    later *l = arg;
    uint8_t x = (uint8_t)l->m;

    assert_int_equal(px_coll_start(collnet_coll(l->w, l->m), &l->args, &x, 1, on_done, l->d),
                     PMIX_SUCCESS);
}

static void test_timeouts(void **state)
{
    collnet_cfg nc = {0};
    collnet *w;
    done d[3];
    later l[3];
    px_coll_args args;
    uint8_t x = 0;
    double t0;

    nc.n = 3;
    nc.seed = 4;
    nc.dmin = nc.dmax = 0.01;
    w = collnet_create(&nc);
    memset(d, 0, sizeof(d));
    memset(&args, 0, sizeof(args));
    args.kind = PX_COLL_ALLGATHER;
    args.choice.algo = A("ring");
    args.timeout = 1.0;

    /* Alone: the watchdog fires at exactly T. */
    assert_int_equal(px_coll_start(collnet_coll(w, 0), &args, &x, 1, on_done, &d[0]), PMIX_SUCCESS);
    collnet_run(w, 1000);
    assert_int_equal(collnet_pending(w), 0);
    assert_int_equal(d[0].calls, 1);
    assert_int_equal(d[0].status, PMIX_ERR_TIMEOUT);
    assert_int_equal(collnet_live_timers(w, 0), 0);
    /* The others got the notice while idle: their epoch 1 fails at once. */
    for (uint32_t m = 1; m < 3; m++) {
        assert_int_equal(px_coll_start(collnet_coll(w, m), &args, &x, 1, on_done, &d[m]),
                         PMIX_SUCCESS);
        assert_int_equal(d[m].calls, 1);
        assert_int_equal(d[m].status, PMIX_ERR_TIMEOUT);
    }
    assert_int_equal(px_coll_get_stats(collnet_coll(w, 2))->notices, 1);

    /* Epoch 2 lasts 1.42 > T, but member 0 sees progress at 0.51 and 1.42
     * (the watchdog re-arms at 1.0 for the 0.51 left), so it succeeds:
     * 0 starts at t0, 2 at t0 + 0.5, 1 at t0 + 1.4. */
    memset(d, 0, sizeof(d));
    t0 = collnet_now(w);
    for (uint32_t m = 0; m < 3; m++) {
        l[m].w = w;
        l[m].m = m;
        l[m].args = args;
        l[m].d = &d[m];
    }
    collnet_call_at(w, t0, start_later, &l[0]);
    collnet_call_at(w, t0 + 0.5, start_later, &l[2]);
    collnet_call_at(w, t0 + 1.4, start_later, &l[1]);
    collnet_run(w, 1000);
    assert_int_equal(collnet_pending(w), 0);
    for (uint32_t m = 0; m < 3; m++) {
        assert_int_equal(d[m].calls, 1);
        assert_int_equal(d[m].status, PMIX_SUCCESS);
        assert_int_equal(collnet_live_timers(w, m), 0);
    }
    assert_true(collnet_now(w) - t0 > 1.4);
    collnet_destroy(w);
}

/* A member whose local participants failed joins only to fail the epoch
 * (px_coll_start_failed): members that run it end with its status, one
 * that starts it later fails at once, and the next epoch runs in step on
 * every member. Without it that member would stay an epoch behind. */
static void test_start_failed(void **state)
{
    collnet_cfg nc = {0};
    collnet *w;
    done d[5];
    px_coll_args args;
    uint8_t x[5] = {10, 11, 12, 13, 14};

    nc.n = 5;
    nc.seed = 9;
    nc.dmin = 0.001;
    nc.dmax = 0.01;
    w = collnet_create(&nc);
    memset(&args, 0, sizeof(args));
    args.kind = PX_COLL_ALLGATHER;
    args.choice.algo = A("bruck");
    args.timeout = 0; /* no timeout: only the notice can end epoch 1 */
    memset(d, 0, sizeof(d));
    assert_int_equal(px_coll_start_failed(collnet_coll(w, 2), PMIX_SUCCESS, on_done, &d[2]),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(d[2].calls, 0);
    /* Members 0, 1 and 3 run epoch 1; 2 fails it; 4 starts it afterwards. */
    for (uint32_t m = 0; m < 4; m++)
        if (m != 2)
            assert_int_equal(px_coll_start(collnet_coll(w, m), &args, &x[m], 1, on_done, &d[m]),
                             PMIX_SUCCESS);
    assert_int_equal(px_coll_start_failed(collnet_coll(w, 2), PMIX_ERR_TIMEOUT, on_done, &d[2]),
                     PMIX_SUCCESS);
    assert_int_equal(d[2].calls, 1); /* before it returned */
    assert_int_equal(d[2].status, PMIX_ERR_TIMEOUT);
    assert_int_equal(px_coll_epoch(collnet_coll(w, 2)), 1);
    collnet_run(w, 10000);
    for (uint32_t m = 0; m < 4; m++) {
        assert_int_equal(d[m].calls, 1);
        assert_int_equal(d[m].status, PMIX_ERR_TIMEOUT);
    }
    assert_int_equal(px_coll_start(collnet_coll(w, 4), &args, &x[4], 1, on_done, &d[4]),
                     PMIX_SUCCESS);
    assert_int_equal(d[4].calls, 1);
    assert_int_equal(d[4].status, PMIX_ERR_TIMEOUT);
    /* Epoch 2 on everybody: in step, with everybody's data. */
    memset(d, 0, sizeof(d));
    for (uint32_t m = 0; m < 5; m++)
        assert_int_equal(px_coll_start(collnet_coll(w, m), &args, &x[m], 1, on_done, &d[m]),
                         PMIX_SUCCESS);
    collnet_run(w, 10000);
    assert_int_equal(collnet_pending(w), 0);
    for (uint32_t m = 0; m < 5; m++) {
        assert_int_equal(d[m].calls, 1);
        assert_int_equal(d[m].status, PMIX_SUCCESS);
        assert_int_equal(d[m].size, 5);
        assert_memory_equal(d[m].data, x, 5);
        assert_int_equal(px_coll_epoch(collnet_coll(w, m)), 2);
    }
    /* Busy: nothing happens. */
    memset(d, 0, sizeof(d));
    assert_int_equal(px_coll_start(collnet_coll(w, 0), &args, &x[0], 1, on_done, &d[0]),
                     PMIX_SUCCESS);
    assert_int_equal(px_coll_start_failed(collnet_coll(w, 0), PMIX_ERR_TIMEOUT, on_done, &d[1]),
                     PMIX_ERR_RESOURCE_BUSY);
    assert_int_equal(d[1].calls, 0);
    collnet_destroy(w);
}

/* Five members on a network of 1 to 10 ms, and the args of a ring
 * allgather. */
static collnet *ring_of_five(uint64_t seed, bool refuse_dead, px_coll_args *args)
{
    collnet_cfg nc = {0};

    nc.n = 5;
    nc.seed = seed;
    nc.dmin = 0.001;
    nc.dmax = 0.01;
    nc.refuse_dead = refuse_dead;
    memset(args, 0, sizeof(*args));
    args->kind = PX_COLL_ALLGATHER;
    args->choice.algo = A("ring");
    return collnet_create(&nc);
}

static void test_send_refused(void **state)
{
    collnet *w;
    done d[5];
    px_coll_args args;
    uint8_t x = 1;

    w = ring_of_five(8, true, &args);
    memset(d, 0, sizeof(d));
    collnet_kill(w, 2); /* never starts; 1 -> 2 is refused */
    for (uint32_t m = 0; m < 5; m++) {
        if (m != 2) {
            assert_int_equal(px_coll_start(collnet_coll(w, m), &args, &x, 1, on_done, &d[m]),
                             PMIX_SUCCESS);
        }
    }
    collnet_run(w, 100000);
    assert_int_equal(collnet_pending(w), 0);
    for (uint32_t m = 0; m < 5; m++) {
        if (m != 2) {
            assert_int_equal(d[m].calls, 1);
            assert_int_equal(d[m].status, PMIX_ERR_PROC_TERM_WO_SYNC);
        }
    }
    collnet_destroy(w);
}

/* A send that fails on the sender's side (no memory, too big for the
 * transport) fails the running collective everywhere with that status but
 * counts nobody as failed: the next collective succeeds. (Before, any
 * failed send counted its peer failed for good, and every later fence
 * failed with PMIX_ERR_PROC_TERM_WO_SYNC.) */
static void test_send_failed_locally(void **state)
{
    static const pmix_status_t why[] = {PMIX_ERR_NOMEM, PMIX_ERR_OUT_OF_RESOURCE};

    for (size_t k = 0; k < sizeof(why) / sizeof(why[0]); k++) {
        px_coll_args args;
        collnet *w = ring_of_five(9, false, &args);
        done d[5];
        uint8_t x = 1;

        collnet_fail_sends(w, 1, 1, why[k]);
        for (int epoch = 1; epoch <= 2; epoch++) {
            memset(d, 0, sizeof(d));
            for (uint32_t m = 0; m < 5; m++) {
                assert_int_equal(px_coll_start(collnet_coll(w, m), &args, &x, 1, on_done, &d[m]),
                                 PMIX_SUCCESS);
            }
            collnet_run(w, 100000);
            for (uint32_t m = 0; m < 5; m++) {
                assert_int_equal(d[m].calls, 1);
                if (epoch == 1) {
                    assert_int_equal(d[m].status, why[k]);
                } else {
                    assert_int_equal(d[m].status, PMIX_SUCCESS);
                }
            }
        }
        assert_int_equal(collnet_pending(w), 0);
        collnet_destroy(w);
    }
}

/* The ABORT notice itself fails locally. Member 1 is a leaf of the notice
 * tree (its only neighbour is 0): its data send and then its one notice
 * fail; the notice goes around 0 at once (0's other neighbours tell 0)
 * and to 0 again later. Member 0's data send and then its first notice
 * (to 1) fail: 1 can only hear from 0, so 0 must send it again later.
 * Members that are not told wait forever: there is no timeout. The next
 * collective succeeds. (test_notice_retry_without_timers checks the
 * going around.) */
static void test_notice_failed_locally(void **state)
{
    static const pmix_status_t why[] = {PMIX_ERR_NOMEM, PMIX_ERR_OUT_OF_RESOURCE};

    for (size_t k = 0; k < sizeof(why) / sizeof(why[0]); k++) {
        for (uint32_t who = 0; who <= 1; who++) {
            px_coll_args args;
            collnet *w = ring_of_five(11 + who, false, &args);
            done d[5];
            uint8_t x = 1;

            collnet_fail_sends(w, who, 1, why[k]);
            collnet_fail_notices(w, who, 1, why[k]);
            for (int epoch = 1; epoch <= 2; epoch++) {
                memset(d, 0, sizeof(d));
                for (uint32_t m = 0; m < 5; m++) {
                    assert_int_equal(
                        px_coll_start(collnet_coll(w, m), &args, &x, 1, on_done, &d[m]),
                        PMIX_SUCCESS);
                }
                collnet_run(w, 100000);
                for (uint32_t m = 0; m < 5; m++) {
                    assert_int_equal(d[m].calls, 1);
                    assert_int_equal(d[m].status, epoch == 1 ? why[k] : PMIX_SUCCESS);
                }
            }
            assert_int_equal(px_coll_get_stats(collnet_coll(w, who))->notices_held, 1);
            assert_int_equal(collnet_live_timers(w, who), 0);
            assert_int_equal(collnet_pending(w), 0);
            collnet_destroy(w);
        }
    }
}

/* Member 0 of 5 on a host without timers (cap_ops) whose sends fail with
 * cap->refuse: its barrier fails at once, and the ABORT notice to every
 * other member (1, 2, 4, and 3 around 2) is owed. */
static px_coll *owing_member(capture *cap)
{
    px_coll_config cfg = {9, 5, 0, NULL, 0};
    px_coll *c = px_coll_create(&cap_ops, cap, &cfg);
    px_coll_args args;
    done d;

    assert_non_null(c);
    memset(&args, 0, sizeof(args));
    memset(&d, 0, sizeof(d));
    args.kind = PX_COLL_BARRIER;
    args.choice.algo = A("dissemination");
    assert_int_equal(px_coll_start(c, &args, NULL, 0, on_done, &d), PMIX_SUCCESS);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.status, cap->refuse);
    assert_int_equal(cap->n, 0);
    assert_int_equal(px_coll_get_stats(c)->notices_held, 4);
    return c;
}

/* A host without timers: notices that failed locally go out at the next
 * delivery, each owed member once, and a member behind one that could
 * not be told (3, behind 2) is told too. */
static void test_notice_retry_without_timers(void **state)
{
    capture cap = {{{0}}, 0, PMIX_ERR_NOMEM};
    px_coll *c = owing_member(&cap);
    px_coll_msg_info h;
    bool told[5] = {false};
    uint8_t junk[4] = {0};

    cap.refuse = PMIX_SUCCESS;
    assert_int_equal(px_coll_deliver(c, 1, junk, sizeof(junk)), PMIX_ERR_BAD_PARAM);
    assert_int_equal(cap.n, 4);
    for (size_t i = 0; i < cap.n; i++) {
        assert_int_equal(px_coll_msg_peek(cap.msgs[i].msg, cap.msgs[i].len, &h), PMIX_SUCCESS);
        assert_int_equal(h.type, 2);
        assert_int_equal(h.epoch, 1);
        assert_false(told[cap.msgs[i].to]);
        told[cap.msgs[i].to] = true;
    }
    assert_true(told[1] && told[2] && told[3] && told[4]);
    cap_clear(&cap);
    assert_int_equal(px_coll_deliver(c, 1, junk, sizeof(junk)), PMIX_ERR_BAD_PARAM);
    assert_int_equal(cap.n, 0);
    px_coll_destroy(c);
}

/* A notice that can never go (here every send is too big for the host)
 * is sent at most 64 times to each owed member, then given up: retries
 * do not run for ever. */
static void test_notice_retry_gives_up(void **state)
{
    capture cap = {{{0}}, 0, PMIX_ERR_OUT_OF_RESOURCE};
    px_coll *c = owing_member(&cap);
    uint64_t before = px_coll_get_stats(c)->notices_sent;
    uint8_t junk[4] = {0};

    for (int i = 0; i < 100; i++) {
        px_coll_deliver(c, 1, junk, sizeof(junk));
    }
    /* 4 owed members, 63 retries each after the first send */
    assert_int_equal(px_coll_get_stats(c)->notices_sent - before, 4 * 63);
    assert_int_equal(cap.n, 0);
    px_coll_destroy(c);
}

/* Somebody names me as failed: my collective ends, and I stay usable for
 * the count of epochs (I do not mark myself failed). */
static void test_notice_naming_me(void **state)
{
    capture cap = {{{0}}, 0, 0};
    px_coll_config cfg = {9, 4, 1, NULL, 0};
    px_coll *c = px_coll_create(&cap_ops, &cap, &cfg);
    px_coll_args args;
    uint8_t m[48];
    done d;

    memset(&args, 0, sizeof(args));
    memset(&d, 0, sizeof(d));
    args.kind = PX_COLL_BARRIER;
    assert_int_equal(px_coll_start(c, &args, NULL, 0, on_done, &d), PMIX_SUCCESS);
    hdr(m, 2, 0, 0, 0, 9, 1, 0, 0, 4);
    le32(m + 32, (uint32_t)PMIX_ERR_PROC_TERM_WO_SYNC);
    le32(m + 36, 0); /* origin */
    le32(m + 40, 1); /* one failed member: me */
    le32(m + 44, 1);
    assert_int_equal(px_coll_deliver(c, 0, m, 48), PMIX_SUCCESS);
    assert_int_equal(d.calls, 1);
    assert_int_equal(d.status, PMIX_ERR_PROC_TERM_WO_SYNC);
    /* it forwarded the notice along the tree (1's neighbours: 0, done) */
    cap_clear(&cap);
    /* the next epoch can run */
    memset(&d, 0, sizeof(d));
    assert_int_equal(px_coll_start(c, &args, NULL, 0, on_done, &d), PMIX_SUCCESS);
    assert_int_equal(d.calls, 0);
    px_coll_destroy(c);
    cap_clear(&cap);
}

/* A callback may take the result's buffers. */
static void test_result_ownership(void **state)
{
    capture cap = {{{0}}, 0, 0};
    px_coll_config cfg = {1, 1, 0, NULL, 0};
    px_coll *c = px_coll_create(&cap_ops, &cap, &cfg);
    px_coll_args args;
    done d;

    memset(&args, 0, sizeof(args));
    memset(&d, 0, sizeof(d));
    args.kind = PX_COLL_ALLGATHER;
    d.take = true;
    assert_int_equal(px_coll_start(c, &args, "xyz", 3, on_done, &d), PMIX_SUCCESS);
    assert_non_null(d.taken);
    assert_memory_equal(d.taken, "xyz", 3);
    assert_int_equal(d.taken_offsets[1], 3);
    free(d.taken);
    free(d.taken_offsets);
    px_coll_destroy(c);
}

/* The catalog's formulas (px_coll_formula): the alpha-beta costs that
 * pmixsim holds every fence against, from the catalog row. With beta = 0
 * a formula counts message latencies on the critical path; with latency
 * 0, bytes. Hier and radixes other than 2 have none (NAN); one member
 * costs nothing. */
static void test_formulas(void **state)
{
    (void)state;
    px_coll_choice ch;
    px_coll_cost_in in = {.kind = PX_COLL_BARRIER, .nmembers = 8, .latency = 1e-6};

    assert_int_equal(px_coll_parse(PX_COLL_BARRIER, "dissemination", &ch, NULL, 0), PMIX_SUCCESS);
    assert_true(fabs(px_coll_formula(&ch, &in) - 3e-6) < 1e-15);
    in.nmembers = 9; /* ceil(log2 9) = 4 rounds */
    assert_true(fabs(px_coll_formula(&ch, &in) - 4e-6) < 1e-15);
    in.nmembers = 1;
    assert_true(px_coll_formula(&ch, &in) == 0);

    assert_int_equal(px_coll_parse(PX_COLL_BARRIER, "tree", &ch, NULL, 0), PMIX_SUCCESS);
    in.nmembers = 8;
    assert_true(fabs(px_coll_formula(&ch, &in) - 6e-6) < 1e-15); /* 3 up, 3 down */

    /* allgather of 8 x 100 bytes at 1 ns per byte, no latency: each
     * message's header (32 + 8 range bytes) per round, and 7/8 of the
     * data with its 4-byte lengths */
    in = (px_coll_cost_in){
        .kind = PX_COLL_ALLGATHER, .nmembers = 8, .bytes = 800, .latency = 0, .beta = 1e-9};
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "recdbl", &ch, NULL, 0), PMIX_SUCCESS);
    double want = 3 * 40e-9 + 7.0 / 8 * (800 + 8 * 4) * 1e-9;
    assert_true(fabs(px_coll_formula(&ch, &in) - want) < 1e-15);
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "ring", &ch, NULL, 0), PMIX_SUCCESS);
    want = 7 * 40e-9 + 7.0 / 8 * (800 + 8 * 4) * 1e-9;
    assert_true(fabs(px_coll_formula(&ch, &in) - want) < 1e-15);

    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "tree:4", &ch, NULL, 0), PMIX_SUCCESS);
    assert_true(isnan(px_coll_formula(&ch, &in)));
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "hier", &ch, NULL, 0), PMIX_SUCCESS);
    assert_true(isnan(px_coll_formula(&ch, &in))); /* unresolved: no inner */
    assert_true(isnan(px_coll_formula(NULL, &in)));

    /* hier over 4 groups of 4, 100 bytes each (104 with the length word),
     * a = 1 us + 40 header bytes at 1 ns. */
    in = (px_coll_cost_in){.kind = PX_COLL_ALLGATHER,
                           .nmembers = 16,
                           .bytes = 1600,
                           .latency = 1e-6,
                           .beta = 1e-9,
                           .ngroups = 4,
                           .group_size = 4};
    double a = 1e-6 + 40e-9;
    /* every member a leader: recdbl over a column of 4 blocks of 104, then
     * Bruck over the group's 4 column blobs of 4 x 104 + 4 bytes (+ 4) */
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "hier:recdbl:all", &ch, NULL, 0),
                     PMIX_SUCCESS);
    want = 2 * a + 3.0 / 4 * 4 * 104 * 1e-9 + 2 * a + 3.0 / 4 * 4 * (4 * 104 + 4) * 1e-9;
    assert_true(fabs(px_coll_formula(&ch, &in) - want) < 1e-15);
    /* one leader: gather 3 blocks in 2 rounds, recdbl over 4 group blobs
     * of 4 x 104 + 4, broadcast of 16 x 104 bytes twice in a row */
    assert_int_equal(px_coll_parse(PX_COLL_ALLGATHER, "hier:recdbl:2:one", &ch, NULL, 0),
                     PMIX_SUCCESS);
    want = 2 * a + 3 * 104e-9 + 2 * a + 3.0 / 4 * 4 * (4 * 104 + 4) * 1e-9 + 2 * (a + 16 * 104e-9);
    assert_true(fabs(px_coll_formula(&ch, &in) - want) < 1e-15);
    ch.radix = 3;
    assert_true(isnan(px_coll_formula(&ch, &in)));
    /* barriers: lg G + lg c rounds, or 2 lg c + lg G */
    in = (px_coll_cost_in){
        .kind = PX_COLL_BARRIER, .nmembers = 16, .latency = 1e-6, .ngroups = 4, .group_size = 4};
    assert_int_equal(px_coll_parse(PX_COLL_BARRIER, "hier:dissemination:all", &ch, NULL, 0),
                     PMIX_SUCCESS);
    assert_true(fabs(px_coll_formula(&ch, &in) - 4e-6) < 1e-15);
    assert_int_equal(px_coll_parse(PX_COLL_BARRIER, "hier:dissemination:2:one", &ch, NULL, 0),
                     PMIX_SUCCESS);
    assert_true(fabs(px_coll_formula(&ch, &in) - 6e-6) < 1e-15);
    in.ngroups = 0; /* groups not known */
    assert_true(isnan(px_coll_formula(&ch, &in)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_catalog, teardown_leaks),
        cmocka_unit_test_teardown(test_auto_rule, teardown_leaks),
        cmocka_unit_test_teardown(test_parse, teardown_leaks),
        cmocka_unit_test_teardown(test_choose, teardown_leaks),
        cmocka_unit_test_teardown(test_resolve_and_counts, teardown_leaks),
        cmocka_unit_test_teardown(test_formulas, teardown_leaks),
        cmocka_unit_test_teardown(test_groups, teardown_leaks),
        cmocka_unit_test_teardown(test_create_and_args, teardown_leaks),
        cmocka_unit_test_teardown(test_single_member, teardown_leaks),
        cmocka_unit_test_teardown(test_header, teardown_leaks),
        cmocka_unit_test_teardown(test_hostile_input, teardown_leaks),
        cmocka_unit_test_teardown(test_corrupted_copies, teardown_leaks),
        cmocka_unit_test_teardown(test_disagreement, teardown_leaks),
        cmocka_unit_test_teardown(test_early_queue_bounds, teardown_leaks),
        cmocka_unit_test_teardown(test_peer_failed_while_idle, teardown_leaks),
        cmocka_unit_test_teardown(test_timeouts, teardown_leaks),
        cmocka_unit_test_teardown(test_start_failed, teardown_leaks),
        cmocka_unit_test_teardown(test_send_refused, teardown_leaks),
        cmocka_unit_test_teardown(test_send_failed_locally, teardown_leaks),
        cmocka_unit_test_teardown(test_notice_failed_locally, teardown_leaks),
        cmocka_unit_test_teardown(test_notice_retry_without_timers, teardown_leaks),
        cmocka_unit_test_teardown(test_notice_retry_gives_up, teardown_leaks),
        cmocka_unit_test_teardown(test_notice_naming_me, teardown_leaks),
        cmocka_unit_test_teardown(test_result_ownership, teardown_leaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
