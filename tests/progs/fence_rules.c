/*
 * fence_rules - PMIx_Fence and PMIx_Fence_nb (Standard, "Synchronization").
 *
 * Several modes check that a fence really is a barrier: after aligning, rank
 * r enters the fence r*0.15 s late and notes when it entered and left; the
 * entry times are then exchanged, and no process may have left the fence
 * before the last participant entered it. CLOCK_MONOTONIC is one clock for
 * all processes of a machine, which is where pmixrun runs them.
 *
 * Modes:
 *   null       procs = NULL: the whole namespace.
 *   shuffled   an explicit list of every rank, in a different order on each
 *              process (the order has no significance).
 *   wildcard   one proc with PMIX_RANK_WILDCARD.
 *   subsets    even ranks fence among themselves while odd ranks, which
 *              arrive 2.5 s later, fence among themselves: the even fence
 *              completes without waiting for the odd ranks.
 *   many       100 fences back to back, then 20 rounds of put / commit /
 *              collecting fence / get, each value tagged with its round, so a
 *              fence matched with the wrong round is detected.
 *   self       a fence of the caller alone completes at once (Fence_nb may
 *              return PMIX_OPERATION_SUCCEEDED) while the others are busy.
 *   collect    PMIX_COLLECT_DATA makes every peer's committed data local: a
 *              PMIX_OPTIONAL Get (local cache only) finds it, intact.
 *   nocollect  the default fence moves no data, yet a Get still works (direct
 *              modex); whether the data was already local is reported.
 *   gen        PMIX_COLLECT_GENERATED_JOB_INFO is accepted, with and without
 *              PMIX_COLLECT_DATA.
 *   timeout    the last rank joins 6 s late: PMIX_TIMEOUT=2 ends the others'
 *              fence with PMIX_ERR_TIMEOUT after about 2 s; the late rank's
 *              fence is that same fence and fails at once with the same
 *              status (it never pairs with the others' next one); afterwards
 *              a fence of the survivors and a fresh fence of everybody both
 *              work.
 *   nb         Fence_nb calls its callback exactly once, with its cbdata, not
 *              from inside the call; with and without PMIX_COLLECT_DATA.
 *   pending    every rank but the last starts a Fence_nb with PMIX_TIMEOUT=30
 *              that the last never joins, and all finalize at once: the
 *              pending request (and its timer) goes with the library,
 *              whose callback must not run after PMIx_Finalize returned;
 *              nobody waits 30 s.
 *   badproc    (robustness: "a fence never hangs") a fence naming a rank that
 *              does not exist in our namespace fails within 5 s without any
 *              PMIX_TIMEOUT; one naming an unknown namespace, with
 *              PMIX_TIMEOUT=3, fails within 5 s; the job still fences after.
 *   page       (the fence page of a one-node job, px_page.h) one fence of the
 *              whole namespace taken in four forms at once, rotating over
 *              the ranks each round: a plain PMIx_Fence, PMIx_Fence_nb, a
 *              collecting PMIx_Fence and the wildcard with
 *              PMIX_COLLECT_DATA=false; every form completes every round,
 *              staggered rounds are still barriers, and plain barriers
 *              afterwards still work; a collecting participant finds
 *              every peer's value of the round locally. Then 100 rounds
 *              of put, commit, plain barrier and a refreshed Get of a
 *              peer's value: the Get must see that round's value, although
 *              nothing but the page orders the peer's commit before it.
 *   bigcommit  (the fence page with frames still to write) rank 0 commits
 *              8 MiB, fences, then makes no PMIx call for 3 s; every other
 *              rank's Get of that value after the fence must come within
 *              1.5 s (the commit is on its way only while someone drives
 *              rank 0's connection: its fence must). Then every rank
 *              commits 4 MiB and a collecting fence moves it all within
 *              3 s, each value intact.
 *   departed   (a fence never hangs) the last rank finalizes and exits after
 *              an aligning fence; the others' next fence of everybody,
 *              without PMIX_TIMEOUT, fails within 5 s with
 *              PMIX_ERR_LOST_CONNECTION (the participant finalized and is
 *              gone), and so does a second one, at once; a fence of the
 *              survivors still works.
 *   departed0  the same with rank 0 as the one that leaves (the rank the
 *              host core's trees are rooted at by default, and on the first
 *              node of pmixrun --nodes).
 *   disagree   (several nodes: pmixrun --nodes) the processes disagree on a
 *              fence's own algorithm (pmixlab.barrier.algo,
 *              pmixlab.fence.algo): the node of the last rank names one that
 *              does not exist or cannot serve, the others a good one or
 *              none. Every process gets PMIX_ERR_BAD_PARAM from that fence,
 *              within 10 s and without PMIX_TIMEOUT, and the next fences of
 *              the same set work everywhere, each collected value from its
 *              own round. Every rank of that node passes the bad name, since
 *              the server hands the host the keys of a node's first
 *              participant to join.
 */
#include "ptest.h"

static pmix_status_t fence_list(const pmix_proc_t *procs, size_t n, const pmix_info_t *info,
                                size_t ninfo)
{
    return PMIx_Fence(procs, n, info, ninfo);
}

