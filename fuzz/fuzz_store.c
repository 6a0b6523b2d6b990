/*
 * fuzz_store.c - libFuzzer target for the key/value store
 * (libpmix/src/store): job data and collected data from the input, loaded
 * and looked up.
 *
 * The input is a script (fuzz_input.h): each step is a byte that chooses
 * an operation on one store, followed by what the operation needs. The
 * bytes an operation loads are copied out of the input first (an exact
 * allocation, so ASan sees any read past them).
 *
 *   load job      an info list unpacked from the input, px_store_load_job
 *   unpack job    px_store_unpack_job of input bytes; what loads must pack
 *                 (px_store_pack_job) to bytes that load into a second
 *                 store and pack there to the same bytes
 *   blob          px_store_add_blob of input bytes
 *   parts         px_store_add_parts: input bytes cut in parts, with or
 *                 without the page's one-record-per-slot rule
 *   groups        px_store_add_groups (and px_store_check_groups)
 *   put, commit   px_store_put of an unpacked value, px_store_unpack_commit
 *   lookups       px_store_get_proc, px_store_get_any, px_store_get_job
 *                 (with node and app qualifiers)
 *   repack        a process's record (px_store_pack_record) and groups
 *                 (px_store_pack_groups) of what the store holds must be
 *                 accepted by a second store, which then answers a Get
 *                 with the same value
 *   drop          px_store_drop_job
 *
 * Namespaces and keys come mostly from small tables, so that the fuzzer
 * meets the same names again in later steps; an input byte past the
 * table's end reads a name from the input instead.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "common/px_common.h"
#include "fuzz_input.h"
#include "store/px_store.h"
#include "wire/px_wire.h"

#define MAX_STEPS 64

static const char *const nspaces[] = {"job", "job2", "x"};
static const char *const keys[] = {
    "card",           "k1",
    PMIX_JOB_SIZE,    PMIX_LOCAL_RANK,
    PMIX_NODEID,      PMIX_HOSTNAME,
    PMIX_APPNUM,      PMIX_LOCAL_SIZE,
    PMIX_RANK,        PMIX_NODE_RANK,
    PMIX_UNIV_SIZE,   PMIX_APP_SIZE,
    PMIX_LOCAL_PEERS, PMIX_FABRIC_COORDINATES,
};

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* A name of at most `cap` - 1 characters: from `table` or from the input. */
static void take_name(fuzz_in *in, const char *const *table, size_t n, char *out, size_t cap)
{
    uint8_t pick = fuzz_u8(in);
    size_t len;
    const uint8_t *p;

    if (pick < 0xf0) {
        snprintf(out, cap, "%s", table[pick % n]);
        return;
    }
    p = fuzz_blob8(in, &len);
    if (len >= cap) {
        len = cap - 1;
    }
    memcpy(out, p, len);
    out[len] = '\0';
}

static void take_proc(fuzz_in *in, pmix_proc_t *p)
{
    uint8_t r;

    memset(p, 0, sizeof(*p));
    take_name(in, nspaces, NELEMS(nspaces), p->nspace, sizeof(p->nspace));
    r = fuzz_u8(in);
    p->rank = r >= 0xfe ? (r == 0xfe ? PMIX_RANK_WILDCARD : PMIX_RANK_UNDEF) : r % 8;
}

/* A copy of the next input bytes (two-byte length in front), exactly that
 * long. */
static uint8_t *take_copy(fuzz_in *in, size_t *len)
{
    const uint8_t *p = fuzz_blob16(in, len);
    uint8_t *copy = malloc(*len > 0 ? *len : 1);

    FUZZ_CHECK(copy != NULL);
    memcpy(copy, p, *len);
    return copy;
}

static px_blob *take_blob(fuzz_in *in)
{
    size_t len;
    uint8_t *copy = take_copy(in, &len);
    px_blob *b = px_blob_create(copy, len, NULL, NULL);

    FUZZ_CHECK(b != NULL);
    return b;
}

static void release_value(pmix_value_t *v)
{
    if (v != NULL) {
        PMIx_Value_free(v, 1);
    }
}

static void step_load_job(px_store *s, fuzz_in *in)
{
    char ns[PMIX_MAX_NSLEN + 1];
    size_t len, n;
    uint8_t *bytes;
    pmix_info_t *info;
    px_buf b;

    take_name(in, nspaces, NELEMS(nspaces), ns, sizeof(ns));
    bytes = take_copy(in, &len);
    px_buf_view(&b, bytes, len);
    if (px_unpack_info(&b, &info, &n) == PMIX_SUCCESS) {
        (void)px_store_load_job(s, ns, info, n);
        PMIx_Info_free(info, n);
    }
    free(bytes);
}

