/*
 * fuzz_hc.c - libFuzzer target for the host core's px_hc
 * (hostcore/hc.c): four nodes of an 8-rank job wired by an in-process
 * FIFO, driven by a script (fuzz_input.h) that mixes what hosts do with
 * what a broken or hostile peer would send.
 *
 *   fence      a fence_nb upcall on a node: participants from a bit mask
 *              (or the whole job), collecting or not, an algorithm from a
 *              table (some unusable), a timeout, a local failure
 *   group      a group construct or destruct, with or without a context id
 *   dmodex     a direct modex request for a rank
 *   raw        bytes from the input delivered to a node as a message from
 *              any node id (in the job or not)
 *   mangle     the oldest queued real message has bytes flipped, is cut
 *              short or grows, before it is delivered
 *   deliver    the FIFO's next message is delivered (or all of them)
 *   timer      the clock moves to the next timer, which fires
 *   fail       a rank dies (the job breaks), a node is lost, a rank leaves
 *   pubsub     bytes from the input read as a data-service request or
 *              answer body (px_pubsub.h), as pmixrun and pmixsim's node 0
 *              read what another node sends; what reads back must pack
 *              again and read back the same
 *
 * Checked: every callback of a fence, group operation or direct modex
 * comes at most once; the core never sends to a node outside the job nor
 * to itself; messages a core refuses change nothing that later crashes.
 * At the end the FIFO is drained, the cores destroyed (every timer
 * cancelled) and ASan's leak check sees everything freed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "fuzz_input.h"
#include "px_hostcore.h"
#include "px_pubsub.h"

#define NODES 4
#define PPN 2
#define MAX_STEPS 96
#define MAX_CALLS 128

typedef struct msg {
    struct msg *next;
    uint32_t from, to;
    uint8_t *data;
    size_t len;
} msg;

struct px_coll_timer {
    struct px_coll_timer *next;
    double at;
    void (*cb)(void *);
    void *arg;
};

typedef struct world world;
typedef struct fnode {
    world *w;
    uint32_t id;
    px_hc *hc;
    uint64_t ctxids;
} fnode;

struct world {
    px_jobmap map;
    fnode nodes[NODES];
    msg *head, *tail;
    px_coll_timer *timers;
    double now;
    bool refuse[NODES]; /* sends to it fail: unreachable */
    unsigned calls[MAX_CALLS];
    unsigned ncalls;
};

/* ---- callbacks: each call slot answered at most once ---- */

static void once(void *cbdata)
{
    unsigned *c = cbdata;
    FUZZ_CHECK(*c == 0);
    (*c)++;
}

static void fence_cb(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                     pmix_release_cbfunc_t rel, void *arg)
{
    once(cbdata);
    if (rel != NULL)
        rel(arg);
}

static void group_cb(pmix_status_t status, bool has, uint64_t ctxid, const char *data, size_t ndata,
                     void *cbdata, pmix_release_cbfunc_t rel, void *arg)
{
    once(cbdata);
    if (rel != NULL)
        rel(arg);
}

static unsigned *slot(world *w)
{
    return w->ncalls < MAX_CALLS ? &w->calls[w->ncalls++] : NULL;
}

/* ---- ops ---- */

static pmix_status_t op_send(void *ctx, uint32_t to, void *data, size_t len, const px_hc_sent *what)
{
    fnode *nd = ctx;
    world *w = nd->w;
    msg *m;

    FUZZ_CHECK(to < NODES && to != nd->id);
    if (w->refuse[to] || (m = calloc(1, sizeof(*m))) == NULL) {
        free(data);
        return PMIX_ERR_UNREACH;
    }
    *m = (msg){.from = nd->id, .to = to, .data = data, .len = len};
    if (w->tail != NULL)
        w->tail->next = m;
    else
        w->head = m;
    w->tail = m;
    return PMIX_SUCCESS;
}

static px_coll_timer *op_timer_start(void *ctx, double s, void (*cb)(void *), void *arg)
{
    world *w = ((fnode *)ctx)->w;
    px_coll_timer *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return NULL;
    *t = (px_coll_timer){.next = w->timers, .at = w->now + s, .cb = cb, .arg = arg};
    w->timers = t;
    return t;
}

