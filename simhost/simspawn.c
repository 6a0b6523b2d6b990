/*
 * simspawn.c - PMIx_Spawn and events across nodes in pmixsim.
 *
 * Spawn. A node's server engine hands a client's PMIx_Spawn to its spawn
 * upcall here. The node packs the app (PMIx_Data_pack: its command,
 * argv and process count) and sends it to node 0, which plays pmixrun's
 * part as it does for the data service (simpubsub.c); a request from a
 * process of node 0 is taken there at once, without a message. Node 0
 * checks the app (its command must be a built-in workload:
 * PMIX_ERR_JOB_EXE_NOT_FOUND otherwise; more processes than the nodes have
 * slots, PMIX_ERR_OUT_OF_RESOURCE), names the new namespace (the run's,
 * then ".1", ".2"...), places it on nodes 0 .. ceil(np / ppn) - 1, ppn
 * processes per node in rank order, and launches it down a binomial tree
 * over those nodes: every node forwards the launch message to its
 * children, farthest subtree first (a launch takes ceil(lg nodes) hops),
 * then registers the namespace with its server (the host core's job
 * information plus PMIX_SPAWNED and PMIX_PARENT_ID) and its processes,
 * and starts each as an actor running the app's workload. The requestor
 * learns the namespace from the launch when its node is one of the new
 * job's, else from node 0 once node 0 has sent the launch down the tree
 * and started its own part: a node cannot refuse a launch (node 0 checked
 * everything before), so nothing comes back up the tree. The spawned job's fences and
 * direct modex run in a host core of its own on each node (simfence.c,
 * sim_hc_create_job), made on first use, its messages marked with the
 * job's index.
 *
 * What a spawn costs is reported (sim_spawn_report) from the request at
 * the requestor's server to the end of the new job's first fence at the
 * hosts, in parts: the request's hop to node 0 (none from node 0), the
 * launch tree (ceil(lg k) hops of the launch message), the local start
 * (the processes' frames over the loopback up to their fence) and the
 * fence. The formula is alpha + L_req * beta for the hop, ceil(lg k) *
 * (alpha + L * beta) for the launch and the catalog's formula for the
 * fence; the local part is what was measured.
 *
 * Events. An event a client notifies with a range beyond its node reaches
 * the server's notify_event upcall here: the node packs it and sends it
 * down a binomial tree rooted at itself over every node; each node hands
 * it to its server (px_server_notify, which applies the range) and
 * forwards it. Each such event's delivery is reported: the time from the
 * upcall to the last node's delivery, against ceil(lg N) * (alpha + L *
 * beta).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "pmixsim.h"
#include "px_hostcore.h"

#define SPAWN_HDR 64 /* simulated bytes of a request or launch besides its app */
#define EVENT_HDR 16

/* A spawn request of this node's processes waiting for node 0's answer. */
struct sim_sp_wait {
    struct sim_sp_wait *next;
    uint64_t id;
    pmix_spawn_cbfunc_t cbfunc;
    void *cbdata;
    sim_kjob *job; /* once answered */
};

/* ---- the spawned jobs' host cores ---- */

sim_kjob *sim_kjob_find(sim_run *run, const char *nspace)
{
    for (size_t i = 0; i < run->nkjobs; i++)
        if (strcmp(run->kjobs[i]->nspace, nspace) == 0)
            return run->kjobs[i];
    return NULL;
}

px_hc *sim_hc_of_job(sim_node *n, uint32_t idx)
{
    sim_run *run = n->ep.run;
    struct sim_khc *c;

    if (idx == 0 || idx > run->nkjobs || n->id >= run->kjobs[idx - 1]->map.nnodes)
        return NULL; /* no such job, or none of it is placed here */
    if (n->nkhc < idx) {
        struct sim_khc **a = realloc(n->khc, idx * sizeof(*a));
        if (a == NULL)
            return NULL;
        memset(a + n->nkhc, 0, (idx - n->nkhc) * sizeof(*a));
        n->khc = a;
        n->nkhc = idx;
    }
    if ((c = n->khc[idx - 1]) == NULL) {
        if ((c = calloc(1, sizeof(*c))) == NULL)
            return NULL;
        c->n = n;
        c->k = run->kjobs[idx - 1];
        if (sim_hc_create_job(c) != 0) {
            free(c);
            return NULL;
        }
        n->khc[idx - 1] = c;
    }
    return c->hc;
}

px_hc *sim_hc_of_nspace(sim_node *n, const char *nspace)
{
    sim_kjob *k;

    if (nspace == NULL || strcmp(nspace, n->ep.run->nspace) == 0)
        return n->hc;
    k = sim_kjob_find(n->ep.run, nspace);
    return k != NULL ? sim_hc_of_job(n, k->idx) : NULL;
}

