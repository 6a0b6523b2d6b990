/*
 * test_server_tool.c - tools in the engines (server/tool.c, client/tool.c)
 * and the queries a host answers, through the in-process platform.
 *
 * One server (node 0) runs a job "job" of two ranks of uid 1000; it
 * accepts tools of uid 1000 under the name "srv":0 (px_server_tools). The
 * world as host names tools and answers queries (inproc.h).
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

typedef struct fixture {
    inproc_world *w;
    px_server *srv;
    inproc_proc rank[2];
} fixture;

/* The job's two ranks connected; tools allowed unless `no_tools`. */
static fixture *start(bool no_tools)
{
    fixture *f = calloc(1, sizeof(*f));
    pmix_proc_t self;
    uint32_t size = 2;
    pmix_info_t info;

    assert_non_null(f);
    f->w = inproc_world_create();
    f->srv = inproc_server(f->w, 0);
    PMIx_Info_load(&info, PMIX_JOB_SIZE, &size, PMIX_UINT32);
    assert_int_equal(px_server_register_nspace(f->srv, "job", 2, &info, 1), PMIX_SUCCESS);
    PMIx_Info_destruct(&info);
    for (int r = 0; r < 2; r++) {
        PMIx_Load_procid(&self, "job", (pmix_rank_t)r);
        assert_int_equal(px_server_register_client(f->srv, &self, 1000, 1000, NULL), PMIX_SUCCESS);
        f->rank[r].c = inproc_client(f->w, f->srv, &self);
        assert_int_equal(px_client_connect(f->rank[r].c, NULL, 0, inproc_op_cb, &f->rank[r]),
                         PMIX_SUCCESS);
        assert_true(inproc_run_until(f->w, &f->rank[r].done));
        assert_int_equal(f->rank[r].status, PMIX_SUCCESS);
        f->rank[r].done = 0;
    }
    if (!no_tools) {
        PMIx_Load_procid(&self, "srv", 0);
        assert_int_equal(px_server_tools(f->srv, &self, 1000), PMIX_SUCCESS);
    }
    return f;
}

static void end(fixture *f)
{
    inproc_world_destroy(f->w);
    free(f);
}

/* A tool through its handshake; the status it got (a refusal may reach
 * it as its WELCOME's status or as the connection closing under it). */
static pmix_status_t shake(fixture *f, px_client *t)
{
    inproc_proc p = {.c = t};
    pmix_status_t rc = px_client_connect(t, NULL, 0, inproc_op_cb, &p);

    if (rc != PMIX_SUCCESS)
        return rc; /* the connection was refused as it opened */
    assert_true(inproc_run_until(f->w, &p.done));
    return p.status;
}

/* The server logged that it refused a tool for `why`. */
static void refused_for(fixture *f, pmix_status_t why)
{
    char want[128];

    snprintf(want, sizeof(want), "refused a tool");
    assert_non_null(strstr(inproc_last_log(f->w), want));
    assert_non_null(strstr(inproc_last_log(f->w), PMIx_Error_string(why)));
}

static void test_tool_named_by_host(void **state)
{
    fixture *f = start(false);
    px_client *t = inproc_tool(f->w, f->srv, NULL, 1000);

    assert_int_equal(shake(f, t), PMIX_SUCCESS);
    assert_true(px_client_is_tool(t));
    assert_string_equal(px_client_self(t)->nspace, "tool.1");
    assert_int_equal(px_client_self(t)->rank, 0);
    assert_string_equal(px_client_server(t)->nspace, "srv");
    assert_int_equal(px_client_server(t)->rank, 0);
    assert_int_equal(px_server_ntools(f->srv), 1);
    assert_int_equal(px_server_nclients(f->srv), 2); /* a tool is no client */
    /* the host heard the tool's pid as the platform vouches for it */
    assert_int_equal(inproc_last_tool_pid(f->w), inproc_client_pid(f->w, t));
    assert_true(inproc_client_accepted(f->w, t));
    end(f);
}

