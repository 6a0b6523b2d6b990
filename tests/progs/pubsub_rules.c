/*
 * pubsub_rules - PMIx_Publish, PMIx_Lookup and PMIx_Unpublish (Standard,
 * "Publish/Lookup Operations" and its retrieval rules) as pmixrun's data
 * service answers them, on one node and over daemons.
 *
 * Modes:
 *   ranges    rank 0 publishes one key in the namespace, session and global
 *             ranges, a value each, and another in its node's range
 *             (PMIX_RANGE_LOCAL) and its own (PMIX_RANGE_PROC_LOCAL); every
 *             rank finds each range's own value, the node's key only if it
 *             runs on rank 0's node (PMIX_HOSTNAME), the process's key only
 *             if it is rank 0; a range the service does not offer
 *             (PMIX_RANGE_CUSTOM) is refused with PMIX_ERR_NOT_SUPPORTED.
 *   nb        the _nb forms: each returns PMIX_SUCCESS and calls its callback
 *             once, never inside the call; a lookup with PMIX_WAIT started
 *             before the publish gets the value; two keys of which one is
 *             published give PMIX_ERR_PARTIAL_SUCCESS with one entry.
 *   persist   PMIX_PERSIST_FIRST_READ: the first lookup gets it, the next
 *             finds nothing; PMIX_PERSIST_PROC: rank 1's key is gone once
 *             rank 1 finalized and exited (rank 0 looks until it is gone);
 *             the default persistence (the app) outlives rank 1.
 *   limits    a process may hold 256 keys: the 257th is
 *             PMIX_ERR_OUT_OF_RESOURCE until one is unpublished; 16 lookups
 *             may wait: the 17th is refused; unpublishing with NULL keys
 *             removes every key of the caller's.
 */
#include "ptest.h"

/* Publish key=val with a range and a persistence (-1: the default). */
static pmix_status_t publish(const char *key, const char *val, int range, int persist)
{
    pmix_info_t info[3];
    size_t n = 0;
    pmix_data_range_t r = (pmix_data_range_t)range;
    pmix_persistence_t p = (pmix_persistence_t)persist;

    pt_info_str(&info[n++], key, val);
    if (range >= 0)
        pt_info(&info[n++], PMIX_RANGE, &r, PMIX_DATA_RANGE);
    if (persist >= 0)
        pt_info(&info[n++], PMIX_PERSISTENCE, &p, PMIX_PERSIST);
    pmix_status_t rc = PMIx_Publish(info, n);
    pt_info_free(info, n);
    return rc;
}

/* Look up `key` in `range` (-1: default), waiting up to `wait` seconds
 * (0: no PMIX_WAIT). On success the value's string goes to `val` and its
 * publisher's rank to `*from`. */
static pmix_status_t lookup(const char *key, int range, int wait, char *val, size_t cap,
                            pmix_rank_t *from)
{
    pmix_pdata_t pd;
    pmix_info_t info[3];
    size_t n = 0;
    pmix_data_range_t r = (pmix_data_range_t)range;

    PMIx_Pdata_construct(&pd);
    PMIx_Load_key(pd.key, key);
    if (range >= 0)
        pt_info(&info[n++], PMIX_RANGE, &r, PMIX_DATA_RANGE);
    if (wait > 0) {
        pt_info_bool(&info[n++], PMIX_WAIT, true);
        pt_info_int(&info[n++], PMIX_TIMEOUT, wait);
    }
    pmix_status_t rc = PMIx_Lookup(&pd, 1, info, n);
    pt_info_free(info, n);
    if (rc == PMIX_SUCCESS) {
        if (pd.value.type != PMIX_STRING) {
            pt_fail("lookup of %s: a value of type %s", key, pt_type_name(pd.value.type));
        } else if (val != NULL) {
            snprintf(val, cap, "%s", pd.value.data.string);
        }
        if (from != NULL)
            *from = pd.proc.rank;
    }
    PMIx_Pdata_destruct(&pd);
    return rc;
}

static void expect(const char *what, pmix_status_t got, pmix_status_t want)
{
    if (got != want)
        pt_fail("%s: %s, expected %s", what, pt_err(got), pt_err(want));
}

