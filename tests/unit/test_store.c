/*
 * test_store.c - the key/value store (libpmix/src/store/).
 *
 * Each test gets a fresh pair of stores (`s` plays the server or the
 * writer, `t` the client or the reader) and destroys both in teardown.
 * Blobs are created with a release callback that counts, so a test can
 * prove when the last reference went; leaks are left to AddressSanitizer
 * (build with PMIXLAB_SANITIZE=ON).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <pmix_common.h>

#include "common/px_common.h"
#include "store/px_htab.h"
#include "store/px_store.h"
#include "store/px_store_int.h"
#include "wire/px_wire.h"

#define NS "test.job"
#define NS2 "test.other"

typedef struct fixture {
    px_store *s;
    px_store *t;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->s = px_store_create();
    f->t = px_store_create();
    assert_non_null(f->s);
    assert_non_null(f->t);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    px_store_destroy(f->s);
    px_store_destroy(f->t);
    free(f);
    return 0;
}

/* ---- helpers ---- */

static pmix_proc_t proc(const char *ns, pmix_rank_t rank)
{
    pmix_proc_t p;
    PMIx_Load_procid(&p, ns, rank);
    return p;
}

static void info_u32(pmix_info_t *i, const char *key, uint32_t v)
{
    assert_int_equal(PMIx_Info_load(i, key, &v, PMIX_UINT32), PMIX_SUCCESS);
}

static void info_str(pmix_info_t *i, const char *key, const char *v)
{
    assert_int_equal(PMIx_Info_load(i, key, v, PMIX_STRING), PMIX_SUCCESS);
}

static void info_rank(pmix_info_t *i, pmix_rank_t r)
{
    assert_int_equal(PMIx_Info_load(i, PMIX_RANK, &r, PMIX_PROC_RANK), PMIX_SUCCESS);
}

/* Load into `dst` a PMIX_DATA_ARRAY of the n infos at `elems` (copied),
 * then destruct `elems`. */
static void info_array(pmix_info_t *dst, const char *key, pmix_info_t *elems, size_t n)
{
    if (n == 0) {
        pmix_data_array_t empty = {PMIX_INFO, 0, NULL};
        assert_int_equal(PMIx_Info_load(dst, key, &empty, PMIX_DATA_ARRAY), PMIX_SUCCESS);
        return;
    }
    pmix_data_array_t *da = PMIx_Data_array_create(n, PMIX_INFO);
    assert_non_null(da);
    pmix_info_t *a = da->array;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(PMIx_Info_xfer(&a[i], &elems[i]), PMIX_SUCCESS);
        PMIx_Info_destruct(&elems[i]);
    }
    assert_int_equal(PMIx_Info_load(dst, key, da, PMIX_DATA_ARRAY), PMIX_SUCCESS);
    PMIx_Data_array_free(da);
}

static void free_infos(pmix_info_t *info, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        PMIx_Info_destruct(&info[i]);
    }
}

static pmix_value_t val_u32(uint32_t v)
{
    pmix_value_t x;
    PMIx_Value_construct(&x);
    x.type = PMIX_UINT32;
    x.data.uint32 = v;
    return x;
}

static pmix_value_t val_str(const char *s)
{
    pmix_value_t x;
    PMIx_Value_construct(&x);
    x.type = PMIX_STRING;
    x.data.string = (char *)s; /* borrowed: never destructed */
    return x;
}

static void expect_job_u32(const px_store *s, const char *ns, pmix_rank_t rank, const char *key,
                           const pmix_info_t *qual, size_t nqual, uint32_t want)
{
    pmix_value_t *v = NULL;
    assert_int_equal(px_store_get_job(s, ns, rank, key, qual, nqual, &v), PMIX_SUCCESS);
    assert_non_null(v);
    uint64_t got;
    assert_int_equal(px_value_get_number(v, &got), PMIX_SUCCESS);
    assert_int_equal(got, want);
    PMIX_VALUE_RELEASE(v);
}

static void expect_job_str(const px_store *s, const char *ns, pmix_rank_t rank, const char *key,
                           const pmix_info_t *qual, size_t nqual, const char *want)
{
    pmix_value_t *v = NULL;
    assert_int_equal(px_store_get_job(s, ns, rank, key, qual, nqual, &v), PMIX_SUCCESS);
    assert_int_equal(v->type, PMIX_STRING);
    assert_string_equal(v->data.string, want);
    PMIX_VALUE_RELEASE(v);
}

static void expect_job_none(const px_store *s, const char *ns, pmix_rank_t rank, const char *key,
                            const pmix_info_t *qual, size_t nqual)
{
    pmix_value_t *v = NULL;
    assert_int_equal(px_store_get_job(s, ns, rank, key, qual, nqual, &v), PMIX_ERR_NOT_FOUND);
    assert_null(v);
}

static void expect_proc_u32(const px_store *s, const char *ns, pmix_rank_t rank, const char *key,
                            bool local, uint32_t want)
{
    pmix_proc_t p = proc(ns, rank);
    pmix_value_t *v = NULL;
    assert_int_equal(px_store_get_proc(s, &p, key, local, &v), PMIX_SUCCESS);
    assert_int_equal(v->type, PMIX_UINT32);
    assert_int_equal(v->data.uint32, want);
    PMIX_VALUE_RELEASE(v);
}

static void expect_proc_none(const px_store *s, const char *ns, pmix_rank_t rank, const char *key,
                             bool local)
{
    pmix_proc_t p = proc(ns, rank);
    pmix_value_t *v = NULL;
    assert_int_equal(px_store_get_proc(s, &p, key, local, &v), PMIX_ERR_NOT_FOUND);
    assert_null(v);
}

static void put_u32(px_store *s, const char *ns, pmix_rank_t rank, pmix_scope_t scope,
                    const char *key, uint32_t v)
{
    pmix_proc_t p = proc(ns, rank);
    pmix_value_t x = val_u32(v);
    assert_int_equal(px_store_put(s, &p, scope, key, &x), PMIX_SUCCESS);
}

/* Allocation failures on demand (the link wraps malloc, calloc and
 * realloc for this program, tests/unit/CMakeLists.txt): with fail_after =
 * k >= 0, the k allocations after it succeed and the next one fails, once;
 * -1, none fails. */
static long fail_after = -1;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static bool alloc_fails(void)
{
    if (fail_after < 0) {
        return false;
    }
    if (fail_after-- > 0) {
        return false;
    }
    fail_after = -1;
    return true;
}

void *__wrap_malloc(size_t n)
{
    return alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return alloc_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return alloc_fails() ? NULL : __real_realloc(p, n);
}

typedef struct counter {
    int released;
} counter;

/* The counters the tests pass are static: a blob a test leaves in the
 * fixture's stores is released at teardown, after the test's frame is
 * gone, and a counter on its stack would be written there (in a -O0
 * build that broke the next call's saved registers). */
static void count_release(void *arg, const uint8_t *data, size_t len)
{
    ((counter *)arg)->released++;
    free((void *)data);
}

/* A blob owning the packed bytes of `b` (b is empty afterwards). */
static px_blob *blob_from(px_buf *b, counter *c)
{
    size_t len;
    assert_int_equal(px_buf_status(b), PMIX_SUCCESS);
    void *data = px_buf_steal(b, &len);
    px_blob *blob = px_blob_create(data, len, count_release, c);
    assert_non_null(blob);
    return blob;
}

/* A blob holding a copy of `len` bytes at `data`. */
static px_blob *blob_copy(const void *data, size_t len, counter *c)
{
    void *copy = malloc(len != 0 ? len : 1);
    assert_non_null(copy);
    if (len != 0) {
        memcpy(copy, data, len);
    }
    px_blob *blob = px_blob_create(copy, len, count_release, c);
    assert_non_null(blob);
    return blob;
}

/* One hand-made record whose kv-list holds key = u32 value. */
static void pack_record_u32(px_buf *b, const char *ns, pmix_rank_t rank, const char *key,
                            uint32_t v)
{
    px_buf kv;
    pmix_value_t x = val_u32(v);
    size_t len;
    px_buf_init(&kv);
    px_pack_u32(&kv, 1);
    px_pack_str(&kv, key);
    px_pack_value(&kv, &x);
    assert_int_equal(px_buf_status(&kv), PMIX_SUCCESS);
    void *bytes = px_buf_steal(&kv, &len);
    px_pack_str(b, ns);
    px_pack_u32(b, rank);
    px_pack_u32(b, (uint32_t)len);
    px_pack_raw(b, bytes, len);
    free(bytes);
}

/* ---- job-level data ---- */

enum {
    NRANKS = 4
};

/* Job NS: 4 ranks, rank r on node r/2 ("n0", "n1") and in app r/2. */
static void load_sample_job(px_store *s, const char *ns)
{
    pmix_info_t info[12], e[5];
    size_t n = 0;
    info_u32(&info[n++], PMIX_JOB_SIZE, NRANKS);
    info_str(&info[n++], "test.jobkey", "job");
    info_u32(&e[0], PMIX_SESSION_ID, 7);
    info_u32(&e[1], PMIX_UNIV_SIZE, 8);
    info_array(&info[n++], PMIX_SESSION_INFO_ARRAY, e, 2);
    for (uint32_t r = 0; r < NRANKS; r++) {
        info_rank(&e[0], r);
        info_u32(&e[1], PMIX_NODEID, r / 2);
        info_u32(&e[2], PMIX_APPNUM, r / 2);
        info_u32(&e[3], PMIX_LOCAL_RANK, r % 2);
        info_array(&info[n++], PMIX_PROC_DATA, e, 4);
    }
    for (uint32_t i = 0; i < 2; i++) {
        char host[8];
        snprintf(host, sizeof(host), "n%u", i);
        info_u32(&e[0], PMIX_NODEID, i);
        info_str(&e[1], PMIX_HOSTNAME, host);
        info_u32(&e[2], PMIX_LOCAL_SIZE, 2 + i);
        info_array(&info[n++], PMIX_NODE_INFO_ARRAY, e, 3);
    }
    for (uint32_t i = 0; i < 2; i++) {
        info_str(&e[0], "test.appkey", i == 0 ? "a0" : "a1");
        info_u32(&e[1], PMIX_APPNUM, i);
        info_array(&info[n++], PMIX_APP_INFO_ARRAY, e, 2);
    }
    assert_int_equal(px_store_load_job(s, ns, info, n), PMIX_SUCCESS);
    free_infos(info, n);
}

/* Every lookup the sample job answers, checked against `s`. */
static void check_sample_job(const px_store *s, const char *ns)
{
    pmix_info_t q[2];
    assert_true(px_store_has_job(s, ns));
    /* Job keys, session keys at job level, the session id dropped. */
    expect_job_u32(s, ns, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0, NRANKS);
    expect_job_str(s, ns, PMIX_RANK_WILDCARD, "test.jobkey", NULL, 0, "job");
    expect_job_u32(s, ns, PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, NULL, 0, 8);
    expect_job_none(s, ns, PMIX_RANK_WILDCARD, PMIX_SESSION_ID, NULL, 0);
    /* Node and app keys are not job keys. */
    expect_job_none(s, ns, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, NULL, 0);
    expect_job_none(s, ns, PMIX_RANK_WILDCARD, "test.appkey", NULL, 0);
    for (uint32_t r = 0; r < NRANKS; r++) {
        /* Rank keys, identifier included. */
        expect_job_u32(s, ns, r, PMIX_LOCAL_RANK, NULL, 0, r % 2);
        expect_job_u32(s, ns, r, PMIX_RANK, NULL, 0, r);
        expect_job_u32(s, ns, r, PMIX_NODEID, NULL, 0, r / 2);
        /* Then the rank's node, its app, the job. */
        expect_job_u32(s, ns, r, PMIX_LOCAL_SIZE, NULL, 0, 2 + r / 2);
        expect_job_str(s, ns, r, PMIX_HOSTNAME, NULL, 0, r / 2 == 0 ? "n0" : "n1");
        expect_job_str(s, ns, r, "test.appkey", NULL, 0, r / 2 == 0 ? "a0" : "a1");
        expect_job_u32(s, ns, r, PMIX_JOB_SIZE, NULL, 0, NRANKS);
        expect_job_u32(s, ns, r, PMIX_UNIV_SIZE, NULL, 0, 8);
        expect_job_none(s, ns, r, "test.nothing", NULL, 0);
    }
    /* A rank without PMIX_PROC_DATA sees the job keys only. */
    expect_job_u32(s, ns, 99, PMIX_JOB_SIZE, NULL, 0, NRANKS);
    expect_job_none(s, ns, 99, PMIX_LOCAL_SIZE, NULL, 0);
    /* Qualifiers: a node by id or hostname, an app by number. */
    info_u32(&q[0], PMIX_NODEID, 1);
    expect_job_u32(s, ns, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, q, 1, 3);
    expect_job_str(s, ns, PMIX_RANK_WILDCARD, PMIX_HOSTNAME, q, 1, "n1");
    expect_job_none(s, ns, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, q, 1);
    PMIx_Info_destruct(&q[0]);
    info_str(&q[0], PMIX_HOSTNAME, "n0");
    expect_job_u32(s, ns, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, q, 1, 2);
    expect_job_u32(s, ns, PMIX_RANK_WILDCARD, PMIX_NODEID, q, 1, 0);
    PMIx_Info_destruct(&q[0]);
    info_u32(&q[0], PMIX_APPNUM, 1);
    expect_job_str(s, ns, PMIX_RANK_WILDCARD, "test.appkey", q, 1, "a1");
    PMIx_Info_destruct(&q[0]);
    info_u32(&q[0], PMIX_NODEID, 9);
    expect_job_none(s, ns, PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE, q, 1);
    PMIx_Info_destruct(&q[0]);
    /* Unrelated qualifiers change nothing. */
    info_u32(&q[0], "test.unrelated", 1);
    expect_job_u32(s, ns, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, q, 1, NRANKS);
    PMIx_Info_destruct(&q[0]);
}

