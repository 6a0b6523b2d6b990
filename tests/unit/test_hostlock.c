/*
 * test_hostlock.c - the Standard server API under a host that behaves like
 * Slurm's mpi/pmix plugin (Slurm 22.05), written against pmix_server.h
 * only.
 *
 * What the host does, as Slurm does:
 *   - register_nspace and register_client take a callback, expect
 *     PMIX_SUCCESS and then wait for the callback;
 *   - the legacy client_connected upcall returns PMIX_SUCCESS and never
 *     calls back; client_finalized calls back at once;
 *   - fence_nb and direct_modex are answered while the host holds its own
 *     non-recursive "collective" lock, from the host's own thread (the
 *     network side) or, in the inline tests, from inside the upcall; the
 *     release function it passes takes that same lock;
 *   - a default event handler is registered in the server process.
 *
 * The lock is an error-checking mutex, taken with a deadline: a release
 * function called from inside the host's own call (the same thread holds
 * the lock: EDEADLK) or while another thread of the host waits for us
 * (timeout) is counted, not hung on. Every host callback also checks that
 * it is not running inside one of the host's calls into the library (a
 * thread-local flag the host sets around those calls).
 *
 * The clients are this program again (argv[1] == "client"), started with
 * the environment from PMIx_server_setup_fork: ranks 0 and 1 of a
 * four-rank job whose ranks 2 and 3 "live on another node" (the host
 * completes the collectives), so every fence goes to the host. Each puts a
 * value, fences with data, gets the other's value, fences without data and
 * finalizes; then they construct a group of the two with a context id,
 * which the host's `group` upcall assigns and answers like a fence (its
 * info callback, its release function taking the lock), and destruct it.
 * In the "getremote" job they ask for the data of ranks 2 and 3
 * instead, which the host answers while its lock is held across the
 * library's next upcall (see test_job_lock_order). In the "pubsub" job
 * rank 0 publishes a key, rank 1 looks it up and rank 0 unpublishes it;
 * the host answers each from its own thread, holding its lock, with the
 * lookup's data on its stack (borrowed for the call, as the Standard's
 * pmix_lookup_cbfunc_t has no release function). In the "spawn" job
 * rank 0 calls PMIx_Spawn and rank 1 PMIx_Spawn_nb; the host checks the
 * app it gets and answers with a namespace on its stack, from its thread
 * holding its lock or inside the upcall; each client checks the name.
 * library's next upcall (see test_job_lock_order). In the "psets" job the
 * host defines and deletes a process set while they run (test_psets).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <pmix.h>
#include <pmix_server.h>

extern char **environ;

#define WAIT_SECONDS 10.0 /* for anything the library owes us */
#define JOB_SECONDS 20.0  /* for the clients to finish */

/* ---- the host's state ---- */

static __thread bool in_lib_call; /* this thread is inside a call into the library */

typedef struct answer {
    struct answer *next;
    bool fence; /* else direct modex, or: */
    bool group; /* a group construct's: icb with info */
    pmix_modex_cbfunc_t cbfunc;
    pmix_info_cbfunc_t icb;
    pmix_op_cbfunc_t opcb;         /* publish, unpublish */
    pmix_lookup_cbfunc_t lookupcb; /* lookup */
    pmix_spawn_cbfunc_t spawncb;   /* spawn */
    pmix_status_t status;          /* publish, unpublish: the outcome */
    char key[PMIX_MAX_KEYLEN + 1]; /* lookup: the key */
    pmix_info_t *info;
    size_t ninfo;
    void *cbdata;
    char *data;
    size_t ndata;
} answer;

static struct {
    pthread_mutex_t coll_lock; /* Slurm's collective lock: error-checking */
    bool inline_answers;       /* answer inside the upcall, else from `net` */
    int hold_ms;               /* `net` holds the lock this long before answering */
    bool lock_in_dmodex;       /* direct_modex takes the lock, as a host's own may */
    pthread_t net;
    pthread_mutex_t mu; /* the queue of answers for `net` */
    pthread_cond_t cv;
    answer *queue;
    bool stop;
    atomic_int inside;           /* host callbacks made inside a host call */
    atomic_int release_deadlock; /* release: the lock was ours (EDEADLK) */
    atomic_int release_timeout;  /* release: the lock never came */
    atomic_int releases;
    atomic_int connected, finalized, fences, dmodex_upcalls, groups;
    atomic_int dmx_asked, dmx_answers, dmx_ok;
    atomic_int publishes, lookups, unpublishes, ids_ok;
    atomic_int spawns, spawns_ok; /* spawn upcalls, and those with the app sent */
    /* the one published key (under coll_lock) */
    char pub_key[PMIX_MAX_KEYLEN + 1];
    char pub_val[64];
    pmix_proc_t pub_proc;
    char dir[256];
} H;

