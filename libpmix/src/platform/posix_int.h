/*
 * posix_int.h - what posix.c (the loop, the lock, timers, waiting) and
 * posix_conn.c (sockets, frames, listeners) share. Nothing outside
 * platform/ includes this file; the contract is px_posix.h.
 *
 * Thread rules, in one place:
 *  - Every field below is protected by `lock` (the engine lock), except
 *    `base` (libevent locks itself: evthread), the constants set at
 *    creation, and `px_conn.refs` (atomic, see posix_conn.c).
 *  - Callbacks from libevent run without the engine lock; each one takes it
 *    first and then checks that its object is still alive (`closed`,
 *    `cancelled`), because another thread may have closed or cancelled it
 *    while the callback was waiting for the lock.
 *  - event_del() is never called from outside the loop thread: libevent
 *    would block until a running callback returns, and that callback may be
 *    waiting for the engine lock we hold. Objects that can die while their
 *    callback runs are released with event_free_finalize() instead.
 */
#ifndef PX_POSIX_INT_H
#define PX_POSIX_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "px_posix.h"
#include "wire/px_wire.h"

/* A shared region is one slab of the server's pool (posix_region.c): a
 * memfd that can grow but never shrink, written only while no reader
 * holds it. `refs` counts the engine's hold and every delivery to a
 * connection whose release has not come back yet; a slab with no refs is
 * free and is written again by the next region_create. Protected by the
 * engine lock. */
struct px_region {
    struct px_region *next; /* px_posix.slabs */
    uint32_t id;            /* names the slab on the wire; never reused */
    int refs;
    int known_by; /* connections its fd has been passed to */
    int fd;       /* read-write: the server's */
    int rofd;     /* read-only: what readers get (fd if it cannot be reopened) */
    size_t len;   /* bytes of the current region */
    size_t cap;   /* the file's size */
    size_t dirty; /* bytes from 0 that may hold pages (written since the last trim) */
    bool sealed;  /* sent: no appends until it is free again */
};

/* A reader's mapping of a slab (posix_region.c). A slab has one current
 * mapping per connection; an older, smaller one stays until its last
 * holder lets go. */
typedef struct px_rmap {
    struct px_rmap *next; /* px_posix.rmaps */
    struct px_posix *p;   /* NULL once the platform is destroyed */
    uint64_t conn;
    uint32_t id;
    int fd; /* the slab, kept to map it again when it grows; -1 if not current */
    void *addr;
    size_t maplen;
    size_t size;  /* the file's size when last looked at */
    int holders;  /* deliveries not yet released */
    bool current; /* the mapping new deliveries of `id` use */
} px_rmap;

/* Platform frames: a frame type engines never use (px_proto.h numbers
 * from 1 up), read and consumed by the platform itself.
 *   PX_PLAT_REGION  server to reader, right before a frame with the
 *                   PX_FRAME_REGION bit: u32 slab id, u32 flags (bit 0: the
 *                   slab's fd comes with this frame), u64 region length.
 *   PX_PLAT_RELEASE reader to server: u32 count, count x u32 slab id; one
 *                   entry per delivery the reader no longer holds.
 *   PX_PLAT_PAGE    server to client, in front of any frame: u64 length;
 *                   the fence page's memfd comes with it (posix_page.c). */
#define PX_PLAT_REGION 0x7f01u
#define PX_PLAT_RELEASE 0x7f02u
#define PX_PLAT_PAGE 0x7f03u
#define PX_OUT_HEAD 64 /* room for one platform frame in front of a frame */
#define PX_RELEASE_PER_FRAME ((PX_OUT_HEAD - PX_FRAME_HDR - 4) / 4)

/* One queued outgoing frame, partly written when `off` > 0. `head` holds
 * a platform frame written before it, in the same sendmsg; `pass_fd`
 * (borrowed, -1 if none) rides on the first byte. `off` counts both. */
typedef struct px_out {
    struct px_out *next;
    uint8_t *data;
    size_t len;
    size_t off;
    size_t hlen;
    int pass_fd;
    uint8_t head[PX_OUT_HEAD];
} px_out;

/* File descriptors received on a connection, waiting for their frames.
 * Each frame carries at most one and takes it as soon as its (small)
 * platform frame is read, so a few is plenty; accepted connections may
 * hold none (px_posix_limits). */
#define PX_MAX_PENDING_FDS 4

