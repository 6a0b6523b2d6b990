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
 * PMIX_DEBUGGER_DAEMONS and the target (PMIX_DEBUG_TARGET, a namespace or
 * one rank, or PMIX_DEBUG_JOB; job or app directive) go into the job data
 * as PMIX_DEBUGGER_DAEMONS, PMIX_DEBUG_JOB and PMIX_DEBUG_TARGET, where
 * the daemons, connected by the environment they were given, read them.
 * When the target is a running job of this pmixrun and the app says how
 * many (PMIX_DEBUG_DAEMONS_PER_NODE N: N on each node that holds target
 * ranks; PMIX_DEBUG_DAEMONS_PER_PROC N: N per target rank, on its node) or
 * leaves it to the host (maxprocs 0: N per such node under PMIX_MAPBY
 * "ppr:N:node", else one per target rank, the Standard's default), the
 * daemons go beside the target's ranks (by_target, daemons_on). Apps with
 * PMIX_COSPAWN_APP are launched with the job as a job of their own (the
 * next ".sN"), their target the new job: its stop in init and its end's
 * notice are the job's alone, and the spawn answers with the job's
 * namespace once both started (or fails both). Any other app of maxprocs
 * 0 gets N ranks under PMIX_MAPBY "ppr:N:...", else one per core (over
 * daemons, N on each node under "ppr:N:node").
 *
 * pmixrun --nodes: a daemon's request comes to pmixrun (pmixd_spawn.c),
 * which plans the job here (spawn_plan: the same directives, checks and
 * job data; hosts are the job's nodes; the ranks go over the nodes in
 * blocks, or round robin under PMIX_MAPBY node, in free slots where
 * slots are known) and sends it to the daemons (pmixrun_nodes.c). The
 * plan's job keeps a rank_proc per rank, filled from the daemons' reports.
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

/* The node of host `h` in a job over nodes (its name, or "nodeN"), or -1. */
static int node_named(const job *j, const char *h)
{
    for (int n = 0; n < j->nnodes; n++)
        if (strcmp(h, job_node_name(j, n)) == 0)
            return n;
    return -1;
}

/* pmixrun --nodes: mark in `allowed` (j->nnodes entries) the nodes of the
 * comma-separated `list` ("name" or "name:slots"); false with the first
 * name that is no node of the job in `bad`. */
static bool hosts_to_nodes(const job *j, const char *list, bool *allowed, char *bad, size_t badlen)
{
    char *copy = strdup(list), *save = NULL;
    bool ok = copy != NULL;

    for (char *h = ok ? strtok_r(copy, ",", &save) : NULL; h != NULL;
         h = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(h, ':');
        if (colon != NULL)
            *colon = '\0';
        int n = node_named(j, h);
        if (n < 0) {
            snprintf(bad, badlen, "%s", h);
            ok = false;
            break;
        }
        if (allowed != NULL)
            allowed[n] = true;
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
    if (j->nodes != NULL) { /* pmixrun --nodes: the hosts are its nodes */
        if (hosts_to_nodes(j, i->value.data.string, NULL, bad, sizeof bad))
            return PMIX_SUCCESS;
        fprintf(stderr,
                "pmixrun: spawn: host %s is not part of this job (its nodes are %s to %s); "
                "the spawn fails\n",
                bad[0] != '\0' ? bad : i->value.data.string, job_node_name(j, 0),
                job_node_name(j, j->nnodes - 1));
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
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
 * string) or PMIX_DEBUG_JOB into *target and its rank into *trank (the
 * proc's, else PMIX_RANK_WILDCARD). True if `in` was one of them. */
static bool debug_keys(const pmix_info_t *in, bool *daemons, const char **target,
                       pmix_rank_t *trank)
{
    if (key_is(in, PMIX_DEBUGGER_DAEMONS)) {
        *daemons = flag_of(in);
        return true;
    }
    if (!key_is(in, PMIX_DEBUG_TARGET) && !key_is(in, PMIX_DEBUG_JOB))
        return false;
    if (in->value.type == PMIX_STRING && in->value.data.string != NULL) {
        *target = in->value.data.string;
        *trank = PMIX_RANK_WILDCARD;
    } else if (in->value.type == PMIX_PROC && in->value.data.proc != NULL) {
        *target = in->value.data.proc->nspace;
        *trank = in->value.data.proc->rank;
    }
    return true;
}

/* A count directive (PMIX_DEBUG_DAEMONS_PER_NODE / _PER_PROC): its value,
 * or 0 if absent or not a positive number below 65,536. */
static unsigned count_of(const pmix_info_t *in)
{
    uint64_t v = 0;
    switch (in->value.type) {
    case PMIX_UINT16: v = in->value.data.uint16; break;
    case PMIX_UINT32: v = in->value.data.uint32; break;
    case PMIX_INT: v = in->value.data.integer > 0 ? (uint64_t)in->value.data.integer : 0; break;
    case PMIX_UINT: v = in->value.data.uint; break;
    case PMIX_SIZE: v = in->value.data.size; break;
    default: break;
    }
    return v < 65536 ? (unsigned)v : 0;
}

/* True if app `pa` says `key` (a flag) in its own directives. */
static bool app_says(const pmix_app_t *pa, const char *key)
{
    for (size_t i = 0; i < pa->ninfo; i++)
        if (key_is(&pa->info[i], key))
            return flag_of(&pa->info[i]);
    return false;
}

void spawn_fwd_drop(job *c)
{
    for (size_t i = 0; i < c->nfwd_held; i++)
        free(c->fwd_held[i].p);
    free(c->fwd_held);
    c->fwd_held = NULL;
    c->nfwd_held = 0;
}

/* A spawned job's storage; what it borrows from the first job is left. */
void spawn_child_free(job *c)
{
    for (int i = 0; c->ranks != NULL && i < c->nlocal; i++) {
        iof_stream_close(&c->ranks[i].out, c->ranks[i].rank, false);
        iof_stream_close(&c->ranks[i].err, c->ranks[i].rank, false);
        hwloc_bitmap_free(c->ranks[i].cpuset);
    }
    free(c->ranks);
    free(c->nsdir);
    free(c->rank_node);
    free(c->xmap);
    spawn_fwd_drop(c);
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

/* What a spawn request asks, read once for both ways to run it. */
typedef struct spawn_args {
    const char *mapby, *wdir, *target;
    pmix_rank_t trank;           /* the target's rank (PMIX_RANK_WILDCARD: all of it) */
    const job *tjob;             /* the target, when it is a job of this run */
    unsigned per_node, per_proc; /* PMIX_DEBUG_DAEMONS_PER_NODE / _PER_PROC */
    bool notify, stop_in_init, daemons;
    int stdin_to; /* PMIX_STDIN_TGT: a rank, STDIN_ALL, or STDIN_NONE */
    long total;   /* processes in all */
} spawn_args;

/* The job named `ns` of this run (the first job, unless a system server,
 * or a spawned one still running), or NULL. */
static const job *job_of_run(const job *j, const char *ns)
{
    if (ns == NULL)
        return NULL;
    if (!j->system_server && strncmp(ns, j->nspace, PMIX_MAX_NSLEN) == 0)
        return j;
    for (const job *c = j->children; c != NULL; c = c->next_child)
        if (strncmp(ns, c->nspace, PMIX_MAX_NSLEN) == 0 && !c->spawn_failed && !c->spawn_ended)
            return c;
    return NULL;
}

/* True if app `pa` is debugger daemons placed by their target: a target
 * of this run, and PMIX_DEBUG_DAEMONS_PER_NODE, _PER_PROC or maxprocs 0. */
static bool by_target(const spawn_args *a, const pmix_app_t *pa)
{
    if (a->tjob == NULL || !(a->daemons || app_says(pa, PMIX_DEBUGGER_DAEMONS)))
        return false;
    if (a->per_node > 0 || a->per_proc > 0 || pa->maxprocs == 0)
        return true;
    for (size_t i = 0; i < pa->ninfo; i++)
        if ((key_is(&pa->info[i], PMIX_DEBUG_DAEMONS_PER_NODE) ||
             key_is(&pa->info[i], PMIX_DEBUG_DAEMONS_PER_PROC)) &&
            count_of(&pa->info[i]) > 0)
            return true;
    return false;
}

/* Into tcnt[0 .. nnodes): the target's ranks on each node. */
static void target_count(const spawn_args *a, int nnodes, int *tcnt)
{
    const job *t = a->tjob;
    memset(tcnt, 0, (size_t)nnodes * sizeof *tcnt);
    for (int r = 0; t != NULL && r < t->nprocs; r++) {
        int n = t->rank_node != NULL ? (int)t->rank_node[r] : 0;
        if ((a->trank == PMIX_RANK_WILDCARD || (pmix_rank_t)r == a->trank) && n < nnodes)
            tcnt[n]++;
    }
}

/* How many of by_target app `pa`'s daemons go on node `n`, where the
 * target has tcnt[n] ranks: none where it has none; else the app's or the
 * job's PMIX_DEBUG_DAEMONS_PER_NODE, or _PER_PROC times tcnt[n], or N of
 * PMIX_MAPBY "ppr:N:node", or one per target rank (the Standard's
 * default). */
static int daemons_on(const spawn_args *a, const pmix_app_t *pa, const int *tcnt, int n)
{
    unsigned per_node = a->per_node, per_proc = a->per_proc;
    if (tcnt[n] == 0)
        return 0;
    for (size_t i = 0; i < pa->ninfo; i++) {
        if (key_is(&pa->info[i], PMIX_DEBUG_DAEMONS_PER_NODE) && count_of(&pa->info[i]) > 0) {
            per_node = count_of(&pa->info[i]);
            per_proc = 0;
        } else if (key_is(&pa->info[i], PMIX_DEBUG_DAEMONS_PER_PROC) &&
                   count_of(&pa->info[i]) > 0) {
            per_proc = count_of(&pa->info[i]);
            per_node = 0;
        }
    }
    if (per_node > 0)
        return (int)per_node;
    if (per_proc > 0)
        return (int)per_proc * tcnt[n];
    if (a->mapby != NULL && strncasecmp(a->mapby, "ppr:", 4) == 0)
        return default_count(a->tjob, a->mapby);
    return tcnt[n];
}

/* The apps of a request split in two: those of the job itself, and those
 * with PMIX_COSPAWN_APP (launched with it as a job of their own). The
 * arrays hold shallow copies (free them with free()). */
static pmix_status_t split_cospawn(const pmix_app_t apps[], size_t napps, pmix_app_t **main_,
                                   size_t *nmain, pmix_app_t **co, size_t *nco)
{
    *main_ = calloc(napps > 0 ? napps : 1, sizeof **main_);
    *co = calloc(napps > 0 ? napps : 1, sizeof **co);
    *nmain = *nco = 0;
    if (*main_ == NULL || *co == NULL) {
        free(*main_);
        free(*co);
        return PMIX_ERR_NOMEM;
    }
    for (size_t k = 0; k < napps; k++) {
        if (app_says(&apps[k], PMIX_COSPAWN_APP))
            (*co)[(*nco)++] = apps[k];
        else
            (*main_)[(*nmain)++] = apps[k];
    }
    return *nmain == 0 && *nco > 0 ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS; /* beside nothing */
}

/* Read the job directives and check the apps (hosts, sizes). */
static pmix_status_t read_args(job *j, const pmix_info_t job_info[], size_t ninfo,
                               const pmix_app_t apps[], size_t napps, spawn_args *a)
{
    pmix_status_t rc;

    memset(a, 0, sizeof *a);
    a->trank = PMIX_RANK_WILDCARD;
    a->stdin_to = STDIN_NONE;
    if (napps == 0)
        return PMIX_ERR_BAD_PARAM;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &job_info[i];
        if (key_is(in, PMIX_MAPBY) && in->value.type == PMIX_STRING)
            a->mapby = in->value.data.string;
        else if (key_is(in, PMIX_WDIR) && in->value.type == PMIX_STRING)
            a->wdir = in->value.data.string;
        else if (key_is(in, PMIX_NOTIFY_COMPLETION))
            a->notify = flag_of(in);
        else if (key_is(in, PMIX_DEBUG_STOP_IN_INIT))
            a->stop_in_init = flag_of(in);
        else if (key_is(in, PMIX_DEBUG_STOP_ON_EXEC) && flag_of(in))
            return PMIX_ERR_NOT_SUPPORTED; /* QUERY_DEBUG_SUPPORT does not list it */
        else if (debug_keys(in, &a->daemons, &a->target, &a->trank))
            continue;
        else if (key_is(in, PMIX_DEBUG_DAEMONS_PER_NODE))
            a->per_node = count_of(in);
        else if (key_is(in, PMIX_DEBUG_DAEMONS_PER_PROC))
            a->per_proc = count_of(in);
        else if (key_is(in, PMIX_STDIN_TGT) &&
                 (rc = iof_stdin_target(in, &a->stdin_to)) != PMIX_SUCCESS)
            return rc;
        else if ((key_is(in, PMIX_HOST) || key_is(in, PMIX_ADD_HOST)) &&
                 (rc = check_hosts(j, in)) != PMIX_SUCCESS)
            return rc;
    }
    for (size_t k = 0; k < napps; k++) {
        if (apps[k].maxprocs < 0)
            return PMIX_ERR_BAD_PARAM;
        a->total += apps[k].maxprocs > 0 ? apps[k].maxprocs : default_count(j, a->mapby);
        for (size_t i = 0; i < apps[k].ninfo; i++)
            if (debug_keys(&apps[k].info[i], &a->daemons, &a->target, &a->trank))
                continue;
            else if ((key_is(&apps[k].info[i], PMIX_HOST) ||
                      key_is(&apps[k].info[i], PMIX_ADD_HOST)) &&
                     (rc = check_hosts(j, &apps[k].info[i])) != PMIX_SUCCESS)
                return rc;
    }
    if (a->total > 65535 || a->stdin_to >= a->total)
        return PMIX_ERR_BAD_PARAM;
    a->tjob = a->daemons ? job_of_run(j, a->target) : NULL;
    if (a->daemons && a->target != NULL && a->tjob == NULL &&
        (a->per_node > 0 || a->per_proc > 0)) {
        fprintf(stderr,
                "pmixrun: spawn of debugger daemons refused: their target %s is no running job "
                "of this pmixrun\n",
                a->target);
        return PMIX_ERR_NOT_FOUND;
    }
    return PMIX_SUCCESS;
}

/* The spawned job: what it borrows from the first job, its name (the
 * first job's with ".s<N>"), its apps with their programs found, and the
 * keys its job data adds (PMIX_SPAWNED, PMIX_PARENT_ID...). On failure
 * nothing is left to free. */
static pmix_status_t child_make(job *j, const pmix_proc_t *proc, const spawn_args *a,
                                const pmix_app_t apps[], size_t napps, int no, job **out)
{
    pmix_status_t rc;
    job *c = calloc(1, sizeof *c);
    int nn = j->nnodes > 0 ? j->nnodes : 1, *tcnt = NULL;

    *out = NULL;
    if (c == NULL)
        return PMIX_ERR_NOMEM;
    job_borrow(c, j);
    c->stdin_to = a->stdin_to;
    c->in_open = c->in_pushed = a->stdin_to != STDIN_NONE; /* tools' PMIx_IOF_push */
    c->nnodes = 1;
    c->ncores = j->ncores;
    memcpy(c->hostname, j->hostname, sizeof c->hostname);
    c->spawner = *proc;
    c->notify_completion = a->notify;
    c->stop_in_init = a->stop_in_init;
    c->spawn_no = no;
    snprintf(c->nspace, sizeof c->nspace, "%.240s.s%d", j->nspace, c->spawn_no);

    if ((rc = make_apps(c, apps, napps, a->wdir, default_count(j, a->mapby))) != PMIX_SUCCESS)
        goto fail;
    if (a->tjob != NULL) { /* debugger daemons beside their target's ranks */
        int first = 0;
        if ((tcnt = calloc((size_t)nn, sizeof *tcnt)) == NULL) {
            rc = PMIX_ERR_NOMEM;
            goto fail;
        }
        target_count(a, nn, tcnt);
        for (size_t k = 0; k < napps; k++) {
            if (by_target(a, &apps[k])) {
                c->apps[k].size = 0;
                for (int n = 0; n < nn; n++)
                    c->apps[k].size += daemons_on(a, &apps[k], tcnt, n);
            }
            c->apps[k].first = first;
            first += c->apps[k].size;
        }
        c->nprocs = first;
        free(tcnt);
        tcnt = NULL;
        if (c->nprocs == 0 || c->nprocs > 65535) {
            fprintf(stderr, "pmixrun: spawn of debugger daemons refused: %d daemons for %s\n",
                    c->nprocs, a->target);
            rc = c->nprocs == 0 ? PMIX_ERR_BAD_PARAM : PMIX_ERR_OUT_OF_RESOURCE;
            goto fail;
        }
    }
    int lrc = resolve_apps(c);
    if (lrc != 0) {
        rc = lrc == PMIXRUN_EXIT_NOTFOUND ? PMIX_ERR_JOB_EXE_NOT_FOUND
             : lrc == PMIXRUN_EXIT_NOEXEC ? PMIX_ERR_JOB_APP_NOT_EXECUTABLE
                                          : PMIX_ERR_NOMEM;
        goto fail;
    }
    bool yes = true;
    if ((c->extra_info = PMIx_Info_create(6)) == NULL) {
        rc = PMIX_ERR_NOMEM;
        goto fail;
    }
    PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_SPAWNED, &yes, PMIX_BOOL);
    PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_PARENT_ID, proc, PMIX_PROC);
    if (a->mapby != NULL)
        PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_MAPBY, a->mapby, PMIX_STRING);
    if (a->daemons)
        PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_DEBUGGER_DAEMONS, &yes, PMIX_BOOL);
    if (a->target != NULL) {
        pmix_proc_t t;
        PMIx_Load_procid(&t, a->target, a->trank);
        PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_DEBUG_JOB, a->target, PMIX_STRING);
        PMIx_Info_load(&c->extra_info[c->nextra++], PMIX_DEBUG_TARGET, &t, PMIX_PROC);
    }
    *out = c;
    return PMIX_SUCCESS;
