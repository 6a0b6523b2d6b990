/*
 * inproc.c - the in-process test platform and host (see inproc.h).
 *
 * One FIFO of events (frame deliveries, connection closes, deferred host
 * callbacks) and one list of timers sorted by virtual due time. Running
 * the world takes the oldest event; when there is none it advances the
 * clock to the first timer and fires it. Nothing here is thread-safe or
 * needs to be: the lock ops do nothing.
 */
#include "inproc.h"
#include "px_hostcore.h"
#include "px_pubsub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/px_common.h"
#include "wire/px_wire.h"

struct px_timer {
    struct px_timer *next;
    struct inproc_ep *ep; /* the engine that started it */
    double at;
    unsigned long long seq;
    px_timer_cb cb;
    void *arg;
};

/* A region is shared by every receiver: one copy, reference-counted. */
struct px_region {
    int refs;
    size_t len;
    unsigned char *data;
};

enum {
    EV_DELIVER,
    EV_CLOSED,
    EV_CALL
};

typedef struct ev {
    struct ev *next;
    int kind;
    inproc_ep *to;
    uint64_t conn;
    void *frame;
    size_t len;
    void (*fn)(void *arg);
    void *arg;
    px_region *region; /* EV_DELIVER with a region: one reference */
    px_page *page;     /* EV_DELIVER with the fence page */
} ev;

struct inproc_ep {
    struct inproc_ep *next;
    inproc_world *w;
    bool is_server;
    px_server *srv;
    px_client *cli;
    int nodeid;
    inproc_ep *server_ep; /* client: its server */
    uint64_t conn;        /* client: its connection id on the server */
    pmix_proc_t proc;     /* client: who it is */
    bool closed;          /* client: connection gone */
    bool refuse_sends;    /* client: the server's sends to it fail (no memory) */
    int fail_sends;       /* client: its own next sends that fail (no memory) */
    void *page;           /* client: the fence page it received */
    size_t page_len;
    bool refuse_page;    /* client: cannot "map" the page */
    bool accepted;       /* client: its server said the handshake is done (conn_accepted) */
    px_ctxid_gen ctxgen; /* server: the groups' context ids this node makes */
};

/* A fence page: plain memory, shared by the engines of one world. */
struct px_page {
    void *mem;
    size_t len;
};

/* A collective the world runs as host: one contribution per server. */
typedef struct hcoll {
    struct hcoll *next;
    pmix_proc_t *procs;
    size_t nprocs;
    size_t nexpected, narrived;
    pmix_status_t status;
    struct contrib {
        inproc_ep *server;
        void *data;
        size_t ndata;
        pmix_modex_cbfunc_t cbfunc;
        void *cbdata;
    } * c;
} hcoll;

/* A group operation the world runs as host: an allgather among the
 * servers that host a member, plus a context id from the lowest of them
 * (px_hostcore.h, px_ctxid_next). */
typedef struct gcoll {
    struct gcoll *next;
    pmix_group_operation_t op;
    char grp[PMIX_MAX_NSLEN + 1];
    pmix_proc_t *procs;
    size_t nprocs;
    size_t nexpected, narrived;
    pmix_status_t status;
    bool assign_ctxid;
    struct gcontrib {
        inproc_ep *server;
        void *data;
        size_t ndata;
        px_group_cbfunc_t cbfunc; /* NULL once answered */
        void *cbdata;
    } * c;
} gcoll;

struct inproc_world {
    gcoll *gcolls;
    inproc_ep *hold_groups;    /* the server whose group answers wait ... */
    struct gdone *held_groups; /* ... here, in order (inproc_hold_groups) */
    size_t host_groups;        /* group upcalls served */
    size_t group_failures;     /* ... that carried a local_status */
    ev *head, *tail;
    px_timer *timers;
    unsigned long long timer_seq;
    double now;
    inproc_ep *eps;
    uint64_t next_conn;
    hcoll *colls;
    size_t host_fences;
    size_t regions;             /* shared regions created */
    size_t local_failures;      /* fence_nb upcalls carrying PMIX_LOCAL_COLLECTIVE_STATUS */
    size_t orphan_timers;       /* left pending by destroyed servers */
    size_t orphan_timers_fired; /* ... and fired afterwards */
    int corrupt_collects;       /* collecting fences whose data the host garbles */
    bool pages;                 /* servers may make fence pages */
    size_t page_wakes;          /* page_wake calls */
    uint64_t page_trimmed;      /* bytes given back by page_trim or page_discard (zeroed here) */
    uint64_t trimmed_at_wake;   /* page_trimmed at the last page_wake */
    bool fail_discards;         /* page_discard gives nothing back */
    size_t frames_to_servers;   /* frames delivered to server sinks */
    px_page *page_list[64];     /* pages made, freed with the world */
    size_t npages;
    uint32_t refuse_pid;                      /* the host refuses a peer with this pid */
    uint32_t hello_pid, hello_uid, hello_gid; /* what the last client_connected2 heard */
    struct dmx_req *dmx;                      /* direct modex requests the servers hold */
    int tool_mode;                            /* tool_connected: 0 answer now, 1 later, 2 refuse */
    unsigned tools_named;                     /* tool names given ("tool.<n>") */
    uint32_t tool_pid;                        /* what the last tool_connected heard */
    size_t host_events;                       /* notify_event upcalls served */
    px_pubsub *ps;                            /* the data service of publish/lookup */
    px_timer *ps_timer;                       /* its next lookup deadline */
    inproc_ep *ps_timer_ep;                   /* ... started on this server's endpoint */
    uint32_t pub_uid, pub_gid;                /* the last publish's PMIX_USERID, PMIX_GRPID */
    int pub_nids;                             /* ... and how many of them it carried */
    char log[16384];                          /* recent log lines, one per line */
};

static void push(inproc_world *w, ev *e)
{
    e->next = NULL;
    if (w->tail != NULL)
        w->tail->next = e;
    else
        w->head = e;
    w->tail = e;
}

static void push_call(inproc_world *w, void (*fn)(void *), void *arg)
{
    ev *e = calloc(1, sizeof(*e));

    if (e == NULL)
        abort();
    e->kind = EV_CALL;
    e->fn = fn;
    e->arg = arg;
    push(w, e);
}

static inproc_ep *client_by_conn(inproc_world *w, inproc_ep *server, uint64_t conn)
{
    for (inproc_ep *e = w->eps; e != NULL; e = e->next)
        if (!e->is_server && e->server_ep == server && e->conn == conn)
            return e;
    return NULL;
}

/* ---- platform ops ---- */

static void region_unref(void *arg)
{
    px_region *r = arg;

    if (--r->refs == 0) {
        free(r->data);
        free(r);
    }
}

