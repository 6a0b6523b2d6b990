/*
 * pack.c - the encoder: every data type of the Standard, object by object.
 *
 * pack_obj() writes one object of a given type; the public px_pack_*
 * functions are thin entries into it. It reads the type's row in the
 * table of data types (common/px_types.def), which says whether the type
 * may cross the wire at all, and switches on the row's shape: all the
 * types of one shape (the one-byte enumerations, the byte-object types)
 * are encoded by one case, and a new type of an existing shape needs
 * nothing here.
 *
 * A value is its u16 type followed by the payload. Scalars, strings, byte
 * objects (and REGEX and the compressed types, which a value holds as
 * byte objects) and envars sit in the value itself; every other structure
 * is held through a pointer and gets a u8 flag first (0: NULL pointer,
 * nothing follows; 1: the object follows). Inside data arrays, procs lists
 * and info lists, objects follow each other with no flag and no
 * per-element type.
 *
 * Layouts (all integers little-endian; "str" is a u32 length, 0xffffffff
 * for NULL, then the bytes; "bytes" is a u32 length then the bytes; "argv"
 * is a u32 count, 0xffffffff for a NULL array, then that many non-NULL str):
 *
 *   BOOL u8 0|1; BYTE INT8 UINT8 and the u8 enums (PERSIST SCOPE DATA_RANGE
 *   PROC_STATE JOB_STATE LINK_STATE ALLOC_DIRECTIVE COMMAND) u8; INT16 UINT16
 *   IOF_CHANNEL LOCTYPE DATA_TYPE STOR_ACCESS_TYPE u16; INT UINT INT32 UINT32
 *   STATUS PID PROC_RANK INFO_DIRECTIVES FLOAT 32 bits; INT64 UINT64 SIZE
 *   TIME DEVTYPE STOR_MEDIUM STOR_ACCESS STOR_PERSIST DOUBLE 64 bits;
 *   TIMEVAL i64 seconds, i64 microseconds.
 *   STRING str.  PROC_NSPACE str (at most PMIX_MAX_NSLEN bytes).
 *   PROC        str nspace, u32 rank.
 *   BYTE_OBJECT COMPRESSED_STRING COMPRESSED_BYTE_OBJECT REGEX  bytes.
 *   PROC_INFO   proc, str hostname, str executable, i32 pid, i32 exit code,
 *               u8 state.
 *   DATA_ARRAY  u16 element type, u64 count, the elements.
 *   ENVAR       str name, str value, u8 separator.
 *   COORD       str fabric, str plane, u8 view, u64 dims, dims x u32.
 *   REGATTR     str name, str key, u16 type, argv description.
 *   PROC_CPUSET str source (only a cpuset without a bitmap handle: the
 *               bitmap is a local hwloc object and is refused).
 *   GEOMETRY    u64 fabric, str uuid, str osname, u64 n, n x COORD.
 *   DEVICE_DIST str uuid, str osname, u64 type, u16 mindist, u16 maxdist.
 *   ENDPOINT    str uuid, str osname, bytes endpoint.
 *   DATA_BUFFER bytes: the part not yet unpacked.
 *   VALUE       u16 type, payload.
 *   INFO        str key, u32 flags (PMIX_INFO_ARRAY_END cleared), value.
 *   PDATA       proc, str key, value.
 *   APP         str cmd, argv argv, argv env, str cwd, i32 maxprocs,
 *               u64 ninfo, infos.
 *   QUERY       argv keys, u64 nqual, infos.
 *   PROC_STATS DISK_STATS NET_STATS NODE_STATS  their members in order
 *               (timevals as above, floats as 32 bits, the node's disk and
 *               net arrays as u64 count then elements).
 *
 * Refused, as their rows in the table say: POINTER (PMIX_ERR_BAD_PARAM),
 * TOPO, KVAL, BUFFER (PMIX_ERR_NOT_SUPPORTED); unknown types
 * PMIX_ERR_UNKNOWN_DATA_TYPE. A refusal is the buffer's sticky error like
 * any other pack failure.
 */
#include <string.h>

#include <pmix_common.h>

#include "common/px_types.h"
#include "wire/px_wire.h"
#include "wire/px_wire_impl.h"

#define ARGV_NULL 0xffffffffu

static void pack_obj(px_buf *b, const void *src, pmix_data_type_t type);

/* A string held in a fixed array (namespace, key): refuse one that does not
 * end within `max` characters rather than read past the array. */
static void pack_fixed_str(px_buf *b, const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1);

    if (n > max) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    px_pack_u32(b, (uint32_t)n);
    px_pack_raw(b, s, n);
}

static void pack_count(px_buf *b, size_t n, const void *array)
{
    if (n > 0 && array == NULL) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    px_pack_u64(b, n);
}