static void test_job_load_and_lookup(void **state)
{
    fixture *f = *state;
    assert_false(px_store_has_job(f->s, NS));
    expect_job_none(f->s, NS, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0);
    load_sample_job(f->s, NS);
    check_sample_job(f->s, NS);
    assert_false(px_store_has_job(f->s, NS2));
    expect_job_none(f->s, NS2, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0);
    /* Job-level data is not process data. */
    pmix_proc_t p = proc(NS, 0);
    assert_false(px_store_has_proc(f->s, &p));
    expect_proc_none(f->s, NS, 0, PMIX_LOCAL_RANK, true);
}

/* Qualified values (PMIX_QUALIFIED_VALUE): a key registered per network
 * plane and view is found only with exactly those qualifiers; the plain
 * value without any; the Standard's PMIX_FABRIC_* spellings too; and they
 * survive packing to another store. */
static void qualify(pmix_info_t *dst, const char *key, uint32_t v, const char *plane, int view)
{
    pmix_info_t e[3];
    size_t n = 0;
    info_u32(&e[n++], key, v);
    if (plane != NULL) {
        info_str(&e[n++], PMIX_NETWORK_PLANE, plane);
    }
    if (view >= 0) {
        uint8_t vw = (uint8_t)view;
        assert_int_equal(PMIx_Info_load(&e[n++], PMIX_NETWORK_VIEW, &vw, PMIX_UINT8), PMIX_SUCCESS);
    }
    info_array(dst, PMIX_QUALIFIED_VALUE, e, n);
}

static void check_qualified(const px_store *s)
{
    pmix_info_t q[3];
    uint8_t phys = PMIX_COORD_PHYSICAL_VIEW;

    expect_job_u32(s, NS, PMIX_RANK_WILDCARD, PMIX_NETWORK_DIMS, NULL, 0, 100);
    info_str(&q[0], PMIX_NETWORK_PLANE, "p1");
    expect_job_u32(s, NS, PMIX_RANK_WILDCARD, PMIX_NETWORK_DIMS, q, 1, 101);
    assert_int_equal(PMIx_Info_load(&q[1], PMIX_NETWORK_VIEW, &phys, PMIX_UINT8), PMIX_SUCCESS);
    expect_job_u32(s, NS, PMIX_RANK_WILDCARD, PMIX_NETWORK_DIMS, q, 2, 121);
    /* The order of the qualifiers does not matter; unrelated ones are ignored. */
    info_u32(&q[2], "test.unrelated", 7);
    expect_job_u32(s, NS, PMIX_RANK_WILDCARD, PMIX_NETWORK_DIMS, q + 1, 2, 120);
    expect_job_u32(s, NS, PMIX_RANK_WILDCARD, PMIX_NETWORK_DIMS, q, 3, 121);
    /* A rank falls back to the job's qualified value. */
    expect_job_u32(s, NS, 0, PMIX_NETWORK_DIMS, q, 2, 121);
    /* The other spelling of the key, and of the plane qualifier. */
    expect_job_u32(s, NS, PMIX_RANK_WILDCARD, PMIX_FABRIC_DIMS, q, 2, 121);
    PMIx_Info_destruct(&q[0]);
    info_str(&q[0], PMIX_FABRIC_PLANE, "p1");
    expect_job_u32(s, NS, PMIX_RANK_WILDCARD, PMIX_NETWORK_DIMS, q, 1, 101);
    PMIx_Info_destruct(&q[0]);
    /* No value under a plane that was not registered. */
    info_str(&q[0], PMIX_NETWORK_PLANE, "p9");
    expect_job_none(s, NS, PMIX_RANK_WILDCARD, PMIX_NETWORK_DIMS, q, 1);
    free_infos(q, 3);
}

static void test_job_qualified_values(void **state)
{
    fixture *f = *state;
    pmix_info_t info[6], e[2];
    size_t n = 0;
    px_buf b, view;

    info_u32(&info[n++], PMIX_NETWORK_DIMS, 100);
    qualify(&info[n++], PMIX_NETWORK_DIMS, 101, "p1", -1);
    qualify(&info[n++], PMIX_NETWORK_DIMS, 120, NULL, PMIX_COORD_PHYSICAL_VIEW);
    qualify(&info[n++], PMIX_NETWORK_DIMS, 121, "p1", PMIX_COORD_PHYSICAL_VIEW);
    info_rank(&e[0], 0);
    info_u32(&e[1], PMIX_NODEID, 0);
    info_array(&info[n++], PMIX_PROC_DATA, e, 2);
    assert_int_equal(px_store_load_job(f->s, NS, info, n), PMIX_SUCCESS);
    free_infos(info, n);
    check_qualified(f->s);

    px_buf_init(&b);
    px_store_pack_job(f->s, NS, &b);
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_job(f->t, &view), PMIX_SUCCESS);
    check_qualified(f->t);
    px_buf_fini(&b);

    /* A qualifier the store does not know is refused at load time. */
    info_u32(&e[0], PMIX_NETWORK_DIMS, 1);
    info_u32(&e[1], "test.unknown", 1);
    info_array(&info[0], PMIX_QUALIFIED_VALUE, e, 2);
    assert_int_equal(px_store_load_job(f->s, NS2, info, 1), PMIX_ERR_BAD_PARAM);
    free_infos(info, 1);
}

/* The key a qualified value is kept under: the qualifiers in a fixed
 * order whatever their order in the array, numbers in decimal, and a
 * clear refusal when a qualifier has another type or the result is too
 * long for a key. */
