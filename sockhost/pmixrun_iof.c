/*
 * pmixrun_iof.c - forwarding the ranks' output.
 *
 * Each rank's stdout and stderr are pipes that pmixrun reads (non-blocking)
 * and copies to its own stdout and stderr a whole line at a time, so lines
 * of different ranks never mix. With --tag-output every line starts with
 * "[<rank>] " (on both streams). A line longer than the buffer limit is
 * passed on in pieces (tagged once, where it starts); a last line without
 * a newline is passed on at EOF, and gets a newline only when tagging.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pmixrun.h"

#define IOF_CHUNK 65536
#define IOF_MAX_LINE (1 << 20) /* pass a longer line on in pieces */

void iof_stream_init(iof_stream *s, int fd, iof_out *out)
{
    s->fd = fd;
    s->out = out;
    s->buf = NULL;
    s->len = s->cap = 0;
    s->line_start = true;
}

static void out_write(iof_out *o, struct iovec *iov, int n)
{
    if (o->broken)
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
        int pl = snprintf(prefix, sizeof prefix, "[%d] ", rank);
        iov[n++] = (struct iovec){prefix, (size_t)pl};
    }
    iov[n++] = (struct iovec){(void *)p, len};
    out_write(s->out, iov, n);
    s->line_start = complete;
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
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}