void px_pack_argv(px_buf *b, char *const *argv)
{
    size_t n = 0;

    if (argv == NULL) {
        px_pack_u32(b, ARGV_NULL);
        return;
    }
    while (argv[n] != NULL) {
        n++;
    }
    if (n >= ARGV_NULL) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    px_pack_u32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        px_pack_str(b, argv[i]);
    }
}

void px_pack_proc(px_buf *b, const pmix_proc_t *p)
{
    if (p == NULL) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    pack_fixed_str(b, p->nspace, PMIX_MAX_NSLEN);
    px_pack_u32(b, p->rank);
}

void px_pack_procs(px_buf *b, const pmix_proc_t *p, size_t n)
{
    pack_count(b, n, p);
    for (size_t i = 0; i < n && b->err == PMIX_SUCCESS; i++) {
        px_pack_proc(b, &p[i]);
    }
}

static void pack_info1(px_buf *b, const pmix_info_t *info)
{
    pack_fixed_str(b, info->key, PMIX_MAX_KEYLEN);
    px_pack_u32(b, info->flags & ~(pmix_info_directives_t)PMIX_INFO_ARRAY_END);
    px_pack_value(b, &info->value);
}

void px_pack_info(px_buf *b, const pmix_info_t *info, size_t n)
{
    pack_count(b, n, info);
    for (size_t i = 0; i < n && b->err == PMIX_SUCCESS; i++) {
        pack_info1(b, &info[i]);
    }
}

void px_pack_value(px_buf *b, const pmix_value_t *v)
{
    const px_type *t;
    const void *obj;

    if (v == NULL) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    t = px_type_of(v->type);
    if (t->wire != PMIX_SUCCESS) {
        px_wire_fail(b, t->wire);
        return;
    }
    px_pack_u16(b, v->type);
    if (v->type == PMIX_UNDEF) {
        return;
    }
    if (t->hold == PX_HOLD_BOXED || t->hold == PX_HOLD_NESTED) {
        /* Every pointer member of the union starts at the union's start. */
        memcpy(&obj, &v->data, sizeof(obj));
        px_pack_u8(b, obj != NULL);
        if (obj == NULL) {
            return;
        }
        if (t->hold == PX_HOLD_NESTED) {
            /* A value inside a value: one nesting level, like a data array. */
            if (b->depth >= PX_WIRE_MAX_DEPTH) {
                px_wire_fail(b, PMIX_ERR_BAD_PARAM);
                return;
            }
            b->depth++;
            pack_obj(b, obj, v->type);
            b->depth--;
        } else {
            pack_obj(b, obj, v->type);
        }
    } else {
        pack_obj(b, &v->data, v->type);
    }
}

void px_pack_typed(px_buf *b, const void *src, pmix_data_type_t type)
{
    if (src == NULL) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    pack_obj(b, src, type);
}

static void pack_darray(px_buf *b, const pmix_data_array_t *d)
{
    const px_type *t = px_type_of(d->type);
    const char *elem = d->array;

    if (b->depth >= PX_WIRE_MAX_DEPTH) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    if (t->wire != PMIX_SUCCESS) {
        px_wire_fail(b, t->wire);
        return;
    }
    if (d->size > 0 && (d->array == NULL || t->size == 0)) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM); /* no storage, or PMIX_UNDEF elements */
        return;
    }
    px_pack_u16(b, d->type);
    px_pack_u64(b, d->size);
    b->depth++;
    for (size_t i = 0; i < d->size && b->err == PMIX_SUCCESS; i++) {
        pack_obj(b, elem + i * t->size, d->type);
    }
    b->depth--;
}

static void pack_tv(px_buf *b, const struct timeval *tv)
{
    px_pack_i64(b, (int64_t)tv->tv_sec);
    px_pack_i64(b, (int64_t)tv->tv_usec);
}

static void pack_coord(px_buf *b, const pmix_coord_t *c)
{
    px_pack_str(b, c->fabric);
    px_pack_str(b, c->plane);
    px_pack_u8(b, c->view);
    pack_count(b, c->dims, c->coord);
    for (size_t i = 0; i < c->dims && b->err == PMIX_SUCCESS; i++) {
        px_pack_u32(b, c->coord[i]);
    }
}

static void pack_data_buffer(px_buf *b, const pmix_data_buffer_t *d)
{
    const char *end;

    if (d->base_ptr == NULL) {
        px_pack_bytes(b, NULL, 0);
        return;
    }
    end = d->base_ptr + d->bytes_used;
    if (d->unpack_ptr < d->base_ptr || d->unpack_ptr > end) {
        px_wire_fail(b, PMIX_ERR_BAD_PARAM);
        return;
    }
    px_pack_bytes(b, d->unpack_ptr, (size_t)(end - d->unpack_ptr));
}

