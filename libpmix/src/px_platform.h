/*
 * px_platform.h - what an engine needs from the world outside it.
 *
 * The client, server and tool engines do no I/O, read no clock, start no
 * thread and keep no global state. Everything they need from outside goes
 * through one table of operations, supplied by whoever creates the engine,
 * together with an opaque context pointer (`pctx`) that is passed back as
 * the first argument of every operation. Two platforms implement it:
 *
 *   platform/posix.c   libevent loop, Unix sockets, a progress thread (or
 *                      none, with PMIX_EXTERNAL_PROGRESS) -- real processes;
 *   simhost/           SimGrid mailboxes, simulated clock, actor blocking.
 *
 * Tests add a third, in-process one (tests/unit/inproc.c).
 *
 * Connections are named by a 64-bit id chosen by the platform. A client
 * engine has one connection, to its server; a server engine has one per
 * client. Messages are complete frames (see wire/px_wire.h); the platform
 * moves bytes and never looks inside a frame except for its header.
 *
 * Locking. An engine is not thread-safe by itself. The platform owns one
 * lock per engine instance (possibly shared by several engines): it holds
 * it while it calls into an engine (deliveries, timer callbacks), and the
 * api/ shim holds it while it calls into an engine on behalf of a user
 * thread. The lock is recursive, so a completion callback that runs under
 * it may call the engine again. Engines take it themselves only in the
 * functions they hand to outside code as callbacks (a host completing an
 * upcall, an event handler passing the chain on), which may run on any
 * thread.
 *
 * Blocking. Engines never block. The api/ shim starts an operation whose
 * completion callback calls `wake`, and then calls `wait` (without the
 * lock held) to block the caller until that happens. In a real process
 * `wait` sleeps on a condition variable while the progress thread works,
 * or drives the event loop itself under external progress; in pmixsim it
 * suspends the calling actor.
 *
 * Versioning: `version` must equal PX_PLATFORM_OPS_VERSION; new operations
 * are only ever appended.
 */
#ifndef PX_PLATFORM_H
#define PX_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

#define PX_PLATFORM_OPS_VERSION 1

/* The connection id a client engine uses for its server. */
#define PX_CONN_SERVER ((uint64_t)0)

typedef struct px_timer px_timer;   /* opaque, defined by each platform */
typedef struct px_region px_region; /* opaque, defined by each platform */
typedef struct px_page px_page;     /* opaque, defined by each platform */
typedef void (*px_timer_cb)(void *arg);

/* A waiter: one blocked caller of the api/ shim. `done` is set by `wake`.
 * `pdata` belongs to the platform (pmixsim keeps the actor's semaphore
 * there); callers zero the struct before use. */
typedef struct px_wait {
    volatile int done;
    void *pdata;
} px_wait;

typedef enum {
    PX_LOG_ERROR = 0,
    PX_LOG_WARN = 1,
    PX_LOG_INFO = 2,
    PX_LOG_DEBUG = 3,
} px_log_level;

