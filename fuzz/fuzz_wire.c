/*
 * fuzz_wire.c - libFuzzer target for the codec (libpmix/src/wire).
 *
 * The first byte of the input chooses what the rest is read as:
 *
 *   0  a value (px_unpack_value), also skipped (px_skip_value);
 *   1  an info list (px_unpack_info);
 *   2  one object of the type named by the next byte (px_unpack_typed),
 *      any type value, known or not;
 *   3  a sequence of the small items (procs, argv, strings, fixed-size
 *      strings, bytes, numbers), each chosen by a byte before it;
 *   4  a byte stream of frames (px_frame_parse), each payload read as the
 *      protocol (px_proto.h) says its type holds;
 *   5  a buffer of the Standard's API (PMIx_Data_unpack), items of the
 *      types named by the input.
 *
 * Round trips. Whatever unpacks must pack again without error; the bytes
 * packed must unpack to an equal object, consuming all of them; and that
 * object must pack to the same bytes again (the encoding is canonical once
 * it went through the library, even if the input was not: a bool byte of
 * 2 is refused, but two encodings of one value are not ruled out). Objects
 * that are not equal to themselves (a NaN somewhere) skip the equality
 * check, not the byte check. A failed unpack must leave the cursor where
 * it was. A failed check aborts: libFuzzer reports it as a crash.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "common/px_common.h"
#include "common/px_types.h"
#include "fuzz_input.h"
#include "px_proto.h"
#include "store/px_store.h"
#include "wire/px_wire.h"
#include "wire/px_wire_impl.h"

enum {
    MODE_VALUE,
    MODE_INFO,
    MODE_TYPED,
    MODE_ITEMS,
    MODE_FRAMES,
    MODE_DATA,
    NMODES
};

/* Pack `obj` of `type` into a fresh buffer; the bytes (malloc'd) and length. */
static uint8_t *pack_typed(const void *obj, pmix_data_type_t type, size_t *len)
{
    px_buf b;
    uint8_t *bytes;

    px_buf_init(&b);
    px_pack_typed(&b, obj, type);
    FUZZ_CHECK(px_buf_status(&b) == PMIX_SUCCESS);
    bytes = px_buf_steal(&b, len);
    FUZZ_CHECK(*len == 0 || bytes != NULL);
    return bytes;
}

/* The round trip of one decoded object `a` of `type` (see the top). */
static void round_trip_typed(const void *a, pmix_data_type_t type)
{
    size_t size = px_type_of(type)->size, len1, len2;
    uint8_t *p1 = pack_typed(a, type, &len1), *p2;
    void *b = calloc(1, size > 0 ? size : 1);
    px_buf v;

    FUZZ_CHECK(b != NULL);
    px_buf_view(&v, p1, len1);
    FUZZ_CHECK(px_unpack_typed(&v, b, type) == PMIX_SUCCESS);
    FUZZ_CHECK(px_buf_left(&v) == 0);
    if (px_elems_equal(a, a, 1, type)) {
        FUZZ_CHECK(px_elems_equal(a, b, 1, type));
    }
    p2 = pack_typed(b, type, &len2);
    FUZZ_CHECK(len1 == len2 && (len1 == 0 || memcmp(p1, p2, len1) == 0));
    free(p1);
    free(p2);
    px_wire_destruct(b, type);
    free(b);
}

static void fuzz_value(const uint8_t *data, size_t size)
{
    px_buf b, s;
    pmix_value_t v;
    pmix_status_t rc, skip;

    px_buf_view(&b, data, size);
    rc = px_unpack_value(&b, &v);
    /* skipping checks what decoding checks, and takes the same bytes */
    px_buf_view(&s, data, size);
    skip = px_skip_value(&s);
    FUZZ_CHECK((rc == PMIX_SUCCESS) == (skip == PMIX_SUCCESS));
    if (rc != PMIX_SUCCESS) {
        FUZZ_CHECK(b.pos == 0 && s.pos == 0);
        return;
    }
    FUZZ_CHECK(b.pos == s.pos);
    round_trip_typed(&v, PMIX_VALUE);
    PMIx_Value_destruct(&v);
}