px_hc *sim_hc_of_procs(sim_node *n, const pmix_proc_t procs[], size_t nprocs)
{
    sim_run *run = n->ep.run;
    size_t i = 1;

    while (i < nprocs && strncmp(procs[i].nspace, procs[0].nspace, PMIX_MAX_NSLEN) == 0)
        i++;
    if (i >= nprocs)
        return sim_hc_of_nspace(n, nprocs > 0 ? procs[0].nspace : NULL);
    /* Several namespaces: the node's own core, told of every spawned job
     * so far in index order, so that every node numbers their processes
     * alike (px_hc_job_add). A job's description is the run's, shared by
     * every node (the simulation's memory), as pmixrun sends every daemon
     * a spawned job's map. */
    while (n->hc_njobs < run->nkjobs) {
        if (px_hc_job_add(n->hc, &run->kjobs[n->hc_njobs]->xmap) != PMIX_SUCCESS)
            return NULL;
        n->hc_njobs++;
    }
    return n->hc;
}

/* ---- the launch tree over nodes 0 .. k - 1 (root 0) ---- */

/* The lowest set bit of r (0 for the root: it has every child). */
static uint32_t lowbit(uint32_t r)
{
    return r & (~r + 1);
}

/* Node r's children in a binomial tree over `size` nodes rooted at 0:
 * r + 2^j for 2^j below r's lowest set bit (any, for the root), farthest
 * first; out[] gets them, the count is returned. */
static unsigned tree_children(uint32_t r, uint32_t size, uint32_t out[32])
{
    uint32_t lim = r == 0 ? UINT32_MAX : lowbit(r);
    unsigned n = 0;
    uint64_t top = 1;

    while (top < size)
        top <<= 1;
    for (uint64_t b = top; b >= 1; b >>= 1)
        if (b < lim && r + b < size)
            out[n++] = (uint32_t)(r + b);
    return n;
}

static unsigned ceil_lg(uint32_t n)
{
    unsigned d = 0;
    while ((1ull << d) < n)
        d++;
    return d;
}

static const char *node_name(void *ctx, uint32_t node)
{
    return ((sim_run *)ctx)->nodes[node].host;
}

/* ---- node 0: placement and the answer ---- */

static void answer_requestor(sim_run *run, sim_kjob *k, pmix_status_t status, uint32_t node,
                             uint64_t id);

static void launch_here(sim_node *n, sim_kjob *k);
static void complete(sim_node *n, uint64_t id, pmix_status_t status, const char *nspace);

/* Pack the app a node sends node 0: command, argv, process count. */
static pmix_status_t pack_app(const pmix_app_t *app, int32_t np, pmix_byte_object_t *bo)
{
    pmix_data_buffer_t buf;
    int32_t argc = 0;
    const char *cmd = app->cmd != NULL && app->cmd[0] ? app->cmd : app->argv[0];
    pmix_status_t rc;

    while (app->argv != NULL && app->argv[argc] != NULL)
        argc++;
    PMIx_Data_buffer_construct(&buf);
    rc = PMIx_Data_pack(NULL, &buf, &cmd, 1, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &buf, &np, 1, PMIX_INT32);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &buf, &argc, 1, PMIX_INT32);
    for (int32_t i = 0; rc == PMIX_SUCCESS && i < argc; i++)
        rc = PMIx_Data_pack(NULL, &buf, &app->argv[i], 1, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        PMIx_Data_buffer_unload(&buf, &bo->bytes, &bo->size);
    PMIx_Data_buffer_destruct(&buf);
    return rc;
}

/* Load a copy of `data` into `buf` (which owns what it is loaded with). */
static void load_copy(pmix_data_buffer_t *buf, const void *data, size_t len)
{
    char *copy = malloc(len > 0 ? len : 1);

    if (copy == NULL)
        abort();
    if (len > 0)
        memcpy(copy, data, len);
    PMIx_Data_buffer_load(buf, copy, len);
}

static void kjob_free(sim_kjob *k)
{
    PMIx_Argv_free(k->argv);
    free(k->procs);
    free(k);
}

/* Register the new job's namespace with the servers of the nodes that
 * host none of it, as every pmixd registers a spawned job: their
 * processes may name it (a PMIx_Connect of the two jobs expands its
 * wildcard there) and read its job data. The job is described over all
 * the run's nodes (xmap: these nodes have no rank of it). What a node
 * learns here it learns at once, uncharged: the launch, which is charged,
 * goes only to the job's own nodes (docs/simulation.md). */
static void register_elsewhere(sim_run *run, sim_kjob *k)
{
    for (uint32_t i = k->map.nnodes; i < run->nnodes; i++) {
        sim_node *n = &run->nodes[i];
        px_ivec job = {0};
        bool yes = true;
        pmix_status_t rc;

        if (n->dead)
            continue;
        rc = px_jobinfo_build(&k->xmap, i, &job);
        if (rc == PMIX_SUCCESS)
            rc = px_ivec_load(&job, PMIX_SPAWNED, &yes, PMIX_BOOL);
        if (rc == PMIX_SUCCESS)
            rc = px_ivec_load(&job, PMIX_PARENT_ID, &k->parent, PMIX_PROC);
        if (rc == PMIX_SUCCESS)
            rc = px_server_register_nspace(n->srv, k->nspace, 0, job.v, job.n);
        px_ivec_free(&job);
        if (rc != PMIX_SUCCESS)
            sim_logf(run, "node %u: cannot register %s: %s", i, k->nspace, PMIx_Error_string(rc));
    }
}

/* A request arrived at node 0 (from node `from`, id `id`): place and
 * launch the job, or answer with the error. `data` is the packed app. */
