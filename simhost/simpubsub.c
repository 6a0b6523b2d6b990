/*
 * simpubsub.c - PMIx_Publish, PMIx_Lookup and PMIx_Unpublish in pmixsim:
 * the host core's data service (hostcore/px_pubsub.h) held by node 0, as
 * pmixrun holds it for its job (sockhost/pmixrun_pubsub.c).
 *
 * A node's server engine hands a request to its upcall here; the node
 * packs the keys and infos (PMIx_Data_pack: what a daemon sends pmixrun)
 * and sends them to node 0 as one MSG_PUBSUB over the simulated network,
 * charged at the packed length, and keeps the request's completion in its
 * list until the answer comes. Node 0's actor unpacks the request, asks
 * the service, and sends the answer (MSG_PUBSUB_REP: the status and, for
 * a lookup, the packed keys found) back the same way; a lookup that waits
 * (PMIX_WAIT) is answered later, when a publish satisfies it, when its
 * PMIX_TIMEOUT runs out (a timer on node 0 at the service's next
 * deadline) or when its process ends. A request from a process of node 0
 * takes the same path, across its loopback link. So a published key, a
 * lookup and its answer cost simulated time.
 *
 * The job is one session (1) and one app (0) for the service, as under
 * pmixrun; a rank's node is its simulated node. The service exists once
 * the first request reaches node 0: a run without publish or lookup pays
 * nothing. The event log (--events) has a `pubsub` line per request node
 * 0 serves (and per answer to a lookup that waited).
 */
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "pmixsim.h"
#include "px_pubsub.h"

#define PUBSUB_SESSION 1

enum {
    OP_PUBLISH = 1,
    OP_LOOKUP = 2,
    OP_UNPUBLISH = 3,
    OP_ENDED = 4 /* a process ended (no answer) */
};

static const char *const op_names[] = {"", "publish", "lookup", "unpublish", "ended"};

/* A request of this node's processes waiting for node 0's answer. */
struct sim_ps_wait {
    struct sim_ps_wait *next;
    uint64_t id;
    pmix_op_cbfunc_t opcb;
    pmix_lookup_cbfunc_t lookupcb;
    void *cbdata;
};

/* Where node 0 sends a lookup's answer. */
typedef struct reply_to {
    sim_run *run;
    uint32_t node;
    uint64_t id;
    pmix_rank_t rank;
    bool waited;
} reply_to;

/* ---- node 0: the service ---- */

static void arm_timer(sim_run *run);

static void deadline_fire(void *arg)
{
    sim_run *run = arg;

    run->ps_timer = NULL;
    if (run->pubsub != NULL)
        px_pubsub_expire(run->pubsub, sgw_now());
    arm_timer(run);
}

/* Keep a timer on node 0 at the service's next deadline. */
static void arm_timer(sim_run *run)
{
    double next = px_pubsub_next_deadline(run->pubsub);
    sim_node *n0 = &run->nodes[0];

    if (run->ps_timer != NULL && (next <= 0 || next < run->ps_timer_at)) {
        sim_timer_cancel(&n0->ep, run->ps_timer);
        run->ps_timer = NULL;
    }
    if (next <= 0 || run->ps_timer != NULL)
        return;
    run->ps_timer_at = next;
    run->ps_timer =
        sim_timer_add(&n0->ep, next > sgw_now() ? next - sgw_now() : 0, deadline_fire, run);
}

static void send_answer(sim_run *run, uint32_t node, uint64_t id, pmix_status_t status,
                        const pmix_pdata_t *pd, size_t npd)
{
    pmix_byte_object_t bo;
    sim_msg *m;

    if (px_pubsub_pack_answer(pd, npd, &bo) != PMIX_SUCCESS) {
        status = PMIX_ERR_PACK_FAILURE;
        PMIx_Byte_object_destruct(&bo);
    }
    m = sim_msg_new(MSG_PUBSUB_REP, bo.bytes, bo.size);
    m->from = 0;
    m->tag = id;
    m->status = status;
    (void)sim_send(&run->nodes[node].ep, m, (double)(16 + bo.size));
}

