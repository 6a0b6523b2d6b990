/*
 * fuzz_engine.c - libFuzzer target for the server and client engines, run
 * on the in-process platform of the unit tests (tests/unit/inproc.c).
 *
 * Each input is a world: one or two servers (nodes) with two processes
 * each, namespace "job", registered with the job data the host core builds
 * (hostcore/: two apps, in the process sets "ocean" and "ice"), and a
 * client per process, not yet connected. The first
 * byte of the input sets the world up (bit 0: fence pages; bit 1: two
 * nodes; bit 2: every client connects before the script starts). The rest
 * is a script (fuzz_input.h) of steps, each a byte choosing an operation
 * and a client slot, followed by what the operation needs:
 *
 *   real traffic  a client connects, puts, commits, fences (alone, or
 *                 every client at once; with or without data, timeouts,
 *                 some of the processes), gets (job data, a peer's data,
 *                 with directives), registers handlers, notifies, aborts,
 *                 asks for job control, queries the process sets,
 *                 finalizes, or dies; the fence page (arrive, check, go to
 *                 the server); PMIx_Store_internal; publish, lookup (with
 *                 PMIX_WAIT and PMIX_TIMEOUT) and unpublish, in any range
 *                 and persistence, valid or not;
 *   raw frames    a frame from the input (its type, tag and payload, with
 *                 a correct header, or the bytes as they are) reaches the
 *                 server as from that client's connection, or the client
 *                 as from its server (with or without a region);
 *   the host      a client's death, an event, direct modex, a client or
 *                 the namespace deregistered and registered again, a
 *                 process set defined or deleted;
 *   failures      the platform's knobs: the server's sends to a client
 *                 fail, a client's own sends fail, a client cannot map
 *                 the fence page;
 *   run           the world runs until nothing is queued and no timer is
 *                 left (virtual time: timeouts fire at once).
 *
 * After the script the world runs to the end and is destroyed; ASan's
 * leak check then sees whatever an engine forgot. The engines must not
 * crash, trip a sanitizer or abort the in-process platform (a timer
 * cancelled twice, a blocking call that could never return).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "fuzz_input.h"
#include "inproc.h"
#include "px_hostcore.h"
#include "px_proto.h"
#include "wire/px_wire.h"

#define PPN 2
#define MAX_NODES 2
#define MAX_SLOTS (MAX_NODES * PPN)
#define MAX_CLIENTS 16 /* clients made in one world, replacements included */
#define MAX_STEPS 128

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

typedef struct slot {
    px_client *c;
    bool connecting; /* px_client_connect was called */
    px_lbar lb;      /* a fence-page arrival waiting (lb_wait) */
    bool lb_wait;
} slot;

typedef struct world {
    inproc_world *w;
    px_server *srv[MAX_NODES];
    int nodes;
    slot s[MAX_SLOTS];
    int nclients;
    int done; /* callbacks run (not checked: they only must not crash) */
} world;

static const char *const keys[] = {
    "card",          "k1",           PMIX_JOB_SIZE,    PMIX_LOCAL_RANK,    PMIX_HOSTNAME,
    PMIX_NODEID,     PMIX_APPNUM,    PMIX_LOCAL_PEERS, PMIX_NODE_LIST,     PMIX_PROC_MAP,
    PMIX_LOCAL_SIZE, PMIX_UNIV_SIZE, PMIX_RANK,        "pmix.no.such.key",
};

static const pmix_status_t codes[] = {
    PMIX_ERR_PROC_ABORTED,
    PMIX_ERR_LOST_CONNECTION,
    PMIX_ERR_PROC_TERM_WO_SYNC,
    PMIX_ERR_JOB_TERMINATED,
    -4242,
    PMIX_MODEL_DECLARED,
};

/* ---- callbacks: they count, and give back what they are handed ---- */

static void op_cb(pmix_status_t status, void *cbdata)
{
    ((world *)cbdata)->done++;
}

