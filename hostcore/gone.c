/*
 * gone.c - departed processes as px_hc keeps them, and its outbox of
 * news (px_gone.h). Lists are interned: a hash of a list's contents finds
 * an equal one in an open-addressing table (linear probing, at most half
 * full), so a departure costs one hash and, usually, one comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "px_gone.h"

void px_gone_fini(px_gone *g)
{
    for (uint32_t i = 0; i < g->nlists; i++) {
        free(g->lists[i].sets);
        free(g->lists[i].epochs);
    }
    free(g->lists);
    free(g->table);
    free(g->at);
    memset(g, 0, sizeof(*g));
}

static uint32_t num_slot(uint32_t num, uint32_t cap)
{
    return (uint32_t)(num * 2654435761u) & (cap - 1);
}

/* The entry of `num`, or NULL. */
static const px_gone_entry *find(const px_gone *g, uint32_t num)
{
    if (g->cap == 0)
        return NULL;
    for (uint32_t at = num_slot(num, g->cap);; at = (at + 1) & (g->cap - 1)) {
        if (g->at[at].num1 == 0)
            return NULL;
        if (g->at[at].num1 == num + 1)
            return &g->at[at];
    }
}

bool px_gone_has(const px_gone *g, uint32_t num)
{
    return find(g, num) != NULL;
}

const px_gone_list *px_gone_get(const px_gone *g, uint32_t num)
{
    const px_gone_entry *e = find(g, num);

    return e != NULL ? &g->lists[e->list] : NULL;
}

static void put_entry(px_gone_entry *at, uint32_t cap, uint32_t num1, uint32_t list)
{
    uint32_t i = num_slot(num1 - 1, cap);

    while (at[i].num1 != 0)
        i = (i + 1) & (cap - 1);
    at[i].num1 = num1;
    at[i].list = list;
}

const px_gone_list *px_gone_list_at(const px_gone *g, uint32_t i)
{
    return i < g->nlists ? &g->lists[i] : NULL;
}

uint32_t px_gone_epoch(const px_gone_list *l, uint64_t set)
{
    for (uint32_t i = 0; i < l->nsets; i++)
        if (l->sets[i] == set)
            return l->epochs[i];
    return 0;
}

/* FNV-1a over the list's sets and epochs. */
static uint32_t list_hash(uint32_t nsets, const uint64_t *sets, const uint32_t *epochs)
{
    uint32_t h = 2166136261u;

    for (uint32_t i = 0; i < nsets; i++) {
        uint64_t v = sets[i] ^ ((uint64_t)epochs[i] << 17);
        for (int b = 0; b < 8; b++) {
            h ^= (uint8_t)(v >> (8 * b));
            h *= 16777619u;
        }
    }
    return h ^ nsets;
}

static bool list_equal(const px_gone_list *l, uint32_t nsets, const uint64_t *sets,
                       const uint32_t *epochs)
{
    return l->nsets == nsets &&
           (nsets == 0 || (memcmp(l->sets, sets, nsets * sizeof(*sets)) == 0 &&
                           memcmp(l->epochs, epochs, nsets * sizeof(*epochs)) == 0));
}

/* Make the table hold at least twice the lists; -1 without memory. */
static int table_grow(px_gone *g)
{
    uint32_t cap = g->table_cap != 0 ? g->table_cap : 16, *t;

    while (cap < 2 * (g->nlists + 1))
        cap *= 2;
    if (cap == g->table_cap)
        return 0;
    if ((t = calloc(cap, sizeof(*t))) == NULL)
        return -1;
    for (uint32_t i = 0; i < g->nlists; i++) {
        uint32_t at = g->lists[i].hash & (cap - 1);
        while (t[at] != 0)
            at = (at + 1) & (cap - 1);
        t[at] = i + 1;
    }
    free(g->table);
    g->table = t;
    g->table_cap = cap;
    return 0;
}

/* The index of the list equal to this one, made if new; -1 without
 * memory. */
