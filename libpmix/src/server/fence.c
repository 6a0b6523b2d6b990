/*
 * fence.c - the collective tracker: aggregating a node's fence participants.
 *
 * A FENCE from a local client names a set of processes (sorted and
 * de-duplicated here, so order does not matter; a NULL set means the
 * client's namespace, written as its wildcard; a group's name stands for
 * its members, group.c). The set is the tracker's
 * identity: clients naming the same set join the same tracker, FIFO, one
 * contribution per client per tracker, so back-to-back fences queue as
 * separate trackers and never mix. A wildcard set and an explicit list of
 * the same processes are different sets, as the Standard requires.
 *
 * When the tracker is created it computes how many local participants to
 * wait for (the namespace's local count for a wildcard, the locally
 * registered ranks of an explicit list) and whether every participant is
 * local. When all local participants have joined:
 *   - all local: the fence completes here, without any host upcall; with
 *     PMIX_COLLECT_DATA every participant receives every participant's data;
 *   - otherwise: one fence_nb upcall hands the host this node's records
 *     (cut for remote readers) as groups (store/groups.c); the host's
 *     callback brings every node's groups, and each local participant
 *     receives them as they are, shared, not rewritten (reply_groups),
 *     with this node's records cut for local readers beside them, which
 *     take precedence.
 *
 * Failure. A participant that dies first (its connection closes without
 * finalize, or the host says so) fails the tracker on every local
 * participant with PMIX_ERR_PROC_TERM_WO_SYNC and, through a fence_nb
 * upcall carrying PMIX_LOCAL_COLLECTIVE_STATUS, tells the host, whose job
 * it is to fail the collective on the other nodes. PMIX_TIMEOUT bounds the
 * wait: on expiry every local participant gets PMIX_ERR_TIMEOUT. Local
 * participants that had not joined a failed collective owe it their next
 * fence of that set (px_tomb), which fails at once with the same status:
 * a late joiner never completes the others' next collective. A
 * participant that finalized and then closed its connection (it exited)
 * will never join either: the fences it has not joined fail with
 * PMIX_ERR_LOST_CONNECTION, and so does every later fence that names it,
 * at once, until it connects again (a process may PMIx_Init again after
 * PMIx_Finalize); the host spreads the news to other nodes. A tracker
 * the host still holds is kept (ABANDONED) until its callback comes, so
 * the host never calls back into freed memory.
 */
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

static int proc_cmp(const void *a, const void *b)
{
    const pmix_proc_t *x = a, *y = b;
    int c = strncmp(x->nspace, y->nspace, PMIX_MAX_NSLEN);

    if (c != 0)
        return c;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static bool procs_equal(const pmix_proc_t *a, size_t na, const pmix_proc_t *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (proc_cmp(&a[i], &b[i]) != 0)
            return false;
    return true;
}

static bool same_set(const px_tracker *t, const pmix_proc_t *procs, size_t n)
{
    return procs_equal(t->procs, t->nprocs, procs, n);
}

static bool set_has(const pmix_proc_t *procs, size_t n, const pmix_proc_t *p)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp(procs[i].nspace, p->nspace, PMIX_MAX_NSLEN) == 0 &&
            (procs[i].rank == PMIX_RANK_WILDCARD || procs[i].rank == p->rank))
            return true;
    return false;
}

static void unlink_tracker(px_server *s, px_tracker *t)
{
    for (px_tracker **pp = &s->trackers; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            return;
        }
    }
}

static void free_tracker(px_server *s, px_tracker *t)
{
    for (size_t i = 0; i < t->nhost; i++)
        PMIx_Info_destruct(&t->host[i]);
    free(t->host);
    if (t->timer != NULL)
        s->pops->timer_cancel(s->pctx, t->timer);
    free(t->procs);
    free(t->contrib);
    free(t);
}

/* Send FENCE_DONE with `status` to every local participant, with the
 * collected records in `region` if given, else in `data`. Large data goes
 * out once, as a shared region the platform hands to every client (no copy
 * per client), when the platform can. The region, if any, is released. */
/* Whether `ndata` bytes for `t`'s participants are worth a shared region
 * the platform copies them into: one reader gains nothing from a region,
 * unless the data would not fit in a frame. */
static bool region_pays(const px_server *s, const px_tracker *t, size_t ndata)
{
    return ndata >= PX_REGION_MIN && (t->ncontrib > 1 || ndata > PX_FRAME_MAX_DEFAULT / 2) &&
           s->pops->region_create != NULL;
}

