/*
 * pmixd.c - the node daemon: one per node of a pmixrun --nodes job.
 *
 *     pmixd --parent-fd FD --node ID [--listen ADDR] [--isolate host|net]
 *                                                         (forked by pmixrun)
 *     pmixd --connect ADDR:PORT --node ID|slurm [--key-stdin]  (srun, ssh)
 *
 * With --isolate host the daemon first moves itself into namespaces of its
 * own (vhost.c: host name, /dev/shm, /tmp), before it has threads or ranks,
 * and names the host after its node once the job says the node's name; its
 * ranks inherit all of it. If that fails it says why and runs as before.
 *
 * The job's secret comes in PMIXLAB_PMIXD_KEY or on stdin (read_key), and
 * every connection of the mesh, and a --connect control connection, is
 * authenticated with it before a frame of it is trusted (connect_auth,
 * on_frame's pending connections; docs/pmixd.md, "Who may join").
 *
 * How it works. pmixd talks to pmixrun over FD (a socketpair pmixrun made:
 * it works from inside another network namespace too), listens on a TCP
 * port of its address (--listen, default 127.0.0.1) for the other daemons,
 * sends its node's NICs (PD_NICS, from the hwloc topology it loads for
 * its bindings) and says it is up (PD_HELLO). pmixrun
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmixd.h"
#include "pmixd_proto.h"
#include "vhost.h"

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
    /* nprocs 0: a system server's empty first job (flag 2 below) */
    if (ns == NULL || r->bad || nprocs > 65535 || nnodes == 0 || nnodes > 65535 ||
        (uint32_t)d->node >= nnodes) {
        free(ns);
        return -1;
    }
    snprintf(j->nspace, sizeof j->nspace, "%s", ns);
    free(ns);
    j->nprocs = (int)nprocs;
    j->nnodes = (int)nnodes;
    j->rank_node = calloc(nprocs > 0 ? nprocs : 1, sizeof *j->rank_node);
    j->node_names = calloc(nnodes, sizeof *j->node_names);
    d->addrs = calloc(nnodes, sizeof *d->addrs);
    d->ports = calloc(nnodes, sizeof *d->ports);
    d->peers = calloc(nnodes, sizeof *d->peers);
    d->npend = (int)nnodes - 1 + PD_AUTH_PENDING_EXTRA;
    d->pend = calloc((size_t)d->npend, sizeof *d->pend);
    d->pend_node = calloc((size_t)d->npend, sizeof *d->pend_node);
    d->pend_until = calloc((size_t)d->npend, sizeof *d->pend_until);
    d->pend_nc = calloc((size_t)d->npend, sizeof *d->pend_nc);
    d->pend_na = calloc((size_t)d->npend, sizeof *d->pend_na);
    d->pend_io = calloc((size_t)d->npend, sizeof *d->pend_io);
    d->peer_lost = calloc(nnodes, sizeof *d->peer_lost);
    d->heard = calloc(nnodes, sizeof *d->heard);
    d->said = calloc(nnodes, sizeof *d->said);
    d->peer_w = calloc(nnodes, sizeof *d->peer_w);
    d->pend_w = calloc((size_t)d->npend, sizeof *d->pend_w);
    d->io = calloc(nnodes, sizeof *d->io);
    if (j->rank_node == NULL || j->node_names == NULL || d->addrs == NULL || d->ports == NULL ||
        d->peers == NULL || d->pend == NULL || d->peer_lost == NULL || d->heard == NULL ||
        d->said == NULL || d->peer_w == NULL || d->pend_w == NULL || d->io == NULL ||
        d->pend_node == NULL || d->pend_until == NULL || d->pend_nc == NULL || d->pend_na == NULL ||
        d->pend_io == NULL)
        return -1;
    for (uint32_t n = 0; n < nnodes; n++) {
        d->peers[n].fd = -1;
        d->io[n] = (struct pmixd_io){d, (int)n};
    }
    for (int s = 0; s < d->npend; s++) {
        d->pend[s].fd = -1;
        d->pend_io[s] = (struct pmixd_io){d, s};
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
    if (net_read(j, r) != 0) /* the network's coordinates (pmixrun_net.c) */
        return -1;
    if (r->left > 0) { /* flags: 1 stop in PMIx_Init (--stop-in-init), 2 a system server's */
        uint8_t flags = tl_get_u8(r);
        j->stop_in_init = (flags & 1) != 0;
        j->sys_jobs = (flags & 2) != 0;
    }
    if (nprocs == 0 && !j->sys_jobs)
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
    if (d->isolated) {
        /* PMIX_HOSTNAME and gethostname() agree: both are the node's name */
        char err[256];
        if (vhost_set_hostname(j->node_names[d->node], err, sizeof err) != 0)
            fprintf(stderr, "pmixd %s: %s\n", j->hostname, err);
    }
    return 0;
}

