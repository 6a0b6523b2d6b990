/*
 * group_rules.c - PMIx groups through the Standard's API, under pmixrun on
 * one node (where the library builds a group without its host as long as
 * no context id is asked for).
 *
 * Modes:
 *   construct  every rank puts a card and commits; all construct a group
 *              of the job with the ranks in reverse order (blocking), then
 *              again non-blocking under another name: the results give the
 *              membership in that order; PMIx_Get of the group's
 *              PMIX_GROUP_MEMBERSHIP agrees; every card is readable with
 *              PMIX_OPTIONAL; the group queries see both groups; both are
 *              destructed (blocking and non-blocking) and gone.
 *   invite     rank 0 invites every rank, itself included (non-blocking);
 *              the others accept from their PMIX_GROUP_INVITED handler
 *              with PMIx_Group_join_nb; everyone ends with the same
 *              membership, rank 0 first. Each gives PMIX_GROUP_LOCAL_CID
 *              (300 + rank) in its invite or join, and every member reads
 *              every member's (no context id: without a qualifier).
 *   decline    rank 0 invites every rank, itself included; odd ranks decline
 *              and even ranks accept from their PMIX_GROUP_INVITED handler.
 *              Rank 0 hears PMIX_GROUP_INVITE_DECLINED for each odd rank
 *              and PMIX_GROUP_INVITE_ACCEPTED for each even one, its invite
 *              ends with PMIX_ERR_PARTIAL_SUCCESS, a decliner's join with
 *              PMIX_SUCCESS at once, and the group is the even ranks in
 *              order (their results and PMIx_Get agree); they destruct it.
 *   leave      every rank constructs a group of the job; the last rank
 *              leaves it (PMIx_Group_leave); every other rank hears
 *              PMIX_GROUP_LEFT naming it within 10 s, and then destructs
 *              the group with the others, which needs every node's server
 *              to have dropped the leaver from it.
 *   grpinfo    group information: each rank gives PMIX_GROUP_LOCAL_CID
 *              (100 + rank) in its directives (the Standard's form) and a
 *              string in PMIX_GROUP_INFO (OpenPMIx's), in a construct with
 *              a context id, then another construct (2000 + rank): every
 *              rank reads every rank's values of each construct with
 *              PMIx_Get qualified by that construct's context id, the
 *              newest without a qualifier, and after both destructs
 *              still; a key nobody gave is not found for a known id.
 *   departed0  (a construct never hangs) rank 0 finalizes and exits after an
 *              aligning fence; the others' construct of everybody, without
 *              PMIX_TIMEOUT, fails within 5 s with PMIX_GROUP_MEMBER_FAILED
 *              (a member that terminates, as the Standard names it), and so
 *              does a second one, at once; a group of the survivors still
 *              forms and is destructed. No final fence (rank 0 is gone).
 *   killed     the last rank kills itself (SIGKILL) 0.5 s after an aligning
 *              fence, while the others construct a group of everybody
 *              without PMIX_TIMEOUT: each survivor's construct fails within
 *              5 s with PMIX_GROUP_MEMBER_FAILED and says "construct failed
 *              as expected" (the job then fails, as for any death).
 *   bad        wrong arguments are refused as the library's rules say: at
 *              once for arguments wrong on their face, through the callback
 *              for an unknown group.
 */
#include "ptest.h"

static pt_waiter done;
static pmix_status_t last_status;
static pmix_proc_t got_members[64];
static size_t got_n;

static void info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    got_n = 0;
    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_GROUP_MEMBERSHIP) == 0 &&
            info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray->size <= 64) {
            got_n = info[i].value.data.darray->size;
            memcpy(got_members, info[i].value.data.darray->array, got_n * sizeof(pmix_proc_t));
        }
    }
    last_status = status;
    if (release_fn != NULL)
        release_fn(release_cbdata);
    pt_waiter_signal(cbdata, status);
}

/* The members in results[]: each rank where expected, `first` first. */
static void check_members(const char *what, const pmix_proc_t *m, size_t n, bool reversed)
{
    if (n != pt.size) {
        pt_fail("%s: %zu members, want %u", what, n, (unsigned)pt.size);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        pmix_rank_t want = reversed ? (pmix_rank_t)(pt.size - 1 - i) : (pmix_rank_t)i;
        if (m[i].rank != want || strcmp(m[i].nspace, pt.me.nspace) != 0)
            pt_fail("%s: member %zu is %s:%u, want rank %u", what, i, m[i].nspace, m[i].rank, want);
    }
}

