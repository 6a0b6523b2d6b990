/*
 * px_types.h - the table of data types: what the library knows about every
 * pmix_data_type_t, in one place.
 *
 * px_types.def lists the types, one row each; common/datatypes.c expands
 * the rows into px_types[], a const array indexed by the type's value.
 * Everything that depends on a type reads its row: element sizes, copies,
 * comparisons and frees (common/elem.c), how a pmix_value_t holds it
 * (common/value.c), its encoding (wire/pack.c, wire/unpack.c, wire/types.c),
 * its printed form (wire/dataprint.c) and its name (PMIx_Data_type_string).
 *
 * Those places do not switch on the type itself. They switch on the row's
 * shape: the C layout and wire encoding a type shares with others (all the
 * one-byte enumerations have the shape U8, the four byte-object types the
 * shape BYTES, and each structure has a shape of its own). A shape is an
 * enumeration, so the compiler checks that every such switch handles every
 * shape.
 *
 * The columns of a row:
 *   constant  the type's constant (its name is the constant's spelling);
 *   C type    the C object one element is (its size is the stride of a
 *             data array, and what a pmix_value_t or an info holds);
 *   shape     PX_SHAPE_<shape>, below;
 *   held      how a pmix_value_t holds it, PX_HOLD_<held>, below;
 *   wire min  the fewest bytes one object takes on the wire (in PX_W_*
 *             units, see wire/pack.c for the layouts), against which a
 *             count read from the wire is checked before anything is
 *             allocated;
 *   printed   how PMIx_Data_print renders it, PX_PRINT_<printed>, below;
 *   namer     for PX_PRINT_NAME, the function that names a value.
 *
 * Adding a type: if an existing shape fits (a new one-byte enumeration,
 * say), the row is all there is to write. A type with a new layout also
 * needs its shape in enum px_shape and a case in each switch on shapes
 * (the compiler lists them): pack.c, unpack.c, elem.c (copy, compare,
 * free) and dataprint.c. tests/unit/test_wire.c then needs a sample of it
 * (its table test fails until there is one).
 */
#ifndef PX_TYPES_H
#define PX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>

#include <pmix_common.h>

/* Encoded sizes of the building blocks of the wire's layouts. */
enum {
    PX_W_STR = 4,             /* u32 length, bytes */
    PX_W_PROC = PX_W_STR + 4, /* nspace, u32 rank */
    PX_W_TV = 16,             /* i64 seconds, i64 microseconds */
    PX_W_COUNT = 8,           /* u64 element count */
    PX_W_ARGV = 4,            /* u32 count */
    PX_W_VALUE = 2,           /* u16 type, then at least nothing (PMIX_UNDEF) */
};

/* A type's layout and encoding. The scalar shapes are named for their
 * encoding: U8, U16, U32, U64 are that many bits copied as they are (signed
 * or not), whatever the C type (an int is 32 bits here). */
enum px_shape {
    PX_SHAPE_NONE, /* no C form: PMIX_UNDEF, names without a structure */
    PX_SHAPE_BOOL, /* bool, u8 0 or 1 */
    PX_SHAPE_U8,
    PX_SHAPE_U16,
    PX_SHAPE_U32,
    PX_SHAPE_U64,
    PX_SHAPE_PID,     /* pid_t as i32 */
    PX_SHAPE_SIZE,    /* size_t as u64 */
    PX_SHAPE_TIME,    /* time_t as i64 */
    PX_SHAPE_FLOAT,   /* IEEE-754 bits, 32 */
    PX_SHAPE_DOUBLE,  /* IEEE-754 bits, 64 */
    PX_SHAPE_TIMEVAL, /* i64 seconds, i64 microseconds */
    PX_SHAPE_STRING,  /* char * */
    PX_SHAPE_NSPACE,  /* pmix_nspace_t */
    PX_SHAPE_BYTES,   /* pmix_byte_object_t */
    PX_SHAPE_POINTER, /* void *, never on the wire */
    PX_SHAPE_TOPO,    /* pmix_topology_t, never on the wire */
    /* One shape per structure of the Standard. */
    PX_SHAPE_PROC,
    PX_SHAPE_PROC_INFO,
    PX_SHAPE_DARRAY,
    PX_SHAPE_ENVAR,
    PX_SHAPE_COORD,
    PX_SHAPE_REGATTR,
    PX_SHAPE_CPUSET,
    PX_SHAPE_GEOMETRY,
    PX_SHAPE_DEVICE_DIST,
    PX_SHAPE_ENDPOINT,
    PX_SHAPE_DATA_BUFFER,
    PX_SHAPE_VALUE,
    PX_SHAPE_INFO,
    PX_SHAPE_PDATA,
    PX_SHAPE_APP,
    PX_SHAPE_QUERY,
    PX_SHAPE_PROC_STATS,
    PX_SHAPE_DISK_STATS,
    PX_SHAPE_NET_STATS,
    PX_SHAPE_NODE_STATS,
};

/* How a pmix_value_t holds a type. */
enum px_hold {
    PX_HOLD_NONE,    /* nothing: PMIX_UNDEF, and names without a C form */
    PX_HOLD_INLINE,  /* in the union itself, as one array element would sit */
    PX_HOLD_BOXED,   /* through a pointer to one allocated element */
    PX_HOLD_NESTED,  /* boxed, and the element holds values: one nesting level */
    PX_HOLD_ADDRESS, /* the pointer itself, which the value does not own */
};

/* How PMIx_Data_print renders a type. */
enum px_print {
    PX_PRINT_SHAPE,    /* as its shape says (structures, strings, floats, ...) */
    PX_PRINT_UNSIGNED, /* a decimal number */
    PX_PRINT_SIGNED,   /* a decimal number with its sign */
    PX_PRINT_HEX,      /* 0x and hexadecimal digits */
    PX_PRINT_NAME,     /* the namer's name of the value */
    PX_PRINT_STATUS,   /* the number and PMIx_Error_string's name */
    PX_PRINT_RANK,     /* a rank, the special ones by name */
};

/* One row of the table. */
typedef struct px_type {
    const char *name;    /* the constant's spelling; NULL: not a type */
    size_t size;         /* sizeof the C object; 0 without a C form */
    size_t min;          /* fewest bytes one object takes on the wire (>= 1) */
    pmix_status_t wire;  /* PMIX_SUCCESS if it can cross the wire, else why not */
    enum px_shape shape; /* layout and encoding */
    enum px_hold hold;   /* how a pmix_value_t holds it */
    enum px_print print; /* how it prints */
} px_type;

/* One past the largest type value the table knows. A row of a larger value
 * does not compile (datatypes.c sizes the array with it): raise it then. */
#define PX_NTYPES 70

/* The rows, indexed by type value; a value that is no type has a zeroed
 * row (name NULL). Read them through px_type_of(). */
extern const px_type px_types[PX_NTYPES];
/* The row of every value that is no type: no C form, unknown on the wire. */
extern const px_type px_type_unknown;

/* The row of `type`; px_type_unknown's for a value that is no type. Never
 * NULL. */
static inline const px_type *px_type_of(pmix_data_type_t type)
{
    if (type < PX_NTYPES && px_types[type].name != NULL) {
        return &px_types[type];
    }
    return &px_type_unknown;
}

#endif /* PX_TYPES_H */
