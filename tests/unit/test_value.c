/*
 * test_value.c: the common module: values, infos, info lists, data arrays,
 * the small structs, argv helpers and the printable names.
 *
 * The core test walks every data type the element layer supports: it builds
 * a sample element that owns memory (strings, nested arrays), loads it into a
 * value, copies the value, unloads it, wraps three samples in a data array,
 * and checks each copy is deep (equal, yet sharing no owned memory) before
 * destructing everything. Run under AddressSanitizer (PMIXLAB_SANITIZE) the
 * same test proves nothing leaks and nothing is freed twice.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pmix.h>

#include "common/px_common.h"
#include "common/px_tables.h"

/* ---- Sample elements ------------------------------------------------------ */

static char *xstrdup(const char *s)
{
    char *d = strdup(s);
    assert_non_null(d);
    return d;
}

static char **xargv(const char *a, const char *b)
{
    char **v = NULL;
    assert_int_equal(PMIx_Argv_append_nosize(&v, a), PMIX_SUCCESS);
    if (b != NULL) {
        assert_int_equal(PMIx_Argv_append_nosize(&v, b), PMIX_SUCCESS);
    }
    return v;
}

static void fill_bo(pmix_byte_object_t *bo, const char *bytes, size_t n)
{
    bo->bytes = malloc(n);
    assert_non_null(bo->bytes);
    memcpy(bo->bytes, bytes, n);
    bo->size = n;
}

static void fill_coord(pmix_coord_t *c, uint32_t base)
{
    PMIx_Coord_construct(c);
    c->fabric = xstrdup("fabric0");
    c->plane = xstrdup("plane-A");
    c->view = PMIX_COORD_LOGICAL_VIEW;
    c->dims = 3;
    c->coord = malloc(3 * sizeof(uint32_t));
    assert_non_null(c->coord);
    for (uint32_t i = 0; i < 3; i++) {
        c->coord[i] = base + i;
    }
}

/* Fills the element e (px_type_size(t) bytes) with a sample of type t that
 * owns memory wherever the type can. Returns true if samples of different
 * seeds differ. */
static bool make_sample(void *e, pmix_data_type_t t, int seed)
{
    bool seeded = false;
    px_elems_construct(e, 1, t);
    switch (t) {
    case PMIX_BOOL: *(bool *)e = true; break;
    case PMIX_STRING:
        *(char **)e = xstrdup(seed ? "world" : "hello");
        seeded = true;
        break;
    case PMIX_POINTER: *(void **)e = (void *)&make_sample; break;
    case PMIX_PROC_NSPACE: PMIx_Load_nspace(e, "nspace-1"); break;
    case PMIX_PROC:
        PMIx_Load_procid(e, "job-7", (pmix_rank_t)(3 + seed));
        seeded = true;
        break;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX: fill_bo(e, "abc\0def", 7); break;
    case PMIX_VALUE:
        assert_int_equal(PMIx_Value_load(e, "inner", PMIX_STRING), PMIX_SUCCESS);
        break;
    case PMIX_INFO: {
        uint32_t u = 42 + (uint32_t)seed;
        assert_int_equal(PMIx_Info_load(e, "pmix.test.k", &u, PMIX_UINT32), PMIX_SUCCESS);
        PMIx_Info_required(e);
        seeded = true;
        break;
    }
    case PMIX_PDATA: {
        pmix_pdata_t *p = e;
        PMIx_Load_procid(&p->proc, "job-7", 1);
        PMIx_Load_key(p->key, "published");
        assert_int_equal(PMIx_Value_load(&p->value, "data", PMIX_STRING), PMIX_SUCCESS);
        break;
    }
    case PMIX_APP: {
        pmix_app_t *a = e;
        a->cmd = xstrdup("/bin/true");
        a->argv = xargv("true", "-x");
        a->env = xargv("A=1", NULL);
        a->cwd = xstrdup("/tmp");
        a->maxprocs = 4;
        PMIx_App_info_create(a, 2);
        assert_non_null(a->info);
        assert_int_equal(PMIx_Info_load(&a->info[0], "pmix.a", "x", PMIX_STRING), PMIX_SUCCESS);
        assert_int_equal(PMIx_Info_load(&a->info[1], "pmix.b", NULL, PMIX_BOOL), PMIX_SUCCESS);
        break;
    }
    case PMIX_QUERY: {
        pmix_query_t *q = e;
        q->keys = xargv("pmix.qry.a", "pmix.qry.b");
        PMIx_Query_qualifiers_create(q, 1);
        assert_int_equal(PMIx_Info_load(&q->qualifiers[0], "pmix.nspace", "job", PMIX_STRING),
                         PMIX_SUCCESS);
        break;
    }
    case PMIX_PROC_INFO: {
        pmix_proc_info_t *p = e;
        PMIx_Load_procid(&p->proc, "job-7", 2);
        p->hostname = xstrdup("node01");
        p->executable_name = xstrdup("a.out");
        p->pid = 1234;
        p->exit_code = 1;
        p->state = PMIX_PROC_STATE_RUNNING;
        break;
    }
    case PMIX_DATA_ARRAY: {
        pmix_data_array_t *d = e;
        PMIx_Data_array_construct(d, 3, PMIX_STRING);
        assert_non_null(d->array);
        char **s = d->array;
        s[0] = xstrdup("x");
        s[1] = xstrdup("y");
        s[2] = NULL;
        break;
    }
    case PMIX_ENVAR: PMIx_Envar_load(e, "PATH", "/bin", ':'); break;
    case PMIX_COORD:
        fill_coord(e, (uint32_t)seed);
        seeded = true;
        break;
    case PMIX_REGATTR:
        PMIx_Regattr_load(e, "PMIX_TIMEOUT", "pmix.timeout", PMIX_INT, "a timeout");
        break;
    case PMIX_TOPO: {
        pmix_topology_t *tp = e;
        tp->source = xstrdup("hwloc 2.9");
        tp->topology = (void *)0x1234; /* not owned: never dereferenced */
        break;
    }
    case PMIX_PROC_CPUSET: {
        pmix_cpuset_t *c = e;
        c->source = xstrdup("hwloc 2.9");
        c->bitmap = (void *)0x5678;
        break;
    }
    case PMIX_GEOMETRY: {
        pmix_geometry_t *g = e;
        g->fabric = 1;
        g->uuid = xstrdup("uuid-1");
        g->osname = xstrdup("mlx5_0");
        g->coordinates = PMIx_Coord_create(2);
        assert_non_null(g->coordinates);
        g->ncoords = 2;
        fill_coord(&g->coordinates[0], 10);
        fill_coord(&g->coordinates[1], 20);
        break;
    }
    case PMIX_DEVICE_DIST: {
        pmix_device_distance_t *d = e;
        d->uuid = xstrdup("gpu-uuid");
        d->osname = xstrdup("card0");
        d->type = PMIX_DEVTYPE_GPU;
        d->mindist = 1;
        d->maxdist = 5;
        break;
    }
    case PMIX_ENDPOINT: {
        pmix_endpoint_t *p = e;
        p->uuid = xstrdup("nic-uuid");
        p->osname = xstrdup("eth0");
        fill_bo(&p->endpt, "\x01\x02\x03", 3);
        break;
    }
    case PMIX_DATA_BUFFER: {
        pmix_data_buffer_t *b = e;
        b->base_ptr = malloc(16);
        assert_non_null(b->base_ptr);
        memcpy(b->base_ptr, "0123456789", 10);
        b->bytes_allocated = 16;
        b->bytes_used = 10;
        b->pack_ptr = b->base_ptr + 10;
        b->unpack_ptr = b->base_ptr + 2;
        break;
    }
    case PMIX_PROC_STATS: {
        pmix_proc_stats_t *s = e;
        s->node = xstrdup("node01");
        PMIx_Load_procid(&s->proc, "job-7", 0);
        s->pid = 99;
        s->cmd = xstrdup("a.out");
        s->state = 'R';
        s->percent_cpu = 12.5f;
        s->num_threads = 4;
        break;
    }
    case PMIX_DISK_STATS: {
        pmix_disk_stats_t *s = e;
        s->disk = xstrdup("sda");
        s->num_reads_completed = 7;
        s->weighted_milliseconds_io = 9;
        break;
    }
    case PMIX_NET_STATS: {
        pmix_net_stats_t *s = e;
        s->net_interface = xstrdup("eth0");
        s->num_bytes_sent = 1000;
        break;
    }
    case PMIX_NODE_STATS: {
        pmix_node_stats_t *s = e;
        s->node = xstrdup("node01");
        s->la = 0.5f;
        s->diskstats = px_elems_alloc(1, PMIX_DISK_STATS);
        assert_non_null(s->diskstats);
        s->ndiskstats = 1;
        make_sample(&s->diskstats[0], PMIX_DISK_STATS, 0);
        s->netstats = px_elems_alloc(2, PMIX_NET_STATS);
        assert_non_null(s->netstats);
        s->nnetstats = 2;
        make_sample(&s->netstats[0], PMIX_NET_STATS, 0);
        make_sample(&s->netstats[1], PMIX_NET_STATS, 1);
        break;
    }
    default: {
        /* A scalar: a recognisable byte pattern (finite for floats). */
        unsigned char *b = e;
        for (size_t i = 0; i < px_type_size(t); i++) {
            b[i] = (unsigned char)(0x21 + i + (size_t)seed);
        }
        seeded = true;
        break;
    }
    }
    return seeded;
}

