/*
 * topo.c - SimGrid platforms generated from pmixsim's parameters.
 *
 * Every generated platform is one SimGrid <cluster> whose hosts are
 * node-0 .. node-(N-1), each with its private link (SPLITDUPLEX: an up and
 * a down direction, latency --lat, bandwidth --bw) and a loopback link
 * (--loopback-lat, --loopback-bw) that carries the traffic between the
 * node's processes and its server. The topology decides how private links
 * are connected:
 *
 *   crossbar   FLAT: every pair of nodes through their two private links
 *              and nothing else (no backbone), so the network itself never
 *              contends: alpha = 2 x lat between any two nodes;
 *   fattree    FAT_TREE, two levels: leaf switches of radix/2 nodes, each
 *              with (radix/2)/taper uplinks (taper 1 = full bisection);
 *   torus      TORUS, three dimensions as close to a cube as N allows;
 *   dragonfly  DRAGONFLY: 4 nodes per router, 4 routers per chassis,
 *              2 chassis per group, N/32 groups.
 *
 * --topo-params gives SimGrid's topo_parameters string directly instead.
 *
 * With --planes 2 the platform holds one such cluster per plane (plane0,
 * plane1) inside a zone that never routes between them; node i's NIC on
 * plane p is host node-i (p = 0) or node-i.pP. See planes.c.
 * A cluster is described in one XML element whatever its size, so writing
 * and parsing it costs nothing next to building the routing.
 */
#include <stdio.h>
#include <string.h>

#include "pmixsim.h"

const char *sim_topo_name(sim_topology t)
{
    switch (t) {
    case TOPO_CROSSBAR: return "crossbar";
    case TOPO_FATTREE: return "fattree";
    case TOPO_TORUS: return "torus";
    case TOPO_DRAGONFLY: return "dragonfly";
    case TOPO_FILE: return "file";
    }
    return "?";
}

static int fattree_params(const sim_opts *o, char *buf, size_t len, char *err, size_t errlen)
{
    unsigned down = o->fattree_radix / 2, up;

    if (down < 1 || o->nodes % down != 0) {
        snprintf(err, errlen,
                 "fat tree: --nodes (%u) must be a multiple of radix/2 (%u); "
                 "change --radix or give --topo-params",
                 o->nodes, down);
        return -1;
    }
    up = down / (o->fattree_taper ? o->fattree_taper : 1);
    if (up < 1)
        up = 1;
    if (o->nodes / down == 1) {
        snprintf(buf, len, "1;%u;1;1", down);
        return 0;
    }
    snprintf(buf, len, "2;%u,%u;1,%u;1,1", down, o->nodes / down, up);
    return 0;
}

static void torus_params(uint32_t n, char *buf, size_t len)
{
    uint32_t best[3] = {n, 1, 1};
    uint32_t spread = n;

    for (uint32_t x = 1; x * x * x <= n; x++) {
        if (n % x != 0)
            continue;
        for (uint32_t y = x; x * y * y <= n; y++) {
            if ((n / x) % y != 0)
                continue;
            uint32_t z = n / x / y;
            if (z - x < spread) {
                spread = z - x;
                best[0] = x;
                best[1] = y;
                best[2] = z;
            }
        }
    }
    snprintf(buf, len, "%u,%u,%u", best[2], best[1], best[0]);
}

/* SimGrid 3.32's dragonfly routes minimally through router b = g of the
 * source's chassis to reach group g (DragonflyZone::get_local_route), so
 * it needs at most as many groups as routers per chassis; with more it
 * reads past a router's link table and crashes. Returns 0 when `params`
 * ("G,L;C,L;R,L;N") respects that, or -1 with the reason in err. A
 * malformed string is left to SimGrid's parser, which names the field. */
static int dragonfly_check(const char *params, char *err, size_t errlen)
{
    unsigned g, c, r, n;
    if (sscanf(params, "%u,%*u;%u,%*u;%u,%*u;%u", &g, &c, &r, &n) != 4 || g <= r)
        return 0;
    snprintf(err, errlen,
             "dragonfly parameters '%s': %u groups but %u routers per chassis; SimGrid's "
             "dragonfly routing needs at most as many groups as routers per chassis "
             "(raise R or lower G)",
             params, g, r);
    return -1;
}

