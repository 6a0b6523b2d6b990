/*
 * inproc.h - an in-process platform for tests: many servers and many
 * clients in one thread, with a virtual clock.
 *
 * This is the pattern pmixsim uses, without SimGrid: every engine gets the
 * same platform ops, each with its own endpoint as `pctx`. A frame sent
 * on a connection becomes an event in one queue, delivered in order to the
 * peer's sink when the world runs. Timers fire in virtual time when
 * nothing else is queued. `wait` runs the world until the waiter is woken,
 * so blocking calls work as long as something can make progress; if
 * nothing can, the test fails instead of hanging.
 *
 * The world also plays a host for its servers: a fence that spans several
 * servers completes when every server with a participant has called
 * fence_nb, and the concatenation of their contributions goes back to
 * each; a group operation likewise, when every server with a member has
 * made its group upcall, with a context id made by the lowest of them
 * (px_ctxid_next) when one is asked for; direct modex asks the server
 * that hosts the process.
 */
#ifndef INPROC_H
#define INPROC_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "client/px_client.h"
#include "px_platform.h"
#include "server/px_server.h"

typedef struct inproc_world inproc_world;
typedef struct inproc_ep inproc_ep;

/* A test's process: its client, and what its callbacks brought. */
typedef struct inproc_proc {
    px_client *c;
    int done;             /* callbacks so far */
    pmix_status_t status; /* the last one's */
    pmix_value_t *value;  /* inproc_value_cb's copy; the test frees it */
} inproc_proc;

/* The Standard's op and value callbacks for an inproc_proc (cbdata):
 * keep the status, count the call, copy the value (a failed copy fails
 * the test). */
void inproc_op_cb(pmix_status_t status, void *cbdata);
void inproc_value_cb(pmix_status_t status, pmix_value_t *v, void *cbdata);

inproc_world *inproc_world_create(void);
/* Frees every engine and endpoint; asserts nothing is left queued if
 * `expect_idle`. */
void inproc_world_destroy(inproc_world *w);

/* A server for node `nodeid` with the world as its host. */
px_server *inproc_server(inproc_world *w, int nodeid);
/* A server for node `nodeid` that `make` creates with a host of its own
 * (a tool's server side, tool/px_toolsrv.h): make(pops, pctx, arg) gets the
 * world's platform and the server's endpoint, on which an engine sharing
 * the server's platform (the tool's own client engine) may run too. The
 * test destroys that server itself, after inproc_forget_server (from then
 * on nothing is delivered to it) and before inproc_world_destroy. */
px_server *inproc_server_made(inproc_world *w, int nodeid,
                              px_server *(*make)(const px_platform_ops *pops, void *pctx,
                                                 void *arg),
                              void *arg);
void inproc_forget_server(inproc_world *w, px_server *srv);
/* A client connected to `srv` (not yet through the handshake), running
 * as uid/gid 1000, or as the given ones. A connection the server refuses
 * at once is left closed: the handshake then fails. */
px_client *inproc_client(inproc_world *w, px_server *srv, const pmix_proc_t *self);
px_client *inproc_client_as(inproc_world *w, px_server *srv, const pmix_proc_t *self, uint32_t uid,
                            uint32_t gid);
/* A tool (px_client_set_tool) connected to `srv` as `uid` (gid the same),
 * asking for name `want` (NULL: any), not yet through the handshake. The
 * world as host names tools "tool.<n>", rank 0 (n from 1), or as they
 * ask; inproc_tool_mode says when: 0 inside the upcall, 1 later (from the
 * queue), 2 never (refused, PMIX_ERR_NO_PERMISSIONS). As host it answers
 * queries too: PMIX_QUERY_NAMESPACES "job", and PMIX_QUERY_PROC_TABLE of
 * "job": ranks 0 and 1 on "node0", executable "/bin/prog", pids 4242
 * and 4243, running. */
px_client *inproc_tool(inproc_world *w, px_server *srv, const pmix_proc_t *want, uint32_t uid);
void inproc_tool_mode(inproc_world *w, int mode);
/* The PMIX_PROC_PID the last tool_connected upcall carried (0: none). */
uint32_t inproc_last_tool_pid(const inproc_world *w);
/* Break a client's connection as if the process died; then, as a host's
 * failure detector would, tell every other server that it died. */
void inproc_kill_client(inproc_world *w, px_client *c);
/* The client sees its connection close and its server hears nothing (a
 * server process that went on without serving, one that exec'd). */
void inproc_cut_client(inproc_world *w, px_client *c);
/* From now on the server's sends to this client fail as if out of memory. */
void inproc_refuse_sends(inproc_world *w, px_client *c);
/* The client's own next `n` sends fail as if out of memory. */
void inproc_fail_client_sends(inproc_world *w, px_client *c, int n);
/* Hand a client raw bytes from "the wire" to its server (garbage tests). */
void inproc_send_raw(inproc_world *w, px_client *c, const void *bytes, size_t len);
/* The host destroys server `srv` (px_server_destroy) while the world goes
 * on: what is queued for it is dropped, and its clients see their
 * connections close. The world must hold no host upcall of that server (a
 * fence or direct modex it would complete into the server); it aborts if
 * a fence of the server is still waiting for other servers. */
