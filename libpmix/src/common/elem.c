/*
 * elem.c: the per-type element layer of the common module.
 *
 * For every pmix_data_type_t this file knows the size of one element as it
 * sits in a pmix_data_array_t, and how to construct, destruct, deep-copy and
 * compare such elements. Values, data arrays and infos are built on it, so
 * a type is supported everywhere once it is here.
 *
 * What it knows comes from the table of data types (px_types.def): the
 * size is the row's, and construct, destruct, copy and compare switch on
 * the row's shape, not on the type, so a new type of an existing shape
 * needs nothing here and a new shape gets a case in each of the four
 * switches (the compiler names the missing ones).
 *
 * Element storage by shape:
 *   scalars (BOOL, U8 ... U64, PID, SIZE, TIME, FLOAT, ...)  the scalar itself
 *   STRING                                                    char* (owned)
 *   POINTER                                                   void* (not owned)
 *   NSPACE                                                    pmix_nspace_t
 *   BYTES (BYTE_OBJECT, COMPRESSED_*, REGEX)                  pmix_byte_object_t
 *   everything else                                           its struct
 * Topology and cpuset handles (pmix_topology_t.topology, pmix_cpuset_t.bitmap)
 * of the "hwloc" source are owned by each element: copies duplicate them
 * and destructors free them; handles of another source are only copied as
 * pointers and never freed.
 * Copies never leave a half-built element: on failure the destination is
 * destructed back to empty and the error returned.
 */
#include <stdlib.h>

#include <hwloc.h>
#include <string.h>

#include "px_common.h"
#include "px_types.h"

/* Duplicates s (NULL stays NULL). Sets *rc to PMIX_ERR_NOMEM on failure. */
static char *dup_str(const char *s, pmix_status_t *rc)
{
    if (s == NULL) {
        return NULL;
    }
    char *d = strdup(s);
    if (d == NULL) {
        *rc = PMIX_ERR_NOMEM;
    }
    return d;
}

static bool str_equal(const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    return strcmp(a, b) == 0;
}

/* Copies a NULL-terminated string array (NULL stays NULL). */
static char **dup_argv(char **argv, pmix_status_t *rc)
{
    if (argv == NULL) {
        return NULL;
    }
    size_t n = 0;
    while (argv[n] != NULL) {
        n++;
    }
    char **d = calloc(n + 1, sizeof(char *));
    if (d == NULL) {
        *rc = PMIX_ERR_NOMEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        d[i] = strdup(argv[i]);
        if (d[i] == NULL) {
            for (size_t j = 0; j < i; j++) {
                free(d[j]);
            }
            free(d);
            *rc = PMIX_ERR_NOMEM;
            return NULL;
        }
    }
    return d;
}

static bool argv_equal(char **a, char **b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    size_t i = 0;
    for (; a[i] != NULL && b[i] != NULL; i++) {
        if (strcmp(a[i], b[i]) != 0) {
            return false;
        }
    }
    return a[i] == NULL && b[i] == NULL;
}

