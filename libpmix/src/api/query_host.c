/*
 * query_host.c - the PMIx_Query_info keys only a host can answer, asked
 * of the server (QUERY, px_proto.h) by a client or a tool.
 *
 * PMIX_QUERY_NAMESPACES (the namespaces the server serves: for a tool,
 * the running jobs), PMIX_QUERY_NAMESPACE_INFO (the same, each with its
 * command line), PMIX_QUERY_PROC_TABLE and PMIX_QUERY_LOCAL_PROC_TABLE
 * (a pmix_data_array_t of pmix_proc_info_t: host, executable, pid, exit
 * code and state of every process of the namespace the qualifier
 * PMIX_NSPACE names, or of its processes on the server's node) go to the
 * server in one QUERY; the server's host answers (its query upcall). A
 * query of these keys that the host cannot answer is answered from the
 * process's memory where query.c can (PMIX_QUERY_NAMESPACES: the caller's
 * own namespace), else left unanswered.
 */
#include <stdlib.h>
#include <string.h>

#include "api/px_api.h"
#include "common/px_common.h"
#include "px_proto.h"

static const char *const host_keys[] = {
    PMIX_QUERY_NAMESPACES,
    PMIX_QUERY_NAMESPACE_INFO,
    PMIX_QUERY_PROC_TABLE,
    PMIX_QUERY_LOCAL_PROC_TABLE,
};

bool px_api_is_tool(void)
{
    px_api_client *ac = px_api_current();

    return ac->refcount > 0 && ac->client != NULL && px_client_is_tool(ac->client);
}

bool px_api_query_host_key(const char *key)
{
    for (size_t i = 0; i < sizeof(host_keys) / sizeof(host_keys[0]); i++)
        if (strcmp(key, host_keys[i]) == 0)
            return true;
    return false;
}

typedef struct q_wait {
    px_wait w;
    px_api_client *ac;
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
} q_wait;

static void q_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                   pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    q_wait *q = cbdata;

    q->status = status;
    if (ninfo > 0 && info != NULL && (q->info = PMIx_Info_create(ninfo)) != NULL) {
        for (size_t i = 0; i < ninfo; i++)
            PMIx_Info_xfer(&q->info[i], &info[i]);
        q->ninfo = ninfo;
    }
    if (release_fn != NULL)
        release_fn(release_cbdata);
    q->ac->pops->wake(q->ac->pctx, &q->w);
}

pmix_status_t px_api_query_host(const pmix_query_t queries[], size_t nqueries, pmix_info_t **info,
                                size_t *ninfo)
{
    px_api_client *ac = px_api_current();
    pmix_query_t *mine;
    size_t n = 0;
    pmix_status_t rc;
    q_wait q;

    *info = NULL;
    *ninfo = 0;
    if (ac->refcount <= 0 || ac->client == NULL)
        return PMIX_ERR_INIT;
    if (nqueries > PX_QUERY_MAX)
        return PMIX_ERR_BAD_PARAM;
    if ((mine = PMIx_Query_create(nqueries)) == NULL)
        return PMIX_ERR_NOMEM;
    /* the host's keys of each query, with its qualifiers (borrowed) */
    for (size_t i = 0; i < nqueries; i++) {
        char **keys = NULL;
        for (size_t k = 0; queries[i].keys != NULL && queries[i].keys[k] != NULL; k++)
            if (px_api_query_host_key(queries[i].keys[k]))
                PMIx_Argv_append_nosize(&keys, queries[i].keys[k]);
        if (keys == NULL)
            continue;
        mine[n].keys = keys;
        mine[n].qualifiers = queries[i].qualifiers;
        mine[n].nqual = queries[i].nqual;
        n++;
    }
    rc = PMIX_ERR_NOT_FOUND;
    if (n > 0) {
        memset(&q, 0, sizeof(q));
        q.ac = ac;
        ac->pops->lock(ac->pctx);
        if (ac->pops->in_callback != NULL && ac->pops->in_callback(ac->pctx))
            rc = PMIX_ERR_WOULD_BLOCK; /* the loop would wait for itself */
        else
            rc = px_client_query(ac->client, mine, n, q_done, &q);
        ac->pops->unlock(ac->pctx);
        if (rc == PMIX_SUCCESS) {
            ac->pops->wait(ac->pctx, &q.w);
            rc = q.status;
            *info = q.info;
            *ninfo = q.ninfo;
        }
    }
    for (size_t i = 0; i < n; i++) {
        PMIx_Argv_free(mine[i].keys);
        mine[i].keys = NULL;
        mine[i].qualifiers = NULL; /* borrowed */
        mine[i].nqual = 0;
    }
    PMIx_Query_free(mine, nqueries);
    return rc;
}
