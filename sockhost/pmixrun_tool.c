/*
 * pmixrun_tool.c - tools that attach to a running job: how they find it,
 * their names, and the job's process table.
 *
 * tool_start (after the server listens) lets the server engine accept
 * tools of pmixrun's user (px_server_tools, under the name
 * "<job namespace>.srv", rank the node) and writes the rendezvous files by
 * which a tool finds the server (api/px_rndz.h, OpenPMIx's names), 0600 in
 * the job's private directory (mode 0700), which goes when pmixrun exits:
 * pmix.<host>.tool.<pid> (PMIX_SERVER_PIDINFO), and
 * pmix.<host>.tool.<namespace> for the server's namespace and for the
 * job's, so that a tool finds the job's server by the name the ranks know
 * (PMIX_SERVER_NSPACE); with --system-server also the system file
 * pmix.sys.<host> (0644, in the system directory), which tool_stop removes
 * if it still holds this server's URI. A system server whose file names
 * a server that still accepts connections refuses to start: one machine
 * has one system server, and the first keeps its file. The engine checks a tool's uid; the two
 * upcalls of the host table (pmixrun_job.c) name each tool and answer its queries:
 *
 *   tool_connected   the tool gets namespace "<job namespace>.tool.<n>",
 *                    rank 0, n counting from 1; or the PMIX_TOOL_NSPACE and
 *                    PMIX_TOOL_RANK it asked for, unless that is the job's
 *                    namespace (refused).
 *   query            PMIX_QUERY_NAMESPACES: the job's namespace (none for a
 *                    system server) and its running spawned jobs'.
 *                    PMIX_QUERY_SPAWN_SUPPORT, PMIX_QUERY_DEBUG_SUPPORT:
 *                    the attributes pmixrun_spawn.c takes, comma-separated.
 *                    PMIX_QUERY_NAMESPACE_INFO: an array with one array
 *                    per job: PMIX_NSPACE, PMIX_CMD_LINE (as OpenPMIx).
 *                    PMIX_QUERY_PROC_TABLE, PMIX_QUERY_LOCAL_PROC_TABLE
 *                    (every rank is local): for the job's namespace or a
 *                    spawned job's (the qualifier PMIX_NSPACE; the job's
 *                    if absent) one
 *                    pmix_proc_info_t per rank: host, executable (the path
 *                    pmixrun ran), pid (0 until started), exit code, state.
 *                    PMIX_QUERY_JOB_STATUS of the job: PMIX_JOB_STATE_RUNNING
 *                    (PMIX_JOB_STATE_TERMINATED_WITH_ERROR once pmixrun is
 *                    stopping it; a daemon does not know, and says running).
 *                    PMIX_QUERY_SPAWN_SUPPORT, PMIX_QUERY_DEBUG_SUPPORT: the
 *                    attributes supported, comma-separated (SPAWN_SUPPORT,
 *                    DEBUG_SUPPORT below).
 *
 * Both upcalls run on the main thread, the loop's only one, with the job
 * as their context, and answer at once.
 */
#define _GNU_SOURCE /* mkostemp */
#include <fcntl.h>
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/px_rndz.h"
#include "pmixrun.h"

bool tool_support(const job *j)
{
    /* pmixrun alone, or a daemon of a one-node job: every rank is here;
     * pmixrun --nodes: it asks its daemons (pmixrun_ntool.c) */
    return j->nnodes <= 1 || j->nodes != NULL;
}

/* True if dir/name holds "unix:<path>" and a server accepts a connection
 * at that path (a file left by a server that died names a socket nobody
 * listens on, or none). */
