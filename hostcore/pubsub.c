/*
 * pubsub.c - the publish/lookup data service (px_pubsub.h says what it
 * promises).
 *
 * How it works. Entries and waiting lookups are two lists, newest last.
 * A service holds at most a few thousand entries (the limits bound them
 * per process and in bytes), so lookups scan. A publish checks every key
 * first (duplicates, limits) and only then adds them, so that it is all
 * or nothing; then it offers the new state to the waiting lookups in the
 * order they came, so the first waiter gets a PMIX_PERSIST_FIRST_READ
 * entry and later ones do not. A lookup that is answered is unlinked
 * before its callback runs.
 *
 * Sizes are counted as the entry's struct, its key and its value's
 * strings and bytes (data arrays element by element): about what the
 * entry costs in memory, which is what the limits are for.
 */
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "px_pubsub.h"

typedef struct entry {
    struct entry *next;
    pmix_data_range_t range;
    uint64_t scope; /* the publisher's node, session, or 0 (see scope_of) */
    pmix_proc_t owner;
    uint32_t session, app;
    pmix_persistence_t persist;
    char key[PMIX_MAX_KEYLEN + 1];
    pmix_value_t value;
    size_t cost;
} entry;

typedef struct waiter {
    struct waiter *next;
    px_pubsub_who who;
    pmix_data_range_t range;
    char **keys;
    size_t nkeys;
    size_t want;     /* keys that must be found */
    double deadline; /* 0: none */
    px_pubsub_lookup_cb cb;
    void *cbdata;
} waiter;

struct px_pubsub {
    px_pubsub_limits lim;
    entry *entries;
    size_t nentries, bytes;
    waiter *waiters;
    size_t nwaiters;
};

px_pubsub *px_pubsub_create(const px_pubsub_limits *lim)
{
    px_pubsub *ps = calloc(1, sizeof(*ps));

    if (ps == NULL)
        return NULL;
    if (lim != NULL)
        ps->lim = *lim;
    if (ps->lim.owner_entries == 0)
        ps->lim.owner_entries = PX_PUBSUB_OWNER_ENTRIES;
    if (ps->lim.owner_bytes == 0)
        ps->lim.owner_bytes = PX_PUBSUB_OWNER_BYTES;
    if (ps->lim.total_bytes == 0)
        ps->lim.total_bytes = PX_PUBSUB_TOTAL_BYTES;
    if (ps->lim.proc_waiters == 0)
        ps->lim.proc_waiters = PX_PUBSUB_PROC_WAITERS;
    if (ps->lim.total_waiters == 0)
        ps->lim.total_waiters = PX_PUBSUB_TOTAL_WAITERS;
    return ps;
}

static void entry_free(entry *e)
{
    PMIx_Value_destruct(&e->value);
    free(e);
}

static void waiter_free(waiter *w)
{
    for (size_t i = 0; i < w->nkeys; i++)
        free(w->keys[i]);
    free(w->keys);
    free(w);
}

void px_pubsub_destroy(px_pubsub *ps)
{
    if (ps == NULL)
        return;
    while (ps->entries != NULL) {
        entry *e = ps->entries;
        ps->entries = e->next;
        entry_free(e);
    }
    while (ps->waiters != NULL) {
        waiter *w = ps->waiters;
        ps->waiters = w->next;
        waiter_free(w);
    }
    free(ps);
}

/* ---- directives ---- */

static bool key_is(const pmix_info_t *i, const char *key)
{
    return strncmp(i->key, key, PMIX_MAX_KEYLEN) == 0;
}

static bool is_directive(const pmix_info_t *i)
{
    return key_is(i, PMIX_RANGE) || key_is(i, PMIX_PERSISTENCE) || key_is(i, PMIX_TIMEOUT) ||
           key_is(i, PMIX_USERID) || key_is(i, PMIX_GRPID) || key_is(i, PMIX_WAIT);
}

static bool is_access(const pmix_info_t *i)
{
    return key_is(i, PMIX_ACCESS_USERIDS) || key_is(i, PMIX_ACCESS_GRPIDS) ||
           key_is(i, PMIX_ACCESS_PERMISSIONS);
}

