/*
 * invite - a group made by invitation across nodes: one process invites
 * every process of the job, the others answer from their
 * PMIX_GROUP_INVITED handler, and the group forms with a context id.
 *
 *   invite [--from RANK] [--decline] [--leave]
 *
 * Every process registers a handler for PMIX_GROUP_INVITED and fences.
 * Rank RANK (0) waits a quiet simulated second (a lookup with PMIX_WAIT
 * that times out), so that nothing else crosses the network while the
 * invitation runs, then calls PMIx_Group_invite of group "pmixsim.inv"
 * naming every rank (itself first) with PMIX_GROUP_ASSIGN_CONTEXT_ID and
 * a PMIX_TIMEOUT. An invited process's handler answers with
 * PMIx_Group_join_nb: it accepts, or with --decline an odd rank declines.
 * The join's callback notes the outcome and publishes "invite.R" (R its
 * rank), on which the process's main waits (a lookup with PMIX_WAIT): a
 * simulated process waits only inside a PMIx call, so the data service
 * serves as its condition variable.
 *
 * Then every member checks the outcome (the inviter: PMIX_SUCCESS, or
 * PMIX_ERR_PARTIAL_SUCCESS with --decline; every member the same
 * membership, the accepting ranks in rank order, and a context id) and
 * destructs the group; a decliner's join succeeds and it is no member.
 * With --leave, the group's last member leaves it first (PMIx_Group_leave)
 * and every other member waits until its PMIX_GROUP_LEFT handler heard
 * that (the handler publishes "invite.left.R") before the others
 * destruct it without the leaver. A fence of the job ends the run. Each process prints "invite:
 * rank R ... ok" with the group's size and context id, or "FAIL: ..." and exits 1. Like every
 * workload, its state is in main's frame.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#define GROUP "pmixsim.inv"

typedef struct inv_state {
    pmix_proc_t me;
    bool decline;         /* this process declines */
    int invited;          /* PMIX_GROUP_INVITED heard */
    bool joined;          /* the join's callback ran */
    pmix_status_t status; /* its status */
    size_t nmembers;      /* the membership it gave */
    pmix_rank_t members[1024];
    uint64_t ctxid;
    pmix_info_t pub;      /* what the callback publishes */
    int left;             /* PMIX_GROUP_LEFT heard */
    pmix_rank_t leaver;   /* the process it named */
    pmix_info_t pub_left; /* what the PMIX_GROUP_LEFT handler publishes */
} inv_state;

/* Note the membership and context id in a group operation's results. */
static void note_results(inv_state *s, const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIx_Check_key(info[i].key, PMIX_GROUP_CONTEXT_ID) && info[i].value.type == PMIX_SIZE) {
            s->ctxid = (uint64_t)info[i].value.data.size;
        } else if (PMIx_Check_key(info[i].key, PMIX_GROUP_MEMBERSHIP) &&
                   info[i].value.type == PMIX_DATA_ARRAY &&
                   info[i].value.data.darray->type == PMIX_PROC) {
            const pmix_proc_t *p = info[i].value.data.darray->array;
            s->nmembers = info[i].value.data.darray->size;
            for (size_t k = 0; k < s->nmembers && k < 1024; k++)
                s->members[k] = p[k].rank;
        }
    }
}

static void published(pmix_status_t status, void *cbdata)
{
    inv_state *s = cbdata;
    PMIx_Info_destruct(&s->pub);
}

static void published_left(pmix_status_t status, void *cbdata)
{
    inv_state *s = cbdata;
    PMIx_Info_destruct(&s->pub_left);
}

static void join_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    inv_state *s = cbdata;
    char key[32];

    s->joined = true;
    s->status = status;
    note_results(s, info, ninfo);
    if (release_fn != NULL)
        release_fn(release_cbdata);
    snprintf(key, sizeof(key), "invite.%u", s->me.rank);
    PMIx_Info_load(&s->pub, key, "yes", PMIX_STRING);
    if (PMIx_Publish_nb(&s->pub, 1, published, s) != PMIX_SUCCESS)
        PMIx_Info_destruct(&s->pub); /* main's wait then times out and says so */
}