/* True if any owned pointer of the two elements is shared (a shallow copy). */
static bool shares_memory(const void *a, const void *b, pmix_data_type_t t)
{
    switch (t) {
    case PMIX_STRING: return *(char *const *)a != NULL && *(char *const *)a == *(char *const *)b;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
        return ((const pmix_byte_object_t *)a)->bytes == ((const pmix_byte_object_t *)b)->bytes;
    case PMIX_APP:
        return ((const pmix_app_t *)a)->info == ((const pmix_app_t *)b)->info ||
               ((const pmix_app_t *)a)->argv == ((const pmix_app_t *)b)->argv;
    case PMIX_DATA_ARRAY:
        return ((const pmix_data_array_t *)a)->array == ((const pmix_data_array_t *)b)->array;
    case PMIX_COORD: return ((const pmix_coord_t *)a)->coord == ((const pmix_coord_t *)b)->coord;
    case PMIX_GEOMETRY:
        return ((const pmix_geometry_t *)a)->coordinates ==
               ((const pmix_geometry_t *)b)->coordinates;
    case PMIX_NODE_STATS:
        return ((const pmix_node_stats_t *)a)->diskstats ==
               ((const pmix_node_stats_t *)b)->diskstats;
    case PMIX_DATA_BUFFER:
        return ((const pmix_data_buffer_t *)a)->base_ptr ==
               ((const pmix_data_buffer_t *)b)->base_ptr;
    default: return false;
    }
}

/* What PMIx_Value_load expects as `data` for a sample element. */
static const void *load_arg(const void *e, pmix_data_type_t t)
{
    if (t == PMIX_STRING) {
        return *(char *const *)e;
    }
    if (t == PMIX_POINTER) {
        return *(void *const *)e;
    }
    return e;
}

/* The element a value holds (inline in the union or boxed). */
static const void *held(const pmix_value_t *v)
{
    switch (v->type) {
    case PMIX_STRING:
    case PMIX_POINTER:
    case PMIX_ENVAR:
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX: return &v->data;
    default:
        if (px_type_size(v->type) > 16 || v->type == PMIX_PROC_NSPACE || v->type == PMIX_TOPO ||
            v->type == PMIX_PROC_CPUSET) {
            return v->data.ptr;
        }
        return &v->data;
    }
}

