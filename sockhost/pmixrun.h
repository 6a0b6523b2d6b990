/*
 * pmixrun.h - what the parts of pmixrun share: the job context.
 *
 *   pmixrun.c          options, the main loop, how a job ends, exit status
 *   pmixrun_job.c      the job's data for the PMIx server (register_nspace),
 *                      bindings, the server engine, its loop and its upcalls
 *   pmixrun_launch.c   finding the program, fork/exec of the ranks
 *   pmixrun_iof.c      forwarding the ranks' stdout/stderr line by line (and
 *                      to --output-filename's files), and pmixrun's stdin
 *   pmixrun_files.c    the private job directory and registered cleanups
 *   pmixrun_tool.c     tools: their names, the job's process table
 *   pmixrun_ntool.c    tools of a job over daemons: asking the daemons
 *   pmixrun_pubsub.c   publish/lookup: the job's data service (pmixrun), or
 *                      forwarding to it (pmixd)
 *   pmixrun_apps.c     the job's application contexts (`:` on the command
 *                      line): lookup by rank, and how they travel to pmixd
 *   pmixrun_spawn.c    PMIx_Spawn: the spawned jobs (pmixrun alone), and the
 *                      plan of a spawn over the daemons (pmixrun --nodes)
 *
 * One thread, one loop. pmixrun (and pmixd) embed the library's server
 * engine through its own interface (px_server_host, whose upcalls carry
 * the job as their context) on the posix platform made for external
 * progress: no progress thread. The job's own descriptors (the signalfd,
 * the ranks' output and input pipes; pmixd's connections) are watches on
 * the platform's loop (px_posix_watch), and the main loop calls
 * px_posix_run_once where it would call poll(). So the engine's upcalls,
 * the platform's timers and the job's own events all run on the main
 * thread, one at a time, and the job needs no lock, no queue and no
 * global: every callback finds the job through its context pointer.
 * Code outside a callback takes the engine lock (uncontended) around its
 * calls into the engine (pmixrun_job.c).
 */
#ifndef PMIXRUN_H
#define PMIXRUN_H

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <hwloc.h>
#include <pmix_server.h>

#include "platform/px_posix.h"
#include "server/px_server.h"
#include "px_hostcore.h"
#include "px_netmap.h"

#define PMIXRUN_GRACE_S 2.0  /* SIGTERM -> SIGKILL */
#define PMIXRUN_SETTLE_S 1.0 /* a failed rank's peers see their fences fail, then SIGTERM */
#define PMIXRUN_EXIT_SETUP 1 /* the job could not be set up */
#define PMIXRUN_EXIT_USAGE 2
#define PMIXRUN_EXIT_TIMEOUT 124
#define PMIXRUN_EXIT_NOEXEC 126
#define PMIXRUN_EXIT_NOTFOUND 127

/* Where forwarded output goes (our stdout or stderr). */
typedef struct iof_out {
    int fd;
    bool broken; /* a write failed (EPIPE...): discard from now on */
} iof_out;

/* pmixd: where its ranks' output also goes once pmixrun asked for it (a
 * tool there pulled output, PD_IOF_PULL): each piece a stream offers its
 * server is passed to send() as well while `on`. */
typedef struct iof_relay {
    bool on;
    void (*send)(void *ctx, const pmix_proc_t *src, pmix_iof_channel_t channel, const void *data,
                 size_t len);
    void *ctx;
} iof_relay;

/* pmixd: output a spawned job's streams offer its server while the
 * spawner on this node waits for its answer (on), kept until then, when
 * its PMIX_FWD_STDOUT subscription exists (iof_hold_release). */
typedef struct iof_held {
    pmix_proc_t src;
    pmix_iof_channel_t channel;
    char *p;
    size_t len;
} iof_held;
typedef struct iof_hold {
    bool on;
    iof_held *v;
    size_t n;
} iof_hold;

/* A PD_IOF payload that pmixrun holds for a spawner (job.fwd_held). */
struct fwd_piece {
    uint8_t *p;
    size_t len;
};

/* One of a rank's output pipes. */
typedef struct iof_stream {
    int fd;        /* read end, -1 once closed */
    iof_out *out;  /* our stdout or stderr, or NULL (--output-filename DIR:nocopy) */
    iof_out *file; /* the rank's file under --output-filename, or NULL */
    char *buf;     /* bytes of an unfinished line */
    size_t len, cap;
    bool line_start;   /* the next byte written begins a line */
    px_posix_watch *w; /* on the loop while the pipe is open (iof_stream_watch) */
    int rank;          /* for the watch's reads: the rank and --tag-output */
    bool tag;
    int job; /* 0: a rank of the first job; N: of the Nth spawned job (tagged "[sN:rank] ") */
    /* Also offered to the server's pulls (tools' PMIx_IOF_pull), untagged,
     * as output of `src` on `channel`; srv NULL: not (iof_stream_deliver). */
    px_server *srv;
    px_posix *plat;
    pmix_proc_t src;
    pmix_iof_channel_t channel;
    const iof_relay *relay; /* pmixd: and to pmixrun (NULL: not) */
    iof_hold *hold;         /* pmixd: the job's; while on, kept, not offered */
} iof_stream;