static pmix_status_t op_region_append(void *pctx, px_region *r, const void *data, size_t len)
{
    unsigned char *d;

    if (len == 0)
        return PMIX_SUCCESS;
    d = realloc(r->data, r->len + len);
    if (d == NULL)
        return PMIX_ERR_NOMEM;
    memcpy(d + r->len, data, len);
    r->data = d;
    r->len += len;
    return PMIX_SUCCESS;
}

static px_region *op_region_create(void *pctx, const void *data, size_t len)
{
    px_region *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return NULL;
    r->refs = 1;
    if (op_region_append(pctx, r, data, len) != PMIX_SUCCESS) {
        free(r);
        return NULL;
    }
    ((inproc_ep *)pctx)->w->regions++;
    return r;
}

static pmix_status_t op_send(void *pctx, uint64_t conn, void *frame, size_t len);

static pmix_status_t op_send_region(void *pctx, uint64_t conn, void *frame, size_t len,
                                    px_region *region)
{
    inproc_world *w = ((inproc_ep *)pctx)->w;
    pmix_status_t rc = op_send(pctx, conn, frame, len);

    if (rc == PMIX_SUCCESS) {
        region->refs++;
        w->tail->region = region;
    }
    return rc;
}

static void op_region_release(void *pctx, px_region *region)
{
    region_unref(region);
}

static pmix_status_t op_send(void *pctx, uint64_t conn, void *frame, size_t len)
{
    inproc_ep *ep = pctx;
    inproc_ep *to;
    ev *e;

    if (ep->is_server) {
        to = client_by_conn(ep->w, ep, conn);
        if (to == NULL || to->closed) {
            free(frame);
            return PMIX_ERR_UNREACH;
        }
        if (to->refuse_sends) {
            free(frame);
            return PMIX_ERR_NOMEM;
        }
        conn = PX_CONN_SERVER;
    } else {
        if (ep->closed) {
            free(frame);
            return PMIX_ERR_UNREACH;
        }
        if (ep->fail_sends > 0) {
            ep->fail_sends--;
            free(frame);
            return PMIX_ERR_NOMEM;
        }
        to = ep->server_ep;
        conn = ep->conn;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL)
        abort();
    e->kind = EV_DELIVER;
    e->to = to;
    e->conn = conn;
    e->frame = frame;
    e->len = len;
    push(ep->w, e);
    return PMIX_SUCCESS;
}

/* Break the connection of client endpoint `c`, telling `tell` (the side
 * that did not close it). */
static void break_conn(inproc_ep *c, inproc_ep *tell)
{
    ev *e;

    if (c->closed)
        return;
    c->closed = true;
    e = calloc(1, sizeof(*e));
    if (e == NULL)
        abort();
    e->kind = EV_CLOSED;
    e->to = tell;
    e->conn = tell->is_server ? c->conn : PX_CONN_SERVER;
    push(c->w, e);
}

static void op_close(void *pctx, uint64_t conn)
{
    inproc_ep *ep = pctx;

    if (ep->is_server) {
        inproc_ep *c = client_by_conn(ep->w, ep, conn);
        if (c != NULL)
            break_conn(c, c); /* the client sees its server hang up */
    } else {
        ep->closed = true; /* finalize: the server will see EOF */
        break_conn(ep, ep->server_ep);
    }
}

static px_timer *op_timer_start(void *pctx, double seconds, px_timer_cb cb, void *arg)
{
    inproc_world *w = ((inproc_ep *)pctx)->w;
    px_timer *t = calloc(1, sizeof(*t)), **pp;

    if (t == NULL)
        return NULL;
    t->ep = pctx;
    t->at = w->now + (seconds > 0 ? seconds : 0);
    t->seq = w->timer_seq++;
    t->cb = cb;
    t->arg = arg;
    for (pp = &w->timers; *pp != NULL && (*pp)->at <= t->at; pp = &(*pp)->next)
        ;
    t->next = *pp;
    *pp = t;
    return t;
}

static void op_timer_cancel(void *pctx, px_timer *t)
{
    inproc_world *w = ((inproc_ep *)pctx)->w;

    for (px_timer **pp = &w->timers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            free(t);
            return;
        }
    }
    fprintf(stderr, "inproc: cancel of a timer that is not pending\n");
    abort();
}

static double op_now(void *pctx)
{
    return ((inproc_ep *)pctx)->w->now;
}

static void op_nolock(void *pctx)
{
}

static void op_wait(void *pctx, px_wait *wt)
{
    if (!inproc_run_until(((inproc_ep *)pctx)->w, &wt->done)) {
        fprintf(stderr, "inproc: a blocking call waits but nothing can happen: deadlock\n");
        abort();
    }
}

static void op_wake(void *pctx, px_wait *wt)
{
    wt->done = 1;
}

/* ---- fence pages: opt-in (inproc_enable_pages) ---- */

static px_page *op_page_create(void *pctx, size_t len, void **mem)
{
    inproc_world *w = ((inproc_ep *)pctx)->w;
    px_page *pg;

    if (!w->pages || w->npages == sizeof(w->page_list) / sizeof(w->page_list[0]))
        return NULL;
    pg = calloc(1, sizeof(*pg));
    /* a mapping, as on the posix platform: aligned, zeroed, and its data
     * halves cost nothing until written */
    if (pg == NULL)
        abort();
    pg->mem =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (pg->mem == MAP_FAILED)
        abort();
    pg->len = len;
    w->page_list[w->npages++] = pg;
    *mem = pg->mem;
    return pg;
}

static pmix_status_t op_page_send(void *pctx, uint64_t conn, void *frame, size_t len, px_page *page)
{
    inproc_world *w = ((inproc_ep *)pctx)->w;
    pmix_status_t rc = op_send(pctx, conn, frame, len);

    if (rc == PMIX_SUCCESS)
        w->tail->page = page;
    return rc;
}

static void op_page_destroy(void *pctx, px_page *page)
{
    (void)pctx;
    (void)page; /* clients may still hold it: freed with the world */
}

static void *op_page_get(void *pctx, size_t *len)
{
    inproc_ep *ep = pctx;

    *len = ep->page_len;
    return ep->page;
}

static bool op_page_wait(void *pctx, uint32_t *word, uint32_t val, double seconds)
{
    return false; /* one thread: a sleeper would never be woken */
}

static pmix_status_t op_page_write(void *pctx, px_page *page, uint64_t off, const void *data,
                                   size_t len)
{
    if (off > page->len || len > page->len - off)
        return PMIX_ERR_BAD_PARAM;
    memcpy((char *)page->mem + off, data, len);
    return PMIX_SUCCESS;
}

static void op_page_wake(void *pctx, uint32_t *word)
{
    ((inproc_ep *)pctx)->w->page_wakes++;
    ((inproc_ep *)pctx)->w->trimmed_at_wake = ((inproc_ep *)pctx)->w->page_trimmed;
}

static void op_page_trim(void *pctx, px_page *page, uint64_t off, uint64_t len)
{
    if (off > page->len || len > page->len - off)
        return; /* not counted: a test sees it */
    memset((char *)page->mem + off, 0, len);
    ((inproc_ep *)pctx)->w->page_trimmed += len;
}