static void test_qualified_key_text(void **state)
{
    pmix_info_t q[4];
    char out[PMIX_MAX_KEYLEN + 1], small[24], longkey[PMIX_MAX_KEYLEN];
    uint64_t big = UINT64_MAX;
    uint32_t zero = 0;
    bool yes = true;

    (void)state;
    memset(q, 0, sizeof(q));
    PMIx_Info_load(&q[0], PMIX_NETWORK_VIEW, "physical", PMIX_STRING);
    PMIx_Info_load(&q[1], PMIX_HOSTNAME, "ignored", PMIX_STRING); /* not a network qualifier */
    PMIx_Info_load(&q[2], PMIX_NETWORK_NIC, "node-3.nic1", PMIX_STRING);
    PMIx_Info_load(&q[3], PMIX_NETWORK_PLANE, &big, PMIX_UINT64);
    assert_int_equal(px_store_qualified_key("pmix.net.coord", q, 4, out, sizeof(out)), 3);
    assert_string_equal(out, "pmix.net.coord?pmix.net.plane=18446744073709551615"
                             "&pmix.net.nic=node-3.nic1&pmix.net.view=physical");
    PMIx_Info_destruct(&q[3]);
    PMIx_Info_load(&q[3], PMIX_NETWORK_PLANE, &zero, PMIX_UINT32);
    assert_int_equal(px_store_qualified_key("k", &q[3], 1, out, sizeof(out)), 1);
    assert_string_equal(out, "k?pmix.net.plane=0");
    assert_int_equal(px_store_qualified_key("plain", NULL, 0, out, sizeof(out)), 0);
    assert_string_equal(out, "plain");
    /* does not fit the buffer, or is longer than a key may be */
    assert_int_equal(px_store_qualified_key("pmix.net.coord", q, 4, small, sizeof(small)), -1);
    memset(longkey, 'x', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    assert_int_equal(px_store_qualified_key(longkey, &q[3], 1, out, sizeof(out)), -1);
    assert_int_equal(px_store_qualified_key(longkey, NULL, 0, out, sizeof(out)), 0);
    /* a qualifier of another type */
    PMIx_Info_destruct(&q[3]);
    PMIx_Info_load(&q[3], PMIX_NETWORK_PLANE, &yes, PMIX_BOOL);
    assert_int_equal(px_store_qualified_key("k", &q[3], 1, out, sizeof(out)), -1);
    assert_int_equal(px_store_qualified_key(NULL, NULL, 0, out, sizeof(out)), -1);
    for (size_t i = 0; i < 4; i++) {
        PMIx_Info_destruct(&q[i]);
    }
}

static void test_job_identifiers(void **state)
{
    fixture *f = *state;
    pmix_info_t info[4], e[3], q;
    uint32_t u = 5;
    int i = 1;
    /* A rank given as a uint32, nodes known by one identifier only, an
     * identifier that is not first, integer types other than uint32. */
    assert_int_equal(PMIx_Info_load(&e[0], PMIX_RANK, &u, PMIX_UINT32), PMIX_SUCCESS);
    info_str(&e[1], PMIX_HOSTNAME, "solo");
    assert_int_equal(PMIx_Info_load(&e[2], PMIX_APPNUM, &i, PMIX_INT), PMIX_SUCCESS);
    info_array(&info[0], PMIX_PROC_DATA, e, 3);
    info_u32(&e[0], "test.k", 1);
    info_str(&e[1], PMIX_HOSTNAME, "solo");
    info_array(&info[1], PMIX_NODE_INFO_ARRAY, e, 2);
    info_u32(&e[0], "test.k", 2);
    info_u32(&e[1], PMIX_NODEID, 4);
    info_array(&info[2], PMIX_NODE_INFO_ARRAY, e, 2);
    info_u32(&e[0], "test.k", 3);
    info_u32(&e[1], PMIX_APPNUM, 1);
    info_array(&info[3], PMIX_APP_INFO_ARRAY, e, 2);
    assert_int_equal(px_store_load_job(f->s, NS, info, 4), PMIX_SUCCESS);
    free_infos(info, 4);
    /* Rank 5 finds its node by hostname (it has no PMIX_NODEID). */
    expect_job_u32(f->s, NS, 5, "test.k", NULL, 0, 1);
    expect_job_u32(f->s, NS, 5, PMIX_RANK, NULL, 0, 5);
    info_u32(&q, PMIX_NODEID, 4);
    expect_job_u32(f->s, NS, PMIX_RANK_WILDCARD, "test.k", &q, 1, 2);
    expect_job_none(f->s, NS, PMIX_RANK_WILDCARD, PMIX_HOSTNAME, &q, 1);
    PMIx_Info_destruct(&q);
    info_u32(&q, PMIX_APPNUM, 1);
    expect_job_u32(f->s, NS, PMIX_RANK_WILDCARD, "test.k", &q, 1, 3);
    PMIx_Info_destruct(&q);
    /* A qualifier of the wrong type is an error. */
    info_u32(&q, PMIX_HOSTNAME, 4);
    pmix_value_t *v = NULL;
    assert_int_equal(px_store_get_job(f->s, NS, PMIX_RANK_WILDCARD, "test.k", &q, 1, &v),
                     PMIX_ERR_BAD_PARAM);
    assert_null(v);
    PMIx_Info_destruct(&q);
}

static void test_job_arrays_merge(void **state)
{
    fixture *f = *state;
    pmix_info_t info[3], e[3];
    /* Two arrays for node 0 (the second adds the hostname), two for rank 0. */
    info_u32(&e[0], PMIX_NODEID, 0);
    info_u32(&e[1], "test.a", 1);
    info_array(&info[0], PMIX_NODE_INFO_ARRAY, e, 2);
    info_u32(&e[0], PMIX_NODEID, 0);
    info_str(&e[1], PMIX_HOSTNAME, "h0");
    info_u32(&e[2], "test.a", 2);
    info_array(&info[1], PMIX_NODE_INFO_ARRAY, e, 3);
    info_str(&e[0], PMIX_HOSTNAME, "h0");
    info_u32(&e[1], "test.b", 3);
    info_array(&info[2], PMIX_NODE_INFO_ARRAY, e, 2);
    assert_int_equal(px_store_load_job(f->s, NS, info, 3), PMIX_SUCCESS);
    free_infos(info, 3);
    pmix_info_t q;
    info_u32(&q, PMIX_NODEID, 0);
    expect_job_u32(f->s, NS, PMIX_RANK_WILDCARD, "test.a", &q, 1, 2);
    expect_job_u32(f->s, NS, PMIX_RANK_WILDCARD, "test.b", &q, 1, 3);
    expect_job_str(f->s, NS, PMIX_RANK_WILDCARD, PMIX_HOSTNAME, &q, 1, "h0");
    PMIx_Info_destruct(&q);
}

static void test_job_reload_replaces(void **state)
{
    fixture *f = *state;
    load_sample_job(f->s, NS);
    pmix_info_t info[2];
    info_u32(&info[0], "test.new", 1);
    info_u32(&info[1], PMIX_JOB_SIZE, 77);
    assert_int_equal(px_store_load_job(f->s, NS, info, 2), PMIX_SUCCESS);
    free_infos(info, 2);
    expect_job_u32(f->s, NS, PMIX_RANK_WILDCARD, "test.new", NULL, 0, 1);
    expect_job_u32(f->s, NS, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0, 77);
    expect_job_none(f->s, NS, PMIX_RANK_WILDCARD, "test.jobkey", NULL, 0);
    expect_job_none(f->s, NS, 1, PMIX_LOCAL_RANK, NULL, 0);
    expect_job_u32(f->s, NS, 1, PMIX_JOB_SIZE, NULL, 0, 77);
    /* Loading an empty array leaves a job with no keys. */
    assert_int_equal(px_store_load_job(f->s, NS, NULL, 0), PMIX_SUCCESS);
    assert_true(px_store_has_job(f->s, NS));
    expect_job_none(f->s, NS, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0);
}

static void test_job_load_keeps_process_data(void **state)
{
    fixture *f = *state;
    put_u32(f->s, NS, 0, PMIX_GLOBAL, "test.put", 5);
    load_sample_job(f->s, NS);
    load_sample_job(f->s, NS);
    expect_proc_u32(f->s, NS, 0, "test.put", true, 5);
}

static void test_job_drop(void **state)
{
    fixture *f = *state;
    static counter c; /* static: see count_release */
    c = (counter){0};
    load_sample_job(f->s, NS);
    load_sample_job(f->s, NS2);
    put_u32(f->s, NS, 1, PMIX_GLOBAL, "test.put", 5);
    px_buf b;
    px_buf_init(&b);
    pack_record_u32(&b, NS, 2, "test.rec", 6);
    px_blob *blob = blob_from(&b, &c);
    assert_int_equal(px_store_add_blob(f->s, blob), PMIX_SUCCESS);
    px_blob_unref(blob);
    assert_int_equal(c.released, 0);
    pmix_proc_t p2 = proc(NS, 2);
    assert_true(px_store_has_proc(f->s, &p2));

    px_store_drop_job(f->s, NS);
    assert_int_equal(c.released, 1);
    assert_false(px_store_has_job(f->s, NS));
    assert_false(px_store_has_proc(f->s, &p2));
    expect_job_none(f->s, NS, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0);
    expect_proc_none(f->s, NS, 1, "test.put", true);
    expect_proc_none(f->s, NS, 2, "test.rec", true);
    check_sample_job(f->s, NS2);
    /* Dropping what is not there is harmless. */
    px_store_drop_job(f->s, NS);
    px_store_drop_job(f->s, "test.never");
}

static void test_job_pack_roundtrip(void **state)
{
    fixture *f = *state;
    px_buf b;
    load_sample_job(f->s, NS);
    /* The receiver holds older data for the namespace: it is replaced. */
    pmix_info_t old;
    info_u32(&old, "test.old", 1);
    assert_int_equal(px_store_load_job(f->t, NS, &old, 1), PMIX_SUCCESS);
    PMIx_Info_destruct(&old);

    px_buf_init(&b);
    px_store_pack_job(f->s, NS, &b);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    px_buf view;
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_job(f->t, &view), PMIX_SUCCESS);
    assert_int_equal(px_buf_left(&view), 0);
    check_sample_job(f->t, NS);
    expect_job_none(f->t, NS, PMIX_RANK_WILDCARD, "test.old", NULL, 0);

    /* Packing again from the receiver gives the same bytes' worth. */
    px_buf b2;
    px_buf_init(&b2);
    px_store_pack_job(f->t, NS, &b2);
    assert_int_equal(b2.size, b.size);
    px_buf_fini(&b2);
    px_buf_fini(&b);

    /* An unknown namespace packs as an empty job. */
    px_buf_init(&b);
    px_store_pack_job(f->s, NS2, &b);
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_job(f->t, &view), PMIX_SUCCESS);
    assert_true(px_store_has_job(f->t, NS2));
    expect_job_none(f->t, NS2, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0);
    px_buf_fini(&b);
}

/* Unpack into `s` a job of namespace `ns` with n job keys, keys[i] =
 * vals[i] in that order on the wire, and nothing else. */
static void unpack_job_keys(px_store *s, const char *ns, const char *const *keys,
                            const uint32_t *vals, size_t n)
{
    px_buf b, view;
    pmix_value_t v;
    px_buf_init(&b);
    px_pack_str(&b, ns);
    px_pack_u32(&b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        PMIx_Value_construct(&v);
        PMIx_Value_load(&v, &vals[i], PMIX_UINT32);
        px_pack_str(&b, keys[i]);
        px_pack_value(&b, &v);
        PMIx_Value_destruct(&v);
    }
    px_pack_u32(&b, 0); /* ranks */
    px_pack_u32(&b, 0); /* nodes */
    px_pack_u32(&b, 0); /* apps */
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_job(s, &view), PMIX_SUCCESS);
    px_buf_fini(&b);
}

/* A key given again replaces the earlier value: lookups see the last, and
 * the packed job carries each key once; a kv-list on the wire that repeats
 * a key keeps its last value too. */
static void test_job_replaced_keys(void **state)
{
    fixture *f = *state;
    pmix_info_t info[4], e[2];
    px_buf b, view;
    uint32_t count;
    char ns[PMIX_MAX_NSLEN + 1];

    info_u32(&info[0], "test.j", 1);
    info_u32(&info[1], "test.j", 5);
    info_u32(&e[0], PMIX_NODEID, 0);
    info_u32(&e[1], "test.a", 1);
    info_array(&info[2], PMIX_NODE_INFO_ARRAY, e, 2);
    info_u32(&e[0], PMIX_NODEID, 0);
    info_u32(&e[1], "test.a", 2);
    info_array(&info[3], PMIX_NODE_INFO_ARRAY, e, 2);
    assert_int_equal(px_store_load_job(f->s, NS, info, 4), PMIX_SUCCESS);
    free_infos(info, 4);
    pmix_info_t q;
    info_u32(&q, PMIX_NODEID, 0);
    expect_job_u32(f->s, NS, PMIX_RANK_WILDCARD, "test.j", NULL, 0, 5);
    expect_job_u32(f->s, NS, PMIX_RANK_WILDCARD, "test.a", &q, 1, 2);

    px_buf_init(&b);
    px_store_pack_job(f->s, NS, &b);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_unpack_strbuf(&view, ns, sizeof(ns)), PMIX_SUCCESS);
    assert_int_equal(px_unpack_u32(&view, &count), PMIX_SUCCESS);
    assert_int_equal(count, 1); /* test.j once */
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_job(f->t, &view), PMIX_SUCCESS);
    expect_job_u32(f->t, NS, PMIX_RANK_WILDCARD, "test.j", NULL, 0, 5);
    expect_job_u32(f->t, NS, PMIX_RANK_WILDCARD, "test.a", &q, 1, 2);
    px_buf_fini(&b);

    /* The same key twice in one kv-list on the wire. */
    const char *twice[2] = {"test.k", "test.k"};
    uint32_t vals[8] = {1, 9};
    unpack_job_keys(f->t, NS2, twice, vals, 2);
    expect_job_u32(f->t, NS2, PMIX_RANK_WILDCARD, "test.k", NULL, 0, 9);
    expect_job_none(f->t, NS2, PMIX_RANK_WILDCARD, "test.k2", NULL, 0);
    px_buf_fini(&b);
    PMIx_Info_destruct(&q);

    /* Keys in any order on the wire (a server sends them in its index's
     * order): eight keys forwards, then backwards, are all found. */
    char names[8][16];
    const char *keys[8];
    for (int back = 0; back < 2; back++) {
        for (uint32_t i = 0; i < 8; i++) {
            vals[i] = back ? 7 - i : i;
            snprintf(names[i], sizeof(names[i]), "test.n%u", vals[i]);
            keys[i] = names[i];
        }
        unpack_job_keys(f->t, NS2, keys, vals, 8);
        for (uint32_t i = 0; i < 8; i++) {
            expect_job_u32(f->t, NS2, PMIX_RANK_WILDCARD, keys[i], NULL, 0, vals[i]);
        }
    }
}

static void test_job_unpack_malformed(void **state)
{
    fixture *f = *state;
    px_buf b, view;
    load_sample_job(f->s, NS);
    px_buf_init(&b);
    px_store_pack_job(f->s, NS, &b);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    /* The receiver holds a job of its own under that name. */
    pmix_info_t mine;
    info_u32(&mine, "test.mine", 1);
    assert_int_equal(px_store_load_job(f->t, NS, &mine, 1), PMIX_SUCCESS);
    PMIx_Info_destruct(&mine);
    /* Every truncation fails and changes nothing, cursor included. */
    for (size_t len = 0; len < b.size; len++) {
        px_buf_view(&view, b.data, len);
        assert_int_not_equal(px_store_unpack_job(f->t, &view), PMIX_SUCCESS);
        assert_int_equal(view.pos, 0);
        expect_job_u32(f->t, NS, PMIX_RANK_WILDCARD, "test.mine", NULL, 0, 1);
        expect_job_none(f->t, NS, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0);
    }
    /* A rank that appears twice is refused. */
    px_buf d;
    px_buf_init(&d);
    px_pack_str(&d, NS);
    px_pack_u32(&d, 0);
    px_pack_u32(&d, 2);
    for (int i = 0; i < 2; i++) {
        px_pack_u32(&d, 3);
        px_pack_u32(&d, 0);
    }
    px_pack_u32(&d, 0);
    px_pack_u32(&d, 0);
    px_buf_view(&view, d.data, d.size);
    assert_int_equal(px_store_unpack_job(f->t, &view), PMIX_ERR_UNPACK_FAILURE);
    px_buf_fini(&d);
    /* A node with no identifier is refused. */
    px_buf_init(&d);
    px_pack_str(&d, NS);
    px_pack_u32(&d, 0);
    px_pack_u32(&d, 0);
    px_pack_u32(&d, 1);
    px_pack_u8(&d, 0);
    px_pack_u32(&d, 0);
    px_pack_u32(&d, 0);
    px_buf_view(&view, d.data, d.size);
    assert_int_equal(px_store_unpack_job(f->t, &view), PMIX_ERR_UNPACK_FAILURE);
    px_buf_fini(&d);
    expect_job_u32(f->t, NS, PMIX_RANK_WILDCARD, "test.mine", NULL, 0, 1);
    px_buf_fini(&b);
}