/* Allocates and deep-copies an array of n elements of type t. */
static pmix_status_t dup_array(void **dst, const void *src, size_t n, pmix_data_type_t t)
{
    *dst = NULL;
    if (src == NULL || n == 0) {
        return PMIX_SUCCESS;
    }
    size_t sz = px_type_size(t);
    if (sz == 0) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    void *d = calloc(n, sz);
    if (d == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pmix_status_t rc = px_elems_copy(d, src, n, t);
    if (rc != PMIX_SUCCESS) {
        free(d);
        return rc;
    }
    *dst = d;
    return PMIX_SUCCESS;
}

/* Destructs and frees an array of n elements of type t. */
static void free_array(void *p, size_t n, pmix_data_type_t t)
{
    if (p != NULL) {
        px_elems_destruct(p, n, t);
        free(p);
    }
}

static bool array_equal(const void *a, size_t na, const void *b, size_t nb, pmix_data_type_t t)
{
    if (na != nb) {
        return false;
    }
    if (na == 0) {
        return true;
    }
    if (a == NULL || b == NULL) {
        return a == b;
    }
    return px_elems_equal(a, b, na, t);
}

static pmix_status_t bo_copy(pmix_byte_object_t *d, const pmix_byte_object_t *s)
{
    d->bytes = NULL;
    d->size = 0;
    if (s->bytes == NULL || s->size == 0) {
        return PMIX_SUCCESS;
    }
    d->bytes = malloc(s->size);
    if (d->bytes == NULL) {
        return PMIX_ERR_NOMEM;
    }
    memcpy(d->bytes, s->bytes, s->size);
    d->size = s->size;
    return PMIX_SUCCESS;
}

static bool bo_equal(const pmix_byte_object_t *a, const pmix_byte_object_t *b)
{
    if (a->size != b->size) {
        return false;
    }
    if (a->size == 0) {
        return true;
    }
    if (a->bytes == NULL || b->bytes == NULL) {
        return a->bytes == b->bytes;
    }
    return memcmp(a->bytes, b->bytes, a->size) == 0;
}

size_t px_type_size(pmix_data_type_t t)
{
    return px_type_of(t)->size;
}

void px_elems_construct(void *p, size_t n, pmix_data_type_t t)
{
    size_t sz = px_type_size(t);
    if (p == NULL || n == 0 || sz == 0) {
        return;
    }
    enum px_shape shape = px_type_of(t)->shape;
    memset(p, 0, n * sz);
    for (size_t i = 0; i < n; i++) {
        char *e = (char *)p + i * sz;
        switch (shape) {
        case PX_SHAPE_PROC: ((pmix_proc_t *)e)->rank = PMIX_RANK_UNDEF; break;
        case PX_SHAPE_PROC_INFO: ((pmix_proc_info_t *)e)->proc.rank = PMIX_RANK_UNDEF; break;
        case PX_SHAPE_PDATA: ((pmix_pdata_t *)e)->proc.rank = PMIX_RANK_UNDEF; break;
        case PX_SHAPE_PROC_STATS: ((pmix_proc_stats_t *)e)->proc.rank = PMIX_RANK_UNDEF; break;
        default: break;
        }
    }
}

static void destruct_one(void *e, pmix_data_type_t t);

void *px_elems_alloc(size_t n, pmix_data_type_t t)
{
    size_t sz = px_type_size(t);
    if (n == 0 || sz == 0) {
        return NULL;
    }
    void *p = calloc(n, sz);
    if (p != NULL) {
        px_elems_construct(p, n, t);
    }
    return p;
}

void px_elems_free(void *p, size_t n, pmix_data_type_t t)
{
    if (p != NULL) {
        px_elems_destruct(p, n, t);
        free(p);
    }
}

void px_elems_destruct(void *p, size_t n, pmix_data_type_t t)
{
    size_t sz = px_type_size(t);
    if (p == NULL || sz == 0) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        destruct_one((char *)p + i * sz, t);
    }
}