static void value_cb(pmix_status_t status, pmix_value_t *v, void *cbdata)
{
    ((world *)cbdata)->done++;
}

static void info_cb(pmix_status_t status, pmix_info_t info[], size_t ninfo, void *cbdata,
                    pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    ((world *)cbdata)->done++;
    if (release_fn != NULL) {
        release_fn(release_cbdata);
    }
}

static void dmodex_cb(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
}

static void evhdlr(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                   size_t ninfo, pmix_info_t results[], size_t nresults,
                   pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    /* the status decides whether the chain goes on */
    if (cbfunc != NULL) {
        cbfunc(status == -4242 ? PMIX_EVENT_ACTION_COMPLETE : PMIX_SUCCESS, NULL, 0, NULL, NULL,
               cbdata);
    }
}

/* ---- the world ---- */

static const char *node_name(void *ctx, uint32_t node)
{
    return node == 0 ? "n0" : "n1";
}

static void register_job(world *wd, int node)
{
    uint32_t half = (uint32_t)(wd->nodes * PPN) / 2;
    px_jobmap_app apps[2] = {{.first = 0, .size = half, .pset = "ocean"},
                             {.first = half, .size = half, .pset = "ice"}};
    px_jobmap m = {
        .nspace = "job",
        .nprocs = (uint32_t)(wd->nodes * PPN),
        .nnodes = (uint32_t)wd->nodes,
        .ppn = PPN,
        .node_name = node_name,
        .napps = 2,
        .apps = apps,
        .describe_all = true,
    };
    px_ivec info = {0};

    FUZZ_CHECK(px_jobinfo_build(&m, (uint32_t)node, &info) == PMIX_SUCCESS);
    FUZZ_CHECK(px_server_register_nspace(wd->srv[node], "job", PPN, info.v, info.n) ==
               PMIX_SUCCESS);
    px_ivec_free(&info);
    for (int r = 0; r < PPN; r++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, "job", (pmix_rank_t)(node * PPN + r));
        FUZZ_CHECK(px_server_register_client(wd->srv[node], &p, 1000, 1000, NULL) == PMIX_SUCCESS);
    }
}

static px_server *server_of(world *wd, int i)
{
    return wd->srv[i / PPN];
}

/* A new client in slot i (the old one, if any, stays in the world). */
static void new_client(world *wd, int i)
{
    pmix_proc_t self;

    if (wd->nclients == MAX_CLIENTS) {
        return;
    }
    PMIx_Load_procid(&self, "job", (pmix_rank_t)i);
    wd->s[i] = (slot){.c = inproc_client(wd->w, server_of(wd, i), &self)};
    FUZZ_CHECK(wd->s[i].c != NULL);
    wd->nclients++;
}

static void connect_client(world *wd, int i)
{
    if (!wd->s[i].connecting) {
        wd->s[i].connecting = true;
        (void)px_client_connect(wd->s[i].c, NULL, 0, op_cb, wd);
    }
}

static void run(world *wd)
{
    (void)inproc_run_until(wd->w, NULL);
}

/* ---- real traffic ---- */

/* A value from the input: a number, a string, bytes, a large byte object
 * (up to 64 KiB of a pattern: collected data that large travels in a
 * region), or any value the codec can read. */
