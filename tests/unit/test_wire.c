/*
 * test_wire.c - the wire codec (libpmix/src/wire): frames, scalars, every
 * data type of the Standard, hostile input, and the Standard's data-buffer
 * API built on it.
 *
 * The heart of it is one info array that holds a sample of every type that
 * can cross the wire, in a rich form, in an edge form (NULL strings, empty
 * byte objects, NULL pointers, empty arrays) and as a data array of that
 * type. It must come back equal after a round trip; every prefix of its
 * encoding must be refused; random corruption must never crash or leak.
 *
 * The table of data types (common/px_types.def) is checked on its own:
 * every data type of the ABI (tests/abi/constants.tsv) has its row, and
 * every row either round-trips (pack, unpack, copy, compare, free, print)
 * or is refused on the wire for a reason listed here (refused_types[]).
 * Leaks are checked per test by LeakSanitizer when the test is built with
 * -fsanitize=address (the teardown runs a recoverable leak check).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "common/px_common.h"
#include "common/px_types.h"
#include "wire/px_wire.h"
#include "wire/px_wire_impl.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LSAN 1
#endif
#endif
#ifdef HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

static int teardown_leaks(void **state)
{
    (void)state;
#ifdef HAVE_LSAN
    assert_int_equal(__lsan_do_recoverable_leak_check(), 0);
#endif
    return 0;
}

/* Every data type that can cross the wire. */
static const pmix_data_type_t wire_types[] = {
    PMIX_BOOL,
    PMIX_BYTE,
    PMIX_STRING,
    PMIX_SIZE,
    PMIX_PID,
    PMIX_INT,
    PMIX_INT8,
    PMIX_INT16,
    PMIX_INT32,
    PMIX_INT64,
    PMIX_UINT,
    PMIX_UINT8,
    PMIX_UINT16,
    PMIX_UINT32,
    PMIX_UINT64,
    PMIX_FLOAT,
    PMIX_DOUBLE,
    PMIX_TIMEVAL,
    PMIX_TIME,
    PMIX_STATUS,
    PMIX_VALUE,
    PMIX_PROC,
    PMIX_APP,
    PMIX_INFO,
    PMIX_PDATA,
    PMIX_BYTE_OBJECT,
    PMIX_PERSIST,
    PMIX_SCOPE,
    PMIX_DATA_RANGE,
    PMIX_COMMAND,
    PMIX_INFO_DIRECTIVES,
    PMIX_DATA_TYPE,
    PMIX_PROC_STATE,
    PMIX_PROC_INFO,
    PMIX_DATA_ARRAY,
    PMIX_PROC_RANK,
    PMIX_QUERY,
    PMIX_COMPRESSED_STRING,
    PMIX_ALLOC_DIRECTIVE,
    PMIX_IOF_CHANNEL,
    PMIX_ENVAR,
    PMIX_COORD,
    PMIX_REGATTR,
    PMIX_REGEX,
    PMIX_JOB_STATE,
    PMIX_LINK_STATE,
    PMIX_PROC_CPUSET,
    PMIX_GEOMETRY,
    PMIX_DEVICE_DIST,
    PMIX_ENDPOINT,
    PMIX_DEVTYPE,
    PMIX_LOCTYPE,
    PMIX_COMPRESSED_BYTE_OBJECT,
    PMIX_PROC_NSPACE,
    PMIX_PROC_STATS,
    PMIX_DISK_STATS,
    PMIX_NET_STATS,
    PMIX_NODE_STATS,
    PMIX_DATA_BUFFER,
    PMIX_STOR_MEDIUM,
    PMIX_STOR_ACCESS,
    PMIX_STOR_PERSIST,
    PMIX_STOR_ACCESS_TYPE,
};
#define NTYPES (sizeof(wire_types) / sizeof(wire_types[0]))

/* ---- building samples ---- */

static char *dup(const char *s)
{
    char *p = strdup(s);
    assert_non_null(p);
    return p;
}

static void *zalloc(size_t n)
{
    void *p = calloc(1, n);
    assert_non_null(p);
    return p;
}

static char **argv3(const char *a, const char *b)
{
    char **v = zalloc(3 * sizeof(char *));
    v[0] = dup(a);
    v[1] = dup(b);
    return v;
}

static void fill_proc(pmix_proc_t *p, const char *ns, pmix_rank_t r)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->nspace, sizeof(p->nspace), "%s", ns);
    p->rank = r;
}

static void fill_coord(pmix_coord_t *c, uint32_t base)
{
    c->fabric = dup("fabric0");
    c->plane = dup("planeB");
    c->view = PMIX_COORD_LOGICAL_VIEW;
    c->dims = 3;
    c->coord = zalloc(3 * sizeof(uint32_t));
    for (size_t i = 0; i < 3; i++) {
        c->coord[i] = base + (uint32_t)i;
    }
}

static void fill_info_int(pmix_info_t *i, const char *key, int32_t v)
{
    memset(i, 0, sizeof(*i));
    snprintf(i->key, sizeof(i->key), "%s", key);
    i->value.type = PMIX_INT32;
    i->value.data.int32 = v;
}

static void fill_disk(pmix_disk_stats_t *d, const char *name)
{
    d->disk = dup(name);
    d->num_reads_completed = 1;
    d->num_sectors_written = UINT64_MAX;
    d->weighted_milliseconds_io = 77;
}

static void fill_net(pmix_net_stats_t *n)
{
    n->net_interface = dup("eth0");
    n->num_bytes_recvd = 123456789012ull;
    n->num_send_errs = 3;
}

/* The object of `type` a sample value holds (inline or boxed). */
static void *value_obj(pmix_value_t *v)
{
    px_wire_type t;
    void *p;

    px_wire_type_info(v->type, &t);
    if (!t.by_pointer) {
        return &v->data;
    }
    memcpy(&p, &v->data, sizeof(p));
    return p;
}

static void sample(pmix_value_t *v, pmix_data_type_t type, bool edge);

/* A data array of two copies of the rich sample of `type`. */
static pmix_data_array_t *sample_array(pmix_data_type_t type)
{
    pmix_data_array_t *d = zalloc(sizeof(*d));
    pmix_value_t v;
    size_t sz = px_type_size(type);

    d->type = type;
    d->size = 2;
    d->array = zalloc(2 * sz);
    for (size_t i = 0; i < 2; i++) {
        sample(&v, type, i == 1);
        if (value_obj(&v) != NULL) {
            assert_int_equal(px_elems_copy((char *)d->array + i * sz, value_obj(&v), 1, type),
                             PMIX_SUCCESS);
        }
        PMIx_Value_destruct(&v);
    }
    return d;
}