/* A host callback: count it if it runs inside a call of ours. */
static void check_outside(void)
{
    if (in_lib_call)
        atomic_fetch_add(&H.inside, 1);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wait until *v >= want, at most WAIT_SECONDS; true if it got there. */
static bool wait_for(atomic_int *v, int want)
{
    double end = now() + WAIT_SECONDS;

    while (atomic_load(v) < want) {
        if (now() > end)
            return false;
        usleep(1000);
    }
    return true;
}

/* What every release function of the host does first: take the
 * collective lock, as Slurm's does, and count what went wrong. */
static void release_locked(void)
{
    struct timespec ts;
    int rc;

    check_outside();
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    rc = pthread_mutex_timedlock(&H.coll_lock, &ts);
    if (rc == EDEADLK) {
        atomic_fetch_add(&H.release_deadlock, 1);
    } else if (rc != 0) {
        atomic_fetch_add(&H.release_timeout, 1);
    } else {
        pthread_mutex_unlock(&H.coll_lock);
    }
}

/* The release function of the host's answers. */
static void host_release(void *cbdata)
{
    release_locked();
    free(cbdata);
    atomic_fetch_add(&H.releases, 1);
}

/* The release function of a group answer (its two infos). */
static void group_release(void *cbdata)
{
    release_locked();
    PMIx_Info_free(cbdata, 2);
    atomic_fetch_add(&H.releases, 1);
}

/* Answer one upcall, holding the collective lock (the caller does not). */
static void give_answer(answer *a)
{
    pthread_mutex_lock(&H.coll_lock);
    if (H.hold_ms > 0 && !H.inline_answers)
        usleep(H.hold_ms * 1000);
    in_lib_call = true;
    if (a->opcb != NULL) {
        a->opcb(a->status, a->cbdata);
    } else if (a->lookupcb != NULL) {
        /* the data lives on our stack: the library copies what it keeps */
        pmix_pdata_t pd;
        PMIx_Pdata_construct(&pd);
        bool found = H.pub_key[0] != '\0' && strcmp(H.pub_key, a->key) == 0;
        if (found)
            PMIx_Pdata_load(&pd, &H.pub_proc, H.pub_key, H.pub_val, PMIX_STRING);
        a->lookupcb(found ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, found ? &pd : NULL, found ? 1 : 0,
                    a->cbdata);
        PMIx_Pdata_destruct(&pd);
    } else if (a->spawncb != NULL) {
        pmix_nspace_t ns; /* on our stack: the library copies it */
        PMIx_Load_nspace(ns, "hostlock.spawned");
        a->spawncb(PMIX_SUCCESS, ns, a->cbdata);
    } else if (a->group)
        a->icb(PMIX_SUCCESS, a->info, a->ninfo, a->cbdata, group_release, a->info);
    else if (a->fence)
        a->cbfunc(PMIX_SUCCESS, a->data, a->ndata, a->cbdata, host_release, a->data);
    else /* remote data this host does not have */
        a->cbfunc(PMIX_ERR_NOT_FOUND, NULL, 0, a->cbdata, host_release, a->data);
    in_lib_call = false;
    pthread_mutex_unlock(&H.coll_lock);
    free(a);
}

static void dmx_response(pmix_status_t status, char *data, size_t sz, void *cbdata)
{
    check_outside();
    if (status == PMIX_SUCCESS && sz > 0)
        atomic_fetch_add(&H.dmx_ok, 1);
    atomic_fetch_add(&H.dmx_answers, 1);
}

/* The network side: answers queued upcalls. Before the first fence's
 * answer it asks the library for rank 0's data, as another node would
 * (both clients have committed by then). */
static void *net_main(void *arg)
{
    pthread_mutex_lock(&H.mu);
    for (;;) {
        while (H.queue == NULL && !H.stop)
            pthread_cond_wait(&H.cv, &H.mu);
        if (H.queue == NULL)
            break;
        answer *a = H.queue;
        H.queue = a->next;
        pthread_mutex_unlock(&H.mu);
        if (a->fence && !a->group && atomic_load(&H.dmx_asked) == 0 && a->ndata > 0) {
            pmix_proc_t p;
            pmix_status_t rc;

            PMIx_Load_procid(&p, "hostlock.job", 0);
            atomic_store(&H.dmx_asked, 1);
            in_lib_call = true;
            rc = PMIx_server_dmodex_request(&p, dmx_response, NULL);
            in_lib_call = false;
            if (rc == PMIX_SUCCESS)
                wait_for(&H.dmx_answers, 1);
        }
        give_answer(a);
        pthread_mutex_lock(&H.mu);
    }
    pthread_mutex_unlock(&H.mu);
    return NULL;
}

/* ---- the host's upcalls ---- */

static pmix_status_t up_connected(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    check_outside();
    atomic_fetch_add(&H.connected, 1);
    return PMIX_SUCCESS; /* and never a callback */
}

static pmix_status_t up_finalized(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    check_outside();
    atomic_fetch_add(&H.finalized, 1);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, cbdata);
    return PMIX_SUCCESS;
}

static pmix_status_t queue_answer(bool fence, const char *data, size_t ndata,
                                  pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    answer *a = calloc(1, sizeof(*a));

    if (a == NULL)
        return PMIX_ERR_NOMEM;
    a->fence = fence;
    a->cbfunc = cbfunc;
    a->cbdata = cbdata;
    /* the host's copy; its release function frees it */
    a->data = malloc(ndata > 0 ? ndata : 1);
    if (a->data == NULL) {
        free(a);
        return PMIX_ERR_NOMEM;
    }
    if (ndata > 0)
        memcpy(a->data, data, ndata);
    a->ndata = ndata;
    if (H.inline_answers) {
        give_answer(a); /* inside the upcall, holding the lock */
        return PMIX_SUCCESS;
    }
    pthread_mutex_lock(&H.mu);
    answer **pp = &H.queue;
    while (*pp != NULL)
        pp = &(*pp)->next;
    *pp = a;
    pthread_cond_signal(&H.cv);
    pthread_mutex_unlock(&H.mu);
    return PMIX_SUCCESS;
}

/* This node's contribution is taken for everybody's (an allgather of one
 * node): the two local ranks' data is what the clients read. */
static pmix_status_t up_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata)
{
    check_outside();
    atomic_fetch_add(&H.fences, 1);
    return queue_answer(true, data, ndata, cbfunc, cbdata);
}

static pmix_status_t up_dmodex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                               pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t rc;

    check_outside();
    atomic_fetch_add(&H.dmodex_upcalls, 1);
    /* The library makes its upcalls holding its own lock: this may wait
     * for `net`, which holds ours while it answers the previous one. */
    if (H.lock_in_dmodex)
        pthread_mutex_lock(&H.coll_lock);
    rc = queue_answer(false, NULL, 0, cbfunc, cbdata);
    if (H.lock_in_dmodex)
        pthread_mutex_unlock(&H.coll_lock);
    return rc;
}

/* A group of this node: the host assigns context id 4242 and hands back
 * the node's PMIX_GROUP_ENDPT_DATA as every node's (an allgather of one
 * node), through the same queue as a fence's answer. */
static pmix_status_t up_group(pmix_group_operation_t op, char grp[], const pmix_proc_t procs[],
                              size_t nprocs, const pmix_info_t directives[], size_t ndirs,
                              pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    const pmix_byte_object_t *bo = NULL;
    bool ctxid = false;
    size_t id = 4242;
    answer *a;

    check_outside();
    for (size_t i = 0; i < ndirs; i++) {
        if (strcmp(directives[i].key, PMIX_GROUP_ENDPT_DATA) == 0 &&
            directives[i].value.type == PMIX_BYTE_OBJECT)
            bo = &directives[i].value.data.bo;
        if (strcmp(directives[i].key, PMIX_GROUP_ASSIGN_CONTEXT_ID) == 0)
            ctxid = true;
        if (strcmp(directives[i].key, PMIX_TIMEOUT) == 0)
            return PMIX_ERR_BAD_PARAM; /* the library keeps the timeout to itself */
    }
    if (op != PMIX_GROUP_CONSTRUCT || !ctxid || bo == NULL || nprocs != 2)
        return PMIX_ERR_NOT_SUPPORTED; /* not what the clients ask for */
    atomic_fetch_add(&H.groups, 1);
    if ((a = calloc(1, sizeof(*a))) == NULL || (a->info = PMIx_Info_create(2)) == NULL) {
        free(a);
        return PMIX_ERR_NOMEM;
    }
    a->fence = true;
    a->group = true;
    a->icb = cbfunc;
    a->cbdata = cbdata;
    a->ninfo = 2;
    PMIx_Info_load(&a->info[0], PMIX_GROUP_CONTEXT_ID, &id, PMIX_SIZE);
    PMIx_Info_load(&a->info[1], PMIX_GROUP_ENDPT_DATA, bo, PMIX_BYTE_OBJECT);
    if (H.inline_answers) {
        give_answer(a);
        return PMIX_SUCCESS;
    }
    pthread_mutex_lock(&H.mu);
    answer **pp = &H.queue;
    while (*pp != NULL)
        pp = &(*pp)->next;
    *pp = a;
    pthread_cond_signal(&H.cv);
    pthread_mutex_unlock(&H.mu);
    return PMIX_SUCCESS;
}