static void take_value(fuzz_in *in, pmix_value_t *v)
{
    size_t len;
    const uint8_t *p;
    px_buf b;

    PMIx_Value_construct(v);
    switch (fuzz_u8(in) % 5) {
    case 0: {
        uint32_t u = fuzz_u16(in);
        PMIx_Value_load(v, &u, PMIX_UINT32);
        break;
    }
    case 1: {
        char s[64];
        p = fuzz_blob8(in, &len);
        len = len < sizeof(s) - 1 ? len : sizeof(s) - 1;
        memcpy(s, p, len);
        s[len] = '\0';
        PMIx_Value_load(v, s, PMIX_STRING);
        break;
    }
    case 2: {
        pmix_byte_object_t bo;
        p = fuzz_blob8(in, &len);
        bo.bytes = (char *)p;
        bo.size = len;
        PMIx_Value_load(v, &bo, PMIX_BYTE_OBJECT); /* copies */
        break;
    }
    case 3: {
        pmix_byte_object_t bo;
        bo.size = ((size_t)fuzz_u8(in) + 1) * 256;
        bo.bytes = malloc(bo.size);
        FUZZ_CHECK(bo.bytes != NULL);
        memset(bo.bytes, 0x5a, bo.size);
        PMIx_Value_load(v, &bo, PMIX_BYTE_OBJECT);
        free(bo.bytes);
        break;
    }
    default:
        p = fuzz_blob16(in, &len);
        px_buf_view(&b, p, len);
        if (px_unpack_value(&b, v) != PMIX_SUCCESS) {
            PMIx_Value_construct(v);
        }
        break;
    }
}

static void take_key(fuzz_in *in, char key[PMIX_MAX_KEYLEN + 1])
{
    snprintf(key, PMIX_MAX_KEYLEN + 1, "%s", keys[fuzz_u8(in) % NELEMS(keys)]);
}

/* The processes of a fence or a job control: all (NULL), the namespace, a
 * subset of the ranks, or a namespace nobody has. */
static size_t take_procs(fuzz_in *in, world *wd, pmix_proc_t procs[MAX_SLOTS + 1])
{
    uint8_t how = fuzz_u8(in);
    size_t n = 0;

    switch (how % 4) {
    case 0: return 0;
    case 1: PMIx_Load_procid(&procs[n++], "job", PMIX_RANK_WILDCARD); return n;
    case 2:
        for (int r = 0; r < wd->nodes * PPN; r++) {
            if (how & (0x10 << r)) {
                PMIx_Load_procid(&procs[n++], "job", (pmix_rank_t)r);
            }
        }
        return n;
    default: PMIx_Load_procid(&procs[n++], "other", (pmix_rank_t)(how >> 4)); return n;
    }
}

/* Directives: collect, a timeout, optional, immediate, refresh, and a key
 * the engines do not know. */
static size_t take_info(fuzz_in *in, pmix_info_t info[6])
{
    uint8_t how = fuzz_u8(in);
    bool t = true;
    size_t n = 0;

    if (how & 0x01) {
        PMIx_Info_load(&info[n++], PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    }
    if (how & 0x02) {
        int secs = fuzz_u8(in) % 4;
        PMIx_Info_load(&info[n++], PMIX_TIMEOUT, &secs, PMIX_INT);
    }
    if (how & 0x04) {
        PMIx_Info_load(&info[n++], PMIX_OPTIONAL, &t, PMIX_BOOL);
    }
    if (how & 0x08) {
        PMIx_Info_load(&info[n++], PMIX_IMMEDIATE, &t, PMIX_BOOL);
    }
    if (how & 0x10) {
        PMIx_Info_load(&info[n++], PMIX_GET_REFRESH_CACHE, &t, PMIX_BOOL);
    }
    if (how & 0x20) {
        PMIx_Info_load(&info[n++], "pmix.fuzz.unknown", "x", PMIX_STRING);
    }
    return n;
}

static void free_info(pmix_info_t *info, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        PMIx_Info_destruct(&info[i]);
    }
}

static void do_put(world *wd, px_client *c, fuzz_in *in)
{
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_scope_t scope = fuzz_u8(in) % 5;
    pmix_value_t v;

    take_key(in, key);
    take_value(in, &v);
    (void)px_client_put(c, scope, key, &v);
    PMIx_Value_destruct(&v);
}

static void do_fence(world *wd, px_client *c, fuzz_in *in)
{
    pmix_proc_t procs[MAX_SLOTS + 1];
    pmix_info_t info[6];
    size_t n = take_procs(in, wd, procs), ninfo = take_info(in, info);

    (void)px_client_fence(c, n > 0 ? procs : NULL, n, info, ninfo, op_cb, wd);
    free_info(info, ninfo);
}

