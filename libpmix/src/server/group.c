/*
 * group.c - PMIx groups in the server engine: construct, destruct,
 * invite/join and leave.
 *
 * A construct or destruct is a collective of the group's members, gathered
 * per node like a fence (fence.c): the first local member to ask makes a
 * tracker (px_gtrk) named by the group, the others join it, and when every
 * local member has joined:
 *   - every member is local and no context id is asked for: the operation
 *     completes here, without the host;
 *   - otherwise one group upcall (px_server_host.group, px_group_req) hands
 *     the host this node's contribution, and its completion brings every
 *     node's contributions and the context id.
 * A node's contribution to a construct is one chunk:
 *
 *   chunk = u32 magic "PXGM", procs (the node's members that are in),
 *           bytes groups (their records cut for remote readers, store/groups.c),
 *           bytes ginfo (their group information: for each member that gave
 *           some, its proc and its infos)
 *
 * and the host hands back the chunks of every node, concatenated. The
 * group's membership is the members named in some chunk, in group-rank
 * order; every member receives the groups of every chunk (the data its
 * fellow members committed before the construct) and this node's records
 * cut for local readers, which take precedence, as after a collecting
 * fence. Group information is what a member gives in its construct's
 * directives for the others: PMIX_GROUP_LOCAL_CID (the Standard's) and the
 * entries of PMIX_GROUP_INFO (OpenPMIx's array of infos; a leading
 * PMIX_PROCID is dropped, the caller is the poster). Every member receives
 * every member's, and its client answers PMIx_Get of them for the poster
 * (client/group.c). A server keeps the groups with a local member (px_sgroup): their
 * members and context id, for destruct and leave, and for fences that
 * name a group ({group, rank}: px_srv_group_expand).
 *
 * Invitations. PMIx_Group_invite makes a tracker whose members are the
 * processes named, in that order (the inviter, the leader, is one only if
 * it names itself; else it just hears the outcome), and sends each of
 * them but the leader PMIX_GROUP_INVITED. PMIx_Group_join answers: an
 * accept joins the tracker (the leader hears PMIX_GROUP_INVITE_ACCEPTED),
 * a decline leaves it (PMIX_GROUP_INVITE_DECLINED; the decliner's join
 * completes at once). When everyone answered, the group is built from
 * those who accepted (and the leader if named), as a construct would be, and its members
 * also hear PMIX_GROUP_CONSTRUCT_COMPLETE. Invited processes of other
 * nodes are reached through the host ("Invitations across nodes", below).
 *
 * Failure. A member that dies before the operation completes fails it on
 * every local member with PMIX_GROUP_MEMBER_FAILED (with a group upcall
 * carrying that local_status, so that the host fails it on the other
 * nodes), unless PMIX_GROUP_OPTIONAL was given: the operation then goes on
 * without it and ends in PMIX_ERR_PARTIAL_SUCCESS. An invited process that
 * dies counts as a decline (the leader hears PMIX_GROUP_INVITE_FAILED, as
 * for one that had not answered when PMIX_TIMEOUT expired); a leader that
 * dies fails the invitation with PMIX_GROUP_LEADER_FAILED.
 * With PMIX_GROUP_NOTIFY_TERMINATION the leader (or, without one, every
 * local member) also hears PMIX_GROUP_MEMBER_FAILED. PMIX_TIMEOUT bounds
 * the wait: on expiry an optional operation or an invitation goes on with
 * the members that came, anything else fails with PMIX_ERR_TIMEOUT. A
 * tracker the host holds is kept (ABANDONED) until its callback comes.
 */
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

/* "PXGM": the first word of a node's chunk. */
#define CHUNK_MAGIC 0x4d475850u

static bool proc_eq(const pmix_proc_t *a, const pmix_proc_t *b)
{
    return a->rank == b->rank && strncmp(a->nspace, b->nspace, PMIX_MAX_NSLEN) == 0;
}

static bool procs_have(const pmix_proc_t *procs, size_t n, const pmix_proc_t *p)
{
    for (size_t i = 0; i < n; i++)
        if (proc_eq(&procs[i], p))
            return true;
    return false;
}

/* True if a and b hold the same processes (each without duplicates). */
static bool same_members(const pmix_proc_t *a, size_t na, const pmix_proc_t *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (!procs_have(b, nb, &a[i]))
            return false;
    return true;
}

static bool local_alive(px_server *s, const pmix_proc_t *p)
{
    px_sclient *c = px_srv_client(s, p);

    return c != NULL && c->state != PX_SC_DEAD && c->state != PX_SC_FINALIZED;
}

/* A member that can no longer take part: known dead, or a client here
 * that died or finalized. */
static bool gone(px_server *s, const pmix_proc_t *p)
{
    return px_srv_is_dead(s, p) || (px_srv_client(s, p) != NULL && !local_alive(s, p));
}

/* ---- the directives ---- */

typedef struct gdirs {
    bool assign_ctxid, optional, notify_termination, leader;
    double timeout;
} gdirs;

static void read_dirs(const pmix_info_t *info, size_t ninfo, gdirs *d)
{
    const pmix_info_t *ti = px_info_find(info, ninfo, PMIX_TIMEOUT);
    uint64_t v;

    memset(d, 0, sizeof(*d));
    d->assign_ctxid = px_info_flag(info, ninfo, PMIX_GROUP_ASSIGN_CONTEXT_ID);
    d->optional = px_info_flag(info, ninfo, PMIX_GROUP_OPTIONAL);
    d->notify_termination = px_info_flag(info, ninfo, PMIX_GROUP_NOTIFY_TERMINATION);
    d->leader = px_info_flag(info, ninfo, PMIX_GROUP_LEADER);
    if (ti != NULL && px_value_get_number(&ti->value, &v) == PMIX_SUCCESS)
        d->timeout = (double)v;
}

/* The members as named: namespaces' wildcards become their ranks (the
 * namespace must be registered here, with its size), duplicates go, the
 * first naming keeps its place. A new array in *out, or an error. */
static pmix_status_t expand(px_server *s, const pmix_proc_t *procs, size_t n, pmix_proc_t **out,
                            size_t *nout)
{
    size_t cap = 0, m = 0;
    pmix_proc_t *v;

    for (size_t i = 0; i < n; i++) {
        px_nspace *ns = px_srv_nspace(s, procs[i].nspace);
        if (procs[i].nspace[0] == '\0' || procs[i].rank == PMIX_RANK_UNDEF ||
            procs[i].rank == PMIX_RANK_INVALID || procs[i].rank == PMIX_RANK_LOCAL_NODE ||
            procs[i].rank == PMIX_RANK_LOCAL_PEERS)
            return PMIX_ERR_BAD_PARAM;
        if (procs[i].rank == PMIX_RANK_WILDCARD) {
            if (ns == NULL || ns->job_size == 0)
                return PMIX_ERR_BAD_PARAM; /* nobody here can tell who they are */
            cap += ns->job_size;
        } else {
            if (ns != NULL && ns->job_size != 0 && procs[i].rank >= ns->job_size)
                return PMIX_ERR_BAD_PARAM; /* no such process */
            cap++;
        }
    }
    if (cap == 0)
        return PMIX_ERR_BAD_PARAM;
    v = calloc(cap, sizeof(*v));
    if (v == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        uint32_t first = procs[i].rank, last = procs[i].rank;
        if (procs[i].rank == PMIX_RANK_WILDCARD) {
            first = 0;
            last = px_srv_nspace(s, procs[i].nspace)->job_size - 1;
        }
        for (uint32_t r = first; r <= last; r++) {
            pmix_proc_t p;
            memset(&p, 0, sizeof(p));
            memcpy(p.nspace, procs[i].nspace, PMIX_MAX_NSLEN);
            p.rank = r;
            if (!procs_have(v, m, &p))
                v[m++] = p;
        }
    }
    *out = v;
    *nout = m;
    return PMIX_SUCCESS;
}

/* ---- the groups this server knows ---- */

static px_sgroup *find_group(px_server *s, const char *name)
{
    for (px_sgroup *g = s->sgroups; g != NULL; g = g->next)
        if (strncmp(g->name, name, PMIX_MAX_NSLEN) == 0)
            return g;
    return NULL;
}

static void drop_group(px_server *s, px_sgroup *g)
{
    for (px_sgroup **pp = &s->sgroups; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
    free(g->members);
    free(g);
}

/* Remember the group `t` made, of `members`, but those that left it
 * already (t->left). */
static void keep_group(px_server *s, const px_gtrk *t, const pmix_proc_t *members, size_t n,
                       bool has_ctxid, uint64_t ctxid)
{
    px_sgroup *g = find_group(s, t->name);
    size_t k = 0;

    if (g != NULL)
        drop_group(s, g);
    if ((g = calloc(1, sizeof(*g))) == NULL ||
        (g->members = malloc((n ? n : 1) * sizeof(*members))) == NULL) {
        free(g); /* then destruct and leave find no group: they say so */
        px_srv_logf(s, PX_LOG_ERROR, "group %s: no memory to remember it", t->name);
        return;
    }
    memcpy(g->name, t->name, sizeof(g->name));
    for (size_t i = 0; i < n; i++)
        if (!procs_have(t->left, t->nleft, &members[i]))
            g->members[k++] = members[i];
    g->nmembers = k;
    g->has_ctxid = has_ctxid;
    g->ctxid = ctxid;
    g->notify_termination = t->notify_termination;
    g->next = s->sgroups;
    s->sgroups = g;
}

/* ---- trackers ---- */

static void unlink_trk(px_server *s, px_gtrk *t)
{
    for (px_gtrk **pp = &s->gtrks; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            return;
        }
    }
}