/* Exchange the moments each participant entered a fence and check that we
 * did not leave it before any of them entered. `members` lists the ranks
 * that took part (NULL = everyone). */
static void check_barrier(const char *what, double entered, double left, const pmix_rank_t *members,
                          size_t nmembers)
{
    pmix_value_t v;
    memset(&v, 0, sizeof v);
    v.type = PMIX_UINT64;
    v.data.uint64 = (uint64_t)(entered * 1e6);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "fr.entered", &v);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        pt_fail("put/commit of the entry time failed: %s", pt_err(rc));
        return;
    }
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, true);
    pt_phase("collecting fence for the barrier check");
    rc = PMIx_Fence(NULL, 0, &c, 1);
    if (rc != PMIX_SUCCESS) {
        pt_fail("collecting fence for the barrier check failed: %s", pt_err(rc));
        return;
    }
    size_t n = members ? nmembers : pt.size;
    double last = 0;
    pmix_rank_t last_rank = 0;
    for (size_t i = 0; i < n; i++) {
        pmix_proc_t p;
        pt_proc(&p, pt.me.nspace, members ? members[i] : (pmix_rank_t)i);
        pmix_value_t *pv = pt_get_typed(&p, "fr.entered", NULL, 0, PMIX_UINT64);
        if (pv == NULL)
            continue;
        double t = (double)pv->data.uint64 / 1e6;
        if (t > last) {
            last = t;
            last_rank = p.rank;
        }
        pt_value_free(pv);
    }
    if (left + 0.002 < last)
        pt_fail("%s: left the fence %.3f s before rank %u entered it: not a barrier", what,
                last - left, (unsigned)last_rank);
}

/* Align, then enter `fence` r*0.15 s late; check the barrier property. */
static void staggered(const char *what, pmix_status_t (*fence)(void *), void *arg)
{
    pt_barrier("aligning fence");
    pt_sleep(0.15 * pt.me.rank);
    pt_phase(what);
    double t0 = pt_now();
    pmix_status_t rc = fence(arg);
    double t1 = pt_now();
    if (rc != PMIX_SUCCESS) {
        pt_fail("%s failed: %s", what, pt_err(rc));
        return;
    }
    check_barrier(what, t0, t1, NULL, 0);
}

static pmix_status_t fence_null(void *arg)
{
    (void)arg;
    return PMIx_Fence(NULL, 0, NULL, 0);
}

static pmix_status_t fence_procs(void *arg)
{
    pmix_proc_t *procs = arg;
    return fence_list(procs, procs == NULL ? 0 : pt.size, NULL, 0);
}

static pmix_status_t fence_wild(void *arg)
{
    (void)arg;
    return PMIx_Fence(&pt.wild, 1, NULL, 0);
}

static void mode_shuffled(void)
{
    pmix_proc_t *procs = calloc(pt.size, sizeof *procs);
    for (uint32_t i = 0; i < pt.size; i++)
        pt_proc(&procs[i], pt.me.nspace, i);
    /* A different permutation on every process (Fisher-Yates, seeded by rank). */
    unsigned seed = 12345u + 7919u * pt.me.rank;
    for (uint32_t i = pt.size - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(rand_r(&seed) % (i + 1));
        pmix_proc_t t = procs[i];
        procs[i] = procs[j];
        procs[j] = t;
    }
    char order[256] = "";
    for (uint32_t i = 0; i < pt.size && strlen(order) < 200; i++)
        snprintf(order + strlen(order), sizeof order - strlen(order), "%s%u", i ? "," : "",
                 (unsigned)procs[i].rank);
    pt_note("fence over ranks in order %s", order);
    staggered("PMIx_Fence(shuffled explicit list)", fence_procs, procs);
    free(procs);
}

static void mode_subsets(void)
{
    /* My subset: ranks with my parity. */
    uint32_t parity = pt.me.rank % 2;
    pmix_proc_t procs[1024];
    pmix_rank_t ranks[1024];
    size_t n = 0;
    for (uint32_t r = parity; r < pt.size && n < 1024; r += 2) {
        pt_proc(&procs[n], pt.me.nspace, r);
        ranks[n++] = r;
    }
    pt_barrier("aligning fence");
    if (parity == 1)
        pt_sleep(2.5); /* the odd ranks come late */
    pt_phase(parity ? "odd-rank subset fence" : "even-rank subset fence");
    double t0 = pt_now();
    pmix_status_t rc = fence_list(procs, n, NULL, 0);
    double t1 = pt_now();
    if (rc != PMIX_SUCCESS)
        pt_fail("fence of the %s ranks failed: %s", parity ? "odd" : "even", pt_err(rc));
    if (parity == 0 && t1 - t0 > 2.0)
        pt_fail("the even-rank fence took %.2f s: it waited for the odd ranks", t1 - t0);

    /* Barrier property within the subset. */
    check_barrier(parity ? "odd-rank subset fence" : "even-rank subset fence", t0, t1, ranks, n);
}

