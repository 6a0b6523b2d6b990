/*
 * pmixrun_job.c - the job as the PMIx server engine sees it: where each
 * rank runs (bindings), the job's data (px_server_register_nspace), its
 * clients, the server engine and its loop, and the host table
 * (px_server_host) whose upcalls the engine makes.
 *
 * The job is one or more applications (pmixrun_apps.c), each in its own
 * PMIX_APP_INFO_ARRAY, with its process set. Under pmixrun alone it runs on one node, so
 * every rank is local: local rank = node rank = rank, the node id is 0, the
 * node list is this host. Under pmixd the job spans the nodes of the map
 * (job.rank_node), and only this node's ranks are clients. The keys come
 * from the host core's job-information builder (hostcore/, shared with
 * pmixsim), which describes every node and rank; this file adds each local
 * rank's directory, locality and cpuset.
 *
 * The server. The engine runs on the posix platform made for external
 * progress (job_platform): the main thread's loop (px_posix_run_once) is
 * the only one, so the upcalls run on the main thread, with the job as
 * their context, and record what happened in the job directly; the main
 * loop acts on it after the turn. They never block and never print. The
 * engine's functions want its lock held: the upcalls have it already (it
 * is recursive), and the job's functions below that call the engine from
 * outside a callback take it (LOCKED), uncontended, since no other thread
 * exists. The Standard's server API (PMIx_server_init) is not used here:
 * its module carries no context, which would force a global, and it runs
 * a progress thread of its own. tests/stdhost/ is the host that proves
 * that API.
 *
 * Who may be a rank. A process that says HELLO as rank R is accepted only
 * if it is the process forked for R or a descendant of it: the library
 * gives client_connected2 the peer's pid (SO_PEERCRED), and its parent
 * chain in /proc must reach R's pid. So a wrapper that execs the program
 * (the pid stays) or that forks it and waits (`sh -c`, `time`, a debugger
 * that starts it) works, while any other process of the user (a sibling,
 * a process started elsewhere, one that left the rank's tree by a double
 * fork) is refused with PMIX_ERR_NO_PERMISSIONS and cannot take the
 * rank's place. R's pid is written right after the fork (launch_rank),
 * before the loop runs again, so the check never sees a rank half
 * started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include <hwloc/glibc-sched.h>

#include "pmixrun.h"
#include "px_hostcore.h"

/* An engine call from outside a callback, under the engine lock. */
#define LOCKED(j, call)                    \
    ({                                     \
        px_posix_ops()->lock((j)->plat);   \
        __typeof__(call) rc__ = (call);    \
        px_posix_ops()->unlock((j)->plat); \
        rc__;                              \
    })

/* ---- bindings ---- */

/* Load the topology once, with the OS devices that are the node's NICs
 * (net_node_nics, which may have loaded it first); `mine` gets the PUs
 * this process may use. */
static int load_topology(job *j, hwloc_bitmap_t mine)
{
    if (j->topo == NULL) {
        bool ok = hwloc_topology_init(&j->topo) == 0;
        if (ok) {
            px_nics_topology_prepare(j->topo);
            if (!(ok = hwloc_topology_load(j->topo) == 0))
                hwloc_topology_destroy(j->topo);
        }
        if (!ok) {
            j->topo = NULL;
            fprintf(stderr, "pmixrun: cannot read this machine's topology (hwloc failed)\n");
            return -1;
        }
    }
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(j->topo);
    if (hwloc_get_cpubind(j->topo, mine, HWLOC_CPUBIND_PROCESS) != 0)
        hwloc_bitmap_copy(mine, allowed);
    else
        hwloc_bitmap_and(mine, mine, allowed);
    if (hwloc_bitmap_iszero(mine))
        hwloc_bitmap_copy(mine, allowed);
    return 0;
}

/* The objects of `type` that hold some of `mine`, in the topology's order,
 * into objs (at most max); their number. NUMA nodes are not in the tree of
 * PUs (hwloc 2): they are found by their cpusets too. */
static int objs_in(job *j, hwloc_const_bitmap_t mine, hwloc_obj_type_t type, hwloc_obj_t *objs,
                   int max)
{
    int n = 0, all = hwloc_get_nbobjs_by_type(j->topo, type);
    for (int i = 0; i < all; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(j->topo, type, (unsigned)i);
        if (o == NULL || o->cpuset == NULL || !hwloc_bitmap_intersects(o->cpuset, mine))
            continue;
        if (objs != NULL && n < max)
            objs[n] = o;
        n++;
    }
    return n;
}

int job_count_objs(job *j, hwloc_obj_type_t type)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (mine == NULL || load_topology(j, mine) != 0) {
        hwloc_bitmap_free(mine);
        return -1;
    }
    int n = objs_in(j, mine, type, NULL, 0);
    if (n <= 0 && type == HWLOC_OBJ_CORE)
        n = objs_in(j, mine, HWLOC_OBJ_PU, NULL, 0);
    hwloc_bitmap_free(mine);
    return n > 0 ? n : 1;
}