/* Every client that started its handshake fences with the same info. */
static void do_fence_all(world *wd, fuzz_in *in)
{
    pmix_info_t info[6];
    size_t ninfo = take_info(in, info);

    for (int i = 0; i < wd->nodes * PPN; i++) {
        if (wd->s[i].connecting) {
            (void)px_client_fence(wd->s[i].c, NULL, 0, info, ninfo, op_cb, wd);
        }
    }
    free_info(info, ninfo);
}

static void do_get(world *wd, px_client *c, fuzz_in *in)
{
    pmix_proc_t p;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_info_t info[6];
    pmix_value_t *out = NULL;
    uint8_t who = fuzz_u8(in);
    size_t ninfo;

    if (who >= 0xf0) {
        PMIx_Load_procid(&p, who & 1 ? "job" : "other",
                         who & 2 ? PMIX_RANK_WILDCARD : PMIX_RANK_UNDEF);
    } else {
        PMIx_Load_procid(&p, "job", (pmix_rank_t)(who % (MAX_SLOTS + 1)));
    }
    take_key(in, key);
    ninfo = take_info(in, info);
    if (px_client_get(c, &p, key, info, ninfo, &out, value_cb, wd) == PMIX_OPERATION_SUCCEEDED) {
        PMIx_Value_free(out, 1);
    }
    free_info(info, ninfo);
}

static void do_events(world *wd, px_client *c, fuzz_in *in)
{
    uint8_t how = fuzz_u8(in);
    pmix_status_t code = codes[(how >> 2) % NELEMS(codes)];
    pmix_proc_t self;
    size_t id;

    switch (how % 4) {
    case 0: (void)px_client_register_event(c, &code, 1, NULL, 0, evhdlr, &id); break;
    case 1: (void)px_client_register_event(c, NULL, 0, NULL, 0, evhdlr, &id); break;
    case 2: (void)px_client_deregister_event(c, fuzz_u8(in) % 4); break;
    default:
        PMIx_Load_procid(&self, "job", 0);
        (void)px_client_notify(c, code, &self, fuzz_u8(in) % 8, NULL, 0, op_cb, wd);
        break;
    }
}

static void do_page(world *wd, slot *s, fuzz_in *in)
{
    pmix_info_t info[6];
    size_t ninfo = take_info(in, info);
    int how;

    if (s->lb_wait) {
        how = px_client_lbar_check(s->c, &s->lb);
    } else {
        memset(&s->lb, 0, sizeof(s->lb));
        how = px_client_lbar_arrive(s->c, NULL, 0, info, ninfo, &s->lb);
    }
    s->lb_wait = how == PX_LBAR_WAIT;
    if (how == PX_LBAR_SERVER) {
        (void)px_client_fence_arrived(s->c, NULL, 0, info, ninfo, op_cb, wd);
    }
    free_info(info, ninfo);
}

/* ---- raw frames ---- */

/* A frame from the input: type, tag and payload under a correct header,
 * or (bit 7 of the first byte) the input's bytes as they are. */
static uint8_t *take_frame(fuzz_in *in, size_t *len)
{
    uint8_t how = fuzz_u8(in);
    size_t n;
    const uint8_t *p;
    uint8_t *frame;
    px_buf b;

    if (how & 0x80) {
        p = fuzz_blob16(in, &n);
        frame = malloc(n > 0 ? n : 1);
        FUZZ_CHECK(frame != NULL);
        memcpy(frame, p, n);
        *len = n;
        return frame;
    }
    px_buf_init_frame(&b, (uint16_t)(how % 20), fuzz_u8(in));
    p = fuzz_blob16(in, &n);
    px_pack_raw(&b, p, n);
    frame = px_buf_finish_frame(&b, len);
    FUZZ_CHECK(frame != NULL);
    return frame;
}

static void release_free(void *arg)
{
    free(arg);
}

