/*
 * test_inproc_page.c - the fence page (px_page.h) through the engines, on
 * the in-process platform: a barrier of a node's processes without any
 * message, and every way the page hands a fence back to the server.
 *
 * One node, one namespace "job" of N processes, all local. Blocking
 * barriers are driven by hand here (px_client_lbar_arrive, then
 * px_client_lbar_check), as the api/ shim does between its sleeps.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "client/client_int.h"
#include "common/px_common.h"
#include "inproc.h"
#include "px_page.h"
#include "px_proto.h"
#include "wire/px_wire.h"

#define N 4

typedef inproc_proc proc;

typedef struct node {
    inproc_world *w;
    px_server *srv;
    proc p[N];
} node;

/* Ranks [from, to) each wait for their fence's callback, which must bring
 * `expect`; their `done` is reset for the next one. */
static void wait_all(node *nd, int from, int to, pmix_status_t expect)
{
    for (int r = from; r < to; r++) {
        assert_true(inproc_run_until(nd->w, &nd->p[r].done));
        assert_int_equal(nd->p[r].status, expect);
        nd->p[r].done = 0;
    }
}

/* Ranks [from, to) start a plain fence of the namespace through
 * px_client_fence (the non-blocking path). */
static void fence_all(node *nd, int from, int to)
{
    for (int r = from; r < to; r++)
        assert_int_equal(px_client_fence(nd->p[r].c, NULL, 0, NULL, 0, inproc_op_cb, &nd->p[r]),
                         PMIX_SUCCESS);
}

/* A node whose job has `job_size` processes, N of them here; `refuse`: the
 * rank that cannot map the page (-1: none). */
/* A node whose N clients of namespace "job" (PMIX_JOB_SIZE job_size)
 * connect, the one of rank `refuse` refusing the fence page. With
 * `after_rank0`, each client connects after the one before is in, and the
 * hook runs once rank 0 is (to change what the later ones find). */
static node *node_start_ex(uint32_t job_size, int refuse, void (*after_rank0)(node *nd))
{
    node *nd = calloc(1, sizeof(*nd));
    pmix_info_t info;

    assert_non_null(nd);
    nd->w = inproc_world_create();
    inproc_enable_pages(nd->w);
    nd->srv = inproc_server(nd->w, 0);
    PMIx_Info_load(&info, PMIX_JOB_SIZE, &job_size, PMIX_UINT32);
    assert_int_equal(px_server_register_nspace(nd->srv, "job", N, &info, 1), PMIX_SUCCESS);
    PMIx_Info_destruct(&info);
    for (int r = 0; r < N; r++) {
        pmix_proc_t self;
        PMIx_Load_procid(&self, "job", (pmix_rank_t)r);
        assert_int_equal(px_server_register_client(nd->srv, &self, 1000, 1000, NULL), PMIX_SUCCESS);
        nd->p[r].c = inproc_client(nd->w, nd->srv, &self);
        if (r == refuse)
            inproc_refuse_page(nd->w, nd->p[r].c);
        assert_int_equal(px_client_connect(nd->p[r].c, NULL, 0, inproc_op_cb, &nd->p[r]),
                         PMIX_SUCCESS);
        if (after_rank0 != NULL)
            wait_all(nd, r, r + 1, PMIX_SUCCESS);
        if (after_rank0 != NULL && r == 0)
            after_rank0(nd);
    }
    if (after_rank0 == NULL)
        wait_all(nd, 0, N, PMIX_SUCCESS);
    inproc_run_until(nd->w, NULL); /* a NOPAGE, if any, reaches the server */
    return nd;
}

static node *node_start(uint32_t job_size, int refuse)
{
    return node_start_ex(job_size, refuse, NULL);
}

static void node_end(node *nd)
{
    for (int r = 0; r < N; r++)
        if (nd->p[r].value != NULL)
            PMIx_Value_free(nd->p[r].value, 1);
    inproc_world_destroy(nd->w);
    free(nd);
}

/* Rank r arrives for a plain barrier. */
static int arrive(node *nd, int r, px_lbar *lb)
{
    return px_client_lbar_arrive(nd->p[r].c, NULL, 0, NULL, 0, lb);
}

/* A barrier of everybody through the page alone: no frame reaches the
 * server, the last arrival wakes the others, and it works again and again. */
static void page_barriers_need_no_message(void **state)
{
    node *nd = node_start(N, -1);
    size_t frames = inproc_frames_to_servers(nd->w);

    for (int gen = 0; gen < 3; gen++) {
        px_lbar lb[N];
        size_t wakes = inproc_page_wakes(nd->w);
        for (int r = 0; r < N - 1; r++) {
            assert_int_equal(arrive(nd, r, &lb[r]), PX_LBAR_WAIT);
            assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_WAIT);
        }
        assert_int_equal(arrive(nd, N - 1, &lb[N - 1]), PX_LBAR_DONE);
        assert_int_equal(inproc_page_wakes(nd->w), wakes + 1);
        for (int r = 0; r < N - 1; r++)
            assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_DONE);
    }
    inproc_run_until(nd->w, NULL);
    assert_int_equal(inproc_frames_to_servers(nd->w), frames);
    node_end(nd);
}

/* One fence, four forms: two plain sleepers, then a collecting
 * non-blocking fence turns the generation into a server one; the sleepers
 * and a later plain arrival all go to the server, and everyone completes
 * together. The next plain barrier is the page's again. */
