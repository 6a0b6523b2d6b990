/*
 * scenario_run.c - `pmixsim run`'s engine: one scenario, one child pmixsim
 * per algorithm (docs/scenarios.md).
 *
 * Each run is `pmixsim --quiet --json TMP OPTIONS [--algo A] PROGRAM ARGS`
 * (the scenario's options unchanged), with its stdout and stderr in files
 * of a private temporary directory, the scenario's wall-clock limit
 * (`timeout`: SIGKILL) and its peak RSS from wait4. A run that pmixsim
 * refuses (exit status 2) is tied back to the line of the file that made
 * the option; a crash or a timeout is an error; otherwise the report is
 * read back (jread.c) and checked (scenario_check.c). With --also-pmixrun,
 * the first run's program also runs under pmixrun and their outputs are
 * compared. A scenario that expects bare_ratio also runs bench/sgbare, the
 * same barrier in bare SimGrid, and compares the wall times.
 */
#define _GNU_SOURCE /* strsignal */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scenario.h"

#define MAX_OUTPUT (16u << 20) /* bytes of a run's stdout kept for the checks */

/* --------------------------------------------------------------- running -- */

static char *read_all(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "r");
    char *buf;
    size_t n = 0, cap = 4096;

    if (len != NULL)
        *len = 0;
    if (f == NULL)
        return NULL;
    buf = scn_realloc(NULL, cap);
    for (;;) {
        size_t got;
        if (n + 1 >= cap) {
            if (cap >= max)
                break;
            buf = scn_realloc(buf, cap *= 2);
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

static char *tail_of(const char *text, size_t max)
{
    size_t n = text != NULL ? strlen(text) : 0;
    return scn_strdup(n > max ? text + n - max : text);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    int status, signal;
    bool timed_out, too_big, started;
    double wall;
    long rss_kb;
} child_result;

/* The resident size of a running process in bytes, 0 if unknown. */
static double resident(pid_t pid)
{
    char path[64];
    unsigned long size = 0, res = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%lu %lu", &size, &res) != 2)
        res = 0;
    fclose(f);
    return (double)res * (double)sysconf(_SC_PAGESIZE);
}

/* Run argv with stdout and stderr into files, at most `timeout` seconds
 * and `max_rss` bytes resident (0: no limit; SIGKILL past them), showing
 * `label` and the elapsed time on a terminal. */
static void run_child(const scn_env *env, char **argv, const char *out, const char *err,
                      double timeout, double max_rss, const char *label, child_result *r)
{
    double start = now_s(), shown = -1;
    struct rusage ru;
    int st = 0;
    pid_t pid;

    memset(r, 0, sizeof(*r));
    fflush(NULL);
    pid = fork();
    if (pid < 0) {
        r->status = 127;
        return;
    }
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        if (o < 0 || e < 0 || in < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || dup2(in, 0) < 0)
            _exit(127);
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    r->started = true;
    for (;;) {
        pid_t w = wait4(pid, &st, WNOHANG, &ru);
        double el = now_s() - start;
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            r->status = 127;
            return;
        }
        if (timeout > 0 && el > timeout && !r->timed_out) {
            r->timed_out = true;
            kill(pid, SIGKILL);
        }
        if (max_rss > 0 && !r->too_big && resident(pid) > max_rss) {
            r->too_big = true;
            kill(pid, SIGKILL);
        }
        if (env->tty && el - shown >= 1) {
            shown = el;
            fprintf(stderr, "\r%s%s: %.0f s   ", env->progress_prefix ? env->progress_prefix : "",
                    label, el);
            fflush(stderr);
        }
        struct timespec ts = {0, el < 1 ? 5000000 : 50000000};
        nanosleep(&ts, NULL);
    }
    if (env->tty && shown >= 0)
        fprintf(stderr, "\r%*s\r", 78, "");
    r->wall = now_s() - start;
    r->rss_kb = ru.ru_maxrss;
    if (WIFEXITED(st))
        r->status = WEXITSTATUS(st);
    else if (WIFSIGNALED(st))
        r->signal = WTERMSIG(st);
}

static char *join_argv(char **argv)
{
    size_t len = 1;
    char *s;

    for (int i = 0; argv[i] != NULL; i++)
        len += strlen(argv[i]) + 3;
    s = scn_realloc(NULL, len);
    s[0] = '\0';
    for (int i = 0; argv[i] != NULL; i++) {
        bool q = argv[i][0] == '\0' || strpbrk(argv[i], " \t;'\"$") != NULL;
        strcat(s, i ? " " : "");
        strcat(s, q ? "'" : "");
        strcat(s, argv[i]);
        strcat(s, q ? "'" : "");
    }
    return s;
}

/* When pmixsim refused its arguments: the line of the file they came from. */
static char *refused(const scn *s, const char *err)
{
    const scn_opt *best = NULL;
    size_t bestlen = 0;
    char line[512];
    const char *nl = err != NULL ? strchr(err, '\n') : NULL;

    if (err != NULL && strncmp(err, "pmixsim: ", 9) == 0)
        err += 9;
    nl = err != NULL ? strchr(err, '\n') : NULL;
    snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - err) : (int)sizeof(line) - 1,
             err != NULL ? err : "");
    for (size_t i = 0; i < s->nopts; i++) {
        char opt[128];
        snprintf(opt, sizeof(opt), "--%s", s->opts[i].key);
        if (strstr(line, opt) != NULL && strlen(opt) > bestlen) {
            best = &s->opts[i];
            bestlen = strlen(opt);
        }
    }
    if (best != NULL)
        return scn_printf("%s:%d: pmixsim refused '%s = %s': %s (pmixsim --help lists the options; "
                          "docs/scenarios.md the keys)",
                          s->path, best->line, best->key, best->value, line);
    return scn_printf("%s:%d: pmixsim refused the run: %s (check [workload] and the options)",
                      s->path, s->program_line, line);
}

