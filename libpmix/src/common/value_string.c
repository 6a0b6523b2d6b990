/*
 * value_string.c: human-readable renderings of values and infos
 * (PMIx_Value_string, PMIx_Info_string) for logs and debugging output.
 *
 * The text is built in a growing heap buffer and returned to the caller,
 * who frees it. The form is "TYPE: contents"; data arrays are rendered
 * element by element (recursively); byte objects show their size only.
 * On memory shortage the functions return NULL.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "px_common.h"

struct sbuf {
    char *s;
    size_t len;
    size_t cap;
    bool failed;
};

static void put(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct sbuf *b, const char *fmt, ...)
{
    if (b->failed) {
        return;
    }
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s != NULL ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 64;
        while (cap <= b->len + (size_t)n) {
            cap *= 2;
        }
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

static void put_elem(struct sbuf *b, const void *e, pmix_data_type_t t);

static void put_array(struct sbuf *b, const pmix_data_array_t *d)
{
    if (d == NULL) {
        put(b, "NULL");
        return;
    }
    put(b, "%zu x %s [", d->size, PMIx_Data_type_string(d->type));
    size_t sz = px_type_size(d->type);
    for (size_t i = 0; i < d->size && d->array != NULL && sz > 0; i++) {
        put(b, "%s", i ? ", " : "");
        put_elem(b, (const char *)d->array + i * sz, d->type);
    }
    put(b, "]");
}

static void put_str(struct sbuf *b, const char *s)
{
    if (s == NULL) {
        put(b, "NULL");
    } else {
        put(b, "\"%s\"", s);
    }
}

static void put_value(struct sbuf *b, const pmix_value_t *v);

static void put_elem(struct sbuf *b, const void *e, pmix_data_type_t t)
{
    switch (t) {
    case PMIX_BOOL: put(b, "%s", *(const bool *)e ? "true" : "false"); break;
    case PMIX_BYTE:
    case PMIX_UINT8: put(b, "%u", (unsigned)*(const uint8_t *)e); break;
    case PMIX_INT8: put(b, "%d", (int)*(const int8_t *)e); break;
    case PMIX_INT16: put(b, "%d", (int)*(const int16_t *)e); break;
    case PMIX_UINT16: put(b, "%u", (unsigned)*(const uint16_t *)e); break;
    case PMIX_INT32: put(b, "%" PRId32, *(const int32_t *)e); break;
    case PMIX_UINT32: put(b, "%" PRIu32, *(const uint32_t *)e); break;
    case PMIX_INT64: put(b, "%" PRId64, *(const int64_t *)e); break;
    case PMIX_UINT64: put(b, "%" PRIu64, *(const uint64_t *)e); break;
    case PMIX_INT: put(b, "%d", *(const int *)e); break;
    case PMIX_UINT: put(b, "%u", *(const unsigned int *)e); break;
    case PMIX_SIZE: put(b, "%zu", *(const size_t *)e); break;
    case PMIX_PID: put(b, "%ld", (long)*(const pid_t *)e); break;
    case PMIX_FLOAT: put(b, "%g", (double)*(const float *)e); break;
    case PMIX_DOUBLE: put(b, "%g", *(const double *)e); break;
    case PMIX_TIMEVAL: {
        const struct timeval *tv = e;
        put(b, "%ld.%06ld", (long)tv->tv_sec, (long)tv->tv_usec);
        break;
    }
    case PMIX_TIME: put(b, "%ld", (long)*(const time_t *)e); break;
    case PMIX_STATUS: put(b, "%s", PMIx_Error_string(*(const pmix_status_t *)e)); break;
    case PMIX_PROC_RANK: put(b, "%" PRIu32, *(const pmix_rank_t *)e); break;
    case PMIX_STRING: put_str(b, *(char *const *)e); break;
    case PMIX_PROC_NSPACE: put_str(b, e); break;
    case PMIX_PROC: {
        const pmix_proc_t *p = e;
        put(b, "%s:%" PRIu32, p->nspace, p->rank);
        break;
    }
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_REGEX: put(b, "%zu bytes", ((const pmix_byte_object_t *)e)->size); break;
    case PMIX_PERSIST: put(b, "%s", PMIx_Persistence_string(*(const uint8_t *)e)); break;
    case PMIX_SCOPE: put(b, "%s", PMIx_Scope_string(*(const uint8_t *)e)); break;
    case PMIX_DATA_RANGE: put(b, "%s", PMIx_Data_range_string(*(const uint8_t *)e)); break;
    case PMIX_PROC_STATE: put(b, "%s", PMIx_Proc_state_string(*(const uint8_t *)e)); break;
    case PMIX_JOB_STATE: put(b, "%s", PMIx_Job_state_string(*(const uint8_t *)e)); break;
    case PMIX_LINK_STATE: put(b, "%s", PMIx_Link_state_string(*(const uint8_t *)e)); break;
    case PMIX_ALLOC_DIRECTIVE:
        put(b, "%s", PMIx_Alloc_directive_string(*(const uint8_t *)e));
        break;
    case PMIX_DATA_TYPE: put(b, "%s", PMIx_Data_type_string(*(const uint16_t *)e)); break;
    case PMIX_POINTER: put(b, "%p", *(void *const *)e); break;
    case PMIX_ENVAR: {
        const pmix_envar_t *ev = e;
        put(b, "%s=%s (sep '%c')", ev->envar ? ev->envar : "NULL", ev->value ? ev->value : "NULL",
            ev->separator ? ev->separator : ' ');
        break;
    }
    case PMIX_COORD: {
        const pmix_coord_t *c = e;
        put(b, "(");
        for (size_t i = 0; i < c->dims && c->coord != NULL; i++) {
            put(b, "%s%" PRIu32, i ? "," : "", c->coord[i]);
        }
        put(b, ") view %u", (unsigned)c->view);
        if (c->fabric != NULL || c->plane != NULL) {
            put(b, " fabric %s plane %s", c->fabric ? c->fabric : "NULL",
                c->plane ? c->plane : "NULL");
        }
        break;
    }
    case PMIX_PROC_INFO: {
        const pmix_proc_info_t *p = e;
        put(b, "%s:%" PRIu32 " host %s exe %s pid %ld state %s", p->proc.nspace, p->proc.rank,
            p->hostname ? p->hostname : "NULL", p->executable_name ? p->executable_name : "NULL",
            (long)p->pid, PMIx_Proc_state_string(p->state));
        break;
    }
    case PMIX_DATA_ARRAY: put_array(b, e); break;
    case PMIX_VALUE: put_value(b, e); break;
    case PMIX_INFO: {
        const pmix_info_t *i = e;
        put(b, "%s: ", i->key);
        put_value(b, &i->value);
        break;
    }
    default: put(b, "<%s>", PMIx_Data_type_string(t)); break;
    }
}

static void put_value(struct sbuf *b, const pmix_value_t *v)
{
    if (v == NULL) {
        put(b, "NULL");
        return;
    }
    put(b, "%s: ", PMIx_Data_type_string(v->type));
    switch (v->type) {
    case PMIX_UNDEF: put(b, "-"); break;
    case PMIX_PROC_NSPACE:
    case PMIX_PROC:
    case PMIX_PROC_INFO:
    case PMIX_DATA_ARRAY:
    case PMIX_COORD:
        if (v->data.ptr == NULL) {
            put(b, "NULL");
        } else {
            put_elem(b, v->data.ptr, v->type);
        }
        break;
    case PMIX_VALUE:
    case PMIX_INFO:
    case PMIX_PDATA:
    case PMIX_APP:
    case PMIX_QUERY:
    case PMIX_REGATTR:
    case PMIX_TOPO:
    case PMIX_PROC_CPUSET:
    case PMIX_GEOMETRY:
    case PMIX_DEVICE_DIST:
    case PMIX_ENDPOINT:
    case PMIX_DATA_BUFFER:
    case PMIX_PROC_STATS:
    case PMIX_DISK_STATS:
    case PMIX_NET_STATS:
    case PMIX_NODE_STATS: put(b, "%s", v->data.ptr == NULL ? "NULL" : "<object>"); break;
    default:
        if (px_type_size(v->type) == 0) {
            put(b, "<unsupported>");
        } else {
            put_elem(b, &v->data, v->type);
        }
        break;
    }
}

static char *finish(struct sbuf *b)
{
    if (b->failed || b->s == NULL) {
        free(b->s);
        return NULL;
    }
    return b->s;
}

char *PMIx_Value_string(const pmix_value_t *val)
{
    struct sbuf b = {NULL, 0, 0, false};
    put_value(&b, val);
    return finish(&b);
}

char *PMIx_Info_string(const pmix_info_t *info)
{
    struct sbuf b = {NULL, 0, 0, false};
    if (info == NULL) {
        put(&b, "NULL");
    } else {
        put(&b, "%s [%s] ", info->key, PMIx_Info_directives_string(info->flags));
        put_value(&b, &info->value);
    }
    return finish(&b);
}
