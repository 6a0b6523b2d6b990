/*
 * jobinfo.c - the job-information builder: every job, node, app and
 * process key of a job, made from its job map (px_hostcore.h), for pmixrun,
 * pmixd and pmixsim alike.
 *
 * The keys go into one info array per node, as PMIx_server_register_nspace
 * takes them: job keys at the top level, the registering node's keys next
 * to them (a client asks for PMIX_LOCAL_SIZE without naming its node), one
 * PMIX_NODE_INFO_ARRAY per node described, one PMIX_APP_INFO_ARRAY per app
 * and one PMIX_PROC_DATA per rank described. Types follow what Open MPI
 * 4.1 reads (shared/abi/openmpi-4.1.md): sizes and ids PMIX_UINT32, local
 * and node ranks PMIX_UINT16, ranks PMIX_PROC_RANK, lists PMIX_STRING.
 *
 * Cost: with describe_all the array grows with the job (the node list and
 * maps, every node's and every rank's data); without it, with the node's
 * ranks only, so a simulator that registers thousands of nodes does work
 * per node that does not depend on the job's size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>
#include <pmix_server.h>

#include "px_hostcore.h"

/* ---- px_ivec ---- */

pmix_info_t *px_ivec_next(px_ivec *a, const char *key)
{
    if (a->n == a->cap) {
        size_t cap = a->cap != 0 ? 2 * a->cap : 16;
        pmix_info_t *v = realloc(a->v, cap * sizeof(*v));
        if (v == NULL) {
            return NULL;
        }
        a->v = v;
        a->cap = cap;
    }
    memset(&a->v[a->n], 0, sizeof(a->v[a->n]));
    PMIx_Load_key(a->v[a->n].key, key);
    return &a->v[a->n++];
}