static void page_mixed_forms_meet_at_the_server(void **state)
{
    node *nd = node_start(N, -1);
    px_lbar lb[N];
    pmix_info_t collect;
    bool yes = true;

    PMIx_Info_load(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    assert_int_equal(arrive(nd, 0, &lb[0]), PX_LBAR_WAIT);
    assert_int_equal(arrive(nd, 1, &lb[1]), PX_LBAR_WAIT);
    size_t wakes = inproc_page_wakes(nd->w);
    assert_int_equal(px_client_fence(nd->p[2].c, NULL, 0, &collect, 1, inproc_op_cb, &nd->p[2]),
                     PMIX_SUCCESS);
    assert_int_equal(inproc_page_wakes(nd->w), wakes + 1); /* the sleepers must hear it */
    for (int r = 0; r < 2; r++) {
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_SERVER);
        assert_int_equal(
            px_client_fence_arrived(nd->p[r].c, NULL, 0, NULL, 0, inproc_op_cb, &nd->p[r]),
            PMIX_SUCCESS);
    }
    assert_int_equal(arrive(nd, 3, &lb[3]), PX_LBAR_SERVER);
    inproc_run_until(nd->w, NULL);
    for (int r = 0; r < 3; r++)
        assert_int_equal(nd->p[r].done, 0); /* the server waits for rank 3 */
    assert_int_equal(px_client_fence_arrived(nd->p[3].c, NULL, 0, NULL, 0, inproc_op_cb, &nd->p[3]),
                     PMIX_SUCCESS);
    wait_all(nd, 0, N, PMIX_SUCCESS);
    PMIx_Info_destruct(&collect);

    size_t frames = inproc_frames_to_servers(nd->w);
    for (int r = 0; r < N - 1; r++)
        assert_int_equal(arrive(nd, r, &lb[r]), PX_LBAR_WAIT);
    assert_int_equal(arrive(nd, N - 1, &lb[N - 1]), PX_LBAR_DONE);
    for (int r = 0; r < N - 1; r++)
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_DONE);
    assert_int_equal(inproc_frames_to_servers(nd->w), frames);
    node_end(nd);
}

/* A participant dies while the others sleep on the page: the server breaks
 * the page, the sleepers go to it and get PMIX_ERR_PROC_TERM_WO_SYNC; later
 * barriers go straight to the server and fail the same way. */
static void page_death_fails_the_sleepers(void **state)
{
    node *nd = node_start(N, -1);
    px_lbar lb[N];

    for (int r = 0; r < N - 1; r++)
        assert_int_equal(arrive(nd, r, &lb[r]), PX_LBAR_WAIT);
    size_t wakes = inproc_page_wakes(nd->w);
    inproc_kill_client(nd->w, nd->p[N - 1].c);
    inproc_run_until(nd->w, NULL);
    assert_true(inproc_page_wakes(nd->w) > wakes);
    for (int r = 0; r < N - 1; r++) {
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_SERVER);
        assert_int_equal(
            px_client_fence_arrived(nd->p[r].c, NULL, 0, NULL, 0, inproc_op_cb, &nd->p[r]),
            PMIX_SUCCESS);
    }
    wait_all(nd, 0, N - 1, PMIX_ERR_PROC_TERM_WO_SYNC);
    assert_int_equal(arrive(nd, 0, &lb[0]), PX_LBAR_NONE);
    assert_int_equal(px_client_fence(nd->p[0].c, NULL, 0, NULL, 0, inproc_op_cb, &nd->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(nd->w, &nd->p[0].done));
    assert_int_equal(nd->p[0].status, PMIX_ERR_PROC_TERM_WO_SYNC);
    node_end(nd);
}

/* A client whose connection is lost, while its server says nothing, turns
 * the page off for everyone: the sleepers of the other processes wake and
 * go to the server (a sleeper without a deadline, page_bound, has no other
 * way to hear of it). */
static void page_lost_connection_breaks_it(void **state)
{
    node *nd = node_start(N, -1);
    px_lbar lb[N];

    for (int r = 1; r < N - 1; r++)
        assert_int_equal(arrive(nd, r, &lb[r]), PX_LBAR_WAIT);
    size_t wakes = inproc_page_wakes(nd->w);
    inproc_cut_client(nd->w, nd->p[0].c);
    inproc_run_until(nd->w, NULL);
    assert_int_equal(inproc_page_wakes(nd->w), wakes + 1);
    for (int r = 1; r < N - 1; r++)
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_SERVER);
    assert_int_equal(arrive(nd, 0, &lb[0]), PX_LBAR_NONE);         /* off, and not connected */
    assert_int_equal(arrive(nd, N - 1, &lb[N - 1]), PX_LBAR_NONE); /* off */
    node_end(nd);
}

static void put_u32(px_client *c, uint32_t x)
{
    pmix_value_t v;

    PMIx_Value_load(&v, &x, PMIX_UINT32);
    assert_int_equal(px_client_put(c, PMIX_GLOBAL, "round", &v), PMIX_SUCCESS);
}

/* Every rank puts `base` + its rank as "round" and commits. */
static void commit_all(node *nd, uint32_t base)
{
    for (int r = 0; r < N; r++) {
        put_u32(nd->p[r].c, base + (uint32_t)r);
        assert_int_equal(px_client_commit(nd->p[r].c), PMIX_SUCCESS);
    }
}

/* Every rank puts `len` bytes of 'x' as "round" and commits. */
static void commit_all_big(node *nd, size_t len)
{
    char *big = malloc(len);
    pmix_value_t v;

    assert_non_null(big);
    memset(big, 'x', len);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = big;
    v.data.bo.size = len;
    for (int r = 0; r < N; r++) {
        assert_int_equal(px_client_put(nd->p[r].c, PMIX_GLOBAL, "round", &v), PMIX_SUCCESS);
        assert_int_equal(px_client_commit(nd->p[r].c), PMIX_SUCCESS);
    }
    free(big);
}

/* Nothing orders a commit before a peer's Get once the barrier between
 * them is the page's: the server holds a Get until it has read as many
 * commits as the page says were sent. Here a commit is "still on its way"
 * (the count is raised before the frame is sent). */
static void page_get_waits_for_commits_in_flight(void **state)
{
    node *nd = node_start(N, -1);
    pmix_proc_t one;
    pmix_value_t *v = NULL;
    pmix_info_t refresh;
    bool yes = true;

    put_u32(nd->p[1].c, 1);
    assert_int_equal(px_client_commit(nd->p[1].c), PMIX_SUCCESS);
    inproc_run_until(nd->w, NULL);

    /* the page says rank 1 sent a second commit the server has not read */
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[1].c);
    assert_non_null(pg);
    atomic_store(&pg->commits[1], 2);

    PMIx_Load_procid(&one, "job", 1);
    PMIx_Info_load(&refresh, PMIX_GET_REFRESH_CACHE, &yes, PMIX_BOOL);
    assert_int_equal(
        px_client_get(nd->p[0].c, &one, "round", &refresh, 1, &v, inproc_value_cb, &nd->p[0]),
        PMIX_SUCCESS);
    inproc_run_until(nd->w, NULL);
    assert_int_equal(nd->p[0].done, 0); /* held: a commit is missing */

    put_u32(nd->p[1].c, 2);
    assert_int_equal(px_client_commit(nd->p[1].c), PMIX_SUCCESS); /* its second: count 2 */
    assert_true(inproc_run_until(nd->w, &nd->p[0].done));
    assert_int_equal(nd->p[0].status, PMIX_SUCCESS);
    assert_int_equal(nd->p[0].value->type, PMIX_UINT32);
    assert_int_equal(nd->p[0].value->data.uint32, 2);
    PMIx_Info_destruct(&refresh);
    node_end(nd);
}

