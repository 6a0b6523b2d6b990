/*
 * get.c - PMIx_Get in the client engine: answer locally whenever the
 * answer is certain, ask the server only when it is not.
 *
 * Local answers, in order:
 *   1. job-level data (a wildcard rank, or a reserved "pmix." key): the
 *      job data from the handshake is complete, so a miss is final;
 *   2. the calling process's own puts (always local, a miss is final);
 *   3. another process's data already here (collected by a fence or
 *      fetched before), unless PMIX_GET_REFRESH_CACHE asks to fetch it again.
 * PMIX_RANK_UNDEF asks for a key of any process of the namespace: it is
 * answered from what is here only (after a collecting fence, everything).
 * Otherwise, unless PMIX_OPTIONAL forbids it, the server is asked (direct
 * modex): the process may have committed more since its data came here.
 * The answer is the process's whole record as of its last commit, kept for
 * later Gets; a key missing from it does not exist (PMIX_ERR_NOT_FOUND).
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "common/px_common.h"

/* (A call to strncmp here took 2% of a local Get.) */
static bool reserved(const char *key)
{
    return key[0] == 'p' && key[1] == 'm' && key[2] == 'i' && key[3] == 'x' && key[4] == '.';
}

static bool is_self(const px_client *c, const pmix_proc_t *p)
{
    return p->rank == c->self.rank && strncmp(p->nspace, c->self.nspace, PMIX_MAX_NSLEN) == 0;
}

/* Look `key` up in what the client holds. */
static pmix_status_t lookup(px_client *c, const pmix_proc_t *p, const char *key,
                            const pmix_info_t *qual, size_t nqual, pmix_value_t **out)
{
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;

    if (p->rank == PMIX_RANK_WILDCARD || reserved(key))
        rc = px_store_get_job(c->store, p->nspace, p->rank, key, qual, nqual, out);
    if (rc == PMIX_ERR_NOT_FOUND && p->rank != PMIX_RANK_WILDCARD)
        rc = px_store_get_proc(c->store, p, key, true, out);
    return rc;
}