pmix_status_t px_ivec_load(px_ivec *a, const char *key, const void *data, pmix_data_type_t type)
{
    pmix_info_t *e = px_ivec_next(a, key);
    pmix_status_t rc;

    if (e == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rc = PMIx_Value_load(&e->value, data, type);
    if (rc != PMIX_SUCCESS) {
        a->n--;
    }
    return rc;
}

pmix_status_t px_ivec_nest(px_ivec *a, const char *key, px_ivec *from)
{
    pmix_data_array_t *da = malloc(sizeof(*da));
    pmix_info_t *e = da != NULL ? px_ivec_next(a, key) : NULL;

    if (e == NULL) {
        free(da);
        px_ivec_free(from);
        return PMIX_ERR_NOMEM;
    }
    da->type = PMIX_INFO;
    da->size = from->n;
    da->array = from->v;
    e->value.type = PMIX_DATA_ARRAY;
    e->value.data.darray = da;
    from->v = NULL;
    from->n = from->cap = 0;
    return PMIX_SUCCESS;
}

void px_ivec_free(px_ivec *a)
{
    for (size_t i = 0; i < a->n; i++) {
        PMIx_Info_destruct(&a->v[i]);
    }
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

/* Undo what a failed build appended: `a` back to `n` entries. */
static void ivec_cut(px_ivec *a, size_t n)
{
    while (a->n > n) {
        PMIx_Info_destruct(&a->v[--a->n]);
    }
}

/* ---- the map ---- */

static uint32_t block_ppn(const px_jobmap *m)
{
    if (m->ppn != 0) {
        return m->ppn;
    }
    return m->nnodes != 0 ? (m->nprocs + m->nnodes - 1) / m->nnodes : m->nprocs;
}

uint32_t px_jobmap_node_of(const px_jobmap *m, pmix_rank_t rank)
{
    if (rank >= m->nprocs) {
        return UINT32_MAX;
    }
    if (m->rank_node != NULL) {
        return m->rank_node[rank];
    }
    uint32_t ppn = block_ppn(m);
    return ppn != 0 ? rank / ppn : 0;
}

/* The app of `rank` (its index; apps[0] when the map names none). */
static uint32_t app_of(const px_jobmap *m, pmix_rank_t rank, uint32_t *first)
{
    for (uint32_t a = 0; a < m->napps; a++) {
        if (rank >= m->apps[a].first && rank - m->apps[a].first < m->apps[a].size) {
            *first = m->apps[a].first;
            return a;
        }
    }
    *first = 0;
    return 0;
}

/* What the builder derives from the map for the nodes it describes: for
 * each node its size, leader and ranks; for each rank its local rank. */
typedef struct layout {
    uint32_t lo, hi;     /* the nodes described: lo .. hi - 1 */
    uint32_t *nsize;     /* [hi - lo] ranks on each node */
    pmix_rank_t *leader; /* [hi - lo] its lowest rank */
    char **peers;        /* [hi - lo] "r0,r1,..." */
    uint32_t *ranks;     /* the ranks described, in rank order */
    uint16_t *lrank;     /* [nranks] each one's rank on its node */
    uint32_t nranks;
} layout;

static void layout_free(layout *l)
{
    if (l->peers != NULL) {
        for (uint32_t i = 0; i < l->hi - l->lo; i++) {
            free(l->peers[i]);
        }
    }
    free(l->peers);
    free(l->nsize);
    free(l->leader);
    free(l->ranks);
    free(l->lrank);
}

/* Append ",r" (or "r" first) to *s (length *len, room *cap). */
static int list_add(char **s, size_t *len, size_t *cap, uint32_t r)
{
    if (*len + 12 >= *cap) {
        size_t c = *cap != 0 ? 2 * *cap : 64;
        char *p = realloc(*s, c);
        if (p == NULL) {
            return -1;
        }
        *s = p;
        *cap = c;
    }
    *len += (size_t)snprintf(*s + *len, *cap - *len, "%s%u", *len != 0 ? "," : "", r);
    return 0;
}

static pmix_status_t layout_make(const px_jobmap *m, uint32_t node, layout *l)
{
    uint32_t nn, r, first, last;
    size_t *lens = NULL, *caps = NULL;

    memset(l, 0, sizeof(*l));
    l->lo = m->describe_all ? 0 : node;
    l->hi = m->describe_all ? m->nnodes : node + 1;
    nn = l->hi - l->lo;
    /* the ranks to look at: every one, or the node's block */
    first = 0;
    last = m->nprocs;
    if (!m->describe_all && m->rank_node == NULL) {
        uint32_t ppn = block_ppn(m);
        first = node * ppn < m->nprocs ? node * ppn : m->nprocs;
        last = first + ppn < m->nprocs ? first + ppn : m->nprocs;
    }
    l->nsize = calloc(nn, sizeof(*l->nsize));
    l->leader = calloc(nn, sizeof(*l->leader));
    l->peers = calloc(nn, sizeof(*l->peers));
    lens = calloc(nn, sizeof(*lens));
    caps = calloc(nn, sizeof(*caps));
    l->ranks = malloc((size_t)(last - first + 1) * sizeof(*l->ranks));
    l->lrank = malloc((size_t)(last - first + 1) * sizeof(*l->lrank));
    if (l->nsize == NULL || l->leader == NULL || l->peers == NULL || lens == NULL || caps == NULL ||
        l->ranks == NULL || l->lrank == NULL) {
        goto nomem;
    }
    for (r = first; r < last; r++) {
        uint32_t n = px_jobmap_node_of(m, r);
        if (n < l->lo || n >= l->hi) {
            continue;
        }
        n -= l->lo;
        if (l->nsize[n] == 0) {
            l->leader[n] = r;
        }
        if (list_add(&l->peers[n], &lens[n], &caps[n], r) != 0) {
            goto nomem;
        }
        l->ranks[l->nranks] = r;
        l->lrank[l->nranks++] = (uint16_t)l->nsize[n]++;
    }
    for (uint32_t i = 0; i < nn; i++) {
        if (l->peers[i] == NULL && (l->peers[i] = strdup("")) == NULL) {
            goto nomem;
        }
    }
    free(lens);
    free(caps);
    return PMIX_SUCCESS;
nomem:
    free(lens);
    free(caps);
    layout_free(l);
    memset(l, 0, sizeof(*l));
    return PMIX_ERR_NOMEM;
}

/* ---- the keys ---- */

#define LOAD(v, key, data, type)                                             \
    do {                                                                     \
        if ((rc = px_ivec_load((v), (key), (data), (type))) != PMIX_SUCCESS) \
            goto fail;                                                       \
    } while (0)

static char *node_list(const px_jobmap *m)
{
    size_t len = 1;
    char *s;

    for (uint32_t n = 0; n < m->nnodes; n++) {
        len += strlen(m->node_name(m->ctx, n)) + 1;
    }
    if ((s = malloc(len)) == NULL) {
        return NULL;
    }
    s[0] = '\0';
    for (uint32_t n = 0, at = 0; n < m->nnodes; n++) {
        at += (uint32_t)snprintf(s + at, len - at, "%s%s", n != 0 ? "," : "",
                                 m->node_name(m->ctx, n));
    }
    return s;
}

/* The job's node list, PMIX_NODE_MAP and PMIX_PROC_MAP (describe_all). */
static pmix_status_t add_maps(const px_jobmap *m, const layout *l, px_ivec *out)
{
    pmix_status_t rc = PMIX_ERR_NOMEM;
    char *nodes = node_list(m), *all = NULL, *regex = NULL, *ppn = NULL;
    size_t len = 0, cap = 0;

    if (nodes == NULL) {
        goto fail;
    }
    for (uint32_t n = 0; n < m->nnodes; n++) {
        size_t need = strlen(l->peers[n]) + 2;
        if (len + need >= cap) {
            size_t c = cap != 0 ? 2 * cap : 256;
            while (c <= len + need) {
                c *= 2;
            }
            char *p = realloc(all, c);
            if (p == NULL) {
                goto fail;
            }
            all = p;
            cap = c;
        }
        len += (size_t)snprintf(all + len, cap - len, "%s%s", n != 0 ? ";" : "", l->peers[n]);
    }
    LOAD(out, PMIX_NODE_LIST, nodes, PMIX_STRING);
    if (PMIx_generate_regex(nodes, &regex) == PMIX_SUCCESS && regex != NULL) {
        LOAD(out, PMIX_NODE_MAP, regex, PMIX_STRING);
    }
    if (all != NULL && PMIx_generate_ppn(all, &ppn) == PMIX_SUCCESS && ppn != NULL) {
        LOAD(out, PMIX_PROC_MAP, ppn, PMIX_STRING);
    }
    rc = PMIX_SUCCESS;
fail:
    free(nodes);
    free(all);
    free(regex);
    free(ppn);
    return rc;
}

static pmix_status_t add_node_array(const px_jobmap *m, const layout *l, uint32_t n, px_ivec *out)
{
    px_ivec v = {0};
    pmix_status_t rc;
    uint32_t i = n - l->lo;

    LOAD(&v, PMIX_HOSTNAME, m->node_name(m->ctx, n), PMIX_STRING);
    LOAD(&v, PMIX_NODEID, &n, PMIX_UINT32);
    LOAD(&v, PMIX_NODE_SIZE, &l->nsize[i], PMIX_UINT32);
    LOAD(&v, PMIX_LOCAL_SIZE, &l->nsize[i], PMIX_UINT32);
    LOAD(&v, PMIX_LOCAL_PEERS, l->peers[i], PMIX_STRING);
    if (l->nsize[i] != 0) {
        LOAD(&v, PMIX_LOCALLDR, &l->leader[i], PMIX_PROC_RANK);
    }
    return px_ivec_nest(out, PMIX_NODE_INFO_ARRAY, &v);
fail:
    px_ivec_free(&v);
    return rc;
}

static pmix_status_t add_app_array(const px_jobmap *m, uint32_t a, px_ivec *out)
{
    px_ivec v = {0};
    pmix_status_t rc;
    const px_jobmap_app *app = m->napps != 0 ? &m->apps[a] : NULL;
    uint32_t size = app != NULL ? app->size : m->nprocs;
    pmix_rank_t leader = app != NULL ? app->first : 0;
    char *argv = app != NULL && app->argv != NULL ? PMIx_Argv_join((char **)app->argv, ' ') : NULL;

    if (app != NULL && app->argv != NULL && argv == NULL) {
        return PMIX_ERR_NOMEM;
    }
    LOAD(&v, PMIX_APPNUM, &a, PMIX_UINT32);
    LOAD(&v, PMIX_APP_SIZE, &size, PMIX_UINT32);
    LOAD(&v, PMIX_APPLDR, &leader, PMIX_PROC_RANK);
    if (app != NULL && app->wdir != NULL) {
        LOAD(&v, PMIX_WDIR, app->wdir, PMIX_STRING);
    }
    if (argv != NULL) {
        LOAD(&v, PMIX_APP_ARGV, argv, PMIX_STRING);
    }
    if (app != NULL && app->pset != NULL && app->pset[0] != '\0') {
        LOAD(&v, PMIX_PSET_NAME, app->pset, PMIX_STRING);
    }
    free(argv);
    return px_ivec_nest(out, PMIX_APP_INFO_ARRAY, &v);
fail:
    free(argv);
    px_ivec_free(&v);
    return rc;
}

static pmix_status_t add_proc(const px_jobmap *m, uint32_t node, pmix_rank_t rank, uint16_t lrank,
                              px_ivec *out)
{
    px_ivec v = {0};
    pmix_status_t rc;
    uint32_t first, appnum = app_of(m, rank, &first), nodeid = px_jobmap_node_of(m, rank);
    pmix_rank_t apprank = rank - first;

    LOAD(&v, PMIX_RANK, &rank, PMIX_PROC_RANK); /* first: says whose data follows */
    LOAD(&v, PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
    LOAD(&v, PMIX_NODE_RANK, &lrank, PMIX_UINT16);
    LOAD(&v, PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
    LOAD(&v, PMIX_APPNUM, &appnum, PMIX_UINT32);
    LOAD(&v, PMIX_APP_RANK, &apprank, PMIX_PROC_RANK);
    LOAD(&v, PMIX_NODEID, &nodeid, PMIX_UINT32);
    LOAD(&v, PMIX_HOSTNAME, m->node_name(m->ctx, nodeid), PMIX_STRING);
    if (m->napps != 0 && m->apps[appnum].pset != NULL && m->apps[appnum].pset[0] != '\0') {
        /* one name: an app is in one set (OpenPMIx's type: a string that
         * would list several names with commas) */
        LOAD(&v, PMIX_PSET_NAMES, m->apps[appnum].pset, PMIX_STRING);
    }
    if (nodeid == node && m->local_keys != NULL &&
        (rc = m->local_keys(m->ctx, rank, &v)) != PMIX_SUCCESS) {
        goto fail;
    }
    return px_ivec_nest(out, PMIX_PROC_DATA, &v);
fail:
    px_ivec_free(&v);
    return rc;
}

pmix_status_t px_jobinfo_build(const px_jobmap *m, uint32_t node, px_ivec *out)
{
    size_t start = out->n;
    uint32_t univ = m->univ_size != 0 ? m->univ_size : m->nprocs;
    uint32_t napps = m->napps != 0 ? m->napps : 1, me;
    bool yes = true;
    layout l;
    pmix_status_t rc;

    if (m->nspace == NULL || m->nnodes == 0 || node >= m->nnodes || m->node_name == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if ((rc = layout_make(m, node, &l)) != PMIX_SUCCESS) {
        return rc;
    }
    me = node - l.lo;
    LOAD(out, PMIX_JOBID, m->nspace, PMIX_STRING);
    LOAD(out, PMIX_JOB_SIZE, &m->nprocs, PMIX_UINT32);
    LOAD(out, PMIX_UNIV_SIZE, &univ, PMIX_UINT32);
    LOAD(out, PMIX_MAX_PROCS, &univ, PMIX_UINT32);
    LOAD(out, PMIX_JOB_NUM_APPS, &napps, PMIX_UINT32);
    LOAD(out, PMIX_NUM_NODES, &m->nnodes, PMIX_UINT32);
    if (m->tmpdir != NULL) {
        LOAD(out, PMIX_TMPDIR, m->tmpdir, PMIX_STRING);
        LOAD(out, PMIX_TDIR_RMCLEAN, &yes, PMIX_BOOL);
    }
    if (m->nsdir != NULL) {
        LOAD(out, PMIX_NSDIR, m->nsdir, PMIX_STRING);
    }
    if (m->mapby != NULL) {
        LOAD(out, PMIX_MAPBY, m->mapby, PMIX_STRING);
    }
    if (m->bindto != NULL) {
        LOAD(out, PMIX_BINDTO, m->bindto, PMIX_STRING);
    }
    if (m->stop_in_init) {
        pmix_rank_t all = PMIX_RANK_WILDCARD;
        LOAD(out, PMIX_DEBUG_STOP_IN_INIT, &all, PMIX_PROC_RANK);
    }
    if (m->describe_all && (rc = add_maps(m, &l, out)) != PMIX_SUCCESS) {
        goto fail;
    }
    /* this node, where a client asks without naming one */
    LOAD(out, PMIX_HOSTNAME, m->node_name(m->ctx, node), PMIX_STRING);
    LOAD(out, PMIX_NODEID, &node, PMIX_UINT32);
    LOAD(out, PMIX_LOCAL_SIZE, &l.nsize[me], PMIX_UINT32);
    LOAD(out, PMIX_LOCAL_PEERS, l.peers[me], PMIX_STRING);
    if (l.nsize[me] != 0) {
        LOAD(out, PMIX_LOCALLDR, &l.leader[me], PMIX_PROC_RANK);
    }
    for (uint32_t n = l.lo; n < l.hi; n++) {
        if ((rc = add_node_array(m, &l, n, out)) != PMIX_SUCCESS) {
            goto fail;
        }
    }
    for (uint32_t a = 0; a < napps; a++) {
        if ((rc = add_app_array(m, a, out)) != PMIX_SUCCESS) {
            goto fail;
        }
    }
    for (uint32_t i = 0; i < l.nranks; i++) {
        if ((rc = add_proc(m, node, l.ranks[i], l.lrank[i], out)) != PMIX_SUCCESS) {
            goto fail;
        }
    }
    layout_free(&l);
    return PMIX_SUCCESS;
fail:
    layout_free(&l);
    ivec_cut(out, start);
    return rc;
}
