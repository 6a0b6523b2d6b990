/*
 * px_netmap.h - the shape of a network and every node's coordinates in it
 * (the Standard's network coordinates chapter), read from a description
 * that both hosts accept, and the PMIX_NETWORK_* keys made from them.
 *
 * Descriptions (px_netmap_load):
 *   - Slurm's topology.conf (tree plugin): lines `SwitchName=S Nodes=LIST`
 *     for leaf switches and `SwitchName=S Switches=LIST` above them, with
 *     Slurm's host lists (`n[1-16]`, `n[01-04,7],login`). Every leaf switch
 *     must be at the same depth. `scontrol show topology` writes the same
 *     lines with both lists ("(null)" for none): a switch with Switches=
 *     is an upper one whatever its Nodes= says. A node's logical
 *     coordinate has one digit
 *     per level, top first: the index of its switch among its parent's
 *     children at each level (and of its top switch among the top switches
 *     when there are several), then its port (its index among its leaf
 *     switch's nodes); the physical view is the same. The shape is the
 *     largest count at each level. The group key (hier) is every digit but
 *     the port: the node's leaf switch.
 *   - a SimGrid platform file whose first <cluster> (its first plane
 *     cluster, if it has planes: below) names a topology
 *     (FAT_TREE, TORUS, DRAGONFLY; FLAT or none: a crossbar) and its
 *     topo_parameters, as pmixsim writes and reads them: the coordinates of
 *     that topology (docs/simulation.md), nodes in radical order.
 * Without a description, px_netmap_flat: one switch, every node a port.
 *
 * Planes (px_netplanes_make): a topology.conf may name them, one line per
 * plane, `PlaneName=NAME Nics=DEV[,DEV...]` (pmixlab's addition: Slurm's
 * own parser does not know the key): the plane holds each node's NIC
 * whose device is one of DEV (an hwloc OS device name: "mlx5_0" or
 * "ib0"). A SimGrid platform describes each plane as a <cluster> of its
 * own (the NICs on that plane are its hosts, as pmixsim --planes 2
 * generates), marked with a property `<prop id="pmixlab.plane"
 * value="NAME"/>` and optionally `<prop id="pmixlab.nics" value="DEV,..."/>`;
 * without the NICs property, plane p holds each node's p-th NIC (in
 * hwloc's order). Plane clusters are in file order; the first is plane 0,
 * whose hosts are the nodes, and every other must have its topology,
 * topo_parameters and host count (a copy: description node i's NIC on
 * plane p is plane p's i-th host). Clusters without the property are
 * other parts of the machine and are not read. Every plane is a copy of the file's switch tree (one
 * rail per plane), so a node's coordinate is the same on each. Without PlaneName lines, a node with
 * several OpenFabrics NICs (px_nics_read) has one plane per NIC, "plane0", "plane1"..., in hwloc's
 * order; otherwise (one NIC, none, or Ethernet ports only, which may not all be cabled) one plane
 * "plane0" whose NIC is named after the node. Each node has its own NICs (px_netplanes_make_nodes):
 * on the socket host every pmixd reads its node's and pmixrun makes the job's planes from them all.
 *
 * A px_netmap owns its tables; px_netmap_free releases them. Nothing here
 * does I/O but px_netmap_load, which reads the file it is given.
 */
#ifndef PX_NETMAP_H
#define PX_NETMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

#include "px_hostcore.h"

#define PX_NET_MAX_DIMS 4
#define PX_NET_MAX_PLANES 8
#define PX_NET_NAME_MAX 32 /* a plane's or a device's name, with its NUL */

/* The shape of a network: dimensions and sizes per view. */
typedef struct px_netshape {
    unsigned ldims, pdims;           /* logical and physical dimensions */
    uint32_t lsize[PX_NET_MAX_DIMS]; /* logical shape */
    uint32_t psize[PX_NET_MAX_DIMS]; /* physical shape */
    unsigned gdims;                  /* leading logical digits of the group key (hier) */
    bool torus;                      /* x fastest; groups share all but x */
    size_t strides[PX_NET_MAX_DIMS]; /* node-id distances to a node's neighbours */
    unsigned nstrides;
    /* The groups keep their traffic off the links between groups (a
     * switch's nodes, a dragonfly group), where hier wins and auto may
     * pick it (px_coll_groups_set_switched); not a torus line. */
    bool switched;
} px_netshape;

/* The shape of SimGrid's topology `kind` ("crossbar" or "FLAT",
 * "fattree" or "FAT_TREE", "torus" or "TORUS", "dragonfly" or
 * "DRAGONFLY") with its topo_parameters `params`, holding at least
 * `nnodes` nodes. Returns 0, or -1 with a sentence in err. */
int px_netshape_simgrid(const char *kind, const char *params, uint32_t nnodes, px_netshape *out,
                        char *err, size_t errlen);
/* Node `node`'s coordinate in a SimGrid topology's shape, in `view`
 * (PMIX_COORD_PHYSICAL_VIEW, else logical), into out[]; returns dims. */
