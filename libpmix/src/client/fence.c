/*
 * fence.c - PMIx_Fence in the client engine.
 *
 * The client sends its description of the participants as given (the
 * server normalizes it) and waits for FENCE_DONE. A fence whose only
 * participant is the caller completes at once (PMIX_OPERATION_SUCCEEDED).
 * Collected records in the reply go into the store as one blob, shared by
 * all later Gets; data from the host comes as groups (store/groups.c),
 * indexed per group, with this node's own records beside them.
 * PMIX_TIMEOUT is the server's to enforce, so that every local participant
 * gets the same verdict; the client's own timer, a little later
 * (PX_FENCE_GRACE), only ends a wait on a server that never answers.
 *
 * The fence page (px_page.h): a fence of the whole namespace arrives on
 * the page first when the server shared one. px_client_lbar_arrive and
 * px_client_lbar_check are the blocking PMIx_Fence's (the api/ shim sleeps
 * between them); px_client_fence arrives for a fence that goes to the
 * server (SERVER), so that the others, if asleep, follow it there.
 */
#include <stdlib.h>
#include <string.h>

#include "client_int.h"
#include "common/px_common.h"

/* How much later than the server's the client's own fence timer fires. */
#define PX_FENCE_GRACE 0.5

/* True if the calling process is the only participant. */
static bool only_self(px_client *c, const pmix_proc_t procs[], size_t nprocs)
{
    pmix_value_t *v = NULL;
    uint64_t size = 0;
    bool wildcard;

    if (nprocs > 1)
        return false;
    if (nprocs == 1 && strncmp(procs[0].nspace, c->self.nspace, PMIX_MAX_NSLEN) != 0)
        return false;
    if (nprocs == 1 && procs[0].rank == c->self.rank)
        return true;
    wildcard = nprocs == 0 || procs[0].rank == PMIX_RANK_WILDCARD;
    if (!wildcard)
        return false;
    if (px_store_get_job(c->store, c->self.nspace, PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, NULL, 0,
                         &v) != PMIX_SUCCESS)
        return false;
    (void)px_value_get_number(v, &size);
    PMIx_Value_free(v, 1);
    return size == 1;
}

static pmix_status_t check_args(px_client *c, const pmix_proc_t procs[], size_t nprocs)
{
    if (procs == NULL && nprocs > 0)
        return PMIX_ERR_BAD_PARAM;
    for (size_t i = 0; i < nprocs; i++)
        if (procs[i].nspace[0] == '\0' || procs[i].rank == PMIX_RANK_UNDEF ||
            procs[i].rank == PMIX_RANK_INVALID)
            return PMIX_ERR_BAD_PARAM;
    if (!px_client_connected(c))
        return c->lost ? PMIX_ERR_UNREACH : PMIX_ERR_INIT;
    if (only_self(c, procs, nprocs))
        return PMIX_OPERATION_SUCCEEDED;
    return PMIX_SUCCESS;
}

/* ---- the fence page (px_page.h) ---- */

static px_blob *copy_blob(const void *data, size_t n, pmix_status_t *rc);
static pmix_status_t add(px_client *c, px_blob *blob, bool groups);

/* True if the fence's set is the page's: the caller's whole namespace,
 * as the server will see it (NULL, or its wildcard, repeated or not; the
 * server sorts the list and drops duplicates). */
static bool page_set(const px_client *c, const pmix_proc_t procs[], size_t nprocs)
{
    if (procs == NULL && nprocs > 0)
        return false; /* a bad argument: the server path refuses it */
    for (size_t i = 0; i < nprocs; i++)
        if (procs[i].rank != PMIX_RANK_WILDCARD ||
            strncmp(procs[i].nspace, c->self.nspace, PMIX_MAX_NSLEN) != 0)
            return false;
    return true;
}

/* What the page can do with this fence by itself: a barrier (no
 * directive but PMIX_COLLECT_DATA=false), a collect (PMIX_COLLECT_DATA),
 * or nothing (any other directive: the server's). */
enum {
    KIND_BARRIER,
    KIND_COLLECT,
    KIND_SERVER
};

static int kind(const pmix_info_t info[], size_t ninfo)
{
    int k = KIND_BARRIER;

    for (size_t i = 0; i < ninfo; i++) {
        if (!PMIX_CHECK_KEY(&info[i], PMIX_COLLECT_DATA))
            return KIND_SERVER;
        if (px_info_flag(&info[i], 1, PMIX_COLLECT_DATA))
            k = KIND_COLLECT;
    }
    return k;
}

