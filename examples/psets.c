/*
 * psets - what a process learns of its application context and of the
 * job's process sets: what an MPI library reads for MPI_Session_init and
 * MPI_Group_from_session_pset.
 *
 *   pmixrun -n 2 --pset ocean -x PSETS_COLOR=blue psets a : \
 *           -n 3 --pset ice -x PSETS_COLOR=white psets b x
 *
 * Every process prints, in this order (ranks of the job, not of a set):
 *
 *   psets: rank R app A size S leader L args 'ARGS' color C pset NAME
 *   psets: rank R num_psets N names NAME,NAME
 *   psets: rank R members NAME R1,R2,...       (one line per set)
 *   psets: rank R nb num_psets N               (PMIx_Query_info_nb)
 *
 * with its app's number, size and leader (PMIX_APPNUM, PMIX_APP_SIZE,
 * PMIX_APPLDR), the app's arguments after the program (PMIX_APP_ARGV),
 * its -x PSETS_COLOR, its own sets (PMIX_PSET_NAMES; "none"), and the
 * answers of PMIx_Query_info to PMIX_QUERY_NUM_PSETS,
 * PMIX_QUERY_PSET_NAMES and PMIX_QUERY_PSET_MEMBERSHIP (qualified by
 * PMIX_PSET_NAME). Anything that fails prints "psets: rank R FAIL: ..."
 * and the exit status is 1.
 *
 * Standard API only; keeps no writable globals (it runs in pmixsim too,
 * where a job has one app and no set unless pmixsim's --pset makes them:
 * "pset none", "num_psets 0").
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#define FAIL(me, ...)                                \
    do {                                             \
        printf("psets: rank %u FAIL: ", (me)->rank); \
        printf(__VA_ARGS__);                         \
        printf("\n");                                \
        ok = 0;                                      \
    } while (0)

/* A number of any unsigned type PMIx_Get may give. */
static unsigned long number(const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_UINT32: return v->data.uint32;
    case PMIX_UINT16: return v->data.uint16;
    case PMIX_PROC_RANK: return v->data.rank;
    case PMIX_SIZE: return (unsigned long)v->data.size;
    case PMIX_UINT64: return (unsigned long)v->data.uint64;
    default: return (unsigned long)-1;
    }
}

/* The app-level `key` of app `appnum`, as a number; -1 if missing. */
static long app_number(const pmix_proc_t *me, uint32_t appnum, const char *key)
{
    pmix_proc_t wild;
    pmix_info_t q;
    pmix_value_t *v = NULL;
    long n = -1;

    PMIx_Load_procid(&wild, me->nspace, PMIX_RANK_WILDCARD);
    PMIx_Info_load(&q, PMIX_APPNUM, &appnum, PMIX_UINT32);
    if (PMIx_Get(&wild, key, &q, 1, &v) == PMIX_SUCCESS) {
        n = (long)number(v);
        PMIx_Value_free(v, 1);
    }
    PMIx_Info_destruct(&q);
    return n;
}

typedef struct nb_wait {
    atomic_int done;
    pmix_status_t status;
    size_t num;
} nb_wait;

static void nb_answer(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    nb_wait *w = cbdata;

    w->status = status;
    if (status == PMIX_SUCCESS && ninfo == 1 && info[0].value.type == PMIX_SIZE)
        w->num = info[0].value.data.size;
    if (release_fn != NULL)
        release_fn(release_cbdata);
    atomic_store(&w->done, 1);
}

