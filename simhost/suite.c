/*
 * suite.c - `pmixsim run FILE` and `pmixsim suite DIR`, and what they
 * write: JSON, JUnit XML and gnuplot plots (docs/scenarios.md).
 *
 * `run` loads one scenario and runs it (scenario.c). `suite` runs every
 * `*.scn` file of a directory, in name order, each simulation in a child
 * process, with a progress line on a terminal; a file that cannot be read
 * is an error test case, not the end of the suite. Both exit 0 when every
 * expectation held (skipped scenarios count as passed), 1 when one failed,
 * 2 when a scenario file or the command line is wrong; `run` exits 77 when
 * its scenario was skipped (ctest's SKIP_RETURN_CODE).
 *
 * Plots: scenarios that name the same `plot` group form a sweep; its x is
 * the option `plot_x` (default nodes) and y the mean simulated fence time
 * of each run, one line per algorithm, with the formula's dashed where
 * there is one. A group with fewer than two x values is not plotted.
 */
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scenario.h"

/* ------------------------------------------------------------------ JSON -- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s != NULL && *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fprintf(f, "\\n");
        else if (c == '\t')
            fprintf(f, "\\t");
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fprintf(f, "null");
}

static int outcome_verdict(const scn_outcome *o)
{
    int v = o->error != NULL ? SCN_ERROR : o->nruns ? SCN_SKIP : SCN_PASS;
    bool all_skip = true;

    for (size_t i = 0; i < o->nruns; i++) {
        int rv = o->runs[i].verdict;
        all_skip = all_skip && rv == SCN_SKIP;
        if (rv == SCN_ERROR || (rv == SCN_FAIL && v != SCN_ERROR))
            v = rv;
        else if (rv == SCN_PASS && v == SCN_SKIP)
            v = SCN_PASS;
    }
    if (o->error == NULL && !all_skip && v == SCN_SKIP)
        v = SCN_PASS;
    return v;
}

static void lower(char *dst, const char *src, size_t len)
{
    size_t i = 0;
    for (; src[i] != '\0' && i + 1 < len; i++)
        dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] + 32 : src[i]);
    dst[i] = '\0';
}

int scn_write_json(FILE *f, const scn_outcome *o, size_t n)
{
    char v[16];

    fprintf(f, "{\"scenarios\":[");
    for (size_t i = 0; i < n; i++) {
        const scn *s = o[i].s;
        lower(v, scn_verdict_name(outcome_verdict(&o[i])), sizeof(v));
        fprintf(f, "%s\n {\"name\":", i ? "," : "");
        json_str(f, s != NULL ? s->name : o[i].path);
        fprintf(f, ",\"file\":");
        json_str(f, o[i].path);
        fprintf(f, ",\"description\":");
        json_str(f, s != NULL ? s->description : NULL);
        fprintf(f, ",\"verdict\":\"%s\"", v);
        if (o[i].error != NULL) {
            fprintf(f, ",\"error\":");
            json_str(f, o[i].error);
        }
        fprintf(f, ",\"runs\":[");
        for (size_t k = 0; k < o[i].nruns; k++) {
            const scn_result *r = &o[i].runs[k];
            lower(v, scn_verdict_name(r->verdict), sizeof(v));
            fprintf(f, "%s\n  {\"algo\":", k ? "," : "");
            json_str(f, r->algo);
            fprintf(f, ",\"verdict\":\"%s\",\"why\":", v);
            if (r->why != NULL)
                json_str(f, r->why);
            else
                fprintf(f, "null");
            fprintf(f, ",\"command\":");
            json_str(f, r->command);
            fprintf(f,
                    ",\"exit\":%d,\"signal\":%d,\"timed_out\":%s,\"wall_s\":%.3f,"
                    "\"peak_rss_kb\":%ld,\"fence_mean_s\":",
                    r->exit_status, r->signal, r->timed_out ? "true" : "false", r->wall_s,
                    r->rss_kb);
            json_num(f, r->fence_mean_s);
            fprintf(f, ",\"formula_mean_s\":");
            json_num(f, r->formula_mean_s);
            fprintf(f, ",\"bare_wall_s\":");
            json_num(f, r->bare_wall_s);
            fprintf(f, ",\"checks\":[");
            for (size_t c = 0; c < r->nchecks; c++) {
                lower(v, scn_verdict_name(r->checks[c].verdict), sizeof(v));
                fprintf(f, "%s\n   {\"line\":%d,\"expect\":", c ? "," : "", r->checks[c].line);
                json_str(f, r->checks[c].expect);
                fprintf(f, ",\"verdict\":\"%s\",\"got\":", v);
                json_str(f, r->checks[c].got);
                fprintf(f, "}");
            }
            /* pmixsim's own report, as it wrote it (one JSON object). */
            fprintf(f, "],\n   \"report\":%s}", r->report != NULL ? r->report : "null");
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n]}\n");
    return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------------- TSV -- */

