/*
 * px_coll.h - cross-node collectives (barrier, allgather of variable-size
 * blobs) as message-driven state machines, shared by pmixd and pmixsim.
 *
 * A collective runs among `nmembers` members numbered 0..n-1 (the host
 * maps them to daemons). Each member holds one px_coll: a context created
 * with a table of operations (send a message to a member, start and cancel
 * a one-shot timer, read the clock) and a `void *` passed back to them.
 * px_coll does no I/O, reads no clock of its own, starts no thread and has
 * no mutable global state; everything arrives through four entry points:
 *
 *   px_coll_start()        this member joins the next collective, with its
 *                          contribution (allgather) or none (barrier);
 *   px_coll_deliver()      a message from another member arrived;
 *   px_coll_peer_failed()  the host learned that a member died;
 *   the timer callback     the host's timer fired.
 *
 * and leaves through two: ops->send and the completion callback given to
 * px_coll_start(). A host drives many px_coll side by side (one per group
 * of members, e.g. per fence participant set), routing incoming messages
 * by the collective id that px_coll_msg_peek() reads.
 *
 * Collectives on one px_coll are numbered by epoch (the k-th start is
 * epoch k, counting from 1) and every member runs the same sequence. Every
 * message carries (collective id, epoch, phase, round, algorithm, sender),
 * so back-to-back collectives never mix: a message for the next epoch that
 * arrives early is queued (bounded), a duplicate or a message of a past
 * epoch is dropped, and a malformed one is dropped and counted.
 *
 * Failures. A member reported failed (px_coll_peer_failed, or a send that
 * the host refuses), or no progress for `timeout` seconds, ends the running
 * collective with an error and floods an ABORT notice to the survivors, so
 * that every survivor still waiting ends with an error within a bounded
 * time even if only one of them saw the failure (docs/collectives.md
 * states the conditions; the timeout is the backstop). A member known failed
 * makes every later collective on this px_coll fail at once: the host
 * creates a new px_coll (a new id) for the survivors. docs/collectives.md
 * states the rules, the header format and the algorithms.
 *
 * Threads: a px_coll is not thread-safe; the host serializes all calls on
 * one px_coll (its event loop, or SimGrid's actor).
 */
#ifndef PX_COLL_H
#define PX_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

#define PX_COLL_OPS_VERSION 1

/* The environment variables and fence info keys that choose an algorithm
 * (value `auto` or an algorithm name; see px_coll_parse). FENCE applies to
 * fences that collect data (allgather), BARRIER to fences that do not. The
 * host reads them and passes the strings to px_coll_choose(). */
#define PX_COLL_ENV_FENCE "PMIXLAB_FENCE_ALGO"
#define PX_COLL_ENV_BARRIER "PMIXLAB_BARRIER_ALGO"
#define PX_COLL_KEY_FENCE "pmixlab.fence.algo"
#define PX_COLL_KEY_BARRIER "pmixlab.barrier.algo"

/* Size of the header that starts every message (docs/collectives.md). */
#define PX_COLL_HDR_SIZE 32
/* "No member", in failure notices and px_coll_msg_info. */
#define PX_COLL_NONE UINT32_MAX

typedef struct px_coll px_coll;
typedef struct px_coll_algo px_coll_algo;
typedef struct px_coll_groups px_coll_groups;
typedef struct px_coll_timer px_coll_timer; /* opaque, defined by each host */

typedef enum {
    PX_COLL_BARRIER = 1,
    PX_COLL_ALLGATHER = 2,
} px_coll_kind;