/* An integer of any width, or false. */
static bool number_of(const pmix_value_t *v, uint64_t *out)
{
    switch (v->type) {
    case PMIX_UINT8: *out = v->data.uint8; return true;
    case PMIX_UINT16: *out = v->data.uint16; return true;
    case PMIX_UINT32: *out = v->data.uint32; return true;
    case PMIX_UINT64: *out = v->data.uint64; return true;
    case PMIX_SIZE: *out = v->data.size; return true;
    case PMIX_INT8: *out = v->data.int8 < 0 ? 0 : (uint64_t)v->data.int8; return true;
    case PMIX_INT16: *out = v->data.int16 < 0 ? 0 : (uint64_t)v->data.int16; return true;
    case PMIX_INT32: *out = v->data.int32 < 0 ? 0 : (uint64_t)v->data.int32; return true;
    case PMIX_INT: *out = v->data.integer < 0 ? 0 : (uint64_t)v->data.integer; return true;
    case PMIX_INT64: *out = v->data.int64 < 0 ? 0 : (uint64_t)v->data.int64; return true;
    case PMIX_UINT: *out = v->data.uint; return true;
    case PMIX_DATA_RANGE: *out = v->data.range; return true;
    case PMIX_PERSIST: *out = v->data.persist; return true;
    default: return false;
    }
}

typedef struct dirs {
    pmix_data_range_t range;
    bool range_given;
    pmix_persistence_t persist;
    bool wait;
    uint64_t want; /* PMIX_WAIT's count, 0: all */
    double timeout;
} dirs;

/* Read the directives of `info`: PMIX_ERR_BAD_PARAM for a value that
 * cannot be one, PMIX_ERR_NOT_SUPPORTED for a range or attribute this
 * service does not offer. */
static pmix_status_t read_dirs(const pmix_info_t info[], size_t ninfo, dirs *d)
{
    uint64_t n;

    memset(d, 0, sizeof(*d));
    d->range = PMIX_RANGE_SESSION;
    d->persist = PMIX_PERSIST_APP;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];
        if (is_access(in))
            return PMIX_ERR_NOT_SUPPORTED;
        if (key_is(in, PMIX_RANGE)) {
            if (!number_of(&in->value, &n))
                return PMIX_ERR_BAD_PARAM;
            d->range_given = true;
            switch (n) {
            case PMIX_RANGE_UNDEF: d->range = PMIX_RANGE_SESSION; break;
            case PMIX_RANGE_LOCAL:
            case PMIX_RANGE_NAMESPACE:
            case PMIX_RANGE_SESSION:
            case PMIX_RANGE_GLOBAL:
            case PMIX_RANGE_PROC_LOCAL: d->range = (pmix_data_range_t)n; break;
            case PMIX_RANGE_RM:
            case PMIX_RANGE_CUSTOM: return PMIX_ERR_NOT_SUPPORTED;
            default: return PMIX_ERR_BAD_PARAM;
            }
        } else if (key_is(in, PMIX_PERSISTENCE)) {
            if (!number_of(&in->value, &n) || n > PMIX_PERSIST_SESSION)
                return PMIX_ERR_BAD_PARAM;
            d->persist = (pmix_persistence_t)n;
        } else if (key_is(in, PMIX_WAIT)) {
            if (in->value.type == PMIX_BOOL) {
                d->wait = in->value.data.flag;
            } else if (number_of(&in->value, &n)) {
                d->wait = true;
                d->want = n;
            } else {
                d->wait = true; /* present: the Standard's attribute says wait */
            }
        } else if (key_is(in, PMIX_TIMEOUT)) {
            if (!number_of(&in->value, &n))
                return PMIX_ERR_BAD_PARAM;
            d->timeout = (double)n;
        }
    }
    return PMIX_SUCCESS;
}

/* What range `r` means for `who`: the scope its entries carry and its
 * lookups match. */
static uint64_t scope_of(const px_pubsub_who *who, pmix_data_range_t r)
{
    switch (r) {
    case PMIX_RANGE_LOCAL: return who->node;
    case PMIX_RANGE_SESSION: return who->session;
    default: return 0; /* namespace and process: compared by name (in_scope) */
    }
}