/* A process that cannot map the page tells the server, which turns the
 * page off for everyone: no arrival on it, and the barriers still work. */
static void page_refused_by_one_is_off_for_all(void **state)
{
    node *nd = node_start(N, 2);
    px_lbar lb;

    assert_int_equal(arrive(nd, 0, &lb), PX_LBAR_NONE);
    fence_all(nd, 0, N);
    wait_all(nd, 0, N, PMIX_SUCCESS);
    node_end(nd);
}

/* A count in the page other than the job's size, as a participant that
 * wrote it before a later process took the page would leave it: that
 * process refuses the page (it would count arrivals differently), so the
 * page is off for all, and fences go through the server and work. */
static void count_one_more(node *nd)
{
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);

    assert_non_null(pg);
    pg->nprocs = N + 1;
}

static void page_with_another_count_refused(void **state)
{
    node *nd = node_start_ex(N, -1, count_one_more);
    px_lbar lb;

    assert_int_equal(arrive(nd, 0, &lb), PX_LBAR_NONE); /* off, for rank 0 too */
    fence_all(nd, 0, N);
    wait_all(nd, 0, N, PMIX_SUCCESS);
    node_end(nd);
}

/* Two fences of the namespace at once from one process (non-blocking, not
 * waited for) cannot both count in one generation: the page goes off and
 * both fences are the server's, matched in order. */
static void page_two_open_fences_turn_it_off(void **state)
{
    node *nd = node_start(N, -1);
    px_lbar lb;

    for (int round = 0; round < 2; round++)
        fence_all(nd, 0, N);
    inproc_run_until(nd->w, NULL);
    for (int r = 0; r < N; r++) {
        assert_int_equal(nd->p[r].done, 2);
        assert_int_equal(nd->p[r].status, PMIX_SUCCESS);
    }
    assert_int_equal(arrive(nd, 0, &lb), PX_LBAR_NONE);
    node_end(nd);
}

/* A fence on the page that times out at the server leaves its generation
 * short: the page goes off, and the late process's fence is that same
 * fence (it fails at once), as without a page. */
