/*
 * groups.c - groups of members for the hierarchical algorithm.
 *
 * The host gives a label per member (or network coordinates, of which the
 * first `prefix` dimensions make the label: e.g. the switch); members with
 * equal labels form a group. The object is immutable once built, so a
 * simulation builds it once and lends it to every member (px_coll keeps a
 * borrowed pointer): 16 bytes per member and 8 per group, shared.
 *
 * Groups are numbered in the order of their leaders (lowest members), so
 * the leaders' array is ascending and group g's leader has rank g among
 * the leaders; inside a group, members are ascending, so the leader is
 * rank 0 of its group. Building sorts member indices by (label, member)
 * with a merge sort that takes a context (C11's qsort has none).
 */
#include <stdlib.h>
#include <string.h>

#include "coll_int.h"

typedef int (*cmp_fn)(const void *ctx, uint32_t a, uint32_t b);

/* Stable merge sort of idx[0..n) using tmp[0..n). */
static void msort(uint32_t *idx, uint32_t *tmp, uint32_t n, cmp_fn cmp, const void *ctx)
{
    uint32_t mid, i, j, k;

    if (n < 2) {
        return;
    }
    mid = n / 2;
    msort(idx, tmp, mid, cmp, ctx);
    msort(idx + mid, tmp, n - mid, cmp, ctx);
    for (i = 0, j = mid, k = 0; i < mid || j < n;) {
        if (j == n || (i < mid && cmp(ctx, idx[i], idx[j]) <= 0)) {
            tmp[k++] = idx[i++];
        } else {
            tmp[k++] = idx[j++];
        }
    }
    memcpy(idx, tmp, (size_t)n * sizeof(*idx));
}

static int cmp_labels(const void *ctx, uint32_t a, uint32_t b)
{
    const uint32_t *labels = ctx;

    if (labels[a] != labels[b]) {
        return labels[a] < labels[b] ? -1 : 1;
    }
    return a < b ? -1 : (a > b);
}

static int cmp_u32(const void *ctx, uint32_t a, uint32_t b)
{
    const uint32_t *key = ctx;

    return key[a] < key[b] ? -1 : (key[a] > key[b]);
}

/* The columns: count the groups longer than each position, then place
 * every member at its position's next free slot, groups in order. O(n). */
static pmix_status_t make_columns(px_coll_groups *g)
{
    uint32_t *fill;

    g->ncols = 0;
    for (uint32_t gi = 0; gi < g->ngroups; gi++) {
        uint32_t c = g->start[gi + 1] - g->start[gi];
        g->ncols = c > g->ncols ? c : g->ncols;
    }
    g->col_start = calloc((size_t)g->ncols + 1, sizeof(uint32_t));
    g->col_members = malloc((size_t)g->n * sizeof(uint32_t));
    g->col_rank = malloc((size_t)g->n * sizeof(uint32_t));
    fill = calloc((size_t)g->ncols + 1, sizeof(uint32_t));
    if (g->col_start == NULL || g->col_members == NULL || g->col_rank == NULL || fill == NULL) {
        free(fill);
        return PMIX_ERR_NOMEM;
    }
    for (uint32_t gi = 0; gi < g->ngroups; gi++) {
        g->col_start[g->start[gi + 1] - g->start[gi]]++; /* groups of this size */
    }
    /* col_start[j] = groups of size > j, then prefix sums. */
    for (uint32_t j = g->ncols; j-- > 0;) {
        g->col_start[j] += g->col_start[j + 1];
    }
    for (uint32_t j = 0; j < g->ncols; j++) {
        g->col_start[j] = g->col_start[j + 1];
    }
    g->col_start[g->ncols] = 0;
    {
        uint32_t sum = 0;
        for (uint32_t j = 0; j <= g->ncols; j++) {
            uint32_t k = g->col_start[j];
            g->col_start[j] = sum;
            sum += k;
        }
    }
    for (uint32_t gi = 0; gi < g->ngroups; gi++) {
        for (uint32_t i = g->start[gi]; i < g->start[gi + 1]; i++) {
            uint32_t m = g->members[i], j = i - g->start[gi];
            g->col_rank[m] = fill[j];
            g->col_members[g->col_start[j] + fill[j]++] = m;
        }
    }
    free(fill);
    return PMIX_SUCCESS;
}

