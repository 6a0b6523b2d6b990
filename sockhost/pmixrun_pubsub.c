/*
 * pmixrun_pubsub.c - publish, lookup and unpublish for a pmixrun job.
 *
 * pmixrun is the one place where a job's namespace, session and global
 * ranges meet, so it keeps the job's data service (the host core's,
 * hostcore/px_pubsub.h). The job is one session (1) and one app (0); a
 * rank's node is its node in the map.
 *
 *   pmixrun alone   its server engine's upcalls (pmixrun_job.c, on the
 *                   main loop) call the service; the loop ends lookups
 *                   at their deadline
 *                   (pubsub_timeout_ms, pubsub_tick) and tells the service
 *                   when a rank ends (pubsub_rank_ended).
 *   --nodes K       each pmixd's upcalls forward the request to pmixrun
 *                   over the control connection (PD_PUBSUB) and keep its
 *                   completion until the answer (PD_PUBSUB_REP) comes;
 *                   pmixrun's main loop runs the service and answers
 *                   (pubsub_frame). A daemon that goes away answers what
 *                   it still waits for with PMIX_ERR_UNREACH.
 *
 * A request's body travels packed with PMIx_Data_pack: u8 has-keys, then
 * (if so) u32 n and n strings, then u32 n and n infos; an answer's body
 * is u32 n and n pdata. docs/pmixd.md lists the frames.
 *
 * Limits: the service's (px_pubsub.h: 256 entries and 1 MiB per rank, 16
 * waiting lookups per rank, 64 MiB in all); a daemon forwards no more
 * than PUBSUB_PENDING_MAX requests at a time and refuses the rest with
 * PMIX_ERR_OUT_OF_RESOURCE.
 *
 * Everything takes the job, which the engine's upcalls carry
 * (px_server_host); the state hangs off it (job.pubsub), so there is no
 * global. One thread runs it all: pmixrun's and pmixd's loop.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "pmixd_proto.h"
#include "pmixrun.h"
#include "px_pubsub.h"
#include "tcplink.h"

#define PUBSUB_SESSION 1
#define PUBSUB_PENDING_MAX 4096

enum {
    OP_PUBLISH = 1,
    OP_LOOKUP = 2,
    OP_UNPUBLISH = 3
};

/* A request a daemon forwarded, waiting for pmixrun's answer. */
typedef struct pending {
    struct pending *next;
    uint32_t id;
    int op;
    pmix_op_cbfunc_t opcb;
    pmix_lookup_cbfunc_t lookupcb;
    void *cbdata;
} pending;

/* A frame for pmixrun that an upcall made, for the main thread to send. */
typedef struct outframe {
    struct outframe *next;
    tl_buf b;
} outframe;

/* The job's (job.pubsub): made by pubsub_init, freed by pubsub_stop. */
struct pubsub_state {
    bool forwarding; /* pmixd: requests go to pmixrun */
    px_pubsub *ps;   /* pmixrun: the service */
    /* pmixd: requests forwarded and frames not sent yet */
    pending *pend;
    size_t npend;
    uint32_t next_id;
    outframe *out, **out_tail;
};

/* Who `proc` is for the service: every namespace pmixrun runs is in its
 * one session; a rank of the job is on its node of the map. */
static px_pubsub_who who_of(job *j, const pmix_proc_t *proc)
{
    px_pubsub_who w = {.proc = *proc, .session = PUBSUB_SESSION, .app = 0};
    bool ours = strncmp(proc->nspace, j->nspace, PMIX_MAX_NSLEN) == 0;

    w.node =
        ours && proc->rank < (pmix_rank_t)j->nprocs ? (uint32_t)job_node_of(j, (int)proc->rank) : 0;
    return w;
}

static void fail_pending(pubsub_state *S);

/* ---- pmixrun: the service ---- */

int pubsub_start(job *j)
{
    pubsub_state *S;

    if (pubsub_init(j, false) != 0)
        return -1;
    S = j->pubsub;
    S->ps = px_pubsub_create(NULL);
    if (S->ps == NULL) {
        fprintf(stderr, "pmixrun: out of memory\n");
        return -1;
    }
    return 0;
}

