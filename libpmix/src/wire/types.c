/*
 * types.c - the facts the codec needs about every data type of the Standard.
 *
 * px_wire_type_info() answers, for one type: the size of its C object (the
 * stride of a data array or of PMIx_Data_pack's source), the fewest bytes
 * one object can take on the wire (so that a count read from the wire can be
 * checked against the bytes that remain before anything is allocated),
 * whether a pmix_value_t holds it through a pointer, and whether it can
 * cross a process boundary at all.
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
#include "wire/px_wire_impl.h"

/* Encoded sizes of the building blocks (see pack.c for the layouts). */
enum {
    W_STR = 4,          /* u32 length, bytes */
    W_PROC = W_STR + 4, /* nspace, u32 rank */
    W_TV = 16,          /* i64 seconds, i64 microseconds */
    W_COUNT = 8,        /* u64 element count */
    W_ARGV = 4,         /* u32 count */
    W_VALUE = 2,        /* u16 type, then at least nothing (PMIX_UNDEF) */
};

#define T(sz, mn, ptr) ((px_wire_type){(sz), (mn), (ptr), false, PMIX_SUCCESS})

pmix_status_t px_wire_type_info(pmix_data_type_t type, px_wire_type *t)
{
    switch (type) {
    case PMIX_UNDEF:
        /* Only a value may be undefined; it encodes as its tag alone. An
         * array of undefined elements has no elements. */
        *t = T(0, 1, false);
        break;
    case PMIX_BOOL: *t = T(sizeof(bool), 1, false); break;
    case PMIX_BYTE:
    case PMIX_INT8:
    case PMIX_UINT8: *t = T(1, 1, false); break;
    case PMIX_INT16:
    case PMIX_UINT16: *t = T(2, 2, false); break;
    case PMIX_INT32:
    case PMIX_UINT32:
    case PMIX_PROC_RANK: *t = T(4, 4, false); break;
    case PMIX_INT:
    case PMIX_UINT: *t = T(sizeof(int), 4, false); break;
    case PMIX_STATUS: *t = T(sizeof(pmix_status_t), 4, false); break;
    case PMIX_PID: *t = T(sizeof(pid_t), 4, false); break;
    case PMIX_INT64:
    case PMIX_UINT64: *t = T(8, 8, false); break;
    case PMIX_SIZE: *t = T(sizeof(size_t), 8, false); break;
    case PMIX_FLOAT: *t = T(sizeof(float), 4, false); break;
    case PMIX_DOUBLE: *t = T(sizeof(double), 8, false); break;
    case PMIX_TIMEVAL: *t = T(sizeof(struct timeval), W_TV, false); break;
    case PMIX_TIME: *t = T(sizeof(time_t), 8, false); break;
    case PMIX_STRING: *t = T(sizeof(char *), W_STR, false); break;
    case PMIX_PROC_NSPACE: *t = T(sizeof(pmix_nspace_t), W_STR, true); break;
    case PMIX_PROC: *t = T(sizeof(pmix_proc_t), W_PROC, true); break;
    case PMIX_BYTE_OBJECT:
    case PMIX_COMPRESSED_STRING:
    case PMIX_COMPRESSED_BYTE_OBJECT:
    case PMIX_REGEX: *t = T(sizeof(pmix_byte_object_t), 4, false); break;
    case PMIX_PERSIST:
    case PMIX_SCOPE:
    case PMIX_DATA_RANGE:
    case PMIX_PROC_STATE:
    case PMIX_JOB_STATE:
    case PMIX_LINK_STATE:
    case PMIX_ALLOC_DIRECTIVE:
    case PMIX_COMMAND: *t = T(1, 1, false); break;
    case PMIX_IOF_CHANNEL:
    case PMIX_LOCTYPE:
    case PMIX_DATA_TYPE:
    case PMIX_STOR_ACCESS_TYPE: *t = T(2, 2, false); break;
    case PMIX_INFO_DIRECTIVES: *t = T(sizeof(pmix_info_directives_t), 4, false); break;
    case PMIX_DEVTYPE:
    case PMIX_STOR_MEDIUM:
    case PMIX_STOR_ACCESS:
    case PMIX_STOR_PERSIST: *t = T(8, 8, false); break;
    case PMIX_PROC_INFO:
        *t = T(sizeof(pmix_proc_info_t), W_PROC + 2 * W_STR + 4 + 4 + 1, true);
        break;
    case PMIX_DATA_ARRAY: *t = T(sizeof(pmix_data_array_t), 2 + W_COUNT, true); break;
    case PMIX_ENVAR: *t = T(sizeof(pmix_envar_t), 2 * W_STR + 1, false); break;
    case PMIX_COORD: *t = T(sizeof(pmix_coord_t), 2 * W_STR + 1 + W_COUNT, true); break;
    case PMIX_REGATTR: *t = T(sizeof(pmix_regattr_t), 2 * W_STR + 2 + W_ARGV, true); break;
    case PMIX_PROC_CPUSET: *t = T(sizeof(pmix_cpuset_t), W_STR, true); break;
    case PMIX_GEOMETRY: *t = T(sizeof(pmix_geometry_t), 8 + 2 * W_STR + W_COUNT, true); break;
    case PMIX_DEVICE_DIST:
        *t = T(sizeof(pmix_device_distance_t), 2 * W_STR + 8 + 2 + 2, true);
        break;
    case PMIX_ENDPOINT: *t = T(sizeof(pmix_endpoint_t), 3 * W_STR, true); break;
    case PMIX_DATA_BUFFER: *t = T(sizeof(pmix_data_buffer_t), 4, true); break;
    case PMIX_VALUE: *t = T(sizeof(pmix_value_t), W_VALUE, true); break;
    case PMIX_INFO: *t = T(sizeof(pmix_info_t), W_STR + 4 + W_VALUE, true); break;
    case PMIX_PDATA: *t = T(sizeof(pmix_pdata_t), W_PROC + W_STR + W_VALUE, true); break;
    case PMIX_APP:
        *t = T(sizeof(pmix_app_t), W_STR + 2 * W_ARGV + W_STR + 4 + W_COUNT, true);
        break;
    case PMIX_QUERY: *t = T(sizeof(pmix_query_t), W_ARGV + W_COUNT, true); break;
    case PMIX_PROC_STATS:
        *t = T(sizeof(pmix_proc_stats_t),
               W_STR + W_PROC + 4 + W_STR + 1 + W_TV + 4 + 4 + 2 + 4 * 4 + 2 + W_TV, true);
        break;
    case PMIX_DISK_STATS: *t = T(sizeof(pmix_disk_stats_t), W_STR + 11 * 8, true); break;
    case PMIX_NET_STATS: *t = T(sizeof(pmix_net_stats_t), W_STR + 6 * 8, true); break;
    case PMIX_NODE_STATS:
        *t = T(sizeof(pmix_node_stats_t), W_STR + 11 * 4 + W_TV + 2 * W_COUNT, true);
        break;
    case PMIX_POINTER:
        *t = T(sizeof(void *), 1, false);
        t->status = PMIX_ERR_BAD_PARAM;
        break;
    case PMIX_TOPO:
        *t = T(sizeof(pmix_topology_t), 1, true);
        t->status = PMIX_ERR_NOT_SUPPORTED;
        break;
    case PMIX_KVAL:
    case PMIX_BUFFER:
        /* Known names without a public structure to encode. */
        *t = T(0, 1, false);
        t->status = PMIX_ERR_NOT_SUPPORTED;
        break;
    default:
        *t = T(0, 1, false);
        t->status = PMIX_ERR_UNKNOWN_DATA_TYPE;
        break;
    }
    t->holds_values = type == PMIX_VALUE || type == PMIX_INFO || type == PMIX_PDATA ||
                      type == PMIX_APP || type == PMIX_QUERY;
    return t->status;
}

void px_wire_destruct(void *obj, pmix_data_type_t type)
{
    px_wire_type t;

    if (obj == NULL) {
        return;
    }
    px_wire_type_info(type, &t);
    if (t.size > 0) {
        px_elems_destruct(obj, 1, type);
        memset(obj, 0, t.size);
    }
}