/* A frame to client slot i as from its server; a frame the client refuses
 * ends the connection, as a platform would. */
static void raw_to_client(world *wd, int i, fuzz_in *in, bool region)
{
    size_t len, rlen = 0;
    uint8_t *frame = take_frame(in, &len), *data = NULL;
    const px_sink *sink = px_client_sink();
    pmix_status_t rc;

    if (region) {
        const uint8_t *p = fuzz_blob16(in, &rlen);
        data = malloc(rlen > 0 ? rlen : 1);
        FUZZ_CHECK(data != NULL);
        memcpy(data, p, rlen);
        rc = sink->deliver_region(wd->s[i].c, PX_CONN_SERVER, frame, len, data, rlen, release_free,
                                  data);
    } else {
        rc = sink->deliver(wd->s[i].c, PX_CONN_SERVER, frame, len);
    }
    free(frame);
    if (rc != PMIX_SUCCESS) {
        inproc_cut_client(wd->w, wd->s[i].c);
    }
}

/* ---- process sets ---- */

static const char *const pset_names[] = {"ocean", "ice", "tide", ""};

/* A query of the set keys (and, with bit 3, a key only the process could
 * answer, which the server must leave unanswered); with bit 7, a second
 * byte adds keys the host answers (the namespaces, a proc table), so one
 * QUERY goes both ways: sets from the server, the rest from the host. */
static void do_query(world *wd, px_client *c, fuzz_in *in)
{
    uint8_t how = fuzz_u8(in);
    uint8_t more = (how & 0x80) ? fuzz_u8(in) : 0;
    char *qkeys[7];
    size_t n = 0;
    pmix_info_t qual[2];
    pmix_query_t q = {.keys = qkeys, .qualifiers = qual};

    if (how & 0x01)
        qkeys[n++] = PMIX_QUERY_NUM_PSETS;
    if (how & 0x02)
        qkeys[n++] = PMIX_QUERY_PSET_NAMES;
    if (how & 0x04)
        qkeys[n++] = PMIX_QUERY_PSET_MEMBERSHIP;
    if (how & 0x08)
        qkeys[n++] = PMIX_JOB_SIZE;
    if (more & 0x01)
        qkeys[n++] = PMIX_QUERY_NAMESPACES;
    if (more & 0x02)
        qkeys[n++] = PMIX_QUERY_PROC_TABLE;
    qkeys[n] = NULL;
    if (how & 0x10)
        PMIx_Info_load(&qual[q.nqual++], PMIX_PSET_NAME,
                       pset_names[(how >> 5) % NELEMS(pset_names)], PMIX_STRING);
    if (more & 0x04) /* the proc table's namespace: the job's, or another */
        PMIx_Info_load(&qual[q.nqual++], PMIX_NSPACE, (more & 0x08) ? "job" : "other", PMIX_STRING);
    (void)px_client_query(c, &q, 1, info_cb, wd);
    for (size_t i = 0; i < q.nqual; i++)
        PMIx_Info_destruct(&qual[i]);
}

/* The host defines a set of some processes (also none, another
 * namespace's, or a name already taken), or deletes one. */
static void pset_step(world *wd, int i, fuzz_in *in)
{
    uint8_t how = fuzz_u8(in);
    px_server *srv = server_of(wd, i);
    const char *name = pset_names[(how >> 1) % NELEMS(pset_names)];
    pmix_proc_t host, procs[MAX_SLOTS + 1];

    PMIx_Load_procid(&host, "host", 0);
    if (how & 1) {
        (void)px_server_delete_process_set(srv, &host, name);
    } else {
        size_t n = take_procs(in, wd, procs);
        (void)px_server_define_process_set(srv, &host, name, n > 0 ? procs : NULL, n);
    }
}

/* ---- the host ---- */

