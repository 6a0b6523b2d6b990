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
 *
 * pmixrun's loop is the job's platform loop (job_platform), which also
 * serves pmixrun's own PMIx server: the job's data service and the server
 * of tools (pmixrun_ntool.c asks the daemons about their ranks for them).
 * loop() says what it waits for as a poll() array, turn() makes each
 * entry a watch and turns the loop once, and the array's revents say
 * what came.
 *
 * A system server over daemons (--system-server --nodes K) sends the
 * daemons an empty first job (no rank, flag 2 in PD_JOB): they mesh and
 * serve, every job comes from a tool's spawn (nodes_spawn_up), the loop
 * does not stop them when no rank runs, and a spawned job that loses a
 * rank ends alone (system_job_lost; docs/pmixd.md, "A system server over
 * daemons").
 *
 * Daemons on other hosts (a Slurm step inside an allocation, or a launch
 * agent such as ssh for a hostfile of host names) are not forked here:
 * they connect back to a listener of ours and prove they know the job's
 * secret first (remote_listen, on_pend_frame); their output comes through
 * srun or ssh, and a connection that ends is a lost daemon.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <px_coll.h>

#include "pmixd_proto.h"
#include "pmixrun.h"
#include "px_hostcore.h"
#include "launchtree.h"
#include "tcplink.h"
#include "vhost.h"

#define SETUP_S 15.0 /* each level of the launch tree must say hello within this */

typedef struct dnode {
    pid_t pid;
    bool reaped;
    bool hello;
    bool iof_sent, iof_on; /* PD_IOF_PULL sent to it; its PD_IOF_ON came */
    bool silent;           /* another daemon heard nothing from it (PD_LOST): killed */
    bool gone;             /* daemon_gone ran for it */
    int launcher;          /* over a launch agent: the node whose daemon starts this one (launch
                            * tree, launchtree.h), -1: pmixrun (or not over an agent) */
    uint16_t port;
    tl_link link;
} dnode;

typedef struct nodes {
    job *j;
    int k;
    dnode *d;
    int nhello;
    px_nics *nics; /* every node's NICs (PD_NICS, before its PD_HELLO) */
    int levels;    /* of the launch tree (1 unless a daemon starts others): the
                    * setup deadline is SETUP_S per level, as each level starts
                    * only once its launcher said hello */
    bool job_sent;
    int stop_level;     /* 0 none, 1 stop sent, 2 stop now sent */
    bool daemon_failed; /* one died or exited non-zero: the status is at least 1 */
    double kill_at;     /* daemons still there then get SIGKILL */

    /* The daemons of a Slurm step (j->slurm) are not our children: srun
     * is (every d[i].pid is its pid), and each daemon connects back to
     * the listener lfd and proves it knows the secret (the px_auth
     * handshake, pmixd.c, with pmixrun as node PD_AUTH_LAUNCHER) before
     * its connection becomes d[n].link. Until then it is a pending slot,
     * with the same cap, deadline and frame size cap as pmixd's. */
    bool remote;
    int lfd;
    int npend;
    tl_link *pend;
    int *pend_node;
    double *pend_until;
    uint8_t (*pend_nc)[PX_AUTH_NONCELEN], (*pend_na)[PX_AUTH_NONCELEN];
    uint8_t key[PX_AUTH_KEYLEN];
    pid_t hub; /* --isolate net: the holder of the bridge's namespace (vnet_start), or 0 */

    /* pmixrun's loop is the job's platform (job_platform), on which its
     * PMIx server serves tools (pmixrun_ntool.c). Every descriptor of
     * ours is a watch there, one slot each (ws[0] the listener, then the
     * pending slots, then the daemons' links, last pmixrun's stdin), whose callback notes what
     * is ready (got); loop() acts on it after the turn, as it would after
     * poll(). A watch goes before its descriptor closes (link_close). */
    struct wslot *ws;
    int nws;
    bool sig_ready;

    int in_acks; /* --stdin: PD_STDIN_ACKs still due for the last chunk sent */

    /* Tools' pulls of output (nodes_iof_pull): once one came, every
     * daemon is asked for its ranks' output (iof_wanted); the pulls made
     * before all of them answered wait here. */
    bool iof_wanted;
    struct iof_waiter *iof_wait;
    size_t niof_wait;
} nodes;

typedef struct wslot {
    int fd; /* what the watch watches, -1: none */
    px_posix_watch *w;
    unsigned got;
} wslot;

/* Stop watching `fd` (before it closes). */
static void unwatch_fd(nodes *ns, int fd)
{
    for (int i = 0; fd >= 0 && i < ns->nws; i++)
        if (ns->ws[i].fd == fd) {
            px_posix_watch_destroy(ns->ws[i].w);
            ns->ws[i].w = NULL;
            ns->ws[i].fd = -1;
        }
}

static void link_close(nodes *ns, tl_link *l)
{
    unwatch_fd(ns, l->fd);
    tl_link_close(l);
}

static int make_map(job *j)
{
    /* a system server's first job is empty (nodes_run) */
    j->rank_node = calloc((size_t)(j->nprocs > 0 ? j->nprocs : 1), sizeof *j->rank_node);
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
    if (j->ssh) {
        /* ssh forwards no signal (and the agent may die of it): over the
         * control connections instead */
        tl_buf b = {0};
        tl_put_u32(&b, (uint32_t)sig);
        for (int i = 0; i < ns->k; i++)
            if (ns->d[i].link.fd >= 0 && !ns->d[i].gone)
                tl_send(&ns->d[i].link, PD_SIGNAL, &b);
        tl_buf_free(&b);
        return;
    }
    for (int i = 0; i < ns->k; i++)
        if (ns->d[i].pid > 0 && !ns->d[i].reaped && (i == 0 || ns->d[i].pid != ns->d[0].pid))
            kill(ns->d[i].pid, sig); /* srun once: it forwards to every daemon */
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
        struct in_addr ia;
        /* a bare host name: a host of its own, reached by the launch agent */
        bool host = got == 1 && inet_pton(AF_INET, name, &ia) != 1;
        if (n > 0 && host != j->ssh) {
            snprintf(err, errlen,
                     "%s line %d: give every node as a host name alone, or every node with "
                     "an address, not both",
                     path, lineno);
            goto out;
        }
        j->ssh = host;
        if (got == 1)
            snprintf(addr, sizeof addr, "%.63s", host ? "127.0.0.1" : name);
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
        j->ssh = false;
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

/* In a child pmixrun forked to start daemons (pmixd, srun or the launch
 * agent): its own process group (Ctrl-C reaches pmixrun, which stops the
 * job), killed when pmixrun dies (gone already, `parent` is not its
 * parent: exit), signals unblocked for exec, stdin from `in` (-1: keep
 * it), and with `key` the job's secret in its environment only (pmixd
 * removes it at once: /proc/PID/environ is readable by its owner alone, a
 * command line by everyone). Exits on failure. */
static void daemon_child(pid_t parent, int in, const char *key)
{
    sigset_t none;

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(1);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (in >= 0 && dup2(in, 0) < 0)
        _exit(1);
    if (key != NULL && setenv(PD_KEY_ENV, key, 1) != 0)
        _exit(1);
}

/* Start node `node`'s daemon with one end of a socketpair as its control
 * connection (fd 3), inside the node's network namespace if it has one
 * (`ip netns exec NS`). Returns its pid (the link is set up) or -1. */
static pid_t start_daemon(job *j, const char *path, int node, tl_link *link, const char *key)
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
    daemon_child(me, j->devnull, key);
    if (sv[1] == 3)
        fcntl(3, F_SETFD, 0);
    else if (dup2(sv[1], 3) < 0)
        _exit(1);
    /* --isolate host or net, when asked for, goes last: pmixd acts on it itself */
    const char *iso = j->isolate == VHOST_HOST || j->isolate == VHOST_NET ? "--isolate" : NULL;
    const char *how = j->isolate == VHOST_NET ? "net" : "host";
    if (netns != NULL)
        execlp("ip", "ip", "netns", "exec", netns, path, "--parent-fd", "3", "--node", nodearg,
               "--listen", listen, iso, how, (char *)NULL);
    else
        execl(path, "pmixd", "--parent-fd", "3", "--node", nodearg, "--listen", listen, iso, how,
              (char *)NULL);
    fprintf(stderr, "pmixrun: cannot start the daemon %s%s%s: %s\n", path,
            netns != NULL ? " with ip netns exec " : "", netns != NULL ? netns : "",
            strerror(errno));
    _exit(PMIXRUN_EXIT_NOTFOUND);
}

/* ---- --isolate net: a network namespace per virtual node ---- */

/* The bridge lives in a network namespace of its own, held by a child of
 * pmixrun (the hub) that dies with it (PR_SET_PDEATHSIG): the bridge and
 * the host ends of the veth pairs go with that namespace, even when
 * pmixrun is killed, and names never collide with another job's. Each
 * daemon (pmixd --isolate net) makes its own empty namespace before it
 * says hello; pmixrun then adds a veth pair n<I>/h<I>, h<I> on the bridge,
 * n<I> moved into the daemon's namespace with the node's address
 * 10.214.I/250.I%250+1 on a /16, and the daemon's loopback up. The daemon
 * listens on every address of its namespace (0.0.0.0), and the others
 * reach it at that address. ip and nsenter do the work (iproute2,
 * util-linux). */

/* Run argv with `input` on its stdin (NULL: /dev/null); its exit status,
 * or -1. Waits for that child alone. */
static int run_tool(char *const argv[], const char *input)
{
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (dup2(in[0], 0) < 0)
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "pmixrun: --isolate net: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    if (pid > 0 && input != NULL) {
        size_t len = strlen(input), off = 0;
        while (off < len) {
            ssize_t w = write(in[1], input + off, len - off);
            if (w <= 0 && errno != EINTR)
                break;
            off += w > 0 ? (size_t)w : 0;
        }
    }
    close(in[1]);
    int st;
    if (pid < 0)
        return -1;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `ip -b -` inside the network namespace of `pid`, with `cmds`. */
static int ip_in(pid_t pid, const char *cmds)
{
    char target[16];
    snprintf(target, sizeof target, "%d", (int)pid);
    char *argv[] = {"nsenter", "-t", target, "-n", "ip", "-b", "-", NULL};
    return run_tool(argv, cmds);
}

/* Start the hub and its bridge. 0, or -1 with the reason in err. */
static int vnet_start(nodes *ns, char *err, size_t errlen)
{
    int ready[2];
    if (geteuid() != 0) {
        snprintf(err, errlen, "network namespaces need root");
        return -1;
    }
    if (pipe2(ready, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        char ok = 1;
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != me || unshare(CLONE_NEWNET) != 0)
            _exit(1);
        if (write(ready[1], &ok, 1) != 1)
            _exit(1);
        /* no hold on pmixrun's output (a reader waits for its end) */
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; null >= 0 && fd <= 2; fd++)
            dup2(null, fd);
        for (;;)
            pause(); /* holds the namespace until killed */
    }
    close(ready[1]);
    char got = 0;
    ssize_t r = pid > 0 ? read(ready[0], &got, 1) : -1;
    close(ready[0]);
    if (pid < 0 || r != 1) {
        snprintf(err, errlen, "cannot make a network namespace for the bridge%s",
                 pid < 0 ? ": fork failed" : "");
        if (pid > 0)
            waitpid(pid, NULL, 0);
        return -1;
    }
    ns->hub = pid;
    if (ip_in(pid, "link add br0 type bridge\nlink set br0 up\n") != 0) {
        snprintf(err, errlen,
                 "cannot make a bridge (ip link add type bridge; iproute2 and "
                 "nsenter needed)");
        return -1;
    }
    return 0;
}