static void reply_all(px_server *s, px_tracker *t, pmix_status_t status, const void *data,
                      size_t ndata, px_region *region)
{
    if (status != PMIX_SUCCESS && region != NULL) {
        s->pops->region_release(s->pctx, region);
        region = NULL;
    }
    if (region == NULL && status == PMIX_SUCCESS && region_pays(s, t, ndata))
        region = s->pops->region_create(s->pctx, data, ndata);
    for (size_t i = 0; i < t->ncontrib; i++) {
        px_sclient *c = t->contrib[i].client;
        px_buf b;

        if (c == NULL || !c->has_conn)
            continue;
        px_buf_init_frame(&b, PX_MSG_FENCE_DONE, t->contrib[i].tag);
        px_pack_i32(&b, status);
        if (status == PMIX_SUCCESS) {
            px_pack_u8(&b, region != NULL ? PX_DATA_REGION : PX_DATA_INLINE);
            if (region == NULL)
                px_pack_bytes(&b, data, ndata);
        }
        if (region != NULL)
            px_srv_send_region(s, c, &b, region);
        else
            px_srv_send(s, c, &b);
    }
    if (region != NULL)
        s->pops->region_release(s->pctx, region);
}

/* The local participants' records, cut for local readers, streamed: into
 * `b` while they are small, then, from PX_REGION_MIN on and when the
 * platform can append to regions, straight into a region (*region), one
 * record at a time, so that the server never holds a second full copy of
 * the collected data. */
static pmix_status_t stream_local_records(px_server *s, px_tracker *t, px_buf *b,
                                          px_region **region)
{
    bool can = s->pops->region_create != NULL && s->pops->region_append != NULL && t->ncontrib > 1;
    pmix_status_t rc = PMIX_SUCCESS;

    *region = NULL;
    for (size_t i = 0; i < t->ncontrib && rc == PMIX_SUCCESS; i++) {
        if (t->contrib[i].client == NULL)
            continue;
        px_store_pack_record(s->store, &t->contrib[i].client->proc, true, b);
        if ((rc = px_buf_status(b)) != PMIX_SUCCESS)
            break;
        if (*region != NULL) {
            rc = s->pops->region_append(s->pctx, *region, b->data, b->size);
            b->size = 0; /* the buffer holds one record at a time now */
        } else if (can && b->size >= PX_REGION_MIN) {
            *region = s->pops->region_create(s->pctx, b->data, b->size);
            if (*region != NULL)
                b->size = 0;
            else
                can = false; /* no region: everything stays in `b` */
        }
    }
    if (rc != PMIX_SUCCESS && *region != NULL) {
        s->pops->region_release(s->pctx, *region);
        *region = NULL;
    }
    return rc;
}

/* Records of the local participants, cut for local readers. */
static void pack_local_records(px_server *s, px_tracker *t, px_buf *b)
{
    for (size_t i = 0; i < t->ncontrib; i++)
        if (t->contrib[i].client != NULL)
            px_store_pack_record(s->store, &t->contrib[i].client->proc, true, b);
}

/* The local participants' records cut for remote readers, as groups: what
 * this node hands the host. */
static void pack_local_groups(px_server *s, px_tracker *t, px_buf *b)
{
    const pmix_proc_t **procs;
    size_t n = 0;

    if (t->ncontrib == 0)
        return;
    procs = malloc(t->ncontrib * sizeof(*procs));
    if (procs == NULL) {
        b->err = PMIX_ERR_NOMEM;
        return;
    }
    for (size_t i = 0; i < t->ncontrib; i++)
        if (t->contrib[i].client != NULL)
            procs[n++] = &t->contrib[i].client->proc;
    px_store_pack_groups(s->store, procs, n, false, b);
    free(procs);
}

static void complete_local(px_server *s, px_tracker *t, pmix_status_t status)
{
    px_buf b;
    px_region *region = NULL;

    px_buf_init(&b);
    if (status == PMIX_SUCCESS && t->collect)
        status = stream_local_records(s, t, &b, &region);
    reply_all(s, t, status, b.data, b.size, region);
    px_buf_fini(&b);
    unlink_tracker(s, t);
    free_tracker(s, t);
}

typedef struct {
    pmix_release_cbfunc_t fn;
    void *arg;
} host_release;

static void release_host_data(void *arg)
{
    host_release *r = arg;

    if (r->fn != NULL)
        r->fn(r->arg);
    free(r);
}

/* FENCE_DONE with the host's data: every node's records as groups, which
 * the clients index per group, plus this node's records cut for local
 * readers, which they find first. The host's data goes to the clients
 * without being rewritten: by reference where the platform can wrap it
 * (then the platform releases it; *kept is set), else as one copy in a
 * region (with the local records appended), else in each frame. */
