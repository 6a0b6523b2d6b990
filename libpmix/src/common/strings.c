/*
 * strings.c: printable names for statuses and enumerated values
 * (PMIx_Error_string, PMIx_Data_type_string, ...) and the attribute
 * name/string translation (PMIx_Get_attribute_string/_name).
 *
 * Every name is the constant's own spelling ("PMIX_ERR_NOT_FOUND",
 * "PMIX_PROC_STATE_RUNNING"), which is readable, unique and greppable. The
 * status and attribute tables are generated (const_tables.c); the small
 * enumerations are listed here through the header's macros, so no value is
 * written twice. Bit-mask types (IOF channels, info directives) have a
 * string for every combination: all are constant, nothing is formatted at
 * run time, and no buffer is shared. px_key_alias pairs our specification's
 * network-coordinate keys with the Standard's fabric keys.
 */
#include <string.h>

#include "px_common.h"
#include "px_tables.h"

struct name {
    unsigned long value;
    const char *name;
};

#define E(x)                   \
    {                          \
        (unsigned long)(x), #x \
    }
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup(const struct name *t, size_t n, unsigned long v, const char *unknown)
{
    for (size_t i = 0; i < n; i++) {
        if (t[i].value == v) {
            return t[i].name;
        }
    }
    return unknown;
}

const char *PMIx_Error_string(pmix_status_t status)
{
    for (size_t i = 0; i < px_nstatus_names; i++) {
        if (px_status_names[i].code == status) {
            return px_status_names[i].name;
        }
    }
    return "UNKNOWN PMIX STATUS";
}

static const struct name proc_states[] = {
    E(PMIX_PROC_STATE_UNDEF),
    E(PMIX_PROC_STATE_PREPPED),
    E(PMIX_PROC_STATE_LAUNCH_UNDERWAY),
    E(PMIX_PROC_STATE_RESTART),
    E(PMIX_PROC_STATE_TERMINATE),
    E(PMIX_PROC_STATE_RUNNING),
    E(PMIX_PROC_STATE_CONNECTED),
    E(PMIX_PROC_STATE_UNTERMINATED),
    E(PMIX_PROC_STATE_TERMINATED),
    E(PMIX_PROC_STATE_ERROR),
    E(PMIX_PROC_STATE_KILLED_BY_CMD),
    E(PMIX_PROC_STATE_ABORTED),
    E(PMIX_PROC_STATE_FAILED_TO_START),
    E(PMIX_PROC_STATE_ABORTED_BY_SIG),
    E(PMIX_PROC_STATE_TERM_WO_SYNC),
    E(PMIX_PROC_STATE_COMM_FAILED),
    E(PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED),
    E(PMIX_PROC_STATE_CALLED_ABORT),
    E(PMIX_PROC_STATE_HEARTBEAT_FAILED),
    E(PMIX_PROC_STATE_MIGRATING),
    E(PMIX_PROC_STATE_CANNOT_RESTART),
    E(PMIX_PROC_STATE_TERM_NON_ZERO),
    E(PMIX_PROC_STATE_FAILED_TO_LAUNCH),
};

const char *PMIx_Proc_state_string(pmix_proc_state_t state)
{
    return lookup(proc_states, NELEM(proc_states), state, "UNKNOWN PROC STATE");
}

static const struct name job_states[] = {
    E(PMIX_JOB_STATE_UNDEF),
    E(PMIX_JOB_STATE_AWAITING_ALLOC),
    E(PMIX_JOB_STATE_LAUNCH_UNDERWAY),
    E(PMIX_JOB_STATE_RUNNING),
    E(PMIX_JOB_STATE_SUSPENDED),
    E(PMIX_JOB_STATE_CONNECTED),
    E(PMIX_JOB_STATE_UNTERMINATED),
    E(PMIX_JOB_STATE_TERMINATED),
    E(PMIX_JOB_STATE_TERMINATED_WITH_ERROR),
};

