/*
 * tool_server.c - a tool that is also a server (PMIX_LAUNCHER or
 * PMIX_SERVER_TOOL_SUPPORT in PMIx_tool_init), for the Standard's indirect
 * launch (tool/px_toolsrv.h says what the server side does).
 *
 * PMIx_tool_init (tool_api.c) calls px_api_tool_server_start once the
 * tool's client engine exists: a px_toolsrv on the same posix platform
 * listens on a Unix socket in a private directory (mode 0700) under the
 * session directory, "pmix-tool.<pid>", which also holds the rendezvous
 * files by pid and by the tool's namespace (px_rndz.h); the tool's own
 * PMIx_Get of PMIX_MYSERVER_URI (and, when it has no server of its own,
 * PMIX_SERVER_URI) answers that URI; the progress thread starts, so that
 * connections are accepted while the tool's thread does other work.
 *
 * PMIx_Spawn in such a tool with no server of its own (px_api_tool_spawn)
 * starts the processes itself, the Standard's "self-spawn" for an
 * initiator that starts its intermediate launcher: every app's maxprocs
 * copies (at least one) are forked and exec'd with the app's argv, cwd
 * and environment added to the tool's, plus PMIX_NAMESPACE and PMIX_RANK
 * naming the new job's process, which may connect back (with
 * PMIX_LAUNCHER_RNDZ_URI, which the tool puts in the app's environment)
 * as that tool and reads the job's data: the spawn's job_info
 * (PMIX_LAUNCH_DIRECTIVES among them), PMIX_SPAWNED, PMIX_PARENT_ID (this
 * tool) and PMIX_JOB_SIZE. Nothing waits for them: the tool learns of
 * them through their events and their connection.
 *
 * The server goes with the tool's engine: at PMIx_tool_finalize, and when
 * the tool attaches to another server or disconnects (px_api_tool_server_
 * stop); the processes it started are then reaped if they have ended
 * (within a second), else left to the tool.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/px_api.h"
#include "api/px_rndz.h"
#include "common/px_common.h"
#include "platform/px_posix.h"
#include "tool/px_toolsrv.h"

extern char **environ;

/* Under the px_api_client's init_lock (start, stop) or the platform's lock
 * (the rest, which reads `ts` set before any of them can run). */
static struct {
    px_toolsrv *ts;
    char dir[PATH_MAX];
    char *uri;
    char rndz[2][300]; /* the rendezvous files written in dir */
    unsigned nspawn;   /* jobs started: "<namespace>.spawn.<n>" */
} TS;

bool px_api_tool_server_wanted(const pmix_info_t info[], size_t ninfo)
{
    return px_info_flag(info, ninfo, PMIX_LAUNCHER) ||
           px_info_flag(info, ninfo, PMIX_SERVER_TOOL_SUPPORT);
}

static void store_uri(px_api_client *ac, const char *key)
{
    pmix_value_t v = {.type = PMIX_STRING, .data.string = TS.uri};

    (void)px_client_store_internal(ac->client, px_client_self(ac->client), key, &v);
}

pmix_status_t px_api_tool_server_start(px_api_client *ac, bool connected)
{
    px_posix *p = ac->priv;
    const pmix_proc_t *self = px_client_self(ac->client);
    char base[PATH_MAX - 64], err[256] = "", pid[32];
    pmix_status_t rc;

    if (TS.ts != NULL)
        return PMIX_SUCCESS;
    px_rndz_session_dir(base, sizeof(base));
    snprintf(TS.dir, sizeof(TS.dir), "%s/pmix-tool.%ld", base, (long)getpid());
    ac->pops->lock(ac->pctx);
    TS.ts = px_toolsrv_create(ac->client, ac->pops, ac->pctx, (uint32_t)getuid());
    ac->pops->unlock(ac->pctx);
    if (TS.ts == NULL)
        return PMIX_ERR_NOMEM;
    rc = px_posix_listen(p, TS.dir, px_server_sink(), px_toolsrv_server(TS.ts), &TS.uri, err,
                         sizeof(err));
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmix: tool: cannot listen in %s: %s\n", TS.dir, err);
        px_api_tool_server_stop(ac);
        return rc;
    }
    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    px_rndz_name(pid, TS.rndz[0], sizeof(TS.rndz[0]));
    px_rndz_name(self->nspace, TS.rndz[1], sizeof(TS.rndz[1]));
    for (int i = 0; i < 2; i++)
        if (px_rndz_write(TS.dir, TS.rndz[i], TS.uri, 0600) != 0)
            TS.rndz[i][0] = '\0'; /* found by its URI only */
    ac->pops->lock(ac->pctx);
    store_uri(ac, PMIX_MYSERVER_URI);
    if (!connected)
        store_uri(ac, PMIX_SERVER_URI);
    ac->pops->unlock(ac->pctx);
    return PMIX_SUCCESS;
}

