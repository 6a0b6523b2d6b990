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