void px_cli_page_break(px_client *c, const char *why)
{
    if (c->page == NULL)
        return;
    if (c->pops->log != NULL)
        c->pops->log(c->pctx, PX_LOG_DEBUG, why);
    atomic_fetch_or_explicit(&c->page->word, PX_PG_BROKEN, memory_order_acq_rel);
    c->pops->page_wake(c->pctx, (uint32_t *)&c->page->word);
    c->page = NULL;
}

/* Copy this process's record into the half of collect k (px_page.h), if
 * that half is free and has room; else leave its slot as it is, and the
 * collect goes to the server. */
static void write_slot(px_client *c, px_page_hdr *pg, uint32_t k, uint32_t gen)
{
    uint32_t n = c->page_n, r = c->self.rank, old, used, units;

    if (c->prec.size == 0 || c->prec.size > PX_PAGE_HALF || PX_PG_SLOT_TAG(k, gen) == 0 ||
        !px_page_half_free(pg, n, k))
        return;
    units = (uint32_t)((c->prec.size + PX_PG_FILL_LINE - 1) / PX_PG_FILL_LINE);
    old = atomic_load_explicit(&pg->fill[k & 1], memory_order_relaxed);
    do {
        used = (old >> PX_PG_FILL_SHIFT) == PX_PG_FILL_TAG(k) ? old & PX_PG_FILL_UNITS : 0;
        if ((uint64_t)(used + units) * PX_PG_FILL_LINE > PX_PAGE_HALF)
            return;
    } while (!atomic_compare_exchange_weak_explicit(&pg->fill[k & 1], &old,
                                                    PX_PG_FILL(k, used + units),
                                                    memory_order_relaxed, memory_order_relaxed));
    if ((old >> PX_PG_FILL_SHIFT) != PX_PG_FILL_TAG(k)) { /* the first of collect k here: */
        /* keep the old extent */
        uint32_t was = old & PX_PG_FILL_UNITS,
                 hw = atomic_load_explicit(&pg->hw[k & 1], memory_order_relaxed);
        while (was > hw &&
               !atomic_compare_exchange_weak_explicit(&pg->hw[k & 1], &hw, was,
                                                      memory_order_relaxed, memory_order_relaxed))
            ;
    }
    memcpy((char *)pg + px_page_data_off(n) + (k & 1) * PX_PAGE_HALF + used * PX_PG_FILL_LINE,
           c->prec.data, c->prec.size);
    atomic_store_explicit(&px_page_slot_off(pg, n, k)[r], used * PX_PG_FILL_LINE,
                          memory_order_relaxed);
    atomic_store_explicit(&px_page_slot_len(pg, n, k)[r], (uint32_t)c->prec.size,
                          memory_order_relaxed);
    atomic_store_explicit(&px_page_slot_tag(pg, n, k)[r], PX_PG_SLOT_TAG(k, gen),
                          memory_order_release);
}

/* True if every participant's slot holds its record for collect k, written
 * in generation `gen`. */
static bool slots_full(px_page_hdr *pg, uint32_t n, uint32_t k, uint32_t gen)
{
    _Atomic uint32_t *tag = px_page_slot_tag(pg, n, k);
    uint32_t want = PX_PG_SLOT_TAG(k, gen);

    for (uint32_t q = 0; q < n; q++)
        if (atomic_load_explicit(&tag[q], memory_order_acquire) != want)
            return false;
    return want != 0;
}

static pmix_status_t take_page_data(px_client *c, uint32_t gen, uint32_t mode);

/* The last arrival of collect k, which every participant wrote into its
 * half (so nobody holds an older collect of that half, and nobody writes
 * it until this generation moves on): give back what an older, larger
 * collect, the clients' or the server's, left there past this one's
 * records (hw), before the generation moves, as the server does when it
 * writes a half. hw drops to 0 only if all of it went; else the server's
 * next write of the half trims the rest. */