static void pack_proc_stats(px_buf *b, const pmix_proc_stats_t *s)
{
    px_pack_str(b, s->node);
    px_pack_proc(b, &s->proc);
    px_pack_i32(b, (int32_t)s->pid);
    px_pack_str(b, s->cmd);
    px_pack_u8(b, (uint8_t)s->state);
    pack_tv(b, &s->time);
    px_pack_float(b, s->percent_cpu);
    px_pack_i32(b, s->priority);
    px_pack_u16(b, s->num_threads);
    px_pack_float(b, s->pss);
    px_pack_float(b, s->vsize);
    px_pack_float(b, s->rss);
    px_pack_float(b, s->peak_vsize);
    px_pack_u16(b, s->processor);
    pack_tv(b, &s->sample_time);
}

static void pack_disk_stats(px_buf *b, const pmix_disk_stats_t *s)
{
    px_pack_str(b, s->disk);
    px_pack_u64(b, s->num_reads_completed);
    px_pack_u64(b, s->num_reads_merged);
    px_pack_u64(b, s->num_sectors_read);
    px_pack_u64(b, s->milliseconds_reading);
    px_pack_u64(b, s->num_writes_completed);
    px_pack_u64(b, s->num_writes_merged);
    px_pack_u64(b, s->num_sectors_written);
    px_pack_u64(b, s->milliseconds_writing);
    px_pack_u64(b, s->num_ios_in_progress);
    px_pack_u64(b, s->milliseconds_io);
    px_pack_u64(b, s->weighted_milliseconds_io);
}

static void pack_net_stats(px_buf *b, const pmix_net_stats_t *s)
{
    px_pack_str(b, s->net_interface);
    px_pack_u64(b, s->num_bytes_recvd);
    px_pack_u64(b, s->num_packets_recvd);
    px_pack_u64(b, s->num_recv_errs);
    px_pack_u64(b, s->num_bytes_sent);
    px_pack_u64(b, s->num_packets_sent);
    px_pack_u64(b, s->num_send_errs);
}

static void pack_node_stats(px_buf *b, const pmix_node_stats_t *s)
{
    const float f[] = {s->la,         s->la5,       s->la15,   s->total_mem,
                       s->free_mem,   s->buffers,   s->cached, s->swap_cached,
                       s->swap_total, s->swap_free, s->mapped};

    px_pack_str(b, s->node);
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        px_pack_float(b, f[i]);
    }
    pack_tv(b, &s->sample_time);
    pack_count(b, s->ndiskstats, s->diskstats);
    for (size_t i = 0; i < s->ndiskstats && b->err == PMIX_SUCCESS; i++) {
        pack_disk_stats(b, &s->diskstats[i]);
    }
    pack_count(b, s->nnetstats, s->netstats);
    for (size_t i = 0; i < s->nnetstats && b->err == PMIX_SUCCESS; i++) {
        pack_net_stats(b, &s->netstats[i]);
    }
}