/* A client gives back through its mapping: the page's memory itself here. */
static bool op_page_discard(void *pctx, void *addr, size_t len)
{
    inproc_world *w = ((inproc_ep *)pctx)->w;

    if ((((uintptr_t)addr | len) & 4095) || w->fail_discards)
        return false; /* not counted: a test sees it */
    memset(addr, 0, len);
    w->page_trimmed += len;
    return true;
}

static void op_log(void *pctx, px_log_level level, const char *msg)
{
    inproc_world *w = ((inproc_ep *)pctx)->w;

    size_t used = strlen(w->log), len = strlen(msg);

    if (used + len + 2 > sizeof(w->log))
        used = 0; /* start over: tests look at recent lines only */
    snprintf(w->log + used, sizeof(w->log) - used, "%s\n", msg);
    if (getenv("INPROC_VERBOSE") != NULL)
        fprintf(stderr, "inproc log[%d]: %s\n", (int)level, msg);
}

/* The client endpoint of server endpoint `srv`'s connection `conn`. */
static inproc_ep *conn_ep(inproc_ep *srv, uint64_t conn)
{
    for (inproc_ep *e = srv->w->eps; e != NULL; e = e->next)
        if (!e->is_server && e->server_ep == srv && e->conn == conn)
            return e;
    return NULL;
}

static void op_conn_accepted(void *pctx, uint64_t conn)
{
    inproc_ep *e = conn_ep(pctx, conn);

    if (e != NULL)
        e->accepted = true;
}

/* Each client "process" has pid 10000 + its connection id. */
static uint32_t op_peer_pid(void *pctx, uint64_t conn)
{
    return conn_ep(pctx, conn) != NULL ? (uint32_t)(10000 + conn) : 0;
}

static const px_platform_ops inproc_ops = {
    .version = PX_PLATFORM_OPS_VERSION,
    .send = op_send,
    .close = op_close,
    .timer_start = op_timer_start,
    .timer_cancel = op_timer_cancel,
    .now = op_now,
    .lock = op_nolock,
    .unlock = op_nolock,
    .wait = op_wait,
    .wake = op_wake,
    .log = op_log,
    .region_create = op_region_create,
    .send_region = op_send_region,
    .region_release = op_region_release,
    .region_append = op_region_append,
    .page_create = op_page_create,
    .page_send = op_page_send,
    .page_destroy = op_page_destroy,
    .page_get = op_page_get,
    .page_wait = op_page_wait,
    .page_wake = op_page_wake,
    .page_write = op_page_write,
    .page_trim = op_page_trim,
    .page_discard = op_page_discard,
    .conn_accepted = op_conn_accepted,
    .peer_pid = op_peer_pid,
};

/* ---- the world as a host ---- */

static bool hosts_participant(inproc_world *w, inproc_ep *server, const pmix_proc_t *procs,
                              size_t n)
{
    for (inproc_ep *e = w->eps; e != NULL; e = e->next) {
        if (e->is_server || e->server_ep != server)
            continue;
        for (size_t i = 0; i < n; i++)
            if (strcmp(procs[i].nspace, e->proc.nspace) == 0 &&
                (procs[i].rank == PMIX_RANK_WILDCARD || procs[i].rank == e->proc.rank))
                return true;
    }
    return false;
}

static bool same_procs(const hcoll *h, const pmix_proc_t *procs, size_t n)
{
    if (h->nprocs != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(h->procs[i].nspace, procs[i].nspace) != 0 || h->procs[i].rank != procs[i].rank)
            return false;
    return true;
}

typedef struct hdone {
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
    pmix_status_t status;
    char *data;
    size_t ndata;
} hdone;

static void release_free(void *arg)
{
    free(arg);
}

static void call_hdone(void *arg)
{
    hdone *d = arg;

    d->cbfunc(d->status, d->data, d->ndata, d->cbdata, release_free, d->data);
    free(d);
}

static void complete(inproc_world *w, hcoll *h)
{
    size_t total = 0, off = 0;
    char *all;

    for (size_t i = 0; i < h->narrived; i++)
        total += h->c[i].ndata;
    for (size_t i = 0; i < h->narrived; i++) {
        hdone *d = calloc(1, sizeof(*d));
        all = malloc(total ? total : 1);
        if (d == NULL || all == NULL)
            abort();
        off = 0;
        for (size_t k = 0; k < h->narrived; k++) {
            if (h->c[k].ndata > 0)
                memcpy(all + off, h->c[k].data, h->c[k].ndata);
            off += h->c[k].ndata;
        }
        if (w->corrupt_collects > 0 && total > 0)
            all[0] ^= 0x5a; /* the first group's magic */
        d->cbfunc = h->c[i].cbfunc;
        d->cbdata = h->c[i].cbdata;
        d->status = h->status;
        d->data = all;
        d->ndata = h->status == PMIX_SUCCESS ? total : 0;
        push_call(w, call_hdone, d);
    }
}

static void free_hcoll(inproc_world *w, hcoll *h)
{
    for (hcoll **pp = &w->colls; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    }
    for (size_t i = 0; i < h->narrived; i++)
        free(h->c[i].data);
    free(h->c);
    free(h->procs);
    free(h);
}

static pmix_status_t host_fence(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                                const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                                pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    inproc_ep *server = hctx;
    inproc_world *w = server->w;
    px_fence_req req;
    hcoll *h;

    w->host_fences++;
    px_fence_req_read(info, ninfo, &req);
    if (req.local_status != PMIX_SUCCESS)
        w->local_failures++;
    /* A server hosts a participant of any fence it hands up; one that does
     * not (processes no endpoint holds) would overrun the contributions. */
    if (!hosts_participant(w, server, procs, nprocs))
        return PMIX_ERR_BAD_PARAM;
    for (h = w->colls; h != NULL; h = h->next)
        if (same_procs(h, procs, nprocs) && h->narrived < h->nexpected) {
            bool mine = false;
            for (size_t i = 0; i < h->narrived; i++)
                mine |= h->c[i].server == server;
            if (!mine)
                break;
        }
    if (h == NULL) {
        h = calloc(1, sizeof(*h));
        if (h == NULL)
            return PMIX_ERR_NOMEM;
        for (inproc_ep *e = w->eps; e != NULL; e = e->next)
            if (e->is_server && hosts_participant(w, e, procs, nprocs))
                h->nexpected++;
        h->c = calloc(h->nexpected, sizeof(*h->c));
        h->procs = malloc(nprocs * sizeof(*procs));
        if (h->c == NULL || h->procs == NULL)
            abort();
        memcpy(h->procs, procs, nprocs * sizeof(*procs));
        h->nprocs = nprocs;
        h->next = w->colls;
        w->colls = h;
    }
    struct contrib *c = &h->c[h->narrived++];
    c->server = server;
    c->cbfunc = cbfunc;
    c->cbdata = cbdata;
    c->ndata = ndata;
    c->data = malloc(ndata ? ndata : 1);
    if (c->data == NULL)
        abort();
    if (ndata > 0)
        memcpy(c->data, data, ndata);
    if (req.local_status != PMIX_SUCCESS && h->status == PMIX_SUCCESS) {
        /* a server's participant died: fail everyone now, and the late ones
         * as they arrive */
        h->status = req.local_status;
        complete(w, h);
        for (size_t i = 0; i < h->narrived; i++)
            h->c[i].cbfunc = NULL;
    } else if (h->status != PMIX_SUCCESS) {
        hdone *d = calloc(1, sizeof(*d));
        if (d == NULL)
            abort();
        d->cbfunc = cbfunc;
        d->cbdata = cbdata;
        d->status = h->status;
        d->data = malloc(1);
        push_call(w, call_hdone, d);
    }
    if (h->narrived == h->nexpected) {
        if (h->status == PMIX_SUCCESS)
            complete(w, h);
        if (w->corrupt_collects > 0)
            w->corrupt_collects--;
        free_hcoll(w, h);
    }
    return PMIX_SUCCESS;
}