/* Open MPI's picture of a binding: per socket, '/'-separated cores, 'B'
 * for a core the process may run on, '.' otherwise: "[B/.]". */
static void report_binding(job *j, rank_proc *r, hwloc_const_bitmap_t mine)
{
    char map[1024], what[64] = "";
    size_t len = 0;
    int npkg = hwloc_get_nbobjs_by_type(j->topo, HWLOC_OBJ_PACKAGE);
    for (int p = 0; p < (npkg > 0 ? npkg : 1) && len < sizeof map - 8; p++) {
        hwloc_obj_t pkg = npkg > 0 ? hwloc_get_obj_by_type(j->topo, HWLOC_OBJ_PACKAGE, (unsigned)p)
                                   : hwloc_get_root_obj(j->topo);
        map[len++] = '[';
        int nc = hwloc_get_nbobjs_inside_cpuset_by_type(j->topo, pkg->cpuset, HWLOC_OBJ_CORE);
        for (int c = 0; c < nc && len < sizeof map - 4; c++) {
            hwloc_obj_t core = hwloc_get_obj_inside_cpuset_by_type(j->topo, pkg->cpuset,
                                                                   HWLOC_OBJ_CORE, (unsigned)c);
            if (c > 0)
                map[len++] = '/';
            map[len++] = hwloc_bitmap_isincluded(core->cpuset, r->cpuset) ? 'B' : '.';
            if (what[0] == '\0' && r->bound && hwloc_bitmap_intersects(core->cpuset, r->cpuset))
                snprintf(what, sizeof what, "socket %d[core %u]", p, core->logical_index);
        }
        map[len++] = ']';
    }
    map[len] = '\0';
    if (!r->bound || hwloc_bitmap_isequal(r->cpuset, mine))
        fprintf(stderr,
                "[%s:%d] MCW rank %d is not bound (or bound to all available "
                "processors)\n",
                j->hostname, (int)getpid(), r->rank);
    else
        fprintf(stderr, "[%s:%d] MCW rank %d bound to %s: %s\n", j->hostname, (int)getpid(),
                r->rank, what, map);
}

int job_bindings(job *j)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (mine == NULL || load_topology(j, mine) != 0) {
        hwloc_bitmap_free(mine);
        return -1;
    }
    /* The node's cores, for oversubscription (PUs if hwloc sees no cores). */
    j->ncores = objs_in(j, mine, HWLOC_OBJ_CORE, NULL, 0);
    if (j->ncores <= 0)
        j->ncores = objs_in(j, mine, HWLOC_OBJ_PU, NULL, 0);
    if (j->ncores <= 0)
        j->ncores = 1;
    int slots = j->ncores;
    if (j->node_slots != NULL && j->ppr_n == 0)
        slots = j->node_slots[j->node];
    if (j->no_oversubscribe && j->nlocal > slots) {
        fprintf(stderr,
                "pmixrun: %d processes on %s, which has %d %s%s: refused (--nooversubscribe; "
                "leave it out to run them anyway)\n",
                j->nlocal, j->hostname, slots,
                j->node_slots != NULL && j->ppr_n == 0 ? "slot" : "core", slots == 1 ? "" : "s");
        hwloc_bitmap_free(mine);
        return -1;
    }

    /* Binding targets: the cores, sockets or NUMA nodes we may run on (PUs
     * if hwloc sees no cores). */
    hwloc_obj_type_t type = j->bind_to == BIND_SOCKET ? HWLOC_OBJ_PACKAGE
                            : j->bind_to == BIND_NUMA ? HWLOC_OBJ_NUMANODE
                                                      : HWLOC_OBJ_CORE;
    const char *what = j->bind_to == BIND_SOCKET ? "socket"
                       : j->bind_to == BIND_NUMA ? "NUMA node"
                                                 : "core";
    int ntargets = 0;
    hwloc_obj_t *targets = NULL;
    if (j->bind_to != BIND_NONE) {
        ntargets = objs_in(j, mine, type, NULL, 0);
        if (ntargets <= 0 && type == HWLOC_OBJ_CORE) {
            type = HWLOC_OBJ_PU;
            ntargets = objs_in(j, mine, type, NULL, 0);
        }
        if (ntargets <= 0 || (targets = calloc((size_t)ntargets, sizeof *targets)) == NULL) {
            fprintf(stderr, "pmixrun: --bind-to: no %s is available to this process\n", what);
            hwloc_bitmap_free(mine);
            return -1;
        }
        objs_in(j, mine, type, targets, ntargets);
        if (j->bind_to == BIND_CORE && j->nlocal > ntargets)
            fprintf(stderr,
                    "pmixrun: warning: %d processes on %d cores: several processes share a "
                    "core (use --bind-to none to let the system place them)\n",
                    j->nlocal, ntargets);
    }
    /* --map-by ppr:N:OBJ with --bind-to OBJ: N consecutive ranks per object. */
    int per = 1;
    if (j->ppr_n > 0 && j->ppr_obj == type)
        per = j->ppr_n;
    for (int i = 0; i < j->nlocal; i++) {
        rank_proc *r = &j->ranks[i];
        if (j->bind_to != BIND_NONE) {
            hwloc_obj_t obj = targets[(i / per) % ntargets];
            r->cpuset = hwloc_bitmap_dup(obj->cpuset);
            if (r->cpuset != NULL)
                hwloc_bitmap_and(r->cpuset, r->cpuset, mine);
            r->bound = true;
        } else {
            r->cpuset = hwloc_bitmap_dup(mine);
        }
        if (r->cpuset == NULL) {
            fprintf(stderr, "pmixrun: out of memory\n");
            free(targets);
            hwloc_bitmap_free(mine);
            return -1;
        }
        CPU_ZERO(&r->affinity);
        hwloc_cpuset_to_glibc_sched_affinity(j->topo, r->cpuset, &r->affinity, sizeof r->affinity);
        if (j->report_bindings)
            report_binding(j, r, mine);
    }
    free(targets);
    hwloc_bitmap_free(mine);
    return 0;
}

