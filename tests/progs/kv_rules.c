/*
 * kv_rules - PMIx_Put, PMIx_Commit, PMIx_Get and PMIx_Store_internal for
 * non-reserved keys (Standard, "Process-Related Non-Reserved Keys" and its
 * retrieval rules, and the retrieval attributes of PMIx_Get).
 *
 * Every process runs the same steps against its neighbour(s); values encode
 * the writer's rank so a reader can tell whose data it got. Gets of data
 * that may legitimately never arrive carry PMIX_TIMEOUT, as the Standard
 * advises, so a wrong answer is reported rather than hung on.
 *
 * Modes:
 *   optional        PMIX_OPTIONAL on a peer key not yet available returns
 *                   PMIX_ERR_NOT_FOUND at once (the local cache only); once
 *                   the peer put and committed it, a plain Get (direct modex)
 *                   and a PMIx_Get_nb both find it without any collecting fence.
 *   timeout         a Get with PMIX_TIMEOUT=2 of a key the (live) peer never
 *                   puts returns PMIX_ERR_TIMEOUT after about 2 s.
 *   refresh         a peer re-puts and re-commits a key; PMIX_GET_REFRESH_CACHE
 *                   returns the new value.
 *   scopes          PMIX_LOCAL is visible to processes on the same node only,
 *   scopes_collect  PMIX_REMOTE to processes on other nodes only, PMIX_GLOBAL
 *                   to all, PMIX_INTERNAL to the writer only; the writer sees
 *                   its own local/global/internal keys. Under single-node
 *                   pmixrun every peer is local. "scopes" exchanges by direct
 *                   modex, "scopes_collect" with a PMIX_COLLECT_DATA fence.
 *   store_internal  PMIx_Store_internal data is readable by the caller (also
 *                   about a peer, including Open MPI's "pmix.loc" UINT16) and
 *                   by nobody else.
 *   missing         after a collecting fence a key the peer did not put is
 *                   PMIX_ERR_NOT_FOUND (promptly, not a timeout); so is a key
 *                   of our own we never put; a NULL proc means ourselves.
 *   late_put        a key put and committed after a collecting fence is found
 *                   by a plain Get after the next barrier: a miss in the local
 *                   cache goes to the server (only PMIX_OPTIONAL stops there).
 *   types           a value of every basic type (integers of each width, floats,
 *                   strings incl. non-ASCII and empty, byte objects with NULs,
 *                   procs, statuses, times, a data array, an envar) reads back
 *                   with the same type and value: from ourselves, by direct
 *                   modex, and from collected data.
 *   many_keys       500 keys per process survive a collecting fence; a key put
 *                   three times before the commit reads back as the last value.
 *   undef           a key unique in the namespace is found with PMIX_RANK_UNDEF
 *                   after a collecting fence (the legacy PMI style of lookup).
 *   threads         four threads Get 50 keys each from peers concurrently (direct
 *                   modex requests in flight together) and all values are right.
 *   reserved_put    PMIx_Put(PMIX_HOSTNAME), as Open MPI 4.1 does, is accepted
 *                   and leaves the hostname intact (the Standard would allow
 *                   refusing "pmix" keys; Open MPI needs this one); an
 *                   unsupported scope value is an error.
 */
#include "ptest.h"

static pmix_proc_t neighbour(int offset)
{
    pmix_proc_t p;
    pt_proc(&p, pt.me.nspace, (pmix_rank_t)((pt.me.rank + (uint32_t)offset) % pt.size));
    return p;
}

/* Get with a timeout; returns the status and, on success, the value. */
static pmix_status_t get_with_timeout(const pmix_proc_t *proc, const char *key, int timeout,
                                      pmix_value_t **out, double *elapsed)
{
    pmix_info_t to;
    pt_info_int(&to, PMIX_TIMEOUT, timeout);
    *out = NULL;
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Get(proc, key, &to, 1, out);
    *elapsed = pt_now() - t0;
    return rc;
}

/* Expect `key` of `proc` to be the uint32 `want`. */
static void expect_u32(const pmix_proc_t *proc, const char *key, uint32_t want, const char *what)
{
    pmix_value_t *v;
    double dt;
    pmix_status_t rc = get_with_timeout(proc, key, 10, &v, &dt);
    if (rc != PMIX_SUCCESS) {
        pt_fail("%s: PMIx_Get(rank %u, %s) failed after %.2f s: %s", what, (unsigned)proc->rank,
                key, dt, pt_err(rc));
        return;
    }
    if (v->type != PMIX_UINT32)
        pt_fail("%s: %s has type %s, put as uint32", what, key, pt_type_name(v->type));
    else if (v->data.uint32 != want)
        pt_fail("%s: %s of rank %u is %u, expected %u", what, key, (unsigned)proc->rank,
                v->data.uint32, want);
    pt_value_free(v);
}

