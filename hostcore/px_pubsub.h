/*
 * px_pubsub.h - the data service of PMIx_Publish, PMIx_Lookup and
 * PMIx_Unpublish, written once for every host (docs/architecture.md, "The
 * host core"; docs/user-guide.md, "Publish and lookup").
 *
 * How it works. A host keeps one service where its jobs' ranges meet
 * (pmixrun for its job; the in-process test host for its world) and hands
 * it each request as the server engine's upcall brought it, with who made
 * it (a px_pubsub_who: the process, its session, node and app, its uid).
 * The service is pure logic: no I/O, no clock, no thread, no global. Time
 * comes in as `now` (seconds on any monotonic clock, the caller's); the
 * caller asks px_pubsub_next_deadline when to call px_pubsub_expire, which
 * is how a lookup with PMIX_WAIT and PMIX_TIMEOUT ends.
 *
 * An entry is (range, scope, key) -> value, with its owner and
 * persistence. The scope is what the range means for the publisher: its
 * namespace for PMIX_RANGE_NAMESPACE, its session for PMIX_RANGE_SESSION,
 * its node for PMIX_RANGE_LOCAL, itself for PMIX_RANGE_PROC_LOCAL, nothing
 * for PMIX_RANGE_GLOBAL. A lookup in range R finds the entries published
 * in R whose scope is the requester's own scope for R (the Standard's
 * retrieval rules: same range, and the requester is a member of the
 * publisher's range). The default range is PMIX_RANGE_SESSION and the
 * default persistence PMIX_PERSIST_APP, as the Standard says.
 *
 *   publish    every info entry that is not a directive (PMIX_RANGE,
 *              PMIX_PERSISTENCE, PMIX_TIMEOUT, PMIX_USERID, PMIX_GRPID,
 *              PMIX_WAIT) is a key to publish; all or none are published.
 *              A key already published in the same range and scope, or
 *              given twice, gives PMIX_ERR_DUPLICATE_KEY.
 *   lookup     finds the keys; PMIX_WAIT (a bool, or an integer: how many
 *              keys must be found, 0 all) parks it until enough are
 *              published, bounded by PMIX_TIMEOUT (seconds) if given.
 *              Status: PMIX_SUCCESS all found, PMIX_ERR_PARTIAL_SUCCESS
 *              some, PMIX_ERR_NOT_FOUND none, PMIX_ERR_TIMEOUT when the
 *              wait ran out.
 *   unpublish  only the owner removes an entry (another process gets
 *              PMIX_ERR_NO_PERMISSIONS and nothing is removed); NULL keys
 *              remove every entry of the caller (in the range given, or
 *              in all).
 *
 * Persistence: PMIX_PERSIST_INDEF until unpublished; PMIX_PERSIST_FIRST_READ
 * until the first lookup that returns it; PMIX_PERSIST_PROC until the
 * owner ends (px_pubsub_proc_ended); PMIX_PERSIST_APP until its app ends
 * (px_pubsub_app_ended, or px_pubsub_job_ended for all of a job's apps);
 * PMIX_PERSIST_SESSION until its session ends (px_pubsub_session_ended).
 *
 * Limits bound what one process can make the host hold (px_pubsub_limits):
 * past them a publish or a lookup fails with PMIX_ERR_OUT_OF_RESOURCE and
 * nothing changes. PMIX_RANGE_RM, PMIX_RANGE_CUSTOM and the access
 * attributes (PMIX_ACCESS_USERIDS, _GRPIDS, _PERMISSIONS) are refused with
 * PMIX_ERR_NOT_SUPPORTED rather than ignored: a publisher that restricts
 * who may read must not have its data handed to anyone.
 *
 * Callbacks. A lookup's callback runs exactly once if px_pubsub_lookup
 * returned PMIX_SUCCESS, never if it returned an error. It may run before
 * px_pubsub_lookup returns (nothing to wait for), or later from
 * px_pubsub_publish, px_pubsub_expire, px_pubsub_proc_ended,
 * px_pubsub_job_ended or px_pubsub_cancel_all; the data it gets is
 * borrowed for the call. A callback must not call back into the service.
 */
#ifndef PX_PUBSUB_H
#define PX_PUBSUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

typedef struct px_pubsub px_pubsub;

/* Who makes a request, as the host knows it. */
typedef struct px_pubsub_who {
    pmix_proc_t proc;
    uint32_t session; /* its job's session (allocation) */
    uint32_t node;    /* the node it runs on (PMIX_RANGE_LOCAL) */
    uint32_t app;     /* its app number in its job (PMIX_PERSIST_APP) */
} px_pubsub_who;

/* What one process may make the service hold; 0 in a field: its default. */
typedef struct px_pubsub_limits {
    size_t owner_entries; /* entries one process owns (default 256) */
    size_t owner_bytes;   /* their keys and values, about (default 1 MiB) */
    size_t total_bytes;   /* the whole service's entries (default 64 MiB) */
    size_t proc_waiters;  /* lookups of one process waiting (default 16) */
    size_t total_waiters; /* lookups waiting in all (default 4096) */
} px_pubsub_limits;

#define PX_PUBSUB_OWNER_ENTRIES 256
#define PX_PUBSUB_OWNER_BYTES ((size_t)1 << 20)
#define PX_PUBSUB_TOTAL_BYTES ((size_t)64 << 20)
#define PX_PUBSUB_PROC_WAITERS 16
#define PX_PUBSUB_TOTAL_WAITERS 4096

/* A new, empty service; `lim` NULL for the defaults. NULL if out of
 * memory. */
