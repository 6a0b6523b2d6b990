/*
 * ptest.h - the small harness shared by the rule-checking client programs.
 *
 * Every program in tests/progs/ is an ordinary PMIx client written against
 * the Standard's API only (<pmix.h>). It checks one area of PMIx behaviour,
 * selected by a mode argument, prints one line per violated rule
 * ("[rank R/N prog mode] FAIL: ...") and exits 0 only if every rule held.
 * The integration tests (tests/integration/) run them under pmixrun.
 *
 * What this header provides, all static so each program stays one file:
 *  - identity: pt.me (the proc PMIx_Init returned), pt.size (PMIX_JOB_SIZE),
 *    pt.wild (our namespace with PMIX_RANK_WILDCARD);
 *  - reporting: pt_fail()/pt_note() with the rank prefix, pt_result() that
 *    turns the failure count into the exit status;
 *  - a watchdog: pt_watchdog(seconds) arms SIGALRM, and pt_phase("...")
 *    names what the process is doing, so a hang is reported as "stuck in
 *    <phase>" with exit status 124 instead of a silent ctest timeout;
 *  - info/value helpers built on PMIx_Info_load and the Standard's release
 *    macro (with a fallback to PMIx_Value_destruct where a header lacks it);
 *  - a waiter (mutex + condition) for callbacks that arrive on the
 *    library's progress thread, with a bounded wait;
 *  - pt_now(): a monotonic clock in seconds, for the timing rules.
 */
#ifndef PTEST_H
#define PTEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strndup, mkdtemp, rand_r, setgroups */
#endif

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

struct pt_state {
    pmix_proc_t me;
    pmix_proc_t wild;
    uint32_t size;
    const char *prog;
    const char *mode;
    int failures;
    bool initialized; /* between a successful PMIx_Init and the last Finalize */
    bool have_id;     /* `me` is known: messages carry the rank */
};

static struct pt_state pt;
static const char *volatile pt_current_phase = "start";

static inline double pt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void pt_sleep(double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static inline void pt_vprint(const char *tag, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (pt.have_id)
        printf("[rank %u/%u %s %s] %s%s\n", (unsigned)pt.me.rank, (unsigned)pt.size, pt.prog,
               pt.mode, tag, msg);
    else
        printf("[%s %s] %s%s\n", pt.prog, pt.mode, tag, msg);
    fflush(stdout);
}

/* Report a violated rule; the program will exit non-zero. */
static inline void pt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void pt_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pt_vprint("FAIL: ", fmt, ap);
    va_end(ap);
    pt.failures++;
}

/* Informational line (what was observed), never a failure. */
static inline void pt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void pt_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pt_vprint("", fmt, ap);
    va_end(ap);
}

static inline void pt_phase(const char *what)
{
    pt_current_phase = what;
}

static inline void pt_append(char *buf, size_t cap, size_t *len, const char *s)
{
    while (*s != '\0' && *len + 1 < cap)
        buf[(*len)++] = *s++;
}

static inline void pt_alarm(int sig)
{
    (void)sig;
    /* Only async-signal-safe calls here: no stdio, no malloc. */
    char buf[512], num[16];
    size_t len = 0, k = 0;
    unsigned r = (unsigned)pt.me.rank;
    do {
        num[k++] = (char)('0' + r % 10);
        r /= 10;
    } while (r != 0 && k < sizeof num);
    char rank[16];
    for (size_t j = 0; j < k; j++)
        rank[j] = num[k - 1 - j];
    rank[k] = '\0';
    pt_append(buf, sizeof buf, &len, "[");
    if (pt.have_id) {
        pt_append(buf, sizeof buf, &len, "rank ");
        pt_append(buf, sizeof buf, &len, rank);
        pt_append(buf, sizeof buf, &len, " ");
    }
    pt_append(buf, sizeof buf, &len, pt.prog ? pt.prog : "?");
    pt_append(buf, sizeof buf, &len, " ");
    pt_append(buf, sizeof buf, &len, pt.mode ? pt.mode : "?");
    pt_append(buf, sizeof buf, &len, "] FAIL: watchdog: stuck in ");
    pt_append(buf, sizeof buf, &len, pt_current_phase);
    pt_append(buf, sizeof buf, &len, "\n");
    (void)!write(STDOUT_FILENO, buf, len);
    _exit(124);
}

