/*
 * groups.c - collected data in groups: records with an index, found by
 * binary search instead of being indexed record by record.
 *
 * A server packs its local participants' records for the host as groups
 * (px_store_pack_groups), the host concatenates the groups of every node,
 * and each reader adds the concatenation whole (px_store_add_groups). Adding
 * walks the group headers only: its cost and the directory it keeps are
 * O(groups) -- one group per node and namespace -- not O(processes), so
 * that 65,536 readers of 65,536 records do not make 4 billion index entries.
 *
 * Group format (little-endian, as the codec writes it):
 *     u32  PX_GROUP_MAGIC
 *     str  nspace
 *     u32  nrec
 *     u32  nbytes          of the records after the index
 *     nrec x u32 rank      ascending
 *     nrec x u32 off       of each rank's record, from the first record
 *     records              nrec records (px_store.h), nbytes in all
 *
 * Trust. Adding checks every group header (magic, namespace, an index and
 * records that fit); what is inside a group is checked where a lookup
 * reads it: the record found for a rank must name that namespace and rank
 * and stay inside its group. So a malformed group makes lookups miss or
 * fail, never read outside the blob, and adding it costs no pass over the
 * records. Ranks out of order only make a binary search miss.
 *
 * Newest wins. Every blob or group blob added takes the store's next
 * sequence number; a lookup takes the process's newest record, from its
 * px_pdata or from the newest group blob holding it. A group blob with
 * exactly the processes of an older one (the same fence again) replaces
 * it. Namespaces named by a group blob get a px_ns (kept while the store
 * lives, unless dropped); a group blob's records of a namespace dropped
 * after it was added are not seen again (px_ns.born).
 */
#include "store/px_store_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* One group's header, as read from a blob. */
typedef struct ghead {
    const char *ns; /* not NUL-terminated */
    size_t nslen;
    uint32_t nrec;
    const uint8_t *ranks, *offs, *recs;
    size_t nbytes;
    size_t end; /* offset of the next group */
} ghead;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Read the header of the group at `at` (every reader of a blob walks its
 * headers: plain reads, no codec calls). */
static pmix_status_t read_head(const uint8_t *data, size_t len, size_t at, ghead *h)
{
    const uint8_t *p;
    size_t left, nslen, nrec, nbytes;

    if (at > len || len - at < 8)
        return PMIX_ERR_UNPACK_FAILURE;
    p = data + at;
    left = len - at;
    if (le32(p) != PX_GROUP_MAGIC)
        return PMIX_ERR_UNPACK_FAILURE;
    nslen = le32(p + 4);
    if (nslen == 0 || nslen > PMIX_MAX_NSLEN || left - 8 < nslen + 8)
        return PMIX_ERR_UNPACK_FAILURE;
    h->ns = (const char *)p + 8;
    if (memchr(h->ns, '\0', nslen) != NULL)
        return PMIX_ERR_UNPACK_FAILURE;
    p += 8 + nslen;
    left -= 8 + nslen;
    nrec = le32(p);
    nbytes = le32(p + 4);
    p += 8;
    left -= 8;
    if (nrec > left / 8 || nbytes > left - 8 * nrec)
        return PMIX_ERR_UNPACK_FAILURE;
    h->nslen = nslen;
    h->nrec = (uint32_t)nrec;
    h->ranks = p;
    h->offs = p + 4 * nrec;
    h->recs = p + 8 * nrec;
    h->nbytes = nbytes;
    h->end = (size_t)(h->recs + nbytes - data);
    return PMIX_SUCCESS;
}

static int ns_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c != 0 ? c : (alen > blen) - (alen < blen);
}

pmix_status_t px_store_check_groups(const void *data, size_t len, size_t *ngroups)
{
    size_t at = 0, n = 0;
    ghead h;

    if (data == NULL && len != 0)
        return PMIX_ERR_BAD_PARAM;
    while (at < len) {
        if (read_head(data, len, at, &h) != PMIX_SUCCESS)
            return PMIX_ERR_UNPACK_FAILURE;
        at = h.end;
        n++;
    }
    if (ngroups != NULL)
        *ngroups = n;
    return PMIX_SUCCESS;
}

/* ---- packing ---- */

