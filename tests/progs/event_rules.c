/*
 * event_rules - event handlers and notification (Standard, "Event
 * Notification"), including the PMIX_MODEL_DECLARED event raised by an Init
 * that declares a programming model (what Open MPI 4.1 relies on).
 *
 * Each handler records its name in a log and passes the event on with
 * PMIX_EVENT_NO_ACTION_TAKEN (or stops the chain with
 * PMIX_EVENT_ACTION_COMPLETE). A check notifies an event, waits until the
 * expected number of handlers ran (bounded), lingers briefly to catch extra
 * invocations, and compares the log with the expected order. Handlers run
 * on the library's progress thread, hence the lock around the log.
 *
 * Modes:
 *   order      categories: single-code handlers, then multi-code, then
 *              default, whatever the registration order; a code nobody
 *              registered reaches only the default handler; PMIX_EVENT_NON_DEFAULT
 *              keeps it from default handlers. Handlers see the registration
 *              id, status, source and info of the notification.
 *   prepend    PMIX_EVENT_HDLR_PREPEND / _APPEND order handlers within a category.
 *   names      PMIX_EVENT_HDLR_NAME with PMIX_EVENT_HDLR_BEFORE / _AFTER place a
 *              handler next to a named one; PMIX_EVENT_HDLR_FIRST_IN_CATEGORY /
 *              _LAST_IN_CATEGORY put one at either end of its category.
 *   firstlast  PMIX_EVENT_HDLR_FIRST / _LAST run first / last across
 *              categories, and a second "first" handler is refused: returned
 *              by the blocking form, reported through the callback (after
 *              the call returned PMIX_SUCCESS, no handler id) by the other.
 *   stop       a handler completing with PMIX_EVENT_ACTION_COMPLETE ends the chain.
 *   dereg      a deregistered handler is no longer called (blocking and
 *              callback forms); deregistering an unknown id is an error:
 *              returned by the blocking form; with a callback, the call
 *              returns PMIX_SUCCESS and the callback (once, after it
 *              returned) reports PMIX_ERR_NOT_FOUND, as OpenPMIx does.
 *   regcb      the registration callback fires once, after the call returned,
 *              with the id the handler is later called with.
 *   range      PMIX_RANGE_PROC_LOCAL stays in the process; PMIX_RANGE_NAMESPACE
 *              and PMIX_RANGE_GLOBAL reach the other processes of the job (on
 *              every node of pmixrun --nodes); PMIX_RANGE_CUSTOM reaches the
 *              processes PMIX_EVENT_CUSTOM_RANGE names (the last rank), and
 *              no other.
 *   server     (under tests/stdhost's launcher) rank 0 notifies STDHOST_PING with
 *              PMIX_RANGE_GLOBAL: the Standard host's notify_event upcall gets
 *              it and the host answers from its server process with
 *              STDHOST_PONG to the namespace, which every rank hears.
 *   abort      the last rank calls PMIx_Abort; every other process, on every
 *              node, gets PMIX_ERR_PROC_ABORTED from it, then
 *              PMIX_EVENT_JOB_END from the job with PMIX_JOB_TERM_STATUS
 *              PMIX_ERR_PROC_ABORTED, before the job is stopped (they ignore
 *              SIGTERM to report it; pmixrun exits with the abort's
 *              status, 7).
 *   retobj     a handler registered with PMIX_EVENT_RETURN_OBJECT finds that
 *              pointer in the info of every call (after the event's own
 *              info); one registered without it does not.
 *   model      handler for PMIX_MODEL_DECLARED registered after a first Init; a
 *              second Init with PMIX_PROGRAMMING_MODEL etc. raises the event
 *              locally, carrying the model; a handler registered after that
 *              still hears it (the hybrid use case: OpenMP starting after
 *              MPI); a third Init declaring "OpenMP" reaches both handlers,
 *              while the process's PMIX_PROGRAMMING_MODEL stays "MPI" (the
 *              first declaration is not overwritten); the inner Finalizes
 *              keep the library alive.
 */
#include "ptest.h"

#define CODE_X (PMIX_EXTERNAL_ERR_BASE - 11)
#define CODE_Y (PMIX_EXTERNAL_ERR_BASE - 12)
#define CODE_Z (PMIX_EXTERNAL_ERR_BASE - 13)

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char event_log[512];
static pt_waiter calls; /* signalled once per handler invocation */

/* What handlers saw, for the checks of mode "order". */
static struct {
    size_t ids[16];
    const char *names[16];
    int n;
    int bad_id, bad_source, text_seen;
    pmix_status_t last_status;
    bool model_seen;
    char model[64];
    pmix_status_t term_status; /* PMIX_JOB_TERM_STATUS of a job-end event */
    pmix_rank_t term_rank;     /* the source of PMIX_ERR_PROC_TERM_WO_SYNC */
    char term_ns[PMIX_MAX_NSLEN + 1];
} seen;

