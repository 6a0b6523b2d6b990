/*
 * spawn.c - dynamic processes: PMIx_Spawn, then PMIx_Connect across the
 * two namespaces, then PMIx_Disconnect.
 *
 * Run it as a job of two or more ranks (`pmixrun -n 2 spawn`). Rank 0
 * first tries two spawns that must fail (a program that does not exist, a
 * host that is not in the job), then spawns two copies of this program
 * (argument "child") with PMIX_NOTIFY_COMPLETION, and shares the new
 * namespace with its job through a fence. Each child checks PMIX_SPAWNED
 * and PMIX_PARENT_ID in its job data, fences with its sibling, reads the
 * sibling's key and says which host it runs on. Then every process of both jobs
 * connects the two namespaces, and reads a key that a process of the other
 * job committed before the connect; then they disconnect. Rank 0 last
 * waits for PMIX_EVENT_JOB_END of the children's job. One "ok" line per
 * process; "FAIL:" lines and a non-zero exit otherwise. Under a host that
 * does not spawn (PMIX_ERR_NOT_SUPPORTED), each rank says so and exits 0.
 *
 * `spawn toomany N`: rank 0 asks for N children, more than the free
 * slots, and expects PMIX_ERR_OUT_OF_RESOURCE at once.
 *
 * `spawn connect` spawns nothing: the ranks of even and of odd number
 * each connect among themselves (listed rank by rank, in an order of
 * their own), read a key their peer committed before, and disconnect;
 * then the whole namespace connects and disconnects twice, as its
 * wildcard. With `pmixrun --nodes 2 -n 4` each set spans both nodes.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

static pmix_proc_t me;
static int failures;
static volatile int job_end_seen;
static volatile int job_end_code = -1;
static pmix_nspace_t job_end_ns;

#define FAIL(...)                                           \
    do {                                                    \
        printf("spawn: FAIL: %s:%u: ", me.nspace, me.rank); \
        printf(__VA_ARGS__);                                \
        printf("\n");                                       \
        failures++;                                         \
    } while (0)

static void on_job_end(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIx_Check_key(info[i].key, PMIX_EVENT_AFFECTED_PROC) &&
            info[i].value.type == PMIX_PROC)
            PMIx_Load_nspace(job_end_ns, info[i].value.data.proc->nspace);
        if (PMIx_Check_key(info[i].key, PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT)
            job_end_code = info[i].value.data.integer;
    }
    job_end_seen = 1;
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* Spawn `cmd` (with `host` as PMIX_HOST if not NULL); the status. */
static int nchildren = 2; /* how many copies try_spawn asks for */

static pmix_status_t try_spawn(const char *cmd, const char *host, bool notify, pmix_nspace_t ns)
{
    pmix_app_t app;
    pmix_info_t info[2];
    size_t ninfo = 0;
    char *argv[] = {(char *)cmd, "child", NULL};

    memset(&app, 0, sizeof(app));
    app.cmd = (char *)cmd;
    app.argv = argv;
    app.maxprocs = nchildren;
    if (host != NULL)
        PMIx_Info_load(&info[ninfo++], PMIX_HOST, host, PMIX_STRING);
    if (notify)
        PMIx_Info_load(&info[ninfo++], PMIX_NOTIFY_COMPLETION, &notify, PMIX_BOOL);
    pmix_status_t rc = PMIx_Spawn(ninfo > 0 ? info : NULL, ninfo, &app, 1, ns);
    for (size_t i = 0; i < ninfo; i++)
        PMIx_Info_destruct(&info[i]);
    return rc;
}

static void put_str(const char *key, const char *v)
{
    pmix_value_t val;

    PMIx_Value_load(&val, v, PMIX_STRING);
    if (PMIx_Put(PMIX_GLOBAL, key, &val) != PMIX_SUCCESS)
        FAIL("put %s", key);
    PMIx_Value_destruct(&val);
}

/* The string `key` of proc (ns, rank), or NULL. */
static char *get_str(const char *ns, pmix_rank_t rank, const char *key)
{
    pmix_proc_t p;
    pmix_value_t *v = NULL;
    char *s = NULL;

    PMIx_Load_procid(&p, ns, rank);
    pmix_status_t rc = PMIx_Get(&p, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_STRING) {
        FAIL("get %s of %s:%u: %s", key, ns, rank, PMIx_Error_string(rc));
    } else {
        s = strdup(v->data.string);
    }
    if (v != NULL)
        PMIx_Value_free(v, 1);
    return s;
}