/* Expect `key` of `proc` to be the string `want`. */
static void expect_str(const pmix_proc_t *proc, const char *key, const char *want, int timeout,
                       const char *what)
{
    pmix_value_t *v;
    double dt;
    pmix_status_t rc = get_with_timeout(proc, key, timeout, &v, &dt);
    if (rc != PMIX_SUCCESS) {
        pt_fail("%s: PMIx_Get(rank %u, %s) failed after %.2f s: %s", what, (unsigned)proc->rank,
                key, dt, pt_err(rc));
        return;
    }
    if (v->type != PMIX_STRING)
        pt_fail("%s: %s has type %s, put as a string", what, key, pt_type_name(v->type));
    else if (strcmp(v->data.string, want) != 0)
        pt_fail("%s: %s of rank %u is \"%s\", expected \"%s\"", what, key, (unsigned)proc->rank,
                v->data.string, want);
    pt_value_free(v);
}

static void commit(void)
{
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Commit failed: %s", pt_err(rc));
}

static void fence_collect(bool collect)
{
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, collect);
    pt_phase(collect ? "PMIx_Fence(PMIX_COLLECT_DATA)" : "PMIx_Fence");
    pmix_status_t rc = PMIx_Fence(NULL, 0, &c, 1);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Fence(collect=%d) failed: %s", (int)collect, pt_err(rc));
    pt_phase("test body");
}

struct getnb_result {
    pt_waiter w;
    uint32_t value;
    pmix_data_type_t type;
};

static void getnb_cb(pmix_status_t status, pmix_value_t *kv, void *cbdata)
{
    struct getnb_result *r = cbdata;
    if (status == PMIX_SUCCESS && kv != NULL) {
        r->type = kv->type;
        if (kv->type == PMIX_UINT32)
            r->value = kv->data.uint32;
    }
    pt_waiter_signal(&r->w, status);
}

static void mode_optional(void)
{
    pmix_proc_t peer = neighbour(1);
    pmix_info_t opt;
    pt_info_bool(&opt, PMIX_OPTIONAL, true);

    /* Nobody has put "kv.late" yet: the local cache cannot have it. */
    pmix_value_t *v = NULL;
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Get(&peer, "kv.late", &opt, 1, &v);
    double dt = pt_now() - t0;
    if (rc == PMIX_SUCCESS) {
        pt_fail("PMIX_OPTIONAL Get of a key nobody put returned a value");
        pt_value_free(v);
    } else if (rc != PMIX_ERR_NOT_FOUND) {
        pt_fail("PMIX_OPTIONAL Get of a missing peer key returned %s, expected PMIX_ERR_NOT_FOUND",
                pt_err(rc));
    }
    if (dt > 1.0)
        pt_fail("PMIX_OPTIONAL Get took %.2f s; it must not wait for the server", dt);
    pt_barrier("PMIx_Fence before the puts");

    if ((rc = pt_put_u32(PMIX_GLOBAL, "kv.late", 1000 + pt.me.rank)) != PMIX_SUCCESS)
        pt_fail("PMIx_Put(kv.late) failed: %s", pt_err(rc));
    commit();
    pt_barrier("PMIx_Fence after the commits (no data collected)");

    /* Direct modex: no data was collected, the Get fetches it. */
    expect_u32(&peer, "kv.late", 1000 + peer.rank, "direct modex after a non-collecting fence");

    /* The same through PMIx_Get_nb, from the other neighbour. */
    pmix_proc_t other = neighbour(pt.size - 1);
    struct getnb_result r = {.value = 0, .type = PMIX_UNDEF};
    pt_waiter_init(&r.w);
    pt_phase("PMIx_Get_nb");
    rc = PMIx_Get_nb(&other, "kv.late", NULL, 0, getnb_cb, &r);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        pt_fail("PMIx_Get_nb failed: %s", pt_err(rc));
    } else if (rc == PMIX_SUCCESS) {
        if (!pt_waiter_wait(&r.w, 15.0))
            pt_fail("PMIx_Get_nb callback not called within 15 s");
        else if (r.w.status != PMIX_SUCCESS)
            pt_fail("PMIx_Get_nb completed with %s", pt_err(r.w.status));
        else if (r.type != PMIX_UINT32 || r.value != 1000 + other.rank)
            pt_fail("PMIx_Get_nb value %u (type %s), expected %u", r.value, pt_type_name(r.type),
                    1000 + other.rank);
    }
    pt_info_free(&opt, 1);
}

static void mode_timeout(void)
{
    if (pt.size < 2) {
        pt_note("needs at least 2 processes; nothing to check");
        return;
    }
    pmix_proc_t peer = neighbour(1);
    pt_phase("PMIx_Get(PMIX_TIMEOUT=2) of a key never put");
    pmix_value_t *v;
    double dt;
    pmix_status_t rc = get_with_timeout(&peer, "kv.never.put", 2, &v, &dt);
    if (rc == PMIX_SUCCESS) {
        pt_fail("Get of a key never put returned a value");
        pt_value_free(v);
    } else if (rc != PMIX_ERR_TIMEOUT) {
        pt_fail("Get with PMIX_TIMEOUT=2 of a key the peer may still put returned %s after %.2f s, "
                "expected PMIX_ERR_TIMEOUT",
                pt_err(rc), dt);
    }
    if (dt < 1.5 || dt > 5.0)
        pt_fail("Get with PMIX_TIMEOUT=2 returned after %.2f s (expected about 2 s)", dt);
    else
        pt_note("timed out after %.2f s with %s", dt, pt_err(rc));
    pt_barrier("PMIx_Fence after the timeouts");
}