/* ---- groups ---- */

static bool same_set(const pmix_proc_t *a, size_t na, const pmix_proc_t *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        size_t k = 0;
        while (k < nb && !(strcmp(a[i].nspace, b[k].nspace) == 0 && a[i].rank == b[k].rank))
            k++;
        if (k == nb)
            return false;
    }
    return true;
}

typedef struct gdone {
    struct gdone *next; /* among the held ones (inproc_hold_groups) */
    px_group_cbfunc_t cbfunc;
    void *cbdata;
    pmix_status_t status;
    bool has_ctxid;
    uint64_t ctxid;
    char *data;
    size_t ndata;
} gdone;

static void call_gdone(void *arg)
{
    gdone *d = arg;

    d->cbfunc(d->status, d->has_ctxid, d->ctxid, d->data, d->ndata, d->cbdata, release_free,
              d->data);
    free(d);
}

/* Answer contribution `k` of `g` with `status` (and, on success, every
 * contribution and the id), from the world's queue, as a host would from
 * its loop. */
static void gcoll_answer(inproc_world *w, gcoll *g, size_t k, pmix_status_t status, bool has_ctxid,
                         uint64_t ctxid)
{
    gdone *d = calloc(1, sizeof(*d));
    size_t total = 0, off = 0;

    if (d == NULL || g->c[k].cbfunc == NULL)
        abort();
    for (size_t i = 0; i < g->narrived && status == PMIX_SUCCESS; i++)
        total += g->c[i].ndata;
    if ((d->data = malloc(total ? total : 1)) == NULL)
        abort();
    for (size_t i = 0; i < g->narrived && status == PMIX_SUCCESS; i++) {
        if (g->c[i].ndata > 0)
            memcpy(d->data + off, g->c[i].data, g->c[i].ndata);
        off += g->c[i].ndata;
    }
    d->cbfunc = g->c[k].cbfunc;
    d->cbdata = g->c[k].cbdata;
    d->status = status;
    d->has_ctxid = has_ctxid;
    d->ctxid = ctxid;
    d->ndata = total;
    g->c[k].cbfunc = NULL;
    if (g->c[k].server == w->hold_groups) {
        gdone **pp = &w->held_groups;
        while (*pp != NULL)
            pp = &(*pp)->next;
        *pp = d; /* delivered, in order, when the hold ends */
        return;
    }
    push_call(w, call_gdone, d);
}

static void free_gcoll(inproc_world *w, gcoll *g)
{
    for (gcoll **pp = &w->gcolls; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
    for (size_t i = 0; i < g->narrived; i++)
        free(g->c[i].data);
    free(g->c);
    free(g->procs);
    free(g);
}

static pmix_status_t host_group(void *hctx, const px_group_req *req, px_group_cbfunc_t cbfunc,
                                void *cbdata)
{
    inproc_ep *server = hctx;
    inproc_world *w = server->w;
    gcoll *g;

    w->host_groups++;
    if (req->local_status != PMIX_SUCCESS)
        w->group_failures++;
    if (!hosts_participant(w, server, req->procs, req->nprocs))
        return PMIX_ERR_BAD_PARAM;
    for (g = w->gcolls; g != NULL; g = g->next) {
        bool mine = false;
        if (g->op != req->op || strcmp(g->grp, req->grp) != 0 ||
            !same_set(g->procs, g->nprocs, req->procs, req->nprocs) || g->narrived >= g->nexpected)
            continue;
        for (size_t i = 0; i < g->narrived; i++)
            mine |= g->c[i].server == server;
        if (!mine)
            break;
    }
    if (g == NULL) {
        if ((g = calloc(1, sizeof(*g))) == NULL)
            return PMIX_ERR_NOMEM;
        for (inproc_ep *e = w->eps; e != NULL; e = e->next)
            if (e->is_server && hosts_participant(w, e, req->procs, req->nprocs))
                g->nexpected++;
        g->c = calloc(g->nexpected, sizeof(*g->c));
        g->procs = malloc(req->nprocs * sizeof(*g->procs));
        if (g->c == NULL || g->procs == NULL)
            abort();
        memcpy(g->procs, req->procs, req->nprocs * sizeof(*g->procs));
        g->nprocs = req->nprocs;
        g->op = req->op;
        snprintf(g->grp, sizeof(g->grp), "%s", req->grp);
        g->next = w->gcolls;
        w->gcolls = g;
    }
    size_t k = g->narrived++;
    g->c[k].server = server;
    g->c[k].cbfunc = cbfunc;
    g->c[k].cbdata = cbdata;
    g->c[k].ndata = req->ndata;
    if ((g->c[k].data = malloc(req->ndata ? req->ndata : 1)) == NULL)
        abort();
    if (req->ndata > 0)
        memcpy(g->c[k].data, req->data, req->ndata);
    g->assign_ctxid |= req->assign_ctxid;
    if (req->local_status != PMIX_SUCCESS && g->status == PMIX_SUCCESS) {
        /* a node's member failed: fail everyone now, late ones as they come */
        g->status = req->local_status;
        for (size_t i = 0; i < g->narrived; i++)
            gcoll_answer(w, g, i, g->status, false, 0);
    } else if (g->status != PMIX_SUCCESS) {
        gcoll_answer(w, g, k, g->status, false, 0);
    }
    if (g->narrived == g->nexpected) {
        if (g->status == PMIX_SUCCESS) {
            bool has = g->assign_ctxid;
            uint64_t id = 0;
            if (has) {
                /* the lowest member node makes the id */
                uint32_t nodes[64];
                size_t n = 0;
                inproc_ep *maker = NULL;
                for (size_t i = 0; i < g->narrived && n < 64; i++)
                    nodes[n++] = (uint32_t)g->c[i].server->nodeid;
                uint32_t low = px_ctxid_maker(nodes, n);
                for (size_t i = 0; i < g->narrived; i++)
                    if ((uint32_t)g->c[i].server->nodeid == low)
                        maker = g->c[i].server;
                id = px_ctxid_next(&maker->ctxgen);
            }
            for (size_t i = 0; i < g->narrived; i++)
                gcoll_answer(w, g, i, has && id == 0 ? PMIX_ERR_OUT_OF_RESOURCE : PMIX_SUCCESS, has,
                             id);
        }
        free_gcoll(w, g);
    }
    return PMIX_SUCCESS;
}

size_t inproc_host_groups(const inproc_world *w)
{
    return w->host_groups;
}

size_t inproc_group_failures(const inproc_world *w)
{
    return w->group_failures;
}

/* A direct modex request a server holds until the process commits; a
 * server destroyed before that never answers (px_server_destroy calls no
 * callback), and the world frees what is left. */
typedef struct dmx_req {
    struct dmx_req *next;
    inproc_world *w;
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
} dmx_req;

static void dmx_forget(dmx_req *r)
{
    for (dmx_req **pp = &r->w->dmx; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            return;
        }
    }
}

