/*
 * test_tool_api.c - the tool role through the Standard's APIs alone: a
 * server started with PMIx_server_init (PMIX_SERVER_TOOL_SUPPORT and
 * PMIX_SERVER_SYSTEM_SUPPORT) and a module whose tool_connected answers
 * from a thread of its own, and tools that are this program again
 * (argv[1] == "tool"), started with PMIX_SYSTEM_TMPDIR and TMPDIR in a
 * private directory.
 *
 * It checks what a system server (issue item 2's `pmixrun --system-server`)
 * relies on: the system rendezvous file is written where tools look and
 * removed at PMIx_server_finalize, PMIX_CONNECT_TO_SYSTEM finds the
 * server, the host hears the tool's uid and pid and names it, and a query
 * reaches the module's query upcall.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <pmix_server.h>
#include <pmix_tool.h>

extern char **environ;

/* What the module heard (its upcalls run on the library's thread). */
static struct {
    pthread_mutex_t mu;
    int tools;
    uint32_t uid;
    pid_t pid;
    int queries;
} H = {.mu = PTHREAD_MUTEX_INITIALIZER};

typedef struct naming {
    pmix_tool_connection_cbfunc_t cbfunc;
    void *cbdata;
    int n;
} naming;

/* The host names the tool from a thread of its own, as a host may. */
static void *name_later(void *arg)
{
    naming *nm = arg;
    pmix_proc_t p;
    char ns[64];

    usleep(10000);
    snprintf(ns, sizeof(ns), "sys.tool.%d", nm->n);
    PMIx_Load_procid(&p, ns, 0);
    nm->cbfunc(PMIX_SUCCESS, &p, nm->cbdata);
    free(nm);
    return NULL;
}

static void up_tool(pmix_info_t *info, size_t ninfo, pmix_tool_connection_cbfunc_t cbfunc,
                    void *cbdata)
{
    naming *nm = calloc(1, sizeof(*nm));
    pthread_t t;

    pthread_mutex_lock(&H.mu);
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_USERID))
            H.uid = info[i].value.data.uint32;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_PROC_PID))
            H.pid = info[i].value.data.pid;
    }
    nm->n = ++H.tools;
    pthread_mutex_unlock(&H.mu);
    nm->cbfunc = cbfunc;
    nm->cbdata = cbdata;
    if (pthread_create(&t, NULL, name_later, nm) != 0)
        abort();
    pthread_detach(t);
}

static pmix_status_t up_query(pmix_proc_t *proct, pmix_query_t *queries, size_t nqueries,
                              pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    pmix_info_t info;

    pthread_mutex_lock(&H.mu);
    H.queries++;
    pthread_mutex_unlock(&H.mu);
    PMIx_Info_load(&info, PMIX_QUERY_NAMESPACES, "sysjob", PMIX_STRING);
    cbfunc(PMIX_SUCCESS, &info, 1, cbdata, NULL, NULL); /* the library copies it */
    PMIx_Info_destruct(&info);
    return PMIX_SUCCESS;
}

