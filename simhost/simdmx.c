/*
 * simdmx.c - direct modex between simulated nodes (simnode.c is the
 * node).
 *
 * Direct modex. The node that hosts rank r is r / ppn. A request travels
 * there, the server engine there answers it (px_server_dmodex_request:
 * at once, or when the process commits) and the answer travels back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"

#define DMX_REQ_BYTES 64 /* simulated size of a direct modex request */
#define DMX_RESP_HDR 32  /* and of an answer's header */

struct sim_dmx {
    sim_dmx *next;
    uint64_t tag;
    uint32_t node; /* asked of this node */
    pmix_modex_cbfunc_t cbfunc;
    void *cbdata;
};

static void release_free(void *arg)
{
    free(arg);
}

typedef struct dmx_answer {
    sim_run *run;
    uint32_t to;
    uint64_t tag;
} dmx_answer;

static void dmx_resp(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    dmx_answer *a = cbdata;
    void *copy = sz > 0 ? malloc(sz) : NULL;
    sim_msg *m;

    if (sz > 0 && copy == NULL) {
        status = PMIX_ERR_NOMEM;
        sz = 0;
    }
    if (sz > 0)
        memcpy(copy, data, sz);
    m = sim_msg_new(MSG_DMX_RESP, copy, sz);
    m->tag = a->tag;
    m->status = status;
    sim_send(&a->run->nodes[a->to].ep, m, (double)(DMX_RESP_HDR + sz));
    free(a);
}

pmix_status_t sim_host_dmodex(void *hctx, const pmix_proc_t *proc, const pmix_info_t info[],
                              size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    sim_node *n = hctx;
    sim_run *run = n->ep.run;
    sim_dmx *d;
    sim_msg *m;

    if (strcmp(proc->nspace, run->nspace) != 0 || proc->rank >= run->nprocs)
        return PMIX_ERR_NOT_FOUND;
    d = calloc(1, sizeof(*d));
    if (d == NULL)
        return PMIX_ERR_NOMEM;
    d->tag = n->next_tag++;
    d->node = proc->rank / run->opt.ppn;
    d->cbfunc = cbfunc;
    d->cbdata = cbdata;
    d->next = n->dmx;
    n->dmx = d;
    m = sim_msg_new(MSG_DMX_REQ, NULL, 0);
    m->from = n->id;
    m->tag = d->tag;
    m->proc = *proc;
    if (sim_send(&run->nodes[proc->rank / run->opt.ppn].ep, m, DMX_REQ_BYTES) != 0) {
        for (sim_dmx **pp = &n->dmx; *pp != NULL; pp = &(*pp)->next) {
            if (*pp == d) {
                *pp = d->next;
                break;
            }
        }
        free(d);
        return PMIX_ERR_UNREACH; /* that node is gone, or cut off */
    }
    return PMIX_SUCCESS;
}

void sim_dmx_request(sim_node *n, sim_msg *m)
{
    dmx_answer *a = calloc(1, sizeof(*a));
    pmix_status_t rc;

    if (a == NULL) {
        fprintf(stderr, "pmixsim: out of memory\n");
        abort();
    }
    a->run = n->ep.run;
    a->to = m->from;
    a->tag = m->tag;
    rc = px_server_dmodex_request(n->srv, &m->proc, dmx_resp, a);
    if (rc != PMIX_SUCCESS)
        dmx_resp(rc, NULL, 0, a);
}

void sim_dmx_answered(sim_node *n, sim_msg *m)
{
    for (sim_dmx **pp = &n->dmx; *pp != NULL; pp = &(*pp)->next) {
        sim_dmx *d = *pp;
        if (d->tag != m->tag)
            continue;
        *pp = d->next;
        d->cbfunc(m->status, m->data, m->len, d->cbdata, release_free, m->data);
        m->data = NULL; /* released through release_free */
        free(d);
        return;
    }
}

void sim_dmx_lost(sim_node *n, uint32_t dead)
{
    for (sim_dmx **pp = &n->dmx; *pp != NULL;) {
        sim_dmx *d = *pp;
        if (d->node != dead) {
            pp = &d->next;
            continue;
        }
        *pp = d->next;
        d->cbfunc(PMIX_ERR_UNREACH, NULL, 0, d->cbdata, NULL, NULL);
        free(d);
    }
}

void sim_dmx_fini(sim_node *n)
{
    while (n->dmx != NULL) {
        sim_dmx *d = n->dmx;
        n->dmx = d->next;
        free(d);
    }
}
