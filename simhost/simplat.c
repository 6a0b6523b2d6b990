/*
 * simplat.c - the platform ops of px_platform.h over SimGrid, the api/
 * binding, and the process actors.
 *
 * Endpoints. Each actor has one endpoint (sim_ep): a mailbox and a list of
 * timers. A client's platform context is its sim_proc, a server's its
 * sim_node; both start with a sim_ep. Sending a frame is a put (sgw.h) of
 * a sim_msg to the peer's mailbox, whose simulated size is the frame's
 * length; client and server of a node sit on the same SimGrid host, so
 * their traffic crosses the node's loopback link. A frame sent with a
 * region carries a reference to one shared copy of the data (the memory
 * itself, as a real node maps one read-only segment), and only the frame's
 * bytes are simulated.
 *
 * Blocking. `wait` runs the calling process's event loop: it fires the
 * client's due timers and receives from the actor's mailbox (with a timeout
 * when a timer is pending) until `wake` has set the flag. A process that is
 * not inside a blocking call does not receive: messages wait in its mailbox
 * until the next call, and timers fire then too.
 *
 * Handshake and finalize. The api/ shim holds its client's init lock (a
 * pthread mutex of the px_api_client: one per simulated process here)
 * across the whole of PMIx_Init and PMIx_Finalize, including the wait for
 * the server's answer. pmixsim runs these two exchanges without suspending
 * the actor: a HELLO or FINALIZE frame puts the client in `sync` mode, in
 * which its frames go straight to the server engine (called from the
 * client's actor) and the server's answers straight back, in zero
 * simulated time. (This began when the lock was one for the whole process:
 * all actors share one OS thread, and a second actor taking it while the
 * first was suspended inside would have hung the simulation. With a lock
 * per process that no longer happens; sync mode stays because it keeps
 * start-up out of the simulated time.)
 * Everything else goes through the simulated network.
 *
 * Mailboxes. SimGrid binds a posted receive to the first transfer sent
 * to its mailbox, and the receiver waits for that one even when a later,
 * shorter one has arrived meanwhile: where transfers overtake each other
 * (routes of different lengths, sizes far apart, a local request sent
 * while a far node's message is on its way) an actor takes them in the
 * order they were sent, not as they arrived. A process's Get request
 * waited 1.8 us behind a fence message during bizcard full on a crossbar;
 * fences started up to 2 us late on a torus. Queued boxes (faults, two
 * planes) take messages as they arrive; so do the frames between the
 * process and the server of a node with one actor (below). (A second
 * mailbox for local frames, waited on with Comm::wait_any beside the
 * first, was tried: with a permanent receiver SimGrid 3.32 handed over a
 * frame still in transfer, and its sender then waited for ever.)
 *
 * One actor per node. With one process per node, and nothing that needs
 * the server to run while its process is busy (--cpu charges both to one
 * clock; a fault may kill the process and not the server; two planes
 * have actors of their own), the process's actor also runs its node's
 * server: node and process share a mailbox, `wait` hands what is not for
 * the client to the server (sim_node_deliver) and runs the server's timers
 * too, and once the workload has returned the actor serves the node for
 * ever, as a daemon (sim_node_serve), unless it was the last process. A
 * process outside PMIx calls takes no simulated time, so the server
 * misses nothing meanwhile. Their frames to each other still cross the
 * loopback link (sgw_loopback: a put to a box of the node's own, taken by
 * the same actor; under CM02 with its default factors, a sleep of the
 * time CM02 gives a lone transfer on that link, latency + bytes / min(bw,
 * TCP-gamma / (2 latency)): nothing else ever uses it, and a sleep costs
 * SimGrid less than a transfer, a tenth of a 16,384-node barrier's wall
 * time) and then wait in the node's local queue, which `wait`
 * and the daemon loop read before the mailbox (through the mailbox they
 * could wait behind network transfers: see above). Half the actors: at
 * 16,384 nodes, 0.93 GB instead of 1.23, and about 0.3 s less (0.4 s
 * more with the computed loopback). Reports and event logs are the same
 * as with an actor per server on a crossbar, times within 1e-4 (SimGrid's
 * transfers round to its solver's precision; test sim_one_actor_per_node),
 * but where a local frame would wait behind a network transfer with an
 * actor per server (see Mailboxes).
 * --server-actors turns it off.
 *
 * CPU time (--cpu). By default the library's work takes no simulated time.
 * With --cpu measured, every message an actor handles (a server's frames,
 * collective and direct modex messages; a client's frames) costs the
 * thread CPU time its handling took, with --cpu model:A,B it costs A + B x
 * bytes: the actor then sleeps that long, busy, before it handles the
 * next one (sim_handle). Measured runs do not replay identically.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pmixsim.h"
#include "px_proto.h"
#include "wire/px_wire.h"

void *sim_grow(void *arr, size_t *cap, size_t n, size_t size)
{
    size_t want;
    void *a;

    if (n < *cap)
        return arr;
    want = *cap ? 2 * *cap : 16;
    if ((a = realloc(arr, want * size)) != NULL)
        *cap = want;
    return a;
}

/* ---- messages ---- */

