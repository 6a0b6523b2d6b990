/*
 * pmixrun.c - start a PMIx job of N processes on this node.
 *
 *     pmixrun -n N [--timeout S] [--tag-output] [--bind-to core|none] prog [args...]
 *     pmixrun -n 2 --pset ocean ./a : -n 3 --pset ice ./b     (application contexts)
 *
 * (With --nodes K, --hostfile or --host with virtual nodes the job runs
 * over node daemons instead: pmixrun_nodes.c, which reuses the rules below
 * of how a job ends.)
 *
 * The options are mpirun's and prterun's where pmixrun has the feature
 * (usage() groups them as prterun does; docs/user-guide.md has the table);
 * what it cannot do (another host, per-rank work on the daemons) is
 * refused with a message that says so, never ignored.
 *
 * How it works. pmixrun makes a private job directory, starts the library's
 * server engine through its own interface (px_server_create with a
 * px_server_host table whose upcalls get the job as their context,
 * pmixrun_job.c), registers the job's data and its ranks, then forks the
 * ranks (pmixrun_launch.c). Everything runs on the main thread, in one
 * loop: the posix platform's, made for external progress (no progress
 * thread), which serves the clients' connections and the engine's timers
 * and watches pmixrun's own descriptors:
 *
 *   - a signalfd for SIGCHLD, the signals that end the job (below) and
 *     those forwarded to the ranks (blocked, so they arrive only there),
 *   - the ranks' stdout and stderr pipes, and pmixrun's stdin with the
 *     pipes of the ranks that read it (pmixrun_iof.c).
 *
 * run_loop turns it (px_posix_run_once) with a timeout for --timeout and
 * for the phases of stopping, and after every turn acts on what the
 * callbacks recorded: ranks that exited, a PMIx_Abort, the time.
 *
 * How a job ends. When every rank has exited on its own, pmixrun exits with
 * the highest of their exit statuses (128+N for a rank killed by signal N).
 * The job is ended early, and the remaining ranks stopped, when
 *
 *   - a rank is killed by a signal, exits (with any status) without
 *     PMIx_Finalize after it connected to the server, or exits with a
 *     non-zero status before it ever connected (its peers would wait for it
 *     forever): its peers' pending fences fail first (the library sees the
 *     connection drop; pmixrun also deregisters the rank), they get
 *     PMIXRUN_SETTLE_S seconds to notice, then the rest is stopped; exit
 *     status: the highest status among the ranks that ended by themselves,
 *     at least 1. A rank that finalized may exit with any status without
 *     ending the job, and so may a program that never uses PMIx and exits 0;
 *   - a rank calls PMIx_Abort: a message names the rank and the status,
 *     every rank is stopped at once (the caller too: PMIx_Abort is answered
 *     only once the ranks are gone, so it never returns); exit status: the
 *     abort status;
 *   - --timeout expires: exit status 124;
 *   - pmixrun gets SIGINT, SIGTERM or SIGHUP (or SIGQUIT, SIGALRM, or
 *     another signal that would kill it from outside: job_more_ending_signals):
 *     exit status 128+signal (a second signal skips the grace period).
 *
 * SIGUSR1 and SIGUSR2 do not end the job: they go to every rank's process
 * group, as mpirun forwards them (a rank that does not catch one dies of
 * it, and the job ends as above). SIGTSTP stops the ranks with SIGSTOP and
 * then pmixrun itself; SIGCONT continues them (forward_signal).
 *
 * Stopping means SIGTERM to each rank's process group, then SIGKILL after
 * PMIXRUN_GRACE_S seconds. When the ranks are gone, what they left running
 * in their process groups gets SIGTERM, and SIGKILL when pmixrun exits (at
 * most a second later; a daemon that made its own session is not touched). Ranks die with pmixrun
 * even if it is killed with SIGKILL (PR_SET_PDEATHSIG). The job directory and the cleanups that
 * ranks registered are removed on every exit path but SIGKILL.
 *
 * Exit statuses of pmixrun's own: 2 bad arguments, 127 program not found,
 * 126 program not executable, 1 anything else that kept the job from
 * starting.
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
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmixrun.h"
#include "launchtree.h"
#include "tcplink.h"
#include "vhost.h"

#define MAX_PROCS 65535 /* local ranks are 16-bit */
#define MAX_NODES 256

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: pmixrun [options] program [arguments...]\n"
            "       pmixrun [options] prog [args...] : [options] prog [args...] ...\n"
            "       pmixrun --system-server [--nodes K | --host H,... | --hostfile FILE]\n"
            "\n"
            "Start N copies of program on this node as one PMIx job. The options are\n"
            "those of mpirun and prterun where pmixrun has the feature\n"
            "(docs/user-guide.md has a table).\n"
            "\n"
            "Application contexts: a job of several programs lists them separated by ':',\n"
            "each with its own -n, --pset, -x and --wdir; they take consecutive ranks in\n"
            "that order. Every other option is the job's, wherever it is given.\n"
            "\n"
            "General:\n"
            "  -n, --np N          number of processes to start (1..%d in all; required\n"
            "                      unless one program runs and --host or --map-by ppr\n"
            "                      says how many)\n"
            "  --pset NAME         the processes of this context form the process set\n"
            "                      NAME (PMIX_PSET_NAMES; PMIx_Query_info's process-set\n"
            "                      keys list it)\n"
            "  -x VAR[=VALUE]      set VAR in the processes' environment (to VALUE, or to\n"
            "                      pmixrun's own value); repeatable\n"
            "  --wdir DIR          run the processes in DIR (a program given by a relative\n"
            "                      path is found from there too)\n"
            "  --timeout S         stop the job if it runs longer than S seconds (exit 124)\n"
            "  --allow-run-as-root accepted for mpirun's sake; pmixrun runs as root anyway\n"
            "  -h, --help          show this help\n"
            "  -V, --version       show pmixrun's version\n"
            "  --                  end of options (for a program whose name starts with '-')\n"
            "\n"
            "Mapping and binding:\n"
            "  --host LIST         the nodes, \"NAME[:SLOTS],...\": this machine (localhost or\n"
            "                      its host name), virtual nodes node0..node{K-1}, or other\n"
            "                      hosts, whose daemons the launch agent starts (as with a\n"
            "                      hostfile of host names); a name given again adds a slot.\n"
            "                      Without -n: as many processes as slots\n"
            "  --nodes K           run the job on K virtual nodes of this machine: one pmixd\n"
            "                      daemon per node, connected over loopback TCP (default 1:\n"
            "                      no daemon, pmixrun serves the processes itself)\n"
            "  --hostfile FILE     one node per line, \"NAME [ADDRESS [netns=NS]]\": the\n"
            "                      node's name, the IPv4 address its daemon listens on\n"
            "                      (default: NAME, which must then be an address) and a\n"
            "                      network namespace to start it in (a daemon on this\n"
            "                      machine); or \"NAME\" alone, a host name: its daemon is\n"
            "                      started on that host by the launch agent and connects\n"
            "                      back. With --nodes K: the first K lines\n"
            "  --launch-agent CMD  the command that starts a daemon on a host of the\n"
            "                      hostfile or --host: CMD HOST pmixd ... (default: ssh;\n"
            "                      the job's secret goes on its stdin)\n"
            "  --launch-fanout F   over the launch agent pmixrun starts at most F daemons,\n"
            "                      each of which starts its share of the rest: a tree\n"
            "                      (default 32)\n"
            "  --if-include LIST   daemons on other hosts (ssh, Slurm) listen on their\n"
            "                      first address on these interfaces or subnets\n"
            "                      (eth1,10.1.0.0/16); pmixrun gives them its own such\n"
            "                      address to connect back to (default: the address of\n"
            "                      each one's connection to pmixrun, and of this host's\n"
            "                      name)\n"
            "  --topology FILE     the network's shape: Slurm's topology.conf or a SimGrid\n"
            "                      platform file (its first cluster, or its clusters with\n"
            "                      the property pmixlab.plane: one per plane); every\n"
            "                      process gets its coordinates per plane and NIC\n"
            "                      (PMIX_NETWORK_COORDINATE...) and hier groups by\n"
            "                      switch. Without it: Slurm's own (scontrol show\n"
            "                      topology) in an allocation, else one switch\n"
            "  --isolate auto|host|net|none\n"
            "                      host: each node's daemon and processes get their own\n"
            "                      host name (the node's name), /dev/shm and /tmp (needs\n"
            "                      root); net: that and a network namespace of their own,\n"
            "                      the nodes joined by a bridge; none: they share this\n"
            "                      machine's; auto (default): host for --nodes/--host\n"
            "                      virtual nodes when root\n"
            "  --map-by slot|node|ppr:N:node|core|socket\n"
            "                      slot (default): consecutive ranks fill each node in\n"
            "                      turn; node: round robin over the nodes; ppr: N processes\n"
            "                      per node, core or socket of each node (without -n: that\n"
            "                      many)\n"
            "  --bind-to core|socket|numa|none\n"
            "                      bind each process to one core, socket or NUMA node,\n"
            "                      round robin (default none: the system places them)\n"
            "  --report-bindings   print where each process is bound, on stderr\n"
            "  --oversubscribe     allow more processes than cores on a node (the default)\n"
            "  --nooversubscribe   refuse more processes than cores (or --host slots)\n"
            "\n"
            "Input and output:\n"
            "  --tag-output        prefix every line of output with \"[rank] \"\n"
            "  --merge-stderr-to-stdout\n"
            "                      a process's stderr goes where its stdout goes\n"
            "  --output-filename DIR[:nocopy]\n"
            "                      also write each process's output to DIR/1/rank.R/stdout\n"
            "                      and stderr (R zero-padded to the digits of N; nocopy:\n"
            "                      only there)\n"
            "  --stdin all|none|RANK\n"
            "                      who reads pmixrun's standard input (default 0: rank 0;\n"
            "                      the others read /dev/null)\n"
            "\n"
            "Debugging:\n"
            "  --stop-in-init      every process waits inside PMIx_Init until a tool sends\n"
            "                      PMIX_DEBUGGER_RELEASE (PMIX_DEBUG_STOP_IN_INIT in the\n"
            "                      job data); also over daemons (--nodes)\n"
            "  PMIX_LAUNCHER_RNDZ_URI=URI (environment)\n"
            "                      started by a debugger (indirect launch): connect back\n"
            "                      to it at URI, wait for its release, take its directives\n"
            "                      (PMIX_LAUNCH_DIRECTIVES: stop in init), tell it the\n"
            "                      job's namespace (PMIX_LAUNCH_COMPLETE) and its end\n"
            "\n"
            "System server:\n"
            "  pmixrun --system-server [--nodes K | --host H,... | --hostfile FILE]\n"
            "                      run no job: be this machine's system server (the\n"
            "                      rendezvous file pmix.sys.<host> in PMIX_SYSTEM_TMPDIR,\n"
            "                      else TMPDIR, else /tmp), which tools reach with\n"
            "                      PMIX_CONNECT_TO_SYSTEM or PMIX_CONNECT_SYSTEM_FIRST;\n"
            "                      run their PMIx_Spawn jobs on this node, or over the\n"
            "                      daemons of the nodes given (with PMIX_DEBUG_STOP_IN_INIT\n"
            "                      and debugger daemons); end, stopping them, on\n"
            "                      SIGTERM, SIGINT or a tool's PMIx_Job_control with\n"
            "                      PMIX_JOB_CTRL_TERMINATE (exit status 0)\n"
            "\n"
            "Signals: SIGUSR1 and SIGUSR2 are forwarded to every process; SIGTSTP stops\n"
            "them (SIGSTOP) and pmixrun, SIGCONT continues them. SIGINT, SIGTERM, SIGHUP,\n"
            "SIGQUIT, SIGALRM and the other signals that would kill pmixrun stop the job\n"
            "(a second one kills it at once).\n"
            "A node with more processes than cores tells Open MPI to yield when idle\n"
            "(OMPI_MCA_mpi_yield_when_idle=1, unless it is set already).\n"
            "\n"
            "Environment, with --nodes (docs/user-guide.md has them all):\n"
            "  PMIXLAB_FENCE_ALGO, PMIXLAB_BARRIER_ALGO   the cross-node algorithm of\n"
            "                      collecting fences and of the others (default auto)\n"
            "  PMIXLAB_PMIXD_HEARTBEAT=BEAT,LOST   a daemon sends something every BEAT\n"
            "                      seconds; one silent for LOST seconds is counted lost and\n"
            "                      the job ends (default 1,10; off turns it off)\n"
            "\n"
            "Exit status: the highest exit status of the processes (128+N for a process\n"
            "killed by signal N); the abort status if one calls PMIx_Abort; 124 on timeout;\n"
            "128+N if pmixrun gets signal N; 2 for bad arguments; 127 if the program is\n"
            "not found, 126 if it cannot be executed; 1 if the job could not be set up.\n"
            "The job ends early, and the remaining processes are stopped (SIGTERM, then\n"
            "SIGKILL %g s later), when a process is killed by a signal, calls PMIx_Abort,\n"
            "exits without PMIx_Finalize after it initialized PMIx, or exits non-zero\n"
            "before it initialized PMIx.\n",
            MAX_PROCS, PMIXRUN_GRACE_S);
}

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "pmixrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n");
    usage(stderr);
    return PMIXRUN_EXIT_USAGE;
}

