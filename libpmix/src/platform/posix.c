/*
 * posix.c - the production platform: the event loop, the engine lock,
 * timers, the clock, waiting and logging. Sockets are in posix_conn.c.
 *
 * How it works. A px_posix owns one libevent base (made thread-aware with
 * evthread_use_pthreads, so any thread may add or activate events) and one
 * recursive pthread mutex, the engine lock of px_platform.h. Every libevent
 * callback of this platform takes that lock before it touches anything, so
 * engines see one thread at a time whichever thread runs the loop.
 *
 * Progress. By default a progress thread runs event_base_loop() until
 * px_posix_stop() (or px_posix_destroy(), which calls it first) activates
 * `stop_ev`, whose callback breaks the loop
 * (an activated event cannot be lost, unlike a loopbreak issued before the
 * loop starts). Under external progress there is no thread: the loop runs
 * inside px_posix_progress() and inside `wait`. Only one thread runs it at a
 * time (the "driver"); it releases the engine lock while the loop sleeps, so
 * other threads can still call the engine, and a `wake` from another thread
 * activates `nudge_ev` to bring the driver out of the loop.
 *
 * A host on the loop. A host that runs on its own thread (pmixrun, pmixd)
 * makes the platform for external progress, watches its own descriptors
 * (posix_watch.c) and calls px_posix_run_once where it would call poll():
 * one turn of the loop as the driver, bounded by a timer (`tick_ev`).
 *
 * Waiting. `wait` sleeps on `cond` (with the engine lock as its mutex)
 * until `done`; `wake` sets `done` and broadcasts. A blocking call made from
 * inside a callback (on the progress thread, or by the driver) can never
 * complete: it is reported with an error message.
 *
 * Timers are one-shot libevent timers that know their own deadline on
 * CLOCK_MONOTONIC and wait again if libevent's clock fires them early (the
 * event base is not made precise: that costs a timerfd_settime before
 * every epoll_wait). A timer callback takes the lock and
 * runs the engine's callback unless the timer was cancelled meanwhile;
 * cancel marks it and frees it through event_free_finalize(), which runs
 * once libevent guarantees that the callback is not running.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/thread.h>

#include "posix_int.h"
#include "wire/px_wire.h"

/* ---- logging ---- */

static const char *level_word(px_log_level level)
{
    switch (level) {
    case PX_LOG_ERROR: return "error";
    case PX_LOG_WARN: return "warning";
    case PX_LOG_INFO: return "info";
    default: return "debug";
    }
}

static void op_log(void *pctx, px_log_level level, const char *msg)
{
    px_posix *p = pctx;
    if (p != NULL && (int)level > p->verbosity)
        return;
    /* One fprintf: stderr is unbuffered and locked per call, so lines from
     * several threads do not interleave. */
    fprintf(stderr, "pmix: %s: %s\n", level_word(level), msg);
}

void px_posix_logf(px_posix *p, px_log_level level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    if ((int)level > p->verbosity)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    op_log(p, level, msg);
}

/* PMIXLAB_LOG=error|warn|info|debug (or 0..3) sets how much `log` prints;
 * errors and warnings by default. */
static int verbosity_from_env(void)
{
    const char *v = getenv("PMIXLAB_LOG");
    if (v == NULL || *v == '\0')
        return PX_LOG_WARN;
    if (v[0] >= '0' && v[0] <= '3' && v[1] == '\0')
        return v[0] - '0';
    if (strcasecmp(v, "error") == 0)
        return PX_LOG_ERROR;
    if (strcasecmp(v, "info") == 0)
        return PX_LOG_INFO;
    if (strcasecmp(v, "debug") == 0)
        return PX_LOG_DEBUG;
    return PX_LOG_WARN;
}

/* ---- lock ---- */

static void op_lock(void *pctx)
{
    px_posix *p = pctx;
    pthread_mutex_lock(&p->lock);
}

static void op_unlock(void *pctx)
{
    px_posix *p = pctx;
    pthread_mutex_unlock(&p->lock);
}

/* ---- clock ---- */

static double op_now(void *pctx)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- timers ---- */

static void timer_unlink(px_posix *p, px_timer *t)
{
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        p->timers = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    t->prev = t->next = NULL;
}

