/*
 * dmodex.c - the direct modex requests a node waits on (px_hostcore.h):
 * one list per node, keyed by an id the host sends with the request and
 * gets back with the answer. A lost node fails its requests, so that a
 * Get never waits on a node that is gone; an answer that comes after
 * that finds nothing and is only released.
 */
#include <stdlib.h>

#include "px_hostcore.h"

struct px_dmx_wait {
    px_dmx_wait *next;
    uint32_t id;
    uint32_t node;
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
};

uint32_t px_dmx_add(px_dmx_table *t, uint32_t node, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    px_dmx_wait *w = calloc(1, sizeof(*w));

    if (w == NULL)
        return 0;
    if (++t->next_id == 0)
        t->next_id = 1; /* 0 means no id */
    w->id = t->next_id;
    w->node = node;
    w->cbfunc = cbfunc;
    w->cbdata = cbdata;
    w->next = t->head;
    t->head = w;
    return w->id;
}

/* Unlink and return the request `id`, or NULL. */
static px_dmx_wait *take(px_dmx_table *t, uint32_t id)
{
    for (px_dmx_wait **pp = &t->head; *pp != NULL; pp = &(*pp)->next) {
        px_dmx_wait *w = *pp;
        if (w->id == id) {
            *pp = w->next;
            return w;
        }
    }
    return NULL;
}

void px_dmx_cancel(px_dmx_table *t, uint32_t id)
{
    free(take(t, id));
}

bool px_dmx_answer(px_dmx_table *t, uint32_t id, pmix_status_t status, char *data, size_t len,
                   pmix_release_cbfunc_t release, void *release_arg)
{
    px_dmx_wait *w = take(t, id);
    bool found = w != NULL;

    if (w != NULL && status == PMIX_SUCCESS) {
        w->cbfunc(status, data, len, w->cbdata, release, release_arg);
    } else {
        if (w != NULL)
            w->cbfunc(status, NULL, 0, w->cbdata, NULL, NULL);
        if (release != NULL)
            release(release_arg);
    }
    free(w);
    return found;
}

void px_dmx_node_lost(px_dmx_table *t, uint32_t node)
{
    for (px_dmx_wait **pp = &t->head; *pp != NULL;) {
        px_dmx_wait *w = *pp;
        if (w->node != node) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        w->cbfunc(PMIX_ERR_UNREACH, NULL, 0, w->cbdata, NULL, NULL);
        free(w);
    }
}

void px_dmx_fini(px_dmx_table *t)
{
    while (t->head != NULL) {
        px_dmx_wait *w = t->head;
        t->head = w->next;
        free(w);
    }
}
