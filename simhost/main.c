/*
 * main.c - pmixsim's command line.
 *
 *   pmixsim [OPTIONS] WORKLOAD [ARGS...]
 *   pmixsim [OPTIONS] ./PROGRAM.so [ARGS...]
 *   pmixsim --list
 *
 * One run builds the platform, creates one node actor per simulated node
 * (its server engine registered with the job) and one process actor per
 * simulated process (running WORKLOAD: a built-in program, or one loaded
 * from a shared object, program.c), runs the simulation to its end and
 * reports every fence (report.c). With --algo all, the run is repeated in a
 * child process per algorithm of the catalog (SimGrid runs one simulation
 * per process), and the reports follow each other.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pmixsim.h"
#include "px_hostcore.h"
#include "scenario.h"

#define MAX_NODES 65536u

#ifdef __SANITIZE_ADDRESS__
#define SANITIZED 1 /* sanitized frames are larger: stacks of 1 MiB at least */
#else
#define SANITIZED 0
#endif
#define MAX_SG_ARGS 64

#if SANITIZED
/* LeakSanitizer: an actor killed by a fault loses what its frames held, as
 * a crashed process does (simplat.c, sim_run_doomed). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:sim_run_doomed\n";
}
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pmixsim [OPTIONS] WORKLOAD [ARGS...]\n"
            "       pmixsim [OPTIONS] ./PROGRAM.so [ARGS...]\n"
            "       pmixsim --list\n"
            "       pmixsim run FILE | suite DIR ...   scenarios (pmixsim run --help)\n"
            "\n"
            "Runs WORKLOAD (a PMIx program built into pmixsim, or one built as a shared\n"
            "object: a path with a '/') on every simulated process of a job, with a real\n"
            "PMIx server per simulated node, inside SimGrid.\n"
            "\n"
            "  --nodes N             simulated nodes (1..%u; default 4)\n"
            "  --ppn P               processes per node (default 1)\n"
            "  --topology T          crossbar (default), fattree, torus, dragonfly\n"
            "  --topology FILE       the network a description gives, as pmixrun reads it:\n"
            "                        Slurm's topology.conf (a regular tree: a fat tree of\n"
            "                        its levels) or a SimGrid platform file's first cluster\n"
            "                        (its topology and topo_parameters) and its planes\n"
            "                        (pmixlab.plane clusters, PlaneName= lines); without\n"
            "                        --nodes, every node it names\n"
            "  --topo-params S       SimGrid's topo_parameters for that topology\n"
            "  --radix R --taper T   fat tree switches (default radix 32, taper 1)\n"
            "  --platform FILE       a SimGrid platform instead (its first N hosts but\n"
            "                        its planes' NICs; without --nodes, all of them);\n"
            "                        coordinates and planes as pmixrun --topology FILE\n"
            "  --planes 1|2          network planes, each with its own links and switches\n"
            "                        (generated topologies only; default 1)\n"
            "  --lat TIME            latency of every node link (default 1us)\n"
            "  --bw RATE             bandwidth of every node link (default 12.5GBps)\n"
            "  --loopback-lat TIME   the node's loopback link (default 100ns)\n"
            "  --loopback-bw RATE    (default 50GBps)\n"
            "  --model cm02|lv08     network model (default cm02, without cross-traffic)\n"
            "  --algo NAME|all       collective algorithm (default: PMIXLAB_FENCE_ALGO and\n"
            "                        PMIXLAB_BARRIER_ALGO, else auto); all: one run each\n"
            "  --seed S              seed of the run (default 1): faults draw from it\n"
            "  --fault SPEC          repeatable: node:ID@T (crash), proc:RANK@T,\n"
            "                        proc:RANK@fence:K (killed as it enters fence K),\n"
            "                        link:ID[.P]@T (a node's links cut), plane:P@T;\n"
            "                        ID and RANK may be rand, T a range T1..T2\n"
            "  --coll-timeout TIME   timeout of fences that set no PMIX_TIMEOUT (default:\n"
            "                        none; 1s with --fault)\n"
            "  --detect TIME         a crashed node is known to the others after TIME\n"
            "                        (their failure detector; default 1ms)\n"
            "  --events FILE         append the event log of the run to FILE\n"
            "  --pset NAME:COUNT     repeatable: the next COUNT ranks are an app in process\n"
            "                        set NAME (as `pmixrun -n COUNT --pset NAME`); ranks\n"
            "                        past the sets are one more app in none\n"
            "  --cpu none|measured|model:A[,B]\n"
            "                        charge the library's CPU time to simulated time:\n"
            "                        as measured per message, or A s per message plus\n"
            "                        B s per byte (default none)\n"
            "  --stack-kib K         stack of every actor (default 128; 32 past 30,000\n"
            "                        actors, which run without guard pages)\n"
            "  --server-actors       run every node's server in an actor of its own; by\n"
            "                        default, with one process per node and no --cpu,\n"
            "                        --fault or second plane, the process's actor also\n"
            "                        runs its node's server (less time and memory;\n"
            "                        docs/simulation.md)\n"
            "  --json FILE           write the report as JSON too\n"
            "  --privatize           a copy of a loaded PROGRAM.so per process, each with\n"
            "                        its own globals (at most %u processes); without it,\n"
            "                        a program with writable globals is refused\n"
            "  --quiet               no progress line\n"
            "  --cfg=ITEM:VALUE      passed to SimGrid (also --log=...)\n"
            "  --list                list the workloads and the algorithms\n",
            MAX_NODES, SIM_PRIVATIZE_MAX);
}

static int bad(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "pmixsim: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n(pmixsim --help for the options)\n");
    return 2;
}

static bool parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0 || v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* "1us", "2e-6", "100ns", "0.5ms", "1s". */
static bool parse_time(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);

    if (end == s || !isfinite(v) || v < 0)
        return false;
    if (*end == '\0' || strcmp(end, "s") == 0)
        *out = v;
    else if (strcmp(end, "ms") == 0)
        *out = v * 1e-3;
    else if (strcmp(end, "us") == 0)
        *out = v * 1e-6;
    else if (strcmp(end, "ns") == 0)
        *out = v * 1e-9;
    else
        return false;
    return true;
}

