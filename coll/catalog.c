/*
 * catalog.c - the table of algorithms and their textbook counts.
 *
 * One const entry per algorithm: its name (what PMIXLAB_*_ALGO and the
 * info keys accept), its wire id (never reused: an id on the wire must
 * mean the same thing to every build), the kinds it does, whether hier
 * can run it among group leaders, whether it takes a radix, its driver
 * (flat.c, or hier.c) and its state machine. Adding an algorithm is one
 * file with a px_coll_mach_ops and one entry here (docs/collectives.md).
 *
 * The counts are the textbook ones for a failure-free run: data messages
 * sent by all members together, and rounds on the critical path. The
 * tests check that the algorithms send exactly these numbers. The formula
 * is the time a failure-free run takes on a contention-free network
 * (px_coll_cost_in); pmixsim holds every fence against it, and the
 * simulation tests check that the two agree within 1% on the crossbar.
 */
#include <math.h>

#include "coll_int.h"

#define B PX_COLL_KIND_BIT(PX_COLL_BARRIER)
#define A PX_COLL_KIND_BIT(PX_COLL_ALLGATHER)

static uint64_t lg_messages(uint32_t n, unsigned radix)
{
    return (uint64_t)n * px_coll_ceil_lg(n);
}

static uint32_t lg_rounds(uint32_t n, unsigned radix)
{
    return px_coll_ceil_lg(n);
}

static uint64_t tree_messages(uint32_t n, unsigned radix)
{
    return 2 * ((uint64_t)n - 1);
}

static uint32_t tree_rounds(uint32_t n, unsigned radix)
{
    return 2 * px_coll_tree_depth(n, radix);
}

static uint64_t recdbl_messages(uint32_t n, unsigned radix)
{
    uint32_t p = px_coll_pof2_floor(n), r = n - p;

    return (uint64_t)p * px_coll_ceil_lg(p) + 2 * (uint64_t)r;
}

static uint32_t recdbl_rounds(uint32_t n, unsigned radix)
{
    uint32_t p = px_coll_pof2_floor(n);

    return px_coll_ceil_lg(p) + (p != n ? 2 : 0);
}

static uint64_t ring_messages(uint32_t n, unsigned radix)
{
    return (uint64_t)n * (n - 1);
}

static uint32_t ring_rounds(uint32_t n, unsigned radix)
{
    return n - 1;
}

/* Formulas (px_coll_terms). Dissemination: lg rounds of one message.
 * Recursive doubling and Bruck: lg rounds, and everyone's data arrives
 * once. Ring: p - 1 rounds. Binary tree: lg rounds up and lg down; an
 * allgather's root also sends the whole result down each level. */
static double lg_formula(const px_coll_terms *t)
{
    return t->lg * t->a;
}

static double lg_spread_formula(const px_coll_terms *t)
{
    return t->lg * t->a + t->spread;
}

static double ring_formula(const px_coll_terms *t)
{
    return (t->p - 1) * t->a + t->spread;
}

static double tree_formula(const px_coll_terms *t)
{
    if (t->radix != 0 && t->radix != 2) {
        return NAN; /* no formula for other radixes yet */
    }
    return 2 * t->lg * t->a + (t->allgather ? t->spread + t->lg * t->n * t->beta : 0);
}

static const px_coll_algo catalog[] = {
    {"dissemination", 1, B, true, false, "dissemination", &px_coll_flat_driver,
     &px_coll_dissem_mach, lg_messages, lg_rounds, lg_formula},
    {"tree", 2, B | A, true, true, "tree[:RADIX]", &px_coll_flat_driver, &px_coll_tree_mach,
     tree_messages, tree_rounds, tree_formula},
    {"recdbl", 3, B | A, true, false, "recdbl", &px_coll_flat_driver, &px_coll_recdbl_mach,
     recdbl_messages, recdbl_rounds, lg_spread_formula},
    {"ring", 4, A, true, false, "ring", &px_coll_flat_driver, &px_coll_ring_mach, ring_messages,
     ring_rounds, ring_formula},
    {"bruck", 5, A, true, false, "bruck", &px_coll_flat_driver, &px_coll_bruck_mach, lg_messages,
     lg_rounds, lg_spread_formula},
    {"hier", 6, B | A, false, true, "hier[:INNER][:RADIX][:one|all]", &px_coll_hier_driver, NULL,
     NULL, NULL, NULL},
};

#define NALGOS (sizeof(catalog) / sizeof(catalog[0]))

bool px_coll_name_eq(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y) {
            return false;
        }
    }
    return *a == *b;
}

