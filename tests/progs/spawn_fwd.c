/*
 * spawn_fwd - a rank spawns a job with PMIX_FWD_STDOUT and
 * PMIX_IOF_TAG_OUTPUT and gets its output (nodes2.spawn_fwd.n2), written
 * against the Standard's client API only.
 *
 *   spawn_fwd          rank 0 spawns two copies of this program ("child"),
 *                      with PMIX_FWD_STDOUT, PMIX_IOF_TAG_OUTPUT and
 *                      PMIX_NOTIFY_COMPLETION, waits (at most 20 s) for the
 *                      new job's end (PMIX_EVENT_JOB_END), then half a
 *                      second for output still on its way, and prints
 *                      "spawn_fwd: spawned NSPACE, end seen"; the library
 *                      writes the children's output to rank 0's stdout,
 *                      each line "[NSPACE,RANK]<stdout>: ". Other ranks
 *                      only initialize and finalize.
 *   spawn_fwd child    prints "child RANK says hi" and finalizes
 *
 * Exits 0, or prints "FAIL: <what>" and exits 1.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool ended;
static pmix_nspace_t spawned;

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
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC &&
            PMIX_CHECK_NSPACE(info[i].value.data.proc->nspace, spawned))
            ended = true;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int fail(const char *what, pmix_status_t rc)
{
    printf("FAIL: %s: %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    PMIx_Finalize(NULL, 0);
    return 1;
}

int main(int argc, char **argv)
{
    pmix_proc_t me;
    pmix_status_t rc, code = PMIX_EVENT_JOB_END;
    pmix_info_t job[3];
    pmix_app_t app;
    bool yes = true;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        printf("child %u says hi\n", me.rank);
        fflush(stdout);
        return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
    }
    if (me.rank != 0)
        return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;

    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_end, NULL, NULL);
    if (rc < 0)
        return fail("PMIx_Register_event_handler", rc);
    PMIx_App_construct(&app);
    app.cmd = strdup(argv[0]);
    PMIx_Argv_append_nosize(&app.argv, argv[0]);
    PMIx_Argv_append_nosize(&app.argv, "child");
    app.maxprocs = 2;
    PMIx_Info_load(&job[0], PMIX_FWD_STDOUT, &yes, PMIX_BOOL);
    PMIx_Info_load(&job[1], PMIX_IOF_TAG_OUTPUT, &yes, PMIX_BOOL);
    PMIx_Info_load(&job[2], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    /* the job's end comes after the spawn's answer: `spawned` is set by then */
    rc = PMIx_Spawn(job, 3, &app, 1, spawned);
    PMIx_App_destruct(&app);
    for (int i = 0; i < 3; i++)
        PMIx_Info_destruct(&job[i]);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_Spawn", rc);

    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 20;
    pthread_mutex_lock(&lock);
    while (!ended)
        if (pthread_cond_timedwait(&cond, &lock, &t) != 0)
            break;
    bool seen = ended;
    pthread_mutex_unlock(&lock);
    if (!seen)
        return fail("no PMIX_EVENT_JOB_END of the spawned job within 20 s", PMIX_ERR_TIMEOUT);
    usleep(500000); /* output still on its way from the other node */
    printf("spawn_fwd: spawned %s, end seen\n", spawned);
    fflush(stdout);
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
