/*
 * suite_slurm.c - `pmixsim suite DIR --slurm`: the scenarios of a suite as
 * one Slurm job array, one task per scenario file (docs/scenarios.md).
 *
 * How. In a new directory under the current one (it must be on a file
 * system the compute nodes share: Slurm runs the tasks there) the suite
 * writes `list` (the scenario files, one per line, absolute) and `job.sh`;
 * task I runs `pmixsim run FILE_I --json task.I.json` with its output in
 * task.I.log. `sbatch --wait --array=1-N` submits the array and returns
 * when every task has ended; the suite then reads each task's JSON back
 * into the outcomes the local suite would have (the same JSON, JUnit XML,
 * TSV and plots follow from them), prints each task's log, and removes the
 * directory unless a task left no results. sbatch's own options come from
 * its environment (SBATCH_PARTITION, SBATCH_TIMELIMIT, ...). The wait is
 * bounded: past PMIXSIM_SLURM_TIMEOUT seconds (default 3600) the suite
 * cancels the array (scancel) and counts the tasks without results as
 * errors.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scenario.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = (cap ? cap * 2 : 8192);
            buf = scn_realloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

/* ---- a parsed value back to JSON text (a run's report) ---- */

typedef struct {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t len)
{
    if (b->n + len + 1 > b->cap) {
        b->cap = (b->n + len + 1) * 2;
        b->s = scn_realloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, len);
    b->n += len;
    b->s[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            sb_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            sb_put(b, esc, 6);
        } else
            sb_put(b, (const char *)&c, 1);
    }
    sb_put(b, "\"", 1);
}

static void sb_json(sbuf *b, const jv *v)
{
    char num[40];
    switch (v->type) {
    case JV_NULL: sb_put(b, "null", 4); break;
    case JV_BOOL: sb_put(b, v->b ? "true" : "false", v->b ? 4 : 5); break;
    case JV_NUM:
        snprintf(num, sizeof num, "%.17g", v->num);
        sb_put(b, num, strlen(num));
        break;
    case JV_STR: sb_str(b, v->str); break;
    case JV_ARR:
    case JV_OBJ:
        sb_put(b, v->type == JV_ARR ? "[" : "{", 1);
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                sb_put(b, ",", 1);
            if (v->type == JV_OBJ) {
                sb_str(b, v->keys[i]);
                sb_put(b, ":", 1);
            }
            sb_json(b, v->items[i]);
        }
        sb_put(b, v->type == JV_ARR ? "]" : "}", 1);
        break;
    }
}

/* ---- a task's JSON back into an outcome ---- */

static int verdict_of(const char *name)
{
    for (int v = SCN_PASS; v <= SCN_SKIP; v++)
        if (name != NULL && strcasecmp(name, scn_verdict_name(v)) == 0)
            return v;
    return SCN_ERROR;
}

static char *dup_or_null(const jv *v)
{
    return v != NULL && v->type == JV_STR ? scn_strdup(v->str) : NULL;
}

/* Fills o (whose path and s are set) from `pmixsim run --json` output;
 * returns 0, or -1 with o->error set. */
