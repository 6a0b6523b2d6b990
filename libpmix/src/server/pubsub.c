/*
 * pubsub.c - publish, lookup and unpublish: the server hands each to its
 * host (px_server_host, version 3), which keeps the data (pmixlab's own
 * hosts: hostcore/px_pubsub.h), and sends the host's answer back.
 *
 * The engine adds the client's PMIX_USERID and PMIX_GRPID to the
 * directives, as the Standard requires, and keeps nothing but a small
 * record of whom to answer (as misc.c does): a lookup that waits for data
 * costs the engine one such record until the host answers it. If the
 * client is gone by then, the answer is dropped.
 */
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

typedef struct px_preq {
    px_server *srv;
    pmix_proc_t proc; /* the requester, looked up again when the host answers */
    uint32_t tag;
} px_preq;

static px_preq *preq_new(px_server *s, px_sclient *c, uint32_t tag)
{
    px_preq *r = malloc(sizeof(*r));

    if (r != NULL) {
        r->srv = s;
        r->proc = c->proc;
        r->tag = tag;
    }
    return r;
}

/* The host's upcalls of version 3, or NULL for an older table. */
static const px_server_host *v2(px_server *s)
{
    return s->hops->version >= 3 ? s->hops : NULL;
}

/* The client's directives with its uid and gid appended: a new array
 * (PMIx_Info_free), or NULL. `info` is emptied into it. A PMIX_USERID or
 * PMIX_GRPID the client sent itself is dropped: the host must find only
 * what the platform vouched for at the handshake. */
static pmix_info_t *with_ids(px_sclient *c, pmix_info_t *info, size_t ninfo, size_t *nout)
{
    pmix_info_t *all = PMIx_Info_create(ninfo + 2);
    size_t n = 0;

    if (all == NULL)
        return NULL;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIx_Check_key(info[i].key, PMIX_USERID) || PMIx_Check_key(info[i].key, PMIX_GRPID))
            continue;       /* freed with `info` */
        all[n++] = info[i]; /* moved: `info` keeps nothing */
        PMIx_Info_construct(&info[i]);
    }
    PMIx_Info_load(&all[n++], PMIX_USERID, &c->uid, PMIX_UINT32);
    PMIx_Info_load(&all[n++], PMIX_GRPID, &c->gid, PMIX_UINT32);
    *nout = n;
    return all;
}

static void op_done_locked(pmix_status_t status, void *cbdata)
{
    px_preq *r = cbdata;
    px_sclient *c = px_srv_client(r->srv, &r->proc);

    if (c != NULL)
        px_srv_reply_status(r->srv, c, PX_MSG_REPLY, r->tag, status);
    free(r);
}

/* Hosts may call this from any thread: take the engine lock. */
static void op_done(pmix_status_t status, void *cbdata)
{
    px_server *s = ((px_preq *)cbdata)->srv;

    s->pops->lock(s->pctx);
    op_done_locked(status, cbdata);
    s->pops->unlock(s->pctx);
}

static void send_lookup_done(px_server *s, px_sclient *c, uint32_t tag, pmix_status_t status,
                             const pmix_pdata_t *data, size_t ndata)
{
    px_buf b;

    px_buf_init_frame(&b, PX_MSG_LOOKUP_DONE, tag);
    px_pack_i32(&b, status);
    px_pack_u64(&b, data != NULL ? ndata : 0);
    for (size_t i = 0; data != NULL && i < ndata; i++)
        px_pack_typed(&b, &data[i], PMIX_PDATA);
    if (px_buf_status(&b) != PMIX_SUCCESS) {
        /* a value that cannot travel: say so rather than nothing */
        px_buf_fini(&b);
        px_buf_init_frame(&b, PX_MSG_LOOKUP_DONE, tag);
        px_pack_i32(&b, PMIX_ERR_PACK_FAILURE);
        px_pack_u64(&b, 0);
    }
    px_srv_send(s, c, &b);
}

static void lookup_done(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    px_preq *r = cbdata;
    px_server *s = r->srv;
    px_sclient *c;

    s->pops->lock(s->pctx);
    if ((c = px_srv_client(s, &r->proc)) != NULL)
        send_lookup_done(s, c, r->tag, status, data, ndata);
    s->pops->unlock(s->pctx);
    free(r);
}