static void page_timeout_turns_it_off(void **state)
{
    node *nd = node_start(N, -1);
    pmix_info_t to;
    int secs = 2;
    px_lbar lb;

    PMIx_Info_load(&to, PMIX_TIMEOUT, &secs, PMIX_INT);
    for (int r = 0; r < N - 1; r++)
        assert_int_equal(px_client_fence(nd->p[r].c, NULL, 0, &to, 1, inproc_op_cb, &nd->p[r]),
                         PMIX_SUCCESS);
    wait_all(nd, 0, N - 1, PMIX_ERR_TIMEOUT);
    PMIx_Info_destruct(&to);
    assert_int_equal(arrive(nd, N - 1, &lb), PX_LBAR_NONE);
    assert_int_equal(px_client_fence(nd->p[N - 1].c, NULL, 0, NULL, 0, inproc_op_cb, &nd->p[N - 1]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(nd->w, &nd->p[N - 1].done));
    assert_int_equal(nd->p[N - 1].status, PMIX_ERR_TIMEOUT);
    nd->p[N - 1].done = 0;
    fence_all(nd, 0, N);
    wait_all(nd, 0, N, PMIX_SUCCESS);
    node_end(nd);
}

static void collect_info(pmix_info_t *info)
{
    bool yes = true;

    PMIx_Info_load(info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
}

/* How a collect on the page ends: every record in its writer's slot (the
 * last arrival ends it), written by the server (DATA), or through the
 * server's fence (SERVER). */
enum {
    BY_SLOTS,
    BY_DATA,
    BY_SERVER
};

/* Every rank puts and commits `round`, then all arrive for a collecting
 * fence (rank `plain_rank` as a plain barrier, -1: none) and wait; the
 * collect must end as `how` says. */
static void page_collect_round(node *nd, uint32_t round, int plain_rank, int how)
{
    px_lbar lb[N];
    pmix_info_t collect;

    collect_info(&collect);
    commit_all(nd, round * 100);
    for (int r = 0; r < N; r++) {
        int k = r == plain_rank ? px_client_lbar_arrive(nd->p[r].c, NULL, 0, NULL, 0, &lb[r])
                                : px_client_lbar_arrive(nd->p[r].c, NULL, 0, &collect, 1, &lb[r]);
        /* the last one ends it by itself, or waits for the server too */
        assert_int_equal(k, how == BY_SLOTS && r == N - 1 ? PX_LBAR_DONE : PX_LBAR_WAIT);
    }
    assert_int_equal(lb[N - 1].status, PMIX_SUCCESS);
    inproc_run_until(nd->w, NULL); /* commits, then PCOLLECT */
    for (int r = 0; r < N; r++) {
        if (how == BY_SLOTS && r == N - 1)
            continue;
        int k = px_client_lbar_check(nd->p[r].c, &lb[r]);
        assert_int_equal(k, how == BY_SERVER ? PX_LBAR_SERVER : PX_LBAR_DONE);
        if (k == PX_LBAR_DONE)
            assert_int_equal(lb[r].status, PMIX_SUCCESS);
        else
            assert_int_equal(
                px_client_fence_arrived(nd->p[r].c, NULL, 0, &collect, 1, inproc_op_cb, &nd->p[r]),
                PMIX_SUCCESS);
    }
    if (how == BY_SERVER)
        wait_all(nd, 0, N, PMIX_SUCCESS);
    PMIx_Info_destruct(&collect);
    /* every peer's value of this round is local now (PMIX_OPTIONAL: no asking) */
    for (int r = 0; r < N; r++) {
        for (int t = 0; t < N; t++) {
            pmix_proc_t who;
            pmix_info_t opt;
            bool yes = true;
            pmix_value_t *v = NULL;
            PMIx_Load_procid(&who, "job", (pmix_rank_t)t);
            PMIx_Info_load(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
            assert_int_equal(px_client_get(nd->p[r].c, &who, "round", &opt, 1, &v, NULL, NULL),
                             PMIX_OPERATION_SUCCEEDED);
            assert_non_null(v);
            assert_int_equal(v->data.uint32, round * 100 + (uint32_t)t);
            PMIx_Value_free(v, 1);
            PMIx_Info_destruct(&opt);
        }
    }
}

/* Collect `cseq` lies in its half as the participants wrote it: a slot
 * for each, one record after another from the start of the half (each
 * taking whole cache lines, in any order, none overlapping). */
static void check_slots(px_page_hdr *pg, uint32_t cseq)
{
    uint32_t units = 0;

    for (int r = 0; r < N; r++) {
        uint32_t off = atomic_load(&px_page_slot_off(pg, pg->nprocs, cseq)[r]);
        uint32_t len = atomic_load(&px_page_slot_len(pg, pg->nprocs, cseq)[r]);
        assert_int_equal(atomic_load(&px_page_slot_tag(pg, pg->nprocs, cseq)[r]) >> 13, cseq);
        assert_int_equal(off % PX_PG_FILL_LINE, 0);
        assert_true(len > 0);
        units += (len + PX_PG_FILL_LINE - 1) / PX_PG_FILL_LINE;
        for (int q = 0; q < r; q++) {
            uint32_t qoff = atomic_load(&px_page_slot_off(pg, pg->nprocs, cseq)[q]);
            uint32_t qlen = atomic_load(&px_page_slot_len(pg, pg->nprocs, cseq)[q]);
            assert_true(off >= qoff + qlen || qoff >= off + len);
        }
    }
    assert_int_equal(atomic_load(&pg->fill[cseq & 1]), PX_PG_FILL(cseq, units));
}

/* Collect 1 done by the clients, then every rank commits 200 + its rank
 * for the next one, whose directive *collect gets. */
static void second_collect_ready(node *nd, pmix_info_t *collect)
{
    page_collect_round(nd, 1, -1, BY_SLOTS);
    collect_info(collect);
    commit_all(nd, 200);
}

/* A collecting fence whose participants all collect: each writes its own
 * record into its slot, the last arrival ends the fence, and the server
 * hears nothing but the commits; round after round the two data halves
 * take turns and the clients let go of the older one. */
static void page_collect_written_by_the_clients(void **state)
{
    node *nd = node_start(N, -1);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);

    for (uint32_t round = 1; round <= 5; round++) {
        size_t frames = inproc_frames_to_servers(nd->w);
        page_collect_round(nd, round, -1, BY_SLOTS);
        assert_int_equal(inproc_frames_to_servers(nd->w), frames + N);
        assert_int_equal(atomic_load(&pg->cseq), round);
        check_slots(pg, round); /* the half was filled again from its start */
        for (int r = 0; r < N; r++)
            assert_int_equal(atomic_load(&px_page_released(pg, pg->nprocs)[r]), round - 1);
    }
    /* the server numbers its collects after the clients' ones: the next
     * one it writes is collect 6, in half 0 */
    page_collect_round(nd, 6, 2, BY_DATA);
    assert_int_equal(atomic_load(&pg->cseq), 6);
    assert_int_equal(pg->res[0].cseq + pg->res[1].cseq, 5 + 6);
    page_collect_round(nd, 7, -1, BY_SLOTS);
    node_end(nd);
}

/* The participant count in the page's header is written once by the
 * server and read once by each client when the page comes: a participant
 * that changes it later (a stray write) moves nobody's per-rank arrays.
 * Collects written by the clients and by the server, and barriers, go on
 * as before (under ASan, any read through the changed count would be past
 * the page). */
static void page_header_count_changed_is_ignored(void **state)
{
    node *nd = node_start(N, -1);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);

    page_collect_round(nd, 1, -1, BY_SLOTS);
    pg->nprocs = PX_PAGE_MAX;
    page_collect_round(nd, 2, -1, BY_SLOTS);
    page_collect_round(nd, 3, 1, BY_DATA);
    fence_all(nd, 0, N);
    wait_all(nd, 0, N, PMIX_SUCCESS);
    pg->nprocs = 1;
    page_collect_round(nd, 4, -1, BY_SLOTS);
    page_collect_round(nd, 5, 2, BY_DATA);
    assert_int_equal(atomic_load(&pg->cseq), 5);
    pg->nprocs = N; /* as it was, for the checks at the end */
    node_end(nd);
}

/* A collecting fence on the page that one participant joins as a plain
 * barrier (so its slot is not written): one PCOLLECT reaches the server
 * (besides the commits), whose answer comes through the page; round after
 * round the two data halves take turns and the clients let go of the
 * older one. */
static void page_collect_answered_through_the_page(void **state)
{
    node *nd = node_start(N, -1);

    for (uint32_t round = 1; round <= 5; round++) {
        size_t frames = inproc_frames_to_servers(nd->w);
        page_collect_round(nd, round, (int)round % N, BY_DATA);
        assert_int_equal(inproc_frames_to_servers(nd->w), frames + N + 1);
        px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
        for (int r = 0; r < N; r++)
            assert_int_equal(atomic_load(&px_page_released(pg, pg->nprocs)[r]), round - 1);
    }
    node_end(nd);
}

/* A client that holds too many collects already copies the next one's
 * records out of their slots (one after another) instead of holding the
 * page, and reads them right. */
static void page_collect_slots_copied_when_too_many_held(void **state)
{
    node *nd = node_start(N, -1);
    px_client *c0 = nd->p[0].c;

    page_collect_round(nd, 1, -1, BY_SLOTS);
    assert_int_equal(c0->npheld, 1);
    /* rank 0 "holds" collect 1 eight times over: no room for collect 2 */
    while (c0->npheld < sizeof(c0->pheld) / sizeof(c0->pheld[0]))
        c0->pheld[c0->npheld++] = 1;
    page_collect_round(nd, 2, -1, BY_SLOTS); /* every value checked, rank 0's too */
    for (unsigned i = 0; i < c0->npheld; i++)
        assert_int_not_equal(c0->pheld[i], 2); /* copied: collect 2 is not held */
    node_end(nd);
}

/* Collect 2 with the page's slots changed by `tamper` just before the
 * last arrival (as a participant that wrote its slot wrong would leave
 * them): the collect fails for everyone with PMIX_ERR_UNPACK_FAILURE and
 * the page goes off; the next fence goes through the server and works. */
static void collect_with_bad_slots(void (*tamper)(px_page_hdr *pg))
{
    node *nd = node_start(N, -1);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    pmix_info_t collect;
    px_lbar lb[N];

    second_collect_ready(nd, &collect);
    for (int r = 0; r < N - 1; r++)
        assert_int_equal(px_client_lbar_arrive(nd->p[r].c, NULL, 0, &collect, 1, &lb[r]),
                         PX_LBAR_WAIT);
    tamper(pg);
    assert_int_equal(px_client_lbar_arrive(nd->p[N - 1].c, NULL, 0, &collect, 1, &lb[N - 1]),
                     PX_LBAR_DONE);
    assert_int_equal(lb[N - 1].status, PMIX_ERR_UNPACK_FAILURE);
    assert_true(atomic_load(&pg->word) & PX_PG_BROKEN);
    for (int r = 0; r < N - 1; r++) {
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_DONE);
        assert_int_equal(lb[r].status, PMIX_ERR_UNPACK_FAILURE);
    }
    inproc_run_until(nd->w, NULL);
    PMIx_Info_destruct(&collect);
    assert_int_equal(arrive(nd, 0, &lb[0]), PX_LBAR_NONE); /* off, for everyone */
    fence_all(nd, 0, N);
    wait_all(nd, 0, N, PMIX_SUCCESS);
    node_end(nd);
}

