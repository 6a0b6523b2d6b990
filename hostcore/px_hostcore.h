/*
 * px_hostcore.h - the host core: what every host of the library's server
 * does, written once (docs/architecture.md, "The host core").
 *
 * pmixrun and pmixd (sockhost/), pmixsim (simhost/) and the unit tests'
 * in-process host link it. Today it holds the job-information builder:
 * one function that makes every job, node, app and process key of a job
 * from its job map, so that a program reads the same keys whichever host
 * runs it. The cross-node operations (fences, group construction,
 * connect) move here next.
 *
 * It also reads a fence's request as the server engine hands it over
 * (px_fence_req_read), so that no host decodes the fence's info keys
 * itself, names a fence's collective by its participant set
 * (px_fence_set_make), keeps the direct modex requests a node waits on
 * (px_dmx_*), and makes groups' context ids by one rule (px_ctxid_*). The
 * publish/lookup data service has a header of its own, px_pubsub.h.
 *
 * Nothing here does I/O, reads a clock or keeps state between calls.
 */
#ifndef PX_HOSTCORE_H
#define PX_HOSTCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>
#include <pmix_server.h>

#include "px_coll.h"

/* ---- a growable info array ---- */

typedef struct px_ivec {
    pmix_info_t *v;
    size_t n, cap;
} px_ivec;

/* A zeroed entry at the end of `a` with `key`, or NULL when memory runs
 * out (`a` is unchanged then). */
pmix_info_t *px_ivec_next(px_ivec *a, const char *key);
/* Load a value (PMIx_Value_load's rules: strings and arrays are copied)
 * under `key`; PMIX_ERR_NOMEM leaves `a` unchanged. */
pmix_status_t px_ivec_load(px_ivec *a, const char *key, const void *data, pmix_data_type_t type);
/* Move `from`'s entries under `key` as a PMIX_DATA_ARRAY of infos; `from`
 * is empty afterwards whatever the outcome (freed on failure). */
pmix_status_t px_ivec_nest(px_ivec *a, const char *key, px_ivec *from);
/* Destruct every entry and free the array; `a` is empty afterwards. */
void px_ivec_free(px_ivec *a);

/* ---- the job map ---- */

/* One application context of a job: ranks first .. first + size - 1. */
typedef struct px_jobmap_app {
    uint32_t first, size;
    char *const *argv; /* NULL-terminated, or NULL: no PMIX_APP_ARGV */
    const char *wdir;  /* or NULL: no PMIX_WDIR */
    /* The process set the app's ranks belong to (prterun's --pset), or
     * NULL (or ""): none. Apps may share one: the set is all their ranks. */
    const char *pset;
} px_jobmap_app;

/* A job as a host knows it. Nothing is copied: the builder reads it while
 * it runs. */
typedef struct px_jobmap {
    const char *nspace;
    uint32_t nprocs, nnodes;
    /* The node of rank r: rank_node[r], or with rank_node NULL blocks of
     * ppn ranks (node r / ppn; ppn 0: ceil(nprocs / nnodes)). */
    const uint32_t *rank_node;
    uint32_t ppn;
    /* The host name of `node` (0 .. nnodes - 1), with `ctx`; asked only
     * for the nodes the build describes. */
    const char *(*node_name)(void *ctx, uint32_t node);
    uint32_t napps; /* 0: one app of every rank, no argv or wdir */
    const px_jobmap_app *apps;
    uint32_t univ_size;         /* 0: nprocs */
    const char *mapby, *bindto; /* PMIX_MAPBY, PMIX_BINDTO, or NULL */
    const char *tmpdir, *nsdir; /* PMIX_TMPDIR and PMIX_NSDIR, or NULL */
    /* Describe every node and every rank (node list and maps, a node
     * array per node, the data of every rank), or, when false, only the
     * registering node and its ranks: a node's data then stays the same
     * size whatever the job's (what pmixsim does past a few thousand
     * processes). */
    bool describe_all;
    /* PMIX_DEBUG_STOP_IN_INIT with PMIX_RANK_WILDCARD: every rank waits in
     * PMIx_Init for a debugger's PMIX_DEBUGGER_RELEASE. */
    bool stop_in_init;
    /* The host's own keys for one of the registering node's ranks
     * (directories, cpuset, locality), appended to its PMIX_PROC_DATA;
     * NULL for none. A non-success status ends the build with it. */
    pmix_status_t (*local_keys)(void *ctx, pmix_rank_t rank, px_ivec *proc);
    void *ctx;
} px_jobmap;

