/*
 * info.c: pmix_info_t support: construction, loading, copying, directive
 * flags, and the internal lookup helpers the engines use on info arrays.
 *
 * Directive flags are a bit set. PMIX_INFO_ARRAY_END is a marker that
 * clients built against other headers put on the last element of an array;
 * this library never relies on it, never copies it (xfer clears it) and
 * never lets it change a comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "px_common.h"

#define END_MASK (~(pmix_info_directives_t)PMIX_INFO_ARRAY_END)

void PMIx_Info_construct(pmix_info_t *p)
{
    if (p != NULL) {
        memset(p, 0, sizeof(*p));
        PMIx_Value_construct(&p->value);
    }
}

void PMIx_Info_destruct(pmix_info_t *p)
{
    if (p != NULL) {
        PMIx_Value_destruct(&p->value);
        PMIx_Info_construct(p);
    }
}

pmix_info_t *PMIx_Info_create(size_t n)
{
    if (n == 0) {
        return NULL;
    }
    pmix_info_t *p = calloc(n, sizeof(*p));
    if (p != NULL) {
        for (size_t i = 0; i < n; i++) {
            PMIx_Info_construct(&p[i]);
        }
    }
    return p;
}

void PMIx_Info_free(pmix_info_t *p, size_t n)
{
    if (p == NULL) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        PMIx_Info_destruct(&p[i]);
    }
    free(p);
}

pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key, const void *data,
                             pmix_data_type_t type)
{
    if (info == NULL || key == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PMIx_Info_construct(info);
    PMIx_Load_key(info->key, key);
    pmix_status_t rc = PMIx_Value_load(&info->value, data, type);
    if (rc != PMIX_SUCCESS) {
        PMIx_Info_construct(info);
    }
    return rc;
}

pmix_status_t PMIx_Info_xfer(pmix_info_t *dest, const pmix_info_t *src)
{
    if (dest == NULL || src == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PMIx_Info_construct(dest);
    pmix_status_t rc = PMIx_Value_xfer(&dest->value, &src->value);
    if (rc != PMIX_SUCCESS) {
        return rc;
    }
    PMIx_Load_key(dest->key, src->key);
    dest->flags = src->flags & END_MASK;
    return PMIX_SUCCESS;
}

bool PMIx_Info_true(const pmix_info_t *p)
{
    if (p == NULL) {
        return false;
    }
    return p->value.type == PMIX_UNDEF || (p->value.type == PMIX_BOOL && p->value.data.flag);
}

void PMIx_Info_required(pmix_info_t *p)
{
    if (p != NULL) {
        p->flags |= PMIX_INFO_REQD;
    }
}

void PMIx_Info_optional(pmix_info_t *p)
{
    if (p != NULL) {
        p->flags &= ~(pmix_info_directives_t)PMIX_INFO_REQD;
    }
}

bool PMIx_Info_is_required(const pmix_info_t *p)
{
    return p != NULL && (p->flags & PMIX_INFO_REQD) != 0;
}

bool PMIx_Info_is_optional(const pmix_info_t *p)
{
    return p != NULL && (p->flags & PMIX_INFO_REQD) == 0;
}

void PMIx_Info_processed(pmix_info_t *p)
{
    if (p != NULL) {
        p->flags |= PMIX_INFO_REQD_PROCESSED;
    }
}

bool PMIx_Info_was_processed(const pmix_info_t *p)
{
    return p != NULL && (p->flags & PMIX_INFO_REQD_PROCESSED) != 0;
}

bool PMIx_Info_is_end(const pmix_info_t *p)
{
    return p != NULL && (p->flags & PMIX_INFO_ARRAY_END) != 0;
}

void PMIx_Info_qualifier(pmix_info_t *p)
{
    if (p != NULL) {
        p->flags |= PMIX_INFO_QUALIFIER;
    }
}

bool PMIx_Info_is_qualifier(const pmix_info_t *p)
{
    return p != NULL && (p->flags & PMIX_INFO_QUALIFIER) != 0;
}

void PMIx_Info_persistent(pmix_info_t *p)
{
    if (p != NULL) {
        p->flags |= PMIX_INFO_PERSISTENT;
    }
}

bool PMIx_Info_is_persistent(const pmix_info_t *p)
{
    return p != NULL && (p->flags & PMIX_INFO_PERSISTENT) != 0;
}

const pmix_info_t *px_info_find(const pmix_info_t *info, size_t n, const char *key)
{
    if (info == NULL || key == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (strncmp(info[i].key, key, PMIX_MAX_KEYLEN) == 0) {
            return &info[i];
        }
    }
    return NULL;
}

bool px_info_flag(const pmix_info_t *info, size_t n, const char *key)
{
    return PMIx_Info_true(px_info_find(info, n, key));
}

const char *px_info_string(const pmix_info_t *info, size_t n, const char *key)
{
    const pmix_info_t *i = px_info_find(info, n, key);
    if (i == NULL || i->value.type != PMIX_STRING) {
        return NULL;
    }
    return i->value.data.string;
}

double px_info_timeout(const pmix_info_t *info, size_t n)
{
    const pmix_info_t *i = px_info_find(info, n, PMIX_TIMEOUT);
    uint64_t secs;
    if (i == NULL || px_value_get_number(&i->value, &secs) != PMIX_SUCCESS) {
        return 0.0;
    }
    return (double)secs;
}

pmix_status_t px_info_array_copy(pmix_info_t **dst, const pmix_info_t *src, size_t n)
{
    if (dst == NULL || (src == NULL && n > 0)) {
        return PMIX_ERR_BAD_PARAM;
    }
    *dst = NULL;
    if (n == 0) {
        return PMIX_SUCCESS;
    }
    pmix_info_t *d = PMIx_Info_create(n);
    if (d == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pmix_status_t rc = px_elems_copy(d, src, n, PMIX_INFO);
    if (rc != PMIX_SUCCESS) {
        free(d);
        return rc;
    }
    *dst = d;
    return PMIX_SUCCESS;
}