typedef struct px_coll_ops {
    unsigned version; /* PX_COLL_OPS_VERSION */

    /* Send `msg` (`len` bytes, allocated with malloc) to member `to`. The
     * host takes ownership of `msg` in every case, also on failure, and
     * frees it with free() when it is done. It must not call into any
     * px_coll from inside send (queue the delivery instead).
     * PMIX_ERR_NOMEM or PMIX_ERR_OUT_OF_RESOURCE mean that this member
     * could not send it (no memory, a message bigger than the transport
     * takes): the running collective fails with that status, as a local
     * failure (every member learns of it), and `to` stays a member in good
     * standing; an ABORT notice refused so is sent again later (a timer,
     * or the next start or delivery without timers). Any other non-zero return means `to` is
     * unreachable: px_coll then treats `to` exactly as if px_coll_peer_failed(to) had been called.
     */
    pmix_status_t (*send)(void *ctx, uint32_t to, void *msg, size_t len);

    /* One-shot timer: `cb(arg)` runs later, never from inside timer_start,
     * unless cancelled first. Returns NULL if no timer could be made.
     * px_coll cancels only timers whose callback has not started, and
     * forgets a timer once its callback starts. May be NULL (with
     * timer_cancel and now) when the host never asks for timeouts. */
    px_coll_timer *(*timer_start)(void *ctx, double seconds, void (*cb)(void *arg), void *arg);
    void (*timer_cancel)(void *ctx, px_coll_timer *timer);
    /* Seconds on a monotonic clock (simulated time in pmixsim). */
    double (*now)(void *ctx);

    /* Required with px_coll_config.sizes_only, else unused: `send`, plus
     * `wire_len`, the size the message would have with the contributions'
     * bytes in it (what a simulator charges the network for). */
    pmix_status_t (*send_sized)(void *ctx, uint32_t to, void *msg, size_t len, size_t wire_len);
} px_coll_ops;

typedef struct px_coll_config {
    uint64_t id;       /* collective id, the same on every member */
    uint32_t nmembers; /* n >= 1 */
    uint32_t me;       /* 0..n-1 */
    /* Groups for the hierarchical algorithm (borrowed: it must outlive the
     * px_coll, and may be shared by every member of a simulation). NULL is
     * one flat group. Its member count must be nmembers. */
    const px_coll_groups *groups;
    /* Cap on the bytes of messages queued for a later epoch; 0 = no cap
     * beyond the count cap (4n + 16 messages). */
    size_t early_bytes_max;
    /* Allgathers move sizes, not bytes: px_coll_start's contribution is
     * only a length (contrib may be NULL), messages carry the blocks'
     * lengths without their bytes and go out through ops->send_sized with
     * the size they would have had, and the result has offsets but no data
     * (NULL). The same algorithms, message counts, rounds and (simulated)
     * sizes: for a simulator that keeps the bytes aside, shared, instead
     * of copying them through every member. Every member must set it
     * alike (a mix fails as malformed messages). */
    bool sizes_only;
} px_coll_config;

/* The result of an allgather: the contributions of members 0..n-1,
 * concatenated in member order; member i's is data[offsets[i] ..
 * offsets[i+1]) (with sizes_only, data is NULL: offsets and size only). The callback may take
 * `data` and/or `offsets` (copy the pointer, set the field to NULL, later free() it); whatever it
 * leaves is freed when it returns. */
typedef struct px_coll_result {
    uint32_t nmembers;
    uint64_t *offsets; /* nmembers + 1 entries */
    uint8_t *data;     /* NULL when size == 0 */
    size_t size;
} px_coll_result;

/* Completion: PMIX_SUCCESS with `res` (allgather) or NULL (barrier); or an
 * error with `res` NULL:
 *   PMIX_ERR_PROC_TERM_WO_SYNC  a member was reported failed (here or on
 *                               another member, via an ABORT notice), or
 *                               the host refused a send;
 *   PMIX_ERR_TIMEOUT            no progress for `timeout` seconds (here or
 *                               on another member);
 *   PMIX_ERR_BAD_PARAM          members disagree on the algorithm;
 *   PMIX_ERR_NOMEM              out of memory (here or elsewhere).
 * The callback may call px_coll_start() (the next epoch) and
 * px_coll_peer_failed(), but must not destroy the px_coll. */
typedef void (*px_coll_cb)(pmix_status_t status, px_coll_result *res, void *cbdata);

/* An algorithm choice: what px_coll_parse() makes of "auto", "ring",
 * "tree:4", "hier:bruck:2"... A zeroed choice means auto. */
typedef struct px_coll_choice {
    const px_coll_algo *algo;  /* NULL = auto */
    const px_coll_algo *inner; /* hier: algorithm among group leaders; NULL = auto */
    unsigned radix;            /* tree and hier: radix of the trees; 0 = default (2) */
    unsigned leaders;          /* hier: PX_COLL_LEADERS_*; 0 = default */
} px_coll_choice;

