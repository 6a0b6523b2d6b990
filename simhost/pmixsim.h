/*
 * pmixsim.h - the simulator's internal interface (docs/simulation.md).
 *
 * pmixsim runs a PMIx job inside SimGrid. Every simulated node is an actor
 * that runs a real px_server (the library's server engine) and, as its
 * host, the cross-node collectives of coll/ over SimGrid mailboxes. Every
 * simulated process is an actor that runs a workload program (a `main`
 * written against the Standard's PMIx_* API) whose calls reach the actor's
 * own px_client through the api/ shim's binding.
 *
 *   simplat.c   the platform ops over SimGrid (endpoints, messages, timers,
 *               blocking), the api/ binding, the process actors
 *   simnode.c   the node actors: the server engine's host, job registration
 *               (the host core's job information), the node's messages
 *   simspawn.c  PMIx_Spawn (node 0 places a new job and launches it down
 *               a tree; each node starts its processes) and events
 *               carried across nodes
 *   siminvite.c group invitations across nodes, measured from their
 *               events, against their formula
 *   simfence.c  what crosses nodes: the host core's px_hc (fences,
 *               failures, direct modex) on mailboxes and simulated time,
 *               its measurements, collected data once per run
 *   topo.c      platforms generated from parameters (SimGrid cluster XML)
 *   coords.c    network coordinates, their registration, hier groups
 *   planes.c    messages over one or two network planes, planes going down
 *   faults.c    the fault layer: --fault specs drawn from the seed, node
 *               crashes, process kills, links and planes cut, failure
 *               detection, the event log and per-process fence results
 *   report.c    per-fence measurements, formulas, TSV and JSON
 *   workloads.c the programs built into pmixsim, and the `fence` workload
 *   program.c   programs loaded from a shared object (`pmixsim ./prog.so`)
 *   sgw.cpp     SimGrid's C++ interface behind a few C functions (sgw.h)
 *   main.c      the command line, one run per algorithm
 *
 * There is no global state: everything hangs off one sim_run, which the
 * actors reach through their endpoint. SimGrid runs every actor in one OS
 * thread, one at a time, so the engine lock ops do nothing.
 */
#ifndef PMIXSIM_H
#define PMIXSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pmix_server.h>

#include "api/px_api.h"
#include "client/px_client.h"
#include "px_coll.h"
#include "px_hostcore.h"
#include "px_platform.h"
#include "server/px_server.h"
#include "sgw.h"
#include "simnet.h"

typedef struct sim_run sim_run;
typedef struct sim_node sim_node;
typedef struct sim_proc sim_proc;
typedef struct sim_msg sim_msg;
typedef struct sim_ep sim_ep;
typedef struct sim_fault sim_fault;
typedef struct sim_pfence sim_pfence;
typedef struct sim_program sim_program;

#define SIM_MAX_FAULTS 64

/* ---- options ---- */

typedef enum {
    TOPO_CROSSBAR,
    TOPO_FATTREE,
    TOPO_TORUS,
    TOPO_DRAGONFLY,
    TOPO_FILE,
} sim_topology;

/* Most --pset options. */
#define SIM_MAX_PSETS 16

