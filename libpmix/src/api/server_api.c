/*
 * server_api.c - the Standard's server calls: one default server engine
 * per process, on the posix platform, behind the Standard's host module.
 *
 * The Standard's pmix_server_module_t upcalls carry no host context, so
 * the adapter below passes the module itself as the engine's host
 * context and forwards each upcall. Hosts that want several servers in one
 * process (pmixsim) use the engine (server/px_server.h) directly.
 *
 * Rendezvous: PMIx_server_init listens on a Unix socket in the directory
 * given by PMIX_SERVER_TMPDIR (created with mode 0700 if missing), or in a
 * private directory it creates under $TMPDIR (or /tmp) and removes at
 * PMIx_server_finalize. PMIx_server_setup_fork tells each client where.
 */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/px_api.h"
#include "common/px_common.h"
#include "platform/px_posix.h"
#include "server/px_server.h"

static struct {
    bool active;
    int refcount; /* PMIx_server_init calls not yet balanced */
    pmix_server_module_t module;
    px_posix *posix;
    px_server *srv;
    char *uri;
    char dir[512];
    bool made_dir;
} S;

bool px_api_server_active(void)
{
    return S.active;
}

/* ---- the adapter: px_server_host over pmix_server_module_t ---- */

static pmix_status_t ad_connected(void *hctx, const pmix_proc_t *proc, void *obj,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;

    if (m->client_connected == NULL)
        return PMIX_OPERATION_SUCCEEDED;
    return m->client_connected(proc, obj, cbfunc, cbdata);
}

/* The engine says who the peer is (PMIX_PROC_PID, PMIX_USERID,
 * PMIX_GRPID); a host with client_connected2 hears it. */
static pmix_status_t ad_connected2(void *hctx, const pmix_proc_t *proc, void *obj,
                                   const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                   void *cbdata)
{
    const pmix_server_module_t *m = hctx;

    if (m->client_connected2 != NULL)
        return m->client_connected2(proc, obj, (pmix_info_t *)info, ninfo, cbfunc, cbdata);
    return ad_connected(hctx, proc, obj, cbfunc, cbdata);
}

static pmix_status_t ad_finalized(void *hctx, const pmix_proc_t *proc, void *obj,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;

    if (m->client_finalized == NULL)
        return PMIX_OPERATION_SUCCEEDED;
    return m->client_finalized(proc, obj, cbfunc, cbdata);
}

