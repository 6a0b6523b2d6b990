/*
 * pmixrun_nodes.c - pmixrun --nodes K: a job over K daemons (pmixd) that
 * run on this machine as virtual nodes node0..node{K-1}.
 *
 * How it works. pmixrun computes the map (which node runs which rank:
 * --map-by slot gives node i a block of consecutive ranks, the first N%K
 * nodes one more, or as many as its --host slots or --map-by ppr say;
 * --map-by node deals ranks round robin; --hostfile names
 * the nodes, the addresses their daemons listen on, and optionally a
 * network namespace to start a daemon in) and starts the K daemons, each
 * with its node id, its address and one end of a socketpair as its control
 * connection. Each daemon says it is up (PD_HELLO, with the port it listens
 * on for its peers) and gets the job (PD_JOB: nspace,
 * map, node names, every daemon's address, and the application contexts:
 * program, arguments, environment, directory, process set). The
 * daemons then connect to each other, start their ranks, serve them, and
 * report each rank's end (PD_EXIT) and any PMIx_Abort (PD_ABORT).
 *
 * pmixrun keeps one rank_proc per rank, filled from those reports, and
 * applies the same rules as on one node (pmixrun.c: end_job, rank_judge,
 * final_status). Stopping the job is a PD_STOP to every daemon (with
 * now = 1 once the grace period is over). A daemon that exits before it
 * was told to stop, or whose connection drops, loses its node's ranks: a
 * message names the node, and the job ends as for a failed rank. One that
 * another daemon reports silent (PD_LOST, the heartbeat) is killed first.
 *
 * The daemons' output is their ranks' output: they inherit pmixrun's
 * stdout and stderr and write whole lines to them (docs/pmixd.md).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <px_coll.h>

#include "pmixd_proto.h"
#include "pmixrun.h"
#include "tcplink.h"

#define SETUP_S 15.0 /* daemons must say hello within this */

typedef struct dnode {
    pid_t pid;
    bool reaped;
    bool hello;
    bool silent; /* another daemon heard nothing from it (PD_LOST): killed */
    uint16_t port;
    tl_link link;
} dnode;

typedef struct nodes {
    job *j;
    int k;
    dnode *d;
    int nhello;
    bool job_sent;
    int stop_level;     /* 0 none, 1 stop sent, 2 stop now sent */
    bool daemon_failed; /* one died or exited non-zero: the status is at least 1 */
    double kill_at;     /* daemons still there then get SIGKILL */
} nodes;

static int make_map(job *j)
{
    j->rank_node = calloc((size_t)j->nprocs, sizeof *j->rank_node);
    if (j->node_names == NULL)
        j->node_names = calloc((size_t)j->nnodes, sizeof *j->node_names);
    if (j->rank_node == NULL || j->node_names == NULL)
        return -1;
    int base = j->nprocs / j->nnodes, extra = j->nprocs % j->nnodes;
    for (int r = 0, n = 0, left = base + (extra > 0); r < j->nprocs; r++) {
        if (j->map_by_node) {
            j->rank_node[r] = (uint32_t)(r % j->nnodes);
            continue;
        }
        if (left == 0) {
            n++;
            left = base + (n < extra);
        }
        j->rank_node[r] = (uint32_t)n;
        left--;
    }
    if (j->node_slots != NULL && !j->map_by_node) {
        /* --host slots or --map-by ppr, instead: fill each node's slots in
         * turn, and go round again if there are more ranks than slots. */
        for (int r = 0, n = 0, used = 0; r < j->nprocs; r++) {
            while (used >= j->node_slots[n]) {
                n = (n + 1) % j->nnodes;
                used = 0;
            }
            j->rank_node[r] = (uint32_t)n;
            used++;
        }
    }
    for (int n = 0; n < j->nnodes; n++)
        if (j->node_names[n] == NULL && asprintf(&j->node_names[n], "node%d", n) < 0)
            return -1;
    return 0;
}

void nodes_signal(job *j, int sig)
{
    nodes *ns = j->nodes;
    if (ns == NULL)
        return;
    if (sig == SIGSTOP)
        sig = SIGTSTP; /* the daemons stop their ranks, not themselves */
    for (int i = 0; i < ns->k; i++)
        if (ns->d[i].pid > 0 && !ns->d[i].reaped)
            kill(ns->d[i].pid, sig);
}

