/*
 * simnet.h - network planes and network coordinates in pmixsim
 * (docs/simulation.md, "Network planes" and "Network coordinates").
 *
 *   coords.c  the shape and coordinates of every generated topology, their
 *             registration with each node's server (the PMIX_NETWORK_*
 *             keys of the coordinates chapter), and the hierarchical
 *             algorithm's groups built from them
 *   planes.c  messages between nodes over the planes (which plane a message
 *             takes, failover), and taking a plane or a NIC down
 */
#ifndef PMIXSIM_SIMNET_H
#define PMIXSIM_SIMNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pmix_common.h>

#include "px_coll.h"
#include "px_netmap.h"
#include "sgw.h"

#define SIM_MAX_PLANES PX_NET_MAX_PLANES
#define SIM_MAX_DIMS PX_NET_MAX_DIMS
/* Every node registers the coordinates of every process (not only of its
 * own) up to this many nodes and processes: beyond, the tables would cost
 * O(nodes x processes) in the simulator. */
#define SIM_NET_PEERS_MAX_NODES 64
#define SIM_NET_PEERS_MAX_PROCS 1024

typedef struct sim_run sim_run;
typedef struct sim_opts sim_opts;
typedef struct sim_ep sim_ep;
typedef struct sim_msg sim_msg;

/* The coordinates of a generated topology, the same on every plane: the
 * host core's shape (hostcore/px_netmap.h), which the socket host reads
 * from the same descriptions. */
typedef px_netshape sim_shape;

typedef struct sim_net {
    unsigned nplanes;
    bool have_coords; /* a generated topology or a platform file's cluster */
    sim_shape shape;
    /* --platform FILE whose first cluster names a topology: the file read
     * as pmixrun --topology reads it (px_netmap_load), fitted to the run's
     * hosts by name; NULL for a generated topology, whose node i is the
     * shape's node i. */
    px_netmap *map;
    sgw_net *sg;                       /* NULL with one plane */
    bool plane_down[SIM_MAX_PLANES];   /* the whole plane is off */
    uint8_t *nic_down[SIM_MAX_PLANES]; /* per node, NULL until one goes down */
    px_coll_groups *all_groups;        /* hier groups of every node; NULL: flat */
    pmix_data_array_t common;          /* the network keys alike on every node */
    uint64_t sent[SIM_MAX_PLANES];     /* messages between nodes, per plane */
    uint64_t failovers;                /* sent on another plane than their own */
    uint64_t retries;                  /* failed on the way, sent again elsewhere */
    uint64_t lost;                     /* no plane left between the two nodes */
    uint32_t events;                   /* PMIX_NETWORK_COORDS_UPDATED raised (nodes) */
    int test_plane;                    /* --test-plane-down */
    int64_t test_node;
    double test_at;
} sim_net;

/* coords.c */

/* The shape of topology `o->topology` with SimGrid parameters `params`
 * (sim_topo_params) on `nnodes` nodes. Returns 0, or -1 with a reason. */
int sim_shape_make(const sim_opts *o, uint32_t nnodes, const char *params, sim_shape *out,
                   char *err, size_t errlen);
/* Node `node`'s coordinate in `view` (PMIX_COORD_LOGICAL_VIEW or
 * PMIX_COORD_PHYSICAL_VIEW) into out[0..dims-1]; returns dims. */
unsigned sim_coord_of(const sim_shape *s, uint32_t node, pmix_coord_view_t view,
                      uint32_t out[SIM_MAX_DIMS]);
/* The hier group key of a node: the coordinates its group shares. */
unsigned sim_group_key(const sim_shape *s, uint32_t node, uint32_t out[SIM_MAX_DIMS]);
/* Run node `node`'s coordinate and group key: the platform file's map
 * when there is one, else the generated shape's (sim_coord_of). */
unsigned sim_net_coord(const sim_net *net, uint32_t node, pmix_coord_view_t view,
                       uint32_t out[SIM_MAX_DIMS]);
