/*
 * iof.c - the client's (and tool's) side of PMIx_IOF_pull and
 * PMIx_IOF_deregister: output of other processes, forwarded by the server.
 *
 * Each pull is a local handler (an id, the processes, the channels, the
 * caller's callback) and one IOF_PULL request naming that id; the server
 * answers with a REPLY once its host agreed, then sends IOF_DATA frames.
 * Each frame goes to every local handler that matches it, in the order
 * they were pulled. A handler without a callback writes the output to this
 * process's own stdout or stderr (as the channel says), each line prefixed
 * with "[nspace,rank]<stdout>: " if it asked for PMIX_IOF_TAG_OUTPUT.
 * Deregistering drops the handler at once (no more callbacks) and tells
 * the server.
 *
 * A sink is a handler made by a spawn with PMIX_FWD_STDOUT (spawn.c): it
 * writes here the output of the spawned namespace that no other handler
 * of this process matched.
 *
 * PMIx_IOF_push is one IOF_PUSH request per chunk of input (or for its
 * end), answered once the server's host delivered it to the targets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_int.h"
#include "common/px_common.h"

struct px_ciof {
    struct px_ciof *next;
    size_t id;
    pmix_proc_t *procs;
    size_t nprocs;
    uint16_t channels;
    bool tag;           /* PMIX_IOF_TAG_OUTPUT, for output written here */
    bool line_start[2]; /* written here: at the start of a line (stdout, stderr) */
    bool sink;          /* a spawn's forwarding: only what no other handler takes */
    pmix_iof_cbfunc_t cb;
};

typedef struct pull_wait {
    px_client *c;
    size_t id;
    pmix_hdlr_reg_cbfunc_t regcb;
    void *regcbdata;
} pull_wait;

static px_ciof *find(px_client *c, size_t id)
{
    for (px_ciof *h = c->iofs; h != NULL; h = h->next)
        if (h->id == id)
            return h;
    return NULL;
}

static void drop(px_client *c, size_t id)
{
    for (px_ciof **pp = &c->iofs; *pp != NULL; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            px_ciof *h = *pp;
            *pp = h->next;
            free(h->procs);
            free(h);
            return;
        }
    }
}

static void pulled(pmix_status_t status, void *cbdata)
{
    pull_wait *w = cbdata;

    if (status != PMIX_SUCCESS)
        drop(w->c, w->id);
    if (w->regcb != NULL)
        w->regcb(status, status == PMIX_SUCCESS ? w->id : SIZE_MAX, w->regcbdata);
    free(w);
}

pmix_status_t px_client_iof_pull(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                                 const pmix_info_t dirs[], size_t ndirs,
                                 pmix_iof_channel_t channels, pmix_iof_cbfunc_t cbfunc,
                                 pmix_hdlr_reg_cbfunc_t regcb, void *regcbdata, size_t *id)
{
    uint16_t ch = (uint16_t)(channels & (PMIX_FWD_STDOUT_CHANNEL | PMIX_FWD_STDERR_CHANNEL |
                                         PMIX_FWD_STDDIAG_CHANNEL));
    px_ciof *h, **tail;
    pull_wait *w;
    px_req *r;
    px_buf b;

    if (procs == NULL || nprocs == 0 || ch == 0)
        return PMIX_ERR_BAD_PARAM;
    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    h = calloc(1, sizeof(*h));
    w = malloc(sizeof(*w));
    if (h != NULL)
        h->procs = malloc(nprocs * sizeof(*procs));
    if (h == NULL || w == NULL || h->procs == NULL) {
        if (h != NULL)
            free(h->procs);
        free(h);
        free(w);
        return PMIX_ERR_NOMEM;
    }
    memcpy(h->procs, procs, nprocs * sizeof(*procs));
    h->nprocs = nprocs;
    h->channels = ch;
    h->cb = cbfunc;
    h->tag = px_info_flag(dirs, ndirs, PMIX_IOF_TAG_OUTPUT);
    h->line_start[0] = h->line_start[1] = true;
    h->id = ++c->next_iofid;
    for (tail = &c->iofs; *tail != NULL; tail = &(*tail)->next)
        ;
    *tail = h; /* in pull order */
    *w = (pull_wait){c, h->id, regcb, regcbdata};
    r = px_cli_req_new(c, PX_MSG_REPLY, px_cli_timeout(dirs, ndirs));
    if (r == NULL) {
        drop(c, h->id);
        free(w);
        return PMIX_ERR_NOMEM;
    }
    r->opcb = pulled;
    r->cbdata = w;
    *id = h->id;
    px_buf_init_frame(&b, PX_MSG_IOF_PULL, r->tag);
    px_pack_u32(&b, (uint32_t)h->id);
    px_pack_procs(&b, procs, nprocs);
    px_pack_u16(&b, ch);
    px_pack_info(&b, dirs, ndirs);
    pmix_status_t rc = px_cli_send(c, &b, r);
    if (rc != PMIX_SUCCESS) {
        drop(c, *id);
        free(w);
    }
    return rc;
}