static void mode_many(void)
{
    pt_phase("100 back-to-back fences");
    double t0 = pt_now();
    for (int i = 0; i < 100; i++) {
        pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
        if (rc != PMIX_SUCCESS) {
            pt_fail("fence %d of 100 failed: %s", i, pt_err(rc));
            return;
        }
    }
    pt_note("100 fences in %.3f s", pt_now() - t0);

    pmix_proc_t peer;
    pt_proc(&peer, pt.me.nspace, (pt.me.rank + 1) % pt.size);
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, true);
    unsigned seed = 99u + pt.me.rank;
    for (uint32_t round = 0; round < 20; round++) {
        pmix_status_t rc = pt_put_u32(PMIX_GLOBAL, "fr.round", round * 1000 + pt.me.rank);
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) {
            pt_fail("round %u: put/commit failed: %s", round, pt_err(rc));
            return;
        }
        pt_sleep((rand_r(&seed) % 5) * 0.002); /* vary the arrival order */
        pt_phase("collecting fence round");
        rc = PMIx_Fence(NULL, 0, &c, 1);
        if (rc != PMIX_SUCCESS) {
            pt_fail("round %u: collecting fence failed: %s", round, pt_err(rc));
            return;
        }
        pmix_value_t *v = pt_get_typed(&peer, "fr.round", NULL, 0, PMIX_UINT32);
        if (v != NULL && v->data.uint32 != round * 1000 + peer.rank)
            pt_fail("round %u: rank %u's value is %u, expected %u: fences of different rounds "
                    "were matched",
                    round, (unsigned)peer.rank, v->data.uint32, round * 1000 + peer.rank);
        pt_value_free(v);
        /* Nobody may re-put before everyone read this round. */
        pt_phase("plain fence round");
        if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
            pt_fail("round %u: plain fence failed: %s", round, pt_err(rc));
            return;
        }
    }
}

static void mode_self(void)
{
    /* Everybody but rank 0 is busy elsewhere for a while. */
    pt_barrier("aligning fence");
    if (pt.me.rank != 0) {
        pt_sleep(2.5);
    } else {
        pt_waiter w;
        pt_waiter_init(&w);
        pt_phase("PMIx_Fence_nb of self");
        double t0 = pt_now();
        pmix_status_t rc = PMIx_Fence_nb(&pt.me, 1, NULL, 0, pt_op_cb, &w);
        if (rc == PMIX_OPERATION_SUCCEEDED) {
            pt_note("Fence_nb of self returned PMIX_OPERATION_SUCCEEDED");
            pt_sleep(0.2);
            if (pt_waiter_count(&w) != 0)
                pt_fail("Fence_nb returned PMIX_OPERATION_SUCCEEDED and also called its callback");
        } else if (rc == PMIX_SUCCESS) {
            if (!pt_waiter_wait(&w, 2.0))
                pt_fail("Fence_nb of self did not complete within 2 s while others were busy");
            else if (w.status != PMIX_SUCCESS)
                pt_fail("Fence_nb of self completed with %s", pt_err(w.status));
        } else {
            pt_fail("Fence_nb of self failed: %s", pt_err(rc));
        }
        pt_phase("PMIx_Fence of self");
        double t1 = pt_now();
        rc = PMIx_Fence(&pt.me, 1, NULL, 0);
        if (rc != PMIX_SUCCESS)
            pt_fail("PMIx_Fence of self failed: %s", pt_err(rc));
        else if (pt_now() - t1 > 2.0)
            pt_fail("PMIx_Fence of self took %.2f s", pt_now() - t1);
        pt_note("self fences done in %.3f s", pt_now() - t0);
    }
    /* Every other rank does its own self fence too, with collection. */
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, true);
    pmix_status_t rc = PMIx_Fence(&pt.me, 1, &c, 1);
    if (rc != PMIX_SUCCESS)
        pt_fail("collecting PMIx_Fence of self failed: %s", pt_err(rc));
    pt_barrier("fence after the self fences");
}

/* A card of `len` bytes whose content depends on the writer's rank. */
static void fill_card(char *b, size_t len, pmix_rank_t r)
{
    for (size_t i = 0; i < len; i++)
        b[i] = (char)((r * 131u + i * 7u + 3u) & 0xff);
}

static bool card_ok(const pmix_value_t *v, size_t len, pmix_rank_t r)
{
    if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != len)
        return false;
    char *want = malloc(len);
    fill_card(want, len, r);
    bool ok = memcmp(want, v->data.bo.bytes, len) == 0;
    free(want);
    return ok;
}

static void put_card(size_t len)
{
    pmix_value_t v;
    memset(&v, 0, sizeof v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = malloc(len);
    v.data.bo.size = len;
    fill_card(v.data.bo.bytes, len, pt.me.rank);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "fr.card", &v);
    free(v.data.bo.bytes);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        pt_fail("put/commit of the card failed: %s", pt_err(rc));
}

/* Read every peer's card; `local_only` adds PMIX_OPTIONAL. Returns the
 * number found. */