typedef struct rank_proc {
    int rank;
    pid_t pid; /* 0 until started; also the process group id */
    bool reaped;
    int code; /* exit status, or 128+signal */
    bool signaled;
    bool stopped_by_us; /* still running when we sent SIGTERM */
    bool deregistered;
    bool connected; /* set by the server's upcalls (pmixrun_job.c) */
    bool finalized;
    iof_stream out, err;
    iof_out files[2];      /* --output-filename: its stdout and stderr files (fd -1: none) */
    int in_fd;             /* --stdin: the write end of its stdin pipe, -1 if none */
    px_posix_watch *in_w;  /* and its watch */
    size_t in_off;         /* how much of job.in_buf it has been given */
    hwloc_bitmap_t cpuset; /* where it runs: its binding, or all allowed PUs */
    bool bound;
    cpu_set_t affinity; /* the same for sched_setaffinity in the child */
} rank_proc;

typedef struct cleanup_item {
    struct cleanup_item *next;
    char *path;
    bool is_dir;
    bool recursive;
    bool leave_top;
    char *ignore; /* comma-separated names to keep, or NULL */
} cleanup_item;

/* A PMIx_Abort waiting for its answer: given only once the ranks are gone,
 * so that PMIx_Abort never returns to a process that asked to die. */
typedef struct pending_abort {
    struct pending_abort *next;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} pending_abort;

typedef enum {
    PHASE_RUNNING,     /* ranks run on their own */
    PHASE_SETTLING,    /* a rank failed: give peers a moment to see it */
    PHASE_TERMINATING, /* SIGTERM sent */
    PHASE_KILLING,     /* SIGKILL sent */
} job_phase;

typedef enum {
    END_NONE,
    END_RANK_FAILED, /* non-zero exit, signal, or exit without PMIx_Finalize */
    END_ABORT,       /* PMIx_Abort */
    END_TIMEOUT,
    END_SIGNAL,    /* pmixrun got SIGINT/SIGTERM/SIGHUP/SIGQUIT/SIGALRM */
    END_LAUNCH,    /* a rank could not be started */
    END_REQUESTED, /* a system server told to stop (SIGTERM, SIGINT, a tool's terminate) */
} end_reason;

/* --bind-to: what each process is bound to. */
typedef enum {
    BIND_NONE,
    BIND_CORE,
    BIND_SOCKET,
    BIND_NUMA
} bind_kind;

/* --stdin: who gets pmixrun's standard input. */
#define STDIN_NONE (-1)
#define STDIN_ALL (-2)

typedef struct pubsub_state pubsub_state; /* pmixrun_pubsub.c */
typedef struct ntool_state ntool_state;   /* pmixrun_ntool.c */
typedef struct rndz rndz;                 /* pmixrun_rndz.c */
/* One application context: the ranks first .. first + size - 1 run argv
 * (prterun's and mpirun's `-n N [--pset NAME] [-x VAR] [--wdir DIR] prog
 * args`, the contexts separated by `:`). Everything is owned by the job
 * (job_release frees it). */
typedef struct job_app {
    int first, size;
    char **argv;    /* program and arguments, NULL-terminated */
    char *prog;     /* argv[0] resolved (launch_resolve) */
    char **env_set; /* -x VAR=VAL: set in its ranks' environment (NULL-terminated) */
    char *wdir;     /* --wdir, absolute, or NULL: where pmixrun was started */
    char *pset;     /* --pset: the process set of its ranks, or NULL */
} job_app;