static void give_back_past(px_client *c, px_page_hdr *pg, uint32_t k)
{
    uint32_t f = atomic_load_explicit(&pg->fill[k & 1], memory_order_relaxed);
    uint64_t used, was;
    char *half = (char *)pg + px_page_data_off(c->page_n) + (uint64_t)(k & 1) * PX_PAGE_HALF;

    if (c->pops->page_discard == NULL || (f >> PX_PG_FILL_SHIFT) != PX_PG_FILL_TAG(k))
        return;
    used = px_page_lines_extent(f & PX_PG_FILL_UNITS);
    was = px_page_lines_extent(atomic_load_explicit(&pg->hw[k & 1], memory_order_relaxed));
    if (was > used && c->pops->page_discard(c->pctx, half + used, (size_t)(was - used)))
        atomic_store_explicit(&pg->hw[k & 1], 0, memory_order_relaxed);
}

/* Arrive on the page for a fence of its set, of kind `k` (KIND_SERVER:
 * this fence needs the server whatever the others do). Returns
 * PX_LBAR_NONE (not arrived: the page is broken), PX_LBAR_SERVER,
 * PX_LBAR_WAIT (with lb set) or PX_LBAR_DONE. */
static int arrive(px_client *c, int k, px_lbar *lb)
{
    px_page_hdr *pg = c->page;
    uint32_t old, new, cnt, gen, cseq = c->plast + 1;
    bool server = k == KIND_SERVER, collect = k == KIND_COLLECT, srv, col, full, slots = false,
         given_back = false;

    if (c->page_open > 0) {
        /* A fence of this set is still open (non-blocking, or another
         * thread's): a second arrival would count twice in one generation. */
        px_cli_page_break(c, "two fences of the namespace at once: the fence page is off");
        return PX_LBAR_NONE;
    }
    old = atomic_load_explicit(&pg->word, memory_order_acquire);
    /* before the arrival, which publishes it; the generation cannot move
     * before this process arrives (else its slot no longer matches) */
    if (collect && !(old & PX_PG_BROKEN))
        write_slot(c, pg, cseq, PX_PG_GEN(old));
    do {
        if (old & PX_PG_BROKEN)
            return PX_LBAR_NONE;
        cnt = (old & PX_PG_COUNT) + 1;
        gen = PX_PG_GEN(old);
        srv = server || (old & PX_PG_SERVER) != 0;
        col = collect || (old & PX_PG_COLLECT) != 0;
        full = cnt >= c->page_n && !srv && col; /* the server answers it */
        /* ... unless every record is in its slot: then this process ends it */
        slots = full && slots_full(pg, c->page_n, cseq, gen);
        if (slots && !given_back) {
            give_back_past(c, pg, cseq);
            given_back = true;
        }
        if (slots) {
            full = false;
            pg->res[gen & 1].cseq = cseq;
            pg->res[gen & 1].off = px_page_data_off(c->page_n) + (cseq & 1) * PX_PAGE_HALF;
            pg->res[gen & 1].len = 0;
        }
        if (cnt >= c->page_n && !full) {
            new = (gen + 1) << PX_PG_GEN_SHIFT;
            atomic_store_explicit(&pg->mode[gen & 1],
                                  srv     ? PX_PG_MODE_SERVER
                                  : slots ? PX_PG_MODE_SLOTS
                                          : PX_PG_MODE_DONE,
                                  memory_order_relaxed);
        } else {
            new = (old & ~PX_PG_COUNT) | cnt | (server ? PX_PG_SERVER : 0) |
                  (collect ? PX_PG_COLLECT : 0);
        }
    } while (!atomic_compare_exchange_weak_explicit(&pg->word, &old, new, memory_order_acq_rel,
                                                    memory_order_acquire));
    /* Sleepers wait for the last arrival, or for whoever turned this
     * generation into a SERVER one; a full collect's wait for the server. */
    if (((cnt >= c->page_n && !full) || server) && (old & PX_PG_SERVER) == 0 &&
        (old & PX_PG_COUNT) > 0)
        c->pops->page_wake(c->pctx, (uint32_t *)&pg->word);
    lb->status = PMIX_SUCCESS;
    lb->pg = pg;
    lb->bound = c->page_bound;
    /* numbered once it happened: until this process's next arrival only
     * the server reads it, for a PCOLLECT that needs every arrival */
    if (slots)
        atomic_store_explicit(&pg->cseq, cseq, memory_order_relaxed);
    if (slots && (lb->status = take_page_data(c, gen, PX_PG_MODE_SLOTS)) != PMIX_SUCCESS)
        px_cli_page_break(c, "collected data on the page unusable: the fence page is off");
    if (cnt >= c->page_n && !srv && !full)
        return PX_LBAR_DONE;
    c->page_open++;
    if (srv)
        return PX_LBAR_SERVER;
    if (full) {
        /* the last arrival of a collect: the server writes the data */
        px_buf b;
        px_buf_init_frame(&b, PX_MSG_PCOLLECT, 0);
        px_pack_u32(&b, gen);
        /* Unsent, nobody would finish the collect: everyone goes to the
         * server (a lost connection is also seen while waiting). */
        if (px_cli_send(c, &b, NULL) != PMIX_SUCCESS)
            px_cli_page_break(c, "PCOLLECT could not be sent: the fence page is off");
    }
    lb->gen = gen;
    lb->seen = new;
    return PX_LBAR_WAIT;
}

