/*
 * px_store.h - the key/value store of one engine (client or server).
 *
 * It holds two kinds of data:
 *
 * Job-level data: what a host registers for a namespace (the info array of
 * PMIx_server_register_nspace): job keys, per-process keys (PMIX_PROC_DATA),
 * per-node keys (PMIX_NODE_INFO_ARRAY), per-app keys (PMIX_APP_INFO_ARRAY),
 * session keys (PMIX_SESSION_INFO_ARRAY, kept with the job keys). A server
 * packs it for a client in the handshake; the client loads the same pack,
 * so that every Get of job-level data is answered from its own memory.
 *
 * Process data: what processes PMIx_Put and PMIx_Commit, kept by scope.
 * It arrives in three ways:
 *   - px_store_put: a process's own puts (client), or PMIx_Store_internal;
 *   - px_store_unpack_commit: a local client's commit (server);
 *   - px_store_add_blob: collected data (fence with PMIX_COLLECT_DATA) and
 *     direct-modex replies, as a reference-counted blob of records.
 *
 * Visibility. PMIX_LOCAL data is visible only to processes on the same node
 * as its owner, PMIX_REMOTE only to processes on other nodes, PMIX_GLOBAL to
 * all, PMIX_INTERNAL only inside the process that stored it (never packed).
 * A record in a blob is already cut for its readers: the server packs
 * (LOCAL + GLOBAL) for readers on its node and (REMOTE + GLOBAL) for
 * readers elsewhere.
 *
 * Record format (a blob is zero or more records back to back):
 *     str  nspace
 *     u32  rank
 *     u32  nbytes        length of the kv-list that follows
 *     kv-list            u32 count, then count x (str key, value)
 * A blob is indexed once when added (record headers only, bounds-checked);
 * a Get scans only the kv-list of its rank and decodes only the value it
 * returns. A later record for the same process replaces the earlier one.
 *
 * Every lookup returns a new copy of the value (the caller releases it
 * with PMIX_VALUE_RELEASE), so nothing returned depends on the store's
 * lifetime.
 *
 * Failures. A function that fails changes nothing in the store (and an
 * unpack function puts the buffer's cursor back where it was); functions
 * that return nothing cannot fail, except the pack functions, whose
 * allocation failures are kept in the buffer (px_buf_status). A namespace
 * must be 1..PMIX_MAX_NSLEN characters, a key 1..PMIX_MAX_KEYLEN.
 * Nothing here is thread-safe: the engine that owns a store serializes
 * calls. The implementation's files are listed in store/px_store_int.h.
 */
#ifndef PX_STORE_H
#define PX_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include <pmix_common.h>

#include "wire/px_wire.h"

typedef struct px_store px_store;

/* Collected data shared between readers: immutable once created. The
 * reference count is not atomic: code that shares one blob between engines
 * under different locks must serialize px_blob_ref/px_blob_unref itself
 * (pmixsim's actors run one at a time, so it need not). */
typedef struct px_blob {
    int refs;
    size_t len;
    const uint8_t *data;
    void (*release)(void *arg, const uint8_t *data, size_t len);
    void *release_arg;
} px_blob;

/* Wrap `len` bytes at `data`. When the last reference goes, `release` is
 * called (NULL release means free(data)). Returns NULL on allocation
 * failure, after calling release. */
px_blob *px_blob_create(const void *data, size_t len,
                        void (*release)(void *arg, const uint8_t *data, size_t len),
                        void *release_arg);
/* `len` bytes of `parent` from `off`, holding a reference to it; NULL if
 * out of range or out of memory (parent unchanged). */
px_blob *px_blob_slice(px_blob *parent, size_t off, size_t len);
px_blob *px_blob_ref(px_blob *b); /* returns b; NULL gives NULL */
void px_blob_unref(px_blob *b);   /* NULL is a no-op */

px_store *px_store_create(void);    /* NULL on allocation failure */
void px_store_destroy(px_store *s); /* NULL is a no-op */

/* ---- job-level data ---- */

/* Replace the job-level data of `nspace` with the contents of `info`
 * (the process data of `nspace` is kept). Values are copied. Identifiers
 * (PMIX_RANK, PMIX_NODEID, PMIX_HOSTNAME, PMIX_APPNUM) stay keys of their
 * rank, node or app; PMIX_SESSION_ID is dropped, the other keys of
 * PMIX_SESSION_INFO_ARRAY and of PMIX_JOB_INFO_ARRAY are job keys. Several
 * arrays for the same rank, node or app merge (later keys win). Any integer
 * type serves for ranks, node ids and appnums.
 * Returns PMIX_SUCCESS; PMIX_ERR_BAD_PARAM (and changes nothing) if the
 * namespace or a key is invalid, an array key's value is not a
 * PMIX_DATA_ARRAY of PMIX_INFO, a PMIX_PROC_DATA array does not start with
 * PMIX_RANK, a node/app array has no identifier (or a hostname that is not a
 * string), or a node's id and hostname contradict another node's;
 * PMIX_ERR_NOMEM (changing nothing). */
pmix_status_t px_store_load_job(px_store *s, const char *nspace, const pmix_info_t info[],
                                size_t ninfo);