typedef struct job {
    /* options */
    int nprocs;
    double timeout; /* seconds; 0 = none */
    bool tag_output;
    bind_kind bind_to;
    bool report_bindings;
    bool stop_in_init;     /* PMIX_DEBUG_STOP_IN_INIT for every rank (--stop-in-init) */
    bool system_server;    /* --system-server: no job of its own, runs tools' spawns */
    bool sys_file;         /* the system rendezvous file is ours to remove */
    bool sys_jobs;         /* pmixd under a system server: an empty first job, and each spawned
                            * job ends alone (pmixd_spawn.c) */
    bool sys_stopping;     /* a system server's spawned job over daemons lost a rank: its other
                            * ranks are being stopped (pmixrun_nodes.c) */
    bool terminate_asked;  /* a tool's PMIX_JOB_CTRL_TERMINATE (system server) */
    bool no_oversubscribe; /* refuse more processes than cores on a node */
    bool merge_stderr;     /* a rank's stderr goes into its stdout */
    char *output_dir;      /* --output-filename: absolute, with "/1" unless nojobid */
    bool output_copy;      /* and the output still goes to pmixrun's stdout/stderr */
    int stdin_to;          /* --stdin: a rank, STDIN_ALL or STDIN_NONE */
    job_app *apps;         /* the application contexts, in rank order (at least one) */
    int napps;

    /* The map. pmixrun alone: one node, every rank local (rank_node and
     * node_names NULL, nlocal = nprocs, ranks[i].rank = i). pmixd and
     * pmixrun --nodes: nnodes nodes, rank_node[r] the node of rank r, and
     * in pmixd ranks[0..nlocal) are this node's ranks in rank order. */
    int nnodes;
    int node; /* this node's id */
    int nlocal;
    uint32_t *rank_node;
    char **node_names;
    char **node_addrs;        /* pmixrun --hostfile: the address each daemon listens on */
    char **node_netns;        /* and the network namespace it runs in (NULL entries: none) */
    int isolate;              /* pmixrun --isolate: a vhost_mode (vhost.h), VHOST_AUTO = 0 */
    bool slurm;               /* the nodes are a Slurm allocation's: the daemons are a step */
    bool ssh;                 /* --hostfile names hosts: each daemon started by the agent */
    const char *launch_agent; /* --launch-agent: the command that starts them (NULL: ssh) */
    int launch_fanout;        /* --launch-fanout: daemons a daemon starts (0: the default) */
    const char *if_include;   /* --if-include: interfaces/subnets for the daemons' addresses */
    bool map_by_node;         /* --map-by node (round robin) rather than slot */
    int *node_slots;          /* --host name:slots or --map-by ppr: ranks per node, or NULL */
    int ppr_n;                /* --map-by ppr:N:OBJ: N processes per OBJ (0: no ppr) */
    hwloc_obj_type_t ppr_obj; /* HWLOC_OBJ_MACHINE (node), _CORE or _PACKAGE (socket) */
    /* pmixd: its cross-node upcalls (fence_nb and direct_modex, called
     * with cross_ctx) in place of the single-node ones; NULL: pmixrun's. */
    const px_server_host *cross;
    void *cross_ctx;
    /* pmixd: where job control's signals go (to pmixrun, which sends them to
     * the ranks' daemons: pmixrun_jctrl.c); NULL: to this node's ranks. */
    pmix_status_t (*jctrl_up)(void *ctx, int sig, const uint32_t *ranks, size_t n);
    void *jctrl_ctx;
    /* pmixd: the relay of its ranks' output to pmixrun (pmixd.c); NULL in
     * pmixrun. */
    const iof_relay *relay;
    /* pmixrun alone: the context ids of the groups it constructs (the
     * host core's rule, as node 0); pmixd's are its own (pmixd.h). */
    px_ctxid_gen ctxids;
    struct nodes *nodes; /* pmixrun --nodes: its daemons (pmixrun_nodes.c) */
    /* pmixrun --nodes: what a tool's accepted PMIx_IOF_pull also does
     * (nodes_iof_pull); NULL: nothing (the output is offered already). */
    pmix_status_t (*iof_pull)(struct job *j, pmix_op_cbfunc_t cbfunc, void *cbdata);
    ntool_state *ntool; /* pmixrun --nodes: what tools asked the daemons (pmixrun_ntool.c) */
    rndz *rndz;         /* started by a debugger: PMIX_LAUNCHER_RNDZ_URI (pmixrun_rndz.c) */
    /* pmixrun: told of the events its own ranks raise (rndz_event); NULL
     * in pmixd, and when nobody listens */
    void (*rank_event)(struct job *j, pmix_status_t status, const pmix_proc_t *source);

    char hostname[256];
    pmix_nspace_t nspace;
    char *topdir; /* $TMPDIR/pmixrun.<uid>.<pid>.XXXXXX: socket, nsdir, procdirs */
    char *nsdir;
    hwloc_topology_t topo;
    int ncores; /* the cores this node's processes may use (job_bindings) */

    /* --stdin: pmixrun's stdin, read into in_buf and written to each
     * target's pipe (rank_proc.in_fd) before more is read. */
    bool in_open;
    char *in_buf;
    size_t in_len;
    /* Input that comes as pushes (iof_push_queue) rather than from our own
     * stdin: a spawned job's from tools (PMIx_IOF_push; its targets are the
     * spawn's PMIX_STDIN_TGT), or in pmixd pmixrun's --stdin (PD_STDIN).
     * Pushes queue in order and each becomes the chunk in turn; in_cb
     * answers the pusher once every target has it. */
    bool in_pushed;
    struct iof_push *pushes;
    pmix_op_cbfunc_t in_cb;
    void *in_cbdata;

    rank_proc *ranks;
    int nstarted;
    int nreaped;
    iof_out outs[3]; /* [1] stdout, [2] stderr */
    int devnull;

    int sigfd;
    bool child_exited;            /* a SIGCHLD came (or may have): reap */
    px_posix *plat;               /* the loop (job_platform), NULL for pmixrun --nodes */
    px_posix_watch *sig_w, *in_w; /* the signalfd's watch, --stdin's */
    px_server *srv;               /* the server engine (job_server_start) */
    char *uri;                    /* where clients reach it: PMIX_SERVER_URI */
    unsigned tools_named;         /* tools named so far (pmixrun_tool.c) */
    bool server_up;
    bool nspace_registered;

    job_phase phase;
    double phase_deadline;
    double timeout_at;
    end_reason reason;
    int reason_code; /* exit status decided by the reason (abort, signal, timeout, launch) */

    /* Written by the abort and job_control upcalls. */
    bool abort_seen;
    bool abort_reported;
    int abort_rank;
    int abort_status;
    char *abort_msg;
    pending_abort *aborts;
    cleanup_item *cleanups;

    /* publish/lookup (pmixrun_pubsub.c): the data service, or what a
     * daemon forwarded to it; NULL until pubsub_init */
    pubsub_state *pubsub;

    /* The network (pmixrun_net.c): read by net_load, fitted to the job's
     * nodes by net_fit (pmixrun) or received by net_read (pmixd). */
    px_netmap net;
    bool net_loaded; /* net holds a description (or, once fitted, the default) */
    /* Its planes (names only) and every node's NIC device on each
     * (nic_devs[node][plane], "" for none: the NIC is named after the
     * node): from the nodes' NICs (net_planes, pmixrun) or net_read
     * (pmixd); planes.n 0 before: one plane, NICs named after the nodes. */
    px_netplanes planes;
    px_netdevs *nic_devs;
    /* pmixrun alone: the jobs its ranks spawned (pmixrun_spawn.c). Each is
     * a job of its own (its namespace, apps, ranks) that borrows this
     * one's loop, server, directory and output; pmixrun ends when every
     * rank of every job is gone. In a spawned job `parent` is the first
     * job, else NULL. */
    struct job *children, *next_child, *parent;
    int nspawned;            /* jobs spawned so far: their names' suffix */
    pmix_proc_t spawner;     /* a spawned job: who asked for it */
    bool notify_completion;  /* PMIX_NOTIFY_COMPLETION: tell the spawner at the end */
    bool spawn_ended;        /* every rank is gone and the end was told */
    bool spawn_failed;       /* the spawn failed: its ranks were killed */
    pmix_info_t *extra_info; /* job_register adds these to the job's data */
    size_t nextra;
    int spawn_no; /* a spawned job: N of its ".sN" name (and of its "[sN:rank]" tag) */
    /* pmixrun --nodes (pmixrun_spawn.c, pmixd_spawn.c): a spawned job over
     * the daemons. In pmixrun: the node whose daemon asked and its request
     * id, how many daemons said they started their ranks, the worst status
     * they gave, and whether the requestor has its answer. In pmixd: the
     * job's map as the host core sees it (px_hc_job_add). */
    int spawn_from;
    uint32_t spawn_id;
    int spawn_acks;
    pmix_status_t spawn_status;
    bool spawn_answered;
    /* pmixrun --nodes: a tool's spawn on pmixrun's own server (spawn_from
     * -1) is answered through this callback (once) */
    pmix_spawn_cbfunc_t spawn_cb;
    void *spawn_cbdata;
    /* PMIX_COSPAWN_APP (spawn_plan): the job and the job of its cospawned
     * apps point at each other; co_daemons marks the second, whose answer
     * the first's waits for */
    struct job *co;
    bool co_daemons;
    bool spawn_deferred; /* a tool's, before the daemons had the first job: sent after it */
    /* pmixrun --nodes: the PMIX_FWD_*_CHANNEL bits the spawn asked for;
     * the output of the job's ranks on other nodes goes to the spawner's
     * daemon (pmixrun_nodes.c), held here (PD_IOF payloads) until the
     * spawner has its answer. */
    unsigned fwd_channels;
    struct fwd_piece *fwd_held;
    size_t nfwd_held;
    iof_hold hold; /* pmixd: a job a rank of this node spawned, until its answer */
    px_jobmap *xmap;
    /* The server's spawn upcall goes here (pmixrun: spawn_up; pmixd:
     * spawnd_up, to pmixrun); NULL: PMIX_ERR_NOT_SUPPORTED */
    pmix_status_t (*spawn)(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                           size_t ninfo, const pmix_app_t apps[], size_t napps,
                           pmix_spawn_cbfunc_t cbfunc, void *cbdata);
} job;

