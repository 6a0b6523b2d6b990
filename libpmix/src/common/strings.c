/*
 * strings.c: printable names for statuses and enumerated values
 * (PMIx_Error_string, PMIx_Data_type_string, ...) and the attribute
 * name/string translation (PMIx_Get_attribute_string/_name).
 *
 * Every name is the constant's own spelling ("PMIX_ERR_NOT_FOUND",
 * "PMIX_PROC_STATE_RUNNING"), which is readable, unique and greppable. The
 * status and attribute tables are generated (const_tables.c); the data
 * types' names are the rows of the table of data types (px_types.def); the
 * small enumerations are listed here through the header's macros, so no
 * value is written twice. Bit-mask types (IOF channels, info directives)
 * have a string for every combination: all are constant, nothing is
 * formatted at run time, and no buffer is shared. px_key_alias pairs our
 * specification's network-coordinate keys with the Standard's fabric keys.
 */
#include <string.h>

#include "px_common.h"
#include "px_types.h"
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

/* The names are the rows' of the table of data types (px_types.def). */
const char *PMIx_Data_type_string(pmix_data_type_t type)
{
    const char *name = px_type_of(type)->name;

    return name != NULL ? name : "UNKNOWN DATA TYPE";
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
