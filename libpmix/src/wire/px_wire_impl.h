/*
 * px_wire_impl.h - what the files of the wire module share with each other
 * and with nobody else.
 *
 * buf.c owns the byte-level primitives (px_wire_take, px_wire_fail); types.c
 * answers the facts about every data type (object size, least encoded size,
 * whether a pmix_value_t holds it by pointer, whether it may cross a process
 * boundary) from the table of data types (common/px_types.def) and frees
 * what an object owns; pack.c and unpack.c walk objects shape by shape, as
 * the table's rows say; datastd.c and dataprint.c build the Standard's
 * PMIx_Data_* API on top.
 */
#ifndef PX_WIRE_IMPL_H
#define PX_WIRE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

#include "wire/px_wire.h"

/* Record `rc` as the buffer's sticky pack error unless one is recorded. */
void px_wire_fail(px_buf *b, pmix_status_t rc);

/* px_wire_take (the one way decoders read bytes) is in px_wire.h, inline
 * with the scalar unpack functions built on it. */

/* What the codec knows about a data type. */
typedef struct px_wire_type {
    size_t size;          /* sizeof the C object (element stride in arrays) */
    size_t min;           /* fewest bytes one object takes on the wire (>= 1) */
    bool by_pointer;      /* a pmix_value_t holds it through a pointer */
    bool holds_values;    /* contains values: a value holding one is a nesting level */
    pmix_status_t status; /* PMIX_SUCCESS if it can be packed, else why not */
} px_wire_type;

/* Fills `t` and returns PMIX_SUCCESS for a type that can cross the wire.
 * Otherwise returns the reason (and still fills `t` when the type is known):
 * PMIX_ERR_UNKNOWN_DATA_TYPE for a type this library does not know,
 * PMIX_ERR_BAD_PARAM for PMIX_POINTER (an address means nothing in another
 * process), PMIX_ERR_NOT_SUPPORTED for local handles (PMIX_TOPO) and types
 * without a public structure (PMIX_KVAL, PMIX_BUFFER). */
pmix_status_t px_wire_type_info(pmix_data_type_t type, px_wire_type *t);

/* Free everything one object of `type` at `obj` owns and zero the object
 * (a zeroed object owns nothing, so destructing twice is harmless). Does
 * not free `obj` itself. Unknown types are left alone. */
void px_wire_destruct(void *obj, pmix_data_type_t type);

/* Decode one object of `type` into `dst`. With `dst` NULL the object is
 * validated and skipped, allocating nothing. On failure `dst` is zeroed
 * (owns nothing) and the cursor is back where it was. */
pmix_status_t px_wire_decode(px_buf *b, void *dst, pmix_data_type_t type);

/* Decode one value (type tag and payload) into `v`, or skip it if NULL. */
pmix_status_t px_wire_decode_value(px_buf *b, pmix_value_t *v);

#endif /* PX_WIRE_IMPL_H */
