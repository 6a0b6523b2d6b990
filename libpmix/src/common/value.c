/*
 * value.c: pmix_value_t construction, destruction, loading and copying.
 *
 * A value holds its data in one of two ways, decided by its type (the
 * "held" column of the table of data types, px_types.def):
 * - inline: scalars, strings (an owned char*), byte objects, envars and raw
 *   pointers sit in the union itself, exactly as one array element would;
 * - boxed: every other struct type (proc, data array, coord, geometry, ...)
 *   sits in a separately allocated single element that the union's pointer
 *   member points to (all pointer members alias data.ptr).
 * Either way the element layer (elem.c) does the copying and freeing, so a
 * value of a given type behaves exactly like a one-element array of it.
 * PMIX_POINTER is the exception that owns nothing: its target is the caller's.
 */
#include <stdlib.h>
#include <string.h>

#include "px_common.h"
#include "px_types.h"

enum hold {
    HOLD_NONE,
    HOLD_INLINE,
    HOLD_POINTER,
    HOLD_BOXED,
    HOLD_UNSUPPORTED
};

/* How a value of type t holds its data: the table's word for it. */
static enum hold hold_of(pmix_data_type_t t)
{
    switch (px_type_of(t)->hold) {
    case PX_HOLD_INLINE: return HOLD_INLINE;
    case PX_HOLD_BOXED:
    case PX_HOLD_NESTED: return HOLD_BOXED;
    case PX_HOLD_ADDRESS: return HOLD_POINTER;
    case PX_HOLD_NONE: break;
    }
    return t == PMIX_UNDEF ? HOLD_NONE : HOLD_UNSUPPORTED;
}

/* Allocates one element of type t and deep-copies *src into it. */
static pmix_status_t box(void **out, const void *src, pmix_data_type_t t)
{
    size_t sz = px_type_size(t);
    void *e = calloc(1, sz);
    if (e == NULL) {
        return PMIX_ERR_NOMEM;
    }
    pmix_status_t rc = px_elems_copy(e, src, 1, t);
    if (rc != PMIX_SUCCESS) {
        free(e);
        return rc;
    }
    *out = e;
    return PMIX_SUCCESS;
}

void PMIx_Value_construct(pmix_value_t *val)
{
    if (val != NULL) {
        memset(val, 0, sizeof(*val));
        val->type = PMIX_UNDEF;
    }
}

void PMIx_Value_destruct(pmix_value_t *val)
{
    if (val == NULL) {
        return;
    }
    /* the kinds a Get mostly returns, without the type tables (releasing
     * a Get's 1 KiB value: 455 -> 388 instructions, two frees included) */
    if (val->type == PMIX_BYTE_OBJECT || val->type == PMIX_STRING) {
        free(val->type == PMIX_STRING ? (void *)val->data.string : (void *)val->data.bo.bytes);
        PMIx_Value_construct(val);
        return;
    }
    switch (hold_of(val->type)) {
    case HOLD_INLINE: px_elems_destruct(&val->data, 1, val->type); break;
    case HOLD_BOXED:
        if (val->data.ptr != NULL) {
            px_elems_destruct(val->data.ptr, 1, val->type);
            free(val->data.ptr);
        }
        break;
    default: break;
    }
    PMIx_Value_construct(val);
}

pmix_value_t *PMIx_Value_create(size_t n)
{
    if (n == 0 || n > SIZE_MAX / sizeof(pmix_value_t)) {
        return NULL;
    }
    /* not calloc: construct zeroes each one anyway, and calloc's own
     * zeroing took most of a Get's value allocation */
    pmix_value_t *v = malloc(n * sizeof(*v));
    if (v != NULL) {
        for (size_t i = 0; i < n; i++) {
            PMIx_Value_construct(&v[i]);
        }
    }
    return v;
}

void PMIx_Value_free(pmix_value_t *v, size_t n)
{
    if (v == NULL) {
        return;
    }
    for (size_t i = 0; i < n; i++) {
        PMIx_Value_destruct(&v[i]);
    }
    free(v);
}

