/*
 * px_posix.h - the production platform: libevent, Unix sockets, threads.
 *
 * One px_posix drives any number of engines in a real process. It owns a
 * libevent base, a recursive lock (the engine lock of px_platform.h) and,
 * unless created for external progress, a progress thread that runs the
 * event loop. Sockets are non-blocking; frames are read with the header
 * check of px_frame_parse() and delivered whole to a px_sink; outgoing
 * frames are written at once when the socket accepts them (from whatever
 * thread calls `send`, under the engine lock), and queued otherwise.
 *
 * Rendezvous: a server listens on a Unix socket `<dir>/pmix.sock`. The
 * directory must exist with mode 0700 (px_posix_listen creates it if it
 * does not). Each accepted peer's credentials are read with SO_PEERCRED and
 * given to the sink's `opened`, which decides (its pid is kept for the
 * `peer_pid` op). The URI handed to clients (environment variable
 * PMIX_SERVER_URI) is "unix:<path>". What an accepted peer may cost the
 * server is bounded: px_posix_limits below.
 */
#ifndef PX_POSIX_H
#define PX_POSIX_H

#include <stdbool.h>

#include "px_platform.h"

typedef struct px_posix px_posix;

/* Create a platform. With `external_progress`, no thread is started and
 * the event loop runs only inside px_posix_progress() and `wait`.
 * Returns NULL (and a reason in errbuf) on failure. */
px_posix *px_posix_create(bool external_progress, char *errbuf, size_t errlen);
/* Stop the progress thread (joined before this returns): from then on no
 * sink is called and no timer fires, unless a caller drives the loop
 * (px_posix_progress, `wait`), while timers can still be cancelled, so
 * that an engine can be destroyed (cancelling its timers) before the
 * platform it runs on. No-op without a thread. Returns false, and leaves
 * the thread running, when called from the progress thread. */
bool px_posix_stop(px_posix *p);
/* px_posix_stop, then close every connection and listener (without
 * calling sinks), free everything. NULL is a no-op. Must not be called
 * from the progress thread. */
void px_posix_destroy(px_posix *p);

/* The operations table; its `pctx` is the px_posix. */
const px_platform_ops *px_posix_ops(void);

/* Connect to a server at `uri` ("unix:<path>") and deliver its frames to
 * `sink`; the connection id is PX_CONN_SERVER. Blocking connect (bounded by
 * `timeout` seconds, 0 = a default of 10 s). Returns PMIX_SUCCESS,
 * PMIX_ERR_BAD_PARAM for a malformed URI, PMIX_ERR_UNREACH if nothing
 * listens there, with a reason in errbuf. */
pmix_status_t px_posix_connect(px_posix *p, const char *uri, double timeout, const px_sink *sink,
                               void *sctx, char *errbuf, size_t errlen);

/* Listen on a Unix socket in `dir` (created with mode 0700 if missing;
 * refused if it exists with a looser mode or another owner). Accepted
 * connections are reported to `sink`. On success *uri is a malloc'd
 * "unix:<path>" for clients. */
pmix_status_t px_posix_listen(px_posix *p, const char *dir, const px_sink *sink, void *sctx,
                              char **uri, char *errbuf, size_t errlen);

/* Largest payload accepted from a peer; a bigger frame drops that peer.
 * Default PX_FRAME_MAX_DEFAULT. */
void px_posix_set_max_frame(px_posix *p, size_t max_payload);

/* What a server spends on peers, so that a peer that misbehaves (or a
 * program that is no PMIx client at all) cannot exhaust it. The first
 * three hold for accepted connections until the engine says their
 * handshake is done (the platform op `conn_accepted`):
 *
 *   handshake_s     seconds an accepted connection has to complete its
 *                   handshake; then it is closed. Default 10, or
 *                   PMIXLAB_HANDSHAKE_TIMEOUT (seconds) from the
 *                   environment of px_posix_create; 0: no deadline.
 *   handshake_frame largest payload accepted before the handshake is done
 *                   (a HELLO needs under 300 bytes). Default 4 KiB.
 *   max_pending     accepted connections whose handshake is not done; at
 *                   the limit the listener stops accepting and later
 *                   connections wait in the socket's backlog until one of
 *                   those ends. Default 64.
 *   max_queued      bytes queued for one accepted peer that does not read
 *                   what it is sent; a frame that would go past the limit
 *                   while others wait drops the peer (a single frame of any
 *                   size is queued when nothing waits). Default 64 MiB.
 *
 * Accepted peers never pass file descriptors in this protocol (only the
 * server does, to its clients): one that does is dropped at once and the
 * descriptors are closed. */
