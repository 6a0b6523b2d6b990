/*
 * datastd.c - the Standard's data-buffer API (PMIx_Data_*, and the
 * functions the PMIX_DATA_BUFFER_* macros expand to) on top of the codec.
 *
 * A pmix_data_buffer_t is a malloc'd block: base_ptr..base_ptr+bytes_used
 * holds packed data, pack_ptr is its end, unpack_ptr the read cursor,
 * bytes_allocated the size of the block. Each call borrows the block as a
 * px_buf (growing it with realloc when packing) and writes the fields back,
 * so the buffer's memory always belongs to the buffer: PMIx_Data_buffer_load
 * and PMIx_Data_load hand a blob over to it, the unload functions hand the
 * unread part back to the caller.
 *
 * Format. Every PMIx_Data_pack call appends one record: u16 data type, u32
 * number of values, then the values encoded as px_pack_typed() encodes them
 * (see pack.c). PMIx_Data_unpack checks the type against the record, so a
 * type mismatch is reported (PMIX_ERR_TYPE_MISMATCH) instead of decoding
 * garbage. Only this library reads this format; the target/source process
 * arguments are therefore ignored.
 *
 * max_num_values: PMIx_Data_unpack decodes min(record count,
 * *max_num_values) values into dest and stores that number back. If the
 * record held more, the remaining values are skipped (so the next unpack
 * starts at the next record) and PMIX_ERR_UNPACK_INADEQUATE_SPACE is
 * returned with the decoded values still in dest for the caller to use and
 * free. An exhausted buffer gives PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER.
 * Any other failure leaves dest empty and the buffer's cursor unchanged.
 *
 * Source objects follow the px_pack_typed convention: a pointer to the
 * first of num_vals contiguous objects of the type, so strings are passed
 * as char ** (PMIx_Data_copy and PMIx_Data_print take a string as char *,
 * as the Standard's examples do).
 */
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "common/px_common.h"
#include "wire/px_wire.h"
#include "wire/px_wire_impl.h"

/* ---- buffer objects ---- */

pmix_data_buffer_t *PMIx_Data_buffer_create(void)
{
    return calloc(1, sizeof(pmix_data_buffer_t));
}

void PMIx_Data_buffer_construct(pmix_data_buffer_t *buffer)
{
    if (buffer != NULL) {
        memset(buffer, 0, sizeof(*buffer));
    }
}

void PMIx_Data_buffer_destruct(pmix_data_buffer_t *buffer)
{
    if (buffer != NULL) {
        free(buffer->base_ptr);
        memset(buffer, 0, sizeof(*buffer));
    }
}

void PMIx_Data_buffer_release(pmix_data_buffer_t *buffer)
{
    PMIx_Data_buffer_destruct(buffer);
    free(buffer);
}

/* Make `buffer` hold the malloc'd `bytes` (ownership moves to it). */
static void adopt(pmix_data_buffer_t *buffer, char *bytes, size_t sz)
{
    if (bytes != NULL && bytes == buffer->base_ptr) {
        buffer->base_ptr = NULL; /* reloading its own block: do not free it */
    }
    PMIx_Data_buffer_destruct(buffer);
    if (bytes != NULL && sz == 0) {
        free(bytes);
        bytes = NULL;
    }
    if (bytes != NULL) {
        buffer->base_ptr = bytes;
        buffer->pack_ptr = bytes + sz;
        buffer->unpack_ptr = bytes;
        buffer->bytes_allocated = sz;
        buffer->bytes_used = sz;
    }
}

void PMIx_Data_buffer_load(pmix_data_buffer_t *buffer, char *bytes, size_t sz)
{
    if (buffer != NULL) {
        adopt(buffer, bytes, sz);
    }
}

/* The unread bytes [unpack_ptr, base_ptr + bytes_used), or NULL with
 * *len 0 when there are none or the fields are inconsistent. */
static const char *unread(const pmix_data_buffer_t *buffer, size_t *len)
{
    const char *cur = buffer->unpack_ptr != NULL ? buffer->unpack_ptr : buffer->base_ptr;

    *len = 0;
    if (buffer->base_ptr == NULL || cur < buffer->base_ptr ||
        cur > buffer->base_ptr + buffer->bytes_used) {
        return NULL;
    }
    *len = (size_t)(buffer->base_ptr + buffer->bytes_used - cur);
    return *len > 0 ? cur : NULL;
}

/* Hand the unread part to the caller and leave the buffer empty. */
static void take_unread(pmix_data_buffer_t *buffer, char **bytes, size_t *sz)
{
    size_t len;
    const char *p = unread(buffer, &len);

    *bytes = NULL;
    *sz = 0;
    if (p != NULL) {
        memmove(buffer->base_ptr, p, len);
        *bytes = buffer->base_ptr;
        *sz = len;
        buffer->base_ptr = NULL;
    }
    PMIx_Data_buffer_destruct(buffer);
}

