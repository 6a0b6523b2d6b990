/*
 * fence_bench - time PMIx_Init, fences, put+commit and Gets inside every
 * process of a job, and print one machine-readable line for the job.
 *
 *     fence_bench [--iters N] [--warmup N] [--collect-iters N] [--sizes LIST]
 *
 * It uses nothing but the Standard's API (<pmix.h>), so the same source is
 * built against pmixlab's headers (run under pmixrun) and against another
 * implementation's, such as OpenPMIx (run under Open MPI's mpirun);
 * bench/compare runs both side by side. Which library was really loaded is
 * read at run time from PMIx_Get_version() and printed as impl=; a build
 * made with -DFENCE_BENCH_EXPECT='"pmixlab"' (or '"openpmix"') refuses to
 * run on another one, so a build can never be measured under the wrong name.
 *
 * What each process measures, with clock_gettime(CLOCK_MONOTONIC):
 *
 *   init        from just before PMIx_Init to its return (one sample).
 *   barrier     PMIx_Fence(NULL, 0, NULL, 0), no data: --warmup fences, then
 *               --iters fences timed one by one; the process's figure is the
 *               median of its samples.
 *   for each size S of --sizes (default 1k,64k), --collect-iters timed
 *   iterations after one warm-up iteration, each of them:
 *     putcommit   PMIx_Put of a fresh S-byte value (its bytes depend on the
 *                 writer's rank and on the iteration) under one key per size,
 *                 then PMIx_Commit;
 *                 then an untimed plain fence, so that every process enters
 *                 the next one together;
 *     collect     PMIx_Fence with PMIX_COLLECT_DATA;
 *     getall      PMIx_Get of that key of every peer (N-1 Gets, no info
 *                 keys); the values are checked only after the clock is
 *                 read: type, size and every byte, including the iteration
 *                 they belong to (a stale value is an error);
 *                 then an untimed plain fence, so that no process posts the
 *                 next round's value while a peer still reads this one (a
 *                 server may serve a local peer's newest committed value at
 *                 once, without a fence: OpenPMIx does).
 *   Each of these has the median over the iterations as the process's figure.
 *
 * Aggregation without MPI: each process puts its figures (a byte object of
 * doubles) and its error count, a collecting fence moves them to everyone,
 * and rank 0 Gets them all. For each metric rank 0 prints the median across
 * processes (NAME_us) and the maximum across processes (NAME_max_us), in
 * microseconds. A barrier's figure differs between processes by when they
 * arrive: the last to arrive waits least; the maximum is the slowest
 * process's typical fence.
 *
 * Memory. The local PMIx server of both launchers is the process that
 * started the ranks (pmixrun, or mpirun), so rank 0 reads its parent's
 * /proc/PID/status (Linux): VmRSS after the warm-up barriers (srv_base_kb:
 * every process has connected, no data is there yet), then VmHWM (peak resident size) and VmRSS
 * after the last collect (srv_hwm_kb, srv_rss_kb), and its own VmHWM (cli_hwm_kb). server= is the
 * parent's command name, so the caller can check which launcher served the run. Fields that cannot
 * be read are -1.
 *
 * Output (rank 0, one line, keys stable; S is the size label: 1k, 64k,
 * 100b, 1m):
 *
 *   fence_bench impl=pmixlab n=8 iters=100 collect_iters=20 server=pmixrun
 *     init_us=... barrier_us=... putcommitS_us=... collectS_us=... getallS_us=...
 *     (then the same names with _max_us) srv_base_kb=... srv_hwm_kb=...
 *     srv_rss_kb=... cli_hwm_kb=... errors=0
 *
 * Exit status: 0 when every value every process read was right, 1 if any
 * value was wrong or missing (messages on stderr name the rank and the
 * peer), 2 for bad arguments. A failed fence or Put ends the job through
 * PMIx_Abort, since the remaining phases could not pair up.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, getppid */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h> /* before pmix.h: some pmix_common.h use strncasecmp */
#include <time.h>
#include <unistd.h>

#include <pmix.h>

#define MAX_SIZES 8
#define MAX_METRICS (2 + 3 * MAX_SIZES)

typedef struct options {
    int iters;         /* timed barrier fences */
    int warmup;        /* untimed barrier fences before them */
    int collect_iters; /* timed iterations per size */
    size_t sizes[MAX_SIZES];
    int nsizes;
} options;