pmix_status_t px_client_get(px_client *c, const pmix_proc_t *proc, const char key[],
                            const pmix_info_t info[], size_t ninfo, pmix_value_t **out,
                            pmix_value_cbfunc_t cbfunc, void *cbdata)
{
    pmix_proc_t filled;
    bool refresh, optional, job_known;
    pmix_status_t rc;
    px_req *r;
    px_buf b;

    *out = NULL;
    if (key == NULL || key[0] == '\0' || strnlen(key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
        return PMIX_ERR_BAD_PARAM;
    /* The caller's name as given, copied only to fill in what it leaves
     * out (copying its 260 bytes took a tenth of a local Get). */
    if (proc == NULL) {
        proc = &c->self; /* the caller itself (job keys are found through it) */
    } else if (proc->nspace[0] == '\0') {
        filled = *proc;
        memcpy(filled.nspace, c->self.nspace, sizeof(filled.nspace));
        proc = &filled;
    }
    if (proc->rank == PMIX_RANK_UNDEF) {
        /* "any process": a key unique in the namespace, from what is here
         * (job data first, then every process's data) */
        rc = px_store_get_job(c->store, proc->nspace, PMIX_RANK_WILDCARD, key, info, ninfo, out);
        if (rc == PMIX_ERR_NOT_FOUND)
            rc = px_store_get_any(c->store, proc->nspace, key, out);
        return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
    }
    /* a group's membership and context id, and a process's groups */
    if (c->groups != NULL && px_cli_group_key(key)) {
        rc = px_cli_group_get(c, proc, key, out);
        if (rc != PMIX_ERR_NOT_SUPPORTED)
            return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
    }
    /* what members gave in a construct's directives, for the others */
    if (c->ginfos != NULL) {
        rc = px_cli_group_info_get(c, proc, key, info, ninfo, out);
        if (rc != PMIX_ERR_NOT_SUPPORTED)
            return rc == PMIX_SUCCESS ? PMIX_OPERATION_SUCCEEDED : rc;
    }
    refresh = px_info_flag(info, ninfo, PMIX_GET_REFRESH_CACHE);
    optional = px_info_flag(info, ninfo, PMIX_OPTIONAL);
    /* A process's sets: the server's table knows those its host defined
     * after the job data (which has only the job's own), so it answers. */
    if (strcmp(key, PMIX_PSET_NAMES) == 0 && proc->rank < PMIX_RANK_VALID && px_client_connected(c))
        goto ask;

    if (!refresh || is_self(c, proc)) {
        rc = lookup(c, proc, key, info, ninfo, out);
        if (rc == PMIX_SUCCESS)
            return PMIX_OPERATION_SUCCEEDED;
        if (rc != PMIX_ERR_NOT_FOUND)
            return rc;
        job_known = px_store_has_job(c->store, proc->nspace); /* only a miss needs it */
        if (is_self(c, proc) || (job_known && (proc->rank == PMIX_RANK_WILDCARD || reserved(key))))
            return PMIX_ERR_NOT_FOUND;
    }
    if (optional)
        return PMIX_ERR_NOT_FOUND;
    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
ask:

    r = px_cli_req_new(c, PX_MSG_GET_DONE, px_cli_timeout(info, ninfo));
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->valcb = cbfunc;
    r->cbdata = cbdata;
    r->proc = *proc;
    memcpy(r->key, key, strlen(key) + 1);
    if (ninfo > 0) {
        r->qual = PMIx_Info_create(ninfo);
        if (r->qual == NULL) {
            px_cli_req_free(c, r);
            return PMIX_ERR_NOMEM;
        }
        for (size_t i = 0; i < ninfo; i++)
            PMIx_Info_xfer(&r->qual[i], &info[i]);
        r->nqual = ninfo;
    }
    px_buf_init_frame(&b, PX_MSG_GET, r->tag);
    px_pack_proc(&b, proc);
    px_pack_str(&b, key);
    px_pack_info(&b, info, ninfo);
    rc = px_cli_send(c, &b, r);
    return rc;
}

void px_cli_get_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b)
{
    pmix_value_cbfunc_t cb = r->valcb;
    void *cbdata = r->cbdata;
    pmix_value_t *val = NULL;
    uint8_t kind = 0;
    const void *data = NULL;
    size_t ndata = 0;

    /* an error reply may end right after the status */
    if (status == PMIX_SUCCESS && (px_unpack_u8(b, &kind) != PMIX_SUCCESS ||
                                   px_unpack_bytes_view(b, &data, &ndata) != PMIX_SUCCESS))
        status = PMIX_ERR_UNPACK_FAILURE;
    if (status == PMIX_SUCCESS && kind == PX_GET_KIND_VALUE) {
        px_buf vb;
        px_buf_view(&vb, data, ndata);
        if ((val = PMIx_Value_create(1)) == NULL)
            status = PMIX_ERR_NOMEM;
        else if ((status = px_unpack_value(&vb, val)) != PMIX_SUCCESS)
            status = PMIX_ERR_UNPACK_FAILURE;
        px_cli_req_free(c, r);
        if (cb != NULL)
            cb(status, status == PMIX_SUCCESS ? val : NULL, cbdata);
        if (val != NULL)
            PMIx_Value_free(val, 1);
        return;
    }
    if (status == PMIX_SUCCESS && kind == PX_GET_KIND_JOB) {
        px_buf job;
        px_buf_view(&job, data, ndata);
        status = px_store_unpack_job(c->store, &job);
    } else if (status == PMIX_SUCCESS && ndata > 0) {
        void *copy = malloc(ndata);
        px_blob *blob;
        if (copy == NULL) {
            status = PMIX_ERR_NOMEM;
        } else {
            memcpy(copy, data, ndata);
            blob = px_blob_create(copy, ndata, NULL, NULL);
            if (blob == NULL) {
                status = PMIX_ERR_NOMEM;
            } else {
                status = px_store_add_blob(c->store, blob);
                px_blob_unref(blob); /* the store holds what it needs */
            }
        }
    }
    if (status == PMIX_SUCCESS)
        status = lookup(c, &r->proc, r->key, r->qual, r->nqual, &val);
    px_cli_req_free(c, r);
    if (cb != NULL)
        cb(status, val, cbdata);
    if (val != NULL)
        PMIx_Value_free(val, 1);
}
