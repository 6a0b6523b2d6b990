/*
 * scenario.c - scenario files and `pmixsim run` (docs/scenarios.md).
 *
 * A scenario file is `key = value` lines in sections:
 *
 *   name, description, plot, plot_x, requires, timeout   (before any section)
 *   [platform] [job] [faults]   any pmixsim option: `key = value` is passed
 *                               as `--key value` (`_` in a key becomes `-`),
 *                               repeated keys as repeated options; `algo`
 *                               in [job] lists the algorithms to compare
 *   [workload]                  program (a pmixsim workload) and args
 *   [expect]                    KEY OP VALUE lines, checked after each run
 *
 * The options are not interpreted here: pmixsim itself checks them when the
 * run starts, and when it refuses one (exit status 2) the message is tied
 * back to the line of the file that made it. So every option pmixsim has,
 * and every one it gains, is a key without a change here.
 *
 * Running: one child process per algorithm, `pmixsim --quiet --json TMP
 * OPTIONS [--algo A] PROGRAM ARGS`, with its stdout and stderr in files, a
 * wall-clock limit (`timeout`), and its peak RSS from wait4. The JSON report
 * is read back and every expectation becomes a PASS/FAIL line saying what
 * was expected and what happened.
 */
#define _GNU_SOURCE /* vasprintf, strsignal */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "px_coll.h"
#include "scenario.h"

#define MAX_OUTPUT (16u << 20) /* bytes of a run's stdout kept for the checks */

const char *scn_verdict_name(int verdict)
{
    static const char *const names[] = {"PASS", "FAIL", "ERROR", "SKIP"};
    return verdict >= 0 && verdict <= SCN_SKIP ? names[verdict] : "?";
}

static char *xstrdup(const char *s)
{
    char *d = strdup(s != NULL ? s : "");
    if (d == NULL) {
        fprintf(stderr, "pmixsim: out of memory\n");
        abort();
    }
    return d;
}

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n != 0 ? n : 1);
    if (q == NULL) {
        fprintf(stderr, "pmixsim: out of memory\n");
        abort();
    }
    return q;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0) {
        fprintf(stderr, "pmixsim: out of memory\n");
        abort();
    }
    va_end(ap);
    return s;
}

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* ---------------------------------------------------------------- values -- */

/* A number with an optional unit: times (ns us ms s min h) in seconds,
 * sizes (B kB MB GB TB KiB MiB GiB TiB) in bytes, `%` as a fraction.
 * Returns false for anything else. */
static bool parse_quantity(const char *s, double *out)
{
    static const struct {
        const char *unit;
        double mult;
    } units[] = {{"", 1},
                 {"s", 1},
                 {"ms", 1e-3},
                 {"us", 1e-6},
                 {"ns", 1e-9},
                 {"min", 60},
                 {"h", 3600},
                 {"B", 1},
                 {"kB", 1e3},
                 {"KB", 1e3},
                 {"MB", 1e6},
                 {"GB", 1e9},
                 {"TB", 1e12},
                 {"KiB", 1024.0},
                 {"MiB", 1048576.0},
                 {"GiB", 1073741824.0},
                 {"TiB", 1099511627776.0},
                 {"%", 0.01}};
    char *end;
    double v;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || errno != 0 || !isfinite(v))
        return false;
    while (isspace((unsigned char)*end))
        end++;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) == 0) {
            *out = v * units[i].mult;
            return true;
        }
    }
    return false;
}

static bool compare(const char *op, double got, double want)
{
    if (strcmp(op, "=") == 0)
        return got == want || fabs(got - want) <= 1e-9 * fabs(want);
    if (strcmp(op, "!=") == 0)
        return !compare("=", got, want);
    if (strcmp(op, "<") == 0)
        return got < want;
    if (strcmp(op, "<=") == 0)
        return got <= want;
    if (strcmp(op, ">") == 0)
        return got > want;
    if (strcmp(op, ">=") == 0)
        return got >= want;
    return false;
}

/* A PMIx status as pmixsim's report writes it ("ok", "PMIX_ERR_TIMEOUT")
 * against the file's: one status or alternatives separated by '|', each
 * maybe without the PMIX_ prefix, in any case. */
static bool same_status(const char *got, const char *want)
{
    const char *g = strncasecmp(got, "PMIX_", 5) == 0 ? got + 5 : got;

    while (*want != '\0') {
        const char *bar = strchr(want, '|'), *end = bar != NULL ? bar : want + strlen(want);
        while (want < end && isspace((unsigned char)*want))
            want++;
        while (end > want && isspace((unsigned char)end[-1]))
            end--;
        if (end - want > 5 && strncasecmp(want, "PMIX_", 5) == 0)
            want += 5;
        if ((size_t)(end - want) == strlen(g) && strncasecmp(g, want, (size_t)(end - want)) == 0)
            return true;
        if (bar == NULL)
            break;
        want = bar + 1;
    }
    return false;
}

/* --------------------------------------------------------------- parsing -- */

typedef enum {
    SEC_TOP,
    SEC_PLATFORM,
    SEC_JOB,
    SEC_WORKLOAD,
    SEC_FAULTS,
    SEC_EXPECT
} section;

static const char *const section_names[] = {"", "platform", "job", "workload", "faults", "expect"};

/* What the expectations may name; fence.* and run.* are any report field. */
static const char *const expect_keys[] = {"status",   "survivors", "formula", "fence_time",
                                          "sim_time", "fences",    "wall",    "rss",
                                          "exit",     "output",    "stderr"};

