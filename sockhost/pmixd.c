/*
 * pmixd.c - the node daemon: one per node of a pmixrun --nodes job.
 *
 *     pmixd --parent-fd FD --node ID [--listen ADDR]     (started by pmixrun)
 *
 * How it works. pmixd talks to pmixrun over FD (a socketpair pmixrun made:
 * it works from inside another network namespace too), listens on a TCP
 * port of its address (--listen, default 127.0.0.1) for the other daemons
 * and says so (PD_HELLO). pmixrun
 * answers with the job (PD_JOB): namespace, the map of ranks to nodes, the
 * node names, every daemon's address, the application contexts (program,
 * arguments, environment, directory, process set). pmixd then
 *
 *   1. starts its own PMIx server engine (px_server_host, in
 *      pmixrun_job.c, with the cross-node upcalls of pmixd_coll.c) in a
 *      private directory, and registers the namespace with data that spans
 *      every node, and its own ranks as clients;
 *   2. joins the mesh: it connects to every daemon with a lower node id
 *      (sending PD_PEER with its id) and accepts a connection from every
 *      higher one: a full mesh of K(K-1)/2 connections;
 *   3. once the mesh is complete, starts its ranks (pmixrun_launch.c) and
 *      forwards their output line by line to its stdout and stderr, which
 *      are pmixrun's (pmixrun_iof.c);
 *   4. serves them: cross-node fences and direct modex go to the other
 *      daemons (pmixd_coll.c);
 *   5. reports every rank's end (PD_EXIT) and PMIx_Abort (PD_ABORT) to
 *      pmixrun, which decides when the job ends;
 *   6. on PD_STOP (or when pmixrun goes away, or on SIGTERM/SIGINT/SIGHUP)
 *      stops its ranks (SIGTERM, SIGKILL PMIXRUN_GRACE_S later), reports
 *      them, answers pending PMIx_Abort calls, removes its directory and
 *      exits 0.
 *
 * A rank that dies (signal, or exit without PMIx_Finalize after it
 * connected, or a non-zero exit before it connected) breaks the job's
 * fences on every node (coll_break); a daemon whose connection drops, or
 * that sends nothing for the heartbeat's LOST seconds (heartbeat()), is a
 * lost node (coll_peer_lost). docs/pmixd.md states the rules.
 *
 * The loop (run) is the job's platform's: every descriptor of the daemon
 * is a watch on it, next to the server's clients and timers, and each
 * turn (px_posix_run_once) is followed by what the turn recorded (ranks
 * that exited, a PMIx_Abort) and by the daemon's own deadlines (px_coll's
 * timers, the heartbeat, the join deadline, stopping). One thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmixd.h"
#include "pmixd_proto.h"

#define JOIN_S 30.0 /* every daemon connected within this of the job */

/* A node's callback context for the watches of its connections. */
struct pmixd_io {
    pmixd_ctx *d;
    int n;
};

static void peer_ready(void *arg, unsigned what);

/* Stop watching a connection (before it closes, or moves). */
static void unwatch(px_posix_watch **w)
{
    px_posix_watch_destroy(*w);
    *w = NULL;
}

/* Watch peer `n`'s identified link; false if that cannot be done. */
static bool watch_peer(pmixd_ctx *d, int n)
{
    d->peer_w[n] =
        px_posix_watch_create(d->j.plat, d->peers[n].fd, PX_POSIX_READ, peer_ready, &d->io[n]);
    return d->peer_w[n] != NULL;
}

int pmixd_peer_send(pmixd_ctx *d, int n, uint8_t type, const tl_buf *b)
{
    if (n < 0 || n >= d->j.nnodes || n == d->node || d->peer_lost[n])
        return -1;
    if (d->frame_max > 0 && b != NULL && b->len >= d->frame_max)
        return TL_ETOOBIG;
    if (d->peers[n].fd < 0) {
        /* A higher node that has not connected to us yet: the others may
         * already run fences (their meshes are complete, ours is not), and
         * a send refused here would count that node as failed for good.
         * Queued until it connects. A lower node without a connection is
         * one we could not reach: the job did not start. */
        return n > d->node && !d->stopping ? tl_queue(&d->peers[n], type, b) : -1;
    }
    d->said[n] = now_s();
    return tl_send(&d->peers[n], type, b);
}

/* ---- the job ---- */

