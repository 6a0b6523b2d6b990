/*
 * pmixrun_tool.c - tools that attach to a running job: their identities
 * and the job's process table.
 *
 * pmixrun's server accepts tools of its user (PMIX_SERVER_TOOL_SUPPORT)
 * and is named "<job namespace>.srv", rank 0 (PMIX_SERVER_NSPACE).
 * The library writes the rendezvous file by which a tool finds it by pid,
 * pmix.<host>.tool.<pid>, in the job's private directory (mode 0700), as
 * OpenPMIx names it; tool_rendezvous adds pmix.<host>.tool.<namespace>
 * beside it, the same URI under the job's namespace, so that a tool finds
 * the job's server by the name the ranks know (PMIX_SERVER_NSPACE). Both
 * go with the directory when pmixrun exits (docs/user-guide.md, "Tools").
 * The library checks a tool's uid; this file names each tool and answers
 * its queries:
 *
 *   tool_connected   the tool gets namespace "<job namespace>.tool.<n>",
 *                    rank 0, n counting from 1; or the PMIX_TOOL_NSPACE and
 *                    PMIX_TOOL_RANK it asked for, unless that is the job's
 *                    namespace (refused).
 *   query            PMIX_QUERY_NAMESPACES: the job's namespace.
 *                    PMIX_QUERY_NAMESPACE_INFO: an array with one array
 *                    per job: PMIX_NSPACE, PMIX_CMD_LINE (as OpenPMIx).
 *                    PMIX_QUERY_PROC_TABLE, PMIX_QUERY_LOCAL_PROC_TABLE
 *                    (every rank is local): for the job's namespace (the
 *                    qualifier PMIX_NSPACE; the job's if absent) one
 *                    pmix_proc_info_t per rank: host, executable (the path
 *                    pmixrun ran), pid (0 until started), exit code, state.
 *
 * Threads. Both upcalls run on the library's progress thread and answer
 * at once. A rank's pid and end (reaped, code, signaled) are written once
 * by the main thread, connected and finalized under job.mu by upcalls; the
 * table reads them under job.mu, with the main thread's fields read
 * atomically (each is one word set once: a reader sees either before or
 * after, never a mix).
 */
#define _GNU_SOURCE /* mkostemp */
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmixrun.h"

static job *t_job;          /* the job the module's upcalls serve */
static atomic_uint t_count; /* tools named so far */

bool tool_support(const job *j)
{
    /* pmixrun alone, or a daemon of a one-node job: every rank is here */
    return j->nnodes <= 1;
}