/* ---- upcalls ---- */

rank_proc *job_rank_of(job *j, const pmix_proc_t *proc)
{
    if (j == NULL || proc == NULL)
        return NULL;
    if (strncmp(proc->nspace, j->nspace, PMIX_MAX_NSLEN) != 0) {
        rank_proc *r = NULL;
        for (job *c = j->children; c != NULL && r == NULL; c = c->next_child)
            r = job_rank_of(c, proc); /* a spawned job's rank (pmixrun_spawn.c) */
        return r;
    }
    if (proc->rank < (pmix_rank_t)j->nlocal && j->ranks[proc->rank].rank == (int)proc->rank)
        return &j->ranks[proc->rank];
    for (int i = 0; i < j->nlocal; i++)
        if (j->ranks[i].rank == (int)proc->rank)
            return &j->ranks[i];
    return NULL;
}

const char *job_node_name(const job *j, int node)
{
    return j->node_names != NULL ? j->node_names[node] : j->hostname;
}

int job_node_of(const job *j, int rank)
{
    return j->rank_node != NULL ? (int)j->rank_node[rank] : 0;
}

static pmix_status_t up_connected(void *hctx, const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    rank_proc *r = job_rank_of(hctx, proc);
    if (r == NULL)
        return PMIX_ERR_NOT_FOUND;
    r->connected = true;
    return PMIX_OPERATION_SUCCEEDED;
}

static bool info_is(const pmix_info_t *i, const char *key);

/* The parent of `pid` per /proc/PID/stat ("pid (comm) state ppid ..."; the
 * command may hold spaces and parentheses: the last ')' ends it), 0 if
 * unknown. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    char state;
    long ppid;
    if (p == NULL || sscanf(p + 1, " %c %ld", &state, &ppid) != 2)
        return 0;
    return (pid_t)ppid;
}

/* True if `pid` is `root` or one of its descendants (at most 64 levels). */
static bool descends_from(pid_t pid, pid_t root)
{
    for (int depth = 0; depth < 64 && pid > 0 && root > 0; depth++) {
        if (pid == root)
            return true;
        if (pid == 1)
            return false;
        pid = parent_of(pid);
    }
    return false;
}

/* The library says who the peer is (PMIX_PROC_PID): only the rank's own
 * process, or one it started, may be the rank. */
static pmix_status_t up_connected2(void *hctx, const pmix_proc_t *proc, void *server_object,
                                   const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata)
{
    rank_proc *r = job_rank_of(hctx, proc);
    if (r == NULL)
        return PMIX_ERR_NOT_FOUND;
    pid_t peer = 0;
    for (size_t i = 0; i < ninfo; i++)
        if (info_is(&info[i], PMIX_PROC_PID) && info[i].value.type == PMIX_PID)
            peer = info[i].value.data.pid;
    if (!descends_from(peer, r->pid))
        return PMIX_ERR_NO_PERMISSIONS;
    return up_connected(hctx, proc, server_object, cbfunc, cbdata);
}

static pmix_status_t up_finalized(void *hctx, const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    rank_proc *r = job_rank_of(hctx, proc);
    if (r == NULL)
        return PMIX_ERR_NOT_FOUND;
    r->finalized = true;
    return PMIX_OPERATION_SUCCEEDED;
}

/* PMIx_Abort from a rank ends the whole job (this launcher runs one job; a
 * subset of procs is treated like the whole job). */
static pmix_status_t up_abort(void *hctx, const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx;
    rank_proc *r = job_rank_of(j, proc);
    pending_abort *pa = malloc(sizeof *pa);
    if (pa == NULL)
        return PMIX_ERR_NOMEM;
    pa->cbfunc = cbfunc;
    pa->cbdata = cbdata;
    if (!j->abort_seen) {
        /* Every registered process hears of it before the job is stopped:
         * here when this is the only node; pmixd's PD_ABORT makes pmixrun
         * tell every node (pmixrun_events.c). */
        if (j->cross == NULL)
            px_server_notify(j->srv, PMIX_ERR_PROC_ABORTED, proc, PMIX_RANGE_NAMESPACE, NULL, 0);
        j->abort_seen = true;
        j->abort_rank = r != NULL ? r->rank : -1;
        j->abort_status = status;
        j->abort_msg = msg != NULL ? strdup(msg) : NULL;
    }
    pa->next = j->aborts;
    j->aborts = pa;
    return PMIX_SUCCESS; /* answered by job_server_stop, once the ranks are gone */
}

