/*
 * pmixrun_rndz.c - pmixrun started by a debugger: the Standard's indirect
 * launch (Chap_API_Tools, "Indirect launch"; docs/user-guide.md,
 * "Indirect launch: a debugger starts pmixrun").
 *
 * A debugger (the initiator) that initialized as a tool with a server
 * side (PMIX_LAUNCHER) starts pmixrun with PMIX_LAUNCHER_RNDZ_URI in its
 * environment naming the debugger's URI, and, when it started pmixrun
 * with PMIx_Spawn, PMIX_NAMESPACE and PMIX_RANK naming the job it made
 * for it. Then, before its job is registered or started, pmixrun
 *
 *   1. takes those three out of its environment (its ranks must not see
 *      them) and connects to the debugger as a tool (a client engine on
 *      its own loop), asking for that name; the debugger's library lets
 *      only the process it started have it;
 *   2. raises PMIX_LAUNCHER_READY to the debugger (range custom: the
 *      debugger) and waits, within RNDZ_WAIT_S, for PMIX_DEBUGGER_RELEASE
 *      (the Standard's "stop in PMIx_tool_init" of the launcher, which
 *      OpenPMIx's server library does unconditionally);
 *   3. reads the debugger's directives for the job, PMIX_LAUNCH_DIRECTIVES
 *      in its job's data: PMIX_DEBUG_STOP_IN_INIT (a bool, or a rank: any
 *      rank stops them all) works as --stop-in-init; PMIX_DEBUG_STOP_ON_EXEC
 *      is refused (pmixrun ends with a message, as for an option it does
 *      not know); the rest (PMIX_FWD_STDOUT, PMIX_NOTIFY_JOB_EVENTS...) are
 *      taken as they are: the output goes to pmixrun's stdout and stderr,
 *      which are the debugger's.
 *
 * The job then starts as usual. Once every rank of the first job is
 * waiting in PMIx_Init (each raised PMIX_READY_FOR_DEBUG) or, without
 * stop in init, once they are started, pmixrun raises PMIX_LAUNCH_COMPLETE
 * with PMIX_NSPACE (the job's namespace) to the debugger. From then on a
 * PMIX_DEBUGGER_RELEASE the debugger sends reaches pmixrun (its library
 * relays an event for processes it does not serve to its launchers) and
 * pmixrun raises it in its job with the same source and custom range
 * (PMIX_EVENT_CUSTOM_RANGE; without one, every process of the job): on
 * its own server or, over daemons, on every node. When the job is over
 * (also one that ended before PMIX_LAUNCH_COMPLETE: a rank failed to
 * start) pmixrun raises PMIX_EVENT_JOB_END (PMIX_NSPACE, PMIX_EXIT_CODE:
 * pmixrun's exit status) to the debugger, finalizes its connection and
 * exits. If the debugger goes
 * first, the job is stopped.
 *
 * Everything runs on pmixrun's one thread: the client engine shares the
 * loop (j->plat) with pmixrun's own server, and its event handlers only
 * record what they saw (or raise events, under the loop's lock).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/px_client.h"
#include "pmixrun.h"
#include "tcplink.h"

#define RNDZ_WAIT_S 60.0    /* for the debugger's release */
#define RNDZ_CONNECT_S 10.0 /* for its answer to our handshake */

struct rndz {
    px_client *c;
    pmix_proc_t me, initiator;
    bool connected, done, lost, released, complete, ended;
    pmix_status_t status;
    unsigned char *ready; /* per first-job rank: it waits in PMIx_Init */
    int nready;
};

static void op_cb(pmix_status_t status, void *cbdata)
{
    rndz *r = cbdata;
    r->status = status;
    r->done = true;
}

/* Run the loop until *flag, the job ends, or the deadline. */
static bool turn_until(job *j, rndz *r, const bool *flag, double secs)
{
    double until = now_s() + secs;
    while (!*flag && !r->lost && j->reason == END_NONE && now_s() < until)
        px_posix_run_once(j->plat, 0.1);
    return *flag;
}

static bool names_me(const pmix_info_t info[], size_t ninfo, const pmix_proc_t *me, bool *has)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (strncmp(info[i].key, PMIX_EVENT_CUSTOM_RANGE, PMIX_MAX_KEYLEN) != 0)
            continue;
        const pmix_value_t *v = &info[i].value;
        const pmix_proc_t *p = v->type == PMIX_PROC ? v->data.proc : NULL;
        size_t n = p != NULL ? 1 : 0;
        if (v->type == PMIX_DATA_ARRAY && v->data.darray != NULL &&
            v->data.darray->type == PMIX_PROC) {
            p = v->data.darray->array;
            n = v->data.darray->size;
        }
        *has = true;
        for (size_t k = 0; k < n; k++)
            if (PMIx_Check_nspace(p[k].nspace, me->nspace) &&
                (p[k].rank == me->rank || p[k].rank == PMIX_RANK_WILDCARD))
                return true;
        return false;
    }
    *has = false;
    return false;
}

