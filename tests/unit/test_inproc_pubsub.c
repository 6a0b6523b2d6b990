/*
 * test_inproc_pubsub.c - publish, lookup and unpublish through the whole
 * library path: the client engine's requests, the wire, the server
 * engine's upcalls (px_server_host version 2) and the in-process host's
 * data service (hostcore/px_pubsub.h), on the in-process platform with its
 * virtual clock.
 *
 * The job: 2 nodes x 2 processes, namespace "job"; a second job "other"
 * of 1 process on node 1 (same session).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "inproc.h"

#define NODES 2
#define PPN 2
#define NPROCS (NODES * PPN)

typedef struct world {
    inproc_world *w;
    px_server *srv[NODES];
    inproc_proc p[NPROCS + 1]; /* the last: "other" rank 0 */
} world;

/* What a lookup brought. */
typedef struct looked {
    int done;
    pmix_status_t status;
    size_t n;
    pmix_proc_t proc;
    char key[PMIX_MAX_KEYLEN + 1];
    char val[64];
} looked;

static void lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    looked *l = cbdata;

    l->done++;
    l->status = status;
    l->n = ndata;
    if (ndata > 0) {
        l->proc = data[0].proc;
        snprintf(l->key, sizeof(l->key), "%s", data[0].key);
        if (data[0].value.type == PMIX_STRING)
            snprintf(l->val, sizeof(l->val), "%s", data[0].value.data.string);
    }
}

static void register_ns(px_server *srv, const char *ns, int nlocal, int first, uint32_t size)
{
    pmix_info_t info;

    PMIx_Info_load(&info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
    assert_int_equal(px_server_register_nspace(srv, ns, nlocal, &info, 1), PMIX_SUCCESS);
    PMIx_Info_destruct(&info);
    for (int r = first; r < first + nlocal; r++) {
        pmix_proc_t pr;
        PMIx_Load_procid(&pr, ns, (pmix_rank_t)r);
        assert_int_equal(px_server_register_client(srv, &pr, 1000, 1000, NULL), PMIX_SUCCESS);
    }
}

static void connect_proc(world *wd, inproc_proc *p, px_server *srv, const char *ns, int rank)
{
    pmix_proc_t self;

    PMIx_Load_procid(&self, ns, (pmix_rank_t)rank);
    p->c = inproc_client(wd->w, srv, &self);
    assert_int_equal(px_client_connect(p->c, NULL, 0, inproc_op_cb, p), PMIX_SUCCESS);
    assert_true(inproc_run_until(wd->w, &p->done));
    assert_int_equal(p->status, PMIX_SUCCESS);
    p->done = 0;
}

static int setup(void **state)
{
    world *wd = calloc(1, sizeof(*wd));

    assert_non_null(wd);
    wd->w = inproc_world_create();
    for (int s = 0; s < NODES; s++) {
        wd->srv[s] = inproc_server(wd->w, s);
        register_ns(wd->srv[s], "job", PPN, s * PPN, NPROCS);
    }
    register_ns(wd->srv[1], "other", 1, 0, 1);
    for (int r = 0; r < NPROCS; r++)
        connect_proc(wd, &wd->p[r], wd->srv[r / PPN], "job", r);
    connect_proc(wd, &wd->p[NPROCS], wd->srv[1], "other", 0);
    *state = wd;
    return 0;
}

static int teardown(void **state)
{
    world *wd = *state;

    inproc_world_destroy(wd->w);
    free(wd);
    return 0;
}

/* Publish key=val from p with an optional range; wait for the answer. */
static pmix_status_t publish(world *wd, inproc_proc *p, const char *key, const char *val, int range)
{
    pmix_info_t info[2];
    size_t n = 0;
    pmix_data_range_t r = (pmix_data_range_t)range;
    pmix_status_t rc;

    PMIx_Info_load(&info[n++], key, val, PMIX_STRING);
    if (range >= 0)
        PMIx_Info_load(&info[n++], PMIX_RANGE, &r, PMIX_DATA_RANGE);
    p->done = 0;
    rc = px_client_publish(p->c, info, n, inproc_op_cb, p);
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&info[i]);
    if (rc != PMIX_SUCCESS)
        return rc;
    assert_true(inproc_run_until(wd->w, &p->done));
    return p->status;
}