/* `seconds` as a timeval for libevent, at most 1e9 s. */
static struct timeval seconds_tv(double seconds)
{
    struct timeval tv;
    if (!(seconds > 0.0)) /* also catches NaN */
        seconds = 0.0;
    if (seconds > 1e9)
        seconds = 1e9;
    tv.tv_sec = (time_t)seconds;
    tv.tv_usec = (suseconds_t)((seconds - (double)tv.tv_sec) * 1e6);
    if (tv.tv_usec >= 1000000)
        tv.tv_usec = 999999;
    return tv;
}

static void timer_fire(evutil_socket_t fd, short what, void *arg)
{
    px_timer *t = arg;
    px_posix *p = t->p;
    pthread_mutex_lock(&p->lock);
    if (t->cancelled) {
        /* Cancelled while we waited for the lock: the finalizer frees it. */
        pthread_mutex_unlock(&p->lock);
        return;
    }
    double left = t->due - op_now(p);
    if (left > 0.0) {
        /* libevent's coarse clock let it fire early: wait for the rest
         * (rounded up to a microsecond, so that it never comes back early
         * by less than that) */
        struct timeval tv = seconds_tv(left + 1e-6);
        event_base_update_cache_time(p->base);
        if (evtimer_add(t->ev, &tv) == 0) {
            pthread_mutex_unlock(&p->lock);
            return;
        }
    }
    timer_unlink(p, t);
    px_timer_cb cb = t->cb;
    void *cbarg = t->arg;
    /* The engine forgets the timer once its callback starts, so it can go
     * now; freeing a non-pending event from its own callback is allowed. */
    event_free(t->ev);
    free(t);
    cb(cbarg);
    pthread_mutex_unlock(&p->lock);
}

static void timer_finalized(struct event *ev, void *arg)
{
    free(arg);
}

