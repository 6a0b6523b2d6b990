/*
 * test_inproc.c - the engines end to end, many servers and many clients in
 * one process (the pattern pmixsim uses), through the in-process platform.
 *
 * The job: 4 nodes x 8 processes, namespace "job", ranks 8*node .. 8*node+7.
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

#define NODES 4
#define PPN 8
#define NPROCS (NODES * PPN)

typedef inproc_proc proc;

typedef struct job {
    inproc_world *w;
    px_server *srv[NODES];
    proc p[NPROCS];
} job;

static void register_job(px_server *srv, int node, int nodes, int ppn)
{
    uint32_t size = (uint32_t)(nodes * ppn);
    pmix_info_t info[2];
    size_t n = 0;

    memset(info, 0, sizeof(info));
    PMIx_Info_load(&info[n++], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    assert_int_equal(px_server_register_nspace(srv, "job", ppn, info, n), PMIX_SUCCESS);
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&info[i]);
    for (int r = 0; r < ppn; r++) {
        pmix_proc_t pr;
        PMIx_Load_procid(&pr, "job", (pmix_rank_t)(node * ppn + r));
        assert_int_equal(px_server_register_client(srv, &pr, 1000, 1000, NULL), PMIX_SUCCESS);
    }
}

static job *job_start(int nodes, int ppn)
{
    job *j = calloc(1, sizeof(*j));
    int n = nodes * ppn;

    assert_non_null(j);
    j->w = inproc_world_create();
    for (int s = 0; s < nodes; s++) {
        j->srv[s] = inproc_server(j->w, s);
        assert_non_null(j->srv[s]);
        register_job(j->srv[s], s, nodes, ppn);
    }
    for (int r = 0; r < n; r++) {
        pmix_proc_t self;
        PMIx_Load_procid(&self, "job", (pmix_rank_t)r);
        j->p[r].c = inproc_client(j->w, j->srv[r / ppn], &self);
        assert_int_equal(px_client_connect(j->p[r].c, NULL, 0, inproc_op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    }
    for (int r = 0; r < n; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].status, PMIX_SUCCESS);
        j->p[r].done = 0;
    }
    return j;
}

static void job_end(job *j)
{
    for (int r = 0; r < NPROCS; r++)
        if (j->p[r].value != NULL)
            PMIx_Value_free(j->p[r].value, 1);
    inproc_world_destroy(j->w);
    free(j);
}

/* Every process enters a fence with `info`; all must end with `expect`. */
static void fence_all(job *j, int n, const pmix_info_t *info, size_t ninfo, pmix_status_t expect)
{
    for (int r = 0; r < n; r++) {
        j->p[r].done = 0;
        assert_int_equal(px_client_fence(j->p[r].c, NULL, 0, info, ninfo, inproc_op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    }
    for (int r = 0; r < n; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].done, 1);
        assert_int_equal(j->p[r].status, expect);
    }
}

static void put_cards(job *j, int n)
{
    for (int r = 0; r < n; r++) {
        pmix_value_t v;
        PMIX_VALUE_LOAD(&v, &r, PMIX_INT);
        assert_int_equal(px_client_put(j->p[r].c, PMIX_GLOBAL, "card", &v), PMIX_SUCCESS);
        assert_int_equal(px_client_commit(j->p[r].c), PMIX_SUCCESS);
    }
}

static void test_handshake_and_job_data(void **state)
{
    job *j = job_start(NODES, PPN);
    pmix_value_t *v = NULL;
    pmix_proc_t wild;

    PMIx_Load_procid(&wild, "job", PMIX_RANK_WILDCARD);
    /* answered locally: no callback, no message */
    assert_int_equal(px_client_get(j->p[5].c, &wild, PMIX_JOB_SIZE, NULL, 0, &v, NULL, NULL),
                     PMIX_OPERATION_SUCCEEDED);
    assert_int_equal(v->type, PMIX_UINT32);
    assert_int_equal(v->data.uint32, NPROCS);
    PMIx_Value_free(v, 1);
    v = NULL;
    assert_int_equal(px_client_get(j->p[5].c, &wild, "pmix.no.such.key", NULL, 0, &v, NULL, NULL),
                     PMIX_ERR_NOT_FOUND);
    job_end(j);
}

