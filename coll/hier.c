/*
 * hier.c - the hierarchical (topology-aware) collective: gather inside
 * each group, a lateral collective among the group leaders, broadcast
 * inside each group.
 *
 * Groups come from the caller (px_coll_groups: a member -> group map,
 * e.g. from network coordinates: one group per switch); NULL is one flat
 * group. A group's leader is its lowest member; inside a group, members
 * are virtual ranks 0..c-1 in member order, so the leader is rank 0 and
 * root of the group's radix-k tree. Three state machines, one per phase
 * (the header's phase keeps their messages apart):
 *
 *   1 gather   tree.c in gather mode over the group: the leader ends with
 *              the group's blocks;
 *   2 leaders  any lateral algorithm (ring, recdbl, bruck, tree, and for a
 *              barrier dissemination) over the G leaders, where leader g's
 *              block is its group's blob: u32 length per group member in
 *              group order, then their data;
 *   3 bcast    tree.c in broadcast mode over the group: the leader sends
 *              the whole result (all n members' blocks) down its tree.
 *
 * A barrier runs the same phases with empty messages. Machines are all
 * created at the start, so that a leader accepts phase-2 messages from
 * faster leaders while its own group is still gathering; a machine only
 * sends once its phase has started.
 *
 * Messages: sum over groups of 2(c_g - 1), plus the leaders' algorithm
 * over G. Cost: T_gather(c, m) + T_lateral(G, c m) + T_bcast(c, n m).
 *
 * With every member a leader (PX_COLL_LEADERS_ALL, the default for an
 * allgather over several groups) there is no gather and no broadcast:
 *
 *   2 columns  the members at position j of every group (column j, in
 *              group order: px_coll_groups' col_*) run the lateral
 *              algorithm on their own blocks;
 *   3 groups   each group runs Bruck's allgather (dissemination for a
 *              barrier) where member j's block is its column's blob: u32 length
 *              per column member, then their data.
 *
 * Only the columns cross between groups, and each member sends its own
 * block there, not its group's: the traffic over the links between groups
 * is (G - 1) m per member, and the big messages (G m each) stay inside the
 * groups. On a tapered fat tree that is the point (docs/collectives.md,
 * "Where hierarchy wins"). Messages: sum over columns of the lateral
 * algorithm's, plus sum over groups of the group algorithm's. Cost, with
 * G groups of c: T_lateral(G, m) + T_group(c, G m); with recursive
 * doubling for both and G, c powers of two it has lg P rounds, as flat
 * recursive doubling has.
 */
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

typedef struct {
    const px_coll_groups *g; /* NULL: one flat group */
    uint32_t grp, gsize, ngroups;
    bool leader;
    int stage;             /* 1, 2, 3 */
    px_coll_blocks gstore; /* allgather: my group's blocks by group rank */
    px_coll_blocks lstore; /* allgather, leaders: group blobs by group */
    /* every member a leader: */
    bool all;
    uint32_t pos, col;     /* my position in my group; my rank in my column */
    uint32_t self;         /* my member id: the map of a column of one */
    px_coll_blocks cstore; /* allgather: my column's blocks by column rank */
} hier;

static uint32_t col_size(const hier *h, uint32_t j)
{
    return h->g != NULL ? h->g->col_start[j + 1] - h->g->col_start[j] : 1;
}

static uint32_t col_member(const hier *h, uint32_t j, uint32_t k)
{
    return h->g != NULL ? h->g->col_members[h->g->col_start[j] + k] : h->self;
}

static uint32_t group_size(const hier *h, uint32_t grp)
{
    return h->g != NULL ? h->g->start[grp + 1] - h->g->start[grp] : h->gsize;
}

static uint32_t group_member(const hier *h, uint32_t grp, uint32_t i)
{
    return h->g != NULL ? h->g->members[h->g->start[grp] + i] : i;
}

/* A group blob: u32 length per member of the group, then their bytes (a
 * phantom store keeps the lengths only: `kept` < `len`). */
static bool check_blob(void *arg, uint32_t grp, const uint8_t *p, size_t kept, size_t len)
{
    hier *h = arg;
    uint32_t c = group_size(h, grp);
    uint64_t total = 0;

    if (kept / 4 < c || len / 4 < c) {
        return false;
    }
    for (uint32_t i = 0; i < c; i++) {
        total += px_coll_get32(p + 4 * (size_t)i);
    }
    return total == (uint64_t)(len - 4 * (size_t)c);
}

/* A column blob (every member a leader): u32 length per member of column
 * `j`, then their bytes. */
