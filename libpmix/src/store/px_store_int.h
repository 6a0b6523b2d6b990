/*
 * px_store_int.h - the store's internal structures, shared by its files.
 *
 *   px_store
 *     nss: nspace -> px_ns
 *       job: px_job (NULL until job-level data is loaded)
 *         keys                  job keys (session keys included)
 *         ranks: rank -> px_rankdata      PMIX_PROC_DATA of one rank
 *         nodes[] + by id, by hostname    PMIX_NODE_INFO_ARRAY
 *         apps[] + by appnum              PMIX_APP_INFO_ARRAY
 *       procs: rank -> px_pdata           process data
 *         scope[LOCAL..INTERNAL]          puts and commits, by scope
 *         blob, off, len                  the newest record's kv-list
 *
 * Every level is a px_htab, so a lookup costs a few hash probes whatever
 * the number of namespaces, ranks or keys. A key/value set (px_kvs) is a
 * table of px_kv items, each holding its key and its value in one
 * allocation.
 *
 * Files: htab.c (hash table), kv.c (key/value sets and kv-lists),
 * store.c (the store and its namespaces), job.c (loading and looking up
 * job-level data), jobpack.c (packing it), proc.c (puts, commits,
 * records, lookups of process data), blob.c (blobs and their indexing),
 * groups.c (collected data in groups, indexed per group).
 */
#ifndef PX_STORE_INT_H
#define PX_STORE_INT_H

#include "store/px_htab.h"
#include "store/px_store.h"

/* ---- key/value sets (kv.c) ---- */

typedef struct px_kv {
    pmix_value_t val;
    char key[]; /* NUL-terminated */
} px_kv;

/* A set of px_kv keyed by (key, 0); it owns its items. */
typedef px_htab px_kvs;

void px_kv_destroy(px_kv *kv); /* NULL is a no-op */

/* Release every item and the table; the set is empty afterwards. */
void px_kvs_clear(px_kvs *s);
const pmix_value_t *px_kvs_find(const px_kvs *s, const char *key);
/* Insert `kv`, taking ownership; an item with the same key is destroyed.
 * On failure (PMIX_ERR_NOMEM) nothing changes and the caller keeps kv. */
pmix_status_t px_kvs_add(px_kvs *s, px_kv *kv);
/* Insert a copy of (key, v), replacing an item with the same key. On
 * failure (PMIX_ERR_NOMEM, or the copy's error for a bad value) nothing
 * changes. */
pmix_status_t px_kvs_set(px_kvs *s, const char *key, const pmix_value_t *v);
/* Copy every entry of info[] into the set, skipping the key `skip` (may be
 * NULL). An empty or overlong key fails with PMIX_ERR_BAD_PARAM. On failure
 * the entries added so far stay: use it on sets that are thrown away on
 * failure. */
pmix_status_t px_kvs_set_infos(px_kvs *s, const pmix_info_t *info, size_t n, const char *skip);
/* An entry with key PMIX_QUALIFIED_VALUE (a data array of infos: the key
 * and value, then its qualifiers) is kept under its qualified key (see
 * px_store_qualified_key); qualifiers other than the network ones fail
 * with PMIX_ERR_BAD_PARAM. */
void px_kvs_remove(px_kvs *s, const char *key);
/* The key and value of a PMIX_QUALIFIED_VALUE entry (a data array of infos:
 * the key and its value, then its qualifiers): `key` gets the qualified
 * key, *val points into `v`. PMIX_ERR_BAD_PARAM for a malformed entry or a
 * qualifier other than the network ones. */
pmix_status_t px_store_qualified_entry(const pmix_value_t *v, char key[PMIX_MAX_KEYLEN + 1],
                                       const pmix_value_t **val);

/* kv-list: u32 count, then count x (str key, value). */
void px_kvs_pack(const px_kvs *s, px_buf *b);
/* Decode a kv-list into `s`, which must be empty. On failure `s` is left
 * empty; a key repeated in the list keeps its last value. */
pmix_status_t px_kvs_unpack(px_kvs *s, px_buf *b);
/* Check an encoded kv-list at the cursor without decoding its values;
 * on success the cursor is past it and *count holds its entry count. */
pmix_status_t px_kvlist_check(px_buf *b, uint32_t *count);
/* Scan an encoded kv-list for the first entry with `key` and decode only
 * its value, skipping the others. Returns PMIX_ERR_NOT_FOUND, a decoding
 * error, or PMIX_SUCCESS with *out a new value. Allocates nothing but the
 * result. */
pmix_status_t px_kvlist_find(const uint8_t *data, size_t len, const char *key, pmix_value_t **out);

/* A new copy of `v` for a caller, released with PMIX_VALUE_RELEASE. */
pmix_status_t px_store_value_dup(const pmix_value_t *v, pmix_value_t **out);