static pmix_status_t ad_abort(void *hctx, const pmix_proc_t *proc, void *obj, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;

    if (m->abort == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return m->abort(proc, obj, status, msg, procs, nprocs, cbfunc, cbdata);
}

static pmix_status_t ad_fence(void *hctx, const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, char *data, size_t ndata,
                              pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;

    if (m->fence_nb == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return m->fence_nb(procs, nprocs, info, ninfo, data, ndata, cbfunc, cbdata);
}

static pmix_status_t ad_dmodex(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                               size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;

    if (m->direct_modex == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return m->direct_modex(proc, info, ninfo, cbfunc, cbdata);
}

static pmix_status_t ad_jctrl(void *hctx, const pmix_proc_t *requestor, const pmix_proc_t targets[],
                              size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                              pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_server_module_t *m = hctx;

    if (m->job_control == NULL)
        return PMIX_ERR_NOT_SUPPORTED;
    return m->job_control(requestor, targets, ntargets, directives, ndirs, cbfunc, cbdata);
}

static const px_server_host adapter = {
    .version = PX_SERVER_HOST_VERSION,
    .client_connected = ad_connected,
    .client_finalized = ad_finalized,
    .abort = ad_abort,
    .fence_nb = ad_fence,
    .direct_modex = ad_dmodex,
    .job_control = ad_jctrl,
    .client_connected2 = ad_connected2,
};

/* ---- init / finalize ---- */

PMIX_EXPORT pmix_status_t PMIx_server_init(pmix_server_module_t *module, pmix_info_t info[],
                                           size_t ninfo)
{
    const pmix_info_t *dir = px_info_find(info, ninfo, PMIX_SERVER_TMPDIR);
    char err[256] = "";
    pmix_status_t rc;

    if (S.active) {
        S.refcount++; /* one default server per process, reference-counted */
        return PMIX_SUCCESS;
    }
    memset(&S, 0, sizeof(S));
    if (module != NULL)
        S.module = *module;
    if (dir != NULL && dir->value.type == PMIX_STRING && dir->value.data.string != NULL) {
        snprintf(S.dir, sizeof(S.dir), "%s", dir->value.data.string);
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(S.dir, sizeof(S.dir), "%s/pmix-server.%ld", tmp && *tmp ? tmp : "/tmp",
                 (long)getpid());
        S.made_dir = true;
    }
    S.posix = px_posix_create(false, err, sizeof(err));
    if (S.posix == NULL) {
        fprintf(stderr, "pmix: PMIx_server_init: %s\n", err);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    S.srv = px_server_create(&adapter, &S.module, px_posix_ops(), S.posix);
    if (S.srv == NULL) {
        px_posix_destroy(S.posix);
        return PMIX_ERR_NOMEM;
    }
    rc = px_posix_listen(S.posix, S.dir, px_server_sink(), S.srv, &S.uri, err, sizeof(err));
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmix: PMIx_server_init: cannot listen in %s: %s\n", S.dir, err);
        px_posix_stop(S.posix);
        px_server_destroy(S.srv);
        px_posix_destroy(S.posix);
        return rc;
    }
    S.active = true;
    S.refcount = 1;
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_server_finalize(void)
{
    char sock[600];

    if (!S.active)
        return PMIX_ERR_INIT;
    if (--S.refcount > 0)
        return PMIX_SUCCESS;
    /* Nothing is delivered after px_posix_stop; the server's pending timers
     * are cancelled through the platform, which must still be there. */
    px_posix_stop(S.posix);
    px_server_destroy(S.srv);
    px_posix_destroy(S.posix);
    snprintf(sock, sizeof(sock), "%s/pmix.sock", S.dir);
    (void)unlink(sock);
    if (S.made_dir)
        (void)rmdir(S.dir);
    free(S.uri);
    memset(&S, 0, sizeof(S));
    return PMIX_SUCCESS;
}

#define LOCKED(call)                     \
    ({                                   \
        pmix_status_t rc__;              \
        px_posix_ops()->lock(S.posix);   \
        rc__ = (call);                   \
        px_posix_ops()->unlock(S.posix); \
        rc__;                            \
    })

/* The Standard's rule for registration calls: with a callback, an
 * immediate success is PMIX_OPERATION_SUCCEEDED and the callback is not
 * called; without one, the call is blocking. */
static pmix_status_t immediate(pmix_status_t rc, pmix_op_cbfunc_t cbfunc)
{
    if (rc == PMIX_SUCCESS && cbfunc != NULL)
        return PMIX_OPERATION_SUCCEEDED;
    return rc;
}

PMIX_EXPORT pmix_status_t PMIx_server_register_nspace(const char nspace[], int nlocalprocs,
                                                      pmix_info_t info[], size_t ninfo,
                                                      pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    return immediate(LOCKED(px_server_register_nspace(S.srv, nspace, nlocalprocs, info, ninfo)),
                     cbfunc);
}

PMIX_EXPORT void PMIx_server_deregister_nspace(const char nspace[], pmix_op_cbfunc_t cbfunc,
                                               void *cbdata)
{
    if (S.active) {
        px_posix_ops()->lock(S.posix);
        px_server_deregister_nspace(S.srv, nspace);
        px_posix_ops()->unlock(S.posix);
    }
    if (cbfunc != NULL)
        cbfunc(S.active ? PMIX_SUCCESS : PMIX_ERR_INIT, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_register_client(const pmix_proc_t *proc, uid_t uid, gid_t gid,
                                                      void *server_object, pmix_op_cbfunc_t cbfunc,
                                                      void *cbdata)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    return immediate(LOCKED(px_server_register_client(S.srv, proc, uid, gid, server_object)),
                     cbfunc);
}

PMIX_EXPORT void PMIx_server_deregister_client(const pmix_proc_t *proc, pmix_op_cbfunc_t cbfunc,
                                               void *cbdata)
{
    if (S.active) {
        px_posix_ops()->lock(S.posix);
        px_server_deregister_client(S.srv, proc);
        px_posix_ops()->unlock(S.posix);
    }
    if (cbfunc != NULL)
        cbfunc(S.active ? PMIX_SUCCESS : PMIX_ERR_INIT, cbdata);
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_fork(const pmix_proc_t *proc, char ***env)
{
    pmix_status_t rc;
    char *entry, **e;
    size_t n = 0;

    if (!S.active)
        return PMIX_ERR_INIT;
    rc = LOCKED(px_server_setup_fork(S.srv, proc, env));
    if (rc != PMIX_SUCCESS)
        return rc;
    /* how to reach us: PMIX_SERVER_URI */
    while ((*env)[n] != NULL) {
        if (strncmp((*env)[n], "PMIX_SERVER_URI=", 16) == 0) {
            free((*env)[n]);
            break;
        }
        n++;
    }
    if (asprintf(&entry, "PMIX_SERVER_URI=%s", S.uri) < 0)
        return PMIX_ERR_NOMEM;
    if ((*env)[n] != NULL) {
        (*env)[n] = entry;
        return PMIX_SUCCESS;
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

PMIX_EXPORT pmix_status_t PMIx_server_dmodex_request(const pmix_proc_t *proc,
                                                     pmix_dmodex_response_fn_t cbfunc, void *cbdata)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    return LOCKED(px_server_dmodex_request(S.srv, proc, cbfunc, cbdata));
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_application(const char nspace[], pmix_info_t info[],
                                                        size_t ninfo,
                                                        pmix_setup_application_cbfunc_t cbfunc,
                                                        void *cbdata)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    if (nspace == NULL || cbfunc == NULL)
        return PMIX_ERR_BAD_PARAM;
    /* This library needs no application-level setup from the fabric or
     * other local subsystems: the answer is an empty list. */
    cbfunc(PMIX_SUCCESS, NULL, 0, cbdata, NULL, NULL);
    return PMIX_SUCCESS;
}

PMIX_EXPORT pmix_status_t PMIx_server_setup_local_support(const char nspace[], pmix_info_t info[],
                                                          size_t ninfo, pmix_op_cbfunc_t cbfunc,
                                                          void *cbdata)
{
    if (!S.active)
        return PMIX_ERR_INIT;
    if (nspace == NULL)
        return PMIX_ERR_BAD_PARAM;
    /* Nothing to prepare locally (see setup_application). */
    return cbfunc != NULL ? PMIX_OPERATION_SUCCEEDED : PMIX_SUCCESS;
}
