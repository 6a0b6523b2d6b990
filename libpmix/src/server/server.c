/*
 * server.c - the server engine: contexts, registration, connections, the
 * handshake and message dispatch.
 *
 * Life of a client, as the server sees it:
 *   1. The host registers its namespace and the client itself
 *      (px_server_register_nspace / _client), before the process starts.
 *   2. The platform reports a connection (sink `opened`) with the peer's
 *      uid and gid. A uid that no registered client has is refused at once.
 *   3. The first frame must be HELLO naming a registered process whose uid
 *      and gid match; the host's client_connected decides (with
 *      client_connected2 it also learns the peer's pid, to check that the
 *      peer is the process it started); WELCOME carries the job-level
 *      data, so the client answers job Gets by itself. From then on the
 *      platform lifts its limits on connections that have not done so
 *      (conn_accepted: a deadline, a small frame size).
 *   4. Requests follow (commit, fence, get, ...), dispatched by type.
 *   5. FINALIZE ends it cleanly. A connection that closes before that, or
 *      a message that breaks the protocol, makes the client "lost": its
 *      pending collectives fail on every participant, parked Gets for its
 *      data fail, and the host hears of it (client_lost).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/px_common.h"
#include "server_int.h"

void px_srv_logf(px_server *s, px_log_level level, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    if (s->pops->log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    s->pops->log(s->pctx, level, msg);
}

px_server *px_server_create(const px_server_host *hops, void *hctx, const px_platform_ops *pops,
                            void *pctx)
{
    px_server *s;

    if (hops == NULL || pops == NULL || pops->version != PX_PLATFORM_OPS_VERSION ||
        hops->version < PX_SERVER_HOST_VERSION_MIN || hops->version > PX_SERVER_HOST_VERSION)
        return NULL;
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->store = px_store_create();
    if (s->store == NULL) {
        free(s);
        return NULL;
    }
    s->hops = hops;
    s->hctx = hctx;
    s->pops = pops;
    s->pctx = pctx;
    s->next_fence_id = 1;
    return s;
}

void px_server_destroy(px_server *s)
{
    if (s == NULL)
        return;
    /* Every timer the server started goes with it: the drops here, the
     * fences' and the parked Gets' in their destroy_all. */
    while (s->drops != NULL) {
        px_drop *d = s->drops;
        s->drops = d->next;
        s->pops->timer_cancel(s->pctx, d->timer);
        free(d);
    }
    px_srv_fence_destroy_all(s);
    px_srv_group_destroy_all(s);
    px_srv_get_destroy_all(s);
    px_srv_psets_destroy(s);
    while (s->conns != NULL) {
        px_sconn *n = s->conns->next;
        free(s->conns);
        s->conns = n;
    }
    while (s->clients != NULL) {
        px_sclient *n = s->clients->next;
        px_srv_iof_client_gone(s, s->clients);
        free(s->clients);
        s->clients = n;
    }
    while (s->nspaces != NULL) {
        px_nspace *n = s->nspaces->next;
        px_srv_page_free(s, s->nspaces);
        free(s->nspaces->dead);
        free(s->nspaces);
        s->nspaces = n;
    }
    px_store_destroy(s->store);
    free(s);
}

px_nspace *px_srv_nspace(px_server *s, const char *name)
{
    for (px_nspace *n = s->nspaces; n != NULL; n = n->next)
        if (strncmp(n->name, name, PMIX_MAX_NSLEN) == 0)
            return n;
    return NULL;
}

px_sclient *px_srv_client(px_server *s, const pmix_proc_t *proc)
{
    for (px_sclient *c = s->clients; c != NULL; c = c->next)
        if (c->proc.rank == proc->rank &&
            strncmp(c->proc.nspace, proc->nspace, PMIX_MAX_NSLEN) == 0)
            return c;
    return NULL;
}

bool px_srv_is_dead(px_server *s, const pmix_proc_t *proc)
{
    px_nspace *ns = px_srv_nspace(s, proc->nspace);

    if (ns == NULL)
        return false;
    for (size_t i = 0; i < ns->ndead; i++)
        if (proc->rank == PMIX_RANK_WILDCARD || ns->dead[i] == proc->rank)
            return true;
    return false;
}

bool px_srv_is_departed(px_server *s, const pmix_proc_t *proc)
{
    for (px_sclient *c = s->clients; c != NULL; c = c->next)
        if (c->state == PX_SC_FINALIZED && !c->has_conn &&
            strncmp(c->proc.nspace, proc->nspace, PMIX_MAX_NSLEN) == 0 &&
            (proc->rank == PMIX_RANK_WILDCARD || c->proc.rank == proc->rank))
            return true;
    return false;
}

