/*
 * px_server.h - the server engine.
 *
 * A px_server serves the clients of one node: it accepts their handshakes,
 * keeps the job-level data the host registered and the data the clients
 * commit, answers their Gets (from its store, by waiting for a local
 * client's commit, or by asking the host for a remote process's data:
 * direct modex), and aggregates their collectives (the tracker): a fence
 * makes one upcall to the host per collective per node, once every local
 * participant has joined, or none at all when every participant is local.
 *
 * The engine talks to its host through px_server_host, a table of upcalls
 * that carry the host's context pointer (the Standard's
 * pmix_server_module_t does not, which forces globals on every host; the
 * api/ shim adapts one to the other). It talks to clients through the
 * platform ops of px_platform.h, and receives their frames through the
 * sink returned by px_server_sink().
 *
 * Every function here must be called with the platform's engine lock held.
 * Upcalls run with it held too; a host may complete them (call the cbfunc
 * it was given) from inside the upcall or later, from any thread that
 * holds the lock.
 */
#ifndef PX_SERVER_H
#define PX_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include <pmix_server.h>

#include "px_platform.h"

/* 2: the group upcall was appended; 3: publish, lookup and unpublish;
 * 4: tool_connected and query; 5: notify_event; 6: spawn; 7: iof_pull;
 * 8: push_stdin.
 * A table of an older version (from 1) is still accepted: the upcalls it
 * lacks count as NULL (no group upcall; PMIX_ERR_NOT_SUPPORTED for
 * publish, lookup, spawn and output pulls; tools refused, the queries only
 * a host answers unanswered, and events kept on the node). */
#define PX_SERVER_HOST_VERSION 8
#define PX_SERVER_HOST_VERSION_MIN 1

typedef struct px_server px_server;

/* A group operation of this node, as the engine hands it to its host (the
 * group upcall below). Everything is borrowed for the call: a host copies
 * what it keeps.
 *
 * The collective is named by (op, grp, procs): every node that hosts a
 * member makes exactly one such upcall per operation, with the same op,
 * grp and procs, whatever order its members named them in. A host runs it
 * as an allgather among those nodes: each contributes `data` (opaque to
 * the host; empty for a destruct), and each gets back the concatenation
 * of every node's contribution in any order, the same bytes on every
 * node. */
typedef struct px_group_req {
    pmix_group_operation_t op; /* PMIX_GROUP_CONSTRUCT or PMIX_GROUP_DESTRUCT */
    const char *grp;           /* the group's name (at most PMIX_MAX_NSLEN) */
    /* The members, in group-rank order (a construct's, as its callers named
     * them, namespaces' wildcards expanded; a destruct's, as constructed).
     * The participating nodes are those that host a member. */
    const pmix_proc_t *procs;
    size_t nprocs;
    /* PMIX_GROUP_ASSIGN_CONTEXT_ID: the host gives the group a context id,
     * unique for the life of the launcher or daemon set, the same on every
     * node (px_hostcore.h, px_ctxid_next, says how, without coordination). */
    bool assign_ctxid;
    bool optional;           /* PMIX_GROUP_OPTIONAL: members may be missing */
    bool notify_termination; /* PMIX_GROUP_NOTIFY_TERMINATION */
    bool has_leader;         /* PMIX_GROUP_LEADER: `leader` declared itself */
    pmix_proc_t leader;
    /* PMIX_TIMEOUT in seconds, 0 for none. The engine enforces it on this
     * node's members itself; a host may use it to bound its exchange. */
    double timeout;
    /* PMIX_LOCAL_COLLECTIVE_STATUS: not PMIX_SUCCESS when a member of this
     * node failed (PMIX_GROUP_MEMBER_FAILED) or the wait timed out; the
     * host must then fail the operation on every node with that status
     * (and fail the late contributions of other nodes the same way). Its
     * data is empty then. */
    pmix_status_t local_status;
    const char *data; /* this node's contribution; empty for a destruct */
    size_t ndata;
} px_group_req;

/* The completion of a group upcall. `status` is the operation's outcome on
 * every node (the same everywhere); on success `data` holds every node's
 * contribution concatenated, and `ctxid` the context id when the request
 * asked for one (`has_ctxid`), else it is ignored. The engine reads the
 * data during the call and then calls release_fn(release_cbdata) (if not
 * NULL); the host may free it then. */
typedef void (*px_group_cbfunc_t)(pmix_status_t status, bool has_ctxid, uint64_t ctxid,
                                  const char *data, size_t ndata, void *cbdata,
                                  pmix_release_cbfunc_t release_fn, void *release_cbdata);