static void host_step(world *wd, int i, fuzz_in *in)
{
    uint8_t how = fuzz_u8(in);
    px_server *srv = server_of(wd, i);
    pmix_proc_t p;

    PMIx_Load_procid(&p, "job", (pmix_rank_t)i);
    switch (how % 6) {
    case 0: px_server_proc_died(srv, &p, PMIX_ERR_PROC_TERM_WO_SYNC); break;
    case 1: {
        pmix_info_t info;
        int v = how;
        PMIx_Info_load(&info, "pmix.fuzz.ev", &v, PMIX_INT);
        px_server_notify(srv, codes[(how >> 3) % NELEMS(codes)], &p,
                         how & 0x80 ? PMIX_RANGE_NAMESPACE : PMIX_RANGE_SESSION, &info, 1);
        PMIx_Info_destruct(&info);
        break;
    }
    case 2: (void)px_server_dmodex_request(srv, &p, dmodex_cb, NULL); break;
    case 3: px_server_deregister_client(srv, &p); break;
    case 4: (void)px_server_register_client(srv, &p, 1000, 1000, NULL); break;
    default:
        /* the namespace goes, and comes back */
        px_server_deregister_nspace(srv, "job");
        if (how & 0x80) {
            register_job(wd, i / PPN);
        }
        break;
    }
}

static void lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    ((world *)cbdata)->done++;
}

/* Publish, lookup or unpublish with directives from the input: a range
 * and a persistence of any value (the host's service refuses the ones it
 * does not offer), PMIX_WAIT, a timeout. */
static void do_pubsub(world *wd, px_client *c, fuzz_in *in)
{
    uint8_t how = fuzz_u8(in), flags = fuzz_u8(in);
    char k1[PMIX_MAX_KEYLEN + 1], k2[PMIX_MAX_KEYLEN + 1];
    char *names[3] = {k1, (how & 0x04) ? k2 : NULL, NULL};
    pmix_info_t info[6];
    size_t n = 0;
    bool t = true;

    take_key(in, k1);
    take_key(in, k2);
    if (flags & 0x01) {
        pmix_data_range_t r = fuzz_u8(in) % 9;
        PMIx_Info_load(&info[n++], PMIX_RANGE, &r, PMIX_DATA_RANGE);
    }
    if (flags & 0x02) {
        pmix_persistence_t p = fuzz_u8(in) % 6;
        PMIx_Info_load(&info[n++], PMIX_PERSISTENCE, &p, PMIX_PERSIST);
    }
    if (flags & 0x04) {
        PMIx_Info_load(&info[n++], PMIX_WAIT, &t, PMIX_BOOL);
    }
    if (flags & 0x08) {
        uint32_t secs = fuzz_u8(in) % 4;
        PMIx_Info_load(&info[n++], PMIX_TIMEOUT, &secs, PMIX_UINT32);
    }
    switch (how % 3) {
    case 0: {
        /* the data: one or two keys, before the directives */
        pmix_info_t data[8];
        size_t nd = 0;
        pmix_value_t v;
        take_value(in, &v);
        PMIx_Info_load(&data[nd], k1, NULL, PMIX_UNDEF);
        data[nd++].value = v;
        if (how & 0x04) {
            PMIx_Info_load(&data[nd++], k2, "v", PMIX_STRING);
        }
        for (size_t i = 0; i < n; i++) {
            data[nd++] = info[i];
        }
        (void)px_client_publish(c, data, nd, op_cb, wd);
        for (size_t i = 0; i < nd; i++) {
            PMIx_Info_destruct(&data[i]);
        }
        return; /* the directives went with the data */
    }
    case 1: (void)px_client_lookup(c, names, info, n, lookup_cb, wd); break;
    default: (void)px_client_unpublish(c, (how & 0x08) ? NULL : names, info, n, op_cb, wd); break;
    }
    free_info(info, n);
}

/* ---- the script ---- */