static void reply_groups(px_server *s, px_tracker *t, const char *data, size_t ndata,
                         pmix_release_cbfunc_t release_fn, void *release_cbdata, bool *kept)
{
    px_region *region = NULL;
    px_buf local;
    uint64_t glen = 0;
    pmix_status_t rc;

    *kept = false;
    px_buf_init(&local);
    pack_local_records(s, t, &local);
    if ((rc = px_buf_status(&local)) != PMIX_SUCCESS) {
        px_buf_fini(&local);
        reply_all(s, t, rc, NULL, 0, NULL);
        return;
    }
    if (ndata > 0 && s->pops->region_wrap != NULL) {
        host_release *r = malloc(sizeof(*r));
        if (r != NULL) {
            r->fn = release_fn;
            r->arg = release_cbdata;
            region = s->pops->region_wrap(s->pctx, data, ndata, release_host_data, r);
            if (region == NULL)
                free(r);
            *kept = region != NULL;
        }
    } else if (region_pays(s, t, ndata)) {
        region = s->pops->region_create(s->pctx, data, ndata);
        if (region != NULL && local.size > 0 && s->pops->region_append != NULL &&
            s->pops->region_append(s->pctx, region, local.data, local.size) == PMIX_SUCCESS)
            local.size = 0; /* in the region now */
    }
    if (region != NULL)
        glen = ndata;
    for (size_t i = 0; i < t->ncontrib; i++) {
        px_sclient *c = t->contrib[i].client;
        px_buf b;

        if (c == NULL || !c->has_conn)
            continue;
        px_buf_init_frame(&b, PX_MSG_FENCE_DONE, t->contrib[i].tag);
        px_pack_i32(&b, PMIX_SUCCESS);
        px_pack_u8(&b, PX_DATA_GROUPS);
        px_pack_u64(&b, glen);
        px_pack_bytes(&b, region != NULL ? NULL : data, region != NULL ? 0 : ndata);
        px_pack_bytes(&b, local.data, local.size);
        if (region != NULL)
            px_srv_send_region(s, c, &b, region);
        else
            px_srv_send(s, c, &b);
    }
    if (region != NULL)
        s->pops->region_release(s->pctx, region);
    px_buf_fini(&local);
}

static void host_done_locked(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                             pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    px_tracker *t = cbdata;
    px_server *s = t->srv;
    bool kept = false;

    if (t->state == PX_TRK_HOST) {
        if (status == PMIX_SUCCESS && t->collect &&
            px_store_check_groups(data, ndata, NULL) != PMIX_SUCCESS) {
            px_srv_logf(s, PX_LOG_ERROR,
                        "fence #%llu: the host returned malformed collected data (%zu bytes)",
                        (unsigned long long)t->id, ndata);
            status = PMIX_ERR_UNPACK_FAILURE;
        }
        if (status == PMIX_SUCCESS && t->collect)
            reply_groups(s, t, data, ndata, release_fn, release_cbdata, &kept);
        else
            reply_all(s, t, status, NULL, 0, NULL);
    }
    unlink_tracker(s, t);
    free_tracker(s, t);
    if (release_fn != NULL && !kept)
        release_fn(release_cbdata);
}

/* Hosts may call this from any thread: take the engine lock. */
static void host_done(pmix_status_t status, const char *data, size_t ndata, void *cbdata,
                      pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    px_server *s = ((px_tracker *)cbdata)->srv;
    s->pops->lock(s->pctx);
    host_done_locked(status, data, ndata, cbdata, release_fn, release_cbdata);
    s->pops->unlock(s->pctx);
}

/* Hand the tracker to the host; `local_status` != SUCCESS reports a local
 * failure (PMIX_LOCAL_COLLECTIVE_STATUS). Returns false if the host did not
 * keep it (the tracker must then be finished by the caller). */
static bool upcall(px_server *s, px_tracker *t, pmix_status_t local_status, pmix_status_t *rcp)
{
    pmix_info_t info[3 + PX_HOST_KEYS];
    size_t ninfo = 0;
    px_buf b;
    pmix_status_t rc;

    *rcp = PMIX_ERR_NOT_SUPPORTED;
    if (s->hops->fence_nb == NULL)
        return false;
    memset(info, 0, sizeof(info));
    /* the host's own directives ("pmixlab." keys: the algorithm) */
    for (size_t i = 0; i < t->nhost; i++)
        PMIx_Info_xfer(&info[ninfo++], &t->host[i]);
    if (t->collect)
        PMIx_Info_load(&info[ninfo++], PMIX_COLLECT_DATA, &t->collect, PMIX_BOOL);
    if (t->timeout > 0) {
        int secs = (int)(t->timeout + 0.999);
        PMIx_Info_load(&info[ninfo++], PMIX_TIMEOUT, &secs, PMIX_INT);
    }
    if (local_status != PMIX_SUCCESS)
        PMIx_Info_load(&info[ninfo++], PMIX_LOCAL_COLLECTIVE_STATUS, &local_status, PMIX_STATUS);
    px_buf_init(&b);
    if (local_status == PMIX_SUCCESS && t->collect)
        pack_local_groups(s, t, &b);
    if (px_buf_status(&b) != PMIX_SUCCESS) {
        *rcp = px_buf_status(&b);
        px_buf_fini(&b);
        return false;
    }
    t->state = local_status == PMIX_SUCCESS ? PX_TRK_HOST : PX_TRK_ABANDONED;
    /* The data is ours: the host reads it during the call and copies what it
     * keeps. */
    rc = s->hops->fence_nb(s->hctx, t->procs, t->nprocs, info, ninfo, (char *)b.data, b.size,
                           host_done, t);
    px_buf_fini(&b);
    for (size_t i = 0; i < ninfo; i++)
        PMIx_Info_destruct(&info[i]);
    *rcp = rc;
    return rc == PMIX_SUCCESS;
}

