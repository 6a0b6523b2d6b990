/*
 * pmixrun_events.c - events that cross nodes in a pmixrun --nodes job.
 *
 * An event a client notifies with a range wider than its node (namespace,
 * session, global, custom) reaches the clients of its own node through the
 * server engine, which then hands it to the host (px_server_host's
 * notify_event). pmixd packs it (events_pack) and sends it to pmixrun
 * (PD_EVENT); pmixrun sends it on to every other daemon (PD_EVENT_FWD),
 * and each of them delivers it to its clients in range (events_deliver,
 * px_server_notify applies the range). pmixrun raises the job's own
 * events the same way: a rank that ended without finalizing
 * (PMIX_ERR_PROC_TERM_WO_SYNC) to the other nodes, and a PMIx_Abort
 * (PMIX_ERR_PROC_ABORTED) to every node. docs/pmixd.md says why the
 * events go through pmixrun rather than over the daemons' mesh.
 *
 * An event travels packed with PMIx_Data_pack: the status (PMIX_STATUS),
 * the source (PMIX_PROC), the range (PMIX_DATA_RANGE), u32 n and n infos.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmix.h>

#include "pmixrun.h"
#include "server/px_server.h"
#include "tcplink.h"

int events_pack(tl_buf *b, pmix_status_t status, const pmix_proc_t *source, pmix_data_range_t range,
                const pmix_info_t info[], size_t ninfo)
{
    pmix_data_buffer_t db;
    pmix_byte_object_t bo = {0};
    uint32_t n = (uint32_t)ninfo;
    pmix_status_t rc;

    PMIx_Data_buffer_construct(&db);
    rc = PMIx_Data_pack(NULL, &db, &status, 1, PMIX_STATUS);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &db, (void *)source, 1, PMIX_PROC);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &db, &range, 1, PMIX_DATA_RANGE);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_pack(NULL, &db, &n, 1, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && n > 0)
        rc = PMIx_Data_pack(NULL, &db, (void *)info, (int32_t)n, PMIX_INFO);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Data_unload(&db, &bo);
    if (rc == PMIX_SUCCESS)
        tl_put_bytes(b, bo.bytes, bo.size);
    PMIx_Byte_object_destruct(&bo);
    PMIx_Data_buffer_destruct(&db);
    return rc == PMIX_SUCCESS ? 0 : -1;
}

void events_deliver(job *j, const uint8_t *p, size_t len)
{
    tl_reader r = {.p = p, .left = len};
    size_t n = 0;
    const void *body = tl_get_bytes(&r, &n);
    pmix_data_buffer_t db;
    pmix_byte_object_t bo = {0};
    pmix_status_t status = 0, rc;
    pmix_proc_t source;
    pmix_data_range_t range = PMIX_RANGE_UNDEF;
    uint32_t ni = 0;
    pmix_info_t *info = NULL;
    int32_t cnt = 1;

    if (r.bad || !j->server_up || (bo.bytes = malloc(n > 0 ? n : 1)) == NULL)
        return;
    memcpy(bo.bytes, body, n);
    bo.size = n;
    PMIx_Data_buffer_construct(&db);
    PMIx_Data_load(&db, &bo);
    rc = PMIx_Data_unpack(NULL, &db, &status, &cnt, PMIX_STATUS);
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &db, &source, &cnt, PMIX_PROC);
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &db, &range, &cnt, PMIX_DATA_RANGE);
    if (rc == PMIX_SUCCESS && (cnt = 1))
        rc = PMIx_Data_unpack(NULL, &db, &ni, &cnt, PMIX_UINT32);
    if (rc == PMIX_SUCCESS && ni > n)
        rc = PMIX_ERR_UNPACK_FAILURE;
    if (rc == PMIX_SUCCESS && ni > 0) {
        if ((info = PMIx_Info_create(ni)) == NULL) {
            rc = PMIX_ERR_NOMEM;
        } else {
            cnt = (int32_t)ni;
            rc = PMIx_Data_unpack(NULL, &db, info, &cnt, PMIX_INFO);
        }
    }
    PMIx_Data_buffer_destruct(&db);
    if (rc == PMIX_SUCCESS) /* called from a watch: the engine lock is held */
        px_server_notify(j->srv, status, &source, range, info, ni);
    else
        fprintf(stderr, "pmixd %s: a malformed event from pmixrun, dropped\n", j->hostname);
    PMIx_Info_free(info, ni);
}

void spawn_notify_end(job *srvjob, const char *nspace, const pmix_proc_t *spawner, int worst)
{
    pmix_proc_t affected;
    PMIx_Load_procid(&affected, nspace, PMIX_RANK_WILDCARD);
    pmix_status_t term = worst == 0 ? PMIX_SUCCESS : PMIX_ERR_JOB_NON_ZERO_TERM;
    bool yes = true;
    pmix_info_t info[4];
    PMIx_Info_load(&info[0], PMIX_EVENT_AFFECTED_PROC, &affected, PMIX_PROC);
    PMIx_Info_load(&info[1], PMIX_JOB_TERM_STATUS, &term, PMIX_STATUS);
    PMIx_Info_load(&info[2], PMIX_EXIT_CODE, &worst, PMIX_INT);
    PMIx_Info_load(&info[3], PMIX_EVENT_NON_DEFAULT, &yes, PMIX_BOOL);
    /* the source is the job that ended */
    px_server_notify_proc(srvjob->srv, PMIX_EVENT_JOB_END, &affected, spawner, info, 4);
    for (int i = 0; i < 4; i++)
        PMIx_Info_destruct(&info[i]);
}