static void fuzz_info(const uint8_t *data, size_t size)
{
    px_buf b, c;
    pmix_info_t *info, *again;
    size_t n, n2, len1, len2;
    uint8_t *p1, *p2;

    px_buf_view(&b, data, size);
    if (px_unpack_info(&b, &info, &n) != PMIX_SUCCESS) {
        FUZZ_CHECK(b.pos == 0 && info == NULL && n == 0);
        return;
    }
    px_buf_init(&c);
    px_pack_info(&c, info, n);
    FUZZ_CHECK(px_buf_status(&c) == PMIX_SUCCESS);
    p1 = px_buf_steal(&c, &len1);
    px_buf_view(&b, p1, len1);
    FUZZ_CHECK(px_unpack_info(&b, &again, &n2) == PMIX_SUCCESS);
    FUZZ_CHECK(px_buf_left(&b) == 0 && n2 == n);
    if (px_elems_equal(info, info, n, PMIX_INFO)) {
        FUZZ_CHECK(px_elems_equal(info, again, n, PMIX_INFO));
    }
    px_buf_init(&c);
    px_pack_info(&c, again, n2);
    p2 = px_buf_steal(&c, &len2);
    FUZZ_CHECK(len1 == len2 && memcmp(p1, p2, len1) == 0);
    free(p1);
    free(p2);
    PMIx_Info_free(info, n);
    PMIx_Info_free(again, n2);
}

static void fuzz_typed(fuzz_in *in)
{
    pmix_data_type_t type = fuzz_u8(in);
    size_t size = px_type_of(type)->size;
    void *obj = malloc(size > 0 ? size : 1); /* exactly the object: ASan sees overruns */
    pmix_status_t rc;
    px_buf b;

    FUZZ_CHECK(obj != NULL);
    px_buf_view(&b, in->p, in->left);
    rc = px_unpack_typed(&b, obj, type);
    if (rc == PMIX_SUCCESS) {
        round_trip_typed(obj, type);
        px_wire_destruct(obj, type);
    } else {
        FUZZ_CHECK(b.pos == 0);
    }
    free(obj);
}

/* The small items, one after the other while they unpack. */
static void fuzz_items(fuzz_in *in)
{
    px_buf b;
    pmix_status_t rc = PMIX_SUCCESS;

    px_buf_view(&b, in->p, in->left);
    while (rc == PMIX_SUCCESS && px_buf_left(&b) > 0) {
        uint8_t what;
        size_t pos;

        (void)px_unpack_u8(&b, &what);
        pos = b.pos;
        switch (what % 13) {
        case 0: {
            pmix_proc_t *procs;
            size_t n;
            rc = px_unpack_procs(&b, &procs, &n);
            if (rc == PMIX_SUCCESS) {
                px_buf c;
                pmix_proc_t *again;
                size_t n2, len;
                uint8_t *bytes;
                px_buf_init(&c);
                px_pack_procs(&c, procs, n);
                bytes = px_buf_steal(&c, &len);
                FUZZ_CHECK(bytes != NULL);
                px_buf_view(&c, bytes, len);
                FUZZ_CHECK(px_unpack_procs(&c, &again, &n2) == PMIX_SUCCESS && n2 == n);
                FUZZ_CHECK(px_buf_left(&c) == 0);
                FUZZ_CHECK(n == 0 || px_elems_equal(procs, again, n, PMIX_PROC));
                PMIx_Proc_free(procs, n);
                PMIx_Proc_free(again, n2);
                free(bytes);
            }
            break;
        }
        case 1: {
            char **argv;
            rc = px_unpack_argv(&b, &argv);
            if (rc == PMIX_SUCCESS) {
                px_buf c;
                char **again;
                size_t len;
                uint8_t *bytes;
                px_buf_init(&c);
                px_pack_argv(&c, argv);
                bytes = px_buf_steal(&c, &len);
                px_buf_view(&c, bytes, len);
                FUZZ_CHECK(px_unpack_argv(&c, &again) == PMIX_SUCCESS);
                FUZZ_CHECK(px_buf_left(&c) == 0);
                FUZZ_CHECK(PMIx_Argv_count(argv) == PMIx_Argv_count(again));
                for (int i = 0; argv != NULL && argv[i] != NULL; i++) {
                    FUZZ_CHECK(strcmp(argv[i], again[i]) == 0);
                }
                PMIx_Argv_free(argv);
                PMIx_Argv_free(again);
                free(bytes);
            }
            break;
        }
        case 2: {
            char *s;
            rc = px_unpack_str(&b, &s);
            if (rc == PMIX_SUCCESS) {
                round_trip_typed(&s, PMIX_STRING);
                free(s);
            }
            break;
        }
        case 3: {
            char key[PMIX_MAX_KEYLEN + 1];
            rc = px_unpack_strbuf(&b, key, sizeof(key));
            if (rc == PMIX_SUCCESS) {
                FUZZ_CHECK(strlen(key) < sizeof(key));
            }
            break;
        }
        case 4: {
            pmix_nspace_t ns;
            rc = px_unpack_strbuf(&b, ns, sizeof(ns));
            if (rc == PMIX_SUCCESS) {
                FUZZ_CHECK(strlen(ns) < sizeof(ns));
            }
            break;
        }
        case 5: {
            void *p;
            const void *view;
            size_t n, nview, at = b.pos;
            rc = px_unpack_bytes(&b, &p, &n);
            if (rc == PMIX_SUCCESS) {
                b.pos = at;
                FUZZ_CHECK(px_unpack_bytes_view(&b, &view, &nview) == PMIX_SUCCESS);
                FUZZ_CHECK(nview == n && (n == 0 || memcmp(p, view, n) == 0));
                free(p);
            }
            break;
        }
        case 6: rc = px_unpack_bool(&b, &(bool){false}); break;
        case 7: rc = px_unpack_double(&b, &(double){0}); break;
        case 8: rc = px_unpack_float(&b, &(float){0}); break;
        case 9: rc = px_unpack_i64(&b, &(int64_t){0}); break;
        case 10: rc = px_unpack_i32(&b, &(int32_t){0}); break;
        /* the NULL forms only check and skip */
        case 11: rc = px_unpack_str(&b, NULL); break;
        default: rc = px_unpack_bytes(&b, NULL, NULL); break;
        }
        if (rc != PMIX_SUCCESS) {
            FUZZ_CHECK(b.pos == pos);
        }
    }
}