static int read_job(pmixd_ctx *d, tl_reader *r)
{
    job *j = &d->j;
    char *ns = tl_get_str(r);
    uint32_t nprocs = tl_get_u32(r), nnodes = tl_get_u32(r);
    j->tag_output = tl_get_u8(r) != 0;
    j->map_by_node = tl_get_u8(r) != 0;
    j->merge_stderr = tl_get_u8(r) != 0;
    if (ns == NULL || r->bad || nprocs == 0 || nprocs > 65535 || nnodes == 0 || nnodes > 65535 ||
        (uint32_t)d->node >= nnodes) {
        free(ns);
        return -1;
    }
    snprintf(j->nspace, sizeof j->nspace, "%s", ns);
    free(ns);
    j->nprocs = (int)nprocs;
    j->nnodes = (int)nnodes;
    j->rank_node = calloc(nprocs, sizeof *j->rank_node);
    j->node_names = calloc(nnodes, sizeof *j->node_names);
    d->addrs = calloc(nnodes, sizeof *d->addrs);
    d->ports = calloc(nnodes, sizeof *d->ports);
    d->peers = calloc(nnodes, sizeof *d->peers);
    d->pend = calloc(nnodes, sizeof *d->pend);
    d->peer_lost = calloc(nnodes, sizeof *d->peer_lost);
    d->heard = calloc(nnodes, sizeof *d->heard);
    d->said = calloc(nnodes, sizeof *d->said);
    d->peer_w = calloc(nnodes, sizeof *d->peer_w);
    d->pend_w = calloc(nnodes, sizeof *d->pend_w);
    d->io = calloc(nnodes, sizeof *d->io);
    if (j->rank_node == NULL || j->node_names == NULL || d->addrs == NULL || d->ports == NULL ||
        d->peers == NULL || d->pend == NULL || d->peer_lost == NULL || d->heard == NULL ||
        d->said == NULL || d->peer_w == NULL || d->pend_w == NULL || d->io == NULL)
        return -1;
    for (uint32_t n = 0; n < nnodes; n++) {
        d->peers[n].fd = d->pend[n].fd = -1;
        d->io[n] = (struct pmixd_io){d, (int)n};
    }
    for (uint32_t i = 0; i < nprocs; i++) {
        uint32_t n = tl_get_u32(r);
        if (n >= nnodes)
            return -1;
        j->rank_node[i] = n;
        if ((int)n == d->node)
            j->nlocal++;
    }
    for (uint32_t n = 0; n < nnodes; n++) {
        j->node_names[n] = tl_get_str(r);
        d->addrs[n] = tl_get_str(r);
        uint32_t port = tl_get_u32(r);
        if (r->bad || port == 0 || port > 65535)
            return -1;
        d->ports[n] = (uint16_t)port;
    }
    if (apps_read(j, r) != 0) /* the application contexts (pmixrun_apps.c) */
        return -1;
    j->ranks = calloc((size_t)(j->nlocal > 0 ? j->nlocal : 1), sizeof *j->ranks);
    if (j->ranks == NULL || r->bad)
        return -1;
    for (int i = 0, k = 0; i < j->nprocs; i++) {
        if ((int)j->rank_node[i] != d->node)
            continue;
        j->ranks[k].rank = i;
        j->ranks[k].out.fd = j->ranks[k].err.fd = -1;
        j->ranks[k].files[0].fd = j->ranks[k].files[1].fd = j->ranks[k].in_fd = -1;
        k++;
    }
    snprintf(j->hostname, sizeof j->hostname, "%s", j->node_names[d->node]);
    return 0;
}