/* pmixrun.c: the rules of how a job ends, shared by both ways to run it */
double now_s(void);
void job_release(job *j); /* free what any job holds (pmixrun and pmixd) */
/* Add to `mask` the signals besides SIGINT, SIGTERM, SIGHUP, SIGQUIT and
 * SIGALRM that would end pmixrun or pmixd at once by default and that come
 * from outside (SIGXCPU, SIGVTALRM, SIGPROF, SIGPWR, SIGSTKFLT, SIGPOLL and
 * the real-time signals): they end the job in order instead, so that its
 * directory goes too. Not SIGSEGV and its kind, which the process raises
 * itself. */
void job_more_ending_signals(sigset_t *mask);
int live_ranks(job *j);
void end_job(job *j, end_reason reason, int code); /* the first reason sticks */
int final_status(job *j);
/* A rank ended (r->reaped, code, signaled set): print why it ends the job,
 * if it does, and end it. */
void rank_judge(job *j, rank_proc *r, int pid, bool connected, bool finalized);
void check_abort(job *j);    /* report a PMIx_Abort recorded in the job */
void handle_signals(job *j); /* read the signalfd (a SIGCHLD sets child_exited) */
void handle_time(job *j);    /* --timeout and the phases of stopping */
int poll_timeout_ms(job *j);

/* pmixrun_nodes.c: pmixrun --nodes K (K > 1) or --hostfile */
int nodes_run(job *j); /* the job's exit status */
/* A tool's PMIx_IOF_pull of the job over daemons (up_iof_pull): the
 * daemons are asked to send their ranks' output to pmixrun (PD_IOF_PULL),
 * which offers it to the server as on one node. PMIX_OPERATION_SUCCEEDED
 * if they already do, else PMIX_SUCCESS and cbfunc (PMIX_SUCCESS) once
 * every daemon answered or is gone, or after 3 s at the latest (never
 * inside this call). */
/* Free the output pieces a spawned job holds for its spawner (fwd_held). */
void spawn_fwd_drop(job *c);
pmix_status_t nodes_iof_pull(job *j, pmix_op_cbfunc_t cbfunc, void *cbdata);
/* Read --hostfile into node_names/node_addrs and nnodes (at most
 * `limit` nodes when limit > 0). 0, or -1 with a message in err. */
int nodes_read_hostfile(job *j, const char *path, int limit, char *err, size_t errlen);
void nodes_free_names(job *j); /* node_names and node_addrs */
/* Inside a Slurm allocation: its nodes as the job's (slurm set). 1, 0 if
 * not inside one, -1 with the reason in err. */
