/*
 * job.c - job-level data: loading a host's info array, the index, and
 * lookups.
 *
 * px_store_load_job builds a complete new px_job from the info array and
 * only then swaps it in for the old one (px_store_install_job), so a
 * rejected array or a failed allocation leaves the store as it was. While
 * a job is being built nothing else can see it, which is why the builders
 * below (px_job_rank, px_job_node, px_job_app) only promise not to leak on
 * failure: the caller throws the half-built job away.
 *
 * The info array is sorted into four kinds of sets:
 *   - job keys: plain entries, the contents of PMIX_SESSION_INFO_ARRAY
 *     (without its PMIX_SESSION_ID) and of PMIX_JOB_INFO_ARRAY;
 *   - rank keys: PMIX_PROC_DATA, a data array of infos led by PMIX_RANK;
 *   - node keys: PMIX_NODE_INFO_ARRAY, identified by PMIX_NODEID and/or
 *     PMIX_HOSTNAME anywhere in the array;
 *   - app keys: PMIX_APP_INFO_ARRAY, identified by PMIX_APPNUM.
 * Identifiers stay keys of their set (Get of PMIX_HOSTNAME for a node, of
 * PMIX_RANK for a rank works). Several arrays for the same rank, node or
 * app merge, later keys replacing earlier ones.
 *
 * Each entry is encoded (str key, value) into the job's buffer as it is
 * loaded, and indexed (px_store_int.h); a PMIX_QUALIFIED_VALUE is kept
 * under its qualified key. A lookup for a rank falls back from the rank's
 * keys to its node (found by the rank's PMIX_NODEID, or its
 * PMIX_HOSTNAME), its app (its PMIX_APPNUM) and the job keys: each step is
 * a binary search of the set's part of the index.
 */
#include "common/px_common.h"
#include "store/px_store_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- building ---- */

px_job *px_job_create(void)
{
    px_job *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        return NULL;
    }
    px_buf_init(&j->build);
    j->nsets = 1; /* PX_JOB_SET */
    px_htab_init(&j->ranks);
    px_htab_init(&j->node_ids);
    px_htab_init(&j->node_names);
    px_htab_init(&j->app_ids);
    return j;
}

static void groups_clear(px_grouplist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i]->name);
        free(l->v[i]);
    }
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

void px_job_destroy(px_job *j)
{
    px_rankdata *rd;
    if (j == NULL) {
        return;
    }
    free(j->data);
    px_buf_fini(&j->build);
    free(j->ent);
    free(j->sets);
    for (size_t i = 0; (rd = px_htab_next(&j->ranks, &i)) != NULL;) {
        free(rd);
    }
    px_htab_fini(&j->ranks);
    groups_clear(&j->nodes);
    px_htab_fini(&j->node_ids);
    px_htab_fini(&j->node_names);
    groups_clear(&j->apps);
    px_htab_fini(&j->app_ids);
    free(j);
}

px_rankdata *px_job_rank(px_job *j, pmix_rank_t rank)
{
    px_rankdata *rd = px_htab_get(&j->ranks, NULL, rank);
    if (rd != NULL) {
        return rd;
    }
    rd = malloc(sizeof(*rd));
    if (rd == NULL) {
        return NULL;
    }
    rd->set = j->nsets;
    rd->rank = rank;
    if (!px_htab_put(&j->ranks, NULL, rank, rd, NULL)) {
        free(rd);
        return NULL;
    }
    j->nsets++;
    return rd;
}

/* A new empty group with a set of its own, owned by `l` (NULL on allocation failure). */
static px_group *group_new(px_job *j, px_grouplist *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap != 0 ? l->cap * 2 : 4;
        px_group **v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) {
            return NULL;
        }
        l->v = v;
        l->cap = cap;
    }
    px_group *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        return NULL;
    }
    g->set = j->nsets++;
    l->v[l->n++] = g;
    return g;
}