const char *PMIx_Job_state_string(pmix_job_state_t state)
{
    return lookup(job_states, NELEM(job_states), state, "UNKNOWN JOB STATE");
}

static const struct name scopes[] = {
    E(PMIX_SCOPE_UNDEF), E(PMIX_LOCAL), E(PMIX_REMOTE), E(PMIX_GLOBAL), E(PMIX_INTERNAL),
};

const char *PMIx_Scope_string(pmix_scope_t scope)
{
    return lookup(scopes, NELEM(scopes), scope, "UNKNOWN SCOPE");
}

static const struct name persistences[] = {
    E(PMIX_PERSIST_INDEF), E(PMIX_PERSIST_FIRST_READ), E(PMIX_PERSIST_PROC),
    E(PMIX_PERSIST_APP),   E(PMIX_PERSIST_SESSION),    E(PMIX_PERSIST_INVALID),
};

const char *PMIx_Persistence_string(pmix_persistence_t persist)
{
    return lookup(persistences, NELEM(persistences), persist, "UNKNOWN PERSISTENCE");
}

static const struct name ranges[] = {
    E(PMIX_RANGE_UNDEF),     E(PMIX_RANGE_RM),         E(PMIX_RANGE_LOCAL),
    E(PMIX_RANGE_NAMESPACE), E(PMIX_RANGE_SESSION),    E(PMIX_RANGE_GLOBAL),
    E(PMIX_RANGE_CUSTOM),    E(PMIX_RANGE_PROC_LOCAL), E(PMIX_RANGE_INVALID),
};

const char *PMIx_Data_range_string(pmix_data_range_t range)
{
    return lookup(ranges, NELEM(ranges), range, "UNKNOWN RANGE");
}

static const struct name alloc_directives[] = {
    E(PMIX_ALLOC_NEW),      E(PMIX_ALLOC_EXTEND),   E(PMIX_ALLOC_RELEASE),
    E(PMIX_ALLOC_REAQUIRE), E(PMIX_ALLOC_EXTERNAL),
};

const char *PMIx_Alloc_directive_string(pmix_alloc_directive_t directive)
{
    return lookup(alloc_directives, NELEM(alloc_directives), directive, "UNKNOWN ALLOC DIRECTIVE");
}

static const struct name link_states[] = {
    E(PMIX_LINK_STATE_UNKNOWN),
    E(PMIX_LINK_DOWN),
    E(PMIX_LINK_UP),
};

const char *PMIx_Link_state_string(pmix_link_state_t state)
{
    return lookup(link_states, NELEM(link_states), state, "UNKNOWN LINK STATE");
}

static const struct name device_types[] = {
    E(PMIX_DEVTYPE_UNKNOWN), E(PMIX_DEVTYPE_BLOCK),       E(PMIX_DEVTYPE_GPU),
    E(PMIX_DEVTYPE_NETWORK), E(PMIX_DEVTYPE_OPENFABRICS), E(PMIX_DEVTYPE_DMA),
    E(PMIX_DEVTYPE_COPROC),
};

const char *PMIx_Device_type_string(pmix_device_type_t type)
{
    return lookup(device_types, NELEM(device_types), (unsigned long)type,
                  "MULTIPLE OR UNKNOWN DEVICE TYPES");
}

