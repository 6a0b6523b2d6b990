/*
 * flat.c - the driver of the flat algorithms: one state machine over all
 * members, virtual rank = member id, phase 0.
 *
 * Start puts the member's own contribution in the result store (allgather)
 * and starts the machine; every data message goes to the machine; the run
 * is done when the machine is.
 */
#include "coll_int.h"

static pmix_status_t flat_start(px_coll_run *r, const void *contrib, size_t len)
{
    px_coll *c = r->c;
    px_coll_mach *m = &r->mach[0];
    pmix_status_t rc;

    r->nmach = 1;
    m->run = r;
    m->ops = r->ch.algo->mach;
    m->phase = PX_COLL_PHASE_FLAT;
    m->n = c->n;
    m->me = c->me;
    m->map = NULL;
    m->radix = r->ch.radix;
    m->tree_mode = PX_COLL_TREE_GATHER | PX_COLL_TREE_BCAST;
    if (r->kind == PX_COLL_ALLGATHER) {
        rc = px_coll_blocks_put(&r->result, c->me, contrib, len);
        if (rc != PMIX_SUCCESS) {
            return rc;
        }
        m->bs = m->down = &r->result;
    }
    rc = px_coll_mach_init(m);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    px_coll_mach_start(m);
    r->done = m->done;
    return PMIX_SUCCESS;
}

static int flat_deliver(px_coll_run *r, const px_coll_msg_info *h, const uint8_t *p, size_t len)
{
    px_coll_mach *m = &r->mach[0];
    int v;

    if (h->phase != PX_COLL_PHASE_FLAT) {
        return PX_COLL_V_BAD;
    }
    v = m->ops->deliver(m, h->sender, h->round, p, len);
    r->done = m->done;
    return v;
}

static void flat_fini(px_coll_run *r)
{
    for (unsigned i = 0; i < r->nmach; i++) {
        px_coll_mach_fini(&r->mach[i]);
    }
}

const px_coll_driver px_coll_flat_driver = {
    .start = flat_start,
    .deliver = flat_deliver,
    .fini = flat_fini,
};
