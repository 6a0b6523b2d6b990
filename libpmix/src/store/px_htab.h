/*
 * px_htab.h - the store's hash table: open addressing with linear probing.
 *
 * A table maps a key to a pointer. A key is a pair (string, number): the
 * store uses (key, 0) for the keys of a key/value set, (NULL, rank) for
 * ranks, (nspace, 0) for namespaces and (NULL, nodeid) for nodes. The
 * table does not copy the string: it points into the item it maps to, so
 * the item must keep the string alive and unchanged while it is in the
 * table (every item of the store carries its own key).
 *
 * The table grows by doubling when it would become more than 3/4 full and
 * never shrinks. Removal shifts the following entries back (no tombstones),
 * so lookups stay short whatever the history. Lookups never allocate.
 *
 * Iteration walks the slots in order: for (size_t i = 0; (v =
 * px_htab_next(t, &i)) != NULL;) visits every item once, provided the table
 * is not changed during the walk.
 */
#ifndef PX_HTAB_H
#define PX_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct px_htab_slot {
    const char *str; /* NULL for number-only keys */
    void *val;       /* NULL marks an empty slot */
    uint32_t num;
    uint32_t hash;
} px_htab_slot;

typedef struct px_htab {
    px_htab_slot *slots;
    size_t cap; /* 0 or a power of two */
    size_t n;
} px_htab;

/* A 32-bit hash of `n` bytes, for the store's tables and the job index.
 * It never leaves the process: any hash that spreads keys will do. */
uint32_t px_hash_bytes(const void *data, size_t n);

/* An empty table; memory comes with the first insertion. */
void px_htab_init(px_htab *t);
/* Free the slots (not the items). The table is empty afterwards. */
void px_htab_fini(px_htab *t);
/* The item mapped to (str, num), or NULL. */
void *px_htab_get(const px_htab *t, const char *str, uint32_t num);
/* Make sure `extra` more insertions cannot fail. Returns false (and
 * changes nothing) on allocation failure. */
bool px_htab_reserve(px_htab *t, size_t extra);
/* Map (str, num) to `val` (not NULL). If the key was present its item is
 * replaced and returned in *old (which may be NULL if the caller knows the
 * key is new); otherwise *old is set to NULL. Returns false, changing
 * nothing, if the table had to grow and could not. */
bool px_htab_put(px_htab *t, const char *str, uint32_t num, void *val, void **old);
/* Remove (str, num) and return its item, or NULL if it was absent. Never
 * fails. */
void *px_htab_remove(px_htab *t, const char *str, uint32_t num);
/* The next item at or after slot *i, advancing *i past it; NULL at the end. */
void *px_htab_next(const px_htab *t, size_t *i);

#endif /* PX_HTAB_H */