/* A sample value of `type`; `edge` picks the emptiest legal form. */
static void sample(pmix_value_t *v, pmix_data_type_t type, bool edge)
{
    px_wire_type t;
    void *obj = NULL;

    memset(v, 0, sizeof(*v));
    v->type = type;
    px_wire_type_info(type, &t);
    if (t.by_pointer) {
        if (edge && type != PMIX_DATA_ARRAY && type != PMIX_VALUE && type != PMIX_INFO) {
            return; /* a NULL pointer */
        }
        obj = zalloc(t.size);
        memcpy(&v->data, &obj, sizeof(obj));
    }
    switch (type) {
    case PMIX_BOOL: v->data.flag = !edge; break;
    case PMIX_BYTE:
    case PMIX_UINT8: v->data.uint8 = edge ? 0 : 0xfe; break;
    case PMIX_STRING:
        v->data.string = edge ? NULL : dup("a string, with punctuation: \t\"x\"");
        break;
    case PMIX_SIZE: v->data.size = edge ? 0 : SIZE_MAX; break;
    case PMIX_PID: v->data.pid = edge ? 0 : 123456; break;
    case PMIX_INT: v->data.integer = edge ? -1 : INT32_MIN; break;
    case PMIX_INT8: v->data.int8 = edge ? -1 : INT8_MIN; break;
    case PMIX_INT16: v->data.int16 = edge ? -2 : INT16_MIN; break;
    case PMIX_INT32: v->data.int32 = edge ? -3 : INT32_MIN; break;
    case PMIX_INT64: v->data.int64 = edge ? -4 : INT64_MIN; break;
    case PMIX_UINT: v->data.uint = edge ? 0 : UINT32_MAX; break;
    case PMIX_UINT16:
    case PMIX_IOF_CHANNEL:
    case PMIX_LOCTYPE:
    case PMIX_DATA_TYPE:
    case PMIX_STOR_ACCESS_TYPE: v->data.uint16 = edge ? 0 : 0xfedc; break;
    case PMIX_UINT32:
    case PMIX_PROC_RANK:
    case PMIX_INFO_DIRECTIVES: v->data.uint32 = edge ? PMIX_RANK_WILDCARD : 0x89abcdefu; break;
    case PMIX_UINT64:
    case PMIX_DEVTYPE:
    case PMIX_STOR_MEDIUM:
    case PMIX_STOR_ACCESS:
    case PMIX_STOR_PERSIST: v->data.uint64 = edge ? 0 : 0x0123456789abcdefull; break;
    case PMIX_FLOAT: v->data.fval = edge ? -0.0f : 3.25e-3f; break;
    case PMIX_DOUBLE: v->data.dval = edge ? -1e300 : 2.718281828459045; break;
    case PMIX_TIMEVAL:
        v->data.tv.tv_sec = edge ? 0 : 1700000000;
        v->data.tv.tv_usec = edge ? 0 : 999999;
        break;
    case PMIX_TIME: v->data.time = edge ? -1 : 1700000000; break;
    case PMIX_STATUS: v->data.status = edge ? PMIX_SUCCESS : PMIX_ERR_UNPACK_FAILURE; break;
    case PMIX_PERSIST:
    case PMIX_SCOPE:
    case PMIX_DATA_RANGE:
    case PMIX_COMMAND:
    case PMIX_PROC_STATE:
    case PMIX_ALLOC_DIRECTIVE:
    case PMIX_JOB_STATE:
    case PMIX_LINK_STATE: v->data.uint8 = edge ? 0 : 0x81; break;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX:
        if (!edge) {
            v->data.bo.bytes = zalloc(5);
            memcpy(v->data.bo.bytes, "a\0b\xff", 5);
            v->data.bo.size = 5;
        }
        break;
    case PMIX_ENVAR:
        if (!edge) {
            v->data.envar.envar = dup("PATH");
            v->data.envar.value = dup("/usr/bin");
            v->data.envar.separator = ':';
        }
        break;
    case PMIX_VALUE: {
        pmix_value_t *in = obj;
        if (edge) {
            in->type = PMIX_UNDEF;
        } else {
            in->type = PMIX_STRING;
            in->data.string = dup("inner");
        }
        break;
    }
    case PMIX_INFO: {
        pmix_info_t *i = obj;
        fill_info_int(i, edge ? "" : "inner.key", 42);
        i->flags = PMIX_INFO_REQD;
        if (edge) {
            i->value.type = PMIX_UNDEF;
        }
        break;
    }
    case PMIX_PROC: fill_proc(obj, "job.0", 7); break;
    case PMIX_PROC_NSPACE: snprintf(obj, sizeof(pmix_nspace_t), "%s", "nspace.1"); break;
    case PMIX_APP: {
        pmix_app_t *a = obj;
        a->cmd = dup("/bin/hostname");
        a->argv = argv3("hostname", "-s");
        a->env = argv3("A=1", "B=2");
        a->cwd = dup("/tmp");
        a->maxprocs = 4;
        a->ninfo = 2;
        a->info = zalloc(2 * sizeof(pmix_info_t));
        fill_info_int(&a->info[0], "app.k1", 1);
        fill_info_int(&a->info[1], "app.k2", 2);
        break;
    }
    case PMIX_PDATA: {
        pmix_pdata_t *p = obj;
        fill_proc(&p->proc, "pub", 3);
        snprintf(p->key, sizeof(p->key), "%s", "published");
        p->value.type = PMIX_STRING;
        p->value.data.string = dup("data");
        break;
    }
    case PMIX_QUERY: {
        pmix_query_t *q = obj;
        q->keys = argv3(PMIX_QUERY_NAMESPACES, "pmix.qry.jst");
        q->nqual = 1;
        q->qualifiers = zalloc(sizeof(pmix_info_t));
        fill_info_int(&q->qualifiers[0], "qual", -9);
        break;
    }
    case PMIX_PROC_INFO: {
        pmix_proc_info_t *pi = obj;
        fill_proc(&pi->proc, "job.1", 0);
        pi->hostname = dup("node001");
        pi->executable_name = NULL;
        pi->pid = 4242;
        pi->exit_code = -1;
        pi->state = PMIX_PROC_STATE_RUNNING;
        break;
    }
    case PMIX_DATA_ARRAY: {
        pmix_data_array_t *d = obj;
        if (edge) {
            d->type = PMIX_INFO; /* empty */
            break;
        }
        /* An array of infos whose values nest further arrays. */
        d->type = PMIX_INFO;
        d->size = 3;
        d->array = zalloc(3 * sizeof(pmix_info_t));
        pmix_info_t *in = d->array;
        fill_info_int(&in[0], "level1.int", 5);
        snprintf(in[1].key, sizeof(in[1].key), "%s", "level1.procs");
        in[1].value.type = PMIX_DATA_ARRAY;
        in[1].value.data.darray = sample_array(PMIX_PROC);
        snprintf(in[2].key, sizeof(in[2].key), "%s", "level1.values");
        in[2].value.type = PMIX_DATA_ARRAY;
        in[2].value.data.darray = sample_array(PMIX_VALUE);
        break;
    }
    case PMIX_COORD: fill_coord(obj, 10); break;
    case PMIX_REGATTR: {
        pmix_regattr_t *r = obj;
        r->name = dup("PMIX_JOB_SIZE");
        snprintf(r->string, sizeof(r->string), "%s", "pmix.job.size");
        r->type = PMIX_UINT32;
        r->description = argv3("number of processes", "in the job");
        break;
    }
    case PMIX_PROC_CPUSET: {
        pmix_cpuset_t *c = obj;
        c->source = dup("hwloc");
        break;
    }
    case PMIX_GEOMETRY: {
        pmix_geometry_t *g = obj;
        g->fabric = 2;
        g->uuid = dup("uuid-1");
        g->osname = dup("mlx5_0");
        g->ncoords = 2;
        g->coordinates = zalloc(2 * sizeof(pmix_coord_t));
        fill_coord(&g->coordinates[0], 1);
        fill_coord(&g->coordinates[1], 100);
        break;
    }
    case PMIX_DEVICE_DIST: {
        pmix_device_distance_t *d = obj;
        d->uuid = dup("dev-uuid");
        d->osname = NULL;
        d->type = PMIX_DEVTYPE_GPU;
        d->mindist = 1;
        d->maxdist = 65535;
        break;
    }
    case PMIX_ENDPOINT: {
        pmix_endpoint_t *e = obj;
        e->uuid = dup("ep");
        e->osname = dup("hfi1_0");
        e->endpt.bytes = zalloc(3);
        memcpy(e->endpt.bytes, "\x01\x00\x02", 3);
        e->endpt.size = 3;
        break;
    }
    case PMIX_DATA_BUFFER: {
        pmix_data_buffer_t *d = obj;
        int32_t x = 77;
        assert_int_equal(PMIx_Data_pack(NULL, d, &x, 1, PMIX_INT32), PMIX_SUCCESS);
        break;
    }
    case PMIX_PROC_STATS: {
        pmix_proc_stats_t *s = obj;
        s->node = dup("node9");
        fill_proc(&s->proc, "job.2", 11);
        s->pid = 99;
        s->cmd = dup("a.out");
        s->state = 'R';
        s->time.tv_sec = 5;
        s->percent_cpu = 99.5f;
        s->priority = -20;
        s->num_threads = 16;
        s->pss = 1.5f;
        s->vsize = 2.5f;
        s->rss = 3.5f;
        s->peak_vsize = 4.5f;
        s->processor = 3;
        s->sample_time.tv_usec = 17;
        break;
    }
    case PMIX_DISK_STATS: fill_disk(obj, "sda"); break;
    case PMIX_NET_STATS: fill_net(obj); break;
    case PMIX_NODE_STATS: {
        pmix_node_stats_t *n = obj;
        n->node = dup("node3");
        n->la = 0.5f;
        n->mapped = 1024.0f;
        n->sample_time.tv_sec = 3;
        n->ndiskstats = 2;
        n->diskstats = zalloc(2 * sizeof(pmix_disk_stats_t));
        fill_disk(&n->diskstats[0], "sda");
        fill_disk(&n->diskstats[1], "nvme0n1");
        n->nnetstats = 1;
        n->netstats = zalloc(sizeof(pmix_net_stats_t));
        fill_net(&n->netstats[0]);
        break;
    }
    default: fail_msg("no sample for type %u", (unsigned)type);
    }
}

/* The big info array: per type, a rich value, an edge value and a data
 * array; plus a maximum-length key and an undefined value. */
static pmix_info_t *all_infos(size_t *n)
{
    size_t cap = 3 * NTYPES + 2, k = 0;
    pmix_info_t *info = zalloc(cap * sizeof(pmix_info_t));

    for (size_t i = 0; i < NTYPES; i++) {
        snprintf(info[k].key, sizeof(info[k].key), "rich.%u", (unsigned)wire_types[i]);
        sample(&info[k++].value, wire_types[i], false);
        snprintf(info[k].key, sizeof(info[k].key), "edge.%u", (unsigned)wire_types[i]);
        sample(&info[k++].value, wire_types[i], true);
        snprintf(info[k].key, sizeof(info[k].key), "array.%u", (unsigned)wire_types[i]);
        info[k].value.type = PMIX_DATA_ARRAY;
        info[k++].value.data.darray = sample_array(wire_types[i]);
    }
    memset(info[k].key, 'k', PMIX_MAX_KEYLEN);
    info[k].flags = PMIX_INFO_REQD | PMIX_INFO_ARRAY_END; /* the end bit is not sent */
    info[k++].value.type = PMIX_UNDEF;
    fill_info_int(&info[k++], "last", 1);
    assert_int_equal(k, cap);
    *n = cap;
    return info;
}

/* Pack the big info array; returns malloc'd bytes. */
static uint8_t *encode_all(size_t *len)
{
    px_buf b;
    size_t n;
    pmix_info_t *info = all_infos(&n);
    uint8_t *bytes;

    px_buf_init(&b);
    px_pack_info(&b, info, n);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    bytes = px_buf_steal(&b, len);
    assert_non_null(bytes);
    PMIx_Info_free(info, n);
    return bytes;
}

/* ---- frames and scalars ---- */

