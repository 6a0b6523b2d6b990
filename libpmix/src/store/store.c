/*
 * store.c - the store and its namespaces.
 *
 * The store is one hash table of namespaces. A namespace exists while it
 * holds job-level data or any process: the functions that create one on
 * the way (px_store_ns_get, px_store_pdata_get) are undone by
 * px_store_prune when the operation that needed it fails, so a failed
 * operation never leaves an empty entry behind.
 */
#include "store/px_store_int.h"

#include <stdlib.h>
#include <string.h>

px_store *px_store_create(void)
{
    px_store *s = malloc(sizeof(*s));
    if (s == NULL) {
        return NULL;
    }
    px_htab_init(&s->nss);
    s->hot = NULL;
    s->gblobs = NULL;
    s->seq = 0;
    return s;
}

void px_pdata_destroy(px_pdata *d)
{
    if (d == NULL) {
        return;
    }
    for (int i = 0; i < PX_NSCOPES; i++) {
        px_kvs_clear(&d->scope[i]);
    }
    px_blob_unref(d->blob);
    px_blob_unref(d->commit);
    free(d);
}

static void ns_destroy(px_ns *ns)
{
    px_pdata *d;
    px_job_destroy(ns->job);
    for (size_t i = 0; (d = px_htab_next(&ns->procs, &i)) != NULL;) {
        px_pdata_destroy(d);
    }
    px_htab_fini(&ns->procs);
    free(ns->by_rank);
    free(ns);
}

/* Take `ns` out of the store and free it. */
static void ns_remove(px_store *s, px_ns *ns)
{
    if (s->hot == ns) {
        s->hot = NULL;
    }
    px_htab_remove(&s->nss, ns->name, 0);
    ns_destroy(ns);
}

void px_store_destroy(px_store *s)
{
    px_ns *ns;
    if (s == NULL) {
        return;
    }
    for (size_t i = 0; (ns = px_htab_next(&s->nss, &i)) != NULL;) {
        ns_destroy(ns);
    }
    px_htab_fini(&s->nss);
    while (s->gblobs != NULL) {
        px_gblob *g = s->gblobs;
        s->gblobs = g->next;
        px_gblob_destroy(g);
    }
    free(s);
}

px_ns *px_store_ns(const px_store *s, const char *nspace)
{
    px_ns *ns = s->hot;

    /* the name compared stops at the cached name's end, so an unterminated
     * or over-long argument is read no further than a valid one */
    if (ns != NULL && nspace != NULL && strncmp(ns->name, nspace, PMIX_MAX_NSLEN + 1) == 0) {
        return ns;
    }
    if (!px_store_valid_nspace(nspace)) {
        return NULL;
    }
    ns = px_htab_get(&s->nss, nspace, 0);
    if (ns != NULL) {
        ((px_store *)s)->hot = ns; /* the cache (see struct px_store) */
    }
    return ns;
}

px_ns *px_store_ns_get(px_store *s, const char *nspace)
{
    px_ns *ns = px_store_ns(s, nspace);
    if (ns != NULL || !px_store_valid_nspace(nspace)) {
        return ns;
    }
    size_t len = strlen(nspace);
    ns = malloc(sizeof(*ns) + len + 1);
    if (ns == NULL) {
        return NULL;
    }
    ns->job = NULL;
    ns->born = s->seq;
    ns->len = len;
    ns->in_groups = false;
    px_htab_init(&ns->procs);
    ns->by_rank = NULL;
    ns->nby_rank = 0;
    memcpy(ns->name, nspace, len + 1);
    if (!px_htab_put(&s->nss, ns->name, 0, ns, NULL)) {
        free(ns);
        return NULL;
    }
    return ns;
}

px_pdata *px_store_pdata(const px_store *s, const char *nspace, pmix_rank_t rank)
{
    px_ns *ns = px_store_ns(s, nspace);
    return ns != NULL ? px_ns_proc(ns, rank) : NULL;
}

px_pdata *px_store_pdata_get(px_store *s, const char *nspace, pmix_rank_t rank)
{
    px_ns *ns = px_store_ns_get(s, nspace);
    if (ns == NULL) {
        return NULL;
    }
    return px_store_pdata_get_ns(s, ns, rank);
}

