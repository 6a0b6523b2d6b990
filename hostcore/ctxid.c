/*
 * ctxid.c - groups' context ids, made by one rule on every host without
 * coordination (px_hostcore.h, "groups: context ids"): the lowest member
 * node makes the id from its index and its own count.
 */
#include "px_hostcore.h"

#define COUNT_BITS 40
#define COUNT_MAX ((UINT64_C(1) << COUNT_BITS) - 1)

uint64_t px_ctxid_next(px_ctxid_gen *g)
{
    if (g->node >= PX_CTXID_MAX_NODES || g->made >= COUNT_MAX)
        return 0;
    g->made++;
    return ((uint64_t)(g->node + 1) << COUNT_BITS) | g->made;
}

uint32_t px_ctxid_maker(const uint32_t nodes[], size_t n)
{
    uint32_t low = nodes[0];

    for (size_t i = 1; i < n; i++)
        if (nodes[i] < low)
            low = nodes[i];
    return low;
}