static void round_trip(pmix_data_type_t t)
{
    size_t sz = px_type_size(t);
    unsigned char sample[1024], other[1024];
    assert_true(sz <= sizeof(sample));
    make_sample(sample, t, 0);

    /* load */
    pmix_value_t v1, v2;
    PMIx_Value_construct(&v1);
    assert_int_equal(PMIx_Value_load(&v1, load_arg(sample, t), t), PMIX_SUCCESS);
    assert_int_equal(v1.type, t);
    assert_true(px_elems_equal(held(&v1), sample, 1, t));
    assert_false(shares_memory(held(&v1), sample, t));

    /* xfer and compare */
    assert_int_equal(PMIx_Value_xfer(&v2, &v1), PMIX_SUCCESS);
    assert_true(px_value_equal(&v1, &v2));
    assert_int_equal(PMIx_Value_compare(&v1, &v2), PMIX_EQUAL);
    assert_false(shares_memory(held(&v1), held(&v2), t));

    /* unload */
    void *out = NULL;
    size_t osz = 0;
    assert_int_equal(PMIx_Value_unload(&v1, &out, &osz), PMIX_SUCCESS);
    switch (t) {
    case PMIX_STRING:
        assert_string_equal(out, *(char **)sample);
        assert_int_equal(osz, strlen(out));
        free(out);
        break;
    case PMIX_POINTER: assert_ptr_equal(out, *(void **)sample); break;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
        assert_int_equal(osz, 7);
        assert_memory_equal(out, "abc\0def", 7);
        free(out);
        break;
    default:
        assert_int_equal(osz, sz);
        assert_true(px_elems_equal(out, sample, 1, t));
        assert_false(shares_memory(out, sample, t));
        px_elems_free(out, 1, t);
        break;
    }

    /* a data array of three samples, carried in a value */
    pmix_data_array_t *da = PMIx_Data_array_create(3, t);
    assert_non_null(da);
    for (size_t i = 0; i < 3; i++) {
        px_elems_destruct((char *)da->array + i * sz, 1, t);
        make_sample((char *)da->array + i * sz, t, (int)i);
    }
    pmix_value_t va, vb;
    assert_int_equal(PMIx_Value_load(&va, da, PMIX_DATA_ARRAY), PMIX_SUCCESS);
    assert_int_equal(PMIx_Value_xfer(&vb, &va), PMIX_SUCCESS);
    assert_true(px_value_equal(&va, &vb));
    assert_true(px_elems_equal(va.data.darray, da, 1, PMIX_DATA_ARRAY));
    assert_ptr_not_equal(va.data.darray->array, da->array);
    assert_ptr_not_equal(vb.data.darray->array, va.data.darray->array);
    for (size_t i = 0; i < 3; i++) {
        assert_false(
            shares_memory((char *)da->array + i * sz, (char *)vb.data.darray->array + i * sz, t));
    }
    if (make_sample(other, t, 1)) {
        /* Samples of different seeds differ: so must their comparison. */
        assert_false(px_elems_equal(sample, other, 1, t));
    }
    px_elems_destruct(other, 1, t);

    PMIx_Data_array_free(da);
    PMIx_Value_destruct(&va);
    PMIx_Value_destruct(&vb);
    PMIx_Value_destruct(&v1);
    PMIx_Value_destruct(&v2);
    assert_int_equal(v1.type, PMIX_UNDEF);
    px_elems_destruct(sample, 1, t);
}

static void test_every_type_round_trip(void **state)
{
    (void)state;
    size_t covered = 0;
    for (pmix_data_type_t t = 1; t < 100; t++) {
        if (px_type_size(t) == 0) {
            continue;
        }
        round_trip(t);
        covered++;
    }
    /* Every data type of the union and of data arrays: 1..69 minus the two
     * with no array form (PMIX_BUFFER, PMIX_KVAL) and the unassigned ids. */
    assert_true(covered >= 60);
    assert_int_equal(px_type_size(PMIX_BUFFER), 0);
    assert_int_equal(px_type_size(PMIX_KVAL), 0);
}

/* ---- Values: details ------------------------------------------------------ */

static void test_value_load_details(void **state)
{
    (void)state;
    pmix_value_t v;
    assert_int_equal(PMIx_Value_load(&v, NULL, PMIX_BOOL), PMIX_SUCCESS);
    assert_true(v.data.flag);
    assert_int_equal(PMIx_Value_load(&v, NULL, PMIX_STRING), PMIX_SUCCESS);
    assert_null(v.data.string);
    PMIx_Value_destruct(&v);
    assert_int_equal(PMIx_Value_load(&v, "x", PMIX_BUFFER), PMIX_ERR_UNKNOWN_DATA_TYPE);
    assert_int_equal(v.type, PMIX_UNDEF);
    assert_int_equal(PMIx_Value_load(NULL, "x", PMIX_STRING), PMIX_ERR_BAD_PARAM);

    /* Scalars unload into the caller's storage. */
    uint32_t u = 77, got = 0;
    void *p = &got;
    size_t sz = 0;
    assert_int_equal(PMIx_Value_load(&v, &u, PMIX_UINT32), PMIX_SUCCESS);
    assert_int_equal(PMIx_Value_unload(&v, &p, &sz), PMIX_SUCCESS);
    assert_ptr_equal(p, &got);
    assert_int_equal(got, 77);
    assert_int_equal(sz, sizeof(uint32_t));

    pmix_value_t *c = NULL;
    assert_int_equal(px_value_copy(&c, &v), PMIX_SUCCESS);
    assert_int_equal(c->data.uint32, 77);
    PMIX_VALUE_RELEASE(c);
    assert_null(c);

    /* An undefined value unloads nothing. */
    PMIx_Value_construct(&v);
    p = NULL;
    assert_int_equal(PMIx_Value_unload(&v, &p, &sz), PMIX_ERR_UNKNOWN_DATA_TYPE);

    /* Macros. */
    pmix_value_t *arr;
    PMIX_VALUE_CREATE(arr, 3);
    assert_non_null(arr);
    PMIX_VALUE_LOAD(&arr[0], "s", PMIX_STRING);
    PMIX_VALUE_LOAD(&arr[2], &u, PMIX_UINT32);
    pmix_status_t rc;
    PMIX_VALUE_XFER(rc, &arr[1], &arr[0]);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_string_equal(arr[1].data.string, "s");
    PMIX_VALUE_FREE(arr, 3);
    assert_null(arr);
}

