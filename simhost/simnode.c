/*
 * simnode.c - the simulated nodes: one actor per node runs the node's
 * px_server and is its host (its fences are simfence.c, its direct modex
 * simdmx.c).
 *
 * The node actor's loop fires its due timers and receives from its
 * mailbox: frames from its clients go to the server engine, px_coll
 * messages from other nodes to the collective they belong to, direct
 * modex requests and answers to the server engine and to the waiting
 * upcall.
 *
 * Registration. Each node registers the job with its server: the host
 * core's job information (px_jobinfo_build) and the network's keys
 * (coords.c), then its processes as clients.
 */
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"
#include "px_hostcore.h"
#include "px_proto.h"

static pmix_status_t host_abort(void *hctx, const pmix_proc_t *proc, void *obj, int status,
                                const char msg[], pmix_proc_t procs[], size_t nprocs,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    sim_node *n = hctx;

    sim_logf(n->ep.run, "rank %u called PMIx_Abort(%d): %s", proc->rank, status,
             msg != NULL ? msg : "");
    return PMIX_OPERATION_SUCCEEDED;
}

const px_server_host sim_server_host = {
    .version = PX_SERVER_HOST_VERSION,
    .abort = host_abort,
    .fence_nb = sim_host_fence,
    .direct_modex = sim_host_dmodex,
    .group = sim_host_group,
    .publish = sim_host_publish,
    .lookup = sim_host_lookup,
    .unpublish = sim_host_unpublish,
    .notify_event = sim_host_notify_event,
    .spawn = sim_host_spawn,
};

sim_proc *sim_node_proc(sim_node *n, uint64_t conn)
{
    for (uint32_t i = 0; i < n->nprocs; i++)
        if (n->procs[i].conn == conn)
            return &n->procs[i];
    for (size_t i = 0; i < n->nkids; i++)
        if (n->kids[i]->conn == conn)
            return n->kids[i];
    return NULL;
}

/* ---- the node ---- */

static const char *node_name(void *ctx, uint32_t node)
{
    return ((sim_run *)ctx)->nodes[node].host;
}

/* Register the job with the node's server: the host core's job
 * information (px_jobinfo_build: job, node, app and process keys, the same
 * ones pmixrun gives) and the network's keys (coords.c). In a small job
 * every node and every process is described, as pmixrun does; past
 * SIM_NET_PEERS_MAX_NODES nodes or SIM_NET_PEERS_MAX_PROCS processes only
 * this node and its processes (not O(job) per node, nor per client). The
 * network keys alike on every node are shared: the registration array
 * borrows them, and only that array is freed. */
static pmix_status_t register_job(sim_run *run, sim_node *n)
{
    bool all = run->nnodes <= SIM_NET_PEERS_MAX_NODES && run->nprocs <= SIM_NET_PEERS_MAX_PROCS;
    px_jobmap_app apps[SIM_MAX_PSETS + 1];
    uint32_t napps = 0, first = 0;
    /* --pset: one app per set, in rank order, then the rest in none */
    for (unsigned i = 0; i < run->opt.npsets; i++) {
        apps[napps++] = (px_jobmap_app){.first = first,
                                        .size = run->opt.pset_size[i],
                                        .argv = run->app_argv,
                                        .wdir = run->cwd,
                                        .pset = run->opt.pset_name[i]};
        first += run->opt.pset_size[i];
    }
    if (first < run->nprocs || napps == 0)
        apps[napps++] = (px_jobmap_app){
            .first = first, .size = run->nprocs - first, .argv = run->app_argv, .wdir = run->cwd};
    px_jobmap map = {
        .nspace = run->nspace,
        .nprocs = run->nprocs,
        .nnodes = run->nnodes,
        .ppn = run->opt.ppn,
        .node_name = node_name,
        .napps = napps,
        .apps = apps,
        .mapby = "BYSLOT",
        .bindto = "NONE",
        .describe_all = all,
        .ctx = run,
    };
    px_ivec job = {0};
    pmix_data_array_t coords = {0};
    const pmix_info_t *shared;
    size_t nshared, total;
    pmix_info_t *arr = NULL;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if ((rc = px_jobinfo_build(&map, n->id, &job)) != PMIX_SUCCESS)
        goto out;
    if ((rc = sim_net_register(run, n->id, &coords, &shared, &nshared)) != PMIX_SUCCESS)
        goto out; /* network coordinates */
    total = job.n + nshared + coords.size;
    rc = PMIX_ERR_NOMEM;
    if ((arr = calloc(total, sizeof(*arr))) == NULL)
        goto out;
    memcpy(arr, job.v, job.n * sizeof(*arr));
    if (nshared > 0)
        memcpy(arr + job.n, shared, nshared * sizeof(*arr));
    if (coords.size > 0)
        memcpy(arr + job.n + nshared, coords.array, coords.size * sizeof(*arr));
    rc = px_server_register_nspace(n->srv, run->nspace, (int)n->nprocs, arr, total);
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < n->nprocs; i++)
        rc = px_server_register_client(n->srv, &n->procs[i].proc, 1000, 1000, &n->procs[i]);