static void test_job_load_malformed(void **state)
{
    fixture *f = *state;
    pmix_info_t info[2], e[2];
    load_sample_job(f->s, NS);

    /* Each case: a valid first entry, then the bad one. */
    for (int c = 0; c < 10; c++) {
        info_u32(&info[0], PMIX_JOB_SIZE, 1000);
        switch (c) {
        case 0: /* proc data not led by PMIX_RANK */
            info_u32(&e[0], PMIX_LOCAL_RANK, 0);
            info_rank(&e[1], 0);
            info_array(&info[1], PMIX_PROC_DATA, e, 2);
            break;
        case 1: /* proc data that is not an array */ info_u32(&info[1], PMIX_PROC_DATA, 3); break;
        case 2: /* proc data with an empty array */
            info_array(&info[1], PMIX_PROC_DATA, e, 0);
            break;
        case 3: /* a rank that is a string */
            info_str(&e[0], PMIX_RANK, "0");
            info_array(&info[1], PMIX_PROC_DATA, e, 1);
            break;
        case 4: { /* an array of the wrong element type */
            pmix_data_array_t *da = PMIx_Data_array_create(2, PMIX_UINT32);
            assert_int_equal(PMIx_Info_load(&info[1], PMIX_PROC_DATA, da, PMIX_DATA_ARRAY),
                             PMIX_SUCCESS);
            PMIx_Data_array_free(da);
            break;
        }
        case 5: /* a node without identifier */
            info_u32(&e[0], PMIX_LOCAL_SIZE, 2);
            info_array(&info[1], PMIX_NODE_INFO_ARRAY, e, 1);
            break;
        case 6: /* a hostname that is not a string */
            info_u32(&e[0], PMIX_HOSTNAME, 2);
            info_array(&info[1], PMIX_NODE_INFO_ARRAY, e, 1);
            break;
        case 7: /* an app without appnum */
            info_u32(&e[0], PMIX_LOCAL_SIZE, 2);
            info_array(&info[1], PMIX_APP_INFO_ARRAY, e, 1);
            break;
        case 8: /* a session array that is not an array */
            info_u32(&info[1], PMIX_SESSION_INFO_ARRAY, 3);
            break;
        case 9: /* a negative node id */
            assert_int_equal(PMIx_Info_load(&e[0], PMIX_NODEID, &(int){-1}, PMIX_INT),
                             PMIX_SUCCESS);
            info_array(&info[1], PMIX_NODE_INFO_ARRAY, e, 1);
            break;
        }
        assert_int_equal(px_store_load_job(f->s, NS, info, 2), PMIX_ERR_BAD_PARAM);
        assert_int_equal(px_store_load_job(f->s, NS2, info, 2), PMIX_ERR_BAD_PARAM);
        free_infos(info, 2);
        check_sample_job(f->s, NS);
        assert_false(px_store_has_job(f->s, NS2));
    }
    /* Two nodes claiming the same hostname with different ids. */
    info_u32(&e[0], PMIX_NODEID, 0);
    info_str(&e[1], PMIX_HOSTNAME, "same");
    info_array(&info[0], PMIX_NODE_INFO_ARRAY, e, 2);
    info_u32(&e[0], PMIX_NODEID, 1);
    info_str(&e[1], PMIX_HOSTNAME, "same");
    info_array(&info[1], PMIX_NODE_INFO_ARRAY, e, 2);
    assert_int_equal(px_store_load_job(f->s, NS, info, 2), PMIX_ERR_BAD_PARAM);
    free_infos(info, 2);
    check_sample_job(f->s, NS);
    /* Bad arguments. */
    assert_int_equal(px_store_load_job(f->s, "", NULL, 0), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_store_load_job(f->s, NULL, NULL, 0), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_store_load_job(f->s, NS, NULL, 1), PMIX_ERR_BAD_PARAM);
    check_sample_job(f->s, NS);
}

/* ---- process data ---- */

static void test_put_get_scopes(void **state)
{
    fixture *f = *state;
    pmix_proc_t p = proc(NS, 3);
    put_u32(f->s, NS, 3, PMIX_LOCAL, "k.local", 1);
    put_u32(f->s, NS, 3, PMIX_REMOTE, "k.remote", 2);
    put_u32(f->s, NS, 3, PMIX_GLOBAL, "k.global", 3);
    put_u32(f->s, NS, 3, PMIX_INTERNAL, "k.internal", 4);
    put_u32(f->s, NS, 3, PMIX_SCOPE_UNDEF, "k.undef", 5);

    expect_proc_u32(f->s, NS, 3, "k.local", true, 1);
    expect_proc_none(f->s, NS, 3, "k.remote", true);
    expect_proc_u32(f->s, NS, 3, "k.global", true, 3);
    expect_proc_u32(f->s, NS, 3, "k.internal", true, 4);
    expect_proc_u32(f->s, NS, 3, "k.undef", true, 5);

    expect_proc_none(f->s, NS, 3, "k.local", false);
    expect_proc_u32(f->s, NS, 3, "k.remote", false, 2);
    expect_proc_u32(f->s, NS, 3, "k.global", false, 3);
    expect_proc_u32(f->s, NS, 3, "k.internal", false, 4);
    expect_proc_u32(f->s, NS, 3, "k.undef", false, 5);

    /* Other processes see nothing of it. */
    expect_proc_none(f->s, NS, 4, "k.global", true);
    expect_proc_none(f->s, NS2, 3, "k.global", true);
    /* Puts alone are not committed data. */
    assert_false(px_store_has_proc(f->s, &p));

    /* A later put of a key replaces it, whatever its scope was. */
    put_u32(f->s, NS, 3, PMIX_GLOBAL, "k.local", 10);
    expect_proc_u32(f->s, NS, 3, "k.local", false, 10);
    expect_proc_u32(f->s, NS, 3, "k.local", true, 10);
    put_u32(f->s, NS, 3, PMIX_GLOBAL, "k.local", 11);
    expect_proc_u32(f->s, NS, 3, "k.local", true, 11);

    /* A string value comes back as an independent copy. */
    pmix_value_t sv = val_str("hello");
    assert_int_equal(px_store_put(f->s, &p, PMIX_GLOBAL, "k.str", &sv), PMIX_SUCCESS);
    pmix_value_t *v1 = NULL, *v2 = NULL;
    assert_int_equal(px_store_get_proc(f->s, &p, "k.str", true, &v1), PMIX_SUCCESS);
    assert_int_equal(px_store_get_proc(f->s, &p, "k.str", true, &v2), PMIX_SUCCESS);
    assert_ptr_not_equal(v1->data.string, v2->data.string);
    assert_string_equal(v1->data.string, "hello");
    PMIX_VALUE_RELEASE(v1);
    PMIX_VALUE_RELEASE(v2);

    /* Bad arguments change nothing. */
    pmix_value_t x = val_u32(1);
    assert_int_equal(px_store_put(f->s, &p, 99, "k.bad", &x), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_store_put(f->s, &p, PMIX_GLOBAL, "", &x), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_store_put(f->s, &p, PMIX_GLOBAL, NULL, &x), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_store_put(f->s, &p, PMIX_GLOBAL, "k.bad", NULL), PMIX_ERR_BAD_PARAM);
    pmix_proc_t q = proc("", 0);
    assert_int_equal(px_store_put(f->s, &q, PMIX_GLOBAL, "k.bad", &x), PMIX_ERR_BAD_PARAM);
    expect_proc_none(f->s, NS, 3, "k.bad", true);
}

static void test_commit_roundtrip(void **state)
{
    fixture *f = *state;
    pmix_proc_t p = proc(NS, 1);
    px_buf b, view;
    put_u32(f->s, NS, 1, PMIX_LOCAL, "k.local", 1);
    put_u32(f->s, NS, 1, PMIX_REMOTE, "k.remote", 2);
    put_u32(f->s, NS, 1, PMIX_GLOBAL, "k.global", 3);
    put_u32(f->s, NS, 1, PMIX_INTERNAL, "k.internal", 4);
    /* The server stored something internal about the process itself. */
    put_u32(f->t, NS, 1, PMIX_INTERNAL, "k.server", 9);
    assert_false(px_store_has_proc(f->t, &p));

    px_buf_init(&b);
    px_store_pack_commit(f->s, &p, &b);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_commit(f->t, &p, &view), PMIX_SUCCESS);
    assert_int_equal(px_buf_left(&view), 0);
    px_buf_fini(&b);

    assert_true(px_store_has_proc(f->t, &p));
    expect_proc_u32(f->t, NS, 1, "k.local", true, 1);
    expect_proc_none(f->t, NS, 1, "k.local", false);
    expect_proc_u32(f->t, NS, 1, "k.remote", false, 2);
    expect_proc_none(f->t, NS, 1, "k.remote", true);
    expect_proc_u32(f->t, NS, 1, "k.global", true, 3);
    expect_proc_u32(f->t, NS, 1, "k.global", false, 3);
    expect_proc_none(f->t, NS, 1, "k.internal", true); /* never packed */
    expect_proc_u32(f->t, NS, 1, "k.server", true, 9);

    /* A second commit replaces the first; internal data stays. */
    px_store_drop_job(f->s, NS);
    put_u32(f->s, NS, 1, PMIX_GLOBAL, "k.second", 5);
    px_buf_init(&b);
    px_store_pack_commit(f->s, &p, &b);
    /* Every truncation fails and changes nothing. */
    for (size_t len = 0; len < b.size; len++) {
        px_buf_view(&view, b.data, len);
        assert_int_not_equal(px_store_unpack_commit(f->t, &p, &view), PMIX_SUCCESS);
        assert_int_equal(view.pos, 0);
        expect_proc_u32(f->t, NS, 1, "k.global", true, 3);
        expect_proc_none(f->t, NS, 1, "k.second", true);
    }
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_commit(f->t, &p, &view), PMIX_SUCCESS);
    px_buf_fini(&b);
    expect_proc_u32(f->t, NS, 1, "k.second", true, 5);
    expect_proc_none(f->t, NS, 1, "k.global", true);
    expect_proc_none(f->t, NS, 1, "k.local", true);
    expect_proc_u32(f->t, NS, 1, "k.server", false, 9);

    /* A process with no puts commits three empty lists. */
    pmix_proc_t e = proc(NS2, 0);
    px_buf_init(&b);
    px_store_pack_commit(f->s, &e, &b);
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_commit(f->t, &e, &view), PMIX_SUCCESS);
    px_buf_fini(&b);
    assert_true(px_store_has_proc(f->t, &e));
    expect_proc_none(f->t, NS2, 0, "k.global", true);
    /* A failed commit for an unknown process leaves no trace. */
    pmix_proc_t u = proc("test.unknown", 0);
    uint8_t junk[3] = {1, 0, 0};
    px_buf_view(&view, junk, sizeof(junk));
    assert_int_not_equal(px_store_unpack_commit(f->t, &u, &view), PMIX_SUCCESS);
    assert_false(px_store_has_proc(f->t, &u));
}