static void test_value_compare(void **state)
{
    (void)state;
    pmix_value_t a, b;
    int32_t x = -3, y = 5;
    PMIx_Value_load(&a, &x, PMIX_INT32);
    PMIx_Value_load(&b, &y, PMIX_INT32);
    assert_int_equal(PMIx_Value_compare(&a, &b), PMIX_VALUE2_GREATER);
    assert_int_equal(PMIx_Value_compare(&b, &a), PMIX_VALUE1_GREATER);
    PMIx_Value_destruct(&b);
    PMIx_Value_load(&b, "s", PMIX_STRING);
    assert_int_equal(PMIx_Value_compare(&a, &b), PMIX_VALUE_TYPE_DIFFERENT);
    PMIx_Value_destruct(&a);
    PMIx_Value_load(&a, "t", PMIX_STRING);
    assert_int_equal(PMIx_Value_compare(&a, &b), PMIX_VALUE1_GREATER);
    PMIx_Value_destruct(&a);
    PMIx_Value_destruct(&b);

    pmix_proc_t p1, p2;
    PMIx_Load_procid(&p1, "job", 1);
    PMIx_Load_procid(&p2, "job", 2);
    PMIx_Value_load(&a, &p1, PMIX_PROC);
    PMIx_Value_load(&b, &p2, PMIX_PROC);
    assert_int_equal(PMIx_Value_compare(&a, &b), PMIX_VALUE2_GREATER);
    PMIx_Value_destruct(&a);
    PMIx_Value_destruct(&b);
}

static void test_get_number(void **state)
{
    (void)state;
    pmix_value_t v;
    uint8_t u8 = 200;
    int8_t i8;
    uint16_t u16;
    int32_t i32 = -5;
    uint32_t u32;
    int64_t i64;
    double d = 1.5, dd;
    float f;
    uint64_t big = UINT64_MAX, u64;
    pmix_status_t rc;

    PMIx_Value_load(&v, &u8, PMIX_UINT8);
    assert_int_equal(PMIx_Value_get_number(&v, &i8, PMIX_INT8), PMIX_ERR_VALUE_OUT_OF_BOUNDS);
    PMIX_VALUE_GET_NUMBER(rc, &v, u16, uint16_t);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_int_equal(u16, 200);

    PMIx_Value_load(&v, &i32, PMIX_INT32);
    assert_int_equal(PMIx_Value_get_number(&v, &u32, PMIX_UINT32), PMIX_ERR_VALUE_OUT_OF_BOUNDS);
    assert_int_equal(PMIx_Value_get_number(&v, &i64, PMIX_INT64), PMIX_SUCCESS);
    assert_int_equal(i64, -5);
    assert_int_equal(px_value_get_number(&v, &u64), PMIX_ERR_VALUE_OUT_OF_BOUNDS);

    PMIx_Value_load(&v, &big, PMIX_UINT64);
    assert_int_equal(PMIx_Value_get_number(&v, &i64, PMIX_INT64), PMIX_ERR_VALUE_OUT_OF_BOUNDS);
    assert_int_equal(px_value_get_number(&v, &u64), PMIX_SUCCESS);
    assert_true(u64 == UINT64_MAX);

    PMIx_Value_load(&v, &d, PMIX_DOUBLE);
    assert_int_equal(PMIx_Value_get_number(&v, &i32, PMIX_INT32), PMIX_ERR_VALUE_OUT_OF_BOUNDS);
    assert_int_equal(PMIx_Value_get_number(&v, &f, PMIX_FLOAT), PMIX_SUCCESS);
    assert_true(f == 1.5f);
    assert_int_equal(PMIx_Value_get_number(&v, &dd, PMIX_DOUBLE), PMIX_SUCCESS);
    assert_true(dd == 1.5);

    PMIx_Value_load(&v, "12", PMIX_STRING);
    assert_int_equal(PMIx_Value_get_number(&v, &u32, PMIX_UINT32), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_value_get_number(&v, &u64), PMIX_ERR_BAD_PARAM);
    PMIx_Value_destruct(&v);
}

/* ---- Infos ------------------------------------------------------------------ */