static void serve(sim_run *run, uint32_t from, const pmix_proc_t *proc, uint64_t id,
                  const void *data, size_t len, double t_request)
{
    pmix_data_buffer_t buf;
    char *cmd = NULL;
    int32_t np = 0, argc = 0, cnt = 1;
    pmix_status_t rc;
    sim_kjob *k = NULL;
    uint32_t ppn = run->opt.ppn;

    PMIx_Data_buffer_construct(&buf);
    load_copy(&buf, data, len);
    rc = PMIx_Data_unpack(NULL, &buf, &cmd, &cnt, PMIX_STRING);
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &buf, &np, &cnt, PMIX_INT32);
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &buf, &argc, &cnt, PMIX_INT32);
    if (rc == PMIX_SUCCESS && (argc < 0 || argc > 4096))
        rc = PMIX_ERR_BAD_PARAM;
    if (rc == PMIX_SUCCESS && (k = calloc(1, sizeof(*k))) == NULL)
        rc = PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS && (k->argv = calloc((size_t)argc + 2, sizeof(char *))) == NULL)
        rc = PMIX_ERR_NOMEM;
    for (int32_t i = 0; rc == PMIX_SUCCESS && i < argc; i++) {
        cnt = 1;
        rc = PMIx_Data_unpack(NULL, &buf, &k->argv[i], &cnt, PMIX_STRING);
    }
    PMIx_Data_buffer_destruct(&buf);
    if (rc == PMIX_SUCCESS) {
        k->argc = argc;
        if (argc == 0) { /* argv[0] is the command */
            k->argv[0] = strdup(cmd);
            k->argc = 1;
        }
        if (np == 0)
            np = (int32_t)run->nprocs; /* the host decides: as many as the job */
        if ((k->wl = sim_workload_find(cmd)) == NULL)
            rc = PMIX_ERR_JOB_EXE_NOT_FOUND;
        else if (np < 0 || (uint64_t)np > (uint64_t)run->nnodes * ppn)
            rc = PMIX_ERR_OUT_OF_RESOURCE;
    }
    if (rc == PMIX_SUCCESS) {
        sim_kjob **a = sim_grow(run->kjobs, &run->capkjobs, run->nkjobs, sizeof(*a));
        if (a == NULL || (k->procs = calloc((size_t)np, sizeof(*k->procs))) == NULL) {
            rc = PMIX_ERR_NOMEM;
            if (a != NULL)
                run->kjobs = a;
        } else {
            run->kjobs = a;
        }
    }
    if (rc != PMIX_SUCCESS) {
        sim_event(run, "spawn\t%s\trank %u\t%s", cmd != NULL ? cmd : "?", proc->rank,
                  PMIx_Error_string(rc));
        if (k != NULL)
            kjob_free(k);
        free(cmd);
        answer_requestor(run, NULL, rc, from, id);
        return;
    }
    k->idx = (uint32_t)run->nkjobs + 1;
    run->kjobs[run->nkjobs++] = k;
    snprintf(k->nspace, sizeof(k->nspace), "%.200s.%u", run->nspace, k->idx);
    k->parent = *proc;
    k->req_node = from;
    k->req_id = id;
    k->t_request = t_request;
    k->t_at_root = sgw_now();
    k->app = (px_jobmap_app){.first = 0, .size = (uint32_t)np, .argv = k->argv, .wdir = run->cwd};
    k->map = (px_jobmap){
        .nspace = k->nspace,
        .nprocs = (uint32_t)np,
        .nnodes = ((uint32_t)np + ppn - 1) / ppn,
        .ppn = ppn,
        .node_name = node_name,
        .napps = 1,
        .apps = &k->app,
        .mapby = "BYSLOT",
        .bindto = "NONE",
        .describe_all =
            run->nnodes <= SIM_NET_PEERS_MAX_NODES && run->nprocs <= SIM_NET_PEERS_MAX_PROCS,
        .ctx = run,
    };
    k->xmap = k->map;
    k->xmap.nnodes = run->nnodes;
    k->xmap.describe_all = false;
    k->fence_set = px_fence_set_all_id(k->nspace);
    k->launch_bytes = SPAWN_HDR + len;
    for (int32_t r = 0; r < np; r++)
        PMIx_Load_procid(&k->procs[r].proc, k->nspace, (pmix_rank_t)r);
    sim_event(run, "spawn\t%s\trank %u\t%s\t%d procs on %u nodes", cmd, proc->rank, k->nspace, np,
              k->map.nnodes);
    free(cmd);
    register_elsewhere(run, k);
    launch_here(&run->nodes[0], k);
}

/* A spawn request of node 0's own processes, taken from a timer (not from
 * inside the server's upcall). */
typedef struct local_req {
    sim_run *run;
    pmix_proc_t proc;
    uint64_t id;
    pmix_byte_object_t bo;
    double t;
} local_req;

static void serve_local(void *arg)
{
    local_req *lr = arg;

    serve(lr->run, 0, &lr->proc, lr->id, lr->bo.bytes, lr->bo.size, lr->t);
    PMIx_Byte_object_destruct(&lr->bo);
    free(lr);
}

/* ---- every node of a spawned job: the launch ---- */