/* Strictly equal namespaces (PMIx_Check_nspace lets an empty one match
 * any, which no range may do). */
static bool same_nspace(const char *a, const char *b)
{
    return strncmp(a, b, PMIX_MAX_NSLEN) == 0;
}

/* True if `who` is in the scope of entry `e` (published in e->range). */
static bool in_scope(const entry *e, const px_pubsub_who *who)
{
    switch (e->range) {
    case PMIX_RANGE_LOCAL:
    case PMIX_RANGE_SESSION: return e->scope == scope_of(who, e->range);
    case PMIX_RANGE_NAMESPACE: return same_nspace(e->owner.nspace, who->proc.nspace);
    case PMIX_RANGE_PROC_LOCAL:
        return same_nspace(e->owner.nspace, who->proc.nspace) && e->owner.rank == who->proc.rank;
    default: return true; /* global */
    }
}

static bool same_proc(const pmix_proc_t *a, const pmix_proc_t *b)
{
    return same_nspace(a->nspace, b->nspace) && a->rank == b->rank;
}

/* The entry of `key` that `who` sees in `range`, or NULL. */
static entry *find(px_pubsub *ps, const px_pubsub_who *who, pmix_data_range_t range,
                   const char *key, entry ***link)
{
    for (entry **pp = &ps->entries; *pp != NULL; pp = &(*pp)->next) {
        entry *e = *pp;
        if (e->range == range && strncmp(e->key, key, PMIX_MAX_KEYLEN) == 0 && in_scope(e, who)) {
            if (link != NULL)
                *link = pp;
            return e;
        }
    }
    return NULL;
}

static size_t value_cost(const pmix_value_t *v);

static size_t elems_cost(pmix_data_type_t type, const void *array, size_t n)
{
    size_t c = 0;

    switch (type) {
    case PMIX_STRING:
        for (size_t i = 0; i < n; i++) {
            const char *s = ((char *const *)array)[i];
            c += sizeof(char *) + (s != NULL ? strlen(s) + 1 : 0);
        }
        return c;
    case PMIX_BYTE_OBJECT:
        for (size_t i = 0; i < n; i++)
            c += sizeof(pmix_byte_object_t) + ((const pmix_byte_object_t *)array)[i].size;
        return c;
    case PMIX_VALUE:
        for (size_t i = 0; i < n; i++)
            c += value_cost(&((const pmix_value_t *)array)[i]);
        return c;
    case PMIX_INFO:
        for (size_t i = 0; i < n; i++)
            c += sizeof(pmix_key_t) + value_cost(&((const pmix_info_t *)array)[i].value);
        return c;
    default: return n * sizeof(pmix_value_t); /* an upper bound of any scalar or struct */
    }
}

static size_t value_cost(const pmix_value_t *v)
{
    size_t c = sizeof(pmix_value_t);

    switch (v->type) {
    case PMIX_STRING: return c + (v->data.string != NULL ? strlen(v->data.string) + 1 : 0);
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX: return c + v->data.bo.size;
    case PMIX_DATA_ARRAY:
        if (v->data.darray == NULL)
            return c;
        return c + sizeof(pmix_data_array_t) +
               elems_cost(v->data.darray->type, v->data.darray->array, v->data.darray->size);
    default: return c;
    }
}

/* Entries `owner` holds now, and their bytes. */
static void owner_usage(const px_pubsub *ps, const pmix_proc_t *owner, size_t *n, size_t *bytes)
{
    *n = *bytes = 0;
    for (const entry *e = ps->entries; e != NULL; e = e->next) {
        if (same_proc(&e->owner, owner)) {
            (*n)++;
            *bytes += e->cost;
        }
    }
}

/* ---- lookups ---- */

/* Answer `w` if it may be answered now (`final`: whatever was found),
 * consuming PMIX_PERSIST_FIRST_READ entries it returns. Returns true if it
 * was answered (the caller has unlinked it or will not keep it); `w` is
 * freed then. */