static void lookup_answered(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    reply_to *r = cbdata;

    if (r->run->ps_closing) { /* the run is over: nobody hears it */
        free(r);
        return;
    }
    if (r->waited)
        sim_event(r->run, "pubsub\tanswer\trank %u\t%s", r->rank, PMIx_Error_string(status));
    send_answer(r->run, r->node, r->id, status, data, ndata);
    free(r);
}

static void serve(sim_node *n0, sim_msg *m)
{
    sim_run *run = n0->ep.run;
    px_pubsub_who w = {.proc = m->proc, .session = PUBSUB_SESSION, .app = 0};
    char **keys = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    int op = m->status;
    uint64_t id = m->tag;
    pmix_status_t rc;
    reply_to *rt = NULL;

    w.node = m->proc.rank < run->nprocs ? m->proc.rank / run->opt.ppn : 0;
    if (op == OP_ENDED) {
        if (run->pubsub != NULL)
            px_pubsub_proc_ended(run->pubsub, &m->proc);
        arm_timer(run);
        return;
    }
    if (run->pubsub == NULL && (run->pubsub = px_pubsub_create(NULL)) == NULL) {
        send_answer(run, m->from, id, PMIX_ERR_NOMEM, NULL, 0);
        return;
    }
    rc = px_pubsub_unpack_request(m->data, m->len, &keys, &info, &ninfo);
    if (rc != PMIX_SUCCESS) {
        /* answered below */
    } else if (op == OP_PUBLISH) {
        rc = px_pubsub_publish(run->pubsub, &w, info, ninfo, sgw_now());
    } else if (op == OP_UNPUBLISH) {
        rc = px_pubsub_unpublish(run->pubsub, &w, keys, info, ninfo);
    } else if (op == OP_LOOKUP && (rt = calloc(1, sizeof(*rt))) == NULL) {
        rc = PMIX_ERR_NOMEM;
    } else if (op == OP_LOOKUP) {
        size_t before;
        *rt = (reply_to){.run = run, .node = m->from, .id = id, .rank = m->proc.rank};
        before = px_pubsub_waiting(run->pubsub);
        rc = px_pubsub_lookup(run->pubsub, &w, keys, info, ninfo, sgw_now(), lookup_answered, rt);
        if (rc != PMIX_SUCCESS) {
            free(rt);
        } else {
            if (px_pubsub_waiting(run->pubsub) > before) {
                rt->waited = true; /* not answered yet: it waits */
                sim_event(run, "pubsub\tlookup\trank %u\twaits", m->proc.rank);
            }
            id = 0; /* lookup_answered answers, now or later */
        }
    } else {
        rc = PMIX_ERR_BAD_PARAM;
    }
    if (id != 0) {
        sim_event(run, "pubsub\t%s\trank %u\t%s", op >= 1 && op <= 3 ? op_names[op] : "?",
                  m->proc.rank, PMIx_Error_string(rc));
        send_answer(run, m->from, id, rc, NULL, 0);
    }
    PMIx_Argv_free(keys);
    PMIx_Info_free(info, ninfo);
    arm_timer(run);
}

/* ---- every node: the upcalls and the answers ---- */

static pmix_status_t request(sim_node *n, int op, const pmix_proc_t *proc, char **keys,
                             const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t opcb,
                             pmix_lookup_cbfunc_t lookupcb, void *cbdata)
{
    sim_run *run = n->ep.run;
    struct sim_ps_wait *w = calloc(1, sizeof(*w));
    pmix_byte_object_t bo = {0};
    pmix_status_t rc;
    sim_msg *m;

    if (w == NULL)
        return PMIX_ERR_NOMEM;
    if ((rc = px_pubsub_pack_request(keys, info, ninfo, &bo)) != PMIX_SUCCESS) {
        PMIx_Byte_object_destruct(&bo);
        free(w);
        return rc;
    }
    w->id = ++n->ps_next;
    w->opcb = opcb;
    w->lookupcb = lookupcb;
    w->cbdata = cbdata;
    w->next = n->ps_pend;
    n->ps_pend = w;
    m = sim_msg_new(MSG_PUBSUB, bo.bytes, bo.size);
    m->from = n->id;
    m->proc = *proc;
    m->tag = w->id;
    m->status = op;
    if (sim_send(&run->nodes[0].ep, m, (double)(16 + PMIX_MAX_NSLEN + bo.size)) != 0) {
        n->ps_pend = w->next; /* node 0 is unreachable: nothing was kept */
        free(w);
        return PMIX_ERR_UNREACH;
    }
    return PMIX_SUCCESS;
}