static void mark_dead(px_server *s, const pmix_proc_t *proc)
{
    px_nspace *ns = px_srv_nspace(s, proc->nspace);

    if (ns == NULL || px_srv_is_dead(s, proc))
        return;
    if (ns->ndead == ns->capdead) {
        size_t cap = ns->capdead ? 2 * ns->capdead : 4;
        pmix_rank_t *d = realloc(ns->dead, cap * sizeof(*d));
        if (d == NULL)
            return; /* the process stays "alive": its fences can still time out */
        ns->dead = d;
        ns->capdead = cap;
    }
    ns->dead[ns->ndead++] = proc->rank;
}

/* ---- registration ---- */

pmix_status_t px_server_register_nspace(px_server *s, const char nspace[], int nlocalprocs,
                                        const pmix_info_t info[], size_t ninfo)
{
    px_nspace *ns;
    pmix_status_t rc;
    const pmix_info_t *sz;
    uint64_t v;

    if (nspace == NULL || nspace[0] == '\0' || strlen(nspace) > PMIX_MAX_NSLEN || nlocalprocs < 0)
        return PMIX_ERR_BAD_PARAM;
    ns = px_srv_nspace(s, nspace);
    if (ns == NULL) {
        ns = calloc(1, sizeof(*ns));
        if (ns == NULL)
            return PMIX_ERR_NOMEM;
        snprintf(ns->name, sizeof(ns->name), "%s", nspace);
        rc = px_store_load_job(s->store, nspace, info, ninfo);
        if (rc != PMIX_SUCCESS) {
            free(ns);
            return rc;
        }
        ns->next = s->nspaces;
        s->nspaces = ns;
    } else {
        rc = px_store_load_job(s->store, nspace, info, ninfo);
        if (rc != PMIX_SUCCESS)
            return rc;
        /* its clients were counted with the old size */
        px_srv_page_break(s, ns, "namespace registered again");
    }
    if ((rc = px_srv_psets_register(s, nspace, info, ninfo)) != PMIX_SUCCESS)
        px_srv_logf(s, PX_LOG_WARN, "namespace %s: its process sets are ignored: %s", nspace,
                    PMIx_Error_string(rc));
    ns->nlocal = nlocalprocs;
    ns->job_size = 0;
    sz = px_info_find(info, ninfo, PMIX_JOB_SIZE);
    if (sz != NULL && px_value_get_number(&sz->value, &v) == PMIX_SUCCESS)
        ns->job_size = (uint32_t)v;
    return PMIX_SUCCESS;
}

void px_server_deregister_nspace(px_server *s, const char nspace[])
{
    px_nspace **pp = &s->nspaces;

    for (px_sclient **cp = &s->clients; *cp != NULL;) {
        px_sclient *c = *cp;
        if (strncmp(c->proc.nspace, nspace, PMIX_MAX_NSLEN) == 0) {
            px_server_deregister_client(s, &c->proc);
            cp = &s->clients; /* the list changed */
        } else {
            cp = &c->next;
        }
    }
    while (*pp != NULL) {
        if (strncmp((*pp)->name, nspace, PMIX_MAX_NSLEN) == 0) {
            px_nspace *n = *pp;
            *pp = n->next;
            px_srv_page_free(s, n);
            free(n->dead);
            free(n);
            break;
        }
        pp = &(*pp)->next;
    }
    px_srv_psets_drop_nspace(s, nspace);
    px_store_drop_job(s->store, nspace);
}

pmix_status_t px_server_register_client(px_server *s, const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                        void *server_object)
{
    px_sclient *c;

    if (proc == NULL || px_srv_nspace(s, proc->nspace) == NULL)
        return PMIX_ERR_BAD_PARAM; /* register the namespace first */
    if (proc->rank >= PMIX_RANK_VALID)
        return PMIX_ERR_BAD_PARAM;
    if (px_srv_client(s, proc) != NULL)
        return PMIX_ERR_EXISTS;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return PMIX_ERR_NOMEM;
    c->srv = s;
    c->proc = *proc;
    c->uid = (uint32_t)uid;
    c->gid = (uint32_t)gid;
    c->server_object = server_object;
    c->state = PX_SC_REGISTERED;
    c->next = s->clients;
    s->clients = c;
    /* a rank registered again is a new process: its commits count from 0
     * (the one before it is gone and writes no more) */
    px_nspace *ns = px_srv_nspace(s, proc->nspace);
    if (ns->pg != NULL && proc->rank < ns->pg_n)
        atomic_store_explicit(&ns->pg->commits[proc->rank], 0, memory_order_release);
    return PMIX_SUCCESS;
}

