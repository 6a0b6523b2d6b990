/*
 * px_client.h - the client engine.
 *
 * A px_client is one PMIx client process's view of the world: its identity,
 * the job-level data its server sent in the handshake, its own puts, the
 * data it collected or fetched, its pending requests to the server and its
 * event handlers. It reaches its server through the platform ops
 * (connection PX_CONN_SERVER) and receives frames through px_client_sink().
 *
 * Every operation is asynchronous: it returns PMIX_SUCCESS and later calls
 * its callback exactly once, or returns an error and never calls it (the
 * libuv rule). Operations answered from local memory complete before they
 * return and say so by returning PMIX_OPERATION_SUCCEEDED (their results in
 * out-parameters); then no callback is called either. The api/ shim turns
 * all of this into the Standard's blocking and non-blocking calls.
 *
 * Every function must be called with the platform's engine lock held;
 * callbacks run with it held.
 */
#ifndef PX_CLIENT_H
#define PX_CLIENT_H

#include <stdbool.h>

#include <pmix.h>

#include "px_platform.h"

typedef struct px_client px_client;

/* Create a client whose identity is `self` (from the launcher's
 * environment, or given by pmixsim). Returns NULL on allocation failure. */
px_client *px_client_create(const px_platform_ops *pops, void *pctx, const pmix_proc_t *self);
/* Release everything without calling callbacks. NULL is a no-op. */
void px_client_destroy(px_client *c);

const px_sink *px_client_sink(void);

const pmix_proc_t *px_client_self(const px_client *c);
bool px_client_connected(const px_client *c);

/* Run fn(arg) later, from the platform's progress, with the lock held
 * (a zero-delay timer): for callbacks that must not run before the call
 * that promised them returns. A deferred call is not cancelled by
 * px_client_destroy: it must not outlive the platform either. */
pmix_status_t px_client_defer(px_client *c, void (*fn)(void *arg), void *arg);

/* How long a handshake may take unless PMIx_Init says (PMIX_TIMEOUT). */
#define PX_HANDSHAKE_TIMEOUT 10.0

/* Handshake with the server: cbfunc(status) once the job data is in. */
pmix_status_t px_client_connect(px_client *c, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata);
/* Tell the server we finalize; cbfunc once it acknowledged (or at once
 * with PMIX_ERR_UNREACH when the connection is gone). */
pmix_status_t px_client_finalize(px_client *c, pmix_op_cbfunc_t cbfunc, void *cbdata);

pmix_status_t px_client_abort(px_client *c, int status, const char msg[], const pmix_proc_t procs[],
                              size_t nprocs, pmix_op_cbfunc_t cbfunc, void *cbdata);

pmix_status_t px_client_put(px_client *c, pmix_scope_t scope, const char key[],
                            const pmix_value_t *val);
/* Send what was put since the last commit to the server. Completes
 * locally (no reply is needed: the stream keeps it ahead of later
 * requests). */
pmix_status_t px_client_commit(px_client *c);
pmix_status_t px_client_store_internal(px_client *c, const pmix_proc_t *proc, const char key[],
                                       const pmix_value_t *val);

/* Get. Returns PMIX_OPERATION_SUCCEEDED with *out set (a new value the
 * caller releases) when answered locally; PMIX_ERR_NOT_FOUND when the key
 * certainly does not exist (or PMIX_OPTIONAL forbids asking); PMIX_SUCCESS
 * when the server was asked and cbfunc will tell. */
pmix_status_t px_client_get(px_client *c, const pmix_proc_t *proc, const char key[],
                            const pmix_info_t info[], size_t ninfo, pmix_value_t **out,
                            pmix_value_cbfunc_t cbfunc, void *cbdata);

/* Fence. Returns PMIX_OPERATION_SUCCEEDED when the calling process is the
 * only participant; otherwise PMIX_SUCCESS and cbfunc later. */
pmix_status_t px_client_fence(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                              void *cbdata);

/* The fence page (px_page.h), for a blocking PMIx_Fence. Arrive first:
 *   PX_LBAR_NONE    not on the page: use px_client_fence;
 *   PX_LBAR_DONE    the barrier is complete;
 *   PX_LBAR_WAIT    sleep (without the lock) while the word at
 *                   px_client_lbar_word() holds lb->seen, then check again;
 *   PX_LBAR_SERVER  arrived, and this fence goes to the server:
 *                   px_client_fence_arrived (never px_client_fence, which
 *                   would arrive a second time).
 * px_client_lbar_check returns WAIT, DONE or SERVER. A fence with
 * PMIX_COLLECT_DATA as its only directive is done on the page too: the
 * last arrival asks the server, which answers through the page. */