/* Reap what this tool started, waiting at most a second for it. */
static void reap(const pid_t *pids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (int tries = 0; tries < 20; tries++) {
            pid_t r = waitpid(pids[i], NULL, WNOHANG);
            if (r != 0)
                break; /* reaped, or not ours to reap */
            struct timespec ts = {0, 50 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
}

void px_api_tool_server_stop(px_api_client *ac)
{
    char sock[PATH_MAX + 16];
    size_t n = 0;
    pid_t *pids = NULL;

    if (TS.ts == NULL)
        return;
    /* Nothing is delivered after the stop; the server's timers are
     * cancelled through the platform, which is still there. */
    px_posix_stop(ac->priv);
    const pid_t *p = px_toolsrv_pids(TS.ts, &n);
    if (n > 0 && (pids = malloc(n * sizeof(*pids))) != NULL)
        memcpy(pids, p, n * sizeof(*pids));
    px_toolsrv_destroy(TS.ts);
    for (int i = 0; i < 2; i++)
        if (TS.rndz[i][0] != '\0')
            px_rndz_remove(TS.dir, TS.rndz[i]);
    snprintf(sock, sizeof(sock), "%s/pmix.sock", TS.dir);
    (void)unlink(sock);
    (void)rmdir(TS.dir);
    free(TS.uri);
    if (pids != NULL)
        reap(pids, n);
    free(pids);
    memset(&TS, 0, sizeof(TS));
}

void px_api_tool_notify(px_api_client *ac, pmix_status_t status, const pmix_proc_t *source,
                        pmix_data_range_t range, const pmix_info_t info[], size_t ninfo)
{
    (void)ac;
    if (TS.ts != NULL)
        px_toolsrv_notify(TS.ts, status, source, range, info, ninfo);
}

/* The program `cmd` as execve needs it: a path, searched in PATH when it
 * has no slash. NULL if there is none to run. */
static char *find_program(const char *cmd)
{
    const char *path = getenv("PATH");
    char buf[PATH_MAX];

    if (cmd == NULL || cmd[0] == '\0')
        return NULL;
    if (strchr(cmd, '/') != NULL)
        return access(cmd, X_OK) == 0 ? strdup(cmd) : NULL;
    for (const char *d = path != NULL ? path : "/usr/bin:/bin"; d != NULL && *d != '\0';) {
        const char *e = strchr(d, ':');
        size_t len = e != NULL ? (size_t)(e - d) : strlen(d);
        if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len > 0 ? d : ".", cmd) <
                (int)sizeof(buf) &&
            access(buf, X_OK) == 0)
            return strdup(buf);
        d = e != NULL ? e + 1 : NULL;
    }
    return NULL;
}

/* The environment of one process: the tool's, the app's (later entries
 * of a name win), then its identity. NULL on no memory. */
static char **child_env(const pmix_app_t *app, const char *nspace, pmix_rank_t rank)
{
    size_t n = 0, m = 0, k = 0;
    char **env;

    while (environ[n] != NULL)
        n++;
    while (app->env != NULL && app->env[m] != NULL)
        m++;
    if ((env = calloc(n + m + 3, sizeof(*env))) == NULL)
        return NULL;
    for (size_t i = 0; i < n + m; i++) {
        const char *e = i < n ? environ[i] : app->env[i - n];
        const char *eq = strchr(e, '=');
        size_t nl = eq != NULL ? (size_t)(eq - e) : strlen(e);
        bool later = false;
        for (size_t j = i + 1; j < n + m && !later; j++) {
            const char *f = j < n ? environ[j] : app->env[j - n];
            later = strncmp(f, e, nl) == 0 && (f[nl] == '=' || f[nl] == '\0');
        }
        if (later || strncmp(e, "PMIX_NAMESPACE=", 15) == 0 || strncmp(e, "PMIX_RANK=", 10) == 0)
            continue;
        if ((env[k++] = strdup(e)) == NULL)
            goto nomem;
    }
    if (asprintf(&env[k++], "PMIX_NAMESPACE=%s", nspace) < 0) {
        env[k - 1] = NULL;
        goto nomem;
    }
    if (asprintf(&env[k++], "PMIX_RANK=%u", rank) < 0) {
        env[k - 1] = NULL;
        goto nomem;
    }
    return env;
nomem:
    PMIx_Argv_free(env);
    return NULL;
}

/* Fork and exec one process; its pid, or -1 with errno. Only
 * async-signal-safe calls in the child: everything was made before. */