typedef struct sim_opts {
    uint32_t nodes, ppn;
    bool nodes_given;
    sim_topology topology;
    const char *topo_params;    /* SimGrid's topo_parameters, or NULL: derived */
    char topo_file_params[256]; /* --topology FILE: the topo_params it gives */
    uint32_t topo_file_nodes;   /* and the nodes it names (0: no file) */
    /* and the planes a SimGrid platform's plane clusters give (0: none),
     * with their names, which the generated planes take */
    unsigned topo_file_planes;
    char topo_file_plane[PX_NET_MAX_PLANES][PX_NET_NAME_MAX];
    const char *platform;   /* --platform FILE */
    unsigned planes;        /* --planes 1|2 (simnet.h), or a --topology FILE's */
    bool planes_given;      /* --planes was given */
    const char *test_down;  /* --test-plane-down P[.NODE]@T (planes.c) */
    unsigned fattree_radix; /* ports per switch (fat tree) */
    unsigned fattree_taper; /* oversubscription of the leaf switches */
    double lat, bw;         /* per link: seconds, bytes/s */
    double lo_lat, lo_bw;   /* the loopback link of every node */
    bool lv08;              /* --model lv08 (default cm02) */
    const char *algo;       /* NULL: auto */
    uint64_t seed;
    unsigned stack_kib;
    const char *json;
    const char *faults[SIM_MAX_FAULTS]; /* --fault SPEC, as given (faults.c) */
    unsigned nfaults;
    double coll_timeout; /* --coll-timeout: fences that set no PMIX_TIMEOUT; 0 none */
    bool coll_timeout_given;
    double detect;      /* --detect: a node crash is known to the others after it */
    const char *events; /* --events FILE: the event log */
    int cpu;            /* --cpu: SIM_CPU_* */
    double cpu_msg;     /* --cpu model:A[,B]: seconds per message handled */
    double cpu_byte;    /* and per byte of it */
    bool quiet;         /* no workload-independent chatter */
    bool server_actors; /* --server-actors: never one actor per node */
    bool privatize;     /* --privatize: a copy of a loaded program per process */
    /* A built-in's name, or the path of a program to load (it has a '/'),
     * and that program once loaded (program.c), or NULL. */
    /* --pset NAME:COUNT, repeatable: the job's ranks in consecutive blocks,
     * each an app in process set NAME (prterun's `-n COUNT --pset NAME`);
     * the ranks past the last block are one more app in no set. */
    char pset_name[SIM_MAX_PSETS][PMIX_MAX_NSLEN + 1];
    uint32_t pset_size[SIM_MAX_PSETS];
    unsigned npsets;
    const char *workload;
    sim_program *program;
    int wl_argc;
    char **wl_argv;
} sim_opts;

/* --cpu: how the library's CPU time is charged to simulated time. */
enum {
    SIM_CPU_NONE,
    SIM_CPU_MEASURED,
    SIM_CPU_MODEL
};

/* ---- endpoints: one per actor ---- */

struct px_timer {
    struct px_timer *next;
    double at;
    unsigned long long seq;
    void (*cb)(void *arg);
    void *arg;
};

struct sim_ep {
    sim_run *run;
    bool is_server;
    sgw_box *box;
    struct px_timer *timers; /* sorted by (at, seq) */
    unsigned long long tseq;
    double cpu_suspended; /* thread CPU time spent while suspended in sends (--cpu) */
    char name[48];
};

/* ---- messages between actors (the payload of a SimGrid communication) ---- */

enum {
    MSG_C2S = 1,    /* a frame from a client to its server (conn) */
    MSG_S2C,        /* a frame from a server to a client (maybe with a region) */
    MSG_CLOSE,      /* the client side closed its connection (conn) */
    MSG_HANGUP,     /* the server side closed the connection */
    MSG_HC,         /* a host core message between nodes (from; tag: a collective's epoch) */
    MSG_WAKE,       /* nothing: a timer was added from another actor */
    MSG_EXIT,       /* a client's process ended after PMIx_Finalize (conn): it departed */
    MSG_PUBSUB,     /* a data service request to node 0 (from, proc; tag: id; status: op) */
    MSG_PUBSUB_REP, /* node 0's answer (tag: the request's id; status) */
    MSG_SPAWN,      /* a spawn request to node 0 (from, proc; tag: id; data: packed apps) */
    MSG_SPAWN_REP,  /* node 0's answer (tag: the request's id; status; data: the nspace) */
    MSG_LAUNCH,     /* a spawned job's launch, down its tree (tag: the job's index) */
    MSG_EVENT,      /* an event down its tree (from; tag: the root node; data: packed) */
};

struct sim_msg {
    struct sim_msg *next; /* in-memory queues (handshakes, early collectives) */
    int kind;
    uint64_t conn;
    uint32_t from;
    uint64_t tag;
    pmix_status_t status;
    pmix_proc_t proc;
    void *data;
    size_t len;
    px_region *region;
    sim_ep *dest; /* deferred sends (see simplat.c) */
    double t;     /* MSG_SPAWN: when the request reached its node's host */
    double bytes;
#ifdef __SANITIZE_ADDRESS__
    /* Sanitized builds: every message made in an actor is on its run's
     * list until freed, so that those still in SimGrid's mailboxes when
     * the simulation ends (sent to a node whose actor was running its
     * process until the end, or in flight) are freed before
     * LeakSanitizer looks: sim_msgs_free_live. */
    struct sim_msg *live_next, *live_prev;
    sim_run *live_run;
#endif
};

