/*
 * coords.c - network coordinates of the generated topologies, their
 * registration with the servers, and hierarchical groups from them.
 *
 * Coordinates depend only on the topology, its SimGrid parameters and the
 * node id (docs/simulation.md gives the table); every plane is a copy of
 * the same topology, so a node has the same coordinate on each plane, one
 * per NIC (one NIC per node per plane):
 *
 *   crossbar   logical (node)                 physical the same
 *   fattree    logical (leaf switch, port)    physical the same (the
 *              for two levels; one digit per  cabling is the addressing)
 *              level, top first, in general
 *   torus      logical (x, y, z), x fastest   physical the same
 *   dragonfly  logical (group, router, port)  physical (group, chassis,
 *              router = chassis x routers +   blade, port)
 *              blade
 *
 * What the servers are given (the coordinates chapter's keys; values per
 * plane and view are PMIX_QUALIFIED_VALUE entries, which PMIx_Get selects
 * with PMIX_NETWORK_PLANE and PMIX_NETWORK_VIEW):
 *   job:  PMIX_NETWORK_PLANE (the planes' names), PMIX_NETWORK_DIMS and
 *         PMIX_NETWORK_SHAPE (of every plane, or of one; logical unless a
 *         view is asked for), PMIX_NETWORK_NIC (every NIC of every plane,
 *         or of one: only when every node gets every process's data);
 *   node: PMIX_NETWORK_COORDINATE (the node's NICs' coordinates, one per
 *         plane, logical unless asked), PMIX_NETWORK_NIC (its NICs) and
 *         PMIX_NETWORK_ENDPT (the NICs' SimGrid hosts, strings);
 * each process finds its node's keys through its PMIX_NODEID. A node gets
 * its own node and processes, and every node and process up to
 * SIM_NET_PEERS_MAX_NODES nodes and SIM_NET_PEERS_MAX_PROCS processes.
 */
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"

#define FABRIC "pmixsim"

/* ---- shapes ---- */

/* Parse "a,b,c" into v[]: returns the count, or -1. */
static int parse_list(const char *s, uint32_t *v, int max)
{
    int n = 0;
    char *end;

    for (;;) {
        unsigned long x = strtoul(s, &end, 10);
        if (end == s || x == 0 || x > UINT32_MAX || n == max)
            return -1;
        v[n++] = (uint32_t)x;
        if (*end != ',')
            return *end == '\0' || *end == ';' ? n : -1;
        s = end + 1;
    }
}

static uint64_t product(const uint32_t *v, unsigned n)
{
    uint64_t p = 1;

    for (unsigned i = 0; i < n; i++)
        p *= v[i];
    return p;
}