static void mode_refresh(void)
{
    pmix_proc_t peer = neighbour(1);
    pmix_status_t rc;
    if ((rc = pt_put_u32(PMIX_GLOBAL, "kv.epoch", 1)) != PMIX_SUCCESS)
        pt_fail("PMIx_Put(kv.epoch=1) failed: %s", pt_err(rc));
    commit();
    fence_collect(true);
    expect_u32(&peer, "kv.epoch", 1, "first value");
    pt_barrier("PMIx_Fence before the re-put");

    if ((rc = pt_put_u32(PMIX_GLOBAL, "kv.epoch", 2)) != PMIX_SUCCESS)
        pt_fail("PMIx_Put(kv.epoch=2) failed: %s", pt_err(rc));
    commit();
    pt_barrier("PMIx_Fence after the re-commit");
    expect_u32(&pt.me, "kv.epoch", 2, "own re-put value");

    pmix_info_t q[2];
    pt_info_bool(&q[0], PMIX_GET_REFRESH_CACHE, true);
    pt_info_int(&q[1], PMIX_TIMEOUT, 10);
    pmix_value_t *v = NULL;
    pt_phase("PMIx_Get(PMIX_GET_REFRESH_CACHE)");
    rc = PMIx_Get(&peer, "kv.epoch", q, 2, &v);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Get(PMIX_GET_REFRESH_CACHE) failed: %s", pt_err(rc));
    else if (v->type != PMIX_UINT32 || v->data.uint32 != 2)
        pt_fail("PMIX_GET_REFRESH_CACHE returned %u (type %s); the peer re-committed 2",
                v->type == PMIX_UINT32 ? v->data.uint32 : 0, pt_type_name(v->type));
    pt_value_free(v);
    pt_info_free(q, 2);
    pt_barrier("PMIx_Fence after the refresh");
}

/* Ranks on our node, from PMIX_LOCAL_PEERS. */
static bool is_local_peer(pmix_rank_t r)
{
    pmix_value_t *v = NULL;
    if (PMIx_Get(&pt.wild, PMIX_LOCAL_PEERS, NULL, 0, &v) != PMIX_SUCCESS ||
        v->type != PMIX_STRING) {
        pt_value_free(v);
        return true; /* single node: everyone is local */
    }
    bool found = false;
    const char *p = v->data.string;
    while (*p != '\0' && !found) {
        char *end;
        unsigned long x = strtoul(p, &end, 10);
        if (end == p)
            break;
        found = (pmix_rank_t)x == r;
        p = *end == ',' ? end + 1 : end;
    }
    pt_value_free(v);
    return found;
}

/* A key the peer must not see: any error but a timeout for data that exists
 * outside our scope (the Standard says "immediately"); `may_wait` allows a
 * timeout for data that never reaches the server (PMIX_INTERNAL). */
static void expect_invisible(const pmix_proc_t *peer, const char *key, bool may_wait)
{
    pmix_value_t *v;
    double dt;
    pmix_status_t rc = get_with_timeout(peer, key, 2, &v, &dt);
    if (rc == PMIX_SUCCESS) {
        pt_fail("%s of rank %u is visible to rank %u: \"%s\"", key, (unsigned)peer->rank,
                (unsigned)pt.me.rank, v->type == PMIX_STRING ? v->data.string : "(not a string)");
        pt_value_free(v);
    } else if (rc == PMIX_ERR_TIMEOUT && !may_wait) {
        pt_fail("%s of rank %u: the Get waited for the timeout; data that exists outside the "
                "requester's scope must be refused at once (PMIX_ERR_EXISTS_OUTSIDE_SCOPE)",
                key, (unsigned)peer->rank);
    } else if (rc != PMIX_ERR_NOT_FOUND && rc != PMIX_ERR_EXISTS_OUTSIDE_SCOPE &&
               rc != PMIX_ERR_TIMEOUT) {
        pt_fail("%s of rank %u: unexpected status %s", key, (unsigned)peer->rank, pt_err(rc));
    }
}

static void mode_scopes(bool collect)
{
    char val[64];
    struct {
        pmix_scope_t scope;
        const char *key;
    } keys[] = {{PMIX_LOCAL, "kv.local"},
                {PMIX_REMOTE, "kv.remote"},
                {PMIX_GLOBAL, "kv.global"},
                {PMIX_INTERNAL, "kv.internal"}};
    for (size_t i = 0; i < 4; i++) {
        snprintf(val, sizeof val, "%s-of-%u", keys[i].key, (unsigned)pt.me.rank);
        pmix_status_t rc = pt_put_str(keys[i].scope, keys[i].key, val);
        if (rc != PMIX_SUCCESS)
            pt_fail("PMIx_Put(%s, scope %s) failed: %s", keys[i].key,
                    PMIx_Scope_string(keys[i].scope), pt_err(rc));
    }
    commit();
    fence_collect(collect);

    /* The writer sees its own local, global and internal data. */
    const char *own[] = {"kv.local", "kv.global", "kv.internal"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(val, sizeof val, "%s-of-%u", own[i], (unsigned)pt.me.rank);
        expect_str(&pt.me, own[i], val, 5, "own key");
    }

    /* Peers. */
    for (uint32_t off = 1; off < pt.size; off++) {
        pmix_proc_t peer = neighbour((int)off);
        bool local = is_local_peer(peer.rank);
        char want[64];
        snprintf(want, sizeof want, "kv.global-of-%u", (unsigned)peer.rank);
        expect_str(&peer, "kv.global", want, 10, "PMIX_GLOBAL");
        snprintf(want, sizeof want, "%s-of-%u", local ? "kv.local" : "kv.remote",
                 (unsigned)peer.rank);
        expect_str(&peer, local ? "kv.local" : "kv.remote", want, 10,
                   local ? "PMIX_LOCAL from a local peer" : "PMIX_REMOTE from a remote peer");
        if (off <= 3)
            expect_invisible(&peer, local ? "kv.remote" : "kv.local", false);
        if (off == 1)
            expect_invisible(&peer, "kv.internal", true);
    }
    pt_barrier("PMIx_Fence after the scope checks");
}