static void test_info_flags_and_array_end(void **state)
{
    (void)state;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 3);
    assert_non_null(info);
    bool t = true, f = false;
    int timeout = 7;
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &timeout, PMIX_INT);
    PMIX_INFO_LOAD(&info[2], PMIX_OPTIONAL, &f, PMIX_BOOL);
    PMIX_INFO_REQUIRED(&info[1]);
    /* What a client built against other headers does. */
    info[2].flags |= PMIX_INFO_ARRAY_END;

    assert_true(PMIX_INFO_IS_REQUIRED(&info[1]));
    assert_true(PMIX_INFO_IS_OPTIONAL(&info[0]));
    assert_true(PMIX_INFO_IS_END(&info[2]));
    assert_true(PMIX_INFO_TRUE(&info[0]));
    assert_false(PMIX_INFO_TRUE(&info[2]));
    PMIX_INFO_PROCESSED(&info[1]);
    assert_true(PMIX_INFO_WAS_PROCESSED(&info[1]));

    /* xfer drops the end marker and keeps the other directives. */
    pmix_info_t copy;
    PMIX_INFO_XFER(&copy, &info[2]);
    assert_false(PMIX_INFO_IS_END(&copy));
    assert_true(px_elems_equal(&copy, &info[2], 1, PMIX_INFO));
    PMIX_INFO_DESTRUCT(&copy);
    PMIX_INFO_XFER(&copy, &info[1]);
    assert_true(PMIX_INFO_IS_REQUIRED(&copy));
    PMIX_INFO_DESTRUCT(&copy);

    pmix_info_t *arr = NULL;
    assert_int_equal(px_info_array_copy(&arr, info, 3), PMIX_SUCCESS);
    assert_false(PMIX_INFO_IS_END(&arr[2]));
    assert_true(px_elems_equal(arr, info, 3, PMIX_INFO));
    PMIX_INFO_FREE(arr, 3);

    /* Engine helpers. */
    assert_ptr_equal(px_info_find(info, 3, PMIX_TIMEOUT), &info[1]);
    assert_null(px_info_find(info, 3, PMIX_JOB_SIZE));
    assert_null(px_info_find(NULL, 0, PMIX_JOB_SIZE));
    assert_true(px_info_flag(info, 3, PMIX_COLLECT_DATA));
    assert_false(px_info_flag(info, 3, PMIX_OPTIONAL));
    assert_false(px_info_flag(info, 3, PMIX_JOB_SIZE));
    assert_true(px_info_timeout(info, 3) == 7.0);
    assert_true(px_info_timeout(info, 1) == 0.0);
    assert_null(px_info_string(info, 3, PMIX_TIMEOUT));

    pmix_info_t flag;
    PMIX_INFO_LOAD(&flag, PMIX_COLLECT_DATA, NULL, PMIX_UNDEF);
    assert_true(px_info_flag(&flag, 1, PMIX_COLLECT_DATA));
    PMIX_INFO_DESTRUCT(&flag);
    PMIX_INFO_LOAD(&flag, PMIX_NSPACE, "job-9", PMIX_STRING);
    assert_string_equal(px_info_string(&flag, 1, PMIX_NSPACE), "job-9");
    assert_true(PMIX_CHECK_KEY(&flag, PMIX_NSPACE));
    PMIX_INFO_DESTRUCT(&flag);

    PMIX_INFO_FREE(info, 3);
    assert_null(info);
}

static void test_info_list(void **state)
{
    (void)state;
    void *list;
    pmix_status_t rc;
    uint32_t n = 16;
    PMIX_INFO_LIST_START(list);
    assert_non_null(list);
    PMIX_INFO_LIST_ADD(rc, list, PMIX_JOB_SIZE, &n, PMIX_UINT32);
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_INFO_LIST_ADD(rc, list, PMIX_NSPACE, "job-1", PMIX_STRING);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_int_equal(PMIx_Info_list_prepend(list, PMIX_COLLECT_DATA, NULL, PMIX_BOOL),
                     PMIX_SUCCESS);
    pmix_info_t extra;
    PMIX_INFO_LOAD(&extra, PMIX_TIMEOUT, &n, PMIX_UINT32);
    extra.flags = PMIX_INFO_REQD | PMIX_INFO_ARRAY_END;
    PMIX_INFO_LIST_XFER(rc, list, &extra);
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_INFO_DESTRUCT(&extra);
    assert_int_equal(PMIx_Info_list_add(list, PMIX_NSPACE, "x", PMIX_BUFFER),
                     PMIX_ERR_UNKNOWN_DATA_TYPE);

    /* Iteration sees the four entries in order. */
    const char *want[] = {PMIX_COLLECT_DATA, PMIX_JOB_SIZE, PMIX_NSPACE, PMIX_TIMEOUT};
    void *cur = NULL, *next = NULL;
    size_t seen = 0;
    do {
        pmix_info_t *i = PMIx_Info_list_get_info(list, cur, &next);
        assert_non_null(i);
        assert_string_equal(i->key, want[seen]);
        seen++;
        cur = next;
    } while (cur != NULL);
    assert_int_equal(seen, 4);

    pmix_data_array_t darray;
    PMIX_INFO_LIST_CONVERT(rc, list, &darray);
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_INFO_LIST_RELEASE(list);
    assert_int_equal(darray.type, PMIX_INFO);
    assert_int_equal(darray.size, 4);
    pmix_info_t *info = darray.array;
    assert_true(PMIx_Info_true(&info[0]));
    assert_int_equal(info[1].value.data.uint32, 16);
    assert_string_equal(info[2].value.data.string, "job-1");
    assert_true(PMIX_INFO_IS_REQUIRED(&info[3]));
    assert_false(PMIX_INFO_IS_END(&info[3]));
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    assert_null(darray.array);

    PMIX_INFO_LIST_START(list);
    PMIX_INFO_LIST_CONVERT(rc, list, &darray);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_int_equal(darray.size, 0);
    assert_null(PMIx_Info_list_get_info(list, NULL, &next));
    PMIX_INFO_LIST_RELEASE(list);
}

/* ---- Nested arrays ---------------------------------------------------------- */