/* The node of `rank` in `m` (UINT32_MAX for a rank outside the job). */
uint32_t px_jobmap_node_of(const px_jobmap *m, pmix_rank_t rank);

/* Append to `out` every key of the job for the server of node `node`
 * (what PMIx_server_register_nspace takes): job keys (PMIX_JOBID, sizes,
 * PMIX_NUM_NODES, PMIX_JOB_NUM_APPS, directories, mapping; with
 * describe_all PMIX_NODE_LIST, PMIX_NODE_MAP and PMIX_PROC_MAP), this
 * node's keys (PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_SIZE,
 * PMIX_LOCAL_PEERS, PMIX_LOCALLDR), a PMIX_NODE_INFO_ARRAY per node
 * described, a PMIX_APP_INFO_ARRAY per app (with PMIX_PSET_NAME for an app
 * in a process set: the server engine makes the sets of the job from
 * those), and a PMIX_PROC_DATA per rank described (PMIX_RANK first, then
 * its local, node, global and app ranks, app number, node id and host
 * name, PMIX_PSET_NAMES if its app is in a set, and the host's local
 * keys). Every node's data holds every app, so every server knows every
 * set of the job, describe_all or not. On
 * failure `out` holds what it held before. docs/user-guide.md lists the
 * keys. */
pmix_status_t px_jobinfo_build(const px_jobmap *m, uint32_t node, px_ivec *out);

/* ---- a fence, as the server engine hands it to its host ---- */

/* What a host needs of one node's fence_nb upcall, read from its info
 * array. The server engine puts there PMIX_COLLECT_DATA, PMIX_TIMEOUT,
 * PMIX_LOCAL_COLLECTIVE_STATUS (a local participant failed or was late:
 * this node must fail its part of the fence so that every node fails it)
 * and the fence's own algorithm (pmixlab.fence.algo for a collecting fence,
 * pmixlab.barrier.algo for a barrier). */
typedef struct px_fence_req {
    bool collect;
    double timeout;             /* seconds, 0: none */
    pmix_status_t local_status; /* PMIX_SUCCESS, or the local failure */
    const char *algo;           /* this fence's kind's algorithm, borrowed from the
                                 * info array, or NULL: the host's default */
} px_fence_req;

/* Read `info` (the upcall's, `ninfo` entries) into `out`. Unknown keys and
 * values of the wrong type are ignored; a PMIX_COLLECT_DATA that is not a
 * bool counts as true, as the Standard's attribute's presence does. */
void px_fence_req_read(const pmix_info_t info[], size_t ninfo, px_fence_req *out);

/* A fence's participant set, the identity of its collective on every
 * node: fences of the same set are the successive epochs of one
 * collective, fences of different sets are different collectives even
 * when they span the same nodes. The id is a hash of the namespace and
 * the sorted, distinct ranks (order and repeats do not matter); the whole
 * job (a wildcard, no procs, or every rank listed) is one set whose id
 * px_fence_set_all_id gives without looking at the ranks. The members are
 * the nodes that host a participant, ascending. */
typedef struct px_fence_set {
    uint64_t id;
    bool all; /* the whole job */
    uint32_t nmembers;
    /* malloc'd; NULL for the whole job of a block mapping (rank_node NULL):
     * the members are then nodes 0 .. nmembers - 1 */
    uint32_t *members;
} px_fence_set;

/* The set of `procs` (`nprocs` entries; none means the whole job) in the
 * job `m` (its nspace, nprocs, nnodes and mapping). PMIX_ERR_NOT_SUPPORTED
 * for a process of another namespace, PMIX_ERR_BAD_PARAM for a rank outside
 * the job, PMIX_ERR_NOMEM; on failure `out` holds nothing to free. */
pmix_status_t px_fence_set_make(const px_jobmap *m, const pmix_proc_t procs[], size_t nprocs,
                                px_fence_set *out);