static void free_release(void *cbdata)
{
    free(cbdata);
}

/* One node is the whole job: the node's contribution is the job's data.
 * pmixd's cross-node fences go to its own upcall (job.cross). */
static pmix_status_t up_fence(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx;
    if (j->cross != NULL && j->cross->fence_nb != NULL)
        return j->cross->fence_nb(j->cross_ctx, procs, nprocs, info, ninfo, data, ndata, cbfunc,
                                  cbdata);
    px_fence_req req;
    px_fence_req_read(info, ninfo, &req);
    if (req.local_status != PMIX_SUCCESS) {
        cbfunc(req.local_status, NULL, 0, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    char *copy = NULL;
    if (ndata > 0) {
        copy = malloc(ndata);
        if (copy == NULL)
            return PMIX_ERR_NOMEM;
        memcpy(copy, data, ndata);
    }
    cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, copy != NULL ? free_release : NULL, copy);
    return PMIX_SUCCESS;
}

static pmix_status_t up_dmodex(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                               size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx;
    if (j->cross != NULL && j->cross->direct_modex != NULL)
        return j->cross->direct_modex(j->cross_ctx, proc, info, ninfo, cbfunc, cbdata);
    return PMIX_ERR_NOT_FOUND; /* there is no other node to ask */
}

static bool info_is(const pmix_info_t *i, const char *key)
{
    return strncmp(i->key, key, PMIX_MAX_KEYLEN) == 0;
}

static bool info_bool(const pmix_info_t *i)
{
    return i->value.type != PMIX_BOOL || i->value.data.flag;
}

/* Job control: kill, signal and terminate (pmixrun_jctrl.c), and cleanup
 * registrations, remembered and carried out when the job ends. A system
 * server also takes PMIX_JOB_CTRL_TERMINATE aimed at itself (no targets,
 * or its own or its ".srv" namespace): it stops every job it runs and
 * exits 0. A request with none of those (preemptible, checkpoint, pause,
 * resume, cancel, restart, provision...) is refused with
 * PMIX_ERR_NOT_SUPPORTED. */
static pmix_status_t up_job_control(void *hctx, const pmix_proc_t *requestor,
                                    const pmix_proc_t targets[], size_t ntargets,
                                    const pmix_info_t directives[], size_t ndirs,
                                    pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx;
    bool recursive = false, leave_top = false;
    const char *ignore = NULL;
    bool any = false;
    int sig = 0;
    for (size_t i = 0; j->system_server && i < ndirs; i++) {
        if (!info_is(&directives[i], PMIX_JOB_CTRL_TERMINATE) || !info_bool(&directives[i]))
            continue;
        char srv[PMIX_MAX_NSLEN + 1];
        snprintf(srv, sizeof srv, "%.*s.srv", PMIX_MAX_NSLEN - 4, j->nspace);
        for (size_t t = 0; t < ntargets; t++)
            if (!PMIx_Check_nspace(targets[t].nspace, j->nspace) &&
                !PMIx_Check_nspace(targets[t].nspace, srv))
                return PMIX_ERR_NOT_SUPPORTED; /* terminating one of its jobs: not yet */
        fprintf(stderr, "pmixrun: system server: %s:%u asked it to terminate\n", requestor->nspace,
                requestor->rank);
        j->terminate_asked = true; /* the main loop ends the run (pmixrun.c) */
        return PMIX_OPERATION_SUCCEEDED;
    }
    for (size_t i = 0; i < ndirs; i++) {
        const pmix_info_t *d = &directives[i];
        if (info_is(d, PMIX_JOB_CTRL_KILL) && info_bool(d))
            sig = SIGKILL;
        else if (info_is(d, PMIX_JOB_CTRL_TERMINATE) && info_bool(d) && sig == 0)
            sig = SIGTERM;
        else if (info_is(d, PMIX_JOB_CTRL_SIGNAL) && sig == 0) {
            int v = 0;
            if (d->value.type != PMIX_INT || (v = d->value.data.integer) <= 0 || v >= NSIG)
                return PMIX_ERR_BAD_PARAM;
            sig = v;
        } else if (info_is(d, PMIX_CLEANUP_RECURSIVE))
            recursive = info_bool(d);
        else if (info_is(d, PMIX_CLEANUP_LEAVE_TOPDIR))
            leave_top = info_bool(d);
        else if (info_is(d, PMIX_CLEANUP_IGNORE) && d->value.type == PMIX_STRING)
            ignore = d->value.data.string;
    }
    for (size_t i = 0; i < ndirs; i++) {
        const pmix_info_t *d = &directives[i];
        bool is_dir = info_is(d, PMIX_REGISTER_CLEANUP_DIR);
        if (!is_dir && !info_is(d, PMIX_REGISTER_CLEANUP))
            continue;
        if (d->value.type != PMIX_STRING || d->value.data.string == NULL)
            continue;
        files_register_cleanup(j, d->value.data.string, is_dir, recursive, leave_top, ignore);
        any = true;
    }
    if (sig != 0) {
        pmix_status_t rc = jctrl_signal(j, sig, targets, ntargets);
        if (rc != PMIX_SUCCESS)
            return rc;
        any = true;
    }
    return any ? PMIX_OPERATION_SUCCEEDED : PMIX_ERR_NOT_SUPPORTED;
}

/* A group operation: one node is the whole job, so every member is here
 * and the node's contribution is the group's data; what the engine needs
 * a host for is the context id. pmixd's go to the host core (job.cross). */
static pmix_status_t up_group(void *hctx, const px_group_req *req, px_group_cbfunc_t cbfunc,
                              void *cbdata)
{
    job *j = hctx;
    if (j->cross != NULL && j->cross->group != NULL)
        return j->cross->group(j->cross_ctx, req, cbfunc, cbdata);
    if (req->local_status != PMIX_SUCCESS) {
        cbfunc(req->local_status, false, 0, NULL, 0, cbdata, NULL, NULL);
        return PMIX_SUCCESS;
    }
    uint64_t id = 0;
    if (req->assign_ctxid && (id = px_ctxid_next(&j->ctxids)) == 0)
        return PMIX_ERR_OUT_OF_RESOURCE; /* 2^40 groups made */
    cbfunc(PMIX_SUCCESS, req->assign_ctxid, id, req->data, req->ndata, cbdata, NULL, NULL);
    return PMIX_SUCCESS;
}

/* An event for the other nodes: pmixd's go to pmixrun (job.cross); a tool's
 * of pmixrun --nodes to every daemon (nodes_notify); pmixrun alone has no
 * other node. */
static void up_notify(void *hctx, pmix_status_t status, const pmix_proc_t *source,
                      pmix_data_range_t range, const pmix_info_t info[], size_t ninfo)
{
    job *j = hctx;
    if (j->rank_event != NULL) /* pmixrun started by a debugger: pmixrun_rndz.c */
        j->rank_event(j, status, source);
    if (j->cross != NULL && j->cross->notify_event != NULL)
        j->cross->notify_event(j->cross_ctx, status, source, range, info, ninfo);
    else if (j->nodes != NULL)
        nodes_notify(j, status, source, range, info, ninfo);
}

/* Publish, lookup, unpublish: the job's data service (pmixrun_pubsub.c). */
static pmix_status_t up_publish(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                                size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return pubsub_publish(hctx, proc, info, ninfo, cbfunc, cbdata);
}

static pmix_status_t up_lookup(void *hctx, const pmix_proc_t *proc, char **keys,
                               const pmix_info_t info[], size_t ninfo, pmix_lookup_cbfunc_t cbfunc,
                               void *cbdata)
{
    return pubsub_lookup(hctx, proc, keys, info, ninfo, cbfunc, cbdata);
}

static pmix_status_t up_unpublish(void *hctx, const pmix_proc_t *proc, char **keys,
                                  const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                  void *cbdata)
{
    return pubsub_unpublish(hctx, proc, keys, info, ninfo, cbfunc, cbdata);
}

static pmix_status_t up_spawn(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                              size_t ninfo, const pmix_app_t apps[], size_t napps,
                              pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    job *j = hctx;
    if (j->spawn == NULL) {
        fprintf(stderr, "pmixrun: PMIx_Spawn from %s:%u refused: this host does not spawn\n",
                proc->nspace, proc->rank);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    return j->spawn(hctx, proc, job_info, ninfo, apps, napps, cbfunc, cbdata);
}

/* A tool's (or a rank's) PMIx_IOF_pull: every rank's output is offered to
 * the server as it is forwarded (iof_stream_deliver), so a pull of this
 * job's ranks, or of a job it spawned, is accepted; of another namespace,
 * refused. pmixrun over daemons asks the daemons to send their ranks'
 * output to it as well (j->iof_pull, nodes_iof_pull) and answers once they do; in pmixd
 * the pull takes this node's ranks' output. */
static pmix_status_t up_iof_pull(void *hctx, const pmix_proc_t *requestor,
                                 const pmix_proc_t procs[], size_t nprocs, const pmix_info_t dirs[],
                                 size_t ndirs, pmix_iof_channel_t channels, pmix_op_cbfunc_t cbfunc,
                                 void *cbdata)
{
    job *j = hctx;

    (void)requestor;
    (void)dirs;
    (void)ndirs;
    (void)channels;
    for (size_t i = 0; i < nprocs; i++) {
        bool known = PMIx_Check_nspace(procs[i].nspace, j->nspace);
        for (const job *c = j->children; c != NULL && !known; c = c->next_child)
            known = PMIx_Check_nspace(procs[i].nspace, c->nspace);
        if (!known)
            return PMIX_ERR_NOT_FOUND;
    }
    if (j->iof_pull != NULL)
        return j->iof_pull(j, cbfunc, cbdata);
    return PMIX_OPERATION_SUCCEEDED;
}

static const px_server_host host = {
    .version = PX_SERVER_HOST_VERSION,
    .client_connected = up_connected,
    .client_connected2 = up_connected2,
    .client_finalized = up_finalized,
    .abort = up_abort,
    .fence_nb = up_fence,
    .direct_modex = up_dmodex,
    .job_control = up_job_control,
    .group = up_group,
    .publish = up_publish,
    .lookup = up_lookup,
    .unpublish = up_unpublish,
    .tool_connected = tool_connected_up, /* pmixrun_tool.c */
    .query = tool_query_up,
    .notify_event = up_notify,
    .spawn = up_spawn,
    .iof_pull = up_iof_pull,
    .push_stdin = iof_push_up, /* pmixrun_iof.c */
};

/* ---- the loop and the server ---- */

int job_platform(job *j, px_posix_watch_cb on_signal, void *arg)
{
    char err[256] = "";
    j->plat = px_posix_create(true, err, sizeof err);
    if (j->plat == NULL) {
        fprintf(stderr, "pmixrun: cannot make the event loop: %s\n", err);
        return -1;
    }
    j->sig_w = px_posix_watch_create(j->plat, j->sigfd, PX_POSIX_READ, on_signal, arg);
    if (j->sig_w == NULL) {
        fprintf(stderr, "pmixrun: cannot watch for signals\n");
        return -1;
    }
    return 0;
}

void job_platform_free(job *j)
{
    px_posix_watch_destroy(j->sig_w);
    j->sig_w = NULL;
    iof_stdin_close(j);
    for (int i = 0; j->ranks != NULL && i < j->nlocal; i++) {
        px_posix_watch_destroy(j->ranks[i].out.w);
        px_posix_watch_destroy(j->ranks[i].err.w);
        j->ranks[i].out.w = j->ranks[i].err.w = NULL;
    }
    px_posix_destroy(j->plat);
    j->plat = NULL;
}

int job_server_start(job *j)
{
    char err[256] = "";
    /* a daemon (its map has rank_node) forwards publish/lookup to pmixrun */
    bool forwarding = j->rank_node != NULL;
    if (forwarding ? pubsub_init(j, true) != 0 : pubsub_start(j) != 0)
        return -1;
    j->srv = px_server_create(&host, j, px_posix_ops(), j->plat);
    if (j->srv == NULL) {
        fprintf(stderr, "pmixrun: cannot start the PMIx server: out of memory\n");
        return -1;
    }
    j->server_up = true;
    /* The socket goes in the job's private directory, as PMIX_SERVER_TMPDIR
     * put it; clients find it through PMIX_SERVER_URI (job_setup_fork). */
    pmix_status_t rc =
        px_posix_listen(j->plat, j->topdir, px_server_sink(), j->srv, &j->uri, err, sizeof err);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixrun: cannot start the PMIx server: cannot listen in %s: %s\n",
                j->topdir, err);
        return -1;
    }
    return tool_start(j); /* pmixrun_tool.c: tools may attach */
}