static uint32_t read_cards(size_t len, bool local_only, bool must_find)
{
    pmix_info_t q[2];
    size_t nq = 0;
    if (local_only)
        pt_info_bool(&q[nq++], PMIX_OPTIONAL, true);
    else
        pt_info_int(&q[nq++], PMIX_TIMEOUT, 10);
    uint32_t found = 0;
    for (uint32_t r = 0; r < pt.size; r++) {
        if (r == pt.me.rank)
            continue;
        pmix_proc_t p;
        pt_proc(&p, pt.me.nspace, r);
        pmix_value_t *v = NULL;
        pmix_status_t rc = PMIx_Get(&p, "fr.card", q, nq, &v);
        if (rc == PMIX_SUCCESS) {
            found++;
            if (!card_ok(v, len, r))
                pt_fail("rank %u's card arrived damaged (type %s)", (unsigned)r,
                        pt_type_name(v->type));
        } else if (must_find) {
            pt_fail("rank %u's card: PMIx_Get%s failed: %s", (unsigned)r,
                    local_only ? "(PMIX_OPTIONAL)" : "", pt_err(rc));
        }
        pt_value_free(v);
    }
    pt_info_free(q, nq);
    return found;
}

static void mode_collect(void)
{
    const size_t len = 1000;
    put_card(len);
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, true);
    pt_phase("PMIx_Fence(PMIX_COLLECT_DATA)");
    pmix_status_t rc = PMIx_Fence(NULL, 0, &c, 1);
    if (rc != PMIX_SUCCESS) {
        pt_fail("PMIx_Fence(PMIX_COLLECT_DATA) failed: %s", pt_err(rc));
        return;
    }
    read_cards(len, true, true);
    pt_barrier("fence after reading");
}

static void mode_nocollect(void)
{
    const size_t len = 1000;
    put_card(len);
    pt_phase("PMIx_Fence (default: no data)");
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        pt_fail("PMIx_Fence failed: %s", pt_err(rc));
        return;
    }
    uint32_t local = read_cards(len, true, false);
    pt_note("after a non-collecting fence %u of %u peer cards were already local", local,
            pt.size - 1);
    read_cards(len, false, true);
    pt_barrier("fence after reading");
}

static void mode_gen(void)
{
    pmix_info_t q[2];
    pt_info_bool(&q[0], PMIX_COLLECT_GENERATED_JOB_INFO, true);
    pmix_status_t rc = PMIx_Fence(NULL, 0, q, 1);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Fence(PMIX_COLLECT_GENERATED_JOB_INFO=true) failed: %s", pt_err(rc));
    pt_info_free(q, 1);

    const size_t len = 64;
    put_card(len);
    pt_info_bool(&q[0], PMIX_COLLECT_DATA, true);
    pt_info_bool(&q[1], PMIX_COLLECT_GENERATED_JOB_INFO, false);
    rc = PMIx_Fence(NULL, 0, q, 2);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Fence(COLLECT_DATA, COLLECT_GENERATED_JOB_INFO=false) failed: %s",
                pt_err(rc));
    else
        read_cards(len, true, true);
    pt_info_free(q, 2);
    /* Job data is still there. */
    pmix_value_t *v = pt_get_typed(&pt.wild, PMIX_JOB_SIZE, NULL, 0, PMIX_UINT32);
    pt_value_free(v);
    pt_barrier("final fence");
}

static void mode_timeout(void)
{
    if (pt.size < 2) {
        pt_note("needs at least 2 processes; nothing to check");
        return;
    }
    pmix_rank_t absent = pt.size - 1;
    pt_barrier("aligning fence");
    if (pt.me.rank == absent) {
        pt_phase("absent rank sleeping");
        pt_sleep(6.0);
        /* Late, not absent: its fence is the one the others gave up on,
         * so it fails at once with that fence's status instead of pairing
         * with their next fence (fences never mix across rounds). */
        pt_phase("the late rank's fence (the timed-out one)");
        double t0 = pt_now();
        pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
        if (rc != PMIX_ERR_TIMEOUT)
            pt_fail("the late rank's fence returned %s, expected the timed-out fence's "
                    "PMIX_ERR_TIMEOUT",
                    pt_err(rc));
        else if (pt_now() - t0 > 1.0)
            pt_fail("the late rank's fence took %.2f s to fail", pt_now() - t0);
    } else {
        pmix_info_t to;
        pt_info_int(&to, PMIX_TIMEOUT, 2);
        pt_phase("PMIx_Fence(PMIX_TIMEOUT=2) without the last rank");
        double t0 = pt_now();
        pmix_status_t rc = PMIx_Fence(NULL, 0, &to, 1);
        double dt = pt_now() - t0;
        if (rc == PMIX_SUCCESS)
            pt_fail("fence completed although rank %u never joined", (unsigned)absent);
        else if (rc != PMIX_ERR_TIMEOUT)
            pt_fail("fence with PMIX_TIMEOUT=2 returned %s, expected PMIX_ERR_TIMEOUT", pt_err(rc));
        if (dt < 1.5 || dt > 6.0)
            pt_fail("fence with PMIX_TIMEOUT=2 returned after %.2f s", dt);
        else
            pt_note("fence timed out after %.2f s: %s", dt, pt_err(rc));

        /* The survivors can still fence among themselves. */
        pmix_proc_t procs[1024];
        size_t n = 0;
        for (uint32_t r = 0; r < absent && n < 1024; r++)
            pt_proc(&procs[n++], pt.me.nspace, r);
        pt_phase("fence of the survivors after the timeout");
        rc = PMIx_Fence(procs, n, NULL, 0);
        if (rc != PMIX_SUCCESS)
            pt_fail("fence of ranks 0..%u after the timeout failed: %s", (unsigned)absent - 1,
                    pt_err(rc));
    }
    /* A fresh fence of everybody: the timed-out one must not linger. */
    pt_phase("fresh fence of everybody after the timeout");
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS)
        pt_fail("fresh fence of everybody after the timed-out one failed: %s", pt_err(rc));
    pt_note("fresh fence done in %.2f s", pt_now() - t0);
    pt_barrier("second fresh fence");
}

