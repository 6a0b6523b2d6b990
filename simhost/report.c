/*
 * report.c - what pmixsim measures and how it reports it.
 *
 * One record per collective instance (collective id, epoch), filled by
 * the node actors: when each node starts it (its fence_nb upcall) and ends
 * it (px_coll's completion), and every data message and byte that px_coll
 * sends for it. The fence's simulated time is its span at the hosts: from
 * the moment the last node joined to the moment the last node finished.
 * It leaves out what a process sees besides the cross-node collective (the
 * FENCE and FENCE_DONE frames over the node's loopback link; library CPU
 * time is not simulated at all), so it can be held against the formula.
 *
 * The formulas are the catalog's (coll/catalog.c, px_coll_formula):
 * Hockney's alpha + k*beta costs for P nodes and n bytes in all, applied
 * to what goes on the wire, with the route's latency and the inverse of
 * its bandwidth. They hold for a contention-free network (the crossbar
 * under CM02 without cross-traffic); elsewhere the ratio shows what
 * contention, routing and the model add.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"
#include "simnet.h"

sim_fstat *sim_fstat_get(sim_run *run, uint64_t id, uint32_t epoch, bool create)
{
    sim_fstat *f;

    for (size_t i = run->nfstats; i-- > 0;)
        if (run->fstats[i].coll_id == id && run->fstats[i].epoch == epoch)
            return &run->fstats[i];
    if (!create)
        return NULL;
    if ((f = sim_grow(run->fstats, &run->capfstats, run->nfstats, sizeof(*f))) == NULL)
        return NULL;
    run->fstats = f;
    f = &run->fstats[run->nfstats++];
    memset(f, 0, sizeof(*f));
    f->coll_id = id;
    f->epoch = epoch;
    f->seq = ++run->fence_seq;
    return f;
}

/* The groups of a fence over every node (NULL for a subset, or without
 * coordinates). */
static const px_coll_groups *run_groups(sim_run *run, const sim_fstat *f)
{
    px_coll_groups *owned = NULL;

    if (f->nnodes != run->nnodes)
        return NULL;
    return sim_net_groups(run, NULL, f->nnodes, &owned); /* shared: never owned */
}

/* The host core tells the algorithm of a fence as resolved without the
 * set's groups, which is what px_coll_start resolves to except where the
 * groups decide (auto's hier rule, hier's default leaders). For a fence
 * over every node that ran the run's choice, resolve it again with the
 * groups, so that the report names what ran and holds it against the
 * right formula. */
static void settle(sim_run *run, sim_fstat *f)
{
    const char *want = f->kind == PX_COLL_ALLGATHER ? run->fence_algo : run->barrier_algo;
    const px_coll_groups *g = run_groups(run, f);
    px_coll_choice in, plain, ch;

    if (g == NULL || f->resolved.algo == NULL ||
        px_coll_parse(f->kind, want, &in, NULL, 0) != PMIX_SUCCESS ||
        px_coll_resolve(&in, f->kind, f->nnodes, 0, NULL, &plain) != PMIX_SUCCESS ||
        plain.algo != f->resolved.algo || plain.inner != f->resolved.inner ||
        plain.radix != f->resolved.radix || plain.leaders != f->resolved.leaders)
        return; /* a fence with its own choice, or settled already */
    if (px_coll_resolve(&in, f->kind, f->nnodes, 0, g, &ch) == PMIX_SUCCESS) {
        f->resolved = ch;
        px_coll_choice_format(&ch, f->algo, sizeof(f->algo));
    }
}

/* NAN when there is no formula for the algorithm: the formula is the
 * catalog's (px_coll_formula), with the route's latency and bandwidth,
 * and for hier the run's groups (their number and the largest). */
double sim_formula(sim_run *run, const sim_fstat *f)
{
    const px_coll_groups *g = run_groups(run, f);
    px_coll_cost_in in = {
        .kind = f->kind,
        .nmembers = f->nnodes,
        .radix = f->resolved.radix,
        .bytes = f->contrib,
        .latency = run->alpha,
        .beta = run->beta,
        .ngroups = 1,
        .group_size = f->nnodes,
    };

    if (f->resolved.algo == NULL)
        return f->nnodes <= 1 ? 0 : NAN;
    if (g != NULL) {
        in.ngroups = px_coll_groups_count(g);
        in.group_size = 0;
        for (uint32_t i = 0; i < in.ngroups; i++)
            if (px_coll_groups_size(g, i) > in.group_size)
                in.group_size = px_coll_groups_size(g, i);
    } else if (f->nnodes != run->nnodes && run->net != NULL && run->net->have_coords) {
        in.ngroups = in.group_size = 0; /* a subset's groups: not known here */
    }
    return px_coll_formula(&f->resolved, &in);
}

static double span(const sim_fstat *f)
{
    return f->t_last_end - f->t_last_start;
}

void sim_progress(sim_run *run, const sim_fstat *f)
{
    if (!run->tty)
        return;
    fprintf(stderr, "\rpmixsim: fence %u (%s, %u nodes) done at %.6f s simulated   ", f->seq,
            f->algo, f->nnodes, f->t_last_end);
    fflush(stderr);
}

static const char *cpu_name(int cpu)
{
    return cpu == SIM_CPU_MEASURED ? "measured" : cpu == SIM_CPU_MODEL ? "model" : "none";
}

static const char *kind_name(px_coll_kind k)
{
    return k == PX_COLL_ALLGATHER ? "allgather" : "barrier";
}

void sim_json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.9g", v);
    else
        fprintf(f, "null");
}

