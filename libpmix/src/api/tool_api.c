/*
 * tool_api.c - the Standard's tool calls: PMIx_tool_init, _finalize,
 * _disconnect, _attach_to_server, _get_servers, _set_server.
 *
 * A tool is the caller's px_api_client (the one PMIx_Init would use) whose
 * engine is a client engine flagged as a tool (client/tool.c), on the
 * posix platform. Every client call (PMIx_Get, PMIx_Query_info, events)
 * then works in a tool as in a client.
 *
 * Finding the server (the Standard's order, Chap_API_Tools):
 *   1. PMIX_SERVER_URI: that server only.
 *   2. PMIX_SERVER_PIDINFO: the rendezvous file of that pid (px_rndz.h).
 *   3. PMIX_SERVER_NSPACE: the file of that namespace (the server's own,
 *      or a job's it serves).
 *   4. PMIX_CONNECT_TO_SYSTEM: the system server's file; an error if none.
 *   5. PMIX_CONNECT_SYSTEM_FIRST: the system server if there is one,
 *      else on down the list.
 *   6. The environment a launcher gave a tool it started: PMIX_SERVER_URI
 *      and, with PMIX_NAMESPACE and PMIX_RANK, that registered identity
 *      (the tool then connects as that process, as a client does).
 *   7. Every server's pid file in the session directory, newest first,
 *      until one accepts.
 * Each of 1-5 is tried 1 + PMIX_CONNECT_MAX_RETRIES times,
 * PMIX_CONNECT_RETRY_DELAY seconds apart (default: once).
 *
 * The tool asks for the name PMIX_TOOL_NSPACE / PMIX_TOOL_RANK if given;
 * the server's host decides. PMIX_TOOL_DO_NOT_CONNECT initializes without
 * a server, and PMIX_TOOL_CONNECT_OPTIONAL goes on without one when none
 * is found; such a tool names itself (PMIX_TOOL_NSPACE, or
 * "pmix.tool.<host>.<pid>", rank 0), and calls that need a server fail
 * with PMIX_ERR_UNREACH until PMIx_tool_attach_to_server connects it.
 *
 * One server at a time: attaching to another disconnects the current one
 * (docs/abi.md). Each connection attempt gets a fresh platform and
 * engine; a failed one is torn down whole.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix_tool.h>

#include "api/px_api.h"
#include "api/px_rndz.h"
#include "common/px_common.h"
#include "platform/px_posix.h"

/* What PMIx_tool_init was asked, kept for PMIx_tool_attach_to_server.
 * Under the px_api_client's init_lock. */
static struct {
    pmix_proc_t want; /* PMIX_TOOL_NSPACE / _RANK, or an empty namespace */
    bool connected;   /* the engine has a server */
} T;

typedef struct sync_op {
    px_wait w;
    px_api_client *ac;
    pmix_status_t status;
} sync_op;

static void sync_cb(pmix_status_t status, void *cbdata)
{
    sync_op *s = cbdata;

    s->status = status;
    s->ac->pops->wake(s->ac->pctx, &s->w);
}

/* Run an engine operation to its end: rc is what the engine returned. */
static pmix_status_t finish(sync_op *s, pmix_status_t rc)
{
    if (rc == PMIX_OPERATION_SUCCEEDED)
        return PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS)
        return rc;
    s->ac->pops->wait(s->ac->pctx, &s->w);
    return s->status;
}