static const char *const ops[] = {"<=", ">=", "!=", "=", "<", ">", "~"}; /* longest first */

void scn_free(scn *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->nopts; i++) {
        free(s->opts[i].key);
        free(s->opts[i].value);
    }
    for (int i = 0; i < s->nargs; i++)
        free(s->args[i]);
    for (size_t i = 0; i < s->nalgos; i++)
        free(s->algos[i]);
    for (size_t i = 0; i < s->nrequires; i++)
        free(s->requires[i]);
    for (size_t i = 0; i < s->nexpects; i++) {
        free(s->expects[i].key);
        free(s->expects[i].value);
    }
    free(s->opts);
    free(s->args);
    free(s->algos);
    free(s->requires);
    free(s->expects);
    free(s->path);
    free(s->name);
    free(s->description);
    free(s->plot);
    free(s->plot_x);
    free(s->program);
    free(s);
}

static bool known_algo(const char *name)
{
    px_coll_choice ch;
    return px_coll_parse(PX_COLL_BARRIER, name, &ch, NULL, 0) == PMIX_SUCCESS ||
           px_coll_parse(PX_COLL_ALLGATHER, name, &ch, NULL, 0) == PMIX_SUCCESS;
}

static void add_algo(scn *s, const char *name)
{
    for (size_t i = 0; i < s->nalgos; i++)
        if (strcmp(s->algos[i], name) == 0)
            return;
    s->algos = xrealloc(s->algos, (s->nalgos + 1) * sizeof(*s->algos));
    s->algos[s->nalgos++] = xstrdup(name);
}

/* `algo = all | NAME...` (spaces or commas). */
static int parse_algos(scn *s, char *value, char *why, size_t len)
{
    for (char *save = NULL, *w = strtok_r(value, " ,\t", &save); w != NULL;
         w = strtok_r(NULL, " ,\t", &save)) {
        if (strcmp(w, "all") == 0) {
            for (size_t i = 0; px_coll_algo_at(i) != NULL; i++)
                add_algo(s, px_coll_algo_name(px_coll_algo_at(i)));
        } else if (known_algo(w)) {
            add_algo(s, w);
        } else {
            snprintf(why, len, "unknown algorithm '%s' (pmixsim --list names them; or all)", w);
            return -1;
        }
    }
    if (s->nalgos == 0) {
        snprintf(why, len, "algo needs a value: all, or algorithm names");
        return -1;
    }
    return 0;
}

static int check_expect(const scn_expect *e, char *why, size_t len)
{
    bool text = strcmp(e->key, "output") == 0 || strcmp(e->key, "stderr") == 0;
    bool generic = strncmp(e->key, "fence.", 6) == 0 || strncmp(e->key, "run.", 4) == 0;
    bool known = generic;
    double d;

    for (size_t i = 0; i < sizeof(expect_keys) / sizeof(expect_keys[0]); i++)
        known = known || strcmp(e->key, expect_keys[i]) == 0;
    if (!known) {
        snprintf(
            why, len,
            "unknown expectation '%s': expected status, survivors, formula, fence_time, sim_time, "
            "fences, wall, rss, exit, output, stderr, fence.FIELD, fence.K.FIELD or run.FIELD",
            e->key);
        return -1;
    }
    if (text != (strcmp(e->op, "~") == 0)) {
        snprintf(why, len, "%s",
                 text ? "output and stderr take '~ TEXT' (the text appears in it)"
                      : "'~' is only for output and stderr");
        return -1;
    }
    if (e->value[0] == '\0') {
        snprintf(why, len, "%s %s needs a value", e->key, e->op);
        return -1;
    }
    if ((strcmp(e->key, "status") == 0 || strcmp(e->key, "survivors") == 0) &&
        strcmp(e->op, "=") != 0) {
        snprintf(why, len, "%s takes '= ok' or '= STATUS' (e.g. PMIX_ERR_TIMEOUT)", e->key);
        return -1;
    }
    if ((strcmp(e->key, "formula") == 0 || strcmp(e->key, "fence_time") == 0 ||
         strcmp(e->key, "sim_time") == 0 || strcmp(e->key, "fences") == 0 ||
         strcmp(e->key, "wall") == 0 || strcmp(e->key, "rss") == 0 ||
         strcmp(e->key, "exit") == 0) &&
        !parse_quantity(e->value, &d)) {
        snprintf(why, len,
                 "%s: '%s' is not a number (times: 20us, 1.5ms, 2s, 10min; sizes: 512MB, 8GiB; "
                 "percent: 1%%)",
                 e->key, e->value);
        return -1;
    }
    return 0;
}

/* One `KEY OP VALUE` line of [expect]. */
static int parse_expect(scn *s, char *line, int lineno, char *why, size_t len)
{
    scn_expect e = {0};
    char *at = NULL;
    const char *op = NULL;

    for (char *p = line; *p != '\0' && at == NULL; p++) {
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
            if (strncmp(p, ops[i], strlen(ops[i])) == 0) {
                at = p;
                op = ops[i];
                break;
            }
        }
    }
    if (at == NULL) {
        snprintf(why, len, "expected KEY OP VALUE, e.g. 'formula <= 1%%' or 'status = ok'");
        return -1;
    }
    snprintf(e.op, sizeof(e.op), "%s", op);
    *at = '\0';
    e.key = trim(line);
    e.value = trim(at + strlen(op));
    if (strcmp(e.key, "formula") == 0 && strcmp(e.op, "=") == 0)
        snprintf(e.op, sizeof(e.op), "<="); /* formula = 1%: within 1% */
    if (check_expect(&e, why, len) != 0)
        return -1;
    e.key = xstrdup(e.key);
    e.value = xstrdup(e.value);
    e.line = lineno;
    s->expects = xrealloc(s->expects, (s->nexpects + 1) * sizeof(*s->expects));
    s->expects[s->nexpects++] = e;
    return 0;
}