/* Node n's daemon (pid) said hello from its empty namespace: join it to
 * the bridge. 0 or -1 (message printed). */
static int vnet_attach(nodes *ns, int n)
{
    job *j = ns->j;
    char cmds[512], addr[32];
    snprintf(addr, sizeof addr, "10.214.%d.%d", n / 250, n % 250 + 1);
    snprintf(cmds, sizeof cmds,
             "link add h%d type veth peer name n%d\nlink set h%d master br0\nlink set h%d up\n"
             "link set n%d netns %d\n",
             n, n, n, n, n, (int)ns->d[n].pid);
    if (ip_in(ns->hub, cmds) != 0) {
        fprintf(stderr, "pmixrun: --isolate net: cannot give %s a veth pair on the bridge\n",
                j->node_names[n]);
        return -1;
    }
    snprintf(cmds, sizeof cmds, "link set lo up\naddr add %s/16 dev n%d\nlink set n%d up\n", addr,
             n, n);
    char *copy = strdup(addr);
    if (copy == NULL || ip_in(ns->d[n].pid, cmds) != 0) {
        free(copy);
        fprintf(stderr, "pmixrun: --isolate net: cannot give %s its address %s\n", j->node_names[n],
                addr);
        return -1;
    }
    free(j->node_addrs[n]);
    j->node_addrs[n] = copy;
    return 0;
}

/* ---- daemons started as a Slurm step ---- */

/* Inside a Slurm allocation (SLURM_JOB_ID and SLURM_JOB_NODELIST set),
 * with no --nodes, --host or --hostfile: its nodes, in Slurm's order
 * (that of SLURM_NODEID), as the job's nodes. 1 if set up, 0 if not in an
 * allocation, -1 with the reason in err. */
int nodes_from_slurm(job *j, char *err, size_t errlen)
{
    const char *id = getenv("SLURM_JOB_ID"), *list = getenv("SLURM_JOB_NODELIST");
    if (id == NULL || *id == '\0' || list == NULL || *list == '\0')
        return 0;
    /* the shell expands the variable: nothing of it is parsed as a command */
    FILE *f = popen("scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null", "r");
    if (f == NULL) {
        snprintf(err, errlen, "cannot run scontrol: %s", strerror(errno));
        return -1;
    }
    char line[256], **names = NULL;
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0')
            continue;
        char **nn = realloc(names, (size_t)(n + 1) * sizeof *nn);
        if (nn == NULL || (nn[n] = strdup(line)) == NULL) {
            names = nn != NULL ? nn : names;
            break;
        }
        names = nn;
        n++;
    }
    int rc = pclose(f);
    if (rc != 0 || n == 0) {
        for (int i = 0; i < n; i++)
            free(names[i]);
        free(names);
        snprintf(err, errlen,
                 "inside Slurm job %s, but `scontrol show hostnames` cannot expand "
                 "SLURM_JOB_NODELIST=%s",
                 id, list);
        return -1;
    }
    j->nnodes = n;
    j->node_names = names;
    j->slurm = true;
    return 1;
}

/* The address the daemons reach this pmixrun at: $PMIXLAB_PMIXRUN_ADDR, or
 * the first of this host's on --if-include's list, or that of this host's
 * name, or 127.0.0.1. 0, or -1 when --if-include matches nothing here
 * (message printed). */
static int control_addr(const job *j, char *out, size_t len)
{
    const char *env = getenv("PMIXLAB_PMIXRUN_ADDR");
    char host[256], err[256];
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    snprintf(out, len, "127.0.0.1");
    if (env != NULL && *env != '\0') {
        snprintf(out, len, "%s", env);
        return 0;
    }
    if (j->if_include != NULL) {
        if (tl_if_address(j->if_include, out, len, err, sizeof err) == 1)
            return 0;
        fprintf(stderr, "pmixrun: --if-include %s: %s (PMIXLAB_PMIXRUN_ADDR=A gives it)\n",
                j->if_include, err);
        return -1;
    }
    if (gethostname(host, sizeof host) != 0 || getaddrinfo(host, NULL, &hints, &ai) != 0)
        return 0;
    inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, out, (socklen_t)len);
    freeaddrinfo(ai);
    return 0;
}

/* One Slurm step named pmixd, one task (a daemon) per node of the
 * allocation: `srun --ntasks-per-node=1 ... pmixd --connect ADDR:PORT
 * --node slurm` (the node id is the task's SLURM_NODEID). The secret goes
 * in srun's environment, which the step's tasks get (--export=ALL), never
 * on its command line. srun's pid, or -1. */
static pid_t start_step(job *j, const char *path, const char *addr, uint16_t port, const char *key)
{
    char nodes_arg[32], tasks_arg[32], to[96];
    snprintf(nodes_arg, sizeof nodes_arg, "--nodes=%d", j->nnodes);
    snprintf(tasks_arg, sizeof tasks_arg, "--ntasks=%d", j->nnodes);
    snprintf(to, sizeof to, "%s:%u", addr, (unsigned)port);
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    daemon_child(me, j->devnull, key);
    execlp("srun", "srun", "--job-name=pmixd", nodes_arg, tasks_arg, "--ntasks-per-node=1",
           "--mpi=none", "--export=ALL", "--kill-on-bad-exit=0", path, "--connect", to, "--node",
           "slurm", j->if_include != NULL ? "--if-include" : (char *)NULL, j->if_include,
           (char *)NULL);
    fprintf(stderr, "pmixrun: cannot start the daemons with srun: %s\n", strerror(errno));
    _exit(PMIXRUN_EXIT_NOTFOUND);
}

/* The launch tree over the agent (launchtree.h): node ids are the share's
 * indexes, so node I's launcher is found by splitting [lo, lo+n) as every
 * daemon splits its own share; ns->levels becomes the tree's depth
 * (the nodes pmixrun starts are level 1). */
static void tree_launchers(nodes *ns, int lo, int n, int fanout, int launcher, int level)
{
    for (int c = 0; c < lt_nruns(n, fanout); c++) {
        int first, count;
        lt_run(n, fanout, c, &first, &count);
        ns->d[lo + first].launcher = launcher;
        if (level > ns->levels)
            ns->levels = level;
        tree_launchers(ns, lo + first + 1, count - 1, fanout, lo + first, level + 1);
    }
}

/* Start pmixrun's part of the launch tree: one agent per run of the K
 * nodes (at most the fan-out), each given the rest of its run to start.
 * 0, or -1 (message printed). */
static int start_tree(nodes *ns, const char *path, const char *addr, uint16_t port,
                      const char *keyhex)
{
    job *j = ns->j;
    char to[96];
    int fanout = j->launch_fanout > 0 ? j->launch_fanout : LT_FANOUT_DEFAULT;
    int *ids = calloc((size_t)ns->k, sizeof *ids);
    snprintf(to, sizeof to, "%s:%u", addr, (unsigned)port);
    lt_conf c = {.agent = (char *)(j->launch_agent != NULL ? j->launch_agent : "ssh"),
                 .pmixd = (char *)path,
                 .connect = to,
                 .fanout = fanout,
                 .ifinclude = (char *)j->if_include};
    lt_share all = {.n = ns->k, .node = ids, .host = j->node_names};
    if (ids == NULL) {
        fprintf(stderr, "pmixrun: out of memory\n");
        return -1;
    }
    for (int i = 0; i < ns->k; i++)
        ids[i] = i;
    tree_launchers(ns, 0, ns->k, fanout, -1, 1);
    int rc = 0;
    for (int r = 0; r < lt_nruns(ns->k, fanout); r++) {
        int first, count;
        lt_run(ns->k, fanout, r, &first, &count);
        ns->d[first].pid = lt_start(&c, &all, first, count, keyhex);
        if (ns->d[first].pid < 0) {
            fprintf(stderr, "pmixrun: cannot start a launch agent (%s): %s\n", c.agent,
                    strerror(errno));
            rc = -1;
            break;
        }
    }
    free(ids);
    return rc;
}

static void pend_close(nodes *ns, int s)
{
    link_close(ns, &ns->pend[s]);
}

typedef struct pctx {
    nodes *ns;
    int slot;
} pctx;