/* The tool: attach to the system server, print name, server, jobs. */
static int tool_main(void)
{
    pmix_info_t info;
    bool yes = true;
    pmix_proc_t me, *servers = NULL;
    size_t n = 0, ninfo = 0;
    pmix_query_t *q;
    pmix_info_t *res = NULL;
    pmix_status_t rc;

    PMIx_Info_load(&info, PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    rc = PMIx_tool_init(&me, &info, 1);
    PMIx_Info_destruct(&info);
    if (rc != PMIX_SUCCESS) {
        printf("init %s\n", PMIx_Error_string(rc));
        fflush(stdout);
        return 1;
    }
    PMIx_tool_get_servers(&servers, &n);
    q = PMIx_Query_create(1);
    PMIx_Argv_append_nosize(&q->keys, PMIX_QUERY_NAMESPACES);
    rc = PMIx_Query_info(q, 1, &res, &ninfo);
    printf("tool %s %u server %s %u jobs %s\n", me.nspace, me.rank,
           n == 1 ? servers[0].nspace : "-", n == 1 ? servers[0].rank : 0,
           rc == PMIX_SUCCESS && ninfo == 1 ? res[0].value.data.string : PMIx_Error_string(rc));
    PMIx_Query_free(q, 1);
    PMIx_Info_free(res, ninfo);
    PMIx_Proc_free(servers, n);
    fflush(stdout);
    return PMIx_tool_finalize() == PMIX_SUCCESS ? 0 : 1;
}

/* Run this program as a tool with `dir` as its directories; its output. */
static int run_tool(const char *dir, char *out, size_t len)
{
    int fds[2];
    pid_t pid;
    int st;
    ssize_t n, got = 0;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *argv[] = {"test_tool_api", "tool", NULL};
        dup2(fds[1], STDOUT_FILENO);
        setenv("PMIX_SYSTEM_TMPDIR", dir, 1);
        setenv("TMPDIR", dir, 1);
        unsetenv("PMIX_SERVER_URI");
        execve("/proc/self/exe", argv, environ);
        _exit(127);
    }
    close(fds[1]);
    while ((n = read(fds[0], out + got, len - 1 - (size_t)got)) > 0)
        got += n;
    out[got] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void test_system_server(void **state)
{
    char dir[256], sysfile[600], host[256], out[1024], want[512];
    const char *t = getenv("TMPDIR");
    pmix_server_module_t mod = {.tool_connected = up_tool, .query = up_query};
    pmix_info_t info[4];
    bool yes = true;
    struct stat st;

    snprintf(dir, sizeof(dir), "%s/test_tool_api.XXXXXX", t != NULL && *t ? t : "/tmp");
    assert_non_null(mkdtemp(dir));
    gethostname(host, sizeof(host));
    snprintf(sysfile, sizeof(sysfile), "%s/pmix.sys.%s", dir, host);
    PMIx_Info_load(&info[0], PMIX_SERVER_TOOL_SUPPORT, &yes, PMIX_BOOL);
    PMIx_Info_load(&info[1], PMIX_SERVER_SYSTEM_SUPPORT, &yes, PMIX_BOOL);
    PMIx_Info_load(&info[2], PMIX_SYSTEM_TMPDIR, dir, PMIX_STRING);
    PMIx_Info_load(&info[3], PMIX_SERVER_NSPACE, "sysserver", PMIX_STRING);
    assert_int_equal(PMIx_server_init(&mod, info, 4), PMIX_SUCCESS);
    for (int i = 0; i < 4; i++)
        PMIx_Info_destruct(&info[i]);

    /* the system file: where tools look, readable by all, ours */
    assert_int_equal(stat(sysfile, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    assert_int_equal(st.st_uid, getuid());

    /* two tools one after the other: each named, the query answered */
    for (int k = 1; k <= 2; k++) {
        assert_int_equal(run_tool(dir, out, sizeof(out)), 0);
        snprintf(want, sizeof(want), "tool sys.tool.%d 0 server sysserver 0 jobs sysjob\n", k);
        assert_string_equal(out, want);
    }
    pthread_mutex_lock(&H.mu);
    assert_int_equal(H.tools, 2);
    assert_int_equal(H.queries, 2);
    assert_int_equal(H.uid, getuid());
    assert_true(H.pid > 0);
    pthread_mutex_unlock(&H.mu);

    assert_int_equal(PMIx_server_finalize(), PMIX_SUCCESS);
    /* gone with the server: a tool finds nothing */
    assert_int_not_equal(stat(sysfile, &st), 0);
    assert_int_equal(run_tool(dir, out, sizeof(out)), 1);
    assert_string_equal(out, "init PMIX_ERR_NOT_FOUND\n");
    assert_int_equal(rmdir(dir), 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "tool") == 0)
        return tool_main();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_system_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