int main(int argc, char **argv)
{
    pmix_proc_t me, wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    int ok = 1;
    (void)argc;
    (void)argv;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "psets: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);

    /* this process's app */
    uint32_t appnum = 0;
    char args[256] = "", pset[256] = "none";
    const char *color = getenv("PSETS_COLOR");
    if (PMIx_Get(&me, PMIX_APPNUM, NULL, 0, &v) == PMIX_SUCCESS) {
        appnum = (uint32_t)number(v);
        PMIx_Value_free(v, 1);
    } else {
        FAIL(&me, "no PMIX_APPNUM");
    }
    long size = app_number(&me, appnum, PMIX_APP_SIZE);
    long leader = app_number(&me, appnum, PMIX_APPLDR);
    {
        pmix_info_t q;
        PMIx_Info_load(&q, PMIX_APPNUM, &appnum, PMIX_UINT32);
        if (PMIx_Get(&wild, PMIX_APP_ARGV, &q, 1, &v) == PMIX_SUCCESS) {
            const char *sp = v->type == PMIX_STRING ? strchr(v->data.string, ' ') : NULL;
            snprintf(args, sizeof(args), "%s", sp != NULL ? sp + 1 : "");
            PMIx_Value_free(v, 1);
        }
        PMIx_Info_destruct(&q);
    }
    if (PMIx_Get(&me, PMIX_PSET_NAMES, NULL, 0, &v) == PMIX_SUCCESS) {
        if (v->type == PMIX_STRING)
            snprintf(pset, sizeof(pset), "%s", v->data.string);
        PMIx_Value_free(v, 1);
    }
    printf("psets: rank %u app %u size %ld leader %ld args '%s' color %s pset %s\n", me.rank,
           appnum, size, leader, args, color != NULL ? color : "none", pset);

    /* the non-blocking form, as MPI libraries call it; its answer is
     * awaited at the end, after the blocking queries below (in pmixsim a
     * process only progresses while it waits in a blocking call, and the
     * server answers in order) */
    char *nkeys[] = {PMIX_QUERY_NUM_PSETS, NULL};
    pmix_query_t nq = {.keys = nkeys};
    nb_wait w = {.done = 0};
    pmix_status_t nbrc = PMIx_Query_info_nb(&nq, 1, nb_answer, &w);

    /* the sets of the job, as a Sessions library asks for them */
    char *keys[] = {PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES, NULL};
    pmix_query_t query = {.keys = keys};
    pmix_info_t *info = NULL;
    size_t ninfo = 0, num = 0;
    char names[1024] = "";
    rc = PMIx_Query_info(&query, 1, &info, &ninfo);
    if (rc != PMIX_SUCCESS) {
        FAIL(&me, "PMIx_Query_info of the number and names of sets: %s", PMIx_Error_string(rc));
    } else {
        for (size_t i = 0; i < ninfo; i++) {
            if (PMIx_Check_key(info[i].key, PMIX_QUERY_NUM_PSETS))
                num = (size_t)number(&info[i].value);
            else if (PMIx_Check_key(info[i].key, PMIX_QUERY_PSET_NAMES) &&
                     info[i].value.type == PMIX_STRING)
                snprintf(names, sizeof(names), "%s", info[i].value.data.string);
        }
    }
    PMIx_Info_free(info, ninfo);
    printf("psets: rank %u num_psets %zu names %s\n", me.rank, num, names);

    /* each set's members */
    char *save = NULL;
    for (char *name = strtok_r(names, ",", &save); name != NULL;
         name = strtok_r(NULL, ",", &save)) {
        char *mkeys[] = {PMIX_QUERY_PSET_MEMBERSHIP, NULL};
        pmix_info_t qual;
        pmix_query_t mq = {.keys = mkeys, .qualifiers = &qual, .nqual = 1};
        char list[1024] = "";
        size_t at = 0;
        PMIx_Info_load(&qual, PMIX_PSET_NAME, name, PMIX_STRING);
        info = NULL;
        ninfo = 0;
        rc = PMIx_Query_info(&mq, 1, &info, &ninfo);
        if (rc != PMIX_SUCCESS || ninfo != 1 || info[0].value.type != PMIX_DATA_ARRAY ||
            info[0].value.data.darray->type != PMIX_PROC) {
            FAIL(&me, "PMIx_Query_info of the members of %s: %s", name, PMIx_Error_string(rc));
        } else {
            const pmix_data_array_t *da = info[0].value.data.darray;
            for (size_t i = 0; i < da->size && at < sizeof(list) - 16; i++) {
                const pmix_proc_t *p = &((const pmix_proc_t *)da->array)[i];
                if (!PMIx_Check_nspace(p->nspace, me.nspace))
                    FAIL(&me, "a member of %s is of another namespace", name);
                at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%u", i ? "," : "", p->rank);
            }
        }
        PMIx_Info_free(info, ninfo);
        PMIx_Info_destruct(&qual);
        printf("psets: rank %u members %s %s\n", me.rank, name, list);
    }

    if (nbrc != PMIX_SUCCESS) {
        FAIL(&me, "PMIx_Query_info_nb: %s", PMIx_Error_string(nbrc));
    } else {
        while (!atomic_load(&w.done))
            sched_yield();
        if (w.status != PMIX_SUCCESS)
            FAIL(&me, "PMIx_Query_info_nb answered %s", PMIx_Error_string(w.status));
        printf("psets: rank %u nb num_psets %zu\n", me.rank, w.num);
    }

    fflush(stdout);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "psets: PMIx_Finalize failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    return ok ? 0 : 1;
}
