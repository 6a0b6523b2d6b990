/*
 * coords.c - network coordinates of the generated topologies and of a
 * --platform file's cluster, their registration with the servers, and
 * hierarchical groups from them.
 *
 * The shapes and coordinates are the host core's (px_netmap.h, which
 * gives the table of every topology's coordinates), and so is the builder
 * of the keys (px_netinfo); every plane is a copy of the same topology, so
 * a node has the same coordinate on each plane, one per NIC (one NIC per
 * node per plane). This file names the planes' NICs and hosts, hands the
 * builder the run's nodes and makes the hier groups. A node gets its own
 * node and processes, and every node and process up to
 * SIM_NET_PEERS_MAX_NODES nodes and SIM_NET_PEERS_MAX_PROCS processes.
 */
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"

#define FABRIC "pmixsim"

int sim_shape_make(const sim_opts *o, uint32_t nnodes, const char *params, sim_shape *s, char *err,
                   size_t errlen)
{
    return px_netshape_simgrid(sim_topo_name(o->topology), params, nnodes, s, err, errlen);
}

unsigned sim_coord_of(const sim_shape *s, uint32_t node, pmix_coord_view_t view,
                      uint32_t out[SIM_MAX_DIMS])
{
    return px_netshape_coord(s, node, view, out);
}

unsigned sim_group_key(const sim_shape *s, uint32_t node, uint32_t out[SIM_MAX_DIMS])
{
    uint32_t c[SIM_MAX_DIMS];
    unsigned d = sim_coord_of(s, node, PMIX_COORD_LOGICAL_VIEW, c);

    if (s->torus) {
        memcpy(out, c + 1, (d - 1) * sizeof(*c)); /* all but x */
        return d - 1;
    }
    memcpy(out, c, s->gdims * sizeof(*c));
    return s->gdims;
}

unsigned sim_net_coord(const sim_net *net, uint32_t node, pmix_coord_view_t view,
                       uint32_t out[SIM_MAX_DIMS])
{
    if (net->map != NULL)
        return px_netmap_coord(net->map, node, view, out);
    return sim_coord_of(&net->shape, node, view, out);
}

unsigned sim_net_group_key(const sim_net *net, uint32_t node, uint32_t out[SIM_MAX_DIMS])
{
    if (net->map != NULL)
        return px_netmap_group_key(net->map, node, out);
    return sim_group_key(&net->shape, node, out);
}

/* ---- names ---- */

void sim_plane_name(unsigned plane, char *buf, size_t len)
{
    snprintf(buf, len, "plane%u", plane);
}

void sim_nic_name(uint32_t node, unsigned plane, char *buf, size_t len)
{
    snprintf(buf, len, "node-%u.nic%u", node, plane);
}

void sim_nic_host(uint32_t node, unsigned plane, char *buf, size_t len)
{
    if (plane == 0)
        snprintf(buf, len, "node-%u", node);
    else
        snprintf(buf, len, "node-%u.p%u", node, plane);
}

/* ---- registration ---- */

/* The host core's key builder (px_netinfo, hostcore/netinfo.c) over the
 * run's shape and names. */
static unsigned ni_coord(void *ctx, uint32_t node, pmix_coord_view_t view,
                         uint32_t out[PX_NET_MAX_DIMS])
{
    const sim_run *run = ctx;
    return sim_net_coord(run->net, node, view, out);
}

static const char *ni_host(void *ctx, uint32_t node)
{
    const sim_run *run = ctx;
    return run->nodes[node].host;
}

/* A NIC is named after its node's host: "node-3.nic1" for a generated
 * topology (sim_nic_name), "HOST.nic0" for a platform file's host. */
static void ni_nic_name(void *ctx, uint32_t node, unsigned plane, char *buf, size_t len)
{
    const sim_run *run = ctx;
    if (run->net->map != NULL)
        snprintf(buf, len, "%s.nic%u", run->nodes[node].host, plane);
    else
        sim_nic_name(node, plane, buf, len);
}

/* The host that is node's NIC on a plane: a platform's plane cluster's
 * (px_netmap.plane_hosts), or a generated topology's (sim_nic_host). */
static void ni_nic_host(void *ctx, uint32_t node, unsigned plane, char *buf, size_t len)
{
    const sim_run *run = ctx;
    const px_netmap *m = run->net->map;
    if (m != NULL && plane > 0 && plane < m->nplanes)
        snprintf(buf, len, "%s", m->plane_hosts[plane][m->at != NULL ? m->at[node] : node]);
    else if (m != NULL)
        snprintf(buf, len, "%s", run->nodes[node].host);
    else
        sim_nic_host(node, plane, buf, len);
}