static px_sconn *find_conn(px_server *s, uint64_t id)
{
    for (px_sconn *k = s->conns; k != NULL; k = k->next)
        if (k->id == id)
            return k;
    return NULL;
}

void px_srv_forget_conn(px_server *s, uint64_t id)
{
    for (px_sconn **pp = &s->conns; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            px_sconn *k = *pp;
            *pp = k->next;
            free(k);
            return;
        }
    }
}

static void client_died(px_server *s, px_sclient *c, pmix_status_t why);
static void finalized(px_sclient *c);
static void drop_later(px_server *s, px_sclient *c);

void px_server_deregister_client(px_server *s, const pmix_proc_t *proc)
{
    px_sclient *c = px_srv_client(s, proc);

    if (c == NULL || c->tool) /* tools are not registered */
        return;
    /* A host deregisters a process that did not finalize when it is gone
     * (pmixrun does so when waitpid reports it, which may come before its
     * socket's EOF): what waits on it must fail now, not hang. */
    if (c->state == PX_SC_FINALIZING)
        finalized(c); /* it did finalize; the host had not answered yet */
    if (c->state != PX_SC_FINALIZED)
        client_died(s, c, PMIX_ERR_PROC_TERM_WO_SYNC);
    else
        px_srv_get_proc_died(s, &c->proc, PMIX_ERR_NOT_FOUND);
    if (c->has_conn) {
        s->pops->close(s->pctx, c->conn);
        px_srv_forget_conn(s, c->conn);
        c->has_conn = false;
    }
    px_srv_get_client_gone(s, c);
    px_srv_fence_client_gone(s, c);
    px_srv_group_client_gone(s, c);
    px_srv_iof_client_gone(s, c);
    for (px_sclient **pp = &s->clients; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    free(c);
}

static pmix_status_t env_add(char ***env, const char *name, const char *value)
{
    size_t n = 0, len = strlen(name);
    char *entry, **e;

    if (*env != NULL)
        while ((*env)[n] != NULL)
            n++;
    entry = malloc(len + strlen(value) + 2);
    if (entry == NULL)
        return PMIX_ERR_NOMEM;
    sprintf(entry, "%s=%s", name, value);
    /* replace an existing definition */
    for (size_t i = 0; i < n; i++) {
        if (strncmp((*env)[i], name, len) == 0 && (*env)[i][len] == '=') {
            free((*env)[i]);
            (*env)[i] = entry;
            return PMIX_SUCCESS;
        }
    }
    e = realloc(*env, (n + 2) * sizeof(char *));
    if (e == NULL) {
        free(entry);
        return PMIX_ERR_NOMEM;
    }
    e[n] = entry;
    e[n + 1] = NULL;
    *env = e;
    return PMIX_SUCCESS;
}

pmix_status_t px_server_setup_fork(px_server *s, const pmix_proc_t *proc, char ***env)
{
    char rank[16];
    pmix_status_t rc;

    if (proc == NULL || env == NULL || px_srv_client(s, proc) == NULL)
        return PMIX_ERR_BAD_PARAM;
    snprintf(rank, sizeof(rank), "%u", proc->rank);
    rc = env_add(env, "PMIX_NAMESPACE", proc->nspace);
    if (rc == PMIX_SUCCESS)
        rc = env_add(env, "PMIX_RANK", rank);
    if (rc == PMIX_SUCCESS)
        rc = env_add(env, "PMIX_VERSION", "4.2.0");
    return rc;
}

size_t px_server_nclients(const px_server *s)
{
    size_t n = 0;

    for (const px_sclient *c = s->clients; c != NULL; c = c->next)
        if (c->state == PX_SC_CONNECTED && !c->tool)
            n++;
    return n;
}

/* ---- sending ---- */

void px_srv_send(px_server *s, px_sclient *c, px_buf *b)
{
    px_srv_send_region(s, c, b, NULL);
}

static void send_frame(px_server *s, px_sclient *c, px_buf *b, px_region *region, px_page *page);

void px_srv_send_region(px_server *s, px_sclient *c, px_buf *b, px_region *region)
{
    send_frame(s, c, b, region, NULL);
}

/* `b` to `c`, with `region` or `page` attached if not NULL. */
static void send_frame(px_server *s, px_sclient *c, px_buf *b, px_region *region, px_page *page)
{
    size_t len;
    void *frame = px_buf_finish_frame(b, &len);

    pmix_status_t rc;

    if (!c->has_conn) {
        free(frame);
        return;
    }
    if (frame == NULL) {
        rc = PMIX_ERR_NOMEM;
    } else if (region != NULL) {
        rc = s->pops->send_region(s->pctx, c->conn, frame, len, region);
    } else if (page != NULL) {
        rc = s->pops->page_send(s->pctx, c->conn, frame, len, page);
    } else {
        rc = s->pops->send(s->pctx, c->conn, frame, len);
    }
    /* A reply that could not go out while the connection stays up would
     * leave its client waiting forever: drop the client instead (it sees
     * the connection close). UNREACH needs nothing: a close report follows. */
    if (rc != PMIX_SUCCESS && rc != PMIX_ERR_UNREACH) {
        px_srv_logf(s, PX_LOG_ERROR, "cannot send a message to %s:%u (%s); dropping it",
                    c->proc.nspace, c->proc.rank, PMIx_Error_string(rc));
        drop_later(s, c);
    }
}

void px_srv_reply_status(px_server *s, px_sclient *c, uint16_t type, uint32_t tag,
                         pmix_status_t status)
{
    px_buf b;

    px_buf_init_frame(&b, type, tag);
    px_pack_i32(&b, status);
    px_srv_send(s, c, &b);
}

/* ---- losing a client ---- */

/* The process behind `c` is gone without finalizing: fail what waits on it. */
static void client_died(px_server *s, px_sclient *c, pmix_status_t why)
{
    if (c->state == PX_SC_DEAD || c->state == PX_SC_FINALIZED)
        return;
    c->state = PX_SC_DEAD;
    mark_dead(s, &c->proc);
    px_srv_page_break(s, px_srv_nspace(s, c->proc.nspace), "a process died");
    px_srv_get_client_gone(s, c);
    px_srv_fence_proc_died(s, &c->proc, why);
    px_srv_group_proc_died(s, &c->proc, why);
    px_srv_get_proc_died(s, &c->proc, why);
    if (s->hops->client_lost != NULL)
        s->hops->client_lost(s->hctx, &c->proc, c->server_object, why);
    px_srv_event_to_clients(s, PMIX_ERR_PROC_TERM_WO_SYNC, &c->proc, PMIX_RANGE_NAMESPACE, NULL, 0,
                            c);
}

void px_server_proc_died(px_server *s, const pmix_proc_t *proc, pmix_status_t why)
{
    px_sclient *c = px_srv_client(s, proc);

    if (c != NULL && c->tool)
        return; /* no collective counts on a tool */
    if (c != NULL) {
        client_died(s, c, why);
        return;
    }
    /* not a local client: still fail local waits on it */
    mark_dead(s, proc);
    px_srv_page_break(s, px_srv_nspace(s, proc->nspace), "a process died");
    px_srv_fence_proc_died(s, proc, why);
    px_srv_group_proc_died(s, proc, why);
    px_srv_get_proc_died(s, proc, why);
}

/* ---- handshake ---- */

static void send_welcome(px_server *s, px_sclient *c, uint32_t tag, pmix_status_t status)
{
    px_buf b;

    px_nspace *ns = px_srv_nspace(s, c->proc.nspace);
    px_page *page = status == PMIX_SUCCESS && ns != NULL ? px_srv_page_for(s, ns) : NULL;

    px_buf_init_frame(&b, PX_MSG_WELCOME, tag);
    px_pack_i32(&b, status);
    if (status == PMIX_SUCCESS)
        px_pack_u8(&b, page != NULL);
    if (status == PMIX_SUCCESS)
        px_store_pack_job(s->store, c->proc.nspace, &b); /* a copy of the encoded job */
    send_frame(s, c, &b, NULL, page);
}

/* What a host holds while it decides on a handshake or a finalize: the
 * process's name, looked up again when the answer comes, since the host
 * may deregister the process meanwhile. */
typedef struct px_cref {
    px_server *srv;
    pmix_proc_t proc;
} px_cref;

static px_cref *cref_new(px_server *s, const px_sclient *c)
{
    px_cref *r = malloc(sizeof(*r));

    if (r != NULL) {
        r->srv = s;
        r->proc = c->proc;
    }
    return r;
}

/* Drop a client from a timer, not from inside the operation that found
 * it broken (which may be walking lists the drop changes). Timers run with
 * the engine lock held. The pending drops are on the server's list, so
 * that px_server_destroy cancels their timers. */
static void drop_now(void *arg)
{
    px_drop *d = arg;
    px_server *s = d->srv;
    px_sclient *c = px_srv_client(s, &d->proc);

    for (px_drop **pp = &s->drops; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == d) {
            *pp = d->next;
            break;
        }
    }
    free(d);
    if (c == NULL || !c->has_conn)
        return;
    s->pops->close(s->pctx, c->conn);
    px_srv_forget_conn(s, c->conn);
    c->has_conn = false;
    if (c->tool)
        px_srv_tool_gone(s, c);
    else if (c->state == PX_SC_FINALIZING)
        finalized(c);
    else if (c->state != PX_SC_FINALIZED)
        client_died(s, c, PMIX_ERR_LOST_CONNECTION);
}