/* The figures of one process, in the order of their names. */
typedef struct figures {
    int n;
    char names[MAX_METRICS][48];
    double us[MAX_METRICS];
} figures;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n-1]; sorts v. 0 when n is 0. */
static double median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A size for names: 1k, 64k, 1m, or bytes (100b). */
static void size_label(char *buf, size_t len, size_t size)
{
    if (size % (1024 * 1024) == 0)
        snprintf(buf, len, "%zum", size / (1024 * 1024));
    else if (size % 1024 == 0)
        snprintf(buf, len, "%zuk", size / 1024);
    else
        snprintf(buf, len, "%zub", size);
}

static int add_metric(figures *f, const char *name, const char *label, double us)
{
    snprintf(f->names[f->n], sizeof f->names[f->n], "%s%s", name, label);
    f->us[f->n] = us;
    return f->n++;
}

/* End the whole job: a phase failed in a way its peers cannot get past. */
static void die(const pmix_proc_t *me, const char *call, pmix_status_t rc)
{
    char msg[256];
    snprintf(msg, sizeof msg, "fence_bench: rank %u: %s failed: %s", me->rank, call,
             PMIx_Error_string(rc));
    fprintf(stderr, "%s\n", msg);
    PMIx_Abort(1, msg, NULL, 0);
    exit(1);
}

static void barrier(const pmix_proc_t *me)
{
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS)
        die(me, "PMIx_Fence", rc);
}

static void fence_collect(const pmix_proc_t *me)
{
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        die(me, "PMIx_Fence(PMIX_COLLECT_DATA)", rc);
}

static void put_bytes(const pmix_proc_t *me, const char *key, void *bytes, size_t size)
{
    pmix_value_t v;
    memset(&v, 0, sizeof v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = bytes;
    v.data.bo.size = size;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    if (rc != PMIX_SUCCESS)
        die(me, "PMIx_Put", rc);
}

/* The value `rank` puts in iteration `tag`: every 8-byte word depends on
 * both and on its position (words, so that checking 64 KiB from each of 63
 * peers stays cheap next to the figures measured). */
static void fill(unsigned char *buf, size_t size, pmix_rank_t rank, unsigned tag)
{
    uint64_t base = ((uint64_t)rank << 32 | tag) * 0x9e3779b97f4a7c15ull;
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w = (base + i) * 0xbf58476d1ce4e5b9ull;
        memcpy(buf + i, &w, 8);
    }
    for (; i < size; i++)
        buf[i] = (unsigned char)(base >> (i % 8 * 8));
}

/* Is `v` what `rank` put in iteration `tag`? `want` is scratch of `size`. */
static bool value_ok(const pmix_value_t *v, size_t size, pmix_rank_t rank, unsigned tag,
                     unsigned char *want)
{
    if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != size)
        return false;
    fill(want, size, rank, tag);
    return memcmp(want, v->data.bo.bytes, size) == 0;
}

/* For messages: which round a wrong value belongs to, if any near. */
static const char *which_round(const pmix_value_t *v, size_t size, pmix_rank_t rank, unsigned tag,
                               unsigned char *want)
{
    if (tag > 0 && value_ok(v, size, rank, tag - 1, want))
        return "it is the previous round's";
    if (value_ok(v, size, rank, tag + 1, want))
        return "it is the next round's";
    return "it is no round's";
}

/* A number from /proc/PID/status ("VmHWM:   1234 kB"), in kB; -1 if it
 * cannot be read (not Linux, or the process is gone). */
