/*
 * core.c - a member's context: starting a collective, receiving messages,
 * failures and timeouts, completion.
 *
 * Epochs. The k-th px_coll_start() on a px_coll runs epoch k. Let lo be
 * the running epoch, or the next one when none runs. A data message for
 * epoch e is
 *
 *   e < lo             stale: dropped (its collective is over here);
 *   e == lo, running   dispatched to the running collective's driver;
 *   e == lo, idle      queued: the collective has not started here yet;
 *   lo < e <= lo + W   queued: its sender is ahead (W = PX_COLL_WINDOW);
 *   e > lo + W         dropped and counted.
 *
 * Without failures a member is at most one epoch ahead of another: it
 * needs everybody's contribution to finish an epoch. With failures that
 * are not permanent (a timeout, a disagreement on the algorithm), members
 * that abort epochs back to back without waiting for a slow one can get a
 * few epochs ahead of it; the window of 4 lets the slow one catch up by
 * failing those epochs at once (their notices are kept too, see
 * pending[]) and then find the messages of the first epoch that runs.
 * Beyond it, the timeout is the backstop.
 *
 * The early queue holds whole messages (one allocation each) in arrival
 * order; when epoch e starts, its messages are taken out and dispatched in
 * that order. A member receives at most n messages per epoch in any of
 * our algorithms, and without failures only one future epoch can send, so
 * the cap of 4n + 16 messages (and, if the host asks, a number of bytes)
 * is never reached by correct members; a message with the same (epoch,
 * phase, round, sender) and the same bytes as a queued one is a duplicate.
 *
 * Inside an epoch, duplicates and messages of later rounds are the
 * algorithms' business: they store early rounds and report duplicates.
 * A message that names another algorithm or parameter for the running
 * epoch means the members disagree (different PMIXLAB_*_ALGO, or `auto`
 * with different size hints): the epoch fails with PMIX_ERR_BAD_PARAM and
 * the ABORT notice takes the failure to every member.
 *
 * Every end goes through finish(), which detaches the run, cancels its
 * timer, builds the result, frees the run and calls the callback last, so
 * the callback may start the next epoch. A failure floods its ABORT notice
 * (notice.c) before finish(), so the flood's bookkeeping is done by the
 * time the callback runs.
 *
 * Watchdog: with a timeout T, one timer per run; every message that makes
 * progress records the time, and when the timer fires it either re-arms
 * for the rest of T or ends the run with PMIX_ERR_TIMEOUT. One timer per
 * run, not one per message: cheap for pmixsim.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

px_coll *px_coll_create(const px_coll_ops *ops, void *ctx, const px_coll_config *cfg)
{
    px_coll *c;

    if (ops == NULL || ops->version != PX_COLL_OPS_VERSION || ops->send == NULL || cfg == NULL ||
        cfg->nmembers == 0 || cfg->nmembers == UINT32_MAX || cfg->me >= cfg->nmembers ||
        (cfg->sizes_only && ops->send_sized == NULL)) {
        return NULL;
    }
    if (cfg->groups != NULL && cfg->groups->n != cfg->nmembers) {
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return NULL;
    }
    c->ops = ops;
    c->ctx = ctx;
    c->id = cfg->id;
    c->n = cfg->nmembers;
    c->me = cfg->me;
    c->groups = cfg->groups;
    c->sizes_only = cfg->sizes_only;
    c->next_epoch = 1;
    c->early_max = 4 * (size_t)c->n + 16;
    c->early_bytes_max = cfg->early_bytes_max;
    return c;
}

static void run_free(px_coll_run *r)
{
    r->ch.algo->drv->fini(r);
    px_coll_blocks_fini(&r->result);
    free(r);
}

void px_coll_destroy(px_coll *c)
{
    if (c == NULL) {
        return;
    }
    if (c->run != NULL) {
        if (c->run->timer != NULL) {
            c->ops->timer_cancel(c->ctx, c->run->timer);
        }
        run_free(c->run);
    }
    px_coll_owed_fini(c);
    while (c->early != NULL) {
        px_coll_early *e = c->early;
        c->early = e->next;
        free(e);
    }
    free(c->dead);
    free(c);
}

uint32_t px_coll_lo(const px_coll *c)
{
    return c->run != NULL ? c->run->epoch : c->next_epoch;
}

/* Drop queued messages of epochs up to `epoch` (finished here). */
static void purge(px_coll *c, uint32_t epoch)
{
    px_coll_early **pp = &c->early;

    c->early_tail = NULL;
    while (*pp != NULL) {
        px_coll_early *e = *pp;
        if (px_coll_epoch_diff(e->epoch, epoch) <= 0) {
            *pp = e->next;
            c->nearly--;
            c->early_bytes -= e->len;
            c->stats.stale++;
            free(e);
        } else {
            c->early_tail = e;
            pp = &e->next;
        }
    }
}