void pubsub_stop(job *j)
{
    pubsub_state *S = j->pubsub;

    if (S == NULL)
        return;
    if (S->ps != NULL)
        px_pubsub_cancel_all(S->ps, PMIX_ERR_UNREACH);
    px_pubsub_destroy(S->ps);
    fail_pending(S);
    free(S);
    j->pubsub = NULL;
}

int pubsub_timeout_ms(job *j)
{
    pubsub_state *S = j->pubsub;
    double next = S != NULL && S->ps != NULL ? px_pubsub_next_deadline(S->ps) : 0;
    if (next <= 0)
        return -1;
    double ms = (next - now_s()) * 1000.0;
    return ms <= 0 ? 0 : ms > 3600e3 ? 3600000 : (int)ms + 1;
}

void pubsub_tick(job *j)
{
    pubsub_state *S = j->pubsub;

    if (S != NULL && S->ps != NULL)
        px_pubsub_expire(S->ps, now_s());
}

void pubsub_rank_ended(job *j, int rank)
{
    pmix_proc_t p;

    PMIx_Load_procid(&p, j->nspace, (pmix_rank_t)rank);
    if (j->pubsub != NULL && j->pubsub->ps != NULL)
        px_pubsub_proc_ended(j->pubsub->ps, &p);
}

/* The requests on pmixrun's own server: the service answers, at once or
 * (a lookup that waits) later from pubsub_tick, pubsub_rank_ended or
 * another request's publish, on the loop's thread. */
static pmix_status_t serve_publish(job *j, const pmix_proc_t *proc, const pmix_info_t info[],
                                   size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_pubsub_who w = who_of(j, proc);
    pmix_status_t rc = px_pubsub_publish(j->pubsub->ps, &w, info, ninfo, now_s());
    return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
}

static pmix_status_t serve_lookup(job *j, const pmix_proc_t *proc, char **keys,
                                  const pmix_info_t info[], size_t ninfo,
                                  pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    px_pubsub_who w = who_of(j, proc);
    pmix_status_t rc =
        px_pubsub_lookup(j->pubsub->ps, &w, keys, info, ninfo, now_s(), cbfunc, cbdata);
    return rc; /* the loop asks pubsub_timeout_ms after this turn */
}

static pmix_status_t serve_unpublish(job *j, const pmix_proc_t *proc, char **keys,
                                     const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_pubsub_who w = who_of(j, proc);
    pmix_status_t rc = px_pubsub_unpublish(j->pubsub->ps, &w, keys, info, ninfo);
    return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
}

/* ---- pmixrun --nodes: requests from the daemons ---- */

/* Where a lookup's answer goes: the daemon's link and the request id. */
typedef struct reply_to {
    tl_link *link;
    uint32_t id;
} reply_to;

static void send_reply(tl_link *link, uint32_t id, pmix_status_t status, const pmix_pdata_t *pd,
                       size_t npd)
{
    tl_buf b = {0};
    pmix_byte_object_t bo;

    if (px_pubsub_pack_answer(pd, npd, &bo) != PMIX_SUCCESS)
        status = PMIX_ERR_PACK_FAILURE;
    tl_put_u32(&b, id);
    tl_put_u32(&b, (uint32_t)status);
    tl_put_bytes(&b, bo.bytes, status == PMIX_ERR_PACK_FAILURE ? 0 : bo.size);
    if (link->fd >= 0)
        tl_send(link, PD_PUBSUB_REP, &b);
    tl_buf_free(&b);
    PMIx_Byte_object_destruct(&bo);
}

static void lookup_answered(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    reply_to *r = cbdata;

    send_reply(r->link, r->id, status, data, ndata);
    free(r);
}