static bool check_colblob(void *arg, uint32_t j, const uint8_t *p, size_t kept, size_t len)
{
    hier *h = arg;
    uint32_t c = col_size(h, j);
    uint64_t total = 0;

    if (kept / 4 < c || len / 4 < c) {
        return false;
    }
    for (uint32_t i = 0; i < c; i++) {
        total += px_coll_get32(p + 4 * (size_t)i);
    }
    return total == (uint64_t)(len - 4 * (size_t)c);
}

static uint32_t colblob_kept(void *arg, uint32_t j)
{
    return 4 * col_size(arg, j);
}

/* What a phantom leaders' store keeps of a group blob: its lengths. */
static uint32_t blob_kept(void *arg, uint32_t grp)
{
    return 4 * group_size(arg, grp);
}

static void setup_mach(px_coll_run *r, px_coll_mach *m, uint8_t phase, const px_coll_mach_ops *ops)
{
    m->run = r;
    m->ops = ops;
    m->phase = phase;
    m->radix = r->ch.radix;
    m->tree_mode = PX_COLL_TREE_GATHER | PX_COLL_TREE_BCAST;
}

/* Turn every block of `src` into one blob, block `i` of `dst`: a leader
 * makes its group's blob in the leaders' store, every member (all
 * leaders) its column's blob in the group's store. */
static pmix_status_t make_blob(const px_coll_blocks *src, px_coll_blocks *dst, uint32_t i)
{
    uint32_t c = src->n;
    size_t total = 4 * (size_t)c;
    uint8_t *p, *data;

    for (uint32_t k = 0; k < c; k++) {
        total += src->len[k];
    }
    p = px_coll_blocks_put_space(dst, i, total);
    if (p == NULL) {
        return PMIX_ERR_NOMEM;
    }
    data = p + 4 * (size_t)c;
    for (uint32_t k = 0; k < c; k++) {
        size_t l;
        const uint8_t *b = px_coll_blocks_get(src, k, &l);
        px_coll_put32(p + 4 * (size_t)k, (uint32_t)l);
        if (l > 0 && !dst->phantom) {
            memcpy(data, b, l);
            data += l;
        }
    }
    return PMIX_SUCCESS;
}

/* Leader: unpack every group blob into the result, by member. */
static pmix_status_t unpack_blobs(px_coll_run *r, hier *h)
{
    for (uint32_t grp = 0; grp < h->ngroups; grp++) {
        size_t len;
        const uint8_t *p = px_coll_blocks_get(&h->lstore, grp, &len);
        uint32_t c = group_size(h, grp);
        const uint8_t *data = p + 4 * (size_t)c;

        for (uint32_t i = 0; i < c; i++) {
            uint32_t l = px_coll_get32(p + 4 * (size_t)i);
            pmix_status_t rc = px_coll_blocks_put(&r->result, group_member(h, grp, i), data, l);
            if (rc != PMIX_SUCCESS) {
                return rc;
            }
            data += px_coll_blocks_kept(&r->result, group_member(h, grp, i), l);
        }
    }
    return PMIX_SUCCESS;
}

/* Every member a leader: unpack the group's column blobs into the
 * result, by member. */
static pmix_status_t unpack_columns(px_coll_run *r, hier *h)
{
    for (uint32_t j = 0; j < h->gsize; j++) {
        size_t len;
        const uint8_t *p = px_coll_blocks_get(&h->gstore, j, &len);
        uint32_t c = col_size(h, j);
        const uint8_t *data = p + 4 * (size_t)c;

        for (uint32_t k = 0; k < c; k++) {
            uint32_t l = px_coll_get32(p + 4 * (size_t)k), m = col_member(h, j, k);
            pmix_status_t rc = px_coll_blocks_put(&r->result, m, data, l);
            if (rc != PMIX_SUCCESS) {
                return rc;
            }
            data += px_coll_blocks_kept(&r->result, m, l);
        }
    }
    return PMIX_SUCCESS;
}

static void advance_all(px_coll_run *r)
{
    hier *h = r->dst;
    pmix_status_t rc;

    if (h->stage == 2 && r->mach[1].done) {
        if (r->kind == PX_COLL_ALLGATHER &&
            (rc = make_blob(&h->cstore, &h->gstore, h->pos)) != PMIX_SUCCESS) {
            px_coll_run_fail(r, rc, PX_COLL_NONE);
            return;
        }
        h->stage = 3;
        px_coll_mach_start(&r->mach[2]);
    }
    if (h->stage == 3 && r->mach[2].done) {
        if (r->kind == PX_COLL_ALLGATHER && (rc = unpack_columns(r, h)) != PMIX_SUCCESS) {
            px_coll_run_fail(r, rc, PX_COLL_NONE);
            return;
        }
        h->stage = 4;
        r->done = true;
    }
}