static void all_joined(px_server *s, px_tracker *t)
{
    pmix_status_t rc;

    if (t->all_local) {
        complete_local(s, t, PMIX_SUCCESS);
        return;
    }
    if (upcall(s, t, PMIX_SUCCESS, &rc))
        return;
    t->state = PX_TRK_GATHERING;
    if (rc != PMIX_OPERATION_SUCCEEDED)
        px_srv_logf(s, PX_LOG_ERROR, "fence #%llu: the host's fence_nb failed: %s",
                    (unsigned long long)t->id, PMIx_Error_string(rc));
    /* PMIX_OPERATION_SUCCEEDED: the host completed it; only local data moves */
    complete_local(s, t, rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc);
}

/* Fail the tracker on every local participant and tell the host. */
static bool has_contributed(const px_tracker *t, const px_sclient *c);

static void free_tomb(px_server *s, px_tomb *tb)
{
    for (px_tomb **pp = &s->tombs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == tb) {
            *pp = tb->next;
            break;
        }
    }
    free(tb->procs);
    free(tb->owed);
    free(tb);
}

/* Remember who still owes failed tracker `t` a fence (see px_tomb). */
static void make_tomb(px_server *s, const px_tracker *t, pmix_status_t why)
{
    size_t n = 0;
    px_tomb *tb;

    for (px_sclient *c = s->clients; c != NULL; c = c->next)
        if (c->state == PX_SC_CONNECTED && set_has(t->procs, t->nprocs, &c->proc) &&
            !has_contributed(t, c))
            n++;
    if (n == 0 || (tb = calloc(1, sizeof(*tb))) == NULL)
        return;
    tb->procs = malloc(t->nprocs * sizeof(*tb->procs));
    tb->owed = malloc(n * sizeof(*tb->owed));
    if (tb->procs == NULL || tb->owed == NULL) {
        free(tb->procs);
        free(tb->owed);
        free(tb);
        return; /* then a late joiner may pair with a later fence */
    }
    memcpy(tb->procs, t->procs, t->nprocs * sizeof(*tb->procs));
    tb->nprocs = t->nprocs;
    tb->status = why;
    for (px_sclient *c = s->clients; c != NULL; c = c->next)
        if (c->state == PX_SC_CONNECTED && set_has(t->procs, t->nprocs, &c->proc) &&
            !has_contributed(t, c))
            tb->owed[tb->nowed++] = c;
    tb->next = s->tombs;
    s->tombs = tb;
}

/* If `c` owes a failed collective of this set a fence, this is it:
 * answer it with that collective's status. */
static bool pay_tomb(px_server *s, px_sclient *c, uint32_t tag, const pmix_proc_t *procs, size_t n)
{
    for (px_tomb *tb = s->tombs; tb != NULL; tb = tb->next) {
        if (!procs_equal(tb->procs, tb->nprocs, procs, n))
            continue;
        for (size_t i = 0; i < tb->nowed; i++) {
            if (tb->owed[i] != c)
                continue;
            tb->owed[i] = tb->owed[--tb->nowed];
            px_srv_reply_status(s, c, PX_MSG_FENCE_DONE, tag, tb->status);
            if (tb->nowed == 0)
                free_tomb(s, tb);
            return true;
        }
    }
    return false;
}

static void fail_tracker(px_server *s, px_tracker *t, pmix_status_t why)
{
    pmix_status_t rc;

    reply_all(s, t, why, NULL, 0, NULL);
    make_tomb(s, t, why);
    /* its generation on the fence page may stay short of arrivals */
    if (t->nprocs == 1 && t->procs[0].rank == PMIX_RANK_WILDCARD)
        px_srv_page_break(s, px_srv_nspace(s, t->procs[0].nspace), "a fence failed");
    if (t->timer != NULL) {
        s->pops->timer_cancel(s->pctx, t->timer);
        t->timer = NULL;
    }
    t->ncontrib = 0;
    if (t->state == PX_TRK_GATHERING && upcall(s, t, why, &rc))
        return; /* kept as ABANDONED until the host's callback */
    if (t->state == PX_TRK_HOST) {
        t->state = PX_TRK_ABANDONED;
        return;
    }
    unlink_tracker(s, t);
    free_tracker(s, t);
}

static void tracker_timeout(void *arg)
{
    px_tracker *t = arg;
    px_server *s = t->srv;

    t->timer = NULL;
    px_srv_logf(s, PX_LOG_INFO,
                "fence #%llu timed out after %.3g s with %zu of %zu local"
                " participants",
                (unsigned long long)t->id, t->timeout, t->ncontrib, t->nexpected);
    fail_tracker(s, t, PMIX_ERR_TIMEOUT);
}

