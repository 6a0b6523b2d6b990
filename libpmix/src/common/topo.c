/*
 * topo.c - the Standard's topology helpers, on hwloc: cpusets, cpuset
 * strings, locality strings and relative locality, loading a topology.
 *
 * Nothing is cached: a function that needs the machine's topology loads it
 * and destroys it before it returns (a few milliseconds). A cache, if one is
 * wanted, belongs to the api/ layer.
 *
 * Cpusets. A pmix_cpuset_t made here has source "hwloc" and an
 * hwloc_bitmap_t of OS processor (PU) indexes in `bitmap`.
 *
 * Cpuset strings (PMIx_server_generate_cpuset_string, PMIx_Parse_cpuset_string)
 * are "hwloc:" followed by hwloc's list syntax of OS PU indexes, e.g.
 * "hwloc:0-3,8". The parser also accepts the bare list ("0-3,8").
 *
 * Locality strings (PMIx_server_generate_locality_string) describe where a
 * cpuset sits in the machine, as fields separated by ':', in this order:
 *
 *     NM<list>  NUMA nodes     SK<list>  packages (sockets)
 *     L3<list>  L3 caches      L2<list>  L2 caches      L1<list>  L1 caches
 *     CR<list>  cores          HT<list>  hardware threads (PUs)
 *
 * where <list> is hwloc's list syntax of the hwloc *logical* indexes of the
 * objects of that type that the cpuset intersects, e.g. "SK0:L30:L20:L10:CR0:HT0-1"
 * for a process bound to the two hyperthreads of core 0 (the form Open MPI
 * also writes and parses). A type the machine does not have, or that the
 * cpuset does not touch, has no field. A cpuset that covers every usable PU
 * of the node (an unbound process) gives "UNBOUND": such a process shares
 * nothing but the node with anyone.
 *
 * Ownership: a topology or cpuset made here has the source "hwloc" and
 * owns its hwloc object; PMIx_Topology_destruct / PMIx_Cpuset_destruct
 * free it, and copies duplicate it (common/structs.c).
 *
 * Relative locality (PMIx_Get_relative_locality) of two locality strings of
 * the same node is PMIX_LOCALITY_SHARE_NODE plus one PMIX_LOCALITY_SHARE_*
 * flag for each field type whose lists intersect. Unknown fields are
 * ignored.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include <pmix.h>
#include <pmix_server.h>

#define SOURCE_HWLOC "hwloc"
#define UNBOUND "UNBOUND"

typedef struct loc_level {
    const char *tag;
    hwloc_obj_type_t type;
    pmix_locality_t flag;
} loc_level;

static const loc_level levels[] = {
    {"NM", HWLOC_OBJ_NUMANODE, PMIX_LOCALITY_SHARE_NUMA},
    {"SK", HWLOC_OBJ_PACKAGE, PMIX_LOCALITY_SHARE_PACKAGE},
    {"L3", HWLOC_OBJ_L3CACHE, PMIX_LOCALITY_SHARE_L3CACHE},
    {"L2", HWLOC_OBJ_L2CACHE, PMIX_LOCALITY_SHARE_L2CACHE},
    {"L1", HWLOC_OBJ_L1CACHE, PMIX_LOCALITY_SHARE_L1CACHE},
    {"CR", HWLOC_OBJ_CORE, PMIX_LOCALITY_SHARE_CORE},
    {"HT", HWLOC_OBJ_PU, PMIX_LOCALITY_SHARE_HWTHREAD},
};
#define NLEVELS (sizeof levels / sizeof levels[0])

/* A loaded topology of this machine, or NULL. `light` keeps only PUs (and
 * the NUMA nodes hwloc always keeps): enough for bindings, much faster. */
static hwloc_topology_t topo_load(bool light)
{
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return NULL;
    if (light)
        hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    else
        hwloc_topology_set_cache_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_load(t) != 0) {
        hwloc_topology_destroy(t);
        return NULL;
    }
    return t;
}

static bool is_hwloc_cpuset(const pmix_cpuset_t *c)
{
    return c != NULL && c->bitmap != NULL &&
           (c->source == NULL || strcmp(c->source, SOURCE_HWLOC) == 0);
}

