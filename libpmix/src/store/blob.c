/*
 * blob.c - collected data: reference-counted blobs of records, indexed once.
 *
 * px_store_add_blob walks the record headers of a blob once, and a second
 * time only for processes it has not seen before; it never reads the
 * kv-lists beyond their count:
 *   1. check every header (a namespace that fits, a length that stays
 *      inside the blob, a kv-list count the length can hold), so a
 *      malformed blob is refused before anything changes, and find the
 *      processes already known;
 *   2. create the others (the only step that allocates; on failure the
 *      processes created so far are pruned);
 *   3. point each process at its record, which cannot fail.
 * Each process that points into a blob holds one reference to it, so a
 * blob lives exactly as long as one of its records is the newest for some
 * process. A later record for the same process, from the same blob or
 * another, replaces the earlier one.
 */
#include "store/px_store_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The smallest kv-list entry: a key of one byte (u32 length + byte) and a
 * value's u16 type. */
#define MIN_ENTRY 7

px_blob *px_blob_create(const void *data, size_t len,
                        void (*release)(void *arg, const uint8_t *data, size_t len),
                        void *release_arg)
{
    px_blob *b = malloc(sizeof(*b));
    if (b == NULL) {
        if (release != NULL) {
            release(release_arg, data, len);
        } else {
            free((void *)data);
        }
        return NULL;
    }
    b->refs = 1;
    b->len = len;
    b->data = data;
    b->release = release;
    b->release_arg = release_arg;
    return b;
}

px_blob *px_blob_ref(px_blob *b)
{
    if (b != NULL) {
        b->refs++;
    }
    return b;
}

void px_blob_unref(px_blob *b)
{
    if (b == NULL || --b->refs > 0) {
        return;
    }
    if (b->release != NULL) {
        b->release(b->release_arg, b->data, b->len);
    } else {
        free((void *)b->data);
    }
    free(b);
}

static void release_parent(void *arg, const uint8_t *data, size_t len)
{
    px_blob_unref(arg);
}

px_blob *px_blob_slice(px_blob *parent, size_t off, size_t len)
{
    px_blob *b;

    if (parent == NULL || off > parent->len || len > parent->len - off) {
        return NULL;
    }
    b = malloc(sizeof(*b));
    if (b == NULL) {
        return NULL;
    }
    b->refs = 1;
    b->len = len;
    b->data = parent->data + off;
    b->release = release_parent;
    b->release_arg = px_blob_ref(parent);
    return b;
}

typedef struct record {
    const char *ns; /* the namespace where it lies: nslen bytes, not terminated */
    size_t nslen;
    pmix_rank_t rank;
    size_t off; /* of the kv-list, from the start of the blob */
    size_t len;
} record;

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read and check the header of the record at data[*at], which must end by
 * data[end], and step *at over the record. The bytes are read where they
 * lie, as the codec writes them (px_store.h): this loop is what every
 * process of a node runs over every record of a collect, and through the
 * codec's general string and view functions it took 200 instructions a
 * record. The namespace is not checked for NULs here: record_in compares
 * it with a known name, and record_nspace refuses one with a NUL. */
static pmix_status_t next_record(const uint8_t *data, size_t end, size_t *at, record *r)
{
    size_t p = *at, left = end - p;
    uint32_t nslen, nbytes;

    if (left < 4) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    nslen = le32(data + p);
    p += 4;
    left -= 4;
    /* a NULL string (0xffffffff) is over PMIX_MAX_NSLEN too */
    if (nslen == 0 || nslen > PMIX_MAX_NSLEN || left < (size_t)nslen + 8) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    r->ns = (const char *)data + p;
    r->nslen = nslen;
    p += nslen;
    r->rank = le32(data + p);
    nbytes = le32(data + p + 4);
    p += 8;
    left -= (size_t)nslen + 8;
    /* the kv-list: its count, and room for that many entries */
    if (nbytes > left || nbytes < 4 || le32(data + p) > (nbytes - 4) / MIN_ENTRY) {
        return PMIX_ERR_UNPACK_FAILURE;
    }
    r->off = p;
    r->len = nbytes;
    *at = p + nbytes;
    return PMIX_SUCCESS;
}

/* Is the record of namespace `ns`? */
static bool record_in(const record *r, const px_ns *ns)
{
    return ns != NULL && r->nslen == ns->len && memcmp(ns->name, r->ns, r->nslen) == 0;
}

/* The record's namespace, terminated, in `name`; NULL if it holds a NUL
 * (a malformed record). */
static const char *record_nspace(const record *r, char name[PMIX_MAX_NSLEN + 1])
{
    if (memchr(r->ns, '\0', r->nslen) != NULL) {
        return NULL;
    }
    memcpy(name, r->ns, r->nslen);
    name[r->nslen] = '\0';
    return name;
}

/* A cursor over the records of a blob's parts, in order. */
typedef struct walk {
    const px_blob *blob;
    const px_part *parts;
    size_t nparts, part; /* the part the cursor is in */
    size_t at, end;      /* the cursor and the end of its part, from the blob's start */
} walk;

static void walk_start(walk *w, const px_blob *blob, const px_part *parts, size_t nparts)
{
    w->blob = blob;
    w->parts = parts;
    w->nparts = nparts;
    w->part = 0;
    w->at = w->end = 0;
    if (nparts > 0 && blob->data != NULL) {
        w->at = parts[0].off;
        w->end = parts[0].off + parts[0].len;
    }
}

/* The next record (r->off from the blob's start): PMIX_SUCCESS, PMIX_ERR_NOT_FOUND
 * at the end, PMIX_ERR_UNPACK_FAILURE for a bad header. */