static bool try_answer(px_pubsub *ps, waiter *w, bool final, pmix_status_t final_status)
{
    entry **found = calloc(w->nkeys, sizeof(*found));
    size_t nfound = 0;
    pmix_pdata_t *pd = NULL;
    pmix_status_t status;

    if (found == NULL) {
        if (!final)
            return false; /* try again later, or at the deadline */
        w->cb(PMIX_ERR_NOMEM, NULL, 0, w->cbdata);
        waiter_free(w);
        return true;
    }
    for (size_t i = 0; i < w->nkeys; i++) {
        found[i] = find(ps, &w->who, w->range, w->keys[i], NULL);
        nfound += found[i] != NULL;
    }
    if (!final && nfound < w->want) {
        free(found);
        return false;
    }
    if (final && final_status != PMIX_SUCCESS) {
        status = final_status;
        nfound = 0;
    } else {
        status = nfound == w->nkeys ? PMIX_SUCCESS
                 : nfound == 0      ? PMIX_ERR_NOT_FOUND
                                    : PMIX_ERR_PARTIAL_SUCCESS;
    }
    if (nfound > 0 && (pd = PMIx_Pdata_create(nfound)) == NULL) {
        status = PMIX_ERR_NOMEM;
        nfound = 0;
    }
    for (size_t i = 0, k = 0; k < nfound && i < w->nkeys; i++) {
        if (found[i] == NULL)
            continue;
        pd[k].proc = found[i]->owner;
        PMIx_Load_key(pd[k].key, found[i]->key);
        if (PMIx_Value_xfer(&pd[k].value, &found[i]->value) != PMIX_SUCCESS) {
            status = PMIX_ERR_NOMEM;
            break;
        }
        k++;
    }
    if (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS) {
        /* read once: gone now that it was read */
        for (size_t i = 0; i < w->nkeys; i++) {
            entry **link;
            if (found[i] == NULL || found[i]->persist != PMIX_PERSIST_FIRST_READ)
                continue;
            if (find(ps, &w->who, w->range, w->keys[i], &link) == found[i]) {
                entry *gone = found[i];
                *link = gone->next;
                ps->nentries--;
                ps->bytes -= gone->cost;
                /* a key asked for twice found the same entry twice */
                for (size_t k = i; k < w->nkeys; k++)
                    if (found[k] == gone)
                        found[k] = NULL;
                entry_free(gone);
            }
        }
        w->cb(status, pd, nfound, w->cbdata);
    } else {
        w->cb(status, NULL, 0, w->cbdata);
    }
    if (pd != NULL)
        PMIx_Pdata_free(pd, nfound);
    free(found);
    waiter_free(w);
    return true;
}

/* Offer the current entries to the waiting lookups, oldest first. */
static void wake_waiters(px_pubsub *ps)
{
    waiter **pp = &ps->waiters;

    while (*pp != NULL) {
        waiter *w = *pp;
        size_t have = 0;
        for (size_t i = 0; i < w->nkeys; i++)
            have += find(ps, &w->who, w->range, w->keys[i], NULL) != NULL;
        if (have < w->want) {
            pp = &w->next;
            continue;
        }
        *pp = w->next; /* unlinked before its callback runs */
        ps->nwaiters--;
        if (!try_answer(ps, w, false, PMIX_SUCCESS)) {
            /* could not build the answer now (memory): keep it waiting */
            w->next = *pp;
            *pp = w;
            ps->nwaiters++;
            pp = &w->next;
        }
    }
}