/* Keep the host's own directives ("pmixlab." keys, e.g. the algorithm),
 * from the first participants that give any, up to PX_HOST_KEYS. The
 * array is made for the first one: most fences have none. False when
 * there is no memory for it. */
static bool keep_host_keys(px_tracker *t, const pmix_info_t *info, size_t ninfo)
{
    for (size_t i = 0; i < ninfo && t->nhost < PX_HOST_KEYS; i++) {
        if (strncmp(info[i].key, "pmixlab.", 8) != 0 ||
            (t->nhost != 0 && px_info_find(t->host, t->nhost, info[i].key) != NULL))
            continue;
        if (t->host == NULL && (t->host = calloc(PX_HOST_KEYS, sizeof(*t->host))) == NULL)
            return false;
        PMIx_Info_xfer(&t->host[t->nhost++], &info[i]);
    }
    return true;
}

static px_tracker *new_tracker(px_server *s, pmix_proc_t *procs, size_t n, pmix_status_t *rcp)
{
    px_tracker *t;
    size_t expected = 0;
    bool all_local = true;

    for (size_t i = 0; i < n; i++) {
        px_nspace *ns = px_srv_nspace(s, procs[i].nspace);
        if (ns == NULL) {
            *rcp = PMIX_ERR_BAD_PARAM; /* nobody can tell who the participants are */
            return NULL;
        }
        if (procs[i].rank == PMIX_RANK_WILDCARD) {
            expected += (size_t)ns->nlocal;
            if (ns->job_size == 0 || ns->job_size != (uint32_t)ns->nlocal)
                all_local = false;
        } else if (px_srv_client(s, &procs[i]) != NULL) {
            expected++;
        } else {
            all_local = false;
        }
    }
    t = calloc(1, sizeof(*t));
    if (t == NULL || (t->contrib = calloc(expected ? expected : 1, sizeof(px_contrib))) == NULL) {
        free(t);
        *rcp = PMIX_ERR_NOMEM;
        return NULL;
    }
    t->srv = s;
    t->procs = procs;
    t->nprocs = n;
    t->nexpected = expected;
    t->all_local = all_local;
    t->state = PX_TRK_GATHERING;
    t->id = s->next_fence_id++;
    /* append: trackers of the same set are served in order */
    px_tracker **pp = &s->trackers;
    while (*pp != NULL)
        pp = &(*pp)->next;
    *pp = t;
    return t;
}

static bool has_contributed(const px_tracker *t, const px_sclient *c)
{
    for (size_t i = 0; i < t->ncontrib; i++)
        if (t->contrib[i].client == c)
            return true;
    return false;
}