static void launch_here(sim_node *n, sim_kjob *k)
{
    sim_run *run = n->ep.run;
    uint32_t kids[32], first = n->id * k->map.ppn;
    unsigned nk = tree_children(n->id, k->map.nnodes, kids);
    uint32_t nlocal = first < k->map.nprocs ? k->map.nprocs - first : 0;
    px_ivec job = {0};
    bool yes = true;
    pmix_status_t rc;

    if (nlocal > k->map.ppn)
        nlocal = k->map.ppn;
    /* forward first, as a daemon relays a launch before it forks */
    for (unsigned i = 0; i < nk; i++) {
        sim_msg *m = sim_msg_new(MSG_LAUNCH, NULL, 0);
        m->from = n->id;
        m->tag = k->idx;
        if (sim_send(&run->nodes[kids[i]].ep, m, (double)k->launch_bytes) != 0)
            sim_logf(run, "node %u: the launch of %s to node %u was lost", n->id, k->nspace,
                     kids[i]);
    }
    if (sgw_now() > k->t_launch_last)
        k->t_launch_last = sgw_now();
    rc = px_jobinfo_build(&k->map, n->id, &job);
    if (rc == PMIX_SUCCESS)
        rc = px_ivec_load(&job, PMIX_SPAWNED, &yes, PMIX_BOOL);
    if (rc == PMIX_SUCCESS)
        rc = px_ivec_load(&job, PMIX_PARENT_ID, &k->parent, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = px_server_register_nspace(n->srv, k->nspace, (int)nlocal, job.v, job.n);
    px_ivec_free(&job);
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < nlocal; i++) {
        sim_proc *p = &k->procs[first + i];
        sim_proc **a;
        char box[48], name[PMIX_MAX_NSLEN + 16];
        p->ep.run = run;
        p->node = n;
        p->kjob = k;
        p->ac.external_progress = -1;
        snprintf(p->ep.name, sizeof(p->ep.name), "%u.rank %u", k->idx, p->proc.rank);
        snprintf(box, sizeof(box), "k%u.%u", k->idx, p->proc.rank);
        p->ep.box = sgw_box_create(box);
        if (sgw_box_is_queued(n->ep.box))
            sgw_box_set_queued(p->ep.box); /* messages go as transfers, then a push (planes.c) */
        if ((a = sim_grow(n->kids, &n->capkids, n->nkids, sizeof(*a))) == NULL) {
            rc = PMIX_ERR_NOMEM;
            break;
        }
        n->kids = a;
        n->kids[n->nkids++] = p;
        rc = px_server_register_client(n->srv, &p->proc, 1000, 1000, p);
        if (rc != PMIX_SUCCESS)
            break;
        snprintf(name, sizeof(name), "%s-%u", k->nspace, p->proc.rank);
        p->actor = sgw_actor(name, n->host, sim_proc_main, p, 0);
    }
    if (rc != PMIX_SUCCESS)
        sim_logf(run, "node %u: cannot start %s here: %s", n->id, k->nspace, PMIx_Error_string(rc));
    /* The requestor has its answer: here if this is its node, from node 0
     * (one more message, after node 0's own part) if the job does not
     * reach its node. No acknowledgement travels back up the tree: a node
     * cannot refuse a launch here (node 0 checked the app and the slots),
     * and an acknowledgement would keep each node's actor sending (sends
     * block it) while its new processes start. */
    if (n->id == k->req_node)
        complete(n, k->req_id, rc, k->nspace); /* the launch told the requestor's node */
    else if (n->id == 0 && k->req_node >= k->map.nnodes)
        answer_requestor(run, k, rc, k->req_node, k->req_id);
}

/* ---- the requestor's node ---- */

static void complete(sim_node *n, uint64_t id, pmix_status_t status, const char *nspace)
{
    struct sim_sp_wait **pp = &n->sp_pend, *w;
    sim_kjob *k = status == PMIX_SUCCESS ? sim_kjob_find(n->ep.run, nspace) : NULL;

    while (*pp != NULL && (*pp)->id != id)
        pp = &(*pp)->next;
    if ((w = *pp) == NULL)
        return;
    *pp = w->next;
    if (k != NULL)
        k->t_answered = sgw_now();
    sim_event(n->ep.run, "spawn-answer\tnode %u\t%s\t%s", n->id, PMIx_Error_string(status),
              nspace != NULL ? nspace : "");
    w->cbfunc(status, status == PMIX_SUCCESS ? (char *)nspace : NULL, w->cbdata);
    free(w);
}

static void answer_requestor(sim_run *run, sim_kjob *k, pmix_status_t status, uint32_t node,
                             uint64_t id)
{
    sim_msg *m;
    size_t len;
    char *ns;

    if (node == 0) {
        complete(&run->nodes[0], id, status, k != NULL ? k->nspace : NULL);
        return;
    }
    ns = strdup(k != NULL ? k->nspace : "");
    if (ns == NULL)
        abort();
    len = strlen(ns) + 1;
    m = sim_msg_new(MSG_SPAWN_REP, ns, len);
    m->from = 0;
    m->tag = id;
    m->status = status;
    (void)sim_send(&run->nodes[node].ep, m, (double)(16 + len));
}

