/*
 * types.c - the facts the codec needs about every data type of the Standard.
 *
 * px_wire_type_info() answers, for one type, from its row in the table of
 * data types (common/px_types.def): the size of its C object (the stride of
 * a data array or of PMIx_Data_pack's source), the fewest bytes one object
 * can take on the wire (so that a count read from the wire can be checked
 * against the bytes that remain before anything is allocated), whether a
 * pmix_value_t holds it through a pointer, and whether it can cross a
 * process boundary at all. The codec's own hot paths read the row directly
 * (px_type_of()).
 *
 * px_wire_destruct() frees what one object owns through common/'s element
 * layer, so that what the decoder builds is released exactly as the rest of
 * the library releases it. The decoder allocates the way that layer expects:
 * boxed value payloads and arrays with calloc, info lists with
 * PMIx_Info_create, strings and byte objects with malloc.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <pmix_common.h>

#include "common/px_common.h"
#include "common/px_types.h"
#include "wire/px_wire_impl.h"

pmix_status_t px_wire_type_info(pmix_data_type_t type, px_wire_type *t)
{
    const px_type *row = px_type_of(type);

    t->size = row->size;
    t->min = row->min;
    t->by_pointer = row->hold == PX_HOLD_BOXED || row->hold == PX_HOLD_NESTED;
    t->holds_values = row->hold == PX_HOLD_NESTED;
    t->status = row->wire;
    return t->status;
}

void px_wire_destruct(void *obj, pmix_data_type_t type)
{
    size_t size = px_type_of(type)->size;

    if (obj != NULL && size > 0) {
        px_elems_destruct(obj, 1, type);
        memset(obj, 0, size);
    }
}