static void destruct_one(void *e, pmix_data_type_t t)
{
    switch (px_type_of(t)->shape) {
    case PX_SHAPE_STRING: {
        char **s = e;
        free(*s);
        *s = NULL;
        break;
    }
    case PX_SHAPE_BYTES: PMIx_Byte_object_destruct(e); break;
    case PX_SHAPE_VALUE: PMIx_Value_destruct(e); break;
    case PX_SHAPE_INFO: PMIx_Info_destruct(e); break;
    case PX_SHAPE_PDATA: PMIx_Pdata_destruct(e); break;
    case PX_SHAPE_APP: PMIx_App_destruct(e); break;
    case PX_SHAPE_QUERY: PMIx_Query_destruct(e); break;
    case PX_SHAPE_PROC_INFO: PMIx_Proc_info_destruct(e); break;
    case PX_SHAPE_DARRAY: PMIx_Data_array_destruct(e); break;
    case PX_SHAPE_ENVAR: PMIx_Envar_destruct(e); break;
    case PX_SHAPE_COORD: PMIx_Coord_destruct(e); break;
    case PX_SHAPE_REGATTR: PMIx_Regattr_destruct(e); break;
    case PX_SHAPE_TOPO: PMIx_Topology_destruct(e); break;
    case PX_SHAPE_CPUSET: PMIx_Cpuset_destruct(e); break;
    case PX_SHAPE_GEOMETRY: PMIx_Geometry_destruct(e); break;
    case PX_SHAPE_DEVICE_DIST: PMIx_Device_distance_destruct(e); break;
    case PX_SHAPE_ENDPOINT: PMIx_Endpoint_destruct(e); break;
    case PX_SHAPE_DATA_BUFFER: {
        pmix_data_buffer_t *b = e;
        free(b->base_ptr);
        memset(b, 0, sizeof(*b));
        break;
    }
    case PX_SHAPE_PROC_STATS: {
        pmix_proc_stats_t *s = e;
        free(s->node);
        free(s->cmd);
        px_elems_construct(s, 1, PMIX_PROC_STATS);
        break;
    }
    case PX_SHAPE_DISK_STATS: {
        pmix_disk_stats_t *s = e;
        free(s->disk);
        memset(s, 0, sizeof(*s));
        break;
    }
    case PX_SHAPE_NET_STATS: {
        pmix_net_stats_t *s = e;
        free(s->net_interface);
        memset(s, 0, sizeof(*s));
        break;
    }
    case PX_SHAPE_NODE_STATS: {
        pmix_node_stats_t *s = e;
        free(s->node);
        free_array(s->diskstats, s->ndiskstats, PMIX_DISK_STATS);
        free_array(s->netstats, s->nnetstats, PMIX_NET_STATS);
        memset(s, 0, sizeof(*s));
        break;
    }
    case PX_SHAPE_NONE:
    case PX_SHAPE_BOOL:
    case PX_SHAPE_U8:
    case PX_SHAPE_U16:
    case PX_SHAPE_U32:
    case PX_SHAPE_U64:
    case PX_SHAPE_PID:
    case PX_SHAPE_SIZE:
    case PX_SHAPE_TIME:
    case PX_SHAPE_FLOAT:
    case PX_SHAPE_DOUBLE:
    case PX_SHAPE_TIMEVAL:
    case PX_SHAPE_NSPACE:
    case PX_SHAPE_POINTER:
    case PX_SHAPE_PROC:
        /* Scalars, procs, nspaces and pointers own nothing. */
        break;
    }
}

/* Deep-copies one element; d is empty storage. On failure d is left
 * constructed (the partial copy is undone). */