/* Collected records of the page live until the store drops them; then
 * released[rank] says up to which collect the server may write over. */
typedef struct pheld_ref {
    px_client *c;
    uint32_t cseq;
} pheld_ref;

static void publish_released(px_client *c)
{
    uint32_t upto = c->plast;

    for (unsigned i = 0; i < c->npheld; i++)
        if ((int32_t)(c->pheld[i] - 1 - upto) < 0)
            upto = c->pheld[i] - 1;
    atomic_store_explicit(&px_page_released(c->page_map, c->page_n)[c->self.rank], upto,
                          memory_order_release);
}

static void page_blob_release(void *arg, const uint8_t *data, size_t len)
{
    pheld_ref *h = arg;
    px_client *c = h->c;

    for (unsigned i = 0; i < c->npheld; i++) {
        if (c->pheld[i] == h->cseq) {
            c->pheld[i] = c->pheld[--c->npheld];
            break;
        }
    }
    publish_released(c);
    free(h);
}

/* The records of a SLOTS collect: where each participant's lies in the
 * half (its slot, and the length it wrote, read once). *parts is `stack`
 * or allocated; NULL on failure, with *rc set. */
static px_part *slot_parts(px_client *c, uint32_t cseq, px_part stack[128], pmix_status_t *rc)
{
    px_page_hdr *pg = c->page_map;
    uint32_t n = c->page_n;
    _Atomic uint32_t *len = px_page_slot_len(pg, n, cseq), *off = px_page_slot_off(pg, n, cseq);
    px_part *parts = stack;

    if (n > 128 && (parts = malloc(n * sizeof(*parts))) == NULL) {
        *rc = PMIX_ERR_NOMEM;
        return NULL;
    }
    *rc = PMIX_SUCCESS;
    for (uint32_t q = 0; q < n; q++) {
        parts[q].off = atomic_load_explicit(&off[q], memory_order_relaxed);
        parts[q].len = atomic_load_explicit(&len[q], memory_order_relaxed);
        if (parts[q].off > PX_PAGE_HALF || parts[q].len > PX_PAGE_HALF - parts[q].off)
            *rc = PMIX_ERR_UNPACK_FAILURE;
    }
    if (*rc != PMIX_SUCCESS && parts != stack)
        free(parts);
    return *rc == PMIX_SUCCESS ? parts : NULL;
}

/* The records of a SLOTS collect in `blob` (the half's slots), indexed in
 * place as one addition; or (blob NULL) copied one after another from
 * `base` into a new blob, added the same way. Either way slot q must hold
 * exactly rank q's record of this namespace (px_store_add_parts). */
static pmix_status_t take_slots(px_client *c, px_blob *blob, const char *base, uint32_t cseq)
{
    px_part stack[128], *parts;
    uint32_t n = c->page_n;
    size_t total = 0;
    char *copy = NULL;
    pmix_status_t rc;

    if ((parts = slot_parts(c, cseq, stack, &rc)) == NULL)
        return rc;
    if (blob != NULL) {
        rc = px_store_add_parts(c->store, blob, parts, n, c->self.nspace);
    } else {
        for (uint32_t q = 0; q < n; q++)
            total += parts[q].len;
        if (total > PX_PAGE_HALF) /* parts that overlap: not what writers do */
            rc = PMIX_ERR_UNPACK_FAILURE;
        else if ((copy = malloc(total > 0 ? total : 1)) == NULL)
            rc = PMIX_ERR_NOMEM;
        for (size_t q = 0, at = 0; copy != NULL && q < n; at += parts[q++].len) {
            memcpy(copy + at, base + parts[q].off, parts[q].len);
            parts[q].off = at; /* now in the copy */
        }
        /* px_blob_create frees the copy if it fails */
        if (copy != NULL && (blob = px_blob_create(copy, total, NULL, NULL)) == NULL)
            rc = PMIX_ERR_NOMEM;
        else if (copy != NULL) {
            rc = px_store_add_parts(c->store, blob, parts, n, c->self.nspace);
            px_blob_unref(blob); /* the store holds what it needs */
        }
    }
    if (parts != stack)
        free(parts);
    return rc;
}

