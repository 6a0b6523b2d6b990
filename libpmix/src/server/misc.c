/*
 * misc.c - the server's smaller requests: abort, events, job control.
 *
 * Each request that needs the host becomes one upcall whose callback
 * sends the reply; a small `px_hreq` remembers whom to answer. If the
 * client disconnects meanwhile, the reply is dropped (px_srv_send checks
 * the connection).
 */
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

typedef struct px_hreq {
    px_server *srv;
    pmix_proc_t proc; /* the requester, looked up again when the host answers */
    uint32_t tag;
} px_hreq;

static px_hreq *hreq_new(px_server *s, px_sclient *c, uint32_t tag)
{
    px_hreq *r = malloc(sizeof(*r));

    if (r != NULL) {
        r->srv = s;
        r->proc = c->proc;
        r->tag = tag;
    }
    return r;
}

static void abort_done_locked(pmix_status_t status, void *cbdata)
{
    px_hreq *r = cbdata;
    px_sclient *c = px_srv_client(r->srv, &r->proc);

    if (c != NULL)
        px_srv_reply_status(r->srv, c, PX_MSG_REPLY, r->tag, status);
    free(r);
}

/* Hosts may call this from any thread: take the engine lock. */
static void abort_done(pmix_status_t status, void *cbdata)
{
    px_server *s = ((px_hreq *)cbdata)->srv;
    s->pops->lock(s->pctx);
    abort_done_locked(status, cbdata);
    s->pops->unlock(s->pctx);
}

pmix_status_t px_srv_abort(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    int32_t status;
    char *msg = NULL;
    pmix_proc_t *procs = NULL;
    size_t nprocs = 0;
    pmix_status_t rc;
    px_hreq *r;
    bool later = false;

    if ((rc = px_unpack_i32(b, &status)) != PMIX_SUCCESS ||
        (rc = px_unpack_str(b, &msg)) != PMIX_SUCCESS)
        return rc;
    if ((rc = px_unpack_procs(b, &procs, &nprocs)) != PMIX_SUCCESS) {
        free(msg);
        return rc;
    }
    if (s->hops->abort == NULL) {
        rc = PMIX_ERR_NOT_SUPPORTED;
    } else if ((r = hreq_new(s, c, tag)) == NULL) {
        rc = PMIX_ERR_NOMEM;
    } else {
        rc = s->hops->abort(s->hctx, &c->proc, c->server_object, status, msg, procs, nprocs,
                            abort_done, r);
        if (rc == PMIX_SUCCESS) {
            later = true; /* abort_done answers */
        } else {
            free(r); /* the host will not call abort_done */
            if (rc == PMIX_OPERATION_SUCCEEDED)
                rc = PMIX_SUCCESS;
        }
    }
    free(msg);
    free(procs);
    if (!later)
        px_srv_reply_status(s, c, PX_MSG_REPLY, tag, rc);
    return PMIX_SUCCESS;
}

void px_srv_event_to(px_server *s, px_sclient *c, pmix_status_t status, const pmix_proc_t *source,
                     pmix_data_range_t range, const pmix_info_t *info, size_t ninfo)
{
    px_buf b;

    if (c->state != PX_SC_CONNECTED || !c->has_conn)
        return;
    px_buf_init_frame(&b, PX_MSG_EVENT, 0);
    px_pack_i32(&b, status);
    px_pack_proc(&b, source);
    px_pack_u8(&b, range);
    px_pack_info(&b, info, ninfo);
    px_srv_send(s, c, &b);
}

/* Whether `p` is among the targets of a PMIX_EVENT_CUSTOM_RANGE value (one
 * PMIX_PROC, or a PMIX_DATA_ARRAY of them; a rank of PMIX_RANK_WILDCARD
 * names its whole namespace). */
static bool proc_in(const pmix_proc_t *p, const pmix_proc_t *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp(set[i].nspace, p->nspace, PMIX_MAX_NSLEN) == 0 &&
            (set[i].rank == PMIX_RANK_WILDCARD || set[i].rank == p->rank))
            return true;
    return false;
}

bool px_srv_in_range(const pmix_proc_t *p, const pmix_proc_t *source, pmix_data_range_t range,
                     const pmix_info_t *info, size_t ninfo)
{
    switch (range) {
    case PMIX_RANGE_PROC_LOCAL: return false;
    case PMIX_RANGE_NAMESPACE: return strncmp(p->nspace, source->nspace, PMIX_MAX_NSLEN) == 0;
    case PMIX_RANGE_CUSTOM:
        for (size_t i = 0; i < ninfo; i++) {
            const pmix_value_t *v = &info[i].value;
            if (strncmp(info[i].key, PMIX_EVENT_CUSTOM_RANGE, PMIX_MAX_KEYLEN) != 0)
                continue;
            if (v->type == PMIX_PROC && v->data.proc != NULL)
                return proc_in(p, v->data.proc, 1);
            if (v->type == PMIX_DATA_ARRAY && v->data.darray != NULL &&
                v->data.darray->type == PMIX_PROC)
                return proc_in(p, v->data.darray->array, v->data.darray->size);
            return false;
        }
        return false; /* a custom range that names nobody */
    default: return true;
    }
}

