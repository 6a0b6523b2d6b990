/*
 * query_host.c - the PMIx_Query_info keys only a host can answer, asked
 * of the server (QUERY, px_proto.h) by a client or a tool.
 *
 * PMIX_QUERY_NAMESPACES (the namespaces the server serves: for a tool,
 * the running jobs), PMIX_QUERY_NAMESPACE_INFO (the same, each with its
 * command line), PMIX_QUERY_PROC_TABLE and PMIX_QUERY_LOCAL_PROC_TABLE
 * (a pmix_data_array_t of pmix_proc_info_t: host, executable, pid, exit
 * code and state of every process of the namespace the qualifier
 * PMIX_NSPACE names, or of its processes on the server's node),
 * PMIX_QUERY_SPAWN_SUPPORT and PMIX_QUERY_DEBUG_SUPPORT (comma-separated
 * lists of the spawn and debugger attributes the host acts on) go to the
 * server in the call's one QUERY (query.c, with the process-set keys);
 * the server passes them to its host (its query upcall). A
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
    PMIX_QUERY_NAMESPACES,       PMIX_QUERY_NAMESPACE_INFO, PMIX_QUERY_PROC_TABLE,
    PMIX_QUERY_LOCAL_PROC_TABLE, PMIX_QUERY_SPAWN_SUPPORT,  PMIX_QUERY_DEBUG_SUPPORT,
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
