/*
 * client.c - the client engine: context, connection, handshake, replies,
 * put/commit, finalize, abort and job control.
 *
 * The client is created knowing who it is (the launcher's environment
 * says, or pmixsim does). px_client_connect sends HELLO; the server's
 * WELCOME brings the job-level data, which goes into the client's store so
 * that every later Get of job data is answered without a message.
 *
 * Requests carry a tag from a per-client counter and wait in `reqs`, each
 * with an optional timer (PMIX_TIMEOUT). Whichever comes first, reply or
 * timer, completes the request; the other finds nothing and is dropped.
 * When the connection goes, every pending request fails with
 * PMIX_ERR_LOST_CONNECTION and handlers registered for that code (or
 * default handlers) hear of it.
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "common/px_common.h"

px_client *px_client_create(const px_platform_ops *pops, void *pctx, const pmix_proc_t *self)
{
    px_client *c;

    if (pops == NULL || pops->version != PX_PLATFORM_OPS_VERSION || self == NULL)
        return NULL;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->store = px_store_create();
    if (c->store == NULL) {
        free(c);
        return NULL;
    }
    c->pops = pops;
    c->pctx = pctx;
    c->self = *self;
    c->next_tag = 1;
    c->next_evid = 0; /* as OpenPMIx: Slurm deregisters "its" handler 0 */
    return c;
}

void px_client_destroy(px_client *c)
{
    if (c == NULL)
        return;
    while (c->reqs != NULL)
        px_cli_req_free(c, c->reqs);
    px_cli_events_destroy(c);
    px_cli_iof_destroy(c);
    px_cli_groups_destroy(c);
    px_store_destroy(c->store);
    px_buf_fini(&c->prec);
    free(c);
}

const pmix_proc_t *px_client_self(const px_client *c)
{
    return &c->self;
}

bool px_client_connected(const px_client *c)
{
    return c->connected && !c->lost;
}

double px_cli_timeout(const pmix_info_t *info, size_t ninfo)
{
    const pmix_info_t *t = px_info_find(info, ninfo, PMIX_TIMEOUT);
    uint64_t v;

    if (t != NULL && px_value_get_number(&t->value, &v) == PMIX_SUCCESS)
        return (double)v;
    return 0;
}

/* ---- requests ---- */

static void req_timeout(void *arg);

px_req *px_cli_req_new(px_client *c, uint16_t reply_type, double timeout)
{
    px_req *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return NULL;
    r->c = c;
    r->reply_type = reply_type;
    r->tag = c->next_tag++;
    if (c->next_tag == 0)
        c->next_tag = 1; /* 0 means "no reply" on the wire */
    if (timeout > 0)
        r->timer = c->pops->timer_start(c->pctx, timeout, req_timeout, r);
    r->next = c->reqs;
    c->reqs = r;
    return r;
}