sim_msg *sim_msg_new(int kind, void *data, size_t len)
{
    sim_msg *m = calloc(1, sizeof(*m));

    if (m == NULL) {
        fprintf(stderr, "pmixsim: out of memory\n");
        abort();
    }
    m->kind = kind;
    m->data = data;
    m->len = len;
#ifdef __SANITIZE_ADDRESS__
    sim_ep *ep = sgw_in_actor() ? sgw_self_data() : NULL;
    if (ep != NULL && ep->run != NULL) {
        m->live_run = ep->run;
        m->live_next = ep->run->live_msgs;
        if (m->live_next != NULL)
            m->live_next->live_prev = m;
        ep->run->live_msgs = m;
    }
#endif
    return m;
}

void sim_msgs_free_live(sim_run *run)
{
#ifdef __SANITIZE_ADDRESS__
    while (run->live_msgs != NULL)
        sim_msg_free(run->live_msgs);
#else
    (void)run;
#endif
}

void sim_region_unref(void *arg)
{
    px_region *r = arg;

    if (r != NULL && --r->refs == 0) {
        if (r->release != NULL)
            r->release(r->arg);
        free(r);
    }
}

void sim_msg_free(void *arg)
{
    sim_msg *m = arg;

    if (m == NULL)
        return;
#ifdef __SANITIZE_ADDRESS__
    if (m->live_run != NULL) {
        if (m->live_prev != NULL)
            m->live_prev->live_next = m->live_next;
        else
            m->live_run->live_msgs = m->live_next;
        if (m->live_next != NULL)
            m->live_next->live_prev = m->live_prev;
    }
#endif
    sim_region_unref(m->region);
    free(m->data);
    free(m);
}

static void queue_push(sim_msg **head, sim_msg *m)
{
    sim_msg **pp = head;

    while (*pp != NULL)
        pp = &(*pp)->next;
    m->next = NULL;
    *pp = m;
}

static sim_node *node_of_ep(sim_ep *ep)
{
    return ep->is_server ? (sim_node *)ep : ((sim_proc *)ep)->node;
}

/* A message between the process and the server of a merged node crosses
 * the loopback link and lands in the node's local queue (see the top). */
static int send_now(sim_ep *to, sim_msg *m, double bytes)
{
    sim_node *n = node_of_ep(to);
    sim_ep *self;

    if (n->merged && (self = sgw_self_data()) != NULL && node_of_ep(self) == n) {
        if (to->run->lo_rate > 0) {
            sgw_sleep_until(sgw_now() + to->run->lo_lat + bytes / to->run->lo_rate);
        } else if (sgw_loopback(n->loop, bytes) != 0) {
            sim_msg_free(m);
            return -1;
        }
        queue_push(&n->local_head, m); /* a frame or two at most */
        return 0;
    }
    return sim_net_send(to->run, to, m, bytes);
}