const px_coll_algo *px_coll_algo_by_name(const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < NALGOS; i++) {
        if (px_coll_name_eq(catalog[i].name, name)) {
            return &catalog[i];
        }
    }
    return NULL;
}

const px_coll_algo *px_coll_algo_by_id(unsigned id)
{
    for (size_t i = 0; i < NALGOS; i++) {
        if (catalog[i].id == id) {
            return &catalog[i];
        }
    }
    return NULL;
}

const px_coll_algo *px_coll_algo_at(size_t i)
{
    return i < NALGOS ? &catalog[i] : NULL;
}

const char *px_coll_algo_name(const px_coll_algo *a)
{
    return a != NULL ? a->name : "auto";
}

unsigned px_coll_algo_id(const px_coll_algo *a)
{
    return a != NULL ? a->id : 0;
}

bool px_coll_algo_supports(const px_coll_algo *a, px_coll_kind kind)
{
    return a != NULL && (kind == PX_COLL_BARRIER || kind == PX_COLL_ALLGATHER) &&
           (a->kinds & PX_COLL_KIND_BIT(kind)) != 0;
}

uint16_t px_coll_choice_param(const px_coll_choice *ch)
{
    if (ch->algo == NULL || !ch->algo->radix) {
        return 0;
    }
    if (ch->algo->drv == &px_coll_hier_driver) {
        unsigned all = ch->leaders == PX_COLL_LEADERS_ALL ? PX_COLL_PARAM_ALL : 0;
        return (uint16_t)(px_coll_algo_id(ch->inner) | all | (ch->radix << 8));
    }
    return (uint16_t)ch->radix;
}

static bool is_hier(const px_coll_choice *ch)
{
    return ch->algo != NULL && ch->algo->drv == &px_coll_hier_driver;
}

/* The inner choice of a resolved hier choice: the leaders' algorithm with
 * the same radix. */
static px_coll_choice inner_of(const px_coll_choice *ch)
{
    px_coll_choice in = {ch->inner, NULL, ch->inner != NULL && ch->inner->radix ? ch->radix : 0, 0};
    return in;
}

static uint32_t col_size(const px_coll_groups *g, uint32_t n, uint32_t j)
{
    return g != NULL ? g->col_start[j + 1] - g->col_start[j] : 1;
}

static uint32_t grp_size(const px_coll_groups *g, uint32_t n, uint32_t i)
{
    return g != NULL ? g->start[i + 1] - g->start[i] : n;
}

uint64_t px_coll_messages(const px_coll_choice *ch, uint32_t n, const px_coll_groups *g)
{
    if (ch == NULL || ch->algo == NULL || n == 0) {
        return 0;
    }
    if (is_hier(ch) && ch->leaders == PX_COLL_LEADERS_ALL) {
        uint32_t ngroups = g != NULL ? g->ngroups : 1, ncols = g != NULL ? g->ncols : n;
        px_coll_choice in = inner_of(ch);
        uint64_t sum = 0;
        for (uint32_t j = 0; j < ncols; j++) {
            sum += px_coll_messages(&in, col_size(g, n, j), NULL);
        }
        for (uint32_t i = 0; i < ngroups; i++) {
            sum += lg_messages(grp_size(g, n, i), 0); /* bruck or dissemination */
        }
        return sum;
    }
    if (is_hier(ch)) {
        uint32_t ngroups = g != NULL ? g->ngroups : 1;
        px_coll_choice in = inner_of(ch);
        return 2 * ((uint64_t)n - ngroups) + px_coll_messages(&in, ngroups, NULL);
    }
    return ch->algo->messages(n, ch->radix);
}

uint32_t px_coll_rounds(const px_coll_choice *ch, uint32_t n, const px_coll_groups *g)
{
    if (ch == NULL || ch->algo == NULL || n == 0) {
        return 0;
    }
    if (is_hier(ch) && ch->leaders == PX_COLL_LEADERS_ALL) {
        uint32_t ngroups = g != NULL ? g->ngroups : 1, ncols = g != NULL ? g->ncols : n;
        uint32_t lat = 0, grp = 0;
        px_coll_choice in = inner_of(ch);
        for (uint32_t j = 0; j < ncols; j++) {
            uint32_t d = px_coll_rounds(&in, col_size(g, n, j), NULL);
            lat = d > lat ? d : lat;
        }
        for (uint32_t i = 0; i < ngroups; i++) {
            uint32_t d = lg_rounds(grp_size(g, n, i), 0);
            grp = d > grp ? d : grp;
        }
        return lat + grp;
    }
    if (is_hier(ch)) {
        uint32_t ngroups = g != NULL ? g->ngroups : 1, depth = 0;
        px_coll_choice in = inner_of(ch);
        for (uint32_t i = 0; i < ngroups; i++) {
            uint32_t c = g != NULL ? g->start[i + 1] - g->start[i] : n;
            uint32_t d = px_coll_tree_depth(c, ch->radix);
            depth = d > depth ? d : depth;
        }
        return 2 * depth + px_coll_rounds(&in, ngroups, NULL);
    }
    return ch->algo->rounds(n, ch->radix);
}

