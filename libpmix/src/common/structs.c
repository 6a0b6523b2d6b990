/*
 * structs.c: construct/destruct/create/free for the small fabric and
 * resource structs: byte objects, envars, coordinates, geometries,
 * endpoints, device distances, topologies, cpusets and fabrics.
 *
 * Each destruct frees exactly what the struct owns (its strings, its nested
 * arrays) and leaves it constructed. Topology and cpuset handles are not
 * owned (see pmix_common.h) and are only forgotten, never freed.
 */
#include <stdlib.h>

#include <hwloc.h>
#include <string.h>

#include "px_common.h"

/* ---- byte objects ---- */

void PMIx_Byte_object_construct(pmix_byte_object_t *b)
{
    if (b != NULL) {
        b->bytes = NULL;
        b->size = 0;
    }
}

void PMIx_Byte_object_destruct(pmix_byte_object_t *b)
{
    if (b != NULL) {
        free(b->bytes);
        PMIx_Byte_object_construct(b);
    }
}

pmix_byte_object_t *PMIx_Byte_object_create(size_t n)
{
    return px_elems_alloc(n, PMIX_BYTE_OBJECT);
}

void PMIx_Byte_object_free(pmix_byte_object_t *b, size_t n)
{
    px_elems_free(b, n, PMIX_BYTE_OBJECT);
}

void PMIx_Byte_object_load(pmix_byte_object_t *b, char *d, size_t sz)
{
    if (b != NULL) {
        b->bytes = d;
        b->size = d != NULL ? sz : 0;
    }
}

/* ---- environment directives ---- */

void PMIx_Envar_construct(pmix_envar_t *e)
{
    if (e != NULL) {
        e->envar = NULL;
        e->value = NULL;
        e->separator = '\0';
    }
}

void PMIx_Envar_destruct(pmix_envar_t *e)
{
    if (e != NULL) {
        free(e->envar);
        free(e->value);
        PMIx_Envar_construct(e);
    }
}

pmix_envar_t *PMIx_Envar_create(size_t n)
{
    return px_elems_alloc(n, PMIX_ENVAR);
}

void PMIx_Envar_free(pmix_envar_t *e, size_t n)
{
    px_elems_free(e, n, PMIX_ENVAR);
}

void PMIx_Envar_load(pmix_envar_t *e, char *var, char *value, char separator)
{
    if (e == NULL) {
        return;
    }
    pmix_envar_t src = {var, value, separator};
    /* On a failed copy the envar stays empty. */
    (void)px_elems_copy(e, &src, 1, PMIX_ENVAR);
}

/* ---- coordinates ---- */

void PMIx_Coord_construct(pmix_coord_t *m)
{
    if (m != NULL) {
        memset(m, 0, sizeof(*m));
        m->view = PMIX_COORD_VIEW_UNDEF;
    }
}

void PMIx_Coord_destruct(pmix_coord_t *m)
{
    if (m != NULL) {
        free(m->fabric);
        free(m->plane);
        free(m->coord);
        PMIx_Coord_construct(m);
    }
}

pmix_coord_t *PMIx_Coord_create(size_t n)
{
    return px_elems_alloc(n, PMIX_COORD);
}

void PMIx_Coord_free(pmix_coord_t *m, size_t n)
{
    px_elems_free(m, n, PMIX_COORD);
}

/* ---- geometries ---- */

void PMIx_Geometry_construct(pmix_geometry_t *m)
{
    if (m != NULL) {
        memset(m, 0, sizeof(*m));
    }
}

void PMIx_Geometry_destruct(pmix_geometry_t *m)
{
    if (m != NULL) {
        free(m->uuid);
        free(m->osname);
        px_elems_free(m->coordinates, m->ncoords, PMIX_COORD);
        PMIx_Geometry_construct(m);
    }
}

pmix_geometry_t *PMIx_Geometry_create(size_t n)
{
    return px_elems_alloc(n, PMIX_GEOMETRY);
}