static int split_args(scn *s, const char *value)
{
    char *copy = xstrdup(value);

    for (char *save = NULL, *w = strtok_r(copy, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save)) {
        s->args = xrealloc(s->args, (size_t)(s->nargs + 1) * sizeof(*s->args));
        s->args[s->nargs++] = xstrdup(w);
    }
    free(copy);
    return 0;
}

/* A key = value line of a section other than [expect]. */
static int parse_kv(scn *s, section sec, char *key, char *value, int lineno, char *why, size_t len)
{
    if (sec == SEC_TOP) {
        double t;
        if (strcmp(key, "name") == 0) {
            free(s->name);
            s->name = xstrdup(value);
        } else if (strcmp(key, "description") == 0) {
            free(s->description);
            s->description = xstrdup(value);
        } else if (strcmp(key, "plot") == 0) {
            free(s->plot);
            s->plot = xstrdup(value);
        } else if (strcmp(key, "plot_x") == 0) {
            free(s->plot_x);
            s->plot_x = xstrdup(value);
        } else if (strcmp(key, "requires") == 0) {
            s->requires = xrealloc(s->requires, (s->nrequires + 1) * sizeof(*s->requires));
            s->requires[s->nrequires++] = xstrdup(value);
        } else if (strcmp(key, "timeout") == 0) {
            if (!parse_quantity(value, &t) || t <= 0) {
                snprintf(why, len, "timeout: '%s' is not a time such as 30s or 20min", value);
                return -1;
            }
            s->timeout = t;
        } else {
            snprintf(why, len,
                     "unknown key '%s' before the first section: expected name, description, "
                     "plot, plot_x, requires or timeout (options go in [platform], [job] or "
                     "[faults])",
                     key);
            return -1;
        }
        return 0;
    }
    if (sec == SEC_WORKLOAD) {
        if (strcmp(key, "program") == 0) {
            free(s->program);
            s->program = xstrdup(value);
            s->program_line = lineno;
        } else if (strcmp(key, "args") == 0) {
            split_args(s, value);
        } else {
            snprintf(why, len, "unknown key '%s' in [workload]: expected program or args", key);
            return -1;
        }
        return 0;
    }
    if (strcmp(key, "algo") == 0)
        return parse_algos(s, value, why, len);
    for (char *p = key; *p != '\0'; p++)
        if (*p == '_')
            *p = '-';
    if (strcmp(key, "json") == 0 || strcmp(key, "quiet") == 0 || strcmp(key, "list") == 0 ||
        strcmp(key, "help") == 0) {
        snprintf(why, len, "'%s' is set by pmixsim run itself (pmixsim run --json F for a report)",
                 key);
        return -1;
    }
    s->opts = xrealloc(s->opts, (s->nopts + 1) * sizeof(*s->opts));
    s->opts[s->nopts].key = xstrdup(key);
    s->opts[s->nopts].value = xstrdup(value);
    s->opts[s->nopts].line = lineno;
    s->nopts++;
    return 0;
}

