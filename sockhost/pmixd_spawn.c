/*
 * pmixd_spawn.c - PMIx_Spawn over the daemons (pmixd.h; docs/pmixd.md,
 * "Spawn").
 *
 * The requestor's daemon packs the request (the requestor, the job
 * directives and the apps, with PMIx_Data_pack) into a PD_SPAWN to
 * pmixrun and keeps the server's callback until the PD_SPAWN_REP answer
 * comes. pmixrun plans the job (pmixrun_spawn.c, spawn_plan) and sends it
 * to every daemon (PD_SPAWN_JOB); here it becomes a child of the node's
 * job (d->j.children) that borrows its loop, server, directory and
 * output: its namespace is registered with the server on every daemon
 * (a parent on any node may read its job data), its map goes to the host
 * core (px_hc_job_add: its fences, direct modex and the parent-child
 * connects run across nodes like the first job's), and this node's ranks
 * of it are started. Their ends are reported to pmixrun (PD_SPAWN_STATE),
 * which judges them as it judges the first job's ranks.
 *
 * Everything runs on the daemon's thread, inside a turn of the loop (the
 * engine lock held, recursive): the server's spawn upcall and the frames
 * from pmixrun.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pmix.h>

#include "pmixd.h"
#include "pmixd_proto.h"

/* A request sent to pmixrun, waiting for its answer. */
typedef struct spawn_wait {
    struct spawn_wait *next;
    uint32_t id;
    pmix_spawn_cbfunc_t cbfunc;
    void *cbdata;
} spawn_wait;

static pmixd_ctx *ctx_of(job *j)
{
    return (pmixd_ctx *)j; /* the node's job is the daemon's first member */
}

pmix_status_t spawnd_up(void *hctx, const pmix_proc_t *proc, const pmix_info_t job_info[],
                        size_t ninfo, const pmix_app_t apps[], size_t napps,
                        pmix_spawn_cbfunc_t cbfunc, void *cbdata)
{
    pmixd_ctx *d = ctx_of(hctx);
    pmix_data_buffer_t db;
    pmix_byte_object_t bo = {0};
    uint32_t ni = (uint32_t)ninfo, na = (uint32_t)napps;
    pmix_status_t rc;
    spawn_wait *w;

    if (d->stopping)
        return PMIX_ERR_JOB_TERMINATED;
    if ((w = calloc(1, sizeof *w)) == NULL)
        return PMIX_ERR_NOMEM;
    PMIx_Data_buffer_construct(&db);
    rc = PMIx_Data_pack(NULL, &db, (void *)proc, 1, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &db, &ni, 1, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && ni > 0)
        rc = PMIx_Data_pack(NULL, &db, (void *)job_info, (int32_t)ni, PMIX_INFO);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &db, &na, 1, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && na > 0)
        rc = PMIx_Data_pack(NULL, &db, (void *)apps, (int32_t)na, PMIX_APP);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_unload(&db, &bo);
    PMIx_Data_buffer_destruct(&db);
    if (rc != PMIX_SUCCESS) {
        PMIx_Byte_object_destruct(&bo);
        free(w);
        return rc;
    }
    w->id = ++d->spawn_next;
    w->cbfunc = cbfunc;
    w->cbdata = cbdata;
    tl_buf b = {0};
    tl_put_u32(&b, w->id);
    tl_put_bytes(&b, bo.bytes, bo.size);
    int trc = tl_send(&d->parent, PD_SPAWN, &b);
    tl_buf_free(&b);
    PMIx_Byte_object_destruct(&bo);
    if (trc != 0) {
        free(w);
        return trc == TL_ENOMEM ? PMIX_ERR_NOMEM : PMIX_ERR_UNREACH;
    }
    w->next = d->spawn_waits;
    d->spawn_waits = w;
    return PMIX_SUCCESS;
}

/* ---- the spawned jobs of this node ---- */

