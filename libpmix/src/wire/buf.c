/*
 * buf.c - buffers, frames and the scalar encodings of the wire codec.
 *
 * A px_buf being packed owns a malloc'd block that grows geometrically;
 * every write goes through reserve(), which records the first failure in
 * the buffer's sticky `err` and turns every later write into a no-op. A
 * px_buf being unpacked is a view on bytes somebody else owns: a read takes
 * its bytes with px_wire_take(), which refuses to move past the end, so no
 * decoder anywhere reads out of bounds as long as it reads only through it.
 *
 * Integers are written byte by byte, least significant first, so the
 * encoding is little-endian on any host and no host struct is ever copied
 * to the wire. Floating-point numbers travel as the IEEE-754 bit pattern of
 * the same width, also little-endian.
 *
 * Strings and byte objects are a u32 length followed by the bytes; a NULL
 * string is the length 0xffffffff with no bytes. Decoded strings are
 * checked for embedded NULs and for PX_WIRE_MAX_STRLEN before anything is
 * allocated.
 */
#include <stdlib.h>
#include <string.h>

#include "wire/px_wire.h"
#include "wire/px_wire_impl.h"

#define STR_NULL 0xffffffffu
#define MIN_CAP 64

/* ---- frames ---- */

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t get64(const uint8_t *p)
{
    return (uint64_t)get32(p) | ((uint64_t)get32(p + 4) << 32);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

pmix_status_t px_frame_parse(const void *data, size_t avail, size_t max_payload, px_frame_hdr *hdr)
{
    const uint8_t *p = data;

    if (avail < PX_FRAME_HDR) {
        return PMIX_ERR_UNPACK_INADEQUATE_SPACE;
    }
    if (p == NULL || hdr == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (get32(p) != PX_WIRE_MAGIC || get16(p + 4) != PX_WIRE_VERSION) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (get32(p + 12) > max_payload) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    hdr->type = get16(p + 6);
    hdr->tag = get32(p + 8);
    hdr->len = get32(p + 12);
    return PMIX_SUCCESS;
}

/* ---- buffers ---- */

void px_buf_init(px_buf *b)
{
    memset(b, 0, sizeof(*b));
    b->err = PMIX_SUCCESS;
}

void px_buf_init_frame(px_buf *b, uint16_t type, uint32_t tag)
{
    px_buf_init(b);
    px_pack_u32(b, PX_WIRE_MAGIC);
    px_pack_u16(b, PX_WIRE_VERSION);
    px_pack_u16(b, type);
    px_pack_u32(b, tag);
    px_pack_u32(b, 0); /* payload length, written by px_buf_finish_frame() */
}

void px_buf_view(px_buf *b, const void *data, size_t len)
{
    px_buf_init(b);
    /* A view never writes through `data`: cap == 0 marks it read-only. */
    b->data = (uint8_t *)(uintptr_t)data;
    b->size = data != NULL ? len : 0;
}

void px_buf_view_payload(px_buf *b, const void *frame, size_t frame_len)
{
    const uint8_t *p = frame;
    size_t len = 0;

    if (p != NULL && frame_len >= PX_FRAME_HDR) {
        len = frame_len - PX_FRAME_HDR;
        if (get32(p + 12) < len) {
            len = get32(p + 12);
        }
        p += PX_FRAME_HDR;
    }
    px_buf_view(b, len > 0 ? p : NULL, len);
}

void px_buf_fini(px_buf *b)
{
    if (b == NULL) {
        return;
    }
    if (b->cap > 0) {
        free(b->data);
    }
    px_buf_init(b);
}

pmix_status_t px_buf_status(const px_buf *b)
{
    return b->err;
}

void *px_buf_steal(px_buf *b, size_t *len)
{
    void *p = NULL;

    if (b->err == PMIX_SUCCESS && b->cap > 0 && b->size > 0) {
        p = b->data;
        *len = b->size;
        b->cap = 0; /* ownership moves to the caller */
    } else {
        *len = 0;
    }
    px_buf_fini(b);
    return p;
}

void *px_buf_finish_frame(px_buf *b, size_t *len)
{
    size_t payload;

    *len = 0;
    if (b->err == PMIX_SUCCESS && (b->size < PX_FRAME_HDR || b->cap == 0)) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM); /* not started with px_buf_init_frame() */
    }
    if (b->err == PMIX_SUCCESS) {
        payload = b->size - PX_FRAME_HDR;
        if (payload > UINT32_MAX) {
            px_wire_fail(b, PMIX_ERR_OUT_OF_RESOURCE);
        } else {
            put32(b->data + 12, (uint32_t)payload);
        }
    }
    return px_buf_steal(b, len);
}

void px_wire_fail(px_buf *b, pmix_status_t rc)
{
    if (b->err == PMIX_SUCCESS) {
        b->err = rc;
    }
}

