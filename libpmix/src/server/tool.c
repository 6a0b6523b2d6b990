/*
 * tool.c - the server engine's side of tools, and the queries a client or
 * tool sends to its server.
 *
 * A tool is a peer that is no rank of a registered job: a debugger, a
 * job inspector (pmixps). The host allows tools with px_server_tools,
 * naming the one uid they may run as (the server's own user; the same
 * rule as for clients: a peer of another uid is refused when its
 * connection opens). A tool's HELLO ends with the role byte PX_ROLE_TOOL
 * (px_proto.h); the engine then
 *
 *   1. makes a px_sclient for it, flagged `tool`, in state HELLO, keyed by
 *      its connection (its name is not known yet), and counts it against
 *      PX_SERVER_MAX_TOOLS;
 *   2. asks the host (tool_connected) with what the platform vouches for
 *      (uid, gid, pid) and the identity the tool asked for, if any;
 *   3. on the host's answer, takes the namespace and rank the host gave
 *      (refused if a client or tool already has that name), lifts the
 *      platform's handshake limits and sends WELCOME with the tool's name
 *      and the server's own; or sends WELCOME with the error and closes.
 *
 * From then on a tool sends what a client may send (its Gets, events,
 * queries); FINALIZE is answered and the tool is forgotten when its
 * connection closes. A tool's departure fails nothing and raises no
 * event: no collective counts on a tool.
 *
 * QUERY carries the PMIx_Query_info queries a process could not answer
 * from its own memory; the host answers them (the query upcall) and the
 * answer goes back as INFO_DONE. The host may answer after the asker is
 * gone: the answer is then dropped.
 */
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

/* The version-2 upcalls, NULL in an older host table. */
static void (*host_tool_connected(const px_server *s))(void *, const pmix_info_t *, size_t,
                                                       pmix_tool_connection_cbfunc_t, void *)
{
    return s->hops->version >= 4 ? s->hops->tool_connected : NULL;
}

pmix_status_t px_server_tools(px_server *s, const pmix_proc_t *self, uint32_t uid)
{
    if (s == NULL || self == NULL)
        return PMIX_ERR_BAD_PARAM;
    s->tools_on = true;
    s->tool_uid = uid;
    s->self = *self;
    return PMIX_SUCCESS;
}

size_t px_server_ntools(const px_server *s)
{
    size_t n = 0;

    for (const px_sclient *c = s->clients; c != NULL; c = c->next)
        if (c->tool && c->state == PX_SC_CONNECTED)
            n++;
    return n;
}

bool px_srv_tool_uid_ok(const px_server *s, uint32_t uid)
{
    return s->tools_on && uid == s->tool_uid;
}

static px_sclient *tool_of_conn(px_server *s, uint64_t conn)
{
    for (px_sclient *c = s->clients; c != NULL; c = c->next)
        if (c->tool && c->has_conn && c->conn == conn)
            return c;
    return NULL;
}