static px_timer *op_timer_start(void *pctx, double seconds, px_timer_cb cb, void *arg)
{
    px_posix *p = pctx;
    if (cb == NULL)
        return NULL;
    px_timer *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->p = p;
    t->cb = cb;
    t->arg = arg;
    struct timeval tv = seconds_tv(seconds);
    t->due = op_now(p) + (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;

    pthread_mutex_lock(&p->lock);
    /* libevent measures a timeout from the time it cached at its last loop
     * iteration, which may be long past when another thread adds one: the
     * timer would fire early. Measure from now. */
    event_base_update_cache_time(p->base);
    t->ev = evtimer_new(p->base, timer_fire, t);
    if (t->ev == NULL || evtimer_add(t->ev, &tv) != 0) {
        if (t->ev != NULL)
            event_free(t->ev);
        pthread_mutex_unlock(&p->lock);
        free(t);
        return NULL;
    }
    t->next = p->timers;
    if (p->timers != NULL)
        p->timers->prev = t;
    p->timers = t;
    pthread_mutex_unlock(&p->lock);
    return t;
}

static void op_timer_cancel(void *pctx, px_timer *t)
{
    px_posix *p = pctx;
    if (t == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    if (!t->cancelled) {
        t->cancelled = true;
        timer_unlink(p, t);
        /* Never blocks; timer_finalized runs in the loop once timer_fire
         * cannot be running (or at event_base_free). */
        event_free_finalize(0, t->ev, timer_finalized);
    }
    pthread_mutex_unlock(&p->lock);
}

/* ---- waiting ---- */

static bool on_loop_thread(px_posix *p)
{
    pthread_t self = pthread_self();
    if (p->has_thread)
        return pthread_equal(self, p->thread);
    return p->driving && pthread_equal(self, p->driver);
}

/* Called with the lock held: the driver fields change only under it. */
static bool op_in_callback(void *pctx)
{
    return on_loop_thread(pctx);
}

/* Run the loop once as the driver; called with the lock held once. */
static void drive_once(px_posix *p, int flags)
{
    p->driving = true;
    p->driver = pthread_self();
    pthread_mutex_unlock(&p->lock);
    event_base_loop(p->base, flags);
    pthread_mutex_lock(&p->lock);
    p->driving = false;
    pthread_cond_broadcast(&p->cond);
}

static void op_wait(void *pctx, px_wait *w)
{
    px_posix *p = pctx;
    pthread_mutex_lock(&p->lock);
    if (!w->done && on_loop_thread(p))
        px_posix_logf(p, PX_LOG_ERROR,
                      "a blocking PMIx call was made from inside a PMIx callback; it cannot "
                      "complete (use the non-blocking form of the call there)");
    while (!w->done) {
        /* no caller drives once a progress thread exists or takes over */
        if (p->external && !p->driving && !p->has_thread)
            drive_once(p, EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY);
        else
            pthread_cond_wait(&p->cond, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
}

static void op_wake(void *pctx, px_wait *w)
{
    px_posix *p = pctx;
    pthread_mutex_lock(&p->lock);
    w->done = 1;
    pthread_cond_broadcast(&p->cond);
    if (p->external && p->driving && !pthread_equal(p->driver, pthread_self()))
        event_active(p->nudge_ev, EV_READ, 0);
    pthread_mutex_unlock(&p->lock);
}

void px_posix_progress(px_posix *p)
{
    if (p == NULL || !p->external)
        return; /* the progress thread does it */
    pthread_mutex_lock(&p->lock);
    if (!p->driving && !p->has_thread)
        drive_once(p, EVLOOP_NONBLOCK);
    pthread_mutex_unlock(&p->lock);
}

static void nudge_cb(evutil_socket_t fd, short what, void *arg)
{
    /* Nothing: being active is enough to end EVLOOP_ONCE. */
}

/* A host's turn of the loop (px_posix.h): the timeout is `tick_ev`, which,
 * like `nudge_ev`, only ends the turn. Always-ready watches that want
 * something are activated first, so the turn does not sleep. A turn runs
 * the ready callbacks once (EVLOOP_ONCE, also when it does not sleep): a
 * watch's callback only notes readiness and the host reads after the
 * turn, so a descriptor stays ready until then, and libevent's
 * EVLOOP_NONBLOCK alone would run it again and again and never return. */
void px_posix_run_once(px_posix *p, double timeout)
{
    if (p == NULL || !p->external)
        return;
    pthread_mutex_lock(&p->lock);
    if (!p->driving && !p->has_thread) {
        int flags = EVLOOP_ONCE | EVLOOP_NO_EXIT_ON_EMPTY;
        bool timed = false;
        if (px_posix_watch_always(p) || timeout == 0.0) {
            flags = EVLOOP_ONCE | EVLOOP_NONBLOCK;
        } else if (timeout > 0.0) {
            struct timeval tv = seconds_tv(timeout);
            event_base_update_cache_time(p->base);
            timed = evtimer_add(p->tick_ev, &tv) == 0;
            if (!timed)
                flags = EVLOOP_ONCE | EVLOOP_NONBLOCK; /* never sleep past the deadline */
        }
        drive_once(p, flags);
        if (timed)
            evtimer_del(p->tick_ev);
    }
    pthread_mutex_unlock(&p->lock);
}

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
    px_posix *p = arg;
    event_base_loopbreak(p->base);
}

static void *progress_main(void *arg)
{
    px_posix *p = arg;
    event_base_loop(p->base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

/* A progress thread started later (px_posix_start_thread): it waits for
 * the caller that may be driving the loop to let go, then owns the loop. */
static void *progress_takeover(void *arg)
{
    px_posix *p = arg;
    pthread_mutex_lock(&p->lock);
    while (p->driving)
        pthread_cond_wait(&p->cond, &p->lock);
    p->external = false;
    pthread_cond_broadcast(&p->cond); /* waiters sleep from now on */
    pthread_mutex_unlock(&p->lock);
    return progress_main(p);
}

/* Start the progress thread with every signal blocked, so that signals go
 * to the application's threads (e.g. a launcher's signalfd). */
static int start_thread(px_posix *p, void *(*fn)(void *))
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&p->thread, NULL, fn, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        p->has_thread = true;
    return rc;
}

pmix_status_t px_posix_start_thread(px_posix *p)
{
    int rc = 0;

    pthread_mutex_lock(&p->lock);
    if (!p->has_thread) {
        rc = start_thread(p, progress_takeover);
        if (rc == 0 && p->driving)
            event_active(p->nudge_ev, EV_READ, 0); /* the driver lets go sooner */
        else if (rc != 0)
            px_posix_logf(p, PX_LOG_ERROR, "cannot start the progress thread: %s", strerror(rc));
    }
    pthread_mutex_unlock(&p->lock);
    return rc == 0 ? PMIX_SUCCESS : PMIX_ERR_OUT_OF_RESOURCE;
}

/* ---- the table ---- */

static const px_platform_ops posix_ops = {
    .version = PX_PLATFORM_OPS_VERSION,
    .send = px_posix_conn_send,
    .close = px_posix_conn_close,
    .timer_start = op_timer_start,
    .timer_cancel = op_timer_cancel,
    .now = op_now,
    .lock = op_lock,
    .unlock = op_unlock,
    .wait = op_wait,
    .wake = op_wake,
    .log = op_log,
    .region_create = px_posix_region_create,
    .send_region = px_posix_conn_send_region,
    .region_release = px_posix_region_release,
    .region_append = px_posix_region_append,
    .in_callback = op_in_callback,
    .page_create = px_posix_page_create,
    .page_send = px_posix_conn_send_page,
    .page_destroy = px_posix_page_destroy,
    .page_get = px_posix_page_get,
    .page_wait = px_posix_page_wait,
    .page_wake = px_posix_page_wake,
    .page_write = px_posix_page_write,
    .out_pending = px_posix_out_pending,
    .page_trim = px_posix_page_trim,
    .page_discard = px_posix_page_discard,
    .page_bound = px_posix_page_bound,
    .conn_accepted = px_posix_conn_accepted,
    .peer_pid = px_posix_peer_pid,
};

const px_platform_ops *px_posix_ops(void)
{
    return &posix_ops;
}

void px_posix_set_max_frame(px_posix *p, size_t max_payload)
{
    pthread_mutex_lock(&p->lock);
    p->max_payload = max_payload > 0 ? max_payload : PX_FRAME_MAX_DEFAULT;
    pthread_mutex_unlock(&p->lock);
}

void px_posix_get_limits(px_posix *p, px_posix_limits *lim)
{
    pthread_mutex_lock(&p->lock);
    *lim = p->lim;
    pthread_mutex_unlock(&p->lock);
}

void px_posix_set_limits(px_posix *p, const px_posix_limits *lim)
{
    pthread_mutex_lock(&p->lock);
    p->lim.handshake_s = lim->handshake_s > 0 ? lim->handshake_s : 0;
    p->lim.handshake_frame =
        lim->handshake_frame > 0 ? lim->handshake_frame : PX_POSIX_HANDSHAKE_FRAME;
    p->lim.max_pending = lim->max_pending > 0 ? lim->max_pending : PX_POSIX_MAX_PENDING;
    p->lim.max_queued = lim->max_queued > 0 ? lim->max_queued : PX_POSIX_MAX_QUEUED;
    pthread_mutex_unlock(&p->lock);
}

/* PMIXLAB_HANDSHAKE_TIMEOUT=S (seconds, 0 for none) replaces the default
 * handshake deadline: a test knob, and a way out for a site whose clients
 * take longer than 10 s between connect and HELLO. */
static double handshake_from_env(void)
{
    const char *v = getenv("PMIXLAB_HANDSHAKE_TIMEOUT");
    char *end;
    if (v == NULL || *v == '\0')
        return PX_POSIX_HANDSHAKE_S;
    double s = strtod(v, &end);
    if (*end != '\0' || !(s >= 0) || s > 1e6)
        return PX_POSIX_HANDSHAKE_S;
    return s;
}

/* ---- create / destroy ---- */

px_posix *px_posix_create(bool external_progress, char *errbuf, size_t errlen)
{
    px_posix *p = NULL;
    pthread_mutexattr_t ma;
    bool mutex_ok = false, cond_ok = false;

    if (evthread_use_pthreads() != 0) {
        snprintf(errbuf, errlen, "libevent has no pthreads support (evthread_use_pthreads failed)");
        return NULL;
    }
    p = calloc(1, sizeof *p);
    if (p == NULL)
        goto nomem;
    p->external = external_progress;
    p->max_payload = PX_FRAME_MAX_DEFAULT;
    p->verbosity = verbosity_from_env();
    p->lim.handshake_s = handshake_from_env();
    p->lim.handshake_frame = PX_POSIX_HANDSHAKE_FRAME;
    p->lim.max_pending = PX_POSIX_MAX_PENDING;
    p->lim.max_queued = PX_POSIX_MAX_QUEUED;
    p->next_id = 1;
    p->nbuckets = 64;
    p->buckets = calloc(p->nbuckets, sizeof *p->buckets);
    if (p->buckets == NULL)
        goto nomem;

    if (pthread_mutexattr_init(&ma) != 0)
        goto nomem;
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    mutex_ok = pthread_mutex_init(&p->lock, &ma) == 0;
    pthread_mutexattr_destroy(&ma);
    if (!mutex_ok)
        goto nomem;
    cond_ok = pthread_cond_init(&p->cond, NULL) == 0;
    if (!cond_ok)
        goto nomem;

    /* Not EVENT_BASE_FLAG_PRECISE_TIMER: with it libevent's epoll backend
     * re-arms a timerfd before every epoll_wait (a system call per loop
     * iteration, per message). Timers check their deadline themselves
     * instead (timer_fire), so that the coarse clock never makes one fire
     * early. */
    p->base = event_base_new();
    if (p->base == NULL) {
        snprintf(errbuf, errlen, "cannot create a libevent event base");
        goto fail;
    }
    p->stop_ev = event_new(p->base, -1, 0, stop_cb, p);
    p->nudge_ev = event_new(p->base, -1, 0, nudge_cb, p);
    p->tick_ev = evtimer_new(p->base, nudge_cb, p);
    if (p->stop_ev == NULL || p->nudge_ev == NULL || p->tick_ev == NULL)
        goto nomem;

    if (!external_progress) {
        int rc = start_thread(p, progress_main);
        if (rc != 0) {
            snprintf(errbuf, errlen, "cannot start the progress thread: %s", strerror(rc));
            goto fail;
        }
    }
    return p;

nomem:
    snprintf(errbuf, errlen, "out of memory creating the platform");
fail:
    if (p != NULL) {
        if (p->stop_ev != NULL)
            event_free(p->stop_ev);
        if (p->nudge_ev != NULL)
            event_free(p->nudge_ev);
        if (p->tick_ev != NULL)
            event_free(p->tick_ev);
        if (p->base != NULL)
            event_base_free(p->base);
        if (cond_ok)
            pthread_cond_destroy(&p->cond);
        if (mutex_ok)
            pthread_mutex_destroy(&p->lock);
        free(p->buckets);
        free(p);
    }
    return NULL;
}

bool px_posix_stop(px_posix *p)
{
    if (p->has_thread && pthread_equal(pthread_self(), p->thread)) {
        /* Joining ourselves would hang forever: refuse (and leak). */
        px_posix_logf(p, PX_LOG_ERROR,
                      "the platform was asked to stop from its progress thread (from inside a "
                      "PMIx callback); it is left running");
        return false;
    }
    if (p->has_thread) {
        event_active(p->stop_ev, EV_READ, 0);
        pthread_join(p->thread, NULL);
        p->has_thread = false;
    }
    return true;
}

void px_posix_destroy(px_posix *p)
{
    if (p == NULL || !px_posix_stop(p))
        return;
    pthread_mutex_lock(&p->lock);
    px_posix_conns_destroy(p);
    px_posix_regions_destroy(p);
    px_posix_page_unmap(p);
    while (p->timers != NULL) {
        px_timer *t = p->timers;
        timer_unlink(p, t);
        event_free(t->ev);
        free(t);
    }
    pthread_mutex_unlock(&p->lock);
    event_free(p->stop_ev);
    event_free(p->nudge_ev);
    event_free(p->tick_ev);
    /* Runs the finalizers still queued: closed connections, cancelled
     * timers. */
    event_base_free(p->base);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p->buckets);
    free(p);
}

/* ---- calls into the loop from any thread ---- */

struct px_posix_async {
    struct event *ev;
    void (*cb)(void *arg);
    void *arg;
};

/* Runs on the loop's thread without the engine lock: the loop itself
 * holds nothing while it dispatches (drive_once and progress_main run it
 * unlocked). */
static void async_fire(evutil_socket_t fd, short what, void *arg)
{
    px_posix_async *a = arg;

    a->cb(a->arg);
}

px_posix_async *px_posix_async_create(px_posix *p, void (*cb)(void *arg), void *arg)
{
    px_posix_async *a;

    if (p == NULL || cb == NULL)
        return NULL;
    a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    a->cb = cb;
    a->arg = arg;
    a->ev = event_new(p->base, -1, 0, async_fire, a);
    if (a->ev == NULL) {
        free(a);
        return NULL;
    }
    return a;
}

void px_posix_async_send(px_posix_async *a)
{
    /* Takes libevent's own lock only, which the loop never holds while it
     * runs a callback. */
    event_active(a->ev, EV_READ, 0);
}

void px_posix_async_destroy(px_posix_async *a)
{
    if (a == NULL)
        return;
    event_free(a->ev);
    free(a);
}

bool px_posix_trylock(px_posix *p)
{
    return pthread_mutex_trylock(&p->lock) == 0;
}