static void finish(px_coll *c, pmix_status_t status)
{
    px_coll_run *r = c->run;
    px_coll_result res, *resp = NULL;
    px_coll_cb cb;
    void *cbdata;

    c->run = NULL;
    if (r->timer != NULL) {
        c->ops->timer_cancel(c->ctx, r->timer);
        r->timer = NULL;
    }
    for (int i = 0; i <= PX_COLL_WINDOW; i++) {
        if (c->pending[i].valid && px_coll_epoch_diff(c->pending[i].epoch, r->epoch) <= 0) {
            c->pending[i].valid = false;
        }
    }
    purge(c, r->epoch);
    if (status == PMIX_SUCCESS && r->kind == PX_COLL_ALLGATHER) {
        status = px_coll_blocks_take(&r->result, &res);
        if (status == PMIX_SUCCESS) {
            resp = &res;
        }
    }
    cb = r->cb;
    cbdata = r->cbdata;
    run_free(r);
    if (status == PMIX_SUCCESS) {
        c->stats.completed++;
    } else {
        c->stats.failed++;
    }
    cb(status, resp, cbdata);
    if (resp != NULL) {
        free(res.offsets);
        free(res.data);
    }
}

void px_coll_abort_run(px_coll *c, pmix_status_t status)
{
    if (c->run != NULL) {
        finish(c, status);
    }
}

/* After a call into the driver: act on a deferred failure or completion. */
static void settle(px_coll *c, px_coll_run *r)
{
    if (c->run != r) {
        return;
    }
    if (r->fail != PMIX_SUCCESS) {
        pmix_status_t status = r->fail;
        bool news = r->fail_peer != PX_COLL_NONE && px_coll_add_dead(c, r->fail_peer);
        px_coll_maybe_flood(c, r->epoch, status, c->me, news);
        finish(c, status);
    } else if (r->done) {
        finish(c, PMIX_SUCCESS);
    }
}

static void on_timer(void *arg)
{
    px_coll_run *r = arg;
    px_coll *c = r->c;
    double idle;

    r->timer = NULL;
    idle = c->ops->now(c->ctx) - r->last_progress;
    if (idle < r->timeout * (1 - 1e-9)) {
        r->timer = c->ops->timer_start(c->ctx, r->timeout - idle, on_timer, r);
        if (r->timer != NULL) {
            return;
        }
        px_coll_run_fail(r, PMIX_ERR_OUT_OF_RESOURCE, PX_COLL_NONE);
    } else {
        px_coll_run_fail(r, PMIX_ERR_TIMEOUT, PX_COLL_NONE);
    }
    settle(c, r);
}

/* A data message for the running epoch. */
static pmix_status_t dispatch(px_coll *c, const px_coll_msg_info *h, const uint8_t *p, size_t len)
{
    px_coll_run *r = c->run;
    int v;

    if (h->algo != r->ch.algo->id || h->param != r->param) {
        c->stats.mismatched++;
        px_coll_run_fail(r, PMIX_ERR_BAD_PARAM, PX_COLL_NONE);
        settle(c, r);
        return PMIX_ERR_BAD_PARAM;
    }
    v = r->ch.algo->drv->deliver(r, h, p, len);
    switch (v) {
    case PX_COLL_V_OK:
        c->stats.accepted++;
        if (r->timeout > 0) {
            r->last_progress = c->ops->now(c->ctx);
        }
        break;
    case PX_COLL_V_DUP: c->stats.duplicates++; break;
    default: c->stats.malformed++; break;
    }
    settle(c, r);
    return v == PX_COLL_V_BAD ? PMIX_ERR_BAD_PARAM : PMIX_SUCCESS;
}

