/*
 * value_number.c: numbers in values: conversion between numeric types
 * (PMIx_Value_get_number, px_value_get_number) and ordering of two values
 * (PMIx_Value_compare).
 *
 * Every numeric value is first read into one of three carriers: a signed
 * 64-bit integer, an unsigned 64-bit integer, or a double. Conversions then
 * go from the carrier to the requested type with range and sign checks, so
 * the n x n type combinations reduce to a read switch and a write switch.
 */
#include <math.h>
#include <string.h>

#include "px_common.h"

enum carrier {
    C_NONE,
    C_SIGNED,
    C_UNSIGNED,
    C_FLOAT
};

struct number {
    enum carrier kind;
    int64_t i;
    uint64_t u;
    double d;
};

/* Reads a numeric value; kind C_NONE if the type is not a number. */
static struct number read_number(const pmix_value_t *v)
{
    struct number n = {C_NONE, 0, 0, 0.0};
    switch (v->type) {
    case PMIX_INT8: n.kind = C_SIGNED, n.i = v->data.int8; break;
    case PMIX_INT16: n.kind = C_SIGNED, n.i = v->data.int16; break;
    case PMIX_INT32: n.kind = C_SIGNED, n.i = v->data.int32; break;
    case PMIX_INT64: n.kind = C_SIGNED, n.i = v->data.int64; break;
    case PMIX_INT: n.kind = C_SIGNED, n.i = v->data.integer; break;
    case PMIX_PID: n.kind = C_SIGNED, n.i = v->data.pid; break;
    case PMIX_BYTE: n.kind = C_UNSIGNED, n.u = v->data.byte; break;
    case PMIX_UINT8: n.kind = C_UNSIGNED, n.u = v->data.uint8; break;
    case PMIX_UINT16: n.kind = C_UNSIGNED, n.u = v->data.uint16; break;
    case PMIX_UINT32: n.kind = C_UNSIGNED, n.u = v->data.uint32; break;
    case PMIX_UINT64: n.kind = C_UNSIGNED, n.u = v->data.uint64; break;
    case PMIX_UINT: n.kind = C_UNSIGNED, n.u = v->data.uint; break;
    case PMIX_SIZE: n.kind = C_UNSIGNED, n.u = v->data.size; break;
    case PMIX_PROC_RANK: n.kind = C_UNSIGNED, n.u = v->data.rank; break;
    case PMIX_FLOAT: n.kind = C_FLOAT, n.d = v->data.fval; break;
    case PMIX_DOUBLE: n.kind = C_FLOAT, n.d = v->data.dval; break;
    default: break;
    }
    return n;
}

/* Stores an integer (given as sign + magnitude carrier) into *d of type t,
 * checking that it fits. */
static pmix_status_t store_int(const struct number *n, void *d, pmix_data_type_t t)
{
    bool neg = n->kind == C_SIGNED && n->i < 0;
    int64_t si = n->kind == C_SIGNED ? n->i : 0;
    uint64_t ui = n->kind == C_UNSIGNED ? n->u : (neg ? 0 : (uint64_t)n->i);
    bool big = n->kind == C_UNSIGNED && n->u > (uint64_t)INT64_MAX;
    if (n->kind == C_UNSIGNED) {
        si = big ? INT64_MAX : (int64_t)n->u;
    }

#define PUT_SIGNED(type, lo, hi)                               \
    do {                                                       \
        if (big || si < (int64_t)(lo) || si > (int64_t)(hi)) { \
            return PMIX_ERR_VALUE_OUT_OF_BOUNDS;               \
        }                                                      \
        type x_ = (type)si;                                    \
        memcpy(d, &x_, sizeof(x_));                            \
    } while (0)
#define PUT_UNSIGNED(type, hi)                   \
    do {                                         \
        if (neg || ui > (uint64_t)(hi)) {        \
            return PMIX_ERR_VALUE_OUT_OF_BOUNDS; \
        }                                        \
        type x_ = (type)ui;                      \
        memcpy(d, &x_, sizeof(x_));              \
    } while (0)

    switch (t) {
    case PMIX_INT8: PUT_SIGNED(int8_t, INT8_MIN, INT8_MAX); break;
    case PMIX_INT16: PUT_SIGNED(int16_t, INT16_MIN, INT16_MAX); break;
    case PMIX_INT32: PUT_SIGNED(int32_t, INT32_MIN, INT32_MAX); break;
    case PMIX_INT64: PUT_SIGNED(int64_t, INT64_MIN, INT64_MAX); break;
    case PMIX_INT: PUT_SIGNED(int, INT32_MIN, INT32_MAX); break;
    case PMIX_PID: PUT_SIGNED(pid_t, INT32_MIN, INT32_MAX); break;
    case PMIX_BYTE:
    case PMIX_UINT8: PUT_UNSIGNED(uint8_t, UINT8_MAX); break;
    case PMIX_UINT16: PUT_UNSIGNED(uint16_t, UINT16_MAX); break;
    case PMIX_UINT32:
    case PMIX_PROC_RANK: PUT_UNSIGNED(uint32_t, UINT32_MAX); break;
    case PMIX_UINT: PUT_UNSIGNED(unsigned int, UINT32_MAX); break;
    case PMIX_UINT64: PUT_UNSIGNED(uint64_t, UINT64_MAX); break;
    case PMIX_SIZE: PUT_UNSIGNED(size_t, SIZE_MAX); break;
    case PMIX_FLOAT: {
        float f = neg || n->kind == C_SIGNED ? (float)n->i : (float)n->u;
        memcpy(d, &f, sizeof(f));
        break;
    }
    case PMIX_DOUBLE: {
        double f = neg || n->kind == C_SIGNED ? (double)n->i : (double)n->u;
        memcpy(d, &f, sizeof(f));
        break;
    }
    default: return PMIX_ERR_BAD_PARAM;
    }
#undef PUT_SIGNED
#undef PUT_UNSIGNED
    return PMIX_SUCCESS;
}

