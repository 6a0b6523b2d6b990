/*
 * nics.c - a node's NICs from hwloc's OS devices, and the planes they make
 * with a description's PlaneName= lines (px_netmap.h).
 *
 * A NIC is a PCI device (an OS device's parent) holding network or
 * OpenFabrics OS devices: an InfiniBand HCA shows both (ib0 and mlx5_0)
 * and is one NIC, named after its OpenFabrics device. OS devices without
 * a PCI parent (virtual ones, if hwloc keeps them) are a NIC each.
 *
 * The reader takes a topology its caller loaded (pmixd's, which it
 * uses for bindings too): px_nics_topology_prepare asks hwloc for the
 * OS devices before the load, with the PCI devices read from Linux's
 * sysfs rather than by hwloc's "pci" plugin (libpciaccess, which keeps
 * allocations to the end of the process and finds nothing in some
 * containers). The planes of a job whose nodes differ are made from
 * every node's NICs at once (px_netplanes_make_nodes).
 */
#include <stdio.h>
#include <string.h>

#include <hwloc.h>

#include "px_netmap.h"

typedef struct nic_seen {
    hwloc_obj_t parent; /* the PCI device, or the OS device itself */
    bool fabric;        /* it has an OpenFabrics device */
    char net[PX_NET_NAME_MAX], ofa[PX_NET_NAME_MAX];
} nic_seen;

void px_nics_topology_prepare(struct hwloc_topology *topo)
{
    /* network and OpenFabrics OS devices are among the important ones */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    /* Without the plugins that read devices through other libraries: on
     * Linux the PCI devices and their network and OpenFabrics children come
     * from sysfs all the same, and the "pci" plugin (libpciaccess) leaves
     * allocations behind when hwloc unloads it, which every sanitized
     * program then reports as a leak. A name hwloc does not know is fine. */
    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
}

void px_nics_from_topology(struct hwloc_topology *topo, px_nics *out)
{
    nic_seen seen[2 * PX_NET_MAX_PLANES];
    unsigned n = 0;
    bool any_fabric = false;

    memset(out, 0, sizeof(*out));
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_osdev(topo, o)) != NULL;) {
        hwloc_obj_osdev_type_t t = o->attr->osdev.type;
        hwloc_obj_t parent =
            o->parent != NULL && o->parent->type == HWLOC_OBJ_PCI_DEVICE ? o->parent : o;
        unsigned i = 0;

        if ((t != HWLOC_OBJ_OSDEV_NETWORK && t != HWLOC_OBJ_OSDEV_OPENFABRICS) || o->name == NULL)
            continue;
        while (i < n && seen[i].parent != parent)
            i++;
        if (i == n) {
            if (n == sizeof(seen) / sizeof(seen[0]))
                continue; /* more than this keeps: the first ones */
            memset(&seen[n], 0, sizeof(seen[n]));
            seen[n++].parent = parent;
        }
        if (t == HWLOC_OBJ_OSDEV_OPENFABRICS) {
            seen[i].fabric = any_fabric = true;
            snprintf(seen[i].ofa, sizeof(seen[i].ofa), "%s", o->name);
        } else {
            snprintf(seen[i].net, sizeof(seen[i].net), "%s", o->name);
        }
    }
    for (unsigned i = 0; i < n && out->n < PX_NET_MAX_PLANES; i++) {
        if (any_fabric && !seen[i].fabric)
            continue;
        if (seen[i].fabric) {
            snprintf(out->name[out->n], sizeof(out->name[0]), "%s", seen[i].ofa);
            snprintf(out->alias[out->n], sizeof(out->alias[0]), "%s", seen[i].net);
        } else {
            snprintf(out->name[out->n], sizeof(out->name[0]), "%s", seen[i].net);
        }
        out->n++;
    }
    out->fabric = any_fabric;
}

int px_nics_read(const char *xml, px_nics *out, char *err, size_t errlen)
{
    hwloc_topology_t topo;

    memset(out, 0, sizeof(*out));
    if (hwloc_topology_init(&topo) != 0) {
        snprintf(err, errlen, "hwloc: cannot start a topology");
        return -1;
    }
    px_nics_topology_prepare(topo);
    if ((xml != NULL && hwloc_topology_set_xml(topo, xml) != 0) || hwloc_topology_load(topo) != 0) {
        snprintf(err, errlen, "hwloc: cannot read %s", xml != NULL ? xml : "this machine");
        hwloc_topology_destroy(topo);
        return -1;
    }
    px_nics_from_topology(topo, out);
    hwloc_topology_destroy(topo);
    return 0;
}