/* The node and process actors of the run (not the faults' and planes'). */
static uint32_t sim_actors(const sim_run *run)
{
    return run->nprocs + (run->merged ? 0 : run->nnodes);
}

void sim_report(sim_run *run, FILE *tsv, FILE *json, int index, double wall, long rss_kb)
{
    const sim_opts *o = &run->opt;

    for (size_t i = 0; i < run->nfstats; i++)
        settle(run, &run->fstats[i]);
    if (tsv != NULL) {
        if (index == 0)
            fprintf(tsv, "fence\tkind\talgo\tnodes\tppn\tbytes_in\tsim_us\tmsgs\tbytes\t"
                         "formula_us\tratio\tstatus\n");
        for (size_t i = 0; i < run->nfstats; i++) {
            const sim_fstat *f = &run->fstats[i];
            double t = span(f) * 1e6, pred = sim_formula(run, f) * 1e6;
            fprintf(tsv, "%u\t%s\t%s\t%u\t%u\t%llu\t%.4f\t%llu\t%llu\t", f->seq, kind_name(f->kind),
                    f->algo, f->nnodes, o->ppn, (unsigned long long)f->contrib, t,
                    (unsigned long long)f->msgs, (unsigned long long)f->bytes);
            if (isfinite(pred))
                fprintf(tsv, "%.4f\t%.4f\t", pred, pred > 0 ? t / pred : 1.0);
            else
                fprintf(tsv, "-\t-\t");
            fprintf(tsv, "%s\n", f->nfail ? PMIx_Error_string(f->status) : "ok");
        }
        fprintf(tsv,
                "# run: algo=%s nodes=%u ppn=%u topology=%s model=%s seed=%llu workload=%s "
                "procs_failed=%u sim_s=%.9f cpu=%s cpu_charged_s=%.9f\n",
                o->algo != NULL ? o->algo : "auto", run->nnodes, o->ppn, sim_topo_name(o->topology),
                o->lv08 ? "lv08" : "cm02", (unsigned long long)o->seed, run->wl->name,
                run->procs_failed, sgw_now(), cpu_name(o->cpu), run->cpu_charged);
        fprintf(tsv, "# wall: wall_s=%.3f peak_rss_mb=%.1f stack_max_b=%zu actors=%u\n", wall,
                rss_kb / 1024.0, run->stack_max, sim_actors(run));
        if (run->depart_msgs > 0) /* none when every process ended at once */
            fprintf(tsv, "# departures: procs=%u messages=%llu records=%llu window_ns=%g\n",
                    run->departs, (unsigned long long)run->depart_msgs,
                    (unsigned long long)run->depart_recs, sim_news_window() * 1e9);
        fflush(tsv);
    }
    if (json != NULL) {
        fprintf(json,
                "%s{\"algo\":\"%s\",\"nodes\":%u,\"ppn\":%u,\"topology\":\"%s\",\"model\":\"%s\","
                "\"seed\":%llu,\"workload\":\"%s\",\"alpha_s\":",
                index > 0 ? ",\n" : "", o->algo != NULL ? o->algo : "auto", run->nnodes, o->ppn,
                sim_topo_name(o->topology), o->lv08 ? "lv08" : "cm02", (unsigned long long)o->seed,
                run->wl->name);
        sim_json_num(json, run->alpha);
        fprintf(json, ",\"beta_s_per_byte\":");
        sim_json_num(json, run->beta);
        fprintf(json,
                ",\"procs_failed\":%u,\"sim_s\":%.9g,\"cpu\":\"%s\",\"cpu_charged_s\":%.9g,"
                "\"wall_s\":%.3f,\"peak_rss_kb\":%ld,\"stack_max_b\":%zu,\"actors\":%u,"
                "\"fences\":[",
                run->procs_failed, sgw_now(), cpu_name(o->cpu), run->cpu_charged, wall, rss_kb,
                run->stack_max, sim_actors(run));
        for (size_t i = 0; i < run->nfstats; i++) {
            const sim_fstat *f = &run->fstats[i];
            double pred = sim_formula(run, f);
            fprintf(json,
                    "%s\n  {\"fence\":%u,\"kind\":\"%s\",\"algo\":\"%s\",\"nodes\":%u,"
                    "\"bytes_in\":%llu,\"sim_s\":",
                    i ? "," : "", f->seq, kind_name(f->kind), f->algo, f->nnodes,
                    (unsigned long long)f->contrib);
            sim_json_num(json, span(f));
            fprintf(json, ",\"first_start_s\":");
            sim_json_num(json, f->t_first_start);
            fprintf(json,
                    ",\"msgs\":%llu,\"bytes\":%llu,\"formula_s\":", (unsigned long long)f->msgs,
                    (unsigned long long)f->bytes);
            sim_json_num(json, pred);
            fprintf(json, ",\"ratio\":");
            sim_json_num(json, isfinite(pred) && pred > 0 ? span(f) / pred : NAN);
            fprintf(json, ",\"status\":\"%s\"}", f->nfail ? PMIx_Error_string(f->status) : "ok");
        }
        fprintf(json,
                "],\"departures\":{\"procs\":%u,\"messages\":%llu,\"records\":%llu,"
                "\"window_ns\":%g}",
                run->departs, (unsigned long long)run->depart_msgs,
                (unsigned long long)run->depart_recs, sim_news_window() * 1e9);
        sim_faults_json(run, json);
        sim_spawn_json(run, json);
        fprintf(json, "}");
        fflush(json);
    }
}
