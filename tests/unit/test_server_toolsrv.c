/*
 * test_server_toolsrv.c - a tool's server side (tool/toolsrv.c) through the
 * in-process platform: the debugger "dbg":0 of indirect launch, whose own
 * client engine shares the server's platform, a launcher it started (a job
 * "dbg.spawn.1" of one process, as PMIx_Spawn registers it) and other tools
 * of its user.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "inproc.h"
#include "tool/px_toolsrv.h"

#define LAUNCHER_NS "dbg.spawn.1"

typedef struct fixture {
    inproc_world *w;
    px_client *own; /* the debugger's own client engine */
    px_toolsrv *ts;
    px_server *srv;
} fixture;

/* What a handler saw: on one engine, the last event and how many. */
typedef struct seen {
    int n;
    pmix_status_t status;
    pmix_proc_t source;
} seen;

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    const pmix_info_t *o = px_info_find(info, ninfo, PMIX_EVENT_RETURN_OBJECT);
    seen *s = o != NULL ? o->value.data.ptr : NULL;

    (void)id;
    (void)results;
    (void)nresults;
    if (s != NULL) {
        s->n++;
        s->status = status;
        s->source = *source;
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void watch(px_client *c, pmix_status_t code, seen *s)
{
    pmix_info_t obj;
    size_t id = 0;

    PMIx_Info_load(&obj, PMIX_EVENT_RETURN_OBJECT, s, PMIX_POINTER);
    assert_int_equal(px_client_register_event(c, &code, 1, &obj, 1, handler, &id), PMIX_SUCCESS);
    PMIx_Info_destruct(&obj);
}

static px_server *make(const px_platform_ops *pops, void *pctx, void *arg)
{
    fixture *f = arg;
    pmix_proc_t self;

    PMIx_Load_procid(&self, "dbg", 0);
    f->own = px_client_create(pops, pctx, &self);
    assert_non_null(f->own);
    f->ts = px_toolsrv_create(f->own, pops, pctx, 1000);
    assert_non_null(f->ts);
    return px_toolsrv_server(f->ts);
}

/* The debugger, with the launcher's job registered as PMIx_Spawn does:
 * its directives say stop in init. */
static fixture *start(void)
{
    fixture *f = calloc(1, sizeof(*f));
    pmix_info_t info, *d;
    pmix_data_array_t da;
    bool yes = true;

    assert_non_null(f);
    f->w = inproc_world_create();
    f->srv = inproc_server_made(f->w, 0, make, f);
    d = PMIx_Info_create(1);
    PMIx_Info_load(&d[0], PMIX_DEBUG_STOP_IN_INIT, &yes, PMIX_BOOL);
    da.type = PMIX_INFO;
    da.size = 1;
    da.array = d;
    PMIx_Info_load(&info, PMIX_LAUNCH_DIRECTIVES, &da, PMIX_DATA_ARRAY);
    assert_int_equal(px_toolsrv_add_job(f->ts, LAUNCHER_NS, 1, &info, 1), PMIX_SUCCESS);
    PMIx_Info_destruct(&info);
    PMIx_Info_free(d, 1);
    return f;
}

static void end(fixture *f)
{
    inproc_forget_server(f->w, f->srv);
    px_toolsrv_destroy(f->ts);
    px_client_destroy(f->own);
    inproc_world_destroy(f->w);
    free(f);
}

static pmix_status_t shake(fixture *f, px_client *t)
{
    inproc_proc p = {.c = t};
    pmix_status_t rc = px_client_connect(t, NULL, 0, inproc_op_cb, &p);

    if (rc != PMIX_SUCCESS)
        return rc;
    assert_true(inproc_run_until(f->w, &p.done));
    return p.status;
}

/* The launcher, connected under its job's name from the pid it was
 * started as. */
static px_client *launcher(fixture *f)
{
    pmix_proc_t want;
    px_client *l;

    PMIx_Load_procid(&want, LAUNCHER_NS, 0);
    l = inproc_tool(f->w, f->srv, &want, 1000);
    px_toolsrv_job_pid(f->ts, LAUNCHER_NS, 0, (pid_t)inproc_client_pid(f->w, l));
    assert_int_equal(shake(f, l), PMIX_SUCCESS);
    assert_string_equal(px_client_self(l)->nspace, LAUNCHER_NS);
    assert_string_equal(px_client_server(l)->nspace, "dbg");
    return l;
}

static void test_launcher_only_from_its_process(void **state)
{
    fixture *f = start();
    pmix_proc_t want, wild;
    pmix_value_t *v = NULL;
    size_t n = 0;

    /* another process of the user asking for the launcher's name: refused */
    PMIx_Load_procid(&want, LAUNCHER_NS, 0);
    px_client *rogue = inproc_tool(f->w, f->srv, &want, 1000);
    px_client *real = inproc_tool(f->w, f->srv, &want, 1000);
    px_toolsrv_job_pid(f->ts, LAUNCHER_NS, 0, (pid_t)inproc_client_pid(f->w, real));
    assert_int_not_equal(inproc_client_pid(f->w, rogue), inproc_client_pid(f->w, real));
    assert_int_not_equal(shake(f, rogue), PMIX_SUCCESS);
    assert_non_null(strstr(inproc_last_log(f->w), "PMIX_ERR_NO_PERMISSIONS"));
    /* nor the debugger's own name */
    PMIx_Load_procid(&want, "dbg", 3);
    px_client *self = inproc_tool(f->w, f->srv, &want, 1000);
    assert_int_not_equal(shake(f, self), PMIX_SUCCESS);
    /* the one it started: its name, and the spawn's directives as job data */
    assert_int_equal(shake(f, real), PMIX_SUCCESS);
    assert_string_equal(px_client_self(real)->nspace, LAUNCHER_NS);
    PMIx_Load_procid(&wild, LAUNCHER_NS, PMIX_RANK_WILDCARD);
    assert_int_equal(px_client_get(real, &wild, PMIX_LAUNCH_DIRECTIVES, NULL, 0, &v, NULL, NULL),
                     PMIX_OPERATION_SUCCEEDED);
    assert_non_null(v);
    assert_int_equal(v->type, PMIX_DATA_ARRAY);
    assert_int_equal(v->data.darray->size, 1);
    assert_true(
        PMIx_Check_key(((pmix_info_t *)v->data.darray->array)[0].key, PMIX_DEBUG_STOP_IN_INIT));
    PMIx_Value_free(v, 1);
    /* a tool that asks for nothing gets a name under the debugger's */
    px_client *other = inproc_tool(f->w, f->srv, NULL, 1000);
    assert_int_equal(shake(f, other), PMIX_SUCCESS);
    assert_string_equal(px_client_self(other)->nspace, "dbg.tool.1");
    assert_true(px_toolsrv_has_peer(f->ts, px_client_self(real)));
    assert_true(px_toolsrv_has_peer(f->ts, px_client_self(other)));
    assert_false(px_toolsrv_has_peer(f->ts, px_client_self(f->own)));
    assert_int_equal(px_toolsrv_pids(f->ts, &n)[0], (pid_t)inproc_client_pid(f->w, real));
    assert_int_equal(n, 1);
    end(f);
}

static void custom(pmix_info_t *info, const char *ns, pmix_rank_t rank)
{
    pmix_proc_t p;

    PMIx_Load_procid(&p, ns, rank);
    PMIx_Info_load(info, PMIX_EVENT_CUSTOM_RANGE, &p, PMIX_PROC);
}

static void test_events_both_ways(void **state)
{
    fixture *f = start();
    seen ready = {0}, at_l = {0}, at_o = {0}, mine = {0};
    pmix_info_t info;
    px_client *l = launcher(f);
    px_client *o = inproc_tool(f->w, f->srv, NULL, 1000);

    assert_int_equal(shake(f, o), PMIX_SUCCESS);
    watch(f->own, PMIX_LAUNCHER_READY, &ready);
    watch(l, PMIX_DEBUGGER_RELEASE, &at_l);
    watch(o, PMIX_DEBUGGER_RELEASE, &at_o);
    watch(f->own, PMIX_DEBUGGER_RELEASE, &mine);

    /* the launcher's event for the debugger reaches its handlers */
    custom(&info, "dbg", 0);
    assert_int_equal(
        px_client_notify(l, PMIX_LAUNCHER_READY, NULL, PMIX_RANGE_CUSTOM, &info, 1, NULL, NULL),
        PMIX_OPERATION_SUCCEEDED);
    PMIx_Info_destruct(&info);
    assert_true(inproc_run_until(f->w, &ready.n));
    assert_string_equal(ready.source.nspace, LAUNCHER_NS);

    /* the debugger's release of the launcher: it alone */
    custom(&info, LAUNCHER_NS, 0);
    px_toolsrv_notify(f->ts, PMIX_DEBUGGER_RELEASE, NULL, PMIX_RANGE_CUSTOM, &info, 1);
    PMIx_Info_destruct(&info);
    assert_true(inproc_run_until(f->w, &at_l.n));
    assert_int_equal(at_o.n, 0);
    assert_string_equal(at_l.source.nspace, "dbg");

    /* for the launcher's job (no peer of the debugger): to the launcher */
    at_l.n = 0;
    custom(&info, "app", PMIX_RANK_WILDCARD);
    px_toolsrv_notify(f->ts, PMIX_DEBUGGER_RELEASE, NULL, PMIX_RANGE_CUSTOM, &info, 1);
    PMIx_Info_destruct(&info);
    assert_true(inproc_run_until(f->w, &at_l.n));
    (void)inproc_run_until(f->w, NULL); /* everything delivered */
    assert_int_equal(at_l.n, 1);
    assert_int_equal(at_o.n, 0);

    /* for another peer only: that one, not the launcher */
    at_l.n = 0;
    custom(&info, px_client_self(o)->nspace, 0);
    px_toolsrv_notify(f->ts, PMIX_DEBUGGER_RELEASE, NULL, PMIX_RANGE_CUSTOM, &info, 1);
    PMIx_Info_destruct(&info);
    assert_true(inproc_run_until(f->w, &at_o.n));
    (void)inproc_run_until(f->w, NULL);
    assert_int_equal(at_o.n, 1);
    assert_int_equal(at_l.n, 0);

    /* a peer's event for another peer reaches it, not the debugger */
    at_o.n = 0;
    custom(&info, px_client_self(o)->nspace, 0);
    assert_int_equal(
        px_client_notify(l, PMIX_DEBUGGER_RELEASE, NULL, PMIX_RANGE_CUSTOM, &info, 1, NULL, NULL),
        PMIX_OPERATION_SUCCEEDED);
    PMIx_Info_destruct(&info);
    assert_true(inproc_run_until(f->w, &at_o.n));
    (void)inproc_run_until(f->w, NULL);
    assert_int_equal(mine.n, 0);
    end(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launcher_only_from_its_process),
        cmocka_unit_test(test_events_both_ways),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
