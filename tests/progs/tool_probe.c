/*
 * tool_probe - a PMIx tool written against the Standard's tool API only
 * (<pmix_tool.h>), for tests/integration/tool.sh. It attaches to a server
 * one way, prints what it learns in lines the script checks, and exits 0
 * unless a call it needed failed (its status is printed).
 *
 *   tool_probe MODE [ARG] [HOLD_S]
 *
 *   pid PID | uri URI | nspace NS   PMIX_SERVER_PIDINFO / _URI / _NSPACE
 *   system | sysfirst               PMIX_CONNECT_TO_SYSTEM / _SYSTEM_FIRST
 *   none                            no attributes (environment, then search)
 *   optional PID                    PMIX_TOOL_CONNECT_OPTIONAL with PID
 *   noconnect PID                   PMIX_TOOL_DO_NOT_CONNECT, then
 *                                   PMIx_tool_attach_to_server to PID
 *   reattach PID                    attach, PMIx_tool_disconnect, check it
 *                                   has no server, attach again
 *   lost PID                        attach, print "attached", then wait
 *                                   (15 s at most) until PMIx_tool_get_servers
 *                                   lists no server once PID's server ends
 *                                   (the script kills it), and print
 *                                   "after the server ended N servers"
 *
 * Output, once connected:
 *   tool NSPACE RANK server NSPACE RANK
 *   job NSPACE                                  each of PMIX_QUERY_NAMESPACES
 *   proc RANK HOST PID STATE EXIT EXECUTABLE    each of its PMIX_QUERY_PROC_TABLE
 *   local RANK HOST PID                         each of its PMIX_QUERY_LOCAL_PROC_TABLE
 *                                               (qualified with PMIX_HOSTNAME
 *                                               $TOOL_PROBE_HOST if set)
 *   cmd NSPACE CMDLINE                          each of PMIX_QUERY_NAMESPACE_INFO
 *   kill NSPACE RANK STATUS                     with $TOOL_PROBE_KILL=RANK set: what
 *                                               PMIx_Job_control (PMIX_JOB_CTRL_KILL)
 *                                               of that rank returned
 *   pull NSPACE STATUS                          with $TOOL_PROBE_PULL set: what
 *                                               PMIx_IOF_pull of the job's stdout
 *                                               returned (then deregistered)
 *   size NSPACE N NODES                         with $TOOL_PROBE_JOBDATA set: the job's
 *                                               PMIX_JOB_SIZE and PMIX_NUM_NODES (PMIx_Get)
 *   peers NSPACE NODE LIST                      and for each node of its PMIX_NODE_LIST
 *                                               its PMIX_LOCAL_PEERS (qualified by
 *                                               PMIX_HOSTNAME)
 *   rankhost NSPACE RANK HOST                   and each rank's PMIX_HOSTNAME
 *                                               returned (then deregistered);
 *                                               with it "only", nothing else
 *                                               of the job is asked
 * With HOLD_S it stays connected that many seconds before finalizing.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix_tool.h>

static int failed;

static void check(const char *what, pmix_status_t rc)
{
    if (rc != PMIX_SUCCESS) {
        printf("error %s %s\n", what, PMIx_Error_string(rc));
        failed = 1;
    }
}

/* The one server we have, or "none". */
static void print_self(void)
{
    pmix_proc_t me, *servers = NULL;
    size_t n = 0;

    check("tool_init(again)", PMIx_tool_init(&me, NULL, 0)); /* reference-counted: our name */
    check("get_servers", PMIx_tool_get_servers(&servers, &n));
    if (n == 1)
        printf("tool %s %u server %s %u\n", me.nspace, me.rank, servers[0].nspace, servers[0].rank);
    else
        printf("tool %s %u server none (%zu)\n", me.nspace, me.rank, n);
    if (servers != NULL)
        PMIx_Proc_free(servers, n);
    PMIx_tool_finalize();
}