static px_netinfo netinfo(const sim_run *run)
{
    const px_netmap *m = run->net->map;
    return (px_netinfo){.fabric = FABRIC,
                        .planes = run->net->nplanes,
                        .plane_names = m != NULL && m->nplanes > 0     ? m->plane
                                       : run->opt.topo_file_planes > 0 ? run->opt.topo_file_plane
                                                                       : NULL,
                        .nnodes = run->nnodes,
                        .shape = &run->net->shape,
                        .coord = ni_coord,
                        .host = ni_host,
                        .nic_name = ni_nic_name,
                        .nic_host = ni_nic_host,
                        .ctx = (void *)run};
}

typedef px_ivec ivec;

/* PMIX_PROC_DATA {rank, node id} for a process of another node. */
static pmix_status_t add_peer(pmix_rank_t rank, uint32_t node, ivec *top)
{
    ivec pd = {0};
    pmix_status_t rc;

    if ((rc = px_ivec_load(&pd, PMIX_RANK, &rank, PMIX_PROC_RANK)) == PMIX_SUCCESS &&
        (rc = px_ivec_load(&pd, PMIX_NODEID, &node, PMIX_UINT32)) == PMIX_SUCCESS)
        return px_ivec_nest(top, PMIX_PROC_DATA, &pd);
    px_ivec_free(&pd);
    return rc;
}

pmix_status_t sim_net_register(const sim_run *run, uint32_t node, pmix_data_array_t *out,
                               const pmix_info_t **shared, size_t *nshared)
{
    bool peers = run->nnodes <= SIM_NET_PEERS_MAX_NODES && run->nprocs <= SIM_NET_PEERS_MAX_PROCS;
    sim_net *net = run->net;
    ivec top = {0};
    pmix_status_t rc = PMIX_SUCCESS;

    out->type = PMIX_INFO;
    out->size = 0;
    out->array = NULL;
    *shared = NULL;
    *nshared = 0;
    if (net == NULL || !net->have_coords)
        return PMIX_SUCCESS;
    if (net->common.array == NULL) { /* built for the first node, kept for the others */
        ivec c = {0};
        px_netinfo ni = netinfo(run);
        if ((rc = px_netinfo_common(&ni, peers, &c)) != PMIX_SUCCESS) {
            px_ivec_free(&c);
            return rc;
        }
        net->common.type = PMIX_INFO;
        net->common.size = c.n;
        net->common.array = c.v;
    }
    /* every node's keys and processes in a small job, only this node's in
     * a large one (not even a loop over the others: that was quadratic) */
    for (uint32_t i = peers ? 0 : node; rc == PMIX_SUCCESS && i < (peers ? run->nnodes : node + 1);
         i++) {
        px_netinfo ni = netinfo(run);
        rc = px_netinfo_node(&ni, i, &top);
        for (uint32_t j = 0; rc == PMIX_SUCCESS && i != node && j < run->opt.ppn; j++)
            rc = add_peer(i * run->opt.ppn + j, i, &top);
    }
    if (rc != PMIX_SUCCESS) {
        px_ivec_free(&top);
        return rc;
    }
    out->size = top.n;
    out->array = top.v;
    *shared = net->common.array;
    *nshared = net->common.size;
    return PMIX_SUCCESS;
}

/* ---- groups ---- */

const px_coll_groups *sim_net_groups(sim_run *run, const uint32_t *members, uint32_t count,
                                     px_coll_groups **owned)
{
    sim_net *net = run->net;
    pmix_coord_t *c;
    uint32_t *keys;
    unsigned dims = 0;
    px_coll_groups *g;

    *owned = NULL;
    if (net == NULL || !net->have_coords || count == 0)
        return NULL;
    /* Every node (the host core's members are distinct and ascending, so
     * count == nnodes means 0..nnodes-1): the run's groups, built once and
     * shared, not one copy per node (O(nodes^2) in all). */
    if (count == run->nnodes) {
        members = NULL;
        if (net->all_groups != NULL)
            return net->all_groups;
    }
    /* members NULL with fewer nodes: nodes 0 .. count - 1 (a set the core
     * made from a message whose one run starts at node 0) */
    c = calloc(count, sizeof(*c));
    keys = calloc((size_t)count * SIM_MAX_DIMS, sizeof(*keys));
    if (c == NULL || keys == NULL) {
        free(c);
        free(keys);
        return NULL;
    }
    for (uint32_t m = 0; m < count; m++) {
        uint32_t node = members != NULL ? members[m] : m;
        dims = sim_net_group_key(net, node, keys + (size_t)m * SIM_MAX_DIMS);
        c[m].view = PMIX_COORD_LOGICAL_VIEW;
        c[m].coord = keys + (size_t)m * SIM_MAX_DIMS;
        c[m].dims = dims;
    }
    g = px_coll_groups_from_coords(count, c, dims);
    /* switched as the shape says: a fat tree's leaf switches and a
     * dragonfly's groups, not a torus line (px_netshape). */
    px_coll_groups_set_switched(g, net->shape.switched);
    free(c);
    free(keys);
    if (count == run->nnodes)
        net->all_groups = g; /* shared by every set over every node */
    else
        *owned = g;
    return g;
}