static void mode_store_internal(void)
{
    pmix_proc_t peer = neighbour(1);
    char mine[64];
    snprintf(mine, sizeof mine, "stored-by-%u", (unsigned)pt.me.rank);

    pmix_value_t val;
    memset(&val, 0, sizeof val);
    val.type = PMIX_STRING;
    val.data.string = mine;
    pmix_status_t rc = PMIx_Store_internal(&pt.me, "kv.si", &val);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Store_internal(self, kv.si) failed: %s", pt_err(rc));
    mine[0] = 'X'; /* the library must have copied the value */
    char want[64];
    snprintf(want, sizeof want, "stored-by-%u", (unsigned)pt.me.rank);
    expect_str(&pt.me, "kv.si", want, 2, "PMIx_Store_internal about ourselves");

    /* Data about a peer, kept only here. */
    memset(&val, 0, sizeof val);
    val.type = PMIX_UINT32;
    val.data.uint32 = 7000 + peer.rank;
    if ((rc = PMIx_Store_internal(&peer, "kv.about.peer", &val)) != PMIX_SUCCESS)
        pt_fail("PMIx_Store_internal(peer, kv.about.peer) failed: %s", pt_err(rc));
    pmix_info_t opt;
    pt_info_bool(&opt, PMIX_OPTIONAL, true);
    pmix_value_t *v = NULL;
    rc = PMIx_Get(&peer, "kv.about.peer", &opt, 1, &v);
    if (rc != PMIX_SUCCESS)
        pt_fail("stored data about a peer is not in the local cache (PMIX_OPTIONAL Get: %s)",
                pt_err(rc));
    else if (v->type != PMIX_UINT32 || v->data.uint32 != 7000 + peer.rank)
        pt_fail("stored data about a peer reads back wrong");
    pt_value_free(v);
    pt_info_free(&opt, 1);

    /* Open MPI stores each local peer's locality under "pmix.loc" (UINT16). */
    memset(&val, 0, sizeof val);
    val.type = PMIX_UINT16;
    val.data.uint16 = 0x4000 | (uint16_t)peer.rank;
    if ((rc = PMIx_Store_internal(&peer, "pmix.loc", &val)) != PMIX_SUCCESS) {
        pt_fail(
            "PMIx_Store_internal(peer, \"pmix.loc\", UINT16) failed: %s (Open MPI 4.1 needs it)",
            pt_err(rc));
    } else {
        v = NULL;
        rc = PMIx_Get(&peer, "pmix.loc", NULL, 0, &v);
        if (rc != PMIX_SUCCESS)
            pt_fail("PMIx_Get(peer, \"pmix.loc\") after storing it failed: %s", pt_err(rc));
        else if (v->type != PMIX_UINT16 || v->data.uint16 != (0x4000 | (uint16_t)peer.rank))
            pt_fail("\"pmix.loc\" reads back wrong (type %s)", pt_type_name(v->type));
        pt_value_free(v);
    }
    pt_barrier("PMIx_Fence after the stores");

    /* Nobody else sees what a process stored internally. */
    if (pt.size > 1)
        expect_invisible(&peer, "kv.si", true);
    pt_barrier("PMIx_Fence after the visibility checks");
}

static void expect_not_found_fast(const pmix_proc_t *proc, const char *key, const char *what)
{
    pmix_value_t *v;
    double dt;
    pmix_status_t rc = get_with_timeout(proc, key, 5, &v, &dt);
    if (rc == PMIX_SUCCESS) {
        pt_fail("%s: %s returned a value", what, key);
        pt_value_free(v);
    } else if (rc != PMIX_ERR_NOT_FOUND) {
        pt_fail("%s: PMIx_Get(%s) returned %s after %.2f s, expected PMIX_ERR_NOT_FOUND", what, key,
                pt_err(rc), dt);
    } else if (dt > 2.0) {
        pt_fail("%s: PMIX_ERR_NOT_FOUND took %.2f s", what, dt);
    }
}