static void test_two_tools_and_asked_names(void **state)
{
    fixture *f = start(false);
    pmix_proc_t want;
    px_client *a = inproc_tool(f->w, f->srv, NULL, 1000);
    px_client *b = inproc_tool(f->w, f->srv, NULL, 1000);

    assert_int_equal(shake(f, a), PMIX_SUCCESS);
    assert_int_equal(shake(f, b), PMIX_SUCCESS);
    assert_string_not_equal(px_client_self(a)->nspace, px_client_self(b)->nspace);
    assert_int_equal(px_server_ntools(f->srv), 2);
    /* a name asked for is given; the same name again is refused */
    PMIx_Load_procid(&want, "debugger", 7);
    px_client *c = inproc_tool(f->w, f->srv, &want, 1000);
    assert_int_equal(shake(f, c), PMIX_SUCCESS);
    assert_string_equal(px_client_self(c)->nspace, "debugger");
    assert_int_equal(px_client_self(c)->rank, 7);
    px_client *d = inproc_tool(f->w, f->srv, &want, 1000);
    assert_int_not_equal(shake(f, d), PMIX_SUCCESS);
    refused_for(f, PMIX_ERR_EXISTS);
    /* nor may a tool take a rank's name */
    PMIx_Load_procid(&want, "job", 1);
    px_client *e = inproc_tool(f->w, f->srv, &want, 1000);
    assert_int_not_equal(shake(f, e), PMIX_SUCCESS);
    refused_for(f, PMIX_ERR_EXISTS);
    assert_int_equal(px_server_ntools(f->srv), 3);
    end(f);
}

static void test_other_uid_refused(void **state)
{
    fixture *f = start(false);
    px_client *t = inproc_tool(f->w, f->srv, NULL, 1001);

    assert_int_not_equal(shake(f, t), PMIX_SUCCESS);
    assert_int_equal(px_server_ntools(f->srv), 0);
    end(f);
}

static void test_tools_not_allowed(void **state)
{
    fixture *f = start(true);
    px_client *t = inproc_tool(f->w, f->srv, NULL, 1000);

    /* the uid is a client's, so the connection opens; HELLO is refused */
    assert_int_not_equal(shake(f, t), PMIX_SUCCESS);
    assert_int_equal(px_server_ntools(f->srv), 0);
    assert_non_null(strstr(inproc_last_log(f->w), "says it is a tool"));
    end(f);
}

static void test_host_refuses(void **state)
{
    fixture *f = start(false);
    px_client *t = inproc_tool(f->w, f->srv, NULL, 1000);

    inproc_tool_mode(f->w, 2);
    assert_int_not_equal(shake(f, t), PMIX_SUCCESS);
    refused_for(f, PMIX_ERR_NO_PERMISSIONS);
    assert_int_equal(px_server_ntools(f->srv), 0);
    end(f);
}

static void test_host_answers_later(void **state)
{
    fixture *f = start(false);
    px_client *t = inproc_tool(f->w, f->srv, NULL, 1000);

    inproc_tool_mode(f->w, 1);
    assert_int_equal(shake(f, t), PMIX_SUCCESS);
    assert_string_equal(px_client_self(t)->nspace, "tool.1");
    end(f);
}

/* The tool goes before the host names it: the answer finds nobody. */
static void test_tool_gone_before_answer(void **state)
{
    fixture *f = start(false);
    px_client *t = inproc_tool(f->w, f->srv, NULL, 1000);
    inproc_proc p = {.c = t};

    inproc_tool_mode(f->w, 1);
    assert_int_equal(px_client_connect(t, NULL, 0, inproc_op_cb, &p), PMIX_SUCCESS);
    inproc_kill_client(f->w, t);
    inproc_run_until(f->w, NULL);
    assert_int_equal(px_server_ntools(f->srv), 0);
    assert_int_equal(px_server_nclients(f->srv), 2);
    end(f);
}

static void test_too_many_tools(void **state)
{
    fixture *f = start(false);

    for (int i = 0; i < PX_SERVER_MAX_TOOLS; i++)
        assert_int_equal(shake(f, inproc_tool(f->w, f->srv, NULL, 1000)), PMIX_SUCCESS);
    assert_int_not_equal(shake(f, inproc_tool(f->w, f->srv, NULL, 1000)), PMIX_SUCCESS);
    refused_for(f, PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(px_server_ntools(f->srv), PX_SERVER_MAX_TOOLS);
    end(f);
}

typedef struct qres {
    int done;
    pmix_status_t status;
    pmix_info_t *info;
    size_t ninfo;
} qres;

static void q_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                 pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    qres *q = cbdata;

    q->status = status;
    if (ninfo > 0) {
        q->info = PMIx_Info_create(ninfo);
        for (size_t i = 0; i < ninfo; i++)
            PMIx_Info_xfer(&q->info[i], &info[i]);
        q->ninfo = ninfo;
    }
    if (release_fn != NULL)
        release_fn(release_cbdata);
    q->done++;
}