static bool system_server_alive(const char *dir, const char *name)
{
    char path[1200], uri[1024];
    struct sockaddr_un sa = {.sun_family = AF_UNIX};

    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    bool got = fgets(uri, sizeof uri, f) != NULL;
    fclose(f);
    uri[strcspn(uri, "\n")] = '\0';
    if (!got || strncmp(uri, "unix:", 5) != 0 || strlen(uri + 5) >= sizeof sa.sun_path)
        return false;
    memcpy(sa.sun_path, uri + 5, strlen(uri + 5) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool alive = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return alive;
}

int tool_start(job *j)
{
    pmix_proc_t self;
    char name[600], key[32];
    pmix_status_t rc;

    if (!tool_support(j))
        return 0;
    PMIx_Load_procid(&self, "", (pmix_rank_t)j->node);
    snprintf(self.nspace, sizeof self.nspace, "%.*s.srv", PMIX_MAX_NSLEN - 4, j->nspace);
    px_posix_ops()->lock(j->plat);
    rc = px_server_tools(j->srv, &self, (uint32_t)getuid());
    px_posix_ops()->unlock(j->plat);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixrun: cannot accept tools: %s\n", PMIx_Error_string(rc));
        return -1;
    }
    snprintf(key, sizeof key, "%ld", (long)getpid());
    const char *keys[] = {key, self.nspace, j->nspace};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        px_rndz_name(keys[i], name, sizeof name);
        if (px_rndz_write(j->topdir, name, j->uri, 0600) != 0) {
            fprintf(stderr, "pmixrun: cannot write the rendezvous file %s/%s: %s\n", j->topdir,
                    name, strerror(errno));
            return -1;
        }
    }
    if (j->system_server) {
        char dir[512];
        px_rndz_system_dir(dir, sizeof dir);
        px_rndz_name(NULL, name, sizeof name);
        if (system_server_alive(dir, name)) {
            fprintf(stderr,
                    "pmixrun: a system server already runs on this machine (%s/%s names it and "
                    "it accepts connections); stop it first (a tool's terminate request, or "
                    "SIGTERM to its pmixrun), or give this one another PMIX_SYSTEM_TMPDIR\n",
                    dir, name);
            return -1;
        }
        if (px_rndz_write(dir, name, j->uri, 0644) != 0) {
            fprintf(stderr, "pmixrun: cannot write the system rendezvous file %s/%s: %s\n", dir,
                    name, strerror(errno));
            return -1;
        }
        j->sys_file = true;
    }
    return 0;
}

