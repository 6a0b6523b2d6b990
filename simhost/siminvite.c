/*
 * siminvite.c - what a group invitation across nodes costs in pmixsim.
 *
 * An invitation crosses nodes as events (simspawn.c carries them; the
 * library's server makes them, libpmix/src/server/group.c): the
 * inviter's server sends each invited process of another node a
 * PMIX_GROUP_INVITED event, each answer (PMIX_GROUP_INVITE_ACCEPTED or
 * _DECLINED) comes back as an event to the inviter, and once all have
 * answered the inviter's server sends the outcome (PX_GROUP_INVITE_DONE)
 * to the invited processes' nodes, whose servers then build the group
 * with the host core (a construct, an allgather among the member nodes).
 * This file watches those events as the host carries them and reports
 * each invitation in parts:
 *
 *   invite_s     the first invitation sent to the last one delivered; the
 *                inviter's node sends them one after the other, so the
 *                formula is R x (alpha + L x beta) for R invitations
 *   answer_s     from there to the last answer at the inviter's node, as
 *                measured (a hop and the invited process's own handling
 *                of the event over its loopback: what a workload does)
 *   outcome_s    the outcome sent to its last node's delivery: ceil(lg k)
 *                x (alpha + L x beta) over the k nodes of the members
 *                and the inviter
 *   construct_s  the construct (the first allgather to start after the
 *                outcome was sent) from its last node's start to its end:
 *                the catalog's formula of its algorithm (sim_formula)
 *
 * total_s runs from the first invitation sent to the construct's end;
 * formula_s is the sum of the formulas and the measured answer_s.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "pmixsim.h"
#include "server/server_int.h" /* PX_GROUP_INVITE_DONE */

#define EVENT_HDR 16 /* as simspawn.c charges an event */

struct sim_invstat {
    char grp[PMIX_MAX_NSLEN + 1];
    pmix_proc_t leader;
    uint32_t leader_node;
    uint32_t invited, answers, nodes;
    size_t inv_bytes, out_bytes;
    double t_first, t_inv_last, t_ans_last, t_out_sent, t_out_last;
    bool settled;
};

static const char *group_of(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++)
        if (PMIx_Check_key(info[i].key, PMIX_GROUP_ID) && info[i].value.type == PMIX_STRING)
            return info[i].value.data.string;
    return NULL;
}

static const pmix_proc_t *custom_one(const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (!PMIx_Check_key(info[i].key, PMIX_EVENT_CUSTOM_RANGE))
            continue;
        if (info[i].value.type == PMIX_PROC)
            return info[i].value.data.proc;
        if (info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray != NULL &&
            info[i].value.data.darray->type == PMIX_PROC && info[i].value.data.darray->size == 1)
            return info[i].value.data.darray->array;
    }
    return NULL;
}

/* The open invitation of `grp` by `leader`, or NULL. */
static struct sim_invstat *find(sim_run *run, const char *grp, const pmix_proc_t *leader)
{
    for (size_t i = run->ninvstats; i-- > 0;) {
        struct sim_invstat *v = &run->invstats[i];
        if (strcmp(v->grp, grp) == 0 && PMIx_Check_procid(&v->leader, leader))
            return v;
    }
    return NULL;
}

void sim_invite_sent(sim_node *n, pmix_status_t status, const pmix_proc_t *source,
                     const pmix_info_t info[], size_t ninfo, size_t bytes, uint32_t nodes)
{
    sim_run *run = n->ep.run;
    const char *grp = group_of(info, ninfo);
    struct sim_invstat *v;
    double now = sgw_now();

    if (grp == NULL || (status != PMIX_GROUP_INVITED && status != PX_GROUP_INVITE_DONE))
        return;
    v = find(run, grp, source);
    if (status == PMIX_GROUP_INVITED && (v == NULL || v->settled)) {
        v = sim_grow(run->invstats, &run->capinvstats, run->ninvstats, sizeof(*v));
        if (v == NULL)
            return; /* not measured */
        run->invstats = v;
        v = &run->invstats[run->ninvstats++];
        memset(v, 0, sizeof(*v));
        snprintf(v->grp, sizeof(v->grp), "%s", grp);
        v->leader = *source;
        v->leader_node = n->id;
        v->t_first = now;
        v->inv_bytes = bytes;
    }
    if (v == NULL)
        return;
    if (status == PMIX_GROUP_INVITED) {
        v->invited++;
    } else if (!v->settled) {
        v->settled = true;
        v->t_out_sent = now;
        v->out_bytes = bytes;
        v->nodes = nodes;
    }
}

void sim_invite_heard(sim_node *n, pmix_status_t status, const pmix_proc_t *source,
                      const pmix_info_t info[], size_t ninfo)
{
    sim_run *run = n->ep.run;
    const char *grp = group_of(info, ninfo);
    const pmix_proc_t *leader = source;
    struct sim_invstat *v;
    double now = sgw_now();

    if (grp == NULL)
        return;
    if (status == PMIX_GROUP_INVITE_ACCEPTED || status == PMIX_GROUP_INVITE_DECLINED)
        leader = custom_one(info, ninfo); /* the answer goes to the inviter */
    else if (status != PMIX_GROUP_INVITED && status != PX_GROUP_INVITE_DONE)
        return;
    if (leader == NULL || (v = find(run, grp, leader)) == NULL)
        return;
    if (status == PMIX_GROUP_INVITED && now > v->t_inv_last)
        v->t_inv_last = now;
    else if (status == PX_GROUP_INVITE_DONE && now > v->t_out_last)
        v->t_out_last = now;
    else if (status != PMIX_GROUP_INVITED && status != PX_GROUP_INVITE_DONE &&
             n->id == v->leader_node) {
        v->answers++;
        if (now > v->t_ans_last)
            v->t_ans_last = now;
    }
}