/* Start a lookup of `key` (wait: PMIX_WAIT; timeout: PMIX_TIMEOUT if > 0). */
static void lookup(inproc_proc *p, const char *key, int range, bool wait, uint32_t timeout,
                   looked *l)
{
    char *keys[] = {(char *)key, NULL};
    pmix_info_t info[3];
    size_t n = 0;
    pmix_data_range_t r = (pmix_data_range_t)range;

    memset(l, 0, sizeof(*l));
    if (range >= 0)
        PMIx_Info_load(&info[n++], PMIX_RANGE, &r, PMIX_DATA_RANGE);
    if (wait)
        PMIx_Info_load(&info[n++], PMIX_WAIT, &wait, PMIX_BOOL);
    if (timeout > 0)
        PMIx_Info_load(&info[n++], PMIX_TIMEOUT, &timeout, PMIX_UINT32);
    assert_int_equal(px_client_lookup(p->c, keys, info, n, lookup_cb, l), PMIX_SUCCESS);
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&info[i]);
}

static pmix_status_t unpublish(world *wd, inproc_proc *p, const char *key)
{
    char *keys[] = {(char *)key, NULL};

    p->done = 0;
    assert_int_equal(px_client_unpublish(p->c, key != NULL ? keys : NULL, NULL, 0, inproc_op_cb, p),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(wd->w, &p->done));
    return p->status;
}

static void test_publish_lookup_across_nodes(void **state)
{
    world *wd = *state;
    looked l;

    assert_int_equal(publish(wd, &wd->p[0], "svc", "port-0", -1), PMIX_SUCCESS);
    assert_int_equal(inproc_published(wd->w), 1);
    /* rank 3 is on the other node: the host's one service answers */
    lookup(&wd->p[3], "svc", -1, false, 0, &l);
    assert_true(inproc_run_until(wd->w, &l.done));
    assert_int_equal(l.status, PMIX_SUCCESS);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.key, "svc");
    assert_string_equal(l.val, "port-0");
    assert_string_equal(l.proc.nspace, "job");
    assert_int_equal(l.proc.rank, 0);
    /* the same session: the other job sees it too */
    lookup(&wd->p[NPROCS], "svc", -1, false, 0, &l);
    assert_true(inproc_run_until(wd->w, &l.done));
    assert_int_equal(l.status, PMIX_SUCCESS);
    /* but not what rank 0 published to its namespace only */
    assert_int_equal(publish(wd, &wd->p[0], "nsonly", "x", PMIX_RANGE_NAMESPACE), PMIX_SUCCESS);
    lookup(&wd->p[NPROCS], "nsonly", PMIX_RANGE_NAMESPACE, false, 0, &l);
    assert_true(inproc_run_until(wd->w, &l.done));
    assert_int_equal(l.status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(l.n, 0);
    lookup(&wd->p[1], "nsonly", PMIX_RANGE_NAMESPACE, false, 0, &l);
    assert_true(inproc_run_until(wd->w, &l.done));
    assert_int_equal(l.status, PMIX_SUCCESS);
    /* the host hears who published, as the handshake vouched for it,
     * whatever the client claims */
    pmix_info_t claim[2];
    uint32_t root = 0, uid = 0, gid = 0;
    int nids = 0;
    PMIx_Info_load(&claim[0], "claimed", "x", PMIX_STRING);
    PMIx_Info_load(&claim[1], PMIX_USERID, &root, PMIX_UINT32);
    wd->p[1].done = 0;
    assert_int_equal(px_client_publish(wd->p[1].c, claim, 2, inproc_op_cb, &wd->p[1]),
                     PMIX_SUCCESS);
    PMIx_Info_destruct(&claim[0]);
    PMIx_Info_destruct(&claim[1]);
    assert_true(inproc_run_until(wd->w, &wd->p[1].done));
    assert_int_equal(wd->p[1].status, PMIX_SUCCESS);
    inproc_last_publish_ids(wd->w, &uid, &gid, &nids);
    assert_int_equal(nids, 2);
    assert_int_equal(uid, 1000);
    assert_int_equal(gid, 1000);
    /* a duplicate, from anyone */
    assert_int_equal(publish(wd, &wd->p[2], "svc", "mine", -1), PMIX_ERR_DUPLICATE_KEY);
    /* bad requests are refused by the client engine itself */
    char *none[] = {NULL};
    assert_int_equal(px_client_lookup(wd->p[1].c, none, NULL, 0, lookup_cb, &l),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_client_publish(wd->p[1].c, NULL, 0, inproc_op_cb, &wd->p[1]),
                     PMIX_ERR_BAD_PARAM);
}

