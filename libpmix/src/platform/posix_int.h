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

#include <event2/event.h>

#include "px_posix.h"

/* A shared region: a sealed memfd (posix_region.c). `refs` counts the
 * engine's hold and every queued frame that still has to pass the fd;
 * protected by the engine lock. */
struct px_region {
    int refs;
    int fd;
    size_t len;
    bool sealed; /* no more appends: it has been sent */
};

/* One queued outgoing frame, partly written when `off` > 0. A frame with a
 * region passes the region's fd with its first bytes. */
typedef struct px_out {
    struct px_out *next;
    uint8_t *data;
    size_t len;
    size_t off;
    struct px_region *region; /* still to pass, or NULL */
} px_out;

/* File descriptors received on a connection, waiting for their frames. */
#define PX_MAX_PENDING_FDS 16

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

    int fds[PX_MAX_PENDING_FDS]; /* received with SCM_RIGHTS, oldest first */
    int nfds;

    bool closed;        /* released: no more sink calls, fd closed */
    pmix_status_t werr; /* a write failed; the read callback reports it */
    atomic_int refs;    /* finalizers still to run before free (2) */
} px_conn;

typedef struct px_listener {
    struct px_listener *next;
    struct px_posix *p;
    int fd;
    struct event *ev;       /* persistent EV_READ: accept */
    struct event *retry_ev; /* resumes accepting after EMFILE and friends */
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
    struct event *nudge_ev; /* activated to return the driver from the loop */

    size_t max_payload;
    int verbosity; /* highest px_log_level printed */

    uint64_t next_id; /* next connection id handed out by accept; starts at 1 */
    px_conn **buckets;
    size_t nbuckets; /* power of two */
    size_t nconns;

    px_listener *listeners;
    struct px_timer *timers;
};

/* posix.c */
void px_posix_logf(struct px_posix *p, px_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* posix_conn.c */
pmix_status_t px_posix_conn_send(void *pctx, uint64_t conn, void *frame, size_t len);
void px_posix_conn_close(void *pctx, uint64_t conn);
pmix_status_t px_posix_conn_send_region(void *pctx, uint64_t conn, void *frame, size_t len,
                                        struct px_region *region);

/* posix_region.c */
struct px_region *px_posix_region_create(void *pctx, const void *data, size_t len);
void px_posix_region_release(void *pctx, struct px_region *region);
pmix_status_t px_posix_region_append(void *pctx, struct px_region *region, const void *data,
                                     size_t len);
/* Seal before the first send (lock held); false if the kernel refuses. */
bool px_posix_region_seal(struct px_region *region);
void px_posix_region_unref(struct px_region *region);
/* Map a received region fd read-only (the fd is closed in every case) and
 * deliver `frame` with it to the connection's sink. *reached says whether
 * the sink was called: if not (no deliver_region, not a sealed memfd, no
 * memory), the engine knows nothing and the caller must report the close. */
pmix_status_t px_posix_deliver_region(const px_sink *sink, void *sctx, uint64_t conn,
                                      const void *frame, size_t flen, int fd, bool *reached);

/* destroy: release every connection and listener without sink calls. The
 * loop must no longer run. */
void px_posix_conns_destroy(struct px_posix *p);

#endif /* PX_POSIX_INT_H */
