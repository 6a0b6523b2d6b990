/*
 * fence.c - a fence's request as the server engine hands it to its host
 * (px_hostcore.h): the info array of a fence_nb upcall read once, here,
 * for every host.
 */
#include <string.h>

#include <pmix_common.h>

#include "px_coll.h"
#include "px_hostcore.h"

static bool is(const pmix_info_t *in, const char *key)
{
    return strncmp(in->key, key, PMIX_MAX_KEYLEN) == 0;
}

void px_fence_req_read(const pmix_info_t info[], size_t ninfo, px_fence_req *out)
{
    const char *algo[2] = {NULL, NULL}; /* barrier, allgather */

    memset(out, 0, sizeof(*out));
    out->local_status = PMIX_SUCCESS;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];
        if (is(in, PMIX_LOCAL_COLLECTIVE_STATUS)) {
            if (in->value.type == PMIX_STATUS && in->value.data.status != PMIX_SUCCESS)
                out->local_status = in->value.data.status;
        } else if (is(in, PMIX_COLLECT_DATA)) {
            out->collect = in->value.type != PMIX_BOOL || in->value.data.flag;
        } else if (is(in, PMIX_TIMEOUT)) {
            if (in->value.type == PMIX_INT && in->value.data.integer > 0)
                out->timeout = in->value.data.integer;
        } else if (is(in, PX_COLL_KEY_BARRIER)) {
            if (in->value.type == PMIX_STRING)
                algo[0] = in->value.data.string;
        } else if (is(in, PX_COLL_KEY_FENCE)) {
            if (in->value.type == PMIX_STRING)
                algo[1] = in->value.data.string;
        }
    }
    out->algo = algo[out->collect ? 1 : 0];
}