pmix_status_t px_srv_fence(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    pmix_proc_t *procs = NULL;
    size_t n = 0, m;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    pmix_status_t rc;
    px_tracker *t;
    const pmix_info_t *ti;
    double timeout = 0;
    uint8_t arrived = 0;

    if ((rc = px_unpack_procs(b, &procs, &n)) != PMIX_SUCCESS)
        return rc;
    if ((rc = px_unpack_info(b, &info, &ninfo)) != PMIX_SUCCESS ||
        (rc = px_unpack_u8(b, &arrived)) != PMIX_SUCCESS) {
        free(procs);
        PMIx_Info_free(info, ninfo);
        return rc;
    }
    ti = px_info_find(info, ninfo, PMIX_TIMEOUT);
    if (ti != NULL) {
        uint64_t v;
        if (px_value_get_number(&ti->value, &v) == PMIX_SUCCESS)
            timeout = (double)v;
    }
    if (n == 0) {
        free(procs);
        procs = calloc(1, sizeof(*procs));
        if (procs == NULL) {
            rc = PMIX_ERR_NOMEM;
            goto refuse;
        }
        memcpy(procs[0].nspace, c->proc.nspace, sizeof(procs[0].nspace));
        procs[0].rank = PMIX_RANK_WILDCARD;
        n = 1;
    }
    /* a group's name stands for its members (the Standard: the server
     * translates group ids before the host sees them) */
    if ((rc = px_srv_group_expand(s, &procs, &n)) != PMIX_SUCCESS)
        goto refuse;
    qsort(procs, n, sizeof(*procs), proc_cmp);
    for (size_t i = m = 1; i < n; i++)
        if (proc_cmp(&procs[i], &procs[m - 1]) != 0)
            procs[m++] = procs[i];
    n = m;
    /* The fence page's set, from a client that did not arrive on the page:
     * its peers may be waiting there for it. A client always arrives while
     * the page is on, so this only guards against the two sides ever
     * disagreeing on what the page's set is. */
    if (!arrived && n == 1 && procs[0].rank == PMIX_RANK_WILDCARD &&
        strncmp(procs[0].nspace, c->proc.nspace, PMIX_MAX_NSLEN) == 0) {
        px_nspace *ns = px_srv_nspace(s, c->proc.nspace);
        if (ns != NULL && ns->pg != NULL && !ns->page_off)
            px_srv_page_break(s, ns, "a fence of the namespace that did not arrive on it");
    }

    rc = PMIX_SUCCESS;
    if (!set_has(procs, n, &c->proc))
        rc = PMIX_ERR_BAD_PARAM; /* a caller must be one of the participants */
    for (size_t i = 0; i < n && rc == PMIX_SUCCESS; i++) {
        px_nspace *ns = px_srv_nspace(s, procs[i].nspace);
        if (ns == NULL)
            rc = PMIX_ERR_BAD_PARAM; /* nobody can tell who the participants are */
        else if (procs[i].rank != PMIX_RANK_WILDCARD && ns->job_size != 0 &&
                 procs[i].rank >= ns->job_size)
            rc = PMIX_ERR_BAD_PARAM; /* no such process: it would never join */
        else if (px_srv_is_dead(s, &procs[i]))
            rc = PMIX_ERR_PROC_TERM_WO_SYNC;
    }
    if (rc != PMIX_SUCCESS)
        goto refuse;
    if (pay_tomb(s, c, tag, procs, n))
        goto done;
    for (t = s->trackers; t != NULL; t = t->next)
        if (t->state == PX_TRK_GATHERING && same_set(t, procs, n) && !has_contributed(t, c))
            break;
    for (size_t i = 0; t == NULL && i < n; i++) {
        /* A participant that finalized and left will never join a new
         * tracker (one it had joined before it left is still found). */
        if (px_srv_is_departed(s, &procs[i])) {
            rc = PMIX_ERR_LOST_CONNECTION;
            goto refuse;
        }
    }
    if (t == NULL) {
        t = new_tracker(s, procs, n, &rc);
        if (t == NULL)
            goto refuse;
        procs = NULL; /* the tracker's now */
    }
    if (t->ncontrib >= t->nexpected) {
        /* more local participants than registered: the host's counts are wrong */
        px_srv_logf(s, PX_LOG_ERROR,
                    "fence #%llu: %s:%u joins but %zu local participants were"
                    " expected",
                    (unsigned long long)t->id, c->proc.nspace, c->proc.rank, t->nexpected);
        rc = PMIX_ERR_BAD_PARAM;
        goto refuse;
    }
    if (!keep_host_keys(t, info, ninfo)) {
        rc = PMIX_ERR_NOMEM;
        goto refuse;
    }
    t->contrib[t->ncontrib].client = c;
    t->contrib[t->ncontrib].tag = tag;
    t->ncontrib++;
    t->collect = t->collect || px_info_flag(info, ninfo, PMIX_COLLECT_DATA);
    if (timeout > 0 && (t->timeout == 0 || timeout < t->timeout)) {
        t->timeout = timeout;
        if (t->timer != NULL)
            s->pops->timer_cancel(s->pctx, t->timer);
        t->timer = s->pops->timer_start(s->pctx, timeout, tracker_timeout, t);
    }
    if (t->ncontrib == t->nexpected)
        all_joined(s, t);
    goto done;
refuse:
    px_srv_reply_status(s, c, PX_MSG_FENCE_DONE, tag, rc);
done:
    free(procs);
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}

void px_srv_fence_proc_died(px_server *s, const pmix_proc_t *proc, pmix_status_t why)
{
    bool again = true;

    while (again) {
        again = false;
        for (px_tracker *t = s->trackers; t != NULL; t = t->next) {
            if (t->state == PX_TRK_GATHERING && set_has(t->procs, t->nprocs, proc)) {
                px_srv_logf(s, PX_LOG_INFO, "fence #%llu fails: %s:%u died before it completed",
                            (unsigned long long)t->id, proc->nspace, proc->rank);
                fail_tracker(s, t, why);
                again = true; /* the list may have changed */
                break;
            }
        }
    }
}

void px_srv_fence_departed(px_server *s, const px_sclient *c)
{
    bool again = true;

    while (again) {
        again = false;
        for (px_tracker *t = s->trackers; t != NULL; t = t->next) {
            if (t->state == PX_TRK_GATHERING && set_has(t->procs, t->nprocs, &c->proc) &&
                !has_contributed(t, c)) {
                px_srv_logf(s, PX_LOG_INFO,
                            "fence #%llu fails: %s:%u finalized and left without joining it",
                            (unsigned long long)t->id, c->proc.nspace, c->proc.rank);
                fail_tracker(s, t, PMIX_ERR_LOST_CONNECTION);
                again = true; /* the list may have changed */
                break;
            }
        }
    }
}

void px_srv_fence_client_gone(px_server *s, const px_sclient *c)
{
    for (px_tomb *tb = s->tombs, *next; tb != NULL; tb = next) {
        next = tb->next;
        for (size_t i = 0; i < tb->nowed; i++) {
            if (tb->owed[i] == c) {
                tb->owed[i] = tb->owed[--tb->nowed];
                break;
            }
        }
        if (tb->nowed == 0)
            free_tomb(s, tb);
    }
    for (px_tracker *t = s->trackers; t != NULL; t = t->next)
        for (size_t i = 0; i < t->ncontrib; i++)
            if (t->contrib[i].client == c)
                t->contrib[i].client = NULL;
}