static void record(const char *name, size_t id, pmix_status_t status, const pmix_proc_t *source,
                   const pmix_info_t *info, size_t ninfo)
{
    pthread_mutex_lock(&log_lock);
    if (event_log[0] != '\0')
        strncat(event_log, ",", sizeof event_log - strlen(event_log) - 1);
    strncat(event_log, name, sizeof event_log - strlen(event_log) - 1);
    for (int i = 0; i < seen.n; i++)
        if (strcmp(seen.names[i], name) == 0 && seen.ids[i] != id)
            seen.bad_id++;
    /* Events we notify ourselves must name us as their source. */
    bool own_event = strcmp(name, "R") != 0 && strncmp(name, "Model", 5) != 0 &&
                     strcmp(name, "Ab") != 0 && strcmp(name, "End") != 0 &&
                     strcmp(name, "Term") != 0;
    if (strcmp(name, "Term") == 0 && source != NULL) {
        seen.term_rank = source->rank;
        snprintf(seen.term_ns, sizeof seen.term_ns, "%s", source->nspace);
    }
    if (own_event && (source == NULL || source->rank != pt.me.rank ||
                      strncmp(source->nspace, pt.me.nspace, PMIX_MAX_NSLEN) != 0))
        seen.bad_source++;
    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_EVENT_TEXT_MESSAGE) == 0 &&
            info[i].value.type == PMIX_STRING &&
            strcmp(info[i].value.data.string, "event_rules says hello") == 0)
            seen.text_seen++;
        if (strcmp(info[i].key, PMIX_JOB_TERM_STATUS) == 0 && info[i].value.type == PMIX_STATUS)
            seen.term_status = info[i].value.data.status;
        if (strcmp(info[i].key, PMIX_PROGRAMMING_MODEL) == 0 && info[i].value.type == PMIX_STRING) {
            seen.model_seen = true;
            snprintf(seen.model, sizeof seen.model, "%s", info[i].value.data.string);
        }
    }
    seen.last_status = status;
    pthread_mutex_unlock(&log_lock);
    pt_waiter_signal(&calls, status);
}

#define HANDLER(NAME, RESULT)                                                                      \
    static void h_##NAME(size_t id, pmix_status_t status, const pmix_proc_t *source,               \
                         pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults, \
                         pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)                 \
    {                                                                                              \
        (void)results;                                                                             \
        (void)nresults;                                                                            \
        record(#NAME, id, status, source, info, ninfo);                                            \
        if (cbfunc != NULL)                                                                        \
            cbfunc(RESULT, NULL, 0, NULL, NULL, cbdata);                                           \
    }

HANDLER(S, PMIX_EVENT_NO_ACTION_TAKEN) /* single code */
HANDLER(M, PMIX_EVENT_NO_ACTION_TAKEN) /* multi code */
HANDLER(D, PMIX_EVENT_NO_ACTION_TAKEN) /* default */
HANDLER(A, PMIX_EVENT_NO_ACTION_TAKEN)
HANDLER(B, PMIX_EVENT_NO_ACTION_TAKEN)
HANDLER(C, PMIX_EVENT_NO_ACTION_TAKEN)
HANDLER(E, PMIX_EVENT_NO_ACTION_TAKEN)
HANDLER(F, PMIX_EVENT_NO_ACTION_TAKEN) /* first */
HANDLER(L, PMIX_EVENT_NO_ACTION_TAKEN) /* last */
HANDLER(X, PMIX_EVENT_ACTION_COMPLETE) /* stops the chain */
HANDLER(R, PMIX_EVENT_NO_ACTION_TAKEN) /* remote events */
HANDLER(Model, PMIX_EVENT_NO_ACTION_TAKEN)
HANDLER(ModelLate, PMIX_EVENT_NO_ACTION_TAKEN) /* registered after a declaration */
HANDLER(Ab, PMIX_EVENT_NO_ACTION_TAKEN)        /* PMIX_ERR_PROC_ABORTED */
HANDLER(End, PMIX_EVENT_NO_ACTION_TAKEN)       /* PMIX_EVENT_JOB_END */
HANDLER(Term, PMIX_EVENT_NO_ACTION_TAKEN)      /* PMIX_ERR_PROC_TERM_WO_SYNC */

/* Blocking registration; remembers the id under `name`. Returns the id or
 * a negative status. */
static pmix_status_t reg(const char *name, pmix_notification_fn_t fn, pmix_status_t *codes,
                         size_t ncodes, pmix_info_t *info, size_t ninfo)
{
    pmix_status_t rc = PMIx_Register_event_handler(codes, ncodes, info, ninfo, fn, NULL, NULL);
    if (rc < 0) {
        pt_fail("PMIx_Register_event_handler(%s) failed: %s", name, pt_err(rc));
        return rc;
    }
    pthread_mutex_lock(&log_lock);
    if (seen.n < 16) {
        seen.names[seen.n] = name;
        seen.ids[seen.n] = (size_t)rc;
        seen.n++;
    }
    pthread_mutex_unlock(&log_lock);
    return rc;
}

static void reset_log(void)
{
    pthread_mutex_lock(&log_lock);
    event_log[0] = '\0';
    pthread_mutex_unlock(&log_lock);
    pthread_mutex_lock(&calls.lock);
    calls.count = 0;
    pthread_mutex_unlock(&calls.lock);
}

/* Notify `code` to ourselves and expect exactly the handlers in `expect`
 * ("S,M,D"; "" for none) in that order. */
static void expect_chain(const char *what, pmix_status_t code, pmix_info_t *info, size_t ninfo,
                         const char *expect)
{
    reset_log();
    int n = expect[0] == '\0' ? 0 : 1;
    for (const char *p = expect; *p; p++)
        n += *p == ',';
    pt_phase(what);
    pmix_status_t rc =
        PMIx_Notify_event(code, &pt.me, PMIX_RANGE_PROC_LOCAL, info, ninfo, NULL, NULL);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        pt_fail("%s: PMIx_Notify_event failed: %s", what, pt_err(rc));
        return;
    }
    if (n > 0 && !pt_waiter_wait_n(&calls, n, 5.0, false))
        pt_note("%s: only %d of %d handlers ran within 5 s", what, pt_waiter_count(&calls), n);
    pt_sleep(n > 0 ? 0.2 : 0.5); /* catch extra invocations */
    pthread_mutex_lock(&log_lock);
    if (strcmp(event_log, expect) != 0)
        pt_fail("%s: handlers ran as [%s], expected [%s]", what, event_log, expect);
    pthread_mutex_unlock(&log_lock);
}