static void test_scalars(void **state)
{
    px_buf b;
    uint8_t *bytes, u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int32_t i32;
    int64_t i64;
    double d;
    float f;
    bool flag;
    size_t len;
    static const uint8_t expect[] = {0x04, 0x03, 0x02, 0x01};

    px_buf_init(&b);
    px_pack_u32(&b, 0x01020304u);
    assert_int_equal(b.size, 4);
    assert_memory_equal(b.data, expect, 4); /* little-endian on any host */
    px_pack_u8(&b, 0xab);
    px_pack_u16(&b, 0xbeef);
    px_pack_u64(&b, 0x1122334455667788ull);
    px_pack_i32(&b, -5);
    px_pack_i64(&b, INT64_MIN);
    px_pack_double(&b, -0.125);
    px_pack_float(&b, 1.5f);
    px_pack_bool(&b, true);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    bytes = px_buf_steal(&b, &len);
    assert_int_equal(len, 4 + 1 + 2 + 8 + 4 + 8 + 8 + 4 + 1);

    px_buf_view(&b, bytes, len);
    assert_int_equal(px_unpack_u32(&b, &u32), PMIX_SUCCESS);
    assert_int_equal(u32, 0x01020304u);
    assert_int_equal(px_unpack_u8(&b, &u8), PMIX_SUCCESS);
    assert_int_equal(u8, 0xab);
    assert_int_equal(px_unpack_u16(&b, &u16), PMIX_SUCCESS);
    assert_int_equal(u16, 0xbeef);
    assert_int_equal(px_unpack_u64(&b, &u64), PMIX_SUCCESS);
    assert_true(u64 == 0x1122334455667788ull);
    assert_int_equal(px_unpack_i32(&b, &i32), PMIX_SUCCESS);
    assert_int_equal(i32, -5);
    assert_int_equal(px_unpack_i64(&b, &i64), PMIX_SUCCESS);
    assert_true(i64 == INT64_MIN);
    assert_int_equal(px_unpack_double(&b, &d), PMIX_SUCCESS);
    assert_true(d == -0.125);
    assert_int_equal(px_unpack_float(&b, &f), PMIX_SUCCESS);
    assert_true(f == 1.5f);
    assert_int_equal(px_unpack_bool(&b, &flag), PMIX_SUCCESS);
    assert_true(flag);
    assert_int_equal(px_buf_left(&b), 0);
    /* Past the end: an error, and the cursor does not move. */
    assert_int_equal(px_unpack_u8(&b, &u8), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    b.pos = len - 1;
    assert_int_equal(px_unpack_u16(&b, &u16), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    assert_int_equal(b.pos, len - 1);
    /* A bool is 0 or 1. */
    bytes[len - 1] = 2;
    assert_int_equal(px_unpack_bool(&b, &flag), PMIX_ERR_UNPACK_FAILURE);
    assert_int_equal(b.pos, len - 1);
    px_buf_fini(&b);
    free(bytes);

    /* Packing into a read-only view is an error, not a write. */
    px_buf_view(&b, expect, sizeof(expect));
    px_pack_u8(&b, 1);
    assert_int_equal(px_buf_status(&b), PMIX_ERR_BAD_PARAM);
    px_buf_fini(&b);
}

static void test_strings(void **state)
{
    px_buf b;
    uint8_t *bytes;
    size_t len, n;
    char *s = (char *)"x";
    char key[PMIX_MAX_KEYLEN + 1];
    void *p;
    const void *cp;
    char longkey[PMIX_MAX_KEYLEN + 2];
    static const uint8_t golden[] = {2, 0, 0, 0, 'a', 'b', 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};

    px_buf_init(&b);
    px_pack_str(&b, "ab");
    px_pack_str(&b, NULL);
    px_pack_str(&b, "");
    assert_int_equal(b.size, sizeof(golden));
    assert_memory_equal(b.data, golden, sizeof(golden));
    px_pack_bytes(&b, NULL, 0);
    px_pack_bytes(&b, "\0\1", 2);
    memset(longkey, 'q', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    px_pack_str(&b, longkey); /* PMIX_MAX_KEYLEN + 1 characters */
    bytes = px_buf_steal(&b, &len);

    px_buf_view(&b, bytes, len);
    assert_int_equal(px_unpack_str(&b, &s), PMIX_SUCCESS);
    assert_string_equal(s, "ab");
    free(s);
    assert_int_equal(px_unpack_str(&b, &s), PMIX_SUCCESS);
    assert_null(s);
    assert_int_equal(px_unpack_strbuf(&b, key, sizeof(key)), PMIX_SUCCESS);
    assert_string_equal(key, "");
    assert_int_equal(px_unpack_bytes(&b, &p, &n), PMIX_SUCCESS);
    assert_null(p);
    assert_int_equal(n, 0);
    assert_int_equal(px_unpack_bytes_view(&b, &cp, &n), PMIX_SUCCESS);
    assert_int_equal(n, 2);
    assert_memory_equal(cp, "\0\1", 2);
    /* One character too many for a key. */
    assert_int_equal(px_unpack_strbuf(&b, key, sizeof(key)), PMIX_ERR_UNPACK_FAILURE);
    assert_int_equal(px_unpack_str(&b, &s), PMIX_SUCCESS);
    assert_int_equal(strlen(s), PMIX_MAX_KEYLEN + 1);
    free(s);
    /* NULL does not fit a fixed array. */
    b.pos = 6;
    assert_int_equal(px_unpack_strbuf(&b, key, sizeof(key)), PMIX_ERR_UNPACK_FAILURE);
    assert_int_equal(b.pos, 6);
    /* An embedded NUL is refused. */
    bytes[5] = '\0';
    b.pos = 0;
    assert_int_equal(px_unpack_str(&b, &s), PMIX_ERR_UNPACK_FAILURE);
    assert_null(s);
    assert_int_equal(b.pos, 0);
    free(bytes);

    /* A length over the limit is refused before looking for the bytes. */
    px_buf_init(&b);
    px_pack_u32(&b, (uint32_t)PX_WIRE_MAX_STRLEN + 1);
    px_buf_view(&b, b.data, b.size); /* leaks nothing: steal below */
    bytes = b.data;
    assert_int_equal(px_unpack_str(&b, &s), PMIX_ERR_UNPACK_FAILURE);
    free(bytes);
}

static void test_frames(void **state)
{
    px_buf b;
    px_frame_hdr h;
    uint8_t *frame;
    size_t len;
    uint32_t v;

    px_buf_init_frame(&b, 7, 0xdeadbeef);
    px_pack_u32(&b, 12345);
    px_pack_str(&b, "payload");
    frame = px_buf_finish_frame(&b, &len);
    assert_non_null(frame);
    assert_int_equal(len, PX_FRAME_HDR + 4 + 4 + 7);
    assert_null(b.data); /* the buffer is empty afterwards */
    assert_int_equal(frame[0], 'P');
    assert_int_equal(frame[1], 'M');
    assert_int_equal(frame[2], 'X');
    assert_int_equal(frame[3], '1');

    assert_int_equal(px_frame_parse(frame, len, PX_FRAME_MAX_DEFAULT, &h), PMIX_SUCCESS);
    assert_int_equal(h.type, 7);
    assert_int_equal(h.tag, 0xdeadbeef);
    assert_int_equal(h.len, len - PX_FRAME_HDR);
    /* Only the header is needed to learn the length. */
    assert_int_equal(px_frame_parse(frame, PX_FRAME_HDR, PX_FRAME_MAX_DEFAULT, &h), PMIX_SUCCESS);
    assert_int_equal(px_frame_parse(frame, PX_FRAME_HDR - 1, PX_FRAME_MAX_DEFAULT, &h),
                     PMIX_ERR_UNPACK_INADEQUATE_SPACE);
    assert_int_equal(px_frame_parse(frame, len, h.len - 1, &h), PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(px_frame_parse(frame, len, h.len, &h), PMIX_SUCCESS);

    px_buf_view_payload(&b, frame, len);
    assert_int_equal(px_buf_left(&b), len - PX_FRAME_HDR);
    assert_int_equal(px_unpack_u32(&b, &v), PMIX_SUCCESS);
    assert_int_equal(v, 12345);

    frame[0] ^= 1; /* bad magic */
    assert_int_equal(px_frame_parse(frame, len, PX_FRAME_MAX_DEFAULT, &h), PMIX_ERR_BAD_PARAM);
    frame[0] ^= 1;
    frame[4] = 2; /* bad version */
    assert_int_equal(px_frame_parse(frame, len, PX_FRAME_MAX_DEFAULT, &h), PMIX_ERR_BAD_PARAM);
    frame[4] = PX_WIRE_VERSION;
    frame[15] = 0xff; /* 4 GiB payload */
    assert_int_equal(px_frame_parse(frame, len, PX_FRAME_MAX_DEFAULT, &h),
                     PMIX_ERR_OUT_OF_RESOURCE);
    free(frame);

    /* A failed pack gives no frame and frees what it held. */
    px_buf_init_frame(&b, 1, 1);
    px_pack_str(&b, "x");
    px_wire_fail(&b, PMIX_ERR_NOMEM);
    px_pack_u32(&b, 1); /* a no-op once failed */
    assert_null(px_buf_finish_frame(&b, &len));
    assert_int_equal(len, 0);
    /* Finishing a buffer that was not started as a frame fails too. */
    px_buf_init(&b);
    px_pack_u8(&b, 1);
    assert_null(px_buf_finish_frame(&b, &len));
    px_buf_fini(&b);
    px_buf_fini(NULL);
}

/* ---- every type ---- */

static void test_min_sizes(void **state)
{
    /* The least encoded size of each type, which bounds forged counts, must
     * not exceed what its emptiest object really takes. */
    for (size_t i = 0; i < NTYPES; i++) {
        px_wire_type t;
        px_buf b;
        void *obj;

        assert_int_equal(px_wire_type_info(wire_types[i], &t), PMIX_SUCCESS);
        assert_int_equal(t.size, px_type_size(wire_types[i]));
        obj = zalloc(t.size);
        px_buf_init(&b);
        px_pack_typed(&b, obj, wire_types[i]);
        assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
        if (b.size < t.min) {
            fail_msg("type %u: %zu bytes < min %zu", (unsigned)wire_types[i], b.size, t.min);
        }
        px_buf_fini(&b);
        free(obj);
    }
}

static void roundtrip_value(const pmix_value_t *in)
{
    px_buf b, r;
    pmix_value_t out;
    uint8_t *bytes;
    size_t len;

    px_buf_init(&b);
    px_pack_value(&b, in);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    bytes = px_buf_steal(&b, &len);
    px_buf_view(&r, bytes, len);
    assert_int_equal(px_unpack_value(&r, &out), PMIX_SUCCESS);
    assert_int_equal(px_buf_left(&r), 0);
    if (!px_value_equal(in, &out)) {
        fail_msg("type %u differs after a round trip", (unsigned)in->type);
    }
    PMIx_Value_destruct(&out);
    /* Skipping consumes exactly the same bytes. */
    px_buf_view(&r, bytes, len);
    assert_int_equal(px_skip_value(&r), PMIX_SUCCESS);
    assert_int_equal(px_buf_left(&r), 0);
    free(bytes);
}

static void test_values(void **state)
{
    pmix_value_t v;

    for (size_t i = 0; i < NTYPES; i++) {
        for (int edge = 0; edge < 2; edge++) {
            sample(&v, wire_types[i], edge);
            roundtrip_value(&v);
            PMIx_Value_destruct(&v);
        }
    }
    v.type = PMIX_UNDEF;
    roundtrip_value(&v);

    /* Golden encodings pin the format. */
    {
        static const uint8_t u32[] = {PMIX_UINT32, 0, 4, 3, 2, 1};
        static const uint8_t proc[] = {PMIX_PROC, 0, 1, 1, 0, 0, 0, 'j', 5, 0, 0, 0};
        pmix_proc_t p;
        px_buf b;

        px_buf_init(&b);
        v.type = PMIX_UINT32;
        v.data.uint32 = 0x01020304;
        px_pack_value(&b, &v);
        assert_int_equal(b.size, sizeof(u32));
        assert_memory_equal(b.data, u32, sizeof(u32));
        px_buf_fini(&b);
        fill_proc(&p, "j", 5);
        v.type = PMIX_PROC;
        v.data.proc = &p;
        px_pack_value(&b, &v);
        assert_int_equal(b.size, sizeof(proc));
        assert_memory_equal(b.data, proc, sizeof(proc));
        px_buf_fini(&b);
    }
}

static void test_typed(void **state)
{
    /* px_pack_typed / px_unpack_typed of every type's object. */
    for (size_t i = 0; i < NTYPES; i++) {
        pmix_value_t v;
        px_buf b, r;
        void *out, *obj;
        size_t sz = px_type_size(wire_types[i]);

        sample(&v, wire_types[i], false);
        obj = value_obj(&v);
        px_buf_init(&b);
        px_pack_typed(&b, obj, wire_types[i]);
        assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
        px_buf_view(&r, b.data, b.size);
        out = zalloc(sz);
        assert_int_equal(px_unpack_typed(&r, out, wire_types[i]), PMIX_SUCCESS);
        assert_int_equal(px_buf_left(&r), 0);
        assert_true(px_elems_equal(obj, out, 1, wire_types[i]));
        px_wire_destruct(out, wire_types[i]);
        free(out);
        px_buf_fini(&b);
        PMIx_Value_destruct(&v);
    }
}

static void test_info_array(void **state)
{
    size_t n, m, len;
    pmix_info_t *in = all_infos(&n), *out;
    uint8_t *bytes = encode_all(&len);
    px_buf b;

    px_buf_view(&b, bytes, len);
    assert_int_equal(px_unpack_info(&b, &out, &m), PMIX_SUCCESS);
    assert_int_equal(px_buf_left(&b), 0);
    assert_int_equal(m, n);
    for (size_t i = 0; i < n; i++) {
        if (!px_elems_equal(&in[i], &out[i], 1, PMIX_INFO)) {
            fail_msg("info %zu (%s) differs", i, in[i].key);
        }
    }
    assert_int_equal(strlen(out[n - 2].key), PMIX_MAX_KEYLEN);
    assert_int_equal(out[n - 2].flags, PMIX_INFO_REQD);
    PMIx_Info_free(out, m);
    PMIx_Info_free(in, n);
    free(bytes);

    /* Empty lists. */
    px_buf_init(&b);
    px_pack_info(&b, NULL, 0);
    px_pack_procs(&b, NULL, 0);
    px_buf_view(&b, b.data, b.size);
    bytes = b.data;
    assert_int_equal(px_unpack_info(&b, &out, &m), PMIX_SUCCESS);
    assert_null(out);
    assert_int_equal(m, 0);
    {
        pmix_proc_t *p;
        assert_int_equal(px_unpack_procs(&b, &p, &m), PMIX_SUCCESS);
        assert_null(p);
    }
    free(bytes);
}

static void test_procs_and_names(void **state)
{
    pmix_proc_t p[3], *out;
    pmix_nspace_t ns;
    size_t n;
    px_buf b;

    memset(ns, 'n', PMIX_MAX_NSLEN);
    ns[PMIX_MAX_NSLEN] = '\0';
    fill_proc(&p[0], ns, 0);
    fill_proc(&p[1], "", PMIX_RANK_WILDCARD);
    fill_proc(&p[2], "x", PMIX_RANK_UNDEF);
    px_buf_init(&b);
    px_pack_procs(&b, p, 3);
    px_pack_typed(&b, ns, PMIX_PROC_NSPACE);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    {
        px_buf r;
        pmix_nspace_t back;
        px_buf_view(&r, b.data, b.size);
        assert_int_equal(px_unpack_procs(&r, &out, &n), PMIX_SUCCESS);
        assert_int_equal(n, 3);
        for (size_t i = 0; i < 3; i++) {
            assert_string_equal(out[i].nspace, p[i].nspace);
            assert_int_equal(out[i].rank, p[i].rank);
        }
        PMIx_Proc_free(out, n);
        assert_int_equal(px_unpack_typed(&r, back, PMIX_PROC_NSPACE), PMIX_SUCCESS);
        assert_string_equal(back, ns);
    }
    px_buf_fini(&b);

    /* A namespace without its terminator is refused, never over-read. */
    memset(p[0].nspace, 'z', sizeof(p[0].nspace));
    px_pack_proc(&b, &p[0]);
    assert_int_equal(px_buf_status(&b), PMIX_ERR_BAD_PARAM);
    px_buf_fini(&b);
    {
        pmix_info_t info;
        memset(&info, 0, sizeof(info));
        memset(info.key, 'k', sizeof(info.key));
        px_pack_info(&b, &info, 1);
        assert_int_equal(px_buf_status(&b), PMIX_ERR_BAD_PARAM);
        px_buf_fini(&b);
    }
}

static void test_argv(void **state)
{
    char *v[] = {"a", "", "ccc", NULL}, **out;
    px_buf b, r;

    px_buf_init(&b);
    px_pack_argv(&b, v);
    px_pack_argv(&b, NULL);
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_argv(&r, &out), PMIX_SUCCESS);
    assert_string_equal(out[0], "a");
    assert_string_equal(out[1], "");
    assert_string_equal(out[2], "ccc");
    assert_null(out[3]);
    PMIx_Argv_free(out);
    assert_int_equal(px_unpack_argv(&r, &out), PMIX_SUCCESS);
    assert_null(out);
    px_buf_fini(&b);

    /* A NULL element inside an array is malformed. */
    px_pack_u32(&b, 2);
    px_pack_str(&b, "a");
    px_pack_str(&b, NULL);
    px_buf_view(&r, b.data, b.size);
    out = (char **)v;
    assert_int_equal(px_unpack_argv(&r, &out), PMIX_ERR_UNPACK_FAILURE);
    assert_null(out);
    assert_int_equal(r.pos, 0);
    px_buf_view(&r, b.data, b.size);
    px_buf_fini(&b);
}

/* ---- refused and unknown types ---- */

static void test_refused(void **state)
{
    pmix_value_t v;
    pmix_topology_t topo = {NULL, NULL};
    pmix_cpuset_t cpuset = {NULL, (void *)&topo};
    px_buf b;
    int x = 0;

    px_buf_init(&b);
    v.type = PMIX_POINTER;
    v.data.ptr = &x;
    px_pack_value(&b, &v);
    assert_int_equal(px_buf_status(&b), PMIX_ERR_BAD_PARAM);
    px_buf_fini(&b);

    v.type = PMIX_TOPO;
    v.data.topo = &topo;
    px_pack_value(&b, &v);
    assert_int_equal(px_buf_status(&b), PMIX_ERR_NOT_SUPPORTED);
    px_buf_fini(&b);

    v.type = PMIX_PROC_CPUSET;
    v.data.cpuset = &cpuset;
    px_pack_value(&b, &v);
    assert_int_equal(px_buf_status(&b), PMIX_ERR_NOT_SUPPORTED);
    px_buf_fini(&b);

    v.type = 499;
    px_pack_value(&b, &v);
    assert_int_equal(px_buf_status(&b), PMIX_ERR_UNKNOWN_DATA_TYPE);
    px_buf_fini(&b);

    v.type = PMIX_KVAL;
    px_pack_value(&b, &v);
    assert_int_equal(px_buf_status(&b), PMIX_ERR_NOT_SUPPORTED);
    px_buf_fini(&b);

    /* A refused type inside a data array fails the whole pack. */
    {
        void *ptrs[2] = {&x, &x};
        pmix_data_array_t d = {PMIX_POINTER, 2, ptrs};
        v.type = PMIX_DATA_ARRAY;
        v.data.darray = &d;
        px_pack_value(&b, &v);
        assert_int_equal(px_buf_status(&b), PMIX_ERR_BAD_PARAM);
        px_buf_fini(&b);
    }

    /* On the wire: an unknown type, a pointer, an array of them. */
    {
        pmix_value_t out;
        px_buf r;
        static const uint8_t unknown[] = {0xf3, 0x01, 0, 0, 0, 0};
        static const uint8_t pointer[] = {PMIX_POINTER, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        static const uint8_t arr[] = {PMIX_DATA_ARRAY, 0, 1, 0xf3, 0x01, 1, 0, 0, 0, 0, 0, 0, 0, 0};
        static const uint8_t badflag[] = {PMIX_PROC, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0};

        px_buf_view(&r, unknown, sizeof(unknown));
        assert_int_equal(px_unpack_value(&r, &out), PMIX_ERR_UNKNOWN_DATA_TYPE);
        assert_int_equal(r.pos, 0);
        px_buf_view(&r, pointer, sizeof(pointer));
        assert_int_equal(px_unpack_value(&r, &out), PMIX_ERR_UNPACK_FAILURE);
        px_buf_view(&r, arr, sizeof(arr));
        assert_int_equal(px_unpack_value(&r, &out), PMIX_ERR_UNKNOWN_DATA_TYPE);
        px_buf_view(&r, badflag, sizeof(badflag));
        assert_int_equal(px_unpack_value(&r, &out), PMIX_ERR_UNPACK_FAILURE);
        assert_int_equal(out.type, PMIX_UNDEF);
        assert_int_equal(px_skip_value(&r), PMIX_ERR_UNPACK_FAILURE);
        assert_int_equal(px_unpack_typed(&r, &out, PMIX_TOPO), PMIX_ERR_NOT_SUPPORTED);
        assert_int_equal(px_unpack_typed(&r, &out, 499), PMIX_ERR_UNKNOWN_DATA_TYPE);
    }
}

/* ---- nesting ---- */

/* A chain of `depth` data arrays, each holding the next. */
static pmix_data_array_t *chain(int depth)
{
    pmix_data_array_t *d = zalloc(sizeof(*d));

    if (depth == 1) {
        d->type = PMIX_UINT8;
        d->size = 1;
        d->array = zalloc(1);
        return d;
    }
    d->type = PMIX_DATA_ARRAY;
    d->size = 1;
    pmix_data_array_t *inner = chain(depth - 1);
    d->array = inner; /* an array of one pmix_data_array_t */
    return d;
}

static void test_depth(void **state)
{
    pmix_value_t v, out;
    px_buf b, r;

    /* PX_WIRE_MAX_DEPTH levels pass; one more is refused both ways. */
    v.type = PMIX_DATA_ARRAY;
    v.data.darray = chain(PX_WIRE_MAX_DEPTH);
    roundtrip_value(&v);
    PMIx_Value_destruct(&v);

    v.type = PMIX_DATA_ARRAY;
    v.data.darray = chain(PX_WIRE_MAX_DEPTH + 1);
    px_buf_init(&b);
    px_pack_value(&b, &v);
    assert_int_equal(px_buf_status(&b), PMIX_ERR_BAD_PARAM);
    px_buf_fini(&b);
    PMIx_Value_destruct(&v);

    /* Forge the too-deep encoding by hand. */
    px_buf_init(&b);
    px_pack_u16(&b, PMIX_DATA_ARRAY);
    px_pack_u8(&b, 1);
    for (int i = 0; i < PX_WIRE_MAX_DEPTH; i++) {
        px_pack_u16(&b, PMIX_DATA_ARRAY);
        px_pack_u64(&b, 1);
    }
    px_pack_u16(&b, PMIX_UINT8);
    px_pack_u64(&b, 1);
    px_pack_u8(&b, 9);
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_value(&r, &out), PMIX_ERR_UNPACK_FAILURE);
    assert_int_equal(out.type, PMIX_UNDEF);
    assert_int_equal(r.pos, 0);
    assert_int_equal(r.depth, 0);
    px_buf_fini(&b);

    /* Values directly inside values nest too: a forged chain of 100000
     * boxed values is refused, not followed down the stack. */
    px_buf_init(&b);
    for (int i = 0; i < 100000; i++) {
        px_pack_u16(&b, PMIX_VALUE);
        px_pack_u8(&b, 1);
    }
    px_pack_u16(&b, PMIX_UNDEF);
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_value(&r, &out), PMIX_ERR_UNPACK_FAILURE);
    assert_int_equal(r.pos, 0);
    assert_int_equal(px_skip_value(&r), PMIX_ERR_UNPACK_FAILURE);
    px_buf_fini(&b);
    {
        pmix_value_t self;
        self.type = PMIX_VALUE;
        self.data.ptr = &self;
        px_pack_value(&b, &self);
        assert_int_equal(px_buf_status(&b), PMIX_ERR_BAD_PARAM);
        px_buf_fini(&b);
    }
    {
        /* Within the limit, it works. */
        pmix_value_t vals[PX_WIRE_MAX_DEPTH + 1];
        for (int i = 0; i < PX_WIRE_MAX_DEPTH; i++) {
            vals[i].type = PMIX_VALUE;
            vals[i].data.ptr = &vals[i + 1];
        }
        vals[PX_WIRE_MAX_DEPTH].type = PMIX_BOOL;
        vals[PX_WIRE_MAX_DEPTH].data.flag = true;
        roundtrip_value(&vals[0]);
    }

    /* A data array that contains itself is caught by the same limit. */
    {
        pmix_data_array_t self = {PMIX_DATA_ARRAY, 1, NULL};
        self.array = &self;
        v.type = PMIX_DATA_ARRAY;
        v.data.darray = &self;
        px_pack_value(&b, &v);
        assert_int_equal(px_buf_status(&b), PMIX_ERR_BAD_PARAM);
        px_buf_fini(&b);
    }
}

/* ---- hostile input ---- */

static void test_truncation(void **state)
{
    size_t len, n;
    uint8_t *bytes = encode_all(&len);
    pmix_info_t *out;
    px_buf b;

    for (size_t cut = 0; cut < len; cut++) {
        /* A copy of exactly `cut` bytes, so ASan sees any over-read. */
        uint8_t *part = malloc(cut > 0 ? cut : 1);
        assert_non_null(part);
        memcpy(part, bytes, cut);
        px_buf_view(&b, part, cut);
        out = (pmix_info_t *)1;
        n = 99;
        if (px_unpack_info(&b, &out, &n) == PMIX_SUCCESS) {
            fail_msg("a prefix of %zu of %zu bytes was accepted", cut, len);
        }
        assert_null(out);
        assert_int_equal(n, 0);
        assert_int_equal(b.pos, 0);
        free(part);
    }
    free(bytes);

    /* The same for each single value, unpacked and skipped. */
    for (size_t i = 0; i < NTYPES; i++) {
        pmix_value_t v, o;
        uint8_t *enc;

        sample(&v, wire_types[i], false);
        px_buf_init(&b);
        px_pack_value(&b, &v);
        enc = px_buf_steal(&b, &len);
        for (size_t cut = 0; cut < len; cut++) {
            uint8_t *part = malloc(cut > 0 ? cut : 1);
            assert_non_null(part);
            memcpy(part, enc, cut);
            px_buf_view(&b, part, cut);
            assert_int_not_equal(px_unpack_value(&b, &o), PMIX_SUCCESS);
            assert_int_equal(o.type, PMIX_UNDEF);
            assert_int_equal(b.pos, 0);
            assert_int_not_equal(px_skip_value(&b), PMIX_SUCCESS);
            assert_int_equal(b.pos, 0);
            free(part);
        }
        free(enc);
        PMIx_Value_destruct(&v);
    }
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_corruption(void **state)
{
    size_t len, n, accepted = 0;
    uint8_t *bytes = encode_all(&len);
    uint8_t *copy = malloc(len);
    pmix_info_t *out;
    px_buf b;

    assert_non_null(copy);
    for (uint64_t seed = 1; seed <= 3000; seed++) {
        uint64_t s = seed * 0x9e3779b97f4a7c15ull;
        int flips = 1 + (int)(xorshift(&s) % 8);
        size_t cut = len;

        memcpy(copy, bytes, len);
        for (int i = 0; i < flips; i++) {
            size_t at = (size_t)(xorshift(&s) % len);
            uint8_t kind = (uint8_t)(xorshift(&s) % 4);
            copy[at] = kind == 0 ? 0xff : kind == 1 ? 0 : (uint8_t)xorshift(&s);
        }
        if (seed % 5 == 0) {
            cut = (size_t)(xorshift(&s) % len);
        }
        px_buf_view(&b, copy, cut);
        if (px_unpack_info(&b, &out, &n) == PMIX_SUCCESS) {
            accepted++;
            /* Whatever was accepted must pack again. */
            px_buf rb;
            px_buf_init(&rb);
            px_pack_info(&rb, out, n);
            px_buf_fini(&rb);
            PMIx_Info_free(out, n);
        } else {
            assert_null(out);
            assert_int_equal(b.pos, 0);
        }
        px_buf_view(&b, copy, cut);
        (void)px_skip_value(&b);
    }
    print_message("corruption: %zu of 3000 mutated messages still decoded\n", accepted);
    free(copy);
    free(bytes);
}

static void test_forged_counts(void **state)
{
    px_buf b, r;
    pmix_info_t *info;
    pmix_proc_t *procs;
    pmix_value_t v;
    char **argv;
    size_t n;

    /* A huge info count with nothing behind it. */
    px_buf_init(&b);
    px_pack_u64(&b, UINT64_MAX / 2);
    px_pack_str(&b, "k");
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_info(&r, &info, &n), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_procs(&r, &procs, &n), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    assert_null(procs);
    px_buf_fini(&b);

    /* Data arrays of every type claiming 2^40 elements. */
    for (size_t i = 0; i < NTYPES; i++) {
        px_buf_init(&b);
        px_pack_u16(&b, PMIX_DATA_ARRAY);
        px_pack_u8(&b, 1);
        px_pack_u16(&b, wire_types[i]);
        px_pack_u64(&b, (uint64_t)1 << 40);
        for (int k = 0; k < 64; k++) {
            px_pack_u8(&b, 0);
        }
        px_buf_view(&r, b.data, b.size);
        assert_int_not_equal(px_unpack_value(&r, &v), PMIX_SUCCESS);
        px_buf_view(&r, b.data, b.size);
        assert_int_not_equal(px_skip_value(&r), PMIX_SUCCESS);
        px_buf_fini(&b);
    }

    /* Counts inside structures: argv, coord dims, geometry, app infos. */
    px_buf_init(&b);
    px_pack_u32(&b, 0xfffffffe);
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_argv(&r, &argv), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    px_buf_fini(&b);

    px_buf_init(&b);
    px_pack_u16(&b, PMIX_COORD);
    px_pack_u8(&b, 1);
    px_pack_str(&b, NULL);
    px_pack_str(&b, NULL);
    px_pack_u8(&b, 0);
    px_pack_u64(&b, UINT64_MAX);
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_value(&r, &v), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    px_buf_fini(&b);

    px_buf_init(&b);
    px_pack_u16(&b, PMIX_NODE_STATS);
    px_pack_u8(&b, 1);
    px_pack_str(&b, "n");
    for (int k = 0; k < 11; k++) {
        px_pack_float(&b, 0);
    }
    px_pack_i64(&b, 0);
    px_pack_i64(&b, 0);
    px_pack_u64(&b, (uint64_t)1 << 50);
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_value(&r, &v), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    px_buf_fini(&b);

    /* A byte object longer than the message. */
    px_buf_init(&b);
    px_pack_u16(&b, PMIX_BYTE_OBJECT);
    px_pack_u32(&b, 0xfffffff0);
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_value(&r, &v), PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    px_buf_fini(&b);
}

/* ---- the Standard's data-buffer API ---- */

static void test_data_pack_unpack(void **state)
{
    pmix_data_buffer_t buf;
    int32_t ints[5] = {1, -2, 3, -4, 5}, iout[5], n;
    char *strs[3] = {"one", NULL, "three"}, *sout[3];
    pmix_proc_t procs[2], pout[2];
    pmix_info_t *info, iout2[2];
    pmix_value_t val, vout;
    size_t ninfo;
    pmix_proc_t me;

    PMIX_DATA_BUFFER_CONSTRUCT(&buf);
    fill_proc(&me, "me", 0);
    fill_proc(&procs[0], "a", 1);
    fill_proc(&procs[1], "b", PMIX_RANK_WILDCARD);
    info = all_infos(&ninfo);
    sample(&val, PMIX_GEOMETRY, false);

    assert_int_equal(PMIx_Data_pack(&me, &buf, ints, 5, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, strs, 3, PMIX_STRING), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, procs, 2, PMIX_PROC), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, info, 2, PMIX_INFO), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, &val, 1, PMIX_VALUE), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, ints, 0, PMIX_INT32), PMIX_SUCCESS);
    assert_ptr_equal(buf.pack_ptr, buf.base_ptr + buf.bytes_used);
    assert_true(buf.bytes_used <= buf.bytes_allocated);

    n = 5;
    assert_int_equal(PMIx_Data_unpack(&me, &buf, iout, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(n, 5);
    assert_memory_equal(iout, ints, sizeof(ints));
    n = 3;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, sout, &n, PMIX_STRING), PMIX_SUCCESS);
    assert_int_equal(n, 3);
    assert_string_equal(sout[0], "one");
    assert_null(sout[1]);
    assert_string_equal(sout[2], "three");
    free(sout[0]);
    free(sout[2]);
    /* The wrong type is reported and consumes nothing. */
    n = 2;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, iout, &n, PMIX_INT32), PMIX_ERR_TYPE_MISMATCH);
    n = 2;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, pout, &n, PMIX_PROC), PMIX_SUCCESS);
    assert_int_equal(n, 2);
    assert_true(PMIx_Check_procid(&pout[0], &procs[0]));
    assert_int_equal(pout[1].rank, PMIX_RANK_WILDCARD);
    n = 2;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, iout2, &n, PMIX_INFO), PMIX_SUCCESS);
    assert_true(px_elems_equal(info, iout2, 2, PMIX_INFO));
    PMIx_Info_destruct(&iout2[0]);
    PMIx_Info_destruct(&iout2[1]);
    /* More room than values: the count comes back. */
    n = 4;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, &vout, &n, PMIX_VALUE), PMIX_SUCCESS);
    assert_int_equal(n, 1);
    assert_true(px_value_equal(&val, &vout));
    PMIx_Value_destruct(&vout);
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, iout, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(n, 0);
    /* The end. */
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, iout, &n, PMIX_INT32),
                     PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER);
    /* Unpacking is not destructive: rewind and read again. */
    buf.unpack_ptr = buf.base_ptr;
    n = 5;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, iout, &n, PMIX_INT32), PMIX_SUCCESS);

    /* Bad arguments. */
    n = 0;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, iout, &n, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, NULL, iout, &n, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, NULL, &n, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_pack(NULL, NULL, ints, 1, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, NULL, 1, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, ints, -1, PMIX_INT32), PMIX_ERR_BAD_PARAM);

    /* A refused pack leaves the buffer as it was. */
    {
        size_t used = buf.bytes_used;
        void *ptrs[1] = {&n};
        pmix_data_array_t bad = {PMIX_POINTER, 1, ptrs};
        pmix_value_t badv;
        badv.type = PMIX_DATA_ARRAY;
        badv.data.darray = &bad;
        assert_int_equal(PMIx_Data_pack(NULL, &buf, ptrs, 1, PMIX_POINTER), PMIX_ERR_BAD_PARAM);
        assert_int_equal(PMIx_Data_pack(NULL, &buf, &badv, 1, PMIX_VALUE), PMIX_ERR_BAD_PARAM);
        assert_int_equal(PMIx_Data_pack(NULL, &buf, ints, 1, 499), PMIX_ERR_UNKNOWN_DATA_TYPE);
        assert_int_equal(buf.bytes_used, used);
        assert_ptr_equal(buf.pack_ptr, buf.base_ptr + used);
    }

    PMIX_DATA_BUFFER_DESTRUCT(&buf);
    assert_null(buf.base_ptr);
    PMIx_Info_free(info, ninfo);
    PMIx_Value_destruct(&val);
}