/* ---- the handshake of a connection to a lower daemon (connector side) ---- */

/* Write all of `n` bytes to the non-blocking `fd` by `until`: 0 or -1. */
static int write_by(int fd, const uint8_t *p, size_t n, double until)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        double left = until - now_s();
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        if (left <= 0 || poll(&pf, 1, (int)(left * 1000.0) + 1) < 0)
            return -1;
    }
    return 0;
}

/* Read exactly `n` bytes from the non-blocking `fd` by `until`: 0 or -1. */
static int read_by(int fd, uint8_t *p, size_t n, double until)
{
    while (n > 0) {
        ssize_t r = recv(fd, p, n, 0);
        if (r > 0) {
            p += r;
            n -= (size_t)r;
            continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return -1;
        double left = until - now_s();
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&pf, 1, (int)(left * 1000.0) + 1) < 0)
            return -1;
    }
    return 0;
}

/* One frame (tcplink.h framing) written on a raw socket. */
static int frame_by(int fd, uint8_t type, const tl_buf *b, double until)
{
    uint8_t h[5];
    uint32_t len = (uint32_t)b->len + 1;
    for (int i = 0; i < 4; i++)
        h[i] = (uint8_t)(len >> (8 * i));
    h[4] = type;
    return b->failed || write_by(fd, h, 5, until) != 0 || write_by(fd, b->data, b->len, until) != 0
               ? -1
               : 0;
}

/* The connector's side of the handshake (px_auth in px_hostcore.h) with
 * acceptor `n` (node n's daemon, or pmixrun: PD_AUTH_LAUNCHER) of job
 * `jobname` on the fresh connection `fd`, by `until`: PD_PEER with our id
 * and nonce, the acceptor's PD_AUTH_CHAL checked (it proves it knows the
 * secret), our PD_AUTH_PROOF. Blocking, but bounded; a daemon waits for a
 * lower node or pmixrun only, so daemons never wait for each other in a
 * cycle.
 * The acceptor sends nothing after its challenge until it has our proof:
 * the socket holds no later frame when this returns. 0, or -1 (why in
 * `why`). */