void px_srv_event_to_clients(px_server *s, pmix_status_t status, const pmix_proc_t *source,
                             pmix_data_range_t range, const pmix_info_t *info, size_t ninfo,
                             const px_sclient *except)
{
    for (px_sclient *c = s->clients; c != NULL; c = c->next) {
        if (c == except || !px_srv_in_range(&c->proc, source, range, info, ninfo))
            continue;
        px_srv_event_to(s, c, status, source, range, info, ninfo);
    }
}

void px_server_notify(px_server *s, pmix_status_t status, const pmix_proc_t *source,
                      pmix_data_range_t range, const pmix_info_t info[], size_t ninfo)
{
    if (ninfo > 0 && strncmp(info[ninfo - 1].key, PX_KEY_CLIENT_EVENT, PMIX_MAX_KEYLEN) == 0) {
        px_srv_event_to_clients(s, status, source, range, info, ninfo - 1, NULL);
        return; /* a client's: delivered, never taken as a server's */
    }
    if (px_srv_group_heard(s, status, source, info, ninfo))
        return; /* a server's own news */
    px_srv_event_to_clients(s, status, source, range, info, ninfo, NULL);
}

/* A client's event: to this node's clients in range, then, when the range
 * goes beyond the node, to the host for the other nodes. */
pmix_status_t px_srv_notify(px_server *s, px_sclient *c, px_buf *b)
{
    int32_t status;
    pmix_proc_t source;
    uint8_t range;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    pmix_status_t rc;

    if ((rc = px_unpack_i32(b, &status)) != PMIX_SUCCESS ||
        (rc = px_unpack_proc(b, &source)) != PMIX_SUCCESS ||
        (rc = px_unpack_u8(b, &range)) != PMIX_SUCCESS ||
        (rc = px_unpack_info(b, &info, &ninfo)) != PMIX_SUCCESS)
        return rc;
    if (status == PX_GROUP_INVITE_DONE) {
        PMIx_Info_free(info, ninfo); /* only servers say that */
        return PMIX_SUCCESS;
    }
    if (range != PMIX_RANGE_PROC_LOCAL)
        px_srv_event_to_clients(s, status, &source, range, info, ninfo, c);
    if (range != PMIX_RANGE_PROC_LOCAL && range != PMIX_RANGE_LOCAL && s->hops->version >= 5 &&
        s->hops->notify_event != NULL) {
        /* marked as a client's (PX_KEY_CLIENT_EVENT), always last: a
         * client cannot leave it out */
        pmix_info_t *more = PMIx_Info_create(ninfo + 1);
        bool yes = true;
        if (more == NULL) {
            PMIx_Info_free(info, ninfo);
            return PMIX_ERR_NOMEM;
        }
        for (size_t i = 0; i < ninfo; i++)
            PMIx_Info_xfer(&more[i], &info[i]);
        PMIx_Info_load(&more[ninfo], PX_KEY_CLIENT_EVENT, &yes, PMIX_BOOL);
        s->hops->notify_event(s->hctx, status, &source, range, more, ninfo + 1);
        PMIx_Info_free(more, ninfo + 1);
    }
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}

static void jctrl_done_locked(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                              pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    px_hreq *r = cbdata;
    px_sclient *c = px_srv_client(r->srv, &r->proc);

    if (c != NULL) {
        px_buf b;
        px_buf_init_frame(&b, PX_MSG_INFO_DONE, r->tag);
        px_pack_i32(&b, status);
        px_pack_info(&b, info, ninfo);
        px_srv_send(r->srv, c, &b);
    }
    free(r);
    if (release_fn != NULL)
        release_fn(release_cbdata);
}

/* Hosts may call this from any thread: take the engine lock. */
static void jctrl_done(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                       pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    px_server *s = ((px_hreq *)cbdata)->srv;
    s->pops->lock(s->pctx);
    jctrl_done_locked(status, info, ninfo, cbdata, release_fn, release_cbdata);
    s->pops->unlock(s->pctx);
}

pmix_status_t px_srv_jctrl(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    pmix_proc_t *targets = NULL;
    size_t ntargets = 0;
    pmix_info_t *dirs = NULL;
    size_t ndirs = 0;
    pmix_status_t rc;
    px_hreq *r = NULL;

    if ((rc = px_unpack_procs(b, &targets, &ntargets)) != PMIX_SUCCESS)
        return rc;
    if ((rc = px_unpack_info(b, &dirs, &ndirs)) != PMIX_SUCCESS) {
        free(targets);
        return rc;
    }
    if (s->hops->job_control == NULL) {
        rc = PMIX_ERR_NOT_SUPPORTED;
    } else if ((r = hreq_new(s, c, tag)) == NULL) {
        rc = PMIX_ERR_NOMEM;
    } else {
        rc = s->hops->job_control(s->hctx, &c->proc, targets, ntargets, dirs, ndirs, jctrl_done, r);
        if (rc == PMIX_SUCCESS)
            r = NULL; /* jctrl_done answers */
        else if (rc == PMIX_OPERATION_SUCCEEDED)
            rc = PMIX_SUCCESS;
    }
    if (r != NULL || rc != PMIX_SUCCESS) {
        px_buf out;
        free(r);
        px_buf_init_frame(&out, PX_MSG_INFO_DONE, tag);
        px_pack_i32(&out, rc);
        px_pack_info(&out, NULL, 0);
        px_srv_send(s, c, &out);
    }
    free(targets);
    PMIx_Info_free(dirs, ndirs);
    return PMIX_SUCCESS;
}
