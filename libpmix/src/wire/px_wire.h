/*
 * px_wire.h - the message codec: frames, and bounds-checked pack/unpack of
 * every data type of the Standard.
 *
 * Frames. Every message between engines is one frame: a 16-byte header
 * followed by `len` payload bytes. All integers, in the header and in the
 * payload, are little-endian whatever the host.
 *
 *     offset 0  u32 magic    PX_WIRE_MAGIC
 *     offset 4  u16 version  PX_WIRE_VERSION
 *     offset 6  u16 type     message type (client/server protocol, px_proto.h)
 *     offset 8  u32 tag      request id chosen by the requester, echoed in replies
 *     offset 12 u32 len      payload length in bytes
 *
 * A platform reading a byte stream calls px_frame_parse() on the first
 * PX_FRAME_HDR bytes it has, learns the frame length, and hands the whole
 * frame to an engine's deliver function.
 *
 * Buffers. A px_buf is either a growable buffer being packed, or a
 * read-only view being unpacked. Pack functions never fail individually:
 * an allocation failure or a refused argument is remembered in `err`
 * (sticky) and every later pack is a no-op, so a sequence of packs is
 * checked once with px_buf_status(). Unpack functions return PMIX_SUCCESS
 * or an error and never read past the end of the buffer; a count read from
 * the wire is checked against the bytes that remain before anything is
 * allocated, so a forged count cannot make the reader allocate more than
 * the message size times a small constant. Nesting is limited to
 * PX_WIRE_MAX_DEPTH levels on both sides; a level is a data array, or a
 * value that holds a value, info, pdata, app or query (a data array of
 * infos whose values are data arrays is two levels). On failure, an unpack
 * function leaves its output empty (nothing to free) and the cursor where
 * it was before the call.
 *
 * Encoding of values: a u16 data type followed by the type's encoding.
 * Strings are a u32 length (0xffffffff for NULL) and that many bytes
 * without the terminating NUL. Byte objects are a u32 length and the bytes.
 * Sizes are u64. Pointers to structs are encoded as the struct (a NULL
 * pointer as a u8 0 flag before it, 1 otherwise). wire/pack.c lists the
 * layout of every type; the types themselves are the rows of the table of
 * data types (common/px_types.def). Types that cannot cross a process
 * boundary are refused: PMIX_POINTER (PMIX_ERR_BAD_PARAM), PMIX_TOPO and a
 * cpuset that holds an hwloc bitmap (PMIX_ERR_NOT_SUPPORTED).
 */
#ifndef PX_WIRE_H
#define PX_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

#define PX_WIRE_MAGIC 0x31584d50u /* "PMX1" read as little-endian bytes */
#define PX_WIRE_VERSION 1
#define PX_FRAME_HDR 16
#define PX_FRAME_MAX_DEFAULT ((size_t)256 << 20) /* 256 MiB */
#define PX_WIRE_MAX_DEPTH 8
#define PX_WIRE_MAX_STRLEN ((size_t)64 << 20) /* longest string either side accepts */

/* Bit 15 of the type: the frame travels with a shared region (see
 * px_platform.h). Platforms set it when sending with a region and clear it
 * before delivery; engines never see it. */
#define PX_FRAME_REGION 0x8000u

typedef struct px_frame_hdr {
    uint16_t type;
    uint32_t tag;
    uint32_t len; /* payload bytes, header excluded */
} px_frame_hdr;

/* Check the header at `data` (at least PX_FRAME_HDR bytes must be given).
 * Returns PMIX_SUCCESS and fills `hdr`; PMIX_ERR_UNPACK_INADEQUATE_SPACE if
 * `avail` < PX_FRAME_HDR; PMIX_ERR_BAD_PARAM on a wrong magic or version;
 * PMIX_ERR_OUT_OF_RESOURCE if the payload exceeds `max_payload`. */
pmix_status_t px_frame_parse(const void *data, size_t avail, size_t max_payload, px_frame_hdr *hdr);