static void dmx_resp(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    dmx_req *r = cbdata;
    hdone *d = calloc(1, sizeof(*d));

    if (d == NULL || (d->data = malloc(sz ? sz : 1)) == NULL)
        abort();
    if (sz > 0)
        memcpy(d->data, data, sz);
    d->ndata = sz;
    d->status = status;
    d->cbfunc = r->cbfunc;
    d->cbdata = r->cbdata;
    push_call(r->w, call_hdone, d);
    dmx_forget(r);
    free(r);
}

static pmix_status_t host_dmodex(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                                 size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    inproc_world *w = ((inproc_ep *)hctx)->w;

    for (inproc_ep *e = w->eps; e != NULL; e = e->next) {
        if (!e->is_server && strcmp(e->proc.nspace, proc->nspace) == 0 &&
            e->proc.rank == proc->rank) {
            dmx_req *r = calloc(1, sizeof(*r));
            pmix_status_t rc;
            if (r == NULL)
                return PMIX_ERR_NOMEM;
            r->w = w;
            r->cbfunc = cbfunc;
            r->cbdata = cbdata;
            r->next = w->dmx;
            w->dmx = r;
            rc = e->server_ep->srv != NULL
                     ? px_server_dmodex_request(e->server_ep->srv, proc, dmx_resp, r)
                     : PMIX_ERR_UNREACH; /* its server was destroyed */
            if (rc != PMIX_SUCCESS) {
                dmx_forget(r);
                free(r);
            }
            return rc;
        }
    }
    return PMIX_ERR_NOT_FOUND;
}

static pmix_status_t host_abort(void *hctx, const pmix_proc_t *proc, void *obj, int status,
                                const char msg[], pmix_proc_t procs[], size_t nprocs,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_OPERATION_SUCCEEDED;
}

/* Note who the peer is; refuse the pid the test named. */
static pmix_status_t host_connected2(void *hctx, const pmix_proc_t *proc, void *obj,
                                     const pmix_info_t info[], size_t ninfo,
                                     pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    inproc_world *w = ((inproc_ep *)hctx)->w;

    w->hello_pid = w->hello_uid = w->hello_gid = 0;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_PROC_PID) && info[i].value.type == PMIX_PID)
            w->hello_pid = (uint32_t)info[i].value.data.pid;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_USERID) && info[i].value.type == PMIX_UINT32)
            w->hello_uid = info[i].value.data.uint32;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_GRPID) && info[i].value.type == PMIX_UINT32)
            w->hello_gid = info[i].value.data.uint32;
    }
    if (w->refuse_pid != 0 && w->hello_pid == w->refuse_pid)
        return PMIX_ERR_NO_PERMISSIONS;
    return PMIX_OPERATION_SUCCEEDED;
}

/* A tool's name, given now or from the queue. */
typedef struct tool_answer {
    pmix_status_t status;
    pmix_proc_t proc;
    pmix_tool_connection_cbfunc_t cbfunc;
    void *cbdata;
} tool_answer;

static void call_tool_answer(void *arg)
{
    tool_answer *a = arg;

    a->cbfunc(a->status, &a->proc, a->cbdata);
    free(a);
}

/* Names tools "tool.<n>" (or what they asked for), now, later or never
 * (inproc_tool_mode). */
static void host_tool(void *hctx, const pmix_info_t info[], size_t ninfo,
                      pmix_tool_connection_cbfunc_t cbfunc, void *cbdata)
{
    inproc_world *w = ((inproc_ep *)hctx)->w;
    tool_answer *a = calloc(1, sizeof(*a));
    const char *want = NULL;
    pmix_rank_t rank = 0;

    if (a == NULL)
        abort();
    w->tool_pid = 0;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_PROC_PID) && info[i].value.type == PMIX_PID)
            w->tool_pid = (uint32_t)info[i].value.data.pid;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_TOOL_NSPACE) && info[i].value.type == PMIX_STRING)
            want = info[i].value.data.string;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_TOOL_RANK) && info[i].value.type == PMIX_PROC_RANK)
            rank = info[i].value.data.rank;
    }
    a->cbfunc = cbfunc;
    a->cbdata = cbdata;
    a->status = w->tool_mode == 2 ? PMIX_ERR_NO_PERMISSIONS : PMIX_SUCCESS;
    if (want != NULL) {
        PMIx_Load_procid(&a->proc, want, rank);
    } else {
        char ns[32];
        snprintf(ns, sizeof(ns), "tool.%u", ++w->tools_named);
        PMIx_Load_procid(&a->proc, ns, 0);
    }
    if (w->tool_mode == 1) {
        push_call(w, call_tool_answer, a);
        return;
    }
    call_tool_answer(a);
}

/* PMIX_QUERY_NAMESPACES: "job"; PMIX_QUERY_PROC_TABLE of "job" (the
 * qualifier PMIX_NSPACE): ranks 0 and 1 on "node0", pids 4242 and 4243. */
