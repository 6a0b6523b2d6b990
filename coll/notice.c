/*
 * notice.c - failed members, and the ABORT notices that end a collective
 * on every survivor.
 *
 * A member that ends a collective because of a failure (a member reported
 * failed, a refused send, a timeout, a disagreement on the algorithm, no
 * memory) floods an ABORT notice for that epoch. Payload:
 *
 *     i32 status, u32 origin, u32 count, count x u32 failed member
 *
 * where the list is every member the sender knows to have failed (empty
 * after a timeout with no known failure). Carrying the whole list lets
 * each receiver route around every failed member its sender knew of.
 *
 * The flood runs along one fixed binomial tree over all members (root 0;
 * the parent of v is v with its lowest set bit cleared). A member that
 * floods sends the notice to every tree neighbour (parent and children),
 * the one it came from included (so a forged or mistaken notice cannot
 * leave that side out; it costs one message per tree edge and epoch). A
 * neighbour known failed is skipped over: the notice goes to that
 * neighbour's own neighbours instead, recursively, and a neighbour whose
 * send the host refuses becomes known failed and is skipped over the same
 * way. A send that fails here instead (no memory, a message too big for
 * the transport) goes around that neighbour for this flood only, and the
 * notice is kept and sent to it again later (from a timer: 10 ms, doubling
 * up to 1 s; or at the next start or delivery when the host has no
 * timers) until it goes out, the neighbour is known failed, its epoch
 * is 64 behind, or 64 sends of it failed.
 *
 * Because the tree is the same for every origin, a member forwards at
 * most once per epoch (a 64-bit mask remembers the last 64 epochs),
 * however many members detect the failure at once, and flooding from
 * several origins at once still covers the tree. A notice that lists a
 * failed member the receiver did not know is forwarded again, with the
 * longer list, so that the members beyond that one are reached too: a
 * member forwards at most
 * (1 + failures learned) times per epoch, each time to at most
 * ceil(lg n) + 1 members plus the neighbours of failed ones. A notice
 * reaches every live member within 2 ceil(lg n) hops (up to the root and
 * down), as long as each failed member on the way is known to the member
 * that would send to it (reported to it, listed in what it received, or
 * refused by the host's send). Two failed members that each hide the other
 * from its only reporter can cut survivors off; the timeout covers that.
 *
 * Effect on the receiver. A notice that lists a failed member (other than
 * the receiver itself) adds it to the failed set: the running collective
 * ends with the notice's status and every later start fails at once (a
 * member is never un-failed). A notice without one ends the collective of
 * its epoch: the running one, or one of the next PX_COLL_WINDOW (recorded
 * until that epoch starts). Notices are forwarded whatever the receiver's
 * own state: relaying never waits. Notices for epochs more than
 * PX_COLL_WINDOW ahead of the receiver's, or 63 behind, are dropped.
 *
 * The failed set is a sorted array: it costs nothing until a failure, then
 * 4 bytes per failed member (no per-member bitmap: at 65,536 members a
 * bitmap per member would cost 512 MiB across a simulation).
 */
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

static size_t dead_pos(const px_coll *c, uint32_t m)
{
    size_t lo = 0, hi = c->ndead;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->dead[mid] < m) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

bool px_coll_is_dead(const px_coll *c, uint32_t m)
{
    size_t i;

    if (c->ndead == 0) {
        return false;
    }
    i = dead_pos(c, m);
    return i < c->ndead && c->dead[i] == m;
}

bool px_coll_add_dead(px_coll *c, uint32_t m)
{
    size_t i;

    if (m >= c->n || m == c->me || px_coll_is_dead(c, m)) {
        return false;
    }
    if (c->ndead == c->capdead) {
        uint32_t cap = c->capdead ? c->capdead * 2 : 4;
        uint32_t *d = realloc(c->dead, cap * sizeof(*d));
        if (d == NULL) {
            return false; /* not remembered; the running collective still ends */
        }
        c->dead = d;
        c->capdead = cap;
    }
    i = dead_pos(c, m);
    memmove(c->dead + i + 1, c->dead + i, (c->ndead - i) * sizeof(*c->dead));
    c->dead[i] = m;
    c->ndead++;
    return true;
}

typedef struct {
    px_coll *c;
    uint32_t epoch, origin;
    pmix_status_t status;
} flood;

/* The origin travels for the record (hosts may log it); forwarding does
 * not rely on it, so a wrong one cannot cut a member off. */

enum {
    NOTICE_SENT,
    NOTICE_HELD,       /* a local failure: `to` is fine, this member is not */
    NOTICE_UNREACHABLE /* `to` is now known failed */
};

#define OWED_DELAY_MIN 0.01
#define OWED_DELAY_MAX 1.0
/* Sends of one owed notice before it is given up (about a minute with
 * timers): one that can never go (too big for the transport) must not
 * retry for ever; the receiver's own timeout is then what ends its wait. */
#define OWED_TRIES_MAX 64

