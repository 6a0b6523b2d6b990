/*
 * sgw.h - the few SimGrid facilities pmixsim uses, behind a C interface.
 *
 * The rest of simhost/ is C; this wrapper (sgw.cpp) is C++ because two
 * things pmixsim needs are only safe in SimGrid's C++ interface:
 *
 *   - a receive with a timeout that can be waited on again: an endpoint
 *     keeps one pending receive per mailbox across timeouts (the C API's
 *     sg_comm_wait_for releases the comm whatever the outcome, so a timer
 *     firing would lose the posted receive);
 *   - catching a failed communication as an error instead of an abort.
 *
 * Every endpoint (a simulated node's server, a simulated process's client)
 * owns exactly one mailbox (sgw_box) for the whole run: SimGrid never frees
 * mailboxes, so one per message or per step would grow without bound.
 * Messages are puts of a payload pointer with a simulated size into a
 * mailbox with a permanent receiver; the receiver owns the payload.
 * Matching is FIFO per mailbox.
 */
#ifndef PMIXSIM_SGW_H
#define PMIXSIM_SGW_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sgw_box sgw_box;

/* Create the engine; eats --cfg= and --log= from argv. */
void sgw_init(int *argc, char **argv);
/* Set a configuration item ("network/model:CM02") before loading a
 * platform. */
void sgw_config(const char *item);
/* A numeric configuration item's value (e.g. "network/TCP-gamma"). */
double sgw_config_double(const char *name);
/* Load a platform file (XML or a .so). Returns 0, or -1 with a reason. */
int sgw_load_platform(const char *file, char *err, size_t errlen);
size_t sgw_host_count(void);
/* The name of host i in creation order (valid until the engine ends). */
const char *sgw_host_name(size_t i);
int sgw_host_exists(const char *name);
/* Run the simulation until no actor is left. */
void sgw_run(void);
double sgw_now(void);
/* Route latency (s) and bandwidth (bytes/s) between two hosts. */
double sgw_route_latency(const char *from, const char *to);
double sgw_route_bandwidth(const char *from, const char *to);

/* Start an actor running fn(arg) on `host`. A daemon actor is killed when
 * the last non-daemon actor ends. Returns the actor's id (for sgw_kill). */
long sgw_actor(const char *name, const char *host, void (*fn)(void *arg), void *arg, int daemon);
/* Kill actor `pid` if it still runs: it stops at the SimGrid call it is
 * blocked in and never returns from it (its pending communications
 * fail). Returns 1 if it was alive. Never the calling actor. */
int sgw_kill(long pid);
/* Make the calling actor a daemon (see sgw_actor). */
void sgw_daemonize_self(void);
/* Move `bytes` from the calling actor to itself through `b`, a box that
 * nobody listens to and nobody else uses (so over its host's loopback
 * link), blocking until they are over. Returns 0, or -1 if the transfer
 * failed (the host is off). */
int sgw_loopback(sgw_box *b, double bytes);

/* Suspend the calling actor until simulated time `t`. */
void sgw_sleep_until(double t);
/* 1 when called from an actor, 0 before the simulation runs. */
int sgw_in_actor(void);
/* The calling actor's data slot (NULL outside actors). */
void *sgw_self_data(void);
void sgw_set_self_data(void *data);

sgw_box *sgw_box_create(const char *name);
/* Cancel the pending receive if any and free the handle (the mailbox
 * itself lives as long as the engine). */
void sgw_box_destroy(sgw_box *b);
/* Receive the next payload. timeout < 0 waits for ever. Returns 0 with
 * *payload set, 1 on timeout (the pending receive is kept for the next
 * call), -1 if the communication failed. */
int sgw_recv(sgw_box *b, double timeout, void **payload);
/* Make the calling actor the permanent receiver of `b`: messages for it are
 * transferred as soon as they are sent. Call it first thing in the actor
 * that owns the mailbox. */
void sgw_box_listen(sgw_box *b);
/* Send `payload` to `to`: `bytes` simulated bytes from the calling actor's
 * host. Returns 0 once the transfer is over (the receiver owns the payload
 * then). If it fails (the receiver's host is off, a link on the way is
 * off), `lost(payload)` runs (may be NULL) and it returns -1; if the
 * calling actor is killed meanwhile, `lost(payload)` runs too. */
int sgw_send(sgw_box *to, void *payload, double bytes, void (*lost)(void *payload));

/* ---- network planes (docs/simulation.md, "Network planes") ----
 *
 * With more than one plane, each plane is its own SimGrid cluster whose
 * hosts stand for the nodes' NICs on that plane, and mailboxes are not
 * used: a message is a transfer between the two NIC hosts of the chosen
 * plane (Comm::sendto), then the payload is queued in the receiver's box
 * and the receiver woken. Routes are static in SimGrid, so this is how a
 * node reaches another over the plane of its choice. */
typedef struct sgw_net sgw_net;

/* Look up the NIC host of every node on every plane: name(ctx, plane,
 * node). Returns NULL with a reason if a host is missing. */
sgw_net *sgw_net_create(unsigned nplanes, size_t nnodes,
                        const char *(*name)(void *ctx, unsigned plane, size_t node), void *ctx,
                        char *err, size_t errlen);
void sgw_net_destroy(sgw_net *n);
/* Simulate the transfer of `bytes` from node `from` to node `to` over
 * `plane`, blocking the calling actor until it is over. Returns 0, or -1
 * if a link on the way is off or goes off meanwhile. If the calling actor
 * is killed meanwhile, `unwind(payload)` runs (may be NULL) before its
 * stack unwinds: the message it was sending must not leak. */
int sgw_sendto(sgw_net *n, unsigned plane, size_t from, size_t to, double bytes, void *payload,
               void (*unwind)(void *payload));
/* Turn off the links of node `node`'s NIC on `plane`: the first link of
 * its routes to the nodes `strides[k]` away on either side, and the last
 * link of theirs to it (stride 1 finds the single uplink of a crossbar,
 * fat tree or dragonfly node; a torus needs one stride per dimension).
 * node (size_t)-1: every node's NIC, which cuts the whole plane. Transfers
 * through these links fail. Returns how many links went off. */
size_t sgw_net_off(sgw_net *n, unsigned plane, size_t node, const size_t *strides, size_t nstrides);

/* Queued boxes: sgw_recv takes the payloads given by sgw_box_push, in
 * order, instead of the mailbox's. Set right after creation. */
void sgw_box_set_queued(sgw_box *b);
int sgw_box_is_queued(const sgw_box *b);
/* Queue `payload` in a queued box and wake its receiver (at once: no
 * transfer is simulated). */
void sgw_box_push(sgw_box *b, void *payload);
/* Hand every payload still queued to drop() (at the end of a run). */
void sgw_box_drain(sgw_box *b, void (*drop)(void *payload));

#ifdef __cplusplus
}
#endif

#endif /* PMIXSIM_SGW_H */