/* The records of generation `gen` (mode DATA: written by the server;
 * SLOTS: by each participant), indexed in place. */
static pmix_status_t take_page_data(px_client *c, uint32_t gen, uint32_t mode)
{
    px_page_hdr *pg = c->page_map;
    px_page_res res = pg->res[gen & 1];
    pheld_ref *h;
    px_blob *blob;
    pmix_status_t rc;

    if (mode == PX_PG_MODE_SLOTS)
        res.len = PX_PAGE_HALF; /* the records are somewhere in it (slot_off) */
    if (res.off > c->page_len || res.len > c->page_len - res.off)
        return PMIX_ERR_UNPACK_FAILURE;
    c->plast = res.cseq;
    if (res.len == 0 || c->npheld == sizeof(c->pheld) / sizeof(c->pheld[0])) {
        /* nothing to hold (or too much held already: then a copy) */
        if (res.len == 0) {
            publish_released(c);
            return PMIX_SUCCESS;
        }
        if (mode == PX_PG_MODE_SLOTS) {
            rc = take_slots(c, NULL, (const char *)pg + res.off, res.cseq);
            publish_released(c);
            return rc;
        }
        blob = copy_blob((const char *)pg + res.off, (size_t)res.len, &rc);
        publish_released(c);
        return blob != NULL ? add(c, blob, false) : rc;
    }
    if ((h = malloc(sizeof(*h))) == NULL)
        return PMIX_ERR_NOMEM;
    h->c = c;
    h->cseq = res.cseq;
    c->pheld[c->npheld++] = res.cseq;
    blob = px_blob_create((const char *)pg + res.off, (size_t)res.len, page_blob_release, h);
    if (blob == NULL)
        return PMIX_ERR_NOMEM; /* px_blob_create released it */
    if (mode == PX_PG_MODE_SLOTS) {
        rc = take_slots(c, blob, NULL, res.cseq);
        px_blob_unref(blob); /* the store holds what it needs */
    } else {
        rc = add(c, blob, false);
    }
    publish_released(c);
    return rc;
}

int px_client_lbar_arrive(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                          const pmix_info_t info[], size_t ninfo, px_lbar *lb)
{
    int k;

    /* The page's set is the whole namespace (page_set), of 2 or more
     * processes (the page exists): of check_args only the connection is
     * left to check. Its job-size lookup for a fence of the caller alone
     * took 6% of the CPU of a put-commit-collect-get round at 64. */
    if (c->page == NULL || !page_set(c, procs, nprocs) || !px_client_connected(c))
        return PX_LBAR_NONE;
    /* Frames still queued (a large commit) go only while someone drives
     * the loop: the server's path does, a sleep on the page would not. */
    k = c->pops->out_pending != NULL && c->pops->out_pending(c->pctx) ? KIND_SERVER
                                                                      : kind(info, ninfo);
    return arrive(c, k, lb);
}

int px_client_lbar_check(px_client *c, px_lbar *lb)
{
    px_page_hdr *pg = lb->pg; /* still mapped, even if the page is off now */
    uint32_t cur = atomic_load_explicit(&pg->word, memory_order_acquire);

    /* the generation first: a fence that completed is complete, whatever
     * happened since */
    if (PX_PG_GEN(cur) != lb->gen) {
        uint32_t mode = atomic_load_explicit(&pg->mode[lb->gen & 1], memory_order_relaxed);
        if (mode == PX_PG_MODE_SERVER)
            return PX_LBAR_SERVER;
        c->page_open--;
        if ((mode == PX_PG_MODE_DATA || mode == PX_PG_MODE_SLOTS) &&
            (lb->status = take_page_data(c, lb->gen, mode)) != PMIX_SUCCESS)
            px_cli_page_break(c, "collected data on the page unusable: the fence page is off");
        return PX_LBAR_DONE;
    }
    /* broken (by the server, or by this process), or no server: the server
     * path says what happened */
    if ((cur & (PX_PG_SERVER | PX_PG_BROKEN)) || c->page == NULL || !px_client_connected(c))
        return PX_LBAR_SERVER;
    lb->seen = cur;
    return PX_LBAR_WAIT;
}

