/*
 * posix_watch.c - a host's own descriptors on the platform's loop
 * (px_posix_watch, px_posix.h).
 *
 * How it works. A watch is two persistent libevent events on the host's
 * descriptor, one for reading and one for writing, each added to the
 * loop only while the watch wants it; setting the watch adds or deletes
 * them (nothing happens when the wish is unchanged). Their callback takes
 * the engine lock, as every callback of the platform does, and calls the
 * host's. Watches live on a platform without a progress thread and are
 * used from the one thread that runs its loop, so event_del() is always
 * called on the loop's thread (posix_int.h's rule), and a watch may be
 * destroyed from any callback, its own included: libevent removes its
 * events from the active queue, and the callback touches nothing after
 * the host's returns.
 *
 * Descriptors that epoll refuses (regular files, /dev/null) are always
 * ready, as poll() says of them. Such a watch has one event without a
 * descriptor, and sits on the platform's `always` list;
 * px_posix_run_once activates it before the loop runs whenever it wants
 * something, which also keeps the loop from sleeping. Whether epoll
 * takes a descriptor is asked once, at creation, on a private epoll
 * instance (pipes and sockets are taken without asking), so that
 * libevent never meets a descriptor it cannot add.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_int.h"

struct px_posix_watch {
    px_posix *p;
    int fd;
    unsigned want;
    px_posix_watch_cb cb;
    void *arg;
    struct event *rev, *wev;            /* wev NULL when always ready */
    bool always;                        /* on p->always; rev has no descriptor */
    struct px_posix_watch *prev, *next; /* p->always */
};

static void watch_fire(evutil_socket_t fd, short what, void *arg)
{
    px_posix_watch *w = arg;
    px_posix *p = w->p;
    unsigned ready = 0;

    if (what & EV_READ)
        ready |= PX_POSIX_READ;
    if (what & EV_WRITE)
        ready |= PX_POSIX_WRITE;
    pthread_mutex_lock(&p->lock);
    ready &= w->want;
    if (ready != 0)
        w->cb(w->arg, ready); /* may free w */
    pthread_mutex_unlock(&p->lock);
}

/* True if epoll can watch `fd`: pipes and sockets can; anything else is
 * asked of a private epoll instance. */
static bool pollable(int fd, bool *bad)
{
    struct stat st;
    struct epoll_event ev = {.events = EPOLLIN};
    bool ok;
    int ep;

    *bad = false;
    if (fstat(fd, &st) != 0) {
        *bad = true;
        return false;
    }
    if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
        return true;
    if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
        return true; /* cannot tell: let libevent try */
    ok = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0 || errno != EPERM;
    close(ep);
    return ok;
}

px_posix_watch *px_posix_watch_create(px_posix *p, int fd, unsigned want, px_posix_watch_cb cb,
                                      void *arg)
{
    px_posix_watch *w;
    bool bad;

    if (p == NULL || cb == NULL || fd < 0 || p->has_thread || !p->external)
        return NULL;
    w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->p = p;
    w->fd = fd;
    w->cb = cb;
    w->arg = arg;
    w->always = !pollable(fd, &bad);
    if (bad) {
        free(w);
        return NULL;
    }
    if (w->always) {
        w->rev = event_new(p->base, -1, 0, watch_fire, w);
    } else {
        w->rev = event_new(p->base, fd, EV_READ | EV_PERSIST, watch_fire, w);
        w->wev = event_new(p->base, fd, EV_WRITE | EV_PERSIST, watch_fire, w);
    }
    if (w->rev == NULL || (!w->always && w->wev == NULL)) {
        px_posix_watch_destroy(w);
        return NULL;
    }
    pthread_mutex_lock(&p->lock);
    if (w->always) {
        w->next = p->always;
        if (p->always != NULL)
            p->always->prev = w;
        p->always = w;
    }
    pthread_mutex_unlock(&p->lock);
    if (px_posix_watch_set(w, want) != 0) {
        px_posix_watch_destroy(w);
        return NULL;
    }
    return w;
}

/* Add or delete one event so that it is pending exactly when `on`. */
static int arm(struct event *ev, bool on)
{
    bool pending = event_pending(ev, EV_READ | EV_WRITE, NULL) != 0;

    if (on == pending)
        return 0;
    return on ? event_add(ev, NULL) : event_del(ev);
}

int px_posix_watch_set(px_posix_watch *w, unsigned want)
{
    int rc = 0;

    want &= PX_POSIX_READ | PX_POSIX_WRITE;
    if (w->always) {
        w->want = want; /* px_posix_run_once acts on it */
        return 0;
    }
    if (want == w->want)
        return 0;
    if (arm(w->rev, (want & PX_POSIX_READ) != 0) != 0 ||
        arm(w->wev, (want & PX_POSIX_WRITE) != 0) != 0) {
        (void)arm(w->rev, false);
        (void)arm(w->wev, false);
        want = 0;
        rc = -1;
    }
    w->want = want;
    return rc;
}

void px_posix_watch_destroy(px_posix_watch *w)
{
    px_posix *p;

    if (w == NULL)
        return;
    p = w->p;
    pthread_mutex_lock(&p->lock);
    if (w->always) {
        if (w->prev != NULL)
            w->prev->next = w->next;
        else if (p->always == w)
            p->always = w->next;
        if (w->next != NULL)
            w->next->prev = w->prev;
    }
    pthread_mutex_unlock(&p->lock);
    if (w->rev != NULL)
        event_free(w->rev);
    if (w->wev != NULL)
        event_free(w->wev);
    free(w);
}

bool px_posix_watch_always(px_posix *p)
{
    bool any = false;

    for (px_posix_watch *w = p->always; w != NULL; w = w->next) {
        short what = (short)(((w->want & PX_POSIX_READ) ? EV_READ : 0) |
                             ((w->want & PX_POSIX_WRITE) ? EV_WRITE : 0));
        if (what != 0) {
            event_active(w->rev, what, 0);
            any = true;
        }
    }
    return any;
}