void pubsub_frame(job *j, tl_link *from, const uint8_t *p, size_t len)
{
    tl_reader r = {.p = p, .left = len};
    uint32_t id = tl_get_u32(&r);
    char *ns = tl_get_str(&r);
    uint32_t rank = tl_get_u32(&r);
    uint8_t op = tl_get_u8(&r);
    size_t n = 0;
    const void *body = tl_get_bytes(&r, &n);
    char **keys = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    pmix_status_t rc;
    reply_to *rt;

    pmix_proc_t proc;
    pubsub_state *S = j->pubsub;
    if (r.bad || ns == NULL || strlen(ns) > PMIX_MAX_NSLEN || S == NULL || S->ps == NULL) {
        free(ns);
        return; /* a daemon of this job does not send that: nothing to answer */
    }
    PMIx_Load_procid(&proc, ns, rank);
    free(ns);
    rc = px_pubsub_unpack_request(body, n, &keys, &info, &ninfo);
    px_pubsub_who w = who_of(j, &proc);
    if (rc != PMIX_SUCCESS) {
        /* answered below */
    } else if (op == OP_PUBLISH) {
        rc = px_pubsub_publish(S->ps, &w, info, ninfo, now_s());
    } else if (op == OP_UNPUBLISH) {
        rc = px_pubsub_unpublish(S->ps, &w, keys, info, ninfo);
    } else if (op == OP_LOOKUP) {
        if ((rt = malloc(sizeof(*rt))) == NULL) {
            rc = PMIX_ERR_NOMEM;
        } else {
            rt->link = from;
            rt->id = id;
            rc = px_pubsub_lookup(S->ps, &w, keys, info, ninfo, now_s(), lookup_answered, rt);
            if (rc != PMIX_SUCCESS)
                free(rt);
            else
                id = 0; /* lookup_answered answers, now or later */
        }
    } else {
        rc = PMIX_ERR_BAD_PARAM;
    }
    if (id != 0 || rc != PMIX_SUCCESS)
        send_reply(from, id, rc, NULL, 0);
    PMIx_Argv_free(keys);
    PMIx_Info_free(info, ninfo);
}

/* ---- pmixd: forwarding ---- */

static void forward(job *j, int op, const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                    size_t ninfo, pending *pd, pmix_status_t *rc)
{
    pubsub_state *S = j->pubsub;

    outframe *of = calloc(1, sizeof(*of));

    *rc = PMIX_SUCCESS;
    if (of == NULL) {
        *rc = PMIX_ERR_NOMEM;
    } else if (S->npend >= PUBSUB_PENDING_MAX) {
        *rc = PMIX_ERR_OUT_OF_RESOURCE;
    } else {
        if (++S->next_id == 0)
            S->next_id = 1;
        pd->id = S->next_id;
        pd->op = op;
        tl_put_u32(&of->b, pd->id);
        tl_put_str(&of->b, proc->nspace);
        tl_put_u32(&of->b, proc->rank);
        tl_put_u8(&of->b, (uint8_t)op);
        pmix_byte_object_t bo;
        *rc = px_pubsub_pack_request(keys, info, ninfo, &bo);
        if (*rc == PMIX_SUCCESS)
            tl_put_bytes(&of->b, bo.bytes, bo.size);
        PMIx_Byte_object_destruct(&bo);
        if (*rc == PMIX_SUCCESS && of->b.failed)
            *rc = PMIX_ERR_NOMEM;
    }
    if (*rc == PMIX_SUCCESS) {
        pd->next = S->pend;
        S->pend = pd;
        S->npend++;
        *S->out_tail = of;
        S->out_tail = &of->next;
    }
    if (*rc != PMIX_SUCCESS) {
        if (of != NULL)
            tl_buf_free(&of->b);
        free(of);
        free(pd);
    } /* the loop sends it after this turn (pubsub_flush) */
}

/* One request of this daemon's ranks, forwarded to pmixrun; exactly one
 * of opcb and lookupcb is set. */
static pmix_status_t forward_new(job *j, int op, const pmix_proc_t *proc, char **keys,
                                 const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t opcb,
                                 pmix_lookup_cbfunc_t lookupcb, void *cbdata)
{
    pending *pd = calloc(1, sizeof(*pd));
    pmix_status_t rc;

    if (pd == NULL)
        return PMIX_ERR_NOMEM;
    pd->opcb = opcb;
    pd->lookupcb = lookupcb;
    pd->cbdata = cbdata;
    forward(j, op, proc, keys, info, ninfo, pd, &rc);
    return rc;
}

static pmix_status_t forward_publish(job *j, const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return forward_new(j, OP_PUBLISH, proc, NULL, info, ninfo, cbfunc, NULL, cbdata);
}

static pmix_status_t forward_lookup(job *j, const pmix_proc_t *proc, char **keys,
                                    const pmix_info_t info[], size_t ninfo,
                                    pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    return forward_new(j, OP_LOOKUP, proc, keys, info, ninfo, NULL, cbfunc, cbdata);
}