typedef struct px_platform_ops {
    unsigned version;

    /* Queue one complete frame on connection `conn`. The platform takes
     * ownership of `frame` (allocated with malloc) in every case, also on
     * failure. It never calls back into the engine from inside `send`.
     * Returns PMIX_SUCCESS, or PMIX_ERR_UNREACH if `conn` is closed. */
    pmix_status_t (*send)(void *pctx, uint64_t conn, void *frame, size_t len);

    /* Close `conn` from the engine's side (a server dropping a client that
     * sent garbage, a client finalizing). The platform does not report the
     * close back through its sink. Closing a closed id is a no-op. */
    void (*close)(void *pctx, uint64_t conn);

    /* One-shot timer. `cb` runs later, with the engine lock held, unless
     * cancelled first. Returns NULL if no timer could be made. Cancelling a
     * timer that has already fired is not allowed: engines cancel only
     * timers whose callbacks have not yet run, and forget a timer once its
     * callback starts. */
    px_timer *(*timer_start)(void *pctx, double seconds, px_timer_cb cb, void *arg);
    void (*timer_cancel)(void *pctx, px_timer *timer);

    /* Seconds on a monotonic clock (simulated time in pmixsim). */
    double (*now)(void *pctx);

    /* The engine lock (see above). */
    void (*lock)(void *pctx);
    void (*unlock)(void *pctx);

    /* Block the caller until `wake(w)` (see above). Called without the
     * lock held. `wake` may be called before `wait`. */
    void (*wait)(void *pctx, px_wait *w);
    void (*wake)(void *pctx, px_wait *w);

    /* Report something at the host boundary (never called on a hot path).
     * May be NULL: then the message is dropped. */
    void (*log)(void *pctx, px_log_level level, const char *msg);

    /* Shared regions: one read-only copy of collected data for every
     * client of a node, instead of one copy per client. All three are
     * optional (NULL): an engine then copies the data into each frame.
     *
     * region_create makes a region holding a copy of `len` bytes at `data`
     * (NULL on failure: the engine falls back to copies). send_region sends
     * `frame` (ownership as for `send`) with the region attached; the
     * receiving platform delivers both through the sink's deliver_region.
     * region_release says the engine will attach the region to nothing
     * more; the platform frees it when the sends carrying it are done.
     * The posix platform uses a sealed memfd passed with SCM_RIGHTS and
     * mapped read-only by the receiver; in-process platforms share the
     * memory itself. */
    px_region *(*region_create)(void *pctx, const void *data, size_t len);
    pmix_status_t (*send_region)(void *pctx, uint64_t conn, void *frame, size_t len,
                                 px_region *region);
    void (*region_release)(void *pctx, px_region *region);

    /* Optional (NULL: the engine builds the whole data first). Append
     * `len` bytes to a region that has not been sent yet, so an engine can
     * stream large data into it without a second full copy of its own.
     * On failure the region is unchanged and the engine releases it. */
    pmix_status_t (*region_append)(void *pctx, px_region *region, const void *data, size_t len);

    /* Optional. True if the calling thread is the one running the
     * platform's loop, i.e. the caller is inside a callback: a blocking
     * call there could never complete, and the api/ shim refuses it.
     * Called with the lock held (PMIx_Get asks under the hold it takes for
     * its lookup; taking the lock again inside was about 100 of a local
     * Get's 1 270 instructions). */
    bool (*in_callback)(void *pctx);

    /* Optional (NULL: the engine uses region_create, a copy). A region
     * over `len` bytes at `data` that stay the caller's, without a copy:
     * the platform calls `release(arg)` once it is done with them (after
     * region_release and every send carrying the region). For platforms
     * whose receivers share the sender's memory (pmixsim), so that data
     * a host hands every node (a fence's collected data) exists once in
     * the process. region_append is never used on such a region. NULL on
     * failure, and then `release` has not run. */
    px_region *(*region_wrap)(void *pctx, const void *data, size_t len, void (*release)(void *arg),
                              void *arg);

    /* Optional, all or none (NULL on platforms whose engines do not share
     * memory across processes: pmixsim, the in-process tests). The fence
     * page (px_page.h): read-write memory a server shares with the local
     * clients of one namespace.
     *
     * page_create (server): `len` zeroed bytes, mapped at *mem; NULL on
     * failure. page_send (server): as `send`, with the page attached; the
     * receiving platform maps it before it delivers the frame, and the
     * client engine finds it with page_get. page_destroy (server): the
     * server's mapping goes; clients keep theirs. page_get (client): the
     * page that came from the server, NULL if none or if it could not be
     * mapped; its length in *len. page_wait: sleep while *word == val, at
     * most `seconds` (without a limit if `seconds` is negative); false on
     * timeout; may return early. page_wake: wake
     * every sleeper on `word`, in every process. page_write (server): copy
     * `len` bytes to offset `off` of the page without touching them through
     * the server's mapping (collected data: it stays out of the server's
     * resident size). */
    px_page *(*page_create)(void *pctx, size_t len, void **mem);
    pmix_status_t (*page_send)(void *pctx, uint64_t conn, void *frame, size_t len, px_page *page);
    void (*page_destroy)(void *pctx, px_page *page);
    void *(*page_get)(void *pctx, size_t *len);
    bool (*page_wait)(void *pctx, uint32_t *word, uint32_t val, double seconds);
    void (*page_wake)(void *pctx, uint32_t *word);
    pmix_status_t (*page_write)(void *pctx, px_page *page, uint64_t off, const void *data,
                                size_t len);

    /* Optional. True if frames wait to be written to the server and
     * nothing writes them unless the caller drives the loop (no progress
     * thread). A fence on the page sends no message, so it would leave
     * them waiting (a large commit a peer's Get waits for): such a fence
     * goes to the server instead, whose wait drives the loop. */
    bool (*out_pending)(void *pctx);

    /* Optional (with the page ops). page_trim (server): give back the
     * memory behind [off, off + len) of the page, which then reads as
     * zeros; nothing happens if it cannot. A data half that held one large
     * collect would otherwise keep that memory until the namespace goes. */
    void (*page_trim)(void *pctx, px_page *page, uint64_t off, uint64_t len);

    /* Optional (with the page ops). page_discard (client): the same through
     * the client's own mapping: give back the memory behind [addr, addr +
     * len) of the page as mapped here, in every process (it then reads as
     * zeros); addr and len are multiples of 4096. Never touches a byte
     * outside the range (with larger system pages, only the whole pages
     * inside it go). True if all of it went; false leaves the rest to the
     * server's next page_trim of that half. The last arrival of a collect
     * the clients wrote themselves gives back what an older, larger one
     * left past it. */
    bool (*page_discard)(void *pctx, void *addr, size_t len);

    /* Optional (with the page ops). page_bound (client): true if this
     * process cannot outlive the server it is connected to (posix: the
     * server is its parent, which kills it with PR_SET_PDEATHSIG SIGKILL;
     * pmixrun and pmixd start their ranks so). Its sleeps on the page then
     * need no deadline: a server that ends in order breaks the page
     * (px_srv_page_free), and one that dies takes this process with it.
     * posix decides when the page arrives (PMIx_Init): a program whose
     * parent-death signal is cleared after that (by prctl, or by the
     * kernel when it changes its user or group ids) would sleep on in a
     * page fence if its server then died; asking again at each fence, one
     * prctl call, cost 8% of a barrier at 64 processes, so it is not done.
     * The signal is the calling thread's: PMIx_Init from a thread other
     * than the one that was exec'd is never bound (safe, only slower).
     * The server is whoever listened on the socket (SO_PEERCRED); a host
     * that listens in one process and serves from another must not start
     * its ranks from the first with SIGKILL as their parent-death signal.
     * Otherwise a sleeper looks at its connection every 0.1 s, and arming
     * that timer cost 4% of a collect and 8% of a barrier at 64 processes
     * on 2 cores. */
    bool (*page_bound)(void *pctx);

    /* Optional. conn_accepted (server): the engine accepted the peer of
     * `conn`, whose handshake is done; the platform lifts the limits it
     * keeps on connections whose handshake is not (posix: a deadline, a
     * small frame size, how many there may be: px_posix.h). Without it,
     * the engine's peers have no such limits. */
    void (*conn_accepted)(void *pctx, uint64_t conn);

    /* Optional. peer_pid (server): the process id of the peer of `conn`
     * as the system vouches for it (posix: SO_PEERCRED at accept), 0 if
     * unknown. The engine tells the host (client_connected2), which may
     * check it against the process it started. */
    uint32_t (*peer_pid)(void *pctx, uint64_t conn);
} px_platform_ops;