static void advance(px_coll_run *r)
{
    hier *h = r->dst;
    pmix_status_t rc;

    if (h->all) {
        advance_all(r);
        return;
    }
    for (;;) {
        if (h->stage == 1 && r->mach[0].done) {
            h->stage = h->leader ? 2 : 3;
            if (h->leader) {
                if (r->kind == PX_COLL_ALLGATHER &&
                    (rc = make_blob(&h->gstore, &h->lstore, h->grp)) != PMIX_SUCCESS) {
                    px_coll_run_fail(r, rc, PX_COLL_NONE);
                    return;
                }
                px_coll_mach_start(&r->mach[1]);
            }
            continue;
        }
        if (h->stage == 2 && r->mach[1].done) {
            if (r->kind == PX_COLL_ALLGATHER && (rc = unpack_blobs(r, h)) != PMIX_SUCCESS) {
                px_coll_run_fail(r, rc, PX_COLL_NONE);
                return;
            }
            h->stage = 3;
            px_coll_mach_start(&r->mach[2]);
            continue;
        }
        if (h->stage == 3 && r->mach[2].done) {
            r->done = true;
        }
        return;
    }
}

/* Every member a leader: phase 2 over my column, phase 3 over my group. */
static pmix_status_t start_all(px_coll_run *r, hier *h, const void *contrib, size_t len)
{
    px_coll *c = r->c;
    const px_coll_groups *g = h->g;
    bool data = r->kind == PX_COLL_ALLGATHER;
    /* Inside a group: Bruck (or, for a barrier, dissemination): ceil(lg c)
     * rounds for any c, and the same counts for both kinds. */
    const px_coll_algo *intra =
        px_coll_algo_by_name(r->kind == PX_COLL_ALLGATHER ? "bruck" : "dissemination");
    px_coll_mach *mc = &r->mach[1], *mg = &r->mach[2];
    pmix_status_t rc;

    h->all = true;
    h->self = c->me;
    h->col = g != NULL ? g->col_rank[c->me] : 0;
    h->stage = 2;
    r->nmach = 3;
    setup_mach(r, mc, PX_COLL_PHASE_LEADERS, r->ch.inner->mach);
    mc->n = col_size(h, h->pos);
    mc->me = h->col;
    mc->map = g != NULL ? g->col_members + g->col_start[h->pos] : &h->self;
    setup_mach(r, mg, PX_COLL_PHASE_BCAST, intra->mach);
    mg->n = h->gsize;
    mg->me = h->pos;
    mg->map = g != NULL ? g->members + g->start[h->grp] : NULL;
    if (data) {
        if ((rc = px_coll_blocks_init(&h->cstore, mc->n)) != PMIX_SUCCESS) {
            return rc;
        }
        h->cstore.phantom = c->sizes_only;
        if ((rc = px_coll_blocks_put(&h->cstore, h->col, contrib, len)) != PMIX_SUCCESS ||
            (rc = px_coll_blocks_init(&h->gstore, h->gsize)) != PMIX_SUCCESS) {
            return rc;
        }
        h->gstore.check = check_colblob;
        h->gstore.check_arg = h;
        h->gstore.phantom = c->sizes_only;
        h->gstore.kept = colblob_kept;
        mc->bs = mc->down = &h->cstore;
        mg->bs = mg->down = &h->gstore;
    }
    if ((rc = px_coll_mach_init(mc)) != PMIX_SUCCESS ||
        (rc = px_coll_mach_init(mg)) != PMIX_SUCCESS) {
        return rc;
    }
    px_coll_mach_start(mc);
    advance(r);
    return PMIX_SUCCESS;
}

