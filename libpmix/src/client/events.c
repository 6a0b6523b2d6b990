/*
 * events.c - event handler chains in the client engine.
 *
 * Handlers are kept in one list, in the order they run: the one handler
 * registered with PMIX_EVENT_HDLR_FIRST before all others, the one with
 * PMIX_EVENT_HDLR_LAST after all; in between three groups, handlers for a
 * single code, then for several codes, then default handlers (no codes).
 * Within a group a handler goes at the end (before the group's
 * PMIX_EVENT_HDLR_LAST_IN_CATEGORY one), at the front with
 * PMIX_EVENT_HDLR_PREPEND (after its PMIX_EVENT_HDLR_FIRST_IN_CATEGORY
 * one), or next to the handler named by PMIX_EVENT_HDLR_BEFORE / _AFTER
 * (PMIX_EVENT_HDLR_NAME); a name not found in the group is ignored. Only
 * one handler can be first or last, overall or in a group.
 *
 * An event (raised locally, or arriving from the server) snapshots the ids
 * of the handlers that match it and runs them one at a time from a
 * zero-delay timer, never inside the call that raised it. An event raised
 * with PMIX_EVENT_NON_DEFAULT skips the default handlers. Each handler
 * passes the chain on by calling the completion function it was given;
 * PMIX_EVENT_ACTION_COMPLETE stops the chain; the results each handler
 * returns are handed, accumulated, to the handlers after it. A handler
 * deregistered while an event is under way is skipped.
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "common/px_common.h"

static bool matches(const px_evh *h, pmix_status_t status, bool non_default)
{
    if (h->ncodes == 0)
        return !non_default;
    for (size_t i = 0; i < h->ncodes; i++)
        if (h->codes[i] == status)
            return true;
    return false;
}

static void raise_to(px_client *c, pmix_status_t status, const pmix_proc_t *source,
                     pmix_data_range_t range, const pmix_info_t *info, size_t ninfo,
                     const px_evh *only);

/* Where a new handler goes: a pointer to the link it is inserted at. */
static px_evh **slot(px_client *c, const px_evh *h, const pmix_info_t info[], size_t ninfo)
{
    const char *before = px_info_string(info, ninfo, PMIX_EVENT_HDLR_BEFORE);
    const char *after = px_info_string(info, ninfo, PMIX_EVENT_HDLR_AFTER);
    px_evh **pp = &c->handlers, **start;

    if (h->position == 0)
        return pp;
    if (h->position == 2) {
        while (*pp != NULL)
            pp = &(*pp)->next;
        return pp;
    }
    /* next to a named handler of the same group */
    for (px_evh **q = &c->handlers; *q != NULL && (before != NULL || after != NULL);
         q = &(*q)->next) {
        const px_evh *o = *q;
        if (o->position != 1 || o->category != h->category || o->name == NULL)
            continue;
        if (before != NULL && strcmp(o->name, before) == 0)
            return q;
        if (after != NULL && strcmp(o->name, after) == 0)
            return &(*q)->next;
    }
    /* the start of the group: past FIRST and earlier groups */
    while (*pp != NULL &&
           ((*pp)->position == 0 || ((*pp)->position == 1 && (*pp)->category < h->category)))
        pp = &(*pp)->next;
    start = pp;
    if (h->in_group == -1)
        return start;
    if (h->prepend) {
        if (*pp != NULL && (*pp)->position == 1 && (*pp)->category == h->category &&
            (*pp)->in_group == -1)
            pp = &(*pp)->next; /* stays after the group's first */
        return pp;
    }
    /* the end of the group, before its last unless this is the last */
    while (*pp != NULL && (*pp)->position == 1 && (*pp)->category == h->category &&
           (h->in_group == 1 || (*pp)->in_group != 1))
        pp = &(*pp)->next;
    return pp;
}

