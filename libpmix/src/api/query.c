/*
 * query.c - PMIx_Query_info and PMIx_Log.
 *
 * Query: each key of each query is looked up like a PMIx_Get whose target
 * comes from the query's qualifiers (PMIX_PROCID, or PMIX_NSPACE and
 * PMIX_RANK; the caller's namespace by default) and whose other qualifiers
 * (PMIX_NODEID, PMIX_HOSTNAME, PMIX_APPNUM) pick node- or app-level data.
 * Only what the process already holds is used: such a key never waits on
 * the server (in a tool, which holds no job's data, such a Get may ask
 * it). The group queries (PMIX_QUERY_NUM_GROUPS, _GROUP_NAMES,
 * _GROUP_MEMBERSHIP) are answered from the groups the process is a member
 * of (group_api.c). Two kinds of keys are the exception and go to the
 * server, together in one QUERY message per call with their queries'
 * qualifiers: the process-set keys (PMIX_QUERY_NUM_PSETS,
 * PMIX_QUERY_PSET_NAMES, PMIX_QUERY_PSET_MEMBERSHIP), which the server
 * answers from the sets it keeps, including those its host defines while
 * the job runs (server/psets.c), and the keys only a host knows
 * (PMIX_QUERY_NAMESPACES, PMIX_QUERY_NAMESPACE_INFO, PMIX_QUERY_PROC_TABLE,
 * PMIX_QUERY_LOCAL_PROC_TABLE, PMIX_QUERY_SPAWN_SUPPORT,
 * PMIX_QUERY_DEBUG_SUPPORT: query_host.c), which the server passes to
 * its host's query upcall. PMIX_QUERY_NAMESPACES names the caller's
 * namespace when the host does not answer it. The server's answers are
 * merged with the local ones in the order of the keys. The result
 * holds one info per key answered; the status is PMIX_SUCCESS if every
 * key was answered, PMIX_ERR_PARTIAL_SUCCESS if some were, and
 * PMIX_ERR_NOT_FOUND if none were. The ABI version keys
 * (PMIX_QUERY_STABLE_ABI_VERSION, PMIX_QUERY_PROVISIONAL_ABI_VERSION) are
 * answered by the library itself, and a blocking query of those keys alone
 * works before PMIx_Init too, as the Standard wants.
 *
 * Log: entries for PMIX_LOG_STDERR and PMIX_LOG_STDOUT are written to the
 * process's own streams; other channels need a host and are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "common/px_common.h"
#include "px_api.h"
#include "server/px_server.h"

/* The binary interface is the one OpenPMIx 4.2.2 ships (docs/abi.md), so
 * the versions are those it reports for it. */
#define STABLE_ABI_VERSION "0.0"
#define PROVISIONAL_ABI_VERSION "0.0"

/* The version string of an ABI version key, or NULL for any other key. */
static const char *abi_version(const char *key)
{
    if (strcmp(key, PMIX_QUERY_STABLE_ABI_VERSION) == 0)
        return STABLE_ABI_VERSION;
    if (strcmp(key, PMIX_QUERY_PROVISIONAL_ABI_VERSION) == 0)
        return PROVISIONAL_ABI_VERSION;
    return NULL;
}

/* Answer `key` of one query into `out`; false if it cannot be. */
static bool answer(const pmix_query_t *q, const char *key, pmix_info_t *out)
{
    pmix_proc_t target, me;
    const pmix_info_t *pi;
    pmix_info_t quals[8];
    size_t nq = 0;
    pmix_value_t *v = NULL;
    bool opt = !px_api_is_tool(); /* a tool holds no job's data: its server does */
    pmix_status_t rc;
    const char *abi = abi_version(key);

    if (abi != NULL)
        return PMIx_Info_load(out, key, abi, PMIX_STRING) == PMIX_SUCCESS;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return false;
    PMIx_Finalize(NULL, 0);
    if (strcmp(key, PMIX_QUERY_NAMESPACES) == 0) {
        PMIx_Info_load(out, key, me.nspace, PMIX_STRING);
        return true;
    }
    if ((rc = px_api_group_query(key, q->qualifiers, q->nqual, out)) != PMIX_ERR_NOT_SUPPORTED)
        return rc == PMIX_SUCCESS;
    PMIx_Load_procid(&target, me.nspace, PMIX_RANK_WILDCARD);
    if ((pi = px_info_find(q->qualifiers, q->nqual, PMIX_PROCID)) != NULL &&
        pi->value.type == PMIX_PROC && pi->value.data.proc != NULL) {
        target = *pi->value.data.proc;
    } else {
        const char *ns = px_info_string(q->qualifiers, q->nqual, PMIX_NSPACE);
        uint64_t r;
        if (ns != NULL)
            PMIx_Load_nspace(target.nspace, ns);
        if ((pi = px_info_find(q->qualifiers, q->nqual, PMIX_RANK)) != NULL &&
            px_value_get_number(&pi->value, &r) == PMIX_SUCCESS)
            target.rank = (pmix_rank_t)r;
    }
    /* node and app qualifiers travel on; PMIX_OPTIONAL keeps it local */
    PMIx_Info_load(&quals[nq++], PMIX_OPTIONAL, &opt, PMIX_BOOL);
    for (size_t i = 0; i < q->nqual && nq < 8; i++)
        if (strcmp(q->qualifiers[i].key, PMIX_NODEID) == 0 ||
            strcmp(q->qualifiers[i].key, PMIX_HOSTNAME) == 0 ||
            strcmp(q->qualifiers[i].key, PMIX_APPNUM) == 0)
            PMIx_Info_xfer(&quals[nq++], &q->qualifiers[i]);
    rc = PMIx_Get(&target, key, quals, nq, &v);
    for (size_t i = 0; i < nq; i++)
        PMIx_Info_destruct(&quals[i]);
    if (rc != PMIX_SUCCESS)
        return false;
    PMIx_Load_key(out->key, key);
    out->flags = 0;
    rc = PMIx_Value_xfer(&out->value, v);
    PMIx_Value_free(v, 1);
    return rc == PMIX_SUCCESS;
}

