/*
 * dataprint.c - PMIx_Data_print: a readable rendering of any data type.
 *
 * The output is "<prefix>Data type: <TYPE>\tValue: <rendering>" on one
 * line. Scalars print as numbers (enumerations by name), strings in
 * quotes, processes as nspace:rank, byte objects by size and up to their
 * first 16 bytes in hex, and structures as {member: value, ...}, recursing
 * through data arrays, values and info lists. A structure nested deeper
 * than MAX_NEST prints as "..." (a data array can point at itself).
 *
 * How a type prints is its row's "printed" column in the table of data
 * types (common/px_types.def): a number (decimal, signed or not, or hex),
 * a name given by the row's namer function, a status, a rank, or, for
 * everything else, as its shape says (render()'s switch on shapes).
 * name_of() is the one switch built from the rows themselves: one case per
 * row printed as NAME, calling its namer.
 *
 * The text is built in a small growable string; an allocation failure
 * anywhere makes the whole call fail with PMIX_ERR_NOMEM.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "common/px_types.h"
#include "wire/px_wire_impl.h"

#define MAX_NEST 16
#define HEX_BYTES 16

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} sbuf;

static void add(sbuf *s, const char *text, size_t n)
{
    size_t cap;
    char *p;

    if (s->failed) {
        return;
    }
    if (s->len + n + 1 > s->cap) {
        cap = s->cap < 64 ? 64 : s->cap;
        while (cap < s->len + n + 1) {
            cap *= 2;
        }
        p = realloc(s->p, cap);
        if (p == NULL) {
            s->failed = true;
            return;
        }
        s->p = p;
        s->cap = cap;
    }
    memcpy(s->p + s->len, text, n);
    s->len += n;
    s->p[s->len] = '\0';
}

static void puts_(sbuf *s, const char *text)
{
    add(s, text, strlen(text));
}

static void printf_(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void printf_(sbuf *s, const char *fmt, ...)
{
    char small[128];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0) {
        s->failed = true;
    } else if ((size_t)n < sizeof(small)) {
        add(s, small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (big == NULL) {
            s->failed = true;
            return;
        }
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        add(s, big, (size_t)n);
        free(big);
    }
}

static void render(sbuf *s, const void *src, pmix_data_type_t type, int nest);

static void str(sbuf *s, const char *v)
{
    if (v == NULL) {
        puts_(s, "NULL");
    } else {
        printf_(s, "\"%s\"", v);
    }
}

static void rank(sbuf *s, pmix_rank_t r)
{
    switch (r) {
    case PMIX_RANK_WILDCARD: puts_(s, "WILDCARD"); break;
    case PMIX_RANK_UNDEF: puts_(s, "UNDEF"); break;
    case PMIX_RANK_LOCAL_NODE: puts_(s, "LOCAL_NODE"); break;
    case PMIX_RANK_LOCAL_PEERS: puts_(s, "LOCAL_PEERS"); break;
    case PMIX_RANK_INVALID: puts_(s, "INVALID"); break;
    default: printf_(s, "%" PRIu32, r); break;
    }
}

static void proc(sbuf *s, const pmix_proc_t *p)
{
    printf_(s, "%.*s:", PMIX_MAX_NSLEN, p->nspace);
    rank(s, p->rank);
}

static void bytes(sbuf *s, const char *b, size_t n)
{
    printf_(s, "<%zu bytes", n);
    if (b != NULL && n > 0) {
        puts_(s, ":");
        for (size_t i = 0; i < n && i < HEX_BYTES; i++) {
            printf_(s, " %02x", (unsigned)(unsigned char)b[i]);
        }
        if (n > HEX_BYTES) {
            puts_(s, " ...");
        }
    }
    puts_(s, ">");
}

static void argv(sbuf *s, char *const *v)
{
    if (v == NULL) {
        puts_(s, "NULL");
        return;
    }
    puts_(s, "[");
    for (size_t i = 0; v[i] != NULL; i++) {
        puts_(s, i > 0 ? ", " : "");
        str(s, v[i]);
    }
    puts_(s, "]");
}

static void tv(sbuf *s, const struct timeval *t)
{
    printf_(s, "%lld.%06ld", (long long)t->tv_sec, (long)t->tv_usec);
}

static void coord(sbuf *s, const pmix_coord_t *c)
{
    puts_(s, "{fabric: ");
    str(s, c->fabric);
    puts_(s, ", plane: ");
    str(s, c->plane);
    printf_(s, ", view: %u, coord: (", (unsigned)c->view);
    for (size_t i = 0; c->coord != NULL && i < c->dims; i++) {
        puts_(s, i > 0 ? "," : "");
        printf_(s, "%" PRIu32, c->coord[i]);
    }
    puts_(s, ")}");
}

static void array(sbuf *s, const void *elems, size_t n, pmix_data_type_t type, int nest)
{
    px_wire_type t;

    px_wire_type_info(type, &t);
    printf_(s, "%s[%zu] {", PMIx_Data_type_string(type), n);
    for (size_t i = 0; elems != NULL && t.size > 0 && i < n; i++) {
        puts_(s, i > 0 ? ", " : "");
        render(s, (const char *)elems + i * t.size, type, nest + 1);
    }
    puts_(s, "}");
}

static void value(sbuf *s, const pmix_value_t *v, int nest)
{
    px_wire_type t;
    const void *obj;

    printf_(s, "%s: ", PMIx_Data_type_string(v->type));
    if (v->type == PMIX_UNDEF) {
        puts_(s, "(none)");
    } else if (v->type == PMIX_POINTER) {
        printf_(s, "%p", v->data.ptr);
    } else if (px_wire_type_info(v->type, &t) == PMIX_ERR_UNKNOWN_DATA_TYPE) {
        puts_(s, "(unknown type)");
    } else if (t.by_pointer) {
        memcpy(&obj, &v->data, sizeof(obj));
        if (obj == NULL) {
            puts_(s, "NULL");
        } else {
            render(s, obj, v->type, nest + 1);
        }
    } else {
        render(s, &v->data, v->type, nest + 1);
    }
}

static void info(sbuf *s, const pmix_info_t *i, int nest)
{
    printf_(s, "{key: \"%.*s\", flags: 0x%" PRIx32 ", value: ", PMIX_MAX_KEYLEN, i->key,
            (uint32_t)i->flags);
    value(s, &i->value, nest);
    puts_(s, "}");
}

/* The value at `src` of a type with an integer shape, `size` bytes wide,
 * read as signed or not. */