/* A refusal that names what pmixrun cannot do: no usage text after it. */
static int refuse(const char *fmt, const char *arg)
{
    fprintf(stderr, "pmixrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return PMIXRUN_EXIT_USAGE;
}

static bool is_one_of(const char *name, const char *const *names)
{
    for (; *names != NULL; names++)
        if (strcmp(name, *names) == 0)
            return true;
    return false;
}

static const char *const opt_np[] = {"-n", "-np", "--np", "--n", NULL};
static const char *const opt_wdir[] = {"--wdir", "-wdir", "--wd", "-wd", NULL};
static const char *const opt_host[] = {"--host", "-host", "-H", NULL};
static const char *const opt_valued[] = {"--timeout",
                                         "--bind-to",
                                         "--nodes",
                                         "--map-by",
                                         "--hostfile",
                                         "-hostfile",
                                         "-x",
                                         "--output-filename",
                                         "-output-filename",
                                         "--stdin",
                                         "-stdin",
                                         "--pset",
                                         "--topology",
                                         "--isolate",
                                         "--launch-agent",
                                         "--launch-fanout",
                                         "--if-include",
                                         NULL};

/* A positive integer from 1 to max, or -1. */
static long parse_count(const char *v, long max)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < 1 || n > max)
        return -1;
    return n;
}

/* True if `name` is this machine. */
static bool is_this_host(const char *name)
{
    char host[256] = "";
    if (strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0)
        return true;
    if (gethostname(host, sizeof host - 1) != 0)
        return false;
    if (strcmp(name, host) == 0)
        return true;
    char *dot = strchr(host, '.');
    size_t l = strlen(name);
    return dot != NULL && (size_t)(dot - host) == l && strncmp(name, host, l) == 0;
}

/* --host NAME[:SLOTS],...: one node if every name is this machine, the
 * virtual nodes node0..node{K-1}, each named at least once, or other hosts
 * (every name neither this machine nor nodeI): then node I is the I-th
 * name first given, started by the launch agent as a hostfile of host
 * names would be (node_names, ssh). Fills nnodes and node_slots; 0, or an
 * exit status (message printed). */
