/*
 * spawn.c - PMIx_Spawn in the server engine: the request is read, handed
 * to the host (px_server_host.spawn, version 6) and the host's answer,
 * the new namespace or an error, goes back as SPAWN_DONE. The engine keeps
 * only whom to answer; if the client is gone by then, the answer is
 * dropped. Starting processes is the host's business: the engine does no
 * I/O.
 *
 * PMIX_FWD_STDOUT, PMIX_FWD_STDERR and PMIX_FWD_STDDIAG (job directives)
 * subscribe the spawner to the new job's output, as its PMIx_IOF_pull of
 * the namespace would, from the moment the host answers: a host delivers
 * what the ranks write before it answered to nobody (pmixrun answers as
 * soon as the ranks are started, before it reads any of their output).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

typedef struct px_spreq {
    px_server *srv;
    pmix_proc_t proc; /* the requester, looked up again when the host answers */
    uint32_t tag;
    uint16_t fwd; /* PMIX_FWD_*_CHANNEL the requester asked for */
} px_spreq;

static void send_done(px_server *s, px_sclient *c, uint32_t tag, pmix_status_t status,
                      const char *nspace)
{
    px_buf b;

    px_buf_init_frame(&b, PX_MSG_SPAWN_DONE, tag);
    px_pack_i32(&b, status);
    px_pack_str(&b, status == PMIX_SUCCESS && nspace != NULL ? nspace : "");
    px_srv_send(s, c, &b);
}

/* Hosts may call this from any thread: take the engine lock. */
static void spawn_done(pmix_status_t status, pmix_nspace_t nspace, void *cbdata)
{
    px_spreq *r = cbdata;
    px_server *s = r->srv;
    px_sclient *c;

    s->pops->lock(s->pctx);
    if ((c = px_srv_client(s, &r->proc)) != NULL) {
        if (status == PMIX_SUCCESS && r->fwd != 0 && nspace != NULL) {
            pmix_proc_t all;
            PMIx_Load_procid(&all, nspace, PMIX_RANK_WILDCARD);
            if (px_srv_iof_subscribe(s, c, 0, &all, 1, r->fwd) != 0)
                status = PMIX_ERR_NOMEM; /* the job runs, but not as asked */
        }
        send_done(s, c, r->tag, status, nspace);
    }
    s->pops->unlock(s->pctx);
    free(r);
}

static void apps_free(pmix_app_t *apps, size_t napps)
{
    if (apps != NULL)
        PMIx_App_free(apps, napps);
}

/* Read the apps of a SPAWN; NULL with *rc set on a malformed message. */
static pmix_app_t *read_apps(px_buf *b, size_t *napps, pmix_status_t *rc)
{
    uint32_t n;
    pmix_app_t *apps;

    *napps = 0;
    if ((*rc = px_unpack_u32(b, &n)) != PMIX_SUCCESS)
        return NULL;
    if (n == 0 || n > PX_SPAWN_MAX_APPS || (apps = PMIx_App_create(n)) == NULL) {
        *rc = n == 0 || n > PX_SPAWN_MAX_APPS ? PMIX_ERR_BAD_PARAM : PMIX_ERR_NOMEM;
        return NULL;
    }
    for (uint32_t a = 0; a < n; a++) {
        int32_t maxprocs;
        if ((*rc = px_unpack_str(b, &apps[a].cmd)) != PMIX_SUCCESS ||
            (*rc = px_unpack_argv(b, &apps[a].argv)) != PMIX_SUCCESS ||
            (*rc = px_unpack_argv(b, &apps[a].env)) != PMIX_SUCCESS ||
            (*rc = px_unpack_str(b, &apps[a].cwd)) != PMIX_SUCCESS ||
            (*rc = px_unpack_i32(b, &maxprocs)) != PMIX_SUCCESS ||
            (*rc = px_unpack_info(b, &apps[a].info, &apps[a].ninfo)) != PMIX_SUCCESS) {
            PMIx_App_free(apps, n);
            return NULL;
        }
        apps[a].maxprocs = maxprocs;
    }
    *napps = n;
    return apps;
}

/* Every app names a program (cmd or argv[0]) and at least one process. */
static bool apps_ok(const pmix_app_t *apps, size_t napps)
{
    for (size_t a = 0; a < napps; a++) {
        bool named =
            (apps[a].cmd != NULL && apps[a].cmd[0] != '\0') ||
            (apps[a].argv != NULL && apps[a].argv[0] != NULL && apps[a].argv[0][0] != '\0');
        if (apps[a].maxprocs < 0 || !named) /* 0: the host decides how many */
            return false;
    }
    return true;
}

static uint16_t fwd_channels(const pmix_info_t *info, size_t ninfo)
{
    uint16_t ch = 0;

    if (px_info_flag(info, ninfo, PMIX_FWD_STDOUT))
        ch |= PMIX_FWD_STDOUT_CHANNEL;
    if (px_info_flag(info, ninfo, PMIX_FWD_STDERR))
        ch |= PMIX_FWD_STDERR_CHANNEL;
    if (px_info_flag(info, ninfo, PMIX_FWD_STDDIAG))
        ch |= PMIX_FWD_STDDIAG_CHANNEL;
    return ch;
}

pmix_status_t px_srv_spawn(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    const px_server_host *h = s->hops->version >= 6 ? s->hops : NULL;
    pmix_info_t *info = NULL;
    size_t ninfo = 0, napps = 0;
    pmix_app_t *apps;
    pmix_status_t rc;
    px_spreq *r = NULL;

    if ((rc = px_unpack_info(b, &info, &ninfo)) != PMIX_SUCCESS)
        return rc;
    if ((apps = read_apps(b, &napps, &rc)) == NULL) {
        PMIx_Info_free(info, ninfo);
        return rc; /* a protocol error: the client checks what it sends */
    }
    if (!apps_ok(apps, napps))
        rc = PMIX_ERR_BAD_PARAM; /* the host may rely on a program and a count >= 0 */
    else if (h == NULL || h->spawn == NULL)
        rc = PMIX_ERR_NOT_SUPPORTED;
    else if ((r = malloc(sizeof(*r))) == NULL)
        rc = PMIX_ERR_NOMEM;
    else {
        r->srv = s;
        r->proc = c->proc;
        r->tag = tag;
        r->fwd = fwd_channels(info, ninfo);
        rc = h->spawn(s->hctx, &c->proc, info, ninfo, apps, napps, spawn_done, r);
        if (rc == PMIX_SUCCESS)
            r = NULL; /* spawn_done answers */
        else if (rc == PMIX_OPERATION_SUCCEEDED)
            rc = PMIX_ERR_BAD_PARAM; /* done, but under no name */
    }
    if (rc != PMIX_SUCCESS) {
        free(r);
        send_done(s, c, tag, rc, NULL);
    }
    apps_free(apps, napps);
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}

void px_server_notify_proc(px_server *s, pmix_status_t status, const pmix_proc_t *source,
                           const pmix_proc_t *target, const pmix_info_t info[], size_t ninfo)
{
    px_sclient *c = px_srv_client(s, target);

    if (c != NULL)
        px_srv_event_to(s, c, status, source, PMIX_RANGE_CUSTOM, info, ninfo);
}