/* What an allgather message carries besides its header and the
 * contributions (docs/collectives.md): a range (u32 first, u32 count) per
 * message and a u32 length per block. */
#define RANGE_HDR 8
#define BLOCK_HDR 4

/* A flat algorithm's formula over p members whose blocks, length words
 * included, total n bytes; `a` is one message's cost. */
static double flat_time(const px_coll_algo *algo, unsigned radix, bool allgather, double p,
                        double n, double a, double beta)
{
    px_coll_terms t;

    if (p <= 1) {
        return 0;
    }
    t.allgather = allgather;
    t.p = p;
    t.lg = px_coll_ceil_lg((uint32_t)p);
    t.beta = beta;
    t.a = a;
    t.n = allgather ? n : 0;
    t.spread = (t.p - 1) / t.p * t.n * beta;
    t.radix = radix;
    return algo->formula != NULL ? algo->formula(&t) : NAN;
}

/* hier over G groups of c (the largest), P members, m bytes each (bk = m
 * + its length word):
 *   every member a leader: T_inner(G blocks of bk) + T_bruck(c blocks of
 *     G bk + 4) (a column's blob: a length and a block per column member,
 *     and its own length word);
 *   one leader:  lg c a + (c - 1) bk beta         binomial gather
 *              + T_inner(G blocks of c bk + 4)    group blobs
 *              + lg c (a + P bk beta)             binomial broadcast of
 *                                                 the result, whose root
 *                                                 sends it lg c times.
 * Trees of radix 2 only (NAN otherwise), as for the tree row. */
static double hier_formula(const px_coll_choice *ch, const px_coll_cost_in *in, double a)
{
    bool ag = in->kind == PX_COLL_ALLGATHER;
    double G = in->ngroups, c = in->group_size, P = in->nmembers;
    double bk = ag ? (double)in->bytes / P + BLOCK_HDR : 0, lgc;
    px_coll_choice inner = inner_of(ch);

    if (in->ngroups == 0 || in->group_size == 0 || ch->inner == NULL || !(in->nmembers > 0)) {
        return NAN;
    }
    lgc = px_coll_ceil_lg(in->group_size);
    if (ch->leaders == PX_COLL_LEADERS_ALL) {
        const px_coll_algo *grp = px_coll_algo_by_name(ag ? "bruck" : "dissemination");
        return flat_time(ch->inner, inner.radix, ag, G, G * bk, a, in->beta) +
               flat_time(grp, 0, ag, c, c * (G * bk + BLOCK_HDR), a, in->beta);
    }
    if (ch->radix != 0 && ch->radix != 2) {
        return NAN;
    }
    return lgc * a + (c - 1) * bk * in->beta +
           flat_time(ch->inner, inner.radix, ag, G, G * (c * bk + BLOCK_HDR), a, in->beta) +
           lgc * (a + P * bk * in->beta);
}

double px_coll_formula(const px_coll_choice *ch, const px_coll_cost_in *in)
{
    px_coll_terms t;

    if (ch == NULL || ch->algo == NULL || in == NULL) {
        return NAN;
    }
    if (in->nmembers <= 1) {
        return 0;
    }
    if (is_hier(ch)) {
        bool ag = in->kind == PX_COLL_ALLGATHER;
        return hier_formula(ch, in,
                            in->latency + (PX_COLL_HDR_SIZE + (ag ? RANGE_HDR : 0)) * in->beta);
    }
    if (ch->algo->formula == NULL) {
        return NAN;
    }
    t.allgather = in->kind == PX_COLL_ALLGATHER;
    t.p = in->nmembers;
    t.lg = px_coll_ceil_lg(in->nmembers);
    t.beta = in->beta;
    t.a = in->latency + (PX_COLL_HDR_SIZE + (t.allgather ? RANGE_HDR : 0)) * in->beta;
    t.n = (double)in->bytes + (t.allgather ? BLOCK_HDR * t.p : 0);
    t.spread = (t.p - 1) / t.p * t.n * in->beta;
    t.radix = ch->radix;
    return ch->algo->formula(&t);
}