static void test_data_every_type(void **state)
{
    /* PMIx_Data_pack / unpack of two objects of every type. */
    pmix_data_buffer_t *buf;

    PMIX_DATA_BUFFER_CREATE(buf);
    assert_non_null(buf);
    for (size_t i = 0; i < NTYPES; i++) {
        pmix_data_array_t *d = sample_array(wire_types[i]);
        assert_int_equal(PMIx_Data_pack(NULL, buf, d->array, 2, wire_types[i]), PMIX_SUCCESS);
        PMIx_Data_array_free(d);
    }
    for (size_t i = 0; i < NTYPES; i++) {
        pmix_data_array_t *d = sample_array(wire_types[i]);
        size_t sz = px_type_size(wire_types[i]);
        void *out = zalloc(2 * sz);
        int32_t n = 2;
        assert_int_equal(PMIx_Data_unpack(NULL, buf, out, &n, wire_types[i]), PMIX_SUCCESS);
        assert_int_equal(n, 2);
        if (!px_elems_equal(d->array, out, 2, wire_types[i])) {
            fail_msg("type %u differs after PMIx_Data_pack/unpack", (unsigned)wire_types[i]);
        }
        px_elems_destruct(out, 2, wire_types[i]);
        free(out);
        PMIx_Data_array_free(d);
    }
    PMIX_DATA_BUFFER_RELEASE(buf);
    assert_null(buf);
}