int nodes_from_slurm(job *j, char *err, size_t errlen);
/* Forward `sig` to the ranks of every node through their daemons (SIGSTOP
 * as SIGTSTP: a daemon stops its ranks but not itself). */
void nodes_signal(job *j, int sig);
/* Raise event `status` from the job ({nspace, PMIX_RANK_WILDCARD}) to every
 * process of the job on every daemon (pmixrun_events.c). */
void nodes_raise(job *j, pmix_status_t status, const pmix_info_t *info, size_t ninfo);
/* The same from namespace `nspace` (a spawned job's) to its clients. */
void nodes_raise_ns(job *j, const char *nspace, pmix_status_t status, const pmix_info_t *info,
                    size_t ninfo);
/* An event a tool of pmixrun's notified (the server's notify_event
 * upcall): to every daemon, each delivers it to its clients in range
 * (PMIX_DEBUGGER_RELEASE of --stop-in-init, for one); pmixrun_ntool.c. */
void nodes_notify(job *j, pmix_status_t status, const pmix_proc_t *source, pmix_data_range_t range,
                  const pmix_info_t *info, size_t ninfo);
/* Send a frame to node `node`'s daemon: 0, or -1 if it is not there (not
 * up yet, gone, or the job is stopping). */
struct tl_buf;
int nodes_send(job *j, int node, uint8_t type, const struct tl_buf *b);

/* pmixrun_rndz.c: started by a debugger (PMIX_LAUNCHER_RNDZ_URI in the
 * environment), pmixrun connects back to it before its job starts. Each
 * is a no-op without it (and in pmixd). rndz_start: connect, announce
 * PMIX_LAUNCHER_READY, wait for the debugger's release and apply its
 * directives (stop in init): 0, or -1 (message printed). rndz_launched:
 * the first job's ranks are started; rndz_event: an event a rank raised
 * (PMIX_READY_FOR_DEBUG counts); either raises PMIX_LAUNCH_COMPLETE when
 * the job is ready for the debugger. rndz_end: the job is over with exit
 * status `status` (PMIX_EVENT_JOB_END to the debugger, then leave it);
 * rndz_free: before the loop goes. */
int rndz_start(job *j);
void rndz_launched(job *j);
void rndz_event(job *j, pmix_status_t status, const pmix_proc_t *source);
void rndz_event_packed(job *j, const uint8_t *p, size_t len);
void rndz_end(job *j, int status);
void rndz_free(job *j);

/* pmixrun_job.c */
/* How many objects of `type` this process may run on (loads j->topo);
 * -1 if the topology cannot be read (message printed). */
int job_count_objs(job *j, hwloc_obj_type_t type);
int job_bindings(job *j); /* cpusets per rank; 0 or -1 (message printed) */
/* Make the job's loop: the posix platform for external progress, and the
 * signalfd's watch, whose callback is `on_signal(arg, ...)`. 0, or -1
 * (message printed). */
int job_platform(job *j, px_posix_watch_cb on_signal, void *arg);
/* Destroy the job's watches and then the platform (after job_server_stop). */
void job_platform_free(job *j);
int job_server_start(job *j); /* the server engine, listening in topdir */
int job_register(job *j);     /* register the namespace and every local rank */
/* pmixrun --nodes: register the job's namespace with pmixrun's own server,
 * which runs none of its ranks, so that its tools can PMIx_Get the job,
 * node, app and rank data the daemons register (without a node of its own:
 * a Get names the node or the rank). 0, or -1 (message printed). */
int job_register_view(job *j);
void job_rank_lost(job *j, rank_proc *r); /* tell the server a rank died unfinalized */
/* Rank `r` of job `j` was reaped with waitpid's `wstatus`: note how it
 * ended (code, signaled) and, if it had connected and not finalized, tell
 * the server (job_rank_lost). Says in *connected and *finalized what the
 * rank had done, for rank_judge. */
void job_rank_reaped(job *j, rank_proc *r, int wstatus, bool *connected, bool *finalized);
/* A spawned job `c` (zeroed) takes from its first job `j` what it shares
 * and does not own: the loop, server, directory, output streams and their
 * settings; no stdin, no signal descriptor of its own. */
void job_borrow(job *c, job *j);
/* Send `sig` to every living started rank's process group (the rank and
 * what it started), or to the rank itself if its group is gone; a SIGTERM
 * marks them as stopped by us. A reaped rank's group is left alone: its
 * number may already belong to another process. */
void job_signal_ranks(job *j, int sig);
void job_server_stop(job *j);
/* Add to `env` what rank `rank` needs to reach the server (the engine's
 * identity variables and PMIX_SERVER_URI). PMIX_SUCCESS or an error. */
pmix_status_t job_setup_fork(job *j, int rank, char ***env);
/* pmixd: ask the server for the data of its local process `proc` for
 * another node (px_server_dmodex_request: cbfunc may run before this
 * returns). */
pmix_status_t job_dmodex_request(job *j, const pmix_proc_t *proc, pmix_dmodex_response_fn_t cbfunc,
                                 void *cbdata);
rank_proc *job_rank_of(job *j, const pmix_proc_t *proc);
const char *job_node_name(const job *j, int node);
int job_node_of(const job *j, int rank);

/* pmixrun_net.c */
/* Read the network's description: `path` (--topology), else in a Slurm
 * allocation `scontrol show topology`, else none (net_fit then makes the
 * flat default). 0, or -1 with a sentence in err (a file that cannot be
 * read or parsed). */
