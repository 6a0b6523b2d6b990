/*
 * test_group.c - PMIx groups end to end: client and server engines, and
 * the in-process world as host (inproc.c), over one node and several.
 *
 * The job: NODES x PPN processes of namespace "job", ranks PPN*node ..
 * PPN*node+PPN-1 on node `node`. Each test starts its own world and ends
 * it; the world's teardown frees everything the engines still hold.
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

#define MAXP 16

/* A process of the test, with what its group callbacks and events
 * brought. */
typedef struct gproc {
    px_client *c;
    pmix_proc_t self;
    int done;             /* group callbacks so far */
    pmix_status_t status; /* the last one's */
    pmix_proc_t members[MAXP];
    size_t nmembers;
    bool has_ctxid;
    size_t ctxid;
    size_t nresults;
    int events[8];        /* by event, see ev_index */
    pmix_proc_t ev_about; /* the last event's PMIX_EVENT_AFFECTED_PROC */
    pmix_proc_t ev_source;
} gproc;

typedef struct job {
    inproc_world *w;
    px_server *srv[4];
    int nodes, ppn;
    gproc p[MAXP];
} job;

static const pmix_status_t ev_codes[] = {
    PMIX_GROUP_INVITED,
    PMIX_GROUP_INVITE_ACCEPTED,
    PMIX_GROUP_INVITE_DECLINED,
    PMIX_GROUP_INVITE_FAILED,
    PMIX_GROUP_LEFT,
    PMIX_GROUP_MEMBER_FAILED,
    PMIX_GROUP_CONSTRUCT_COMPLETE,
};
#define NCODES (sizeof(ev_codes) / sizeof(ev_codes[0]))

static int ev_index(pmix_status_t st)
{
    for (size_t i = 0; i < NCODES; i++)
        if (ev_codes[i] == st)
            return (int)i;
    return 7;
}

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    const pmix_info_t *o = px_info_find(info, ninfo, PMIX_EVENT_RETURN_OBJECT);
    const pmix_info_t *a = px_info_find(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
    gproc *p = o != NULL ? o->value.data.ptr : NULL;

    assert_non_null(p);
    p->events[ev_index(status)]++;
    p->ev_source = *source;
    if (a != NULL && a->value.type == PMIX_PROC)
        p->ev_about = *a->value.data.proc;
    assert_non_null(px_info_string(info, ninfo, PMIX_GROUP_ID)); /* every group event names it */
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void grp_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                   pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    gproc *p = cbdata;

    p->done++;
    p->status = status;
    p->nmembers = 0;
    p->has_ctxid = false;
    p->nresults = ninfo;
    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_GROUP_CONTEXT_ID) == 0) {
            assert_int_equal(info[i].value.type, PMIX_SIZE);
            p->has_ctxid = true;
            p->ctxid = info[i].value.data.size;
        } else if (strcmp(info[i].key, PMIX_GROUP_MEMBERSHIP) == 0) {
            pmix_data_array_t *da = info[i].value.data.darray;
            assert_int_equal(info[i].value.type, PMIX_DATA_ARRAY);
            assert_int_equal(da->type, PMIX_PROC);
            assert_true(da->size <= MAXP);
            memcpy(p->members, da->array, da->size * sizeof(pmix_proc_t));
            p->nmembers = da->size;
        }
    }
    if (release_fn != NULL)
        release_fn(release_cbdata);
}

static void op_cb(pmix_status_t status, void *cbdata)
{
    gproc *p = cbdata;

    p->done++;
    p->status = status;
}