static pmix_status_t host_query(void *hctx, const pmix_proc_t *requestor,
                                const pmix_query_t queries[], size_t nqueries,
                                pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    pmix_info_t out[4];
    size_t n = 0;

    memset(out, 0, sizeof(out));
    for (size_t q = 0; q < nqueries; q++) {
        const char *ns = NULL;
        for (size_t i = 0; i < queries[q].nqual; i++)
            if (PMIX_CHECK_KEY(&queries[q].qualifiers[i], PMIX_NSPACE))
                ns = queries[q].qualifiers[i].value.data.string;
        for (size_t k = 0; queries[q].keys[k] != NULL && n < 4; k++) {
            if (strcmp(queries[q].keys[k], PMIX_QUERY_NAMESPACES) == 0) {
                PMIx_Info_load(&out[n++], PMIX_QUERY_NAMESPACES, "job", PMIX_STRING);
            } else if (strcmp(queries[q].keys[k], PMIX_QUERY_PROC_TABLE) == 0 && ns != NULL &&
                       strcmp(ns, "job") == 0) {
                pmix_data_array_t *da = PMIx_Data_array_create(2, PMIX_PROC_INFO);
                pmix_proc_info_t *pi = da->array;
                for (int r = 0; r < 2; r++) {
                    PMIx_Load_procid(&pi[r].proc, "job", (pmix_rank_t)r);
                    pi[r].hostname = strdup("node0");
                    pi[r].executable_name = strdup("/bin/prog");
                    pi[r].pid = 4242 + r;
                    pi[r].state = PMIX_PROC_STATE_RUNNING;
                }
                PMIx_Info_load(&out[n++], PMIX_QUERY_PROC_TABLE, da, PMIX_DATA_ARRAY);
                PMIx_Data_array_free(da);
            }
        }
    }
    /* answered inside the upcall; the engine copies what it sends */
    cbfunc(n == 0 ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS, out, n, cbdata, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&out[i]);
    return PMIX_SUCCESS;
}

/* ---- publish / lookup: the world keeps one data service (host core) ---- */

/* Who `proc` is for the service: the world is one session; its node is
 * the server's. */
static px_pubsub_who pubsub_who(inproc_ep *server, const pmix_proc_t *proc)
{
    px_pubsub_who who = {.proc = *proc, .session = 1, .node = (uint32_t)server->nodeid};
    return who;
}

static void pubsub_arm(inproc_world *w, inproc_ep *ep);

static void pubsub_timer(void *arg)
{
    inproc_ep *ep = arg;
    inproc_world *w = ep->w;

    w->ps_timer = NULL;
    px_pubsub_expire(w->ps, w->now);
    pubsub_arm(w, ep);
}

/* One timer at the service's next deadline, on endpoint `ep`. */
static void pubsub_arm(inproc_world *w, inproc_ep *ep)
{
    double next = w->ps != NULL ? px_pubsub_next_deadline(w->ps) : 0;

    if (w->ps_timer != NULL)
        op_timer_cancel(w->ps_timer_ep, w->ps_timer);
    w->ps_timer = NULL;
    if (next > 0) {
        w->ps_timer = op_timer_start(ep, next - w->now, pubsub_timer, ep);
        w->ps_timer_ep = ep;
    }
}

static px_pubsub *pubsub_of(inproc_world *w)
{
    if (w->ps == NULL && (w->ps = px_pubsub_create(NULL)) == NULL)
        abort();
    return w->ps;
}

static pmix_status_t host_publish(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    inproc_ep *ep = hctx;
    inproc_world *w = ep->w;
    px_pubsub_who who = pubsub_who(ep, proc);
    pmix_status_t rc;

    w->pub_nids = 0;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_USERID) && info[i].value.type == PMIX_UINT32) {
            w->pub_uid = info[i].value.data.uint32;
            w->pub_nids++;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_GRPID) && info[i].value.type == PMIX_UINT32) {
            w->pub_gid = info[i].value.data.uint32;
            w->pub_nids++;
        }
    }
    rc = px_pubsub_publish(pubsub_of(w), &who, info, ninfo, w->now);

    pubsub_arm(ep->w, ep);
    return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
}

static pmix_status_t host_lookup(void *hctx, const pmix_proc_t *proc, char **keys,
                                 const pmix_info_t info[], size_t ninfo,
                                 pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    inproc_ep *ep = hctx;
    px_pubsub_who who = pubsub_who(ep, proc);
    pmix_status_t rc =
        px_pubsub_lookup(pubsub_of(ep->w), &who, keys, info, ninfo, ep->w->now, cbfunc, cbdata);

    pubsub_arm(ep->w, ep);
    return rc;
}

static pmix_status_t host_unpublish(void *hctx, const pmix_proc_t *proc, char **keys,
                                    const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                    void *cbdata)
{
    inproc_ep *ep = hctx;
    px_pubsub_who who = pubsub_who(ep, proc);
    pmix_status_t rc = px_pubsub_unpublish(pubsub_of(ep->w), &who, keys, info, ninfo);

    return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
}

size_t inproc_published(const inproc_world *w)
{
    return w->ps != NULL ? px_pubsub_entries(w->ps) : 0;
}

void inproc_last_publish_ids(const inproc_world *w, uint32_t *uid, uint32_t *gid, int *n)
{
    *uid = w->pub_uid;
    *gid = w->pub_gid;
    *n = w->pub_nids;
}

size_t inproc_lookups_waiting(const inproc_world *w)
{
    return w->ps != NULL ? px_pubsub_waiting(w->ps) : 0;
}

/* An event for the other nodes: every other server of the world delivers
 * it to its clients in range, as a host's relay would. */
static void host_notify(void *hctx, pmix_status_t status, const pmix_proc_t *source,
                        pmix_data_range_t range, const pmix_info_t info[], size_t ninfo)
{
    inproc_ep *me = hctx;
    me->w->host_events++;
    for (inproc_ep *e = me->w->eps; e != NULL; e = e->next)
        if (e->is_server && e != me && e->srv != NULL)
            px_server_notify(e->srv, status, source, range, info, ninfo);
}

static const px_server_host inproc_host = {
    .version = PX_SERVER_HOST_VERSION,
    .fence_nb = host_fence,
    .direct_modex = host_dmodex,
    .abort = host_abort,
    .client_connected2 = host_connected2,
    .group = host_group,
    .publish = host_publish,
    .lookup = host_lookup,
    .unpublish = host_unpublish,
    .tool_connected = host_tool,
    .query = host_query,
    .notify_event = host_notify,
};

void inproc_tool_mode(inproc_world *w, int mode)
{
    w->tool_mode = mode;
}

uint32_t inproc_last_tool_pid(const inproc_world *w)
{
    return w->tool_pid;
}

/* ---- the world ---- */

inproc_world *inproc_world_create(void)
{
    inproc_world *w = calloc(1, sizeof(*w));

    if (w != NULL)
        w->next_conn = 1;
    return w;
}

static void free_ev(ev *e)
{
    if (e->kind == EV_CALL && e->fn == call_hdone) {
        hdone *d = e->arg;
        free(d->data);
        free(d);
    } else if (e->kind == EV_CALL && e->fn == call_gdone) {
        gdone *d = e->arg;
        free(d->data);
        free(d);
    } else if (e->kind == EV_CALL) {
        free(e->arg);
    }
    if (e->region != NULL)
        region_unref(e->region);
    free(e->frame);
    free(e);
}

