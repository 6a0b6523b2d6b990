/*
 * posix_conn.c - connections of the posix platform: Unix stream sockets
 * carrying frames, the listener a server accepts on, and the connect a
 * client makes.
 *
 * Reading. Each connection has one receive buffer. The read callback reads
 * what the socket has (a bounded number of times, for fairness; a read
 * shorter than the room it had means the socket is empty), then walks
 * the complete frames at the front of the buffer, checking each header with
 * px_frame_parse() and handing each frame to the sink's `deliver` in place
 * (borrowed for the call). Once a header is known the buffer is grown to
 * hold the whole frame, so a large frame is read straight into place; it is
 * shrunk again afterwards. A malformed or oversized header ends the
 * connection: it is released and the sink's `closed` gets the status of
 * px_frame_parse() (PMIX_ERR_BAD_PARAM or PMIX_ERR_OUT_OF_RESOURCE), after an
 * error message naming the connection id. EOF or a reset gives
 * PMIX_ERR_LOST_CONNECTION.
 *
 * Writing. `send` writes at once from the calling thread (under the engine
 * lock) when nothing is queued; what the socket does not take is queued and
 * a one-shot EV_WRITE event is armed, whose callback writes more and re-arms
 * itself until the queue is empty. Each frame goes out with one sendmsg,
 * together with a platform frame in front of it when there is one (a
 * region's announcement, or a reader's releases: posix_region.c; the fence
 * page: posix_page.c). A write
 * error marks the connection
 * (`werr`) and activates its read event, so that the sink hears about it
 * from the loop, never from inside `send`. MSG_NOSIGNAL: no SIGPIPE.
 *
 * Closing. A connection is released (closed, out of the table, fd closed,
 * queue freed) at once; its two events go through event_free_finalize()
 * and the struct itself (with the receive buffer a `deliver` may still be
 * reading) is freed by the second finalizer.
 *
 * Limits (px_posix_limits in px_posix.h). An accepted connection is
 * `pending` until the engine calls conn_accepted (its handshake is done):
 * until then its frames may be no larger than `handshake_frame`, and its
 * `hsev` timer closes it when `handshake_s` run out. At most `max_pending`
 * connections are pending: at that count accept_cb takes its listeners'
 * events out (`paused`) and pending_end puts them back, so later
 * connections wait in the kernel's backlog, costing the server nothing.
 * An accepted peer may pass no file descriptor (take_fds) and no page or
 * region frame (platform_frame); a client's connection keeps at most
 * PX_MAX_PENDING_FDS, and one that no frame claims ends the connection as
 * soon as the frames its bytes started are read (deliver_frames). A frame
 * for an accepted peer that would take what is queued for it past
 * `max_queued` drops that peer (enqueue): it does not read.
 *
 * Connection ids: accepted connections are numbered 1, 2, ... per
 * px_posix; the connection made by px_posix_connect() is PX_CONN_SERVER (0).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "posix_int.h"
#include "wire/px_wire.h"

#define RBUF_MIN ((size_t)16 << 10)
#define RBUF_SHRINK RBUF_MIN /* a large frame's buffer is given back at the next read */
#define READS_PER_CALLBACK 64
#define ACCEPTS_PER_CALLBACK 64
#define SOCK_NAME "pmix.sock"
#define URI_PREFIX "unix:"

/* ---- the table of connections (hash on id, chained) ---- */

static size_t bucket_of(const px_posix *p, uint64_t id)
{
    return (size_t)(id ^ (id >> 17)) & (p->nbuckets - 1);
}

static px_conn *conn_find(px_posix *p, uint64_t id)
{
    for (px_conn *c = p->buckets[bucket_of(p, id)]; c != NULL; c = c->hnext)
        if (c->id == id)
            return c;
    return NULL;
}

static void table_grow(px_posix *p)
{
    size_t n = p->nbuckets * 2;
    px_conn **nb = calloc(n, sizeof *nb);
    if (nb == NULL)
        return; /* longer chains, still correct */
    px_conn **old = p->buckets;
    size_t oldn = p->nbuckets;
    p->buckets = nb;
    p->nbuckets = n;
    for (size_t i = 0; i < oldn; i++) {
        px_conn *c = old[i];
        while (c != NULL) {
            px_conn *next = c->hnext;
            size_t b = bucket_of(p, c->id);
            c->hnext = nb[b];
            nb[b] = c;
            c = next;
        }
    }
    free(old);
}

static void table_insert(px_posix *p, px_conn *c)
{
    if (p->nconns + 1 > p->nbuckets * 2)
        table_grow(p);
    size_t b = bucket_of(p, c->id);
    c->hnext = p->buckets[b];
    p->buckets[b] = c;
    p->nconns++;
}

static void table_remove(px_posix *p, px_conn *c)
{
    for (px_conn **pp = &p->buckets[bucket_of(p, c->id)]; *pp != NULL; pp = &(*pp)->hnext) {
        if (*pp == c) {
            *pp = c->hnext;
            c->hnext = NULL;
            p->nconns--;
            return;
        }
    }
}

/* ---- connection life ---- */

static void conn_read_cb(evutil_socket_t fd, short what, void *arg);
static void conn_write_cb(evutil_socket_t fd, short what, void *arg);

static void wq_free(px_conn *c)
{
    px_out *o = c->wq_head;
    while (o != NULL) {
        px_out *next = o->next;
        free(o->data);
        free(o);
        o = next;
    }
    c->wq_head = c->wq_tail = NULL;
    c->wq_bytes = 0;
}

/* The handshake of `c` is over (done, or the connection is gone): it no
 * longer counts against max_pending, and paused listeners accept again. */
static void pending_end(px_conn *c)
{
    px_posix *p = c->p;

    if (!c->pending)
        return;
    c->pending = false;
    p->npending--;
    if (p->npending >= p->lim.max_pending)
        return;
    for (px_listener *l = p->listeners; l != NULL; l = l->next) {
        if (l->paused) {
            l->paused = false;
            event_add(l->ev, NULL);
        }
    }
}

/* Close the received fds no frame claimed. */
static void fds_close(px_conn *c)
{
    for (int i = 0; i < c->nfds; i++)
        if (c->fds[i].fd >= 0)
            close(c->fds[i].fd);
    c->nfds = 0;
}