static void slot_out_of_its_half(px_page_hdr *pg)
{
    atomic_store(&px_page_slot_off(pg, pg->nprocs, 2)[1], (uint32_t)(PX_PAGE_HALF - 8));
}

static void slot_of_rank1_names_rank0s_record(px_page_hdr *pg)
{
    atomic_store(&px_page_slot_off(pg, pg->nprocs, 2)[1],
                 atomic_load(&px_page_slot_off(pg, pg->nprocs, 2)[0]));
    atomic_store(&px_page_slot_len(pg, pg->nprocs, 2)[1],
                 atomic_load(&px_page_slot_len(pg, pg->nprocs, 2)[0]));
}

/* A slot pointing out of its half is refused before it is read. */
static void page_collect_bad_slot_refused(void **state)
{
    collect_with_bad_slots(slot_out_of_its_half);
}

/* A slot holding another participant's record (a participant that wrote
 * another's rank, or pointed at another's record) is refused too: rank 1's
 * data would be missing, and the record in its place could be anyone's. */
static void page_collect_slot_of_another_refused(void **state)
{
    collect_with_bad_slots(slot_of_rank1_names_rank0s_record);
}

/* A slot written for a collect that then went through the server without
 * data (someone's fence needed the server) must not serve the next
 * collect, which gets the same number, after its writer committed again:
 * its tag names the generation it was written in, and that collect gets
 * the new value from the server. */
static void page_collect_stale_slot_not_used(void **state)
{
    node *nd = node_start(N, -1);
    pmix_info_t collect;
    px_lbar lb[N];

    second_collect_ready(nd, &collect);
    /* ranks 0-2 write their slots for collect 2; rank 3's fence is the server's */
    for (int r = 0; r < N - 1; r++)
        assert_int_equal(px_client_lbar_arrive(nd->p[r].c, NULL, 0, &collect, 1, &lb[r]),
                         PX_LBAR_WAIT);
    assert_int_equal(
        px_client_fence(nd->p[N - 1].c, NULL, 0, &collect, 1, inproc_op_cb, &nd->p[N - 1]),
        PMIX_SUCCESS);
    for (int r = 0; r < N - 1; r++) {
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_SERVER);
        assert_int_equal(
            px_client_fence_arrived(nd->p[r].c, NULL, 0, &collect, 1, inproc_op_cb, &nd->p[r]),
            PMIX_SUCCESS);
    }
    wait_all(nd, 0, N, PMIX_SUCCESS);
    PMIx_Info_destruct(&collect);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    assert_int_equal(atomic_load(&pg->cseq), 1);
    /* rank 0 commits 300; its slot for collect 2 (200) must not count
     * when it joins the next collect as a plain barrier */
    page_collect_round(nd, 3, 0, BY_DATA);
    node_end(nd);
}

/* The server writes a data half only once every client let go of what it
 * held there; otherwise this collect goes through the server (and still
 * brings everyone the data). */
static void page_collect_held_half_goes_to_the_server(void **state)
{
    node *nd = node_start(N, -1);

    page_collect_round(nd, 1, -1, BY_SLOTS);
    page_collect_round(nd, 2, -1, BY_SLOTS);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    atomic_store(&px_page_released(pg, pg->nprocs)[2], 0); /* rank 2 "still holds" collect 1 */
    page_collect_round(nd, 3, -1, BY_SERVER); /* no slot written, and the server cannot */
    page_collect_round(nd, 4, -1, BY_SLOTS);  /* collect 3 of the page, in half 1 */
    atomic_store(&px_page_released(pg, pg->nprocs)[1], 1); /* rank 1 "still holds" collect 2 */
    page_collect_round(nd, 5, 3, BY_SERVER);               /* collect 4 of half 0, by the server */
    page_collect_round(nd, 6, 3, BY_DATA);
    node_end(nd);
}

/* The length of collect `cseq`'s data on the page (0: not there). */
static uint64_t res_len(const px_page_hdr *pg, uint32_t cseq)
{
    for (int i = 0; i < 2; i++)
        if (pg->res[i].cseq == cseq)
            return pg->res[i].len;
    return 0;
}

static uint64_t round_page(uint64_t n)
{
    return (n + 4095) & ~(uint64_t)4095;
}

/* A data half gives back what an older, larger collect left past the
 * newest one's data (page_trim, before the wake), and the data still reads
 * right. */
