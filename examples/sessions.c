/*
 * sessions - what an MPI library does with PMIx for MPI Sessions: the
 * Standard's "MPI Sessions" use case, step by step.
 *
 *   pmixrun -n 2 --pset ocean sessions : -n 2 --pset ice sessions
 *   sessions [PSET]
 *
 * MPI_Session_init          PMIx_Init, then PMIx_Query_info of
 *                           PMIX_QUERY_NUM_PSETS and PMIX_QUERY_PSET_NAMES
 *                           (MPI_Session_get_num_psets, _get_nth_pset)
 * MPI_Group_from_session_pset
 *                           PMIx_Query_info of PMIX_QUERY_PSET_MEMBERSHIP
 *                           qualified by PMIX_PSET_NAME: the group's
 *                           processes. The set is PSET, else the process's
 *                           own (PMIX_PSET_NAMES), else, as an MPI library
 *                           makes them, mpi://WORLD (the whole namespace)
 *                           in a job with no set, and mpi://SELF (the
 *                           process alone) for a process outside the
 *                           job's sets.
 * MPI_Comm_create_from_group
 *                           PMIx_Group_construct of those processes with
 *                           PMIX_GROUP_ASSIGN_CONTEXT_ID (and a 30 s
 *                           PMIX_TIMEOUT: a member that never comes fails
 *                           it rather than hanging it): the context id
 *                           from which the library makes the communicator;
 *                           each process put its endpoint ("card") before,
 *                           and reads every member's after.
 * the communicator in use   a fence over the group ({group name, wildcard});
 *                           then, to check the ids, every process puts its
 *                           id and a fence of the job collects them: the
 *                           members of one group share one id, and the
 *                           processes of the other groups have others.
 * MPI_Comm_free             PMIx_Group_destruct; the group queries no
 *                           longer list it.
 *
 * Every process prints, in this order:
 *
 *   sessions: rank R psets N names A,B
 *   sessions: rank R pset NAME members R1,R2,...
 *   sessions: rank R group sessions.NAME size S cid C: fence ok, cards ok
 *   sessions: rank R cid shared by S members, not by the O others
 *   sessions: rank R destructed sessions.NAME
 *
 * and "sessions: rank R FAIL: ..." for anything that went wrong (exit
 * status 1). Standard API only, and no writable globals: it runs in pmixsim
 * too (`pmixsim --pset ocean:2 --pset ice:2 ... sessions`).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#define WORLD "mpi://WORLD"
#define SELF "mpi://SELF"
#define MAXP 4096

#define FAIL(me, ...)                                   \
    do {                                                \
        printf("sessions: rank %u FAIL: ", (me)->rank); \
        printf(__VA_ARGS__);                            \
        printf("\n");                                   \
        ok = false;                                     \
    } while (0)

/* A number of any unsigned type, or UINT64_MAX. */
static uint64_t number(const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_UINT32: return v->data.uint32;
    case PMIX_UINT64: return v->data.uint64;
    case PMIX_SIZE: return v->data.size;
    case PMIX_PROC_RANK: return v->data.rank;
    default: return UINT64_MAX;
    }
}

/* The members of set `name` into procs (at most MAXP); their count, or 0
 * when the query fails. */
static size_t pset_members(const char *name, pmix_proc_t *procs)
{
    char *keys[] = {PMIX_QUERY_PSET_MEMBERSHIP, NULL};
    pmix_info_t qual, *info = NULL;
    pmix_query_t q = {.keys = keys, .qualifiers = &qual, .nqual = 1};
    size_t ninfo = 0, n = 0;

    PMIx_Info_load(&qual, PMIX_PSET_NAME, name, PMIX_STRING);
    if (PMIx_Query_info(&q, 1, &info, &ninfo) == PMIX_SUCCESS && ninfo == 1 &&
        info[0].value.type == PMIX_DATA_ARRAY && info[0].value.data.darray->type == PMIX_PROC &&
        info[0].value.data.darray->size <= MAXP) {
        n = info[0].value.data.darray->size;
        memcpy(procs, info[0].value.data.darray->array, n * sizeof(*procs));
    }
    PMIx_Info_free(info, ninfo);
    PMIx_Info_destruct(&qual);
    return n;
}