pmix_status_t px_client_register_event(px_client *c, const pmix_status_t codes[], size_t ncodes,
                                       const pmix_info_t info[], size_t ninfo,
                                       pmix_notification_fn_t evhdlr, size_t *id)
{
    px_evh *h;
    px_evh **pp;
    const char *name = px_info_string(info, ninfo, PMIX_EVENT_HDLR_NAME);

    if (evhdlr == NULL || (ncodes > 0 && codes == NULL))
        return PMIX_ERR_BAD_PARAM;
    h = calloc(1, sizeof(*h));
    if (h == NULL)
        return PMIX_ERR_NOMEM;
    h->category = ncodes == 0 ? 2 : ncodes == 1 ? 0 : 1;
    h->position = px_info_flag(info, ninfo, PMIX_EVENT_HDLR_FIRST)  ? 0
                  : px_info_flag(info, ninfo, PMIX_EVENT_HDLR_LAST) ? 2
                                                                    : 1;
    h->in_group = px_info_flag(info, ninfo, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)  ? -1
                  : px_info_flag(info, ninfo, PMIX_EVENT_HDLR_LAST_IN_CATEGORY) ? 1
                                                                                : 0;
    h->prepend = px_info_flag(info, ninfo, PMIX_EVENT_HDLR_PREPEND);
    {
        const pmix_info_t *o = px_info_find(info, ninfo, PMIX_EVENT_RETURN_OBJECT);
        if (o != NULL && o->value.type == PMIX_POINTER) {
            h->has_obj = true;
            h->obj = o->value.data.ptr;
        }
    }
    /* only one handler can be first or last, overall or in its group */
    for (px_evh *o = c->handlers; o != NULL; o = o->next) {
        if ((h->position != 1 && o->position == h->position) ||
            (h->position == 1 && h->in_group != 0 && o->position == 1 &&
             o->category == h->category && o->in_group == h->in_group)) {
            free(h);
            return PMIX_ERR_EVENT_REGISTRATION;
        }
    }
    if (ncodes > 0 && (h->codes = malloc(ncodes * sizeof(*codes))) == NULL) {
        free(h);
        return PMIX_ERR_NOMEM;
    }
    if (name != NULL && (h->name = strdup(name)) == NULL) {
        free(h->codes);
        free(h);
        return PMIX_ERR_NOMEM;
    }
    if (ncodes > 0)
        memcpy(h->codes, codes, ncodes * sizeof(*codes));
    h->ncodes = ncodes;
    h->fn = evhdlr;
    h->id = c->next_evid++;
    pp = slot(c, h, info, ninfo);
    h->next = *pp;
    *pp = h;
    *id = h->id;
    /* the models declared before it, oldest first, from the loop */
    for (px_evcache *e = c->evcache; e != NULL; e = e->next)
        raise_to(c, e->status, &e->source, e->range, e->info, e->ninfo, h);
    return PMIX_SUCCESS;
}

static void free_handler(px_evh *h)
{
    free(h->codes);
    free(h->name);
    free(h);
}

pmix_status_t px_client_deregister_event(px_client *c, size_t id)
{
    for (px_evh **pp = &c->handlers; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            px_evh *h = *pp;
            *pp = h->next;
            free_handler(h);
            return PMIX_SUCCESS;
        }
    }
    return PMIX_ERR_NOT_FOUND;
}

static px_evh *find_handler(px_client *c, size_t id)
{
    for (px_evh *h = c->handlers; h != NULL; h = h->next)
        if (h->id == id)
            return h;
    return NULL;
}

static void run_free(px_client *c, px_evrun *run)
{
    for (px_evrun **pp = &c->runs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == run) {
            *pp = run->next;
            break;
        }
    }
    if (run->timer != NULL)
        c->pops->timer_cancel(c->pctx, run->timer);
    PMIx_Info_free(run->info, run->ninfo);
    PMIx_Info_free(run->results, run->nresults);
    PMIx_Info_free(run->hinfo, run->nhinfo);
    free(run->ids);
    free(run);
}

