/*
 * pmixrun_iof.c - forwarding the ranks' output.
 *
 * Each rank's stdout and stderr are pipes that pmixrun reads (non-blocking)
 * and copies to its own stdout and stderr a whole line at a time, so lines
 * of different ranks never mix. With --tag-output every line starts with
 * "[<rank>] " (on both streams; "[s<N>:<rank>] " for a rank of the Nth
 * spawned job). A line longer than the buffer limit is
 * passed on in pieces (tagged once, where it starts); a last line without
 * a newline is passed on at EOF, and gets a newline only when tagging.
 *
 * The pipes are watches on the job's loop (iof_stream_watch): a stream is
 * read as its output comes, on the main thread, between the server's
 * work. Writing to our own stdout and stderr blocks (they are whatever we
 * were given), and so does the whole loop while they do not drain.
 *
 * Each piece is also offered to the server (px_server_iof_deliver), untagged,
 * for the tools that pulled the rank's output (PMIx_IOF_pull). In pmixd,
 * once pmixrun asked (a tool pulled there), it goes to pmixrun too
 * (iof_relay, PD_IOF), which offers it to its own server.
 *
 * pmixrun's stdin (--stdin) is read one chunk at a time, and a chunk goes
 * to every target rank's pipe before the next is read: iof_stdin_arm says
 * before each turn of the loop which of the two to wait for.
 *
 * A job spawned with PMIX_STDIN_TGT reads tools' input instead
 * (PMIx_IOF_push, iof_push_up): each push is queued and becomes the chunk
 * in turn, for the ranks it targets; its pusher is answered once every
 * one of them has it (or is gone), so a pusher goes at the readers' pace.
 * A push of the end of input closes the targets' pipes (they read EOF)
 * once what came before it is delivered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pmixrun.h"
#include "tcplink.h"

#define IOF_CHUNK 65536
#define IOF_MAX_LINE (1 << 20) /* pass a longer line on in pieces */

void iof_stream_init(iof_stream *s, int fd, iof_out *out)
{
    s->fd = fd;
    s->out = out;
    s->file = NULL;
    s->buf = NULL;
    s->len = s->cap = 0;
    s->line_start = true;
    s->w = NULL;
    s->rank = 0;
    s->tag = false;
    s->srv = NULL;
    s->plat = NULL;
    s->relay = NULL;
    s->hold = NULL;
}

void iof_hold_drop(iof_hold *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->v[i].p);
    free(h->v);
    h->v = NULL;
    h->n = 0;
    h->on = false;
}

void iof_hold_release(iof_hold *h, px_server *srv, px_posix *p)
{
    px_posix_ops()->lock(p);
    for (size_t i = 0; srv != NULL && i < h->n; i++)
        (void)px_server_iof_deliver(srv, &h->v[i].src, h->v[i].channel, h->v[i].p, h->v[i].len);
    px_posix_ops()->unlock(p);
    iof_hold_drop(h);
}

/* Keep a piece in `h`; false if memory ran out (it is offered then). */
static bool hold_piece(iof_hold *h, const iof_stream *s, const char *p, size_t len)
{
    iof_held *v = realloc(h->v, (h->n + 1) * sizeof *v);
    char *copy = malloc(len);
    if (v != NULL)
        h->v = v;
    if (v == NULL || copy == NULL) {
        free(copy);
        return false;
    }
    memcpy(copy, p, len);
    h->v[h->n++] = (iof_held){s->src, s->channel, copy, len};
    return true;
}

char *iof_piece_deliver(struct tl_reader *r, px_server *srv, px_posix *p, uint32_t *chan)
{
    char *nsp = tl_get_str(r);
    uint32_t rank = tl_get_u32(r), channel = tl_get_u32(r);
    size_t len = 0;
    const void *data = tl_get_bytes(r, &len);

    if (r->bad || nsp == NULL || data == NULL || srv == NULL ||
        (channel != PMIX_FWD_STDOUT_CHANNEL && channel != PMIX_FWD_STDERR_CHANNEL &&
         channel != PMIX_FWD_STDDIAG_CHANNEL)) {
        free(nsp);
        return NULL;
    }
    pmix_proc_t src;
    PMIx_Load_procid(&src, nsp, rank);
    px_posix_ops()->lock(p);
    (void)px_server_iof_deliver(srv, &src, (pmix_iof_channel_t)channel, data, len);
    px_posix_ops()->unlock(p);
    if (chan != NULL)
        *chan = channel;
    return nsp;
}