pmix_status_t sim_host_spawn(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                             size_t ninfo, const pmix_app_t apps[], size_t napps,
                             pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    sim_node *n = hctx;
    sim_run *run = n->ep.run;
    pmix_byte_object_t bo = {0};
    struct sim_sp_wait *w;
    pmix_status_t rc;

    if (napps != 1)
        return PMIX_ERR_NOT_SUPPORTED; /* one app per spawn here (docs/simulation.md) */
    if (apps[0].maxprocs > INT32_MAX)
        return PMIX_ERR_BAD_PARAM;
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return PMIX_ERR_NOMEM;
    if ((rc = pack_app(&apps[0], (int32_t)apps[0].maxprocs, &bo)) != PMIX_SUCCESS) {
        free(w);
        return rc;
    }
    w->id = ++n->ps_next;
    w->cbfunc = cbfunc;
    w->cbdata = cbdata;
    w->next = n->sp_pend;
    n->sp_pend = w;
    sim_event(run, "spawn-request\tnode %u\trank %u", n->id, proc->rank);
    if (n->id == 0) {
        local_req *lr = calloc(1, sizeof(*lr));
        if (lr == NULL || sim_timer_add(&n->ep, 0, serve_local, lr) == NULL) {
            n->sp_pend = w->next;
            free(w);
            free(lr);
            PMIx_Byte_object_destruct(&bo);
            return PMIX_ERR_NOMEM;
        }
        *lr = (local_req){.run = run, .proc = *proc, .id = w->id, .bo = bo, .t = sgw_now()};
        return PMIX_SUCCESS;
    }
    {
        sim_msg *m = sim_msg_new(MSG_SPAWN, bo.bytes, bo.size);
        m->from = n->id;
        m->proc = *proc;
        m->tag = w->id;
        m->t = sgw_now(); /* the request's time, for the report */
        if (sim_send(&run->nodes[0].ep, m, (double)(SPAWN_HDR + bo.size)) != 0) {
            n->sp_pend = w->next;
            free(w);
            return PMIX_ERR_UNREACH;
        }
    }
    return PMIX_SUCCESS;
}

/* ---- events across nodes ---- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The nodes an event goes to: for a custom range (PMIX_EVENT_CUSTOM_RANGE,
 * one process or an array of them) the nodes that host one of its
 * processes, with `src` (the event's node, its root) first and the others
 * ascending (malloc'd); NULL for every node (another range, a namespace's
 * wildcard of the run's job, a namespace this run does not know, no
 * memory). *n gets the count. O(P log P) for P processes. */
static uint32_t *event_nodes(sim_run *run, uint32_t src, pmix_data_range_t range,
                             const pmix_info_t info[], size_t ninfo, uint32_t *n)
{
    const pmix_proc_t *procs = NULL;
    size_t nprocs = 0, cap = 1, k = 0, m = 1;
    uint32_t *out;

    *n = run->nnodes;
    if (range != PMIX_RANGE_CUSTOM)
        return NULL;
    for (size_t i = 0; i < ninfo && procs == NULL; i++) {
        if (!PMIx_Check_key(info[i].key, PMIX_EVENT_CUSTOM_RANGE))
            continue;
        if (info[i].value.type == PMIX_PROC && info[i].value.data.proc != NULL) {
            procs = info[i].value.data.proc;
            nprocs = 1;
        } else if (info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray != NULL &&
                   info[i].value.data.darray->type == PMIX_PROC) {
            procs = info[i].value.data.darray->array;
            nprocs = info[i].value.data.darray->size;
        }
    }
    if (procs == NULL)
        return NULL;
    for (size_t i = 0; i < nprocs; i++) {
        const sim_kjob *kj = NULL;
        if (strncmp(procs[i].nspace, run->nspace, PMIX_MAX_NSLEN) != 0 &&
            (kj = sim_kjob_find(run, procs[i].nspace)) == NULL)
            return NULL;
        if (procs[i].rank == PMIX_RANK_WILDCARD && kj == NULL)
            return NULL;
        cap += procs[i].rank == PMIX_RANK_WILDCARD ? kj->map.nnodes : 1;
    }
    if ((out = malloc(cap * sizeof(*out))) == NULL)
        return NULL;
    out[k++] = src;
    for (size_t i = 0; i < nprocs; i++) {
        const sim_kjob *kj = sim_kjob_find(run, procs[i].nspace);
        uint32_t ppn = kj != NULL ? kj->map.ppn : run->opt.ppn;
        uint32_t np = kj != NULL ? kj->map.nprocs : run->nprocs;
        if (procs[i].rank == PMIX_RANK_WILDCARD) {
            for (uint32_t d = 0; d < kj->map.nnodes; d++)
                out[k++] = d;
        } else if (procs[i].rank < np && procs[i].rank / ppn < run->nnodes) {
            out[k++] = procs[i].rank / ppn;
        } /* else no such process: nobody to tell */
    }
    qsort(out + 1, k - 1, sizeof(*out), cmp_u32);
    for (size_t i = 1; i < k; i++) /* distinct, the root once */
        if (out[i] != src && out[i] != out[m - 1])
            out[m++] = out[i];
    *n = (uint32_t)m;
    return out;
}

/* Send event `ev` (packed in data, charged `wire` bytes) to node n's
 * children in the binomial tree rooted at `root` over every node, or over
 * `list` (k nodes, the root first, then ascending) when list is not NULL. */
