/*
 * spawn.c - the client's side of PMIx_Spawn: one request to the server,
 * which hands it to its host (px_server_host.spawn); the host starts the
 * new job and answers with its namespace once every process of it has
 * been started, or with the error that stopped it (a program that cannot
 * be found, too few slots). PMIX_TIMEOUT in the job directives bounds the
 * wait here too; without it the host's answer ends the request, and a
 * lost server fails it.
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
    if (cb != NULL)
        cb(status, ns, cbdata);
}