static int connect_auth(pmixd_ctx *d, int fd, uint32_t n, const char *jobname, double until,
                        const char **why)
{
    uint8_t nc[PX_AUTH_NONCELEN], na[PX_AUTH_NONCELEN], tag[PX_AUTH_TAGLEN];
    /* u32 length, u8 type, bytes na, bytes tag */
    uint8_t in[4 + 1 + 4 + PX_AUTH_NONCELEN + 4 + PX_AUTH_TAGLEN];
    tl_buf b = {0};
    int rc = -1;
    *why = "out of memory";
    if (px_auth_nonce(nc) != 0)
        return -1;
    tl_put_u32(&b, (uint32_t)d->node);
    tl_put_bytes(&b, nc, sizeof nc);
    *why = "it did not answer";
    if (frame_by(fd, PD_PEER, &b, until) != 0 || read_by(fd, in, sizeof in, until) != 0)
        goto out;
    tl_reader r = {.p = in + 5, .left = sizeof in - 5};
    uint32_t len =
        (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
    size_t nlen = 0, tlen = 0;
    const void *pna = tl_get_bytes(&r, &nlen);
    if (pna != NULL && nlen == sizeof na)
        memcpy(na, pna, sizeof na);
    const void *ptag = tl_get_bytes(&r, &tlen);
    *why = "it does not know the job's secret";
    if (len != sizeof in - 4 || in[4] != PD_AUTH_CHAL || r.bad || pna == NULL ||
        nlen != sizeof na || ptag == NULL || tlen != PX_AUTH_TAGLEN ||
        !px_auth_check(d->key, PX_AUTH_ACCEPTOR, jobname, (uint32_t)d->node, n, nc, na, ptag))
        goto out;
    *why = "out of memory";
    if (px_auth_tag(d->key, PX_AUTH_CONNECTOR, jobname, (uint32_t)d->node, n, nc, na, tag) != 0)
        goto out;
    b.len = 0;
    tl_put_bytes(&b, tag, sizeof tag);
    *why = "it did not take our proof";
    if (frame_by(fd, PD_AUTH_PROOF, &b, until) != 0)
        goto out;
    rc = 0;
out:
    tl_buf_free(&b);
    return rc;
}

/* Connect to node `n`'s daemon and authenticate, again and again until
 * the join deadline `until` (a stranger may hold that daemon's pending
 * slots for a while; the daemon may be slow to start). fd or -1. */
static int connect_peer(pmixd_ctx *d, int n, double until)
{
    job *j = &d->j;
    const char *why = "";
    int err = 0, tries = 0;
    for (;;) {
        double left = until - now_s();
        if (left <= 0)
            break;
        tries++;
        int fd = tl_connect(d->addrs[n], d->ports[n], left < 10.0 ? left : 10.0);
        if (fd < 0) {
            err = errno;
            why = NULL;
        } else {
            double by = now_s() + PD_AUTH_S;
            if (connect_auth(d, fd, (uint32_t)n, d->j.nspace, by < until ? by : until, &why) == 0)
                return fd;
            close(fd);
        }
        struct timespec ts = {0, 100 * 1000000L}; /* do not spin on a refusal */
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "pmixd %s: cannot join the daemon of %s at %s:%u after %d tries: %s\n",
            j->hostname, j->node_names[n], d->addrs[n], (unsigned)d->ports[n], tries,
            why != NULL ? why : strerror(err));
    return -1;
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
        job_server_start(j) != 0 || (j->nprocs > 0 && job_register(j) != 0))
        return -1; /* a system server's empty first job has no namespace to serve */
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
    /* Connect to the lower node ids, each connection authenticated both
     * ways (connect_peer); the higher ones connect to us. */
    d->join_s = join_s;
    d->join_until = now_s() + join_s;
    for (int n = 0; n < d->node; n++) {
        int fd = connect_peer(d, n, d->join_until);
        if (fd < 0)
            return -1;
        tl_link_init(&d->peers[n], fd);
        if (!watch_peer(d, n)) {
            fprintf(stderr, "pmixd %s: out of memory\n", j->hostname);
            return -1;
        }
        d->heard[n] = d->said[n] = now_s();
        d->npeers++;
    }
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
        bool ours = false;
        for (int i = 0; i < j->nstarted && !ours; i++) {
            if (j->ranks[i].pid == pid && !j->ranks[i].reaped) {
                rank_ended(d, &j->ranks[i], st);
                ours = true;
            }
        }
        if (!ours && spawnd_reaped(d, pid, st))
            ours = true; /* a spawned job's rank */
        for (int a = 0; a < d->nagents && !ours; a++) {
            if (d->agent_pid[a] == pid) {
                /* pmixrun judges it as the end of that node's daemon */
                tl_buf b = {0};
                d->agent_pid[a] = 0;
                tl_put_u32(&b, (uint32_t)d->agent_node[a]);
                tl_put_u32(&b, (uint32_t)st);
                tl_send(&d->parent, PD_AGENT_EXIT, &b);
                tl_buf_free(&b);
            }
        }
    }
}

/* Start this daemon's share of the launch tree (launchtree.h): one agent
 * per run of the share, each given the rest of its run. An agent that
 * cannot be started is reported as one that exited with status 127. */
static void start_share(pmixd_ctx *d)
{
    int runs = lt_nruns(d->share.n, d->lt.fanout);
    char keyhex[2 * PX_AUTH_KEYLEN + 1];
    if (runs == 0)
        return;
    d->agent_pid = calloc((size_t)runs, sizeof *d->agent_pid);
    d->agent_node = calloc((size_t)runs, sizeof *d->agent_node);
    if (d->agent_pid == NULL || d->agent_node == NULL) {
        fprintf(stderr, "pmixd node%d: cannot start its share of the daemons: out of memory\n",
                d->node);
        return; /* pmixrun's start-up deadline names them */
    }
    px_auth_key_hex(d->key, keyhex);
    for (int c = 0; c < runs; c++) {
        int first, count;
        lt_run(d->share.n, d->lt.fanout, c, &first, &count);
        pid_t pid = lt_start(&d->lt, &d->share, first, count, keyhex);
        d->agent_node[d->nagents] = d->share.node[first];
        d->agent_pid[d->nagents++] = pid > 0 ? pid : 0;
        if (pid < 0) {
            tl_buf b = {0};
            fprintf(stderr, "pmixd node%d: cannot run the launch agent for %s: %s\n", d->node,
                    d->share.host[first], strerror(errno));
            tl_put_u32(&b, (uint32_t)d->share.node[first]);
            tl_put_u32(&b, 127u << 8); /* as a wait status: exited with 127 */
            tl_send(&d->parent, PD_AGENT_EXIT, &b);
            tl_buf_free(&b);
        }
    }
    explicit_bzero(keyhex, sizeof keyhex);
}

static bool agents_done(const pmixd_ctx *d)
{
    for (int a = 0; a < d->nagents; a++)
        if (d->agent_pid[a] > 0)
            return false;
    return true;
}

