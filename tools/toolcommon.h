/*
 * toolcommon.h - what the commands in tools/ share: choosing the server
 * to attach to from the command line, the questions every one of them
 * asks (the namespaces a server runs, a job's process table), and JSON
 * strings. Written against the Standard's tool API alone, as the commands.
 */
#ifndef PMIXLAB_TOOLCOMMON_H
#define PMIXLAB_TOOLCOMMON_H

#include <stdbool.h>
#include <stddef.h>

#include <pmix_tool.h>

/* The server options, as getopt_long entries and their letters: --pid
 * (p), --uri (u), --nspace (n) and, with `system`, --system (s). */
#define TC_SERVER_OPTS                                                                             \
    {"pid", required_argument, NULL, 'p'}, {"uri", required_argument, NULL, 'u'},                 \
        {"nspace", required_argument, NULL, 'n'}
#define TC_SYSTEM_OPT {"system", no_argument, NULL, 's'}

/* If `c` is one of the server options' letters ('s' only when `system`:
 * the command has --system), loads its attribute for PMIx_tool_init into
 * attr[*nattr] (PMIX_SERVER_PIDINFO, PMIX_SERVER_URI, PMIX_SERVER_NSPACE,
 * PMIX_CONNECT_TO_SYSTEM) and returns 1; 0 if it is not one; 2 (after a
 * message naming `prog`) for a second server option or a --pid that is no
 * process id. attr needs room for one entry. */
int tc_server_opt(const char *prog, bool system, int c, const char *arg, pmix_info_t *attr,
                  size_t *nattr);

/* The namespaces the server runs (PMIX_QUERY_NAMESPACES), NULL-ended
 * (free with PMIx_Argv_free), or NULL if it did not say. */
char **tc_namespaces(void);

/* The process table of namespace `ns` (PMIX_QUERY_PROC_TABLE): *pi and *n
 * point into *info, which the caller frees with PMIx_Info_free(*info,
 * *ninfo) once done. PMIX_ERR_BAD_PARAM for an answer of another shape. */
pmix_status_t tc_proc_table(const char *ns, pmix_info_t **info, size_t *ninfo,
                            const pmix_proc_info_t **pi, size_t *n);

/* Print `s` as a JSON string on stdout (NULL as ""). */
void tc_json_str(const char *s);

#endif