static void mode_order(void)
{
    pmix_status_t x = CODE_X, xy[2] = {CODE_X, CODE_Y};
    /* Registered in the reverse of the invocation order on purpose. */
    reg("D", h_D, NULL, 0, NULL, 0);
    reg("M", h_M, xy, 2, NULL, 0);
    reg("S", h_S, &x, 1, NULL, 0);

    pmix_info_t text;
    pt_info_str(&text, PMIX_EVENT_TEXT_MESSAGE, "event_rules says hello");
    expect_chain("notify X", CODE_X, &text, 1, "S,M,D");
    if (seen.text_seen != 3)
        pt_fail("the notification's info reached %d of 3 handlers", seen.text_seen);
    pt_info_free(&text, 1);
    expect_chain("notify Y", CODE_Y, NULL, 0, "M,D");
    expect_chain("notify Z (no specific handler)", CODE_Z, NULL, 0, "D");

    pmix_info_t nd;
    pt_info_bool(&nd, PMIX_EVENT_NON_DEFAULT, true);
    expect_chain("notify X with PMIX_EVENT_NON_DEFAULT", CODE_X, &nd, 1, "S,M");
    expect_chain("notify Z with PMIX_EVENT_NON_DEFAULT", CODE_Z, &nd, 1, "");
    pt_info_free(&nd, 1);

    if (seen.bad_id != 0)
        pt_fail("%d handler invocations carried a registration id other than the one returned",
                seen.bad_id);
    if (seen.bad_source != 0)
        pt_fail("%d handler invocations carried a source other than the notifier", seen.bad_source);
}

static struct {
    int calls, with_obj, wrong_obj, text;
} retobj;

static void h_retobj(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    pthread_mutex_lock(&log_lock);
    retobj.calls++;
    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_EVENT_RETURN_OBJECT) == 0) {
            if (info[i].value.type == PMIX_POINTER && info[i].value.data.ptr == &retobj)
                retobj.with_obj++;
            else
                retobj.wrong_obj++;
        }
        if (strcmp(info[i].key, PMIX_EVENT_TEXT_MESSAGE) == 0)
            retobj.text++;
    }
    pthread_mutex_unlock(&log_lock);
    record("O", id, status, source, info, ninfo);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_NO_ACTION_TAKEN, NULL, 0, NULL, NULL, cbdata);
}

static void mode_retobj(void)
{
    pmix_status_t x = CODE_X;
    pmix_info_t obj, text;
    PMIx_Info_load(&obj, PMIX_EVENT_RETURN_OBJECT, &retobj, PMIX_POINTER);
    reg("O", h_retobj, &x, 1, &obj, 1);
    reg("D", h_D, NULL, 0, NULL, 0);
    pt_info_str(&text, PMIX_EVENT_TEXT_MESSAGE, "event_rules says hello");
    expect_chain("notify X", CODE_X, &text, 1, "O,D");
    expect_chain("notify X again", CODE_X, &text, 1, "O,D");
    pthread_mutex_lock(&log_lock);
    if (retobj.calls != 2 || retobj.with_obj != 2 || retobj.wrong_obj != 0 || retobj.text != 2)
        pt_fail("PMIX_EVENT_RETURN_OBJECT: %d calls, %d with the object, %d with another, %d "
                "with the event's own info; expected 2, 2, 0, 2",
                retobj.calls, retobj.with_obj, retobj.wrong_obj, retobj.text);
    /* The default handler (no object) saw the text but no object. */
    if (seen.text_seen != 4)
        pt_fail("the event's info reached %d of 4 handler calls", seen.text_seen);
    pthread_mutex_unlock(&log_lock);
    pt_info_free(&text, 1);
    PMIx_Info_destruct(&obj);
}

static void mode_prepend(void)
{
    pmix_status_t x = CODE_X;
    pmix_info_t pre, app;
    pt_info_bool(&pre, PMIX_EVENT_HDLR_PREPEND, true);
    pt_info_bool(&app, PMIX_EVENT_HDLR_APPEND, true);
    reg("A", h_A, &x, 1, NULL, 0);
    reg("B", h_B, &x, 1, &pre, 1);
    reg("C", h_C, &x, 1, &app, 1);
    reg("E", h_E, &x, 1, &pre, 1);
    expect_chain("notify X", CODE_X, NULL, 0, "E,B,A,C");
    pt_info_free(&pre, 1);
    pt_info_free(&app, 1);
}