/* Record of p for its own node and for others, added to the reader `t`. */
static void test_records_local_remote(void **state)
{
    fixture *f = *state;
    static counter c; /* static: see count_release */
    c = (counter){0};
    pmix_proc_t p = proc(NS, 2);
    put_u32(f->s, NS, 2, PMIX_LOCAL, "k.local", 1);
    put_u32(f->s, NS, 2, PMIX_REMOTE, "k.remote", 2);
    put_u32(f->s, NS, 2, PMIX_GLOBAL, "k.global", 3);
    put_u32(f->s, NS, 2, PMIX_INTERNAL, "k.internal", 4);

    for (int local = 1; local >= 0; local--) {
        px_store *t = px_store_create();
        assert_non_null(t);
        px_buf b;
        px_buf_init(&b);
        px_store_pack_record(f->s, &p, local, &b);
        assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
        /* The header: nspace, rank, then the kv-list length. */
        px_buf view;
        char ns[PMIX_MAX_NSLEN + 1];
        uint32_t rank, nbytes, count;
        px_buf_view(&view, b.data, b.size);
        assert_int_equal(px_unpack_strbuf(&view, ns, sizeof(ns)), PMIX_SUCCESS);
        assert_string_equal(ns, NS);
        assert_int_equal(px_unpack_u32(&view, &rank), PMIX_SUCCESS);
        assert_int_equal(rank, 2);
        assert_int_equal(px_unpack_u32(&view, &nbytes), PMIX_SUCCESS);
        assert_int_equal(nbytes, px_buf_left(&view));
        assert_int_equal(px_unpack_u32(&view, &count), PMIX_SUCCESS);
        assert_int_equal(count, 2);

        px_blob *blob = blob_from(&b, &c);
        assert_int_equal(px_store_add_blob(t, blob), PMIX_SUCCESS);
        px_blob_unref(blob);
        assert_true(px_store_has_proc(t, &p));
        /* A record is already cut for its readers: reader_local is moot. */
        for (int rl = 0; rl < 2; rl++) {
            expect_proc_u32(t, NS, 2, "k.global", rl, 3);
            expect_proc_none(t, NS, 2, "k.internal", rl);
            if (local) {
                expect_proc_u32(t, NS, 2, "k.local", rl, 1);
                expect_proc_none(t, NS, 2, "k.remote", rl);
            } else {
                expect_proc_u32(t, NS, 2, "k.remote", rl, 2);
                expect_proc_none(t, NS, 2, "k.local", rl);
            }
        }
        px_store_destroy(t);
    }
    assert_int_equal(c.released, 2);

    /* A process without data gets an empty record. */
    pmix_proc_t none = proc(NS, 7);
    px_buf b;
    px_buf_init(&b);
    px_store_pack_record(f->s, &none, false, &b);
    px_blob *blob = blob_from(&b, &c);
    assert_int_equal(px_store_add_blob(f->t, blob), PMIX_SUCCESS);
    px_blob_unref(blob);
    assert_true(px_store_has_proc(f->t, &none));
    expect_proc_none(f->t, NS, 7, "k.global", true);
}

static void test_record_no_duplicates(void **state)
{
    fixture *f = *state;
    static counter c; /* static: see count_release */
    c = (counter){0};
    pmix_proc_t p = proc(NS, 0);
    /* A commit from elsewhere may hold a key in LOCAL and GLOBAL at once.
     * A server keeps commits encoded and copies their entries into records
     * as they are, so the record may carry the key twice: the reader
     * scope's entry comes first, and a lookup takes the first match. */
    px_buf b, view;
    pmix_value_t one = val_u32(1), two = val_u32(2);
    px_buf_init(&b);
    px_pack_u32(&b, 1); /* LOCAL */
    px_pack_str(&b, "k.dup");
    px_pack_value(&b, &one);
    px_pack_u32(&b, 0); /* REMOTE */
    px_pack_u32(&b, 1); /* GLOBAL */
    px_pack_str(&b, "k.dup");
    px_pack_value(&b, &two);
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_commit(f->s, &p, &view), PMIX_SUCCESS);
    px_buf_fini(&b);
    expect_proc_u32(f->s, NS, 0, "k.dup", true, 1);
    expect_proc_u32(f->s, NS, 0, "k.dup", false, 2);

    px_buf_init(&b);
    px_store_pack_record(f->s, &p, true, &b);
    px_buf_view(&view, b.data, b.size);
    char ns[PMIX_MAX_NSLEN + 1];
    uint32_t u = 0, count = 0;
    assert_int_equal(px_unpack_strbuf(&view, ns, sizeof(ns)), PMIX_SUCCESS);
    assert_int_equal(px_unpack_u32(&view, &u), PMIX_SUCCESS);
    assert_int_equal(px_unpack_u32(&view, &u), PMIX_SUCCESS);
    assert_int_equal(px_unpack_u32(&view, &count), PMIX_SUCCESS);
    assert_true(count == 1 || count == 2);
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t first;
    assert_int_equal(px_unpack_strbuf(&view, key, sizeof(key)), PMIX_SUCCESS);
    assert_string_equal(key, "k.dup");
    assert_int_equal(px_unpack_value(&view, &first), PMIX_SUCCESS);
    assert_int_equal(first.data.uint32, 1); /* the reader scope's value first */
    PMIx_Value_destruct(&first);
    px_blob *blob = blob_from(&b, &c);
    assert_int_equal(px_store_add_blob(f->t, blob), PMIX_SUCCESS);
    px_blob_unref(blob);
    expect_proc_u32(f->t, NS, 0, "k.dup", false, 1);
}

static void test_blobs_replace_and_refcount(void **state)
{
    fixture *f = *state;
    static counter c1, c2, c3, c0; /* static: see count_release */
    c1 = c2 = c3 = c0 = (counter){0};
    px_buf b;

    /* blob1: ranks 0, 1, 2 with value 1; rank 1 twice (the later wins). */
    px_buf_init(&b);
    pack_record_u32(&b, NS, 0, "k", 1);
    pack_record_u32(&b, NS, 1, "k", 100);
    pack_record_u32(&b, NS, 2, "k", 1);
    pack_record_u32(&b, NS, 1, "k", 1);
    px_blob *blob1 = blob_from(&b, &c1);
    assert_int_equal(px_store_add_blob(f->s, blob1), PMIX_SUCCESS);
    assert_int_equal(blob1->refs, 1 + 3);
    expect_proc_u32(f->s, NS, 0, "k", true, 1);
    expect_proc_u32(f->s, NS, 1, "k", false, 1);
    expect_proc_u32(f->s, NS, 2, "k", true, 1);
    expect_proc_none(f->s, NS, 0, "other", true);
    expect_proc_none(f->s, NS, 3, "k", true);

    /* blob2: rank 1 (newer) and rank 3 of another namespace. */
    px_buf_init(&b);
    pack_record_u32(&b, NS, 1, "k", 2);
    pack_record_u32(&b, NS2, 3, "k", 2);
    px_blob *blob2 = blob_from(&b, &c2);
    assert_int_equal(px_store_add_blob(f->s, blob2), PMIX_SUCCESS);
    expect_proc_u32(f->s, NS, 1, "k", true, 2);
    expect_proc_u32(f->s, NS2, 3, "k", true, 2);
    expect_proc_u32(f->s, NS, 0, "k", true, 1);
    assert_int_equal(blob1->refs, 1 + 2);
    assert_int_equal(blob2->refs, 1 + 2);

    /* The caller's references go; the store keeps the blobs alive. */
    px_blob_unref(blob1);
    px_blob_unref(blob2);
    assert_int_equal(c1.released, 0);
    assert_int_equal(c2.released, 0);

    /* blob3 replaces ranks 0 and 2: blob1 is unused and released now. */
    px_buf_init(&b);
    pack_record_u32(&b, NS, 2, "k", 3);
    pack_record_u32(&b, NS, 0, "k", 3);
    px_blob *blob3 = blob_from(&b, &c3);
    assert_int_equal(px_store_add_blob(f->s, blob3), PMIX_SUCCESS);
    px_blob_unref(blob3);
    assert_int_equal(c1.released, 1);
    assert_int_equal(c2.released, 0);
    assert_int_equal(c3.released, 0);
    expect_proc_u32(f->s, NS, 0, "k", true, 3);
    expect_proc_u32(f->s, NS, 1, "k", true, 2);
    expect_proc_u32(f->s, NS, 2, "k", true, 3);

    /* An empty blob is valid and holds nothing. */
    px_blob *blob0 = blob_copy("", 0, &c0);
    assert_int_equal(px_store_add_blob(f->s, blob0), PMIX_SUCCESS);
    assert_int_equal(blob0->refs, 1);
    px_blob_unref(blob0);
    assert_int_equal(c0.released, 1);

    /* Own puts come before records. */
    put_u32(f->s, NS, 1, PMIX_GLOBAL, "k", 50);
    expect_proc_u32(f->s, NS, 1, "k", true, 50);

    /* The rest goes exactly when the store does. */
    px_store_destroy(f->s);
    f->s = NULL;
    assert_int_equal(c1.released, 1);
    assert_int_equal(c2.released, 1);
    assert_int_equal(c3.released, 1);
}

static void test_blob_create_release(void **state)
{
    (void)state;
    static counter c; /* static: see count_release */
    c = (counter){0};
    px_blob *b = blob_copy("abc", 3, &c);
    assert_int_equal(b->refs, 1);
    assert_ptr_equal(px_blob_ref(b), b);
    px_blob_unref(b);
    assert_int_equal(c.released, 0);
    px_blob_unref(b);
    assert_int_equal(c.released, 1);
    px_blob_unref(NULL);
    assert_null(px_blob_ref(NULL));
    /* A NULL release frees the data with free(). */
    char *data = strdup("xyz");
    b = px_blob_create(data, 3, NULL, NULL);
    assert_non_null(b);
    px_blob_unref(b);
}

/* Record boundaries of a blob, to tell valid truncations from invalid. */
static bool is_boundary(const size_t *ends, size_t n, size_t len)
{
    if (len == 0) {
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        if (ends[i] == len) {
            return true;
        }
    }
    return false;
}

/* Forget NS and NS2, then hold one record: rank 0 of NS, k = 1. */
static void reset_to_rank0(px_store *s, counter *c)
{
    px_buf b;
    px_store_drop_job(s, NS);
    px_store_drop_job(s, NS2);
    px_buf_init(&b);
    pack_record_u32(&b, NS, 0, "k", 1);
    px_blob *blob = blob_from(&b, c);
    assert_int_equal(px_store_add_blob(s, blob), PMIX_SUCCESS);
    px_blob_unref(blob);
}

/* Records in parts of a blob (the fence page's slots): only the parts are
 * read, in any order, whatever lies between them; a part out of range, or
 * a bad record in a later part, is refused without any change. */
static void test_blob_parts(void **state)
{
    fixture *f = *state;
    static counter c, keep; /* static: see count_release */
    c = keep = (counter){0};
    px_buf b;
    size_t at1, end1, at2, end2;
    pmix_proc_t p1 = proc(NS, 1), p2 = proc(NS, 2);

    reset_to_rank0(f->s, &keep);
    px_buf_init(&b);
    px_pack_raw(&b, "garbage!", 8);
    at1 = b.size;
    pack_record_u32(&b, NS, 1, "k", 11);
    end1 = b.size;
    px_pack_raw(&b, "\xff\xff\xff\xff more garbage", 17);
    at2 = b.size;
    pack_record_u32(&b, NS, 2, "k", 12);
    pack_record_u32(&b, NS, 0, "k", 10);
    end2 = b.size;
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    px_blob *blob = blob_copy(b.data, b.size, &c);

    /* out of the blob, or a part that cuts a record: nothing changes */
    px_part out[2] = {{at2, end2 - at2}, {end2 - 4, 8}};
    assert_int_equal(px_store_add_parts(f->s, blob, out, 2, NULL), PMIX_ERR_UNPACK_FAILURE);
    px_part cut[2] = {{at2, end2 - at2}, {at1, end1 - at1 - 1}};
    assert_int_equal(px_store_add_parts(f->s, blob, cut, 2, NULL), PMIX_ERR_UNPACK_FAILURE);
    assert_int_equal(blob->refs, 1);
    expect_proc_u32(f->s, NS, 0, "k", true, 1);
    assert_false(px_store_has_proc(f->s, &p1));
    assert_false(px_store_has_proc(f->s, &p2));

    /* the later part first, one empty part: three records */
    px_part good[3] = {{at2, end2 - at2}, {0, 0}, {at1, end1 - at1}};
    assert_int_equal(px_store_add_parts(f->s, blob, good, 3, NULL), PMIX_SUCCESS);
    assert_int_equal(blob->refs, 4);
    expect_proc_u32(f->s, NS, 0, "k", true, 10);
    expect_proc_u32(f->s, NS, 1, "k", true, 11);
    expect_proc_u32(f->s, NS, 2, "k", true, 12);
    px_blob_unref(blob);
    px_buf_fini(&b);
    px_store_drop_job(f->s, NS);
    assert_int_equal(c.released, 1);
}

/* Slots (slots_ns given): part i must hold exactly one record, process i's
 * of that namespace; anything else is refused and changes nothing. */
