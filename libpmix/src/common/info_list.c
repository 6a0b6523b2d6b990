/*
 * info_list.c: the Standard's opaque info lists (PMIx_Info_list_*).
 *
 * A list is a growable array of pmix_info_t behind a void* handle. Adding
 * copies the key and data in; converting copies the whole list out into a
 * pmix_data_array_t of PMIX_INFO. The iteration cursor handed out by
 * PMIx_Info_list_get_info is a pointer to an element, so it is invalidated by
 * any later add or prepend. An element appended by PMIx_Info_list_insert (an
 * OpenPMIx extension) shares the caller's data and is marked persistent:
 * releasing the list does not free that data, converting it copies it.
 */
#include <stdlib.h>
#include <string.h>

#include "px_common.h"

struct info_list {
    pmix_info_t *v;
    size_t n;
    size_t cap;
};

void *PMIx_Info_list_start(void)
{
    return calloc(1, sizeof(struct info_list));
}

/* Makes room for one more element at index `at` (0 or n) and returns it,
 * constructed; NULL when memory is short (the list is unchanged). */
static pmix_info_t *open_slot(struct info_list *l, size_t at)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        pmix_info_t *v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL) {
            return NULL;
        }
        l->v = v;
        l->cap = cap;
    }
    if (at < l->n) {
        memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof(*l->v));
    }
    l->n++;
    PMIx_Info_construct(&l->v[at]);
    return &l->v[at];
}

/* Undoes open_slot after a failed load. */
static void close_slot(struct info_list *l, size_t at)
{
    l->n--;
    if (at < l->n) {
        memmove(&l->v[at], &l->v[at + 1], (l->n - at) * sizeof(*l->v));
    }
}

static pmix_status_t insert(void *ptr, size_t at_end, const char *key, const void *value,
                            pmix_data_type_t type)
{
    struct info_list *l = ptr;
    if (l == NULL || key == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    size_t at = at_end ? l->n : 0;
    pmix_info_t *slot = open_slot(l, at);
    if (slot == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pmix_status_t rc = PMIx_Info_load(slot, key, value, type);
    if (rc != PMIX_SUCCESS) {
        close_slot(l, at);
    }
    return rc;
}

pmix_status_t PMIx_Info_list_add(void *ptr, const char *key, const void *value,
                                 pmix_data_type_t type)
{
    return insert(ptr, 1, key, value, type);
}

pmix_status_t PMIx_Info_list_prepend(void *ptr, const char *key, const void *value,
                                     pmix_data_type_t type)
{
    return insert(ptr, 0, key, value, type);
}

pmix_status_t PMIx_Info_list_xfer(void *ptr, const pmix_info_t *src)
{
    struct info_list *l = ptr;
    if (l == NULL || src == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    pmix_info_t *slot = open_slot(l, l->n);
    if (slot == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pmix_status_t rc = PMIx_Info_xfer(slot, src);
    if (rc != PMIX_SUCCESS) {
        close_slot(l, l->n - 1);
    }
    return rc;
}

pmix_status_t PMIx_Info_list_insert(void *ptr, pmix_info_t *info)
{
    struct info_list *l = ptr;
    if (l == NULL || info == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    pmix_info_t *slot = open_slot(l, l->n);
    if (slot == NULL) {
        return PMIX_ERR_NOMEM;
    }
    *slot = *info;
    PMIx_Info_persistent(slot);
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Info_list_convert(void *ptr, pmix_data_array_t *par)
{
    struct info_list *l = ptr;
    if (l == NULL || par == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PMIx_Data_array_init(par, PMIX_INFO);
    if (l->n == 0) {
        return PMIX_SUCCESS;
    }
    pmix_info_t *copy;
    pmix_status_t rc = px_info_array_copy(&copy, l->v, l->n);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    par->array = copy;
    par->size = l->n;
    return PMIX_SUCCESS;
}

void PMIx_Info_list_release(void *ptr)
{
    struct info_list *l = ptr;
    if (l == NULL) {
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        if (!PMIx_Info_is_persistent(&l->v[i])) {
            PMIx_Info_destruct(&l->v[i]);
        }
    }
    free(l->v);
    free(l);
}

pmix_info_t *PMIx_Info_list_get_info(void *ptr, void *curr, void **next)
{
    struct info_list *l = ptr;
    if (next != NULL) {
        *next = NULL;
    }
    if (l == NULL || l->n == 0) {
        return NULL;
    }
    pmix_info_t *cur = curr != NULL ? curr : &l->v[0];
    if (cur < l->v || cur >= l->v + l->n) {
        return NULL;
    }
    if (next != NULL && cur + 1 < l->v + l->n) {
        *next = cur + 1;
    }
    return cur;
}