/* Make a connection for `fd` (owned from now on, also on failure) and put
 * it in the table; its read event is not yet added. */
static px_conn *conn_new(px_posix *p, int fd, uint64_t id, const px_sink *sink, void *sctx)
{
    px_conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        close(fd);
        return NULL;
    }
    c->p = p;
    c->id = id;
    c->fd = fd;
    c->sink = sink;
    c->sctx = sctx;
    c->pend_fd = -1;
    atomic_init(&c->refs, 2);
    c->rev = event_new(p->base, fd, EV_READ | EV_PERSIST, conn_read_cb, c);
    c->wev = event_new(p->base, fd, EV_WRITE, conn_write_cb, c);
    if (c->rev == NULL || c->wev == NULL) {
        if (c->rev != NULL)
            event_free(c->rev);
        if (c->wev != NULL)
            event_free(c->wev);
        close(fd);
        free(c);
        return NULL;
    }
    table_insert(p, c);
    return c;
}

static void conn_finalized(struct event *ev, void *arg)
{
    px_conn *c = arg;
    if (atomic_fetch_sub(&c->refs, 1) == 1) {
        free(c->rbuf);
        free(c);
    }
}

static int flush_queue(px_conn *c);

/* Forget a connection: no sink call ever again for it. */
static void conn_release(px_conn *c)
{
    px_posix *p = c->p;
    if (c->closed)
        return;
    c->closed = true;
    table_remove(p, c);
    pending_end(c);
    if (c->wq_head != NULL && c->werr == PMIX_SUCCESS)
        (void)flush_queue(c); /* best effort: a last reply may fit */
    wq_free(c);
    fds_close(c);
    px_posix_region_conn_gone(c);
    int fd = c->fd;
    struct event *rev = c->rev, *wev = c->wev, *hsev = c->hsev;
    c->fd = -1;
    /* From here on `c` may be freed at any moment by the loop thread (the
     * finalizers run there), so it is not touched again. */
    event_free_finalize(0, rev, conn_finalized);
    event_free_finalize(0, wev, conn_finalized);
    if (hsev != NULL)
        event_free_finalize(0, hsev, conn_finalized);
    close(fd);
}

/* Release and tell the sink why. Called from the loop only. */
static void conn_fail(px_conn *c, pmix_status_t why)
{
    uint64_t id = c->id;
    const px_sink *sink = c->sink;
    void *sctx = c->sctx;
    conn_release(c);
    if (sink->closed != NULL)
        sink->closed(sctx, id, why);
}

/* ---- writing ---- */

/* Write as much of `o` as the socket takes now. Returns 0 when all of it
 * went, EAGAIN when the socket is full, or another errno. */
static int write_out(px_conn *c, px_out *o)
{
    size_t total = o->hlen + o->len;
    while (o->off < total) {
        struct iovec iov[2];
        struct msghdr msg = {0};
        union {
            struct cmsghdr hdr;
            char buf[CMSG_SPACE(sizeof(int))];
        } ctl;
        ssize_t n;
        msg.msg_iov = iov;
        if (o->off < o->hlen) {
            iov[0] = (struct iovec){o->head + o->off, o->hlen - o->off};
            iov[1] = (struct iovec){o->data, o->len};
            msg.msg_iovlen = 2;
        } else {
            iov[0] = (struct iovec){o->data + (o->off - o->hlen), total - o->off};
            msg.msg_iovlen = 1;
        }
        if (o->pass_fd >= 0) {
            /* the fd rides on the first bytes */
            memset(&ctl, 0, sizeof(ctl));
            msg.msg_control = ctl.buf;
            msg.msg_controllen = sizeof(ctl.buf);
            struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(cm), &o->pass_fd, sizeof(int));
        }
        n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno == EWOULDBLOCK ? EAGAIN : errno;
        }
        if (n > 0)
            o->pass_fd = -1; /* passed: the kernel holds the file for the peer */
        o->off += (size_t)n;
    }
    return 0;
}

/* Write what the queue holds. Returns 0 when it is empty or the socket is
 * full (then the write event is armed), or an errno. */
static int flush_queue(px_conn *c)
{
    while (c->wq_head != NULL) {
        px_out *o = c->wq_head;
        size_t left = o->hlen + o->len - o->off;
        int err = write_out(c, o);
        c->wq_bytes -= left - (o->hlen + o->len - o->off);
        if (err == EAGAIN) {
            if (!c->closed)
                event_add(c->wev, NULL);
            return 0;
        }
        if (err != 0)
            return err;
        c->wq_head = o->next;
        if (c->wq_head == NULL)
            c->wq_tail = NULL;
        free(o->data);
        free(o);
    }
    return 0;
}

/* Note a write failure; the read callback reports it from the loop. */
static void conn_write_failed(px_conn *c, int err)
{
    px_posix_logf(c->p, PX_LOG_DEBUG, "connection %llu: write failed: %s",
                  (unsigned long long)c->id, strerror(err));
    c->werr = PMIX_ERR_LOST_CONNECTION;
    wq_free(c);
    event_active(c->rev, EV_READ, 0);
}

static pmix_status_t enqueue(px_posix *p, uint64_t id, void *frame, size_t len,
                             struct px_region *region, const px_page *page);

pmix_status_t px_posix_conn_send(void *pctx, uint64_t id, void *frame, size_t len)
{
    return enqueue(pctx, id, frame, len, NULL, NULL);
}

pmix_status_t px_posix_conn_send_page(void *pctx, uint64_t id, void *frame, size_t len,
                                      px_page *page)
{
    return enqueue(pctx, id, frame, len, NULL, page);
}

bool px_posix_out_pending(void *pctx)
{
    px_posix *p = pctx;
    bool pending;

    pthread_mutex_lock(&p->lock);
    px_conn *c = conn_find(p, PX_CONN_SERVER);
    pending = !p->has_thread && c != NULL && !c->closed && c->wq_head != NULL;
    pthread_mutex_unlock(&p->lock);
    return pending;
}