sim_msg *sim_msg_new(int kind, void *data, size_t len); /* aborts on no memory */
void sim_msg_free(void *m);                             /* also the `lost` hook */
/* Free the messages still alive (sanitized builds; nothing otherwise). */
void sim_msgs_free_live(sim_run *run);
/* Returns 0 once `m` arrived (or was held back: see simplat.c), -1 if it
 * was lost and freed (the receiver's host is off, a link is cut). */
int sim_send(sim_ep *to, sim_msg *m, double bytes);
/* Room for element `n` of `arr`, an array of *cap elements of `size` bytes
 * (doubling, 16 at first): the array, moved or not, or NULL on no memory
 * (then `arr` and *cap are unchanged). */
void *sim_grow(void *arr, size_t *cap, size_t n, size_t size);

/* ---- regions: one shared copy ---- */

/* A region holds its own copy (region_create: data == own) or wraps
 * memory that stays its owner's (region_wrap: `release` runs when the last
 * reference goes). */
struct px_region {
    int refs;
    size_t len;
    const unsigned char *data;
    void (*release)(void *arg);
    void *arg;
    unsigned char own[];
};
void sim_region_unref(void *region);

/* ---- timers ---- */

struct px_timer *sim_timer_add(sim_ep *ep, double seconds, void (*cb)(void *), void *arg);
void sim_timer_cancel(sim_ep *ep, struct px_timer *t);
/* Fire the timers that are due; returns the seconds until the next one,
 * or -1 if none is left. */
double sim_timers_run(sim_ep *ep);

/* ---- processes ---- */

typedef struct sim_workload {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *usage;
} sim_workload;

const sim_workload *sim_workload_find(const char *name);
void sim_workload_list(FILE *f);

/* program.c: a PMIx program in a shared object. Open checks the file and
 * loads it: returns 0 and the program in *out, or -1 with a sentence in
 * `err` (not a file, not ELF, not a shared object, linked to libpmix, no
 * main, writable globals unless `privatize`). */
#define SIM_PRIVATIZE_MAX 4096u /* processes: a loaded copy each */
int sim_program_open(const char *path, bool privatize, sim_program **out, char *err, size_t errlen);
/* For the report: name = the path as given. */
const sim_workload *sim_program_workload(const sim_program *p);
/* Load a copy per process (--privatize): returns 0, or -1 with a reason;
 * call it once per run, before the processes start. */
int sim_program_privatize(sim_program *p, uint32_t nprocs, char *err, size_t errlen);
/* Run the program's main (rank's copy, if privatized) as the calling
 * actor's process; returns its status. */
int sim_program_run(const sim_program *p, uint32_t rank, int argc, char **argv);
/* Free `p` (NULL: nothing); the loaded objects stay loaded. */
void sim_program_close(sim_program *p);

struct sim_proc {
    sim_ep ep;
    sim_node *node;
    pmix_proc_t proc;
    uint64_t conn;
    bool closed;       /* the connection is gone */
    bool sync;         /* handshake or finalize in progress (see simplat.c) */
    bool defer;        /* maybe inside the shim's init lock: hold sends */
    sim_msg *deferred; /* sends held back, in order */
    sim_msg *sync_out; /* frames to the server, in order */
    sim_msg *sync_in;  /* frames from the server, in order */
    px_api_client ac;  /* what the api/ shim finds for this actor */
    int exit_code;
    long actor;            /* SimGrid's id of the process actor */
    bool exited;           /* its workload returned */
    bool killed;           /* by a fault */
    uint32_t fences_sent;  /* FENCE requests it sent */
    uint32_t fences_done;  /* FENCE_DONE answers its server sent it */
    uint32_t fences_seen;  /* FENCE requests its server received */
    sim_fault *kill_fence; /* proc:R@fence:K aimed at it, or NULL */
    bool doomed;           /* a fault may kill it (faults.c) */
    bool opened;           /* its workload called PMIx_Init */
    bool saw_death;        /* a fence of its failed with PMIX_ERR_PROC_TERM_WO_SYNC */
    struct sim_kjob *kjob; /* the spawned job it belongs to, or NULL: the run's */
};