static int parse_hosts(job *j, const char *list)
{
    int slots[MAX_NODES] = {0}, k = 0, nnames = 0;
    bool local = false, virt = false, hosts = false;
    char **names = NULL; /* other hosts, in the order first named */
    char *copy = strdup(list);
    if (copy == NULL)
        return PMIXRUN_EXIT_SETUP;
    int rc = 0;
    char *save = NULL;
    for (char *h = strtok_r(copy, ",", &save); h != NULL; h = strtok_r(NULL, ",", &save)) {
        long n = 1;
        char *colon = strchr(h, ':');
        if (colon != NULL) {
            *colon = '\0';
            n = parse_count(colon + 1, MAX_PROCS);
            if (n < 0) {
                rc =
                    refuse("--host %s: the slots after ':' must be a number from 1 to 65535", list);
                break;
            }
        }
        long id = -1;
        if (is_this_host(h)) {
            local = true;
            id = 0;
        } else if (strncmp(h, "node", 4) == 0 && parse_count(h + 4, MAX_NODES) >= 0) {
            id = parse_count(h + 4, MAX_NODES);
        } else if (strcmp(h, "node0") == 0) {
            id = 0;
        }
        if (id < 0) {
            /* another host: its daemon is started by the launch agent */
            for (int i = 0; i < nnames; i++)
                if (strcmp(names[i], h) == 0)
                    id = i;
            if (id < 0) {
                char **nn =
                    nnames < MAX_NODES ? realloc(names, (size_t)(nnames + 1) * sizeof *nn) : NULL;
                if (nn == NULL || (nn[nnames] = strdup(h)) == NULL) {
                    names = nn != NULL ? nn : names;
                    rc = refuse("--host %s: too many hosts, or out of memory", list);
                    break;
                }
                names = nn;
                id = nnames++;
            }
            hosts = true;
        } else if (hosts) {
            rc = 1;
        }
        if (rc != 0 || (hosts && (local || virt))) {
            rc = refuse("--host %s: give this machine, virtual nodes node0..node{K-1} or other "
                        "hosts, not a mix",
                        list);
            break;
        }
        if (!hosts && (id != 0 || strncmp(h, "node", 4) == 0))
            virt = true;
        if (id >= MAX_NODES) {
            rc = refuse("--host %s: too many virtual nodes", list);
            break;
        }
        slots[id] += (int)n;
        if (slots[id] > MAX_PROCS)
            slots[id] = MAX_PROCS;
        if (id + 1 > k)
            k = (int)id + 1;
    }
    free(copy);
    if (rc == 0 && hosts) {
        if (j->nnodes > 0 && j->nnodes != k)
            rc = refuse("--host %s and --nodes name different numbers of nodes", list);
        else if ((j->node_slots = calloc((size_t)k, sizeof *j->node_slots)) == NULL)
            rc = PMIXRUN_EXIT_SETUP;
        if (rc == 0) {
            /* as a hostfile of host names (pmixrun_nodes.c) */
            memcpy(j->node_slots, slots, (size_t)k * sizeof *slots);
            j->nnodes = k;
            j->node_names = names;
            j->ssh = true;
            return 0;
        }
    }
    for (int i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    if (rc != 0)
        return rc;
    if (local && virt)
        return refuse("--host %s: give either this machine or virtual nodes node0..node{K-1}, "
                      "not both",
                      list);
    for (int n = 0; n < k; n++)
        if (slots[n] == 0) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "--host %%s: virtual nodes are node0..node{K-1}, each named: node%d is "
                     "missing",
                     n);
            return refuse(msg, list);
        }
    if (k == 0)
        return refuse("--host '%s' names no node", list);
    if (j->nnodes > 0 && j->nnodes != k)
        return refuse("--host %s and --nodes name different numbers of nodes", list);
    j->nnodes = k;
    j->node_slots = calloc((size_t)k, sizeof *j->node_slots);
    if (j->node_slots == NULL)
        return PMIXRUN_EXIT_SETUP;
    memcpy(j->node_slots, slots, (size_t)k * sizeof *slots);
    return 0;
}

/* --map-by ppr:N:node|core|socket */
static int parse_ppr(job *j, const char *v)
{
    char obj[32];
    int n, used = 0;
    if (sscanf(v, "ppr:%d:%31[a-z]%n", &n, obj, &used) != 2 || v[used] != '\0' || n < 1 ||
        n > MAX_PROCS)
        return bad_usage("--map-by ppr takes ppr:N:node, ppr:N:core or ppr:N:socket, not '%s'", v);
    if (strcmp(obj, "node") == 0)
        j->ppr_obj = HWLOC_OBJ_MACHINE;
    else if (strcmp(obj, "core") == 0)
        j->ppr_obj = HWLOC_OBJ_CORE;
    else if (strcmp(obj, "socket") == 0 || strcmp(obj, "package") == 0)
        j->ppr_obj = HWLOC_OBJ_PACKAGE;
    else
        return refuse("--map-by %s: pmixrun maps per node, core or socket only", v);
    j->ppr_n = n;
    return 0;
}

/* -x VAR or -x VAR=VALUE: kept as VAR=VALUE for the environment of the
 * ranks of `app`. */
static int add_env(job_app *app, const char *v)
{
    const char *eq = strchr(v, '=');
    size_t nl = eq != NULL ? (size_t)(eq - v) : strlen(v);
    if (nl == 0)
        return bad_usage("-x needs a variable name, not '%s'", v);
    char *e = NULL;
    if (eq != NULL) {
        e = strdup(v);
    } else {
        const char *cur = getenv(v);
        if (cur == NULL) {
            fprintf(stderr, "pmixrun: warning: -x %s: %s is not set in pmixrun's environment\n", v,
                    v);
            return 0;
        }
        if (asprintf(&e, "%s=%s", v, cur) < 0)
            e = NULL;
    }
    size_t n = 0;
    while (app->env_set != NULL && app->env_set[n] != NULL)
        n++;
    char **ne = e != NULL ? realloc(app->env_set, (n + 2) * sizeof *ne) : NULL;
    if (ne == NULL) {
        free(e);
        return PMIXRUN_EXIT_SETUP;
    }
    ne[n] = e;
    ne[n + 1] = NULL;
    app->env_set = ne;
    return 0;
}

/* A new application context at the end of j->apps (zeroed), or NULL when
 * memory runs out. */
static job_app *new_app(job *j)
{
    job_app *v = realloc(j->apps, (size_t)(j->napps + 1) * sizeof *v);
    if (v == NULL)
        return NULL;
    j->apps = v;
    memset(&v[j->napps], 0, sizeof v[j->napps]);
    return &v[j->napps++];
}

/* The program and arguments of `app`: argv[start .. end - 1], copied. */
static int set_app_argv(job_app *app, char **argv, int start, int end)
{
    app->argv = calloc((size_t)(end - start) + 1, sizeof *app->argv);
    if (app->argv == NULL)
        return PMIXRUN_EXIT_SETUP;
    for (int k = start; k < end; k++)
        if ((app->argv[k - start] = strdup(argv[k])) == NULL)
            return PMIXRUN_EXIT_SETUP;
    return 0;
}

/* --wdir of `app` made absolute (relative to where pmixrun was started);
 * 0, or an exit status (message printed). */
static int check_wdir(job_app *app)
{
    char *abs;
    if (app->wdir == NULL)
        return 0;
    struct stat st;
    abs = realpath(app->wdir, NULL);
    if (abs == NULL || stat(abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "pmixrun: --wdir %s: %s\n", app->wdir,
                abs == NULL ? strerror(errno) : strerror(ENOTDIR));
        free(abs);
        return PMIXRUN_EXIT_SETUP;
    }
    free(app->wdir);
    app->wdir = abs;
    return 0;
}

