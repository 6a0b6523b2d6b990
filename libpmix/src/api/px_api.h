/*
 * px_api.h - how the Standard's PMIx_* calls find the calling process's
 * engine, and how a host that runs many processes in one address space
 * (pmixsim) plugs its own contexts in.
 *
 * The api/ directory is the only code in the library with process-wide
 * state. A PMIx_* client call asks the current binding for the caller's
 * px_api_client: in a real process that is one static instance whose
 * engine runs on the posix platform (the default binding); in pmixsim it
 * is the state of the SimGrid actor that makes the call. Everything else
 * (reference counting of PMIx_Init, turning asynchronous engine operations
 * into blocking calls) is the same for both.
 */
#ifndef PX_API_H
#define PX_API_H

#include <pthread.h>

#include <pmix.h>

#include "client/px_client.h"
#include "px_platform.h"

typedef struct px_api_client px_api_client;

struct px_api_client {
    /* Serializes PMIx_Init and PMIx_Finalize of this client. One per client,
     * not per process: in pmixsim every simulated process has its own, and
     * one process blocked in PMIx_Init must not stop the others. A zeroed
     * mutex is a valid one (glibc), so calloc'd clients need no setup. */
    pthread_mutex_t init_lock;
    px_client *client;
    const px_platform_ops *pops;
    void *pctx;
    int refcount;                        /* PMIx_Init calls not yet balanced by PMIx_Finalize */
    int external_progress;               /* the first PMIx_Init's directive: -1 unset, 0, 1 */
    bool model_declared;                 /* an Init declared a programming model (declare_model) */
    void (*progress)(px_api_client *ac); /* PMIx_Progress; may be NULL */
    /* Something must now progress without the caller: a non-blocking call
     * or an event handler. The posix binding starts its progress thread
     * here (lazily: a process that only makes blocking calls reads its own
     * replies, one wake-up per call instead of two), unless the process
     * asked for PMIX_EXTERNAL_PROGRESS. May be NULL. */
    void (*need_progress)(px_api_client *ac);
    void (*teardown)(px_api_client *ac); /* stop the platform, free the engine */
    void *priv;                          /* the binding's own data (the posix platform) */
};

typedef struct px_api_binding {
    /* The caller's state; never NULL. */
    px_api_client *(*current)(void *arg);
    /* First PMIx_Init of the caller: create its engine and platform and
     * connect them (fill client, pops, pctx, progress, teardown). On
     * failure return an error and write a one-line reason into errbuf. */
    pmix_status_t (*open)(void *arg, px_api_client *ac, const pmix_info_t info[], size_t ninfo,
                          char *errbuf, size_t errlen);
    void *arg;
} px_api_binding;

/* Replace the binding (NULL restores the default, real-process one).
 * Call it before any PMIx_* call; it is not thread-safe. */
void px_api_set_binding(const px_api_binding *b);

/* The posix binding's open, for the default binding and for tests. */
pmix_status_t px_api_posix_open(void *arg, px_api_client *ac, const pmix_info_t info[],
                                size_t ninfo, char *errbuf, size_t errlen);

/* Runs fn(arg) from the caller's progress, after the current PMIx_* call
 * has returned (api/client_api.c): how non-blocking calls answered inside
 * the process call their callbacks. PMIX_ERR_INIT before PMIx_Init; on
 * any error fn is never called. */
pmix_status_t px_api_defer(void (*fn)(void *arg), void *arg);

/* For the shim's own files (api/client_api.c): the caller's client if
 * PMIx_Init has run, else NULL; whether a blocking call now would be made
 * from inside a callback (it logs why it refuses); and that background
 * progress is needed from now on (a non-blocking call). */
px_api_client *px_api_ready(void);
bool px_api_in_callback(px_api_client *ac);
void px_api_need_progress(px_api_client *ac);
/* The caller's client for a blocking call, or NULL with *rc set
 * (PMIX_ERR_INIT before PMIx_Init, PMIX_ERR_WOULD_BLOCK inside a callback);
 * for a non-blocking call (background progress asked for), or NULL. */
px_api_client *px_api_for_blocking(pmix_status_t *rc);
px_api_client *px_api_for_nonblocking(void);

/* Run an engine call under the client's engine lock; its status. */
#define ENGINE(ac, call)                \
    ({                                  \
        pmix_status_t rc__;             \
        (ac)->pops->lock((ac)->pctx);   \
        rc__ = (call);                  \
        (ac)->pops->unlock((ac)->pctx); \
        rc__;                           \
    })

