/*
 * get.c - Gets the server answers for its clients, and direct modex.
 *
 * A client asks its server only for what it cannot answer itself: the
 * data of another process that was not collected (the "sparse" mode of the
 * business-card exchange), or the job data of a namespace it never saw.
 *
 *   - target on this node: its committed data (LOCAL + GLOBAL cut); if it
 *     has not committed yet the request is parked until it does, dies, or
 *     the request's PMIX_TIMEOUT expires;
 *   - target elsewhere: one direct_modex upcall per target, however many
 *     clients ask at once; the host's answer (one record) goes to each;
 *   - a host asking for a local process's data on behalf of another node
 *     (px_server_dmodex_request) is served the same way, cut for remote
 *     readers.
 */
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

static bool same_proc(const pmix_proc_t *a, const pmix_proc_t *b)
{
    return a->rank == b->rank && strncmp(a->nspace, b->nspace, PMIX_MAX_NSLEN) == 0;
}

static void reply_get(px_server *s, px_sclient *c, uint32_t tag, pmix_status_t status, uint8_t kind,
                      const void *data, size_t ndata)
{
    px_buf b;

    px_buf_init_frame(&b, PX_MSG_GET_DONE, tag);
    px_pack_i32(&b, status);
    px_pack_u8(&b, kind);
    px_pack_bytes(&b, data, status == PMIX_SUCCESS ? ndata : 0);
    px_srv_send(s, c, &b);
}

static void reply_record(px_server *s, px_sclient *c, uint32_t tag, const pmix_proc_t *target)
{
    px_buf rec;

    px_buf_init(&rec);
    px_store_pack_record(s->store, target, true, &rec);
    if (px_buf_status(&rec) != PMIX_SUCCESS)
        reply_get(s, c, tag, px_buf_status(&rec), PX_GET_KIND_RECORDS, NULL, 0);
    else
        reply_get(s, c, tag, PMIX_SUCCESS, PX_GET_KIND_RECORDS, rec.data, rec.size);
    px_buf_fini(&rec);
}

static void unlink_pget(px_server *s, px_pget *g)
{
    for (px_pget **pp = &s->pgets; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
    if (g->timer != NULL)
        s->pops->timer_cancel(s->pctx, g->timer);
    free(g);
}

/* Finish parked request `g` with `status` and, on success, `data`. */
static void finish_pget(px_server *s, px_pget *g, pmix_status_t status, const void *data,
                        size_t ndata)
{
    if (g->requester != NULL)
        reply_get(s, g->requester, g->tag, status, PX_GET_KIND_RECORDS, data, ndata);
    else if (g->host_cb != NULL)
        g->host_cb(status, status == PMIX_SUCCESS ? (char *)data : NULL,
                   status == PMIX_SUCCESS ? ndata : 0, g->host_cbdata);
    unlink_pget(s, g);
}

static void pget_timeout(void *arg)
{
    px_pget *g = arg;

    g->timer = NULL;
    finish_pget(g->srv, g, PMIX_ERR_TIMEOUT, NULL, 0);
}

static px_pget *park(px_server *s, px_sclient *c, uint32_t tag, const pmix_proc_t *target,
                     double timeout)
{
    px_pget *g = calloc(1, sizeof(*g));

    if (g == NULL)
        return NULL;
    g->srv = s;
    g->requester = c;
    g->tag = tag;
    g->target = *target;
    g->next = s->pgets;
    s->pgets = g;
    if (timeout > 0)
        g->timer = s->pops->timer_start(s->pctx, timeout, pget_timeout, g);
    return g;
}

static px_dmx *find_dmx(px_server *s, const pmix_proc_t *target)
{
    for (px_dmx *d = s->dmxs; d != NULL; d = d->next)
        if (!d->abandoned && same_proc(&d->target, target))
            return d;
    return NULL;
}

static void dmx_done_locked(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                            pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    px_dmx *d = cbdata;
    px_server *s = d->srv;

    if (!d->abandoned) {
        bool again = true;
        while (again) {
            again = false;
            for (px_pget *g = s->pgets; g != NULL; g = g->next) {
                if (g->requester != NULL && same_proc(&g->target, &d->target)) {
                    finish_pget(s, g, status, data, ndata);
                    again = true;
                    break;
                }
            }
        }
    }
    for (px_dmx **pp = &s->dmxs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == d) {
            *pp = d->next;
            break;
        }
    }
    free(d);
    if (release_fn != NULL)
        release_fn(release_cbdata);
}