static int64_t intern(px_gone *g, uint32_t nsets, const uint64_t *sets, const uint32_t *epochs)
{
    uint32_t h = list_hash(nsets, sets, epochs), at;
    px_gone_list *l;

    if (g->table_cap != 0) {
        for (at = h & (g->table_cap - 1); g->table[at] != 0; at = (at + 1) & (g->table_cap - 1)) {
            l = &g->lists[g->table[at] - 1];
            if (l->hash == h && list_equal(l, nsets, sets, epochs))
                return g->table[at] - 1;
        }
    }
    if (table_grow(g) != 0)
        return -1;
    if (g->nlists == g->lists_cap) {
        uint32_t cap = g->lists_cap != 0 ? 2 * g->lists_cap : 4;
        px_gone_list *more = realloc(g->lists, cap * sizeof(*more));
        if (more == NULL)
            return -1;
        g->lists = more;
        g->lists_cap = cap;
    }
    l = &g->lists[g->nlists];
    memset(l, 0, sizeof(*l));
    if (nsets > 0 && ((l->sets = malloc(nsets * sizeof(*sets))) == NULL ||
                      (l->epochs = malloc(nsets * sizeof(*epochs))) == NULL)) {
        free(l->sets);
        return -1;
    }
    l->nsets = nsets;
    l->hash = h;
    if (nsets > 0) {
        memcpy(l->sets, sets, nsets * sizeof(*sets));
        memcpy(l->epochs, epochs, nsets * sizeof(*epochs));
    }
    for (at = h & (g->table_cap - 1); g->table[at] != 0; at = (at + 1) & (g->table_cap - 1))
        ;
    g->table[at] = ++g->nlists;
    return g->nlists - 1;
}

int px_gone_add(px_gone *g, uint32_t num, uint32_t nsets, const uint64_t *sets,
                const uint32_t *epochs, uint32_t *list)
{
    const px_gone_entry *e = find(g, num);
    int64_t i;

    if (e != NULL) {
        *list = e->list;
        return 0;
    }
    if (num == UINT32_MAX)
        return -1;
    if (2 * ((uint64_t)g->n + 1) > g->cap) {
        uint32_t cap = g->cap != 0 ? 2 * g->cap : 16;
        px_gone_entry *t;
        if (g->cap > UINT32_MAX / 2 || (t = calloc(cap, sizeof(*t))) == NULL)
            return -1;
        for (uint32_t k = 0; k < g->cap; k++)
            if (g->at[k].num1 != 0)
                put_entry(t, cap, g->at[k].num1, g->at[k].list);
        free(g->at);
        g->at = t;
        g->cap = cap;
    }
    if ((i = intern(g, nsets, sets, epochs)) < 0)
        return -1;
    put_entry(g->at, g->cap, num + 1, (uint32_t)i);
    g->n++;
    *list = (uint32_t)i;
    return 0;
}

int px_outbox_add(px_outbox *o, uint32_t dest, const px_news_rec *rec)
{
    px_outbox_slot *s = NULL;

    for (uint32_t i = 0; i < o->nslots; i++)
        if (o->slots[i].dest == dest) {
            s = &o->slots[i];
            break;
        }
    if (s == NULL) {
        if (o->nslots == o->cap) {
            uint32_t cap = o->cap != 0 ? 2 * o->cap : 8;
            px_outbox_slot *more = realloc(o->slots, cap * sizeof(*more));
            if (more == NULL)
                return -1;
            o->slots = more;
            o->cap = cap;
        }
        s = &o->slots[o->nslots++];
        memset(s, 0, sizeof(*s));
        s->dest = dest;
    }
    if (s->n == s->cap) {
        uint32_t cap = s->cap != 0 ? 2 * s->cap : 8;
        px_news_rec *more = realloc(s->recs, cap * sizeof(*more));
        if (more == NULL)
            return -1;
        s->recs = more;
        s->cap = cap;
    }
    s->recs[s->n++] = *rec;
    return 0;
}

void px_outbox_fini(px_outbox *o)
{
    for (uint32_t i = 0; i < o->nslots; i++)
        free(o->slots[i].recs);
    free(o->slots);
    memset(o, 0, sizeof(*o));
}