static void mode_departed(bool first)
{
    if (pt.size < 2) {
        pt_note("needs at least 2 processes; nothing to check");
        return;
    }
    pmix_rank_t gone = first ? 0 : pt.size - 1;
    pt_barrier("aligning fence");
    if (pt.me.rank == gone)
        exit(pt_result()); /* finalize and go */
    for (int round = 0; round < 2; round++) {
        pt_phase(round == 0 ? "fence of everybody after the last rank left"
                            : "a second fence of everybody");
        double t0 = pt_now();
        pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
        double dt = pt_now() - t0;
        if (rc != PMIX_ERR_LOST_CONNECTION)
            pt_fail("fence with a participant that finalized and exited returned %s, expected "
                    "PMIX_ERR_LOST_CONNECTION",
                    pt_err(rc));
        else if (dt > 5.0)
            pt_fail("fence with a departed participant took %.2f s to fail", dt);
        else
            pt_note("fence failed after %.3f s: %s", dt, pt_err(rc));
    }
    pmix_proc_t procs[1024];
    size_t n = 0;
    for (uint32_t r = 0; r < pt.size && n < 1024; r++)
        if (r != gone)
            pt_proc(&procs[n++], pt.me.nspace, r);
    pt_phase("fence of the survivors");
    pmix_status_t rc = PMIx_Fence(procs, n, NULL, 0);
    if (rc != PMIX_SUCCESS)
        pt_fail("fence of every rank but %u failed: %s", (unsigned)gone, pt_err(rc));
}

struct nb_state {
    pt_waiter w;
    pthread_t caller;
    volatile bool in_call;
    volatile bool from_inside;
    int magic;
};

static void nb_cb(pmix_status_t status, void *cbdata)
{
    struct nb_state *s = cbdata;
    if (s->magic != 0x5eed)
        pt_fail("Fence_nb callback got the wrong cbdata");
    if (s->in_call && pthread_equal(pthread_self(), s->caller))
        s->from_inside = true;
    pt_waiter_signal(&s->w, status);
}

static void one_nb(const char *what, const pmix_info_t *info, size_t ninfo)
{
    struct nb_state s = {.magic = 0x5eed};
    pt_waiter_init(&s.w);
    s.caller = pthread_self();
    pt_phase(what);
    s.in_call = true;
    pmix_status_t rc = PMIx_Fence_nb(NULL, 0, info, ninfo, nb_cb, &s);
    s.in_call = false;
    if (rc == PMIX_OPERATION_SUCCEEDED && pt.size == 1)
        return;
    if (rc != PMIX_SUCCESS) {
        pt_fail("%s returned %s", what, pt_err(rc));
        return;
    }
    if (!pt_waiter_wait(&s.w, 20.0)) {
        pt_fail("%s: callback not called within 20 s", what);
        return;
    }
    if (s.w.status != PMIX_SUCCESS)
        pt_fail("%s completed with %s", what, pt_err(s.w.status));
    if (s.from_inside)
        pt_fail("%s called its callback before returning", what);
    pt_sleep(0.3);
    if (pt_waiter_count(&s.w) != 1)
        pt_fail("%s: callback called %d times", what, pt_waiter_count(&s.w));
}

static void mode_nb(void)
{
    one_nb("PMIx_Fence_nb", NULL, 0);
    put_card(100);
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, true);
    one_nb("PMIx_Fence_nb(PMIX_COLLECT_DATA)", &c, 1);
    read_cards(100, true, true);
    pt_barrier("final fence");
}

static int pending_calls;

static void pending_cb(pmix_status_t status, void *cbdata)
{
    __atomic_add_fetch(&pending_calls, 1, __ATOMIC_SEQ_CST);
}

static void mode_pending(void)
{
    if (pt.me.rank + 1 < pt.size) {
        pmix_info_t to;
        pt_info_int(&to, PMIX_TIMEOUT, 30);
        pt_phase("PMIx_Fence_nb that the last rank never joins");
        pmix_status_t rc = PMIx_Fence_nb(NULL, 0, &to, 1, pending_cb, NULL);
        if (rc != PMIX_SUCCESS)
            pt_fail("PMIx_Fence_nb returned %s", pt_err(rc));
    }
    double t0 = pt_now();
    int rc = pt_result(); /* PMIx_Finalize with the fence pending */
    int calls = __atomic_load_n(&pending_calls, __ATOMIC_SEQ_CST);
    pt_sleep(0.2);
    if (__atomic_load_n(&pending_calls, __ATOMIC_SEQ_CST) != calls) {
        printf("rank %u: FAIL: a callback ran after PMIx_Finalize returned\n", pt.me.rank);
        rc = 1;
    }
    if (pt_now() - t0 > 10.0) {
        printf("rank %u: FAIL: PMIx_Finalize with a fence pending took %.1f s\n", pt.me.rank,
               pt_now() - t0);
        rc = 1;
    }
    exit(rc);
}