static void test_wait_and_timeout(void **state)
{
    world *wd = *state;
    looked waiting, timed;
    double t0 = inproc_now(wd->w);

    lookup(&wd->p[1], "late", -1, true, 0, &waiting);
    lookup(&wd->p[2], "never", -1, true, 3, &timed);
    /* one queue: both lookups reach the host before this publish */
    assert_int_equal(publish(wd, &wd->p[3], "other", "x", -1), PMIX_SUCCESS);
    assert_int_equal(waiting.done + timed.done, 0);
    assert_int_equal(inproc_lookups_waiting(wd->w), 2);
    assert_int_equal(publish(wd, &wd->p[3], "late", "now", -1), PMIX_SUCCESS);
    assert_true(inproc_run_until(wd->w, &waiting.done));
    assert_true(inproc_now(wd->w) - t0 < 3.0);
    assert_int_equal(timed.done, 0);
    assert_int_equal(waiting.status, PMIX_SUCCESS);
    assert_string_equal(waiting.val, "now");
    assert_int_equal(waiting.proc.rank, 3);
    /* the other ends at its deadline, in virtual time */
    assert_true(inproc_run_until(wd->w, &timed.done));
    assert_int_equal(timed.status, PMIX_ERR_TIMEOUT);
    assert_true(inproc_now(wd->w) - t0 >= 3.0);
    assert_true(inproc_now(wd->w) - t0 < 4.0);
    assert_int_equal(timed.done, 1);
    assert_true(inproc_run_until(wd->w, NULL));
    assert_int_equal(timed.done, 1); /* the client's timer and the host's: one answer */
}

static void test_unpublish_owner_only(void **state)
{
    world *wd = *state;
    looked l;

    assert_int_equal(publish(wd, &wd->p[0], "svc", "v", -1), PMIX_SUCCESS);
    assert_int_equal(unpublish(wd, &wd->p[1], "svc"), PMIX_ERR_NO_PERMISSIONS);
    assert_int_equal(inproc_published(wd->w), 1);
    assert_int_equal(unpublish(wd, &wd->p[0], "svc"), PMIX_SUCCESS);
    assert_int_equal(inproc_published(wd->w), 0);
    lookup(&wd->p[1], "svc", -1, false, 0, &l);
    assert_true(inproc_run_until(wd->w, &l.done));
    assert_int_equal(l.status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(unpublish(wd, &wd->p[0], "svc"), PMIX_ERR_NOT_FOUND);
    /* every key of the caller's */
    assert_int_equal(publish(wd, &wd->p[2], "a", "1", -1), PMIX_SUCCESS);
    assert_int_equal(publish(wd, &wd->p[2], "b", "2", PMIX_RANGE_GLOBAL), PMIX_SUCCESS);
    assert_int_equal(unpublish(wd, &wd->p[2], NULL), PMIX_SUCCESS);
    assert_int_equal(inproc_published(wd->w), 0);
}

/* A process that dies: its PMIX_PERSIST_PROC data goes, its wait ends. */
static void test_death_ends_proc_data(void **state)
{
    world *wd = *state;
    pmix_info_t info[2];
    pmix_persistence_t pp = PMIX_PERSIST_PROC;
    looked l;

    PMIx_Info_load(&info[0], "mine", "v", PMIX_STRING);
    PMIx_Info_load(&info[1], PMIX_PERSISTENCE, &pp, PMIX_PERSIST);
    wd->p[3].done = 0;
    assert_int_equal(px_client_publish(wd->p[3].c, info, 2, inproc_op_cb, &wd->p[3]), PMIX_SUCCESS);
    PMIx_Info_destruct(&info[0]);
    PMIx_Info_destruct(&info[1]);
    assert_true(inproc_run_until(wd->w, &wd->p[3].done));
    assert_int_equal(wd->p[3].status, PMIX_SUCCESS);
    assert_int_equal(publish(wd, &wd->p[3], "kept", "v", -1), PMIX_SUCCESS); /* app */
    lookup(&wd->p[3], "never", -1, true, 0, &l);
    assert_int_equal(publish(wd, &wd->p[0], "sync", "v", -1), PMIX_SUCCESS);
    assert_int_equal(inproc_lookups_waiting(wd->w), 1);
    assert_int_equal(inproc_published(wd->w), 3);
    inproc_kill_client(wd->w, wd->p[3].c);
    assert_true(inproc_run_until(wd->w, NULL));
    /* the dead process hears nothing; the host holds nothing for it */
    assert_int_equal(l.done, 0);
    assert_int_equal(inproc_lookups_waiting(wd->w), 0);
    assert_int_equal(inproc_published(wd->w), 2); /* "kept" and "sync" */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_publish_lookup_across_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_wait_and_timeout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpublish_owner_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_death_ends_proc_data, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