/* Pack `ns` of `s` (a fresh buffer). */
static uint8_t *pack_job(const px_store *s, const char *ns, size_t *len)
{
    px_buf b;

    px_buf_init(&b);
    px_store_pack_job(s, ns, &b);
    FUZZ_CHECK(px_buf_status(&b) == PMIX_SUCCESS);
    return px_buf_steal(&b, len);
}

static void step_unpack_job(px_store *s, fuzz_in *in)
{
    size_t len, len1, len2;
    uint8_t *bytes = take_copy(in, &len), *p1, *p2;
    char ns[PMIX_MAX_NSLEN + 1];
    px_store *t;
    px_buf b;

    px_buf_view(&b, bytes, len);
    if (px_store_unpack_job(s, &b) != PMIX_SUCCESS) {
        FUZZ_CHECK(b.pos == 0);
        free(bytes);
        return;
    }
    px_buf_view(&b, bytes, len);
    FUZZ_CHECK(px_unpack_strbuf(&b, ns, sizeof(ns)) == PMIX_SUCCESS);
    FUZZ_CHECK(px_store_has_job(s, ns));
    /* what loaded packs, loads elsewhere, and packs the same again */
    p1 = pack_job(s, ns, &len1);
    t = px_store_create();
    FUZZ_CHECK(t != NULL);
    px_buf_view(&b, p1, len1);
    FUZZ_CHECK(px_store_unpack_job(t, &b) == PMIX_SUCCESS);
    FUZZ_CHECK(px_buf_left(&b) == 0);
    p2 = pack_job(t, ns, &len2);
    FUZZ_CHECK(len1 == len2 && memcmp(p1, p2, len1) == 0);
    free(p1);
    free(p2);
    px_store_destroy(t);
    free(bytes);
}

static void step_parts(px_store *s, fuzz_in *in)
{
    px_blob *blob = take_blob(in);
    px_part parts[8];
    size_t n = fuzz_u8(in) % (NELEMS(parts) + 1);
    bool slots = fuzz_u8(in) & 1;

    for (size_t i = 0; i < n; i++) {
        parts[i].off = fuzz_u16(in);
        parts[i].len = fuzz_u16(in);
    }
    (void)px_store_add_parts(s, blob, parts, n, slots ? "job" : NULL);
    px_blob_unref(blob);
}

static void step_groups(px_store *s, fuzz_in *in)
{
    px_blob *blob = take_blob(in);
    size_t ngroups;
    pmix_status_t checked = px_store_check_groups(blob->data, blob->len, &ngroups);
    pmix_status_t added = px_store_add_groups(s, blob);

    /* adding checks what the check checks */
    if (checked != PMIX_SUCCESS) {
        FUZZ_CHECK(added != PMIX_SUCCESS);
    }
    px_blob_unref(blob);
}

static void step_put(px_store *s, fuzz_in *in)
{
    pmix_proc_t p;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_scope_t scope;
    size_t len;
    uint8_t *bytes;
    pmix_value_t v;
    px_buf b;

    take_proc(in, &p);
    take_name(in, keys, NELEMS(keys), key, sizeof(key));
    scope = fuzz_u8(in) % 6;
    bytes = take_copy(in, &len);
    px_buf_view(&b, bytes, len);
    if (px_unpack_value(&b, &v) == PMIX_SUCCESS) {
        (void)px_store_put(s, &p, scope, key, &v);
        PMIx_Value_destruct(&v);
    }
    free(bytes);
}

static void step_commit(px_store *s, fuzz_in *in)
{
    pmix_proc_t p;
    size_t len;
    uint8_t *bytes;
    px_buf b;

    take_proc(in, &p);
    bytes = take_copy(in, &len);
    px_buf_view(&b, bytes, len);
    if (px_store_unpack_commit(s, &p, &b) != PMIX_SUCCESS) {
        FUZZ_CHECK(b.pos == 0);
    }
    free(bytes);
}

static void step_get(px_store *s, fuzz_in *in)
{
    pmix_proc_t p;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t *v = NULL;
    uint8_t how = fuzz_u8(in);

    take_proc(in, &p);
    take_name(in, keys, NELEMS(keys), key, sizeof(key));
    switch (how % 3) {
    case 0: (void)px_store_get_proc(s, &p, key, how & 0x80, &v); break;
    case 1: (void)px_store_get_any(s, p.nspace, key, &v); break;
    default: {
        pmix_info_t qual[2];
        size_t nqual = 0;
        uint32_t id = fuzz_u8(in) % 4;
        if (how & 0x10) {
            PMIx_Info_load(&qual[nqual++], PMIX_NODEID, &id, PMIX_UINT32);
        }
        if (how & 0x20) {
            PMIx_Info_load(&qual[nqual++], PMIX_APPNUM, &id, PMIX_UINT32);
        }
        if (how & 0x40 && nqual < 2) {
            PMIx_Info_load(&qual[nqual++], PMIX_HOSTNAME, "n0", PMIX_STRING);
        }
        (void)px_store_get_job(s, p.nspace, p.rank, key, qual, nqual, &v);
        for (size_t i = 0; i < nqual; i++) {
            PMIx_Info_destruct(&qual[i]);
        }
        break;
    }
    }
    release_value(v);
}