void inproc_destroy_server(inproc_world *w, px_server *srv);

/* Run queued deliveries and due timers; return when `*flag` becomes true
 * (or at once if flag is NULL and nothing is queued). Returns false if the
 * world went idle first. */
bool inproc_run_until(inproc_world *w, const volatile int *flag);
double inproc_now(const inproc_world *w);
/* Number of notify_event upcalls (events for the other nodes), which the
 * world serves by delivering the event on every other server. */
size_t inproc_host_events(const inproc_world *w);
/* Number of fence_nb upcalls the world has served as a host. */
size_t inproc_host_fences(const inproc_world *w);
/* Number of group upcalls the world has served as a host, and of those
 * that reported a local failure (local_status). */
size_t inproc_host_groups(const inproc_world *w);
size_t inproc_group_failures(const inproc_world *w);
/* Number of shared regions the engines created (one per large collect). */
size_t inproc_regions(const inproc_world *w);
/* Number of fence_nb upcalls that reported a local failure through
 * PMIX_LOCAL_COLLECTIVE_STATUS. */
size_t inproc_local_failures(const inproc_world *w);
/* Timers server `srv` started that have neither fired nor been cancelled. */
size_t inproc_server_timers(const inproc_world *w, const px_server *srv);
/* Timers that destroyed servers left pending (px_server_destroy must
 * cancel every one), and how many of them fired since: each such firing
 * is a callback into a freed server. */
size_t inproc_orphan_timers(const inproc_world *w);
size_t inproc_orphan_timers_fired(const inproc_world *w);
/* Recent log lines the engines reported, newline-separated, for
 * assertions ("dropping client"). */
const char *inproc_last_log(const inproc_world *w);
/* Each client is a "process" with pid 10000 + its connection id, which the
 * platform's peer_pid reports; the world as host records what its
 * client_connected2 heard last (0 for what it did not hear) and refuses
 * the handshake of the pid named by inproc_refuse_pid. accepted: the
 * server told the platform the client's handshake is done
 * (conn_accepted). */
uint32_t inproc_client_pid(inproc_world *w, px_client *c);
bool inproc_client_accepted(inproc_world *w, px_client *c);
void inproc_refuse_pid(inproc_world *w, uint32_t pid);
void inproc_last_hello(const inproc_world *w, uint32_t *pid, uint32_t *uid, uint32_t *gid);
/* The host garbles the data of the next `n` cross-node collectives it
 * completes (every node gets the same bad bytes). */
void inproc_corrupt_collects(inproc_world *w, int n);
/* While held (hold: true), the answers of group operations to server
 * `srv` wait, as if its host's network were slow: the other nodes' members
 * go on, and what they send meanwhile reaches `srv` first. Ending the hold
 * delivers them, in order. One server at a time. */
void inproc_hold_groups(inproc_world *w, px_server *srv, bool hold);

/* Fence pages (px_page.h): off unless enabled, for the servers created
 * after. Sleeping on a page never happens here (page_wait returns at
 * once); tests drive px_client_lbar_arrive/check themselves. */
void inproc_enable_pages(inproc_world *w);
/* This client "cannot map" the page its WELCOME brings. */
void inproc_refuse_page(inproc_world *w, px_client *c);
size_t inproc_page_wakes(const inproc_world *w);
/* Bytes of pages given back with page_trim (by a server) or page_discard
 * (by a client), zeroed here, so far. */
uint64_t inproc_page_trimmed(const inproc_world *w);
/* From now on a client's page_discard gives nothing back (fail: true). */
void inproc_fail_discards(inproc_world *w, bool fail);
/* inproc_page_trimmed as it was at the last page_wake: what was given
 * back before the sleepers were woken. */
uint64_t inproc_page_trimmed_at_wake(const inproc_world *w);
/* The page a client received (NULL if none). */
void *inproc_client_page(inproc_world *w, px_client *c);
/* Frames delivered to any server so far. */
size_t inproc_frames_to_servers(const inproc_world *w);
/* Entries the world's data service holds (publish/lookup: the world keeps
 * one service, hostcore/px_pubsub.h, for all its servers, one session,
 * each server a node). */
size_t inproc_published(const inproc_world *w);
size_t inproc_lookups_waiting(const inproc_world *w); /* lookups it holds (PMIX_WAIT) */
/* The PMIX_USERID and PMIX_GRPID the host's last publish upcall carried,
 * and how many such entries it had. */
void inproc_last_publish_ids(const inproc_world *w, uint32_t *uid, uint32_t *gid, int *n);

#endif /* INPROC_H */
