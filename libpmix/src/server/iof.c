/*
 * iof.c - forwarding of the processes' output to the clients and tools that
 * pulled it (PMIx_IOF_pull).
 *
 * The server keeps each pull as a subscription: who asked (a connected
 * client or tool), its id (the asker's handler id, which IOF_DEREG names),
 * the processes (a rank or PMIX_RANK_WILDCARD of a namespace) and the
 * channels. The host is asked once per pull (the iof_pull upcall,
 * version 7), so that it may refuse, and delivers output with
 * px_server_iof_deliver; the server sends each chunk once to every asker
 * with a subscription that matches it. A subscription goes with its asker.
 * A spawn with PMIX_FWD_STDOUT / PMIX_FWD_STDERR makes one too, of id 0,
 * for the spawner on the new namespace (px_srv_iof_subscribe).
 *
 * Input goes the other way (PMIx_IOF_push): each IOF_PUSH is handed to the
 * host (push_stdin, version 8), which writes it to the targets' stdin,
 * and the pusher is answered when the host says the bytes are delivered.
 */
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

struct px_siof {
    struct px_siof *next;
    px_sclient *c;
    uint32_t id;
    pmix_proc_t *procs;
    size_t nprocs;
    uint16_t channels;
};

typedef struct iof_req {
    px_server *srv;
    pmix_proc_t proc; /* the asker, looked up again when the host answers */
    uint32_t tag, id;
} iof_req;

static void sub_free(px_siof *f)
{
    free(f->procs);
    free(f);
}

static void sub_remove(px_server *s, px_sclient *c, uint32_t id)
{
    for (px_siof **pp = &s->iofs; *pp != NULL;) {
        px_siof *f = *pp;
        if (f->c == c && f->id == id) {
            *pp = f->next;
            sub_free(f);
        } else {
            pp = &f->next;
        }
    }
}

static void pull_done_locked(pmix_status_t status, iof_req *r)
{
    px_sclient *c = px_srv_client(r->srv, &r->proc);

    if (c != NULL) {
        if (status != PMIX_SUCCESS)
            sub_remove(r->srv, c, r->id); /* the host refused: no output */
        px_srv_reply_status(r->srv, c, PX_MSG_REPLY, r->tag, status);
    }
    free(r);
}

/* Hosts may call this from any thread: take the engine lock. */
static void pull_done(pmix_status_t status, void *cbdata)
{
    iof_req *r = cbdata;
    px_server *s = r->srv;

    s->pops->lock(s->pctx);
    pull_done_locked(status, r);
    s->pops->unlock(s->pctx);
}

/* The host delivered a push (or failed to): answer the pusher if it is
 * still there. Hosts may call this from any thread: take the engine lock. */
static void push_done(pmix_status_t status, void *cbdata)
{
    iof_req *r = cbdata;
    px_server *s = r->srv;
    px_sclient *c;

    s->pops->lock(s->pctx);
    if ((c = px_srv_client(s, &r->proc)) != NULL)
        px_srv_reply_status(s, c, PX_MSG_REPLY, r->tag, status);
    s->pops->unlock(s->pctx);
    free(r);
}

pmix_status_t px_srv_iof_pull(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    uint32_t id;
    uint16_t channels;
    pmix_proc_t *procs = NULL;
    size_t nprocs = 0;
    pmix_info_t *dirs = NULL;
    size_t ndirs = 0;
    px_siof *f;
    iof_req *r;
    pmix_status_t rc;

    if ((rc = px_unpack_u32(b, &id)) != PMIX_SUCCESS ||
        (rc = px_unpack_procs(b, &procs, &nprocs)) != PMIX_SUCCESS)
        return rc;
    if ((rc = px_unpack_u16(b, &channels)) != PMIX_SUCCESS ||
        (rc = px_unpack_info(b, &dirs, &ndirs)) != PMIX_SUCCESS) {
        free(procs);
        return rc;
    }
    if (nprocs == 0 || channels == 0) {
        rc = PMIX_ERR_BAD_PARAM;
    } else if (s->hops->version < 7 || s->hops->iof_pull == NULL) {
        rc = PMIX_ERR_NOT_SUPPORTED; /* this host does not forward output */
    } else if ((f = calloc(1, sizeof(*f))) == NULL || (r = malloc(sizeof(*r))) == NULL) {
        free(f);
        rc = PMIX_ERR_NOMEM;
    } else {
        sub_remove(s, c, id); /* an id pulled again replaces its subscription */
        f->c = c;
        f->id = id;
        f->procs = procs;
        f->nprocs = nprocs;
        f->channels = channels;
        procs = NULL;
        f->next = s->iofs;
        s->iofs = f;
        r->srv = s;
        r->proc = c->proc;
        r->tag = tag;
        r->id = id;
        rc = s->hops->iof_pull(s->hctx, &c->proc, f->procs, f->nprocs, dirs, ndirs,
                               (pmix_iof_channel_t)channels, pull_done, r);
        if (rc == PMIX_SUCCESS) {
            /* pull_done answers */
        } else {
            pull_done_locked(rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc, r);
        }
        free(procs);
        PMIx_Info_free(dirs, ndirs);
        return PMIX_SUCCESS;
    }
    free(procs);
    PMIx_Info_free(dirs, ndirs);
    px_srv_reply_status(s, c, PX_MSG_REPLY, tag, rc);
    return PMIX_SUCCESS;
}