static void event_forward(sim_node *n, uint32_t root, uint32_t ev, const void *data, size_t len,
                          const uint32_t *list, uint32_t k, double wire)
{
    sim_run *run = n->ep.run;
    uint32_t N = list != NULL ? k : run->nnodes, rel = 0, kids[32];
    unsigned nk;

    if (list == NULL) {
        rel = (n->id + N - root) % N;
    } else if (list[0] != n->id) {
        const uint32_t *at =
            k > 1 ? bsearch(&n->id, list + 1, k - 1, sizeof(*list), cmp_u32) : NULL;
        if (at == NULL)
            return; /* not one of the event's nodes */
        rel = (uint32_t)(at - list);
    }
    nk = tree_children(rel, N, kids);
    for (unsigned i = 0; i < nk; i++) {
        void *copy = malloc(len);
        uint32_t to = list != NULL ? list[kids[i]] : (kids[i] + root) % N;
        sim_msg *m;
        if (copy == NULL)
            abort();
        memcpy(copy, data, len);
        m = sim_msg_new(MSG_EVENT, copy, len);
        m->from = n->id;
        m->tag = root;
        m->status = (pmix_status_t)ev;
        (void)sim_send(&run->nodes[to].ep, m, wire);
    }
}

void sim_host_notify_event(void *hctx, pmix_status_t status, const pmix_proc_t *source,
                           pmix_data_range_t range, const pmix_info_t info[], size_t ninfo)
{
    sim_node *n = hctx;
    sim_run *run = n->ep.run;
    pmix_data_buffer_t buf;
    int32_t ni = (int32_t)ninfo;
    char *bytes = NULL;
    size_t len = 0;
    sim_evstat *e;
    uint32_t *list, k;
    pmix_status_t rc;

    if (run->nnodes < 2)
        return;
    PMIx_Data_buffer_construct(&buf);
    rc = PMIx_Data_pack(NULL, &buf, &status, 1, PMIX_STATUS);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &buf, (void *)source, 1, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &buf, &range, 1, PMIX_DATA_RANGE);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &buf, &ni, 1, PMIX_INT32);
    if (rc == PMIX_SUCCESS && ninfo > 0)
        rc = PMIx_Data_pack(NULL, &buf, (void *)info, ni, PMIX_INFO);
    if (rc == PMIX_SUCCESS)
        PMIx_Data_buffer_unload(&buf, &bytes, &len);
    PMIx_Data_buffer_destruct(&buf);
    if (rc != PMIX_SUCCESS ||
        (e = sim_grow(run->evstats, &run->capevstats, run->nevstats, sizeof(*e))) == NULL) {
        sim_logf(run, "node %u: cannot carry event %s to the other nodes", n->id,
                 PMIx_Error_string(status));
        free(bytes);
        return;
    }
    run->evstats = e;
    e = &run->evstats[run->nevstats++];
    list = event_nodes(run, n->id, range, info, ninfo, &k);
    /* A custom range's message carries its nodes (4 bytes each): each
     * node forwards it down that tree. The list itself is the run's
     * (e->list), read by every node. */
    *e = (sim_evstat){.status = status,
                      .range = range,
                      .src_node = n->id,
                      .nodes = k,
                      .list = list,
                      .bytes = EVENT_HDR + len + (list != NULL ? 4 * (size_t)k : 0),
                      .reached = 1,
                      .t_sent = sgw_now(),
                      .t_last = sgw_now()};
    sim_event(run, "event\tnode %u\t%s\tfrom rank %u", n->id, PMIx_Error_string(status),
              source->rank);
    sim_invite_sent(n, status, source, info, ninfo, e->bytes, k);
    event_forward(n, n->id, (uint32_t)(run->nevstats - 1), bytes, len, list, k, (double)e->bytes);
    free(bytes);
}

static void got_event(sim_node *n, sim_msg *m)
{
    sim_run *run = n->ep.run;
    pmix_data_buffer_t buf;
    pmix_status_t status = 0, rc;
    pmix_proc_t source;
    pmix_data_range_t range = 0;
    int32_t ni = 0, cnt = 1;
    pmix_info_t *info = NULL;
    sim_evstat *e;

    if ((size_t)m->status >= run->nevstats) {
        sim_logf(run, "node %u: an event from node %u that was never sent", n->id, m->from);
        return;
    }
    e = &run->evstats[m->status];
    e->reached++;
    if (sgw_now() > e->t_last)
        e->t_last = sgw_now();
    /* forward first, down the tree the root chose */
    event_forward(n, (uint32_t)m->tag, (uint32_t)m->status, m->data, m->len, e->list, e->nodes,
                  (double)e->bytes);
    PMIx_Data_buffer_construct(&buf);
    load_copy(&buf, m->data, m->len);
    rc = PMIx_Data_unpack(NULL, &buf, &status, &cnt, PMIX_STATUS);
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &buf, &source, &cnt, PMIX_PROC);
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &buf, &range, &cnt, PMIX_DATA_RANGE);
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &buf, &ni, &cnt, PMIX_INT32);
    if (rc == PMIX_SUCCESS && ni > 0) {
        if ((info = PMIx_Info_create((size_t)ni)) == NULL) {
            rc = PMIX_ERR_NOMEM;
        } else {
            cnt = ni;
            rc = PMIx_Data_unpack(NULL, &buf, info, &cnt, PMIX_INFO);
        }
    }
    PMIx_Data_buffer_destruct(&buf);
    if (rc == PMIX_SUCCESS) {
        sim_invite_heard(n, status, &source, info, (size_t)(ni > 0 ? ni : 0));
        px_server_notify(n->srv, status, &source, range, info, (size_t)(ni > 0 ? ni : 0));
    } else {
        sim_logf(run, "node %u: a malformed event from node %u", n->id, m->from);
    }
    if (info != NULL)
        PMIx_Info_free(info, (size_t)ni);
}

