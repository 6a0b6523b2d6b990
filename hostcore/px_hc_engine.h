/*
 * px_hc_engine.h - the host core for hosts on the server engine's own
 * interface (px_server_host: pmixd, pmixsim): the engine's upcalls handed
 * to px_hc as they come. Header-only, so that the host core itself keeps
 * to the Standard's headers; a host that includes this one links the
 * library's internals already.
 */
#ifndef PX_HC_ENGINE_H
#define PX_HC_ENGINE_H

#include "px_hostcore.h"
#include "server/px_server.h"

/* The engine's group upcall (px_group_req) as px_hc_group's request. The
 * two completions have the same signature. */
static inline pmix_status_t px_hc_group_upcall(px_hc *hc, const px_group_req *req,
                                               px_group_cbfunc_t cbfunc, void *cbdata)
{
    px_hc_group_req r = {
        .op = req->op,
        .grp = req->grp,
        .procs = req->procs,
        .nprocs = req->nprocs,
        .assign_ctxid = req->assign_ctxid,
        .timeout = req->timeout,
        .local_status = req->local_status,
        .data = req->data,
        .ndata = req->ndata,
    };
    return px_hc_group(hc, &r, cbfunc, cbdata);
}

#endif /* PX_HC_ENGINE_H */
