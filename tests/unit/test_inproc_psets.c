/*
 * test_inproc_psets.c - process sets end to end on the in-process
 * platform: the host core builds the job data of a job of two apps in two
 * sets (as `pmixrun -n 2 --pset ocean ./a : -n 3 --pset ice ./b` does),
 * two servers register it, and their clients read the sets (PMIx_Get of
 * PMIX_PSET_NAMES, which the server answers from its table, queries of PMIX_QUERY_NUM_PSETS,
 * PMIX_QUERY_PSET_NAMES and PMIX_QUERY_PSET_MEMBERSHIP), see a set the host defines and deletes
 * while they run (PMIX_PROCESS_SET_DEFINE / DELETE events on that server's
 * clients only), and what deregistration leaves.
 *
 * The job: namespace "job", ranks 0-1 (app 0, "ocean") on node 0, ranks
 * 2-4 (app 1, "ice") on node 1.
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
#include "px_hostcore.h"

#define NPROCS 5

static const uint32_t rank_node[NPROCS] = {0, 0, 1, 1, 1};
static const char *const node_names[] = {"n0", "n1"};

static const char *node_name(void *ctx, uint32_t node)
{
    (void)ctx;
    return node_names[node];
}

typedef struct world {
    inproc_world *w;
    px_server *srv[2];
    inproc_proc p[NPROCS];
} world;

/* The host core's job data for `node`, registered with `srv`. */
static void register_job(px_server *srv, uint32_t node)
{
    char *argv_a[] = {"./a", NULL}, *argv_b[] = {"./b", "x", NULL};
    px_jobmap_app apps[2] = {
        {.first = 0, .size = 2, .argv = argv_a, .pset = "ocean"},
        {.first = 2, .size = 3, .argv = argv_b, .pset = "ice"},
    };
    px_jobmap m = {.nspace = "job",
                   .nprocs = NPROCS,
                   .nnodes = 2,
                   .rank_node = rank_node,
                   .node_name = node_name,
                   .napps = 2,
                   .apps = apps,
                   .describe_all = true};
    px_ivec v = {0};

    assert_int_equal(px_jobinfo_build(&m, node, &v), PMIX_SUCCESS);
    assert_int_equal(px_server_register_nspace(srv, "job", node == 0 ? 2 : 3, v.v, v.n),
                     PMIX_SUCCESS);
    px_ivec_free(&v);
}

/* ... and the node's ranks as its clients. */
static void register_node(px_server *srv, uint32_t node)
{
    register_job(srv, node);
    for (pmix_rank_t r = 0; r < NPROCS; r++) {
        pmix_proc_t pr;
        if (rank_node[r] != node)
            continue;
        PMIx_Load_procid(&pr, "job", r);
        assert_int_equal(px_server_register_client(srv, &pr, 1000, 1000, NULL), PMIX_SUCCESS);
    }
}

static world *start(void)
{
    world *j = calloc(1, sizeof(*j));

    assert_non_null(j);
    j->w = inproc_world_create();
    for (uint32_t s = 0; s < 2; s++) {
        assert_non_null(j->srv[s] = inproc_server(j->w, (int)s));
        register_node(j->srv[s], s);
    }
    for (pmix_rank_t r = 0; r < NPROCS; r++) {
        pmix_proc_t self;
        PMIx_Load_procid(&self, "job", r);
        j->p[r].c = inproc_client(j->w, j->srv[rank_node[r]], &self);
        assert_int_equal(px_client_connect(j->p[r].c, NULL, 0, inproc_op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    }
    for (int r = 0; r < NPROCS; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].status, PMIX_SUCCESS);
        j->p[r].done = 0;
    }
    return j;
}

static void stop(world *j)
{
    inproc_world_destroy(j->w);
    free(j);
}

/* ---- queries ---- */

typedef struct answer {
    int done;
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
} answer;

static void query_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    answer *a = cbdata;

    a->status = status;
    a->ninfo = ninfo;
    a->info = ninfo > 0 ? PMIx_Info_create(ninfo) : NULL;
    for (size_t i = 0; i < ninfo; i++)
        assert_int_equal(PMIx_Info_xfer(&a->info[i], &info[i]), PMIX_SUCCESS);
    if (release_fn != NULL)
        release_fn(release_cbdata);
    a->done++;
}

/* Rank `r` asks `key` (with PMIX_PSET_NAME `pset` if not NULL). */
static void ask(world *j, pmix_rank_t r, const char *key, const char *pset, answer *a)
{
    char *keys[] = {(char *)key, NULL};
    pmix_query_t q = {.keys = keys};
    pmix_info_t qual;

    memset(a, 0, sizeof(*a));
    if (pset != NULL) {
        PMIx_Info_load(&qual, PMIX_PSET_NAME, pset, PMIX_STRING);
        q.qualifiers = &qual;
        q.nqual = 1;
    }
    assert_int_equal(px_client_query(j->p[r].c, &q, 1, query_cb, a), PMIX_SUCCESS);
    if (pset != NULL)
        PMIx_Info_destruct(&qual);
    assert_true(inproc_run_until(j->w, &a->done));
    assert_int_equal(a->done, 1);
}

