/*
 * pmix_server.h: the server interface of the PMIx Standard.
 *
 * A host environment (a resource manager daemon such as pmixd) starts the
 * server library with PMIx_server_init, handing it a pmix_server_module_t: a
 * table of upcalls the library makes when clients ask for things only the
 * host can do (cross-node fences, spawn, publish, ...). Each upcall returns
 * PMIX_SUCCESS and completes later through its callback, returns
 * PMIX_OPERATION_SUCCEEDED when it finished without calling back, or returns
 * an error (the callback is then never called). A NULL member means the host
 * does not support that operation.
 *
 * The member order of pmix_server_module_t is ABI: it is the Standard v5.0
 * order (also OpenPMIx 4.2.2's), ending with client_connected2. Later drafts
 * of the Standard append tool_connected2 and log2; they are not here, so a
 * host built against this header never hands us a shorter table than we read.
 * Hosts should still fill it with designated initializers.
 */
#ifndef PMIX_SERVER_H
#define PMIX_SERVER_H
/* OpenPMIx's spelling of the guard. */
#define PMIx_SERVER_API_H

#include <pmix.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Upcalls to the host                                                       */

typedef pmix_status_t (*pmix_server_client_connected_fn_t)(const pmix_proc_t *proc,
                                                           void *server_object,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_client_connected2_fn_t)(const pmix_proc_t *proc,
                                                            void *server_object, pmix_info_t info[],
                                                            size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                            void *cbdata);
typedef pmix_status_t (*pmix_server_client_finalized_fn_t)(const pmix_proc_t *proc,
                                                           void *server_object,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_abort_fn_t)(const pmix_proc_t *proc, void *server_object,
                                                int status, const char msg[], pmix_proc_t procs[],
                                                size_t nprocs, pmix_op_cbfunc_t cbfunc,
                                                void *cbdata);
/* The host receives the node's collected data (`data`, owned by the library
 * until cbfunc runs) and returns the job-wide data through cbfunc. */
typedef pmix_status_t (*pmix_server_fencenb_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  char *data, size_t ndata,
                                                  pmix_modex_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_dmodex_req_fn_t)(const pmix_proc_t *proc,
                                                     const pmix_info_t info[], size_t ninfo,
                                                     pmix_modex_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_publish_fn_t)(const pmix_proc_t *proc, const pmix_info_t info[],
                                                  size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                  void *cbdata);
typedef pmix_status_t (*pmix_server_lookup_fn_t)(const pmix_proc_t *proc, char **keys,
                                                 const pmix_info_t info[], size_t ninfo,
                                                 pmix_lookup_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_unpublish_fn_t)(const pmix_proc_t *proc, char **keys,
                                                    const pmix_info_t info[], size_t ninfo,
                                                    pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_spawn_fn_t)(const pmix_proc_t *proc,
                                                const pmix_info_t job_info[], size_t ninfo,
                                                const pmix_app_t apps[], size_t napps,
                                                pmix_spawn_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_connect_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_disconnect_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                                     const pmix_info_t info[], size_t ninfo,
                                                     pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_register_events_fn_t)(pmix_status_t *codes, size_t ncodes,
                                                          const pmix_info_t info[], size_t ninfo,
                                                          pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_deregister_events_fn_t)(pmix_status_t *codes, size_t ncodes,
                                                            pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_notify_event_fn_t)(pmix_status_t code,
                                                       const pmix_proc_t *source,
                                                       pmix_data_range_t range, pmix_info_t info[],
                                                       size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                       void *cbdata);
typedef pmix_status_t (*pmix_server_listener_fn_t)(int listening_sd,
                                                   pmix_connection_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_query_fn_t)(pmix_proc_t *proct, pmix_query_t *queries,
                                                size_t nqueries, pmix_info_cbfunc_t cbfunc,
                                                void *cbdata);
typedef void (*pmix_server_tool_connection_fn_t)(pmix_info_t info[], size_t ninfo,
                                                 pmix_tool_connection_cbfunc_t cbfunc,
                                                 void *cbdata);
typedef void (*pmix_server_log_fn_t)(const pmix_proc_t *client, const pmix_info_t data[],
                                     size_t ndata, const pmix_info_t directives[], size_t ndirs,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_alloc_fn_t)(const pmix_proc_t *client,
                                                pmix_alloc_directive_t directive,
                                                const pmix_info_t data[], size_t ndata,
                                                pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_job_control_fn_t)(const pmix_proc_t *requestor,
                                                      const pmix_proc_t targets[], size_t ntargets,
                                                      const pmix_info_t directives[], size_t ndirs,
                                                      pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_monitor_fn_t)(const pmix_proc_t *requestor,
                                                  const pmix_info_t *monitor, pmix_status_t error,
                                                  const pmix_info_t directives[], size_t ndirs,
                                                  pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_get_cred_fn_t)(const pmix_proc_t *proc,
                                                   const pmix_info_t directives[], size_t ndirs,
                                                   pmix_credential_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_validate_cred_fn_t)(
    const pmix_proc_t *proc, const pmix_byte_object_t *cred, const pmix_info_t directives[],
    size_t ndirs, pmix_validation_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_iof_fn_t)(const pmix_proc_t procs[], size_t nprocs,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc,
                                              void *cbdata);