static job *child_named(pmixd_ctx *d, const char *nspace)
{
    for (job *c = d->j.children; c != NULL; c = c->next_child)
        if (strncmp(c->nspace, nspace, PMIX_MAX_NSLEN) == 0)
            return c;
    return NULL;
}

/* Whether the spawner of `c` (PMIX_PARENT_ID in its job data) is a rank
 * of this node that still waits for its answer: then the server must not
 * see the job's output before that answer makes its PMIX_FWD_STDOUT
 * subscription (spawnd_reply releases c->hold). */
static bool spawner_waits_here(pmixd_ctx *d, const job *c)
{
    const pmix_proc_t *parent = NULL;
    for (size_t i = 0; i < c->nextra; i++)
        if (PMIx_Check_key(c->extra_info[i].key, PMIX_PARENT_ID) &&
            c->extra_info[i].value.type == PMIX_PROC)
            parent = c->extra_info[i].value.data.proc;
    if (parent == NULL || d->spawn_waits == NULL)
        return false;
    const job *pj =
        PMIx_Check_nspace(parent->nspace, d->j.nspace) ? &d->j : child_named(d, parent->nspace);
    return pj != NULL && pj->rank_node != NULL && parent->rank < (pmix_rank_t)pj->nprocs &&
           (int)pj->rank_node[parent->rank] == d->node;
}

static void child_free(pmixd_ctx *d, job *c)
{
    iof_hold_drop(&c->hold);
    for (int i = 0; c->ranks != NULL && i < c->nlocal; i++) {
        iof_stream_close(&c->ranks[i].out, c->ranks[i].rank, c->tag_output);
        iof_stream_close(&c->ranks[i].err, c->ranks[i].rank, c->tag_output);
        hwloc_bitmap_free(c->ranks[i].cpuset);
    }
    if (c->xmap != NULL && d->hc != NULL)
        px_hc_job_remove(d->hc, c->nspace);
    free(c->ranks);
    free(c->nsdir);
    free(c->rank_node);
    free(c->xmap);
    PMIx_Info_free(c->extra_info, c->nextra);
    c->sigfd = c->devnull = -1; /* the node's job's */
    c->topo = NULL;
    job_release(c);
    free(c);
}

static void send_state(pmixd_ctx *d, const job *c, uint8_t what, const tl_buf *more)
{
    tl_buf b = {0};
    tl_put_u32(&b, (uint32_t)c->spawn_no);
    tl_put_u8(&b, what);
    if (more != NULL)
        tl_put_raw(&b, more->data, more->len);
    tl_send(&d->parent, PD_SPAWN_STATE, &b);
    tl_buf_free(&b);
}

static void send_exit(pmixd_ctx *d, const job *c, const rank_proc *r, uint8_t flags)
{
    tl_buf b = {0};
    tl_put_u32(&b, (uint32_t)r->rank);
    tl_put_u32(&b, (uint32_t)r->pid);
    tl_put_u32(&b, (uint32_t)r->code);
    tl_put_u8(&b, flags);
    send_state(d, c, 2, &b);
    tl_buf_free(&b);
}

static void send_started(pmixd_ctx *d, const job *c, pmix_status_t status)
{
    tl_buf b = {0};
    tl_put_u32(&b, (uint32_t)status);
    send_state(d, c, 1, &b);
    tl_buf_free(&b);
}

/* Read the extra keys (u32 n, n PMIX_INFO, packed) into c. */
static int read_extra(job *c, const void *p, size_t n)
{
    pmix_data_buffer_t db;
    pmix_byte_object_t bo = {0};
    uint32_t ni = 0;
    int32_t cnt = 1;
    pmix_status_t rc;

    if ((bo.bytes = malloc(n > 0 ? n : 1)) == NULL)
        return -1;
    memcpy(bo.bytes, p, n);
    bo.size = n;
    PMIx_Data_buffer_construct(&db);
    PMIx_Data_load(&db, &bo);
    rc = PMIx_Data_unpack(NULL, &db, &ni, &cnt, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && (ni == 0 || ni > 16))
        rc = PMIX_ERR_UNPACK_FAILURE;
    if (rc == PMIX_SUCCESS && (c->extra_info = PMIx_Info_create(ni)) == NULL)
        rc = PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS) {
        c->nextra = ni;
        cnt = (int32_t)ni;
        rc = PMIx_Data_unpack(NULL, &db, c->extra_info, &cnt, PMIX_INFO);
    }
    PMIx_Data_buffer_destruct(&db);
    return rc == PMIX_SUCCESS ? 0 : -1;
}