pmix_status_t PMIx_Value_get_number(const pmix_value_t *val, void *d, pmix_data_type_t t)
{
    if (val == NULL || d == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    struct number n = read_number(val);
    if (n.kind == C_NONE) {
        return PMIX_ERR_BAD_PARAM;
    }
    if (n.kind != C_FLOAT) {
        return store_int(&n, d, t);
    }
    /* Floating source: only floating destinations keep the value. */
    if (t == PMIX_DOUBLE) {
        memcpy(d, &n.d, sizeof(n.d));
        return PMIX_SUCCESS;
    }
    if (t == PMIX_FLOAT) {
        if (val->type == PMIX_DOUBLE && isfinite(n.d) && (float)n.d != n.d) {
            return PMIX_ERR_VALUE_OUT_OF_BOUNDS;
        }
        float f = (float)n.d;
        memcpy(d, &f, sizeof(f));
        return PMIX_SUCCESS;
    }
    if (px_type_size(t) == 0 || t == PMIX_STRING) {
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_ERR_VALUE_OUT_OF_BOUNDS;
}

pmix_status_t px_value_get_number(const pmix_value_t *v, uint64_t *out)
{
    if (v == NULL || out == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    struct number n = read_number(v);
    switch (n.kind) {
    case C_UNSIGNED: *out = n.u; return PMIX_SUCCESS;
    case C_SIGNED:
        if (n.i < 0) {
            return PMIX_ERR_VALUE_OUT_OF_BOUNDS;
        }
        *out = (uint64_t)n.i;
        return PMIX_SUCCESS;
    default: return PMIX_ERR_BAD_PARAM;
    }
}

static pmix_value_cmp_t order(int c)
{
    return c == 0 ? PMIX_EQUAL : (c > 0 ? PMIX_VALUE1_GREATER : PMIX_VALUE2_GREATER);
}

pmix_value_cmp_t PMIx_Value_compare(pmix_value_t *v1, pmix_value_t *v2)
{
    if (v1 == NULL || v2 == NULL) {
        return PMIX_VALUE_COMPARISON_NOT_AVAIL;
    }
    if (v1->type != v2->type) {
        return PMIX_VALUE_TYPE_DIFFERENT;
    }
    struct number a = read_number(v1), b = read_number(v2);
    switch (a.kind) {
    case C_SIGNED: return order((a.i > b.i) - (a.i < b.i));
    case C_UNSIGNED: return order((a.u > b.u) - (a.u < b.u));
    case C_FLOAT:
        if (isnan(a.d) || isnan(b.d)) {
            return PMIX_VALUE_COMPARISON_NOT_AVAIL;
        }
        return order((a.d > b.d) - (a.d < b.d));
    default: break;
    }

    switch (v1->type) {
    case PMIX_UNDEF: return PMIX_EQUAL;
    case PMIX_BOOL: return order((int)v1->data.flag - (int)v2->data.flag);
    case PMIX_STRING: {
        const char *x = v1->data.string, *y = v2->data.string;
        if (x == NULL || y == NULL) {
            return order((x != NULL) - (y != NULL));
        }
        int c = strcmp(x, y);
        return order((c > 0) - (c < 0));
    }
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX: {
        const pmix_byte_object_t *x = &v1->data.bo, *y = &v2->data.bo;
        if (x->size != y->size) {
            return order((x->size > y->size) - (x->size < y->size));
        }
        int c = x->size == 0 ? 0 : memcmp(x->bytes, y->bytes, x->size);
        return order((c > 0) - (c < 0));
    }
    case PMIX_TIMEVAL: {
        const struct timeval *x = &v1->data.tv, *y = &v2->data.tv;
        if (x->tv_sec != y->tv_sec) {
            return order((x->tv_sec > y->tv_sec) - (x->tv_sec < y->tv_sec));
        }
        return order((x->tv_usec > y->tv_usec) - (x->tv_usec < y->tv_usec));
    }
    case PMIX_TIME: return order((v1->data.time > v2->data.time) - (v1->data.time < v2->data.time));
    case PMIX_STATUS:
        return order((v1->data.status > v2->data.status) - (v1->data.status < v2->data.status));
    case PMIX_PROC: {
        const pmix_proc_t *x = v1->data.proc, *y = v2->data.proc;
        if (x == NULL || y == NULL) {
            return order((x != NULL) - (y != NULL));
        }
        int c = strncmp(x->nspace, y->nspace, PMIX_MAX_NSLEN);
        if (c != 0) {
            return order((c > 0) - (c < 0));
        }
        return order((x->rank > y->rank) - (x->rank < y->rank));
    }
    case PMIX_POINTER:
        return v1->data.ptr == v2->data.ptr ? PMIX_EQUAL : PMIX_VALUE_COMPARISON_NOT_AVAIL;
    default:
        /* Small enums order by value; structured types are only equal or not. */
        if (px_type_size(v1->type) == 1) {
            return order((v1->data.uint8 > v2->data.uint8) - (v1->data.uint8 < v2->data.uint8));
        }
        return px_value_equal(v1, v2) ? PMIX_EQUAL : PMIX_VALUE_INCOMPATIBLE_OBJECTS;
    }
}