static void mode_missing(void)
{
    expect_not_found_fast(&pt.me, "kv.never.put", "own key before any put");
    pmix_status_t rc = pt_put_u32(PMIX_GLOBAL, "kv.present", 500 + pt.me.rank);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Put(kv.present) failed: %s", pt_err(rc));
    commit();
    fence_collect(true);

    expect_not_found_fast(&pt.me, "kv.never.put", "own key after the fence");

    /* A NULL proc stands for the caller (and, in legacy PMI style, for a key
     * unique in our namespace: this key is both). */
    char mine[64];
    snprintf(mine, sizeof mine, "kv.only.mine.%u", (unsigned)pt.me.rank);
    if ((rc = pt_put_u32(PMIX_GLOBAL, mine, 600 + pt.me.rank)) != PMIX_SUCCESS)
        pt_fail("PMIx_Put(%s) failed: %s", mine, pt_err(rc));
    pmix_value_t *v = NULL;
    rc = PMIx_Get(NULL, mine, NULL, 0, &v);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Get(NULL proc, %s) failed: %s; a NULL proc stands for the caller", mine,
                pt_err(rc));
    else if (v->type != PMIX_UINT32 || v->data.uint32 != 600 + pt.me.rank)
        pt_fail("PMIx_Get(NULL proc, %s) did not return our own value", mine);
    pt_value_free(v);

    for (uint32_t off = 1; off < pt.size; off++) {
        pmix_proc_t peer = neighbour((int)off);
        expect_u32(&peer, "kv.present", 500 + peer.rank, "collected key");
        if (off <= 3)
            expect_not_found_fast(&peer, "kv.never.put", "peer key absent from the collected data");
    }
    pt_barrier("PMIx_Fence after the checks");
}

static void mode_late_put(void)
{
    pmix_status_t rc = pt_put_u32(PMIX_GLOBAL, "kv.early", 800 + pt.me.rank);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Put(kv.early) failed: %s", pt_err(rc));
    commit();
    fence_collect(true);
    pmix_proc_t peer = neighbour(1);
    expect_u32(&peer, "kv.early", 800 + peer.rank, "collected key");

    /* More data after the collection, and a plain barrier. */
    if ((rc = pt_put_u32(PMIX_GLOBAL, "kv.late", 900 + pt.me.rank)) != PMIX_SUCCESS)
        pt_fail("PMIx_Put(kv.late) failed: %s", pt_err(rc));
    commit();
    pt_barrier("PMIx_Fence after the late commit");
    expect_u32(&peer, "kv.late", 900 + peer.rank,
               "key committed after a collecting fence (plain Get, no refresh)");
    pt_barrier("final fence of late_put");
}

/* ---- types ---------------------------------------------------------------- */

#define NTYPES 26

/* Value number `i` as written by rank `r`. Pointers refer to `store`. */
struct type_store {
    char str[64];
    char bytes[64];
    pmix_proc_t proc;
    uint32_t arr[5];
    pmix_data_array_t darray;
    char envname[32];
};

static void make_typed(int i, pmix_rank_t r, pmix_value_t *v, struct type_store *st)
{
    memset(v, 0, sizeof *v);
    switch (i) {
    case 0:
        v->type = PMIX_BOOL;
        v->data.flag = r % 2 == 0;
        break;
    case 1:
        v->type = PMIX_INT8;
        v->data.int8 = (int8_t)(-5 - (int)(r % 100));
        break;
    case 2:
        v->type = PMIX_INT16;
        v->data.int16 = (int16_t)(-300 - (int)r);
        break;
    case 3:
        v->type = PMIX_INT32;
        v->data.int32 = -70000 - (int32_t)r;
        break;
    case 4:
        v->type = PMIX_INT64;
        v->data.int64 = -5000000000000LL - (int64_t)r;
        break;
    case 5:
        v->type = PMIX_UINT8;
        v->data.uint8 = (uint8_t)(200 + r % 50);
        break;
    case 6:
        v->type = PMIX_UINT16;
        v->data.uint16 = (uint16_t)(60000 + r);
        break;
    case 7:
        v->type = PMIX_UINT32;
        v->data.uint32 = 4000000000u + r;
        break;
    case 8:
        v->type = PMIX_UINT64;
        v->data.uint64 = 18000000000000000000ull + r;
        break;
    case 9:
        v->type = PMIX_INT;
        v->data.integer = -42 - (int)r;
        break;
    case 10:
        v->type = PMIX_UINT;
        v->data.uint = 42u + r;
        break;
    case 11:
        v->type = PMIX_SIZE;
        v->data.size = (size_t)123456789 + r;
        break;
    case 12:
        v->type = PMIX_PID;
        v->data.pid = (pid_t)(4242 + r);
        break;
    case 13:
        v->type = PMIX_FLOAT;
        v->data.fval = 1.5f + (float)r;
        break;
    case 14:
        v->type = PMIX_DOUBLE;
        v->data.dval = 3.25 + (double)r / 1024.0;
        break;
    case 15:
        snprintf(st->str, sizeof st->str, "h\xc3\xa9llo w\xc3\xb6rld %u", (unsigned)r);
        v->type = PMIX_STRING;
        v->data.string = st->str;
        break;
    case 16:
        v->type = PMIX_STRING;
        v->data.string = (char *)"";
        break;
    case 17:
        for (size_t k = 0; k < sizeof st->bytes; k++)
            st->bytes[k] = (char)(k % 3 == 0 ? 0 : (int)(r * 17 + k));
        v->type = PMIX_BYTE_OBJECT;
        v->data.bo.bytes = st->bytes;
        v->data.bo.size = sizeof st->bytes;
        break;
    case 18:
        pt_proc(&st->proc, "some-other-namespace", r + 7);
        v->type = PMIX_PROC;
        v->data.proc = &st->proc;
        break;
    case 19:
        v->type = PMIX_STATUS;
        v->data.status = PMIX_ERR_NOT_FOUND - (int)r;
        break;
    case 20:
        v->type = PMIX_TIMEVAL;
        v->data.tv.tv_sec = 1000 + (time_t)r;
        v->data.tv.tv_usec = 2000 + (long)r;
        break;
    case 21:
        v->type = PMIX_TIME;
        v->data.time = (time_t)1700000000 + (time_t)r;
        break;
    case 22:
        for (uint32_t k = 0; k < 5; k++)
            st->arr[k] = r * 10 + k;
        st->darray.type = PMIX_UINT32;
        st->darray.size = 5;
        st->darray.array = st->arr;
        v->type = PMIX_DATA_ARRAY;
        v->data.darray = &st->darray;
        break;
    case 23:
        snprintf(st->envname, sizeof st->envname, "PT_VAR_%u", (unsigned)r);
        v->type = PMIX_ENVAR;
        v->data.envar.envar = st->envname;
        v->data.envar.value = (char *)"/usr/lib:/lib";
        v->data.envar.separator = ':';
        break;
    case 24:
        v->type = PMIX_PROC_RANK;
        v->data.rank = r + 1;
        break;
    default:
        v->type = PMIX_BYTE;
        v->data.byte = (uint8_t)(0xA0 + r % 16);
        break;
    }
}