void iof_stream_deliver(iof_stream *s, px_server *srv, px_posix *p, const char *nspace, int rank,
                        pmix_iof_channel_t channel)
{
    s->srv = srv;
    s->plat = p;
    PMIX_LOAD_PROCID(&s->src, nspace, (pmix_rank_t)rank);
    s->channel = channel;
}

static void stream_ready(void *arg, unsigned what)
{
    iof_stream *s = arg;
    iof_stream_read(s, s->rank, s->tag); /* at EOF the stream closes, and its watch goes */
}

int iof_stream_watch(iof_stream *s, px_posix *p, int rank, bool tag)
{
    s->rank = rank;
    s->tag = tag;
    s->w = px_posix_watch_create(p, s->fd, PX_POSIX_READ, stream_ready, s);
    return s->w != NULL ? 0 : -1;
}

static void out_write(iof_out *o, struct iovec *iov, int n)
{
    if (o == NULL || o->broken)
        return;
    while (n > 0) {
        ssize_t w = writev(o->fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                /* Our output is a non-blocking file: wait until it drains. */
                usleep(1000);
                continue;
            }
            o->broken = true; /* EPIPE and friends: nobody reads us */
            return;
        }
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
}

/* Pass on `len` bytes of one line (the newline included if `complete`). */
static void emit(iof_stream *s, const char *p, size_t len, int rank, bool tag, bool complete)
{
    char prefix[32];
    struct iovec iov[2];
    int n = 0;
    if (len == 0)
        return;
    if (tag && s->line_start) {
        int pl = s->job > 0 ? snprintf(prefix, sizeof prefix, "[s%d:%d] ", s->job, rank)
                            : snprintf(prefix, sizeof prefix, "[%d] ", rank);
        iov[n++] = (struct iovec){prefix, (size_t)pl};
    }
    iov[n++] = (struct iovec){(void *)p, len};
    if (s->file != NULL) {
        struct iovec raw = {(void *)p, len};
        out_write(s->file, &raw, 1);
    }
    out_write(s->out, iov, n);
    s->line_start = complete;
    if (s->srv != NULL) {
        if (s->hold == NULL || !s->hold->on || !hold_piece(s->hold, s, p, len)) {
            px_posix_ops()->lock(s->plat);
            (void)px_server_iof_deliver(s->srv, &s->src, s->channel, p, len);
            px_posix_ops()->unlock(s->plat);
        }
        if (s->relay != NULL && s->relay->on)
            s->relay->send(s->relay->ctx, &s->src, s->channel, p, len);
    }
}

static void forward_lines(iof_stream *s, int rank, bool tag)
{
    size_t off = 0;
    for (;;) {
        char *nl = memchr(s->buf + off, '\n', s->len - off);
        if (nl == NULL)
            break;
        size_t l = (size_t)(nl - (s->buf + off)) + 1;
        emit(s, s->buf + off, l, rank, tag, true);
        off += l;
    }
    if (s->len - off >= IOF_MAX_LINE) {
        emit(s, s->buf + off, s->len - off, rank, tag, false);
        off = s->len;
    }
    memmove(s->buf, s->buf + off, s->len - off);
    s->len -= off;
}