static void free_trk(px_server *s, px_gtrk *t)
{
    if (t->timer != NULL)
        s->pops->timer_cancel(s->pctx, t->timer);
    px_buf_fini(&t->ginfo);
    free(t->procs);
    free(t->slots);
    free(t->answered);
    free(t->accepted);
    free(t->left);
    free(t);
}

static void finish_trk(px_server *s, px_gtrk *t)
{
    unlink_trk(s, t);
    free_trk(s, t);
}

static px_gtrk *find_trk(px_server *s, const char *name)
{
    for (px_gtrk *t = s->gtrks; t != NULL; t = t->next)
        if (t->state != PX_TRK_ABANDONED && strncmp(t->name, name, PMIX_MAX_NSLEN) == 0)
            return t;
    return NULL;
}

static px_gslot *slot_of(px_gtrk *t, const px_sclient *c)
{
    for (size_t i = 0; i < t->nslots; i++)
        if (t->slots[i].client == c)
            return &t->slots[i];
    return NULL;
}

static const char *op_name(const px_gtrk *t)
{
    return t->op == PMIX_GROUP_DESTRUCT ? "destruct" : t->invite ? "invitation" : "construct";
}

static void gtrk_timeout(void *arg);
static void send_outcome(px_server *s, px_gtrk *t, pmix_status_t status, const pmix_proc_t *m,
                         size_t n);
static bool settle_invite(px_server *s, px_gtrk *t);
static void event_to_proc(px_server *s, const pmix_proc_t *to, pmix_status_t status,
                          const pmix_proc_t *about, const char *grp);

/* A tracker for `procs` (taken over): it waits for the members that are
 * live clients here, and is all local if every member is a client here. */
static px_gtrk *new_trk(px_server *s, pmix_group_operation_t op, const char *name,
                        pmix_proc_t *procs, size_t n)
{
    px_gtrk *t = calloc(1, sizeof(*t));
    size_t nlocal = 0, nhere = 0;

    if (t == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (local_alive(s, &procs[i]))
            nlocal++;
        if (px_srv_client(s, &procs[i]) != NULL)
            nhere++; /* alive or not: no other node answers for it */
    }
    t->slots = calloc(nlocal ? nlocal : 1, sizeof(*t->slots));
    if (t->slots == NULL) {
        free(t);
        return NULL;
    }
    t->srv = s;
    t->op = op;
    memcpy(t->name, name, strnlen(name, PMIX_MAX_NSLEN));
    t->procs = procs;
    t->nprocs = n;
    t->nexpected = nlocal;
    t->all_local = nhere == n;
    t->state = PX_TRK_GATHERING;
    t->id = s->next_fence_id++;
    t->next = s->gtrks;
    s->gtrks = t;
    return t;
}

/* Merge a caller's directives into the tracker: flags are or-ed, the
 * shortest timeout wins and starts the timer. */
static void merge_dirs(px_server *s, px_gtrk *t, const gdirs *d, const px_sclient *c)
{
    t->assign_ctxid |= d->assign_ctxid;
    t->optional |= d->optional;
    t->notify_termination |= d->notify_termination;
    if (d->leader && !t->has_leader) {
        t->has_leader = true;
        t->leader = c->proc;
    }
    if (d->timeout > 0 && (t->timeout == 0 || d->timeout < t->timeout)) {
        t->timeout = d->timeout;
        if (t->timer != NULL)
            s->pops->timer_cancel(s->pctx, t->timer);
        t->timer = s->pops->timer_start(s->pctx, d->timeout, gtrk_timeout, t);
    }
}

/* ---- replies ---- */

static void reply_error(px_server *s, px_sclient *c, uint32_t tag, pmix_status_t rc)
{
    px_srv_reply_status(s, c, PX_MSG_GROUP_DONE, tag, rc);
}

/* Fail every local member waiting on `t` (and an inviter that is not
 * one). */
static void reply_all_error(px_server *s, px_gtrk *t, pmix_status_t rc)
{
    for (size_t i = 0; i < t->nslots; i++)
        if (t->slots[i].client != NULL)
            reply_error(s, t->slots[i].client, t->slots[i].tag, rc);
    t->nslots = 0;
    if (t->inviter != NULL)
        reply_error(s, t->inviter, t->inviter_tag, rc);
    t->inviter = NULL;
}

/* Tell the members the operation is done: `members` is the group,
 * `groups` the other nodes' data (a construct's). */
static void reply_done(px_server *s, px_gtrk *t, bool has_ctxid, uint64_t ctxid,
                       const pmix_proc_t *members, size_t nmembers, const void *groups,
                       size_t ngroups, const void *ginfo, size_t nginfo)
{
    px_buf recs;

    px_buf_init(&recs);
    if (t->op == PMIX_GROUP_CONSTRUCT)
        for (size_t i = 0; i < t->nslots; i++)
            if (t->slots[i].client != NULL)
                px_store_pack_record(s->store, &t->slots[i].client->proc, true, &recs);
    if (px_buf_status(&recs) != PMIX_SUCCESS) {
        reply_all_error(s, t, px_buf_status(&recs));
        px_buf_fini(&recs);
        return;
    }
    for (size_t i = 0; i < t->nslots; i++) {
        px_sclient *c = t->slots[i].client;
        pmix_status_t st = PMIX_SUCCESS;
        px_buf b;

        if (c == NULL)
            continue;
        /* those who asked for the whole group hear it is not whole */
        if (t->partial && !t->slots[i].joiner)
            st = PMIX_ERR_PARTIAL_SUCCESS;
        px_buf_init_frame(&b, PX_MSG_GROUP_DONE, t->slots[i].tag);
        px_pack_i32(&b, st);
        px_pack_u8(&b, has_ctxid);
        px_pack_u64(&b, has_ctxid ? ctxid : 0);
        px_pack_procs(&b, members, nmembers);
        px_pack_bytes(&b, groups, ngroups);
        px_pack_bytes(&b, recs.data, recs.size);
        px_pack_bytes(&b, ginfo, nginfo);
        px_srv_send(s, c, &b);
    }
    px_buf_fini(&recs);
    if (t->inviter != NULL) {
        /* the outcome, without the data: the inviter is not a member */
        px_buf b;
        px_buf_init_frame(&b, PX_MSG_GROUP_DONE, t->inviter_tag);
        px_pack_i32(&b, t->partial ? PMIX_ERR_PARTIAL_SUCCESS : PMIX_SUCCESS);
        px_pack_u8(&b, has_ctxid);
        px_pack_u64(&b, has_ctxid ? ctxid : 0);
        px_pack_procs(&b, members, nmembers);
        px_pack_bytes(&b, NULL, 0);
        px_pack_bytes(&b, NULL, 0);
        px_pack_bytes(&b, NULL, 0);
        px_srv_send(s, t->inviter, &b);
        t->inviter = NULL;
    }
}

/* An invitation's group is complete: its members, the leader too, hear
 * PMIX_GROUP_CONSTRUCT_COMPLETE from the leader, with the group's name,
 * its membership and context id (programs written for OpenPMIx wait for
 * this event rather than for their join's callback). */
static void announce(px_server *s, px_gtrk *t, bool has_ctxid, uint64_t ctxid,
                     const pmix_proc_t *members, size_t nmembers)
{
    pmix_data_array_t da = {.type = PMIX_PROC, .size = nmembers, .array = (void *)members};
    size_t id = (size_t)ctxid, n = 2;
    pmix_info_t info[3];

    memset(info, 0, sizeof(info));
    PMIx_Info_load(&info[0], PMIX_GROUP_ID, t->name, PMIX_STRING);
    PMIx_Info_load(&info[1], PMIX_GROUP_MEMBERSHIP, &da, PMIX_DATA_ARRAY);
    if (has_ctxid)
        PMIx_Info_load(&info[n++], PMIX_GROUP_CONTEXT_ID, &id, PMIX_SIZE);
    for (size_t i = 0; i < t->nslots; i++)
        if (t->slots[i].client != NULL)
            px_srv_event_to(s, t->slots[i].client, PMIX_GROUP_CONSTRUCT_COMPLETE, &t->leader,
                            PMIX_RANGE_CUSTOM, info, n);
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&info[i]);
}

/* The operation succeeded with `members` (and, for a construct, the other
 * nodes' data): remember or forget the group, answer everyone (the
 * replies go out before an invitation's PMIX_GROUP_CONSTRUCT_COMPLETE, so
 * that a member's handler finds the group known), free. */
