/*
 * group.c - PMIx groups in the client engine.
 *
 * Every group operation is one GROUP request to the server (px_proto.h),
 * which gathers the node's members and, when the group spans nodes or
 * needs a context id, its host (server/group.c). The reply of a construct,
 * an invitation or an accepted join brings the membership, the context id
 * if one was asked for, and the data the members committed before the
 * construct: the other nodes' records as groups and this node's records,
 * added to the store as a collecting fence's are, so that a Get of any
 * member's key is answered here. An inviter that did not name itself
 * hears the outcome and the membership, and is not a member. The client keeps the groups it is a
 * member of (px_cgroup) and answers PMIX_GROUP_MEMBERSHIP and
 * PMIX_GROUP_CONTEXT_ID of {group, PMIX_RANK_WILDCARD}, PMIX_GROUP_NAMES of
 * a member, and the group queries from them, without a message.
 *
 * The reply of a construct also brings the group information members
 * gave in their directives (PMIX_GROUP_LOCAL_CID, PMIX_GROUP_INFO's
 * entries; server/group.c): the client keeps each member's (px_cginfo)
 * with the group's context id, after the group's destruct too, and
 * answers PMIx_Get of those keys for that member, qualified by
 * PMIX_GROUP_CONTEXT_ID as OpenPMIx's programs ask, or without.
 *
 * PMIX_TIMEOUT is the server's to enforce, so that every member gets the
 * same verdict; the client's own timer, a little later, only ends a wait
 * on a server that never answers. Leave completes once the server has
 * told the node's other members (PMIX_GROUP_LEFT).
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "common/px_common.h"

/* How much later than the server's the client's own timer fires. */
#define PX_GROUP_GRACE 0.5

struct px_cgroup {
    struct px_cgroup *next;
    char name[PMIX_MAX_NSLEN + 1];
    pmix_proc_t *members;
    size_t nmembers;
    bool has_ctxid;
    uint64_t ctxid;
};

struct px_cginfo {
    struct px_cginfo *next;
    pmix_proc_t proc;
    bool has_ctxid;
    uint64_t ctxid;
    pmix_info_t *info;
    size_t ninfo;
};

static px_cgroup *find(px_client *c, const char *name)
{
    for (px_cgroup *g = c->groups; g != NULL; g = g->next)
        if (strncmp(g->name, name, PMIX_MAX_NSLEN) == 0)
            return g;
    return NULL;
}

static void forget(px_client *c, const char *name)
{
    for (px_cgroup **pp = &c->groups; *pp != NULL; pp = &(*pp)->next) {
        px_cgroup *g = *pp;
        if (strncmp(g->name, name, PMIX_MAX_NSLEN) == 0) {
            *pp = g->next;
            free(g->members);
            free(g);
            return;
        }
    }
}

void px_cli_groups_destroy(px_client *c)
{
    while (c->groups != NULL)
        forget(c, c->groups->name);
    while (c->ginfos != NULL) {
        px_cginfo *gi = c->ginfos;
        c->ginfos = gi->next;
        PMIx_Info_free(gi->info, gi->ninfo);
        free(gi);
    }
}

static bool name_ok(const char *grp)
{
    return grp != NULL && grp[0] != '\0' && strnlen(grp, PMIX_MAX_NSLEN + 1) <= PMIX_MAX_NSLEN;
}