static void page_collect_trims_what_a_larger_one_left(void **state)
{
    enum {
        BIG = 20000
    };
    node *nd = node_start(N, -1);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    px_lbar lb[N];
    pmix_info_t collect;
    uint64_t len1, len3, half1;

    collect_info(&collect);
    commit_all_big(nd, BIG); /* collect 1, in half 1: N x 20 kB */
    /* rank 0 as a plain barrier, here and below: the server writes them */
    assert_int_equal(px_client_lbar_arrive(nd->p[0].c, NULL, 0, NULL, 0, &lb[0]), PX_LBAR_WAIT);
    for (int r = 1; r < N; r++)
        assert_int_equal(px_client_lbar_arrive(nd->p[r].c, NULL, 0, &collect, 1, &lb[r]),
                         PX_LBAR_WAIT);
    inproc_run_until(nd->w, NULL);
    for (int r = 0; r < N; r++)
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_DONE);
    PMIx_Info_destruct(&collect);
    len1 = res_len(pg, 1);
    assert_true(len1 > (uint64_t)N * BIG);
    half1 = px_page_data_off(N) + PX_PAGE_HALF;
    assert_int_equal(((const char *)pg)[half1 + len1 - 1] != 0, 1);

    page_collect_round(nd, 2, 0, BY_DATA); /* half 0: nothing was there */
    assert_int_equal(inproc_page_trimmed(nd->w), 0);
    page_collect_round(nd, 3, 0, BY_DATA); /* half 1 again, small */
    len3 = res_len(pg, 3);
    assert_true(len3 > 0 && round_page(len3) < round_page(len1));
    assert_int_equal(inproc_page_trimmed(nd->w), round_page(len1) - round_page(len3));
    for (uint64_t off = round_page(len3); off < round_page(len1); off += 512)
        assert_int_equal(((const char *)pg)[half1 + off], 0);
    page_collect_round(nd, 4, 0, BY_DATA); /* as large as collect 2: nothing more */
    page_collect_round(nd, 5, 0, BY_DATA);
    assert_int_equal(inproc_page_trimmed(nd->w), round_page(len1) - round_page(len3));
    node_end(nd);
}

/* What the clients' records take in data half h, in whole pages. */
static uint64_t half_filled(px_page_hdr *pg, int h)
{
    return round_page((atomic_load(&pg->fill[h]) & PX_PG_FILL_UNITS) * PX_PG_FILL_LINE);
}

/* Collect 1, in half 1: every rank commits `len` bytes and arrives with
 * PMIX_COLLECT_DATA, but for rank 0 with `by_server` (a plain barrier:
 * the server writes the records). Returns what the records take there. */
static uint64_t big_collect(node *nd, px_page_hdr *pg, size_t len, bool by_server)
{
    px_lbar lb[N];
    pmix_info_t collect;

    collect_info(&collect);
    commit_all_big(nd, len);
    for (int r = 0; r < N; r++) {
        bool plain = by_server && r == 0;
        assert_int_equal(px_client_lbar_arrive(nd->p[r].c, NULL, 0, plain ? NULL : &collect,
                                               plain ? 0 : 1, &lb[r]),
                         r == N - 1 && !by_server ? PX_LBAR_DONE : PX_LBAR_WAIT);
    }
    inproc_run_until(nd->w, NULL); /* commits, then PCOLLECT */
    for (int r = 0; r < N - (by_server ? 0 : 1); r++)
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_DONE);
    PMIx_Info_destruct(&collect);
    uint64_t filled = by_server ? round_page(res_len(pg, 1)) : half_filled(pg, 1);
    assert_true(filled >= round_page((uint64_t)N * len));
    return filled;
}

/* What the clients wrote themselves (a large SLOTS collect) is given back
 * too, when the server next writes that half with less; a fill word past
 * the half is not believed. */
static void page_collect_trims_what_the_clients_left(void **state)
{
    enum {
        BIG = 20000
    };
    node *nd = node_start(N, -1);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    uint64_t filled = big_collect(nd, pg, BIG, false);

    page_collect_round(nd, 2, -1, BY_SLOTS); /* half 0 */
    page_collect_round(nd, 3, 0, BY_DATA);   /* half 1, by the server, small */
    uint64_t len3 = round_page(res_len(pg, 3));
    assert_true(len3 > 0 && len3 < filled);
    assert_int_equal(inproc_page_trimmed(nd->w), filled - len3);
    /* before the wake: after it, the clients may write this half again */
    assert_int_equal(inproc_page_trimmed_at_wake(nd->w), filled - len3);

    /* a fill word that claims more than the half: trimmed to its end only */
    atomic_store(&pg->fill[0], PX_PG_FILL(4, PX_PG_FILL_UNITS));
    page_collect_round(nd, 4, 0, BY_DATA); /* half 0 */
    uint64_t len4 = round_page(res_len(pg, 4));
    assert_int_equal(inproc_page_trimmed(nd->w), filled - len3 + PX_PAGE_HALF - len4);
    node_end(nd);
}

/* A collect the clients write themselves gives back too: its last arrival
 * returns what an older, larger one left in that half past its records
 * (page_discard, before the wake), and the data still reads right; a
 * collect of the same size after it gives back nothing more. */
static void page_slots_collect_gives_back_what_a_larger_one_left(void **state)
{
    enum {
        BIG = 20000
    };
    node *nd = node_start(N, -1);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    uint64_t half1 = px_page_data_off(N) + PX_PAGE_HALF;
    uint64_t big = big_collect(nd, pg, BIG, false);
    assert_int_equal(inproc_page_trimmed(nd->w), 0);

    page_collect_round(nd, 2, -1, BY_SLOTS); /* half 0: nothing was there */
    assert_int_equal(inproc_page_trimmed(nd->w), 0);
    page_collect_round(nd, 3, -1, BY_SLOTS); /* half 1 again, small */
    uint64_t small = half_filled(pg, 1);
    assert_true(small > 0 && small < big);
    assert_int_equal(inproc_page_trimmed(nd->w), big - small);
    assert_int_equal(inproc_page_trimmed_at_wake(nd->w), big - small); /* before the wake */
    for (uint64_t off = small; off < big; off += 512)
        assert_int_equal(((const char *)pg)[half1 + off], 0);
    assert_int_equal(atomic_load(&pg->hw[1]), 0);
    page_collect_round(nd, 4, -1, BY_SLOTS);
    page_collect_round(nd, 5, -1, BY_SLOTS); /* as large as collect 3: nothing more */
    assert_int_equal(inproc_page_trimmed(nd->w), big - small);
    node_end(nd);
}