static void op_timer_cancel(void *ctx, px_coll_timer *t)
{
    world *w = ((fnode *)ctx)->w;
    for (px_coll_timer **pp = &w->timers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            free(t);
            return;
        }
    }
    FUZZ_CHECK(!"a timer cancelled that is not running");
}

static double op_now(void *ctx)
{
    return ((fnode *)ctx)->w->now;
}

static pmix_status_t op_dmodex_local(void *ctx, const pmix_proc_t *proc,
                                     pmix_dmodex_response_fn_t cb, void *cbdata)
{
    static const char rec[] = "record";
    if (proc->rank % 3 == 2)
        return PMIX_ERR_NOT_FOUND;
    cb(PMIX_SUCCESS, (char *)rec, sizeof(rec), cbdata);
    return PMIX_SUCCESS;
}

static uint64_t op_ctxid(void *ctx)
{
    fnode *nd = ctx;
    return (uint64_t)nd->id << 32 | ++nd->ctxids;
}

static const px_hc_ops ops = {
    .version = PX_HC_OPS_VERSION,
    .send = op_send,
    .timer_start = op_timer_start,
    .timer_cancel = op_timer_cancel,
    .now = op_now,
    .dmodex_local = op_dmodex_local,
    .ctxid = op_ctxid,
};

/* ---- the world ---- */

static void deliver_one(world *w)
{
    msg *m = w->head;
    if (m == NULL)
        return;
    w->head = m->next;
    if (w->head == NULL)
        w->tail = NULL;
    (void)px_hc_deliver(w->nodes[m->to].hc, m->from, m->data, m->len);
    free(m->data);
    free(m);
}

static void fire_timer(world *w)
{
    px_coll_timer *first = w->timers, **fp = &w->timers;
    if (first == NULL)
        return;
    for (px_coll_timer **pp = &w->timers; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->at < first->at) {
            first = *pp;
            fp = pp;
        }
    }
    *fp = first->next;
    if (first->at > w->now)
        w->now = first->at;
    first->cb(first->arg);
    free(first);
}

static size_t procs_of(fuzz_in *in, pmix_proc_t *procs)
{
    uint8_t mask = fuzz_u8(in);
    size_t n = 0;

    if (mask == 0) {
        PMIx_Load_procid(&procs[n++], "fz", PMIX_RANK_WILDCARD);
        return n;
    }
    for (uint32_t r = 0; r < NODES * PPN; r++)
        if (mask & (1u << r))
            PMIx_Load_procid(&procs[n++], r == 7 && (mask & 0x40) ? "other" : "fz", r);
    return n;
}

static const char *const algos[] = {NULL,   "ring",   "recdbl", "bruck", "tree:3", "dissemination",
                                    "hier", "nosuch", "tree:0"};

/* A request body read back from bytes packs again, and that reads back
 * with the same keys and directives. */
static void pubsub_request(const uint8_t *p, size_t len)
{
    char **keys = NULL, **keys2 = NULL;
    pmix_info_t *info = NULL, *info2 = NULL;
    size_t ninfo = 0, ninfo2 = 0;
    pmix_byte_object_t bo = {0};

    if (px_pubsub_unpack_request(p, len, &keys, &info, &ninfo) != PMIX_SUCCESS) {
        FUZZ_CHECK(keys == NULL && info == NULL);
        return;
    }
    FUZZ_CHECK(px_pubsub_pack_request(keys, info, ninfo, &bo) == PMIX_SUCCESS);
    FUZZ_CHECK(px_pubsub_unpack_request(bo.bytes, bo.size, &keys2, &info2, &ninfo2) ==
               PMIX_SUCCESS);
    FUZZ_CHECK(ninfo2 == ninfo && (keys == NULL) == (keys2 == NULL));
    for (size_t i = 0; keys != NULL && keys[i] != NULL; i++)
        FUZZ_CHECK(keys2[i] != NULL && strcmp(keys[i], keys2[i]) == 0);
    for (size_t i = 0; i < ninfo; i++)
        FUZZ_CHECK(PMIx_Check_key(info[i].key, info2[i].key) &&
                   info[i].value.type == info2[i].value.type);
    PMIx_Argv_free(keys);
    PMIx_Argv_free(keys2);
    PMIx_Info_free(info, ninfo);
    PMIx_Info_free(info2, ninfo2);
    PMIx_Byte_object_destruct(&bo);
}