unsigned sim_net_group_key(const sim_net *net, uint32_t node, uint32_t out[SIM_MAX_DIMS]);
/* Names: "plane0"; "node-3.nic1"; the NIC's host ("node-3", "node-3.p1"). */
void sim_plane_name(unsigned plane, char *buf, size_t len);
void sim_nic_name(uint32_t node, unsigned plane, char *buf, size_t len);
void sim_nic_host(uint32_t node, unsigned plane, char *buf, size_t len);
/* The network keys for node `node`, to be registered with that node's
 * server (simnode.c, register_job): its own in `out` (PMIX_INFO; empty
 * without coordinates), which the caller destructs, and those every node
 * registers alike in shared[0..nshared-1], built once and owned by
 * run->net (until sim_net_fini). */
pmix_status_t sim_net_register(const sim_run *run, uint32_t node, pmix_data_array_t *out,
                               const pmix_info_t **shared, size_t *nshared);
/* Groups among `count` nodes (`members`: sorted node ids, NULL = every
 * node) from their coordinates; NULL (one flat group) without coordinates
 * or on failure. The groups of every node are built once and shared;
 * those of a subset go to *owned, which the caller destroys. */
const px_coll_groups *sim_net_groups(sim_run *run, const uint32_t *members, uint32_t count,
                                     px_coll_groups **owned);

/* planes.c */

/* --platform FILE read as pmixrun --topology reads it (px_netmap_load),
 * or NULL: a platform without a cluster this can read (no coordinates,
 * one plane). The caller frees it (px_netmap_free, free) or gives it to
 * run->pmap. */
px_netmap *sim_platform_read(const char *path);
/* Whether SimGrid host `name` is a NIC on a plane other than the first of
 * the platform's map (not a node); `sorted` is from sim_platform_nics. */
bool sim_platform_is_nic(char *const *sorted, size_t n, const char *name);
/* The hosts of the map's planes after the first, sorted by name, into a
 * new array (*n of them; the names are the map's); NULL when there are
 * none or no memory. */
char **sim_platform_nics(const px_netmap *m, size_t *n);
/* After the platform is loaded and the nodes named: the shape, and the
 * planes' NIC hosts (a platform's planes from run->pmap, which this takes
 * over). Returns 0, or -1 with a reason. */
int sim_net_setup(sim_run *run, char *err, size_t errlen);
/* After the nodes are set up: with two planes, make their boxes queued. */
void sim_net_start(sim_run *run);
/* Before the nodes are finalized: free the messages still queued. */
void sim_net_drain(sim_run *run);
/* After the nodes are finalized (their collectives borrow the groups). */
void sim_net_fini(sim_run *run);
/* Send a message to endpoint `to` from the calling actor (see planes.c for
 * the plane it takes). Returns 0 once it arrived, or -1 if it was lost
 * (freed): the receiver's host is off, or no plane is up between them. */
int sim_net_send(sim_run *run, sim_ep *to, sim_msg *m, double bytes);
/* Take `plane` down at the current simulated time: the whole plane
 * (node < 0) or node `node`'s NIC on it. Messages stop using it; transfers
 * under way on it fail and are sent again on another plane; every node
 * raises PMIX_NETWORK_COORDS_UPDATED to its processes that registered for
 * it. Returns 0, PMIX_ERR_BAD_PARAM (no such plane or node), or
 * PMIX_ERR_NOT_SUPPORTED (one plane without --fault, whose messages are
 * mailbox puts). With one plane there is nothing to fail over to: the
 * messages that need the NIC or plane are lost. */
int sim_net_down(sim_run *run, int plane, int64_t node);
/* A node crashes: its NICs on every plane go off, silently (no event). */
void sim_net_node_off(sim_run *run, uint32_t node);
/* Parse "P@T" or "P.NODE@T" (--test-plane-down) and arrange for
 * sim_net_down at simulated time T. Returns 0, or -1 with a reason. */
int sim_net_schedule_down(sim_run *run, const char *spec, char *err, size_t errlen);
/* One line about the planes for the report, or nothing with one plane. */
void sim_net_report(const sim_run *run, FILE *f);

#endif /* PMIXSIM_SIMNET_H */