pmix_status_t job_setup_fork(job *j, int rank, char ***env)
{
    pmix_proc_t p;

    PMIx_Load_procid(&p, j->nspace, (pmix_rank_t)rank);
    pmix_status_t rc = LOCKED(j, px_server_setup_fork(j->srv, &p, env));
    if (rc != PMIX_SUCCESS)
        return rc;
    /* ours, also over pmixrun's own (when it runs under another server) */
    return PMIx_Setenv("PMIX_SERVER_URI", j->uri, true, env);
}

pmix_status_t job_dmodex_request(job *j, const pmix_proc_t *proc, pmix_dmodex_response_fn_t cbfunc,
                                 void *cbdata)
{
    if (!j->server_up)
        return PMIX_ERR_INIT;
    return LOCKED(j, px_server_dmodex_request(j->srv, proc, cbfunc, cbdata));
}

/* Answer the pending PMIx_Abort calls, then release the server; nothing
 * is delivered meanwhile (nobody runs the loop), and the server cancels
 * its timers on the platform, which is freed later (job_platform_free). */
void job_server_stop(job *j)
{
    if (!j->server_up)
        return;
    pending_abort *pa = j->aborts;
    j->aborts = NULL;
    while (pa != NULL) {
        pending_abort *next = pa->next;
        if (pa->cbfunc != NULL)
            pa->cbfunc(PMIX_SUCCESS, pa->cbdata);
        free(pa);
        pa = next;
    }
    px_posix_ops()->lock(j->plat);
    if (j->nspace_registered) {
        for (int i = 0; i < j->nlocal; i++) {
            pmix_proc_t p;
            PMIx_Load_procid(&p, j->nspace, (pmix_rank_t)j->ranks[i].rank);
            px_server_deregister_client(j->srv, &p);
        }
        px_server_deregister_nspace(j->srv, j->nspace);
    }
    pubsub_stop(j);
    px_server_destroy(j->srv);
    px_posix_ops()->unlock(j->plat);
    j->srv = NULL;
    free(j->uri);
    j->uri = NULL;
    j->server_up = false;
}

