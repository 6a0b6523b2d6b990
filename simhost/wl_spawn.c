/*
 * spawn - dynamic start-up as a workload: one process spawns a new job and
 * the new job starts as an MPI program's would (PMIx_Init, a put, a commit
 * and a collecting fence, PMIx_Finalize). Built for pmixsim, where the
 * spawned processes run this same workload.
 *
 *   spawn [--procs N] [--size BYTES] [--from RANK] [--errors]
 *
 * A process of the first job (no PMIX_SPAWNED in its job data): rank
 * RANK (0) first waits a simulated second (a lookup with PMIX_WAIT of a
 * key nobody publishes, timing out), so that the network is quiet when it
 * spawns; then it calls PMIx_Spawn of this workload with N processes (0,
 * the default: as many as its job) and prints the new namespace; with
 * --errors it first checks two spawns that must fail: a program that does
 * not exist (PMIX_ERR_JOB_EXE_NOT_FOUND) and more processes than the nodes
 * have slots (PMIX_ERR_OUT_OF_RESOURCE). Then it waits (a lookup with
 * PMIX_WAIT) for "spawn.started", which the new job's rank 0 publishes
 * once its first fence is done, and joins a barrier of the first job,
 * which the other ranks entered at once: nothing of the first job
 * crosses the network while the new one starts, and the first job ends
 * at one time (a process that ends while others run tells every node it
 * departed: ending together keeps that short).
 *
 * A spawned process checks PMIX_SPAWNED and PMIX_PARENT_ID, puts BYTES
 * (64) under "spawn.card", commits, fences with PMIX_COLLECT_DATA, reads
 * the next rank's card; rank 0 publishes "spawn.started"; all fence once
 * more (a barrier: they end together) and finalize.
 *
 * With --connect, the two jobs then connect (MPI_Comm_spawn's
 * intercommunicator): every process of the first job also puts a card
 * before it waits, and every process of both jobs calls PMIx_Connect of
 * the two namespaces (a group construct over both: an allgather among
 * the nodes of either, docs/simulation.md), reads a card of the other job
 * (a child the card of parent rank R mod the parent's size, a parent that
 * of child rank R mod the child's size, both from the connect's data),
 * and calls PMIx_Disconnect before the last barrier; the first job's
 * processes learn the new namespace from "spawn.started".
 *
 * Each process prints "spawn: ... ok" lines, or "FAIL: ..." lines and
 * exits 1. Like every workload, its state is in main's frame.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

/* --connect: connect this job (`mine`) with `other`, read the card of
 * rank `me->rank` mod the other job's size there, and disconnect. The
 * number of failures. */
static int connect_other(const pmix_proc_t *me, const char *other, size_t size)
{
    pmix_proc_t procs[2], peer;
    pmix_value_t *v = NULL;
    uint32_t osize = 0;
    pmix_status_t rc;
    int failures = 0;

    PMIx_Load_procid(&procs[0], me->nspace, PMIX_RANK_WILDCARD);
    PMIx_Load_procid(&procs[1], other, PMIX_RANK_WILDCARD);
    if ((rc = PMIx_Connect(procs, 2, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: %s rank %u: PMIx_Connect with %s: %s\n", me->nspace, me->rank, other,
               PMIx_Error_string(rc));
        return 1;
    }
    if ((rc = PMIx_Get(&procs[1], PMIX_JOB_SIZE, NULL, 0, &v)) == PMIX_SUCCESS && v != NULL &&
        v->type == PMIX_UINT32)
        osize = v->data.uint32;
    if (v != NULL)
        PMIx_Value_free(v, 1);
    v = NULL;
    if (osize == 0) {
        printf("FAIL: %s rank %u: the size of %s after the connect: %s\n", me->nspace, me->rank,
               other, PMIx_Error_string(rc));
        failures++;
    } else {
        PMIx_Load_procid(&peer, other, me->rank % osize);
        rc = PMIx_Get(&peer, "spawn.card", NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_STRING ||
            strlen(v->data.string) != size || v->data.string[0] != 'a' + (int)(peer.rank % 26)) {
            printf("FAIL: %s rank %u: the card of %s rank %u: %s\n", me->nspace, me->rank, other,
                   peer.rank, PMIx_Error_string(rc));
            failures++;
        }
        if (v != NULL)
            PMIx_Value_free(v, 1);
    }
    if ((rc = PMIx_Disconnect(procs, 2, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: %s rank %u: PMIx_Disconnect: %s\n", me->nspace, me->rank,
               PMIx_Error_string(rc));
        failures++;
    }
    if (failures == 0)
        printf("spawn: %s rank %u connected with %s (%u processes), read its rank %u: ok\n",
               me->nspace, me->rank, other, osize, me->rank % osize);
    return failures;
}

/* Put and commit this process's card: `size` bytes of a letter of its
 * rank. */
static pmix_status_t put_card(const pmix_proc_t *me, char *card, size_t size)
{
    pmix_value_t val;
    pmix_status_t rc;

    memset(card, 'a' + (int)(me->rank % 26), size);
    card[size] = '\0';
    val.type = PMIX_STRING;
    val.data.string = card;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "spawn.card", &val)) == PMIX_SUCCESS)
        rc = PMIx_Commit();
    return rc;
}