uint32_t *px_client_lbar_word(const px_lbar *lb)
{
    return (uint32_t *)&((px_page_hdr *)lb->pg)->word;
}

/* Send FENCE; `arrived`: the caller is on the page already (SERVER). */
static pmix_status_t fence_send(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                                const pmix_info_t info[], size_t ninfo, bool arrived,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    px_req *r = NULL;
    px_buf b;
    double timeout;
    pmix_status_t rc;
    px_lbar lb;

    if ((rc = check_args(c, procs, nprocs)) == PMIX_SUCCESS) {
        if (!arrived && c->page != NULL && page_set(c, procs, nprocs))
            arrived = arrive(c, KIND_SERVER, &lb) == PX_LBAR_SERVER;
        timeout = px_cli_timeout(info, ninfo);
        r = px_cli_req_new(c, PX_MSG_FENCE_DONE, timeout > 0 ? timeout + PX_FENCE_GRACE : 0);
        rc = r != NULL ? PMIX_SUCCESS : PMIX_ERR_NOMEM;
    }
    if (rc == PMIX_SUCCESS) {
        r->page = arrived; /* page_open is the request's now */
        r->opcb = cbfunc;
        r->cbdata = cbdata;
        px_buf_init_frame(&b, PX_MSG_FENCE, r->tag);
        px_pack_procs(&b, procs, nprocs);
        px_pack_info(&b, info, ninfo);
        px_pack_u8(&b, arrived); /* the server checks the page's set was arrived on */
        rc = px_cli_send(c, &b, r);
    } else if (arrived) {
        c->page_open--;
    }
    /* Arrived, and the server will not hear of it: the generation would
     * stay short of a participant. */
    if (rc != PMIX_SUCCESS && arrived)
        px_cli_page_break(c, "a fence on the page could not be sent: the fence page is off");
    return rc;
}

pmix_status_t px_client_fence(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                              const pmix_info_t info[], size_t ninfo, pmix_op_cbfunc_t cbfunc,
                              void *cbdata)
{
    return fence_send(c, procs, nprocs, info, ninfo, false, cbfunc, cbdata);
}

pmix_status_t px_client_fence_arrived(px_client *c, const pmix_proc_t procs[], size_t nprocs,
                                      const pmix_info_t info[], size_t ninfo,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    return fence_send(c, procs, nprocs, info, ninfo, true, cbfunc, cbdata);
}

static void blob_release_region(void *arg, const uint8_t *data, size_t len)
{
    px_cli_region *region = arg;

    region->release(region->arg);
    free(region);
}

/* The region as a blob (no copy); the blob owns the region then. */
static px_blob *region_blob(px_cli_region *region)
{
    px_cli_region *keep = malloc(sizeof(*keep));

    if (keep == NULL)
        return NULL;
    *keep = *region;
    region->release = NULL; /* the blob owns it now */
    return px_blob_create(keep->data, keep->len, blob_release_region, keep);
}

/* A copy of `n` bytes as a blob; NULL for n == 0 (*rc PMIX_SUCCESS) or
 * when out of memory (*rc PMIX_ERR_NOMEM). */
static px_blob *copy_blob(const void *data, size_t n, pmix_status_t *rc)
{
    void *copy;
    px_blob *blob = NULL;

    *rc = PMIX_SUCCESS;
    if (n == 0)
        return NULL;
    if ((copy = malloc(n)) != NULL) {
        memcpy(copy, data, n);
        blob = px_blob_create(copy, n, NULL, NULL); /* frees the copy on failure */
    }
    if (blob == NULL)
        *rc = PMIX_ERR_NOMEM;
    return blob;
}