/* Whether the group queries list `grp`; -1 if they fail. */
static int group_listed(const char *grp)
{
    char *keys[] = {PMIX_QUERY_GROUP_NAMES, NULL};
    pmix_query_t q = {.keys = keys};
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    int found = 0;
    pmix_status_t rc = PMIx_Query_info(&q, 1, &info, &ninfo);

    if (rc == PMIX_ERR_NOT_FOUND)
        return 0;
    if (rc != PMIX_SUCCESS)
        return -1;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_value_t *v = &info[i].value;
        if (v->type == PMIX_STRING && v->data.string != NULL) {
            char *copy = strdup(v->data.string), *save = NULL;
            for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save))
                found |= strcmp(t, grp) == 0;
            free(copy);
        } else if (v->type == PMIX_DATA_ARRAY && v->data.darray->type == PMIX_STRING) {
            char **s = v->data.darray->array;
            for (size_t k = 0; k < v->data.darray->size; k++)
                found |= strcmp(s[k], grp) == 0;
        }
    }
    PMIx_Info_free(info, ninfo);
    return found;
}

int main(int argc, char **argv)
{
    pmix_proc_t me, wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    bool ok = true;
    uint32_t jobsize = 0;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "sessions: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS) {
        jobsize = (uint32_t)number(v);
        PMIx_Value_free(v, 1);
    }

    /* MPI_Session_init: the sets this process may ask for */
    char *keys[] = {PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES, NULL};
    pmix_query_t query = {.keys = keys};
    pmix_info_t *info = NULL;
    size_t ninfo = 0, npsets = 0;
    char names[1024] = "";
    rc = PMIx_Query_info(&query, 1, &info, &ninfo);
    if (rc != PMIX_SUCCESS)
        FAIL(&me, "PMIx_Query_info of the sets: %s", PMIx_Error_string(rc));
    for (size_t i = 0; rc == PMIX_SUCCESS && i < ninfo; i++) {
        if (PMIx_Check_key(info[i].key, PMIX_QUERY_NUM_PSETS))
            npsets = (size_t)number(&info[i].value);
        else if (PMIx_Check_key(info[i].key, PMIX_QUERY_PSET_NAMES) &&
                 info[i].value.type == PMIX_STRING)
            snprintf(names, sizeof(names), "%s", info[i].value.data.string);
    }
    PMIx_Info_free(info, ninfo);
    printf("sessions: rank %u psets %zu names %s\n", me.rank, npsets, names);

    /* MPI_Group_from_session_pset: the set's processes */
    char pset[256] = WORLD;
    if (npsets > 0)
        snprintf(pset, sizeof(pset), "%s", SELF);
    if (argc > 1) {
        snprintf(pset, sizeof(pset), "%s", argv[1]);
    } else if (PMIx_Get(&me, PMIX_PSET_NAMES, NULL, 0, &v) == PMIX_SUCCESS) {
        if (v->type == PMIX_STRING && v->data.string[0] != '\0')
            snprintf(pset, sizeof(pset), "%.*s", (int)strcspn(v->data.string, ","), v->data.string);
        PMIx_Value_free(v, 1);
    }
    pmix_proc_t *members = calloc(MAXP, sizeof(*members));
    size_t nmembers = 0;
    if (members == NULL) {
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    if (strcmp(pset, WORLD) == 0) {
        for (uint32_t r = 0; r < jobsize && r < MAXP; r++)
            PMIx_Load_procid(&members[nmembers++], me.nspace, r);
    } else if (strcmp(pset, SELF) == 0) {
        members[nmembers++] = me;
    } else {
        nmembers = pset_members(pset, members);
    }
    char list[1024] = "";
    bool mine = false;
    for (size_t i = 0, at = 0; i < nmembers; i++) {
        mine |= PMIx_Check_procid(&members[i], &me);
        if (at < sizeof(list) - 16)
            at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%u", i ? "," : "",
                                   members[i].rank);
    }
    printf("sessions: rank %u pset %s members %s\n", me.rank, pset, list);
    if (nmembers == 0 || !mine) {
        FAIL(&me, "set %s: %zu members, this process %s", pset, nmembers,
             mine ? "among them" : "not among them");
        goto out;
    }

    /* the endpoint the library publishes before it builds a communicator */
    char card[64], grp[300];
    pmix_value_t cv = {.type = PMIX_STRING};
    snprintf(card, sizeof(card), "card of rank %u", me.rank);
    cv.data.string = card;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "sessions.card", &cv)) != PMIX_SUCCESS ||
        (rc = PMIx_Commit()) != PMIX_SUCCESS)
        FAIL(&me, "put and commit of the card: %s", PMIx_Error_string(rc));

    /* MPI_Comm_create_from_group: a group with a context id */
    /* a group's name is unique among the groups that exist at once */
    if (strcmp(pset, SELF) == 0)
        snprintf(grp, sizeof(grp), "sessions.%s.%u", pset, me.rank);
    else
        snprintf(grp, sizeof(grp), "sessions.%s", pset);
    pmix_info_t cinfo[2];
    bool yes = true;
    uint32_t timeout = 30;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    uint64_t cid = 0;
    PMIx_Info_load(&cinfo[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    PMIx_Info_load(&cinfo[1], PMIX_TIMEOUT, &timeout, PMIX_UINT32);
    rc = PMIx_Group_construct(grp, members, nmembers, cinfo, 2, &res, &nres);
    PMIx_Info_destruct(&cinfo[0]);
    PMIx_Info_destruct(&cinfo[1]);
    if (rc != PMIX_SUCCESS) {
        FAIL(&me, "PMIx_Group_construct of %s: %s", grp, PMIx_Error_string(rc));
        goto out;
    }
    for (size_t i = 0; i < nres; i++)
        if (PMIx_Check_key(res[i].key, PMIX_GROUP_CONTEXT_ID))
            cid = number(&res[i].value);
    PMIx_Info_free(res, nres);
    if (cid == 0 || cid == UINT64_MAX)
        FAIL(&me, "%s: no context id in the construct's results", grp);

    /* the communicator in use: a fence over the group, the members' cards */
    pmix_proc_t gall;
    PMIx_Load_procid(&gall, grp, PMIX_RANK_WILDCARD);
    bool fence_ok = (rc = PMIx_Fence(&gall, 1, NULL, 0)) == PMIX_SUCCESS;
    if (!fence_ok)
        FAIL(&me, "fence over %s: %s", grp, PMIx_Error_string(rc));
    bool cards_ok = true;
    for (size_t i = 0; i < nmembers; i++) {
        char want[64];
        snprintf(want, sizeof(want), "card of rank %u", members[i].rank);
        v = NULL;
        rc = PMIx_Get(&members[i], "sessions.card", NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v->type != PMIX_STRING || strcmp(v->data.string, want) != 0) {
            FAIL(&me, "card of member %u: %s", members[i].rank, PMIx_Error_string(rc));
            cards_ok = false;
        }
        if (v != NULL)
            PMIx_Value_free(v, 1);
    }
    printf("sessions: rank %u group %s size %zu cid %" PRIu64 ": fence %s, cards %s\n", me.rank,
           grp, nmembers, cid, fence_ok ? "ok" : "failed", cards_ok ? "ok" : "wrong");

    /* the ids of every group of the job: one per group, all different */
    pmix_value_t iv = {.type = PMIX_UINT64};
    pmix_info_t collect;
    iv.data.uint64 = cid;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "sessions.cid", &iv)) != PMIX_SUCCESS ||
        (rc = PMIx_Commit()) != PMIX_SUCCESS)
        FAIL(&me, "put of the id: %s", PMIx_Error_string(rc));
    PMIx_Info_load(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(&wild, 1, &collect, 1);
    PMIx_Info_destruct(&collect);
    if (rc != PMIX_SUCCESS)
        FAIL(&me, "fence of the job: %s", PMIx_Error_string(rc));
    size_t shared = 0, others = 0;
    for (uint32_t r = 0; rc == PMIX_SUCCESS && r < jobsize; r++) {
        pmix_proc_t p;
        bool member = false;
        PMIx_Load_procid(&p, me.nspace, r);
        for (size_t i = 0; i < nmembers; i++)
            member |= PMIx_Check_procid(&members[i], &p);
        v = NULL;
        if (PMIx_Get(&p, "sessions.cid", NULL, 0, &v) != PMIX_SUCCESS) {
            FAIL(&me, "no id from rank %u", r);
            continue;
        }
        if (member && number(v) == cid)
            shared++;
        else if (member)
            FAIL(&me, "member %u has id %" PRIu64 ", not %" PRIu64, r, number(v), cid);
        else if (number(v) == cid)
            FAIL(&me, "rank %u of another group has this group's id %" PRIu64, r, cid);
        else
            others++;
        PMIx_Value_free(v, 1);
    }
    printf("sessions: rank %u cid shared by %zu members, not by the %zu others\n", me.rank, shared,
           others);

    /* MPI_Comm_free */
    if ((rc = PMIx_Group_destruct(grp, NULL, 0)) != PMIX_SUCCESS)
        FAIL(&me, "PMIx_Group_destruct of %s: %s", grp, PMIx_Error_string(rc));
    else if (group_listed(grp) != 0)
        FAIL(&me, "%s is still listed after its destruct", grp);
    else
        printf("sessions: rank %u destructed %s\n", me.rank, grp);

out:
    free(members);
    fflush(stdout);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "sessions: PMIx_Finalize failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    return ok ? 0 : 1;
}