pmix_status_t px_posix_conn_send_region(void *pctx, uint64_t id, void *frame, size_t len,
                                        struct px_region *region)
{
    if (len < PX_FRAME_HDR) {
        free(frame);
        return PMIX_ERR_BAD_PARAM;
    }
    ((uint8_t *)frame)[7] |= PX_FRAME_REGION >> 8; /* the type's high byte */
    return enqueue(pctx, id, frame, len, region, NULL);
}

static void put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *b, uint32_t v)
{
    put16(b, (uint16_t)v);
    put16(b + 2, (uint16_t)(v >> 16));
}

/* A platform frame's header at `b` for `payload` bytes. */
static void put_plat_hdr(uint8_t *b, uint16_t type, uint32_t payload)
{
    put32(b, PX_WIRE_MAGIC);
    put16(b + 4, PX_WIRE_VERSION);
    put16(b + 6, type);
    put32(b + 8, 0);
    put32(b + 12, payload);
}

static bool ptr_push(struct px_region ***arr, size_t *n, size_t *cap, struct px_region *r)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        struct px_region **na = realloc(*arr, nc * sizeof(*na));
        if (na == NULL)
            return false;
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = r;
    return true;
}

/* Account a delivery of `r` to `c` and write its PX_PLAT_REGION frame into
 * `o`'s head (lock held). False if out of memory: nothing changed. */
static bool region_head(px_conn *c, px_out *o, struct px_region *r)
{
    bool known = false;
    for (size_t i = 0; i < c->nknown && !known; i++)
        known = c->known[i] == r;
    if (!known && !ptr_push(&c->known, &c->nknown, &c->capknown, r))
        return false;
    if (!ptr_push(&c->held, &c->nheld, &c->capheld, r)) {
        if (!known)
            c->nknown--;
        return false;
    }
    if (!known)
        r->known_by++;
    r->refs++;
    /* Complete now: what older regions left past it goes, and readers may
     * map it from now on. */
    if (!r->sealed)
        px_posix_region_trim(c->p, r);
    r->sealed = true;
    put_plat_hdr(o->head, PX_PLAT_REGION, 16);
    put32(o->head + 16, r->id);
    put32(o->head + 20, known ? 0 : 1);
    put32(o->head + 24, (uint32_t)r->len);
    put32(o->head + 28, (uint32_t)((uint64_t)r->len >> 32));
    o->hlen = 32;
    o->pass_fd = known ? -1 : r->rofd;
    return true;
}

/* Releases waiting to go to the server, in front of its next frame. */
static void release_head(px_conn *c, px_out *o)
{
    size_t n = c->nrel < PX_RELEASE_PER_FRAME ? c->nrel : PX_RELEASE_PER_FRAME;
    put_plat_hdr(o->head, PX_PLAT_RELEASE, (uint32_t)(4 + 4 * n));
    put32(o->head + 16, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        put32(o->head + 20 + 4 * i, c->rel[i]);
    memmove(c->rel, c->rel + n, (c->nrel - n) * sizeof(*c->rel));
    c->nrel -= n;
    o->hlen = 20 + 4 * n;
}

void px_posix_conn_note_release(px_posix *p, uint64_t conn, uint32_t id)
{
    px_conn *c = conn_find(p, conn);
    if (c == NULL || c->closed)
        return;
    if (c->nrel == c->caprel) {
        size_t nc = c->caprel ? c->caprel * 2 : 8;
        uint32_t *na = realloc(c->rel, nc * sizeof(*na));
        if (na == NULL) {
            px_posix_logf(p, PX_LOG_WARN,
                          "out of memory noting a released region: the server keeps it until "
                          "this process disconnects");
            return;
        }
        c->rel = na;
        c->caprel = nc;
    }
    c->rel[c->nrel++] = id;
}

/* The fence page's PX_PLAT_PAGE frame into `o`'s head, its fd riding on it. */
static void page_head(px_out *o, const px_page *page)
{
    size_t len;

    o->pass_fd = px_posix_page_fd(page, &len);
    put_plat_hdr(o->head, PX_PLAT_PAGE, 8);
    put32(o->head + 16, (uint32_t)len);
    put32(o->head + 20, (uint32_t)((uint64_t)len >> 32));
    o->hlen = 24;
}

static pmix_status_t enqueue(px_posix *p, uint64_t id, void *frame, size_t len,
                             struct px_region *region, const px_page *page)
{
    pmix_status_t rc = PMIX_SUCCESS;

    pthread_mutex_lock(&p->lock);
    px_conn *c = conn_find(p, id);
    if (c == NULL || c->closed || c->werr != PMIX_SUCCESS) {
        free(frame);
        rc = PMIX_ERR_UNREACH;
        goto out;
    }
    if (len == 0) {
        free(frame);
        goto out;
    }
    if (c->accepted && c->wq_head != NULL && c->wq_bytes + PX_OUT_HEAD + len > p->lim.max_queued) {
        px_posix_logf(p, PX_LOG_ERROR,
                      "connection %llu: the peer does not read what it is sent (%zu bytes wait "
                      "for it, and %zu more would pass the limit of %zu); closing the connection",
                      (unsigned long long)c->id, c->wq_bytes, len, p->lim.max_queued);
        free(frame);
        conn_write_failed(c, ENOBUFS);
        rc = PMIX_ERR_UNREACH;
        goto out;
    }
    /* The common case: nothing queued and the socket takes the whole
     * frame; it goes from here, with no queue node. Otherwise the rest is
     * queued, and a queue node that cannot be had after part of the frame
     * went fails the connection: half a frame must never be followed by
     * another one. */
    px_out now = {.data = frame, .len = len, .pass_fd = -1};
    if (region != NULL) {
        if (!region_head(c, &now, region)) {
            free(frame);
            rc = PMIX_ERR_NOMEM;
            goto out;
        }
    } else if (page != NULL) {
        page_head(&now, page);
    } else if (c->nrel > 0) {
        release_head(c, &now);
    }
    int err = 0;
    if (c->wq_head == NULL) {
        err = write_out(c, &now);
        if (err == 0) {
            free(frame);
            goto out;
        }
    }
    px_out *o = err == 0 || err == EAGAIN ? malloc(sizeof *o) : NULL;
    if (o == NULL) {
        free(frame);
        if (err == 0 || err == EAGAIN)
            err = ENOMEM;
        if (now.off == 0 && now.hlen == 0 && err == ENOMEM) {
            rc = PMIX_ERR_NOMEM; /* nothing went, nothing noted: all intact */
            goto out;
        }
        conn_write_failed(c, err);
        rc = PMIX_ERR_UNREACH;
        goto out;
    }
    *o = now;
    o->next = NULL;
    c->wq_bytes += o->hlen + o->len - o->off;
    if (c->wq_head == NULL) {
        c->wq_head = o;
        event_add(c->wev, NULL); /* the socket was full */
    } else {
        c->wq_tail->next = o;
    }
    c->wq_tail = o;
out:
    pthread_mutex_unlock(&p->lock);
    return rc;
}

static void conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
    px_conn *c = arg;
    px_posix *p = c->p;
    pthread_mutex_lock(&p->lock);
    if (!c->closed && c->werr == PMIX_SUCCESS) {
        int err = flush_queue(c);
        if (err != 0)
            conn_write_failed(c, err);
    }
    pthread_mutex_unlock(&p->lock);
}