/* Publish, lookup, unpublish: one key at a time, answered from `net`
 * (or inline) like the fences, holding the host's lock. */
static pmix_status_t queue_pubsub(pmix_op_cbfunc_t opcb, pmix_status_t status,
                                  pmix_lookup_cbfunc_t lookupcb, const char *key, void *cbdata)
{
    answer *a = calloc(1, sizeof(*a));

    if (a == NULL)
        return PMIX_ERR_NOMEM;
    a->opcb = opcb;
    a->lookupcb = lookupcb;
    a->status = status;
    a->cbdata = cbdata;
    if (key != NULL)
        PMIx_Load_key(a->key, key);
    if (H.inline_answers) {
        give_answer(a);
        return PMIX_SUCCESS;
    }
    pthread_mutex_lock(&H.mu);
    answer **pp = &H.queue;
    while (*pp != NULL)
        pp = &(*pp)->next;
    *pp = a;
    pthread_cond_signal(&H.cv);
    pthread_mutex_unlock(&H.mu);
    return PMIX_SUCCESS;
}

/* The library must add the client's PMIX_USERID and PMIX_GRPID, once each. */
static void check_ids(const pmix_info_t info[], size_t ninfo)
{
    int uids = 0, gids = 0;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_USERID) && info[i].value.type == PMIX_UINT32 &&
            info[i].value.data.uint32 == getuid())
            uids++;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_GRPID) && info[i].value.type == PMIX_UINT32 &&
                 info[i].value.data.uint32 == getgid())
            gids++;
    }
    if (uids == 1 && gids == 1)
        atomic_fetch_add(&H.ids_ok, 1);
}

static pmix_status_t up_publish(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                                pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t status = PMIX_ERR_BAD_PARAM;

    check_outside();
    check_ids(info, ninfo);
    atomic_fetch_add(&H.publishes, 1);
    pthread_mutex_lock(&H.coll_lock);
    for (size_t i = 0; i < ninfo; i++) {
        if (info[i].value.type != PMIX_STRING)
            continue;
        PMIx_Load_key(H.pub_key, info[i].key);
        snprintf(H.pub_val, sizeof(H.pub_val), "%s", info[i].value.data.string);
        H.pub_proc = *proc;
        status = PMIX_SUCCESS;
        break;
    }
    pthread_mutex_unlock(&H.coll_lock);
    return queue_pubsub(cbfunc, status, NULL, NULL, cbdata);
}

static pmix_status_t up_lookup(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                               size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata)
{
    check_outside();
    check_ids(info, ninfo);
    atomic_fetch_add(&H.lookups, 1);
    return queue_pubsub(NULL, PMIX_SUCCESS, cbfunc, keys[0], cbdata);
}

static pmix_status_t up_unpublish(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pmix_status_t status = PMIX_ERR_NOT_FOUND;

    check_outside();
    check_ids(info, ninfo);
    atomic_fetch_add(&H.unpublishes, 1);
    pthread_mutex_lock(&H.coll_lock);
    if (keys != NULL && keys[0] != NULL && strcmp(keys[0], H.pub_key) == 0) {
        H.pub_key[0] = '\0';
        status = PMIX_SUCCESS;
    }
    pthread_mutex_unlock(&H.coll_lock);
    return queue_pubsub(cbfunc, status, NULL, NULL, cbdata);
}

/* Spawn: the app the client sent must arrive whole; the answer is a
 * namespace, given like the others (from `net` or inline). */
static pmix_status_t up_spawn(const pmix_proc_t *proc, const pmix_info_t job_info[], size_t ninfo,
                              const pmix_app_t apps[], size_t napps, pmix_spawn_cbfunc_t cbfunc,
                              void *cbdata)
{
    check_outside();
    atomic_fetch_add(&H.spawns, 1);
    if (napps == 1 && apps[0].maxprocs == 3 && apps[0].cmd != NULL &&
        strcmp(apps[0].cmd, "hostlock-prog") == 0 && apps[0].argv != NULL &&
        apps[0].argv[0] != NULL && apps[0].argv[1] != NULL && strcmp(apps[0].argv[1], "arg") == 0 &&
        ninfo == 1 && PMIX_CHECK_KEY(&job_info[0], PMIX_MAPBY))
        atomic_fetch_add(&H.spawns_ok, 1);
    answer *a = calloc(1, sizeof(*a));
    if (a == NULL)
        return PMIX_ERR_NOMEM;
    a->spawncb = cbfunc;
    a->cbdata = cbdata;
    if (H.inline_answers) {
        give_answer(a);
        return PMIX_SUCCESS;
    }
    pthread_mutex_lock(&H.mu);
    answer **pp = &H.queue;
    while (*pp != NULL)
        pp = &(*pp)->next;
    *pp = a;
    pthread_cond_signal(&H.cv);
    pthread_mutex_unlock(&H.mu);
    return PMIX_SUCCESS;
}

static pmix_status_t up_job_control(const pmix_proc_t *requestor, const pmix_proc_t targets[],
                                    size_t ntargets, const pmix_info_t directives[], size_t ndirs,
                                    pmix_info_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED;
}

static pmix_server_module_t module = {
    .client_connected = up_connected,
    .client_finalized = up_finalized,
    .fence_nb = up_fence,
    .direct_modex = up_dmodex,
    .job_control = up_job_control,
    .group = up_group,
    .publish = up_publish,
    .lookup = up_lookup,
    .unpublish = up_unpublish,
    .spawn = up_spawn,
};

/* ---- registration callbacks ---- */

typedef struct opwait {
    atomic_int calls;
    pmix_status_t status;
} opwait;

static void op_cb(pmix_status_t status, void *cbdata)
{
    opwait *w = cbdata;

    check_outside();
    w->status = status;
    atomic_fetch_add(&w->calls, 1);
}

/* A registration call as Slurm makes it: PMIX_SUCCESS, then the callback
 * (never inside the call). */
#define REGISTERED(call, w)                          \
    do {                                             \
        pmix_status_t rc__;                          \
        in_lib_call = true;                          \
        rc__ = (call);                               \
        in_lib_call = false;                         \
        assert_int_equal(rc__, PMIX_SUCCESS);        \
        assert_true(wait_for(&(w)->calls, 1));       \
        assert_int_equal((w)->status, PMIX_SUCCESS); \
    } while (0)