/* A frame on a daemon's connection that has not proved it knows the
 * secret: its PD_PEER (answered with our challenge), then its proof, after
 * which the connection is that node's control link. */
static int on_pend_frame(void *ctx, tl_link *l, uint8_t type, const uint8_t *p, size_t len)
{
    pctx *c = ctx;
    nodes *ns = c->ns;
    int s = c->slot;
    tl_reader r = {.p = p, .left = len};
    if (ns->pend_node[s] < 0) {
        uint32_t n = tl_get_u32(&r);
        size_t nlen = 0;
        const void *nc = tl_get_bytes(&r, &nlen);
        uint8_t tag[PX_AUTH_TAGLEN];
        if (type != PD_PEER || r.bad || r.left != 0 || nc == NULL || nlen != PX_AUTH_NONCELEN ||
            n >= (uint32_t)ns->k || ns->d[n].link.fd >= 0 || ns->d[n].gone ||
            px_auth_nonce(ns->pend_na[s]) != 0 ||
            px_auth_tag(ns->key, PX_AUTH_ACCEPTOR, PD_AUTH_CONTROL, n, PD_AUTH_LAUNCHER, nc,
                        ns->pend_na[s], tag) != 0) {
            pend_close(ns, s);
            return 1;
        }
        memcpy(ns->pend_nc[s], nc, PX_AUTH_NONCELEN);
        ns->pend_node[s] = (int)n;
        tl_buf b = {0};
        tl_put_bytes(&b, ns->pend_na[s], PX_AUTH_NONCELEN);
        tl_put_bytes(&b, tag, sizeof tag);
        int rc = tl_send(l, PD_AUTH_CHAL, &b);
        tl_buf_free(&b);
        if (rc != 0) {
            pend_close(ns, s);
            return 1;
        }
        return 0;
    }
    uint32_t n = (uint32_t)ns->pend_node[s];
    size_t tlen = 0;
    const void *tag = tl_get_bytes(&r, &tlen);
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    char addr[64];
    if (type != PD_AUTH_PROOF || r.bad || r.left != 0 || tag == NULL || tlen != PX_AUTH_TAGLEN ||
        !px_auth_check(ns->key, PX_AUTH_CONNECTOR, PD_AUTH_CONTROL, n, PD_AUTH_LAUNCHER,
                       ns->pend_nc[s], ns->pend_na[s], tag) ||
        ns->d[n].link.fd >= 0 || getpeername(l->fd, (struct sockaddr *)&sa, &sl) != 0 ||
        inet_ntop(AF_INET, &sa.sin_addr, addr, sizeof addr) == NULL) {
        pend_close(ns, s);
        return 1;
    }
    /* the daemon listens on the address it reached us from (pmixd.c) */
    char *copy = strdup(addr);
    if (copy == NULL || tl_link_adopt(&ns->d[n].link, l) != 0) {
        free(copy);
        pend_close(ns, s);
        return 1;
    }
    free(ns->j->node_addrs[n]);
    ns->j->node_addrs[n] = copy;
    return 1;
}