static void mode_names(void)
{
    pmix_status_t x = CODE_X;
    pmix_info_t info[2];
    pt_info_str(&info[0], PMIX_EVENT_HDLR_NAME, "alpha");
    reg("A", h_A, &x, 1, info, 1);
    pt_info_free(info, 1);
    pt_info_str(&info[0], PMIX_EVENT_HDLR_NAME, "beta");
    reg("B", h_B, &x, 1, info, 1);
    pt_info_free(info, 1);
    pt_info_bool(&info[0], PMIX_EVENT_HDLR_LAST_IN_CATEGORY, true);
    reg("L", h_L, &x, 1, info, 1);
    pt_info_str(&info[0], PMIX_EVENT_HDLR_BEFORE, "beta");
    reg("C", h_C, &x, 1, info, 1);
    pt_info_free(info, 1);
    pt_info_str(&info[0], PMIX_EVENT_HDLR_AFTER, "alpha");
    reg("E", h_E, &x, 1, info, 1);
    pt_info_free(info, 1);
    pt_info_bool(&info[0], PMIX_EVENT_HDLR_FIRST_IN_CATEGORY, true);
    reg("F", h_F, &x, 1, info, 1);
    /* A default handler stays after the whole single-code category. */
    reg("D", h_D, NULL, 0, NULL, 0);
    expect_chain("notify X", CODE_X, NULL, 0, "F,A,E,C,B,L,D");
}

struct regcb_state {
    pt_waiter w;
    pthread_t caller;
    volatile bool in_call;
    volatile bool from_inside;
};

static void regcb(pmix_status_t status, size_t refid, void *cbdata)
{
    struct regcb_state *s = cbdata;
    if (s->in_call && pthread_equal(pthread_self(), s->caller))
        s->from_inside = true;
    s->w.ref = refid;
    pt_waiter_signal(&s->w, status);
}

static void mode_firstlast(void)
{
    pmix_status_t x = CODE_X;
    pmix_info_t first, last;
    pt_info_bool(&first, PMIX_EVENT_HDLR_FIRST, true);
    pt_info_bool(&last, PMIX_EVENT_HDLR_LAST, true);
    reg("L", h_L, &x, 1, &last, 1);
    reg("D", h_D, NULL, 0, NULL, 0);
    reg("S", h_S, &x, 1, NULL, 0);
    reg("F", h_F, NULL, 0, &first, 1);
    expect_chain("notify X", CODE_X, NULL, 0, "F,S,D,L");

    pmix_status_t rc = PMIx_Register_event_handler(&x, 1, &first, 1, h_A, NULL, NULL);
    if (rc >= 0)
        pt_fail(
            "a second PMIX_EVENT_HDLR_FIRST handler was accepted (id %d); only one may be first",
            rc);

    struct regcb_state s;
    pt_waiter_init(&s.w);
    s.caller = pthread_self();
    s.from_inside = false;
    s.in_call = true;
    rc = PMIx_Register_event_handler(&x, 1, &first, 1, h_A, regcb, &s);
    s.in_call = false;
    if (rc != PMIX_SUCCESS) {
        pt_fail("a refused registration with a callback returned %s, not PMIX_SUCCESS", pt_err(rc));
    } else if (!pt_waiter_wait(&s.w, 5.0)) {
        pt_fail("the callback of a refused registration was not called within 5 s");
    } else {
        if (s.w.status == PMIX_SUCCESS)
            pt_fail("the callback of a second PMIX_EVENT_HDLR_FIRST handler reported success");
        if (s.w.ref != SIZE_MAX)
            pt_fail("the callback of a refused registration gave handler id %zu", s.w.ref);
        if (s.from_inside)
            pt_fail("the callback of a refused registration ran before the call returned");
    }
    pt_info_free(&first, 1);
    pt_info_free(&last, 1);
}

static void mode_stop(void)
{
    pmix_status_t x = CODE_X;
    reg("D", h_D, NULL, 0, NULL, 0);
    reg("X", h_X, &x, 1, NULL, 0);
    expect_chain("notify X, first handler completes the action", CODE_X, NULL, 0, "X");
    expect_chain("notify Y, default handler", CODE_Y, NULL, 0, "D");
}

static void mode_dereg(void)
{
    pmix_status_t x = CODE_X;
    pmix_status_t id = reg("S", h_S, &x, 1, NULL, 0);
    if (id < 0)
        return;
    expect_chain("notify X while registered", CODE_X, NULL, 0, "S");
    pmix_status_t rc = PMIx_Deregister_event_handler((size_t)id, NULL, NULL);
    if (rc != PMIX_SUCCESS)
        pt_fail("blocking PMIx_Deregister_event_handler failed: %s", pt_err(rc));
    expect_chain("notify X after blocking deregistration", CODE_X, NULL, 0, "");

    pmix_status_t id2 = reg("A", h_A, &x, 1, NULL, 0);
    if (id2 < 0)
        return;
    expect_chain("notify X with the second handler", CODE_X, NULL, 0, "A");
    pt_waiter w;
    pt_waiter_init(&w);
    rc = PMIx_Deregister_event_handler((size_t)id2, pt_op_cb, &w);
    if (rc == PMIX_SUCCESS) {
        if (!pt_waiter_wait(&w, 5.0))
            pt_fail("deregistration callback not called within 5 s");
        else if (w.status != PMIX_SUCCESS)
            pt_fail("deregistration callback reported %s", pt_err(w.status));
    } else if (rc != PMIX_OPERATION_SUCCEEDED) {
        pt_fail("PMIx_Deregister_event_handler with a callback failed: %s", pt_err(rc));
    }
    expect_chain("notify X after deregistration with callback", CODE_X, NULL, 0, "");

    rc = PMIx_Deregister_event_handler(987654, NULL, NULL);
    if (rc == PMIX_SUCCESS)
        pt_fail("deregistering an unknown handler id succeeded");
    else if (rc != PMIX_ERR_NOT_FOUND)
        pt_fail("deregistering an unknown id returned %s, not PMIX_ERR_NOT_FOUND", pt_err(rc));

    /* With a callback: PMIX_SUCCESS, then the callback says not found. */
    pt_waiter_init(&w);
    rc = PMIx_Deregister_event_handler(987654, pt_op_cb, &w);
    if (rc != PMIX_SUCCESS) {
        pt_fail("deregistering an unknown id with a callback returned %s, not PMIX_SUCCESS",
                pt_err(rc));
    } else if (!pt_waiter_wait(&w, 5.0)) {
        pt_fail("the callback of deregistering an unknown id was not called within 5 s");
    } else {
        if (w.status != PMIX_ERR_NOT_FOUND)
            pt_fail("deregistering an unknown id reported %s, not PMIX_ERR_NOT_FOUND",
                    pt_err(w.status));
        pt_sleep(0.2);
        if (pt_waiter_count(&w) != 1)
            pt_fail("the callback of deregistering an unknown id was called %d times",
                    pt_waiter_count(&w));
    }
}