static pmix_status_t query(const char *key, const char *ns, pmix_info_t **info, size_t *ninfo)
{
    pmix_query_t *q = PMIx_Query_create(1);
    pmix_status_t rc;
    const char *host = getenv("TOOL_PROBE_HOST");

    PMIx_Argv_append_nosize(&q->keys, key);
    if (strcmp(key, PMIX_QUERY_LOCAL_PROC_TABLE) != 0)
        host = NULL;
    if (ns != NULL) {
        q->qualifiers = PMIx_Info_create(host != NULL ? 2 : 1);
        q->nqual = host != NULL ? 2 : 1;
        PMIx_Info_load(&q->qualifiers[0], PMIX_NSPACE, ns, PMIX_STRING);
        if (host != NULL)
            PMIx_Info_load(&q->qualifiers[1], PMIX_HOSTNAME, host, PMIX_STRING);
    }
    rc = PMIx_Query_info(q, 1, info, ninfo);
    PMIx_Query_free(q, 1);
    return rc;
}

/* The job data of `ns` a rank would read: its size, the peers of each
 * node, each rank's host (each Get's failure printed). */
static void print_jobdata(const char *ns)
{
    pmix_proc_t all;
    pmix_value_t *v = NULL;
    uint32_t size = 0, nnodes = 0;
    pmix_status_t rc;

    PMIx_Load_procid(&all, ns, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &v)) == PMIX_SUCCESS) {
        size = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    check("get job size", rc);
    if ((rc = PMIx_Get(&all, PMIX_NUM_NODES, NULL, 0, &v)) == PMIX_SUCCESS) {
        nnodes = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    check("get num nodes", rc);
    printf("size %s %u %u\n", ns, size, nnodes);
    if ((rc = PMIx_Get(&all, PMIX_NODE_LIST, NULL, 0, &v)) != PMIX_SUCCESS) {
        check("get node list", rc);
        return;
    }
    char **nodes = PMIx_Argv_split(v->data.string, ',');
    PMIx_Value_free(v, 1);
    for (size_t k = 0; nodes != NULL && nodes[k] != NULL; k++) {
        pmix_info_t q;
        PMIx_Info_load(&q, PMIX_HOSTNAME, nodes[k], PMIX_STRING);
        rc = PMIx_Get(&all, PMIX_LOCAL_PEERS, &q, 1, &v);
        PMIx_Info_destruct(&q);
        check("get local peers", rc);
        if (rc == PMIX_SUCCESS) {
            printf("peers %s %s %s\n", ns, nodes[k], v->data.string);
            PMIx_Value_free(v, 1);
        }
    }
    PMIx_Argv_free(nodes);
    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, ns, r);
        rc = PMIx_Get(&p, PMIX_HOSTNAME, NULL, 0, &v);
        check("get rank host", rc);
        if (rc == PMIX_SUCCESS) {
            printf("rankhost %s %u %s\n", ns, r, v->data.string);
            PMIx_Value_free(v, 1);
        }
    }
}

/* PMIx_IOF_pull of the stdout of every rank of `ns`: prints what it
 * returned, then deregisters. */