/* The set of `procs` that may name processes of several jobs (`jobs`,
 * `njobs` maps over the same nodes, looked up by namespace; no procs means
 * the whole of jobs[0]). Processes of one namespace give what
 * px_fence_set_make gives with that job's map. Processes of several give
 * a set of their own: its id a hash of each namespace (in name order)
 * with its sorted, distinct ranks, or a mark for all of them (a wildcard,
 * or every rank listed), so order and repeats do not matter; its members
 * the nodes that host any of them; never `all`. PMIX_ERR_NOT_SUPPORTED
 * for a namespace not in `jobs`, else px_fence_set_make's errors. */
pmix_status_t px_fence_set_make_jobs(const px_jobmap *const jobs[], size_t njobs,
                                     const pmix_proc_t procs[], size_t nprocs, px_fence_set *out);
/* The id of the whole job's set (what px_fence_set_make gives it). */
uint64_t px_fence_set_all_id(const char *nspace);
void px_fence_set_fini(px_fence_set *s); /* frees members; NULL-safe */

/* ---- direct modex: the requests a node waits on ---- */

/* A Get of a rank of another node is a direct modex request to the node
 * that hosts it (px_jobmap_node_of). The table keeps the requests this
 * node sent until their answer comes, or the node they went to is lost
 * (they fail with PMIX_ERR_UNREACH): no Get waits on a node that is gone.
 * Zero it to start; one per node. */
typedef struct px_dmx_wait px_dmx_wait;
typedef struct px_dmx_table {
    px_dmx_wait *head;
    uint32_t next_id;
} px_dmx_table;

/* Remember a request to `node` whose answer goes to cbfunc(cbdata); its id
 * (never 0) travels with the request and comes back with the answer. 0
 * when memory runs out (nothing is kept; the caller fails the request). */
uint32_t px_dmx_add(px_dmx_table *t, uint32_t node, pmix_modex_cbfunc_t cbfunc, void *cbdata);
/* The request `id` could not be sent: forget it without calling back. */
void px_dmx_cancel(px_dmx_table *t, uint32_t id);
/* The answer to `id`: on success cbfunc gets `data` (`len` bytes) with
 * `release`(`release_arg`) to free it; on an error status cbfunc gets the
 * status alone and `release` is called here. An id not waited for (an
 * answer after its node was given up) is released and false returned. */
bool px_dmx_answer(px_dmx_table *t, uint32_t id, pmix_status_t status, char *data, size_t len,
                   pmix_release_cbfunc_t release, void *release_arg);
/* Node `node` is lost: every request to it fails with PMIX_ERR_UNREACH. */
void px_dmx_node_lost(px_dmx_table *t, uint32_t node);
/* Forget every request without calling back (the host is going away). */
void px_dmx_fini(px_dmx_table *t);

/* ---- a node's cross-node operations: px_hc ---- */