static int start_job(pmixd_ctx *d)
{
    job *j = &d->j;
    char err[256];
    px_coll_choice choice;
    if (px_coll_choose(PX_COLL_ALLGATHER, NULL, getenv(PX_COLL_ENV_FENCE), &choice, err,
                       sizeof err) != PMIX_SUCCESS ||
        px_coll_choose(PX_COLL_BARRIER, NULL, getenv(PX_COLL_ENV_BARRIER), &choice, err,
                       sizeof err) != PMIX_SUCCESS) {
        fprintf(stderr, "pmixd %s: %s\n", j->hostname, err);
        return -1;
    }
    d->trace = getenv("PMIXLAB_PMIXD_TRACE") != NULL && strcmp(getenv("PMIXLAB_PMIXD_TRACE"), "0");
    if (pd_heartbeat_parse(getenv(PD_HEARTBEAT_ENV), &d->beat_s, &d->lost_s, err, sizeof err) !=
        0) {
        fprintf(stderr, "pmixd %s: %s\n", j->hostname, err);
        return -1;
    }
    /* A test hook: PMIXLAB_PMIXD_FRAME_MAX=BYTES refuses frames to other
     * daemons from BYTES up as too big, as TL_FRAME_MAX (1 GiB) would,
     * without sending a gigabyte (tests/integration). */
    const char *fmax = getenv("PMIXLAB_PMIXD_FRAME_MAX");
    if (fmax != NULL)
        d->frame_max = strtoul(fmax, NULL, 10);
    /* A test hook: PMIXLAB_PMIXD_NOMEM_REPLIES=N fails the first N direct
     * modex replies to other daemons as if memory ran out (tests/integration). */
    const char *nomem = getenv("PMIXLAB_PMIXD_NOMEM_REPLIES");
    if (nomem != NULL)
        d->nomem_replies = (unsigned)strtoul(nomem, NULL, 10);
    /* A test hook: PMIXLAB_PMIXD_DMDX_TRIES=N gives up an error reply to
     * a direct modex request after N refused sends instead of 20, so the
     * give-up path runs in milliseconds (tests/integration). */
    const char *tries = getenv("PMIXLAB_PMIXD_DMDX_TRIES");
    if (tries != NULL)
        d->dmdx_tries = (unsigned)strtoul(tries, NULL, 10);
    if (coll_init(d) != 0 || files_make_topdir(j) != 0 || job_bindings(j) != 0 ||
        job_server_start(j) != 0 || job_register(j) != 0)
        return -1;
    /* The mesh must be complete within JOIN_S seconds of the job
     * (PMIXLAB_PMIXD_JOIN_TIMEOUT=S, a test hook, changes it): until
     * then nothing runs here, and what goes to a daemon that has not
     * connected yet is queued for it. */
    const char *jt = getenv("PMIXLAB_PMIXD_JOIN_TIMEOUT");
    double join_s = jt != NULL && atof(jt) > 0 && atof(jt) <= 3600 ? atof(jt) : JOIN_S;
    /* A test hook: PMIXLAB_PMIXD_JOIN_DELAY=NODE:MS makes daemon NODE wait
     * MS milliseconds before it joins the mesh, so that the others run
     * fences while a lower daemon still waits for its connection (a late
     * daemon on a loaded machine; tests/integration). */
    const char *delay = getenv("PMIXLAB_PMIXD_JOIN_DELAY");
    unsigned dnode, dms;
    if (delay != NULL && sscanf(delay, "%u:%u", &dnode, &dms) == 2 && (int)dnode == d->node &&
        dms <= 10000) {
        struct timespec ts = {(time_t)(dms / 1000), (long)(dms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    /* Connect to the lower node ids; the higher ones connect to us. */
    for (int n = 0; n < d->node; n++) {
        int fd = tl_connect(d->addrs[n], d->ports[n], 10.0);
        if (fd < 0) {
            fprintf(stderr, "pmixd %s: cannot connect to the daemon of %s at %s:%u: %s\n",
                    j->hostname, j->node_names[n], d->addrs[n], (unsigned)d->ports[n],
                    strerror(errno));
            return -1;
        }
        tl_link_init(&d->peers[n], fd);
        if (!watch_peer(d, n)) {
            fprintf(stderr, "pmixd %s: out of memory\n", j->hostname);
            return -1;
        }
        d->heard[n] = d->said[n] = now_s();
        tl_buf b = {0};
        tl_put_u32(&b, (uint32_t)d->node);
        tl_send(&d->peers[n], PD_PEER, &b);
        tl_buf_free(&b);
        d->npeers++;
    }
    d->join_s = join_s;
    d->join_until = now_s() + join_s;
    return 0;
}

static void send_exit(pmixd_ctx *d, rank_proc *r, uint8_t flags)
{
    tl_buf b = {0};
    tl_put_u32(&b, (uint32_t)r->rank);
    tl_put_u32(&b, (uint32_t)r->pid);
    tl_put_u32(&b, (uint32_t)r->code);
    tl_put_u8(&b, flags);
    tl_send(&d->parent, PD_EXIT, &b);
    tl_buf_free(&b);
}

static void launch(pmixd_ctx *d)
{
    job *j = &d->j;
    d->launched = true;
    for (int i = 0; i < j->nlocal && !d->stopping; i++) {
        rank_proc *r = &j->ranks[i];
        int rc = launch_rank(j, r);
        if (rc != 0) {
            if (r->pid == 0) { /* not started: report it as such */
                r->code = rc;
                r->reaped = true;
                send_exit(d, r, PD_EXIT_NOLAUNCH);
            } else { /* started but exec failed: its exit comes */
                r->code = rc;
            }
            break;
        }
    }
}

/* ---- ranks ending ---- */

static void rank_ended(pmixd_ctx *d, rank_proc *r, int wstatus)
{
    job *j = &d->j;
    bool launch_failed = r->code != 0; /* set by launch(): its exec failed */
    r->reaped = true;
    j->nreaped++;
    if (launch_failed) {
        /* keep launch_rank's exit status (126 or 127) */
    } else if (WIFSIGNALED(wstatus)) {
        r->signaled = true;
        r->code = 128 + WTERMSIG(wstatus);
    } else {
        r->code = WEXITSTATUS(wstatus);
    }
    bool connected = r->connected, finalized = r->finalized;
    if (connected && !finalized)
        job_rank_lost(j, r);
    uint8_t flags = (r->signaled ? PD_EXIT_SIGNALED : 0) | (connected ? PD_EXIT_CONNECTED : 0) |
                    (finalized ? PD_EXIT_FINALIZED : 0) | (r->stopped_by_us ? PD_EXIT_STOPPED : 0) |
                    (launch_failed ? PD_EXIT_NOLAUNCH : 0);
    send_exit(d, r, flags);
    bool died = r->signaled || (connected && !finalized) || (!connected && r->code != 0);
    if (died && !d->stopping)
        coll_break(d, r->rank, true);
    else if (connected && finalized && !d->stopping)
        coll_departed(d, r->rank); /* fences that name it fail on every node */
}

static void reap(pmixd_ctx *d)
{
    job *j = &d->j;
    j->child_exited = false;
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            return;
        for (int i = 0; i < j->nstarted; i++) {
            if (j->ranks[i].pid == pid && !j->ranks[i].reaped) {
                rank_ended(d, &j->ranks[i], st);
                break;
            }
        }
    }
}

static void signal_ranks(pmixd_ctx *d, int sig)
{
    job *j = &d->j;
    for (int i = 0; i < j->nstarted; i++) {
        rank_proc *r = &j->ranks[i];
        if (r->pid <= 0)
            continue;
        if (!r->reaped && sig == SIGTERM)
            r->stopped_by_us = true;
        if (kill(-r->pid, sig) != 0 && !r->reaped)
            kill(r->pid, sig);
    }
}

static void stop(pmixd_ctx *d, bool now)
{
    if (d->stopping && (d->stop_now || !now))
        return;
    if (d->job_read && !d->launched && !d->stopping) {
        /* the ranks of this node never started: say so, or pmixrun would
         * call them lost when this daemon exits */
        for (int i = 0; i < d->j.nlocal; i++) {
            d->j.ranks[i].code = PMIXRUN_EXIT_SETUP;
            d->j.ranks[i].reaped = true;
            send_exit(d, &d->j.ranks[i], PD_EXIT_NOLAUNCH);
        }
    }
    d->stopping = true;
    d->stop_now = now;
    signal_ranks(d, now ? SIGKILL : SIGTERM);
    d->kill_at = now ? now_s() + 5.0 : now_s() + PMIXRUN_GRACE_S;
}

static void check_abort_d(pmixd_ctx *d)
{
    job *j = &d->j;
    bool seen = j->abort_seen && !j->abort_reported;
    if (seen)
        j->abort_reported = true;
    tl_buf b = {0};
    if (seen) {
        tl_put_u32(&b, (uint32_t)j->abort_rank);
        tl_put_u32(&b, (uint32_t)j->abort_status);
        tl_put_str(&b, j->abort_msg);
    }
    if (seen)
        tl_send(&d->parent, PD_ABORT, &b);
    tl_buf_free(&b);
}

/* ---- frames ---- */

typedef struct rctx {
    pmixd_ctx *d;
    int kind; /* 0 parent, 1 identified peer, 2 unidentified peer */
    int idx;
} rctx;

static int on_frame(void *ctx, tl_link *l, uint8_t type, const uint8_t *p, size_t len)
{
    rctx *c = ctx;
    pmixd_ctx *d = c->d;
    tl_reader r = {.p = p, .left = len};
    if (c->kind == 0) {
        if (type == PD_JOB && !d->have_job) {
            d->have_job = true;
            if (read_job(d, &r) != 0) {
                fprintf(stderr, "pmixd node%d: malformed job description\n", d->node);
                d->failed = true;
                stop(d, true);
                return 1;
            }
            d->job_read = true;
            if (start_job(d) != 0) {
                d->failed = true;
                stop(d, true);
            }
        } else if (type == PD_STOP) {
            stop(d, tl_get_u8(&r) != 0);
        } else if (type == PD_PUBSUB_REP) {
            pubsub_answer(&d->j, p, len);
        } else if (type == PD_EVENT_FWD) {
            events_deliver(&d->j, p, len);
        } else if (type == PD_JCTRL) {
            int sig;
            uint32_t *ranks;
            size_t n;
            if (jctrl_read(p, len, &sig, &ranks, &n) == 0 && !d->stopping)
                jctrl_apply(&d->j, sig, ranks, n);
            free(ranks);
        }
        return 0;
    }
    if (c->kind == 2) {
        uint32_t n = tl_get_u32(&r);
        unwatch(&d->pend_w[c->idx]); /* the link closes or moves */
        if (type != PD_PEER || r.bad || n >= (uint32_t)d->j.nnodes || (int)n <= d->node ||
            d->peers[n].fd >= 0) {
            tl_link_close(l);
            return 1;
        }
        /* the link moves (with what it read), behind what was queued for
         * that node before it came */
        if (tl_link_adopt(&d->peers[n], l) != 0 || !watch_peer(d, (int)n)) {
            /* That daemon counts us lost as its connection drops: so must
             * we, or the mesh would wait for it until the join deadline. */
            fprintf(stderr, "pmixd %s: out of memory taking the connection of %s's daemon\n",
                    d->j.hostname, d->j.node_names[n]);
            tl_link_close(l);
            tl_link_close(&d->peers[n]);
            d->peer_lost[n] = true;
            if (!d->stopping)
                coll_peer_lost(d, (int)n);
            return 1;
        }
        d->heard[n] = d->said[n] = now_s();
        tl_flush(&d->peers[n]);
        d->npeers++;
        return 1;
    }
    if (type == PD_PEER || type == PD_BEAT)
        return 0; /* the identifying frame, seen again after the move; a heartbeat */
    coll_frame(d, c->idx, type, p, len);
    return 0;
}

/* Node `n` is lost: its connection ended, or it went silent. */
void pmixd_peer_drop(pmixd_ctx *d, int n)
{
    if (n < 0 || n >= d->j.nnodes || n == d->node || d->peer_lost[n])
        return;
    unwatch(&d->peer_w[n]);
    tl_link_close(&d->peers[n]);
    d->peer_lost[n] = true;
    if (!d->stopping)
        coll_peer_lost(d, n);
}

/* Read what peer `n` sent; a connection that ends is a lost node. */
static void read_peer(pmixd_ctx *d, int n)
{
    rctx c = {d, 1, n};
    if (d->peers[n].fd < 0)
        return;
    d->heard[n] = now_s(); /* even a part of a frame: it is alive */
    if (tl_read(&d->peers[n], on_frame, &c) != 0)
        pmixd_peer_drop(d, n);
}

/* Peer `n` sent nothing for `silent` seconds: it is lost, and pmixrun is
 * told, which kills it and ends the job. */
static void peer_silent(pmixd_ctx *d, int n, double silent)
{
    fprintf(stderr,
            "pmixd %s: the daemon of %s sent nothing for %.1f s (heartbeat every %g s): "
            "counted as lost\n",
            d->j.hostname, d->j.node_names[n], silent, d->beat_s);
    tl_buf b = {0};
    tl_put_u32(&b, (uint32_t)n);
    tl_put_u32(&b, (uint32_t)(silent * 1000.0));
    tl_send(&d->parent, PD_LOST, &b);
    tl_buf_free(&b);
    pmixd_peer_drop(d, n);
}

/* The heartbeat: a beat to each connected peer that got nothing else for
 * beat_s; once the mesh is complete, and until this daemon stops, a peer
 * that sent nothing for lost_s (stopped, hung, or its host unreachable
 * without its connection ending) is lost (peer_silent). A stopping daemon
 * still beats: its peers may stop a little later. Returns the
 * milliseconds until the next beat or deadline, -1 if none. */
static int heartbeat(pmixd_ctx *d)
{
    double t = now_s(), next = -1;
    bool judge = d->launched && !d->stopping; /* before: the join deadline rules */
    if (d->beat_s <= 0 || !d->have_job)
        return -1;
    for (int n = 0; n < d->j.nnodes; n++) {
        if (n == d->node || d->peer_lost[n] || d->peers[n].fd < 0)
            continue;
        if (judge && t - d->heard[n] >= d->lost_s) {
            /* what came while this daemon itself was not running counts */
            struct pollfd pf = {.fd = d->peers[n].fd, .events = POLLIN};
            if (poll(&pf, 1, 0) > 0)
                read_peer(d, n);
            if (!d->peer_lost[n] && t - d->heard[n] >= d->lost_s)
                peer_silent(d, n, t - d->heard[n]);
            if (d->peer_lost[n])
                continue;
        }
        if (t - d->said[n] >= d->beat_s && pmixd_peer_send(d, n, PD_BEAT, NULL) != 0)
            d->said[n] = t; /* could not even queue it: try again a beat later */
        double due = d->said[n] + d->beat_s;
        if (judge && d->heard[n] + d->lost_s < due)
            due = d->heard[n] + d->lost_s;
        if (next < 0 || due < next)
            next = due;
    }
    return next < 0 ? -1 : (next <= t ? 0 : (int)((next - t) * 1000.0) + 1);
}

/* ---- the loop ---- */

/* Why the mesh cannot complete, or NULL while it still may: a daemon
 * that was lost before it, or the join deadline passed (the daemons that
 * did not connect are named). */
static const char *mesh_failed(pmixd_ctx *d, char *why, size_t wlen)
{
    job *j = &d->j;
    bool late = now_s() >= d->join_until;
    size_t len;

    for (int n = 0; n < j->nnodes; n++) {
        if (n != d->node && d->peer_lost[n]) {
            snprintf(why, wlen, "the daemon of %s was lost before every daemon connected",
                     j->node_names[n]);
            return why;
        }
    }
    if (!late)
        return NULL;
    int missing = 0;
    for (int n = 0; n < j->nnodes; n++)
        missing += n != d->node && d->peers[n].fd < 0;
    len = (size_t)snprintf(why, wlen, "the daemon%s of", missing > 1 ? "s" : "");
    for (int n = 0; n < j->nnodes && len < wlen; n++)
        if (n != d->node && d->peers[n].fd < 0)
            len += (size_t)snprintf(why + len, wlen - len, " %s", j->node_names[n]);
    if (len < wlen)
        snprintf(why + len, wlen - len,
                 " did not connect to this one (port %u) within %.0f s: a firewall between "
                 "the hosts, or a daemon that hangs",
                 (unsigned)d->ports[d->node], d->join_s);
    return why;
}

static bool all_output_closed(job *j)
{
    for (int i = 0; i < j->nstarted; i++)
        if (j->ranks[i].out.fd >= 0 || j->ranks[i].err.fd >= 0)
            return false;
    return true;
}

/* ---- the watches' callbacks (inside a turn of the loop) ---- */

static void on_signal(void *arg, unsigned what)
{
    pmixd_ctx *d = arg;
    struct signalfd_siginfo si;
    while (read(d->j.sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            d->j.child_exited = true; /* run() reaps after the turn */
        } else if (sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGCONT) {
            if (!d->stopping || sig == SIGCONT)
                signal_ranks(d, sig); /* forwarded by pmixrun */
        } else if (sig == SIGTSTP) {
            /* pmixrun stops; the daemon does not, or its peers would count
             * it lost */
            if (!d->stopping)
                signal_ranks(d, SIGSTOP);
        } else {
            stop(d, d->stopping); /* a second signal: at once */
        }
    }
}

static void parent_ready(void *arg, unsigned what)
{
    pmixd_ctx *d = arg;
    rctx c = {d, 0, -1};
    if (what & PX_POSIX_WRITE)
        tl_flush(&d->parent);
    if ((what & PX_POSIX_READ) && tl_read(&d->parent, on_frame, &c) != 0) {
        unwatch(&d->parent_w);
        tl_link_close(&d->parent); /* pmixrun is gone: so are we */
        stop(d, true);
    }
}

static void pend_ready(void *arg, unsigned what)
{
    struct pmixd_io *io = arg;
    pmixd_ctx *d = io->d;
    rctx c = {d, 2, io->n};
    int before = d->npeers;
    if (tl_read(&d->pend[c.idx], on_frame, &c) != 0) {
        unwatch(&d->pend_w[c.idx]);
        tl_link_close(&d->pend[c.idx]);
    }
    for (int p = 0; d->npeers > before && p < d->j.nnodes; p++)
        read_peer(d, p); /* what came with its PD_PEER frame */
}

static void listen_ready(void *arg, unsigned what)
{
    pmixd_ctx *d = arg;
    int fd = tl_accept(d->lfd);
    for (int s = 0; fd >= 0 && s < d->j.nnodes; s++) {
        if (d->pend[s].fd < 0) {
            tl_link_init(&d->pend[s], fd);
            d->pend_w[s] =
                px_posix_watch_create(d->j.plat, fd, PX_POSIX_READ, pend_ready, &d->io[s]);
            if (d->pend_w[s] == NULL)
                tl_link_close(&d->pend[s]); /* no memory: it may connect again */
            fd = -1;
        }
    }
    if (fd >= 0)
        close(fd);
}

static void peer_ready(void *arg, unsigned what)
{
    struct pmixd_io *io = arg;
    pmixd_ctx *d = io->d;
    if (d->peers[io->n].fd < 0)
        return;
    if (what & PX_POSIX_WRITE)
        tl_flush(&d->peers[io->n]);
    if (what & PX_POSIX_READ)
        read_peer(d, io->n);
}

/* Before a turn: what each connection waits for (output queued, the
 * listener while the mesh is incomplete). */
static void arm_watches(pmixd_ctx *d)
{
    job *j = &d->j;
    if (d->parent_w != NULL)
        px_posix_watch_set(d->parent_w,
                           PX_POSIX_READ | (tl_want_write(&d->parent) ? PX_POSIX_WRITE : 0));
    if (d->listen_w != NULL)
        px_posix_watch_set(d->listen_w, d->have_job && d->peers != NULL && d->npeers < j->nnodes - 1
                                            ? PX_POSIX_READ
                                            : 0);
    for (int n = 0; d->peer_w != NULL && n < j->nnodes; n++)
        if (d->peer_w[n] != NULL)
            px_posix_watch_set(d->peer_w[n],
                               PX_POSIX_READ | (tl_want_write(&d->peers[n]) ? PX_POSIX_WRITE : 0));
}

/* ---- the loop ---- */

static void run(pmixd_ctx *d)
{
    job *j = &d->j;
    double drain_until = 0;
    char why[512];
    for (;;) {
        if (j->child_exited)
            reap(d);
        check_abort_d(d);
        coll_timers(d);
        if (d->have_job && !d->launched && !d->stopping && d->npeers == j->nnodes - 1)
            launch(d);
        else if (d->have_job && !d->launched && !d->stopping && !d->failed) {
            const char *lost = mesh_failed(d, why, sizeof why);
            if (lost != NULL) {
                fprintf(stderr, "pmixd %s: %s; stopping\n", j->hostname, lost);
                d->failed = true;
                stop(d, true);
            }
        }
        if (d->stopping) {
            if (now_s() >= d->kill_at && j->nreaped < j->nstarted) {
                signal_ranks(d, SIGKILL);
                d->kill_at = now_s() + 5.0;
            }
            if (j->nreaped == j->nstarted) {
                if (drain_until == 0)
                    drain_until = now_s() + 1.0;
                if (all_output_closed(j) || now_s() >= drain_until)
                    break;
            }
        }
        int tmo = coll_timeout_ms(d), hb = heartbeat(d);
        if (hb >= 0 && (tmo < 0 || hb < tmo))
            tmo = hb;
        if (d->have_job && !d->launched && !d->stopping) {
            double ms = (d->join_until - now_s()) * 1000.0;
            int jt = ms <= 0 ? 0 : (int)ms + 1;
            if (tmo < 0 || jt < tmo)
                tmo = jt;
        }
        if (d->stopping && (tmo < 0 || tmo > 100))
            tmo = 100;
        pubsub_flush(j, &d->parent); /* what this turn's upcalls forwarded */
        arm_watches(d);
        px_posix_run_once(j->plat, tmo < 0 ? -1.0 : tmo / 1000.0);
    }
}

/* ---- setup ---- */

static int setup(pmixd_ctx *d, int parent, const char *listen)
{
    job *j = &d->j;
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGQUIT); /* as in pmixrun: end in order, directory removed */
    sigaddset(&mask, SIGALRM);
    job_more_ending_signals(&mask);
    /* pmixrun forwards these to the ranks through us */
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGUSR2);
    sigaddset(&mask, SIGTSTP);
    sigaddset(&mask, SIGCONT);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0 ||
        (j->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
        (j->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        fprintf(stderr, "pmixd: cannot set up: %s\n", strerror(errno));
        return -1;
    }
    if (job_platform(j, on_signal, d) != 0)
        return -1;
    signal(SIGPIPE, SIG_IGN);
    if (fcntl(parent, F_SETFD, FD_CLOEXEC) != 0) {
        fprintf(stderr, "pmixd: --parent-fd %d is not open: %s\n", parent, strerror(errno));
        return -1;
    }
    tl_link_init(&d->parent, parent);
    d->port = 0;
    d->lfd = tl_listen(listen, &d->port);
    if (d->lfd < 0) {
        fprintf(stderr, "pmixd: cannot listen on %s: %s\n", listen, strerror(errno));
        return -1;
    }
    d->parent_w = px_posix_watch_create(j->plat, d->parent.fd, PX_POSIX_READ, parent_ready, d);
    d->listen_w = px_posix_watch_create(j->plat, d->lfd, 0, listen_ready, d);
    if (d->parent_w == NULL || d->listen_w == NULL) {
        fprintf(stderr, "pmixd: cannot set up: out of memory\n");
        return -1;
    }
    tl_buf b = {0};
    tl_put_u32(&b, (uint32_t)d->node);
    tl_put_u32(&b, d->port);
    int rc = tl_send(&d->parent, PD_HELLO, &b);
    tl_buf_free(&b);
    return rc;
}

static void teardown(pmixd_ctx *d)
{
    job *j = &d->j;
    job_server_stop(j); /* answers pending PMIx_Abort calls */
    coll_fini(d);
    /* the watches go before their descriptors, the platform after them */
    unwatch(&d->parent_w);
    unwatch(&d->listen_w);
    for (int n = 0; d->peer_w != NULL && d->pend_w != NULL && n < j->nnodes; n++) {
        unwatch(&d->peer_w[n]);
        unwatch(&d->pend_w[n]);
    }
    job_platform_free(j);
    files_run_cleanups(j);
    files_remove_topdir(j);
    tl_drain(&d->parent, 2.0);
    tl_link_close(&d->parent);
    for (int n = 0; d->peers != NULL && n < j->nnodes; n++) {
        tl_link_close(&d->peers[n]);
        tl_link_close(&d->pend[n]);
    }
    if (d->lfd >= 0)
        close(d->lfd);
    for (int i = 0; j->ranks != NULL && i < j->nlocal; i++) {
        iof_stream_close(&j->ranks[i].out, j->ranks[i].rank, j->tag_output);
        iof_stream_close(&j->ranks[i].err, j->ranks[i].rank, j->tag_output);
        hwloc_bitmap_free(j->ranks[i].cpuset);
    }
    free(j->ranks);
    if (j->topo != NULL)
        hwloc_topology_destroy(j->topo);
    for (int n = 0; j->node_names != NULL && n < j->nnodes; n++) {
        free(j->node_names[n]);
        free(d->addrs[n]);
    }
    free(j->node_names);
    free(j->rank_node);
    free(d->addrs);
    free(d->ports);
    free(d->peers);
    free(d->pend);
    free(d->peer_lost);
    free(d->heard);
    free(d->said);
    free(d->peer_w);
    free(d->pend_w);
    free(d->io);
    job_release(j);
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: pmixd --parent-fd FD --node ID [--listen ADDR]\n"
               "\n"
               "The node daemon of a pmixrun --nodes job; pmixrun starts it.\n");
}

