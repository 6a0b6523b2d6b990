/*
 * test_hostcore_pubsub - the publish/lookup data service of the host core
 * (hostcore/pubsub.c): ranges and who sees what, duplicates, lookups that
 * wait (satisfied by a later publish, or ended by their deadline),
 * persistence and what ends it, owner-only unpublish, and the limits.
 * Every test makes a fresh service and destroys it; the sanitizer build
 * proves nothing leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <pmix.h>

#include "px_pubsub.h"

/* What a lookup's callback brought. */
typedef struct answer {
    int calls;
    pmix_status_t status;
    size_t n;
    char keys[4][PMIX_MAX_KEYLEN + 1];
    char vals[4][64];
    pmix_proc_t procs[4];
} answer;

static void lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    answer *a = cbdata;

    a->calls++;
    a->status = status;
    a->n = ndata;
    for (size_t i = 0; i < ndata && i < 4; i++) {
        snprintf(a->keys[i], sizeof(a->keys[i]), "%s", data[i].key);
        if (data[i].value.type == PMIX_STRING)
            snprintf(a->vals[i], sizeof(a->vals[i]), "%s", data[i].value.data.string);
        a->procs[i] = data[i].proc;
    }
}

static px_pubsub_who who_of(const char *ns, pmix_rank_t rank, uint32_t session, uint32_t node)
{
    px_pubsub_who w;

    memset(&w, 0, sizeof(w));
    PMIx_Load_procid(&w.proc, ns, rank);
    w.session = session;
    w.node = node;
    return w;
}

/* Publish key=val with optional range and persistence (0xff: default). */
static pmix_status_t pub(px_pubsub *ps, const px_pubsub_who *w, const char *key, const char *val,
                         unsigned range, unsigned persist)
{
    pmix_info_t info[3];
    size_t n = 0;
    pmix_data_range_t r = (pmix_data_range_t)range;
    pmix_persistence_t p = (pmix_persistence_t)persist;
    pmix_status_t rc;

    PMIx_Info_load(&info[n++], key, val, PMIX_STRING);
    if (range != 0xff)
        PMIx_Info_load(&info[n++], PMIX_RANGE, &r, PMIX_DATA_RANGE);
    if (persist != 0xff)
        PMIx_Info_load(&info[n++], PMIX_PERSISTENCE, &p, PMIX_PERSIST);
    rc = px_pubsub_publish(ps, w, info, n, 0);
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&info[i]);
    return rc;
}

/* Look up one key (range 0xff: default; wait < 0: no PMIX_WAIT). */
static pmix_status_t look(px_pubsub *ps, const px_pubsub_who *w, const char *key, unsigned range,
                          int wait, unsigned timeout, double now, answer *a)
{
    char *keys[] = {(char *)key, NULL};
    pmix_info_t info[3];
    size_t n = 0;
    pmix_data_range_t r = (pmix_data_range_t)range;
    bool yes = true;
    pmix_status_t rc;

    if (range != 0xff)
        PMIx_Info_load(&info[n++], PMIX_RANGE, &r, PMIX_DATA_RANGE);
    if (wait >= 0)
        PMIx_Info_load(&info[n++], PMIX_WAIT, &yes, PMIX_BOOL);
    if (timeout > 0)
        PMIx_Info_load(&info[n++], PMIX_TIMEOUT, &timeout, PMIX_UINT32);
    rc = px_pubsub_lookup(ps, w, keys, info, n, now, lookup_cb, a);
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&info[i]);
    return rc;
}