/* --output-filename DIR[:nocopy|nojobid,...] */
static int parse_output(job *j, const char *v)
{
    char *dir = strdup(v);
    if (dir == NULL)
        return PMIXRUN_EXIT_SETUP;
    bool jobid = true;
    j->output_copy = true;
    char *colon = strchr(dir, ':');
    if (colon != NULL) {
        *colon = '\0';
        char *save = NULL;
        for (char *d = strtok_r(colon + 1, ",", &save); d != NULL; d = strtok_r(NULL, ",", &save)) {
            if (strcasecmp(d, "nocopy") == 0)
                j->output_copy = false;
            else if (strcasecmp(d, "nojobid") == 0)
                jobid = false;
            else {
                int rc =
                    bad_usage("--output-filename: unknown directive '%s' (nocopy, nojobid)", d);
                free(dir);
                return rc;
            }
        }
    }
    if (*dir == '\0') {
        free(dir);
        return bad_usage("--output-filename needs a directory, not '%s'", v);
    }
    /* Relative to where pmixrun was started, before --wdir, as mpirun. */
    char cwd[PATH_MAX];
    free(j->output_dir);
    j->output_dir = NULL;
    int r;
    if (dir[0] == '/')
        r = asprintf(&j->output_dir, "%s%s", dir, jobid ? "/1" : "");
    else if (getcwd(cwd, sizeof cwd) != NULL)
        r = asprintf(&j->output_dir, "%s/%s%s", cwd, dir, jobid ? "/1" : "");
    else
        r = -1;
    free(dir);
    if (r < 0) {
        j->output_dir = NULL;
        return refuse("--output-filename %s: cannot find the current directory", v);
    }
    return 0;
}

/* Returns -1 when the job should run, or an exit status. The command line
 * is one or more application contexts separated by ':' (mpirun's MPMD
 * form): each is options, then its program and arguments. -n, --pset, -x
 * and --wdir belong to the context they are in; every other option is the
 * job's, wherever it is given. */