int sim_shape_make(const sim_opts *o, uint32_t nnodes, const char *params, sim_shape *s, char *err,
                   size_t errlen)
{
    uint32_t v[8];
    int n;

    memset(s, 0, sizeof(*s));
    s->strides[s->nstrides++] = 1;
    switch (o->topology) {
    case TOPO_CROSSBAR:
        s->ldims = s->pdims = 1;
        s->lsize[0] = s->psize[0] = nnodes;
        s->gdims = 0;
        return 0;
    case TOPO_FATTREE: {
        /* "levels;down,...;up,...;count,...": node i sits under leaf
         * switch i / down[0]; one digit per level, port fastest. */
        const char *semi = strchr(params, ';');
        uint32_t levels;
        if (semi == NULL || parse_list(params, &levels, 1) != 1 || levels > SIM_MAX_DIMS ||
            (n = parse_list(semi + 1, v, 8)) != (int)levels) {
            snprintf(err, errlen,
                     "fat tree parameters '%s': expected LEVELS;DOWN,...;UP,...;"
                     "COUNT,... with at most %d levels",
                     params, SIM_MAX_DIMS);
            return -1;
        }
        s->ldims = s->pdims = levels;
        for (unsigned k = 0; k < levels; k++)
            s->lsize[k] = s->psize[k] = v[levels - 1 - k];
        s->gdims = levels - 1;
        break;
    }
    case TOPO_TORUS:
        n = parse_list(params, v, SIM_MAX_DIMS);
        if (n < 1) {
            snprintf(err, errlen, "torus parameters '%s': expected up to %d sizes X,Y,Z", params,
                     SIM_MAX_DIMS);
            return -1;
        }
        s->ldims = s->pdims = (unsigned)n;
        s->torus = true;
        s->nstrides = 0;
        for (int k = 0; k < n; k++) {
            s->lsize[k] = s->psize[k] = v[k];
            s->strides[s->nstrides++] = (size_t)product(v, (unsigned)k);
        }
        s->gdims = (unsigned)n - 1; /* a line along x: the nodes sharing (y, z) */
        break;
    case TOPO_DRAGONFLY: {
        /* "groups,links;chassis,links;routers,links;nodes" */
        uint32_t g[2], c[2], r[2], nd;
        const char *p1 = strchr(params, ';'), *p2 = p1 ? strchr(p1 + 1, ';') : NULL;
        const char *p3 = p2 ? strchr(p2 + 1, ';') : NULL;
        if (p3 == NULL || parse_list(params, g, 2) != 2 || parse_list(p1 + 1, c, 2) != 2 ||
            parse_list(p2 + 1, r, 2) != 2 || parse_list(p3 + 1, &nd, 1) != 1) {
            snprintf(err, errlen, "dragonfly parameters '%s': expected G,L;C,L;R,L;N", params);
            return -1;
        }
        s->ldims = 3;
        s->lsize[0] = g[0];
        s->lsize[1] = c[0] * r[0];
        s->lsize[2] = nd;
        s->pdims = 4;
        s->psize[0] = g[0];
        s->psize[1] = c[0];
        s->psize[2] = r[0];
        s->psize[3] = nd;
        s->gdims = 1;
        break;
    }
    default: snprintf(err, errlen, "no coordinates for this topology"); return -1;
    }
    if (product(s->lsize, s->ldims) < nnodes) {
        snprintf(err, errlen, "the %s parameters '%s' hold %llu nodes, fewer than %u",
                 sim_topo_name(o->topology), params,
                 (unsigned long long)product(s->lsize, s->ldims), nnodes);
        return -1;
    }
    return 0;
}

/* Mixed-radix digits of `node`, the last dimension fastest. */
static void digits_last_fastest(uint32_t node, const uint32_t *size, unsigned dims, uint32_t *out)
{
    for (unsigned k = dims; k-- > 0;) {
        out[k] = node % size[k];
        node /= size[k];
    }
}