void px_cli_req_free(px_client *c, px_req *r)
{
    for (px_req **pp = &c->reqs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    if (r->timer != NULL)
        c->pops->timer_cancel(c->pctx, r->timer);
    if (r->page)
        c->page_open--;
    PMIx_Info_free(r->qual, r->nqual);
    free(r);
}

/* Complete `r` with an error and forget it. */
static void req_fail(px_client *c, px_req *r, pmix_status_t status)
{
    pmix_op_cbfunc_t opcb = r->opcb;
    pmix_value_cbfunc_t valcb = r->valcb;
    pmix_info_cbfunc_t infocb = r->infocb;
    pmix_lookup_cbfunc_t lookupcb = r->lookupcb;
    pmix_spawn_cbfunc_t spawncb = r->spawncb;
    void *cbdata = r->cbdata;

    if (r->page && status != PMIX_SUCCESS)
        px_cli_page_break(c, "a fence on the page failed: the fence page is off");
    px_cli_req_free(c, r);
    if (opcb != NULL)
        opcb(status, cbdata);
    else if (valcb != NULL)
        valcb(status, NULL, cbdata);
    else if (infocb != NULL)
        infocb(status, NULL, 0, cbdata, NULL, NULL);
    else if (lookupcb != NULL)
        lookupcb(status, NULL, 0, cbdata);
    else if (spawncb != NULL) {
        pmix_nspace_t none = ""; /* callers may copy it whatever the status */
        spawncb(status, none, cbdata);
    }
}

static void req_timeout(void *arg)
{
    px_req *r = arg;

    r->timer = NULL;
    req_fail(r->c, r, PMIX_ERR_TIMEOUT);
}

pmix_status_t px_cli_send(px_client *c, px_buf *b, px_req *r)
{
    size_t len;
    void *frame;
    pmix_status_t rc;

    if (c->lost) {
        px_buf_fini(b);
        if (r != NULL)
            px_cli_req_free(c, r);
        return PMIX_ERR_UNREACH;
    }
    frame = px_buf_finish_frame(b, &len);
    if (frame == NULL) {
        if (r != NULL)
            px_cli_req_free(c, r);
        return PMIX_ERR_NOMEM;
    }
    rc = c->pops->send(c->pctx, PX_CONN_SERVER, frame, len);
    if (rc != PMIX_SUCCESS && r != NULL)
        px_cli_req_free(c, r);
    return rc;
}

static px_req *find_req(px_client *c, uint32_t tag)
{
    for (px_req *r = c->reqs; r != NULL; r = r->next)
        if (r->tag == tag)
            return r;
    return NULL;
}

/* ---- deferred calls ---- */

typedef struct deferred {
    void (*fn)(void *arg);
    void *arg;
} deferred;

static void run_deferred(void *arg)
{
    deferred *d = arg;

    d->fn(d->arg);
    free(d);
}

pmix_status_t px_client_defer(px_client *c, void (*fn)(void *arg), void *arg)
{
    deferred *d = malloc(sizeof(*d));

    if (d == NULL)
        return PMIX_ERR_NOMEM;
    d->fn = fn;
    d->arg = arg;
    if (c->pops->timer_start(c->pctx, 0, run_deferred, d) == NULL) {
        free(d);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    return PMIX_SUCCESS;
}

/* ---- handshake ---- */

pmix_status_t px_client_connect(px_client *c, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_buf b;
    px_req *r;
    double timeout = px_cli_timeout(info, ninfo);

    if (c->connected || c->lost)
        return PMIX_ERR_INIT;
    /* A server that accepts but never answers must not hang PMIx_Init. */
    r = px_cli_req_new(c, PX_MSG_WELCOME, timeout > 0 ? timeout : PX_HANDSHAKE_TIMEOUT);
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->opcb = cbfunc;
    r->cbdata = cbdata;
    px_buf_init_frame(&b, PX_MSG_HELLO, r->tag);
    px_pack_u32(&b, PX_PROTOCOL);
    px_pack_proc(&b, &c->self);
    px_pack_u32(&b, 0);
    /* The server reads no directive of PMIx_Init, and before the handshake
     * it takes small frames only (a few KiB): none go. */
    px_pack_info(&b, NULL, 0);
    if (c->tool)
        px_pack_u8(&b, PX_ROLE_TOOL);
    return px_cli_send(c, &b, r);
}

/* PMIX_JOB_SIZE of the caller's namespace, from the job data (0 if not
 * there). */
static uint64_t job_size(px_client *c)
{
    pmix_value_t *v = NULL;
    uint64_t size = 0;

    if (px_store_get_job(c->store, c->self.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0,
                         &v) != PMIX_SUCCESS)
        return 0;
    (void)px_value_get_number(v, &size);
    PMIx_Value_free(v, 1);
    return size;
}

/* WELCOME said a fence page came with it: use it if the platform mapped
 * it and it is what it should be; otherwise the server must stop using it
 * for everyone, since this process will never arrive on it. */
static void take_page(px_client *c)
{
    size_t len = 0;
    px_page_hdr *pg = c->pops->page_get != NULL ? c->pops->page_get(c->pctx, &len) : NULL;
    uint32_t n = 0;
    px_buf b;

    /* the count is read once (the other participants can write the page)
     * and must be the job's size: the server makes a page only for a job
     * whose processes are all here, and a count changed before this
     * process came would make it count arrivals differently */
    if (pg != NULL && len >= px_page_size(0))
        n = *(volatile uint32_t *)&pg->nprocs;
    if (pg != NULL && len >= px_page_size(0) && pg->magic == PX_PAGE_MAGIC && n >= 2 &&
        n <= PX_PAGE_MAX && len >= px_page_total(n) && c->self.rank < n && n == job_size(c) &&
        c->pops->page_wait != NULL && c->pops->page_wake != NULL) {
        c->page = c->page_map = pg;
        c->page_len = len;
        c->page_n = n;
        c->page_bound = c->pops->page_bound != NULL && c->pops->page_bound(c->pctx);
        if (c->pops->log != NULL)
            c->pops->log(c->pctx, PX_LOG_DEBUG,
                         c->page_bound ? "fence page: sleeps without a deadline (this process "
                                         "dies with its server)"
                                       : "fence page: sleeps look at the server every 0.1 s");
        return;
    }
    if (c->pops->log != NULL)
        c->pops->log(c->pctx, PX_LOG_DEBUG, "the server's fence page is unusable here");
    px_buf_init_frame(&b, PX_MSG_NOPAGE, 0);
    (void)px_cli_send(c, &b, NULL);
}

static void welcome(px_client *c, px_req *r, pmix_status_t status, px_buf *b)
{
    pmix_op_cbfunc_t cb = r->opcb;
    void *cbdata = r->cbdata;

    uint8_t page = 0;

    if (status == PMIX_SUCCESS && px_unpack_u8(b, &page) != PMIX_SUCCESS)
        status = PMIX_ERR_UNPACK_FAILURE;
    if (status == PMIX_SUCCESS)
        status = px_store_unpack_job(c->store, b);
    if (status == PMIX_SUCCESS && c->tool)
        status = px_cli_tool_welcome(c, b);
    if (status == PMIX_SUCCESS) {
        c->connected = true;
        if (page)
            take_page(c);
    }
    px_cli_req_free(c, r);
    if (cb != NULL)
        cb(status, cbdata);
}

/* ---- simple requests ---- */

static pmix_status_t simple_request(px_client *c, uint16_t type, px_buf *payload, double timeout,
                                    pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_buf b;
    px_req *r;

    if (!px_client_connected(c)) {
        px_buf_fini(payload);
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    }
    r = px_cli_req_new(c, PX_MSG_REPLY, timeout);
    if (r == NULL) {
        px_buf_fini(payload);
        return PMIX_ERR_NOMEM;
    }
    r->opcb = cbfunc;
    r->cbdata = cbdata;
    px_buf_init_frame(&b, type, r->tag);
    px_pack_raw(&b, payload->data, payload->size);
    px_buf_fini(payload);
    return px_cli_send(c, &b, r);
}

pmix_status_t px_client_finalize(px_client *c, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_buf empty;

    px_buf_init(&empty);
    return simple_request(c, PX_MSG_FINALIZE, &empty, 0, cbfunc, cbdata);
}

pmix_status_t px_client_abort(px_client *c, int status, const char msg[], const pmix_proc_t procs[],
                              size_t nprocs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_buf p;

    px_buf_init(&p);
    px_pack_i32(&p, status);
    px_pack_str(&p, msg);
    px_pack_procs(&p, procs, nprocs);
    return simple_request(c, PX_MSG_ABORT, &p, 0, cbfunc, cbdata);
}

pmix_status_t px_client_job_control(px_client *c, const pmix_proc_t targets[], size_t ntargets,
                                    const pmix_info_t directives[], size_t ndirs,
                                    pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    px_buf b;
    px_req *r;

    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    r = px_cli_req_new(c, PX_MSG_INFO_DONE, px_cli_timeout(directives, ndirs));
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->infocb = cbfunc;
    r->cbdata = cbdata;
    px_buf_init_frame(&b, PX_MSG_JCTRL, r->tag);
    px_pack_procs(&b, targets, ntargets);
    px_pack_info(&b, directives, ndirs);
    return px_cli_send(c, &b, r);
}

pmix_status_t px_client_query(px_client *c, const pmix_query_t queries[], size_t nqueries,
                              pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    px_buf b;
    px_req *r;

    double timeout = 0;

    if (queries == NULL || nqueries == 0 || nqueries > PX_QUERY_MAX)
        return PMIX_ERR_BAD_PARAM;
    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    /* the longest PMIX_TIMEOUT of a query bounds the wait for the host */
    for (size_t i = 0; i < nqueries; i++) {
        double t = px_cli_timeout(queries[i].qualifiers, queries[i].nqual);
        if (t > timeout)
            timeout = t;
    }
    r = px_cli_req_new(c, PX_MSG_INFO_DONE, timeout);
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->infocb = cbfunc;
    r->cbdata = cbdata;
    px_buf_init_frame(&b, PX_MSG_QUERY, r->tag);
    px_pack_u32(&b, (uint32_t)nqueries);
    for (size_t i = 0; i < nqueries; i++) {
        px_pack_argv(&b, queries[i].keys);
        px_pack_info(&b, queries[i].qualifiers, queries[i].nqual);
    }
    return px_cli_send(c, &b, r);
}

typedef struct info_release {
    pmix_info_t *info;
    size_t ninfo;
} info_release;

static void release_info_array(void *cbdata)
{
    info_release *ir = cbdata;

    PMIx_Info_free(ir->info, ir->ninfo);
    free(ir);
}

static void info_done(px_client *c, px_req *r, pmix_status_t status, px_buf *b)
{
    pmix_info_cbfunc_t cb = r->infocb;
    void *cbdata = r->cbdata;
    info_release *ir = calloc(1, sizeof(*ir));
    pmix_status_t rc;

    px_cli_req_free(c, r);
    if (ir == NULL) {
        if (cb != NULL)
            cb(PMIX_ERR_NOMEM, NULL, 0, cbdata, NULL, NULL);
        return;
    }
    rc = px_unpack_info(b, &ir->info, &ir->ninfo);
    if (rc != PMIX_SUCCESS)
        status = rc;
    if (cb != NULL)
        cb(status, ir->info, ir->ninfo, cbdata, release_info_array, ir);
    else
        release_info_array(ir);
}

/* ---- put / commit ---- */

pmix_status_t px_client_put(px_client *c, pmix_scope_t scope, const char key[],
                            const pmix_value_t *val)
{
    if (key == NULL || val == NULL || strnlen(key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN ||
        key[0] == '\0')
        return PMIX_ERR_BAD_PARAM;
    if (scope != PMIX_LOCAL && scope != PMIX_REMOTE && scope != PMIX_GLOBAL &&
        scope != PMIX_INTERNAL && scope != PMIX_SCOPE_UNDEF)
        return PMIX_ERR_BAD_PARAM;
    return px_store_put(c->store, &c->self, scope, key, val);
}

pmix_status_t px_client_commit(px_client *c)
{
    px_buf b;

    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    pmix_status_t rc;

    px_buf_init_frame(&b, PX_MSG_COMMIT, 0);
    px_store_pack_commit(c->store, &c->self, &b);
    rc = px_cli_send(c, &b, NULL);
    /* Counted after it is queued: the server holds Gets of our data until
     * it has read this many (px_page.h). */
    if (rc == PMIX_SUCCESS && c->page != NULL) {
        atomic_store_explicit(&c->page->commits[c->self.rank], ++c->ncommits, memory_order_release);
        /* what the server now holds for us, for our slot (px_page.h) */
        c->prec.size = 0;
        px_store_pack_record(c->store, &c->self, true, &c->prec);
        if (px_buf_status(&c->prec) != PMIX_SUCCESS) {
            px_buf_fini(&c->prec);
            px_buf_init(&c->prec);
        }
    }
    return rc;
}

pmix_status_t px_client_store_internal(px_client *c, const pmix_proc_t *proc, const char key[],
                                       const pmix_value_t *val)
{
    if (proc == NULL || key == NULL || val == NULL ||
        strnlen(key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
        return PMIX_ERR_BAD_PARAM;
    return px_store_put(c->store, proc, PMIX_INTERNAL, key, val);
}

/* ---- the sink ---- */

static pmix_status_t sink_opened(void *sctx, uint64_t conn, uint32_t uid, uint32_t gid)
{
    return PMIX_ERR_NOT_SUPPORTED; /* clients accept no connections */
}

/* One frame from the server, with or without a region; the region (if
 * any) is consumed whatever happens. */
static pmix_status_t dispatch(px_client *c, const void *frame, size_t len, px_cli_region *region)
{
    px_frame_hdr hdr;
    px_buf b;
    int32_t status;
    pmix_status_t rc;
    px_req *r;

    rc = px_frame_parse(frame, len, PX_FRAME_MAX_DEFAULT, &hdr);
    if (rc != PMIX_SUCCESS || (size_t)hdr.len + PX_FRAME_HDR != len) {
        rc = PMIX_ERR_UNPACK_FAILURE;
        goto out;
    }
    px_buf_view_payload(&b, frame, len);
    if (region != NULL && hdr.type != PX_MSG_FENCE_DONE) {
        rc = PMIX_ERR_UNPACK_FAILURE; /* only collected data travels in regions */
        goto out;
    }
    if (hdr.type == PX_MSG_EVENT)
        return px_cli_event_msg(c, &b);
    if (hdr.type == PX_MSG_IOF_DATA)
        return px_cli_iof_msg(c, &b);
    r = find_req(c, hdr.tag);
    if (r == NULL) {
        rc = PMIX_SUCCESS; /* timed out and answered already */
        goto out;
    }
    if (r->reply_type != hdr.type || px_unpack_i32(&b, &status) != PMIX_SUCCESS) {
        req_fail(c, r, PMIX_ERR_UNPACK_FAILURE);
        rc = PMIX_ERR_UNPACK_FAILURE;
        goto out;
    }
    switch (hdr.type) {
    case PX_MSG_WELCOME: welcome(c, r, status, &b); break;
    case PX_MSG_FENCE_DONE: px_cli_fence_reply(c, r, status, &b, region); return PMIX_SUCCESS;
    case PX_MSG_GET_DONE: px_cli_get_reply(c, r, status, &b); break;
    case PX_MSG_INFO_DONE: info_done(c, r, status, &b); break;
    case PX_MSG_GROUP_DONE: px_cli_group_reply(c, r, status, &b); break;
    case PX_MSG_LOOKUP_DONE: px_cli_lookup_reply(c, r, status, &b); break;
    case PX_MSG_SPAWN_DONE: px_cli_spawn_reply(c, r, status, &b); break;
    case PX_MSG_REPLY: req_fail(c, r, status); break; /* "fail" with whatever status came */
    default: req_fail(c, r, PMIX_ERR_UNPACK_FAILURE); return PMIX_ERR_UNPACK_FAILURE;
    }
out:
    if (region != NULL)
        region->release(region->arg);
    return rc;
}

static pmix_status_t sink_deliver(void *sctx, uint64_t conn, const void *frame, size_t len)
{
    return dispatch(sctx, frame, len, NULL);
}

static pmix_status_t sink_deliver_region(void *sctx, uint64_t conn, const void *frame, size_t flen,
                                         const void *data, size_t len, void (*release)(void *arg),
                                         void *release_arg)
{
    px_cli_region region = {data, len, release, release_arg};

    return dispatch(sctx, frame, flen, &region);
}

static void sink_closed(void *sctx, uint64_t conn, pmix_status_t why)
{
    px_client *c = sctx;
    bool was_connected = c->connected;

    c->lost = true;
    /* Sleepers on the page, here and in the other processes, go to the
     * server and learn it is gone; a sleeper without a deadline
     * (page_bound) has no other way to hear it while its server lives on
     * without serving. */
    px_cli_page_break(c, "the connection to the server is lost: the fence page is off");
    while (c->reqs != NULL)
        req_fail(c, c->reqs, PMIX_ERR_LOST_CONNECTION);
    if (was_connected)
        px_cli_event_raise(c, PMIX_ERR_LOST_CONNECTION, &c->self, PMIX_RANGE_PROC_LOCAL, NULL, 0);
}

static const px_sink client_sink = {
    .opened = sink_opened,
    .deliver = sink_deliver,
    .closed = sink_closed,
    .deliver_region = sink_deliver_region,
};

const px_sink *px_client_sink(void)
{
    return &client_sink;
}