static bool same_typed(const pmix_value_t *a, const pmix_value_t *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case PMIX_BOOL: return a->data.flag == b->data.flag;
    case PMIX_INT8: return a->data.int8 == b->data.int8;
    case PMIX_INT16: return a->data.int16 == b->data.int16;
    case PMIX_INT32: return a->data.int32 == b->data.int32;
    case PMIX_INT64: return a->data.int64 == b->data.int64;
    case PMIX_UINT8: return a->data.uint8 == b->data.uint8;
    case PMIX_UINT16: return a->data.uint16 == b->data.uint16;
    case PMIX_UINT32: return a->data.uint32 == b->data.uint32;
    case PMIX_UINT64: return a->data.uint64 == b->data.uint64;
    case PMIX_INT: return a->data.integer == b->data.integer;
    case PMIX_UINT: return a->data.uint == b->data.uint;
    case PMIX_SIZE: return a->data.size == b->data.size;
    case PMIX_PID: return a->data.pid == b->data.pid;
    case PMIX_FLOAT: return a->data.fval == b->data.fval;
    case PMIX_DOUBLE: return a->data.dval == b->data.dval;
    case PMIX_STRING:
        return a->data.string != NULL && b->data.string != NULL &&
               strcmp(a->data.string, b->data.string) == 0;
    case PMIX_BYTE_OBJECT:
        return a->data.bo.size == b->data.bo.size &&
               (a->data.bo.size == 0 ||
                memcmp(a->data.bo.bytes, b->data.bo.bytes, a->data.bo.size) == 0);
    case PMIX_PROC:
        return a->data.proc != NULL && b->data.proc != NULL &&
               a->data.proc->rank == b->data.proc->rank &&
               strcmp(a->data.proc->nspace, b->data.proc->nspace) == 0;
    case PMIX_STATUS: return a->data.status == b->data.status;
    case PMIX_TIMEVAL:
        return a->data.tv.tv_sec == b->data.tv.tv_sec && a->data.tv.tv_usec == b->data.tv.tv_usec;
    case PMIX_TIME: return a->data.time == b->data.time;
    case PMIX_DATA_ARRAY:
        return a->data.darray != NULL && b->data.darray != NULL &&
               a->data.darray->type == PMIX_UINT32 && b->data.darray->type == PMIX_UINT32 &&
               a->data.darray->size == b->data.darray->size &&
               memcmp(a->data.darray->array, b->data.darray->array,
                      a->data.darray->size * sizeof(uint32_t)) == 0;
    case PMIX_ENVAR:
        return a->data.envar.separator == b->data.envar.separator && a->data.envar.envar != NULL &&
               b->data.envar.envar != NULL &&
               strcmp(a->data.envar.envar, b->data.envar.envar) == 0 &&
               a->data.envar.value != NULL && b->data.envar.value != NULL &&
               strcmp(a->data.envar.value, b->data.envar.value) == 0;
    case PMIX_PROC_RANK: return a->data.rank == b->data.rank;
    case PMIX_BYTE: return a->data.byte == b->data.byte;
    default: return false;
    }
}