void px_srv_fence_destroy_all(px_server *s)
{
    while (s->tombs != NULL)
        free_tomb(s, s->tombs);
    while (s->trackers != NULL) {
        px_tracker *t = s->trackers;
        s->trackers = t->next;
        free_tracker(s, t);
    }
}

/* ---- the fence page (px_page.h) ---- */

px_page *px_srv_page_for(px_server *s, px_nspace *ns)
{
    void *mem = NULL;
    px_page_hdr *pg;

    if (ns->page != NULL || ns->page_off)
        return ns->page_off ? NULL : ns->page;
    ns->page_off = true; /* unless made now: a client welcomed without it never arrives on it */
    if (s->pops->page_create == NULL || s->pops->page_send == NULL || s->pops->page_write == NULL ||
        ns->nlocal < 2 || (uint32_t)ns->nlocal > PX_PAGE_MAX ||
        ns->job_size != (uint32_t)ns->nlocal)
        return NULL;
    ns->page = s->pops->page_create(s->pctx, px_page_total((uint32_t)ns->nlocal), &mem);
    if (ns->page == NULL)
        return NULL;
    pg = mem;
    pg->nprocs = (uint32_t)ns->nlocal;
    pg->magic = PX_PAGE_MAGIC;
    ns->pg = pg;
    ns->pg_n = (uint32_t)ns->nlocal; /* never read back from the page */
    ns->page_off = false;
    return ns->page;
}

void px_srv_page_break(px_server *s, px_nspace *ns, const char *why)
{
    if (ns == NULL)
        return;
    if (ns->pg != NULL && !ns->page_off)
        px_srv_logf(s, PX_LOG_DEBUG, "namespace %s: fence page off (%s)", ns->name, why);
    ns->page_off = true;
    ns->pc_wait = false; /* the sleepers come through their sockets now */
    if (ns->pg == NULL)
        return;
    atomic_fetch_or_explicit(&ns->pg->word, PX_PG_BROKEN, memory_order_acq_rel);
    s->pops->page_wake(s->pctx, (uint32_t *)&ns->pg->word);
}

void px_srv_page_free(px_server *s, px_nspace *ns)
{
    if (ns->page == NULL)
        return;
    px_srv_page_break(s, ns, "namespace gone");
    s->pops->page_destroy(s->pctx, ns->page);
    ns->page = NULL;
    ns->pg = NULL;
}

/* px_srv_commit_pending for a client of `ns`. */
static bool commit_pending(const px_nspace *ns, const px_sclient *c)
{
    uint32_t sent;

    if (ns == NULL || ns->pg == NULL || c->proc.rank >= ns->pg_n)
        return false;
    sent = atomic_load_explicit(&ns->pg->commits[c->proc.rank], memory_order_acquire);
    return (int32_t)(sent - c->ncommits) > 0;
}

bool px_srv_commit_pending(px_server *s, const px_sclient *c)
{
    return commit_pending(px_srv_nspace(s, c->proc.nspace), c);
}

/* Bytes of records gathered before one page_write: few system calls for
 * small records, a bounded buffer for large ones. */
#define PAGE_WRITE_BATCH ((size_t)256 << 10)

/* Write every participant's records (cut for local readers) into data
 * half cseq & 1, in batches. Returns false if they do not fit or cannot be
 * written; *len is their length. */
static bool page_write_records(px_server *s, px_nspace *ns, uint32_t cseq, uint64_t *len)
{
    uint64_t base = px_page_data_off(ns->pg_n) + (cseq & 1) * PX_PAGE_HALF, pos = 0;
    px_buf b;
    bool ok = true;

    px_buf_init(&b);
    for (px_sclient *c = s->clients; ok; c = c->next) {
        bool last = c == NULL;
        if (!last && strncmp(c->proc.nspace, ns->name, PMIX_MAX_NSLEN) == 0)
            px_store_pack_record(s->store, &c->proc, true, &b);
        ok = px_buf_status(&b) == PMIX_SUCCESS && b.size <= PX_PAGE_HALF - pos;
        if (ok && b.size > 0 && (last || b.size >= PAGE_WRITE_BATCH)) {
            ok = s->pops->page_write(s->pctx, ns->page, base + pos, b.data, b.size) == PMIX_SUCCESS;
            pos += b.size;
            b.size = 0;
        }
        if (last)
            break;
    }
    px_buf_fini(&b);
    *len = pos;
    return ok;
}

/* Answer the PCOLLECT of ns->pc_gen through the page, once every commit
 * its participants sent has been read (else at a later commit). */