/* Bytes per second: "12.5GBps", "12.5e9", "100MBps", "1G". */
static bool parse_rate(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end), mult = 1;

    if (end == s || !isfinite(v) || v <= 0)
        return false;
    if (*end == 'k' || *end == 'K')
        mult = 1e3, end++;
    else if (*end == 'M')
        mult = 1e6, end++;
    else if (*end == 'G')
        mult = 1e9, end++;
    else if (*end == 'T')
        mult = 1e12, end++;
    if (*end != '\0' && strcmp(end, "Bps") != 0 && strcmp(end, "B/s") != 0)
        return false;
    *out = v * mult;
    return true;
}

/* none | measured | model:A[,B] */
static bool parse_cpu(const char *v, sim_opts *o)
{
    char a[64];
    const char *comma;

    o->cpu_msg = o->cpu_byte = 0;
    if (strcmp(v, "none") == 0) {
        o->cpu = SIM_CPU_NONE;
        return true;
    }
    if (strcmp(v, "measured") == 0) {
        o->cpu = SIM_CPU_MEASURED;
        return true;
    }
    if (strncmp(v, "model:", 6) != 0)
        return false;
    v += 6;
    comma = strchr(v, ',');
    if ((size_t)(comma != NULL ? comma - v : (ptrdiff_t)strlen(v)) >= sizeof(a))
        return false;
    snprintf(a, sizeof(a), "%.*s", (int)(comma != NULL ? comma - v : (ptrdiff_t)strlen(v)), v);
    if (!parse_time(a, &o->cpu_msg) || (comma != NULL && !parse_time(comma + 1, &o->cpu_byte)))
        return false;
    o->cpu = SIM_CPU_MODEL;
    return true;
}

static void list(void)
{
    printf("workloads:\n");
    sim_workload_list(stdout);
    printf("./PROG.so    [ARGS]  any PMIx program built as a shared object "
           "(docs/simulation.md)\n");
    printf("\nalgorithms (--algo):");
    for (size_t i = 0; px_coll_algo_at(i) != NULL; i++) {
        const px_coll_algo *a = px_coll_algo_at(i);
        printf(" %s%s", px_coll_algo_name(a),
               px_coll_algo_supports(a, PX_COLL_BARRIER)
                   ? (px_coll_algo_supports(a, PX_COLL_ALLGATHER) ? "" : "(barrier)")
                   : "(allgather)");
    }
    printf(" all\n");
}

/* Parse; returns -1 to go on, else an exit status. */
/* --topology FILE: the description pmixrun --topology reads (px_netmap.h),
 * turned into the generated topology it describes: a SimGrid cluster's
 * own topology and parameters, or a Slurm tree as a fat tree of its
 * levels (a regular one only). Returns 0, or 2 with a message printed. */
static int topology_file(sim_opts *o, const char *path)
{
    px_netmap m;
    char err[512];
    const char *kind;

    if (px_netmap_load(path, &m, err, sizeof(err)) != 0)
        return bad("--topology %s: not crossbar, fattree, torus or dragonfly, nor a description "
                   "this can read: %s",
                   path, err);
    kind = m.sg_topology[0] != '\0' ? m.sg_topology : "FAT_TREE";
    if (m.sg_topology[0] != '\0')
        snprintf(o->topo_file_params, sizeof(o->topo_file_params), "%s", m.sg_params);
    else if (px_netmap_fattree_params(&m, o->topo_file_params, sizeof(o->topo_file_params), err,
                                      sizeof(err)) != 0) {
        px_netmap_free(&m);
        return bad("--topology %s: %s", path, err);
    }
    o->topology = strcmp(kind, "FAT_TREE") == 0    ? TOPO_FATTREE
                  : strcmp(kind, "TORUS") == 0     ? TOPO_TORUS
                  : strcmp(kind, "DRAGONFLY") == 0 ? TOPO_DRAGONFLY
                                                   : TOPO_CROSSBAR;
    o->topo_params = o->topology == TOPO_CROSSBAR ? NULL : o->topo_file_params;
    o->topo_file_nodes = m.nnodes;
    /* the planes a SimGrid platform's plane clusters or a topology.conf's
     * PlaneName= lines give (px_netmap.h): generated as --planes N, named
     * as the file names them */
    o->topo_file_planes = m.nplanes;
    memcpy(o->topo_file_plane, m.plane, sizeof(o->topo_file_plane));
    px_netmap_free(&m);
    return 0;
}