static int child(const pmix_proc_t *me, size_t size, bool conn)
{
    pmix_proc_t wild, peer;
    pmix_value_t *v = NULL;
    pmix_info_t info;
    bool yes = true;
    uint32_t nprocs = 1;
    char pns[PMIX_MAX_NSLEN + 1] = "";
    pmix_rank_t parent = PMIX_RANK_UNDEF;
    pmix_status_t rc;
    char *card = malloc(size + 1);
    int failures = 0;

    if (card == NULL)
        return 1;
    PMIx_Load_procid(&wild, me->nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        nprocs = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    if ((rc = PMIx_Get(&wild, PMIX_PARENT_ID, NULL, 0, &v)) != PMIX_SUCCESS || v == NULL ||
        v->type != PMIX_PROC) {
        printf("FAIL: %s rank %u: no PMIX_PARENT_ID: %s\n", me->nspace, me->rank,
               PMIx_Error_string(rc));
        failures++;
    } else {
        parent = v->data.proc->rank;
        snprintf(pns, sizeof(pns), "%s", v->data.proc->nspace);
    }
    if (v != NULL)
        PMIx_Value_free(v, 1);
    v = NULL;
    if ((rc = put_card(me, card, size)) != PMIX_SUCCESS) {
        printf("FAIL: %s rank %u: put/commit: %s\n", me->nspace, me->rank, PMIx_Error_string(rc));
        failures++;
    }
    PMIx_Info_load(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(&wild, 1, &info, 1);
    PMIx_Info_destruct(&info);
    if (rc != PMIX_SUCCESS) {
        printf("FAIL: %s rank %u: fence: %s\n", me->nspace, me->rank, PMIx_Error_string(rc));
        failures++;
    }
    PMIx_Load_procid(&peer, me->nspace, (me->rank + 1) % nprocs);
    if (rc == PMIX_SUCCESS) {
        rc = PMIx_Get(&peer, "spawn.card", NULL, 0, &v);
        if (rc != PMIX_SUCCESS || v == NULL || v->type != PMIX_STRING ||
            strlen(v->data.string) != size || v->data.string[0] != 'a' + (int)(peer.rank % 26)) {
            printf("FAIL: %s rank %u: the card of rank %u: %s\n", me->nspace, me->rank, peer.rank,
                   PMIx_Error_string(rc));
            failures++;
        }
        if (v != NULL)
            PMIx_Value_free(v, 1);
    }
    if (me->rank == 0) {
        PMIx_Info_load(&info, "spawn.started", me->nspace, PMIX_STRING);
        if ((rc = PMIx_Publish(&info, 1)) != PMIX_SUCCESS) {
            printf("FAIL: %s rank 0: PMIx_Publish: %s\n", me->nspace, PMIx_Error_string(rc));
            failures++;
        }
        PMIx_Info_destruct(&info);
    }
    if (conn && failures == 0)
        failures += connect_other(me, pns, size);
    if ((rc = PMIx_Fence(&wild, 1, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: %s rank %u: the last barrier: %s\n", me->nspace, me->rank,
               PMIx_Error_string(rc));
        failures++;
    }
    if (failures == 0)
        printf("spawn: %s rank %u of %u started, parent rank %u: ok\n", me->nspace, me->rank,
               nprocs, parent);
    free(card);
    PMIx_Finalize(NULL, 0);
    return failures == 0 ? 0 : 1;
}

/* A lookup of `key` that waits (PMIX_WAIT) up to `tmo` seconds; its
 * string value goes to `out` (`len` bytes) when out is not NULL. */
static pmix_status_t wait_value(const char *key, uint32_t tmo, char *out, size_t len)
{
    pmix_pdata_t pd;
    pmix_info_t info[2];
    bool yes = true;
    pmix_status_t rc;

    PMIx_Pdata_construct(&pd);
    PMIx_Load_key(pd.key, key);
    PMIx_Info_load(&info[0], PMIX_WAIT, &yes, PMIX_BOOL);
    PMIx_Info_load(&info[1], PMIX_TIMEOUT, &tmo, PMIX_UINT32);
    rc = PMIx_Lookup(&pd, 1, info, 2);
    if (rc == PMIX_SUCCESS && out != NULL) {
        if (pd.value.type == PMIX_STRING && pd.value.data.string != NULL)
            snprintf(out, len, "%s", pd.value.data.string);
        else
            rc = PMIX_ERR_BAD_PARAM;
    }
    PMIx_Pdata_destruct(&pd);
    PMIx_Info_destruct(&info[0]);
    PMIx_Info_destruct(&info[1]);
    return rc;
}

static pmix_status_t wait_for(const char *key, uint32_t tmo)
{
    return wait_value(key, tmo, NULL, 0);
}

/* Spawn `np` processes of `cmd` with argv `argv`; the namespace goes to ns. */
static pmix_status_t spawn(const char *cmd, char **argv, int np, char ns[PMIX_MAX_NSLEN + 1])
{
    pmix_app_t app;
    pmix_status_t rc;

    PMIx_App_construct(&app);
    app.cmd = strdup(cmd);
    app.argv = PMIx_Argv_copy(argv);
    app.maxprocs = np;
    rc = PMIx_Spawn(NULL, 0, &app, 1, ns);
    PMIx_App_destruct(&app);
    return rc;
}

int main(int argc, char **argv)
{
    pmix_proc_t me, wild;
    pmix_value_t *v = NULL;
    uint32_t size = 1;
    unsigned long bytes = 64;
    long procs = 0, from = 0;
    bool errors = false, spawned = false, conn = false;
    char kid[PMIX_MAX_NSLEN + 1] = "", *pcard = NULL;
    pmix_status_t rc;
    int failures = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--procs") == 0 && i + 1 < argc)
            procs = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            bytes = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc)
            from = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--errors") == 0)
            errors = true;
        else if (strcmp(argv[i], "--connect") == 0)
            conn = true;
        else {
            fprintf(stderr, "usage: spawn [--procs N] [--size BYTES] [--from RANK] [--errors] "
                            "[--connect]\n");
            return 1;
        }
    }
    if (procs < 0 || from < 0 || bytes == 0 || bytes > (1ul << 20)) {
        fprintf(stderr, "spawn: bad --procs, --from or --size\n");
        return 1;
    }
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "spawn: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_SPAWNED, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        spawned = v->type == PMIX_BOOL && v->data.flag;
        PMIx_Value_free(v, 1);
    }
    if (spawned)
        return child(&me, bytes, conn);
    v = NULL;
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        size = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    if (me.rank == (pmix_rank_t)from) {
        char ns[PMIX_MAX_NSLEN + 1] = "", sz[32];
        char *cargv[] = {"spawn", "--size", sz, conn ? "--connect" : NULL, NULL};
        snprintf(sz, sizeof(sz), "%lu", bytes);
        rc = wait_for("spawn.nobody", 1);
        if (rc != PMIX_ERR_TIMEOUT) {
            printf("FAIL: rank %u: the quiet second: %s\n", me.rank, PMIx_Error_string(rc));
            failures++;
        }
        if (errors) {
            rc = spawn("pmixsim-no-such-workload", cargv, 1, ns);
            printf("spawn: a program that does not exist: %s\n", PMIx_Error_string(rc));
            if (rc != PMIX_ERR_JOB_EXE_NOT_FOUND) {
                printf("FAIL: expected PMIX_ERR_JOB_EXE_NOT_FOUND\n");
                failures++;
            }
            rc = spawn("spawn", cargv, 1 << 30, ns);
            printf("spawn: more processes than slots: %s\n", PMIx_Error_string(rc));
            if (rc != PMIX_ERR_OUT_OF_RESOURCE) {
                printf("FAIL: expected PMIX_ERR_OUT_OF_RESOURCE\n");
                failures++;
            }
        }
        rc = spawn("spawn", cargv, (int)(procs > 0 ? procs : size), ns);
        if (rc != PMIX_SUCCESS) {
            printf("FAIL: rank %u: PMIx_Spawn: %s\n", me.rank, PMIx_Error_string(rc));
            failures++;
        } else {
            printf("spawn: rank %u spawned %s (%ld processes): ok\n", me.rank, ns,
                   procs > 0 ? procs : (long)size);
        }
    }
    if (conn && ((pcard = malloc(bytes + 1)) == NULL ||
                 (rc = put_card(&me, pcard, bytes)) != PMIX_SUCCESS)) {
        printf("FAIL: rank %u: put/commit\n", me.rank);
        failures++;
    }
    if ((me.rank == (pmix_rank_t)from || conn) && failures == 0 &&
        (rc = wait_value("spawn.started", 3600, kid, sizeof(kid))) != PMIX_SUCCESS) {
        printf("FAIL: rank %u: waiting for the new job: %s\n", me.rank, PMIx_Error_string(rc));
        failures++;
    }
    if (conn && failures == 0)
        failures += connect_other(&me, kid, bytes);
    free(pcard);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: rank %u: the last barrier: %s\n", me.rank, PMIx_Error_string(rc));
        failures++;
    }
    PMIx_Finalize(NULL, 0);
    return failures == 0 ? 0 : 1;
}