static int send_notice(flood *f, uint32_t to)
{
    px_coll *c = f->c;
    size_t len = PX_COLL_NOTICE_SIZE + 4 * (size_t)c->ndead;
    uint8_t *msg = malloc(PX_COLL_HDR_SIZE + len), *p;
    px_coll_msg_info h;
    pmix_status_t rc;

    if (msg == NULL) {
        return NOTICE_HELD;
    }
    memset(&h, 0, sizeof(h));
    h.type = PX_COLL_MSG_ABORT;
    h.id = c->id;
    h.epoch = f->epoch;
    h.sender = c->me;
    h.nmembers = c->n;
    px_coll_hdr_write(msg, &h);
    p = msg + PX_COLL_HDR_SIZE;
    px_coll_put32(p, (uint32_t)f->status);
    px_coll_put32(p + 4, f->origin);
    px_coll_put32(p + 8, c->ndead);
    for (uint32_t i = 0; i < c->ndead; i++) {
        px_coll_put32(p + 12 + 4 * (size_t)i, c->dead[i]);
    }
    c->stats.notices_sent++;
    rc = c->ops->send(c->ctx, to, msg, PX_COLL_HDR_SIZE + len);
    if (rc == PMIX_SUCCESS) {
        return NOTICE_SENT;
    }
    if (rc == PMIX_ERR_NOMEM || rc == PMIX_ERR_OUT_OF_RESOURCE) {
        return NOTICE_HELD;
    }
    px_coll_add_dead(c, to); /* unreachable (px_coll.h, send) */
    return NOTICE_UNREACHABLE;
}

static void owed_fire(void *arg);

static void owed_arm(px_coll *c)
{
    if (c->nowed == 0 || c->owed_timer != NULL || c->ops->timer_start == NULL ||
        c->ops->timer_cancel == NULL) {
        return;
    }
    if (c->owed_delay < OWED_DELAY_MIN) {
        c->owed_delay = OWED_DELAY_MIN;
    }
    /* NULL: no timer; the next start or delivery retries (core.c). */
    c->owed_timer = c->ops->timer_start(c->ctx, c->owed_delay, owed_fire, c);
}

/* Remember that `to` is owed this flood's notice. If even that fails (no
 * memory), `to` learns only from its other neighbours or its timeout. */
static void owe(flood *f, uint32_t to)
{
    px_coll *c = f->c;

    c->stats.notices_held++;
    for (uint32_t i = 0; i < c->nowed; i++) {
        if (c->owed[i].to == to && c->owed[i].epoch == f->epoch) {
            return;
        }
    }
    if (c->nowed == c->capowed) {
        uint32_t cap = c->capowed ? c->capowed * 2 : 4;
        px_coll_owed *o = realloc(c->owed, cap * sizeof(*o));
        if (o == NULL) {
            return;
        }
        c->owed = o;
        c->capowed = cap;
    }
    c->owed[c->nowed++] = (px_coll_owed){to, f->epoch, f->origin, f->status, 1};
    owed_arm(c);
}

static void flood_to(flood *f, uint32_t u, uint32_t from);

/* Send to every tree neighbour of u but `from` (the member whose failure
 * brought us here; PX_COLL_NONE at the start). */
static void around(flood *f, uint32_t u, uint32_t from)
{
    uint32_t n = f->c->n;

    if (u != 0 && (u & (u - 1)) != from) {
        flood_to(f, u & (u - 1), u);
    }
    for (uint64_t b = 1; b < n && (u == 0 || b < (u & (~u + 1))); b <<= 1) {
        if (u + b >= n) {
            break;
        }
        if ((uint32_t)(u + b) != from) {
            flood_to(f, (uint32_t)(u + b), u);
        }
    }
}

/* Deliver the notice to `u` (a tree neighbour of `from`), or around it
 * when it is known failed. A send that fails here (no memory, too big)
 * also goes around u, for this flood only, so that the members beyond u
 * are told now; u itself hears from them (they send to every neighbour)
 * or, if it has no other neighbour, from the retry. */
static void flood_to(flood *f, uint32_t u, uint32_t from)
{
    px_coll *c = f->c;

    if (u == c->me) {
        return;
    }
    if (!px_coll_is_dead(c, u)) {
        int rc = send_notice(f, u);
        if (rc == NOTICE_SENT) {
            return;
        }
        if (rc == NOTICE_HELD) {
            owe(f, u);
        }
    }
    around(f, u, from);
}

void px_coll_retry_owed(px_coll *c)
{
    uint32_t lo = px_coll_lo(c), n0 = c->nowed, k = 0, ndead = c->ndead;

    /* Entries are read by index: a send below may append (and move the
     * array). Kept ones are compacted to the front, appended ones follow.
     * The entry being retried is blanked first, so that owe() (which
     * skips an entry it already has) cannot take it for a pending one. */
    for (uint32_t i = 0; i < n0; i++) {
        px_coll_owed o = c->owed[i];
        flood f = {c, o.epoch, o.origin, o.status};
        int rc;

        c->owed[i].to = PX_COLL_NONE;

        if (px_coll_is_dead(c, o.to) || px_coll_epoch_diff(o.epoch, lo) < -63) {
            continue; /* its own flood covers it / every receiver drops it */
        }
        rc = send_notice(&f, o.to);
        if (rc == NOTICE_HELD && ++o.tries < OWED_TRIES_MAX) {
            c->owed[k++] = o;
        } else if (rc == NOTICE_UNREACHABLE) {
            around(&f, o.to, PX_COLL_NONE);
        }
    }
    memmove(c->owed + k, c->owed + n0, (c->nowed - n0) * sizeof(*c->owed));
    c->nowed = k + (c->nowed - n0);
    if (c->nowed == 0) {
        c->owed_delay = OWED_DELAY_MIN;
    }
    owed_arm(c);
    if (c->ndead > ndead) {
        /* A refused send found a member failed: as px_coll_peer_failed. */
        px_coll_flood(c, lo, PMIX_ERR_PROC_TERM_WO_SYNC, c->me);
        px_coll_abort_run(c, PMIX_ERR_PROC_TERM_WO_SYNC);
    }
}