/* Send GROUP with `op`; `extra` packs what the op adds. */
static pmix_status_t send_group(px_client *c, uint8_t op, const char *grp, const pmix_proc_t *procs,
                                size_t nprocs, const pmix_info_t *dirs, size_t ndirs,
                                const pmix_proc_t *leader, uint8_t accept, pmix_op_cbfunc_t opcb,
                                pmix_info_cbfunc_t infocb, void *cbdata)
{
    double timeout = px_cli_timeout(dirs, ndirs);
    px_req *r;
    px_buf b;

    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    r = px_cli_req_new(c, op == PX_GRP_LEAVE ? PX_MSG_REPLY : PX_MSG_GROUP_DONE,
                       timeout > 0 ? timeout + PX_GROUP_GRACE : 0);
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->opcb = opcb;
    r->infocb = infocb;
    r->cbdata = cbdata;
    r->gop = op;
    memcpy(r->grp, grp, strnlen(grp, PMIX_MAX_NSLEN));
    px_buf_init_frame(&b, PX_MSG_GROUP, r->tag);
    px_pack_u8(&b, op);
    px_pack_str(&b, grp);
    px_pack_procs(&b, procs, nprocs);
    px_pack_info(&b, dirs, ndirs);
    if (op == PX_GRP_JOIN) {
        px_pack_proc(&b, leader);
        px_pack_u8(&b, accept);
    }
    return px_cli_send(c, &b, r);
}

static pmix_status_t check_procs(const pmix_proc_t procs[], size_t nprocs)
{
    if (procs == NULL || nprocs == 0)
        return PMIX_ERR_BAD_PARAM;
    for (size_t i = 0; i < nprocs; i++)
        if (procs[i].nspace[0] == '\0' || procs[i].rank == PMIX_RANK_UNDEF ||
            procs[i].rank == PMIX_RANK_INVALID)
            return PMIX_ERR_BAD_PARAM;
    return PMIX_SUCCESS;
}

pmix_status_t px_client_group_construct(px_client *c, const char grp[], const pmix_proc_t procs[],
                                        size_t nprocs, const pmix_info_t dirs[], size_t ndirs,
                                        pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    if (!name_ok(grp) || check_procs(procs, nprocs) != PMIX_SUCCESS || (dirs == NULL && ndirs > 0))
        return PMIX_ERR_BAD_PARAM;
    if (find(c, grp) != NULL)
        return PMIX_ERR_EXISTS;
    return send_group(c, PX_GRP_CONSTRUCT, grp, procs, nprocs, dirs, ndirs, NULL, 0, NULL, cbfunc,
                      cbdata);
}

pmix_status_t px_client_group_destruct(px_client *c, const char grp[], const pmix_info_t dirs[],
                                       size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    if (!name_ok(grp) || (dirs == NULL && ndirs > 0))
        return PMIX_ERR_BAD_PARAM;
    if (find(c, grp) == NULL)
        return PMIX_ERR_NOT_FOUND;
    return send_group(c, PX_GRP_DESTRUCT, grp, NULL, 0, dirs, ndirs, NULL, 0, cbfunc, NULL, cbdata);
}

pmix_status_t px_client_group_invite(px_client *c, const char grp[], const pmix_proc_t procs[],
                                     size_t nprocs, const pmix_info_t dirs[], size_t ndirs,
                                     pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    if (!name_ok(grp) || check_procs(procs, nprocs) != PMIX_SUCCESS || (dirs == NULL && ndirs > 0))
        return PMIX_ERR_BAD_PARAM;
    if (find(c, grp) != NULL)
        return PMIX_ERR_EXISTS;
    return send_group(c, PX_GRP_INVITE, grp, procs, nprocs, dirs, ndirs, NULL, 0, NULL, cbfunc,
                      cbdata);
}

pmix_status_t px_client_group_join(px_client *c, const char grp[], const pmix_proc_t *leader,
                                   pmix_group_opt_t opt, const pmix_info_t dirs[], size_t ndirs,
                                   pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    if (!name_ok(grp) || leader == NULL || check_procs(leader, 1) != PMIX_SUCCESS ||
        (opt != PMIX_GROUP_ACCEPT && opt != PMIX_GROUP_DECLINE) || (dirs == NULL && ndirs > 0))
        return PMIX_ERR_BAD_PARAM;
    return send_group(c, PX_GRP_JOIN, grp, NULL, 0, dirs, ndirs, leader, opt == PMIX_GROUP_ACCEPT,
                      NULL, cbfunc, cbdata);
}