pmix_status_t px_pubsub_lookup(px_pubsub *ps, const px_pubsub_who *who, char **keys,
                               const pmix_info_t info[], size_t ninfo, double now,
                               px_pubsub_lookup_cb cb, void *cbdata)
{
    dirs d;
    waiter *w;
    size_t n = 0, mine = 0;
    pmix_status_t rc;

    if (ps == NULL || who == NULL || keys == NULL || keys[0] == NULL || cb == NULL)
        return PMIX_ERR_BAD_PARAM;
    if ((rc = read_dirs(info, ninfo, &d)) != PMIX_SUCCESS)
        return rc;
    while (keys[n] != NULL) {
        if (keys[n][0] == '\0' || strnlen(keys[n], PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
            return PMIX_ERR_BAD_PARAM;
        n++;
    }
    w = calloc(1, sizeof(*w));
    if (w == NULL || (w->keys = calloc(n, sizeof(char *))) == NULL) {
        free(w);
        return PMIX_ERR_NOMEM;
    }
    for (w->nkeys = 0; w->nkeys < n; w->nkeys++) {
        if ((w->keys[w->nkeys] = strdup(keys[w->nkeys])) == NULL) {
            waiter_free(w);
            return PMIX_ERR_NOMEM;
        }
    }
    w->who = *who;
    w->range = d.range;
    w->want = d.want == 0 || d.want > n ? n : (size_t)d.want;
    w->cb = cb;
    w->cbdata = cbdata;
    if (!d.wait) {
        (void)try_answer(ps, w, true, PMIX_SUCCESS);
        return PMIX_SUCCESS;
    }
    if (try_answer(ps, w, false, PMIX_SUCCESS))
        return PMIX_SUCCESS;
    for (const waiter *x = ps->waiters; x != NULL; x = x->next)
        mine += same_proc(&x->who.proc, &who->proc);
    if (mine >= ps->lim.proc_waiters || ps->nwaiters >= ps->lim.total_waiters) {
        waiter_free(w);
        return PMIX_ERR_OUT_OF_RESOURCE;
    }
    w->deadline = d.timeout > 0 ? now + d.timeout : 0;
    waiter **pp = &ps->waiters;
    while (*pp != NULL)
        pp = &(*pp)->next;
    *pp = w;
    ps->nwaiters++;
    return PMIX_SUCCESS;
}

/* ---- publish / unpublish ---- */

pmix_status_t px_pubsub_publish(px_pubsub *ps, const px_pubsub_who *who, const pmix_info_t info[],
                                size_t ninfo, double now)
{
    dirs d;
    size_t nkeys = 0, cost = 0, have_n, have_bytes;
    entry *head = NULL, **tail = &head;
    pmix_status_t rc;

    (void)now;
    if (ps == NULL || who == NULL || (info == NULL && ninfo > 0))
        return PMIX_ERR_BAD_PARAM;
    if ((rc = read_dirs(info, ninfo, &d)) != PMIX_SUCCESS)
        return rc;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];
        if (is_directive(in))
            continue;
        if (in->key[0] == '\0' || strnlen(in->key, PMIX_MAX_KEYLEN + 1) > PMIX_MAX_KEYLEN)
            return PMIX_ERR_BAD_PARAM;
        if (find(ps, who, d.range, in->key, NULL) != NULL)
            return PMIX_ERR_DUPLICATE_KEY;
        for (size_t j = 0; j < i; j++)
            if (!is_directive(&info[j]) && key_is(&info[j], in->key))
                return PMIX_ERR_DUPLICATE_KEY;
        nkeys++;
        cost += sizeof(entry) + value_cost(&in->value);
    }
    if (nkeys == 0)
        return PMIX_ERR_BAD_PARAM;
    owner_usage(ps, &who->proc, &have_n, &have_bytes);
    if (have_n + nkeys > ps->lim.owner_entries || have_bytes + cost > ps->lim.owner_bytes ||
        ps->bytes + cost > ps->lim.total_bytes)
        return PMIX_ERR_OUT_OF_RESOURCE;
    for (size_t i = 0; i < ninfo; i++) {
        const pmix_info_t *in = &info[i];
        entry *e;
        if (is_directive(in))
            continue;
        e = calloc(1, sizeof(*e));
        if (e == NULL || PMIx_Value_xfer(&e->value, &in->value) != PMIX_SUCCESS) {
            free(e);
            while (head != NULL) {
                entry *x = head;
                head = x->next;
                entry_free(x);
            }
            return PMIX_ERR_NOMEM;
        }
        e->range = d.range;
        e->scope = scope_of(who, d.range);
        e->owner = who->proc;
        e->session = who->session;
        e->app = who->app;
        e->persist = d.persist;
        PMIx_Load_key(e->key, in->key);
        e->cost = sizeof(entry) + value_cost(&in->value);
        *tail = e;
        tail = &e->next;
    }
    /* all made: in they go, newest last */
    entry **pp = &ps->entries;
    while (*pp != NULL)
        pp = &(*pp)->next;
    *pp = head;
    ps->nentries += nkeys;
    ps->bytes += cost;
    wake_waiters(ps);
    return PMIX_SUCCESS;
}

