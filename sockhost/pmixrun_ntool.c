/*
 * pmixrun_ntool.c - tools of a job over daemons (pmixrun --nodes): what
 * pmixrun asks its daemons so that its tools see every rank.
 *
 * pmixrun --nodes runs a PMIx server of its own with no ranks (the job's
 * data service and the tools' server: pmixrun_tool.c), while the ranks
 * are the daemons' children. A tool's query for a process table
 * (PMIX_QUERY_PROC_TABLE, PMIX_QUERY_LOCAL_PROC_TABLE) or for the ranks'
 * stacks (NTOOL_QUERY_STACKS, pmixstack's) is therefore not answered at
 * once: ntool_query keeps a copy of it and sends PD_TOOL to every daemon
 * still there; each answers with PD_TOOL_REP (pmixd_tool.c): its host
 * name (gethostname: the node's own under --isolate host), and for each
 * of its ranks the pid it forked, state, exit code and executable, and,
 * when asked, the text of a stack collector (gdb in batch mode) run on
 * its node for each of its living ranks. Once every daemon answered (a
 * daemon that goes counts as answered), or the request's deadline passed
 * (3 s, or for stacks the collector's per-process timeout times the most
 * ranks on a node, plus 5 s), the answers become pmixrun's view of the
 * ranks and the query is answered by tool_query_up, which reads that view
 * (ntool_proc_info, ntool_stacks). So a query never waits longer than its
 * deadline, whatever the daemons do.
 *
 * Pids that daemons report are never used to signal anything here: on
 * another host they name other processes.
 *
 * PD_TOOL (pmixrun -> daemon): u32 id, u8 op (1 the table, 2 the table
 * and the stacks), u32 seconds (the collector's timeout per process).
 * PD_TOOL_REP (daemon -> pmixrun): u32 id, str host, u32 n, n x (u32
 * rank, u32 pid, u32 state, u32 exit code, str executable), u8 has-text,
 * [str text: per rank "@rank R" on a line, then what gdb printed].
 *
 * Everything runs on pmixrun's one thread: ntool_query inside the loop's
 * turn (the server's query upcall), ntool_reply and ntool_tick after it
 * (with the engine lock taken around the answer).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmixd_proto.h"
#include "pmixrun.h"
#include "tcplink.h"

#define NTOOL_TABLE_S 3.0   /* a table request's deadline */
#define NTOOL_STACK_S 30    /* the collector's timeout per process, by default */
#define NTOOL_STACK_SLACK 5 /* seconds past the collectors' worst case */

typedef struct ntool_rank {
    bool known; /* a daemon reported it */
    pid_t pid;
    pmix_proc_state_t state;
    int code;
    char *exe;
} ntool_rank;

typedef struct ntool_req {
    struct ntool_req *next;
    uint32_t id;
    pmix_proc_t requestor;
    pmix_query_t *queries;
    size_t nq;
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
    bool stacks;
    int waiting;    /* daemons yet to answer */
    bool *answered; /* per node */
    char **text;    /* per node: its collector's text (stacks) */
    double deadline;
} ntool_req;

struct ntool_state {
    uint32_t next_id;
    ntool_req *reqs;
    ntool_req *answering; /* the request tool_query_up answers now */
    char **node_host;     /* per node: the host name its daemon reported, or NULL */
    ntool_rank *rank;     /* per rank */
    int (*send)(job *j, int node, uint8_t type, const tl_buf *b);
};

int ntool_init(job *j, int (*send)(job *j, int node, uint8_t type, const struct tl_buf *b))
{
    ntool_state *S = calloc(1, sizeof *S);
    if (S == NULL)
        return -1;
    S->node_host = calloc((size_t)j->nnodes, sizeof *S->node_host);
    S->rank = calloc((size_t)(j->nprocs > 0 ? j->nprocs : 1), sizeof *S->rank);
    if (S->node_host == NULL || S->rank == NULL) {
        free(S->node_host);
        free(S->rank);
        free(S);
        return -1;
    }
    S->send = send;
    j->ntool = S;
    return 0;
}

static void req_free(job *j, ntool_req *q)
{
    for (int n = 0; q->text != NULL && n < j->nnodes; n++)
        free(q->text[n]);
    free(q->text);
    free(q->answered);
    PMIx_Query_free(q->queries, q->nq);
    free(q);
}

static ntool_req *req_take(ntool_state *S, ntool_req *q)
{
    for (ntool_req **p = &S->reqs; *p != NULL; p = &(*p)->next)
        if (*p == q) {
            *p = q->next;
            return q;
        }
    return NULL;
}

/* Answer `q` from what the daemons said, and free it. */
static void req_answer(job *j, ntool_req *q)
{
    ntool_state *S = j->ntool;
    S->answering = q;
    px_posix_ops()->lock(j->plat);
    pmix_status_t rc = tool_query_up(j, &q->requestor, q->queries, q->nq, q->cbfunc, q->cbdata);
    if (rc != PMIX_SUCCESS)
        q->cbfunc(rc, NULL, 0, q->cbdata, NULL, NULL);
    px_posix_ops()->unlock(j->plat);
    S->answering = NULL;
    req_free(j, q);
}

