/*
 * unpack.c - the decoder: the mirror of pack.c (which documents the
 * layouts), hardened against anything a peer can send.
 *
 * One function, dec_obj(), decodes an object of any type into caller
 * memory that starts zeroed. Like the encoder it switches on the shape in
 * the type's row of the table of data types (common/px_types.def); the row
 * also gives the element size and least encoded size that bound an array
 * before it is allocated. It fills the object member by member and keeps
 * it destructible at every step: an array is allocated zeroed and its count
 * set before its elements are decoded, so when a decode fails half way,
 * px_wire_destruct() on the whole object frees exactly what was built. The
 * entry points (px_wire_decode, px_unpack_*) do that and put the cursor
 * back, so a failed unpack leaves nothing allocated and nothing consumed.
 *
 * With a NULL destination dec_obj() only validates and skips: the same code
 * checks the same things and allocates nothing, which is what
 * px_skip_value() needs to index collected data.
 *
 * Limits. Every read goes through px_wire_take(), so nothing is read past
 * the end. A count from the wire is checked against the bytes that remain,
 * at the least encoded size of its element type (its row), before the
 * array is allocated: a forged count costs at most the element size over
 * its least encoded size times the message length. Containers nest at most
 * PX_WIRE_MAX_DEPTH deep, which bounds the recursion: a level is a data
 * array, or a value that holds a value, info, pdata, app or query, and every
 * cycle in the type graph goes through one of those.
 *
 * Errors: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER for a message that ends
 * early or a count larger than what remains; PMIX_ERR_UNKNOWN_DATA_TYPE for
 * a type this library does not know; PMIX_ERR_UNPACK_FAILURE for anything
 * else malformed (a bool that is not 0 or 1, a string with a NUL or over
 * the limits, a refused type, nesting too deep); PMIX_ERR_NOMEM.
 */
#include <stdlib.h>
#include <string.h>

#include <pmix_common.h>

#include "common/px_types.h"
#include "wire/px_wire.h"
#include "wire/px_wire_impl.h"

#define ARGV_NULL 0xffffffffu
#define W_STR 4

_Static_assert(sizeof(int) == 4 && sizeof(unsigned int) == 4, "32-bit int expected");
_Static_assert(sizeof(pmix_status_t) == 4, "32-bit pmix_status_t expected");

static pmix_status_t dec_obj(px_buf *b, void *dst, pmix_data_type_t type);

/* Could `n` elements of at least `min` bytes each still be in the buffer?
 * Also keeps n * size from overflowing. */
static pmix_status_t check_count(const px_buf *b, uint64_t n, size_t min, size_t size)
{
    if (n > px_buf_left(b) / min) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER;
    }
    if (size > 0 && n > SIZE_MAX / size) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    return PMIX_SUCCESS;
}

/* The row of an element or value type for decoding: unknown types and
 * refused ones are malformed input here. */
static pmix_status_t wire_row(pmix_data_type_t type, const px_type **row)
{
    const px_type *t = px_type_of(type);

    *row = t;
    if (t->wire == PMIX_SUCCESS || t->wire == PMIX_ERR_UNKNOWN_DATA_TYPE) {
        return t->wire;
    }
    return PMIX_ERR_UNPACK_FAILURE;
}

/* A u64 count followed by `n` objects of `type`, into a new zeroed array
 * (`*array` and `*n` are set before the elements are decoded). */