static pmix_status_t hier_start(px_coll_run *r, const void *contrib, size_t len)
{
    px_coll *c = r->c;
    const px_coll_groups *g = c->groups;
    bool data = r->kind == PX_COLL_ALLGATHER;
    uint32_t gpos;
    pmix_status_t rc;
    hier *h = calloc(1, sizeof(*h));

    if (h == NULL) {
        return PMIX_ERR_NOMEM;
    }
    r->dst = h;
    h->g = g;
    h->grp = g != NULL ? g->group_of[c->me] : 0;
    h->ngroups = g != NULL ? g->ngroups : 1;
    h->gsize = g != NULL ? g->start[h->grp + 1] - g->start[h->grp] : c->n;
    gpos = g != NULL ? g->pos[c->me] : c->me;
    h->pos = gpos;
    h->leader = gpos == 0;
    h->stage = 1;
    if (r->ch.leaders == PX_COLL_LEADERS_ALL) {
        return start_all(r, h, contrib, len);
    }

    r->nmach = 3;
    setup_mach(r, &r->mach[0], PX_COLL_PHASE_GATHER, &px_coll_tree_mach);
    setup_mach(r, &r->mach[2], PX_COLL_PHASE_BCAST, &px_coll_tree_mach);
    for (int i = 0; i < 3; i += 2) {
        r->mach[i].n = h->gsize;
        r->mach[i].me = gpos;
        r->mach[i].map = g != NULL ? g->members + g->start[h->grp] : NULL;
    }
    r->mach[0].tree_mode = PX_COLL_TREE_GATHER;
    r->mach[2].tree_mode = PX_COLL_TREE_BCAST;
    if (data) {
        rc = px_coll_blocks_init(&h->gstore, h->gsize);
        h->gstore.phantom = c->sizes_only;
        if (rc == PMIX_SUCCESS) {
            rc = px_coll_blocks_put(&h->gstore, gpos, contrib, len);
        }
        if (rc != PMIX_SUCCESS) {
            return rc;
        }
        r->mach[0].bs = &h->gstore;
        r->mach[2].down = &r->result;
    }
    if (h->leader) {
        px_coll_mach *m = &r->mach[1];
        setup_mach(r, m, PX_COLL_PHASE_LEADERS, r->ch.inner->mach);
        m->n = h->ngroups;
        m->me = h->grp;
        m->map = g != NULL ? g->leaders : NULL;
        if (data) {
            rc = px_coll_blocks_init(&h->lstore, h->ngroups);
            if (rc != PMIX_SUCCESS) {
                return rc;
            }
            h->lstore.check = check_blob;
            h->lstore.check_arg = h;
            h->lstore.phantom = c->sizes_only;
            h->lstore.kept = blob_kept;
            m->bs = m->down = &h->lstore;
        }
        if ((rc = px_coll_mach_init(m)) != PMIX_SUCCESS) {
            return rc;
        }
    }
    if ((rc = px_coll_mach_init(&r->mach[0])) != PMIX_SUCCESS ||
        (rc = px_coll_mach_init(&r->mach[2])) != PMIX_SUCCESS) {
        return rc;
    }
    px_coll_mach_start(&r->mach[0]);
    if (!h->leader) {
        px_coll_mach_start(&r->mach[2]); /* it waits for its parent */
    }
    advance(r);
    return PMIX_SUCCESS;
}

/* The sender's virtual rank in the phase's space, or PX_COLL_NONE. */
static uint32_t vrank_of(const px_coll_run *r, const hier *h, uint8_t phase, uint32_t sender)
{
    const px_coll_groups *g = h->g;

    if (h->all) {
        if (phase == PX_COLL_PHASE_LEADERS) {
            return g != NULL && g->pos[sender] == h->pos ? g->col_rank[sender] : PX_COLL_NONE;
        }
        if (phase != PX_COLL_PHASE_BCAST) {
            return PX_COLL_NONE;
        }
    } else if (phase == PX_COLL_PHASE_LEADERS) {
        if (!h->leader) {
            return PX_COLL_NONE;
        }
        if (g == NULL) {
            return PX_COLL_NONE; /* one group: no leaders' phase traffic */
        }
        return g->leaders[g->group_of[sender]] == sender ? g->group_of[sender] : PX_COLL_NONE;
    }
    if (g == NULL) {
        return sender;
    }
    return g->group_of[sender] == h->grp ? g->pos[sender] : PX_COLL_NONE;
}

static int hier_deliver(px_coll_run *r, const px_coll_msg_info *hd, const uint8_t *p, size_t len)
{
    hier *h = r->dst;
    px_coll_mach *m;
    uint32_t vfrom;
    int v;

    if (hd->phase < PX_COLL_PHASE_GATHER || hd->phase > PX_COLL_PHASE_BCAST) {
        return PX_COLL_V_BAD;
    }
    vfrom = vrank_of(r, h, hd->phase, hd->sender);
    if (vfrom == PX_COLL_NONE) {
        return PX_COLL_V_BAD;
    }
    m = &r->mach[hd->phase - 1];
    v = m->ops->deliver(m, vfrom, hd->round, p, len);
    advance(r);
    return v;
}

static void hier_fini(px_coll_run *r)
{
    hier *h = r->dst;

    for (unsigned i = 0; i < r->nmach; i++) {
        px_coll_mach_fini(&r->mach[i]);
    }
    if (h != NULL) {
        px_coll_blocks_fini(&h->gstore);
        px_coll_blocks_fini(&h->lstore);
        px_coll_blocks_fini(&h->cstore);
        free(h);
        r->dst = NULL;
    }
}

const px_coll_driver px_coll_hier_driver = {
    .start = hier_start,
    .deliver = hier_deliver,
    .fini = hier_fini,
};