static void succeed(px_server *s, px_gtrk *t, bool has_ctxid, uint64_t ctxid,
                    const pmix_proc_t *members, size_t nmembers, const void *groups, size_t ngroups,
                    const void *ginfo, size_t nginfo)
{
    px_sgroup *g = find_group(s, t->name);

    if (t->op == PMIX_GROUP_CONSTRUCT && t->nslots > 0)
        keep_group(s, t, members, nmembers, has_ctxid, ctxid);
    else if (t->op == PMIX_GROUP_DESTRUCT && g != NULL)
        drop_group(s, g);
    reply_done(s, t, has_ctxid, ctxid, members, nmembers, groups, ngroups, ginfo, nginfo);
    if (t->op == PMIX_GROUP_CONSTRUCT && t->invite)
        announce(s, t, has_ctxid, ctxid, members, nmembers);
    finish_trk(s, t);
}

/* The local members that are in, in group-rank order. */
static pmix_proc_t *local_members(px_gtrk *t, size_t *n)
{
    pmix_proc_t *v = calloc(t->nslots ? t->nslots : 1, sizeof(*v));

    *n = 0;
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < t->nprocs; i++)
        for (size_t k = 0; k < t->nslots; k++)
            if (t->slots[k].client != NULL && proc_eq(&t->slots[k].client->proc, &t->procs[i]))
                v[(*n)++] = t->procs[i];
    return v;
}

/* ---- the host ---- */

static pmix_status_t (*group_upcall(const px_server *s))(void *, const px_group_req *,
                                                         px_group_cbfunc_t, void *)
{
    return s->hops->version >= 2 ? s->hops->group : NULL;
}

/* Parse the host's chunks: the members that are in (a subset of t->procs,
 * in group-rank order), every node's groups and every node's group
 * information, each concatenated. */
static pmix_status_t read_chunks(const px_gtrk *t, const char *data, size_t ndata,
                                 pmix_proc_t **members, size_t *nmembers, px_buf *groups,
                                 px_buf *ginfo)
{
    bool *in = calloc(t->nprocs ? t->nprocs : 1, sizeof(*in));
    pmix_status_t rc = PMIX_SUCCESS;
    px_buf b;

    *members = NULL;
    *nmembers = 0;
    if (in == NULL)
        return PMIX_ERR_NOMEM;
    px_buf_view(&b, data, ndata);
    while (rc == PMIX_SUCCESS && px_buf_left(&b) > 0) {
        uint32_t magic;
        pmix_proc_t *p = NULL;
        size_t np = 0;
        const void *g, *gi;
        size_t ng, ngi;

        if (px_unpack_u32(&b, &magic) != PMIX_SUCCESS || magic != CHUNK_MAGIC ||
            px_unpack_procs(&b, &p, &np) != PMIX_SUCCESS) {
            rc = PMIX_ERR_UNPACK_FAILURE;
            break;
        }
        if (px_unpack_bytes_view(&b, &g, &ng) != PMIX_SUCCESS ||
            px_store_check_groups(g, ng, NULL) != PMIX_SUCCESS ||
            px_unpack_bytes_view(&b, &gi, &ngi) != PMIX_SUCCESS)
            rc = PMIX_ERR_UNPACK_FAILURE;
        for (size_t i = 0; i < np && rc == PMIX_SUCCESS; i++) {
            size_t k = 0;
            while (k < t->nprocs && !proc_eq(&t->procs[k], &p[i]))
                k++;
            if (k == t->nprocs)
                rc = PMIX_ERR_UNPACK_FAILURE; /* not a member */
            else
                in[k] = true;
        }
        free(p);
        if (rc == PMIX_SUCCESS) {
            px_pack_raw(groups, g, ng);
            px_pack_raw(ginfo, gi, ngi);
        }
    }
    if (rc == PMIX_SUCCESS && (rc = px_buf_status(groups)) == PMIX_SUCCESS &&
        (rc = px_buf_status(ginfo)) == PMIX_SUCCESS) {
        *members = calloc(t->nprocs, sizeof(**members));
        if (*members == NULL)
            rc = PMIX_ERR_NOMEM;
        for (size_t k = 0; k < t->nprocs && rc == PMIX_SUCCESS; k++)
            if (in[k])
                (*members)[(*nmembers)++] = t->procs[k];
    }
    free(in);
    return rc;
}

static void host_done_locked(px_gtrk *t, pmix_status_t status, bool has_ctxid, uint64_t ctxid,
                             const char *data, size_t ndata)
{
    px_server *s = t->srv;
    pmix_proc_t *members = NULL;
    size_t nmembers = 0;
    px_buf groups, ginfo;

    if (t->state != PX_TRK_HOST) {
        finish_trk(s, t); /* failed here meanwhile: its members have their answer */
        return;
    }
    px_buf_init(&groups);
    px_buf_init(&ginfo);
    if (status == PMIX_SUCCESS && t->op == PMIX_GROUP_CONSTRUCT) {
        status = read_chunks(t, data, ndata, &members, &nmembers, &groups, &ginfo);
        if (status != PMIX_SUCCESS)
            px_srv_logf(s, PX_LOG_ERROR,
                        "group %s: the host returned malformed group data (%zu bytes)", t->name,
                        ndata);
        else if (nmembers < t->nprocs)
            t->partial = true;
        if (status == PMIX_SUCCESS && nmembers == 0)
            status = PMIX_ERR_UNPACK_FAILURE;
    }
    if (status == PMIX_SUCCESS && t->op == PMIX_GROUP_CONSTRUCT)
        succeed(s, t, has_ctxid, ctxid, members, nmembers, groups.data, groups.size, ginfo.data,
                ginfo.size);
    else if (status == PMIX_SUCCESS)
        succeed(s, t, false, 0, NULL, 0, NULL, 0, NULL, 0);
    else {
        reply_all_error(s, t, status);
        finish_trk(s, t);
    }
    free(members);
    px_buf_fini(&groups);
    px_buf_fini(&ginfo);
}

/* Hosts may call this from any thread: take the engine lock. */
static void host_done(pmix_status_t status, bool has_ctxid, uint64_t ctxid, const char *data,
                      size_t ndata, void *cbdata, pmix_release_cbfunc_t release_fn,
                      void *release_cbdata)
{
    px_gtrk *t = cbdata;
    px_server *s = t->srv;

    s->pops->lock(s->pctx);
    host_done_locked(t, status, has_ctxid, ctxid, data, ndata);
    s->pops->unlock(s->pctx);
    if (release_fn != NULL)
        release_fn(release_cbdata);
}

/* Hand `t` to the host; with local_status set, as the node's notice of
 * failure. Returns the upcall's status: on PMIX_SUCCESS the tracker is the
 * host's until host_done (HOST, or ABANDONED for a notice). */
