/*
 * blocks.c - a store of variable-size blocks by rank, and the range format
 * that allgather messages carry.
 *
 * An allgather member receives the other members' contributions in an
 * order that depends on the algorithm (ring: me-1, me-2, ...; Bruck: me+1,
 * me+2..me+3, ...; a tree broadcast: all at once). The store appends each
 * block to one arena that grows geometrically and indexes it by rank
 * (offset and length: 12 bytes a rank), so a block is copied once on
 * arrival, and messages are built by copying ranges out of it. At the end
 * px_coll_blocks_take() hands the arena over as the result when it happens
 * to be in rank order (a tree broadcast, Bruck on member 0) and otherwise
 * copies it once into rank order: the peak is twice the result.
 *
 * Range format (every allgather message payload):
 *
 *     u32 first, u32 count, count x u32 length, then the blocks' bytes
 *
 * for blocks first, first+1, ..., first+count-1 (mod n). A reader checks
 * first and count against what the algorithm expects from that sender in
 * that round, and that the lengths add up to exactly the bytes that
 * follow, before it stores anything.
 *
 * A phantom store (sizes_only) keeps each block's length and only its
 * first kept(i) bytes (none, except hier's group blobs, whose length
 * tables it keeps); its ranges carry the lengths and the kept bytes, and
 * px_coll_range_wire_size says how big they would have been.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

#define MIN_CAP 256

pmix_status_t px_coll_blocks_init(px_coll_blocks *b, uint32_t n)
{
    memset(b, 0, sizeof(*b));
    b->len = calloc(n ? n : 1, sizeof(*b->len));
    b->off = malloc((n ? n : 1) * sizeof(*b->off));
    if (b->len == NULL || b->off == NULL) {
        free(b->len);
        free(b->off);
        memset(b, 0, sizeof(*b));
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        b->off[i] = PX_COLL_NOBLOCK;
    }
    b->n = n;
    return PMIX_SUCCESS;
}

void px_coll_blocks_fini(px_coll_blocks *b)
{
    if (b == NULL) {
        return;
    }
    free(b->len);
    free(b->off);
    free(b->data);
    memset(b, 0, sizeof(*b));
}

bool px_coll_blocks_has(const px_coll_blocks *b, uint32_t i)
{
    return i < b->n && b->off[i] != PX_COLL_NOBLOCK;
}

size_t px_coll_blocks_kept(const px_coll_blocks *b, uint32_t i, size_t len)
{
    size_t k;

    if (!b->phantom) {
        return len;
    }
    k = b->kept != NULL ? b->kept(b->check_arg, i) : 0;
    return k < len ? k : len;
}

static bool reserve(px_coll_blocks *b, size_t more)
{
    size_t cap;
    uint8_t *d;

    if (b->cap - b->used >= more) {
        return true;
    }
    if (more > SIZE_MAX / 2 - b->used) {
        return false;
    }
    cap = b->cap ? b->cap : MIN_CAP;
    while (cap - b->used < more) {
        cap *= 2;
    }
    d = realloc(b->data, cap);
    if (d == NULL) {
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

uint8_t *px_coll_blocks_put_space(px_coll_blocks *b, uint32_t i, size_t len)
{
    uint8_t *p;
    size_t keep;

    if (i >= b->n || b->off[i] != PX_COLL_NOBLOCK || len > UINT32_MAX) {
        return NULL;
    }
    keep = px_coll_blocks_kept(b, i, len);
    if (!reserve(b, keep ? keep : 1)) {
        return NULL;
    }
    p = b->data + b->used;
    b->off[i] = b->used;
    b->len[i] = (uint32_t)len;
    b->used += keep;
    b->have++;
    return p;
}

pmix_status_t px_coll_blocks_put(px_coll_blocks *b, uint32_t i, const void *p, size_t len)
{
    uint8_t *dst = px_coll_blocks_put_space(b, i, len);
    size_t keep;

    if (dst == NULL) {
        return PMIX_ERR_NOMEM;
    }
    keep = px_coll_blocks_kept(b, i, len);
    if (keep > 0) {
        memcpy(dst, p, keep);
    }
    return PMIX_SUCCESS;
}

const uint8_t *px_coll_blocks_get(const px_coll_blocks *b, uint32_t i, size_t *len)
{
    if (!px_coll_blocks_has(b, i)) {
        *len = 0;
        return NULL;
    }
    *len = b->len[i];
    return b->data + b->off[i];
}

size_t px_coll_range_size(const px_coll_blocks *b, uint32_t first, uint32_t count)
{
    size_t sz = 8 + 4 * (size_t)count;
    uint32_t i = first;

    for (uint32_t k = 0; k < count; k++) {
        sz += px_coll_blocks_kept(b, i, b->len[i]);
        i = (i + 1 == b->n) ? 0 : i + 1;
    }
    return sz;
}

size_t px_coll_range_wire_size(const px_coll_blocks *b, uint32_t first, uint32_t count)
{
    size_t sz = 8 + 4 * (size_t)count;
    uint32_t i = first;

    for (uint32_t k = 0; k < count; k++) {
        sz += b->len[i];
        i = (i + 1 == b->n) ? 0 : i + 1;
    }
    return sz;
}

void px_coll_range_write(const px_coll_blocks *b, uint32_t first, uint32_t count, uint8_t *out)
{
    uint8_t *lens = out + 8, *data = out + 8 + 4 * (size_t)count;
    uint32_t i = first;

    px_coll_put32(out, first);
    px_coll_put32(out + 4, count);
    for (uint32_t k = 0; k < count; k++) {
        size_t keep = px_coll_blocks_kept(b, i, b->len[i]);
        px_coll_put32(lens + 4 * (size_t)k, b->len[i]);
        if (keep > 0) {
            memcpy(data, b->data + b->off[i], keep);
        }
        data += keep;
        i = (i + 1 == b->n) ? 0 : i + 1;
    }
}

pmix_status_t px_coll_range_read(px_coll_blocks *b, const uint8_t *p, size_t len, uint32_t first,
                                 uint32_t count, bool replace)
{
    const uint8_t *lens, *data;
    uint64_t total = 0;
    uint32_t i;

    if (len < 8 || count == 0 || count > b->n) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (px_coll_get32(p) != first || px_coll_get32(p + 4) != count) {
        return PMIX_ERR_BAD_PARAM;
    }
    if ((len - 8) / 4 < count) {
        return PMIX_ERR_BAD_PARAM;
    }
    lens = p + 8;
    data = lens + 4 * (size_t)count;
    i = first;
    for (uint32_t k = 0; k < count; k++) {
        total += px_coll_blocks_kept(b, i, px_coll_get32(lens + 4 * (size_t)k));
        i = (i + 1 == b->n) ? 0 : i + 1;
    }
    if (total != (uint64_t)(len - 8 - 4 * (size_t)count)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (b->check != NULL) {
        const uint8_t *q = data;
        i = first;
        for (uint32_t k = 0; k < count; k++) {
            uint32_t l = px_coll_get32(lens + 4 * (size_t)k);
            size_t keep = px_coll_blocks_kept(b, i, l);
            if (!b->check(b->check_arg, i, q, keep, l)) {
                return PMIX_ERR_BAD_PARAM;
            }
            q += keep;
            i = (i + 1 == b->n) ? 0 : i + 1;
        }
    }
    if (replace) {
        for (uint32_t k = 0; k < b->n; k++) {
            b->off[k] = PX_COLL_NOBLOCK;
        }
        b->have = 0;
        b->used = 0;
        /* One allocation for the whole range, so it lands in rank order. */
        if (!reserve(b, (size_t)total ? (size_t)total : 1)) {
            return PMIX_ERR_NOMEM;
        }
    }
    i = first;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t l = px_coll_get32(lens + 4 * (size_t)k);
        if (!px_coll_blocks_has(b, i) && px_coll_blocks_put(b, i, data, l) != PMIX_SUCCESS) {
            return PMIX_ERR_NOMEM;
        }
        data += px_coll_blocks_kept(b, i, l);
        i = (i + 1 == b->n) ? 0 : i + 1;
    }
    return PMIX_SUCCESS;
}

