/*
 * tool.c - what makes a client engine a tool's, and queries to the host.
 *
 * A tool uses the client engine whole: the same requests, replies, event
 * chains and store. Only the handshake differs (px_proto.h): its HELLO
 * ends with PX_ROLE_TOOL and names the identity it asks for, if any, and
 * its WELCOME brings the name the server's host gave it and the server's
 * own name. PMIx_tool_* in the api/ shim (api/tool_api.c) find and
 * connect the server; nothing here knows how.
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "common/px_common.h"

void px_client_set_tool(px_client *c)
{
    c->tool = true;
}

bool px_client_is_tool(const px_client *c)
{
    return c->tool;
}

const pmix_proc_t *px_client_server(const px_client *c)
{
    return &c->server;
}

pmix_status_t px_cli_tool_welcome(px_client *c, px_buf *b)
{
    pmix_proc_t self, server;
    pmix_status_t rc;

    if ((rc = px_unpack_proc(b, &self)) != PMIX_SUCCESS ||
        (rc = px_unpack_proc(b, &server)) != PMIX_SUCCESS)
        return rc;
    if (self.nspace[0] == '\0')
        return PMIX_ERR_UNPACK_FAILURE;
    c->self = self;
    c->server = server;
    return PMIX_SUCCESS;
}

pmix_status_t px_client_query(px_client *c, const pmix_query_t queries[], size_t nqueries,
                              pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    px_buf b;
    px_req *r;
    double timeout = 0;

    if (queries == NULL || nqueries == 0 || nqueries > PX_QUERY_MAX)
        return PMIX_ERR_BAD_PARAM;
    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    /* the longest PMIX_TIMEOUT of a query bounds the wait for the host */
    for (size_t i = 0; i < nqueries; i++) {
        double t = px_cli_timeout(queries[i].qualifiers, queries[i].nqual);
        if (t > timeout)
            timeout = t;
    }
    r = px_cli_req_new(c, PX_MSG_INFO_DONE, timeout);
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->infocb = cbfunc;
    r->cbdata = cbdata;
    px_buf_init_frame(&b, PX_MSG_QUERY, r->tag);
    px_pack_u32(&b, (uint32_t)nqueries);
    for (size_t i = 0; i < nqueries; i++)
        px_pack_typed(&b, &queries[i], PMIX_QUERY);
    return px_cli_send(c, &b, r);
}