bool iof_stream_read(iof_stream *s, int rank, bool tag)
{
    if (s->fd < 0)
        return false;
    for (int i = 0; i < 16; i++) {
        if (s->cap - s->len < IOF_CHUNK) {
            char *nb = realloc(s->buf, s->len + IOF_CHUNK);
            if (nb == NULL) {
                /* Keep going with what we have: pass the partial line on. */
                emit(s, s->buf, s->len, rank, tag, false);
                s->len = 0;
                if (s->cap == 0)
                    return true;
            } else {
                s->buf = nb;
                s->cap = s->len + IOF_CHUNK;
            }
        }
        ssize_t n = read(s->fd, s->buf + s->len, s->cap - s->len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return true;
            iof_stream_close(s, rank, tag);
            return false;
        }
        if (n == 0) {
            iof_stream_close(s, rank, tag);
            return false;
        }
        s->len += (size_t)n;
        forward_lines(s, rank, tag);
    }
    return true;
}

void iof_stream_close(iof_stream *s, int rank, bool tag)
{
    if (s->len > 0) {
        emit(s, s->buf, s->len, rank, tag, false);
        if (tag) {
            struct iovec nl = {"\n", 1};
            out_write(s->out, &nl, 1);
        }
    }
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
    px_posix_watch_destroy(s->w); /* before its descriptor closes */
    s->w = NULL;
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

/* mkdir -p, each new directory 0755 as Open MPI makes them. */
static int make_dirs(char *path)
{
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        int rc = mkdir(path, 0755);
        int err = errno;
        *p = c;
        if (rc != 0 && err != EEXIST)
            return -1;
        if (c == '\0')
            return 0;
    }
}

int iof_open_files(job *j, rank_proc *r)
{
    int digits = 1;
    for (int n = j->nprocs / 10; n > 0; n /= 10)
        digits++;
    char *dir = NULL;
    if (asprintf(&dir, "%s/rank.%0*d", j->output_dir, digits, r->rank) < 0)
        return -1;
    const char *names[2] = {"stdout", "stderr"};
    int rc = make_dirs(dir);
    for (int k = 0; rc == 0 && k < (j->merge_stderr ? 1 : 2); k++) {
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, names[k]) < 0) {
            rc = -1;
            break;
        }
        r->files[k] = (iof_out){.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
        free(path);
        if (r->files[k].fd < 0)
            rc = -1;
    }
    if (rc != 0) {
        fprintf(stderr, "pmixrun: --output-filename: cannot write %s/%s: %s\n", dir,
                r->files[0].fd < 0 ? names[0] : names[1], strerror(errno));
        iof_close_files(r);
    }
    free(dir);
    return rc;
}

void iof_close_files(rank_proc *r)
{
    for (int k = 0; k < 2; k++) {
        if (r->files[k].fd >= 0)
            close(r->files[k].fd);
        r->files[k].fd = -1;
    }
}

/* ---- standard input ---- */

typedef struct iof_push {
    struct iof_push *next;
    pmix_proc_t *targets;
    size_t ntargets;
    char *data;
    size_t len;
    bool eof;
    pmix_op_cbfunc_t cb;
    void *cbdata;
} iof_push;

static void pump(job *j);
static void close_one(job *j);

static void drop_target(rank_proc *r)
{
    px_posix_watch_destroy(r->in_w);
    r->in_w = NULL;
    close(r->in_fd);
    r->in_fd = -1;
}

/* Everyone has the chunk (or is gone): the next one may be read; and when
 * every target has gone, stdin is done. */
static void stdin_settle(job *j)
{
    bool pending = false, any = false;
    for (int i = 0; i < j->nstarted; i++) {
        rank_proc *r = &j->ranks[i];
        if (r->in_fd >= 0) {
            any = true;
            pending |= r->in_off < j->in_len;
        }
    }
    if (!pending)
        j->in_len = 0;
    if (!pending && j->in_cb != NULL) {
        pmix_op_cbfunc_t cb = j->in_cb;
        j->in_cb = NULL;
        cb(PMIX_SUCCESS, j->in_cbdata); /* the pusher may push the next */
    }
    if (!any && j->nstarted == j->nprocs && j->in_open)
        close_one(j); /* every target has gone */
    else if (!pending)
        pump(j);
}