scn *scn_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    scn *s;
    char *line = NULL, why[512];
    size_t cap = 0;
    int lineno = 0, rc = 0;
    section sec = SEC_TOP;

    if (f == NULL) {
        snprintf(err, errlen, "%s: cannot read it: %s", path, strerror(errno));
        return NULL;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        fclose(f);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->path = xstrdup(path);
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        char *l = line, *eq;
        lineno++;
        for (char *p = l; *p != '\0'; p++) /* '#' starts a comment at a word's start */
            if (*p == '#' && (p == l || isspace((unsigned char)p[-1]))) {
                *p = '\0';
                break;
            }
        l = trim(l);
        if (*l == '\0')
            continue;
        why[0] = '\0';
        if (*l == '[') {
            size_t n = strlen(l);
            bool found = false;
            if (l[n - 1] == ']') {
                l[n - 1] = '\0';
                l = trim(l + 1);
                for (int i = 1; i <= SEC_EXPECT; i++)
                    if (strcmp(l, section_names[i]) == 0) {
                        sec = (section)i;
                        found = true;
                    }
            }
            if (!found) {
                snprintf(why, sizeof(why),
                         "unknown section [%s]: expected [platform], [job], [workload], "
                         "[faults] or [expect]",
                         l);
                rc = -1;
            }
        } else if (sec == SEC_EXPECT) {
            rc = parse_expect(s, l, lineno, why, sizeof(why));
        } else if ((eq = strchr(l, '=')) == NULL) {
            snprintf(why, sizeof(why), "expected 'key = value'");
            rc = -1;
        } else {
            char *key, *value;
            *eq = '\0';
            key = trim(l);
            value = trim(eq + 1);
            if (*key == '\0' ||
                strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(key)) {
                snprintf(why, sizeof(why),
                         "'%s' is not a key (lower-case letters, digits, '_' and '-')", key);
                rc = -1;
            } else {
                rc = parse_kv(s, sec, key, value, lineno, why, sizeof(why));
            }
        }
        if (rc != 0)
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
    }
    free(line);
    fclose(f);
    if (rc == 0 && s->program == NULL) {
        snprintf(err, errlen,
                 "%s: no workload: add a [workload] section with 'program = NAME' (pmixsim --list "
                 "names them)",
                 path);
        rc = -1;
    }
    if (rc == 0 && s->name == NULL) { /* the file's name without directory and extension */
        const char *base = strrchr(path, '/');
        char *dot;
        s->name = xstrdup(base != NULL ? base + 1 : path);
        if ((dot = strrchr(s->name, '.')) != NULL && dot != s->name)
            *dot = '\0';
    }
    if (rc != 0) {
        scn_free(s);
        return NULL;
    }
    return s;
}

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
    buf = xrealloc(NULL, cap);
    for (;;) {
        size_t got;
        if (n + 1 >= cap) {
            if (cap >= max)
                break;
            buf = xrealloc(buf, cap *= 2);
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
    return xstrdup(n > max ? text + n - max : text);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
    int status, signal;
    bool timed_out, started;
    double wall;
    long rss_kb;
} child_result;

/* Run argv with stdout and stderr into files, at most `timeout` seconds
 * (0: no limit), showing `label` and the elapsed time on a terminal. */
static void run_child(const scn_env *env, char **argv, const char *out, const char *err,
                      double timeout, const char *label, child_result *r)
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

static void add_check(scn_result *r, int line, int verdict, char *expect, char *got)
{
    r->checks = xrealloc(r->checks, (r->nchecks + 1) * sizeof(*r->checks));
    r->checks[r->nchecks].line = line;
    r->checks[r->nchecks].verdict = verdict;
    r->checks[r->nchecks].expect = expect;
    r->checks[r->nchecks].got = got;
    r->nchecks++;
}

static const jv *fence_seq(const jv *fences, double seq)
{
    for (size_t i = 0; fences != NULL && i < fences->n; i++)
        if (jv_num(jv_get(fences->items[i], "fence"), -1) == seq)
            return fences->items[i];
    return NULL;
}

/* A dotted path below `v`: object keys, and K (from 1) for the K-th element
 * of an array. */
static const jv *resolve(const jv *v, const char *path)
{
    char buf[256], *save = NULL;

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *part = strtok_r(buf, ".", &save); part != NULL && v != NULL;
         part = strtok_r(NULL, ".", &save)) {
        if (v->type == JV_ARR) {
            char *end;
            unsigned long k = strtoul(part, &end, 10);
            v = *end == '\0' && k >= 1 && k <= v->n ? v->items[k - 1] : NULL;
        } else {
            v = jv_get(v, part);
        }
    }
    return v;
}

/* fence.FIELD, fence.K.FIELD, run.FIELD: compare report fields. */
static void check_field(scn_result *r, const scn_expect *e, const jv *run, const jv *fences,
                        char *what)
{
    const char *field = strchr(e->key, '.') + 1;
    char *dot, got[256] = "", buf[128];
    double want = 0, k = -1;
    bool num = parse_quantity(e->value, &want), ok = true;
    const jv *list[1];
    const jv *const *items;
    size_t n = 0, bad = 0;

    if (strncmp(e->key, "run.", 4) == 0) {
        list[0] = run;
        items = list;
        n = 1;
    } else {
        if (isdigit((unsigned char)*field) && (dot = strchr(field, '.')) != NULL) {
            k = atof(field);
            field = dot + 1;
            list[0] = fence_seq(fences, k);
            items = list;
            n = list[0] != NULL ? 1 : 0;
            if (n == 0) {
                add_check(r, e->line, SCN_FAIL, what, xprintf("there is no fence %.0f", k));
                return;
            }
        } else {
            items = (const jv *const *)(fences != NULL ? fences->items : NULL);
            n = fences != NULL ? fences->n : 0;
            if (n == 0) {
                add_check(r, e->line, SCN_FAIL, what, xprintf("no fence was reported"));
                return;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        const jv *v = resolve(items[i], field);
        bool pass;
        jv_format(v, buf, sizeof(buf));
        if (v != NULL && v->type == JV_NUM && num)
            pass = compare(e->op, v->num, want);
        else if (v != NULL && v->type == JV_STR &&
                 (strcmp(e->op, "=") == 0 || strcmp(e->op, "!=") == 0))
            pass = same_status(v->str, e->value) == (strcmp(e->op, "=") == 0);
        else if (v != NULL && v->type == JV_BOOL &&
                 (strcmp(e->op, "=") == 0 || strcmp(e->op, "!=") == 0))
            pass = (strcmp(e->value, v->b ? "true" : "false") == 0) == (strcmp(e->op, "=") == 0);
        else
            pass = false;
        if ((!pass && bad++ == 0) || (n == 1 && pass)) {
            if (strncmp(e->key, "fence.", 6) == 0)
                snprintf(got, sizeof(got), "fence %.0f: %s = %s",
                         jv_num(jv_get(items[i], "fence"), 0), field, buf);
            else
                snprintf(got, sizeof(got), "%s = %s", field, buf);
        }
        ok = ok && pass;
    }
    if (ok && n > 1)
        snprintf(got, sizeof(got), "all %zu fences", n);
    else if (!ok && n > 1)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), " (%zu of %zu fences off)", bad, n);
    add_check(r, e->line, ok ? SCN_PASS : SCN_FAIL, what, xstrdup(got));
}