/* A group query (api/group_api.c): PMIX_ERR_NOT_SUPPORTED if `key` is
 * not one, else as px_client_group_query. */
pmix_status_t px_api_group_query(const char *key, const pmix_info_t qual[], size_t nqual,
                                 pmix_info_t *out);
/* The caller's state (the binding's current), for api/tool_api.c. */
px_api_client *px_api_current(void);
/* Make `ac` run engine `c` on posix platform `p` (both owned by `ac` from
 * then on: its teardown stops the platform, frees the engine, then the
 * platform), as px_api_posix_open does for a client. */
struct px_posix;
void px_api_posix_adopt(px_api_client *ac, struct px_posix *p, px_client *c);

/* api/query_host.c: the PMIx_Query_info keys only a host can answer
 * (query.c sends them to the server with the process-set keys:
 * px_api_query_server). */
bool px_api_query_host_key(const char *key);
/* True if the caller initialized as a tool (PMIx_tool_init). */
bool px_api_is_tool(void);

/* api/tool_server.c: the server side of a tool (PMIX_LAUNCHER or
 * PMIX_SERVER_TOOL_SUPPORT, px_api_tool_server_wanted), started by
 * PMIx_tool_init once `ac` has its engine (`connected`: to a server of its
 * own) and stopped before that engine goes (after its FINALIZE). The
 * tool's own events go to its peers (px_api_tool_notify, under the
 * engine lock); PMIx_Spawn without a server starts the processes itself
 * (px_api_tool_spawn: PMIX_ERR_NOT_SUPPORTED when it is not for the tool
 * to do); PMIx_tool_set_server of a peer waits for its connection
 * (px_api_tool_wait_peer). */
bool px_api_tool_server_wanted(const pmix_info_t info[], size_t ninfo);
pmix_status_t px_api_tool_server_start(px_api_client *ac, bool connected);
void px_api_tool_server_stop(px_api_client *ac);
void px_api_tool_notify(px_api_client *ac, pmix_status_t status, const pmix_proc_t *source,
                        pmix_data_range_t range, const pmix_info_t info[], size_t ninfo);
pmix_status_t px_api_tool_spawn(const pmix_info_t job_info[], size_t ninfo, const pmix_app_t apps[],
                                size_t napps, char nspace[PMIX_MAX_NSLEN + 1]);
pmix_status_t px_api_tool_wait_peer(const pmix_proc_t *proc, const pmix_info_t info[],
                                    size_t ninfo);

/* True if this process initialized a server (api/server_api.c). */
bool px_api_server_active(void);

/* Event handlers of a server process that is not also a client: what
 * PMIx_Register_event_handler, PMIx_Deregister_event_handler and
 * PMIx_Notify_event do there (api/server_api.c). Same contracts as those
 * calls; callbacks come after the call returns. PMIX_ERR_INIT without a
 * server. */
pmix_status_t px_api_server_register_event(const pmix_status_t codes[], size_t ncodes,
                                           const pmix_info_t info[], size_t ninfo,
                                           pmix_notification_fn_t evhdlr,
                                           pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata);
pmix_status_t px_api_server_deregister_event(size_t ref, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t px_api_server_notify(pmix_status_t status, const pmix_proc_t *source,
                                   pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                                   pmix_op_cbfunc_t cbfunc, void *cbdata);

/* The queries only a server answers (process sets: px_query_key_is_pset;
 * a host's keys: px_api_query_host_key), for query.c. In a client, they
 * go to its server: with cbfunc, cbfunc gets the answers later (the
 * engine's rule: PMIX_SUCCESS then exactly one call, or an error and
 * none); without, the call blocks and returns them in *info / *ninfo (free
 * with PMIx_Info_free), with PMIX_ERR_WOULD_BLOCK from inside a callback.
 * In a process that is only a server, its own server engine answers,
 * blocking only (PMIX_ERR_INIT with cbfunc). */
pmix_status_t px_api_query_server(const pmix_query_t queries[], size_t nqueries,
                                  pmix_info_cbfunc_t cbfunc, void *cbdata, pmix_info_t **info,
                                  size_t *ninfo);
/* The server process's part of that (api/server_api.c): PMIX_ERR_INIT
 * without a server. */
pmix_status_t px_api_server_query(const pmix_query_t queries[], size_t nqueries, pmix_info_t **info,
                                  size_t *ninfo);

#endif /* PX_API_H */