typedef struct px_buf {
    uint8_t *data;     /* owned when packing; borrowed when unpacking */
    size_t size;       /* bytes written (pack) or bytes available (unpack) */
    size_t cap;        /* allocated bytes (pack); 0 for a view */
    size_t pos;        /* read cursor (unpack) */
    pmix_status_t err; /* sticky pack error, PMIX_SUCCESS while all is well */
    int depth;         /* current nesting while (un)packing values */
} px_buf;

/* An empty buffer for packing. Never fails; memory comes with the first pack. */
void px_buf_init(px_buf *b);
/* An empty buffer that starts with a frame header of `type` and `tag`;
 * finish it with px_buf_finish_frame(). */
void px_buf_init_frame(px_buf *b, uint16_t type, uint32_t tag);
/* A read-only view on `len` bytes at `data` for unpacking (not copied; they
 * must outlive the view). px_buf_fini() on a view does nothing. */
void px_buf_view(px_buf *b, const void *data, size_t len);
/* A view on the payload of a complete frame, after px_frame_parse(). */
void px_buf_view_payload(px_buf *b, const void *frame, size_t frame_len);
/* Free what a packing buffer holds and leave it empty; NULL is a no-op. */
void px_buf_fini(px_buf *b);
/* Make room for `n` more bytes in a packing buffer at once (as one
 * allocation instead of doublings); failing, it fails the buffer as a pack
 * would. */
void px_buf_reserve(px_buf *b, size_t n);
/* PMIX_SUCCESS, or the first error a pack ran into. */
pmix_status_t px_buf_status(const px_buf *b);
/* Bytes left to unpack. */
static inline size_t px_buf_left(const px_buf *b)
{
    return b->pos < b->size ? b->size - b->pos : 0;
}

/* The next `n` unread bytes, advancing the cursor; NULL (cursor unchanged)
 * if fewer than `n` bytes remain. Every decoder of the codec reads through
 * this, so none reads out of bounds. Inline, with the small unpack
 * functions below: a local Get calls them for every field it reads, and
 * even with LTO they stayed calls. */
static inline const uint8_t *px_wire_take(px_buf *b, size_t n)
{
    const uint8_t *p;

    if (n > px_buf_left(b)) {
        return NULL;
    }
    p = b->data + b->pos;
    b->pos += n;
    return p;
}

/* Write the payload length into the frame header and hand the frame to the
 * caller (malloc'd; *len gets the total size). Returns NULL, and frees what
 * the buffer held, if a pack failed. The buffer is empty afterwards. */
void *px_buf_finish_frame(px_buf *b, size_t *len);
/* Hand the packed bytes to the caller (malloc'd, may be NULL when empty;
 * NULL, with the bytes freed, if a pack failed); the buffer is empty
 * afterwards. */
void *px_buf_steal(px_buf *b, size_t *len);

/* ---- packing ---- */
void px_pack_u8(px_buf *b, uint8_t v);
void px_pack_u16(px_buf *b, uint16_t v);
void px_pack_u32(px_buf *b, uint32_t v);
void px_pack_u64(px_buf *b, uint64_t v);
void px_pack_i32(px_buf *b, int32_t v);
void px_pack_i64(px_buf *b, int64_t v);
void px_pack_double(px_buf *b, double v);
void px_pack_float(px_buf *b, float v);
void px_pack_bool(px_buf *b, bool v);
void px_pack_str(px_buf *b, const char *s);             /* NULL allowed */
void px_pack_bytes(px_buf *b, const void *p, size_t n); /* u32 length + bytes */
void px_pack_raw(px_buf *b, const void *p, size_t n);   /* bytes, no length */
/* A NULL-terminated string array (NULL allowed): u32 count, 0xffffffff for
 * NULL, then the strings. */
void px_pack_argv(px_buf *b, char *const *argv);
void px_pack_proc(px_buf *b, const pmix_proc_t *p);
void px_pack_procs(px_buf *b, const pmix_proc_t *p, size_t n); /* u64 count + procs */
void px_pack_value(px_buf *b, const pmix_value_t *v);
void px_pack_info(px_buf *b, const pmix_info_t *info, size_t n); /* u64 count + infos */
/* One item of any data type the Standard defines, `src` pointing at an
 * object of that type (for PMIX_STRING a `char **`, for PMIX_VALUE a
 * `pmix_value_t *`, for PMIX_DATA_ARRAY a `pmix_data_array_t *`, for
 * PMIX_REGEX and the compressed types a `pmix_byte_object_t *` ...). A
 * refused or unknown type becomes the buffer's sticky error. */
