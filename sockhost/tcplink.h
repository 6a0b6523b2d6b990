/*
 * tcplink.h - length-prefixed frames over stream sockets, shared by
 * pmixrun and pmixd: the control connection between them (a socketpair)
 * and the TCP connections between daemons that carry collectives and
 * direct modex.
 *
 * A frame is a u32 length (of what follows, little-endian), a u8 type and
 * the payload. Payloads are built with tl_buf (little-endian integers;
 * strings and byte strings are a u32 length and the bytes) and read with
 * tl_reader, which checks every length against what is left and turns a
 * short or malformed payload into `bad` instead of reading past it.
 *
 * A tl_link is one non-blocking socket with an input buffer (bytes of an
 * unfinished frame) and an output queue: tl_send appends a frame and writes
 * what the socket takes at once; the owner's loop waits for the socket to
 * be writable while tl_want_write() and then calls tl_flush() (pmixd and
 * pmixrun --nodes: a watch on the job's loop). Nothing here blocks except
 * tl_connect and tl_drain (bounded). A link belongs to one thread.
 */
#ifndef TCPLINK_H
#define TCPLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TL_FRAME_MAX (1u << 30) /* bigger frames end the connection */

typedef struct tl_buf {
    uint8_t *data;
    size_t len, cap;
    bool failed; /* out of memory: sticky, checked by tl_send */
} tl_buf;

void tl_put_u8(tl_buf *b, uint8_t v);
void tl_put_u32(tl_buf *b, uint32_t v);
void tl_put_u64(tl_buf *b, uint64_t v);
void tl_put_raw(tl_buf *b, const void *p, size_t n);
void tl_put_bytes(tl_buf *b, const void *p, size_t n); /* u32 length + bytes */
void tl_put_str(tl_buf *b, const char *s);             /* NULL is sent as "" */
void tl_buf_free(tl_buf *b);

typedef struct tl_reader {
    const uint8_t *p;
    size_t left;
    bool bad; /* a read went past the end: every later read returns 0/NULL */
} tl_reader;

uint8_t tl_get_u8(tl_reader *r);
uint32_t tl_get_u32(tl_reader *r);
uint64_t tl_get_u64(tl_reader *r);
/* A view of a byte string inside the payload (NULL when bad or empty). */
const void *tl_get_bytes(tl_reader *r, size_t *n);
/* A malloc'd NUL-terminated copy of a string; NULL when bad. */
char *tl_get_str(tl_reader *r);

typedef struct tl_link {
    int fd; /* -1 when closed */
    uint8_t *in;
    size_t inlen, incap;
    uint8_t *out;
    size_t outoff, outlen, outcap;
    /* Frames longer than this end the connection (0: TL_FRAME_MAX). A
     * connection not yet authenticated gets a small cap (pmixd.c), so that
     * a stranger cannot make a daemon buffer much. tl_link_adopt leaves the
     * destination's cap. */
    uint32_t frame_max;
} tl_link;

/* A frame arrived: return 0 to go on, non-zero to stop reading (the link
 * may have been closed by the callback). `p` is borrowed for the call. */
typedef int (*tl_frame_cb)(void *ctx, tl_link *l, uint8_t type, const uint8_t *p, size_t len);

/* Listen on `addr` (numeric IPv4) and port *port (0: any; the chosen port
 * is written back). Returns the socket or -1 (errno set). */
int tl_listen(const char *addr, uint16_t *port);
/* The first IPv4 address of this host that `list` takes, in `out`
 * (numeric): list is comma-separated interface names (eth1) and subnets
 * (10.1.0.0/16), as Open MPI's if_include; earlier entries win. 1 found,
 * 0 none matches, -1 list malformed or interfaces unreadable (why in
 * err). tl_if_check(list, ...) checks only the syntax: 0 or -1. */
int tl_if_address(const char *list, char *out, size_t len, char *err, size_t errlen);
int tl_if_check(const char *list, char *err, size_t errlen);
/* Accept one connection from a listening socket: the fd or -1. */
int tl_accept(int lfd);
/* Connect to addr:port (blocking, at most `seconds`). The fd or -1. */
int tl_connect(const char *addr, uint16_t port, double seconds);

void tl_link_init(tl_link *l, int fd); /* takes the fd, makes it non-blocking */
void tl_link_close(tl_link *l);        /* closes and frees; idempotent */
/* Why tl_send and tl_queue could not queue a frame on this side (the
 * link itself is fine): */
#define TL_ENOMEM (-2)  /* out of memory (also a payload whose puts failed) */
#define TL_ETOOBIG (-3) /* more than TL_FRAME_MAX */
/* Queue one frame. 0, -1 if the link is closed or broken, or TL_ENOMEM or
 * TL_ETOOBIG. */
int tl_send(tl_link *l, uint8_t type, const tl_buf *payload);
/* Queue one frame on a link that may not be connected yet (fd -1): it is
 * written once the link has a connection (tl_link_adopt). 0, TL_ENOMEM or
 * TL_ETOOBIG. */
int tl_queue(tl_link *l, uint8_t type, const tl_buf *payload);
/* `dst` takes `src`'s connection and what it has read; what `dst` had
 * queued is written ahead of anything `src` had queued. `src` is left
 * closed (fd -1, nothing owned). 0, or -1 out of memory (dst unchanged). */
int tl_link_adopt(tl_link *dst, tl_link *src);
bool tl_want_write(const tl_link *l);
int tl_flush(tl_link *l); /* 0, or -1 when the peer is gone */
/* Write what is queued, waiting at most `seconds` (before an exit). */
void tl_drain(tl_link *l, double seconds);
/* Read what the socket has and call `cb` for every complete frame. Returns
 * 0, or -1 at EOF, on an error or on a malformed length (the caller then
 * closes the link). */
int tl_read(tl_link *l, tl_frame_cb cb, void *ctx);

#endif /* TCPLINK_H */