static void expect_value(const char *key, int range, const char *want)
{
    char val[64] = "";
    pmix_rank_t from = PMIX_RANK_UNDEF;
    pmix_status_t rc = lookup(key, range, 10, val, sizeof val, &from);

    if (rc != PMIX_SUCCESS)
        pt_fail("lookup of %s in range %d: %s", key, range, pt_err(rc));
    else if (strcmp(val, want) != 0 || from != 0)
        pt_fail("lookup of %s in range %d: '%s' from rank %u, expected '%s' from rank 0", key,
                range, val, (unsigned)from, want);
}

static char *hostname_of(pmix_rank_t rank)
{
    pmix_proc_t p;
    pmix_value_t *v;

    pt_proc(&p, pt.me.nspace, rank);
    v = pt_get_typed(&p, PMIX_HOSTNAME, NULL, 0, PMIX_STRING);
    if (v == NULL)
        return strdup("?");
    char *h = strdup(v->data.string);
    pt_value_free(v);
    return h;
}

static void mode_ranges(void)
{
    if (pt.me.rank == 0) {
        expect("publish in the namespace", publish("r.key", "ns", PMIX_RANGE_NAMESPACE, -1),
               PMIX_SUCCESS);
        expect("publish in the session", publish("r.key", "sess", PMIX_RANGE_SESSION, -1),
               PMIX_SUCCESS);
        expect("publish globally", publish("r.key", "glob", PMIX_RANGE_GLOBAL, -1), PMIX_SUCCESS);
        expect("publish on the node", publish("r.node", "node", PMIX_RANGE_LOCAL, -1),
               PMIX_SUCCESS);
        expect("publish for itself", publish("r.me", "me", PMIX_RANGE_PROC_LOCAL, -1),
               PMIX_SUCCESS);
        expect("publish in a custom range", publish("r.custom", "x", PMIX_RANGE_CUSTOM, -1),
               PMIX_ERR_NOT_SUPPORTED);
    }
    pt_barrier("published");
    expect_value("r.key", PMIX_RANGE_NAMESPACE, "ns");
    expect_value("r.key", PMIX_RANGE_SESSION, "sess");
    expect_value("r.key", -1, "sess"); /* the default range */
    expect_value("r.key", PMIX_RANGE_GLOBAL, "glob");
    char *mine = hostname_of(pt.me.rank), *zero = hostname_of(0);
    bool same_node = strcmp(mine, zero) == 0;
    if (same_node)
        expect_value("r.node", PMIX_RANGE_LOCAL, "node");
    else
        expect("lookup of another node's key", lookup("r.node", PMIX_RANGE_LOCAL, 0, NULL, 0, NULL),
               PMIX_ERR_NOT_FOUND);
    if (pt.me.rank == 0)
        expect_value("r.me", PMIX_RANGE_PROC_LOCAL, "me");
    else
        expect("lookup of another process's own key",
               lookup("r.me", PMIX_RANGE_PROC_LOCAL, 0, NULL, 0, NULL), PMIX_ERR_NOT_FOUND);
    free(mine);
    free(zero);
    pt_barrier("looked up");
}

/* ---- nb ---- */

/* Set on the calling thread around a call: a callback that finds it set
 * runs inside the call that promised it. */
static __thread bool in_call;

#define CALL(x)                   \
    ({                            \
        in_call = true;           \
        pmix_status_t rc__ = (x); \
        in_call = false;          \
        rc__;                     \
    })

typedef struct nb_op {
    pt_waiter w;
    bool inside; /* a callback ran inside the call */
    size_t n;
    char val[64];
} nb_op;

static void nb_op_cb(pmix_status_t status, void *cbdata)
{
    nb_op *o = cbdata;
    o->inside = o->inside || in_call;
    pt_waiter_signal(&o->w, status);
}

static void nb_lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    nb_op *o = cbdata;
    o->inside = o->inside || in_call;
    o->n = ndata;
    if (ndata > 0 && data[0].value.type == PMIX_STRING)
        snprintf(o->val, sizeof o->val, "%s", data[0].value.data.string);
    pt_waiter_signal(&o->w, status);
}