void PMIx_Data_buffer_unload(pmix_data_buffer_t *buffer, char **bytes, size_t *sz)
{
    char *p = NULL;
    size_t n = 0;

    if (buffer != NULL) {
        take_unread(buffer, &p, &n);
    }
    if (bytes != NULL) {
        *bytes = p;
    } else {
        free(p);
    }
    if (sz != NULL) {
        *sz = n;
    }
}

/* ---- borrowing a buffer as a px_buf ---- */

/* Checks the fields and returns the read offset; false if inconsistent. */
static bool offsets(const pmix_data_buffer_t *buffer, size_t *rd)
{
    if (buffer->base_ptr == NULL) {
        *rd = 0;
        return buffer->bytes_used == 0;
    }
    if (buffer->unpack_ptr == NULL) {
        *rd = 0;
        return true;
    }
    if (buffer->unpack_ptr < buffer->base_ptr ||
        buffer->unpack_ptr > buffer->base_ptr + buffer->bytes_used) {
        return false;
    }
    *rd = (size_t)(buffer->unpack_ptr - buffer->base_ptr);
    return true;
}

static void borrow_for_pack(pmix_data_buffer_t *buffer, px_buf *b)
{
    px_buf_init(b);
    if (buffer->base_ptr != NULL) {
        b->data = (uint8_t *)buffer->base_ptr;
        b->size = buffer->bytes_used;
        b->cap = buffer->bytes_allocated > buffer->bytes_used ? buffer->bytes_allocated
                                                              : buffer->bytes_used;
        if (b->cap == 0) {
            /* An empty block that a px_buf would take for a read-only view. */
            free(b->data);
            b->data = NULL;
        }
    }
}

/* Write the borrowed block back; `used` is what the buffer now holds. */
static void give_back(pmix_data_buffer_t *buffer, px_buf *b, size_t used, size_t rd)
{
    buffer->base_ptr = (char *)b->data;
    buffer->bytes_allocated = b->cap;
    buffer->bytes_used = used;
    buffer->pack_ptr = buffer->base_ptr != NULL ? buffer->base_ptr + used : NULL;
    buffer->unpack_ptr = buffer->base_ptr != NULL ? buffer->base_ptr + rd : NULL;
}

/* Append `n` objects of `type` from `src` as one record. */
static pmix_status_t append(pmix_data_buffer_t *buffer, const void *src, int32_t n,
                            pmix_data_type_t type, size_t stride)
{
    size_t rd, old;
    px_buf b;
    pmix_status_t rc;

    if (!offsets(buffer, &rd)) {
        return PMIX_ERR_BAD_PARAM;
    }
    borrow_for_pack(buffer, &b);
    old = b.size;
    px_pack_u16(&b, type);
    px_pack_u32(&b, (uint32_t)n);
    for (int32_t i = 0; i < n && b.err == PMIX_SUCCESS; i++) {
        px_pack_typed(&b, (const char *)src + (size_t)i * stride, type);
    }
    rc = px_buf_status(&b);
    give_back(buffer, &b, rc == PMIX_SUCCESS ? b.size : old, rd);
    return rc;
}

/* ---- packing and unpacking ---- */

