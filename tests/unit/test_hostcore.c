/*
 * test_hostcore - the host core's job-information builder
 * (hostcore/jobinfo.c): the keys it makes from a job map, for the node
 * that registers them, with and without describe_all; the host's own keys
 * for local ranks only; process sets in the app and process data; a
 * failure leaves the array as it was; and a
 * fence's request read from the server engine's upcall.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <pmix.h>

#include "px_hostcore.h"

static const char *const names[] = {"n0", "n1", "n2"};

static const char *node_name(void *ctx, uint32_t node)
{
    (void)ctx;
    return names[node];
}

/* The entry `key` at the top level of `v` (the first one), or NULL. */
static const pmix_info_t *find(const pmix_info_t *v, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (PMIx_Check_key(v[i].key, key))
            return &v[i];
    return NULL;
}

static size_t count(const px_ivec *v, const char *key)
{
    size_t c = 0;
    for (size_t i = 0; i < v->n; i++)
        c += PMIx_Check_key(v->v[i].key, key);
    return c;
}

/* The PMIX_PROC_DATA array of `rank`, or NULL. */
static const pmix_data_array_t *proc_data(const px_ivec *v, pmix_rank_t rank)
{
    for (size_t i = 0; i < v->n; i++) {
        if (!PMIx_Check_key(v->v[i].key, PMIX_PROC_DATA))
            continue;
        const pmix_data_array_t *da = v->v[i].value.data.darray;
        const pmix_info_t *e = da->array;
        assert_true(PMIx_Check_key(e[0].key, PMIX_RANK)); /* first, always */
        if (e[0].value.data.rank == rank)
            return da;
    }
    return NULL;
}

typedef struct extra {
    unsigned calls;
    pmix_rank_t fail_at; /* PMIX_RANK_UNDEF: never */
} extra;

static pmix_status_t local_keys(void *ctx, pmix_rank_t rank, px_ivec *proc)
{
    extra *x = ctx;
    char dir[32];
    x->calls++;
    if (rank == x->fail_at)
        return PMIX_ERROR;
    snprintf(dir, sizeof(dir), "/tmp/r%u", rank);
    return px_ivec_load(proc, PMIX_PROCDIR, dir, PMIX_STRING);
}

/* 7 ranks, 3 per node in blocks (node 2 holds rank 6): node 1 described
 * in full. */
static void test_block_all(void **state)
{
    (void)state;
    char *argv[] = {"prog", "-x", NULL};
    px_jobmap_app app = {.first = 0, .size = 7, .argv = argv, .wdir = "/w"};
    extra x = {.fail_at = PMIX_RANK_UNDEF};
    px_jobmap m = {.nspace = "ns",
                   .nprocs = 7,
                   .nnodes = 3,
                   .ppn = 3,
                   .node_name = node_name,
                   .napps = 1,
                   .apps = &app,
                   .mapby = "BYSLOT",
                   .describe_all = true,
                   .local_keys = local_keys,
                   .ctx = &x};
    px_ivec v = {0};
    const pmix_info_t *e;

    assert_int_equal(px_jobinfo_build(&m, 1, &v), PMIX_SUCCESS);
    assert_non_null(e = find(v.v, v.n, PMIX_JOB_SIZE));
    assert_int_equal(e->value.data.uint32, 7);
    assert_non_null(e = find(v.v, v.n, PMIX_LOCAL_SIZE));
    assert_int_equal(e->value.data.uint32, 3);
    assert_non_null(e = find(v.v, v.n, PMIX_LOCAL_PEERS));
    assert_string_equal(e->value.data.string, "3,4,5");
    assert_non_null(e = find(v.v, v.n, PMIX_LOCALLDR));
    assert_int_equal(e->value.data.rank, 3);
    assert_non_null(e = find(v.v, v.n, PMIX_HOSTNAME));
    assert_string_equal(e->value.data.string, "n1");
    assert_non_null(e = find(v.v, v.n, PMIX_NODE_LIST));
    assert_string_equal(e->value.data.string, "n0,n1,n2");
    assert_non_null(find(v.v, v.n, PMIX_NODE_MAP));
    assert_non_null(find(v.v, v.n, PMIX_PROC_MAP));
    assert_null(find(v.v, v.n, PMIX_TMPDIR)); /* none given */
    assert_int_equal(count(&v, PMIX_NODE_INFO_ARRAY), 3);
    assert_int_equal(count(&v, PMIX_APP_INFO_ARRAY), 1);
    assert_int_equal(count(&v, PMIX_PROC_DATA), 7);
    /* rank 6: node 2, local rank 0; rank 4: node 1, local rank 1 */
    const pmix_data_array_t *pd = proc_data(&v, 6);
    assert_non_null(pd);
    assert_non_null(e = find(pd->array, pd->size, PMIX_NODEID));
    assert_int_equal(e->value.data.uint32, 2);
    assert_non_null(e = find(pd->array, pd->size, PMIX_LOCAL_RANK));
    assert_int_equal(e->value.data.uint16, 0);
    assert_null(find(pd->array, pd->size, PMIX_PROCDIR)); /* not local */
    pd = proc_data(&v, 4);
    assert_non_null(e = find(pd->array, pd->size, PMIX_LOCAL_RANK));
    assert_int_equal(e->value.data.uint16, 1);
    assert_non_null(e = find(pd->array, pd->size, PMIX_PROCDIR));
    assert_string_equal(e->value.data.string, "/tmp/r4");
    assert_int_equal(x.calls, 3); /* the local ranks only */
    px_ivec_free(&v);
    assert_null(v.v);
}