pmix_status_t px_client_group_leave(px_client *c, const char grp[], const pmix_info_t dirs[],
                                    size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t rc;

    if (!name_ok(grp) || (dirs == NULL && ndirs > 0))
        return PMIX_ERR_BAD_PARAM;
    if (find(c, grp) == NULL)
        return PMIX_ERR_NOT_FOUND;
    rc = send_group(c, PX_GRP_LEAVE, grp, NULL, 0, dirs, ndirs, NULL, 0, cbfunc, NULL, cbdata);
    if (rc == PMIX_SUCCESS)
        forget(c, grp); /* no longer a member, whatever the others hear */
    return rc;
}

/* ---- the reply ---- */

/* Entries of a results array (results() below), unused ones empty. */
#define NRESULTS 3

static void release_results(void *arg)
{
    PMIx_Info_free(arg, NRESULTS);
}

/* Add the data that came with the reply (copies: the frame goes). */
static pmix_status_t take_data(px_client *c, const void *groups, size_t ngroups, const void *recs,
                               size_t nrecs)
{
    pmix_status_t rc = PMIX_SUCCESS;

    if (ngroups > 0) {
        void *copy = malloc(ngroups);
        px_blob *blob;
        if (copy == NULL)
            return PMIX_ERR_NOMEM;
        memcpy(copy, groups, ngroups);
        if ((blob = px_blob_create(copy, ngroups, NULL, NULL)) == NULL)
            return PMIX_ERR_NOMEM;
        rc = px_store_add_groups(c->store, blob);
        px_blob_unref(blob);
    }
    if (rc == PMIX_SUCCESS && nrecs > 0) {
        void *copy = malloc(nrecs);
        px_blob *blob;
        if (copy == NULL)
            return PMIX_ERR_NOMEM;
        memcpy(copy, recs, nrecs);
        if ((blob = px_blob_create(copy, nrecs, NULL, NULL)) == NULL)
            return PMIX_ERR_NOMEM;
        rc = px_store_add_blob(c->store, blob);
        px_blob_unref(blob);
    }
    return rc;
}

/* Keep the group information of the members in `members` from `ginfo`
 * (entries of proc and infos). All or nothing: on failure nothing is
 * kept. */
static pmix_status_t take_ginfo(px_client *c, const void *ginfo, size_t nginfo,
                                const pmix_proc_t *members, size_t nmembers, bool has_ctxid,
                                uint64_t ctxid)
{
    px_cginfo *head = NULL, **tail = &head;
    pmix_status_t rc = PMIX_SUCCESS;
    px_buf b;

    px_buf_view(&b, ginfo, nginfo);
    while (rc == PMIX_SUCCESS && px_buf_left(&b) > 0) {
        px_cginfo *gi = calloc(1, sizeof(*gi));
        if (gi == NULL) {
            rc = PMIX_ERR_NOMEM;
            break;
        }
        if ((rc = px_unpack_proc(&b, &gi->proc)) != PMIX_SUCCESS ||
            (rc = px_unpack_info(&b, &gi->info, &gi->ninfo)) != PMIX_SUCCESS) {
            free(gi);
            rc = PMIX_ERR_UNPACK_FAILURE;
            break;
        }
        bool member = false;
        for (size_t i = 0; i < nmembers && !member; i++)
            member = PMIx_Check_procid(&members[i], &gi->proc);
        if (!member) { /* dropped out of an optional construct: not kept */
            PMIx_Info_free(gi->info, gi->ninfo);
            free(gi);
            continue;
        }
        gi->has_ctxid = has_ctxid;
        gi->ctxid = ctxid;
        *tail = gi;
        tail = &gi->next;
    }
    if (rc != PMIX_SUCCESS) {
        while (head != NULL) {
            px_cginfo *gi = head;
            head = gi->next;
            PMIx_Info_free(gi->info, gi->ninfo);
            free(gi);
        }
        return rc;
    }
    *tail = c->ginfos; /* newest first */
    c->ginfos = head;
    return PMIX_SUCCESS;
}