/* Raise `status` from the debugger to the job: pmixrun's clients, and
 * over daemons every node's. */
static void to_job(job *j, pmix_status_t status, const pmix_proc_t *source, bool custom,
                   const pmix_info_t info[], size_t ninfo)
{
    pmix_data_range_t range = custom ? PMIX_RANGE_CUSTOM : PMIX_RANGE_GLOBAL;
    pmix_info_t *fwd = ninfo > 0 ? PMIx_Info_create(ninfo) : NULL;
    size_t n = 0;
    if (ninfo > 0 && fwd == NULL)
        return;
    /* what this handler was given locally (its return object) stays here */
    for (size_t i = 0; i < ninfo; i++)
        if (info[i].value.type != PMIX_POINTER &&
            strncmp(info[i].key, PMIX_EVENT_RETURN_OBJECT, PMIX_MAX_KEYLEN) != 0)
            PMIx_Info_xfer(&fwd[n++], &info[i]);
    if (j->server_up)
        px_server_notify(j->srv, status, source, range, fwd, n);
    if (j->nodes != NULL)
        nodes_notify(j, status, source, range, fwd, n);
    PMIx_Info_free(fwd, ninfo);
}

/* The debugger's events: on the loop, under its lock. */
static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                     size_t ninfo, pmix_info_t results[], size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    const pmix_info_t *o = NULL;
    (void)id;
    (void)results;
    (void)nresults;
    for (size_t i = 0; i < ninfo && o == NULL; i++)
        if (strncmp(info[i].key, PMIX_EVENT_RETURN_OBJECT, PMIX_MAX_KEYLEN) == 0)
            o = &info[i];
    job *j = o != NULL && o->value.type == PMIX_POINTER ? o->value.data.ptr : NULL;
    rndz *r = j != NULL ? j->rndz : NULL;
    if (r != NULL && status == PMIX_ERR_LOST_CONNECTION) {
        r->lost = true;
        if (r->complete && !r->ended && j->reason == END_NONE) {
            fprintf(stderr,
                    "pmixrun: the debugger that started pmixrun is gone; stopping %d "
                    "process%s\n",
                    live_ranks(j), live_ranks(j) == 1 ? "" : "es");
            end_job(j, END_SIGNAL, 1);
        }
    } else if (r != NULL && status == PMIX_DEBUGGER_RELEASE) {
        bool has, mine = names_me(info, ninfo, &r->me, &has);
        if (!r->released && (mine || !has))
            r->released = true; /* pmixrun's own */
        else if (r->complete)
            to_job(j, status, source, has, info, ninfo);
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

/* Raise `status` to the debugger alone, with `info` and `n` more. */
static void to_debugger(job *j, pmix_status_t status, pmix_info_t *more, size_t n)
{
    rndz *r = j->rndz;
    pmix_info_t info[8];
    bool yes = true;
    size_t k = 0;

    PMIx_Info_load(&info[k++], PMIX_EVENT_CUSTOM_RANGE, &r->initiator, PMIX_PROC);
    PMIx_Info_load(&info[k++], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    for (size_t i = 0; i < n && k < 8; i++)
        PMIx_Info_xfer(&info[k++], &more[i]);
    px_posix_ops()->lock(j->plat);
    (void)px_client_notify(r->c, status, &r->me, PMIX_RANGE_CUSTOM, info, k, NULL, NULL);
    px_posix_ops()->unlock(j->plat);
    for (size_t i = 0; i < k; i++)
        PMIx_Info_destruct(&info[i]);
}

/* Apply the debugger's directives (PMIX_LAUNCH_DIRECTIVES); -1 with a
 * message for one pmixrun cannot honour. */
static int directives(job *j, rndz *r)
{
    pmix_proc_t wild;
    pmix_info_t opt;
    pmix_value_t *v = NULL;
    bool yes = true;
    int rc = 0;

    PMIx_Load_procid(&wild, r->me.nspace, PMIX_RANK_WILDCARD);
    PMIx_Info_load(&opt, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    px_posix_ops()->lock(j->plat);
    pmix_status_t st = px_client_get(r->c, &wild, PMIX_LAUNCH_DIRECTIVES, &opt, 1, &v, NULL, NULL);
    px_posix_ops()->unlock(j->plat);
    PMIx_Info_destruct(&opt);
    if (st != PMIX_OPERATION_SUCCEEDED || v == NULL)
        return 0; /* none: pmixrun's own options decide */
    if (v->type == PMIX_DATA_ARRAY && v->data.darray != NULL && v->data.darray->type == PMIX_INFO) {
        const pmix_info_t *d = v->data.darray->array;
        for (size_t i = 0; i < v->data.darray->size; i++) {
            if (strncmp(d[i].key, PMIX_DEBUG_STOP_IN_INIT, PMIX_MAX_KEYLEN) == 0)
                j->stop_in_init = d[i].value.type != PMIX_BOOL || d[i].value.data.flag;
            else if (strncmp(d[i].key, PMIX_DEBUG_STOP_ON_EXEC, PMIX_MAX_KEYLEN) == 0) {
                fprintf(stderr, "pmixrun: the debugger asks to stop the processes on exec "
                                "(PMIX_DEBUG_STOP_ON_EXEC): not supported\n");
                rc = -1;
            }
        }
    }
    PMIx_Value_free(v, 1);
    return rc;
}

int rndz_start(job *j)
{
    const char *env = getenv(PMIX_LAUNCHER_RNDZ_URI);
    const char *ens = getenv("PMIX_NAMESPACE"), *erank = getenv("PMIX_RANK");
    pmix_status_t codes[2] = {PMIX_DEBUGGER_RELEASE, PMIX_ERR_LOST_CONNECTION};
    char err[256] = "", *uri;
    pmix_info_t obj;
    pmix_proc_t want;
    size_t hid = 0;
    rndz *r;

    if (env == NULL || env[0] == '\0')
        return 0;
    memset(&want, 0, sizeof(want));
    if (ens != NULL && erank != NULL && strlen(ens) <= PMIX_MAX_NSLEN) {
        PMIx_Load_nspace(want.nspace, ens);
        want.rank = (pmix_rank_t)strtoul(erank, NULL, 10);
    }
    uri = strdup(env);
    unsetenv(PMIX_LAUNCHER_RNDZ_URI); /* the ranks must not follow it */
    unsetenv("PMIX_NAMESPACE");
    unsetenv("PMIX_RANK");
    if (uri == NULL || (r = calloc(1, sizeof(*r))) == NULL) {
        free(uri);
        fprintf(stderr, "pmixrun: out of memory\n");
        return -1;
    }
    j->rndz = r;
    if ((r->c = px_client_create(px_posix_ops(), j->plat, &want)) == NULL) {
        free(uri);
        fprintf(stderr, "pmixrun: out of memory\n");
        return -1;
    }
    px_client_set_tool(r->c);
    if (px_posix_connect(j->plat, uri, RNDZ_CONNECT_S, px_client_sink(), r->c, err, sizeof(err)) !=
        PMIX_SUCCESS) {
        fprintf(stderr, "pmixrun: cannot reach the debugger at %s (%s): %s\n", uri,
                PMIX_LAUNCHER_RNDZ_URI, err);
        free(uri);
        return -1;
    }
    px_posix_ops()->lock(j->plat);
    pmix_status_t rc = px_client_connect(r->c, NULL, 0, op_cb, r);
    px_posix_ops()->unlock(j->plat);
    if (rc == PMIX_OPERATION_SUCCEEDED)
        r->done = true, r->status = PMIX_SUCCESS;
    else if (rc != PMIX_SUCCESS)
        r->done = true, r->status = rc;
    turn_until(j, r, &r->done, RNDZ_CONNECT_S);
    if (!r->done || r->status != PMIX_SUCCESS) {
        fprintf(stderr, "pmixrun: the debugger at %s did not take pmixrun as its launcher: %s\n",
                uri, r->done ? PMIx_Error_string(r->status) : "no answer");
        free(uri);
        return -1;
    }
    free(uri);
    r->connected = true;
    r->me = *px_client_self(r->c);
    r->initiator = *px_client_server(r->c);
    PMIx_Info_load(&obj, PMIX_EVENT_RETURN_OBJECT, j, PMIX_POINTER);
    px_posix_ops()->lock(j->plat);
    rc = px_client_register_event(r->c, codes, 2, &obj, 1, on_event, &hid);
    px_posix_ops()->unlock(j->plat);
    PMIx_Info_destruct(&obj);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixrun: cannot wait for the debugger: %s\n", PMIx_Error_string(rc));
        return -1;
    }
    to_debugger(j, PMIX_LAUNCHER_READY, NULL, 0);
    if (!turn_until(j, r, &r->released, RNDZ_WAIT_S)) {
        if (j->reason == END_NONE)
            fprintf(stderr, "pmixrun: the debugger %s:%u %s\n", r->initiator.nspace,
                    r->initiator.rank,
                    r->lost ? "went away before it released pmixrun"
                            : "did not release pmixrun (PMIX_DEBUGGER_RELEASE) within 60 s");
        return -1;
    }
    if (directives(j, r) != 0)
        return -1;
    if (j->stop_in_init && (r->ready = calloc((size_t)j->nprocs, 1)) == NULL) {
        fprintf(stderr, "pmixrun: out of memory\n");
        return -1;
    }
    j->rank_event = rndz_event;
    return 0;
}

static void complete(job *j)
{
    rndz *r = j->rndz;
    pmix_info_t ns;

    r->complete = true;
    PMIx_Info_load(&ns, PMIX_NSPACE, j->nspace, PMIX_STRING);
    to_debugger(j, PMIX_LAUNCH_COMPLETE, &ns, 1);
    PMIx_Info_destruct(&ns);
}

void rndz_launched(job *j)
{
    if (j->rndz != NULL && j->rndz->connected && !j->rndz->complete && !j->stop_in_init &&
        j->reason == END_NONE)
        complete(j);
}

void rndz_event(job *j, pmix_status_t status, const pmix_proc_t *source)
{
    rndz *r = j->rndz;

    if (r == NULL || r->ready == NULL || r->complete || status != PMIX_READY_FOR_DEBUG ||
        !PMIx_Check_nspace(source->nspace, j->nspace) || source->rank >= (pmix_rank_t)j->nprocs ||
        r->ready[source->rank])
        return;
    r->ready[source->rank] = 1;
    if (++r->nready == j->nprocs && j->reason == END_NONE)
        complete(j);
}

void rndz_end(job *j, int status)
{
    rndz *r = j->rndz;

    if (r == NULL)
        return;
    if (r->connected && !r->lost && r->released) { /* also a launch that failed */
        pmix_info_t info[2];
        PMIx_Info_load(&info[0], PMIX_NSPACE, j->nspace, PMIX_STRING);
        PMIx_Info_load(&info[1], PMIX_EXIT_CODE, &status, PMIX_INT);
        to_debugger(j, PMIX_EVENT_JOB_END, info, 2);
        PMIx_Info_destruct(&info[0]);
        PMIx_Info_destruct(&info[1]);
    }
    r->ended = true;
    if (r->connected && !r->lost) {
        r->done = false;
        px_posix_ops()->lock(j->plat);
        pmix_status_t rc = px_client_finalize(r->c, op_cb, r);
        px_posix_ops()->unlock(j->plat);
        /* the job is over: only the answer (or the loss) ends this wait */
        for (double until = now_s() + 2.0;
             rc == PMIX_SUCCESS && !r->done && !r->lost && now_s() < until;)
            px_posix_run_once(j->plat, 0.1);
    }
}

void rndz_free(job *j)
{
    rndz *r = j->rndz;

    if (r == NULL)
        return;
    if (r->c != NULL && r->connected) /* the platform delivers nothing more to it */
        px_posix_ops()->close(j->plat, PX_CONN_SERVER);
    px_client_destroy(r->c);
    free(r->ready);
    free(r);
    j->rndz = NULL;
}

void rndz_event_packed(job *j, const uint8_t *p, size_t len)
{
    tl_reader rd = {.p = p, .left = len};
    size_t n = 0;
    const void *body;
    pmix_data_buffer_t db;
    pmix_byte_object_t bo = {0};
    pmix_status_t status = 0;
    pmix_proc_t source;
    int32_t cnt = 1;

    if (j->rndz == NULL || j->rndz->ready == NULL || j->rndz->complete)
        return;
    body = tl_get_bytes(&rd, &n);
    if (rd.bad || (bo.bytes = malloc(n > 0 ? n : 1)) == NULL)
        return;
    memcpy(bo.bytes, body, n);
    bo.size = n;
    PMIx_Data_buffer_construct(&db);
    PMIx_Data_load(&db, &bo); /* the buffer owns the bytes now */
    if (PMIx_Data_unpack(NULL, &db, &status, &cnt, PMIX_STATUS) == PMIX_SUCCESS && (cnt = 1) &&
        PMIx_Data_unpack(NULL, &db, &source, &cnt, PMIX_PROC) == PMIX_SUCCESS)
        rndz_event(j, status, &source);
    PMIx_Data_buffer_destruct(&db);
}