void nodes_free_names(job *j)
{
    for (int n = 0; n < j->nnodes; n++) {
        if (j->node_names != NULL)
            free(j->node_names[n]);
        if (j->node_addrs != NULL)
            free(j->node_addrs[n]);
        if (j->node_netns != NULL)
            free(j->node_netns[n]);
    }
    free(j->node_names);
    free(j->node_addrs);
    free(j->node_netns);
    j->node_names = j->node_addrs = j->node_netns = NULL;
}

static const char *node_addr(const job *j, int n)
{
    return j->node_addrs != NULL ? j->node_addrs[n] : "127.0.0.1";
}

int nodes_read_hostfile(job *j, const char *path, int limit, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read the hostfile %s: %s", path, strerror(errno));
        return -1;
    }
    char line[512];
    int n = 0, lineno = 0, rc = -1;
    char **names = NULL, **addrs = NULL, **nss = NULL;
    while (fgets(line, sizeof line, f) != NULL && (limit <= 0 || n < limit)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        char name[256], addr[64], opt[256], extra[8];
        int got = sscanf(line, "%255s %63s %255s %7s", name, addr, opt, extra);
        if (got <= 0)
            continue;
        if (got == 1)
            snprintf(addr, sizeof addr, "%.63s", name);
        struct in_addr ia;
        if (got > 3 || inet_pton(AF_INET, addr, &ia) != 1 ||
            (got == 3 && (strncmp(opt, "netns=", 6) != 0 || opt[6] == '\0'))) {
            snprintf(err, errlen,
                     "%s line %d: want \"NAME [ADDRESS [netns=NS]]\" with a numeric IPv4 "
                     "address, not \"%.100s\"",
                     path, lineno, strtok(line, "\n"));
            goto out;
        }
        char **nn = realloc(names, (size_t)(n + 1) * sizeof *nn);
        if (nn != NULL)
            names = nn;
        char **na = realloc(addrs, (size_t)(n + 1) * sizeof *na);
        if (na != NULL)
            addrs = na;
        char **nx = realloc(nss, (size_t)(n + 1) * sizeof *nx);
        if (nx != NULL)
            nss = nx;
        if (nn == NULL || na == NULL || nx == NULL) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        names[n] = strdup(name);
        addrs[n] = strdup(addr);
        nss[n] = got == 3 ? strdup(opt + 6) : NULL;
        n++;
        if (names[n - 1] == NULL || addrs[n - 1] == NULL || (got == 3 && nss[n - 1] == NULL)) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    if (n == 0) {
        snprintf(err, errlen, "the hostfile %s names no node", path);
    } else if (limit > 0 && n < limit) {
        snprintf(err, errlen, "--nodes %d: the hostfile %s names only %d node%s", limit, path, n,
                 n == 1 ? "" : "s");
    } else {
        rc = 0;
    }
out:
    fclose(f);
    if (rc != 0) {
        for (int i = 0; i < n; i++) {
            free(names[i]);
            free(addrs[i]);
            free(nss[i]);
        }
        free(names);
        free(addrs);
        free(nss);
        return -1;
    }
    j->nnodes = n;
    j->node_names = names;
    j->node_addrs = addrs;
    j->node_netns = nss;
    return 0;
}

/* pmixd next to this pmixrun, or $PMIXLAB_PMIXD. */
static char *pmixd_path(void)
{
    const char *env = getenv("PMIXLAB_PMIXD");
    if (env != NULL && *env != '\0')
        return strdup(env);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return strdup("pmixd");
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash != NULL)
        slash[1] = '\0';
    char *p = NULL;
    if (asprintf(&p, "%spmixd", slash != NULL ? self : "") < 0)
        return NULL;
    return p;
}

/* Start node `node`'s daemon with one end of a socketpair as its control
 * connection (fd 3), inside the node's network namespace if it has one
 * (`ip netns exec NS`). Returns its pid (the link is set up) or -1. */