pmix_status_t PMIx_Value_load(pmix_value_t *val, const void *data, pmix_data_type_t type)
{
    if (val == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PMIx_Value_construct(val);
    enum hold h = hold_of(type);
    if (h == HOLD_UNSUPPORTED) {
        return PMIX_ERR_UNKNOWN_DATA_TYPE;
    }
    val->type = type;
    if (data == NULL) {
        /* The Standard's shorthand: a NULL boolean means true. Any other
         * type gets an empty value of that type. */
        if (type == PMIX_BOOL) {
            val->data.flag = true;
        }
        return PMIX_SUCCESS;
    }

    pmix_status_t rc = PMIX_SUCCESS;
    switch (h) {
    case HOLD_POINTER: val->data.ptr = (void *)data; break;
    case HOLD_INLINE:
        if (type == PMIX_STRING) {
            /* The string itself is passed, not a pointer to it. */
            const char *s = data;
            rc = px_elems_copy(&val->data.string, &s, 1, PMIX_STRING);
        } else {
            rc = px_elems_copy(&val->data, data, 1, type);
        }
        break;
    case HOLD_BOXED: rc = box(&val->data.ptr, data, type); break;
    default: break;
    }
    if (rc != PMIX_SUCCESS) {
        PMIx_Value_construct(val);
    }
    return rc;
}

pmix_status_t PMIx_Value_unload(pmix_value_t *val, void **data, size_t *sz)
{
    if (val == NULL || data == NULL || sz == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    enum hold h = hold_of(val->type);
    switch (h) {
    case HOLD_NONE:
    case HOLD_UNSUPPORTED: return PMIX_ERR_UNKNOWN_DATA_TYPE;
    case HOLD_POINTER:
        *data = val->data.ptr;
        *sz = sizeof(void *);
        return PMIX_SUCCESS;
    case HOLD_BOXED:
        *data = NULL;
        *sz = 0;
        if (val->data.ptr != NULL) {
            pmix_status_t rc = box(data, val->data.ptr, val->type);
            if (rc != PMIX_SUCCESS) {
                return rc;
            }
            *sz = px_type_size(val->type);
        }
        return PMIX_SUCCESS;
    default: break;
    }

    switch (val->type) {
    case PMIX_STRING:
        *data = NULL;
        *sz = 0;
        if (val->data.string != NULL) {
            *data = strdup(val->data.string);
            if (*data == NULL) {
                return PMIX_ERR_NOMEM;
            }
            *sz = strlen(val->data.string);
        }
        return PMIX_SUCCESS;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX:
        *data = NULL;
        *sz = 0;
        if (val->data.bo.bytes != NULL && val->data.bo.size > 0) {
            *data = malloc(val->data.bo.size);
            if (*data == NULL) {
                return PMIX_ERR_NOMEM;
            }
            memcpy(*data, val->data.bo.bytes, val->data.bo.size);
            *sz = val->data.bo.size;
        }
        return PMIX_SUCCESS;
    default: {
        /* Scalars and envars go into the caller's storage, or new memory. */
        size_t esz = px_type_size(val->type);
        bool allocated = false;
        if (*data == NULL) {
            *data = calloc(1, esz);
            if (*data == NULL) {
                return PMIX_ERR_NOMEM;
            }
            allocated = true;
        }
        pmix_status_t rc = px_elems_copy(*data, &val->data, 1, val->type);
        if (rc != PMIX_SUCCESS) {
            if (allocated) {
                free(*data);
                *data = NULL;
            }
            return rc;
        }
        *sz = esz;
        return PMIX_SUCCESS;
    }
    }
}

pmix_status_t PMIx_Value_xfer(pmix_value_t *dest, const pmix_value_t *src)
{
    if (dest == NULL || src == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    PMIx_Value_construct(dest);
    pmix_status_t rc = PMIX_SUCCESS;
    switch (hold_of(src->type)) {
    case HOLD_NONE: return PMIX_SUCCESS;
    case HOLD_UNSUPPORTED: return PMIX_ERR_UNKNOWN_DATA_TYPE;
    case HOLD_POINTER: dest->data.ptr = src->data.ptr; break;
    case HOLD_INLINE: rc = px_elems_copy(&dest->data, &src->data, 1, src->type); break;
    case HOLD_BOXED:
        if (src->data.ptr != NULL) {
            rc = box(&dest->data.ptr, src->data.ptr, src->type);
        }
        break;
    }
    if (rc != PMIX_SUCCESS) {
        PMIx_Value_construct(dest);
        return rc;
    }
    dest->type = src->type;
    return PMIX_SUCCESS;
}

pmix_status_t px_value_copy(pmix_value_t **dst, const pmix_value_t *src)
{
    if (dst == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    *dst = NULL;
    pmix_value_t *v = PMIx_Value_create(1);
    if (v == NULL) {
        return PMIX_ERR_NOMEM;
    }
    if (src != NULL) {
        pmix_status_t rc = PMIx_Value_xfer(v, src);
        if (rc != PMIX_SUCCESS) {
            free(v);
            return rc;
        }
    }
    *dst = v;
    return PMIX_SUCCESS;
}

bool px_value_equal(const pmix_value_t *a, const pmix_value_t *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    if (a->type != b->type) {
        return false;
    }
    switch (hold_of(a->type)) {
    case HOLD_NONE: return true;
    case HOLD_POINTER: return a->data.ptr == b->data.ptr;
    case HOLD_INLINE: return px_elems_equal(&a->data, &b->data, 1, a->type);
    case HOLD_BOXED:
        if (a->data.ptr == NULL || b->data.ptr == NULL) {
            return a->data.ptr == b->data.ptr;
        }
        return px_elems_equal(a->data.ptr, b->data.ptr, 1, a->type);
    default: return false;
    }
}