static void connect_both(const char *parent_ns, const char *child_ns, const char *peer_ns,
                         pmix_rank_t peer, const char *want)
{
    pmix_proc_t procs[2];

    PMIx_Load_procid(&procs[0], parent_ns, PMIX_RANK_WILDCARD);
    PMIx_Load_procid(&procs[1], child_ns, PMIX_RANK_WILDCARD);
    pmix_status_t rc = PMIx_Connect(procs, 2, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        FAIL("connect: %s", PMIx_Error_string(rc));
        return;
    }
    char *got = get_str(peer_ns, peer, "spawn.word");
    if (got != NULL && strcmp(got, want) != 0)
        FAIL("%s:%u's word is '%s', not '%s'", peer_ns, peer, got, want);
    free(got);
    if ((rc = PMIx_Disconnect(procs, 2, NULL, 0)) != PMIX_SUCCESS)
        FAIL("disconnect: %s", PMIx_Error_string(rc));
}

static int run_child(void)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    bool spawned = false;
    pmix_proc_t parent;

    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_SPAWNED, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_BOOL)
        spawned = v->data.flag;
    if (v != NULL)
        PMIx_Value_free(v, 1);
    if (!spawned)
        FAIL("PMIX_SPAWNED is not true");
    v = NULL;
    memset(&parent, 0, sizeof(parent));
    if (PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_PROC)
        parent = *v->data.proc;
    if (v != NULL)
        PMIx_Value_free(v, 1);
    if (parent.nspace[0] == '\0' || parent.rank != 0)
        FAIL("PMIX_PARENT_ID is '%s':%u, not rank 0 of the spawner", parent.nspace, parent.rank);
    char word[64];
    snprintf(word, sizeof word, "child-%u", me.rank);
    put_str("spawn.word", word);
    PMIx_Commit();
    /* among the children: a fence of their namespace, then a sibling's
     * word (under pmixrun --nodes, on another node) */
    pmix_status_t rc = PMIx_Fence(&wild, 1, NULL, 0);
    if (rc != PMIX_SUCCESS)
        FAIL("fence of the children: %s", PMIx_Error_string(rc));
    char want[64];
    snprintf(want, sizeof want, "child-%u", me.rank ^ 1);
    char *got = get_str(me.nspace, me.rank ^ 1, "spawn.word");
    if (got != NULL && strcmp(got, want) != 0)
        FAIL("sibling %u's word is '%s'", me.rank ^ 1, got);
    free(got);
    char *host = get_str(me.nspace, me.rank, PMIX_HOSTNAME);
    if (host != NULL)
        printf("spawn: child %u runs on %s\n", me.rank, host);
    free(host);
    /* the spawner's rank 1 (or 0) committed its word before the connect */
    connect_both(parent.nspace, me.nspace, parent.nspace, 0, "parent-0");
    if (failures == 0)
        printf("spawn: child %u ok, parent %s\n", me.rank, parent.nspace);
    return failures;
}

static int run_connect(void)
{
    pmix_proc_t wild, procs[64];
    pmix_value_t *v = NULL;
    uint32_t size = 0;
    size_t n = 0;
    pmix_status_t rc;

    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_UINT32)
        size = v->data.uint32;
    if (v != NULL)
        PMIx_Value_free(v, 1);
    if (size < 2 || size > 64) {
        FAIL("run me with 2 to 64 ranks, not %u", size);
        return failures;
    }
    char word[64];
    snprintf(word, sizeof word, "word-%u", me.rank);
    put_str("spawn.word", word);
    PMIx_Commit();
    /* my parity's ranks, from me upwards, then the ones below me: each
     * member names them in its own order */
    for (uint32_t r = me.rank; r < size; r += 2)
        PMIx_Load_procid(&procs[n++], me.nspace, (pmix_rank_t)r);
    for (uint32_t r = me.rank % 2; r < me.rank; r += 2)
        PMIx_Load_procid(&procs[n++], me.nspace, (pmix_rank_t)r);
    pmix_rank_t peer = (me.rank + 2) % size;
    if (peer % 2 != me.rank % 2)
        peer = me.rank; /* an odd size's last rank may be alone in its parity */
    if ((rc = PMIx_Connect(procs, n, NULL, 0)) != PMIX_SUCCESS) {
        FAIL("connect of my parity: %s", PMIx_Error_string(rc));
        return failures;
    }
    char want[64];
    snprintf(want, sizeof want, "word-%u", peer);
    char *got = get_str(me.nspace, peer, "spawn.word");
    if (got != NULL && strcmp(got, want) != 0)
        FAIL("rank %u's word is '%s'", peer, got);
    free(got);
    if ((rc = PMIx_Disconnect(procs, n, NULL, 0)) != PMIX_SUCCESS)
        FAIL("disconnect of my parity: %s", PMIx_Error_string(rc));
    for (int round = 0; round < 2; round++) {
        if ((rc = PMIx_Connect(&wild, 1, NULL, 0)) != PMIX_SUCCESS)
            FAIL("connect of the namespace (round %d): %s", round, PMIx_Error_string(rc));
        else if ((rc = PMIx_Disconnect(&wild, 1, NULL, 0)) != PMIX_SUCCESS)
            FAIL("disconnect of the namespace (round %d): %s", round, PMIx_Error_string(rc));
    }
    if (failures == 0)
        printf("spawn: rank %u connect ok\n", me.rank);
    return failures;
}