static void mode_badproc(void)
{
    pmix_proc_t procs[2];
    pt_proc(&procs[0], pt.me.nspace, pt.me.rank);
    pt_proc(&procs[1], pt.me.nspace, pt.size + 3);
    pt_phase("fence with a rank outside the job");
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Fence(procs, 2, NULL, 0);
    double dt = pt_now() - t0;
    if (rc == PMIX_SUCCESS)
        pt_fail("a fence with rank %u (job of %u) succeeded", pt.size + 3, pt.size);
    else if (dt > 5.0)
        pt_fail("a fence with a rank outside the job took %.2f s to fail", dt);
    else
        pt_note("fence with a rank outside the job: %s after %.2f s", pt_err(rc), dt);

    pt_proc(&procs[1], "no-such-namespace", 0);
    pmix_info_t to;
    pt_info_int(&to, PMIX_TIMEOUT, 3);
    pt_phase("fence with an unknown namespace");
    t0 = pt_now();
    rc = PMIx_Fence(procs, 2, &to, 1);
    dt = pt_now() - t0;
    if (rc == PMIX_SUCCESS)
        pt_fail("a fence with a process of an unknown namespace succeeded");
    else if (dt > 5.0)
        pt_fail("a fence with an unknown namespace and PMIX_TIMEOUT=3 took %.2f s to fail", dt);
    else
        pt_note("fence with an unknown namespace: %s after %.2f s", pt_err(rc), dt);
    pt_barrier("fence of everybody after the impossible ones");
}

/* The node of rank `r` (PMIX_NODEID), or UINT32_MAX after a failure. */
static uint32_t node_of(pmix_rank_t r)
{
    pmix_proc_t p;
    pt_proc(&p, pt.me.nspace, r);
    pmix_value_t *v = pt_get_typed(&p, PMIX_NODEID, NULL, 0, PMIX_UINT32);
    uint32_t node = v != NULL ? v->data.uint32 : UINT32_MAX;
    pt_value_free(v);
    return node;
}

/* A fence over everybody with `info` that must fail with
 * PMIX_ERR_BAD_PARAM, promptly. */
static void disagreeing_fence(const char *what, const pmix_info_t *info, size_t ninfo)
{
    pt_phase(what);
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Fence(NULL, 0, info, ninfo);
    double dt = pt_now() - t0;
    if (rc != PMIX_ERR_BAD_PARAM)
        pt_fail("%s returned %s, expected PMIX_ERR_BAD_PARAM on every process", what, pt_err(rc));
    else if (dt > 10.0)
        pt_fail("%s took %.2f s to fail", what, dt);
    else
        pt_note("%s: %s after %.3f s", what, pt_err(rc), dt);
}

/* Put a value tagged with `round`, fence collecting data, and check the
 * next rank's value is from the same round. */
static void collect_round(uint32_t round)
{
    pmix_proc_t peer;
    pt_proc(&peer, pt.me.nspace, (pt.me.rank + 1) % pt.size);
    pmix_status_t rc = pt_put_u32(PMIX_GLOBAL, "fr.disagree", round * 1000 + pt.me.rank);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        pt_fail("round %u: put/commit failed: %s", round, pt_err(rc));
        return;
    }
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, true);
    pt_phase("collecting fence after a disagreement");
    rc = PMIx_Fence(NULL, 0, &c, 1);
    if (rc != PMIX_SUCCESS) {
        pt_fail("round %u: the collecting fence after a disagreement failed: %s", round,
                pt_err(rc));
        return;
    }
    pmix_info_t opt;
    pt_info_bool(&opt, PMIX_OPTIONAL, true); /* it must be local: collected */
    pmix_value_t *v = pt_get_typed(&peer, "fr.disagree", &opt, 1, PMIX_UINT32);
    if (v != NULL && v->data.uint32 != round * 1000 + peer.rank)
        pt_fail("round %u: rank %u's value is %u, expected %u: fences of different rounds were "
                "matched",
                round, (unsigned)peer.rank, v->data.uint32, round * 1000 + peer.rank);
    pt_value_free(v);
}

static void mode_disagree(void)
{
    uint32_t bad_node = node_of(pt.size - 1), my_node = node_of(pt.me.rank);
    if (bad_node == UINT32_MAX || my_node == UINT32_MAX)
        return;
    if (node_of(0) == bad_node) {
        pt_note("every rank is on one node: the algorithm keys are never used; nothing to check");
        return;
    }
    bool bad = my_node == bad_node;
    pmix_info_t info[2];

    pt_barrier("aligning fence");
    /* A barrier: an unknown name there, a known one elsewhere. */
    pt_info_str(&info[0], "pmixlab.barrier.algo", bad ? "no-such-algo" : "tree");
    disagreeing_fence(bad ? "barrier with an unknown algorithm" : "barrier with algorithm tree",
                      info, 1);
    pt_info_free(info, 1);
    pt_barrier("plain fence after the disagreeing barrier");
    collect_round(1);

    /* A collecting fence: an algorithm that only does barriers there, no
     * key (the environment's choice, or auto) elsewhere. */
    pt_info_bool(&info[0], PMIX_COLLECT_DATA, true);
    pt_info_str(&info[1], "pmixlab.fence.algo", "dissemination");
    disagreeing_fence(bad ? "collecting fence with algorithm dissemination (barrier only)"
                          : "collecting fence with the default algorithm",
                      info, bad ? 2 : 1);
    pt_info_free(info, 2);
    collect_round(2);
    pt_barrier("final fence");
}

