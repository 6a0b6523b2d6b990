/*
 * dissem.c - the dissemination barrier (Hensgen, Finkel and Manber 1988;
 * GASNet's default barrier).
 *
 * Rounds r = 0 .. ceil(lg n) - 1: in round r a member sends one empty
 * message to (me + 2^r) mod n and waits for the one from (me - 2^r) mod n;
 * it sends round r+1 only after it has both sent round r and received it.
 * After the last round every member has heard, directly or through a
 * chain, from every other one, so all have entered.
 *
 * Messages: n * ceil(lg n); rounds ceil(lg n); cost ceil(lg n) * alpha.
 * A message of a later round may arrive first (its sender is ahead): it is
 * only a bit in `got`, so nothing is stored. The header's round is r.
 */
#include <stdlib.h>

#include "coll_int.h"

typedef struct {
    unsigned rounds; /* ceil(lg n) */
    unsigned sent;   /* rounds sent */
    uint64_t got;    /* bit r: round r received */
} dissem;

static pmix_status_t dissem_init(px_coll_mach *m)
{
    dissem *d = calloc(1, sizeof(*d));

    if (d == NULL) {
        return PMIX_ERR_NOMEM;
    }
    d->rounds = px_coll_ceil_lg(m->n);
    m->st = d;
    return PMIX_SUCCESS;
}

static uint32_t peer(const px_coll_mach *m, unsigned r, bool to)
{
    uint32_t step = (uint32_t)(((uint64_t)1 << r) % m->n);

    return to ? (uint32_t)(((uint64_t)m->me + step) % m->n)
              : (uint32_t)(((uint64_t)m->me + m->n - step) % m->n);
}

static void progress(px_coll_mach *m)
{
    dissem *d = m->st;

    /* Round `sent` may go out once every earlier round was received. */
    while (d->sent < d->rounds && (d->sent == 0 || (d->got >> (d->sent - 1)) & 1)) {
        px_coll_mach_send_range(m, peer(m, d->sent, true), d->sent, NULL, 0, 0);
        d->sent++;
    }
    if (d->sent == d->rounds && (d->rounds == 0 || d->got == (((uint64_t)1 << d->rounds) - 1))) {
        m->done = true;
    }
}

static void dissem_start(px_coll_mach *m)
{
    progress(m);
}

static int dissem_deliver(px_coll_mach *m, uint32_t vfrom, uint32_t round, const uint8_t *p,
                          size_t len)
{
    dissem *d = m->st;

    if (round >= d->rounds || vfrom != peer(m, round, false)) {
        return PX_COLL_V_BAD;
    }
    if (len != 0) {
        return PX_COLL_V_BAD;
    }
    if ((d->got >> round) & 1) {
        return PX_COLL_V_DUP;
    }
    d->got |= (uint64_t)1 << round;
    if (m->started) {
        progress(m);
    }
    return PX_COLL_V_OK;
}

static void dissem_fini(px_coll_mach *m)
{
    free(m->st);
    m->st = NULL;
}

const px_coll_mach_ops px_coll_dissem_mach = {
    .init = dissem_init,
    .start = dissem_start,
    .deliver = dissem_deliver,
    .fini = dissem_fini,
};