static pmix_status_t upcall(px_server *s, px_gtrk *t, pmix_status_t local_status)
{
    pmix_status_t (*fn)(void *, const px_group_req *, px_group_cbfunc_t, void *) = group_upcall(s);
    px_group_req req;
    pmix_proc_t *in = NULL;
    size_t nin = 0;
    px_buf b;
    pmix_status_t rc;

    if (fn == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    memset(&req, 0, sizeof(req));
    req.op = t->op;
    req.grp = t->name;
    req.procs = t->procs;
    req.nprocs = t->nprocs;
    req.assign_ctxid = t->assign_ctxid;
    req.optional = t->optional;
    req.notify_termination = t->notify_termination;
    req.has_leader = t->has_leader;
    req.leader = t->leader;
    req.timeout = t->timeout;
    req.local_status = local_status;
    px_buf_init(&b);
    if (local_status == PMIX_SUCCESS && t->op == PMIX_GROUP_CONSTRUCT) {
        const pmix_proc_t **pp;
        if ((in = local_members(t, &nin)) == NULL ||
            (pp = malloc((nin ? nin : 1) * sizeof(*pp))) == NULL) {
            free(in);
            px_buf_fini(&b);
            return PMIX_ERR_NOMEM;
        }
        for (size_t i = 0; i < nin; i++)
            pp[i] = &in[i];
        px_pack_u32(&b, CHUNK_MAGIC);
        px_pack_procs(&b, in, nin);
        {
            px_buf g;
            px_buf_init(&g);
            px_store_pack_groups(s->store, pp, nin, false, &g);
            if (px_buf_status(&g) != PMIX_SUCCESS)
                b.err = px_buf_status(&g);
            px_pack_bytes(&b, g.data, g.size);
            px_buf_fini(&g);
        }
        if (px_buf_status(&t->ginfo) != PMIX_SUCCESS)
            b.err = px_buf_status(&t->ginfo);
        px_pack_bytes(&b, t->ginfo.data, t->ginfo.size);
        free(pp);
        free(in);
        if ((rc = px_buf_status(&b)) != PMIX_SUCCESS) {
            px_buf_fini(&b);
            return rc;
        }
        req.data = (const char *)b.data;
        req.ndata = b.size;
    }
    t->state = local_status == PMIX_SUCCESS ? PX_TRK_HOST : PX_TRK_ABANDONED;
    rc = fn(s->hctx, &req, host_done, t);
    px_buf_fini(&b);
    if (rc != PMIX_SUCCESS)
        t->state = PX_TRK_GATHERING;
    return rc;
}

/* Fail `t` on every local member with `why` and, if the host may hold
 * the other nodes' part, tell it. */
static void fail_trk(px_server *s, px_gtrk *t, pmix_status_t why)
{
    px_srv_logf(s, PX_LOG_INFO, "group %s: %s #%llu fails: %s", t->name, op_name(t),
                (unsigned long long)t->id, PMIx_Error_string(why));
    if (t->has_remote)
        send_outcome(s, t, why, NULL, 0); /* the invited of other nodes hear it too */
    reply_all_error(s, t, why);
    if (t->timer != NULL) {
        s->pops->timer_cancel(s->pctx, t->timer);
        t->timer = NULL;
    }
    if (t->state == PX_TRK_HOST) {
        t->state = PX_TRK_ABANDONED; /* host_done frees it */
        return;
    }
    if (t->state == PX_TRK_GATHERING && !t->all_local && !t->awaiting_go &&
        upcall(s, t, why) == PMIX_SUCCESS)
        return; /* ABANDONED until host_done */
    finish_trk(s, t);
}

/* Every local member is in (or out): complete here or hand it to the host. */
static void all_joined(px_server *s, px_gtrk *t)
{
    pmix_status_t rc;

    if (t->has_remote && settle_invite(s, t))
        return; /* done: nobody here is a member */
    if (t->nslots == 0 && t->all_local) {
        fail_trk(s, t, t->invite ? PMIX_GROUP_INVITE_FAILED : PMIX_GROUP_MEMBER_FAILED);
        return;
    }
    if (t->all_local && !t->assign_ctxid) {
        size_t n;
        pmix_proc_t *m = t->op == PMIX_GROUP_CONSTRUCT ? local_members(t, &n) : NULL;
        if (t->op == PMIX_GROUP_CONSTRUCT && m == NULL) {
            fail_trk(s, t, PMIX_ERR_NOMEM);
            return;
        }
        if (t->op == PMIX_GROUP_CONSTRUCT && n < t->nprocs)
            t->partial = true;
        if (px_buf_status(&t->ginfo) != PMIX_SUCCESS) {
            free(m);
            fail_trk(s, t, px_buf_status(&t->ginfo));
            return;
        }
        succeed(s, t, false, 0, m, t->op == PMIX_GROUP_CONSTRUCT ? n : 0, NULL, 0, t->ginfo.data,
                t->ginfo.size);
        free(m);
        return;
    }
    rc = upcall(s, t, PMIX_SUCCESS);
    if (rc == PMIX_SUCCESS)
        return;
    px_srv_logf(s, PX_LOG_ERROR, "group %s: the host's group upcall failed: %s", t->name,
                PMIx_Error_string(rc));
    fail_trk(s, t, rc);
}

static void check_joined(px_server *s, px_gtrk *t)
{
    if (t->state == PX_TRK_GATHERING && !t->awaiting_go && t->nremote == 0 &&
        t->nslots >= t->nexpected)
        all_joined(s, t);
}

static void gtrk_timeout(void *arg)
{
    px_gtrk *t = arg;
    px_server *s = t->srv;
    bool someone = t->nslots > 0; /* a member came: on with it */

    t->timer = NULL;
    px_srv_logf(s, PX_LOG_INFO,
                "group %s: %s #%llu timed out after %.3g s with %zu of %zu local"
                " members",
                t->name, op_name(t), (unsigned long long)t->id, t->timeout, t->nslots,
                t->nexpected);
    for (size_t i = 0; !someone && t->has_remote && i < t->nprocs; i++)
        someone = t->accepted[i]; /* a remote accept */
    if (t->state == PX_TRK_GATHERING && (t->optional || t->invite) && !t->awaiting_go && someone) {
        /* the leader hears of every invited process that never answered */
        for (size_t i = 0; t->invite && t->answered != NULL && i < t->nprocs; i++)
            if (!t->answered[i])
                event_to_proc(s, &t->leader, PMIX_GROUP_INVITE_FAILED, &t->procs[i], t->name);
        t->partial = true; /* on with those who came */
        t->nexpected = t->nslots;
        t->nremote = 0;
        all_joined(s, t);
        return;
    }
    fail_trk(s, t, PMIX_ERR_TIMEOUT);
}

static void add_slot(px_gtrk *t, px_sclient *c, uint32_t tag, bool joiner)
{
    t->slots[t->nslots].client = c;
    t->slots[t->nslots].tag = tag;
    t->slots[t->nslots].joiner = joiner;
    t->nslots++;
}

/* An invited process answered (or died): no INVITE_FAILED for it at the
 * timeout. */
static void mark_answered(px_gtrk *t, const pmix_proc_t *p)
{
    for (size_t i = 0; t->answered != NULL && i < t->nprocs; i++)
        if (proc_eq(&t->procs[i], p))
            t->answered[i] = true;
}

/* Tell `to` (a proc, if it is a client here) of `status` about `about`. */
static void event_to_proc(px_server *s, const pmix_proc_t *to, pmix_status_t status,
                          const pmix_proc_t *about, const char *grp)
{
    px_sclient *c = px_srv_client(s, to);
    pmix_info_t info[2];

    if (c == NULL)
        return;
    PMIx_Info_construct(&info[0]);
    PMIx_Info_construct(&info[1]);
    PMIx_Info_load(&info[0], PMIX_GROUP_ID, grp, PMIX_STRING);
    PMIx_Info_load(&info[1], PMIX_EVENT_AFFECTED_PROC, about, PMIX_PROC);
    px_srv_event_to(s, c, status, about, PMIX_RANGE_CUSTOM, info, 2);
    PMIx_Info_destruct(&info[0]);
    PMIx_Info_destruct(&info[1]);
}

/* Keep what `who` gave for the other members in its directives:
 * PMIX_GROUP_LOCAL_CID, and the entries of PMIX_GROUP_INFO but a
 * PMIX_PROCID. Nothing when it gave none; a pack failure fails the
 * tracker's buffer, and with it the construct. */
static void add_ginfo(px_gtrk *t, const pmix_proc_t *who, const pmix_info_t *info, size_t ninfo)
{
    size_t n = 0, k = 0;
    pmix_info_t *v;

    for (size_t i = 0; i < ninfo; i++) {
        const pmix_data_array_t *da = info[i].value.data.darray;
        if (PMIx_Check_key(info[i].key, PMIX_GROUP_LOCAL_CID))
            n++;
        else if (PMIx_Check_key(info[i].key, PMIX_GROUP_INFO) &&
                 info[i].value.type == PMIX_DATA_ARRAY && da != NULL && da->type == PMIX_INFO)
            n += da->size;
    }
    if (n == 0)
        return;
    if ((v = calloc(n, sizeof(*v))) == NULL) {
        t->ginfo.err = PMIX_ERR_NOMEM;
        return;
    }
    /* shallow copies: packed, then the array alone is freed */
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_data_array_t *da = info[i].value.data.darray;
        if (PMIx_Check_key(info[i].key, PMIX_GROUP_LOCAL_CID)) {
            v[k++] = info[i];
        } else if (PMIx_Check_key(info[i].key, PMIX_GROUP_INFO) &&
                   info[i].value.type == PMIX_DATA_ARRAY && da != NULL && da->type == PMIX_INFO) {
            const pmix_info_t *e = da->array;
            for (size_t j = 0; j < da->size; j++)
                if (!PMIx_Check_key(e[j].key, PMIX_PROCID))
                    v[k++] = e[j];
        }
    }
    if (k > 0) {
        px_pack_proc(&t->ginfo, who);
        px_pack_info(&t->ginfo, v, k);
    }
    free(v);
}

/* ---- invitations across nodes ----
 *
 * An invited process on another node hears PMIX_GROUP_INVITED through the
 * host (its notify_event upcall carries it to the node, whose server gets
 * it through px_server_notify), and its answer goes back the same way: a
 * PMIX_GROUP_INVITE_ACCEPTED or _DECLINED event from the process to the
 * leader, which the leader's server counts (px_srv_group_heard) before the
 * leader hears it. An accept waits on its own node in a tracker of its own
 * (awaiting_go). Once every invited process answered (or died, or the
 * invitation's PMIX_TIMEOUT passed), the leader's node sends the outcome
 * to the invited processes' nodes (PX_GROUP_INVITE_DONE: the group's
 * membership in group-rank order, the context id request and timeout, or
 * the error that ended the invitation). Every node with a member then
 * runs the group's construct as any construct of those members (the group
 * upcall, an allgather of the host core among their nodes), so that every
 * member gets the same membership, context id and data, and each node
 * keeps the group for fences, destruct and leave. PMIx_Group_leave tells
 * the other nodes' members the same way (PMIX_GROUP_LEFT), and their
 * servers drop the leaver from the group. The host answers the nodes of a
 * construct one by one, and the event takes another road than its
 * answer: a member may leave as soon as its node has the answer, and its
 * PMIX_GROUP_LEFT reach a node whose construct is still the host's. That
 * node notes the leaver on the tracker (note_left) and keeps the group
 * without it, so that every node's destruct names the same members. */

static bool remote_ok(const px_server *s)
{
    return s->hops->version >= 5 && s->hops->notify_event != NULL && group_upcall(s) != NULL;
}

/* Event `status` from `source` to the processes `to` (of other nodes)
 * through the host, with `info` (n of them) and the custom range that
 * names them. */