/* Whether NIC k of `nics` is one of the comma-separated devices `list`. */
static bool nic_listed(const px_nics *nics, unsigned k, const char *list)
{
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        if ((strlen(nics->name[k]) == len && strncmp(nics->name[k], p, len) == 0) ||
            (nics->alias[k][0] != '\0' && strlen(nics->alias[k]) == len &&
             strncmp(nics->alias[k], p, len) == 0))
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

int px_netplanes_make(const px_netmap *m, const px_nics *nics, px_netplanes *out, char *err,
                      size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (m != NULL && m->nplanes > 0) {
        for (unsigned p = 0; p < m->nplanes; p++) {
            unsigned k = 0;
            if (m->plane_nics[p][0] == '\0') {
                /* no devices named: the node's NIC of the plane's rank
                 * (one plane: none is needed, the NIC is named after
                 * the node) */
                if (p >= nics->n && m->nplanes > 1) {
                    snprintf(err, errlen, "plane %s: the node has no NIC number %u (it has %u)",
                             m->plane[p], p + 1, nics->n);
                    return -1;
                }
                snprintf(out->name[p], sizeof(out->name[0]), "%s", m->plane[p]);
                snprintf(out->dev[p], sizeof(out->dev[0]), "%s", p < nics->n ? nics->name[p] : "");
                continue;
            }
            while (k < nics->n && !nic_listed(nics, k, m->plane_nics[p]))
                k++;
            if (k == nics->n) {
                size_t at = 0;
                char have[256] = "";
                for (unsigned i = 0; i < nics->n && at < sizeof(have); i++)
                    at += (size_t)snprintf(have + at, sizeof(have) - at, "%s%s", i ? ", " : "",
                                           nics->name[i]);
                snprintf(err, errlen, "plane %s: none of its NICs (%s) is among the node's (%s)",
                         m->plane[p], m->plane_nics[p], nics->n > 0 ? have : "none found");
                return -1;
            }
            snprintf(out->name[p], sizeof(out->name[0]), "%s", m->plane[p]);
            snprintf(out->dev[p], sizeof(out->dev[0]), "%s", nics->name[k]);
        }
        out->n = m->nplanes;
        return 0;
    }
    if (nics->fabric && nics->n >= 2) {
        for (unsigned p = 0; p < nics->n; p++) {
            px_net_plane_name(p, out->name[p], sizeof(out->name[0]));
            snprintf(out->dev[p], sizeof(out->dev[0]), "%s", nics->name[p]);
        }
        out->n = nics->n;
        return 0;
    }
    px_net_plane_name(0, out->name[0], sizeof(out->name[0]));
    out->n = 1;
    return 0;
}

int px_netplanes_make_nodes(const px_netmap *m, const px_nics *nics, uint32_t n, char *const *names,
                            px_netplanes *out, px_netdevs *devs, char *err, size_t errlen)
{
    px_netplanes one;
    bool all_fabric = n > 0;
    unsigned fewest = PX_NET_MAX_PLANES;

    memset(out, 0, sizeof(*out));
    memset(devs, 0, (size_t)n * sizeof(*devs));
    if (m != NULL && m->nplanes > 0) {
        for (uint32_t i = 0; i < n; i++) {
            char why[384];
            if (px_netplanes_make(m, &nics[i], &one, why, sizeof(why)) != 0) {
                snprintf(err, errlen, "node %s: %s", names[i], why);
                memset(out, 0, sizeof(*out));
                return -1;
            }
            memcpy(devs[i], one.dev, sizeof(devs[i]));
        }
        memcpy(out->name, one.name, sizeof(out->name));
        out->n = one.n;
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        all_fabric = all_fabric && nics[i].fabric;
        if (nics[i].n < fewest)
            fewest = nics[i].n;
    }
    if (all_fabric && fewest >= 2) {
        /* a plane is every node's p-th NIC; a node's extra NICs are not
         * on any plane */
        for (unsigned p = 0; p < fewest; p++)
            px_net_plane_name(p, out->name[p], sizeof(out->name[0]));
        for (uint32_t i = 0; i < n; i++)
            for (unsigned p = 0; p < fewest; p++)
                snprintf(devs[i][p], sizeof(devs[i][p]), "%s", nics[i].name[p]);
        out->n = fewest;
        return 0;
    }
    px_net_plane_name(0, out->name[0], sizeof(out->name[0]));
    out->n = 1;
    return 0;
}