static long proc_status_kb(long pid, const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    long kb = -1;
    size_t flen = strlen(field);
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
            kb = strtol(line + flen + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kb;
}

/* The command name of process `pid` into buf ("unknown" if unreadable). */
static void proc_comm(long pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    FILE *f = fopen(path, "r");
    snprintf(buf, len, "unknown");
    if (f == NULL)
        return;
    if (fgets(buf, (int)len, f) == NULL)
        snprintf(buf, len, "unknown");
    fclose(f);
    buf[strcspn(buf, "\n ")] = '\0';
}

/* Which library answered: pmixlab, openpmix or other. */
static const char *impl_name(void)
{
    const char *v = PMIx_Get_version();
    if (v == NULL)
        return "other";
    if (strstr(v, "pmixlab") != NULL)
        return "pmixlab";
    if (strstr(v, "OpenPMIx") != NULL)
        return "openpmix";
    return "other";
}

static void usage(FILE *f)
{
    fprintf(f, "usage: fence_bench [--iters N] [--warmup N] [--collect-iters N] [--sizes LIST]\n"
               "  --iters N          timed barrier fences (default 100)\n"
               "  --warmup N         untimed barrier fences first (default 10)\n"
               "  --collect-iters N  timed put+commit+collect+get-all rounds per size (default "
               "20)\n"
               "  --sizes LIST       bytes each process puts, comma-separated, k/m suffixes\n"
               "                     (default 1k,64k; at most 8 sizes)\n");
}

static bool parse_count(const char *s, int min, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < min || v > 1000000)
        return false;
    *out = (int)v;
    return true;
}

static bool parse_sizes(const char *s, options *o)
{
    o->nsizes = 0;
    while (*s != '\0') {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (end == s || o->nsizes == MAX_SIZES)
            return false;
        if (*end == 'k' || *end == 'K')
            v *= 1024, end++;
        else if (*end == 'm' || *end == 'M')
            v *= 1024 * 1024, end++;
        if (v < 1 || v > 64ull * 1024 * 1024 || (*end != ',' && *end != '\0'))
            return false;
        o->sizes[o->nsizes++] = (size_t)v;
        s = *end == ',' ? end + 1 : end;
    }
    return o->nsizes > 0;
}

/* Returns -1 to go on, or an exit status. */
static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (val == NULL) {
            ok = false;
        } else if (strcmp(a, "--iters") == 0) {
            ok = parse_count(val, 1, &o->iters);
        } else if (strcmp(a, "--warmup") == 0) {
            ok = parse_count(val, 0, &o->warmup);
        } else if (strcmp(a, "--collect-iters") == 0) {
            ok = parse_count(val, 1, &o->collect_iters);
        } else if (strcmp(a, "--sizes") == 0) {
            ok = parse_sizes(val, o);
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "fence_bench: bad argument '%s'%s%s\n", a, val ? " " : "",
                    val ? val : "");
            usage(stderr);
            return 2;
        }
        i++;
    }
    return -1;
}

/* One size: warm-up round (tag 0), then the timed rounds. Adds the
 * putcommit, collect and getall figures; returns the number of wrong or
 * missing values this process read. */
