/*
 * px_common.h: internal helpers of the common module for the rest of libpmix.
 *
 * The common module implements the Standard's support functions (values,
 * infos, data arrays, the small structs, strings). Underneath them is one
 * per-type layer, elem.c, that knows for every pmix_data_type_t how large one
 * element is, how to deep-copy it, compare it and free what it owns, from
 * the type's row in the table of data types (px_types.def, px_types.h).
 * Values (value.c), data arrays (darray.c) and infos (info.c) are built on
 * that layer, so a type is supported everywhere once it has its row.
 *
 * The helpers below are what the wire codec, the store and the engines need
 * beyond the public API. None keeps state; none allocates unless it says so.
 */
#ifndef PX_COMMON_H
#define PX_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pmix_common.h>

/* ---- Per-type element layer ---------------------------------------------- */

/* Size of one element of type t as stored in a pmix_data_array_t (e.g. a
 * char* for PMIX_STRING, a pmix_info_t for PMIX_INFO); 0 for PMIX_UNDEF and
 * for types that cannot be stored in an array. */
size_t px_type_size(pmix_data_type_t t);

/* Initialise n elements of type t at p (zero, ranks PMIX_RANK_UNDEF). */
void px_elems_construct(void *p, size_t n, pmix_data_type_t t);

/* Free what n elements of type t at p own (strings, nested arrays, ...) and
 * leave them constructed. Does not free p. NULL p is a no-op. */
void px_elems_destruct(void *p, size_t n, pmix_data_type_t t);

/* Deep-copy n elements of type t from src to dst (dst is treated as empty
 * storage). Returns PMIX_SUCCESS, PMIX_ERR_NOMEM or PMIX_ERR_NOT_SUPPORTED
 * (a type with no array form); on failure dst holds n constructed elements
 * and nothing leaks. Topology and cpuset handles are copied as pointers. */
pmix_status_t px_elems_copy(void *dst, const void *src, size_t n, pmix_data_type_t t);

/* Allocates n constructed elements of type t; NULL if n is 0, t has no
 * array form, or memory is short. */
void *px_elems_alloc(size_t n, pmix_data_type_t t);

/* Destructs n elements of type t at p and frees p. NULL p is a no-op. */
void px_elems_free(void *p, size_t n, pmix_data_type_t t);

/* Deep equality of n elements of type t (infos ignore PMIX_INFO_ARRAY_END;
 * pointers compare by address; floats by value). */
bool px_elems_equal(const void *a, const void *b, size_t n, pmix_data_type_t t);

/* ---- Values -------------------------------------------------------------- */

/* Allocates *dst and deep-copies src into it. NULL src gives an empty value.
 * On failure *dst is NULL. */
pmix_status_t px_value_copy(pmix_value_t **dst, const pmix_value_t *src);

/* Deep equality of two values (same type and same contents). */
bool px_value_equal(const pmix_value_t *a, const pmix_value_t *b);

/* Reads any non-negative integer value (BYTE, INT*, UINT*, SIZE, PID,
 * PROC_RANK) into *out. PMIX_ERR_BAD_PARAM for a NULL or non-integer value,
 * PMIX_ERR_VALUE_OUT_OF_BOUNDS for a negative one. */
pmix_status_t px_value_get_number(const pmix_value_t *v, uint64_t *out);

/* ---- Info arrays --------------------------------------------------------- */

/* First info in info[0..n) whose key equals key, or NULL. Accepts NULL info. */
const pmix_info_t *px_info_find(const pmix_info_t *info, size_t n, const char *key);

/* True if key is present and its value is boolean true or has no value
 * (PMIX_UNDEF), per PMIx_Info_true. */
bool px_info_flag(const pmix_info_t *info, size_t n, const char *key);

/* The string value of key, or NULL if absent or not a string. Not a copy. */
const char *px_info_string(const pmix_info_t *info, size_t n, const char *key);

/* The PMIX_TIMEOUT of an info array in seconds (any integer type), or 0.0
 * when absent, malformed or not positive (no timeout). */
double px_info_timeout(const pmix_info_t *info, size_t n);

/* Allocates *dst and deep-copies the n infos of src (flags without
 * PMIX_INFO_ARRAY_END). n == 0 gives *dst == NULL and PMIX_SUCCESS. */
pmix_status_t px_info_array_copy(pmix_info_t **dst, const pmix_info_t *src, size_t n);

/* ---- Attribute spellings ------------------------------------------------- */

/* The other spelling of a network-coordinate key: our specification's
 * "pmix.net.*" (PMIX_NETWORK_COORDINATE, _DIMS, _ENDPT, _PLANE, _SHAPE) and
 * the Standard's later "pmix.fab.*" (PMIX_FABRIC_COORDINATES, ...), so the
 * engines can accept both. NULL when key has no other spelling. */
const char *px_key_alias(const char *key);

/* ---- Process identifiers --------------------------------------------------- */

/* Exact equality: same namespace and same rank (no wildcard matching; see
 * PMIx_Check_procid for the matching form). */
bool px_proc_eq(const pmix_proc_t *a, const pmix_proc_t *b);
/* True for the "hwloc" source of topologies and cpusets, whose handles
 * the struct owns (structs.c). */
bool px_is_hwloc(const char *source);

#endif /* PX_COMMON_H */