/* One fence of the whole namespace in the form `form` (0..3, see "page"). */
static pmix_status_t page_form(int form)
{
    pmix_info_t c;
    pmix_proc_t wild;
    pmix_status_t rc;
    pt_waiter w;

    switch (form) {
    case 0: return PMIx_Fence(NULL, 0, NULL, 0);
    case 1:
        pt_waiter_init(&w);
        rc = PMIx_Fence_nb(NULL, 0, NULL, 0, pt_op_cb, &w);
        if (rc != PMIX_SUCCESS)
            return rc;
        if (!pt_waiter_wait(&w, 20.0))
            return PMIX_ERR_TIMEOUT;
        return w.status;
    case 2:
        pt_info_bool(&c, PMIX_COLLECT_DATA, true);
        rc = PMIx_Fence(NULL, 0, &c, 1);
        pt_info_free(&c, 1);
        return rc;
    default:
        pt_proc(&wild, pt.me.nspace, PMIX_RANK_WILDCARD);
        pt_info_bool(&c, PMIX_COLLECT_DATA, false);
        rc = PMIx_Fence(&wild, 1, &c, 1);
        pt_info_free(&c, 1);
        return rc;
    }
}

static const char *const page_forms[] = {"plain PMIx_Fence", "PMIx_Fence_nb",
                                         "collecting PMIx_Fence", "wildcard, collect=false"};

static void mode_page(void)
{
    pmix_status_t rc;

    for (int k = 0; k < 24; k++) {
        int form = (int)((pt.me.rank + (unsigned)k) % 4);
        bool stagger = k % 8 == 7;
        if (stagger) {
            pt_barrier("aligning fence");
            pt_sleep(0.05 * pt.me.rank);
        }
        rc = pt_put_u32(PMIX_GLOBAL, "fr.page", (uint32_t)k * 1000 + pt.me.rank);
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Commit();
        pt_phase(page_forms[form]);
        double t0 = pt_now();
        if (rc == PMIX_SUCCESS)
            rc = page_form(form);
        double t1 = pt_now();
        if (rc != PMIX_SUCCESS) {
            pt_fail("round %d: %s failed: %s", k, page_forms[form], pt_err(rc));
            return;
        }
        /* a collecting participant has every peer's value of this round */
        for (uint32_t r = 0; form == 2 && r < pt.size; r++) {
            pmix_proc_t p;
            pmix_info_t opt;
            pt_proc(&p, pt.me.nspace, r);
            pt_info_bool(&opt, PMIX_OPTIONAL, true);
            pmix_value_t *v = pt_get_typed(&p, "fr.page", &opt, 1, PMIX_UINT32);
            if (v != NULL && v->data.uint32 != (uint32_t)k * 1000 + r)
                pt_fail("round %d: rank %u's collected value is %u, expected %u", k, (unsigned)r,
                        v->data.uint32, (unsigned)k * 1000 + r);
            pt_value_free(v);
            pt_info_free(&opt, 1);
        }
        if (stagger)
            check_barrier(page_forms[form], t0, t1, NULL, 0);
    }
    staggered("plain PMIx_Fence after the mixed rounds", fence_null, NULL);

    pmix_proc_t peer;
    pmix_info_t refresh;
    pt_proc(&peer, pt.me.nspace, (pt.me.rank + 1) % pt.size);
    pt_info_bool(&refresh, PMIX_GET_REFRESH_CACHE, true);
    pt_phase("put, commit, plain barrier, refreshed Get");
    for (uint32_t round = 1; round <= 100; round++) {
        rc = pt_put_u32(PMIX_GLOBAL, "fr.round", round);
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Commit();
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Fence(NULL, 0, NULL, 0);
        if (rc != PMIX_SUCCESS) {
            pt_fail("round %u: put/commit/fence failed: %s", round, pt_err(rc));
            break;
        }
        pmix_value_t *v = pt_get_typed(&peer, "fr.round", &refresh, 1, PMIX_UINT32);
        if (v != NULL && v->data.uint32 != round)
            pt_fail("round %u: rank %u's value is from round %u: its commit came after the Get",
                    round, (unsigned)peer.rank, v->data.uint32);
        pt_value_free(v);
        /* nobody posts the next value while a peer may still read this one */
        rc = PMIx_Fence(NULL, 0, NULL, 0);
        if (rc != PMIX_SUCCESS) {
            pt_fail("round %u: second fence failed: %s", round, pt_err(rc));
            break;
        }
    }
    pt_info_free(&refresh, 1);
    pt_barrier("final fence");
}

