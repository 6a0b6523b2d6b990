/*
 * pmixrun_net.c - the network's shape on the socket host: where it comes
 * from, how it reaches the daemons, and the keys every process gets.
 *
 * pmixrun reads the description once (net_load): --topology FILE (Slurm's
 * topology.conf or a SimGrid platform file, px_netmap.h), else inside a
 * Slurm allocation what `scontrol show topology` prints, else nothing and
 * a flat one-switch default (net_fit) that PMIX_NETWORK_PLANE's
 * coordinates then describe: one switch, every node a port. It fits the
 * description to the job's nodes by name (node0.. or the hostfile's) or
 * in the description's order, and sends every node's coordinates to the
 * daemons in PD_JOB (net_write, net_read): a daemon on another machine
 * needs no copy of the file.
 *
 * Planes and NICs (net_node_nics, net_planes): every node reads its own
 * NICs (pmixd from the hwloc topology it loads for its bindings anyway,
 * and sends them to pmixrun in PD_NICS before its PD_HELLO; pmixrun alone
 * reads those of its machine), or those of the hwloc XML file that
 * PMIXLAB_NICS_XML names for it. pmixrun makes the job's planes from them
 * all with the description's PlaneName= lines (px_netplanes_make_nodes),
 * each a copy of the described network, and node N's NIC on a plane is
 * "N.DEV" ("node1.mlx5_0") with N's own device. Otherwise one plane
 * "plane0" and NICs "N.nic0".
 *
 * Each node's server is given the host core's keys (px_netinfo): the
 * planes, one NIC per node and plane whose endpoint is the node's name,
 * the coordinates in the logical and physical views; each
 * coordinate's fabric is the description's source (px_netmap.source),
 * which for the default says that no topology was given. The
 * hier groups of pmixd's fences come from the same map (pmixd_coll.c).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmixrun.h"
#include "tcplink.h"

/* The output of `scontrol show topology`, or NULL (no Slurm, no topology
 * plugin, or an empty answer). */
static char *scontrol_topology(void)
{
    FILE *p = popen("scontrol show topology 2>/dev/null", "r");
    char *text = NULL, buf[4096];
    size_t len = 0, n;
    FILE *mem;

    if (p == NULL)
        return NULL;
    if ((mem = open_memstream(&text, &len)) == NULL) {
        pclose(p);
        return NULL;
    }
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        fwrite(buf, 1, n, mem);
    int status = pclose(p);
    if (fclose(mem) != 0 || status != 0 || len == 0 || strstr(text, "SwitchName=") == NULL) {
        free(text);
        return NULL;
    }
    return text;
}

int net_load(job *j, const char *path, char *err, size_t errlen)
{
    px_netmap_free(&j->net);
    j->net_loaded = false;
    if (path != NULL) {
        if (px_netmap_load(path, &j->net, err, errlen) != 0)
            return -1;
        j->net_loaded = true;
        return 0;
    }
    if (getenv("SLURM_JOB_ID") != NULL) {
        char *text = scontrol_topology();
        if (text != NULL) {
            /* Slurm's own answer: a failure to read it is not the user's
             * error, and the flat default stands in (net_fit says so). */
            j->net_loaded =
                px_netmap_parse_slurm(text, "scontrol show topology", &j->net, err, errlen) == 0;
            if (!j->net_loaded)
                fprintf(stderr, "pmixrun: %s; the network is taken as one switch\n", err);
            free(text);
        }
    }
    return 0;
}

/* PMIXLAB_NICS_XML's file for node `node` into buf, or NULL: unset. */
static const char *nics_xml(int node, char *buf, size_t len)
{
    const char *v = getenv("PMIXLAB_NICS_XML"), *p = v;

    if (v == NULL || *v == '\0')
        return NULL;
    for (int i = 0; i < node && strchr(p, ',') != NULL; i++)
        p = strchr(p, ',') + 1;
    snprintf(buf, len, "%.*s", (int)strcspn(p, ","), p);
    return buf;
}

