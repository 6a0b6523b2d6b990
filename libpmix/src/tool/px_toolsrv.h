/*
 * px_toolsrv.h - the server side of a tool: a tool initialized with
 * PMIX_LAUNCHER or PMIX_SERVER_TOOL_SUPPORT accepts connections from other
 * tools, as the Standard's indirect launch needs (Chap_API_Tools,
 * "Indirect launch"): a debugger (the initiator) starts a launcher such as
 * pmixrun with PMIX_LAUNCHER_RNDZ_URI naming the debugger's own URI, and
 * the launcher connects back to it as a tool.
 *
 * How it works. A px_toolsrv is a server engine (server/) whose host is
 * this file, running on the same platform (and so under the same lock) as
 * the tool's own client engine. The api/ shim listens for it and writes
 * its rendezvous files (api/tool_server.c); the engine does no I/O here.
 *
 *   - Who may connect: tools of the tool's own uid (the server engine
 *     checks it at the connection); one that asks for the name of a job
 *     this tool started itself (px_toolsrv_add_job) only from the process
 *     started for it (its pid), and then it reads that job's data, the
 *     spawn's directives among them (PMIX_LAUNCH_DIRECTIVES). Others get
 *     the name they asked for, or "<tool namespace>.tool.<n>", rank 0.
 *   - Events from the peers: delivered to their peers in range by the
 *     server engine, and, when their range goes beyond the peer (anything
 *     but PMIX_RANGE_PROC_LOCAL and PMIX_RANGE_LOCAL), to the tool's own
 *     handlers, with their source. A peer that raises PMIX_LAUNCHER_READY,
 *     or that connects as a job this tool started, is a launcher.
 *   - The tool's own events (px_toolsrv_notify): to its peers in range;
 *     and an event whose range names processes beyond them (a custom
 *     range, PMIX_EVENT_CUSTOM_RANGE, that does not name the launcher)
 *     also goes to every launcher, which carries it to the processes it
 *     started (pmixrun passes PMIX_DEBUGGER_RELEASE on to its job's ranks).
 */
#ifndef PX_TOOLSRV_H
#define PX_TOOLSRV_H

#include <stdint.h>
#include <sys/types.h>

#include <pmix_common.h>

#include "client/px_client.h"
#include "px_platform.h"
#include "server/px_server.h"

typedef struct px_toolsrv px_toolsrv;

/* Create the server side of the tool whose client engine is `own` (its
 * handlers get the peers' events; its name is the server's name), on the
 * platform `pops`/`pctx` that `own` runs on. Tools of user `uid` may
 * connect. NULL on failure. Call under the platform's lock. */
px_toolsrv *px_toolsrv_create(px_client *own, const px_platform_ops *pops, void *pctx,
                              uint32_t uid);
/* Release it (after the platform stopped delivering, before it is freed:
 * as px_server_destroy). NULL is a no-op. */
void px_toolsrv_destroy(px_toolsrv *t);

/* The server engine, for the platform's listener (px_server_sink()). */
px_server *px_toolsrv_server(px_toolsrv *t);

/* A job this tool starts itself (PMIx_Spawn without a server): its
 * namespace is registered with `info` (borrowed) as its job data. Its
 * processes, started next, are named with px_toolsrv_job_pid. 0 or an
 * error. */
pmix_status_t px_toolsrv_add_job(px_toolsrv *t, const char *nspace, uint32_t nprocs,
                                 const pmix_info_t info[], size_t ninfo);
/* Rank `rank` of job `nspace` is the process `pid`: only it may connect
 * with that name. */
void px_toolsrv_job_pid(px_toolsrv *t, const char *nspace, pmix_rank_t rank, pid_t pid);
/* The pids of the processes this tool started, for reaping: *n of them
 * (borrowed until the next px_toolsrv_add_job or the destroy). */
const pid_t *px_toolsrv_pids(px_toolsrv *t, size_t *n);

/* The tool raised `status` itself (its own handlers have run): to its
 * peers as the header says. Under the platform's lock. */
void px_toolsrv_notify(px_toolsrv *t, pmix_status_t status, const pmix_proc_t *source,
                       pmix_data_range_t range, const pmix_info_t info[], size_t ninfo);

/* Whether `proc` is connected as a peer now (PMIx_tool_set_server waits
 * for this with PMIX_WAIT_FOR_CONNECTION). */
bool px_toolsrv_has_peer(px_toolsrv *t, const pmix_proc_t *proc);

#endif /* PX_TOOLSRV_H */