static pmix_status_t copy_one(void *d, const void *s, pmix_data_type_t t)
{
    pmix_status_t rc = PMIX_SUCCESS;
    size_t sz = px_type_size(t);

    switch (px_type_of(t)->shape) {
    case PX_SHAPE_STRING: *(char **)d = dup_str(*(char *const *)s, &rc); return rc;
    case PX_SHAPE_NSPACE: PMIx_Load_nspace(d, s); return PMIX_SUCCESS;
    case PX_SHAPE_BYTES: return bo_copy(d, s);
    case PX_SHAPE_VALUE: return PMIx_Value_xfer(d, s);
    case PX_SHAPE_INFO: return PMIx_Info_xfer(d, s);
    case PX_SHAPE_PDATA: {
        pmix_pdata_t *pd = d;
        const pmix_pdata_t *ps = s;
        pd->proc = ps->proc;
        PMIx_Load_key(pd->key, ps->key);
        return PMIx_Value_xfer(&pd->value, &ps->value);
    }
    case PX_SHAPE_APP: {
        pmix_app_t *ad = d;
        const pmix_app_t *as = s;
        PMIx_App_construct(ad);
        ad->cmd = dup_str(as->cmd, &rc);
        ad->argv = dup_argv(as->argv, &rc);
        ad->env = dup_argv(as->env, &rc);
        ad->cwd = dup_str(as->cwd, &rc);
        ad->maxprocs = as->maxprocs;
        if (rc == PMIX_SUCCESS) {
            rc = dup_array((void **)&ad->info, as->info, as->ninfo, PMIX_INFO);
            ad->ninfo = ad->info != NULL ? as->ninfo : 0;
        }
        break;
    }
    case PX_SHAPE_QUERY: {
        pmix_query_t *qd = d;
        const pmix_query_t *qs = s;
        PMIx_Query_construct(qd);
        qd->keys = dup_argv(qs->keys, &rc);
        if (rc == PMIX_SUCCESS) {
            rc = dup_array((void **)&qd->qualifiers, qs->qualifiers, qs->nqual, PMIX_INFO);
            qd->nqual = qd->qualifiers != NULL ? qs->nqual : 0;
        }
        break;
    }
    case PX_SHAPE_PROC_INFO: {
        pmix_proc_info_t *pd = d;
        const pmix_proc_info_t *ps = s;
        *pd = *ps;
        pd->hostname = NULL;
        pd->executable_name = NULL;
        pd->hostname = dup_str(ps->hostname, &rc);
        pd->executable_name = dup_str(ps->executable_name, &rc);
        break;
    }
    case PX_SHAPE_DARRAY: {
        pmix_data_array_t *dd = d;
        const pmix_data_array_t *ds = s;
        dd->type = ds->type;
        rc = dup_array(&dd->array, ds->array, ds->size, ds->type);
        dd->size = dd->array != NULL ? ds->size : 0;
        break;
    }
    case PX_SHAPE_ENVAR: {
        pmix_envar_t *ed = d;
        const pmix_envar_t *es = s;
        PMIx_Envar_construct(ed);
        ed->envar = dup_str(es->envar, &rc);
        ed->value = dup_str(es->value, &rc);
        ed->separator = es->separator;
        break;
    }
    case PX_SHAPE_COORD: {
        pmix_coord_t *cd = d;
        const pmix_coord_t *cs = s;
        PMIx_Coord_construct(cd);
        cd->fabric = dup_str(cs->fabric, &rc);
        cd->plane = dup_str(cs->plane, &rc);
        cd->view = cs->view;
        if (rc == PMIX_SUCCESS && cs->coord != NULL && cs->dims > 0) {
            cd->coord = malloc(cs->dims * sizeof(uint32_t));
            if (cd->coord == NULL) {
                rc = PMIX_ERR_NOMEM;
            } else {
                memcpy(cd->coord, cs->coord, cs->dims * sizeof(uint32_t));
                cd->dims = cs->dims;
            }
        }
        break;
    }
    case PX_SHAPE_REGATTR: {
        pmix_regattr_t *rd = d;
        const pmix_regattr_t *rs = s;
        PMIx_Regattr_construct(rd);
        rd->name = dup_str(rs->name, &rc);
        PMIx_Load_key(rd->string, rs->string);
        rd->type = rs->type;
        rd->description = dup_argv(rs->description, &rc);
        break;
    }
    case PX_SHAPE_TOPO: {
        pmix_topology_t *td = d;
        const pmix_topology_t *ts = s;
        td->source = dup_str(ts->source, &rc);
        td->topology = ts->topology;
        /* an hwloc topology is owned by each copy (see structs.c) */
        if (rc == PMIX_SUCCESS && ts->topology != NULL && px_is_hwloc(ts->source) &&
            hwloc_topology_dup((hwloc_topology_t *)&td->topology, (hwloc_topology_t)ts->topology) !=
                0) {
            td->topology = NULL;
            rc = PMIX_ERR_NOMEM;
        }
        break;
    }
    case PX_SHAPE_CPUSET: {
        pmix_cpuset_t *cd = d;
        const pmix_cpuset_t *cs = s;
        cd->source = dup_str(cs->source, &rc);
        cd->bitmap = cs->bitmap;
        /* an hwloc bitmap is owned by each copy (see structs.c) */
        if (rc == PMIX_SUCCESS && cs->bitmap != NULL && px_is_hwloc(cs->source)) {
            cd->bitmap = hwloc_bitmap_dup((hwloc_const_bitmap_t)cs->bitmap);
            if (cd->bitmap == NULL)
                rc = PMIX_ERR_NOMEM;
        }
        break;
    }
    case PX_SHAPE_GEOMETRY: {
        pmix_geometry_t *gd = d;
        const pmix_geometry_t *gs = s;
        PMIx_Geometry_construct(gd);
        gd->fabric = gs->fabric;
        gd->uuid = dup_str(gs->uuid, &rc);
        gd->osname = dup_str(gs->osname, &rc);
        if (rc == PMIX_SUCCESS) {
            rc = dup_array((void **)&gd->coordinates, gs->coordinates, gs->ncoords, PMIX_COORD);
            gd->ncoords = gd->coordinates != NULL ? gs->ncoords : 0;
        }
        break;
    }
    case PX_SHAPE_DEVICE_DIST: {
        pmix_device_distance_t *dd = d;
        const pmix_device_distance_t *ds = s;
        *dd = *ds;
        dd->uuid = NULL;
        dd->osname = NULL;
        dd->uuid = dup_str(ds->uuid, &rc);
        dd->osname = dup_str(ds->osname, &rc);
        break;
    }
    case PX_SHAPE_ENDPOINT: {
        pmix_endpoint_t *ed = d;
        const pmix_endpoint_t *es = s;
        PMIx_Endpoint_construct(ed);
        ed->uuid = dup_str(es->uuid, &rc);
        ed->osname = dup_str(es->osname, &rc);
        if (rc == PMIX_SUCCESS) {
            rc = bo_copy(&ed->endpt, &es->endpt);
        }
        break;
    }
    case PX_SHAPE_DATA_BUFFER: {
        pmix_data_buffer_t *bd = d;
        const pmix_data_buffer_t *bs = s;
        memset(bd, 0, sizeof(*bd));
        if (bs->base_ptr != NULL && bs->bytes_allocated > 0) {
            bd->base_ptr = malloc(bs->bytes_allocated);
            if (bd->base_ptr == NULL) {
                return PMIX_ERR_NOMEM;
            }
            memcpy(bd->base_ptr, bs->base_ptr, bs->bytes_used);
            bd->pack_ptr = bd->base_ptr + (bs->pack_ptr - bs->base_ptr);
            bd->unpack_ptr = bd->base_ptr + (bs->unpack_ptr - bs->base_ptr);
            bd->bytes_allocated = bs->bytes_allocated;
            bd->bytes_used = bs->bytes_used;
        }
        return PMIX_SUCCESS;
    }
    case PX_SHAPE_PROC_STATS: {
        pmix_proc_stats_t *pd = d;
        const pmix_proc_stats_t *ps = s;
        *pd = *ps;
        pd->node = NULL;
        pd->cmd = NULL;
        pd->node = dup_str(ps->node, &rc);
        pd->cmd = dup_str(ps->cmd, &rc);
        break;
    }
    case PX_SHAPE_DISK_STATS: {
        pmix_disk_stats_t *dd = d;
        const pmix_disk_stats_t *ds = s;
        *dd = *ds;
        dd->disk = NULL;
        dd->disk = dup_str(ds->disk, &rc);
        break;
    }
    case PX_SHAPE_NET_STATS: {
        pmix_net_stats_t *nd = d;
        const pmix_net_stats_t *ns = s;
        *nd = *ns;
        nd->net_interface = NULL;
        nd->net_interface = dup_str(ns->net_interface, &rc);
        break;
    }
    case PX_SHAPE_NODE_STATS: {
        pmix_node_stats_t *nd = d;
        const pmix_node_stats_t *ns = s;
        *nd = *ns;
        nd->node = NULL;
        nd->diskstats = NULL;
        nd->ndiskstats = 0;
        nd->netstats = NULL;
        nd->nnetstats = 0;
        nd->node = dup_str(ns->node, &rc);
        if (rc == PMIX_SUCCESS) {
            rc = dup_array((void **)&nd->diskstats, ns->diskstats, ns->ndiskstats, PMIX_DISK_STATS);
            nd->ndiskstats = nd->diskstats != NULL ? ns->ndiskstats : 0;
        }
        if (rc == PMIX_SUCCESS) {
            rc = dup_array((void **)&nd->netstats, ns->netstats, ns->nnetstats, PMIX_NET_STATS);
            nd->nnetstats = nd->netstats != NULL ? ns->nnetstats : 0;
        }
        break;
    }
    case PX_SHAPE_NONE: return PMIX_ERR_NOT_SUPPORTED;
    case PX_SHAPE_BOOL:
    case PX_SHAPE_U8:
    case PX_SHAPE_U16:
    case PX_SHAPE_U32:
    case PX_SHAPE_U64:
    case PX_SHAPE_PID:
    case PX_SHAPE_SIZE:
    case PX_SHAPE_TIME:
    case PX_SHAPE_FLOAT:
    case PX_SHAPE_DOUBLE:
    case PX_SHAPE_TIMEVAL:
    case PX_SHAPE_POINTER:
    case PX_SHAPE_PROC:
        /* Scalars, procs and pointers: a plain copy. */
        memcpy(d, s, sz);
        return PMIX_SUCCESS;
    }

    if (rc != PMIX_SUCCESS) {
        destruct_one(d, t);
    }
    return rc;
}