/* ---- nodes ---- */

struct sim_node {
    sim_ep ep;
    uint32_t id;
    char host[64];
    px_server *srv;
    sim_proc *procs; /* ppn entries */
    uint32_t nprocs;
    uint64_t next_conn;
    px_hc *hc;           /* fences, failures, direct modex (host core; simfence.c) */
    px_ctxid_gen ctxids; /* the groups' context ids this node makes */
    long actor;          /* SimGrid's id of the node actor */
    bool dead;           /* crashed (node fault) */
    bool doomed;         /* a fault crashes it (faults.c) */
    bool merged;         /* no actor of its own: its process's actor serves it (simplat.c) */
    bool broken;         /* its host core knows a process of the job died (simfence.c) */
    sgw_box *loop;       /* merged: its process and server's transfers */
    sim_msg *local_head; /* merged: what crossed the loopback, in order */
    struct sim_ps_wait *ps_pend; /* data service requests waiting for node 0 (simpubsub.c) */
    uint64_t ps_next;            /* the last request's id */
    struct sim_sp_wait *sp_pend; /* spawn requests waiting for node 0 (simspawn.c) */
    sim_proc **kids;             /* processes of spawned jobs started here */
    size_t nkids, capkids;
    struct sim_khc **khc; /* a spawned job's host core here, by its index - 1, or NULL */
    size_t nkhc;
    /* Spawned jobs that the node's own px_hc (hc) knows (px_hc_job_add of
     * their xmap, in index order, when an operation first names processes
     * of several namespaces: sim_hc_of_procs). */
    uint32_t hc_njobs;
};

/* A job spawned during the run (simspawn.c): placed on nodes 0 .. nnodes
 * - 1, ppn processes per node in rank order. Its description is shared by
 * every node (the simulation's memory); what crosses nodes is charged. */
typedef struct sim_kjob {
    uint32_t idx; /* 1, 2...: MSG_HC's status for its host core */
    char nspace[PMIX_MAX_NSLEN + 1];
    px_jobmap map;
    /* The same job over all the run's nodes (what px_hc_job_add takes: its
     * nodes past map.nnodes host none of it), for the node's own px_hc,
     * which runs operations of processes of several namespaces (a connect
     * of the parent job and this one). */
    px_jobmap xmap;
    px_jobmap_app app;
    pmix_proc_t parent;
    uint32_t req_node; /* the requestor's node, and its request's id */
    uint64_t req_id;
    const sim_workload *wl;
    char **argv; /* NULL-terminated: the app's argv (argv[0]: the workload) */
    int argc;
    sim_proc *procs; /* map.nprocs */
    size_t launch_bytes;
    uint32_t exited;
    uint64_t fence_set;   /* its whole job's fence set */
    double t_request;     /* the request at the requestor's host */
    double t_at_root;     /* at node 0 */
    double t_launch_last; /* the last node started its processes */
    double t_answered;    /* the requestor's host had the answer */
    bool said;            /* its start was announced (sim_spawn_fence_done) */
} sim_kjob;

/* An event carried across the nodes (simspawn.c). */
typedef struct sim_evstat {
    pmix_status_t status;
    pmix_data_range_t range;
    uint32_t src_node;
    uint32_t nodes; /* the nodes it goes to (every node, or a custom range's), its own too */
    uint32_t *list; /* a custom range's nodes, the sender's first, or NULL: every node */
    size_t bytes;
    uint32_t reached; /* nodes that handed it to their server, the source's too */
    double t_sent, t_last;
} sim_evstat;

/* ---- measurements ---- */

typedef struct sim_fstat {
    uint64_t coll_id;
    uint32_t epoch;
    uint32_t seq; /* 1, 2...: in order of first start */
    px_coll_kind kind;
    char algo[80];
    px_coll_choice resolved;
    uint32_t nnodes;
    uint32_t nstart, nend, nfail;
    uint64_t contrib; /* bytes contributed by all nodes */
    double t_first_start, t_last_start, t_last_end;
    uint64_t msgs, bytes;
    pmix_status_t status;
} sim_fstat;

