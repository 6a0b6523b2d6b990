/*
 * pubsub.c - the Standard's name publishing: PMIx_Publish, PMIx_Lookup,
 * PMIx_Unpublish (and PMIx_Lookup_nb), as a launcher's data service
 * answers them.
 *
 *   1. Every rank but 0 looks up "pubsub-service" with PMIX_WAIT, before
 *      it exists; rank 0 publishes it a moment later, and each waiting
 *      lookup returns it with its publisher (rank 0).
 *   2. Rank 0 publishes it again: PMIX_ERR_DUPLICATE_KEY.
 *   3. Rank 1 looks up a key nobody publishes, with PMIX_WAIT and
 *      PMIX_TIMEOUT of 1 s: PMIX_ERR_TIMEOUT after about a second.
 *   4. Rank 1 tries to unpublish rank 0's key: PMIX_ERR_NO_PERMISSIONS.
 *   5. Rank 0 unpublishes it; then a lookup (PMIx_Lookup_nb) finds nothing.
 *
 * Each rank prints what it saw and "pubsub: rank R ok", or "FAIL: ..."
 * lines and exits 1. It needs a host with a data service (pmixrun has
 * one); a host without one answers PMIX_ERR_NOT_SUPPORTED, said as such.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <pmix.h>

#define SERVICE "pubsub-service"

static pmix_proc_t me;
static int failures;

static void fail(const char *what, pmix_status_t got, pmix_status_t want)
{
    printf("FAIL: rank %u: %s returned %s, expected %s\n", me.rank, what, PMIx_Error_string(got),
           PMIx_Error_string(want));
    failures++;
}

static void check(const char *what, pmix_status_t got, pmix_status_t want)
{
    if (got != want)
        fail(what, got, want);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fence(void)
{
    check("PMIx_Fence", PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
}

/* PMIx_Lookup_nb's answer, waited for on a condition variable. */
typedef struct nb_answer {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    pmix_status_t status;
    size_t n;
} nb_answer;

