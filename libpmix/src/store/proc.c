/*
 * proc.c - process data: puts, commits, records and lookups.
 *
 * Each process has four key/value sets, one per scope. A put stores its
 * key in one scope and removes it from the other three, so a key has one
 * value per process whatever scopes it went through (the last put wins).
 * A commit carries the LOCAL, REMOTE and GLOBAL sets as three kv-lists;
 * the receiving server keeps them encoded, as they arrived (checked, not
 * decoded), in place of those three sets, and keeps the INTERNAL set,
 * which belongs to itself. Records copy a kept commit's entries as they
 * are; a lookup decodes only the value it returns.
 *
 * A record is the form in which data leaves a node: the process's name,
 * then one kv-list cut for a class of readers (LOCAL + GLOBAL for its own
 * node, REMOTE + GLOBAL for the others), its length written in front so
 * that px_store_add_blob can index records without reading their
 * contents.
 *
 * A lookup reads the process's own sets first (INTERNAL, then LOCAL or
 * REMOTE depending on where the reader lives, then GLOBAL), then the
 * newest record received for it (from a blob, or from a group blob:
 * groups.c), decoding only the value it returns.
 */
#include "store/px_store_int.h"

#include <stdlib.h>
#include <string.h>

/* The set index of a scope, or -1. */
static int scope_index(pmix_scope_t scope)
{
    switch (scope) {
    case PMIX_LOCAL: return PX_SC_LOCAL;
    case PMIX_REMOTE: return PX_SC_REMOTE;
    case PMIX_GLOBAL:
    case PMIX_SCOPE_UNDEF: return PX_SC_GLOBAL;
    case PMIX_INTERNAL: return PX_SC_INTERNAL;
    default: return -1;
    }
}

static bool valid_proc(const pmix_proc_t *p)
{
    return p != NULL && px_store_valid_nspace(p->nspace);
}