/* Remember group `name` (replacing one of that name); takes `members`. */
static pmix_status_t keep(px_client *c, const char *name, pmix_proc_t *members, size_t n,
                          bool has_ctxid, uint64_t ctxid)
{
    px_cgroup *g = calloc(1, sizeof(*g));

    if (g == NULL)
        return PMIX_ERR_NOMEM;
    forget(c, name);
    memcpy(g->name, name, strnlen(name, PMIX_MAX_NSLEN));
    g->members = members;
    g->nmembers = n;
    g->has_ctxid = has_ctxid;
    g->ctxid = ctxid;
    g->next = c->groups;
    c->groups = g;
    return PMIX_SUCCESS;
}

/* The results array of a construct, an invitation or a join:
 * PMIX_GROUP_CONTEXT_ID if assigned, PMIX_GROUP_ID, PMIX_GROUP_MEMBERSHIP. NRESULTS
 * entries allocated, unused ones empty. */
static pmix_info_t *results(const px_cgroup *g, size_t *n)
{
    pmix_info_t *res = PMIx_Info_create(NRESULTS);
    pmix_data_array_t da;
    size_t ctx;

    *n = 0;
    if (res == NULL)
        return NULL;
    /* The context id first: OpenPMIx returns it so, and its examples
     * (group_dmodex, group_lcl_cid) read it from results[0]. */
    if (g->has_ctxid) {
        ctx = (size_t)g->ctxid;
        PMIx_Info_load(&res[(*n)++], PMIX_GROUP_CONTEXT_ID, &ctx, PMIX_SIZE);
    }
    if (PMIx_Info_load(&res[*n], PMIX_GROUP_ID, g->name, PMIX_STRING) == PMIX_SUCCESS)
        (*n)++;
    da.type = PMIX_PROC;
    da.size = g->nmembers;
    da.array = g->members;
    if (PMIx_Info_load(&res[*n], PMIX_GROUP_MEMBERSHIP, &da, PMIX_DATA_ARRAY) == PMIX_SUCCESS)
        (*n)++;
    return res;
}

static bool is_member(const pmix_proc_t *members, size_t n, const pmix_proc_t *p)
{
    for (size_t i = 0; i < n; i++)
        if (members[i].rank == p->rank &&
            strncmp(members[i].nspace, p->nspace, PMIX_MAX_NSLEN) == 0)
            return true;
    return false;
}