static void answer_free(answer *a)
{
    PMIx_Info_free(a->info, a->ninfo);
    memset(a, 0, sizeof(*a));
}

static size_t num_psets(world *j, pmix_rank_t r)
{
    answer a;
    size_t n;

    ask(j, r, PMIX_QUERY_NUM_PSETS, NULL, &a);
    assert_int_equal(a.status, PMIX_SUCCESS);
    assert_int_equal(a.ninfo, 1);
    assert_int_equal(a.info[0].value.type, PMIX_SIZE);
    n = a.info[0].value.data.size;
    answer_free(&a);
    return n;
}

static void expect_names(world *j, pmix_rank_t r, const char *names)
{
    answer a;

    ask(j, r, PMIX_QUERY_PSET_NAMES, NULL, &a);
    assert_int_equal(a.status, PMIX_SUCCESS);
    assert_int_equal(a.ninfo, 1);
    assert_string_equal(a.info[0].key, PMIX_QUERY_PSET_NAMES);
    assert_int_equal(a.info[0].value.type, PMIX_STRING);
    assert_string_equal(a.info[0].value.data.string, names);
    answer_free(&a);
}

typedef struct names_got {
    int done;
    pmix_status_t status;
    char names[128];
} names_got;

static void get_cb(pmix_status_t status, pmix_value_t *v, void *cbdata)
{
    names_got *g = cbdata;

    g->status = status;
    if (status == PMIX_SUCCESS) {
        assert_non_null(v);
        assert_int_equal(v->type, PMIX_STRING);
        snprintf(g->names, sizeof(g->names), "%s", v->data.string);
    }
    g->done++;
}

/* Rank `r`'s PMIx_Get of rank `of`'s PMIX_PSET_NAMES: the names, or
 * "(STATUS)". The server answers: the call never completes at once. */
static void expect_pset_names(world *j, pmix_rank_t r, pmix_rank_t of, const char *want)
{
    names_got g = {0};
    pmix_proc_t who;
    pmix_value_t *v = NULL;

    PMIx_Load_procid(&who, "job", of);
    assert_int_equal(px_client_get(j->p[r].c, &who, PMIX_PSET_NAMES, NULL, 0, &v, get_cb, &g),
                     PMIX_SUCCESS);
    assert_null(v);
    assert_true(inproc_run_until(j->w, &g.done));
    if (g.status != PMIX_SUCCESS)
        snprintf(g.names, sizeof(g.names), "(%s)", PMIx_Error_string(g.status));
    assert_string_equal(g.names, want);
}

/* The members of `pset` as rank `r` reads them: "job:2,job:3". */
static void expect_members(world *j, pmix_rank_t r, const char *pset, const char *want)
{
    answer a;
    char got[256] = "";
    size_t at = 0;

    ask(j, r, PMIX_QUERY_PSET_MEMBERSHIP, pset, &a);
    assert_int_equal(a.status, PMIX_SUCCESS);
    assert_int_equal(a.ninfo, 1);
    assert_int_equal(a.info[0].value.type, PMIX_DATA_ARRAY);
    const pmix_data_array_t *da = a.info[0].value.data.darray;
    assert_int_equal(da->type, PMIX_PROC);
    for (size_t i = 0; i < da->size; i++) {
        const pmix_proc_t *p = &((const pmix_proc_t *)da->array)[i];
        at += (size_t)snprintf(got + at, sizeof(got) - at, "%s%s:%u", i ? "," : "", p->nspace,
                               p->rank);
    }
    assert_string_equal(got, want);
    answer_free(&a);
}