void px_posix_conn_close(void *pctx, uint64_t id)
{
    px_posix *p = pctx;
    pthread_mutex_lock(&p->lock);
    px_conn *c = conn_find(p, id);
    if (c != NULL)
        conn_release(c);
    pthread_mutex_unlock(&p->lock);
}

/* ---- reading ---- */

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* The fd of the frame that starts at stream offset `at` and announces
 * one: 1 with it in *fd (-1 if the kernel dropped it), 0 if none came with
 * the frame, -1 if the oldest one came before the frame (a frame that
 * announced none brought it: the peer broke the protocol). */
static int frame_fd(px_conn *c, uint64_t at, int *fd)
{
    if (c->nfds == 0 || at < c->fds[0].from)
        return 0;
    if (at >= c->fds[0].to)
        return -1;
    *fd = c->fds[0].fd;
    c->nfds--;
    memmove(c->fds, c->fds + 1, (size_t)c->nfds * sizeof(c->fds[0]));
    return 1;
}

/* A platform frame (posix_int.h) that starts at stream offset `at`,
 * consumed here. Returns false if it broke the protocol: the connection
 * is then gone. */
static bool platform_frame(px_conn *c, const px_frame_hdr *h, const uint8_t *b, uint64_t at)
{
    px_posix *p = c->p;
    const char *what = NULL;
    int fd = -1;

    if (c->accepted && h->type != PX_PLAT_RELEASE) {
        /* a client hands its server no page and no region */
        what = "a fence page or a shared region (only a server sends those)";
    } else if (h->type == PX_PLAT_PAGE) {
        int got = h->len == 8 ? frame_fd(c, at, &fd) : 1;
        if (h->len != 8)
            what = "a malformed page frame";
        else if (got == 0)
            what = "a page frame without its file descriptor";
        else if (got < 0)
            what = "a file descriptor that no frame announced";
        else if (fd < 0) {
            /* no page is no error: the engine tells the server (NOPAGE) */
            px_posix_logf(p, PX_LOG_WARN,
                          "the server's fence page did not reach this process (no file "
                          "descriptor was free: the open-file limit, ulimit -n); barriers go "
                          "through the server");
        } else {
            uint64_t len = (uint64_t)le32(b) | (uint64_t)le32(b + 4) << 32;
            if (!px_posix_page_map(p, fd, (size_t)len))
                what = "a second fence page";
        }
    } else if (h->type == PX_PLAT_REGION) {
        if (h->len != 16 || c->pend)
            what = "a malformed region frame";
        else {
            uint32_t flags = le32(b + 4);
            c->pend = true;
            c->pend_id = le32(b);
            c->pend_len = (uint64_t)le32(b + 8) | (uint64_t)le32(b + 12) << 32;
            c->pend_fd = -1;
            if (flags & 1) {
                /* the slab's fd came with this frame's first bytes */
                int got = frame_fd(c, at, &fd);
                if (got == 0)
                    what = "a region frame without its file descriptor";
                else if (got < 0)
                    what = "a file descriptor that no frame announced";
                else if (fd < 0)
                    what = "a shared region whose file descriptor this process could not "
                           "receive (at its open-file limit: raise ulimit -n)";
                else
                    c->pend_fd = fd;
            }
        }
    } else {
        uint32_t n = h->len >= 4 ? le32(b) : 0;
        if (h->len < 4 || (uint64_t)n * 4 != h->len - 4)
            what = "a malformed release frame";
        for (uint32_t k = 0; k < n && what == NULL; k++) {
            uint32_t id = le32(b + 4 + 4 * k);
            size_t i = 0;
            while (i < c->nheld && c->held[i]->id != id)
                i++;
            if (i == c->nheld) {
                what = "the release of a region it does not hold";
                break;
            }
            struct px_region *r = c->held[i];
            c->held[i] = c->held[--c->nheld];
            px_posix_region_unref(p, r);
        }
    }
    if (what == NULL)
        return true;
    px_posix_logf(p, PX_LOG_ERROR, "connection %llu: peer sent %s; closing the connection",
                  (unsigned long long)c->id, what);
    conn_fail(c, PMIX_ERR_UNPACK_FAILURE);
    return false;
}

/* Deliver the complete frames at the front of the buffer. Returns false if
 * the connection is gone afterwards. */
