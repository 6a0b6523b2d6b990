/*
 * pubsub - examples/pubsub.c's steps as a workload: PMIx_Publish,
 * PMIx_Lookup and PMIx_Unpublish against the host's data service, with no
 * sleep, no thread and no clock, so that it runs in pmixsim (where only
 * PMIx calls take simulated time) and, built standalone as
 * pmixsim_pubsub, under pmixrun, printing the same lines.
 *
 *   1. Every rank but 0 looks up "pubsub-service" with PMIX_WAIT (and a
 *      PMIX_TIMEOUT of 20 s) before it exists. Rank 0 first looks up a
 *      key nobody publishes, with PMIX_WAIT and a PMIX_TIMEOUT of 1 s
 *      (PMIX_ERR_TIMEOUT), which lets the others' lookups reach the
 *      service first; then it publishes the key, and each waiting lookup
 *      returns it with its publisher (rank 0).
 *   2. Rank 0 publishes it again: PMIX_ERR_DUPLICATE_KEY.
 *   3. Rank 1 tries to unpublish rank 0's key: PMIX_ERR_NO_PERMISSIONS.
 *   4. Rank 0 unpublishes it; then the last rank's lookup finds nothing.
 *
 * Each rank prints what it saw and "pubsub: rank R ok", or "FAIL: ..."
 * lines and exits 1. Like every workload, its state is in main's frame.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <pmix.h>

#define SERVICE "pubsub-service"

static int check(const pmix_proc_t *me, const char *what, pmix_status_t got, pmix_status_t want)
{
    if (got == want)
        return 0;
    printf("FAIL: rank %u: %s returned %s, expected %s\n", me->rank, what, PMIx_Error_string(got),
           PMIx_Error_string(want));
    return 1;
}

/* A blocking lookup of `key` with PMIX_WAIT and a PMIX_TIMEOUT of `tmo`
 * seconds; the value found is copied into val (cap bytes). */
static pmix_status_t wait_for(const char *key, uint32_t tmo, char *val, size_t cap,
                              pmix_rank_t *publisher)
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
    if (rc == PMIX_SUCCESS) {
        snprintf(val, cap, "%s", pd.value.type == PMIX_STRING ? pd.value.data.string : "?");
        *publisher = pd.proc.rank;
    }
    PMIx_Pdata_destruct(&pd);
    PMIx_Info_destruct(&info[0]);
    PMIx_Info_destruct(&info[1]);
    return rc;
}

int main(void)
{
    pmix_proc_t me, wild;
    pmix_value_t *v = NULL;
    uint32_t size = 1;
    pmix_status_t rc;
    char port[PMIX_MAX_NSLEN + 32], got[PMIX_MAX_NSLEN + 32];
    char *keys[] = {SERVICE, NULL};
    pmix_rank_t publisher = PMIX_RANK_UNDEF;
    int failures = 0;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "pubsub: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &v) == PMIX_SUCCESS && v != NULL) {
        size = v->data.uint32;
        PMIx_Value_free(v, 1);
    }
    snprintf(port, sizeof(port), "port-of-%s", me.nspace);

    /* 1. lookups that wait for the key to be published */
    if (me.rank == 0) {
        pmix_info_t info;
        rc = wait_for("pubsub-nobody", 1, got, sizeof(got), &publisher);
        if (rc == PMIX_ERR_NOT_SUPPORTED) {
            printf("pubsub: this host has no data service (PMIX_ERR_NOT_SUPPORTED)\n");
            PMIx_Finalize(NULL, 0);
            return 1;
        }
        failures += check(&me, "PMIx_Lookup of a key nobody publishes", rc, PMIX_ERR_TIMEOUT);
        printf("pubsub: rank 0 waited for a key nobody publishes: %s\n", PMIx_Error_string(rc));
        PMIx_Info_load(&info, SERVICE, port, PMIX_STRING);
        failures += check(&me, "PMIx_Publish", PMIx_Publish(&info, 1), PMIX_SUCCESS);
        /* 2. the same key again */
        failures += check(&me, "PMIx_Publish of a published key", PMIx_Publish(&info, 1),
                          PMIX_ERR_DUPLICATE_KEY);
        PMIx_Info_destruct(&info);
        printf("pubsub: rank 0 published %s=%s\n", SERVICE, port);
    } else {
        rc = wait_for(SERVICE, 20, got, sizeof(got), &publisher);
        failures += check(&me, "PMIx_Lookup with PMIX_WAIT", rc, PMIX_SUCCESS);
        if (rc == PMIX_SUCCESS && (strcmp(got, port) != 0 || publisher != 0)) {
            printf("FAIL: rank %u: the lookup returned the wrong value or publisher\n", me.rank);
            failures++;
        } else if (rc == PMIX_SUCCESS) {
            printf("pubsub: rank %u found %s=%s published by rank %u\n", me.rank, SERVICE, got,
                   publisher);
        }
    }
    failures += check(&me, "PMIx_Fence", PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);

    /* 3. not the owner */
    if (me.rank == 1) {
        rc = PMIx_Unpublish(keys, NULL, 0);
        failures += check(&me, "PMIx_Unpublish of rank 0's key", rc, PMIX_ERR_NO_PERMISSIONS);
        printf("pubsub: rank 1 may not unpublish rank 0's key: %s\n", PMIx_Error_string(rc));
    }
    failures += check(&me, "PMIx_Fence", PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);

    /* 4. the owner unpublishes; the key is gone */
    if (me.rank == 0)
        failures += check(&me, "PMIx_Unpublish", PMIx_Unpublish(keys, NULL, 0), PMIX_SUCCESS);
    failures += check(&me, "PMIx_Fence", PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);
    if (me.rank == size - 1) {
        pmix_pdata_t pd;
        PMIx_Pdata_construct(&pd);
        PMIx_Load_key(pd.key, SERVICE);
        rc = PMIx_Lookup(&pd, 1, NULL, 0);
        failures += check(&me, "PMIx_Lookup after the unpublish", rc, PMIX_ERR_NOT_FOUND);
        printf("pubsub: rank %u after the unpublish: %s\n", me.rank, PMIx_Error_string(rc));
        PMIx_Pdata_destruct(&pd);
    }
    failures += check(&me, "PMIx_Fence", PMIx_Fence(NULL, 0, NULL, 0), PMIX_SUCCESS);

    if (failures == 0)
        printf("pubsub: rank %u ok\n", me.rank);
    PMIx_Finalize(NULL, 0);
    return failures == 0 ? 0 : 1;
}