void job_rank_lost(job *j, rank_proc *r)
{
    if (r->deregistered || !j->server_up)
        return;
    pmix_proc_t p;
    PMIx_Load_procid(&p, j->nspace, (pmix_rank_t)r->rank);
    /* The engine fails the collectives and waits this rank was part of. */
    px_posix_ops()->lock(j->plat);
    px_server_deregister_client(j->srv, &p);
    px_posix_ops()->unlock(j->plat);
    r->deregistered = true;
}

/* ---- the job's data ---- */

/* The job's keys come from the host core's builder (px_jobinfo_build), the
 * same one pmixsim uses; this host adds what only a real machine has, for
 * each local rank: its directory (made here), its locality and cpuset. */

static const char *node_name(void *ctx, uint32_t node)
{
    return job_node_name(ctx, (int)node);
}

static pmix_status_t local_keys(void *ctx, pmix_rank_t rank, px_ivec *v)
{
    job *j = ctx;
    pmix_proc_t p;
    rank_proc *r;
    char procdir[4200], *locality = NULL, *cpus = NULL;
    char source[] = "hwloc";
    pmix_status_t rc;

    PMIx_Load_procid(&p, j->nspace, rank);
    if ((r = job_rank_of(j, &p)) == NULL)
        return PMIX_SUCCESS;
    snprintf(procdir, sizeof procdir, "%s/%u", j->nsdir, rank);
    if (files_make_dir(procdir) != 0) {
        fprintf(stderr, "pmixrun: cannot create %s: %s\n", procdir, strerror(errno));
        return PMIX_ERROR;
    }
    if ((rc = px_ivec_load(v, PMIX_PROCDIR, procdir, PMIX_STRING)) != PMIX_SUCCESS)
        return rc;
    pmix_cpuset_t cs = {.source = source, .bitmap = r->cpuset};
    if (PMIx_server_generate_locality_string(&cs, &locality) == PMIX_SUCCESS && locality != NULL)
        rc = px_ivec_load(v, PMIX_LOCALITY_STRING, locality, PMIX_STRING);
    if (rc == PMIX_SUCCESS && hwloc_bitmap_list_asprintf(&cpus, r->cpuset) >= 0 && cpus != NULL)
        rc = px_ivec_load(v, PMIX_CPUSET, cpus, PMIX_STRING); /* "0-3": what Open MPI parses */
    free(locality);
    free(cpus);
    return rc;
}

