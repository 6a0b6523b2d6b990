/*
 * planes.c - messages over one or two network planes, and planes going
 * down.
 *
 * One plane: every message is a mailbox put (sgw_send), as before planes
 * existed, so single-plane runs and their formulas are unchanged; with
 * --fault, one plane is carried as two are (below), with the same times.
 *
 * Two planes (--planes 2): the platform has one cluster per plane (topo.c)
 * and every message is a transfer between two NIC hosts of one plane
 * (sgw_sendto), then a push into the receiver's queued box. Which plane:
 *   - between two nodes, a collective's messages take plane
 *     (epoch - 1) mod 2, where epoch numbers the collectives of one node
 *     set (px_coll_epoch): back-to-back fences alternate planes, and every
 *     message of one fence crosses the same plane, so the fence's time is
 *     the one-plane formula (docs/simulation.md);
 *   - everything else between nodes (direct modex) takes plane 0;
 *   - between a node's server and its processes, the node's loopback on
 *     plane 0 (memory, not the network).
 * If the plane a message would take is down (the whole plane, or the NIC
 * of either node on it), the message takes the next plane that is up
 * (a failover). A transfer that fails on the way (its plane went down
 * meanwhile) is sent again, from its start, on the next plane (a retry):
 * collectives under way when a plane goes down complete, later. With no
 * plane up between two nodes the message is lost: a fence then ends only
 * by its timeout.
 *
 * Taking a plane down (sim_net_down) turns off its links in SimGrid (so
 * transfers on it fail at once), records it here (so no new message picks
 * it) and, through a zero-delay timer on every node actor, has each
 * node's server raise PMIX_NETWORK_COORDS_UPDATED (with PMIX_NETWORK_PLANE,
 * and PMIX_NETWORK_NIC for one NIC) to its processes; the client library
 * hands it to the handlers registered for that code. Coordinates do not
 * change: the event says which plane or NIC is gone.
 */
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"

static uint32_t node_of(const sim_ep *ep)
{
    if (ep == NULL)
        return 0; /* helper actors (--test-plane-down) run on node 0 */
    return ep->is_server ? ((const sim_node *)ep)->id : ((const sim_proc *)ep)->node->id;
}

static bool usable(const sim_net *net, unsigned plane, uint32_t a, uint32_t b)
{
    if (net->plane_down[plane])
        return false;
    if (net->nic_down[plane] != NULL && (net->nic_down[plane][a] || net->nic_down[plane][b]))
        return false;
    return true;
}

static unsigned preferred_plane(const sim_net *net, const sim_msg *m)
{
    if (m->kind == MSG_HC && m->tag > 0) /* a collective's message: its epoch */
        return (unsigned)((m->tag - 1) % net->nplanes);
    return 0;
}

static int net_send(sim_run *run, sim_ep *to, sim_msg *m, double bytes)
{
    sim_net *net = run->net;
    uint32_t src, dst;
    unsigned first;

    dst = node_of(to);
    src = node_of(sgw_self_data());
    if (run->nodes[dst].dead || run->nodes[src].dead) {
        /* Its hosts are off, or going off (a crash turns off one NIC host
         * after the other): SimGrid refuses a transfer from or to them. */
        sim_msg_free(m);
        return -1;
    }
    if (net == NULL || net->sg == NULL)
        return sgw_send(to->box, m, bytes, sim_msg_free);
    if (src == dst) {
        if (sgw_sendto(net->sg, 0, src, dst, bytes, m, sim_msg_free) == 0) {
            sgw_box_push(to->box, m);
            return 0;
        }
        sim_msg_free(m);
        return -1;
    }
    first = preferred_plane(net, m);
    for (unsigned k = 0; k < net->nplanes; k++) {
        unsigned p = (first + k) % net->nplanes;
        if (!usable(net, p, src, dst))
            continue;
        if (p != first)
            net->failovers++;
        if (sgw_sendto(net->sg, p, src, dst, bytes, m, sim_msg_free) == 0) {
            net->sent[p]++;
            sgw_box_push(to->box, m);
            return 0;
        }
        net->retries++; /* the plane went down under the transfer */
    }
    net->lost++;
    sim_msg_free(m);
    return -1;
}