out:
    free(arr);
    px_ivec_free(&job);
    if (coords.array != NULL)
        PMIx_Data_array_destruct(&coords);
    return rc;
}

int sim_node_setup(sim_run *run, sim_node *n)
{
    char box[32];

    n->ep.run = run;
    n->ep.is_server = true;
    snprintf(n->ep.name, sizeof(n->ep.name), "node %u", n->id);
    snprintf(box, sizeof(box), "s%u", n->id);
    n->ep.box = sgw_box_create(box);
    n->next_conn = 1;
    n->srv = px_server_create(&sim_server_host, n, &sim_platform_ops, n);
    if (n->srv == NULL || sim_hc_create(n) != 0)
        return -1;
    for (uint32_t i = 0; i < n->nprocs; i++) {
        sim_proc *p = &n->procs[i];
        p->ep.run = run;
        p->node = n;
        p->ac.external_progress = -1;
        snprintf(p->ep.name, sizeof(p->ep.name), "rank %u", p->proc.rank);
        if (n->merged) {
            p->ep.box = n->ep.box; /* one actor, one mailbox */
        } else {
            snprintf(box, sizeof(box), "c%u", p->proc.rank);
            p->ep.box = sgw_box_create(box);
        }
    }
    if (n->merged) {
        snprintf(box, sizeof(box), "l%u", n->id);
        n->loop = sgw_box_create(box);
    }
    return register_job(run, n) == PMIX_SUCCESS ? 0 : -1;
}

static void node_dispatch(sim_node *n, sim_msg *m)
{
    sim_proc *p;

    switch (m->kind) {
    case MSG_C2S:
        p = sim_node_proc(n, m->conn);
        if (p != NULL && !p->closed && sim_frame_type(m->data, m->len) == PX_MSG_FENCE &&
            sim_fault_at_fence(n, p))
            break; /* killed as it entered this fence: the request dies with it */
        if (p != NULL && !p->closed &&
            px_server_sink()->deliver(n->srv, m->conn, m->data, m->len) != PMIX_SUCCESS) {
            p->closed = true;
            sim_send(&p->ep, sim_msg_new(MSG_HANGUP, NULL, 0), 0);
        }
        break;
    case MSG_CLOSE: px_server_sink()->closed(n->srv, m->conn, PMIX_ERR_LOST_CONNECTION); break;
    case MSG_EXIT:
        /* As pmixd reaps a rank that finalized: the fences that name it
         * and that it did not join fail on every node (px_hc_departed).
         * Not once the job is broken here, nor for a process that a
         * fence told of a death: it ended because of that failure, every
         * fence fails with PMIX_ERR_PROC_TERM_WO_SYNC where the news of
         * the death has come, and the departure would only race that news
         * to the other nodes with another status. */
        for (uint32_t i = 0; i < n->nprocs; i++) {
            if (n->procs[i].conn == m->conn) {
                if (n->broken || n->procs[i].saw_death)
                    break;
                sim_event(n->ep.run, "depart\trank %u\tnode %u", n->procs[i].proc.rank, n->id);
                n->ep.run->departs++;
                px_hc_departed(n->hc, n->procs[i].proc.rank, true);
                sim_pubsub_proc_ended(n, &n->procs[i].proc);
                break;
            }
        }
        for (size_t i = 0; i < n->nkids; i++) {
            sim_proc *kp = n->kids[i];
            px_hc *khc = kp->conn == m->conn ? sim_hc_of_job(n, kp->kjob->idx) : NULL;
            if (khc != NULL && !px_hc_broken(khc)) {
                sim_event(n->ep.run, "depart\t%s rank %u\tnode %u", kp->proc.nspace, kp->proc.rank,
                          n->id);
                n->ep.run->departs++;
                px_hc_departed(khc, kp->proc.rank, true);
            }
        }
        break;
    case MSG_PUBSUB:
    case MSG_PUBSUB_REP: sim_pubsub_dispatch(n, m); break;
    case MSG_SPAWN:
    case MSG_SPAWN_REP:
    case MSG_LAUNCH:
    case MSG_EVENT: sim_spawn_dispatch(n, m); break;
    case MSG_HC: {
        /* status: 0 for the run's job, else a spawned job's index */
        px_hc *hc = m->status == 0 ? n->hc : sim_hc_of_job(n, (uint32_t)m->status);
        if (hc == NULL || px_hc_deliver(hc, m->from, m->data, m->len) != PMIX_SUCCESS)
            sim_logf(n->ep.run, "node %u: a malformed message from node %u", n->id, m->from);
        break;
    }
    default: break;
    }
    sim_msg_free(m);
}