static void nb_check(nb_op *o, const char *what, pmix_status_t rc, pmix_status_t want)
{
    if (rc != PMIX_SUCCESS) {
        pt_fail("%s returned %s", what, pt_err(rc));
        return;
    }
    if (!pt_waiter_wait(&o->w, 15)) {
        pt_fail("%s: no callback", what);
        return;
    }
    if (o->inside)
        pt_fail("%s: the callback ran inside the call", what);
    if (pt_waiter_count(&o->w) != 1)
        pt_fail("%s: %d callbacks", what, pt_waiter_count(&o->w));
    expect(what, o->w.status, want);
}

static void mode_nb(void)
{
    nb_op o;
    pmix_info_t info[2];
    char *keys[] = {"nb.key", NULL}, *two[] = {"nb.key", "nb.none", NULL};

    if (pt.me.rank == 1) {
        /* waits for rank 0's publish, which comes after the barrier */
        memset(&o, 0, sizeof o);
        pt_waiter_init(&o.w);
        pt_info_bool(&info[0], PMIX_WAIT, true);
        pt_info_int(&info[1], PMIX_TIMEOUT, 20);
        pmix_status_t rc = CALL(PMIx_Lookup_nb(keys, info, 2, nb_lookup_cb, &o));
        pt_info_free(info, 2);
        pt_barrier("lookup started");
        nb_check(&o, "PMIx_Lookup_nb with PMIX_WAIT", rc, PMIX_SUCCESS);
        if (strcmp(o.val, "v0") != 0)
            pt_fail("PMIx_Lookup_nb with PMIX_WAIT: '%s', expected 'v0'", o.val);
    } else {
        pt_barrier("lookup started");
    }
    if (pt.me.rank == 0) {
        pt_sleep(0.2);
        memset(&o, 0, sizeof o);
        pt_waiter_init(&o.w);
        pt_info_str(&info[0], "nb.key", "v0");
        pmix_status_t rc = CALL(PMIx_Publish_nb(info, 1, nb_op_cb, &o));
        pt_info_free(info, 1);
        nb_check(&o, "PMIx_Publish_nb", rc, PMIX_SUCCESS);
    }
    pt_barrier("published");
    memset(&o, 0, sizeof o);
    pt_waiter_init(&o.w);
    nb_check(&o, "PMIx_Lookup_nb of a published and a missing key",
             CALL(PMIx_Lookup_nb(two, NULL, 0, nb_lookup_cb, &o)), PMIX_ERR_PARTIAL_SUCCESS);
    if (o.n != 1)
        pt_fail("PMIx_Lookup_nb of a published and a missing key: %zu entries", o.n);
    pt_barrier("looked up");
    if (pt.me.rank == 0) {
        memset(&o, 0, sizeof o);
        pt_waiter_init(&o.w);
        nb_check(&o, "PMIx_Unpublish_nb", CALL(PMIx_Unpublish_nb(keys, NULL, 0, nb_op_cb, &o)),
                 PMIX_SUCCESS);
    }
    pt_barrier("unpublished");
}

/* ---- persist ---- */

static void mode_persist(void)
{
    if (pt.size < 3) {
        pt_fail("persist needs 3 processes or more");
        return;
    }
    if (pt.me.rank == 1) {
        expect("publish read-once", publish("p.once", "x", -1, PMIX_PERSIST_FIRST_READ),
               PMIX_SUCCESS);
        expect("publish for the process's life", publish("p.proc", "x", -1, PMIX_PERSIST_PROC),
               PMIX_SUCCESS);
        expect("publish for the app's life", publish("p.app", "x", -1, -1), PMIX_SUCCESS);
    }
    pt_barrier("published");
    if (pt.me.rank == 0)
        expect("first read", lookup("p.once", -1, 0, NULL, 0, NULL), PMIX_SUCCESS);
    pt_barrier("read once");
    if (pt.me.rank == 2)
        expect("second read", lookup("p.once", -1, 0, NULL, 0, NULL), PMIX_ERR_NOT_FOUND);
    pt_barrier("read twice");
    /* rank 1 leaves; no barrier of the whole namespace after this */
    if (pt.me.rank != 0)
        return;
    double end = pt_now() + 20;
    pmix_status_t rc = PMIX_SUCCESS;
    while (pt_now() < end && (rc = lookup("p.proc", -1, 0, NULL, 0, NULL)) == PMIX_SUCCESS)
        pt_sleep(0.05);
    expect("the key of a process that ended", rc, PMIX_ERR_NOT_FOUND);
    expect("the app's key after that", lookup("p.app", -1, 0, NULL, 0, NULL), PMIX_SUCCESS);
}

