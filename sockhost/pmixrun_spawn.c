/*
 * pmixrun_spawn.c - PMIx_Spawn on one node: the new job is a job of its
 * own (its namespace, application contexts and ranks) that borrows the
 * first job's loop, server, directory and output, and whose ranks pmixrun
 * starts, watches and reaps as it does the first job's.
 *
 * The new namespace is the first job's with ".s<N>" appended (the Nth
 * spawn). Its job data is what the host core's builder makes for any job
 * (px_jobinfo_build), plus PMIX_SPAWNED (true) and PMIX_PARENT_ID (the
 * process that asked). Every rank is on this node, whatever PMIX_MAPBY
 * says (recorded in the job data as given); PMIX_HOST and PMIX_ADD_HOST
 * may name only this host. The spawn is answered once every rank has been
 * started (exec'd): a program that cannot be found fails it with
 * PMIX_ERR_JOB_EXE_NOT_FOUND, more ranks than free cores under
 * --nooversubscribe with PMIX_ERR_OUT_OF_RESOURCE, and a rank that cannot
 * be started with PMIX_ERR_JOB_FAILED_TO_LAUNCH (its siblings already
 * started are killed); pmixrun says why on its stderr, and the job it ran
 * goes on. A spawned rank that fails (killed by a signal, exits before
 * PMIx_Init with an error, or exits without PMIx_Finalize) ends the whole
 * run, as a rank of the first job does. With PMIX_NOTIFY_COMPLETION the
 * spawner (if still connected) hears PMIX_EVENT_JOB_END (not for default handlers)
 * once every rank of the spawned job is gone, with PMIX_EVENT_AFFECTED_PROC
 * (the job's namespace, wildcard rank), PMIX_JOB_TERM_STATUS and
 * PMIX_EXIT_CODE (the worst exit status of its ranks).
 *
 * Debugging: PMIX_DEBUG_STOP_IN_INIT holds the new job's ranks in
 * PMIx_Init until PMIX_DEBUGGER_RELEASE (as --stop-in-init);
 * PMIX_DEBUGGER_DAEMONS and the target (PMIX_DEBUG_TARGET or
 * PMIX_DEBUG_JOB, job or app directive) go into the job data as
 * PMIX_DEBUGGER_DAEMONS and PMIX_DEBUG_JOB, where the daemons, connected
 * by the environment they were given, read them. An app of maxprocs 0
 * gets N ranks under PMIX_MAPBY "ppr:N:...", else one per core.
 *
 * Input: PMIX_STDIN_TGT (a rank, or PMIX_RANK_WILDCARD for all) gives
 * those ranks a stdin pipe that tools' PMIx_IOF_push feed (pmixrun_iof.c);
 * without it every rank reads /dev/null.
 *
 * A system server (--system-server) has a first job of no ranks: its loop,
 * server and directory are what the spawned jobs borrow; its namespace
 * names them. There a failed rank ends its own job only (its siblings get
 * SIGTERM), not the server.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmixrun.h"

static bool key_is(const pmix_info_t *i, const char *key)
{
    return PMIx_Check_key(i->key, key);
}

static bool flag_of(const pmix_info_t *i)
{
    return i->value.type != PMIX_BOOL || i->value.data.flag;
}

/* True if every host of the comma-separated `list` is this one. */
static bool hosts_are_here(const job *j, const char *list, char *bad, size_t badlen)
{
    char *copy = strdup(list), *save = NULL;
    bool ok = copy != NULL;

    for (char *h = ok ? strtok_r(copy, ",", &save) : NULL; h != NULL;
         h = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(h, ':'); /* name:slots */
        if (colon != NULL)
            *colon = '\0';
        if (strcmp(h, j->hostname) != 0 && strcmp(h, "localhost") != 0 &&
            strcmp(h, "127.0.0.1") != 0) {
            snprintf(bad, badlen, "%s", h);
            ok = false;
            break;
        }
    }
    free(copy);
    return ok;
}

