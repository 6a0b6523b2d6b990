/*
 * px_gone.h - what px_hc (hc.c) keeps of departed processes, and the news
 * of departures it has still to send, in a size that does not grow with
 * the job times the departures.
 *
 * A node learns of every process of the job that finalizes and exits: at
 * the end of a run, every node hears of every process. What it keeps of
 * each is the epochs of the sets the process had joined (its list), and
 * most processes of a job leave with the same list (the whole job's set,
 * the same epoch). So a px_gone holds each distinct list once (found
 * again through a hash of its contents) and, per departure known, the
 * index of its list in a hash table keyed by departure number: one
 * lookup, no walk, and 16 bytes at most per departure known (nothing per
 * process that has not left: a simulated node of a 65,536-process job
 * that has heard of a few departures keeps a few entries).
 *
 * A px_outbox holds news to send, batched by destination node: hc.c adds
 * a record (origin node, departure number, list) for each child it must
 * tell, and later sends one message per destination with all its records
 * (docs/architecture.md, "The host core"). Neither does any I/O.
 */
#ifndef PX_GONE_H
#define PX_GONE_H

#include <stdbool.h>
#include <stdint.h>

/* The sets a departed process had joined and the last epoch of each. */
typedef struct px_gone_list {
    uint32_t nsets;
    uint64_t *sets;
    uint32_t *epochs;
    uint32_t hash;
} px_gone_list;

typedef struct px_gone_entry {
    uint32_t num1; /* 0: free, else 1 + the departure number */
    uint32_t list; /* its list's index */
} px_gone_entry;

typedef struct px_gone {
    px_gone_entry *at; /* open addressing, at most half full */
    uint32_t cap;      /* entries of `at`: 0 or a power of two */
    uint32_t n;        /* departures known */
    px_gone_list *lists;
    uint32_t nlists, lists_cap;
    uint32_t *table; /* open addressing: 0, or 1 + a list's index */
    uint32_t table_cap;
} px_gone;

/* Free what `g` holds (zeroed: empty again). */
void px_gone_fini(px_gone *g);
/* The departure numbers known are those of the used entries of g->at
 * (num1 != 0), in no order. Whether departure number `num` is known. */
bool px_gone_has(const px_gone *g, uint32_t num);
/* The list of departure `num`, or NULL when it is not known. */
const px_gone_list *px_gone_get(const px_gone *g, uint32_t num);
/* The list with index `i` (px_gone_add's *list). */
const px_gone_list *px_gone_list_at(const px_gone *g, uint32_t i);
/* Note departure `num` with its list (copied, or shared with an equal
 * one); *list its index. 0, or -1 when memory runs out (nothing changed).
 * A number already known keeps its first list. */
int px_gone_add(px_gone *g, uint32_t num, uint32_t nsets, const uint64_t *sets,
                const uint32_t *epochs, uint32_t *list);
/* The last epoch of `set` in `l`; 0 for a set it does not name. */
uint32_t px_gone_epoch(const px_gone_list *l, uint64_t set);

/* One piece of news to pass on: departure `num`, from node `origin`. */
typedef struct px_news_rec {
    uint32_t origin, num, list;
} px_news_rec;

typedef struct px_outbox_slot {
    uint32_t dest;
    px_news_rec *recs;
    uint32_t n, cap;
    uint32_t sent; /* records already sent (px_hc's flush) */
} px_outbox_slot;

typedef struct px_outbox {
    px_outbox_slot *slots; /* in the order destinations were first named */
    uint32_t nslots, cap;
} px_outbox;

/* Add a record for node `dest`. 0, or -1 when memory runs out. */
int px_outbox_add(px_outbox *o, uint32_t dest, const px_news_rec *rec);
/* Forget every record (keeps nothing allocated). */
void px_outbox_fini(px_outbox *o);

#endif /* PX_GONE_H */