static const struct name data_types[] = {
    E(PMIX_UNDEF),
    E(PMIX_BOOL),
    E(PMIX_BYTE),
    E(PMIX_STRING),
    E(PMIX_SIZE),
    E(PMIX_PID),
    E(PMIX_INT),
    E(PMIX_INT8),
    E(PMIX_INT16),
    E(PMIX_INT32),
    E(PMIX_INT64),
    E(PMIX_UINT),
    E(PMIX_UINT8),
    E(PMIX_UINT16),
    E(PMIX_UINT32),
    E(PMIX_UINT64),
    E(PMIX_FLOAT),
    E(PMIX_DOUBLE),
    E(PMIX_TIMEVAL),
    E(PMIX_TIME),
    E(PMIX_STATUS),
    E(PMIX_VALUE),
    E(PMIX_PROC),
    E(PMIX_APP),
    E(PMIX_INFO),
    E(PMIX_PDATA),
    E(PMIX_BUFFER),
    E(PMIX_BYTE_OBJECT),
    E(PMIX_KVAL),
    E(PMIX_PERSIST),
    E(PMIX_POINTER),
    E(PMIX_SCOPE),
    E(PMIX_DATA_RANGE),
    E(PMIX_COMMAND),
    E(PMIX_INFO_DIRECTIVES),
    E(PMIX_DATA_TYPE),
    E(PMIX_PROC_STATE),
    E(PMIX_PROC_INFO),
    E(PMIX_DATA_ARRAY),
    E(PMIX_PROC_RANK),
    E(PMIX_QUERY),
    E(PMIX_COMPRESSED_STRING),
    E(PMIX_ALLOC_DIRECTIVE),
    E(PMIX_IOF_CHANNEL),
    E(PMIX_ENVAR),
    E(PMIX_COORD),
    E(PMIX_REGATTR),
    E(PMIX_REGEX),
    E(PMIX_JOB_STATE),
    E(PMIX_LINK_STATE),
    E(PMIX_PROC_CPUSET),
    E(PMIX_GEOMETRY),
    E(PMIX_DEVICE_DIST),
    E(PMIX_ENDPOINT),
    E(PMIX_TOPO),
    E(PMIX_DEVTYPE),
    E(PMIX_LOCTYPE),
    E(PMIX_COMPRESSED_BYTE_OBJECT),
    E(PMIX_PROC_NSPACE),
    E(PMIX_PROC_STATS),
    E(PMIX_DISK_STATS),
    E(PMIX_NET_STATS),
    E(PMIX_NODE_STATS),
    E(PMIX_DATA_BUFFER),
    E(PMIX_STOR_MEDIUM),
    E(PMIX_STOR_ACCESS),
    E(PMIX_STOR_PERSIST),
    E(PMIX_STOR_ACCESS_TYPE),
};

const char *PMIx_Data_type_string(pmix_data_type_t type)
{
    return lookup(data_types, NELEM(data_types), type, "UNKNOWN DATA TYPE");
}

/* Index = channel bits (stdin 1, stdout 2, stderr 4, stddiag 8). */
static const char *const iof_combos[16] = {
    "PMIX_FWD_NO_CHANNELS",
    "PMIX_FWD_STDIN_CHANNEL",
    "PMIX_FWD_STDOUT_CHANNEL",
    "PMIX_FWD_STDIN_CHANNEL|PMIX_FWD_STDOUT_CHANNEL",
    "PMIX_FWD_STDERR_CHANNEL",
    "PMIX_FWD_STDIN_CHANNEL|PMIX_FWD_STDERR_CHANNEL",
    "PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDERR_CHANNEL",
    "PMIX_FWD_STDIN_CHANNEL|PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDERR_CHANNEL",
    "PMIX_FWD_STDDIAG_CHANNEL",
    "PMIX_FWD_STDIN_CHANNEL|PMIX_FWD_STDDIAG_CHANNEL",
    "PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDDIAG_CHANNEL",
    "PMIX_FWD_STDIN_CHANNEL|PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDDIAG_CHANNEL",
    "PMIX_FWD_STDERR_CHANNEL|PMIX_FWD_STDDIAG_CHANNEL",
    "PMIX_FWD_STDIN_CHANNEL|PMIX_FWD_STDERR_CHANNEL|PMIX_FWD_STDDIAG_CHANNEL",
    "PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDERR_CHANNEL|PMIX_FWD_STDDIAG_CHANNEL",
    ("PMIX_FWD_STDIN_CHANNEL|PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDERR_CHANNEL|"
     "PMIX_FWD_STDDIAG_CHANNEL"),
};