/* ---- the clients ---- */

/* Ask for the data of a rank on the other node (the host has none: the
 * answer is PMIX_ERR_NOT_FOUND); rank 1 asks a little after rank 0, so
 * that its upcall comes while the host answers rank 0's. */
static int client_getremote(void)
{
    pmix_proc_t me, other;
    pmix_value_t *got = NULL;
    pmix_status_t rc;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "client: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 2;
    }
    if (me.rank == 1)
        usleep(150000);
    PMIx_Load_procid(&other, me.nspace, me.rank + 2);
    rc = PMIx_Get(&other, "hostlock.value", NULL, 0, &got);
    if (rc != PMIX_ERR_NOT_FOUND) {
        fprintf(stderr, "client %u: the value of rank %u: %s, not PMIX_ERR_NOT_FOUND\n", me.rank,
                other.rank, PMIx_Error_string(rc));
        return 3;
    }
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "client %u: PMIx_Finalize failed: %s\n", me.rank, PMIx_Error_string(rc));
        return 7;
    }
    return 0;
}

static volatile int nb_spawned; /* 1: the right name came, -1: a wrong one */

static void spawn_cb(pmix_status_t status, pmix_nspace_t nspace, void *cbdata)
{
    nb_spawned = status == PMIX_SUCCESS && strcmp(nspace, "hostlock.spawned") == 0 ? 1 : -1;
}

/* Rank 0 spawns (blocking), rank 1 too (non-blocking), between two
 * fences; an app without processes is refused before it is sent. */
static int client_spawn(void)
{
    pmix_proc_t me;
    pmix_app_t app;
    pmix_info_t info;
    pmix_nspace_t ns;
    char *argv[] = {"hostlock-prog", "arg", NULL};
    pmix_status_t rc;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS)
        return 2;
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        return 4;
    memset(&app, 0, sizeof(app));
    app.cmd = "hostlock-prog";
    app.argv = argv;
    app.maxprocs = -1; /* 0 lets the host decide; a negative count is wrong */
    PMIx_Info_load(&info, PMIX_MAPBY, "slot", PMIX_STRING);
    if ((rc = PMIx_Spawn(&info, 1, &app, 1, ns)) != PMIX_ERR_BAD_PARAM) {
        fprintf(stderr, "client %u: spawn of -1 processes: %s\n", me.rank, PMIx_Error_string(rc));
        return 3;
    }
    app.maxprocs = 3;
    if (me.rank == 0) {
        rc = PMIx_Spawn(&info, 1, &app, 1, ns);
        if (rc != PMIX_SUCCESS || strcmp(ns, "hostlock.spawned") != 0) {
            fprintf(stderr, "client 0: PMIx_Spawn: %s '%s'\n", PMIx_Error_string(rc), ns);
            return 5;
        }
    } else {
        if ((rc = PMIx_Spawn_nb(&info, 1, &app, 1, spawn_cb, NULL)) != PMIX_SUCCESS)
            return 6;
        for (int i = 0; i < 1000 && nb_spawned == 0; i++)
            usleep(10000);
        if (nb_spawned != 1) {
            fprintf(stderr, "client 1: PMIx_Spawn_nb: %d\n", nb_spawned);
            return 6;
        }
    }
    PMIx_Info_destruct(&info);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        return 4;
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
        return 7;
    return 0;
}

/* Rank 0 publishes, rank 1 looks it up after a barrier, rank 0
 * unpublishes after another; the lookup after that finds nothing. */
static int client_pubsub(void)
{
    pmix_proc_t me;
    pmix_pdata_t pd;
    pmix_info_t info;
    char *keys[] = {"hostlock.svc", NULL};
    pmix_status_t rc;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "client: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 2;
    }
    if (me.rank == 0) {
        PMIx_Info_load(&info, "hostlock.svc", "port-9", PMIX_STRING);
        rc = PMIx_Publish(&info, 1);
        PMIx_Info_destruct(&info);
        if (rc != PMIX_SUCCESS) {
            fprintf(stderr, "client 0: PMIx_Publish: %s\n", PMIx_Error_string(rc));
            return 3;
        }
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        return 4;
    if (me.rank == 1) {
        PMIx_Pdata_construct(&pd);
        PMIx_Load_key(pd.key, keys[0]);
        rc = PMIx_Lookup(&pd, 1, NULL, 0);
        if (rc != PMIX_SUCCESS || pd.value.type != PMIX_STRING ||
            strcmp(pd.value.data.string, "port-9") != 0 || pd.proc.rank != 0) {
            fprintf(stderr, "client 1: PMIx_Lookup: %s\n", PMIx_Error_string(rc));
            return 5;
        }
        PMIx_Pdata_destruct(&pd);
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        return 4;
    if (me.rank == 0 && (rc = PMIx_Unpublish(keys, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "client 0: PMIx_Unpublish: %s\n", PMIx_Error_string(rc));
        return 6;
    }
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
        return 7;
    return 0;
}

static int client_main(void)
{
    pmix_proc_t me, peer, wild;
    pmix_value_t v, *got = NULL;
    pmix_info_t collect;
    bool yes = true;
    pmix_status_t rc;

    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "client: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 2;
    }
    v.type = PMIX_UINT32;
    v.data.uint32 = 1000 + me.rank;
    if ((rc = PMIx_Put(PMIX_GLOBAL, "hostlock.value", &v)) != PMIX_SUCCESS ||
        (rc = PMIx_Commit()) != PMIX_SUCCESS) {
        fprintf(stderr, "client %u: put/commit failed: %s\n", me.rank, PMIx_Error_string(rc));
        return 3;
    }
    PMIx_Load_procid(&wild, me.nspace, PMIX_RANK_WILDCARD);
    PMIx_Info_load(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    if ((rc = PMIx_Fence(&wild, 1, &collect, 1)) != PMIX_SUCCESS) {
        fprintf(stderr, "client %u: collecting fence failed: %s\n", me.rank, PMIx_Error_string(rc));
        return 4;
    }
    PMIx_Load_procid(&peer, me.nspace, me.rank ^ 1);
    rc = PMIx_Get(&peer, "hostlock.value", NULL, 0, &got);
    if (rc != PMIX_SUCCESS || got == NULL || got->type != PMIX_UINT32 ||
        got->data.uint32 != 1000 + peer.rank) {
        fprintf(stderr, "client %u: the value of rank %u: %s\n", me.rank, peer.rank,
                rc != PMIX_SUCCESS ? PMIx_Error_string(rc) : "wrong");
        return 5;
    }
    PMIx_Value_free(got, 1);
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "client %u: barrier failed: %s\n", me.rank, PMIx_Error_string(rc));
        return 6;
    }
    /* a group of the two with a context id: the host's `group` upcall */
    pmix_proc_t members[2];
    pmix_info_t actx, *res = NULL;
    size_t nres = 0, id = 0, nm = 0;
    PMIx_Load_procid(&members[0], me.nspace, 0);
    PMIx_Load_procid(&members[1], me.nspace, 1);
    PMIx_Info_load(&actx, PMIX_GROUP_ASSIGN_CONTEXT_ID, &yes, PMIX_BOOL);
    rc = PMIx_Group_construct("hostlock.grp", members, 2, &actx, 1, &res, &nres);
    for (size_t i = 0; i < nres; i++) {
        if (strcmp(res[i].key, PMIX_GROUP_CONTEXT_ID) == 0)
            id = res[i].value.data.size;
        if (strcmp(res[i].key, PMIX_GROUP_MEMBERSHIP) == 0)
            nm = res[i].value.data.darray->size;
    }
    PMIx_Info_free(res, nres);
    if (rc != PMIX_SUCCESS || id != 4242 || nm != 2) {
        fprintf(stderr, "client %u: group construct: %s, id %zu, %zu members\n", me.rank,
                PMIx_Error_string(rc), id, nm);
        return 8;
    }
    if ((rc = PMIx_Group_destruct("hostlock.grp", NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "client %u: group destruct: %s\n", me.rank, PMIx_Error_string(rc));
        return 9;
    }
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "client %u: PMIx_Finalize failed: %s\n", me.rank, PMIx_Error_string(rc));
        return 7;
    }
    return 0;
}