pmix_status_t PMIx_Data_pack(const pmix_proc_t *target, pmix_data_buffer_t *buffer, void *src,
                             int32_t num_vals, pmix_data_type_t type)
{
    px_wire_type t;
    pmix_status_t rc;

    (void)target; /* one format: ours */
    if (buffer == NULL || num_vals < 0 || (src == NULL && num_vals > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    rc = px_wire_type_info(type, &t);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (t.size == 0) {
        return PMIX_ERR_BAD_PARAM; /* PMIX_UNDEF has no objects to pack */
    }
    rc = append(buffer, src, num_vals, type, t.size);
    return rc == PMIX_ERR_NOMEM ? PMIX_ERR_OUT_OF_RESOURCE : rc;
}

pmix_status_t PMIx_Data_unpack(const pmix_proc_t *source, pmix_data_buffer_t *buffer, void *dest,
                               int32_t *max_num_values, pmix_data_type_t type)
{
    px_wire_type t;
    pmix_status_t rc;
    size_t rd, done = 0;
    uint16_t wtype;
    uint32_t count;
    px_buf b;
    char *out = dest;

    (void)source;
    if (buffer == NULL || dest == NULL || max_num_values == NULL || *max_num_values <= 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    rc = px_wire_type_info(type, &t);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (t.size == 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (!offsets(buffer, &rd)) {
        return PMIX_ERR_BAD_PARAM;
    }
    px_buf_view(&b, buffer->base_ptr, buffer->bytes_used);
    b.pos = rd;
    if (px_buf_left(&b) == 0) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    rc = px_unpack_u16(&b, &wtype);
    if (rc == PMIX_SUCCESS && wtype != type) {
        rc = PMIX_ERR_TYPE_MISMATCH;
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u32(&b, &count);
    }
    if (rc == PMIX_SUCCESS && count > INT32_MAX) {
        rc = PMIX_ERR_UNPACK_FAILURE;
    }
    while (rc == PMIX_SUCCESS && done < count && done < (size_t)*max_num_values) {
        rc = px_wire_decode(&b, out + done * t.size, type);
        if (rc == PMIX_SUCCESS) {
            done++;
        }
    }
    for (size_t i = done; rc == PMIX_SUCCESS && i < count; i++) {
        rc = px_wire_decode(&b, NULL, type); /* what did not fit */
    }
    if (rc != PMIX_SUCCESS) {
        while (done > 0) {
            done--;
            px_wire_destruct(out + done * t.size, type);
        }
        return rc;
    }
    buffer->unpack_ptr = buffer->base_ptr + b.pos;
    *max_num_values = (int32_t)done;
    return done < count ? PMIX_ERR_UNPACK_INADEQUATE_SPACE : PMIX_SUCCESS;
}

/* ---- payload moves ---- */

pmix_status_t PMIx_Data_copy_payload(pmix_data_buffer_t *dest, pmix_data_buffer_t *src)
{
    size_t rd, len;
    const char *p;
    char *tmp = NULL;
    px_buf b;
    pmix_status_t rc;

    if (dest == NULL || src == NULL || !offsets(dest, &rd)) {
        return PMIX_ERR_BAD_PARAM;
    }
    p = unread(src, &len);
    if (p == NULL) {
        return PMIX_SUCCESS;
    }
    if (dest == src) {
        /* Growing the block could move the bytes being copied. */
        tmp = malloc(len);
        if (tmp == NULL) {
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        memcpy(tmp, p, len);
        p = tmp;
    }
    borrow_for_pack(dest, &b);
    px_pack_raw(&b, p, len);
    rc = px_buf_status(&b);
    give_back(dest, &b, rc == PMIX_SUCCESS ? b.size : dest->bytes_used, rd);
    free(tmp);
    return rc == PMIX_ERR_NOMEM ? PMIX_ERR_OUT_OF_RESOURCE : rc;
}

pmix_status_t PMIx_Data_load(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload)
{
    if (buffer == NULL || payload == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    adopt(buffer, payload->bytes, payload->size);
    payload->bytes = NULL;
    payload->size = 0;
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Data_embed(pmix_data_buffer_t *buffer, const pmix_byte_object_t *payload)
{
    char *copy = NULL;

    if (buffer == NULL || payload == NULL || (payload->bytes == NULL && payload->size > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (payload->size > 0) {
        copy = malloc(payload->size);
        if (copy == NULL) {
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        memcpy(copy, payload->bytes, payload->size);
    }
    adopt(buffer, copy, payload->size);
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Data_unload(pmix_data_buffer_t *buffer, pmix_byte_object_t *payload)
{
    if (buffer == NULL || payload == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    take_unread(buffer, &payload->bytes, &payload->size);
    return PMIX_SUCCESS;
}

/* No compression library is linked: the Standard lets both calls answer
 * "not compressed" (false), and the caller keeps using its own bytes. */
bool PMIx_Data_compress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes)
{
    (void)inbytes;
    (void)size;
    if (outbytes != NULL) {
        *outbytes = NULL;
    }
    if (nbytes != NULL) {
        *nbytes = 0;
    }
    return false;
}

bool PMIx_Data_decompress(const uint8_t *inbytes, size_t size, uint8_t **outbytes, size_t *nbytes)
{
    return PMIx_Data_compress(inbytes, size, outbytes, nbytes);
}

/* ---- copies ---- */

pmix_status_t PMIx_Data_copy(void **dest, void *src, pmix_data_type_t type)
{
    size_t sz;
    void *obj;
    pmix_status_t rc;

    if (dest == NULL || src == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    *dest = NULL;
    switch (type) {
    case PMIX_STRING:
        *dest = strdup(src);
        return *dest != NULL ? PMIX_SUCCESS : PMIX_ERR_OUT_OF_RESOURCE;
    case PMIX_POINTER:
        *dest = src; /* the address itself is the datum */
        return PMIX_SUCCESS;
    default: break;
    }
    sz = px_type_size(type);
    if (sz == 0) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    obj = calloc(1, sz);
    if (obj == NULL) {
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    rc = px_elems_copy(obj, src, 1, type);
    if (rc != PMIX_SUCCESS) {
        free(obj);
        return rc == PMIX_ERR_NOMEM ? PMIX_ERR_OUT_OF_RESOURCE : rc;
    }
    *dest = obj;
    return PMIX_SUCCESS;
}