/* The keys the server answers: the process sets it keeps (server/psets.c)
 * and those only its host knows (query_host.c), which it passes on. */
static bool to_server(const char *key)
{
    return px_query_key_is_pset(key) || px_api_query_host_key(key);
}

/* One query call on its way: every key in order, the answers found in the
 * process, and what the caller gets in the end. */
typedef struct qcall {
    size_t nkeys;
    const char **keys;  /* [nkeys] strdup'd copies, NULL until made */
    bool *server;       /* [nkeys] a key sent to the server (to_server) */
    pmix_info_t *local; /* [nkeys] the answers found here (empty if not) */
    bool *have;         /* [nkeys] local[i] holds an answer */
    size_t nserver;
    size_t npset;      /* ... of them process-set keys */
    pmix_query_t *sub; /* the queries sent to the server: their server keys */
    size_t nsub;
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
    /* the result */
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
} qcall;

static void qcall_free(qcall *qc)
{
    if (qc->local != NULL)
        PMIx_Info_free(qc->local, qc->nkeys);
    for (size_t i = 0; i < qc->nsub; i++)
        free(qc->sub[i].keys); /* the strings are the caller's; the qualifiers too */
    free(qc->sub);
    for (size_t i = 0; qc->keys != NULL && i < qc->nkeys; i++)
        free((char *)qc->keys[i]);
    free(qc->keys);
    free(qc->server);
    free(qc->have);
    if (qc->info != NULL)
        PMIx_Info_free(qc->info, qc->ninfo);
    free(qc);
}

/* Read the queries: answer here what can be, and make the server's
 * queries of the rest. NULL when memory runs out. */
static qcall *qcall_make(pmix_query_t queries[], size_t nqueries, size_t nkeys)
{
    qcall *qc = calloc(1, sizeof(*qc));
    size_t k = 0;

    if (qc == NULL)
        return NULL;
    qc->nkeys = nkeys;
    qc->keys = calloc(nkeys, sizeof(*qc->keys));
    qc->server = calloc(nkeys, sizeof(*qc->server));
    qc->have = calloc(nkeys, sizeof(*qc->have));
    qc->local = PMIx_Info_create(nkeys);
    qc->sub = calloc(nqueries, sizeof(*qc->sub));
    if (qc->keys == NULL || qc->server == NULL || qc->have == NULL || qc->local == NULL ||
        qc->sub == NULL)
        goto nomem;
    for (size_t q = 0; q < nqueries; q++) {
        size_t np = 0, nq = 0;
        for (size_t j = 0; queries[q].keys != NULL && queries[q].keys[j] != NULL; j++, k++) {
            const char *key = queries[q].keys[j];
            if ((qc->keys[k] = strdup(key)) == NULL)
                goto nomem;
            qc->server[k] = to_server(key);
            if (qc->server[k])
                np++;
            if (px_query_key_is_pset(key))
                qc->npset++;
            /* a host's key the server leaves unanswered may still be
             * answered here (PMIX_QUERY_NAMESPACES: the caller's own) */
            if (!px_query_key_is_pset(key))
                qc->have[k] = answer(&queries[q], key, &qc->local[k]);
            nq++;
        }
        if (np == 0)
            continue;
        pmix_query_t *sq = &qc->sub[qc->nsub++];
        if ((sq->keys = calloc(np + 1, sizeof(*sq->keys))) == NULL)
            goto nomem;
        np = 0;
        for (size_t j = 0; j < nq; j++)
            if (to_server(queries[q].keys[j]))
                sq->keys[np++] = queries[q].keys[j];
        sq->qualifiers = queries[q].qualifiers;
        sq->nqual = queries[q].nqual;
        qc->nserver += np;
    }
    return qc;
nomem:
    qcall_free(qc);
    return NULL;
}