static void drop_later(px_server *s, px_sclient *c)
{
    px_drop *d;

    for (d = s->drops; d != NULL; d = d->next)
        if (d->proc.rank == c->proc.rank &&
            strncmp(d->proc.nspace, c->proc.nspace, PMIX_MAX_NSLEN) == 0)
            return; /* already on its way out */
    d = calloc(1, sizeof(*d));
    if (d == NULL)
        return; /* nothing more can be done: the client may wait in vain */
    d->srv = s;
    d->proc = c->proc;
    d->timer = s->pops->timer_start(s->pctx, 0, drop_now, d);
    if (d->timer == NULL) {
        free(d);
        return;
    }
    d->next = s->drops;
    s->drops = d;
}

static void connected(px_sclient *c, pmix_status_t status)
{
    px_server *s = c->srv;

    if (c->state != PX_SC_HELLO)
        return; /* the connection went away meanwhile */
    if (status != PMIX_SUCCESS) {
        uint32_t pid =
            c->has_conn && s->pops->peer_pid != NULL ? s->pops->peer_pid(s->pctx, c->conn) : 0;
        px_srv_logf(s, PX_LOG_WARN, "host refused client %s:%u (pid %u): %s", c->proc.nspace,
                    c->proc.rank, pid, PMIx_Error_string(status));
        send_welcome(s, c, c->pending_tag, status);
        c->state = PX_SC_REGISTERED;
        if (c->has_conn) {
            s->pops->close(s->pctx, c->conn);
            px_srv_forget_conn(s, c->conn);
            c->has_conn = false;
        }
        return;
    }
    c->state = PX_SC_CONNECTED;
    if (c->has_conn && s->pops->conn_accepted != NULL)
        s->pops->conn_accepted(s->pctx, c->conn);
    send_welcome(s, c, c->pending_tag, PMIX_SUCCESS);
}