/* What the store holds for a process, packed as a record and as groups,
 * is valid collected data for another store, which answers the same. */
static void step_repack(px_store *s, fuzz_in *in)
{
    pmix_proc_t p;
    const pmix_proc_t *procs[1] = {&p};
    char key[PMIX_MAX_KEYLEN + 1];
    bool local = fuzz_u8(in) & 1;
    px_store *t = px_store_create();
    pmix_value_t *v1 = NULL, *v2 = NULL;
    pmix_status_t rc1, rc2;
    size_t len;
    uint8_t *bytes;
    px_blob *blob;
    px_buf b;

    FUZZ_CHECK(t != NULL);
    take_proc(in, &p);
    if (p.rank == PMIX_RANK_WILDCARD || p.rank == PMIX_RANK_UNDEF || p.nspace[0] == '\0') {
        px_store_destroy(t);
        return;
    }
    take_name(in, keys, NELEMS(keys), key, sizeof(key));
    px_buf_init(&b);
    if (fuzz_u8(in) & 1) {
        px_store_pack_groups(s, procs, 1, local, &b);
        FUZZ_CHECK(px_buf_status(&b) == PMIX_SUCCESS);
        bytes = px_buf_steal(&b, &len);
        FUZZ_CHECK(px_store_check_groups(bytes, len, NULL) == PMIX_SUCCESS);
        blob = px_blob_create(bytes, len, NULL, NULL);
        FUZZ_CHECK(blob != NULL);
        FUZZ_CHECK(px_store_add_groups(t, blob) == PMIX_SUCCESS);
    } else {
        px_store_pack_record(s, &p, local, &b);
        FUZZ_CHECK(px_buf_status(&b) == PMIX_SUCCESS);
        bytes = px_buf_steal(&b, &len);
        blob = px_blob_create(bytes, len, NULL, NULL);
        FUZZ_CHECK(blob != NULL);
        FUZZ_CHECK(px_store_add_blob(t, blob) == PMIX_SUCCESS);
    }
    px_blob_unref(blob);
    /* the reader is where the record was cut for; the copy in t has no
     * puts of its own, so what s found among its puts t finds in the record
     * unless it was INTERNAL (never packed) */
    rc2 = px_store_get_proc(t, &p, key, local, &v2);
    if (rc2 == PMIX_SUCCESS) {
        rc1 = px_store_get_proc(s, &p, key, local, &v1);
        FUZZ_CHECK(rc1 == PMIX_SUCCESS);
        if (px_value_equal(v1, v1)) {
            FUZZ_CHECK(px_value_equal(v1, v2));
        }
    }
    release_value(v1);
    release_value(v2);
    px_store_destroy(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    px_store *s = px_store_create();
    fuzz_in in;

    FUZZ_CHECK(s != NULL);
    fuzz_in_init(&in, data, size);
    for (int i = 0; i < MAX_STEPS && in.left > 0; i++) {
        switch (fuzz_u8(&in) % 11) {
        case 0: step_load_job(s, &in); break;
        case 1: step_unpack_job(s, &in); break;
        case 2: {
            px_blob *blob = take_blob(&in);
            (void)px_store_add_blob(s, blob);
            px_blob_unref(blob);
            break;
        }
        case 3: step_parts(s, &in); break;
        case 4: step_groups(s, &in); break;
        case 5: step_put(s, &in); break;
        case 6: step_commit(s, &in); break;
        case 7: step_get(s, &in); break;
        case 8: step_repack(s, &in); break;
        case 9: {
            char ns[PMIX_MAX_NSLEN + 1];
            take_name(&in, nspaces, NELEMS(nspaces), ns, sizeof(ns));
            px_store_drop_job(s, ns);
            break;
        }
        default: {
            pmix_proc_t p;
            take_proc(&in, &p);
            (void)px_store_has_proc(s, &p);
            (void)px_store_commit_len(s, &p, fuzz_u8(&in) & 1);
            break;
        }
        }
    }
    px_store_destroy(s);
    return 0;
}