static void stdin_readable(void *arg, unsigned what)
{
    job *j = arg;
    if (j->in_len > 0 || !j->in_open)
        return;
    if (j->in_buf == NULL && (j->in_buf = malloc(IOF_CHUNK)) == NULL)
        return;
    ssize_t got = read(STDIN_FILENO, j->in_buf, IOF_CHUNK);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (got <= 0) { /* end of file, or a terminal we may not read */
        close_one(j);
        return;
    }
    j->in_len = (size_t)got;
    for (int i = 0; i < j->nstarted; i++)
        j->ranks[i].in_off = 0;
    stdin_settle(j); /* no target left: read on */
}

/* A target's pipe can take more: give every target what it still wants
 * of the chunk (the writes do not block). */
static void target_writable(void *arg, unsigned what)
{
    job *j = arg;
    for (int i = 0; i < j->nstarted; i++) {
        rank_proc *r = &j->ranks[i];
        if (r->in_fd < 0 || r->in_off >= j->in_len)
            continue;
        ssize_t w = write(r->in_fd, j->in_buf + r->in_off, j->in_len - r->in_off);
        if (w > 0)
            r->in_off += (size_t)w;
        else if (w < 0 && errno != EINTR && errno != EAGAIN)
            drop_target(r); /* EPIPE: it no longer reads */
    }
    stdin_settle(j);
}

int iof_stdin_watch(job *j)
{
    if (!j->in_open)
        return 0;
    j->in_w = px_posix_watch_create(j->plat, STDIN_FILENO, 0, stdin_readable, j);
    return j->in_w != NULL ? 0 : -1;
}

int iof_stdin_watch_rank(job *j, rank_proc *r)
{
    r->in_w = px_posix_watch_create(j->plat, r->in_fd, 0, target_writable, j);
    return r->in_w != NULL ? 0 : -1;
}

static void arm_one(job *j)
{
    if (!j->in_open)
        return; /* closed: no watch is left */
    if (j->in_w != NULL)
        px_posix_watch_set(j->in_w, j->in_open && j->in_len == 0 ? PX_POSIX_READ : 0);
    for (int i = 0; i < j->nstarted; i++) {
        rank_proc *r = &j->ranks[i];
        if (r->in_w != NULL)
            px_posix_watch_set(r->in_w, r->in_off < j->in_len ? PX_POSIX_WRITE : 0);
    }
}

void iof_stdin_arm(job *j)
{
    pump(j); /* what waited for the ranks to start */
    arm_one(j);
    for (job *c = j->children; c != NULL; c = c->next_child)
        arm_one(c);
}

static void close_one(job *j)
{
    j->in_open = false;
    j->in_len = 0;
    px_posix_watch_destroy(j->in_w);
    j->in_w = NULL;
    for (int i = 0; j->ranks != NULL && i < j->nstarted; i++)
        if (j->ranks[i].in_fd >= 0)
            drop_target(&j->ranks[i]);
    /* the pushers still waiting hear that nobody reads their input */
    if (j->in_cb != NULL) {
        pmix_op_cbfunc_t cb = j->in_cb;
        j->in_cb = NULL;
        cb(PMIX_ERR_NOT_FOUND, j->in_cbdata);
    }
    while (j->pushes != NULL) {
        iof_push *p = j->pushes;
        j->pushes = p->next;
        p->cb(p->eof ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, p->cbdata);
        free(p->targets);
        free(p->data);
        free(p);
    }
}

void iof_stdin_close(job *j)
{
    close_one(j);
    for (job *c = j->children; c != NULL; c = c->next_child)
        close_one(c);
}

static bool targeted(const iof_push *p, const job *j, int rank)
{
    for (size_t i = 0; i < p->ntargets; i++)
        if (PMIx_Check_nspace(p->targets[i].nspace, j->nspace) &&
            (p->targets[i].rank == PMIX_RANK_WILDCARD || p->targets[i].rank == (pmix_rank_t)rank))
            return true;
    return false;
}