/* Every SimGrid call suspends the calling actor and may run the others
 * first. A process actor that may hold the api/ shim's init lock (inside
 * PMIx_Init or PMIx_Finalize, see the top) must not make one: its sends
 * wait in `deferred` until flush_deferred, at the next point where the
 * process is surely outside the lock. */
int sim_send(sim_ep *to, sim_msg *m, double bytes)
{
    sim_ep *self = sgw_self_data();

    if (self != NULL && !self->is_server && ((sim_proc *)self)->defer) {
        m->dest = to;
        m->bytes = bytes;
        queue_push(&((sim_proc *)self)->deferred, m);
        return 0;
    }
    return send_now(to, m, bytes);
}

static void flush_deferred(sim_proc *p)
{
    sim_msg *m;

    p->defer = false;
    while ((m = p->deferred) != NULL) {
        p->deferred = m->next;
        m->next = NULL;
        (void)send_now(m->dest, m, m->bytes);
    }
}

static sim_msg *queue_pop(sim_msg **head)
{
    sim_msg *m = *head;

    if (m != NULL)
        *head = m->next;
    return m;
}

void sim_logf(sim_run *run, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "pmixsim [%.9f]: ", sgw_now());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---- timers ---- */

struct px_timer *sim_timer_add(sim_ep *ep, double seconds, void (*cb)(void *), void *arg)
{
    struct px_timer *t = calloc(1, sizeof(*t)), **pp;
    sim_ep *self = sgw_self_data();

    if (t == NULL)
        return NULL;
    t->at = sgw_now() + (seconds > 0 ? seconds : 0);
    t->seq = ep->tseq++;
    t->cb = cb;
    t->arg = arg;
    for (pp = &ep->timers; *pp != NULL && (*pp)->at <= t->at; pp = &(*pp)->next)
        ;
    t->next = *pp;
    *pp = t;
    /* An actor blocked in a receive with a later deadline must look again
     * (before the simulation runs, nobody is blocked yet; a merged node's
     * actor is not blocked when it adds its own timers). */
    if (ep->timers == t && self != ep && sgw_in_actor() &&
        !(self != NULL && node_of_ep(ep)->merged && node_of_ep(self) == node_of_ep(ep))) {
        if (sgw_box_is_queued(ep->box))
            sgw_box_push(ep->box, sim_msg_new(MSG_WAKE, NULL, 0)); /* a signal, not a message */
        else
            (void)sim_send(ep, sim_msg_new(MSG_WAKE, NULL, 0), 0);
    }
    return t;
}

void sim_timer_cancel(sim_ep *ep, struct px_timer *t)
{
    for (struct px_timer **pp = &ep->timers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            free(t);
            return;
        }
    }
}

double sim_timers_run(sim_ep *ep)
{
    while (ep->timers != NULL) {
        struct px_timer *t = ep->timers;
        double now = sgw_now();
        /* A timer less than SimGrid's timing precision (1 ns) away is due:
         * a wait that short can end without the clock moving, and the
         * actor would wait for it again and again. */
        if (t->at - now > 1e-9)
            return t->at - now;
        void (*cb)(void *) = t->cb;
        void *arg = t->arg;
        ep->timers = t->next;
        /* freed first: a callback that sends blocks its actor, and when the
         * run ends meanwhile (the last process ended) it never returns */
        free(t);
        cb(arg);
    }
    return -1;
}

/* ---- platform ops ---- */

static sim_proc *proc_of(void *pctx)
{
    return (sim_proc *)pctx; /* only called with a client's context */
}

static sim_proc *client_by_conn(sim_node *n, uint64_t conn)
{
    return sim_node_proc(n, conn);
}

unsigned sim_frame_type(const void *frame, size_t len)
{
    const unsigned char *b = frame;

    /* Bit 15 only says that a region travels with the frame. */
    return len >= PX_FRAME_HDR ? (unsigned)(b[6] | (b[7] << 8)) & 0x7fffu : 0;
}