static void signal_ranks(pmixd_ctx *d, int sig)
{
    job_signal_ranks(&d->j, sig);
    spawnd_signal(d, sig); /* and the spawned jobs' */
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
    if (!d->stopping || now)
        d->agents_until = now_s() + (now ? 5.0 : PMIXRUN_GRACE_S + 5.0);
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

/* A signal pmixrun forwards to the ranks: by a signal to a daemon it
 * forked, or as PD_SIGNAL to one it did not (started over ssh, where no
 * signal goes). */
static void forwarded_signal(pmixd_ctx *d, int sig)
{
    if (sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGCONT) {
        if (!d->stopping || sig == SIGCONT)
            signal_ranks(d, sig);
    } else if (sig == SIGTSTP) {
        /* pmixrun stops; the daemon does not, or its peers would count
         * it lost */
        if (!d->stopping)
            signal_ranks(d, SIGSTOP);
    }
}

/* ---- standard input (pmixrun's --stdin, PD_STDIN) ---- */

static void stdin_ignore(pmix_status_t status, void *cbdata)
{
    (void)status;
    (void)cbdata;
}

/* The data reached every local target (or they are gone): ask for more. */
static void stdin_delivered(pmix_status_t status, void *cbdata)
{
    pmixd_ctx *d = cbdata;
    tl_buf b = {0};

    (void)status;
    tl_send(&d->parent, PD_STDIN_ACK, &b);
    tl_buf_free(&b);
}

static void stdin_frame(pmixd_ctx *d, tl_reader *r)
{
    job *j = &d->j;
    uint8_t kind = tl_get_u8(r);
    pmix_proc_t all;

    if (kind == PD_STDIN_OPEN && !d->have_job) {
        uint32_t to = tl_get_u32(r);
        j->stdin_to = to == PD_STDIN_ALL ? STDIN_ALL : to <= 65535 ? (int)to : STDIN_NONE;
        j->in_open = j->in_pushed = j->stdin_to != STDIN_NONE;
        return;
    }
    PMIx_Load_procid(&all, j->nspace, PMIX_RANK_WILDCARD);
    if (kind == PD_STDIN_DATA) {
        size_t len = 0;
        const void *data = tl_get_bytes(r, &len);
        if (data == NULL ||
            iof_push_queue(j, &all, 1, data, len, false, stdin_delivered, d) != PMIX_SUCCESS)
            stdin_delivered(PMIX_ERR_NOT_FOUND, d); /* nobody reads it here */
    } else if (kind == PD_STDIN_EOF) {
        pmix_status_t rc = iof_push_queue(j, &all, 1, NULL, 0, true, stdin_ignore, NULL);
        (void)rc;
    }
}

/* ---- output to pmixrun for the tools that pulled it (PD_IOF_PULL) ---- */

/* A piece of a rank's output (iof_relay, pmixrun_iof.c's emit). */
static void relay_send(void *ctx, const pmix_proc_t *src, pmix_iof_channel_t channel,
                       const void *data, size_t len)
{
    pmixd_ctx *d = ctx;
    tl_buf b = {0};

    tl_put_u8(&b, PD_IOF_DATA);
    tl_put_str(&b, src->nspace);
    tl_put_u32(&b, src->rank);
    tl_put_u32(&b, (uint32_t)channel);
    tl_put_bytes(&b, data, len);
    tl_send(&d->parent, PD_IOF, &b);
    tl_buf_free(&b);
}

/* From now on every piece of output goes to pmixrun as well; it hears so
 * (PD_IOF_ON) after the pieces sent before, none of which it asked for. */
static void iof_pull_frame(pmixd_ctx *d)
{
    tl_buf b = {0};

    d->relay.on = true;
    tl_put_u8(&b, PD_IOF_ON);
    tl_send(&d->parent, PD_IOF, &b);
    tl_buf_free(&b);
}

/* A spawned job's output from another node, that pmixrun sends on to the
 * spawner's daemon (PMIX_FWD_STDOUT... on spawn): to this server's
 * subscriptions, as its own ranks' output goes. */
static void iof_from_parent(pmixd_ctx *d, tl_reader *r)
{
    job *j = &d->j;

    if (tl_get_u8(r) == PD_IOF_DATA && !r->bad)
        free(iof_piece_deliver(r, j->srv, j->plat, NULL));
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
        } else if (type == PD_STDIN) {
            stdin_frame(d, &r);
        } else if (type == PD_IOF_PULL) {
            iof_pull_frame(d);
        } else if (type == PD_IOF) {
            iof_from_parent(d, &r);
        } else if (type == PD_PUBSUB_REP) {
            pubsub_answer(&d->j, p, len);
        } else if (type == PD_EVENT_FWD) {
            events_deliver(&d->j, p, len);
        } else if (type == PD_SIGNAL) {
            uint32_t sig = tl_get_u32(&r);
            if (!r.bad)
                forwarded_signal(d, (int)sig);
        } else if (type == PD_SPAWN_JOB && d->job_read && !d->failed) {
            spawnd_job(d, p, len);
        } else if (type == PD_SPAWN_REP && d->job_read) {
            spawnd_reply(d, p, len);
        } else if (type == PD_TOOL) {
            dtool_frame(d, p, len);
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
        /* A connection not yet authenticated (slot c->idx): its PD_PEER,
         * answered with our challenge, then its proof. Anything else, or a
         * proof that does not check, closes it. */
        int s = c->idx;
        if (d->pend_node[s] < 0) {
            uint32_t n = tl_get_u32(&r);
            size_t nlen = 0;
            const void *nc = tl_get_bytes(&r, &nlen);
            uint8_t tag[PX_AUTH_TAGLEN];
            if (type != PD_PEER || r.bad || r.left != 0 || nc == NULL || nlen != PX_AUTH_NONCELEN ||
                n >= (uint32_t)d->j.nnodes || (int)n <= d->node || d->peers[n].fd >= 0 ||
                px_auth_nonce(d->pend_na[s]) != 0 ||
                px_auth_tag(d->key, PX_AUTH_ACCEPTOR, d->j.nspace, n, (uint32_t)d->node, nc,
                            d->pend_na[s], tag) != 0) {
                unwatch(&d->pend_w[s]);
                tl_link_close(l);
                return 1;
            }
            memcpy(d->pend_nc[s], nc, PX_AUTH_NONCELEN);
            d->pend_node[s] = (int)n;
            tl_buf b = {0};
            tl_put_bytes(&b, d->pend_na[s], PX_AUTH_NONCELEN);
            tl_put_bytes(&b, tag, sizeof tag);
            int rc = tl_send(l, PD_AUTH_CHAL, &b);
            tl_buf_free(&b);
            if (rc != 0) {
                unwatch(&d->pend_w[s]);
                tl_link_close(l);
                return 1;
            }
            return 0;
        }
        uint32_t n = (uint32_t)d->pend_node[s];
        size_t tlen = 0;
        const void *tag = tl_get_bytes(&r, &tlen);
        unwatch(&d->pend_w[s]); /* the link closes or moves */
        if (type != PD_AUTH_PROOF || r.bad || r.left != 0 || tag == NULL ||
            tlen != PX_AUTH_TAGLEN ||
            !px_auth_check(d->key, PX_AUTH_CONNECTOR, d->j.nspace, n, (uint32_t)d->node,
                           d->pend_nc[s], d->pend_na[s], tag) ||
            d->peers[n].fd >= 0) {
            tl_link_close(l);
            return 1;
        }
        l->frame_max = 0; /* it is a peer now */
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
    if (type == PD_BEAT)
        return 0; /* a heartbeat */
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
        } else if (sig == SIGUSR1 || sig == SIGUSR2 || sig == SIGCONT || sig == SIGTSTP) {
            forwarded_signal(d, sig);
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
    if ((what & PX_POSIX_WRITE) && d->pend[c.idx].fd >= 0 && tl_flush(&d->pend[c.idx]) != 0) {
        unwatch(&d->pend_w[c.idx]);
        tl_link_close(&d->pend[c.idx]);
    }
    if ((what & PX_POSIX_READ) && d->pend[c.idx].fd >= 0 &&
        tl_read(&d->pend[c.idx], on_frame, &c) != 0) {
        unwatch(&d->pend_w[c.idx]);
        tl_link_close(&d->pend[c.idx]);
    }
    for (int p = 0; d->npeers > before && p < d->j.nnodes; p++)
        read_peer(d, p); /* what came with its proof */
}

static void listen_ready(void *arg, unsigned what)
{
    pmixd_ctx *d = arg;
    int fd = tl_accept(d->lfd);
    /* at most npend connections wait for their proof (the cap), each for
     * PD_AUTH_S at most, with small frames only */
    for (int s = 0; fd >= 0 && s < d->npend; s++) {
        if (d->pend[s].fd < 0) {
            tl_link_init(&d->pend[s], fd);
            d->pend[s].frame_max = PD_AUTH_FRAME_MAX;
            d->pend_node[s] = -1;
            d->pend_until[s] = now_s() + PD_AUTH_S;
            d->pend_w[s] =
                px_posix_watch_create(d->j.plat, fd, PX_POSIX_READ, pend_ready, &d->pend_io[s]);
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
    for (int s = 0; d->pend_w != NULL && s < d->npend; s++)
        if (d->pend_w[s] != NULL)
            px_posix_watch_set(d->pend_w[s],
                               PX_POSIX_READ | (tl_want_write(&d->pend[s]) ? PX_POSIX_WRITE : 0));
}

/* Close the connections that did not authenticate in time; the
 * milliseconds until the next such deadline, -1 if none. */
static int expire_pending(pmixd_ctx *d)
{
    double t = now_s(), next = -1;
    for (int s = 0; d->job_read && s < d->npend; s++) {
        if (d->pend[s].fd < 0)
            continue;
        if (t >= d->pend_until[s]) {
            unwatch(&d->pend_w[s]);
            tl_link_close(&d->pend[s]);
        } else if (next < 0 || d->pend_until[s] < next) {
            next = d->pend_until[s];
        }
    }
    return next < 0 ? -1 : (int)((next - t) * 1000.0) + 1;
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
            bool live = j->nreaped < j->nstarted || spawnd_live(d) > 0;
            if (now_s() >= d->kill_at && live) {
                signal_ranks(d, SIGKILL);
                d->kill_at = now_s() + 5.0;
            }
            /* the daemons it started over the agent write through it */
            if (!live && (agents_done(d) || now_s() >= d->agents_until)) {
                if (drain_until == 0)
                    drain_until = now_s() + 1.0;
                if ((all_output_closed(j) && !spawnd_output_open(d)) || now_s() >= drain_until)
                    break;
            }
        }
        int tmo = coll_timeout_ms(d), hb = heartbeat(d), ap = expire_pending(d);
        if (hb >= 0 && (tmo < 0 || hb < tmo))
            tmo = hb;
        if (ap >= 0 && (tmo < 0 || ap < tmo))
            tmo = ap;
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
        iof_stdin_arm(j);
        px_posix_run_once(j->plat, tmo < 0 ? -1.0 : tmo / 1000.0);
    }
}

/* ---- setup ---- */

/* --connect ADDR:PORT: the control connection is a TCP connection to
 * pmixrun (started by srun or ssh), authenticated as a daemon's to another
 * (PD_AUTH_CONTROL names it; pmixrun is node PD_AUTH_LAUNCHER). The fd, or
 * -1 with a message. */
static int connect_parent(pmixd_ctx *d, const char *to)
{
    char addr[64];
    unsigned port = 0;
    const char *why = NULL;
    const char *colon = strrchr(to, ':');
    if (colon == NULL || (size_t)(colon - to) >= sizeof addr ||
        sscanf(colon + 1, "%u", &port) != 1 || port == 0 || port > 65535) {
        fprintf(stderr, "pmixd: --connect wants ADDRESS:PORT, not '%s'\n", to);
        return -1;
    }
    snprintf(addr, sizeof addr, "%.*s", (int)(colon - to), to);
    int fd = tl_connect(addr, (uint16_t)port, PD_AUTH_S);
    if (fd >= 0 &&
        connect_auth(d, fd, PD_AUTH_LAUNCHER, PD_AUTH_CONTROL, now_s() + PD_AUTH_S, &why) == 0)
        return fd;
    fprintf(stderr, "pmixd node%d: cannot join pmixrun at %s: %s\n", d->node, to,
            why != NULL ? why : strerror(errno));
    if (fd >= 0)
        close(fd);
    return -1;
}

static int setup(pmixd_ctx *d, int parent, const char *to, const char *listen)
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
    char toward[64];
    if (to != NULL) {
        if ((parent = connect_parent(d, to)) < 0)
            return -1;
        /* listen on the address toward pmixrun unless told otherwise: the
         * other daemons reach us there as pmixrun did */
        struct sockaddr_in me;
        socklen_t ml = sizeof me;
        if (listen == NULL && getsockname(parent, (struct sockaddr *)&me, &ml) == 0 &&
            inet_ntop(AF_INET, &me.sin_addr, toward, sizeof toward) != NULL)
            listen = toward;
    }
    if (listen == NULL)
        listen = "127.0.0.1";
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
    /* this node's NICs, from the topology the bindings use later */
    px_nics nics;
    char err[512];
    if (net_node_nics(j, d->node, &nics, err, sizeof err) != 0) {
        fprintf(stderr, "pmixd node%d: %s\n", d->node, err);
        return -1;
    }
    tl_buf b = {0};
    tl_put_u8(&b, nics.fabric);
    tl_put_u32(&b, nics.n);
    for (unsigned i = 0; i < nics.n; i++) {
        tl_put_str(&b, nics.name[i]);
        tl_put_str(&b, nics.alias[i]);
    }
    int rc = tl_send(&d->parent, PD_NICS, &b);
    tl_buf_free(&b);
    if (rc != 0)
        return rc;
    tl_put_u32(&b, (uint32_t)d->node);
    tl_put_u32(&b, d->port);
    if (to != NULL)
        tl_put_str(&b, listen); /* the others reach us there (--if-include) */
    rc = tl_send(&d->parent, PD_HELLO, &b);
    tl_buf_free(&b);
    return rc;
}