pmix_status_t px_elems_copy(void *dst, const void *src, size_t n, pmix_data_type_t t)
{
    size_t sz = px_type_size(t);
    if (n == 0) {
        return PMIX_SUCCESS;
    }
    if (sz == 0) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (dst == NULL || src == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < n; i++) {
        pmix_status_t rc = copy_one((char *)dst + i * sz, (const char *)src + i * sz, t);
        if (rc != PMIX_SUCCESS) {
            px_elems_destruct(dst, i, t);
            px_elems_construct(dst, n, t);
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

static bool equal_one(const void *a, const void *b, pmix_data_type_t t)
{
    switch (px_type_of(t)->shape) {
    case PX_SHAPE_BOOL: return *(const bool *)a == *(const bool *)b;
    case PX_SHAPE_FLOAT: return *(const float *)a == *(const float *)b;
    case PX_SHAPE_DOUBLE: return *(const double *)a == *(const double *)b;
    case PX_SHAPE_TIMEVAL: {
        const struct timeval *x = a, *y = b;
        return x->tv_sec == y->tv_sec && x->tv_usec == y->tv_usec;
    }
    case PX_SHAPE_STRING: return str_equal(*(char *const *)a, *(char *const *)b);
    case PX_SHAPE_NSPACE: return strncmp(a, b, PMIX_MAX_NSLEN) == 0;
    case PX_SHAPE_PROC: return px_proc_eq(a, b);
    case PX_SHAPE_BYTES: return bo_equal(a, b);
    case PX_SHAPE_VALUE: return px_value_equal(a, b);
    case PX_SHAPE_INFO: {
        const pmix_info_t *x = a, *y = b;
        return strncmp(x->key, y->key, PMIX_MAX_KEYLEN) == 0 &&
               (x->flags & ~(pmix_info_directives_t)PMIX_INFO_ARRAY_END) ==
                   (y->flags & ~(pmix_info_directives_t)PMIX_INFO_ARRAY_END) &&
               px_value_equal(&x->value, &y->value);
    }
    case PX_SHAPE_PDATA: {
        const pmix_pdata_t *x = a, *y = b;
        return px_proc_eq(&x->proc, &y->proc) && strncmp(x->key, y->key, PMIX_MAX_KEYLEN) == 0 &&
               px_value_equal(&x->value, &y->value);
    }
    case PX_SHAPE_APP: {
        const pmix_app_t *x = a, *y = b;
        return str_equal(x->cmd, y->cmd) && argv_equal(x->argv, y->argv) &&
               argv_equal(x->env, y->env) && str_equal(x->cwd, y->cwd) &&
               x->maxprocs == y->maxprocs &&
               array_equal(x->info, x->ninfo, y->info, y->ninfo, PMIX_INFO);
    }
    case PX_SHAPE_QUERY: {
        const pmix_query_t *x = a, *y = b;
        return argv_equal(x->keys, y->keys) &&
               array_equal(x->qualifiers, x->nqual, y->qualifiers, y->nqual, PMIX_INFO);
    }
    case PX_SHAPE_PROC_INFO: {
        const pmix_proc_info_t *x = a, *y = b;
        return px_proc_eq(&x->proc, &y->proc) && str_equal(x->hostname, y->hostname) &&
               str_equal(x->executable_name, y->executable_name) && x->pid == y->pid &&
               x->exit_code == y->exit_code && x->state == y->state;
    }
    case PX_SHAPE_DARRAY: {
        const pmix_data_array_t *x = a, *y = b;
        return x->type == y->type && array_equal(x->array, x->size, y->array, y->size, x->type);
    }
    case PX_SHAPE_ENVAR: {
        const pmix_envar_t *x = a, *y = b;
        return str_equal(x->envar, y->envar) && str_equal(x->value, y->value) &&
               x->separator == y->separator;
    }
    case PX_SHAPE_COORD: {
        const pmix_coord_t *x = a, *y = b;
        return str_equal(x->fabric, y->fabric) && str_equal(x->plane, y->plane) &&
               x->view == y->view && x->dims == y->dims &&
               (x->dims == 0 || (x->coord != NULL && y->coord != NULL &&
                                 memcmp(x->coord, y->coord, x->dims * sizeof(uint32_t)) == 0));
    }
    case PX_SHAPE_REGATTR: {
        const pmix_regattr_t *x = a, *y = b;
        return str_equal(x->name, y->name) && strncmp(x->string, y->string, PMIX_MAX_KEYLEN) == 0 &&
               x->type == y->type && argv_equal(x->description, y->description);
    }
    case PX_SHAPE_TOPO: {
        const pmix_topology_t *x = a, *y = b;
        return str_equal(x->source, y->source) && x->topology == y->topology;
    }
    case PX_SHAPE_CPUSET: {
        const pmix_cpuset_t *x = a, *y = b;
        return str_equal(x->source, y->source) && x->bitmap == y->bitmap;
    }
    case PX_SHAPE_GEOMETRY: {
        const pmix_geometry_t *x = a, *y = b;
        return x->fabric == y->fabric && str_equal(x->uuid, y->uuid) &&
               str_equal(x->osname, y->osname) &&
               array_equal(x->coordinates, x->ncoords, y->coordinates, y->ncoords, PMIX_COORD);
    }
    case PX_SHAPE_DEVICE_DIST: {
        const pmix_device_distance_t *x = a, *y = b;
        return str_equal(x->uuid, y->uuid) && str_equal(x->osname, y->osname) &&
               x->type == y->type && x->mindist == y->mindist && x->maxdist == y->maxdist;
    }
    case PX_SHAPE_ENDPOINT: {
        const pmix_endpoint_t *x = a, *y = b;
        return str_equal(x->uuid, y->uuid) && str_equal(x->osname, y->osname) &&
               bo_equal(&x->endpt, &y->endpt);
    }
    case PX_SHAPE_DATA_BUFFER: {
        const pmix_data_buffer_t *x = a, *y = b;
        return x->bytes_used == y->bytes_used &&
               (x->bytes_used == 0 || memcmp(x->base_ptr, y->base_ptr, x->bytes_used) == 0) &&
               (x->unpack_ptr - x->base_ptr) == (y->unpack_ptr - y->base_ptr);
    }
    case PX_SHAPE_PROC_STATS: {
        const pmix_proc_stats_t *x = a, *y = b;
        return str_equal(x->node, y->node) && px_proc_eq(&x->proc, &y->proc) && x->pid == y->pid &&
               str_equal(x->cmd, y->cmd) && x->state == y->state &&
               x->time.tv_sec == y->time.tv_sec && x->time.tv_usec == y->time.tv_usec &&
               x->percent_cpu == y->percent_cpu && x->priority == y->priority &&
               x->num_threads == y->num_threads && x->pss == y->pss && x->vsize == y->vsize &&
               x->rss == y->rss && x->peak_vsize == y->peak_vsize && x->processor == y->processor &&
               x->sample_time.tv_sec == y->sample_time.tv_sec &&
               x->sample_time.tv_usec == y->sample_time.tv_usec;
    }
    case PX_SHAPE_DISK_STATS: {
        const pmix_disk_stats_t *x = a, *y = b;
        return str_equal(x->disk, y->disk) &&
               memcmp(&x->num_reads_completed, &y->num_reads_completed,
                      sizeof(*x) - offsetof(pmix_disk_stats_t, num_reads_completed)) == 0;
    }
    case PX_SHAPE_NET_STATS: {
        const pmix_net_stats_t *x = a, *y = b;
        return str_equal(x->net_interface, y->net_interface) &&
               memcmp(&x->num_bytes_recvd, &y->num_bytes_recvd,
                      sizeof(*x) - offsetof(pmix_net_stats_t, num_bytes_recvd)) == 0;
    }
    case PX_SHAPE_NODE_STATS: {
        const pmix_node_stats_t *x = a, *y = b;
        return str_equal(x->node, y->node) && x->la == y->la && x->la5 == y->la5 &&
               x->la15 == y->la15 && x->total_mem == y->total_mem && x->free_mem == y->free_mem &&
               x->buffers == y->buffers && x->cached == y->cached &&
               x->swap_cached == y->swap_cached && x->swap_total == y->swap_total &&
               x->swap_free == y->swap_free && x->mapped == y->mapped &&
               x->sample_time.tv_sec == y->sample_time.tv_sec &&
               x->sample_time.tv_usec == y->sample_time.tv_usec &&
               array_equal(x->diskstats, x->ndiskstats, y->diskstats, y->ndiskstats,
                           PMIX_DISK_STATS) &&
               array_equal(x->netstats, x->nnetstats, y->netstats, y->nnetstats, PMIX_NET_STATS);
    }
    case PX_SHAPE_NONE: return false;
    case PX_SHAPE_U8:
    case PX_SHAPE_U16:
    case PX_SHAPE_U32:
    case PX_SHAPE_U64:
    case PX_SHAPE_PID:
    case PX_SHAPE_SIZE:
    case PX_SHAPE_TIME:
    case PX_SHAPE_POINTER: return memcmp(a, b, px_type_size(t)) == 0;
    }
    return false;
}

bool px_elems_equal(const void *a, const void *b, size_t n, pmix_data_type_t t)
{
    size_t sz = px_type_size(t);
    if (n == 0) {
        return true;
    }
    if (sz == 0 || a == NULL || b == NULL) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!equal_one((const char *)a + i * sz, (const char *)b + i * sz, t)) {
            return false;
        }
    }
    return true;
}