static int parse(int argc, char **argv, sim_opts *o, char **sgargv, int *sgargc)
{
    int i;

    memset(o, 0, sizeof(*o));
    o->nodes = 4;
    o->ppn = 1;
    o->topology = TOPO_CROSSBAR;
    o->fattree_radix = 32;
    o->fattree_taper = 1;
    o->lat = 1e-6;
    o->bw = 12.5e9;
    o->lo_lat = 1e-7;
    o->lo_bw = 50e9;
    o->seed = 1;
    o->planes = 1;
    o->stack_kib = 0; /* auto: see run_one */
    o->detect = 1e-3;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool has = v != NULL;
        if (strncmp(a, "--cfg=", 6) == 0 || strncmp(a, "--log=", 6) == 0) {
            if (*sgargc < MAX_SG_ARGS - 1)
                sgargv[(*sgargc)++] = argv[i];
            continue;
        }
        if (a[0] != '-')
            break;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--list") == 0) {
            list();
            return 0;
        }
        if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
        if (strcmp(a, "--server-actors") == 0) {
            o->server_actors = true;
            continue;
        }
        if (strcmp(a, "--privatize") == 0) {
            o->privatize = true;
            continue;
        }
        if (!has)
            return bad("%s needs a value%s", a, "");
        i++;
        if (strcmp(a, "--nodes") == 0) {
            if (!parse_u32(v, 1, MAX_NODES, &o->nodes))
                return bad("--nodes %s: expected 1 to 65536%s", v, "");
            o->nodes_given = true;
        } else if (strcmp(a, "--ppn") == 0) {
            if (!parse_u32(v, 1, 4096, &o->ppn))
                return bad("--ppn %s: expected 1 to 4096%s", v, "");
        } else if (strcmp(a, "--topology") == 0) {
            if (strcmp(v, "crossbar") == 0)
                o->topology = TOPO_CROSSBAR;
            else if (strcmp(v, "fattree") == 0)
                o->topology = TOPO_FATTREE;
            else if (strcmp(v, "torus") == 0)
                o->topology = TOPO_TORUS;
            else if (strcmp(v, "dragonfly") == 0)
                o->topology = TOPO_DRAGONFLY;
            else if (topology_file(o, v) != 0)
                return 2;
        } else if (strcmp(a, "--topo-params") == 0) {
            o->topo_params = v;
        } else if (strcmp(a, "--radix") == 0) {
            if (!parse_u32(v, 2, 1024, &o->fattree_radix))
                return bad("--radix %s: expected 2 to 1024%s", v, "");
        } else if (strcmp(a, "--taper") == 0) {
            if (!parse_u32(v, 1, 1024, &o->fattree_taper))
                return bad("--taper %s: expected 1 to 1024%s", v, "");
        } else if (strcmp(a, "--platform") == 0) {
            o->platform = v;
            o->topology = TOPO_FILE;
        } else if (strcmp(a, "--planes") == 0) {
            if (strcmp(v, "1") != 0 && strcmp(v, "2") != 0)
                return bad("--planes %s: expected 1 or 2%s", v, "");
            o->planes = (unsigned)(v[0] - '0');
            o->planes_given = true;
        } else if (strcmp(a, "--test-plane-down") == 0) {
            o->test_down = v; /* checked once the nodes are known (planes.c) */
        } else if (strcmp(a, "--lat") == 0) {
            if (!parse_time(v, &o->lat))
                return bad("--lat %s: expected a time such as 1us, 500ns or 2e-6%s", v, "");
        } else if (strcmp(a, "--bw") == 0) {
            if (!parse_rate(v, &o->bw))
                return bad("--bw %s: expected a rate such as 12.5GBps or 1e10%s", v, "");
        } else if (strcmp(a, "--loopback-lat") == 0) {
            if (!parse_time(v, &o->lo_lat))
                return bad("--loopback-lat %s: expected a time such as 100ns%s", v, "");
        } else if (strcmp(a, "--loopback-bw") == 0) {
            if (!parse_rate(v, &o->lo_bw))
                return bad("--loopback-bw %s: expected a rate such as 50GBps%s", v, "");
        } else if (strcmp(a, "--model") == 0) {
            if (strcmp(v, "cm02") == 0)
                o->lv08 = false;
            else if (strcmp(v, "lv08") == 0)
                o->lv08 = true;
            else
                return bad("--model %s: expected cm02 or lv08%s", v, "");
        } else if (strcmp(a, "--algo") == 0) {
            o->algo = v;
        } else if (strcmp(a, "--seed") == 0) {
            char *end;
            errno = 0;
            o->seed = strtoull(v, &end, 0);
            if (*v == '\0' || *end != '\0' || errno != 0)
                return bad("--seed %s: expected a number%s", v, "");
        } else if (strcmp(a, "--stack-kib") == 0) {
            if (!parse_u32(v, 16, 65536, &o->stack_kib))
                return bad("--stack-kib %s: expected 16 to 65536%s", v, "");
        } else if (strcmp(a, "--json") == 0) {
            o->json = v;
        } else if (strcmp(a, "--fault") == 0) {
            if (o->nfaults == SIM_MAX_FAULTS)
                return bad("--fault %s: at most %s faults", v, "64");
            o->faults[o->nfaults++] = v; /* checked once the nodes are known (faults.c) */
        } else if (strcmp(a, "--coll-timeout") == 0) {
            if (!parse_time(v, &o->coll_timeout))
                return bad("--coll-timeout %s: expected a time such as 1s or 500ms%s", v, "");
            o->coll_timeout_given = true;
        } else if (strcmp(a, "--detect") == 0) {
            if (!parse_time(v, &o->detect))
                return bad("--detect %s: expected a time such as 1ms or 10us%s", v, "");
        } else if (strcmp(a, "--events") == 0) {
            o->events = v;
        } else if (strcmp(a, "--pset") == 0) {
            const char *colon = strrchr(v, ':');
            char *end;
            unsigned long n = colon != NULL ? strtoul(colon + 1, &end, 10) : 0;
            if (o->npsets == SIM_MAX_PSETS)
                return bad("--pset %s: at most %s sets", v, "16");
            if (colon == NULL || colon == v || n == 0 || n > UINT32_MAX || *end != '\0' ||
                colon - v > PMIX_MAX_NSLEN || memchr(v, ',', (size_t)(colon - v)) != NULL)
                return bad("--pset %s: expected NAME:COUNT (a name of at most 255 "
                           "characters without ',', COUNT processes)%s",
                           v, "");
            memcpy(o->pset_name[o->npsets], v, (size_t)(colon - v));
            o->pset_size[o->npsets++] = (uint32_t)n;
        } else if (strcmp(a, "--cpu") == 0) {
            if (!parse_cpu(v, o))
                return bad("--cpu %s: expected none, measured or model:A[,B] (seconds per message "
                           "and per byte, e.g. model:2us,0.1ns)%s",
                           v, "");
        } else {
            return bad("unknown option %s%s", a, "");
        }
    }
    if (i >= argc)
        return bad("no WORKLOAD given (pmixsim --list shows them)%s%s", "", "");
    o->workload = argv[i];
    o->wl_argc = argc - i - 1;
    o->wl_argv = argv + i + 1;
    if (strchr(o->workload, '/') == NULL && sim_workload_find(o->workload) == NULL) {
        size_t n = strlen(o->workload);
        if (n > 3 && strcmp(o->workload + n - 3, ".so") == 0)
            return bad("unknown workload %s (a program built as a shared object is given by a "
                       "path with a '/': ./%s)",
                       o->workload, o->workload);
        return bad("unknown workload %s (pmixsim --list shows them)%s", o->workload, "");
    }
    if (o->privatize && strchr(o->workload, '/') == NULL)
        return bad("--privatize: %s is built into pmixsim; --privatize applies to a program "
                   "loaded from a shared object (./PROGRAM.so)%s",
                   o->workload, "");
    if (o->topo_file_nodes > 0 && !o->nodes_given && o->topology != TOPO_FILE)
        o->nodes = o->topo_file_nodes;
    if (o->topo_file_planes > 0 && o->topology != TOPO_FILE) {
        if (o->planes_given && o->planes != o->topo_file_planes) {
            char given[16], file[16];
            snprintf(given, sizeof(given), "%u", o->planes);
            snprintf(file, sizeof(file), "%u", o->topo_file_planes);
            return bad("--planes %s: the --topology file describes %s planes", given, file);
        }
        o->planes = o->topo_file_planes;
    }
    if (o->planes > 1 && o->topology == TOPO_FILE)
        return bad("--planes %s with --platform: a platform file describes its own network; "
                   "give one plane, or a generated --topology%s",
                   "2", "");
    if (o->nfaults > 0 && !o->coll_timeout_given)
        o->coll_timeout = 1.0; /* a fence never hangs on a fault */
    if (o->algo != NULL && strcmp(o->algo, "all") != 0) {
        px_coll_choice ch;
        char err[512];
        if (px_coll_parse(PX_COLL_BARRIER, o->algo, &ch, NULL, 0) != PMIX_SUCCESS &&
            px_coll_parse(PX_COLL_ALLGATHER, o->algo, &ch, err, sizeof(err)) != PMIX_SUCCESS)
            return bad("--algo %s: %s", o->algo, err);
    }
    return -1;
}