/* survivors = STATUS: every process that was not killed got STATUS from a
 * fence (in whichever fence it learned of the failure), and no process got
 * another error. Counts the per-process fence results of the fault layer
 * (`proc_fences`, `procs_killed`). A workload that stops at its first
 * failed fence, as `fence` does, gets one error per survivor. */
static void check_survivors(scn_result *r, const scn_expect *e, const jv *run, char *what)
{
    const jv *pf = jv_get(run, "proc_fences");
    double procs = jv_num(jv_get(run, "nodes"), 0) * jv_num(jv_get(run, "ppn"), 1);
    double survivors = procs - jv_num(jv_get(run, "procs_killed"), 0), got = 0;
    char where[160] = "";
    size_t used = 0;

    if (pf == NULL || pf->type != JV_ARR) {
        add_check(r, e->line, SCN_FAIL, what,
                  xstrdup("the report has no per-process fence results (proc_fences): this "
                          "pmixsim does not record them (they come with --fault)"));
        return;
    }
    for (size_t k = 0; k < pf->n; k++) {
        const jv *errs = jv_get(pf->items[k], "errors");
        double seq = jv_num(jv_get(pf->items[k], "fence"), 0), here = 0;
        for (size_t i = 0; errs != NULL && errs->type == JV_OBJ && i < errs->n; i++) {
            double n = jv_num(errs->items[i], 0);
            if (n > 0 && !same_status(errs->keys[i], e->value)) {
                add_check(r, e->line, SCN_FAIL, what,
                          xprintf("fence %.0f: %.0f processes got %s", seq, n, errs->keys[i]));
                return;
            }
            here += n;
        }
        if (here > 0 && used < sizeof(where))
            used += (size_t)snprintf(where + used, sizeof(where) - used, "%s%.0f in fence %.0f",
                                     used ? ", " : "", here, seq);
        got += here;
    }
    add_check(r, e->line, got == survivors && survivors > 0 ? SCN_PASS : SCN_FAIL, what,
              xprintf("%.0f of %.0f survivors got it%s%s%s", got, survivors, used ? " (" : "",
                      where, used ? ")" : ""));
}

static void fmt_time(double s, char *buf, size_t len)
{
    if (!isfinite(s))
        snprintf(buf, len, "-");
    else if (s < 1e-3)
        snprintf(buf, len, "%.4g us", s * 1e6);
    else if (s < 1)
        snprintf(buf, len, "%.4g ms", s * 1e3);
    else
        snprintf(buf, len, "%.4g s", s);
}

static bool expects_failure(const scn *s)
{
    for (size_t i = 0; i < s->nexpects; i++) {
        const scn_expect *e = &s->expects[i];
        const char *dot = strrchr(e->key, '.');
        bool status =
            strcmp(e->key, "status") == 0 || strcmp(e->key, "survivors") == 0 ||
            (strncmp(e->key, "fence.", 6) == 0 && dot != NULL && strcmp(dot, ".status") == 0);
        if (status && strcmp(e->op, "=") == 0 && strcasecmp(e->value, "ok") != 0)
            return true;
    }
    return false;
}