/* The i32 status that starts the payload of a reply. */
static pmix_status_t frame_status(const void *frame, size_t len)
{
    const unsigned char *b = (const unsigned char *)frame + PX_FRAME_HDR;

    if (len < PX_FRAME_HDR + 4)
        return PMIX_ERR_BAD_PARAM;
    return (pmix_status_t)(int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                                    (uint32_t)b[3] << 24);
}

static pmix_status_t to_client(sim_node *n, uint64_t conn, void *frame, size_t len,
                               px_region *region)
{
    sim_proc *p = client_by_conn(n, conn);
    sim_msg *m;

    if (p == NULL || p->closed) {
        free(frame);
        return PMIX_ERR_UNREACH;
    }
    if (sim_frame_type(frame, len) == PX_MSG_FENCE_DONE) {
        pmix_status_t st = frame_status(frame, len);
        sim_fault_fence_result(n->ep.run, p, st);
        if (st == PMIX_ERR_PROC_TERM_WO_SYNC)
            p->saw_death = true;
    }
    m = sim_msg_new(MSG_S2C, frame, len);
    if (region != NULL) {
        region->refs++;
        m->region = region;
    }
    if (p->sync)
        queue_push(&p->sync_in, m);
    else
        sim_send(&p->ep, m, (double)len);
    return PMIX_SUCCESS;
}

static pmix_status_t op_send(void *pctx, uint64_t conn, void *frame, size_t len)
{
    sim_ep *ep = pctx;
    sim_proc *p;
    sim_msg *m;
    unsigned type;

    if (ep->is_server)
        return to_client((sim_node *)ep, conn, frame, len, NULL);
    p = proc_of(pctx);
    if (p->closed) {
        free(frame);
        return PMIX_ERR_UNREACH;
    }
    type = sim_frame_type(frame, len);
    if (type == PX_MSG_HELLO || type == PX_MSG_FINALIZE) {
        p->sync = true;
        p->defer = true;
    } else if (!p->sync) {
        flush_deferred(p); /* a regular request: outside the init lock */
    }
    if (type == PX_MSG_FENCE)
        p->fences_sent++;
    m = sim_msg_new(MSG_C2S, frame, len);
    m->conn = p->conn;
    if (p->sync)
        queue_push(&p->sync_out, m);
    else
        sim_send(&p->node->ep, m, (double)len);
    return PMIX_SUCCESS;
}