pmix_status_t px_store_put(px_store *s, const pmix_proc_t *p, pmix_scope_t scope, const char *key,
                           const pmix_value_t *v)
{
    int sc = scope_index(scope);
    if (s == NULL || !valid_proc(p) || sc < 0 || !px_store_valid_key(key) || v == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    px_pdata *d = px_store_pdata_get(s, p->nspace, p->rank);
    if (d == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pmix_status_t rc = px_kvs_set(&d->scope[sc], key, v);
    if (rc != PMIX_SUCCESS) {
        px_store_prune(s, p->nspace, p->rank);
        return rc;
    }
    for (int i = 0; i < PX_NSCOPES; i++) {
        if (i != sc) {
            px_kvs_remove(&d->scope[i], key);
        }
    }
    return PMIX_SUCCESS;
}

void px_store_pack_commit(const px_store *s, const pmix_proc_t *p, px_buf *b)
{
    const px_pdata *d = valid_proc(p) ? px_store_pdata(s, p->nspace, p->rank) : NULL;
    for (int i = PX_SC_LOCAL; i <= PX_SC_GLOBAL; i++) {
        if (d != NULL) {
            px_kvs_pack(&d->scope[i], b);
        } else {
            px_pack_u32(b, 0);
        }
    }
}

pmix_status_t px_store_unpack_commit(px_store *s, const pmix_proc_t *p, px_buf *b)
{
    size_t off[3], len[3];
    uint32_t count[3];
    pmix_status_t rc = PMIX_SUCCESS;
    if (s == NULL || !valid_proc(p) || b == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* Check the three kv-lists without decoding them, then keep the bytes
     * as they are: a server only ever passes them on (records) or looks a
     * key up in them, and decoding would double their memory. */
    size_t start = b->pos;
    for (int i = 0; i < 3 && rc == PMIX_SUCCESS; i++) {
        off[i] = b->pos - start;
        rc = px_kvlist_check(b, &count[i]);
        len[i] = b->pos - start - off[i];
    }
    size_t total = b->pos - start;
    uint8_t *copy = NULL;
    px_blob *blob = NULL;
    if (rc == PMIX_SUCCESS && (copy = malloc(total ? total : 1)) == NULL) {
        rc = PMIX_ERR_NOMEM;
    }
    if (rc == PMIX_SUCCESS) {
        memcpy(copy, b->data + start, total);
        if ((blob = px_blob_create(copy, total, NULL, NULL)) == NULL) {
            rc = PMIX_ERR_NOMEM; /* px_blob_create freed the copy */
        }
    }
    px_pdata *d = NULL;
    if (rc == PMIX_SUCCESS && (d = px_store_pdata_get(s, p->nspace, p->rank)) == NULL) {
        rc = PMIX_ERR_NOMEM;
    }
    if (rc != PMIX_SUCCESS) {
        px_blob_unref(blob);
        b->pos = start;
        return rc;
    }
    /* the commit replaces what the process had in these three scopes */
    for (int i = 0; i < 3; i++) {
        px_kvs_clear(&d->scope[PX_SC_LOCAL + i]);
        d->coff[i] = off[i];
        d->clen[i] = len[i];
        d->ccount[i] = count[i];
    }
    px_blob_unref(d->commit);
    d->commit = blob;
    d->committed = true;
    return PMIX_SUCCESS;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

size_t px_store_commit_len(const px_store *s, const pmix_proc_t *p, bool for_local)
{
    const px_pdata *d = valid_proc(p) ? px_store_pdata(s, p->nspace, p->rank) : NULL;

    if (d == NULL || d->commit == NULL) {
        return 0;
    }
    return d->clen[for_local ? 0 : 1] + d->clen[2];
}

void px_store_pack_record(const px_store *s, const pmix_proc_t *p, bool for_local, px_buf *b)
{
    const px_pdata *d = valid_proc(p) ? px_store_pdata(s, p->nspace, p->rank) : NULL;
    px_pack_str(b, p->nspace);
    px_pack_u32(b, p->rank);
    size_t at = b->size;
    px_pack_u32(b, 0); /* nbytes, written below */
    size_t start = b->size;
    if (d == NULL) {
        px_pack_u32(b, 0);
    } else {
        /* The scope of the readers, then the GLOBAL keys it does not
         * shadow (a commit from elsewhere may hold a key in both). */
        const px_kvs *own = &d->scope[for_local ? PX_SC_LOCAL : PX_SC_REMOTE];
        const px_kvs *global = &d->scope[PX_SC_GLOBAL];
        const px_kv *kv;
        size_t n = own->n;
        for (size_t i = 0; (kv = px_htab_next(global, &i)) != NULL;) {
            n += px_kvs_find(own, kv->key) == NULL;
        }
        /* a kept commit's lists go in as they are, after the sets (whose
         * keys, if any, are newer and come first in a lookup) */
        int cown = for_local ? 0 : 1;
        if (d->commit != NULL) {
            n += (size_t)d->ccount[cown] + d->ccount[2];
        }
        px_pack_u32(b, (uint32_t)n);
        for (size_t i = 0; (kv = px_htab_next(own, &i)) != NULL;) {
            px_pack_str(b, kv->key);
            px_pack_value(b, &kv->val);
        }
        for (size_t i = 0; (kv = px_htab_next(global, &i)) != NULL;) {
            if (px_kvs_find(own, kv->key) == NULL) {
                px_pack_str(b, kv->key);
                px_pack_value(b, &kv->val);
            }
        }
        if (d->commit != NULL) {
            for (int l = 0; l < 2; l++) {
                int list = l == 0 ? cown : 2; /* the entries, without the count */
                px_pack_raw(b, d->commit->data + d->coff[list] + 4, d->clen[list] - 4);
            }
        }
    }
    if (px_buf_status(b) == PMIX_SUCCESS) {
        put_le32(b->data + at, (uint32_t)(b->size - start));
    }
}

pmix_status_t px_store_get_proc(const px_store *s, const pmix_proc_t *p, const char *key,
                                bool reader_local, pmix_value_t **out)
{
    static const int order[2][3] = {
        {PX_SC_INTERNAL, PX_SC_REMOTE, PX_SC_GLOBAL},
        {PX_SC_INTERNAL, PX_SC_LOCAL, PX_SC_GLOBAL},
    };
    if (s == NULL || p == NULL || key == NULL || out == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    /* a namespace found is a valid one: only a miss needs the name checked */
    const px_ns *ns = px_store_ns(s, p->nspace);
    if (ns == NULL && !valid_proc(p)) {
        return PMIX_ERR_BAD_PARAM;
    }
    const px_pdata *d = ns != NULL ? px_ns_proc(ns, p->rank) : NULL;
    const uint8_t *kv;
    size_t kvlen;
    pmix_status_t rc;
    if (d == NULL) {
        /* nothing of its own here: only group blobs can hold it */
        rc = px_store_groups_find(s, ns, p->rank, 0, &kv, &kvlen);
        return rc == PMIX_SUCCESS ? px_kvlist_find(kv, kvlen, key, out) : rc;
    }
    for (int i = 0; i < 3; i++) {
        const pmix_value_t *v = px_kvs_find(&d->scope[order[reader_local][i]], key);
        if (v != NULL) {
            return px_store_value_dup(v, out);
        }
    }
    if (d->commit != NULL) {
        int lists[2] = {reader_local ? 0 : 1, 2};
        for (int i = 0; i < 2; i++) {
            rc = px_kvlist_find(d->commit->data + d->coff[lists[i]], d->clen[lists[i]], key, out);
            if (rc != PMIX_ERR_NOT_FOUND) {
                return rc;
            }
        }
    }
    /* the newest record: a group blob's if newer than the process's own
     * (only namespaces a group blob named have any) */
    rc = ns->in_groups
             ? px_store_groups_find(s, ns, p->rank, d->blob != NULL ? d->seq : 0, &kv, &kvlen)
             : PMIX_ERR_NOT_FOUND;
    if (rc == PMIX_SUCCESS) {
        return px_kvlist_find(kv, kvlen, key, out);
    }
    if (rc != PMIX_ERR_NOT_FOUND) {
        return rc;
    }
    if (d->blob != NULL) {
        return px_kvlist_find(d->blob->data + d->off, d->len, key, out);
    }
    return PMIX_ERR_NOT_FOUND;
}

pmix_status_t px_store_get_any(const px_store *s, const char *nspace, const char *key,
                               pmix_value_t **out)
{
    const px_ns *ns;
    const px_pdata *d;
    size_t i = 0;

    if (s == NULL || nspace == NULL || key == NULL || out == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    ns = px_store_ns(s, nspace);
    if (ns == NULL) {
        return PMIX_ERR_NOT_FOUND;
    }
    while ((d = px_htab_next(&ns->procs, &i)) != NULL) {
        pmix_proc_t p;
        pmix_status_t rc;
        memset(&p, 0, sizeof(p));
        memcpy(p.nspace, nspace, strnlen(nspace, PMIX_MAX_NSLEN));
        p.rank = d->rank;
        rc = px_store_get_proc(s, &p, key, true, out);
        if (rc != PMIX_ERR_NOT_FOUND) {
            return rc;
        }
    }
    return px_store_groups_any(s, ns, key, out);
}

bool px_store_has_proc(const px_store *s, const pmix_proc_t *p)
{
    const px_ns *ns = s != NULL && valid_proc(p) ? px_store_ns(s, p->nspace) : NULL;
    const px_pdata *d = ns != NULL ? px_ns_proc(ns, p->rank) : NULL;
    const uint8_t *kv;
    size_t kvlen;
    if (ns == NULL) {
        return false;
    }
    if (d != NULL && (d->committed || d->blob != NULL)) {
        return true;
    }
    return px_store_groups_find(s, ns, p->rank, 0, &kv, &kvlen) != PMIX_ERR_NOT_FOUND;
}
