/*
 * pmixrun.c - start a PMIx job of N processes on this node.
 *
 *     pmixrun -n N [--timeout S] [--tag-output] [--bind-to core|none] prog [args...]
 *
 * (With --nodes K or --hostfile the job runs over node daemons instead:
 * pmixrun_nodes.c, which reuses the rules below of how a job ends.)
 *
 * How it works. pmixrun makes a private job directory, starts the PMIx
 * server library through the Standard's server API only (PMIx_server_init
 * with a module of upcalls, PMIx_server_register_nspace with the job's data,
 * PMIx_server_register_client and PMIx_server_setup_fork per rank), then
 * forks the ranks (pmixrun_launch.c). The library serves the clients on its
 * own progress thread; pmixrun's main thread runs a poll() loop over
 *
 *   - a signalfd for SIGCHLD and the signals that end the job (below;
 *     blocked in every thread, so they arrive only there),
 *   - a self-pipe that the module's upcalls write to (PMIx_Abort),
 *   - the ranks' stdout and stderr pipes (pmixrun_iof.c),
 *
 * with a timeout for --timeout and for the phases of stopping.
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
 *   - pmixrun gets SIGINT, SIGTERM or SIGHUP (or SIGQUIT, SIGUSR1, SIGUSR2,
 *     SIGALRM): exit status 128+signal (a second signal skips the grace
 *     period).
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
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmixrun.h"

#define MAX_PROCS 65535 /* local ranks are 16-bit */
#define MAX_NODES 256

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: pmixrun -n N [options] program [arguments...]\n"
            "\n"
            "Start N copies of program on this node as one PMIx job.\n"
            "\n"
            "Options:\n"
            "  -n, --np N          number of processes to start (required, 1..%d)\n"
            "  --timeout S         stop the job if it runs longer than S seconds (exit 124)\n"
            "  --tag-output        prefix every line of output with \"[rank] \"\n"
            "  --bind-to core|none bind each process to one core, round robin (default: none)\n"
            "  --nodes K           run the job on K virtual nodes of this machine: one pmixd\n"
            "                      daemon per node, connected over loopback TCP (default 1:\n"
            "                      no daemon, pmixrun serves the processes itself)\n"
            "  --map-by slot|node  with --nodes: consecutive ranks fill each node in turn\n"
            "                      (slot, the default) or go round robin over the nodes\n"
            "  --hostfile FILE     one node per line, \"NAME [ADDRESS [netns=NS]]\": the\n"
            "                      node's name, the IPv4 address its daemon listens on\n"
            "                      (default: NAME, which must then be an address) and a\n"
            "                      network namespace to start it in; the daemons still\n"
            "                      run on this machine. With --nodes K: the first K lines\n"
            "  -h, --help          show this help\n"
            "  --                  end of options (for a program whose name starts with '-')\n"
            "\n"
            "Output: each process's stdout and stderr go to pmixrun's stdout and stderr,\n"
            "one whole line at a time. Standard input of the processes is /dev/null.\n"
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