static void lookup_cb(pmix_status_t status, pmix_pdata_t data[], size_t ndata, void *cbdata)
{
    nb_answer *a = cbdata;

    pthread_mutex_lock(&a->mu);
    a->status = status;
    a->n = ndata;
    a->done = 1;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

int main(void)
{
    pmix_proc_t wild;
    pmix_value_t *v = NULL;
    uint32_t size = 1;
    pmix_status_t rc;
    char port[PMIX_MAX_NSLEN + 32];

    rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pubsub: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        size = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    snprintf(port, sizeof(port), "port-of-%s", me.nspace);

    /* 1. a lookup that waits for the key to be published */
    if (me.rank == 0) {
        struct timespec pause = {0, 200 * 1000 * 1000}; /* let the others ask first */
        nanosleep(&pause, NULL);
        pmix_info_t info;
        PMIx_Info_load(&info, SERVICE, port, PMIX_STRING);
        rc = PMIx_Publish(&info, 1);
        if (rc == PMIX_ERR_NOT_SUPPORTED) {
            printf("pubsub: this host has no data service (PMIX_ERR_NOT_SUPPORTED)\n");
            PMIx_Info_destruct(&info);
            PMIx_Finalize(NULL, 0);
            return 1;
        }
        check("PMIx_Publish", rc, PMIX_SUCCESS);
        /* 2. the same key again */
        check("PMIx_Publish of a published key", PMIx_Publish(&info, 1), PMIX_ERR_DUPLICATE_KEY);
        PMIx_Info_destruct(&info);
        printf("pubsub: rank 0 published %s=%s\n", SERVICE, port);
    } else {
        pmix_pdata_t pd;
        pmix_info_t wait[2];
        bool yes = true;
        uint32_t tmo = 20;
        PMIx_Pdata_construct(&pd);
        PMIx_Load_key(pd.key, SERVICE);
        PMIx_Info_load(&wait[0], PMIX_WAIT, &yes, PMIX_BOOL);
        PMIx_Info_load(&wait[1], PMIX_TIMEOUT, &tmo, PMIX_UINT32);
        rc = PMIx_Lookup(&pd, 1, wait, 2);
        check("PMIx_Lookup with PMIX_WAIT", rc, PMIX_SUCCESS);
        if (rc == PMIX_SUCCESS) {
            if (pd.value.type != PMIX_STRING || strcmp(pd.value.data.string, port) != 0 ||
                pd.proc.rank != 0 || !PMIx_Check_nspace(pd.proc.nspace, me.nspace)) {
                printf("FAIL: rank %u: the lookup returned the wrong value or publisher\n",
                       me.rank);
                failures++;
            } else {
                printf("pubsub: rank %u found %s=%s published by rank %u\n", me.rank, SERVICE,
                       pd.value.data.string, pd.proc.rank);
            }
        }
        PMIx_Pdata_destruct(&pd);
        PMIx_Info_destruct(&wait[0]);
        PMIx_Info_destruct(&wait[1]);
    }
    fence();

    if (me.rank == 1) {
        /* 3. a wait that runs out */
        pmix_pdata_t pd;
        pmix_info_t wait[2];
        bool yes = true;
        uint32_t tmo = 1;
        PMIx_Pdata_construct(&pd);
        PMIx_Load_key(pd.key, "pubsub-nobody");
        PMIx_Info_load(&wait[0], PMIX_WAIT, &yes, PMIX_BOOL);
        PMIx_Info_load(&wait[1], PMIX_TIMEOUT, &tmo, PMIX_UINT32);
        double t0 = now();
        rc = PMIx_Lookup(&pd, 1, wait, 2);
        double took = now() - t0;
        check("PMIx_Lookup of a key nobody publishes", rc, PMIX_ERR_TIMEOUT);
        if (took < 0.9 || took > 10) {
            printf("FAIL: rank 1: the lookup with PMIX_TIMEOUT 1 took %.2f s\n", took);
            failures++;
        } else {
            printf("pubsub: rank 1 waited %.1f s for a key nobody publishes: %s\n", took,
                   PMIx_Error_string(rc));
        }
        PMIx_Pdata_destruct(&pd);
        PMIx_Info_destruct(&wait[0]);
        PMIx_Info_destruct(&wait[1]);

        /* 4. not the owner */
        char *keys[] = {SERVICE, NULL};
        rc = PMIx_Unpublish(keys, NULL, 0);
        check("PMIx_Unpublish of rank 0's key", rc, PMIX_ERR_NO_PERMISSIONS);
        printf("pubsub: rank 1 may not unpublish rank 0's key: %s\n", PMIx_Error_string(rc));
    }
    fence();

    /* 5. the owner unpublishes; the key is gone */
    if (me.rank == 0) {
        char *keys[] = {SERVICE, NULL};
        check("PMIx_Unpublish", PMIx_Unpublish(keys, NULL, 0), PMIX_SUCCESS);
    }
    fence();
    if (me.rank == size - 1) {
        char *keys[] = {SERVICE, NULL};
        nb_answer a = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
        rc = PMIx_Lookup_nb(keys, NULL, 0, lookup_cb, &a);
        check("PMIx_Lookup_nb", rc, PMIX_SUCCESS);
        if (rc == PMIX_SUCCESS) {
            pthread_mutex_lock(&a.mu);
            while (!a.done)
                pthread_cond_wait(&a.cv, &a.mu);
            pthread_mutex_unlock(&a.mu);
            check("PMIx_Lookup_nb's answer after the unpublish", a.status, PMIX_ERR_NOT_FOUND);
            printf("pubsub: rank %u after the unpublish: %s\n", me.rank,
                   PMIx_Error_string(a.status));
        }
    }
    fence();

    if (failures == 0)
        printf("pubsub: rank %u ok\n", me.rank);
    PMIx_Finalize(NULL, 0);
    return failures == 0 ? 0 : 1;
}