static bool deliver_frames(px_conn *c)
{
    px_posix *p = c->p;
    size_t off = 0;
    c->rneed = 0;
    while (c->rlen - off >= PX_FRAME_HDR) {
        px_frame_hdr h;
        /* before its handshake, a peer may send a HELLO and little more */
        size_t max = c->pending && p->lim.handshake_frame < p->max_payload ? p->lim.handshake_frame
                                                                           : p->max_payload;
        pmix_status_t rc = px_frame_parse(c->rbuf + off, c->rlen - off, max, &h);
        if (rc != PMIX_SUCCESS) {
            if (rc == PMIX_ERR_OUT_OF_RESOURCE)
                px_posix_logf(p, PX_LOG_ERROR,
                              "connection %llu: peer announced a frame of %lu bytes, more than "
                              "the limit of %zu%s; closing the connection",
                              (unsigned long long)c->id, (unsigned long)le32(c->rbuf + off + 12),
                              max, c->pending ? " before its handshake" : "");
            else
                px_posix_logf(p, PX_LOG_ERROR,
                              "connection %llu: malformed frame header (not a pmixlab peer, or "
                              "another protocol version); closing the connection",
                              (unsigned long long)c->id);
            conn_fail(c, rc);
            return false;
        }
        size_t total = PX_FRAME_HDR + (size_t)h.len;
        if (c->rlen - off < total) {
            c->rneed = total;
            break;
        }
        if (h.type == PX_PLAT_REGION || h.type == PX_PLAT_RELEASE || h.type == PX_PLAT_PAGE) {
            if (!platform_frame(c, &h, c->rbuf + off + PX_FRAME_HDR, c->rpos + off))
                return false;
            off += total;
            continue;
        }
        if (c->pend && !(h.type & PX_FRAME_REGION)) {
            px_posix_logf(p, PX_LOG_ERROR,
                          "connection %llu: a region frame is followed by a frame without a "
                          "region; closing the connection",
                          (unsigned long long)c->id);
            conn_fail(c, PMIX_ERR_UNPACK_FAILURE);
            return false;
        }
        if (h.type & PX_FRAME_REGION) {
            if (!c->pend) {
                px_posix_logf(p, PX_LOG_ERROR,
                              "connection %llu: a frame announces a shared region but no "
                              "region frame came before it; closing the connection",
                              (unsigned long long)c->id);
                conn_fail(c, PMIX_ERR_UNPACK_FAILURE);
                return false;
            }
            c->rbuf[off + 7] &= (uint8_t) ~(PX_FRAME_REGION >> 8);
            bool reached;
            rc = px_posix_deliver_region(c, c->rbuf + off, total, &reached);
            if (rc != PMIX_SUCCESS && !reached) {
                px_posix_logf(p, PX_LOG_ERROR,
                              "connection %llu: cannot map the shared region that came with a "
                              "frame (not a memfd sealed against shrinking, shorter than "
                              "announced, an unknown slab, or no memory); closing the connection",
                              (unsigned long long)c->id);
                conn_fail(c, rc); /* the engine must hear of it */
                return false;
            }
        } else {
            rc = c->sink->deliver(c->sctx, c->id, c->rbuf + off, total);
        }
        if (c->closed)
            return false; /* the engine closed it from inside deliver */
        if (rc != PMIX_SUCCESS) {
            /* The engine already forgot the connection. */
            px_posix_logf(p, PX_LOG_DEBUG, "connection %llu: refused by the engine (%d)",
                          (unsigned long long)c->id, (int)rc);
            conn_release(c);
            return false;
        }
        off += total;
    }
    if (off > 0) {
        memmove(c->rbuf, c->rbuf + off, c->rlen - off);
        c->rlen -= off;
        c->rpos += off;
    }
    /* Every frame that starts where the oldest fd came has been read, and
     * none took it: it belongs to no frame. */
    if (c->nfds > 0 && c->fds[0].to <= c->rpos) {
        px_posix_logf(p, PX_LOG_ERROR,
                      "connection %llu: peer passed a file descriptor that no frame announced; "
                      "closing the connection",
                      (unsigned long long)c->id);
        conn_fail(c, PMIX_ERR_UNPACK_FAILURE);
        return false;
    }
    return true;
}

/* Make room for the next read. Returns false on allocation failure. */
static bool rbuf_reserve(px_conn *c)
{
    size_t want = c->rneed > RBUF_MIN ? c->rneed : RBUF_MIN;
    if (c->rcap > RBUF_SHRINK && c->rlen <= RBUF_MIN && c->rneed <= RBUF_MIN) {
        /* Shrink after a large frame, into a new block: a realloc in place
         * would free only the tail, a hole too small for the next large
         * frame, and 64 clients' commits of 64 KiB left 3 MB of such holes
         * resident in the server. A whole freed block is reused. */
        uint8_t *nb = malloc(RBUF_MIN);
        if (nb == NULL)
            return true; /* keep the large one */
        memcpy(nb, c->rbuf, c->rlen);
        free(c->rbuf);
        c->rbuf = nb;
        c->rcap = RBUF_MIN;
        return true;
    }
    if (c->rcap >= want)
        return true;
    uint8_t *nb = realloc(c->rbuf, want);
    if (nb == NULL)
        return c->rcap > c->rlen; /* keep going with what we have */
    c->rbuf = nb;
    c->rcap = want;
    return true;
}

/* Keep the fds that came with a read of the stream bytes [from, to)
 * (SCM_RIGHTS). False if the peer broke the protocol (they are closed):
 * any fd from an accepted peer, more than PX_MAX_PENDING_FDS waiting,
 * or several fds in one message
 * (each frame passes at most one, and one read never joins two messages
 * that carry fds, so a read that says MSG_CTRUNC yet brought some had
 * more than fit). An fd the kernel could not give us (at the open-file
 * limit it installs none and says MSG_CTRUNC) is kept as -1: the frame
 * that wanted it says what that costs. */
static bool take_fds(px_conn *c, struct msghdr *msg, uint64_t from, uint64_t to)
{
    bool ok = true;
    int got = 0;
    int cap = c->accepted ? 0 : PX_MAX_PENDING_FDS;

    for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm != NULL; cm = CMSG_NXTHDR(msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
            got++;
            if (ok && c->nfds < cap) {
                c->fds[c->nfds].fd = fd;
                c->fds[c->nfds].from = from;
                c->fds[c->nfds].to = to;
                c->nfds++;
            } else {
                close(fd);
                ok = false;
            }
        }
    }
    if (msg->msg_flags & MSG_CTRUNC) {
        if (got > 0 || c->nfds >= cap)
            return false;
        c->fds[c->nfds].fd = -1;
        c->fds[c->nfds].from = from;
        c->fds[c->nfds].to = to;
        c->nfds++;
    }
    return ok;
}