unsigned px_netshape_coord(const px_netshape *s, uint32_t node, pmix_coord_view_t view,
                           uint32_t out[PX_NET_MAX_DIMS]);

/* A description read and fitted to a job's nodes. */
typedef struct px_netmap {
    px_netshape shape;
    uint32_t nnodes;  /* the nodes described */
    uint32_t *lcoord; /* nnodes x shape.ldims, or NULL: px_netshape_coord */
    uint32_t *pcoord; /* nnodes x shape.pdims, or NULL: the logical ones */
    char **names;     /* nnodes names from the description */
    /* After px_netmap_fit: the job's node count, and job node i's index
     * in the description (at[i]; NULL: i itself). */
    uint32_t njob;
    uint32_t *at;
    bool by_name;     /* fitted by name, not by order */
    bool flat;        /* the default: no description was given */
    char source[160]; /* what it is, for a user: "FILE (Slurm topology.conf, 2 switches)" */
    /* A SimGrid platform's cluster: its topology (SimGrid's name) and
     * topo_parameters, which rebuild it; "" for a Slurm tree. */
    char sg_topology[16];
    char sg_params[240];
    /* A topology.conf's PlaneName= lines, or a SimGrid platform's plane
     * clusters: names and their Nics= lists (as written, comma-separated;
     * "": the node's NIC of the plane's rank, px_netplanes_make);
     * nplanes 0: none. */
    unsigned nplanes;
    char plane[PX_NET_MAX_PLANES][PX_NET_NAME_MAX];
    char plane_nics[PX_NET_MAX_PLANES][128];
    /* A SimGrid platform's planes: plane p's host of description node i is
     * plane_hosts[p][i] (for p >= 1; plane 0's hosts are `names`). */
    char **plane_hosts[PX_NET_MAX_PLANES];
} px_netmap;

/* The properties of a SimGrid <cluster> that make it a plane (px_netmap.h,
 * "Planes") and name the NIC devices on it. */
#define PX_NET_SG_PLANE_PROP "pmixlab.plane"
#define PX_NET_SG_NICS_PROP "pmixlab.nics"

/* A node's NICs as hwloc sees them: one per PCI device holding network
 * (HWLOC_OBJ_OSDEV_NETWORK) or OpenFabrics (HWLOC_OBJ_OSDEV_OPENFABRICS)
 * OS devices, in hwloc's order; when any NIC has an OpenFabrics device
 * (InfiniBand, RoCE, Omni-Path), only those count: the others (Ethernet)
 * are taken for the management network. */
typedef struct px_nics {
    unsigned n;
    bool fabric; /* they are OpenFabrics NICs */
    /* The NIC's name: its OpenFabrics device's, else its network
     * device's ("mlx5_0", "eth1"). */
    char name[PX_NET_MAX_PLANES][PX_NET_NAME_MAX];
    /* Its network device's name when it has both ("ib0"), else "". */
    char alias[PX_NET_MAX_PLANES][PX_NET_NAME_MAX];
} px_nics;

struct hwloc_topology;
/* Ask hwloc for a topology's network and OpenFabrics OS devices: call it
 * between hwloc_topology_init and hwloc_topology_load. It leaves out
 * hwloc's "pci" plugin (its libpciaccess keeps allocations to the end of
 * the process): on Linux the PCI devices come from sysfs instead. */
void px_nics_topology_prepare(struct hwloc_topology *topo);
/* The NICs of a loaded topology (prepared as above; without its I/O
 * devices: none). More than PX_NET_MAX_PLANES: the first ones. */
void px_nics_from_topology(struct hwloc_topology *topo, px_nics *out);
/* Read the NICs of the machine described by the hwloc XML file `xml`, or
 * of this machine (NULL), in a topology of its own. Returns 0, or -1 with
 * a sentence in err (*out then has none). */
int px_nics_read(const char *xml, px_nics *out, char *err, size_t errlen);

/* The planes of a job: names, and each plane's NIC device ("": none
 * known, the NIC is named after its node). */
typedef struct px_netplanes {
    unsigned n; /* 1 or more */
    char name[PX_NET_MAX_PLANES][PX_NET_NAME_MAX];
    char dev[PX_NET_MAX_PLANES][PX_NET_NAME_MAX];
} px_netplanes;

/* The planes from the map's PlaneName= lines and the NICs (see above).
 * Fails (-1, a sentence in err) when a named plane has none of the NICs:
 * the description is not of this machine's network. */
int px_netplanes_make(const px_netmap *m, const px_nics *nics, px_netplanes *out, char *err,
                      size_t errlen);

/* Each node's NIC device per plane ("": the NIC is named after its node). */
typedef char px_netdevs[PX_NET_MAX_PLANES][PX_NET_NAME_MAX];