static uint64_t unsigned_of(const void *src, size_t size)
{
    switch (size) {
    case 1: return *(const uint8_t *)src;
    case 2: return *(const uint16_t *)src;
    case 4: return *(const uint32_t *)src;
    default: return *(const uint64_t *)src;
    }
}

static int64_t signed_of(const void *src, size_t size)
{
    switch (size) {
    case 1: return *(const int8_t *)src;
    case 2: return *(const int16_t *)src;
    case 4: return *(const int32_t *)src;
    default: return *(const int64_t *)src;
    }
}

/* The name of an enumerated value: the namer of its type's row. The cases
 * come from the rows printed as NAME; the others expand to nothing. */
#define NAMED_NAME(c, ctype, namer) \
    case c:                         \
        return namer(*(const ctype *)src);
#define NAMED_SHAPE(c, ctype, namer)
#define NAMED_UNSIGNED(c, ctype, namer)
#define NAMED_SIGNED(c, ctype, namer)
#define NAMED_HEX(c, ctype, namer)
#define NAMED_STATUS(c, ctype, namer)
#define NAMED_RANK(c, ctype, namer)
#define PX_TYPE(c, ctype, shape, held, min, printed, namer) NAMED_##printed(c, ctype, namer)
#define PX_TYPE_LOCAL(c, ctype, shape, held, printed, refusal)
#define PX_TYPE_NAME(c, status)

static const char *name_of(const void *src, pmix_data_type_t type)
{
    switch (type) {
#include "common/px_types.def"
    default: return "(no name)";
    }
}

#undef NAMED_NAME
#undef NAMED_SHAPE
#undef NAMED_UNSIGNED
#undef NAMED_SIGNED
#undef NAMED_HEX
#undef NAMED_STATUS
#undef NAMED_RANK