int net_load(job *j, const char *path, char *err, size_t errlen);
/* Fit it to the job's nodes (job_node_name), or make the flat default
 * without one. 0, or -1 (message printed: fewer nodes described than the
 * job has). */
int net_fit(job *j);
/* This node's NICs: those of the hwloc XML file that PMIXLAB_NICS_XML
 * names for node `node` (a test hook: "A.xml,B.xml", node I reads the
 * I-th file, the last one for the nodes after), else those of this
 * machine, from j->topo, which this loads (with its I/O devices,
 * px_nics_topology_prepare) if nobody did yet and which the bindings
 * then use too. 0, or -1 with a sentence in err (a hook's file that
 * cannot be read); a machine hwloc cannot read has no NIC. */
int net_node_nics(job *j, int node, px_nics *out, char *err, size_t errlen);
/* The job's planes from every node's NICs (nics[0..nnodes-1]) and the
 * description's PlaneName= lines (px_netplanes_make_nodes), after
 * net_fit. 0, or -1 with a message printed (a node without a plane's
 * NIC, no memory). */
int net_planes(job *j, const px_nics *nics);
/* Every node's coordinates in PD_JOB, and reading them back in pmixd. */
struct tl_buf;
struct tl_reader;
void net_write(const job *j, struct tl_buf *b);
int net_read(job *j, struct tl_reader *r); /* 0, or -1 on a malformed frame */
/* Append the PMIX_NETWORK_* keys of every node (px_netinfo) to a
 * namespace's registration; nothing before net_fit or net_read. */
pmix_status_t net_keys(job *j, px_ivec *out);
/* pmixrun_spawn.c: PMIx_Spawn (one node; the plan over daemons) */
/* The host table's spawn upcall (px_server_host, hctx = the first job). */
pmix_status_t spawn_up(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                       size_t ninfo, const pmix_app_t apps[], size_t napps,
                       pmix_spawn_cbfunc_t cbfunc, void *cbdata);
/* The rank of a spawned job whose process is `pid`, with its job in *in;
 * NULL if none. */
rank_proc *spawn_rank_of_pid(job *j, pid_t pid, job **in);
/* A rank of spawned job `c` ended (waitpid's status): judged as the first
 * job's are; the job's end is told once its last rank is gone. */
void spawn_rank_exited(job *j, job *c, rank_proc *r, int wstatus);
int spawn_live_ranks(const job *j);     /* the spawned jobs' ranks not yet reaped */
void spawn_signal_all(job *j, int sig); /* as signal_all, for the spawned jobs' ranks */
bool spawn_output_open(const job *j);
void spawn_close_output(job *j);    /* flush and close the spawned ranks' pipes */
int spawn_worst_code(const job *j); /* the worst exit status of a spawned rank */
void spawn_free_all(job *j);        /* at teardown, after the server is gone */
void spawn_child_free(job *c);      /* one spawned job (not linked to its parent) */
/* pmixrun --nodes: the plan of a daemon's or a tool's spawn request from
 * `proc`: the new job (not yet linked to j) with its apps' programs found, its map
 * over the current nodes (rank_node: PMIX_MAPBY node round robin, else in
 * blocks, only in free slots where slots are known (--host name:slots,
 * --map-by ppr, --nooversubscribe); PMIX_HOST and PMIX_ADD_HOST name
 * nodes of the job; debugger daemons beside their target's ranks) and a
 * rank_proc per rank (pid 0), or the error to answer (a message on stderr
 * says why). With PMIX_COSPAWN_APP apps, (*out)->co is the planned job of
 * those apps (not linked either; its co_daemons set). */
pmix_status_t spawn_plan(job *j, const pmix_proc_t *proc, const pmix_info_t job_info[],
                         size_t ninfo, const pmix_app_t apps[], size_t napps, job **out);

/* pmixrun_apps.c */
job_app *job_app_of(job *j,
                    int rank); /* the app of `rank` (the last one for a rank past the end) */
void job_apps_free(job *j);
/* PD_JOB's apps (pmixd_proto.h): u32 napps, then per app u32 size, str
 * wdir ("" for none), str pset ("" for none), str prog, u32 argc, argc x
 * str, u32 nenv, nenv x str. apps_read fills j->apps and j->napps and
 * checks that the sizes add up to j->nprocs: 0, or -1 if the frame is
 * malformed or memory runs out (what it read is freed by job_release). */
struct tl_buf;
struct tl_reader;
void apps_write(const job *j, struct tl_buf *b);
int apps_read(job *j, struct tl_reader *r);

/* pmixrun_launch.c */
int launch_resolve(job *j);            /* exit status on failure (message printed), 0 if found */
int launch_rank(job *j, rank_proc *r); /* 0, or an exit status (message printed) */

/* pmixrun_iof.c */
void iof_stream_init(iof_stream *s, int fd, iof_out *out);
/* Read the stream from the job's loop as its output comes (iof_stream_read
 * with `rank` and `tag`); the watch goes when the stream closes. 0 or -1. */
int iof_stream_watch(iof_stream *s, px_posix *p, int rank, bool tag);
/* Offer what the stream forwards to `srv`'s pulls too (px_server_iof_deliver,
 * under the engine lock of `p`), as output of rank `rank` of `nspace` on
 * `channel` (PMIX_FWD_STDOUT_CHANNEL or _STDERR_). */