void px_pack_typed(px_buf *b, const void *src, pmix_data_type_t type);

/* ---- unpacking ----
 * The scalar, string and bytes functions accept a NULL output pointer and
 * then only check and skip the item. */
static inline pmix_status_t px_unpack_u8(px_buf *b, uint8_t *v)
{
    const uint8_t *p = px_wire_take(b, 1);

    if (p == NULL) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (v != NULL) {
        *v = p[0];
    }
    return PMIX_SUCCESS;
}

static inline pmix_status_t px_unpack_u16(px_buf *b, uint16_t *v)
{
    const uint8_t *p = px_wire_take(b, 2);

    if (p == NULL) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (v != NULL) {
        *v = (uint16_t)(p[0] | (p[1] << 8));
    }
    return PMIX_SUCCESS;
}

static inline pmix_status_t px_unpack_u32(px_buf *b, uint32_t *v)
{
    const uint8_t *p = px_wire_take(b, 4);

    if (p == NULL) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (v != NULL) {
        *v = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
             ((uint32_t)p[3] << 24);
    }
    return PMIX_SUCCESS;
}
pmix_status_t px_unpack_u64(px_buf *b, uint64_t *v);
pmix_status_t px_unpack_i32(px_buf *b, int32_t *v);
pmix_status_t px_unpack_i64(px_buf *b, int64_t *v);
pmix_status_t px_unpack_double(px_buf *b, double *v);
pmix_status_t px_unpack_float(px_buf *b, float *v);
pmix_status_t px_unpack_bool(px_buf *b, bool *v);
/* A malloc'd copy (NULL if NULL was packed). Rejects embedded NULs. */
pmix_status_t px_unpack_str(px_buf *b, char **s);
/* A string into a fixed array of `cap` bytes (NUL included); longer
 * strings and NULL are rejected. For namespaces (PMIX_MAX_NSLEN+1) and keys
 * (PMIX_MAX_KEYLEN+1). */
pmix_status_t px_unpack_strbuf(px_buf *b, char *out, size_t cap);
/* Length-prefixed bytes: a malloc'd copy, or a pointer into the buffer. */
pmix_status_t px_unpack_bytes(px_buf *b, void **p, size_t *n);
pmix_status_t px_unpack_bytes_view(px_buf *b, const void **p, size_t *n);
/* Raw bytes (no length on the wire): a pointer into the buffer. */
pmix_status_t px_unpack_raw_view(px_buf *b, const void **p, size_t n);
/* A malloc'd NULL-terminated array of malloc'd strings (NULL if NULL was
 * packed), freed with PMIx_Argv_free. */
pmix_status_t px_unpack_argv(px_buf *b, char ***argv);
pmix_status_t px_unpack_proc(px_buf *b, pmix_proc_t *p);
pmix_status_t px_unpack_procs(px_buf *b, pmix_proc_t **p,
                              size_t *n); /* PMIx_Proc_create'd or NULL */
/* Fills `v` (which the caller destructs with PMIx_Value_destruct). */
pmix_status_t px_unpack_value(px_buf *b, pmix_value_t *v);
/* Allocates with PMIx_Info_create (NULL when n == 0); free with PMIx_Info_free. */
pmix_status_t px_unpack_info(px_buf *b, pmix_info_t **info, size_t *n);
/* One item of `type` into `dst` (same convention as px_pack_typed; `dst`
 * is treated as empty storage and overwritten). A type that cannot be
 * packed is refused before anything is read, with px_pack_typed's status. */
pmix_status_t px_unpack_typed(px_buf *b, void *dst, pmix_data_type_t type);

/* Skip one packed value without decoding it (for indexing collected data).
 * It checks everything px_unpack_value checks and allocates nothing. */
pmix_status_t px_skip_value(px_buf *b);

#endif /* PX_WIRE_H */