typedef struct px_conn {
    struct px_posix *p;
    uint64_t id;
    int fd;
    struct event *rev; /* persistent EV_READ */
    struct event *wev; /* one-shot EV_WRITE, armed while `wq_head` is not empty */
    const px_sink *sink;
    void *sctx;
    struct px_conn *hnext; /* hash chain in px_posix.conns */

    /* Bytes read and not yet delivered: zero or more complete frames
     * followed by a partial one. `rneed` is the size of that partial frame
     * once its header is known (0 before). */
    uint8_t *rbuf;
    size_t rlen;
    size_t rcap;
    size_t rneed;

    px_out *wq_head;
    px_out *wq_tail;
    size_t wq_bytes; /* what the queue still has to write */

    /* An accepted connection (a server's peer) and its limits
     * (px_posix_limits): `pending` until the engine says its handshake is
     * done; `hsev` (NULL on a client's connection) closes it if that takes
     * too long. `pid` is the peer's, from SO_PEERCRED (0 if unknown). */
    bool accepted;
    bool pending;
    struct event *hsev;
    uint32_t pid;

    /* File descriptors received with SCM_RIGHTS, oldest first, each with
     * the stream offsets [from, to) of the read it came with: each rides
     * on the first bytes of its frame, so it belongs to the frame that
     * starts there. fd -1 is one the kernel dropped (MSG_CTRUNC: this
     * process was at its open-file limit): that frame finds none (the
     * fence page is then done without, a region fails). */
    struct {
        int fd;
        uint64_t from, to;
    } fds[PX_MAX_PENDING_FDS];
    int nfds;
    uint64_t rpos; /* stream offset of rbuf[0] */

    /* Sender of regions: slabs delivered and not released (one entry per
     * delivery), and slabs whose fd this peer has. */
    struct px_region **held;
    size_t nheld, capheld;
    struct px_region **known;
    size_t nknown, capknown;
    /* Reader of regions: the PX_PLAT_REGION frame read, waiting for its
     * frame (`pend_fd` -1 if no fd came), and the releases to send. */
    bool pend;
    uint32_t pend_id;
    uint64_t pend_len;
    int pend_fd;
    uint32_t *rel;
    size_t nrel, caprel;

    bool closed;        /* released: no more sink calls, fd closed */
    pmix_status_t werr; /* a write failed; the read callback reports it */
    atomic_int refs;    /* finalizers still to run before free (2, 3 with hsev) */
} px_conn;

typedef struct px_listener {
    struct px_listener *next;
    struct px_posix *p;
    int fd;
    struct event *ev;       /* persistent EV_READ: accept */
    struct event *retry_ev; /* resumes accepting after EMFILE and friends */
    bool paused;            /* max_pending connections wait for their handshake */
    const px_sink *sink;
    void *sctx;
    char *path;   /* the socket file, unlinked at destroy */
    char *dir;    /* the directory if we created it, else NULL */
    uint64_t ino; /* inode of our socket file: only unlink our own */
    uint64_t dev;
} px_listener;

struct px_timer {
    struct px_posix *p;
    struct event *ev;
    px_timer_cb cb;
    void *arg;
    double due; /* on CLOCK_MONOTONIC: it never fires before */
    bool cancelled;
    struct px_timer *prev, *next; /* armed timers, for destroy */
};

struct px_posix {
    struct event_base *base;
    pthread_mutex_t lock; /* the engine lock, recursive */
    pthread_cond_t cond;  /* waiters (wait/wake) and the external-progress driver */
    bool external;

    bool has_thread;
    pthread_t thread;
    struct event *stop_ev; /* activated by destroy: breaks the progress loop */

    /* External progress: at most one thread runs the loop at a time (the
     * driver); other waiters sleep on `cond`. */
    bool driving;
    pthread_t driver;
    struct event *nudge_ev;        /* activated to return the driver from the loop */
    struct event *tick_ev;         /* px_posix_run_once's timeout */
    struct px_posix_watch *always; /* watches of descriptors that are always ready */

    size_t max_payload;
    int verbosity; /* highest px_log_level printed */
    px_posix_limits lim;
    size_t npending; /* accepted connections whose handshake is not done */

    uint64_t next_id; /* next connection id handed out by accept; starts at 1 */
    px_conn **buckets;
    size_t nbuckets; /* power of two */
    size_t nconns;

    px_listener *listeners;
    struct px_timer *timers;

    struct px_region *slabs; /* the region pool of a server */
    uint32_t next_slab;
    px_rmap *rmaps; /* a reader's mappings */

