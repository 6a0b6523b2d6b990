/*
 * netinfo.c - the PMIX_NETWORK_* keys of a host's network (px_netmap.h),
 * made once for pmixsim and the socket host alike.
 *
 * What a server is given (the coordinates chapter's keys; values per plane
 * and view are PMIX_QUALIFIED_VALUE entries, which PMIx_Get selects with
 * PMIX_NETWORK_PLANE and PMIX_NETWORK_VIEW):
 *   job:  PMIX_NETWORK_PLANE (the planes' names), PMIX_NETWORK_DIMS and
 *         PMIX_NETWORK_SHAPE (of every plane, or of one; logical unless a
 *         view is asked for), PMIX_NETWORK_NIC (every NIC of every plane,
 *         or of one: only when every node gets every process's data);
 *   node: PMIX_NETWORK_COORDINATE (the node's NICs' coordinates, one per
 *         plane, logical unless asked), PMIX_NETWORK_NIC (its NICs) and
 *         PMIX_NETWORK_ENDPT (the NICs' hosts, strings);
 * each process finds its node's keys through its PMIX_NODEID.
 *
 * The arrays are built in place: values are made once and moved into a
 * growing info array (no PMIx_Info_list, whose adds, conversions and
 * nesting copied every value three or four times: a tenth of a
 * 16,384-node simulation went there).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "px_netmap.h"

typedef px_ivec ivec;

void px_net_plane_name(unsigned plane, char *buf, size_t len)
{
    snprintf(buf, len, "plane%u", plane);
}

/* Plane `plane`'s name in this network. */
static void plane_name(const px_netinfo *ni, unsigned plane, char *buf, size_t len)
{
    if (ni->plane_names != NULL)
        snprintf(buf, len, "%s", ni->plane_names[plane]);
    else
        px_net_plane_name(plane, buf, len);
}

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
static pmix_status_t add_qn(const px_netinfo *ni, ivec *list, const char *key, pmix_value_t *val,
                            int plane, const char *nic, pmix_coord_view_t view)
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
        plane_name(ni, (unsigned)plane, name, sizeof(name));
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
typedef pmix_status_t (*make_fn)(const px_netinfo *ni, uint32_t node, int plane,
                                 pmix_coord_view_t view, pmix_value_t *out);