static void test_nested_arrays(void **state)
{
    (void)state;
    /* info[0] = { "outer": DATA_ARRAY of VALUE [ DATA_ARRAY of INFO [ {k: "deep"},
     *             {p: PROC} ], STRING "leaf" ] } */
    pmix_data_array_t *inner_infos = PMIx_Data_array_create(2, PMIX_INFO);
    pmix_info_t *ii = inner_infos->array;
    PMIx_Info_load(&ii[0], "k", "deep", PMIX_STRING);
    pmix_proc_t proc;
    PMIx_Load_procid(&proc, "job-3", PMIX_RANK_WILDCARD);
    PMIx_Info_load(&ii[1], "p", &proc, PMIX_PROC);

    pmix_data_array_t *values = PMIx_Data_array_create(2, PMIX_VALUE);
    pmix_value_t *vv = values->array;
    PMIx_Value_load(&vv[0], inner_infos, PMIX_DATA_ARRAY);
    PMIx_Value_load(&vv[1], "leaf", PMIX_STRING);

    pmix_info_t outer;
    PMIx_Info_load(&outer, "outer", values, PMIX_DATA_ARRAY);
    PMIx_Data_array_free(inner_infos);
    PMIx_Data_array_free(values);

    pmix_info_t copy;
    assert_int_equal(PMIx_Info_xfer(&copy, &outer), PMIX_SUCCESS);
    assert_true(px_elems_equal(&copy, &outer, 1, PMIX_INFO));

    /* Change the deepest string of the copy: the original must not change. */
    pmix_value_t *cv = copy.value.data.darray->array;
    pmix_info_t *ci = cv[0].data.darray->array;
    ci[0].value.data.string[0] = 'D';
    assert_false(px_elems_equal(&copy, &outer, 1, PMIX_INFO));
    pmix_value_t *ov = outer.value.data.darray->array;
    pmix_info_t *oi = ov[0].data.darray->array;
    assert_string_equal(oi[0].value.data.string, "deep");
    assert_true(PMIx_Check_procid(oi[1].value.data.proc, &proc));

    char *s = PMIx_Info_string(&outer);
    assert_non_null(s);
    assert_non_null(strstr(s, "deep"));
    assert_non_null(strstr(s, "leaf"));
    free(s);

    PMIx_Info_destruct(&copy);
    PMIx_Info_destruct(&outer);
}

/* ---- Structs, keys and procs ------------------------------------------------ */

static void test_procs_and_keys(void **state)
{
    (void)state;
    pmix_proc_t a, b, w;
    PMIX_LOAD_PROCID(&a, "job", 1);
    PMIX_PROC_LOAD(&b, "job", 2);
    PMIX_LOAD_PROCID(&w, "job", PMIX_RANK_WILDCARD);
    assert_false(PMIX_CHECK_PROCID(&a, &b));
    assert_true(PMIX_CHECK_PROCID(&a, &w));
    assert_false(px_proc_eq(&a, &w));
    assert_true(PMIX_CHECK_RANK(3, PMIX_RANK_WILDCARD));
    assert_true(PMIX_CHECK_NSPACE("job", "job"));
    assert_false(PMIX_CHECK_NSPACE("job", "job2"));
    assert_true(PMIX_CHECK_NSPACE("", "job2"));
    assert_true(PMIX_NSPACE_INVALID(""));
    assert_true(PMIX_NSPACE_INVALID(NULL));
    assert_true(PMIX_RANK_IS_VALID(0));
    assert_false(PMIX_RANK_IS_VALID(PMIX_RANK_WILDCARD));
    pmix_proc_t inval;
    PMIX_LOAD_PROCID(&inval, "job", PMIX_RANK_INVALID);
    assert_true(PMIX_PROCID_INVALID(&inval));
    assert_false(PMIX_PROCID_INVALID(&a));
    PMIX_PROCID_XFER(&b, &a);
    assert_true(px_proc_eq(&a, &b));

    /* Over-long names are truncated and terminated. */
    char longname[600];
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    pmix_nspace_t ns;
    PMIX_LOAD_NSPACE(ns, longname);
    assert_int_equal(strlen(ns), PMIX_MAX_NSLEN);
    pmix_key_t key;
    PMIX_LOAD_KEY(key, longname);
    assert_int_equal(strlen(key), PMIX_MAX_KEYLEN);
    assert_true(PMIx_Check_reserved_key(PMIX_JOB_SIZE));
    assert_false(PMIx_Check_reserved_key("btl.tcp.4.1"));

    pmix_nspace_t mc, cl, nsp;
    PMIx_Multicluster_nspace_construct(mc, "clusterA", "job-1");
    assert_string_equal(mc, "clusterA:job-1");
    PMIx_Multicluster_nspace_parse(mc, cl, nsp);
    assert_string_equal(cl, "clusterA");
    assert_string_equal(nsp, "job-1");

    pmix_proc_t *procs;
    PMIX_PROC_CREATE(procs, 4);
    assert_non_null(procs);
    assert_true(procs[3].rank == PMIX_RANK_UNDEF);
    PMIX_PROC_FREE(procs, 4);
    assert_null(procs);
}

static void test_struct_macros(void **state)
{
    (void)state;
    pmix_byte_object_t bo;
    PMIX_BYTE_OBJECT_CONSTRUCT(&bo);
    char *bytes = malloc(4);
    size_t nb = 4;
    memcpy(bytes, "wxyz", 4);
    PMIX_BYTE_OBJECT_LOAD(&bo, bytes, nb);
    assert_null(bytes);
    assert_int_equal(nb, 0);
    assert_int_equal(bo.size, 4);
    PMIX_BYTE_OBJECT_DESTRUCT(&bo);
    assert_null(bo.bytes);

    pmix_envar_t *ev;
    PMIX_ENVAR_CREATE(ev, 2);
    PMIX_ENVAR_LOAD(&ev[1], "LD_LIBRARY_PATH", "/lib", ':');
    assert_string_equal(ev[1].envar, "LD_LIBRARY_PATH");
    PMIX_ENVAR_FREE(ev, 2);

    pmix_app_t *app;
    PMIX_APP_CREATE(app, 1);
    app->cmd = strdup("x");
    PMIX_APP_INFO_CREATE(app, 2);
    assert_int_equal(app->ninfo, 2);
    PMIX_APP_FREE(app, 1);
    assert_null(app);

    pmix_query_t *q;
    PMIX_QUERY_CREATE(q, 2);
    PMIX_QUERY_QUALIFIERS_CREATE(&q[0], 1);
    PMIX_ARGV_SPLIT(q[1].keys, "a,b", ',');
    PMIX_QUERY_FREE(q, 2);

    pmix_pdata_t *pd;
    PMIX_PDATA_CREATE(pd, 2);
    pmix_proc_t p;
    PMIX_LOAD_PROCID(&p, "job", 0);
    PMIX_PDATA_LOAD(&pd[0], &p, "key", "val", PMIX_STRING);
    PMIX_PDATA_XFER(&pd[1], &pd[0]);
    assert_string_equal(pd[1].value.data.string, "val");
    assert_true(px_elems_equal(&pd[0], &pd[1], 1, PMIX_PDATA));
    PMIX_PDATA_FREE(pd, 2);

    pmix_regattr_t ra, rb;
    PMIX_REGATTR_LOAD(&ra, "PMIX_TIMEOUT", PMIX_TIMEOUT, PMIX_INT, 0, "seconds");
    PMIX_REGATTR_XFER(&rb, &ra);
    assert_string_equal(rb.description[0], "seconds");
    PMIX_REGATTR_DESTRUCT(&ra);
    PMIX_REGATTR_DESTRUCT(&rb);

    pmix_coord_t *c;
    PMIX_COORD_CREATE(c, 2);
    assert_true(c[1].view == PMIX_COORD_VIEW_UNDEF);
    PMIX_COORD_FREE(c, 2);

    pmix_data_array_t *da;
    PMIX_DATA_ARRAY_CREATE(da, 2, PMIX_PROC_INFO);
    assert_non_null(da);
    pmix_proc_info_t *pi = da->array;
    pi[1].hostname = strdup("h");
    PMIX_DATA_ARRAY_FREE(da);
    assert_null(da);

    pmix_data_array_t empty;
    PMIX_DATA_ARRAY_INIT(&empty, PMIX_STRING);
    assert_null(empty.array);
    PMIX_DATA_ARRAY_DESTRUCT(&empty);

    pmix_fabric_t fab;
    PMIX_FABRIC_CONSTRUCT(&fab);
    assert_true(fab.index == SIZE_MAX);

    pmix_topology_t topo = PMIX_TOPOLOGY_STATIC_INIT;
    topo.source = strdup("hwloc");
    PMIX_TOPOLOGY_DESTRUCT(&topo);
    assert_null(topo.source);
}