#define PX_LBAR_NONE 0
#define PX_LBAR_DONE 1
#define PX_LBAR_WAIT 2
#define PX_LBAR_SERVER 3
typedef struct px_lbar {
    void *pg;             /* the page arrived on */
    uint32_t gen;         /* the generation arrived in */
    uint32_t seen;        /* the word's value last seen */
    bool bound;           /* no deadline needed: the server's death ends this process */
    pmix_status_t status; /* with PX_LBAR_DONE: the fence's result */
} px_lbar;
int px_client_lbar_arrive(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                          const pmix_info_t info[], size_t ninfo, px_lbar *lb);
int px_client_lbar_check(px_client *c, px_lbar *lb);
/* The word to sleep on after PX_LBAR_WAIT: the page arrived on's, still
 * mapped even if this client turned the page off since. */
uint32_t *px_client_lbar_word(const px_lbar *lb);
pmix_status_t px_client_fence_arrived(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Events. Registration completes before it returns (*id set); the caller
 * calls the Standard's registration callback. */
pmix_status_t px_client_register_event(px_client *c, const pmix_status_t codes[], size_t ncodes,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_notification_fn_t evhdlr, size_t *id);
pmix_status_t px_client_deregister_event(px_client *c, size_t id);
/* Run the chain of local handlers for `status` and, for ranges beyond the
 * process, send the event to the server. */
pmix_status_t px_client_notify(px_client *c, pmix_status_t status, const pmix_proc_t *source,
                               pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void *cbdata);

/* Job control (cleanup registrations): cbfunc with the server's answer. */
pmix_status_t px_client_job_control(px_client *c, const pmix_proc_t targets[], size_t ntargets,
                                    const pmix_info_t directives[], size_t ndirs,
                                    pmix_info_cbfunc_t cbfunc, void *cbdata);

/* Ask the server the queries (their keys and qualifiers as they are):
 * cbfunc with its status and answers, one info per key it answered. The
 * server answers the process-set keys (px_query_key_is_pset) itself and
 * hands the keys only a host knows (PMIX_QUERY_NAMESPACES,
 * PMIX_QUERY_PROC_TABLE...) to its host's query upcall; the api/ shim
 * sends it those alone. PMIX_ERR_TIMEOUT if a query's PMIX_TIMEOUT
 * qualifier (the longest counts) passes first. */
pmix_status_t px_client_query(px_client *c, const pmix_query_t queries[], size_t nqueries,
                              pmix_info_cbfunc_t cbfunc, void *cbdata);
/* Groups (client/group.c). Each sends one request to the server and
 * calls its callback once with the outcome; the info callbacks get the
 * results array (PMIX_GROUP_ID, PMIX_GROUP_CONTEXT_ID if one was assigned,
 * PMIX_GROUP_MEMBERSHIP) on PMIX_SUCCESS and PMIX_ERR_PARTIAL_SUCCESS, with
 * a release function. Bad arguments (a NULL or empty name, no members, a
 * NULL leader) return PMIX_ERR_BAD_PARAM; a destruct or leave of a group
 * this process is not a member of PMIX_ERR_NOT_FOUND; a construct or
 * invitation of a group it already has PMIX_ERR_EXISTS. Leave completes
 * once the server has told the node's other members. */
pmix_status_t px_client_group_construct(px_client *c, const char grp[], const pmix_proc_t procs[],
                                        size_t nprocs, const pmix_info_t dirs[], size_t ndirs,
                                        pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t px_client_group_destruct(px_client *c, const char grp[], const pmix_info_t dirs[],
                                       size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t px_client_group_invite(px_client *c, const char grp[], const pmix_proc_t procs[],
                                     size_t nprocs, const pmix_info_t dirs[], size_t ndirs,
                                     pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t px_client_group_join(px_client *c, const char grp[], const pmix_proc_t *leader,
                                   pmix_group_opt_t opt, const pmix_info_t dirs[], size_t ndirs,
                                   pmix_info_cbfunc_t cbfunc, void *cbdata);
pmix_status_t px_client_group_leave(px_client *c, const char grp[], const pmix_info_t dirs[],
                                    size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);
/* Answer group query `key` (PMIX_QUERY_NUM_GROUPS, PMIX_QUERY_GROUP_NAMES,
 * PMIX_QUERY_GROUP_MEMBERSHIP with its PMIX_GROUP_ID qualifier) into `out`
 * from the groups this process is a member of. PMIX_ERR_NOT_SUPPORTED for
 * any other key; PMIX_ERR_NOT_FOUND for an unknown group;
 * PMIX_ERR_BAD_PARAM without the qualifier. */
pmix_status_t px_client_group_query(px_client *c, const char *key, const pmix_info_t qual[],
                                    size_t nqual, pmix_info_t *out);
/* Tools (client/tool.c). A tool is a client engine that says so in its
 * HELLO: px_client_set_tool before px_client_connect. Its `self` is then
 * the identity it asks for (an empty namespace: "the host assigns one"),
 * and once connected px_client_self is the one the server's host gave it
 * and px_client_server the server's own name. */
void px_client_set_tool(px_client *c);
bool px_client_is_tool(const px_client *c);
const pmix_proc_t *px_client_server(const px_client *c);

/* Publish, lookup, unpublish: requests to the server's host (the
 * Standard's rules; px_proto.h for the messages). Each returns
 * PMIX_SUCCESS and calls its callback once with the host's answer (or
 * PMIX_ERR_TIMEOUT after PMIX_TIMEOUT (a lookup: a second later, should
 * the host not end it itself), PMIX_ERR_LOST_CONNECTION), or
 * returns an error (PMIX_ERR_BAD_PARAM for no data, no key or a bad key,
 * PMIX_ERR_INIT, PMIX_ERR_UNREACH) and never calls it. The lookup's data
 * is borrowed for the callback. NULL keys to unpublish: every key the
 * caller published. */
pmix_status_t px_client_publish(px_client *c, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t px_client_lookup(px_client *c, char **keys, const pmix_info_t info[], size_t ninfo,
                               pmix_lookup_cbfunc_t cbfunc, void *cbdata);
pmix_status_t px_client_unpublish(px_client *c, char **keys, const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata);
/* Spawn (client/spawn.c): a new job made by the server's host from
 * `apps` with the directives `job_info` (both borrowed for the call).
 * PMIX_SUCCESS, then the callback once with the new namespace (NULL on an
 * error: the host's, PMIX_ERR_TIMEOUT after PMIX_TIMEOUT,
 * PMIX_ERR_LOST_CONNECTION); or an error (PMIX_ERR_BAD_PARAM for no app,
 * an app with no command or maxprocs below 1; PMIX_ERR_INIT,
 * PMIX_ERR_UNREACH) and no callback. */
pmix_status_t px_client_spawn(px_client *c, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata);

/* Output forwarding (client/iof.c). iof_pull registers a handler for the
 * output of `procs` on `channels` and asks the server: it returns
 * PMIX_SUCCESS with the handler's id in *id, and calls regcb (if not NULL)
 * once with the server's answer and the id (SIZE_MAX and no handler if it
 * refused); or it returns an error (PMIX_ERR_BAD_PARAM for no process or
 * no channel, PMIX_ERR_INIT, PMIX_ERR_UNREACH) and calls nothing. Output
 * then comes to cbfunc (borrowed bytes), or with cbfunc NULL is written to
 * this process's stdout/stderr (PMIX_IOF_TAG_OUTPUT: each line tagged
 * "[nspace,rank]<stdout>: "). iof_deregister drops the handler at once
 * and tells the server (PMIX_OPERATION_SUCCEEDED when there is no server
 * to tell, PMIX_ERR_NOT_FOUND for an unknown id). */
pmix_status_t px_client_iof_pull(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t dirs[], size_t ndirs,
                                 pmix_iof_channel_t channels, pmix_iof_cbfunc_t cbfunc,
                                 pmix_hdlr_reg_cbfunc_t regcb, void *regcbdata, size_t *id);
pmix_status_t px_client_iof_deregister(px_client *c, size_t id, const pmix_info_t dirs[],
                                       size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);
/* iof_push sends `len` bytes of `data` (copied) for the stdin of `targets`
 * (a rank or PMIX_RANK_WILDCARD), or with `eof` (and no data) the end of
 * that input. It returns PMIX_SUCCESS and calls cbfunc (if not NULL) once
 * the server's host delivered it (PMIX_ERR_NOT_FOUND: no target reads
 * input from it; PMIX_ERR_NOT_SUPPORTED: the host forwards none; a
 * PMIX_TIMEOUT directive bounds the wait), or returns an error
 * (PMIX_ERR_BAD_PARAM, PMIX_ERR_INIT, PMIX_ERR_UNREACH) and calls nothing. */
pmix_status_t px_client_iof_push(px_client *c, const pmix_proc_t targets[], size_t ntargets,
                                 const void *data, size_t len, bool eof, const pmix_info_t dirs[],
                                 size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata);

#endif /* PX_CLIENT_H */