/* ---- messages ---- */

void sim_spawn_dispatch(sim_node *n, sim_msg *m)
{
    sim_run *run = n->ep.run;

    switch (m->kind) {
    case MSG_SPAWN:
        if (n->id == 0)
            serve(run, m->from, &m->proc, m->tag, m->data, m->len, m->t);
        break;
    case MSG_SPAWN_REP:
        complete(n, m->tag, m->status,
                 m->status == PMIX_SUCCESS && m->len > 0 ? (const char *)m->data : NULL);
        break;
    case MSG_LAUNCH:
        if (m->tag >= 1 && m->tag <= run->nkjobs)
            launch_here(n, run->kjobs[m->tag - 1]);
        break;
    case MSG_EVENT: got_event(n, m); break;
    default: break;
    }
}

void sim_kid_exited(sim_proc *p)
{
    p->kjob->exited++;
}

/* ---- the report ---- */

/* The first fence of spawned job k (its whole job's set), or NULL. */
static const sim_fstat *first_fence(const sim_run *run, const sim_kjob *k)
{
    const sim_fstat *best = NULL;

    for (size_t i = 0; i < run->nfstats; i++)
        if (run->fstats[i].coll_id == k->fence_set &&
            (best == NULL || run->fstats[i].seq < best->seq))
            best = &run->fstats[i];
    return best;
}

typedef struct spawn_times {
    double hop, launch, local, fence, start;  /* measured */
    double f_hop, f_launch, f_fence, formula; /* formulas */
    bool done;                                /* its first fence ended everywhere */
} spawn_times;

static spawn_times times_of(sim_run *run, const sim_kjob *k, const sim_fstat **fp)
{
    const sim_fstat *f = first_fence(run, k);
    spawn_times t = {0};
    double L = (double)k->launch_bytes;

    *fp = f;
    t.hop = k->t_at_root - k->t_request;
    t.launch = k->t_launch_last - k->t_at_root;
    t.f_hop = k->req_node == 0 ? 0 : run->alpha + L * run->beta; /* the request: L bytes too */
    t.f_launch = ceil_lg(k->map.nnodes) * (run->alpha + L * run->beta);
    if (f != NULL && f->nend == f->nnodes && f->nfail == 0) {
        t.done = true;
        t.local = f->t_last_start - k->t_launch_last;
        t.fence = f->t_last_end - f->t_last_start;
        t.start = f->t_last_end - k->t_request;
        t.f_fence = sim_formula(run, f);
        t.formula = t.f_hop + t.f_launch + t.local + t.f_fence;
    }
    return t;
}

void sim_spawn_fence_done(sim_run *run, const sim_fstat *f)
{
    for (size_t i = 0; i < run->nkjobs; i++) {
        sim_kjob *k = run->kjobs[i];
        const sim_fstat *first;
        spawn_times t;
        if (k->fence_set != f->coll_id || k->said)
            continue;
        t = times_of(run, k, &first);
        if (first != f || !t.done)
            continue;
        k->said = true;
        sim_event(run, "spawn-started\t%s\tstart %.9f s\tformula %.9f s", k->nspace, t.start,
                  t.formula);
        if (!run->opt.quiet)
            fprintf(stderr,
                    "pmixsim: %s started on %u nodes: %.9f s from its request (formula %.9f s), "
                    "wall %.1f s into the run\n",
                    k->nspace, k->map.nnodes, t.start, t.formula, sim_wall() - run->wall_start);
    }
}