static void test_argv(void **state)
{
    (void)state;
    char **v = PMIx_Argv_split("a,,b", ',');
    assert_int_equal(PMIx_Argv_count(v), 2);
    char *j = PMIx_Argv_join(v, ':');
    assert_string_equal(j, "a:b");
    free(j);
    PMIx_Argv_free(v);

    v = PMIx_Argv_split_with_empty("a,,b", ',');
    assert_int_equal(PMIx_Argv_count(v), 3);
    assert_string_equal(v[1], "");
    pmix_status_t rc;
    PMIX_ARGV_APPEND_UNIQUE(rc, &v, "b");
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_int_equal(PMIx_Argv_count(v), 3);
    PMIX_ARGV_PREPEND(rc, v, "first");
    assert_string_equal(v[0], "first");
    char **c;
    PMIX_ARGV_COPY(c, v);
    assert_int_equal(PMIx_Argv_count(c), 4);
    PMIX_ARGV_FREE(c);
    PMIX_ARGV_FREE(v);
    assert_null(v);

    char **env = NULL;
    assert_int_equal(PMIx_Setenv("A", "1", true, &env), PMIX_SUCCESS);
    assert_int_equal(PMIx_Setenv("A", "2", false, &env), PMIX_ERR_EXISTS);
    assert_string_equal(env[0], "A=1");
    PMIX_SETENV(rc, "A", "3", &env);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_string_equal(env[0], "A=3");
    assert_int_equal(PMIx_Argv_count(env), 1);
    PMIx_Argv_free(env);
}

/* ---- Printable names -------------------------------------------------------- */

static void test_error_strings(void **state)
{
    (void)state;
    const pmix_status_t main_codes[] = {
        PMIX_SUCCESS,
        PMIX_ERROR,
        PMIX_ERR_NOT_FOUND,
        PMIX_ERR_BAD_PARAM,
        PMIX_ERR_TIMEOUT,
        PMIX_ERR_NOMEM,
        PMIX_ERR_NOT_SUPPORTED,
        PMIX_ERR_INIT,
        PMIX_ERR_UNREACH,
        PMIX_ERR_COMM_FAILURE,
        PMIX_ERR_LOST_CONNECTION,
        PMIX_ERR_PARTIAL_SUCCESS,
        PMIX_ERR_TYPE_MISMATCH,
        PMIX_ERR_WOULD_BLOCK,
        PMIX_ERR_EXISTS,
        PMIX_ERR_NO_PERMISSIONS,
        PMIX_ERR_UNKNOWN_DATA_TYPE,
        PMIX_ERR_PROC_ABORTED,
        PMIX_OPERATION_SUCCEEDED,
        PMIX_OPERATION_IN_PROGRESS,
        PMIX_MODEL_DECLARED,
        PMIX_EVENT_JOB_END,
        PMIX_ERR_PROC_TERM_WO_SYNC,
        PMIX_NETWORK_COORDS_UPDATED,
        PMIX_EVENT_NODE_DOWN,
        PMIX_ERR_VALUE_OUT_OF_BOUNDS,
    };
    size_t n = sizeof(main_codes) / sizeof(main_codes[0]);
    const char *unknown = PMIx_Error_string(-9999);
    assert_non_null(unknown);
    for (size_t i = 0; i < n; i++) {
        const char *s = PMIx_Error_string(main_codes[i]);
        assert_non_null(s);
        assert_string_not_equal(s, unknown);
        for (size_t k = 0; k < i; k++) {
            assert_string_not_equal(s, PMIx_Error_string(main_codes[k]));
        }
    }
    assert_string_equal(PMIx_Error_string(PMIX_ERR_NOT_FOUND), "PMIX_ERR_NOT_FOUND");
    assert_string_equal(PMIx_Error_string(PMIX_SUCCESS), "PMIX_SUCCESS");
    /* A shared value reads as the Standard's name. */
    assert_string_equal(PMIx_Error_string(PMIX_ERR_JOB_TERMINATED), "PMIX_EVENT_JOB_END");

    /* Every status of the tables has a name of a constant with that value. */
    for (size_t i = 0; i < px_nstatus_names; i++) {
        const char *s = PMIx_Error_string(px_status_names[i].code);
        assert_non_null(s);
        assert_string_not_equal(s, unknown);
        assert_true(strncmp(s, "PMIX_", 5) == 0);
    }
    assert_true(px_nstatus_names > 150);
}