static void pull(const char *ns)
{
    pmix_proc_t all;
    PMIx_Load_procid(&all, ns, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_IOF_pull(&all, 1, NULL, 0, PMIX_FWD_STDOUT_CHANNEL, NULL, NULL, NULL);
    printf("pull %s %s\n", ns, PMIx_Error_string(rc < 0 ? rc : PMIX_SUCCESS));
    if (rc >= 0)
        PMIx_IOF_deregister((size_t)rc, NULL, 0, NULL, NULL);
}

static void print_jobs(void)
{
    bool pull_only =
        getenv("TOOL_PROBE_PULL") != NULL && strcmp(getenv("TOOL_PROBE_PULL"), "only") == 0;
    pmix_info_t *info = NULL, *t = NULL;
    size_t ninfo = 0, nt = 0;
    char **names;
    pmix_status_t rc = query(PMIX_QUERY_NAMESPACES, NULL, &info, &ninfo);

    check("query namespaces", rc);
    if (rc != PMIX_SUCCESS)
        return;
    names = PMIx_Argv_split(info[0].value.data.string, ',');
    PMIx_Info_free(info, ninfo);
    for (size_t k = 0; names != NULL && names[k] != NULL; k++) {
        printf("job %s\n", names[k]);
        if (pull_only) {
            pull(names[k]);
            continue;
        }
        if (getenv("TOOL_PROBE_JOBDATA") != NULL)
            print_jobdata(names[k]);
        rc = query(PMIX_QUERY_PROC_TABLE, names[k], &t, &nt);
        check("query proc table", rc);
        if (rc != PMIX_SUCCESS)
            continue;
        pmix_data_array_t *da = t[0].value.data.darray;
        pmix_proc_info_t *pi = da->array;
        for (size_t i = 0; i < da->size; i++)
            printf("proc %u %s %ld %s %d %s\n", pi[i].proc.rank, pi[i].hostname, (long)pi[i].pid,
                   PMIx_Proc_state_string(pi[i].state), pi[i].exit_code, pi[i].executable_name);
        PMIx_Info_free(t, nt);
        if (getenv("TOOL_PROBE_KILL") != NULL) {
            pmix_proc_t victim;
            pmix_info_t dir;
            bool yes = true;
            PMIx_Load_procid(&victim, names[k], (pmix_rank_t)atol(getenv("TOOL_PROBE_KILL")));
            PMIx_Info_load(&dir, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL);
            rc = PMIx_Job_control(&victim, 1, &dir, 1, NULL, NULL);
            PMIx_Info_destruct(&dir);
            printf("kill %s %u %s\n", names[k], victim.rank, PMIx_Error_string(rc));
        }
        if (getenv("TOOL_PROBE_PULL") != NULL)
            pull(names[k]);
        rc = query(PMIX_QUERY_LOCAL_PROC_TABLE, names[k], &t, &nt);
        check("query local proc table", rc);
        if (rc != PMIX_SUCCESS)
            continue;
        da = t[0].value.data.darray;
        pi = da->array;
        for (size_t i = 0; i < da->size; i++)
            printf("local %u %s %ld\n", pi[i].proc.rank, pi[i].hostname, (long)pi[i].pid);
        PMIx_Info_free(t, nt);
    }
    PMIx_Argv_free(names);
    rc = query(PMIX_QUERY_NAMESPACE_INFO, NULL, &info, &ninfo);
    check("query namespace info", rc);
    if (rc != PMIX_SUCCESS)
        return;
    pmix_data_array_t *jobs = info[0].value.data.darray;
    for (size_t k = 0; jobs != NULL && k < jobs->size; k++) {
        pmix_data_array_t *one = ((pmix_info_t *)jobs->array)[k].value.data.darray;
        const char *ns = "?", *cmd = "?";
        for (size_t i = 0; one != NULL && i < one->size; i++) {
            pmix_info_t *e = &((pmix_info_t *)one->array)[i];
            if (PMIx_Check_key(e->key, PMIX_NSPACE))
                ns = e->value.data.string;
            else if (PMIx_Check_key(e->key, PMIX_CMD_LINE))
                cmd = e->value.data.string;
        }
        printf("cmd %s %s\n", ns, cmd);
    }
    PMIx_Info_free(info, ninfo);
}

int main(int argc, char **argv)
{
    pmix_info_t info[2];
    size_t n = 0;
    bool yes = true;
    const char *mode = argc > 1 ? argv[1] : "";
    const char *arg = argc > 2 ? argv[2] : NULL;
    int hold = argc > 3 ? atoi(argv[3]) : 0;
    pid_t pid = arg != NULL ? (pid_t)atol(arg) : 0;
    pmix_proc_t me;
    pmix_status_t rc;

    if (strcmp(mode, "pid") == 0 || strcmp(mode, "optional") == 0 ||
        strcmp(mode, "reattach") == 0 || strcmp(mode, "lost") == 0) {
        PMIx_Info_load(&info[n++], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
        if (strcmp(mode, "optional") == 0)
            PMIx_Info_load(&info[n++], PMIX_TOOL_CONNECT_OPTIONAL, &yes, PMIX_BOOL);
    } else if (strcmp(mode, "uri") == 0) {
        PMIx_Info_load(&info[n++], PMIX_SERVER_URI, arg, PMIX_STRING);
    } else if (strcmp(mode, "nspace") == 0) {
        PMIx_Info_load(&info[n++], PMIX_SERVER_NSPACE, arg, PMIX_STRING);
    } else if (strcmp(mode, "system") == 0) {
        PMIx_Info_load(&info[n++], PMIX_CONNECT_TO_SYSTEM, &yes, PMIX_BOOL);
    } else if (strcmp(mode, "sysfirst") == 0) {
        PMIx_Info_load(&info[n++], PMIX_CONNECT_SYSTEM_FIRST, &yes, PMIX_BOOL);
    } else if (strcmp(mode, "noconnect") == 0) {
        PMIx_Info_load(&info[n++], PMIX_TOOL_DO_NOT_CONNECT, &yes, PMIX_BOOL);
    } else if (strcmp(mode, "none") != 0) {
        fprintf(stderr, "usage: tool_probe pid|uri|nspace|system|sysfirst|none|optional|"
                        "noconnect|reattach|lost [ARG] [HOLD_S]\n");
        return 2;
    }
    rc = PMIx_tool_init(&me, n > 0 ? info : NULL, n);
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&info[i]);
    if (rc != PMIX_SUCCESS) {
        printf("init %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("init ok %s %u\n", me.nspace, me.rank);
    print_self();
    if (strcmp(mode, "noconnect") == 0 || strcmp(mode, "optional") == 0) {
        pmix_info_t *res = NULL;
        size_t nres = 0;
        /* no server: what needs one fails, without hanging */
        rc = query(PMIX_QUERY_PROC_TABLE, "x", &res, &nres);
        printf("unconnected query %s\n", PMIx_Error_string(rc));
        PMIx_Info_free(res, nres);
        if (strcmp(mode, "noconnect") == 0) {
            pmix_proc_t server;
            PMIx_Info_load(&info[0], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
            rc = PMIx_tool_attach_to_server(&me, &server, info, 1);
            PMIx_Info_destruct(&info[0]);
            check("attach_to_server", rc);
            if (rc == PMIX_SUCCESS) {
                printf("attached %s %u to %s %u\n", me.nspace, me.rank, server.nspace, server.rank);
                print_self();
                print_jobs();
            }
        }
    } else if (strcmp(mode, "reattach") == 0) {
        pmix_proc_t *servers = NULL, server;
        size_t ns = 0;
        check("get_servers", PMIx_tool_get_servers(&servers, &ns));
        if (ns == 1) {
            check("disconnect", PMIx_tool_disconnect(&servers[0]));
            PMIx_Proc_free(servers, ns);
            servers = NULL;
            check("get_servers", PMIx_tool_get_servers(&servers, &ns));
            printf("after disconnect %zu servers\n", ns);
            PMIx_Info_load(&info[0], PMIX_SERVER_PIDINFO, &pid, PMIX_PID);
            rc = PMIx_tool_attach_to_server(&me, &server, info, 1);
            PMIx_Info_destruct(&info[0]);
            check("attach_to_server", rc);
            if (rc == PMIX_SUCCESS)
                printf("attached %s %u to %s %u\n", me.nspace, me.rank, server.nspace, server.rank);
        }
        if (servers != NULL)
            PMIx_Proc_free(servers, ns);
        print_jobs();
    } else if (strcmp(mode, "lost") == 0) {
        pmix_proc_t *servers = NULL;
        size_t ns = 1;
        printf("attached\n");
        fflush(stdout);
        for (int i = 0; i < 150 && ns > 0; i++) {
            usleep(100000);
            PMIx_Proc_free(servers, ns);
            servers = NULL;
            check("get_servers", PMIx_tool_get_servers(&servers, &ns));
        }
        if (servers != NULL)
            PMIx_Proc_free(servers, ns);
        printf("after the server ended %zu servers\n", ns);
    } else {
        print_jobs();
    }
    fflush(stdout);
    if (hold > 0)
        sleep((unsigned)hold);
    check("tool_finalize", PMIx_tool_finalize());
    printf("finalized\n");
    return failed;
}
