/*
 * pmixstack - the call stacks of every process of a running job, merged by
 * equality, so a hung job shows at a glance who waits where:
 *
 *   ranks 0-2: main > PMIx_Fence > ... > pthread_cond_wait
 *   rank 3: main > sleep > clock_nanosleep
 *
 * Anchored on STAT (the stack trace analysis tool), flattened: each thread
 * of each rank gives one path from its outermost frame to its innermost,
 * and equal paths are printed once with the ranks that have them.
 *
 * It attaches as a tool (PMIx_tool_init, as pmixps) and reads the job's
 * process table (PMIX_QUERY_PROC_TABLE: rank, host, pid). Then it asks the
 * server to collect the stacks ("pmixlab.query.stacks", with the namespace
 * and the timeout per process): a pmixrun over daemons (--nodes) has each
 * daemon run gdb in batch mode on its own ranks, on its own node, and
 * answers with their text, a line "@rank R" before each rank's
 * (docs/pmixd.md, "Tools over daemons"). A server that does not collect
 * (pmixrun on one node) answers no such key, and pmixstack runs gdb itself
 * on each rank that runs on this machine: one whose pid here is a process
 * whose environment names the job and the rank (PMIX_NAMESPACE,
 * PMIX_RANK). Ranks elsewhere are named, by host, in an error, and the
 * exit status is 1. Both ways, gdb's output is parsed and merged alike.
 */
#include <ctype.h>
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
    fprintf(f, "Usage: pmixstack [options]\n"
               "\n"
               "Print the call stacks of every process of a running job, merged: each\n"
               "distinct stack once, with the ranks whose threads are in it (outermost\n"
               "frame first). Stacks are collected with gdb in batch mode: by each node's\n"
               "daemon for a job over daemons (pmixrun --nodes), else here for the ranks\n"
               "that run on this machine (the others' hosts are named in an error).\n"
               "\n"
               "Which job (at most one; default: the newest server of this user that\n"
               "accepts, and every job it runs):\n"
               "  -p, --pid PID       the jobs of the pmixrun whose process id is PID\n"
               "  -u, --uri URI       the jobs of the server at URI (unix:PATH)\n"
               "  -n, --nspace NS     the job of namespace NS\n"
               "\n"
               "Output:\n"
               "  -j, --json          one JSON object instead of text\n"
               "  -a, --all-frames    keep the frames outside main (_start, libc's)\n"
               "  -t, --timeout S     give up on one process's stack after S seconds (30)\n"
               "  -h, --help          show this help\n"
               "\n"
               "Exit status: 0; 1 if no server could be reached, a stack could not be\n"
               "collected, or ranks run on other machines; 2 for a usage error.\n");
}

/* One distinct stack: its frames (outermost first, joined by " > ") and the
 * ranks that have a thread in it (sorted, each once). */
typedef struct {
    char *path;
    uint32_t *ranks;
    size_t nranks;
} merged_t;

typedef struct {
    merged_t *v;
    size_t n;
} stacks_t;

static void stacks_add(stacks_t *s, const char *path, uint32_t rank)
{
    size_t i;
    for (i = 0; i < s->n && strcmp(s->v[i].path, path) != 0; i++)
        ;
    if (i == s->n) {
        s->v = realloc(s->v, (s->n + 1) * sizeof(*s->v));
        if (s->v == NULL)
            abort();
        s->v[i].path = strdup(path);
        s->v[i].ranks = NULL;
        s->v[i].nranks = 0;
        s->n++;
    }
    merged_t *st = &s->v[i];
    if (st->nranks > 0 && st->ranks[st->nranks - 1] == rank)
        return; /* two threads of one rank in one stack: the rank once */
    st->ranks = realloc(st->ranks, (st->nranks + 1) * sizeof(*st->ranks));
    if (st->ranks == NULL)
        abort();
    st->ranks[st->nranks++] = rank;
}

