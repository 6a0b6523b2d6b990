/*
 * spawn.c - the client's side of PMIx_Spawn: one request to the server,
 * which hands it to its host (px_server_host.spawn); the host starts the
 * new job and answers with its namespace once every process of it has
 * been started, or with the error that stopped it (a program that cannot
 * be found, too few slots). PMIX_TIMEOUT in the job directives bounds the
 * wait here too; without it the host's answer ends the request, and a
 * lost server fails it.
 *
 * With PMIX_FWD_STDOUT, PMIX_FWD_STDERR or PMIX_FWD_STDDIAG the server
 * sends the new job's output here (server/spawn.c): it goes to this
 * process's pulls that match it (PMIx_IOF_pull), and what none takes is
 * written to its own stdout and stderr (iof.c's sink; tagged with
 * PMIX_IOF_TAG_OUTPUT).
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "common/px_common.h"

pmix_status_t px_client_spawn(px_client *c, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata)
{
    px_buf b;
    px_req *r;

    if (apps == NULL || napps == 0 || napps > PX_SPAWN_MAX_APPS)
        return PMIX_ERR_BAD_PARAM;
    for (size_t a = 0; a < napps; a++)
        if (apps[a].maxprocs < 0 || /* 0: as many as the host decides (its mapping) */
            (apps[a].cmd == NULL && (apps[a].argv == NULL || apps[a].argv[0] == NULL)))
            return PMIX_ERR_BAD_PARAM;
    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    r = px_cli_req_new(c, PX_MSG_SPAWN_DONE, px_cli_timeout(job_info, ninfo));
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->spawncb = cbfunc;
    r->cbdata = cbdata;
    if (px_info_flag(job_info, ninfo, PMIX_FWD_STDOUT))
        r->fwd |= PMIX_FWD_STDOUT_CHANNEL;
    if (px_info_flag(job_info, ninfo, PMIX_FWD_STDERR))
        r->fwd |= PMIX_FWD_STDERR_CHANNEL;
    if (px_info_flag(job_info, ninfo, PMIX_FWD_STDDIAG))
        r->fwd |= PMIX_FWD_STDDIAG_CHANNEL;
    r->fwd_tag = px_info_flag(job_info, ninfo, PMIX_IOF_TAG_OUTPUT);
    px_buf_init_frame(&b, PX_MSG_SPAWN, r->tag);
    px_pack_info(&b, job_info, ninfo);
    px_pack_u32(&b, (uint32_t)napps);
    for (size_t a = 0; a < napps; a++) {
        px_pack_str(&b, apps[a].cmd);
        px_pack_argv(&b, apps[a].argv);
        px_pack_argv(&b, apps[a].env);
        px_pack_str(&b, apps[a].cwd);
        px_pack_i32(&b, apps[a].maxprocs);
        px_pack_info(&b, apps[a].info, apps[a].ninfo);
    }
    return px_cli_send(c, &b, r);
}

void px_cli_spawn_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b)
{
    pmix_spawn_cbfunc_t cb = r->spawncb;
    void *cbdata = r->cbdata;
    uint16_t fwd = r->fwd;
    bool fwd_tag = r->fwd_tag;
    pmix_nspace_t ns;
    char *got = NULL;

    px_cli_req_free(c, r);
    memset(ns, 0, sizeof(ns));
    if (px_unpack_str(b, &got) != PMIX_SUCCESS)
        status = PMIX_ERR_UNPACK_FAILURE;
    else if (got != NULL)
        PMIx_Load_nspace(ns, got);
    free(got);
    if (status == PMIX_SUCCESS && ns[0] == '\0')
        status = PMIX_ERR_UNPACK_FAILURE; /* a job needs a name */
    if (status == PMIX_SUCCESS && fwd != 0 && px_cli_iof_sink(c, ns, fwd, fwd_tag) != 0)
        status = PMIX_ERR_NOMEM; /* the output would be lost */
    if (cb != NULL)
        cb(status, ns, cbdata);
}