static void conn_read(px_conn *c)
{
    px_posix *p = c->p;
    if (c->werr != PMIX_SUCCESS) {
        conn_fail(c, c->werr);
        return;
    }
    for (int i = 0; i < READS_PER_CALLBACK; i++) {
        if (!rbuf_reserve(c)) {
            px_posix_logf(p, PX_LOG_ERROR,
                          "connection %llu: out of memory for a frame of %zu bytes; closing it",
                          (unsigned long long)c->id, c->rneed);
            conn_fail(c, PMIX_ERR_NOMEM);
            return;
        }
        /* recvmsg, never recv: file descriptors passed with a frame would
         * otherwise be dropped by the kernel */
        struct iovec iov = {c->rbuf + c->rlen, c->rcap - c->rlen};
        union {
            struct cmsghdr hdr;
            char buf[CMSG_SPACE(4 * sizeof(int))];
        } ctl;
        struct msghdr msg = {0};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctl.buf;
        msg.msg_controllen = sizeof(ctl.buf);
        ssize_t n = recvmsg(c->fd, &msg, MSG_CMSG_CLOEXEC);
        if (n > 0 && !take_fds(c, &msg, c->rpos + c->rlen, c->rpos + c->rlen + (size_t)n)) {
            px_posix_logf(p, PX_LOG_ERROR,
                          c->accepted ? "connection %llu: peer passed a file descriptor (clients "
                                        "pass none); closing the connection"
                                      : "connection %llu: peer passed more file descriptors than "
                                        "frames announce; closing the connection",
                          (unsigned long long)c->id);
            conn_fail(c, PMIX_ERR_UNPACK_FAILURE);
            return;
        }
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* drained: a large frame's buffer goes back now, so that a
                 * server does not hold one per client until their next
                 * message (64 clients x a 64 KiB commit = 4 MiB) */
                (void)rbuf_reserve(c);
                return;
            }
            px_posix_logf(p, PX_LOG_DEBUG, "connection %llu: read failed: %s",
                          (unsigned long long)c->id, strerror(errno));
            conn_fail(c, PMIX_ERR_LOST_CONNECTION);
            return;
        }
        if (n == 0) {
            conn_fail(c, PMIX_ERR_LOST_CONNECTION);
            return;
        }
        bool drained = (size_t)n < iov.iov_len;
        c->rlen += (size_t)n;
        if (!deliver_frames(c))
            return;
        if (drained) {
            /* A short read emptied the socket: no recvmsg just to hear
             * EAGAIN. Anything that arrives later wakes the (level-
             * triggered) read event again. */
            (void)rbuf_reserve(c);
            return;
        }
    }
}

static void conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
    px_conn *c = arg;
    px_posix *p = c->p;
    pthread_mutex_lock(&p->lock);
    if (!c->closed)
        conn_read(c);
    pthread_mutex_unlock(&p->lock);
}

/* ---- listening ---- */

static void listener_retry_cb(evutil_socket_t fd, short what, void *arg)
{
    px_listener *l = arg;
    pthread_mutex_lock(&l->p->lock);
    if (!l->paused)
        event_add(l->ev, NULL);
    pthread_mutex_unlock(&l->p->lock);
}

/* The handshake deadline of an accepted connection. */
static void handshake_cb(evutil_socket_t fd, short what, void *arg)
{
    px_conn *c = arg;
    px_posix *p = c->p;
    pthread_mutex_lock(&p->lock);
    if (!c->closed && c->pending) {
        px_posix_logf(p, PX_LOG_WARN,
                      "connection %llu (pid %u) did not complete its handshake within %g s; "
                      "closing it",
                      (unsigned long long)c->id, c->pid, p->lim.handshake_s);
        conn_fail(c, PMIX_ERR_TIMEOUT);
    }
    pthread_mutex_unlock(&p->lock);
}

/* Hold accepted connection `c` to the limits of a connection whose
 * handshake is not done. False if its timer cannot be had. */
static bool conn_hold(px_conn *c, uint32_t pid)
{
    px_posix *p = c->p;

    c->accepted = true;
    c->pid = pid;
    c->pending = true;
    p->npending++;
    if (p->lim.handshake_s > 0) {
        c->hsev = evtimer_new(p->base, handshake_cb, c);
        if (c->hsev == NULL)
            return false;
        atomic_fetch_add(&c->refs, 1); /* its finalizer too */
        double s = p->lim.handshake_s;
        struct timeval tv = {(time_t)s, (suseconds_t)((s - (double)(time_t)s) * 1e6)};
        evtimer_add(c->hsev, &tv);
    }
    return true;
}

void px_posix_conn_accepted(void *pctx, uint64_t id)
{
    px_posix *p = pctx;
    pthread_mutex_lock(&p->lock);
    px_conn *c = conn_find(p, id);
    /* the timer stays: it finds the connection no longer pending */
    if (c != NULL && !c->closed)
        pending_end(c);
    pthread_mutex_unlock(&p->lock);
}

uint32_t px_posix_peer_pid(void *pctx, uint64_t id)
{
    px_posix *p = pctx;
    pthread_mutex_lock(&p->lock);
    px_conn *c = conn_find(p, id);
    uint32_t pid = c != NULL && !c->closed ? c->pid : 0;
    pthread_mutex_unlock(&p->lock);
    return pid;
}

static void accept_cb(evutil_socket_t lfd, short what, void *arg)
{
    px_listener *l = arg;
    px_posix *p = l->p;
    pthread_mutex_lock(&p->lock);
    for (int i = 0; i < ACCEPTS_PER_CALLBACK; i++) {
        if (p->npending >= p->lim.max_pending) {
            /* Level-triggered: out until a handshake ends (pending_end). */
            if (!l->paused)
                px_posix_logf(p, PX_LOG_WARN,
                              "%zu connections on %s have not completed their handshake; the "
                              "next is accepted when one of them does, or closes",
                              p->npending, l->path);
            l->paused = true;
            event_del(l->ev);
            break;
        }
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            px_posix_logf(p, PX_LOG_ERROR,
                          "cannot accept a connection on %s: %s; retrying in 100 ms (raise the "
                          "open-file limit with ulimit -n if this persists)",
                          l->path, strerror(errno));
            /* Level-triggered: pause instead of spinning. */
            event_del(l->ev);
            struct timeval tv = {0, 100000};
            evtimer_add(l->retry_ev, &tv);
            break;
        }
        struct ucred cr;
        socklen_t crlen = sizeof cr;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0) {
            px_posix_logf(p, PX_LOG_ERROR,
                          "cannot read the credentials of a new connection on %s: %s; "
                          "refusing it",
                          l->path, strerror(errno));
            close(fd);
            continue;
        }
        uint64_t id = p->next_id++;
        px_conn *c = conn_new(p, fd, id, l->sink, l->sctx);
        if (c == NULL) {
            px_posix_logf(p, PX_LOG_ERROR, "out of memory accepting a connection on %s", l->path);
            continue;
        }
        if (!conn_hold(c, (uint32_t)cr.pid)) {
            px_posix_logf(p, PX_LOG_ERROR, "out of memory accepting a connection on %s", l->path);
            conn_release(c);
            continue;
        }
        pmix_status_t rc = PMIX_SUCCESS;
        if (l->sink->opened != NULL)
            rc = l->sink->opened(l->sctx, id, (uint32_t)cr.uid, (uint32_t)cr.gid);
        if (c->closed)
            continue;
        if (rc != PMIX_SUCCESS) {
            conn_release(c);
            continue;
        }
        event_add(c->rev, NULL);
    }
    pthread_mutex_unlock(&p->lock);
}