static void test_enum_strings(void **state)
{
    (void)state;
    assert_string_equal(PMIx_Proc_state_string(PMIX_PROC_STATE_RUNNING), "PMIX_PROC_STATE_RUNNING");
    assert_string_equal(PMIx_Job_state_string(PMIX_JOB_STATE_TERMINATED),
                        "PMIX_JOB_STATE_TERMINATED");
    assert_string_equal(PMIx_Scope_string(PMIX_GLOBAL), "PMIX_GLOBAL");
    assert_string_equal(PMIx_Persistence_string(PMIX_PERSIST_APP), "PMIX_PERSIST_APP");
    assert_string_equal(PMIx_Data_range_string(PMIX_RANGE_NAMESPACE), "PMIX_RANGE_NAMESPACE");
    assert_string_equal(PMIx_Data_type_string(PMIX_DATA_ARRAY), "PMIX_DATA_ARRAY");
    assert_string_equal(PMIx_Data_type_string(PMIX_STOR_ACCESS_TYPE), "PMIX_STOR_ACCESS_TYPE");
    assert_string_equal(PMIx_Alloc_directive_string(PMIX_ALLOC_EXTEND), "PMIX_ALLOC_EXTEND");
    assert_string_equal(PMIx_Link_state_string(PMIX_LINK_UP), "PMIX_LINK_UP");
    assert_string_equal(PMIx_Device_type_string(PMIX_DEVTYPE_GPU), "PMIX_DEVTYPE_GPU");
    assert_string_equal(PMIx_IOF_channel_string(PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL),
                        "PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDERR_CHANNEL");
    assert_string_equal(PMIx_IOF_channel_string(PMIX_FWD_ALL_CHANNELS), "PMIX_FWD_ALL_CHANNELS");
    assert_string_equal(PMIx_Info_directives_string(PMIX_INFO_REQD | PMIX_INFO_ARRAY_END),
                        "REQUIRED|END");
    assert_non_null(PMIx_Info_directives_string(0xffffffffu));
    assert_non_null(PMIx_Proc_state_string(222));
    /* Every data type of the element layer has a name. */
    for (pmix_data_type_t t = 1; t < 100; t++) {
        if (px_type_size(t) != 0) {
            assert_null(strstr(PMIx_Data_type_string(t), "UNKNOWN"));
        }
    }
}

static void test_attribute_names(void **state)
{
    (void)state;
    assert_string_equal(PMIx_Get_attribute_string("PMIX_JOB_SIZE"), "pmix.job.size");
    assert_string_equal(PMIx_Get_attribute_name("pmix.job.size"), "PMIX_JOB_SIZE");
    assert_string_equal(PMIx_Get_attribute_string("PMIX_LOCALITY"), "pmix.loc");
    assert_string_equal(PMIx_Get_attribute_string("PMIX_NETWORK_COORDINATE"), "pmix.net.coord");
    assert_string_equal(PMIx_Get_attribute_name("pmix.net.coord"), "PMIX_NETWORK_COORDINATE");
    /* Shared strings read as the Standard's name. */
    assert_string_equal(PMIx_Get_attribute_name("pmix.alloc.net"), "PMIX_ALLOC_FABRIC");
    assert_null(PMIx_Get_attribute_string("PMIX_NO_SUCH_THING"));
    assert_null(PMIx_Get_attribute_name("pmix.no.such"));
    for (size_t i = 0; i < px_nattr_names; i++) {
        assert_string_equal(PMIx_Get_attribute_string(px_attr_names[i].name),
                            px_attr_names[i].string);
    }
    assert_string_equal(px_key_alias(PMIX_NETWORK_COORDINATE), PMIX_FABRIC_COORDINATES);
    assert_string_equal(px_key_alias("pmix.fab.plane"), PMIX_NETWORK_PLANE);
    assert_null(px_key_alias(PMIX_NETWORK_NIC));
    assert_null(px_key_alias(NULL));
}

static void test_value_string(void **state)
{
    (void)state;
    pmix_value_t v;
    uint16_t u = 5;
    PMIx_Value_load(&v, &u, PMIX_UINT16);
    char *s = PMIx_Value_string(&v);
    assert_string_equal(s, "PMIX_UINT16: 5");
    free(s);
    PMIx_Value_destruct(&v);
    PMIx_Value_load(&v, "abc", PMIX_STRING);
    s = PMIx_Value_string(&v);
    assert_string_equal(s, "PMIX_STRING: \"abc\"");
    free(s);
    PMIx_Value_destruct(&v);
    for (pmix_data_type_t t = 1; t < 100; t++) {
        unsigned char sample[1024];
        if (px_type_size(t) == 0) {
            continue;
        }
        make_sample(sample, t, 0);
        assert_int_equal(PMIx_Value_load(&v, load_arg(sample, t), t), PMIX_SUCCESS);
        s = PMIx_Value_string(&v);
        assert_non_null(s);
        free(s);
        PMIx_Value_destruct(&v);
        px_elems_destruct(sample, 1, t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_round_trip),
        cmocka_unit_test(test_value_load_details),
        cmocka_unit_test(test_value_compare),
        cmocka_unit_test(test_get_number),
        cmocka_unit_test(test_info_flags_and_array_end),
        cmocka_unit_test(test_info_list),
        cmocka_unit_test(test_nested_arrays),
        cmocka_unit_test(test_procs_and_keys),
        cmocka_unit_test(test_struct_macros),
        cmocka_unit_test(test_argv),
        cmocka_unit_test(test_error_strings),
        cmocka_unit_test(test_enum_strings),
        cmocka_unit_test(test_attribute_names),
        cmocka_unit_test(test_value_string),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
