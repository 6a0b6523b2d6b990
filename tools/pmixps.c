/*
 * pmixps - list the jobs a PMIx server runs and every process of each:
 * rank, host, pid, state, exit code, executable. Anchored on OpenPMIx's
 * `pps`, and written against the Standard's tool API alone: it attaches
 * as a tool (PMIx_tool_init), asks PMIX_QUERY_NAMESPACES, then
 * PMIX_QUERY_PROC_TABLE of each namespace, prints, and detaches.
 *
 * Which server: --pid, --uri, --nspace or --system, as PMIx_tool_init's
 * attributes PMIX_SERVER_PIDINFO, PMIX_SERVER_URI, PMIX_SERVER_NSPACE and
 * PMIX_CONNECT_TO_SYSTEM; without one, the library's search (the
 * environment, then the newest server of this user that accepts).
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmix_tool.h>

#include "toolcommon.h"

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: pmixps [options]\n"
            "\n"
            "List the jobs a running PMIx server (pmixrun) serves and every process of\n"
            "each: rank, host, pid, state, exit code and executable.\n"
            "\n"
            "Which server (at most one; default: the newest server of this user that\n"
            "accepts, or the one the environment names):\n"
            "  -p, --pid PID       the server whose process id is PID (pmixrun's pid)\n"
            "  -u, --uri URI       the server at URI (unix:PATH, as in PMIX_SERVER_URI)\n"
            "  -n, --nspace NS     the server that runs the job of namespace NS\n"
            "  -s, --system        this machine's system server\n"
            "\n"
            "Output:\n"
            "  -j, --json          one JSON object instead of a table\n"
            "  -N, --namespaces    the namespaces only, one per line\n"
            "  -h, --help          show this help\n"
            "\n"
            "Exit status: 0, or 1 if no server could be reached or asked, 2 for a\n"
            "usage error.\n");
}

static const char *state_name(pmix_proc_state_t s)
{
    switch (s) {
    case PMIX_PROC_STATE_PREPPED: return "prepped";
    case PMIX_PROC_STATE_RUNNING: return "running";
    case PMIX_PROC_STATE_CONNECTED: return "connected";
    case PMIX_PROC_STATE_TERMINATED: return "terminated";
    case PMIX_PROC_STATE_TERM_WO_SYNC: return "ended-without-finalize";
    case PMIX_PROC_STATE_TERM_NON_ZERO: return "exited-non-zero";
    case PMIX_PROC_STATE_ABORTED_BY_SIG: return "killed-by-signal";
    default: return PMIx_Proc_state_string(s);
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        TC_SERVER_OPTS,
        TC_SYSTEM_OPT,
        {"json", no_argument, NULL, 'j'},
        {"namespaces", no_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    pmix_info_t attr[2];
    size_t nattr = 0;
    bool json = false, names_only = false;
    int c, status = 0;
    pmix_proc_t me;
    pmix_status_t rc;

    while ((c = getopt_long(argc, argv, "p:u:n:sjNh", opts, NULL)) != -1) {
        int o = tc_server_opt("pmixps", true, c, optarg, attr, &nattr);
        if (o == 2)
            return 2;
        if (o == 1)
            continue;
        switch (c) {
        case 'j': json = true; break;
        case 'N': names_only = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "pmixps: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    rc = PMIx_tool_init(&me, nattr > 0 ? attr : NULL, nattr);
    for (size_t i = 0; i < nattr; i++)
        PMIx_Info_destruct(&attr[i]);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixps: cannot attach to a PMIx server: %s\n", PMIx_Error_string(rc));
        return 1;
    }

    char **names = tc_namespaces();
    if (names == NULL) {
        fprintf(stderr, "pmixps: the server did not say which jobs it runs\n");
        PMIx_tool_finalize();
        return 1;
    }

    pmix_proc_t *servers = NULL;
    size_t nservers = 0;
    (void)PMIx_tool_get_servers(&servers, &nservers);
    if (json) {
        printf("{\"tool\":{\"nspace\":");
        tc_json_str(me.nspace);
        printf(",\"rank\":%u}", me.rank);
        if (nservers > 0) {
            printf(",\"server\":{\"nspace\":");
            tc_json_str(servers[0].nspace);
            printf(",\"rank\":%u}", servers[0].rank);
        }
        printf(",\"jobs\":[");
    }
    for (size_t k = 0; names != NULL && names[k] != NULL; k++) {
        pmix_info_t *info = NULL;
        size_t ninfo = 0, n = 0;
        const pmix_proc_info_t *pi = NULL;

        if (names_only) {
            printf("%s\n", names[k]);
            continue;
        }
        rc = tc_proc_table(names[k], &info, &ninfo, &pi, &n);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "pmixps: no process table for %s: %s\n", names[k],
                    PMIx_Error_string(rc));
            status = 1;
            continue;
        }
        if (json) {
            printf("%s{\"nspace\":", k > 0 ? "," : "");
            tc_json_str(names[k]);
            printf(",\"procs\":[");
            for (size_t i = 0; i < n; i++) {
                printf("%s{\"rank\":%u,\"host\":", i > 0 ? "," : "", pi[i].proc.rank);
                tc_json_str(pi[i].hostname);
                printf(",\"pid\":%ld,\"state\":", (long)pi[i].pid);
                tc_json_str(state_name(pi[i].state));
                printf(",\"exit_code\":%d,\"executable\":", pi[i].exit_code);
                tc_json_str(pi[i].executable_name);
                printf("}");
            }
            printf("]}");
        } else {
            printf("%s%s: %zu process%s\n", k > 0 ? "\n" : "", names[k], n, n == 1 ? "" : "es");
            printf("%6s  %-20s %8s  %-22s %4s  %s\n", "RANK", "HOST", "PID", "STATE", "EXIT",
                   "EXECUTABLE");
            for (size_t i = 0; i < n; i++)
                printf("%6u  %-20s %8ld  %-22s %4d  %s\n", pi[i].proc.rank,
                       pi[i].hostname != NULL ? pi[i].hostname : "-", (long)pi[i].pid,
                       state_name(pi[i].state), pi[i].exit_code,
                       pi[i].executable_name != NULL ? pi[i].executable_name : "-");
        }
        PMIx_Info_free(info, ninfo);
    }
    if (json)
        printf("]}\n");
    PMIx_Argv_free(names);
    if (servers != NULL)
        PMIx_Proc_free(servers, nservers);
    fflush(stdout);
    rc = PMIx_tool_finalize();
    if (rc != PMIX_SUCCESS && status == 0)
        status = 1;
    return status;
}