static unsigned bench_size(const options *o, const pmix_proc_t *me, size_t size, uint32_t nprocs,
                           figures *f)
{
    char label[24], key[48];
    size_label(label, sizeof label, size);
    snprintf(key, sizeof key, "fence_bench.%s", label);
    unsigned char *buf = malloc(size), *want = malloc(size);
    pmix_value_t **vals = calloc(nprocs, sizeof *vals);
    double *pc = calloc((size_t)o->collect_iters, sizeof(double));
    double *co = calloc((size_t)o->collect_iters, sizeof(double));
    double *ga = calloc((size_t)o->collect_iters, sizeof(double));
    if (buf == NULL || want == NULL || vals == NULL || pc == NULL || co == NULL || ga == NULL) {
        fprintf(stderr, "fence_bench: rank %u: out of memory\n", me->rank);
        PMIx_Abort(1, "fence_bench: out of memory", NULL, 0);
        exit(1);
    }
    unsigned errors = 0;
    for (int it = -1; it < o->collect_iters; it++) {
        unsigned tag = (unsigned)(it + 1);
        fill(buf, size, me->rank, tag);

        double t0 = now_us();
        put_bytes(me, key, buf, size);
        pmix_status_t rc = PMIx_Commit();
        double t1 = now_us();
        if (rc != PMIX_SUCCESS)
            die(me, "PMIx_Commit", rc);

        barrier(me); /* everyone enters the collect together */
        double t2 = now_us();
        fence_collect(me);
        double t3 = now_us();

        pmix_status_t get_rc = PMIX_SUCCESS;
        pmix_rank_t bad_rank = 0;
        double t4 = now_us();
        for (uint32_t r = 0; r < nprocs; r++) {
            if (r == me->rank)
                continue;
            pmix_proc_t peer;
            PMIX_PROC_LOAD(&peer, me->nspace, r);
            vals[r] = NULL;
            rc = PMIx_Get(&peer, key, NULL, 0, &vals[r]);
            if (rc != PMIX_SUCCESS) {
                vals[r] = NULL;
                if (get_rc == PMIX_SUCCESS) {
                    get_rc = rc;
                    bad_rank = r;
                }
            }
        }
        double t5 = now_us();

        if (get_rc != PMIX_SUCCESS)
            fprintf(stderr, "fence_bench: rank %u: PMIx_Get(%s of rank %u) failed: %s\n", me->rank,
                    key, bad_rank, PMIx_Error_string(get_rc));
        for (uint32_t r = 0; r < nprocs; r++) {
            if (r == me->rank)
                continue;
            if (vals[r] == NULL) {
                errors++;
                continue;
            }
            if (!value_ok(vals[r], size, r, tag, want)) {
                if (errors < 3)
                    fprintf(stderr,
                            "fence_bench: rank %u: %s of rank %u in round %u is wrong "
                            "(type %d, %zu bytes; expected %zu bytes of that round; %s)\n",
                            me->rank, key, r, tag, (int)vals[r]->type,
                            vals[r]->type == PMIX_BYTE_OBJECT ? vals[r]->data.bo.size : 0, size,
                            which_round(vals[r], size, r, tag, want));
                errors++;
            }
            PMIX_VALUE_RELEASE(vals[r]);
            vals[r] = NULL;
        }
        /* Nobody posts the next round's value while a peer still reads
         * this one: a server may hand out a local peer's newest committed
         * value at once (OpenPMIx does), which the check would call wrong. */
        barrier(me);
        if (it >= 0) {
            pc[it] = t1 - t0;
            co[it] = t3 - t2;
            ga[it] = t5 - t4;
        }
    }
    add_metric(f, "putcommit", label, median(pc, o->collect_iters));
    add_metric(f, "collect", label, median(co, o->collect_iters));
    add_metric(f, "getall", label, median(ga, o->collect_iters));
    free(buf);
    free(want);
    free(vals);
    free(pc);
    free(co);
    free(ga);
    return errors;
}

/* Everyone's figures to rank 0, which prints the line. Returns the job's
 * error count on rank 0 (0 elsewhere). */
static unsigned report(const options *o, const pmix_proc_t *me, uint32_t nprocs, const figures *f,
                       unsigned errors, const char *server, long srv[3], long cli_hwm)
{
    /* The figures and then the error count, as doubles. */
    double mine[MAX_METRICS + 1];
    memcpy(mine, f->us, (size_t)f->n * sizeof(double));
    mine[f->n] = (double)errors;
    put_bytes(me, "fence_bench.results", mine, (size_t)(f->n + 1) * sizeof(double));
    pmix_status_t rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        die(me, "PMIx_Commit", rc);
    fence_collect(me);
    if (me->rank != 0)
        return 0;

    double *all = calloc((size_t)nprocs * (size_t)(f->n + 1), sizeof(double));
    double *col = calloc(nprocs, sizeof(double));
    if (all == NULL || col == NULL) {
        fprintf(stderr, "fence_bench: out of memory\n");
        free(all);
        free(col);
        return 1;
    }
    unsigned total = 0;
    for (uint32_t r = 0; r < nprocs; r++) {
        double *row = &all[(size_t)r * (size_t)(f->n + 1)];
        if (r == 0) {
            memcpy(row, mine, (size_t)(f->n + 1) * sizeof(double));
            continue;
        }
        pmix_proc_t peer;
        pmix_value_t *v = NULL;
        PMIX_PROC_LOAD(&peer, me->nspace, r);
        rc = PMIx_Get(&peer, "fence_bench.results", NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v->type != PMIX_BYTE_OBJECT ||
            v->data.bo.size != (size_t)(f->n + 1) * sizeof(double)) {
            fprintf(stderr, "fence_bench: rank 0: the figures of rank %u are missing: %s\n", r,
                    PMIx_Error_string(rc));
            total++;
        } else {
            memcpy(row, v->data.bo.bytes, v->data.bo.size);
        }
        if (v != NULL)
            PMIX_VALUE_RELEASE(v);
    }

    printf("fence_bench impl=%s n=%u iters=%d collect_iters=%d server=%s", impl_name(), nprocs,
           o->iters, o->collect_iters, server);
    for (int pass = 0; pass < 2; pass++) {
        for (int m = 0; m < f->n; m++) {
            double mx = 0;
            for (uint32_t r = 0; r < nprocs; r++) {
                col[r] = all[(size_t)r * (size_t)(f->n + 1) + (size_t)m];
                mx = col[r] > mx ? col[r] : mx;
            }
            double value = pass == 0 ? median(col, (int)nprocs) : mx;
            printf(" %s%s_us=%.1f", f->names[m], pass == 0 ? "" : "_max", value);
        }
    }
    for (uint32_t r = 0; r < nprocs; r++)
        total += (unsigned)all[(size_t)r * (size_t)(f->n + 1) + (size_t)f->n];
    printf(" srv_base_kb=%ld srv_hwm_kb=%ld srv_rss_kb=%ld cli_hwm_kb=%ld errors=%u\n", srv[0],
           srv[1], srv[2], cli_hwm, total);
    fflush(stdout);
    free(all);
    free(col);
    return total;
}

