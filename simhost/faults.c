/*
 * faults.c - the fault layer of pmixsim (docs/simulation.md, "Faults").
 *
 * A fault is given as `--fault SPEC`:
 *
 *   node:ID@T          node ID crashes at simulated time T: its NICs on
 *                      every plane go off and its server and processes are
 *                      killed; the other nodes learn it
 *                      `--detect` seconds later (their failure detector)
 *                      or earlier, when a send to it fails
 *   proc:RANK@T        process RANK is killed at T
 *   proc:RANK@fence:K  process RANK is killed as it enters its K-th fence
 *                      (its server drops the FENCE request: it never
 *                      contributes)
 *   link:ID[.P]@T      node ID's links (on plane P; on every plane without
 *                      .P) are cut at T: transfers through them fail
 *   plane:P@T          every link of plane P is cut at T (--planes 2)
 *
 * ID and RANK may be `rand`, T a range `T1..T2`: both are drawn from the
 * run's seed, in the order the faults are given (a splitmix64 sequence),
 * so that a seed names one failure and replays it exactly. Times take the
 * units of --lat (`30us`, `1.5ms`, `2e-5`).
 *
 * Everything is known before the simulation starts, so every fault is
 * armed at setup on the actor that carries it out. A crash is a daemon
 * actor on the node's host that, at T exactly, cuts the node's links and
 * kills its actors wherever they are (a transfer under way fails; the
 * engines' state is freed at the end of the run, as it was); the
 * detection is a timer on every other node. A process is killed at T
 * exactly by a daemon actor on its host, which then wakes the node's actor
 * to reap it (its server learns of the death as a daemon gets SIGCHLD). proc:RANK@fence:K is
 * checked by the victim's node as FENCE requests arrive. A cut is a timer on the node whose links
 * go (a plane: on a node that no fault crashes).
 *
 * Processes and nodes that a fault may kill are marked `doomed` before
 * they start: their actors run through sim_run_doomed, which the
 * sanitizer build's leak check ignores (what a killed actor held on its
 * stack is lost with it, as in a real crash).
 *
 * What a death does to the fences is the host core's (px_hc_break, the
 * rule of pmixd); the news of a process's death travels to the other
 * nodes down a binomial tree rooted at its node (a node whose send to a
 * child fails forwards to that child's subtree itself).
 *
 * Outputs: the event log (--events FILE), one line per event in simulated
 * order, "TIME<TAB>WHAT<TAB>...", identical for identical runs; and, per
 * process fence number k, how many processes got which status from their
 * k-th fence and how many died inside it (the `proc_fences` of the JSON
 * report, which the scenarios' `survivors` expectation reads).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"

#define PF_MAX_STATUSES 8 /* distinct error statuses counted per fence */

typedef enum {
    F_NODE,
    F_PROC,
    F_LINK,
    F_PLANE
} fault_kind;

typedef struct fault_note {
    sim_fault *f;
    sim_node *n;
} fault_note;

struct sim_fault {
    char spec[96]; /* as given */
    fault_kind kind;
    int64_t target; /* node (node, link) or rank (proc); -1 for a plane */
    int plane;      /* link .P, plane P; -1: every plane */
    double at;      /* simulated time; NAN for proc:RANK@fence:K */
    uint32_t fence; /* K of proc:RANK@fence:K, else 0 */
    bool injected;
    double injected_s;
    char outcome[96];
    fault_note *notes; /* the timers' arguments */
    size_t nnotes;
};

struct sim_pfence {
    uint32_t ok, died_inside;
    unsigned nerr;
    pmix_status_t err[PF_MAX_STATUSES];
    uint32_t nerrs[PF_MAX_STATUSES];
    uint32_t other; /* processes with a status beyond PF_MAX_STATUSES kinds */
};

static const char *const kind_names[] = {"node", "proc", "link", "plane"};

/* ---- the event log ---- */

void sim_event(sim_run *run, const char *fmt, ...)
{
    va_list ap;

    if (run->events == NULL)
        return;
    fprintf(run->events, "%.9f\t", sgw_now());
    va_start(ap, fmt);
    vfprintf(run->events, fmt, ap);
    va_end(ap);
    fputc('\n', run->events);
}

/* ---- parsing and drawing ---- */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double draw_unit(uint64_t *state) /* [0, 1) */
{
    return (double)(splitmix64(state) >> 11) * 0x1.0p-53;
}