fail:
    free(tcnt);
    spawn_child_free(c);
    return rc;
}

/* The arguments of the cospawned apps' job: debugger daemons (if they say
 * so) whose target is the job `c` just made, launched with it; the job's
 * directives for the stop in init and the end's notice are c's alone. */
static void cospawn_args(const spawn_args *a, const job *c, const pmix_app_t co[], size_t nco,
                         spawn_args *da)
{
    *da = *a;
    da->stop_in_init = da->notify = false;
    da->daemons = false;
    for (size_t k = 0; k < nco; k++)
        da->daemons |= app_says(&co[k], PMIX_DEBUGGER_DAEMONS);
    da->target = c->nspace;
    da->trank = PMIX_RANK_WILDCARD;
    da->tjob = da->daemons ? c : NULL;
    da->total = 0;
}

/* Start spawned job `c` on this node: its directory, its registration
 * and its ranks. On an error before any rank started, `c` is freed (the
 * server forgets it); after, it is the first job's child, marked failed,
 * its started ranks killed. */
static pmix_status_t start_here(job *j, job *c)
{
    pmix_status_t rc;

    c->nlocal = c->nprocs;
    if ((c->ranks = calloc((size_t)c->nprocs, sizeof *c->ranks)) == NULL) {
        rc = PMIX_ERR_NOMEM;
        goto fail;
    }
    for (int i = 0; i < c->nprocs; i++) {
        c->ranks[i].rank = i;
        c->ranks[i].out.fd = c->ranks[i].err.fd = -1;
        c->ranks[i].files[0].fd = c->ranks[i].files[1].fd = c->ranks[i].in_fd = -1;
        c->ranks[i].out.job = c->ranks[i].err.job = c->spawn_no; /* --tag-output */
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
    if (job_register(c) != 0) {
        rc = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
        goto fail;
    }
    /* from here on the ranks are the first job's to reap */
    j->nspawned = c->spawn_no;
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
    spawn_child_free(c);
    return rc;
}

pmix_status_t spawn_up(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                       size_t ninfo, const pmix_app_t apps[], size_t napps,
                       pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx, *c = NULL, *d = NULL;
    spawn_args a, da;
    pmix_app_t *main_ = NULL, *co = NULL;
    size_t nmain = 0, nco = 0;
    pmix_status_t rc;

    if (j->rank_node != NULL || j->cross != NULL)
        return PMIX_ERR_NOT_SUPPORTED; /* pmixd: its spawns go to pmixrun (pmixd_spawn.c) */
    if (j->reason != END_NONE)
        return PMIX_ERR_JOB_TERMINATED; /* the run is ending */
    if ((rc = split_cospawn(apps, napps, &main_, &nmain, &co, &nco)) != PMIX_SUCCESS)
        goto out;
    if ((rc = read_args(j, job_info, ninfo, main_, nmain, &a)) != PMIX_SUCCESS)
        goto out;
    if ((rc = child_make(j, proc, &a, main_, nmain, j->nspawned + 1, &c)) != PMIX_SUCCESS)
        goto out;
    if (nco > 0) { /* PMIX_COSPAWN_APP: a job of their own, beside c's ranks */
        cospawn_args(&a, c, co, nco, &da);
        if ((rc = child_make(j, proc, &da, co, nco, j->nspawned + 2, &d)) != PMIX_SUCCESS)
            goto out;
    }
    int running = live_ranks(j), more = c->nprocs + (d != NULL ? d->nprocs : 0);
    if (j->no_oversubscribe && running + more > j->ncores) {
        fprintf(stderr,
                "pmixrun: spawn of %d processes refused: %d processes already run on %s, which "
                "has %d core%s (--nooversubscribe)\n",
                more, running, j->hostname, j->ncores, j->ncores == 1 ? "" : "s");
        rc = PMIX_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    rc = start_here(j, c);
    c = NULL; /* freed, or the first job's */
    if (rc != PMIX_SUCCESS)
        goto out;
    job *main_job = j->children; /* c, started */
    if (d != NULL) {
        rc = start_here(j, d);
        d = NULL;
        if (rc != PMIX_SUCCESS) { /* the job goes too: it was asked with its daemons */
            main_job->spawn_failed = true;
            kill_started(main_job);
            goto out;
        }
    }
    cbfunc(PMIX_SUCCESS, main_job->nspace, cbdata);
out:
    if (c != NULL)
        spawn_child_free(c);
    if (d != NULL)
        spawn_child_free(d);
    free(main_);
    free(co);
    return rc;
}

/* ---- pmixrun --nodes: the plan of a spawn over the daemons ---- */

/* The processes that still run on each node (first job and spawned
 * jobs), into used[0 .. nnodes). */
static void count_used(const job *j, int *used)
{
    for (int r = 0; r < j->nprocs; r++)
        if (!j->ranks[r].reaped)
            used[j->rank_node[r]]++;
    for (const job *c = j->children; c != NULL; c = c->next_child)
        for (int r = 0; r < c->nprocs && !c->spawn_failed; r++)
            if (!c->ranks[r].reaped)
                used[c->rank_node[r]]++;
}

/* Place app `ap`'s ranks (first .. first + size - 1 of c) on the nodes
 * `allowed` lets it use: round robin under PMIX_MAPBY node, else in
 * blocks; where slots are known (`free_` not NULL) only in free slots.
 * PMIX_ERR_OUT_OF_RESOURCE (message printed) when they do not fit. */
static pmix_status_t place_app(const job *j, job *c, const job_app *ap, const bool *allowed,
                               bool by_node, int *free_)
{
    int k = 0, room = 0;
    for (int n = 0; n < j->nnodes; n++)
        if (allowed[n]) {
            k++;
            room += free_ != NULL && free_[n] > 0 ? free_[n] : 0;
        }
    if (free_ != NULL && room < ap->size) {
        fprintf(stderr,
                "pmixrun: spawn of %s refused: %d process%s asked, %d free slot%s on the nodes "
                "it may use\n",
                c->nspace, ap->size, ap->size == 1 ? "" : "es", room, room == 1 ? "" : "s");
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    if (k == 0)
        return PMIX_ERR_BAD_PARAM; /* an empty host list */
    int base = ap->size / k, extra = ap->size % k, n = -1, left = 0, seen = 0;
    for (int r = ap->first; r < ap->first + ap->size; r++) {
        if (by_node || free_ != NULL) {
            /* the next allowed node with room: round robin, or fill each in turn */
            if (by_node || n < 0 || free_[n] == 0) {
                do
                    n = (n + 1) % j->nnodes;
                while (!allowed[n] || (free_ != NULL && free_[n] <= 0));
            }
            if (free_ != NULL)
                free_[n]--;
        } else {
            while (left == 0) { /* blocks as even as the first job's */
                do
                    n++;
                while (!allowed[n]);
                left = base + (seen++ < extra);
            }
            left--;
        }
        c->rank_node[r] = (uint32_t)n;
    }
    return PMIX_SUCCESS;
}

/* One job of a plan (spawn_plan): `no` its number, `a` what was asked. */
static pmix_status_t plan_one(job *j, const pmix_proc_t *proc, const spawn_args *args,
                              const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                              size_t napps, int no, job **out)
{
    job *c = NULL;
    spawn_args a = *args;
    pmix_status_t rc;
    int *free_ = NULL, cores = 0, *tcnt = NULL;
    bool *allowed = NULL, *job_hosts = NULL, any_job_host = false;
    char bad[256];

    *out = NULL;
    if ((rc = child_make(j, proc, &a, apps, napps, no, &c)) != PMIX_SUCCESS)
        return rc;
    c->nnodes = j->nnodes;
    c->node_names = j->node_names; /* borrowed */
    rc = PMIX_ERR_NOMEM;
    if ((c->rank_node = calloc((size_t)c->nprocs, sizeof *c->rank_node)) == NULL ||
        (c->ranks = calloc((size_t)c->nprocs, sizeof *c->ranks)) == NULL ||
        (allowed = calloc((size_t)j->nnodes, sizeof *allowed)) == NULL ||
        (job_hosts = calloc((size_t)j->nnodes, sizeof *job_hosts)) == NULL ||
        (tcnt = calloc((size_t)j->nnodes, sizeof *tcnt)) == NULL)
        goto fail;
    target_count(&a, j->nnodes, tcnt);
    c->nlocal = c->nprocs; /* pmixrun keeps a rank_proc per rank, filled from reports */
    for (int i = 0; i < c->nprocs; i++) {
        c->ranks[i].rank = i;
        c->ranks[i].out.fd = c->ranks[i].err.fd = -1;
        c->ranks[i].files[0].fd = c->ranks[i].files[1].fd = c->ranks[i].in_fd = -1;
    }
    /* Slots: --host name:slots or --map-by ppr, or the cores of a node
     * under --nooversubscribe; else none (the ranks go in blocks, as the
     * first job's do). */
    if (j->node_slots == NULL && j->no_oversubscribe &&
        (cores = job_count_objs(j, HWLOC_OBJ_CORE)) <= 0)
        cores = 1;
    if (j->node_slots != NULL || j->no_oversubscribe) {
        if ((free_ = calloc((size_t)j->nnodes, sizeof *free_)) == NULL)
            goto fail;
        count_used(j, free_);
        for (int n = 0; n < j->nnodes; n++)
            free_[n] = (j->node_slots != NULL ? j->node_slots[n] : cores) - free_[n];
    }
    for (size_t i = 0; i < ninfo; i++)
        if ((key_is(&job_info[i], PMIX_HOST) || key_is(&job_info[i], PMIX_ADD_HOST)) &&
            hosts_to_nodes(j, job_info[i].value.data.string, job_hosts, bad, sizeof bad))
            any_job_host = true;
    bool by_node = a.mapby != NULL &&
                   (strncasecmp(a.mapby, "node", 4) == 0 || strncasecmp(a.mapby, "bynode", 6) == 0);
    for (size_t k = 0; k < napps; k++) {
        bool own = false;
        if (by_target(&a, &apps[k])) { /* beside the target's ranks, node by node */
            int r = c->apps[k].first;
            for (int n = 0; n < j->nnodes; n++)
                for (int m = daemons_on(&a, &apps[k], tcnt, n); m > 0; m--)
                    c->rank_node[r++] = (uint32_t)n;
            continue;
        }
        if (apps[k].maxprocs == 0 && a.mapby != NULL && strncasecmp(a.mapby, "ppr:", 4) == 0 &&
            strcasestr(a.mapby, ":node") != NULL) {
            /* ppr:N:node: N on each node (default_count gave N in all) */
            int per = c->apps[k].size, r;
            c->apps[k].size = per * j->nnodes;
            for (size_t m = k + 1; m < napps; m++)
                c->apps[m].first += per * (j->nnodes - 1);
            c->nprocs += per * (j->nnodes - 1);
            rank_proc *more = realloc(c->ranks, (size_t)c->nprocs * sizeof *more);
            uint32_t *nodes =
                more != NULL ? realloc(c->rank_node, (size_t)c->nprocs * sizeof *nodes) : NULL;
            if (more != NULL)
                c->ranks = more;
            if (nodes == NULL)
                goto fail;
            c->rank_node = nodes;
            for (int i = 0; i < c->nprocs; i++) {
                memset(&c->ranks[i], 0, sizeof c->ranks[i]);
                c->ranks[i].rank = i;
                c->ranks[i].out.fd = c->ranks[i].err.fd = -1;
                c->ranks[i].files[0].fd = c->ranks[i].files[1].fd = c->ranks[i].in_fd = -1;
            }
            c->nlocal = c->nprocs;
            r = c->apps[k].first;
            for (int n = 0; n < j->nnodes; n++)
                for (int m = 0; m < per; m++)
                    c->rank_node[r++] = (uint32_t)n;
            continue;
        }
        memset(allowed, 0, (size_t)j->nnodes * sizeof *allowed);
        for (size_t i = 0; i < apps[k].ninfo; i++)
            if (key_is(&apps[k].info[i], PMIX_HOST) &&
                hosts_to_nodes(j, apps[k].info[i].value.data.string, allowed, bad, sizeof bad))
                own = true;
        for (int n = 0; n < j->nnodes && !own; n++)
            allowed[n] = !any_job_host || job_hosts[n];
        if ((rc = place_app(j, c, &c->apps[k], allowed, by_node, free_)) != PMIX_SUCCESS)
            goto fail;
    }
    free(free_);
    free(allowed);
    free(job_hosts);
    free(tcnt);
    *out = c;
    return PMIX_SUCCESS;
fail:
    free(free_);
    free(allowed);
    free(job_hosts);
    free(tcnt);
    c->node_names = NULL;
    spawn_child_free(c);
    return rc;
}

pmix_status_t spawn_plan(job *j, const pmix_proc_t *proc, const pmix_info_t job_info[],
                         size_t ninfo, const pmix_app_t apps[], size_t napps, job **out)
{
    pmix_app_t *main_ = NULL, *co = NULL;
    size_t nmain = 0, nco = 0;
    spawn_args a, da;
    job *c = NULL, *d = NULL;
    pmix_status_t rc;

    *out = NULL;
    if (j->reason != END_NONE)
        return PMIX_ERR_JOB_TERMINATED;
    if ((rc = split_cospawn(apps, napps, &main_, &nmain, &co, &nco)) != PMIX_SUCCESS)
        goto out;
    if ((rc = read_args(j, job_info, ninfo, main_, nmain, &a)) != PMIX_SUCCESS)
        goto out;
    if (a.stdin_to != STDIN_NONE) {
        rc = PMIX_ERR_NOT_SUPPORTED; /* no push reaches the daemons' ranks yet */
        goto out;
    }
    if ((rc = plan_one(j, proc, &a, job_info, ninfo, main_, nmain, j->nspawned + 1, &c)) !=
        PMIX_SUCCESS)
        goto out;
    if (nco > 0) {
        cospawn_args(&a, c, co, nco, &da);
        if ((rc = plan_one(j, proc, &da, NULL, 0, co, nco, j->nspawned + 2, &d)) != PMIX_SUCCESS) {
            c->node_names = NULL;
            spawn_child_free(c);
            goto out;
        }
        c->co = d;
        d->co = c;
        d->co_daemons = true;
    }
    *out = c;
out:
    free(main_);
    free(co);
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
    px_posix_ops()->lock(j->plat); /* called from the main loop, outside a callback */
    spawn_notify_end(j, c->nspace, &c->spawner, worst);
    px_posix_ops()->unlock(j->plat);
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
        job_signal_ranks(c, sig);
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
        spawn_child_free(c);
    }
}