/* Nothing is being written: the next push becomes the chunk (or, the end
 * of input, closes its targets' pipes). Not before every local rank has
 * been started (pmixd starts them once its peers joined). */
static void pump(job *j)
{
    while (j->in_len == 0 && j->in_cb == NULL && j->pushes != NULL && j->nstarted >= j->nlocal) {
        iof_push *p = j->pushes;
        bool any = false;
        j->pushes = p->next;
        for (int i = 0; i < j->nstarted; i++) {
            rank_proc *r = &j->ranks[i];
            bool to = r->in_fd >= 0 && targeted(p, j, r->rank);
            if (to && p->eof)
                drop_target(r); /* it reads end of file */
            any |= to;
            r->in_off = to ? 0 : p->len;
        }
        if (p->eof || !any) {
            p->cb(p->eof ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, p->cbdata);
            free(p->data);
        } else {
            free(j->in_buf);
            j->in_buf = p->data; /* the chunk, until every target has it */
            j->in_len = p->len;
            j->in_cb = p->cb;
            j->in_cbdata = p->cbdata;
        }
        free(p->targets);
        free(p);
    }
}

pmix_status_t iof_stdin_target(const pmix_info_t *in, int *to)
{
    pmix_rank_t r;

    if (in->value.type == PMIX_UINT32 || in->value.type == PMIX_PROC_RANK)
        r = in->value.type == PMIX_UINT32 ? in->value.data.uint32 : in->value.data.rank;
    else if (in->value.type == PMIX_PROC && in->value.data.proc != NULL)
        r = in->value.data.proc->rank;
    else
        return PMIX_ERR_BAD_PARAM;
    if (r != PMIX_RANK_WILDCARD && r > 65535)
        return PMIX_ERR_BAD_PARAM; /* no job has that rank */
    *to = r == PMIX_RANK_WILDCARD ? STDIN_ALL : (int)r;
    return PMIX_SUCCESS;
}

pmix_status_t iof_push_up(void *hctx, const pmix_proc_t *source, const pmix_proc_t targets[],
                          size_t ntargets, const pmix_info_t dirs[], size_t ndirs, const void *data,
                          size_t len, bool eof, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx, *t = NULL;

    (void)source;
    (void)dirs;
    (void)ndirs;
    for (job *c = j->children; c != NULL && t == NULL; c = c->next_child)
        if (PMIx_Check_nspace(targets[0].nspace, c->nspace))
            t = c;
    for (size_t i = 1; t != NULL && i < ntargets; i++)
        if (!PMIx_Check_nspace(targets[i].nspace, t->nspace))
            return PMIX_ERR_NOT_SUPPORTED; /* one job per push */
    if (t == NULL || !t->in_pushed)
        return PMIX_ERR_NOT_FOUND; /* its input is ours (--stdin) or /dev/null */
    return iof_push_queue(t, targets, ntargets, data, len, eof, cbfunc, cbdata);
}

pmix_status_t iof_push_queue(job *t, const pmix_proc_t targets[], size_t ntargets, const void *data,
                             size_t len, bool eof, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    iof_push *p, **tail;

    if (!t->in_open)
        return eof ? PMIX_OPERATION_SUCCEEDED : PMIX_ERR_NOT_FOUND; /* every reader gone */
    if ((p = calloc(1, sizeof(*p))) == NULL ||
        (p->targets = malloc(ntargets * sizeof(*targets))) == NULL ||
        (len > 0 && (p->data = malloc(len)) == NULL)) {
        if (p != NULL)
            free(p->targets);
        free(p);
        return PMIX_ERR_NOMEM;
    }
    memcpy(p->targets, targets, ntargets * sizeof(*targets));
    p->ntargets = ntargets;
    if (len > 0)
        memcpy(p->data, data, len);
    p->len = len;
    p->eof = eof;
    p->cb = cbfunc;
    p->cbdata = cbdata;
    for (tail = &t->pushes; *tail != NULL; tail = &(*tail)->next)
        ;
    *tail = p;
    pump(t);
    return PMIX_SUCCESS;
}