typedef struct px_posix_limits {
    double handshake_s;
    size_t handshake_frame;
    size_t max_pending;
    size_t max_queued;
} px_posix_limits;

#define PX_POSIX_HANDSHAKE_S 10.0
#define PX_POSIX_HANDSHAKE_FRAME ((size_t)4 << 10)
#define PX_POSIX_MAX_PENDING 64
#define PX_POSIX_MAX_QUEUED ((size_t)64 << 20)

/* Read or change the limits; a changed limit holds for connections
 * accepted from then on (max_queued and max_pending: at once). A zero
 * handshake_frame, max_pending or max_queued means its default. */
void px_posix_get_limits(px_posix *p, px_posix_limits *lim);
void px_posix_set_limits(px_posix *p, const px_posix_limits *lim);

/* Run the event loop once without blocking (PMIx_Progress). Takes the
 * engine lock itself; call it without the lock held. */
void px_posix_progress(px_posix *p);

/* Give a platform created for external progress its progress thread after
 * all (a lazy start): from then on it behaves as if created with one. A
 * caller driving the loop at that moment finishes its turn first. No-op if
 * the thread exists. Call it without the lock held. */
pmix_status_t px_posix_start_thread(px_posix *p);

/* A call into the loop from any thread (like libuv's uv_async_t): after
 * px_posix_async_send, `cb(arg)` runs once, soon, on the thread that runs
 * the loop, WITHOUT the engine lock held; sends made before it runs may
 * be merged into one call. Sending never blocks on the engine lock, so a
 * thread that holds locks of its own may send (the api/ shim queues a
 * host's completions this way). Create returns NULL on failure. Destroy
 * only once the loop is stopped (px_posix_stop); NULL is a no-op. */
typedef struct px_posix_async px_posix_async;
px_posix_async *px_posix_async_create(px_posix *p, void (*cb)(void *arg), void *arg);
void px_posix_async_send(px_posix_async *a);
void px_posix_async_destroy(px_posix_async *a);

/* Take the engine lock only if it is free (or already held by the
 * caller: it is recursive); true if taken. Release it with the ops'
 * unlock. For threads that must never wait for the engine. */
bool px_posix_trylock(px_posix *p);

/* ---- A host on the loop: its own descriptors, the loop on its thread ----
 *
 * A host that serves its engines on its own thread (pmixrun, pmixd: one
 * thread, no progress thread) creates the platform for external progress,
 * registers every descriptor it waits on as a watch, and calls
 * px_posix_run_once where it would call poll(): the loop then serves the
 * engines' connections and timers and the host's descriptors alike, and
 * upcalls, timers and watches all run on that thread. Watches are made,
 * changed and destroyed on that thread only, and only on a platform created
 * for external progress whose thread was never started. */

#define PX_POSIX_READ 1u
#define PX_POSIX_WRITE 2u

typedef struct px_posix_watch px_posix_watch;
/* `what`: PX_POSIX_READ and/or PX_POSIX_WRITE, of those the watch wants,
 * that the descriptor is ready for (an error or a hangup makes it ready
 * for both). Runs inside px_posix_run_once with the engine lock held; it
 * may set or destroy any watch, its own included. */
typedef void (*px_posix_watch_cb)(void *arg, unsigned what);

/* Watch `fd` (borrowed: destroy the watch before closing it) for `want`
 * (PX_POSIX_READ, PX_POSIX_WRITE, both or 0). A descriptor the kernel's
 * readiness interface cannot watch (a regular file, /dev/null) is always
 * ready, as poll() says of it: its callback runs at every
 * px_posix_run_once while it wants something. NULL on failure (no memory,
 * a bad descriptor, a platform with a progress thread). */
px_posix_watch *px_posix_watch_create(px_posix *p, int fd, unsigned want, px_posix_watch_cb cb,
                                      void *arg);
/* Change what the watch waits for; cheap when nothing changes. 0, or -1
 * if the loop refused (the watch then waits for nothing). */
int px_posix_watch_set(px_posix_watch *w, unsigned want);
/* Stop watching and free the watch; its callback is not called again.
 * NULL is a no-op. */
void px_posix_watch_destroy(px_posix_watch *w);

/* Run the loop once on the calling thread: wait until something is ready
 * (a connection, a timer, a watch, a wake) or `timeout` seconds have
 * passed (negative: no limit; 0: do not wait), run every callback that is
 * ready, and return. Takes the engine lock itself; call it without the
 * lock held, from the thread that made the watches. No-op on a platform
 * with a progress thread, and from inside a callback of the loop (the
 * loop is turning already). */
void px_posix_run_once(px_posix *p, double timeout);

#endif /* PX_POSIX_H */
