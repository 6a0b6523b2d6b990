/*
 * fence.c - PMIx_Fence in the client engine.
 *
 * The client sends its description of the participants as given (the
 * server normalizes it) and waits for FENCE_DONE. A fence whose only
 * participant is the caller completes at once (PMIX_OPERATION_SUCCEEDED).
 * Collected records in the reply go into the store as one blob, shared by
 * all later Gets; data from the host comes as groups (store/groups.c),
 * indexed per group, with this node's own records beside them. PMIX_TIMEOUT is the server's to
 * enforce, so that every local participant gets the same verdict; the client's own timer, a little
 * later (PX_FENCE_GRACE), only ends a wait on a server that never answers.
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "common/px_common.h"

/* How much later than the server's the client's own fence timer fires. */
#define PX_FENCE_GRACE 0.5

/* True if the calling process is the only participant. */
static bool only_self(px_client *c, const pmix_proc_t procs[], size_t nprocs)
{
    pmix_value_t *v = NULL;
    uint64_t size = 0;
    bool wildcard;

    if (nprocs > 1)
        return false;
    if (nprocs == 1 && strncmp(procs[0].nspace, c->self.nspace, PMIX_MAX_NSLEN) != 0)
        return false;
    if (nprocs == 1 && procs[0].rank == c->self.rank)
        return true;
    wildcard = nprocs == 0 || procs[0].rank == PMIX_RANK_WILDCARD;
    if (!wildcard)
        return false;
    if (px_store_get_job(c->store, c->self.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0,
                         &v) != PMIX_SUCCESS)
        return false;
    (void)px_value_get_number(v, &size);
    PMIx_Value_free(v, 1);
    return size == 1;
}

pmix_status_t px_client_fence(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                              void *cbdata)
{
    px_req *r;
    px_buf b;
    double timeout;

    if (procs == NULL && nprocs > 0)
        return PMIX_ERR_BAD_PARAM;
    for (size_t i = 0; i < nprocs; i++)
        if (procs[i].nspace[0] == '\0' || procs[i].rank == PMIX_RANK_UNDEF ||
            procs[i].rank == PMIX_RANK_INVALID)
            return PMIX_ERR_BAD_PARAM;
    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    if (only_self(c, procs, nprocs))
        return PMIX_OPERATION_SUCCEEDED;
    timeout = px_cli_timeout(info, ninfo);
    r = px_cli_req_new(c, PX_MSG_FENCE_DONE, timeout > 0 ? timeout + PX_FENCE_GRACE : 0);
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->opcb = cbfunc;
    r->cbdata = cbdata;
    px_buf_init_frame(&b, PX_MSG_FENCE, r->tag);
    px_pack_procs(&b, procs, nprocs);
    px_pack_info(&b, info, ninfo);
    return px_cli_send(c, &b, r);
}

static void blob_release_region(void *arg, const uint8_t *data, size_t len)
{
    px_cli_region *region = arg;

    region->release(region->arg);
    free(region);
}

/* The region as a blob (no copy); the blob owns the region then. */
static px_blob *region_blob(px_cli_region *region)
{
    px_cli_region *keep = malloc(sizeof(*keep));

    if (keep == NULL)
        return NULL;
    *keep = *region;
    region->release = NULL; /* the blob owns it now */
    return px_blob_create(keep->data, keep->len, blob_release_region, keep);
}

/* A copy of `n` bytes as a blob; NULL for n == 0 (*rc PMIX_SUCCESS) or
 * when out of memory (*rc PMIX_ERR_NOMEM). */
static px_blob *copy_blob(const void *data, size_t n, pmix_status_t *rc)
{
    void *copy;
    px_blob *blob = NULL;

    *rc = PMIX_SUCCESS;
    if (n == 0)
        return NULL;
    if ((copy = malloc(n)) != NULL) {
        memcpy(copy, data, n);
        blob = px_blob_create(copy, n, NULL, NULL); /* frees the copy on failure */
    }
    if (blob == NULL)
        *rc = PMIX_ERR_NOMEM;
    return blob;
}