static void test_data_max_num_values(void **state)
{
    pmix_data_buffer_t buf = PMIX_DATA_BUFFER_STATIC_INIT;
    int32_t ints[5] = {10, 20, 30, 40, 50}, out[5] = {0}, n;
    char *strs[3] = {"a", "b", "c"}, *sout[3] = {NULL};
    uint8_t tail = 9, t8;

    assert_int_equal(PMIx_Data_pack(NULL, &buf, ints, 5, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, strs, 3, PMIX_STRING), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &buf, &tail, 1, PMIX_UINT8), PMIX_SUCCESS);

    /* Room for 2 of 5: the 2 come back, the rest of the record is passed. */
    n = 2;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, out, &n, PMIX_INT32),
                     PMIX_ERR_UNPACK_INADEQUATE_SPACE);
    assert_int_equal(n, 2);
    assert_int_equal(out[0], 10);
    assert_int_equal(out[1], 20);
    assert_int_equal(out[2], 0); /* never written past the room given */
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, sout, &n, PMIX_STRING),
                     PMIX_ERR_UNPACK_INADEQUATE_SPACE);
    assert_int_equal(n, 1);
    assert_string_equal(sout[0], "a");
    assert_null(sout[1]);
    free(sout[0]);
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &buf, &t8, &n, PMIX_UINT8), PMIX_SUCCESS);
    assert_int_equal(t8, 9);
    PMIx_Data_buffer_destruct(&buf);
}