static void page_collect_try(px_server *s, px_nspace *ns)
{
    px_page_hdr *pg = ns->pg;
    uint32_t w, n, g, cseq, mode = PX_PG_MODE_SERVER;
    uint64_t len = 0, base, used, trim = 0;

    if (!ns->pc_wait || pg == NULL)
        return;
    n = ns->pg_n;
    w = atomic_load_explicit(&pg->word, memory_order_acquire);
    /* the clients number the collects they end themselves (SLOTS) here too */
    cseq = atomic_load_explicit(&pg->cseq, memory_order_relaxed) + 1;
    g = PX_PG_GEN(w);
    if ((w & PX_PG_BROKEN) || g != ns->pc_gen || (w & PX_PG_COUNT) != n || !(w & PX_PG_COLLECT)) {
        ns->pc_wait = false; /* stale, or everyone goes to the server anyway */
        return;
    }
    /* Every commit read, and the data's size: what plainly cannot fit goes
     * to the server before a byte is written (the check while writing
     * still catches the rest). A record is its commit's lists for local
     * readers plus a header of at most 300 bytes. */
    uint64_t need = 0;
    for (px_sclient *c = s->clients; c != NULL; c = c->next) {
        if (strncmp(c->proc.nspace, ns->name, PMIX_MAX_NSLEN) != 0)
            continue;
        if (commit_pending(ns, c))
            return; /* px_srv_page_committed tries again */
        need += px_store_commit_len(s->store, &c->proc, true) + 300;
    }
    ns->pc_wait = false;
    bool free_half = px_page_half_free(pg, n, cseq);
    base = px_page_data_off(n) + (cseq & 1) * PX_PAGE_HALF;
    if (free_half && need <= PX_PAGE_HALF && page_write_records(s, ns, cseq, &len)) {
        pg->res[g & 1].cseq = cseq;
        pg->res[g & 1].off = base;
        pg->res[g & 1].len = len;
        atomic_store_explicit(&pg->cseq, cseq, memory_order_relaxed);
        mode = PX_PG_MODE_DATA;
        /* what an earlier, larger collect left past this one's data: nobody
         * holds it (free_half), and it is given back below; the clients'
         * own collects (SLOTS) in this half reached fill or hw */
        uint32_t fill =
            atomic_load_explicit(&pg->fill[cseq & 1], memory_order_relaxed) & PX_PG_FILL_UNITS;
        used = px_page_round(len);
        /* nobody writes this half now (everyone arrived): hw starts again,
         * at this collect's extent, so that the last arrival of a smaller
         * collect the clients write there later gives it back */
        uint32_t hw = atomic_exchange_explicit(
            &pg->hw[cseq & 1], (uint32_t)(used / PX_PG_FILL_LINE), memory_order_relaxed);
        uint64_t filled = px_page_lines_extent(fill > hw ? fill : hw);
        if (filled > ns->half_used[cseq & 1])
            ns->half_used[cseq & 1] = filled;
        if (ns->half_used[cseq & 1] > used)
            trim = ns->half_used[cseq & 1] - used;
        ns->half_used[cseq & 1] = used;
    } else {
        if (free_half) { /* a write that failed may have left some behind */
            used = px_page_round(len);
            if (used > ns->half_used[cseq & 1])
                ns->half_used[cseq & 1] = used;
        }
        px_srv_logf(s, PX_LOG_DEBUG, "namespace %s: collect #%u goes through the server (%s)",
                    ns->name, cseq, free_half ? "too large" : "its half is still held");
    }
    /* Given back before the wake: once the generation moves, the next
     * collect through the clients' slots can release this one and the one
     * after it write into this half again (px_page.h), and a hole punched
     * then would zero their records. Only a smaller collect after a larger
     * one pays this on its way. */
    if (trim > 0 && s->pops->page_trim != NULL)
        s->pops->page_trim(s->pctx, ns->page, base + ns->half_used[cseq & 1], trim);
    atomic_store_explicit(&pg->mode[g & 1], mode, memory_order_relaxed);
    /* fails only if BROKEN came meanwhile: then they come through their sockets */
    if (atomic_compare_exchange_strong_explicit(&pg->word, &w, (g + 1) << PX_PG_GEN_SHIFT,
                                                memory_order_acq_rel, memory_order_acquire))
        s->pops->page_wake(s->pctx, (uint32_t *)&pg->word);
}

pmix_status_t px_srv_page_collect(px_server *s, px_sclient *c, px_buf *b)
{
    px_nspace *ns = px_srv_nspace(s, c->proc.nspace);
    uint32_t gen;

    if (px_unpack_u32(b, &gen) != PMIX_SUCCESS)
        return PMIX_ERR_UNPACK_FAILURE;
    if (ns == NULL || ns->pg == NULL || ns->page_off)
        return PMIX_SUCCESS; /* the page is off: the participants come themselves */
    ns->pc_wait = true;
    ns->pc_gen = gen;
    page_collect_try(s, ns);
    return PMIX_SUCCESS;
}

void px_srv_page_committed(px_server *s, px_sclient *c)
{
    px_nspace *ns = px_srv_nspace(s, c->proc.nspace);

    if (ns != NULL && ns->pc_wait)
        page_collect_try(s, ns);
}