static void owed_fire(void *arg)
{
    px_coll *c = arg;

    c->owed_timer = NULL;
    c->owed_delay = c->owed_delay * 2 < OWED_DELAY_MAX ? c->owed_delay * 2 : OWED_DELAY_MAX;
    px_coll_retry_owed(c);
}

void px_coll_owed_fini(px_coll *c)
{
    if (c->owed_timer != NULL) {
        c->ops->timer_cancel(c->ctx, c->owed_timer);
        c->owed_timer = NULL;
    }
    free(c->owed);
    c->owed = NULL;
    c->nowed = c->capowed = 0;
}

static bool flooded_already(const px_coll *c, uint32_t epoch)
{
    int32_t behind;

    if (!c->flooded) {
        return false;
    }
    behind = px_coll_epoch_diff(c->flood_epoch, epoch);
    if (behind < 0) {
        return false;
    }
    return behind >= 64 || ((c->flood_mask >> behind) & 1);
}

static void mark_flooded(px_coll *c, uint32_t epoch)
{
    int32_t ahead;

    if (!c->flooded) {
        c->flooded = true;
        c->flood_epoch = epoch;
        c->flood_mask = 1;
        return;
    }
    ahead = px_coll_epoch_diff(epoch, c->flood_epoch);
    if (ahead > 0) {
        c->flood_mask = ahead >= 64 ? 1 : (c->flood_mask << ahead) | 1;
        c->flood_epoch = epoch;
    } else if (ahead > -64) {
        c->flood_mask |= (uint64_t)1 << -ahead;
    }
}

void px_coll_flood(px_coll *c, uint32_t epoch, pmix_status_t status, uint32_t origin)
{
    flood f = {c, epoch, origin, status};

    mark_flooded(c, epoch);
    around(&f, c->me, PX_COLL_NONE);
}

void px_coll_maybe_flood(px_coll *c, uint32_t epoch, pmix_status_t status, uint32_t origin,
                         bool news)
{
    if (news || !flooded_already(c, epoch)) {
        px_coll_flood(c, epoch, status, origin);
    }
}

int px_coll_notice_recv(px_coll *c, const px_coll_msg_info *h, const uint8_t *p, size_t len)
{
    pmix_status_t status;
    uint32_t origin, count, lo;
    bool news = false, named = false;

    if (len < PX_COLL_NOTICE_SIZE || h->round != 0) {
        return PX_COLL_V_BAD;
    }
    status = (pmix_status_t)px_coll_get32(p);
    origin = px_coll_get32(p + 4);
    count = px_coll_get32(p + 8);
    if (status >= 0 || origin >= c->n || count > c->n || (len - PX_COLL_NOTICE_SIZE) / 4 != count ||
        (len - PX_COLL_NOTICE_SIZE) % 4 != 0) {
        return PX_COLL_V_BAD;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (px_coll_get32(p + 12 + 4 * (size_t)i) >= c->n) {
            return PX_COLL_V_BAD;
        }
    }
    /* Only epochs near ours: one far ahead (or far behind) cannot come from
     * a correct member, and would only disturb the flood's bookkeeping. */
    lo = px_coll_lo(c);
    if (px_coll_epoch_diff(h->epoch, lo) > PX_COLL_WINDOW) {
        c->stats.too_far++;
        return PX_COLL_V_OK;
    }
    if (px_coll_epoch_diff(h->epoch, lo) < -63) {
        c->stats.stale++;
        return PX_COLL_V_OK;
    }
    c->stats.notices++;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t m = px_coll_get32(p + 12 + 4 * (size_t)i);
        /* Somebody may think I failed: then only this epoch is lost here. */
        if (m != c->me) {
            named = true;
            news |= px_coll_add_dead(c, m);
        }
    }
    px_coll_maybe_flood(c, h->epoch, status, origin, news);

    /* lo is unchanged: flooding ends no collective. */
    if (c->run != NULL && (named || h->epoch == lo)) {
        px_coll_abort_run(c, status);
    } else if (c->run != NULL && c->ndead > 0) {
        /* Forwarding found a member failed (the host refused a send). */
        px_coll_abort_run(c, PMIX_ERR_PROC_TERM_WO_SYNC);
    } else if (!named) {
        px_coll_pend_abort(c, h->epoch, status);
    }
    return PX_COLL_V_OK;
}