static void test_publish_lookup(void **state)
{
    px_pubsub *ps = px_pubsub_create(NULL);
    px_pubsub_who r0 = who_of("job1", 0, 1, 0), r1 = who_of("job1", 1, 1, 1);
    answer a = {0};

    assert_non_null(ps);
    assert_int_equal(pub(ps, &r0, "svc", "port-0", 0xff, 0xff), PMIX_SUCCESS);
    assert_int_equal(px_pubsub_entries(ps), 1);
    assert_int_equal(look(ps, &r1, "svc", 0xff, -1, 0, 0, &a), PMIX_SUCCESS);
    assert_int_equal(a.calls, 1); /* answered at once */
    assert_int_equal(a.status, PMIX_SUCCESS);
    assert_int_equal(a.n, 1);
    assert_string_equal(a.keys[0], "svc");
    assert_string_equal(a.vals[0], "port-0");
    assert_string_equal(a.procs[0].nspace, "job1");
    assert_int_equal(a.procs[0].rank, 0);

    /* two keys, one there: partial; none: not found */
    char *two[] = {"svc", "nope", NULL};
    memset(&a, 0, sizeof(a));
    assert_int_equal(px_pubsub_lookup(ps, &r1, two, NULL, 0, 0, lookup_cb, &a), PMIX_SUCCESS);
    assert_int_equal(a.status, PMIX_ERR_PARTIAL_SUCCESS);
    assert_int_equal(a.n, 1);
    memset(&a, 0, sizeof(a));
    assert_int_equal(look(ps, &r1, "nope", 0xff, -1, 0, 0, &a), PMIX_SUCCESS);
    assert_int_equal(a.status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(a.n, 0);

    /* nothing to publish, bad keys, bad lookups: refused, no callback */
    pmix_data_range_t g = PMIX_RANGE_GLOBAL;
    pmix_info_t only;
    PMIx_Info_load(&only, PMIX_RANGE, &g, PMIX_DATA_RANGE);
    assert_int_equal(px_pubsub_publish(ps, &r0, &only, 1, 0), PMIX_ERR_BAD_PARAM);
    PMIx_Info_destruct(&only);
    char *none[] = {NULL}, *empty[] = {"", NULL};
    memset(&a, 0, sizeof(a));
    assert_int_equal(px_pubsub_lookup(ps, &r1, none, NULL, 0, 0, lookup_cb, &a),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_pubsub_lookup(ps, &r1, empty, NULL, 0, 0, lookup_cb, &a),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(a.calls, 0);
    px_pubsub_destroy(ps);
}

/* Who sees what: a lookup matches the publisher's range, and only from
 * inside it. */
static void test_ranges(void **state)
{
    px_pubsub *ps = px_pubsub_create(NULL);
    px_pubsub_who a0 = who_of("jobA", 0, 1, 0), a1 = who_of("jobA", 1, 1, 1);
    px_pubsub_who b0 = who_of("jobB", 0, 1, 0), c0 = who_of("jobC", 0, 2, 0);
    answer an;

    assert_int_equal(pub(ps, &a0, "ns", "v-ns", PMIX_RANGE_NAMESPACE, 0xff), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &a0, "sess", "v-sess", 0xff, 0xff), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &a0, "glob", "v-glob", PMIX_RANGE_GLOBAL, 0xff), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &a0, "node", "v-node", PMIX_RANGE_LOCAL, 0xff), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &a0, "me", "v-me", PMIX_RANGE_PROC_LOCAL, 0xff), PMIX_SUCCESS);

    struct {
        const px_pubsub_who *who;
        const char *key;
        unsigned range;
        pmix_status_t want;
    } cases[] = {
        {&a1, "ns", PMIX_RANGE_NAMESPACE, PMIX_SUCCESS},
        {&b0, "ns", PMIX_RANGE_NAMESPACE, PMIX_ERR_NOT_FOUND},  /* other job */
        {&a1, "ns", 0xff, PMIX_ERR_NOT_FOUND},                  /* other range */
        {&b0, "sess", 0xff, PMIX_SUCCESS},                      /* same session */
        {&c0, "sess", PMIX_RANGE_SESSION, PMIX_ERR_NOT_FOUND},  /* other session */
        {&c0, "glob", PMIX_RANGE_GLOBAL, PMIX_SUCCESS},         /* anyone */
        {&b0, "node", PMIX_RANGE_LOCAL, PMIX_SUCCESS},          /* same node */
        {&a1, "node", PMIX_RANGE_LOCAL, PMIX_ERR_NOT_FOUND},    /* other node */
        {&a0, "me", PMIX_RANGE_PROC_LOCAL, PMIX_SUCCESS},       /* itself */
        {&a1, "me", PMIX_RANGE_PROC_LOCAL, PMIX_ERR_NOT_FOUND}, /* anyone else */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&an, 0, sizeof(an));
        assert_int_equal(look(ps, cases[i].who, cases[i].key, cases[i].range, -1, 0, 0, &an),
                         PMIX_SUCCESS);
        if (an.status != cases[i].want)
            fail_msg("case %zu (%s): %s, expected %s", i, cases[i].key,
                     PMIx_Error_string(an.status), PMIx_Error_string(cases[i].want));
    }
    /* what is not offered is refused, not ignored */
    assert_int_equal(pub(ps, &a0, "rm", "x", PMIX_RANGE_RM, 0xff), PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(pub(ps, &a0, "cu", "x", PMIX_RANGE_CUSTOM, 0xff), PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(pub(ps, &a0, "bad", "x", 99, 0xff), PMIX_ERR_BAD_PARAM);
    assert_int_equal(pub(ps, &a0, "bad", "x", 0xff, 99), PMIX_ERR_BAD_PARAM);
    pmix_info_t acc[2];
    uint32_t uid = 1000;
    pmix_data_array_t *da = PMIx_Data_array_create(1, PMIX_UINT32);
    memcpy(da->array, &uid, sizeof(uid));
    PMIx_Info_load(&acc[0], "k", "v", PMIX_STRING);
    PMIx_Info_load(&acc[1], PMIX_ACCESS_USERIDS, da, PMIX_DATA_ARRAY);
    assert_int_equal(px_pubsub_publish(ps, &a0, acc, 2, 0), PMIX_ERR_NOT_SUPPORTED);
    PMIx_Info_destruct(&acc[0]);
    PMIx_Info_destruct(&acc[1]);
    PMIx_Data_array_free(da);
    assert_int_equal(px_pubsub_entries(ps), 5);
    px_pubsub_destroy(ps);
}

static void test_duplicates(void **state)
{
    px_pubsub *ps = px_pubsub_create(NULL);
    px_pubsub_who r0 = who_of("job", 0, 1, 0), r1 = who_of("job", 1, 1, 0);
    answer a = {0};

    assert_int_equal(pub(ps, &r0, "svc", "first", 0xff, 0xff), PMIX_SUCCESS);
    /* the same range, by anyone: refused, the first value stays */
    assert_int_equal(pub(ps, &r0, "svc", "again", 0xff, 0xff), PMIX_ERR_DUPLICATE_KEY);
    assert_int_equal(pub(ps, &r1, "svc", "other", PMIX_RANGE_SESSION, 0xff),
                     PMIX_ERR_DUPLICATE_KEY);
    /* another range: allowed */
    assert_int_equal(pub(ps, &r1, "svc", "ns", PMIX_RANGE_NAMESPACE, 0xff), PMIX_SUCCESS);
    assert_int_equal(look(ps, &r1, "svc", 0xff, -1, 0, 0, &a), PMIX_SUCCESS);
    assert_string_equal(a.vals[0], "first");

    /* all or nothing: a duplicate among new keys publishes none */
    pmix_info_t info[3];
    PMIx_Info_load(&info[0], "new1", "x", PMIX_STRING);
    PMIx_Info_load(&info[1], "svc", "x", PMIX_STRING);
    PMIx_Info_load(&info[2], "new2", "x", PMIX_STRING);
    assert_int_equal(px_pubsub_publish(ps, &r1, info, 3, 0), PMIX_ERR_DUPLICATE_KEY);
    /* ... and a key given twice in one call */
    PMIx_Info_destruct(&info[1]);
    PMIx_Info_load(&info[1], "new1", "y", PMIX_STRING);
    assert_int_equal(px_pubsub_publish(ps, &r1, info, 3, 0), PMIX_ERR_DUPLICATE_KEY);
    for (int i = 0; i < 3; i++)
        PMIx_Info_destruct(&info[i]);
    assert_int_equal(px_pubsub_entries(ps), 2);
    px_pubsub_destroy(ps);
}

static void test_wait(void **state)
{
    px_pubsub *ps = px_pubsub_create(NULL);
    px_pubsub_who r0 = who_of("job", 0, 1, 0), r1 = who_of("job", 1, 1, 0),
                  r2 = who_of("job", 2, 1, 0);
    answer a1 = {0}, a2 = {0}, a3 = {0};

    /* r1 waits without a deadline, r2 with 5 s */
    assert_int_equal(look(ps, &r1, "late", 0xff, 1, 0, 10.0, &a1), PMIX_SUCCESS);
    assert_int_equal(look(ps, &r2, "never", 0xff, 1, 5, 10.0, &a2), PMIX_SUCCESS);
    assert_int_equal(a1.calls + a2.calls, 0);
    assert_int_equal(px_pubsub_waiting(ps), 2);
    assert_true(px_pubsub_next_deadline(ps) == 15.0);
    px_pubsub_expire(ps, 14.9);
    assert_int_equal(a2.calls, 0);

    /* a publish answers the waiter it satisfies, before it returns */
    assert_int_equal(pub(ps, &r0, "late", "here", 0xff, 0xff), PMIX_SUCCESS);
    assert_int_equal(a1.calls, 1);
    assert_int_equal(a1.status, PMIX_SUCCESS);
    assert_string_equal(a1.vals[0], "here");
    assert_int_equal(a2.calls, 0);

    /* the deadline ends the other */
    px_pubsub_expire(ps, 15.0);
    assert_int_equal(a2.calls, 1);
    assert_int_equal(a2.status, PMIX_ERR_TIMEOUT);
    assert_int_equal(a2.n, 0);
    assert_int_equal(px_pubsub_waiting(ps), 0);
    assert_true(px_pubsub_next_deadline(ps) == 0);

    /* PMIX_WAIT as a count: two keys, one is enough */
    char *keys[] = {"k1", "k2", NULL};
    pmix_info_t w;
    uint32_t one = 1;
    PMIx_Info_load(&w, PMIX_WAIT, &one, PMIX_UINT32);
    assert_int_equal(px_pubsub_lookup(ps, &r1, keys, &w, 1, 0, lookup_cb, &a3), PMIX_SUCCESS);
    PMIx_Info_destruct(&w);
    assert_int_equal(a3.calls, 0);
    assert_int_equal(pub(ps, &r0, "k2", "two", 0xff, 0xff), PMIX_SUCCESS);
    assert_int_equal(a3.calls, 1);
    assert_int_equal(a3.status, PMIX_ERR_PARTIAL_SUCCESS);
    assert_string_equal(a3.keys[0], "k2");

    /* a waiter of another range is not woken */
    memset(&a3, 0, sizeof(a3));
    assert_int_equal(look(ps, &r1, "nsonly", PMIX_RANGE_NAMESPACE, 1, 0, 0, &a3), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &r0, "nsonly", "s", PMIX_RANGE_SESSION, 0xff), PMIX_SUCCESS);
    assert_int_equal(a3.calls, 0);
    assert_int_equal(pub(ps, &r0, "nsonly", "n", PMIX_RANGE_NAMESPACE, 0xff), PMIX_SUCCESS);
    assert_int_equal(a3.calls, 1);
    assert_string_equal(a3.vals[0], "n");
    px_pubsub_destroy(ps);
}