static pid_t start(const char *path, char *const argv[], char *const env[], const char *cwd)
{
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    if (cwd != NULL && cwd[0] != '\0' && chdir(cwd) != 0)
        _exit(127);
    execve(path, argv, env);
    _exit(127);
}

pmix_status_t px_api_tool_spawn(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                                size_t napps, char nspace[PMIX_MAX_NSLEN + 1])
{
    px_api_client *ac = px_api_current();
    uint32_t nprocs = 0;
    pmix_info_t *info;
    pmix_status_t rc = PMIX_SUCCESS;
    pmix_rank_t rank = 0;
    bool yes = true;

    if (TS.ts == NULL || ac->client == NULL || px_client_connected(ac->client))
        return PMIX_ERR_NOT_SUPPORTED; /* not ours: the server's */
    if (apps == NULL || napps == 0 || (job_info == NULL && ninfo > 0))
        return PMIX_ERR_BAD_PARAM;
    for (size_t a = 0; a < napps; a++) {
        if (apps[a].maxprocs < 0 || apps[a].maxprocs > 1024)
            return PMIX_ERR_BAD_PARAM;
        nprocs += apps[a].maxprocs > 0 ? (uint32_t)apps[a].maxprocs : 1;
    }
    if ((info = PMIx_Info_create(ninfo + 3)) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < ninfo; i++)
        PMIx_Info_xfer(&info[i], &job_info[i]);
    PMIx_Info_load(&info[ninfo], PMIX_SPAWNED, &yes, PMIX_BOOL);
    PMIx_Info_load(&info[ninfo + 1], PMIX_PARENT_ID, px_client_self(ac->client), PMIX_PROC);
    PMIx_Info_load(&info[ninfo + 2], PMIX_JOB_SIZE, &nprocs, PMIX_UINT32);
    ac->pops->lock(ac->pctx);
    snprintf(nspace, PMIX_MAX_NSLEN + 1, "%.200s.spawn.%u", px_client_self(ac->client)->nspace,
             ++TS.nspawn);
    rc = px_toolsrv_add_job(TS.ts, nspace, nprocs, info, ninfo + 3);
    for (size_t a = 0; rc == PMIX_SUCCESS && a < napps; a++) {
        char *path = find_program(apps[a].cmd != NULL    ? apps[a].cmd
                                  : apps[a].argv != NULL ? apps[a].argv[0]
                                                         : NULL);
        char *argv0[2] = {apps[a].cmd, NULL};
        char *const *argv = apps[a].argv != NULL && apps[a].argv[0] != NULL ? apps[a].argv : argv0;
        int copies = apps[a].maxprocs > 0 ? apps[a].maxprocs : 1;
        if (path == NULL) {
            rc = PMIX_ERR_JOB_EXE_NOT_FOUND;
            break;
        }
        for (int c = 0; c < copies && rc == PMIX_SUCCESS; c++, rank++) {
            char **env = child_env(&apps[a], nspace, rank);
            pid_t pid = env != NULL ? start(path, argv, env, apps[a].cwd) : -1;
            if (env == NULL)
                rc = PMIX_ERR_NOMEM;
            else if (pid < 0)
                rc = PMIX_ERR_SYS_OTHER;
            else
                px_toolsrv_job_pid(TS.ts, nspace, rank, pid);
            PMIx_Argv_free(env);
        }
        free(path);
    }
    ac->pops->unlock(ac->pctx);
    PMIx_Info_free(info, ninfo + 3);
    if (rc != PMIX_SUCCESS)
        nspace[0] = '\0';
    return rc;
}

pmix_status_t px_api_tool_wait_peer(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo)
{
    px_api_client *ac = px_api_current();
    const pmix_info_t *to = px_info_find(info, ninfo, PMIX_TIMEOUT);
    bool wait = px_info_flag(info, ninfo, PMIX_WAIT_FOR_CONNECTION);
    uint64_t secs = 0;
    struct timespec t0, t;

    if (TS.ts == NULL || proc == NULL)
        return PMIX_ERR_NOT_FOUND;
    if (to != NULL)
        (void)px_value_get_number(&to->value, &secs);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        bool has;
        ac->pops->lock(ac->pctx);
        has = px_toolsrv_has_peer(TS.ts, proc);
        ac->pops->unlock(ac->pctx);
        if (has)
            return PMIX_SUCCESS;
        clock_gettime(CLOCK_MONOTONIC, &t);
        /* without PMIX_TIMEOUT a wait is bounded anyway: 10 s */
        if (!wait || (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >=
                         (secs > 0 ? (double)secs : 10.0))
            return wait ? PMIX_ERR_TIMEOUT : PMIX_ERR_NOT_FOUND;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}