/* Room for `n` more bytes at the end; NULL (and a sticky error) if the
 * buffer already failed, is a read-only view, or cannot grow. */
static uint8_t *reserve(px_buf *b, size_t n)
{
    size_t want, cap;
    uint8_t *p;

    if (b->err != PMIX_SUCCESS) {
        return NULL;
    }
    if (b->cap == 0 && b->data != NULL) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM); /* packing into a view */
        return NULL;
    }
    if (n > SIZE_MAX - b->size) {
        px_wire_fail(b, PMIX_ERR_OUT_OF_RESOURCE);
        return NULL;
    }
    want = b->size + n;
    if (want > b->cap) {
        cap = b->cap < MIN_CAP ? MIN_CAP : b->cap;
        while (cap < want) {
            cap = cap > SIZE_MAX / 2 ? want : cap * 2;
        }
        p = realloc(b->data, cap);
        if (p == NULL) {
            px_wire_fail(b, PMIX_ERR_NOMEM);
            return NULL;
        }
        b->data = p;
        b->cap = cap;
    }
    p = b->data + b->size;
    b->size += n;
    return p;
}

void px_buf_reserve(px_buf *b, size_t n)
{
    if (reserve(b, n) != NULL) {
        b->size -= n;
    }
}

/* ---- scalars ---- */

void px_pack_u8(px_buf *b, uint8_t v)
{
    uint8_t *p = reserve(b, 1);

    if (p != NULL) {
        p[0] = v;
    }
}

void px_pack_u16(px_buf *b, uint16_t v)
{
    uint8_t *p = reserve(b, 2);

    if (p != NULL) {
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
    }
}

void px_pack_u32(px_buf *b, uint32_t v)
{
    uint8_t *p = reserve(b, 4);

    if (p != NULL) {
        put32(p, v);
    }
}

void px_pack_u64(px_buf *b, uint64_t v)
{
    uint8_t *p = reserve(b, 8);

    if (p != NULL) {
        put32(p, (uint32_t)v);
        put32(p + 4, (uint32_t)(v >> 32));
    }
}

void px_pack_i32(px_buf *b, int32_t v)
{
    px_pack_u32(b, (uint32_t)v);
}

void px_pack_i64(px_buf *b, int64_t v)
{
    px_pack_u64(b, (uint64_t)v);
}

void px_pack_double(px_buf *b, double v)
{
    uint64_t bits;

    _Static_assert(sizeof(double) == sizeof(uint64_t), "IEEE-754 binary64 double expected");
    memcpy(&bits, &v, sizeof(bits));
    px_pack_u64(b, bits);
}

void px_pack_float(px_buf *b, float v)
{
    uint32_t bits;

    _Static_assert(sizeof(float) == sizeof(uint32_t), "IEEE-754 binary32 float expected");
    memcpy(&bits, &v, sizeof(bits));
    px_pack_u32(b, bits);
}

void px_pack_bool(px_buf *b, bool v)
{
    px_pack_u8(b, v ? 1 : 0);
}

void px_pack_raw(px_buf *b, const void *p, size_t n)
{
    uint8_t *dst;

    if (n == 0) {
        return;
    }
    if (p == NULL) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    dst = reserve(b, n);
    if (dst != NULL) {
        memcpy(dst, p, n);
    }
}

void px_pack_bytes(px_buf *b, const void *p, size_t n)
{
    if (n >= UINT32_MAX || (n > 0 && p == NULL)) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    px_pack_u32(b, (uint32_t)n);
    px_pack_raw(b, p, n);
}

void px_pack_str(px_buf *b, const char *s)
{
    size_t n;

    if (s == NULL) {
        px_pack_u32(b, STR_NULL);
        return;
    }
    n = strnlen(s, PX_WIRE_MAX_STRLEN + 1);
    if (n > PX_WIRE_MAX_STRLEN) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    px_pack_u32(b, (uint32_t)n);
    px_pack_raw(b, s, n);
}

/* Unpacking scalars: a short buffer fails without moving the cursor. */

pmix_status_t px_unpack_u64(px_buf *b, uint64_t *v)
{
    const uint8_t *p = px_wire_take(b, 8);

    if (p == NULL) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (v != NULL) {
        *v = get64(p);
    }
    return PMIX_SUCCESS;
}

pmix_status_t px_unpack_i32(px_buf *b, int32_t *v)
{
    uint32_t u;
    pmix_status_t rc = px_unpack_u32(b, &u);

    if (rc == PMIX_SUCCESS && v != NULL) {
        /* Two's complement without implementation-defined conversion. */
        *v = u <= INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) - INT32_MAX - 1;
    }
    return rc;
}

pmix_status_t px_unpack_i64(px_buf *b, int64_t *v)
{
    uint64_t u;
    pmix_status_t rc = px_unpack_u64(b, &u);

    if (rc == PMIX_SUCCESS && v != NULL) {
        *v = u <= INT64_MAX ? (int64_t)u : (int64_t)(u - 9223372036854775808u) - INT64_MAX - 1;
    }
    return rc;
}