static int parse_args(job *j, int argc, char **argv)
{
    int i = 1;
    const char *hostfile = NULL, *hosts = NULL, *topology = NULL;
    bool got_np = false;
    j->stdin_to = 0;
    for (;;) { /* one application context */
        job_app *app = new_app(j);
        if (app == NULL)
            return PMIXRUN_EXIT_SETUP;
        while (i < argc) {
            char *a = argv[i];
            char *val = NULL;
            if (strcmp(a, "--") == 0) {
                i++;
                break;
            }
            if (a[0] != '-' || a[1] == '\0')
                break;
            char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
            char name[64];
            snprintf(name, sizeof name, "%.*s", eq != NULL ? (int)(eq - a) : (int)strlen(a), a);
            bool takes_value = is_one_of(name, opt_np) || is_one_of(name, opt_wdir) ||
                               is_one_of(name, opt_host) || is_one_of(name, opt_valued);
            if (takes_value) {
                if (eq != NULL) {
                    val = eq + 1;
                } else if (i + 1 < argc) {
                    val = argv[++i];
                } else {
                    return bad_usage("option %s needs a value", name);
                }
            } else if (eq != NULL) {
                return bad_usage("option %s takes no value", name);
            }
            i++;

            int rc = 0;
            if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
                usage(stdout);
                return 0;
            } else if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
                printf("pmixrun (pmixlab) %s\n", PMIXLAB_VERSION);
                return 0;
            } else if (strcmp(name, "--tag-output") == 0) {
                j->tag_output = true;
            } else if (strcmp(name, "--oversubscribe") == 0) {
                j->no_oversubscribe = false;
            } else if (strcmp(name, "--nooversubscribe") == 0) {
                j->no_oversubscribe = true;
            } else if (strcmp(name, "--merge-stderr-to-stdout") == 0) {
                j->merge_stderr = true;
            } else if (strcmp(name, "--report-bindings") == 0) {
                j->report_bindings = true;
            } else if (strcmp(name, "--stop-in-init") == 0) {
                j->stop_in_init = true;
            } else if (strcmp(name, "--system-server") == 0) {
                j->system_server = true;
            } else if (strcmp(name, "--allow-run-as-root") == 0) {
                /* mpirun refuses root without it; pmixrun does not */
            } else if (strcmp(name, "-x") == 0) {
                rc = add_env(app, val);
            } else if (strcmp(name, "--pset") == 0) {
                if (val[0] == '\0')
                    return bad_usage("--pset needs the name of a process set, not an empty "
                                     "one%s",
                                     "");
                free(app->pset);
                if ((app->pset = strdup(val)) == NULL)
                    return PMIXRUN_EXIT_SETUP;
            } else if (is_one_of(name, opt_wdir)) {
                free(app->wdir);
                if ((app->wdir = strdup(val)) == NULL)
                    return PMIXRUN_EXIT_SETUP;
            } else if (is_one_of(name, opt_host)) {
                hosts = val;
            } else if (strcmp(name, "--output-filename") == 0 ||
                       strcmp(name, "-output-filename") == 0) {
                rc = parse_output(j, val);
            } else if (strcmp(name, "--stdin") == 0 || strcmp(name, "-stdin") == 0) {
                if (strcmp(val, "all") == 0)
                    j->stdin_to = STDIN_ALL;
                else if (strcmp(val, "none") == 0)
                    j->stdin_to = STDIN_NONE;
                else if (strcmp(val, "0") == 0)
                    j->stdin_to = 0;
                else if (parse_count(val, MAX_PROCS - 1) > 0)
                    j->stdin_to = (int)parse_count(val, MAX_PROCS - 1);
                else
                    return bad_usage("--stdin takes all, none or a rank, not '%s'", val);
            } else if (strcmp(name, "--timeout") == 0) {
                char *end;
                errno = 0;
                double t = strtod(val, &end);
                if (errno != 0 || end == val || *end != '\0' || !(t > 0) || t > 1e9)
                    return bad_usage("--timeout needs a positive number of seconds, not '%s'", val);
                j->timeout = t;
            } else if (strcmp(name, "--bind-to") == 0) {
                if (strcmp(val, "core") == 0)
                    j->bind_to = BIND_CORE;
                else if (strcmp(val, "socket") == 0 || strcmp(val, "package") == 0)
                    j->bind_to = BIND_SOCKET;
                else if (strcmp(val, "numa") == 0)
                    j->bind_to = BIND_NUMA;
                else if (strcmp(val, "none") == 0)
                    j->bind_to = BIND_NONE;
                else
                    return bad_usage("--bind-to takes core, socket, numa or none, not '%s'", val);
            } else if (strcmp(name, "--hostfile") == 0 || strcmp(name, "-hostfile") == 0) {
                hostfile = val;
            } else if (strcmp(name, "--topology") == 0) {
                topology = val;
            } else if (strcmp(name, "--launch-agent") == 0) {
                j->launch_agent = val;
            } else if (strcmp(name, "--if-include") == 0) {
                char why[256];
                if (tl_if_check(val, why, sizeof why) != 0)
                    return bad_usage("--if-include %s", why);
                j->if_include = val;
            } else if (strcmp(name, "--launch-fanout") == 0) {
                long f = parse_count(val, LT_FANOUT_MAX);
                if (f < 1)
                    return bad_usage("--launch-fanout takes a number from 1 to 1024, not '%s'",
                                     val);
                j->launch_fanout = (int)f;
            } else if (strcmp(name, "--map-by") == 0) {
                j->ppr_n = 0;
                if (strcmp(val, "slot") == 0)
                    j->map_by_node = false;
                else if (strcmp(val, "node") == 0)
                    j->map_by_node = true;
                else if (strncmp(val, "ppr:", 4) == 0) {
                    j->map_by_node = false;
                    rc = parse_ppr(j, val);
                } else
                    return bad_usage(
                        "--map-by takes slot, node or ppr:N:node|core|socket, not '%s'", val);
            } else if (strcmp(name, "--isolate") == 0) {
                vhost_mode m;
                if (vhost_parse(val, &m) != 0)
                    return bad_usage("--isolate takes auto, host, net or none, not '%s'", val);
                j->isolate = (int)m;
            } else if (strcmp(name, "--nodes") == 0) {
                long k = parse_count(val, MAX_NODES);
                if (k < 0) {
                    char msg[128];
                    snprintf(msg, sizeof msg,
                             "--nodes needs a number of nodes from 1 to %d, not '%%s'", MAX_NODES);
                    return bad_usage(msg, val);
                }
                j->nnodes = (int)k;
            } else if (is_one_of(name, opt_np)) {
                long n = parse_count(val, MAX_PROCS);
                if (n < 0) {
                    char msg[128];
                    snprintf(msg, sizeof msg,
                             "-n needs a number of processes from 1 to %d, not '%%s'", MAX_PROCS);
                    return bad_usage(msg, val);
                }
                app->size = (int)n;
            } else {
                return bad_usage("unknown option '%s'", a);
            }
            if (rc != 0)
                return rc;
        }
        if (i >= argc && j->system_server && j->napps == 1)
            break; /* its jobs come from tools */
        if (i >= argc || strcmp(argv[i], ":") == 0) {
            if (j->napps == 1)
                return bad_usage("%sno program to run", "");
            char msg[160];
            snprintf(msg, sizeof msg,
                     "application context %d (after the %s':') has no program: each ':' starts "
                     "another one, with its own options and program%%s",
                     j->napps, j->napps == 2 ? "" : "last ");
            return bad_usage(msg, "");
        }
        int end = i;
        while (end < argc && strcmp(argv[end], ":") != 0)
            end++;
        int rc = set_app_argv(app, argv, i, end);
        if (rc == 0)
            rc = check_wdir(app);
        if (rc != 0)
            return rc;
        if (end >= argc)
            break;
        i = end + 1; /* past the ':' */
    }
    if (j->napps > 1) {
        long total = 0;
        for (int a = 0; a < j->napps; a++) {
            if (j->apps[a].size == 0) {
                char msg[200];
                snprintf(msg, sizeof msg,
                         "application context %d (%%s) needs -n N: with several contexts, each "
                         "says how many processes it starts",
                         a + 1);
                return bad_usage(msg, j->apps[a].argv[0]);
            }
            total += j->apps[a].size;
        }
        if (total > MAX_PROCS) {
            char msg[128];
            snprintf(msg, sizeof msg,
                     "the application contexts start %ld processes together: at most %d%%s", total,
                     MAX_PROCS);
            return bad_usage(msg, "");
        }
        j->nprocs = (int)total;
        got_np = true;
    } else {
        j->nprocs = j->apps[0].size;
        got_np = j->nprocs > 0;
    }
    if (hosts != NULL && hostfile != NULL)
        return refuse("%s--host and --hostfile both name the nodes: give one of them", "");
    if (hosts != NULL) {
        int rc = parse_hosts(j, hosts);
        if (rc != 0)
            return rc;
    }
    if (hostfile != NULL) {
        char err[512];
        if (nodes_read_hostfile(j, hostfile, j->nnodes, err, sizeof err) != 0)
            return bad_usage("%s", err);
    }
    if (hosts == NULL && hostfile == NULL && j->nnodes == 0) {
        /* inside a Slurm allocation: one daemon per node, a Slurm step */
        char err[512];
        if (nodes_from_slurm(j, err, sizeof err) < 0)
            return bad_usage("%s", err);
    }
    {
        char err[512];
        if (net_load(j, topology, err, sizeof err) != 0) {
            nodes_free_names(j);
            return refuse("--topology: %s", err);
        }
    }
    int nnodes = j->nnodes > 0 ? j->nnodes : 1;
    if (j->ppr_n > 0) {
        if (j->node_slots != NULL) {
            nodes_free_names(j);
            return refuse("%s--map-by ppr and --host slots both say how many processes go on a "
                          "node: give one of them",
                          "");
        }
        int per = j->ppr_obj == HWLOC_OBJ_MACHINE ? 1 : job_count_objs(j, j->ppr_obj);
        if (per <= 0) {
            nodes_free_names(j);
            return PMIXRUN_EXIT_SETUP;
        }
        long cap = (long)j->ppr_n * per;
        if (cap > MAX_PROCS)
            cap = MAX_PROCS;
        j->node_slots = calloc((size_t)nnodes, sizeof *j->node_slots);
        if (j->node_slots == NULL)
            return PMIXRUN_EXIT_SETUP;
        for (int n = 0; n < nnodes; n++)
            j->node_slots[n] = (int)cap;
        if (!got_np)
            j->nprocs = (int)(cap * nnodes > MAX_PROCS ? MAX_PROCS : cap * nnodes);
        else if ((long)j->nprocs > cap * nnodes) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "--map-by ppr places at most %ld process%s on each of %d node%s: -n %%s is "
                     "more",
                     cap, cap == 1 ? "" : "es", nnodes, nnodes == 1 ? "" : "s");
            char nb[16];
            snprintf(nb, sizeof nb, "%d", j->nprocs);
            nodes_free_names(j);
            return refuse(msg, nb);
        }
    } else if (j->node_slots != NULL && !got_np) {
        long total = 0;
        for (int n = 0; n < nnodes; n++)
            total += j->node_slots[n];
        j->nprocs = (int)(total > MAX_PROCS ? MAX_PROCS : total);
    }
    if (j->system_server) {
        /* No job of its own: the tools' spawns are its jobs, on this node,
         * or over the daemons of --nodes, --host or --hostfile (an empty
         * first job: nodes_run). */
        bool jobless = j->napps == 1 && j->apps[0].argv == NULL && !got_np && j->ppr_n == 0 &&
                       !j->stop_in_init && j->timeout == 0;
        bool here = j->nnodes <= 1 && j->node_addrs == NULL && !j->ssh; /* as main() decides */
        const char *why = !jobless   ? "--system-server takes no program, -n, --map-by ppr, "
                                       "--timeout or --stop-in-init (its jobs come from "
                                       "tools' PMIx_Spawn)"
                          : j->slurm ? "--system-server does not run over a Slurm allocation: "
                                       "name its nodes with --nodes, --host or --hostfile"
                          : !here && j->bind_to != BIND_NONE
                              ? "--bind-to is not supported with several nodes or --hostfile yet"
                          : !here && j->output_dir != NULL
                              ? "--output-filename is not supported with several nodes or "
                                "--hostfile yet"
                          : (j->launch_agent != NULL || j->launch_fanout > 0) && !j->ssh
                              ? "--launch-agent and --launch-fanout need host names (a "
                                "--hostfile of host names, or --host)"
                          : j->if_include != NULL && !j->ssh
                              ? "--if-include chooses the addresses of daemons on other hosts "
                                "(a --hostfile of host names, or --host)"
                          : j->isolate == VHOST_NET && (hostfile != NULL || j->ssh)
                              ? "--isolate net is for virtual nodes (--nodes K, or --host "
                                "node0,...)"
                              : NULL;
        if (why != NULL || here)
            nodes_free_names(j);
        if (why != NULL)
            return bad_usage("%s", why);
        j->nprocs = 0; /* --host slots count for the tools' jobs (spawn_plan) */
        j->napps = 0;
        if (!here)
            j->stdin_to = STDIN_NONE; /* no rank of its own to read it */
        return -1;
    }
    if (j->nprocs == 0) {
        nodes_free_names(j);
        return bad_usage("%s-n N is required: how many processes to start", "");
    }
    const char *bad = NULL;
    bool multi = j->nnodes > 1 || hostfile != NULL || j->slurm || j->ssh;
    if ((j->launch_agent != NULL || j->launch_fanout > 0) && !j->ssh) {
        nodes_free_names(j);
        return bad_usage("%s--launch-agent and --launch-fanout need host names (a --hostfile "
                         "of host names, or --host)",
                         "");
    }
    if (j->if_include != NULL && !j->ssh && !j->slurm) {
        nodes_free_names(j);
        return bad_usage("%s--if-include chooses the addresses of daemons on other hosts (a "
                         "--hostfile of host names, --host, or a Slurm allocation)",
                         "");
    }
    if (j->isolate == VHOST_NET && (hostfile != NULL || j->ssh || j->slurm)) {
        nodes_free_names(j);
        return bad_usage("%s--isolate net is for virtual nodes (--nodes K, or --host node0,...)",
                         "");
    }
    if (j->nnodes > j->nprocs)
        bad = "--nodes K (or a hostfile of K nodes) needs at least K processes (-n)";
    else if (multi && j->bind_to != BIND_NONE)
        bad = "--bind-to is not supported with several nodes or --hostfile yet";
    else if (multi && j->report_bindings)
        bad = "--report-bindings is not supported with several nodes or --hostfile yet";
    else if (multi && j->output_dir != NULL)
        bad = "--output-filename is not supported with several nodes or --hostfile yet";
    else if (j->stdin_to >= j->nprocs)
        bad = "--stdin names a rank the job does not have";
    if (bad != NULL) {
        nodes_free_names(j);
        return refuse("%s", bad);
    }
    if (multi && j->no_oversubscribe) {
        /* The daemons do not know the option: the map's fullest node decides
         * here (every virtual node has this machine's cores). */
        int cores = job_count_objs(j, HWLOC_OBJ_CORE);
        long most = (j->nprocs + j->nnodes - 1) / j->nnodes, slots = 0;
        for (int n = 0; j->node_slots != NULL && n < j->nnodes; n++)
            slots += j->node_slots[n];
        if (cores <= 0 || (j->node_slots != NULL && j->ppr_n == 0 && j->nprocs > slots) ||
            ((j->node_slots == NULL || j->ppr_n > 0) && most > cores)) {
            nodes_free_names(j);
            return refuse("%s--nooversubscribe: more processes than slots or cores on a node", "");
        }
    }
    /* One app: its size may have come from --host slots or --map-by ppr. */
    j->apps[0].size = j->napps == 1 ? j->nprocs : j->apps[0].size;
    for (int a = 0, first = 0; a < j->napps; a++) {
        j->apps[a].first = first;
        first += j->apps[a].size;
    }
    return -1;
}