static pmix_status_t op_send_region(void *pctx, uint64_t conn, void *frame, size_t len,
                                    px_region *region)
{
    sim_ep *ep = pctx;

    if (!ep->is_server) {
        free(frame);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    return to_client((sim_node *)ep, conn, frame, len, region);
}

static px_region *op_region_create(void *pctx, const void *data, size_t len)
{
    px_region *r = malloc(sizeof(*r) + len);

    if (r == NULL)
        return NULL;
    r->refs = 1;
    r->len = len;
    r->data = r->own;
    r->release = NULL;
    r->arg = NULL;
    memcpy(r->own, data, len);
    return r;
}

/* No copy: every simulated node's clients read the one buffer the host
 * handed every node (a fence's collected data, built once per run). */
static px_region *op_region_wrap(void *pctx, const void *data, size_t len,
                                 void (*release)(void *arg), void *arg)
{
    px_region *r = malloc(sizeof(*r));

    if (r == NULL)
        return NULL;
    r->refs = 1;
    r->len = len;
    r->data = data;
    r->release = release;
    r->arg = arg;
    return r;
}

static void op_region_release(void *pctx, px_region *region)
{
    sim_region_unref(region);
}

static void op_close(void *pctx, uint64_t conn)
{
    sim_ep *ep = pctx;

    if (ep->is_server) {
        sim_proc *p = client_by_conn((sim_node *)ep, conn);
        if (p == NULL || p->closed)
            return;
        p->closed = true; /* the client hears of it when it next looks */
        if (!p->sync)
            sim_send(&p->ep, sim_msg_new(MSG_HANGUP, NULL, 0), 0);
    } else {
        sim_proc *p = proc_of(pctx);
        sim_msg *m;
        if (p->closed)
            return;
        p->closed = true;
        m = sim_msg_new(MSG_CLOSE, NULL, 0);
        m->conn = p->conn;
        sim_send(&p->node->ep, m, 0);
    }
}

static px_timer *op_timer_start(void *pctx, double seconds, px_timer_cb cb, void *arg)
{
    return sim_timer_add((sim_ep *)pctx, seconds, cb, arg);
}

static void op_timer_cancel(void *pctx, px_timer *t)
{
    sim_timer_cancel((sim_ep *)pctx, t);
}

static double op_now(void *pctx)
{
    return sgw_now();
}

static void op_nolock(void *pctx)
{
}

/* Run the handshake or finalize exchange in memory (see the top). Returns
 * true if it completed. */
static bool run_sync(sim_proc *p, px_wait *w)
{
    sim_node *n = p->node;
    sim_msg *m;

    while (!w->done) {
        if ((m = queue_pop(&p->sync_out)) != NULL) {
            if (px_server_sink()->deliver(n->srv, m->conn, m->data, m->len) != PMIX_SUCCESS)
                p->closed = true;
        } else if ((m = queue_pop(&p->sync_in)) != NULL) {
            sim_deliver_s2c(p, m);
            m = NULL;
        } else if (p->ep.timers != NULL && p->ep.timers->at <= sgw_now()) {
            (void)sim_timers_run(&p->ep);
        } else {
            break;
        }
        sim_msg_free(m);
    }
    p->sync = false;
    return w->done != 0;
}

double sim_thread_cpu(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sim_handle(sim_ep *ep, void (*deliver)(void *ep, sim_msg *m), sim_msg *m)
{
    sim_run *run = ep->run;
    double cost = 0, t0, susp;

    switch (run->opt.cpu) {
    case SIM_CPU_NONE: deliver(ep, m); return;
    case SIM_CPU_MODEL:
        cost = run->opt.cpu_msg + run->opt.cpu_byte * (double)m->len;
        deliver(ep, m);
        break;
    default:
        susp = ep->cpu_suspended;
        t0 = sim_thread_cpu();
        deliver(ep, m);
        cost = sim_thread_cpu() - t0 - (ep->cpu_suspended - susp);
        break;
    }
    if (cost > 0) {
        run->cpu_charged += cost;
        sgw_sleep_until(sgw_now() + cost);
    }
}

void sim_deliver_s2c(sim_proc *p, sim_msg *m)
{
    if (p->ac.client == NULL) {
        sim_msg_free(m);
        return;
    }
    if (m->region != NULL) {
        px_region *r = m->region;
        m->region = NULL; /* the sink releases this reference */
        (void)px_client_sink()->deliver_region(p->ac.client, PX_CONN_SERVER, m->data, m->len,
                                               r->data, r->len, sim_region_unref, r);
    } else {
        (void)px_client_sink()->deliver(p->ac.client, PX_CONN_SERVER, m->data, m->len);
    }
    sim_msg_free(m);
}

void sim_deliver_close(sim_proc *p)
{
    p->closed = true;
    if (p->ac.client != NULL)
        px_client_sink()->closed(p->ac.client, PX_CONN_SERVER, PMIX_ERR_LOST_CONNECTION);
}

static void deliver_s2c(void *ep, sim_msg *m)
{
    sim_deliver_s2c((sim_proc *)ep, m);
}

static void op_wait(void *pctx, px_wait *w)
{
    sim_proc *p = proc_of(pctx);

    if (p->sync) {
        if (run_sync(p, w))
            return;
        sim_logf(p->ep.run,
                 "rank %u: a handshake or finalize waits for the network: other processes "
                 "entering PMIx_Init or PMIx_Finalize meanwhile would hang",
                 p->proc.rank);
    }
    flush_deferred(p);
    while (!w->done) {
        double next = sim_timers_run(&p->ep);
        void *payload = NULL;
        sim_msg *m;
        int rc;

        if (p->node->merged) {
            double nn = sim_node_timers(p->node);
            if (nn >= 0 && (next < 0 || nn < next))
                next = nn;
        }
        if (w->done)
            break;
        if (p->node->merged)
            rc = sim_node_recv(p->node, next, &payload);
        else
            rc = sgw_recv(p->ep.box, next, &payload);
        if (rc != 0)
            continue; /* a timer is due, or a failed communication */
        m = payload;
        switch (m->kind) {
        case MSG_S2C:
            if (p->closed)
                sim_msg_free(m);
            else
                sim_handle(&p->ep, deliver_s2c, m);
            break;
        case MSG_HANGUP:
            sim_msg_free(m);
            sim_deliver_close(p);
            break;
        case MSG_WAKE: sim_msg_free(m); break;
        default:
            if (p->node->merged)
                sim_node_deliver(p->node, m); /* for the node's server */
            else
                sim_msg_free(m);
            break;
        }
    }
}

static void op_wake(void *pctx, px_wait *w)
{
    w->done = 1;
}

static void op_log(void *pctx, px_log_level level, const char *msg)
{
    sim_ep *ep = pctx;

    if (level <= PX_LOG_WARN || getenv("PMIXSIM_VERBOSE") != NULL)
        sim_logf(ep->run, "%s: %s", ep->name, msg);
}

const px_platform_ops sim_platform_ops = {
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
    .region_wrap = op_region_wrap,
};

/* ---- the api/ binding: the calling actor's client ---- */

static px_api_client *bind_current(void *arg)
{
    sim_run *run = arg;
    sim_ep *ep = sgw_self_data();

    if (ep == NULL || ep->is_server)
        return &run->none;
    return &((sim_proc *)ep)->ac;
}

static sim_proc *proc_of_ac(px_api_client *ac)
{
    return (sim_proc *)((char *)ac - offsetof(sim_proc, ac));
}

static void bind_teardown(px_api_client *ac)
{
    sim_proc *p = proc_of_ac(ac);

    p->defer = true; /* inside PMIx_Finalize */
    if (!p->closed)
        op_close(p, PX_CONN_SERVER);
    px_client_destroy(ac->client);
    ac->client = NULL;
    while (p->sync_out != NULL)
        sim_msg_free(queue_pop(&p->sync_out));
    while (p->sync_in != NULL)
        sim_msg_free(queue_pop(&p->sync_in));
    while (p->ep.timers != NULL) {
        struct px_timer *t = p->ep.timers;
        p->ep.timers = t->next;
        free(t);
    }
}

void sim_proc_reap(sim_proc *p)
{
    if (p->ac.client != NULL)
        bind_teardown(&p->ac);
    while (p->deferred != NULL)
        sim_msg_free(queue_pop(&p->deferred));
}

static pmix_status_t bind_open(void *arg, px_api_client *ac, const pmix_info_t info[], size_t ninfo,
                               char *errbuf, size_t errlen)
{
    sim_run *run = arg;
    sim_proc *p;
    px_client *c;

    if (ac == &run->none) {
        snprintf(errbuf, errlen, "PMIx_Init called outside a simulated process");
        return PMIX_ERR_INIT;
    }
    p = proc_of_ac(ac);
    c = px_client_create(&sim_platform_ops, p, &p->proc);
    if (c == NULL) {
        snprintf(errbuf, errlen, "out of memory");
        return PMIX_ERR_NOMEM;
    }
    p->opened = true;
    p->conn = p->node->next_conn++;
    p->closed = false;
    p->sync = false;
    p->defer = true; /* inside PMIx_Init */
    if (px_server_sink()->opened(p->node->srv, p->conn, 1000, 1000) != PMIX_SUCCESS) {
        px_client_destroy(c);
        p->closed = true;
        snprintf(errbuf, errlen, "the node's server refused the connection");
        return PMIX_ERR_UNREACH;
    }
    ac->client = c;
    ac->pops = &sim_platform_ops;
    ac->pctx = p;
    ac->priv = p;
    ac->progress = NULL;
    ac->teardown = bind_teardown;
    return PMIX_SUCCESS;
}

void sim_bind(sim_run *run)
{
    run->none.external_progress = -1;
    run->binding.current = bind_current;
    run->binding.open = bind_open;
    run->binding.arg = run;
    px_api_set_binding(&run->binding);
}

/* ---- the process actor ---- */

/* The body of an actor that a fault may kill. When it is killed, what its
 * frames held is lost with it; the sanitizer build's leak check ignores
 * allocations made under this function (main.c). It must stay a frame of
 * its own: no inlining, no tail call. */
__attribute__((noinline)) void sim_run_doomed(void (*fn)(void *), void *arg)
{
    volatile int keep = 0;

    fn(arg);
    keep++;
}

static void proc_body(void *arg);

#ifdef __SANITIZE_ADDRESS__
#define STACK_MEASURED 0
#else
#define STACK_MEASURED 1
#endif

/* A process actor's stack high-water mark: how deep below `top` (a frame
 * address near the top of the calling actor's stack of `size` bytes) the
 * stack was ever used. The window looked at is the `size` - 4 kB below
 * `top`: SimGrid's own frames above `top` take less than 4 kB, so the
 * window is inside the stack. Only pages the kernel holds are read or
 * written (mincore): a page never touched is zero, and stays untouched.
 * stack_clean, at the actor's start, zeroes the resident pages of the
 * window more than 4 kB below `top` (SimGrid's stacks with guard pages
 * may come from memory the process used before; its own frames and those
 * of memset are above that); stack_used, at its end, finds the lowest
 * non-zero byte: the deepest point (0 if the stack cannot be read). */
enum {
    STACK_SLACK = 4096,
    STACK_MAX_PAGES = 1024
};

/* The window's first page, its start and its page count; false if it
 * cannot be read. */
static bool stack_window(const char *top, size_t size, uintptr_t *lo, uintptr_t *start,
                         size_t *npages, unsigned char *vec)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t end = (uintptr_t)top;

    if (size <= 2 * STACK_SLACK)
        return false;
    *lo = end - (size - STACK_SLACK);
    *start = *lo & ~(uintptr_t)(pg - 1);
    *npages = (end - *start + pg - 1) / pg;
    return *npages <= STACK_MAX_PAGES && mincore((void *)*start, *npages * pg, vec) == 0;
}

static void stack_clean(const char *top, size_t size)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char vec[STACK_MAX_PAGES];
    uintptr_t lo, start, stop = (uintptr_t)top - STACK_SLACK;
    size_t npages;

    if (!stack_window(top, size, &lo, &start, &npages, vec))
        return;
    for (size_t i = 0; i < npages; i++) {
        uintptr_t a = start + i * pg, b = a + pg;
        a = a < lo ? lo : a;
        b = b > stop ? stop : b;
        if ((vec[i] & 1) && a < b)
            memset((void *)a, 0, b - a);
    }
}