/* Process sets, from a client: it registers for PMIX_PROCESS_SET_DEFINE
 * and DELETE and fences (the host's cue that it is ready), sees the host's
 * "tide" defined (its event, then the queries), fences again, and sees it
 * deleted. The job data names the set "launch" (every rank). */
typedef struct pset_seen {
    atomic_int defines, deletes;
    char name[64];
    size_t nmembers;
} pset_seen;

static void client_pset_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                                pmix_info_t info[], size_t ninfo, pmix_info_t results[],
                                size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                                void *cbdata)
{
    pset_seen *s = NULL;

    for (size_t i = 0; i < ninfo; i++) {
        if (PMIx_Check_key(info[i].key, PMIX_EVENT_RETURN_OBJECT))
            s = info[i].value.data.ptr;
    }
    for (size_t i = 0; s != NULL && i < ninfo; i++) {
        if (PMIx_Check_key(info[i].key, PMIX_PSET_NAME) && info[i].value.type == PMIX_STRING)
            snprintf(s->name, sizeof(s->name), "%s", info[i].value.data.string);
        if (PMIx_Check_key(info[i].key, PMIX_PSET_MEMBERS) && info[i].value.type == PMIX_DATA_ARRAY)
            s->nmembers = info[i].value.data.darray->size;
    }
    if (s != NULL)
        atomic_fetch_add(status == PMIX_PROCESS_SET_DEFINE ? &s->defines : &s->deletes, 1);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* PMIX_QUERY_NUM_PSETS and PMIX_QUERY_PSET_NAMES; false if not both. */
static bool query_psets(size_t *num, char *names, size_t len)
{
    char *keys[] = {PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES, NULL};
    pmix_query_t q = {.keys = keys};
    pmix_info_t *info = NULL;
    size_t ninfo = 0;
    bool ok = PMIx_Query_info(&q, 1, &info, &ninfo) == PMIX_SUCCESS && ninfo == 2 &&
              info[0].value.type == PMIX_SIZE && info[1].value.type == PMIX_STRING;

    if (ok) {
        *num = info[0].value.data.size;
        snprintf(names, len, "%s", info[1].value.data.string);
    }
    PMIx_Info_free(info, ninfo);
    return ok;
}

static int client_psets(void)
{
    pmix_proc_t me;
    pmix_status_t codes[] = {PMIX_PROCESS_SET_DEFINE, PMIX_PROCESS_SET_DELETE}, rc;
    pmix_info_t obj;
    pset_seen seen;
    size_t num = 0;
    char names[128] = "";

    memset(&seen, 0, sizeof(seen));
    if ((rc = PMIx_Init(&me, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "client: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 2;
    }
    PMIx_Info_load(&obj, PMIX_EVENT_RETURN_OBJECT, &seen, PMIX_POINTER);
    rc = PMIx_Register_event_handler(codes, 2, &obj, 1, client_pset_handler, NULL, NULL);
    PMIx_Info_destruct(&obj);
    if (rc < 0 || !query_psets(&num, names, sizeof(names)) || num != 1 ||
        strcmp(names, "launch") != 0) {
        fprintf(stderr, "client %u: before: %zu sets \"%s\" (%s)\n", me.rank, num, names,
                PMIx_Error_string(rc));
        return 3;
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        return 4;
    if (!wait_for(&seen.defines, 1) || strcmp(seen.name, "tide") != 0 || seen.nmembers != 2) {
        fprintf(stderr, "client %u: no PMIX_PROCESS_SET_DEFINE of tide (2 members): %d, %s, %zu\n",
                me.rank, atomic_load(&seen.defines), seen.name, seen.nmembers);
        return 5;
    }
    if (!query_psets(&num, names, sizeof(names)) || num != 2 || strcmp(names, "launch,tide") != 0) {
        fprintf(stderr, "client %u: after define: %zu sets \"%s\"\n", me.rank, num, names);
        return 6;
    }
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) != PMIX_SUCCESS)
        return 7;
    if (!wait_for(&seen.deletes, 1) || strcmp(seen.name, "tide") != 0) {
        fprintf(stderr, "client %u: no PMIX_PROCESS_SET_DELETE of tide\n", me.rank);
        return 8;
    }
    if (!query_psets(&num, names, sizeof(names)) || num != 1) {
        fprintf(stderr, "client %u: after delete: %zu sets \"%s\"\n", me.rank, num, names);
        return 9;
    }
    if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
        return 10;
    return 0;
}

/* ---- the job: register, start the two clients, wait for them ---- */

static pid_t start_client(const char *nspace, pmix_rank_t rank, const char *mode)
{
    pmix_proc_t p;
    char **env;
    size_t n = 0;
    pid_t pid;

    while (environ[n] != NULL)
        n++;
    env = calloc(n + 1, sizeof(*env));
    assert_non_null(env);
    for (size_t i = 0; i < n; i++)
        env[i] = strdup(environ[i]);
    PMIx_Load_procid(&p, nspace, rank);
    in_lib_call = true;
    assert_int_equal(PMIx_server_setup_fork(&p, &env), PMIX_SUCCESS);
    in_lib_call = false;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char *argv[] = {"test_hostlock", "client", (char *)mode, NULL};
        execve("/proc/self/exe", argv, env);
        _exit(127);
    }
    for (size_t i = 0; env[i] != NULL; i++)
        free(env[i]);
    free(env);
    return pid;
}

/* Wait for the clients; kill what is left at the deadline. Returns how
 * many exited with status 0. */
static int wait_clients(pid_t *pids, int n)
{
    double end = now() + JOB_SECONDS;
    int left = n, ok = 0;

    while (left > 0) {
        for (int i = 0; i < n; i++) {
            int st;
            if (pids[i] <= 0 || waitpid(pids[i], &st, WNOHANG) != pids[i])
                continue;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
                ok++;
            else
                print_error("client %d ended with status 0x%x\n", i, st);
            pids[i] = 0;
            left--;
        }
        if (left > 0 && now() > end) {
            print_error("%d clients still running after %.0f s: killed\n", left, JOB_SECONDS);
            for (int i = 0; i < n; i++) {
                if (pids[i] > 0) {
                    kill(pids[i], SIGKILL);
                    waitpid(pids[i], NULL, 0);
                }
            }
            break;
        }
        usleep(2000);
    }
    return ok;
}

static void run_job(bool inline_answers, const char *mode)
{
    const char *ns = "hostlock.job";
    uint32_t size = 4, local = 2;
    pmix_info_t info[3];
    opwait wns, wc[2], wd[3];
    pid_t pids[2];

    memset(&wns, 0, sizeof(wns));
    memset(wc, 0, sizeof(wc));
    memset(wd, 0, sizeof(wd));
    H.inline_answers = inline_answers;
    atomic_store(&H.connected, 0);
    atomic_store(&H.finalized, 0);
    atomic_store(&H.fences, 0);
    atomic_store(&H.dmodex_upcalls, 0);
    atomic_store(&H.groups, 0);
    atomic_store(&H.releases, 0);
    atomic_store(&H.dmx_asked, 0);
    atomic_store(&H.dmx_answers, 0);
    atomic_store(&H.dmx_ok, 0);
    atomic_store(&H.publishes, 0);
    atomic_store(&H.lookups, 0);
    atomic_store(&H.unpublishes, 0);
    atomic_store(&H.ids_ok, 0);
    atomic_store(&H.spawns, 0);
    atomic_store(&H.spawns_ok, 0);
    PMIx_Info_load(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIx_Info_load(&info[1], PMIX_LOCAL_SIZE, &local, PMIX_UINT32);
    PMIx_Info_load(&info[2], PMIX_LOCAL_PEERS, "0,1", PMIX_STRING);
    REGISTERED(PMIx_server_register_nspace(ns, 2, info, 3, op_cb, &wns), &wns);
    for (pmix_rank_t r = 0; r < 2; r++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, ns, r);
        REGISTERED(PMIx_server_register_client(&p, getuid(), getgid(), NULL, op_cb, &wc[r]),
                   &wc[r]);
    }
    for (size_t i = 0; i < 3; i++)
        PMIx_Info_destruct(&info[i]);

    pids[0] = start_client(ns, 0, mode);
    pids[1] = start_client(ns, 1, mode);
    assert_int_equal(wait_clients(pids, 2), 2);

    /* Both handshakes accepted on the legacy upcall's word alone. */
    assert_int_equal(atomic_load(&H.connected), 2);
    assert_int_equal(atomic_load(&H.finalized), 2);
    /* Two fences (or two direct modex requests) went to the host; each
     * answer's release came, later, with the collective lock free. */
    if (strcmp(mode, "getremote") == 0)
        assert_int_equal(atomic_load(&H.dmodex_upcalls), 2);
    else
        assert_int_equal(atomic_load(&H.fences), 2);
    /* and the group: one upcall for the node (a destruct of one node
     * needs no host) */
    if (strcmp(mode, "fence") == 0)
        assert_int_equal(atomic_load(&H.groups), 1);
    assert_true(wait_for(&H.releases, atomic_load(&H.fences) + atomic_load(&H.dmodex_upcalls) +
                                          atomic_load(&H.groups)));
    assert_int_equal(atomic_load(&H.release_deadlock), 0);
    assert_int_equal(atomic_load(&H.release_timeout), 0);
    if (strcmp(mode, "pubsub") == 0) {
        /* one of each, every one with the client's uid and gid */
        assert_int_equal(atomic_load(&H.publishes), 1);
        assert_int_equal(atomic_load(&H.lookups), 1);
        assert_int_equal(atomic_load(&H.unpublishes), 1);
        assert_int_equal(atomic_load(&H.ids_ok), 3);
    }
    if (strcmp(mode, "spawn") == 0) {
        assert_int_equal(atomic_load(&H.spawns), 2);
        assert_int_equal(atomic_load(&H.spawns_ok), 2);
    }
    if (!inline_answers && strcmp(mode, "fence") == 0) {
        /* The host's direct-modex request for rank 0: answered with its
         * data, after the call. */
        assert_int_equal(atomic_load(&H.dmx_answers), 1);
        assert_int_equal(atomic_load(&H.dmx_ok), 1);
    }

    for (pmix_rank_t r = 0; r < 2; r++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, ns, r);
        in_lib_call = true;
        PMIx_server_deregister_client(&p, op_cb, &wd[r]);
        in_lib_call = false;
        assert_true(wait_for(&wd[r].calls, 1));
    }
    in_lib_call = true;
    PMIx_server_deregister_nspace(ns, op_cb, &wd[2]);
    in_lib_call = false;
    assert_true(wait_for(&wd[2].calls, 1));
    assert_int_equal(atomic_load(&H.inside), 0);
}