/* Drop the top-level keys of the node the builder wrote for (its
 * PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_SIZE, PMIX_LOCAL_PEERS,
 * PMIX_LOCALLDR): a server that runs no rank is on none of the job's
 * nodes, and its tools name a node or a rank in their Gets. The per-node
 * and per-rank arrays stay. */
static void drop_node_keys(px_ivec *info)
{
    static const char *const keys[] = {PMIX_HOSTNAME, PMIX_NODEID, PMIX_LOCAL_SIZE,
                                       PMIX_LOCAL_PEERS, PMIX_LOCALLDR};
    size_t k = 0;

    for (size_t i = 0; i < info->n; i++) {
        bool drop = false;
        for (size_t d = 0; d < sizeof keys / sizeof keys[0] && !drop; d++)
            drop = PMIx_Check_key(info->v[i].key, keys[d]);
        if (drop) {
            PMIx_Info_destruct(&info->v[i]);
            continue;
        }
        if (k != i)
            info->v[k] = info->v[i];
        k++;
    }
    info->n = k;
}

/* Register the job's namespace with the server: with its ranks as this
 * node's clients (`ranks_here`), or, for a server that runs none of them
 * (pmixrun --nodes), the same job, node, app and process data without a
 * node of its own, so that its tools read the job as a rank would. */
