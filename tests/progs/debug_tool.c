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
 *   debug_tool iof PID [tag]
 *       attach the same way, PMIx_IOF_pull the stdout and stderr of every
 *       rank of the job, release it as above, and print each chunk as
 *       "iof RANK stdout|stderr: TEXT" until 2 lines per rank came (at
 *       most 30 s; the job's size from PMIX_JOB_SIZE, else from
 *       PMIX_QUERY_PROC_TABLE); then PMIx_IOF_deregister. With "tag": no callback and
 *       PMIX_IOF_TAG_OUTPUT, so the library writes the output itself,
 *       tagged; the tool then waits until pmixrun (PID) is gone.
 *
 *   debug_tool spawn N PROG [ARG]
 *       connect to this machine's system server (PMIX_CONNECT_TO_SYSTEM),
 *       spawn N ranks of PROG ARG with PMIX_NOTIFY_COMPLETION, print
 *       "spawned NSPACE", each row of its PMIX_QUERY_PROC_TABLE as "proc
 *       RANK HOST" and "state RANK STATE" (PMIx_Proc_state_string), the
 *       server's PMIX_QUERY_NAMESPACES as "jobs LIST", and,
 *       once its PMIX_EVENT_JOB_END came (30 s at most), "ended NSPACE"
 *
 *   debug_tool terminate
 *       connect to this machine's system server (PMIX_CONNECT_TO_SYSTEM)
 *       and ask it to end (PMIx_Job_control, PMIX_JOB_CTRL_TERMINATE, no
 *       targets); prints "terminate requested" and exits 0
 *
 * Prints "released NSPACE RANK|all" and exits 0, or prints the failed call
 * and exits 1.
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>

#include <pmix_tool.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int lines;