void ntool_fini(job *j)
{
    ntool_state *S = j->ntool;
    if (S == NULL)
        return;
    while (S->reqs != NULL) { /* answered with what came */
        ntool_req *q = S->reqs;
        S->reqs = q->next;
        req_answer(j, q);
    }
    for (int n = 0; n < j->nnodes; n++)
        free(S->node_host[n]);
    for (int r = 0; r < j->nprocs; r++)
        free(S->rank[r].exe);
    free(S->node_host);
    free(S->rank);
    free(S);
    j->ntool = NULL;
}

static bool key_needs_daemons(const char *key)
{
    return strcmp(key, PMIX_QUERY_PROC_TABLE) == 0 ||
           strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) == 0 || strcmp(key, NTOOL_QUERY_STACKS) == 0;
}

bool ntool_wants(job *j, const pmix_query_t queries[], size_t nqueries)
{
    if (j->ntool == NULL || j->ntool->answering != NULL)
        return false;
    for (size_t q = 0; q < nqueries; q++)
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL; k++)
            if (key_needs_daemons(queries[q].keys[k]))
                return true;
    return false;
}

/* The most ranks any node runs. */
static int most_local(const job *j)
{
    int most = 0;
    int *count = calloc((size_t)j->nnodes, sizeof *count);
    if (count == NULL)
        return j->nprocs;
    for (int r = 0; r < j->nprocs; r++)
        if (++count[j->rank_node[r]] > most)
            most = count[j->rank_node[r]];
    free(count);
    return most;
}

pmix_status_t ntool_query(job *j, const pmix_proc_t *requestor, const pmix_query_t queries[],
                          size_t nqueries, pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    ntool_state *S = j->ntool;
    ntool_req *q = calloc(1, sizeof *q);
    uint32_t secs = NTOOL_STACK_S;

    if (q == NULL || (q->queries = PMIx_Query_create(nqueries)) == NULL) {
        free(q);
        return PMIX_ERR_NOMEM;
    }
    q->nq = nqueries;
    q->answered = calloc((size_t)j->nnodes, sizeof *q->answered);
    q->text = calloc((size_t)j->nnodes, sizeof *q->text);
    if (q->answered == NULL || q->text == NULL) {
        req_free(j, q);
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < nqueries; i++) {
        const pmix_query_t *in = &queries[i];
        pmix_query_t *out = &q->queries[i];
        for (size_t k = 0; in->keys != NULL && in->keys[k] != NULL; k++) {
            if (PMIx_Argv_append_nosize(&out->keys, in->keys[k]) != PMIX_SUCCESS) {
                req_free(j, q);
                return PMIX_ERR_NOMEM;
            }
            q->stacks |= strcmp(in->keys[k], NTOOL_QUERY_STACKS) == 0;
        }
        if (in->nqual > 0) {
            if ((out->qualifiers = PMIx_Info_create(in->nqual)) == NULL) {
                req_free(j, q);
                return PMIX_ERR_NOMEM;
            }
            out->nqual = in->nqual;
            for (size_t k = 0; k < in->nqual; k++) {
                PMIx_Info_xfer(&out->qualifiers[k], &in->qualifiers[k]);
                if (strncmp(in->qualifiers[k].key, NTOOL_STACKS_TIMEOUT, PMIX_MAX_KEYLEN) == 0 &&
                    in->qualifiers[k].value.type == PMIX_UINT32 &&
                    in->qualifiers[k].value.data.uint32 > 0 &&
                    in->qualifiers[k].value.data.uint32 <= 3600)
                    secs = in->qualifiers[k].value.data.uint32;
            }
        }
    }
    q->requestor = *requestor;
    q->cbfunc = cbfunc;
    q->cbdata = cbdata;
    q->id = ++S->next_id;
    q->deadline =
        now_s() + (q->stacks ? (double)secs * most_local(j) + NTOOL_STACK_SLACK : NTOOL_TABLE_S);
    tl_buf b = {0};
    tl_put_u32(&b, q->id);
    tl_put_u8(&b, q->stacks ? 2 : 1);
    tl_put_u32(&b, secs);
    for (int n = 0; n < j->nnodes; n++) {
        if (S->send(j, n, PD_TOOL, &b) == 0)
            q->waiting++;
        else
            q->answered[n] = true; /* gone, or not up yet: nothing to wait for */
    }
    tl_buf_free(&b);
    q->next = S->reqs;
    S->reqs = q;
    if (q->waiting == 0) /* no daemon to ask: what pmixrun knows */
        req_answer(j, req_take(S, q));
    return PMIX_SUCCESS; /* else answered by ntool_reply, ntool_node_gone or ntool_tick */
}