static int register_job(job *j, bool ranks_here)
{
    char cwd[4096];
    const char *here = getcwd(cwd, sizeof cwd);
    px_jobmap_app *apps = calloc((size_t)j->napps, sizeof *apps);
    if (apps == NULL) {
        fprintf(stderr, "pmixrun: out of memory while preparing the job's data\n");
        return -1;
    }
    for (int a = 0; a < j->napps; a++)
        apps[a] = (px_jobmap_app){
            .first = (uint32_t)j->apps[a].first,
            .size = (uint32_t)j->apps[a].size,
            .argv = j->apps[a].argv,
            .wdir = j->apps[a].wdir != NULL ? j->apps[a].wdir : here,
            .pset = j->apps[a].pset,
        };
    px_jobmap map = {
        .nspace = j->nspace,
        .nprocs = (uint32_t)j->nprocs,
        .nnodes = (uint32_t)j->nnodes,
        .rank_node = j->rank_node, /* NULL alone: every rank on node 0 */
        .node_name = node_name,
        .napps = (uint32_t)j->napps,
        .apps = apps,
        .mapby = j->ppr_n > 0              ? "PPR"
                 : j->bind_to == BIND_CORE ? "BYCORE"
                 : j->map_by_node          ? "BYNODE"
                                           : "BYSLOT",
        .bindto = j->bind_to == BIND_CORE     ? "CORE"
                  : j->bind_to == BIND_SOCKET ? "PACKAGE"
                  : j->bind_to == BIND_NUMA   ? "NUMA"
                                              : "NONE",
        .tmpdir = j->topdir,
        .nsdir = j->nsdir,
        .describe_all = true,
        .stop_in_init = j->stop_in_init,
        .local_keys = ranks_here ? local_keys : NULL,
        .ctx = j,
    };
    px_ivec info = {0};
    pmix_status_t rc = PMIX_ERR_NOMEM;

    rc = px_jobinfo_build(&map, ranks_here ? (uint32_t)j->node : 0, &info);
    if (rc == PMIX_SUCCESS && ranks_here)
        rc = net_keys(j, &info); /* the network's coordinates (pmixrun_net.c) */
    else if (rc == PMIX_SUCCESS)
        drop_node_keys(&info);
    if (rc == PMIX_ERR_NOMEM)
        goto nomem;
    if (rc != PMIX_SUCCESS)
        goto fail;                           /* local_keys said why */
    for (size_t i = 0; i < j->nextra; i++) { /* a spawned job's PMIX_SPAWNED... */
        pmix_info_t *e = px_ivec_next(&info, j->extra_info[i].key);
        if (e == NULL || PMIx_Value_xfer(&e->value, &j->extra_info[i].value) != PMIX_SUCCESS)
            goto nomem;
    }
    rc = LOCKED(j, px_server_register_nspace(j->srv, j->nspace, ranks_here ? j->nlocal : 0, info.v,
                                             info.n));
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixrun: the PMIx server refused the job's data: %s\n",
                PMIx_Error_string(rc));
        goto fail;
    }
    j->nspace_registered = true;
    for (int i = 0; ranks_here && i < j->nlocal; i++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, j->nspace, (pmix_rank_t)j->ranks[i].rank);
        rc = LOCKED(j, px_server_register_client(j->srv, &p, getuid(), getgid(), &j->ranks[i]));
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "pmixrun: the PMIx server refused rank %d: %s\n", j->ranks[i].rank,
                    PMIx_Error_string(rc));
            goto fail;
        }
    }
    rc = PMIX_SUCCESS;
    goto done;

nomem:
    fprintf(stderr, "pmixrun: out of memory while preparing the job's data\n");
    rc = PMIX_ERR_NOMEM;
fail:
done:
    px_ivec_free(&info);
    free(apps);
    return rc == PMIX_SUCCESS ? 0 : -1;
}

int job_register(job *j)
{
    return register_job(j, true);
}

int job_register_view(job *j)
{
    return register_job(j, false);
}

/* ---- shared by pmixrun and pmixd ---- */

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void job_more_ending_signals(sigset_t *mask)
{
    static const int sigs[] = {SIGXCPU, SIGVTALRM, SIGPROF, SIGPWR, SIGSTKFLT, SIGPOLL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaddset(mask, sigs[i]);
    for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
        sigaddset(mask, s);
}

/* What every job holds whoever ran it (pmixrun or pmixd): its options,
 * program name, abort message and descriptors. */
void job_release(job *j)
{
    job_apps_free(j);
    px_netmap_free(&j->net);
    free(j->nic_devs);
    free(j->output_dir);
    free(j->node_slots);
    free(j->in_buf);
    free(j->abort_msg);
    if (j->sigfd >= 0)
        close(j->sigfd);
    if (j->devnull >= 0)
        close(j->devnull);
}

void job_rank_reaped(job *j, rank_proc *r, int wstatus, bool *connected, bool *finalized)
{
    r->reaped = true;
    j->nreaped++;
    if (WIFSIGNALED(wstatus)) {
        r->signaled = true;
        r->code = 128 + WTERMSIG(wstatus);
    } else {
        r->code = WEXITSTATUS(wstatus);
    }
    *connected = r->connected;
    *finalized = r->finalized;
    if (*connected && !*finalized)
        job_rank_lost(j, r); /* peers' fences and connects with it fail now */
}

void job_signal_ranks(job *j, int sig)
{
    for (int i = 0; i < j->nstarted; i++) {
        rank_proc *r = &j->ranks[i];
        /* Never a reaped rank's group: once its last member is gone, the
         * kernel may give that number to another process (pid_max is
         * often 32,768), which makes it the id of an unrelated group. */
        if (r->pid <= 0 || r->reaped)
            continue;
        if (sig == SIGTERM)
            r->stopped_by_us = true;
        if (kill(-r->pid, sig) != 0)
            kill(r->pid, sig);
    }
}

void job_borrow(job *c, job *j)
{
    c->parent = j;
    c->sigfd = -1;
    c->devnull = j->devnull;
    c->stdin_to = STDIN_NONE;
    c->tag_output = j->tag_output;
    c->merge_stderr = j->merge_stderr;
    c->output_copy = true;
    c->topo = j->topo;
    c->plat = j->plat;
    c->srv = j->srv;
    c->uri = j->uri;
    c->server_up = j->server_up;
    c->topdir = j->topdir;
    c->outs[1] = j->outs[1];
    c->outs[2] = j->outs[2];
    c->relay = j->relay;
}