static const char *opt_value(const scn *s, const char *key, const char *dflt)
{
    const char *v = dflt;
    for (size_t i = 0; i < s->nopts; i++)
        if (strcmp(s->opts[i].key, key) == 0)
            v = s->opts[i].value;
    return v;
}

/* ---- the socket host: the same program under pmixrun ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of `text` (up to pmixsim's report when `sim`), wall-clock
 * figures ("0.012 s") masked, sorted: processes print in any order. */
static char **output_lines(char *text, bool sim, size_t *n)
{
    char **lines = NULL;
    regex_t re;
    bool have_re = regcomp(&re, "[0-9]+\\.[0-9]+ s", REG_EXTENDED) == 0;

    *n = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l != NULL;
         l = strtok_r(NULL, "\n", &save)) {
        char buf[4096], *o = buf;
        const char *p = l;
        regmatch_t m;
        if (sim && strncmp(l, "fence\tkind\t", 11) == 0)
            break;
        while (have_re && regexec(&re, p, 1, &m, 0) == 0 &&
               (size_t)(o - buf) + m.rm_so + 8 < sizeof(buf)) {
            memcpy(o, p, (size_t)m.rm_so);
            o += m.rm_so;
            o += sprintf(o, "X s");
            p += m.rm_eo;
        }
        snprintf(o, sizeof(buf) - (size_t)(o - buf), "%s", p);
        lines = scn_realloc(lines, (*n + 1) * sizeof(*lines));
        lines[(*n)++] = scn_strdup(buf);
    }
    if (have_re)
        regfree(&re);
    qsort(lines, *n, sizeof(*lines), cmp_str);
    return lines;
}

/* The directory of the pmixsim that runs the scenarios (a build tree's
 * simhost/, where its siblings are found), or NULL. */
static char *self_dir(const scn_env *env)
{
    char *dir = scn_strdup(env->self), *slash = strrchr(dir, '/');

    if (slash == NULL) {
        free(dir);
        return NULL;
    }
    *slash = '\0';
    return dir;
}

static char *find_program(const scn_env *env, const scn *s)
{
    char *dir, *p;
    const char *tries[] = {"%s/../examples/%s", "%s/pmixsim_%s", "%s/../bench/%s"};

    if (env->program != NULL)
        return scn_strdup(env->program);
    if ((dir = self_dir(env)) == NULL)
        return NULL;
    for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
        p = scn_printf(tries[i], dir, s->program);
        if (access(p, X_OK) == 0) {
            free(dir);
            return p;
        }
        free(p);
    }
    free(dir);
    return NULL;
}

