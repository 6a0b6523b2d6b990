/*
 * tree.c - the radix-k tree: gather to the root, then broadcast from it.
 * Barrier (gather + release, the scheme of PRRTE, Slurm and Flux) and
 * allgather (gather + broadcast); hier uses each half on its own.
 *
 * The k-nomial tree over virtual ranks 0..n-1, rooted at 0: write a rank
 * v > 0 in base k and let t be the position of its lowest non-zero digit;
 * its parent is v with that digit cleared, its children are v + j*k^i for
 * i < t and j = 1..k-1 (below n), and its subtree is exactly the ranks
 * [v, v + k^t) below n (the root: t is infinite, its subtree is all).
 * Radix 2 is the binomial tree. Because subtrees are contiguous ranges, a
 * node forwards its whole subtree as one range message.
 *
 * Gather (round 0): a node waits for every child's subtree, then sends its
 * own subtree (its block and theirs) to its parent. Broadcast (round 1):
 * the root sends the whole down-store (range [0, down->n)) to each child,
 * the child with the largest subtree first; a node that receives it from
 * its parent stores it in place of what it had (so it lands in rank order)
 * and forwards it to its children. In a barrier both carry no payload.
 *
 * Messages: n - 1 per half, 2(n - 1) in all; rounds 2 * ceil(log_k n).
 * Cost (allgather, binomial): 2 ceil(lg n) alpha + ((n-1)/n) n_bytes beta
 * for the gather + ceil(lg n) n_bytes beta for the broadcast (the root
 * sends the whole result once per child).
 */
#include <stdlib.h>

#include "coll_int.h"

typedef struct {
    uint64_t stride; /* k^t of my rank (my subtree's span); n for the root */
    uint32_t parent; /* PX_COLL_NONE for the root */
    uint32_t nchild; /* children count */
    uint32_t got;    /* gather messages received */
    bool sent_up, got_down, sent_down;
    uint64_t mask[]; /* bit per child index: its gather message arrived */
} tree;

/* Lowest non-zero base-k digit of v > 0: its position's weight k^t. */
static uint64_t low_weight(uint64_t v, unsigned k)
{
    uint64_t w = 1;

    while (v % k == 0) {
        v /= k;
        w *= k;
    }
    return w;
}

static uint32_t parent_of(uint32_t v, unsigned k)
{
    uint64_t w = low_weight(v, k);

    return (uint32_t)(v - ((v / w) % k) * w);
}

/* Span of the subtree of v: [v, v + span) clipped to n. */
static uint32_t subtree(uint32_t v, uint32_t n, unsigned k)
{
    uint64_t w;

    if (v == 0) {
        return n;
    }
    w = low_weight(v, k);
    return (uint32_t)(w < (uint64_t)n - v ? w : (uint64_t)n - v);
}

/* Index of child c of v (parent_of(c) == v): (i, j) -> i*(k-1) + j-1
 * where c - v = j * k^i. */
static uint32_t child_index(uint32_t v, uint32_t c, unsigned k)
{
    uint64_t d = (uint64_t)c - v;
    uint32_t i = 0;

    while (d % k == 0) {
        d /= k;
        i++;
    }
    return i * (k - 1) + (uint32_t)(d - 1);
}

uint32_t px_coll_tree_depth(uint32_t n, unsigned k)
{
    uint32_t depth = 0;
    uint64_t span = 1;

    while (span < n) {
        span *= k;
        depth++;
    }
    return depth;
}

static pmix_status_t tree_init(px_coll_mach *m)
{
    unsigned k = m->radix;
    uint64_t stride = m->me == 0 ? m->n : low_weight(m->me, k);
    uint32_t nchild = 0, nbits;
    tree *t;

    /* Children: me + j*k^i for k^i < stride, j = 1..k-1, below n. Their
     * indices run up to (levels * (k-1)), which sizes the mask. */
    nbits = 0;
    for (uint64_t w = 1; w < stride && m->me + w < m->n; w *= k) {
        for (unsigned j = 1; j < k && m->me + j * w < m->n; j++) {
            nchild++;
        }
        nbits += k - 1;
    }
    t = calloc(1, sizeof(*t) + ((nbits + 63) / 64) * sizeof(uint64_t));
    if (t == NULL) {
        return PMIX_ERR_NOMEM;
    }
    t->stride = stride;
    t->parent = m->me == 0 ? PX_COLL_NONE : parent_of(m->me, k);
    t->nchild = nchild;
    m->st = t;
    return PMIX_SUCCESS;
}