static void run_next(px_evrun *run);

/* The completion function handed to each handler. Handlers may call it
 * from any thread, so it takes the engine lock. */
static void handler_done(pmix_status_t status, pmix_info_t *results, size_t nresults,
                         pmix_op_cbfunc_t cbfunc, void *thiscbdata, void *notification_cbdata)
{
    px_evrun *run = notification_cbdata;
    px_client *c = run->c;

    if (c == NULL) {
        /* the client was destroyed while this handler held the run */
        PMIx_Info_free(run->info, run->ninfo);
        PMIx_Info_free(run->results, run->nresults);
        PMIx_Info_free(run->hinfo, run->nhinfo);
        free(run->ids);
        free(run);
        if (cbfunc != NULL)
            cbfunc(PMIX_SUCCESS, thiscbdata);
        return;
    }
    c->pops->lock(c->pctx);
    run->running = false;
    PMIx_Info_free(run->hinfo, run->nhinfo);
    run->hinfo = NULL;
    run->nhinfo = 0;
    /* the next handlers see what this one returned, after what earlier
     * ones did (results are copied: the handler may release its own) */
    if (nresults > 0 && results != NULL) {
        pmix_info_t *all = PMIx_Info_create(run->nresults + nresults);
        if (all != NULL) {
            for (size_t i = 0; i < run->nresults; i++)
                PMIx_Info_xfer(&all[i], &run->results[i]);
            for (size_t i = 0; i < nresults; i++)
                PMIx_Info_xfer(&all[run->nresults + i], &results[i]);
            PMIx_Info_free(run->results, run->nresults);
            run->results = all;
            run->nresults += nresults;
        }
    }
    if (status == PMIX_EVENT_ACTION_COMPLETE)
        run->next_handler = run->nids;
    run_next(run);
    c->pops->unlock(c->pctx);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, thiscbdata); /* the handler may release its results */
}

static void run_next(px_evrun *run)
{
    px_client *c = run->c;

    while (run->next_handler < run->nids) {
        px_evh *h = find_handler(c, run->ids[run->next_handler++]);
        if (h == NULL)
            continue;
        run->running = true;
        if (h->has_obj) {
            /* the event's info, then the object the handler registered with */
            run->hinfo = PMIx_Info_create(run->ninfo + 1);
            if (run->hinfo != NULL) {
                for (size_t i = 0; i < run->ninfo; i++)
                    PMIx_Info_xfer(&run->hinfo[i], &run->info[i]);
                PMIx_Info_load(&run->hinfo[run->ninfo], PMIX_EVENT_RETURN_OBJECT, h->obj,
                               PMIX_POINTER);
                run->nhinfo = run->ninfo + 1;
            }
        }
        h->fn(h->id, run->status, &run->source, run->hinfo != NULL ? run->hinfo : run->info,
              run->hinfo != NULL ? run->nhinfo : run->ninfo, run->results, run->nresults,
              handler_done, run);
        return;
    }
    run_free(c, run);
}

static void run_start(void *arg)
{
    px_evrun *run = arg;

    run->timer = NULL;
    run_next(run);
}

/* Start a run of the event through the handlers that match it, or through
 * `only` alone (a handler registered after a cached event). */