/* The payload of a frame of `type`, read as px_proto.h lays it out. */
static void read_payload(uint16_t type, px_buf *b)
{
    pmix_proc_t proc, *procs = NULL;
    pmix_info_t *info = NULL;
    size_t nprocs = 0, ninfo = 0;
    int32_t status;
    uint32_t u32;
    uint8_t u8;
    char *s = NULL;
    void *bytes = NULL;
    size_t nbytes;

    switch (type) {
    case PX_MSG_HELLO:
        if (px_unpack_u32(b, &u32) == PMIX_SUCCESS && px_unpack_proc(b, &proc) == PMIX_SUCCESS &&
            px_unpack_u32(b, &u32) == PMIX_SUCCESS)
            (void)px_unpack_info(b, &info, &ninfo);
        break;
    case PX_MSG_WELCOME:
        if (px_unpack_i32(b, &status) == PMIX_SUCCESS && px_unpack_u8(b, &u8) == PMIX_SUCCESS) {
            px_store *st = px_store_create();
            FUZZ_CHECK(st != NULL);
            (void)px_store_unpack_job(st, b);
            px_store_destroy(st);
        }
        break;
    case PX_MSG_ABORT:
        if (px_unpack_i32(b, &status) == PMIX_SUCCESS && px_unpack_str(b, &s) == PMIX_SUCCESS)
            (void)px_unpack_procs(b, &procs, &nprocs);
        break;
    case PX_MSG_FENCE:
        if (px_unpack_procs(b, &procs, &nprocs) == PMIX_SUCCESS &&
            px_unpack_info(b, &info, &ninfo) == PMIX_SUCCESS)
            (void)px_unpack_u8(b, &u8);
        break;
    case PX_MSG_FENCE_DONE:
    case PX_MSG_GET_DONE:
        if (px_unpack_i32(b, &status) == PMIX_SUCCESS && px_unpack_u8(b, &u8) == PMIX_SUCCESS)
            (void)px_unpack_bytes(b, &bytes, &nbytes);
        break;
    case PX_MSG_GET:
        if (px_unpack_proc(b, &proc) == PMIX_SUCCESS && px_unpack_str(b, &s) == PMIX_SUCCESS)
            (void)px_unpack_info(b, &info, &ninfo);
        break;
    case PX_MSG_NOTIFY:
    case PX_MSG_EVENT:
        if (px_unpack_i32(b, &status) == PMIX_SUCCESS && px_unpack_proc(b, &proc) == PMIX_SUCCESS &&
            px_unpack_u8(b, &u8) == PMIX_SUCCESS)
            (void)px_unpack_info(b, &info, &ninfo);
        break;
    case PX_MSG_JCTRL:
        if (px_unpack_procs(b, &procs, &nprocs) == PMIX_SUCCESS)
            (void)px_unpack_info(b, &info, &ninfo);
        break;
    case PX_MSG_INFO_DONE:
        if (px_unpack_i32(b, &status) == PMIX_SUCCESS)
            (void)px_unpack_info(b, &info, &ninfo);
        break;
    case PX_MSG_QUERY:
        if (px_unpack_u32(b, &u32) == PMIX_SUCCESS) {
            for (uint32_t i = 0; i < u32 && i < 64; i++) {
                char **keys = NULL;
                pmix_info_t *qual = NULL;
                size_t nqual = 0;
                if (px_unpack_argv(b, &keys) != PMIX_SUCCESS)
                    break;
                PMIx_Argv_free(keys);
                if (px_unpack_info(b, &qual, &nqual) != PMIX_SUCCESS)
                    break;
                PMIx_Info_free(qual, nqual);
            }
        }
        break;
    default: (void)px_unpack_i32(b, &status); break;
    }
    PMIx_Proc_free(procs, nprocs);
    PMIx_Info_free(info, ninfo);
    free(s);
    free(bytes);
}