static pmix_status_t enqueue(px_coll *c, const px_coll_msg_info *h, const void *msg, size_t len)
{
    px_coll_early *e;

    for (e = c->early; e != NULL; e = e->next) {
        if (e->epoch == h->epoch && e->phase == h->phase && e->round == h->round &&
            e->sender == h->sender && e->len == len && memcmp(e->msg, msg, len) == 0) {
            c->stats.duplicates++;
            return PMIX_SUCCESS;
        }
    }
    if (c->nearly >= c->early_max ||
        (c->early_bytes_max != 0 && len > c->early_bytes_max - c->early_bytes)) {
        c->stats.overflow++;
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    e = malloc(sizeof(*e) + len);
    if (e == NULL) {
        c->stats.overflow++;
        return PMIX_ERR_NOMEM;
    }
    e->next = NULL;
    e->epoch = h->epoch;
    e->round = h->round;
    e->sender = h->sender;
    e->phase = h->phase;
    e->len = len;
    memcpy(e->msg, msg, len);
    if (c->early_tail != NULL) {
        c->early_tail->next = e;
    } else {
        c->early = e;
    }
    c->early_tail = e;
    c->nearly++;
    c->early_bytes += len;
    c->stats.queued++;
    return PMIX_SUCCESS;
}

/* Dispatch the queued messages of `epoch`, which just started. They are
 * taken out of the queue first: a completion inside may start the next
 * epoch, which drains the queue for itself. */
static void drain(px_coll *c, uint32_t epoch)
{
    px_coll_early *list = NULL, **tail = &list, **pp = &c->early;

    c->early_tail = NULL;
    while (*pp != NULL) {
        px_coll_early *e = *pp;
        if (e->epoch == epoch) {
            *pp = e->next;
            e->next = NULL;
            *tail = e;
            tail = &e->next;
            c->nearly--;
            c->early_bytes -= e->len;
        } else {
            c->early_tail = e;
            pp = &e->next;
        }
    }
    while (list != NULL) {
        px_coll_early *e = list;
        px_coll_msg_info h;
        list = e->next;
        if (c->run != NULL && c->run->epoch == epoch &&
            px_coll_msg_peek(e->msg, e->len, &h) == PMIX_SUCCESS) {
            dispatch(c, &h, e->msg + PX_COLL_HDR_SIZE, e->len - PX_COLL_HDR_SIZE);
        } else {
            c->stats.stale++;
        }
        free(e);
    }
}

void px_coll_pend_abort(px_coll *c, uint32_t epoch, pmix_status_t status)
{
    int32_t d = px_coll_epoch_diff(epoch, px_coll_lo(c));
    int free_slot = -1;

    if (d < 0 || d > PX_COLL_WINDOW || (d == 0 && c->run != NULL)) {
        return;
    }
    for (int i = 0; i <= PX_COLL_WINDOW; i++) {
        if (c->pending[i].valid && c->pending[i].epoch == epoch) {
            return; /* the first notice's status stands */
        }
        if (!c->pending[i].valid && free_slot < 0) {
            free_slot = i;
        }
    }
    if (free_slot >= 0) {
        c->pending[free_slot].valid = true;
        c->pending[free_slot].epoch = epoch;
        c->pending[free_slot].status = status;
    }
}

pmix_status_t px_coll_start(px_coll *c, const px_coll_args *args, const void *contrib, size_t len,
                            px_coll_cb cb, void *cbdata)
{
    px_coll_choice ch;
    px_coll_run *r;
    pmix_status_t rc;
    uint32_t epoch;

    if (c == NULL || args == NULL || cb == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (c->run != NULL) {
        return PMIX_ERR_RESOURCE_BUSY;
    }
    if (c->nowed > 0 && c->owed_timer == NULL) {
        px_coll_retry_owed(c); /* a host without timers */
    }
    if (args->kind != PX_COLL_BARRIER && args->kind != PX_COLL_ALLGATHER) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (args->kind == PX_COLL_ALLGATHER &&
        (len > UINT32_MAX || (len > 0 && contrib == NULL && !c->sizes_only))) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (!(args->timeout >= 0) || isinf(args->timeout)) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (args->timeout > 0 &&
        (c->ops->timer_start == NULL || c->ops->timer_cancel == NULL || c->ops->now == NULL)) {
        return PMIX_ERR_NOT_SUPPORTED;
    }
    rc = px_coll_resolve(&args->choice, args->kind, c->n, args->size_hint, c->groups, &ch);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return PMIX_ERR_NOMEM;
    }
    r->c = c;
    r->kind = args->kind;
    r->ch = ch;
    r->param = px_coll_choice_param(&ch);
    r->cb = cb;
    r->cbdata = cbdata;
    r->fail = PMIX_SUCCESS;
    r->fail_peer = PX_COLL_NONE;
    r->timeout = args->timeout;
    if (r->kind == PX_COLL_ALLGATHER && px_coll_blocks_init(&r->result, c->n) != PMIX_SUCCESS) {
        free(r);
        return PMIX_ERR_NOMEM;
    }
    r->result.phantom = c->sizes_only;
    if (r->timeout > 0) {
        r->last_progress = c->ops->now(c->ctx);
        r->timer = c->ops->timer_start(c->ctx, r->timeout, on_timer, r);
        if (r->timer == NULL) {
            px_coll_blocks_fini(&r->result);
            free(r);
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
    }

    /* From here on the epoch is consumed and the callback will run. */
    epoch = r->epoch = c->next_epoch++;
    c->last_epoch = epoch;
    c->run = r;
    for (int i = 0; i <= PX_COLL_WINDOW; i++) {
        if (c->pending[i].valid && c->pending[i].epoch == epoch) {
            finish(c, c->pending[i].status);
            return PMIX_SUCCESS;
        }
    }
    if (c->ndead > 0) {
        px_coll_maybe_flood(c, epoch, PMIX_ERR_PROC_TERM_WO_SYNC, c->me, false);
        finish(c, PMIX_ERR_PROC_TERM_WO_SYNC);
        return PMIX_SUCCESS;
    }
    rc = ch.algo->drv->start(r, contrib, len);
    if (rc != PMIX_SUCCESS) {
        px_coll_run_fail(r, rc, PX_COLL_NONE);
    }
    settle(c, r);
    if (c->run != NULL && c->run->epoch == epoch) {
        drain(c, epoch);
    }
    return PMIX_SUCCESS;
}

pmix_status_t px_coll_start_failed(px_coll *c, pmix_status_t status, px_coll_cb cb, void *cbdata)
{
    uint32_t epoch;

    if (c == NULL || cb == NULL || status >= 0) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (c->run != NULL) {
        return PMIX_ERR_RESOURCE_BUSY;
    }
    epoch = c->next_epoch++;
    c->last_epoch = epoch;
    for (int i = 0; i <= PX_COLL_WINDOW; i++) {
        if (c->pending[i].valid && px_coll_epoch_diff(c->pending[i].epoch, epoch) <= 0) {
            c->pending[i].valid = false;
        }
    }
    purge(c, epoch);
    /* Members already running this epoch end with `status`; the others
     * record it and fail the epoch as they start it. */
    px_coll_maybe_flood(c, epoch, status, c->me, false);
    c->stats.failed++;
    cb(status, NULL, cbdata);
    return PMIX_SUCCESS;
}

pmix_status_t px_coll_deliver(px_coll *c, uint32_t from, const void *msg, size_t len)
{
    px_coll_msg_info h;
    const uint8_t *p;
    int32_t d;

    if (c == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    c->stats.received++;
    if (c->nowed > 0 && c->owed_timer == NULL) {
        px_coll_retry_owed(c); /* a host without timers */
    }
    if (px_coll_msg_peek(msg, len, &h) != PMIX_SUCCESS) {
        c->stats.malformed++;
        return PMIX_ERR_BAD_PARAM;
    }
    if (h.id != c->id) {
        c->stats.foreign++;
        return PMIX_ERR_NOT_FOUND;
    }
    if (h.nmembers != c->n || h.sender >= c->n || h.sender != from || h.sender == c->me) {
        c->stats.malformed++;
        return PMIX_ERR_BAD_PARAM;
    }
    p = (const uint8_t *)msg + PX_COLL_HDR_SIZE;
    len -= PX_COLL_HDR_SIZE;
    if (h.type == PX_COLL_MSG_ABORT) {
        if (px_coll_notice_recv(c, &h, p, len) != PX_COLL_V_OK) {
            c->stats.malformed++;
            return PMIX_ERR_BAD_PARAM;
        }
        return PMIX_SUCCESS;
    }
    if (px_coll_algo_by_id(h.algo) == NULL) {
        c->stats.malformed++;
        return PMIX_ERR_BAD_PARAM;
    }
    if (px_coll_is_dead(c, h.sender)) {
        c->stats.from_dead++;
        return PMIX_SUCCESS;
    }
    d = px_coll_epoch_diff(h.epoch, px_coll_lo(c));
    if (d < 0) {
        c->stats.stale++;
        return PMIX_SUCCESS;
    }
    if (d == 0 && c->run != NULL) {
        return dispatch(c, &h, p, len);
    }
    if (d <= PX_COLL_WINDOW) {
        return enqueue(c, &h, msg, len + PX_COLL_HDR_SIZE);
    }
    c->stats.too_far++;
    return PMIX_SUCCESS;
}

void px_coll_peer_failed(px_coll *c, uint32_t member)
{
    if (c == NULL || member >= c->n || member == c->me || px_coll_is_dead(c, member)) {
        return;
    }
    px_coll_add_dead(c, member);
    px_coll_flood(c, px_coll_lo(c), PMIX_ERR_PROC_TERM_WO_SYNC, c->me);
    px_coll_abort_run(c, PMIX_ERR_PROC_TERM_WO_SYNC);
}

const px_coll_stats *px_coll_get_stats(const px_coll *c)
{
    return &c->stats;
}

uint32_t px_coll_epoch(const px_coll *c)
{
    return c->last_epoch;
}

bool px_coll_busy(const px_coll *c)
{
    return c->run != NULL;
}

uint32_t px_coll_queued(const px_coll *c)
{
    return (uint32_t)c->nearly;
}