/* Is something listening at `path`? A refused connect means a stale file. */
static bool socket_alive(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    int rc;
    do
        rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    while (rc != 0 && errno == EINTR);
    bool alive = rc == 0 || errno == EAGAIN;
    close(fd);
    return alive;
}

/* Check (or create) the rendezvous directory. */
static pmix_status_t check_dir(const char *dir, bool *created, char *errbuf, size_t errlen)
{
    struct stat st;
    *created = false;
    if (lstat(dir, &st) != 0) {
        if (errno != ENOENT) {
            snprintf(errbuf, errlen, "cannot examine directory %s: %s", dir, strerror(errno));
            return PMIX_ERR_NO_PERMISSIONS;
        }
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            snprintf(errbuf, errlen,
                     "cannot create directory %s: %s (does its parent exist and is it "
                     "writable?)",
                     dir, strerror(errno));
            return errno == EACCES ? PMIX_ERR_NO_PERMISSIONS : PMIX_ERROR;
        }
        *created = true;
        if (lstat(dir, &st) != 0) {
            snprintf(errbuf, errlen, "cannot examine directory %s: %s", dir, strerror(errno));
            return PMIX_ERROR;
        }
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(errbuf, errlen, "%s is not a directory (a symbolic link is not accepted)", dir);
        return PMIX_ERR_BAD_PARAM;
    }
    if (st.st_uid != geteuid()) {
        snprintf(errbuf, errlen,
                 "directory %s belongs to uid %u, not to you (uid %u); use a directory of "
                 "your own",
                 dir, (unsigned)st.st_uid, (unsigned)geteuid());
        return PMIX_ERR_NO_PERMISSIONS;
    }
    if ((st.st_mode & 077) != 0) {
        snprintf(errbuf, errlen,
                 "directory %s has mode %04o; it must be private (chmod 700 %s) because "
                 "anyone who can reach the socket can talk to the server",
                 dir, (unsigned)(st.st_mode & 07777), dir);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    return PMIX_SUCCESS;
}

pmix_status_t px_posix_listen(px_posix *p, const char *dir, const px_sink *sink, void *sctx,
                              char **uri, char *errbuf, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    px_listener *l = NULL;
    char *path = NULL;
    bool created = false;
    int fd = -1;
    pmix_status_t rc;

    if (p == NULL || dir == NULL || *dir == '\0' || sink == NULL || uri == NULL) {
        snprintf(errbuf, errlen, "px_posix_listen: missing argument");
        return PMIX_ERR_BAD_PARAM;
    }
    *uri = NULL;
    size_t dlen = strlen(dir);
    while (dlen > 1 && dir[dlen - 1] == '/')
        dlen--;
    if (dlen + 1 + sizeof SOCK_NAME > sizeof sa.sun_path) {
        snprintf(errbuf, errlen,
                 "directory %s is too long for a Unix socket path (at most %zu characters); "
                 "use a shorter TMPDIR",
                 dir, sizeof sa.sun_path - 1 - sizeof SOCK_NAME);
        return PMIX_ERR_BAD_PARAM;
    }
    rc = check_dir(dir, &created, errbuf, errlen);
    if (rc != PMIX_SUCCESS)
        return rc;

    path = malloc(dlen + 1 + sizeof SOCK_NAME);
    l = calloc(1, sizeof *l);
    *uri = malloc(sizeof URI_PREFIX + dlen + 1 + sizeof SOCK_NAME);
    if (path == NULL || l == NULL || *uri == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        rc = PMIX_ERR_NOMEM;
        goto fail;
    }
    snprintf(path, dlen + 1 + sizeof SOCK_NAME, "%.*s/%s", (int)dlen, dir, SOCK_NAME);
    memcpy(sa.sun_path, path, strlen(path) + 1);

    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode) || socket_alive(path)) {
            snprintf(errbuf, errlen,
                     "%s already exists%s; is another server running in this directory?", path,
                     S_ISSOCK(st.st_mode) ? " and a server answers there" : " (not a socket)");
            rc = PMIX_ERR_EXISTS;
            goto fail;
        }
        unlink(path); /* stale socket left by a server that died */
    }

    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(errbuf, errlen, "cannot create a Unix socket: %s", strerror(errno));
        rc = PMIX_ERROR;
        goto fail;
    }
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(errbuf, errlen, "cannot bind a socket at %s: %s", path, strerror(errno));
        rc = errno == EACCES ? PMIX_ERR_NO_PERMISSIONS : PMIX_ERROR;
        goto fail;
    }
    if (lstat(path, &st) != 0) {
        snprintf(errbuf, errlen, "socket %s vanished after bind: %s", path, strerror(errno));
        rc = PMIX_ERROR;
        goto fail_bound;
    }
    if (listen(fd, SOMAXCONN) != 0) {
        snprintf(errbuf, errlen, "cannot listen on %s: %s", path, strerror(errno));
        rc = PMIX_ERROR;
        goto fail_bound;
    }

    l->p = p;
    l->fd = fd;
    l->sink = sink;
    l->sctx = sctx;
    l->path = path;
    l->ino = (uint64_t)st.st_ino;
    l->dev = (uint64_t)st.st_dev;
    if (created) {
        l->dir = strndup(dir, dlen);
        if (l->dir == NULL) {
            snprintf(errbuf, errlen, "out of memory");
            rc = PMIX_ERR_NOMEM;
            goto fail_bound;
        }
    }
    l->ev = event_new(p->base, fd, EV_READ | EV_PERSIST, accept_cb, l);
    l->retry_ev = evtimer_new(p->base, listener_retry_cb, l);
    if (l->ev == NULL || l->retry_ev == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        rc = PMIX_ERR_NOMEM;
        goto fail_bound;
    }
    snprintf(*uri, sizeof URI_PREFIX + dlen + 1 + sizeof SOCK_NAME, "%s%s", URI_PREFIX, path);

    pthread_mutex_lock(&p->lock);
    l->next = p->listeners;
    p->listeners = l;
    event_add(l->ev, NULL);
    pthread_mutex_unlock(&p->lock);
    return PMIX_SUCCESS;

