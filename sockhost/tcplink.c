/*
 * tcplink.c - length-prefixed frames over TCP (see tcplink.h).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tcplink.h"

/* ---- payloads ---- */

static bool grow(uint8_t **data, size_t *cap, size_t need)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap : 256;
    while (ncap < need)
        ncap *= 2;
    uint8_t *n = realloc(*data, ncap);
    if (n == NULL)
        return false;
    *data = n;
    *cap = ncap;
    return true;
}

void tl_put_raw(tl_buf *b, const void *p, size_t n)
{
    if (b->failed || n == 0)
        return;
    if (!grow(&b->data, &b->cap, b->len + n)) {
        b->failed = true;
        return;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void tl_put_u8(tl_buf *b, uint8_t v)
{
    tl_put_raw(b, &v, 1);
}

void tl_put_u32(tl_buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    tl_put_raw(b, x, 4);
}

void tl_put_u64(tl_buf *b, uint64_t v)
{
    tl_put_u32(b, (uint32_t)v);
    tl_put_u32(b, (uint32_t)(v >> 32));
}

void tl_put_bytes(tl_buf *b, const void *p, size_t n)
{
    if (n > UINT32_MAX) {
        b->failed = true;
        return;
    }
    tl_put_u32(b, (uint32_t)n);
    tl_put_raw(b, p, n);
}

void tl_put_str(tl_buf *b, const char *s)
{
    tl_put_bytes(b, s, s != NULL ? strlen(s) : 0);
}

void tl_buf_free(tl_buf *b)
{
    free(b->data);
    *b = (tl_buf){0};
}

static const uint8_t *take(tl_reader *r, size_t n)
{
    if (r->bad || n > r->left) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    r->left -= n;
    return p;
}

uint8_t tl_get_u8(tl_reader *r)
{
    const uint8_t *p = take(r, 1);
    return p != NULL ? p[0] : 0;
}

uint32_t tl_get_u32(tl_reader *r)
{
    const uint8_t *p = take(r, 4);
    if (p == NULL)
        return 0;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t tl_get_u64(tl_reader *r)
{
    uint64_t lo = tl_get_u32(r);
    return lo | (uint64_t)tl_get_u32(r) << 32;
}

const void *tl_get_bytes(tl_reader *r, size_t *n)
{
    *n = tl_get_u32(r);
    const uint8_t *p = take(r, *n);
    if (p == NULL)
        *n = 0;
    return *n > 0 ? p : NULL;
}

char *tl_get_str(tl_reader *r)
{
    size_t n;
    const char *p = tl_get_bytes(r, &n);
    if (r->bad)
        return NULL;
    char *s = malloc(n + 1);
    if (s == NULL) {
        r->bad = true;
        return NULL;
    }
    if (n > 0)
        memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

/* ---- sockets ---- */

static int sockaddr_of(const char *addr, uint16_t port, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(port);
    if (inet_pton(AF_INET, addr, &sa->sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int tl_listen(const char *addr, uint16_t *port)
{
    struct sockaddr_in sa;
    if (sockaddr_of(addr, *port, &sa) != 0)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 64) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    *port = ntohs(sa.sin_port);
    return fd;
}

int tl_accept(int lfd)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

int tl_connect(const char *addr, uint16_t port, double seconds)
{
    struct sockaddr_in sa;
    if (sockaddr_of(addr, port, &sa) != 0)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    if (rc != 0 && errno == EINPROGRESS) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int err = 0;
        socklen_t el = sizeof err;
        rc = poll(&p, 1, (int)(seconds * 1000));
        if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0) {
            rc = 0;
        } else {
            errno = rc == 0 ? ETIMEDOUT : (err != 0 ? err : errno);
            rc = -1;
        }
    }
    if (rc != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* ---- links ---- */

void tl_link_init(tl_link *l, int fd)
{
    *l = (tl_link){.fd = fd};
    if (fd >= 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

void tl_link_close(tl_link *l)
{
    if (l->fd >= 0)
        close(l->fd);
    free(l->in);
    free(l->out);
    *l = (tl_link){.fd = -1};
}

bool tl_want_write(const tl_link *l)
{
    return l->fd >= 0 && l->outlen > l->outoff;
}

int tl_flush(tl_link *l)
{
    while (l->fd >= 0 && l->outlen > l->outoff) {
        ssize_t w = send(l->fd, l->out + l->outoff, l->outlen - l->outoff, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            return -1;
        }
        l->outoff += (size_t)w;
    }
    if (l->outoff == l->outlen)
        l->outoff = l->outlen = 0;
    return l->fd >= 0 ? 0 : -1;
}

int tl_send(tl_link *l, uint8_t type, const tl_buf *payload)
{
    int rc;

    if (l->fd < 0)
        return -1;
    if ((rc = tl_queue(l, type, payload)) != 0)
        return rc;
    return tl_flush(l) == 0 || errno == EPIPE || errno == ECONNRESET ? 0 : -1;
}

int tl_queue(tl_link *l, uint8_t type, const tl_buf *payload)
{
    size_t n = payload != NULL ? payload->len : 0;
    if (payload != NULL && payload->failed)
        return TL_ENOMEM;
    if (n + 1 > TL_FRAME_MAX)
        return TL_ETOOBIG;
    if (l->outoff > 0 && l->outoff == l->outlen)
        l->outoff = l->outlen = 0;
    if (!grow(&l->out, &l->outcap, l->outlen + 5 + n))
        return TL_ENOMEM;
    uint32_t len = (uint32_t)(n + 1);
    uint8_t *p = l->out + l->outlen;
    p[0] = (uint8_t)len;
    p[1] = (uint8_t)(len >> 8);
    p[2] = (uint8_t)(len >> 16);
    p[3] = (uint8_t)(len >> 24);
    p[4] = type;
    if (n > 0)
        memcpy(p + 5, payload->data, n);
    l->outlen += 5 + n;
    return 0;
}

int tl_link_adopt(tl_link *dst, tl_link *src)
{
    size_t mine = dst->outlen - dst->outoff, theirs = src->outlen - src->outoff;

    if (mine > 0 && theirs > 0) {
        if (!grow(&dst->out, &dst->outcap, dst->outlen + theirs))
            return -1;
        memcpy(dst->out + dst->outlen, src->out + src->outoff, theirs);
        dst->outlen += theirs;
    }
    if (mine == 0) { /* nothing of ours: take theirs as it is */
        free(dst->out);
        dst->out = src->out;
        dst->outoff = src->outoff;
        dst->outlen = src->outlen;
        dst->outcap = src->outcap;
    } else {
        free(src->out);
    }
    free(dst->in);
    dst->fd = src->fd; /* dst->frame_max stays */
    dst->in = src->in;
    dst->inlen = src->inlen;
    dst->incap = src->incap;
    *src = (tl_link){.fd = -1};
    return 0;
}

void tl_drain(tl_link *l, double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (tl_want_write(l)) {
        if (tl_flush(l) != 0)
            return;
        if (!tl_want_write(l))
            return;
        clock_gettime(CLOCK_MONOTONIC, &t);
        double left = seconds - ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9);
        if (left <= 0)
            return;
        struct pollfd p = {.fd = l->fd, .events = POLLOUT};
        poll(&p, 1, (int)(left * 1000) + 1);
    }
}

int tl_read(tl_link *l, tl_frame_cb cb, void *ctx)
{
    for (;;) {
        /* First the frames already buffered (a link moved from one owner
         * to another may hold some), then what the socket has. */
        size_t off = 0, need = 0;
        while (l->inlen - off >= 4) {
            const uint8_t *h = l->in + off;
            uint32_t len =
                (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
            if (len < 1 || len > (l->frame_max > 0 ? l->frame_max : TL_FRAME_MAX))
                return -1;
            if (l->inlen - off - 4 < len) {
                need = (size_t)len + 4;
                break;
            }
            int stop = cb(ctx, l, h[4], h + 5, len - 1);
            if (l->fd < 0)
                return -1;
            off += 4 + len;
            if (stop != 0) {
                memmove(l->in, l->in + off, l->inlen - off);
                l->inlen -= off;
                return 0;
            }
        }
        if (off > 0) {
            memmove(l->in, l->in + off, l->inlen - off);
            l->inlen -= off;
        }
        if (!grow(&l->in, &l->incap, (need > l->inlen ? need : l->inlen) + 65536))
            return -1;
        ssize_t r = recv(l->fd, l->in + l->inlen, l->incap - l->inlen, 0);
        if (r == 0)
            return -1;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        }
        l->inlen += (size_t)r;
    }
}

/* ---- choosing an address by interface or subnet ---- */

/* One entry of an if_include list, `len` bytes at p: a subnet (net, mask
 * set, 1) or an interface name (copied to name, 0); -1 malformed. */
static int if_entry(const char *p, size_t len, uint32_t *net, uint32_t *mask, char *name)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    char *slash = strchr(buf, '/');
    if (slash == NULL) {
        if (len >= IF_NAMESIZE)
            return -1;
        memcpy(name, buf, len + 1);
        return 0;
    }
    *slash = '\0';
    char *end;
    long bits = strtol(slash + 1, &end, 10);
    struct in_addr a;
    if (slash[1] == '\0' || *end != '\0' || bits < 0 || bits > 32 ||
        inet_pton(AF_INET, buf, &a) != 1)
        return -1;
    *mask = bits == 0 ? 0 : htonl(~0u << (32 - bits));
    *net = a.s_addr & *mask;
    return 1;
}

static int if_walk(const char *list, char *out, size_t len, char *err, size_t errlen, bool look)
{
    struct ifaddrs *all = NULL;
    int found = 0;
    if (list == NULL || *list == '\0') {
        snprintf(err, errlen, "an empty list");
        return -1;
    }
    if (look && getifaddrs(&all) != 0) {
        snprintf(err, errlen, "cannot read this host's interfaces: %s", strerror(errno));
        return -1;
    }
    for (const char *p = list; *p != '\0' && found == 0;) {
        size_t n = strcspn(p, ",");
        uint32_t net = 0, mask = 0;
        char name[IF_NAMESIZE];
        int kind = if_entry(p, n, &net, &mask, name);
        if (kind < 0) {
            snprintf(err, errlen, "'%.*s' is neither an interface name nor a subnet A.B.C.D/N",
                     (int)n, p);
            found = -1;
            break;
        }
        for (struct ifaddrs *i = all; i != NULL && found == 0; i = i->ifa_next) {
            if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
                continue;
            struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
            if (kind == 1 ? (a.s_addr & mask) == net : strcmp(i->ifa_name, name) == 0)
                found = inet_ntop(AF_INET, &a, out, (socklen_t)len) != NULL ? 1 : 0;
        }
        p += n + (p[n] == ',');
    }
    if (all != NULL)
        freeifaddrs(all);
    return found;
}

int tl_if_address(const char *list, char *out, size_t len, char *err, size_t errlen)
{
    int r = if_walk(list, out, len, err, errlen, true);
    if (r == 0)
        snprintf(err, errlen, "no IPv4 address of this host is on %s", list);
    return r;
}

int tl_if_check(const char *list, char *err, size_t errlen)
{
    char out[64];
    return if_walk(list, out, sizeof out, err, errlen, false) < 0 ? -1 : 0;
}