static const pmix_proc_t *results_members(pmix_info_t *res, size_t n, size_t *nm)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(res[i].key, PMIX_GROUP_MEMBERSHIP) == 0 &&
            res[i].value.type == PMIX_DATA_ARRAY) {
            *nm = res[i].value.data.darray->size;
            return res[i].value.data.darray->array;
        }
    *nm = 0;
    return NULL;
}

static void mode_construct(void)
{
    pmix_proc_t *procs = calloc(pt.size, sizeof(*procs));
    pmix_info_t *res = NULL;
    size_t nres = 0, nm;
    pmix_status_t rc;
    pmix_proc_t g;

    for (uint32_t i = 0; i < pt.size; i++)
        pt_proc(&procs[i], pt.me.nspace, pt.size - 1 - i);
    pt_put_u32(PMIX_GLOBAL, "card", 1000 + pt.me.rank);
    PMIx_Commit();
    pt_phase("PMIx_Group_construct");
    rc = PMIx_Group_construct("rules-a", procs, pt.size, NULL, 0, &res, &nres);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Group_construct: %s", pt_err(rc));
    const pmix_proc_t *m = results_members(res, nres, &nm);
    check_members("construct results", m, nm, true);
    PMIx_Info_free(res, nres);
    /* the group's membership through PMIx_Get */
    pt_proc(&g, "rules-a", PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&g, PMIX_GROUP_MEMBERSHIP, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_DATA_ARRAY)
        pt_fail("PMIx_Get(PMIX_GROUP_MEMBERSHIP): %s", pt_err(rc));
    else
        check_members("PMIx_Get membership", v->data.darray->array, v->data.darray->size, true);
    pt_value_free(v);
    /* everyone's card is here */
    for (uint32_t r = 0; r < pt.size; r++) {
        pmix_proc_t p;
        pmix_info_t opt;
        pt_proc(&p, pt.me.nspace, r);
        pt_info_bool(&opt, PMIX_OPTIONAL, true);
        v = NULL;
        rc = PMIx_Get(&p, "card", &opt, 1, &v);
        if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_UINT32 || v->data.uint32 != 1000 + r)
            pt_fail("card of rank %u after the construct: %s", r, pt_err(rc));
        pt_value_free(v);
        pt_info_free(&opt, 1);
    }
    /* non-blocking, natural order */
    for (uint32_t i = 0; i < pt.size; i++)
        pt_proc(&procs[i], pt.me.nspace, i);
    pt_phase("PMIx_Group_construct_nb");
    rc = PMIx_Group_construct_nb("rules-b", procs, pt.size, NULL, 0, info_cb, &done);
    if (rc != PMIX_SUCCESS || !pt_waiter_wait(&done, 20))
        pt_fail("PMIx_Group_construct_nb: %s / no callback", pt_err(rc));
    else if (last_status != PMIX_SUCCESS)
        pt_fail("PMIx_Group_construct_nb callback: %s", pt_err(last_status));
    else
        check_members("construct_nb results", got_members, got_n, false);
    /* the queries */
    pmix_query_t q;
    memset(&q, 0, sizeof(q));
    char *keys[] = {PMIX_QUERY_NUM_GROUPS, NULL};
    q.keys = keys;
    res = NULL;
    rc = PMIx_Query_info(&q, 1, &res, &nres);
    if (rc != PMIX_SUCCESS || nres != 1 || res[0].value.type != PMIX_SIZE ||
        res[0].value.data.size != 2)
        pt_fail("PMIX_QUERY_NUM_GROUPS: %s", pt_err(rc));
    PMIx_Info_free(res, nres);
    /* destruct both */
    pt_phase("PMIx_Group_destruct");
    rc = PMIx_Group_destruct("rules-a", NULL, 0);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Group_destruct: %s", pt_err(rc));
    pt_phase("PMIx_Group_destruct_nb");
    rc = PMIx_Group_destruct_nb("rules-b", NULL, 0, pt_op_cb, &done);
    if (rc != PMIX_SUCCESS || !pt_waiter_wait_n(&done, 2, 20, false))
        pt_fail("PMIx_Group_destruct_nb: %s / no callback", pt_err(rc));
    else if (done.status != PMIX_SUCCESS)
        pt_fail("PMIx_Group_destruct_nb callback: %s", pt_err(done.status));
    v = NULL;
    pmix_info_t opt;
    pt_info_bool(&opt, PMIX_OPTIONAL, true);
    if (PMIx_Get(&g, PMIX_GROUP_MEMBERSHIP, &opt, 1, &v) == PMIX_SUCCESS)
        pt_fail("the group's membership is still there after destruct");
    pt_info_free(&opt, 1);
    pt_value_free(v);
    free(procs);
}

