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
 * (px_fence_set_make), and keeps the direct modex requests a node waits
 * on (px_dmx_*).
 *
 * Nothing here does I/O, reads a clock or keeps state between calls.
 */
#ifndef PX_HOSTCORE_H
#define PX_HOSTCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

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
    uint32_t napps;          /* 0: one app of every rank, no argv or wdir */
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

#endif /* PX_HOSTCORE_H */
