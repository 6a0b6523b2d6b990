/*
 * px_defer.h - the Standard server's calls to its host, made from the
 * library's side of the loop (api/server_defer.c).
 *
 * Two rules keep a host such as Slurm's mpi/pmix plugin out of deadlocks:
 *
 *  1. A host's callback is never called from inside that host's own call
 *     into the library. Slurm calls a fence's completion (a modex
 *     callback) while it holds its non-recursive collective lock, and the
 *     release function it passes takes that lock; calling it back at once
 *     deadlocks the step. Every callback the library owes a host
 *     (registration callbacks, release functions, direct-modex answers,
 *     event registration callbacks) is queued here and made on the loop's
 *     thread, without the engine lock held, after the call that caused it
 *     has returned.
 *
 *  2. A host's thread never waits for the engine lock inside a completion.
 *     The engine makes its upcalls with the lock held, and a host's upcall
 *     may wait for the host's own lock; a host thread that holds that lock
 *     and then waited for ours would close the circle. The completions the
 *     adapter hands the host in place of the engine's (px_defer_op_cb,
 *     px_defer_modex_cb, px_defer_info_cb, px_defer_lookup_cb) take the engine lock only if it
 *     is free, or held by the calling thread (a host answering inside the
 *     upcall: no hop, as before); otherwise they queue the completion, and
 *     the loop applies it. Either way the host's release function comes
 *     later, through the queue. Data a host passes without a release
 *     function is copied when the completion is queued.
 *
 * The queue is a list under its own small mutex, emptied by a
 * px_posix_async callback; nothing is called while that mutex is held.
 * Calls still queued when the server finalizes are dropped, not made.
 */
#ifndef PX_DEFER_H
#define PX_DEFER_H

#include <pmix_server.h>

#include "platform/px_posix.h"

typedef struct px_defer px_defer;

/* Create the queue of server `p`'s platform; NULL on failure. */
px_defer *px_defer_create(px_posix *p);
/* Drop what is still queued (nothing is called) and free. Call it after
 * px_posix_stop. NULL is a no-op. */
void px_defer_destroy(px_defer *d);

/* Queue a call to a host's function. Each returns PMIX_SUCCESS, or
 * PMIX_ERR_NOMEM and then the function will not be called. A NULL
 * function is not queued (PMIX_SUCCESS). */
pmix_status_t px_defer_op(px_defer *d, pmix_op_cbfunc_t fn, pmix_status_t status, void *cbdata);
pmix_status_t px_defer_reg(px_defer *d, pmix_hdlr_reg_cbfunc_t fn, pmix_status_t status, size_t id,
                           void *cbdata);
pmix_status_t px_defer_release(px_defer *d, pmix_release_cbfunc_t fn, void *cbdata);
/* `data` is copied. */
pmix_status_t px_defer_dmodex(px_defer *d, pmix_dmodex_response_fn_t fn, pmix_status_t status,
                              const char *data, size_t ndata, void *cbdata);
/* fn(status, NULL, 0, cbdata, NULL, NULL). */
pmix_status_t px_defer_app(px_defer *d, pmix_setup_application_cbfunc_t fn, pmix_status_t status,
                           void *cbdata);

/* A completion for a host in place of an engine's (rule 2). Make one with
 * the engine's function and cbdata, pass px_defer_*_cb and the wrap to the
 * host, and after the host's call returns call px_defer_wrap_done with
 * what it returned: on anything but PMIX_SUCCESS the host will not call
 * back, and the wrap goes. NULL on failure. */
typedef struct px_defer_wrap px_defer_wrap;
px_defer_wrap *px_defer_wrap_op(px_defer *d, pmix_op_cbfunc_t fn, void *cbdata);
px_defer_wrap *px_defer_wrap_modex(px_defer *d, pmix_modex_cbfunc_t fn, void *cbdata);
px_defer_wrap *px_defer_wrap_info(px_defer *d, pmix_info_cbfunc_t fn, void *cbdata);
/* A tool's connection (tool_connected): the host's `proc` is copied. */
px_defer_wrap *px_defer_wrap_tool(px_defer *d, pmix_tool_connection_cbfunc_t fn, void *cbdata);
px_defer_wrap *px_defer_wrap_lookup(px_defer *d, pmix_lookup_cbfunc_t fn, void *cbdata);
px_defer_wrap *px_defer_wrap_spawn(px_defer *d, pmix_spawn_cbfunc_t fn, void *cbdata);
void px_defer_wrap_done(px_defer_wrap *w, pmix_status_t rc);

void px_defer_op_cb(pmix_status_t status, void *cbdata);
void px_defer_modex_cb(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                       pmix_release_cbfunc_t release_fn, void *release_cbdata);
void px_defer_info_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata);
void px_defer_lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata);

void px_defer_tool_cb(pmix_status_t status, pmix_proc_t *proc, void *cbdata);
void px_defer_spawn_cb(pmix_status_t status, pmix_nspace_t nspace, void *cbdata);

#endif /* PX_DEFER_H */
