/*
 * sgw.cpp - SimGrid behind a C interface (see sgw.h).
 *
 * Receives: an sgw_box keeps at most one pending receive (a CommPtr). A
 * timed wait that expires (Comm::wait_any_for, see sgw_recv) leaves it
 * pending, so the next sgw_recv waits on the same communication and
 * nothing that was matched to it is lost.
 *
 * Sends are blocking puts into mailboxes that have a permanent receiver
 * (sgw_box_listen): a transfer starts as soon as it is posted, whether or
 * not its receiver is waiting, as on a real network, and the sender goes on
 * when its bytes have arrived. Detached sends would avoid the sender's
 * wait, but SimGrid 3.32 keeps every detached communication in one list
 * that it searches linearly when one ends: O(N^2) for N nodes (4096 nodes:
 * 3.3 s per fence instead of 0.1 s).
 */
#include "sgw.h"

#include <cstdio>
#include <deque>
#include <exception>
#include <set>
#include <string>
#include <vector>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

namespace sg4 = simgrid::s4u;

struct sgw_box {
    sg4::Mailbox *mb;
    sg4::CommPtr pending;
    void *payload;
    bool queued; /* network planes: payloads come through `q` */
    std::deque<void *> q;
    sg4::SemaphorePtr sem; /* one token per queued payload */
};

struct sgw_net {
    std::vector<std::vector<sg4::Host *>> hosts; /* [plane][node] */
};