PMIX_EXPORT pmix_status_t PMIx_server_generate_cpuset_string(const pmix_cpuset_t *cpuset,
                                                             char **cpuset_string)
{
    char *list = NULL;
    if (cpuset_string == NULL)
        return PMIX_ERR_BAD_PARAM;
    *cpuset_string = NULL;
    if (!is_hwloc_cpuset(cpuset))
        return cpuset != NULL && cpuset->bitmap != NULL ? PMIX_ERR_NOT_SUPPORTED
                                                        : PMIX_ERR_BAD_PARAM;
    if (hwloc_bitmap_list_asprintf(&list, (hwloc_const_bitmap_t)cpuset->bitmap) < 0 || list == NULL)
        return PMIX_ERR_NOMEM;
    if (asprintf(cpuset_string, "%s:%s", SOURCE_HWLOC, list) < 0) {
        *cpuset_string = NULL;
        free(list);
        return PMIX_ERR_NOMEM;
    }
    free(list);
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Parse_cpuset_string(const char *cpuset_string, pmix_cpuset_t *cpuset)
{
    if (cpuset_string == NULL || cpuset == NULL)
        return PMIX_ERR_BAD_PARAM;
    const char *list = cpuset_string;
    const char *colon = strchr(cpuset_string, ':');
    if (colon != NULL) {
        if ((size_t)(colon - cpuset_string) != strlen(SOURCE_HWLOC) ||
            strncmp(cpuset_string, SOURCE_HWLOC, strlen(SOURCE_HWLOC)) != 0)
            return PMIX_ERR_NOT_SUPPORTED; /* another source than hwloc */
        list = colon + 1;
    }
    /* hwloc's parser accepts trailing garbage; check the syntax first. */
    if (*list == '\0' || strspn(list, "0123456789,-") != strlen(list))
        return PMIX_ERR_BAD_PARAM;
    hwloc_bitmap_t bm = hwloc_bitmap_alloc();
    char *src = strdup(SOURCE_HWLOC);
    if (bm == NULL || src == NULL) {
        hwloc_bitmap_free(bm);
        free(src);
        return PMIX_ERR_NOMEM;
    }
    if (hwloc_bitmap_list_sscanf(bm, list) != 0) {
        hwloc_bitmap_free(bm);
        free(src);
        return PMIX_ERR_BAD_PARAM;
    }
    cpuset->source = src;
    cpuset->bitmap = bm;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Get_cpuset(pmix_cpuset_t *cpuset, pmix_bind_envelope_t ref)
{
    int flags;
    if (cpuset == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (ref == PMIX_CPUBIND_PROCESS)
        flags = HWLOC_CPUBIND_PROCESS;
    else if (ref == PMIX_CPUBIND_THREAD)
        flags = HWLOC_CPUBIND_THREAD;
    else
        return PMIX_ERR_BAD_PARAM;
    hwloc_topology_t t = topo_load(true);
    if (t == NULL)
        return PMIX_ERR_NOT_AVAILABLE;
    hwloc_bitmap_t bm = hwloc_bitmap_alloc();
    char *src = strdup(SOURCE_HWLOC);
    pmix_status_t rc = PMIX_SUCCESS;
    if (bm == NULL || src == NULL)
        rc = PMIX_ERR_NOMEM;
    else if (hwloc_get_cpubind(t, bm, flags) != 0)
        rc = PMIX_ERR_NOT_AVAILABLE;
    hwloc_topology_destroy(t);
    if (rc != PMIX_SUCCESS) {
        hwloc_bitmap_free(bm);
        free(src);
        return rc;
    }
    cpuset->source = src;
    cpuset->bitmap = bm;
    return PMIX_SUCCESS;
}

/* Append "<tag><list>" for the objects of `type` that `cpus` intersects. */
static pmix_status_t append_level(hwloc_topology_t t, hwloc_const_bitmap_t cpus,
                                  const loc_level *lv, char **out, size_t *len)
{
    int n = hwloc_get_nbobjs_by_type(t, lv->type);
    if (n <= 0)
        return PMIX_SUCCESS;
    hwloc_bitmap_t hit = hwloc_bitmap_alloc();
    if (hit == NULL)
        return PMIX_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(t, lv->type, (unsigned)i);
        if (obj != NULL && obj->cpuset != NULL && hwloc_bitmap_intersects(obj->cpuset, cpus))
            hwloc_bitmap_set(hit, obj->logical_index);
    }
    pmix_status_t rc = PMIX_SUCCESS;
    if (!hwloc_bitmap_iszero(hit)) {
        char *list = NULL;
        if (hwloc_bitmap_list_asprintf(&list, hit) < 0 || list == NULL) {
            rc = PMIX_ERR_NOMEM;
        } else {
            size_t add = (*len > 0 ? 1 : 0) + strlen(lv->tag) + strlen(list);
            char *grown = realloc(*out, *len + add + 1);
            if (grown == NULL) {
                rc = PMIX_ERR_NOMEM;
            } else {
                snprintf(grown + *len, add + 1, "%s%s%s", *len > 0 ? ":" : "", lv->tag, list);
                *out = grown;
                *len += add;
            }
            free(list);
        }
    }
    hwloc_bitmap_free(hit);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_server_generate_locality_string(const pmix_cpuset_t *cpuset,
                                                               char **locality)
{
    if (locality == NULL)
        return PMIX_ERR_BAD_PARAM;
    *locality = NULL;
    if (cpuset == NULL || cpuset->bitmap == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (!is_hwloc_cpuset(cpuset))
        return PMIX_ERR_NOT_SUPPORTED;
    hwloc_const_bitmap_t cpus = (hwloc_const_bitmap_t)cpuset->bitmap;
    hwloc_topology_t t = topo_load(false);
    if (t == NULL)
        return PMIX_ERR_NOT_AVAILABLE;

    pmix_status_t rc = PMIX_SUCCESS;
    char *out = NULL;
    size_t len = 0;
    hwloc_const_bitmap_t all = hwloc_topology_get_allowed_cpuset(t);
    if (hwloc_bitmap_iszero(cpus) || !hwloc_bitmap_intersects(cpus, all)) {
        rc = PMIX_ERR_BAD_PARAM; /* no usable processor at all */
    } else if (hwloc_bitmap_isincluded(all, cpus)) {
        out = strdup(UNBOUND);
        if (out == NULL)
            rc = PMIX_ERR_NOMEM;
    } else {
        for (size_t i = 0; i < NLEVELS && rc == PMIX_SUCCESS; i++)
            rc = append_level(t, cpus, &levels[i], &out, &len);
        if (rc == PMIX_SUCCESS && out == NULL)
            rc = PMIX_ERR_BAD_PARAM;
    }
    hwloc_topology_destroy(t);
    if (rc != PMIX_SUCCESS) {
        free(out);
        return rc;
    }
    *locality = out;
    return PMIX_SUCCESS;
}

/* The list of field `tag` in a locality string, parsed; NULL if absent.
 * *bad is set on a field that does not parse. */
static hwloc_bitmap_t field_of(const char *loc, const char *tag, bool *bad)
{
    size_t tl = strlen(tag);
    const char *s = loc;
    while (*s != '\0') {
        const char *end = strchr(s, ':');
        size_t flen = end != NULL ? (size_t)(end - s) : strlen(s);
        if (flen > tl && strncmp(s, tag, tl) == 0) {
            char buf[512];
            size_t ll = flen - tl;
            if (ll >= sizeof buf || strspn(s + tl, "0123456789,-") < ll) {
                *bad = true;
                return NULL;
            }
            memcpy(buf, s + tl, ll);
            buf[ll] = '\0';
            hwloc_bitmap_t bm = hwloc_bitmap_alloc();
            if (bm == NULL || hwloc_bitmap_list_sscanf(bm, buf) != 0) {
                hwloc_bitmap_free(bm);
                *bad = true;
                return NULL;
            }
            return bm;
        }
        if (end == NULL)
            break;
        s = end + 1;
    }
    return NULL;
}

PMIX_EXPORT pmix_status_t PMIx_Get_relative_locality(const char *locality1, const char *locality2,
                                                     pmix_locality_t *locality)
{
    if (locality1 == NULL || locality2 == NULL || locality == NULL)
        return PMIX_ERR_BAD_PARAM;
    pmix_locality_t loc = PMIX_LOCALITY_SHARE_NODE;
    bool bad = false;
    for (size_t i = 0; i < NLEVELS && !bad; i++) {
        hwloc_bitmap_t a = field_of(locality1, levels[i].tag, &bad);
        hwloc_bitmap_t b = bad ? NULL : field_of(locality2, levels[i].tag, &bad);
        if (a != NULL && b != NULL && hwloc_bitmap_intersects(a, b))
            loc |= levels[i].flag;
        hwloc_bitmap_free(a);
        hwloc_bitmap_free(b);
    }
    if (bad)
        return PMIX_ERR_BAD_PARAM;
    *locality = loc;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_Load_topology(pmix_topology_t *topo)
{
    if (topo == NULL)
        return PMIX_ERR_BAD_PARAM;
    if (topo->source != NULL && strcmp(topo->source, SOURCE_HWLOC) != 0)
        return PMIX_ERR_NOT_SUPPORTED;
    if (topo->topology != NULL)
        return PMIX_SUCCESS; /* already loaded */
    char *src = topo->source != NULL ? NULL : strdup(SOURCE_HWLOC);
    if (topo->source == NULL && src == NULL)
        return PMIX_ERR_NOMEM;
    hwloc_topology_t t = topo_load(false);
    if (t == NULL) {
        free(src);
        return PMIX_ERR_NOT_AVAILABLE;
    }
    if (src != NULL)
        topo->source = src;
    topo->topology = t;
    return PMIX_SUCCESS;
}