/* ---- job-level data (job.c, jobpack.c) ----
 *
 * A job's keys are kept encoded, as they travel: every entry (str key,
 * value) lies in one buffer, `data`, and an index of (set, hash, offset)
 * finds it; a lookup decodes only the value it returns. The sets are the
 * job keys (set 0) and one per rank, node and app. A client keeps the
 * bytes its server sent (one copy, indexed once) instead of decoding every
 * key into a table of its own; a server encodes the host's info array once
 * and sends those bytes to every client.
 *
 * A job is built (px_store_load_job, px_store_unpack_job), sealed
 * (px_job_seal: the index sorted) and then never changes: new job-level
 * data replaces the whole job. An installed job's data is the body of its
 * wire encoding (jobpack.c: each set's kv-list, each key once), so packing
 * it for a client is one copy. */

/* One entry: `len` bytes at data + off. */
typedef struct px_jent {
    uint32_t set;
    uint32_t hash; /* of the key */
    uint32_t off;
    uint32_t len;
} px_jent;

/* A set's entries: ent[first .. first + n), sorted by (hash, off). */
typedef struct px_jset {
    uint32_t first, n;
} px_jset;

/* A node or an app and its set. Nodes have an id, a hostname or both;
 * apps always have an id (their appnum). */
typedef struct px_group {
    uint32_t set;
    char *name; /* hostname, or NULL */
    uint32_t id;
    bool has_id;
} px_group;

typedef struct px_rankdata {
    uint32_t set;
    pmix_rank_t rank;
} px_rankdata;

typedef struct px_grouplist {
    px_group **v;
    size_t n, cap;
} px_grouplist;

#define PX_JOB_SET 0 /* the job keys */

typedef struct px_job {
    uint8_t *data; /* the entries (installed: the body of the wire encoding) */
    size_t len;
    px_buf build; /* where entries are encoded while the job is loaded */
    px_jent *ent; /* nent entries; each set's together, by (hash, off), once sealed */
    size_t nent, capent;
    px_jset *sets; /* nsets, once sealed */
    uint32_t nsets;
    px_htab ranks; /* (NULL, rank) -> px_rankdata */
    px_grouplist nodes;
    px_htab node_ids;   /* (NULL, nodeid) -> px_group in nodes */
    px_htab node_names; /* (hostname, 0) -> px_group in nodes */
    px_grouplist apps;
    px_htab app_ids; /* (NULL, appnum) -> px_group in apps */
} px_job;

px_job *px_job_create(void);
void px_job_destroy(px_job *j); /* NULL is a no-op */
/* The set of `rank`, created empty if absent (NULL on allocation failure). */
px_rankdata *px_job_rank(px_job *j, pmix_rank_t rank);
/* The node with this id and/or hostname (at least one given), created if
 * absent. An id and a hostname that name two different known nodes, or a
 * node known with another id or hostname, make it fail with
 * PMIX_ERR_BAD_PARAM; PMIX_ERR_NOMEM on allocation failure. */
pmix_status_t px_job_node(px_job *j, bool has_id, uint32_t id, const char *name, px_group **out);
/* The app `appnum`, created if absent (NULL on allocation failure). */
px_group *px_job_app(px_job *j, uint32_t appnum);
/* Index the entry of `set` at data + off, `len` bytes, whose key is `key`
 * (PMIX_ERR_NOMEM on allocation failure). Within a set, a key added again
 * replaces the earlier entry. */
pmix_status_t px_job_add(px_job *j, uint32_t set, const char *key, size_t off, size_t len);
/* Sort the index (unless it is in order already) and find each set's
 * entries (PMIX_ERR_NOMEM on allocation failure); the job is read-only
 * afterwards. */
pmix_status_t px_job_seal(px_job *j);
/* Lay a sealed job's entries, which lie anywhere in its data as a load
 * leaves them, out as the body of its wire encoding, each key once, and
 * index them there; on failure (PMIX_ERR_NOMEM) the job is unchanged. */
pmix_status_t px_job_encode(px_job *j);
/* The live entries of `set` (a key's last entry), in index order:
 * `fn(arg, e)` for each, and their number. */
size_t px_job_each(const px_job *j, uint32_t set, void (*fn)(void *arg, const px_jent *e),
                   void *arg);
/* Give `j` to namespace `nspace` of `s`, replacing (and destroying) its old
 * job-level data. On failure (PMIX_ERR_NOMEM) `j` is destroyed and the
 * store is unchanged. */
pmix_status_t px_store_install_job(px_store *s, const char *nspace, px_job *j);

/* ---- namespaces and process data (store.c, proc.c, blob.c) ---- */

enum {
    PX_SC_LOCAL,
    PX_SC_REMOTE,
    PX_SC_GLOBAL,
    PX_SC_INTERNAL,
    PX_NSCOPES
};