pmix_status_t px_coll_blocks_take(px_coll_blocks *b, px_coll_result *res)
{
    uint64_t *offs;
    uint8_t *data;
    uint64_t total = 0;
    bool in_order = true;

    if (b->have != b->n) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (b->phantom) {
        /* lengths only: no data to hand over */
        free(b->data);
        b->data = NULL;
        in_order = false;
    }
    for (uint32_t i = 0; i < b->n; i++) {
        if (b->off[i] != total) {
            in_order = false;
        }
        total += b->len[i];
    }
    if (total == 0 || b->phantom) {
        data = NULL;
    } else if (in_order) {
        data = b->data;
        b->data = NULL;
    } else {
        uint64_t at = 0;
        data = malloc((size_t)total);
        if (data == NULL) {
            return PMIX_ERR_NOMEM;
        }
        for (uint32_t i = 0; i < b->n; i++) {
            if (b->len[i] > 0) {
                memcpy(data + at, b->data + b->off[i], b->len[i]);
            }
            at += b->len[i];
        }
    }
    /* The index becomes the result's offsets: one more entry, rewritten. */
    offs = realloc(b->off, ((size_t)b->n + 1) * sizeof(*offs));
    if (offs == NULL) {
        if (data != b->data) {
            free(data);
        }
        return PMIX_ERR_NOMEM;
    }
    b->off = NULL;
    total = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        offs[i] = total;
        total += b->len[i];
    }
    offs[b->n] = total;
    res->nmembers = b->n;
    res->offsets = offs;
    res->data = data;
    res->size = (size_t)total;
    free(b->data);
    b->data = NULL;
    b->used = b->cap = 0;
    b->n = b->have = 0; /* empty: nothing is indexed any more */
    return PMIX_SUCCESS;
}