    void *page; /* a client's fence page, mapped read-write (posix_page.c) */
    size_t page_len;
    bool page_bound;  /* px_posix_bound_to(server_pid) when the page came */
    pid_t server_pid; /* a client's server (SO_PEERCRED at connect), 0 if unknown */
};

/* posix.c */
void px_posix_logf(struct px_posix *p, px_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* posix_conn.c */
pmix_status_t px_posix_conn_send(void *pctx, uint64_t conn, void *frame, size_t len);
void px_posix_conn_close(void *pctx, uint64_t conn);
pmix_status_t px_posix_conn_send_region(void *pctx, uint64_t conn, void *frame, size_t len,
                                        struct px_region *region);

/* posix_conn.c, for posix_region.c: queue the release of one delivery
 * of slab `id` on connection `conn` (sent with its next frame). */
void px_posix_conn_note_release(px_posix *p, uint64_t conn, uint32_t id);
/* posix_conn.c: the `conn_accepted` and `peer_pid` platform ops. */
void px_posix_conn_accepted(void *pctx, uint64_t conn);
uint32_t px_posix_peer_pid(void *pctx, uint64_t conn);

/* posix_region.c */
struct px_region *px_posix_region_create(void *pctx, const void *data, size_t len);
void px_posix_region_release(void *pctx, struct px_region *region);
pmix_status_t px_posix_region_append(void *pctx, struct px_region *region, const void *data,
                                     size_t len);
/* Drop one hold (lock held); a slab nobody holds is free again. */
void px_posix_region_unref(px_posix *p, struct px_region *region);
/* A complete region, about to be delivered: give back the pages older,
 * larger regions left past its end, when they are worth it (lock held). */
void px_posix_region_trim(px_posix *p, struct px_region *region);
/* Map the region announced by the connection's PX_PLAT_REGION frame and
 * deliver `frame` with it to the sink (lock held). *reached says whether
 * the sink was called: if not (no deliver_region, not a memfd sealed
 * against shrinking, shorter than announced, an unknown slab, no memory),
 * the engine knows nothing and the caller must report the close. */
pmix_status_t px_posix_deliver_region(px_conn *c, const void *frame, size_t flen, bool *reached);
/* A connection goes away (lock held): its holds and known slabs on the
 * sending side, its mappings on the reading side (kept while held). */
void px_posix_region_conn_gone(px_conn *c);
/* The platform goes away: free slabs and unheld mappings. */
void px_posix_regions_destroy(px_posix *p);

/* posix_page.c */
px_page *px_posix_page_create(void *pctx, size_t len, void **mem);
void px_posix_page_destroy(void *pctx, px_page *page);
void *px_posix_page_get(void *pctx, size_t *len);
bool px_posix_page_wait(void *pctx, uint32_t *word, uint32_t val, double seconds);
void px_posix_page_wake(void *pctx, uint32_t *word);
pmix_status_t px_posix_page_write(void *pctx, px_page *page, uint64_t off, const void *data,
                                  size_t len);
pmix_status_t px_posix_conn_send_page(void *pctx, uint64_t conn, void *frame, size_t len,
                                      px_page *page);
bool px_posix_out_pending(void *pctx);
void px_posix_page_trim(void *pctx, px_page *page, uint64_t off, uint64_t len);
/* The page's memfd and length, for the frame that carries it. */
int px_posix_page_fd(const px_page *page, size_t *len);
/* A client reads the server's page (lock held; takes `fd`). False only if
 * it already has one (a protocol error); a page it cannot map is logged
 * and left out, and true returned. */
bool px_posix_page_map(px_posix *p, int fd, size_t len);
bool px_posix_page_bound(void *pctx);
bool px_posix_page_discard(void *pctx, void *addr, size_t len);
/* True if this process is killed when `server` dies: `server` is its
 * parent and its parent-death signal is SIGKILL. */
bool px_posix_bound_to(pid_t server);
/* The platform goes away: unmap a client's page. */
void px_posix_page_unmap(px_posix *p);

/* posix_watch.c: activate the always-ready watches that want something
 * (lock held, before the loop runs); true if there was one. */
bool px_posix_watch_always(px_posix *p);

/* destroy: release every connection and listener without sink calls. The
 * loop must no longer run. */
void px_posix_conns_destroy(struct px_posix *p);

#endif /* PX_POSIX_INT_H */