static void also_pmixrun(const scn_env *env, const scn *s, scn_result *r, const char *tmp,
                         const char *sim_out)
{
    const char *nodes = opt_value(s, "nodes", "4"), *ppn = opt_value(s, "ppn", "1");
    long k = atol(nodes), p = atol(ppn);
    char *prog = find_program(env, s), *np = scn_printf("%ld", k * p), **argv, *what;
    char *out = scn_printf("%s/pmixrun.out", tmp), *err = scn_printf("%s/pmixrun.err", tmp);
    child_result cr;
    int argc = 0;

    what = scn_printf("same output as pmixrun --nodes %ld -n %ld %s", k, k * p, s->program);
    if (opt_value(s, "fault", NULL) != NULL || k < 1 || p < 1 || k > 16 || k * p > 64) {
        scn_add_check(
            r, 0, SCN_FAIL, what,
            scn_strdup("not comparable: the socket host runs scenarios without faults, of at "
                       "most 16 nodes and 64 processes"));
        goto out;
    }
    if (prog == NULL) {
        scn_add_check(r, 0, SCN_FAIL, what,
                      scn_printf("no program for workload %s next to pmixsim: give --program PATH",
                                 s->program));
        goto out;
    }
    argv = scn_realloc(NULL, (size_t)(s->nargs + 10) * sizeof(*argv));
    argv[argc++] = (char *)env->pmixrun;
    argv[argc++] = "--timeout";
    argv[argc++] = "120";
    argv[argc++] = "--nodes";
    argv[argc++] = (char *)nodes;
    argv[argc++] = "-n";
    argv[argc++] = np;
    argv[argc++] = prog;
    for (int i = 0; i < s->nargs; i++)
        argv[argc++] = s->args[i];
    argv[argc] = NULL;
    if (env->log != NULL) {
        char *cmd = join_argv(argv);
        fprintf(env->log, "  $ %s\n", cmd);
        free(cmd);
    }
    run_child(env, argv, out, err, 180, 0, "pmixrun", &cr);
    free(argv);
    {
        char *a = read_all(out, MAX_OUTPUT, NULL), *e = read_all(err, 1 << 16, NULL);
        char *simtext = scn_strdup(sim_out);
        size_t na, nb;
        char **la, **lb;
        if (cr.signal != 0 || cr.status != 0) {
            char *t = tail_of(e, 300);
            scn_add_check(r, 0, SCN_FAIL, what,
                          scn_printf("pmixrun exited with %d%s: %s",
                                     cr.signal ? 128 + cr.signal : cr.status,
                                     cr.timed_out ? " (timed out)" : "", t));
            free(t);
            free(a);
            free(e);
            free(simtext);
            goto out;
        }
        if (a == NULL)
            a = scn_strdup("");
        la = output_lines(a, false, &na);
        lb = output_lines(simtext, true, &nb);
        size_t i = 0;
        while (i < na && i < nb && strcmp(la[i], lb[i]) == 0)
            i++;
        if (i == na && i == nb)
            scn_add_check(r, 0, SCN_PASS, what,
                          scn_printf("%zu lines, the same (sorted, times masked)", na));
        else
            scn_add_check(r, 0, SCN_FAIL, what,
                          scn_printf("%zu lines vs %zu in pmixsim; first difference: pmixrun '%s', "
                                     "pmixsim '%s'",
                                     na, nb, i < na ? la[i] : "(no more lines)",
                                     i < nb ? lb[i] : "(no more lines)"));
        for (size_t j = 0; j < na; j++)
            free(la[j]);
        for (size_t j = 0; j < nb; j++)
            free(lb[j]);
        free(la);
        free(lb);
        free(a);
        free(e);
        free(simtext);
    }
out:
    if (r->verdict == SCN_PASS && r->checks[r->nchecks - 1].verdict != SCN_PASS)
        r->verdict = SCN_FAIL;
    free(prog);
    free(np);
    free(out);
    free(err);
}

/* ---- the bare SimGrid barrier: bare_ratio ---- */

static bool wants_bare(const scn *s)
{
    for (size_t i = 0; i < s->nexpects; i++)
        if (strcmp(s->expects[i].key, "bare_ratio") == 0)
            return true;
    return false;
}

/* Run `sgbare NODES ITERS` (bench/sgbare.c: a dissemination barrier in
 * bare SimGrid, one actor per node, the same crossbar and CM02 as
 * pmixsim's default) right after the scenario's run, and keep its
 * whole-process wall time in r->bare_wall_s for the bare_ratio check; on
 * failure r->bare_why says why. Only a barrier compares: the `fence`
 * workload without --size, on the default crossbar, one process per
 * node. */
