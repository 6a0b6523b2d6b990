/*
 * simdmx.c - direct modex between simulated nodes (simnode.c is the
 * node).
 *
 * Direct modex. The node that hosts rank r is r / ppn. A request travels
 * there, the server engine there answers it (px_server_dmodex_request:
 * at once, or when the process commits) and the answer travels back. The
 * requests a node waits on are the host core's table (px_dmx_*): a lost
 * node fails them with PMIX_ERR_UNREACH.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmixsim.h"

#define DMX_REQ_BYTES 64 /* simulated size of a direct modex request */
#define DMX_RESP_HDR 32  /* and of an answer's header */

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
    uint32_t node, id;
    sim_msg *m;

    if (strcmp(proc->nspace, run->nspace) != 0 || proc->rank >= run->nprocs)
        return PMIX_ERR_NOT_FOUND;
    node = proc->rank / run->opt.ppn;
    if ((id = px_dmx_add(&n->dmx, node, cbfunc, cbdata)) == 0)
        return PMIX_ERR_NOMEM;
    m = sim_msg_new(MSG_DMX_REQ, NULL, 0);
    m->from = n->id;
    m->tag = id;
    m->proc = *proc;
    if (sim_send(&run->nodes[node].ep, m, DMX_REQ_BYTES) != 0) {
        px_dmx_cancel(&n->dmx, id);
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
    /* the data goes to the server with release_free; m keeps nothing */
    char *data = m->data;
    m->data = NULL;
    px_dmx_answer(&n->dmx, (uint32_t)m->tag, m->status, data, m->len,
                  data != NULL ? release_free : NULL, data);
}

void sim_dmx_lost(sim_node *n, uint32_t dead)
{
    px_dmx_node_lost(&n->dmx, dead);
}

void sim_dmx_fini(sim_node *n)
{
    px_dmx_fini(&n->dmx);
}