static unsigned ceil_lg(uint32_t n)
{
    unsigned d = 0;
    while ((1ull << d) < n)
        d++;
    return d;
}

typedef struct inv_times {
    double invite, answer, outcome, construct, total;
    double f_invite, f_outcome, f_construct, formula;
    const sim_fstat *f;
    bool done;
} inv_times;

static inv_times times_of(sim_run *run, const struct sim_invstat *v)
{
    inv_times t = {0};
    const sim_fstat *f = NULL;

    for (size_t i = 0; i < run->nfstats; i++) {
        const sim_fstat *s = &run->fstats[i];
        if (s->kind == PX_COLL_ALLGATHER && s->nstart > 0 && s->t_first_start >= v->t_out_sent &&
            (f == NULL || s->seq < f->seq))
            f = s;
    }
    t.f = f;
    t.f_invite = v->invited * (run->alpha + (double)v->inv_bytes * run->beta);
    t.f_outcome = ceil_lg(v->nodes) * (run->alpha + (double)v->out_bytes * run->beta);
    if (!v->settled || f == NULL || f->nend != f->nnodes || f->nfail > 0 || v->invited == 0)
        return t;
    t.done = true;
    t.invite = v->t_inv_last - v->t_first;
    t.answer = v->t_ans_last - v->t_inv_last;
    t.outcome = v->t_out_last - v->t_out_sent;
    t.construct = f->t_last_end - f->t_last_start;
    t.total = f->t_last_end - v->t_first;
    t.f_construct = sim_formula(run, f);
    t.formula = t.f_invite + t.answer + t.f_outcome + t.f_construct;
    return t;
}

void sim_invite_report(sim_run *run, FILE *tsv)
{
    for (size_t i = 0; i < run->ninvstats; i++) {
        const struct sim_invstat *v = &run->invstats[i];
        inv_times t = times_of(run, v);
        fprintf(tsv, "# invite: group=%s leader_rank=%u invited=%u answers=%u nodes=%u", v->grp,
                v->leader.rank, v->invited, v->answers, v->nodes);
        if (!t.done) {
            fprintf(tsv, " total_s=- (not settled, or its construct did not end everywhere)\n");
            continue;
        }
        fprintf(tsv,
                " invite_s=%.9f answer_s=%.9f outcome_s=%.9f construct_s=%.9f total_s=%.9f "
                "formula_s=%.9f ratio=%.6f construct_algo=%s\n",
                t.invite, t.answer, t.outcome, t.construct, t.total, t.formula,
                t.formula > 0 ? t.total / t.formula : 1.0, t.f->algo);
        fprintf(tsv,
                "# invite-formula: invite_s=%.9f (%u x (alpha + %zu B x beta)) outcome_s=%.9f "
                "(ceil(lg %u) x (alpha + %zu B x beta)) construct_s=%.9f\n",
                t.f_invite, v->invited, v->inv_bytes, t.f_outcome, v->nodes, v->out_bytes,
                t.f_construct);
    }
}

void sim_invite_json(sim_run *run, FILE *json)
{
    fprintf(json, ",\"invites\":[");
    for (size_t i = 0; i < run->ninvstats; i++) {
        const struct sim_invstat *v = &run->invstats[i];
        inv_times t = times_of(run, v);
        double nan = NAN;
        fprintf(json,
                "%s\n  {\"group\":\"%s\",\"leader_rank\":%u,\"invited\":%u,\"answers\":%u,"
                "\"nodes\":%u",
                i ? "," : "", v->grp, v->leader.rank, v->invited, v->answers, v->nodes);
        fprintf(json, ",\"invite_s\":");
        sim_json_num(json, t.done ? t.invite : nan);
        fprintf(json, ",\"answer_s\":");
        sim_json_num(json, t.done ? t.answer : nan);
        fprintf(json, ",\"outcome_s\":");
        sim_json_num(json, t.done ? t.outcome : nan);
        fprintf(json, ",\"construct_s\":");
        sim_json_num(json, t.done ? t.construct : nan);
        fprintf(json, ",\"total_s\":");
        sim_json_num(json, t.done ? t.total : nan);
        fprintf(json, ",\"formula_s\":");
        sim_json_num(json, t.done ? t.formula : nan);
        fprintf(json, ",\"ratio\":");
        sim_json_num(json, t.done && t.formula > 0 ? t.total / t.formula : nan);
        fprintf(json, ",\"formula_invite_s\":");
        sim_json_num(json, t.f_invite);
        fprintf(json, ",\"formula_outcome_s\":");
        sim_json_num(json, t.f_outcome);
        fprintf(json, ",\"formula_construct_s\":");
        sim_json_num(json, t.done ? t.f_construct : nan);
        fprintf(json, "}");
    }
    fprintf(json, "]");
}

void sim_invite_fini(sim_run *run)
{
    free(run->invstats);
    run->invstats = NULL;
    run->ninvstats = run->capinvstats = 0;
}