const char *PMIx_IOF_channel_string(pmix_iof_channel_t channel)
{
    if (channel == PMIX_FWD_ALL_CHANNELS) {
        return "PMIX_FWD_ALL_CHANNELS";
    }
    if (channel > 15) {
        return "UNKNOWN IOF CHANNEL";
    }
    return iof_combos[channel];
}

/* Index = directive bits (REQD 1, ARRAY_END 2, REQD_PROCESSED 4,
 * QUALIFIER 8, PERSISTENT 16). */
static const char *const directive_combos[32] = {
    "NONE",
    "REQUIRED",
    "END",
    "REQUIRED|END",
    "PROCESSED",
    "REQUIRED|PROCESSED",
    "END|PROCESSED",
    "REQUIRED|END|PROCESSED",
    "QUALIFIER",
    "REQUIRED|QUALIFIER",
    "END|QUALIFIER",
    "REQUIRED|END|QUALIFIER",
    "PROCESSED|QUALIFIER",
    "REQUIRED|PROCESSED|QUALIFIER",
    "END|PROCESSED|QUALIFIER",
    "REQUIRED|END|PROCESSED|QUALIFIER",
    "PERSISTENT",
    "REQUIRED|PERSISTENT",
    "END|PERSISTENT",
    "REQUIRED|END|PERSISTENT",
    "PROCESSED|PERSISTENT",
    "REQUIRED|PROCESSED|PERSISTENT",
    "END|PROCESSED|PERSISTENT",
    "REQUIRED|END|PROCESSED|PERSISTENT",
    "QUALIFIER|PERSISTENT",
    "REQUIRED|QUALIFIER|PERSISTENT",
    "END|QUALIFIER|PERSISTENT",
    "REQUIRED|END|QUALIFIER|PERSISTENT",
    "PROCESSED|QUALIFIER|PERSISTENT",
    "REQUIRED|PROCESSED|QUALIFIER|PERSISTENT",
    "END|PROCESSED|QUALIFIER|PERSISTENT",
    "REQUIRED|END|PROCESSED|QUALIFIER|PERSISTENT",
};

const char *PMIx_Info_directives_string(pmix_info_directives_t directives)
{
    if (directives > 31) {
        return "UNKNOWN INFO DIRECTIVES";
    }
    return directive_combos[directives];
}

const char *PMIx_Get_attribute_string(const char *attributename)
{
    if (attributename == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < px_nattr_names; i++) {
        if (strcmp(px_attr_names[i].name, attributename) == 0) {
            return px_attr_names[i].string;
        }
    }
    return NULL;
}

const char *PMIx_Get_attribute_name(const char *attributestring)
{
    if (attributestring == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < px_nattr_names; i++) {
        if (strcmp(px_attr_names[i].string, attributestring) == 0) {
            return px_attr_names[i].name;
        }
    }
    return NULL;
}

/* Seed-network keys and the Standard's fabric keys for the same data. */
static const char *const key_aliases[][2] = {
    {PMIX_NETWORK_COORDINATE, PMIX_FABRIC_COORDINATES},
    {PMIX_NETWORK_DIMS, PMIX_FABRIC_DIMS},
    {PMIX_NETWORK_ENDPT, PMIX_FABRIC_ENDPT},
    {PMIX_NETWORK_PLANE, PMIX_FABRIC_PLANE},
    {PMIX_NETWORK_SHAPE, PMIX_FABRIC_SHAPE},
};

const char *px_key_alias(const char *key)
{
    if (key == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < NELEM(key_aliases); i++) {
        if (strcmp(key, key_aliases[i][0]) == 0) {
            return key_aliases[i][1];
        }
        if (strcmp(key, key_aliases[i][1]) == 0) {
            return key_aliases[i][0];
        }
    }
    return NULL;
}