static int cmp_stack(const void *a, const void *b)
{
    const merged_t *x = a, *y = b;
    /* the most ranks first, then by lowest rank, then by path */
    if (x->nranks != y->nranks)
        return x->nranks > y->nranks ? -1 : 1;
    if (x->ranks[0] != y->ranks[0])
        return x->ranks[0] < y->ranks[0] ? -1 : 1;
    return strcmp(x->path, y->path);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* "0-3", "0-1,5": sorted ranks as ranges. */
static void print_ranks(const uint32_t *r, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1] == r[j] + 1)
            j++;
        printf("%s%u", i > 0 ? "," : "", r[i]);
        if (j > i)
            printf("-%u", r[j]);
        i = j + 1;
    }
}

/* Whether `pid` is a process here whose environment names rank `rank` of
 * job `ns` (PMIX_NAMESPACE and PMIX_RANK, as its launcher gave them). */
static bool is_local_rank(pid_t pid, const char *ns, uint32_t rank)
{
    char path[64], want_ns[PMIX_MAX_NSLEN + 32], want_rank[32], buf[65536];
    bool got_ns = false, got_rank = false;
    size_t len;
    FILE *f;

    if (pid <= 0)
        return false;
    snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return false;
    len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    snprintf(want_ns, sizeof(want_ns), "PMIX_NAMESPACE=%s", ns);
    snprintf(want_rank, sizeof(want_rank), "PMIX_RANK=%u", rank);
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
        got_ns |= strcmp(buf + i, want_ns) == 0;
        got_rank |= strcmp(buf + i, want_rank) == 0;
    }
    return got_ns && got_rank;
}

/* The function name of one gdb frame line ("#3  0x... in NAME (...) at
 * ..." or "#3  NAME (...) at ..."), into `out`. */
static void frame_name(const char *line, char *out, size_t outlen)
{
    const char *p = line + 1, *in, *e;

    while (isdigit((unsigned char)*p))
        p++;
    while (*p == ' ')
        p++;
    if (strncmp(p, "0x", 2) == 0 && (in = strstr(p, " in ")) != NULL)
        p = in + 4;
    for (e = p; *e != '\0' && *e != ' ' && *e != '\n'; e++)
        ;
    if (e == p) {
        snprintf(out, outlen, "??");
        return;
    }
    snprintf(out, outlen, "%.*s", (int)(e - p), p);
}

/* Ends the thread whose frames (innermost first) are in `frames`: adds its
 * path to `s` for `rank`. */
static void end_thread(stacks_t *s, char **frames, size_t nframes, uint32_t rank, bool all)
{
    size_t top = nframes; /* frames [0, top) are printed, from top-1 down */
    char path[8192];
    size_t len = 0;

    if (nframes == 0)
        return;
    if (!all) {
        for (size_t i = 0; i < nframes; i++)
            if (strcmp(frames[i], "main") == 0) {
                top = i + 1;
                break;
            }
    }
    path[0] = '\0';
    for (size_t i = top; i-- > 0;) {
        int w =
            snprintf(path + len, sizeof(path) - len, "%s%s", i + 1 < top ? " > " : "", frames[i]);
        if (w < 0 || (size_t)w >= sizeof(path) - len)
            break;
        len += (size_t)w;
    }
    stacks_add(s, path, rank);
}

/* gdb's output for one process, read line by line: the frames of the
 * thread being read (innermost first). */
typedef struct {
    char *frames[512];
    size_t nframes;
    bool got; /* a frame was seen */
} gdb_parse_t;

static void gdb_flush(gdb_parse_t *g, stacks_t *s, uint32_t rank, bool all)
{
    end_thread(s, g->frames, g->nframes, rank, all);
    for (size_t i = 0; i < g->nframes; i++)
        free(g->frames[i]);
    g->nframes = 0;
}