/* A PD_IOF_DATA piece (pmixd_proto.h), read from r after its kind: its
 * bytes offered to srv as output of its rank on its channel, under the
 * platform's lock. Its namespace (malloc'd, the caller frees it) and, in
 * *chan if not NULL, its channel; NULL when the piece is malformed and
 * nothing was delivered. */
struct tl_reader;
char *iof_piece_deliver(struct tl_reader *r, px_server *srv, px_posix *p, uint32_t *chan);
void iof_stream_deliver(iof_stream *s, px_server *srv, px_posix *p, const char *nspace, int rank,
                        pmix_iof_channel_t channel);
/* Read what is there and forward complete lines. false once the pipe is at
 * EOF (it is then closed and any partial line flushed). */
/* Offer what `h` kept to the server, in order, and stop keeping (pmixd,
 * once the spawner has its answer); drop: free it unoffered. */
void iof_hold_release(iof_hold *h, px_server *srv, px_posix *p);
void iof_hold_drop(iof_hold *h);
bool iof_stream_read(iof_stream *s, int rank, bool tag);
void iof_stream_close(iof_stream *s, int rank, bool tag);
/* --output-filename: make the rank's directory and open its files, and
 * point its streams at them. 0, or -1 (message printed). */
int iof_open_files(job *j, rank_proc *r);
void iof_close_files(rank_proc *r);
/* --stdin: pmixrun's stdin goes to the ranks' pipes (rank_proc.in_fd),
 * one chunk at a time, through watches on the job's loop. iof_stdin_watch
 * watches stdin (0, or -1 if it cannot), iof_stdin_watch_rank a rank's
 * pipe once it is launched, iof_stdin_arm says before every turn of the
 * loop what to wait for (stdin when every target has the chunk, else the
 * pipes that still want it); iof_stdin_close closes every pipe, so the
 * ranks read end of file. */
int iof_stdin_watch(job *j);
int iof_stdin_watch_rank(job *j, rank_proc *r);
void iof_stdin_arm(job *j);
void iof_stdin_close(job *j);
/* The push_stdin upcall (PMIx_IOF_push), `hctx` the first job: the input
 * goes to the targeted ranks' pipes, of a job spawned with
 * PMIX_STDIN_TGT; other jobs read no input from tools (PMIX_ERR_NOT_FOUND). */
pmix_status_t iof_push_up(void *hctx, const pmix_proc_t *source, const pmix_proc_t targets[],
                          size_t ntargets, const pmix_info_t dirs[], size_t ndirs, const void *data,
                          size_t len, bool eof, pmix_op_cbfunc_t cbfunc, void *cbdata);
/* A spawn's PMIX_STDIN_TGT (a rank as uint32_t, pmix_rank_t or a
 * pmix_proc_t's rank) into *to: the rank, or STDIN_ALL for
 * PMIX_RANK_WILDCARD; PMIX_ERR_BAD_PARAM for another type or a rank above
 * 65535, *to untouched. */
pmix_status_t iof_stdin_target(const pmix_info_t *in, int *to);
/* Queue input for the ranks of `t` (which reads pushed input: in_pushed)
 * that `targets` name and that have a stdin pipe; answered as push_stdin
 * is (px_server.h). pmixd feeds pmixrun's --stdin through it (PD_STDIN). */
pmix_status_t iof_push_queue(job *t, const pmix_proc_t targets[], size_t ntargets, const void *data,
                             size_t len, bool eof, pmix_op_cbfunc_t cbfunc, void *cbdata);

/* pmixrun_files.c */
int files_make_topdir(job *j);        /* 0 or -1 (message printed) */
void files_remove_stale(void);        /* job directories of ours in $TMPDIR whose process is gone */
int files_make_dir(const char *path); /* mkdir 0700; 0 or -1 (errno) */
void files_remove_tree(const char *path);
/* Record a cleanup registered through job_control. */
void files_register_cleanup(job *j, const char *list, bool is_dir, bool recursive, bool leave_top,
                            const char *ignore);
void files_run_cleanups(job *j);
void files_remove_topdir(job *j);

/* pmixrun_tool.c: tools attached to the job */
bool tool_support(const job *j); /* this server accepts tools (every rank is local) */
/* After the server listens: accept tools and write the rendezvous files.
 * 0, or -1 (message printed). */
int tool_start(job *j);
/* Remove the system rendezvous file tool_start wrote (--system-server), if
 * it still holds this server's URI. */
void tool_stop(job *j);
/* The host table's tool upcalls (px_server_host, hctx = the job). */
void tool_connected_up(void *hctx, const pmix_info_t info[], size_t ninfo,
                       pmix_tool_connection_cbfunc_t cbfunc, void *cbdata);
pmix_status_t tool_query_up(void *hctx, const pmix_proc_t *requestor, const pmix_query_t queries[],
                            size_t nqueries, pmix_info_cbfunc_t cbfunc, void *cbdata);
/* The state of a rank as PMIx names it (its rank_proc and pid; 0: not
 * started). */
pmix_proc_state_t tool_rank_state(const rank_proc *r, pid_t pid);

/* pmixrun_ntool.c: tools of a job over daemons (pmixrun --nodes). The
 * key of a query for the ranks' stacks (pmixstack; a string: per rank a
 * line "@rank R", then what the stack collector printed) and its
 * qualifier, the collector's timeout per process (PMIX_UINT32 seconds). */