static void event_to_remote(px_server *s, pmix_status_t status, const pmix_proc_t *source,
                            const pmix_proc_t *to, size_t nto, const pmix_info_t *info, size_t n)
{
    pmix_data_array_t da = {.type = PMIX_PROC, .size = nto, .array = (void *)to};
    pmix_info_t *v;

    if (nto == 0 || !remote_ok(s))
        return;
    if ((v = calloc(n + 1, sizeof(*v))) == NULL) {
        px_srv_logf(s, PX_LOG_ERROR, "no memory to send %s to another node",
                    PMIx_Error_string(status));
        return;
    }
    memcpy(v, info, n * sizeof(*v)); /* shallow: only the array is freed */
    PMIx_Info_load(&v[n], PMIX_EVENT_CUSTOM_RANGE, &da, PMIX_DATA_ARRAY);
    s->hops->notify_event(s->hctx, status, source, PMIX_RANGE_CUSTOM, v, n + 1);
    PMIx_Info_destruct(&v[n]);
    free(v);
}

/* Group event `status` about `about` in `grp` from `about` to `to`
 * (processes of other nodes). */
static void group_event_remote(px_server *s, pmix_status_t status, const pmix_proc_t *about,
                               const char *grp, const pmix_proc_t *to, size_t nto)
{
    pmix_info_t ev[2];

    PMIx_Info_construct(&ev[0]);
    PMIx_Info_construct(&ev[1]);
    PMIx_Info_load(&ev[0], PMIX_GROUP_ID, grp, PMIX_STRING);
    PMIx_Info_load(&ev[1], PMIX_EVENT_AFFECTED_PROC, about, PMIX_PROC);
    event_to_remote(s, status, about, to, nto, ev, 2);
    PMIx_Info_destruct(&ev[0]);
    PMIx_Info_destruct(&ev[1]);
}

/* The leader's node: tell the invited processes of other nodes how the
 * invitation ended: PMIX_SUCCESS with the group `m` (n members), or the
 * error that ended it. Said once. */
static void send_outcome(px_server *s, px_gtrk *t, pmix_status_t status, const pmix_proc_t *m,
                         size_t n)
{
    pmix_data_array_t da = {.type = PMIX_PROC, .size = n, .array = (void *)m};
    pmix_proc_t *to = calloc(t->nprocs ? t->nprocs : 1, sizeof(*to));
    size_t nto = 0, k = 0, timeout = (size_t)t->timeout;
    pmix_info_t info[5];

    t->has_remote = false;
    if (to == NULL) {
        px_srv_logf(s, PX_LOG_ERROR, "group %s: no memory to tell the other nodes its outcome",
                    t->name);
        return;
    }
    for (size_t i = 0; i < t->nprocs; i++)
        if (px_srv_client(s, &t->procs[i]) == NULL)
            to[nto++] = t->procs[i];
    memset(info, 0, sizeof(info));
    PMIx_Info_load(&info[k++], PMIX_GROUP_ID, t->name, PMIX_STRING);
    PMIx_Info_load(&info[k++], PMIX_LOCAL_COLLECTIVE_STATUS, &status, PMIX_STATUS);
    PMIx_Info_load(&info[k++], PMIX_GROUP_ASSIGN_CONTEXT_ID, &t->assign_ctxid, PMIX_BOOL);
    PMIx_Info_load(&info[k++], PMIX_TIMEOUT, &timeout, PMIX_SIZE);
    if (n > 0)
        PMIx_Info_load(&info[k++], PMIX_GROUP_MEMBERSHIP, &da, PMIX_DATA_ARRAY);
    event_to_remote(s, PX_GROUP_INVITE_DONE, &t->leader, to, nto, info, k);
    for (size_t i = 0; i < k; i++)
        PMIx_Info_destruct(&info[i]);
    free(to);
}

/* The leader's node, every invited process answered: the group is the
 * leader if it named itself and those who accepted, in the order invited.
 * Tell the other nodes, and make the tracker that group's construct.
 * True if the tracker is done (no member here: the inviter has its
 * answer). */
static bool settle_invite(px_server *s, px_gtrk *t)
{
    pmix_proc_t *m = calloc(t->nprocs ? t->nprocs : 1, sizeof(*m));
    size_t n = 0;
    bool remote = false;

    if (m == NULL) {
        fail_trk(s, t, PMIX_ERR_NOMEM);
        return true;
    }
    for (size_t i = 0; i < t->nprocs; i++) {
        bool in = t->accepted[i];
        for (size_t k = 0; k < t->nslots && !in; k++)
            in = t->slots[k].client != NULL && proc_eq(&t->slots[k].client->proc, &t->procs[i]);
        if (in)
            m[n++] = t->procs[i];
        remote |= t->accepted[i];
    }
    send_outcome(s, t, PMIX_SUCCESS, m, n);
    if (n < t->nprocs)
        t->partial = true;
    free(t->procs);
    t->procs = m;
    t->nprocs = n;
    t->all_local = !remote;
    if (t->nslots == 0 && remote) {
        /* the inviter is no member, and no member is here: it hears who
         * is (the members' nodes build the group) */
        reply_done(s, t, false, 0, m, n, NULL, 0, NULL, 0);
        finish_trk(s, t);
        return true;
    }
    return false;
}

/* The leader's node: remote invited process `p` answered (or died:
 * `died`, which counts as a decline the leader hears as
 * PMIX_GROUP_INVITE_FAILED). */
static void remote_answer(px_server *s, px_gtrk *t, const pmix_proc_t *p, bool accept, bool died)
{
    size_t i = 0;

    while (i < t->nprocs && !proc_eq(&t->procs[i], p))
        i++;
    if (i == t->nprocs || t->answered == NULL || t->answered[i] || px_srv_client(s, p) != NULL)
        return;
    t->answered[i] = true;
    t->accepted[i] = accept;
    if (!accept)
        t->partial = true;
    if (t->nremote > 0)
        t->nremote--;
    if (died)
        event_to_proc(s, &t->leader, PMIX_GROUP_INVITE_FAILED, p, t->name);
}

/* The closed invitation (grp, leader) in the ring, or -1. */
static int closed_at(const px_server *s, const char *grp, const pmix_proc_t *leader)
{
    size_t n = s->ngclosed < PX_GCLOSED_MAX ? s->ngclosed : PX_GCLOSED_MAX;

    for (size_t i = 0; s->gclosed != NULL && i < n; i++)
        if (strncmp(s->gclosed[i].name, grp, PMIX_MAX_NSLEN) == 0 &&
            proc_eq(&s->gclosed[i].leader, leader))
            return (int)i;
    return -1;
}

static void closed_forget(px_server *s, const char *grp, const pmix_proc_t *leader)
{
    int i = closed_at(s, grp, leader);

    if (i >= 0)
        memset(&s->gclosed[i], 0, sizeof(s->gclosed[i]));
}

static void closed_note(px_server *s, const char *grp, const pmix_proc_t *leader)
{
    if (closed_at(s, grp, leader) >= 0)
        return;
    if (s->gclosed == NULL && (s->gclosed = calloc(PX_GCLOSED_MAX, sizeof(*s->gclosed))) == NULL)
        return; /* a later accept then waits for its PMIX_TIMEOUT, as before this ring */
    size_t i = s->ngclosed++ % PX_GCLOSED_MAX;
    memset(&s->gclosed[i], 0, sizeof(s->gclosed[i]));
    memcpy(s->gclosed[i].name, grp, strnlen(grp, PMIX_MAX_NSLEN));
    s->gclosed[i].leader = *leader;
}

/* An invited process's node: `c` answers the invitation to `grp` of
 * `leader`, a process of another node; `t` is the tracker of this node's
 * earlier accepts, or NULL. */
static void remote_join(px_server *s, px_sclient *c, uint32_t tag, const char *grp,
                        const pmix_proc_t *leader, bool accept, const gdirs *d,
                        const pmix_info_t *info, size_t ninfo, px_gtrk *t)
{
    if (t != NULL && (!proc_eq(leader, &t->leader) || slot_of(t, c) != NULL)) {
        reply_error(s, c, tag, PMIX_ERR_BAD_PARAM);
        return;
    }
    if (t == NULL && closed_at(s, grp, leader) >= 0) {
        reply_error(s, c, tag, PMIX_ERR_NOT_FOUND); /* it ended without this one */
        return;
    }
    if (!accept) {
        px_buf b;
        px_buf_init_frame(&b, PX_MSG_GROUP_DONE, tag); /* done: nothing to wait for */
        px_pack_i32(&b, PMIX_SUCCESS);
        px_pack_u8(&b, 0);
        px_pack_u64(&b, 0);
        px_pack_procs(&b, NULL, 0);
        px_pack_bytes(&b, NULL, 0);
        px_pack_bytes(&b, NULL, 0);
        px_pack_bytes(&b, NULL, 0);
        px_srv_send(s, c, &b);
        group_event_remote(s, PMIX_GROUP_INVITE_DECLINED, &c->proc, grp, leader, 1);
        return;
    }
    if (t == NULL) {
        pmix_proc_t *p = malloc(sizeof(*p));
        if (p != NULL)
            *p = *leader;
        if (p == NULL || (t = new_trk(s, PMIX_GROUP_CONSTRUCT, grp, p, 1)) == NULL) {
            free(p);
            reply_error(s, c, tag, PMIX_ERR_NOMEM);
            return;
        }
        t->invite = true;
        t->awaiting_go = true;
        t->has_leader = true;
        t->leader = *leader;
    }
    {
        pmix_proc_t *np = realloc(t->procs, (t->nprocs + 1) * sizeof(*np));
        px_gslot *ns = np != NULL ? realloc(t->slots, (t->nslots + 1) * sizeof(*ns)) : NULL;
        if (np != NULL)
            t->procs = np;
        if (ns != NULL)
            t->slots = ns;
        if (np == NULL || ns == NULL) {
            reply_error(s, c, tag, PMIX_ERR_NOMEM);
            if (t->nslots == 0)
                finish_trk(s, t);
            return;
        }
    }
    t->procs[t->nprocs++] = c->proc;
    gdirs dd = *d;
    dd.leader = false;
    dd.optional = false;
    merge_dirs(s, t, &dd, c);
    add_slot(t, c, tag, true);
    add_ginfo(t, &c->proc, info, ninfo);
    group_event_remote(s, PMIX_GROUP_INVITE_ACCEPTED, &c->proc, grp, leader, 1);
}