static void mode_regcb(void)
{
    pmix_status_t x = CODE_X;
    struct regcb_state s;
    pt_waiter_init(&s.w);
    s.caller = pthread_self();
    s.from_inside = false;
    s.in_call = true;
    pmix_status_t rc = PMIx_Register_event_handler(&x, 1, NULL, 0, h_S, regcb, &s);
    s.in_call = false;
    if (rc != PMIX_SUCCESS) {
        pt_fail("non-blocking PMIx_Register_event_handler returned %s", pt_err(rc));
        return;
    }
    if (!pt_waiter_wait(&s.w, 5.0)) {
        pt_fail("registration callback not called within 5 s");
        return;
    }
    if (s.w.status != PMIX_SUCCESS)
        pt_fail("registration callback reported %s", pt_err(s.w.status));
    if (s.from_inside)
        pt_fail("registration callback ran before PMIx_Register_event_handler returned");
    pt_sleep(0.2);
    if (pt_waiter_count(&s.w) != 1)
        pt_fail("registration callback called %d times", pt_waiter_count(&s.w));
    pthread_mutex_lock(&log_lock);
    seen.names[0] = "S";
    seen.ids[0] = s.w.ref;
    seen.n = 1;
    pthread_mutex_unlock(&log_lock);
    expect_chain("notify X", CODE_X, NULL, 0, "S");
    if (seen.bad_id != 0)
        pt_fail("the handler was called with an id other than the one the registration "
                "callback gave (%zu)",
                s.w.ref);
}

