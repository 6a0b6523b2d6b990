/*
 * coll_int.h - the internals of coll/, shared by its files.
 *
 *   px_coll        one member: ops, identity, the running collective (a
 *                  px_coll_run), the early queue, the failed members, the
 *                  flood state of ABORT notices, counters            core.c
 *   px_coll_run    one collective (one epoch): its algorithm, callback,
 *                  watchdog timer, result store and state machines   core.c
 *   px_coll_mach   one state machine over a "space" of n virtual ranks:
 *                  what an algorithm's file implements    dissem.c tree.c
 *                                                    ring.c bruck.c recdbl.c
 *   px_coll_driver how a run uses machines: one over all members (flat.c)
 *                  or three over groups and leaders (hier.c)
 *   px_coll_blocks a store of variable-size blocks by rank     blocks.c
 *
 * Other files: msg.c (the header codec and little-endian helpers),
 * notice.c (failed members and the ABORT flood), catalog.c (the table of
 * algorithms, counts), select.c (auto, parse, choose), groups.c.
 *
 * A machine talks to its run only through px_coll_mach_send() and the
 * fields `done` and (through px_coll_run_fail) a deferred failure: it
 * never completes or frees the run itself. After each call into a driver
 * the core looks at `fail` and `done` and finishes the run; so a machine
 * may keep going after a failed send, and nothing is freed under its feet.
 */
#ifndef PX_COLL_INT_H
#define PX_COLL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "px_coll.h"

enum {
    PX_COLL_MSG_DATA = 1,
    PX_COLL_MSG_ABORT = 2
};

/* Phases of the header: 0 for a flat run; hier uses 1..3. */
enum {
    PX_COLL_PHASE_FLAT = 0,
    PX_COLL_PHASE_GATHER = 1,
    PX_COLL_PHASE_LEADERS = 2,
    PX_COLL_PHASE_BCAST = 3,
    PX_COLL_PHASE_MAX = 3
};

/* What a machine or driver made of a message. */
enum {
    PX_COLL_V_OK = 0,
    PX_COLL_V_DUP = 1,
    PX_COLL_V_BAD = 2
};

/* Payload of an ABORT notice: i32 status, u32 origin, u32 count, then
 * count x u32 failed member. NOTICE_SIZE is its fixed part. */
#define PX_COLL_NOTICE_SIZE 12

/* How many epochs past lo a message or an ABORT notice is kept for. One
 * is enough without failures; after failures, members that abort epochs
 * back to back can get a few epochs ahead of a slow one (core.c). */
#define PX_COLL_WINDOW 4

/* ---- little-endian helpers and the header (msg.c) ---- */

void px_coll_put16(uint8_t *p, uint16_t v);
void px_coll_put32(uint8_t *p, uint32_t v);
void px_coll_put64(uint8_t *p, uint64_t v);
uint16_t px_coll_get16(const uint8_t *p);
uint32_t px_coll_get32(const uint8_t *p);
uint64_t px_coll_get64(const uint8_t *p);
void px_coll_hdr_write(uint8_t *p, const px_coll_msg_info *h);

/* ceil(lg n) for n >= 1 (0 for n == 1). */
unsigned px_coll_ceil_lg(uint32_t n);
/* The largest power of two <= n (n >= 1). */
uint32_t px_coll_pof2_floor(uint32_t n);

/* ---- block store (blocks.c) ---- */

/* Blocks 0..n-1 of variable size, each present or not, kept in one arena
 * that grows geometrically (blocks are appended in arrival order) with an
 * index by rank: 12 bytes per rank plus the data. */
typedef struct px_coll_blocks {
    uint32_t n, have;
    uint32_t *len;
    uint64_t *off; /* PX_COLL_NOBLOCK when absent */
    uint8_t *data;
    size_t used, cap;
    /* Optional check of an incoming block before it is stored (hier uses it
     * to validate group blobs): false makes the message malformed. `p`
     * holds the block's kept bytes (`kept`; all `len` of them unless the
     * store is a phantom). */
    bool (*check)(void *arg, uint32_t i, const uint8_t *p, size_t kept, size_t len);
    void *check_arg;
    /* Phantom store (px_coll_config.sizes_only): block i keeps only its
     * first kept(i) bytes (none without `kept`; hier keeps its group
     * blobs' length tables), the rest exists only as a length. */
    bool phantom;
    uint32_t (*kept)(void *arg, uint32_t i); /* arg: check_arg */
} px_coll_blocks;

#define PX_COLL_NOBLOCK UINT64_MAX