/* ---- ending the job ---- */

int live_ranks(job *j)
{
    return j->nstarted - j->nreaped + spawn_live_ranks(j);
}

static void signal_all(job *j, int sig)
{
    job_signal_ranks(j, sig);
    spawn_signal_all(j, sig);
}

static void terminate(job *j)
{
    if (live_ranks(j) > 0)
        signal_all(j, SIGTERM);
    j->phase = PHASE_TERMINATING;
    j->phase_deadline = now_s() + PMIXRUN_GRACE_S;
}

/* Start ending the job for `reason`; the first reason sticks. */
/* The job is ended before its processes ended by themselves: those still
 * running hear PMIX_EVENT_JOB_END (the same code as PMIX_ERR_JOB_TERMINATED)
 * from their job, {nspace, PMIX_RANK_WILDCARD}, with PMIX_JOB_TERM_STATUS
 * saying why, before they are stopped: the first job's and those of every
 * spawned job with a rank still running, on every node. */
static void job_end_event(job *j, end_reason reason)
{
    pmix_status_t why = reason == END_ABORT         ? PMIX_ERR_PROC_ABORTED
                        : reason == END_RANK_FAILED ? PMIX_ERR_PROC_TERM_WO_SYNC
                        : reason == END_TIMEOUT     ? PMIX_ERR_TIMEOUT
                                                    : PMIX_ERR_JOB_TERMINATED;
    pmix_info_t info;
    pmix_proc_t src;
    PMIx_Info_load(&info, PMIX_JOB_TERM_STATUS, &why, PMIX_STATUS);
    PMIx_Load_procid(&src, j->nspace, PMIX_RANK_WILDCARD);
    if (j->nodes != NULL) {
        nodes_raise(j, PMIX_EVENT_JOB_END, &info, 1);
        for (job *c = j->children; c != NULL; c = c->next_child)
            if (!c->spawn_failed && c->nreaped < c->nstarted)
                nodes_raise_ns(j, c->nspace, PMIX_EVENT_JOB_END, &info, 1);
    } else if (j->server_up) {
        px_posix_ops()->lock(j->plat); /* recursive: also from inside an upcall */
        px_server_notify(j->srv, PMIX_EVENT_JOB_END, &src, PMIX_RANGE_NAMESPACE, &info, 1);
        for (job *c = j->children; c != NULL; c = c->next_child) {
            if (c->spawn_failed || c->nreaped >= c->nstarted)
                continue;
            PMIx_Load_procid(&src, c->nspace, PMIX_RANK_WILDCARD);
            px_server_notify(j->srv, PMIX_EVENT_JOB_END, &src, PMIX_RANGE_NAMESPACE, &info, 1);
        }
        px_posix_ops()->unlock(j->plat);
    }
    PMIx_Info_destruct(&info);
}

void end_job(job *j, end_reason reason, int code)
{
    if (j->reason != END_NONE)
        return;
    j->reason = reason;
    j->reason_code = code;
    if (reason != END_NONE && reason != END_LAUNCH)
        job_end_event(j, reason);
    if (reason == END_RANK_FAILED && live_ranks(j) > 0) {
        j->phase = PHASE_SETTLING;
        j->phase_deadline = now_s() + PMIXRUN_SETTLE_S;
    } else {
        terminate(j);
    }
}

int final_status(job *j)
{
    switch (j->reason) {
    case END_ABORT:
    case END_SIGNAL:
    case END_TIMEOUT:
    case END_LAUNCH: return j->reason_code;
    case END_REQUESTED: return 0;
    default: break;
    }
    int worst = 0;
    for (int i = 0; i < j->nstarted; i++) {
        rank_proc *r = &j->ranks[i];
        if (r->reaped && !r->stopped_by_us && r->code > worst)
            worst = r->code;
    }
    if (spawn_worst_code(j) > worst)
        worst = spawn_worst_code(j);
    if (j->reason == END_RANK_FAILED && worst == 0)
        worst = 1;
    return worst > 255 ? 255 : worst;
}

static void rank_exited(job *j, rank_proc *r, int wstatus)
{
    bool connected, finalized;
    job_rank_reaped(j, r, wstatus, &connected, &finalized);
    pubsub_rank_ended(j, r->rank);
    rank_judge(j, r, (int)r->pid, connected, finalized);
}

void rank_judge(job *j, rank_proc *r, int pid, bool connected, bool finalized)
{
    bool unfinalized = connected && !finalized;
    if (r->stopped_by_us || j->reason != END_NONE)
        return;
    if (r->signaled) {
        int sig = r->code - 128;
        fprintf(stderr, "pmixrun: rank %d (pid %d) was killed by signal %d (%s)%s\n", r->rank, pid,
                sig, strsignal(sig), live_ranks(j) > 0 ? "; stopping the job" : "");
        end_job(j, END_RANK_FAILED, 0);
    } else if (r->code != 0 && !connected) {
        /* It failed before it reached PMIx: its peers would wait for it. */
        fprintf(stderr,
                "pmixrun: rank %d (pid %d) exited with status %d before connecting to "
                "PMIx%s\n",
                r->rank, pid, r->code, live_ranks(j) > 0 ? "; stopping the job" : "");
        end_job(j, END_RANK_FAILED, 0);
    } else if (unfinalized) { /* whatever its status */
        fprintf(stderr,
                "pmixrun: rank %d (pid %d) exited with status %d without calling "
                "PMIx_Finalize%s (every process that initializes PMIx must finalize it before "
                "it exits)\n",
                r->rank, pid, r->code, live_ranks(j) > 0 ? "; stopping the job" : "");
        end_job(j, END_RANK_FAILED, 0);
    }
}