static pmix_status_t walk_next(walk *w, record *r)
{
    while (w->at == w->end) {
        if (w->part + 1 >= w->nparts) {
            return PMIX_ERR_NOT_FOUND;
        }
        w->part++;
        w->at = w->parts[w->part].off;
        w->end = w->at + w->parts[w->part].len;
    }
    return next_record(w->blob->data, w->end, &w->at, r);
}

/* Undo step 2 for the first `n` records. */
static void prune_records(px_store *s, const px_blob *blob, const px_part *parts, size_t nparts,
                          size_t n)
{
    walk w;
    record r;
    walk_start(&w, blob, parts, nparts);
    char name[PMIX_MAX_NSLEN + 1];
    for (size_t i = 0; i < n && walk_next(&w, &r) == PMIX_SUCCESS; i++) {
        if (record_nspace(&r, name) != NULL) { /* step 1 checked it */
            px_store_prune(s, name, r.rank);
        }
    }
}

/* Where step 2 found each record's process, for step 3. */
typedef struct placed {
    px_pdata *d;
    size_t off, len;
} placed;

#define PLACED_ON_STACK 128

pmix_status_t px_store_add_blob(px_store *s, px_blob *blob)
{
    px_part whole = {0, blob != NULL ? blob->len : 0};
    return px_store_add_parts(s, blob, &whole, 1, NULL);
}

/* For slots: is `r`, just read from part w->part, the one record that part
 * may hold, the one of process (slots_ns, w->part)? `n` records came
 * before it. */
static bool slot_record(const walk *w, const record *r, size_t n, const char *slots_ns,
                        size_t nslen)
{
    return n == w->part && r->rank == w->part && w->at == w->end && r->nslen == nslen &&
           memcmp(r->ns, slots_ns, nslen) == 0;
}

pmix_status_t px_store_add_parts(px_store *s, px_blob *blob, const px_part *parts, size_t nparts,
                                 const char *slots_ns)
{
    walk w;
    record r;
    size_t n = 0, cap = PLACED_ON_STACK, missing = 0;
    placed stack[PLACED_ON_STACK], *at = stack;
    const px_ns *ns = NULL;
    char name[PMIX_MAX_NSLEN + 1];
    size_t slots_nslen = slots_ns != NULL ? strlen(slots_ns) : 0;
    pmix_status_t rc = PMIX_SUCCESS, step;
    if (s == NULL || blob == NULL || (blob->data == NULL && blob->len != 0) ||
        (parts == NULL && nparts > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < nparts; i++) {
        if (parts[i].off > blob->len || parts[i].len > blob->len - parts[i].off) {
            return PMIX_ERR_UNPACK_FAILURE;
        }
    }
    /* 1: check every header, and find the processes that exist already
     * (no allocation: a malformed blob changes nothing) */
    walk_start(&w, blob, parts, nparts);
    while ((step = walk_next(&w, &r)) != PMIX_ERR_NOT_FOUND) {
        if (step != PMIX_SUCCESS ||
            (slots_ns != NULL && !slot_record(&w, &r, n, slots_ns, slots_nslen))) {
            rc = PMIX_ERR_UNPACK_FAILURE;
            goto out;
        }
        if (n == cap) {
            placed *na = malloc(2 * cap * sizeof(*na));
            if (na == NULL) {
                rc = PMIX_ERR_NOMEM;
                goto out;
            }
            memcpy(na, at, n * sizeof(*na));
            if (at != stack) {
                free(at);
            }
            at = na;
            cap *= 2;
        }
        /* the records of a blob are mostly of one namespace: look it up once */
        if (!record_in(&r, ns)) {
            if (record_nspace(&r, name) == NULL) {
                rc = PMIX_ERR_UNPACK_FAILURE;
                goto out;
            }
            ns = px_store_ns(s, name);
        }
        at[n].d = ns != NULL ? px_htab_get(&ns->procs, NULL, r.rank) : NULL;
        missing += at[n].d == NULL;
        at[n].off = r.off;
        at[n].len = r.len;
        n++;
    }
    if (slots_ns != NULL && n != nparts) {
        rc = PMIX_ERR_UNPACK_FAILURE; /* a slot without its record */
        goto out;
    }
    if (n > (size_t)(INT_MAX - blob->refs)) {
        rc = PMIX_ERR_OUT_OF_RESOURCE;
        goto out;
    }
    /* 2: create the processes seen for the first time (on failure, the
     * ones created so far are pruned) */
    if (missing > 0) {
        px_ns *ms = NULL;
        walk_start(&w, blob, parts, nparts);
        for (size_t i = 0; i < n; i++) {
            (void)walk_next(&w, &r);
            if (at[i].d != NULL) {
                continue;
            }
            if (!record_in(&r, ms)) {
                ms = px_store_ns_get(s, record_nspace(&r, name)); /* step 1 checked it */
            }
            at[i].d = ms != NULL ? px_store_pdata_get_ns(s, ms, r.rank) : NULL;
            if (at[i].d == NULL) {
                prune_records(s, blob, parts, nparts, i);
                rc = PMIX_ERR_NOMEM;
                goto out;
            }
        }
    }
    /* 3: point each process at its record */
    s->seq++;
    for (size_t i = 0; i < n; i++) {
        px_pdata *d = at[i].d;
        d->seq = s->seq;
        px_blob *old = d->blob;
        d->blob = px_blob_ref(blob);
        d->off = at[i].off;
        d->len = at[i].len;
        px_blob_unref(old);
    }
out:
    if (at != stack) {
        free(at);
    }
    return rc;
}