int sim_net_send(sim_run *run, sim_ep *to, sim_msg *m, double bytes)
{
    sim_ep *self;
    double t0;
    int rc;

    if (run->opt.cpu != SIM_CPU_MEASURED || (self = sgw_self_data()) == NULL)
        return net_send(run, to, m, bytes);
    /* The sender is suspended meanwhile and other actors run in this
     * thread: their CPU time is not the sender's (sim_handle). */
    t0 = sim_thread_cpu();
    rc = net_send(run, to, m, bytes);
    self->cpu_suspended += sim_thread_cpu() - t0;
    return rc;
}

/* sgw_net_create's names of the NIC hosts: a generated topology's
 * (sim_nic_host), or a platform's planes (run->net->map). */
typedef struct host_ctx {
    const sim_run *run;
    char buf[64];
} host_ctx;

static const char *host_name(void *ctx, unsigned plane, size_t node)
{
    host_ctx *h = ctx;
    const px_netmap *m = h->run->net->map;

    if (m != NULL && m->nplanes > 1) {
        if (plane == 0)
            return h->run->nodes[node].host;
        return m->plane_hosts[plane][m->at != NULL ? m->at[node] : node];
    }
    sim_nic_host((uint32_t)node, plane, h->buf, sizeof(h->buf));
    return h->buf;
}