/* One px_hc per node of a job: the host side of what spans nodes, the
 * same code under pmixd, pmixsim and the unit tests. A host adapter hands
 * it the server engine's upcalls (px_hc_fence, px_hc_dmodex), the
 * messages other nodes' px_hc sent (px_hc_deliver) and what it learns of
 * failures (px_hc_break, px_hc_node_lost); the core sends messages, starts
 * timers and reads the clock through the adapter's px_hc_ops.
 *
 * Fences. A fence's participants name its collective (px_fence_set): one
 * px_coll among the nodes that host a participant, fences of the set being
 * its successive epochs, run one at a time in upcall order (the same order
 * on every node, since every process fences a given set in program
 * order); a later fence of the set waits in the set's queue. A collecting
 * fence is an allgather of the nodes' contributions, any other a barrier.
 * The algorithm is the fence's own key, else the host's default, else auto
 * (px_coll_choose). A fence that cannot run here (a local participant
 * failed or was late, an algorithm key this node cannot use, a start
 * px_coll refuses) still takes the set's epoch, only to fail it on every
 * member (px_coll_start_failed): the set stays in step. Every collective
 * message carries its set's member list, so a node that has not had the
 * upcall yet makes the set when the first message comes (px_coll keeps
 * messages of later epochs).
 *
 * Failures. A dead process of the job *breaks* the job on its node
 * (px_hc_break with tell): every running, queued and later fence there
 * fails with PMIX_ERR_PROC_TERM_WO_SYNC, and the news travels to every
 * other node down a binomial tree rooted at the origin (a child that
 * cannot be reached has its subtree served by its parent), which breaks
 * them too. A lost node (px_hc_node_lost) breaks this node, is reported
 * to the px_coll of every set it belongs to (which ends their running
 * epochs on every member) and fails the direct modex requests sent to it
 * with PMIX_ERR_UNREACH.
 *
 * Departures. A process that finalized and exited (px_hc_departed) will
 * never join a fence again: every fence that names it, running (not yet
 * joined by it), queued or later, fails with PMIX_ERR_LOST_CONNECTION on
 * every node (a group operation that names it with
 * PMIX_GROUP_MEMBER_FAILED; the server engine does the same for its local
 * fences and groups), and
 * the news travels like a death's, without breaking the job, in batches:
 * what a node learned waits px_hc_config.news_window and goes on in one
 * message per child. A node that
 * already knows of a death ignores departures (and drops the news it had
 * not sent yet): its fences fail with the
 * death's status anyway, and spreading the departure would only race the
 * death's news to the other nodes, where fences would fail with another
 * status depending on which news came first.
 *
 * Direct modex. A Get of a rank of another node goes to that rank's node,
 * whose adapter asks its server (ops->dmodex_local) and whose core sends
 * the answer back. An answer that cannot be sent (too big, no memory)
 * becomes an error answer; an error answer refused for want of memory is
 * sent again from a timer, a few times, then the adapter is asked to drop
 * its link to the requester (ops->drop), whose Gets and fences then fail
 * instead of waiting.
 *
 * Calls come from one thread (the host's loop), never from inside an op.
 * Upcall callbacks may run from inside the upcall (a one-node set, a
 * broken job). */
typedef struct px_hc px_hc;

/* A group operation of this node (construct or destruct), as the server
 * engine hands it to its host; everything borrowed for the call. Every
 * node that hosts a member makes one per operation, with the same op,
 * grp and procs. */
typedef struct px_hc_group_req {
    pmix_group_operation_t op; /* PMIX_GROUP_CONSTRUCT or PMIX_GROUP_DESTRUCT */
    const char *grp;
    const pmix_proc_t *procs; /* the members */
    size_t nprocs;
    bool assign_ctxid;          /* PMIX_GROUP_ASSIGN_CONTEXT_ID */
    double timeout;             /* seconds, 0: the host's default */
    pmix_status_t local_status; /* a member of this node failed: fail it everywhere */
    const char *data;           /* this node's contribution */
    size_t ndata;
} px_hc_group_req;

/* A group operation's end: the same status on every node; on success
 * every node's contribution concatenated (in member-node order) and the
 * context id when one was asked for. `release(arg)` frees the data once
 * the callee is done with it (it may be NULL). */
typedef void (*px_hc_group_cb)(pmix_status_t status, bool has_ctxid, uint64_t ctxid,
                               const char *data, size_t ndata, void *cbdata,
                               pmix_release_cbfunc_t release, void *arg);

/* What a message is, for an adapter that charges a network for it. */
typedef enum px_hc_kind {
    PX_HC_COLL = 1,    /* a collective's message */
    PX_HC_BROKEN = 2,  /* the news of a dead process */
    PX_HC_DMX_REQ = 3, /* a direct modex request */
    PX_HC_DMX_REP = 4, /* its answer */
    PX_HC_DEPARTED = 5 /* a process finalized and exited */
} px_hc_kind;

typedef struct px_hc_sent {
    px_hc_kind kind;
    size_t wire;    /* COLL: the collective message's size with the bytes it
                     * stands for (px_coll's sizes_only); others: the payload
                     * (DMX_REP: the data's bytes, 0 for an error) */
    uint64_t set;   /* COLL: the set's id */
    uint32_t epoch; /* COLL: the epoch */
    uint8_t type;   /* COLL: px_coll's message type (1 data, 2 notice) */
} px_hc_sent;

/* A fence as it starts or ends on this node, for a host's measurements. */
typedef struct px_hc_fence_info {
    uint64_t set;
    uint32_t epoch, nmembers;
    px_coll_kind kind;
    const px_coll_choice *resolved; /* the algorithm it runs, or NULL: failed here */
    size_t contrib;                 /* this node's bytes */
    double started;                 /* ops->now() at its start */
    bool aborted;                   /* this node failed the epoch itself */
} px_hc_fence_info;

