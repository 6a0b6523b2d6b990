/*
 * workloads.c - the programs built into pmixsim.
 *
 * A workload is an unchanged PMIx program whose `main` was renamed at
 * compile time (-Dmain=pmixsim_wl_NAME_main, see CMakeLists.txt); each
 * simulated process runs it in its own actor with argv = NAME ARGS... Its
 * PMIx_* calls reach that actor's client. To add one, add its source to
 * PMIXSIM_WORKLOADS in CMakeLists.txt and a line below. A program need not
 * be built in to run: pmixsim loads one built as a shared object
 * (`pmixsim ./prog.so`, program.c).
 */
#include <string.h>

#include "pmixsim.h"

int pmixsim_wl_hello_main(void);
int pmixsim_wl_bizcard_main(int argc, char **argv);
int pmixsim_wl_fence_bench_main(int argc, char **argv);
int pmixsim_wl_fence_main(int argc, char **argv);
int pmixsim_wl_coords_main(int argc, char **argv);
int pmixsim_wl_seq_main(int argc, char **argv);
int pmixsim_wl_jobkeys_main(void);
int pmixsim_wl_psets_main(int argc, char **argv);
int pmixsim_wl_group_main(int argc, char **argv);
int pmixsim_wl_sessions_main(int argc, char **argv);
int pmixsim_wl_pubsub_main(void);
int pmixsim_wl_spawn_main(int argc, char **argv);
int pmixsim_wl_events_main(int argc, char **argv);
int pmixsim_wl_invite_main(int argc, char **argv);

static int hello(int argc, char **argv)
{
    return pmixsim_wl_hello_main();
}

static int jobkeys(int argc, char **argv)
{
    return pmixsim_wl_jobkeys_main();
}

static int pubsub(int argc, char **argv)
{
    return pmixsim_wl_pubsub_main();
}

static const sim_workload workloads[] = {
    {"fence", pmixsim_wl_fence_main,
     "[--iters N] [--size BYTES] [--check]  N barriers, or fences collecting BYTES"},
    {"hello", hello, "  examples/hello.c: Init, job size, a fence, one line per process"},
    {"bizcard", pmixsim_wl_bizcard_main,
     "full|sparse [--size BYTES]  examples/bizcard.c: business card exchange"},
    {"fence_bench", pmixsim_wl_fence_bench_main,
     "[--iters N] [--warmup N] [--collect-iters N] [--sizes LIST]  bench/fence_bench.c"},
    {"coords", pmixsim_wl_coords_main,
     "[--peer RANK] [--wait-update FENCES]  examples/coords.c: network coordinates"},
    {"jobkeys", jobkeys, "  examples/jobkeys.c: which reserved keys a process can read"},
    {"psets", pmixsim_wl_psets_main,
     "  examples/psets.c: its app's keys and the process sets (--pset NAME:COUNT)"},
    {"sessions", pmixsim_wl_sessions_main,
     "[PSET]  examples/sessions.c: MPI Sessions' steps, a group with a context id from "
     "a process set (--pset NAME:COUNT; without one, the whole job)"},
    {"group", pmixsim_wl_group_main,
     "[--iters N] [--size BYTES] [--check]  N group constructs (with a context id) and "
     "destructs of the whole job"},
    {"pubsub", pubsub,
     "  examples/pubsub.c's steps without sleep or threads: publish, lookups that wait, "
     "unpublish (node 0 holds the data service)"},
    {"spawn", pmixsim_wl_spawn_main,
     "[--procs N] [--size BYTES] [--from RANK] [--errors]  PMIx_Spawn of N processes that "
     "put, commit and fence (collecting); the report gives the start time and its formula"},
    {"events", pmixsim_wl_events_main,
     "[--range namespace|global] [--from RANK]  an event to every process on every node; the "
     "report gives its delivery time and formula"},
    {"invite", pmixsim_wl_invite_main,
     "[--from RANK] [--decline] [--leave]  PMIx_Group_invite of every process, answered from "
     "the PMIX_GROUP_INVITED handler (odd ranks decline with --decline), with a context id; "
     "the last member leaves with --leave"},
    {"seq", pmixsim_wl_seq_main,
     "STEP...  put:SIZE, fence[:collect,timeout=S,algo=NAME,parity], get:next|prev|RANK[:N]"},
};

const sim_workload *sim_workload_find(const char *name)
{
    for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
        if (strcmp(workloads[i].name, name) == 0)
            return &workloads[i];
    return NULL;
}

void sim_workload_list(FILE *f)
{
    for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
        fprintf(f, "%-12s %s\n", workloads[i].name, workloads[i].usage);
}