static bool parse_seconds(const char *s, const char *end, double *out)
{
    char buf[64], *e;
    double v, mult = 1;
    size_t len = (size_t)(end - s);

    if (len == 0 || len >= sizeof(buf))
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    v = strtod(buf, &e);
    if (e == buf || !isfinite(v) || v < 0)
        return false;
    if (strcmp(e, "ms") == 0)
        mult = 1e-3;
    else if (strcmp(e, "us") == 0)
        mult = 1e-6;
    else if (strcmp(e, "ns") == 0)
        mult = 1e-9;
    else if (*e != '\0' && strcmp(e, "s") != 0)
        return false;
    *out = v * mult;
    return true;
}

/* "T" or "T1..T2" (drawn). */
static bool parse_when(const char *s, uint64_t *rng, double *out)
{
    const char *dots = strstr(s, "..");
    double lo, hi;

    if (dots == NULL)
        return parse_seconds(s, s + strlen(s), out);
    if (!parse_seconds(s, dots, &lo) ||
        !parse_seconds(dots + 2, dots + 2 + strlen(dots + 2), &hi) || hi < lo)
        return false;
    *out = lo + (hi - lo) * draw_unit(rng);
    return true;
}

/* A number below `limit`, or `rand` (drawn). */
static bool parse_id(const char *s, const char *end, uint64_t limit, uint64_t *rng, int64_t *out)
{
    char *e;
    unsigned long long v;

    if ((size_t)(end - s) == 4 && strncmp(s, "rand", 4) == 0) {
        *out = (int64_t)(splitmix64(rng) % limit);
        return true;
    }
    if (s == end || *s < '0' || *s > '9')
        return false;
    v = strtoull(s, &e, 10);
    if (e != end || v >= limit)
        return false;
    *out = (int64_t)v;
    return true;
}

static int bad_spec(char *err, size_t errlen, const char *spec, const char *why)
{
    snprintf(err, errlen, "--fault %s: %s", spec, why);
    return -1;
}

static int parse_fault(sim_run *run, const char *spec, uint64_t *rng, sim_fault *f, char *err,
                       size_t errlen)
{
    const char *colon = strchr(spec, ':'), *at = strchr(spec, '@'), *dot;
    char why[256];

    memset(f, 0, sizeof(*f));
    snprintf(f->spec, sizeof(f->spec), "%s", spec);
    f->plane = -1;
    f->target = -1;
    f->at = NAN;
    if (colon == NULL || at == NULL || at < colon)
        return bad_spec(err, errlen, spec,
                        "expected node:ID@T, proc:RANK@T, proc:RANK@fence:K, link:ID[.P]@T or "
                        "plane:P@T (ID and RANK may be rand, T a range T1..T2)");
    if (strncmp(spec, "node:", 5) == 0) {
        f->kind = F_NODE;
        snprintf(why, sizeof(why), "ID must be rand or a node below %u", run->nnodes);
        if (!parse_id(colon + 1, at, run->nnodes, rng, &f->target))
            return bad_spec(err, errlen, spec, why);
    } else if (strncmp(spec, "proc:", 5) == 0) {
        f->kind = F_PROC;
        snprintf(why, sizeof(why), "RANK must be rand or a rank below %u", run->nprocs);
        if (!parse_id(colon + 1, at, run->nprocs, rng, &f->target))
            return bad_spec(err, errlen, spec, why);
        if (strncmp(at + 1, "fence:", 6) == 0) {
            char *e;
            unsigned long k = strtoul(at + 7, &e, 10);
            if (at[7] < '1' || at[7] > '9' || *e != '\0' || k > UINT32_MAX)
                return bad_spec(err, errlen, spec, "K of @fence:K must be 1 or more");
            f->fence = (uint32_t)k;
        }
    } else if (strncmp(spec, "link:", 5) == 0) {
        f->kind = F_LINK;
        dot = memchr(colon + 1, '.', (size_t)(at - colon - 1));
        snprintf(why, sizeof(why), "ID must be rand or a node below %u", run->nnodes);
        if (!parse_id(colon + 1, dot != NULL ? dot : at, run->nnodes, rng, &f->target))
            return bad_spec(err, errlen, spec, why);
        if (dot != NULL) {
            int64_t p;
            if (!parse_id(dot + 1, at, run->opt.planes, rng, &p))
                return bad_spec(err, errlen, spec, "P must be a plane below --planes");
            f->plane = (int)p;
        }
    } else if (strncmp(spec, "plane:", 6) == 0) {
        int64_t p;
        f->kind = F_PLANE;
        if (run->opt.planes < 2)
            return bad_spec(
                err, errlen, spec,
                "a plane fault needs --planes 2 (with one plane, cut links: link:ID@T)");
        if (!parse_id(colon + 1, at, run->opt.planes, rng, &p))
            return bad_spec(err, errlen, spec, "P must be a plane below --planes");
        f->plane = (int)p;
    } else {
        return bad_spec(err, errlen, spec, "unknown kind: expected node, proc, link or plane");
    }
    if (f->fence == 0 && !parse_when(at + 1, rng, &f->at))
        return bad_spec(err, errlen, spec,
                        f->kind == F_PROC
                            ? "expected @T, @T1..T2 (times such as 30us) or @fence:K"
                            : "expected @T or @T1..T2 (times such as 30us, 1.5ms or 2e-5)");
    if ((f->kind == F_LINK || f->kind == F_PLANE) && run->opt.topology == TOPO_FILE)
        return bad_spec(err, errlen, spec,
                        "links and planes can be cut on generated topologies only, not with "
                        "--platform");
    return 0;
}