/* hier's leaders (docs/collectives.md, "Hierarchical"). ONE: each group's
 * lowest member gathers its group, runs the leaders' algorithm and
 * broadcasts the result down a tree. ALL: every member is a leader: the
 * members at position i of every group run the leaders' algorithm on
 * their own blocks, then each group runs an allgather of what its members
 * got. The default: ALL for an allgather over more than one group, ONE
 * otherwise. */
enum {
    PX_COLL_LEADERS_DEFAULT = 0,
    PX_COLL_LEADERS_ONE = 1,
    PX_COLL_LEADERS_ALL = 2
};

typedef struct px_coll_args {
    px_coll_kind kind;
    px_coll_choice choice;
    /* For `auto`: the expected total size of the allgather result, which
     * must be the same value on every member (a job-wide figure, or 0 for
     * "unknown"). Members that end up with different algorithms or
     * parameters fail with PMIX_ERR_BAD_PARAM as soon as one message
     * crosses the disagreement; if none ever does (each side waits for the
     * other), only the timeout ends it. */
    uint64_t size_hint;
    /* Seconds without progress before PMIX_ERR_TIMEOUT; 0 = no timeout. */
    double timeout;
} px_coll_args;

typedef struct px_coll_stats {
    uint64_t sent;         /* data messages handed to ops->send */
    uint64_t sent_bytes;   /* their bytes, headers included */
    uint64_t notices_sent; /* ABORT notices handed to ops->send */
    uint64_t received;     /* calls of px_coll_deliver */
    uint64_t accepted;     /* data messages that made progress */
    uint64_t duplicates;   /* dropped: already received */
    uint64_t stale;        /* dropped: past epoch */
    uint64_t queued;       /* kept for a later epoch */
    uint64_t too_far;      /* dropped: more than 4 epochs ahead */
    uint64_t overflow;     /* dropped: early queue full */
    uint64_t malformed;    /* dropped: failed a check */
    uint64_t mismatched;   /* another algorithm or parameter for this epoch */
    uint64_t foreign;      /* dropped: another collective id */
    uint64_t from_dead;    /* dropped: sender known failed */
    uint64_t notices;      /* ABORT notices received */
    uint64_t completed;    /* collectives completed with success */
    uint64_t failed;       /* collectives completed with an error */
    uint64_t notices_held; /* ABORT notices this member could not send
                            * (local failure), kept to send again */
} px_coll_stats;

/* ---- members ---- */

/* A member's context, or NULL (bad config, ops without send or with the
 * wrong version, out of memory). */
px_coll *px_coll_create(const px_coll_ops *ops, void *ctx, const px_coll_config *cfg);
/* Free everything, cancel the timer; a running collective is abandoned
 * without its callback. NULL is a no-op. Not from inside a callback. */
void px_coll_destroy(px_coll *c);

/* Join the next collective (epoch = previous + 1). `contrib` (`len` bytes,
 * len < 4 GiB) is copied; it is ignored for a barrier. On PMIX_SUCCESS the
 * epoch is consumed and `cb` runs exactly once, possibly before this
 * returns (one member, a known failure, early messages that complete it).
 * Otherwise nothing happened and `cb` never runs:
 *   PMIX_ERR_RESOURCE_BUSY  a collective is running on this px_coll;
 *   PMIX_ERR_BAD_PARAM      bad args, or an algorithm that does not do
 *                           this kind (or an inner one that cannot serve);
 *   PMIX_ERR_NOT_SUPPORTED  a timeout without timer ops;
 *   PMIX_ERR_NOMEM, PMIX_ERR_OUT_OF_RESOURCE (no timer). */
pmix_status_t px_coll_start(px_coll *c, const px_coll_args *args, const void *contrib, size_t len,
                            px_coll_cb cb, void *cbdata);

/* Join the next collective only to fail it, with `status` (an error): this
 * member cannot take part (e.g. a local participant of the fence failed or
 * timed out). The epoch is consumed as by px_coll_start, so that the
 * members stay in step, and an ABORT notice with `status` is flooded: a
 * member running this epoch ends it with `status`, a member that has not
 * started it yet fails it at once when it does (if it is at most 4
 * epochs behind; otherwise its timeout ends it). `cb`
 * runs with `status` and no result before this returns. Errors, with
 * nothing done and `cb` not called: PMIX_ERR_RESOURCE_BUSY (a collective
 * is running here), PMIX_ERR_BAD_PARAM (status is not an error). */