/* An invited process's node: the leader's node says how the invitation
 * ended. */
static void got_outcome(px_server *s, const pmix_proc_t *leader, const char *grp,
                        const pmix_info_t *info, size_t ninfo)
{
    const pmix_info_t *st = px_info_find(info, ninfo, PMIX_LOCAL_COLLECTIVE_STATUS);
    const pmix_info_t *mi = px_info_find(info, ninfo, PMIX_GROUP_MEMBERSHIP);
    const pmix_info_t *ti = px_info_find(info, ninfo, PMIX_TIMEOUT);
    const pmix_data_array_t *da =
        mi != NULL && mi->value.type == PMIX_DATA_ARRAY ? mi->value.data.darray : NULL;
    const pmix_proc_t *m = da != NULL && da->type == PMIX_PROC ? da->array : NULL;
    size_t n = m != NULL ? da->size : 0, nhere = 0;
    pmix_status_t status =
        st != NULL && st->value.type == PMIX_STATUS ? st->value.data.status : PMIX_ERR_BAD_PARAM;
    px_gtrk *t = find_trk(s, grp);
    pmix_proc_t *procs;
    gdirs d;

    if (t == NULL || !t->awaiting_go || !proc_eq(&t->leader, leader)) {
        closed_note(s, grp, leader); /* nobody here accepted: a late accept is refused */
        return;
    }
    t->awaiting_go = false;
    if (status == PMIX_SUCCESS && (n == 0 || (procs = malloc(n * sizeof(*procs))) == NULL))
        status = n == 0 ? PMIX_ERR_NOT_FOUND : PMIX_ERR_NOMEM; /* none: nobody got in */
    if (status != PMIX_SUCCESS) {
        t->all_local = true; /* never the host's: nothing to tell it */
        fail_trk(s, t, status);
        return;
    }
    /* accepts that came after the leader's node settled are not in */
    for (size_t k = t->nslots; k-- > 0;) {
        px_gslot *sl = &t->slots[k];
        if (sl->client != NULL && procs_have(m, n, &sl->client->proc))
            continue;
        if (sl->client != NULL)
            reply_error(s, sl->client, sl->tag, PMIX_ERR_NOT_FOUND);
        *sl = t->slots[--t->nslots];
    }
    memcpy(procs, m, n * sizeof(*procs));
    free(t->procs);
    t->procs = procs;
    t->nprocs = n;
    t->nexpected = 0;
    for (size_t i = 0; i < n; i++) {
        if (local_alive(s, &procs[i]))
            t->nexpected++;
        if (px_srv_client(s, &procs[i]) != NULL)
            nhere++;
    }
    t->all_local = nhere == n;
    read_dirs(info, ninfo, &d);
    d.timeout = ti != NULL && ti->value.type == PMIX_SIZE ? (double)ti->value.data.size : 0;
    d.leader = d.optional = false;
    t->assign_ctxid |= d.assign_ctxid;
    if (d.timeout > 0 && (t->timeout == 0 || d.timeout < t->timeout)) {
        t->timeout = d.timeout;
        if (t->timer != NULL)
            s->pops->timer_cancel(s->pctx, t->timer);
        t->timer = s->pops->timer_start(s->pctx, d.timeout, gtrk_timeout, t);
    }
    if (t->nslots == 0) {
        finish_trk(s, t); /* every accept here came too late */
        return;
    }
    check_joined(s, t);
}

/* `leaver` left the group `t` (a construct the host holds) makes. */
static void note_left(px_server *s, px_gtrk *t, const pmix_proc_t *leaver)
{
    pmix_proc_t *v;

    if (procs_have(t->left, t->nleft, leaver))
        return;
    if ((v = realloc(t->left, (t->nleft + 1) * sizeof(*v))) == NULL) {
        px_srv_logf(s, PX_LOG_ERROR, "group %s: no memory to note that %s:%u left it", t->name,
                    leaver->nspace, leaver->rank);
        return;
    }
    v[t->nleft++] = *leaver;
    t->left = v;
}

/* A member of `g` left: tell its members of other nodes. */
static void tell_left(px_server *s, const px_sgroup *g, const pmix_proc_t *leaver)
{
    pmix_proc_t *to = calloc(g->nmembers ? g->nmembers : 1, sizeof(*to));
    size_t n = 0;

    if (to == NULL)
        return;
    for (size_t i = 0; i < g->nmembers; i++)
        if (px_srv_client(s, &g->members[i]) == NULL)
            to[n++] = g->members[i];
    group_event_remote(s, PMIX_GROUP_LEFT, leaver, g->name, to, n);
    free(to);
}

bool px_srv_group_heard(px_server *s, pmix_status_t status, const pmix_proc_t *source,
                        const pmix_info_t *info, size_t ninfo)
{
    const pmix_info_t *gi = px_info_find(info, ninfo, PMIX_GROUP_ID);
    const char *grp = gi != NULL && gi->value.type == PMIX_STRING ? gi->value.data.string : NULL;
    px_gtrk *t;
    px_sgroup *g;

    if (status != PX_GROUP_INVITE_DONE && status != PMIX_GROUP_INVITE_ACCEPTED &&
        status != PMIX_GROUP_INVITE_DECLINED && status != PMIX_GROUP_LEFT &&
        status != PMIX_GROUP_INVITED)
        return false;
    if (grp == NULL || source == NULL)
        return status == PX_GROUP_INVITE_DONE;
    switch (status) {
    case PMIX_GROUP_INVITED:
        closed_forget(s, grp, source); /* a new invitation of that name */
        return false;
    case PX_GROUP_INVITE_DONE: got_outcome(s, source, grp, info, ninfo); return true;
    case PMIX_GROUP_LEFT:
        if ((g = find_group(s, grp)) != NULL && procs_have(g->members, g->nmembers, source)) {
            size_t k = 0;
            for (size_t i = 0; i < g->nmembers; i++)
                if (!proc_eq(&g->members[i], source))
                    g->members[k++] = g->members[i];
            g->nmembers = k;
        } else if (g == NULL && (t = find_trk(s, grp)) != NULL && t->op == PMIX_GROUP_CONSTRUCT &&
                   t->state == PX_TRK_HOST && procs_have(t->procs, t->nprocs, source)) {
            /* The leaver's node had the host's answer before this one
             * did: the group is made, this node just does not know it
             * yet. Its members would destruct it with the leaver, the
             * others without, and the two never meet: the group kept
             * here is made without the leaver. */
            note_left(s, t, source);
        }
        return false; /* the members here hear it */
    default:
        t = find_trk(s, grp);
        if (t != NULL && t->invite && t->accepted != NULL && t->state == PX_TRK_GATHERING &&
            px_srv_client(s, &t->leader) != NULL) {
            remote_answer(s, t, source, status == PMIX_GROUP_INVITE_ACCEPTED, false);
            check_joined(s, t);
        }
        return false; /* the leader hears it */
    }
}

/* ---- the operations ---- */

static void do_construct(px_server *s, px_sclient *c, uint32_t tag, const char *grp,
                         pmix_proc_t *procs, size_t n, const gdirs *d, const pmix_info_t *info,
                         size_t ninfo)
{
    px_gtrk *t = find_trk(s, grp);
    pmix_status_t rc = PMIX_SUCCESS;

    if (!procs_have(procs, n, &c->proc))
        rc = PMIX_ERR_BAD_PARAM; /* a caller must be a member */
    else if (find_group(s, grp) != NULL)
        rc = PMIX_ERR_EXISTS;
    else if (t != NULL && (t->op != PMIX_GROUP_CONSTRUCT || t->invite ||
                           t->state != PX_TRK_GATHERING || slot_of(t, c) != NULL))
        rc = PMIX_ERR_EXISTS; /* another operation of that name is under way */
    else if (t != NULL && !same_members(t->procs, t->nprocs, procs, n))
        rc = PMIX_ERR_BAD_PARAM; /* members must agree on who they are */
    for (size_t i = 0; i < n && rc == PMIX_SUCCESS && t == NULL; i++)
        if (gone(s, &procs[i]) && !d->optional)
            rc = PMIX_GROUP_MEMBER_FAILED;
    if (rc == PMIX_SUCCESS && t == NULL) {
        if ((t = new_trk(s, PMIX_GROUP_CONSTRUCT, grp, procs, n)) == NULL) {
            rc = PMIX_ERR_NOMEM;
        } else {
            procs = NULL; /* the tracker's now */
            for (size_t i = 0; i < t->nprocs; i++)
                if (gone(s, &t->procs[i]))
                    t->partial = true; /* optional: on without it */
        }
    }
    free(procs);
    if (rc != PMIX_SUCCESS) {
        reply_error(s, c, tag, rc);
        return;
    }
    merge_dirs(s, t, d, c);
    add_slot(t, c, tag, false);
    add_ginfo(t, &c->proc, info, ninfo);
    check_joined(s, t);
}