/* Returns -1 when the job should run, or an exit status. */
static int parse_args(job *j, int argc, char **argv)
{
    int i = 1;
    const char *hostfile = NULL;
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
        bool takes_value = strcmp(name, "-n") == 0 || strcmp(name, "-np") == 0 ||
                           strcmp(name, "--np") == 0 || strcmp(name, "--n") == 0 ||
                           strcmp(name, "--timeout") == 0 || strcmp(name, "--bind-to") == 0 ||
                           strcmp(name, "--nodes") == 0 || strcmp(name, "--map-by") == 0 ||
                           strcmp(name, "--hostfile") == 0;
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

        if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(name, "--tag-output") == 0) {
            j->tag_output = true;
        } else if (strcmp(name, "--timeout") == 0) {
            char *end;
            errno = 0;
            double t = strtod(val, &end);
            if (errno != 0 || end == val || *end != '\0' || !(t > 0) || t > 1e9)
                return bad_usage("--timeout needs a positive number of seconds, not '%s'", val);
            j->timeout = t;
        } else if (strcmp(name, "--bind-to") == 0) {
            if (strcmp(val, "core") == 0)
                j->bind_core = true;
            else if (strcmp(val, "none") == 0)
                j->bind_core = false;
            else
                return bad_usage("--bind-to takes 'core' or 'none', not '%s'", val);
        } else if (strcmp(name, "--hostfile") == 0) {
            hostfile = val;
        } else if (strcmp(name, "--map-by") == 0) {
            if (strcmp(val, "slot") == 0)
                j->map_by_node = false;
            else if (strcmp(val, "node") == 0)
                j->map_by_node = true;
            else
                return bad_usage("--map-by takes 'slot' or 'node', not '%s'", val);
        } else if (strcmp(name, "--nodes") == 0) {
            char *end;
            errno = 0;
            long k = strtol(val, &end, 10);
            if (errno != 0 || end == val || *end != '\0' || k < 1 || k > MAX_NODES) {
                char msg[128];
                snprintf(msg, sizeof msg, "--nodes needs a number of nodes from 1 to %d, not '%%s'",
                         MAX_NODES);
                return bad_usage(msg, val);
            }
            j->nnodes = (int)k;
        } else if (takes_value) { /* -n and its spellings */
            char *end;
            errno = 0;
            long n = strtol(val, &end, 10);
            if (errno != 0 || end == val || *end != '\0' || n < 1 || n > MAX_PROCS) {
                char msg[128];
                snprintf(msg, sizeof msg, "-n needs a number of processes from 1 to %d, not '%%s'",
                         MAX_PROCS);
                return bad_usage(msg, val);
            }
            j->nprocs = (int)n;
        } else {
            return bad_usage("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        return bad_usage("%sno program to run", "");
    if (j->nprocs == 0)
        return bad_usage("%s-n N is required: how many processes to start", "");
    if (hostfile != NULL) {
        char err[512];
        if (nodes_read_hostfile(j, hostfile, j->nnodes, err, sizeof err) != 0)
            return bad_usage("%s", err);
    }
    const char *bad = NULL;
    if (j->nnodes > j->nprocs)
        bad = "--nodes K (or a hostfile of K nodes) needs at least K processes (-n)";
    else if ((j->nnodes > 1 || hostfile != NULL) && j->bind_core)
        bad = "--bind-to core is not supported with --nodes or --hostfile yet";
    if (bad != NULL) {
        nodes_free_names(j);
        return bad_usage("%s", bad);
    }
    j->argv = &argv[i];
    return -1;
}

/* ---- ending the job ---- */

int live_ranks(job *j)
{
    return j->nstarted - j->nreaped;
}

static void signal_all(job *j, int sig)
{
    for (int i = 0; i < j->nstarted; i++) {
        rank_proc *r = &j->ranks[i];
        if (r->pid <= 0)
            continue;
        if (!r->reaped && sig == SIGTERM)
            r->stopped_by_us = true;
        /* The group: the rank and whatever it started. A reaped rank's
         * group may still hold its children. */
        if (kill(-r->pid, sig) != 0 && !r->reaped)
            kill(r->pid, sig);
    }
}

static void terminate(job *j)
{
    if (live_ranks(j) > 0)
        signal_all(j, SIGTERM);
    j->phase = PHASE_TERMINATING;
    j->phase_deadline = now_s() + PMIXRUN_GRACE_S;
}

/* Start ending the job for `reason`; the first reason sticks. */
void end_job(job *j, end_reason reason, int code)
{
    if (j->reason != END_NONE)
        return;
    j->reason = reason;
    j->reason_code = code;
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
    default: break;
    }
    int worst = 0;
    for (int i = 0; i < j->nstarted; i++) {
        rank_proc *r = &j->ranks[i];
        if (r->reaped && !r->stopped_by_us && r->code > worst)
            worst = r->code;
    }
    if (j->reason == END_RANK_FAILED && worst == 0)
        worst = 1;
    return worst > 255 ? 255 : worst;
}

