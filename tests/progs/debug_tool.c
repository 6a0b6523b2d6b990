/*
 * debug_tool - a debugger's front end reduced to what the tests
 * (tests/integration/debug.sh) need, written against the Standard's tool
 * API only (<pmix_tool.h>).
 *
 *   debug_tool release PID [RANK]
 *       attach to the pmixrun of pid PID (PMIX_SERVER_PIDINFO), take its
 *       job (PMIX_QUERY_NAMESPACES) and send PMIX_DEBUGGER_RELEASE with
 *       PMIX_RANGE_CUSTOM to the job's processes (PMIX_EVENT_CUSTOM_RANGE:
 *       all of them, or rank RANK only)
 *
 * Prints "released NSPACE RANK|all" and exits 0, or prints the failed call
 * and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix_tool.h>

static int fail(const char *what, pmix_status_t rc)
{
    printf("error %s %s\n", what, PMIx_Error_string(rc));
    PMIx_tool_finalize();
    return 1;
}

int main(int argc, char **argv)
{
    pmix_proc_t me, target;
    pmix_info_t attr, range;
    pmix_query_t *q;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pid_t pid;
    pmix_status_t rc;
    char job[PMIX_MAX_NSLEN + 1];

    if (argc < 3 || argc > 4 || strcmp(argv[1], "release") != 0) {
        fprintf(stderr, "usage: debug_tool release PID [RANK]\n");
        return 2;
    }
    pid = (pid_t)atol(argv[2]);
    PMIx_Info_load(&attr, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    rc = PMIx_tool_init(&me, &attr, 1);
    PMIx_Info_destruct(&attr);
    if (rc != PMIX_SUCCESS) {
        printf("error PMIx_tool_init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    q = PMIx_Query_create(1);
    PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info(q, 1, &res, &nres);
    PMIx_Query_free(q, 1);
    if (rc != PMIX_SUCCESS || nres < 1 || res[0].value.type != PMIX_STRING)
        return fail("PMIX_QUERY_NAMESPACES", rc == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : rc);
    snprintf(job, sizeof(job), "%.*s", (int)strcspn(res[0].value.data.string, ","),
             res[0].value.data.string);
    PMIx_Info_free(res, nres);

    PMIX_LOAD_PROCID(&target, job, argc == 4 ? (pmix_rank_t)atol(argv[3]) : PMIX_RANK_WILDCARD);
    PMIx_Info_load(&range, PMIX_EVENT_CUSTOM_RANGE, &target, PMIX_PROC);
    rc = PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, &me, PMIX_RANGE_CUSTOM, &range, 1, NULL, NULL);
    PMIx_Info_destruct(&range);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_Notify_event", rc);
    printf("released %s %s\n", job, argc == 4 ? argv[3] : "all");
    fflush(stdout);
    rc = PMIx_tool_finalize();
    return rc == PMIX_SUCCESS ? 0 : 1;
}
