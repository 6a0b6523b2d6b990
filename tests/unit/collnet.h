/*
 * collnet.h - a simulated network for the coll/ tests: n members, each
 * with its px_coll, in one thread, with a virtual clock.
 *
 * Every message a member sends becomes a delivery event at now + a random
 * delay in [dmin, dmax] (so deliveries come in a random order), and with
 * probability pdup a second copy at another random time. Timers are
 * events too; everything runs in order of virtual time (ties in order of
 * creation), from one seeded generator, so a run replays exactly.
 *
 * Failures: a member can be killed now, or made to die instead of making
 * its k-th data send (k = 0: before its first); a dead member's sends
 * vanish, deliveries to it are dropped, its timers never fire. Messages it
 * sent before dying are still delivered, as on a real network. With
 * `refuse_dead`, a send to a dead member is refused (PMIX_ERR_UNREACH)
 * like a TCP connection reset.
 */
#ifndef COLLNET_H
#define COLLNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "px_coll.h"

typedef struct collnet collnet;

typedef struct collnet_cfg {
    uint32_t n;
    uint64_t seed;
    double dmin, dmax;
    double pdup;
    /* Probability that a message is also delivered as a corrupted copy
     * (a few bits flipped, or cut short), in addition to the original. */
    double pcorrupt;
    bool refuse_dead;
    uint64_t id;
    const px_coll_groups *groups;
    /* Called for every message a live member hands to send (before the
     * network decides its fate), and when a member dies. May be NULL. */
    void (*on_send)(void *arg, uint32_t from, uint32_t to, const px_coll_msg_info *h, size_t len);
    void (*on_kill)(void *arg, collnet *w, uint32_t m);
    void *arg;
} collnet_cfg;

collnet *collnet_create(const collnet_cfg *cfg);
/* Destroys every px_coll (alive or dead) and frees every event. */
void collnet_destroy(collnet *w);

px_coll *collnet_coll(collnet *w, uint32_t m);
uint32_t collnet_n(const collnet *w);
double collnet_now(const collnet *w);
uint64_t collnet_rand(collnet *w);
double collnet_uniform(collnet *w, double a, double b);

/* Run events until none is left or `max_events` ran; returns how many ran. */
size_t collnet_run(collnet *w, size_t max_events);
/* Events still queued (deliveries, live timers, calls). */
size_t collnet_pending(const collnet *w);

/* Call fn(arg) at virtual time t (>= now). */
void collnet_call_at(collnet *w, double t, void (*fn)(void *arg), void *arg);
/* Deliver a copy of `msg` to `to` as if from `from`, at time t. */
void collnet_inject(collnet *w, double t, uint32_t to, uint32_t from, const void *msg, size_t len);

void collnet_kill(collnet *w, uint32_t m);
bool collnet_dead(const collnet *w, uint32_t m);
void collnet_die_at_send(collnet *w, uint32_t m, uint64_t k);
/* Member m's next k data sends fail with `status` (its host could not
 * send them: no memory, too big), and are not delivered. */
void collnet_fail_sends(collnet *w, uint32_t m, uint64_t k, pmix_status_t status);
/* Member m's next k ABORT notice sends fail the same way. */
void collnet_fail_notices(collnet *w, uint32_t m, uint64_t k, pmix_status_t status);
/* Timers of member m started and neither fired nor cancelled. */
size_t collnet_live_timers(const collnet *w, uint32_t m);
/* Data messages member m handed to send so far. */
uint64_t collnet_data_sent(const collnet *w, uint32_t m);

/*
 * Sessions: every member runs epochs 1..epochs back to back. Member m's
 * contribution to epoch e is a function of (seed, m, e): 0..maxlen bytes,
 * a fifth of them empty. The first starts come at random times in
 * [0, spread]; each next epoch starts after a random gap in [0, gap] after
 * the previous one completed, or inside its callback when gap is 0 (the
 * member races ahead of the others). Each completion is recorded, and an
 * allgather result is compared with the contributions in member order.
 */
typedef struct collsess collsess;

typedef struct collrec {
    collsess *sess;
    uint32_t m, epoch;
    px_coll_kind kind;
    bool started, done, result_ok;
    pmix_status_t start_rc, status;
    double t_start, t_done;
} collrec;

typedef struct collsess_cfg {
    uint32_t epochs;
    uint32_t maxlen;
    uint64_t seed;
    double spread, gap;
    /* If set, the gap before member m starts `epoch` (> 1), instead of a
     * random one in [0, gap]; 0 starts it inside the callback. */
    double (*gap_of)(void *arg, uint32_t m, uint32_t epoch);
    /* The args of member m for epoch e (all members must agree, except in
     * tests of disagreement). */
    void (*args)(void *arg, uint32_t m, uint32_t epoch, px_coll_args *out);
    void (*on_done)(void *arg, const collrec *rec); /* may be NULL */
    void *arg;
} collsess_cfg;

collsess *collsess_create(collnet *w, const collsess_cfg *cfg);
void collsess_go(collsess *s);
void collsess_destroy(collsess *s);
collrec *collsess_rec(collsess *s, uint32_t m, uint32_t epoch);
/* Member m's contribution to `epoch` (written to buf if not NULL). */
size_t collsess_contrib(const collsess *s, uint32_t m, uint32_t epoch, uint8_t *buf);

/* Group maps for hier tests: members in runs of 3 (0-2, 3-5, ...), round
 * robin over 5 groups (m mod 5), random labels among n/4 + 1, or one
 * group per member. NULL for COLLG_FLAT. */
enum {
    COLLG_FLAT,
    COLLG_RUNS3,
    COLLG_RR5,
    COLLG_RANDOM,
    COLLG_SINGLE
};
px_coll_groups *collnet_make_groups(int how, uint32_t n, uint64_t seed);

/* A cmocka teardown for the coll tests: under LeakSanitizer, nothing the
 * test allocated may be left (the check runs after each test, not only at
 * exit). Include <cmocka.h> before this header to use it. */
#ifdef cmocka_unit_test
#if defined(__SANITIZE_ADDRESS__)
#define COLLNET_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COLLNET_LSAN 1
#endif
#endif
#ifdef COLLNET_LSAN
#include <sanitizer/lsan_interface.h>
#endif

static inline int teardown_leaks(void **state)
{
    (void)state;
#ifdef COLLNET_LSAN
    assert_int_equal(__lsan_do_recoverable_leak_check(), 0);
#endif
    return 0;
}
#endif

#endif /* COLLNET_H */