struct sim_run {
#ifdef __SANITIZE_ADDRESS__
    sim_msg *live_msgs; /* see struct sim_msg */
#endif
    sim_opts opt;
    uint32_t nnodes, nprocs;
    sim_node *nodes;
    const sim_workload *wl;
    char nspace[PMIX_MAX_NSLEN + 1];
    char *cwd;                             /* pmixsim's working directory: the app's PMIX_WDIR */
    char **app_argv;                       /* the workload and its arguments: PMIX_APP_ARGV */
    px_jobmap map;                         /* the job as the host core sees it */
    char fence_algo[64], barrier_algo[64]; /* what PMIXLAB_*_ALGO would say */
    double alpha, beta;                    /* route latency and 1/bandwidth, node to node */
    uint32_t procs_done, procs_failed;
    sim_fstat *fstats;
    size_t nfstats, capfstats;
    uint32_t fence_seq;
    bool tty;
    double wall_start;
    sim_net *net; /* planes and coordinates (simnet.h) */
    /* --platform FILE read as a description (sim_platform_read), or NULL;
     * sim_net_setup takes it over */
    px_netmap *pmap;
    sim_fault *faults; /* --fault, drawn (faults.c) */
    unsigned nfaults;
    uint32_t procs_killed;
    double cpu_charged; /* simulated seconds of library CPU time (--cpu) */
    sim_pfence *pf;     /* per-process fence results, by the process's fence number */
    size_t npf;
    struct sim_share *shares;  /* collecting fences' data, once per run (simfence.c) */
    struct px_pubsub *pubsub;  /* the data service, node 0's, once used (simpubsub.c) */
    struct px_timer *ps_timer; /* node 0's timer at its next lookup deadline */
    double ps_timer_at;
    bool ps_closing;        /* the run is over: waiting lookups go unanswered */
    FILE *events;           /* --events, or NULL */
    px_api_client none;     /* what the binding answers outside a process actor */
    bool merged;            /* one actor per node (simplat.c, "One actor per node") */
    double lo_lat, lo_rate; /* merged under CM02: a frame's loopback time is lat + bytes / rate */
    bool no_start;          /* rank 0 failed before PMIx_Init: the others do not run */
    sim_kjob **kjobs;       /* spawned jobs, by index - 1 (simspawn.c) */
    size_t nkjobs, capkjobs;
    /* Processes that departed (finalized and ended while others ran), and
     * the host core's messages and records that carried the news. */
    uint32_t departs;
    uint64_t depart_msgs, depart_recs;
    sim_evstat *evstats; /* events carried across nodes */
    size_t nevstats, capevstats;
    struct sim_invstat *invstats; /* group invitations across nodes (siminvite.c) */
    size_t ninvstats, capinvstats;
    px_api_binding binding;
    /* Every actor's stack size, and the deepest any process actor used
     * below sim_proc_main's frame, in bytes (simplat.c, stack_used; 0 in
     * sanitized builds, which do not measure). A simulated process's stack
     * is resident as deep as it was ever used: 1 kB more here is 64 MB at
     * 65,536 nodes (docs/simulation.md, "Memory"). */
    size_t stack_size, stack_max;
};

/* simfence.c: drop the run's hold on the collected data still kept (at
 * the end of a run). */
void sim_shares_fini(sim_run *run);

/* The data service (simpubsub.c): the server's publish, lookup and
 * unpublish upcalls; MSG_PUBSUB and MSG_PUBSUB_REP as the node takes
 * them (the message stays the caller's); a process of node `n` ended;
 * the run is over. */
pmix_status_t sim_host_publish(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                               size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata);
pmix_status_t sim_host_lookup(void *hctx, const pmix_proc_t *proc, char **keys,
                              const pmix_info_t info[], size_t ninfo, pmix_lookup_cbfunc_t cbfunc,
                              void *cbdata);
pmix_status_t sim_host_unpublish(void *hctx, const pmix_proc_t *proc, char **keys,
                                 const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata);
