/*
 * dbg_daemon - a debugger daemon for tests/integration/dbg_daemons.sh: a
 * tool started by the launcher, which connects with no attributes (the
 * environment it was given) and reads its target as the Standard tells a
 * daemon to.
 *
 * It prints, on one line:
 *   daemon NSPACE RANK on HOST target TNSPACE TRANK local R1,R2,... hosts H1,H2,...
 * where HOST is its own PMIX_HOSTNAME, TNSPACE and TRANK its job's
 * PMIX_DEBUG_TARGET, and the lists what PMIX_QUERY_LOCAL_PROC_TABLE of the
 * target's namespace gives (ranks and their hosts), once every target
 * rank there has connected (no longer prepped or running short of
 * PMIx_Init: a release sent before a rank waits is not kept); then it sends
 * PMIX_DEBUGGER_RELEASE to each of those ranks (PMIX_RANGE_CUSTOM, one
 * event per rank) that the target names (all of them for a wildcard),
 * and finalizes. Exits 0, or prints "error WHAT STATUS" and exits 1.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix_tool.h>

static int fail(const char *what, pmix_status_t rc)
{
    printf("error %s %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    PMIx_tool_finalize();
    return 1;
}

int main(void)
{
    pmix_proc_t me, wild, tgt;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    char host[256] = "?", ranks[4096] = "", hosts[8192] = "";

    if ((rc = PMIx_tool_init(&me, NULL, 0)) != PMIX_SUCCESS) {
        printf("error PMIx_tool_init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&wild, PMIX_DEBUG_TARGET, NULL, 0, &v)) != PMIX_SUCCESS ||
        v->type != PMIX_PROC)
        return fail("PMIX_DEBUG_TARGET", rc != PMIX_SUCCESS ? rc : PMIX_ERR_TYPE_MISMATCH);
    tgt = *v->data.proc;
    PMIx_Value_free(v, 1);
    if ((rc = PMIx_Get(&me, PMIX_HOSTNAME, NULL, 0, &v)) != PMIX_SUCCESS)
        return fail("PMIX_HOSTNAME", rc);
    snprintf(host, sizeof host, "%s", v->data.string);
    PMIx_Value_free(v, 1);

    /* The table, until every target rank in it has connected (it waits in
     * PMIx_Init, or another daemon released it: a release sent before a
     * rank waits is not kept), for 10 s at most. */
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_data_array_t *da = NULL;
    pmix_proc_info_t *pi = NULL;
    for (int tries = 0; tries < 100; tries++) {
        pmix_query_t *q = PMIx_Query_create(1);
        PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_LOCAL_PROC_TABLE);
        q->qualifiers = PMIx_Info_create(1);
        q->nqual = 1;
        PMIx_Info_load(&q->qualifiers[0], PMIX_NSPACE, tgt.nspace, PMIX_STRING);
        if (res != NULL)
            PMIx_Info_free(res, nres);
        res = NULL;
        rc = PMIx_Query_info(q, 1, &res, &nres);
        PMIx_Query_free(q, 1);
        if (rc != PMIX_SUCCESS || nres < 1 || res[0].value.type != PMIX_DATA_ARRAY)
            return fail("PMIX_QUERY_LOCAL_PROC_TABLE",
                        rc != PMIX_SUCCESS ? rc : PMIX_ERR_NOT_FOUND);
        da = res[0].value.data.darray;
        pi = da->array;
        bool all_in = true;
        for (size_t i = 0; i < da->size; i++)
            if ((tgt.rank == PMIX_RANK_WILDCARD || pi[i].proc.rank == tgt.rank) &&
                (pi[i].state == PMIX_PROC_STATE_UNDEF || pi[i].state == PMIX_PROC_STATE_PREPPED ||
                 pi[i].state == PMIX_PROC_STATE_RUNNING))
                all_in = false; /* not connected yet */
        if (all_in)
            break;
        usleep(100000);
    }
    for (size_t i = 0; i < da->size; i++) {
        size_t l = strlen(ranks), h = strlen(hosts);
        snprintf(ranks + l, sizeof ranks - l, "%s%u", i > 0 ? "," : "", pi[i].proc.rank);
        snprintf(hosts + h, sizeof hosts - h, "%s%s", i > 0 ? "," : "", pi[i].hostname);
    }
    printf("daemon %s %u on %s target %s %s local %s hosts %s\n", me.nspace, me.rank, host,
           tgt.nspace, tgt.rank == PMIX_RANK_WILDCARD ? "all" : "one", ranks, hosts);
    fflush(stdout);
    for (size_t i = 0; i < da->size; i++) {
        if (tgt.rank != PMIX_RANK_WILDCARD && pi[i].proc.rank != tgt.rank)
            continue;
        pmix_info_t range;
        pmix_proc_t who = pi[i].proc;
        PMIx_Info_load(&range, PMIX_EVENT_CUSTOM_RANGE, &who, PMIX_PROC);
        rc =
            PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, &me, PMIX_RANGE_CUSTOM, &range, 1, NULL, NULL);
        PMIx_Info_destruct(&range);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            return fail("PMIx_Notify_event", rc);
    }
    PMIx_Info_free(res, nres);
    PMIx_tool_finalize();
    return 0;
}