pmix_status_t px_coll_start_failed(px_coll *c, pmix_status_t status, px_coll_cb cb, void *cbdata);
/* A message from member `from` (the sender as the transport knows it).
 * `msg` is borrowed for the call. Completion callbacks may run inside.
 * Returns PMIX_SUCCESS when the message was used, queued, or dropped as a
 * duplicate, stale or too far ahead; PMIX_ERR_BAD_PARAM when it was
 * malformed (and dropped), or named another algorithm or parameter for the
 * running epoch (which then fails); PMIX_ERR_NOT_FOUND when it belongs to
 * another collective id; PMIX_ERR_OUT_OF_RESOURCE or PMIX_ERR_NOMEM when it
 * could not be queued. Never an error the host must act on. */
pmix_status_t px_coll_deliver(px_coll *c, uint32_t from, const void *msg, size_t len);

/* The host learned that `member` failed. Idempotent; ignores `me` and
 * out-of-range members. Ends the running collective with
 * PMIX_ERR_PROC_TERM_WO_SYNC (its callback runs inside), notifies the
 * survivors, and makes every later start fail at once. */
void px_coll_peer_failed(px_coll *c, uint32_t member);

const px_coll_stats *px_coll_get_stats(const px_coll *c);
/* The epoch of the running collective, or of the last one if none runs
 * (0 before the first start). */
uint32_t px_coll_epoch(const px_coll *c);
bool px_coll_busy(const px_coll *c);
uint32_t px_coll_queued(const px_coll *c); /* messages waiting for a later epoch */

/* ---- the catalog ---- */

/* By exact (case-insensitive) name, by wire id, or the i-th (NULL past the
 * end). The names: dissemination, tree, recdbl, ring, bruck, hier. */
const px_coll_algo *px_coll_algo_by_name(const char *name);
const px_coll_algo *px_coll_algo_by_id(unsigned id);
const px_coll_algo *px_coll_algo_at(size_t i);
const char *px_coll_algo_name(const px_coll_algo *a);
unsigned px_coll_algo_id(const px_coll_algo *a);
bool px_coll_algo_supports(const px_coll_algo *a, px_coll_kind kind);

/* The `auto` rule (docs/collectives.md): for a barrier, dissemination;
 * for an allgather with `bytes` the expected total result size (0 =
 * unknown): ring if bytes >= 512 KiB and n <= 64, else recdbl if n is a
 * power of two, else bruck. Never NULL for a valid kind. */
const px_coll_algo *px_coll_auto(px_coll_kind kind, uint32_t nmembers, uint64_t bytes);
/* The `auto` rule with the members' groups (NULL: none): hier for an
 * allgather over groups of one size (more than one group of more than one
 * member) that the host marked switched (px_coll_groups_set_switched),
 * where the ring rule above does not apply; else px_coll_auto().
 * px_coll_resolve() applies it; docs/collectives.md has the study behind
 * it. */
const px_coll_algo *px_coll_auto_groups(px_coll_kind kind, uint32_t nmembers, uint64_t bytes,
                                        const px_coll_groups *groups);

/* Parse "auto", "" or NULL (auto), "NAME", "tree:RADIX",
 * "hier[:INNER][:RADIX][:one|all]" for `kind`. On error returns PMIX_ERR_BAD_PARAM,
 * leaves *out zeroed and writes a sentence listing the valid values to
 * `err` (may be NULL). */
pmix_status_t px_coll_parse(px_coll_kind kind, const char *value, px_coll_choice *out, char *err,
                            size_t errlen);
/* The precedence rule: the fence's info value if given (non-NULL), else
 * the environment's, else auto. Errors name the source. */
pmix_status_t px_coll_choose(px_coll_kind kind, const char *info_value, const char *env_value,
                             px_coll_choice *out, char *err, size_t errlen);
/* Write the choice as px_coll_parse reads it ("auto", "tree:2", ...). */
void px_coll_choice_format(const px_coll_choice *ch, char *buf, size_t len);