static void test_first_read(void **state)
{
    px_pubsub *ps = px_pubsub_create(NULL);
    px_pubsub_who r0 = who_of("job", 0, 1, 0), r1 = who_of("job", 1, 1, 0),
                  r2 = who_of("job", 2, 1, 0);
    answer a1 = {0}, a2 = {0}, a3 = {0};

    /* two waiters: the first gets it, and it is gone for the second */
    assert_int_equal(look(ps, &r1, "once", 0xff, 1, 0, 0, &a1), PMIX_SUCCESS);
    assert_int_equal(look(ps, &r2, "once", 0xff, 1, 0, 0, &a2), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &r0, "once", "v", 0xff, PMIX_PERSIST_FIRST_READ), PMIX_SUCCESS);
    assert_int_equal(a1.calls, 1);
    assert_int_equal(a1.status, PMIX_SUCCESS);
    assert_int_equal(a2.calls, 0);
    assert_int_equal(px_pubsub_entries(ps), 0);
    /* published again (no longer a duplicate): the second waiter's turn */
    assert_int_equal(pub(ps, &r0, "once", "w", 0xff, PMIX_PERSIST_FIRST_READ), PMIX_SUCCESS);
    assert_int_equal(a2.calls, 1);
    assert_string_equal(a2.vals[0], "w");
    /* a lookup that does not wait consumes it too */
    assert_int_equal(pub(ps, &r0, "once", "x", 0xff, PMIX_PERSIST_FIRST_READ), PMIX_SUCCESS);
    assert_int_equal(look(ps, &r1, "once", 0xff, -1, 0, 0, &a3), PMIX_SUCCESS);
    assert_int_equal(a3.status, PMIX_SUCCESS);
    memset(&a3, 0, sizeof(a3));
    assert_int_equal(look(ps, &r1, "once", 0xff, -1, 0, 0, &a3), PMIX_SUCCESS);
    assert_int_equal(a3.status, PMIX_ERR_NOT_FOUND);
    /* the same key asked for twice in one lookup: both get it, once (a
     * case fuzz_engine found: the entry was freed, then read again) */
    char *twice[] = {"once", "once", NULL};
    assert_int_equal(pub(ps, &r0, "once", "y", 0xff, PMIX_PERSIST_FIRST_READ), PMIX_SUCCESS);
    memset(&a3, 0, sizeof(a3));
    assert_int_equal(px_pubsub_lookup(ps, &r1, twice, NULL, 0, 0, lookup_cb, &a3), PMIX_SUCCESS);
    assert_int_equal(a3.status, PMIX_SUCCESS);
    assert_int_equal(a3.n, 2);
    assert_int_equal(px_pubsub_entries(ps), 0);
    px_pubsub_destroy(ps);
}