void spawnd_job(pmixd_ctx *d, const uint8_t *p, size_t len)
{
    job *j = &d->j, *c;
    tl_reader r = {.p = p, .left = len};
    uint32_t no = tl_get_u32(&r);
    char *ns = tl_get_str(&r);
    uint32_t nprocs = tl_get_u32(&r);
    pmix_status_t status = PMIX_ERR_NOMEM;

    if (r.bad || ns == NULL || nprocs == 0 || nprocs > 65535 ||
        (c = calloc(1, sizeof *c)) == NULL) {
        fprintf(stderr, "pmixd %s: a malformed spawned job from pmixrun, dropped\n", j->hostname);
        free(ns);
        return;
    }
    job_borrow(c, j); /* what it borrows from the node's job */
    c->node = j->node;
    c->nnodes = j->nnodes;
    c->node_names = j->node_names;
    c->cross = j->cross;
    c->cross_ctx = j->cross_ctx;
    memcpy(c->hostname, j->hostname, sizeof c->hostname);
    c->spawn_no = (int)no;
    snprintf(c->nspace, sizeof c->nspace, "%s", ns);
    free(ns);
    c->nprocs = (int)nprocs;
    if ((c->rank_node = calloc(nprocs, sizeof *c->rank_node)) == NULL)
        goto fail;
    for (uint32_t i = 0; i < nprocs; i++) {
        c->rank_node[i] = tl_get_u32(&r);
        if (c->rank_node[i] >= (uint32_t)j->nnodes)
            r.bad = true;
        else if ((int)c->rank_node[i] == d->node)
            c->nlocal++;
    }
    c->stop_in_init = tl_get_u8(&r) != 0;
    size_t elen = 0;
    const void *extra = tl_get_bytes(&r, &elen);
    if (r.bad || extra == NULL || read_extra(c, extra, elen) != 0 || apps_read(c, &r) != 0) {
        fprintf(stderr, "pmixd %s: a malformed spawned job from pmixrun\n", j->hostname);
        status = PMIX_ERR_BAD_PARAM;
        goto fail;
    }
    if ((c->ranks = calloc((size_t)(c->nlocal > 0 ? c->nlocal : 1), sizeof *c->ranks)) == NULL)
        goto fail;
    for (int i = 0, k = 0; i < c->nprocs; i++) {
        if ((int)c->rank_node[i] != d->node)
            continue;
        rank_proc *rp = &c->ranks[k++];
        rp->rank = i;
        rp->out.fd = rp->err.fd = -1;
        rp->files[0].fd = rp->files[1].fd = rp->in_fd = -1;
        rp->out.job = rp->err.job = c->spawn_no; /* --tag-output */
    }
    if ((c->xmap = calloc(1, sizeof *c->xmap)) == NULL)
        goto fail;
    *c->xmap = (px_jobmap){.nspace = c->nspace,
                           .nprocs = (uint32_t)c->nprocs,
                           .nnodes = (uint32_t)c->nnodes,
                           .rank_node = c->rank_node};
    status = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
    if (asprintf(&c->nsdir, "%s/%s", c->topdir, c->nspace) < 0) {
        c->nsdir = NULL;
        goto fail;
    }
    if (files_make_dir(c->nsdir) != 0) {
        fprintf(stderr, "pmixd %s: spawn: cannot create %s: %s\n", j->hostname, c->nsdir,
                strerror(errno));
        goto fail;
    }
    if (job_bindings(c) != 0 || job_register(c) != 0)
        goto fail;
    if (d->hc == NULL || px_hc_job_add(d->hc, c->xmap) != PMIX_SUCCESS) {
        free(c->xmap);
        c->xmap = NULL;
        goto fail;
    }
    /* from here on its ranks are the node's to reap */
    c->next_child = j->children;
    j->children = c;
    c->hold.on = spawner_waits_here(d, c);
    status = PMIX_SUCCESS;
    for (int i = 0; i < c->nlocal; i++) {
        rank_proc *rp = &c->ranks[i];
        int lrc = d->stopping ? PMIXRUN_EXIT_SETUP : launch_rank(c, rp);
        if (lrc == 0)
            continue;
        fprintf(stderr, "pmixd %s: spawn of %s: rank %d could not be started\n", j->hostname,
                c->nspace, rp->rank);
        status = PMIX_ERR_JOB_FAILED_TO_LAUNCH;
        c->spawn_failed = true;
        if (rp->pid == 0) { /* not started: its end is now */
            rp->code = lrc;
            rp->reaped = true;
        }
        break;
    }
    /* the ranks not started end here; those that started go if it failed */
    for (int i = 0; i < c->nlocal; i++) {
        rank_proc *rp = &c->ranks[i];
        if (rp->pid == 0) {
            rp->reaped = true;
            if (rp->code == 0)
                rp->code = PMIXRUN_EXIT_SETUP;
            send_exit(d, c, rp, PD_EXIT_NOLAUNCH);
        } else if (c->spawn_failed && !rp->reaped) {
            rp->stopped_by_us = true;
            if (kill(-rp->pid, SIGKILL) != 0)
                kill(rp->pid, SIGKILL);
        }
    }
    send_started(d, c, status);
    return;

fail:
    if (c->nspace_registered) { /* the server must not keep it */
        for (int i = 0; i < c->nlocal; i++) {
            pmix_proc_t pr;
            PMIx_Load_procid(&pr, c->nspace, (pmix_rank_t)c->ranks[i].rank);
            px_server_deregister_client(j->srv, &pr);
        }
        px_server_deregister_nspace(j->srv, c->nspace);
    }
    send_started(d, c, status);
    for (int i = 0; c->ranks != NULL && i < c->nlocal; i++) { /* no rank of it starts here */
        c->ranks[i].code = PMIXRUN_EXIT_SETUP;
        send_exit(d, c, &c->ranks[i], PD_EXIT_NOLAUNCH);
    }
    child_free(d, c);
}

