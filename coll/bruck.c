/*
 * bruck.c - the Bruck allgather (Bruck, Ho, Kipnis, Upfal and Weathersby,
 * IEEE TPDS 1997), for any n, with variable-size blocks.
 *
 * Steps k = 0 .. ceil(lg n) - 1: a member holds blocks me .. me+2^k-1
 * (mod n); it sends the first c_k = min(2^k, n - 2^k) of them to
 * (me - 2^k) mod n and receives c_k blocks starting at me + 2^k from
 * (me + 2^k) mod n. Step k goes out once steps 0..k-1 are in. After the
 * last step it holds me .. me+n-1, i.e. everything; the textbook's final
 * local rotation is the store's rank index (blocks.c puts the result in
 * rank order).
 *
 * Messages: n * ceil(lg n); rounds ceil(lg n); cost
 * ceil(lg n) alpha + ((n-1)/n) n_bytes beta. The header's round is k.
 */
#include <stdlib.h>

#include "coll_int.h"

typedef struct {
    unsigned steps; /* ceil(lg n) */
    unsigned sent;
    uint64_t got; /* bit k: step k received */
} bruck;

static uint32_t count_of(const px_coll_mach *m, unsigned k)
{
    uint64_t p = (uint64_t)1 << k;

    return (uint32_t)(p < m->n - p ? p : m->n - p);
}

static uint32_t add(const px_coll_mach *m, uint64_t a, uint64_t b)
{
    return (uint32_t)((a + b) % m->n);
}

static pmix_status_t bruck_init(px_coll_mach *m)
{
    bruck *b;

    if (m->bs == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return PMIX_ERR_NOMEM;
    }
    b->steps = px_coll_ceil_lg(m->n);
    m->st = b;
    return PMIX_SUCCESS;
}

static void progress(px_coll_mach *m)
{
    bruck *b = m->st;

    while (b->sent < b->steps && (b->sent == 0 || (b->got >> (b->sent - 1)) & 1)) {
        unsigned k = b->sent;
        uint32_t to = add(m, m->me, m->n - ((uint64_t)1 << k));
        px_coll_mach_send_range(m, to, k, m->bs, m->me, count_of(m, k));
        b->sent++;
    }
    if (b->sent == b->steps && m->bs->have == m->n) {
        m->done = true;
    }
}

static void bruck_start(px_coll_mach *m)
{
    progress(m);
}

static int bruck_deliver(px_coll_mach *m, uint32_t vfrom, uint32_t round, const uint8_t *p,
                         size_t len)
{
    bruck *b = m->st;
    uint32_t first;
    int v;

    if (round >= b->steps) {
        return PX_COLL_V_BAD;
    }
    first = add(m, m->me, (uint64_t)1 << round);
    if (vfrom != first) {
        return PX_COLL_V_BAD;
    }
    if ((b->got >> round) & 1) {
        return PX_COLL_V_DUP;
    }
    v = px_coll_mach_read_range(m, m->bs, p, len, first, count_of(m, round), false);
    if (v != PX_COLL_V_OK) {
        return v;
    }
    b->got |= (uint64_t)1 << round;
    if (m->started) {
        progress(m);
    }
    return PX_COLL_V_OK;
}

static void bruck_fini(px_coll_mach *m)
{
    free(m->st);
    m->st = NULL;
}

const px_coll_mach_ops px_coll_bruck_mach = {
    .init = bruck_init,
    .start = bruck_start,
    .deliver = bruck_deliver,
    .fini = bruck_fini,
};
