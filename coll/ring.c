/*
 * ring.c - the ring allgather.
 *
 * Steps s = 0 .. n-2: a member sends block (me - s) mod n to its right
 * neighbour (me + 1) and receives block (me - 1 - s) mod n from its left
 * neighbour (me - 1); the block it sends at step s+1 is the one it
 * received at step s. After n-1 steps every block went once around.
 *
 * Messages: n(n - 1), one block each; rounds n - 1; cost
 * (n-1) alpha + ((n-1)/n) n_bytes beta. Only neighbours talk, which is why
 * it wins for long messages on real networks, but its latency and its
 * quadratic message count make it a poor choice beyond a few dozen members
 * (see the auto rule). The header's round is the step s.
 *
 * The left neighbour may run many steps ahead: its blocks are stored on
 * arrival (each is a distinct rank), and forwarding follows in step order.
 */
#include <stdlib.h>

#include "coll_int.h"

static uint32_t block_of_step(const px_coll_mach *m, uint32_t s)
{
    /* (me - s) mod n */
    return (uint32_t)(((uint64_t)m->me + m->n - (s % m->n)) % m->n);
}

typedef struct {
    uint32_t sent; /* steps sent */
} ring;

static pmix_status_t ring_init(px_coll_mach *m)
{
    if (m->bs == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    m->st = calloc(1, sizeof(ring));
    return m->st != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
}

static void progress(px_coll_mach *m)
{
    ring *r = m->st;
    uint32_t right = (uint32_t)(((uint64_t)m->me + 1) % m->n);

    while (r->sent < m->n - 1 && px_coll_blocks_has(m->bs, block_of_step(m, r->sent))) {
        px_coll_mach_send_range(m, right, r->sent, m->bs, block_of_step(m, r->sent), 1);
        r->sent++;
    }
    if (r->sent == m->n - 1 && m->bs->have == m->n) {
        m->done = true;
    }
}

static void ring_start(px_coll_mach *m)
{
    progress(m);
}

static int ring_deliver(px_coll_mach *m, uint32_t vfrom, uint32_t round, const uint8_t *p,
                        size_t len)
{
    uint32_t left = (uint32_t)(((uint64_t)m->me + m->n - 1) % m->n);
    uint32_t b;
    int v;

    if (round >= m->n - 1 || vfrom != left) {
        return PX_COLL_V_BAD;
    }
    b = block_of_step(m, round + 1);
    if (px_coll_blocks_has(m->bs, b)) {
        return PX_COLL_V_DUP;
    }
    v = px_coll_mach_read_range(m, m->bs, p, len, b, 1, false);
    if (v == PX_COLL_V_OK && m->started) {
        progress(m);
    }
    return v;
}

static void ring_fini(px_coll_mach *m)
{
    free(m->st);
    m->st = NULL;
}

const px_coll_mach_ops px_coll_ring_mach = {
    .init = ring_init,
    .start = ring_start,
    .deliver = ring_deliver,
    .fini = ring_fini,
};