/* One line per scenario x algorithm; the first failed expectation or the
 * reason of an error in the last column. */
static int write_tsv(FILE *f, const scn_outcome *o, size_t n)
{
    fprintf(f, "scenario\talgo\tverdict\twall_s\tpeak_rss_mb\tfence_mean_us\tformula_mean_us"
               "\tfile\tdetail\n");
    for (size_t i = 0; i < n; i++) {
        const char *name = o[i].s != NULL ? o[i].s->name : o[i].path;
        if (o[i].error != NULL)
            fprintf(f, "%s\t-\tERROR\t-\t-\t-\t-\t%s\t%s\n", name, o[i].path, o[i].error);
        for (size_t k = 0; k < o[i].nruns; k++) {
            const scn_result *r = &o[i].runs[k];
            const char *detail = r->why;
            for (size_t c = 0; c < r->nchecks && detail == NULL; c++)
                if (r->checks[c].verdict == SCN_FAIL)
                    detail = r->checks[c].got;
            fprintf(f, "%s\t%s\t%s\t%.3f\t%.1f\t", name, r->algo, scn_verdict_name(r->verdict),
                    r->wall_s, r->rss_kb / 1024.0);
            if (isfinite(r->fence_mean_s))
                fprintf(f, "%.4f\t", r->fence_mean_s * 1e6);
            else
                fprintf(f, "-\t");
            if (isfinite(r->formula_mean_s))
                fprintf(f, "%.4f\t", r->formula_mean_s * 1e6);
            else
                fprintf(f, "-\t");
            fprintf(f, "%s\t", o[i].path);
            for (const char *p = detail != NULL ? detail : "-"; *p != '\0'; p++)
                fputc(*p == '\t' || *p == '\n' ? ' ' : *p, f);
            fputc('\n', f);
        }
    }
    return ferror(f) ? -1 : 0;
}

/* ----------------------------------------------------------------- JUnit -- */

static void xml_str(FILE *f, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '&')
            fputs("&amp;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c < 0x20 && c != '\n' && c != '\t')
            fputc('?', f); /* not allowed in XML 1.0 */
        else
            fputc(c, f);
    }
}

static void checks_text(FILE *f, const scn_result *r)
{
    if (r->command != NULL) {
        xml_str(f, "$ ");
        xml_str(f, r->command);
        xml_str(f, "\n");
    }
    for (size_t c = 0; c < r->nchecks; c++) {
        char line[64] = "";
        if (r->checks[c].line > 0)
            snprintf(line, sizeof(line), " (line %d)", r->checks[c].line);
        xml_str(f, scn_verdict_name(r->checks[c].verdict));
        xml_str(f, "  ");
        xml_str(f, r->checks[c].expect);
        xml_str(f, line);
        xml_str(f, ": ");
        xml_str(f, r->checks[c].got);
        xml_str(f, "\n");
    }
}