static pid_t start_daemon(job *j, const char *path, int node, tl_link *link)
{
    char nodearg[16];
    const char *listen = node_addr(j, node);
    const char *netns = j->node_netns != NULL ? j->node_netns[node] : NULL;
    int sv[2];
    snprintf(nodearg, sizeof nodearg, "%d", node);
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -1;
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        close(sv[1]);
        if (pid < 0)
            close(sv[0]);
        else
            tl_link_init(link, sv[0]);
        return pid;
    }
    /* The child: its own group (Ctrl-C reaches pmixrun, which stops the
     * job), dies with pmixrun, signals unblocked for exec. */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != me)
        _exit(1);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (j->devnull >= 0)
        dup2(j->devnull, 0);
    if (sv[1] == 3)
        fcntl(3, F_SETFD, 0);
    else if (dup2(sv[1], 3) < 0)
        _exit(1);
    if (netns != NULL)
        execlp("ip", "ip", "netns", "exec", netns, path, "--parent-fd", "3", "--node", nodearg,
               "--listen", listen, (char *)NULL);
    else
        execl(path, "pmixd", "--parent-fd", "3", "--node", nodearg, "--listen", listen,
              (char *)NULL);
    fprintf(stderr, "pmixrun: cannot start the daemon %s%s%s: %s\n", path,
            netns != NULL ? " with ip netns exec " : "", netns != NULL ? netns : "",
            strerror(errno));
    _exit(PMIXRUN_EXIT_NOTFOUND);
}

static void send_all(nodes *ns, uint8_t type, const tl_buf *b)
{
    for (int i = 0; i < ns->k; i++)
        if (ns->d[i].link.fd >= 0)
            tl_send(&ns->d[i].link, type, b);
}

static void send_job(nodes *ns)
{
    job *j = ns->j;
    tl_buf b = {0};
    tl_put_str(&b, j->nspace);
    tl_put_u32(&b, (uint32_t)j->nprocs);
    tl_put_u32(&b, (uint32_t)j->nnodes);
    tl_put_u8(&b, j->tag_output);
    tl_put_u8(&b, j->map_by_node);
    tl_put_u8(&b, j->merge_stderr);
    for (int r = 0; r < j->nprocs; r++)
        tl_put_u32(&b, j->rank_node[r]);
    for (int n = 0; n < j->nnodes; n++) {
        tl_put_str(&b, j->node_names[n]);
        tl_put_str(&b, node_addr(j, n));
        tl_put_u32(&b, ns->d[n].port);
    }
    apps_write(j, &b);
    send_all(ns, PD_JOB, &b);
    tl_buf_free(&b);
    ns->job_sent = true;
    j->nstarted = j->nprocs; /* from now on their ends come as reports */
}

static void send_stop(nodes *ns, bool now)
{
    tl_buf b = {0};
    tl_put_u8(&b, now);
    send_all(ns, PD_STOP, &b);
    tl_buf_free(&b);
    ns->stop_level = now ? 2 : 1;
    if (ns->kill_at == 0 || now)
        ns->kill_at = now_s() + PMIXRUN_GRACE_S + 5.0;
}

/* ---- events (pmixrun_events.c) ---- */

/* Send a packed event (a PD_EVENT payload: one byte string) to every
 * daemon but `except` (-1: none). */
static void relay_event(nodes *ns, int except, const uint8_t *p, size_t len)
{
    tl_buf b = {0};
    tl_put_raw(&b, p, len);
    for (int n = 0; n < ns->k; n++)
        if (n != except && ns->d[n].link.fd >= 0 && !ns->d[n].reaped)
            tl_send(&ns->d[n].link, PD_EVENT_FWD, &b);
    tl_buf_free(&b);
}

/* An event pmixrun raises itself, about `rank` (-1: the job), to every
 * daemon but `except`, for the clients of the rank's namespace. */
static void raise_event(nodes *ns, int except, pmix_status_t status, int rank,
                        const pmix_info_t *info, size_t ninfo)
{
    job *j = ns->j;
    tl_buf b = {0};
    pmix_proc_t src;
    PMIx_Load_procid(&src, j->nspace, rank >= 0 ? (pmix_rank_t)rank : PMIX_RANK_WILDCARD);
    if (ns->stop_level == 0 &&
        events_pack(&b, status, &src, PMIX_RANGE_NAMESPACE, info, ninfo) == 0)
        relay_event(ns, except, b.data, b.len);
    tl_buf_free(&b);
}

void nodes_raise(job *j, pmix_status_t status, const pmix_info_t *info, size_t ninfo)
{
    if (j->nodes != NULL)
        raise_event(j->nodes, -1, status, -1, info, ninfo);
}

/* A daemon's job control request (pmixrun_jctrl.c): to every daemon, each
 * signals those of the ranks it runs. Not once the job is ending. */