/* ---- tests ---- */

static int setup(void **state)
{
    pthread_mutexattr_t ma;
    pmix_info_t info;

    memset(&H, 0, sizeof(H));
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&H.coll_lock, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_mutex_init(&H.mu, NULL);
    pthread_cond_init(&H.cv, NULL);
    if (pthread_create(&H.net, NULL, net_main, NULL) != 0)
        return -1;
    snprintf(H.dir, sizeof(H.dir), "%s/hostlock.XXXXXX",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(H.dir) == NULL)
        return -1;
    PMIx_Info_load(&info, PMIX_SERVER_TMPDIR, H.dir, PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(&module, &info, 1);
    PMIx_Info_destruct(&info);
    return rc == PMIX_SUCCESS ? 0 : -1;
}

static int teardown(void **state)
{
    pmix_status_t rc = PMIx_server_finalize();

    pthread_mutex_lock(&H.mu);
    H.stop = true;
    pthread_cond_signal(&H.cv);
    pthread_mutex_unlock(&H.mu);
    pthread_join(H.net, NULL);
    pthread_cond_destroy(&H.cv);
    pthread_mutex_destroy(&H.mu);
    pthread_mutex_destroy(&H.coll_lock);
    rmdir(H.dir); /* the server removes its socket; we made the directory */
    return rc == PMIX_SUCCESS ? 0 : -1;
}

/* register_nspace / register_client: PMIX_SUCCESS, then the callback;
 * an error means no callback; deregistration calls back later too. */
static void test_register(void **state)
{
    opwait w, bad, dc, dn;
    pmix_proc_t p;

    memset(&w, 0, sizeof(w));
    memset(&bad, 0, sizeof(bad));
    memset(&dc, 0, sizeof(dc));
    memset(&dn, 0, sizeof(dn));
    REGISTERED(PMIx_server_register_nspace("hostlock.reg", 1, NULL, 0, op_cb, &w), &w);
    memset(&w, 0, sizeof(w));
    PMIx_Load_procid(&p, "hostlock.reg", 0);
    REGISTERED(PMIx_server_register_client(&p, getuid(), getgid(), NULL, op_cb, &w), &w);
    /* A client of a namespace nobody registered: refused, no callback. */
    PMIx_Load_procid(&p, "hostlock.nosuch", 0);
    in_lib_call = true;
    assert_int_not_equal(PMIx_server_register_client(&p, getuid(), getgid(), NULL, op_cb, &bad),
                         PMIX_SUCCESS);
    in_lib_call = false;
    PMIx_Load_procid(&p, "hostlock.reg", 0);
    in_lib_call = true;
    PMIx_server_deregister_client(&p, op_cb, &dc);
    PMIx_server_deregister_nspace("hostlock.reg", op_cb, &dn);
    in_lib_call = false;
    assert_true(wait_for(&dc.calls, 1));
    assert_true(wait_for(&dn.calls, 1));
    usleep(50000);
    assert_int_equal(atomic_load(&bad.calls), 0);
    assert_int_equal(atomic_load(&w.calls), 1);
    assert_int_equal(atomic_load(&H.inside), 0);
}

/* The job, with the host answering from its own thread. */
static void test_job_net_thread(void **state)
{
    run_job(false, "fence");
}

/* The job, with the host answering inside its fence_nb upcall. */
static void test_job_inline(void **state)
{
    run_job(true, "fence");
}

/* Lock order: the host's thread holds the host's lock (here for 0.5 s)
 * while it completes one direct modex request; meanwhile the library,
 * holding its own lock, makes the next direct_modex upcall, which waits
 * for the host's lock. A completion that waited for the library's lock
 * would close the circle: both sides wait for ever, and the clients'
 * Gets never return. */
static void test_job_lock_order(void **state)
{
    H.hold_ms = 500;
    H.lock_in_dmodex = true;
    run_job(false, "getremote");
    H.hold_ms = 0;
    H.lock_in_dmodex = false;
}

/* Publish, lookup and unpublish through the Standard's module, answered
 * from the host's thread and inside the upcalls. */
static void test_job_pubsub(void **state)
{
    run_job(false, "pubsub");
    run_job(true, "pubsub");
}

/* PMIx_Spawn and _nb through the Standard's module's spawn upcall,
 * answered from the host's thread and inside the upcall. */
static void test_job_spawn(void **state)
{
    run_job(false, "spawn");
    run_job(true, "spawn");
}

/* ---- events in the server process ---- */

typedef struct evrec {
    atomic_int calls;
    pmix_status_t status;
    int order; /* the value of `seq` when it ran */
} evrec;

static atomic_int seq;
static evrec ev_default, ev_specific;
static atomic_int reg_calls, dereg_calls;
static size_t reg_id = (size_t)-1;

static void handler(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata, evrec *r)
{
    check_outside();
    r->status = status;
    r->order = atomic_fetch_add(&seq, 1);
    atomic_fetch_add(&r->calls, 1);
    if (cbfunc != NULL)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void h_default(size_t id, pmix_status_t status, const pmix_proc_t *source,
                      pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    handler(id, status, source, info, ninfo, results, nresults, cbfunc, cbdata, &ev_default);
}

static void h_specific(size_t id, pmix_status_t status, const pmix_proc_t *source,
                       pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                       pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    handler(id, status, source, info, ninfo, results, nresults, cbfunc, cbdata, &ev_specific);
}

static void reg_cb(pmix_status_t status, size_t id, void *cbdata)
{
    check_outside();
    if (status == PMIX_SUCCESS)
        reg_id = id;
    atomic_fetch_add(&reg_calls, 1);
}

static void dereg_cb(pmix_status_t status, void *cbdata)
{
    check_outside();
    if (status == PMIX_SUCCESS)
        atomic_fetch_add(&dereg_calls, 1);
}

static void test_events(void **state)
{
    pmix_status_t code = PMIX_ERR_PROC_ABORTED, rc;
    opwait nw;

    memset(&nw, 0, sizeof(nw));
    /* Slurm's registration: a default handler, with a callback. */
    in_lib_call = true;
    rc = PMIx_Register_event_handler(NULL, 0, NULL, 0, h_default, reg_cb, NULL);
    in_lib_call = false;
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_true(wait_for(&reg_calls, 1));
    /* The process's first handler is 0, as in OpenPMIx: Slurm deregisters
     * reference 0 at the end, taking it for its own. */
    assert_int_equal(reg_id, 0);
    /* The blocking form returns the id. */
    rc = PMIx_Register_event_handler(&code, 1, NULL, 0, h_specific, NULL, NULL);
    assert_true(rc >= 0);
    assert_true((size_t)rc != reg_id);

    /* A local event reaches both, the specific handler first. */
    in_lib_call = true;
    rc = PMIx_Notify_event(code, NULL, PMIX_RANGE_PROC_LOCAL, NULL, 0, op_cb, &nw);
    in_lib_call = false;
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_true(wait_for(&nw.calls, 1));
    assert_true(wait_for(&ev_default.calls, 1));
    assert_true(wait_for(&ev_specific.calls, 1));
    assert_int_equal(ev_default.status, code);
    assert_true(ev_specific.order < ev_default.order);

    /* Deregistered: the default handler hears nothing more. */
    in_lib_call = true;
    rc = PMIx_Deregister_event_handler(reg_id, dereg_cb, NULL);
    in_lib_call = false;
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_true(wait_for(&dereg_calls, 1));
    assert_int_equal(PMIx_Notify_event(code, NULL, PMIX_RANGE_PROC_LOCAL, NULL, 0, NULL, NULL),
                     PMIX_SUCCESS);
    assert_true(wait_for(&ev_specific.calls, 2));
    usleep(50000);
    assert_int_equal(atomic_load(&ev_default.calls), 1);
    assert_int_equal(atomic_load(&H.inside), 0);
}

/* ---- process sets through the Standard's server API ---- */

static pset_seen host_seen;

static void h_psets(size_t id, pmix_status_t status, const pmix_proc_t *source, pmix_info_t info[],
                    size_t ninfo, pmix_info_t results[], size_t nresults,
                    pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    check_outside();
    for (size_t i = 0; i < ninfo; i++)
        if (PMIx_Check_key(info[i].key, PMIX_PSET_NAME) && info[i].value.type == PMIX_STRING)
            snprintf(host_seen.name, sizeof(host_seen.name), "%s", info[i].value.data.string);
    atomic_fetch_add(status == PMIX_PROCESS_SET_DEFINE ? &host_seen.defines : &host_seen.deletes,
                     1);
    if (cbfunc != NULL)
        cbfunc(PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

/* The number of sets the server process itself sees (its own engine). */
static size_t host_num_psets(void)
{
    char *keys[] = {PMIX_QUERY_NUM_PSETS, NULL};
    pmix_query_t q = {.keys = keys};
    pmix_info_t *info = NULL;
    size_t ninfo = 0, n = (size_t)-1;

    if (PMIx_Query_info(&q, 1, &info, &ninfo) == PMIX_SUCCESS && ninfo == 1 &&
        info[0].value.type == PMIX_SIZE)
        n = info[0].value.data.size;
    PMIx_Info_free(info, ninfo);
    return n;
}

/* The job data names a set; the host defines "tide" once the clients are
 * ready (their first fence), and deletes it after their second. The
 * clients check their events and queries (client_psets); the host checks
 * its own handler, its own queries and the refusals. */
static void test_psets(void **state)
{
    const char *ns = "hostlock.psets";
    pmix_status_t codes[] = {PMIX_PROCESS_SET_DEFINE, PMIX_PROCESS_SET_DELETE};
    uint32_t size = 4, local = 2, appnum = 0;
    pmix_rank_t ldr = 0;
    pmix_info_t info[4], *app;
    pmix_data_array_t da;
    pmix_proc_t members[2];
    opwait wns, wc[2], wd[3];
    pid_t pids[2];

    memset(&wns, 0, sizeof(wns));
    memset(wc, 0, sizeof(wc));
    memset(wd, 0, sizeof(wd));
    H.inline_answers = false;
    atomic_store(&H.fences, 0);
    atomic_store(&H.releases, 0);
    atomic_store(&H.dmx_asked, 1); /* no direct modex request in this job */
    assert_true(PMIx_Register_event_handler(codes, 2, NULL, 0, h_psets, NULL, NULL) >= 0);
    app = PMIx_Info_create(4);
    PMIx_Info_load(&app[0], PMIX_APPNUM, &appnum, PMIX_UINT32);
    PMIx_Info_load(&app[1], PMIX_APP_SIZE, &size, PMIX_UINT32);
    PMIx_Info_load(&app[2], PMIX_APPLDR, &ldr, PMIX_PROC_RANK);
    PMIx_Info_load(&app[3], PMIX_PSET_NAME, "launch", PMIX_STRING);
    da = (pmix_data_array_t){.type = PMIX_INFO, .size = 4, .array = app};
    PMIx_Info_load(&info[0], PMIX_JOB_SIZE, &size, PMIX_UINT32);
    PMIx_Info_load(&info[1], PMIX_LOCAL_SIZE, &local, PMIX_UINT32);
    PMIx_Info_load(&info[2], PMIX_LOCAL_PEERS, "0,1", PMIX_STRING);
    PMIx_Info_load(&info[3], PMIX_APP_INFO_ARRAY, &da, PMIX_DATA_ARRAY);
    PMIx_Info_free(app, 4);
    REGISTERED(PMIx_server_register_nspace(ns, 2, info, 4, op_cb, &wns), &wns);
    for (size_t i = 0; i < 4; i++)
        PMIx_Info_destruct(&info[i]);
    for (pmix_rank_t r = 0; r < 2; r++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, ns, r);
        REGISTERED(PMIx_server_register_client(&p, getuid(), getgid(), NULL, op_cb, &wc[r]),
                   &wc[r]);
    }
    assert_int_equal(host_num_psets(), 1);

    pids[0] = start_client(ns, 0, "psets");
    pids[1] = start_client(ns, 1, "psets");
    assert_true(wait_for(&H.fences, 1));
    PMIx_Load_procid(&members[0], ns, 1);
    PMIx_Load_procid(&members[1], ns, 3);
    in_lib_call = true;
    assert_int_equal(PMIx_server_define_process_set(members, 2, "tide"), PMIX_SUCCESS);
    in_lib_call = false;
    assert_true(wait_for(&host_seen.defines, 1));
    assert_string_equal(host_seen.name, "tide");
    assert_int_equal(host_num_psets(), 2);
    assert_true(wait_for(&H.fences, 2));
    in_lib_call = true;
    assert_int_equal(PMIx_server_delete_process_set("tide"), PMIX_SUCCESS);
    assert_int_equal(PMIx_server_delete_process_set("tide"), PMIX_ERR_NOT_FOUND);
    assert_int_equal(PMIx_server_define_process_set(members, 2, ""), PMIX_ERR_BAD_PARAM);
    in_lib_call = false;
    assert_true(wait_for(&host_seen.deletes, 1));
    assert_int_equal(wait_clients(pids, 2), 2);
    assert_int_equal(atomic_load(&host_seen.defines), 1);
    assert_int_equal(host_num_psets(), 1);

    for (pmix_rank_t r = 0; r < 2; r++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, ns, r);
        in_lib_call = true;
        PMIx_server_deregister_client(&p, op_cb, &wd[r]);
        in_lib_call = false;
        assert_true(wait_for(&wd[r].calls, 1));
    }
    in_lib_call = true;
    PMIx_server_deregister_nspace(ns, op_cb, &wd[2]);
    in_lib_call = false;
    assert_true(wait_for(&wd[2].calls, 1));
    assert_int_equal(host_num_psets(), 0);
    assert_true(wait_for(&H.releases, atomic_load(&H.fences)));
    assert_int_equal(atomic_load(&H.inside), 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_register),   cmocka_unit_test(test_job_net_thread),
        cmocka_unit_test(test_job_inline), cmocka_unit_test(test_job_lock_order),
        cmocka_unit_test(test_events),     cmocka_unit_test(test_job_pubsub),
        cmocka_unit_test(test_psets),      cmocka_unit_test(test_job_spawn),
    };

    if (argc > 1 && strcmp(argv[1], "client") == 0) {
        if (argc > 2 && strcmp(argv[2], "psets") == 0)
            return client_psets();
        if (argc > 2 && strcmp(argv[2], "pubsub") == 0)
            return client_pubsub();
        if (argc > 2 && strcmp(argv[2], "spawn") == 0)
            return client_spawn();
        return argc > 2 && strcmp(argv[2], "getremote") == 0 ? client_getremote() : client_main();
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