void inproc_world_destroy(inproc_world *w)
{
    if (w == NULL)
        return;
    /* lookups still waiting are answered while their servers live */
    if (w->ps != NULL)
        px_pubsub_cancel_all(w->ps, PMIX_ERR_UNREACH);
    px_pubsub_destroy(w->ps);
    for (inproc_ep *e = w->eps; e != NULL; e = e->next)
        if (!e->is_server)
            px_client_destroy(e->cli);
    for (inproc_ep *e = w->eps; e != NULL; e = e->next)
        if (e->is_server)
            px_server_destroy(e->srv);
    while (w->head != NULL) {
        ev *e = w->head;
        w->head = e->next;
        free_ev(e);
    }
    while (w->timers != NULL) {
        px_timer *t = w->timers;
        w->timers = t->next;
        free(t);
    }
    while (w->colls != NULL)
        free_hcoll(w, w->colls);
    while (w->gcolls != NULL)
        free_gcoll(w, w->gcolls);
    while (w->held_groups != NULL) {
        struct gdone *d = w->held_groups;
        w->held_groups = d->next;
        free(d->data);
        free(d);
    }
    while (w->dmx != NULL) {
        dmx_req *r = w->dmx;
        w->dmx = r->next;
        free(r);
    }
    while (w->eps != NULL) {
        inproc_ep *e = w->eps;
        w->eps = e->next;
        free(e);
    }
    for (size_t i = 0; i < w->npages; i++) {
        munmap(w->page_list[i]->mem, w->page_list[i]->len);
        free(w->page_list[i]);
    }
    free(w);
}

static inproc_ep *new_ep(inproc_world *w)
{
    inproc_ep *e = calloc(1, sizeof(*e)), **pp;

    if (e == NULL)
        abort();
    e->w = w;
    for (pp = &w->eps; *pp != NULL; pp = &(*pp)->next)
        ; /* append: keep creation order (node order for the host) */
    *pp = e;
    return e;
}

px_server *inproc_server(inproc_world *w, int nodeid)
{
    inproc_ep *e = new_ep(w);

    e->is_server = true;
    e->nodeid = nodeid;
    e->ctxgen.node = (uint32_t)nodeid;
    e->srv = px_server_create(&inproc_host, e, &inproc_ops, e);
    return e->srv;
}

px_server *inproc_server_made(inproc_world *w, int nodeid,
                              px_server *(*make)(const px_platform_ops *pops, void *pctx,
                                                 void *arg),
                              void *arg)
{
    inproc_ep *e = new_ep(w);

    e->is_server = true;
    e->nodeid = nodeid;
    e->ctxgen.node = (uint32_t)nodeid;
    e->srv = make(&inproc_ops, e, arg);
    return e->srv;
}

static inproc_ep *server_ep(inproc_world *w, px_server *srv);

void inproc_forget_server(inproc_world *w, px_server *srv)
{
    inproc_ep *s = server_ep(w, srv);

    if (s == NULL)
        abort();
    s->srv = NULL; /* deliveries to it are dropped from now on */
}

static inproc_ep *server_ep(inproc_world *w, px_server *srv)
{
    for (inproc_ep *e = w->eps; e != NULL; e = e->next)
        if (e->is_server && e->srv == srv)
            return e;
    return NULL;
}

static inproc_ep *client_ep(inproc_world *w, px_client *c)
{
    for (inproc_ep *e = w->eps; e != NULL; e = e->next)
        if (!e->is_server && e->cli == c)
            return e;
    return NULL;
}

px_client *inproc_client(inproc_world *w, px_server *srv, const pmix_proc_t *self)
{
    return inproc_client_as(w, srv, self, 1000, 1000);
}

px_client *inproc_client_as(inproc_world *w, px_server *srv, const pmix_proc_t *self, uint32_t uid,
                            uint32_t gid)
{
    inproc_ep *s = server_ep(w, srv);
    inproc_ep *e = new_ep(w);

    e->server_ep = s;
    e->proc = *self;
    e->conn = w->next_conn++;
    e->cli = px_client_create(&inproc_ops, e, self);
    if (px_server_sink()->opened(srv, e->conn, uid, gid) != PMIX_SUCCESS)
        e->closed = true;
    return e->cli;
}

px_client *inproc_tool(inproc_world *w, px_server *srv, const pmix_proc_t *want, uint32_t uid)
{
    pmix_proc_t none;
    px_client *c;

    memset(&none, 0, sizeof(none));
    none.rank = PMIX_RANK_UNDEF;
    c = inproc_client_as(w, srv, want != NULL ? want : &none, uid, uid);
    px_client_set_tool(c);
    return c;
}

typedef struct death {
    inproc_world *w;
    inproc_ep *victim;
} death;

/* The host's failure detector: every other server hears of the death. */
static void tell_servers(void *arg)
{
    death *d = arg;

    for (inproc_ep *e = d->w->eps; e != NULL; e = e->next)
        if (e->is_server && e != d->victim->server_ep && e->srv != NULL)
            px_server_proc_died(e->srv, &d->victim->proc, PMIX_ERR_PROC_TERM_WO_SYNC);
    /* and the data service: its PMIX_PERSIST_PROC data and waits go */
    if (d->w->ps != NULL)
        px_pubsub_proc_ended(d->w->ps, &d->victim->proc);
    free(d);
}

void inproc_kill_client(inproc_world *w, px_client *c)
{
    inproc_ep *e = client_ep(w, c);
    death *d = calloc(1, sizeof(*d));

    if (d == NULL)
        abort();
    d->w = w;
    d->victim = e;
    break_conn(e, e->server_ep);
    push_call(w, tell_servers, d);
}

void inproc_cut_client(inproc_world *w, px_client *c)
{
    break_conn(client_ep(w, c), client_ep(w, c));
}

void inproc_destroy_server(inproc_world *w, px_server *srv)
{
    inproc_ep *s = server_ep(w, srv);

    if (s == NULL)
        abort();
    for (hcoll *h = w->colls; h != NULL; h = h->next) {
        for (size_t i = 0; i < h->narrived; i++) {
            if (h->c[i].server == s && h->c[i].cbfunc != NULL) {
                fprintf(stderr, "inproc: a server is destroyed with a fence upcall pending\n");
                abort();
            }
        }
    }
    for (gcoll *g = w->gcolls; g != NULL; g = g->next) {
        for (size_t i = 0; i < g->narrived; i++) {
            if (g->c[i].server == s && g->c[i].cbfunc != NULL) {
                fprintf(stderr, "inproc: a server is destroyed with a group upcall pending\n");
                abort();
            }
        }
    }
    px_server_destroy(srv);
    s->srv = NULL; /* deliveries to it are dropped from now on */
    for (px_timer *t = w->timers; t != NULL; t = t->next)
        if (t->ep == s)
            w->orphan_timers++; /* kept: if it fires, ASan sees where */
    for (inproc_ep *e = w->eps; e != NULL; e = e->next)
        if (!e->is_server && e->server_ep == s)
            break_conn(e, e); /* the client sees its server go */
}