static void test_data_payloads(void **state)
{
    pmix_data_buffer_t a, b, *c;
    pmix_byte_object_t bo;
    int32_t x = 1, y = 2, z = 3, out, n;
    char *raw;
    size_t rawlen;

    PMIx_Data_buffer_construct(&a);
    PMIx_Data_buffer_construct(&b);
    assert_int_equal(PMIx_Data_pack(NULL, &a, &x, 1, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &a, &y, 1, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_pack(NULL, &b, &z, 1, PMIX_INT32), PMIX_SUCCESS);
    /* Only the unread part of the source is appended. */
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &a, &out, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(PMIx_Data_copy_payload(&b, &a), PMIX_SUCCESS);
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &a, &out, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(out, 2); /* the source is intact */
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &b, &out, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(out, 3);
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, &b, &out, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(out, 2);
    /* Copying a buffer's payload onto itself. */
    b.unpack_ptr = b.base_ptr;
    assert_int_equal(PMIx_Data_copy_payload(&b, &b), PMIX_SUCCESS);
    for (int i = 0; i < 4; i++) {
        n = 1;
        assert_int_equal(PMIx_Data_unpack(NULL, &b, &out, &n, PMIX_INT32), PMIX_SUCCESS);
        assert_int_equal(out, i % 2 == 0 ? 3 : 2);
    }
    PMIx_Data_buffer_destruct(&a);

    /* unload -> load: the payload moves, nothing is copied or leaked. */
    b.unpack_ptr = b.base_ptr;
    assert_int_equal(PMIx_Data_unload(&b, &bo), PMIX_SUCCESS);
    assert_null(b.base_ptr);
    assert_int_equal(b.bytes_used, 0);
    assert_non_null(bo.bytes);
    PMIX_DATA_BUFFER_CREATE(c);
    assert_int_equal(PMIx_Data_load(c, &bo), PMIX_SUCCESS);
    assert_null(bo.bytes);
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, c, &out, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(out, 3);
    /* unload gives only what is left. */
    assert_int_equal(PMIx_Data_unload(c, &bo), PMIX_SUCCESS);
    /* embed copies, leaving the byte object to its owner. */
    assert_int_equal(PMIx_Data_embed(c, &bo), PMIX_SUCCESS);
    assert_non_null(bo.bytes);
    PMIx_Byte_object_destruct(&bo);
    for (int i = 0; i < 3; i++) {
        n = 1;
        assert_int_equal(PMIx_Data_unpack(NULL, c, &out, &n, PMIX_INT32), PMIX_SUCCESS);
        assert_int_equal(out, i % 2 == 0 ? 2 : 3);
    }

    /* The macros' load/unload pair. */
    PMIX_DATA_BUFFER_UNLOAD(c, raw, rawlen);
    assert_null(raw); /* everything was read */
    assert_int_equal(rawlen, 0);
    assert_int_equal(PMIx_Data_pack(NULL, c, &x, 1, PMIX_INT32), PMIX_SUCCESS);
    PMIX_DATA_BUFFER_UNLOAD(c, raw, rawlen);
    assert_non_null(raw);
    PMIX_DATA_BUFFER_LOAD(c, raw, rawlen);
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, c, &out, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(out, 1);
    /* Reloading a buffer with its own block keeps it. */
    PMIX_DATA_BUFFER_LOAD(c, c->base_ptr, c->bytes_used);
    c->unpack_ptr = c->base_ptr;
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, c, &out, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(out, 1);
    /* Packing after a load appends. */
    assert_int_equal(PMIx_Data_pack(NULL, c, &y, 1, PMIX_INT32), PMIX_SUCCESS);
    n = 1;
    assert_int_equal(PMIx_Data_unpack(NULL, c, &out, &n, PMIX_INT32), PMIX_SUCCESS);
    assert_int_equal(out, 2);
    PMIX_DATA_BUFFER_RELEASE(c);

    assert_int_equal(PMIx_Data_load(NULL, &bo), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_unload(NULL, &bo), PMIX_ERR_BAD_PARAM);
    assert_int_equal(PMIx_Data_copy_payload(NULL, &b), PMIX_ERR_BAD_PARAM);
    PMIx_Data_buffer_release(NULL);
    PMIx_Data_buffer_destruct(NULL);
}

static void test_data_copy_print(void **state)
{
    void *copy;
    char *text = NULL;

    for (size_t i = 0; i < NTYPES; i++) {
        pmix_value_t v;
        sample(&v, wire_types[i], false);
        void *obj = value_obj(&v);
        assert_int_equal(PMIx_Data_copy(&copy, wire_types[i] == PMIX_STRING ? v.data.string : obj,
                                        wire_types[i]),
                         PMIX_SUCCESS);
        if (wire_types[i] == PMIX_STRING) {
            assert_string_equal(copy, v.data.string);
        } else {
            assert_true(px_elems_equal(obj, copy, 1, wire_types[i]));
            px_elems_destruct(copy, 1, wire_types[i]);
        }
        free(copy);
        assert_int_equal(PMIx_Data_print(&text, "  ",
                                         wire_types[i] == PMIX_STRING ? v.data.string : obj,
                                         wire_types[i]),
                         PMIX_SUCCESS);
        assert_non_null(text);
        assert_true(strncmp(text, "  Data type: ", 13) == 0);
        free(text);
        PMIx_Value_destruct(&v);
    }
    {
        int32_t x = -17;
        pmix_proc_t p;
        assert_int_equal(PMIx_Data_print(&text, NULL, &x, PMIX_INT32), PMIX_SUCCESS);
        assert_non_null(strstr(text, "-17"));
        free(text);
        fill_proc(&p, "job", PMIX_RANK_WILDCARD);
        assert_int_equal(PMIx_Data_print(&text, "", &p, PMIX_PROC), PMIX_SUCCESS);
        assert_non_null(strstr(text, "job:WILDCARD"));
        free(text);
        assert_int_equal(PMIx_Data_copy(&copy, &x, PMIX_POINTER), PMIX_SUCCESS);
        assert_ptr_equal(copy, &x);
        assert_int_equal(PMIx_Data_copy(&copy, &x, 499), PMIX_ERR_UNKNOWN_DATA_TYPE);
        assert_int_equal(PMIx_Data_print(&text, "", &x, 499), PMIX_ERR_BAD_PARAM);
        assert_int_equal(PMIx_Data_copy(NULL, &x, PMIX_INT32), PMIX_ERR_BAD_PARAM);
    }
    {
        uint8_t in[4] = {1, 2, 3, 4}, *out = (uint8_t *)1;
        size_t n = 7;
        assert_false(PMIx_Data_compress(in, sizeof(in), &out, &n));
        assert_null(out);
        assert_int_equal(n, 0);
        assert_false(PMIx_Data_decompress(in, sizeof(in), &out, &n));
    }
}

/* ---- the table of data types (common/px_types.def) ---- */

/* The types the table may refuse on the wire, each for a reason. A row
 * that refuses and is not here fails test_table_rows: refusing a type is
 * a decision, not an omission. */
static const struct {
    pmix_data_type_t type;
    pmix_status_t refusal;
    const char *why;
} refused_types[] = {
    {PMIX_POINTER, PMIX_ERR_BAD_PARAM, "an address means nothing in another process"},
    {PMIX_TOPO, PMIX_ERR_NOT_SUPPORTED, "a handle on a local hwloc topology"},
    {PMIX_KVAL, PMIX_ERR_NOT_SUPPORTED, "the Standard defines no structure for it"},
    {PMIX_BUFFER, PMIX_ERR_NOT_SUPPORTED, "OpenPMIx's internal buffer, no public structure"},
};

/* Integer constants of the ABI below PMIX_DATA_TYPE_MAX that are not data
 * types: the values of other enumerations and flags, by prefix or by name.
 * Every other such constant of tests/abi/constants.tsv must be a row. */
static const char *const not_type_prefixes[] = {
    "PMIX_PROC_STATE_", "PMIX_JOB_STATE_", "PMIX_LINK_STATE_", "PMIX_PERSIST_",
    "PMIX_SCOPE_",      "PMIX_RANGE_",     "PMIX_DEVTYPE_",    "PMIX_COORD_VIEW_",
    "PMIX_CPUBIND_",    "PMIX_FWD_",       "PMIX_LOCALITY_",   "PMIX_STORAGE_",
};
static const char *const not_type_names[] = {
    "PMIX_SUCCESS",
    "PMIX_LOCAL",
    "PMIX_REMOTE",
    "PMIX_GLOBAL",
    "PMIX_INTERNAL",
    "PMIX_HAVE_VISIBILITY",
    "PMIX_MAX_NSLEN",
    "PMIX_MAX_KEYLEN",
    "PMIX_DATA_TYPE_MAX",
    "PMIX_LINK_DOWN",
    "PMIX_LINK_UP",
    "PMIX_ALLOC_NEW",
    "PMIX_ALLOC_EXTEND",
    "PMIX_ALLOC_RELEASE",
    "PMIX_ALLOC_REAQUIRE",
    "PMIX_ALLOC_EXTERNAL",
    "PMIX_INFO_REQD",
    "PMIX_INFO_ARRAY_END",
    "PMIX_INFO_REQD_PROCESSED",
    "PMIX_INFO_QUALIFIER",
    "PMIX_INFO_PERSISTENT",
    "PMIX_COORD_LOGICAL_VIEW",
    "PMIX_COORD_PHYSICAL_VIEW",
};

static bool is_not_type(const char *name)
{
    for (size_t i = 0; i < sizeof(not_type_prefixes) / sizeof(not_type_prefixes[0]); i++) {
        if (strncmp(name, not_type_prefixes[i], strlen(not_type_prefixes[i])) == 0) {
            return true;
        }
    }
    for (size_t i = 0; i < sizeof(not_type_names) / sizeof(not_type_names[0]); i++) {
        if (strcmp(name, not_type_names[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* Every data type of the ABI's constants (tests/abi/constants.tsv: the
 * Standard's, and OpenPMIx's PMIX_BUFFER) has a row of its name and value,
 * and every row is one of them. */
static void test_table_complete(void **state)
{
    char line[1024];
    bool seen[PX_NTYPES] = {false};
    size_t ntypes = 0;
    FILE *f = fopen(PMIXLAB_ABI_CONSTANTS, "r");

    (void)state;
    assert_non_null(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        char *name = strtok(line, "\t\n");
        char *kind = strtok(NULL, "\t\n");
        char *value = strtok(NULL, "\t\n");
        char *end;
        long v;

        if (name == NULL || name[0] == '#' || kind == NULL || value == NULL ||
            strcmp(kind, "integer") != 0) {
            continue;
        }
        v = strtol(value, &end, 0);
        if (*end != '\0' || v < 0 || v >= PMIX_DATA_TYPE_MAX || is_not_type(name)) {
            continue;
        }
        if (v >= PX_NTYPES || px_types[v].name == NULL) {
            fail_msg("%s (%ld) is a data type of the ABI without a row in px_types.def", name, v);
        }
        if (strcmp(px_types[v].name, name) != 0) {
            fail_msg("the row of %ld is %s, the ABI's type is %s", v, px_types[v].name, name);
        }
        seen[v] = true;
        ntypes++;
    }
    fclose(f);
    for (size_t t = 0; t < PX_NTYPES; t++) {
        if (px_types[t].name != NULL && !seen[t]) {
            fail_msg("row %s (%zu) is no data type of the ABI", px_types[t].name, t);
        }
    }
    assert_true(ntypes >= 68); /* PMIX_UNDEF .. PMIX_STOR_ACCESS_TYPE, less 29 and 44 */
    assert_null(px_type_of(PX_NTYPES)->name);
    assert_int_equal(px_type_of(PMIX_DATA_TYPE_MAX)->wire, PMIX_ERR_UNKNOWN_DATA_TYPE);
}

/* The reason a row refuses the wire, or NULL if refused_types[] lacks it. */
static const char *refusal_of(pmix_data_type_t type, pmix_status_t *rc)
{
    for (size_t i = 0; i < sizeof(refused_types) / sizeof(refused_types[0]); i++) {
        if (refused_types[i].type == type) {
            *rc = refused_types[i].refusal;
            return refused_types[i].why;
        }
    }
    return NULL;
}

/* One object of a row that crosses the wire: packed and unpacked (as
 * itself and in a value), copied, compared and freed. */
static void roundtrip_row(pmix_data_type_t type, bool edge)
{
    const px_type *row = px_type_of(type);
    pmix_value_t v, vout, vcopy;
    px_buf b, r;
    void *obj, *out, *copy, *empty;
    char *text = NULL;

    sample(&v, type, edge);
    obj = value_obj(&v);
    if (obj != NULL) {
        out = zalloc(row->size);
        copy = zalloc(row->size);
        empty = zalloc(row->size);
        px_buf_init(&b);
        px_pack_typed(&b, obj, type);
        assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
        assert_true(b.size >= row->min);
        px_buf_view(&r, b.data, b.size);
        assert_int_equal(px_unpack_typed(&r, out, type), PMIX_SUCCESS);
        assert_int_equal(px_buf_left(&r), 0);
        assert_int_equal(px_elems_copy(copy, obj, 1, type), PMIX_SUCCESS);
        if (!px_elems_equal(obj, out, 1, type) || !px_elems_equal(copy, out, 1, type)) {
            fail_msg("%s: not equal after pack/unpack and copy", row->name);
        }
        px_elems_construct(empty, 1, type);
        if (!edge && px_elems_equal(obj, empty, 1, type)) {
            fail_msg("%s: the sample equals an empty object", row->name);
        }
        assert_int_equal(
            PMIx_Data_print(&text, "", type == PMIX_STRING ? v.data.string : obj, type),
            PMIX_SUCCESS);
        assert_non_null(strstr(text, row->name));
        free(text);
        px_wire_destruct(out, type);
        px_elems_free(copy, 1, type);
        px_elems_free(empty, 1, type);
        free(out);
        px_buf_fini(&b);
    }
    px_buf_init(&b);
    px_pack_value(&b, &v);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    px_buf_view(&r, b.data, b.size);
    assert_int_equal(px_unpack_value(&r, &vout), PMIX_SUCCESS);
    assert_int_equal(PMIx_Value_xfer(&vcopy, &v), PMIX_SUCCESS);
    if (!px_value_equal(&v, &vout) || !px_value_equal(&vcopy, &vout)) {
        fail_msg("%s: value not equal after pack/unpack and transfer", row->name);
    }
    PMIx_Value_destruct(&vout);
    PMIx_Value_destruct(&vcopy);
    PMIx_Value_destruct(&v);
    px_buf_fini(&b);
}

/* Every row: a type that crosses the wire round-trips (rich and edge
 * samples); a refused one is refused for its listed reason and is still
 * copied, compared and freed when it has a C form. */
static void test_table_rows(void **state)
{
    (void)state;
    for (size_t t = 0; t < PX_NTYPES; t++) {
        const px_type *row = &px_types[t];
        pmix_data_type_t type = (pmix_data_type_t)t;
        pmix_status_t want = PMIX_SUCCESS;
        const char *why = refusal_of(type, &want);
        pmix_value_t v;
        px_buf b;

        if (row->name == NULL) {
            continue;
        }
        assert_ptr_equal(px_type_of(type), row);
        assert_string_equal(PMIx_Data_type_string(type), row->name);
        assert_true(row->min >= 1);
        if (row->wire == PMIX_SUCCESS && why == NULL) {
            if (type == PMIX_UNDEF) {
                assert_int_equal(row->size, 0);
                continue; /* a value without data: test_values */
            }
            assert_true(row->size > 0);
            roundtrip_row(type, false);
            roundtrip_row(type, true);
            continue;
        }
        if (why == NULL) {
            fail_msg("%s refuses the wire (%d) without a reason in refused_types[]", row->name,
                     row->wire);
        }
        assert_int_equal(row->wire, want);
        /* Refused in a value, and on its own, with the row's status. */
        PMIx_Value_construct(&v);
        v.type = type;
        px_buf_init(&b);
        px_pack_value(&b, &v);
        assert_int_equal(px_buf_status(&b), want);
        px_buf_fini(&b);
        assert_int_equal(px_unpack_typed(&b, &v, type), want);
        if (row->size == 0) {
            assert_int_equal(px_elems_copy(&v, &v, 1, type), PMIX_ERR_NOT_SUPPORTED);
            assert_int_equal(PMIx_Value_load(&v, &v, type), PMIX_ERR_UNKNOWN_DATA_TYPE);
            continue;
        }
        /* A local object still copies, compares and frees. */
        {
            int target = 1;
            pmix_topology_t topo = {dup("pmixlab-test"), &target};
            void *p = &target;
            void *obj = type == PMIX_TOPO ? (void *)&topo : (void *)&p;
            void *copy = zalloc(row->size);

            assert_int_equal(px_elems_copy(copy, obj, 1, type), PMIX_SUCCESS);
            assert_true(px_elems_equal(obj, copy, 1, type));
            px_elems_free(copy, 1, type);
            assert_int_equal(PMIx_Value_load(&v, type == PMIX_TOPO ? obj : p, type), PMIX_SUCCESS);
            PMIx_Value_destruct(&v);
            free(topo.source);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_scalars, teardown_leaks),
        cmocka_unit_test_teardown(test_strings, teardown_leaks),
        cmocka_unit_test_teardown(test_frames, teardown_leaks),
        cmocka_unit_test_teardown(test_min_sizes, teardown_leaks),
        cmocka_unit_test_teardown(test_values, teardown_leaks),
        cmocka_unit_test_teardown(test_typed, teardown_leaks),
        cmocka_unit_test_teardown(test_info_array, teardown_leaks),
        cmocka_unit_test_teardown(test_procs_and_names, teardown_leaks),
        cmocka_unit_test_teardown(test_argv, teardown_leaks),
        cmocka_unit_test_teardown(test_refused, teardown_leaks),
        cmocka_unit_test_teardown(test_depth, teardown_leaks),
        cmocka_unit_test_teardown(test_truncation, teardown_leaks),
        cmocka_unit_test_teardown(test_corruption, teardown_leaks),
        cmocka_unit_test_teardown(test_forged_counts, teardown_leaks),
        cmocka_unit_test_teardown(test_data_pack_unpack, teardown_leaks),
        cmocka_unit_test_teardown(test_data_every_type, teardown_leaks),
        cmocka_unit_test_teardown(test_data_max_num_values, teardown_leaks),
        cmocka_unit_test_teardown(test_data_payloads, teardown_leaks),
        cmocka_unit_test_teardown(test_data_copy_print, teardown_leaks),
        cmocka_unit_test_teardown(test_table_complete, teardown_leaks),
        cmocka_unit_test_teardown(test_table_rows, teardown_leaks),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