/* The same for a lookup's answer. */
static void pubsub_answer(const uint8_t *p, size_t len)
{
    pmix_pdata_t *pd = NULL, *pd2 = NULL;
    size_t npd = 0, npd2 = 0;
    pmix_byte_object_t bo = {0};

    if (px_pubsub_unpack_answer(p, len, &pd, &npd) != PMIX_SUCCESS) {
        FUZZ_CHECK(pd == NULL);
        return;
    }
    FUZZ_CHECK(px_pubsub_pack_answer(pd, npd, &bo) == PMIX_SUCCESS);
    FUZZ_CHECK(px_pubsub_unpack_answer(bo.bytes, bo.size, &pd2, &npd2) == PMIX_SUCCESS);
    FUZZ_CHECK(npd2 == npd);
    for (size_t i = 0; i < npd; i++)
        FUZZ_CHECK(PMIx_Check_key(pd[i].key, pd2[i].key) &&
                   PMIx_Check_procid(&pd[i].proc, &pd2[i].proc) &&
                   pd[i].value.type == pd2[i].value.type);
    PMIx_Pdata_free(pd, npd);
    PMIx_Pdata_free(pd2, npd2);
    PMIx_Byte_object_destruct(&bo);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    world *w = calloc(1, sizeof(*w));
    fuzz_in in;

    if (w == NULL)
        return 0;
    fuzz_in_init(&in, data, size);
    w->map = (px_jobmap){.nspace = "fz", .nprocs = NODES * PPN, .nnodes = NODES, .ppn = PPN};
    for (uint32_t i = 0; i < NODES; i++) {
        px_hc_config cfg = {.node = i, .job = &w->map, .dmx_tries = 2, .coll_timeout = 5};
        w->nodes[i].w = w;
        w->nodes[i].id = i;
        w->nodes[i].hc = px_hc_create(&ops, &w->nodes[i], &cfg);
        FUZZ_CHECK(w->nodes[i].hc != NULL);
    }
    for (int step = 0; step < MAX_STEPS && in.left > 0; step++) {
        uint8_t op = fuzz_u8(&in);
        uint32_t nd = fuzz_u8(&in) % NODES;
        px_hc *hc = w->nodes[nd].hc;
        pmix_proc_t procs[NODES * PPN + 1];
        unsigned *c;

        switch (op % 10) {
        case 0: { /* fence */
            size_t n = procs_of(&in, procs), ninfo = 0, got;
            uint8_t flags = fuzz_u8(&in);
            const char *algo = algos[fuzz_u8(&in) % (sizeof(algos) / sizeof(algos[0]))];
            const uint8_t *d = fuzz_blob8(&in, &got);
            pmix_info_t info[4];
            bool yes = true;
            int tmo = flags >> 4;
            pmix_status_t bad = PMIX_ERR_PROC_TERM_WO_SYNC;
            if (flags & 1)
                PMIx_Info_load(&info[ninfo++], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
            if (algo != NULL)
                PMIx_Info_load(&info[ninfo++], flags & 1 ? PX_COLL_KEY_FENCE : PX_COLL_KEY_BARRIER,
                               algo, PMIX_STRING);
            if (tmo > 0)
                PMIx_Info_load(&info[ninfo++], PMIX_TIMEOUT, &tmo, PMIX_INT);
            if (flags & 2)
                PMIx_Info_load(&info[ninfo++], PMIX_LOCAL_COLLECTIVE_STATUS, &bad, PMIX_STATUS);
            if ((c = slot(w)) != NULL &&
                px_hc_fence(hc, procs, n, info, ninfo, (char *)d, got, fence_cb, c) != PMIX_SUCCESS)
                FUZZ_CHECK(*c == 0); /* an error: never called */
            for (size_t i = 0; i < ninfo; i++)
                PMIx_Info_destruct(&info[i]);
            break;
        }
        case 1: { /* group */
            size_t n = procs_of(&in, procs), got;
            uint8_t flags = fuzz_u8(&in);
            const uint8_t *d = fuzz_blob8(&in, &got);
            px_hc_group_req req = {
                .op = flags & 1 ? PMIX_GROUP_DESTRUCT : PMIX_GROUP_CONSTRUCT,
                .grp = flags & 2 ? "ocean" : "ice",
                .procs = procs,
                .nprocs = n,
                .assign_ctxid = flags & 4,
                .timeout = (flags >> 4) & 3,
                .local_status = flags & 8 ? PMIX_ERR_TIMEOUT : PMIX_SUCCESS,
                .data = (const char *)d,
                .ndata = got,
            };
            if ((c = slot(w)) != NULL && px_hc_group(hc, &req, group_cb, c) != PMIX_SUCCESS)
                FUZZ_CHECK(*c == 0);
            break;
        }
        case 2: { /* dmodex */
            pmix_proc_t p;
            PMIx_Load_procid(&p, fuzz_u8(&in) & 0x80 ? "other" : "fz", fuzz_u8(&in) % 10);
            if ((c = slot(w)) != NULL && px_hc_dmodex(hc, &p, NULL, 0, fence_cb, c) != PMIX_SUCCESS)
                FUZZ_CHECK(*c == 0);
            break;
        }
        case 3: { /* raw bytes from any node id */
            size_t got;
            uint32_t from = fuzz_u8(&in) % (NODES + 2);
            const uint8_t *d = fuzz_blob16(&in, &got);
            uint8_t *copy = got > 0 ? malloc(got) : NULL; /* exact, for ASan */
            if (got > 0 && copy == NULL)
                break;
            if (got > 0)
                memcpy(copy, d, got);
            (void)px_hc_deliver(hc, from, copy, got);
            free(copy);
            break;
        }
        case 4: { /* mangle the oldest queued message */
            msg *m = w->head;
            uint8_t how = fuzz_u8(&in), at = fuzz_u8(&in), val = fuzz_u8(&in);
            if (m == NULL || m->len == 0)
                break;
            if (how % 3 == 0) {
                m->data[at % m->len] ^= val ? val : 1;
            } else if (how % 3 == 1) {
                m->len = at % m->len; /* cut short */
            } else {
                uint8_t *g = realloc(m->data, m->len + 1 + at);
                if (g == NULL)
                    break;
                memset(g + m->len, val, 1 + at);
                m->data = g;
                m->len += 1 + at;
            }
            break;
        }
        case 5: /* deliver one */ deliver_one(w); break;
        case 6: /* deliver everything queued */
            while (w->head != NULL)
                deliver_one(w);
            break;
        case 7: /* fire a timer */ fire_timer(w); break;
        case 8: { /* failures */
            uint8_t what = fuzz_u8(&in);
            if (what % 4 == 0)
                px_hc_break(hc, what % (NODES * PPN), what & 0x10, "fuzz");
            else if (what % 4 == 1) {
                uint32_t lost = (what >> 2) % NODES;
                w->refuse[lost] = true;
                for (uint32_t i = 0; i < NODES; i++)
                    if (i != lost)
                        px_hc_node_lost(w->nodes[i].hc, lost);
            } else if (what % 4 == 2)
                px_hc_departed(hc, (what >> 2) % (NODES * PPN + 1), what & 0x80);
            break;
        }
        case 9: { /* a data-service body from another node */
            size_t got;
            const uint8_t *d = fuzz_blob16(&in, &got);
            uint8_t *copy = malloc(got + 1); /* exact, for ASan */
            if (copy == NULL)
                break;
            memcpy(copy, d, got);
            if (nd & 1)
                pubsub_answer(copy, got);
            else
                pubsub_request(copy, got);
            free(copy);
            break;
        }
        default: break;
        }
    }
    /* drain: messages and timers may answer what is pending */
    for (int i = 0; i < 10000 && (w->head != NULL || w->timers != NULL); i++) {
        if (w->head != NULL)
            deliver_one(w);
        else
            fire_timer(w);
    }
    for (uint32_t i = 0; i < NODES; i++)
        px_hc_destroy(w->nodes[i].hc);
    while (w->head != NULL) {
        msg *m = w->head;
        w->head = m->next;
        free(m->data);
        free(m);
    }
    FUZZ_CHECK(w->timers == NULL); /* destroy cancelled every timer */
    free(w);
    return 0;
}
