/*
 * scenario.c - the scenario file format (docs/scenarios.md).
 *
 * A scenario file is `key = value` lines in sections:
 *
 *   name, description, plot, plot_x, requires, timeout, max_rss   (first)
 *   [platform] [job] [faults]   any pmixsim option: `key = value` is passed
 *                               as `--key value` (`_` in a key becomes `-`;
 *                               cfg and log as --cfg=VALUE, SimGrid's form),
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
 * Running them is scenario_run.c's job, checking the expectations
 * scenario_check.c's. The helpers below (scn_strdup...) serve all three.
 */
#define _GNU_SOURCE /* vasprintf */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "px_coll.h"
#include "scenario.h"

const char *scn_verdict_name(int verdict)
{
    static const char *const names[] = {"PASS", "FAIL", "ERROR", "SKIP"};
    return verdict >= 0 && verdict <= SCN_SKIP ? names[verdict] : "?";
}

char *scn_strdup(const char *s)
{
    char *d = strdup(s != NULL ? s : "");
    if (d == NULL) {
        fprintf(stderr, "pmixsim: out of memory\n");
        abort();
    }
    return d;
}

void *scn_realloc(void *p, size_t n)
{
    void *q = realloc(p, n != 0 ? n : 1);
    if (q == NULL) {
        fprintf(stderr, "pmixsim: out of memory\n");
        abort();
    }
    return q;
}

char *scn_printf(const char *fmt, ...)
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
bool scn_quantity(const char *s, double *out)
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

bool scn_compare(const char *op, double got, double want)
{
    if (strcmp(op, "=") == 0)
        return got == want || fabs(got - want) <= 1e-9 * fabs(want);
    if (strcmp(op, "!=") == 0)
        return !scn_compare("=", got, want);
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
bool scn_status_is(const char *got, const char *want)
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
                                          "exit",     "output",    "stderr",  "bare_ratio"};

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
    s->algos = scn_realloc(s->algos, (s->nalgos + 1) * sizeof(*s->algos));
    s->algos[s->nalgos++] = scn_strdup(name);
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
         strcmp(e->key, "wall") == 0 || strcmp(e->key, "rss") == 0 || strcmp(e->key, "exit") == 0 ||
         strcmp(e->key, "bare_ratio") == 0) &&
        !scn_quantity(e->value, &d)) {
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
    e.key = scn_strdup(e.key);
    e.value = scn_strdup(e.value);
    e.line = lineno;
    s->expects = scn_realloc(s->expects, (s->nexpects + 1) * sizeof(*s->expects));
    s->expects[s->nexpects++] = e;
    return 0;
}

static int split_args(scn *s, const char *value)
{
    char *copy = scn_strdup(value);

    for (char *save = NULL, *w = strtok_r(copy, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save)) {
        s->args = scn_realloc(s->args, (size_t)(s->nargs + 1) * sizeof(*s->args));
        s->args[s->nargs++] = scn_strdup(w);
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
            s->name = scn_strdup(value);
        } else if (strcmp(key, "description") == 0) {
            free(s->description);
            s->description = scn_strdup(value);
        } else if (strcmp(key, "plot") == 0) {
            free(s->plot);
            s->plot = scn_strdup(value);
        } else if (strcmp(key, "plot_x") == 0) {
            free(s->plot_x);
            s->plot_x = scn_strdup(value);
        } else if (strcmp(key, "requires") == 0) {
            s->requires = scn_realloc(s->requires, (s->nrequires + 1) * sizeof(*s->requires));
            s->requires[s->nrequires++] = scn_strdup(value);
        } else if (strcmp(key, "max_rss") == 0) {
            if (!scn_quantity(value, &t) || t <= 0) {
                snprintf(why, len, "max_rss: '%s' is not a size such as 16GB or 512MiB", value);
                return -1;
            }
            s->max_rss = t;
        } else if (strcmp(key, "timeout") == 0) {
            if (!scn_quantity(value, &t) || t <= 0) {
                snprintf(why, len, "timeout: '%s' is not a time such as 30s or 20min", value);
                return -1;
            }
            s->timeout = t;
        } else {
            snprintf(
                why, len,
                "unknown key '%s' before the first section: expected name, description, "
                "plot, plot_x, requires, timeout or max_rss (options go in [platform], [job] or "
                "[faults])",
                key);
            return -1;
        }
        return 0;
    }
    if (sec == SEC_WORKLOAD) {
        if (strcmp(key, "program") == 0) {
            free(s->program);
            s->program = scn_strdup(value);
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
    s->opts = scn_realloc(s->opts, (s->nopts + 1) * sizeof(*s->opts));
    s->opts[s->nopts].key = scn_strdup(key);
    s->opts[s->nopts].value = scn_strdup(value);
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
    s->path = scn_strdup(path);
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
        s->name = scn_strdup(base != NULL ? base + 1 : path);
        if ((dot = strrchr(s->name, '.')) != NULL && dot != s->name)
            *dot = '\0';
    }
    if (rc != 0) {
        scn_free(s);
        return NULL;
    }
    return s;
}