static void run_bare(const scn_env *env, const scn *s, scn_result *r, const char *tmp)
{
    const char *nodes = opt_value(s, "nodes", "4"), *iters = "1";
    char *out = scn_printf("%s/bare.out", tmp), *err = scn_printf("%s/bare.err", tmp);
    char *path = NULL, *argv[4];
    child_result cr;

    r->bare_wall_s = NAN;
    for (int i = 0; i < s->nargs; i++) {
        if (strcmp(s->args[i], "--iters") == 0 && i + 1 < s->nargs)
            iters = s->args[i + 1];
        if (strcmp(s->args[i], "--size") == 0)
            iters = NULL;
    }
    if (strcmp(s->program, "fence") != 0 || iters == NULL ||
        strcmp(opt_value(s, "ppn", "1"), "1") != 0 ||
        strcmp(opt_value(s, "topology", "crossbar"), "crossbar") != 0 ||
        opt_value(s, "platform", NULL) != NULL) {
        r->bare_why = scn_strdup("not comparable: bare_ratio needs the fence workload as a "
                                 "barrier (no --size), one process per node, on the crossbar");
        goto out;
    }
    if (env->bare != NULL) {
        path = scn_strdup(env->bare);
    } else {
        char *dir = self_dir(env);
        path = scn_printf("%s/../bench/sgbare", dir != NULL ? dir : ".");
        free(dir);
    }
    if (access(path, X_OK) != 0) {
        r->bare_why = scn_printf("no sgbare at %s: build the target sgbare (bench/) or give "
                                 "--bare PATH",
                                 path);
        goto out;
    }
    argv[0] = path;
    argv[1] = (char *)nodes;
    argv[2] = (char *)iters;
    argv[3] = NULL;
    if (env->log != NULL)
        fprintf(env->log, "$ %s %s %s\n", path, nodes, iters);
    run_child(env, argv, out, err, s->timeout, s->max_rss, "sgbare", &cr);
    if (!cr.started || cr.signal != 0 || cr.status != 0 || cr.timed_out) {
        char *e = read_all(err, 1 << 16, NULL), *t = tail_of(e, 300);
        r->bare_why = scn_printf("sgbare %s %s failed (exit %d, signal %d%s): %s", nodes, iters,
                                 cr.status, cr.signal, cr.timed_out ? ", timed out" : "", t);
        free(t);
        free(e);
        goto out;
    }
    r->bare_wall_s = cr.wall;
out:
    free(path);
    free(out);
    free(err);
}

/* ---- one scenario ---- */

/* Does this pmixsim have what the scenario requires? A single word (an
 * option such as --fault) must appear in pmixsim --help; an option with a
 * value (--planes 2) must be accepted: `pmixsim OPTION VALUE --list` exits
 * 0 (options are checked in order, and --list stops before a workload). */
static bool has_required(const scn_env *env, const char *tmp, const scn *s, const char **missing)
{
    char *out = scn_printf("%s/help.out", tmp), *err = scn_printf("%s/help.err", tmp), *text = NULL;
    char *help[] = {(char *)env->self, "--help", NULL};
    child_result cr;
    scn_env quiet = *env;
    bool ok = true;

    quiet.tty = false;
    for (size_t i = 0; i < s->nrequires && ok; i++) {
        char *copy = scn_strdup(s->requires[i]), *save = NULL, *argv[16];
        int argc = 0;
        argv[argc++] = (char *)env->self;
        for (char *w = strtok_r(copy, " \t", &save); w != NULL && argc < 14;
             w = strtok_r(NULL, " \t", &save))
            argv[argc++] = w;
        if (argc == 2) {
            if (text == NULL) {
                run_child(&quiet, help, out, err, 60, 0, "help", &cr);
                text = read_all(out, 1 << 20, NULL);
            }
            ok = text != NULL && strstr(text, argv[1]) != NULL;
        } else {
            argv[argc++] = "--list";
            argv[argc] = NULL;
            run_child(&quiet, argv, out, err, 60, 0, "probe", &cr);
            ok = cr.signal == 0 && cr.status == 0;
        }
        if (!ok)
        *missing = s->requires[i];
        free(copy);
    }
    free(text);
    free(out);
    free(err);
    return ok;
}