static void on_invited(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    inv_state *s = NULL;
    const char *grp = NULL;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIx_Check_key(info[i].key, PMIX_EVENT_RETURN_OBJECT) &&
            info[i].value.type == PMIX_POINTER)
            s = info[i].value.data.ptr;
        else if (PMIx_Check_key(info[i].key, PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING)
            grp = info[i].value.data.string;
    }
    if (s != NULL && status == PMIX_GROUP_LEFT && grp != NULL && strcmp(grp, GROUP) == 0) {
        char key[32];
        s->left++;
        s->leaver = source->rank;
        for (size_t i = 0; i < ninfo; i++)
            if (PMIx_Check_key(info[i].key, PMIX_EVENT_AFFECTED_PROC) &&
                info[i].value.type == PMIX_PROC)
                s->leaver = info[i].value.data.proc->rank;
        snprintf(key, sizeof(key), "invite.left.%u", s->me.rank);
        PMIx_Info_load(&s->pub_left, key, "yes", PMIX_STRING);
        if (PMIx_Publish_nb(&s->pub_left, 1, published_left, s) != PMIX_SUCCESS)
            PMIx_Info_destruct(&s->pub_left); /* main's wait then times out and says so */
    }
    if (s != NULL && status == PMIX_GROUP_INVITED && grp != NULL && strcmp(grp, GROUP) == 0) {
        s->invited++;
        if (PMIx_Group_join_nb(GROUP, source, s->decline ? PMIX_GROUP_DECLINE : PMIX_GROUP_ACCEPT,
                               NULL, 0, join_cb, s) != PMIX_SUCCESS)
            join_cb(PMIX_ERROR, NULL, 0, s, NULL, NULL);
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* A lookup of `key` that waits (PMIX_WAIT) up to `tmo` seconds. */
static pmix_status_t wait_for(const char *key, uint32_t tmo)
{
    pmix_pdata_t pd;
    pmix_info_t info[2];
    bool yes = true;
    pmix_status_t rc;

    PMIx_Pdata_construct(&pd);
    PMIx_Load_key(pd.key, key);
    PMIx_Info_load(&info[0], PMIX_WAIT, &yes, PMIX_BOOL);
    PMIx_Info_load(&info[1], PMIX_TIMEOUT, &tmo, PMIX_UINT32);
    rc = PMIx_Lookup(&pd, 1, info, 2);
    PMIx_Pdata_destruct(&pd);
    PMIx_Info_destruct(&info[0]);
    PMIx_Info_destruct(&info[1]);
    return rc;
}

/* Does rank r accept? */
static bool accepts(pmix_rank_t r, pmix_rank_t from, bool decline)
{
    return r == from || !decline || r % 2 == 0;
}

/* The group as it must be: the accepting ranks, the inviter first. */
static int check_group(const inv_state *s, uint32_t size, pmix_rank_t from, bool decline)
{
    size_t k = 0;

    if (s->ctxid == 0) {
        printf("FAIL: rank %u: no context id\n", s->me.rank);
        return 1;
    }
    if (k < s->nmembers && s->members[k] == from)
        k++;
    else {
        printf("FAIL: rank %u: the inviter is not the group's first member\n", s->me.rank);
        return 1;
    }
    for (pmix_rank_t r = 0; r < size; r++) {
        if (r == from || !accepts(r, from, decline))
            continue;
        if (k >= s->nmembers || s->members[k] != r) {
            printf("FAIL: rank %u: rank %u is not member %zu of the group\n", s->me.rank, r, k);
            return 1;
        }
        k++;
    }
    if (k != s->nmembers) {
        printf("FAIL: rank %u: the group has %zu members, %zu expected\n", s->me.rank, s->nmembers,
               k);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    inv_state s;
    pmix_proc_t wild, *procs = NULL;
    pmix_value_t *v = NULL;
    pmix_status_t rc, codes[2] = {PMIX_GROUP_INVITED, PMIX_GROUP_LEFT};
    pmix_info_t reg;
    uint32_t size = 1;
    long from = 0;
    bool decline = false, leave = false, left_it = false, member;
    int failures = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--from") == 0 && i + 1 < argc)
            from = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--decline") == 0)
            decline = true;
        else if (strcmp(argv[i], "--leave") == 0)
            leave = true;
        else {
            fprintf(stderr, "usage: invite [--from RANK] [--decline] [--leave]\n");
            return 1;
        }
    }
    memset(&s, 0, sizeof(s));
    if ((rc = PMIx_Init(&s.me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "invite: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Load_procid(&wild, s.me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        size = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    if (from < 0 || (uint32_t)from >= size || size > 1024) {
        fprintf(stderr, "invite: --from must name a rank of a job of at most 1024\n");
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    s.decline = !accepts(s.me.rank, (pmix_rank_t)from, decline);
    member = !s.decline;
    PMIx_Info_load(&reg, PMIX_EVENT_RETURN_OBJECT, &s, PMIX_POINTER);
    rc = PMIx_Register_event_handler(codes, 2, &reg, 1, on_invited, NULL, NULL);
    PMIx_Info_destruct(&reg);
    if (rc < 0) {
        printf("FAIL: rank %u: PMIx_Register_event_handler: %s\n", s.me.rank,
               PMIx_Error_string(rc));
        failures++;
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: rank %u: fence: %s\n", s.me.rank, PMIx_Error_string(rc));
        failures++;
    }
    if (s.me.rank == (pmix_rank_t)from) {
        pmix_info_t info[2], *res = NULL;
        size_t nres = 0, k = 0;
        bool yes = true, partial = false;
        int tmo = 600;

        if ((rc = wait_for("invite.nobody", 1)) != PMIX_ERR_TIMEOUT) {
            printf("FAIL: rank %u: the quiet second: %s\n", s.me.rank, PMIx_Error_string(rc));
            failures++;
        }
        if ((procs = calloc(size, sizeof(*procs))) == NULL) {
            PMIx_Finalize(NULL, 0);
            return 1;
        }
        PMIx_Load_procid(&procs[k++], s.me.nspace, s.me.rank);
        for (uint32_t r = 0; r < size; r++)
            if (r != s.me.rank)
                PMIx_Load_procid(&procs[k++], s.me.nspace, r);
        PMIx_Info_load(&info[0], PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
        PMIx_Info_load(&info[1], PMIX_TIMEOUT, &tmo, PMIX_INT);
        rc = PMIx_Group_invite(GROUP, procs, size, info, 2, &res, &nres);
        PMIx_Info_destruct(&info[0]);
        PMIx_Info_destruct(&info[1]);
        s.joined = true;
        s.status = rc == PMIX_ERR_PARTIAL_SUCCESS ? PMIX_SUCCESS : rc;
        note_results(&s, res, nres);
        if (res != NULL)
            PMIx_Info_free(res, nres);
        for (uint32_t r = 0; r < size; r++)
            partial |= !accepts(r, (pmix_rank_t)from, decline);
        if (rc != (partial ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_SUCCESS)) {
            printf("FAIL: rank %u: PMIx_Group_invite: %s\n", s.me.rank, PMIx_Error_string(rc));
            failures++;
        }
        free(procs);
    } else {
        char key[32];
        snprintf(key, sizeof(key), "invite.%u", s.me.rank);
        if ((rc = wait_for(key, 600)) != PMIX_SUCCESS) {
            printf("FAIL: rank %u: waiting for its join: %s (invited %d times)\n", s.me.rank,
                   PMIx_Error_string(rc), s.invited);
            failures++;
        } else if (s.invited != 1 || s.status != PMIX_SUCCESS) {
            printf("FAIL: rank %u: invited %d times, join: %s\n", s.me.rank, s.invited,
                   PMIx_Error_string(s.status));
            failures++;
        }
    }
    if (failures == 0 && member)
        failures += check_group(&s, size, (pmix_rank_t)from, decline);
    if (failures == 0 && member && leave && s.nmembers > 1) {
        pmix_rank_t last = s.members[s.nmembers - 1];
        if (s.me.rank == last) {
            if ((rc = PMIx_Group_leave(GROUP, NULL, 0)) != PMIX_SUCCESS) {
                printf("FAIL: rank %u: PMIx_Group_leave: %s\n", s.me.rank, PMIx_Error_string(rc));
                failures++;
            }
            member = false;
            left_it = true;
        } else {
            char key[32];
            snprintf(key, sizeof(key), "invite.left.%u", s.me.rank);
            if ((rc = wait_for(key, 600)) != PMIX_SUCCESS || s.left != 1 || s.leaver != last) {
                printf("FAIL: rank %u: PMIX_GROUP_LEFT of rank %u: %s, heard %d times (rank %u)\n",
                       s.me.rank, last, PMIx_Error_string(rc), s.left, s.leaver);
                failures++;
            }
        }
    }
    if (failures == 0 && member && (rc = PMIx_Group_destruct(GROUP, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: rank %u: PMIx_Group_destruct: %s\n", s.me.rank, PMIx_Error_string(rc));
        failures++;
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: rank %u: the last fence: %s\n", s.me.rank, PMIx_Error_string(rc));
        failures++;
    }
    if (failures == 0) {
        if (member)
            printf("invite: rank %u in group %s of %zu, context id %" PRIu64 ": ok\n", s.me.rank,
                   GROUP, s.nmembers, s.ctxid);
        else if (left_it)
            printf("invite: rank %u left group %s of %zu: ok\n", s.me.rank, GROUP, s.nmembers);
        else
            printf("invite: rank %u declined: ok\n", s.me.rank);
    }
    PMIx_Finalize(NULL, 0);
    return failures == 0 ? 0 : 1;
}