/* The job data is packed once per namespace for the handshakes; a new
 * registration of the namespace must reach the clients that connect after
 * it, never the old pack. */
static void test_reregistered_job_data(void **state)
{
    inproc_world *w = inproc_world_create();
    px_server *srv = inproc_server(w, 0);
    proc p[2];
    pmix_proc_t wild;

    memset(p, 0, sizeof(p));
    PMIx_Load_procid(&wild, "job", PMIX_RANK_WILDCARD);
    register_job(srv, 0, 1, 2); /* PMIX_JOB_SIZE 2 */
    for (int r = 0; r < 2; r++) {
        pmix_proc_t self;
        pmix_value_t *v = NULL;
        uint32_t size = 7;
        pmix_info_t info;

        if (r == 1) {
            /* the same namespace again, another job size */
            PMIx_Info_load(&info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
            assert_int_equal(px_server_register_nspace(srv, "job", 2, &info, 1), PMIX_SUCCESS);
            PMIx_Info_destruct(&info);
        }
        PMIx_Load_procid(&self, "job", (pmix_rank_t)r);
        p[r].c = inproc_client(w, srv, &self);
        assert_int_equal(px_client_connect(p[r].c, NULL, 0, inproc_op_cb, &p[r]), PMIX_SUCCESS);
        assert_true(inproc_run_until(w, &p[r].done));
        assert_int_equal(p[r].status, PMIX_SUCCESS);
        assert_int_equal(px_client_get(p[r].c, &wild, PMIX_JOB_SIZE, NULL, 0, &v, NULL, NULL),
                         PMIX_OPERATION_SUCCEEDED);
        assert_int_equal(v->data.uint32, r == 0 ? 2 : 7);
        PMIx_Value_free(v, 1);
    }
    inproc_world_destroy(w);
}

/* Data from the host that is not groups: every participant's fence fails
 * with PMIX_ERR_UNPACK_FAILURE, the server says so, nothing is kept, and
 * the next collecting fence works. */
static void test_fence_collect_bad_host_data(void **state)
{
    job *j = job_start(NODES, PPN);
    bool t = true;
    pmix_info_t info;
    pmix_proc_t peer;
    pmix_value_t *v = NULL;

    put_cards(j, NPROCS);
    PMIx_Info_load(&info, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    inproc_corrupt_collects(j->w, 1);
    fence_all(j, NPROCS, &info, 1, PMIX_ERR_UNPACK_FAILURE);
    assert_non_null(strstr(inproc_last_log(j->w), "malformed collected data"));
    PMIx_Load_procid(&peer, "job", (pmix_rank_t)(NPROCS - 1));
    pmix_info_t opt;
    PMIx_Info_load(&opt, PMIX_OPTIONAL, &t, PMIX_BOOL);
    assert_int_equal(px_client_get(j->p[0].c, &peer, "card", &opt, 1, &v, NULL, NULL),
                     PMIX_ERR_NOT_FOUND); /* nothing was kept */
    fence_all(j, NPROCS, &info, 1, PMIX_SUCCESS);
    assert_int_equal(px_client_get(j->p[0].c, &peer, "card", &opt, 1, &v, NULL, NULL),
                     PMIX_OPERATION_SUCCEEDED);
    assert_int_equal(v->data.integer, NPROCS - 1);
    PMIx_Value_free(v, 1);
    PMIx_Info_destruct(&opt);
    PMIx_Info_destruct(&info);
    job_end(j);
}

static void test_fence_collect(void **state)
{
    job *j = job_start(NODES, PPN);
    bool t = true;
    pmix_info_t info;

    put_cards(j, NPROCS);
    PMIx_Info_load(&info, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    fence_all(j, NPROCS, &info, 1, PMIX_SUCCESS);
    PMIx_Info_destruct(&info);
    /* one upcall per node for the collective */
    assert_int_equal(inproc_host_fences(j->w), NODES);
    /* every peer's card is now local */
    for (int r = 0; r < NPROCS; r++) {
        for (int q = 0; q < NPROCS; q++) {
            pmix_proc_t peer;
            pmix_value_t *v = NULL;
            PMIx_Load_procid(&peer, "job", (pmix_rank_t)q);
            assert_int_equal(px_client_get(j->p[r].c, &peer, "card", NULL, 0, &v, NULL, NULL),
                             PMIX_OPERATION_SUCCEEDED);
            assert_int_equal(v->data.integer, q);
            PMIx_Value_free(v, 1);
        }
    }
    job_end(j);
}

/* Large collected data reaches a node's clients as one shared region. */
static void test_fence_collect_region(void **state)
{
    job *j = job_start(NODES, PPN);
    bool t = true;
    pmix_info_t info;
    static char card[8192];

    for (int r = 0; r < NPROCS; r++) {
        pmix_value_t v;
        memset(card, 'a' + r % 26, sizeof(card));
        PMIx_Value_construct(&v);
        v.type = PMIX_BYTE_OBJECT;
        v.data.bo.bytes = card;
        v.data.bo.size = sizeof(card);
        assert_int_equal(px_client_put(j->p[r].c, PMIX_GLOBAL, "big", &v), PMIX_SUCCESS);
        assert_int_equal(px_client_commit(j->p[r].c), PMIX_SUCCESS);
    }
    PMIx_Info_load(&info, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    fence_all(j, NPROCS, &info, 1, PMIX_SUCCESS);
    PMIx_Info_destruct(&info);
    /* 32 x 8 KiB = 256 KiB: one region per node, not one copy per client */
    assert_int_equal(inproc_regions(j->w), NODES);
    for (int q = 0; q < NPROCS; q += 7) {
        pmix_proc_t peer;
        pmix_value_t *v = NULL;
        PMIx_Load_procid(&peer, "job", (pmix_rank_t)q);
        assert_int_equal(px_client_get(j->p[1].c, &peer, "big", NULL, 0, &v, NULL, NULL),
                         PMIX_OPERATION_SUCCEEDED);
        assert_int_equal(v->data.bo.size, sizeof(card));
        assert_int_equal(v->data.bo.bytes[100], 'a' + q % 26);
        PMIx_Value_free(v, 1);
    }
    job_end(j);
}

static void test_back_to_back_barriers(void **state)
{
    job *j = job_start(NODES, PPN);

    /* all processes post the next fence before anyone finished the last */
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < NPROCS; r++)
            assert_int_equal(px_client_fence(j->p[r].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[r]),
                             PMIX_SUCCESS);
    for (int r = 0; r < NPROCS; r++) {
        while (j->p[r].done < 3)
            assert_true(inproc_run_until(j->w, NULL) || j->p[r].done == 3);
        assert_int_equal(j->p[r].done, 3);
        assert_int_equal(j->p[r].status, PMIX_SUCCESS);
    }
    assert_int_equal(inproc_host_fences(j->w), 3 * NODES);
    for (int k = 0; k < 20; k++)
        fence_all(j, NPROCS, NULL, 0, PMIX_SUCCESS);
    assert_int_equal(inproc_host_fences(j->w), 23 * NODES);
    job_end(j);
}

static void test_sparse_direct_modex(void **state)
{
    job *j = job_start(NODES, PPN);

    put_cards(j, NPROCS);
    fence_all(j, NPROCS, NULL, 0, PMIX_SUCCESS); /* a barrier: no data moves */
    for (int q = 0; q < NPROCS; q++) {
        pmix_proc_t peer;
        pmix_value_t *v = NULL;
        proc *p = &j->p[3];
        PMIx_Load_procid(&peer, "job", (pmix_rank_t)q);
        p->done = 0;
        pmix_status_t rc = px_client_get(p->c, &peer, "card", NULL, 0, &v, inproc_value_cb, p);
        if (q == 3) {
            assert_int_equal(rc, PMIX_OPERATION_SUCCEEDED); /* its own */
            PMIx_Value_free(v, 1);
            continue;
        }
        assert_int_equal(rc, PMIX_SUCCESS);
        assert_true(inproc_run_until(j->w, &p->done));
        assert_int_equal(p->status, PMIX_SUCCESS);
        assert_int_equal(p->value->data.integer, q);
        PMIx_Value_free(p->value, 1);
        p->value = NULL;
        /* a key the peer never put: the server's fresh record says so */
        p->done = 0;
        assert_int_equal(px_client_get(p->c, &peer, "nope", NULL, 0, &v, inproc_value_cb, p),
                         PMIX_SUCCESS);
        assert_true(inproc_run_until(j->w, &p->done));
        assert_int_equal(p->status, PMIX_ERR_NOT_FOUND);
        /* with PMIX_OPTIONAL the client does not ask */
        pmix_info_t opt;
        bool t = true;
        PMIx_Info_load(&opt, PMIX_OPTIONAL, &t, PMIX_BOOL);
        assert_int_equal(px_client_get(p->c, &peer, "nope", &opt, 1, &v, inproc_value_cb, p),
                         PMIX_ERR_NOT_FOUND);
        PMIx_Info_destruct(&opt);
    }
    job_end(j);
}

static void test_local_fence_no_upcall(void **state)
{
    job *j = job_start(NODES, PPN);
    pmix_proc_t set[PPN];

    /* node 1's processes, listed in reverse order */
    for (int i = 0; i < PPN; i++)
        PMIx_Load_procid(&set[i], "job", (pmix_rank_t)(2 * PPN - 1 - i));
    for (int r = PPN; r < 2 * PPN; r++)
        assert_int_equal(px_client_fence(j->p[r].c, set, PPN, NULL, 0, inproc_op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    for (int r = PPN; r < 2 * PPN; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].status, PMIX_SUCCESS);
    }
    assert_int_equal(inproc_host_fences(j->w), 0);
    /* a fence of only the caller completes at once */
    pmix_proc_t me;
    PMIx_Load_procid(&me, "job", 9);
    assert_int_equal(px_client_fence(j->p[9].c, &me, 1, NULL, 0, inproc_op_cb, &j->p[9]),
                     PMIX_OPERATION_SUCCEEDED);
    job_end(j);
}

static void test_killed_participant(void **state)
{
    job *j = job_start(NODES, PPN);
    const int victim = 13;

    for (int r = 0; r < NPROCS; r++)
        if (r != victim)
            assert_int_equal(px_client_fence(j->p[r].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[r]),
                             PMIX_SUCCESS);
    inproc_run_until(j->w, NULL);
    inproc_kill_client(j->w, j->p[victim].c);
    for (int r = 0; r < NPROCS; r++) {
        if (r == victim)
            continue;
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].status, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
    /* the victim's server told the host through PMIX_LOCAL_COLLECTIVE_STATUS */
    assert_int_equal(inproc_local_failures(j->w), 1);
    /* a later fence with the dead process fails at once */
    j->p[0].done = 0;
    assert_int_equal(px_client_fence(j->p[0].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_PROC_TERM_WO_SYNC);
    job_end(j);
}

/* The host deregisters a process that died before its socket closed. */
static void test_deregistered_participant(void **state)
{
    job *j = job_start(1, 4);
    pmix_proc_t victim;

    for (int r = 0; r < 3; r++)
        assert_int_equal(px_client_fence(j->p[r].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    inproc_run_until(j->w, NULL);
    PMIx_Load_procid(&victim, "job", 3);
    px_server_deregister_client(j->srv[0], &victim);
    for (int r = 0; r < 3; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].status, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
    job_end(j);
}

static void test_fence_timeout(void **state)
{
    job *j = job_start(NODES, PPN);
    int secs = 2;
    pmix_info_t info;

    PMIx_Info_load(&info, PMIX_TIMEOUT, &secs, PMIX_INT);
    /* rank 31 never joins */
    for (int r = 0; r < NPROCS - 1; r++)
        assert_int_equal(px_client_fence(j->p[r].c, NULL, 0, &info, 1, inproc_op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    PMIx_Info_destruct(&info);
    for (int r = 0; r < NPROCS - 1; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].status, PMIX_ERR_TIMEOUT);
    }
    assert_true(inproc_now(j->w) >= 2.0 && inproc_now(j->w) < 2.5);
    job_end(j);
}

/* After a fence times out, the process that was late still owes it: its
 * next fence is that one (and fails), so fences never pair across epochs. */
static void test_late_joiner_after_timeout(void **state)
{
    job *j = job_start(1, 2);
    int secs = 1;
    pmix_info_t info;

    PMIx_Info_load(&info, PMIX_TIMEOUT, &secs, PMIX_INT);
    assert_int_equal(px_client_fence(j->p[0].c, NULL, 0, &info, 1, inproc_op_cb, &j->p[0]),
                     PMIX_SUCCESS);
    PMIx_Info_destruct(&info);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_TIMEOUT);
    assert_true(inproc_now(j->w) < 1.25); /* the server's verdict, not the backstop */
    /* rank 0 goes on to its second fence; rank 1 makes its first */
    j->p[0].done = 0;
    assert_int_equal(px_client_fence(j->p[0].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_int_equal(px_client_fence(j->p[1].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[1]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[1].done));
    assert_int_equal(j->p[1].status, PMIX_ERR_TIMEOUT); /* the first fence's fate */
    inproc_run_until(j->w, NULL);
    assert_int_equal(j->p[0].done, 0); /* still waiting for rank 1's second */
    j->p[1].done = 0;
    assert_int_equal(px_client_fence(j->p[1].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[1]),
                     PMIX_SUCCESS);
    for (int r = 0; r < 2; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].status, PMIX_SUCCESS);
    }
    job_end(j);
}

/* A reply the server cannot send must not leave its client waiting: the
 * client is dropped, sees the connection close, and counts as dead. */
static void test_failed_send_drops_client(void **state)
{
    job *j = job_start(1, 2);

    inproc_refuse_sends(j->w, j->p[1].c);
    for (int r = 0; r < 2; r++)
        assert_int_equal(px_client_fence(j->p[r].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    for (int r = 0; r < 2; r++)
        assert_true(inproc_run_until(j->w, &j->p[r].done));
    assert_int_equal(j->p[0].status, PMIX_SUCCESS);
    assert_int_equal(j->p[1].status, PMIX_ERR_LOST_CONNECTION);
    assert_non_null(strstr(inproc_last_log(j->w), "cannot send a message to job:1"));
    /* rank 1 is dead to the server: a fence with it fails at once */
    j->p[0].done = 0;
    assert_int_equal(px_client_fence(j->p[0].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_PROC_TERM_WO_SYNC);
    job_end(j);
}

/* A host may destroy a server that has work pending, here the timer that
 * drops a client whose reply could not be sent: px_server_destroy cancels
 * it, so running the world afterwards calls nothing of the freed server
 * (without that, the timer's callback reads the freed server: ASan
 * reports a use after free). */
static void test_destroy_cancels_timers(void **state)
{
    job *j = job_start(1, 2);

    inproc_refuse_sends(j->w, j->p[1].c);
    for (int r = 0; r < 2; r++)
        assert_int_equal(px_client_fence(j->p[r].c, NULL, 0, NULL, 0, inproc_op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    /* Rank 0's answer arrives; rank 1's could not be sent, and a timer
     * will drop rank 1. */
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_SUCCESS);
    assert_int_equal(j->p[1].done, 0);
    assert_int_equal(inproc_server_timers(j->w, j->srv[0]), 1);

    inproc_destroy_server(j->w, j->srv[0]);
    j->srv[0] = NULL;
    assert_true(inproc_run_until(j->w, NULL));
    assert_int_equal(inproc_orphan_timers_fired(j->w), 0);
    assert_int_equal(inproc_orphan_timers(j->w), 0);
    /* The clients saw their server go. */
    for (int r = 0; r < 2; r++)
        assert_int_equal(j->p[r].done, 1);
    assert_int_not_equal(j->p[1].status, PMIX_SUCCESS);
    job_end(j);
}

/* Event chains: each handler sees the results of the ones before it. */
static int chain_step;
static size_t chain_seen;

static void h_first(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    pmix_info_t mine;
    int v = 42;

    PMIx_Info_load(&mine, "test.result", &v, PMIX_INT);
    chain_step = 1;
    cbfunc(PMIX_SUCCESS, &mine, 1, NULL, NULL, cbdata); /* results are copied */
    PMIx_Info_destruct(&mine);
}

static void h_second(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    chain_seen = nresults;
    if (nresults == 1 && strcmp(results[0].key, "test.result") == 0 &&
        results[0].value.data.integer == 42)
        chain_step = 2;
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void test_event_results_accumulate(void **state)
{
    job *j = job_start(1, 1);
    pmix_status_t code = -12345;
    size_t id1, id2;
    pmix_info_t first;
    bool t = true;

    chain_step = 0;
    PMIx_Info_load(&first, PMIX_EVENT_HDLR_FIRST, &t, PMIX_BOOL);
    assert_int_equal(px_client_register_event(j->p[0].c, &code, 1, NULL, 0, h_second, &id2),
                     PMIX_SUCCESS);
    assert_int_equal(px_client_register_event(j->p[0].c, &code, 1, &first, 1, h_first, &id1),
                     PMIX_SUCCESS);
    PMIx_Info_destruct(&first);
    assert_int_equal(
        px_client_notify(j->p[0].c, code, NULL, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL),
        PMIX_OPERATION_SUCCEEDED);
    inproc_run_until(j->w, NULL);
    assert_int_equal(chain_seen, 1);
    assert_int_equal(chain_step, 2);
    job_end(j);
}

/* Each client's handler counts its calls in the int its registration
 * passed as PMIX_EVENT_RETURN_OBJECT. */
static void h_count(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    for (size_t i = 0; i < ninfo; i++)
        if (strcmp(info[i].key, PMIX_EVENT_RETURN_OBJECT) == 0)
            ++*(int *)info[i].value.data.ptr;
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Client 0 of a 2 x 2 job notifies `code` in `range` (with `info`); wait
 * until `want` processes other than 0 heard it, then check who did. */
static void notify_and_count(job *j, int *calls, pmix_status_t code, pmix_data_range_t range,
                             const pmix_info_t *info, size_t ninfo, const int expect[4])
{
    int want = 0;
    memset(calls, 0, 4 * sizeof(int));
    for (int r = 1; r < 4; r++)
        want += expect[r];
    assert_int_equal(px_client_notify(j->p[0].c, code, NULL, range, info, ninfo, NULL, NULL),
                     PMIX_OPERATION_SUCCEEDED);
    inproc_run_until(j->w, NULL);
    int got = 0;
    for (int r = 1; r < 4; r++)
        got += calls[r];
    assert_int_equal(got, want);
    for (int r = 1; r < 4; r++)
        assert_int_equal(calls[r], expect[r]);
}

/* Events leave the node through the host (notify_event) when their range is
 * wider than the node, and each server applies the range: namespace and
 * global reach everybody, custom only the processes named, local only the
 * node (and never goes to the host). */
static void test_events_cross_nodes(void **state)
{
    job *j = job_start(2, 2); /* ranks 0, 1 on node 0; 2, 3 on node 1 */
    pmix_status_t code = -12346;
    int calls[4];
    pmix_info_t obj;
    size_t id;

    for (int r = 0; r < 4; r++) {
        PMIx_Info_load(&obj, PMIX_EVENT_RETURN_OBJECT, &calls[r], PMIX_POINTER);
        assert_int_equal(px_client_register_event(j->p[r].c, &code, 1, &obj, 1, h_count, &id),
                         PMIX_SUCCESS);
        PMIx_Info_destruct(&obj);
    }
    const int all[4] = {0, 1, 1, 1}, node0[4] = {0, 1, 0, 0}, three[4] = {0, 0, 0, 1};
    notify_and_count(j, calls, code, PMIX_RANGE_NAMESPACE, NULL, 0, all);
    assert_int_equal(inproc_host_events(j->w), 1);
    notify_and_count(j, calls, code, PMIX_RANGE_GLOBAL, NULL, 0, all);
    assert_int_equal(inproc_host_events(j->w), 2);
    notify_and_count(j, calls, code, PMIX_RANGE_LOCAL, NULL, 0, node0);
    assert_int_equal(inproc_host_events(j->w), 2);

    pmix_proc_t target;
    pmix_info_t custom;
    PMIx_Load_procid(&target, "job", 3);
    PMIx_Info_load(&custom, PMIX_EVENT_CUSTOM_RANGE, &target, PMIX_PROC);
    notify_and_count(j, calls, code, PMIX_RANGE_CUSTOM, &custom, 1, three);
    PMIx_Info_destruct(&custom);
    assert_int_equal(inproc_host_events(j->w), 3);
    /* a custom range without targets names nobody */
    const int none[4] = {0, 0, 0, 0};
    notify_and_count(j, calls, code, PMIX_RANGE_CUSTOM, NULL, 0, none);
    job_end(j);
}

/* A PMIX_DEBUGGER_RELEASE that reaches a connected client before it has a
 * handler for it (a debugger daemon released a rank still on its way to
 * its wait in PMIx_Init) is kept and handed to the handler registered
 * after; another event is not. */
static void test_release_kept_for_later_handler(void **state)
{
    job *j = job_start(1, 2);
    pmix_status_t release = PMIX_DEBUGGER_RELEASE, other = -12347;
    int got_release = 0, got_other = 0;
    pmix_info_t obj, custom;
    pmix_proc_t target;
    size_t id;

    PMIx_Load_procid(&target, "job", 1);
    PMIx_Info_load(&custom, PMIX_EVENT_CUSTOM_RANGE, &target, PMIX_PROC);
    assert_int_equal(
        px_client_notify(j->p[0].c, release, NULL, PMIX_RANGE_CUSTOM, &custom, 1, NULL, NULL),
        PMIX_OPERATION_SUCCEEDED);
    assert_int_equal(
        px_client_notify(j->p[0].c, other, NULL, PMIX_RANGE_CUSTOM, &custom, 1, NULL, NULL),
        PMIX_OPERATION_SUCCEEDED);
    PMIx_Info_destruct(&custom);
    inproc_run_until(j->w, NULL); /* both reached rank 1, which had no handler */
    PMIx_Info_load(&obj, PMIX_EVENT_RETURN_OBJECT, &got_release, PMIX_POINTER);
    assert_int_equal(px_client_register_event(j->p[1].c, &release, 1, &obj, 1, h_count, &id),
                     PMIX_SUCCESS);
    PMIx_Info_destruct(&obj);
    PMIx_Info_load(&obj, PMIX_EVENT_RETURN_OBJECT, &got_other, PMIX_POINTER);
    assert_int_equal(px_client_register_event(j->p[1].c, &other, 1, &obj, 1, h_count, &id),
                     PMIX_SUCCESS);
    PMIx_Info_destruct(&obj);
    inproc_run_until(j->w, NULL);
    assert_int_equal(got_release, 1);
    assert_int_equal(got_other, 0);
    job_end(j);
}

static void test_garbage_drops_only_sender(void **state)
{
    job *j = job_start(1, 4);
    pmix_proc_t set[2];
    static const unsigned char junk[] = "this is not a frame at all, not even close";

    inproc_send_raw(j->w, j->p[3].c, junk, sizeof(junk));
    inproc_run_until(j->w, NULL);
    assert_non_null(strstr(inproc_last_log(j->w), "dropping"));
    PMIx_Load_procid(&set[0], "job", 0);
    PMIx_Load_procid(&set[1], "job", 1);
    for (int r = 0; r < 2; r++)
        assert_int_equal(px_client_fence(j->p[r].c, set, 2, NULL, 0, inproc_op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    for (int r = 0; r < 2; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].status, PMIX_SUCCESS);
    }
    job_end(j);
}

static void test_foreign_credentials_refused(void **state)
{
    job *j = job_start(1, 2);
    pmix_proc_t r0;
    proc other = {0}, wrong_gid = {0};

    PMIx_Load_procid(&r0, "job", 0);
    /* a uid no registered client runs as: refused when it connects */
    other.c = inproc_client_as(j->w, j->srv[0], &r0, 2000, 1000);
    assert_int_not_equal(px_client_connect(other.c, NULL, 0, inproc_op_cb, &other), PMIX_SUCCESS);
    assert_non_null(strstr(inproc_last_log(j->w), "uid 2000"));
    /* the right uid claiming a process registered with another gid */
    wrong_gid.c = inproc_client_as(j->w, j->srv[0], &r0, 1000, 3000);
    assert_int_equal(px_client_connect(wrong_gid.c, NULL, 0, inproc_op_cb, &wrong_gid),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &wrong_gid.done));
    assert_int_not_equal(wrong_gid.status, PMIX_SUCCESS);
    assert_non_null(strstr(inproc_last_log(j->w), "gid 3000"));
    /* the registered clients are unaffected */
    fence_all(j, 2, NULL, 0, PMIX_SUCCESS);
    job_end(j);
}

/* The host hears who the peer is (client_connected2: pid, uid, gid); the
 * platform hears of a completed handshake (conn_accepted) and of no
 * refused one. A process the host refuses leaves the rank free: the real
 * one connects afterwards. */
static void test_handshake_peer_identity(void **state)
{
    job *j = job_start(1, 2);
    pmix_proc_t r2;
    proc impostor = {0}, real = {0};
    uint32_t pid, uid, gid;
    char want[64];

    inproc_last_hello(j->w, &pid, &uid, &gid);
    assert_int_equal(pid, inproc_client_pid(j->w, j->p[1].c));
    assert_int_equal(uid, 1000);
    assert_int_equal(gid, 1000);
    assert_true(inproc_client_accepted(j->w, j->p[0].c));
    assert_true(inproc_client_accepted(j->w, j->p[1].c));

    PMIx_Load_procid(&r2, "job", 2);
    assert_int_equal(px_server_register_client(j->srv[0], &r2, 1000, 1000, NULL), PMIX_SUCCESS);
    impostor.c = inproc_client(j->w, j->srv[0], &r2);
    inproc_refuse_pid(j->w, inproc_client_pid(j->w, impostor.c));
    assert_int_equal(px_client_connect(impostor.c, NULL, 0, inproc_op_cb, &impostor), PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &impostor.done));
    assert_int_not_equal(impostor.status, PMIX_SUCCESS);
    assert_false(inproc_client_accepted(j->w, impostor.c));
    snprintf(want, sizeof want, "(pid %u)", inproc_client_pid(j->w, impostor.c));
    assert_non_null(strstr(inproc_last_log(j->w), want));

    real.c = inproc_client(j->w, j->srv[0], &r2);
    assert_int_equal(px_client_connect(real.c, NULL, 0, inproc_op_cb, &real), PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &real.done));
    assert_int_equal(real.status, PMIX_SUCCESS);
    assert_true(inproc_client_accepted(j->w, real.c));
    inproc_last_hello(j->w, &pid, &uid, &gid);
    assert_int_equal(pid, inproc_client_pid(j->w, real.c));
    job_end(j);
}

static void test_fence_of_unknown_rank_refused(void **state)
{
    job *j = job_start(1, 2);
    pmix_proc_t set[2];

    PMIx_Load_procid(&set[0], "job", 0);
    PMIx_Load_procid(&set[1], "job", 5); /* the job has ranks 0 and 1 */
    assert_int_equal(px_client_fence(j->p[0].c, set, 2, NULL, 0, inproc_op_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_BAD_PARAM);
    job_end(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handshake_and_job_data),
        cmocka_unit_test(test_reregistered_job_data),
        cmocka_unit_test(test_fence_collect_bad_host_data),
        cmocka_unit_test(test_fence_collect),
        cmocka_unit_test(test_fence_collect_region),
        cmocka_unit_test(test_back_to_back_barriers),
        cmocka_unit_test(test_sparse_direct_modex),
        cmocka_unit_test(test_local_fence_no_upcall),
        cmocka_unit_test(test_killed_participant),
        cmocka_unit_test(test_deregistered_participant),
        cmocka_unit_test(test_fence_timeout),
        cmocka_unit_test(test_late_joiner_after_timeout),
        cmocka_unit_test(test_failed_send_drops_client),
        cmocka_unit_test(test_destroy_cancels_timers),
        cmocka_unit_test(test_event_results_accumulate),
        cmocka_unit_test(test_events_cross_nodes),
        cmocka_unit_test(test_release_kept_for_later_handler),
        cmocka_unit_test(test_garbage_drops_only_sender),
        cmocka_unit_test(test_foreign_credentials_refused),
        cmocka_unit_test(test_handshake_peer_identity),
        cmocka_unit_test(test_fence_of_unknown_rank_refused),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