pmix_status_t px_pubsub_unpublish(px_pubsub *ps, const px_pubsub_who *who, char **keys,
                                  const pmix_info_t info[], size_t ninfo)
{
    dirs d;
    pmix_status_t rc;
    bool missing = false;

    if (ps == NULL || who == NULL)
        return PMIX_ERR_BAD_PARAM;
    if ((rc = read_dirs(info, ninfo, &d)) != PMIX_SUCCESS)
        return rc;
    if (keys == NULL) {
        for (entry **pp = &ps->entries; *pp != NULL;) {
            entry *e = *pp;
            if (!same_proc(&e->owner, &who->proc) || (d.range_given && e->range != d.range)) {
                pp = &e->next;
                continue;
            }
            *pp = e->next;
            ps->nentries--;
            ps->bytes -= e->cost;
            entry_free(e);
        }
        return PMIX_SUCCESS;
    }
    /* another's key anywhere in the list: nothing is removed */
    for (size_t i = 0; keys[i] != NULL; i++) {
        entry *e = find(ps, who, d.range, keys[i], NULL);
        if (e != NULL && !same_proc(&e->owner, &who->proc))
            return PMIX_ERR_NO_PERMISSIONS;
    }
    for (size_t i = 0; keys[i] != NULL; i++) {
        entry **link;
        entry *e = find(ps, who, d.range, keys[i], &link);
        if (e == NULL) {
            missing = true;
            continue;
        }
        *link = e->next;
        ps->nentries--;
        ps->bytes -= e->cost;
        entry_free(e);
    }
    return missing ? PMIX_ERR_NOT_FOUND : PMIX_SUCCESS;
}

/* ---- time and endings ---- */

double px_pubsub_next_deadline(const px_pubsub *ps)
{
    double next = 0;

    for (const waiter *w = ps->waiters; w != NULL; w = w->next)
        if (w->deadline > 0 && (next == 0 || w->deadline < next))
            next = w->deadline;
    return next;
}

/* Answer with `status` every waiter `pick` selects. Unlinks each before
 * its callback runs, and starts over after it (nothing else changes the
 * list: callbacks must not call the service). */
static void fail_waiters(px_pubsub *ps, bool (*pick)(const waiter *w, const void *arg),
                         const void *arg, pmix_status_t status)
{
    for (waiter **pp = &ps->waiters; *pp != NULL;) {
        waiter *w = *pp;
        if (!pick(w, arg)) {
            pp = &w->next;
            continue;
        }
        *pp = w->next;
        ps->nwaiters--;
        (void)try_answer(ps, w, true, status);
    }
}

static bool pick_due(const waiter *w, const void *arg)
{
    return w->deadline > 0 && w->deadline <= *(const double *)arg;
}

void px_pubsub_expire(px_pubsub *ps, double now)
{
    fail_waiters(ps, pick_due, &now, PMIX_ERR_TIMEOUT);
}

static bool pick_proc(const waiter *w, const void *arg)
{
    return same_proc(&w->who.proc, arg);
}

static bool pick_nspace(const waiter *w, const void *arg)
{
    return same_nspace(w->who.proc.nspace, arg);
}

static bool pick_all(const waiter *w, const void *arg)
{
    return true;
}

/* Remove every entry `pick` selects. */
static void drop_entries(px_pubsub *ps, bool (*pick)(const entry *e, const void *arg),
                         const void *arg)
{
    for (entry **pp = &ps->entries; *pp != NULL;) {
        entry *e = *pp;
        if (!pick(e, arg)) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        ps->nentries--;
        ps->bytes -= e->cost;
        entry_free(e);
    }
}