typedef struct px_pdata {
    px_kvs scope[PX_NSCOPES];
    /* A server's copy of the process's last commit, kept as it arrived
     * (encoded; never decoded as a whole): its LOCAL, REMOTE and GLOBAL
     * kv-lists at data + coff[i], clen[i] bytes each, count included. */
    px_blob *commit;
    size_t coff[3], clen[3];
    uint32_t ccount[3];
    px_blob *blob; /* the newest record (one reference held), or NULL */
    size_t off;    /* its kv-list: blob->data + off, len bytes */
    size_t len;
    uint64_t seq; /* when that record came (px_store.seq) */
    pmix_rank_t rank;
    bool committed; /* unpack_commit was given its data */
} px_pdata;

typedef struct px_ns {
    px_job *job;   /* NULL until job-level data is loaded */
    px_htab procs; /* (NULL, rank) -> px_pdata */
    /* The same processes for ranks below nby_rank, by rank (NULL where
     * there is none): every Get and every indexed record looks a process
     * up, and a hash look-up took about 60 instructions. Every process of a
     * rank below nby_rank is in it (px_ns_proc); it grows with the ranks
     * created while it stays dense (at most two slots per process held, or
     * PX_BY_RANK_MIN), up to PX_BY_RANK_MAX, and the table serves the rest. */
    px_pdata **by_rank;
    uint32_t nby_rank;
    uint64_t born;  /* px_store.seq when created: older group blobs are not its */
    bool in_groups; /* named by a group blob: kept while the store lives */
    size_t len;     /* strlen(name) */
    char name[];
} px_ns;

#define PX_BY_RANK_MAX 65536u /* a one-node job's ranks (the fence page's), 512 KiB at most */
#define PX_BY_RANK_MIN 64u    /* the first array's slots, allowed however sparse */

/* The process `rank` of `ns`, or NULL. */
static inline px_pdata *px_ns_proc(const px_ns *ns, pmix_rank_t rank)
{
    return rank < ns->nby_rank ? ns->by_rank[rank] : px_htab_get(&ns->procs, NULL, rank);
}

/* Collected data in groups (groups.c), newest first: the blob and a
 * directory of its non-empty groups (header offsets). */
typedef struct px_gblob {
    struct px_gblob *next;
    px_blob *blob; /* one reference held */
    uint64_t seq;
    uint32_t ngroups;
    uint32_t *goff;
    bool sorted; /* groups ascend by (namespace, rank) without overlap */
} px_gblob;

struct px_store {
    px_htab nss; /* (nspace, 0) -> px_ns */
    /* The namespace found last: nearly every lookup names the same one, and
     * comparing its name (about 50 instructions in all) is cheaper than
     * checking, hashing and finding it. A cache, not state: lookups through a const store set it
     * too, which is safe because one thread at a time uses a store; removing a namespace clears it
     * (ns_remove). */
    px_ns *hot;
    px_gblob *gblobs; /* newest first */
    uint64_t seq;     /* numbers every blob and group blob added */
};

void px_gblob_destroy(px_gblob *g); /* NULL is a no-op */
/* The kv-list of `rank` of namespace `ns` in the newest group blob newer
 * than `newer_than` that holds it: PMIX_SUCCESS, PMIX_ERR_NOT_FOUND, or
 * PMIX_ERR_UNPACK_FAILURE for a group whose index points at another record. */
pmix_status_t px_store_groups_find(const px_store *s, const px_ns *ns, pmix_rank_t rank,
                                   uint64_t newer_than, const uint8_t **kv, size_t *kvlen);
/* `key` in any record of `ns` in the group blobs (px_store_get_any). */
pmix_status_t px_store_groups_any(const px_store *s, const px_ns *ns, const char *key,
                                  pmix_value_t **out);

px_ns *px_store_ns(const px_store *s, const char *nspace);
/* Find or create (NULL on allocation failure). */
px_ns *px_store_ns_get(px_store *s, const char *nspace);
/* px_store_pdata_get in a namespace already found (`ns` from px_store_ns_get). */
px_pdata *px_store_pdata_get_ns(px_store *s, px_ns *ns, pmix_rank_t rank);
px_pdata *px_store_pdata(const px_store *s, const char *nspace, pmix_rank_t rank);
/* Find or create the namespace and the process (NULL on allocation failure;
 * a namespace created for it is removed again). */
px_pdata *px_store_pdata_get(px_store *s, const char *nspace, pmix_rank_t rank);
/* Remove the process if it holds nothing, then the namespace if it holds
 * nothing: undoes the creations of the *_get functions. */
void px_store_prune(px_store *s, const char *nspace, pmix_rank_t rank);
void px_pdata_destroy(px_pdata *d);

/* Namespaces and keys must be non-empty and fit their fixed-size arrays. */
bool px_store_valid_nspace(const char *nspace);
bool px_store_valid_key(const char *key);

#endif /* PX_STORE_INT_H */