static size_t stack_used(const char *top, size_t size)
{
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char vec[STACK_MAX_PAGES];
    uintptr_t lo, start, end = (uintptr_t)top;
    size_t npages;

    if (!stack_window(top, size, &lo, &start, &npages, vec))
        return 0;
    for (size_t i = 0; i < npages; i++) {
        uintptr_t a = start + i * pg, b = a + pg;
        if (!(vec[i] & 1))
            continue;
        for (a = a < lo ? lo : a; a < b && a < end; a++)
            if (*(const volatile unsigned char *)a != 0)
                return end - a;
    }
    return 0;
}

void sim_proc_main(void *arg)
{
    sim_proc *p = arg;

    if (p->doomed)
        sim_run_doomed(proc_body, p);
    else
        proc_body(p);
}

static void proc_body(void *arg)
{
    sim_proc *p = arg;
    sim_run *run = p->ep.run;
    sim_kjob *k = p->kjob;
    char **argv = calloc((size_t)(k != NULL ? k->argc : run->opt.wl_argc) + 2, sizeof(char *));
    int argc = 0;
    bool finalized;
    const char *top = __builtin_frame_address(0);

    if (STACK_MEASURED)
        stack_clean(top, run->stack_size);
    sgw_set_self_data(&p->ep);
    sgw_box_listen(p->ep.box);
    if (argv == NULL)
        abort();
    if (k != NULL) {
        /* A process of a spawned job (simspawn.c): its app's argv, its
         * workload; counted with its job, not the run's processes. */
        for (int i = 0; i < k->argc; i++)
            argv[argc++] = k->argv[i];
        argv[argc] = NULL;
        p->exit_code = k->wl->main(argc, argv);
        free(argv);
        finalized = p->opened && p->ac.client == NULL;
        if (p->ac.client != NULL) {
            p->ac.refcount = 0;
            bind_teardown(&p->ac);
        }
        flush_deferred(p);
        p->exited = true;
        if (p->exit_code != 0)
            run->procs_failed++;
        sim_kid_exited(p);
        if (finalized) {
            sim_msg *m = sim_msg_new(MSG_EXIT, NULL, 0);
            m->conn = p->conn;
            sim_send(&p->node->ep, m, 0);
        }
        return;
    }
    /* The workload may modify its argv (getopt does): a private copy. */
    argv[argc++] = (char *)run->wl->name;
    for (int i = 0; i < run->opt.wl_argc; i++)
        argv[argc++] = run->opt.wl_argv[i];
    argv[argc] = NULL;
    /* Rank 0 runs first. If it failed before PMIx_Init (its arguments,
     * most likely: it said why), the others would only say it again,
     * thousands of times: they do not run. */
    if (run->no_start)
        p->exit_code = 0;
    else if (run->opt.program != NULL)
        p->exit_code = sim_program_run(run->opt.program, p->proc.rank, argc, argv);
    else
        p->exit_code = run->wl->main(argc, argv);
    free(argv);
    if (p->proc.rank == 0 && p->exit_code != 0 && !p->opened && run->nprocs > 1) {
        run->no_start = true;
        fprintf(stderr,
                "pmixsim: rank 0 ended with status %d before PMIx_Init: the other %u processes "
                "do not run the workload\n",
                p->exit_code, run->nprocs - 1);
    }
    /* It finalized (the shim tore its client down) and now ends: its node
     * learns it departed after the close, as pmixd reaps such a rank. */
    finalized = p->opened && p->ac.client == NULL && !p->killed;
    if (p->ac.client != NULL) {
        /* It returned without PMIx_Finalize: the connection just ends. */
        p->ac.refcount = 0;
        bind_teardown(&p->ac);
    }
    flush_deferred(p);
    p->exited = true;
    /* How deep the workload went, with its node's server when merged (a
     * sanitized build runs actors as threads with its own stacks and
     * larger frames: not measured). */
    if (STACK_MEASURED) {
        size_t used = stack_used(top, run->stack_size);
        if (used > run->stack_max)
            run->stack_max = used;
    }
    if (p->exit_code != 0)
        run->procs_failed++;
    run->procs_done++; /* the node actors are daemons: they end with the last process */
    if (finalized && run->procs_done + run->procs_killed < run->nprocs) {
        sim_msg *m = sim_msg_new(MSG_EXIT, NULL, 0);
        m->conn = p->conn;
        sim_send(&p->node->ep, m, 0);
    }
    if (p->node->merged && run->procs_done + run->procs_killed < run->nprocs) {
        sgw_daemonize_self();
        sim_node_serve(p->node); /* for the processes still running */
    }
}
