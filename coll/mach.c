/*
 * mach.c - what every state machine shares: sending a message (header,
 * counters, the host's send), range messages, and the checks of a
 * received range.
 *
 * A machine never sees an error from sending: a refused send (the host
 * says the peer is unreachable) or a failed allocation is recorded as the
 * run's deferred failure with px_coll_run_fail(), and the core ends the
 * run when the machine returns. Once a run is failing, further sends are
 * dropped, so a machine that keeps going does no harm.
 */
#include <stdlib.h>

#include "coll_int.h"

void px_coll_run_fail(px_coll_run *r, pmix_status_t status, uint32_t peer)
{
    if (r->fail == PMIX_SUCCESS) {
        r->fail = status;
        r->fail_peer = peer;
    }
}

uint8_t *px_coll_msg_alloc(size_t payload)
{
    if (payload > SIZE_MAX - PX_COLL_HDR_SIZE) {
        return NULL;
    }
    return malloc(PX_COLL_HDR_SIZE + payload);
}

void px_coll_mach_send(px_coll_mach *m, uint32_t vto, uint32_t round, uint8_t *msg, size_t len,
                       size_t wire_len)
{
    px_coll_run *r = m->run;
    px_coll *c = r->c;
    px_coll_msg_info h;
    uint32_t to;
    pmix_status_t rc;

    if (msg == NULL) {
        px_coll_run_fail(r, PMIX_ERR_NOMEM, PX_COLL_NONE);
        return;
    }
    to = m->map != NULL ? m->map[vto] : vto;
    if (r->fail != PMIX_SUCCESS || to >= c->n || to == c->me) {
        free(msg);
        return;
    }
    if (px_coll_is_dead(c, to)) {
        free(msg);
        px_coll_run_fail(r, PMIX_ERR_PROC_TERM_WO_SYNC, PX_COLL_NONE);
        return;
    }
    h.type = PX_COLL_MSG_DATA;
    h.algo = r->ch.algo->id;
    h.phase = m->phase;
    h.param = r->param;
    h.id = c->id;
    h.epoch = r->epoch;
    h.round = round;
    h.sender = c->me;
    h.nmembers = c->n;
    px_coll_hdr_write(msg, &h);
    c->stats.sent++;
    c->stats.sent_bytes += wire_len;
    rc = c->sizes_only ? c->ops->send_sized(c->ctx, to, msg, len, wire_len)
                       : c->ops->send(c->ctx, to, msg, len);
    if (rc == PMIX_ERR_NOMEM || rc == PMIX_ERR_OUT_OF_RESOURCE) {
        px_coll_run_fail(r, rc, PX_COLL_NONE); /* ours, not the peer's */
    } else if (rc != PMIX_SUCCESS) {
        px_coll_run_fail(r, PMIX_ERR_PROC_TERM_WO_SYNC, to);
    }
}

void px_coll_mach_send_range(px_coll_mach *m, uint32_t vto, uint32_t round, const px_coll_blocks *b,
                             uint32_t first, uint32_t count)
{
    size_t payload = b != NULL ? px_coll_range_size(b, first, count) : 0;
    size_t wire = b != NULL && b->phantom ? px_coll_range_wire_size(b, first, count) : payload;
    uint8_t *msg = px_coll_msg_alloc(payload);

    if (msg != NULL && b != NULL) {
        px_coll_range_write(b, first, count, msg + PX_COLL_HDR_SIZE);
    }
    px_coll_mach_send(m, vto, round, msg, PX_COLL_HDR_SIZE + payload, PX_COLL_HDR_SIZE + wire);
}

int px_coll_mach_read_range(px_coll_mach *m, px_coll_blocks *b, const uint8_t *p, size_t len,
                            uint32_t first, uint32_t count, bool replace)
{
    pmix_status_t rc;

    if (b == NULL) {
        return len == 0 ? PX_COLL_V_OK : PX_COLL_V_BAD;
    }
    rc = px_coll_range_read(b, p, len, first, count, replace);
    if (rc == PMIX_ERR_BAD_PARAM) {
        return PX_COLL_V_BAD;
    }
    if (rc != PMIX_SUCCESS) {
        px_coll_run_fail(m->run, rc, PX_COLL_NONE);
    }
    return PX_COLL_V_OK;
}

pmix_status_t px_coll_mach_init(px_coll_mach *m)
{
    pmix_status_t rc = m->ops->init(m);

    if (rc == PMIX_SUCCESS) {
        m->inited = true;
    }
    return rc;
}

void px_coll_mach_start(px_coll_mach *m)
{
    m->started = true;
    m->ops->start(m);
}

void px_coll_mach_fini(px_coll_mach *m)
{
    if (m->inited) {
        m->ops->fini(m);
        m->inited = false;
    }
}