px_netmap *sim_platform_read(const char *path)
{
    px_netmap *m = calloc(1, sizeof(*m));
    char err[512];

    if (m != NULL && px_netmap_load(path, m, err, sizeof(err)) == 0)
        return m;
    free(m);
    return NULL;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **sim_platform_nics(const px_netmap *m, size_t *n)
{
    char **v;
    size_t k = 0;

    *n = 0;
    if (m == NULL || m->nplanes < 2)
        return NULL;
    if ((v = calloc((size_t)(m->nplanes - 1) * m->nnodes, sizeof(*v))) == NULL)
        return NULL;
    for (unsigned p = 1; p < m->nplanes; p++)
        for (uint32_t i = 0; i < m->nnodes; i++)
            v[k++] = m->plane_hosts[p][i];
    qsort(v, k, sizeof(*v), str_cmp);
    *n = k;
    return v;
}

bool sim_platform_is_nic(char *const *sorted, size_t n, const char *name)
{
    return sorted != NULL && bsearch(&name, sorted, n, sizeof(*sorted), str_cmp) != NULL;
}

/* --platform FILE: its first cluster's coordinates (or its plane
 * clusters'), read (run->pmap, sim_platform_read) and fitted as pmixrun
 * --topology FILE reads and fits them (px_netmap.h): by host name when
 * every run node is one of the cluster's hosts, else in the cluster's
 * order. A platform without a cluster this can read (hosts and links
 * written by hand, a cluster without a topology this knows) gives no
 * coordinates, as before: the run goes on, PMIX_NETWORK_* are not found.
 * A platform's planes (clusters with the pmixlab.plane property) are the
 * run's: a message crosses the plane's cluster between the two nodes'
 * NIC hosts on it. */
static void platform_map(sim_run *run)
{
    sim_net *net = run->net;
    px_netmap *m = run->pmap;
    char **names = calloc(run->nnodes ? run->nnodes : 1, sizeof(*names));
    char err[512];

    run->pmap = NULL;
    if (m != NULL && names != NULL) {
        for (uint32_t i = 0; i < run->nnodes; i++)
            names[i] = run->nodes[i].host;
        if (px_netmap_fit(m, names, run->nnodes, err, sizeof(err)) == 0) {
            net->map = m;
            net->shape = m->shape;
            /* the run's node ids are not the shape's (a fit by name): no
             * neighbour strides for taking a node's links off */
            net->shape.nstrides = 0;
            net->have_coords = true;
            if (m->nplanes > 1)
                net->nplanes = m->nplanes;
            m = NULL;
        }
    }
    if (m != NULL)
        px_netmap_free(m);
    free(m);
    free(names);
}

int sim_net_setup(sim_run *run, char *err, size_t errlen)
{
    sim_net *net = calloc(1, sizeof(*net));
    char params[256];
    host_ctx hc = {.run = run};

    if (net == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    run->net = net;
    net->nplanes = run->opt.planes ? run->opt.planes : 1;
    if (run->opt.topology != TOPO_FILE) {
        if (sim_topo_params(&run->opt, params, sizeof(params), err, errlen) != 0 ||
            sim_shape_make(&run->opt, run->nnodes, params, &net->shape, err, errlen) != 0)
            return -1;
        net->have_coords = true;
    } else {
        platform_map(run);
    }
    /* With faults, one plane is carried as planes are: a transfer that
     * fails (a host crashed, a link was cut) then fails at its sender
     * only, while a mailbox would keep the failed communication and hand
     * it to every later receive. The times are the same. */
    if (net->nplanes > 1 || run->opt.nfaults > 0) {
        net->sg = sgw_net_create(net->nplanes, run->nnodes, host_name, &hc, err, errlen);
        if (net->sg == NULL)
            return -1;
    }
    return 0;
}

void sim_net_start(sim_run *run)
{
    if (run->net == NULL || run->net->sg == NULL)
        return;
    for (uint32_t i = 0; i < run->nnodes; i++) {
        sim_node *n = &run->nodes[i];
        sgw_box_set_queued(n->ep.box);
        for (uint32_t j = 0; j < n->nprocs; j++)
            sgw_box_set_queued(n->procs[j].ep.box);
    }
}

void sim_net_drain(sim_run *run)
{
    if (run->net == NULL || run->net->sg == NULL || run->nodes == NULL)
        return;
    for (uint32_t i = 0; i < run->nnodes; i++) {
        sim_node *n = &run->nodes[i];
        sgw_box_drain(n->ep.box, sim_msg_free);
        for (uint32_t j = 0; j < n->nprocs; j++)
            sgw_box_drain(n->procs[j].ep.box, sim_msg_free);
    }
}

void sim_net_fini(sim_run *run)
{
    sim_net *net = run->net;

    if (net == NULL)
        return;
    sgw_net_destroy(net->sg);
    px_coll_groups_destroy(net->all_groups);
    if (net->map != NULL)
        px_netmap_free(net->map);
    free(net->map);
    if (net->common.array != NULL)
        PMIx_Data_array_destruct(&net->common);
    for (unsigned p = 0; p < SIM_MAX_PLANES; p++)
        free(net->nic_down[p]);
    free(net);
    run->net = NULL;
}

/* ---- planes going down ---- */

typedef struct down_note {
    sim_node *node;
    unsigned plane;
    int64_t nic; /* the node whose NIC went down, or -1: the whole plane */
} down_note;

static void raise_updated(void *arg)
{
    down_note *d = arg;
    sim_node *n = d->node;
    sim_run *run = n->ep.run;
    pmix_info_t info[2];
    size_t ninfo = 0;
    pmix_proc_t source;
    char name[64];

    sim_plane_name(d->plane, name, sizeof(name));
    PMIx_Info_load(&info[ninfo++], PMIX_NETWORK_PLANE, name, PMIX_STRING);
    if (d->nic >= 0) {
        sim_nic_name((uint32_t)d->nic, d->plane, name, sizeof(name));
        PMIx_Info_load(&info[ninfo++], PMIX_NETWORK_NIC, name, PMIX_STRING);
    }
    PMIx_Load_procid(&source, run->nspace, PMIX_RANK_WILDCARD);
    px_server_notify(n->srv, PMIX_NETWORK_COORDS_UPDATED, &source, PMIX_RANGE_NAMESPACE, info,
                     ninfo);
    for (size_t i = 0; i < ninfo; i++)
        PMIx_Info_destruct(&info[i]);
    if (run->net != NULL)
        run->net->events++;
    free(d);
}

/* Mark `plane` (node < 0) or node's NIC on it down and turn its links off;
 * returns how many links went off, or 0 with an error in *rc. */
static size_t net_off(sim_run *run, int plane, int64_t node, int *rc)
{
    sim_net *net = run->net;

    *rc = PMIX_SUCCESS;
    if (node < 0) {
        net->plane_down[plane] = true;
    } else {
        if (net->nic_down[plane] == NULL &&
            (net->nic_down[plane] = calloc(run->nnodes, 1)) == NULL) {
            *rc = PMIX_ERR_NOMEM;
            return 0;
        }
        net->nic_down[plane][node] = 1;
    }
    return sgw_net_off(net->sg, (unsigned)plane, node < 0 ? (size_t)-1 : (size_t)node,
                       net->shape.nstrides ? net->shape.strides : (const size_t[]){1},
                       net->shape.nstrides ? net->shape.nstrides : 1);
}

void sim_net_node_off(sim_run *run, uint32_t node)
{
    int rc;

    for (unsigned p = 0; run->net != NULL && run->net->sg != NULL && p < run->net->nplanes; p++)
        (void)net_off(run, (int)p, node, &rc);
}

int sim_net_down(sim_run *run, int plane, int64_t node)
{
    sim_net *net = run->net;
    size_t off;
    int rc;

    if (net == NULL || net->sg == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if (plane < 0 || (unsigned)plane >= net->nplanes || node >= (int64_t)run->nnodes || node < -1)
        return PMIX_ERR_BAD_PARAM;
    off = net_off(run, plane, node, &rc);
    if (rc != PMIX_SUCCESS)
        return rc;
    if (node < 0)
        sim_logf(run, "plane %d down (%zu links off)", plane, off);
    else
        sim_logf(run, "node %lld's NIC on plane %d down (%zu links off)", (long long)node, plane,
                 off);
    for (uint32_t i = 0; i < run->nnodes; i++) {
        down_note *d = calloc(1, sizeof(*d));
        if (d == NULL)
            return PMIX_ERR_NOMEM;
        d->node = &run->nodes[i];
        d->plane = (unsigned)plane;
        d->nic = node;
        if (sim_timer_add(&run->nodes[i].ep, 0, raise_updated, d) == NULL) {
            free(d);
            return PMIX_ERR_NOMEM;
        }
    }
    return PMIX_SUCCESS;
}

static void down_actor(void *arg)
{
    sim_run *run = arg;
    sim_net *net = run->net;
    int rc;

    sgw_sleep_until(net->test_at);
    rc = sim_net_down(run, net->test_plane, net->test_node);
    if (rc != PMIX_SUCCESS)
        sim_logf(run, "taking plane %d down failed: %s", net->test_plane, PMIx_Error_string(rc));
}

int sim_net_schedule_down(sim_run *run, const char *spec, char *err, size_t errlen)
{
    sim_net *net = run->net;
    char *end;
    long plane = strtol(spec, &end, 10);
    long long node = -1;
    double at;

    if (end == spec || plane < 0 || plane >= (long)run->opt.planes) {
        snprintf(err, errlen,
                 "--test-plane-down %s: expected PLANE[.NODE]@SECONDS with PLANE "
                 "below --planes (%u)",
                 spec, run->opt.planes);
        return -1;
    }
    if (*end == '.') {
        const char *p = end + 1;
        node = strtoll(p, &end, 10);
        if (end == p || node < 0 || node >= (long long)run->nnodes) {
            snprintf(err, errlen, "--test-plane-down %s: NODE must be below %u", spec, run->nnodes);
            return -1;
        }
    }
    if (*end != '@' || (at = strtod(end + 1, &end)) < 0 || *end != '\0') {
        snprintf(err, errlen, "--test-plane-down %s: expected PLANE[.NODE]@SECONDS", spec);
        return -1;
    }
    if (net == NULL || net->sg == NULL) {
        snprintf(err, errlen,
                 "--test-plane-down needs --planes 2: with one plane there is "
                 "nothing to fail over to");
        return -1;
    }
    net->test_plane = (int)plane;
    net->test_node = node;
    net->test_at = at;
    sgw_actor("plane-down", run->nodes[0].host, down_actor, run, 1);
    return 0;
}

void sim_net_report(const sim_run *run, FILE *f)
{
    const sim_net *net = run->net;

    if (net == NULL || net->nplanes < 2)
        return;
    fprintf(f, "# planes: %u; messages between nodes per plane:", net->nplanes);
    for (unsigned p = 0; p < net->nplanes; p++)
        fprintf(f, " %llu", (unsigned long long)net->sent[p]);
    fprintf(f, "; failovers %llu; retries %llu; lost %llu; coords-updated raised on %u nodes\n",
            (unsigned long long)net->failovers, (unsigned long long)net->retries,
            (unsigned long long)net->lost, net->events);
}