void px_cli_group_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b)
{
    pmix_op_cbfunc_t opcb = r->opcb;
    pmix_info_cbfunc_t infocb = r->infocb;
    void *cbdata = r->cbdata;
    uint8_t op = r->gop, has_ctxid = 0;
    char name[PMIX_MAX_NSLEN + 1];
    uint64_t ctxid = 0;
    pmix_proc_t *members = NULL;
    size_t nmembers = 0, nres = 0;
    const void *groups = NULL, *recs = NULL, *ginfo = NULL;
    size_t ngroups = 0, nrecs = 0, nginfo = 0;
    pmix_info_t *res = NULL;

    memcpy(name, r->grp, sizeof(name));
    px_cli_req_free(c, r);
    /* an error reply ends right after the status */
    if (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS) {
        if (px_unpack_u8(b, &has_ctxid) != PMIX_SUCCESS ||
            px_unpack_u64(b, &ctxid) != PMIX_SUCCESS ||
            px_unpack_procs(b, &members, &nmembers) != PMIX_SUCCESS ||
            px_unpack_bytes_view(b, &groups, &ngroups) != PMIX_SUCCESS ||
            px_unpack_bytes_view(b, &recs, &nrecs) != PMIX_SUCCESS ||
            px_unpack_bytes_view(b, &ginfo, &nginfo) != PMIX_SUCCESS)
            status = PMIX_ERR_UNPACK_FAILURE;
    }
    if ((status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS) && op == PX_GRP_DESTRUCT)
        forget(c, name);
    else if ((status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS) && nmembers > 0 &&
             is_member(members, nmembers, &c->self)) {
        pmix_status_t rc = take_data(c, groups, ngroups, recs, nrecs);
        if (rc == PMIX_SUCCESS && nginfo > 0)
            rc = take_ginfo(c, ginfo, nginfo, members, nmembers, has_ctxid != 0, ctxid);
        if (rc == PMIX_SUCCESS)
            rc = keep(c, name, members, nmembers, has_ctxid != 0, ctxid);
        if (rc == PMIX_SUCCESS) {
            members = NULL; /* the group's now */
            res = results(find(c, name), &nres);
        } else {
            status = rc;
        }
    } else if (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS) {
        /* an inviter that is not a member: the outcome only */
        px_cgroup tmp = {
            .members = members, .nmembers = nmembers, .has_ctxid = has_ctxid != 0, .ctxid = ctxid};
        memcpy(tmp.name, name, sizeof(tmp.name));
        if (nmembers > 0)
            res = results(&tmp, &nres);
    }
    free(members);
    if (opcb != NULL) {
        opcb(status, cbdata);
    } else if (infocb != NULL) {
        if (status != PMIX_SUCCESS && status != PMIX_ERR_PARTIAL_SUCCESS) {
            PMIx_Info_free(res, NRESULTS);
            res = NULL;
            nres = 0;
        }
        infocb(status, res, nres, cbdata, release_results, res);
    } else {
        PMIx_Info_free(res, NRESULTS);
    }
}

/* ---- what the client answers itself ---- */

bool px_cli_group_key(const char *key)
{
    return strcmp(key, PMIX_GROUP_MEMBERSHIP) == 0 || strcmp(key, PMIX_GROUP_CONTEXT_ID) == 0 ||
           strcmp(key, PMIX_GROUP_NAMES) == 0;
}

static pmix_status_t load_members(const px_cgroup *g, pmix_value_t **out)
{
    pmix_data_array_t da = {.type = PMIX_PROC, .size = g->nmembers, .array = g->members};
    pmix_value_t *v = PMIx_Value_create(1);
    pmix_status_t rc;

    if (v == NULL)
        return PMIX_ERR_NOMEM;
    rc = PMIx_Value_load(v, &da, PMIX_DATA_ARRAY);
    if (rc != PMIX_SUCCESS) {
        PMIx_Value_free(v, 1);
        return rc;
    }
    *out = v;
    return PMIX_SUCCESS;
}

static bool has_member(const px_cgroup *g, const pmix_proc_t *p)
{
    for (size_t i = 0; i < g->nmembers; i++)
        if (g->members[i].rank == p->rank &&
            strncmp(g->members[i].nspace, p->nspace, PMIX_MAX_NSLEN) == 0)
            return true;
    return false;
}

/* The names of the groups `p` is a member of, as far as this process knows. */
static pmix_status_t load_names(px_client *c, const pmix_proc_t *p, bool any, pmix_value_t *v)
{
    size_t n = 0, k = 0;
    char **names;
    pmix_data_array_t da;
    pmix_status_t rc;

    for (px_cgroup *g = c->groups; g != NULL; g = g->next)
        if (any || has_member(g, p))
            n++;
    if (n == 0 && !any)
        return PMIX_ERR_NOT_SUPPORTED; /* nothing known of it here */
    names = calloc(n ? n : 1, sizeof(*names));
    if (names == NULL)
        return PMIX_ERR_NOMEM;
    for (px_cgroup *g = c->groups; g != NULL; g = g->next)
        if (any || has_member(g, p))
            names[k++] = g->name;
    da.type = PMIX_STRING;
    da.size = n;
    da.array = names;
    rc = PMIx_Value_load(v, &da, PMIX_DATA_ARRAY);
    free(names); /* the strings themselves were copied */
    return rc;
}

