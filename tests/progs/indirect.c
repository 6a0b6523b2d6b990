/*
 * indirect - a debugger's front end for indirect launch, written against
 * the Standard's tool API only (<pmix_tool.h>; Chap_API_Tools, "Indirect
 * launch", IL-based command line parsing), as a third party would:
 *
 *   indirect LAUNCHER [ARGS...]      e.g. indirect pmixrun -n 4 ./app
 *   indirect --fork LAUNCHER [ARGS...]
 *
 * With --fork the debugger starts the launcher itself (fork and exec,
 * PMIX_LAUNCHER_RNDZ_URI in its environment) instead of PMIx_Spawn: it
 * then has no job data to give it, so the launcher's own options say
 * what to do with the job (pmixrun --stop-in-init), and the launcher is
 * known by the source of its PMIX_LAUNCHER_READY (step 3 has no
 * PMIx_tool_set_server). It reaps the launcher at the end.
 *
 *   1. PMIx_tool_init as a launcher (PMIX_LAUNCHER) that connects to no
 *      server (PMIX_TOOL_DO_NOT_CONNECT), and PMIx_Get of its own
 *      PMIX_MYSERVER_URI;
 *   2. PMIx_Spawn of the launcher's whole command line (PMIX_SPAWN_TOOL),
 *      with PMIX_LAUNCHER_RNDZ_URI in its environment and the directives
 *      for the job in PMIX_LAUNCH_DIRECTIVES: PMIX_DEBUG_STOP_IN_INIT;
 *   3. PMIx_tool_set_server of the launcher with PMIX_WAIT_FOR_CONNECTION
 *      and PMIX_TIMEOUT; waits for its PMIX_LAUNCHER_READY and releases it
 *      (PMIX_DEBUGGER_RELEASE, custom range: the launcher);
 *   4. waits for PMIX_LAUNCH_COMPLETE with the job's namespace, holds the
 *      stopped job for a second, then releases every process of it
 *      (PMIX_DEBUGGER_RELEASE, custom range: the namespace's wildcard);
 *   5. waits for PMIX_EVENT_JOB_END of the job and exits with its
 *      PMIX_EXIT_CODE (0, or 1). A job that ends before its launch is
 *      complete (its PMIX_EVENT_JOB_END first) fails the launch.
 *
 * It prints one line per step ("launcher ready NS RANK", "launch complete
 * NS", "releasing NS", "job end NS exit N"), flushed, so that a test can
 * tell that no process of the job ran before "releasing". Every wait is
 * bounded (20 s for the launcher, 30 s for the launch, 120 s for the
 * job): on a timeout or a failed call it prints "error WHAT" and exits 1.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pmix_tool.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool ready, complete, ended;
static pmix_proc_t launcher;
static char appns[PMIX_MAX_NSLEN + 1];
static int exit_code = -1;

static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id;
    (void)results;
    (void)nresults;
    pthread_mutex_lock(&lock);
    if (status == PMIX_LAUNCHER_READY) {
        launcher = *source;
        ready = true;
    } else if (status == PMIX_LAUNCH_COMPLETE) {
        for (size_t i = 0; i < ninfo; i++)
            if (PMIX_CHECK_KEY(&info[i], PMIX_NSPACE) && info[i].value.type == PMIX_STRING)
                snprintf(appns, sizeof(appns), "%s", info[i].value.data.string);
        complete = appns[0] != '\0';
    } else if (status == PMIX_EVENT_JOB_END) {
        bool ours = false;
        int code = -1;
        for (size_t i = 0; i < ninfo; i++) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_NSPACE) && info[i].value.type == PMIX_STRING)
                ours = !complete || strcmp(info[i].value.data.string, appns) == 0;
            else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT)
                code = info[i].value.data.integer;
        }
        if (ours) {
            if (!complete) /* the launch failed: its end comes first */
                for (size_t i = 0; i < ninfo; i++)
                    if (PMIX_CHECK_KEY(&info[i], PMIX_NSPACE) && info[i].value.type == PMIX_STRING)
                        snprintf(appns, sizeof(appns), "%s", info[i].value.data.string);
            exit_code = code;
            ended = true;
        }
    }
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* Wait until *flag (or the job's end), at most `secs` seconds. */
static bool wait_for(const bool *flag, int secs)
{
    struct timespec until;
    bool ok;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += secs;
    pthread_mutex_lock(&lock);
    while (!*flag && !ended && pthread_cond_timedwait(&cond, &lock, &until) == 0)
        ;
    ok = *flag;
    pthread_mutex_unlock(&lock);
    return ok;
}

static int fail(const char *what, pmix_status_t rc)
{
    printf("error %s %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    PMIx_tool_finalize();
    return 1;
}

/* PMIX_DEBUGGER_RELEASE to `target` only. */
static pmix_status_t release(const pmix_proc_t *me, const pmix_proc_t *target)
{
    pmix_info_t info[2];
    bool yes = true;
    pmix_status_t rc;

    PMIx_Info_load(&info[0], PMIX_EVENT_CUSTOM_RANGE, target, PMIX_PROC);
    PMIx_Info_load(&info[1], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    rc = PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, me, PMIX_RANGE_CUSTOM, info, 2, NULL, NULL);
    PMIx_Info_destruct(&info[0]);
    PMIx_Info_destruct(&info[1]);
    return rc;
}

int main(int argc, char **argv)
{
    pmix_status_t codes[3] = {PMIX_LAUNCHER_READY, PMIX_LAUNCH_COMPLETE, PMIX_EVENT_JOB_END};
    pmix_info_t init[2], jinfo[3], wait[2];
    pmix_info_t *dirs;
    pmix_data_array_t darray;
    pmix_proc_t me, il;
    pmix_value_t *val = NULL;
    pmix_app_t app;
    pmix_nspace_t ilns;
    char cwd[4096], *uri;
    bool yes = true;
    int timeout = 10;
    pmix_status_t rc;

    bool forked = argc > 1 && strcmp(argv[1], "--fork") == 0;
    pid_t child = -1;

    if (forked) {
        argv++;
        argc--;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: %s [--fork] LAUNCHER [ARGS...]\n", argv[0]);
        return 2;
    }
    PMIx_Info_load(&init[0], PMIX_LAUNCHER, &yes, PMIX_BOOL);
    PMIx_Info_load(&init[1], PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    rc = PMIx_tool_init(&me, init, 2);
    PMIx_Info_destruct(&init[0]);
    PMIx_Info_destruct(&init[1]);
    if (rc != PMIX_SUCCESS) {
        printf("error PMIx_tool_init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    rc = PMIx_Get(&me, PMIX_MYSERVER_URI, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_STRING)
        return fail("PMIx_Get(PMIX_MYSERVER_URI)", rc);
    uri = strdup(val->data.string);
    PMIX_VALUE_RELEASE(val);
    rc = PMIx_Register_event_handler(codes, 3, NULL, 0, on_event, NULL, NULL);
    if (rc < 0)
        return fail("PMIx_Register_event_handler", rc);

    if (forked) {
        /* started by hand: the variable in its environment is all it gets */
        if ((child = fork()) == 0) {
            setenv(PMIX_LAUNCHER_RNDZ_URI, uri, 1);
            execvp(argv[1], argv + 1);
            _exit(127);
        }
        free(uri);
        if (child < 0)
            return fail("fork", PMIX_ERR_SYS_OTHER);
        goto started;
    }

    /* the launcher's whole command line, the directives for its job */
    PMIX_APP_CONSTRUCT(&app);
    app.cmd = strdup(argv[1]);
    for (int i = 1; i < argc; i++)
        PMIx_Argv_append_nosize(&app.argv, argv[i]);
    if (getcwd(cwd, sizeof(cwd)) != NULL)
        app.cwd = strdup(cwd);
    app.maxprocs = 1;
    PMIx_Setenv(PMIX_LAUNCHER_RNDZ_URI, uri, true, &app.env);
    dirs = PMIx_Info_create(1);
    PMIx_Info_load(&dirs[0], PMIX_DEBUG_STOP_IN_INIT, &yes, PMIX_BOOL);
    darray.type = PMIX_INFO;
    darray.size = 1;
    darray.array = dirs;
    PMIx_Info_load(&jinfo[0], PMIX_SPAWN_TOOL, &yes, PMIX_BOOL);
    PMIx_Info_load(&jinfo[1], PMIX_DEBUG_STOP_IN_INIT, &yes, PMIX_BOOL); /* the launcher's */
    PMIx_Info_load(&jinfo[2], PMIX_LAUNCH_DIRECTIVES, &darray, PMIX_DATA_ARRAY);
    rc = PMIx_Spawn(jinfo, 3, &app, 1, ilns);
    for (int i = 0; i < 3; i++)
        PMIx_Info_destruct(&jinfo[i]);
    PMIx_Info_free(dirs, 1);
    PMIX_APP_DESTRUCT(&app);
    free(uri);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_Spawn of the launcher", rc);

    /* the launcher as our primary server, once it connected back */
    PMIx_Load_procid(&il, ilns, 0);
    PMIx_Info_load(&wait[0], PMIX_WAIT_FOR_CONNECTION, &yes, PMIX_BOOL);
    PMIx_Info_load(&wait[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    rc = PMIx_tool_set_server(&il, wait, 2);
    PMIx_Info_destruct(&wait[0]);
    PMIx_Info_destruct(&wait[1]);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_tool_set_server of the launcher", rc);
started:
    if (!wait_for(&ready, 20))
        return fail("waiting for PMIX_LAUNCHER_READY", PMIX_ERR_TIMEOUT);
    printf("launcher ready %s %u\n", launcher.nspace, launcher.rank);
    fflush(stdout);
    if ((rc = release(&me, &launcher)) != PMIX_SUCCESS)
        return fail("PMIX_DEBUGGER_RELEASE of the launcher", rc);

    if (!wait_for(&complete, 30)) {
        if (ended) { /* the job ended before it was complete */
            printf("job end %s exit %d\n", appns, exit_code);
            return fail("the launch", PMIX_ERR_JOB_FAILED_TO_LAUNCH);
        }
        return fail("waiting for PMIX_LAUNCH_COMPLETE", PMIX_ERR_TIMEOUT);
    }
    printf("launch complete %s\n", appns);
    fflush(stdout);
    sleep(1); /* the job is held: nothing of it runs meanwhile */
    printf("releasing %s\n", appns);
    fflush(stdout);
    PMIx_Load_procid(&il, appns, PMIX_RANK_WILDCARD);
    if ((rc = release(&me, &il)) != PMIX_SUCCESS)
        return fail("PMIX_DEBUGGER_RELEASE of the job", rc);

    if (!wait_for(&ended, 120))
        return fail("waiting for PMIX_EVENT_JOB_END", PMIX_ERR_TIMEOUT);
    printf("job end %s exit %d\n", appns, exit_code);
    fflush(stdout);
    if (child > 0) {
        int st;
        if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            exit_code = exit_code != 0 ? exit_code : 1;
    }
    PMIx_tool_finalize();
    return exit_code == 0 ? 0 : 1;
}