/* Check every expectation of `s` against one run. */
static void check_run(const scn *s, scn_result *r, const jv *run, const char *out, const char *err)
{
    const jv *fences = jv_get(run, "fences");
    size_t nf = fences != NULL && fences->type == JV_ARR ? fences->n : 0;
    bool exit_given = false;
    char a[64], b[64];

    for (size_t i = 0; i < s->nexpects; i++) {
        const scn_expect *e = &s->expects[i];
        char *what = xprintf("%s %s %s", e->key, e->op, e->value);
        double want = 0;
        parse_quantity(e->value, &want);
        if (strcmp(e->key, "exit") == 0) {
            exit_given = true;
            add_check(r, e->line,
                      compare(e->op, r->exit_status, want) && r->signal == 0 ? SCN_PASS : SCN_FAIL,
                      what,
                      r->signal ? xprintf("killed by signal %d", r->signal)
                                : xprintf("pmixsim exited with %d", r->exit_status));
        } else if (strcmp(e->key, "wall") == 0) {
            fmt_time(r->wall_s, a, sizeof(a));
            add_check(r, e->line, compare(e->op, r->wall_s, want) ? SCN_PASS : SCN_FAIL, what,
                      xprintf("%s wall time", a));
        } else if (strcmp(e->key, "rss") == 0) {
            add_check(r, e->line,
                      compare(e->op, (double)r->rss_kb * 1024.0, want) ? SCN_PASS : SCN_FAIL, what,
                      xprintf("peak RSS %.1f MB", r->rss_kb / 1024.0));
        } else if (strcmp(e->key, "output") == 0 || strcmp(e->key, "stderr") == 0) {
            const char *text = strcmp(e->key, "output") == 0 ? out : err;
            bool found = text != NULL && strstr(text, e->value) != NULL;
            add_check(r, e->line, found ? SCN_PASS : SCN_FAIL, what,
                      xstrdup(found ? "found" : "not in the run's output"));
        } else if (run == NULL) {
            add_check(r, e->line, SCN_FAIL, what, xstrdup("no report (pmixsim wrote none)"));
        } else if (strcmp(e->key, "status") == 0) {
            size_t nbad = 0, nother = 0;
            const char *first_bad = NULL, *other = NULL;
            double first_seq = 0, other_seq = 0;
            bool want_ok = strcasecmp(e->value, "ok") == 0;
            for (size_t k = 0; k < nf; k++) {
                const char *st = jv_str(jv_get(fences->items[k], "status"), "?");
                double seq = jv_num(jv_get(fences->items[k], "fence"), 0);
                if (strcmp(st, "ok") == 0)
                    continue;
                if (nbad++ == 0)
                    first_bad = st, first_seq = seq;
                if (!want_ok && !same_status(st, e->value) && nother++ == 0)
                    other = st, other_seq = seq;
            }
            if (want_ok)
                add_check(r, e->line, nbad == 0 ? SCN_PASS : SCN_FAIL, what,
                          nbad == 0 ? xprintf("%zu fences, all ok", nf)
                                    : xprintf("fence %.0f failed: %s (%zu of %zu failed)",
                                              first_seq, first_bad, nbad, nf));
            else if (nbad == 0)
                add_check(r, e->line, SCN_FAIL, what,
                          xprintf("no fence failed (%zu fences, all ok)", nf));
            else if (nother != 0)
                add_check(r, e->line, SCN_FAIL, what,
                          xprintf("fence %.0f failed with %s", other_seq, other));
            else
                add_check(r, e->line, SCN_PASS, what,
                          xprintf("%zu of %zu fences failed, all with %s (first: fence %.0f)", nbad,
                                  nf, first_bad, first_seq));
        } else if (strcmp(e->key, "survivors") == 0) {
            check_survivors(r, e, run, what);
        } else if (strcmp(e->key, "formula") == 0) {
            double worst = -1, wr = NAN, ws = 0;
            for (size_t k = 0; k < nf; k++) {
                const jv *ratio = jv_get(fences->items[k], "ratio");
                if (ratio == NULL || ratio->type != JV_NUM)
                    continue;
                if (fabs(ratio->num - 1) > worst) {
                    worst = fabs(ratio->num - 1);
                    wr = ratio->num;
                    ws = jv_num(jv_get(fences->items[k], "fence"), 0);
                }
            }
            if (worst < 0)
                add_check(r, e->line, SCN_SKIP, what,
                          xprintf("no formula for what ran (%s)",
                                  nf ? jv_str(jv_get(fences->items[0], "algo"), "?") : "no fence"));
            else
                add_check(r, e->line, compare(e->op, worst, want) ? SCN_PASS : SCN_FAIL, what,
                          xprintf("worst simulated/formula ratio %.4f (fence %.0f): off by %.3g%%",
                                  wr, ws, worst * 100));
        } else if (strcmp(e->key, "fence_time") == 0) {
            size_t bad = 0;
            double worst = NAN, seq = 0;
            for (size_t k = 0; k < nf; k++) {
                const jv *t = jv_get(fences->items[k], "sim_s");
                double v = jv_num(t, NAN);
                bool pass = isfinite(v) && compare(e->op, v, want);
                if (!pass && bad++ == 0)
                    worst = v, seq = jv_num(jv_get(fences->items[k], "fence"), 0);
                if (bad == 0 && (!isfinite(worst) || v > worst))
                    worst = v, seq = jv_num(jv_get(fences->items[k], "fence"), 0);
            }
            fmt_time(worst, a, sizeof(a));
            add_check(r, e->line, nf > 0 && bad == 0 ? SCN_PASS : SCN_FAIL, what,
                      nf == 0    ? xprintf("no fence was reported")
                      : bad == 0 ? xprintf("longest: fence %.0f, %s simulated", seq, a)
                                 : xprintf("fence %.0f took %s simulated (%zu of %zu off)", seq, a,
                                           bad, nf));
        } else if (strcmp(e->key, "sim_time") == 0) {
            double v = jv_num(jv_get(run, "sim_s"), NAN);
            fmt_time(v, a, sizeof(a));
            add_check(r, e->line, compare(e->op, v, want) ? SCN_PASS : SCN_FAIL, what,
                      xprintf("the run ended at %s simulated", a));
        } else if (strcmp(e->key, "fences") == 0) {
            add_check(r, e->line, compare(e->op, (double)nf, want) ? SCN_PASS : SCN_FAIL, what,
                      xprintf("%zu fences", nf));
        } else {
            check_field(r, e, run, fences, what);
        }
    }
    if (!exit_given) {
        bool fail_ok = expects_failure(s);
        bool pass = r->signal == 0 && (r->exit_status == 0 || (fail_ok && r->exit_status == 1));
        snprintf(b, sizeof(b), "%s", fail_ok ? "exit = 0 or 1 (implied)" : "exit = 0 (implied)");
        add_check(
            r, 0, pass ? SCN_PASS : SCN_FAIL, xstrdup(b),
            r->signal
                ? xprintf("killed by signal %d (%s)", r->signal, strsignal(r->signal))
                : xprintf("pmixsim exited with %d%s", r->exit_status,
                          r->exit_status == 1 && !fail_ok ? " (a fence or a process failed)" : ""));
    }
}