static void test_unpublish(void **state)
{
    px_pubsub *ps = px_pubsub_create(NULL);
    px_pubsub_who r0 = who_of("job", 0, 1, 0), r1 = who_of("job", 1, 1, 0);
    char *svc[] = {"svc", NULL}, *both[] = {"svc", "mine", NULL}, *gone[] = {"gone", NULL};

    assert_int_equal(pub(ps, &r0, "svc", "v", 0xff, 0xff), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &r1, "mine", "v", 0xff, 0xff), PMIX_SUCCESS);
    /* not the owner: refused, and nothing goes, not even its own key */
    assert_int_equal(px_pubsub_unpublish(ps, &r1, svc, NULL, 0), PMIX_ERR_NO_PERMISSIONS);
    assert_int_equal(px_pubsub_unpublish(ps, &r1, both, NULL, 0), PMIX_ERR_NO_PERMISSIONS);
    assert_int_equal(px_pubsub_entries(ps), 2);
    assert_int_equal(px_pubsub_unpublish(ps, &r1, gone, NULL, 0), PMIX_ERR_NOT_FOUND);
    /* another range: not there */
    pmix_data_range_t g = PMIX_RANGE_GLOBAL;
    pmix_info_t ri;
    PMIx_Info_load(&ri, PMIX_RANGE, &g, PMIX_DATA_RANGE);
    assert_int_equal(px_pubsub_unpublish(ps, &r0, svc, &ri, 1), PMIX_ERR_NOT_FOUND);
    assert_int_equal(px_pubsub_unpublish(ps, &r0, NULL, &ri, 1), PMIX_SUCCESS); /* none there */
    PMIx_Info_destruct(&ri);
    assert_int_equal(px_pubsub_entries(ps), 2);
    /* the owner: gone, and the key is free again */
    assert_int_equal(px_pubsub_unpublish(ps, &r0, svc, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(px_pubsub_entries(ps), 1);
    assert_int_equal(pub(ps, &r1, "svc", "now-mine", 0xff, 0xff), PMIX_SUCCESS);
    /* NULL keys: everything of the caller's */
    assert_int_equal(pub(ps, &r1, "g", "v", PMIX_RANGE_GLOBAL, 0xff), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &r0, "keep", "v", 0xff, 0xff), PMIX_SUCCESS);
    assert_int_equal(px_pubsub_unpublish(ps, &r1, NULL, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(px_pubsub_entries(ps), 1);
    px_pubsub_destroy(ps);
}

static void test_persistence(void **state)
{
    px_pubsub *ps = px_pubsub_create(NULL);
    px_pubsub_who r0 = who_of("job", 0, 1, 0), r1 = who_of("job", 1, 1, 0);
    px_pubsub_who other = who_of("job2", 0, 1, 0);
    answer a = {0};

    other.app = 0;
    r1.app = 1;
    assert_int_equal(pub(ps, &r0, "proc", "v", 0xff, PMIX_PERSIST_PROC), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &r0, "app0", "v", 0xff, 0xff), PMIX_SUCCESS); /* default: app */
    assert_int_equal(pub(ps, &r1, "app1", "v", 0xff, PMIX_PERSIST_APP), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &r0, "sess", "v", 0xff, PMIX_PERSIST_SESSION), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &r0, "indef", "v", 0xff, PMIX_PERSIST_INDEF), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &other, "other", "v", 0xff, PMIX_PERSIST_PROC), PMIX_SUCCESS);
    assert_int_equal(px_pubsub_entries(ps), 6);

    /* r0 ends: its PROC entry goes, its waiting lookup is answered */
    assert_int_equal(look(ps, &r0, "x", 0xff, 1, 0, 0, &a), PMIX_SUCCESS);
    px_pubsub_proc_ended(ps, &r0.proc);
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, PMIX_ERR_LOST_CONNECTION);
    assert_int_equal(px_pubsub_entries(ps), 5);
    /* app 1 of "job" ends: app1 goes, app0 stays */
    px_pubsub_app_ended(ps, "job", 1);
    assert_int_equal(px_pubsub_entries(ps), 4);
    memset(&a, 0, sizeof(a));
    assert_int_equal(look(ps, &other, "app0", 0xff, -1, 0, 0, &a), PMIX_SUCCESS);
    assert_int_equal(a.status, PMIX_SUCCESS);
    /* the job ends: app0 goes; the session's and the indefinite stay; the
     * other job's entry too */
    px_pubsub_job_ended(ps, "job");
    assert_int_equal(px_pubsub_entries(ps), 3);
    /* the session ends: its SESSION entry goes */
    px_pubsub_session_ended(ps, 2);
    assert_int_equal(px_pubsub_entries(ps), 3);
    px_pubsub_session_ended(ps, 1);
    assert_int_equal(px_pubsub_entries(ps), 2);
    memset(&a, 0, sizeof(a));
    assert_int_equal(look(ps, &other, "indef", 0xff, -1, 0, 0, &a), PMIX_SUCCESS);
    assert_int_equal(a.status, PMIX_SUCCESS);
    px_pubsub_destroy(ps);
}