typedef struct px_hc_ops {
    uint32_t version; /* PX_HC_OPS_VERSION */
    /* Send `msg` (`len` bytes, malloc'd; the adapter owns it afterwards,
     * also on failure) to node `node`. PMIX_ERR_NOMEM or
     * PMIX_ERR_OUT_OF_RESOURCE: this node could not (the message fails,
     * not the peer); any other error: the node cannot be reached (counted
     * as its failure). Must not call into the px_hc. */
    pmix_status_t (*send)(void *ctx, uint32_t node, void *msg, size_t len, const px_hc_sent *what);
    /* Timers and clock, as px_coll_ops's (px_coll_timer is the adapter's). */
    px_coll_timer *(*timer_start)(void *ctx, double seconds, void (*cb)(void *arg), void *arg);
    void (*timer_cancel)(void *ctx, px_coll_timer *timer);
    double (*now)(void *ctx);
    /* Ask this node's server for `proc`'s data (px_server_dmodex_request
     * or PMIx_server_dmodex_request): PMIX_SUCCESS and cb(cbdata) once
     * later (or from inside), or an error and no callback. */
    pmix_status_t (*dmodex_local)(void *ctx, const pmix_proc_t *proc, pmix_dmodex_response_fn_t cb,
                                  void *cbdata);

    /* Optional (NULL: none). */
    /* A context id for a group, unique for the life of the host (its
     * daemon set); asked only on the lowest member node of a construct
     * with PMIX_GROUP_ASSIGN_CONTEXT_ID. NULL: such constructs fail with
     * PMIX_ERR_BAD_PARAM. */
    uint64_t (*ctxid)(void *ctx);
    /* Drop the link to `node` as if it had failed: the core could not
     * answer it for seconds. The adapter then calls px_hc_node_lost. */
    void (*drop)(void *ctx, uint32_t node);
    /* One line for the host's log (no newline, no node name: the adapter
     * says which node it is). */
    void (*log)(void *ctx, const char *line);
    /* Groups for the hierarchical algorithm over `members` (`n` node ids,
     * ascending; NULL: nodes 0 .. n - 1): the result is borrowed by the
     * set's px_coll; *owned, if set, is destroyed with the set. */
    const px_coll_groups *(*groups)(void *ctx, const uint32_t *members, uint32_t n,
                                    px_coll_groups **owned);
    /* Measurements: a fence started or ended on this node. */
    void (*fence_start)(void *ctx, const px_hc_fence_info *f);
    void (*fence_end)(void *ctx, const px_hc_fence_info *f, pmix_status_t status);
    /* This node broke (`why`: a process here died, the news came, a node
     * was lost). */
    void (*broken)(void *ctx, const char *why);

    /* Required with px_hc_config.sizes_only: collected bytes kept aside,
     * shared by the nodes of a simulation (px_coll moves only sizes).
     * share_put takes this member's contribution (malloc'd, or NULL for
     * none) for (set, epoch); share_result gives the epoch's result for a
     * host callback (px_coll's offsets say what it must hold; *release
     * and *arg free it when the server is done); share_ended says this
     * member is done with the epoch. */
    void (*share_put)(void *ctx, uint64_t set, uint32_t epoch, uint32_t nmembers, uint32_t me,
                      void *data, size_t len);
    pmix_status_t (*share_result)(void *ctx, uint64_t set, uint32_t epoch,
                                  const px_coll_result *res, char **data,
                                  pmix_release_cbfunc_t *release, void **arg);
    void (*share_ended)(void *ctx, uint64_t set, uint32_t epoch, uint32_t nmembers);
} px_hc_ops;

#define PX_HC_OPS_VERSION 1

typedef struct px_hc_config {
    uint32_t node;        /* this node's id in the job map */
    const px_jobmap *job; /* borrowed; must outlive the px_hc */
    /* The host's default algorithms (px_coll_parse's values; NULL or "":
     * auto), for fences without a key of their own. */
    const char *fence_algo, *barrier_algo;
    double coll_timeout; /* seconds for fences without PMIX_TIMEOUT; 0: none */
    bool sizes_only;     /* collected bytes go through ops->share_* */
    unsigned dmx_tries;  /* sends of a refused error answer; 0: 20 */
    /* Seconds for which the news of departures waits, so that what a node
     * learns from many arrives in one message per child (0: sent at the
     * end of the call that learned it). */
    double news_window;
} px_hc_config;