int scn_write_junit(FILE *f, const char *suite, const scn_outcome *o, size_t n)
{
    size_t tests = 0, failures = 0, errors = 0, skipped = 0;
    double time = 0;

    for (size_t i = 0; i < n; i++) {
        if (o[i].error != NULL) {
            tests++;
            errors++;
        }
        for (size_t k = 0; k < o[i].nruns; k++) {
            const scn_result *r = &o[i].runs[k];
            tests++;
            failures += r->verdict == SCN_FAIL;
            errors += r->verdict == SCN_ERROR;
            skipped += r->verdict == SCN_SKIP;
            time += r->wall_s;
        }
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<testsuites name=\"pmixsim\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
            "skipped=\"%zu\" time=\"%.3f\">\n",
            tests, failures, errors, skipped, time);
    fprintf(f, "<testsuite name=\"");
    xml_str(f, suite);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
            tests, failures, errors, skipped, time);
    for (size_t i = 0; i < n; i++) {
        const char *name = o[i].s != NULL ? o[i].s->name : o[i].path;
        if (o[i].error != NULL) {
            fprintf(f, "  <testcase classname=\"");
            xml_str(f, name);
            fprintf(f, "\" name=\"(scenario file)\" file=\"");
            xml_str(f, o[i].path);
            fprintf(f, "\" time=\"0\">\n    <error message=\"");
            xml_str(f, o[i].error);
            fprintf(f, "\"/>\n  </testcase>\n");
        }
        for (size_t k = 0; k < o[i].nruns; k++) {
            const scn_result *r = &o[i].runs[k];
            const char *first = r->why;
            fprintf(f, "  <testcase classname=\"");
            xml_str(f, name);
            fprintf(f, "\" name=\"");
            xml_str(f, r->algo);
            fprintf(f, "\" file=\"");
            xml_str(f, o[i].path);
            fprintf(f, "\" time=\"%.3f\">\n", r->wall_s);
            for (size_t c = 0; c < r->nchecks && first == NULL; c++)
                if (r->checks[c].verdict == SCN_FAIL)
                    first = r->checks[c].got;
            if (r->verdict == SCN_SKIP) {
                fprintf(f, "    <skipped message=\"");
                xml_str(f, r->why);
                fprintf(f, "\"/>\n");
            } else if (r->verdict == SCN_FAIL || r->verdict == SCN_ERROR) {
                const char *tag = r->verdict == SCN_FAIL ? "failure" : "error";
                fprintf(f, "    <%s message=\"", tag);
                xml_str(f, first != NULL ? first : "failed");
                fprintf(f, "\" type=\"%s\">", r->verdict == SCN_FAIL ? "expectation" : "run");
                checks_text(f, r);
                fprintf(f, "</%s>\n", tag);
            }
            fprintf(f, "    <system-out>");
            checks_text(f, r);
            fprintf(f, "</system-out>\n");
            if (r->verdict != SCN_PASS && r->err_tail != NULL && r->err_tail[0] != '\0') {
                fprintf(f, "    <system-err>");
                xml_str(f, r->err_tail);
                fprintf(f, "</system-err>\n");
            }
            fprintf(f, "  </testcase>\n");
        }
    }
    fprintf(f, "</testsuite>\n</testsuites>\n");
    return ferror(f) ? -1 : 0;
}

/* ----------------------------------------------------------------- plots -- */

static const char *opt_of(const scn *s, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < s->nopts; i++)
        if (strcmp(s->opts[i].key, key) == 0)
            v = s->opts[i].value;
    return v;
}

static double x_of(const scn *s)
{
    const char *key = s->plot_x != NULL ? s->plot_x : "nodes";
    const char *v = opt_of(s, key);
    char *end;
    double x;

    if (v == NULL && strcmp(key, "nodes") == 0)
        v = "4";
    if (v == NULL && strcmp(key, "ppn") == 0)
        v = "1";
    if (v == NULL)
        return NAN;
    x = strtod(v, &end);
    return end != v ? x : NAN;
}

static bool seen(char **list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return true;
    return false;
}

/* One plot group: NAME.tsv (x, algorithm, simulated and formula time) and,
 * with gnuplot, NAME.png. */
