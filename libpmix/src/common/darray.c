/*
 * darray.c: pmix_data_array_t support (PMIx_Data_array_*).
 *
 * A data array is a type, a count and a heap array of elements of that type,
 * each laid out as elem.c describes. Destructing it destructs every element
 * (so nested arrays, infos and values are freed all the way down) and frees
 * the element array.
 */
#include <stdlib.h>

#include "px_common.h"

void PMIx_Data_array_init(pmix_data_array_t *p, pmix_data_type_t type)
{
    if (p != NULL) {
        p->type = type;
        p->size = 0;
        p->array = NULL;
    }
}

void PMIx_Data_array_construct(pmix_data_array_t *p, size_t num, pmix_data_type_t type)
{
    if (p == NULL) {
        return;
    }
    PMIx_Data_array_init(p, type);
    size_t sz = px_type_size(type);
    if (num == 0 || sz == 0) {
        return;
    }
    p->array = calloc(num, sz);
    if (p->array != NULL) {
        px_elems_construct(p->array, num, type);
        p->size = num;
    }
}

void PMIx_Data_array_destruct(pmix_data_array_t *d)
{
    if (d == NULL) {
        return;
    }
    if (d->array != NULL) {
        px_elems_destruct(d->array, d->size, d->type);
        free(d->array);
    }
    d->array = NULL;
    d->size = 0;
}

pmix_data_array_t *PMIx_Data_array_create(size_t n, pmix_data_type_t type)
{
    pmix_data_array_t *p = malloc(sizeof(*p));
    if (p == NULL) {
        return NULL;
    }
    PMIx_Data_array_construct(p, n, type);
    if (n > 0 && p->array == NULL) {
        free(p);
        return NULL;
    }
    return p;
}

void PMIx_Data_array_free(pmix_data_array_t *p)
{
    if (p != NULL) {
        PMIx_Data_array_destruct(p);
        free(p);
    }
}