static void reap(job *j)
{
    j->child_exited = false;
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            return; /* 0: none ready; -1/ECHILD: none left */
        bool ours = false;
        for (int i = 0; i < j->nstarted && !ours; i++) {
            if (j->ranks[i].pid == pid && !j->ranks[i].reaped) {
                rank_exited(j, &j->ranks[i], st);
                ours = true;
            }
        }
        job *c = NULL;
        rank_proc *r = ours ? NULL : spawn_rank_of_pid(j, pid, &c);
        if (r != NULL)
            spawn_rank_exited(j, c, r, st);
    }
}

void check_abort(job *j)
{
    bool seen = j->abort_seen && !j->abort_reported;
    int rank = j->abort_rank, status = j->abort_status;
    char *msg = j->abort_msg;
    if (seen)
        j->abort_reported = true;
    if (!seen)
        return;
    if (j->reason == END_NONE) {
        fprintf(stderr,
                "pmixrun: rank %d called PMIx_Abort with status %d%s%s; stopping %d "
                "process%s\n",
                rank, status, msg != NULL && *msg != '\0' ? ": " : "", msg != NULL ? msg : "",
                live_ranks(j), live_ranks(j) == 1 ? "" : "es");
        end_job(j, END_ABORT, status & 0xff);
    }
}

/* SIGUSR1 and SIGUSR2 go to every rank, as mpirun forwards them; SIGTSTP
 * stops the ranks (SIGSTOP, which they cannot ignore, as Open MPI does) and
 * then pmixrun, so that the shell sees the job stopped; SIGCONT, which has
 * already continued pmixrun, continues them. */
static bool forward_signal(job *j, int sig)
{
    switch (sig) {
    case SIGUSR1:
    case SIGUSR2:
    case SIGCONT: break;
    case SIGTSTP:
        if (j->reason != END_NONE)
            return true; /* the job is ending: let it */
        forward_signal(j, SIGSTOP);
        kill(getpid(), SIGSTOP);
        return true;
    case SIGSTOP: break;
    default: return false;
    }
    if (j->reason != END_NONE && sig != SIGCONT)
        return true; /* the job is ending: the stop signals are under way */
    if (j->node_addrs != NULL || j->nnodes > 1 || j->slurm || j->ssh)
        nodes_signal(j, sig);
    else
        signal_all(j, sig);
    return true;
}

/* "TERM", or "RTMIN+3" for a real-time signal (sigabbrev_np has no name
 * for those). */
static const char *sig_name(int sig, char *buf, size_t len)
{
    const char *n = sigabbrev_np(sig);
    if (n != NULL)
        return n;
    snprintf(buf, len, "RTMIN+%d", sig - SIGRTMIN);
    return buf;
}

void handle_signals(job *j)
{
    char nb[24]; /* "RTMIN+" and any int */
    struct signalfd_siginfo si;
    while (read(j->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD) {
            j->child_exited = true; /* the loop reaps after this turn */
            continue;
        }
        if (forward_signal(j, sig))
            continue;
        if (j->reason == END_NONE && j->system_server && (sig == SIGTERM || sig == SIGINT)) {
            fprintf(stderr, "pmixrun: system server: received SIG%s; stopping %d process%s\n",
                    sig_name(sig, nb, sizeof nb), live_ranks(j), live_ranks(j) == 1 ? "" : "es");
            end_job(j, END_REQUESTED, 0);
        } else if (j->reason == END_NONE) {
            fprintf(stderr, "pmixrun: received SIG%s; stopping %d process%s\n",
                    sig_name(sig, nb, sizeof nb), live_ranks(j), live_ranks(j) == 1 ? "" : "es");
            end_job(j, END_SIGNAL, 128 + sig);
        } else if (j->phase != PHASE_KILLING) {
            fprintf(stderr, "pmixrun: received SIG%s again; killing %d process%s now\n",
                    sig_name(sig, nb, sizeof nb), live_ranks(j), live_ranks(j) == 1 ? "" : "es");
            if (j->reason == END_RANK_FAILED) { /* the user wants out: their signal counts */
                j->reason = END_SIGNAL;
                j->reason_code = 128 + sig;
            }
            signal_all(j, SIGKILL);
            j->phase = PHASE_KILLING;
            j->phase_deadline = now_s() + 5.0;
        }
    }
}

void handle_time(job *j)
{
    double t = now_s();
    if (j->reason == END_NONE && j->timeout > 0 && t >= j->timeout_at) {
        fprintf(stderr,
                "pmixrun: the job did not finish within %g s (--timeout); stopping %d "
                "process%s\n",
                j->timeout, live_ranks(j), live_ranks(j) == 1 ? "" : "es");
        end_job(j, END_TIMEOUT, PMIXRUN_EXIT_TIMEOUT);
        return;
    }
    if (j->reason == END_NONE || t < j->phase_deadline)
        return;
    switch (j->phase) {
    case PHASE_SETTLING: terminate(j); break;
    case PHASE_TERMINATING:
        if (live_ranks(j) > 0) {
            fprintf(stderr,
                    "pmixrun: %d process%s still running %g s after SIGTERM; sending "
                    "SIGKILL\n",
                    live_ranks(j), live_ranks(j) == 1 ? " is" : "es are", PMIXRUN_GRACE_S);
            signal_all(j, SIGKILL);
        }
        j->phase = PHASE_KILLING;
        j->phase_deadline = t + 5.0;
        break;
    case PHASE_KILLING:
        if (live_ranks(j) > 0)
            fprintf(stderr,
                    "pmixrun: still waiting for %d process%s to die after SIGKILL "
                    "(stuck in the kernel?)\n",
                    live_ranks(j), live_ranks(j) == 1 ? "" : "es");
        j->phase_deadline = t + 30.0;
        break;
    default: break;
    }
}

/* ---- the loop ---- */

int poll_timeout_ms(job *j)
{
    double t = now_s(), until = -1;
    if (j->reason == END_NONE && j->timeout > 0)
        until = j->timeout_at;
    if (j->reason != END_NONE)
        until = j->phase_deadline;
    if (until < 0)
        return -1;
    double ms = (until - t) * 1000.0;
    if (ms <= 0)
        return 0;
    return ms > INT_MAX ? INT_MAX : (int)ms + 1;
}

static void signal_ready(void *arg, unsigned what)
{
    handle_signals(arg);
}

static bool output_open(job *j)
{
    for (int i = 0; i < j->nstarted; i++)
        if (j->ranks[i].out.fd >= 0 || j->ranks[i].err.fd >= 0)
            return true;
    return spawn_output_open(j);
}

/* The main loop: a turn of the platform's loop (the server's clients and
 * timers, the signalfd, the ranks' pipes: their callbacks do the work),
 * then what the turn recorded. */