/* Read the keys (if `with_keys`) and the directives of a request. */
static pmix_status_t read_request(px_sclient *c, px_buf *b, bool with_keys, char ***keys,
                                  pmix_info_t **info, size_t *ninfo)
{
    pmix_info_t *in = NULL;
    size_t nin = 0;
    pmix_status_t rc;

    *keys = NULL;
    if (with_keys && (rc = px_unpack_argv(b, keys)) != PMIX_SUCCESS)
        return rc;
    if ((rc = px_unpack_info(b, &in, &nin)) != PMIX_SUCCESS) {
        PMIx_Argv_free(*keys);
        *keys = NULL;
        return rc;
    }
    *info = with_ids(c, in, nin, ninfo);
    PMIx_Info_free(in, nin);
    return PMIX_SUCCESS; /* *info NULL: out of memory, answered as such */
}

/* After a publish or unpublish upcall returned `rc` with request `r`:
 * PMIX_SUCCESS means the host calls op_done (it owns r, NULL here); any
 * other status is the answer now (PMIX_OPERATION_SUCCEEDED: success). */
static void op_answer_now(px_server *s, px_sclient *c, uint32_t tag, px_preq *r, pmix_status_t rc)
{
    if (r == NULL && rc == PMIX_SUCCESS)
        return;
    free(r);
    px_srv_reply_status(s, c, PX_MSG_REPLY, tag,
                        rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc);
}

pmix_status_t px_srv_publish(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    const px_server_host *h = v2(s);
    char **keys;
    pmix_info_t *info;
    size_t ninfo = 0;
    pmix_status_t rc;
    px_preq *r = NULL;

    if ((rc = read_request(c, b, false, &keys, &info, &ninfo)) != PMIX_SUCCESS)
        return rc;
    if (h == NULL || h->publish == NULL)
        rc = PMIX_ERR_NOT_SUPPORTED;
    else if (info == NULL || (r = preq_new(s, c, tag)) == NULL)
        rc = PMIX_ERR_NOMEM;
    else if ((rc = h->publish(s->hctx, &c->proc, info, ninfo, op_done, r)) == PMIX_SUCCESS)
        r = NULL; /* op_done answers */
    op_answer_now(s, c, tag, r, rc);
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}

pmix_status_t px_srv_unpublish(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    const px_server_host *h = v2(s);
    char **keys;
    pmix_info_t *info;
    size_t ninfo = 0;
    pmix_status_t rc;
    px_preq *r = NULL;

    if ((rc = read_request(c, b, true, &keys, &info, &ninfo)) != PMIX_SUCCESS)
        return rc;
    if (keys != NULL && keys[0] == NULL)
        rc = PMIX_ERR_BAD_PARAM; /* an empty list is not "all" */
    else if (h == NULL || h->unpublish == NULL)
        rc = PMIX_ERR_NOT_SUPPORTED;
    else if (info == NULL || (r = preq_new(s, c, tag)) == NULL)
        rc = PMIX_ERR_NOMEM;
    else if ((rc = h->unpublish(s->hctx, &c->proc, keys, info, ninfo, op_done, r)) == PMIX_SUCCESS)
        r = NULL;
    op_answer_now(s, c, tag, r, rc);
    PMIx_Argv_free(keys);
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}

pmix_status_t px_srv_lookup(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    const px_server_host *h = v2(s);
    char **keys;
    pmix_info_t *info;
    size_t ninfo = 0;
    pmix_status_t rc;
    px_preq *r = NULL;

    if ((rc = read_request(c, b, true, &keys, &info, &ninfo)) != PMIX_SUCCESS)
        return rc;
    if (keys == NULL || keys[0] == NULL)
        rc = PMIX_ERR_BAD_PARAM;
    else if (h == NULL || h->lookup == NULL)
        rc = PMIX_ERR_NOT_SUPPORTED;
    else if (info == NULL || (r = preq_new(s, c, tag)) == NULL)
        rc = PMIX_ERR_NOMEM;
    else if ((rc = h->lookup(s->hctx, &c->proc, keys, info, ninfo, lookup_done, r)) == PMIX_SUCCESS)
        r = NULL; /* lookup_done answers */
    if (r != NULL || rc != PMIX_SUCCESS) {
        free(r);
        send_lookup_done(s, c, tag, rc == PMIX_OPERATION_SUCCEEDED ? PMIX_ERR_NOT_FOUND : rc, NULL,
                         0);
    }
    PMIx_Argv_free(keys);
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}