static void rank_exited(job *j, rank_proc *r, int wstatus)
{
    r->reaped = true;
    j->nreaped++;
    if (WIFSIGNALED(wstatus)) {
        r->signaled = true;
        r->code = 128 + WTERMSIG(wstatus);
    } else {
        r->code = WEXITSTATUS(wstatus);
    }
    pthread_mutex_lock(&j->mu);
    bool connected = r->connected, finalized = r->finalized;
    pthread_mutex_unlock(&j->mu);
    if (connected && !finalized)
        job_rank_lost(j, r); /* peers' fences with it fail now */
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
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0)
            return; /* 0: none ready; -1/ECHILD: none left */
        for (int i = 0; i < j->nstarted; i++) {
            if (j->ranks[i].pid == pid && !j->ranks[i].reaped) {
                rank_exited(j, &j->ranks[i], st);
                break;
            }
        }
    }
}

void check_abort(job *j)
{
    pthread_mutex_lock(&j->mu);
    bool seen = j->abort_seen && !j->abort_reported;
    int rank = j->abort_rank, status = j->abort_status;
    char *msg = j->abort_msg;
    if (seen)
        j->abort_reported = true;
    pthread_mutex_unlock(&j->mu);
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

void handle_signals(job *j)
{
    struct signalfd_siginfo si;
    while (read(j->sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD)
            continue; /* reap() runs after every wake-up */
        if (j->reason == END_NONE) {
            fprintf(stderr, "pmixrun: received SIG%s; stopping %d process%s\n", sigabbrev_np(sig),
                    live_ranks(j), live_ranks(j) == 1 ? "" : "es");
            end_job(j, END_SIGNAL, 128 + sig);
        } else if (j->phase != PHASE_KILLING) {
            fprintf(stderr, "pmixrun: received SIG%s again; killing %d process%s now\n",
                    sigabbrev_np(sig), live_ranks(j), live_ranks(j) == 1 ? "" : "es");
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

static void run_loop(job *j)
{
    size_t cap = 2 + 2 * (size_t)j->nprocs;
    struct pollfd *pfd = calloc(cap, sizeof *pfd);
    iof_stream **who = calloc(cap, sizeof *who);
    rank_proc **whose = calloc(cap, sizeof *whose);
    if (pfd == NULL || who == NULL || whose == NULL) {
        fprintf(stderr, "pmixrun: out of memory\n");
        end_job(j, END_LAUNCH, 1);
    }
    double drain_until = 0;
    for (;;) {
        reap(j);
        check_abort(j);
        handle_time(j);
        if (live_ranks(j) == 0) {
            /* Everyone is gone: collect the output still in the pipes, but
             * do not wait for descendants that keep them open. */
            if (drain_until == 0) {
                drain_until = now_s() + 1.0;
                /* What the ranks left running in their process groups ends
                 * with the job: no orphans. */
                signal_all(j, SIGTERM);
            } else if (now_s() >= drain_until) {
                break;
            }
        }
        if (pfd == NULL)
            break;
        nfds_t n = 0;
        pfd[n++] = (struct pollfd){.fd = j->sigfd, .events = POLLIN};
        pfd[n++] = (struct pollfd){.fd = j->wake[0], .events = POLLIN};
        for (int i = 0; i < j->nstarted; i++) {
            iof_stream *s[2] = {&j->ranks[i].out, &j->ranks[i].err};
            for (int k = 0; k < 2; k++) {
                if (s[k]->fd < 0)
                    continue;
                who[n] = s[k];
                whose[n] = &j->ranks[i];
                pfd[n++] = (struct pollfd){.fd = s[k]->fd, .events = POLLIN};
            }
        }
        if (drain_until != 0 && n == 2)
            break; /* all output collected */
        int tmo = poll_timeout_ms(j);
        if (drain_until != 0) {
            int left = (int)((drain_until - now_s()) * 1000.0) + 1;
            tmo = tmo < 0 || left < tmo ? left : tmo;
            if (tmo < 0)
                tmo = 0;
        }
        int rc = poll(pfd, n, tmo);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "pmixrun: poll failed: %s\n", strerror(errno));
            break;
        }
        if (pfd[0].revents != 0)
            handle_signals(j);
        if (pfd[1].revents != 0) {
            char buf[64];
            while (read(j->wake[0], buf, sizeof buf) > 0)
                ;
        }
        for (nfds_t i = 2; i < n; i++)
            if (pfd[i].revents != 0)
                iof_stream_read(who[i], whose[i]->rank, j->tag_output);
    }
    signal_all(j, SIGKILL); /* leftovers that ignored SIGTERM */
    /* Flush and close what is left (partial lines, pipes held by orphans). */
    for (int i = 0; i < j->nstarted; i++) {
        iof_stream_close(&j->ranks[i].out, i, j->tag_output);
        iof_stream_close(&j->ranks[i].err, i, j->tag_output);
    }
    free(pfd);
    free(who);
    free(whose);
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
    sigaddset(mask, SIGUSR1);
    sigaddset(mask, SIGUSR2);
    sigaddset(mask, SIGALRM);
    /* Blocked before any thread exists, so the library's progress thread
     * inherits the mask and the signals come only through the signalfd. */
    if (sigprocmask(SIG_BLOCK, mask, NULL) != 0)
        return -1;
    j->sigfd = signalfd(-1, mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (j->sigfd < 0)
        return -1;
    signal(SIGPIPE, SIG_IGN); /* a closed stdout must not kill us */
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
        }
    }
    job_server_stop(j);
    files_run_cleanups(j);
    files_remove_topdir(j);
    if (j->ranks != NULL) {
        for (int i = 0; i < j->nprocs; i++) {
            iof_stream_close(&j->ranks[i].out, i, false);
            iof_stream_close(&j->ranks[i].err, i, false);
            hwloc_bitmap_free(j->ranks[i].cpuset);
        }
    }
    free(j->ranks);
    if (j->topo != NULL)
        hwloc_topology_destroy(j->topo);
    job_release(j);
}

int main(int argc, char **argv)
{
    job jb = {0}, *j = &jb;
    sigset_t mask;
    int status = 1;

    j->sigfd = j->wake[0] = j->wake[1] = j->devnull = -1;
    pthread_mutex_init(&j->mu, NULL);
    int rc = parse_args(j, argc, argv);
    if (rc >= 0) {
        pthread_mutex_destroy(&j->mu);
        return rc;
    }
    rc = launch_resolve(j);
    if (rc != 0) {
        nodes_free_names(j);
        pthread_mutex_destroy(&j->mu);
        return rc;
    }
    j->outs[1] = (iof_out){.fd = STDOUT_FILENO};
    j->outs[2] = (iof_out){.fd = STDERR_FILENO};
    if (gethostname(j->hostname, sizeof j->hostname - 1) != 0)
        snprintf(j->hostname, sizeof j->hostname, "localhost");
    snprintf(j->nspace, sizeof j->nspace, "pmixrun.%.200s.%ld", j->hostname, (long)getpid());

    if (setup_signals(j, &mask) != 0 || pipe2(j->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "pmixrun: cannot set up signal handling: %s\n", strerror(errno));
        goto out;
    }
    j->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    j->ranks = calloc((size_t)j->nprocs, sizeof *j->ranks);
    if (j->devnull < 0 || j->ranks == NULL) {
        fprintf(stderr, "pmixrun: cannot set up: %s\n", strerror(errno));
        goto out;
    }
    for (int i = 0; i < j->nprocs; i++) {
        j->ranks[i].rank = i;
        j->ranks[i].out.fd = j->ranks[i].err.fd = -1;
    }
    j->nlocal = j->nprocs;
    if (j->nnodes > 1 || j->node_addrs != NULL) {
        status = nodes_run(j);
        goto out;
    }
    j->nnodes = 1;
    if (files_make_topdir(j) != 0 || job_bindings(j) != 0 || job_server_start(j) != 0 ||
        job_register(j) != 0)
        goto out;

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
    run_loop(j);
    status = final_status(j);
out:
    teardown(j);
    return status;
}