int px_srv_iof_subscribe(px_server *s, px_sclient *c, uint32_t id, const pmix_proc_t *procs,
                         size_t nprocs, uint16_t channels)
{
    px_siof *f = calloc(1, sizeof(*f));

    if (f == NULL || (f->procs = malloc(nprocs * sizeof(*procs))) == NULL) {
        free(f);
        return -1;
    }
    if (id != 0)
        sub_remove(s, c, id); /* id 0: every spawn with forwarding adds one */
    memcpy(f->procs, procs, nprocs * sizeof(*procs));
    f->c = c;
    f->id = id;
    f->nprocs = nprocs;
    f->channels = channels;
    f->next = s->iofs;
    s->iofs = f;
    return 0;
}

pmix_status_t px_srv_iof_push(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    pmix_proc_t *procs = NULL;
    size_t nprocs = 0, ndirs = 0, len = 0;
    pmix_info_t *dirs = NULL;
    const void *data = NULL;
    uint8_t eof;
    iof_req *r;
    pmix_status_t rc;

    if ((rc = px_unpack_procs(b, &procs, &nprocs)) != PMIX_SUCCESS)
        return rc;
    if ((rc = px_unpack_info(b, &dirs, &ndirs)) != PMIX_SUCCESS ||
        (rc = px_unpack_u8(b, &eof)) != PMIX_SUCCESS ||
        (rc = px_unpack_bytes_view(b, &data, &len)) != PMIX_SUCCESS) {
        free(procs);
        PMIx_Info_free(dirs, ndirs);
        return rc;
    }
    if (nprocs == 0 || (eof && len > 0)) {
        rc = PMIX_ERR_BAD_PARAM;
    } else if (s->hops->version < 8 || s->hops->push_stdin == NULL) {
        rc = PMIX_ERR_NOT_SUPPORTED; /* this host forwards no input */
    } else if ((r = malloc(sizeof(*r))) == NULL) {
        rc = PMIX_ERR_NOMEM;
    } else {
        r->srv = s;
        r->proc = c->proc;
        r->tag = tag;
        r->id = 0;
        rc = s->hops->push_stdin(s->hctx, &c->proc, procs, nprocs, dirs, ndirs, data, len, eof != 0,
                                 push_done, r);
        if (rc == PMIX_SUCCESS) {
            free(procs);
            PMIx_Info_free(dirs, ndirs);
            return PMIX_SUCCESS; /* push_done answers */
        }
        free(r);
        if (rc == PMIX_OPERATION_SUCCEEDED)
            rc = PMIX_SUCCESS;
    }
    free(procs);
    PMIx_Info_free(dirs, ndirs);
    px_srv_reply_status(s, c, PX_MSG_REPLY, tag, rc);
    return PMIX_SUCCESS;
}

pmix_status_t px_srv_iof_dereg(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    uint32_t id;
    pmix_status_t rc;

    if ((rc = px_unpack_u32(b, &id)) != PMIX_SUCCESS)
        return rc;
    sub_remove(s, c, id);
    px_srv_reply_status(s, c, PX_MSG_REPLY, tag, PMIX_SUCCESS);
    return PMIX_SUCCESS;
}

void px_srv_iof_client_gone(px_server *s, px_sclient *c)
{
    for (px_siof **pp = &s->iofs; *pp != NULL;) {
        px_siof *f = *pp;
        if (f->c == c) {
            *pp = f->next;
            sub_free(f);
        } else {
            pp = &f->next;
        }
    }
}

static bool sub_matches(const px_siof *f, const pmix_proc_t *source, uint16_t channel)
{
    if ((f->channels & channel) == 0)
        return false;
    for (size_t i = 0; i < f->nprocs; i++)
        if (PMIx_Check_nspace(f->procs[i].nspace, source->nspace) &&
            (f->procs[i].rank == PMIX_RANK_WILDCARD || f->procs[i].rank == source->rank))
            return true;
    return false;
}

size_t px_server_iof_deliver(px_server *s, const pmix_proc_t *source, pmix_iof_channel_t channel,
                             const void *data, size_t len)
{
    size_t sent = 0;

    if (s == NULL || source == NULL || (data == NULL && len > 0))
        return 0;
    for (px_sclient *c = s->clients; c != NULL; c = c->next) {
        bool want = false;
        if (c->state != PX_SC_CONNECTED || !c->has_conn)
            continue;
        for (px_siof *f = s->iofs; f != NULL && !want; f = f->next)
            want = f->c == c && sub_matches(f, source, (uint16_t)channel);
        if (!want)
            continue;
        px_buf b;
        px_buf_init_frame(&b, PX_MSG_IOF_DATA, 0);
        px_pack_proc(&b, source);
        px_pack_u16(&b, (uint16_t)channel);
        px_pack_bytes(&b, data, len);
        px_srv_send(s, c, &b);
        sent++;
    }
    return sent;
}