static int plot_group(const char *dir, const char *group, const scn_outcome *o, size_t n, FILE *log)
{
    char *tsv = NULL, *png = NULL, *algos[64];
    bool formula[64] = {false};
    size_t nalgos = 0, points = 0;
    double xs[2] = {NAN, NAN};
    const char *xkey = "nodes";
    FILE *f, *gp;
    int rc = 0;

    if (asprintf(&tsv, "%s/%s.tsv", dir, group) < 0 || asprintf(&png, "%s/%s.png", dir, group) < 0)
        return -1;
    f = fopen(tsv, "w");
    if (f == NULL) {
        fprintf(log, "pmixsim suite: cannot write %s: %s\n", tsv, strerror(errno));
        free(tsv);
        free(png);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const scn *s = o[i].s;
        if (s == NULL || s->plot == NULL || strcmp(s->plot, group) != 0)
            continue;
        if (s->plot_x != NULL)
            xkey = s->plot_x;
        double x = x_of(s);
        if (!isfinite(x))
            continue;
        if (!isfinite(xs[0]))
            xs[0] = x;
        else if (x != xs[0])
            xs[1] = x;
        for (size_t k = 0; k < o[i].nruns; k++) {
            const scn_result *r = &o[i].runs[k];
            if (!isfinite(r->fence_mean_s) || r->verdict == SCN_ERROR)
                continue;
            if (points++ == 0)
                fprintf(f, "# %s\talgo\tsim_us\tformula_us\n", xkey);
            fprintf(f, "%g\t%s\t%.6f\t", x, r->algo, r->fence_mean_s * 1e6);
            if (isfinite(r->formula_mean_s))
                fprintf(f, "%.6f\n", r->formula_mean_s * 1e6);
            else
                fprintf(f, "NaN\n");
            if (!seen(algos, nalgos, r->algo) && nalgos < 64)
                algos[nalgos++] = r->algo;
            for (size_t a = 0; a < nalgos; a++)
                if (strcmp(algos[a], r->algo) == 0 && isfinite(r->formula_mean_s))
                    formula[a] = true;
        }
    }
    fclose(f);
    if (!isfinite(xs[1]) || points == 0) {
        fprintf(log, "plot %s: fewer than two values of %s, not plotted (%s)\n", group, xkey, tsv);
        free(tsv);
        free(png);
        return 0;
    }
    gp = system("command -v gnuplot >/dev/null 2>&1") == 0 ? popen("gnuplot", "w") : NULL;
    if (gp == NULL) {
        fprintf(log, "plot %s: gnuplot is not installed; the figures are in %s\n", group, tsv);
        free(tsv);
        free(png);
        return 0;
    }
    fprintf(gp, "set terminal png size 900,600\nset output '%s'\n", png);
    fprintf(gp, "set title 'pmixsim: %s (mean simulated fence time; dashed: formula)'\n", group);
    fprintf(gp, "set xlabel '%s'\nset ylabel 'simulated time (us)'\n", xkey);
    fprintf(gp, "set logscale xy\nset key top left\nset grid\nset datafile separator '\\t'\n");
    fprintf(gp, "set datafile missing 'NaN'\nplot ");
    for (size_t a = 0; a < nalgos; a++) {
        fprintf(gp,
                "%s'%s' using (strcol(2) eq '%s' ? $1 : 1/0):3 with linespoints lt %zu title '%s'",
                a ? ", " : "", tsv, algos[a], a + 1, algos[a]);
        if (formula[a])
            fprintf(gp,
                    ", '%s' using (strcol(2) eq '%s' ? $1 : 1/0):4 with lines lt %zu dt 2 notitle",
                    tsv, algos[a], a + 1);
    }
    fprintf(gp, "\n");
    if (pclose(gp) != 0) {
        fprintf(log, "plot %s: gnuplot failed; the figures are in %s\n", group, tsv);
        rc = -1;
    } else {
        fprintf(log, "plot %s: %s (figures: %s)\n", group, png, tsv);
    }
    free(tsv);
    free(png);
    return rc;
}