static void dispatch(void *ep, sim_msg *m)
{
    node_dispatch((sim_node *)ep, m);
}

static void node_body(void *arg);

void sim_node_main(void *arg)
{
    sim_node *n = arg;

    if (n->doomed)
        sim_run_doomed(node_body, n);
    else
        node_body(n);
}

static void node_body(void *arg)
{
    sim_node *n = arg;

    sgw_set_self_data(&n->ep);
    sgw_box_listen(n->ep.box);
    sim_node_serve(n);
}

void sim_node_serve(sim_node *n)
{
    sgw_set_self_data(&n->ep);
    for (;;) { /* a daemon: SimGrid ends it after the last process */
        double next = sim_timers_run(&n->ep);
        void *payload = NULL;

        if (sim_node_recv(n, next, &payload) != 0)
            continue;
        if (((sim_msg *)payload)->kind == MSG_S2C || ((sim_msg *)payload)->kind == MSG_HANGUP)
            sim_msg_free(payload); /* merged: for its process, which has exited */
        else
            sim_handle(&n->ep, dispatch, payload);
    }
}

int sim_node_recv(sim_node *n, double timeout, void **payload)
{
    sim_msg *m = n->local_head;

    if (m == NULL)
        return sgw_recv(n->ep.box, timeout, payload);
    n->local_head = m->next;
    m->next = NULL;
    *payload = m;
    return 0;
}

void sim_node_deliver(sim_node *n, sim_msg *m)
{
    void *self = sgw_self_data();

    sgw_set_self_data(&n->ep);
    sim_handle(&n->ep, dispatch, m);
    sgw_set_self_data(self);
}

double sim_node_timers(sim_node *n)
{
    void *self = sgw_self_data();
    double next;

    sgw_set_self_data(&n->ep);
    next = sim_timers_run(&n->ep);
    sgw_set_self_data(self);
    return next;
}

void sim_node_fini(sim_node *n)
{
    sim_spawn_node_fini(n); /* its spawned jobs' host cores use its timers */
    px_server_destroy(n->srv);
    n->srv = NULL;
    px_hc_destroy(n->hc);
    n->hc = NULL;
    while (n->local_head != NULL) {
        sim_msg *m = n->local_head;
        n->local_head = m->next;
        sim_msg_free(m);
    }
    while (n->ep.timers != NULL) {
        struct px_timer *t = n->ep.timers;
        n->ep.timers = t->next;
        free(t);
    }
    for (uint32_t i = 0; i < n->nprocs; i++) {
        if (n->procs[i].ep.box != n->ep.box)
            sgw_box_destroy(n->procs[i].ep.box);
        n->procs[i].ep.box = NULL;
    }
    sgw_box_destroy(n->ep.box);
    n->ep.box = NULL;
    sgw_box_destroy(n->loop);
    n->loop = NULL;
}