static void test_blob_slots(void **state)
{
    fixture *f = *state;
    static counter c, keep; /* static: see count_release */
    c = keep = (counter){0};
    px_buf b;
    size_t at[4];
    pmix_proc_t p1 = proc(NS, 1);

    reset_to_rank0(f->s, &keep);
    px_buf_init(&b);
    at[0] = b.size;
    pack_record_u32(&b, NS, 1, "k", 21);
    at[1] = b.size;
    pack_record_u32(&b, NS, 0, "k", 20);
    at[2] = b.size;
    pack_record_u32(&b, NS2, 1, "k", 22);
    at[3] = b.size;
    px_blob *blob = blob_from(&b, &c);
    const px_part r0 = {at[1], at[2] - at[1]}, r1 = {at[0], at[1] - at[0]},
                  other = {at[2], at[3] - at[2]}, both = {at[0], at[2] - at[0]}, none = {0, 0};
    const px_part bad[][2] = {
        {r1, r0},     /* each in the other's slot */
        {r0, r0},     /* rank 0 twice, rank 1 missing */
        {r0, other},  /* slot 1 of another namespace */
        {both, none}, /* two records in one slot, none in the other */
        {r0, none},   /* a slot without a record */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(px_store_add_parts(f->s, blob, bad[i], 2, NS), PMIX_ERR_UNPACK_FAILURE);
        assert_int_equal(blob->refs, 1);
        expect_proc_u32(f->s, NS, 0, "k", true, 1);
        assert_false(px_store_has_proc(f->s, &p1));
    }
    /* without slots_ns the same parts are plain records */
    assert_int_equal(px_store_add_parts(f->s, blob, bad[0], 2, NULL), PMIX_SUCCESS);
    reset_to_rank0(f->s, &keep);
    const px_part good[2] = {r0, r1};
    assert_int_equal(px_store_add_parts(f->s, blob, good, 2, NS), PMIX_SUCCESS);
    expect_proc_u32(f->s, NS, 0, "k", true, 20);
    expect_proc_u32(f->s, NS, 1, "k", true, 21);
    px_blob_unref(blob);
    px_store_drop_job(f->s, NS);
    px_store_drop_job(f->s, NS2);
    assert_int_equal(c.released, 1);
}

/* A blob's records name their namespace where they lie; names that are
 * prefixes of each other stay apart, in any order, and a namespace the
 * store looked up last (its cache) is still told from its neighbours and
 * forgotten when dropped. */
static void test_blob_namespace_prefixes(void **state)
{
    fixture *f = *state;
    static counter c; /* static: see count_release */
    c = (counter){0};
    static const char *const names[] = {"test.jo", "test.job", "test.job2", "test.j"};
    px_buf b;

    expect_proc_none(f->s, "test.job", 0, "k", true);
    px_buf_init(&b);
    for (unsigned round = 0; round < 2; round++) {
        for (unsigned i = 0; i < 4; i++) {
            unsigned n = round ? 3 - i : i; /* the second round backwards */
            pack_record_u32(&b, names[n], round, "k", 10 * n + round);
        }
    }
    px_blob *blob = blob_from(&b, &c);
    assert_int_equal(px_store_add_blob(f->s, blob), PMIX_SUCCESS);
    px_blob_unref(blob);
    for (unsigned i = 0; i < 4; i++) {
        expect_proc_u32(f->s, names[i], 0, "k", true, 10 * i);
        expect_proc_u32(f->s, names[i], 1, "k", true, 10 * i + 1);
        expect_proc_none(f->s, names[i], 2, "k", true);
    }
    /* the last one looked up, dropped: gone, and its neighbours stay */
    expect_proc_u32(f->s, "test.job", 1, "k", true, 11);
    px_store_drop_job(f->s, "test.job");
    expect_proc_none(f->s, "test.job", 1, "k", true);
    expect_proc_u32(f->s, "test.job2", 1, "k", true, 21);
    expect_proc_u32(f->s, "test.jo", 0, "k", true, 0);
    for (unsigned i = 0; i < 4; i++) {
        px_store_drop_job(f->s, names[i]);
    }
    assert_int_equal(c.released, 1);
}

static void release_nothing(void *arg, const uint8_t *data, size_t len)
{
}

/* The page's slots lie in memory other processes can write while a reader
 * indexes them. A child process flips the record's rank (0 <-> 5) and a
 * letter of its namespace ("test.job" <-> "test.xob") as fast as it can
 * while this one adds the slot again and again: whatever it reads, an
 * addition that succeeds must index process 0 of NS, never another (each
 * field is read once; reading a field again after checking it indexed
 * the wrong process in about 1 call in 8). */
static void test_blob_slots_race(void **state)
{
    fixture *f = *state;
    static counter keep; /* static: see count_release */
    keep = (counter){0};
    px_buf b;
    pmix_proc_t p5 = proc(NS, 5), x0 = proc("test.xob", 0);

    reset_to_rank0(f->s, &keep);
    px_buf_init(&b);
    pack_record_u32(&b, NS, 0, "k", 7);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    size_t len = b.size, rank_at = 4 + strlen(NS), letter_at = 4 + 5;
    uint8_t *shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(shm != MAP_FAILED && len < 4096);
    memcpy(shm, b.data, len);
    px_buf_fini(&b);
    volatile uint8_t *stop = shm + 4095;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* gone with this process, or after 10 s, even if a check fails
         * before the flag is set */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(10);
        volatile uint8_t *v = shm;
        for (unsigned i = 0; !*stop; i++) {
            v[rank_at] = (i & 1) ? 5 : 0;
            v[letter_at] = (i & 2) ? 'x' : 'j';
        }
        _exit(0);
    }
    px_blob *blob = px_blob_create(shm, len, release_nothing, NULL);
    assert_non_null(blob);
    const px_part slot = {0, len};
    pmix_proc_t p0 = proc(NS, 0);
    for (unsigned i = 0; i < 20000; i++) {
        /* a store without the process each time, so that the addition
         * creates it, and every other time its namespace too */
        px_store_drop_job(f->s, NS);
        if (i & 1) {
            put_u32(f->s, NS, 1, PMIX_GLOBAL, "keep", 1);
        }
        if (px_store_add_parts(f->s, blob, &slot, 1, NS) == PMIX_SUCCESS) {
            assert_true(px_store_has_proc(f->s, &p0));
        }
        assert_false(px_store_has_proc(f->s, &p5));
        assert_false(px_store_has_proc(f->s, &x0));
    }
    *stop = 1;
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    /* the record as it was, left alone: it is indexed as process 0 of NS */
    shm[rank_at] = 0;
    shm[letter_at] = 'j';
    px_store_drop_job(f->s, NS);
    assert_int_equal(px_store_add_parts(f->s, blob, &slot, 1, NS), PMIX_SUCCESS);
    expect_proc_u32(f->s, NS, 0, "k", true, 7);
    px_store_drop_job(f->s, NS); /* drops the blob's references before it goes */
    px_blob_unref(blob);
    munmap(shm, 4096);
}

/* Processes are found by rank through an array below 65,536 and through
 * the table above it, and where the array could not grow; any mix of
 * ranks is found, and ranks never stored are not. */
static void test_ranks_near_and_far(void **state)
{
    fixture *f = *state;
    static const pmix_rank_t have[] = {5, 0, 63, 64, 1000, 65535, 65536, 100000, 0x7ffffffe};
    static const pmix_rank_t lack[] = {1, 62, 65, 999, 65534, 65537, 99999, 0x7fffffff};

    for (size_t round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof(have) / sizeof(have[0]); i++) {
            put_u32(f->s, NS, have[i], PMIX_GLOBAL, "r", (uint32_t)(have[i] + round));
        }
        for (size_t i = 0; i < sizeof(have) / sizeof(have[0]); i++) {
            expect_proc_u32(f->s, NS, have[i], "r", true, (uint32_t)(have[i] + round));
        }
        for (size_t i = 0; i < sizeof(lack) / sizeof(lack[0]); i++) {
            pmix_proc_t p = proc(NS, lack[i]);
            assert_false(px_store_has_proc(f->s, &p));
            /* a put that fails creates the process and removes it again */
            pmix_value_t bad = {.type = (pmix_data_type_t)0x7fff};
            assert_int_not_equal(px_store_put(f->s, &p, PMIX_GLOBAL, "r", &bad), PMIX_SUCCESS);
            assert_false(px_store_has_proc(f->s, &p));
        }
        px_store_drop_job(f->s, NS); /* and again, from nothing */
        pmix_proc_t p0 = proc(NS, 0);
        assert_false(px_store_has_proc(f->s, &p0));
    }
}

/* Adding a blob whose records name known and unknown processes, with
 * each of its allocations failing in turn: every failure is
 * PMIX_ERR_NOMEM and leaves the store as it was (no process, no namespace
 * created; under ASan, no use of what the undo freed); then it succeeds. */
static void test_blob_alloc_failures(void **state)
{
    fixture *f = *state;
    static counter c, keep; /* static: see count_release */
    c = keep = (counter){0};
    px_buf b;
    pmix_proc_t fresh[] = {proc(NS, 1), proc(NS, 2), proc("test.new", 0), proc("test.new", 1),
                           proc(NS2, 3)};
    const size_t nfresh = sizeof(fresh) / sizeof(fresh[0]);

    reset_to_rank0(f->s, &keep);
    px_buf_init(&b);
    pack_record_u32(&b, NS, 0, "k", 10);
    pack_record_u32(&b, NS, 1, "k", 11);
    pack_record_u32(&b, "test.new", 0, "k", 20);
    pack_record_u32(&b, NS, 2, "k", 12);
    pack_record_u32(&b, "test.new", 1, "k", 21);
    pack_record_u32(&b, NS2, 3, "k", 33);
    px_blob *blob = blob_from(&b, &c);
    long k;
    pmix_status_t rc = PMIX_ERR_NOMEM;
    for (k = 0; k < 1000 && rc != PMIX_SUCCESS; k++) {
        fail_after = k;
        rc = px_store_add_blob(f->s, blob);
        fail_after = -1;
        if (rc == PMIX_SUCCESS) {
            break;
        }
        assert_int_equal(rc, PMIX_ERR_NOMEM);
        assert_int_equal(blob->refs, 1);
        expect_proc_u32(f->s, NS, 0, "k", true, 1);
        for (size_t i = 0; i < nfresh; i++) {
            assert_false(px_store_has_proc(f->s, &fresh[i]));
        }
    }
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_true(k > 2); /* the sweep went through several allocations */
    expect_proc_u32(f->s, NS, 0, "k", true, 10);
    expect_proc_u32(f->s, "test.new", 1, "k", true, 21);
    expect_proc_u32(f->s, NS2, 3, "k", true, 33);
    px_blob_unref(blob);
    px_store_drop_job(f->s, NS);
    px_store_drop_job(f->s, NS2);
    px_store_drop_job(f->s, "test.new");
    assert_int_equal(c.released, 1);
}

/* The by-rank array is bounded by what the store holds, not by the ranks'
 * values: a client holding its own rank and a far neighbour's keeps the
 * first 64 slots (pmixsim holds 65,536 clients in one process; 512 KiB
 * each made its memory quadratic). Ranks that arrive in order, as a
 * one-node job's do, are all found through the array; ranks that arrive
 * in any order are all found, and the array covers those below the point
 * where it became dense. */