static void relay_jctrl(nodes *ns, const uint8_t *p, size_t len)
{
    int sig;
    uint32_t *ranks;
    size_t n;
    if (jctrl_read(p, len, &sig, &ranks, &n) != 0)
        return;
    tl_buf b = {0};
    jctrl_pack(&b, sig, ranks, n);
    for (int i = 0; i < ns->k && ns->stop_level == 0; i++)
        if (ns->d[i].link.fd >= 0 && !ns->d[i].reaped)
            tl_send(&ns->d[i].link, PD_JCTRL, &b);
    tl_buf_free(&b);
    free(ranks);
}

static void got_exit(nodes *ns, tl_reader *r)
{
    job *j = ns->j;
    uint32_t rank = tl_get_u32(r), pid = tl_get_u32(r), code = tl_get_u32(r);
    uint8_t flags = tl_get_u8(r);
    if (r->bad || rank >= (uint32_t)j->nprocs || j->ranks[rank].reaped)
        return;
    rank_proc *p = &j->ranks[rank];
    p->reaped = true;
    j->nreaped++;
    p->code = (int)code;
    p->signaled = (flags & PD_EXIT_SIGNALED) != 0;
    p->stopped_by_us = (flags & PD_EXIT_STOPPED) != 0;
    if (flags & PD_EXIT_NOLAUNCH) {
        end_job(j, END_LAUNCH, (int)code);
        return;
    }
    pubsub_rank_ended(j, (int)rank);
    /* A connected rank that ended without finalizing: its own node told
     * its clients (the server engine's client_died); the others hear it
     * from here. */
    if ((flags & PD_EXIT_CONNECTED) && !(flags & PD_EXIT_FINALIZED) && !p->stopped_by_us)
        raise_event(ns, (int)j->rank_node[rank], PMIX_ERR_PROC_TERM_WO_SYNC, (int)rank, NULL, 0);
    rank_judge(j, p, (int)pid, (flags & PD_EXIT_CONNECTED) != 0, (flags & PD_EXIT_FINALIZED) != 0);
}

static void got_abort(nodes *ns, tl_reader *r)
{
    job *j = ns->j;
    uint32_t rank = tl_get_u32(r), status = tl_get_u32(r);
    char *msg = tl_get_str(r);
    if (!r->bad && !j->abort_seen && rank < (uint32_t)j->nprocs) {
        /* every registered process hears of it before the job is stopped */
        raise_event(ns, -1, PMIX_ERR_PROC_ABORTED, (int)rank, NULL, 0);
        j->abort_seen = true;
        j->abort_rank = (int)rank;
        j->abort_status = (int)status;
        j->abort_msg = msg;
        msg = NULL;
    }
    free(msg);
    check_abort(j);
}

/* Daemon `by` heard nothing from another for a while (its heartbeat,
 * pmixd_proto.h): that daemon is stopped, hung or cut off. It is killed,
 * so that its ranks go with it; its end (daemon_gone) names them and ends
 * the job. */
static void got_lost(nodes *ns, int by, tl_reader *r)
{
    uint32_t n = tl_get_u32(r), ms = tl_get_u32(r);
    if (r->bad || n >= (uint32_t)ns->k || (int)n == by || ns->d[n].silent || ns->d[n].reaped ||
        ns->d[n].pid <= 0)
        return;
    ns->d[n].silent = true;
    fprintf(stderr,
            "pmixrun: the daemon of %s heard nothing from the daemon of %s (pid %d) for %.1f s: "
            "stopped, hung or cut off; killing it\n",
            ns->j->node_names[by], ns->j->node_names[n], (int)ns->d[n].pid, ms / 1000.0);
    kill(-ns->d[n].pid, SIGKILL); /* its group, as at the end of a job */
}

typedef struct rctx {
    nodes *ns;
    int node;
} rctx;

static int on_frame(void *ctx, tl_link *l, uint8_t type, const uint8_t *p, size_t len)
{
    rctx *c = ctx;
    nodes *ns = c->ns;
    tl_reader r = {.p = p, .left = len};
    switch (type) {
    case PD_HELLO: {
        uint32_t node = tl_get_u32(&r), port = tl_get_u32(&r);
        dnode *d = &ns->d[c->node];
        if (r.bad || node != (uint32_t)c->node || d->hello || port == 0 || port > 65535) {
            tl_link_close(l);
            return 1;
        }
        d->hello = true;
        d->port = (uint16_t)port;
        ns->nhello++;
        break;
    }
    case PD_EXIT: got_exit(ns, &r); break;
    case PD_ABORT: got_abort(ns, &r); break;
    case PD_LOST: got_lost(ns, c->node, &r); break;
    case PD_PUBSUB: pubsub_frame(ns->j, l, p, len); break;
    case PD_EVENT: relay_event(ns, c->node, p, len); break;
    case PD_JCTRL: relay_jctrl(ns, p, len); break;
    default: break;
    }
    return 0;
}