static bool drop_proc(const entry *e, const void *arg)
{
    return e->persist == PMIX_PERSIST_PROC && same_proc(&e->owner, arg);
}

void px_pubsub_proc_ended(px_pubsub *ps, const pmix_proc_t *proc)
{
    drop_entries(ps, drop_proc, proc);
    fail_waiters(ps, pick_proc, proc, PMIX_ERR_LOST_CONNECTION);
}

typedef struct app_id {
    const char *nspace;
    uint32_t app;
    bool any;
} app_id;

/* One app's PMIX_PERSIST_APP entries; with `any`, a whole job's
 * PMIX_PERSIST_APP and PMIX_PERSIST_PROC entries (its processes ended
 * with it). */
static bool drop_app(const entry *e, const void *arg)
{
    const app_id *a = arg;

    if (!same_nspace(e->owner.nspace, a->nspace))
        return false;
    if (a->any)
        return e->persist == PMIX_PERSIST_APP || e->persist == PMIX_PERSIST_PROC;
    return e->persist == PMIX_PERSIST_APP && e->app == a->app;
}

void px_pubsub_app_ended(px_pubsub *ps, const char *nspace, uint32_t app)
{
    app_id a = {nspace, app, false};
    drop_entries(ps, drop_app, &a);
}

void px_pubsub_job_ended(px_pubsub *ps, const char *nspace)
{
    app_id a = {nspace, 0, true};
    drop_entries(ps, drop_app, &a);
    fail_waiters(ps, pick_nspace, nspace, PMIX_ERR_LOST_CONNECTION);
}

static bool drop_session(const entry *e, const void *arg)
{
    return e->persist == PMIX_PERSIST_SESSION && e->session == *(const uint32_t *)arg;
}

void px_pubsub_session_ended(px_pubsub *ps, uint32_t session)
{
    drop_entries(ps, drop_session, &session);
}

void px_pubsub_cancel_all(px_pubsub *ps, pmix_status_t status)
{
    fail_waiters(ps, pick_all, NULL, status);
}

size_t px_pubsub_entries(const px_pubsub *ps)
{
    return ps->nentries;
}

size_t px_pubsub_waiting(const px_pubsub *ps)
{
    return ps->nwaiters;
}

/* ---- requests and answers between nodes ---- */

pmix_status_t px_pubsub_pack_request(char **keys, const pmix_info_t info[], size_t ninfo,
                                     pmix_byte_object_t *out)
{
    pmix_data_buffer_t db;
    uint8_t has = keys != NULL;
    uint32_t nk = 0, ni = (uint32_t)ninfo;
    pmix_status_t rc;

    PMIx_Byte_object_construct(out);
    PMIx_Data_buffer_construct(&db);
    while (keys != NULL && keys[nk] != NULL)
        nk++;
    rc = PMIx_Data_pack(NULL, &db, &has, 1, PMIX_UINT8);
    if (rc == PMIX_SUCCESS && has)
        rc = PMIx_Data_pack(NULL, &db, &nk, 1, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && has && nk > 0)
        rc = PMIx_Data_pack(NULL, &db, keys, (int32_t)nk, PMIX_STRING);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &db, &ni, 1, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && ni > 0)
        rc = PMIx_Data_pack(NULL, &db, (void *)info, (int32_t)ni, PMIX_INFO);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_unload(&db, out);
    PMIx_Data_buffer_destruct(&db);
    return rc;
}

/* A buffer over a copy of `len` bytes at `p` (the buffer owns the copy). */
static pmix_status_t load_copy(pmix_data_buffer_t *db, const void *p, size_t len)
{
    pmix_byte_object_t bo = {.bytes = malloc(len > 0 ? len : 1), .size = len};

    PMIx_Data_buffer_construct(db);
    if (bo.bytes == NULL)
        return PMIX_ERR_NOMEM;
    if (len > 0)
        memcpy(bo.bytes, p, len);
    PMIx_Data_load(db, &bo);
    return PMIX_SUCCESS;
}