/* The mean simulated time of the fences and of their formula (plots). */
static void fence_means(const jv *run, scn_result *r)
{
    const jv *fences = jv_get(run, "fences");
    double st = 0, sf = 0;
    size_t nt = 0, nfm = 0;

    for (size_t k = 0; fences != NULL && k < fences->n; k++) {
        double t = jv_num(jv_get(fences->items[k], "sim_s"), NAN);
        double f = jv_num(jv_get(fences->items[k], "formula_s"), NAN);
        if (isfinite(t))
            st += t, nt++;
        if (isfinite(f))
            sf += f, nfm++;
    }
    r->fence_mean_s = nt ? st / (double)nt : NAN;
    r->formula_mean_s = nfm ? sf / (double)nfm : NAN;
}

static char *join_argv(char **argv)
{
    size_t len = 1;
    char *s;

    for (int i = 0; argv[i] != NULL; i++)
        len += strlen(argv[i]) + 3;
    s = xrealloc(NULL, len);
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
        return xprintf("%s:%d: pmixsim refused '%s = %s': %s (pmixsim --help lists the options; "
                       "docs/scenarios.md the keys)",
                       s->path, best->line, best->key, best->value, line);
    return xprintf("%s:%d: pmixsim refused the run: %s (check [workload] and the options)", s->path,
                   s->program_line, line);
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
        lines = xrealloc(lines, (*n + 1) * sizeof(*lines));
        lines[(*n)++] = xstrdup(buf);
    }
    if (have_re)
        regfree(&re);
    qsort(lines, *n, sizeof(*lines), cmp_str);
    return lines;
}

static char *find_program(const scn_env *env, const scn *s)
{
    char dir[4096], *slash, *p;
    const char *tries[] = {"%s/../examples/%s", "%s/pmixsim_%s", "%s/../bench/%s"};

    if (env->program != NULL)
        return xstrdup(env->program);
    snprintf(dir, sizeof(dir), "%s", env->self);
    slash = strrchr(dir, '/');
    if (slash == NULL)
        return NULL;
    *slash = '\0';
    for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
        p = xprintf(tries[i], dir, s->program);
        if (access(p, X_OK) == 0)
            return p;
        free(p);
    }
    return NULL;
}