/* True once job-level data of `nspace` was loaded (even an empty array). */
bool px_store_has_job(const px_store *s, const char *nspace);
/* Forget everything about `nspace`: job-level data and process data (the
 * references to blobs its records were in go too). Unknown: no-op. */
void px_store_drop_job(px_store *s, const char *nspace);
/* Pack the job-level data of `nspace` (with its name); px_store_unpack_job
 * loads it into another store, replacing what that store held for it, so
 * that every px_store_get_job answers the same there. A namespace without
 * job-level data packs as an empty job. px_store_unpack_job returns
 * PMIX_SUCCESS, PMIX_ERR_NOMEM, or the codec's error
 * (PMIX_ERR_UNPACK_FAILURE, ...) for a bad buffer, which changes nothing. */
void px_store_pack_job(const px_store *s, const char *nspace, px_buf *b);
pmix_status_t px_store_unpack_job(px_store *s, px_buf *b);

/* Look up job-level data.
 * - rank == PMIX_RANK_WILDCARD: the job keys; but if `qual` holds
 *   PMIX_NODEID or PMIX_HOSTNAME the keys of that node, if it holds
 *   PMIX_APPNUM the keys of that app.
 * - a specific rank: that rank's PMIX_PROC_DATA keys first; if absent, the
 *   keys of the node the rank lives on (its PMIX_NODEID, or failing that
 *   its PMIX_HOSTNAME), then of its app (its PMIX_APPNUM), then the job
 *   keys. A rank without PMIX_PROC_DATA sees the job keys.
 * A node or app qualifier wins over the rank: only that node's (or app's)
 * keys are searched. PMIX_NODEID is used before PMIX_HOSTNAME, both before
 * PMIX_APPNUM.
 * Qualified values: a host may register a value for a key under
 * qualifiers, as a PMIX_QUALIFIED_VALUE info (a data array of infos: the
 * key and value first, then the qualifiers); the qualifiers known are
 * PMIX_NETWORK_PLANE, PMIX_NETWORK_NIC and PMIX_NETWORK_VIEW (and their
 * PMIX_FABRIC_* spellings). A lookup whose `qual` holds some of these
 * finds only the value registered under exactly those qualifiers with
 * equal values (px_store_qualified_key); without any, the plain value.
 * Other infos in `qual` are ignored. A network-coordinate key missing
 * under its own spelling is looked up under the other (px_key_alias).
 * Returns PMIX_SUCCESS with *out a new copy; PMIX_ERR_NOT_FOUND (also for an
 * unknown namespace, node or app); PMIX_ERR_BAD_PARAM for a NULL key or a
 * qualifier of the wrong type; PMIX_ERR_NOMEM. Each step is a hash lookup,
 * whatever the size of the job. */
pmix_status_t px_store_get_job(const px_store *s, const char *nspace, pmix_rank_t rank,
                               const char *key, const pmix_info_t qual[], size_t nqual,
                               pmix_value_t **out);
/* The key under which a value qualified by the network qualifiers found in
 * `qual` is kept: `key` itself when there are none, else
 * "key?pmix.net.plane=P&pmix.net.nic=N&pmix.net.view=V" with those present
 * in that order (numbers in decimal). Returns how many qualifiers it used,
 * or -1 if a qualifier's value is neither a string nor a number or the
 * result does not fit `outlen` or PMIX_MAX_KEYLEN. */
int px_store_qualified_key(const char *key, const pmix_info_t *qual, size_t nqual, char *out,
                           size_t outlen);

/* ---- process data ---- */

/* Store one key of process `p` in `scope` (PMIX_LOCAL, PMIX_REMOTE,
 * PMIX_GLOBAL or PMIX_INTERNAL; PMIX_SCOPE_UNDEF counts as GLOBAL).
 * The value is copied; an earlier value of the same key is replaced,
 * whatever scope it was put in (a key has one value per process).
 * Returns PMIX_SUCCESS; PMIX_ERR_BAD_PARAM for an unknown scope, an invalid
 * namespace or key, a NULL value; PMIX_ERR_NOMEM. */
pmix_status_t px_store_put(px_store *s, const pmix_proc_t *p, pmix_scope_t scope, const char *key,
                           const pmix_value_t *v);

/* Pack process `p`'s LOCAL, REMOTE and GLOBAL puts as three kv-lists (what
 * a client sends at PMIx_Commit; a process without puts sends three empty
 * lists); px_store_unpack_commit on the server replaces p's LOCAL, REMOTE
 * and GLOBAL data with them (its INTERNAL data stays), after which
 * px_store_has_proc(p) is true. It returns PMIX_SUCCESS, PMIX_ERR_BAD_PARAM,
 * PMIX_ERR_NOMEM or the codec's error for a bad buffer. */
void px_store_pack_commit(const px_store *s, const pmix_proc_t *p, px_buf *b);
pmix_status_t px_store_unpack_commit(px_store *s, const pmix_proc_t *p, px_buf *b);