static void gdb_line(gdb_parse_t *g, const char *line, stacks_t *s, uint32_t rank, bool all)
{
    if (strncmp(line, "Thread ", 7) == 0) {
        gdb_flush(g, s, rank, all);
    } else if (line[0] == '#' && isdigit((unsigned char)line[1]) &&
               g->nframes < sizeof(g->frames) / sizeof(g->frames[0])) {
        char name[512];
        frame_name(line, name, sizeof(name));
        g->frames[g->nframes++] = strdup(name);
        g->got = true;
    }
}

/* Collects every thread's stack of `pid` with gdb; 0, or -1 if gdb gave no
 * frame (it could not attach, or timed out). */
static int collect(pid_t pid, uint32_t rank, int timeout_s, bool all, stacks_t *s)
{
    char cmd[512], line[4096];
    gdb_parse_t g = {.nframes = 0, .got = false};
    FILE *p;

    snprintf(cmd, sizeof(cmd),
             "timeout -s KILL %d gdb -nx -batch -p %ld -ex 'set width 0' "
             "-ex 'set print frame-arguments none' -ex 'thread apply all bt' "
             "</dev/null 2>/dev/null",
             timeout_s, (long)pid);
    p = popen(cmd, "r");
    if (p == NULL)
        return -1;
    while (fgets(line, sizeof(line), p) != NULL)
        gdb_line(&g, line, s, rank, all);
    gdb_flush(&g, s, rank, all);
    pclose(p);
    return g.got ? 0 : -1;
}

/* Asks the server to collect the stacks of job `ns` on its nodes (a
 * pmixrun over daemons: each daemon runs gdb on its own ranks; the key
 * and its text are pmixrun's, sockhost/pmixrun.h NTOOL_QUERY_STACKS) and
 * merges them into `s`; got[i] says whether table entry i had a frame.
 * PMIX_SUCCESS, or the server's error (a server that does not collect:
 * PMIX_ERR_NOT_FOUND or PMIX_ERR_NOT_SUPPORTED). */
static pmix_status_t server_stacks(const char *ns, const pmix_proc_info_t *pi, size_t n,
                                   int timeout_s, bool all, stacks_t *s, bool *got)
{
    pmix_query_t *q = PMIx_Query_create(1);
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    uint32_t secs = (uint32_t)timeout_s;
    pmix_status_t rc;

    if (q == NULL)
        return PMIX_ERR_NOMEM;
    PMIx_Argv_append_nosize(&q->keys, "pmixlab.query.stacks");
    q->qualifiers = PMIx_Info_create(2);
    q->nqual = 2;
    PMIx_Info_load(&q->qualifiers[0], PMIX_NSPACE, ns, PMIX_STRING);
    PMIx_Info_load(&q->qualifiers[1], "pmixlab.stacks.timeout", &secs, PMIX_UINT32);
    rc = PMIx_Query_info(q, 1, &info, &ninfo);
    PMIx_Query_free(q, 1);
    if (rc != PMIX_SUCCESS) {
        PMIx_Info_free(info, ninfo);
        return rc;
    }
    if (ninfo < 1 || info[0].value.type != PMIX_STRING) {
        PMIx_Info_free(info, ninfo);
        return PMIX_ERR_BAD_PARAM;
    }
    /* "@rank R" lines, each followed by gdb's output for R */
    gdb_parse_t g = {.nframes = 0, .got = false};
    long cur = -1;
    char *text = info[0].value.data.string, *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        long r;
        if (sscanf(line, "@rank %ld", &r) == 1) {
            if (cur >= 0)
                gdb_flush(&g, s, (uint32_t)cur, all);
            for (size_t i = 0; cur >= 0 && i < n; i++)
                if (pi[i].proc.rank == (uint32_t)cur)
                    got[i] |= g.got;
            g.got = false;
            cur = r;
        } else if (cur >= 0) {
            gdb_line(&g, line, s, (uint32_t)cur, all);
        }
    }
    if (cur >= 0)
        gdb_flush(&g, s, (uint32_t)cur, all);
    for (size_t i = 0; cur >= 0 && i < n; i++)
        if (pi[i].proc.rank == (uint32_t)cur)
            got[i] |= g.got;
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}