pmix_status_t px_cli_group_get(px_client *c, const pmix_proc_t *proc, const char *key,
                               pmix_value_t **out)
{
    px_cgroup *g;

    if (strcmp(key, PMIX_GROUP_NAMES) == 0) {
        pmix_value_t *v = PMIx_Value_create(1);
        pmix_status_t rc;
        if (v == NULL)
            return PMIX_ERR_NOMEM;
        rc = load_names(c, proc, false, v);
        if (rc != PMIX_SUCCESS) {
            PMIx_Value_free(v, 1);
            return rc;
        }
        *out = v;
        return PMIX_SUCCESS;
    }
    if (proc->rank != PMIX_RANK_WILDCARD || (g = find(c, proc->nspace)) == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    if (strcmp(key, PMIX_GROUP_MEMBERSHIP) == 0)
        return load_members(g, out);
    if (!g->has_ctxid)
        return PMIX_ERR_NOT_FOUND;
    size_t ctx = (size_t)g->ctxid;
    *out = PMIx_Value_create(1);
    if (*out == NULL)
        return PMIX_ERR_NOMEM;
    return PMIx_Value_load(*out, &ctx, PMIX_SIZE);
}

pmix_status_t px_cli_group_info_get(px_client *c, const pmix_proc_t *proc, const char *key,
                                    const pmix_info_t *qual, size_t nqual, pmix_value_t **out)
{
    const pmix_info_t *q = px_info_find(qual, nqual, PMIX_GROUP_CONTEXT_ID);
    uint64_t want = 0;
    bool known = false;

    if (q != NULL && px_value_get_number(&q->value, &want) != PMIX_SUCCESS)
        return PMIX_ERR_NOT_SUPPORTED;
    for (px_cginfo *gi = c->ginfos; gi != NULL; gi = gi->next) {
        if (q != NULL && (!gi->has_ctxid || gi->ctxid != want))
            continue;
        known = true;
        if (!PMIx_Check_procid(&gi->proc, proc))
            continue;
        for (size_t i = 0; i < gi->ninfo; i++) {
            if (!PMIx_Check_key(gi->info[i].key, key))
                continue;
            if ((*out = PMIx_Value_create(1)) == NULL)
                return PMIX_ERR_NOMEM;
            return PMIx_Value_xfer(*out, &gi->info[i].value);
        }
    }
    return q != NULL && known ? PMIX_ERR_NOT_FOUND : PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t px_client_group_query(px_client *c, const char *key, const pmix_info_t qual[],
                                    size_t nqual, pmix_info_t *out)
{
    pmix_status_t rc;

    if (strcmp(key, PMIX_QUERY_NUM_GROUPS) == 0) {
        size_t n = 0;
        for (px_cgroup *g = c->groups; g != NULL; g = g->next)
            n++;
        return PMIx_Info_load(out, key, &n, PMIX_SIZE);
    }
    if (strcmp(key, PMIX_QUERY_GROUP_NAMES) == 0) {
        PMIx_Load_key(out->key, key);
        return load_names(c, NULL, true, &out->value);
    }
    if (strcmp(key, PMIX_QUERY_GROUP_MEMBERSHIP) == 0) {
        const char *grp = px_info_string(qual, nqual, PMIX_GROUP_ID);
        px_cgroup *g = grp != NULL ? find(c, grp) : NULL;
        pmix_value_t *v = NULL;
        if (grp == NULL)
            return PMIX_ERR_BAD_PARAM; /* the Standard requires the qualifier */
        if (g == NULL)
            return PMIX_ERR_NOT_FOUND;
        if ((rc = load_members(g, &v)) != PMIX_SUCCESS)
            return rc;
        PMIx_Load_key(out->key, key);
        rc = PMIx_Value_xfer(&out->value, v);
        PMIx_Value_free(v, 1);
        return rc;
    }
    return PMIX_ERR_NOT_SUPPORTED;
}