static int read_task(scn_outcome *o, const char *json_path)
{
    char err[256];
    size_t len = 0;
    char *text = slurp(json_path, &len);
    if (text == NULL) {
        o->error =
            scn_printf("the Slurm task wrote no results (%s: %s)", json_path, strerror(errno));
        return -1;
    }
    jv *doc = jv_parse(text, len, err, sizeof err);
    free(text);
    const jv *scns = jv_get(doc, "scenarios");
    if (doc == NULL || scns == NULL || scns->type != JV_ARR || scns->n != 1) {
        o->error = scn_printf("the Slurm task's results %s are not one scenario%s%s", json_path,
                              doc == NULL ? ": " : "", doc == NULL ? err : "");
        jv_free(doc);
        return -1;
    }
    const jv *sc = scns->items[0];
    o->error = dup_or_null(jv_get(sc, "error"));
    const jv *runs = jv_get(sc, "runs");
    size_t n = runs != NULL && runs->type == JV_ARR ? runs->n : 0;
    o->runs = n ? calloc(n, sizeof *o->runs) : NULL;
    if (n && o->runs == NULL)
        abort();
    for (size_t k = 0; k < n; k++) {
        const jv *rv = runs->items[k];
        scn_result *r = &o->runs[o->nruns++];
        r->algo = scn_strdup(jv_str(jv_get(rv, "algo"), "auto"));
        r->verdict = verdict_of(jv_str(jv_get(rv, "verdict"), NULL));
        r->why = dup_or_null(jv_get(rv, "why"));
        r->command = scn_strdup(jv_str(jv_get(rv, "command"), ""));
        r->exit_status = (int)jv_num(jv_get(rv, "exit"), 0);
        r->signal = (int)jv_num(jv_get(rv, "signal"), 0);
        const jv *to = jv_get(rv, "timed_out");
        r->timed_out = to != NULL && to->type == JV_BOOL && to->b;
        r->wall_s = jv_num(jv_get(rv, "wall_s"), NAN);
        r->rss_kb = (long)jv_num(jv_get(rv, "peak_rss_kb"), 0);
        r->fence_mean_s = jv_num(jv_get(rv, "fence_mean_s"), NAN);
        r->formula_mean_s = jv_num(jv_get(rv, "formula_mean_s"), NAN);
        r->bare_wall_s = jv_num(jv_get(rv, "bare_wall_s"), NAN);
        const jv *rep = jv_get(rv, "report");
        if (rep != NULL && rep->type != JV_NULL) {
            sbuf b = {0};
            sb_json(&b, rep);
            r->report = b.s;
        }
        const jv *checks = jv_get(rv, "checks");
        for (size_t c = 0; checks != NULL && checks->type == JV_ARR && c < checks->n; c++) {
            const jv *cv = checks->items[c];
            scn_add_check(r, (int)jv_num(jv_get(cv, "line"), 0),
                          verdict_of(jv_str(jv_get(cv, "verdict"), NULL)),
                          scn_strdup(jv_str(jv_get(cv, "expect"), "")),
                          scn_strdup(jv_str(jv_get(cv, "got"), "")));
        }
    }
    jv_free(doc);
    return 0;
}

/* Runs argv with stdout to `out` (NULL: inherited); waits at most until
 * `deadline` (time(NULL) seconds), then kills it. Returns its wait status,
 * or -1 when it could not run or was killed at the deadline. */
static int run_bounded(char **argv, const char *out, time_t deadline)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (out != NULL && freopen(out, "w", stdout) == NULL)
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "pmixsim suite: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            return st;
        if (w < 0 && errno != EINTR)
            return -1;
        if (time(NULL) >= deadline) {
            kill(pid, SIGTERM);
            waitpid(pid, &st, 0);
            return -1;
        }
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static bool shell_safe(const char *s)
{
    return strchr(s, '\'') == NULL && strchr(s, '\n') == NULL;
}