unsigned sim_coord_of(const sim_shape *s, uint32_t node, pmix_coord_view_t view,
                      uint32_t out[SIM_MAX_DIMS])
{
    bool phys = view == PMIX_COORD_PHYSICAL_VIEW;

    if (s->torus) {
        for (unsigned k = 0; k < s->ldims; k++) {
            out[k] = node % s->lsize[k];
            node /= s->lsize[k];
        }
        return s->ldims;
    }
    if (phys) {
        digits_last_fastest(node, s->psize, s->pdims, out);
        return s->pdims;
    }
    digits_last_fastest(node, s->lsize, s->ldims, out);
    return s->ldims;
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

/* The registration is built in place: values are made once and moved into
 * a growing info array (no PMIx_Info_list, whose adds, conversions and
 * nesting copied every value three or four times: a tenth of a 16,384-node
 * run went there). */
/* Info arrays are built in the host core's px_ivec (px_hostcore.h). */
typedef px_ivec ivec;

/* Move `a`'s entries into `out` as an info data array; `a` is empty after. */
static pmix_status_t ivec_move(ivec *a, pmix_value_t *out)
{
    pmix_data_array_t *da = malloc(sizeof(*da));

    if (da == NULL)
        return PMIX_ERR_NOMEM;
    da->type = PMIX_INFO;
    da->size = a->n;
    da->array = a->v;
    out->type = PMIX_DATA_ARRAY;
    out->data.darray = da;
    a->v = NULL;
    a->n = a->cap = 0;
    return PMIX_SUCCESS;
}

/* Move `val` to `list` under `key`, qualified by `plane` (< 0: none), `nic`
 * (NULL: none) and `view` (0: none) as a PMIX_QUALIFIED_VALUE when any is
 * given. `val` is left empty (PMIX_UNDEF) whatever the outcome. */
static pmix_status_t add_qn(ivec *list, const char *key, pmix_value_t *val, int plane,
                            const char *nic, pmix_coord_view_t view)
{
    ivec q = {0};
    pmix_info_t *e;
    pmix_status_t rc = PMIX_ERR_NOMEM;
    char name[32];

    if (plane < 0 && nic == NULL && view == PMIX_COORD_VIEW_UNDEF) {
        if ((e = px_ivec_next(list, key)) != NULL) {
            e->value = *val;
            val->type = PMIX_UNDEF;
            return PMIX_SUCCESS;
        }
        PMIx_Value_destruct(val);
        return rc;
    }
    if ((e = px_ivec_next(&q, key)) == NULL) {
        PMIx_Value_destruct(val);
        return rc;
    }
    e->value = *val;
    val->type = PMIX_UNDEF;
    if (plane >= 0) {
        sim_plane_name((unsigned)plane, name, sizeof(name));
        if ((e = px_ivec_next(&q, PMIX_NETWORK_PLANE)) == NULL)
            goto fail;
        PMIx_Value_load(&e->value, name, PMIX_STRING);
    }
    if (nic != NULL) {
        if ((e = px_ivec_next(&q, PMIX_NETWORK_NIC)) == NULL)
            goto fail;
        PMIx_Value_load(&e->value, nic, PMIX_STRING);
    }
    if (view != PMIX_COORD_VIEW_UNDEF) {
        if ((e = px_ivec_next(&q, PMIX_NETWORK_VIEW)) == NULL)
            goto fail;
        PMIx_Value_load(&e->value, &view, PMIX_UINT8);
    }
    if ((e = px_ivec_next(list, PMIX_QUALIFIED_VALUE)) == NULL)
        goto fail;
    if ((rc = ivec_move(&q, &e->value)) != PMIX_SUCCESS) {
        list->n--; /* the slot is empty */
        goto fail;
    }
    return PMIX_SUCCESS;
fail:
    px_ivec_free(&q);
    return rc;
}

/* The variants of a value: no qualifier (logical, every plane), each view
 * (every plane), each plane (logical), each plane and view. `make` fills
 * a value for (plane or -1, view). */
typedef pmix_status_t (*make_fn)(const sim_run *run, uint32_t node, int plane,
                                 pmix_coord_view_t view, pmix_value_t *out);

static pmix_status_t add_variants(const sim_run *run, uint32_t node, ivec *list, const char *key,
                                  make_fn make, bool by_view)
{
    static const pmix_coord_view_t views[] = {PMIX_COORD_VIEW_UNDEF, PMIX_COORD_LOGICAL_VIEW,
                                              PMIX_COORD_PHYSICAL_VIEW};
    pmix_status_t rc = PMIX_SUCCESS;

    for (int plane = -1; rc == PMIX_SUCCESS && plane < (int)run->opt.planes; plane++) {
        for (size_t v = 0; rc == PMIX_SUCCESS && v < (by_view ? 3u : 1u); v++) {
            pmix_value_t val;
            PMIx_Value_construct(&val);
            rc = make(run, node, plane, views[v], &val);
            if (rc == PMIX_SUCCESS)
                rc = add_qn(list, key, &val, plane, NULL, views[v]);
            else
                PMIx_Value_destruct(&val);
        }
    }
    return rc;
}

static pmix_status_t darray(pmix_value_t *out, pmix_data_type_t type, size_t n)
{
    out->type = PMIX_DATA_ARRAY;
    out->data.darray = PMIx_Data_array_create(n, type);
    return out->data.darray != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

/* The planes a variant covers. */
static unsigned first_plane(int plane)
{
    return plane < 0 ? 0 : (unsigned)plane;
}

static unsigned end_plane(const sim_run *run, int plane)
{
    return plane < 0 ? run->opt.planes : (unsigned)plane + 1;
}

static pmix_status_t make_coord(const sim_run *run, uint32_t node, int plane,
                                pmix_coord_view_t view, pmix_value_t *out)
{
    unsigned a = first_plane(plane), b = end_plane(run, plane);
    pmix_coord_t *c;
    char name[32];
    pmix_status_t rc = darray(out, PMIX_COORD, b - a);

    if (rc != PMIX_SUCCESS)
        return rc;
    c = out->data.darray->array;
    if (view == PMIX_COORD_VIEW_UNDEF)
        view = PMIX_COORD_LOGICAL_VIEW;
    for (unsigned p = a; p < b; p++, c++) {
        uint32_t v[SIM_MAX_DIMS];
        c->view = view;
        c->dims = sim_coord_of(&run->net->shape, node, view, v);
        sim_plane_name(p, name, sizeof(name));
        c->fabric = strdup(FABRIC);
        c->plane = strdup(name);
        c->coord = malloc(c->dims * sizeof(uint32_t));
        if (c->fabric == NULL || c->plane == NULL || c->coord == NULL)
            return PMIX_ERR_NOMEM;
        memcpy(c->coord, v, c->dims * sizeof(uint32_t));
    }
    return PMIX_SUCCESS;
}

/* Strings per plane: the node's NIC (`host` false) or its NIC's host. */
static pmix_status_t make_strings(const sim_run *run, uint32_t node, int plane, bool host,
                                  pmix_value_t *out)
{
    unsigned a = first_plane(plane), b = end_plane(run, plane);
    pmix_status_t rc = darray(out, PMIX_STRING, b - a);
    char **s, name[64];

    if (rc != PMIX_SUCCESS)
        return rc;
    s = out->data.darray->array;
    for (unsigned p = a; p < b; p++, s++) {
        if (host)
            sim_nic_host(node, p, name, sizeof(name));
        else
            sim_nic_name(node, p, name, sizeof(name));
        if ((*s = strdup(name)) == NULL)
            return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t make_endpt(const sim_run *run, uint32_t node, int plane,
                                pmix_coord_view_t view, pmix_value_t *out)
{
    return make_strings(run, node, plane, true, out);
}

/* A process's NICs: with a plane, that plane's NIC id; without, one array
 * per plane: the plane's name, then the NIC's id (the chapter's form). */
static pmix_status_t make_node_nic(const sim_run *run, uint32_t node, int plane,
                                   pmix_coord_view_t view, pmix_value_t *out)
{
    pmix_data_array_t *pa;
    pmix_status_t rc;

    if (plane >= 0)
        return make_strings(run, node, plane, false, out);
    if ((rc = darray(out, PMIX_DATA_ARRAY, run->opt.planes)) != PMIX_SUCCESS)
        return rc;
    pa = out->data.darray->array;
    for (unsigned p = 0; p < run->opt.planes; p++) {
        char **s, name[64];
        pa[p].type = PMIX_STRING;
        pa[p].size = 2;
        pa[p].array = s = calloc(2, sizeof(char *));
        if (s == NULL)
            return PMIX_ERR_NOMEM;
        sim_plane_name(p, name, sizeof(name));
        s[0] = strdup(name);
        sim_nic_name(node, p, name, sizeof(name));
        s[1] = strdup(name);
        if (s[0] == NULL || s[1] == NULL)
            return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

/* Every NIC of a plane (with a plane), or per plane its name then its
 * NICs. */
static pmix_status_t make_job_nic(const sim_run *run, uint32_t node, int plane,
                                  pmix_coord_view_t view, pmix_value_t *out)
{
    unsigned a = first_plane(plane), b = end_plane(run, plane);
    pmix_status_t rc;

    if (plane < 0) {
        pmix_data_array_t *pa;
        if ((rc = darray(out, PMIX_DATA_ARRAY, b - a)) != PMIX_SUCCESS)
            return rc;
        pa = out->data.darray->array;
        for (unsigned p = a; p < b; p++) {
            char **s = calloc((size_t)run->nnodes + 1, sizeof(char *)), name[64];
            pa[p].type = PMIX_STRING;
            pa[p].size = (size_t)run->nnodes + 1;
            pa[p].array = s;
            if (s == NULL)
                return PMIX_ERR_NOMEM;
            sim_plane_name(p, name, sizeof(name));
            if ((s[0] = strdup(name)) == NULL)
                return PMIX_ERR_NOMEM;
            for (uint32_t i = 0; i < run->nnodes; i++) {
                sim_nic_name(i, p, name, sizeof(name));
                if ((s[i + 1] = strdup(name)) == NULL)
                    return PMIX_ERR_NOMEM;
            }
        }
        return PMIX_SUCCESS;
    }
    if ((rc = darray(out, PMIX_STRING, run->nnodes)) != PMIX_SUCCESS)
        return rc;
    for (uint32_t i = 0; i < run->nnodes; i++) {
        char name[64];
        sim_nic_name(i, (unsigned)plane, name, sizeof(name));
        if ((((char **)out->data.darray->array)[i] = strdup(name)) == NULL)
            return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t make_dims(const sim_run *run, uint32_t node, int plane, pmix_coord_view_t view,
                               pmix_value_t *out)
{
    const sim_shape *s = &run->net->shape;
    uint32_t d = view == PMIX_COORD_PHYSICAL_VIEW ? s->pdims : s->ldims;
    pmix_status_t rc;

    if (plane >= 0) {
        out->type = PMIX_UINT32;
        out->data.uint32 = d;
        return PMIX_SUCCESS;
    }
    if ((rc = darray(out, PMIX_UINT32, run->opt.planes)) != PMIX_SUCCESS)
        return rc;
    for (unsigned p = 0; p < run->opt.planes; p++)
        ((uint32_t *)out->data.darray->array)[p] = d;
    return PMIX_SUCCESS;
}

static pmix_status_t shape_array(const sim_run *run, pmix_coord_view_t view, pmix_data_array_t *da)
{
    const sim_shape *s = &run->net->shape;
    bool phys = view == PMIX_COORD_PHYSICAL_VIEW;
    unsigned d = phys ? s->pdims : s->ldims;

    da->type = PMIX_UINT32;
    da->size = d;
    da->array = malloc(d * sizeof(uint32_t));
    if (da->array == NULL)
        return PMIX_ERR_NOMEM;
    memcpy(da->array, phys ? s->psize : s->lsize, d * sizeof(uint32_t));
    return PMIX_SUCCESS;
}

static pmix_status_t make_shape(const sim_run *run, uint32_t node, int plane,
                                pmix_coord_view_t view, pmix_value_t *out)
{
    pmix_status_t rc;

    if (plane >= 0) {
        out->type = PMIX_DATA_ARRAY;
        out->data.darray = calloc(1, sizeof(pmix_data_array_t));
        if (out->data.darray == NULL)
            return PMIX_ERR_NOMEM;
        return shape_array(run, view, out->data.darray);
    }
    if ((rc = darray(out, PMIX_DATA_ARRAY, run->opt.planes)) != PMIX_SUCCESS)
        return rc;
    for (unsigned p = 0; p < run->opt.planes; p++)
        if ((rc = shape_array(run, view, &((pmix_data_array_t *)out->data.darray->array)[p])) !=
            PMIX_SUCCESS)
            return rc;
    return PMIX_SUCCESS;
}

static pmix_status_t add_node(const sim_run *run, uint32_t node, ivec *top)
{
    ivec nd = {0};
    pmix_info_t *e;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if ((e = px_ivec_next(&nd, PMIX_NODEID)) != NULL) {
        PMIx_Value_load(&e->value, &node, PMIX_UINT32);
        if ((e = px_ivec_next(&nd, PMIX_HOSTNAME)) != NULL) {
            PMIx_Value_load(&e->value, run->nodes[node].host, PMIX_STRING);
            rc = PMIX_SUCCESS;
        }
    }
    if (rc == PMIX_SUCCESS)
        rc = add_variants(run, node, &nd, PMIX_NETWORK_COORDINATE, make_coord, true);
    /* one NIC's coordinate, asked for with PMIX_NETWORK_NIC (and a view) */
    for (unsigned p = 0; rc == PMIX_SUCCESS && p < run->opt.planes; p++) {
        static const pmix_coord_view_t views[] = {PMIX_COORD_VIEW_UNDEF, PMIX_COORD_LOGICAL_VIEW,
                                                  PMIX_COORD_PHYSICAL_VIEW};
        char nic[64];
        sim_nic_name(node, p, nic, sizeof(nic));
        for (size_t v = 0; rc == PMIX_SUCCESS && v < 3; v++) {
            pmix_value_t val;
            PMIx_Value_construct(&val);
            rc = make_coord(run, node, (int)p, views[v], &val);
            if (rc == PMIX_SUCCESS)
                rc = add_qn(&nd, PMIX_NETWORK_COORDINATE, &val, -1, nic, views[v]);
            else
                PMIx_Value_destruct(&val);
        }
    }
    if (rc == PMIX_SUCCESS)
        rc = add_variants(run, node, &nd, PMIX_NETWORK_NIC, make_node_nic, false);
    if (rc == PMIX_SUCCESS)
        rc = add_variants(run, node, &nd, PMIX_NETWORK_ENDPT, make_endpt, false);
    if (rc == PMIX_SUCCESS)
        rc = (e = px_ivec_next(top, PMIX_NODE_INFO_ARRAY)) != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS && (rc = ivec_move(&nd, &e->value)) != PMIX_SUCCESS)
        top->n--; /* the slot is empty */
    px_ivec_free(&nd);
    return rc;
}

/* PMIX_PROC_DATA {rank, node id} for a process of another node. */
static pmix_status_t add_peer(pmix_rank_t rank, uint32_t node, ivec *top)
{
    ivec pd = {0};
    pmix_info_t *e;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if ((e = px_ivec_next(&pd, PMIX_RANK)) == NULL)
        return rc;
    PMIx_Value_load(&e->value, &rank, PMIX_PROC_RANK);
    if ((e = px_ivec_next(&pd, PMIX_NODEID)) != NULL) {
        PMIx_Value_load(&e->value, &node, PMIX_UINT32);
        if ((e = px_ivec_next(top, PMIX_PROC_DATA)) != NULL &&
            (rc = ivec_move(&pd, &e->value)) != PMIX_SUCCESS)
            top->n--;
    }
    px_ivec_free(&pd);
    return rc;
}

/* The keys every node registers alike: the planes, their dimensions and
 * shape, and in a small job every NIC. */
static pmix_status_t add_common(const sim_run *run, bool peers, ivec *top)
{
    pmix_info_t *e;
    pmix_status_t rc = PMIX_SUCCESS;

    if ((e = px_ivec_next(top, PMIX_NETWORK_PLANE)) == NULL)
        return PMIX_ERR_NOMEM;
    if ((e->value.data.darray = PMIx_Data_array_create(run->opt.planes, PMIX_STRING)) != NULL)
        e->value.type = PMIX_DATA_ARRAY;
    else
        rc = PMIX_ERR_NOMEM;
    for (unsigned p = 0; rc == PMIX_SUCCESS && p < run->opt.planes; p++) {
        char name[32];
        sim_plane_name(p, name, sizeof(name));
        if ((((char **)e->value.data.darray->array)[p] = strdup(name)) == NULL)
            rc = PMIX_ERR_NOMEM;
    }
    if (rc == PMIX_SUCCESS)
        rc = add_variants(run, 0, top, PMIX_NETWORK_DIMS, make_dims, true);
    if (rc == PMIX_SUCCESS)
        rc = add_variants(run, 0, top, PMIX_NETWORK_SHAPE, make_shape, true);
    if (rc == PMIX_SUCCESS && peers)
        rc = add_variants(run, 0, top, PMIX_NETWORK_NIC, make_job_nic, false);
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
        if ((rc = add_common(run, peers, &c)) != PMIX_SUCCESS) {
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
        rc = add_node(run, i, &top);
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
    if (count == run->nnodes)
        members = NULL;
    if (members == NULL && net->all_groups != NULL)
        return net->all_groups;
    c = calloc(count, sizeof(*c));
    keys = calloc((size_t)count * SIM_MAX_DIMS, sizeof(*keys));
    if (c == NULL || keys == NULL) {
        free(c);
        free(keys);
        return NULL;
    }
    for (uint32_t m = 0; m < count; m++) {
        uint32_t node = members != NULL ? members[m] : m;
        dims = sim_group_key(&net->shape, node, keys + (size_t)m * SIM_MAX_DIMS);
        c[m].view = PMIX_COORD_LOGICAL_VIEW;
        c[m].coord = keys + (size_t)m * SIM_MAX_DIMS;
        c[m].dims = dims;
    }
    g = px_coll_groups_from_coords(count, c, dims);
    /* A fat tree's leaf switches and a dragonfly's groups keep their
     * traffic off the links between groups, and are where hier wins
     * (docs/collectives.md, "Where hierarchy wins"): auto may pick it
     * there. A torus line is a ring inside the mesh, where it loses. */
    px_coll_groups_set_switched(g, run->opt.topology == TOPO_FATTREE ||
                                       run->opt.topology == TOPO_DRAGONFLY);
    free(c);
    free(keys);
    if (members == NULL)
        net->all_groups = g;
    else
        *owned = g;
    return g;
}
