/*
 * pmixrun_jctrl.c - PMIx_Job_control's kill, signal and terminate.
 *
 * The job's job_control upcall (pmixrun_job.c) reads the directives:
 * PMIX_JOB_CTRL_KILL (SIGKILL), PMIX_JOB_CTRL_TERMINATE (SIGTERM) and
 * PMIX_JOB_CTRL_SIGNAL (the signal given), to the targets (ranks of the
 * job, a rank PMIX_RANK_WILDCARD or no target at all meaning the whole
 * namespace). jctrl_signal resolves them into a list of ranks and sends the
 * signal to each one's process group, as pmixrun forwards SIGUSR1:
 *
 *   pmixrun alone   at once, to its own ranks (jctrl_apply);
 *   pmixd           through pmixrun: the daemon sends the list up
 *                   (PD_JCTRL, job.jctrl_up), pmixrun sends it to every
 *                   daemon (PD_JCTRL) and each signals those of its ranks
 *                   that are on its node (jctrl_apply).
 *
 * What a signal does to the job follows the usual rules: a rank killed by
 * a signal has died (its fences fail and pmixrun ends the job, naming it);
 * a signal it handles or ignores changes nothing. The request is answered
 * once the signal has been sent (or handed to pmixrun), not when the ranks
 * have ended.
 *
 * A PD_JCTRL payload: u32 signal, u32 n, n x u32 rank.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "pmixrun.h"
#include "tcplink.h"

void jctrl_apply(job *j, int sig, const uint32_t *ranks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, j->nspace, ranks[i]);
        rank_proc *r = job_rank_of(j, &p);
        if (r == NULL || r->pid <= 0 || r->reaped)
            continue;
        if (kill(-r->pid, sig) != 0)
            kill(r->pid, sig);
    }
}

int jctrl_pack(tl_buf *b, int sig, const uint32_t *ranks, size_t n)
{
    tl_put_u32(b, (uint32_t)sig);
    tl_put_u32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        tl_put_u32(b, ranks[i]);
    return 0;
}

int jctrl_read(const uint8_t *p, size_t len, int *sig, uint32_t **ranks, size_t *n)
{
    tl_reader r = {.p = p, .left = len};
    *sig = (int)tl_get_u32(&r);
    uint32_t cnt = tl_get_u32(&r);
    *ranks = NULL;
    *n = 0;
    if (r.bad || *sig <= 0 || *sig >= NSIG || cnt > len / 4)
        return -1;
    if ((*ranks = malloc((cnt > 0 ? cnt : 1) * sizeof **ranks)) == NULL)
        return -1;
    for (uint32_t i = 0; i < cnt; i++)
        (*ranks)[i] = tl_get_u32(&r);
    if (r.bad) {
        free(*ranks);
        *ranks = NULL;
        return -1;
    }
    *n = cnt;
    return 0;
}

pmix_status_t jctrl_signal(job *j, int sig, const pmix_proc_t targets[], size_t ntargets)
{
    bool *in = calloc((size_t)j->nprocs, sizeof *in);
    uint32_t *ranks = malloc((size_t)j->nprocs * sizeof *ranks);
    pmix_status_t rc = PMIX_SUCCESS;
    size_t n = 0;

    if (in == NULL || ranks == NULL) {
        free(in);
        free(ranks);
        return PMIX_ERR_NOMEM;
    }
    for (size_t i = 0; i < ntargets && rc == PMIX_SUCCESS; i++) {
        if (strncmp(targets[i].nspace, j->nspace, PMIX_MAX_NSLEN) != 0)
            rc = PMIX_ERR_NOT_FOUND; /* this launcher runs one namespace */
        else if (targets[i].rank == PMIX_RANK_WILDCARD)
            memset(in, 1, (size_t)j->nprocs * sizeof *in);
        else if (targets[i].rank < (pmix_rank_t)j->nprocs)
            in[targets[i].rank] = true;
        else
            rc = PMIX_ERR_BAD_PARAM;
    }
    if (ntargets == 0) /* the Standard: the requestor's namespace */
        memset(in, 1, (size_t)j->nprocs * sizeof *in);
    for (int r = 0; r < j->nprocs && rc == PMIX_SUCCESS; r++)
        if (in[r])
            ranks[n++] = (uint32_t)r;
    if (rc == PMIX_SUCCESS) {
        if (j->jctrl_up != NULL)
            rc = j->jctrl_up(j->jctrl_ctx, sig, ranks, n);
        else
            jctrl_apply(j, sig, ranks, n);
    }
    free(in);
    free(ranks);
    return rc;
}