/* What the server wrote (a large DATA collect) is given back by the last
 * arrival of a smaller collect the clients write in that half later. */
static void page_slots_collect_gives_back_what_the_server_left(void **state)
{
    node *nd = node_start(N, -1);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    uint64_t big = big_collect(nd, pg, 20000, true);

    assert_int_equal(atomic_load(&pg->hw[1]) * PX_PG_FILL_LINE, big);
    page_collect_round(nd, 2, -1, BY_SLOTS); /* half 0 */
    page_collect_round(nd, 3, -1, BY_SLOTS); /* half 1, small */
    uint64_t small = half_filled(pg, 1);
    assert_true(small > 0 && small < big);
    assert_int_equal(inproc_page_trimmed(nd->w), big - small);
    node_end(nd);
}

/* A give-back that fails keeps hw: the server's next write of that half
 * trims what is left. */
static void page_failed_give_back_is_left_to_the_server(void **state)
{
    node *nd = node_start(N, -1);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    uint64_t big = big_collect(nd, pg, 20000, false);

    page_collect_round(nd, 2, -1, BY_SLOTS); /* half 0 */
    inproc_fail_discards(nd->w, true);
    page_collect_round(nd, 3, -1, BY_SLOTS); /* half 1, small: nothing given back */
    assert_int_equal(inproc_page_trimmed(nd->w), 0);
    assert_int_equal(round_page(atomic_load(&pg->hw[1]) * PX_PG_FILL_LINE), big);
    inproc_fail_discards(nd->w, false);
    page_collect_round(nd, 4, -1, BY_SLOTS); /* half 0 */
    page_collect_round(nd, 5, 0, BY_DATA);   /* half 1, by the server */
    uint64_t len5 = round_page(res_len(pg, 5));
    assert_true(len5 > 0 && len5 < big);
    assert_int_equal(inproc_page_trimmed(nd->w), big - len5);
    node_end(nd);
}

/* The last arrival of a collect cannot send PCOLLECT (no memory for the
 * frame): nobody would finish that collect through the page, so it turns
 * the page off and everyone, itself included, takes the fence to the
 * server, which still brings them all the data. */
static void page_collect_unsent_pcollect_goes_to_the_server(void **state)
{
    node *nd = node_start(N, -1);
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    pmix_info_t collect;
    px_lbar lb[N];

    second_collect_ready(nd, &collect);
    inproc_run_until(nd->w, NULL);
    inproc_fail_client_sends(nd->w, nd->p[N - 1].c, 1);
    /* rank 0 as a plain barrier: its slot is not written, PCOLLECT is needed */
    assert_int_equal(px_client_lbar_arrive(nd->p[0].c, NULL, 0, NULL, 0, &lb[0]), PX_LBAR_WAIT);
    for (int r = 1; r < N; r++)
        assert_int_equal(px_client_lbar_arrive(nd->p[r].c, NULL, 0, &collect, 1, &lb[r]),
                         PX_LBAR_WAIT);
    assert_true(atomic_load(&pg->word) & PX_PG_BROKEN);
    for (int r = 0; r < N; r++) {
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_SERVER);
        assert_int_equal(
            px_client_fence_arrived(nd->p[r].c, NULL, 0, &collect, 1, inproc_op_cb, &nd->p[r]),
            PMIX_SUCCESS);
    }
    wait_all(nd, 0, N, PMIX_SUCCESS);
    PMIx_Info_destruct(&collect);
    for (int r = 0; r < N; r++) { /* every value of this round, from local data */
        pmix_proc_t who;
        pmix_info_t opt;
        bool yes = true;
        pmix_value_t *v = NULL;
        PMIx_Load_procid(&who, "job", (pmix_rank_t)((r + 1) % N));
        PMIx_Info_load(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
        assert_int_equal(px_client_get(nd->p[r].c, &who, "round", &opt, 1, &v, NULL, NULL),
                         PMIX_OPERATION_SUCCEEDED);
        assert_int_equal(v->data.uint32, 200 + (uint32_t)((r + 1) % N));
        PMIx_Value_free(v, 1);
        PMIx_Info_destruct(&opt);
    }
    node_end(nd);
}

/* A participant dies while the others wait for the server's answer to a
 * collect: they go to the server and fail with PMIX_ERR_PROC_TERM_WO_SYNC. */
static void page_collect_death_while_waiting(void **state)
{
    node *nd = node_start(N, -1);
    px_lbar lb[N];
    pmix_info_t collect;

    collect_info(&collect);
    for (int r = 0; r < N; r++)
        assert_int_equal(px_client_lbar_arrive(nd->p[r].c, NULL, 0, &collect, 1, &lb[r]),
                         PX_LBAR_WAIT);
    /* a commit of rank 3 "on its way": the server must wait for it */
    px_page_hdr *pg = inproc_client_page(nd->w, nd->p[0].c);
    atomic_store(&pg->commits[3], 1);
    inproc_run_until(nd->w, NULL);
    for (int r = 0; r < N; r++)
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_WAIT);
    inproc_kill_client(nd->w, nd->p[3].c);
    inproc_run_until(nd->w, NULL);
    for (int r = 0; r < N - 1; r++) {
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_SERVER);
        assert_int_equal(
            px_client_fence_arrived(nd->p[r].c, NULL, 0, &collect, 1, inproc_op_cb, &nd->p[r]),
            PMIX_SUCCESS);
    }
    wait_all(nd, 0, N - 1, PMIX_ERR_PROC_TERM_WO_SYNC);
    PMIx_Info_destruct(&collect);
    node_end(nd);
}

/* A generation that completed is complete, even if this process turns the
 * page off before it looks (another thread's second fence): it must not go
 * to the server for a fence nobody else will send there. */