static void run_loop(job *j)
{
    double drain_until = 0;
    for (;;) {
        if (j->child_exited)
            reap(j);
        check_abort(j);
        if (j->terminate_asked && j->reason == END_NONE)
            end_job(j, END_REQUESTED, 0);
        handle_time(j);
        pubsub_tick(j);
        if (live_ranks(j) == 0 && (!j->system_server || j->reason != END_NONE)) {
            /* Everyone is gone: collect the output still in the pipes, but
             * do not wait for descendants that keep them open. */
            if (drain_until == 0) {
                drain_until = now_s() + 1.0;
                iof_stdin_close(j);
                /* What the ranks left running in their process groups ends
                 * with the job: no orphans. */
                signal_all(j, SIGTERM);
            } else if (now_s() >= drain_until) {
                break;
            }
            if (!output_open(j))
                break; /* all output collected */
        }
        iof_stdin_arm(j);
        int tmo = poll_timeout_ms(j), ps = pubsub_timeout_ms(j);
        if (ps >= 0 && (tmo < 0 || ps < tmo))
            tmo = ps;
        if (drain_until != 0) {
            int left = (int)((drain_until - now_s()) * 1000.0) + 1;
            tmo = tmo < 0 || left < tmo ? left : tmo;
            if (tmo < 0)
                tmo = 0;
        }
        px_posix_run_once(j->plat, tmo < 0 ? -1.0 : tmo / 1000.0);
    }
    iof_stdin_close(j);
    signal_all(j, SIGKILL); /* leftovers that ignored SIGTERM */
    /* Flush and close what is left (partial lines, pipes held by orphans). */
    for (int i = 0; i < j->nstarted; i++) {
        iof_stream_close(&j->ranks[i].out, i, j->tag_output);
        iof_stream_close(&j->ranks[i].err, i, j->tag_output);
    }
    spawn_close_output(j);
}

/* ---- setup and teardown ---- */

static int setup_signals(job *j, sigset_t *mask)
{
    sigemptyset(mask);
    sigaddset(mask, SIGCHLD);
    sigaddset(mask, SIGINT);
    sigaddset(mask, SIGTERM);
    sigaddset(mask, SIGHUP);
    /* The other signals that would end pmixrun at once by default end the
     * job in order, so that its directory goes too. */
    sigaddset(mask, SIGQUIT);
    sigaddset(mask, SIGALRM);
    job_more_ending_signals(mask);
    /* These go to the ranks (forward_signal). */
    sigaddset(mask, SIGUSR1);
    sigaddset(mask, SIGUSR2);
    sigaddset(mask, SIGTSTP);
    sigaddset(mask, SIGCONT);
    /* Blocked, so that the signals come only through the signalfd (and
     * any thread a library starts inherits the mask). */
    if (sigprocmask(SIG_BLOCK, mask, NULL) != 0)
        return -1;
    j->sigfd = signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (j->sigfd < 0)
        return -1;
    signal(SIGPIPE, SIG_IGN); /* a closed stdout must not kill us */
    signal(SIGTTIN, SIG_IGN); /* reading the terminal from the background fails instead */
    return 0;
}

static void teardown(job *j)
{
    if (live_ranks(j) > 0) {
        /* Setup failed midway: nobody may outlive us. */
        signal_all(j, SIGKILL);
        while (live_ranks(j) > 0) {
            int st;
            pid_t pid = waitpid(-1, &st, 0);
            if (pid < 0 && errno != EINTR)
                break;
            for (int i = 0; pid > 0 && i < j->nstarted; i++)
                if (j->ranks[i].pid == pid && !j->ranks[i].reaped) {
                    j->ranks[i].reaped = true;
                    j->nreaped++;
                }
            job *c = NULL;
            rank_proc *r = pid > 0 ? spawn_rank_of_pid(j, pid, &c) : NULL;
            if (r != NULL) {
                r->reaped = true;
                c->nreaped++;
            }
        }
    }
    iof_stdin_close(j);
    rndz_free(j);
    tool_stop(j);
    job_server_stop(j);
    spawn_free_all(j); /* their watches go before the platform */
    job_platform_free(j);
    files_run_cleanups(j);
    files_remove_topdir(j);
    if (j->ranks != NULL) {
        for (int i = 0; i < j->nprocs; i++) {
            iof_stream_close(&j->ranks[i].out, i, false);
            iof_stream_close(&j->ranks[i].err, i, false);
            iof_close_files(&j->ranks[i]);
            hwloc_bitmap_free(j->ranks[i].cpuset);
        }
    }
    free(j->ranks);
    if (j->topo != NULL)
        hwloc_topology_destroy(j->topo);
    job_release(j);
}

/* The planes of a job of one node: pmixrun's own NICs (net_node_nics).
 * 0, or -1 with a message printed. */
static int own_planes(job *j)
{
    px_nics nics;
    char err[512];

    if (net_node_nics(j, 0, &nics, err, sizeof err) != 0) {
        fprintf(stderr, "pmixrun: %s\n", err);
        return -1;
    }
    return net_planes(j, &nics);
}

int main(int argc, char **argv)
{
    job jb = {0}, *j = &jb;
    sigset_t mask;
    int status = 1;

    j->sigfd = j->devnull = -1;
    j->child_exited = true;
    /* Whether we have a stdin to forward, asked before we open anything
     * (closed, its number would soon be another descriptor of ours). */
    bool stdin_open = fcntl(STDIN_FILENO, F_GETFD) >= 0;
    int rc = parse_args(j, argc, argv);
    if (rc < 0 && (rc = launch_resolve(j)) == 0)
        rc = -1; /* run it */
    if (rc >= 0) {
        nodes_free_names(j);
        if (j->topo != NULL)
            hwloc_topology_destroy(j->topo);
        job_release(j);
        return rc;
    }
    j->outs[1] = (iof_out){.fd = STDOUT_FILENO};
    j->outs[2] = (iof_out){.fd = STDERR_FILENO};
    if (gethostname(j->hostname, sizeof j->hostname - 1) != 0)
        snprintf(j->hostname, sizeof j->hostname, "localhost");
    snprintf(j->nspace, sizeof j->nspace, "pmixrun.%.200s.%ld", j->hostname, (long)getpid());

    if (setup_signals(j, &mask) != 0) {
        fprintf(stderr, "pmixrun: cannot set up signal handling: %s\n", strerror(errno));
        goto out;
    }
    j->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    j->ranks = calloc(j->nprocs > 0 ? (size_t)j->nprocs : 1, sizeof *j->ranks);
    if (j->devnull < 0 || j->ranks == NULL) {
        fprintf(stderr, "pmixrun: cannot set up: %s\n", strerror(errno));
        goto out;
    }
    for (int i = 0; i < j->nprocs; i++) {
        j->ranks[i].rank = i;
        j->ranks[i].out.fd = j->ranks[i].err.fd = -1;
        j->ranks[i].files[0].fd = j->ranks[i].files[1].fd = j->ranks[i].in_fd = -1;
    }
    /* with daemons, pmixrun_nodes.c sends it to them (PD_STDIN) */
    j->in_open = j->stdin_to != STDIN_NONE && stdin_open;
    j->nlocal = j->nprocs;
    if (j->nnodes > 1 || j->node_addrs != NULL || j->slurm || j->ssh) {
        status = nodes_run(j);
        goto out;
    }
    j->nnodes = 1;
    j->spawn = spawn_up; /* pmixrun_spawn.c: one node only */
    if (net_fit(j) != 0 || own_planes(j) != 0 || files_make_topdir(j) != 0 ||
        job_bindings(j) != 0 || job_platform(j, signal_ready, j) != 0 || job_server_start(j) != 0 ||
        (!j->system_server && rndz_start(j) != 0) || (!j->system_server && job_register(j) != 0))
        goto out;
    if (j->system_server)
        fprintf(stderr, "pmixrun: system server %s ready at %s\n", j->nspace, j->uri);
    if (iof_stdin_watch(j) != 0) {
        fprintf(stderr, "pmixrun: cannot watch the standard input: out of memory\n");
        goto out;
    }

    j->timeout_at = now_s() + j->timeout;
    for (int i = 0; i < j->nprocs; i++) {
        /* A signal or a failed rank while we are still launching: stop. */
        reap(j);
        handle_signals(j);
        if (j->reason != END_NONE)
            break;
        rc = launch_rank(j, &j->ranks[i]);
        if (rc != 0) {
            end_job(j, END_LAUNCH, rc);
            break;
        }
    }
    rndz_launched(j);
    run_loop(j);
    status = final_status(j);
out:
    rndz_end(j, status); /* a debugger that started pmixrun hears the end */
    teardown(j);
    return status;
}