static pmix_status_t add_variants(const px_netinfo *ni, uint32_t node, ivec *list, const char *key,
                                  make_fn make, bool by_view)
{
    static const pmix_coord_view_t views[] = {PMIX_COORD_VIEW_UNDEF, PMIX_COORD_LOGICAL_VIEW,
                                              PMIX_COORD_PHYSICAL_VIEW};
    pmix_status_t rc = PMIX_SUCCESS;

    for (int plane = -1; rc == PMIX_SUCCESS && plane < (int)ni->planes; plane++) {
        for (size_t v = 0; rc == PMIX_SUCCESS && v < (by_view ? 3u : 1u); v++) {
            pmix_value_t val;
            PMIx_Value_construct(&val);
            rc = make(ni, node, plane, views[v], &val);
            if (rc == PMIX_SUCCESS)
                rc = add_qn(ni, list, key, &val, plane, NULL, views[v]);
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

static unsigned end_plane(const px_netinfo *ni, int plane)
{
    return plane < 0 ? ni->planes : (unsigned)plane + 1;
}

static pmix_status_t make_coord(const px_netinfo *ni, uint32_t node, int plane,
                                pmix_coord_view_t view, pmix_value_t *out)
{
    unsigned a = first_plane(plane), b = end_plane(ni, plane);
    pmix_coord_t *c;
    char name[32];
    pmix_status_t rc = darray(out, PMIX_COORD, b - a);

    if (rc != PMIX_SUCCESS)
        return rc;
    c = out->data.darray->array;
    if (view == PMIX_COORD_VIEW_UNDEF)
        view = PMIX_COORD_LOGICAL_VIEW;
    for (unsigned p = a; p < b; p++, c++) {
        uint32_t v[PX_NET_MAX_DIMS];
        c->view = view;
        c->dims = ni->coord(ni->ctx, node, view, v);
        plane_name(ni, p, name, sizeof(name));
        c->fabric = strdup(ni->fabric);
        c->plane = strdup(name);
        c->coord = malloc(c->dims * sizeof(uint32_t));
        if (c->fabric == NULL || c->plane == NULL || c->coord == NULL)
            return PMIX_ERR_NOMEM;
        memcpy(c->coord, v, c->dims * sizeof(uint32_t));
    }
    return PMIX_SUCCESS;
}

/* Strings per plane: the node's NIC (`host` false) or its NIC's host. */
static pmix_status_t make_strings(const px_netinfo *ni, uint32_t node, int plane, bool host,
                                  pmix_value_t *out)
{
    unsigned a = first_plane(plane), b = end_plane(ni, plane);
    pmix_status_t rc = darray(out, PMIX_STRING, b - a);
    char **s, name[64];

    if (rc != PMIX_SUCCESS)
        return rc;
    s = out->data.darray->array;
    for (unsigned p = a; p < b; p++, s++) {
        if (host)
            ni->nic_host(ni->ctx, node, p, name, sizeof(name));
        else
            ni->nic_name(ni->ctx, node, p, name, sizeof(name));
        if ((*s = strdup(name)) == NULL)
            return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t make_endpt(const px_netinfo *ni, uint32_t node, int plane,
                                pmix_coord_view_t view, pmix_value_t *out)
{
    return make_strings(ni, node, plane, true, out);
}

/* A process's NICs: with a plane, that plane's NIC id; without, one array
 * per plane: the plane's name, then the NIC's id (the chapter's form). */
static pmix_status_t make_node_nic(const px_netinfo *ni, uint32_t node, int plane,
                                   pmix_coord_view_t view, pmix_value_t *out)
{
    pmix_data_array_t *pa;
    pmix_status_t rc;

    if (plane >= 0)
        return make_strings(ni, node, plane, false, out);
    if ((rc = darray(out, PMIX_DATA_ARRAY, ni->planes)) != PMIX_SUCCESS)
        return rc;
    pa = out->data.darray->array;
    for (unsigned p = 0; p < ni->planes; p++) {
        char **s, name[64];
        pa[p].type = PMIX_STRING;
        pa[p].size = 2;
        pa[p].array = s = calloc(2, sizeof(char *));
        if (s == NULL)
            return PMIX_ERR_NOMEM;
        plane_name(ni, p, name, sizeof(name));
        s[0] = strdup(name);
        ni->nic_name(ni->ctx, node, p, name, sizeof(name));
        s[1] = strdup(name);
        if (s[0] == NULL || s[1] == NULL)
            return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

/* Every NIC of a plane (with a plane), or per plane its name then its
 * NICs. */
static pmix_status_t make_job_nic(const px_netinfo *ni, uint32_t node, int plane,
                                  pmix_coord_view_t view, pmix_value_t *out)
{
    unsigned a = first_plane(plane), b = end_plane(ni, plane);
    pmix_status_t rc;

    if (plane < 0) {
        pmix_data_array_t *pa;
        if ((rc = darray(out, PMIX_DATA_ARRAY, b - a)) != PMIX_SUCCESS)
            return rc;
        pa = out->data.darray->array;
        for (unsigned p = a; p < b; p++) {
            char **s = calloc((size_t)ni->nnodes + 1, sizeof(char *)), name[64];
            pa[p].type = PMIX_STRING;
            pa[p].size = (size_t)ni->nnodes + 1;
            pa[p].array = s;
            if (s == NULL)
                return PMIX_ERR_NOMEM;
            plane_name(ni, p, name, sizeof(name));
            if ((s[0] = strdup(name)) == NULL)
                return PMIX_ERR_NOMEM;
            for (uint32_t i = 0; i < ni->nnodes; i++) {
                ni->nic_name(ni->ctx, i, p, name, sizeof(name));
                if ((s[i + 1] = strdup(name)) == NULL)
                    return PMIX_ERR_NOMEM;
            }
        }
        return PMIX_SUCCESS;
    }
    if ((rc = darray(out, PMIX_STRING, ni->nnodes)) != PMIX_SUCCESS)
        return rc;
    for (uint32_t i = 0; i < ni->nnodes; i++) {
        char name[64];
        ni->nic_name(ni->ctx, i, (unsigned)plane, name, sizeof(name));
        if ((((char **)out->data.darray->array)[i] = strdup(name)) == NULL)
            return PMIX_ERR_NOMEM;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t make_dims(const px_netinfo *ni, uint32_t node, int plane,
                               pmix_coord_view_t view, pmix_value_t *out)
{
    const px_netshape *s = ni->shape;
    uint32_t d = view == PMIX_COORD_PHYSICAL_VIEW ? s->pdims : s->ldims;
    pmix_status_t rc;

    if (plane >= 0) {
        out->type = PMIX_UINT32;
        out->data.uint32 = d;
        return PMIX_SUCCESS;
    }
    if ((rc = darray(out, PMIX_UINT32, ni->planes)) != PMIX_SUCCESS)
        return rc;
    for (unsigned p = 0; p < ni->planes; p++)
        ((uint32_t *)out->data.darray->array)[p] = d;
    return PMIX_SUCCESS;
}

static pmix_status_t shape_array(const px_netinfo *ni, pmix_coord_view_t view,
                                 pmix_data_array_t *da)
{
    const px_netshape *s = ni->shape;
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

static pmix_status_t make_shape(const px_netinfo *ni, uint32_t node, int plane,
                                pmix_coord_view_t view, pmix_value_t *out)
{
    pmix_status_t rc;

    if (plane >= 0) {
        out->type = PMIX_DATA_ARRAY;
        out->data.darray = calloc(1, sizeof(pmix_data_array_t));
        if (out->data.darray == NULL)
            return PMIX_ERR_NOMEM;
        return shape_array(ni, view, out->data.darray);
    }
    if ((rc = darray(out, PMIX_DATA_ARRAY, ni->planes)) != PMIX_SUCCESS)
        return rc;
    for (unsigned p = 0; p < ni->planes; p++)
        if ((rc = shape_array(ni, view, &((pmix_data_array_t *)out->data.darray->array)[p])) !=
            PMIX_SUCCESS)
            return rc;
    return PMIX_SUCCESS;
}

pmix_status_t px_netinfo_node(const px_netinfo *ni, uint32_t node, ivec *top)
{
    ivec nd = {0};
    pmix_info_t *e;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if ((e = px_ivec_next(&nd, PMIX_NODEID)) != NULL) {
        PMIx_Value_load(&e->value, &node, PMIX_UINT32);
        if ((e = px_ivec_next(&nd, PMIX_HOSTNAME)) != NULL) {
            PMIx_Value_load(&e->value, ni->host(ni->ctx, node), PMIX_STRING);
            rc = PMIX_SUCCESS;
        }
    }
    if (rc == PMIX_SUCCESS)
        rc = add_variants(ni, node, &nd, PMIX_NETWORK_COORDINATE, make_coord, true);
    /* one NIC's coordinate, asked for with PMIX_NETWORK_NIC (and a view) */
    for (unsigned p = 0; rc == PMIX_SUCCESS && p < ni->planes; p++) {
        static const pmix_coord_view_t views[] = {PMIX_COORD_VIEW_UNDEF, PMIX_COORD_LOGICAL_VIEW,
                                                  PMIX_COORD_PHYSICAL_VIEW};
        char nic[64];
        ni->nic_name(ni->ctx, node, p, nic, sizeof(nic));
        for (size_t v = 0; rc == PMIX_SUCCESS && v < 3; v++) {
            pmix_value_t val;
            PMIx_Value_construct(&val);
            rc = make_coord(ni, node, (int)p, views[v], &val);
            if (rc == PMIX_SUCCESS)
                rc = add_qn(ni, &nd, PMIX_NETWORK_COORDINATE, &val, -1, nic, views[v]);
            else
                PMIx_Value_destruct(&val);
        }
    }
    if (rc == PMIX_SUCCESS)
        rc = add_variants(ni, node, &nd, PMIX_NETWORK_NIC, make_node_nic, false);
    if (rc == PMIX_SUCCESS)
        rc = add_variants(ni, node, &nd, PMIX_NETWORK_ENDPT, make_endpt, false);
    if (rc == PMIX_SUCCESS)
        rc = (e = px_ivec_next(top, PMIX_NODE_INFO_ARRAY)) != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS && (rc = ivec_move(&nd, &e->value)) != PMIX_SUCCESS)
        top->n--; /* the slot is empty */
    px_ivec_free(&nd);
    return rc;
}

/* The keys every node registers alike: the planes, their dimensions and
 * shape, and in a small job every NIC. */
pmix_status_t px_netinfo_common(const px_netinfo *ni, bool all_nics, ivec *top)
{
    pmix_info_t *e;
    pmix_status_t rc = PMIX_SUCCESS;

    if ((e = px_ivec_next(top, PMIX_NETWORK_PLANE)) == NULL)
        return PMIX_ERR_NOMEM;
    if ((e->value.data.darray = PMIx_Data_array_create(ni->planes, PMIX_STRING)) != NULL)
        e->value.type = PMIX_DATA_ARRAY;
    else
        rc = PMIX_ERR_NOMEM;
    for (unsigned p = 0; rc == PMIX_SUCCESS && p < ni->planes; p++) {
        char name[32];
        plane_name(ni, p, name, sizeof(name));
        if ((((char **)e->value.data.darray->array)[p] = strdup(name)) == NULL)
            rc = PMIX_ERR_NOMEM;
    }
    if (rc == PMIX_SUCCESS)
        rc = add_variants(ni, 0, top, PMIX_NETWORK_DIMS, make_dims, true);
    if (rc == PMIX_SUCCESS)
        rc = add_variants(ni, 0, top, PMIX_NETWORK_SHAPE, make_shape, true);
    if (rc == PMIX_SUCCESS && all_nics)
        rc = add_variants(ni, 0, top, PMIX_NETWORK_NIC, make_job_nic, false);
    return rc;
}