void spawnd_reply(pmixd_ctx *d, const uint8_t *p, size_t len)
{
    tl_reader r = {.p = p, .left = len};
    uint8_t what = tl_get_u8(&r);

    if (what == 1) { /* the answer to a request of ours */
        uint32_t id = tl_get_u32(&r), status = tl_get_u32(&r);
        char *ns = tl_get_str(&r);
        for (spawn_wait **pw = &d->spawn_waits; !r.bad && ns != NULL && *pw != NULL;
             pw = &(*pw)->next) {
            spawn_wait *w = *pw;
            if (w->id != id)
                continue;
            *pw = w->next;
            w->cbfunc((pmix_status_t)status, status == PMIX_SUCCESS ? ns : NULL, w->cbdata);
            free(w);
            job *c = status == PMIX_SUCCESS ? child_named(d, ns) : NULL;
            if (c != NULL) /* its output kept until now: the spawner subscribed */
                iof_hold_release(&c->hold, d->j.srv, d->j.plat);
            break;
        }
        free(ns);
    } else if (what == 2) { /* a spawned job ended: its spawner asked to hear */
        char *ns = tl_get_str(&r), *sns = tl_get_str(&r);
        uint32_t srank = tl_get_u32(&r), worst = tl_get_u32(&r);
        if (!r.bad && ns != NULL && sns != NULL && d->j.server_up) {
            pmix_proc_t spawner;
            PMIx_Load_procid(&spawner, sns, srank);
            spawn_notify_end(&d->j, ns, &spawner, (int)worst);
        }
        free(ns);
        free(sns);
    } else if (what == 3) { /* a spawn that failed elsewhere: its ranks here go */
        char *ns = tl_get_str(&r);
        /* a signal after the name: a system server's job that lost a rank
         * elsewhere, stopped alone (SIGTERM); else SIGKILL, a failed spawn */
        int sig = r.left >= 4 ? (int)tl_get_u32(&r) : SIGKILL;
        job *c = ns != NULL ? child_named(d, ns) : NULL;
        if (c != NULL && !r.bad && sig > 0 && sig < NSIG) {
            if (sig == SIGKILL)
                c->spawn_failed = true;
            for (int i = 0; i < c->nstarted; i++) {
                rank_proc *rp = &c->ranks[i];
                if (rp->pid > 0 && !rp->reaped) {
                    rp->stopped_by_us = true;
                    if (kill(-rp->pid, sig) != 0)
                        kill(rp->pid, sig);
                }
            }
        }
        free(ns);
    }
}