/* Arm (or re-arm) the watchdog: the process exits 124 after `seconds`. */
static inline void pt_watchdog(unsigned seconds)
{
    signal(SIGALRM, pt_alarm);
    alarm(seconds);
}

static inline const char *pt_err(pmix_status_t rc)
{
    return PMIx_Error_string(rc);
}

/* ---- procs, infos, values ------------------------------------------------ */

static inline void pt_proc(pmix_proc_t *p, const char *nspace, pmix_rank_t rank)
{
    size_t n = strnlen(nspace, PMIX_MAX_NSLEN);
    memset(p, 0, sizeof *p);
    memcpy(p->nspace, nspace, n);
    p->rank = rank;
}

static inline void pt_info(pmix_info_t *i, const char *key, const void *data, pmix_data_type_t type)
{
    memset(i, 0, sizeof *i);
    (void)PMIx_Info_load(i, key, data, type);
}

static inline void pt_info_bool(pmix_info_t *i, const char *key, bool v)
{
    pt_info(i, key, &v, PMIX_BOOL);
}
static inline void pt_info_int(pmix_info_t *i, const char *key, int v)
{
    pt_info(i, key, &v, PMIX_INT);
}
static inline void pt_info_u32(pmix_info_t *i, const char *key, uint32_t v)
{
    pt_info(i, key, &v, PMIX_UINT32);
}
static inline void pt_info_str(pmix_info_t *i, const char *key, const char *v)
{
    pt_info(i, key, v, PMIX_STRING);
}

/* Release what pt_info() copied into an array of infos (strings). */
static inline void pt_info_free(pmix_info_t *i, size_t n)
{
    for (size_t k = 0; k < n; k++) {
#ifdef PMIX_INFO_DESTRUCT
        PMIX_INFO_DESTRUCT(&i[k]);
#else
        PMIx_Value_destruct(&i[k].value);
#endif
    }
}

static inline void pt_value_free(pmix_value_t *v)
{
    if (v == NULL)
        return;
#ifdef PMIX_VALUE_RELEASE
    PMIX_VALUE_RELEASE(v);
#else
    PMIx_Value_destruct(v);
    free(v);
#endif
}

static inline pmix_status_t pt_put_str(pmix_scope_t scope, const char *key, const char *s)
{
    pmix_value_t v;
    memset(&v, 0, sizeof v);
    v.type = PMIX_STRING;
    v.data.string = (char *)s;
    return PMIx_Put(scope, key, &v);
}

static inline pmix_status_t pt_put_u32(pmix_scope_t scope, const char *key, uint32_t x)
{
    pmix_value_t v;
    memset(&v, 0, sizeof v);
    v.type = PMIX_UINT32;
    v.data.uint32 = x;
    return PMIx_Put(scope, key, &v);
}

static inline const char *pt_type_name(pmix_data_type_t t)
{
    return PMIx_Data_type_string(t);
}

/* "rank 3", "wildcard", ... for messages; `buf` must hold 32 bytes. */
static inline const char *pt_rank_name(pmix_rank_t r, char *buf)
{
    if (r == PMIX_RANK_WILDCARD)
        return "wildcard";
    if (r == PMIX_RANK_UNDEF)
        return "undef";
    snprintf(buf, 32, "rank %u", (unsigned)r);
    return buf;
}

/* Get `key` of `proc` and check that the value has `type`. Returns the value
 * (caller frees with pt_value_free) or NULL after reporting a failure. */
static inline pmix_value_t *pt_get_typed(const pmix_proc_t *proc, const char *key,
                                         const pmix_info_t *info, size_t ninfo,
                                         pmix_data_type_t type)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(proc, key, info, ninfo, &v);
    if (rc != PMIX_SUCCESS) {
        char rb[32];
        pt_fail("PMIx_Get(%s of %s) failed: %s", key, pt_rank_name(proc->rank, rb), pt_err(rc));
        return NULL;
    }
    if (v == NULL) {
        pt_fail("PMIx_Get(%s) returned PMIX_SUCCESS and no value", key);
        return NULL;
    }
    if (v->type != type) {
        pt_fail("PMIx_Get(%s): type %s, expected %s", key, pt_type_name(v->type),
                pt_type_name(type));
        pt_value_free(v);
        return NULL;
    }
    return v;
}