extern "C" {

void sgw_init(int *argc, char **argv)
{
    new sg4::Engine(argc, argv); /* lives until the process exits */
}

void sgw_config(const char *item)
{
    sg4::Engine::set_config(item);
}

double sgw_config_double(const char *name)
{
    return simgrid::config::get_value<double>(name);
}

int sgw_load_platform(const char *file, char *err, size_t errlen)
{
    try {
        sg4::Engine::get_instance()->load_platform(file);
    } catch (const std::exception &e) {
        std::snprintf(err, errlen, "%s", e.what());
        return -1;
    }
    return 0;
}

size_t sgw_host_count(void)
{
    return sg4::Engine::get_instance()->get_host_count();
}

int sgw_host_exists(const char *name)
{
    return sg4::Host::by_name_or_null(name) != nullptr;
}

const char *sgw_host_name(size_t i)
{
    static std::vector<sg4::Host *> hosts; /* the engine's, read once */
    if (hosts.empty())
        hosts = sg4::Engine::get_instance()->get_all_hosts();
    return i < hosts.size() ? hosts[i]->get_cname() : nullptr;
}

void sgw_run(void)
{
    sg4::Engine::get_instance()->run();
}

double sgw_now(void)
{
    return sg4::Engine::get_clock();
}

static std::vector<sg4::Link *> route(const char *from, const char *to, double *lat)
{
    std::vector<sg4::Link *> links;
    *lat = 0;
    sg4::Host::by_name(from)->route_to(sg4::Host::by_name(to), links, lat);
    return links;
}

double sgw_route_latency(const char *from, const char *to)
{
    double lat;
    (void)route(from, to, &lat);
    return lat;
}

double sgw_route_bandwidth(const char *from, const char *to)
{
    double lat, bw = 0;
    for (sg4::Link *l : route(from, to, &lat))
        if (bw == 0 || l->get_bandwidth() < bw)
            bw = l->get_bandwidth();
    return bw;
}

long sgw_actor(const char *name, const char *host, void (*fn)(void *arg), void *arg, int daemon)
{
    sg4::ActorPtr a = sg4::Actor::create(name, sg4::Host::by_name(host), [fn, arg]() { fn(arg); });
    if (daemon)
        a->daemonize();
    return a->get_pid();
}

int sgw_kill(long pid)
{
    sg4::ActorPtr a = sg4::Actor::by_pid(pid);

    if (a == nullptr)
        return 0;
    a->kill();
    return 1;
}

void sgw_daemonize_self(void)
{
    sg4::Actor::self()->daemonize();
}

int sgw_loopback(sgw_box *b, double bytes)
{
    /* A put to a box of one's own, matched by one's own get: a plain
     * rendezvous. (Comm::sendto would do without the box, but SimGrid
     * 3.32 keeps those in the one list it searches linearly, as detached
     * sends: 16,384 nodes took twice as long.) */
    try {
        sg4::CommPtr send = b->mb->put_async(b, (uint64_t)bytes);
        (void)b->mb->get<void>();
        send->wait();
    } catch (const std::exception &) {
        return -1;
    }
    return 0;
}

void sgw_sleep_until(double t)
{
    sg4::this_actor::sleep_until(t);
}

int sgw_in_actor(void)
{
    return !sg4::Actor::is_maestro();
}

void *sgw_self_data(void)
{
    sg4::Actor *a = sg4::Actor::self();
    return a != nullptr ? a->get_data<void>() : nullptr;
}

void sgw_set_self_data(void *data)
{
    sg4::Actor::self()->set_data(data);
}

sgw_box *sgw_box_create(const char *name)
{
    sgw_box *b = new sgw_box;
    b->mb = sg4::Mailbox::by_name(name);
    b->payload = nullptr;
    b->queued = false;
    return b;
}

void sgw_box_destroy(sgw_box *b)
{
    if (b == nullptr)
        return;
    if (b->pending != nullptr) {
        try {
            b->pending->cancel();
        } catch (const std::exception &) {
            /* already over: nothing to cancel */
        }
    }
    delete b;
}

int sgw_recv(sgw_box *b, double timeout, void **payload)
{
    if (b->queued) {
        /* A semaphore, not a condition variable: an actor killed while it
         * waits must not have a lock to release on the way out. */
        if (timeout < 0)
            b->sem->acquire();
        else if (b->sem->acquire_timeout(timeout))
            return 1; /* timed out: a timer is due */
        *payload = b->q.front();
        b->q.pop_front();
        return 0;
    }
    if (b->pending == nullptr)
        b->pending = b->mb->get_async<void>(&b->payload);
    try {
        if (timeout >= 0) {
            /* Not Comm::wait_for: in SimGrid 3.32 a wait_for that expires
             * ends the communication (its state stays TIMEOUT) and every
             * later wait on it throws at once, without the clock moving.
             * wait_any_for leaves it pending. */
            std::vector<sg4::CommPtr> one{b->pending};
            if (sg4::Comm::wait_any_for(one, timeout) < 0)
                return 1;
        } else {
            b->pending->wait();
        }
    } catch (const simgrid::TimeoutException &) {
        return 1;
    } catch (const simgrid::NetworkFailureException &) {
        b->pending = nullptr;
        return -1;
    } catch (const simgrid::CancelException &) {
        b->pending = nullptr;
        return -1;
    }
    b->pending = nullptr;
    *payload = b->payload;
    b->payload = nullptr;
    return 0;
}

void sgw_box_listen(sgw_box *b)
{
    b->mb->set_receiver(sg4::Actor::self());
}

int sgw_send(sgw_box *to, void *payload, double bytes, void (*lost)(void *payload))
{
    sg4::CommPtr comm = nullptr;

    try {
        comm = to->mb->put_async(payload, (uint64_t)bytes);
        comm->wait();
    } catch (const std::exception &) {
        /* Lost, unless it got there before the wait failed: then the
         * receiver owns (and may have freed) it. */
        if (lost != nullptr && (comm == nullptr || comm->get_state() != sg4::Activity::State::FINISHED))
            lost(payload);
        return -1;
    } catch (...) {
        /* The sender is being killed (a fault, or the end of the run): its
         * stack unwinds. Whether the receiver already took the payload
         * cannot be told here (it may have been handled and freed), so it
         * is left alone: pmixsim's sanitized builds free what is left at
         * the end (sim_msgs_free_live); a plain build exits then. */
        throw;
    }
    return 0;
}

/* ---- network planes ---- */

void sgw_box_set_queued(sgw_box *b)
{
    b->queued = true;
    b->sem = sg4::Semaphore::create(0);
}

int sgw_box_is_queued(const sgw_box *b)
{
    return b->queued;
}

void sgw_box_push(sgw_box *b, void *payload)
{
    b->q.push_back(payload);
    b->sem->release();
}

void sgw_box_drain(sgw_box *b, void (*drop)(void *payload))
{
    if (b == nullptr)
        return;
    while (!b->q.empty()) {
        void *p = b->q.front();
        b->q.pop_front();
        if (drop != nullptr)
            drop(p);
    }
}

sgw_net *sgw_net_create(unsigned nplanes, size_t nnodes,
                        const char *(*name)(void *ctx, unsigned plane, size_t node), void *ctx,
                        char *err, size_t errlen)
{
    sgw_net *n = new sgw_net;
    n->hosts.resize(nplanes);
    for (unsigned p = 0; p < nplanes; p++) {
        n->hosts[p].resize(nnodes);
        for (size_t i = 0; i < nnodes; i++) {
            const char *hn = name(ctx, p, i);
            n->hosts[p][i] = sg4::Host::by_name_or_null(hn);
            if (n->hosts[p][i] == nullptr) {
                std::snprintf(err, errlen, "no host %s for plane %u in the platform", hn, p);
                delete n;
                return nullptr;
            }
        }
    }
    return n;
}

void sgw_net_destroy(sgw_net *n)
{
    delete n;
}

int sgw_sendto(sgw_net *n, unsigned plane, size_t from, size_t to, double bytes, void *payload,
               void (*unwind)(void *payload))
{
    try {
        sg4::Comm::sendto(n->hosts[plane][from], n->hosts[plane][to], (uint64_t)bytes);
    } catch (const std::exception &) {
        return -1;
    } catch (...) {
        /* The sender is being killed (a fault): its stack unwinds. */
        if (unwind != nullptr)
            unwind(payload);
        throw;
    }
    return 0;
}

/* The links of node i's NIC: the first links of its routes to the nodes
 * `strides` away on either side (a torus's neighbours along every
 * dimension, so that every direction out is covered), and the last links
 * of their routes to it. */
static void nic_links(sgw_net *n, unsigned plane, size_t i, const size_t *strides, size_t nstrides,
                      std::set<sg4::Link *> &out)
{
    const std::vector<sg4::Host *> &h = n->hosts[plane];
    size_t nn = h.size();
    std::set<size_t> peers;

    for (size_t k = 0; k < nstrides; k++) {
        peers.insert((i + strides[k]) % nn);
        peers.insert((i + nn - strides[k] % nn) % nn);
    }
    peers.erase(i);
    for (size_t j : peers) {
        std::vector<sg4::Link *> links;
        double lat = 0;
        h[i]->route_to(h[j], links, &lat);
        if (!links.empty())
            out.insert(links.front());
        links.clear();
        h[j]->route_to(h[i], links, &lat);
        if (!links.empty())
            out.insert(links.back());
    }
}

size_t sgw_net_off(sgw_net *n, unsigned plane, size_t node, const size_t *strides,
                   size_t nstrides)
{
    std::set<sg4::Link *> links;
    size_t count = 0;

    if (plane >= n->hosts.size())
        return 0;
    if (node == (size_t)-1) {
        for (size_t i = 0; i < n->hosts[plane].size(); i++)
            nic_links(n, plane, i, strides, nstrides, links);
    } else if (node < n->hosts[plane].size()) {
        nic_links(n, plane, node, strides, nstrides, links);
    }
    for (sg4::Link *l : links) {
        if (l->is_on()) {
            l->turn_off();
            count++;
        }
    }
    return count;
}

} /* extern "C" */