static void step(world *wd, fuzz_in *in)
{
    uint8_t op = fuzz_u8(in);
    int i = fuzz_u8(in) % (wd->nodes * PPN);
    slot *s = &wd->s[i];

    switch (op % 25) {
    case 0: connect_client(wd, i); break;
    case 1: do_put(wd, s->c, in); break;
    case 2: (void)px_client_commit(s->c); break;
    case 3: do_fence(wd, s->c, in); break;
    case 4: do_fence_all(wd, in); break;
    case 5: do_get(wd, s->c, in); break;
    case 6: run(wd); break;
    case 7: {
        size_t len;
        uint8_t *frame = take_frame(in, &len);
        inproc_send_raw(wd->w, s->c, frame, len);
        free(frame);
        break;
    }
    case 8: raw_to_client(wd, i, in, false); break;
    case 9: raw_to_client(wd, i, in, true); break;
    case 10: (void)px_client_finalize(s->c, op_cb, wd); break;
    case 11: inproc_kill_client(wd->w, s->c); break;
    case 12:
        new_client(wd, i);
        connect_client(wd, i);
        break;
    case 13: do_events(wd, s->c, in); break;
    case 14: {
        pmix_proc_t procs[MAX_SLOTS + 1];
        size_t n = take_procs(in, wd, procs);
        (void)px_client_abort(s->c, fuzz_u8(in), "fuzz", n > 0 ? procs : NULL, n, op_cb, wd);
        break;
    }
    case 15: {
        pmix_proc_t procs[MAX_SLOTS + 1];
        pmix_info_t info[6];
        size_t n = take_procs(in, wd, procs), ninfo = take_info(in, info);
        (void)px_client_job_control(s->c, n > 0 ? procs : NULL, n, info, ninfo, info_cb, wd);
        free_info(info, ninfo);
        break;
    }
    case 16: host_step(wd, i, in); break;
    case 17: do_page(wd, s, in); break;
    case 18: inproc_cut_client(wd->w, s->c); break;
    case 19:
        /* a put and a commit at once: the usual business card */
        do_put(wd, s->c, in);
        (void)px_client_commit(s->c);
        break;
    case 20: {
        /* the platform's failure knobs */
        uint8_t how = fuzz_u8(in);
        if (how & 1) {
            inproc_refuse_sends(wd->w, s->c);
        } else if (how & 2) {
            inproc_refuse_page(wd->w, s->c);
        } else {
            inproc_fail_client_sends(wd->w, s->c, how >> 2);
        }
        break;
    }
    case 22: do_pubsub(wd, s->c, in); break;
    case 23: do_query(wd, s->c, in); break;
    case 24: pset_step(wd, i, in); break;
    default: {
        pmix_proc_t p;
        char key[PMIX_MAX_KEYLEN + 1];
        pmix_value_t v;
        PMIx_Load_procid(&p, "job", fuzz_u8(in) % (MAX_SLOTS + 1));
        take_key(in, key);
        take_value(in, &v);
        (void)px_client_store_internal(s->c, &p, key, &v);
        PMIx_Value_destruct(&v);
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    world wd;
    fuzz_in in;
    uint8_t setup;

    memset(&wd, 0, sizeof(wd));
    fuzz_in_init(&in, data, size);
    setup = fuzz_u8(&in);
    wd.w = inproc_world_create();
    FUZZ_CHECK(wd.w != NULL);
    if (setup & 0x01) {
        inproc_enable_pages(wd.w);
    }
    wd.nodes = setup & 0x02 ? 2 : 1;
    for (int n = 0; n < wd.nodes; n++) {
        wd.srv[n] = inproc_server(wd.w, n);
        FUZZ_CHECK(wd.srv[n] != NULL);
        register_job(&wd, n);
    }
    for (int i = 0; i < wd.nodes * PPN; i++) {
        new_client(&wd, i);
        if (setup & 0x04) {
            connect_client(&wd, i);
        }
    }
    run(&wd);
    for (int k = 0; k < MAX_STEPS && in.left > 0; k++) {
        step(&wd, &in);
    }
    run(&wd);
    inproc_world_destroy(wd.w);
    return 0;
}