static void check_types_of(const pmix_proc_t *proc, const char *path)
{
    for (int i = 0; i < NTYPES; i++) {
        char key[32];
        snprintf(key, sizeof key, "kv.type.%d", i);
        pmix_value_t want, *got = NULL;
        struct type_store st;
        make_typed(i, proc->rank, &want, &st);
        double dt;
        pmix_status_t rc = get_with_timeout(proc, key, 10, &got, &dt);
        if (rc != PMIX_SUCCESS)
            pt_fail("%s: %s (%s) of rank %u: %s", path, key, pt_type_name(want.type),
                    (unsigned)proc->rank, pt_err(rc));
        else if (!same_typed(&want, got))
            pt_fail("%s: %s of rank %u: put as %s, read back as %s with a different value", path,
                    key, (unsigned)proc->rank, pt_type_name(want.type), pt_type_name(got->type));
        pt_value_free(got);
    }
}

static void mode_types(void)
{
    for (int i = 0; i < NTYPES; i++) {
        char key[32];
        snprintf(key, sizeof key, "kv.type.%d", i);
        pmix_value_t v;
        struct type_store st;
        make_typed(i, pt.me.rank, &v, &st);
        pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
        if (rc != PMIX_SUCCESS)
            pt_fail("PMIx_Put(%s, %s) failed: %s", key, pt_type_name(v.type), pt_err(rc));
    }
    commit();
    check_types_of(&pt.me, "own data");
    pt_barrier("PMIx_Fence after the typed puts");
    pmix_proc_t peer = neighbour(1);
    check_types_of(&peer, "direct modex");
    fence_collect(true);
    pmix_proc_t other = neighbour(pt.size > 2 ? 2 : 1);
    check_types_of(&other, "collected data");
    pt_barrier("final fence of types");
}

/* ---- many keys, undef, threads ------------------------------------------------ */

static void mode_many_keys(void)
{
    const int nkeys = 500;
    char key[32];
    pmix_status_t rc = PMIX_SUCCESS;
    for (int i = 0; i < nkeys && rc == PMIX_SUCCESS; i++) {
        snprintf(key, sizeof key, "kv.many.%d", i);
        rc = pt_put_u32(PMIX_GLOBAL, key, pt.me.rank * 100000u + (uint32_t)i);
    }
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Put of key %s failed: %s", key, pt_err(rc));
    for (uint32_t k = 1; k <= 3; k++)
        if ((rc = pt_put_u32(PMIX_GLOBAL, "kv.over", k)) != PMIX_SUCCESS)
            pt_fail("PMIx_Put(kv.over=%u) failed: %s", k, pt_err(rc));
    commit();
    fence_collect(true);
    pmix_proc_t peer = neighbour(1);
    int bad = 0;
    for (int i = 0; i < nkeys; i++) {
        snprintf(key, sizeof key, "kv.many.%d", i);
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&peer, key, NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v->type != PMIX_UINT32 ||
            v->data.uint32 != peer.rank * 100000u + (uint32_t)i) {
            if (bad++ < 5)
                pt_fail("key %s of rank %u: %s", key, (unsigned)peer.rank,
                        rc != PMIX_SUCCESS ? pt_err(rc) : "wrong value");
        }
        pt_value_free(v);
    }
    if (bad > 5)
        pt_fail("%d of %d keys of rank %u were wrong or missing", bad, nkeys, (unsigned)peer.rank);
    expect_u32(&peer, "kv.over", 3, "key put three times before one commit");
    pt_barrier("final fence of many_keys");
}

static void mode_undef(void)
{
    char key[32], val[32];
    snprintf(key, sizeof key, "kv.unique.%u", (unsigned)pt.me.rank);
    snprintf(val, sizeof val, "from-%u", (unsigned)pt.me.rank);
    pmix_status_t rc = pt_put_str(PMIX_GLOBAL, key, val);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Put(%s) failed: %s", key, pt_err(rc));
    commit();
    fence_collect(true);
    pmix_proc_t any;
    pt_proc(&any, pt.me.nspace, PMIX_RANK_UNDEF);
    for (uint32_t off = 0; off < pt.size; off++) {
        pmix_rank_t r = (pt.me.rank + off) % pt.size;
        snprintf(key, sizeof key, "kv.unique.%u", (unsigned)r);
        snprintf(val, sizeof val, "from-%u", (unsigned)r);
        expect_str(&any, key, val, 5, "PMIX_RANK_UNDEF lookup of a namespace-unique key");
    }
    pt_barrier("final fence of undef");
}

#define NTHREADS 4
#define TKEYS 50

struct thread_job {
    pthread_t th;
    int index;
    int errors;
    char first_error[256];
};

static void *thread_gets(void *arg)
{
    struct thread_job *t = arg;
    pmix_info_t to;
    pt_info_int(&to, PMIX_TIMEOUT, 20);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < TKEYS; i++) {
            /* Threads start on different peers and keys so their requests interleave. */
            pmix_rank_t r = (pt.me.rank + 1 + (uint32_t)t->index + (uint32_t)round) % pt.size;
            int k = (i + t->index * 7) % TKEYS;
            char key[32];
            snprintf(key, sizeof key, "kv.th.%d", k);
            pmix_proc_t p;
            pt_proc(&p, pt.me.nspace, r);
            pmix_value_t *v = NULL;
            pmix_status_t rc = PMIx_Get(&p, key, &to, 1, &v);
            bool ok = rc == PMIX_SUCCESS && v->type == PMIX_UINT32 &&
                      v->data.uint32 == r * 1000u + (uint32_t)k;
            if (!ok && t->errors++ == 0)
                snprintf(t->first_error, sizeof t->first_error, "thread %d: %s of rank %u: %s",
                         t->index, key, (unsigned)r,
                         rc != PMIX_SUCCESS ? pt_err(rc) : "wrong value");
            pt_value_free(v);
        }
    }
    return NULL;
}