int main(int argc, char **argv)
{
    pmixd_ctx dm = {0}, *d = &dm;
    int parent = -1;
    const char *listen = "127.0.0.1";
    d->node = -1;
    d->lfd = -1;
    d->parent.fd = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--parent-fd") == 0 && i + 1 < argc) {
            parent = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen = argv[++i];
        } else if (strcmp(argv[i], "--node") == 0 && i + 1 < argc) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end != '\0' || n < 0 || n > 65535) {
                usage(stderr);
                return PMIXRUN_EXIT_USAGE;
            }
            d->node = (int)n;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return PMIXRUN_EXIT_USAGE;
        }
    }
    if (parent < 0 || d->node < 0) {
        usage(stderr);
        return PMIXRUN_EXIT_USAGE;
    }
    job *j = &d->j;
    j->sigfd = j->devnull = -1;
    j->child_exited = true;
    j->node = d->node;
    j->outs[1] = (iof_out){.fd = STDOUT_FILENO};
    j->outs[2] = (iof_out){.fd = STDERR_FILENO};
    snprintf(j->hostname, sizeof j->hostname, "node%d", d->node);
    int status = 0;
    if (setup(d, parent, listen) != 0)
        status = 1;
    else
        run(d);
    if (d->failed)
        status = 1;
    teardown(d);
    return status;
}