pmix_status_t px_pubsub_unpack_request(const void *p, size_t len, char ***keys, pmix_info_t **info,
                                       size_t *ninfo)
{
    pmix_data_buffer_t db;
    uint8_t has = 0;
    uint32_t nk = 0, ni = 0;
    int32_t cnt = 1;
    pmix_status_t rc;

    *keys = NULL;
    *info = NULL;
    *ninfo = 0;
    rc = load_copy(&db, p, len);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_unpack(NULL, &db, &has, &cnt, PMIX_UINT8);
    if (rc == PMIX_SUCCESS && has) {
        cnt = 1;
        rc = PMIx_Data_unpack(NULL, &db, &nk, &cnt, PMIX_UINT32);
        if (rc == PMIX_SUCCESS && nk > len) /* a count no body that short holds */
            rc = PMIX_ERR_UNPACK_FAILURE;
        if (rc == PMIX_SUCCESS && (*keys = calloc(nk + 1, sizeof(char *))) == NULL)
            rc = PMIX_ERR_NOMEM;
        if (rc == PMIX_SUCCESS && nk > 0) {
            cnt = (int32_t)nk;
            rc = PMIx_Data_unpack(NULL, &db, *keys, &cnt, PMIX_STRING);
        }
    }
    if (rc == PMIX_SUCCESS) {
        cnt = 1;
        rc = PMIx_Data_unpack(NULL, &db, &ni, &cnt, PMIX_UINT32);
    }
    if (rc == PMIX_SUCCESS && ni > len)
        rc = PMIX_ERR_UNPACK_FAILURE;
    if (rc == PMIX_SUCCESS && ni > 0) {
        if ((*info = PMIx_Info_create(ni)) == NULL) {
            rc = PMIX_ERR_NOMEM;
        } else {
            *ninfo = ni;
            cnt = (int32_t)ni;
            rc = PMIx_Data_unpack(NULL, &db, *info, &cnt, PMIX_INFO);
        }
    }
    PMIx_Data_buffer_destruct(&db);
    if (rc != PMIX_SUCCESS) {
        PMIx_Argv_free(*keys);
        PMIx_Info_free(*info, *ninfo);
        *keys = NULL;
        *info = NULL;
        *ninfo = 0;
    }
    return rc;
}

pmix_status_t px_pubsub_pack_answer(const pmix_pdata_t pd[], size_t npd, pmix_byte_object_t *out)
{
    pmix_data_buffer_t db;
    uint32_t n = (uint32_t)npd;
    pmix_status_t rc;

    PMIx_Byte_object_construct(out);
    PMIx_Data_buffer_construct(&db);
    rc = PMIx_Data_pack(NULL, &db, &n, 1, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && n > 0)
        rc = PMIx_Data_pack(NULL, &db, (void *)pd, (int32_t)n, PMIX_PDATA);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_unload(&db, out);
    PMIx_Data_buffer_destruct(&db);
    return rc;
}

pmix_status_t px_pubsub_unpack_answer(const void *p, size_t len, pmix_pdata_t **pd, size_t *npd)
{
    pmix_data_buffer_t db;
    uint32_t n = 0;
    int32_t cnt = 1;
    pmix_status_t rc;

    *pd = NULL;
    *npd = 0;
    rc = load_copy(&db, p, len);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_unpack(NULL, &db, &n, &cnt, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && n > len)
        rc = PMIX_ERR_UNPACK_FAILURE;
    if (rc == PMIX_SUCCESS && n > 0 && (*pd = PMIx_Pdata_create(n)) == NULL)
        rc = PMIX_ERR_NOMEM;
    if (rc == PMIX_SUCCESS && n > 0) {
        cnt = (int32_t)n;
        rc = PMIx_Data_unpack(NULL, &db, *pd, &cnt, PMIX_PDATA);
    }
    PMIx_Data_buffer_destruct(&db);
    if (rc != PMIX_SUCCESS) {
        if (*pd != NULL)
            PMIx_Pdata_free(*pd, n);
        *pd = NULL;
        return rc == PMIX_ERR_NOMEM ? rc : PMIX_ERR_UNPACK_FAILURE;
    }
    *npd = n;
    return PMIX_SUCCESS;
}