/* An explicit map (round robin), only this node described, two apps. */
static void test_map_local(void **state)
{
    (void)state;
    const uint32_t rank_node[] = {0, 1, 2, 0, 1, 2};
    px_jobmap_app apps[] = {{.first = 0, .size = 2}, {.first = 2, .size = 4}};
    px_jobmap m = {.nspace = "ns",
                   .nprocs = 6,
                   .nnodes = 3,
                   .rank_node = rank_node,
                   .node_name = node_name,
                   .napps = 2,
                   .apps = apps,
                   .tmpdir = "/t"};
    px_ivec v = {0};
    const pmix_info_t *e;

    assert_int_equal(px_jobmap_node_of(&m, 5), 2);
    assert_int_equal(px_jobmap_node_of(&m, 6), UINT32_MAX);
    assert_int_equal(px_jobinfo_build(&m, 0, &v), PMIX_SUCCESS);
    assert_null(find(v.v, v.n, PMIX_NODE_LIST));
    assert_null(find(v.v, v.n, PMIX_PROC_MAP));
    assert_non_null(e = find(v.v, v.n, PMIX_LOCAL_PEERS));
    assert_string_equal(e->value.data.string, "0,3");
    assert_non_null(e = find(v.v, v.n, PMIX_JOB_NUM_APPS));
    assert_int_equal(e->value.data.uint32, 2);
    assert_non_null(find(v.v, v.n, PMIX_TMPDIR));
    assert_int_equal(count(&v, PMIX_NODE_INFO_ARRAY), 1);
    assert_int_equal(count(&v, PMIX_APP_INFO_ARRAY), 2);
    assert_int_equal(count(&v, PMIX_PROC_DATA), 2);
    /* rank 3 is app 1's rank 1 */
    const pmix_data_array_t *pd = proc_data(&v, 3);
    assert_non_null(pd);
    assert_non_null(e = find(pd->array, pd->size, PMIX_APPNUM));
    assert_int_equal(e->value.data.uint32, 1);
    assert_non_null(e = find(pd->array, pd->size, PMIX_APP_RANK));
    assert_int_equal(e->value.data.rank, 1);
    assert_null(proc_data(&v, 1));
    px_ivec_free(&v);
}

/* The app array of app `a` (its PMIX_APPNUM), or NULL. */
static const pmix_data_array_t *app_data(const px_ivec *v, uint32_t a)
{
    for (size_t i = 0; i < v->n; i++) {
        if (!PMIx_Check_key(v->v[i].key, PMIX_APP_INFO_ARRAY))
            continue;
        const pmix_data_array_t *da = v->v[i].value.data.darray;
        const pmix_info_t *e = find(da->array, da->size, PMIX_APPNUM);
        if (e != NULL && e->value.data.uint32 == a)
            return da;
    }
    return NULL;
}

/* Process sets (pmixrun -n 2 --pset ocean ./a : -n 3 --pset ice ./b : -n 1
 * ./c): each app's array names its set, each described rank its app's,
 * an app without one names none; every app, sets included, is described
 * on every node even without describe_all (the servers build their tables
 * of sets from them). */