pmix_status_t px_job_node(px_job *j, bool has_id, uint32_t id, const char *name, px_group **out)
{
    px_group *by_id = has_id ? px_htab_get(&j->node_ids, NULL, id) : NULL;
    px_group *by_name = name != NULL ? px_htab_get(&j->node_names, name, 0) : NULL;
    if (!has_id && name == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (by_id != NULL && by_name != NULL && by_id != by_name) {
        return PMIX_ERR_BAD_PARAM;
    }
    px_group *g = by_id != NULL ? by_id : by_name;
    if (g == NULL) {
        g = group_new(j, &j->nodes);
        if (g == NULL) {
            return PMIX_ERR_NOMEM;
        }
    }
    if (has_id && g->has_id && g->id != id) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (name != NULL && g->name != NULL && strcmp(g->name, name) != 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (has_id && !g->has_id) {
        if (!px_htab_put(&j->node_ids, NULL, id, g, NULL)) {
            return PMIX_ERR_NOMEM;
        }
        g->has_id = true;
        g->id = id;
    }
    if (name != NULL && g->name == NULL) {
        char *copy = strdup(name);
        if (copy == NULL || !px_htab_put(&j->node_names, copy, 0, g, NULL)) {
            free(copy);
            return PMIX_ERR_NOMEM;
        }
        g->name = copy;
    }
    *out = g;
    return PMIX_SUCCESS;
}

px_group *px_job_app(px_job *j, uint32_t appnum)
{
    px_group *g = px_htab_get(&j->app_ids, NULL, appnum);
    if (g != NULL) {
        return g;
    }
    g = group_new(j, &j->apps);
    if (g == NULL) {
        return NULL;
    }
    g->has_id = true;
    g->id = appnum;
    if (!px_htab_put(&j->app_ids, NULL, appnum, g, NULL)) {
        return NULL; /* g stays owned by the list */
    }
    return g;
}

/* ---- the index ---- */

pmix_status_t px_job_add(px_job *j, uint32_t set, const char *key, size_t off, size_t len)
{
    if (off > UINT32_MAX || len > UINT32_MAX - off) {
        return PMIX_ERR_NOMEM; /* the job's data would pass 4 GiB */
    }
    if (j->nent == j->capent) {
        size_t cap = j->capent != 0 ? j->capent * 2 : 16;
        px_jent *v = realloc(j->ent, cap * sizeof(*v));
        if (v == NULL) {
            return PMIX_ERR_NOMEM;
        }
        j->ent = v;
        j->capent = cap;
    }
    j->ent[j->nent++] = (px_jent){.set = set,
                                  .hash = px_hash_bytes(key, strlen(key)),
                                  .off = (uint32_t)off,
                                  .len = (uint32_t)len};
    return PMIX_SUCCESS;
}

static int cmp_ent(const void *pa, const void *pb)
{
    const px_jent *a = pa, *b = pb;
    if (a->set != b->set) {
        return a->set < b->set ? -1 : 1;
    }
    if (a->hash != b->hash) {
        return a->hash < b->hash ? -1 : 1;
    }
    return a->off < b->off ? -1 : a->off > b->off;
}

pmix_status_t px_job_seal(px_job *j)
{
    j->sets = calloc(j->nsets, sizeof(*j->sets));
    if (j->sets == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (j->nent == 0) {
        return PMIX_SUCCESS;
    }
    if (j->nent < j->capent) { /* kept for the job's life: give back what doubling left */
        px_jent *v = realloc(j->ent, j->nent * sizeof(*v));
        if (v != NULL) {
            j->ent = v;
            j->capent = j->nent;
        }
    }
    /* A client's entries come in order when its server encoded them (set
     * by set, each set by hash): then there is nothing to sort. */
    bool sorted = true;
    for (size_t i = 1; i < j->nent && sorted; i++) {
        sorted = cmp_ent(&j->ent[i - 1], &j->ent[i]) < 0;
    }
    if (!sorted) {
        qsort(j->ent, j->nent, sizeof(*j->ent), cmp_ent);
    }
    for (size_t i = 0; i < j->nent; i++) {
        px_jset *s = &j->sets[j->ent[i].set];
        if (s->n++ == 0) {
            s->first = (uint32_t)i;
        }
    }
    return PMIX_SUCCESS;
}

/* The key of an entry: its bytes in the job's data (not NUL-terminated). */
static void ent_key(const px_job *j, const px_jent *e, const char **key, size_t *n)
{
    px_buf b;
    uint32_t len = 0;
    const void *p = NULL;
    px_buf_view(&b, j->data + e->off, e->len);
    /* checked when the entry was added: cannot fail */
    (void)px_unpack_u32(&b, &len);
    (void)px_unpack_raw_view(&b, &p, len);
    *key = p;
    *n = len;
}

static bool ent_is(const px_job *j, const px_jent *e, const char *key, size_t n)
{
    const char *k;
    size_t kn;
    ent_key(j, e, &k, &kn);
    return kn == n && memcmp(k, key, n) == 0;
}

/* Whether a later entry of the same set replaces `e` (sorted index). */
static bool ent_replaced(const px_job *j, const px_jent *e, const px_jent *end)
{
    const char *k;
    size_t n;
    ent_key(j, e, &k, &n);
    for (const px_jent *f = e + 1; f < end && f->hash == e->hash; f++) {
        if (ent_is(j, f, k, n)) {
            return true;
        }
    }
    return false;
}

size_t px_job_each(const px_job *j, uint32_t set, void (*fn)(void *arg, const px_jent *e),
                   void *arg)
{
    size_t count = 0;
    if (j->sets == NULL || set >= j->nsets || j->sets[set].n == 0) {
        return 0;
    }
    const px_jent *e = j->ent + j->sets[set].first, *end = e + j->sets[set].n;
    for (; e < end; e++) {
        if (!ent_replaced(j, e, end)) {
            if (fn != NULL) {
                fn(arg, e);
            }
            count++;
        }
    }
    return count;
}

/* The entry of `key` in `set` (the last one added), or NULL. */
static const px_jent *ent_find(const px_job *j, uint32_t set, const char *key)
{
    size_t n = strlen(key);
    uint32_t h = px_hash_bytes(key, n);
    const px_jent *found = NULL;
    if (j->sets == NULL || set >= j->nsets || j->sets[set].n == 0) {
        return NULL;
    }
    const px_jent *lo = j->ent + j->sets[set].first, *end = lo + j->sets[set].n;
    size_t count = (size_t)(end - lo);
    while (count > 0) { /* the first entry with a hash >= h */
        size_t half = count / 2;
        if (lo[half].hash < h) {
            lo += half + 1;
            count -= half + 1;
        } else {
            count = half;
        }
    }
    for (; lo < end && lo->hash == h; lo++) {
        if (ent_is(j, lo, key, n)) {
            found = lo;
        }
    }
    return found;
}

/* Decode the value of entry `e` into `v`. */
static pmix_status_t ent_value(const px_job *j, const px_jent *e, pmix_value_t *v)
{
    px_buf b;
    uint32_t len;
    const void *key;
    pmix_status_t rc;
    px_buf_view(&b, j->data + e->off, e->len);
    rc = px_unpack_u32(&b, &len);
    if (rc == PMIX_SUCCESS) {
        rc = px_unpack_raw_view(&b, &key, len);
    }
    return rc == PMIX_SUCCESS ? px_unpack_value(&b, v) : rc;
}

/* ---- reading info values ---- */

/* Any integer type holding a number that fits a uint32_t. */
static bool value_u32(const pmix_value_t *v, uint32_t *out)
{
    uint64_t u;
    if (px_value_get_number(v, &u) != PMIX_SUCCESS || u > UINT32_MAX) {
        return false;
    }
    *out = (uint32_t)u;
    return true;
}

/* A non-empty string value. */
static const char *value_str(const pmix_value_t *v)
{
    if (v->type != PMIX_STRING || v->data.string == NULL || v->data.string[0] == '\0') {
        return NULL;
    }
    return v->data.string;
}

/* The infos of a PMIX_DATA_ARRAY of PMIX_INFO, or NULL. */
static const pmix_info_t *value_infos(const pmix_value_t *v, size_t *n)
{
    const pmix_data_array_t *da = v->type == PMIX_DATA_ARRAY ? v->data.darray : NULL;
    if (da == NULL || da->type != PMIX_INFO || (da->size != 0 && da->array == NULL)) {
        return NULL;
    }
    *n = da->size;
    return da->array;
}

/* The value of `key` among infos, or NULL. */
static const pmix_value_t *infos_find(const pmix_info_t *info, size_t n, const char *key)
{
    const pmix_info_t *i = px_info_find(info, n, key);
    return i != NULL ? &i->value : NULL;
}

static bool is_key(const pmix_info_t *info, const char *key)
{
    return strncmp(info->key, key, sizeof(info->key)) == 0;
}

/* ---- loading ---- */

/* Encode (key, v) into the job's buffer as an entry of `set`. A value that
 * cannot be encoded fails with the encoder's status. */
static pmix_status_t put(px_job *j, uint32_t set, const char *key, const pmix_value_t *v)
{
    size_t off = j->build.size;
    pmix_status_t rc;
    px_pack_str(&j->build, key);
    px_pack_value(&j->build, v);
    rc = px_buf_status(&j->build);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    return px_job_add(j, set, key, off, j->build.size - off);
}

/* Every entry of info[] into `set`, but the key `skip` (may be NULL). An
 * empty or overlong key fails with PMIX_ERR_BAD_PARAM. */
static pmix_status_t put_infos(px_job *j, uint32_t set, const pmix_info_t *info, size_t n,
                               const char *skip)
{
    for (size_t i = 0; i < n; i++) {
        char qkey[PMIX_MAX_KEYLEN + 1];
        const pmix_value_t *v = &info[i].value;
        const char *key = info[i].key;
        pmix_status_t rc;
        if (!px_store_valid_key(key)) {
            return PMIX_ERR_BAD_PARAM;
        }
        if (skip != NULL && strcmp(key, skip) == 0) {
            continue;
        }
        if (strcmp(key, PMIX_QUALIFIED_VALUE) == 0) {
            rc = px_store_qualified_entry(&info[i].value, qkey, &v);
            if (rc != PMIX_SUCCESS) {
                return rc;
            }
            key = qkey;
        }
        rc = put(j, set, key, v);
        if (rc != PMIX_SUCCESS) {
            return rc;
        }
    }
    return PMIX_SUCCESS;
}

static pmix_status_t load_proc_data(px_job *j, const pmix_info_t *a, size_t n)
{
    uint32_t rank;
    if (n == 0 || !is_key(&a[0], PMIX_RANK) || !value_u32(&a[0].value, &rank)) {
        return PMIX_ERR_BAD_PARAM;
    }
    px_rankdata *rd = px_job_rank(j, rank);
    if (rd == NULL) {
        return PMIX_ERR_NOMEM;
    }
    return put_infos(j, rd->set, a, n, NULL);
}

static pmix_status_t load_node(px_job *j, const pmix_info_t *a, size_t n)
{
    const pmix_value_t *idv = infos_find(a, n, PMIX_NODEID);
    const pmix_value_t *namev = infos_find(a, n, PMIX_HOSTNAME);
    const char *name = NULL;
    uint32_t id = 0;
    px_group *g;
    if ((idv == NULL && namev == NULL) || (idv != NULL && !value_u32(idv, &id)) ||
        (namev != NULL && (name = value_str(namev)) == NULL)) {
        return PMIX_ERR_BAD_PARAM;
    }
    pmix_status_t rc = px_job_node(j, idv != NULL, id, name, &g);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    return put_infos(j, g->set, a, n, NULL);
}

static pmix_status_t load_app(px_job *j, const pmix_info_t *a, size_t n)
{
    const pmix_value_t *idv = infos_find(a, n, PMIX_APPNUM);
    uint32_t appnum;
    if (idv == NULL || !value_u32(idv, &appnum)) {
        return PMIX_ERR_BAD_PARAM;
    }
    px_group *g = px_job_app(j, appnum);
    if (g == NULL) {
        return PMIX_ERR_NOMEM;
    }
    return put_infos(j, g->set, a, n, NULL);
}

static pmix_status_t load_one(px_job *j, const pmix_info_t *info)
{
    const pmix_info_t *a;
    size_t n;
    bool proc = is_key(info, PMIX_PROC_DATA), node = is_key(info, PMIX_NODE_INFO_ARRAY);
    bool app = is_key(info, PMIX_APP_INFO_ARRAY), session = is_key(info, PMIX_SESSION_INFO_ARRAY);
    bool job = is_key(info, PMIX_JOB_INFO_ARRAY);
    if (!proc && !node && !app && !session && !job) {
        if (!px_store_valid_key(info->key)) {
            return PMIX_ERR_BAD_PARAM;
        }
        return put_infos(j, PX_JOB_SET, info, 1, NULL); /* also qualified values */
    }
    if ((a = value_infos(&info->value, &n)) == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (proc) {
        return load_proc_data(j, a, n);
    }
    if (node) {
        return load_node(j, a, n);
    }
    if (app) {
        return load_app(j, a, n);
    }
    return put_infos(j, PX_JOB_SET, a, n, session ? PMIX_SESSION_ID : NULL);
}

pmix_status_t px_store_load_job(px_store *s, const char *nspace, const pmix_info_t info[],
                                size_t ninfo)
{
    if (s == NULL || !px_store_valid_nspace(nspace) || (info == NULL && ninfo != 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    px_job *j = px_job_create();
    if (j == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pmix_status_t rc = PMIX_SUCCESS;
    for (size_t i = 0; rc == PMIX_SUCCESS && i < ninfo; i++) {
        rc = load_one(j, &info[i]);
    }
    if (rc == PMIX_SUCCESS) {
        j->data = px_buf_steal(&j->build, &j->len);
        if (j->len != 0 && j->data == NULL) {
            rc = PMIX_ERR_NOMEM;
        }
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_job_seal(j);
    }
    if (rc == PMIX_SUCCESS) {
        rc = px_job_encode(j); /* as it travels: the handshake sends these bytes */
    }
    if (rc != PMIX_SUCCESS) {
        px_job_destroy(j);
        return rc;
    }
    return px_store_install_job(s, nspace, j);
}

/* ---- lookups ---- */

/* The set of a group, or none (UINT32_MAX: no such set) for NULL. */
static uint32_t group_set(const px_group *g)
{
    return g != NULL ? g->set : UINT32_MAX;
}

/* The node a rank lives on: by its PMIX_NODEID, else its PMIX_HOSTNAME. */
static const px_group *rank_node(const px_job *j, const px_rankdata *rd)
{
    const px_group *g = NULL;
    const px_jent *e = ent_find(j, rd->set, PMIX_NODEID);
    pmix_value_t v;
    uint32_t id;
    PMIx_Value_construct(&v);
    if (e != NULL && ent_value(j, e, &v) == PMIX_SUCCESS && value_u32(&v, &id)) {
        g = px_htab_get(&j->node_ids, NULL, id);
    } else if ((e = ent_find(j, rd->set, PMIX_HOSTNAME)) != NULL) {
        PMIx_Value_destruct(&v);
        if (ent_value(j, e, &v) == PMIX_SUCCESS && value_str(&v) != NULL) {
            g = px_htab_get(&j->node_names, value_str(&v), 0);
        }
    }
    PMIx_Value_destruct(&v);
    return g;
}

static const px_group *rank_app(const px_job *j, const px_rankdata *rd)
{
    const px_group *g = NULL;
    const px_jent *e = ent_find(j, rd->set, PMIX_APPNUM);
    pmix_value_t v;
    uint32_t appnum;
    PMIx_Value_construct(&v);
    if (e != NULL && ent_value(j, e, &v) == PMIX_SUCCESS && value_u32(&v, &appnum)) {
        g = px_htab_get(&j->app_ids, NULL, appnum);
    }
    PMIx_Value_destruct(&v);
    return g;
}

/* The node or app `qual` names: *found false if it names neither. */
static pmix_status_t qualified_group(const px_job *j, const pmix_info_t qual[], size_t nqual,
                                     const px_group **g, bool *found)
{
    const pmix_value_t *idv = infos_find(qual, nqual, PMIX_NODEID);
    const pmix_value_t *namev = infos_find(qual, nqual, PMIX_HOSTNAME);
    const pmix_value_t *appv = infos_find(qual, nqual, PMIX_APPNUM);
    uint32_t id;
    *found = true;
    if (idv != NULL) {
        if (!value_u32(idv, &id)) {
            return PMIX_ERR_BAD_PARAM;
        }
        *g = px_htab_get(&j->node_ids, NULL, id);
    } else if (namev != NULL) {
        const char *name = value_str(namev);
        if (name == NULL) {
            return PMIX_ERR_BAD_PARAM;
        }
        *g = px_htab_get(&j->node_names, name, 0);
    } else if (appv != NULL) {
        if (!value_u32(appv, &id)) {
            return PMIX_ERR_BAD_PARAM;
        }
        *g = px_htab_get(&j->app_ids, NULL, id);
    } else {
        *found = false;
    }
    return PMIX_SUCCESS;
}

static pmix_status_t get_job(const px_store *s, const char *nspace, pmix_rank_t rank,
                             const char *key, const pmix_info_t qual[], size_t nqual,
                             pmix_value_t **out);

pmix_status_t px_store_get_job(const px_store *s, const char *nspace, pmix_rank_t rank,
                               const char *key, const pmix_info_t qual[], size_t nqual,
                               pmix_value_t **out)
{
    char qkey[PMIX_MAX_KEYLEN + 1];
    const char *alias;
    pmix_status_t rc;

    if (s == NULL || key == NULL || out == NULL || (qual == NULL && nqual != 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (px_store_qualified_key(key, qual, nqual, qkey, sizeof(qkey)) < 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    rc = get_job(s, nspace, rank, qkey, qual, nqual, out);
    alias = px_key_alias(key);
    if (rc == PMIX_ERR_NOT_FOUND && alias != NULL) {
        if (px_store_qualified_key(alias, qual, nqual, qkey, sizeof(qkey)) < 0) {
            return PMIX_ERR_BAD_PARAM;
        }
        rc = get_job(s, nspace, rank, qkey, qual, nqual, out);
    }
    return rc;
}

static pmix_status_t get_job(const px_store *s, const char *nspace, pmix_rank_t rank,
                             const char *key, const pmix_info_t qual[], size_t nqual,
                             pmix_value_t **out)
{
    if (s == NULL || key == NULL || out == NULL || (qual == NULL && nqual != 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    const px_ns *ns = px_store_ns(s, nspace);
    const px_job *j = ns != NULL ? ns->job : NULL;
    if (j == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    const px_jent *e = NULL;
    const px_group *g = NULL;
    bool qualified;
    pmix_status_t rc = qualified_group(j, qual, nqual, &g, &qualified);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    if (qualified) {
        e = ent_find(j, group_set(g), key);
    } else if (rank == PMIX_RANK_WILDCARD) {
        e = ent_find(j, PX_JOB_SET, key);
    } else {
        const px_rankdata *rd = px_htab_get(&j->ranks, NULL, rank);
        if (rd != NULL) {
            e = ent_find(j, rd->set, key);
            if (e == NULL) {
                e = ent_find(j, group_set(rank_node(j, rd)), key);
            }
            if (e == NULL) {
                e = ent_find(j, group_set(rank_app(j, rd)), key);
            }
        }
        if (e == NULL) {
            e = ent_find(j, PX_JOB_SET, key);
        }
    }
    if (e == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    pmix_value_t *v = PMIx_Value_create(1);
    if (v == NULL) {
        return PMIX_ERR_NOMEM;
    }
    rc = ent_value(j, e, v);
    if (rc != PMIX_SUCCESS) {
        PMIx_Value_free(v, 1);
        return rc;
    }
    *out = v;
    return PMIX_SUCCESS;
}