void sim_pubsub_dispatch(sim_node *n, sim_msg *m);
void sim_pubsub_proc_ended(sim_node *n, const pmix_proc_t *proc);
void sim_pubsub_fini(sim_run *run);

/* Spawn and events across nodes (simspawn.c): the server's spawn and
 * notify_event upcalls; MSG_SPAWN .. MSG_EVENT as the node takes them
 * (the message stays the caller's); the host core for a fence, direct
 * modex or MSG_HC of namespace `nspace` / job index `idx` on node n (the
 * run's own, a spawned job's made on first use, or NULL); a spawned job's
 * process ended; the report's lines and JSON members; the end of the run. */
pmix_status_t sim_host_spawn(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                             size_t ninfo, const pmix_app_t apps[], size_t napps,
                             pmix_spawn_cbfunc_t cbfunc, void *cbdata);
void sim_host_notify_event(void *hctx, pmix_status_t status, const pmix_proc_t *source,
                           pmix_data_range_t range, const pmix_info_t info[], size_t ninfo);
void sim_spawn_dispatch(sim_node *n, sim_msg *m);
px_hc *sim_hc_of_nspace(sim_node *n, const char *nspace);
/* The host core for an operation over `procs` (nprocs; none: the run's
 * job): that of their namespace when they have one, else the node's own
 * px_hc, which then knows every spawned job so far (px_hc_job_add, in
 * index order on every node). NULL for no memory or an unknown job. */
px_hc *sim_hc_of_procs(sim_node *n, const pmix_proc_t procs[], size_t nprocs);
px_hc *sim_hc_of_job(sim_node *n, uint32_t idx);
sim_kjob *sim_kjob_find(sim_run *run, const char *nspace);
void sim_kid_exited(sim_proc *p);
void sim_spawn_report(sim_run *run, FILE *tsv);
/* A fence ended on all its nodes: if it is a spawned job's first, say at
 * once how long the start took (stderr, and the event log), since the end
 * of a large run can be long. */
void sim_spawn_fence_done(sim_run *run, const sim_fstat *f);
double sim_wall(void); /* main.c: the wall clock, seconds */
void sim_spawn_json(sim_run *run, FILE *json);
void sim_spawn_node_fini(sim_node *n); /* from sim_node_fini */
void sim_spawn_fini(sim_run *run);
/* siminvite.c: group invitations as their events cross nodes: an event
 * a node sends (`bytes` charged, to `nodes` nodes) and one a node hands
 * its server; the report's lines and JSON member (from sim_spawn_report
 * and sim_spawn_json); the end of the run (from sim_spawn_fini). */
void sim_invite_sent(sim_node *n, pmix_status_t status, const pmix_proc_t *source,
                     const pmix_info_t info[], size_t ninfo, size_t bytes, uint32_t nodes);
void sim_invite_heard(sim_node *n, pmix_status_t status, const pmix_proc_t *source,
                      const pmix_info_t info[], size_t ninfo);
void sim_invite_report(sim_run *run, FILE *tsv);
void sim_invite_json(sim_run *run, FILE *json);
void sim_invite_fini(sim_run *run);
/* simfence.c: a spawned job's host core on a node: create fills hc from
 * n and k (0, or -1: none made); the struct is its ops' context. */
struct sim_khc {
    px_hc *hc;
    sim_node *n;
    sim_kjob *k;
};
int sim_hc_create_job(struct sim_khc *c);
/* simnode.c: the process of node n with connection `conn`, the run's or a
 * spawned job's, or NULL. */
sim_proc *sim_node_proc(sim_node *n, uint64_t conn);

