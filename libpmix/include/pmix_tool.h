/*
 * pmix_tool.h: the tool interface of the PMIx Standard.
 *
 * A tool (a debugger, a job launcher's front end, a monitoring program) is a
 * process that was not started by a PMIx server but connects to one, or to
 * several, and then uses the client interface of pmix.h. PMIx_tool_init
 * connects to the server the info array designates (or the system's default
 * one) and returns the tool's own identifier in *proc.
 */
#ifndef PMIX_TOOL_H
#define PMIX_TOOL_H
/* OpenPMIx's spelling of the guard. */
#define PMIx_TOOL_API_H

#include <pmix.h>

#ifdef __cplusplus
extern "C" {
#endif

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void);
/* Drops the connection to one server; the tool stays initialised. */
PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server);
/* Connects to one more server; *server receives its identifier. */
PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *proc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo);
/* *servers is a new array the caller frees with PMIX_PROC_FREE. */
PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers);
/* Chooses which connected server the following calls talk to. */
PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[],
                                               size_t ninfo);

#ifdef __cplusplus
}
#endif

#endif /* PMIX_TOOL_H */
