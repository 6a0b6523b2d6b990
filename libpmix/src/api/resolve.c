/*
 * resolve.c - PMIx_Resolve_peers and PMIx_Resolve_nodes, answered from the
 * job-level data every client holds (PMIX_LOCAL_PEERS per node,
 * PMIX_NODE_LIST, or PMIX_NODE_MAP expanded).
 */
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "common/px_regex.h"

PMIX_EXPORT pmix_status_t PMIx_Resolve_peers(const char *nodename, const char nspace[],
                                             pmix_proc_t **procs, size_t *nprocs)
{
    pmix_proc_t wild;
    pmix_info_t qual;
    pmix_value_t *v = NULL;
    pmix_status_t rc;
    size_t n = 1;
    const char *p;

    if (procs == NULL || nprocs == NULL)
        return PMIX_ERR_BAD_PARAM;
    *procs = NULL;
    *nprocs = 0;
    if (!PMIx_Initialized())
        return PMIX_ERR_INIT;
    memset(&wild, 0, sizeof(wild));
    if (nspace != NULL && nspace[0] != '\0') {
        PMIx_Load_procid(&wild, nspace, PMIX_RANK_WILDCARD);
    } else {
        /* the caller's namespace */
        pmix_proc_t me;
        if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
            return PMIX_ERR_INIT;
        PMIx_Finalize(NULL, 0);
        PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    }
    if (nodename != NULL) {
        PMIx_Info_load(&qual, PMIX_HOSTNAME, nodename, PMIX_STRING);
        rc = PMIx_Get(&wild, PMIX_LOCAL_PEERS, &qual, 1, &v);
        PMIx_Info_destruct(&qual);
    } else {
        rc = PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &v);
    }
    if (rc != PMIX_SUCCESS)
        return rc;
    if (v->type != PMIX_STRING || v->data.string == NULL) {
        PMIx_Value_free(v, 1);
        return PMIX_ERR_TYPE_MISMATCH;
    }
    for (p = v->data.string; *p != '\0'; p++)
        n += *p == ',';
    *procs = PMIx_Proc_create(n);
    if (*procs == NULL) {
        PMIx_Value_free(v, 1);
        return PMIX_ERR_NOMEM;
    }
    p = v->data.string;
    while (*p != '\0') {
        char *end;
        unsigned long r = strtoul(p, &end, 10);
        if (end == p)
            break;
        PMIx_Load_procid(&(*procs)[*nprocs], wild.nspace, (pmix_rank_t)r);
        (*nprocs)++;
        p = *end == ',' ? end + 1 : end;
    }
    PMIx_Value_free(v, 1);
    if (*nprocs == 0) {
        PMIx_Proc_free(*procs, n);
        *procs = NULL;
        return PMIX_ERR_NOT_FOUND;
    }
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Resolve_nodes(const char *nspace, char **nodelist)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    pmix_status_t rc;

    if (nodelist == NULL || nspace == NULL)
        return PMIX_ERR_BAD_PARAM;
    *nodelist = NULL;
    if (!PMIx_Initialized())
        return PMIX_ERR_INIT;
    PMIx_Load_procid(&wild, nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&wild, PMIX_NODE_LIST, NULL, 0, &v);
    if (rc == PMIX_SUCCESS && v->type == PMIX_STRING && v->data.string != NULL) {
        *nodelist = strdup(v->data.string);
        PMIx_Value_free(v, 1);
        return *nodelist != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    if (v != NULL)
        PMIx_Value_free(v, 1);
    v = NULL;
    rc = PMIx_Get(&wild, PMIX_NODE_MAP, NULL, 0, &v);
    if (rc != PMIX_SUCCESS)
        return rc;
    if ((v->type == PMIX_STRING || v->type == PMIX_REGEX) && v->data.string != NULL)
        rc = px_regex_expand_nodes(v->data.string, nodelist);
    else
        rc = PMIX_ERR_TYPE_MISMATCH;
    PMIx_Value_free(v, 1);
    return rc;
}