static void page_completed_generation_stays_done(void **state)
{
    node *nd = node_start(N, -1);
    px_lbar lb[N];

    for (int r = 0; r < N - 1; r++)
        assert_int_equal(arrive(nd, r, &lb[r]), PX_LBAR_WAIT);
    assert_int_equal(arrive(nd, N - 1, &lb[N - 1]), PX_LBAR_DONE);
    /* rank 0 starts a second fence of the set before its first one looked */
    assert_int_equal(px_client_fence(nd->p[0].c, NULL, 0, NULL, 0, inproc_op_cb, &nd->p[0]),
                     PMIX_SUCCESS);
    assert_int_equal(px_client_lbar_check(nd->p[0].c, &lb[0]), PX_LBAR_DONE);
    for (int r = 1; r < N - 1; r++)
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_DONE);
    /* the second fence pairs with everyone's next one, at the server */
    fence_all(nd, 1, N);
    wait_all(nd, 0, N, PMIX_SUCCESS);
    node_end(nd);
}

/* The page's set as the server sees it: NULL, the wildcard, or the
 * wildcard repeated (the server drops duplicates) all arrive on the page;
 * a list naming ranks does not. */
static void page_set_as_the_server_sees_it(void **state)
{
    node *nd = node_start(N, -1);
    pmix_proc_t twice[2], ranks[N];
    px_lbar lb[N];

    PMIx_Load_procid(&twice[0], "job", PMIX_RANK_WILDCARD);
    twice[1] = twice[0];
    for (int r = 0; r < N; r++)
        PMIx_Load_procid(&ranks[r], "job", (pmix_rank_t)r);
    assert_int_equal(px_client_lbar_arrive(nd->p[0].c, ranks, N, NULL, 0, &lb[0]), PX_LBAR_NONE);
    /* a NULL list with a count is a bad argument, on the page or not */
    assert_int_equal(px_client_lbar_arrive(nd->p[0].c, NULL, 2, NULL, 0, &lb[0]), PX_LBAR_NONE);
    assert_int_equal(px_client_fence(nd->p[0].c, NULL, 2, NULL, 0, inproc_op_cb, &nd->p[0]),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_client_lbar_arrive(nd->p[0].c, twice, 2, NULL, 0, &lb[0]), PX_LBAR_WAIT);
    assert_int_equal(px_client_lbar_arrive(nd->p[1].c, twice, 1, NULL, 0, &lb[1]), PX_LBAR_WAIT);
    assert_int_equal(arrive(nd, 2, &lb[2]), PX_LBAR_WAIT);
    assert_int_equal(px_client_lbar_arrive(nd->p[3].c, twice, 2, NULL, 0, &lb[3]), PX_LBAR_DONE);
    for (int r = 0; r < 3; r++)
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_DONE);
    node_end(nd);
}

/* A FENCE of the page's set that did not arrive on the page (a client and
 * server that disagree on the set): the server turns the page off, so the
 * sleepers come to it instead of waiting for an arrival that never comes. */
static void page_unarrived_fence_turns_it_off(void **state)
{
    node *nd = node_start(N, -1);
    px_lbar lb[N];
    px_buf b;
    size_t len;
    void *frame;

    for (int r = 0; r < N - 1; r++)
        assert_int_equal(arrive(nd, r, &lb[r]), PX_LBAR_WAIT);
    px_buf_init_frame(&b, PX_MSG_FENCE, 77);
    px_pack_procs(&b, NULL, 0);
    px_pack_info(&b, NULL, 0);
    px_pack_u8(&b, 0); /* not arrived */
    frame = px_buf_finish_frame(&b, &len);
    assert_non_null(frame);
    inproc_send_raw(nd->w, nd->p[N - 1].c, frame, len);
    free(frame);
    inproc_run_until(nd->w, NULL);
    for (int r = 0; r < N - 1; r++) {
        assert_int_equal(px_client_lbar_check(nd->p[r].c, &lb[r]), PX_LBAR_SERVER);
        assert_int_equal(
            px_client_fence_arrived(nd->p[r].c, NULL, 0, NULL, 0, inproc_op_cb, &nd->p[r]),
            PMIX_SUCCESS);
    }
    wait_all(nd, 0, N - 1, PMIX_SUCCESS);
    node_end(nd);
}

/* A job with processes on other nodes has no page: its fences need the host. */
static void page_only_for_one_node_jobs(void **state)
{
    node *nd = node_start(2 * N, -1);
    px_lbar lb;

    assert_int_equal(arrive(nd, 0, &lb), PX_LBAR_NONE);
    node_end(nd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(page_barriers_need_no_message),
        cmocka_unit_test(page_mixed_forms_meet_at_the_server),
        cmocka_unit_test(page_death_fails_the_sleepers),
        cmocka_unit_test(page_lost_connection_breaks_it),
        cmocka_unit_test(page_slots_collect_gives_back_what_a_larger_one_left),
        cmocka_unit_test(page_slots_collect_gives_back_what_the_server_left),
        cmocka_unit_test(page_failed_give_back_is_left_to_the_server),
        cmocka_unit_test(page_get_waits_for_commits_in_flight),
        cmocka_unit_test(page_refused_by_one_is_off_for_all),
        cmocka_unit_test(page_with_another_count_refused),
        cmocka_unit_test(page_two_open_fences_turn_it_off),
        cmocka_unit_test(page_timeout_turns_it_off),
        cmocka_unit_test(page_only_for_one_node_jobs),
        cmocka_unit_test(page_collect_written_by_the_clients),
        cmocka_unit_test(page_header_count_changed_is_ignored),
        cmocka_unit_test(page_collect_answered_through_the_page),
        cmocka_unit_test(page_collect_stale_slot_not_used),
        cmocka_unit_test(page_collect_bad_slot_refused),
        cmocka_unit_test(page_collect_slot_of_another_refused),
        cmocka_unit_test(page_collect_slots_copied_when_too_many_held),
        cmocka_unit_test(page_collect_held_half_goes_to_the_server),
        cmocka_unit_test(page_collect_trims_what_a_larger_one_left),
        cmocka_unit_test(page_collect_trims_what_the_clients_left),
        cmocka_unit_test(page_collect_unsent_pcollect_goes_to_the_server),
        cmocka_unit_test(page_collect_death_while_waiting),
        cmocka_unit_test(page_completed_generation_stays_done),
        cmocka_unit_test(page_set_as_the_server_sees_it),
        cmocka_unit_test(page_unarrived_fence_turns_it_off),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