static void do_destruct(px_server *s, px_sclient *c, uint32_t tag, const char *grp, const gdirs *d)
{
    px_sgroup *g = find_group(s, grp);
    px_gtrk *t = find_trk(s, grp);
    pmix_status_t rc = PMIX_SUCCESS;
    pmix_proc_t *procs;

    if (g == NULL)
        rc = PMIX_ERR_NOT_FOUND;
    else if (!procs_have(g->members, g->nmembers, &c->proc))
        rc = PMIX_ERR_BAD_PARAM;
    else if (t != NULL && (t->op != PMIX_GROUP_DESTRUCT || t->state != PX_TRK_GATHERING ||
                           slot_of(t, c) != NULL))
        rc = PMIX_ERR_EXISTS;
    if (rc == PMIX_SUCCESS && t == NULL) {
        for (size_t i = 0; i < g->nmembers && rc == PMIX_SUCCESS; i++)
            if (gone(s, &g->members[i]) && !g->notify_termination)
                rc = PMIX_GROUP_MEMBER_FAILED;
        if (rc == PMIX_SUCCESS && (procs = malloc(g->nmembers * sizeof(*procs))) == NULL)
            rc = PMIX_ERR_NOMEM;
        if (rc == PMIX_SUCCESS) {
            memcpy(procs, g->members, g->nmembers * sizeof(*procs));
            if ((t = new_trk(s, PMIX_GROUP_DESTRUCT, grp, procs, g->nmembers)) == NULL) {
                free(procs);
                rc = PMIX_ERR_NOMEM;
            } else {
                /* with notification, members that died are not waited for */
                t->optional = g->notify_termination;
                t->notify_termination = g->notify_termination;
            }
        }
    }
    if (rc != PMIX_SUCCESS) {
        reply_error(s, c, tag, rc);
        return;
    }
    gdirs dd = *d;
    dd.assign_ctxid = false;
    dd.optional = false;
    merge_dirs(s, t, &dd, c);
    add_slot(t, c, tag, false);
    check_joined(s, t);
}

static void do_invite(px_server *s, px_sclient *c, uint32_t tag, const char *grp,
                      pmix_proc_t *procs, size_t n, const gdirs *d, const pmix_info_t *info,
                      size_t ninfo)
{
    pmix_status_t rc = PMIX_SUCCESS;
    bool member = procs_have(procs, n, &c->proc);
    px_gtrk *t = NULL;
    size_t nremote = 0;

    if (find_group(s, grp) != NULL || find_trk(s, grp) != NULL)
        rc = PMIX_ERR_EXISTS;
    else if (n < (member ? 2u : 1u))
        rc = PMIX_ERR_BAD_PARAM; /* nobody to invite */
    for (size_t i = 0; i < n && rc == PMIX_SUCCESS; i++) {
        if (px_srv_client(s, &procs[i]) == NULL) {
            if (!remote_ok(s))
                rc = PMIX_ERR_NOT_SUPPORTED; /* the host carries no events */
            else if (px_srv_nspace(s, procs[i].nspace) == NULL)
                rc = PMIX_ERR_BAD_PARAM; /* nobody here knows of that process */
            else if (px_srv_is_dead(s, &procs[i]))
                rc = PMIX_ERR_PROC_TERM_WO_SYNC;
            nremote++;
        } else if (!local_alive(s, &procs[i])) {
            rc = PMIX_ERR_PROC_TERM_WO_SYNC;
        }
    }
    if (rc == PMIX_SUCCESS && (t = new_trk(s, PMIX_GROUP_CONSTRUCT, grp, procs, n)) == NULL)
        rc = PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS && ((t->answered = calloc(n, sizeof(*t->answered))) == NULL ||
                               (t->accepted = calloc(n, sizeof(*t->accepted))) == NULL)) {
        finish_trk(s, t); /* frees procs */
        procs = NULL;
        rc = PMIX_ERR_NOMEM;
    }
    if (rc != PMIX_SUCCESS) {
        if (t == NULL)
            free(procs);
        reply_error(s, c, tag, rc);
        return;
    }
    t->invite = true;
    t->nremote = nremote;
    t->has_remote = nremote > 0;
    gdirs dd = *d;
    dd.leader = true;
    merge_dirs(s, t, &dd, c);
    if (member) {
        mark_answered(t, &c->proc);
        add_slot(t, c, tag, false);
        add_ginfo(t, &c->proc, info, ninfo);
    } else {
        t->inviter = c; /* answered with the outcome, not a member */
        t->inviter_tag = tag;
    }
    for (size_t i = 0; i < t->nprocs; i++) {
        pmix_info_t ev[2];
        if (proc_eq(&t->procs[i], &c->proc))
            continue;
        PMIx_Info_construct(&ev[0]);
        PMIx_Info_construct(&ev[1]);
        PMIx_Info_load(&ev[0], PMIX_GROUP_ID, grp, PMIX_STRING);
        PMIx_Info_load(&ev[1], PMIX_EVENT_AFFECTED_PROC, &t->procs[i], PMIX_PROC);
        if (px_srv_client(s, &t->procs[i]) != NULL)
            px_srv_event_to(s, px_srv_client(s, &t->procs[i]), PMIX_GROUP_INVITED, &c->proc,
                            PMIX_RANGE_CUSTOM, ev, 2);
        else
            event_to_remote(s, PMIX_GROUP_INVITED, &c->proc, &t->procs[i], 1, ev, 2);
        PMIx_Info_destruct(&ev[0]);
        PMIx_Info_destruct(&ev[1]);
    }
}

static void do_join(px_server *s, px_sclient *c, uint32_t tag, const char *grp,
                    const pmix_proc_t *leader, bool accept, const gdirs *d, const pmix_info_t *info,
                    size_t ninfo)
{
    px_gtrk *t = find_trk(s, grp);

    if ((t == NULL || t->awaiting_go) && px_srv_client(s, leader) == NULL && remote_ok(s)) {
        remote_join(s, c, tag, grp, leader, accept, d, info, ninfo, t);
        return;
    }
    if (t == NULL || !t->invite || t->state != PX_TRK_GATHERING ||
        !procs_have(t->procs, t->nprocs, &c->proc) || proc_eq(&c->proc, &t->leader) ||
        slot_of(t, c) != NULL) {
        reply_error(s, c, tag, PMIX_ERR_NOT_FOUND); /* no invitation waits for it */
        return;
    }
    if (!proc_eq(leader, &t->leader)) {
        reply_error(s, c, tag, PMIX_ERR_BAD_PARAM);
        return;
    }
    mark_answered(t, &c->proc);
    if (accept) {
        add_slot(t, c, tag, true);
        add_ginfo(t, &c->proc, info, ninfo);
        event_to_proc(s, &t->leader, PMIX_GROUP_INVITE_ACCEPTED, &c->proc, grp);
    } else {
        px_buf b;
        t->nexpected--;
        t->partial = true;
        /* the decline is done: nothing more to wait for */
        px_buf_init_frame(&b, PX_MSG_GROUP_DONE, tag);
        px_pack_i32(&b, PMIX_SUCCESS);
        px_pack_u8(&b, 0);
        px_pack_u64(&b, 0);
        px_pack_procs(&b, NULL, 0);
        px_pack_bytes(&b, NULL, 0);
        px_pack_bytes(&b, NULL, 0);
        px_pack_bytes(&b, NULL, 0);
        px_srv_send(s, c, &b);
        event_to_proc(s, &t->leader, PMIX_GROUP_INVITE_DECLINED, &c->proc, grp);
    }
    check_joined(s, t);
}

static void do_leave(px_server *s, px_sclient *c, uint32_t tag, const char *grp)
{
    px_sgroup *g = find_group(s, grp);
    size_t k = 0;

    if (g == NULL || !procs_have(g->members, g->nmembers, &c->proc)) {
        px_srv_reply_status(s, c, PX_MSG_REPLY, tag, PMIX_ERR_NOT_FOUND);
        return;
    }
    for (size_t i = 0; i < g->nmembers; i++)
        if (!proc_eq(&g->members[i], &c->proc))
            g->members[k++] = g->members[i];
    g->nmembers = k;
    px_srv_reply_status(s, c, PX_MSG_REPLY, tag, PMIX_SUCCESS);
    for (size_t i = 0; i < g->nmembers; i++)
        event_to_proc(s, &g->members[i], PMIX_GROUP_LEFT, &c->proc, grp);
    tell_left(s, g, &c->proc);
    for (k = 0; k < g->nmembers && px_srv_client(s, &g->members[k]) == NULL; k++)
        ;
    if (k == g->nmembers)
        drop_group(s, g); /* no member here any more */
}