typedef struct px_server_host {
    unsigned version;
    /* A registered client completed its handshake. Return
     * PMIX_OPERATION_SUCCEEDED to accept at once, PMIX_SUCCESS to decide
     * later through cbfunc, or an error to refuse it. May be NULL. */
    pmix_status_t (*client_connected)(void *hctx, const pmix_proc_t *proc, void *server_object,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata);
    /* A client finalized (it called PMIx_Finalize); same return rules; the
     * client's finalize completes when the host is done. May be NULL. */
    pmix_status_t (*client_finalized)(void *hctx, const pmix_proc_t *proc, void *server_object,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata);
    /* A client's connection ended without finalize (it died or was
     * dropped). `why` says how. May be NULL. */
    void (*client_lost)(void *hctx, const pmix_proc_t *proc, void *server_object,
                        pmix_status_t why);
    /* PMIx_Abort. If NULL, the engine replies PMIX_ERR_NOT_SUPPORTED. */
    pmix_status_t (*abort)(void *hctx, const pmix_proc_t *proc, void *server_object, int status,
                           const char msg[], pmix_proc_t procs[], size_t nprocs,
                           pmix_op_cbfunc_t cbfunc, void *cbdata);
    /* The node's part of a collective that spans other nodes: `data` is
     * this node's contribution (records, see store/px_store.h). The host
     * runs the collective across the participating nodes and calls cbfunc
     * with the concatenation of every node's contribution. The info array
     * may carry PMIX_LOCAL_COLLECTIVE_STATUS with an error: a local
     * participant failed, and the host must fail the collective everywhere.
     * Returning PMIX_OPERATION_SUCCEEDED means done, cbfunc not called. */
    pmix_status_t (*fence_nb)(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata);
    /* The data of a process that is not local: cbfunc with one record. */
    pmix_status_t (*direct_modex)(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                                  size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata);
    /* Job control (PMIX_REGISTER_CLEANUP...): the engine does no I/O, so
     * only a host can act on it. If NULL, requests get
     * PMIX_ERR_NOT_SUPPORTED. */
    pmix_status_t (*job_control)(void *hctx, const pmix_proc_t *requestor,
                                 const pmix_proc_t targets[], size_t ntargets,
                                 const pmix_info_t directives[], size_t ndirs,
                                 pmix_info_cbfunc_t cbfunc, void *cbdata);
    /* As client_connected (and used instead of it when not NULL), with
     * what the platform vouches for about the peer: PMIX_USERID and
     * PMIX_GRPID (PMIX_UINT32), and PMIX_PROC_PID (PMIX_PID) when the
     * platform knows it (posix: SO_PEERCRED). A host that started the
     * process itself can refuse a peer that is not that process. `info`
     * is borrowed for the call. May be NULL. */
    pmix_status_t (*client_connected2)(void *hctx, const pmix_proc_t *proc, void *server_object,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata);
    /* Version 2. A group operation that spans nodes, or that asks for a
     * context id (which only a host can make unique): see px_group_req.
     * The engine makes one upcall per operation per node, once every local
     * member has called it (or has failed, or the wait timed out), and
     * none when every member is local and no context id is asked for.
     * Return PMIX_SUCCESS and call cbfunc exactly once later (from inside
     * the upcall too, with the engine lock held or from any thread that
     * takes it), or an error and never call it. A request carrying a
     * local_status is the node's notice of failure: the host calls cbfunc
     * for it too. If NULL, operations that need a host fail with
     * PMIX_ERR_NOT_SUPPORTED. */
    pmix_status_t (*group)(void *hctx, const px_group_req *req, px_group_cbfunc_t cbfunc,
                           void *cbdata);

    /* ---- version 3 ---- */

    /* PMIx_Publish from `proc`: `info` holds the data and the directives
     * as the client passed them, then PMIX_USERID and PMIX_GRPID
     * (PMIX_UINT32) of the client, as the Standard requires; borrowed
     * for the call. The host stores the data (hostcore/px_pubsub.h) and
     * calls cbfunc with the outcome (PMIX_ERR_DUPLICATE_KEY...). Same
     * return rules as abort. If NULL, the client gets
     * PMIX_ERR_NOT_SUPPORTED. */
    pmix_status_t (*publish)(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                             size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
    /* PMIx_Lookup from `proc` of `keys` (NULL-terminated, borrowed for
     * the call) with the client's directives (PMIX_RANGE, PMIX_WAIT,
     * PMIX_TIMEOUT...) and its PMIX_USERID and PMIX_GRPID. cbfunc gets
     * the keys found, borrowed for that call. A lookup that waits
     * (PMIX_WAIT) may be answered much later, or never if its client goes
     * (then the host should still call cbfunc, which frees the request).
     * If NULL, PMIX_ERR_NOT_SUPPORTED. */
    pmix_status_t (*lookup)(void *hctx, const pmix_proc_t *proc, char **keys,
                            const pmix_info_t info[], size_t ninfo, pmix_lookup_cbfunc_t cbfunc,
                            void *cbdata);
    /* PMIx_Unpublish from `proc`: `keys` NULL means every key it
     * published. Only the owner may remove a key. If NULL,
     * PMIX_ERR_NOT_SUPPORTED. */
    pmix_status_t (*unpublish)(void *hctx, const pmix_proc_t *proc, char **keys,
                               const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                               void *cbdata);
    /* ---- version 4 ---- */

    /* A tool asks to connect (server/tool.c; only once px_server_tools
     * allowed tools). `info` says who it is: PMIX_USERID, PMIX_GRPID
     * (PMIX_UINT32) and PMIX_PROC_PID (PMIX_PID) as the platform vouches
     * for them, and PMIX_TOOL_NSPACE / PMIX_TOOL_RANK if the tool asked
     * for that identity. The host calls cbfunc(status, proc, cbdata) once,
     * from inside the upcall or later, with the namespace and rank the
     * tool gets (or an error to refuse it); `proc` is borrowed for that
     * call. `info` is borrowed for the upcall. If NULL, tools are refused
     * with PMIX_ERR_NOT_SUPPORTED. */
    void (*tool_connected)(void *hctx, const pmix_info_t info[], size_t ninfo,
                           pmix_tool_connection_cbfunc_t cbfunc, void *cbdata);
    /* PMIx_Query_info keys a client or tool sent to its server (the ones
     * only a host can answer: PMIX_QUERY_NAMESPACES, PMIX_QUERY_PROC_TABLE,
     * PMIX_QUERY_LOCAL_PROC_TABLE; the server answers the process-set keys
     * itself and passes the host only the others, each query with its
     * qualifiers). Same return rules as job_control:
     * PMIX_SUCCESS and cbfunc later (or inside), or an error and no call.
     * The answer is one info per key answered; PMIX_ERR_PARTIAL_SUCCESS or
     * PMIX_ERR_NOT_FOUND say some or none were. If NULL, queries get
     * PMIX_ERR_NOT_SUPPORTED. */
    pmix_status_t (*query)(void *hctx, const pmix_proc_t *requestor, const pmix_query_t queries[],
                           size_t nqueries, pmix_info_cbfunc_t cbfunc, void *cbdata);

    /* ---- version 5 ---- */

    /* An event a client notified (PMIx_Notify_event) whose range goes
     * beyond this node: PMIX_RANGE_NAMESPACE, _SESSION, _GLOBAL, _RM or
     * _CUSTOM (the targets in PMIX_EVENT_CUSTOM_RANGE among `info`). The
     * engine has already delivered it to its own clients in range; the
     * host carries it to every other node's server, which delivers it with
     * px_server_notify (that applies the range). Everything is borrowed
     * for the call: a host copies what it keeps. Nothing is answered (a
     * client's notification has no reply). If NULL, events stay on the
     * node. */
    void (*notify_event)(void *hctx, pmix_status_t status, const pmix_proc_t *source,
                         pmix_data_range_t range, const pmix_info_t info[], size_t ninfo);

    /* ---- version 6 ---- */

    /* PMIx_Spawn from `proc`: a new job of `apps` (each with maxprocs
     * processes) with the directives `job_info` (PMIX_MAPBY, PMIX_HOST,
     * PMIX_NOTIFY_COMPLETION...), all borrowed for the call. The host
     * registers the new namespace (its job data with PMIX_SPAWNED true and
     * PMIX_PARENT_ID = `proc`), starts its processes and calls
     * cbfunc(status, nspace, cbdata) once: PMIX_SUCCESS with the new
     * namespace once every process started, or the error that stopped the
     * job (PMIX_ERR_JOB_EXE_NOT_FOUND, PMIX_ERR_OUT_OF_RESOURCE for too few
     * slots...), never leaving processes of a failed spawn behind. Same
     * return rules as abort. If NULL, the client gets
     * PMIX_ERR_NOT_SUPPORTED. Connect and disconnect need no upcall of
     * their own: they run as group operations (the group upcall). */
    pmix_status_t (*spawn)(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                           size_t ninfo, const pmix_app_t apps[], size_t napps,
                           pmix_spawn_cbfunc_t cbfunc, void *cbdata);

    /* ---- version 7 ---- */

    /* PMIx_IOF_pull from `requestor` (a client or a tool): the output of
     * `procs` (a rank, or PMIX_RANK_WILDCARD for a whole namespace) on
     * `channels` (PMIX_FWD_STDOUT_CHANNEL...), with the asker's
     * directives; all borrowed for the call. The server keeps the
     * subscription; the host says whether it will deliver that output
     * (px_server_iof_deliver): PMIX_OPERATION_SUCCEEDED (yes, now),
     * PMIX_SUCCESS and cbfunc later with the outcome, or an error to
     * refuse (no call). If NULL (or the table is older), pulls get
     * PMIX_ERR_NOT_SUPPORTED. */
    pmix_status_t (*iof_pull)(void *hctx, const pmix_proc_t *requestor, const pmix_proc_t procs[],
                              size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                              pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc, void *cbdata);

    /* ---- version 8 ---- */

    /* PMIx_IOF_push from `source` (a client or a tool): `len` bytes of
     * `data` for the standard input of `targets` (a rank, or
     * PMIX_RANK_WILDCARD for every rank of a namespace), or with `eof`
     * (then len is 0) the end of that input: the host closes the targets'
     * stdin once what was pushed before has reached it. All borrowed for
     * the call. The host answers PMIX_OPERATION_SUCCEEDED (delivered now),
     * or PMIX_SUCCESS and cbfunc once the bytes have been written to every
     * target still reading (the pusher's flow control), or an error with
     * no call (PMIX_ERR_NOT_FOUND: no target reads input from the host).
     * If NULL (or the table is older), pushes get PMIX_ERR_NOT_SUPPORTED. */
    pmix_status_t (*push_stdin)(void *hctx, const pmix_proc_t *source, const pmix_proc_t targets[],
                                size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                                const void *data, size_t len, bool eof, pmix_op_cbfunc_t cbfunc,
                                void *cbdata);
} px_server_host;

/* Create a server. `hops`/`hctx` are the host, `pops`/`pctx` the platform;
 * both are borrowed and must outlive the server. Returns NULL on failure. */
px_server *px_server_create(const px_server_host *hops, void *hctx, const px_platform_ops *pops,
                            void *pctx);
/* Release everything without calling any callback. Call it after the
 * platform has stopped delivering but before the platform is freed: every
 * timer the server started that has not fired yet (a fence's PMIX_TIMEOUT,
 * a parked Get's timeout, the deferred drop of a client whose reply could
 * not be sent) is cancelled through the platform's timer_cancel before
 * this returns, so a host that destroys a server with work pending never
 * gets a timer callback into it afterwards. Callbacks the host still
 * holds (the cbfunc of a fence_nb or direct_modex upcall, the answer to
 * client_connected or client_finalized) point into the server: the host
 * must not call them once the server is destroyed. NULL is a no-op. */
void px_server_destroy(px_server *s);

/* The sink the platform delivers client connections to (sctx = server). */
const px_sink *px_server_sink(void);

/* Job and client registration (the Standard's server API). */
pmix_status_t px_server_register_nspace(px_server *s, const char nspace[], int nlocalprocs,
                                        const pmix_info_t info[], size_t ninfo);
void px_server_deregister_nspace(px_server *s, const char nspace[]);
pmix_status_t px_server_register_client(px_server *s, const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                        void *server_object);
void px_server_deregister_client(px_server *s, const pmix_proc_t *proc);
/* Add to `env` (a NULL-terminated, malloc'd argv-style array, grown with
 * realloc) what a client needs to find its identity: PMIX_NAMESPACE,
 * PMIX_RANK. The platform adds how to reach the server. */
pmix_status_t px_server_setup_fork(px_server *s, const pmix_proc_t *proc, char ***env);

/* Ask for the data of local process `proc` on behalf of a remote server
 * (the host's side of direct modex). cbfunc gets one record for remote
 * readers, now if the process has committed, else when it does. */
pmix_status_t px_server_dmodex_request(px_server *s, const pmix_proc_t *proc,
                                       pmix_dmodex_response_fn_t cbfunc, void *cbdata);

/* Tell the engine a local client died, as the host saw it (e.g. waitpid),
 * even if its connection is still open or never opened. Pending
 * collectives it is part of fail on every local participant. */
void px_server_proc_died(px_server *s, const pmix_proc_t *proc, pmix_status_t why);

/* Raise event `status` from the host to this server's connected clients
 * in `range` (px_srv_in_range: nobody for PMIX_RANGE_PROC_LOCAL, those of
 * source's namespace for PMIX_RANGE_NAMESPACE, those PMIX_EVENT_CUSTOM_RANGE
 * names for PMIX_RANGE_CUSTOM, all of them otherwise), with `info`; each
 * client runs the handlers registered for it. The host upcall
 * notify_event is not called: this is how a host delivers an event that
 * came from another node. */
void px_server_notify(px_server *s, pmix_status_t status, const pmix_proc_t *source,
                      pmix_data_range_t range, const pmix_info_t info[], size_t ninfo);

/* Raise event `status` from the host to one client of this server,
 * `target` (nothing if it is not connected here), with range
 * PMIX_RANGE_CUSTOM: what a host tells the process that asked for
 * something (the end of a job it spawned with PMIX_NOTIFY_COMPLETION). */
void px_server_notify_proc(px_server *s, pmix_status_t status, const pmix_proc_t *source,
                           const pmix_proc_t *target, const pmix_info_t info[], size_t ninfo);

/* Output of local process `source` on `channel` (one PMIX_FWD_*_CHANNEL
 * bit): sent to every client and tool with a pull that matches it, once
 * each. Returns how many it was sent to. The bytes are borrowed. */
size_t px_server_iof_deliver(px_server *s, const pmix_proc_t *source, pmix_iof_channel_t channel,
                             const void *data, size_t len);

/* Process sets (the Standard's PMIx_server_define_process_set and
 * PMIx_server_delete_process_set). Define records the set `name` with a
 * copy of `members` (a name defined again is replaced) and raises
 * PMIX_PROCESS_SET_DEFINE, with PMIX_PSET_NAME and PMIX_PSET_MEMBERS, from
 * `source` to every connected client of this server. Delete removes it
 * (PMIX_ERR_NOT_FOUND if there is no such set) and raises
 * PMIX_PROCESS_SET_DELETE with PMIX_PSET_NAME. Neither reaches other
 * servers: a host with several tells each of them. The job data's own sets
 * (PMIX_PSET_NAME in a PMIX_APP_INFO_ARRAY) are in the same table from
 * registration on, and a delete removes them too. Errors change nothing. */
pmix_status_t px_server_define_process_set(px_server *s, const pmix_proc_t *source,
                                           const char *name, const pmix_proc_t members[],
                                           size_t nmembers);
pmix_status_t px_server_delete_process_set(px_server *s, const pmix_proc_t *source,
                                           const char *name);
/* Answer the process-set keys of `queries` (PMIX_QUERY_NUM_PSETS,
 * PMIX_QUERY_PSET_NAMES, PMIX_QUERY_PSET_MEMBERSHIP with PMIX_PSET_NAME)
 * from this server's table, as a client's QUERY is answered: *info gets
 * one entry per key answered (free with PMIx_Info_free(*info, *ninfo)).
 * PMIX_SUCCESS if every key was answered, PMIX_ERR_PARTIAL_SUCCESS if
 * some were, PMIX_ERR_NOT_FOUND if none, PMIX_ERR_BAD_PARAM for no key. */
pmix_status_t px_server_query_psets(px_server *s, const pmix_query_t queries[], size_t nqueries,
                                    pmix_info_t **info, size_t *ninfo);
/* True for the query keys px_server_query_psets answers. */
bool px_query_key_is_pset(const char *key);

/* Number of clients connected and in the handshake-completed state
 * (tools not counted). */
size_t px_server_nclients(const px_server *s);

/* Accept tools (server/tool.c): peers of user `uid` that say they are
 * tools in their HELLO. `self` is the server's own name, which each tool
 * learns in its WELCOME (PMIx_tool_get_servers). At most PX_SERVER_MAX_TOOLS
 * tools are connected at once; more are refused (PMIX_ERR_OUT_OF_RESOURCE).
 * Without this call every tool is refused at its connection, as a peer of
 * any uid that no registered client has is. */
#define PX_SERVER_MAX_TOOLS 64
pmix_status_t px_server_tools(px_server *s, const pmix_proc_t *self, uint32_t uid);
/* Number of tools connected (handshake done). */
size_t px_server_ntools(const px_server *s);

#endif /* PX_SERVER_H */