/* Set up the listener for a Slurm step's daemons: 0 or -1. */
static int remote_listen(nodes *ns, uint16_t *port)
{
    job *j = ns->j;
    ns->npend = ns->k + PD_AUTH_PENDING_EXTRA;
    ns->pend = calloc((size_t)ns->npend, sizeof *ns->pend);
    ns->pend_node = calloc((size_t)ns->npend, sizeof *ns->pend_node);
    ns->pend_until = calloc((size_t)ns->npend, sizeof *ns->pend_until);
    ns->pend_nc = calloc((size_t)ns->npend, sizeof *ns->pend_nc);
    ns->pend_na = calloc((size_t)ns->npend, sizeof *ns->pend_na);
    if (j->node_addrs == NULL)
        j->node_addrs = calloc((size_t)ns->k, sizeof *j->node_addrs);
    if (ns->pend == NULL || ns->pend_node == NULL || ns->pend_until == NULL ||
        ns->pend_nc == NULL || ns->pend_na == NULL || j->node_addrs == NULL) {
        fprintf(stderr, "pmixrun: out of memory\n");
        return -1;
    }
    for (int s = 0; s < ns->npend; s++)
        ns->pend[s].fd = -1;
    for (int n = 0; n < ns->k; n++)
        if (j->node_addrs[n] == NULL && (j->node_addrs[n] = strdup("127.0.0.1")) == NULL)
            return -1;
    *port = 0;
    ns->lfd = tl_listen("0.0.0.0", port);
    if (ns->lfd < 0) {
        fprintf(stderr, "pmixrun: cannot listen for the daemons: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

static void remote_accept(nodes *ns)
{
    int fd = tl_accept(ns->lfd);
    for (int s = 0; fd >= 0 && s < ns->npend; s++) {
        if (ns->pend[s].fd < 0) {
            tl_link_init(&ns->pend[s], fd);
            ns->pend[s].frame_max = PD_AUTH_FRAME_MAX;
            ns->pend_node[s] = -1;
            ns->pend_until[s] = now_s() + PD_AUTH_S;
            fd = -1;
        }
    }
    if (fd >= 0)
        close(fd); /* the cap */
}

static void remote_free(nodes *ns)
{
    for (int s = 0; ns->pend != NULL && s < ns->npend; s++)
        link_close(ns, &ns->pend[s]);
    unwatch_fd(ns, ns->lfd);
    if (ns->lfd >= 0)
        close(ns->lfd);
    free(ns->pend);
    free(ns->pend_node);
    free(ns->pend_until);
    free(ns->pend_nc);
    free(ns->pend_na);
}

static void send_all(nodes *ns, uint8_t type, const tl_buf *b)
{
    for (int i = 0; i < ns->k; i++)
        if (ns->d[i].link.fd >= 0)
            tl_send(&ns->d[i].link, type, b);
}

static void send_deferred(nodes *ns);

/* ---- standard input (--stdin over daemons) ----
 *
 * The daemons of the nodes that host a target rank are told before the
 * job (PD_STDIN_OPEN), so that they start those ranks with a stdin pipe.
 * pmixrun then reads its stdin one chunk at a time and sends each to
 * them (PD_STDIN_DATA), reading the next once each answered that its
 * ranks have it (PD_STDIN_ACK); at end of file, PD_STDIN_EOF. */

static bool stdin_node(const nodes *ns, int n)
{
    const job *j = ns->j;
    if (j->stdin_to == STDIN_ALL)
        return true;
    return j->stdin_to >= 0 && j->stdin_to < j->nprocs && (int)j->rank_node[j->stdin_to] == n;
}

/* Send a PD_STDIN of `kind` to the target nodes; how many got it. */
static int stdin_send(nodes *ns, uint8_t kind, const void *data, size_t len)
{
    int sent = 0;
    for (int n = 0; n < ns->k; n++) {
        if (!stdin_node(ns, n) || ns->d[n].link.fd < 0)
            continue;
        tl_buf b = {0};
        tl_put_u8(&b, kind);
        if (kind == PD_STDIN_OPEN)
            tl_put_u32(&b, ns->j->stdin_to == STDIN_ALL ? PD_STDIN_ALL : (uint32_t)ns->j->stdin_to);
        else if (kind == PD_STDIN_DATA)
            tl_put_bytes(&b, data, len);
        tl_send(&ns->d[n].link, PD_STDIN, &b);
        tl_buf_free(&b);
        sent++;
    }
    return sent;
}

static void stdin_read(nodes *ns)
{
    job *j = ns->j;
    char buf[65536];
    ssize_t got = read(STDIN_FILENO, buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (got <= 0) { /* end of file, or a terminal we may not read */
        stdin_send(ns, PD_STDIN_EOF, NULL, 0);
        j->in_open = false;
        return;
    }
    ns->in_acks = stdin_send(ns, PD_STDIN_DATA, buf, (size_t)got);
}

/* ---- output for tools' pulls (PD_IOF_PULL, PD_IOF) ----
 *
 * A daemon writes its ranks' output to its own stdout and stderr; once a
 * tool pulled output at pmixrun, every daemon also sends each piece to
 * pmixrun (PD_IOF), which offers it to its server as pmixrun_iof.c does
 * on one node, so the same pulls (channels, ranks, tags) take it. The
 * daemons are asked before the job starts when the pull came earlier, at
 * once when it came later; the pull is answered when each daemon said
 * that its output now comes (PD_IOF_ON) or is gone, so output made after
 * a pull's answer reaches it; at the latest after IOF_PULL_S (a daemon
 * stopped or still starting), when what such a daemon's ranks write
 * before it reads PD_IOF_PULL does not reach the pull. */

#define IOF_PULL_S 3.0 /* a pull waits at most this for the daemons' PD_IOF_ON */

typedef struct iof_waiter {
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
    double until; /* answered then at the latest */
} iof_waiter;

static void iof_pull_send(nodes *ns, int n)
{
    if (ns->d[n].iof_sent || ns->d[n].link.fd < 0)
        return;
    tl_buf b = {0};
    tl_send(&ns->d[n].link, PD_IOF_PULL, &b);
    tl_buf_free(&b);
    ns->d[n].iof_sent = true;
}

/* Every daemon forwards output or cannot any more (its link is closed). */
static bool iof_all_on(const nodes *ns)
{
    if (!ns->job_sent && ns->j->reason == END_NONE)
        return false; /* the daemons hear of it with the job */
    for (int n = 0; n < ns->k; n++)
        if (ns->d[n].link.fd >= 0 && !ns->d[n].iof_on)
            return false;
    return true;
}

/* Answer the waiting pulls if their time came, or with `force` (the end):
 * PMIX_SUCCESS (the daemons that are left forward output). */
static void iof_answer(nodes *ns, bool force)
{
    if (ns->niof_wait == 0 || (!force && !iof_all_on(ns)))
        return;
    iof_waiter *w = ns->iof_wait;
    size_t n = ns->niof_wait;
    ns->iof_wait = NULL;
    ns->niof_wait = 0;
    px_posix_ops()->lock(ns->j->plat);
    for (size_t i = 0; i < n; i++)
        w[i].cbfunc(PMIX_SUCCESS, w[i].cbdata);
    px_posix_ops()->unlock(ns->j->plat);
    free(w);
}

pmix_status_t nodes_iof_pull(job *j, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    nodes *ns = j->nodes;

    ns->iof_wanted = true;
    for (int n = 0; ns->job_sent && n < ns->k; n++)
        iof_pull_send(ns, n);
    if (iof_all_on(ns) && ns->niof_wait == 0)
        return PMIX_OPERATION_SUCCEEDED;
    if (cbfunc == NULL)
        return PMIX_OPERATION_SUCCEEDED; /* nobody to tell later */
    iof_waiter *w = realloc(ns->iof_wait, (ns->niof_wait + 1) * sizeof *w);
    if (w == NULL)
        return PMIX_ERR_NOMEM;
    ns->iof_wait = w;
    w[ns->niof_wait++] = (iof_waiter){cbfunc, cbdata, now_s() + IOF_PULL_S};
    return PMIX_SUCCESS;
}

/* The deadline of the pulls that wait (a daemon stopped, or slow to
 * start): they are answered anyway, and that daemon's output comes once
 * it reads PD_IOF_PULL. */
static void iof_tick(nodes *ns)
{
    if (ns->niof_wait > 0 && now_s() >= ns->iof_wait[0].until)
        iof_answer(ns, true);
}

/* A spawned job's output from a node other than its spawner's (whose
 * daemon delivers its own ranks' output itself): to the spawner's daemon,
 * or held until the spawner has its answer (spawn_fwd_flush), so that it
 * reaches the spawner's subscription (PMIX_FWD_STDOUT...). */
static void spawn_fwd(nodes *ns, job *c, int node, uint32_t channel, const uint8_t *p, size_t len)
{
    if ((c->fwd_channels & channel) == 0 || node == c->spawn_from || c->spawn_failed ||
        c->spawn_from < 0 || c->spawn_from >= ns->k)
        return;
    if (c->spawn_answered) {
        tl_buf b = {0};
        tl_put_raw(&b, p, len);
        if (ns->d[c->spawn_from].link.fd >= 0)
            tl_send(&ns->d[c->spawn_from].link, PD_IOF, &b);
        tl_buf_free(&b);
        return;
    }
    struct fwd_piece *h = realloc(c->fwd_held, (c->nfwd_held + 1) * sizeof *h);
    uint8_t *copy = malloc(len);
    if (h == NULL || copy == NULL) {
        free(copy);
        if (h != NULL)
            c->fwd_held = h;
        return; /* out of memory: this piece is not forwarded */
    }
    memcpy(copy, p, len);
    c->fwd_held = h;
    c->fwd_held[c->nfwd_held++] = (struct fwd_piece){copy, len};
}

/* The spawner of `c` has its answer: what was held goes to it now. */
static void spawn_fwd_flush(nodes *ns, job *c)
{
    int to = c->spawn_from;
    for (size_t i = 0; !c->spawn_failed && to >= 0 && to < ns->k && i < c->nfwd_held; i++) {
        tl_buf b = {0};
        tl_put_raw(&b, c->fwd_held[i].p, c->fwd_held[i].len);
        if (ns->d[to].link.fd >= 0)
            tl_send(&ns->d[to].link, PD_IOF, &b);
        tl_buf_free(&b);
    }
    spawn_fwd_drop(c);
}

/* A PD_IOF from daemon `node` (payload p, len). */
static void got_iof(nodes *ns, int node, const uint8_t *p, size_t len)
{
    job *j = ns->j;
    tl_reader rd = {.p = p, .left = len}, *r = &rd;
    uint8_t kind = tl_get_u8(r);

    if (r->bad)
        return;
    if (kind == PD_IOF_ON) {
        ns->d[node].iof_on = true;
        iof_answer(ns, false);
        return;
    }
    if (kind != PD_IOF_DATA)
        return;
    uint32_t channel = 0;
    char *nsp = iof_piece_deliver(r, j->srv, j->plat, &channel);
    for (job *c = j->children; nsp != NULL && c != NULL; c = c->next_child)
        if (PMIx_Check_nspace(c->nspace, nsp))
            spawn_fwd(ns, c, node, channel, p, len);
    free(nsp);
}

static void send_job(nodes *ns)
{
    job *j = ns->j;
    tl_buf b = {0};
    /* the planes from every node's NICs, now that all of them came */
    if (net_planes(j, ns->nics) != 0) {
        end_job(j, END_LAUNCH, 1);
        return;
    }
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
    net_write(j, &b);
    /* flags: 1 stop in PMIx_Init (--stop-in-init), 2 a system server's
     * empty first job (its spawned jobs end alone: pmixd_spawn.c) */
    tl_put_u8(&b, (j->stop_in_init ? 1 : 0) | (j->system_server ? 2 : 0));
    if (j->in_open)
        stdin_send(ns, PD_STDIN_OPEN, NULL, 0);
    for (int n = 0; ns->iof_wanted && n < ns->k; n++)
        iof_pull_send(ns, n); /* a tool pulled before the job started */
    send_all(ns, PD_JOB, &b);
    tl_buf_free(&b);
    ns->job_sent = true;
    j->nstarted = j->nprocs; /* from now on their ends come as reports */
    rndz_launched(j);
    if (j->system_server)
        fprintf(stderr, "pmixrun: system server %s ready at %s (%d nodes)\n", j->nspace, j->uri,
                j->nnodes);
    send_deferred(ns);
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

/* An event pmixrun raises itself, about `rank` (-1: the job) of namespace
 * `nspace`, to every daemon but `except`, for the clients of that
 * namespace. */
static void raise_event_ns(nodes *ns, int except, const char *nspace, pmix_status_t status,
                           int rank, const pmix_info_t *info, size_t ninfo)
{
    tl_buf b = {0};
    pmix_proc_t src;
    PMIx_Load_procid(&src, nspace, rank >= 0 ? (pmix_rank_t)rank : PMIX_RANK_WILDCARD);
    if (ns->stop_level == 0 &&
        events_pack(&b, status, &src, PMIX_RANGE_NAMESPACE, info, ninfo) == 0)
        relay_event(ns, except, b.data, b.len);
    tl_buf_free(&b);
}

/* The same about the first job. */
static void raise_event(nodes *ns, int except, pmix_status_t status, int rank,
                        const pmix_info_t *info, size_t ninfo)
{
    raise_event_ns(ns, except, ns->j->nspace, status, rank, info, ninfo);
}

int nodes_send(job *j, int node, uint8_t type, const tl_buf *b)
{
    nodes *ns = j->nodes;
    if (ns == NULL || node < 0 || node >= ns->k || !ns->job_sent || ns->stop_level > 0 ||
        ns->d[node].gone || ns->d[node].link.fd < 0)
        return -1;
    return tl_send(&ns->d[node].link, type, b) == 0 ? 0 : -1;
}

void nodes_raise(job *j, pmix_status_t status, const pmix_info_t *info, size_t ninfo)
{
    if (j->nodes != NULL)
        raise_event(j->nodes, -1, status, -1, info, ninfo);
}

void nodes_raise_ns(job *j, const char *nspace, pmix_status_t status, const pmix_info_t *info,
                    size_t ninfo)
{
    if (j->nodes != NULL)
        raise_event_ns(j->nodes, -1, nspace, status, -1, info, ninfo);
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

/* pmixrun's own server's job control (a tool's PMIx_Job_control kill or
 * signal; job.jctrl_up): to every daemon, each signals those it runs. */
static pmix_status_t tool_jctrl(void *ctx, int sig, const uint32_t *ranks, size_t n)
{
    nodes *ns = ctx;
    tl_buf b = {0};
    if (ns->stop_level > 0 || !ns->job_sent)
        return PMIX_ERR_NOT_AVAILABLE;
    jctrl_pack(&b, sig, ranks, n);
    for (int i = 0; i < ns->k; i++)
        if (ns->d[i].link.fd >= 0 && !ns->d[i].reaped)
            tl_send(&ns->d[i].link, PD_JCTRL, &b);
    tl_buf_free(&b);
    return PMIX_SUCCESS;
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

static void daemon_gone(nodes *ns, int n, int wstatus, const char *lost_how);

/* Daemon `by` heard nothing from another for a while (its heartbeat,
 * pmixd_proto.h): that daemon is stopped, hung or cut off. It is killed,
 * so that its ranks go with it; its end (daemon_gone) names them and ends
 * the job. */
static void got_lost(nodes *ns, int by, tl_reader *r)
{
    uint32_t n = tl_get_u32(r), ms = tl_get_u32(r);
    if (r->bad || n >= (uint32_t)ns->k || (int)n == by || ns->d[n].silent || ns->d[n].reaped ||
        (ns->d[n].pid <= 0 && ns->d[n].launcher < 0))
        return;
    ns->d[n].silent = true;
    if (ns->remote) {
        /* not ours to kill: the others count it lost, so do we */
        fprintf(stderr,
                "pmixrun: the daemon of %s heard nothing from the daemon of %s for %.1f s\n",
                ns->j->node_names[by], ns->j->node_names[n], ms / 1000.0);
        daemon_gone(ns, (int)n, 0, "went silent");
        return;
    }
    fprintf(stderr,
            "pmixrun: the daemon of %s heard nothing from the daemon of %s (pid %d) for %.1f s: "
            "stopped, hung or cut off; killing it\n",
            ns->j->node_names[by], ns->j->node_names[n], (int)ns->d[n].pid, ms / 1000.0);
    kill(-ns->d[n].pid, SIGKILL); /* its group, as at the end of a job */
}

/* ---- spawns (pmixd_spawn.c, pmixrun_spawn.c spawn_plan) ---- */

static void spawn_answer(nodes *ns, int node, uint32_t id, pmix_status_t status, const char *nsp)
{
    tl_buf b = {0};
    tl_put_u8(&b, 1);
    tl_put_u32(&b, id);
    tl_put_u32(&b, (uint32_t)status);
    tl_put_str(&b, nsp);
    if (node >= 0 && node < ns->k && ns->d[node].link.fd >= 0)
        tl_send(&ns->d[node].link, PD_SPAWN_REP, &b);
    tl_buf_free(&b);
}

/* Unpack a PD_SPAWN's request (pmixd_spawn.c): PMIX_SUCCESS and what the
 * caller frees, or an error. */
static pmix_status_t spawn_unpack(const void *p, size_t n, pmix_proc_t *proc, pmix_info_t **info,
                                  uint32_t *ninfo, pmix_app_t **apps, uint32_t *napps)
{
    pmix_data_buffer_t db;
    pmix_byte_object_t bo = {0};
    int32_t cnt = 1;
    pmix_status_t rc;

    *info = NULL;
    *apps = NULL;
    *ninfo = *napps = 0;
    if ((bo.bytes = malloc(n > 0 ? n : 1)) == NULL)
        return PMIX_ERR_NOMEM;
    memcpy(bo.bytes, p, n);
    bo.size = n;
    PMIx_Data_buffer_construct(&db);
    PMIx_Data_load(&db, &bo);
    rc = PMIx_Data_unpack(NULL, &db, proc, &cnt, PMIX_PROC);
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &db, ninfo, &cnt, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && *ninfo > n)
        rc = PMIX_ERR_UNPACK_FAILURE;
    if (rc == PMIX_SUCCESS && *ninfo > 0) {
        if ((*info = PMIx_Info_create(*ninfo)) == NULL)
            rc = PMIX_ERR_NOMEM;
        else if ((cnt = (int32_t)*ninfo))
            rc = PMIx_Data_unpack(NULL, &db, *info, &cnt, PMIX_INFO);
    }
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &db, napps, &cnt, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && (*napps == 0 || *napps > n))
        rc = PMIX_ERR_UNPACK_FAILURE;
    if (rc == PMIX_SUCCESS) {
        if ((*apps = PMIx_App_create(*napps)) == NULL)
            rc = PMIX_ERR_NOMEM;
        else if ((cnt = (int32_t)*napps))
            rc = PMIx_Data_unpack(NULL, &db, *apps, &cnt, PMIX_APP);
    }
    PMIx_Data_buffer_destruct(&db);
    return rc;
}

/* The new job to every daemon (pmixd_proto.h, PD_SPAWN_JOB). */
static void send_spawn_job(nodes *ns, job *c)
{
    pmix_data_buffer_t db;
    pmix_byte_object_t bo = {0};
    uint32_t n = (uint32_t)c->nextra;
    tl_buf b = {0};

    PMIx_Data_buffer_construct(&db);
    PMIx_Data_pack(NULL, &db, &n, 1, PMIX_UINT32);
    PMIx_Data_pack(NULL, &db, c->extra_info, (int32_t)n, PMIX_INFO);
    PMIx_Data_unload(&db, &bo);
    PMIx_Data_buffer_destruct(&db);
    tl_put_u32(&b, (uint32_t)c->spawn_no);
    tl_put_str(&b, c->nspace);
    tl_put_u32(&b, (uint32_t)c->nprocs);
    for (int r = 0; r < c->nprocs; r++)
        tl_put_u32(&b, c->rank_node[r]);
    tl_put_u8(&b, c->stop_in_init);
    tl_put_bytes(&b, bo.bytes, bo.size);
    apps_write(c, &b);
    PMIx_Byte_object_destruct(&bo);
    c->spawn_acks = 0;
    for (int i = 0; i < ns->k; i++)
        if (ns->d[i].link.fd >= 0 && !ns->d[i].gone &&
            tl_send(&ns->d[i].link, PD_SPAWN_JOB, &b) == 0)
            c->spawn_acks--; /* counts up to 0 as the daemons answer */
    tl_buf_free(&b);
}

/* Answer the requestor of spawned job `c` (not the cospawned half of a
 * pair): its daemon, or the tool on pmixrun's own server. */
static void answer_spawn(nodes *ns, job *c, pmix_status_t st)
{
    const char *nsp = st == PMIX_SUCCESS ? c->nspace : "";
    if (c->spawn_from >= 0) {
        spawn_answer(ns, c->spawn_from, c->spawn_id, st, nsp);
    } else if (c->spawn_cb != NULL) {
        pmix_spawn_cbfunc_t cb = c->spawn_cb;
        c->spawn_cb = NULL;
        px_posix_ops()->lock(ns->j->plat); /* outside a callback of the loop: take it */
        cb(st, (char *)nsp, c->spawn_cbdata);
        px_posix_ops()->unlock(ns->j->plat);
    }
}

/* Start a planned job (and the job of its cospawned apps) over the
 * daemons: linked to the first job, registered with pmixrun's server for
 * its tools, sent to every daemon. False if no daemon took it (the job is
 * then failed; nothing was answered). */
static bool start_planned(nodes *ns, job *c, int node, uint32_t id)
{
    job *j = ns->j;
    bool sent = true;

    for (job *x = c; x != NULL; x = x == c ? c->co : NULL) {
        x->spawn_from = node;
        x->spawn_id = id;
        x->spawn_status = PMIX_SUCCESS;
        j->nspawned = x->spawn_no;
        x->next_child = j->children;
        j->children = x;
        x->nstarted = x->nprocs; /* from now on their ends come as reports */
        if (job_register_view(x) != 0)
            fprintf(stderr, "pmixrun: %s: its tools cannot read its job data\n", x->nspace);
        if (!ns->job_sent) { /* the daemons are not all up yet: after PD_JOB */
            x->spawn_deferred = true;
            continue;
        }
        for (int i = 0; x->fwd_channels != 0 && i < ns->k; i++)
            iof_pull_send(ns, i); /* the daemons send its output before they start it */
        send_spawn_job(ns, x);
        if (x->spawn_acks == 0) /* no daemon to take it */
            sent = false;
    }
    if (!sent)
        for (job *x = c; x != NULL; x = x == c ? c->co : NULL)
            x->spawn_answered = x->spawn_failed = true;
    return sent;
}

/* Send the spawned jobs a tool asked for before the daemons had the
 * first job (start_planned), now that they have it; one no daemon takes
 * fails at once. */
static void send_deferred(nodes *ns)
{
    for (job *c = ns->j->children; c != NULL; c = c->next_child) {
        if (!c->spawn_deferred)
            continue;
        c->spawn_deferred = false;
        send_spawn_job(ns, c);
        if (c->spawn_acks < 0)
            continue;
        job *m = c->co_daemons ? c->co : c;
        for (job *x = m; x != NULL; x = x == m ? m->co : NULL)
            x->spawn_answered = x->spawn_failed = true;
        answer_spawn(ns, m, PMIX_ERR_JOB_FAILED_TO_LAUNCH); /* once: the callback goes */
    }
}

/* A tool's PMIx_Spawn on pmixrun's own server: planned and sent as a
 * daemon's is, answered through the server's callback (answer_spawn).
 * One that comes while the daemons are starting waits for them. */
static pmix_status_t nodes_spawn_up(void *hctx, const pmix_proc_t *proc,
                                    const pmix_info_t job_info[], size_t ninfo,
                                    const pmix_app_t apps[], size_t napps,
                                    pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx, *c = NULL;
    nodes *ns = j->nodes;
    pmix_status_t rc;

    if (ns->stop_level > 0 || j->reason != END_NONE)
        return PMIX_ERR_JOB_TERMINATED;
    if ((rc = spawn_plan(j, proc, job_info, ninfo, apps, napps, &c)) != PMIX_SUCCESS)
        return rc;
    c->spawn_cb = cbfunc;
    c->spawn_cbdata = cbdata;
    if (!start_planned(ns, c, -1, 0)) {
        c->spawn_cb = NULL; /* an error returned: the callback is not called */
        return PMIX_ERR_JOB_FAILED_TO_LAUNCH;
    }
    return PMIX_SUCCESS;
}

/* The PMIX_FWD_* directives of a spawn as PMIX_FWD_*_CHANNEL bits. */
static unsigned fwd_channels(const pmix_info_t *info, size_t ninfo)
{
    static const struct {
        const char *key;
        unsigned ch;
    } keys[] = {{PMIX_FWD_STDOUT, PMIX_FWD_STDOUT_CHANNEL},
                {PMIX_FWD_STDERR, PMIX_FWD_STDERR_CHANNEL},
                {PMIX_FWD_STDDIAG, PMIX_FWD_STDDIAG_CHANNEL}};
    unsigned ch = 0;
    for (size_t i = 0; i < ninfo; i++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (PMIx_Check_key(info[i].key, keys[k].key) &&
                (info[i].value.type == PMIX_UNDEF ||
                 (info[i].value.type == PMIX_BOOL && info[i].value.data.flag)))
                ch |= keys[k].ch;
    return ch;
}

/* A client's PMIx_Spawn, from the daemon of `node`. */
static void got_spawn(nodes *ns, int node, const uint8_t *p, size_t len)
{
    job *j = ns->j, *c = NULL;
    tl_reader r = {.p = p, .left = len};
    uint32_t id = tl_get_u32(&r);
    size_t n = 0;
    const void *body = tl_get_bytes(&r, &n);
    pmix_proc_t proc;
    pmix_info_t *info;
    pmix_app_t *apps;
    uint32_t ninfo, napps;
    pmix_status_t rc;

    if (r.bad || body == NULL)
        return;
    rc = spawn_unpack(body, n, &proc, &info, &ninfo, &apps, &napps);
    if (rc == PMIX_SUCCESS && (ns->stop_level > 0 || !ns->job_sent))
        rc = PMIX_ERR_JOB_TERMINATED;
    if (rc == PMIX_SUCCESS)
        rc = spawn_plan(j, &proc, info, ninfo, apps, napps, &c);
    if (rc == PMIX_SUCCESS)
        c->fwd_channels = fwd_channels(info, ninfo);
    PMIx_Info_free(info, ninfo);
    PMIx_App_free(apps, napps);
    if (rc != PMIX_SUCCESS) {
        spawn_answer(ns, node, id, rc, "");
        return;
    }
    if (!start_planned(ns, c, node, id))
        spawn_answer(ns, node, id, PMIX_ERR_JOB_FAILED_TO_LAUNCH, "");
}

static job *child_no(job *j, uint32_t no)
{
    for (job *c = j->children; c != NULL; c = c->next_child)
        if ((uint32_t)c->spawn_no == no)
            return c;
    return NULL;
}

/* A system server's job `c` lost rank `p` (killed, failed before PMIx,
 * or gone without PMIx_Finalize; pid its pid on its node): as on one node
 * (pmixrun_spawn.c, system_job_failed), that job alone ends: every daemon
 * sends SIGTERM to its ranks there (PD_SPAWN_REP 3 with the signal), and
 * the server and its other jobs go on. */
static void system_job_lost(nodes *ns, job *c, const rank_proc *p, int pid, bool connected)
{
    fprintf(stderr, "pmixrun: system server: rank %d (pid %d) of %s %s %d%s; stopping that job\n",
            p->rank, pid, c->nspace, p->signaled ? "was killed by signal" : "exited with",
            p->signaled ? p->code - 128 : p->code,
            p->signaled ? ""
            : connected ? " without calling PMIx_Finalize"
                        : " before connecting to PMIx");
    c->sys_stopping = true;
    tl_buf b = {0};
    tl_put_u8(&b, 3);
    tl_put_str(&b, c->nspace);
    tl_put_u32(&b, SIGTERM);
    send_all(ns, PD_SPAWN_REP, &b);
    tl_buf_free(&b);
}

/* A daemon's news of a spawned job: its ranks there started, or one ended. */
static void got_spawn_state(nodes *ns, tl_reader *r)
{
    job *j = ns->j;
    job *c = child_no(j, tl_get_u32(r));
    uint8_t what = tl_get_u8(r);
    if (r->bad || c == NULL)
        return;
    if (what == 1) {
        pmix_status_t st = (pmix_status_t)tl_get_u32(r);
        if (r->bad || c->spawn_answered)
            return;
        if (st != PMIX_SUCCESS && c->spawn_status == PMIX_SUCCESS)
            c->spawn_status = st;
        if (++c->spawn_acks < 0)
            return; /* more daemons to hear from */
        c->spawn_answered = true;
        job *m = c->co_daemons ? c->co : c; /* the job the requestor asked for */
        if (m->co != NULL && !(m->spawn_answered && m->co->spawn_answered))
            return; /* its other half has yet to start */
        st = m->spawn_status != PMIX_SUCCESS ? m->spawn_status
             : m->co != NULL                 ? m->co->spawn_status
                                             : PMIX_SUCCESS;
        for (job *x = m; st != PMIX_SUCCESS && x != NULL; x = x == m ? m->co : NULL) {
            fprintf(stderr, "pmixrun: spawn of %s failed: %s\n", x->nspace,
                    PMIx_Error_string(x->spawn_status != PMIX_SUCCESS ? x->spawn_status : st));
            x->spawn_failed = true;
            tl_buf b = {0};
            tl_put_u8(&b, 3);
            tl_put_str(&b, x->nspace);
            send_all(ns, PD_SPAWN_REP, &b); /* its ranks that started go */
            tl_buf_free(&b);
        }
        answer_spawn(ns, m, st);
        spawn_fwd_flush(ns, m);
        if (m->co != NULL)
            spawn_fwd_flush(ns, m->co);
        return;
    }
    uint32_t rank = tl_get_u32(r), pid = tl_get_u32(r), code = tl_get_u32(r);
    uint8_t flags = tl_get_u8(r);
    if (what != 2 || r->bad || rank >= (uint32_t)c->nprocs || c->ranks[rank].reaped)
        return;
    rank_proc *p = &c->ranks[rank];
    p->reaped = true;
    c->nreaped++;
    p->code = (int)code;
    p->signaled = (flags & PD_EXIT_SIGNALED) != 0;
    p->stopped_by_us = (flags & PD_EXIT_STOPPED) != 0;
    bool connected = (flags & PD_EXIT_CONNECTED) != 0, finalized = (flags & PD_EXIT_FINALIZED) != 0;
    /* As for a rank of the first job (got_exit): its own node's server told
     * its clients; the other nodes' clients of its namespace hear it from
     * here, before the job-end event that rank_judge may raise. */
    if (connected && !finalized && !p->stopped_by_us && !c->spawn_failed && c->rank_node != NULL)
        raise_event_ns(ns, (int)c->rank_node[rank], c->nspace, PMIX_ERR_PROC_TERM_WO_SYNC,
                       (int)rank, NULL, 0);
    bool died = !p->stopped_by_us && j->reason == END_NONE &&
                (p->signaled || (connected && !finalized) || (p->code != 0 && !connected));
    if (!c->spawn_failed && !(flags & PD_EXIT_NOLAUNCH) && j->system_server) {
        if (died && !c->sys_stopping)
            system_job_lost(ns, c, p, (int)pid, connected);
    } else if (!c->spawn_failed && !(flags & PD_EXIT_NOLAUNCH)) {
        if (died)
            fprintf(stderr, "pmixrun: the rank below is rank %d of the spawned job %s\n", p->rank,
                    c->nspace);
        rank_judge(j, p, (int)pid, connected, finalized);
    }
    if (c->nreaped < c->nstarted)
        return;
    c->spawn_ended = true;
    if (c->notify_completion && !c->spawn_failed && c->spawn_from < 0) { /* a tool's */
        int worst = 0;
        for (int i = 0; i < c->nprocs; i++)
            if (c->ranks[i].code > worst)
                worst = c->ranks[i].code;
        px_posix_ops()->lock(j->plat);
        spawn_notify_end(j, c->nspace, &c->spawner, worst);
        px_posix_ops()->unlock(j->plat);
    } else if (c->notify_completion && !c->spawn_failed && c->spawn_from >= 0 &&
               c->spawn_from < ns->k && ns->d[c->spawn_from].link.fd >= 0) {
        int worst = 0;
        for (int i = 0; i < c->nprocs; i++)
            if (c->ranks[i].code > worst)
                worst = c->ranks[i].code;
        tl_buf b = {0};
        tl_put_u8(&b, 2);
        tl_put_str(&b, c->nspace);
        tl_put_str(&b, c->spawner.nspace);
        tl_put_u32(&b, c->spawner.rank);
        tl_put_u32(&b, (uint32_t)worst);
        tl_send(&ns->d[c->spawn_from].link, PD_SPAWN_REP, &b);
        tl_buf_free(&b);
    }
}

typedef struct rctx {
    nodes *ns;
    int node;
} rctx;

/* PD_NICS from node's daemon: 0, or -1 for a malformed frame. */
static int got_nics(nodes *ns, int node, tl_reader *r)
{
    px_nics *n = &ns->nics[node];
    uint8_t fabric = tl_get_u8(r);
    uint32_t count = tl_get_u32(r);

    memset(n, 0, sizeof *n);
    if (r->bad || count > PX_NET_MAX_PLANES || ns->d[node].hello)
        return -1;
    for (uint32_t i = 0; i < count; i++) {
        char *name = tl_get_str(r), *alias = tl_get_str(r);
        bool ok = name != NULL && alias != NULL && *name != '\0' &&
                  strlen(name) < sizeof n->name[0] && strlen(alias) < sizeof n->alias[0];
        if (ok) {
            snprintf(n->name[i], sizeof n->name[0], "%s", name);
            snprintf(n->alias[i], sizeof n->alias[0], "%s", alias);
        }
        free(name);
        free(alias);
        if (!ok) {
            memset(n, 0, sizeof *n);
            return -1;
        }
    }
    n->n = count;
    n->fabric = fabric != 0;
    return r->bad ? -1 : 0;
}

static int on_frame(void *ctx, tl_link *l, uint8_t type, const uint8_t *p, size_t len)
{
    rctx *c = ctx;
    nodes *ns = c->ns;
    tl_reader r = {.p = p, .left = len};
    switch (type) {
    case PD_HELLO: {
        uint32_t node = tl_get_u32(&r), port = tl_get_u32(&r);
        dnode *d = &ns->d[c->node];
        /* a daemon that connected back names the address it listens on,
         * which --if-include may have made another than its connection's */
        char *addr = r.left > 0 ? tl_get_str(&r) : NULL;
        struct in_addr a;
        if (r.bad || r.left != 0 || node != (uint32_t)c->node || d->hello || port == 0 ||
            port > 65535 || (addr != NULL && (!ns->remote || inet_pton(AF_INET, addr, &a) != 1))) {
            free(addr);
            link_close(ns, l);
            return 1;
        }
        if (addr != NULL) {
            free(ns->j->node_addrs[c->node]);
            ns->j->node_addrs[c->node] = addr;
        }
        d->hello = true;
        d->port = (uint16_t)port;
        ns->nhello++;
        if (ns->hub > 0 && vnet_attach(ns, c->node) != 0)
            end_job(ns->j, END_LAUNCH, 1);
        break;
    }
    case PD_NICS:
        if (got_nics(ns, c->node, &r) != 0) {
            link_close(ns, l);
            return 1;
        }
        break;
    case PD_EXIT: got_exit(ns, &r); break;
    case PD_ABORT: got_abort(ns, &r); break;
    case PD_LOST: got_lost(ns, c->node, &r); break;
    case PD_PUBSUB: pubsub_frame(ns->j, l, p, len); break;
    case PD_EVENT:
        relay_event(ns, c->node, p, len);
        rndz_event_packed(ns->j, p, len); /* pmixrun_rndz.c */
        break;
    case PD_JCTRL: relay_jctrl(ns, p, len); break;
    case PD_AGENT_EXIT: {
        /* the agent that daemon ran to start another's: judged as that
         * daemon's end, as pmixrun's own agents are */
        uint32_t n = tl_get_u32(&r), st = tl_get_u32(&r);
        if (!r.bad && n < (uint32_t)ns->k && ns->d[n].launcher == c->node && !ns->d[n].reaped) {
            ns->d[n].reaped = true;
            daemon_gone(ns, (int)n, (int)st, NULL);
        }
        break;
    }
    case PD_SPAWN: got_spawn(ns, c->node, p, len); break;
    case PD_SPAWN_STATE: got_spawn_state(ns, &r); break;
    case PD_TOOL_REP: ntool_reply(ns->j, c->node, p, len); break;
    case PD_IOF: got_iof(ns, c->node, p, len); break;
    case PD_STDIN_ACK:
        if (ns->in_acks > 0)
            ns->in_acks--;
        break;
    default: break;
    }
    return 0;
}

static void daemon_gone1(nodes *ns, int n, int wstatus, const char *lost_how);

/* A daemon is gone: its node's ranks that did not report are lost. A
 * daemon of a Slurm step is gone when its connection ends (`lost` says
 * how, and wstatus is not used) or when srun exits. The daemons it was to
 * start over the launch agent and that never said hello go with it. */
static void daemon_gone(nodes *ns, int n, int wstatus, const char *lost_how)
{
    bool before = ns->d[n].gone;
    daemon_gone1(ns, n, wstatus, lost_how);
    for (int i = 0; !before && i < ns->k; i++)
        if (ns->d[i].launcher == n && !ns->d[i].hello && !ns->d[i].gone)
            daemon_gone(ns, i, 0, "was never started: the daemon that was to start it is gone");
}

static void daemon_gone1(nodes *ns, int n, int wstatus, const char *lost_how)
{
    job *j = ns->j;
    dnode *d = &ns->d[n];
    rctx c = {ns, n};
    if (d->gone)
        return;
    d->gone = true;
    if (d->link.fd >= 0) {
        tl_read(&d->link, on_frame, &c); /* reports it sent before it went */
        link_close(ns, &d->link);
    }
    ntool_node_gone(j, n); /* a tool's question it will not answer */
    iof_answer(ns, false); /* a pull that waited for it */
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
    if (lost_how == NULL && WIFSIGNALED(wstatus) && !ns->remote)
        files_remove_stale(); /* it could not remove its directory */
    bool normal = lost_how != NULL
                      ? ns->stop_level > 0
                      : WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && ns->stop_level > 0;
    /* stopped as told: its ranks, if any, were never started when the job
     * was never sent (pmixrun refused it and said why) */
    if (normal && (lost == 0 || !ns->job_sent))
        return;
    char how[96];
    if (lost_how != NULL)
        snprintf(how, sizeof how, "%s", lost_how);
    else if (WIFSIGNALED(wstatus))
        snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(wstatus),
                 strsignal(WTERMSIG(wstatus)));
    else
        snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(wstatus));
    ns->daemon_failed = true;
    char pid[96];
    if (d->launcher >= 0)
        snprintf(pid, sizeof pid, "started by the daemon of %s", j->node_names[d->launcher]);
    else
        snprintf(pid, sizeof pid, "pid %d", (int)d->pid);
    fprintf(stderr, "pmixrun: the daemon of %s (%s) %s%s%s%s%s\n", j->node_names[n], pid, how,
            lost > 0 ? "; its processes are lost: rank(s) " : "", lost > 0 ? list : "",
            j->reason == END_NONE ? "; stopping the job" : "",
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
                daemon_gone(ns, i, st, NULL);
            }
        }
    }
    for (int i = 0; i < ns->k; i++)
        all =
            all && (ns->d[i].launcher >= 0 ? ns->d[i].gone : ns->d[i].reaped || ns->d[i].pid <= 0);
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

static void watch_ready(void *arg, unsigned what)
{
    ((wslot *)arg)->got |= what;
}

/* The watch slot of poll entry `who` (-4 the listener, -5 pmixrun's stdin
 * (the last slot), -100-s pending slot s, else a daemon's link). */
static int slot_of(const nodes *ns, int who)
{
    if (who == -5)
        return ns->nws - 1;
    return who == -4 ? 0 : who <= -100 ? 1 + (-100 - who) : 1 + ns->npend + who;
}

/* One turn of the job's loop, where poll(pfd, n, tmo) would be: the watches
 * follow pfd (a slot not in it stops being watched), the loop runs (the
 * server's tools are served inside it), and pfd's revents say what the
 * watches saw. 0, or -1 if a watch could not be made. */
static int turn(nodes *ns, struct pollfd *pfd, const int *who, nfds_t n, int tmo)
{
    job *j = ns->j;
    bool *seen = calloc((size_t)ns->nws, sizeof *seen);
    if (seen == NULL)
        return -1;
    for (nfds_t i = 0; i < n; i++) {
        wslot *w = &ns->ws[slot_of(ns, who[i])];
        seen[w - ns->ws] = true;
        if (w->w != NULL && w->fd != pfd[i].fd) {
            px_posix_watch_destroy(w->w);
            w->w = NULL;
        }
        w->fd = pfd[i].fd;
        if (w->w == NULL &&
            (w->w = px_posix_watch_create(j->plat, w->fd, 0, watch_ready, w)) == NULL) {
            free(seen);
            return -1;
        }
        px_posix_watch_set(w->w, ((pfd[i].events & POLLIN) ? PX_POSIX_READ : 0) |
                                     ((pfd[i].events & POLLOUT) ? PX_POSIX_WRITE : 0));
        w->got = 0;
    }
    for (int s = 0; s < ns->nws; s++)
        if (!seen[s] && ns->ws[s].w != NULL) {
            px_posix_watch_destroy(ns->ws[s].w);
            ns->ws[s].w = NULL;
            ns->ws[s].fd = -1;
        }
    free(seen);
    px_posix_run_once(j->plat, tmo < 0 ? -1.0 : tmo / 1000.0);
    for (nfds_t i = 0; i < n; i++) {
        unsigned got = ns->ws[slot_of(ns, who[i])].got;
        pfd[i].revents =
            (short)(((got & PX_POSIX_READ) ? POLLIN : 0) | ((got & PX_POSIX_WRITE) ? POLLOUT : 0));
    }
    return 0;
}

static void on_signal(void *arg, unsigned what)
{
    (void)what;
    ((nodes *)arg)->sig_ready = true;
}

static void loop(nodes *ns)
{
    job *j = ns->j;
    size_t cap = 4 + 2 * (size_t)ns->k + (size_t)ns->npend;
    struct pollfd *pfd = calloc(cap, sizeof *pfd);
    int *who = calloc(cap, sizeof *who);
    /* PMIXLAB_PMIXRUN_SETUP_S=S, a test hook, changes the time per level */
    const char *ss = getenv("PMIXLAB_PMIXRUN_SETUP_S");
    double level_s = ss != NULL && atof(ss) > 0 && atof(ss) <= 3600 ? atof(ss) : SETUP_S;
    double setup_s = level_s * (ns->levels > 1 ? ns->levels : 1);
    double setup_until = now_s() + setup_s;
    if (pfd == NULL || who == NULL) {
        fprintf(stderr, "pmixrun: out of memory\n");
        end_job(j, END_LAUNCH, 1);
    }
    for (;;) {
        bool all_gone = reap_daemons(ns);
        check_abort(j);
        handle_time(j);
        pubsub_tick(j);
        ntool_tick(j);
        iof_tick(ns);
        if (all_gone)
            break;
        if (!ns->job_sent && j->reason == END_NONE) {
            if (ns->nhello == ns->k) {
                send_job(ns);
                j->timeout_at = now_s() + j->timeout;
            } else if (now_s() > setup_until) {
                fprintf(stderr,
                        "pmixrun: only %d of %d daemons started within %g s (%g s per level of "
                        "the launch tree)\n",
                        ns->nhello, ns->k, setup_s, level_s);
                end_job(j, END_LAUNCH, 1);
            }
        }
        if (j->terminate_asked && j->reason == END_NONE)
            end_job(j, END_REQUESTED, 0); /* a tool asked the system server to end */
        if (j->reason == END_NONE && ns->job_sent && live_ranks(j) == 0 && ns->stop_level == 0 &&
            !j->system_server)
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
            /* a daemon another daemon started is not ours to kill: its
             * connection goes, on which it stops at once, and so does the
             * wait for it */
            for (int i = 0; i < ns->k; i++)
                if (ns->d[i].launcher >= 0 && !ns->d[i].gone) {
                    tl_link_close(&ns->d[i].link);
                    daemon_gone(ns, i, 0, "did not stop in time; its connection is closed");
                }
            ns->kill_at = now_s() + 5.0;
        }
        if (pfd == NULL)
            break;
        nfds_t n = 0;
        if (ns->remote && ns->lfd >= 0 && ns->nhello < ns->k && j->reason == END_NONE) {
            pfd[n] = (struct pollfd){.fd = ns->lfd, .events = POLLIN};
            who[n++] = -4;
        }
        if (j->in_open && ns->job_sent && ns->in_acks == 0 && j->reason == END_NONE) {
            pfd[n] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
            who[n++] = -5;
        }
        for (int s = 0; ns->remote && s < ns->npend; s++) {
            if (ns->pend[s].fd < 0)
                continue;
            if (now_s() >= ns->pend_until[s]) { /* the deadline for strangers */
                pend_close(ns, s);
                continue;
            }
            pfd[n] = (struct pollfd){.fd = ns->pend[s].fd, .events = POLLIN};
            if (tl_want_write(&ns->pend[s]))
                pfd[n].events |= POLLOUT;
            who[n++] = -100 - s;
        }
        for (int i = 0; i < ns->k; i++) {
            tl_link *l = &ns->d[i].link;
            if (l->fd >= 0) {
                pfd[n] = (struct pollfd){.fd = l->fd, .events = POLLIN};
                if (tl_want_write(l))
                    pfd[n].events |= POLLOUT;
                who[n++] = i;
            }
        }
        int tmo = poll_timeout_ms(j), ps = pubsub_timeout_ms(j), nt = ntool_timeout_ms(j);
        if (ps >= 0 && (tmo < 0 || ps < tmo))
            tmo = ps;
        if (nt >= 0 && (tmo < 0 || nt < tmo))
            tmo = nt;
        if (tmo < 0 || tmo > 200)
            tmo = 200; /* setup and kill deadlines */
        int rc = turn(ns, pfd, who, n, tmo);
        if (rc < 0) {
            fprintf(stderr, "pmixrun: cannot watch the daemons' connections: out of memory\n");
            end_job(j, END_LAUNCH, 1);
            break;
        }
        if (ns->sig_ready) {
            ns->sig_ready = false;
            handle_signals(j);
        }
        for (nfds_t i = 0; i < n; i++) {
            if (pfd[i].revents == 0)
                continue;
            if (who[i] == -4) {
                remote_accept(ns);
            } else if (who[i] == -5) {
                stdin_read(ns);
            } else if (who[i] <= -100) {
                int s = -100 - who[i];
                pctx pc = {ns, s};
                int claimed = ns->pend_node[s];
                if ((pfd[i].revents & POLLOUT) && tl_flush(&ns->pend[s]) != 0)
                    pend_close(ns, s);
                if (ns->pend[s].fd >= 0 && (pfd[i].revents & ~POLLOUT) != 0 &&
                    tl_read(&ns->pend[s], on_pend_frame, &pc) != 0)
                    pend_close(ns, s);
                claimed = claimed >= 0 ? claimed : ns->pend_node[s];
                if (claimed >= 0 && ns->pend[s].fd < 0 && ns->d[claimed].link.fd >= 0) {
                    /* authenticated: what came with its proof (its HELLO) */
                    rctx c = {ns, claimed};
                    ns->pend_node[s] = -1;
                    if (tl_read(&ns->d[claimed].link, on_frame, &c) != 0) {
                        link_close(ns, &ns->d[claimed].link);
                        daemon_gone(ns, claimed, 0, "closed its connection to pmixrun");
                    }
                }
            } else {
                tl_link *l = &ns->d[who[i]].link;
                rctx c = {ns, who[i]};
                if (pfd[i].revents & POLLOUT)
                    tl_flush(l);
                if ((pfd[i].revents & ~POLLOUT) != 0 && tl_read(l, on_frame, &c) != 0) {
                    link_close(ns, l); /* its exit is reaped and judged */
                    if (ns->remote)    /* ... or, not our child, judged now */
                        daemon_gone(ns, who[i], 0, "closed its connection to pmixrun");
                }
            }
        }
    }
    free(pfd);
    free(who);
}

int nodes_run(job *j)
{
    nodes ns = {.j = j, .k = j->nnodes, .remote = j->slurm || j->ssh, .lfd = -1};
    j->nodes = &ns;
    j->iof_pull = nodes_iof_pull;
    char *path = NULL;
    bool failed = true;
    uint8_t key[PX_AUTH_KEYLEN];
    char keyhex[2 * PX_AUTH_KEYLEN + 1] = "";
    j->timeout_at = now_s() + j->timeout;
    if (check_daemon_env() != 0)
        return PMIXRUN_EXIT_USAGE;
    /* pmixrun's own loop and a PMIx server with no ranks, for the job's
     * data service and for tools (pmixrun_ntool.c): before the map, so
     * that the server counts itself pmixrun's, not a daemon's */
    if (files_make_topdir(j) != 0 || job_platform(j, on_signal, &ns) != 0 ||
        job_server_start(j) != 0)
        return 1;
    ns.d = calloc((size_t)ns.k, sizeof *ns.d);
    ns.nics = calloc((size_t)ns.k, sizeof *ns.nics);
    path = pmixd_path();
    if (ns.d == NULL || ns.nics == NULL || path == NULL || make_map(j) != 0) {
        fprintf(stderr, "pmixrun: out of memory\n");
        goto out;
    }
    if (net_fit(j) != 0) /* the network's coordinates, for PD_JOB */
        goto out;
    /* the job's data for tools, as the daemons have it (a system server's
     * first job is empty: its tools see the jobs they spawn) */
    if (!j->system_server && job_register_view(j) != 0)
        goto out;
    for (int i = 0; i < ns.k; i++) {
        ns.d[i].link.fd = -1;
        ns.d[i].launcher = -1;
    }
    if (!j->system_server && rndz_start(j) != 0) /* started by a debugger: before the job */
        goto out;
    j->jctrl_up = tool_jctrl; /* a tool's PMIx_Job_control reaches the daemons */
    j->jctrl_ctx = &ns;
    j->spawn = nodes_spawn_up; /* a tool's PMIx_Spawn goes over the daemons */
    if (ntool_init(j, nodes_send) != 0) {
        fprintf(stderr, "pmixrun: out of memory\n");
        goto out;
    }
    /* The job's secret: every daemon proves it knows it to every other
     * before they trust each other's frames (pmixd.c, px_auth). */
    if (px_auth_keygen(key) != 0) {
        fprintf(stderr, "pmixrun: cannot make the job's secret (libsodium)\n");
        goto out;
    }
    px_auth_key_hex(key, keyhex);
    if (access(path, X_OK) != 0) {
        fprintf(stderr, "pmixrun: cannot run the node daemon %s: %s\n", path, strerror(errno));
        goto out;
    }
    /* Virtual nodes look like hosts where they can (vhost.h): by default
     * when pmixrun is root and the nodes are its own (no --hostfile, no srun or ssh). */
    if (j->isolate == VHOST_NET) {
        char err[256];
        if (vnet_start(&ns, err, sizeof err) != 0) {
            fprintf(stderr,
                    "pmixrun: --isolate net: %s; the virtual nodes share this machine's network "
                    "(loopback)\n",
                    err);
            j->isolate = VHOST_AUTO; /* their host name, /dev/shm and /tmp where it can */
            if (ns.hub > 0) {
                kill(ns.hub, SIGKILL);
                waitpid(ns.hub, NULL, 0);
                ns.hub = 0;
            }
        } else if ((j->node_addrs = calloc((size_t)ns.k, sizeof *j->node_addrs)) == NULL) {
            fprintf(stderr, "pmixrun: out of memory\n");
            goto out;
        } else {
            for (int i = 0; i < ns.k; i++)
                if ((j->node_addrs[i] = strdup("0.0.0.0")) == NULL) {
                    fprintf(stderr, "pmixrun: out of memory\n");
                    goto out;
                }
        }
    }
    if (j->isolate == VHOST_AUTO) {
        if (j->node_addrs != NULL || ns.remote)
            j->isolate = VHOST_NONE;
        else if (geteuid() == 0)
            j->isolate = VHOST_HOST;
        else {
            j->isolate = VHOST_NONE;
            fprintf(stderr, "pmixrun: the virtual nodes share this machine's host name, /dev/shm "
                            "and /tmp (giving each its own needs root; --isolate none says "
                            "that is meant)\n");
        }
    }
    memcpy(ns.key, key, sizeof key);
    if (ns.remote) {
        uint16_t port;
        char addr[64];
        if (remote_listen(&ns, &port) != 0)
            goto out;
        ns.nws = 1 + ns.npend + ns.k + 1; /* the last: stdin */
        ns.ws = calloc((size_t)ns.nws, sizeof *ns.ws);
        if (ns.ws == NULL) {
            fprintf(stderr, "pmixrun: out of memory\n");
            goto out;
        }
        if (control_addr(j, addr, sizeof addr) != 0)
            goto out;
        if (j->slurm) {
            pid_t pid = start_step(j, path, addr, port, keyhex);
            if (pid < 0) {
                fprintf(stderr, "pmixrun: cannot start srun: %s\n", strerror(errno));
                goto out;
            }
            for (int i = 0; i < ns.k; i++)
                ns.d[i].pid = pid;
        }
        if (j->ssh && start_tree(&ns, path, addr, port, keyhex) != 0)
            end_job(j, END_LAUNCH, 1);
    }
    if (!ns.remote) {
        ns.nws = 1 + ns.k + 1; /* the last: stdin */
        ns.ws = calloc((size_t)ns.nws, sizeof *ns.ws);
        if (ns.ws == NULL) {
            fprintf(stderr, "pmixrun: out of memory\n");
            goto out;
        }
    }
    for (int s = 0; s < ns.nws; s++)
        ns.ws[s].fd = -1;
    for (int i = 0; !ns.remote && i < ns.k; i++) {
        ns.d[i].pid = start_daemon(j, path, i, &ns.d[i].link, keyhex);
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
        link_close(&ns, &ns.d[i].link);
    }
    remote_free(&ns);
    if (ns.hub > 0) { /* the bridge and the veth pairs go with its namespace */
        kill(ns.hub, SIGKILL);
        waitpid(ns.hub, NULL, 0);
    }
    for (int s = 0; s < ns.nws; s++)
        px_posix_watch_destroy(ns.ws[s].w);
    free(ns.ws);
    ntool_fini(j);         /* answers what tools still wait for */
    iof_answer(&ns, true); /* and pulls that waited for daemons */
    explicit_bzero(ns.key, sizeof ns.key);
    pubsub_stop(j); /* its answers go to the links, closed now: dropped */
    free(ns.d);
    free(ns.nics);
    free(path);
    explicit_bzero(key, sizeof key);
    explicit_bzero(keyhex, sizeof keyhex);
    spawn_free_all(j); /* the spawned jobs borrow the node names */
    nodes_free_names(j);
    free(j->rank_node);
    j->rank_node = NULL;
    j->nodes = NULL;
    j->iof_pull = NULL;
    return status;
}