static void mode_threads(void)
{
    pmix_status_t rc = PMIX_SUCCESS;
    for (int i = 0; i < TKEYS && rc == PMIX_SUCCESS; i++) {
        char key[32];
        snprintf(key, sizeof key, "kv.th.%d", i);
        rc = pt_put_u32(PMIX_GLOBAL, key, pt.me.rank * 1000u + (uint32_t)i);
    }
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Put failed: %s", pt_err(rc));
    commit();
    pt_barrier("PMIx_Fence before the threads (no data collected)");
    struct thread_job jobs[NTHREADS];
    pt_phase("concurrent Gets from 4 threads");
    for (int t = 0; t < NTHREADS; t++) {
        jobs[t].index = t;
        jobs[t].errors = 0;
        jobs[t].first_error[0] = '\0';
        pthread_create(&jobs[t].th, NULL, thread_gets, &jobs[t]);
    }
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(jobs[t].th, NULL);
        if (jobs[t].errors != 0)
            pt_fail("%d concurrent Gets failed; first: %s", jobs[t].errors, jobs[t].first_error);
    }
    pt_barrier("final fence of threads");
}

static void mode_reserved_put(void)
{
    /* The Standard (v4 on) reserves "pmix"-prefixed keys to the host and
     * lets PMIx_Put refuse them, but Open MPI 4.1 puts its own hostname under
     * PMIX_HOSTNAME during MPI_Init (shared/abi/openmpi-4.1.md): accepting
     * that put is required here, and it must not disturb the job data. */
    char host[256] = "";
    gethostname(host, sizeof host);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&pt.me, PMIX_HOSTNAME, NULL, 0, &v);
    if (rc == PMIX_SUCCESS && v->type == PMIX_STRING)
        snprintf(host, sizeof host, "%s", v->data.string);
    pt_value_free(v);
    rc = pt_put_str(PMIX_GLOBAL, PMIX_HOSTNAME, host);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Put(PMIX_GLOBAL, PMIX_HOSTNAME) failed: %s; Open MPI 4.1's MPI_Init does "
                "this put and treats a failure as fatal",
                pt_err(rc));

    rc = pt_put_str((pmix_scope_t)77, "kv.badscope", "x");
    if (rc == PMIX_SUCCESS)
        pt_fail("PMIx_Put with scope value 77 succeeded");
    else if (rc != PMIX_ERR_NOT_SUPPORTED)
        pt_note("PMIx_Put with scope 77 returned %s (the Standard names PMIX_ERR_NOT_SUPPORTED)",
                pt_err(rc));

    /* The library is still fine afterwards. */
    if ((rc = pt_put_u32(PMIX_GLOBAL, "kv.ok", 1)) != PMIX_SUCCESS)
        pt_fail("PMIx_Put after the rejected one failed: %s", pt_err(rc));
    commit();
    fence_collect(true);
    pmix_proc_t peer = neighbour(1);
    expect_u32(&peer, "kv.ok", 1, "put after a rejected put");
    v = NULL;
    rc = PMIx_Get(&peer, PMIX_HOSTNAME, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v->type != PMIX_STRING || strcmp(v->data.string, host) != 0)
        pt_fail("PMIX_HOSTNAME of rank %u after its own put of it: %s", (unsigned)peer.rank,
                rc != PMIX_SUCCESS ? pt_err(rc) : "a different value or type");
    pt_value_free(v);
    pt_barrier("final fence");
}

int main(int argc, char **argv)
{
    const char *modes = "optional timeout refresh scopes scopes_collect store_internal missing "
                        "late_put types many_keys undef threads reserved_put";
    if (argc < 2)
        pt_usage(argv[0], modes);
    pt_watchdog(50);
    pt_start("kv_rules", argv[1], NULL, 0);
    const char *m = argv[1];
    if (strcmp(m, "optional") == 0)
        mode_optional();
    else if (strcmp(m, "timeout") == 0)
        mode_timeout();
    else if (strcmp(m, "refresh") == 0)
        mode_refresh();
    else if (strcmp(m, "scopes") == 0)
        mode_scopes(false);
    else if (strcmp(m, "scopes_collect") == 0)
        mode_scopes(true);
    else if (strcmp(m, "store_internal") == 0)
        mode_store_internal();
    else if (strcmp(m, "missing") == 0)
        mode_missing();
    else if (strcmp(m, "late_put") == 0)
        mode_late_put();
    else if (strcmp(m, "types") == 0)
        mode_types();
    else if (strcmp(m, "many_keys") == 0)
        mode_many_keys();
    else if (strcmp(m, "undef") == 0)
        mode_undef();
    else if (strcmp(m, "threads") == 0)
        mode_threads();
    else if (strcmp(m, "reserved_put") == 0)
        mode_reserved_put();
    else
        pt_usage(argv[0], modes);
    return pt_result();
}