static void connected_cb(pmix_status_t status, void *cbdata);

/* Ask the host about the handshake of `c` on connection `k`. */
static pmix_status_t ask_host(px_server *s, px_sconn *k, px_sclient *c, px_cref *r)
{
    if (s->hops->client_connected2 == NULL)
        return s->hops->client_connected(s->hctx, &c->proc, c->server_object, connected_cb, r);
    pmix_info_t info[3];
    size_t n = 0;
    uint32_t pid = s->pops->peer_pid != NULL ? s->pops->peer_pid(s->pctx, k->id) : 0;
    PMIx_Info_load(&info[n++], PMIX_USERID, &k->uid, PMIX_UINT32);
    PMIx_Info_load(&info[n++], PMIX_GRPID, &k->gid, PMIX_UINT32);
    if (pid != 0) {
        pid_t p = (pid_t)pid;
        PMIx_Info_load(&info[n++], PMIX_PROC_PID, &p, PMIX_PID);
    }
    return s->hops->client_connected2(s->hctx, &c->proc, c->server_object, info, n, connected_cb,
                                      r);
}

/* The host's answer to client_connected; from any thread. */
static void connected_cb(pmix_status_t status, void *cbdata)
{
    px_cref *r = cbdata;
    px_server *s = r->srv;
    px_sclient *c;

    s->pops->lock(s->pctx);
    c = px_srv_client(s, &r->proc);
    if (c != NULL)
        connected(c, status);
    s->pops->unlock(s->pctx);
    free(r);
}