void tool_stop(job *j)
{
    char dir[512], name[600], path[1200], held[1024];

    if (!j->sys_file)
        return;
    j->sys_file = false;
    px_rndz_system_dir(dir, sizeof dir);
    px_rndz_name(NULL, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    bool ours = fgets(held, sizeof held, f) != NULL;
    fclose(f);
    held[strcspn(held, "\n")] = '\0';
    if (ours && j->uri != NULL && strcmp(held, j->uri) == 0) /* not a newer server's */
        px_rndz_remove(dir, name);
}

void tool_connected_up(void *hctx, const pmix_info_t info[], size_t ninfo,
                       pmix_tool_connection_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx;
    pmix_proc_t p;
    const char *want = NULL;
    pmix_rank_t rank = 0;

    for (size_t i = 0; i < ninfo; i++) {
        if (strncmp(info[i].key, PMIX_TOOL_NSPACE, PMIX_MAX_KEYLEN) == 0 &&
            info[i].value.type == PMIX_STRING)
            want = info[i].value.data.string;
        else if (strncmp(info[i].key, PMIX_TOOL_RANK, PMIX_MAX_KEYLEN) == 0 &&
                 info[i].value.type == PMIX_PROC_RANK)
            rank = info[i].value.data.rank;
    }
    memset(&p, 0, sizeof(p));
    if (want != NULL && want[0] != '\0') {
        if (strncmp(want, j->nspace, PMIX_MAX_NSLEN) == 0) {
            cbfunc(PMIX_ERR_NO_PERMISSIONS, NULL, cbdata); /* a tool is no rank */
            return;
        }
        PMIx_Load_procid(&p, want, rank);
    } else {
        unsigned n = ++j->tools_named;
        char ns[PMIX_MAX_NSLEN + 32];
        snprintf(ns, sizeof ns, "%s.tool.%u", j->nspace, n);
        if (strlen(ns) > PMIX_MAX_NSLEN) {
            cbfunc(PMIX_ERR_BAD_PARAM, NULL, cbdata);
            return;
        }
        PMIx_Load_procid(&p, ns, 0);
    }
    cbfunc(PMIX_SUCCESS, &p, cbdata);
}

pmix_proc_state_t tool_rank_state(const rank_proc *r, pid_t pid)
{
    if (r->reaped) {
        if (r->signaled)
            return PMIX_PROC_STATE_ABORTED_BY_SIG;
        if (r->code != 0)
            return PMIX_PROC_STATE_TERM_NON_ZERO;
        return r->finalized ? PMIX_PROC_STATE_TERMINATED : PMIX_PROC_STATE_TERM_WO_SYNC;
    }
    if (pid == 0)
        return PMIX_PROC_STATE_PREPPED;
    if (r->connected && !r->finalized)
        return PMIX_PROC_STATE_CONNECTED;
    return PMIX_PROC_STATE_RUNNING;
}

/* Whether rank `r` runs on host `host` (NULL: any), by the name its
 * daemon reported (pmixrun --nodes) or its node's. */
static bool on_host(job *j, const rank_proc *r, const char *host)
{
    const char *h = ntool_host(j, r->rank);
    if (host == NULL)
        return true;
    return strcmp(h != NULL ? h : job_node_name(j, job_node_of(j, r->rank)), host) == 0;
}

/* The job's table into `out` (key `key`): its ranks on host `host`, or
 * all of them if NULL. Over daemons the daemons' view of each rank
 * (ntool_proc_info) replaces pmixrun's. */
static pmix_status_t proc_table(job *j, const char *key, const char *host, pmix_info_t *out)
{
    size_t count = 0;
    for (int i = 0; i < j->nlocal; i++)
        count += on_host(j, &j->ranks[i], host);
    pmix_data_array_t *da = count > 0 ? PMIx_Data_array_create(count, PMIX_PROC_INFO) : NULL;
    pmix_data_array_t empty = {.type = PMIX_PROC_INFO, .size = 0, .array = NULL};
    pmix_proc_info_t *pi;
    pmix_status_t rc = PMIX_SUCCESS;
    size_t k = 0;

    if (da == NULL && count > 0)
        return PMIX_ERR_NOMEM;
    pi = da != NULL ? da->array : NULL;
    for (int i = 0; i < j->nlocal; i++) {
        rank_proc *r = &j->ranks[i];
        pid_t pid = r->pid;
        if (!on_host(j, r, host))
            continue;
        PMIx_Load_procid(&pi[k].proc, j->nspace, (pmix_rank_t)r->rank);
        pi[k].hostname = strdup(job_node_name(j, job_node_of(j, r->rank)));
        job_app *app = job_app_of(j, r->rank);
        pi[k].executable_name = strdup(app != NULL && app->prog != NULL ? app->prog : "");
        pi[k].pid = pid;
        pi[k].state = tool_rank_state(r, pid);
        /* a job spawned over daemons: pmixrun knows its ranks by their
         * end only, and they run once every daemon said they started */
        if (pid == 0 && !r->reaped && j->parent != NULL && j->parent->nodes != NULL &&
            j->spawn_answered && !j->spawn_failed)
            pi[k].state = PMIX_PROC_STATE_RUNNING;
        pi[k].exit_code = r->reaped ? r->code : 0;
        if (pi[k].hostname == NULL || pi[k].executable_name == NULL)
            rc = PMIX_ERR_NOMEM;
        else
            ntool_proc_info(j, r, &pi[k]);
        k++;
    }
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Info_load(out, key, da != NULL ? da : &empty, PMIX_DATA_ARRAY);
    if (da != NULL)
        PMIx_Data_array_free(da);
    return rc;
}

/* The job's command line: each application context's program and
 * arguments, " : " between contexts (as they were given). NULL if no
 * memory. */
static char *cmd_line(job *j)
{
    char **words = NULL;

    for (int a = 0; a < j->napps; a++) {
        if (a > 0 && PMIx_Argv_append_nosize(&words, ":") != PMIX_SUCCESS)
            goto fail;
        for (size_t k = 0; j->apps[a].argv != NULL && j->apps[a].argv[k] != NULL; k++)
            if (PMIx_Argv_append_nosize(&words, j->apps[a].argv[k]) != PMIX_SUCCESS)
                goto fail;
    }
    if (words == NULL)
        return strdup("");
    char *cmd = PMIx_Argv_join(words, ' ');
    PMIx_Argv_free(words);
    return cmd;
fail:
    PMIx_Argv_free(words);
    return NULL;
}

/* One job's [PMIX_NSPACE, PMIX_CMD_LINE] into `o`. */
static pmix_status_t nspace_entry(job *j, pmix_info_t *o)
{
    pmix_data_array_t *inner = PMIx_Data_array_create(2, PMIX_INFO);
    char *cmd = cmd_line(j);
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (inner != NULL && cmd != NULL) {
        pmix_info_t *in = inner->array;
        PMIx_Info_load(&in[0], PMIX_NSPACE, j->nspace, PMIX_STRING);
        PMIx_Info_load(&in[1], PMIX_CMD_LINE, cmd, PMIX_STRING);
        rc = PMIx_Info_load(o, PMIX_QUERY_NAMESPACE_INFO, inner, PMIX_DATA_ARRAY);
    }
    free(cmd);
    PMIx_Data_array_free(inner);
    return rc;
}

/* PMIX_QUERY_NAMESPACE_INFO: [[PMIX_NSPACE, PMIX_CMD_LINE]...], one per
 * job PMIX_QUERY_NAMESPACES names (the same jobs, in the same order). */
static pmix_status_t nspace_info(job *j, const char *key, pmix_info_t *out)
{
    size_t n = j->system_server ? 0 : 1;
    for (job *c = j->children; c != NULL; c = c->next_child)
        if (!c->spawn_ended && !c->spawn_failed)
            n++;
    pmix_data_array_t *outer = PMIx_Data_array_create(n, PMIX_INFO);
    pmix_status_t rc = outer != NULL || n == 0 ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    size_t k = 0;

    if (rc == PMIX_SUCCESS && !j->system_server)
        rc = nspace_entry(j, &((pmix_info_t *)outer->array)[k++]);
    for (job *c = j->children; c != NULL && rc == PMIX_SUCCESS; c = c->next_child)
        if (!c->spawn_ended && !c->spawn_failed)
            rc = nspace_entry(c, &((pmix_info_t *)outer->array)[k++]);
    if (rc == PMIX_SUCCESS) {
        pmix_data_array_t empty = {.type = PMIX_INFO, .size = 0, .array = NULL};
        rc = PMIx_Info_load(out, key, outer != NULL ? outer : &empty, PMIX_DATA_ARRAY);
    }
    if (outer != NULL)
        PMIx_Data_array_free(outer);
    return rc;
}

/* The job named `ns` (NULL: the first job): the first job or one it
 * spawned. NULL if none, or if `ns` is NULL on a system server (no job of
 * its own). */
static job *job_named(job *j, const char *ns)
{
    if (ns == NULL)
        return j->system_server ? NULL : j;
    if (!j->system_server && strncmp(ns, j->nspace, PMIX_MAX_NSLEN) == 0)
        return j;
    for (job *c = j->children; c != NULL; c = c->next_child)
        if (strncmp(ns, c->nspace, PMIX_MAX_NSLEN) == 0)
            return c;
    return NULL;
}

/* PMIX_QUERY_NAMESPACES: the running jobs' namespaces, comma-separated
 * (the first job's, unless a system server, then the spawned ones still
 * running). */
static pmix_status_t namespaces(job *j, const char *key, pmix_info_t *out)
{
    char **words = NULL;
    pmix_status_t rc = PMIX_SUCCESS;

    if (!j->system_server)
        rc = PMIx_Argv_append_nosize(&words, j->nspace);
    for (job *c = j->children; c != NULL && rc == PMIX_SUCCESS; c = c->next_child)
        if (!c->spawn_ended && !c->spawn_failed)
            rc = PMIx_Argv_append_nosize(&words, c->nspace);
    char *list = rc != PMIX_SUCCESS ? NULL
                 : words == NULL    ? strdup("")
                                    : PMIx_Argv_join(words, ',');
    PMIx_Argv_free(words);
    if (list == NULL)
        return PMIX_ERR_NOMEM;
    rc = PMIx_Info_load(out, key, list, PMIX_STRING);
    free(list);
    return rc;
}

/* PMIX_QUERY_SPAWN_SUPPORT: the spawn directives pmixrun_spawn.c acts on,
 * where spawn is there at all (j->spawn: pmixrun, its daemons through it;
 * none where a host does not spawn, as for PMIX_QUERY_DEBUG_SUPPORT).
 * PMIX_COSPAWN_APP is taken but listed with the debugger's attributes
 * only: OpenPMIx's debugger example, finding it here, takes a branch it
 * leaves empty and waits for ever (docs/abi.md). Over daemons the output
 * reaches the spawner (pmixrun_nodes.c relays it), its input does not: no
 * PMIX_STDIN_TGT. */
#define SPAWN_SUPPORT_BASE                                                                 \
    PMIX_MAPBY "," PMIX_WDIR "," PMIX_HOST "," PMIX_ADD_HOST "," PMIX_NOTIFY_COMPLETION    \
               "," PMIX_DEBUG_STOP_IN_INIT "," PMIX_DEBUGGER_DAEMONS "," PMIX_DEBUG_TARGET \
               "," PMIX_DEBUG_JOB "," PMIX_DEBUG_DAEMONS_PER_NODE "," PMIX_DEBUG_DAEMONS_PER_PROC
static const char spawn_support[] =
    SPAWN_SUPPORT_BASE "," PMIX_FWD_STDOUT "," PMIX_FWD_STDERR "," PMIX_STDIN_TGT;
static const char spawn_support_nodes[] =
    SPAWN_SUPPORT_BASE "," PMIX_FWD_STDOUT "," PMIX_FWD_STDERR;

/* PMIX_QUERY_DEBUG_SUPPORT: the debugger attributes pmixrun_spawn.c takes
 * (stop in init, debugger daemons placed by their target, cospawn). */
static const char debug_support[] = PMIX_DEBUG_STOP_IN_INIT
    "," PMIX_DEBUGGER_DAEMONS "," PMIX_DEBUG_TARGET "," PMIX_DEBUG_JOB
    "," PMIX_DEBUG_DAEMONS_PER_NODE "," PMIX_DEBUG_DAEMONS_PER_PROC "," PMIX_COSPAWN_APP;

typedef struct answers {
    pmix_info_t *info;
    size_t n;
} answers;

static void release_answers(void *cbdata)
{
    answers *a = cbdata;

    PMIx_Info_free(a->info, a->n);
    free(a);
}

pmix_status_t tool_query_up(void *hctx, const pmix_proc_t *requestor, const pmix_query_t queries[],
                            size_t nqueries, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx;
    size_t nkeys = 0, n = 0;
    answers *a;

    if (ntool_wants(j, queries, nqueries)) /* over daemons: ask them first */
        return ntool_query(j, requestor, queries, nqueries, cbfunc, cbdata);

    for (size_t q = 0; q < nqueries; q++)
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL; k++)
            nkeys++;
    if (nkeys == 0)
        return PMIX_ERR_BAD_PARAM;
    if ((a = calloc(1, sizeof *a)) == NULL || (a->info = PMIx_Info_create(nkeys)) == NULL) {
        free(a);
        return PMIX_ERR_NOMEM;
    }
    a->n = nkeys;
    for (size_t q = 0; q < nqueries; q++) {
        const char *ns = NULL, *host = NULL;
        for (size_t i = 0; i < queries[q].nqual; i++) {
            if (strncmp(queries[q].qualifiers[i].key, PMIX_NSPACE, PMIX_MAX_KEYLEN) == 0 &&
                queries[q].qualifiers[i].value.type == PMIX_STRING)
                ns = queries[q].qualifiers[i].value.data.string;
            if (strncmp(queries[q].qualifiers[i].key, PMIX_HOSTNAME, PMIX_MAX_KEYLEN) == 0 &&
                queries[q].qualifiers[i].value.type == PMIX_STRING)
                host = queries[q].qualifiers[i].value.data.string;
        }
        /* no PMIX_NSPACE: the asker's own job if it is one of ours (a rank
         * of a spawned job), else the first job (a tool) */
        job *t = job_named(j, ns != NULL ? ns : requestor->nspace);
        if (ns == NULL && t == NULL)
            t = job_named(j, NULL);
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL; k++) {
            const char *key = queries[q].keys[k];
            if (strcmp(key, PMIX_QUERY_NAMESPACES) == 0) {
                if (namespaces(j, key, &a->info[n]) == PMIX_SUCCESS)
                    n++;
            } else if (strcmp(key, PMIX_QUERY_SPAWN_SUPPORT) == 0) {
                const char *list = j->spawn == NULL                    ? ""
                                   : j->nnodes > 1 || j->cross != NULL ? spawn_support_nodes
                                                                       : spawn_support;
                if (PMIx_Info_load(&a->info[n], key, list, PMIX_STRING) == PMIX_SUCCESS)
                    n++;
            } else if (strcmp(key, PMIX_QUERY_DEBUG_SUPPORT) == 0) {
                if (PMIx_Info_load(&a->info[n], key, j->spawn != NULL ? debug_support : "",
                                   PMIX_STRING) == PMIX_SUCCESS)
                    n++;
            } else if (strcmp(key, PMIX_QUERY_NAMESPACE_INFO) == 0) {
                if (nspace_info(j, key, &a->info[n]) == PMIX_SUCCESS)
                    n++;
            } else if (t != NULL && strcmp(key, PMIX_QUERY_JOB_STATUS) == 0) {
                pmix_job_state_t st =
                    t == j            ? (j->reason == END_NONE ? PMIX_JOB_STATE_RUNNING
                                                               : PMIX_JOB_STATE_TERMINATED_WITH_ERROR)
                    : t->spawn_failed ? PMIX_JOB_STATE_TERMINATED_WITH_ERROR
                    : t->spawn_ended  ? PMIX_JOB_STATE_TERMINATED
                                      : PMIX_JOB_STATE_RUNNING;
                if (PMIx_Info_load(&a->info[n], key, &st, PMIX_JOB_STATE) == PMIX_SUCCESS)
                    n++;
            } else if (t != NULL && strcmp(key, PMIX_QUERY_PROC_TABLE) == 0) {
                if (proc_table(t, key, NULL, &a->info[n]) == PMIX_SUCCESS)
                    n++;
            } else if (t != NULL && strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0) {
                /* over daemons: the ranks on PMIX_HOSTNAME, or on this host */
                const char *on = t->nodes == NULL ? NULL : host != NULL ? host : t->hostname;
                if (proc_table(t, key, on, &a->info[n]) == PMIX_SUCCESS)
                    n++;
            } else if (t == j && strcmp(key, NTOOL_QUERY_STACKS) == 0) {
                if (ntool_stacks(j, key, &a->info[n]) == PMIX_SUCCESS)
                    n++;
            }
        }
    }
    if (n == 0) {
        release_answers(a);
        cbfunc(PMIX_ERR_NOT_FOUND, NULL, 0, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    cbfunc(n == nkeys ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS, a->info, n, cbdata,
           release_answers, a);
    return PMIX_SUCCESS;
}