static void test_psets(void **state)
{
    (void)state;
    char *a[] = {"./a", NULL}, *b[] = {"./b", "-v", NULL}, *c[] = {"./c", NULL};
    px_jobmap_app apps[] = {{.first = 0, .size = 2, .argv = a, .pset = "ocean"},
                            {.first = 2, .size = 3, .argv = b, .pset = "ice"},
                            {.first = 5, .size = 1, .argv = c, .pset = ""}};
    px_jobmap m = {.nspace = "ns",
                   .nprocs = 6,
                   .nnodes = 2,
                   .ppn = 3,
                   .node_name = node_name,
                   .napps = 3,
                   .apps = apps,
                   .describe_all = true};
    px_ivec v = {0};
    const pmix_data_array_t *ad, *pd;
    const pmix_info_t *e;

    for (int all = 1; all >= 0; all--) {
        m.describe_all = all;
        assert_int_equal(px_jobinfo_build(&m, 1, &v), PMIX_SUCCESS);
        assert_int_equal(count(&v, PMIX_APP_INFO_ARRAY), 3);
        assert_non_null(ad = app_data(&v, 1));
        assert_non_null(e = find(ad->array, ad->size, PMIX_PSET_NAME));
        assert_string_equal(e->value.data.string, "ice");
        assert_non_null(e = find(ad->array, ad->size, PMIX_APPLDR));
        assert_int_equal(e->value.data.rank, 2);
        assert_non_null(e = find(ad->array, ad->size, PMIX_APP_SIZE));
        assert_int_equal(e->value.data.uint32, 3);
        assert_non_null(e = find(ad->array, ad->size, PMIX_APP_ARGV));
        assert_string_equal(e->value.data.string, "./b -v");
        assert_non_null(ad = app_data(&v, 0));
        assert_non_null(e = find(ad->array, ad->size, PMIX_PSET_NAME));
        assert_string_equal(e->value.data.string, "ocean");
        assert_non_null(ad = app_data(&v, 2));
        assert_null(find(ad->array, ad->size, PMIX_PSET_NAME));
        /* node 1 holds ranks 3, 4 (ice) and 5 (no set) */
        assert_non_null(pd = proc_data(&v, 4));
        assert_non_null(e = find(pd->array, pd->size, PMIX_PSET_NAMES));
        assert_int_equal(e->value.type, PMIX_STRING);
        assert_string_equal(e->value.data.string, "ice");
        assert_non_null(pd = proc_data(&v, 5));
        assert_null(find(pd->array, pd->size, PMIX_PSET_NAMES));
        if (all) {
            assert_non_null(pd = proc_data(&v, 0));
            assert_non_null(e = find(pd->array, pd->size, PMIX_PSET_NAMES));
            assert_string_equal(e->value.data.string, "ocean");
        } else {
            assert_null(proc_data(&v, 0));
        }
        px_ivec_free(&v);
    }
}

/* Failures: bad maps are refused; a host callback's failure ends the build
 * and leaves what the array held before. */
static void test_failures(void **state)
{
    (void)state;
    extra x = {.fail_at = 2};
    px_jobmap m = {.nspace = "ns",
                   .nprocs = 4,
                   .nnodes = 2,
                   .node_name = node_name,
                   .describe_all = true,
                   .local_keys = local_keys,
                   .ctx = &x};
    px_ivec v = {0};
    uint32_t one = 1;

    assert_int_equal(px_ivec_load(&v, "before", &one, PMIX_UINT32), PMIX_SUCCESS);
    assert_int_equal(px_jobinfo_build(&m, 2, &v), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_jobinfo_build(&m, 1, &v), PMIX_ERROR);
    assert_int_equal(v.n, 1);
    assert_string_equal(v.v[0].key, "before");
    x.fail_at = PMIX_RANK_UNDEF;
    assert_int_equal(px_jobinfo_build(&m, 1, &v), PMIX_SUCCESS);
    assert_true(v.n > 1);
    m.node_name = NULL;
    assert_int_equal(px_jobinfo_build(&m, 0, &v), PMIX_ERR_BAD_PARAM);
    px_ivec_free(&v);
}

/* A fence's request read from the upcall's info array: the flags, the
 * timeout, a local failure, and the algorithm of the fence's own kind; bad
 * types are ignored. */