px_pubsub *px_pubsub_create(const px_pubsub_limits *lim);
/* Free everything without calling any callback (call px_pubsub_cancel_all
 * first to answer waiting lookups). NULL is a no-op. */
void px_pubsub_destroy(px_pubsub *ps);

/* The answer to a lookup: `data` (ndata entries; NULL with none) holds
 * the keys found, each with its publisher and value, borrowed for the
 * call. */
typedef void (*px_pubsub_lookup_cb)(pmix_status_t status, pmix_pdata_t data[], size_t ndata,
                                    void *cbdata);

/* Publish what `info` holds for `who` (see above). Returns PMIX_SUCCESS
 * (the entries are in; waiting lookups they satisfy have been answered
 * before this returns), PMIX_ERR_DUPLICATE_KEY, PMIX_ERR_BAD_PARAM (no
 * key, an empty or too long key, an invalid range or persistence),
 * PMIX_ERR_NOT_SUPPORTED, PMIX_ERR_OUT_OF_RESOURCE or PMIX_ERR_NOMEM; on
 * an error nothing changed. `info` stays the caller's. */
pmix_status_t px_pubsub_publish(px_pubsub *ps, const px_pubsub_who *who, const pmix_info_t info[],
                                size_t ninfo, double now);
/* Look up `keys` (NULL-terminated, at least one) for `who` with the
 * directives of `info`. PMIX_SUCCESS: cb(cbdata) will be called once,
 * perhaps before this returns. An error (PMIX_ERR_BAD_PARAM,
 * PMIX_ERR_NOT_SUPPORTED, PMIX_ERR_OUT_OF_RESOURCE, PMIX_ERR_NOMEM): cb is
 * never called. Entries with PMIX_PERSIST_FIRST_READ that it returns are
 * removed. */
pmix_status_t px_pubsub_lookup(px_pubsub *ps, const px_pubsub_who *who, char **keys,
                               const pmix_info_t info[], size_t ninfo, double now,
                               px_pubsub_lookup_cb cb, void *cbdata);
/* Remove `keys` (NULL: all of who's entries) that `who` published, in
 * the range of `info` (default PMIX_RANGE_SESSION; with NULL keys and no
 * PMIX_RANGE, every range). PMIX_SUCCESS, PMIX_ERR_NO_PERMISSIONS (one of
 * the keys is another process's: nothing removed), PMIX_ERR_NOT_FOUND (a
 * key was not there: the others are removed), PMIX_ERR_BAD_PARAM,
 * PMIX_ERR_NOT_SUPPORTED. */
pmix_status_t px_pubsub_unpublish(px_pubsub *ps, const px_pubsub_who *who, char **keys,
                                  const pmix_info_t info[], size_t ninfo);

/* When px_pubsub_expire should next run (the earliest deadline of a
 * waiting lookup), or 0 if no lookup waits with a deadline. */
double px_pubsub_next_deadline(const px_pubsub *ps);
/* Answer PMIX_ERR_TIMEOUT to every waiting lookup whose deadline is at or
 * before `now`. */
void px_pubsub_expire(px_pubsub *ps, double now);

/* Process `proc` ended (exited, or its connection is gone for good):
 * its PMIX_PERSIST_PROC entries go, and its waiting lookups are answered
 * PMIX_ERR_LOST_CONNECTION (nobody will read the answer, but its cbdata
 * is freed). */
void px_pubsub_proc_ended(px_pubsub *ps, const pmix_proc_t *proc);
/* App `app` of job `nspace` ended: its PMIX_PERSIST_APP entries go. */
void px_pubsub_app_ended(px_pubsub *ps, const char *nspace, uint32_t app);
/* Job `nspace` ended: as px_pubsub_proc_ended for each of its processes,
 * and its PMIX_PERSIST_APP entries go. */
void px_pubsub_job_ended(px_pubsub *ps, const char *nspace);
/* Session `session` ended: the PMIX_PERSIST_SESSION entries its
 * processes published go. */
void px_pubsub_session_ended(px_pubsub *ps, uint32_t session);
/* Answer every waiting lookup with `status` (the host is going away). */
void px_pubsub_cancel_all(px_pubsub *ps, pmix_status_t status);

/* Counts, for hosts' reports and tests. */
size_t px_pubsub_entries(const px_pubsub *ps);
size_t px_pubsub_waiting(const px_pubsub *ps);

/* ---- requests and answers between nodes ----
 * A host whose data service lives on another node (pmixd -> pmixrun,
 * pmixsim node N -> node 0) carries a request's keys and directives, and
 * a lookup's answer, as these bodies (PMIx_Data_pack, so any host can
 * read them): request = u8 has-keys, [u32 n, n strings], u32 n, n infos;
 * answer = u32 n, n pdata. Packing fills *out (free with
 * PMIx_Byte_object_destruct). Unpacking reads `len` bytes at `p`
 * (borrowed) into new arrays (keys NULL-terminated, or NULL when the
 * request had none; free with PMIx_Argv_free, PMIx_Info_free and
 * PMIx_Pdata_free); on an error nothing is returned. */
pmix_status_t px_pubsub_pack_request(char **keys, const pmix_info_t info[], size_t ninfo,
                                     pmix_byte_object_t *out);
pmix_status_t px_pubsub_unpack_request(const void *p, size_t len, char ***keys, pmix_info_t **info,
                                       size_t *ninfo);
pmix_status_t px_pubsub_pack_answer(const pmix_pdata_t pd[], size_t npd, pmix_byte_object_t *out);
pmix_status_t px_pubsub_unpack_answer(const void *p, size_t len, pmix_pdata_t **pd, size_t *npd);

#endif /* PX_PUBSUB_H */