/* A daemon is gone: its node's ranks that did not report are lost. */
static void daemon_gone(nodes *ns, int n, int wstatus)
{
    job *j = ns->j;
    dnode *d = &ns->d[n];
    rctx c = {ns, n};
    if (d->link.fd >= 0) {
        tl_read(&d->link, on_frame, &c); /* reports it sent before it went */
        tl_link_close(&d->link);
    }
    int lost = 0;
    char list[256] = "";
    size_t len = 0;
    for (int r = 0; r < j->nprocs; r++) {
        if ((int)j->rank_node[r] != n || j->ranks[r].reaped)
            continue;
        if (len < sizeof list - 16)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", lost ? "," : "", r);
        j->ranks[r].reaped = true;
        j->ranks[r].stopped_by_us = true;
        j->nreaped++;
        lost++;
    }
    if (WIFSIGNALED(wstatus))
        files_remove_stale(); /* it could not remove its directory */
    bool normal = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && ns->stop_level > 0;
    if (normal && lost == 0)
        return;
    char how[96];
    if (WIFSIGNALED(wstatus))
        snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    else
        snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(wstatus));
    ns->daemon_failed = true;
    fprintf(stderr, "pmixrun: the daemon of %s (pid %d) %s%s%s%s%s\n", j->node_names[n],
            (int)d->pid, how, lost > 0 ? "; its processes are lost: rank(s) " : "",
            lost > 0 ? list : "", j->reason == END_NONE ? "; stopping the job" : "",
            ns->job_sent ? "" : " (before the job started)");
    end_job(j, ns->job_sent ? END_RANK_FAILED : END_LAUNCH, 1);
}

static bool reap_daemons(nodes *ns)
{
    bool all = true;
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            break;
        for (int i = 0; i < ns->k; i++) {
            if (ns->d[i].pid == pid && !ns->d[i].reaped) {
                ns->d[i].reaped = true;
                daemon_gone(ns, i, st);
            }
        }
    }
    for (int i = 0; i < ns->k; i++)
        all = all && (ns->d[i].reaped || ns->d[i].pid <= 0);
    return all;
}

static int check_daemon_env(void)
{
    px_coll_choice ch;
    char err[256];
    if (px_coll_choose(PX_COLL_ALLGATHER, NULL, getenv(PX_COLL_ENV_FENCE), &ch, err, sizeof err) !=
            PMIX_SUCCESS ||
        px_coll_choose(PX_COLL_BARRIER, NULL, getenv(PX_COLL_ENV_BARRIER), &ch, err, sizeof err) !=
            PMIX_SUCCESS) {
        fprintf(stderr, "pmixrun: %s\n", err);
        return -1;
    }
    double beat, lost;
    if (pd_heartbeat_parse(getenv(PD_HEARTBEAT_ENV), &beat, &lost, err, sizeof err) != 0) {
        fprintf(stderr, "pmixrun: %s\n", err);
        return -1;
    }
    return 0;
}

