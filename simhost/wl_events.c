/*
 * events - an event sent to the whole namespace or globally reaches every
 * process, on every node.
 *
 *   events [--range namespace|global] [--from RANK]
 *
 * Every process registers a handler for a code of its own (below
 * PMIX_EXTERNAL_ERR_BASE) and fences. Then the others wait (a lookup with
 * PMIX_WAIT of "events.sent", from the host's data service) while rank
 * RANK (0) waits a quiet simulated second (a lookup that times out),
 * notifies the event with the range (namespace by default) and a payload
 * naming it, and publishes "events.sent": so nothing else crosses the
 * network while the event travels, and its delivery time is its own.
 * Every process then reports whether its handler ran with the right
 * source and payload (the sender need not see its own event). Each process prints "events:
 * rank R got ... ok", or "FAIL: ..." and exits 1.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#define CODE (PMIX_EXTERNAL_ERR_BASE - 17)
#define PAYLOAD_KEY "events.payload"

typedef struct seen {
    int count;
    pmix_rank_t source;
    bool payload_ok;
} seen;

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    seen *s = NULL;

    for (size_t i = 0; i < ninfo; i++) {
        if (strcmp(info[i].key, PMIX_EVENT_RETURN_OBJECT) == 0 &&
            info[i].value.type == PMIX_POINTER)
            s = info[i].value.data.ptr;
    }
    if (s != NULL && status == CODE) {
        s->count++;
        s->source = source->rank;
        for (size_t i = 0; i < ninfo; i++)
            if (strcmp(info[i].key, PAYLOAD_KEY) == 0 && info[i].value.type == PMIX_STRING &&
                strcmp(info[i].value.data.string, "hello-from-the-sender") == 0)
                s->payload_ok = true;
    }
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* A lookup of `key` that waits (PMIX_WAIT) up to `tmo` seconds. */
static pmix_status_t wait_for(const char *key, uint32_t tmo)
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
    PMIx_Pdata_destruct(&pd);
    PMIx_Info_destruct(&info[0]);
    PMIx_Info_destruct(&info[1]);
    return rc;
}

int main(int argc, char **argv)
{
    pmix_proc_t me;
    pmix_status_t rc, code = CODE;
    pmix_data_range_t range = PMIX_RANGE_NAMESPACE;
    pmix_info_t reg, payload;
    seen s = {0, PMIX_RANK_UNDEF, false};
    long from = 0;
    int failures = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--range") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "namespace") == 0)
                range = PMIX_RANGE_NAMESPACE;
            else if (strcmp(argv[i], "global") == 0)
                range = PMIX_RANGE_GLOBAL;
            else {
                fprintf(stderr, "events: --range namespace|global\n");
                return 1;
            }
        } else if (strcmp(argv[i], "--from") == 0 && i + 1 < argc) {
            from = strtol(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: events [--range namespace|global] [--from RANK]\n");
            return 1;
        }
    }
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "events: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    /* the handler finds its state through PMIX_EVENT_RETURN_OBJECT */
    PMIx_Info_load(&reg, PMIX_EVENT_RETURN_OBJECT, &s, PMIX_POINTER);
    rc = PMIx_Register_event_handler(&code, 1, &reg, 1, handler, NULL, NULL);
    if (rc < 0) {
        printf("FAIL: rank %u: PMIx_Register_event_handler: %s\n", me.rank, PMIx_Error_string(rc));
        failures++;
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: rank %u: fence: %s\n", me.rank, PMIx_Error_string(rc));
        failures++;
    }
    if (me.rank == (pmix_rank_t)from) {
        if ((rc = wait_for("events.nobody", 1)) != PMIX_ERR_TIMEOUT) {
            printf("FAIL: rank %u: the quiet second: %s\n", me.rank, PMIx_Error_string(rc));
            failures++;
        }
        PMIx_Info_load(&payload, PAYLOAD_KEY, "hello-from-the-sender", PMIX_STRING);
        rc = PMIx_Notify_event(CODE, &me, range, &payload, 1, NULL, NULL);
        PMIx_Info_destruct(&payload);
        if (rc != PMIX_SUCCESS) {
            printf("FAIL: rank %u: PMIx_Notify_event: %s\n", me.rank, PMIx_Error_string(rc));
            failures++;
        }
    }
    if (me.rank == (pmix_rank_t)from) {
        PMIx_Info_load(&payload, "events.sent", "yes", PMIX_STRING);
        if ((rc = PMIx_Publish(&payload, 1)) != PMIX_SUCCESS) {
            printf("FAIL: rank %u: PMIx_Publish: %s\n", me.rank, PMIx_Error_string(rc));
            failures++;
        }
        PMIx_Info_destruct(&payload);
    } else if ((rc = wait_for("events.sent", 3600)) != PMIX_SUCCESS) {
        printf("FAIL: rank %u: waiting for the sender: %s\n", me.rank, PMIx_Error_string(rc));
        failures++;
    }
    /* every process leaves together: the last one's handler ran */
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        printf("FAIL: rank %u: fence: %s\n", me.rank, PMIx_Error_string(rc));
        failures++;
    }
    if (me.rank != (pmix_rank_t)from) {
        if (s.count != 1 || s.source != (pmix_rank_t)from || !s.payload_ok) {
            printf("FAIL: rank %u: the event: %d time(s), source %u, payload %s\n", me.rank,
                   s.count, s.source, s.payload_ok ? "ok" : "wrong");
            failures++;
        } else {
            printf("events: rank %u got the event from rank %u (range %s): ok\n", me.rank, s.source,
                   PMIx_Data_range_string(range));
        }
    }
    PMIx_Info_destruct(&reg);
    PMIx_Finalize(NULL, 0);
    return failures == 0 ? 0 : 1;
}