/* Frames back to back, as a platform reads them from a stream. Each one
 * framed again from its type, tag and payload gives the same bytes. */
static void fuzz_frames(fuzz_in *in)
{
    const uint8_t *p = in->p;
    size_t left = in->left;
    px_frame_hdr hdr;

    while (px_frame_parse(p, left, 1u << 16, &hdr) == PMIX_SUCCESS) {
        size_t flen = PX_FRAME_HDR + (size_t)hdr.len, len;
        px_buf b;
        uint8_t *again;

        if (flen > left) {
            break; /* a platform would wait for the rest */
        }
        px_buf_init_frame(&b, hdr.type, hdr.tag);
        px_pack_raw(&b, p + PX_FRAME_HDR, hdr.len);
        again = px_buf_finish_frame(&b, &len);
        FUZZ_CHECK(again != NULL && len == flen && memcmp(again, p, flen) == 0);
        free(again);
        px_buf_view_payload(&b, p, flen);
        FUZZ_CHECK(px_buf_left(&b) == hdr.len);
        read_payload(hdr.type, &b);
        p += flen;
        left -= flen;
    }
}

/* PMIx_Data_unpack: the next byte names a type, the next one how many
 * items to ask for; the rest of the input is the buffer. */
static void fuzz_data(fuzz_in *in)
{
    pmix_data_type_t types[4];
    int32_t want[4];
    pmix_data_buffer_t buf;
    char *copy;

    for (int i = 0; i < 4; i++) {
        types[i] = fuzz_u8(in);
        want[i] = 1 + fuzz_u8(in) % 4;
    }
    copy = malloc(in->left > 0 ? in->left : 1);
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, in->p, in->left);
    PMIx_Data_buffer_construct(&buf);
    PMIx_Data_buffer_load(&buf, copy, in->left); /* the buffer owns the copy */
    for (int i = 0; i < 4; i++) {
        size_t size = px_type_of(types[i])->size;
        int32_t n = want[i];
        char *out = calloc((size_t)n, size > 0 ? size : 1);
        pmix_status_t rc;

        FUZZ_CHECK(out != NULL);
        rc = PMIx_Data_unpack(NULL, &buf, out, &n, types[i]);
        if (rc == PMIX_SUCCESS || rc == PMIX_ERR_UNPACK_INADEQUATE_SPACE) {
            FUZZ_CHECK(n >= 0 && n <= want[i]);
            for (int32_t k = 0; k < n; k++) {
                round_trip_typed(out + (size_t)k * size, types[i]);
                px_wire_destruct(out + (size_t)k * size, types[i]);
            }
        }
        free(out);
    }
    PMIx_Data_buffer_destruct(&buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in;

    fuzz_in_init(&in, data, size);
    switch (fuzz_u8(&in) % NMODES) {
    case MODE_VALUE: fuzz_value(in.p, in.left); break;
    case MODE_INFO: fuzz_info(in.p, in.left); break;
    case MODE_TYPED: fuzz_typed(&in); break;
    case MODE_ITEMS: fuzz_items(&in); break;
    case MODE_FRAMES: fuzz_frames(&in); break;
    case MODE_DATA: fuzz_data(&in); break;
    }
    return 0;
}