typedef pmix_status_t (*pmix_server_stdin_fn_t)(const pmix_proc_t *source,
                                                const pmix_proc_t targets[], size_t ntargets,
                                                const pmix_info_t directives[], size_t ndirs,
                                                const pmix_byte_object_t *bo,
                                                pmix_op_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_grp_fn_t)(pmix_group_operation_t op, char grp[],
                                              const pmix_proc_t procs[], size_t nprocs,
                                              const pmix_info_t directives[], size_t ndirs,
                                              pmix_info_cbfunc_t cbfunc, void *cbdata);
typedef pmix_status_t (*pmix_server_fabric_fn_t)(const pmix_proc_t *requestor,
                                                 pmix_fabric_operation_t op,
                                                 const pmix_info_t directives[], size_t ndirs,
                                                 pmix_info_cbfunc_t cbfunc, void *cbdata);

/* The host's upcall table, in the Standard's order (ABI-critical). */
typedef struct pmix_server_module_4_0_0_t {
    /* v1 */
    pmix_server_client_connected_fn_t client_connected; /* deprecated: client_connected2 */
    pmix_server_client_finalized_fn_t client_finalized;
    pmix_server_abort_fn_t abort;
    pmix_server_fencenb_fn_t fence_nb;
    pmix_server_dmodex_req_fn_t direct_modex;
    pmix_server_publish_fn_t publish;
    pmix_server_lookup_fn_t lookup;
    pmix_server_unpublish_fn_t unpublish;
    pmix_server_spawn_fn_t spawn;
    pmix_server_connect_fn_t connect;
    pmix_server_disconnect_fn_t disconnect;
    pmix_server_register_events_fn_t register_events;
    pmix_server_deregister_events_fn_t deregister_events;
    pmix_server_listener_fn_t listener;
    /* v2 */
    pmix_server_notify_event_fn_t notify_event;
    pmix_server_query_fn_t query;
    pmix_server_tool_connection_fn_t tool_connected;
    pmix_server_log_fn_t log;
    pmix_server_alloc_fn_t allocate;
    pmix_server_job_control_fn_t job_control;
    pmix_server_monitor_fn_t monitor;
    /* v3 */
    pmix_server_get_cred_fn_t get_credential;
    pmix_server_validate_cred_fn_t validate_credential;
    pmix_server_iof_fn_t iof_pull;
    pmix_server_stdin_fn_t push_stdin;
    /* v4 */
    pmix_server_grp_fn_t group;
    pmix_server_fabric_fn_t fabric;
    pmix_server_client_connected2_fn_t client_connected2;
} pmix_server_module_t;

/* ------------------------------------------------------------------------- */
/* Server functions                                                          */

/* Input namespaces are `const char nspace[]`, binary-identical to the
 * Standard's `const pmix_nspace_t` (see pmix.h). */

/* Starts the server library; `module` is copied. Calling it again while
 * running only reference-counts. */
PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[],
                                           size_t ninfo);
PMIX_EXPORT pmix_status_t PMIx_server_finalize(void);
/* Compress a comma-separated node list / per-node rank list into the
 * library's regular-expression form; *output is new memory the caller frees. */
PMIX_EXPORT pmix_status_t PMIx_generate_regex(const char *input, char **output);
PMIX_EXPORT pmix_status_t PMIx_generate_ppn(const char *input, char **ppn);
PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const char nspace[], int nlocalprocs,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT void PMIx_server_deregister_nspace(const char nspace[], pmix_op_cbfunc_t cbfunc,
                                               void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_register_resources(pmix_info_t info[], size_t ninfo,
                                                         pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_deregister_resources(pmix_info_t info[], size_t ninfo,
                                                           pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                                      void *server_object, pmix_op_cbfunc_t cbfunc,
                                                      void *cbdata);
PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata);
/* Adds to *env (an argv-style array, reallocated) what a client needs to
 * find and authenticate with this server. */
PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env);
PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                                     pmix_dmodex_response_fn_t cbfunc,
                                                     void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const char nspace[], pmix_info_t info[],
                                                        size_t ninfo,
                                                        pmix_setup_application_cbfunc_t cbfunc,
                                                        void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const char nspace[], pmix_info_t info[],
                                                          size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                          void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_IOF_deliver(const pmix_proc_t *source,
                                                  pmix_iof_channel_t channel,
                                                  const pmix_byte_object_t *bo,
                                                  const pmix_info_t info[], size_t ninfo,
                                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_collect_inventory(const pmix_info_t directives[],
                                                        size_t ndirs, pmix_info_cbfunc_t cbfunc,
                                                        void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_deliver_inventory(const pmix_info_t info[], size_t ninfo,
                                                        const pmix_info_t directives[],
                                                        size_t ndirs, pmix_op_cbfunc_t cbfunc,
                                                        void *cbdata);
PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                               char **locality);
PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                             char **cpuset_string);
PMIX_EXPORT pmix_status_t PMIx_server_define_process_set(const pmix_proc_t members[],
                                                         size_t nmembers, const char *pset_name);
PMIX_EXPORT pmix_status_t PMIx_server_delete_process_set(const char *pset_name);
/* Registers the attributes the host supports for one module function
 * (e.g. "fence_nb"); the array is copied. */
PMIX_EXPORT pmix_status_t PMIx_Register_attributes(const char *function, pmix_regattr_t attrs[],
                                                   size_t nattrs);

#ifdef __cplusplus
}
#endif

#endif /* PMIX_SERVER_H */
