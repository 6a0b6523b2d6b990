/*
 * datatypes.c - the table of data types, px_types[], expanded from the rows
 * of px_types.def (px_types.h explains the columns).
 *
 * The array is indexed by the type's value, so finding a row is one bounds
 * check and one index (px_type_of()). Values between the types are zeroed
 * rows, which px_type_of() turns into px_type_unknown.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#include <pmix_common.h>

#include "px_types.h"

#define PX_TYPE(c, ctype, shape_, held, min_, printed, namer) \
    [c] = {.name = #c,                                        \
           .size = sizeof(ctype),                             \
           .min = (min_),                                     \
           .wire = PMIX_SUCCESS,                              \
           .shape = PX_SHAPE_##shape_,                        \
           .hold = PX_HOLD_##held,                            \
           .print = PX_PRINT_##printed},
#define PX_TYPE_LOCAL(c, ctype, shape_, held, printed, refusal) \
    [c] = {.name = #c,                                          \
           .size = sizeof(ctype),                               \
           .min = 1,                                            \
           .wire = (refusal),                                   \
           .shape = PX_SHAPE_##shape_,                          \
           .hold = PX_HOLD_##held,                              \
           .print = PX_PRINT_##printed},
#define PX_TYPE_NAME(c, status)    \
    [c] = {.name = #c,             \
           .size = 0,              \
           .min = 1,               \
           .wire = (status),       \
           .shape = PX_SHAPE_NONE, \
           .hold = PX_HOLD_NONE,   \
           .print = PX_PRINT_SHAPE},

const px_type px_types[PX_NTYPES] = {
#include "px_types.def"
};

const px_type px_type_unknown = {.name = NULL,
                                 .size = 0,
                                 .min = 1,
                                 .wire = PMIX_ERR_UNKNOWN_DATA_TYPE,
                                 .shape = PX_SHAPE_NONE,
                                 .hold = PX_HOLD_NONE,
                                 .print = PX_PRINT_SHAPE};