static void test_rank_array_bounded(void **state)
{
    fixture *f = *state;
    static const pmix_rank_t far[] = {1000, 65535, 40000, 0, 65534};
    const px_ns *ns;

    for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
        put_u32(f->s, NS, far[i], PMIX_GLOBAL, "r", far[i]);
    }
    ns = px_store_ns(f->s, NS);
    assert_non_null(ns);
    assert_true(ns->nby_rank <= PX_BY_RANK_MIN);
    for (size_t i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
        expect_proc_u32(f->s, NS, far[i], "r", true, far[i]);
    }
    px_store_drop_job(f->s, NS);

    /* in order: every rank through the array, two slots per rank at most */
    for (pmix_rank_t r = 0; r < 5000; r++) {
        put_u32(f->s, NS, r, PMIX_GLOBAL, "r", r);
        ns = px_store_ns(f->s, NS);
        assert_true(ns->nby_rank > r);
        assert_true(ns->nby_rank <= PX_BY_RANK_MIN || ns->nby_rank <= 2 * (r + 1));
    }
    for (pmix_rank_t r = 0; r < 5000; r++) {
        assert_ptr_equal(ns->by_rank[r], px_htab_get(&ns->procs, NULL, r));
    }
    px_store_drop_job(f->s, NS);

    /* backwards: found, and the array never sparser than the rule */
    for (pmix_rank_t r = 5000; r-- > 0;) {
        put_u32(f->s, NS, r, PMIX_GLOBAL, "r", r + 1);
        ns = px_store_ns(f->s, NS);
        assert_true(ns->nby_rank <= PX_BY_RANK_MIN || ns->nby_rank <= 2 * ns->procs.n);
    }
    for (pmix_rank_t r = 0; r < 5000; r++) {
        expect_proc_u32(f->s, NS, r, "r", true, r + 1);
        if (r < ns->nby_rank) {
            assert_ptr_equal(ns->by_rank[r], px_htab_get(&ns->procs, NULL, r));
        }
    }
}

static void test_blob_malformed(void **state)
{
    fixture *f = *state;
    static counter c, keep; /* static: see count_release */
    c = keep = (counter){0};
    px_buf b;
    size_t ends[3];

    /* The store already holds a record for rank 0. */
    reset_to_rank0(f->s, &keep);

    px_buf_init(&b);
    pack_record_u32(&b, NS, 0, "k", 2);
    ends[0] = b.size;
    pack_record_u32(&b, NS, 1, "k", 2);
    ends[1] = b.size;
    pack_record_u32(&b, NS2, 2, "k", 2);
    ends[2] = b.size;
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    const uint8_t *good = b.data;
    size_t size = b.size;
    pmix_proc_t p1 = proc(NS, 1), p2 = proc(NS2, 2);

    /* Every truncation that cuts a record is refused without change. */
    int refused = 0;
    for (size_t len = 1; len < size; len++) {
        if (is_boundary(ends, 3, len)) {
            continue;
        }
        px_blob *blob = blob_copy(good, len, &c);
        assert_int_equal(px_store_add_blob(f->s, blob), PMIX_ERR_UNPACK_FAILURE);
        assert_int_equal(blob->refs, 1);
        px_blob_unref(blob);
        refused++;
        expect_proc_u32(f->s, NS, 0, "k", true, 1);
        assert_false(px_store_has_proc(f->s, &p1));
        assert_false(px_store_has_proc(f->s, &p2));
    }
    assert_int_equal(c.released, refused);

    /* Forged lengths: every length field of the second record, and the
     * namespace length of the first, set to values around the truth. */
    size_t nslen_at = 0;
    size_t rec2 = ends[0];
    size_t nbytes_at = rec2 + 4 + strlen(NS) + 4;
    size_t count_at = nbytes_at + 4;
    const uint32_t forged[] = {0, 1, 3, 5, 0x7fffffff, 0xfffffffe, 0xffffffff};
    size_t at[] = {nslen_at, nbytes_at, count_at};
    uint8_t *bad = malloc(size);
    assert_non_null(bad);
    for (size_t a = 0; a < sizeof(at) / sizeof(at[0]); a++) {
        for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
            memcpy(bad, good, size);
            uint32_t v = forged[i];
            uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
            memcpy(bad + at[a], le, 4);
            px_blob *blob = blob_copy(bad, size, &c);
            pmix_status_t rc = px_store_add_blob(f->s, blob);
            px_blob_unref(blob);
            if (at[a] == count_at && v <= 1) {
                /* The count is only checked against what the length can
                 * hold: 0 or 1 entries index, and a lookup decides (0
                 * finds nothing, 1 is the truth). */
                assert_int_equal(rc, PMIX_SUCCESS);
                if (v == 0) {
                    expect_proc_none(f->s, NS, 1, "k", true);
                } else {
                    expect_proc_u32(f->s, NS, 1, "k", true, 2);
                }
                reset_to_rank0(f->s, &keep);
                continue;
            }
            assert_int_equal(rc, PMIX_ERR_UNPACK_FAILURE);
            expect_proc_u32(f->s, NS, 0, "k", true, 1);
            assert_false(px_store_has_proc(f->s, &p1));
            assert_false(px_store_has_proc(f->s, &p2));
        }
    }
    free(bad);

    /* A valid header over garbage contents indexes; the lookup fails
     * cleanly. */
    px_buf g;
    px_buf_init(&g);
    px_pack_str(&g, NS);
    px_pack_u32(&g, 5);
    px_pack_u32(&g, 12);
    px_pack_u32(&g, 1);
    px_pack_u32(&g, 1);
    px_pack_raw(&g, "kzzz", 4); /* key "k", then a bogus value */
    px_blob *gb = blob_from(&g, &c);
    assert_int_equal(px_store_add_blob(f->s, gb), PMIX_SUCCESS);
    px_blob_unref(gb);
    pmix_proc_t p5 = proc(NS, 5);
    pmix_value_t *v = NULL;
    pmix_status_t rc = px_store_get_proc(f->s, &p5, "k", true, &v);
    assert_int_not_equal(rc, PMIX_SUCCESS);
    assert_int_not_equal(rc, PMIX_ERR_NOT_FOUND);
    assert_null(v);
    px_buf_fini(&b);

    /* A namespace with a NUL inside (the store's NS and more after the
     * NUL, or a NUL first) names no namespace: refused, nothing changes,
     * NS's process 6 is not created. */
    static const char *const nul_names[] = {NS "\0x", "\0" NS};
    for (size_t i = 0; i < 2; i++) {
        px_buf nb;
        px_buf_init(&nb);
        pack_record_u32(&nb, NS, 0, "k", 3); /* a good record first */
        px_pack_u32(&nb, (uint32_t)strlen(NS) + 2);
        px_pack_raw(&nb, nul_names[i], strlen(NS) + 2);
        px_pack_u32(&nb, 6);
        px_pack_u32(&nb, 4);
        px_pack_u32(&nb, 0); /* an empty kv-list */
        px_blob *nbl = blob_from(&nb, &c);
        assert_int_equal(px_store_add_blob(f->s, nbl), PMIX_ERR_UNPACK_FAILURE);
        px_blob_unref(nbl);
        pmix_proc_t p6 = proc(NS, 6);
        assert_false(px_store_has_proc(f->s, &p6));
        expect_proc_u32(f->s, NS, 0, "k", true, 1);
    }
}

static void test_has_proc(void **state)
{
    fixture *f = *state;
    static counter c; /* static: see count_release */
    c = (counter){0};
    pmix_proc_t p = proc(NS, 0), q = proc(NS, 1);
    assert_false(px_store_has_proc(f->s, &p));
    put_u32(f->s, NS, 0, PMIX_INTERNAL, "k", 1);
    assert_false(px_store_has_proc(f->s, &p));
    load_sample_job(f->s, NS);
    assert_false(px_store_has_proc(f->s, &p));
    px_buf b;
    px_buf_init(&b);
    pack_record_u32(&b, NS, 1, "k", 1);
    px_blob *blob = blob_from(&b, &c);
    assert_int_equal(px_store_add_blob(f->s, blob), PMIX_SUCCESS);
    px_blob_unref(blob);
    assert_true(px_store_has_proc(f->s, &q));
    assert_false(px_store_has_proc(f->s, &p));
}

/* Many ranks and many records: correctness at a size where a linear scan
 * would show (the benchmarks measure the time). */
static void test_scale(void **state)
{
    fixture *f = *state;
    enum {
        N = 10000,
        PPN = 64
    };
    pmix_info_t *info = calloc(N + N / PPN + 1, sizeof(*info));
    assert_non_null(info);
    size_t n = 0;
    pmix_info_t e[3];
    info_u32(&info[n++], PMIX_JOB_SIZE, N);
    for (uint32_t r = 0; r < N; r++) {
        info_rank(&e[0], r);
        info_u32(&e[1], PMIX_NODEID, r / PPN);
        info_u32(&e[2], PMIX_LOCAL_RANK, r % PPN);
        info_array(&info[n++], PMIX_PROC_DATA, e, 3);
    }
    for (uint32_t i = 0; i < N / PPN; i++) {
        info_u32(&e[0], PMIX_NODEID, i);
        info_u32(&e[1], "test.node", i * 10);
        info_array(&info[n++], PMIX_NODE_INFO_ARRAY, e, 2);
    }
    assert_int_equal(px_store_load_job(f->s, NS, info, n), PMIX_SUCCESS);
    free_infos(info, n);
    free(info);
    for (uint32_t r = 0; r < N; r++) {
        expect_job_u32(f->s, NS, r, PMIX_LOCAL_RANK, NULL, 0, r % PPN);
        if (r / PPN < N / PPN) {
            expect_job_u32(f->s, NS, r, "test.node", NULL, 0, (r / PPN) * 10);
        }
    }
    /* The whole job survives the wire. */
    px_buf b, view;
    px_buf_init(&b);
    px_store_pack_job(f->s, NS, &b);
    px_buf_view(&view, b.data, b.size);
    assert_int_equal(px_store_unpack_job(f->t, &view), PMIX_SUCCESS);
    px_buf_fini(&b);
    expect_job_u32(f->t, NS, N - 1, PMIX_LOCAL_RANK, NULL, 0, (N - 1) % PPN);

    /* 64 records of 64 KiB each in one blob. */
    static counter c; /* static: see count_release */
    c = (counter){0};
    size_t big = 64 * 1024;
    char *payload = malloc(big);
    assert_non_null(payload);
    memset(payload, 'x', big - 1);
    payload[big - 1] = '\0';
    pmix_value_t pv = val_str(payload);
    for (uint32_t r = 0; r < 64; r++) {
        pmix_proc_t p = proc(NS2, r);
        put_u32(f->s, NS2, r, PMIX_GLOBAL, "k.rank", r);
        assert_int_equal(px_store_put(f->s, &p, PMIX_GLOBAL, "k.big", &pv), PMIX_SUCCESS);
    }
    px_buf_init(&b);
    for (uint32_t r = 0; r < 64; r++) {
        pmix_proc_t p = proc(NS2, r);
        px_store_pack_record(f->s, &p, false, &b);
    }
    px_blob *blob = blob_from(&b, &c);
    assert_int_equal(px_store_add_blob(f->t, blob), PMIX_SUCCESS);
    px_blob_unref(blob);
    for (uint32_t r = 0; r < 64; r++) {
        expect_proc_u32(f->t, NS2, r, "k.rank", false, r);
    }
    pmix_proc_t last = proc(NS2, 63);
    pmix_value_t *v = NULL;
    assert_int_equal(px_store_get_proc(f->t, &last, "k.big", false, &v), PMIX_SUCCESS);
    assert_int_equal(strlen(v->data.string), big - 1);
    PMIX_VALUE_RELEASE(v);
    free(payload);
    px_store_drop_job(f->t, NS2);
    assert_int_equal(c.released, 1);
}

/* The hash table under random insertions and removals, checked against a
 * plain array after every step (removal shifts entries back: a bug there
 * loses keys that collided). */
static void test_htab_random(void **state)
{
    (void)state;
    enum {
        K = 512,
        STEPS = 40000
    };
    static const char *const words[] = {"alpha", "beta", "gamma", "delta"};
    px_htab t;
    int items[K];
    bool in[K] = {false};
    size_t n = 0;
    uint32_t x = 12345;
    px_htab_init(&t);
    for (int step = 0; step < STEPS; step++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        uint32_t k = x % K;
        /* Keys: (word, k / 4) for a quarter of them, (NULL, k) otherwise;
         * distinct k give distinct keys. */
        const char *str = k % 4 == 0 ? words[(k / 4) % 4] : NULL;
        uint32_t num = k % 4 == 0 ? k / 16 : k;
        if (x & 0x10000) {
            void *old = &items[0];
            assert_true(px_htab_put(&t, str, num, &items[k], &old));
            assert_ptr_equal(old, in[k] ? &items[k] : NULL);
            n += !in[k];
            in[k] = true;
        } else {
            assert_ptr_equal(px_htab_remove(&t, str, num), in[k] ? &items[k] : NULL);
            n -= in[k];
            in[k] = false;
        }
        assert_int_equal(t.n, n);
        if (step % 997 == 0) {
            for (uint32_t j = 0; j < K; j++) {
                const char *js = j % 4 == 0 ? words[(j / 4) % 4] : NULL;
                uint32_t jn = j % 4 == 0 ? j / 16 : j;
                assert_ptr_equal(px_htab_get(&t, js, jn), in[j] ? &items[j] : NULL);
            }
            size_t seen = 0;
            for (size_t i = 0; px_htab_next(&t, &i) != NULL;) {
                seen++;
            }
            assert_int_equal(seen, n);
        }
    }
    assert_true(px_htab_reserve(&t, 1000));
    px_htab_fini(&t);
    assert_null(px_htab_get(&t, NULL, 1));
    assert_null(px_htab_remove(&t, NULL, 1));
}