#define NTOOL_QUERY_STACKS "pmixlab.query.stacks"
#define NTOOL_STACKS_TIMEOUT "pmixlab.stacks.timeout"
/* `send` sends a frame to a node's daemon (nodes_send). 0, or -1 out of
 * memory. */
struct tl_buf;
int ntool_init(job *j, int (*send)(job *j, int node, uint8_t type, const struct tl_buf *b));
/* Answer what still waits with what came, and free the state. */
void ntool_fini(job *j);
/* Whether a query needs the daemons (a process table or the stacks) and
 * is not being answered already; ntool_query then takes it (the query
 * upcall's return rules: PMIX_SUCCESS and cbfunc later, within the
 * request's deadline, or an error and no cbfunc). */
bool ntool_wants(job *j, const pmix_query_t queries[], size_t nqueries);
pmix_status_t ntool_query(job *j, const pmix_proc_t *requestor, const pmix_query_t queries[],
                          size_t nqueries, pmix_info_cbfunc_t cbfunc, void *cbdata);
void ntool_reply(job *j, int node, const uint8_t *p, size_t len); /* a PD_TOOL_REP */
void ntool_node_gone(job *j, int node);                           /* its daemon will not answer */
void ntool_tick(job *j);      /* answer the requests whose deadline passed */
int ntool_timeout_ms(job *j); /* until the next deadline, -1 if none */
/* While tool_query_up answers a request: the host name node of `rank`'s
 * daemon reported (NULL if none), the daemon's view of rank `r` over
 * what pi says (host, executable, pid, state), and the stacks' text. */
const char *ntool_host(const job *j, int rank);
void ntool_proc_info(const job *j, const rank_proc *r, pmix_proc_info_t *pi);
pmix_status_t ntool_stacks(job *j, const char *key, pmix_info_t *out);
/* pmixrun_events.c: events that cross nodes. events_pack appends an event
 * (as a byte string) to b: 0, or -1 if it cannot be packed. events_deliver
 * reads one (a PD_EVENT_FWD frame's payload) and hands it to the job's
 * server, which delivers it to its clients in range; on the loop's thread,
 * with the engine lock held. */
int events_pack(struct tl_buf *b, pmix_status_t status, const pmix_proc_t *source,
                pmix_data_range_t range, const pmix_info_t info[], size_t ninfo);
void events_deliver(job *j, const uint8_t *p, size_t len);
/* PMIX_EVENT_JOB_END of spawned job `nspace` (its worst exit status
 * `worst`) to its spawner through `srvjob`'s server, for a spawn that
 * asked PMIX_NOTIFY_COMPLETION; the engine lock held. */
void spawn_notify_end(job *srvjob, const char *nspace, const pmix_proc_t *spawner, int worst);

/* pmixrun_jctrl.c: PMIx_Job_control's kill, signal and terminate.
 * jctrl_signal sends `sig` to the targets (no target: the whole namespace)
 * on every node; PMIX_ERR_NOT_FOUND for another namespace,
 * PMIX_ERR_BAD_PARAM for a rank out of the job. jctrl_apply signals those
 * of `ranks` that run on this node. A PD_JCTRL payload is written by
 * jctrl_pack and read by jctrl_read (0, or -1 if malformed; *ranks to
 * free). */
pmix_status_t jctrl_signal(job *j, int sig, const pmix_proc_t targets[], size_t ntargets);
void jctrl_apply(job *j, int sig, const uint32_t *ranks, size_t n);
int jctrl_pack(struct tl_buf *b, int sig, const uint32_t *ranks, size_t n);
int jctrl_read(const uint8_t *p, size_t len, int *sig, uint32_t **ranks, size_t *n);

/* pmixrun_pubsub.c: publish, lookup, unpublish. pmixrun keeps the job's
 * data service (pubsub_start, on the main thread; pubsub_stop answers
 * what still waits); pmixd forwards its ranks' requests to it. */
struct tl_link;
int pubsub_start(job *j); /* 0 or -1 (message printed) */
void pubsub_stop(job *j);
/* Before the server starts: serve the requests (pmixrun), or forward them
 * to pmixrun over the control link (pmixd). 0, or -1 (message printed). */
int pubsub_init(job *j, bool forwarding);
/* The same requests with the job as context (what px_server_host's
 * upcalls would call): the upcalls' return rules (PMIX_OPERATION_SUCCEEDED
 * when answered at once, PMIX_SUCCESS and cbfunc later, or an error). */
pmix_status_t pubsub_publish(job *j, const pmix_proc_t *proc, const pmix_info_t info[],
                             size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t pubsub_lookup(job *j, const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                            size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata);
pmix_status_t pubsub_unpublish(job *j, const pmix_proc_t *proc, char **keys,
                               const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                               void *cbdata);
int pubsub_timeout_ms(job *j); /* until the next lookup deadline, -1 if none */
void pubsub_tick(job *j);      /* end the lookups whose deadline passed */
void pubsub_rank_ended(job *j, int rank);
/* pmixrun --nodes: a PD_PUBSUB frame from the daemon on `from`. */
void pubsub_frame(job *j, struct tl_link *from, const uint8_t *p, size_t len);
/* pmixd: send the requests the upcalls queued; apply a PD_PUBSUB_REP.
 * (pubsub_stop answers every forwarded request still waiting with
 * PMIX_ERR_UNREACH.) */
void pubsub_flush(job *j, struct tl_link *parent);
void pubsub_answer(job *j, const uint8_t *p, size_t len);

#endif /* PMIXRUN_H */