static void loop(nodes *ns)
{
    job *j = ns->j;
    size_t cap = 2 + 2 * (size_t)ns->k;
    struct pollfd *pfd = calloc(cap, sizeof *pfd);
    int *who = calloc(cap, sizeof *who);
    double setup_until = now_s() + SETUP_S;
    if (pfd == NULL || who == NULL) {
        fprintf(stderr, "pmixrun: out of memory\n");
        end_job(j, END_LAUNCH, 1);
    }
    for (;;) {
        bool all_gone = reap_daemons(ns);
        check_abort(j);
        handle_time(j);
        pubsub_tick(j);
        if (all_gone)
            break;
        if (!ns->job_sent && j->reason == END_NONE) {
            if (ns->nhello == ns->k) {
                send_job(ns);
                j->timeout_at = now_s() + j->timeout;
            } else if (now_s() > setup_until) {
                fprintf(stderr, "pmixrun: only %d of %d daemons started within %g s\n", ns->nhello,
                        ns->k, SETUP_S);
                end_job(j, END_LAUNCH, 1);
            }
        }
        if (j->reason == END_NONE && ns->job_sent && live_ranks(j) == 0 && ns->stop_level == 0)
            send_stop(ns, false); /* every rank ended by itself */
        if (j->reason != END_NONE && j->phase != PHASE_SETTLING) {
            int want = j->phase == PHASE_KILLING ? 2 : 1;
            if (ns->stop_level < want)
                send_stop(ns, want == 2);
        }
        if (ns->kill_at > 0 && now_s() > ns->kill_at) {
            for (int i = 0; i < ns->k; i++)
                if (!ns->d[i].reaped && ns->d[i].pid > 0)
                    kill(-ns->d[i].pid, SIGKILL);
            ns->kill_at = now_s() + 5.0;
        }
        if (pfd == NULL)
            break;
        nfds_t n = 0;
        pfd[n] = (struct pollfd){.fd = j->sigfd, .events = POLLIN};
        who[n++] = -3;
        for (int i = 0; i < ns->k; i++) {
            tl_link *l = &ns->d[i].link;
            if (l->fd >= 0) {
                pfd[n] = (struct pollfd){.fd = l->fd, .events = POLLIN};
                if (tl_want_write(l))
                    pfd[n].events |= POLLOUT;
                who[n++] = i;
            }
        }
        int tmo = poll_timeout_ms(j), ps = pubsub_timeout_ms(j);
        if (ps >= 0 && (tmo < 0 || ps < tmo))
            tmo = ps;
        if (tmo < 0 || tmo > 200)
            tmo = 200; /* setup and kill deadlines */
        int rc = poll(pfd, n, tmo);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "pmixrun: poll failed: %s\n", strerror(errno));
            break;
        }
        for (nfds_t i = 0; i < n; i++) {
            if (pfd[i].revents == 0)
                continue;
            if (who[i] == -3) {
                handle_signals(j);
            } else {
                tl_link *l = &ns->d[who[i]].link;
                rctx c = {ns, who[i]};
                if (pfd[i].revents & POLLOUT)
                    tl_flush(l);
                if ((pfd[i].revents & ~POLLOUT) != 0 && tl_read(l, on_frame, &c) != 0)
                    tl_link_close(l); /* its exit is reaped and judged */
            }
        }
    }
    free(pfd);
    free(who);
}

int nodes_run(job *j)
{
    nodes ns = {.j = j, .k = j->nnodes};
    j->nodes = &ns;
    char *path = NULL;
    bool failed = true;
    j->timeout_at = now_s() + j->timeout;
    if (check_daemon_env() != 0)
        return PMIXRUN_EXIT_USAGE;
    if (pubsub_start(j) != 0)
        return 1;
    ns.d = calloc((size_t)ns.k, sizeof *ns.d);
    path = pmixd_path();
    if (ns.d == NULL || path == NULL || make_map(j) != 0) {
        fprintf(stderr, "pmixrun: out of memory\n");
        goto out;
    }
    for (int i = 0; i < ns.k; i++)
        ns.d[i].link.fd = -1;
    if (access(path, X_OK) != 0) {
        fprintf(stderr, "pmixrun: cannot run the node daemon %s: %s\n", path, strerror(errno));
        goto out;
    }
    for (int i = 0; i < ns.k; i++) {
        ns.d[i].pid = start_daemon(j, path, i, &ns.d[i].link);
        if (ns.d[i].pid < 0) {
            fprintf(stderr, "pmixrun: cannot start a daemon: %s\n", strerror(errno));
            end_job(j, END_LAUNCH, 1);
            break;
        }
    }
    loop(&ns);
    failed = false;
out:;
    int status = failed ? 1 : final_status(j);
    if (status == 0 && ns.daemon_failed)
        status = 1;
    for (int i = 0; ns.d != NULL && i < ns.k; i++) {
        if (ns.d[i].pid > 0 && !ns.d[i].reaped) {
            kill(-ns.d[i].pid, SIGKILL);
            waitpid(ns.d[i].pid, NULL, 0);
        }
        tl_link_close(&ns.d[i].link);
    }
    pubsub_stop(j); /* its answers go to the links, closed now: dropped */
    free(ns.d);
    free(path);
    nodes_free_names(j);
    free(j->rank_node);
    j->rank_node = NULL;
    j->nodes = NULL;
    return status;
}