/* Collects, merges and prints the stacks of job `ns`; 0 or 1 (as the exit
 * status). `first` says whether this is the first job printed. */
static int one_job(const char *ns, bool json, bool first, bool all, int timeout_s)
{
    pmix_info_t *info = NULL;
    size_t ninfo = 0, n = 0;
    const pmix_proc_info_t *pi = NULL;
    stacks_t s = {NULL, 0};
    char **remote_hosts = NULL;
    uint32_t *failed = NULL;
    size_t nfailed = 0;
    int status = 0;
    pmix_status_t rc;

    rc = tc_proc_table(ns, &info, &ninfo, &pi, &n);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixstack: no process table for %s: %s\n", ns, PMIx_Error_string(rc));
        return 1;
    }
    bool *got = calloc(n > 0 ? n : 1, sizeof(*got));
    if (got == NULL)
        abort();
    /* A server over daemons collects on every node; else, here. */
    bool by_server = server_stacks(ns, pi, n, timeout_s, all, &s, got) == PMIX_SUCCESS;
    for (size_t i = 0; i < n; i++) {
        if (by_server) {
            if (!got[i]) { /* not started, gone, or its collector failed */
                failed = realloc(failed, (nfailed + 1) * sizeof(*failed));
                if (failed == NULL)
                    abort();
                failed[nfailed++] = pi[i].proc.rank;
            }
            continue;
        }
        if (pi[i].pid <= 0) { /* not started (yet): no stack to have */
            failed = realloc(failed, (nfailed + 1) * sizeof(*failed));
            if (failed == NULL)
                abort();
            failed[nfailed++] = pi[i].proc.rank;
            continue;
        }
        if (!is_local_rank(pi[i].pid, ns, pi[i].proc.rank)) {
            const char *h = pi[i].hostname != NULL ? pi[i].hostname : "?";
            bool seen = false;
            for (size_t k = 0; remote_hosts != NULL && remote_hosts[k] != NULL; k++)
                seen |= strcmp(remote_hosts[k], h) == 0;
            if (!seen)
                PMIx_Argv_append_nosize(&remote_hosts, h);
            continue;
        }
        if (collect(pi[i].pid, pi[i].proc.rank, timeout_s, all, &s) != 0) {
            failed = realloc(failed, (nfailed + 1) * sizeof(*failed));
            if (failed == NULL)
                abort();
            failed[nfailed++] = pi[i].proc.rank;
        }
    }
    for (size_t i = 0; i < s.n; i++)
        qsort(s.v[i].ranks, s.v[i].nranks, sizeof(uint32_t), cmp_u32);
    qsort(s.v, s.n, sizeof(*s.v), cmp_stack);

    if (json) {
        printf("%s{\"nspace\":", first ? "" : ",");
        tc_json_str(ns);
        printf(",\"nprocs\":%zu,\"stacks\":[", n);
        for (size_t i = 0; i < s.n; i++) {
            printf("%s{\"ranks\":[", i > 0 ? "," : "");
            for (size_t k = 0; k < s.v[i].nranks; k++)
                printf("%s%u", k > 0 ? "," : "", s.v[i].ranks[k]);
            printf("],\"frames\":[");
            /* the path split back at " > " */
            const char *p = s.v[i].path;
            for (bool f1 = true; *p != '\0'; f1 = false) {
                const char *e = strstr(p, " > ");
                size_t l = e != NULL ? (size_t)(e - p) : strlen(p);
                char buf[512];
                snprintf(buf, sizeof(buf), "%.*s", (int)l, p);
                if (!f1)
                    putchar(',');
                tc_json_str(buf);
                p += l + (e != NULL ? 3 : 0);
            }
            printf("]}");
        }
        printf("],\"failed_ranks\":[");
        for (size_t k = 0; k < nfailed; k++)
            printf("%s%u", k > 0 ? "," : "", failed[k]);
        printf("],\"remote_hosts\":[");
        for (size_t k = 0; remote_hosts != NULL && remote_hosts[k] != NULL; k++) {
            if (k > 0)
                putchar(',');
            tc_json_str(remote_hosts[k]);
        }
        printf("]}");
    } else {
        printf("%s%s: %zu process%s\n", first ? "" : "\n", ns, n, n == 1 ? "" : "es");
        for (size_t i = 0; i < s.n; i++) {
            printf("rank%s ", s.v[i].nranks == 1 ? "" : "s");
            print_ranks(s.v[i].ranks, s.v[i].nranks);
            printf(": %s\n", s.v[i].path);
        }
    }
    if (nfailed > 0) {
        fprintf(stderr, "pmixstack: %s: no stack from rank%s ", ns, nfailed == 1 ? "" : "s");
        fflush(stdout);
        for (size_t k = 0; k < nfailed; k++)
            fprintf(stderr, "%s%u", k > 0 ? "," : "", failed[k]);
        fprintf(stderr, " (not running, or gdb could not attach or timed out)\n");
        status = 1;
    }
    if (remote_hosts != NULL) {
        char *list = PMIx_Argv_join(remote_hosts, ',');
        fprintf(stderr,
                "pmixstack: %s: ranks on other machines (%s): collecting them needs a "
                "daemon on each node, which pmixstack does not start yet\n",
                ns, list != NULL ? list : "?");
        free(list);
        status = 1;
    }
    for (size_t i = 0; i < s.n; i++) {
        free(s.v[i].path);
        free(s.v[i].ranks);
    }
    free(s.v);
    free(failed);
    free(got);
    PMIx_Argv_free(remote_hosts);
    PMIx_Info_free(info, ninfo);
    return status;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        TC_SERVER_OPTS,
        {"json", no_argument, NULL, 'j'},
        {"all-frames", no_argument, NULL, 'a'},
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    pmix_info_t attr[1];
    size_t nattr = 0;
    const char *only_ns = NULL;
    bool json = false, all = false;
    int c, status = 0, timeout_s = 30;
    pmix_proc_t me;
    pmix_status_t rc;
    char *end, **names;

    while ((c = getopt_long(argc, argv, "p:u:n:jat:h", opts, NULL)) != -1) {
        int o = tc_server_opt("pmixstack", false, c, optarg, attr, &nattr);
        if (o == 2)
            return 2;
        if (c == 'n' && o == 1)
            only_ns = optarg;
        if (o == 1)
            continue;
        switch (c) {
        case 'j': json = true; break;
        case 'a': all = true; break;
        case 't': {
            long v = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || v <= 0 || v > 3600) {
                fprintf(stderr, "pmixstack: --timeout needs seconds (1-3600), not '%s'\n", optarg);
                return 2;
            }
            timeout_s = (int)v;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "pmixstack: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    rc = PMIx_tool_init(&me, nattr > 0 ? attr : NULL, nattr);
    for (size_t i = 0; i < nattr; i++)
        PMIx_Info_destruct(&attr[i]);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixstack: cannot attach to a PMIx server: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (only_ns != NULL) {
        names = NULL;
        PMIx_Argv_append_nosize(&names, only_ns);
    } else if ((names = tc_namespaces()) == NULL) {
        fprintf(stderr, "pmixstack: the server did not say which jobs it runs\n");
        PMIx_tool_finalize();
        return 1;
    }
    if (json)
        printf("{\"jobs\":[");
    for (size_t k = 0; names[k] != NULL; k++)
        status |= one_job(names[k], json, k == 0, all, timeout_s);
    if (json)
        printf("]}\n");
    PMIx_Argv_free(names);
    fflush(stdout);
    rc = PMIx_tool_finalize();
    if (rc != PMIX_SUCCESS && status == 0)
        status = 1;
    return status;
}