static void test_fence_req(void **state)
{
    (void)state;
    pmix_info_t info[6];
    px_fence_req r;
    bool yes = true;
    int secs = 5, neg = -1;
    pmix_status_t failed = PMIX_ERR_PROC_TERM_WO_SYNC;

    px_fence_req_read(NULL, 0, &r);
    assert_false(r.collect);
    assert_true(r.timeout == 0);
    assert_int_equal(r.local_status, PMIX_SUCCESS);
    assert_null(r.algo);

    PMIx_Info_load(&info[0], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    PMIx_Info_load(&info[1], PMIX_TIMEOUT, &secs, PMIX_INT);
    PMIx_Info_load(&info[2], "pmixlab.barrier.algo", "tree", PMIX_STRING);
    PMIx_Info_load(&info[3], "pmixlab.fence.algo", "ring", PMIX_STRING);
    PMIx_Info_load(&info[4], PMIX_LOCAL_COLLECTIVE_STATUS, &failed, PMIX_STATUS);
    PMIx_Info_load(&info[5], "other", "x", PMIX_STRING);
    px_fence_req_read(info, 6, &r);
    assert_true(r.collect);
    assert_true(r.timeout == 5);
    assert_int_equal(r.local_status, PMIX_ERR_PROC_TERM_WO_SYNC);
    assert_string_equal(r.algo, "ring");
    px_fence_req_read(info + 1, 5, &r); /* a barrier: its own key */
    assert_false(r.collect);
    assert_string_equal(r.algo, "tree");
    for (int i = 0; i < 6; i++)
        PMIx_Info_destruct(&info[i]);

    /* wrong types: ignored (a non-bool PMIX_COLLECT_DATA is present: true) */
    PMIx_Info_load(&info[0], PMIX_COLLECT_DATA, &secs, PMIX_INT);
    PMIx_Info_load(&info[1], PMIX_TIMEOUT, &neg, PMIX_INT);
    PMIx_Info_load(&info[2], PMIX_LOCAL_COLLECTIVE_STATUS, &secs, PMIX_INT);
    PMIx_Info_load(&info[3], "pmixlab.fence.algo", &secs, PMIX_INT);
    px_fence_req_read(info, 4, &r);
    assert_true(r.collect);
    assert_true(r.timeout == 0);
    assert_int_equal(r.local_status, PMIX_SUCCESS);
    assert_null(r.algo);
    for (int i = 0; i < 4; i++)
        PMIx_Info_destruct(&info[i]);
}

/* Participant sets: the same set whatever its order and repeats, the
 * whole job however it is named, different sets on the same nodes apart;
 * members are the nodes that host a participant. */
static void test_fence_sets(void **state)
{
    (void)state;
    const uint32_t rank_node[] = {0, 1, 0, 1, 3}; /* node 2 hosts nobody */
    px_jobmap m = {.nspace = "ns", .nprocs = 5, .nnodes = 4, .rank_node = rank_node};
    pmix_proc_t a[3], b[3], all[5];
    px_fence_set s, t;

    for (pmix_rank_t r = 0; r < 5; r++)
        PMIx_Load_procid(&all[r], "ns", 4 - r);
    PMIx_Load_procid(&a[0], "ns", 0);
    PMIx_Load_procid(&a[1], "ns", 3);
    PMIx_Load_procid(&a[2], "ns", 0);
    PMIx_Load_procid(&b[0], "ns", 3);
    PMIx_Load_procid(&b[1], "ns", 0);
    assert_int_equal(px_fence_set_make(&m, a, 3, &s), PMIX_SUCCESS);
    assert_int_equal(px_fence_set_make(&m, b, 2, &t), PMIX_SUCCESS);
    assert_true(s.id == t.id && !s.all);
    assert_int_equal(s.nmembers, 2);
    assert_int_equal(s.members[0], 0);
    assert_int_equal(s.members[1], 1);
    px_fence_set_fini(&t);
    /* ranks 1 and 2: the same nodes, another set */
    PMIx_Load_procid(&b[0], "ns", 1);
    PMIx_Load_procid(&b[1], "ns", 2);
    assert_int_equal(px_fence_set_make(&m, b, 2, &t), PMIX_SUCCESS);
    assert_true(s.id != t.id);
    assert_int_equal(t.nmembers, 2);
    px_fence_set_fini(&s);
    px_fence_set_fini(&t);

    /* the whole job: no procs, a wildcard, every rank */
    assert_int_equal(px_fence_set_make(&m, NULL, 0, &s), PMIX_SUCCESS);
    assert_true(s.all);
    assert_true(s.id == px_fence_set_all_id("ns"));
    assert_int_equal(s.nmembers, 3); /* nodes 0, 1 and 3 */
    assert_int_equal(s.members[2], 3);
    px_fence_set_fini(&s);
    PMIx_Load_procid(&b[0], "ns", PMIX_RANK_WILDCARD);
    assert_int_equal(px_fence_set_make(&m, b, 1, &s), PMIX_SUCCESS);
    assert_true(s.all && s.id == px_fence_set_all_id("ns"));
    px_fence_set_fini(&s);
    assert_int_equal(px_fence_set_make(&m, all, 5, &s), PMIX_SUCCESS);
    assert_true(s.all && s.id == px_fence_set_all_id("ns"));
    px_fence_set_fini(&s);
    assert_true(px_fence_set_all_id("ns") != px_fence_set_all_id("other"));

    /* blocks of 2 over 4 nodes, 5 ranks: the whole job is nodes 0 to 2 */
    px_jobmap blk = {.nspace = "ns", .nprocs = 5, .nnodes = 4, .ppn = 2};
    assert_int_equal(px_fence_set_make(&blk, NULL, 0, &s), PMIX_SUCCESS);
    assert_null(s.members);
    assert_int_equal(s.nmembers, 3);
    assert_int_equal(px_fence_set_make(&blk, a, 2, &t), PMIX_SUCCESS); /* ranks 0, 3 */
    assert_int_equal(t.nmembers, 2);
    assert_int_equal(t.members[1], 1);
    px_fence_set_fini(&t);

    /* refused */
    PMIx_Load_procid(&b[0], "other", 0);
    assert_int_equal(px_fence_set_make(&m, b, 1, &s), PMIX_ERR_NOT_SUPPORTED);
    PMIx_Load_procid(&b[0], "ns", 5);
    assert_int_equal(px_fence_set_make(&m, b, 1, &s), PMIX_ERR_BAD_PARAM);
    assert_null(s.members);
}

/* Sets over several jobs (a spawned namespace beside the first): one
 * namespace keeps its own job's set; several make a set of their own,
 * the same whatever the order and whether a job is named by its wildcard
 * or by every rank, whose members are the nodes of any participant. */
static void test_fence_sets_jobs(void **state)
{
    (void)state;
    const uint32_t n1[] = {0, 1, 0, 1}, n2[] = {2, 3}; /* the child runs on nodes 2, 3 */
    px_jobmap m = {.nspace = "ns", .nprocs = 4, .nnodes = 4, .rank_node = n1};
    px_jobmap c = {.nspace = "ns.s1", .nprocs = 2, .nnodes = 4, .rank_node = n2};
    const px_jobmap *jobs[] = {&m, &c};
    pmix_proc_t p[3];
    px_fence_set s, t;

    PMIx_Load_procid(&p[0], "ns.s1", PMIX_RANK_WILDCARD);
    assert_int_equal(px_fence_set_make_jobs(jobs, 2, p, 1, &s), PMIX_SUCCESS);
    assert_true(s.all && s.id == px_fence_set_all_id("ns.s1"));
    assert_int_equal(s.nmembers, 2);
    assert_int_equal(s.members[0], 2);
    px_fence_set_fini(&s);
    assert_int_equal(px_fence_set_make_jobs(jobs, 2, NULL, 0, &s), PMIX_SUCCESS);
    assert_true(s.id == px_fence_set_all_id("ns")); /* no procs: the first job */
    px_fence_set_fini(&s);

    /* parent rank 1 (node 1) and the whole child */
    PMIx_Load_procid(&p[0], "ns", 1);
    PMIx_Load_procid(&p[1], "ns.s1", PMIX_RANK_WILDCARD);
    assert_int_equal(px_fence_set_make_jobs(jobs, 2, p, 2, &s), PMIX_SUCCESS);
    assert_false(s.all);
    assert_int_equal(s.nmembers, 3);
    assert_int_equal(s.members[0], 1);
    assert_int_equal(s.members[2], 3);
    PMIx_Load_procid(&p[0], "ns.s1", 1);
    PMIx_Load_procid(&p[1], "ns", 1);
    PMIx_Load_procid(&p[2], "ns.s1", 0);
    assert_int_equal(px_fence_set_make_jobs(jobs, 2, p, 3, &t), PMIX_SUCCESS);
    assert_true(s.id == t.id);
    px_fence_set_fini(&t);
    /* another parent rank: another set */
    PMIx_Load_procid(&p[1], "ns", 0);
    assert_int_equal(px_fence_set_make_jobs(jobs, 2, p, 3, &t), PMIX_SUCCESS);
    assert_true(s.id != t.id);
    assert_true(t.id != px_fence_set_all_id("ns") && t.id != px_fence_set_all_id("ns.s1"));
    px_fence_set_fini(&s);
    px_fence_set_fini(&t);

    /* refused: an unknown namespace, a rank outside its job */
    PMIx_Load_procid(&p[0], "other", 0);
    assert_int_equal(px_fence_set_make_jobs(jobs, 2, p, 2, &s), PMIX_ERR_NOT_SUPPORTED);
    assert_int_equal(px_fence_set_make_jobs(jobs, 2, p, 1, &s), PMIX_ERR_NOT_SUPPORTED);
    PMIx_Load_procid(&p[0], "ns.s1", 2);
    assert_int_equal(px_fence_set_make_jobs(jobs, 2, p, 2, &s), PMIX_ERR_BAD_PARAM);
    assert_null(s.members);
}

/* The direct modex requests a node waits on: answered once, with the
 * data or the error alone; a lost node fails its own requests only; a late
 * or unknown answer is released; a cancelled one never calls back. */
typedef struct dmx_seen {
    int calls;
    pmix_status_t status;
    size_t len;
    int released;
} dmx_seen;

static void dmx_cb(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                   pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    dmx_seen *s = cbdata;
    s->calls++;
    s->status = status;
    s->len = data != NULL ? ndata : 0;
    if (release_fn != NULL)
        release_fn(release_cbdata);
}

static void count_release(void *arg)
{
    ((dmx_seen *)arg)->released++;
}

static void test_dmx_table(void **state)
{
    (void)state;
    px_dmx_table t = {0};
    dmx_seen a = {0}, b = {0}, c = {0}, d = {0}, rel = {0};
    char bytes[8] = "record";

    uint32_t ia = px_dmx_add(&t, 1, dmx_cb, &a), ib = px_dmx_add(&t, 2, dmx_cb, &b);
    uint32_t ic = px_dmx_add(&t, 1, dmx_cb, &c), id = px_dmx_add(&t, 3, dmx_cb, &d);
    assert_true(ia != 0 && ib != 0 && ic != 0 && id != 0 && ia != ib && ib != ic);

    assert_true(px_dmx_answer(&t, ib, PMIX_SUCCESS, bytes, 6, count_release, &rel));
    assert_int_equal(b.calls, 1);
    assert_int_equal(b.len, 6);
    assert_int_equal(rel.released, 1); /* by the callback */
    assert_false(px_dmx_answer(&t, ib, PMIX_SUCCESS, bytes, 6, count_release, &rel));
    assert_int_equal(b.calls, 1);
    assert_int_equal(rel.released, 2); /* a late answer: released here */

    px_dmx_node_lost(&t, 1); /* a and c */
    assert_int_equal(a.calls, 1);
    assert_int_equal(a.status, PMIX_ERR_UNREACH);
    assert_int_equal(c.calls, 1);
    assert_int_equal(d.calls, 0);

    assert_true(px_dmx_answer(&t, id, PMIX_ERR_NOT_FOUND, bytes, 6, count_release, &rel));
    assert_int_equal(d.status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(d.len, 0); /* an error carries no data */
    assert_int_equal(rel.released, 3);

    dmx_seen e = {0};
    uint32_t ie = px_dmx_add(&t, 4, dmx_cb, &e);
    px_dmx_cancel(&t, ie);
    assert_false(px_dmx_answer(&t, ie, PMIX_SUCCESS, NULL, 0, NULL, NULL));
    assert_int_equal(e.calls, 0);
    (void)px_dmx_add(&t, 5, dmx_cb, &e);
    px_dmx_fini(&t); /* forgets without calling back */
    assert_int_equal(e.calls, 0);
    assert_null(t.head);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_all),  cmocka_unit_test(test_map_local),
        cmocka_unit_test(test_failures),   cmocka_unit_test(test_fence_req),
        cmocka_unit_test(test_fence_sets), cmocka_unit_test(test_fence_sets_jobs),
        cmocka_unit_test(test_dmx_table),  cmocka_unit_test(test_psets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