pmix_status_t px_unpack_double(px_buf *b, double *v)
{
    uint64_t bits;
    pmix_status_t rc = px_unpack_u64(b, &bits);

    if (rc == PMIX_SUCCESS && v != NULL) {
        memcpy(v, &bits, sizeof(*v));
    }
    return rc;
}

pmix_status_t px_unpack_float(px_buf *b, float *v)
{
    uint32_t bits;
    pmix_status_t rc = px_unpack_u32(b, &bits);

    if (rc == PMIX_SUCCESS && v != NULL) {
        memcpy(v, &bits, sizeof(*v));
    }
    return rc;
}

pmix_status_t px_unpack_bool(px_buf *b, bool *v)
{
    size_t pos = b->pos;
    uint8_t u;
    pmix_status_t rc = px_unpack_u8(b, &u);

    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (u > 1) {
        b->pos = pos;
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (v != NULL) {
        *v = u == 1;
    }
    return PMIX_SUCCESS;
}

/* The length and bytes of a string without copying them; *null tells a
 * packed NULL apart. Checks the length limit and embedded NULs. */
static pmix_status_t str_view(px_buf *b, const char **s, size_t *n, bool *null)
{
    size_t pos = b->pos;
    uint32_t len;
    const uint8_t *p;
    pmix_status_t rc = px_unpack_u32(b, &len);

    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (len == STR_NULL) {
        *s = NULL;
        *n = 0;
        *null = true;
        return PMIX_SUCCESS;
    }
    if (len > PX_WIRE_MAX_STRLEN) {
        b->pos = pos;
        return PMIX_ERR_UNPACK_FAILURE;
    }
    p = px_wire_take(b, len);
    if (p == NULL) {
        b->pos = pos;
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (memchr(p, '\0', len) != NULL) {
        b->pos = pos;
        return PMIX_ERR_UNPACK_FAILURE;
    }
    *s = (const char *)p;
    *n = len;
    *null = false;
    return PMIX_SUCCESS;
}

pmix_status_t px_unpack_str(px_buf *b, char **s)
{
    size_t pos = b->pos, n;
    const char *p;
    bool null;
    char *copy;
    pmix_status_t rc = str_view(b, &p, &n, &null);

    if (s != NULL) {
        *s = NULL;
    }
    if (rc != PMIX_SUCCESS || null || s == NULL) {
        return rc;
    }
    copy = malloc(n + 1);
    if (copy == NULL) {
        b->pos = pos;
        return PMIX_ERR_NOMEM;
    }
    memcpy(copy, p, n);
    copy[n] = '\0';
    *s = copy;
    return PMIX_SUCCESS;
}

pmix_status_t px_unpack_strbuf(px_buf *b, char *out, size_t cap)
{
    size_t pos = b->pos, n;
    const char *p;
    bool null;
    pmix_status_t rc = str_view(b, &p, &n, &null);

    if (out != NULL && cap > 0) {
        out[0] = '\0';
    }
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (null || n >= cap) {
        b->pos = pos;
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (out != NULL) {
        memcpy(out, p, n);
        out[n] = '\0';
    }
    return PMIX_SUCCESS;
}

pmix_status_t px_unpack_bytes_view(px_buf *b, const void **p, size_t *n)
{
    size_t pos = b->pos;
    uint32_t len;
    const uint8_t *q;
    pmix_status_t rc = px_unpack_u32(b, &len);

    if (p != NULL) {
        *p = NULL;
    }
    if (n != NULL) {
        *n = 0;
    }
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    q = px_wire_take(b, len);
    if (q == NULL) {
        b->pos = pos;
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (p != NULL) {
        *p = len > 0 ? q : NULL;
    }
    if (n != NULL) {
        *n = len;
    }
    return PMIX_SUCCESS;
}

pmix_status_t px_unpack_bytes(px_buf *b, void **p, size_t *n)
{
    size_t pos = b->pos, len;
    const void *q;
    void *copy = NULL;
    pmix_status_t rc = px_unpack_bytes_view(b, &q, &len);

    if (p != NULL) {
        *p = NULL;
    }
    if (n != NULL) {
        *n = 0;
    }
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (p != NULL && len > 0) {
        copy = malloc(len);
        if (copy == NULL) {
            b->pos = pos;
            return PMIX_ERR_NOMEM;
        }
        memcpy(copy, q, len);
        *p = copy;
    }
    if (n != NULL) {
        *n = len;
    }
    return PMIX_SUCCESS;
}

pmix_status_t px_unpack_raw_view(px_buf *b, const void **p, size_t n)
{
    const uint8_t *q = px_wire_take(b, n);

    if (q == NULL) {
        if (p != NULL) {
            *p = NULL;
        }
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (p != NULL) {
        *p = q;
    }
    return PMIX_SUCCESS;
}