/* String keys of every length around the hash's 8-byte words: keys that
 * differ only in their last byte, only in their length (a prefix and
 * the key), or are empty and NULL are all different keys; and names like
 * a launcher's namespaces spread over the table (its longest run of full
 * slots stays short). */
static void test_htab_string_keys(void **state)
{
    (void)state;
    enum {
        LEN = 40,
        NAMES = 1024
    };
    static char keys[LEN + 1][2][LEN + 1], names[NAMES][32];
    static int items[LEN + 1][2], named[NAMES], nul;
    px_htab t;
    px_htab_init(&t);
    for (int len = 0; len <= LEN; len++) {
        for (int v = 0; v < 2; v++) {
            memset(keys[len][v], 'k', (size_t)len);
            keys[len][v][len] = '\0';
            if (len > 0) {
                keys[len][v][len - 1] = v != 0 ? 'z' : 'k';
            }
            if (len > 0 || v == 0) {
                assert_true(px_htab_put(&t, keys[len][v], 7, &items[len][v], NULL));
            }
        }
    }
    assert_true(px_htab_put(&t, NULL, 7, &nul, NULL));
    for (int len = 0; len <= LEN; len++) {
        for (int v = 0; v < 2; v++) {
            char probe[LEN + 1];
            memcpy(probe, keys[len][v], (size_t)len + 1); /* equal, not the same pointer */
            assert_ptr_equal(px_htab_get(&t, probe, 7),
                             len > 0 || v == 0 ? &items[len][v] : &items[0][0]);
            assert_null(px_htab_get(&t, probe, 8));
        }
    }
    assert_ptr_equal(px_htab_get(&t, NULL, 7), &nul);
    px_htab_fini(&t);

    for (int i = 0; i < NAMES; i++) {
        snprintf(names[i], sizeof(names[i]), "pmixrun.%d.%d", 4000 + i % 7, i);
        assert_true(px_htab_put(&t, names[i], 0, &named[i], NULL));
    }
    size_t run = 0, longest = 0;
    for (size_t i = 0; i < 2 * t.cap; i++) { /* twice round: a run may wrap */
        run = t.slots[i % t.cap].val != NULL ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    for (int i = 0; i < NAMES; i++) {
        assert_ptr_equal(px_htab_get(&t, names[i], 0), &named[i]);
    }
    assert_true(longest < 64);
    px_htab_fini(&t);
}

/* ---- groups ---- */

/* Node `node` of a job of `nodes` x `ppn` ranks (by node, or round-robin
 * with `rr`): each puts "k" = rank + 1000 * `gen` (REMOTE) and "l" =
 * rank (LOCAL), commits into the writer store `w`, and packs its groups
 * for remote readers into `out`. */
static void node_groups(px_store *w, uint32_t node, uint32_t nodes, uint32_t ppn, bool rr,
                        uint32_t gen, px_buf *out)
{
    pmix_proc_t procs[8];
    const pmix_proc_t *ptrs[8];
    assert_true(ppn <= 8);
    for (uint32_t i = 0; i < ppn; i++) {
        /* in descending order: packing sorts */
        pmix_rank_t r = rr ? (ppn - 1 - i) * nodes + node : node * ppn + (ppn - 1 - i);
        put_u32(w, NS, r, PMIX_REMOTE, "k", r + 1000 * gen);
        put_u32(w, NS, r, PMIX_LOCAL, "l", r);
        procs[i] = proc(NS, r);
        ptrs[i] = &procs[i];
    }
    px_store_pack_groups(w, ptrs, ppn, false, out);
    assert_int_equal(px_buf_status(out), PMIX_SUCCESS);
}

static void test_groups_lookup(void **state)
{
    fixture *f = *state;
    for (int rr = 0; rr < 2; rr++) {
        px_store *t = px_store_create();
        px_buf all;
        static counter c; /* static: see count_release */
        c = (counter){0};
        size_t ngroups = 0;
        px_buf_init(&all);
        for (uint32_t node = 0; node < 5; node++)
            node_groups(f->s, node, 5, 3, rr, 1, &all);
        px_blob *blob = blob_from(&all, &c);
        assert_int_equal(px_store_check_groups(blob->data, blob->len, &ngroups), PMIX_SUCCESS);
        assert_int_equal(ngroups, 5);
        assert_int_equal(px_store_add_groups(t, blob), PMIX_SUCCESS);
        px_blob_unref(blob);
        assert_int_equal(c.released, 0); /* the store holds it */
        for (pmix_rank_t r = 0; r < 15; r++) {
            pmix_proc_t p = proc(NS, r);
            expect_proc_u32(t, NS, r, "k", false, r + 1000);
            expect_proc_none(t, NS, r, "l", false); /* cut for remote readers */
            assert_true(px_store_has_proc(t, &p));
        }
        expect_proc_none(t, NS, 15, "k", false);
        expect_proc_none(t, NS2, 0, "k", false);
        pmix_value_t *v = NULL;
        assert_int_equal(px_store_get_any(t, NS, "k", &v), PMIX_SUCCESS);
        PMIX_VALUE_RELEASE(v);
        px_store_destroy(t);
        assert_int_equal(c.released, 1);
    }
}

static void test_groups_newest_wins(void **state)
{
    fixture *f = *state;
    static counter c1, c2, c3; /* static: see count_release */
    c1 = c2 = c3 = (counter){0};
    px_buf b;

    /* a fence: two nodes' groups */
    px_buf_init(&b);
    node_groups(f->s, 0, 2, 2, false, 1, &b);
    node_groups(f->s, 1, 2, 2, false, 1, &b);
    px_blob *g1 = blob_from(&b, &c1);
    assert_int_equal(px_store_add_groups(f->t, g1), PMIX_SUCCESS);
    px_blob_unref(g1);
    /* then the reader's own node's records, cut for local readers */
    px_buf_init(&b);
    pmix_proc_t p0 = proc(NS, 0);
    px_store_pack_record(f->s, &p0, true, &b);
    px_blob *local = blob_from(&b, &c2);
    assert_int_equal(px_store_add_blob(f->t, local), PMIX_SUCCESS);
    px_blob_unref(local);
    expect_proc_u32(f->t, NS, 0, "l", true, 0); /* the local cut wins */
    expect_proc_none(f->t, NS, 1, "l", true);   /* rank 1: only the remote cut */
    expect_proc_u32(f->t, NS, 3, "k", false, 1003);

    /* the same fence again, newer values: replaces the older group blob
     * (released at once) and wins over the older local record */
    px_buf_init(&b);
    node_groups(f->s, 0, 2, 2, false, 2, &b);
    node_groups(f->s, 1, 2, 2, false, 2, &b);
    px_blob *g2 = blob_from(&b, &c3);
    assert_int_equal(px_store_add_groups(f->t, g2), PMIX_SUCCESS);
    px_blob_unref(g2);
    assert_int_equal(c1.released, 1);
    expect_proc_u32(f->t, NS, 0, "k", false, 2000);
    expect_proc_none(f->t, NS, 0, "l", true);
    expect_proc_u32(f->t, NS, 3, "k", false, 2003);

    /* a namespace dropped after its group blob came: not seen again */
    px_store_drop_job(f->t, NS);
    expect_proc_none(f->t, NS, 3, "k", false);
    assert_int_equal(c3.released, 0); /* still held: dropped lazily */
}

static void test_groups_malformed(void **state)
{
    fixture *f = *state;
    px_buf b;
    static counter c; /* static: see count_release */
    c = (counter){0};
    size_t len;

    px_buf_init(&b);
    node_groups(f->s, 0, 1, 2, false, 1, &b);
    assert_int_equal(px_buf_status(&b), PMIX_SUCCESS);
    uint8_t *good = px_buf_steal(&b, &len);

    /* every truncation and a bad magic: refused, nothing changes */
    for (size_t cut = 1; cut < len; cut++) {
        px_blob *bl = blob_copy(good, cut, &c);
        assert_int_equal(px_store_add_groups(f->t, bl), PMIX_ERR_UNPACK_FAILURE);
        px_blob_unref(bl);
    }
    uint8_t *bad = malloc(len);
    assert_non_null(bad);
    memcpy(bad, good, len);
    bad[0] ^= 0xff;
    px_blob *bl = blob_copy(bad, len, &c);
    assert_int_equal(px_store_add_groups(f->t, bl), PMIX_ERR_UNPACK_FAILURE);
    px_blob_unref(bl);
    expect_proc_none(f->t, NS, 0, "k", false);

    /* an index pointing at the wrong record: the lookup fails, reads
     * nothing outside, and the other rank is still found. The header is
     * magic, nspace (u32 len + bytes), nrec, nbytes, ranks, offsets. */
    memcpy(bad, good, len);
    size_t offs = 4 + 4 + strlen(NS) + 4 + 4 + 2 * 4;
    uint8_t o1[4];
    memcpy(o1, bad + offs + 4, 4); /* rank 1's offset */
    memcpy(bad + offs, o1, 4);     /* rank 0 points at rank 1's record */
    bl = blob_copy(bad, len, &c);
    assert_int_equal(px_store_add_groups(f->t, bl), PMIX_SUCCESS);
    px_blob_unref(bl);
    pmix_proc_t p0 = proc(NS, 0);
    pmix_value_t *v = NULL;
    assert_int_equal(px_store_get_proc(f->t, &p0, "k", false, &v), PMIX_ERR_UNPACK_FAILURE);
    assert_null(v);
    expect_proc_u32(f->t, NS, 1, "k", false, 1001);
    /* an offset past the records */
    memcpy(bad, good, len);
    memset(bad + offs, 0xff, 4);
    bl = blob_copy(bad, len, &c);
    assert_int_equal(px_store_add_groups(f->t, bl), PMIX_SUCCESS);
    px_blob_unref(bl);
    assert_int_equal(px_store_get_proc(f->t, &p0, "k", false, &v), PMIX_ERR_UNPACK_FAILURE);
    free(bad);
    free(good);
    assert_int_equal(px_store_add_groups(f->t, NULL), PMIX_ERR_BAD_PARAM);
}

static void test_null_and_bad_args(void **state)
{
    fixture *f = *state;
    px_store_destroy(NULL);
    pmix_value_t *v = NULL;
    pmix_proc_t p = proc(NS, 0);
    assert_int_equal(px_store_get_job(f->s, NS, 0, NULL, NULL, 0, &v), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_store_get_job(f->s, NULL, 0, "k", NULL, 0, &v), PMIX_ERR_NOT_FOUND);
    assert_int_equal(px_store_get_proc(f->s, &p, NULL, true, &v), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_store_get_proc(f->s, NULL, "k", true, &v), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_store_add_blob(f->s, NULL), PMIX_ERR_BAD_PARAM);
    assert_false(px_store_has_job(f->s, NULL));
    assert_false(px_store_has_proc(f->s, NULL));
    assert_null(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_job_load_and_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_identifiers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_qualified_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_arrays_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_reload_replaces, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_load_keeps_process_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_drop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_pack_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_replaced_keys, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_unpack_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_load_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_get_scopes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_local_remote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_no_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blobs_replace_and_refcount, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blob_create_release, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blob_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blob_parts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blob_slots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blob_alloc_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranks_near_and_far, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rank_array_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blob_slots_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_blob_namespace_prefixes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_has_proc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_groups_lookup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_groups_newest_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_groups_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_and_bad_args, setup, teardown),
        cmocka_unit_test(test_htab_random),
        cmocka_unit_test(test_htab_string_keys),
        cmocka_unit_test(test_qualified_key_text),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