pmix_status_t px_coll_blocks_init(px_coll_blocks *b, uint32_t n);
void px_coll_blocks_fini(px_coll_blocks *b);
bool px_coll_blocks_has(const px_coll_blocks *b, uint32_t i);
/* The bytes block i of `len` bytes keeps: len, or in a phantom store
 * min(len, kept(i)). */
size_t px_coll_blocks_kept(const px_coll_blocks *b, uint32_t i, size_t len);
/* Store a copy of block i (which must be absent) of `len` bytes: its
 * kept bytes, read from `p` (may be NULL when it keeps none). */
pmix_status_t px_coll_blocks_put(px_coll_blocks *b, uint32_t i, const void *p, size_t len);
/* Make block i (absent) of `len` bytes and return where to write its kept
 * bytes; NULL when out of memory. The pointer is valid until the next
 * store. */
uint8_t *px_coll_blocks_put_space(px_coll_blocks *b, uint32_t i, size_t len);
const uint8_t *px_coll_blocks_get(const px_coll_blocks *b, uint32_t i, size_t *len);

/* A range: `count` blocks first, first+1, ... (mod n), all present. On the
 * wire: u32 first, u32 count, count x u32 length, the data in that order
 * (of a phantom store, only the kept bytes). px_coll_range_size is its
 * size, px_coll_range_wire_size the size with every block's bytes. */
size_t px_coll_range_size(const px_coll_blocks *b, uint32_t first, uint32_t count);
size_t px_coll_range_wire_size(const px_coll_blocks *b, uint32_t first, uint32_t count);
void px_coll_range_write(const px_coll_blocks *b, uint32_t first, uint32_t count, uint8_t *out);
/* Check a received range against the expected (first, count) and store
 * the blocks that are absent. With `replace`, the store is emptied first
 * (after the checks), so that a full range lands in rank order. Returns
 * PMIX_SUCCESS, PMIX_ERR_BAD_PARAM (malformed: nothing changed) or
 * PMIX_ERR_NOMEM. */
pmix_status_t px_coll_range_read(px_coll_blocks *b, const uint8_t *p, size_t len, uint32_t first,
                                 uint32_t count, bool replace);
/* Move the store into `res` (offsets and data in rank order; copies only
 * when the arena is not already in rank order). All blocks must be present.
 * The store is empty afterwards (fini still needed). */
pmix_status_t px_coll_blocks_take(px_coll_blocks *b, px_coll_result *res);

/* ---- runs and machines ---- */

typedef struct px_coll_run px_coll_run;
typedef struct px_coll_mach px_coll_mach;

typedef struct px_coll_mach_ops {
    /* Allocate state. From now on the machine accepts messages (storing
     * what arrives early) but sends nothing. */
    pmix_status_t (*init)(px_coll_mach *m);
    /* Its own data is in place (block `me` of `bs`, or the whole `down`
     * store for a broadcast root): start sending. */
    void (*start)(px_coll_mach *m);
    /* A message of this machine's phase from virtual rank `vfrom`. */
    int (*deliver)(px_coll_mach *m, uint32_t vfrom, uint32_t round, const uint8_t *p, size_t len);
    void (*fini)(px_coll_mach *m);
} px_coll_mach_ops;

/* Tree modes (tree.c): gather to vrank 0, broadcast from it, or both. */
enum {
    PX_COLL_TREE_GATHER = 1,
    PX_COLL_TREE_BCAST = 2
};

struct px_coll_mach {
    px_coll_run *run;
    const px_coll_mach_ops *ops;
    uint8_t phase;
    uint32_t n, me;       /* the space: virtual ranks 0..n-1, mine */
    const uint32_t *map;  /* vrank -> member; NULL = identity */
    px_coll_blocks *bs;   /* blocks by vrank; NULL = barrier (no data) */
    px_coll_blocks *down; /* tree: what the broadcast carries (range [0, down->n)) */
    unsigned radix;       /* tree */
    unsigned tree_mode;   /* tree */
    bool inited, started, done;
    void *st; /* the machine's own state */
};

/* Send `msg` (from px_coll_msg_alloc; NULL means the allocation failed)
 * to virtual rank `vto`; the header is written here. Never fails: a
 * problem becomes the run's deferred failure. `wire_len`: the size with
 * the bytes a phantom store left out (sizes_only), else len. */
void px_coll_mach_send(px_coll_mach *m, uint32_t vto, uint32_t round, uint8_t *msg, size_t len,
                       size_t wire_len);
/* A message with room for the header and `payload` bytes (NULL on no
 * memory); the payload starts at msg + PX_COLL_HDR_SIZE. */