/* The algorithm strings for both kinds: NAME where it applies, else the
 * environment's or auto. */
static void choose_algos(sim_run *run)
{
    const char *ef = getenv(PX_COLL_ENV_FENCE), *eb = getenv(PX_COLL_ENV_BARRIER);
    const char *a = run->opt.algo;
    px_coll_choice ch;

    snprintf(run->fence_algo, sizeof(run->fence_algo), "%s", ef != NULL ? ef : "");
    snprintf(run->barrier_algo, sizeof(run->barrier_algo), "%s", eb != NULL ? eb : "");
    if (a == NULL)
        return;
    if (px_coll_parse(PX_COLL_ALLGATHER, a, &ch, NULL, 0) == PMIX_SUCCESS)
        snprintf(run->fence_algo, sizeof(run->fence_algo), "%s", a);
    if (px_coll_parse(PX_COLL_BARRIER, a, &ch, NULL, 0) == PMIX_SUCCESS)
        snprintf(run->barrier_algo, sizeof(run->barrier_algo), "%s", a);
}

static double wall_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double sim_wall(void)
{
    return wall_now();
}

static int build_platform(sim_run *run, char *err, size_t errlen)
{
    const sim_opts *o = &run->opt;
    char path[4096];
    const char *tmp = getenv("TMPDIR");
    int fd, rc;

    if (o->topology == TOPO_FILE)
        return sgw_load_platform(o->platform, err, errlen);
    snprintf(path, sizeof(path), "%s/pmixsim-XXXXXX.xml", tmp != NULL && *tmp ? tmp : "/tmp");
    fd = mkstemps(path, 4);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a temporary platform file: %s", strerror(errno));
        return -1;
    }
    close(fd);
    rc = sim_topo_write(o, path, err, errlen);
    if (rc == 0)
        rc = sgw_load_platform(path, err, errlen);
    unlink(path);
    return rc;
}