fail_bound:
    unlink(path);
fail:
    if (fd >= 0)
        close(fd);
    if (l != NULL) {
        if (l->ev != NULL)
            event_free(l->ev);
        if (l->retry_ev != NULL)
            event_free(l->retry_ev);
        free(l->dir);
        free(l);
    }
    if (created)
        rmdir(dir);
    free(path);
    free(*uri);
    *uri = NULL;
    return rc;
}

/* ---- connecting ---- */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

pmix_status_t px_posix_connect(px_posix *p, const char *uri, double timeout, const px_sink *sink,
                               void *sctx, char *errbuf, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (p == NULL || sink == NULL) {
        snprintf(errbuf, errlen, "px_posix_connect: missing argument");
        return PMIX_ERR_BAD_PARAM;
    }
    if (uri == NULL || strncmp(uri, URI_PREFIX, strlen(URI_PREFIX)) != 0 ||
        uri[strlen(URI_PREFIX)] == '\0') {
        snprintf(errbuf, errlen, "server URI \"%s\" is not of the form unix:<path>",
                 uri != NULL ? uri : "(null)");
        return PMIX_ERR_BAD_PARAM;
    }
    const char *path = uri + strlen(URI_PREFIX);
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(errbuf, errlen, "socket path %s is too long (at most %zu characters)", path,
                 sizeof sa.sun_path - 1);
        return PMIX_ERR_BAD_PARAM;
    }
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if (!(timeout > 0.0))
        timeout = 10.0;

    pthread_mutex_lock(&p->lock);
    bool busy = conn_find(p, PX_CONN_SERVER) != NULL;
    pthread_mutex_unlock(&p->lock);
    if (busy) {
        snprintf(errbuf, errlen, "already connected to a server");
        return PMIX_ERR_BAD_PARAM;
    }

    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(errbuf, errlen, "cannot create a Unix socket: %s", strerror(errno));
        return PMIX_ERR_UNREACH;
    }
    double deadline = mono_now() + timeout;
    long backoff = 1;
    for (;;) {
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
            break;
        int err = errno;
        if (err == EINTR)
            continue;
        if (err == EINPROGRESS) {
            /* Not expected for Unix sockets, but allowed: wait for it. */
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            double left = deadline - mono_now();
            int n = poll(&pfd, 1, left > 0 ? (int)(left * 1000) + 1 : 0);
            socklen_t elen = sizeof err;
            if (n > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err == 0)
                break;
            if (n == 0)
                err = ETIMEDOUT;
        } else if (err == EAGAIN && mono_now() < deadline) {
            /* The server's backlog is full: try again shortly. */
            sleep_ms(backoff);
            if (backoff < 50)
                backoff *= 2;
            continue;
        }
        close(fd);
        if (err == ENOENT || err == ECONNREFUSED)
            snprintf(errbuf, errlen,
                     "no PMIx server listens at %s (%s); was this process started by a PMIx "
                     "launcher, and is that launcher still running?",
                     path, strerror(err));
        else
            snprintf(errbuf, errlen, "cannot connect to the PMIx server at %s: %s", path,
                     strerror(err == EAGAIN ? ETIMEDOUT : err));
        return PMIX_ERR_UNREACH;
    }

    /* Who the server is: px_posix_bound_to() asks whether its death ends
     * this process (then sleeps on the fence page need no deadline). */
    struct ucred cr;
    socklen_t crlen = sizeof cr;
    pid_t server = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == 0 ? cr.pid : 0;

    pthread_mutex_lock(&p->lock);
    px_conn *c =
        conn_find(p, PX_CONN_SERVER) == NULL ? conn_new(p, fd, PX_CONN_SERVER, sink, sctx) : NULL;
    if (c != NULL)
        p->server_pid = server;
    if (c == NULL) {
        pthread_mutex_unlock(&p->lock);
        snprintf(errbuf, errlen, "out of memory, or already connected to a server");
        return PMIX_ERR_NOMEM;
    }
    event_add(c->rev, NULL);
    pthread_mutex_unlock(&p->lock);
    return PMIX_SUCCESS;
}

/* ---- destroy ---- */

void px_posix_conns_destroy(px_posix *p)
{
    for (size_t b = 0; b < p->nbuckets; b++) {
        while (p->buckets[b] != NULL) {
            px_conn *c = p->buckets[b];
            p->buckets[b] = c->hnext;
            /* The loop is stopped: nothing runs, plain frees are safe. */
            wq_free(c);
            fds_close(c);
            px_posix_region_conn_gone(c);
            event_free(c->rev);
            event_free(c->wev);
            if (c->hsev != NULL)
                event_free(c->hsev);
            close(c->fd);
            free(c->rbuf);
            free(c);
        }
    }
    p->nconns = 0;
    p->npending = 0;
    while (p->listeners != NULL) {
        px_listener *l = p->listeners;
        p->listeners = l->next;
        event_free(l->ev);
        event_free(l->retry_ev);
        close(l->fd);
        struct stat st;
        if (lstat(l->path, &st) == 0 && (uint64_t)st.st_ino == l->ino &&
            (uint64_t)st.st_dev == l->dev)
            unlink(l->path);
        if (l->dir != NULL)
            rmdir(l->dir); /* only if empty; the host's files stay */
        free(l->path);
        free(l->dir);
        free(l);
    }
}