static void iof_cb(size_t id, pmix_iof_channel_t channel, pmix_proc_t *source,
                   pmix_byte_object_t *bo, pmix_info_t info[], size_t ninfo)
{
    (void)id;
    (void)info;
    (void)ninfo;
    pthread_mutex_lock(&lock);
    printf("iof %u %s: %.*s", source->rank,
           channel == PMIX_FWD_STDOUT_CHANNEL ? "stdout" : "stderr", (int)bo->size, bo->bytes);
    fflush(stdout);
    for (size_t i = 0; i < bo->size; i++)
        lines += bo->bytes[i] == '\n';
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static int fail(const char *what, pmix_status_t rc)
{
    printf("error %s %s\n", what, PMIx_Error_string(rc));
    PMIx_tool_finalize();
    return 1;
}

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
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* debug_tool spawn (above). */
static int spawn(int n, const char *prog, const char *arg)
{
    pmix_proc_t me;
    pmix_info_t attr, *ji;
    pmix_app_t *app;
    pmix_query_t *q;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc, code = PMIX_EVENT_JOB_END;
    char job[PMIX_MAX_NSLEN + 1];
    bool yes = true;

    PMIx_Info_load(&attr, PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    rc = PMIx_tool_init(&me, &attr, 1);
    PMIx_Info_destruct(&attr);
    if (rc != PMIX_SUCCESS) {
        printf("error PMIx_tool_init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, on_end, NULL, NULL);
    if (rc < 0)
        return fail("PMIx_Register_event_handler", rc);
    app = PMIx_App_create(1);
    app->cmd = strdup(prog);
    PMIx_Argv_append_nosize(&app->argv, prog);
    if (arg != NULL)
        PMIx_Argv_append_nosize(&app->argv, arg);
    app->maxprocs = n;
    ji = PMIx_Info_create(1);
    PMIx_Info_load(&ji[0], PMIX_NOTIFY_COMPLETION, &yes, PMIX_BOOL);
    rc = PMIx_Spawn(ji, 1, app, 1, job);
    PMIx_Info_free(ji, 1);
    PMIx_App_free(app, 1);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_Spawn", rc);
    printf("spawned %s\n", job);

    q = PMIx_Query_create(2);
    PMIx_Argv_append_nosize(&q[0].keys, PMIX_QUERY_PROC_TABLE);
    q[0].qualifiers = PMIx_Info_create(1);
    q[0].nqual = 1;
    PMIx_Info_load(&q[0].qualifiers[0], PMIX_NSPACE, job, PMIX_STRING);
    PMIx_Argv_append_nosize(&q[1].keys, PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info(q, 2, &res, &nres);
    PMIx_Query_free(q, 2);
    if (rc != PMIX_SUCCESS)
        return fail("PMIX_QUERY_PROC_TABLE", rc);
    for (size_t i = 0; i < nres; i++) {
        if (PMIx_Check_key(res[i].key, PMIX_QUERY_NAMESPACES) && res[i].value.type == PMIX_STRING)
            printf("jobs %s\n", res[i].value.data.string);
        if (!PMIx_Check_key(res[i].key, PMIX_QUERY_PROC_TABLE) ||
            res[i].value.type != PMIX_DATA_ARRAY || res[i].value.data.darray == NULL)
            continue;
        pmix_proc_info_t *pi = res[i].value.data.darray->array;
        for (size_t k = 0; k < res[i].value.data.darray->size; k++) {
            printf("proc %u %s\n", pi[k].proc.rank, pi[k].hostname != NULL ? pi[k].hostname : "?");
            printf("state %u %s\n", pi[k].proc.rank, PMIx_Proc_state_string(pi[k].state));
        }
    }
    PMIx_Info_free(res, nres);
    fflush(stdout);

    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&lock);
    while (strcmp(ended, job) != 0 && rc == PMIX_SUCCESS)
        if (pthread_cond_timedwait(&cond, &lock, &until) != 0)
            rc = PMIX_ERR_TIMEOUT;
    pthread_mutex_unlock(&lock);
    if (rc != PMIX_SUCCESS)
        return fail("waiting for the end", rc);
    printf("ended %s\n", job);
    PMIx_tool_finalize();
    return 0;
}

/* debug_tool terminate (above). */
static int terminate(void)
{
    pmix_proc_t me;
    pmix_info_t attr, dir;
    bool yes = true;

    PMIx_Info_load(&attr, PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_tool_init(&me, &attr, 1);
    PMIx_Info_destruct(&attr);
    if (rc != PMIX_SUCCESS) {
        printf("error PMIx_tool_init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Info_load(&dir, PMIX_JOB_CTRL_TERMINATE, &yes, PMIX_BOOL);
    rc = PMIx_Job_control(NULL, 0, &dir, 1, NULL, NULL);
    PMIx_Info_destruct(&dir);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
        return fail("PMIx_Job_control", rc);
    printf("terminate requested\n");
    PMIx_tool_finalize();
    return 0;
}

/* The number of processes of `job` from PMIX_QUERY_PROC_TABLE: where the
 * server holds no job data (pmixrun over daemons), the job's size. */
static pmix_status_t proc_table_size(const char *job, uint32_t *size)
{
    pmix_query_t *q = PMIx_Query_create(1);
    pmix_info_t *res = NULL;
    size_t nres = 0;
    pmix_status_t rc;

    PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_PROC_TABLE);
    q->qualifiers = PMIx_Info_create(1);
    q->nqual = 1;
    PMIx_Info_load(&q->qualifiers[0], PMIX_NSPACE, job, PMIX_STRING);
    rc = PMIx_Query_info(q, 1, &res, &nres);
    PMIx_Query_free(q, 1);
    if (rc == PMIX_SUCCESS &&
        (nres < 1 || res[0].value.type != PMIX_DATA_ARRAY || res[0].value.data.darray == NULL))
        rc = PMIX_ERR_BAD_PARAM;
    if (rc == PMIX_SUCCESS)
        *size = (uint32_t)res[0].value.data.darray->size;
    PMIx_Info_free(res, nres);
    return rc;
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

    if (argc == 2 && strcmp(argv[1], "terminate") == 0)
        return terminate();
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "spawn") == 0 && atoi(argv[2]) > 0)
        return spawn(atoi(argv[2]), argv[3], argc == 5 ? argv[4] : NULL);
    bool iof = argc >= 3 && strcmp(argv[1], "iof") == 0;
    bool tag = iof && argc == 4 && strcmp(argv[3], "tag") == 0;
    if (argc < 3 || argc > 4 || (strcmp(argv[1], "release") != 0 && !iof) ||
        (iof && argc == 4 && !tag)) {
        fprintf(stderr, "usage: debug_tool release PID [RANK] | iof PID [tag] | spawn N PROG "
                        "[ARG] | terminate\n");
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

    size_t iofid = 0;
    uint32_t size = 0;
    if (iof) {
        pmix_proc_t all;
        pmix_info_t dir;
        pmix_value_t *v = NULL;
        bool yes = true;

        PMIX_LOAD_PROCID(&all, job, PMIX_RANK_WILDCARD);
        rc = PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &v);
        if (rc == PMIX_SUCCESS && v != NULL && v->type == PMIX_UINT32)
            size = v->data.uint32;
        else if ((rc = proc_table_size(job, &size)) != PMIX_SUCCESS)
            return fail("PMIX_JOB_SIZE and PMIX_QUERY_PROC_TABLE", rc);
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
        PMIx_Info_load(&dir, PMIX_IOF_TAG_OUTPUT, &yes, PMIX_BOOL);
        rc = PMIx_IOF_pull(&all, 1, tag ? &dir : NULL, tag ? 1 : 0,
                           PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL, tag ? NULL : iof_cb,
                           NULL, NULL);
        PMIx_Info_destruct(&dir);
        if (rc < 0)
            return fail("PMIx_IOF_pull", rc);
        iofid = (size_t)rc;
        printf("pulled %s id %zu\n", job, iofid);
        /* what must be refused: another namespace (pmixrun's host), no
         * channel (the library) */
        pmix_proc_t other;
        PMIX_LOAD_PROCID(&other, "no.such.job", PMIX_RANK_WILDCARD);
        rc = PMIx_IOF_pull(&other, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, iof_cb, NULL, NULL);
        printf("other namespace %s\n", rc < 0 ? PMIx_Error_string(rc) : "accepted");
        rc = PMIx_IOF_pull(&all, 1, NULL, 0, 0, iof_cb, NULL, NULL);
        printf("no channel %s\n", rc < 0 ? PMIx_Error_string(rc) : "accepted");
        fflush(stdout);
    }
    PMIX_LOAD_PROCID(&target, job,
                     argc == 4 && !iof ? (pmix_rank_t)atol(argv[3]) : PMIX_RANK_WILDCARD);
    PMIx_Info_load(&range, PMIX_EVENT_CUSTOM_RANGE, &target, PMIX_PROC);
    rc = PMIx_Notify_event(PMIX_DEBUGGER_RELEASE, &me, PMIX_RANGE_CUSTOM, &range, 1, NULL, NULL);
    PMIx_Info_destruct(&range);
    if (rc != PMIX_SUCCESS)
        return fail("PMIx_Notify_event", rc);
    printf("released %s %s\n", job, argc == 4 && !iof ? argv[3] : "all");
    fflush(stdout);
    if (iof && !tag) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_sec += 30;
        pthread_mutex_lock(&lock);
        while (lines < 2 * (int)size)
            if (pthread_cond_timedwait(&cond, &lock, &t) != 0)
                break;
        pthread_mutex_unlock(&lock);
        printf("lines %d\n", lines);
        rc = PMIx_IOF_deregister(iofid, NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS)
            return fail("PMIx_IOF_deregister", rc);
        if (PMIx_IOF_deregister(iofid, NULL, 0, NULL, NULL) != PMIX_ERR_NOT_FOUND)
            return fail("PMIx_IOF_deregister twice", PMIX_ERR_BAD_PARAM);
    } else if (iof) {
        /* the library writes the output; the end of pmixrun ends the wait */
        for (int i = 0; i < 300 && kill(pid, 0) == 0; i++)
            usleep(100000);
    }
    rc = PMIx_tool_finalize();
    return rc == PMIX_SUCCESS ? 0 : 1;
}