/* The tool's own name when no server gives one. */
static void own_name(pmix_proc_t *p)
{
    char host[200];

    if (T.want.nspace[0] != '\0') {
        *p = T.want;
        return;
    }
    if (gethostname(host, sizeof(host) - 1) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    memset(p, 0, sizeof(*p));
    snprintf(p->nspace, sizeof(p->nspace), "pmix.tool.%.200s.%ld", host, (long)getpid());
    p->rank = 0;
}

/* Give `ac` a platform and an engine that is connected to nothing. */
static pmix_status_t open_unconnected(px_api_client *ac, const pmix_proc_t *self, char *err,
                                      size_t errlen)
{
    px_posix *p = px_posix_create(true, err, errlen);
    px_client *c;

    if (p == NULL)
        return PMIX_ERR_OUT_OF_RESOURCE;
    if ((c = px_client_create(px_posix_ops(), p, self)) == NULL) {
        px_posix_destroy(p);
        return PMIX_ERR_NOMEM;
    }
    px_client_set_tool(c);
    px_api_posix_adopt(ac, p, c);
    return PMIX_SUCCESS;
}

/* Connect `ac` to the server at `uri` and shake hands, as a tool (or, with
 * `as` set, as that registered process). On failure `ac` has no engine. */
static pmix_status_t try_uri(px_api_client *ac, const char *uri, const pmix_proc_t *as,
                             const pmix_info_t info[], size_t ninfo, char *err, size_t errlen)
{
    px_posix *p = px_posix_create(true, err, errlen);
    px_client *c;
    pmix_status_t rc;
    sync_op s;

    if (p == NULL)
        return PMIX_ERR_OUT_OF_RESOURCE;
    if ((c = px_client_create(px_posix_ops(), p, as != NULL ? as : &T.want)) == NULL) {
        px_posix_destroy(p);
        return PMIX_ERR_NOMEM;
    }
    if (as == NULL)
        px_client_set_tool(c);
    rc = px_posix_connect(p, uri, 0, px_client_sink(), c, err, errlen);
    if (rc != PMIX_SUCCESS) {
        px_client_destroy(c);
        px_posix_destroy(p);
        return rc;
    }
    px_api_posix_adopt(ac, p, c);
    memset(&s, 0, sizeof(s));
    s.ac = ac;
    ac->pops->lock(ac->pctx);
    rc = px_client_connect(c, info, ninfo, sync_cb, &s);
    ac->pops->unlock(ac->pctx);
    rc = finish(&s, rc);
    if (rc != PMIX_SUCCESS) {
        snprintf(err, errlen, "the server at %s refused the tool: %s", uri, PMIx_Error_string(rc));
        ac->teardown(ac);
        return rc;
    }
    return PMIX_SUCCESS;
}

typedef struct each_arg {
    px_api_client *ac;
    const pmix_info_t *info;
    size_t ninfo;
    char *err;
    size_t errlen;
} each_arg;

static bool try_each(const char *uri, void *arg)
{
    each_arg *a = arg;

    return try_uri(a->ac, uri, NULL, a->info, a->ninfo, a->err, a->errlen) == PMIX_SUCCESS;
}

/* The URI of the rendezvous file for `key` (NULL: the system server's). */
static pmix_status_t find_uri(const char *key, const pmix_info_t info[], size_t ninfo, char *uri,
                              size_t len, char *err, size_t errlen)
{
    char base[512], name[600];

    if (key == NULL) {
        const char *d = px_info_string(info, ninfo, PMIX_SYSTEM_TMPDIR);
        if (d != NULL)
            snprintf(base, sizeof(base), "%s", d);
        else
            px_rndz_system_dir(base, sizeof(base));
    } else {
        const char *d = px_info_string(info, ninfo, PMIX_SERVER_TMPDIR);
        if (d != NULL)
            snprintf(base, sizeof(base), "%s", d);
        else
            px_rndz_session_dir(base, sizeof(base));
    }
    px_rndz_name(key, name, sizeof(name));
    if (px_rndz_find(base, name, key == NULL, uri, len) == PMIX_SUCCESS)
        return PMIX_SUCCESS;
    snprintf(err, errlen, "no rendezvous file %.200s under %.250s", name, base);
    return PMIX_ERR_NOT_FOUND;
}

/* One mechanism, with its retries: `key` as find_uri's, or `uri` given. */
static pmix_status_t attempt(px_api_client *ac, const char *uri, const char *key, bool by_key,
                             const pmix_info_t info[], size_t ninfo, char *err, size_t errlen)
{
    uint64_t retries = 0, delay = 0;
    const pmix_info_t *i;
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;
    char found[4200];

    if ((i = px_info_find(info, ninfo, PMIX_CONNECT_MAX_RETRIES)) != NULL)
        (void)px_value_get_number(&i->value, &retries);
    if ((i = px_info_find(info, ninfo, PMIX_CONNECT_RETRY_DELAY)) != NULL)
        (void)px_value_get_number(&i->value, &delay);
    if (retries > 1000)
        retries = 1000;
    for (uint64_t n = 0; n <= retries; n++) {
        if (n > 0 && delay > 0) {
            struct timespec ts = {(time_t)(delay > 3600 ? 3600 : delay), 0};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
        }
        if (by_key) {
            rc = find_uri(key, info, ninfo, found, sizeof(found), err, errlen);
            if (rc != PMIX_SUCCESS)
                continue;
            uri = found;
        }
        rc = try_uri(ac, uri, NULL, info, ninfo, err, errlen);
        if (rc == PMIX_SUCCESS || rc == PMIX_ERR_NO_PERMISSIONS)
            return rc;
    }
    return rc;
}

/* Connect `ac` as the Standard's order says (above). */
static pmix_status_t connect_server(px_api_client *ac, const pmix_info_t info[], size_t ninfo,
                                    char *err, size_t errlen)
{
    const char *uri = px_info_string(info, ninfo, PMIX_SERVER_URI);
    const char *ns = px_info_string(info, ninfo, PMIX_SERVER_NSPACE);
    const pmix_info_t *pid = px_info_find(info, ninfo, PMIX_SERVER_PIDINFO);
    char base[512];
    uint64_t v;
    pmix_status_t rc;

    if (uri != NULL)
        return attempt(ac, uri, NULL, false, info, ninfo, err, errlen);
    if (pid != NULL) {
        char key[32];
        if (px_value_get_number(&pid->value, &v) != PMIX_SUCCESS || v == 0) {
            snprintf(err, errlen, "PMIX_SERVER_PIDINFO is not a pid");
            return PMIX_ERR_BAD_PARAM;
        }
        snprintf(key, sizeof(key), "%llu", (unsigned long long)v);
        return attempt(ac, NULL, key, true, info, ninfo, err, errlen);
    }
    if (ns != NULL)
        return attempt(ac, NULL, ns, true, info, ninfo, err, errlen);
    if (px_info_flag(info, ninfo, PMIX_CONNECT_TO_SYSTEM))
        return attempt(ac, NULL, NULL, true, info, ninfo, err, errlen);
    if (px_info_flag(info, ninfo, PMIX_CONNECT_SYSTEM_FIRST)) {
        rc = attempt(ac, NULL, NULL, true, info, ninfo, err, errlen);
        if (rc == PMIX_SUCCESS)
            return rc;
    }
    if ((uri = getenv("PMIX_SERVER_URI")) != NULL) {
        const char *ens = getenv("PMIX_NAMESPACE"), *erank = getenv("PMIX_RANK");
        pmix_proc_t as;
        char *end;
        unsigned long r;
        if (ens == NULL || erank == NULL)
            return try_uri(ac, uri, NULL, info, ninfo, err, errlen);
        r = strtoul(erank, &end, 10);
        if (*erank == '\0' || *end != '\0' || r >= PMIX_RANK_VALID ||
            strlen(ens) > PMIX_MAX_NSLEN) {
            snprintf(err, errlen, "malformed PMIX_NAMESPACE or PMIX_RANK in the environment");
            return PMIX_ERR_BAD_PARAM;
        }
        PMIx_Load_procid(&as, ens, (pmix_rank_t)r);
        return try_uri(ac, uri, &as, info, ninfo, err, errlen);
    }
    if (px_info_string(info, ninfo, PMIX_SERVER_TMPDIR) != NULL)
        snprintf(base, sizeof(base), "%s", px_info_string(info, ninfo, PMIX_SERVER_TMPDIR));
    else
        px_rndz_session_dir(base, sizeof(base));
    each_arg a = {ac, info, ninfo, err, errlen};
    snprintf(err, errlen, "no PMIx server accepted the tool (none found under %.300s)", base);
    return px_rndz_each(base, try_each, &a);
}

/* Connect, or (optional) go on unconnected; `ac` has an engine after. */
static pmix_status_t connect_or_not(px_api_client *ac, const pmix_info_t info[], size_t ninfo,
                                    bool optional)
{
    char err[512] = "";
    pmix_proc_t self;
    pmix_status_t rc = connect_server(ac, info, ninfo, err, sizeof(err));

    if (rc == PMIX_SUCCESS) {
        T.connected = true;
        return PMIX_SUCCESS;
    }
    T.connected = false;
    if (!optional) {
        fprintf(stderr, "pmix: tool: %s (%s)\n", err[0] ? err : "cannot connect",
                PMIx_Error_string(rc));
        return rc;
    }
    own_name(&self);
    return open_unconnected(ac, &self, err, sizeof(err));
}

/* Leave the server (FINALIZE, answered) and drop engine and platform. */
static void leave(px_api_client *ac)
{
    sync_op s;

    if (T.connected && px_client_connected(ac->client)) {
        memset(&s, 0, sizeof(s));
        s.ac = ac;
        ac->pops->lock(ac->pctx);
        pmix_status_t rc = px_client_finalize(ac->client, sync_cb, &s);
        ac->pops->unlock(ac->pctx);
        (void)finish(&s, rc);
    }
    px_api_tool_server_stop(ac); /* the tool's own server goes with its engine */
    ac->teardown(ac);
    T.connected = false;
}

PMIX_EXPORT pmix_status_t PMIx_tool_init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
    px_api_client *ac = px_api_current();
    const char *ns = px_info_string(info, ninfo, PMIX_TOOL_NSPACE);
    const pmix_info_t *rk = px_info_find(info, ninfo, PMIX_TOOL_RANK);
    char err[256] = "";
    pmix_status_t rc;
    uint64_t v;

    if (info == NULL && ninfo > 0)
        return PMIX_ERR_BAD_PARAM;
    if (px_api_server_active())
        return PMIX_ERR_NOT_SUPPORTED; /* one role per process (Chap_API_Init) */
    pthread_mutex_lock(&ac->init_lock);
    if (ac->refcount > 0) {
        ac->refcount++;
        goto done;
    }
    memset(&T.want, 0, sizeof(T.want));
    if (ns != NULL) {
        if (strlen(ns) > PMIX_MAX_NSLEN) {
            pthread_mutex_unlock(&ac->init_lock);
            return PMIX_ERR_BAD_PARAM;
        }
        PMIx_Load_nspace(T.want.nspace, ns);
        if (rk != NULL && px_value_get_number(&rk->value, &v) == PMIX_SUCCESS)
            T.want.rank = (pmix_rank_t)v;
    }
    if (px_info_flag(info, ninfo, PMIX_TOOL_DO_NOT_CONNECT)) {
        pmix_proc_t self;
        own_name(&self);
        T.connected = false;
        rc = open_unconnected(ac, &self, err, sizeof(err));
    } else {
        rc = connect_or_not(ac, info, ninfo, px_info_flag(info, ninfo, PMIX_TOOL_CONNECT_OPTIONAL));
    }
    if (rc != PMIX_SUCCESS) {
        pthread_mutex_unlock(&ac->init_lock);
        return rc;
    }
    ac->external_progress = -1;
    if (px_api_tool_server_wanted(info, ninfo)) {
        rc = px_api_tool_server_start(ac, T.connected);
        if (rc != PMIX_SUCCESS) {
            leave(ac);
            pthread_mutex_unlock(&ac->init_lock);
            return rc;
        }
        px_api_need_progress(ac); /* peers are accepted while the tool works */
    }
    ac->refcount = 1;
done:
    if (proc != NULL)
        *proc = *px_client_self(ac->client);
    pthread_mutex_unlock(&ac->init_lock);
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_finalize(void)
{
    px_api_client *ac = px_api_current();

    pthread_mutex_lock(&ac->init_lock);
    if (ac->refcount <= 0 || ac->client == NULL) {
        pthread_mutex_unlock(&ac->init_lock);
        return PMIX_ERR_INIT;
    }
    if (--ac->refcount > 0) {
        pthread_mutex_unlock(&ac->init_lock);
        return PMIX_SUCCESS;
    }
    leave(ac);
    ac->external_progress = -1;
    pthread_mutex_unlock(&ac->init_lock);
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_attach_to_server(pmix_proc_t *proc, pmix_proc_t *server,
                                                     pmix_info_t info[], size_t ninfo)
{
    px_api_client *ac = px_api_current();
    pmix_status_t rc;

    if (info == NULL && ninfo > 0)
        return PMIX_ERR_BAD_PARAM;
    pthread_mutex_lock(&ac->init_lock);
    if (ac->refcount <= 0 || ac->client == NULL) {
        pthread_mutex_unlock(&ac->init_lock);
        return PMIX_ERR_INIT;
    }
    /* one server at a time: the current one goes first */
    leave(ac);
    rc = connect_or_not(ac, info, ninfo, false);
    if (rc != PMIX_SUCCESS) {
        pmix_proc_t self;
        char err[256];
        own_name(&self);
        if (open_unconnected(ac, &self, err, sizeof(err)) != PMIX_SUCCESS)
            ac->refcount = 0; /* nothing left to run on */
        pthread_mutex_unlock(&ac->init_lock);
        return rc;
    }
    if (proc != NULL)
        *proc = *px_client_self(ac->client);
    if (server != NULL)
        *server = *px_client_server(ac->client);
    pthread_mutex_unlock(&ac->init_lock);
    return PMIX_SUCCESS;
}

static bool is_server(px_api_client *ac, const pmix_proc_t *server)
{
    const pmix_proc_t *cur = px_client_server(ac->client);

    return T.connected && px_client_connected(ac->client) && server != NULL &&
           PMIx_Check_procid(server, cur);
}

PMIX_EXPORT pmix_status_t PMIx_tool_disconnect(const pmix_proc_t *server)
{
    px_api_client *ac = px_api_current();
    pmix_proc_t self;
    char err[256];
    pmix_status_t rc;

    pthread_mutex_lock(&ac->init_lock);
    if (ac->refcount <= 0 || ac->client == NULL) {
        pthread_mutex_unlock(&ac->init_lock);
        return PMIX_ERR_INIT;
    }
    if (!is_server(ac, server)) {
        pthread_mutex_unlock(&ac->init_lock);
        return PMIX_ERR_NOT_FOUND;
    }
    self = *px_client_self(ac->client);
    leave(ac);
    /* still initialized: it keeps its name until it attaches again */
    rc = open_unconnected(ac, &self, err, sizeof(err));
    if (rc != PMIX_SUCCESS)
        ac->refcount = 0;
    pthread_mutex_unlock(&ac->init_lock);
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_tool_get_servers(pmix_proc_t *servers[], size_t *nservers)
{
    px_api_client *ac = px_api_current();

    if (servers == NULL || nservers == NULL)
        return PMIX_ERR_BAD_PARAM;
    *servers = NULL;
    *nservers = 0;
    /* A tool that made only blocking calls has no progress thread: one
     * pass reads what came, so a server that has gone is seen gone (and
     * its PMIX_ERR_LOST_CONNECTION event raised) before it is listed.
     * Outside init_lock: a handler may call back into the tool API. */
    PMIx_Progress();
    pthread_mutex_lock(&ac->init_lock);
    if (ac->refcount <= 0 || ac->client == NULL) {
        pthread_mutex_unlock(&ac->init_lock);
        return PMIX_ERR_INIT;
    }
    if (T.connected && px_client_connected(ac->client)) { /* not one whose connection is lost */
        if ((*servers = PMIx_Proc_create(1)) == NULL) {
            pthread_mutex_unlock(&ac->init_lock);
            return PMIX_ERR_NOMEM;
        }
        (*servers)[0] = *px_client_server(ac->client);
        *nservers = 1;
    }
    pthread_mutex_unlock(&ac->init_lock);
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_tool_set_server(const pmix_proc_t *server, pmix_info_t info[],
                                               size_t ninfo)
{
    px_api_client *ac = px_api_current();
    pmix_status_t rc;

    pthread_mutex_lock(&ac->init_lock);
    if (ac->refcount <= 0 || ac->client == NULL)
        rc = PMIX_ERR_INIT;
    else
        rc = is_server(ac, server) ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
    pthread_mutex_unlock(&ac->init_lock);
    /* A peer of the tool's own server (a launcher it started): waits for
     * its connection with PMIX_WAIT_FOR_CONNECTION (docs/abi.md). */
    if (rc == PMIX_ERR_NOT_FOUND)
        rc = px_api_tool_wait_peer(server, info, ninfo);
    return rc;
}