void inproc_fail_client_sends(inproc_world *w, px_client *c, int n)
{
    client_ep(w, c)->fail_sends = n;
}

void inproc_refuse_sends(inproc_world *w, px_client *c)
{
    client_ep(w, c)->refuse_sends = true;
}

void inproc_send_raw(inproc_world *w, px_client *c, const void *bytes, size_t len)
{
    inproc_ep *e = client_ep(w, c);
    void *copy = malloc(len ? len : 1);

    if (copy == NULL)
        abort();
    memcpy(copy, bytes, len);
    (void)op_send(e, PX_CONN_SERVER, copy, len);
}

static void step_event(inproc_world *w, ev *e)
{
    switch (e->kind) {
    case EV_CALL:
        e->fn(e->arg);
        e->kind = -1; /* consumed: free_ev must not free the argument */
        break;
    case EV_CLOSED:
        if (e->to->is_server && e->to->srv == NULL)
            break; /* destroyed */
        if (e->to->is_server)
            px_server_sink()->closed(e->to->srv, e->conn, PMIX_ERR_LOST_CONNECTION);
        else
            px_client_sink()->closed(e->to->cli, PX_CONN_SERVER, PMIX_ERR_LOST_CONNECTION);
        break;
    case EV_DELIVER:
        if (e->to->is_server) {
            inproc_ep *c = client_by_conn(w, e->to, e->conn);
            if (c == NULL || c->closed || e->to->srv == NULL)
                break; /* sent before the connection broke, or the server went */
            w->frames_to_servers++;
            if (px_server_sink()->deliver(e->to->srv, e->conn, e->frame, e->len) != PMIX_SUCCESS)
                break_conn(c, c);
        } else if (!e->to->closed && e->page != NULL && !e->to->refuse_page) {
            e->to->page = e->page->mem;
            e->to->page_len = e->page->len;
            (void)px_client_sink()->deliver(e->to->cli, PX_CONN_SERVER, e->frame, e->len);
        } else if (!e->to->closed && e->region != NULL) {
            px_region *r = e->region;
            e->region = NULL; /* the sink releases this reference */
            (void)px_client_sink()->deliver_region(e->to->cli, PX_CONN_SERVER, e->frame, e->len,
                                                   r->data, r->len, region_unref, r);
        } else if (!e->to->closed) {
            (void)px_client_sink()->deliver(e->to->cli, PX_CONN_SERVER, e->frame, e->len);
        }
        break;
    }
}

bool inproc_run_until(inproc_world *w, const volatile int *flag)
{
    for (;;) {
        if (flag != NULL && *flag)
            return true;
        if (w->head != NULL) {
            ev *e = w->head;
            w->head = e->next;
            if (w->head == NULL)
                w->tail = NULL;
            step_event(w, e);
            free_ev(e);
        } else if (w->timers != NULL) {
            px_timer *t = w->timers;
            w->timers = t->next;
            if (t->at > w->now)
                w->now = t->at;
            if (t->ep->is_server && t->ep->srv == NULL)
                w->orphan_timers_fired++;
            t->cb(t->arg);
            free(t);
        } else {
            return flag == NULL;
        }
    }
}

double inproc_now(const inproc_world *w)
{
    return w->now;
}

size_t inproc_host_events(const inproc_world *w)
{
    return w->host_events;
}

size_t inproc_host_fences(const inproc_world *w)
{
    return w->host_fences;
}

size_t inproc_regions(const inproc_world *w)
{
    return w->regions;
}

size_t inproc_local_failures(const inproc_world *w)
{
    return w->local_failures;
}

size_t inproc_server_timers(const inproc_world *w, const px_server *srv)
{
    size_t n = 0;

    for (const px_timer *t = w->timers; t != NULL; t = t->next)
        if (t->ep->is_server && t->ep->srv == srv)
            n++;
    return n;
}

size_t inproc_orphan_timers(const inproc_world *w)
{
    return w->orphan_timers;
}

size_t inproc_orphan_timers_fired(const inproc_world *w)
{
    return w->orphan_timers_fired;
}

void inproc_hold_groups(inproc_world *w, px_server *srv, bool hold)
{
    inproc_ep *s = server_ep(w, srv);

    if (s == NULL || (!hold && w->hold_groups != s))
        abort();
    if (hold) {
        w->hold_groups = s;
        return;
    }
    w->hold_groups = NULL;
    while (w->held_groups != NULL) {
        struct gdone *d = w->held_groups;
        w->held_groups = d->next;
        push_call(w, call_gdone, d);
    }
}

void inproc_corrupt_collects(inproc_world *w, int n)
{
    w->corrupt_collects = n;
}

const char *inproc_last_log(const inproc_world *w)
{
    return w->log;
}

uint32_t inproc_client_pid(inproc_world *w, px_client *c)
{
    return (uint32_t)(10000 + client_ep(w, c)->conn);
}

bool inproc_client_accepted(inproc_world *w, px_client *c)
{
    return client_ep(w, c)->accepted;
}

void inproc_refuse_pid(inproc_world *w, uint32_t pid)
{
    w->refuse_pid = pid;
}

void inproc_last_hello(const inproc_world *w, uint32_t *pid, uint32_t *uid, uint32_t *gid)
{
    *pid = w->hello_pid;
    *uid = w->hello_uid;
    *gid = w->hello_gid;
}

void inproc_enable_pages(inproc_world *w)
{
    w->pages = true;
}

void inproc_refuse_page(inproc_world *w, px_client *c)
{
    for (inproc_ep *ep = w->eps; ep != NULL; ep = ep->next)
        if (ep->cli == c)
            ep->refuse_page = true;
}

size_t inproc_page_wakes(const inproc_world *w)
{
    return w->page_wakes;
}

uint64_t inproc_page_trimmed(const inproc_world *w)
{
    return w->page_trimmed;
}

void inproc_fail_discards(inproc_world *w, bool fail)
{
    w->fail_discards = fail;
}

uint64_t inproc_page_trimmed_at_wake(const inproc_world *w)
{
    return w->trimmed_at_wake;
}

size_t inproc_frames_to_servers(const inproc_world *w)
{
    return w->frames_to_servers;
}

void *inproc_client_page(inproc_world *w, px_client *c)
{
    for (inproc_ep *ep = w->eps; ep != NULL; ep = ep->next)
        if (ep->cli == c)
            return ep->page;
    return NULL;
}

void inproc_op_cb(pmix_status_t status, void *cbdata)
{
    inproc_proc *p = cbdata;

    p->status = status;
    p->done++;
}

void inproc_value_cb(pmix_status_t status, pmix_value_t *v, void *cbdata)
{
    inproc_proc *p = cbdata;

    p->status = status;
    p->done++;
    if (status == PMIX_SUCCESS && px_value_copy(&p->value, v) != PMIX_SUCCESS) {
        fprintf(stderr, "inproc_value_cb: cannot copy the value\n");
        abort();
    }
}