pmix_status_t px_client_iof_deregister(px_client *c, size_t id, const pmix_info_t dirs[],
                                       size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_req *r;
    px_buf b;

    if (find(c, id) == NULL)
        return PMIX_ERR_NOT_FOUND;
    drop(c, id);
    if (!px_client_connected(c))
        return PMIX_OPERATION_SUCCEEDED; /* nothing more can come anyway */
    r = px_cli_req_new(c, PX_MSG_REPLY, px_cli_timeout(dirs, ndirs));
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->opcb = cbfunc;
    r->cbdata = cbdata;
    px_buf_init_frame(&b, PX_MSG_IOF_DEREG, r->tag);
    px_pack_u32(&b, (uint32_t)id);
    return px_cli_send(c, &b, r);
}

static bool matches(const px_ciof *h, const pmix_proc_t *src, uint16_t channel)
{
    if ((h->channels & channel) == 0)
        return false;
    for (size_t i = 0; i < h->nprocs; i++)
        if (PMIx_Check_nspace(h->procs[i].nspace, src->nspace) &&
            (h->procs[i].rank == PMIX_RANK_WILDCARD || h->procs[i].rank == src->rank))
            return true;
    return false;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return; /* nowhere to write: the output is lost, as a closed stdout loses it */
        p += w;
        n -= (size_t)w;
    }
}

/* Output written by the library itself (a pull without a callback). */
static void write_here(px_ciof *h, const pmix_proc_t *src, uint16_t channel, const char *p,
                       size_t n)
{
    int err = channel != PMIX_FWD_STDOUT_CHANNEL;
    int fd = err ? STDERR_FILENO : STDOUT_FILENO;
    char tag[PMIX_MAX_NSLEN + 48];

    if (!h->tag) {
        write_all(fd, p, n);
        return;
    }
    snprintf(tag, sizeof(tag), "[%s,%u]<%s>: ", src->nspace, src->rank,
             channel == PMIX_FWD_STDOUT_CHANNEL   ? "stdout"
             : channel == PMIX_FWD_STDERR_CHANNEL ? "stderr"
                                                  : "stddiag");
    while (n > 0) {
        const char *nl = memchr(p, '\n', n);
        size_t l = nl != NULL ? (size_t)(nl - p) + 1 : n;
        if (h->line_start[err])
            write_all(fd, tag, strlen(tag));
        write_all(fd, p, l);
        h->line_start[err] = nl != NULL;
        p += l;
        n -= l;
    }
}

pmix_status_t px_cli_iof_msg(px_client *c, px_buf *b)
{
    pmix_proc_t src;
    uint16_t channel;
    const void *data;
    size_t len;
    pmix_status_t rc;

    if ((rc = px_unpack_proc(b, &src)) != PMIX_SUCCESS ||
        (rc = px_unpack_u16(b, &channel)) != PMIX_SUCCESS ||
        (rc = px_unpack_bytes_view(b, &data, &len)) != PMIX_SUCCESS)
        return rc;
    /* a handler may deregister itself (or others) from its callback: walk
     * by id, looking each up again; sinks last, if no other handler took it */
    size_t last = c->next_iofid;
    bool taken = false;
    for (int pass = 0; pass < 2 && !(pass == 1 && taken); pass++) {
        for (size_t id = 1; id <= last; id++) {
            px_ciof *h = find(c, id);
            if (h == NULL || h->sink != (pass == 1) || !matches(h, &src, channel))
                continue;
            taken = true;
            if (h->cb != NULL) {
                pmix_byte_object_t bo = {.bytes = (char *)data, .size = len};
                h->cb(h->id, (pmix_iof_channel_t)channel, &src, &bo, NULL, 0);
            } else {
                write_here(h, &src, channel, data, len);
            }
        }
    }
    return PMIX_SUCCESS;
}

int px_cli_iof_sink(px_client *c, const char *nspace, uint16_t channels, bool tag)
{
    px_ciof *h = calloc(1, sizeof(*h)), **tail;

    if (h == NULL || (h->procs = malloc(sizeof(*h->procs))) == NULL) {
        free(h);
        return -1;
    }
    PMIx_Load_procid(h->procs, nspace, PMIX_RANK_WILDCARD);
    h->nprocs = 1;
    h->channels = channels;
    h->tag = tag;
    h->sink = true;
    h->line_start[0] = h->line_start[1] = true;
    h->id = ++c->next_iofid;
    for (tail = &c->iofs; *tail != NULL; tail = &(*tail)->next)
        ;
    *tail = h;
    return 0;
}

pmix_status_t px_client_iof_push(px_client *c, const pmix_proc_t targets[], size_t ntargets,
                                 const void *data, size_t len, bool eof, const pmix_info_t dirs[],
                                 size_t ndirs, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_req *r;
    px_buf b;

    if (targets == NULL || ntargets == 0 || (data == NULL && len > 0) || (eof && len > 0))
        return PMIX_ERR_BAD_PARAM;
    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    r = px_cli_req_new(c, PX_MSG_REPLY, px_cli_timeout(dirs, ndirs));
    if (r == NULL)
        return PMIX_ERR_NOMEM;
    r->opcb = cbfunc;
    r->cbdata = cbdata;
    px_buf_init_frame(&b, PX_MSG_IOF_PUSH, r->tag);
    px_pack_procs(&b, targets, ntargets);
    px_pack_info(&b, dirs, ndirs);
    px_pack_u8(&b, eof ? 1 : 0);
    px_pack_bytes(&b, data, len);
    return px_cli_send(c, &b, r);
}

void px_cli_iof_destroy(px_client *c)
{
    while (c->iofs != NULL)
        drop(c, c->iofs->id);
}
