/*
 * query.c - PMIx_Query_info and PMIx_Log, answered inside the process.
 *
 * Query: each key of each query is looked up like a PMIx_Get whose target
 * comes from the query's qualifiers (PMIX_PROCID, or PMIX_NSPACE and
 * PMIX_RANK; the caller's namespace by default) and whose other qualifiers
 * (PMIX_NODEID, PMIX_HOSTNAME, PMIX_APPNUM) pick node- or app-level data.
 * Only what the process already holds is used: a query never waits on the
 * server. PMIX_QUERY_NAMESPACES names the caller's namespace; the group
 * queries (PMIX_QUERY_NUM_GROUPS, _GROUP_NAMES, _GROUP_MEMBERSHIP) are
 * answered from the groups the process is a member of (group_api.c). The result
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
    bool opt = true;
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

PMIX_EXPORT pmix_status_t PMIx_Query_info(pmix_query_t queries[], size_t nqueries,
                                          pmix_info_t *info[], size_t *ninfo)
{
    size_t nkeys = 0, n = 0;
    pmix_info_t *res;

    if (info == NULL || ninfo == NULL || (queries == NULL && nqueries > 0))
        return PMIX_ERR_BAD_PARAM;
    size_t nabi = 0;
    *info = NULL;
    *ninfo = 0;
    for (size_t q = 0; q < nqueries; q++)
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL; k++) {
            nkeys++;
            if (abi_version(queries[q].keys[k]) != NULL)
                nabi++;
        }
    if (!PMIx_Initialized() && (nkeys == 0 || nabi < nkeys))
        return PMIX_ERR_INIT;
    if (nkeys == 0)
        return PMIX_ERR_BAD_PARAM;
    res = PMIx_Info_create(nkeys);
    if (res == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t q = 0; q < nqueries; q++)
        for (size_t k = 0; queries[q].keys != NULL && queries[q].keys[k] != NULL; k++)
            if (answer(&queries[q], queries[q].keys[k], &res[n]))
                n++;
    if (n == 0) {
        PMIx_Info_free(res, nkeys);
        return PMIX_ERR_NOT_FOUND;
    }
    /* the tail past n is constructed and empty: PMIx_Info_free(info, n)
     * releases the whole block */
    *info = res;
    *ninfo = n;
    return n == nkeys ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS;
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

/* Answered at once from local memory; the callback still runs after the
 * call returns (as OpenPMIx's does: its programs may hold a lock the
 * callback takes), with the query's status, PMIX_ERR_NOT_FOUND included. */
PMIX_EXPORT pmix_status_t PMIx_Query_info_nb(pmix_query_t queries[], size_t nqueries,
                                             pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    query_result *r;
    pmix_status_t rc;

    if (cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (!PMIx_Initialized())
        return PMIX_ERR_INIT;
    r = calloc(1, sizeof(*r));
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    rc = PMIx_Query_info(queries, nqueries, &r->info, &r->ninfo);
    if (rc != PMIX_SUCCESS && rc != PMIX_ERR_PARTIAL_SUCCESS && rc != PMIX_ERR_NOT_FOUND) {
        free(r);
        return rc;
    }
    r->status = rc;
    r->cbfunc = cbfunc;
    r->cbdata = cbdata;
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