void PMIx_Geometry_free(pmix_geometry_t *m, size_t n)
{
    px_elems_free(m, n, PMIX_GEOMETRY);
}

/* ---- endpoints ---- */

void PMIx_Endpoint_construct(pmix_endpoint_t *e)
{
    if (e != NULL) {
        memset(e, 0, sizeof(*e));
    }
}

void PMIx_Endpoint_destruct(pmix_endpoint_t *e)
{
    if (e != NULL) {
        free(e->uuid);
        free(e->osname);
        free(e->endpt.bytes);
        PMIx_Endpoint_construct(e);
    }
}

pmix_endpoint_t *PMIx_Endpoint_create(size_t n)
{
    return px_elems_alloc(n, PMIX_ENDPOINT);
}

void PMIx_Endpoint_free(pmix_endpoint_t *e, size_t n)
{
    px_elems_free(e, n, PMIX_ENDPOINT);
}

/* ---- device distances ---- */

void PMIx_Device_distance_construct(pmix_device_distance_t *d)
{
    if (d != NULL) {
        memset(d, 0, sizeof(*d));
        d->type = PMIX_DEVTYPE_UNKNOWN;
    }
}

void PMIx_Device_distance_destruct(pmix_device_distance_t *d)
{
    if (d != NULL) {
        free(d->uuid);
        free(d->osname);
        PMIx_Device_distance_construct(d);
    }
}

pmix_device_distance_t *PMIx_Device_distance_create(size_t n)
{
    return px_elems_alloc(n, PMIX_DEVICE_DIST);
}

void PMIx_Device_distance_free(pmix_device_distance_t *d, size_t n)
{
    px_elems_free(d, n, PMIX_DEVICE_DIST);
}

/* ---- topologies and cpusets ---- */

void PMIx_Topology_construct(pmix_topology_t *t)
{
    if (t != NULL) {
        t->source = NULL;
        t->topology = NULL;
    }
}

/* A topology or cpuset whose source is "hwloc" owns its hwloc object:
 * PMIx_Load_topology, PMIx_Get_cpuset and PMIx_Parse_cpuset_string make
 * one, copies duplicate it, and the destructors free it. Handles of any
 * other source are only forgotten. */
bool px_is_hwloc(const char *source)
{
    return source != NULL && strcmp(source, "hwloc") == 0;
}

void PMIx_Topology_destruct(pmix_topology_t *topo)
{
    if (topo != NULL) {
        if (topo->topology != NULL && px_is_hwloc(topo->source))
            hwloc_topology_destroy((hwloc_topology_t)topo->topology);
        free(topo->source);
        PMIx_Topology_construct(topo);
    }
}

pmix_topology_t *PMIx_Topology_create(size_t n)
{
    return px_elems_alloc(n, PMIX_TOPO);
}

void PMIx_Topology_free(pmix_topology_t *t, size_t n)
{
    px_elems_free(t, n, PMIX_TOPO);
}

void PMIx_Cpuset_construct(pmix_cpuset_t *c)
{
    if (c != NULL) {
        c->source = NULL;
        c->bitmap = NULL;
    }
}

void PMIx_Cpuset_destruct(pmix_cpuset_t *c)
{
    if (c != NULL) {
        if (c->bitmap != NULL && px_is_hwloc(c->source))
            hwloc_bitmap_free((hwloc_bitmap_t)c->bitmap);
        free(c->source);
        PMIx_Cpuset_construct(c);
    }
}

pmix_cpuset_t *PMIx_Cpuset_create(size_t n)
{
    return px_elems_alloc(n, PMIX_PROC_CPUSET);
}

void PMIx_Cpuset_free(pmix_cpuset_t *c, size_t n)
{
    px_elems_free(c, n, PMIX_PROC_CPUSET);
}

/* ---- fabrics ---- */

void PMIx_Fabric_construct(pmix_fabric_t *p)
{
    if (p != NULL) {
        p->name = NULL;
        p->index = SIZE_MAX;
        p->info = NULL;
        p->ninfo = 0;
        p->module = NULL;
    }
}