int main(int argc, char **argv)
{
    options o = {
        .iters = 100, .warmup = 10, .collect_iters = 20, .sizes = {1024, 65536}, .nsizes = 2};
    int st = parse_args(argc, argv, &o);
    if (st >= 0)
        return st;

    pmix_proc_t myproc; /* in main's frame: pmixsim runs many copies in one process */
    const pmix_proc_t *me = &myproc;
    double t0 = now_us();
    pmix_status_t rc = PMIx_Init(&myproc, NULL, 0);
    double t1 = now_us();
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr,
                "fence_bench: PMIx_Init failed: %s (is this running under a PMIx "
                "launcher?)\n",
                PMIx_Error_string(rc));
        return 1;
    }
#ifdef FENCE_BENCH_EXPECT
    if (strcmp(impl_name(), FENCE_BENCH_EXPECT) != 0) {
        fprintf(stderr,
                "fence_bench: built to measure %s, but the PMIx library loaded is \"%s\"; "
                "refusing to run\n",
                FENCE_BENCH_EXPECT, PMIx_Get_version());
        PMIx_Finalize(NULL, 0);
        return 1;
    }
#endif

    pmix_proc_t job;
    pmix_value_t *val = NULL;
    PMIX_PROC_LOAD(&job, me->nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val->type != PMIX_UINT32)
        die(me, "PMIx_Get(PMIX_JOB_SIZE)", rc);
    uint32_t nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);

    figures f = {0};
    add_metric(&f, "init", "", t1 - t0);

    /* Barrier: the first fence also means every process has initialized. */
    for (int i = 0; i < o.warmup; i++)
        barrier(me);
    long ppid = (long)getppid(), srv[3] = {-1, -1, -1};
    char server[64] = "-";
    if (me->rank == 0) {
        proc_comm(ppid, server, sizeof server);
        srv[0] = proc_status_kb(ppid, "VmRSS");
    }
    double *samples = calloc((size_t)o.iters, sizeof(double));
    if (samples == NULL)
        die(me, "calloc", PMIX_ERR_NOMEM);
    for (int i = 0; i < o.iters; i++) {
        double a = now_us();
        barrier(me);
        samples[i] = now_us() - a;
    }
    add_metric(&f, "barrier", "", median(samples, o.iters));
    free(samples);

    unsigned errors = 0;
    for (int s = 0; s < o.nsizes; s++)
        errors += bench_size(&o, me, o.sizes[s], nprocs, &f);

    long cli_hwm = -1;
    if (me->rank == 0) {
        srv[1] = proc_status_kb(ppid, "VmHWM");
        srv[2] = proc_status_kb(ppid, "VmRSS");
        cli_hwm = proc_status_kb((long)getpid(), "VmHWM");
    }
    unsigned job_errors = report(&o, me, nprocs, &f, errors, server, srv, cli_hwm);

    barrier(me); /* rank 0 has read everyone's figures */
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "fence_bench: rank %u: PMIx_Finalize failed: %s\n", me->rank,
                PMIx_Error_string(rc));
        return 1;
    }
    return errors == 0 && job_errors == 0 ? 0 : 1;
}