/* Whether SimGrid options of the command line change the network model
 * (its factors, TCP gamma...). */
static bool network_cfg(char **sgargv, int sgargc)
{
    for (int i = 0; i < sgargc; i++)
        if (strstr(sgargv[i], "network/") != NULL)
            return true;
    return false;
}

/* vm.max_map_count, or the kernel's default if it cannot be read. */
static uint64_t max_map_count(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    unsigned long long v = 65530;

    if (f != NULL) {
        if (fscanf(f, "%llu", &v) != 1)
            v = 65530;
        fclose(f);
    }
    return v;
}

static int run_one(const sim_opts *opt, char **sgargv, int sgargc, int index, FILE *json)
{
    sim_run *run = calloc(1, sizeof(*run));
    char *argv[MAX_SG_ARGS + 8], item[64], err[1024] = "";
    int argc = 0, status;
    unsigned stack;
    uint64_t actors;
    bool big;
    sim_proc *procs;
    char **nics = NULL;       /* --platform: its planes' NIC hosts (sim_platform_nics) */
    size_t *node_host = NULL; /* --platform: node i is SimGrid host node_host[i] */
    struct rusage ru;
    double wall;

    if (run == NULL)
        return 1;
    run->opt = *opt;
    run->wall_start = wall_now();
    run->wl = opt->program != NULL ? sim_program_workload(opt->program)
                                   : sim_workload_find(opt->workload);
    run->tty = !opt->quiet && isatty(2);
    if (opt->events != NULL && (run->events = fopen(opt->events, "a")) == NULL) {
        fprintf(stderr, "pmixsim: cannot write the event log %s: %s\n", opt->events,
                strerror(errno));
        free(run);
        return 2;
    }
    snprintf(run->nspace, sizeof(run->nspace), "pmixsim");
    run->cwd = getcwd(NULL, 0); /* the app's PMIX_WDIR (NULL: none) */
    /* the app's PMIX_APP_ARGV, once for every node (NULL: none) */
    run->app_argv = calloc((size_t)opt->wl_argc + 2, sizeof(*run->app_argv));
    if (run->app_argv != NULL) {
        run->app_argv[0] = (char *)opt->workload;
        for (int i = 0; i < opt->wl_argc; i++)
            run->app_argv[i + 1] = opt->wl_argv[i];
    }
    choose_algos(run);

    argv[argc++] = "pmixsim";
    argv[argc++] = "--log=xbt_cfg.thres:warning";
#ifdef __SANITIZE_ADDRESS__
    /* AddressSanitizer does not follow SimGrid's own stack switching (it
     * reports overflows on the actors' stacks); with one thread per actor
     * it works. */
    argv[argc++] = "--cfg=contexts/factory:thread";
#endif
    for (int i = 0; i < sgargc; i++)
        argv[argc++] = sgargv[i];
    argv[argc] = NULL;
    sgw_init(&argc, argv);
    if (!opt->lv08) {
        sgw_config("network/model:CM02");
        sgw_config("network/crosstraffic:0");
    } else {
        sgw_config("network/model:LV08");
    }
    /* Past about 30,000 actors, the stacks' guard pages exhaust
     * vm.max_map_count: no guard pages then, and smaller stacks, which
     * SimGrid zeroes (resident in full): 32 KiB. Every built-in workload
     * runs in 16 KiB stacks with guard pages (faults, planes, coordinates,
     * fence_bench with 64 KiB values), so 32 KiB leaves it twice that. */
    /* One actor per node where nothing needs the server to run while its
     * process is busy (simplat.c, "One actor per node"). */
    /* Not with spawn: the new processes need their nodes' servers while
     * the processes placed there first are busy. */
    run->merged = !opt->server_actors && opt->ppn == 1 && opt->cpu == SIM_CPU_NONE &&
                  strcmp(opt->workload, "spawn") != 0 && opt->nfaults == 0 && opt->planes <= 1 &&
                  opt->test_down == NULL;
    actors = (uint64_t)opt->nodes * (opt->ppn + (run->merged ? 0 : 1));
    big = actors > 30000;
    stack = opt->stack_kib ? opt->stack_kib : big ? 32 : 128;
    if (SANITIZED && stack < 1024)
        stack = 1024;
    snprintf(item, sizeof(item), "contexts/stack-size:%u", stack);
    sgw_config(item);
    run->stack_size = (size_t)stack * 1024;
    /* The heap is never given back to the system during a run: glibc's
     * default trims the top of the heap past 128 KiB free, and the churn of
     * setting up thousands of nodes then faulted the same pages in again
     * and again (zeroed by the kernel each time: a fifth of a 16,384-node
     * run). A simulation is a short-lived process; its peak is what
     * matters. */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    if (big) {
        sgw_config("contexts/guard-size:0");
        /* Without guard pages SimGrid callocs each stack: from the heap,
         * zeroed with memset, resident in full. A block of the mmap
         * threshold or more comes from a mapping of its own instead, zero
         * and untouched until used, but only when the top of the heap
         * cannot hold it: so the heap grows by no more than half a stack
         * beyond what is asked (M_TOP_PAD), and stacks do not fit there.
         * (16,384 nodes x 1, 32 KiB stacks: 1.2 GB instead of 1.55, and
         * with the trim threshold above, 6.6 to 7.7 s instead of 11.5.)
         * Each is at most one map entry, so only while they fit in
         * vm.max_map_count with room to spare.
         * Past that, the heap grows by no more than is asked (no top
         * pad): a calloc served from the top of the heap zeroes only what
         * was there before the heap grew, less than a page, so a stack
         * from there is untouched too, but for the page it starts in.
         * (65,536 nodes x 1: 4.7 GB instead of 6.7, 32 s instead of 41;
         * where the maps fit, the mappings are faster: 16,384 x 1 in 5.5
         * - 5.8 s against 6.1 - 6.5 without a top pad.) */
        if (actors + 16384 < max_map_count()) {
            mallopt(M_MMAP_THRESHOLD, (int)stack * 1024);
            mallopt(M_TOP_PAD, (int)stack * 512);
        } else {
            mallopt(M_TOP_PAD, 0);
        }
    }
    procs = NULL;
    status = 2;
    if (build_platform(run, err, sizeof(err)) != 0) {
        fprintf(stderr, "pmixsim: cannot build the platform: %s\n", err);
        goto out;
    }
    run->nnodes = opt->nodes;
    if (opt->topology == TOPO_FILE) {
        /* the nodes are the platform's hosts but its planes' NICs (the
         * hosts of every plane cluster after the first) */
        size_t nnics = 0, nhosts = 0;
        run->pmap = sim_platform_read(opt->platform);
        nics = sim_platform_nics(run->pmap, &nnics);
        node_host = calloc(sgw_host_count() ? sgw_host_count() : 1, sizeof(*node_host));
        if (node_host == NULL) {
            fprintf(stderr, "pmixsim: out of memory\n");
            goto out;
        }
        for (size_t k = 0; k < sgw_host_count(); k++)
            if (!sim_platform_is_nic(nics, nnics, sgw_host_name(k)))
                node_host[nhosts++] = k;
        if (!opt->nodes_given)
            run->nnodes = nhosts < MAX_NODES ? (uint32_t)nhosts : MAX_NODES;
        if (nhosts < run->nnodes) {
            fprintf(stderr, "pmixsim: %s has %zu hosts that are nodes, fewer than --nodes %u\n",
                    opt->platform, nhosts, run->nnodes);
            goto out;
        }
    }
    run->nprocs = run->nnodes * opt->ppn;
    {
        uint64_t inset = 0;
        for (unsigned i = 0; i < opt->npsets; i++)
            inset += opt->pset_size[i];
        if (inset > run->nprocs) {
            fprintf(stderr, "pmixsim: the --pset options hold %" PRIu64 " processes, the job %u\n",
                    inset, run->nprocs);
            goto out;
        }
    }
    run->map = (px_jobmap){
        .nspace = run->nspace, .nprocs = run->nprocs, .nnodes = run->nnodes, .ppn = opt->ppn};
    if (opt->program != NULL && opt->privatize &&
        sim_program_privatize(opt->program, run->nprocs, err, sizeof(err)) != 0) {
        fprintf(stderr, "pmixsim: %s\n", err);
        goto out;
    }
    status = 1;
    run->nodes = calloc(run->nnodes, sizeof(*run->nodes));
    procs = calloc(run->nprocs, sizeof(*procs));
    if (run->nodes == NULL || procs == NULL) {
        fprintf(stderr, "pmixsim: out of memory\n");
        goto out;
    }
    for (uint32_t i = 0; i < run->nnodes; i++) {
        sim_node *n = &run->nodes[i];
        n->id = i;
        if (opt->topology == TOPO_FILE)
            snprintf(n->host, sizeof(n->host), "%s", sgw_host_name(node_host[i]));
        else
            snprintf(n->host, sizeof(n->host), "node-%u", i);
        n->procs = &procs[(size_t)i * opt->ppn];
        n->nprocs = opt->ppn;
        n->merged = run->merged;
        for (uint32_t j = 0; j < opt->ppn; j++) {
            PMIx_Load_procid(&n->procs[j].proc, run->nspace, i * opt->ppn + j);
        }
    }
    if (run->nnodes >= 2) {
        run->alpha = sgw_route_latency(run->nodes[0].host, run->nodes[1].host);
        run->beta = 1.0 / sgw_route_bandwidth(run->nodes[0].host, run->nodes[1].host);
    }
    if (run->merged && !opt->lv08 && opt->topology != TOPO_FILE && !network_cfg(sgargv, sgargc)) {
        /* A frame's loopback time as CM02 gives it (simplat.c, "One actor
         * per node"): every node's loopback link is the same here. */
        double gamma = sgw_config_double("network/TCP-gamma");
        run->lo_lat = sgw_route_latency(run->nodes[0].host, run->nodes[0].host);
        run->lo_rate = sgw_route_bandwidth(run->nodes[0].host, run->nodes[0].host);
        if (run->lo_lat > 0 && gamma > 0 && gamma / (2 * run->lo_lat) < run->lo_rate)
            run->lo_rate = gamma / (2 * run->lo_lat);
    }
    if (sim_net_setup(run, err, sizeof(err)) != 0) {
        fprintf(stderr, "pmixsim: network planes and coordinates: %s\n", err);
        status = 2;
        goto out;
    }
    sim_bind(run);
    for (uint32_t i = 0; i < run->nnodes; i++) {
        if (sim_node_setup(run, &run->nodes[i]) != 0) {
            fprintf(stderr, "pmixsim: node %u: cannot set up its server\n", i);
            px_api_set_binding(NULL);
            for (uint32_t k = 0; k <= i; k++)
                sim_node_fini(&run->nodes[k]);
            goto out;
        }
    }
    sim_net_start(run);
    if ((opt->test_down != NULL && sim_net_schedule_down(run, opt->test_down, err, sizeof(err))) ||
        sim_faults_setup(run, err, sizeof(err)) != 0) {
        fprintf(stderr, "pmixsim: %s\n", err);
        px_api_set_binding(NULL);
        for (uint32_t k = 0; k < run->nnodes; k++)
            sim_node_fini(&run->nodes[k]);
        status = 2;
        goto out;
    }
    if (run->events != NULL)
        fprintf(run->events, "# pmixsim events: algo=%s nodes=%u ppn=%u topology=%s seed=%llu\n",
                opt->algo != NULL ? opt->algo : "auto", run->nnodes, opt->ppn,
                sim_topo_name(opt->topology), (unsigned long long)opt->seed);
    for (uint32_t i = 0; i < run->nnodes && !run->merged; i++)
        run->nodes[i].actor =
            sgw_actor(run->nodes[i].host, run->nodes[i].host, sim_node_main, &run->nodes[i], 1);
    for (uint32_t i = 0; i < run->nnodes; i++) {
        for (uint32_t j = 0; j < opt->ppn; j++) {
            char name[32];
            snprintf(name, sizeof(name), "rank-%u", i * opt->ppn + j);
            run->nodes[i].procs[j].actor =
                sgw_actor(name, run->nodes[i].host, sim_proc_main, &run->nodes[i].procs[j], 0);
        }
    }
    sgw_run();
    if (run->tty && run->nfstats > 0)
        fputc('\n', stderr);
    fflush(stdout);
    for (uint32_t i = 0; i < run->nprocs; i++)
        if (procs[i].killed)
            sim_proc_reap(&procs[i]);
    px_api_set_binding(NULL);
    sim_net_drain(run);
    /* Each node's engines, freed one by one, cost a few percent of a large
     * run, and a plain build exits right after the report (main: _exit).
     * Sanitized builds free them, so that LeakSanitizer checks the run. */
    for (uint32_t i = 0; SANITIZED && i < run->nnodes; i++)
        sim_node_fini(&run->nodes[i]);
    wall = wall_now() - run->wall_start;
    getrusage(RUSAGE_SELF, &ru);
    sim_report(run, stdout, json, index, wall, ru.ru_maxrss);
    sim_net_report(run, stdout);
    sim_faults_report(run, stdout);
    sim_spawn_report(run, stdout);
    status = run->procs_failed != 0 || run->procs_done + run->procs_killed != run->nprocs ? 1 : 0;
    for (size_t i = 0; i < run->nfstats; i++)
        if (run->fstats[i].nfail != 0)
            status = 1;
    if (run->procs_done + run->procs_killed != run->nprocs)
        fprintf(stderr, "pmixsim: %u of %u processes did not finish (a deadlock?)\n",
                run->nprocs - run->procs_done - run->procs_killed, run->nprocs);
out:
    sim_pubsub_fini(run);
    sim_spawn_fini(run);
    sim_shares_fini(run);
    sim_faults_fini(run);
    sim_msgs_free_live(run); /* those still in SimGrid's mailboxes (sanitized builds) */
    if (run->events != NULL)
        fclose(run->events);
    sim_net_fini(run);
    if (run->pmap != NULL) /* not taken over: the run did not get that far */
        px_netmap_free(run->pmap);
    free(run->pmap);
    free(nics);
    free(node_host);
    free(procs);
    free(run->nodes);
    free(run->fstats);
    free(run->cwd);
    free(run->app_argv);
    free(run);
    return status;
}