int scn_suite_slurm(const scn_env *env, char **files, size_t nfiles, scn_outcome *o)
{
    char work[] = "pmixsim-slurm.XXXXXX";
    const char *tmo = getenv("PMIXSIM_SLURM_TIMEOUT");
    long limit = tmo != NULL ? strtol(tmo, NULL, 10) : 3600;
    if (limit <= 0)
        limit = 3600;
    if (nfiles == 0)
        return 0;
    char *dir = NULL, *list = NULL, *script = NULL, *sbout = NULL;
    if (mkdtemp(work) == NULL) {
        fprintf(stderr, "pmixsim suite: cannot create %s here: %s\n", work, strerror(errno));
        return -1;
    }
    dir = realpath(work, NULL);
    if (dir == NULL || asprintf(&list, "%s/list", dir) < 0 ||
        asprintf(&script, "%s/job.sh", dir) < 0 || asprintf(&sbout, "%s/sbatch.out", dir) < 0)
        abort();
    int rc = -1;
    FILE *f = fopen(list, "w");
    for (size_t i = 0; f != NULL && i < nfiles; i++) {
        char *abs = realpath(files[i], NULL);
        fprintf(f, "%s\n", abs != NULL ? abs : files[i]);
        free(abs);
    }
    if (f == NULL || fclose(f) != 0) {
        fprintf(stderr, "pmixsim suite: cannot write %s\n", list);
        goto out;
    }
    if (!shell_safe(dir) || !shell_safe(env->self) || (env->bare && !shell_safe(env->bare))) {
        fprintf(stderr, "pmixsim suite: a path with a quote or a newline cannot go into a job\n");
        goto out;
    }
    char *bare_abs = env->bare != NULL ? realpath(env->bare, NULL) : NULL;
    f = fopen(script, "w");
    if (f != NULL) {
        fprintf(f,
                "#!/bin/sh\n"
                "# pmixsim suite --slurm: task I runs the scenario on line I of list\n"
                "i=$SLURM_ARRAY_TASK_ID\n"
                "file=$(sed -n \"${i}p\" '%s/list')\n"
                "exec '%s' run \"$file\" --json '%s'/task.$i.json%s%s%s >'%s'/task.$i.log 2>&1\n",
                dir, env->self, dir, bare_abs ? " --bare '" : "", bare_abs ? bare_abs : "",
                bare_abs ? "'" : "", dir);
    }
    free(bare_abs);
    if (f == NULL || fclose(f) != 0) {
        fprintf(stderr, "pmixsim suite: cannot write %s\n", script);
        goto out;
    }
    char array[64], out_opt[4096 + 32];
    snprintf(array, sizeof array, "--array=1-%zu", nfiles);
    snprintf(out_opt, sizeof out_opt, "--output=%s/slurm-%%a.out", dir);
    char *sb[] = {"sbatch",    "--parsable", "--wait", "--job-name=pmixsim-suite", array, out_opt,
                  "--chdir=/", script,       NULL};
    printf("pmixsim suite: %zu scenarios as a Slurm job array (%s)\n", nfiles, dir);
    fflush(stdout);
    int st = run_bounded(sb, sbout, time(NULL) + limit);
    char *jobid = slurp(sbout, NULL);
    if (jobid != NULL)
        jobid[strcspn(jobid, ";\n")] = '\0';
    if (st == -1 && jobid != NULL && jobid[0] != '\0') {
        fprintf(stderr, "pmixsim suite: the job array %s did not end within %ld s: cancelled\n",
                jobid, limit);
        char *sc[] = {"scancel", jobid, NULL};
        run_bounded(sc, NULL, time(NULL) + 30);
    } else if (jobid == NULL || jobid[0] == '\0')
        fprintf(stderr, "pmixsim suite: sbatch submitted no job (status %d)\n",
                st == -1        ? -1
                : WIFEXITED(st) ? WEXITSTATUS(st)
                                : 128 + WTERMSIG(st));
    free(jobid);
    /* sbatch --wait's status is the array's worst: a task whose
     * expectations failed exits 1; the results say what happened. */
    bool all = true;
    for (size_t i = 0; i < nfiles; i++) {
        char *json = NULL, *log = NULL;
        if (asprintf(&json, "%s/task.%zu.json", dir, i + 1) < 0 ||
            asprintf(&log, "%s/task.%zu.log", dir, i + 1) < 0)
            abort();
        char *text = slurp(log, NULL);
        if (text != NULL)
            fputs(text, stdout);
        free(text);
        if (read_task(&o[i], json) != 0) {
            all = false;
            printf("ERROR  %s\n  %s\n", o[i].path, o[i].error);
        }
        free(json);
        free(log);
    }
    if (all) {
        char *cmd[] = {"rm", "-rf", dir, NULL};
        run_bounded(cmd, NULL, time(NULL) + 30);
    } else
        printf("pmixsim suite: kept %s (task logs)\n", dir);
    rc = 0;
out:
    free(dir);
    free(list);
    free(script);
    free(sbout);
    return rc;
}