/* Construct `grp` of the whole job with a context id, giving `lcid` as
 * PMIX_GROUP_LOCAL_CID and `word` in PMIX_GROUP_INFO; returns the id. */
static size_t construct_with_info(const char *grp, size_t lcid, const char *word)
{
    pmix_proc_t all;
    pmix_info_t dirs[3], inner;
    pmix_data_array_t da = {.type = PMIX_INFO, .size = 1, .array = &inner};
    pmix_info_t *res = NULL;
    size_t nres = 0, cid = 0;
    pmix_status_t rc;

    pt_proc(&all, pt.me.nspace, PMIX_RANK_WILDCARD);
    pt_info_bool(&dirs[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, true);
    PMIx_Info_construct(&dirs[1]);
    PMIx_Info_load(&dirs[1], PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
    PMIx_Info_construct(&inner);
    PMIx_Info_load(&inner, "rules.word", word, PMIX_STRING);
    PMIx_Info_construct(&dirs[2]);
    PMIx_Info_load(&dirs[2], PMIX_GROUP_INFO, &da, PMIX_DATA_ARRAY);
    pt_phase(grp);
    rc = PMIx_Group_construct(grp, &all, 1, dirs, 3, &res, &nres);
    if (rc != PMIX_SUCCESS)
        pt_fail("construct %s: %s", grp, pt_err(rc));
    for (size_t i = 0; i < nres; i++)
        if (strcmp(res[i].key, PMIX_GROUP_CONTEXT_ID) == 0 && res[i].value.type == PMIX_SIZE)
            cid = res[i].value.data.size;
    if (rc == PMIX_SUCCESS && cid == 0)
        pt_fail("construct %s: no context id", grp);
    PMIx_Info_free(res, nres);
    pt_info_free(dirs, 3);
    PMIx_Info_destruct(&inner);
    return cid;
}

/* Rank r's `key` (qualified by context id `cid`, or not with 0): a
 * PMIX_SIZE equal to `want`, or a string equal to `word`. */
static void check_ginfo(const char *when, uint32_t r, const char *key, size_t cid, size_t want,
                        const char *word)
{
    pmix_proc_t p;
    pmix_info_t q;
    pmix_value_t *v = NULL;
    pmix_status_t rc;

    pt_proc(&p, pt.me.nspace, r);
    PMIx_Info_construct(&q);
    PMIx_Info_load(&q, PMIX_GROUP_CONTEXT_ID, &cid, PMIX_SIZE);
    PMIx_Info_qualifier(&q);
    rc = PMIx_Get(&p, key, cid != 0 ? &q : NULL, cid != 0 ? 1 : 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL)
        pt_fail("%s: %s of rank %u (cid %zu): %s", when, key, r, cid, pt_err(rc));
    else if (word == NULL && (v->type != PMIX_SIZE || v->data.size != want))
        pt_fail("%s: %s of rank %u (cid %zu) is not %zu", when, key, r, cid, want);
    else if (word != NULL && (v->type != PMIX_STRING || strcmp(v->data.string, word) != 0))
        pt_fail("%s: %s of rank %u (cid %zu) is not %s", when, key, r, cid, word);
    pt_value_free(v);
    PMIx_Info_destruct(&q);
}

static void mode_grpinfo(void)
{
    char word[32];
    size_t cid1, cid2;
    pmix_status_t rc;

    snprintf(word, sizeof(word), "word-%u", pt.me.rank);
    cid1 = construct_with_info("rules-info1", 100 + pt.me.rank, word);
    snprintf(word, sizeof(word), "again-%u", pt.me.rank);
    cid2 = construct_with_info("rules-info2", 2000 + pt.me.rank, word);
    if (cid1 == cid2)
        pt_fail("two groups with one context id %zu", cid1);
    for (int pass = 0; pass < 2; pass++) {
        const char *when = pass == 0 ? "after the constructs" : "after the destructs";
        for (uint32_t r = 0; r < pt.size; r++) {
            char w1[32], w2[32];
            snprintf(w1, sizeof(w1), "word-%u", r);
            snprintf(w2, sizeof(w2), "again-%u", r);
            check_ginfo(when, r, PMIX_GROUP_LOCAL_CID, cid1, 100 + r, NULL);
            check_ginfo(when, r, PMIX_GROUP_LOCAL_CID, cid2, 2000 + r, NULL);
            check_ginfo(when, r, PMIX_GROUP_LOCAL_CID, 0, 2000 + r, NULL);
            check_ginfo(when, r, "rules.word", cid1, 0, w1);
            check_ginfo(when, r, "rules.word", 0, 0, w2);
        }
        /* a key nobody gave, for a context id known here */
        pmix_proc_t p;
        pmix_info_t q;
        pmix_value_t *v = NULL;
        pt_proc(&p, pt.me.nspace, (pt.me.rank + 1) % pt.size);
        PMIx_Info_construct(&q);
        PMIx_Info_load(&q, PMIX_GROUP_CONTEXT_ID, &cid1, PMIX_SIZE);
        PMIx_Info_qualifier(&q);
        if ((rc = PMIx_Get(&p, "rules.nobody", &q, 1, &v)) != PMIX_ERR_NOT_FOUND)
            pt_fail("%s: a key nobody gave: %s", when, pt_err(rc));
        pt_value_free(v);
        PMIx_Info_destruct(&q);
        if (pass == 0) {
            pt_phase("destructs");
            if ((rc = PMIx_Group_destruct("rules-info1", NULL, 0)) != PMIX_SUCCESS ||
                (rc = PMIx_Group_destruct("rules-info2", NULL, 0)) != PMIX_SUCCESS)
                pt_fail("destruct: %s", pt_err(rc));
        }
    }
}

static pt_waiter invited, joined;

static void on_invited(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    const char *grp = NULL;

    for (size_t i = 0; i < ninfo; i++)
        if (strcmp(info[i].key, PMIX_GROUP_ID) == 0 && info[i].value.type == PMIX_STRING)
            grp = info[i].value.data.string;
    if (grp == NULL || strcmp(grp, "rules-team") != 0 || source->rank != 0)
        pt_fail("PMIX_GROUP_INVITED: group %s from rank %u", grp ? grp : "(none)", source->rank);
    else {
        size_t lcid = 300 + pt.me.rank;
        pmix_info_t li;
        PMIx_Info_construct(&li);
        PMIx_Info_load(&li, PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
        if (PMIx_Group_join_nb(grp, source, PMIX_GROUP_ACCEPT, &li, 1, info_cb, &joined) !=
            PMIX_SUCCESS)
            pt_fail("PMIx_Group_join_nb from the handler failed");
        PMIx_Info_destruct(&li);
    }
    pt_waiter_signal(&invited, PMIX_SUCCESS);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void mode_invite(void)
{
    pmix_status_t code = PMIX_GROUP_INVITED;
    pmix_status_t rc;

    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_invited, NULL, NULL);
    if (rc < 0)
        pt_fail("registering for PMIX_GROUP_INVITED: %s", pt_err(rc));
    pt_barrier("handlers registered");
    if (pt.me.rank == 0) {
        /* itself too: the leader is a member only if it names itself */
        pmix_proc_t *procs = calloc(pt.size, sizeof(*procs));
        for (uint32_t i = 0; i < pt.size; i++)
            pt_proc(&procs[i], pt.me.nspace, i);
        size_t lcid = 300;
        pmix_info_t li;
        PMIx_Info_construct(&li);
        PMIx_Info_load(&li, PMIX_GROUP_LOCAL_CID, &lcid, PMIX_SIZE);
        pt_phase("PMIx_Group_invite_nb");
        rc = PMIx_Group_invite_nb("rules-team", procs, pt.size, &li, 1, info_cb, &joined);
        PMIx_Info_destruct(&li);
        free(procs);
        if (rc != PMIX_SUCCESS)
            pt_fail("PMIx_Group_invite_nb: %s", pt_err(rc));
    } else {
        pt_phase("waiting for the invitation");
        if (!pt_waiter_wait(&invited, 20))
            pt_fail("no invitation came");
    }
    pt_phase("waiting for the group");
    if (!pt_waiter_wait(&joined, 20))
        pt_fail("the group did not form");
    else if (last_status != PMIX_SUCCESS)
        pt_fail("the group's callback: %s", pt_err(last_status));
    else
        check_members("invite results", got_members, got_n, false);
    for (uint32_t r = 0; r < pt.size; r++)
        check_ginfo("after the invitation", r, PMIX_GROUP_LOCAL_CID, 0, 300 + r, NULL);
    pt_phase("PMIx_Group_destruct");
    rc = PMIx_Group_destruct("rules-team", NULL, 0);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Group_destruct of the invited group: %s", pt_err(rc));
}

/* A construct of the whole job that must fail because a member left or
 * died: PMIX_GROUP_MEMBER_FAILED within 5 s. */
static bool construct_fails(const char *grp, const char *why)
{
    pmix_proc_t all;
    double t0 = pt_now(), dt;
    pmix_status_t rc;

    pt_proc(&all, pt.me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Group_construct(grp, &all, 1, NULL, 0, NULL, NULL);
    dt = pt_now() - t0;
    if (rc != PMIX_GROUP_MEMBER_FAILED) {
        pt_fail("construct with a member that %s returned %s, expected "
                "PMIX_GROUP_MEMBER_FAILED",
                why, pt_err(rc));
        return false;
    }
    if (dt > 5.0) {
        pt_fail("construct with a member that %s took %.2f s to fail", why, dt);
        return false;
    }
    pt_note("construct failed after %.3f s: %s", dt, pt_err(rc));
    return true;
}

static void mode_departed0(void)
{
    pmix_proc_t procs[64];
    size_t n = 0;
    pmix_status_t rc;

    if (pt.size < 2 || pt.size > 64) {
        pt_note("needs 2 to 64 processes; nothing to check");
        return;
    }
    pt_barrier("aligning fence");
    if (pt.me.rank == 0)
        exit(pt_result()); /* finalize and go */
    for (int round = 0; round < 2; round++) {
        pt_phase(round == 0 ? "construct of everybody after rank 0 left" : "a second construct");
        construct_fails("rules-departed", "finalized and exited");
    }
    for (uint32_t r = 1; r < pt.size; r++)
        pt_proc(&procs[n++], pt.me.nspace, r);
    pt_phase("construct of the survivors");
    if ((rc = PMIx_Group_construct("rules-survivors", procs, n, NULL, 0, NULL, NULL)) !=
        PMIX_SUCCESS)
        pt_fail("construct of every rank but 0 failed: %s", pt_err(rc));
    else if ((rc = PMIx_Group_destruct("rules-survivors", NULL, 0)) != PMIX_SUCCESS)
        pt_fail("destruct of the survivors' group failed: %s", pt_err(rc));
}

static void mode_killed(void)
{
    if (pt.size < 2) {
        pt_note("needs at least 2 processes; nothing to check");
        return;
    }
    pt_barrier("aligning fence");
    if (pt.me.rank == pt.size - 1) {
        pt_sleep(0.5);
        pt_note("killing myself with SIGKILL");
        raise(SIGKILL);
    }
    pt_phase("construct of everybody while the last rank dies");
    if (construct_fails("rules-killed", "was killed"))
        pt_note("construct failed as expected");
}

static pt_waiter answers, left;
static volatile int n_accepted, n_declined, left_ok;

static void on_answer(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    bool odd = source != NULL && source->rank % 2 == 1;

    if (status == PMIX_GROUP_INVITE_ACCEPTED && !odd)
        __sync_fetch_and_add(&n_accepted, 1);
    else if (status == PMIX_GROUP_INVITE_DECLINED && odd)
        __sync_fetch_and_add(&n_declined, 1);
    else
        pt_fail("%s from rank %u", PMIx_Error_string(status), source ? source->rank : 9999);
    pt_waiter_signal(&answers, PMIX_SUCCESS);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void on_invited_decline(size_t id, pmix_status_t status, const pmix_proc_t *source,
                               pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                               size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                               void *cbdata)
{
    pmix_group_opt_t how = pt.me.rank % 2 == 1 ? PMIX_GROUP_DECLINE : PMIX_GROUP_ACCEPT;

    if (PMIx_Group_join_nb("rules-picky", source, how, NULL, 0, info_cb, &joined) != PMIX_SUCCESS)
        pt_fail("PMIx_Group_join_nb from the handler failed");
    pt_waiter_signal(&invited, PMIX_SUCCESS);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void mode_decline(void)
{
    pmix_status_t codes[2] = {PMIX_GROUP_INVITE_ACCEPTED, PMIX_GROUP_INVITE_DECLINED};
    pmix_status_t code = PMIX_GROUP_INVITED, rc;
    uint32_t nodd = pt.size / 2, neven = pt.size - nodd;

    if (pt.me.rank == 0)
        rc = PMIx_Register_event_handler(codes, 2, NULL, 0, on_answer, NULL, NULL);
    else
        rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_invited_decline, NULL, NULL);
    if (rc < 0)
        pt_fail("registering the handlers: %s", pt_err(rc));
    pt_barrier("handlers registered");
    if (pt.me.rank == 0) {
        pmix_proc_t *procs = calloc(pt.size, sizeof(*procs));
        pmix_info_t *res = NULL;
        size_t nres = 0, nm;
        for (uint32_t i = 0; i < pt.size; i++)
            pt_proc(&procs[i], pt.me.nspace, i);
        pt_phase("PMIx_Group_invite");
        rc = PMIx_Group_invite("rules-picky", procs, pt.size, NULL, 0, &res, &nres);
        free(procs);
        if (rc != (nodd > 0 ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_SUCCESS))
            pt_fail("PMIx_Group_invite with %u declines: %s", nodd, pt_err(rc));
        const pmix_proc_t *m = results_members(res, nres, &nm);
        got_n = 0;
        for (size_t i = 0; m != NULL && i < nm && i < 64; i++)
            got_members[got_n++] = m[i];
        PMIx_Info_free(res, nres);
        pt_phase("waiting for every answer's event");
        if (!pt_waiter_wait_n(&answers, (int)(pt.size - 1), 10, false))
            pt_fail("%d of %u answers heard", pt_waiter_count(&answers), pt.size - 1);
        if (n_accepted != (int)neven - 1 || n_declined != (int)nodd)
            pt_fail("heard %d accepts and %d declines, want %u and %u", n_accepted, n_declined,
                    neven - 1, nodd);
    } else {
        pt_phase("waiting for the invitation and the answer's callback");
        if (!pt_waiter_wait(&invited, 20) || !pt_waiter_wait(&joined, 20))
            pt_fail("no invitation or no answer to the join");
        else if (last_status != PMIX_SUCCESS)
            pt_fail("the join's callback: %s", pt_err(last_status));
    }
    if (pt.me.rank % 2 == 0) {
        if (got_n != neven)
            pt_fail("the group has %zu members, want the %u even ranks", got_n, neven);
        for (size_t i = 0; i < got_n && i < neven; i++)
            if (got_members[i].rank != 2 * i)
                pt_fail("member %zu is rank %u, want %zu", i, got_members[i].rank, 2 * i);
        pmix_proc_t g;
        pmix_value_t *v = NULL;
        pt_proc(&g, "rules-picky", PMIX_RANK_WILDCARD);
        rc = PMIx_Get(&g, PMIX_GROUP_MEMBERSHIP, NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_DATA_ARRAY ||
            v->data.darray->size != neven)
            pt_fail("PMIx_Get(PMIX_GROUP_MEMBERSHIP) of the invited group: %s", pt_err(rc));
        pt_value_free(v);
        pt_phase("PMIx_Group_destruct");
        if ((rc = PMIx_Group_destruct("rules-picky", NULL, 0)) != PMIX_SUCCESS)
            pt_fail("PMIx_Group_destruct of the invited group: %s", pt_err(rc));
    } else if (got_n != 0) {
        pt_fail("a decliner's join returned %zu members", got_n);
    }
}

static void on_left(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t *results, size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    const char *grp = NULL;
    const pmix_proc_t *who = NULL;

    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_GROUP_ID) == 0 && info[i].value.type == PMIX_STRING)
            grp = info[i].value.data.string;
        if (strcmp(info[i].key, PMIX_EVENT_AFFECTED_PROC) == 0 && info[i].value.type == PMIX_PROC)
            who = info[i].value.data.proc;
    }
    if (grp != NULL && strcmp(grp, "rules-leave") == 0 && who != NULL && who->rank == pt.size - 1 &&
        source != NULL && source->rank == pt.size - 1)
        left_ok = 1;
    else
        pt_fail("PMIX_GROUP_LEFT: group %s, affected rank %u", grp ? grp : "(none)",
                who ? who->rank : 9999);
    pt_waiter_signal(&left, PMIX_SUCCESS);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void mode_leave(void)
{
    pmix_status_t code = PMIX_GROUP_LEFT, rc;
    pmix_proc_t all;

    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_left, NULL, NULL);
    if (rc < 0)
        pt_fail("registering for PMIX_GROUP_LEFT: %s", pt_err(rc));
    pt_proc(&all, pt.me.nspace, PMIX_RANK_WILDCARD);
    pt_phase("PMIx_Group_construct");
    if ((rc = PMIx_Group_construct("rules-leave", &all, 1, NULL, 0, NULL, NULL)) != PMIX_SUCCESS) {
        pt_fail("PMIx_Group_construct: %s", pt_err(rc));
        return;
    }
    if (pt.me.rank == pt.size - 1) {
        pt_phase("PMIx_Group_leave");
        if ((rc = PMIx_Group_leave("rules-leave", NULL, 0)) != PMIX_SUCCESS)
            pt_fail("PMIx_Group_leave: %s", pt_err(rc));
        return;
    }
    pt_phase("waiting for PMIX_GROUP_LEFT");
    if (!pt_waiter_wait(&left, 10) || !left_ok) {
        pt_fail("no PMIX_GROUP_LEFT for rank %u within 10 s", pt.size - 1);
        return;
    }
    pt_phase("PMIx_Group_destruct without the leaver");
    if ((rc = PMIx_Group_destruct("rules-leave", NULL, 0)) != PMIX_SUCCESS)
        pt_fail("PMIx_Group_destruct after the last rank left: %s", pt_err(rc));
}

static void mode_bad(void)
{
    pmix_proc_t me = pt.me;
    pmix_status_t rc;

    if ((rc = PMIx_Group_construct(NULL, &me, 1, NULL, 0, NULL, NULL)) != PMIX_ERR_BAD_PARAM)
        pt_fail("construct with a NULL name: %s", pt_err(rc));
    if ((rc = PMIx_Group_construct("rules-x", NULL, 0, NULL, 0, NULL, NULL)) != PMIX_ERR_BAD_PARAM)
        pt_fail("construct with no members: %s", pt_err(rc));
    if ((rc = PMIx_Group_destruct("rules-none", NULL, 0)) != PMIX_ERR_NOT_FOUND)
        pt_fail("destruct of an unknown group: %s", pt_err(rc));
    /* with a callback, the refusal comes through it */
    rc = PMIx_Group_destruct_nb("rules-none", NULL, 0, pt_op_cb, &done);
    if (rc != PMIX_SUCCESS)
        pt_fail("destruct_nb of an unknown group returned %s", pt_err(rc));
    else if (!pt_waiter_wait(&done, 10) || done.status != PMIX_ERR_NOT_FOUND)
        pt_fail("destruct_nb of an unknown group: callback %s", pt_err(done.status));
    if ((rc = PMIx_Group_leave("rules-none", NULL, 0)) != PMIX_ERR_NOT_FOUND)
        pt_fail("leave of an unknown group: %s", pt_err(rc));
}

int main(int argc, char **argv)
{
    const char *modes = "construct invite decline leave grpinfo departed0 killed bad";
    if (argc < 2)
        pt_usage(argv[0], modes);
    pt_watchdog(45);
    pt_waiter_init(&done);
    pt_waiter_init(&invited);
    pt_waiter_init(&joined);
    pt_waiter_init(&answers);
    pt_waiter_init(&left);
    const char *m = argv[1];
    pt_start("group_rules", m, NULL, 0);
    if (strcmp(m, "construct") == 0)
        mode_construct();
    else if (strcmp(m, "invite") == 0)
        mode_invite();
    else if (strcmp(m, "grpinfo") == 0)
        mode_grpinfo();
    else if (strcmp(m, "decline") == 0)
        mode_decline();
    else if (strcmp(m, "leave") == 0)
        mode_leave();
    else if (strcmp(m, "bad") == 0)
        mode_bad();
    else if (strcmp(m, "departed0") == 0 || strcmp(m, "killed") == 0) {
        if (m[0] == 'd')
            mode_departed0();
        else
            mode_killed();
        return pt_result(); /* no final fence: a rank is gone */
    } else
        pt_usage(argv[0], modes);
    pt_barrier("final fence");
    return pt_result();
}
