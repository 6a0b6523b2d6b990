/*
 * dbg_launch - a direct-launch debugger front end for the tests of
 * debugger daemons (tests/integration/dbg_daemons.sh), written against the
 * Standard's tool API only (<pmix_tool.h>).
 *
 *   dbg_launch PID MODE N TARGET DAEMON
 *
 * It attaches to the pmixrun of pid PID (PMIX_SERVER_PIDINFO; with PID
 * "env", a rank of a job connects through its environment, and ranks
 * other than 0 only finalize) and spawns
 * 3 ranks of the program TARGET (argument "hello"), held in PMIx_Init
 * (PMIX_DEBUG_STOP_IN_INIT), and debugger daemons running the program
 * DAEMON (PMIX_DEBUGGER_DAEMONS, maxprocs 0) which release them:
 *
 *   pernode K   a second spawn, PMIX_DEBUG_TARGET (the job, wildcard rank)
 *               and PMIX_DEBUG_DAEMONS_PER_NODE K
 *   perproc K   the same with PMIX_DEBUG_DAEMONS_PER_PROC K
 *   rank R      PMIX_DEBUG_TARGET rank R of the job alone, no count (the
 *               Standard's default: one daemon per target process)
 *   cospawn K   one spawn of two apps: the job, and the daemons with
 *               PMIX_COSPAWN_APP and PMIX_DEBUG_DAEMONS_PER_NODE K in their
 *               own directives
 *   attach K    no job of its own: the daemons' target is pmixrun's job
 *               (the first of PMIX_QUERY_NAMESPACES), with
 *               PMIX_DEBUG_DAEMONS_PER_NODE K (TARGET is not used)
 *
 * With PMIX_NOTIFY_COMPLETION it waits (30 s at most) for the end of the
 * daemons' job (of the target's, under cospawn), printing "spawned NSPACE"
 * for each spawn and "ended NSPACE" at the end; exits 0, or prints
 * "error WHAT STATUS" and exits 1.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pmix_tool.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static char ended[PMIX_MAX_NSLEN + 1];

static void on_end(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id;
    (void)status;
    (void)source;
    (void)results;
    (void)nresults;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < ninfo; i++)
        if (PMIx_Check_key(info[i].key, PMIX_EVENT_AFFECTED_PROC) &&
            info[i].value.type == PMIX_PROC)
            snprintf(ended, sizeof ended, "%s", info[i].value.data.proc->nspace);
    if (ended[0] == '\0')
        snprintf(ended, sizeof ended, "?");
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int fail(const char *what, pmix_status_t rc)
{
    printf("error %s %s\n", what, PMIx_Error_string(rc));
    PMIx_tool_finalize();
    return 1;
}

static void app_make(pmix_app_t *app, const char *prog, const char *arg, int n)
{
    app->cmd = strdup(prog);
    PMIx_Argv_append_nosize(&app->argv, prog);
    if (arg != NULL)
        PMIx_Argv_append_nosize(&app->argv, arg);
    app->maxprocs = n;
}

int main(int argc, char **argv)
{
    pmix_proc_t me, target;
    pmix_info_t attr;
    pid_t pid;
    pmix_status_t rc, code = PMIX_ERR_JOB_TERMINATED;
    bool yes = true;
    char job[PMIX_MAX_NSLEN + 1], dmn[PMIX_MAX_NSLEN + 1];

    if (argc != 6 || (strcmp(argv[2], "pernode") != 0 && strcmp(argv[2], "perproc") != 0 &&
                      strcmp(argv[2], "rank") != 0 && strcmp(argv[2], "cospawn") != 0 &&
                      strcmp(argv[2], "attach") != 0)) {
        fprintf(stderr,
                "usage: dbg_launch PID pernode|perproc|rank|cospawn|attach N TARGET DAEMON\n");
        return 2;
    }
    const char *mode = argv[2];
    int n = atoi(argv[3]);
    uint16_t k = (uint16_t)atoi(argv[3]);
    bool env = strcmp(argv[1], "env") == 0;
    pid = (pid_t)atol(argv[1]);
    PMIx_Info_load(&attr, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    rc = PMIx_tool_init(&me, env ? NULL : &attr, env ? 0 : 1);
    PMIx_Info_destruct(&attr);
    if (rc != PMIX_SUCCESS) {
        printf("error PMIx_tool_init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (env && me.rank != 0) {
        PMIx_tool_finalize();
        return 0;
    }
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_end, NULL, NULL);
    if (rc < 0)
        return fail("PMIx_Register_event_handler", rc);

    int njob = 3; /* the target job's ranks */
    pmix_app_t *apps = PMIx_App_create(2);
    pmix_info_t *ji = PMIx_Info_create(2);
    app_make(&apps[0], argv[4], "hello", njob);
    PMIx_Info_load(&ji[0], PMIX_DEBUG_STOP_IN_INIT, &yes, PMIX_BOOL);
    PMIx_Info_load(&ji[1], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    if (strcmp(mode, "cospawn") == 0) {
        app_make(&apps[1], argv[5], NULL, 0);
        apps[1].info = PMIx_Info_create(3);
        apps[1].ninfo = 3;
        PMIx_Info_load(&apps[1].info[0], PMIX_COSPAWN_APP, &yes, PMIX_BOOL);
        PMIx_Info_load(&apps[1].info[1], PMIX_DEBUGGER_DAEMONS, &yes, PMIX_BOOL);
        PMIx_Info_load(&apps[1].info[2], PMIX_DEBUG_DAEMONS_PER_NODE, &k, PMIX_UINT16);
        rc = PMIx_Spawn(ji, 2, apps, 2, job);
        PMIx_Info_free(ji, 2);
        PMIx_App_free(apps, 2);
        if (rc != PMIX_SUCCESS)
            return fail("PMIx_Spawn (cospawn)", rc);
        printf("spawned %s\n", job);
        snprintf(dmn, sizeof dmn, "%s", job); /* the end awaited: the job's */
    } else {
        if (strcmp(mode, "attach") == 0) { /* the running job */
            pmix_query_t *q = PMIx_Query_create(1);
            pmix_info_t *res = NULL;
            size_t nres = 0;
            PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_NAMESPACES);
            rc = PMIx_Query_info(q, 1, &res, &nres);
            PMIx_Query_free(q, 1);
            if (rc != PMIX_SUCCESS || nres < 1 || res[0].value.type != PMIX_STRING)
                return fail("PMIX_QUERY_NAMESPACES", rc != PMIX_SUCCESS ? rc : PMIX_ERR_NOT_FOUND);
            snprintf(job, sizeof job, "%.*s", (int)strcspn(res[0].value.data.string, ","),
                     res[0].value.data.string);
            PMIx_Info_free(res, nres);
            mode = "pernode";
        } else {
            rc = PMIx_Spawn(ji, 1, apps, 1, job);
        }
        PMIx_Info_free(ji, 2);
        PMIx_App_free(apps, 2);
        if (rc != PMIX_SUCCESS)
            return fail("PMIx_Spawn (target)", rc);
        printf("spawned %s\n", job);
        apps = PMIx_App_create(1);
        app_make(&apps[0], argv[5], NULL, 0);
        bool rank = strcmp(mode, "rank") == 0;
        ji = PMIx_Info_create(4);
        PMIx_Load_procid(&target, job, rank ? (pmix_rank_t)n : PMIX_RANK_WILDCARD);
        PMIx_Info_load(&ji[0], PMIX_DEBUGGER_DAEMONS, &yes, PMIX_BOOL);
        PMIx_Info_load(&ji[1], PMIX_DEBUG_TARGET, &target, PMIX_PROC);
        PMIx_Info_load(&ji[2], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
        if (!rank)
            PMIx_Info_load(&ji[3],
                           strcmp(mode, "pernode") == 0 ? PMIX_DEBUG_DAEMONS_PER_NODE
                                                        : PMIX_DEBUG_DAEMONS_PER_PROC,
                           &k, PMIX_UINT16);
        rc = PMIx_Spawn(ji, rank ? 3 : 4, apps, 1, dmn);
        PMIx_Info_free(ji, 4);
        PMIx_App_free(apps, 1);
        if (rc != PMIX_SUCCESS)
            return fail("PMIx_Spawn (daemons)", rc);
        printf("spawned %s\n", dmn);
    }
    fflush(stdout);

    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&lock);
    while (strcmp(ended, dmn) != 0 && rc == PMIX_SUCCESS)
        if (pthread_cond_timedwait(&cond, &lock, &until) != 0)
            rc = PMIX_ERR_TIMEOUT;
    pthread_mutex_unlock(&lock);
    if (rc != PMIX_SUCCESS)
        return fail("waiting for the end", rc);
    printf("ended %s\n", dmn);
    PMIx_tool_finalize();
    return 0;
}
