/*
 * scenario_check.c - the expectations of a scenario against one run
 * (docs/scenarios.md, "[expect]").
 *
 * Input: pmixsim's JSON report of the run (its first element of "runs"),
 * what the run printed, and what scenario_run.c measured (exit status,
 * wall time, peak RSS). Output: one scn_check per expectation, with what
 * was expected (the file's line) and what happened, in words. Report
 * fields are read by name, so a field pmixsim adds later can be checked
 * (fence.FIELD, run.PATH) without a change here.
 */
#define _GNU_SOURCE /* strsignal */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "scenario.h"

void scn_add_check(scn_result *r, int line, int verdict, char *expect, char *got)
{
    r->checks = scn_realloc(r->checks, (r->nchecks + 1) * sizeof(*r->checks));
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
    bool num = scn_quantity(e->value, &want), ok = true;
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
                scn_add_check(r, e->line, SCN_FAIL, what, scn_printf("there is no fence %.0f", k));
                return;
            }
        } else {
            items = (const jv *const *)(fences != NULL ? fences->items : NULL);
            n = fences != NULL ? fences->n : 0;
            if (n == 0) {
                scn_add_check(r, e->line, SCN_FAIL, what, scn_printf("no fence was reported"));
                return;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        const jv *v = resolve(items[i], field);
        bool pass;
        jv_format(v, buf, sizeof(buf));
        if (v != NULL && v->type == JV_NUM && num)
            pass = scn_compare(e->op, v->num, want);
        else if (v != NULL && v->type == JV_STR &&
                 (strcmp(e->op, "=") == 0 || strcmp(e->op, "!=") == 0))
            pass = scn_status_is(v->str, e->value) == (strcmp(e->op, "=") == 0);
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
    if (ok && n > 1) {
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            const jv *v = resolve(items[i], field);
            if (v != NULL && v->type == JV_NUM)
                lo = fmin(lo, v->num), hi = fmax(hi, v->num);
        }
        jv_format(resolve(items[0], field), buf, sizeof(buf));
        if (lo < hi)
            snprintf(got, sizeof(got), "all %zu fences (%s from %.9g to %.9g)", n, field, lo, hi);
        else
            snprintf(got, sizeof(got), "all %zu fences (%s = %s)", n, field, buf);
    } else if (!ok && n > 1)
        snprintf(got + strlen(got), sizeof(got) - strlen(got), " (%zu of %zu fences off)", bad, n);
    scn_add_check(r, e->line, ok ? SCN_PASS : SCN_FAIL, what, scn_strdup(got));
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
        scn_add_check(r, e->line, SCN_FAIL, what,
                      scn_strdup("the report has no per-process fence results (proc_fences): this "
                                 "pmixsim does not record them (they come with --fault)"));
        return;
    }
    for (size_t k = 0; k < pf->n; k++) {
        const jv *errs = jv_get(pf->items[k], "errors");
        double seq = jv_num(jv_get(pf->items[k], "fence"), 0), here = 0;
        for (size_t i = 0; errs != NULL && errs->type == JV_OBJ && i < errs->n; i++) {
            double n = jv_num(errs->items[i], 0);
            if (n > 0 && !scn_status_is(errs->keys[i], e->value)) {
                scn_add_check(
                    r, e->line, SCN_FAIL, what,
                    scn_printf("fence %.0f: %.0f processes got %s", seq, n, errs->keys[i]));
                return;
            }
            here += n;
        }
        if (here > 0 && used < sizeof(where))
            used += (size_t)snprintf(where + used, sizeof(where) - used, "%s%.0f in fence %.0f",
                                     used ? ", " : "", here, seq);
        got += here;
    }
    scn_add_check(r, e->line, got == survivors && survivors > 0 ? SCN_PASS : SCN_FAIL, what,
                  scn_printf("%.0f of %.0f survivors got it%s%s%s", got, survivors,
                             used ? " (" : "", where, used ? ")" : ""));
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
void scn_check_run(const scn *s, scn_result *r, const jv *run, const char *out, const char *err)
{
    const jv *fences = jv_get(run, "fences");
    size_t nf = fences != NULL && fences->type == JV_ARR ? fences->n : 0;
    bool exit_given = false;
    char a[64], b[64];

    for (size_t i = 0; i < s->nexpects; i++) {
        const scn_expect *e = &s->expects[i];
        char *what = scn_printf("%s %s %s", e->key, e->op, e->value);
        double want = 0;
        scn_quantity(e->value, &want);
        if (strcmp(e->key, "exit") == 0) {
            exit_given = true;
            scn_add_check(r, e->line,
                          scn_compare(e->op, r->exit_status, want) && r->signal == 0 ? SCN_PASS
                                                                                     : SCN_FAIL,
                          what,
                          r->signal ? scn_printf("killed by signal %d", r->signal)
                                    : scn_printf("pmixsim exited with %d", r->exit_status));
        } else if (strcmp(e->key, "wall") == 0) {
            fmt_time(r->wall_s, a, sizeof(a));
            scn_add_check(r, e->line, scn_compare(e->op, r->wall_s, want) ? SCN_PASS : SCN_FAIL,
                          what, scn_printf("%s wall time", a));
        } else if (strcmp(e->key, "rss") == 0) {
            scn_add_check(r, e->line,
                          scn_compare(e->op, (double)r->rss_kb * 1024.0, want) ? SCN_PASS
                                                                               : SCN_FAIL,
                          what, scn_printf("peak RSS %.1f MB", r->rss_kb / 1024.0));
        } else if (strcmp(e->key, "bare_ratio") == 0) {
            if (!isfinite(r->bare_wall_s) || r->bare_wall_s <= 0)
                scn_add_check(r, e->line, SCN_FAIL, what,
                              scn_strdup(r->bare_why != NULL
                                             ? r->bare_why
                                             : "the bare SimGrid barrier did not run"));
            else
                scn_add_check(r, e->line,
                              scn_compare(e->op, r->wall_s / r->bare_wall_s, want) ? SCN_PASS
                                                                                   : SCN_FAIL,
                              what,
                              scn_printf("%.2f: %.2f s wall against %.2f s for sgbare",
                                         r->wall_s / r->bare_wall_s, r->wall_s, r->bare_wall_s));
        } else if (strcmp(e->key, "output") == 0 || strcmp(e->key, "stderr") == 0) {
            const char *text = strcmp(e->key, "output") == 0 ? out : err;
            bool found = text != NULL && strstr(text, e->value) != NULL;
            scn_add_check(r, e->line, found ? SCN_PASS : SCN_FAIL, what,
                          scn_strdup(found ? "found" : "not in the run's output"));
        } else if (run == NULL) {
            scn_add_check(r, e->line, SCN_FAIL, what, scn_strdup("no report (pmixsim wrote none)"));
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
                if (!want_ok && !scn_status_is(st, e->value) && nother++ == 0)
                    other = st, other_seq = seq;
            }
            if (want_ok)
                scn_add_check(r, e->line, nbad == 0 ? SCN_PASS : SCN_FAIL, what,
                              nbad == 0 ? scn_printf("%zu fences, all ok", nf)
                                        : scn_printf("fence %.0f failed: %s (%zu of %zu failed)",
                                                     first_seq, first_bad, nbad, nf));
            else if (nbad == 0)
                scn_add_check(r, e->line, SCN_FAIL, what,
                              scn_printf("no fence failed (%zu fences, all ok)", nf));
            else if (nother != 0)
                scn_add_check(r, e->line, SCN_FAIL, what,
                              scn_printf("fence %.0f failed with %s", other_seq, other));
            else
                scn_add_check(
                    r, e->line, SCN_PASS, what,
                    scn_printf("%zu of %zu fences failed, all with %s (first: fence %.0f)", nbad,
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
                scn_add_check(
                    r, e->line, SCN_SKIP, what,
                    scn_printf("no formula for what ran (%s)",
                               nf ? jv_str(jv_get(fences->items[0], "algo"), "?") : "no fence"));
            else
                scn_add_check(
                    r, e->line, scn_compare(e->op, worst, want) ? SCN_PASS : SCN_FAIL, what,
                    scn_printf("worst simulated/formula ratio %.4f (fence %.0f): off by %.3g%%", wr,
                               ws, worst * 100));
        } else if (strcmp(e->key, "fence_time") == 0) {
            size_t bad = 0;
            double worst = NAN, seq = 0;
            for (size_t k = 0; k < nf; k++) {
                const jv *t = jv_get(fences->items[k], "sim_s");
                double v = jv_num(t, NAN);
                bool pass = isfinite(v) && scn_compare(e->op, v, want);
                if (!pass && bad++ == 0)
                    worst = v, seq = jv_num(jv_get(fences->items[k], "fence"), 0);
                if (bad == 0 && (!isfinite(worst) || v > worst))
                    worst = v, seq = jv_num(jv_get(fences->items[k], "fence"), 0);
            }
            fmt_time(worst, a, sizeof(a));
            scn_add_check(r, e->line, nf > 0 && bad == 0 ? SCN_PASS : SCN_FAIL, what,
                          nf == 0    ? scn_printf("no fence was reported")
                          : bad == 0 ? scn_printf("longest: fence %.0f, %s simulated", seq, a)
                                     : scn_printf("fence %.0f took %s simulated (%zu of %zu off)",
                                                  seq, a, bad, nf));
        } else if (strcmp(e->key, "sim_time") == 0) {
            double v = jv_num(jv_get(run, "sim_s"), NAN);
            fmt_time(v, a, sizeof(a));
            scn_add_check(r, e->line, scn_compare(e->op, v, want) ? SCN_PASS : SCN_FAIL, what,
                          scn_printf("the run ended at %s simulated", a));
        } else if (strcmp(e->key, "fences") == 0) {
            scn_add_check(r, e->line, scn_compare(e->op, (double)nf, want) ? SCN_PASS : SCN_FAIL,
                          what, scn_printf("%zu fences", nf));
        } else {
            check_field(r, e, run, fences, what);
        }
    }
    if (!exit_given) {
        bool fail_ok = expects_failure(s);
        bool pass = r->signal == 0 && (r->exit_status == 0 || (fail_ok && r->exit_status == 1));
        snprintf(b, sizeof(b), "%s", fail_ok ? "exit = 0 or 1 (implied)" : "exit = 0 (implied)");
        scn_add_check(r, 0, pass ? SCN_PASS : SCN_FAIL, scn_strdup(b),
                      r->signal
                          ? scn_printf("killed by signal %d (%s)", r->signal, strsignal(r->signal))
                          : scn_printf("pmixsim exited with %d%s", r->exit_status,
                                       r->exit_status == 1 && !fail_ok
                                           ? " (a fence or a process failed)"
                                           : ""));
    }
}

/* The mean simulated time of the fences and of their formula (plots). */
void scn_fence_means(const jv *run, scn_result *r)
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