void sim_spawn_report(sim_run *run, FILE *tsv)
{
    for (size_t i = 0; i < run->nkjobs; i++) {
        const sim_kjob *k = run->kjobs[i];
        const sim_fstat *f;
        spawn_times t = times_of(run, k, &f);
        fprintf(tsv,
                "# spawn: nspace=%s procs=%u nodes=%u parent_rank=%u launch_bytes=%zu "
                "answer_s=%.9f",
                k->nspace, k->map.nprocs, k->map.nnodes, k->parent.rank, k->launch_bytes,
                k->t_answered > 0 ? k->t_answered - k->t_request : NAN);
        if (!t.done) {
            fprintf(tsv, " start_s=- (its first fence did not end on every node)\n");
            continue;
        }
        fprintf(tsv,
                " hop_s=%.9f launch_s=%.9f local_s=%.9f fence_s=%.9f start_s=%.9f "
                "formula_s=%.9f ratio=%.6f fence_algo=%s\n",
                t.hop, t.launch, t.local, t.fence, t.start, t.formula,
                t.formula > 0 ? t.start / t.formula : 1.0, f->algo);
        fprintf(tsv,
                "# spawn-formula: hop_s=%.9f launch_s=%.9f (ceil(lg %u) x (alpha + %zu B x "
                "beta)) fence_s=%.9f\n",
                t.f_hop, t.f_launch, k->map.nnodes, k->launch_bytes, t.f_fence);
    }
    for (size_t i = 0; i < run->nevstats; i++) {
        const sim_evstat *e = &run->evstats[i];
        double pred = ceil_lg(e->nodes) * (run->alpha + (double)e->bytes * run->beta);
        fprintf(tsv,
                "# event: status=%d range=%s from_node=%u bytes=%zu nodes=%u reached=%u "
                "sim_s=%.9f formula_s=%.9f ratio=%.6f\n",
                e->status, PMIx_Data_range_string(e->range), e->src_node, e->bytes, e->nodes,
                e->reached, e->t_last - e->t_sent, pred,
                pred > 0 ? (e->t_last - e->t_sent) / pred : 1.0);
    }
    sim_invite_report(run, tsv);
}

void sim_spawn_json(sim_run *run, FILE *json)
{
    fprintf(json, ",\"spawns\":[");
    for (size_t i = 0; i < run->nkjobs; i++) {
        const sim_kjob *k = run->kjobs[i];
        const sim_fstat *f;
        spawn_times t = times_of(run, k, &f);
        fprintf(json,
                "%s\n  {\"nspace\":\"%s\",\"procs\":%u,\"nodes\":%u,\"parent_rank\":%u,"
                "\"launch_bytes\":%zu,\"answer_s\":",
                i ? "," : "", k->nspace, k->map.nprocs, k->map.nnodes, k->parent.rank,
                k->launch_bytes);
        sim_json_num(json, k->t_answered > 0 ? k->t_answered - k->t_request : NAN);
        fprintf(json, ",\"hop_s\":");
        sim_json_num(json, t.hop);
        fprintf(json, ",\"launch_s\":");
        sim_json_num(json, t.launch);
        fprintf(json, ",\"local_s\":");
        sim_json_num(json, t.done ? t.local : NAN);
        fprintf(json, ",\"fence_s\":");
        sim_json_num(json, t.done ? t.fence : NAN);
        fprintf(json, ",\"start_s\":");
        sim_json_num(json, t.done ? t.start : NAN);
        fprintf(json, ",\"formula_s\":");
        sim_json_num(json, t.done ? t.formula : NAN);
        fprintf(json, ",\"ratio\":");
        sim_json_num(json, t.done && t.formula > 0 ? t.start / t.formula : NAN);
        fprintf(json, ",\"formula_launch_s\":");
        sim_json_num(json, t.f_launch);
        fprintf(json, ",\"formula_fence_s\":");
        sim_json_num(json, t.done ? t.f_fence : NAN);
        fprintf(json, ",\"fence_algo\":\"%s\"}", f != NULL ? f->algo : "");
    }
    fprintf(json, "],\"events\":[");
    for (size_t i = 0; i < run->nevstats; i++) {
        const sim_evstat *e = &run->evstats[i];
        double pred = ceil_lg(e->nodes) * (run->alpha + (double)e->bytes * run->beta);
        fprintf(json,
                "%s\n  {\"status\":%d,\"range\":\"%s\",\"from_node\":%u,\"bytes\":%zu,"
                "\"nodes\":%u,\"reached\":%u,\"sim_s\":",
                i ? "," : "", e->status, PMIx_Data_range_string(e->range), e->src_node, e->bytes,
                e->nodes, e->reached);
        sim_json_num(json, e->t_last - e->t_sent);
        fprintf(json, ",\"formula_s\":");
        sim_json_num(json, pred);
        fprintf(json, ",\"ratio\":");
        sim_json_num(json, pred > 0 ? (e->t_last - e->t_sent) / pred : NAN);
        fprintf(json, "}");
    }
    fprintf(json, "]");
    sim_invite_json(run, json);
}

void sim_spawn_node_fini(sim_node *n)
{
    while (n->sp_pend != NULL) {
        struct sim_sp_wait *w = n->sp_pend;
        n->sp_pend = w->next;
        free(w);
    }
    for (size_t j = 0; j < n->nkhc; j++) {
        if (n->khc[j] != NULL) {
            px_hc_destroy(n->khc[j]->hc);
            free(n->khc[j]);
        }
    }
    free(n->khc);
    n->khc = NULL;
    n->nkhc = 0;
    for (size_t j = 0; j < n->nkids; j++)
        if (n->kids[j]->ep.box != NULL)
            sgw_box_destroy(n->kids[j]->ep.box);
    free(n->kids);
    n->kids = NULL;
    n->nkids = 0;
}

void sim_spawn_fini(sim_run *run)
{
    for (size_t i = 0; i < run->nkjobs; i++)
        kjob_free(run->kjobs[i]);
    free(run->kjobs);
    run->kjobs = NULL;
    run->nkjobs = 0;
    for (size_t i = 0; i < run->nevstats; i++)
        free(run->evstats[i].list);
    free(run->evstats);
    run->evstats = NULL;
    run->nevstats = 0;
    sim_invite_fini(run);
}