static int proc_cmp(const void *a, const void *b)
{
    const pmix_proc_t *x = *(const pmix_proc_t *const *)a, *y = *(const pmix_proc_t *const *)b;
    int c = strncmp(x->nspace, y->nspace, PMIX_MAX_NSLEN);

    if (c != 0)
        return c;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* One group: the processes sorted[0..n), all of one namespace. */
static void pack_group(const px_store *s, const pmix_proc_t *const *sorted, size_t n,
                       bool for_local, px_buf *b)
{
    size_t head, idx, start;

    px_pack_u32(b, PX_GROUP_MAGIC);
    px_pack_str(b, sorted[0]->nspace);
    px_pack_u32(b, (uint32_t)n);
    head = b->size;
    px_pack_u32(b, 0); /* nbytes, written below */
    idx = b->size;
    for (size_t i = 0; i < 2 * n; i++)
        px_pack_u32(b, 0); /* the index, written below */
    start = b->size;
    for (size_t i = 0; i < n; i++) {
        size_t at = b->size - start;
        px_store_pack_record(s, sorted[i], for_local, b);
        if (px_buf_status(b) != PMIX_SUCCESS)
            return;
        put_le32(b->data + idx + 4 * i, sorted[i]->rank);
        put_le32(b->data + idx + 4 * (n + i), (uint32_t)at);
    }
    if (b->size - start > UINT32_MAX) {
        b->err = PMIX_ERR_OUT_OF_RESOURCE;
        return;
    }
    put_le32(b->data + head, (uint32_t)(b->size - start));
}

void px_store_pack_groups(const px_store *s, const pmix_proc_t *const procs[], size_t n,
                          bool for_local, px_buf *b)
{
    const pmix_proc_t **sorted;
    size_t first = 0;

    if (n == 0)
        return;
    sorted = malloc(n * sizeof(*sorted));
    if (sorted == NULL) {
        if (b->err == PMIX_SUCCESS)
            b->err = PMIX_ERR_NOMEM;
        return;
    }
    memcpy(sorted, procs, n * sizeof(*sorted));
    qsort(sorted, n, sizeof(*sorted), proc_cmp);
    for (size_t i = 1; i <= n; i++) {
        if (i == n || strncmp(sorted[i]->nspace, sorted[first]->nspace, PMIX_MAX_NSLEN) != 0) {
            pack_group(s, sorted + first, i - first, for_local, b);
            first = i;
        }
    }
    free(sorted);
}

/* ---- adding ---- */

void px_gblob_destroy(px_gblob *g)
{
    if (g == NULL)
        return;
    px_blob_unref(g->blob);
    free(g->goff);
    free(g);
}

/* True if `a` and `b` hold exactly the same processes, group by group. */
static bool same_procs(const px_gblob *a, const px_gblob *b)
{
    if (a->ngroups != b->ngroups)
        return false;
    for (uint32_t i = 0; i < a->ngroups; i++) {
        ghead x, y;
        (void)read_head(a->blob->data, a->blob->len, a->goff[i], &x);
        (void)read_head(b->blob->data, b->blob->len, b->goff[i], &y);
        if (x.nrec != y.nrec || ns_cmp(x.ns, x.nslen, y.ns, y.nslen) != 0 ||
            memcmp(x.ranks, y.ranks, 4 * (size_t)x.nrec) != 0)
            return false;
    }
    return true;
}

pmix_status_t px_store_add_groups(px_store *s, px_blob *blob)
{
    size_t n = 0, at = 0, k = 0;
    px_gblob *g;
    ghead h, prev = {0};
    bool have_prev = false;
    pmix_status_t rc;

    if (s == NULL || blob == NULL || (blob->data == NULL && blob->len != 0))
        return PMIX_ERR_BAD_PARAM;
    if (blob->len > UINT32_MAX)
        return PMIX_ERR_OUT_OF_RESOURCE; /* the directory keeps 32-bit offsets */
    if (blob->len == 0)
        return PMIX_SUCCESS;
    /* One pass checks the headers and counts the non-empty groups (no
     * namespace is made before the blob is known good). */
    while (at < blob->len) {
        if ((rc = read_head(blob->data, blob->len, at, &h)) != PMIX_SUCCESS)
            return rc;
        n += h.nrec > 0;
        at = h.end;
    }
    g = calloc(1, sizeof(*g));
    if (g == NULL || (g->goff = malloc((n ? n : 1) * sizeof(*g->goff))) == NULL) {
        free(g);
        return PMIX_ERR_NOMEM;
    }
    g->sorted = true;
    at = 0;
    while (at < blob->len) {
        char name[PMIX_MAX_NSLEN + 1];
        px_ns *ns;

        (void)read_head(blob->data, blob->len, at, &h);
        if (h.nrec > 0) {
            if (!have_prev || ns_cmp(h.ns, h.nslen, prev.ns, prev.nslen) != 0) {
                memcpy(name, h.ns, h.nslen);
                name[h.nslen] = '\0';
                if ((ns = px_store_ns_get(s, name)) == NULL) {
                    free(g->goff);
                    free(g);
                    return PMIX_ERR_NOMEM; /* namespaces made so far stay: harmless */
                }
                ns->in_groups = true;
            }
            if (have_prev) {
                int c = ns_cmp(h.ns, h.nslen, prev.ns, prev.nslen);
                if (c < 0 || (c == 0 && le32(h.ranks) <= le32(prev.ranks + 4 * (prev.nrec - 1))))
                    g->sorted = false;
            }
            g->goff[k++] = (uint32_t)at;
            prev = h;
            have_prev = true;
        }
        at = h.end;
    }
    g->ngroups = (uint32_t)k;
    g->blob = px_blob_ref(blob);
    g->seq = ++s->seq;
    /* the same processes as an older group blob: that one is all stale */
    for (px_gblob **pp = &s->gblobs; *pp != NULL; pp = &(*pp)->next) {
        if (same_procs(*pp, g)) {
            px_gblob *old = *pp;
            *pp = old->next;
            px_gblob_destroy(old);
            break;
        }
    }
    g->next = s->gblobs;
    s->gblobs = g;
    return PMIX_SUCCESS;
}

/* ---- lookups ---- */

/* The record of `rank` in group `h`: its kv-list. */
static pmix_status_t find_in_group(const ghead *h, const char *nspace, pmix_rank_t rank,
                                   const uint8_t **kv, size_t *kvlen)
{
    uint32_t lo = 0, hi = h->nrec;
    char name[PMIX_MAX_NSLEN + 1];
    uint32_t r, nbytes;
    const void *p;
    px_buf b;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2, v = le32(h->ranks + 4 * (size_t)mid);
        if (v == rank) {
            lo = mid;
            break;
        }
        if (v < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= h->nrec || le32(h->ranks + 4 * (size_t)lo) != rank)
        return PMIX_ERR_NOT_FOUND;
    px_buf_view(&b, h->recs, h->nbytes);
    b.pos = le32(h->offs + 4 * (size_t)lo);
    if (b.pos > h->nbytes || px_unpack_strbuf(&b, name, sizeof(name)) != PMIX_SUCCESS ||
        strcmp(name, nspace) != 0 || px_unpack_u32(&b, &r) != PMIX_SUCCESS || r != rank ||
        px_unpack_u32(&b, &nbytes) != PMIX_SUCCESS ||
        px_unpack_raw_view(&b, &p, nbytes) != PMIX_SUCCESS)
        return PMIX_ERR_UNPACK_FAILURE; /* the index points at something else */
    *kv = p;
    *kvlen = nbytes;
    return PMIX_SUCCESS;
}

/* The newest record of (nspace, rank) in `g`. */
static pmix_status_t gblob_find(const px_gblob *g, const char *nspace, pmix_rank_t rank,
                                const uint8_t **kv, size_t *kvlen)
{
    size_t nslen = strlen(nspace);
    const uint8_t *data = g->blob->data;
    size_t len = g->blob->len;
    ghead h;

    if (g->sorted) {
        /* the last group that starts at or before (nspace, rank) */
        uint32_t lo = 0, hi = g->ngroups;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            int c;
            (void)read_head(data, len, g->goff[mid], &h);
            c = ns_cmp(h.ns, h.nslen, nspace, nslen);
            if (c < 0 || (c == 0 && le32(h.ranks) <= rank))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == 0)
            return PMIX_ERR_NOT_FOUND;
        (void)read_head(data, len, g->goff[lo - 1], &h);
        if (ns_cmp(h.ns, h.nslen, nspace, nslen) != 0)
            return PMIX_ERR_NOT_FOUND;
        return find_in_group(&h, nspace, rank, kv, kvlen);
    }
    for (uint32_t i = 0; i < g->ngroups; i++) {
        pmix_status_t rc;
        (void)read_head(data, len, g->goff[i], &h);
        if (ns_cmp(h.ns, h.nslen, nspace, nslen) != 0)
            continue;
        rc = find_in_group(&h, nspace, rank, kv, kvlen);
        if (rc != PMIX_ERR_NOT_FOUND)
            return rc;
    }
    return PMIX_ERR_NOT_FOUND;
}