static pmix_status_t forward_unpublish(job *j, const pmix_proc_t *proc, char **keys,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return forward_new(j, OP_UNPUBLISH, proc, keys, info, ninfo, cbfunc, NULL, cbdata);
}

void pubsub_flush(job *j, tl_link *parent)
{
    pubsub_state *S = j->pubsub;

    if (S == NULL)
        return;
    outframe *list = S->out;
    S->out = NULL;
    S->out_tail = &S->out;
    while (list != NULL) {
        outframe *of = list;
        list = of->next;
        if (parent->fd >= 0)
            tl_send(parent, PD_PUBSUB, &of->b);
        tl_buf_free(&of->b);
        free(of);
    }
}

static void complete(pending *pd, pmix_status_t status, pmix_pdata_t *data, size_t ndata)
{
    if (pd->opcb != NULL)
        pd->opcb(status, pd->cbdata);
    else if (pd->lookupcb != NULL)
        pd->lookupcb(status, data, ndata, pd->cbdata);
    free(pd);
}

void pubsub_answer(job *j, const uint8_t *p, size_t len)
{
    pubsub_state *S = j->pubsub;
    tl_reader r = {.p = p, .left = len};
    uint32_t id = tl_get_u32(&r);
    pmix_status_t status = (pmix_status_t)tl_get_u32(&r);
    size_t n = 0;
    const void *body = tl_get_bytes(&r, &n);
    pending *pd = NULL;
    pmix_pdata_t *data = NULL;
    size_t nd = 0;

    if (r.bad || S == NULL)
        return;
    for (pending **pp = &S->pend; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            pd = *pp;
            *pp = pd->next;
            S->npend--;
            break;
        }
    }
    if (pd == NULL)
        return;
    if (pd->op == OP_LOOKUP && n > 0 && status != PMIX_ERR_PACK_FAILURE) {
        pmix_status_t rc = px_pubsub_unpack_answer(body, n, &data, &nd);
        if (rc != PMIX_SUCCESS)
            status = rc;
    }
    complete(pd, status, data, nd);
    if (data != NULL)
        PMIx_Pdata_free(data, nd);
}

static void fail_pending(pubsub_state *S)
{
    pending *list = S->pend;
    S->pend = NULL;
    S->npend = 0;
    outframe *out = S->out;
    S->out = NULL;
    S->out_tail = &S->out;
    while (list != NULL) {
        pending *pd = list;
        list = pd->next;
        complete(pd, PMIX_ERR_UNREACH, NULL, 0);
    }
    while (out != NULL) {
        outframe *of = out;
        out = of->next;
        tl_buf_free(&of->b);
        free(of);
    }
}

/* ---- the requests ---- */

pmix_status_t pubsub_publish(job *j, const pmix_proc_t *proc, const pmix_info_t info[],
                             size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    if (j->pubsub == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return j->pubsub->forwarding ? forward_publish(j, proc, info, ninfo, cbfunc, cbdata)
                                 : serve_publish(j, proc, info, ninfo, cbfunc, cbdata);
}

pmix_status_t pubsub_lookup(job *j, const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                            size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    if (j->pubsub == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return j->pubsub->forwarding ? forward_lookup(j, proc, keys, info, ninfo, cbfunc, cbdata)
                                 : serve_lookup(j, proc, keys, info, ninfo, cbfunc, cbdata);
}

pmix_status_t pubsub_unpublish(job *j, const pmix_proc_t *proc, char **keys,
                               const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                               void *cbdata)
{
    if (j->pubsub == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return j->pubsub->forwarding ? forward_unpublish(j, proc, keys, info, ninfo, cbfunc, cbdata)
                                 : serve_unpublish(j, proc, keys, info, ninfo, cbfunc, cbdata);
}

int pubsub_init(job *j, bool forwarding)
{
    if (j->pubsub == NULL && (j->pubsub = calloc(1, sizeof(*j->pubsub))) == NULL) {
        fprintf(stderr, "pmixrun: out of memory\n");
        return -1;
    }
    j->pubsub->forwarding = forwarding;
    j->pubsub->out_tail = &j->pubsub->out;
    return 0;
}
