/*
 * scenario.h - scenario files and the commands that run them
 * (docs/scenarios.md).
 *
 *   pmixsim run FILE [--json F] [--junit F] [--also-pmixrun PMIXRUN [--program P]]
 *   pmixsim suite DIR [--json F] [--junit F] [--plot DIR] [--filter GLOB]
 *
 * scenario.c reads a scenario file (sections of `key = value` lines); the
 * platform, job and fault keys become pmixsim options (`key = value` ->
 * `--key value`). scenario_run.c runs every algorithm to compare as one
 * pmixsim child process with --json, whose report is read back (jread.c)
 * and checked against the file's expectations (scenario_check.c). suite.c
 * is the command line, runs the scenarios of a directory and writes JSON,
 * TSV, JUnit XML and gnuplot plots. Nothing of
 * this runs a simulation in its own process: a crash in a simulation is a
 * failed test case, not the end of the suite.
 */
#ifndef PMIXSIM_SCENARIO_H
#define PMIXSIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ---- a small JSON reader (jread.c) ---- */

typedef enum {
    JV_NULL,
    JV_BOOL,
    JV_NUM,
    JV_STR,
    JV_ARR,
    JV_OBJ
} jv_type;

typedef struct jv {
    jv_type type;
    bool b;
    double num;
    char *str;
    struct jv **items; /* arrays and objects: n values */
    char **keys;       /* objects: the key of each value */
    size_t n;
} jv;

/* Parse `len` bytes; NULL with a reason in err when it is not one JSON
 * value. The tree is the caller's: jv_free (NULL is a no-op). */
jv *jv_parse(const char *text, size_t len, char *err, size_t errlen);
void jv_free(jv *v);
const jv *jv_get(const jv *obj, const char *key); /* NULL: absent or not an object */
double jv_num(const jv *v, double dflt);
const char *jv_str(const jv *v, const char *dflt);
void jv_format(const jv *v, char *buf, size_t len); /* a value as text, for messages */

/* ---- scenario files (scenario.c) ---- */

typedef struct scn_opt {
    char *key, *value; /* --key value; value "" is a flag without a value */
    int line;
} scn_opt;

typedef struct scn_expect {
    char *key;
    char op[3]; /* = != < <= > >= ~ */
    char *value;
    int line;
} scn_expect;

typedef struct scn {
    char *path, *name, *description;
    char *plot, *plot_x; /* suite plot group, and the option key on its x axis */
    scn_opt *opts;       /* [platform], [job], [faults], in file order */
    size_t nopts;
    char *program; /* [workload] */
    char **args;
    int nargs;
    int program_line;
    char **algos; /* [job] algo: expanded ("all" -> the catalog); none: auto */
    size_t nalgos;
    char **requires; /* texts pmixsim --help must contain */
    size_t nrequires;
    scn_expect *expects;
    size_t nexpects;
    double timeout; /* wall seconds per run, 0: none */
    double max_rss; /* bytes resident per run, 0: none */
} scn;

enum {
    SCN_PASS,
    SCN_FAIL,
    SCN_ERROR,
    SCN_SKIP
};
const char *scn_verdict_name(int verdict);

typedef struct scn_check {
    int line; /* in the scenario file; 0: implied */
    char *expect, *got;
    int verdict;
} scn_check;

/* One pmixsim run of a scenario: one algorithm. */
typedef struct scn_result {
    char *algo; /* as asked: "auto" when the file names none */
    int verdict;
    char *why; /* ERROR and SKIP: the reason */
    char *command;
    int exit_status, signal; /* signal != 0: killed by it */
    bool timed_out;
    double wall_s;
    long rss_kb;
    /* The bare SimGrid barrier of the same size (bare_ratio): its wall
     * time, NAN when it was not run, and why not or how it failed. */
    double bare_wall_s;
    char *bare_why;
    char *report;                        /* pmixsim's JSON, as written; NULL if none */
    char *err_tail;                      /* the end of pmixsim's stderr */
    double fence_mean_s, formula_mean_s; /* over the reported fences; NAN if none */
    scn_check *checks;
    size_t nchecks;
} scn_result;

typedef struct scn_outcome {
    scn *s; /* NULL when the file could not be read */
    char *path;
    char *error; /* the file could not be read or run at all */
    scn_result *runs;
    size_t nruns;
} scn_outcome;

/* Read a scenario file; NULL with "FILE:LINE: what is wrong, what to do"
 * in err. */
scn *scn_load(const char *path, char *err, size_t errlen);
void scn_free(scn *s);

typedef struct scn_env {
    const char *self; /* the pmixsim executable to run */
    bool tty;         /* progress on stderr */
    const char *progress_prefix;
    const char *pmixrun, *program; /* --also-pmixrun, --program */
    const char *bare;              /* --bare: sgbare (default: ../bench/sgbare) */
    FILE *log;                     /* the PASS/FAIL lines */
} scn_env;

/* Helpers of scenario*.c. The first three abort when memory runs out. */
char *scn_strdup(const char *s); /* NULL gives "" */
void *scn_realloc(void *p, size_t n);
char *scn_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A number with an optional unit (time: s; size: bytes; %: fraction). */
bool scn_quantity(const char *s, double *out);
bool scn_compare(const char *op, double got, double want); /* = != < <= > >= */
/* A report's status against the file's (alternatives with '|'). */
bool scn_status_is(const char *got, const char *want);

/* ---- scenario_check.c ---- */

/* Append a check; `expect` and `got` become the result's. */
void scn_add_check(scn_result *r, int line, int verdict, char *expect, char *got);
/* Check every expectation of `s` against one run: `run` is the report's
 * run object (NULL when there is none), `out` and `err` what it printed. */
void scn_check_run(const scn *s, scn_result *r, const jv *run, const char *out, const char *err);
/* The mean simulated time of the run's fences and of their formula (NAN:
 * none), for plots and the TSV. */
void scn_fence_means(const jv *run, scn_result *r);

/* ---- scenario_run.c ---- */

/* Run every algorithm of `s`; fills `out` (runs, their checks). Returns
 * the worst verdict. */
int scn_run(const scn_env *env, scn *s, scn_outcome *out);

/* ---- suite_slurm.c ---- */

/* `pmixsim suite --slurm`: runs files[0..n) as one Slurm job array, task I
 * `pmixsim run files[I]`, waits (bounded by PMIXSIM_SLURM_TIMEOUT seconds,
 * default 3600) and fills o[I] (path and s already set) from the task's
 * results, or sets o[I].error. Prints each task's PASS/FAIL lines. Returns
 * 0, or -1 when the array could not even be written. */
int scn_suite_slurm(const scn_env *env, char **files, size_t n, scn_outcome *o);
void scn_outcome_fini(scn_outcome *o);

/* ---- suite.c ---- */

int scn_write_json(FILE *f, const scn_outcome *o, size_t n);
int scn_write_junit(FILE *f, const char *suite, const scn_outcome *o, size_t n);
int scn_write_plots(const char *dir, const scn_outcome *o, size_t n, FILE *log);

/* pmixsim run / pmixsim suite: argv[1] is "run" or "suite". */
int sim_scenario_main(int argc, char **argv);

#endif /* PMIXSIM_SCENARIO_H */