/* Broadcast to the children, largest subtree first. */
static void send_down(px_coll_mach *m)
{
    tree *t = m->st;
    unsigned k = m->radix;
    uint64_t w = 1;

    t->sent_down = true;
    if (t->stride <= 1) {
        return; /* a leaf */
    }
    while (w * k < t->stride && m->me + w * k < m->n) {
        w *= k;
    }
    for (;;) {
        for (unsigned j = 1; j < k && m->me + j * w < m->n; j++) {
            uint32_t c = (uint32_t)(m->me + j * w);
            px_coll_mach_send_range(m, c, 1, m->down, 0, m->down ? m->down->n : 0);
        }
        if (w == 1) {
            break;
        }
        w /= k;
    }
}

static void check_done(px_coll_mach *m)
{
    tree *t = m->st;
    bool up = !(m->tree_mode & PX_COLL_TREE_GATHER) || t->sent_up;
    bool down = !(m->tree_mode & PX_COLL_TREE_BCAST) || t->sent_down;

    if (up && down) {
        m->done = true;
    }
}

static void progress(px_coll_mach *m)
{
    tree *t = m->st;

    if (!m->started) {
        return;
    }
    if ((m->tree_mode & PX_COLL_TREE_GATHER) && !t->sent_up && t->got == t->nchild) {
        t->sent_up = true;
        if (m->me != 0) {
            px_coll_mach_send_range(m, t->parent, 0, m->bs, m->me, subtree(m->me, m->n, m->radix));
        }
    }
    if ((m->tree_mode & PX_COLL_TREE_BCAST) && !t->sent_down) {
        bool ready =
            m->me == 0 ? (!(m->tree_mode & PX_COLL_TREE_GATHER) || t->sent_up) : t->got_down;
        if (ready) {
            send_down(m);
        }
    }
    check_done(m);
}

static void tree_start(px_coll_mach *m)
{
    progress(m);
}

static int tree_deliver(px_coll_mach *m, uint32_t vfrom, uint32_t round, const uint8_t *p,
                        size_t len)
{
    tree *t = m->st;
    int v;

    if (round == 0) {
        uint32_t idx;
        if (!(m->tree_mode & PX_COLL_TREE_GATHER) || vfrom == 0 || vfrom <= m->me ||
            parent_of(vfrom, m->radix) != m->me) {
            return PX_COLL_V_BAD;
        }
        idx = child_index(m->me, vfrom, m->radix);
        if ((t->mask[idx / 64] >> (idx % 64)) & 1) {
            return PX_COLL_V_DUP;
        }
        v = px_coll_mach_read_range(m, m->bs, p, len, vfrom, subtree(vfrom, m->n, m->radix), false);
        if (v != PX_COLL_V_OK) {
            return v;
        }
        t->mask[idx / 64] |= (uint64_t)1 << (idx % 64);
        t->got++;
    } else if (round == 1) {
        if (!(m->tree_mode & PX_COLL_TREE_BCAST) || m->me == 0 || vfrom != t->parent) {
            return PX_COLL_V_BAD;
        }
        if (t->got_down) {
            return PX_COLL_V_DUP;
        }
        v = px_coll_mach_read_range(m, m->down, p, len, 0, m->down ? m->down->n : 0, true);
        if (v != PX_COLL_V_OK) {
            return v;
        }
        t->got_down = true;
    } else {
        return PX_COLL_V_BAD;
    }
    progress(m);
    return PX_COLL_V_OK;
}

static void tree_fini(px_coll_mach *m)
{
    free(m->st);
    m->st = NULL;
}

const px_coll_mach_ops px_coll_tree_mach = {
    .init = tree_init,
    .start = tree_start,
    .deliver = tree_deliver,
    .fini = tree_fini,
};