/* ---- a waiter for callbacks ----------------------------------------------- */

typedef struct pt_waiter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int count;            /* times signalled */
    pmix_status_t status; /* last status given */
    size_t ref;           /* a returned reference (event handler id) */
} pt_waiter;

static inline void pt_waiter_init(pt_waiter *w)
{
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, NULL);
    w->count = 0;
    w->status = PMIX_ERR_NOT_FOUND;
    w->ref = 0;
}

static inline void pt_waiter_signal(pt_waiter *w, pmix_status_t status)
{
    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->count++;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/* Wait until the waiter was signalled at least `n` times in total, for at
 * most `seconds`. With `progress`, call PMIx_Progress while waiting (for a
 * library initialized with PMIX_EXTERNAL_PROGRESS). Returns true if reached. */
static inline bool pt_waiter_wait_n(pt_waiter *w, int n, double seconds, bool progress)
{
    double end = pt_now() + seconds;
    pthread_mutex_lock(&w->lock);
    while (w->count < n) {
        double left = end - pt_now();
        if (left <= 0)
            break;
        if (progress) {
            pthread_mutex_unlock(&w->lock);
            PMIx_Progress();
            pt_sleep(0.001);
            pthread_mutex_lock(&w->lock);
            continue;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double step = left < 0.05 ? left : 0.05;
        ts.tv_nsec += (long)(step * 1e9);
        while (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->cond, &w->lock, &ts);
    }
    bool ok = w->count >= n;
    pthread_mutex_unlock(&w->lock);
    return ok;
}

static inline bool pt_waiter_wait(pt_waiter *w, double seconds)
{
    return pt_waiter_wait_n(w, 1, seconds, false);
}

static inline int pt_waiter_count(pt_waiter *w)
{
    pthread_mutex_lock(&w->lock);
    int n = w->count;
    pthread_mutex_unlock(&w->lock);
    return n;
}

/* The op callback of the Standard (pmix_op_cbfunc_t) signalling a waiter. */
static inline void pt_op_cb(pmix_status_t status, void *cbdata)
{
    pt_waiter_signal((pt_waiter *)cbdata, status);
}

/* ---- start and end -------------------------------------------------------- */

/* PMIx_Init and read our identity and job size. Exits 2 on failure. */
static inline void pt_start(const char *prog, const char *mode, const pmix_info_t *info,
                            size_t ninfo)
{
    pt.prog = prog;
    pt.mode = mode;
    pt_phase("PMIx_Init");
    pmix_status_t rc = PMIx_Init(&pt.me, (pmix_info_t *)info, ninfo);
    if (rc != PMIX_SUCCESS) {
        pt_fail("PMIx_Init failed: %s", pt_err(rc));
        exit(2);
    }
    pt.initialized = true;
    pt.have_id = true;
    pt_proc(&pt.wild, pt.me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pt_phase("PMIx_Get(PMIX_JOB_SIZE)");
    rc = PMIx_Get(&pt.wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_UINT32) {
        pt.size = 0;
        pt_fail("PMIx_Get(PMIX_JOB_SIZE) failed: %s (type %s)", pt_err(rc),
                v ? pt_type_name(v->type) : "none");
        exit(2);
    }
    pt.size = v->data.uint32;
    pt_value_free(v);
    pt_phase("test body");
}

/* A plain fence over the whole namespace; reports a failure with `why`. */
static inline bool pt_barrier(const char *why)
{
    pt_phase(why);
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        pt_fail("PMIx_Fence (%s) failed: %s", why, pt_err(rc));
        return false;
    }
    return true;
}

/* Finalize (if initialized) and turn the failure count into the exit status. */
static inline int pt_result(void)
{
    if (pt.initialized) {
        pt_phase("PMIx_Finalize");
        pmix_status_t rc = PMIx_Finalize(NULL, 0);
        if (rc != PMIX_SUCCESS)
            pt_fail("PMIx_Finalize failed: %s", pt_err(rc));
    }
    if (pt.failures == 0)
        pt_note("PASS");
    else
        pt_note("%d failure(s)", pt.failures);
    return pt.failures == 0 ? 0 : 1;
}

static inline void pt_usage(const char *prog, const char *modes)
{
    fprintf(stderr, "usage: %s MODE\n  modes: %s\n", prog, modes);
    exit(2);
}

#endif /* PTEST_H */
