/*
 * bizcard - the business card exchange of the PMIx Standard's use cases
 * ("Business Card Exchange for Process-to-Process Wire-up").
 *
 *     bizcard full|sparse [--size BYTES]
 *
 * A communication library must tell its peers how to reach it before it can
 * talk to them. Each process publishes a "business card" with PMIx_Put,
 * hands its puts to the local server with PMIx_Commit, and then peers read
 * the cards with PMIx_Get. The two modes are the two ways of moving cards:
 *
 *   full    PMIx_Fence with PMIX_COLLECT_DATA: the fence itself exchanges all
 *           committed data, so every card is local when the fence returns.
 *           Good when every process talks to every other one.
 *   sparse  a plain PMIx_Fence (a barrier; by default a fence moves no data),
 *           then each PMIx_Get pulls the one card it asks for from the server
 *           that holds it ("direct modex"). Good when processes talk to few
 *           peers; here every peer is read so the two modes can be compared.
 *
 * Besides the card (PMIX_GLOBAL: for everyone) each process posts one key per
 * other scope, to show what scopes are for: a shared-memory name with
 * PMIX_LOCAL (only processes on the same node can use it) and a network
 * address with PMIX_REMOTE (only processes on other nodes need it). A reader
 * asks a peer for the key that matches where the peer is (PMIX_LOCAL_PEERS
 * says which peers share our node).
 *
 * Every card carries its writer's rank and a byte pattern derived from it,
 * so each reader verifies every card it gets. Rank 0 prints one summary line
 * for the job; the program exits non-zero on any mismatch.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, strdup */

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmix.h>

#define GET_TIMEOUT 30 /* seconds; the Standard advises a timeout on such Gets */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fail(const pmix_proc_t *me, const char *call, pmix_status_t rc)
{
    fprintf(stderr, "bizcard: rank %u: %s failed: %s\n", me->rank, call, PMIx_Error_string(rc));
}

/* The card of `rank`: a readable header naming the writer, then a pattern
 * that depends on the writer, up to `size` bytes. */
static void make_card(char *card, size_t size, pmix_rank_t rank)
{
    int n = snprintf(card, size, "bizcard of rank %u;", rank);
    for (size_t i = (size_t)n + 1; i < size; i++)
        card[i] = (char)((rank * 131u + i * 7u + 3u) & 0xff);
}

static bool card_matches(const pmix_value_t *v, size_t size, pmix_rank_t rank)
{
    if (v->type != PMIX_BYTE_OBJECT || v->data.bo.size != size)
        return false;
    char *want = malloc(size);
    if (want == NULL)
        return false;
    make_card(want, size, rank);
    bool ok = memcmp(want, v->data.bo.bytes, size) == 0;
    free(want);
    return ok;
}

/* Is `rank` in the comma-separated PMIX_LOCAL_PEERS list? */
static bool is_local(const char *peers, pmix_rank_t rank)
{
    for (const char *p = peers; *p != '\0';) {
        char *end;
        unsigned long r = strtoul(p, &end, 10);
        if (end == p)
            return false;
        if ((pmix_rank_t)r == rank)
            return true;
        p = *end == ',' ? end + 1 : end;
    }
    return false;
}

/* Get a key of `peer` (with a timeout) and compare a string value. Returns
 * true if it matches; prints why not otherwise. */
static bool check_string(const pmix_proc_t *me, const pmix_proc_t *peer, const char *key,
                         const char *want)
{
    pmix_info_t info;
    int timeout = GET_TIMEOUT;
    pmix_value_t *val = NULL;
    PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout, PMIX_INT);
    pmix_status_t rc = PMIx_Get(peer, key, &info, 1, &val);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "bizcard: rank %u: PMIx_Get(%s of rank %u) failed: %s\n", me->rank, key,
                peer->rank, PMIx_Error_string(rc));
        return false;
    }
    bool ok = val->type == PMIX_STRING && strcmp(val->data.string, want) == 0;
    if (!ok)
        fprintf(stderr, "bizcard: rank %u: %s of rank %u is wrong (expected \"%s\")\n", me->rank,
                key, peer->rank, want);
    PMIX_VALUE_RELEASE(val);
    return ok;
}