bool spawnd_reaped(pmixd_ctx *d, pid_t pid, int wstatus)
{
    for (job *c = d->j.children; c != NULL; c = c->next_child) {
        for (int i = 0; i < c->nstarted; i++) {
            rank_proc *r = &c->ranks[i];
            if (r->pid != pid || r->reaped)
                continue;
            bool connected, finalized;
            job_rank_reaped(c, r, wstatus, &connected, &finalized);
            uint8_t flags =
                (r->signaled ? PD_EXIT_SIGNALED : 0) | (connected ? PD_EXIT_CONNECTED : 0) |
                (finalized ? PD_EXIT_FINALIZED : 0) | (r->stopped_by_us ? PD_EXIT_STOPPED : 0);
            send_exit(d, c, r, flags);
            bool died = r->signaled || (connected && !finalized) || (!connected && r->code != 0);
            if (died && !d->stopping && !c->spawn_failed && d->j.sys_jobs && d->hc != NULL) {
                /* under a system server the job ends alone (pmixrun stops
                 * it): fences that name the rank fail, the other jobs' go on */
                pmix_proc_t pr;
                PMIx_Load_procid(&pr, c->nspace, (pmix_rank_t)r->rank);
                px_hc_departed_proc(d->hc, &pr, true);
            } else if (died && !d->stopping && !c->spawn_failed) {
                coll_break(d, -1, true); /* the run ends: every fence fails now */
            } else if (connected && finalized && !d->stopping && d->hc != NULL) {
                pmix_proc_t pr; /* fences that name it fail on every node */
                PMIx_Load_procid(&pr, c->nspace, (pmix_rank_t)r->rank);
                px_hc_departed_proc(d->hc, &pr, true);
            }
            return true;
        }
    }
    return false;
}

void spawnd_signal(pmixd_ctx *d, int sig)
{
    for (job *c = d->j.children; c != NULL; c = c->next_child)
        job_signal_ranks(c, sig);
}

int spawnd_live(const pmixd_ctx *d)
{
    int n = 0;
    for (const job *c = d->j.children; c != NULL; c = c->next_child)
        n += c->nstarted - c->nreaped;
    return n;
}

bool spawnd_output_open(const pmixd_ctx *d)
{
    for (const job *c = d->j.children; c != NULL; c = c->next_child)
        for (int i = 0; i < c->nstarted; i++)
            if (c->ranks[i].out.fd >= 0 || c->ranks[i].err.fd >= 0)
                return true;
    return false;
}

void spawnd_fini(pmixd_ctx *d)
{
    while (d->spawn_waits != NULL) { /* the server answered its clients when it stopped */
        spawn_wait *w = d->spawn_waits;
        d->spawn_waits = w->next;
        free(w);
    }
    while (d->j.children != NULL) {
        job *c = d->j.children;
        d->j.children = c->next_child;
        child_free(d, c);
    }
}