/* The result, in the order of the keys: the local answers and the
 * server's (`sinfo`, matched by key; copied). */
static void qcall_merge(qcall *qc, const pmix_info_t *sinfo, size_t nsinfo)
{
    bool *used = nsinfo > 0 ? calloc(nsinfo, sizeof(*used)) : NULL;
    size_t n = 0;

    qc->info = PMIx_Info_create(qc->nkeys);
    if (qc->info == NULL || (nsinfo > 0 && used == NULL)) {
        if (qc->info != NULL)
            PMIx_Info_free(qc->info, qc->nkeys);
        qc->info = NULL;
        free(used);
        qc->status = PMIX_ERR_NOMEM;
        return;
    }
    for (size_t i = 0; i < qc->nkeys; i++) {
        bool found = false;
        if (qc->server[i])
            for (size_t j = 0; j < nsinfo; j++)
                if (!used[j] && strncmp(sinfo[j].key, qc->keys[i], PMIX_MAX_KEYLEN) == 0) {
                    used[j] = true;
                    if (PMIx_Info_xfer(&qc->info[n], &sinfo[j]) == PMIX_SUCCESS) {
                        n++;
                        found = true;
                    }
                    break;
                }
        if (!found && qc->have[i] && PMIx_Info_xfer(&qc->info[n], &qc->local[i]) == PMIX_SUCCESS)
            n++;
    }
    free(used);
    /* the tail past n is constructed and empty: PMIx_Info_free(info, n)
     * releases the whole block */
    qc->ninfo = n;
    if (n == 0) {
        PMIx_Info_free(qc->info, qc->nkeys);
        qc->info = NULL;
        qc->status = PMIX_ERR_NOT_FOUND;
    } else {
        qc->status = n == qc->nkeys ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS;
    }
}

/* Count the keys: PMIX_ERR_INIT if the call cannot be made yet (before
 * PMIx_Init only the ABI keys are answered), PMIX_ERR_BAD_PARAM for none.
 * In a process that is only a server, keys other than the ABI and
 * process-set ones (its own table) find no answer. */
static pmix_status_t count_keys(pmix_query_t queries[], size_t nqueries, size_t *nkeys)
{
    size_t n = 0, nabi = 0;

    for (size_t q = 0; q < nqueries; q++)
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL; k++) {
            n++;
            if (abi_version(queries[q].keys[k]) != NULL)
                nabi++;
        }
    *nkeys = n;
    if (!PMIx_Initialized() && (n == 0 || nabi < n))
        return PMIX_ERR_INIT;
    return n == 0 ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries,
                                          pmix_info_t *info[], size_t *ninfo)
{
    size_t nkeys;
    pmix_info_t *sinfo = NULL;
    size_t nsinfo = 0;
    pmix_status_t rc;
    qcall *qc;

    if (info == NULL || ninfo == NULL || (queries == NULL && nqueries > 0))
        return PMIX_ERR_BAD_PARAM;
    *info = NULL;
    *ninfo = 0;
    if ((rc = count_keys(queries, nqueries, &nkeys)) != PMIX_SUCCESS)
        return rc;
    if ((qc = qcall_make(queries, nqueries, nkeys)) == NULL)
        return PMIX_ERR_NOMEM;
    if (qc->nsub > 0) {
        rc = px_api_query_server(qc->sub, qc->nsub, NULL, NULL, &sinfo, &nsinfo);
        if (rc == PMIX_ERR_WOULD_BLOCK && qc->npset > 0) {
            PMIx_Info_free(sinfo, nsinfo);
            qcall_free(qc);
            return rc;
        }
        /* otherwise the server's keys are answered or they are not (a
         * host's key then as the process can, inside a callback too) */
    }
    qcall_merge(qc, sinfo, nsinfo);
    PMIx_Info_free(sinfo, nsinfo);
    rc = qc->status;
    *info = qc->info;
    *ninfo = qc->ninfo;
    qc->info = NULL;
    qcall_free(qc);
    return rc;
}

typedef struct query_result {
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
    pmix_info_cbfunc_t cbfunc;
    void *cbdata;
} query_result;

static void release_result(void *cbdata)
{
    query_result *r = cbdata;

    PMIx_Info_free(r->info, r->ninfo);
    free(r);
}

static void call_query_cb(void *arg)
{
    query_result *r = arg;

    r->cbfunc(r->status, r->info, r->ninfo, r->cbdata, release_result, r);
}

/* The server's answers to a non-blocking query: merge and call back (from
 * the engine, with its lock held, after PMIx_Query_info_nb returned). */