static void test_launch_sets(void **state)
{
    (void)state;
    world *j = start();
    answer a;

    /* every process, on either node, sees both sets */
    for (pmix_rank_t r = 0; r < NPROCS; r++) {
        assert_int_equal(num_psets(j, r), 2);
        expect_names(j, r, "ocean,ice");
    }
    expect_members(j, 0, "ice", "job:2,job:3,job:4");
    expect_members(j, 4, "ocean", "job:0,job:1");
    /* a process's own set, and another's, on either node */
    expect_pset_names(j, 0, 3, "ice");
    expect_pset_names(j, 0, 0, "ocean");
    expect_pset_names(j, 4, 1, "ocean");
    /* no name, or an unknown one: not answered */
    ask(j, 1, PMIX_QUERY_PSET_MEMBERSHIP, NULL, &a);
    assert_int_equal(a.status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(a.ninfo, 0);
    ask(j, 1, PMIX_QUERY_PSET_MEMBERSHIP, "land", &a);
    assert_int_equal(a.status, PMIX_ERR_NOT_FOUND);
    stop(j);
}

/* Two keys in one query, one of them unanswerable: partial success. */
static void test_partial(void **state)
{
    (void)state;
    world *j = start();
    char *keys[] = {PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_MEMBERSHIP, NULL};
    pmix_query_t q = {.keys = keys};
    answer a = {0};

    assert_int_equal(px_client_query(j->p[2].c, &q, 1, query_cb, &a), PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &a.done));
    assert_int_equal(a.status, PMIX_ERR_PARTIAL_SUCCESS);
    assert_int_equal(a.ninfo, 1);
    assert_string_equal(a.info[0].key, PMIX_QUERY_NUM_PSETS);
    answer_free(&a);
    stop(j);
}

/* ---- the host defines and deletes ---- */

typedef struct seen {
    int defines, deletes;
    char name[64];
    size_t nmembers;
    pmix_rank_t first;
} seen;

/* Each client registers with its own `seen` as the handler's object
 * (PMIX_EVENT_RETURN_OBJECT), which the engine hands back in the info. */
