/*
 * pubsub.c - the client's side of publish, lookup and unpublish.
 *
 * Each is one request to the server, which hands it to its host's data
 * service (hostcore/px_pubsub.h in pmixlab's own hosts): PUBLISH and
 * UNPUBLISH are answered with a REPLY, LOOKUP with LOOKUP_DONE and the
 * keys found. The client keeps nothing: a lookup always asks, since
 * published data can change. PMIX_TIMEOUT bounds the wait here too (the
 * request's timer), so a host that never answers cannot hang the caller.
 * A lookup's timer runs LOOKUP_GRACE longer than PMIX_TIMEOUT: the host
 * ends a waiting lookup at PMIX_TIMEOUT itself, and its answer must win,
 * since a PMIX_PERSIST_FIRST_READ entry it hands over is gone from the
 * host and would be lost if the client had stopped listening.
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "common/px_common.h"

#define LOOKUP_GRACE 1.0 /* seconds */

/* A valid key list: NULL-terminated, at least one key, none empty or too
 * long. */
static bool keys_ok(char **keys)
{
    if (keys == NULL || keys[0] == NULL)
        return false;
    for (size_t i = 0; keys[i] != NULL; i++)
        if (keys[i][0] == '\0' || strnlen(keys[i], PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
            return false;
    return true;
}

static pmix_status_t send_request(px_client *c, uint16_t type, uint16_t reply, char **keys,
                                  bool with_keys, const pmix_info_t info[], size_t ninfo,
                                  px_req *proto)
{
    px_buf b;
    px_req *r;
    double timeout = px_cli_timeout(info, ninfo);

    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    if (type == PX_MSG_LOOKUP && timeout > 0)
        timeout += LOOKUP_GRACE;
    r = px_cli_req_new(c, reply, timeout);
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->opcb = proto->opcb;
    r->lookupcb = proto->lookupcb;
    r->cbdata = proto->cbdata;
    px_buf_init_frame(&b, type, r->tag);
    if (with_keys)
        px_pack_argv(&b, keys);
    px_pack_info(&b, info, ninfo);
    return px_cli_send(c, &b, r);
}

pmix_status_t px_client_publish(px_client *c, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_req proto = {.opcb = cbfunc, .cbdata = cbdata};

    if (info == NULL || ninfo == 0)
        return PMIX_ERR_BAD_PARAM;
    return send_request(c, PX_MSG_PUBLISH, PX_MSG_REPLY, NULL, false, info, ninfo, &proto);
}

pmix_status_t px_client_lookup(px_client *c, char **keys, const pmix_info_t info[], size_t ninfo,
                               pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    px_req proto = {.lookupcb = cbfunc, .cbdata = cbdata};

    if (!keys_ok(keys))
        return PMIX_ERR_BAD_PARAM;
    return send_request(c, PX_MSG_LOOKUP, PX_MSG_LOOKUP_DONE, keys, true, info, ninfo, &proto);
}

pmix_status_t px_client_unpublish(px_client *c, char **keys, const pmix_info_t info[], size_t ninfo,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_req proto = {.opcb = cbfunc, .cbdata = cbdata};

    if (keys != NULL && !keys_ok(keys))
        return PMIX_ERR_BAD_PARAM;
    return send_request(c, PX_MSG_UNPUBLISH, PX_MSG_REPLY, keys, true, info, ninfo, &proto);
}

void px_cli_lookup_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b)
{
    pmix_lookup_cbfunc_t cb = r->lookupcb;
    void *cbdata = r->cbdata;
    pmix_pdata_t *pd = NULL;
    uint64_t n = 0;

    px_cli_req_free(c, r);
    if (px_unpack_u64(b, &n) != PMIX_SUCCESS || n > px_buf_left(b)) {
        status = PMIX_ERR_UNPACK_FAILURE;
        n = 0;
    }
    if (n > 0 && (pd = PMIx_Pdata_create((size_t)n)) == NULL) {
        status = PMIX_ERR_NOMEM;
        n = 0;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (px_unpack_typed(b, &pd[i], PMIX_PDATA) != PMIX_SUCCESS) {
            status = PMIX_ERR_UNPACK_FAILURE;
            break;
        }
    }
    if (status != PMIX_SUCCESS && status != PMIX_ERR_PARTIAL_SUCCESS) {
        if (cb != NULL)
            cb(status, NULL, 0, cbdata);
    } else if (cb != NULL) {
        cb(status, pd, (size_t)n, cbdata);
    }
    if (pd != NULL)
        PMIx_Pdata_free(pd, (size_t)n);
}