/* Check a host directive; print why it cannot be met. */
static pmix_status_t check_hosts(const job *j, const pmix_info_t *i)
{
    char bad[256] = "";

    if (i->value.type != PMIX_STRING || i->value.data.string == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (hosts_are_here(j, i->value.data.string, bad, sizeof bad))
        return PMIX_SUCCESS;
    fprintf(stderr,
            "pmixrun: spawn: host %s is not part of this job (pmixrun runs on %s alone); "
            "the spawn fails\n",
            bad[0] != '\0' ? bad : i->value.data.string, j->hostname);
    return PMIX_ERR_OUT_OF_RESOURCE;
}

static char **argv_dup(char *const *v, size_t skip_first, const char *first)
{
    size_t n = 0;
    while (v != NULL && v[n] != NULL)
        n++;
    char **out = calloc(n + 2, sizeof *out);
    size_t k = 0;
    if (out == NULL)
        return NULL;
    if (first != NULL && (out[k++] = strdup(first)) == NULL)
        goto fail;
    for (size_t i = skip_first; i < n; i++)
        if ((out[k++] = strdup(v[i])) == NULL)
            goto fail;
    return out;
fail:
    for (size_t i = 0; i < k; i++)
        free(out[i]);
    free(out);
    return NULL;
}

/* How many processes an app of maxprocs 0 gets: N under PMIX_MAPBY
 * "ppr:N:node" (or ppr:N:<anything>: one node is the whole machine here,
 * a coarse reading), else one per core of the node (its slots). */
static int default_count(const job *j, const char *mapby)
{
    if (mapby != NULL && strncasecmp(mapby, "ppr:", 4) == 0) {
        char *end;
        long n = strtol(mapby + 4, &end, 10);
        if (n > 0 && n <= 65535 && *end == ':')
            return (int)n;
    }
    return j->ncores > 0 ? j->ncores : 1;
}

/* The debugger keys of a spawn (job or app directive): PMIX_DEBUGGER_DAEMONS
 * into *daemons, the target of PMIX_DEBUG_TARGET (a proc or a namespace
 * string) or PMIX_DEBUG_JOB into *target. True if `in` was one of them. */
static bool debug_keys(const pmix_info_t *in, bool *daemons, const char **target)
{
    if (key_is(in, PMIX_DEBUGGER_DAEMONS)) {
        *daemons = flag_of(in);
        return true;
    }
    if (!key_is(in, PMIX_DEBUG_TARGET) && !key_is(in, PMIX_DEBUG_JOB))
        return false;
    if (in->value.type == PMIX_STRING && in->value.data.string != NULL)
        *target = in->value.data.string;
    else if (in->value.type == PMIX_PROC && in->value.data.proc != NULL)
        *target = in->value.data.proc->nspace;
    return true;
}

/* A spawned job's storage; what it borrows from the first job is left. */
static void child_free(job *c)
{
    for (int i = 0; c->ranks != NULL && i < c->nprocs; i++) {
        iof_stream_close(&c->ranks[i].out, c->ranks[i].rank, false);
        iof_stream_close(&c->ranks[i].err, c->ranks[i].rank, false);
        hwloc_bitmap_free(c->ranks[i].cpuset);
    }
    free(c->ranks);
    free(c->nsdir);
    PMIx_Info_free(c->extra_info, c->nextra);
    c->sigfd = c->devnull = -1; /* the first job's */
    c->topo = NULL;
    job_release(c);
    free(c);
}

/* True if `cmd` is a bare name and `path` a path to a file of that name
 * ("client" and "./client", as OpenPMIx's debugger example asks): the path
 * then says which program, relative to the app's working directory. */
static bool names_same(const char *cmd, const char *path)
{
    const char *slash = strrchr(path, '/');
    return strchr(cmd, '/') == NULL && slash != NULL && strcmp(slash + 1, cmd) == 0;
}

/* The spawned job's apps from the request; its wdir default `wdir`. */
static pmix_status_t make_apps(job *c, const pmix_app_t apps[], size_t napps, const char *wdir,
                               int dflt)
{
    if ((c->apps = calloc(napps, sizeof *c->apps)) == NULL)
        return PMIX_ERR_NOMEM;
    c->napps = (int)napps;
    int first = 0;
    for (size_t a = 0; a < napps; a++) {
        job_app *ja = &c->apps[a];
        const pmix_app_t *pa = &apps[a];
        const char *awdir = pa->cwd != NULL && pa->cwd[0] != '\0' ? pa->cwd : wdir;
        for (size_t i = 0; i < pa->ninfo; i++)
            if (key_is(&pa->info[i], PMIX_WDIR) && pa->info[i].value.type == PMIX_STRING)
                awdir = pa->info[i].value.data.string;
        ja->first = first;
        ja->size = pa->maxprocs > 0 ? pa->maxprocs : dflt;
        first += ja->size;
        /* cmd is the program; argv[0] what it sees (OpenPMIx's rule), or
         * the command when argv is empty */
        bool has_argv = pa->argv != NULL && pa->argv[0] != NULL;
        ja->argv = has_argv ? argv_dup(pa->argv, 0, NULL) : argv_dup(NULL, 0, pa->cmd);
        if (ja->argv == NULL)
            return PMIX_ERR_NOMEM;
        if (pa->cmd != NULL && pa->cmd[0] != '\0' && strcmp(ja->argv[0], pa->cmd) != 0 &&
            !names_same(pa->cmd, ja->argv[0])) {
            /* resolve the command, then give back the program's argv[0] */
            char *shown = ja->argv[0];
            if ((ja->argv[0] = strdup(pa->cmd)) == NULL) {
                ja->argv[0] = shown;
                return PMIX_ERR_NOMEM;
            }
            ja->prog = shown; /* swapped back after resolution (spawn_up) */
        }
        if (pa->env != NULL && (ja->env_set = argv_dup(pa->env, 0, NULL)) == NULL)
            return PMIX_ERR_NOMEM;
        if (awdir != NULL && (ja->wdir = strdup(awdir)) == NULL)
            return PMIX_ERR_NOMEM;
    }
    c->nprocs = first;
    return PMIX_SUCCESS;
}

/* Resolve each app's program; the argv[0] the caller gave goes back. */
static int resolve_apps(job *c)
{
    char **shown = calloc((size_t)c->napps, sizeof *shown);
    if (shown == NULL)
        return 1;
    for (int a = 0; a < c->napps; a++) {
        shown[a] = c->apps[a].prog;
        c->apps[a].prog = NULL;
    }
    int rc = launch_resolve(c);
    for (int a = 0; a < c->napps; a++) {
        if (shown[a] != NULL) {
            free(c->apps[a].argv[0]);
            c->apps[a].argv[0] = shown[a];
        }
    }
    free(shown);
    return rc;
}

static void kill_started(job *c)
{
    for (int i = 0; i < c->nprocs; i++) {
        rank_proc *r = &c->ranks[i];
        if (r->pid > 0 && !r->reaped) {
            r->stopped_by_us = true;
            if (kill(-r->pid, SIGKILL) != 0)
                kill(r->pid, SIGKILL);
        }
        job_rank_lost(c, r);
    }
}

pmix_status_t spawn_up(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                       size_t ninfo, const pmix_app_t apps[], size_t napps,
                       pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx;
    const char *mapby = NULL, *wdir = NULL, *target = NULL;
    bool notify = false, stop_in_init = false, daemons = false;
    int stdin_to = STDIN_NONE;
    pmix_status_t rc;
    long total = 0;

    if (j->rank_node != NULL || j->cross != NULL)
        return PMIX_ERR_NOT_SUPPORTED; /* pmixd: the daemons do not spawn yet */
    if (j->reason != END_NONE)
        return PMIX_ERR_JOB_TERMINATED; /* the run is ending */
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &job_info[i];
        if (key_is(in, PMIX_MAPBY) && in->value.type == PMIX_STRING)
            mapby = in->value.data.string;
        else if (key_is(in, PMIX_WDIR) && in->value.type == PMIX_STRING)
            wdir = in->value.data.string;
        else if (key_is(in, PMIX_NOTIFY_COMPLETION))
            notify = flag_of(in);
        else if (key_is(in, PMIX_DEBUG_STOP_IN_INIT))
            stop_in_init = flag_of(in);
        else if (key_is(in, PMIX_DEBUG_STOP_ON_EXEC) && flag_of(in))
            return PMIX_ERR_NOT_SUPPORTED; /* QUERY_DEBUG_SUPPORT does not list it */
        else if (debug_keys(in, &daemons, &target))
            continue;
        else if (key_is(in, PMIX_STDIN_TGT) &&
                 (rc = iof_stdin_target(in, &stdin_to)) != PMIX_SUCCESS)
            return rc;
        else if ((key_is(in, PMIX_HOST) || key_is(in, PMIX_ADD_HOST)) &&
                 (rc = check_hosts(j, in)) != PMIX_SUCCESS)
            return rc;
    }
    for (size_t a = 0; a < napps; a++) {
        if (apps[a].maxprocs < 0)
            return PMIX_ERR_BAD_PARAM;
        total += apps[a].maxprocs > 0 ? apps[a].maxprocs : default_count(j, mapby);
        for (size_t i = 0; i < apps[a].ninfo; i++)
            if (debug_keys(&apps[a].info[i], &daemons, &target))
                continue;
            else if ((key_is(&apps[a].info[i], PMIX_HOST) ||
                      key_is(&apps[a].info[i], PMIX_ADD_HOST)) &&
                     (rc = check_hosts(j, &apps[a].info[i])) != PMIX_SUCCESS)
                return rc;
    }
    if (total > 65535 || stdin_to >= total)
        return PMIX_ERR_BAD_PARAM;
    int running = live_ranks(j);
    if (j->no_oversubscribe && running + total > j->ncores) {
        fprintf(stderr,
                "pmixrun: spawn of %ld processes refused: %d processes already run on %s, which "
                "has %d core%s (--nooversubscribe)\n",
                total, running, j->hostname, j->ncores, j->ncores == 1 ? "" : "s");
        return PMIX_ERR_OUT_OF_RESOURCE;
    }

    job *c = calloc(1, sizeof *c);
    if (c == NULL)
        return PMIX_ERR_NOMEM;
    c->parent = j;
    c->sigfd = -1;
    c->devnull = j->devnull;
    c->stdin_to = stdin_to;
    c->in_open = c->in_pushed = stdin_to != STDIN_NONE; /* tools' PMIx_IOF_push */
    c->tag_output = j->tag_output;
    c->merge_stderr = j->merge_stderr;
    c->output_copy = true;
    c->nnodes = 1;
    c->ncores = j->ncores;
    c->topo = j->topo;
    c->plat = j->plat;
    c->srv = j->srv;
    c->uri = j->uri;
    c->server_up = j->server_up;
    c->topdir = j->topdir;
    c->outs[1] = j->outs[1];
    c->outs[2] = j->outs[2];
    memcpy(c->hostname, j->hostname, sizeof c->hostname);
    c->spawner = *proc;
    c->notify_completion = notify;
    c->stop_in_init = stop_in_init;
    snprintf(c->nspace, sizeof c->nspace, "%.240s.s%d", j->nspace, j->nspawned + 1);

    if ((rc = make_apps(c, apps, napps, wdir, default_count(j, mapby))) != PMIX_SUCCESS)
        goto fail;
    int lrc = resolve_apps(c);
    if (lrc != 0) {
        rc = lrc == PMIXRUN_EXIT_NOTFOUND ? PMIX_ERR_JOB_EXE_NOT_FOUND
             : lrc == PMIXRUN_EXIT_NOEXEC ? PMIX_ERR_JOB_APP_NOT_EXECUTABLE
                                          : PMIX_ERR_NOMEM;
        goto fail;
    }
    c->nlocal = c->nprocs;
    if ((c->ranks = calloc((size_t)c->nprocs, sizeof *c->ranks)) == NULL) {
        rc = PMIX_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < c->nprocs; i++) {
        c->ranks[i].rank = i;
        c->ranks[i].out.fd = c->ranks[i].err.fd = -1;
        c->ranks[i].files[0].fd = c->ranks[i].files[1].fd = c->ranks[i].in_fd = -1;
        c->ranks[i].out.job = c->ranks[i].err.job = j->nspawned + 1; /* --tag-output */
    }
    if (job_bindings(c) != 0) {
        rc = PMIX_ERR_OUT_OF_RESOURCE;
        goto fail;
    }
    if (asprintf(&c->nsdir, "%s/%s", c->topdir, c->nspace) < 0) {
        c->nsdir = NULL;
        rc = PMIX_ERR_NOMEM;
        goto fail;
    }
    if (files_make_dir(c->nsdir) != 0) {
        fprintf(stderr, "pmixrun: spawn: cannot create %s: %s\n", c->nsdir, strerror(errno));
        rc = PMIX_ERR_FILE_OPEN_FAILURE;
        goto fail;
    }
    bool yes = true;
    if ((c->extra_info = PMIx_Info_create(5)) == NULL) {
        rc = PMIX_ERR_NOMEM;
        goto fail;
    }
    PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_SPAWNED, &yes, PMIX_BOOL);
    PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_PARENT_ID, proc, PMIX_PROC);
    if (mapby != NULL)
        PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_MAPBY, mapby, PMIX_STRING);
    if (daemons)
        PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_DEBUGGER_DAEMONS, &yes, PMIX_BOOL);
    if (target != NULL)
        PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_DEBUG_JOB, target, PMIX_STRING);
    if (job_register(c) != 0) {
        rc = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
        goto fail;
    }
    /* from here on the ranks are the first job's to reap */
    j->nspawned++;
    c->next_child = j->children;
    j->children = c;
    for (int i = 0; i < c->nprocs; i++) {
        if (launch_rank(c, &c->ranks[i]) != 0) {
            fprintf(stderr, "pmixrun: spawn of %s failed: rank %d could not be started\n",
                    c->nspace, i);
            c->spawn_failed = true;
            kill_started(c);
            return PMIX_ERR_JOB_FAILED_TO_LAUNCH;
        }
    }
    cbfunc(PMIX_SUCCESS, c->nspace, cbdata);
    return PMIX_SUCCESS;

