/*
 * jobkeys - which of the Standard's reserved keys a process can read right
 * after PMIx_Init: job keys, this node's keys, the first app's keys, its
 * own keys and a peer's. Rank 0 prints one line per key, "LEVEL KEY" when
 * it reads it and "LEVEL KEY: not found" when it does not, in a fixed
 * order; values are left out, so the lines are the same on any host that
 * gives the same keys (pmixrun -n 4 and pmixsim --nodes 2 --ppn 2 hello
 * print the same ones). Keys that only a real machine has (directories,
 * cpusets, locality) come last, as "host KEY".
 *
 *   pmixrun -n 4 jobkeys
 *   pmixsim --nodes 2 --ppn 2 jobkeys
 *
 * Standard API only; keeps no writable globals (it runs in pmixsim too).
 */
#include <stdio.h>
#include <string.h>

#include <pmix.h>

typedef struct key {
    const char *name, *key;
} key;
#define K(k)  \
    {         \
#k, k \
    }

static const key job_keys[] = {
    K(PMIX_JOBID),        K(PMIX_JOB_SIZE),  K(PMIX_UNIV_SIZE), K(PMIX_MAX_PROCS),
    K(PMIX_JOB_NUM_APPS), K(PMIX_NUM_NODES), K(PMIX_NODE_LIST), K(PMIX_NODE_MAP),
    K(PMIX_PROC_MAP),     K(PMIX_MAPBY),     K(PMIX_BINDTO),    K(PMIX_LOCAL_SIZE),
    K(PMIX_LOCAL_PEERS),  K(PMIX_LOCALLDR),  K(PMIX_HOSTNAME),  K(PMIX_NODEID),
};
static const key node_keys[] = {
    K(PMIX_HOSTNAME),   K(PMIX_NODEID),      K(PMIX_NODE_SIZE),
    K(PMIX_LOCAL_SIZE), K(PMIX_LOCAL_PEERS), K(PMIX_LOCALLDR),
};
static const key app_keys[] = {K(PMIX_APP_SIZE), K(PMIX_APPLDR), K(PMIX_WDIR), K(PMIX_APP_ARGV)};
static const key proc_keys[] = {
    K(PMIX_LOCAL_RANK), K(PMIX_NODE_RANK), K(PMIX_GLOBAL_RANK), K(PMIX_APPNUM),
    K(PMIX_APP_RANK),   K(PMIX_NODEID),    K(PMIX_HOSTNAME),
};
/* Facts of a real machine: a simulated one has no directories or cpus. */
static const key host_keys[] = {K(PMIX_TMPDIR), K(PMIX_NSDIR)};
static const key host_proc_keys[] = {K(PMIX_PROCDIR), K(PMIX_LOCALITY_STRING), K(PMIX_CPUSET)};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void try_get(const char *level, const pmix_proc_t *proc, const key *k,
                    const pmix_info_t *info, size_t ninfo)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(proc, k->key, info, ninfo, &v);

    if (rc == PMIX_SUCCESS) {
        printf("%s %s\n", level, k->name);
        PMIx_Value_free(v, 1);
    } else {
        printf("%s %s: %s\n", level, k->name,
               rc == PMIX_ERR_NOT_FOUND ? "not found" : PMIx_Error_string(rc));
    }
}

int main(void)
{
    pmix_proc_t me, job, peer;
    pmix_value_t *v = NULL;
    pmix_info_t qual[2];
    uint32_t size = 0, nodeid = 0, appnum = 0;
    bool yes = true;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);

    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "jobkeys: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Load_procid(&job, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        size = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    v = NULL;
    if (PMIx_Get(&me, PMIX_NODEID, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        nodeid = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    if (me.rank == 0) {
        for (size_t i = 0; i < N(job_keys); i++)
            try_get("job", &job, &job_keys[i], NULL, 0);
        PMIx_Info_load(&qual[0], PMIX_NODE_INFO, &yes, PMIX_BOOL);
        PMIx_Info_load(&qual[1], PMIX_NODEID, &nodeid, PMIX_UINT32);
        for (size_t i = 0; i < N(node_keys); i++)
            try_get("node", &job, &node_keys[i], qual, 2);
        PMIx_Info_destruct(&qual[0]);
        PMIx_Info_destruct(&qual[1]);
        PMIx_Info_load(&qual[0], PMIX_APP_INFO, &yes, PMIX_BOOL);
        PMIx_Info_load(&qual[1], PMIX_APPNUM, &appnum, PMIX_UINT32);
        for (size_t i = 0; i < N(app_keys); i++)
            try_get("app", &job, &app_keys[i], qual, 2);
        PMIx_Info_destruct(&qual[0]);
        PMIx_Info_destruct(&qual[1]);
        for (size_t i = 0; i < N(proc_keys); i++)
            try_get("proc", &me, &proc_keys[i], NULL, 0);
        PMIx_Load_procid(&peer, me.nspace, size > 1 ? size - 1 : 0);
        for (size_t i = 0; i < N(proc_keys); i++)
            try_get("peer", &peer, &proc_keys[i], NULL, 0);
        for (size_t i = 0; i < N(host_keys); i++)
            try_get("host", &job, &host_keys[i], NULL, 0);
        for (size_t i = 0; i < N(host_proc_keys); i++)
            try_get("host", &me, &host_proc_keys[i], NULL, 0);
        fflush(stdout);
    }
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    if (rc != PMIX_SUCCESS)
        fprintf(stderr, "jobkeys: rank %u: PMIx_Fence failed: %s\n", me.rank,
                PMIx_Error_string(rc));
    PMIx_Finalize(NULL, 0);
    return rc == PMIX_SUCCESS ? 0 : 1;
}