pmix_status_t px_srv_group(px_server *s, px_sclient *c, uint32_t tag, px_buf *b)
{
    uint8_t op, accept = 0;
    char grp[PMIX_MAX_NSLEN + 1];
    char *name = NULL;
    pmix_proc_t *procs = NULL, *members = NULL, leader;
    size_t n = 0, nm = 0;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    pmix_status_t rc;
    gdirs d;

    if ((rc = px_unpack_u8(b, &op)) != PMIX_SUCCESS ||
        (rc = px_unpack_str(b, &name)) != PMIX_SUCCESS)
        return rc;
    if ((rc = px_unpack_procs(b, &procs, &n)) != PMIX_SUCCESS ||
        (rc = px_unpack_info(b, &info, &ninfo)) != PMIX_SUCCESS ||
        (op == PX_GRP_JOIN && ((rc = px_unpack_proc(b, &leader)) != PMIX_SUCCESS ||
                               (rc = px_unpack_u8(b, &accept)) != PMIX_SUCCESS)) ||
        op > PX_GRP_LEAVE) {
        free(name);
        free(procs);
        PMIx_Info_free(info, ninfo);
        return rc != PMIX_SUCCESS ? rc : PMIX_ERR_BAD_PARAM;
    }
    read_dirs(info, ninfo, &d);
    rc = PMIX_SUCCESS;
    if (name == NULL || name[0] == '\0' || strlen(name) > PMIX_MAX_NSLEN)
        rc = PMIX_ERR_BAD_PARAM;
    else
        memcpy(grp, name, strlen(name) + 1);
    free(name);
    if (rc == PMIX_SUCCESS && (op == PX_GRP_CONSTRUCT || op == PX_GRP_INVITE))
        rc = expand(s, procs, n, &members, &nm);
    free(procs);
    if (rc != PMIX_SUCCESS) {
        PMIx_Info_free(info, ninfo);
        px_srv_reply_status(s, c, op == PX_GRP_LEAVE ? PX_MSG_REPLY : PX_MSG_GROUP_DONE, tag, rc);
        return PMIX_SUCCESS;
    }
    switch (op) {
    case PX_GRP_CONSTRUCT: do_construct(s, c, tag, grp, members, nm, &d, info, ninfo); break;
    case PX_GRP_DESTRUCT: do_destruct(s, c, tag, grp, &d); break;
    case PX_GRP_INVITE: do_invite(s, c, tag, grp, members, nm, &d, info, ninfo); break;
    case PX_GRP_JOIN: do_join(s, c, tag, grp, &leader, accept != 0, &d, info, ninfo); break;
    default: do_leave(s, c, tag, grp); break;
    }
    PMIx_Info_free(info, ninfo);
    return PMIX_SUCCESS;
}

pmix_status_t px_srv_group_expand(px_server *s, pmix_proc_t **procs, size_t *n)
{
    size_t total = 0, k = 0;
    bool any = false;
    pmix_proc_t *v;

    for (size_t i = 0; i < *n; i++) {
        px_sgroup *g =
            px_srv_nspace(s, (*procs)[i].nspace) == NULL ? find_group(s, (*procs)[i].nspace) : NULL;
        if (g == NULL) {
            total++;
        } else if ((*procs)[i].rank == PMIX_RANK_WILDCARD) {
            total += g->nmembers;
            any = true;
        } else if ((*procs)[i].rank >= g->nmembers) {
            return PMIX_ERR_BAD_PARAM; /* no such group rank */
        } else {
            total++;
            any = true;
        }
    }
    if (!any)
        return PMIX_SUCCESS;
    if ((v = calloc(total ? total : 1, sizeof(*v))) == NULL)
        return PMIX_ERR_NOMEM;
    for (size_t i = 0; i < *n; i++) {
        px_sgroup *g =
            px_srv_nspace(s, (*procs)[i].nspace) == NULL ? find_group(s, (*procs)[i].nspace) : NULL;
        if (g == NULL)
            v[k++] = (*procs)[i];
        else if ((*procs)[i].rank == PMIX_RANK_WILDCARD)
            for (size_t m = 0; m < g->nmembers; m++)
                v[k++] = g->members[m];
        else
            v[k++] = g->members[(*procs)[i].rank];
    }
    free(*procs);
    *procs = v;
    *n = k;
    return PMIX_SUCCESS;
}

/* ---- deaths ---- */

/* `proc`, a member of `t`, died: go on without it, or fail. `t` may be
 * gone afterwards. */
static void member_died(px_server *s, px_gtrk *t, const pmix_proc_t *proc)
{
    px_sclient *c = px_srv_client(s, proc);
    px_gslot *sl = c != NULL ? slot_of(t, c) : NULL;
    bool local = c != NULL;

    if (t->notify_termination) {
        if (t->has_leader && !proc_eq(&t->leader, proc))
            event_to_proc(s, &t->leader, PMIX_GROUP_MEMBER_FAILED, proc, t->name);
        else if (!t->has_leader)
            for (size_t i = 0; i < t->nslots; i++)
                if (t->slots[i].client != NULL && t->slots[i].client != c)
                    event_to_proc(s, &t->slots[i].client->proc, PMIX_GROUP_MEMBER_FAILED, proc,
                                  t->name);
    }
    if (t->invite && proc_eq(proc, &t->leader)) {
        fail_trk(s, t, PMIX_GROUP_LEADER_FAILED);
        return;
    }
    if ((t->invite || t->optional) && t->state == PX_TRK_GATHERING) {
        if (!local && t->accepted != NULL && t->has_remote) {
            remote_answer(s, t, proc, false, true); /* as a decline */
            check_joined(s, t);
            return;
        }
        if (!local)
            return; /* its node's server answers for it */
        if (sl != NULL)
            *sl = t->slots[--t->nslots];
        if (t->nexpected > 0)
            t->nexpected--;
        t->partial = true;
        if (t->invite && (t->answered == NULL || sl == NULL))
            event_to_proc(s, &t->leader, PMIX_GROUP_INVITE_FAILED, proc, t->name);
        mark_answered(t, proc);
        check_joined(s, t);
        return;
    }
    if (t->optional)
        return; /* the host holds it: the other nodes decide */
    fail_trk(s, t, PMIX_GROUP_MEMBER_FAILED);
}

/* `proc` can no longer take part: tell each tracker it is a member of
 * (with `c`, its client here, only those it has not joined). */
static void lose_member(px_server *s, const pmix_proc_t *proc, const px_sclient *c)
{
    uint64_t *ids = NULL;
    size_t n = 0, cap = 0;

    /* each tracker hears of it once, though one may complete or fail
     * (and the list change) while another is told */
    for (px_gtrk *t = s->gtrks; t != NULL; t = t->next) {
        if (t->state == PX_TRK_ABANDONED || !procs_have(t->procs, t->nprocs, proc) ||
            (c != NULL && slot_of(t, c) != NULL))
            continue;
        if (n == cap) {
            uint64_t *v = realloc(ids, (cap = cap ? 2 * cap : 4) * sizeof(*ids));
            if (v == NULL)
                break; /* the rest wait for their timeout */
            ids = v;
        }
        ids[n++] = t->id;
    }
    for (size_t i = 0; i < n; i++)
        for (px_gtrk *t = s->gtrks; t != NULL; t = t->next)
            if (t->id == ids[i] && t->state != PX_TRK_ABANDONED) {
                member_died(s, t, proc);
                break;
            }
    free(ids);
}

void px_srv_group_departed(px_server *s, const px_sclient *c)
{
    px_srv_logf(s, PX_LOG_INFO, "%s:%u finalized and left: a member lost to its group operations",
                c->proc.nspace, c->proc.rank);
    lose_member(s, &c->proc, c);
}

void px_srv_group_proc_died(px_server *s, const pmix_proc_t *proc, pmix_status_t why)
{
    (void)why; /* a member's death is PMIX_GROUP_MEMBER_FAILED, however it died */
    lose_member(s, proc, NULL);
    /* groups that asked to hear of their members' deaths */
    for (px_sgroup *g = s->sgroups; g != NULL; g = g->next) {
        if (!g->notify_termination || !procs_have(g->members, g->nmembers, proc))
            continue;
        for (size_t i = 0; i < g->nmembers; i++)
            if (!proc_eq(&g->members[i], proc))
                event_to_proc(s, &g->members[i], PMIX_GROUP_MEMBER_FAILED, proc, g->name);
    }
}

void px_srv_group_client_gone(px_server *s, const px_sclient *c)
{
    for (px_gtrk *t = s->gtrks; t != NULL; t = t->next) {
        if (t->inviter == c)
            t->inviter = NULL;
        for (size_t i = 0; i < t->nslots; i++)
            if (t->slots[i].client == c)
                t->slots[i].client = NULL;
    }
}

void px_srv_group_destroy_all(px_server *s)
{
    free(s->gclosed);
    s->gclosed = NULL;
    s->ngclosed = 0;
    while (s->gtrks != NULL) {
        px_gtrk *t = s->gtrks;
        s->gtrks = t->next;
        free_trk(s, t);
    }
    while (s->sgroups != NULL)
        drop_group(s, s->sgroups);
}