pmix_status_t sim_host_publish(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                               size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return request(hctx, OP_PUBLISH, proc, NULL, info, ninfo, cbfunc, NULL, cbdata);
}

pmix_status_t sim_host_lookup(void *hctx, const pmix_proc_t *proc, char **keys,
                              const pmix_info_t info[], size_t ninfo, pmix_lookup_cbfunc_t cbfunc,
                              void *cbdata)
{
    return request(hctx, OP_LOOKUP, proc, keys, info, ninfo, NULL, cbfunc, cbdata);
}

pmix_status_t sim_host_unpublish(void *hctx, const pmix_proc_t *proc, char **keys,
                                 const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata)
{
    return request(hctx, OP_UNPUBLISH, proc, keys, info, ninfo, cbfunc, NULL, cbdata);
}

/* An answer from node 0: complete the request it names. */
static void answered(sim_node *n, sim_msg *m)
{
    struct sim_ps_wait **pp = &n->ps_pend, *w;
    pmix_pdata_t *pd = NULL;
    size_t npd = 0;
    pmix_status_t status = m->status;

    while (*pp != NULL && (*pp)->id != m->tag)
        pp = &(*pp)->next;
    if ((w = *pp) == NULL)
        return;
    *pp = w->next;
    if (w->lookupcb != NULL && m->len > 0) {
        pmix_status_t rc = px_pubsub_unpack_answer(m->data, m->len, &pd, &npd);
        if (rc != PMIX_SUCCESS)
            status = rc;
    }
    if (w->lookupcb != NULL)
        w->lookupcb(
            status, status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS ? pd : NULL,
            status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS ? npd : 0, w->cbdata);
    else if (w->opcb != NULL)
        w->opcb(status, w->cbdata);
    if (pd != NULL)
        PMIx_Pdata_free(pd, npd);
    free(w);
}

void sim_pubsub_dispatch(sim_node *n, sim_msg *m)
{
    if (m->kind == MSG_PUBSUB)
        serve(n, m);
    else
        answered(n, m);
}

void sim_pubsub_proc_ended(sim_node *n, const pmix_proc_t *proc)
{
    sim_msg *m;

    if (n->ep.run->pubsub == NULL)
        return; /* nothing was ever published or looked up */
    m = sim_msg_new(MSG_PUBSUB, NULL, 0);
    m->from = n->id;
    m->proc = *proc;
    m->status = OP_ENDED;
    (void)sim_send(&n->ep.run->nodes[0].ep, m, 16 + PMIX_MAX_NSLEN);
}

void sim_pubsub_fini(sim_run *run)
{
    /* Lookups still waiting when the run ends: their reply_to goes, and
     * nobody hears the answer (the processes have ended). */
    run->ps_closing = true;
    for (uint32_t i = 0; run->nodes != NULL && i < run->nnodes; i++) {
        while (run->nodes[i].ps_pend != NULL) {
            struct sim_ps_wait *w = run->nodes[i].ps_pend;
            run->nodes[i].ps_pend = w->next;
            free(w);
        }
    }
    if (run->pubsub != NULL) {
        px_pubsub_cancel_all(run->pubsub, PMIX_ERR_UNREACH);
        px_pubsub_destroy(run->pubsub);
        run->pubsub = NULL;
    }
}