/*
 * A sink: where a platform delivers what arrives on connections. Engines
 * export their entry points in this shape so that a platform can serve a
 * client, a server or a tool without knowing which.
 */
typedef struct px_sink {
    /* A new connection from a peer with the given credentials. A non-zero
     * return refuses it: the platform closes the connection. */
    pmix_status_t (*opened)(void *sctx, uint64_t conn, uint32_t uid, uint32_t gid);
    /* One complete frame (header included). The frame is only borrowed for
     * the duration of the call. A non-zero return means the peer broke the
     * protocol: the engine has already forgotten the connection and the
     * platform closes it. */
    pmix_status_t (*deliver)(void *sctx, uint64_t conn, const void *frame, size_t len);
    /* The peer went away (EOF, reset, or the platform gave up on it). */
    void (*closed)(void *sctx, uint64_t conn, pmix_status_t why);
    /* A frame sent with a region (send_region): as `deliver`, plus `len`
     * read-only bytes at `data` that stay valid until the sink calls
     * release(release_arg) (once, from any thread holding the lock, also
     * when it returns an error). May be NULL for sinks that never receive
     * regions: the platform then treats such a frame as a protocol error. */
    pmix_status_t (*deliver_region)(void *sctx, uint64_t conn, const void *frame, size_t flen,
                                    const void *data, size_t len, void (*release)(void *arg),
                                    void *release_arg);
} px_sink;

#endif /* PX_PLATFORM_H */