/* Resolve auto and defaults as px_coll_start does: `out` names a concrete
 * algorithm (and inner one, and radix where they apply). */
pmix_status_t px_coll_resolve(const px_coll_choice *in, px_coll_kind kind, uint32_t nmembers,
                              uint64_t size_hint, const px_coll_groups *groups,
                              px_coll_choice *out);
/* The textbook counts of a resolved choice: data messages sent by all
 * members together in one failure-free collective, and rounds on the
 * critical path. */
uint64_t px_coll_messages(const px_coll_choice *resolved, uint32_t nmembers,
                          const px_coll_groups *groups);
uint32_t px_coll_rounds(const px_coll_choice *resolved, uint32_t nmembers,
                        const px_coll_groups *groups);

/* What a collective's formula is computed from: Hockney's alpha + k*beta
 * model (Thakur, Rabenseifner and Gropp, 2005) applied to what goes on the
 * wire, for a contention-free network where every pair of members is
 * `latency` seconds and 1/`beta` bytes per second apart. */
typedef struct px_coll_cost_in {
    px_coll_kind kind;
    uint32_t nmembers;
    unsigned radix; /* the resolved radix (0: the algorithm's default) */
    uint64_t bytes; /* the contributions of all members together */
    double latency; /* seconds, one message between two members */
    double beta;    /* seconds per byte */
    /* hier: the number of groups and the size of the largest; 0 = not
     * known (then hier has no formula). */
    uint32_t ngroups, group_size;
} px_coll_cost_in;

/* The simulated time a failure-free run of `resolved` should take, in
 * seconds, from its catalog row; NAN when the row has no formula (tree
 * with a radix other than 2, hier without ngroups and group_size, or with
 * one leader and trees of another radix). Every message pays latency plus its
 * header (PX_COLL_HDR_SIZE, and an allgather's range) at beta; the data
 * counts the length that travels with each contribution. */
double px_coll_formula(const px_coll_choice *resolved, const px_coll_cost_in *in);

/* ---- groups (for hier) ---- */

/* Members with the same label form a group; its leader is its lowest
 * member. `labels` (n entries) is copied. NULL on bad input or no memory. */
px_coll_groups *px_coll_groups_create(uint32_t nmembers, const uint32_t *labels);
/* Members whose first `prefix` coordinates (coords[m].coord[0..prefix-1])
 * are equal form a group: e.g. prefix 1 on a (switch, port) view groups by
 * switch. A member whose coordinate has fewer than `prefix` dimensions is
 * refused (NULL). */
px_coll_groups *px_coll_groups_from_coords(uint32_t nmembers, const pmix_coord_t *coords,
                                           size_t prefix);
void px_coll_groups_destroy(px_coll_groups *g);
/* The host says that every group sits under one switch: its members reach
 * each other at the full rate of their links, without the links between
 * groups (a fat tree's leaf switch; not a torus line). Only then does the
 * auto rule pick hier (px_coll_auto_groups). Call it before lending the
 * groups to any px_coll; false by default. NULL is a no-op. */
void px_coll_groups_set_switched(px_coll_groups *g, bool switched);
uint32_t px_coll_groups_count(const px_coll_groups *g);
uint32_t px_coll_groups_of(const px_coll_groups *g, uint32_t member); /* 0..count-1 */
uint32_t px_coll_groups_size(const px_coll_groups *g, uint32_t group);
uint32_t px_coll_groups_leader(const px_coll_groups *g, uint32_t group);

/* ---- messages ---- */

typedef struct px_coll_msg_info {
    uint8_t type;  /* 1 data, 2 abort notice */
    uint8_t algo;  /* algorithm id (0 in notices) */
    uint8_t phase; /* 0 for flat algorithms; hier: 1 gather, 2 leaders or columns, 3 broadcast or
                      groups */
    uint16_t param;
    uint64_t id;
    uint32_t epoch, round, sender, nmembers;
} px_coll_msg_info;

/* Read and check the header of `msg` (for routing by id, or counting).
 * PMIX_ERR_BAD_PARAM if it is short or not a px_coll message. */
pmix_status_t px_coll_msg_peek(const void *msg, size_t len, px_coll_msg_info *out);

#endif /* PX_COLL_H */