static void shm_name(char *buf, size_t len, const char *nspace, pmix_rank_t rank)
{
    snprintf(buf, len, "shm:/bizcard-%s-%u", nspace, rank);
}

static void net_addr(char *buf, size_t len, pmix_rank_t rank)
{
    snprintf(buf, len, "tcp://node-of-rank-%u:%u", rank, 20000 + rank);
}

static void usage(void)
{
    fprintf(stderr, "usage: bizcard full|sparse [--size BYTES]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    pmix_proc_t myproc; /* no globals: pmixsim runs many copies in one process */
    bool full;
    size_t size = 256;
    pmix_status_t rc;

    if (argc < 2)
        usage();
    if (strcmp(argv[1], "full") == 0)
        full = true;
    else if (strcmp(argv[1], "sparse") == 0)
        full = false;
    else
        usage();
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = strtoull(argv[++i], NULL, 10);
        else
            usage();
    }
    if (size < 32)
        size = 32; /* room for the header */

    /* 1. Connect. Job-level information is available at once, without any
     *    exchange: job size and which ranks share our node. */
    rc = PMIx_Init(&myproc, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "bizcard: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_proc_t job;
    PMIX_PROC_LOAD(&job, myproc.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *val = NULL;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val->type != PMIX_UINT32) {
        fail(&myproc, "PMIx_Get(PMIX_JOB_SIZE)", rc);
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    uint32_t nprocs = val->data.uint32;
    PMIX_VALUE_RELEASE(val);
    rc = PMIx_Get(&job, PMIX_LOCAL_PEERS, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val->type != PMIX_STRING) {
        fail(&myproc, "PMIx_Get(PMIX_LOCAL_PEERS)", rc);
        PMIx_Finalize(NULL, 0);
        return 1;
    }
    char *local_peers = strdup(val->data.string);
    PMIX_VALUE_RELEASE(val);

    /* 2. Post our card and our scoped keys. PMIx_Put copies the value, so
     *    the buffers can be reused at once. Nothing leaves the process yet. */
    char *card = malloc(size);
    char text[512];
    if (card == NULL || local_peers == NULL) {
        fprintf(stderr, "bizcard: out of memory\n");
        return 1;
    }
    make_card(card, size, myproc.rank);
    pmix_value_t v;
    memset(&v, 0, sizeof v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = card;
    v.data.bo.size = size;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "bizcard.card", &v)) != PMIX_SUCCESS) {
        fail(&myproc, "PMIx_Put(PMIX_GLOBAL, bizcard.card)", rc);
        return 1;
    }
    shm_name(text, sizeof text, myproc.nspace, myproc.rank);
    v.type = PMIX_STRING;
    v.data.string = text;
    if ((rc = PMIx_Put(PMIX_LOCAL, "bizcard.shm", &v)) != PMIX_SUCCESS) {
        fail(&myproc, "PMIx_Put(PMIX_LOCAL, bizcard.shm)", rc);
        return 1;
    }
    net_addr(text, sizeof text, myproc.rank);
    if ((rc = PMIx_Put(PMIX_REMOTE, "bizcard.net", &v)) != PMIX_SUCCESS) {
        fail(&myproc, "PMIx_Put(PMIX_REMOTE, bizcard.net)", rc);
        return 1;
    }

    /* 3. Hand everything we put to the local server. */
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS) {
        fail(&myproc, "PMIx_Commit", rc);
        return 1;
    }

    /* 4. The fence. In full mode it carries every committed card to every
     *    process; in sparse mode it is only a barrier (everyone has
     *    committed) and the cards stay where they were posted. */
    double t0 = now();
    if (full) {
        pmix_info_t collect;
        bool yes = true;
        PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        rc = PMIx_Fence(NULL, 0, &collect, 1);
        PMIX_INFO_DESTRUCT(&collect);
    } else {
        rc = PMIx_Fence(NULL, 0, NULL, 0);
    }
    if (rc != PMIX_SUCCESS) {
        fail(&myproc, full ? "PMIx_Fence(PMIX_COLLECT_DATA)" : "PMIx_Fence", rc);
        return 1;
    }
    double t1 = now();

    /* 5. Read and verify every peer's card, plus the scoped key meant for
     *    us: the shared-memory name of a peer on our node, the network
     *    address of a peer elsewhere. In full mode these Gets are answered
     *    from local data; in sparse mode each one fetches from the server. */
    uint32_t errors = 0, job_errors = 0, cards = 0, nlocal = 0, nremote = 0;
    pmix_info_t tinfo;
    int timeout = GET_TIMEOUT;
    PMIX_INFO_LOAD(&tinfo, PMIX_TIMEOUT, &timeout, PMIX_INT);
    for (uint32_t r = 0; r < nprocs; r++) {
        if (r == myproc.rank)
            continue;
        pmix_proc_t peer;
        PMIX_PROC_LOAD(&peer, myproc.nspace, r);
        val = NULL;
        rc = PMIx_Get(&peer, "bizcard.card", &tinfo, 1, &val);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "bizcard: rank %u: PMIx_Get(bizcard.card of rank %u) failed: %s\n",
                    myproc.rank, r, PMIx_Error_string(rc));
            errors++;
            continue;
        }
        if (card_matches(val, size, r)) {
            cards++;
        } else {
            fprintf(stderr, "bizcard: rank %u: the card of rank %u does not match\n", myproc.rank,
                    r);
            errors++;
        }
        PMIX_VALUE_RELEASE(val);

        if (is_local(local_peers, r)) {
            shm_name(text, sizeof text, myproc.nspace, r);
            errors += !check_string(&myproc, &peer, "bizcard.shm", text);
            nlocal++;
        } else {
            net_addr(text, sizeof text, r);
            errors += !check_string(&myproc, &peer, "bizcard.net", text);
            nremote++;
        }
    }
    PMIX_INFO_DESTRUCT(&tinfo);
    double t2 = now();

    /* 6. A tally for the summary: each process posts its error count, and
     *    rank 0 reads them on demand after a barrier. The barrier also
     *    keeps every process alive until its peers have read its card. */
    v.type = PMIX_UINT32;
    v.data.uint32 = errors;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "bizcard.errors", &v)) != PMIX_SUCCESS ||
        (rc = PMIx_Commit()) != PMIX_SUCCESS ||
        (rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        fail(&myproc, "posting the error count", rc);
        return 1;
    }
    if (myproc.rank == 0) {
        uint32_t total = errors, bad = errors ? 1 : 0;
        for (uint32_t r = 1; r < nprocs; r++) {
            pmix_proc_t peer;
            PMIX_PROC_LOAD(&peer, myproc.nspace, r);
            val = NULL;
            rc = PMIx_Get(&peer, "bizcard.errors", NULL, 0, &val);
            if (rc != PMIX_SUCCESS || val->type != PMIX_UINT32) {
                fail(&myproc, "PMIx_Get(bizcard.errors)", rc);
                total++;
                bad++;
            } else {
                total += val->data.uint32;
                bad += val->data.uint32 ? 1 : 0;
            }
            if (val != NULL)
                PMIX_VALUE_RELEASE(val);
        }
        printf("bizcard %s: %u processes, %zu-byte cards: %s (rank 0: %u cards, %u local and "
               "%u remote keys verified; fence %.3f s, gets %.3f s)\n",
               full ? "full" : "sparse", nprocs, size,
               total == 0 ? "all cards verified" : "MISMATCHES", cards, nlocal, nremote, t1 - t0,
               t2 - t1);
        job_errors = total;
        if (total != 0)
            printf("bizcard %s: %u errors on %u processes\n", full ? "full" : "sparse", total, bad);
        fflush(stdout);
    }
    /* Rank 0 must finish reading before anyone leaves. */
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        fail(&myproc, "final PMIx_Fence", rc);

    free(card);
    free(local_peers);
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS) {
        fail(&myproc, "PMIx_Finalize", rc);
        return 1;
    }
    return errors == 0 && job_errors == 0 ? 0 : 1;
}