static void print_result(const scn_env *env, const scn *s, const scn_result *r)
{
    if (env->log == NULL)
        return;
    fprintf(env->log, "%s  %s [%s]", scn_verdict_name(r->verdict), s->name, r->algo);
    if (r->verdict != SCN_SKIP)
        fprintf(env->log, "  (%.1f s wall, %.0f MB)", r->wall_s, r->rss_kb / 1024.0);
    fprintf(env->log, "\n");
    if (r->why != NULL)
        fprintf(env->log, "  %s\n", r->why);
    for (size_t i = 0; i < r->nchecks; i++) {
        const scn_check *c = &r->checks[i];
        char where[32] = "";
        if (c->line > 0)
            snprintf(where, sizeof(where), " (line %d)", c->line);
        fprintf(env->log, "  %-5s %s%s: %s\n", scn_verdict_name(c->verdict), c->expect, where,
                c->got);
    }
    if (r->verdict != SCN_PASS && r->verdict != SCN_SKIP && r->err_tail != NULL &&
        r->err_tail[0] != '\0' && !(r->exit_status == 2 && r->signal == 0))
        fprintf(env->log, "  pmixsim's stderr (end):\n%s\n", r->err_tail);
    fflush(env->log);
}

static int remove_tree(const char *dir)
{
    const char *names[] = {"out",         "err",         "report.json", "help.out", "help.err",
                           "pmixrun.out", "pmixrun.err", "bare.out",    "bare.err"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *p = scn_printf("%s/%s", dir, names[i]);
        unlink(p);
        free(p);
    }
    return rmdir(dir);
}