/* Make room in ns->by_rank for `rank` if it is below PX_BY_RANK_MAX and
 * the array stays dense: at most PX_BY_RANK_MIN slots, or two per process
 * the namespace holds (ns->procs.n, the new one included). Otherwise, or if
 * the allocation fails, the process is found through the table instead.
 *
 * The density rule bounds the array by what this store holds, not by the
 * job's size: a client that holds its own rank and a neighbour's in a job
 * of 65,536 keeps 64 slots, not 65,536 (pmixsim runs that many clients in
 * one process, and 512 KiB each made its memory grow with the square of
 * the job's size). A store that holds every rank, as a one-node job's
 * clients do after a collecting fence, still finds them all by array. */
static void by_rank_grow(px_ns *ns, pmix_rank_t rank)
{
    uint32_t cap = ns->nby_rank != 0 ? ns->nby_rank : PX_BY_RANK_MIN;
    px_pdata **v;

    if (rank < ns->nby_rank || rank >= PX_BY_RANK_MAX) {
        return;
    }
    while (cap <= rank) {
        cap *= 2;
    }
    if (cap > PX_BY_RANK_MAX) {
        cap = PX_BY_RANK_MAX;
    }
    if (cap > PX_BY_RANK_MIN && cap / 2 > ns->procs.n) {
        return; /* too sparse: the table serves `rank` until more come */
    }
    v = realloc(ns->by_rank, (size_t)cap * sizeof(*v));
    if (v == NULL) {
        return;
    }
    memset(v + ns->nby_rank, 0, (size_t)(cap - ns->nby_rank) * sizeof(*v));
    /* the ranks it now covers that exist already (created while an
     * earlier growth failed), so that every one below nby_rank is in it */
    px_pdata *d;
    for (size_t i = 0; (d = px_htab_next(&ns->procs, &i)) != NULL;) {
        if (d->rank >= ns->nby_rank && d->rank < cap) {
            v[d->rank] = d;
        }
    }
    ns->by_rank = v;
    ns->nby_rank = cap;
}

px_pdata *px_store_pdata_get_ns(px_store *s, px_ns *ns, pmix_rank_t rank)
{
    const char *nspace = ns->name;
    px_pdata *d = px_ns_proc(ns, rank);
    if (d != NULL) {
        return d;
    }
    d = calloc(1, sizeof(*d));
    if (d == NULL || !px_htab_put(&ns->procs, NULL, rank, d, NULL)) {
        free(d);
        px_store_prune(s, nspace, rank);
        return NULL;
    }
    for (int i = 0; i < PX_NSCOPES; i++) {
        px_htab_init(&d->scope[i]);
    }
    d->rank = rank;
    /* grown with the ranks that exist: a rank it cannot cover stays in the
     * table only, which px_ns_proc then asks */
    by_rank_grow(ns, rank);
    if (rank < ns->nby_rank) {
        ns->by_rank[rank] = d;
    }
    return d;
}

static bool pdata_empty(const px_pdata *d)
{
    for (int i = 0; i < PX_NSCOPES; i++) {
        if (d->scope[i].n != 0) {
            return false;
        }
    }
    return d->blob == NULL && !d->committed;
}

void px_store_prune(px_store *s, const char *nspace, pmix_rank_t rank)
{
    px_ns *ns = px_store_ns(s, nspace);
    if (ns == NULL) {
        return;
    }
    px_pdata *d = px_ns_proc(ns, rank);
    if (d != NULL && pdata_empty(d)) {
        px_htab_remove(&ns->procs, NULL, rank);
        if (rank < ns->nby_rank) {
            ns->by_rank[rank] = NULL;
        }
        px_pdata_destroy(d);
    }
    if (ns->job == NULL && ns->procs.n == 0 && !ns->in_groups) {
        ns_remove(s, ns);
    }
}

bool px_store_has_job(const px_store *s, const char *nspace)
{
    px_ns *ns = px_store_ns(s, nspace);
    return ns != NULL && ns->job != NULL;
}

void px_store_drop_job(px_store *s, const char *nspace)
{
    px_ns *ns = px_store_ns(s, nspace);
    if (ns != NULL) {
        ns_remove(s, ns);
    }
}

pmix_status_t px_store_install_job(px_store *s, const char *nspace, px_job *j)
{
    px_ns *ns = px_store_ns_get(s, nspace);
    if (ns == NULL) {
        px_job_destroy(j);
        return px_store_valid_nspace(nspace) ? PMIX_ERR_NOMEM : PMIX_ERR_BAD_PARAM;
    }
    px_job_destroy(ns->job);
    ns->job = j;
    return PMIX_SUCCESS;
}