static void server_answered(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                            pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    qcall *qc = cbdata;
    query_result *r = calloc(1, sizeof(*r));

    qcall_merge(qc, info, ninfo);
    if (release_fn != NULL)
        release_fn(release_cbdata);
    if (r == NULL) {
        qc->cbfunc(PMIX_ERR_NOMEM, NULL, 0, qc->cbdata, NULL, NULL);
        qcall_free(qc);
        return;
    }
    r->status = qc->status;
    r->info = qc->info;
    r->ninfo = qc->ninfo;
    qc->info = NULL;
    r->cbfunc = qc->cbfunc;
    r->cbdata = qc->cbdata;
    qcall_free(qc);
    call_query_cb(r);
}

/* Keys answered in the process: at once, the callback still after the
 * call returns (as OpenPMIx's: its programs may hold a lock the callback
 * takes), with the query's status, PMIX_ERR_NOT_FOUND included. Keys the
 * server answers (process sets, a host's keys): the callback comes with
 * its answer. */
PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                             pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    query_result *r;
    size_t nkeys;
    pmix_status_t rc;
    qcall *qc;

    if (cbfunc == NULL || (queries == NULL && nqueries > 0))
        return PMIX_ERR_BAD_PARAM;
    if (!PMIx_Initialized())
        return PMIX_ERR_INIT;
    if ((rc = count_keys(queries, nqueries, &nkeys)) != PMIX_SUCCESS)
        return rc;
    if ((qc = qcall_make(queries, nqueries, nkeys)) == NULL)
        return PMIX_ERR_NOMEM;
    qc->cbfunc = cbfunc;
    qc->cbdata = cbdata;
    if (qc->nsub > 0) {
        rc = px_api_query_server(qc->sub, qc->nsub, server_answered, qc, NULL, NULL);
        if (rc == PMIX_SUCCESS)
            return PMIX_SUCCESS; /* server_answered calls back */
        /* the server cannot be asked: its keys are not answered */
    }
    qcall_merge(qc, NULL, 0);
    if (qc->status == PMIX_ERR_NOMEM || (r = calloc(1, sizeof(*r))) == NULL) {
        qcall_free(qc);
        return PMIX_ERR_NOMEM;
    }
    r->status = qc->status;
    r->info = qc->info;
    r->ninfo = qc->ninfo;
    qc->info = NULL;
    r->cbfunc = cbfunc;
    r->cbdata = cbdata;
    qcall_free(qc);
    rc = px_api_defer(call_query_cb, r);
    if (rc != PMIX_SUCCESS)
        release_result(r);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_Log(const pmix_info_t data[], size_t ndata,
                                   const pmix_info_t directives[], size_t ndirs)
{
    size_t done = 0;

    if (data == NULL && ndata > 0)
        return PMIX_ERR_BAD_PARAM;
    if (!PMIx_Initialized())
        return PMIX_ERR_INIT;
    for (size_t i = 0; i < ndata; i++) {
        FILE *f = strcmp(data[i].key, PMIX_LOG_STDERR) == 0   ? stderr
                  : strcmp(data[i].key, PMIX_LOG_STDOUT) == 0 ? stdout
                                                              : NULL;
        if (f == NULL || data[i].value.type != PMIX_STRING)
            continue;
        fputs(data[i].value.data.string != NULL ? data[i].value.data.string : "", f);
        fflush(f);
        done++;
    }
    if (done == ndata)
        return PMIX_SUCCESS;
    return done > 0 ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_ERR_NOT_SUPPORTED;
}

typedef struct log_done {
    pmix_status_t status;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} log_done;

static void call_log_cb(void *arg)
{
    log_done *d = arg;

    d->cbfunc(d->status, d->cbdata);
    free(d);
}

/* Done before it returns. With a callback it returns PMIX_SUCCESS and the
 * callback reports the outcome (also a channel refused) after the call
 * returned, as OpenPMIx does; PMIX_OPERATION_SUCCEEDED, which the Standard
 * allows, is taken for a failure by programs written for OpenPMIx. Without
 * a callback it returns the outcome. */
PMIX_EXPORT pmix_status_t PMIx_Log_nb(const pmix_info_t data[], size_t ndata,
                                      const pmix_info_t directives[], size_t ndirs,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t rc = PMIx_Log(data, ndata, directives, ndirs);
    log_done *d;

    if (cbfunc == NULL || rc == PMIX_ERR_BAD_PARAM || rc == PMIX_ERR_INIT)
        return rc;
    d = malloc(sizeof(*d));
    if (d == NULL)
        return PMIX_ERR_NOMEM;
    d->status = rc;
    d->cbfunc = cbfunc;
    d->cbdata = cbdata;
    rc = px_api_defer(call_log_cb, d);
    if (rc != PMIX_SUCCESS)
        free(d);
    return rc;
}
