/*
 * pmixrun.h - what the parts of pmixrun share: the job context.
 *
 *   pmixrun.c          options, the main loop, how a job ends, exit status
 *   pmixrun_job.c      the job's data for the PMIx server (register_nspace),
 *                      bindings, the server module (upcalls)
 *   pmixrun_launch.c   finding the program, fork/exec of the ranks
 *   pmixrun_iof.c      forwarding the ranks' stdout/stderr line by line
 *   pmixrun_files.c    the private job directory and registered cleanups
 *
 * Threads. pmixrun's own code runs on the main thread. The PMIx server
 * library calls the module's upcalls (pmixrun_job.c) on its progress
 * thread; they only record facts in the job under `mu` and write a byte to
 * the `wake` pipe, and the main loop acts on them.
 */
#ifndef PMIXRUN_H
#define PMIXRUN_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <hwloc.h>
#include <pmix_server.h>

#define PMIXRUN_GRACE_S 2.0  /* SIGTERM -> SIGKILL */
#define PMIXRUN_SETTLE_S 1.0 /* a failed rank's peers see their fences fail, then SIGTERM */
#define PMIXRUN_EXIT_USAGE 2
#define PMIXRUN_EXIT_TIMEOUT 124
#define PMIXRUN_EXIT_NOEXEC 126
#define PMIXRUN_EXIT_NOTFOUND 127

/* Where forwarded output goes (our stdout or stderr). */
typedef struct iof_out {
    int fd;
    bool broken; /* a write failed (EPIPE...): discard from now on */
} iof_out;

/* One of a rank's output pipes. */
typedef struct iof_stream {
    int fd; /* read end, -1 once closed */
    iof_out *out;
    char *buf; /* bytes of an unfinished line */
    size_t len, cap;
    bool line_start; /* the next byte written begins a line */
} iof_stream;

typedef struct rank_proc {
    int rank;
    pid_t pid; /* 0 until started; also the process group id */
    bool reaped;
    int code; /* exit status, or 128+signal */
    bool signaled;
    bool stopped_by_us; /* still running when we sent SIGTERM */
    bool deregistered;
    /* Written by upcalls, read by the main loop: under job.mu. */
    bool connected;
    bool finalized;
    iof_stream out, err;
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
    END_SIGNAL, /* pmixrun got SIGINT/SIGTERM/SIGHUP */
    END_LAUNCH, /* a rank could not be started */
} end_reason;

typedef struct job {
    /* options */
    int nprocs;
    double timeout; /* seconds; 0 = none */
    bool tag_output;
    bool bind_core;
    char **argv; /* program and arguments (borrowed from main) */

    char *prog; /* resolved path of argv[0] */
    char hostname[256];
    pmix_nspace_t nspace;
    char *topdir; /* $TMPDIR/pmixrun.<uid>.<pid>: socket, nsdir, procdirs */
    char *nsdir;
    hwloc_topology_t topo;

    rank_proc *ranks;
    int nstarted;
    int nreaped;
    iof_out outs[3]; /* [1] stdout, [2] stderr */
    int devnull;

    int sigfd;
    int wake[2]; /* self-pipe: upcalls -> main loop */
    bool server_up;
    bool nspace_registered;

    job_phase phase;
    double phase_deadline;
    double timeout_at;
    end_reason reason;
    int reason_code; /* exit status decided by the reason (abort, signal, timeout, launch) */

    /* Written by upcalls: under mu. */
    pthread_mutex_t mu;
    bool abort_seen;
    bool abort_reported;
    int abort_rank;
    int abort_status;
    char *abort_msg;
    pending_abort *aborts;
    cleanup_item *cleanups;
} job;

/* pmixrun.c */
double now_s(void);
void job_wake(job *j); /* from upcalls: poke the main loop */

/* pmixrun_job.c */
int job_bindings(job *j);                 /* cpusets per rank; 0 or -1 (message printed) */
int job_server_start(job *j);             /* PMIx_server_init with our module */
int job_register(job *j);                 /* register_nspace + register_client for all */
void job_rank_lost(job *j, rank_proc *r); /* tell the library a rank died unfinalized */
void job_server_stop(job *j);
rank_proc *job_rank_of(job *j, const pmix_proc_t *proc);

/* pmixrun_launch.c */
int launch_resolve(job *j);            /* exit status on failure (message printed), 0 if found */
int launch_rank(job *j, rank_proc *r); /* 0, or an exit status (message printed) */

/* pmixrun_iof.c */
void iof_stream_init(iof_stream *s, int fd, iof_out *out);
/* Read what is there and forward complete lines. false once the pipe is at
 * EOF (it is then closed and any partial line flushed). */
bool iof_stream_read(iof_stream *s, int rank, bool tag);
void iof_stream_close(iof_stream *s, int rank, bool tag);

/* pmixrun_files.c */
int files_make_topdir(job *j);        /* 0 or -1 (message printed) */
int files_make_dir(const char *path); /* mkdir 0700; 0 or -1 (errno) */
void files_remove_tree(const char *path);
/* Record a cleanup registered through job_control (called under mu). */
void files_register_cleanup(job *j, const char *list, bool is_dir, bool recursive, bool leave_top,
                            const char *ignore);
void files_run_cleanups(job *j);
void files_remove_topdir(job *j);

#endif /* PMIXRUN_H */