static void teardown(pmixd_ctx *d)
{
    job *j = &d->j;
    job_server_stop(j); /* answers pending PMIx_Abort calls */
    coll_fini(d);
    spawnd_fini(d); /* after the core, which borrowed their maps */
    dtool_fini(d);
    /* the watches go before their descriptors, the platform after them */
    unwatch(&d->parent_w);
    unwatch(&d->listen_w);
    for (int n = 0; d->peer_w != NULL && n < j->nnodes; n++)
        unwatch(&d->peer_w[n]);
    for (int s = 0; d->pend_w != NULL && s < d->npend; s++)
        unwatch(&d->pend_w[s]);
    job_platform_free(j);
    files_run_cleanups(j);
    files_remove_topdir(j);
    tl_drain(&d->parent, 2.0);
    tl_link_close(&d->parent);
    for (int n = 0; d->peers != NULL && n < j->nnodes; n++)
        tl_link_close(&d->peers[n]);
    for (int s = 0; d->pend != NULL && s < d->npend; s++)
        tl_link_close(&d->pend[s]);
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
    free(d->pend_node);
    free(d->pend_until);
    free(d->pend_nc);
    free(d->pend_na);
    free(d->pend_io);
    free(d->peer_lost);
    free(d->heard);
    free(d->said);
    free(d->peer_w);
    free(d->pend_w);
    free(d->io);
    for (int a = 0; a < d->nagents; a++)
        if (d->agent_pid[a] > 0)
            kill(-d->agent_pid[a], SIGTERM); /* still there at the deadline */
    free(d->agent_pid);
    free(d->agent_node);
    lt_conf_free(&d->lt);
    lt_share_free(&d->share);
    job_release(j);
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: pmixd (--parent-fd FD | --connect ADDR:PORT) --node (ID | slurm)\n"
               "             [--listen ADDR | --if-include LIST] [--key-stdin]\n"
               "             [--isolate host|net]\n"
               "\n"
               "The node daemon of a pmixrun job over several nodes; pmixrun starts it\n"
               "(itself, or through srun or ssh: then it connects back to ADDR:PORT, and\n"
               "--node slurm takes the node id from $SLURM_NODEID). The job's secret\n"
               "comes in $" PD_KEY_ENV " or, with --key-stdin, as the first line of the\n"
               "standard input. It listens for the other daemons on ADDR, or the first\n"
               "address of this host on an interface or subnet of LIST (eth1,10.1.0.0/16),\n"
               "or the address toward pmixrun.\n");
}