static void ask(fixture *f, px_client *c, const char *key, const char *ns, qres *q)
{
    pmix_query_t *query = PMIx_Query_create(1);

    PMIx_Argv_append_nosize(&query->keys, key);
    if (ns != NULL) {
        query->qualifiers = PMIx_Info_create(1);
        query->nqual = 1;
        PMIx_Info_load(&query->qualifiers[0], PMIX_NSPACE, ns, PMIX_STRING);
    }
    memset(q, 0, sizeof(*q));
    assert_int_equal(px_client_query(c, query, 1, q_cb, q), PMIX_SUCCESS);
    PMIx_Query_free(query, 1);
    assert_true(inproc_run_until(f->w, &q->done));
}

static void test_query_proc_table(void **state)
{
    fixture *f = start(false);
    px_client *t = inproc_tool(f->w, f->srv, NULL, 1000);
    qres q;

    assert_int_equal(shake(f, t), PMIX_SUCCESS);
    ask(f, t, PMIX_QUERY_NAMESPACES, NULL, &q);
    assert_int_equal(q.status, PMIX_SUCCESS);
    assert_int_equal(q.ninfo, 1);
    assert_string_equal(q.info[0].value.data.string, "job");
    PMIx_Info_free(q.info, q.ninfo);

    ask(f, t, PMIX_QUERY_PROC_TABLE, "job", &q);
    assert_int_equal(q.status, PMIX_SUCCESS);
    assert_int_equal(q.ninfo, 1);
    assert_string_equal(q.info[0].key, PMIX_QUERY_PROC_TABLE);
    assert_int_equal(q.info[0].value.type, PMIX_DATA_ARRAY);
    pmix_data_array_t *da = q.info[0].value.data.darray;
    assert_int_equal(da->type, PMIX_PROC_INFO);
    assert_int_equal(da->size, 2);
    pmix_proc_info_t *pi = da->array;
    for (int r = 0; r < 2; r++) {
        assert_string_equal(pi[r].proc.nspace, "job");
        assert_int_equal(pi[r].proc.rank, r);
        assert_string_equal(pi[r].hostname, "node0");
        assert_string_equal(pi[r].executable_name, "/bin/prog");
        assert_int_equal(pi[r].pid, 4242 + r);
        assert_int_equal(pi[r].state, PMIX_PROC_STATE_RUNNING);
    }
    PMIx_Info_free(q.info, q.ninfo);

    /* a namespace the host does not know: not found */
    ask(f, t, PMIX_QUERY_PROC_TABLE, "nojob", &q);
    assert_int_equal(q.status, PMIX_ERR_NOT_FOUND);
    assert_int_equal(q.ninfo, 0);
    /* a rank may ask the host too */
    ask(f, f->rank[0].c, PMIX_QUERY_NAMESPACES, NULL, &q);
    assert_int_equal(q.status, PMIX_SUCCESS);
    PMIx_Info_free(q.info, q.ninfo);
    end(f);
}

/* One QUERY with a process-set key and a host's key: the server answers
 * the first from its table, passes the second to the host, and sends both
 * answers in one INFO_DONE. */
static void test_query_psets_and_host(void **state)
{
    fixture *f = start(false);
    px_client *t = inproc_tool(f->w, f->srv, NULL, 1000);
    pmix_proc_t host, members[2];
    pmix_query_t *query = PMIx_Query_create(2);
    bool seen_psets = false, seen_table = false;
    qres q;

    assert_int_equal(shake(f, t), PMIX_SUCCESS);
    PMIx_Load_procid(&host, "host", 0);
    PMIx_Load_procid(&members[0], "job", 0);
    PMIx_Load_procid(&members[1], "job", 1);
    assert_int_equal(px_server_define_process_set(f->srv, &host, "tide", members, 2), PMIX_SUCCESS);
    PMIx_Argv_append_nosize(&query[0].keys, PMIX_QUERY_PSET_NAMES);
    PMIx_Argv_append_nosize(&query[1].keys, PMIX_QUERY_PROC_TABLE);
    query[1].qualifiers = PMIx_Info_create(1);
    query[1].nqual = 1;
    PMIx_Info_load(&query[1].qualifiers[0], PMIX_NSPACE, "job", PMIX_STRING);
    memset(&q, 0, sizeof(q));
    assert_int_equal(px_client_query(t, query, 2, q_cb, &q), PMIX_SUCCESS);
    PMIx_Query_free(query, 2);
    assert_true(inproc_run_until(f->w, &q.done));
    assert_int_equal(q.status, PMIX_SUCCESS);
    assert_int_equal(q.ninfo, 2);
    for (size_t i = 0; i < q.ninfo; i++) {
        if (strcmp(q.info[i].key, PMIX_QUERY_PSET_NAMES) == 0) {
            assert_string_equal(q.info[i].value.data.string, "tide");
            seen_psets = true;
        } else if (strcmp(q.info[i].key, PMIX_QUERY_PROC_TABLE) == 0) {
            assert_int_equal(q.info[i].value.data.darray->size, 2);
            seen_table = true;
        }
    }
    assert_true(seen_psets && seen_table);
    PMIx_Info_free(q.info, q.ninfo);

    /* the host knows no such namespace: the process sets alone, partly */
    query = PMIx_Query_create(1);
    PMIx_Argv_append_nosize(&query->keys, PMIX_QUERY_NUM_PSETS);
    PMIx_Argv_append_nosize(&query->keys, PMIX_QUERY_PROC_TABLE);
    query->qualifiers = PMIx_Info_create(1);
    query->nqual = 1;
    PMIx_Info_load(&query->qualifiers[0], PMIX_NSPACE, "nojob", PMIX_STRING);
    memset(&q, 0, sizeof(q));
    assert_int_equal(px_client_query(t, query, 1, q_cb, &q), PMIX_SUCCESS);
    PMIx_Query_free(query, 1);
    assert_true(inproc_run_until(f->w, &q.done));
    assert_int_equal(q.status, PMIX_ERR_PARTIAL_SUCCESS);
    assert_int_equal(q.ninfo, 1);
    assert_string_equal(q.info[0].key, PMIX_QUERY_NUM_PSETS);
    PMIx_Info_free(q.info, q.ninfo);
    end(f);
}