static void test_limits(void **state)
{
    px_pubsub_limits lim = {.owner_entries = 3, .owner_bytes = 8192, .proc_waiters = 2};
    px_pubsub *ps = px_pubsub_create(&lim);
    px_pubsub_who r0 = who_of("job", 0, 1, 0), r1 = who_of("job", 1, 1, 0);
    answer a[4];
    char key[16], big[3500];

    memset(a, 0, sizeof(a));
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        assert_int_equal(pub(ps, &r0, key, "v", 0xff, 0xff), PMIX_SUCCESS);
    }
    assert_int_equal(pub(ps, &r0, "k3", "v", 0xff, 0xff), PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(pub(ps, &r1, "k3", "v", 0xff, 0xff), PMIX_SUCCESS); /* per owner */
    /* bytes: one big value fits, a second does not */
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(pub(ps, &r1, "big1", big, 0xff, 0xff), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &r1, "big2", big, 0xff, 0xff), PMIX_ERR_OUT_OF_RESOURCE);
    /* room again after an unpublish */
    char *k0[] = {"k0", NULL};
    assert_int_equal(px_pubsub_unpublish(ps, &r0, k0, NULL, 0), PMIX_SUCCESS);
    assert_int_equal(pub(ps, &r0, "k4", "v", 0xff, 0xff), PMIX_SUCCESS);

    /* waiting lookups per process */
    assert_int_equal(look(ps, &r0, "w1", 0xff, 1, 0, 0, &a[0]), PMIX_SUCCESS);
    assert_int_equal(look(ps, &r0, "w2", 0xff, 1, 0, 0, &a[1]), PMIX_SUCCESS);
    assert_int_equal(look(ps, &r0, "w3", 0xff, 1, 0, 0, &a[2]), PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(a[2].calls, 0);
    /* one answered at once does not count */
    assert_int_equal(look(ps, &r0, "k1", 0xff, 1, 0, 0, &a[3]), PMIX_SUCCESS);
    assert_int_equal(a[3].calls, 1);
    /* the host goes: every waiter is answered */
    px_pubsub_cancel_all(ps, PMIX_ERR_UNREACH);
    assert_int_equal(a[0].calls, 1);
    assert_int_equal(a[0].status, PMIX_ERR_UNREACH);
    assert_int_equal(a[1].calls, 1);
    assert_int_equal(px_pubsub_waiting(ps), 0);
    px_pubsub_destroy(ps);
    px_pubsub_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_publish_lookup), cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_duplicates),     cmocka_unit_test(test_wait),
        cmocka_unit_test(test_first_read),     cmocka_unit_test(test_unpublish),
        cmocka_unit_test(test_persistence),    cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