/* Read the ranks of a reply from node `node` into S: 0, or -1 if malformed. */
static int read_ranks(job *j, int node, tl_reader *r)
{
    ntool_state *S = j->ntool;
    char *host = tl_get_str(r);
    uint32_t n = tl_get_u32(r);
    if (host == NULL || r->bad) {
        free(host);
        return -1;
    }
    free(S->node_host[node]);
    S->node_host[node] = host;
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        uint32_t rank = tl_get_u32(r), pid = tl_get_u32(r), state = tl_get_u32(r),
                 code = tl_get_u32(r);
        char *exe = tl_get_str(r);
        if (r->bad || rank >= (uint32_t)j->nprocs || (int)j->rank_node[rank] != node) {
            free(exe);
            return -1;
        }
        ntool_rank *nr = &S->rank[rank];
        free(nr->exe);
        *nr = (ntool_rank){true, (pid_t)pid, (pmix_proc_state_t)state, (int)code, exe};
    }
    return r->bad ? -1 : 0;
}

void ntool_reply(job *j, int node, const uint8_t *p, size_t len)
{
    ntool_state *S = j->ntool;
    tl_reader r = {.p = p, .left = len};
    uint32_t id = tl_get_u32(&r);
    ntool_req *q;

    if (S == NULL || r.bad)
        return;
    for (q = S->reqs; q != NULL && q->id != id; q = q->next)
        ;
    if (q == NULL || q->answered[node])
        return; /* too late: answered at its deadline */
    if (read_ranks(j, node, &r) == 0 && tl_get_u8(&r) != 0)
        q->text[node] = tl_get_str(&r);
    q->answered[node] = true;
    if (--q->waiting == 0)
        req_answer(j, req_take(S, q));
}

void ntool_node_gone(job *j, int node)
{
    ntool_state *S = j->ntool;
    if (S == NULL)
        return;
    for (ntool_req *q = S->reqs, *next; q != NULL; q = next) {
        next = q->next;
        if (!q->answered[node]) {
            q->answered[node] = true;
            if (--q->waiting == 0)
                req_answer(j, req_take(S, q));
        }
    }
}

void ntool_tick(job *j)
{
    ntool_state *S = j->ntool;
    double t = now_s();
    if (S == NULL)
        return;
    for (ntool_req *q = S->reqs, *next; q != NULL; q = next) {
        next = q->next;
        if (t >= q->deadline)
            req_answer(j, req_take(S, q)); /* with what came */
    }
}

int ntool_timeout_ms(job *j)
{
    ntool_state *S = j->ntool;
    double next = -1;
    for (ntool_req *q = S != NULL ? S->reqs : NULL; q != NULL; q = q->next)
        if (next < 0 || q->deadline < next)
            next = q->deadline;
    if (next < 0)
        return -1;
    double ms = (next - now_s()) * 1000.0;
    return ms <= 0 ? 0 : (int)ms + 1;
}

const char *ntool_host(const job *j, int rank)
{
    const ntool_state *S = j->ntool;
    if (S == NULL || rank < 0 || rank >= j->nprocs)
        return NULL;
    return S->node_host[j->rank_node[rank]];
}

void ntool_proc_info(const job *j, const rank_proc *r, pmix_proc_info_t *pi)
{
    const ntool_state *S = j->ntool;
    const char *host = ntool_host(j, r->rank);
    if (S == NULL)
        return;
    const ntool_rank *nr = &S->rank[r->rank];
    if (host != NULL) {
        char *h = strdup(host);
        if (h != NULL) {
            free(pi->hostname);
            pi->hostname = h;
        }
    }
    if (!nr->known)
        return;
    if (nr->exe != NULL && nr->exe[0] != '\0') {
        char *e = strdup(nr->exe);
        if (e != NULL) {
            free(pi->executable_name);
            pi->executable_name = e;
        }
    }
    pi->pid = nr->pid;
    if (!r->reaped) { /* pmixrun's own news of an end is the newer */
        pi->state = nr->state;
        pi->exit_code = nr->code;
    }
}

pmix_status_t ntool_stacks(job *j, const char *key, pmix_info_t *out)
{
    ntool_state *S = j->ntool;
    ntool_req *q = S != NULL ? S->answering : NULL;
    size_t len = 0;
    char *all;

    if (q == NULL || !q->stacks)
        return PMIX_ERR_NOT_FOUND;
    for (int n = 0; n < j->nnodes; n++)
        len += q->text[n] != NULL ? strlen(q->text[n]) : 0;
    if ((all = malloc(len + 1)) == NULL)
        return PMIX_ERR_NOMEM;
    len = 0;
    for (int n = 0; n < j->nnodes; n++)
        if (q->text[n] != NULL) {
            size_t l = strlen(q->text[n]);
            memcpy(all + len, q->text[n], l);
            len += l;
        }
    all[len] = '\0';
    pmix_status_t rc = PMIx_Info_load(out, key, all, PMIX_STRING);
    free(all);
    return rc;
}

void nodes_notify(job *j, pmix_status_t status, const pmix_proc_t *source, pmix_data_range_t range,
                  const pmix_info_t *info, size_t ninfo)
{
    ntool_state *S = j->ntool;
    tl_buf b = {0};
    if (S != NULL && events_pack(&b, status, source, range, info, ninfo) == 0)
        for (int n = 0; n < j->nnodes; n++) /* PD_EVENT_FWD's payload is the packed event */
            S->send(j, n, PD_EVENT_FWD, &b);
    tl_buf_free(&b);
}