/* simplat.c */
extern const px_platform_ops sim_platform_ops;
void sim_bind(sim_run *run);
void sim_proc_main(void *arg); /* the process actor */
/* Run fn(arg) for an actor that a fault may kill (see faults.c). */
void sim_run_doomed(void (*fn)(void *), void *arg);
/* After the run: free what a process killed by a fault left behind. */
void sim_proc_reap(sim_proc *p);
void sim_deliver_s2c(sim_proc *p, sim_msg *m);
void sim_deliver_close(sim_proc *p);
unsigned sim_frame_type(const void *frame, size_t len); /* px_proto.h's PX_MSG_* */
void sim_logf(sim_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* simnode.c */
extern const px_server_host sim_server_host;
int sim_node_setup(sim_run *run, sim_node *n);
void sim_node_main(void *arg); /* the node actor */
/* A merged node (run->merged): handle one message for its server, or run
 * its due timers and return the seconds until the next one (-1: none),
 * as the calling actor's node; sim_node_serve runs the node's loop for
 * ever, as its actor does. */
void sim_node_deliver(sim_node *n, sim_msg *m);
/* Receive the next message for a merged node's actor (its local queue
 * first, then its mailbox), as sgw_recv. */
int sim_node_recv(sim_node *n, double timeout, void **payload);
double sim_node_timers(sim_node *n);
void sim_node_serve(sim_node *n);
void sim_node_fini(sim_node *n);

/* simfence.c: the node's host core (px_hc): made at set-up, destroyed
 * by sim_node_fini; the fence_nb and direct_modex upcalls go to it, and so
 * do MSG_HC messages (px_hc_deliver). */
int sim_hc_create(sim_node *n);
pmix_status_t sim_host_fence(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                             const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                             pmix_modex_cbfunc_t cbfunc, void *cbdata);
pmix_status_t sim_host_dmodex(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                              size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata);
pmix_status_t sim_host_group(void *hctx, const px_group_req *req, px_group_cbfunc_t cbfunc,
                             void *cbdata);

/* topo.c: write the platform for the options into `path`; returns 0 or -1
 * with a reason. */
int sim_topo_write(const sim_opts *o, const char *path, char *err, size_t errlen);
/* The SimGrid topo_parameters of a generated topology ("" for a crossbar). */
int sim_topo_params(const sim_opts *o, char *params, size_t len, char *err, size_t errlen);
const char *sim_topo_name(sim_topology t);

/* Run deliver(ep, m) for the calling actor (endpoint ep), then charge the
 * library's CPU time of it to simulated time as --cpu says: the actor is
 * busy that long (simplat.c). */
void sim_handle(sim_ep *ep, void (*deliver)(void *ep, sim_msg *m), sim_msg *m);
double sim_thread_cpu(void); /* the OS thread's CPU time, seconds */

/* simfence.c: node `n` learned that node `dead` is gone: its collectives
 * count it failed, direct modex requests to it fail, the job breaks here
 * (px_hc_node_lost). */
void sim_node_lost(sim_node *n, uint32_t dead);

/* faults.c */
/* Parse and draw the faults of the options (after the nodes are set up,
 * before the actors start) and arm their timers. Returns 0, or -1 with a
 * reason (bad spec). */
int sim_faults_setup(sim_run *run, char *err, size_t errlen);
void sim_faults_fini(sim_run *run);
/* The server of `n` received process p's next FENCE request: returns true
 * if a proc:R@fence:K fault killed p there (drop the request). */
bool sim_fault_at_fence(sim_node *n, sim_proc *p);
/* A FENCE_DONE with `status` goes to p (its fences_done-th fence). */
void sim_fault_fence_result(sim_run *run, sim_proc *p, pmix_status_t status);
/* Append a line to the event log (if any): "TIME\tWHAT...". */
void sim_event(sim_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The faults and per-process fence results as JSON members (",\"faults\":..."). */
void sim_faults_json(const sim_run *run, FILE *json);
/* One comment line for the TSV report, or nothing without faults. */
void sim_faults_report(const sim_run *run, FILE *tsv);

/* report.c */
sim_fstat *sim_fstat_get(sim_run *run, uint64_t id, uint32_t epoch, bool create);
double sim_formula(sim_run *run, const sim_fstat *f);
void sim_progress(sim_run *run, const sim_fstat *f);
/* How long a node's host core holds departure news (simfence.c). */
double sim_news_window(void);
/* A JSON number: v with 9 significant digits, or null when not finite. */
void sim_json_num(FILE *f, double v);
void sim_report(sim_run *run, FILE *tsv, FILE *json, int index, double wall, long rss_kb);

#endif /* PMIXSIM_H */