pmix_status_t px_store_groups_find(const px_store *s, const px_ns *ns, pmix_rank_t rank,
                                   uint64_t newer_than, const uint8_t **kv, size_t *kvlen)
{
    if (ns == NULL || !ns->in_groups)
        return PMIX_ERR_NOT_FOUND;
    for (const px_gblob *g = s->gblobs; g != NULL && g->seq > newer_than; g = g->next) {
        pmix_status_t rc;
        if (g->seq <= ns->born)
            break; /* older than this namespace: dropped since */
        rc = gblob_find(g, ns->name, rank, kv, kvlen);
        if (rc != PMIX_ERR_NOT_FOUND)
            return rc;
    }
    return PMIX_ERR_NOT_FOUND;
}

pmix_status_t px_store_groups_any(const px_store *s, const px_ns *ns, const char *key,
                                  pmix_value_t **out)
{
    size_t nslen;

    if (ns == NULL || !ns->in_groups)
        return PMIX_ERR_NOT_FOUND;
    nslen = strlen(ns->name);
    for (const px_gblob *g = s->gblobs; g != NULL && g->seq > ns->born; g = g->next) {
        for (uint32_t i = 0; i < g->ngroups; i++) {
            ghead h;
            (void)read_head(g->blob->data, g->blob->len, g->goff[i], &h);
            if (ns_cmp(h.ns, h.nslen, ns->name, nslen) != 0)
                continue;
            for (uint32_t k = 0; k < h.nrec; k++) {
                const uint8_t *kv;
                size_t kvlen;
                pmix_status_t rc =
                    find_in_group(&h, ns->name, le32(h.ranks + 4 * (size_t)k), &kv, &kvlen);
                if (rc == PMIX_SUCCESS)
                    rc = px_kvlist_find(kv, kvlen, key, out);
                if (rc != PMIX_ERR_NOT_FOUND)
                    return rc;
            }
        }
    }
    return PMIX_ERR_NOT_FOUND;
}