static void also_pmixrun(const scn_env *env, const scn *s, scn_result *r, const char *tmp,
                         const char *sim_out)
{
    const char *nodes = opt_value(s, "nodes", "4"), *ppn = opt_value(s, "ppn", "1");
    long k = atol(nodes), p = atol(ppn);
    char *prog = find_program(env, s), *np = xprintf("%ld", k * p), **argv, *what;
    char *out = xprintf("%s/pmixrun.out", tmp), *err = xprintf("%s/pmixrun.err", tmp);
    child_result cr;
    int argc = 0;

    what = xprintf("same output as pmixrun --nodes %ld -n %ld %s", k, k * p, s->program);
    if (opt_value(s, "fault", NULL) != NULL || k < 1 || p < 1 || k > 16 || k * p > 64) {
        add_check(r, 0, SCN_FAIL, what,
                  xstrdup("not comparable: the socket host runs scenarios without faults, of at "
                          "most 16 nodes and 64 processes"));
        goto out;
    }
    if (prog == NULL) {
        add_check(
            r, 0, SCN_FAIL, what,
            xprintf("no program for workload %s next to pmixsim: give --program PATH", s->program));
        goto out;
    }
    argv = xrealloc(NULL, (size_t)(s->nargs + 10) * sizeof(*argv));
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
    run_child(env, argv, out, err, 180, "pmixrun", &cr);
    free(argv);
    {
        char *a = read_all(out, MAX_OUTPUT, NULL), *e = read_all(err, 1 << 16, NULL);
        char *simtext = xstrdup(sim_out);
        size_t na, nb;
        char **la, **lb;
        if (cr.signal != 0 || cr.status != 0) {
            char *t = tail_of(e, 300);
            add_check(r, 0, SCN_FAIL, what,
                      xprintf("pmixrun exited with %d%s: %s",
                              cr.signal ? 128 + cr.signal : cr.status,
                              cr.timed_out ? " (timed out)" : "", t));
            free(t);
            free(a);
            free(e);
            free(simtext);
            goto out;
        }
        la = output_lines(a != NULL ? a : xstrdup(""), false, &na);
        lb = output_lines(simtext, true, &nb);
        size_t i = 0;
        while (i < na && i < nb && strcmp(la[i], lb[i]) == 0)
            i++;
        if (i == na && i == nb)
            add_check(r, 0, SCN_PASS, what,
                      xprintf("%zu lines, the same (sorted, times masked)", na));
        else
            add_check(r, 0, SCN_FAIL, what,
                      xprintf("%zu lines vs %zu in pmixsim; first difference: pmixrun '%s', "
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

/* ---- one scenario ---- */

/* Does this pmixsim have what the scenario requires? A single word (an
 * option such as --fault) must appear in pmixsim --help; an option with a
 * value (--planes 2) must be accepted: `pmixsim OPTION VALUE --list` exits
 * 0 (options are checked in order, and --list stops before a workload). */
static bool has_required(const scn_env *env, const char *tmp, const scn *s, const char **missing)
{
    char *out = xprintf("%s/help.out", tmp), *err = xprintf("%s/help.err", tmp), *text = NULL;
    char *help[] = {(char *)env->self, "--help", NULL};
    child_result cr;
    scn_env quiet = *env;
    bool ok = true;

    quiet.tty = false;
    for (size_t i = 0; i < s->nrequires && ok; i++) {
        char *copy = xstrdup(s->requires[i]), *save = NULL, *argv[16];
        int argc = 0;
        argv[argc++] = (char *)env->self;
        for (char *w = strtok_r(copy, " \t", &save); w != NULL && argc < 14;
             w = strtok_r(NULL, " \t", &save))
            argv[argc++] = w;
        if (argc == 2) {
            if (text == NULL) {
                run_child(&quiet, help, out, err, 60, "help", &cr);
                text = read_all(out, 1 << 20, NULL);
            }
            ok = text != NULL && strstr(text, argv[1]) != NULL;
        } else {
            argv[argc++] = "--list";
            argv[argc] = NULL;
            run_child(&quiet, argv, out, err, 60, "probe", &cr);
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
    const char *names[] = {"out",      "err",         "report.json", "help.out",
                           "help.err", "pmixrun.out", "pmixrun.err"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *p = xprintf("%s/%s", dir, names[i]);
        unlink(p);
        free(p);
    }
    return rmdir(dir);
}

int scn_run(const scn_env *env, scn *s, scn_outcome *o)
{
    const char *tmpdir = getenv("TMPDIR");
    char *tmp = xprintf("%s/pmixsim-run-XXXXXX", tmpdir != NULL && *tmpdir ? tmpdir : "/tmp");
    const char *missing = NULL;
    const char *auto_algo[] = {"auto"};
    size_t nalgos = s->nalgos ? s->nalgos : 1;
    int worst = SCN_PASS;

    o->s = s;
    if (mkdtemp(tmp) == NULL) {
        o->error = xprintf("cannot make a temporary directory %s: %s", tmp, strerror(errno));
        free(tmp);
        return SCN_ERROR;
    }
    o->runs = calloc(nalgos, sizeof(*o->runs));
    if (o->runs == NULL)
        abort();
    if (s->nrequires > 0 && !has_required(env, tmp, s, &missing)) {
        for (size_t i = 0; i < nalgos; i++) {
            scn_result *r = &o->runs[o->nruns++];
            r->algo = xstrdup(s->nalgos ? s->algos[i] : auto_algo[0]);
            r->verdict = SCN_SKIP;
            r->why = xprintf("skipped: the scenario needs '%s' (requires = %s), which this "
                             "pmixsim does not offer yet",
                             missing, missing);
            r->fence_mean_s = r->formula_mean_s = NAN;
            print_result(env, s, r);
        }
        remove_tree(tmp);
        free(tmp);
        return SCN_SKIP;
    }
    for (size_t ai = 0; ai < nalgos; ai++) {
        const char *algo = s->nalgos ? s->algos[ai] : NULL;
        scn_result *r = &o->runs[o->nruns++];
        char **argv = xrealloc(NULL, (2 * s->nopts + (size_t)s->nargs + 10) * sizeof(*argv));
        char *out = xprintf("%s/out", tmp), *err = xprintf("%s/err", tmp);
        char *json = xprintf("%s/report.json", tmp), *label, *outtext, *errtext;
        char **owned = xrealloc(NULL, (s->nopts + 1) * sizeof(*owned));
        size_t nowned = 0;
        int argc = 0;
        child_result cr;
        jv *report = NULL;
        size_t jlen = 0;

        r->algo = xstrdup(algo != NULL ? algo : "auto");
        r->fence_mean_s = r->formula_mean_s = NAN;
        argv[argc++] = (char *)env->self;
        argv[argc++] = "--quiet";
        argv[argc++] = "--json";
        argv[argc++] = json;
        for (size_t i = 0; i < s->nopts; i++) {
            char *opt = xprintf("--%s", s->opts[i].key);
            owned[nowned++] = opt;
            argv[argc++] = opt;
            if (s->opts[i].value[0] != '\0')
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
        label = xprintf("%s [%s]", s->name, r->algo);
        unlink(json);
        run_child(env, argv, out, err, s->timeout, label, &cr);
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
            if (report == NULL)
                r->why = xprintf("pmixsim's JSON report cannot be read: %s", jerr);
        } else {
            free(r->report);
            r->report = NULL;
        }
        if (env->log != NULL)
            fprintf(env->log, "$ %s\n", r->command);
        if (!cr.started || cr.status == 127) {
            r->verdict = SCN_ERROR;
            r->why = xprintf("cannot run %s: %s", env->self, errtext ? errtext : "");
        } else if (cr.signal == 0 && cr.status == 2) {
            r->verdict = SCN_ERROR;
            r->why = refused(s, errtext);
        } else {
            const jv *runs = jv_get(report, "runs");
            const jv *run = runs != NULL && runs->n > 0 ? runs->items[0] : NULL;
            check_run(s, r, run, outtext, errtext);
            fence_means(run, r);
            r->verdict = SCN_PASS;
            for (size_t i = 0; i < r->nchecks; i++)
                if (r->checks[i].verdict == SCN_FAIL)
                    r->verdict = SCN_FAIL;
            if (cr.timed_out || cr.signal != 0) {
                r->verdict = SCN_ERROR;
                free(r->why);
                r->why = cr.timed_out ? xprintf("stopped after the scenario's timeout (%.0f s "
                                                "wall): it is too slow or hangs",
                                                s->timeout)
                                      : xprintf("pmixsim was killed by signal %d (%s): a crash; "
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
    }
    free(o->runs);
    free(o->error);
    free(o->path);
    scn_free(o->s);
    memset(o, 0, sizeof(*o));
}