/* The job's secret: from PD_KEY_ENV, removed from the environment at once
 * (the ranks must not inherit it), or the first line of stdin. 0 or -1. */
static int read_key(pmixd_ctx *d, bool from_stdin)
{
    char line[2 * PX_AUTH_KEYLEN + 2] = "";
    int rc = -1;
    if (from_stdin) {
        size_t got = 0;
        while (got < sizeof line - 1) {
            ssize_t r = read(STDIN_FILENO, line + got, 1); /* no more than the line */
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0 || line[got] == '\n')
                break;
            got++;
        }
        line[got] = '\0';
    } else if (getenv(PD_KEY_ENV) != NULL) {
        snprintf(line, sizeof line, "%s", getenv(PD_KEY_ENV));
        char *v = getenv(PD_KEY_ENV);
        explicit_bzero(v, strlen(v));
        unsetenv(PD_KEY_ENV);
    }
    rc = px_auth_key_parse(line, d->key);
    explicit_bzero(line, sizeof line);
    if (rc != 0)
        fprintf(stderr,
                "pmixd: no job secret (64 hexadecimal digits in $%s or, with "
                "--key-stdin, on stdin)\n",
                PD_KEY_ENV);
    return rc;
}

int main(int argc, char **argv)
{
    pmixd_ctx dm = {0}, *d = &dm;
    int parent = -1;
    const char *listen = NULL, *to = NULL, *ifinclude = NULL;
    bool key_stdin = false;
    vhost_mode isolate = VHOST_NONE;
    d->node = -1;
    d->lfd = -1;
    d->parent.fd = -1;
    d->relay = (iof_relay){.send = relay_send, .ctx = d};
    d->j.relay = &d->relay;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--parent-fd") == 0 && i + 1 < argc) {
            parent = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--connect") == 0 && i + 1 < argc) {
            to = argv[++i];
        } else if (strcmp(argv[i], "--key-stdin") == 0) {
            key_stdin = true;
        } else if (strcmp(argv[i], "--listen") == 0 && i + 1 < argc) {
            listen = argv[++i];
        } else if (strcmp(argv[i], "--if-include") == 0 && i + 1 < argc) {
            ifinclude = argv[++i];
        } else if (strcmp(argv[i], "--isolate") == 0 && i + 1 < argc) {
            if (vhost_parse(argv[++i], &isolate) != 0 || isolate == VHOST_AUTO) {
                usage(stderr);
                return PMIXRUN_EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--node") == 0 && i + 1 < argc) {
            char *end;
            const char *v = argv[++i];
            if (strcmp(v, "slurm") == 0) /* one task per node of a Slurm step */
                v = getenv("SLURM_NODEID") != NULL ? getenv("SLURM_NODEID") : "";
            long n = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || n < 0 || n > 65535) {
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
    if ((parent < 0) == (to == NULL) || d->node < 0 || (listen != NULL && ifinclude != NULL)) {
        usage(stderr);
        return PMIXRUN_EXIT_USAGE;
    }
    if (read_key(d, key_stdin) != 0)
        return PMIXRUN_EXIT_USAGE;
    if (key_stdin) {
        /* after the secret: this daemon's share of the launch tree */
        char err[256];
        if (lt_read(STDIN_FILENO, &d->lt, &d->share, err, sizeof err) != 0 ||
            (d->share.n > 0 && to == NULL)) {
            fprintf(stderr, "pmixd node%d: %s\n", d->node,
                    d->share.n > 0 && to == NULL ? "a share of nodes needs --connect" : err);
            lt_conf_free(&d->lt);
            lt_share_free(&d->share);
            return PMIXRUN_EXIT_USAGE;
        }
        if (d->share.n > 0 &&
            ((d->lt.connect = strdup(to)) == NULL ||
             (ifinclude != NULL && (d->lt.ifinclude = strdup(ifinclude)) == NULL))) {
            fprintf(stderr, "pmixd: out of memory\n");
            return 1;
        }
    }
    /* --if-include: listen on this host's first address the list takes
     * (the daemons started from here get the same list) */
    char chosen[64];
    if (ifinclude != NULL) {
        char err[256], host[256] = "this host";
        int r = tl_if_address(ifinclude, chosen, sizeof chosen, err, sizeof err);
        if (r != 1) {
            gethostname(host, sizeof host);
            host[sizeof host - 1] = '\0';
            fprintf(stderr, "pmixd on %s (node %d): --if-include %s: %s\n", host, d->node,
                    ifinclude, err);
            lt_conf_free(&d->lt);
            lt_share_free(&d->share);
            return PMIXRUN_EXIT_USAGE;
        }
        listen = chosen;
    }
    job *j = &d->j;
    j->sigfd = j->devnull = -1;
    j->child_exited = true;
    j->node = d->node;
    j->outs[1] = (iof_out){.fd = STDOUT_FILENO};
    j->outs[2] = (iof_out){.fd = STDERR_FILENO};
    snprintf(j->hostname, sizeof j->hostname, "node%d", d->node);
    if (isolate == VHOST_NET) {
        /* pmixrun made the bridge and puts our end of a veth pair in it:
         * no loopback fallback, the other nodes are only there */
        char err[256];
        if (vhost_isolate_net(err, sizeof err) != 0) {
            fprintf(stderr, "pmixd %s: --isolate net: %s\n", j->hostname, err);
            return 1;
        }
        isolate = VHOST_HOST;
    }
    if (isolate == VHOST_HOST) {
        char err[256];
        int tmp_private = 0;
        if (vhost_isolate(&tmp_private, err, sizeof err) != 0)
            fprintf(stderr,
                    "pmixd %s: the virtual node shares this machine's host name, /dev/shm and "
                    "/tmp: %s\n",
                    j->hostname, err);
        else {
            d->isolated = true;
            if (!tmp_private)
                fprintf(stderr,
                        "pmixd %s: no overlay file system for a private /tmp: the virtual node "
                        "shares this machine's /tmp\n",
                        j->hostname);
        }
    }
    int status = 0;
    if (setup(d, parent, to, listen) != 0)
        status = 1;
    else {
        start_share(d);
        run(d);
    }
    if (d->failed)
        status = 1;
    teardown(d);
    return status;
}