px_coll_groups *px_coll_groups_create(uint32_t n, const uint32_t *labels)
{
    px_coll_groups *g;
    uint32_t *idx = NULL, *tmp = NULL, *gfirst = NULL, *gorder = NULL, *grank = NULL;
    uint32_t ngroups = 0;

    if (n == 0 || n == UINT32_MAX || labels == NULL) {
        return NULL;
    }
    g = calloc(1, sizeof(*g));
    idx = malloc((size_t)n * sizeof(*idx));
    tmp = malloc((size_t)n * sizeof(*tmp));
    if (g == NULL || idx == NULL || tmp == NULL) {
        goto fail;
    }
    g->n = n;
    g->group_of = malloc((size_t)n * sizeof(uint32_t));
    g->pos = malloc((size_t)n * sizeof(uint32_t));
    g->members = malloc((size_t)n * sizeof(uint32_t));
    if (g->group_of == NULL || g->pos == NULL || g->members == NULL) {
        goto fail;
    }
    for (uint32_t i = 0; i < n; i++) {
        idx[i] = i;
    }
    msort(idx, tmp, n, cmp_labels, labels);
    /* Runs of equal labels are the groups, in label order for now; a run's
     * first member is its leader. */
    gfirst = malloc((size_t)n * sizeof(*gfirst)); /* run start in idx */
    gorder = malloc((size_t)n * sizeof(*gorder));
    grank = malloc((size_t)n * sizeof(*grank));
    if (gfirst == NULL || gorder == NULL || grank == NULL) {
        goto fail;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (i == 0 || labels[idx[i]] != labels[idx[i - 1]]) {
            gfirst[ngroups++] = i;
        }
    }
    /* Order runs by their leader: key = leader member id. */
    for (uint32_t r = 0; r < ngroups; r++) {
        gorder[r] = r;
        grank[r] = idx[gfirst[r]];
    }
    msort(gorder, tmp, ngroups, cmp_u32, grank);
    g->ngroups = ngroups;
    g->start = malloc(((size_t)ngroups + 1) * sizeof(uint32_t));
    g->leaders = malloc((size_t)ngroups * sizeof(uint32_t));
    if (g->start == NULL || g->leaders == NULL) {
        goto fail;
    }
    {
        uint32_t at = 0;
        for (uint32_t gi = 0; gi < ngroups; gi++) {
            uint32_t r = gorder[gi];
            uint32_t from = gfirst[r], to = r + 1 < ngroups ? gfirst[r + 1] : n;
            g->start[gi] = at;
            g->leaders[gi] = idx[from];
            for (uint32_t k = from; k < to; k++) {
                uint32_t m = idx[k];
                g->members[at] = m;
                g->group_of[m] = gi;
                g->pos[m] = at - g->start[gi];
                at++;
            }
        }
        g->start[ngroups] = at;
    }
    if (make_columns(g) != PMIX_SUCCESS) {
        goto fail;
    }
    free(idx);
    free(tmp);
    free(gfirst);
    free(gorder);
    free(grank);
    return g;
fail:
    free(idx);
    free(tmp);
    free(gfirst);
    free(gorder);
    free(grank);
    px_coll_groups_destroy(g);
    return NULL;
}

typedef struct {
    const pmix_coord_t *coords;
    size_t prefix;
} coord_ctx;

static int cmp_coords(const void *ctx, uint32_t a, uint32_t b)
{
    const coord_ctx *cc = ctx;

    for (size_t d = 0; d < cc->prefix; d++) {
        uint32_t x = cc->coords[a].coord[d], y = cc->coords[b].coord[d];
        if (x != y) {
            return x < y ? -1 : 1;
        }
    }
    return 0;
}

px_coll_groups *px_coll_groups_from_coords(uint32_t n, const pmix_coord_t *coords, size_t prefix)
{
    uint32_t *idx, *tmp, *labels;
    px_coll_groups *g = NULL;
    coord_ctx cc = {coords, prefix};

    if (n == 0 || n == UINT32_MAX || coords == NULL) {
        return NULL;
    }
    for (uint32_t m = 0; m < n; m++) {
        if (coords[m].dims < prefix || (prefix > 0 && coords[m].coord == NULL)) {
            return NULL;
        }
    }
    idx = malloc((size_t)n * sizeof(*idx));
    tmp = malloc((size_t)n * sizeof(*tmp));
    labels = malloc((size_t)n * sizeof(*labels));
    if (idx != NULL && tmp != NULL && labels != NULL) {
        uint32_t label = 0;
        for (uint32_t i = 0; i < n; i++) {
            idx[i] = i;
        }
        msort(idx, tmp, n, cmp_coords, &cc);
        for (uint32_t i = 0; i < n; i++) {
            if (i > 0 && cmp_coords(&cc, idx[i - 1], idx[i]) != 0) {
                label++;
            }
            labels[idx[i]] = label;
        }
        g = px_coll_groups_create(n, labels);
    }
    free(idx);
    free(tmp);
    free(labels);
    return g;
}

void px_coll_groups_destroy(px_coll_groups *g)
{
    if (g == NULL) {
        return;
    }
    free(g->group_of);
    free(g->pos);
    free(g->start);
    free(g->members);
    free(g->leaders);
    free(g->col_start);
    free(g->col_members);
    free(g->col_rank);
    free(g);
}

void px_coll_groups_set_switched(px_coll_groups *g, bool switched)
{
    if (g != NULL) {
        g->switched = switched;
    }
}

uint32_t px_coll_groups_count(const px_coll_groups *g)
{
    return g != NULL ? g->ngroups : 1;
}

uint32_t px_coll_groups_of(const px_coll_groups *g, uint32_t member)
{
    return g != NULL && member < g->n ? g->group_of[member] : 0;
}

uint32_t px_coll_groups_size(const px_coll_groups *g, uint32_t group)
{
    return g != NULL && group < g->ngroups ? g->start[group + 1] - g->start[group] : 0;
}

uint32_t px_coll_groups_leader(const px_coll_groups *g, uint32_t group)
{
    return g != NULL && group < g->ngroups ? g->leaders[group] : 0;
}