static void on_pset(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id;
    (void)results;
    (void)nresults;
    const pmix_info_t *obj = px_info_find(info, ninfo, PMIX_EVENT_RETURN_OBJECT);
    const char *name = px_info_string(info, ninfo, PMIX_PSET_NAME);
    const pmix_info_t *mem = px_info_find(info, ninfo, PMIX_PSET_MEMBERS);
    seen *s;

    assert_non_null(obj);
    s = obj->value.data.ptr;
    assert_string_equal(source->nspace, "host");
    assert_non_null(name);
    snprintf(s->name, sizeof(s->name), "%s", name);
    if (status == PMIX_PROCESS_SET_DEFINE) {
        s->defines++;
        assert_non_null(mem);
        assert_int_equal(mem->value.type, PMIX_DATA_ARRAY);
        assert_int_equal(mem->value.data.darray->type, PMIX_PROC);
        s->nmembers = mem->value.data.darray->size;
        s->first = s->nmembers > 0 ? ((const pmix_proc_t *)mem->value.data.darray->array)[0].rank
                                   : PMIX_RANK_UNDEF;
    } else {
        assert_int_equal(status, PMIX_PROCESS_SET_DELETE);
        assert_null(mem);
        s->deletes++;
    }
    cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int default_calls;

static void on_any(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    default_calls++;
    cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void test_define_delete(void **state)
{
    (void)state;
    world *j = start();
    seen ev[NPROCS];
    pmix_status_t codes[] = {PMIX_PROCESS_SET_DEFINE, PMIX_PROCESS_SET_DELETE};
    pmix_proc_t host, members[2];
    pmix_info_t ret;
    size_t id;

    memset(ev, 0, sizeof(ev));
    for (int r = 0; r < NPROCS; r++) {
        PMIx_Info_load(&ret, PMIX_EVENT_RETURN_OBJECT, &ev[r], PMIX_POINTER);
        assert_int_equal(px_client_register_event(j->p[r].c, codes, 2, &ret, 1, on_pset, &id),
                         PMIX_SUCCESS);
        PMIx_Info_destruct(&ret);
    }
    default_calls = 0;
    assert_int_equal(px_client_register_event(j->p[0].c, NULL, 0, NULL, 0, on_any, &id),
                     PMIX_SUCCESS);
    PMIx_Load_procid(&host, "host", 0);
    PMIx_Load_procid(&members[0], "job", 1);
    PMIx_Load_procid(&members[1], "job", 3);
    /* node 0's host defines "tide": node 0's clients hear it, node 1's do not */
    assert_int_equal(px_server_define_process_set(j->srv[0], &host, "tide", members, 2),
                     PMIX_SUCCESS);
    inproc_run_until(j->w, NULL);
    for (int r = 0; r < NPROCS; r++) {
        assert_int_equal(ev[r].defines, rank_node[r] == 0 ? 1 : 0);
        assert_int_equal(ev[r].deletes, 0);
    }
    assert_string_equal(ev[0].name, "tide");
    assert_int_equal(ev[1].nmembers, 2);
    assert_int_equal(ev[1].first, 1);
    assert_int_equal(num_psets(j, 0), 3);
    expect_names(j, 1, "ocean,ice,tide");
    expect_members(j, 0, "tide", "job:1,job:3");
    /* PMIx_Get of a member's sets has it (the Standard: every set the
     * process is in), of another's not */
    expect_pset_names(j, 0, 1, "ocean,tide");
    expect_pset_names(j, 1, 3, "ice,tide");
    expect_pset_names(j, 1, 2, "ice");
    expect_pset_names(j, 2, 3, "ice"); /* node 1's host has not defined it */
    {
        /* a process of no set: not found */
        pmix_proc_t who;
        PMIx_Load_procid(&who, "job", 7);
        names_got g = {0};
        pmix_value_t *v = NULL;
        assert_int_equal(px_client_get(j->p[0].c, &who, PMIX_PSET_NAMES, NULL, 0, &v, get_cb, &g),
                         PMIX_SUCCESS);
        assert_true(inproc_run_until(j->w, &g.done));
        assert_int_equal(g.status, PMIX_ERR_NOT_FOUND);
    }
    assert_int_equal(num_psets(j, 2), 2); /* node 1's host has not defined it */
    /* the host keeps its servers alike: node 1's too */
    assert_int_equal(px_server_define_process_set(j->srv[1], &host, "tide", members, 2),
                     PMIX_SUCCESS);
    inproc_run_until(j->w, NULL);
    assert_int_equal(ev[4].defines, 1);
    expect_members(j, 4, "tide", "job:1,job:3");
    /* defined again: replaced, announced again, still one set */
    assert_int_equal(px_server_define_process_set(j->srv[0], &host, "tide", members, 1),
                     PMIX_SUCCESS);
    inproc_run_until(j->w, NULL);
    assert_int_equal(ev[0].defines, 2);
    assert_int_equal(ev[0].nmembers, 1);
    assert_int_equal(num_psets(j, 0), 3);
    expect_members(j, 1, "tide", "job:1");
    /* deleted: announced, gone from the queries; unknown names refused */
    assert_int_equal(px_server_delete_process_set(j->srv[0], &host, "tide"), PMIX_SUCCESS);
    inproc_run_until(j->w, NULL);
    for (int r = 0; r < NPROCS; r++)
        assert_int_equal(ev[r].deletes, rank_node[r] == 0 ? 1 : 0);
    assert_string_equal(ev[1].name, "tide");
    expect_names(j, 0, "ocean,ice");
    expect_pset_names(j, 0, 1, "ocean");
    assert_int_equal(px_server_delete_process_set(j->srv[0], &host, "tide"), PMIX_ERR_NOT_FOUND);
    /* a default handler hears none of it */
    assert_int_equal(default_calls, 0);
    /* a set of no process */
    assert_int_equal(px_server_define_process_set(j->srv[0], &host, "void", NULL, 0), PMIX_SUCCESS);
    inproc_run_until(j->w, NULL);
    assert_int_equal(ev[0].defines, 3);
    assert_int_equal(ev[0].nmembers, 0);
    expect_members(j, 0, "void", "");
    assert_int_equal(px_server_delete_process_set(j->srv[0], &host, "void"), PMIX_SUCCESS);
    assert_int_equal(px_server_define_process_set(j->srv[0], &host, "", members, 2),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_server_define_process_set(j->srv[0], &host, NULL, members, 2),
                     PMIX_ERR_BAD_PARAM);
    inproc_run_until(j->w, NULL);
    assert_int_equal(ev[0].defines, 3); /* nothing announced for refusals */
    stop(j);
}

/* Deregistering the namespace takes the sets of its job data with it; a
 * set the host defined stays until the host deletes it. */
static void test_deregister(void **state)
{
    (void)state;
    world *j = start();
    pmix_proc_t host, m;
    char *keys[] = {PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES, NULL};
    pmix_query_t q = {.keys = keys};
    pmix_info_t *info = NULL;
    size_t ninfo = 0;

    PMIx_Load_procid(&host, "host", 0);
    PMIx_Load_procid(&m, "other", 0);
    assert_int_equal(px_server_define_process_set(j->srv[1], &host, "kept", &m, 1), PMIX_SUCCESS);
    px_server_deregister_nspace(j->srv[1], "job");
    inproc_run_until(j->w, NULL);
    assert_int_equal(px_server_query_psets(j->srv[1], &q, 1, &info, &ninfo), PMIX_SUCCESS);
    assert_int_equal(ninfo, 2);
    assert_int_equal(info[0].value.data.size, 1);
    assert_string_equal(info[1].value.data.string, "kept");
    PMIx_Info_free(info, ninfo);
    /* and a namespace registered again replaces its sets, not adds to them */
    register_job(j->srv[0], 0);
    assert_int_equal(px_server_query_psets(j->srv[0], &q, 1, &info, &ninfo), PMIX_SUCCESS);
    assert_int_equal(info[0].value.data.size, 2);
    PMIx_Info_free(info, ninfo);
    stop(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_sets),
        cmocka_unit_test(test_partial),
        cmocka_unit_test(test_define_delete),
        cmocka_unit_test(test_deregister),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