/* A node's core, or NULL (bad ops or config, no memory). */
px_hc *px_hc_create(const px_hc_ops *ops, void *ctx, const px_hc_config *cfg);
/* Free everything; calls no callback and no op but timer_cancel. NULL is
 * a no-op. */
void px_hc_destroy(px_hc *hc);

/* The server engine's fence_nb upcall, as it came. */
pmix_status_t px_hc_fence(px_hc *hc, const pmix_proc_t procs[], size_t nprocs,
                          const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                          pmix_modex_cbfunc_t cbfunc, void *cbdata);
/* A group operation (the server engine's group upcall, read into a
 * px_hc_group_req): a collective of its own among the nodes that host a
 * member, run like a fence's (per-set queue, failing in step, a death or a
 * departed member failing it), an allgather of the nodes' contributions
 * plus the context id the lowest member node makes. The same errors as
 * px_hc_fence, and PMIX_ERR_BAD_PARAM for a bad request. */
pmix_status_t px_hc_group(px_hc *hc, const px_hc_group_req *req, px_hc_group_cb cb, void *cbdata);
/* The server engine's direct_modex upcall: PMIX_ERR_NOT_FOUND for a
 * process of this node or outside the job (the server answers itself). */
pmix_status_t px_hc_dmodex(px_hc *hc, const pmix_proc_t *proc, const pmix_info_t info[],
                           size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata);
/* A message another node's px_hc sent (borrowed). PMIX_ERR_BAD_PARAM for
 * a malformed one (nothing changed). */
pmix_status_t px_hc_deliver(px_hc *hc, uint32_t from, const void *msg, size_t len);
/* A process of this node died (`rank`), or something else broke the job
 * here (rank PMIX_RANK_INVALID): fail every fence; with `tell`, the other
 * nodes learn it too. */
void px_hc_break(px_hc *hc, pmix_rank_t rank, bool tell, const char *why);
/* Process `rank` of the job finalized and exited: fences that name it
 * fail (above); with `tell`, the other nodes learn it too. */
void px_hc_departed(px_hc *hc, pmix_rank_t rank, bool tell);
/* The same for a process of any job this node serves (the first job or
 * one px_hc_job_add gave): a spawned job's departures fail its fences and
 * groups on every node as the first job's do. Ignored for a process of
 * no such job. */
void px_hc_departed_proc(px_hc *hc, const pmix_proc_t *proc, bool tell);
/* Node `node` is gone (its link dropped, its host died). */
void px_hc_node_lost(px_hc *hc, uint32_t node);
/* Another job over the same nodes (a spawned namespace): from now on its
 * processes' fences and direct modex, and group operations that name
 * processes of several jobs, run here as the first job's do
 * (px_fence_set_make_jobs names their collectives: no new message, and
 * the first job's sets keep their ids). `m` is borrowed until
 * px_hc_job_remove or px_hc_destroy; every node adds it before its
 * processes fence or Get (a message of an unknown set is kept by px_coll
 * until the upcall comes; every node adds the jobs in the same order).
 * A spawned process's departure is told with px_hc_departed_proc, its
 * death with px_hc_break (which fails every job's fences).
 * PMIX_ERR_BAD_PARAM for a map over other nodes or a namespace already
 * known, PMIX_ERR_NOMEM. */
pmix_status_t px_hc_job_add(px_hc *hc, const px_jobmap *m);
/* Forget the job `nspace` (not the first): its processes' later requests
 * fail as any unknown namespace's do. */
void px_hc_job_remove(px_hc *hc, const char *nspace);
bool px_hc_broken(const px_hc *hc);

/* ---- who may join a job's daemons: px_auth ---- */