/* ---- limits ---- */

static void mode_limits(void)
{
    char key[32];
    pmix_status_t rc = PMIX_SUCCESS;
    int i;

    if (pt.me.rank != 0) {
        pt_barrier("limits done");
        return;
    }
    for (i = 0; i < 256 && rc == PMIX_SUCCESS; i++) {
        snprintf(key, sizeof key, "l.%d", i);
        rc = publish(key, "x", -1, -1);
    }
    expect("256 keys", rc, PMIX_SUCCESS);
    expect("the 257th key", publish("l.more", "x", -1, -1), PMIX_ERR_OUT_OF_RESOURCE);
    char *one[] = {"l.0", NULL};
    expect("unpublish one", PMIx_Unpublish(one, NULL, 0), PMIX_SUCCESS);
    expect("a key in its place", publish("l.more", "x", -1, -1), PMIX_SUCCESS);

    /* 16 lookups may wait; the 17th is refused, through its callback */
    nb_op w[17];
    pmix_info_t wait;
    char *keys[] = {"l.wait", NULL};
    pt_info_bool(&wait, PMIX_WAIT, true);
    for (i = 0; i < 17; i++) {
        memset(&w[i], 0, sizeof w[i]);
        pt_waiter_init(&w[i].w);
        expect("a lookup that waits", CALL(PMIx_Lookup_nb(keys, &wait, 1, nb_lookup_cb, &w[i])),
               PMIX_SUCCESS);
    }
    pt_info_free(&wait, 1);
    if (!pt_waiter_wait(&w[16].w, 10))
        pt_fail("the 17th waiting lookup: no answer");
    else
        expect("the 17th waiting lookup", w[16].w.status, PMIX_ERR_OUT_OF_RESOURCE);
    for (i = 0; i < 17; i++)
        if (w[i].inside)
            pt_fail("waiting lookup %d: its callback ran inside the call", i);
    for (i = 0; i < 16; i++)
        if (pt_waiter_count(&w[i].w) != 0)
            pt_fail("waiting lookup %d answered before the publish: %s", i, pt_err(w[i].w.status));
    /* NULL keys: all of ours go, and there is room for the one they wait for */
    expect("unpublish everything", PMIx_Unpublish(NULL, NULL, 0), PMIX_SUCCESS);
    expect("the key they wait for", publish("l.wait", "x", -1, -1), PMIX_SUCCESS);
    for (i = 0; i < 16; i++) {
        if (!pt_waiter_wait(&w[i].w, 10))
            pt_fail("waiting lookup %d: no answer after the publish", i);
        else
            expect("a waiting lookup after the publish", w[i].w.status, PMIX_SUCCESS);
    }
    expect("a key unpublished with the rest", lookup("l.5", -1, 0, NULL, 0, NULL),
           PMIX_ERR_NOT_FOUND);
    pt_barrier("limits done");
}

int main(int argc, char **argv)
{
    const char *modes = "ranges nb persist limits";
    if (argc < 2)
        pt_usage(argv[0], modes);
    pt_watchdog(50);
    pt_start("pubsub_rules", argv[1], NULL, 0);
    const char *m = argv[1];
    if (strcmp(m, "ranges") == 0)
        mode_ranges();
    else if (strcmp(m, "nb") == 0)
        mode_nb();
    else if (strcmp(m, "persist") == 0)
        mode_persist();
    else if (strcmp(m, "limits") == 0)
        mode_limits();
    else
        pt_usage(argv[0], modes);
    return pt_result();
}