static pmix_status_t dec_array(px_buf *b, void **array, size_t *n, pmix_data_type_t type)
{
    uint64_t count;
    const px_type *t;
    pmix_status_t rc;
    char *elems = NULL;

    rc = wire_row(type, &t);
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u64(b, &count);
    }
    if (rc == PMIX_SUCCESS) {
        rc = check_count(b, count, t->min, t->size);
    }
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (count > 0 && t->size == 0) {
        return PMIX_ERR_UNPACK_FAILURE; /* elements of PMIX_UNDEF */
    }
    if (array != NULL && count > 0) {
        elems = calloc((size_t)count, t->size);
        if (elems == NULL) {
            return PMIX_ERR_NOMEM;
        }
        *array = elems;
        *n = (size_t)count;
    }
    for (size_t i = 0; i < count; i++) {
        rc = dec_obj(b, elems != NULL ? elems + i * t->size : NULL, type);
        if (rc != PMIX_SUCCESS) {
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

/* An info list, allocated the way PMIx_Info_free() expects. */
static pmix_status_t dec_infos(px_buf *b, pmix_info_t **info, size_t *n)
{
    uint64_t count;
    const px_type *t = px_type_of(PMIX_INFO);
    pmix_status_t rc;
    pmix_info_t *p = NULL;

    rc = px_unpack_u64(b, &count);
    if (rc == PMIX_SUCCESS) {
        rc = check_count(b, count, t->min, t->size);
    }
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (info != NULL && count > 0) {
        p = PMIx_Info_create((size_t)count);
        if (p == NULL) {
            return PMIX_ERR_NOMEM;
        }
        *info = p;
        *n = (size_t)count;
    }
    for (size_t i = 0; i < count; i++) {
        rc = dec_obj(b, p != NULL ? &p[i] : NULL, PMIX_INFO);
        if (rc != PMIX_SUCCESS) {
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t dec_argv(px_buf *b, char ***argv)
{
    uint32_t count;
    pmix_status_t rc = px_unpack_u32(b, &count);
    char **v = NULL;

    if (rc != PMIX_SUCCESS || count == ARGV_NULL) {
        return rc;
    }
    rc = check_count(b, count, W_STR, sizeof(char *));
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (argv != NULL) {
        v = calloc((size_t)count + 1, sizeof(char *));
        if (v == NULL) {
            return PMIX_ERR_NOMEM;
        }
        *argv = v; /* NULL-terminated at every step */
    }
    for (uint32_t i = 0; i < count; i++) {
        size_t pos = b->pos;
        uint32_t len;

        /* A NULL element would end the array early: refuse it. */
        rc = px_unpack_u32(b, &len);
        if (rc == PMIX_SUCCESS && len == ARGV_NULL) {
            rc = PMIX_ERR_UNPACK_FAILURE;
        }
        if (rc != PMIX_SUCCESS) {
            return rc;
        }
        b->pos = pos;
        rc = px_unpack_str(b, v != NULL ? &v[i] : NULL);
        if (rc != PMIX_SUCCESS) {
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t dec_str(px_buf *b, char **s)
{
    return px_unpack_str(b, s);
}

static pmix_status_t dec_size(px_buf *b, size_t *v)
{
    uint64_t u;
    pmix_status_t rc = px_unpack_u64(b, &u);

    if (rc == PMIX_SUCCESS && u > SIZE_MAX) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (rc == PMIX_SUCCESS && v != NULL) {
        *v = (size_t)u;
    }
    return rc;
}

static pmix_status_t dec_tv(px_buf *b, struct timeval *tv)
{
    int64_t sec, usec;
    pmix_status_t rc = px_unpack_i64(b, &sec);

    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_i64(b, &usec);
    }
    if (rc == PMIX_SUCCESS && tv != NULL) {
        tv->tv_sec = (time_t)sec;
        tv->tv_usec = (suseconds_t)usec;
    }
    return rc;
}

static pmix_status_t dec_proc(px_buf *b, pmix_proc_t *p)
{
    pmix_status_t rc = px_unpack_strbuf(b, p != NULL ? p->nspace : NULL, PMIX_MAX_NSLEN + 1);

    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u32(b, p != NULL ? &p->rank : NULL);
    }
    return rc;
}

/* Member-by-member helpers: `o` is NULL when skipping. */
#define M(o, field) ((o) != NULL ? &(o)->field : NULL)

static pmix_status_t dec_darray(px_buf *b, pmix_data_array_t *d)
{
    uint16_t type;
    pmix_status_t rc;

    if (b->depth >= PX_WIRE_MAX_DEPTH) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    rc = px_unpack_u16(b, &type);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (d != NULL) {
        d->type = type;
    }
    b->depth++;
    rc = dec_array(b, M(d, array), M(d, size), type);
    b->depth--;
    return rc;
}

static pmix_status_t dec_value(px_buf *b, pmix_value_t *v)
{
    uint16_t type;
    uint8_t flag;
    const px_type *t = NULL;
    pmix_status_t rc = px_unpack_u16(b, &type);
    void *obj = NULL;

    if (rc == PMIX_SUCCESS) {
        rc = wire_row(type, &t);
    }
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (v != NULL) {
        v->type = type;
    }
    if (type == PMIX_UNDEF) {
        return PMIX_SUCCESS;
    }
    if (t->hold != PX_HOLD_BOXED && t->hold != PX_HOLD_NESTED) {
        return dec_obj(b, M(v, data), type);
    }
    rc = px_unpack_u8(b, &flag);
    if (rc != PMIX_SUCCESS || flag == 0) {
        return rc;
    }
    if (flag != 1) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (t->min > px_buf_left(b)) {
        return PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER; /* before allocating */
    }
    if (t->hold == PX_HOLD_NESTED && b->depth >= PX_WIRE_MAX_DEPTH) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    if (v != NULL) {
        obj = calloc(1, t->size);
        if (obj == NULL) {
            return PMIX_ERR_NOMEM;
        }
        /* Every pointer member of the union starts at the union's start;
         * once stored, PMIx_Value_destruct() owns it. */
        memcpy(&v->data, &obj, sizeof(obj));
    }
    if (t->hold != PX_HOLD_NESTED) {
        return dec_obj(b, obj, type);
    }
    b->depth++; /* a value inside a value: one nesting level */
    rc = dec_obj(b, obj, type);
    b->depth--;
    return rc;
}

static pmix_status_t dec_info(px_buf *b, pmix_info_t *info)
{
    pmix_status_t rc = px_unpack_strbuf(b, info != NULL ? info->key : NULL, PMIX_MAX_KEYLEN + 1);

    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u32(b, M(info, flags));
    }
    if (rc == PMIX_SUCCESS) {
        rc = dec_value(b, M(info, value));
    }
    return rc;
}

static pmix_status_t dec_coord(px_buf *b, pmix_coord_t *c)
{
    uint64_t dims;
    pmix_status_t rc = dec_str(b, M(c, fabric));

    if (rc == PMIX_SUCCESS) {
        rc = dec_str(b, M(c, plane));
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u8(b, M(c, view));
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u64(b, &dims);
    }
    if (rc == PMIX_SUCCESS) {
        rc = check_count(b, dims, 4, sizeof(uint32_t));
    }
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (c != NULL && dims > 0) {
        c->coord = calloc((size_t)dims, sizeof(uint32_t));
        if (c->coord == NULL) {
            return PMIX_ERR_NOMEM;
        }
        c->dims = (size_t)dims;
    }
    for (size_t i = 0; i < dims && rc == PMIX_SUCCESS; i++) {
        rc = px_unpack_u32(b, c != NULL ? &c->coord[i] : NULL);
    }
    return rc;
}

static pmix_status_t dec_data_buffer(px_buf *b, pmix_data_buffer_t *d)
{
    void *bytes = NULL;
    size_t n = 0;
    pmix_status_t rc = px_unpack_bytes(b, d != NULL ? &bytes : NULL, &n);

    if (rc == PMIX_SUCCESS && d != NULL && bytes != NULL) {
        d->base_ptr = bytes;
        d->pack_ptr = d->base_ptr + n;
        d->unpack_ptr = d->base_ptr;
        d->bytes_allocated = n;
        d->bytes_used = n;
    }
    return rc;
}

static pmix_status_t dec_floats(px_buf *b, float *const *f, size_t n)
{
    pmix_status_t rc = PMIX_SUCCESS;

    for (size_t i = 0; i < n && rc == PMIX_SUCCESS; i++) {
        rc = px_unpack_float(b, f[i]);
    }
    return rc;
}

static pmix_status_t dec_u64s(px_buf *b, uint64_t *const *u, size_t n)
{
    pmix_status_t rc = PMIX_SUCCESS;

    for (size_t i = 0; i < n && rc == PMIX_SUCCESS; i++) {
        rc = px_unpack_u64(b, u[i]);
    }
    return rc;
}

static pmix_status_t dec_proc_stats(px_buf *b, pmix_proc_stats_t *s)
{
    int32_t pid = 0;
    uint8_t state = 0;
    float *const f[] = {M(s, pss), M(s, vsize), M(s, rss), M(s, peak_vsize)};
    pmix_status_t rc = dec_str(b, M(s, node));

    if (rc == PMIX_SUCCESS) {
        rc = dec_proc(b, M(s, proc));
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_i32(b, &pid);
    }
    if (rc == PMIX_SUCCESS) {
        rc = dec_str(b, M(s, cmd));
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u8(b, &state);
    }
    if (rc == PMIX_SUCCESS) {
        rc = dec_tv(b, M(s, time));
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_float(b, M(s, percent_cpu));
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_i32(b, M(s, priority));
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u16(b, M(s, num_threads));
    }
    if (rc == PMIX_SUCCESS) {
        rc = dec_floats(b, f, sizeof(f) / sizeof(f[0]));
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_u16(b, M(s, processor));
    }
    if (rc == PMIX_SUCCESS) {
        rc = dec_tv(b, M(s, sample_time));
    }
    if (rc == PMIX_SUCCESS && s != NULL) {
        s->pid = (pid_t)pid;
        s->state = (char)state;
    }
    return rc;
}

static pmix_status_t dec_disk_stats(px_buf *b, pmix_disk_stats_t *s)
{
    uint64_t *const u[] = {
        M(s, num_reads_completed),  M(s, num_reads_merged),        M(s, num_sectors_read),
        M(s, milliseconds_reading), M(s, num_writes_completed),    M(s, num_writes_merged),
        M(s, num_sectors_written),  M(s, milliseconds_writing),    M(s, num_ios_in_progress),
        M(s, milliseconds_io),      M(s, weighted_milliseconds_io)};
    pmix_status_t rc = dec_str(b, M(s, disk));

    if (rc == PMIX_SUCCESS) {
        rc = dec_u64s(b, u, sizeof(u) / sizeof(u[0]));
    }
    return rc;
}

static pmix_status_t dec_net_stats(px_buf *b, pmix_net_stats_t *s)
{
    uint64_t *const u[] = {M(s, num_bytes_recvd), M(s, num_packets_recvd), M(s, num_recv_errs),
                           M(s, num_bytes_sent),  M(s, num_packets_sent),  M(s, num_send_errs)};
    pmix_status_t rc = dec_str(b, M(s, net_interface));

    if (rc == PMIX_SUCCESS) {
        rc = dec_u64s(b, u, sizeof(u) / sizeof(u[0]));
    }
    return rc;
}

static pmix_status_t dec_node_stats(px_buf *b, pmix_node_stats_t *s)
{
    float *const f[] = {M(s, la),         M(s, la5),       M(s, la15),   M(s, total_mem),
                        M(s, free_mem),   M(s, buffers),   M(s, cached), M(s, swap_cached),
                        M(s, swap_total), M(s, swap_free), M(s, mapped)};
    pmix_status_t rc = dec_str(b, M(s, node));

    if (rc == PMIX_SUCCESS) {
        rc = dec_floats(b, f, sizeof(f) / sizeof(f[0]));
    }
    if (rc == PMIX_SUCCESS) {
        rc = dec_tv(b, M(s, sample_time));
    }
    if (rc == PMIX_SUCCESS) {
        rc = dec_array(b, s != NULL ? (void **)&s->diskstats : NULL, M(s, ndiskstats),
                       PMIX_DISK_STATS);
    }
    if (rc == PMIX_SUCCESS) {
        rc =
            dec_array(b, s != NULL ? (void **)&s->netstats : NULL, M(s, nnetstats), PMIX_NET_STATS);
    }
    return rc;
}

/* Decode one object into zeroed memory at `dst` (or skip it when NULL).
 * May leave `dst` partly built on failure; the caller destructs it. */
static pmix_status_t dec_obj(px_buf *b, void *dst, pmix_data_type_t type)
{
    const px_type *row = px_type_of(type);
    pmix_status_t rc;

    switch (row->shape) {
    case PX_SHAPE_NONE:
        /* PMIX_UNDEF has no payload; the other types without a C form
         * are refused, and unknown ones are unknown. */
        if (type == PMIX_UNDEF) {
            return PMIX_SUCCESS;
        }
        return row->wire == PMIX_ERR_UNKNOWN_DATA_TYPE ? row->wire : PMIX_ERR_UNPACK_FAILURE;
    case PX_SHAPE_POINTER:
    case PX_SHAPE_TOPO: return PMIX_ERR_UNPACK_FAILURE; /* refused by their rows */
    case PX_SHAPE_BOOL: return px_unpack_bool(b, dst);
    case PX_SHAPE_U8: return px_unpack_u8(b, dst);
    case PX_SHAPE_U16: return px_unpack_u16(b, dst);
    case PX_SHAPE_U32: return px_unpack_u32(b, dst);
    case PX_SHAPE_PID: {
        int32_t pid;
        rc = px_unpack_i32(b, &pid);
        if (rc == PMIX_SUCCESS && dst != NULL) {
            *(pid_t *)dst = (pid_t)pid;
        }
        return rc;
    }
    case PX_SHAPE_U64: return px_unpack_u64(b, dst);
    case PX_SHAPE_SIZE: return dec_size(b, dst);
    case PX_SHAPE_FLOAT: return px_unpack_float(b, dst);
    case PX_SHAPE_DOUBLE: return px_unpack_double(b, dst);
    case PX_SHAPE_TIMEVAL: return dec_tv(b, dst);
    case PX_SHAPE_TIME: {
        int64_t t;
        rc = px_unpack_i64(b, &t);
        if (rc == PMIX_SUCCESS && dst != NULL) {
            *(time_t *)dst = (time_t)t;
        }
        return rc;
    }
    case PX_SHAPE_STRING: return dec_str(b, dst);
    case PX_SHAPE_NSPACE: return px_unpack_strbuf(b, dst, PMIX_MAX_NSLEN + 1);
    case PX_SHAPE_PROC: return dec_proc(b, dst);
    case PX_SHAPE_BYTES: {
        pmix_byte_object_t *bo = dst;
        return px_unpack_bytes(b, bo != NULL ? (void **)&bo->bytes : NULL, M(bo, size));
    }
    case PX_SHAPE_PROC_INFO: {
        pmix_proc_info_t *pi = dst;
        int32_t pid = 0;
        rc = dec_proc(b, M(pi, proc));
        if (rc == PMIX_SUCCESS) {
            rc = dec_str(b, M(pi, hostname));
        }
        if (rc == PMIX_SUCCESS) {
            rc = dec_str(b, M(pi, executable_name));
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_i32(b, &pid);
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_i32(b, M(pi, exit_code));
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_u8(b, M(pi, state));
        }
        if (rc == PMIX_SUCCESS && pi != NULL) {
            pi->pid = (pid_t)pid;
        }
        return rc;
    }
    case PX_SHAPE_DARRAY: return dec_darray(b, dst);
    case PX_SHAPE_ENVAR: {
        pmix_envar_t *e = dst;
        uint8_t sep = 0;
        rc = dec_str(b, M(e, envar));
        if (rc == PMIX_SUCCESS) {
            rc = dec_str(b, M(e, value));
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_u8(b, &sep);
        }
        if (rc == PMIX_SUCCESS && e != NULL) {
            e->separator = (char)sep;
        }
        return rc;
    }
    case PX_SHAPE_COORD: return dec_coord(b, dst);
    case PX_SHAPE_REGATTR: {
        pmix_regattr_t *r = dst;
        rc = dec_str(b, M(r, name));
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_strbuf(b, r != NULL ? r->string : NULL, PMIX_MAX_KEYLEN + 1);
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_u16(b, M(r, type));
        }
        if (rc == PMIX_SUCCESS) {
            rc = dec_argv(b, M(r, description));
        }
        return rc;
    }
    case PX_SHAPE_CPUSET: {
        pmix_cpuset_t *c = dst;
        return dec_str(b, M(c, source));
    }
    case PX_SHAPE_GEOMETRY: {
        pmix_geometry_t *g = dst;
        rc = dec_size(b, M(g, fabric));
        if (rc == PMIX_SUCCESS) {
            rc = dec_str(b, M(g, uuid));
        }
        if (rc == PMIX_SUCCESS) {
            rc = dec_str(b, M(g, osname));
        }
        if (rc == PMIX_SUCCESS) {
            rc = dec_array(b, g != NULL ? (void **)&g->coordinates : NULL, M(g, ncoords),
                           PMIX_COORD);
        }
        return rc;
    }
    case PX_SHAPE_DEVICE_DIST: {
        pmix_device_distance_t *d = dst;
        rc = dec_str(b, M(d, uuid));
        if (rc == PMIX_SUCCESS) {
            rc = dec_str(b, M(d, osname));
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_u64(b, M(d, type));
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_u16(b, M(d, mindist));
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_u16(b, M(d, maxdist));
        }
        return rc;
    }
    case PX_SHAPE_ENDPOINT: {
        pmix_endpoint_t *e = dst;
        rc = dec_str(b, M(e, uuid));
        if (rc == PMIX_SUCCESS) {
            rc = dec_str(b, M(e, osname));
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_bytes(b, e != NULL ? (void **)&e->endpt.bytes : NULL, M(e, endpt.size));
        }
        return rc;
    }
    case PX_SHAPE_DATA_BUFFER: return dec_data_buffer(b, dst);
    case PX_SHAPE_VALUE: return dec_value(b, dst);
    case PX_SHAPE_INFO: return dec_info(b, dst);
    case PX_SHAPE_PDATA: {
        pmix_pdata_t *p = dst;
        rc = dec_proc(b, M(p, proc));
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_strbuf(b, p != NULL ? p->key : NULL, PMIX_MAX_KEYLEN + 1);
        }
        if (rc == PMIX_SUCCESS) {
            rc = dec_value(b, M(p, value));
        }
        return rc;
    }
    case PX_SHAPE_APP: {
        pmix_app_t *a = dst;
        rc = dec_str(b, M(a, cmd));
        if (rc == PMIX_SUCCESS) {
            rc = dec_argv(b, M(a, argv));
        }
        if (rc == PMIX_SUCCESS) {
            rc = dec_argv(b, M(a, env));
        }
        if (rc == PMIX_SUCCESS) {
            rc = dec_str(b, M(a, cwd));
        }
        if (rc == PMIX_SUCCESS) {
            rc = px_unpack_i32(b, (int32_t *)M(a, maxprocs));
        }
        if (rc == PMIX_SUCCESS) {
            rc = dec_infos(b, M(a, info), M(a, ninfo));
        }
        return rc;
    }
    case PX_SHAPE_QUERY: {
        pmix_query_t *q = dst;
        rc = dec_argv(b, M(q, keys));
        if (rc == PMIX_SUCCESS) {
            rc = dec_infos(b, M(q, qualifiers), M(q, nqual));
        }
        return rc;
    }
    case PX_SHAPE_PROC_STATS: return dec_proc_stats(b, dst);
    case PX_SHAPE_DISK_STATS: return dec_disk_stats(b, dst);
    case PX_SHAPE_NET_STATS: return dec_net_stats(b, dst);
    case PX_SHAPE_NODE_STATS: return dec_node_stats(b, dst);
    }
    return PMIX_ERR_UNPACK_FAILURE;
}

pmix_status_t px_wire_decode(px_buf *b, void *dst, pmix_data_type_t type)
{
    size_t pos = b->pos;
    int depth = b->depth;
    size_t size = px_type_of(type)->size;
    pmix_status_t rc;

    if (dst != NULL && size > 0) {
        memset(dst, 0, size);
    }
    rc = dec_obj(b, dst, type);
    if (rc != PMIX_SUCCESS) {
        px_wire_destruct(dst, type);
        b->pos = pos;
        b->depth = depth;
    }
    return rc;
}

pmix_status_t px_wire_decode_value(px_buf *b, pmix_value_t *v)
{
    return px_wire_decode(b, v, PMIX_VALUE);
}

/* ---- public entry points ---- */

pmix_status_t px_unpack_argv(px_buf *b, char ***argv)
{
    size_t pos = b->pos;
    char **v = NULL;
    pmix_status_t rc = dec_argv(b, argv != NULL ? &v : NULL);

    if (rc != PMIX_SUCCESS) {
        if (v != NULL) {
            for (char **p = v; *p != NULL; p++) {
                free(*p);
            }
            free(v);
            v = NULL;
        }
        b->pos = pos;
    }
    if (argv != NULL) {
        *argv = v;
    }
    return rc;
}

pmix_status_t px_unpack_proc(px_buf *b, pmix_proc_t *p)
{
    return px_wire_decode(b, p, PMIX_PROC);
}

pmix_status_t px_unpack_procs(px_buf *b, pmix_proc_t **p, size_t *n)
{
    size_t pos = b->pos;
    uint64_t count;
    pmix_proc_t *procs = NULL;
    const px_type *t = px_type_of(PMIX_PROC);
    pmix_status_t rc;

    *p = NULL;
    *n = 0;
    rc = px_unpack_u64(b, &count);
    if (rc == PMIX_SUCCESS) {
        rc = check_count(b, count, t->min, t->size);
    }
    if (rc == PMIX_SUCCESS && count > 0) {
        procs = PMIx_Proc_create((size_t)count);
        if (procs == NULL) {
            rc = PMIX_ERR_NOMEM;
        }
    }
    for (size_t i = 0; rc == PMIX_SUCCESS && i < count; i++) {
        rc = dec_proc(b, &procs[i]);
    }
    if (rc != PMIX_SUCCESS) {
        PMIx_Proc_free(procs, (size_t)count);
        b->pos = pos;
        return rc;
    }
    *p = procs;
    *n = (size_t)count;
    return PMIX_SUCCESS;
}

pmix_status_t px_unpack_value(px_buf *b, pmix_value_t *v)
{
    size_t pos = b->pos;
    uint16_t type;
    pmix_status_t rc;

    if (v == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* A byte object (what MPI libraries put: their business cards) goes
     * straight to its bytes, without the general walk's two type lookups
     * and two dispatches (decoding one in a local Get, malloc and copy
     * included: about 555 -> 385 instructions). */
    if (px_unpack_u16(b, &type) == PMIX_SUCCESS && type == PMIX_BYTE_OBJECT) {
        PMIx_Value_construct(v);
        v->type = PMIX_BYTE_OBJECT;
        rc = px_unpack_bytes(b, (void **)&v->data.bo.bytes, &v->data.bo.size);
        if (rc != PMIX_SUCCESS) {
            PMIx_Value_construct(v);
            b->pos = pos;
        }
        return rc;
    }
    b->pos = pos;
    return px_wire_decode(b, v, PMIX_VALUE);
}

pmix_status_t px_unpack_info(px_buf *b, pmix_info_t **info, size_t *n)
{
    size_t pos = b->pos;
    pmix_info_t *p = NULL;
    size_t count = 0;
    pmix_status_t rc = dec_infos(b, &p, &count);

    if (rc != PMIX_SUCCESS) {
        PMIx_Info_free(p, count);
        p = NULL;
        count = 0;
        b->pos = pos;
    }
    *info = p;
    *n = count;
    return rc;
}

pmix_status_t px_unpack_typed(px_buf *b, void *dst, pmix_data_type_t type)
{
    pmix_status_t rc = px_type_of(type)->wire;

    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (dst == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    return px_wire_decode(b, dst, type);
}

pmix_status_t px_skip_value(px_buf *b)
{
    return px_wire_decode(b, NULL, PMIX_VALUE);
}