int net_node_nics(job *j, int node, px_nics *out, char *err, size_t errlen)
{
    char buf[1024], why[256];
    const char *xml = nics_xml(node, buf, sizeof buf);

    memset(out, 0, sizeof *out);
    if (xml != NULL) {
        if (px_nics_read(xml, out, why, sizeof why) != 0) {
            snprintf(err, errlen, "PMIXLAB_NICS_XML=%s: %s", xml, why);
            return -1;
        }
        return 0;
    }
    if (j->topo == NULL) {
        /* the topology the bindings use (job_bindings), with its I/O
         * devices; unread, it is left for them to report */
        if (hwloc_topology_init(&j->topo) != 0) {
            j->topo = NULL;
            return 0;
        }
        px_nics_topology_prepare(j->topo);
        if (hwloc_topology_load(j->topo) != 0) {
            hwloc_topology_destroy(j->topo);
            j->topo = NULL;
            return 0;
        }
    }
    px_nics_from_topology(j->topo, out);
    return 0;
}

int net_planes(job *j, const px_nics *nics)
{
    char err[512];
    uint32_t n = (uint32_t)(j->nnodes > 0 ? j->nnodes : 1);
    char **names = calloc(n, sizeof *names);

    free(j->nic_devs);
    j->nic_devs = calloc(n, sizeof *j->nic_devs);
    if (names == NULL || j->nic_devs == NULL) {
        free(names);
        fprintf(stderr, "pmixrun: out of memory\n");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        names[i] = (char *)job_node_name(j, (int)i);
    int rc =
        px_netplanes_make_nodes(&j->net, nics, n, names, &j->planes, j->nic_devs, err, sizeof err);
    free(names);
    if (rc != 0)
        fprintf(stderr, "pmixrun: %s: %s\n", j->net.source, err);
    return rc;
}

int net_fit(job *j)
{
    char err[512];
    uint32_t n = (uint32_t)(j->nnodes > 0 ? j->nnodes : 1);
    char **names = calloc(n, sizeof *names);

    if (names == NULL) {
        fprintf(stderr, "pmixrun: out of memory\n");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        names[i] = (char *)job_node_name(j, (int)i);
    int rc = j->net_loaded ? px_netmap_fit(&j->net, names, n, err, sizeof err)
                           : px_netmap_flat(&j->net, n);
    free(names);
    if (rc != 0) {
        fprintf(stderr, "pmixrun: %s\n",
                j->net_loaded ? err : "out of memory while describing the network");
        return -1;
    }
    j->net_loaded = true;
    return 0;
}

void net_write(const job *j, tl_buf *b)
{
    const px_netmap *m = &j->net;
    const px_netshape *s = &m->shape;

    tl_put_u8(b, m->flat);
    tl_put_str(b, m->source);
    tl_put_u32(b, s->ldims);
    tl_put_u32(b, s->pdims);
    tl_put_u32(b, s->gdims);
    tl_put_u8(b, (uint8_t)(s->torus | s->switched << 1));
    for (unsigned k = 0; k < s->ldims; k++)
        tl_put_u32(b, s->lsize[k]);
    for (unsigned k = 0; k < s->pdims; k++)
        tl_put_u32(b, s->psize[k]);
    for (int i = 0; i < j->nnodes; i++) {
        uint32_t c[PX_NET_MAX_DIMS];
        unsigned d = px_netmap_coord(m, (uint32_t)i, PMIX_COORD_LOGICAL_VIEW, c);
        for (unsigned k = 0; k < d; k++)
            tl_put_u32(b, c[k]);
        d = px_netmap_coord(m, (uint32_t)i, PMIX_COORD_PHYSICAL_VIEW, c);
        for (unsigned k = 0; k < d; k++)
            tl_put_u32(b, c[k]);
    }
    /* the planes' names, then every node's NIC device on each */
    tl_put_u32(b, j->planes.n);
    for (unsigned p = 0; p < j->planes.n; p++)
        tl_put_str(b, j->planes.name[p]);
    for (int i = 0; i < j->nnodes; i++)
        for (unsigned p = 0; p < j->planes.n; p++)
            tl_put_str(b, j->nic_devs != NULL ? j->nic_devs[i][p] : "");
}

/* A string of the frame into buf (len bytes with its NUL); false if it is
 * missing, too long or, unless `empty`, empty. */
static bool get_name(tl_reader *r, char *buf, size_t len, bool empty)
{
    char *v = tl_get_str(r);
    bool ok = v != NULL && (empty || *v != '\0') && strlen(v) < len;

    if (ok)
        snprintf(buf, len, "%s", v);
    free(v);
    return ok;
}

int net_read(job *j, tl_reader *r)
{
    px_netmap *m = &j->net;
    px_netshape *s = &m->shape;
    uint32_t n = (uint32_t)j->nnodes;

    px_netmap_free(m);
    m->flat = tl_get_u8(r) != 0;
    char *source = tl_get_str(r);
    snprintf(m->source, sizeof m->source, "%s", source != NULL ? source : "");
    free(source);
    s->ldims = tl_get_u32(r);
    s->pdims = tl_get_u32(r);
    s->gdims = tl_get_u32(r);
    uint8_t flags = tl_get_u8(r);
    s->torus = (flags & 1) != 0;
    s->switched = (flags & 2) != 0;
    if (r->bad || s->ldims < 1 || s->ldims > PX_NET_MAX_DIMS || s->pdims < 1 ||
        s->pdims > PX_NET_MAX_DIMS || s->gdims > s->ldims)
        return -1;
    for (unsigned k = 0; k < s->ldims; k++)
        s->lsize[k] = tl_get_u32(r);
    for (unsigned k = 0; k < s->pdims; k++)
        s->psize[k] = tl_get_u32(r);
    s->strides[0] = 1;
    s->nstrides = 1;
    m->lcoord = calloc((size_t)n * s->ldims, sizeof *m->lcoord);
    m->pcoord = calloc((size_t)n * s->pdims, sizeof *m->pcoord);
    if (m->lcoord == NULL || m->pcoord == NULL)
        return -1;
    for (uint32_t i = 0; i < n; i++) {
        for (unsigned k = 0; k < s->ldims; k++)
            m->lcoord[(size_t)i * s->ldims + k] = tl_get_u32(r);
        for (unsigned k = 0; k < s->pdims; k++)
            m->pcoord[(size_t)i * s->pdims + k] = tl_get_u32(r);
    }
    memset(&j->planes, 0, sizeof j->planes);
    uint32_t np = tl_get_u32(r);
    if (r->bad || np < 1 || np > PX_NET_MAX_PLANES)
        return -1;
    for (uint32_t p = 0; p < np; p++)
        if (!get_name(r, j->planes.name[p], sizeof j->planes.name[0], false))
            return -1;
    free(j->nic_devs);
    if ((j->nic_devs = calloc(n > 0 ? n : 1, sizeof *j->nic_devs)) == NULL)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t p = 0; p < np; p++)
            if (!get_name(r, j->nic_devs[i][p], sizeof j->nic_devs[i][p], true))
                return -1;
    j->planes.n = np;
    m->nnodes = m->njob = n;
    j->net_loaded = !r->bad;
    return r->bad ? -1 : 0;
}

/* ---- the keys ---- */

static unsigned ni_coord(void *ctx, uint32_t node, pmix_coord_view_t view,
                         uint32_t out[PX_NET_MAX_DIMS])
{
    return px_netmap_coord(&((job *)ctx)->net, node, view, out);
}

static const char *ni_host(void *ctx, uint32_t node)
{
    return job_node_name(ctx, (int)node);
}

static void ni_nic_name(void *ctx, uint32_t node, unsigned plane, char *buf, size_t len)
{
    const job *j = ctx;

    if (plane < j->planes.n && j->nic_devs != NULL && j->nic_devs[node][plane][0] != '\0')
        snprintf(buf, len, "%s.%s", job_node_name(j, (int)node), j->nic_devs[node][plane]);
    else
        snprintf(buf, len, "%s.nic%u", job_node_name(j, (int)node), plane);
}

static void ni_nic_host(void *ctx, uint32_t node, unsigned plane, char *buf, size_t len)
{
    snprintf(buf, len, "%s", job_node_name(ctx, (int)node));
}

pmix_status_t net_keys(job *j, px_ivec *out)
{
    /* The coordinates' fabric names the description, or says that there
     * was none: "flat default: one switch, ..." */
    px_netinfo ni = {.fabric = j->net.source,
                     .planes = j->planes.n > 0 ? j->planes.n : 1,
                     .plane_names = j->planes.n > 0 ? j->planes.name : NULL,
                     .nnodes = (uint32_t)(j->nnodes > 0 ? j->nnodes : 1),
                     .shape = &j->net.shape,
                     .coord = ni_coord,
                     .host = ni_host,
                     .nic_name = ni_nic_name,
                     .nic_host = ni_nic_host,
                     .ctx = j};
    pmix_status_t rc;

    if (!j->net_loaded)
        return PMIX_SUCCESS;
    /* every node's keys: the socket host describes every node (describe_all) */
    rc = px_netinfo_common(&ni, true, out);
    for (uint32_t i = 0; rc == PMIX_SUCCESS && i < ni.nnodes; i++)
        rc = px_netinfo_node(&ni, i, out);
    return rc;
}