void px_srv_tool_gone(px_server *s, px_sclient *t)
{
    px_srv_get_client_gone(s, t); /* its parked Gets point at it */
    px_srv_fence_client_gone(s, t);
    for (px_sclient **pp = &s->clients; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    s->ntools--;
    free(t);
}

static void send_tool_welcome(px_server *s, px_sclient *t, pmix_status_t status)
{
    px_buf b;

    px_buf_init_frame(&b, PX_MSG_WELCOME, t->pending_tag);
    px_pack_i32(&b, status);
    if (status == PMIX_SUCCESS) {
        px_pack_u8(&b, 0);                               /* no fence page */
        px_store_pack_job(s->store, t->proc.nspace, &b); /* empty: no job of its own */
        px_pack_proc(&b, &t->proc);
        px_pack_proc(&b, &s->self);
    }
    px_srv_send(s, t, &b);
}

/* Refuse tool `t`: WELCOME with the reason, then close and forget it. */
static void refuse(px_server *s, px_sclient *t, pmix_status_t status)
{
    px_srv_logf(s, PX_LOG_WARN, "refused a tool (connection %llu): %s", (unsigned long long)t->conn,
                PMIx_Error_string(status));
    send_tool_welcome(s, t, status);
    if (t->has_conn) {
        s->pops->close(s->pctx, t->conn);
        px_srv_forget_conn(s, t->conn);
    }
    px_srv_tool_gone(s, t);
}

/* What the host holds while it decides: the connection, looked up again
 * when the answer comes. */
typedef struct tool_ref {
    px_server *srv;
    uint64_t conn;
} tool_ref;

/* The host's answer to tool_connected; from any thread. */
static void tool_cb(pmix_status_t status, pmix_proc_t *proc, void *cbdata)
{
    tool_ref *r = cbdata;
    px_server *s = r->srv;
    px_sclient *t;

    s->pops->lock(s->pctx);
    t = tool_of_conn(s, r->conn);
    if (t != NULL && t->state == PX_SC_HELLO) {
        px_sclient *other = NULL;
        if (status == PMIX_SUCCESS && (proc == NULL || proc->nspace[0] == '\0'))
            status = PMIX_ERR_BAD_PARAM; /* the host must name it */
        if (status == PMIX_SUCCESS) {
            other = px_srv_client(s, proc);
            if (other != NULL && other != t)
                status = PMIX_ERR_EXISTS;
        }
        if (status != PMIX_SUCCESS) {
            refuse(s, t, status);
        } else {
            t->proc = *proc;
            t->state = PX_SC_CONNECTED;
            if (s->pops->conn_accepted != NULL)
                s->pops->conn_accepted(s->pctx, t->conn);
            send_tool_welcome(s, t, PMIX_SUCCESS);
        }
    }
    s->pops->unlock(s->pctx);
    free(r);
}

pmix_status_t px_srv_tool_hello(px_server *s, px_sconn *k, uint32_t tag, const pmix_proc_t *want)
{
    void (*up)(void *, const pmix_info_t *, size_t, pmix_tool_connection_cbfunc_t, void *) =
        host_tool_connected(s);
    px_sclient *t;
    pmix_info_t info[5];
    size_t n = 0;
    uint32_t pid = s->pops->peer_pid != NULL ? s->pops->peer_pid(s->pctx, k->id) : 0;
    tool_ref *r;

    if (!px_srv_tool_uid_ok(s, k->uid)) {
        px_srv_logf(s, PX_LOG_ERROR, "connection %llu (uid %u) says it is a tool: not accepted",
                    (unsigned long long)k->id, k->uid);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return PMIX_ERR_NOMEM;
    t->srv = s;
    t->tool = true;
    t->uid = k->uid;
    t->gid = k->gid;
    t->conn = k->id;
    t->has_conn = true;
    t->state = PX_SC_HELLO;
    t->pending_tag = tag;
    /* Nameless until the host answers: an empty namespace (no client has
     * one) and the connection for a rank, so that two tools waiting at
     * once are never taken for each other (drop_later finds by name). */
    t->proc.rank = (pmix_rank_t)(k->id % PMIX_RANK_VALID);
    t->next = s->clients;
    s->clients = t;
    s->ntools++;
    k->client = t;
    if (s->ntools > PX_SERVER_MAX_TOOLS) {
        refuse(s, t, PMIX_ERR_OUT_OF_RESOURCE);
        return PMIX_SUCCESS;
    }
    if (up == NULL) {
        refuse(s, t, PMIX_ERR_NOT_SUPPORTED);
        return PMIX_SUCCESS;
    }
    if ((r = malloc(sizeof(*r))) == NULL) {
        refuse(s, t, PMIX_ERR_NOMEM);
        return PMIX_SUCCESS;
    }
    r->srv = s;
    r->conn = k->id;
    PMIx_Info_load(&info[n++], PMIX_USERID, &k->uid, PMIX_UINT32);
    PMIx_Info_load(&info[n++], PMIX_GRPID, &k->gid, PMIX_UINT32);
    if (pid != 0) {
        pid_t p = (pid_t)pid;
        PMIx_Info_load(&info[n++], PMIX_PROC_PID, &p, PMIX_PID);
    }
    if (want->nspace[0] != '\0') {
        PMIx_Info_load(&info[n++], PMIX_TOOL_NSPACE, want->nspace, PMIX_STRING);
        PMIx_Info_load(&info[n++], PMIX_TOOL_RANK, &want->rank, PMIX_PROC_RANK);
    }
    up(s->hctx, info, n, tool_cb, r); /* may answer inside: t may be gone now */
    for (size_t i = 0; i < n; i++)
        PMIx_Info_destruct(&info[i]);
    return PMIX_SUCCESS;
}

/* ---- queries ---- */

/* Who asked, looked up again when the host answers, and what the server
 * answered itself (the process-set keys). */
typedef struct query_ref {
    px_server *srv;
    pmix_proc_t proc;
    uint64_t conn;
    uint32_t tag;
    pmix_query_t *q; /* the host may read them until it answers */
    size_t nq;
    size_t nkeys;      /* the keys of the whole QUERY */
    pmix_info_t *pres; /* the server's own answers */
    size_t npres;
} query_ref;

static void query_ref_free(query_ref *r)
{
    PMIx_Query_free(r->q, r->nq);
    PMIx_Info_free(r->pres, r->npres);
    free(r);
}

/* One INFO_DONE: the server's answers, then the host's (if `status` says
 * it has some). With no answer of the server's the host's status is the
 * reply's; otherwise it counts the keys answered. */
static void query_reply(px_server *s, px_sclient *c, const query_ref *r, pmix_status_t status,
                        const pmix_info_t *info, size_t ninfo)
{
    bool host_ok = status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS;
    size_t nh = host_ok && info != NULL ? ninfo : 0, n = r->npres + nh;
    pmix_info_t *all = NULL;
    px_buf b;

    if (r->npres > 0) {
        status = n >= r->nkeys ? PMIX_SUCCESS : PMIX_ERR_PARTIAL_SUCCESS;
        if ((all = PMIx_Info_create(n)) == NULL) {
            status = PMIX_ERR_NOMEM;
            n = 0;
        }
        for (size_t i = 0; all != NULL && i < r->npres; i++)
            PMIx_Info_xfer(&all[i], &r->pres[i]);
        for (size_t i = 0; all != NULL && i < nh; i++)
            PMIx_Info_xfer(&all[r->npres + i], &info[i]);
    }
    px_buf_init_frame(&b, PX_MSG_INFO_DONE, r->tag);
    px_pack_i32(&b, status);
    if (r->npres > 0)
        px_pack_info(&b, all, n);
    else
        px_pack_info(&b, nh > 0 ? info : NULL, nh);
    px_srv_send(s, c, &b);
    if (all != NULL)
        PMIx_Info_free(all, n);
}

static void query_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata,
                     pmix_release_cbfunc_t release_fn, void *release_cbdata)
{
    query_ref *r = cbdata;
    px_server *s = r->srv;
    px_sclient *c;

    s->pops->lock(s->pctx);
    c = px_srv_client(s, &r->proc);
    if (c != NULL && c->has_conn && c->conn == r->conn && c->state == PX_SC_CONNECTED)
        query_reply(s, c, r, status, info, ninfo);
    s->pops->unlock(s->pctx);
    query_ref_free(r);
    if (release_fn != NULL)
        release_fn(release_cbdata);
}

bool px_srv_host_queries(const px_server *s)
{
    return s->hops->version >= 4 && s->hops->query != NULL;
}

pmix_status_t px_srv_query_host(px_server *s, px_sclient *c, uint32_t tag, pmix_query_t *q,
                                size_t nq, size_t nkeys, pmix_info_t *pres, size_t npres)
{
    query_ref *r = calloc(1, sizeof(*r));
    pmix_query_t *hq = NULL;
    size_t nhq = 0;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (r == NULL) {
        PMIx_Query_free(q, nq);
        PMIx_Info_free(pres, npres);
        return PMIX_ERR_NOMEM;
    }
    r->srv = s;
    r->proc = c->proc;
    r->conn = c->conn;
    r->tag = tag;
    r->nkeys = nkeys;
    r->pres = pres;
    r->npres = npres;
    /* the host sees its own keys only, each query with its qualifiers */
    if ((hq = PMIx_Query_create(nq)) != NULL) {
        rc = PMIX_SUCCESS;
        for (size_t i = 0; i < nq && rc == PMIX_SUCCESS; i++) {
            char **keys = NULL;
            for (size_t k = 0; q[i].keys != NULL && q[i].keys[k] != NULL; k++)
                if (!px_query_key_is_pset(q[i].keys[k]) &&
                    PMIx_Argv_append_nosize(&keys, q[i].keys[k]) != PMIX_SUCCESS)
                    rc = PMIX_ERR_NOMEM;
            if (keys == NULL)
                continue;
            hq[nhq].keys = keys;
            hq[nhq].qualifiers = q[i].qualifiers; /* moved */
            hq[nhq].nqual = q[i].nqual;
            q[i].qualifiers = NULL;
            q[i].nqual = 0;
            nhq++;
        }
    }
    PMIx_Query_free(q, nq);
    r->q = hq;
    r->nq = nq;
    if (rc == PMIX_SUCCESS) {
        rc = s->hops->query(s->hctx, &c->proc, hq, nhq, query_cb, r);
        if (rc == PMIX_SUCCESS)
            return PMIX_SUCCESS; /* query_cb frees r */
    }
    query_reply(s, c, r, rc, NULL, 0); /* the host will not call back */
    query_ref_free(r);
    return PMIX_SUCCESS;
}