/* The default dragonfly for n nodes: 4 nodes per router, 2 chassis per
 * group, and the fewest routers per chassis R >= 4 that divide the nodes
 * into G = n / 8R groups with G <= R (dragonfly_check). Up to 128 nodes
 * that is 4 routers and groups of 32 nodes; 1,024 nodes: 16 routers, 8
 * groups of 128; 16,384 nodes: 64 routers, 32 groups of 512. */
static int dragonfly_params(uint32_t n, char *buf, size_t len, char *err, size_t errlen)
{
    for (uint32_t r = 4; (uint64_t)8 * r <= n; r++) {
        if (n % (8 * r) == 0 && n / (8 * r) <= r) {
            snprintf(buf, len, "%u,1;2,1;%u,1;4", n / (8 * r), r);
            return 0;
        }
    }
    snprintf(err, errlen,
             "dragonfly: no default shape for --nodes %u: the default needs 8 R G nodes "
             "(4 per router, R >= 4 routers per chassis, 2 chassis, G <= R groups), e.g. "
             "32, 64, 128, 160, 256, 1024, 4096; or give --topo-params G,L;C,L;R,L;N",
             n);
    return -1;
}

int sim_topo_params(const sim_opts *o, char *params, size_t len, char *err, size_t errlen)
{
    params[0] = '\0';
    if (o->topo_params != NULL)
        snprintf(params, len, "%s", o->topo_params);
    else if (o->topology == TOPO_FATTREE && fattree_params(o, params, len, err, errlen) != 0)
        return -1;
    else if (o->topology == TOPO_TORUS)
        torus_params(o->nodes, params, len);
    else if (o->topology == TOPO_DRAGONFLY &&
             dragonfly_params(o->nodes, params, len, err, errlen) != 0)
        return -1;
    if (o->topology == TOPO_DRAGONFLY && dragonfly_check(params, err, errlen) != 0)
        return -1;
    return 0;
}

/* One plane: a cluster named `id` whose hosts are node-0<suffix> ... */
static void write_cluster(FILE *f, const sim_opts *o, const char *id, const char *suffix,
                          const char *topo, const char *params, const char *indent)
{
    fprintf(f,
            "%s<cluster id=\"%s\" prefix=\"node-\" suffix=\"%s\" radical=\"0-%u\" "
            "speed=\"1Gf\" bw=\"%.17gBps\" lat=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\" "
            "loopback_bw=\"%.17gBps\" loopback_lat=\"%.17gs\" topology=\"%s\"",
            indent, id, suffix, o->nodes - 1, o->bw, o->lat, o->lo_bw, o->lo_lat, topo);
    if (params[0] != '\0')
        fprintf(f, " topo_parameters=\"%s\"", params);
    fprintf(f, "/>\n");
}

int sim_topo_write(const sim_opts *o, const char *path, char *err, size_t errlen)
{
    char params[256] = "";
    const char *topo;
    FILE *f;

    switch (o->topology) {
    case TOPO_CROSSBAR: topo = "FLAT"; break;
    case TOPO_FATTREE: topo = "FAT_TREE"; break;
    case TOPO_TORUS: topo = "TORUS"; break;
    case TOPO_DRAGONFLY: topo = "DRAGONFLY"; break;
    default: snprintf(err, errlen, "no generated platform for this topology"); return -1;
    }
    if (sim_topo_params(o, params, sizeof(params), err, errlen) != 0)
        return -1;
    f = fopen(path, "w");
    if (f == NULL) {
        snprintf(err, errlen, "cannot write %s", path);
        return -1;
    }
    fprintf(f, "<?xml version='1.0'?>\n"
               "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
               "<platform version=\"4.1\">\n");
    if (o->planes < 2) {
        write_cluster(f, o, "pmixsim", "", topo, params, "  ");
    } else {
        /* One cluster per plane under a zone that never routes between
         * them: plane p's hosts are node-i (p = 0) and node-i.pP. */
        fprintf(f, "  <zone id=\"pmixsim\" routing=\"Full\">\n");
        for (unsigned p = 0; p < o->planes; p++) {
            char id[32], suffix[16] = "";
            snprintf(id, sizeof(id), "plane%u", p);
            if (p > 0)
                snprintf(suffix, sizeof(suffix), ".p%u", p);
            write_cluster(f, o, id, suffix, topo, params, "    ");
        }
        fprintf(f, "  </zone>\n");
    }
    fprintf(f, "</platform>\n");
    if (fclose(f) != 0) {
        snprintf(err, errlen, "cannot write %s", path);
        return -1;
    }
    return 0;
}