/* The planes of a job of `n` nodes (named names[i] in messages) whose
 * node i has the NICs nics[i]: the names into out (out->dev stays empty)
 * and node i's device on each plane into devs[i]. With the map's
 * PlaneName= lines, every node must have a NIC of every plane (else -1
 * with a sentence naming the node in err); without them, when every node
 * has OpenFabrics NICs and the fewest any node has is at least 2, plane p
 * is every node's p-th NIC (planes "plane0"...; the extra NICs of a node
 * with more are on none); otherwise one plane "plane0" with no device.
 * For one node this is px_netplanes_make. */
int px_netplanes_make_nodes(const px_netmap *m, const px_nics *nics, uint32_t n, char *const *names,
                            px_netplanes *out, px_netdevs *devs, char *err, size_t errlen);

/* One switch holding `nnodes` nodes, marked flat. Returns 0, or -1. */
int px_netmap_flat(px_netmap *m, uint32_t nnodes);
/* Read `path` (a Slurm topology.conf or a SimGrid platform file, told
 * apart by its first non-blank character '<'). Returns 0, or -1 with a
 * sentence in err; *m is empty on failure. */
int px_netmap_load(const char *path, px_netmap *m, char *err, size_t errlen);
/* The same from text already read (`name` is used in messages). */
int px_netmap_parse_slurm(const char *text, const char *name, px_netmap *m, char *err,
                          size_t errlen);
int px_netmap_parse_simgrid(const char *text, const char *name, px_netmap *m, char *err,
                            size_t errlen);
/* Fit the map to a job's `n` nodes named names[0..n-1]: by name when every
 * job node is named in the description, else in the description's order
 * (job node i is the description's i-th node). Fails (-1, a sentence in
 * err, *m unchanged) when the description has fewer than n nodes. */
int px_netmap_fit(px_netmap *m, char *const *names, uint32_t n, char *err, size_t errlen);
/* The SimGrid FAT_TREE topo_parameters of a tree map whose every switch
 * of a level has the same count (what pmixsim builds a platform from),
 * into buf. Returns 0, or -1 with a sentence when the tree is irregular. */
int px_netmap_fattree_params(const px_netmap *m, char *buf, size_t len, char *err, size_t errlen);
/* Job node `node`'s coordinate (before px_netmap_fit: the description's
 * node `node`); returns dims. */
unsigned px_netmap_coord(const px_netmap *m, uint32_t node, pmix_coord_view_t view,
                         uint32_t out[PX_NET_MAX_DIMS]);
/* Node `node`'s hier group key (the digits its group shares); returns
 * their count. */
unsigned px_netmap_group_key(const px_netmap *m, uint32_t node, uint32_t out[PX_NET_MAX_DIMS]);
/* The hier groups of `count` nodes (members: ascending node ids, NULL:
 * 0..count-1), marked switched as the shape says; NULL on failure or
 * when count is 0. The caller destroys them. */
px_coll_groups *px_netmap_groups(const px_netmap *m, const uint32_t *members, uint32_t count);
void px_netmap_free(px_netmap *m);

/* ---- the keys (netinfo.c) ---- */

/* What the key builder needs of a host's network: every plane is a copy
 * of one shape, and a node has one NIC per plane. */
typedef struct px_netinfo {
    const char *fabric; /* pmix_coord_t's fabric name */
    unsigned planes;    /* 1 or more */
    /* The planes' names, planes of them; NULL: px_net_plane_name's. */
    const char (*plane_names)[PX_NET_NAME_MAX];
    uint32_t nnodes;
    const px_netshape *shape;
    /* Node `node`'s coordinate in `view` into out; returns dims. */
    unsigned (*coord)(void *ctx, uint32_t node, pmix_coord_view_t view,
                      uint32_t out[PX_NET_MAX_DIMS]);
    const char *(*host)(void *ctx, uint32_t node); /* PMIX_HOSTNAME */
    /* The name of node's NIC on `plane`, and the host (endpoint) it is. */
    void (*nic_name)(void *ctx, uint32_t node, unsigned plane, char *buf, size_t len);
    void (*nic_host)(void *ctx, uint32_t node, unsigned plane, char *buf, size_t len);
    void *ctx;
} px_netinfo;

/* "plane0", "plane1": the planes' names. */
void px_net_plane_name(unsigned plane, char *buf, size_t len);
/* Append the keys every node registers alike: PMIX_NETWORK_PLANE, DIMS and
 * SHAPE (each plane and view as PMIX_QUALIFIED_VALUE entries) and, with
 * `all_nics`, PMIX_NETWORK_NIC of the job. On failure `out` may hold some
 * of them; the caller frees it. */
pmix_status_t px_netinfo_common(const px_netinfo *ni, bool all_nics, px_ivec *out);
/* Append a PMIX_NODE_INFO_ARRAY for `node`: PMIX_NODEID, PMIX_HOSTNAME,
 * PMIX_NETWORK_COORDINATE (per plane, view and NIC), PMIX_NETWORK_NIC and
 * PMIX_NETWORK_ENDPT. */
pmix_status_t px_netinfo_node(const px_netinfo *ni, uint32_t node, px_ivec *out);

#endif
