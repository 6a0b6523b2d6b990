/*
 * recdbl.c - recursive doubling, for any n: the allgather, and with no
 * data the butterfly barrier (the allreduce-based barrier: a barrier is an
 * allreduce of nothing).
 *
 * For n a power of two: steps k = 0 .. lg n - 1, a member exchanges with
 * partner me XOR 2^k everything it holds, the aligned range of 2^k ranks
 * that contains it. Messages n lg n, rounds lg n, cost
 * lg n alpha + ((n-1)/n) n_bytes beta.
 *
 * Otherwise let p = 2^floor(lg n) and r = n - p. Extra steps fold the
 * extra members in and out (as Rabenseifner and Thakur et al. do for
 * allreduce):
 *
 *   fold (round 0)      each odd rank 2i+1 < 2r sends its block to 2i and
 *                       then only waits;
 *   doubling (1..L)     the p "active" ranks (even ranks below 2r, and all
 *                       ranks >= 2r) run the power-of-two algorithm with
 *                       new ranks a = v/2 (v < 2r) or v - r (v >= 2r);
 *                       new rank a stands for old ranks [2a, 2a+2) or
 *                       [a+r, a+r+1), so every aligned range of new ranks
 *                       is a contiguous range of old ones (one range
 *                       message per step);
 *   unfold (round L+1)  each even rank 2i < 2r sends the whole result to
 *                       2i+1.
 *
 * Messages p*L + 2r; rounds L + 2 (L = lg p); cost
 * (L+2) alpha + (m + (n - 2m) + n) beta on the critical path of a folded
 * pair with equal blocks of m bytes: the fold costs one block, the
 * doubling the rest of the data, the unfold the whole result again.
 */
#include <stdlib.h>

#include "coll_int.h"

typedef struct {
    uint32_t p, r;  /* p = 2^L active ranks, r = n - p folded pairs */
    unsigned steps; /* L */
    bool active;    /* takes part in the doubling */
    uint32_t a;     /* new rank (active) */
    unsigned sent;  /* doubling steps sent */
    uint64_t got;   /* bit k: doubling step k received */
    bool got_fold, got_unfold, sent_unfold;
} recdbl;

/* The first old rank that new rank a stands for; a == p gives n. */
static uint32_t old_lo(const recdbl *d, uint32_t a)
{
    return a < d->r ? 2 * a : a + d->r;
}

static uint32_t old_rank(const recdbl *d, uint32_t a)
{
    return old_lo(d, a);
}

static pmix_status_t recdbl_init(px_coll_mach *m)
{
    recdbl *d = calloc(1, sizeof(*d));
    uint32_t v = m->me;

    if (d == NULL) {
        return PMIX_ERR_NOMEM;
    }
    d->p = px_coll_pof2_floor(m->n);
    d->r = m->n - d->p;
    d->steps = px_coll_ceil_lg(d->p);
    if (v < 2 * d->r) {
        d->active = (v % 2) == 0;
        d->a = v / 2;
    } else {
        d->active = true;
        d->a = v - d->r;
    }
    m->st = d;
    return PMIX_SUCCESS;
}

static void progress(px_coll_mach *m)
{
    recdbl *d = m->st;

    if (!d->active) {
        if (d->got_unfold) {
            m->done = true;
        }
        return;
    }
    if (m->me < 2 * d->r && !d->got_fold) {
        return;
    }
    while (d->sent < d->steps && (d->sent == 0 || (d->got >> (d->sent - 1)) & 1)) {
        unsigned k = d->sent;
        uint32_t span = (uint32_t)1 << k;
        uint32_t a0 = d->a & ~(span - 1);
        uint32_t first = old_lo(d, a0), end = old_lo(d, a0 + span);
        px_coll_mach_send_range(m, old_rank(d, d->a ^ span), k + 1, m->bs, first, end - first);
        d->sent++;
    }
    if (d->sent < d->steps || d->got != (((uint64_t)1 << d->steps) - 1)) {
        return;
    }
    if (m->me < 2 * d->r && !d->sent_unfold) {
        d->sent_unfold = true;
        px_coll_mach_send_range(m, m->me + 1, d->steps + 1, m->bs, 0, m->n);
    }
    m->done = true;
}

static void recdbl_start(px_coll_mach *m)
{
    recdbl *d = m->st;

    if (!d->active) {
        px_coll_mach_send_range(m, m->me - 1, 0, m->bs, m->me, 1);
    }
    progress(m);
}

static int recdbl_deliver(px_coll_mach *m, uint32_t vfrom, uint32_t round, const uint8_t *p,
                          size_t len)
{
    recdbl *d = m->st;
    int v;

    if (round == 0) {
        /* fold: odd 2i+1 -> 2i */
        if (!d->active || m->me >= 2 * d->r || vfrom != m->me + 1) {
            return PX_COLL_V_BAD;
        }
        if (d->got_fold) {
            return PX_COLL_V_DUP;
        }
        v = px_coll_mach_read_range(m, m->bs, p, len, vfrom, 1, false);
        if (v != PX_COLL_V_OK) {
            return v;
        }
        d->got_fold = true;
    } else if (round <= d->steps) {
        unsigned k = round - 1;
        uint32_t span = (uint32_t)1 << k;
        uint32_t b = d->a ^ span, b0 = b & ~(span - 1);
        uint32_t first, end;
        if (!d->active || vfrom != old_rank(d, b)) {
            return PX_COLL_V_BAD;
        }
        if ((d->got >> k) & 1) {
            return PX_COLL_V_DUP;
        }
        first = old_lo(d, b0);
        end = old_lo(d, b0 + span);
        v = px_coll_mach_read_range(m, m->bs, p, len, first, end - first, false);
        if (v != PX_COLL_V_OK) {
            return v;
        }
        d->got |= (uint64_t)1 << k;
    } else if (round == d->steps + 1) {
        /* unfold: 2i -> 2i+1 */
        if (d->active || vfrom != m->me - 1) {
            return PX_COLL_V_BAD;
        }
        if (d->got_unfold) {
            return PX_COLL_V_DUP;
        }
        v = px_coll_mach_read_range(m, m->bs, p, len, 0, m->n, true);
        if (v != PX_COLL_V_OK) {
            return v;
        }
        d->got_unfold = true;
    } else {
        return PX_COLL_V_BAD;
    }
    if (m->started) {
        progress(m);
    }
    return PX_COLL_V_OK;
}

static void recdbl_fini(px_coll_mach *m)
{
    free(m->st);
    m->st = NULL;
}

const px_coll_mach_ops px_coll_recdbl_mach = {
    .init = recdbl_init,
    .start = recdbl_start,
    .deliver = recdbl_deliver,
    .fini = recdbl_fini,
};