static void raise_to(px_client *c, pmix_status_t status, const pmix_proc_t *source,
                     pmix_data_range_t range, const pmix_info_t *info, size_t ninfo,
                     const px_evh *only)
{
    px_evrun *run;
    size_t n = 0;
    /* PMIX_EVENT_NON_DEFAULT: default handlers do not see this event */
    bool non_default = px_info_flag(info, ninfo, PMIX_EVENT_NON_DEFAULT);

    for (px_evh *h = c->handlers; h != NULL; h = h->next)
        n += (only == NULL || h == only) && matches(h, status, non_default);
    if (n == 0)
        return;
    run = calloc(1, sizeof(*run));
    if (run == NULL)
        return;
    run->ids = malloc(n * sizeof(*run->ids));
    if (run->ids == NULL) {
        free(run);
        return;
    }
    for (px_evh *h = c->handlers; h != NULL; h = h->next)
        if ((only == NULL || h == only) && matches(h, status, non_default))
            run->ids[run->nids++] = h->id;
    if (ninfo > 0) {
        run->info = PMIx_Info_create(ninfo);
        if (run->info != NULL) {
            for (size_t i = 0; i < ninfo; i++)
                PMIx_Info_xfer(&run->info[i], &info[i]);
            run->ninfo = ninfo;
        }
    }
    run->c = c;
    run->status = status;
    if (source != NULL)
        run->source = *source;
    run->range = range;
    run->next = c->runs;
    c->runs = run;
    run->timer = c->pops->timer_start(c->pctx, 0, run_start, run);
    if (run->timer == NULL)
        run_free(c, run);
}

/* Keep a copy of a PMIX_MODEL_DECLARED or PMIX_DEBUGGER_RELEASE event for
 * later handlers. */
static void cache_event(px_client *c, pmix_status_t status, const pmix_proc_t *source,
                        pmix_data_range_t range, const pmix_info_t *info, size_t ninfo)
{
    px_evcache **pp = &c->evcache, *e;
    size_t n = 0;

    for (; *pp != NULL; pp = &(*pp)->next)
        n++;
    if (n >= PX_EVCACHE_MAX || (e = calloc(1, sizeof(*e))) == NULL)
        return;
    if (ninfo > 0 && (e->info = PMIx_Info_create(ninfo)) == NULL) {
        free(e);
        return;
    }
    for (size_t i = 0; i < ninfo; i++)
        PMIx_Info_xfer(&e->info[i], &info[i]);
    e->ninfo = ninfo;
    e->status = status;
    if (source != NULL)
        e->source = *source;
    e->range = range;
    *pp = e;
}

void px_cli_event_raise(px_client *c, pmix_status_t status, const pmix_proc_t *source,
                        pmix_data_range_t range, const pmix_info_t *info, size_t ninfo)
{
    if (status == PMIX_MODEL_DECLARED || status == PMIX_DEBUGGER_RELEASE)
        cache_event(c, status, source, range, info, ninfo);
    raise_to(c, status, source, range, info, ninfo, NULL);
}

pmix_status_t px_client_notify(px_client *c, pmix_status_t status, const pmix_proc_t *source,
                               pmix_data_range_t range, const pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_proc_t *src = source != NULL ? source : &c->self;

    px_cli_event_raise(c, status, src, range, info, ninfo);
    if (range != PMIX_RANGE_PROC_LOCAL && px_client_connected(c)) {
        px_buf b;
        pmix_status_t rc;

        px_buf_init_frame(&b, PX_MSG_NOTIFY, 0);
        px_pack_i32(&b, status);
        px_pack_proc(&b, src);
        px_pack_u8(&b, range);
        px_pack_info(&b, info, ninfo);
        rc = px_cli_send(c, &b, NULL);
        if (rc != PMIX_SUCCESS)
            return rc;
    }
    return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t px_cli_event_msg(px_client *c, px_buf *b)
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
    px_cli_event_raise(c, status, &source, range, info, ninfo);
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}

void px_cli_events_destroy(px_client *c)
{
    while (c->runs != NULL) {
        px_evrun *run = c->runs;
        if (run->running) {
            /* a handler still holds it: handler_done frees it later */
            c->runs = run->next;
            run->c = NULL;
            continue;
        }
        run_free(c, run);
    }
    while (c->handlers != NULL) {
        px_evh *h = c->handlers;
        c->handlers = h->next;
        free_handler(h);
    }
    while (c->evcache != NULL) {
        px_evcache *e = c->evcache;
        c->evcache = e->next;
        PMIx_Info_free(e->info, e->ninfo);
        free(e);
    }
}