int main(int argc, char **argv)
{
    sim_opts o;
    char *sgargv[MAX_SG_ARGS];
    int sgargc = 0, rc;
    FILE *json = NULL, *parts = NULL;

    if (argc >= 2 && (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "suite") == 0))
        return sim_scenario_main(argc, argv); /* scenario files: suite.c */
    rc = parse(argc, argv, &o, sgargv, &sgargc);
    if (rc >= 0)
        return rc;
    if (strchr(o.workload, '/') != NULL) {
        char err[2048];
        if (sim_program_open(o.workload, o.privatize, &o.program, err, sizeof(err)) != 0) {
            fprintf(stderr, "pmixsim: %s\n", err);
            return 2;
        }
    }
    if (o.events != NULL) {
        FILE *ev = fopen(o.events, "w"); /* each run appends its log */
        if (ev == NULL) {
            fprintf(stderr, "pmixsim: cannot write %s: %s\n", o.events, strerror(errno));
            return 2;
        }
        fclose(ev);
    }
    if (o.json != NULL) {
        json = fopen(o.json, "w");
        parts = tmpfile();
        if (json == NULL || parts == NULL) {
            fprintf(stderr, "pmixsim: cannot write %s: %s\n", o.json, strerror(errno));
            return 2;
        }
    }
    if (o.algo == NULL || strcmp(o.algo, "all") != 0) {
        rc = run_one(&o, sgargv, sgargc, 0, parts);
    } else {
        rc = 0;
        for (size_t i = 0; px_coll_algo_at(i) != NULL; i++) {
            sim_opts one = o;
            pid_t pid;
            int st;
            one.algo = px_coll_algo_name(px_coll_algo_at(i));
            fflush(stdout);
            fflush(stderr);
            pid = fork();
            if (pid < 0) {
                fprintf(stderr, "pmixsim: fork: %s\n", strerror(errno));
                return 1;
            }
            if (pid == 0) {
                int code = run_one(&one, sgargv, sgargc, (int)i, parts);
                fflush(NULL);
                _exit(code);
            }
            if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "pmixsim: the run with --algo %s failed\n", one.algo);
                rc = 1;
            }
        }
    }
    if (json != NULL) {
        char buf[65536];
        size_t n;
        fprintf(json, "{\"runs\":[\n");
        fflush(parts);
        rewind(parts);
        while ((n = fread(buf, 1, sizeof(buf), parts)) > 0)
            fwrite(buf, 1, n, json);
        fprintf(json, "\n]}\n");
        fclose(parts);
        if (fclose(json) != 0)
            rc = rc ? rc : 1;
    }
    if (!SANITIZED) {
        /* Everything is written: skip SimGrid's teardown at exit, which
         * frees every actor, stack and mailbox one by one (a tenth of a
         * 16,384-node barrier's run). Sanitized builds exit normally, so
         * that LeakSanitizer still checks the run. */
        fflush(NULL);
        _exit(rc);
    }
    sim_program_close(o.program);
    return rc;
}