static void pack_obj(px_buf *b, const void *src, pmix_data_type_t type)
{
    const px_type *t = px_type_of(type);

    if (b->err != PMIX_SUCCESS) {
        return; /* do not walk what will not be written */
    }
    if (t->wire != PMIX_SUCCESS) {
        px_wire_fail(b, t->wire);
        return;
    }
    switch (t->shape) {
    case PX_SHAPE_NONE: break; /* PMIX_UNDEF */
    case PX_SHAPE_BOOL:
        px_pack_bool(b, *(const uint8_t *)src != 0); /* any non-zero byte is true */
        break;
    /* The integer shapes copy the bits, signed or not (int, pmix_status_t
     * and the 32-bit enumerations are 32 bits: unpack.c checks). */
    case PX_SHAPE_U8: px_pack_u8(b, *(const uint8_t *)src); break;
    case PX_SHAPE_U16: px_pack_u16(b, *(const uint16_t *)src); break;
    case PX_SHAPE_U32: px_pack_u32(b, *(const uint32_t *)src); break;
    case PX_SHAPE_U64: px_pack_u64(b, *(const uint64_t *)src); break;
    case PX_SHAPE_PID: px_pack_i32(b, (int32_t) * (const pid_t *)src); break;
    case PX_SHAPE_SIZE: px_pack_u64(b, *(const size_t *)src); break;
    case PX_SHAPE_FLOAT: px_pack_float(b, *(const float *)src); break;
    case PX_SHAPE_DOUBLE: px_pack_double(b, *(const double *)src); break;
    case PX_SHAPE_TIMEVAL: pack_tv(b, src); break;
    case PX_SHAPE_TIME: px_pack_i64(b, (int64_t) * (const time_t *)src); break;
    case PX_SHAPE_STRING: px_pack_str(b, *(char *const *)src); break;
    case PX_SHAPE_NSPACE: pack_fixed_str(b, src, PMIX_MAX_NSLEN); break;
    case PX_SHAPE_PROC: px_pack_proc(b, src); break;
    case PX_SHAPE_BYTES: {
        const pmix_byte_object_t *bo = src;
        px_pack_bytes(b, bo->bytes, bo->size);
        break;
    }
    case PX_SHAPE_PROC_INFO: {
        const pmix_proc_info_t *pi = src;
        px_pack_proc(b, &pi->proc);
        px_pack_str(b, pi->hostname);
        px_pack_str(b, pi->executable_name);
        px_pack_i32(b, (int32_t)pi->pid);
        px_pack_i32(b, pi->exit_code);
        px_pack_u8(b, pi->state);
        break;
    }
    case PX_SHAPE_DARRAY: pack_darray(b, src); break;
    case PX_SHAPE_ENVAR: {
        const pmix_envar_t *e = src;
        px_pack_str(b, e->envar);
        px_pack_str(b, e->value);
        px_pack_u8(b, (uint8_t)e->separator);
        break;
    }
    case PX_SHAPE_COORD: pack_coord(b, src); break;
    case PX_SHAPE_REGATTR: {
        const pmix_regattr_t *r = src;
        px_pack_str(b, r->name);
        pack_fixed_str(b, r->string, PMIX_MAX_KEYLEN);
        px_pack_u16(b, r->type);
        px_pack_argv(b, r->description);
        break;
    }
    case PX_SHAPE_CPUSET: {
        const pmix_cpuset_t *c = src;
        if (c->bitmap != NULL) {
            px_wire_fail(b, PMIX_ERR_NOT_SUPPORTED); /* a local hwloc handle */
            return;
        }
        px_pack_str(b, c->source);
        break;
    }
    case PX_SHAPE_GEOMETRY: {
        const pmix_geometry_t *g = src;
        px_pack_u64(b, g->fabric);
        px_pack_str(b, g->uuid);
        px_pack_str(b, g->osname);
        pack_count(b, g->ncoords, g->coordinates);
        for (size_t i = 0; i < g->ncoords && b->err == PMIX_SUCCESS; i++) {
            pack_coord(b, &g->coordinates[i]);
        }
        break;
    }
    case PX_SHAPE_DEVICE_DIST: {
        const pmix_device_distance_t *d = src;
        px_pack_str(b, d->uuid);
        px_pack_str(b, d->osname);
        px_pack_u64(b, d->type);
        px_pack_u16(b, d->mindist);
        px_pack_u16(b, d->maxdist);
        break;
    }
    case PX_SHAPE_ENDPOINT: {
        const pmix_endpoint_t *e = src;
        px_pack_str(b, e->uuid);
        px_pack_str(b, e->osname);
        px_pack_bytes(b, e->endpt.bytes, e->endpt.size);
        break;
    }
    case PX_SHAPE_DATA_BUFFER: pack_data_buffer(b, src); break;
    case PX_SHAPE_VALUE: px_pack_value(b, src); break;
    case PX_SHAPE_INFO: pack_info1(b, src); break;
    case PX_SHAPE_PDATA: {
        const pmix_pdata_t *p = src;
        px_pack_proc(b, &p->proc);
        pack_fixed_str(b, p->key, PMIX_MAX_KEYLEN);
        px_pack_value(b, &p->value);
        break;
    }
    case PX_SHAPE_APP: {
        const pmix_app_t *a = src;
        px_pack_str(b, a->cmd);
        px_pack_argv(b, a->argv);
        px_pack_argv(b, a->env);
        px_pack_str(b, a->cwd);
        px_pack_i32(b, a->maxprocs);
        px_pack_info(b, a->info, a->ninfo);
        break;
    }
    case PX_SHAPE_QUERY: {
        const pmix_query_t *q = src;
        px_pack_argv(b, q->keys);
        px_pack_info(b, q->qualifiers, q->nqual);
        break;
    }
    case PX_SHAPE_PROC_STATS: pack_proc_stats(b, src); break;
    case PX_SHAPE_DISK_STATS: pack_disk_stats(b, src); break;
    case PX_SHAPE_NET_STATS: pack_net_stats(b, src); break;
    case PX_SHAPE_NODE_STATS: pack_node_stats(b, src); break;
    case PX_SHAPE_POINTER:
    case PX_SHAPE_TOPO:
        /* Refused by their rows above; never encoded. */
        px_wire_fail(b, PMIX_ERR_NOT_SUPPORTED);
        break;
    }
}