/* Hosts may call this from any thread: take the engine lock. */
static void dmx_done(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    px_server *s = ((px_dmx *)cbdata)->srv;
    s->pops->lock(s->pctx);
    dmx_done_locked(status, data, ndata, cbdata, release_fn, release_cbdata);
    s->pops->unlock(s->pctx);
}

/* Ask the host for a remote process's data, unless already asked. */
static pmix_status_t ask_host(px_server *s, const pmix_proc_t *target, const pmix_info_t *info,
                              size_t ninfo)
{
    px_dmx *d;
    pmix_status_t rc;

    if (find_dmx(s, target) != NULL)
        return PMIX_SUCCESS;
    d = calloc(1, sizeof(*d));
    if (d == NULL)
        return PMIX_ERR_NOMEM;
    d->srv = s;
    d->target = *target;
    d->next = s->dmxs;
    s->dmxs = d;
    rc = s->hops->direct_modex(s->hctx, target, info, ninfo, dmx_done, d);
    if (rc != PMIX_SUCCESS) {
        /* the host will not call back: forget it (it may have answered
         * inline with a callback already; then d is gone) */
        for (px_dmx **pp = &s->dmxs; *pp != NULL; pp = &(*pp)->next) {
            if (*pp == d) {
                *pp = d->next;
                free(d);
                break;
            }
        }
    }
    return rc;
}

pmix_status_t px_srv_get(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    pmix_proc_t target;
    char *key = NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    pmix_status_t rc;
    px_sclient *tc;
    double timeout = 0;
    const pmix_info_t *ti;

    if ((rc = px_unpack_proc(b, &target)) != PMIX_SUCCESS ||
        (rc = px_unpack_str(b, &key)) != PMIX_SUCCESS)
        return rc;
    if ((rc = px_unpack_info(b, &info, &ninfo)) != PMIX_SUCCESS) {
        free(key);
        return rc;
    }
    if (target.rank < PMIX_RANK_VALID && strcmp(key, PMIX_PSET_NAMES) == 0) {
        /* the sets of a process: this server's table, which holds the
         * job data's sets and those its host defined since */
        pmix_value_t v;
        px_buf vb;
        PMIx_Value_construct(&v);
        px_buf_init(&vb);
        if ((rc = px_srv_pset_names(s, &target, &v)) == PMIX_SUCCESS) {
            px_pack_value(&vb, &v);
            rc = px_buf_status(&vb);
        }
        reply_get(s, c, tag, rc, PX_GET_KIND_VALUE, vb.data, vb.size);
        px_buf_fini(&vb);
        PMIx_Value_destruct(&v);
        free(key);
        PMIx_Info_free(info, ninfo);
        return PMIX_SUCCESS;
    }
    free(key); /* the client looks the key up in what we send */
    ti = px_info_find(info, ninfo, PMIX_TIMEOUT);
    if (ti != NULL) {
        uint64_t v;
        if (px_value_get_number(&ti->value, &v) == PMIX_SUCCESS)
            timeout = (double)v;
    }

    if (target.rank == PMIX_RANK_WILDCARD) {
        /* job data of a namespace the client does not know yet */
        px_buf job;
        px_buf_init(&job);
        if (px_store_has_job(s->store, target.nspace)) {
            px_store_pack_job(s->store, target.nspace, &job);
            rc = px_buf_status(&job);
        } else {
            rc = PMIX_ERR_NOT_FOUND;
        }
        reply_get(s, c, tag, rc, PX_GET_KIND_JOB, job.data, job.size);
        px_buf_fini(&job);
    } else if (px_srv_is_dead(s, &target)) {
        reply_get(s, c, tag, PMIX_ERR_PROC_TERM_WO_SYNC, PX_GET_KIND_RECORDS, NULL, 0);
    } else if ((tc = px_srv_client(s, &target)) != NULL) {
        if (tc->committed && !px_srv_commit_pending(s, tc))
            reply_record(s, c, tag, &target);
        else if (park(s, c, tag, &target, timeout) == NULL)
            reply_get(s, c, tag, PMIX_ERR_NOMEM, PX_GET_KIND_RECORDS, NULL, 0);
    } else if (s->hops->direct_modex != NULL) {
        if (park(s, c, tag, &target, timeout) == NULL) {
            reply_get(s, c, tag, PMIX_ERR_NOMEM, PX_GET_KIND_RECORDS, NULL, 0);
        } else {
            rc = ask_host(s, &target, info, ninfo);
            if (rc != PMIX_SUCCESS) {
                /* fail every request parked for this target */
                for (px_pget *g = s->pgets; g != NULL;) {
                    px_pget *n = g->next;
                    if (g->requester != NULL && same_proc(&g->target, &target) &&
                        find_dmx(s, &target) == NULL)
                        finish_pget(s, g, rc, NULL, 0);
                    g = n;
                }
            }
        }
    } else {
        reply_get(s, c, tag, PMIX_ERR_NOT_FOUND, PX_GET_KIND_RECORDS, NULL, 0);
    }
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}