int scn_write_plots(const char *dir, const scn_outcome *o, size_t n, FILE *log)
{
    char *groups[256];
    size_t ng = 0;
    int rc = 0;

    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(log, "pmixsim suite: cannot make %s: %s\n", dir, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (o[i].s != NULL && o[i].s->plot != NULL && !seen(groups, ng, o[i].s->plot) && ng < 256)
            groups[ng++] = o[i].s->plot;
    for (size_t g = 0; g < ng; g++)
        if (plot_group(dir, groups[g], o, n, log) != 0)
            rc = -1;
    if (ng == 0)
        fprintf(log, "plots: no scenario names a plot group (plot = NAME)\n");
    return rc;
}

/* --------------------------------------------------------- the commands -- */

static int usage(FILE *f, int rc)
{
    fprintf(f, "%s",
            "usage: pmixsim run FILE [--json F] [--junit F] [--tsv F] [--pmixsim PATH]\n"
            "                        [--also-pmixrun PMIXRUN [--program P]] [--bare SGBARE]\n"
            "       pmixsim suite DIR [--json F] [--junit F] [--tsv F] [--pmixsim PATH]\n"
            "                         [--plot DIR] [--filter GLOB] [--bare SGBARE] [--slurm]\n"
            "\n"
            "run: runs the scenario FILE once per algorithm it lists, each in a child pmixsim,\n"
            "and checks its expectations (a PASS/FAIL line each). --also-pmixrun runs its\n"
            "program under the socket host too (pmixrun --nodes K -n N) and compares what both\n"
            "print. suite: every *.scn file of DIR (--filter: those whose file name matches\n"
            "GLOB); --plot DIR: gnuplot plots of the scenarios that share a plot group.\n"
            "--slurm: run the scenarios as one Slurm job array (sbatch --wait; a directory\n"
            "pmixsim-slurm.* in the current one, which the nodes must share), then gather.\n"
            "--json, --junit, --tsv: the results in these formats. --pmixsim PATH: run the\n"
            "simulations with that pmixsim (default: this one). --bare SGBARE: the bare\n"
            "SimGrid barrier that bare_ratio expectations compare with (default:\n"
            "../bench/sgbare next to pmixsim).\n"
            "Exit status: 0 all passed (or were skipped), 1 an expectation failed or a run\n"
            "crashed, 2 a bad scenario file or command line; run: 77 skipped.\n"
            "The file format is in docs/scenarios.md.\n");
    return rc;
}

static FILE *open_out(const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        fprintf(stderr, "pmixsim: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static int write_outputs(const char *json, const char *junit, const char *tsv, const char *plots,
                         const char *suite, const scn_outcome *o, size_t n)
{
    int rc = 0;
    FILE *f;

    if (tsv != NULL) {
        if ((f = open_out(tsv)) == NULL || write_tsv(f, o, n) != 0 || fclose(f) != 0)
            rc = -1;
        else
            printf("tsv: %s\n", tsv);
    }
    if (json != NULL) {
        if ((f = open_out(json)) == NULL || scn_write_json(f, o, n) != 0 || fclose(f) != 0)
            rc = -1;
        else
            printf("json: %s\n", json);
    }
    if (junit != NULL) {
        if ((f = open_out(junit)) == NULL || scn_write_junit(f, suite, o, n) != 0 || fclose(f) != 0)
            rc = -1;
        else
            printf("junit: %s\n", junit);
    }
    if (plots != NULL && scn_write_plots(plots, o, n, stdout) != 0)
        rc = -1;
    return rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *self_exe(const char *argv0)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

    if (n > 0) {
        buf[n] = '\0';
        return strdup(buf);
    }
    return realpath(argv0, NULL);
}

int sim_scenario_main(int argc, char **argv)
{
    bool suite = strcmp(argv[1], "suite") == 0;
    const char *target = NULL, *json = NULL, *junit = NULL, *plots = NULL, *filter = NULL;
    const char *other = NULL, *tsv = NULL;
    scn_env env = {0};
    scn_outcome *o = NULL;
    size_t n = 0;
    int rc = 0;
    char **files = NULL;
    size_t nfiles = 0;
    size_t npass = 0, nfail = 0, nskip = 0, nerr = 0;

    bool slurm = false;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return usage(stdout, 0);
        if (suite && strcmp(a, "--slurm") == 0) {
            slurm = true;
            continue;
        }
        if (a[0] != '-') {
            if (target != NULL)
                return usage(stderr, 2);
            target = a;
            continue;
        }
        if (!has) {
            fprintf(stderr, "pmixsim %s: %s needs a value\n", argv[1], a);
            return 2;
        }
        if (strcmp(a, "--json") == 0)
            json = argv[++i];
        else if (strcmp(a, "--junit") == 0)
            junit = argv[++i];
        else if (strcmp(a, "--tsv") == 0)
            tsv = argv[++i];
        else if (suite && strcmp(a, "--plot") == 0)
            plots = argv[++i];
        else if (suite && strcmp(a, "--filter") == 0)
            filter = argv[++i];
        else if (strcmp(a, "--pmixsim") == 0)
            other = argv[++i];
        else if (!suite && strcmp(a, "--also-pmixrun") == 0)
            env.pmixrun = argv[++i];
        else if (!suite && strcmp(a, "--program") == 0)
            env.program = argv[++i];
        else if (strcmp(a, "--bare") == 0)
            env.bare = argv[++i];
        else {
            fprintf(stderr, "pmixsim %s: unknown option %s\n", argv[1], a);
            return usage(stderr, 2);
        }
    }
    if (target == NULL) {
        fprintf(stderr, "pmixsim %s: no %s given\n", argv[1], suite ? "DIR" : "FILE");
        return usage(stderr, 2);
    }
    env.self = other != NULL ? realpath(other, NULL) : self_exe(argv[0]);
    if (env.self == NULL) {
        fprintf(stderr, "pmixsim: cannot find %s to run the scenarios\n",
                other != NULL ? other : "its own executable");
        return 2;
    }
    env.tty = isatty(2);
    env.log = stdout;
    if (!suite) {
        files = malloc(sizeof(*files));
        files[nfiles++] = strdup(target);
    } else {
        DIR *d = opendir(target);
        struct dirent *de;
        if (d == NULL) {
            fprintf(stderr, "pmixsim suite: cannot read the directory %s: %s\n", target,
                    strerror(errno));
            free((char *)env.self);
            return 2;
        }
        while ((de = readdir(d)) != NULL) {
            size_t len = strlen(de->d_name);
            if (len < 5 || strcmp(de->d_name + len - 4, ".scn") != 0)
                continue;
            if (filter != NULL && fnmatch(filter, de->d_name, 0) != 0)
                continue;
            files = realloc(files, (nfiles + 1) * sizeof(*files));
            if (files == NULL || asprintf(&files[nfiles], "%s/%s", target, de->d_name) < 0)
                abort();
            nfiles++;
        }
        closedir(d);
        qsort(files, nfiles, sizeof(*files), cmp_name);
        if (nfiles == 0)
            fprintf(stderr, "pmixsim suite: no *.scn file in %s%s%s\n", target,
                    filter ? " matches " : "", filter ? filter : "");
    }
    o = calloc(nfiles ? nfiles : 1, sizeof(*o));
    if (o == NULL)
        abort();
    if (slurm) {
        /* Every file is read here (names, plot groups; a broken one is an
         * error test case, as below); the readable ones run as the array. */
        char **run = calloc(nfiles ? nfiles : 1, sizeof(*run));
        scn_outcome *ro = calloc(nfiles ? nfiles : 1, sizeof(*ro));
        size_t nrun = 0;
        if (run == NULL || ro == NULL)
            abort();
        for (size_t i = 0; i < nfiles; i++) {
            char err[1024];
            scn *s = scn_load(files[i], err, sizeof(err));
            if (s == NULL) {
                o[n].path = files[i];
                o[n].error = strdup(err);
                printf("ERROR  %s\n  %s\n", files[i], err);
                n++;
                nerr++;
                continue;
            }
            ro[nrun].path = files[i];
            ro[nrun].s = s;
            run[nrun++] = files[i];
        }
        if (scn_suite_slurm(&env, run, nrun, ro) != 0)
            rc = 1;
        for (size_t i = 0; i < nrun; i++) {
            o[n] = ro[i];
            nerr += o[n].error != NULL;
            for (size_t k = 0; k < o[n].nruns; k++) {
                int v = o[n].runs[k].verdict;
                npass += v == SCN_PASS;
                nfail += v == SCN_FAIL;
                nerr += v == SCN_ERROR;
                nskip += v == SCN_SKIP;
            }
            n++;
        }
        free(run);
        free(ro);
        nfiles = 0; /* nothing left for the local loop */
    }
    for (size_t i = 0; i < nfiles; i++) {
        char err[1024], prefix[64];
        scn *s = scn_load(files[i], err, sizeof(err));
        o[n].path = files[i];
        if (s == NULL) {
            o[n].error = strdup(err);
            if (suite)
                printf("ERROR  %s\n  %s\n", files[i], err);
            fprintf(stderr, "pmixsim: %s\n", err);
            n++;
            nerr++;
            continue;
        }
        snprintf(prefix, sizeof(prefix), suite ? "pmixsim suite [%zu/%zu] " : "pmixsim ", i + 1,
                 nfiles);
        env.progress_prefix = prefix;
        scn_run(&env, s, &o[n]);
        for (size_t k = 0; k < o[n].nruns; k++) {
            int v = o[n].runs[k].verdict;
            npass += v == SCN_PASS;
            nfail += v == SCN_FAIL;
            nerr += v == SCN_ERROR;
            nskip += v == SCN_SKIP;
        }
        n++;
    }
    free(files);
    if (suite || nfiles > 0)
        printf("%s %s: %zu passed, %zu failed, %zu errors, %zu skipped\n",
               suite ? "suite" : "scenario", target, npass, nfail, nerr, nskip);
    if (write_outputs(json, junit, tsv, plots, target, o, n) != 0)
        rc = 1;
    if (nfail || nerr)
        rc = 1;
    if (!suite && n == 1 && o[0].error != NULL)
        rc = 2; /* the file is wrong */
    if (!suite && n == 1 && o[0].nruns > 0 && o[0].runs[0].verdict == SCN_ERROR &&
        o[0].runs[0].exit_status == 2 && o[0].runs[0].signal == 0)
        rc = 2; /* pmixsim refused what the file says */
    if (!suite && rc == 0 && npass == 0 && nskip > 0)
        rc = 77;
    for (size_t i = 0; i < n; i++)
        scn_outcome_fini(&o[i]);
    free(o);
    free((char *)env.self);
    return rc;
}