size_t tool_server_setup(job *j, pmix_server_module_t *mod, pmix_info_t *info)
{
    bool yes = true;
    char ns[PMIX_MAX_NSLEN + 1];
    pmix_rank_t rank = (pmix_rank_t)j->node;

    if (!tool_support(j))
        return 0;
    t_job = j;
    mod->tool_connected = tool_connected_up;
    mod->query = tool_query_up;
    /* the server's own name, what a tool's PMIx_tool_get_servers says:
     * the job's namespace with ".srv", rank the node */
    snprintf(ns, sizeof ns, "%.*s.srv", PMIX_MAX_NSLEN - 4, j->nspace);
    PMIx_Info_load(&info[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIx_Info_load(&info[1], PMIX_SERVER_NSPACE, ns, PMIX_STRING);
    PMIx_Info_load(&info[2], PMIX_SERVER_RANK, &rank, PMIX_PROC_RANK);
    return TOOL_SERVER_INFO;
}

int tool_rendezvous(job *j)
{
    char from[PATH_MAX], to[PATH_MAX], tmp[PATH_MAX], uri[PATH_MAX + 8];
    ssize_t n;
    int fd;

    if (!tool_support(j))
        return 0;
    if (snprintf(from, sizeof from, "%s/pmix.%s.tool.%ld", j->topdir, j->hostname,
                 (long)getpid()) >= (int)sizeof from ||
        snprintf(to, sizeof to, "%s/pmix.%s.tool.%s", j->topdir, j->hostname, j->nspace) >=
            (int)sizeof to ||
        snprintf(tmp, sizeof tmp, "%s.XXXXXX", to) >= (int)sizeof tmp)
        return -1;
    if ((fd = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return -1; /* the library wrote none: no tool can find us by pid either */
    n = read(fd, uri, sizeof uri);
    close(fd);
    if (n <= 0)
        return -1;
    if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) /* 0600, in our 0700 directory */
        return -1;
    if (write(fd, uri, (size_t)n) != n || close(fd) != 0 || rename(tmp, to) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

void tool_connected_up(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                       void *cbdata)
{
    job *j = t_job;
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
        unsigned n = atomic_fetch_add(&t_count, 1) + 1;
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

/* The state of rank `r` as PMIx names it; under j->mu. */
static pmix_proc_state_t rank_state(rank_proc *r, pid_t pid)
{
    if (__atomic_load_n(&r->reaped, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&r->signaled, __ATOMIC_RELAXED))
            return PMIX_PROC_STATE_ABORTED_BY_SIG;
        if (__atomic_load_n(&r->code, __ATOMIC_RELAXED) != 0)
            return PMIX_PROC_STATE_TERM_NON_ZERO;
        return r->finalized ? PMIX_PROC_STATE_TERMINATED : PMIX_PROC_STATE_TERM_WO_SYNC;
    }
    if (pid == 0)
        return PMIX_PROC_STATE_PREPPED;
    if (r->connected && !r->finalized)
        return PMIX_PROC_STATE_CONNECTED;
    return PMIX_PROC_STATE_RUNNING;
}

/* The job's table into `out` (key `key`). */
static pmix_status_t proc_table(job *j, const char *key, pmix_info_t *out)
{
    pmix_data_array_t *da = PMIx_Data_array_create((size_t)j->nlocal, PMIX_PROC_INFO);
    pmix_proc_info_t *pi;
    pmix_status_t rc = PMIX_SUCCESS;

    if (da == NULL)
        return PMIX_ERR_NOMEM;
    pi = da->array;
    pthread_mutex_lock(&j->mu);
    for (int i = 0; i < j->nlocal; i++) {
        rank_proc *r = &j->ranks[i];
        pid_t pid = __atomic_load_n(&r->pid, __ATOMIC_ACQUIRE);
        PMIx_Load_procid(&pi[i].proc, j->nspace, (pmix_rank_t)r->rank);
        pi[i].hostname = strdup(job_node_name(j, job_node_of(j, r->rank)));
        pi[i].executable_name = strdup(j->prog != NULL ? j->prog : "");
        pi[i].pid = pid;
        pi[i].state = rank_state(r, pid);
        pi[i].exit_code = __atomic_load_n(&r->reaped, __ATOMIC_ACQUIRE)
                              ? __atomic_load_n(&r->code, __ATOMIC_RELAXED)
                              : 0;
        if (pi[i].hostname == NULL || pi[i].executable_name == NULL)
            rc = PMIX_ERR_NOMEM;
    }
    pthread_mutex_unlock(&j->mu);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Info_load(out, key, da, PMIX_DATA_ARRAY);
    PMIx_Data_array_free(da);
    return rc;
}

/* PMIX_QUERY_NAMESPACE_INFO: [[PMIX_NSPACE, PMIX_CMD_LINE]] for the job. */
static pmix_status_t nspace_info(job *j, const char *key, pmix_info_t *out)
{
    pmix_data_array_t *outer = PMIx_Data_array_create(1, PMIX_INFO);
    pmix_data_array_t *inner = PMIx_Data_array_create(2, PMIX_INFO);
    char *cmd = PMIx_Argv_join(j->argv, ' ');
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (outer != NULL && inner != NULL && cmd != NULL) {
        pmix_info_t *in = inner->array, *o = outer->array;
        PMIx_Info_load(&in[0], PMIX_NSPACE, j->nspace, PMIX_STRING);
        PMIx_Info_load(&in[1], PMIX_CMD_LINE, cmd, PMIX_STRING);
        rc = PMIx_Info_load(&o[0], PMIX_QUERY_NAMESPACE_INFO, inner, PMIX_DATA_ARRAY);
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Info_load(out, key, outer, PMIX_DATA_ARRAY);
    }
    free(cmd);
    PMIx_Data_array_free(inner);
    PMIx_Data_array_free(outer);
    return rc;
}

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

pmix_status_t tool_query_up(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
                            pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    job *j = t_job;
    size_t nkeys = 0, n = 0;
    answers *a;

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
        const char *ns = NULL;
        for (size_t i = 0; i < queries[q].nqual; i++)
            if (strncmp(queries[q].qualifiers[i].key, PMIX_NSPACE, PMIX_MAX_KEYLEN) == 0 &&
                queries[q].qualifiers[i].value.type == PMIX_STRING)
                ns = queries[q].qualifiers[i].value.data.string;
        bool ours = ns == NULL || strncmp(ns, j->nspace, PMIX_MAX_NSLEN) == 0;
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL; k++) {
            const char *key = queries[q].keys[k];
            if (strcmp(key, PMIX_QUERY_NAMESPACES) == 0) {
                if (PMIx_Info_load(&a->info[n], key, j->nspace, PMIX_STRING) == PMIX_SUCCESS)
                    n++;
            } else if (strcmp(key, PMIX_QUERY_NAMESPACE_INFO) == 0) {
                if (nspace_info(j, key, &a->info[n]) == PMIX_SUCCESS)
                    n++;
            } else if (ours && (strcmp(key, PMIX_QUERY_PROC_TABLE) == 0 ||
                                strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0)) {
                if (proc_table(j, key, &a->info[n]) == PMIX_SUCCESS)
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