void px_srv_get_committed(px_server *s, const pmix_proc_t *proc)
{
    px_buf rec;
    bool again = true;
    px_sclient *c = px_srv_client(s, proc);

    if (c != NULL && px_srv_commit_pending(s, c))
        return; /* more is on its way: answer with the newest */

    px_buf_init(&rec);
    while (again) {
        again = false;
        for (px_pget *g = s->pgets; g != NULL; g = g->next) {
            if (!same_proc(&g->target, proc))
                continue;
            if (g->requester != NULL) {
                reply_record(s, g->requester, g->tag, proc);
                unlink_pget(s, g);
            } else {
                if (rec.size == 0)
                    px_store_pack_record(s->store, proc, false, &rec);
                finish_pget(s, g, px_buf_status(&rec), rec.data, rec.size);
            }
            again = true;
            break;
        }
    }
    px_buf_fini(&rec);
}

void px_srv_get_proc_died(px_server *s, const pmix_proc_t *proc, pmix_status_t why)
{
    bool again = true;

    while (again) {
        again = false;
        for (px_pget *g = s->pgets; g != NULL; g = g->next) {
            if (same_proc(&g->target, proc)) {
                finish_pget(s, g, why, NULL, 0);
                again = true;
                break;
            }
        }
    }
}

void px_srv_get_client_gone(px_server *s, px_sclient *c)
{
    for (px_pget *g = s->pgets; g != NULL;) {
        px_pget *n = g->next;
        if (g->requester == c)
            unlink_pget(s, g);
        g = n;
    }
}

void px_srv_get_destroy_all(px_server *s)
{
    while (s->pgets != NULL)
        unlink_pget(s, s->pgets);
    while (s->dmxs != NULL) {
        px_dmx *d = s->dmxs;
        s->dmxs = d->next;
        free(d);
    }
}

pmix_status_t px_server_dmodex_request(px_server *s, const pmix_proc_t *proc,
                                       pmix_dmodex_response_fn_t cbfunc, void *cbdata)
{
    px_sclient *c;
    px_pget *g;

    if (proc == NULL || cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (px_srv_is_dead(s, proc))
        return PMIX_ERR_PROC_TERM_WO_SYNC;
    c = px_srv_client(s, proc);
    if (c == NULL)
        return PMIX_ERR_NOT_FOUND;
    g = park(s, NULL, 0, proc, 0);
    if (g == NULL)
        return PMIX_ERR_NOMEM;
    g->host_cb = cbfunc;
    g->host_cbdata = cbdata;
    if (c->committed)
        px_srv_get_committed(s, proc); /* answers now, before we return */
    return PMIX_SUCCESS;
}
