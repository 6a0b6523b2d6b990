/*
 * iof_tool - a tool that feeds a job's standard input and reads its output
 * (tests/integration/iof.sh), written against the Standard's tool API only.
 *
 *   iof_tool sink PID PROG    attach to the pmixrun of pid PID, spawn 2
 *                             ranks of PROG (cat) with PMIX_STDIN_TGT
 *                             wildcard, PMIX_FWD_STDOUT and
 *                             PMIX_IOF_TAG_OUTPUT, and no pull: the
 *                             library writes their output, tagged
 *   iof_tool pull PID PROG    the same, with a PMIx_IOF_pull callback on
 *                             the new namespace, which prints each chunk
 *                             as "iof RANK: TEXT" (the pull takes it, so
 *                             the library writes nothing itself)
 *
 * Both then push "hello\n" to every rank, "only1\n" to rank 1, and the end
 * of input (bo NULL) to every rank, and wait (at most 20 s) for the job's
 * end (PMIX_EVENT_JOB_END: cat read end of file and exited). Before that,
 * a push to a rank of pmixrun's own job must fail (its input is not the
 * tools'). Prints what it did and exits 0, or the failed call and 1.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix_tool.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool ended;
static pmix_nspace_t spawned;

static void iof_cb(size_t id, pmix_iof_channel_t channel, pmix_proc_t *source,
                   pmix_byte_object_t *bo, pmix_info_t info[], size_t ninfo)
{
    (void)id;
    (void)channel;
    (void)info;
    (void)ninfo;
    pthread_mutex_lock(&lock);
    printf("iof %u: %.*s", source->rank, (int)bo->size, bo->bytes);
    fflush(stdout);
    pthread_mutex_unlock(&lock);
}

static void on_end(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id;
    (void)status;
    (void)source;
    (void)results;
    (void)nresults;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC &&
            PMIX_CHECK_NSPACE(info[i].value.data.proc->nspace, spawned)) {
            pthread_mutex_lock(&lock);
            ended = true;
            pthread_cond_broadcast(&cond);
            pthread_mutex_unlock(&lock);
        }
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static int fail(const char *what, pmix_status_t rc)
{
    printf("error %s %s\n", what, PMIx_Error_string(rc));
    fflush(stdout);
    PMIx_tool_finalize();
    return 1;
}

static pmix_status_t push(const char *nspace, pmix_rank_t rank, const char *text)
{
    pmix_proc_t to;
    pmix_byte_object_t bo = {.bytes = (char *)text, .size = text != NULL ? strlen(text) : 0};

    PMIX_LOAD_PROCID(&to, nspace, rank);
    return PMIx_IOF_push(&to, 1, text != NULL ? &bo : NULL, NULL, 0, NULL, NULL);
}

int main(int argc, char **argv)
{
    pmix_proc_t me;
    pmix_info_t attr, job[4];
    pmix_app_t app;
    pmix_status_t rc, code = PMIX_EVENT_JOB_END;
    pid_t pid;
    bool yes = true, pull;
    pmix_rank_t all = PMIX_RANK_WILDCARD;

    if (argc != 4 || (strcmp(argv[1], "sink") != 0 && strcmp(argv[1], "pull") != 0)) {
        fprintf(stderr, "usage: iof_tool sink|pull PID PROG\n");
        return 2;
    }
    pull = strcmp(argv[1], "pull") == 0;
    pid = (pid_t)atol(argv[2]);
    PMIx_Info_load(&attr, PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
    rc = PMIx_tool_init(&me, &attr, 1);
    PMIx_Info_destruct(&attr);
    if (rc != PMIX_SUCCESS) {
        printf("error PMIx_tool_init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_end, NULL, NULL);
    if (rc < 0)
        return fail("PMIx_Register_event_handler", rc);

    /* the server's own job reads pmixrun's input, not ours */
    pmix_query_t *q = PMIx_Query_create(1);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info(q, 1, &res, &nres);
    PMIx_Query_free(q, 1);
    if (rc != PMIX_SUCCESS || nres < 1 || res[0].value.type != PMIX_STRING)
        return fail("PMIX_QUERY_NAMESPACES", rc == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : rc);
    char first[PMIX_MAX_NSLEN + 1];
    snprintf(first, sizeof(first), "%.*s", (int)strcspn(res[0].value.data.string, ","),
             res[0].value.data.string);
    PMIx_Info_free(res, nres);
    /* what pmixrun says it takes of a spawn */
    q = PMIx_Query_create(1);
    PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_SPAWN_SUPPORT);
    rc = PMIx_Query_info(q, 1, &res, &nres);
    PMIx_Query_free(q, 1);
    if (rc != PMIX_SUCCESS || nres < 1 || res[0].value.type != PMIX_STRING)
        return fail("PMIX_QUERY_SPAWN_SUPPORT", rc == PMIX_SUCCESS ? PMIX_ERR_BAD_PARAM : rc);
    char **keys = PMIx_Argv_split(res[0].value.data.string, ',');
    bool fwd = false, in = false;
    for (size_t i = 0; keys != NULL && keys[i] != NULL; i++) {
        fwd |= strcmp(keys[i], PMIX_FWD_STDOUT) == 0;
        in |= strcmp(keys[i], PMIX_STDIN_TGT) == 0;
    }
    PMIx_Argv_free(keys);
    PMIx_Info_free(res, nres);
    printf("spawn support lists %s: %s, %s: %s\n", PMIX_FWD_STDOUT, fwd ? "yes" : "no",
           PMIX_STDIN_TGT, in ? "yes" : "no");
    rc = push(first, 0, "not for you\n");
    printf("push to %s: %s\n", first, PMIx_Error_string(rc));

    PMIx_App_construct(&app);
    app.cmd = strdup(argv[3]);
    PMIx_Argv_append_nosize(&app.argv, argv[3]);
    app.maxprocs = 2;
    PMIx_Info_load(&job[0], PMIX_STDIN_TGT, &all, PMIX_UINT32);
    PMIx_Info_load(&job[1], PMIX_FWD_STDOUT, &yes, PMIX_BOOL);
    PMIx_Info_load(&job[2], PMIX_IOF_TAG_OUTPUT, &yes, PMIX_BOOL);
    PMIx_Info_load(&job[3], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    rc = PMIx_Spawn(job, 4, &app, 1, spawned);
    PMIx_App_destruct(&app);
    for (int i = 0; i < 4; i++)
        PMIx_Info_destruct(&job[i]);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_Spawn", rc);
    printf("spawned %s\n", spawned);
    fflush(stdout);
    if (pull) {
        pmix_proc_t them;
        PMIX_LOAD_PROCID(&them, spawned, PMIX_RANK_WILDCARD);
        rc = PMIx_IOF_pull(&them, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, iof_cb, NULL, NULL);
        if (rc < 0)
            return fail("PMIx_IOF_pull", rc);
    }
    if ((rc = push(spawned, PMIX_RANK_WILDCARD, "hello\n")) != PMIX_SUCCESS)
        return fail("PMIx_IOF_push hello", rc);
    if ((rc = push(spawned, 1, "only1\n")) != PMIX_SUCCESS)
        return fail("PMIx_IOF_push only1", rc);
    if ((rc = push(spawned, PMIX_RANK_WILDCARD, NULL)) != PMIX_SUCCESS)
        return fail("PMIx_IOF_push end", rc);
    printf("pushed\n");
    fflush(stdout);

    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 20;
    pthread_mutex_lock(&lock);
    while (!ended)
        if (pthread_cond_timedwait(&cond, &lock, &t) != 0)
            break;
    printf("job end %s\n", ended ? "seen" : "not seen");
    fflush(stdout);
    pthread_mutex_unlock(&lock);
    rc = PMIx_tool_finalize();
    return ended && rc == PMIX_SUCCESS ? 0 : 1;
}