uint8_t *px_coll_msg_alloc(size_t payload);
/* Send range [first, first+count) of `b` (or an empty payload when b is
 * NULL) to `vto`. */
void px_coll_mach_send_range(px_coll_mach *m, uint32_t vto, uint32_t round, const px_coll_blocks *b,
                             uint32_t first, uint32_t count);
/* Check and store a received range (or check an empty payload when `b` is
 * NULL): PX_COLL_V_OK or PX_COLL_V_BAD (out of memory defers a failure
 * and counts as OK). */
int px_coll_mach_read_range(px_coll_mach *m, px_coll_blocks *b, const uint8_t *p, size_t len,
                            uint32_t first, uint32_t count, bool replace);

pmix_status_t px_coll_mach_init(px_coll_mach *m);
void px_coll_mach_start(px_coll_mach *m);
void px_coll_mach_fini(px_coll_mach *m);

typedef struct px_coll_driver {
    pmix_status_t (*start)(px_coll_run *r, const void *contrib, size_t len);
    int (*deliver)(px_coll_run *r, const px_coll_msg_info *h, const uint8_t *p, size_t len);
    void (*fini)(px_coll_run *r);
} px_coll_driver;

extern const px_coll_driver px_coll_flat_driver;
extern const px_coll_driver px_coll_hier_driver;

extern const px_coll_mach_ops px_coll_dissem_mach;
extern const px_coll_mach_ops px_coll_tree_mach;
extern const px_coll_mach_ops px_coll_ring_mach;
extern const px_coll_mach_ops px_coll_bruck_mach;
extern const px_coll_mach_ops px_coll_recdbl_mach;

/* A catalog entry (catalog.c). */
/* The terms every formula is written in (px_coll_formula fills them):
 * p members, lg = ceil(log2 p), a = one message's cost (latency plus its
 * header at beta), n = the bytes of all contributions with their length
 * words, spread = (p - 1) / p * n * beta, the time to receive everyone
 * else's data once. */
typedef struct px_coll_terms {
    double p, lg, a, n, spread, beta;
    bool allgather;
    unsigned radix;
} px_coll_terms;

struct px_coll_algo {
    const char *name;
    uint8_t id;     /* on the wire; 1..255, never reused */
    unsigned kinds; /* bit (1 << kind) per supported kind */
    bool lateral;   /* usable among hier's leaders */
    bool radix;     /* takes a radix parameter */
    const char *syntax;
    const px_coll_driver *drv;
    const px_coll_mach_ops *mach; /* flat algorithms: their machine */
    /* Textbook counts for n members in one flat space (NULL for hier). */
    uint64_t (*messages)(uint32_t n, unsigned radix);
    uint32_t (*rounds)(uint32_t n, unsigned radix);
    /* Its formula (catalog.c, px_coll_formula), or NULL when it has none. */
    double (*formula)(const px_coll_terms *t);
};

#define PX_COLL_KIND_BIT(k) (1u << (unsigned)(k))
#define PX_COLL_RADIX_DEFAULT 2u
#define PX_COLL_RADIX_MAX 255u

/* ASCII case-insensitive equality (catalog names and values). */
bool px_coll_name_eq(const char *a, const char *b);

/* The wire parameter of a resolved choice (tree: radix; hier: inner id |
 * PX_COLL_PARAM_ALL when every member is a leader | radix << 8; others 0).
 * Wire ids stay below 128. */
#define PX_COLL_PARAM_ALL 0x80u
uint16_t px_coll_choice_param(const px_coll_choice *ch);

/* Depth of a radix-k tree over n ranks: ceil(log_k n). */
uint32_t px_coll_tree_depth(uint32_t n, unsigned k);

struct px_coll_run {
    px_coll *c;
    px_coll_kind kind;
    px_coll_choice ch; /* resolved */
    uint16_t param;
    uint32_t epoch;
    px_coll_cb cb;
    void *cbdata;
    px_coll_timer *timer;
    double timeout, last_progress;
    pmix_status_t fail; /* deferred failure, PMIX_SUCCESS while none */
    uint32_t fail_peer; /* with fail: the member that failed, or NONE */
    bool done;
    px_coll_blocks result; /* allgather: blocks by member */
    px_coll_mach mach[3];
    unsigned nmach;
    void *dst; /* driver state */
};

/* Record a failure to act on after the current step (first one wins). */
void px_coll_run_fail(px_coll_run *r, pmix_status_t status, uint32_t peer);