/* Add a blob's records, or its groups, and drop the caller's reference. */
static pmix_status_t add(px_client *c, px_blob *blob, bool groups)
{
    pmix_status_t rc;

    if (blob == NULL)
        return PMIX_SUCCESS;
    rc = groups ? px_store_add_groups(c->store, blob) : px_store_add_blob(c->store, blob);
    px_blob_unref(blob); /* the store holds what it needs */
    return rc;
}

/* PX_DATA_GROUPS: every node's groups (in the region's first glen bytes,
 * or in the frame) and this node's records cut for local readers (after
 * them in the region, and in the frame). The groups go in first, so that
 * the local records, newer, win. */
static pmix_status_t take_groups(px_client *c, px_buf *b, px_cli_region *region)
{
    uint64_t glen;
    const void *groups, *recs;
    size_t ngroups, nrecs;
    px_blob *whole = NULL, *part;
    pmix_status_t rc;

    if (px_unpack_u64(b, &glen) != PMIX_SUCCESS ||
        px_unpack_bytes_view(b, &groups, &ngroups) != PMIX_SUCCESS ||
        px_unpack_bytes_view(b, &recs, &nrecs) != PMIX_SUCCESS)
        return PMIX_ERR_UNPACK_FAILURE;
    if (region == NULL ? glen != 0 : glen > region->len || ngroups != 0)
        return PMIX_ERR_UNPACK_FAILURE;
    if (region == NULL) {
        part = copy_blob(groups, ngroups, &rc);
        if (rc == PMIX_SUCCESS)
            rc = add(c, part, true);
    } else {
        if ((whole = region_blob(region)) == NULL)
            return PMIX_ERR_NOMEM;
        part = px_blob_slice(whole, 0, (size_t)glen);
        rc = part != NULL ? add(c, part, true) : PMIX_ERR_NOMEM;
        if (rc == PMIX_SUCCESS && whole->len > glen) {
            part = px_blob_slice(whole, (size_t)glen, whole->len - (size_t)glen);
            rc = part != NULL ? add(c, part, false) : PMIX_ERR_NOMEM;
        }
        px_blob_unref(whole);
    }
    if (rc == PMIX_SUCCESS) {
        part = copy_blob(recs, nrecs, &rc);
        if (rc == PMIX_SUCCESS)
            rc = add(c, part, false);
    }
    return rc;
}

/* The collected records as a blob: the region itself when one came (no
 * copy), else a copy of the bytes in the frame. */
static pmix_status_t take_records(px_client *c, px_buf *b, px_cli_region *region)
{
    uint8_t how;
    const void *data = NULL;
    size_t ndata = 0;
    px_blob *blob;
    pmix_status_t rc = PMIX_SUCCESS;

    if (px_unpack_u8(b, &how) != PMIX_SUCCESS)
        return PMIX_ERR_UNPACK_FAILURE;
    if (how == PX_DATA_GROUPS)
        return take_groups(c, b, region);
    if (how == PX_DATA_REGION) {
        if (region == NULL)
            return PMIX_ERR_UNPACK_FAILURE; /* announced, not attached */
        if (region->len == 0)
            return PMIX_SUCCESS;
        if ((blob = region_blob(region)) == NULL)
            return PMIX_ERR_NOMEM;
    } else {
        if (how != PX_DATA_INLINE || region != NULL ||
            px_unpack_bytes_view(b, &data, &ndata) != PMIX_SUCCESS)
            return PMIX_ERR_UNPACK_FAILURE;
        if ((blob = copy_blob(data, ndata, &rc)) == NULL)
            return rc; /* nothing collected, or no memory */
    }
    return add(c, blob, false);
}

void px_cli_fence_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b,
                        px_cli_region *region)
{
    pmix_op_cbfunc_t cb = r->opcb;
    void *cbdata = r->cbdata;

    /* an error reply may end right after the status */
    if (status == PMIX_SUCCESS)
        status = take_records(c, b, region);
    if (region != NULL && region->release != NULL)
        region->release(region->arg);
    px_cli_req_free(c, r);
    if (cb != NULL)
        cb(status, cbdata);
}