int scn_run(const scn_env *env, scn *s, scn_outcome *o)
{
    const char *tmpdir = getenv("TMPDIR");
    char *tmp = scn_printf("%s/pmixsim-run-XXXXXX", tmpdir != NULL && *tmpdir ? tmpdir : "/tmp");
    const char *missing = NULL;
    const char *auto_algo[] = {"auto"};
    size_t nalgos = s->nalgos ? s->nalgos : 1;
    int worst = SCN_PASS;

    o->s = s;
    if (mkdtemp(tmp) == NULL) {
        o->error = scn_printf("cannot make a temporary directory %s: %s", tmp, strerror(errno));
        free(tmp);
        return SCN_ERROR;
    }
    o->runs = calloc(nalgos, sizeof(*o->runs));
    if (o->runs == NULL)
        abort();
    if (s->nrequires > 0 && !has_required(env, tmp, s, &missing)) {
        for (size_t i = 0; i < nalgos; i++) {
            scn_result *r = &o->runs[o->nruns++];
            r->algo = scn_strdup(s->nalgos ? s->algos[i] : auto_algo[0]);
            r->verdict = SCN_SKIP;
            r->why = scn_printf("skipped: the scenario needs '%s' (requires = %s), which this "
                                "pmixsim does not offer yet",
                                missing, missing);
            r->fence_mean_s = r->formula_mean_s = NAN;
            r->bare_wall_s = NAN;
            print_result(env, s, r);
        }
        remove_tree(tmp);
        free(tmp);
        return SCN_SKIP;
    }
    for (size_t ai = 0; ai < nalgos; ai++) {
        const char *algo = s->nalgos ? s->algos[ai] : NULL;
        scn_result *r = &o->runs[o->nruns++];
        char **argv = scn_realloc(NULL, (2 * s->nopts + (size_t)s->nargs + 10) * sizeof(*argv));
        char *out = scn_printf("%s/out", tmp), *err = scn_printf("%s/err", tmp);
        char *json = scn_printf("%s/report.json", tmp), *label, *outtext, *errtext;
        char **owned = scn_realloc(NULL, (s->nopts + 1) * sizeof(*owned));
        size_t nowned = 0;
        int argc = 0;
        child_result cr;
        jv *report = NULL;
        size_t jlen = 0;

        r->algo = scn_strdup(algo != NULL ? algo : "auto");
        r->fence_mean_s = r->formula_mean_s = NAN;
        r->bare_wall_s = NAN;
        argv[argc++] = (char *)env->self;
        argv[argc++] = "--quiet";
        argv[argc++] = "--json";
        argv[argc++] = json;
        for (size_t i = 0; i < s->nopts; i++) {
            /* SimGrid's own options are one word: --cfg=ITEM:VALUE. */
            bool sg = strcmp(s->opts[i].key, "cfg") == 0 || strcmp(s->opts[i].key, "log") == 0;
            char *opt = sg ? scn_printf("--%s=%s", s->opts[i].key, s->opts[i].value)
                           : scn_printf("--%s", s->opts[i].key);
            owned[nowned++] = opt;
            argv[argc++] = opt;
            if (!sg && s->opts[i].value[0] != '\0')
                argv[argc++] = s->opts[i].value;
        }
        if (algo != NULL) {
            argv[argc++] = "--algo";
            argv[argc++] = (char *)algo;
        }
        argv[argc++] = s->program;
        for (int i = 0; i < s->nargs; i++)
            argv[argc++] = s->args[i];
        argv[argc] = NULL;
        r->command = join_argv(argv);
        label = scn_printf("%s [%s]", s->name, r->algo);
        unlink(json);
        run_child(env, argv, out, err, s->timeout, s->max_rss, label, &cr);
        r->exit_status = cr.status;
        r->signal = cr.signal;
        r->timed_out = cr.timed_out;
        r->wall_s = cr.wall;
        r->rss_kb = cr.rss_kb;
        outtext = read_all(out, MAX_OUTPUT, NULL);
        errtext = read_all(err, MAX_OUTPUT, NULL);
        r->err_tail = tail_of(errtext, 2000);
        r->report = read_all(json, 1u << 30, &jlen);
        if (r->report != NULL && jlen > 0) {
            char jerr[128];
            report = jv_parse(r->report, jlen, jerr, sizeof(jerr));
            if (report == NULL) { /* e.g. cut short by a crash: not embedded in ours */
                r->why = scn_printf("pmixsim's JSON report cannot be read: %s", jerr);
                free(r->report);
                r->report = NULL;
            }
        } else {
            free(r->report);
            r->report = NULL;
        }
        if (env->log != NULL)
            fprintf(env->log, "$ %s\n", r->command);
        if (!cr.started || cr.status == 127) {
            r->verdict = SCN_ERROR;
            r->why = scn_printf("cannot run %s: %s", env->self, errtext ? errtext : "");
        } else if (cr.signal == 0 && cr.status == 2) {
            r->verdict = SCN_ERROR;
            r->why = refused(s, errtext);
        } else {
            const jv *runs = jv_get(report, "runs");
            const jv *run = runs != NULL && runs->n > 0 ? runs->items[0] : NULL;
            r->bare_wall_s = NAN;
            if (wants_bare(s) && cr.signal == 0 && !cr.timed_out)
                run_bare(env, s, r, tmp);
            scn_check_run(s, r, run, outtext, errtext);
            scn_fence_means(run, r);
            r->verdict = SCN_PASS;
            for (size_t i = 0; i < r->nchecks; i++)
                if (r->checks[i].verdict == SCN_FAIL)
                    r->verdict = SCN_FAIL;
            if (cr.too_big) {
                r->verdict = SCN_ERROR;
                free(r->why);
                r->why = scn_printf("stopped when it passed the scenario's max_rss (%.0f MB "
                                    "resident): it needs more memory than allowed",
                                    s->max_rss / 1e6);
            } else if (cr.timed_out || cr.signal != 0) {
                r->verdict = SCN_ERROR;
                free(r->why);
                r->why = cr.timed_out ? scn_printf("stopped after the scenario's timeout (%.0f s "
                                                   "wall): it is too slow or hangs",
                                                   s->timeout)
                                      : scn_printf("pmixsim was killed by signal %d (%s): a crash; "
                                                   "rerun its command to debug it",
                                                   cr.signal, strsignal(cr.signal));
            }
            if (ai == 0 && env->pmixrun != NULL && outtext != NULL)
                also_pmixrun(env, s, r, tmp, outtext);
        }
        print_result(env, s, r);
        if (r->verdict == SCN_ERROR || (r->verdict == SCN_FAIL && worst != SCN_ERROR))
            worst = r->verdict;
        jv_free(report);
        for (size_t i = 0; i < nowned; i++)
            free(owned[i]);
        free(owned);
        free(argv);
        free(out);
        free(err);
        free(json);
        free(label);
        free(outtext);
        free(errtext);
        if (r->verdict == SCN_ERROR && cr.status == 2 && cr.signal == 0)
            break; /* the file is wrong: the other algorithms would say the same */
    }
    remove_tree(tmp);
    free(tmp);
    return worst;
}

void scn_outcome_fini(scn_outcome *o)
{
    for (size_t i = 0; i < o->nruns; i++) {
        scn_result *r = &o->runs[i];
        for (size_t k = 0; k < r->nchecks; k++) {
            free(r->checks[k].expect);
            free(r->checks[k].got);
        }
        free(r->checks);
        free(r->algo);
        free(r->why);
        free(r->command);
        free(r->report);
        free(r->err_tail);
        free(r->bare_why);
    }
    free(o->runs);
    free(o->error);
    free(o->path);
    scn_free(o->s);
    memset(o, 0, sizeof(*o));
}