int main(int argc, char **argv)
{
    pmix_status_t rc;
    pmix_nspace_t child_ns;
    char self[4096];

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "spawn: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (argc > 1 && (strcmp(argv[1], "child") == 0 || strcmp(argv[1], "connect") == 0)) {
        int f = argv[1][1] == 'h' ? run_child() : run_connect();
        PMIx_Finalize(NULL, 0);
        return f == 0 ? 0 : 1;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    if (argc > 2 && strcmp(argv[1], "toomany") == 0) {
        /* rank 0 asks for more children than there are free slots: the
         * spawn fails at once with PMIX_ERR_OUT_OF_RESOURCE */
        nchildren = atoi(argv[2]);
        if (me.rank == 0 &&
            (rc = try_spawn(self, NULL, false, child_ns)) != PMIX_ERR_OUT_OF_RESOURCE)
            FAIL("spawn of %d children: %s", nchildren, PMIx_Error_string(rc));
        /* every rank still runs (holds its slot) until rank 0 has its answer */
        if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
            FAIL("fence: %s", PMIx_Error_string(rc));
        if (failures == 0)
            printf("spawn: rank %u toomany ok\n", me.rank);
        PMIx_Finalize(NULL, 0);
        return failures == 0 ? 0 : 1;
    }
    char word[64];
    snprintf(word, sizeof word, "parent-%u", me.rank);
    put_str("spawn.word", word);
    if (me.rank == 0) {
        pmix_status_t code = PMIX_EVENT_JOB_END;
        PMIx_Register_event_handler(&code, 1, NULL, 0, on_job_end, NULL, NULL);
        rc = try_spawn("/nonexistent/spawn-me", NULL, false, child_ns);
        if (rc == PMIX_ERR_NOT_SUPPORTED) {
            /* a host that does not spawn: every rank
             * says so and ends */
            put_str("spawn.child", "none");
        } else {
            if (rc != PMIX_ERR_JOB_EXE_NOT_FOUND)
                FAIL("spawn of a missing program: %s", PMIx_Error_string(rc));
            rc = try_spawn(self, "no-such-host.invalid", false, child_ns);
            if (rc != PMIX_ERR_OUT_OF_RESOURCE)
                FAIL("spawn on another host: %s", PMIx_Error_string(rc));
            rc = try_spawn(self, NULL, true, child_ns);
            if (rc != PMIX_SUCCESS) {
                FAIL("spawn: %s", PMIx_Error_string(rc));
                PMIx_Abort(1, "spawn failed", NULL, 0);
            }
            put_str("spawn.child", child_ns);
            printf("spawn: rank 0 spawned %s\n", child_ns);
        }
    }
    PMIx_Commit();
    pmix_proc_t wild;
    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t collect;
    bool yes = true;
    PMIx_Info_load(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if ((rc = PMIx_Fence(&wild, 1, &collect, 1)) != PMIX_SUCCESS)
        FAIL("fence: %s", PMIx_Error_string(rc));
    char *cns = get_str(me.nspace, 0, "spawn.child");
    if (cns == NULL || strcmp(cns, "none") == 0) {
        if (cns != NULL && failures == 0)
            printf("spawn: rank %u: PMIx_Spawn is not supported here\n", me.rank);
        free(cns);
        PMIx_Finalize(NULL, 0);
        return cns == NULL || failures > 0 ? 1 : 0;
    }
    /* the child job's size, from the server's copy of its job data */
    pmix_proc_t cw;
    pmix_value_t *v = NULL;
    PMIx_Load_procid(&cw, cns, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Get(&cw, PMIX_JOB_SIZE, NULL, 0, &v)) != PMIX_SUCCESS ||
        v->type != PMIX_UINT32 || v->data.uint32 != 2)
        FAIL("the spawned job's size: %s", PMIx_Error_string(rc));
    if (v != NULL)
        PMIx_Value_free(v, 1);
    pmix_rank_t peer = me.rank % 2;
    char want[64];
    snprintf(want, sizeof want, "child-%u", peer);
    connect_both(me.nspace, cns, cns, peer, want);
    if (me.rank == 0) {
        for (int i = 0; i < 1000 && !job_end_seen; i++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (!job_end_seen)
            FAIL("no PMIX_EVENT_JOB_END for %s within 10 s", cns);
        else if (strcmp(job_end_ns, cns) != 0 || job_end_code != 0)
            FAIL("PMIX_EVENT_JOB_END for '%s' exit code %d", job_end_ns, job_end_code);
    }
    if (failures == 0)
        printf("spawn: rank %u ok, child %s\n", me.rank, cns);
    free(cns);
    PMIx_Finalize(NULL, 0);
    return failures == 0 ? 0 : 1;
}