static void render(sbuf *s, const void *src, pmix_data_type_t type, int nest)
{
    const px_type *row = px_type_of(type);

    if (nest > MAX_NEST) {
        puts_(s, "...");
        return;
    }
    switch (row->print) {
    case PX_PRINT_SHAPE: break;
    case PX_PRINT_UNSIGNED: printf_(s, "%" PRIu64, unsigned_of(src, row->size)); return;
    case PX_PRINT_SIGNED: printf_(s, "%" PRId64, signed_of(src, row->size)); return;
    case PX_PRINT_HEX: printf_(s, "0x%" PRIx64, unsigned_of(src, row->size)); return;
    case PX_PRINT_NAME: puts_(s, name_of(src, type)); return;
    case PX_PRINT_STATUS:
        printf_(s, "%d (%s)", *(const pmix_status_t *)src,
                PMIx_Error_string(*(const pmix_status_t *)src));
        return;
    case PX_PRINT_RANK: rank(s, *(const pmix_rank_t *)src); return;
    }
    switch (row->shape) {
    case PX_SHAPE_NONE: puts_(s, type == PMIX_UNDEF ? "(none)" : "(unknown type)"); break;
    case PX_SHAPE_BOOL: puts_(s, *(const bool *)src ? "true" : "false"); break;
    case PX_SHAPE_FLOAT: printf_(s, "%g", (double)*(const float *)src); break;
    case PX_SHAPE_DOUBLE: printf_(s, "%g", *(const double *)src); break;
    case PX_SHAPE_TIMEVAL: tv(s, src); break;
    case PX_SHAPE_STRING: str(s, *(char *const *)src); break;
    case PX_SHAPE_NSPACE: printf_(s, "\"%.*s\"", PMIX_MAX_NSLEN, (const char *)src); break;
    case PX_SHAPE_PROC: proc(s, src); break;
    case PX_SHAPE_BYTES: {
        const pmix_byte_object_t *bo = src;
        bytes(s, bo->bytes, bo->size);
        break;
    }
    case PX_SHAPE_POINTER: printf_(s, "%p", *(void *const *)src); break;
    /* Integers print as their rows say (above). */
    case PX_SHAPE_U8:
    case PX_SHAPE_U16:
    case PX_SHAPE_U32:
    case PX_SHAPE_U64:
    case PX_SHAPE_PID:
    case PX_SHAPE_SIZE:
    case PX_SHAPE_TIME: printf_(s, "%" PRIu64, unsigned_of(src, row->size)); break;
    case PX_SHAPE_PROC_INFO: {
        const pmix_proc_info_t *p = src;
        puts_(s, "{proc: ");
        proc(s, &p->proc);
        puts_(s, ", host: ");
        str(s, p->hostname);
        puts_(s, ", exe: ");
        str(s, p->executable_name);
        printf_(s, ", pid: %ld, exit: %d, state: %s}", (long)p->pid, p->exit_code,
                PMIx_Proc_state_string(p->state));
        break;
    }
    case PX_SHAPE_DARRAY: {
        const pmix_data_array_t *d = src;
        array(s, d->array, d->size, d->type, nest);
        break;
    }
    case PX_SHAPE_ENVAR: {
        const pmix_envar_t *e = src;
        puts_(s, "{envar: ");
        str(s, e->envar);
        puts_(s, ", value: ");
        str(s, e->value);
        printf_(s, ", separator: '%c'}", e->separator != '\0' ? e->separator : ' ');
        break;
    }
    case PX_SHAPE_COORD: coord(s, src); break;
    case PX_SHAPE_REGATTR: {
        const pmix_regattr_t *r = src;
        puts_(s, "{name: ");
        str(s, r->name);
        printf_(s, ", key: \"%.*s\", type: %s, description: ", PMIX_MAX_KEYLEN, r->string,
                PMIx_Data_type_string(r->type));
        argv(s, r->description);
        puts_(s, "}");
        break;
    }
    case PX_SHAPE_TOPO: {
        const pmix_topology_t *t = src;
        puts_(s, "{source: ");
        str(s, t->source);
        printf_(s, ", topology: %p}", t->topology);
        break;
    }
    case PX_SHAPE_CPUSET: {
        const pmix_cpuset_t *c = src;
        puts_(s, "{source: ");
        str(s, c->source);
        printf_(s, ", bitmap: %p}", c->bitmap);
        break;
    }
    case PX_SHAPE_GEOMETRY: {
        const pmix_geometry_t *g = src;
        printf_(s, "{fabric: %zu, uuid: ", g->fabric);
        str(s, g->uuid);
        puts_(s, ", osname: ");
        str(s, g->osname);
        puts_(s, ", coordinates: [");
        for (size_t i = 0; g->coordinates != NULL && i < g->ncoords; i++) {
            puts_(s, i > 0 ? ", " : "");
            coord(s, &g->coordinates[i]);
        }
        puts_(s, "]}");
        break;
    }
    case PX_SHAPE_DEVICE_DIST: {
        const pmix_device_distance_t *d = src;
        puts_(s, "{uuid: ");
        str(s, d->uuid);
        puts_(s, ", osname: ");
        str(s, d->osname);
        printf_(s, ", type: %s, mindist: %u, maxdist: %u}", PMIx_Device_type_string(d->type),
                (unsigned)d->mindist, (unsigned)d->maxdist);
        break;
    }
    case PX_SHAPE_ENDPOINT: {
        const pmix_endpoint_t *e = src;
        puts_(s, "{uuid: ");
        str(s, e->uuid);
        puts_(s, ", osname: ");
        str(s, e->osname);
        puts_(s, ", endpoint: ");
        bytes(s, e->endpt.bytes, e->endpt.size);
        puts_(s, "}");
        break;
    }
    case PX_SHAPE_DATA_BUFFER: {
        const pmix_data_buffer_t *d = src;
        printf_(s, "{bytes used: %zu, allocated: %zu, unpacked: %zu}", d->bytes_used,
                d->bytes_allocated,
                d->base_ptr != NULL && d->unpack_ptr != NULL ? (size_t)(d->unpack_ptr - d->base_ptr)
                                                             : (size_t)0);
        break;
    }
    case PX_SHAPE_VALUE: value(s, src, nest); break;
    case PX_SHAPE_INFO: info(s, src, nest); break;
    case PX_SHAPE_PDATA: {
        const pmix_pdata_t *p = src;
        puts_(s, "{proc: ");
        proc(s, &p->proc);
        printf_(s, ", key: \"%.*s\", value: ", PMIX_MAX_KEYLEN, p->key);
        value(s, &p->value, nest);
        puts_(s, "}");
        break;
    }
    case PX_SHAPE_APP: {
        const pmix_app_t *a = src;
        puts_(s, "{cmd: ");
        str(s, a->cmd);
        puts_(s, ", argv: ");
        argv(s, a->argv);
        puts_(s, ", env: ");
        argv(s, a->env);
        puts_(s, ", cwd: ");
        str(s, a->cwd);
        printf_(s, ", maxprocs: %d, info: ", a->maxprocs);
        array(s, a->info, a->ninfo, PMIX_INFO, nest);
        puts_(s, "}");
        break;
    }
    case PX_SHAPE_QUERY: {
        const pmix_query_t *q = src;
        puts_(s, "{keys: ");
        argv(s, q->keys);
        puts_(s, ", qualifiers: ");
        array(s, q->qualifiers, q->nqual, PMIX_INFO, nest);
        puts_(s, "}");
        break;
    }
    case PX_SHAPE_PROC_STATS: {
        const pmix_proc_stats_t *p = src;
        puts_(s, "{node: ");
        str(s, p->node);
        puts_(s, ", proc: ");
        proc(s, &p->proc);
        printf_(s, ", pid: %ld, cmd: ", (long)p->pid);
        str(s, p->cmd);
        printf_(s,
                ", state: '%c', cpu: %g%%, priority: %d, threads: %u, pss: %g, vsize: %g, "
                "rss: %g, peak vsize: %g, processor: %u, sampled: ",
                p->state != '\0' ? p->state : ' ', (double)p->percent_cpu, (int)p->priority,
                (unsigned)p->num_threads, (double)p->pss, (double)p->vsize, (double)p->rss,
                (double)p->peak_vsize, (unsigned)p->processor);
        tv(s, &p->sample_time);
        puts_(s, "}");
        break;
    }
    case PX_SHAPE_DISK_STATS: {
        const pmix_disk_stats_t *d = src;
        puts_(s, "{disk: ");
        str(s, d->disk);
        printf_(s, ", reads: %" PRIu64 ", writes: %" PRIu64 ", ios in progress: %" PRIu64 "}",
                d->num_reads_completed, d->num_writes_completed, d->num_ios_in_progress);
        break;
    }
    case PX_SHAPE_NET_STATS: {
        const pmix_net_stats_t *n = src;
        puts_(s, "{interface: ");
        str(s, n->net_interface);
        printf_(s, ", bytes received: %" PRIu64 ", bytes sent: %" PRIu64 "}", n->num_bytes_recvd,
                n->num_bytes_sent);
        break;
    }
    case PX_SHAPE_NODE_STATS: {
        const pmix_node_stats_t *n = src;
        puts_(s, "{node: ");
        str(s, n->node);
        printf_(s, ", load: %g %g %g, free mem: %g, disks: ", (double)n->la, (double)n->la5,
                (double)n->la15, (double)n->free_mem);
        array(s, n->diskstats, n->ndiskstats, PMIX_DISK_STATS, nest);
        puts_(s, ", nets: ");
        array(s, n->netstats, n->nnetstats, PMIX_NET_STATS, nest);
        puts_(s, "}");
        break;
    }
    }
}

pmix_status_t PMIx_Data_print(char **output, const char *prefix, void *src, pmix_data_type_t type)
{
    px_wire_type t;
    sbuf s = {NULL, 0, 0, false};

    if (output == NULL) {
        return PMIX_ERR_BAD_PARAM;
    }
    *output = NULL;
    if (px_wire_type_info(type, &t) == PMIX_ERR_UNKNOWN_DATA_TYPE) {
        return PMIX_ERR_BAD_PARAM;
    }
    printf_(&s, "%sData type: %s\tValue: ", prefix != NULL ? prefix : "",
            PMIx_Data_type_string(type));
    if (src == NULL) {
        puts_(&s, "NULL");
    } else if (type == PMIX_STRING) {
        str(&s, src); /* a string is passed as the char * itself */
    } else {
        render(&s, src, type, 0);
    }
    if (s.failed) {
        free(s.p);
        return PMIX_ERR_NOMEM;
    }
    *output = s.p;
    return PMIX_SUCCESS;
}
