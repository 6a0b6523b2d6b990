/*
 * elem.c: the per-type element layer of the common module.
 *
 * For every pmix_data_type_t this file knows the size of one element as it
 * sits in a pmix_data_array_t, and how to construct, destruct, deep-copy and
 * compare such elements. Values, data arrays and infos are built on it, so
 * supporting a new type means adding it to the four switches below.
 *
 * Element storage by type:
 *   scalars (bool, ints, floats, enums, timeval, ...)  the scalar itself
 *   PMIX_STRING                                         char* (owned)
 *   PMIX_POINTER                                        void* (not owned)
 *   PMIX_PROC_NSPACE                                    pmix_nspace_t
 *   byte-object types (BYTE_OBJECT, COMPRESSED_*, REGEX) pmix_byte_object_t
 *   everything else                                     its struct
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
    switch (t) {
    case PMIX_BOOL: return sizeof(bool);
    case PMIX_BYTE:
    case PMIX_INT8:
    case PMIX_UINT8:
    case PMIX_PERSIST:
    case PMIX_SCOPE:
    case PMIX_DATA_RANGE:
    case PMIX_PROC_STATE:
    case PMIX_ALLOC_DIRECTIVE:
    case PMIX_LINK_STATE:
    case PMIX_JOB_STATE:
    case PMIX_COMMAND: return 1;
    case PMIX_INT16:
    case PMIX_UINT16:
    case PMIX_DATA_TYPE:
    case PMIX_IOF_CHANNEL:
    case PMIX_LOCTYPE:
    case PMIX_STOR_ACCESS_TYPE: return 2;
    case PMIX_INT32:
    case PMIX_UINT32:
    case PMIX_INFO_DIRECTIVES:
    case PMIX_PROC_RANK: return 4;
    case PMIX_INT64:
    case PMIX_UINT64:
    case PMIX_DEVTYPE:
    case PMIX_STOR_MEDIUM:
    case PMIX_STOR_ACCESS:
    case PMIX_STOR_PERSIST: return 8;
    case PMIX_INT: return sizeof(int);
    case PMIX_UINT: return sizeof(unsigned int);
    case PMIX_STATUS: return sizeof(pmix_status_t);
    case PMIX_SIZE: return sizeof(size_t);
    case PMIX_PID: return sizeof(pid_t);
    case PMIX_FLOAT: return sizeof(float);
    case PMIX_DOUBLE: return sizeof(double);
    case PMIX_TIMEVAL: return sizeof(struct timeval);
    case PMIX_TIME: return sizeof(time_t);
    case PMIX_STRING: return sizeof(char *);
    case PMIX_POINTER: return sizeof(void *);
    case PMIX_PROC_NSPACE: return sizeof(pmix_nspace_t);
    case PMIX_PROC: return sizeof(pmix_proc_t);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX: return sizeof(pmix_byte_object_t);
    case PMIX_VALUE: return sizeof(pmix_value_t);
    case PMIX_INFO: return sizeof(pmix_info_t);
    case PMIX_PDATA: return sizeof(pmix_pdata_t);
    case PMIX_APP: return sizeof(pmix_app_t);
    case PMIX_QUERY: return sizeof(pmix_query_t);
    case PMIX_PROC_INFO: return sizeof(pmix_proc_info_t);
    case PMIX_DATA_ARRAY: return sizeof(pmix_data_array_t);
    case PMIX_ENVAR: return sizeof(pmix_envar_t);
    case PMIX_COORD: return sizeof(pmix_coord_t);
    case PMIX_REGATTR: return sizeof(pmix_regattr_t);
    case PMIX_TOPO: return sizeof(pmix_topology_t);
    case PMIX_PROC_CPUSET: return sizeof(pmix_cpuset_t);
    case PMIX_GEOMETRY: return sizeof(pmix_geometry_t);
    case PMIX_DEVICE_DIST: return sizeof(pmix_device_distance_t);
    case PMIX_ENDPOINT: return sizeof(pmix_endpoint_t);
    case PMIX_DATA_BUFFER: return sizeof(pmix_data_buffer_t);
    case PMIX_PROC_STATS: return sizeof(pmix_proc_stats_t);
    case PMIX_DISK_STATS: return sizeof(pmix_disk_stats_t);
    case PMIX_NET_STATS: return sizeof(pmix_net_stats_t);
    case PMIX_NODE_STATS: return sizeof(pmix_node_stats_t);
    default: return 0;
    }
}

void px_elems_construct(void *p, size_t n, pmix_data_type_t t)
{
    size_t sz = px_type_size(t);
    if (p == NULL || n == 0 || sz == 0) {
        return;
    }
    memset(p, 0, n * sz);
    for (size_t i = 0; i < n; i++) {
        char *e = (char *)p + i * sz;
        switch (t) {
        case PMIX_PROC: ((pmix_proc_t *)e)->rank = PMIX_RANK_UNDEF; break;
        case PMIX_PROC_INFO: ((pmix_proc_info_t *)e)->proc.rank = PMIX_RANK_UNDEF; break;
        case PMIX_PDATA: ((pmix_pdata_t *)e)->proc.rank = PMIX_RANK_UNDEF; break;
        case PMIX_PROC_STATS: ((pmix_proc_stats_t *)e)->proc.rank = PMIX_RANK_UNDEF; break;
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
    switch (t) {
    case PMIX_STRING: {
        char **s = e;
        free(*s);
        *s = NULL;
        break;
    }
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX: PMIx_Byte_object_destruct(e); break;
    case PMIX_VALUE: PMIx_Value_destruct(e); break;
    case PMIX_INFO: PMIx_Info_destruct(e); break;
    case PMIX_PDATA: PMIx_Pdata_destruct(e); break;
    case PMIX_APP: PMIx_App_destruct(e); break;
    case PMIX_QUERY: PMIx_Query_destruct(e); break;
    case PMIX_PROC_INFO: PMIx_Proc_info_destruct(e); break;
    case PMIX_DATA_ARRAY: PMIx_Data_array_destruct(e); break;
    case PMIX_ENVAR: PMIx_Envar_destruct(e); break;
    case PMIX_COORD: PMIx_Coord_destruct(e); break;
    case PMIX_REGATTR: PMIx_Regattr_destruct(e); break;
    case PMIX_TOPO: PMIx_Topology_destruct(e); break;
    case PMIX_PROC_CPUSET: PMIx_Cpuset_destruct(e); break;
    case PMIX_GEOMETRY: PMIx_Geometry_destruct(e); break;
    case PMIX_DEVICE_DIST: PMIx_Device_distance_destruct(e); break;
    case PMIX_ENDPOINT: PMIx_Endpoint_destruct(e); break;
    case PMIX_DATA_BUFFER: {
        pmix_data_buffer_t *b = e;
        free(b->base_ptr);
        memset(b, 0, sizeof(*b));
        break;
    }
    case PMIX_PROC_STATS: {
        pmix_proc_stats_t *s = e;
        free(s->node);
        free(s->cmd);
        px_elems_construct(s, 1, PMIX_PROC_STATS);
        break;
    }
    case PMIX_DISK_STATS: {
        pmix_disk_stats_t *s = e;
        free(s->disk);
        memset(s, 0, sizeof(*s));
        break;
    }
    case PMIX_NET_STATS: {
        pmix_net_stats_t *s = e;
        free(s->net_interface);
        memset(s, 0, sizeof(*s));
        break;
    }
    case PMIX_NODE_STATS: {
        pmix_node_stats_t *s = e;
        free(s->node);
        free_array(s->diskstats, s->ndiskstats, PMIX_DISK_STATS);
        free_array(s->netstats, s->nnetstats, PMIX_NET_STATS);
        memset(s, 0, sizeof(*s));
        break;
    }
    default:
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

    switch (t) {
    case PMIX_STRING: *(char **)d = dup_str(*(char *const *)s, &rc); return rc;
    case PMIX_PROC_NSPACE: PMIx_Load_nspace(d, s); return PMIX_SUCCESS;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX: return bo_copy(d, s);
    case PMIX_VALUE: return PMIx_Value_xfer(d, s);
    case PMIX_INFO: return PMIx_Info_xfer(d, s);
    case PMIX_PDATA: {
        pmix_pdata_t *pd = d;
        const pmix_pdata_t *ps = s;
        pd->proc = ps->proc;
        PMIx_Load_key(pd->key, ps->key);
        return PMIx_Value_xfer(&pd->value, &ps->value);
    }
    case PMIX_APP: {
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
    case PMIX_QUERY: {
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
    case PMIX_PROC_INFO: {
        pmix_proc_info_t *pd = d;
        const pmix_proc_info_t *ps = s;
        *pd = *ps;
        pd->hostname = NULL;
        pd->executable_name = NULL;
        pd->hostname = dup_str(ps->hostname, &rc);
        pd->executable_name = dup_str(ps->executable_name, &rc);
        break;
    }
    case PMIX_DATA_ARRAY: {
        pmix_data_array_t *dd = d;
        const pmix_data_array_t *ds = s;
        dd->type = ds->type;
        rc = dup_array(&dd->array, ds->array, ds->size, ds->type);
        dd->size = dd->array != NULL ? ds->size : 0;
        break;
    }
    case PMIX_ENVAR: {
        pmix_envar_t *ed = d;
        const pmix_envar_t *es = s;
        PMIx_Envar_construct(ed);
        ed->envar = dup_str(es->envar, &rc);
        ed->value = dup_str(es->value, &rc);
        ed->separator = es->separator;
        break;
    }
    case PMIX_COORD: {
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
    case PMIX_REGATTR: {
        pmix_regattr_t *rd = d;
        const pmix_regattr_t *rs = s;
        PMIx_Regattr_construct(rd);
        rd->name = dup_str(rs->name, &rc);
        PMIx_Load_key(rd->string, rs->string);
        rd->type = rs->type;
        rd->description = dup_argv(rs->description, &rc);
        break;
    }
    case PMIX_TOPO: {
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
    case PMIX_PROC_CPUSET: {
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
    case PMIX_GEOMETRY: {
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
    case PMIX_DEVICE_DIST: {
        pmix_device_distance_t *dd = d;
        const pmix_device_distance_t *ds = s;
        *dd = *ds;
        dd->uuid = NULL;
        dd->osname = NULL;
        dd->uuid = dup_str(ds->uuid, &rc);
        dd->osname = dup_str(ds->osname, &rc);
        break;
    }
    case PMIX_ENDPOINT: {
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
    case PMIX_DATA_BUFFER: {
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
    case PMIX_PROC_STATS: {
        pmix_proc_stats_t *pd = d;
        const pmix_proc_stats_t *ps = s;
        *pd = *ps;
        pd->node = NULL;
        pd->cmd = NULL;
        pd->node = dup_str(ps->node, &rc);
        pd->cmd = dup_str(ps->cmd, &rc);
        break;
    }
    case PMIX_DISK_STATS: {
        pmix_disk_stats_t *dd = d;
        const pmix_disk_stats_t *ds = s;
        *dd = *ds;
        dd->disk = NULL;
        dd->disk = dup_str(ds->disk, &rc);
        break;
    }
    case PMIX_NET_STATS: {
        pmix_net_stats_t *nd = d;
        const pmix_net_stats_t *ns = s;
        *nd = *ns;
        nd->net_interface = NULL;
        nd->net_interface = dup_str(ns->net_interface, &rc);
        break;
    }
    case PMIX_NODE_STATS: {
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
    default:
        if (sz == 0) {
            return PMIX_ERR_NOT_SUPPORTED;
        }
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
    switch (t) {
    case PMIX_BOOL: return *(const bool *)a == *(const bool *)b;
    case PMIX_FLOAT: return *(const float *)a == *(const float *)b;
    case PMIX_DOUBLE: return *(const double *)a == *(const double *)b;
    case PMIX_TIMEVAL: {
        const struct timeval *x = a, *y = b;
        return x->tv_sec == y->tv_sec && x->tv_usec == y->tv_usec;
    }
    case PMIX_STRING: return str_equal(*(char *const *)a, *(char *const *)b);
    case PMIX_PROC_NSPACE: return strncmp(a, b, PMIX_MAX_NSLEN) == 0;
    case PMIX_PROC: return px_proc_eq(a, b);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX: return bo_equal(a, b);
    case PMIX_VALUE: return px_value_equal(a, b);
    case PMIX_INFO: {
        const pmix_info_t *x = a, *y = b;
        return strncmp(x->key, y->key, PMIX_MAX_KEYLEN) == 0 &&
               (x->flags & ~(pmix_info_directives_t)PMIX_INFO_ARRAY_END) ==
                   (y->flags & ~(pmix_info_directives_t)PMIX_INFO_ARRAY_END) &&
               px_value_equal(&x->value, &y->value);
    }
    case PMIX_PDATA: {
        const pmix_pdata_t *x = a, *y = b;
        return px_proc_eq(&x->proc, &y->proc) && strncmp(x->key, y->key, PMIX_MAX_KEYLEN) == 0 &&
               px_value_equal(&x->value, &y->value);
    }
    case PMIX_APP: {
        const pmix_app_t *x = a, *y = b;
        return str_equal(x->cmd, y->cmd) && argv_equal(x->argv, y->argv) &&
               argv_equal(x->env, y->env) && str_equal(x->cwd, y->cwd) &&
               x->maxprocs == y->maxprocs &&
               array_equal(x->info, x->ninfo, y->info, y->ninfo, PMIX_INFO);
    }
    case PMIX_QUERY: {
        const pmix_query_t *x = a, *y = b;
        return argv_equal(x->keys, y->keys) &&
               array_equal(x->qualifiers, x->nqual, y->qualifiers, y->nqual, PMIX_INFO);
    }
    case PMIX_PROC_INFO: {
        const pmix_proc_info_t *x = a, *y = b;
        return px_proc_eq(&x->proc, &y->proc) && str_equal(x->hostname, y->hostname) &&
               str_equal(x->executable_name, y->executable_name) && x->pid == y->pid &&
               x->exit_code == y->exit_code && x->state == y->state;
    }
    case PMIX_DATA_ARRAY: {
        const pmix_data_array_t *x = a, *y = b;
        return x->type == y->type && array_equal(x->array, x->size, y->array, y->size, x->type);
    }
    case PMIX_ENVAR: {
        const pmix_envar_t *x = a, *y = b;
        return str_equal(x->envar, y->envar) && str_equal(x->value, y->value) &&
               x->separator == y->separator;
    }
    case PMIX_COORD: {
        const pmix_coord_t *x = a, *y = b;
        return str_equal(x->fabric, y->fabric) && str_equal(x->plane, y->plane) &&
               x->view == y->view && x->dims == y->dims &&
               (x->dims == 0 || (x->coord != NULL && y->coord != NULL &&
                                 memcmp(x->coord, y->coord, x->dims * sizeof(uint32_t)) == 0));
    }
    case PMIX_REGATTR: {
        const pmix_regattr_t *x = a, *y = b;
        return str_equal(x->name, y->name) && strncmp(x->string, y->string, PMIX_MAX_KEYLEN) == 0 &&
               x->type == y->type && argv_equal(x->description, y->description);
    }
    case PMIX_TOPO: {
        const pmix_topology_t *x = a, *y = b;
        return str_equal(x->source, y->source) && x->topology == y->topology;
    }
    case PMIX_PROC_CPUSET: {
        const pmix_cpuset_t *x = a, *y = b;
        return str_equal(x->source, y->source) && x->bitmap == y->bitmap;
    }
    case PMIX_GEOMETRY: {
        const pmix_geometry_t *x = a, *y = b;
        return x->fabric == y->fabric && str_equal(x->uuid, y->uuid) &&
               str_equal(x->osname, y->osname) &&
               array_equal(x->coordinates, x->ncoords, y->coordinates, y->ncoords, PMIX_COORD);
    }
    case PMIX_DEVICE_DIST: {
        const pmix_device_distance_t *x = a, *y = b;
        return str_equal(x->uuid, y->uuid) && str_equal(x->osname, y->osname) &&
               x->type == y->type && x->mindist == y->mindist && x->maxdist == y->maxdist;
    }
    case PMIX_ENDPOINT: {
        const pmix_endpoint_t *x = a, *y = b;
        return str_equal(x->uuid, y->uuid) && str_equal(x->osname, y->osname) &&
               bo_equal(&x->endpt, &y->endpt);
    }
    case PMIX_DATA_BUFFER: {
        const pmix_data_buffer_t *x = a, *y = b;
        return x->bytes_used == y->bytes_used &&
               (x->bytes_used == 0 || memcmp(x->base_ptr, y->base_ptr, x->bytes_used) == 0) &&
               (x->unpack_ptr - x->base_ptr) == (y->unpack_ptr - y->base_ptr);
    }
    case PMIX_PROC_STATS: {
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
    case PMIX_DISK_STATS: {
        const pmix_disk_stats_t *x = a, *y = b;
        return str_equal(x->disk, y->disk) &&
               memcmp(&x->num_reads_completed, &y->num_reads_completed,
                      sizeof(*x) - offsetof(pmix_disk_stats_t, num_reads_completed)) == 0;
    }
    case PMIX_NET_STATS: {
        const pmix_net_stats_t *x = a, *y = b;
        return str_equal(x->net_interface, y->net_interface) &&
               memcmp(&x->num_bytes_recvd, &y->num_bytes_recvd,
                      sizeof(*x) - offsetof(pmix_net_stats_t, num_bytes_recvd)) == 0;
    }
    case PMIX_NODE_STATS: {
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
    default: {
        size_t sz = px_type_size(t);
        return sz != 0 && memcmp(a, b, sz) == 0;
    }
    }
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