static job *job_start(int nodes, int ppn)
{
    job *j = calloc(1, sizeof(*j));
    uint32_t size = (uint32_t)(nodes * ppn);

    assert_non_null(j);
    assert_true(nodes * ppn <= MAXP && nodes <= 4);
    j->nodes = nodes;
    j->ppn = ppn;
    j->w = inproc_world_create();
    for (int s = 0; s < nodes; s++) {
        pmix_info_t info;
        j->srv[s] = inproc_server(j->w, s);
        assert_non_null(j->srv[s]);
        PMIx_Info_construct(&info);
        PMIx_Info_load(&info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
        assert_int_equal(px_server_register_nspace(j->srv[s], "job", ppn, &info, 1), PMIX_SUCCESS);
        PMIx_Info_destruct(&info);
        for (int r = 0; r < ppn; r++) {
            pmix_proc_t pr;
            PMIx_Load_procid(&pr, "job", (pmix_rank_t)(s * ppn + r));
            assert_int_equal(px_server_register_client(j->srv[s], &pr, 1000, 1000, NULL),
                             PMIX_SUCCESS);
        }
    }
    for (int r = 0; r < nodes * ppn; r++) {
        gproc *p = &j->p[r];
        pmix_info_t obj;
        size_t id;
        PMIx_Load_procid(&p->self, "job", (pmix_rank_t)r);
        p->c = inproc_client(j->w, j->srv[r / ppn], &p->self);
        assert_int_equal(px_client_connect(p->c, NULL, 0, op_cb, p), PMIX_SUCCESS);
        assert_true(inproc_run_until(j->w, &p->done));
        assert_int_equal(p->status, PMIX_SUCCESS);
        p->done = 0;
        PMIx_Info_construct(&obj);
        PMIx_Info_load(&obj, PMIX_EVENT_RETURN_OBJECT, p, PMIX_POINTER);
        assert_int_equal(px_client_register_event(p->c, ev_codes, NCODES, &obj, 1, on_event, &id),
                         PMIX_SUCCESS);
        PMIx_Info_destruct(&obj);
    }
    return j;
}

static void job_end(job *j)
{
    inproc_world_destroy(j->w);
    free(j);
}

/* Rank r puts "card" = 100 + r (global) and commits. */
static void put_cards(job *j, const int *ranks, int n)
{
    for (int i = 0; i < n; i++) {
        int r = ranks[i], v = 100 + r;
        pmix_value_t val;
        PMIX_VALUE_LOAD(&val, &v, PMIX_INT);
        assert_int_equal(px_client_put(j->p[r].c, PMIX_GLOBAL, "card", &val), PMIX_SUCCESS);
        assert_int_equal(px_client_commit(j->p[r].c), PMIX_SUCCESS);
    }
}

/* The card of rank `of` as `reader` holds it, without asking anyone
 * (PMIX_OPTIONAL): what the construct brought. */
static void assert_card(job *j, int reader, int of)
{
    pmix_info_t opt;
    bool yes = true;
    pmix_value_t *v = NULL;

    PMIx_Info_construct(&opt);
    PMIx_Info_load(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    assert_int_equal(px_client_get(j->p[reader].c, &j->p[of].self, "card", &opt, 1, &v, NULL, NULL),
                     PMIX_OPERATION_SUCCEEDED);
    assert_int_equal(v->type, PMIX_INT);
    assert_int_equal(v->data.integer, 100 + of);
    PMIx_Value_free(v, 1);
    PMIx_Info_destruct(&opt);
}

/* Ranks `who` construct `grp` of members `ranks` with `dirs`. */
static void construct(job *j, const char *grp, const int *who, int nwho, const int *ranks, int n,
                      const pmix_info_t *dirs, size_t ndirs)
{
    pmix_proc_t procs[MAXP];

    for (int i = 0; i < n; i++)
        PMIx_Load_procid(&procs[i], "job", (pmix_rank_t)ranks[i]);
    for (int i = 0; i < nwho; i++) {
        gproc *p = &j->p[who[i]];
        p->done = 0;
        assert_int_equal(
            px_client_group_construct(p->c, grp, procs, (size_t)n, dirs, ndirs, grp_cb, p),
            PMIX_SUCCESS);
    }
}

static void wait_all(job *j, const int *who, int nwho, pmix_status_t expect)
{
    for (int i = 0; i < nwho; i++) {
        gproc *p = &j->p[who[i]];
        assert_true(inproc_run_until(j->w, &p->done));
        assert_int_equal(p->done, 1);
        assert_int_equal(p->status, expect);
    }
}

static void destruct(job *j, const char *grp, const int *who, int nwho, pmix_status_t expect)
{
    for (int i = 0; i < nwho; i++) {
        gproc *p = &j->p[who[i]];
        p->done = 0;
        assert_int_equal(px_client_group_destruct(p->c, grp, NULL, 0, op_cb, p), PMIX_SUCCESS);
    }
    wait_all(j, who, nwho, expect);
}

static void assert_members(const gproc *p, const int *ranks, int n)
{
    assert_int_equal(p->nmembers, (size_t)n);
    for (int i = 0; i < n; i++) {
        assert_string_equal(p->members[i].nspace, "job");
        assert_int_equal(p->members[i].rank, (pmix_rank_t)ranks[i]);
    }
}

static pmix_info_t *dirs_make(bool ctxid, int timeout, bool optional, size_t *n)
{
    pmix_info_t *d = PMIx_Info_create(3);
    bool yes = true;

    *n = 0;
    if (ctxid)
        PMIx_Info_load(&d[(*n)++], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    if (timeout > 0)
        PMIx_Info_load(&d[(*n)++], PMIX_TIMEOUT, &timeout, PMIX_INT);
    if (optional)
        PMIx_Info_load(&d[(*n)++], PMIX_GROUP_OPTIONAL, &yes, PMIX_BOOL);
    return d;
}

/* ---- one node ---- */

/* Four processes of one node build a group without the host (no context
 * id asked for), with their data; membership and data are readable, the
 * queries see it, and destruct removes it everywhere. */
static void test_construct_one_node(void **state)
{
    job *j = job_start(1, 4);
    const int all[] = {0, 1, 2, 3}, order[] = {2, 0, 3, 1};
    pmix_proc_t g;
    pmix_value_t *v = NULL;
    pmix_info_t out, qual;

    put_cards(j, all, 4);
    construct(j, "ocean", all, 4, order, 4, NULL, 0);
    wait_all(j, all, 4, PMIX_SUCCESS);
    assert_int_equal(inproc_host_groups(j->w), 0); /* all local, no id: no host */
    for (int r = 0; r < 4; r++) {
        assert_members(&j->p[r], order, 4); /* group ranks as named */
        assert_false(j->p[r].has_ctxid);
        for (int o = 0; o < 4; o++)
            assert_card(j, r, o);
    }
    /* membership through PMIx_Get on the group's name */
    PMIx_Load_procid(&g, "ocean", PMIX_RANK_WILDCARD);
    assert_int_equal(px_client_get(j->p[3].c, &g, PMIX_GROUP_MEMBERSHIP, NULL, 0, &v, NULL, NULL),
                     PMIX_OPERATION_SUCCEEDED);
    assert_int_equal(v->type, PMIX_DATA_ARRAY);
    assert_int_equal(v->data.darray->size, 4);
    assert_int_equal(((pmix_proc_t *)v->data.darray->array)[0].rank, 2);
    PMIx_Value_free(v, 1);
    v = NULL;
    assert_int_equal(px_client_get(j->p[3].c, &g, PMIX_GROUP_CONTEXT_ID, NULL, 0, &v, NULL, NULL),
                     PMIX_ERR_NOT_FOUND);
    assert_int_equal(
        px_client_get(j->p[1].c, &j->p[1].self, PMIX_GROUP_NAMES, NULL, 0, &v, NULL, NULL),
        PMIX_OPERATION_SUCCEEDED);
    assert_int_equal(v->data.darray->size, 1);
    assert_string_equal(((char **)v->data.darray->array)[0], "ocean");
    PMIx_Value_free(v, 1);
    /* queries */
    PMIx_Info_construct(&out);
    assert_int_equal(px_client_group_query(j->p[0].c, PMIX_QUERY_NUM_GROUPS, NULL, 0, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.value.data.size, 1);
    PMIx_Info_destruct(&out);
    PMIx_Info_construct(&out);
    assert_int_equal(px_client_group_query(j->p[0].c, PMIX_QUERY_GROUP_NAMES, NULL, 0, &out),
                     PMIX_SUCCESS);
    assert_string_equal(((char **)out.value.data.darray->array)[0], "ocean");
    PMIx_Info_destruct(&out);
    PMIx_Info_construct(&qual);
    PMIx_Info_load(&qual, PMIX_GROUP_ID, "ocean", PMIX_STRING);
    PMIx_Info_construct(&out);
    assert_int_equal(px_client_group_query(j->p[0].c, PMIX_QUERY_GROUP_MEMBERSHIP, &qual, 1, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.value.data.darray->size, 4);
    PMIx_Info_destruct(&out);
    assert_int_equal(px_client_group_query(j->p[0].c, PMIX_QUERY_GROUP_MEMBERSHIP, NULL, 0, &out),
                     PMIX_ERR_BAD_PARAM);
    PMIx_Info_destruct(&qual);

    /* a name in use cannot be constructed again */
    pmix_proc_t procs[1];
    PMIx_Load_procid(&procs[0], "job", 0);
    assert_int_equal(
        px_client_group_construct(j->p[0].c, "ocean", procs, 1, NULL, 0, grp_cb, &j->p[0]),
        PMIX_ERR_EXISTS);

    destruct(j, "ocean", all, 4, PMIX_SUCCESS);
    v = NULL;
    assert_int_not_equal(
        px_client_get(j->p[3].c, &g, PMIX_GROUP_MEMBERSHIP, NULL, 0, &v, NULL, NULL),
        PMIX_OPERATION_SUCCEEDED);
    PMIx_Info_construct(&out);
    assert_int_equal(px_client_group_query(j->p[0].c, PMIX_QUERY_NUM_GROUPS, NULL, 0, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.value.data.size, 0);
    PMIx_Info_destruct(&out);
    /* the name is free again */
    construct(j, "ocean", all, 4, all, 4, NULL, 0);
    wait_all(j, all, 4, PMIX_SUCCESS);
    destruct(j, "ocean", all, 4, PMIX_SUCCESS);
    job_end(j);
}

/* A context id needs the host even when every member is local. */
static void test_ctxid_one_node(void **state)
{
    job *j = job_start(1, 3);
    const int all[] = {0, 1, 2};
    size_t nd;
    pmix_info_t *d = dirs_make(true, 0, false, &nd);
    size_t first;

    construct(j, "a", all, 3, all, 3, d, nd);
    wait_all(j, all, 3, PMIX_SUCCESS);
    assert_int_equal(inproc_host_groups(j->w), 1); /* one upcall for the node */
    first = j->p[0].ctxid;
    for (int r = 0; r < 3; r++) {
        assert_true(j->p[r].has_ctxid);
        assert_int_equal(j->p[r].ctxid, first);
    }
    assert_int_not_equal(first, 0);
    /* through PMIx_Get too */
    pmix_proc_t g;
    pmix_value_t *v = NULL;
    PMIx_Load_procid(&g, "a", PMIX_RANK_WILDCARD);
    assert_int_equal(px_client_get(j->p[1].c, &g, PMIX_GROUP_CONTEXT_ID, NULL, 0, &v, NULL, NULL),
                     PMIX_OPERATION_SUCCEEDED);
    assert_int_equal(v->type, PMIX_SIZE);
    assert_int_equal(v->data.size, first);
    PMIx_Value_free(v, 1);
    /* a second group gets another id */
    construct(j, "b", all, 3, all, 3, d, nd);
    wait_all(j, all, 3, PMIX_SUCCESS);
    assert_int_not_equal(j->p[0].ctxid, first);
    assert_int_equal(j->p[2].ctxid, j->p[0].ctxid);
    destruct(j, "a", all, 3, PMIX_SUCCESS);
    destruct(j, "b", all, 3, PMIX_SUCCESS);
    assert_int_equal(inproc_host_groups(j->w), 2); /* destructs of one node need no host */
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* ---- several nodes ---- */

/* Three nodes of two: a group of some ranks of every node, with data and
 * a context id, equal on every member; data committed before the
 * construct is readable on every member without asking; another group
 * gets another id. */
static void test_construct_nodes(void **state)
{
    job *j = job_start(3, 2);
    const int members[] = {5, 0, 3, 2}, everyone[] = {0, 1, 2, 3, 4, 5};
    size_t nd;
    pmix_info_t *d = dirs_make(true, 0, false, &nd);
    size_t ids[2];

    put_cards(j, everyone, 6);
    construct(j, "ice", members, 4, members, 4, d, nd);
    wait_all(j, members, 4, PMIX_SUCCESS);
    assert_int_equal(inproc_host_groups(j->w), 3); /* one per node with a member */
    ids[0] = j->p[5].ctxid;
    for (int i = 0; i < 4; i++) {
        gproc *p = &j->p[members[i]];
        assert_members(p, members, 4);
        assert_true(p->has_ctxid);
        assert_int_equal(p->ctxid, ids[0]);
        for (int k = 0; k < 4; k++)
            assert_card(j, members[i], members[k]);
    }
    assert_int_equal(j->p[1].done, 0); /* not a member: not involved */
    /* every process, across the nodes, with a second id */
    construct(j, "all", everyone, 6, everyone, 6, d, nd);
    wait_all(j, everyone, 6, PMIX_SUCCESS);
    ids[1] = j->p[0].ctxid;
    assert_int_not_equal(ids[1], ids[0]);
    for (int r = 0; r < 6; r++)
        assert_int_equal(j->p[r].ctxid, ids[1]);
    /* rank 0 is a member of both */
    pmix_info_t out;
    PMIx_Info_construct(&out);
    assert_int_equal(px_client_group_query(j->p[0].c, PMIX_QUERY_NUM_GROUPS, NULL, 0, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.value.data.size, 2);
    PMIx_Info_destruct(&out);
    destruct(j, "ice", members, 4, PMIX_SUCCESS);
    destruct(j, "all", everyone, 6, PMIX_SUCCESS);
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* Without a context id a group over nodes still goes through the host
 * (the others' data), once per node. */
static void test_construct_nodes_no_ctxid(void **state)
{
    job *j = job_start(2, 2);
    const int all[] = {0, 1, 2, 3};

    put_cards(j, all, 4);
    construct(j, "g", all, 4, all, 4, NULL, 0);
    wait_all(j, all, 4, PMIX_SUCCESS);
    assert_int_equal(inproc_host_groups(j->w), 2);
    for (int r = 0; r < 4; r++) {
        assert_false(j->p[r].has_ctxid);
        assert_members(&j->p[r], all, 4);
        assert_card(j, r, 3 - r);
    }
    destruct(j, "g", all, 4, PMIX_SUCCESS);
    assert_int_equal(inproc_host_groups(j->w), 4);
    job_end(j);
}

/* ---- invitations ---- */

/* Rank 0 invites 1, 2 and 3; 1 and 2 accept, 3 declines. The leader hears
 * each answer, the group is 0, 1, 2 with one context id, and its members
 * hear it is complete; a fence names the group; 2 leaves and the
 * others hear it; the rest destruct it. */
static void test_invite_join_decline_leave(void **state)
{
    job *j = job_start(1, 4);
    const int invited[] = {1, 2, 3}, group[] = {0, 1, 2}, rest[] = {0, 1};
    pmix_proc_t procs[4];
    size_t nd;
    pmix_info_t *d = dirs_make(true, 0, false, &nd);

    /* the leader names itself first: it is a member, group rank 0 */
    procs[0] = j->p[0].self;
    for (int i = 0; i < 3; i++)
        procs[i + 1] = j->p[invited[i]].self;
    put_cards(j, group, 3);
    assert_int_equal(px_client_group_invite(j->p[0].c, "team", procs, 4, d, nd, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    for (int i = 0; i < 3; i++) {
        gproc *p = &j->p[invited[i]];
        int *seen = &p->events[ev_index(PMIX_GROUP_INVITED)];
        assert_true(inproc_run_until(j->w, seen));
        assert_int_equal(p->ev_source.rank, 0); /* the leader invites */
    }
    assert_int_equal(j->p[0].events[ev_index(PMIX_GROUP_INVITED)], 0);
    for (int i = 0; i < 3; i++) {
        gproc *p = &j->p[invited[i]];
        p->done = 0;
        assert_int_equal(
            px_client_group_join(p->c, "team", &j->p[0].self,
                                 invited[i] == 3 ? PMIX_GROUP_DECLINE : PMIX_GROUP_ACCEPT, NULL, 0,
                                 grp_cb, p),
            PMIX_SUCCESS);
    }
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    /* the leader asked for 1, 2 and 3: it hears the group is not whole */
    assert_int_equal(j->p[0].status, PMIX_ERR_PARTIAL_SUCCESS);
    assert_members(&j->p[0], group, 3);
    assert_true(j->p[0].has_ctxid);
    for (int r = 1; r <= 2; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].done));
        assert_int_equal(j->p[r].status, PMIX_SUCCESS);
        assert_members(&j->p[r], group, 3);
        assert_int_equal(j->p[r].ctxid, j->p[0].ctxid);
        for (int o = 0; o < 3; o++)
            assert_card(j, r, o);
    }
    assert_true(inproc_run_until(j->w, &j->p[3].done));
    assert_int_equal(j->p[3].status, PMIX_SUCCESS);
    assert_int_equal(j->p[3].nmembers, 0); /* declined: no group */
    inproc_run_until(j->w, NULL);          /* the leader's handlers run */
    assert_int_equal(j->p[0].events[ev_index(PMIX_GROUP_INVITE_ACCEPTED)], 2);
    assert_int_equal(j->p[0].events[ev_index(PMIX_GROUP_INVITE_DECLINED)], 1);
    assert_int_equal(j->p[0].ev_about.rank, 3);
    /* the members hear that the group is complete, from the leader */
    for (int r = 0; r < 4; r++)
        assert_int_equal(j->p[r].events[ev_index(PMIX_GROUP_CONSTRUCT_COMPLETE)], r <= 2);
    assert_int_equal(j->p[1].ev_source.rank, 0);

    /* a fence over the group's name is a fence of its members */
    pmix_proc_t team;
    PMIx_Load_procid(&team, "team", PMIX_RANK_WILDCARD);
    for (int r = 0; r <= 2; r++) {
        j->p[r].done = 0;
        assert_int_equal(px_client_fence(j->p[r].c, &team, 1, NULL, 0, op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    }
    wait_all(j, group, 3, PMIX_SUCCESS);
    /* its group ranks name members too; one it does not have is refused */
    pmix_proc_t two[2];
    PMIx_Load_procid(&two[0], "team", 0);
    PMIx_Load_procid(&two[1], "team", 1);
    for (int r = 0; r <= 1; r++) {
        j->p[r].done = 0;
        assert_int_equal(px_client_fence(j->p[r].c, two, 2, NULL, 0, op_cb, &j->p[r]),
                         PMIX_SUCCESS);
    }
    wait_all(j, rest, 2, PMIX_SUCCESS);
    PMIx_Load_procid(&two[1], "team", 7);
    j->p[0].done = 0;
    assert_int_equal(px_client_fence(j->p[0].c, two, 2, NULL, 0, op_cb, &j->p[0]), PMIX_SUCCESS);
    wait_all(j, rest, 1, PMIX_ERR_BAD_PARAM);

    /* 2 leaves: 0 and 1 hear it */
    j->p[2].done = 0;
    assert_int_equal(px_client_group_leave(j->p[2].c, "team", NULL, 0, op_cb, &j->p[2]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[2].done));
    assert_int_equal(j->p[2].status, PMIX_SUCCESS);
    for (int r = 0; r <= 1; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].events[ev_index(PMIX_GROUP_LEFT)]));
        assert_int_equal(j->p[r].ev_about.rank, 2);
    }
    assert_int_equal(px_client_group_destruct(j->p[2].c, "team", NULL, 0, op_cb, &j->p[2]),
                     PMIX_ERR_NOT_FOUND); /* no longer a member */
    destruct(j, "team", rest, 2, PMIX_SUCCESS);
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* A leader that does not name itself invites 1 and 2: the group is theirs;
 * the leader hears the outcome and is no member. */
static void test_invite_others(void **state)
{
    job *j = job_start(1, 3);
    const int pair[] = {1, 2};
    pmix_proc_t procs[2];
    pmix_info_t out;

    procs[0] = j->p[1].self;
    procs[1] = j->p[2].self;
    assert_int_equal(px_client_group_invite(j->p[0].c, "pair", procs, 2, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    for (int r = 1; r <= 2; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].events[ev_index(PMIX_GROUP_INVITED)]));
        j->p[r].done = 0;
        assert_int_equal(px_client_group_join(j->p[r].c, "pair", &j->p[0].self, PMIX_GROUP_ACCEPT,
                                              NULL, 0, grp_cb, &j->p[r]),
                         PMIX_SUCCESS);
    }
    wait_all(j, pair, 2, PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_SUCCESS);
    inproc_run_until(j->w, NULL);
    for (int r = 0; r <= 2; r++) {
        assert_members(&j->p[r], pair, 2);
        assert_int_equal(j->p[r].events[ev_index(PMIX_GROUP_CONSTRUCT_COMPLETE)], r != 0);
    }
    PMIx_Info_construct(&out);
    assert_int_equal(px_client_group_query(j->p[0].c, PMIX_QUERY_NUM_GROUPS, NULL, 0, &out),
                     PMIX_SUCCESS);
    assert_int_equal(out.value.data.size, 0); /* the leader is no member */
    PMIx_Info_destruct(&out);
    destruct(j, "pair", pair, 2, PMIX_SUCCESS);
    job_end(j);
}

/* An invited process that never answers: PMIX_TIMEOUT ends the wait, the
 * leader hears PMIX_GROUP_INVITE_FAILED for it, and the group forms
 * without it. */
static void test_invite_timeout(void **state)
{
    job *j = job_start(1, 3);
    const int two[] = {0, 1};
    pmix_proc_t procs[3];
    size_t nd;
    pmix_info_t *d = dirs_make(false, 2, false, &nd);
    double t0 = inproc_now(j->w);

    for (int r = 0; r < 3; r++)
        procs[r] = j->p[r].self;
    assert_int_equal(px_client_group_invite(j->p[0].c, "quiet", procs, 3, d, nd, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[1].events[ev_index(PMIX_GROUP_INVITED)]));
    j->p[1].done = 0;
    assert_int_equal(px_client_group_join(j->p[1].c, "quiet", &j->p[0].self, PMIX_GROUP_ACCEPT,
                                          NULL, 0, grp_cb, &j->p[1]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_true(inproc_now(j->w) - t0 >= 2.0 && inproc_now(j->w) - t0 < 3.0);
    assert_int_equal(j->p[0].status, PMIX_ERR_PARTIAL_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[1].done));
    assert_int_equal(j->p[1].status, PMIX_SUCCESS);
    inproc_run_until(j->w, NULL);
    assert_int_equal(j->p[0].events[ev_index(PMIX_GROUP_INVITE_FAILED)], 1);
    assert_int_equal(j->p[0].ev_about.rank, 2);
    assert_members(&j->p[0], two, 2);
    assert_members(&j->p[1], two, 2);
    /* too late: no invitation waits for it any more */
    j->p[2].done = 0;
    assert_int_equal(px_client_group_join(j->p[2].c, "quiet", &j->p[0].self, PMIX_GROUP_ACCEPT,
                                          NULL, 0, grp_cb, &j->p[2]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[2].done));
    assert_int_equal(j->p[2].status, PMIX_ERR_NOT_FOUND);
    destruct(j, "quiet", two, 2, PMIX_SUCCESS);
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* An invitation over two nodes (ranks 0 and 1 on node 0, 2 and 3 on node
 * 1): the invitation and the answers cross nodes through the host's
 * events; 1 (local) and 2 (remote) accept, 3 (remote) declines. Every
 * member gets the same group, context id and data; the leader hears each
 * answer; then 2 leaves and node 0's members hear it and destruct without
 * it. Last, an accept that reaches node 1 after the leader settled a
 * group without it fails at once. */
static void test_invite_nodes(void **state)
{
    job *j = job_start(2, 2);
    const int group[] = {0, 1, 2}, rest[] = {0, 1}, joiners[] = {1, 2}, alone[] = {0};
    pmix_proc_t procs[4];
    size_t nd;
    pmix_info_t *d = dirs_make(true, 0, false, &nd);

    for (int r = 0; r < 4; r++)
        procs[r] = j->p[r].self;
    put_cards(j, group, 3);
    assert_int_equal(px_client_group_invite(j->p[0].c, "wide", procs, 4, d, nd, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    for (int r = 1; r < 4; r++) {
        gproc *p = &j->p[r];
        assert_true(inproc_run_until(j->w, &p->events[ev_index(PMIX_GROUP_INVITED)]));
        assert_int_equal(p->ev_source.rank, 0);
        p->done = 0;
        assert_int_equal(px_client_group_join(p->c, "wide", &j->p[0].self,
                                              r == 3 ? PMIX_GROUP_DECLINE : PMIX_GROUP_ACCEPT, NULL,
                                              0, grp_cb, p),
                         PMIX_SUCCESS);
    }
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_PARTIAL_SUCCESS);
    assert_members(&j->p[0], group, 3);
    assert_true(j->p[0].has_ctxid);
    wait_all(j, joiners, 2, PMIX_SUCCESS);
    for (int i = 0; i < 2; i++) {
        int r = joiners[i];
        assert_members(&j->p[r], group, 3);
        assert_true(j->p[r].has_ctxid);
        assert_int_equal(j->p[r].ctxid, j->p[0].ctxid);
        for (int o = 0; o < 3; o++)
            assert_card(j, r, o);
    }
    assert_true(inproc_run_until(j->w, &j->p[3].done));
    assert_int_equal(j->p[3].status, PMIX_SUCCESS);
    assert_int_equal(j->p[3].nmembers, 0);
    inproc_run_until(j->w, NULL);
    assert_int_equal(j->p[0].events[ev_index(PMIX_GROUP_INVITE_ACCEPTED)], 2);
    assert_int_equal(j->p[0].events[ev_index(PMIX_GROUP_INVITE_DECLINED)], 1);
    for (int r = 0; r < 4; r++)
        assert_int_equal(j->p[r].events[ev_index(PMIX_GROUP_CONSTRUCT_COMPLETE)], r <= 2);
    /* 2 leaves: the members of node 0 hear it, and their destruct needs
     * no more of it */
    j->p[2].done = 0;
    assert_int_equal(px_client_group_leave(j->p[2].c, "wide", NULL, 0, op_cb, &j->p[2]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[2].done));
    assert_int_equal(j->p[2].status, PMIX_SUCCESS);
    for (int r = 0; r <= 1; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].events[ev_index(PMIX_GROUP_LEFT)]));
        assert_int_equal(j->p[r].ev_about.rank, 2);
    }
    destruct(j, "wide", rest, 2, PMIX_SUCCESS);
    PMIx_Info_free(d, 3);

    /* 3 answers after the leader's 2 s: the group is the leader alone, and
     * 3's late accept fails at once */
    d = dirs_make(false, 2, false, &nd);
    procs[1] = j->p[3].self;
    j->p[0].done = 0;
    j->p[3].events[ev_index(PMIX_GROUP_INVITED)] = 0;
    assert_int_equal(px_client_group_invite(j->p[0].c, "late", procs, 2, d, nd, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[3].events[ev_index(PMIX_GROUP_INVITED)]));
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_PARTIAL_SUCCESS);
    assert_members(&j->p[0], alone, 1);
    inproc_run_until(j->w, NULL);
    j->p[3].done = 0;
    assert_int_equal(px_client_group_join(j->p[3].c, "late", &j->p[0].self, PMIX_GROUP_ACCEPT, NULL,
                                          0, grp_cb, &j->p[3]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[3].done));
    assert_int_equal(j->p[3].status, PMIX_ERR_NOT_FOUND);
    destruct(j, "late", alone, 1, PMIX_SUCCESS);
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* A member leaves before its group is known on every node: the host
 * answers node 1 first (node 0's answer is held, as a loaded daemon's
 * would be), so rank 3 leaves and its PMIX_GROUP_LEFT reaches node 0
 * while node 0's construct is still the host's. Node 0 must not keep 3
 * when its construct completes: the others' destruct then names the same
 * members on both nodes ({0, 1, 2}) and completes (pmixrun's
 * invite --leave hung in the destruct when node 0 kept 3). */
static void test_leave_before_known(void **state)
{
    job *j = job_start(2, 2);
    const int all[] = {0, 1, 2, 3}, node1[] = {2, 3}, rest[] = {0, 1, 2};
    pmix_proc_t procs[4];
    size_t nd;
    pmix_info_t *d = dirs_make(true, 0, false, &nd);

    for (int r = 0; r < 4; r++)
        procs[r] = j->p[r].self;
    inproc_hold_groups(j->w, j->srv[0], true);
    assert_int_equal(px_client_group_invite(j->p[0].c, "early", procs, 4, d, nd, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    for (int r = 1; r < 4; r++) {
        gproc *p = &j->p[r];
        assert_true(inproc_run_until(j->w, &p->events[ev_index(PMIX_GROUP_INVITED)]));
        p->done = 0;
        assert_int_equal(px_client_group_join(p->c, "early", &j->p[0].self, PMIX_GROUP_ACCEPT, NULL,
                                              0, grp_cb, p),
                         PMIX_SUCCESS);
    }
    wait_all(j, node1, 2, PMIX_SUCCESS);
    assert_members(&j->p[3], all, 4);
    j->p[3].done = 0;
    assert_int_equal(px_client_group_leave(j->p[3].c, "early", NULL, 0, op_cb, &j->p[3]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[3].done));
    assert_int_equal(j->p[3].status, PMIX_SUCCESS);
    for (int r = 0; r <= 2; r++) {
        assert_true(inproc_run_until(j->w, &j->p[r].events[ev_index(PMIX_GROUP_LEFT)]));
        assert_int_equal(j->p[r].ev_about.rank, 3);
    }
    assert_int_equal(j->p[0].done, 0); /* node 0's group is not made yet */
    assert_int_equal(j->p[1].done, 0);
    inproc_hold_groups(j->w, j->srv[0], false);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[1].done));
    assert_int_equal(j->p[1].status, PMIX_SUCCESS);
    /* the group was made of the four: 3 left it afterwards */
    assert_members(&j->p[0], all, 4);
    assert_members(&j->p[1], all, 4);
    assert_int_equal(j->p[1].ctxid, j->p[3].ctxid);
    destruct(j, "early", rest, 3, PMIX_SUCCESS);
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* A process speaks for itself only: rank 3 sends PMIX_GROUP_INVITE_ACCEPTED
 * naming rank 2 as its source to the leader on the other node. The
 * servers take it as 3's own word, so 2's real decline still counts and
 * the group is {0, 1, 3}. */
static void test_forged_answer(void **state)
{
    job *j = job_start(2, 2);
    const int group[] = {0, 1, 3};
    pmix_proc_t procs[4];
    size_t nd;
    pmix_info_t *d = dirs_make(false, 0, false, &nd);
    pmix_info_t ev[2];
    pmix_data_array_t to = {.type = PMIX_PROC, .size = 1, .array = &j->p[0].self};

    for (int r = 0; r < 4; r++)
        procs[r] = j->p[r].self;
    assert_int_equal(px_client_group_invite(j->p[0].c, "forged", procs, 4, d, nd, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    for (int r = 1; r < 4; r++)
        assert_true(inproc_run_until(j->w, &j->p[r].events[ev_index(PMIX_GROUP_INVITED)]));
    PMIx_Info_construct(&ev[0]);
    PMIx_Info_construct(&ev[1]);
    PMIx_Info_load(&ev[0], PMIX_GROUP_ID, "forged", PMIX_STRING);
    PMIx_Info_load(&ev[1], PMIX_EVENT_CUSTOM_RANGE, &to, PMIX_DATA_ARRAY);
    j->p[3].done = 0;
    pmix_status_t rc = px_client_notify(j->p[3].c, PMIX_GROUP_INVITE_ACCEPTED, &j->p[2].self,
                                        PMIX_RANGE_CUSTOM, ev, 2, op_cb, &j->p[3]);
    assert_true(rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED);
    inproc_run_until(j->w, NULL);
    PMIx_Info_destruct(&ev[0]);
    PMIx_Info_destruct(&ev[1]);
    for (int r = 1; r < 4; r++) {
        gproc *p = &j->p[r];
        p->done = 0;
        assert_int_equal(px_client_group_join(p->c, "forged", &j->p[0].self,
                                              r == 2 ? PMIX_GROUP_DECLINE : PMIX_GROUP_ACCEPT, NULL,
                                              0, grp_cb, p),
                         PMIX_SUCCESS);
        inproc_run_until(j->w, NULL);
    }
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_PARTIAL_SUCCESS);
    assert_members(&j->p[0], group, 3);
    assert_int_equal(j->p[0].events[ev_index(PMIX_GROUP_INVITE_DECLINED)], 1);
    destruct(j, "forged", group, 3, PMIX_SUCCESS);
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* ---- failures ---- */

/* A member on another node dies while the others wait in the construct:
 * every survivor fails with PMIX_GROUP_MEMBER_FAILED, at once (no timeout
 * is given: nothing else would end the wait). */
static void test_member_dies_remote(void **state)
{
    job *j = job_start(2, 2);
    const int all[] = {0, 1, 2, 3}, waiting[] = {0, 1, 2};

    construct(j, "doomed", waiting, 3, all, 4, NULL, 0);
    inproc_run_until(j->w, NULL); /* node 0 has handed its part to the host */
    assert_int_equal(inproc_host_groups(j->w), 1);
    inproc_kill_client(j->w, j->p[3].c);
    wait_all(j, waiting, 3, PMIX_GROUP_MEMBER_FAILED);
    assert_true(inproc_now(j->w) < 1.0);
    assert_true(inproc_group_failures(j->w) >= 1); /* node 1 told the host */
    job_end(j);
}

/* A local member dies: its node's members fail, and the host fails the
 * other node's. */
static void test_member_dies_local(void **state)
{
    job *j = job_start(2, 2);
    const int all[] = {0, 1, 2, 3}, waiting[] = {0, 2, 3};

    construct(j, "doomed", waiting, 3, all, 4, NULL, 0);
    inproc_run_until(j->w, NULL);
    inproc_kill_client(j->w, j->p[1].c);
    wait_all(j, waiting, 3, PMIX_GROUP_MEMBER_FAILED);
    assert_true(inproc_now(j->w) < 1.0);
    job_end(j);
}

/* A member already dead when the construct starts: refused at once. */
static void test_member_dead_before(void **state)
{
    job *j = job_start(1, 3);
    const int all[] = {0, 1, 2}, callers[] = {0};

    inproc_kill_client(j->w, j->p[2].c);
    inproc_run_until(j->w, NULL);
    construct(j, "late", callers, 1, all, 3, NULL, 0);
    wait_all(j, callers, 1, PMIX_GROUP_MEMBER_FAILED);
    job_end(j);
}

/* With PMIX_GROUP_OPTIONAL the group forms without a member that died,
 * and says so (PMIX_ERR_PARTIAL_SUCCESS); with
 * PMIX_GROUP_NOTIFY_TERMINATION the others hear of the death. */
static void test_optional_member_dies(void **state)
{
    job *j = job_start(1, 4);
    const int all[] = {0, 1, 2, 3}, waiting[] = {0, 1, 2}, left[] = {0, 1, 2};
    size_t nd;
    pmix_info_t *d = dirs_make(false, 0, true, &nd);
    bool yes = true;

    PMIx_Info_load(&d[nd++], PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
    put_cards(j, waiting, 3);
    construct(j, "lifeboat", waiting, 3, all, 4, d, nd);
    inproc_run_until(j->w, NULL);
    inproc_kill_client(j->w, j->p[3].c);
    wait_all(j, waiting, 3, PMIX_ERR_PARTIAL_SUCCESS);
    inproc_run_until(j->w, NULL); /* the handlers run */
    for (int i = 0; i < 3; i++) {
        assert_members(&j->p[i], left, 3);
        assert_int_equal(j->p[i].events[ev_index(PMIX_GROUP_MEMBER_FAILED)], 1);
        assert_int_equal(j->p[i].ev_about.rank, 3);
        assert_card(j, i, 2 - i);
    }
    destruct(j, "lifeboat", waiting, 3, PMIX_SUCCESS);
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* PMIX_GROUP_OPTIONAL over two nodes: rank 3 dies on node 1 while rank 2
 * waits there; node 1 goes on without it and every survivor, on both
 * nodes, gets the same reduced group. */
static void test_optional_dies_nodes(void **state)
{
    job *j = job_start(2, 2);
    const int all[] = {0, 1, 2, 3}, waiting[] = {0, 1, 2};
    size_t nd;
    pmix_info_t *d = dirs_make(true, 0, true, &nd);

    put_cards(j, waiting, 3);
    construct(j, "raft", waiting, 3, all, 4, d, nd);
    inproc_run_until(j->w, NULL);
    inproc_kill_client(j->w, j->p[3].c);
    wait_all(j, waiting, 3, PMIX_ERR_PARTIAL_SUCCESS);
    for (int i = 0; i < 3; i++) {
        assert_members(&j->p[i], waiting, 3);
        assert_int_equal(j->p[i].ctxid, j->p[0].ctxid);
        assert_card(j, i, 2 - i);
    }
    destruct(j, "raft", waiting, 3, PMIX_SUCCESS);
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* With a leader (PMIX_GROUP_LEADER) and PMIX_GROUP_NOTIFY_TERMINATION,
 * only the leader hears of a member's death; a member that dies after the
 * construct fails the destruct, unless the group asked to be told of
 * deaths: then the others destruct it and hear of the death. */
static void test_notify_leader_and_destruct(void **state)
{
    job *j = job_start(1, 4);
    const int all[] = {0, 1, 2, 3}, waiting[] = {0, 1, 2}, two[] = {0, 1};
    bool yes = true;
    size_t nd;
    pmix_info_t *d = dirs_make(false, 0, true, &nd);

    PMIx_Info_load(&d[nd++], PMIX_GROUP_NOTIFY_TERMINATION, &yes, PMIX_BOOL);
    /* rank 0 says it leads */
    pmix_info_t lead[3];
    memset(lead, 0, sizeof(lead));
    PMIx_Info_xfer(&lead[0], &d[0]);
    PMIx_Info_xfer(&lead[1], &d[1]);
    PMIx_Info_load(&lead[2], PMIX_GROUP_LEADER, &yes, PMIX_BOOL);
    construct(j, "led", waiting, 1, all, 4, lead, 3);
    construct(j, "led", waiting + 1, 2, all, 4, d, nd);
    inproc_run_until(j->w, NULL);
    inproc_kill_client(j->w, j->p[3].c);
    wait_all(j, waiting, 3, PMIX_ERR_PARTIAL_SUCCESS);
    inproc_run_until(j->w, NULL);
    assert_int_equal(j->p[0].events[ev_index(PMIX_GROUP_MEMBER_FAILED)], 1);
    assert_int_equal(j->p[1].events[ev_index(PMIX_GROUP_MEMBER_FAILED)], 0);
    assert_int_equal(j->p[2].events[ev_index(PMIX_GROUP_MEMBER_FAILED)], 0);
    /* rank 2 dies now: the group asked to hear of deaths, so the others
     * hear it, and their destruct does not wait for rank 2 */
    inproc_kill_client(j->w, j->p[2].c);
    inproc_run_until(j->w, NULL);
    assert_int_equal(j->p[1].events[ev_index(PMIX_GROUP_MEMBER_FAILED)], 1);
    assert_int_equal(j->p[1].ev_about.rank, 2);
    destruct(j, "led", two, 2, PMIX_SUCCESS);
    assert_int_equal(inproc_host_groups(j->w), 0); /* its members were all here */
    for (size_t i = 0; i < 3; i++)
        PMIx_Info_destruct(&lead[i]);
    PMIx_Info_free(d, 3);

    /* without notification, a member dead since the construct fails the
     * destruct at once */
    job_end(j);
    j = job_start(1, 3);
    const int trio[] = {0, 1, 2};
    construct(j, "plain", trio, 3, trio, 3, NULL, 0);
    wait_all(j, trio, 3, PMIX_SUCCESS);
    inproc_kill_client(j->w, j->p[2].c);
    inproc_run_until(j->w, NULL);
    destruct(j, "plain", two, 2, PMIX_GROUP_MEMBER_FAILED);
    job_end(j);
}

/* PMIX_TIMEOUT bounds the wait for a member that never comes, on one node
 * and when the other nodes' part is with the host. */
static void test_timeout(void **state)
{
    job *j = job_start(2, 2);
    const int one[] = {0, 1}, waiting[] = {0, 1, 2}, all[] = {0, 1, 2, 3};
    size_t nd;
    pmix_info_t *d = dirs_make(false, 2, false, &nd);
    double t0 = inproc_now(j->w);

    /* node 0 alone, rank 1 never comes */
    construct(j, "slow", one, 1, one, 2, d, nd);
    wait_all(j, one, 1, PMIX_ERR_TIMEOUT);
    assert_true(inproc_now(j->w) - t0 >= 2.0 && inproc_now(j->w) - t0 < 3.0);
    /* over two nodes, rank 3 never comes: node 0 is with the host then */
    t0 = inproc_now(j->w);
    construct(j, "slower", waiting, 3, all, 4, d, nd);
    wait_all(j, waiting, 3, PMIX_ERR_TIMEOUT);
    assert_true(inproc_now(j->w) - t0 >= 2.0 && inproc_now(j->w) - t0 < 3.0);
    /* PMIX_GROUP_OPTIONAL on one node: on with who came, once the time is up */
    PMIx_Info_free(d, 3);
    d = dirs_make(false, 2, true, &nd);
    const int node1[] = {2, 3}, caller[] = {2};
    t0 = inproc_now(j->w);
    construct(j, "partial", caller, 1, node1, 2, d, nd);
    wait_all(j, caller, 1, PMIX_ERR_PARTIAL_SUCCESS);
    assert_true(inproc_now(j->w) - t0 >= 2.0 && inproc_now(j->w) - t0 < 3.0);
    assert_members(&j->p[2], caller, 1);
    PMIx_Info_free(d, 3);
    job_end(j);
}

/* ---- bad input ---- */

static void test_bad_input(void **state)
{
    job *j = job_start(1, 2);
    px_client *c = j->p[0].c;
    pmix_proc_t procs[2], other;
    char longname[PMIX_MAX_NSLEN + 8];

    procs[0] = j->p[0].self;
    procs[1] = j->p[1].self;
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(px_client_group_construct(c, NULL, procs, 2, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_client_group_construct(c, "", procs, 2, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_client_group_construct(c, longname, procs, 2, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_client_group_construct(c, "g", NULL, 0, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_client_group_construct(c, "g", procs, 0, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_client_group_invite(c, "g", NULL, 0, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_ERR_BAD_PARAM);
    assert_int_equal(
        px_client_group_join(c, "g", NULL, PMIX_GROUP_ACCEPT, NULL, 0, grp_cb, &j->p[0]),
        PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_client_group_join(c, "g", &procs[1], 7, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_ERR_BAD_PARAM);
    /* unknown groups */
    assert_int_equal(px_client_group_destruct(c, "nope", NULL, 0, op_cb, &j->p[0]),
                     PMIX_ERR_NOT_FOUND);
    assert_int_equal(px_client_group_leave(c, "nope", NULL, 0, op_cb, &j->p[0]),
                     PMIX_ERR_NOT_FOUND);
    /* what only the server can tell: a caller that is not a member, a rank
     * outside the job, a join with no invitation */
    j->p[0].done = 0;
    assert_int_equal(px_client_group_construct(c, "g", &procs[1], 1, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_BAD_PARAM);
    PMIx_Load_procid(&other, "job", 99);
    procs[1] = other;
    j->p[0].done = 0;
    assert_int_equal(px_client_group_construct(c, "g", procs, 2, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_BAD_PARAM);
    j->p[0].done = 0;
    assert_int_equal(
        px_client_group_join(c, "g", &j->p[1].self, PMIX_GROUP_ACCEPT, NULL, 0, grp_cb, &j->p[0]),
        PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(j->p[0].nresults, 0);
    /* an invitation of a process of a namespace nobody registered: no
     * answer could ever come */
    PMIx_Load_procid(&other, "elsewhere", 0);
    j->p[0].done = 0;
    assert_int_equal(px_client_group_invite(c, "g", &other, 1, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_BAD_PARAM);
    /* a name another group holds */
    procs[1] = j->p[1].self;
    j->p[0].done = j->p[1].done = 0;
    assert_int_equal(
        px_client_group_construct(j->p[1].c, "g", &procs[1], 1, NULL, 0, grp_cb, &j->p[1]),
        PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[1].done)); /* a group of one */
    assert_int_equal(j->p[1].status, PMIX_SUCCESS);
    assert_int_equal(px_client_group_construct(c, "g", procs, 2, NULL, 0, grp_cb, &j->p[0]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(j->w, &j->p[0].done));
    assert_int_equal(j->p[0].status, PMIX_ERR_EXISTS); /* the name is taken */
    job_end(j);
}

/* The host core's rule for context ids: the node's index in the top bits,
 * its count below; the lowest member node makes it. */
static void test_ctxid_rule(void **state)
{
    px_ctxid_gen a = {.node = 0}, b = {.node = 5}, bad = {.node = PX_CTXID_MAX_NODES};
    uint32_t nodes[] = {7, 3, 9};
    uint64_t x = px_ctxid_next(&a), y = px_ctxid_next(&a), z = px_ctxid_next(&b);

    assert_int_not_equal(x, 0);
    assert_int_not_equal(x, y);
    assert_int_not_equal(y, z);
    assert_int_equal(z >> 40, 6);
    assert_int_equal(px_ctxid_next(&bad), 0);
    assert_int_equal(px_ctxid_maker(nodes, 3), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_construct_one_node),
        cmocka_unit_test(test_ctxid_one_node),
        cmocka_unit_test(test_construct_nodes),
        cmocka_unit_test(test_invite_nodes),
        cmocka_unit_test(test_leave_before_known),
        cmocka_unit_test(test_construct_nodes_no_ctxid),
        cmocka_unit_test(test_invite_join_decline_leave),
        cmocka_unit_test(test_invite_others),
        cmocka_unit_test(test_invite_timeout),
        cmocka_unit_test(test_forged_answer),
        cmocka_unit_test(test_member_dies_remote),
        cmocka_unit_test(test_member_dies_local),
        cmocka_unit_test(test_member_dead_before),
        cmocka_unit_test(test_optional_member_dies),
        cmocka_unit_test(test_optional_dies_nodes),
        cmocka_unit_test(test_notify_leader_and_destruct),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_ctxid_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
