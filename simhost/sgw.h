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
 * the last non-daemon actor ends. */
void sgw_actor(const char *name, const char *host, void (*fn)(void *arg), void *arg, int daemon);
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
 * host. Returns once the transfer is over (the receiver owns the payload
 * then). If it fails (the receiver is gone), `lost(payload)` runs (may be
 * NULL). */
void sgw_send(sgw_box *to, void *payload, double bytes, void (*lost)(void *payload));

#ifdef __cplusplus
}
#endif

#endif /* PMIXSIM_SGW_H */