static pmix_status_t put_big(const char *key, size_t len, unsigned char fillc)
{
    pmix_value_t v;
    unsigned char *p = malloc(len);
    pmix_status_t rc;

    if (p == NULL)
        return PMIX_ERR_NOMEM;
    memset(p, fillc, len);
    memset(&v, 0, sizeof v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)p;
    v.data.bo.size = len;
    rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    free(p);
    return rc == PMIX_SUCCESS ? PMIx_Commit() : rc;
}

static bool big_ok(const pmix_value_t *v, size_t len, unsigned char fillc)
{
    if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != len)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)v->data.bo.bytes[i] != fillc)
            return false;
    return true;
}

static void mode_bigcommit(void)
{
    const size_t big = (size_t)8 << 20, each = (size_t)4 << 20;
    pmix_status_t rc;
    pmix_proc_t zero;

    pt_proc(&zero, pt.me.nspace, 0);
    pt_barrier("aligning fence");
    if (pt.me.rank == 0 && (rc = put_big("fr.big", big, 0x5a)) != PMIX_SUCCESS)
        pt_fail("put/commit of 8 MiB failed: %s", pt_err(rc));
    pt_phase("fence after an 8 MiB commit");
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        pt_fail("fence after the 8 MiB commit failed: %s", pt_err(rc));
    if (pt.me.rank == 0) {
        pt_sleep(3.0); /* no PMIx call: nothing here drives the connection */
    } else {
        pt_phase("Get of rank 0's 8 MiB value");
        double t0 = pt_now();
        pmix_value_t *v = pt_get_typed(&zero, "fr.big", NULL, 0, PMIX_BYTE_OBJECT);
        double dt = pt_now() - t0;
        if (v != NULL && !big_ok(v, big, 0x5a))
            pt_fail("rank 0's 8 MiB value is not what it committed");
        if (dt > 1.5)
            pt_fail("the Get of rank 0's value took %.2f s: its commit waited for rank 0's "
                    "next PMIx call",
                    dt);
        pt_value_free(v);
    }
    pt_barrier("after the Get");

    rc = put_big("fr.each", each, (unsigned char)(0x10 + pt.me.rank));
    if (rc != PMIX_SUCCESS)
        pt_fail("put/commit of 4 MiB failed: %s", pt_err(rc));
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, true);
    pt_phase("collecting fence of 4 MiB per process");
    double t0 = pt_now();
    rc = PMIx_Fence(NULL, 0, &c, 1);
    double dt = pt_now() - t0;
    pt_info_free(&c, 1);
    if (rc != PMIX_SUCCESS)
        pt_fail("collecting fence of 4 MiB per process failed: %s", pt_err(rc));
    else if (dt > 3.0)
        pt_fail("collecting fence of 4 MiB per process took %.2f s", dt);
    for (uint32_t r = 0; rc == PMIX_SUCCESS && r < pt.size; r++) {
        pmix_proc_t p;
        pmix_info_t opt;
        pt_proc(&p, pt.me.nspace, r);
        pt_info_bool(&opt, PMIX_OPTIONAL, true);
        pmix_value_t *v = pt_get_typed(&p, "fr.each", &opt, 1, PMIX_BYTE_OBJECT);
        if (v != NULL && !big_ok(v, each, (unsigned char)(0x10 + r)))
            pt_fail("rank %u's collected 4 MiB value is not what it committed", (unsigned)r);
        pt_value_free(v);
        pt_info_free(&opt, 1);
    }
    pt_barrier("final fence");
}

int main(int argc, char **argv)
{
    const char *modes = "null shuffled wildcard subsets many self collect nocollect gen timeout nb "
                        "pending badproc page bigcommit disagree departed departed0";
    if (argc < 2)
        pt_usage(argv[0], modes);
    pt_watchdog(50);
    pt_start("fence_rules", argv[1], NULL, 0);
    const char *m = argv[1];
    if (strcmp(m, "null") == 0)
        staggered("PMIx_Fence(NULL procs)", fence_null, NULL);
    else if (strcmp(m, "shuffled") == 0)
        mode_shuffled();
    else if (strcmp(m, "wildcard") == 0)
        staggered("PMIx_Fence(wildcard proc)", fence_wild, NULL);
    else if (strcmp(m, "subsets") == 0)
        mode_subsets();
    else if (strcmp(m, "many") == 0)
        mode_many();
    else if (strcmp(m, "self") == 0)
        mode_self();
    else if (strcmp(m, "collect") == 0)
        mode_collect();
    else if (strcmp(m, "nocollect") == 0)
        mode_nocollect();
    else if (strcmp(m, "gen") == 0)
        mode_gen();
    else if (strcmp(m, "timeout") == 0)
        mode_timeout();
    else if (strcmp(m, "nb") == 0)
        mode_nb();
    else if (strcmp(m, "pending") == 0)
        mode_pending();
    else if (strcmp(m, "badproc") == 0)
        mode_badproc();
    else if (strcmp(m, "page") == 0)
        mode_page();
    else if (strcmp(m, "bigcommit") == 0)
        mode_bigcommit();
    else if (strcmp(m, "disagree") == 0)
        mode_disagree();
    else if (strcmp(m, "departed") == 0)
        mode_departed(false);
    else if (strcmp(m, "departed0") == 0)
        mode_departed(true);
    else
        pt_usage(argv[0], modes);
    return pt_result();
}