/* ---- carrying faults out ---- */

static sim_pfence *pf_get(sim_run *run, uint32_t k)
{
    if (k == 0)
        return NULL;
    if (k > run->npf) {
        sim_pfence *pf = realloc(run->pf, k * sizeof(*pf));
        if (pf == NULL) {
            fprintf(stderr, "pmixsim: out of memory\n");
            abort();
        }
        memset(pf + run->npf, 0, (k - run->npf) * sizeof(*pf));
        run->pf = pf;
        run->npf = k;
    }
    return &run->pf[k - 1];
}

void sim_fault_fence_result(sim_run *run, sim_proc *p, pmix_status_t status)
{
    sim_pfence *pf = pf_get(run, ++p->fences_done);
    unsigned i;

    sim_event(run, "proc-fence\trank %u\tfence %u\t%s", p->proc.rank, p->fences_done,
              status == PMIX_SUCCESS ? "ok" : PMIx_Error_string(status));
    if (status == PMIX_SUCCESS) {
        pf->ok++;
        return;
    }
    for (i = 0; i < pf->nerr && pf->err[i] != status; i++)
        ;
    if (i == pf->nerr && pf->nerr == PF_MAX_STATUSES) {
        pf->other++;
        return;
    }
    if (i == pf->nerr) {
        pf->err[pf->nerr] = status;
        pf->nerrs[pf->nerr++] = 0;
    }
    pf->nerrs[i]++;
}