fail:
    if (c->nspace_registered) { /* the server must not keep it */
        px_posix_ops()->lock(j->plat);
        for (int i = 0; i < c->nprocs; i++) {
            pmix_proc_t p;
            PMIx_Load_procid(&p, c->nspace, (pmix_rank_t)i);
            px_server_deregister_client(j->srv, &p);
        }
        px_server_deregister_nspace(j->srv, c->nspace);
        px_posix_ops()->unlock(j->plat);
    }
    child_free(c);
    return rc;
}

rank_proc *spawn_rank_of_pid(job *j, pid_t pid, job **in)
{
    for (job *c = j->children; c != NULL; c = c->next_child)
        for (int i = 0; i < c->nstarted; i++)
            if (c->ranks[i].pid == pid && !c->ranks[i].reaped) {
                *in = c;
                return &c->ranks[i];
            }
    return NULL;
}

/* Every rank of `c` is gone: tell the spawner if it asked. */
static void job_ended(job *j, job *c)
{
    c->spawn_ended = true;
    if (!c->notify_completion || c->spawn_failed || !j->server_up)
        return;
    int worst = 0;
    for (int i = 0; i < c->nstarted; i++)
        if (c->ranks[i].code > worst)
            worst = c->ranks[i].code;
    pmix_proc_t affected;
    PMIx_Load_procid(&affected, c->nspace, PMIX_RANK_WILDCARD);
    pmix_status_t term = worst == 0 ? PMIX_SUCCESS : PMIX_ERR_JOB_NON_ZERO_TERM;
    bool yes = true;
    pmix_info_t info[4];
    PMIx_Info_load(&info[0], PMIX_EVENT_AFFECTED_PROC, &affected, PMIX_PROC);
    PMIx_Info_load(&info[1], PMIX_JOB_TERM_STATUS, &term, PMIX_STATUS);
    PMIx_Info_load(&info[2], PMIX_EXIT_CODE, &worst, PMIX_INT);
    PMIx_Info_load(&info[3], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    px_posix_ops()->lock(j->plat);
    pmix_proc_t source; /* the job that ended */
    PMIx_Load_procid(&source, c->nspace, PMIX_RANK_WILDCARD);
    px_server_notify_proc(j->srv, PMIX_EVENT_JOB_END, &source, &c->spawner, info, 4);
    px_posix_ops()->unlock(j->plat);
    for (int i = 0; i < 4; i++)
        PMIx_Info_destruct(&info[i]);
}

/* A system server's job `c` lost rank `r` (killed, failed before PMIx,
 * or gone without PMIx_Finalize): that job ends (its other ranks get
 * SIGTERM), the server and its other jobs go on. */
static void system_job_failed(job *c, rank_proc *r)
{
    fprintf(stderr, "pmixrun: system server: rank %d (pid %d) of %s %s %d%s; stopping that job\n",
            r->rank, (int)r->pid, c->nspace, r->signaled ? "was killed by signal" : "exited with",
            r->signaled ? r->code - 128 : r->code,
            r->signaled    ? ""
            : r->connected ? " without calling PMIx_Finalize"
                           : " before connecting to PMIx");
    for (int i = 0; i < c->nstarted; i++) {
        rank_proc *o = &c->ranks[i];
        if (o == r || o->reaped || o->pid <= 0)
            continue;
        o->stopped_by_us = true;
        if (kill(-o->pid, SIGTERM) != 0)
            kill(o->pid, SIGTERM);
    }
}

void spawn_rank_exited(job *j, job *c, rank_proc *r, int wstatus)
{
    r->reaped = true;
    c->nreaped++;
    if (WIFSIGNALED(wstatus)) {
        r->signaled = true;
        r->code = 128 + WTERMSIG(wstatus);
    } else {
        r->code = WEXITSTATUS(wstatus);
    }
    bool connected = r->connected, finalized = r->finalized;
    if (connected && !finalized)
        job_rank_lost(c, r); /* peers' fences and connects with it fail now */
    if (j->system_server) {
        if (!c->spawn_failed && !r->stopped_by_us && j->reason == END_NONE &&
            (r->signaled || (connected && !finalized) || (r->code != 0 && !connected)))
            system_job_failed(c, r);
    } else if (!c->spawn_failed) {
        if (!r->stopped_by_us && j->reason == END_NONE &&
            (r->signaled || (connected && !finalized) || (r->code != 0 && !connected)))
            fprintf(stderr, "pmixrun: the rank below is rank %d of the spawned job %s\n", r->rank,
                    c->nspace);
        rank_judge(j, r, (int)r->pid, connected, finalized);
    }
    if (c->nreaped == c->nstarted)
        job_ended(j, c);
}

int spawn_live_ranks(const job *j)
{
    int n = 0;
    for (const job *c = j->children; c != NULL; c = c->next_child)
        n += c->nstarted - c->nreaped;
    return n;
}

void spawn_signal_all(job *j, int sig)
{
    for (job *c = j->children; c != NULL; c = c->next_child)
        for (int i = 0; i < c->nstarted; i++) {
            rank_proc *r = &c->ranks[i];
            if (r->pid <= 0)
                continue;
            if (!r->reaped && sig == SIGTERM)
                r->stopped_by_us = true;
            if (kill(-r->pid, sig) != 0 && !r->reaped)
                kill(r->pid, sig);
        }
}

bool spawn_output_open(const job *j)
{
    for (const job *c = j->children; c != NULL; c = c->next_child)
        for (int i = 0; i < c->nstarted; i++)
            if (c->ranks[i].out.fd >= 0 || c->ranks[i].err.fd >= 0)
                return true;
    return false;
}

void spawn_close_output(job *j)
{
    for (job *c = j->children; c != NULL; c = c->next_child)
        for (int i = 0; i < c->nstarted; i++) {
            iof_stream_close(&c->ranks[i].out, c->ranks[i].rank, c->tag_output);
            iof_stream_close(&c->ranks[i].err, c->ranks[i].rank, c->tag_output);
        }
}

int spawn_worst_code(const job *j)
{
    int worst = 0;
    for (const job *c = j->children; c != NULL; c = c->next_child)
        for (int i = 0; i < c->nstarted; i++) {
            const rank_proc *r = &c->ranks[i];
            if (r->reaped && !r->stopped_by_us && !c->spawn_failed && r->code > worst)
                worst = r->code;
        }
    return worst;
}

void spawn_free_all(job *j)
{
    while (j->children != NULL) {
        job *c = j->children;
        j->children = c->next_child;
        child_free(c);
    }
}