/* Pack one record of `p`'s data for readers on the same node as p
 * (`for_local`: LOCAL + GLOBAL) or on other nodes (REMOTE + GLOBAL); a key
 * in both sets is packed once, with the value of the readers' scope.
 * INTERNAL data is never packed. A process with no data gets a record with
 * an empty kv-list. `p` must not be NULL. */
void px_store_pack_record(const px_store *s, const pmix_proc_t *p, bool for_local, px_buf *b);

/* Index the records of `blob`. The store takes one reference per record it
 * indexes and drops it when a newer record replaces that one (or the
 * namespace is dropped, or the store destroyed); the caller keeps its own
 * reference. All record headers are checked first (namespace, length within
 * the blob, a kv-list count that length can hold); the kv-lists themselves
 * are decoded only by lookups. A malformed blob changes nothing and returns
 * PMIX_ERR_UNPACK_FAILURE; also PMIX_ERR_BAD_PARAM, PMIX_ERR_NOMEM. An
 * empty blob is valid (and not referenced). */
pmix_status_t px_store_add_blob(px_store *s, px_blob *blob);

/* A byte range of a blob. */
typedef struct px_part {
    size_t off, len;
} px_part;

/* px_store_add_blob for records that lie in parts[0..n) of `blob` (each a
 * whole number of records; the bytes between them are not read), as one
 * addition: the fence page's slots. The same checks and results; a part
 * out of the blob's range is PMIX_ERR_UNPACK_FAILURE. With `slots_ns`
 * (not NULL), part i must hold exactly one record, process i's of
 * namespace slots_ns: the page's slots are written by the processes
 * themselves, and one that wrote another's name, or two records, must not
 * pass for it (PMIX_ERR_UNPACK_FAILURE, nothing changes). */
pmix_status_t px_store_add_parts(px_store *s, px_blob *blob, const px_part *parts, size_t n,
                                 const char *slots_ns);

/* ---- collected data in groups (groups.c) ---- */

/* "PXG1": the first word of a group. */
#define PX_GROUP_MAGIC 0x31475850u

/* Pack the records of procs[0..n) (as px_store_pack_record, cut for
 * `for_local` readers) as groups: one per namespace, ranks ascending, each
 * with an index of its records (format in groups.c). What a server hands
 * its host at a collecting fence; the host concatenates the groups of
 * every node. Errors are kept in the buffer (px_buf_status). */
void px_store_pack_groups(const px_store *s, const pmix_proc_t *const procs[], size_t n,
                          bool for_local, px_buf *b);
/* Check the headers of a concatenation of groups: PMIX_SUCCESS (and the
 * number of groups in *ngroups, may be NULL), PMIX_ERR_UNPACK_FAILURE,
 * PMIX_ERR_BAD_PARAM. Reads O(groups) bytes, never a record. */
pmix_status_t px_store_check_groups(const void *data, size_t len, size_t *ngroups);
/* Add collected data in groups. Checks every group header (a malformed
 * blob changes nothing: PMIX_ERR_UNPACK_FAILURE) and keeps a directory of
 * the groups (4 bytes a group) and one reference to `blob`; records are
 * read only by lookups, which check what they read. Its records are newer
 * than every record added before; an older group blob holding exactly the
 * same processes is dropped. PMIX_ERR_OUT_OF_RESOURCE for a blob of 4 GiB
 * or more; PMIX_ERR_NOMEM; PMIX_ERR_BAD_PARAM. An empty blob is valid. */
pmix_status_t px_store_add_groups(px_store *s, px_blob *blob);

/* Look up `key` of process `p`: its own puts (all scopes visible to
 * `reader_local`: LOCAL+GLOBAL+INTERNAL for a reader on p's node,
 * REMOTE+GLOBAL+INTERNAL otherwise), then the newest record from blobs
 * and group blobs.
 * Returns PMIX_SUCCESS with a new copy in *out; PMIX_ERR_NOT_FOUND;
 * PMIX_ERR_BAD_PARAM; PMIX_ERR_NOMEM; or the codec's error if the record's
 * kv-list turns out to be malformed. */
pmix_status_t px_store_get_proc(const px_store *s, const pmix_proc_t *p, const char *key,
                                bool reader_local, pmix_value_t **out);

/* Look `key` up in the data of every process of `nspace` this store
 * holds (PMIx_Get with PMIX_RANK_UNDEF: the key is expected to be unique
 * in the namespace); the first found wins. Returns a new copy in *out, or
 * PMIX_ERR_NOT_FOUND. */
pmix_status_t px_store_get_any(const px_store *s, const char *nspace, const char *key,
                               pmix_value_t **out);

/* True if the store holds committed data or a record for `p` (so a key
 * not found there does not exist, as far as this store can tell). Puts
 * alone (a client's own, or PMIx_Store_internal) do not count. */
bool px_store_has_proc(const px_store *s, const pmix_proc_t *p);

/* Bytes of p's kept commit (a server's store) that its record for
 * `for_local` readers holds (px_store_pack_record), 0 if none: most of
 * that record, for a writer that wants to know early whether the records
 * of many processes fit somewhere. */
size_t px_store_commit_len(const px_store *s, const pmix_proc_t *p, bool for_local);

#endif /* PX_STORE_H */