static pmix_status_t do_hello(px_server *s, px_sconn *k, uint32_t tag, px_buf *b)
{
    uint32_t proto, pid;
    pmix_proc_t proc;
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    px_sclient *c;
    pmix_status_t rc;

    if ((rc = px_unpack_u32(b, &proto)) != PMIX_SUCCESS ||
        (rc = px_unpack_proc(b, &proc)) != PMIX_SUCCESS ||
        (rc = px_unpack_u32(b, &pid)) != PMIX_SUCCESS ||
        (rc = px_unpack_info(b, &info, &ninfo)) != PMIX_SUCCESS)
        return rc;
    PMIx_Info_free(info, ninfo); /* the directives matter to the client only, for now */
    if (proto != PX_PROTOCOL) {
        px_srv_logf(s, PX_LOG_ERROR, "connection %llu speaks protocol %u, this server %u",
                    (unsigned long long)k->id, proto, PX_PROTOCOL);
        return PMIX_ERR_NOT_SUPPORTED;
    }
    if (px_buf_left(b) > 0) { /* the optional role byte */
        uint8_t role;
        if ((rc = px_unpack_u8(b, &role)) != PMIX_SUCCESS)
            return rc;
        if (role == PX_ROLE_TOOL)
            return px_srv_tool_hello(s, k, tag, &proc);
        if (role != PX_ROLE_CLIENT)
            return PMIX_ERR_BAD_PARAM;
    }
    c = px_srv_client(s, &proc);
    if (c == NULL) {
        px_srv_logf(s, PX_LOG_ERROR, "connection %llu claims to be %s:%u, which is not registered",
                    (unsigned long long)k->id, proc.nspace, proc.rank);
        return PMIX_ERR_NOT_FOUND;
    }
    if (c->uid != k->uid || c->gid != k->gid) {
        px_srv_logf(s, PX_LOG_ERROR,
                    "connection %llu claims to be %s:%u but runs as uid %u gid %u, not %u/%u",
                    (unsigned long long)k->id, proc.nspace, proc.rank, k->uid, k->gid, c->uid,
                    c->gid);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    if (c->state != PX_SC_REGISTERED) {
        px_srv_logf(s, PX_LOG_ERROR, "connection %llu: %s:%u is already connected or has ended",
                    (unsigned long long)k->id, proc.nspace, proc.rank);
        return PMIX_ERR_EXISTS;
    }
    k->client = c;
    c->conn = k->id;
    c->has_conn = true;
    c->state = PX_SC_HELLO;
    c->pending_tag = tag;
    rc = PMIX_OPERATION_SUCCEEDED;
    if (s->hops->client_connected != NULL || s->hops->client_connected2 != NULL) {
        px_cref *r = cref_new(s, c);
        if (r == NULL) {
            rc = PMIX_ERR_NOMEM;
        } else {
            rc = ask_host(s, k, c, r);
            if (rc != PMIX_SUCCESS)
                free(r); /* the host will not call back */
        }
    }
    if (rc == PMIX_OPERATION_SUCCEEDED)
        connected(c, PMIX_SUCCESS);
    else if (rc != PMIX_SUCCESS)
        connected(c, rc);
    return PMIX_SUCCESS;
}

/* ---- finalize ---- */

static void finalized(px_sclient *c)
{
    if (c->state != PX_SC_FINALIZING)
        return;
    c->state = PX_SC_FINALIZED;
    /* a Get waiting for its data will not get any more */
    px_srv_get_proc_died(c->srv, &c->proc, PMIX_ERR_NOT_FOUND);
    px_srv_reply_status(c->srv, c, PX_MSG_REPLY, c->pending_tag, PMIX_SUCCESS);
}

/* The host's answer to client_finalized; from any thread. */
static void finalized_cb(pmix_status_t status, void *cbdata)
{
    px_cref *r = cbdata;
    px_server *s = r->srv;
    px_sclient *c;

    s->pops->lock(s->pctx);
    c = px_srv_client(s, &r->proc);
    if (c != NULL)
        finalized(c);
    s->pops->unlock(s->pctx);
    free(r);
}

static pmix_status_t do_finalize(px_server *s, px_sclient *c, uint32_t tag)
{
    pmix_status_t rc = PMIX_OPERATION_SUCCEEDED;

    if (c->tool) { /* forgotten when its connection closes */
        c->state = PX_SC_FINALIZED;
        px_srv_reply_status(s, c, PX_MSG_REPLY, tag, PMIX_SUCCESS);
        return PMIX_SUCCESS;
    }
    c->state = PX_SC_FINALIZING;
    c->pending_tag = tag;
    /* it will not arrive on the page again: later fences of its namespace
     * are the server's (which waits, or fails them, as for any fence) */
    px_srv_page_break(s, px_srv_nspace(s, c->proc.nspace), "a process finalized");
    if (s->hops->client_finalized != NULL) {
        px_cref *r = cref_new(s, c);
        if (r != NULL) {
            rc = s->hops->client_finalized(s->hctx, &c->proc, c->server_object, finalized_cb, r);
            if (rc != PMIX_SUCCESS)
                free(r);
        }
    }
    if (rc != PMIX_SUCCESS)
        finalized(c);
    return PMIX_SUCCESS;
}

static pmix_status_t do_commit(px_server *s, px_sclient *c, px_buf *b)
{
    pmix_status_t rc = px_store_unpack_commit(s->store, &c->proc, b);

    if (rc != PMIX_SUCCESS)
        return rc;
    c->committed = true;
    c->ncommits++;
    px_srv_get_committed(s, &c->proc);
    px_srv_page_committed(s, c);
    return PMIX_SUCCESS;
}

/* ---- the sink ---- */

static pmix_status_t sink_opened(void *sctx, uint64_t conn, uint32_t uid, uint32_t gid)
{
    px_server *s = sctx;
    px_sconn *k;
    bool known = false;

    for (px_sclient *c = s->clients; c != NULL && !known; c = c->next)
        known = c->uid == uid && !c->tool;
    if (!known && !px_srv_tool_uid_ok(s, uid)) {
        px_srv_logf(s, PX_LOG_WARN,
                    "refused connection %llu from uid %u: no registered client runs as that user"
                    " and no tool may",
                    (unsigned long long)conn, uid);
        return PMIX_ERR_NO_PERMISSIONS;
    }
    k = calloc(1, sizeof(*k));
    if (k == NULL)
        return PMIX_ERR_NOMEM;
    k->id = conn;
    k->uid = uid;
    k->gid = gid;
    k->next = s->conns;
    s->conns = k;
    return PMIX_SUCCESS;
}

static const char *msg_name(uint16_t type)
{
    switch (type) {
    case PX_MSG_HELLO: return "HELLO";
    case PX_MSG_FINALIZE: return "FINALIZE";
    case PX_MSG_ABORT: return "ABORT";
    case PX_MSG_COMMIT: return "COMMIT";
    case PX_MSG_FENCE: return "FENCE";
    case PX_MSG_GET: return "GET";
    case PX_MSG_NOTIFY: return "NOTIFY";
    case PX_MSG_JCTRL: return "JCTRL";
    case PX_MSG_NOPAGE: return "NOPAGE";
    case PX_MSG_PCOLLECT: return "PCOLLECT";
    case PX_MSG_QUERY: return "QUERY";
    case PX_MSG_GROUP: return "GROUP";
    case PX_MSG_PUBLISH: return "PUBLISH";
    case PX_MSG_LOOKUP: return "LOOKUP";
    case PX_MSG_UNPUBLISH: return "UNPUBLISH";
    case PX_MSG_SPAWN: return "SPAWN";
    default: return "unknown";
    }
}

/* Forget connection `k` after a protocol error, failing what its client
 * had pending; the platform closes it when we return an error. */
static void drop_conn(px_server *s, px_sconn *k, pmix_status_t why)
{
    px_sclient *c = k->client;
    uint64_t id = k->id;

    if (c != NULL) {
        c->has_conn = false;
        if (c->tool)
            px_srv_tool_gone(s, c);
        else if (c->state == PX_SC_HELLO)
            c->state = PX_SC_REGISTERED;
        else
            client_died(s, c, why);
    }
    px_srv_forget_conn(s, id);
}

static pmix_status_t sink_deliver(void *sctx, uint64_t conn, const void *frame, size_t len)
{
    px_server *s = sctx;
    px_sconn *k = find_conn(s, conn);
    px_frame_hdr hdr;
    px_buf b;
    pmix_status_t rc;
    px_sclient *c;

    if (k == NULL)
        return PMIX_ERR_NOT_FOUND;
    rc = px_frame_parse(frame, len, PX_FRAME_MAX_DEFAULT, &hdr);
    if (rc != PMIX_SUCCESS || (size_t)hdr.len + PX_FRAME_HDR != len) {
        px_srv_logf(s, PX_LOG_ERROR, "dropping connection %llu: malformed frame header",
                    (unsigned long long)conn);
        drop_conn(s, k, PMIX_ERR_UNPACK_FAILURE);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    px_buf_view_payload(&b, frame, len);
    c = k->client;
    if (c == NULL) {
        rc = hdr.type == PX_MSG_HELLO && hdr.tag != 0 ? do_hello(s, k, hdr.tag, &b)
                                                      : PMIX_ERR_BAD_PARAM;
    } else if (c->state != PX_SC_CONNECTED) {
        rc = PMIX_ERR_BAD_PARAM; /* nothing is allowed before WELCOME or after FINALIZE */
    } else {
        switch (hdr.type) {
        case PX_MSG_FINALIZE: rc = do_finalize(s, c, hdr.tag); break;
        case PX_MSG_COMMIT: rc = do_commit(s, c, &b); break;
        case PX_MSG_FENCE: rc = px_srv_fence(s, c, hdr.tag, &b); break;
        case PX_MSG_GET: rc = px_srv_get(s, c, hdr.tag, &b); break;
        case PX_MSG_ABORT: rc = px_srv_abort(s, c, hdr.tag, &b); break;
        case PX_MSG_NOTIFY: rc = px_srv_notify(s, c, &b); break;
        case PX_MSG_JCTRL: rc = px_srv_jctrl(s, c, hdr.tag, &b); break;
        case PX_MSG_QUERY: rc = px_srv_query(s, c, hdr.tag, &b); break;
        case PX_MSG_PCOLLECT: rc = px_srv_page_collect(s, c, &b); break;
        case PX_MSG_GROUP: rc = px_srv_group(s, c, hdr.tag, &b); break;
        case PX_MSG_PUBLISH: rc = px_srv_publish(s, c, hdr.tag, &b); break;
        case PX_MSG_LOOKUP: rc = px_srv_lookup(s, c, hdr.tag, &b); break;
        case PX_MSG_UNPUBLISH: rc = px_srv_unpublish(s, c, hdr.tag, &b); break;
        case PX_MSG_SPAWN: rc = px_srv_spawn(s, c, hdr.tag, &b); break;
        case PX_MSG_IOF_PULL: rc = px_srv_iof_pull(s, c, hdr.tag, &b); break;
        case PX_MSG_IOF_DEREG: rc = px_srv_iof_dereg(s, c, hdr.tag, &b); break;
        case PX_MSG_IOF_PUSH: rc = px_srv_iof_push(s, c, hdr.tag, &b); break;
        case PX_MSG_NOPAGE:
            if (c->tool)
                break;
            px_srv_page_break(s, px_srv_nspace(s, c->proc.nspace), "a process cannot map it");
            break;
        default: rc = PMIX_ERR_BAD_PARAM; break;
        }
    }
    if (rc != PMIX_SUCCESS) {
        /* k may be stale if a host callback dropped it; look again */
        k = find_conn(s, conn);
        if (k == NULL)
            return rc;
        if (k->client != NULL)
            px_srv_logf(s, PX_LOG_ERROR,
                        "dropping client %s:%u (connection %llu): bad %s message (%u bytes): %s",
                        k->client->proc.nspace, k->client->proc.rank, (unsigned long long)conn,
                        msg_name(hdr.type), hdr.len, PMIx_Error_string(rc));
        else
            px_srv_logf(s, PX_LOG_ERROR,
                        "dropping connection %llu (uid %u): bad %s message before the handshake"
                        " completed: %s",
                        (unsigned long long)conn, k->uid, msg_name(hdr.type),
                        PMIx_Error_string(rc));
        drop_conn(s, k, PMIX_ERR_LOST_CONNECTION);
        return rc;
    }
    return PMIX_SUCCESS;
}

static void sink_closed(void *sctx, uint64_t conn, pmix_status_t why)
{
    px_server *s = sctx;
    px_sconn *k = find_conn(s, conn);
    px_sclient *c;

    if (k == NULL)
        return;
    c = k->client;
    px_srv_forget_conn(s, conn);
    if (c == NULL)
        return;
    c->has_conn = false;
    if (c->tool) {
        px_srv_tool_gone(s, c);
        return;
    }
    if (c->state == PX_SC_HELLO) {
        c->state = PX_SC_REGISTERED;
        return;
    }
    if (c->state == PX_SC_FINALIZING)
        finalized(c); /* it did finalize; it just did not wait for the answer */
    if (c->state == PX_SC_FINALIZED) {
        /* gone for good (unless it initializes again): the fences it has
         * not joined would wait for ever */
        px_srv_fence_departed(s, c);
        px_srv_group_departed(s, c);
        return;
    }
    client_died(s, c, PMIX_ERR_PROC_TERM_WO_SYNC);
}

static const px_sink server_sink = {
    .opened = sink_opened,
    .deliver = sink_deliver,
    .closed = sink_closed,
};

const px_sink *px_server_sink(void)
{
    return &server_sink;
}
