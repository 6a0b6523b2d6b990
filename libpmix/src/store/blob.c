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
 * process of a node runs over every record of a collect, and reading
 * directly instead of through the codec's string and view functions took
 * indexing from 380 to 250 instructions a record. The namespace is not checked for NULs here:
 * record_in compares it with a known name, and record_nspace refuses one with a NUL. */
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
 * (a malformed record). The copy is checked, not the record: the bytes
 * may change under the reader (the page's slots). */
static const char *record_nspace(const record *r, char name[PMIX_MAX_NSLEN + 1])
{
    memcpy(name, r->ns, r->nslen);
    name[r->nslen] = '\0';
    return memchr(name, '\0', r->nslen) == NULL ? name : NULL;
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

/* What step 1 read of each record, for steps 2 and 3. The record's
 * identity is read once, here: the page's slots lie in memory the other
 * processes can still write, so reading a name or a rank again later
 * could give another answer than the one checked. */
typedef struct placed {
    px_pdata *d;   /* the process, found in step 1 or created in step 2 */
    px_ns *ns;     /* its namespace, if the store had it in step 1 */
    uint32_t name; /* else: its name, in the private copies (names[]) */
    pmix_rank_t rank;
    bool created; /* by step 2 (undone on failure) */
    size_t off, len;
} placed;

#define PLACED_ON_STACK 128

/* Private copies of the namespace names step 1 did not find. */
typedef struct nsnames {
    char (*v)[PMIX_MAX_NSLEN + 1];
    uint32_t n, cap;
} nsnames;

/* The index of `name` in `nn`, added if it is not the last one added;
 * UINT32_MAX on allocation failure. */
static uint32_t nsnames_add(nsnames *nn, const char *name)
{
    if (nn->n > 0 && strcmp(nn->v[nn->n - 1], name) == 0) {
        return nn->n - 1;
    }
    if (nn->n == nn->cap) {
        uint32_t cap = nn->cap != 0 ? 2 * nn->cap : 4;
        void *v = cap < nn->cap ? NULL : realloc(nn->v, (size_t)cap * sizeof(*nn->v));
        if (v == NULL) {
            return UINT32_MAX;
        }
        nn->v = v;
        nn->cap = cap;
    }
    memcpy(nn->v[nn->n], name, strlen(name) + 1);
    return nn->n++;
}

/* Undo step 2: the processes it created, by what step 1 read. A created
 * process keeps its namespace alive until it is pruned itself, so the
 * name is read before its own prune only. The record step 2 failed on
 * needs nothing: px_store_ns_get created nothing, or
 * px_store_pdata_get_ns pruned what it had made (its namespace too). */
static void prune_created(px_store *s, const placed *at, size_t n)
{
    char name[PMIX_MAX_NSLEN + 1];
    for (size_t i = 0; i < n; i++) {
        if (at[i].created) {
            memcpy(name, at[i].ns->name, at[i].ns->len + 1);
            px_store_prune(s, name, at[i].rank);
        }
    }
}

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
    px_ns *ns = NULL; /* the namespace of the last record, if the store has it */
    uint32_t unk = 0; /* else its index in names */
    nsnames names = {0};
    char name[PMIX_MAX_NSLEN + 1];
    size_t slots_nslen = 0;
    pmix_status_t rc = PMIX_SUCCESS, step;
    if (s == NULL || blob == NULL || (blob->data == NULL && blob->len != 0) ||
        (parts == NULL && nparts > 0) || (slots_ns != NULL && !px_store_valid_nspace(slots_ns))) {
        return PMIX_ERR_BAD_PARAM;
    }
    for (size_t i = 0; i < nparts; i++) {
        if (parts[i].off > blob->len || parts[i].len > blob->len - parts[i].off) {
            return PMIX_ERR_UNPACK_FAILURE;
        }
    }
    if (slots_ns != NULL) {
        /* every record's namespace is this one, and its rank its slot's */
        slots_nslen = strlen(slots_ns);
        ns = px_store_ns(s, slots_ns);
        if (ns == NULL && (unk = nsnames_add(&names, slots_ns)) == UINT32_MAX) {
            return PMIX_ERR_NOMEM;
        }
    }
    /* 1: check every header, and find the processes that exist already
     * (no change to the store: a malformed blob changes nothing) */
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
        if (slots_ns != NULL) {
            r.rank = (pmix_rank_t)w.part; /* what slot_record compared */
        } else if (!record_in(&r, ns)) {
            /* the records of a blob are mostly of one namespace: looked
             * up once, and from a private copy of the name */
            if (record_nspace(&r, name) == NULL) {
                rc = PMIX_ERR_UNPACK_FAILURE;
                goto out;
            }
            ns = px_store_ns(s, name);
            if (ns == NULL && (unk = nsnames_add(&names, name)) == UINT32_MAX) {
                rc = PMIX_ERR_NOMEM;
                goto out;
            }
        }
        at[n] = (placed){.d = ns != NULL ? px_ns_proc(ns, r.rank) : NULL,
                         .ns = ns,
                         .name = unk,
                         .rank = r.rank,
                         .off = r.off,
                         .len = r.len};
        missing += at[n].d == NULL;
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
    /* 2: create the processes seen for the first time, from what step 1
     * read (on failure, the ones created so far are pruned) */
    if (missing > 0) {
        px_ns *ms = NULL;
        uint32_t ms_name = UINT32_MAX;
        for (size_t i = 0; i < n; i++) {
            if (at[i].d != NULL) {
                continue;
            }
            if (at[i].ns == NULL) {
                if (ms == NULL || ms_name != at[i].name) {
                    ms = px_store_ns_get(s, names.v[at[i].name]);
                    ms_name = at[i].name;
                }
                at[i].ns = ms;
            }
            if (at[i].ns == NULL) {
                prune_created(s, at, i);
                rc = PMIX_ERR_NOMEM;
                goto out;
            }
            /* a process named twice in this blob is created once */
            at[i].d = px_ns_proc(at[i].ns, at[i].rank);
            if (at[i].d == NULL) {
                at[i].d = px_store_pdata_get_ns(s, at[i].ns, at[i].rank);
                at[i].created = at[i].d != NULL;
            }
            if (at[i].d == NULL) {
                prune_created(s, at, i);
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
    free(names.v);
    return rc;
}