static void mode_range(void)
{
    pmix_status_t x = CODE_X, y = CODE_Y;
    reg("S", h_S, &x, 1, NULL, 0);
    reg("R", h_R, &y, 1, NULL, 0);
    pt_barrier("fence after registration");

    /* PROC_LOCAL: only the notifier. */
    reset_log();
    if (pt.me.rank == 0) {
        pmix_status_t rc =
            PMIx_Notify_event(CODE_X, &pt.me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            pt_fail("PMIx_Notify_event(PROC_LOCAL) failed: %s", pt_err(rc));
    }
    pt_sleep(1.0);
    pt_barrier("fence after the process-local event");
    int got = pt_waiter_count(&calls);
    if (pt.me.rank == 0 && got != 1)
        pt_fail("the notifier's handler ran %d times for its PROC_LOCAL event", got);
    if (pt.me.rank != 0 && got != 0)
        pt_fail("a PMIX_RANGE_PROC_LOCAL event of rank 0 reached rank %u", (unsigned)pt.me.rank);

    /* NAMESPACE: everybody else in the job. */
    reset_log();
    pt_barrier("fence before the namespace event");
    if (pt.me.rank == 0) {
        pmix_status_t rc =
            PMIx_Notify_event(CODE_Y, &pt.me, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            pt_fail("PMIx_Notify_event(NAMESPACE) failed: %s", pt_err(rc));
    } else {
        pt_phase("waiting for rank 0's namespace event");
        if (!pt_waiter_wait(&calls, 10.0))
            pt_fail("rank 0's PMIX_RANGE_NAMESPACE event did not arrive within 10 s");
        pthread_mutex_lock(&log_lock);
        if (strcmp(event_log, "R") != 0)
            pt_fail("handlers for rank 0's event ran as [%s], expected [R]", event_log);
        pthread_mutex_unlock(&log_lock);
    }
    pt_barrier("fence after the namespace event");

    /* GLOBAL: everybody else too. */
    reset_log();
    pt_barrier("fence before the global event");
    if (pt.me.rank == 0) {
        pmix_status_t rc =
            PMIx_Notify_event(CODE_Y, &pt.me, PMIX_RANGE_GLOBAL, NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            pt_fail("PMIx_Notify_event(GLOBAL) failed: %s", pt_err(rc));
    } else {
        pt_phase("waiting for rank 0's global event");
        if (!pt_waiter_wait(&calls, 10.0))
            pt_fail("rank 0's PMIX_RANGE_GLOBAL event did not arrive within 10 s");
    }
    pt_barrier("fence after the global event");

    /* CUSTOM: the last rank alone. */
    if (pt.size < 3)
        return;
    reset_log();
    pt_barrier("fence before the custom-range event");
    pmix_rank_t last = pt.size - 1;
    if (pt.me.rank == 0) {
        pmix_proc_t target;
        pmix_data_array_t da = {.type = PMIX_PROC, .size = 1, .array = &target};
        pmix_info_t ci;
        pt_proc(&target, pt.me.nspace, last);
        PMIx_Info_load(&ci, PMIX_EVENT_CUSTOM_RANGE, &da, PMIX_DATA_ARRAY);
        pmix_status_t rc = PMIx_Notify_event(CODE_Y, &pt.me, PMIX_RANGE_CUSTOM, &ci, 1, NULL, NULL);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            pt_fail("PMIx_Notify_event(CUSTOM) failed: %s", pt_err(rc));
        PMIx_Info_destruct(&ci); /* the info holds a copy of da */
    } else if (pt.me.rank == last) {
        pt_phase("waiting for rank 0's custom-range event");
        if (!pt_waiter_wait(&calls, 10.0))
            pt_fail("rank 0's PMIX_RANGE_CUSTOM event naming rank %u did not arrive within 10 s",
                    (unsigned)last);
    }
    pt_sleep(1.0);
    pt_barrier("fence after the custom-range event");
    if (pt.me.rank != 0 && pt.me.rank != last && pt_waiter_count(&calls) != 0)
        pt_fail("rank 0's PMIX_RANGE_CUSTOM event naming rank %u alone reached rank %u",
                (unsigned)last, (unsigned)pt.me.rank);
}

static void mode_server(void)
{
    pmix_status_t pong = PMIX_EXTERNAL_ERR_BASE - 22;
    reg("R", h_R, &pong, 1, NULL, 0);
    reset_log();
    pt_barrier("fence after registration");
    if (pt.me.rank == 0) {
        pmix_status_t rc = PMIx_Notify_event(PMIX_EXTERNAL_ERR_BASE - 21, &pt.me, PMIX_RANGE_GLOBAL,
                                             NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            pt_fail("PMIx_Notify_event(PING) failed: %s", pt_err(rc));
    }
    pt_phase("waiting for the server's PONG");
    if (!pt_waiter_wait(&calls, 10.0))
        pt_fail("the server's answer to rank 0's event did not arrive within 10 s");
    pt_barrier("fence after the server's event");
}

static void mode_abort(void)
{
    pmix_status_t code = PMIX_ERR_PROC_ABORTED, end = PMIX_EVENT_JOB_END;
    pmix_rank_t last = pt.size - 1;
    if (pt.me.rank != last)
        signal(SIGTERM, SIG_IGN); /* the job will be stopped: report first */
    reg("Ab", h_Ab, &code, 1, NULL, 0);
    reg("End", h_End, &end, 1, NULL, 0);
    if (pt.size < 2) {
        pt_note("needs at least 2 processes; nothing to check");
        return;
    }
    pt_barrier("fence after registration");
    if (pt.me.rank == last) {
        pt_phase("PMIx_Abort");
        PMIx_Abort(7, "event_rules: abort on purpose", NULL, 0);
        pt_fail("PMIx_Abort returned");
        exit(1);
    }
    pt_phase("waiting for PMIX_ERR_PROC_ABORTED and PMIX_EVENT_JOB_END");
    if (!pt_waiter_wait_n(&calls, 2, 10.0, false)) {
        pthread_mutex_lock(&log_lock);
        pt_fail("PMIX_ERR_PROC_ABORTED and PMIX_EVENT_JOB_END did not both arrive within 10 s "
                "of rank %u's PMIx_Abort: handlers ran as [%s]",
                (unsigned)last, event_log);
        pthread_mutex_unlock(&log_lock);
    } else {
        pthread_mutex_lock(&log_lock);
        if (strcmp(event_log, "Ab,End") != 0)
            pt_fail("handlers ran as [%s], expected [Ab,End]", event_log);
        if (seen.term_status != PMIX_ERR_PROC_ABORTED)
            pt_fail("PMIX_EVENT_JOB_END carried PMIX_JOB_TERM_STATUS %s, expected "
                    "PMIX_ERR_PROC_ABORTED",
                    pt_err(seen.term_status));
        pthread_mutex_unlock(&log_lock);
    }
    exit(pt_result());
}

static void mode_model(void)
{
    pt_start("event_rules", "model", NULL, 0);
    pmix_status_t code = PMIX_MODEL_DECLARED;
    reg("Model", h_Model, &code, 1, NULL, 0);
    reg("D", h_D, NULL, 0, NULL, 0);
    reset_log();

    pmix_info_t model[4];
    pt_info_str(&model[0], PMIX_PROGRAMMING_MODEL, "MPI");
    pt_info_str(&model[1], PMIX_MODEL_LIBRARY_NAME, "event_rules");
    pt_info_str(&model[2], PMIX_MODEL_LIBRARY_VERSION, "1.0");
    pt_info_str(&model[3], PMIX_THREADING_MODEL, "posix");
    pmix_proc_t p2;
    pt_phase("second PMIx_Init declaring a programming model");
    pmix_status_t rc = PMIx_Init(&p2, model, 4);
    pt_info_free(model, 4);
    if (rc != PMIX_SUCCESS) {
        pt_fail("PMIx_Init with programming-model attributes failed: %s", pt_err(rc));
        return;
    }
    pt_phase("waiting for PMIX_MODEL_DECLARED");
    if (!pt_waiter_wait(&calls, 5.0)) {
        pt_fail("no PMIX_MODEL_DECLARED event within 5 s of an Init declaring a model");
    } else {
        pt_sleep(0.2);
        pthread_mutex_lock(&log_lock);
        if (strncmp(event_log, "Model", 5) != 0)
            pt_fail("handlers ran as [%s]; the PMIX_MODEL_DECLARED handler should run first",
                    event_log);
        if (seen.last_status != PMIX_MODEL_DECLARED)
            pt_fail("the event's status is %s", pt_err(seen.last_status));
        if (!seen.model_seen)
            pt_fail("the PMIX_MODEL_DECLARED event does not carry PMIX_PROGRAMMING_MODEL");
        else if (strcmp(seen.model, "MPI") != 0)
            pt_fail("the event says the model is \"%s\", expected \"MPI\"", seen.model);
        pthread_mutex_unlock(&log_lock);
    }

    /* A handler registered now still learns the declaration. */
    reset_log();
    pthread_mutex_lock(&log_lock);
    seen.model_seen = false;
    pthread_mutex_unlock(&log_lock);
    pt_phase("a PMIX_MODEL_DECLARED handler registered after the declaration");
    reg("ModelLate", h_ModelLate, &code, 1, NULL, 0);
    if (!pt_waiter_wait(&calls, 5.0))
        pt_fail("a handler registered after the declaration did not hear it within 5 s");
    pt_sleep(0.3);
    pthread_mutex_lock(&log_lock);
    if (strcmp(event_log, "ModelLate") != 0)
        pt_fail("after the late registration handlers ran as [%s], expected [ModelLate]",
                event_log);
    else if (!seen.model_seen || strcmp(seen.model, "MPI") != 0)
        pt_fail("the late handler did not hear PMIX_PROGRAMMING_MODEL \"MPI\"");
    pthread_mutex_unlock(&log_lock);

    /* A second declaration: both handlers hear it; the first stays the
     * process's model. */
    reset_log();
    pmix_info_t omp;
    pt_info_str(&omp, PMIX_PROGRAMMING_MODEL, "OpenMP");
    pmix_proc_t p3;
    pt_phase("third PMIx_Init declaring OpenMP");
    rc = PMIx_Init(&p3, &omp, 1);
    pt_info_free(&omp, 1);
    if (rc != PMIX_SUCCESS) {
        pt_fail("PMIx_Init declaring OpenMP failed: %s", pt_err(rc));
    } else {
        if (!pt_waiter_wait_n(&calls, 2, 5.0, false))
            pt_fail("the OpenMP declaration reached %d handler(s) within 5 s, expected 2",
                    pt_waiter_count(&calls));
        pt_sleep(0.3);
        pthread_mutex_lock(&log_lock);
        if (strcmp(event_log, "Model,ModelLate") != 0)
            pt_fail("the OpenMP declaration ran handlers as [%s], expected [Model,ModelLate]",
                    event_log);
        else if (strcmp(seen.model, "OpenMP") != 0)
            pt_fail("the second declaration's event says \"%s\", expected \"OpenMP\"", seen.model);
        pthread_mutex_unlock(&log_lock);
        pmix_value_t *v = NULL;
        rc = PMIx_Get(&pt.me, PMIX_PROGRAMMING_MODEL, NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_STRING)
            pt_fail("PMIx_Get(PMIX_PROGRAMMING_MODEL) of myself: %s", pt_err(rc));
        else if (strcmp(v->data.string, "MPI") != 0)
            pt_fail("the second declaration replaced the model: \"%s\", expected \"MPI\"",
                    v->data.string);
        pt_value_free(v);
        if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
            pt_fail("third PMIx_Finalize failed: %s", pt_err(rc));
    }
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS)
        pt_fail("inner PMIx_Finalize failed: %s", pt_err(rc));
    if (PMIx_Initialized() != 1)
        pt_fail("PMIx_Initialized() is %d after the inner Finalize", PMIx_Initialized());
    pt_barrier("fence after the inner Finalize");
}

/* blockcb: a handler that makes blocking calls. A fence there can never
 * complete (the handler runs on the thread that would deliver its reply):
 * it must fail at once with PMIX_ERR_WOULD_BLOCK, not hang the process; a
 * Get of data the process holds still works. */
static pmix_status_t blockcb_fence_rc, blockcb_get_rc;

static void h_block(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;

    blockcb_fence_rc = PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Load_procid(&wild, pt.me.nspace, PMIX_RANK_WILDCARD);
    blockcb_get_rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v);
    if (v != NULL)
        PMIx_Value_free(v, 1);
    pt_waiter_signal(&calls, PMIX_SUCCESS);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void mode_blockcb(void)
{
    pmix_status_t x = CODE_X;
    pmix_status_t rc = PMIx_Register_event_handler(&x, 1, NULL, 0, h_block, NULL, NULL);
    if (rc < 0) {
        pt_fail("PMIx_Register_event_handler failed: %s", pt_err(rc));
        return;
    }
    rc = PMIx_Notify_event(CODE_X, &pt.me, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL);
    if (rc != PMIX_SUCCESS) {
        pt_fail("PMIx_Notify_event failed: %s", pt_err(rc));
        return;
    }
    if (!pt_waiter_wait_n(&calls, 1, 10.0, false)) {
        pt_fail("the handler did not finish within 10 s (a blocking call inside it hung)");
        return;
    }
    if (blockcb_fence_rc != PMIX_ERR_WOULD_BLOCK)
        pt_fail("PMIx_Fence inside a handler returned %s, expected PMIX_ERR_WOULD_BLOCK",
                pt_err(blockcb_fence_rc));
    if (blockcb_get_rc != PMIX_SUCCESS)
        pt_fail("PMIx_Get of job data inside a handler returned %s", pt_err(blockcb_get_rc));
}

/* spawnterm: a spawned rank that ends without PMIx_Finalize. Rank 0 of
 * the first job spawns two copies of this program (mode spawnterm-child);
 * under `pmixrun --nodes 2 -n 2` one child runs on each node. Child 1
 * exits without finalizing once both children registered; child 0, on the
 * other node, must hear PMIX_ERR_PROC_TERM_WO_SYNC from it, then
 * PMIX_EVENT_JOB_END of its own job, and every rank of the first job, on
 * both nodes, PMIX_EVENT_JOB_END of the first job (the job is ended
 * because of it), each with PMIX_JOB_TERM_STATUS
 * PMIX_ERR_PROC_TERM_WO_SYNC. */
static void mode_spawnterm(const char *self)
{
    pmix_status_t end = PMIX_EVENT_JOB_END;
    signal(SIGTERM, SIG_IGN); /* the job will be stopped: report first */
    reg("End", h_End, &end, 1, NULL, 0);
    pt_barrier("fence after registration");
    if (pt.me.rank == 0) {
        pmix_app_t app;
        pmix_nspace_t child;
        char *argv[] = {(char *)self, "spawnterm-child", NULL};
        memset(&app, 0, sizeof(app));
        app.cmd = (char *)self;
        app.argv = argv;
        app.maxprocs = 2;
        pt_phase("PMIx_Spawn");
        pmix_status_t rc = PMIx_Spawn(NULL, 0, &app, 1, child);
        if (rc != PMIX_SUCCESS)
            pt_fail("PMIx_Spawn failed: %s", pt_err(rc));
    }
    pt_phase("waiting for PMIX_EVENT_JOB_END");
    if (!pt_waiter_wait_n(&calls, 1, 20.0, false)) {
        pt_fail("PMIX_EVENT_JOB_END did not arrive within 20 s of the spawn");
    } else {
        pthread_mutex_lock(&log_lock);
        if (seen.term_status != PMIX_ERR_PROC_TERM_WO_SYNC)
            pt_fail("PMIX_EVENT_JOB_END carried PMIX_JOB_TERM_STATUS %s, expected "
                    "PMIX_ERR_PROC_TERM_WO_SYNC",
                    pt_err(seen.term_status));
        pthread_mutex_unlock(&log_lock);
    }
    exit(pt_result());
}

static void mode_spawnterm_child(void)
{
    pmix_status_t term = PMIX_ERR_PROC_TERM_WO_SYNC, end = PMIX_EVENT_JOB_END;
    signal(SIGTERM, SIG_IGN);
    reg("Term", h_Term, &term, 1, NULL, 0);
    reg("End", h_End, &end, 1, NULL, 0);
    pt_barrier("fence of the children after registration");
    if (pt.me.rank == 1) {
        fflush(stdout);
        _exit(0); /* without PMIx_Finalize, on purpose */
    }
    pt_phase("waiting for PMIX_ERR_PROC_TERM_WO_SYNC of child 1 and PMIX_EVENT_JOB_END");
    if (!pt_waiter_wait_n(&calls, 2, 20.0, false)) {
        pthread_mutex_lock(&log_lock);
        pt_fail("PMIX_ERR_PROC_TERM_WO_SYNC of child 1 and PMIX_EVENT_JOB_END did not both "
                "arrive within 20 s: handlers ran as [%s]",
                event_log);
        pthread_mutex_unlock(&log_lock);
    } else {
        pthread_mutex_lock(&log_lock);
        if (strcmp(event_log, "Term,End") != 0)
            pt_fail("handlers ran as [%s], expected [Term,End]", event_log);
        if (seen.term_status != PMIX_ERR_PROC_TERM_WO_SYNC)
            pt_fail("PMIX_EVENT_JOB_END carried PMIX_JOB_TERM_STATUS %s, expected "
                    "PMIX_ERR_PROC_TERM_WO_SYNC",
                    pt_err(seen.term_status));
        if (seen.term_rank != 1 || strcmp(seen.term_ns, pt.me.nspace) != 0)
            pt_fail("PMIX_ERR_PROC_TERM_WO_SYNC came from %s:%u, expected %s:1", seen.term_ns,
                    (unsigned)seen.term_rank, pt.me.nspace);
        pthread_mutex_unlock(&log_lock);
    }
    exit(pt_result());
}

int main(int argc, char **argv)
{
    const char *modes =
        "order prepend names firstlast stop dereg regcb range model blockcb retobj abort server "
        "spawnterm";
    if (argc < 2)
        pt_usage(argv[0], modes);
    pt_watchdog(45);
    pt_waiter_init(&calls);
    const char *m = argv[1];
    if (strcmp(m, "model") == 0) {
        mode_model();
        return pt_result();
    }
    pt_start("event_rules", m, NULL, 0);
    if (strcmp(m, "order") == 0)
        mode_order();
    else if (strcmp(m, "prepend") == 0)
        mode_prepend();
    else if (strcmp(m, "firstlast") == 0)
        mode_firstlast();
    else if (strcmp(m, "names") == 0)
        mode_names();
    else if (strcmp(m, "stop") == 0)
        mode_stop();
    else if (strcmp(m, "blockcb") == 0)
        mode_blockcb();
    else if (strcmp(m, "dereg") == 0)
        mode_dereg();
    else if (strcmp(m, "regcb") == 0)
        mode_regcb();
    else if (strcmp(m, "range") == 0)
        mode_range();
    else if (strcmp(m, "retobj") == 0)
        mode_retobj();
    else if (strcmp(m, "abort") == 0)
        mode_abort();
    else if (strcmp(m, "spawnterm") == 0)
        mode_spawnterm(argv[0]);
    else if (strcmp(m, "spawnterm-child") == 0)
        mode_spawnterm_child();
    else if (strcmp(m, "server") == 0)
        mode_server();
    else
        pt_usage(argv[0], modes);
    pt_barrier("final fence");
    return pt_result();
}