/* The groups a hier run uses (groups.c); NULL groups = one flat group. */
struct px_coll_groups {
    uint32_t n, ngroups;
    uint32_t *group_of; /* member -> group; groups numbered by leader order */
    uint32_t *pos;      /* member -> index within its group */
    uint32_t *start;    /* ngroups + 1: group g is members[start[g] .. start[g+1]) */
    uint32_t *members;  /* grouped, ascending inside each group */
    uint32_t *leaders;  /* ngroups, ascending (leaders[g] = members[start[g]]) */
    /* Columns (hier with every member a leader): column j holds the
     * members at position j of every group that has one, in group order:
     * col_members[col_start[j] .. col_start[j+1]); ncols is the size of
     * the largest group. */
    uint32_t ncols;
    uint32_t *col_start; /* ncols + 1 */
    uint32_t *col_members;
    uint32_t *col_rank; /* member -> index within its column */
    bool switched;      /* px_coll_groups_set_switched() */
};

/* ---- the member context (core.c, notice.c) ---- */

typedef struct px_coll_early {
    struct px_coll_early *next;
    uint32_t epoch, round, sender;
    uint8_t phase;
    size_t len;
    uint8_t msg[];
} px_coll_early;

/* An ABORT notice this member owes a neighbour: its send failed here (no
 * memory, too big), so it is sent again later (notice.c). */
typedef struct px_coll_owed {
    uint32_t to, epoch, origin;
    pmix_status_t status;
    uint32_t tries; /* sends failed so far */
} px_coll_owed;

struct px_coll {
    const px_coll_ops *ops;
    void *ctx;
    uint64_t id;
    uint32_t n, me;
    const px_coll_groups *groups;
    bool sizes_only;     /* px_coll_config.sizes_only */
    uint32_t next_epoch; /* the epoch the next start uses */
    uint32_t last_epoch; /* the last started, 0 before the first */
    px_coll_run *run;    /* the running collective, or NULL */
    px_coll_early *early, *early_tail;
    size_t nearly, early_bytes, early_max, early_bytes_max;
    /* ABORT notices for epochs not yet running (lo .. lo + WINDOW). */
    struct {
        bool valid;
        uint32_t epoch;
        pmix_status_t status;
    } pending[PX_COLL_WINDOW + 1];
    uint32_t *dead; /* failed members, sorted */
    uint32_t ndead, capdead;
    bool flooded;         /* some notice was flooded */
    uint32_t flood_epoch; /* the newest epoch flooded */
    uint64_t flood_mask;  /* bit i: epoch flood_epoch - i was flooded */
    px_coll_owed *owed;   /* notices to send again (notice.c) */
    uint32_t nowed, capowed;
    px_coll_timer *owed_timer; /* the retry, when the host has timers */
    double owed_delay;         /* the next retry's delay, seconds */
    px_coll_stats stats;
};

/* notice.c */
bool px_coll_is_dead(const px_coll *c, uint32_t m);
/* Add m to the failed members; true if it was news. */
bool px_coll_add_dead(px_coll *c, uint32_t m);
/* Flood an ABORT notice for `epoch`, listing every failed member known,
 * to every neighbour in the binomial tree over all members, going around
 * failed ones. */
void px_coll_flood(px_coll *c, uint32_t epoch, pmix_status_t status, uint32_t origin);
/* Flood unless a notice for this epoch was already flooded (or it is more
 * than 63 epochs older than the newest flooded) and this one brings no
 * news. */
void px_coll_maybe_flood(px_coll *c, uint32_t epoch, pmix_status_t status, uint32_t origin,
                         bool news);
/* Send again the notices owed (px_coll_owed). core.c calls it on entry
 * (start, deliver) when the host has no timers; with timers it runs from
 * its own timer. */
void px_coll_retry_owed(px_coll *c);
/* Cancel the retry timer and forget the notices owed (destroy). */
void px_coll_owed_fini(px_coll *c);
/* A received ABORT notice (header checked). Returns a PX_COLL_V_ verdict. */
int px_coll_notice_recv(px_coll *c, const px_coll_msg_info *h, const uint8_t *p, size_t len);

/* core.c, for notice.c: end the running collective with `status`. */
void px_coll_abort_run(px_coll *c, pmix_status_t status);
/* Record an ABORT for an epoch that is not running yet (ignored if it is
 * not the next one or the one after). */
void px_coll_pend_abort(px_coll *c, uint32_t epoch, pmix_status_t status);
/* The lowest epoch not finished here: the running one, or the next. */
uint32_t px_coll_lo(const px_coll *c);

/* Serial-number comparison of epochs (RFC 1982 style). */
static inline int32_t px_coll_epoch_diff(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b);
}

#endif /* PX_COLL_INT_H */