static void injected(sim_fault *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void injected(sim_fault *f, const char *fmt, ...)
{
    va_list ap;

    if (!f->injected) {
        f->injected = true;
        f->injected_s = sgw_now();
    }
    va_start(ap, fmt);
    vsnprintf(f->outcome, sizeof(f->outcome), fmt, ap);
    va_end(ap);
}

/* Mark p dead (killed by fault f); returns false if it was not running. */
static bool proc_dies(sim_run *run, sim_proc *p)
{
    if (p->exited || p->killed)
        return false;
    p->killed = true;
    p->closed = true; /* its server sends it nothing more */
    run->procs_killed++;
    if (p->fences_sent > p->fences_done) {
        pf_get(run, p->fences_sent)->died_inside++;
        sim_event(run, "kill\trank %u\tnode %u\tinside fence %u", p->proc.rank, p->node->id,
                  p->fences_sent);
    } else {
        sim_event(run, "kill\trank %u\tnode %u", p->proc.rank, p->node->id);
    }
    return true;
}

/* Kill the victim of f (on node n): false if it was not running. */
static bool kill_proc(sim_node *n, sim_fault *f)
{
    sim_proc *p = &n->procs[(uint32_t)f->target % n->nprocs];

    if (n->dead || !proc_dies(n->ep.run, p)) {
        snprintf(f->outcome, sizeof(f->outcome), "rank %u had %s", p->proc.rank,
                 p->exited ? "already ended" : "already died");
        return false;
    }
    injected(f, "rank %u killed", p->proc.rank);
    (void)sgw_kill(p->actor);
    return true;
}

/* In the node's actor: its server learns of the death (as a daemon gets
 * SIGCHLD), the job breaks here, and the news goes to the other nodes. */
static void proc_reaped(void *arg)
{
    fault_note *note = arg;
    sim_node *n = note->n;
    sim_proc *p = &n->procs[(uint32_t)note->f->target % n->nprocs];

    px_server_proc_died(n->srv, &p->proc, PMIX_ERR_PROC_TERM_WO_SYNC);
    px_hc_break(n->hc, p->proc.rank, true, "a local process died");
}

bool sim_fault_at_fence(sim_node *n, sim_proc *p)
{
    sim_fault *f = p->kill_fence;

    p->fences_seen++;
    if (f == NULL || p->fences_seen != f->fence || !kill_proc(n, f))
        return false;
    proc_reaped(&f->notes[0]);
    return true;
}

/* proc:RANK@T: a daemon actor on the victim's host kills it at T exactly
 * (wherever it is blocked), then wakes the node's actor to reap it. */
static void kill_actor(void *arg)
{
    fault_note *note = arg;

    sgw_sleep_until(note->f->at);
    if (kill_proc(note->n, note->f))
        (void)sim_timer_add(&note->n->ep, 0, proc_reaped, note);
}

static void detect_timer(void *arg)
{
    fault_note *note = arg;

    if (!note->n->dead)
        sim_node_lost(note->n, (uint32_t)note->f->target);
}

/* node:ID@T: a daemon actor on the node's host crashes it at T exactly,
 * whatever the node's actors are doing. */
static void crash_actor(void *arg)
{
    fault_note *note = arg;
    sim_node *n = note->n;
    sim_run *run = n->ep.run;
    sim_fault *f = note->f;
    uint32_t killed = 0;

    sgw_sleep_until(f->at);
    n->dead = true;
    for (uint32_t i = 0; i < n->nprocs; i++)
        killed += proc_dies(run, &n->procs[i]);
    injected(f, "node %u crashed (%u processes killed)", n->id, killed);
    sim_event(run, "crash\tnode %u", n->id);
    /* Its NICs go off (transfers under way fail, new ones to it fail at
     * once), then its actors die wherever they are. The host itself stays
     * on: SimGrid asserts when an actor that is half-way into a send
     * starts a transfer to a host that went off under it. */
    sim_net_node_off(run, n->id);
    for (uint32_t i = 0; i < n->nprocs; i++)
        (void)sgw_kill(n->procs[i].actor);
    (void)sgw_kill(n->actor);
}

static void cut_timer(void *arg)
{
    fault_note *note = arg;
    sim_fault *f = note->f;
    sim_run *run = note->n->ep.run;
    int rc = PMIX_SUCCESS;

    if (f->kind == F_PLANE) {
        rc = sim_net_down(run, f->plane, -1);
        injected(f, "plane %d down", f->plane);
    } else {
        for (unsigned p = 0; p < run->opt.planes && rc == PMIX_SUCCESS; p++)
            if (f->plane < 0 || (unsigned)f->plane == p)
                rc = sim_net_down(run, (int)p, f->target);
        injected(f, "node %lld's NIC%s down", (long long)f->target,
                 f->plane < 0 && run->opt.planes > 1 ? "s" : "");
    }
    if (rc != PMIX_SUCCESS)
        snprintf(f->outcome, sizeof(f->outcome), "failed: %s", PMIx_Error_string(rc));
    sim_event(run, "cut\t%s\t%s", f->spec, f->outcome);
}

/* Arm timer `cb` on node n at simulated time `at` (the clock is at 0
 * during setup) with the fault's next note. */
static int arm(sim_fault *f, sim_node *n, double at, void (*cb)(void *))
{
    fault_note *note = &f->notes[f->nnotes++];

    note->f = f;
    note->n = n;
    return sim_timer_add(&n->ep, at, cb, note) != NULL ? 0 : -1;
}

int sim_faults_setup(sim_run *run, char *err, size_t errlen)
{
    const sim_opts *o = &run->opt;
    uint64_t rng = o->seed;
    uint32_t spare; /* a node that no fault crashes: carries plane faults */

    if (o->nfaults == 0)
        return 0;
    run->faults = calloc(o->nfaults, sizeof(*run->faults));
    if (run->faults == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    run->nfaults = o->nfaults;
    for (unsigned i = 0; i < o->nfaults; i++)
        if (parse_fault(run, o->faults[i], &rng, &run->faults[i], err, errlen) != 0)
            return -1;
    for (spare = 0; spare < run->nnodes; spare++) {
        bool crashes = false;
        for (unsigned i = 0; i < run->nfaults; i++)
            if (run->faults[i].kind == F_NODE && run->faults[i].target == (int64_t)spare)
                crashes = true;
        if (!crashes)
            break;
    }
    for (unsigned i = 0; i < run->nfaults; i++) {
        sim_fault *f = &run->faults[i];
        size_t need = f->kind == F_NODE ? run->nnodes : 1;
        int rc = 0;
        f->notes = calloc(need, sizeof(*f->notes));
        if (f->notes == NULL) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        switch (f->kind) {
        case F_NODE:
            run->nodes[(uint32_t)f->target].doomed = true;
            for (uint32_t j = 0; j < o->ppn; j++)
                run->nodes[(uint32_t)f->target].procs[j].doomed = true;
            for (uint32_t k = 0; k < run->nnodes && rc == 0; k++) {
                if (k != (uint32_t)f->target)
                    rc = arm(f, &run->nodes[k], f->at + o->detect, detect_timer);
            }
            f->notes[f->nnotes] = (fault_note){f, &run->nodes[(uint32_t)f->target]};
            (void)sgw_actor("fault", run->nodes[(uint32_t)f->target].host, crash_actor,
                            &f->notes[f->nnotes++], 1);
            break;
        case F_PROC: {
            sim_node *n = &run->nodes[(uint32_t)f->target / o->ppn];
            sim_proc *p = &n->procs[(uint32_t)f->target % o->ppn];
            f->notes[f->nnotes++] = (fault_note){f, n};
            p->doomed = true;
            if (f->fence > 0)
                p->kill_fence = f;
            else
                (void)sgw_actor("fault", n->host, kill_actor, &f->notes[0], 1);
            break;
        }
        case F_LINK: rc = arm(f, &run->nodes[(uint32_t)f->target], f->at, cut_timer); break;
        case F_PLANE:
            if (spare == run->nnodes) {
                snprintf(err, errlen, "--fault %s: every node crashes: none is left to cut it",
                         f->spec);
                return -1;
            }
            rc = arm(f, &run->nodes[spare], f->at, cut_timer);
            break;
        }
        if (rc != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        if (f->fence > 0)
            snprintf(f->outcome, sizeof(f->outcome), "rank %lld never entered fence %u",
                     (long long)f->target, f->fence);
        else
            snprintf(f->outcome, sizeof(f->outcome), "not reached: the run ended first");
    }
    return 0;
}

void sim_faults_fini(sim_run *run)
{
    for (unsigned i = 0; i < run->nfaults; i++)
        free(run->faults[i].notes);
    free(run->faults);
    run->faults = NULL;
    run->nfaults = 0;
    free(run->pf);
    run->pf = NULL;
    run->npf = 0;
}

/* ---- reports ---- */

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

void sim_faults_json(const sim_run *run, FILE *json)
{
    fprintf(json, ",\"procs_killed\":%u,\"coll_timeout_s\":", run->procs_killed);
    sim_json_num(json, run->opt.coll_timeout);
    fprintf(json, ",\"detect_s\":");
    sim_json_num(json, run->opt.detect);
    fprintf(json, ",\"faults\":[");
    for (unsigned i = 0; i < run->nfaults; i++) {
        const sim_fault *f = &run->faults[i];
        fprintf(json, "%s\n  {\"spec\":", i ? "," : "");
        json_string(json, f->spec);
        fprintf(json,
                ",\"kind\":\"%s\",\"target\":%lld,\"plane\":%d,\"at_s\":", kind_names[f->kind],
                (long long)f->target, f->plane);
        sim_json_num(json, f->at);
        fprintf(json, ",\"fence\":%u,\"injected\":%s,\"injected_s\":", f->fence,
                f->injected ? "true" : "false");
        sim_json_num(json, f->injected ? f->injected_s : NAN);
        fprintf(json, ",\"outcome\":");
        json_string(json, f->outcome);
        fputc('}', json);
    }
    fprintf(json, "],\"proc_fences\":[");
    for (size_t k = 0; k < run->npf; k++) {
        const sim_pfence *pf = &run->pf[k];
        fprintf(json, "%s\n  {\"fence\":%zu,\"ok\":%u,\"died_inside\":%u,\"errors\":{",
                k ? "," : "", k + 1, pf->ok, pf->died_inside);
        for (unsigned i = 0; i < pf->nerr; i++)
            fprintf(json, "%s\"%s\":%u", i ? "," : "", PMIx_Error_string(pf->err[i]), pf->nerrs[i]);
        if (pf->other > 0)
            fprintf(json, "%s\"other\":%u", pf->nerr ? "," : "", pf->other);
        fprintf(json, "}}");
    }
    fprintf(json, "]");
}

void sim_faults_report(const sim_run *run, FILE *tsv)
{
    for (unsigned i = 0; i < run->nfaults; i++) {
        const sim_fault *f = &run->faults[i];
        if (f->injected)
            fprintf(tsv, "# fault %s: %s at %.4f us\n", f->spec, f->outcome, f->injected_s * 1e6);
        else
            fprintf(tsv, "# fault %s: %s\n", f->spec, f->outcome);
    }
    if (run->nfaults > 0)
        fprintf(tsv, "# faults: procs_killed=%u coll_timeout_s=%g detect_s=%g\n", run->procs_killed,
                run->opt.coll_timeout, run->opt.detect);
}