/* Add a blob's records, or its groups, and drop the caller's reference. */
static pmix_status_t add(px_client *c, px_blob *blob, bool groups)
{
    pmix_status_t rc;

    if (blob == NULL)
        return PMIX_SUCCESS;
    rc = groups ? px_store_add_groups(c->store, blob) : px_store_add_blob(c->store, blob);
    px_blob_unref(blob); /* the store holds what it needs */
    return rc;
}

/* PX_DATA_GROUPS: every node's groups (in the region's first glen bytes,
 * or in the frame) and this node's records cut for local readers (after
 * them in the region, and in the frame). The groups go in first, so that
 * the local records, newer, win. */
static pmix_status_t take_groups(px_client *c, px_buf *b, px_cli_region *region)
{
    uint64_t glen;
    const void *groups, *recs;
    size_t ngroups, nrecs;
    px_blob *whole = NULL, *part;
    pmix_status_t rc;

    if (px_unpack_u64(b, &glen) != PMIX_SUCCESS ||
        px_unpack_bytes_view(b, &groups, &ngroups) != PMIX_SUCCESS ||
        px_unpack_bytes_view(b, &recs, &nrecs) != PMIX_SUCCESS)
        return PMIX_ERR_UNPACK_FAILURE;
    if (region == NULL ? glen != 0 : glen > region->len || ngroups != 0)
        return PMIX_ERR_UNPACK_FAILURE;
    if (region == NULL) {
        part = copy_blob(groups, ngroups, &rc);
        if (rc == PMIX_SUCCESS)
            rc = add(c, part, true);
    } else {
        if ((whole = region_blob(region)) == NULL)
            return PMIX_ERR_NOMEM;
        part = px_blob_slice(whole, 0, (size_t)glen);
        rc = part != NULL ? add(c, part, true) : PMIX_ERR_NOMEM;
        if (rc == PMIX_SUCCESS && whole->len > glen) {
            part = px_blob_slice(whole, (size_t)glen, whole->len - (size_t)glen);
            rc = part != NULL ? add(c, part, false) : PMIX_ERR_NOMEM;
        }
        px_blob_unref(whole);
    }
    if (rc == PMIX_SUCCESS) {
        part = copy_blob(recs, nrecs, &rc);
        if (rc == PMIX_SUCCESS)
            rc = add(c, part, false);
    }
    return rc;
}

/* The collected records as a blob: the region itself when one came (no
 * copy), else a copy of the bytes in the frame. */
static pmix_status_t take_records(px_client *c, px_buf *b, px_cli_region *region)
{
    uint8_t how;
    const void *data = NULL;
    size_t ndata = 0;
    px_blob *blob;
    pmix_status_t rc = PMIX_SUCCESS;

    if (px_unpack_u8(b, &how) != PMIX_SUCCESS)
        return PMIX_ERR_UNPACK_FAILURE;
    if (how == PX_DATA_GROUPS)
        return take_groups(c, b, region);
    if (how == PX_DATA_REGION) {
        if (region == NULL)
            return PMIX_ERR_UNPACK_FAILURE; /* announced, not attached */
        if (region->len == 0)
            return PMIX_SUCCESS;
        if ((blob = region_blob(region)) == NULL)
            return PMIX_ERR_NOMEM;
    } else {
        if (how != PX_DATA_INLINE || region != NULL ||
            px_unpack_bytes_view(b, &data, &ndata) != PMIX_SUCCESS)
            return PMIX_ERR_UNPACK_FAILURE;
        if ((blob = copy_blob(data, ndata, &rc)) == NULL)
            return rc; /* nothing collected, or no memory */
    }
    return add(c, blob, false);
}

void px_cli_fence_reply(px_client *c, px_req *r, pmix_status_t status, px_buf *b,
                        px_cli_region *region)
{
    pmix_op_cbfunc_t cb = r->opcb;
    void *cbdata = r->cbdata;

    /* A fence that arrived on the page and failed (timeout, a death) may
     * have left its generation short of arrivals: the page is off, the
     * server's rules (px_tomb) decide from now on. */
    if (r->page && status != PMIX_SUCCESS)
        px_cli_page_break(c, "a fence on the page failed: the fence page is off");
    /* an error reply may end right after the status */
    if (status == PMIX_SUCCESS)
        status = take_records(c, b, region);
    if (region != NULL && region->release != NULL)
        region->release(region->arg);
    px_cli_req_free(c, r);
    if (cb != NULL)
        cb(status, cbdata);
}
