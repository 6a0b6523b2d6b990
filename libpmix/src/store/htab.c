/*
 * htab.c - open-addressing hash table for the store (see px_htab.h).
 *
 * Keys hash with px_hash_bytes over the string, then the number is mixed
 * in with a multiplicative finalizer, so dense rank numbers spread over
 * the table. Slots remember the full 32-bit hash: a probe compares hashes
 * first and touches the string only when they are equal.
 */
#include "store/px_htab.h"

#include <stdlib.h>
#include <string.h>

#define MIN_CAP 4

static uint64_t mix_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0xff51afd7ed558ccdu;
    return h ^ (h >> 29);
}

/* Eight bytes per multiply: a byte-at-a-time FNV took a tenth of a local
 * Get on 16-byte namespace names, and most of indexing a job's keys (up
 * to 50 bytes with network qualifiers). The tail is read byte by byte (a
 * memcpy of a variable size is a call). */
uint32_t px_hash_bytes(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 0x9e3779b97f4a7c15u ^ n, w;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = mix_word(h, w);
    }
    if (n > 0) {
        w = 0;
        for (size_t j = 0; j < n; j++) {
            w |= (uint64_t)p[j] << (8 * j);
        }
        h = mix_word(h, w);
    }
    return (uint32_t)(h ^ (h >> 32));
}

static uint32_t hash_key(const char *str, uint32_t num)
{
    uint32_t x = str != NULL ? px_hash_bytes(str, strlen(str)) : 0;
    x ^= num * 0x9e3779b1u;
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

static bool same_key(const px_htab_slot *s, uint32_t hash, const char *str, uint32_t num)
{
    if (s->hash != hash || s->num != num) {
        return false;
    }
    if (s->str == NULL || str == NULL) {
        return s->str == str;
    }
    return strcmp(s->str, str) == 0;
}

void px_htab_init(px_htab *t)
{
    t->slots = NULL;
    t->cap = 0;
    t->n = 0;
}

void px_htab_fini(px_htab *t)
{
    free(t->slots);
    px_htab_init(t);
}

/* The slot holding the key, or the empty slot where it would go. */
static size_t find_slot(const px_htab *t, uint32_t hash, const char *str, uint32_t num)
{
    size_t mask = t->cap - 1;
    size_t i = hash & mask;
    while (t->slots[i].val != NULL && !same_key(&t->slots[i], hash, str, num)) {
        i = (i + 1) & mask;
    }
    return i;
}

void *px_htab_get(const px_htab *t, const char *str, uint32_t num)
{
    if (t->n == 0) {
        return NULL;
    }
    return t->slots[find_slot(t, hash_key(str, num), str, num)].val;
}

static bool resize(px_htab *t, size_t cap)
{
    px_htab_slot *slots = calloc(cap, sizeof(*slots));
    if (slots == NULL) {
        return false;
    }
    size_t mask = cap - 1;
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slots[i].val == NULL) {
            continue;
        }
        size_t j = t->slots[i].hash & mask;
        while (slots[j].val != NULL) {
            j = (j + 1) & mask;
        }
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->cap = cap;
    return true;
}

bool px_htab_reserve(px_htab *t, size_t extra)
{
    if (extra > SIZE_MAX / 8 - t->n) {
        return false;
    }
    size_t want = t->n + extra;
    size_t cap = t->cap != 0 ? t->cap : MIN_CAP;
    while (want > cap / 4 * 3) {
        if (cap > SIZE_MAX / 2 / sizeof(px_htab_slot)) {
            return false;
        }
        cap *= 2;
    }
    return cap == t->cap || resize(t, cap);
}

bool px_htab_put(px_htab *t, const char *str, uint32_t num, void *val, void **old)
{
    uint32_t hash = hash_key(str, num);
    if (t->n != 0) {
        size_t i = find_slot(t, hash, str, num);
        if (t->slots[i].val != NULL) {
            if (old != NULL) {
                *old = t->slots[i].val;
            }
            t->slots[i].val = val;
            t->slots[i].str = str;
            return true;
        }
    }
    if (!px_htab_reserve(t, 1)) {
        return false;
    }
    size_t i = find_slot(t, hash, str, num);
    t->slots[i] = (px_htab_slot){.str = str, .val = val, .num = num, .hash = hash};
    t->n++;
    if (old != NULL) {
        *old = NULL;
    }
    return true;
}

void *px_htab_remove(px_htab *t, const char *str, uint32_t num)
{
    if (t->n == 0) {
        return NULL;
    }
    size_t mask = t->cap - 1;
    size_t i = find_slot(t, hash_key(str, num), str, num);
    void *val = t->slots[i].val;
    if (val == NULL) {
        return NULL;
    }
    /* Backward shift: move later entries of the probe run into the hole
     * unless their home slot lies cyclically after the hole. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; t->slots[j].val != NULL; j = (j + 1) & mask) {
        size_t home = t->slots[j].hash & mask;
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            t->slots[hole] = t->slots[j];
            hole = j;
        }
    }
    t->slots[hole].val = NULL;
    t->slots[hole].str = NULL;
    t->n--;
    return val;
}

void *px_htab_next(const px_htab *t, size_t *i)
{
    while (*i < t->cap) {
        void *val = t->slots[(*i)++].val;
        if (val != NULL) {
            return val;
        }
    }
    return NULL;
}