/* The daemons of a job share a secret key that their launcher made
 * (px_auth_keygen) and gave each of them out of band (its control
 * connection, or the environment of the command that starts it: never a
 * command line, which every user can read). A connection between two
 * daemons, or from a daemon to its launcher, is trusted only after both
 * ends proved they hold the key, each for this connection alone:
 *
 *   connector -> acceptor   its node id and a fresh nonce nc
 *   acceptor  -> connector  a fresh nonce na, tag(ACCEPTOR, nc, na)
 *   connector -> acceptor   tag(CONNECTOR, nc, na)
 *
 * A tag is HMAC-SHA-256 under the key of the role, both node ids, both
 * nonces and the job's name (libsodium), so it answers one challenge of
 * one connection of one job: a tag seen on one connection is worth
 * nothing on another. Nothing else of the protocol is read from a peer
 * before its tag checks. */
#define PX_AUTH_KEYLEN 32
#define PX_AUTH_NONCELEN 16
#define PX_AUTH_TAGLEN 32

typedef enum px_auth_role {
    PX_AUTH_CONNECTOR,
    PX_AUTH_ACCEPTOR
} px_auth_role;

/* A new random key, or a nonce: 0, or -1 if libsodium cannot start. */
int px_auth_keygen(uint8_t key[PX_AUTH_KEYLEN]);
int px_auth_nonce(uint8_t nonce[PX_AUTH_NONCELEN]);
/* The key as 64 hexadecimal digits, and back (-1: not 64 hex digits; the
 * key is unchanged then). */
void px_auth_key_hex(const uint8_t key[PX_AUTH_KEYLEN], char hex[2 * PX_AUTH_KEYLEN + 1]);
int px_auth_key_parse(const char *hex, uint8_t key[PX_AUTH_KEYLEN]);
/* The tag `role` sends on the connection from node `connector` to node
 * `acceptor` (a launcher uses an id of its own, e.g. UINT32_MAX) of job
 * `job`, after the nonces nc and na; 0, or -1. px_auth_check compares in
 * constant time. */
int px_auth_tag(const uint8_t key[PX_AUTH_KEYLEN], px_auth_role role, const char *job,
                uint32_t connector, uint32_t acceptor, const uint8_t nc[PX_AUTH_NONCELEN],
                const uint8_t na[PX_AUTH_NONCELEN], uint8_t tag[PX_AUTH_TAGLEN]);
bool px_auth_check(const uint8_t key[PX_AUTH_KEYLEN], px_auth_role role, const char *job,
                   uint32_t connector, uint32_t acceptor, const uint8_t nc[PX_AUTH_NONCELEN],
                   const uint8_t na[PX_AUTH_NONCELEN], const uint8_t tag[PX_AUTH_TAGLEN]);

/* ---- groups: context ids ---- */

/* A group construct asks its host for a context id
 * (PMIX_GROUP_ASSIGN_CONTEXT_ID) unique for the life of the launcher or
 * daemon set and the same on every member (px_group_req in the server
 * engine's px_server.h). Every host makes them by one rule, with no central
 * coordination: the node with the lowest index among the nodes that host
 * a member makes the id from its own generator, and it travels with that
 * node's contribution to the construct's allgather; every node takes it
 * from there. An id is the node's index plus one in the top 24 bits and
 * the node's count of ids made so far in the low 40: ids of different
 * nodes never meet, and one node makes 2^40 - 1 of them. 0 is never an id.
 * Zero the generator, then set its node, once per node. px_hc asks the
 * adapter's ops->ctxid on the node that makes the id (px_hc_group): an
 * adapter answers it with px_ctxid_next of its node's generator. */
typedef struct px_ctxid_gen {
    uint32_t node; /* this node's index: below PX_CTXID_MAX_NODES */
    uint64_t made; /* ids made so far */
} px_ctxid_gen;

#define PX_CTXID_MAX_NODES ((1u << 24) - 1)

/* The next id of node g->node, or 0 when the node's 2^40 - 1 ids are used
 * up or its index is out of range: the host fails the construct then
 * (PMIX_ERR_OUT_OF_RESOURCE), as the unit tests' host does. */
uint64_t px_ctxid_next(px_ctxid_gen *g);
/* The node whose generator makes the id of a construct whose members are
 * on nodes[0 .. n) (any order; n > 0): the lowest index. */
uint32_t px_ctxid_maker(const uint32_t nodes[], size_t n);

#endif /* PX_HOSTCORE_H */