/* A tool that leaves, by FINALIZE or by dying, fails nothing of the job. */
static void test_tool_leaves_job_unharmed(void **state)
{
    fixture *f = start(false);
    px_client *a = inproc_tool(f->w, f->srv, NULL, 1000);
    px_client *b = inproc_tool(f->w, f->srv, NULL, 1000);
    inproc_proc pa = {.c = a};
    pmix_proc_t all;

    assert_int_equal(shake(f, a), PMIX_SUCCESS);
    assert_int_equal(shake(f, b), PMIX_SUCCESS);
    /* rank 0 waits in a fence of the job while the tools go */
    PMIx_Load_procid(&all, "job", PMIX_RANK_WILDCARD);
    assert_int_equal(px_client_fence(f->rank[0].c, &all, 1, NULL, 0, inproc_op_cb, &f->rank[0]),
                     PMIX_SUCCESS);
    assert_int_equal(px_client_finalize(a, inproc_op_cb, &pa), PMIX_SUCCESS);
    assert_true(inproc_run_until(f->w, &pa.done));
    assert_int_equal(pa.status, PMIX_SUCCESS);
    inproc_kill_client(f->w, b);
    inproc_run_until(f->w, NULL);
    assert_int_equal(f->rank[0].done, 0); /* still waiting for rank 1, not failed */
    assert_int_equal(px_client_fence(f->rank[1].c, &all, 1, NULL, 0, inproc_op_cb, &f->rank[1]),
                     PMIX_SUCCESS);
    assert_true(inproc_run_until(f->w, &f->rank[0].done));
    assert_true(inproc_run_until(f->w, &f->rank[1].done));
    assert_int_equal(f->rank[0].status, PMIX_SUCCESS);
    assert_int_equal(f->rank[1].status, PMIX_SUCCESS);
    assert_int_equal(px_server_ntools(f->srv), 0);
    assert_int_equal(px_server_nclients(f->srv), 2);
    end(f);
}

/* A tool breaking the protocol is dropped alone. */
static void test_garbage_tool_dropped(void **state)
{
    fixture *f = start(false);
    px_client *t = inproc_tool(f->w, f->srv, NULL, 1000);
    static const unsigned char junk[40] = {'P', 'M', 'X', '1'};

    assert_int_equal(shake(f, t), PMIX_SUCCESS);
    inproc_send_raw(f->w, t, junk, sizeof(junk));
    inproc_run_until(f->w, NULL);
    assert_int_equal(px_server_ntools(f->srv), 0);
    assert_int_equal(px_server_nclients(f->srv), 2);
    end(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tool_named_by_host),
        cmocka_unit_test(test_two_tools_and_asked_names),
        cmocka_unit_test(test_other_uid_refused),
        cmocka_unit_test(test_tools_not_allowed),
        cmocka_unit_test(test_host_refuses),
        cmocka_unit_test(test_host_answers_later),
        cmocka_unit_test(test_tool_gone_before_answer),
        cmocka_unit_test(test_too_many_tools),
        cmocka_unit_test(test_query_proc_table),
        cmocka_unit_test(test_query_psets_and_host),
        cmocka_unit_test(test_tool_leaves_job_unharmed),
        cmocka_unit_test(test_garbage_tool_dropped),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
