/*
 * stdhost.c - a one-node launcher written against the Standard's server
 * API alone (pmix_server.h: PMIx_server_init and a pmix_server_module_t),
 * as a third-party host (a resource manager's plugin, a launcher built for
 * another PMIx) would be. It includes no header of the library's own, so
 * it proves that API for hosts that never see the engine's interface,
 * now that pmixrun and pmixd use that interface instead.
 *
 *     stdhost [-n N] [--timeout S] [--] program [args...]
 *
 * It starts N copies of program as one namespace on this node and exits
 * with the highest exit status among them (128+N for a rank killed by
 * signal N), the status of a PMIx_Abort, or 124 on --timeout.
 *
 * How it works. PMIx_server_init with a module of upcalls, in a directory
 * the library makes; PMIx_server_register_nspace with the job's data (the
 * job, node and process keys a one-node job has);
 * PMIx_server_register_client and PMIx_server_setup_fork for each rank,
 * then fork and exec. The registration calls take a callback, as hosts
 * usually give one, and the host waits for it (the library answers after
 * the call returns). The library serves the clients on its own progress
 * thread and calls the module there: every participant of a fence is
 * local, so the library completes fences itself; fence_nb, which it would
 * call for a collective that spans nodes, hands the node's contribution
 * back as the whole (the allgather of one node). The main thread waits for
 * the ranks (SIGCHLD, blocked and taken with sigtimedwait): a rank that
 * ends without PMIx_Finalize after it connected, or by a signal, is
 * deregistered (its peers' fences then fail) and the others are stopped a
 * second later; a PMIx_Abort stops every rank, and is answered once they
 * are gone, so that it never returns.
 *
 * Events: a client's event for more than its node reaches the module's
 * notify_event, which prints it ("stdhost: notify_event CODE from NS:RANK
 * range RANGE") and answers STDHOST_PING with STDHOST_PONG, notified by
 * this server process to the job's clients (event_rules mode "server").
 *
 * The module's upcalls carry no context pointer: the launcher's state is
 * one global, `H`, guarded by its mutex, which the progress thread and the
 * main thread share. That is the price of this API, and why the project's
 * own hosts do not use it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pmix_server.h>

#define EXIT_USAGE 2
#define EXIT_SETUP 1
#define EXIT_TIMEOUT 124
#define STOP_AFTER_S 1.0 /* a failed rank's peers see their fences fail, then SIGTERM */
#define KILL_AFTER_S 2.0 /* SIGTERM -> SIGKILL */

extern char **environ;

typedef struct rank_st {
    pid_t pid;
    bool connected, finalized, reaped;
    int code; /* exit status, or 128+signal */
} rank_st;

typedef struct abort_req {
    struct abort_req *next;
    pmix_op_cbfunc_t cbfunc;
    void *cbdata;
} abort_req;

/* The launcher's state: see the file's comment for why it is global. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;             /* registration callbacks received */
    pmix_status_t status; /* the last one's status */
    pmix_nspace_t nspace;
    int n;
    rank_st *ranks;
    bool aborted;
    int abort_status;
    abort_req *aborts;
} H = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- registration callbacks: counted, waited for ---- */

static void op_done(pmix_status_t status, void *cbdata)
{
    pthread_mutex_lock(&H.mu);
    H.status = status;
    H.done++;
    pthread_cond_broadcast(&H.cv);
    pthread_mutex_unlock(&H.mu);
}

/* Wait until `want` callbacks have come (at most 10 s): their status. */
static pmix_status_t wait_done(int want)
{
    struct timespec until;
    pmix_status_t st = PMIX_ERR_TIMEOUT;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&H.mu);
    while (H.done < want && pthread_cond_timedwait(&H.cv, &H.mu, &until) == 0)
        ;
    if (H.done >= want)
        st = H.status;
    pthread_mutex_unlock(&H.mu);
    return st;
}

/* A call that takes op_done: PMIX_SUCCESS means the callback comes. */
static pmix_status_t waited(pmix_status_t rc, int *calls)
{
    if (rc != PMIX_SUCCESS)
        return rc == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : rc;
    return wait_done(++*calls);
}

/* ---- the module (the library's progress thread) ---- */

static rank_st *rank_of(const pmix_proc_t *p)
{
    if (strncmp(p->nspace, H.nspace, PMIX_MAX_NSLEN) != 0 || p->rank >= (pmix_rank_t)H.n)
        return NULL;
    return &H.ranks[p->rank];
}

/* Only the process forked for the rank may be the rank (PMIX_PROC_PID,
 * which the library read from the socket). */
static pmix_status_t up_connected2(const pmix_proc_t *proc, void *server_object, pmix_info_t info[],
                                   size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pid_t peer = 0;
    for (size_t i = 0; i < ninfo; i++)
        if (PMIx_Check_key(info[i].key, PMIX_PROC_PID) && info[i].value.type == PMIX_PID)
            peer = info[i].value.data.pid;
    pthread_mutex_lock(&H.mu);
    rank_st *r = rank_of(proc);
    bool ok = r != NULL && r->pid == peer;
    if (ok)
        r->connected = true;
    pthread_mutex_unlock(&H.mu);
    if (!ok)
        return PMIX_ERR_NO_PERMISSIONS;
    cbfunc(PMIX_SUCCESS, cbdata); /* answered from inside, as Slurm's plugin does */
    return PMIX_SUCCESS;
}

static pmix_status_t up_finalized(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    pthread_mutex_lock(&H.mu);
    rank_st *r = rank_of(proc);
    if (r != NULL)
        r->finalized = true;
    pthread_mutex_unlock(&H.mu);
    return r != NULL ? PMIX_OPERATION_SUCCEEDED : PMIX_ERR_NOT_FOUND;
}

static pmix_status_t up_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    abort_req *a = malloc(sizeof *a);
    if (a == NULL)
        return PMIX_ERR_NOMEM;
    a->cbfunc = cbfunc;
    a->cbdata = cbdata;
    fprintf(stderr, "stdhost: rank %u called PMIx_Abort with status %d: %s\n", proc->rank, status,
            msg != NULL ? msg : "");
    pthread_mutex_lock(&H.mu);
    if (!H.aborted) {
        H.aborted = true;
        H.abort_status = status;
    }
    a->next = H.aborts;
    H.aborts = a;
    pthread_mutex_unlock(&H.mu);
    return PMIX_SUCCESS; /* answered by the main thread once the ranks are gone */
}

static void free_data(void *cbdata)
{
    free(cbdata);
}

/* One node is the whole job: its contribution is the result. */
static pmix_status_t up_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata)
{
    char *copy = ndata > 0 ? malloc(ndata) : NULL;
    if (ndata > 0 && copy == NULL)
        return PMIX_ERR_NOMEM;
    if (copy != NULL)
        memcpy(copy, data, ndata);
    cbfunc(PMIX_SUCCESS, copy, ndata, cbdata, copy != NULL ? free_data : NULL, copy);
    return PMIX_SUCCESS;
}

static pmix_status_t up_dmodex(const pmix_proc_t *proc, const pmix_info_t info[], size_t ninfo,
                               pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_FOUND; /* no other node to ask */
}

#define STDHOST_PING (PMIX_EXTERNAL_ERR_BASE - 21)
#define STDHOST_PONG (PMIX_EXTERNAL_ERR_BASE - 22)

/* There is no other node to carry the event to: report it, and answer a
 * ping from this server process to the sender's namespace. */
static pmix_status_t up_notify(pmix_status_t code, const pmix_proc_t *source,
                               pmix_data_range_t range, pmix_info_t info[], size_t ninfo,
                               pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    printf("stdhost: notify_event %d from %s:%u range %s\n", code, source->nspace,
           (unsigned)source->rank, PMIx_Data_range_string(range));
    fflush(stdout);
    if (code == STDHOST_PING) {
        pmix_proc_t job;
        PMIx_Load_procid(&job, source->nspace, PMIX_RANK_WILDCARD);
        pmix_status_t rc =
            PMIx_Notify_event(STDHOST_PONG, &job, PMIX_RANGE_NAMESPACE, NULL, 0, NULL, NULL);
        if (rc != PMIX_SUCCESS)
            fprintf(stderr, "stdhost: PMIx_Notify_event(PONG) failed: %s\n", PMIx_Error_string(rc));
    }
    return PMIX_OPERATION_SUCCEEDED; /* done: cbfunc is not called */
}

static pmix_server_module_t module = {
    .client_connected2 = up_connected2,
    .client_finalized = up_finalized,
    .abort = up_abort,
    .fence_nb = up_fence,
    .direct_modex = up_dmodex,
    .notify_event = up_notify,
};

/* ---- the job's data ---- */

/* The keys of a one-node job: job level, then one PMIX_PROC_DATA array per
 * rank. NULL if out of memory. */
static pmix_info_t *job_info(const char *host, size_t *ninfo)
{
    uint32_t n = (uint32_t)H.n, zero = 0, one = 1;
    char *peers = NULL, *regex = NULL, *ppn = NULL, *list = NULL;
    size_t len = 0, njob = 13, k = 0;
    pmix_info_t *info = PMIx_Info_create(njob + n);

    if (info == NULL)
        return NULL;
    if ((list = malloc(12 * (size_t)n + 1)) == NULL)
        goto fail;
    list[0] = '\0';
    for (uint32_t r = 0; r < n; r++)
        len += (size_t)sprintf(list + len, r == 0 ? "%u" : ",%u", r);
    peers = list;
    if (PMIx_generate_regex(host, &regex) != PMIX_SUCCESS ||
        PMIx_generate_ppn(peers, &ppn) != PMIX_SUCCESS)
        goto fail;
    PMIx_Info_load(&info[k++], PMIX_UNIV_SIZE, &n, PMIX_UINT32);
    PMIx_Info_load(&info[k++], PMIX_JOB_SIZE, &n, PMIX_UINT32);
    PMIx_Info_load(&info[k++], PMIX_MAX_PROCS, &n, PMIX_UINT32);
    PMIx_Info_load(&info[k++], PMIX_LOCAL_SIZE, &n, PMIX_UINT32);
    PMIx_Info_load(&info[k++], PMIX_NODE_SIZE, &n, PMIX_UINT32);
    PMIx_Info_load(&info[k++], PMIX_NUM_NODES, &one, PMIX_UINT32);
    PMIx_Info_load(&info[k++], PMIX_NODEID, &zero, PMIX_UINT32);
    PMIx_Info_load(&info[k++], PMIX_HOSTNAME, host, PMIX_STRING);
    PMIx_Info_load(&info[k++], PMIX_JOBID, H.nspace, PMIX_STRING);
    PMIx_Info_load(&info[k++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIx_Info_load(&info[k++], PMIX_NODE_MAP, regex, PMIX_STRING);
    PMIx_Info_load(&info[k++], PMIX_PROC_MAP, ppn, PMIX_STRING);
    PMIx_Info_load(&info[k++], PMIX_LOCALLDR, &zero, PMIX_PROC_RANK);
    for (uint32_t r = 0; r < n; r++) {
        uint16_t lr = (uint16_t)r;
        pmix_data_array_t arr;
        pmix_info_t *pi = PMIx_Info_create(6);
        if (pi == NULL)
            goto fail;
        PMIx_Info_load(&pi[0], PMIX_RANK, &r, PMIX_PROC_RANK);
        PMIx_Info_load(&pi[1], PMIX_LOCAL_RANK, &lr, PMIX_UINT16);
        PMIx_Info_load(&pi[2], PMIX_NODE_RANK, &lr, PMIX_UINT16);
        PMIx_Info_load(&pi[3], PMIX_GLOBAL_RANK, &r, PMIX_PROC_RANK);
        PMIx_Info_load(&pi[4], PMIX_APPNUM, &zero, PMIX_UINT32);
        PMIx_Info_load(&pi[5], PMIX_NODEID, &zero, PMIX_UINT32);
        arr = (pmix_data_array_t){.type = PMIX_INFO, .size = 6, .array = pi};
        PMIx_Info_load(&info[k++], PMIX_PROC_DATA, &arr, PMIX_DATA_ARRAY);
        PMIx_Info_free(pi, 6); /* loading copied it */
    }
    free(list);
    free(regex);
    free(ppn);
    *ninfo = k;
    return info;
fail:
    free(list);
    free(regex);
    free(ppn);
    PMIx_Info_free(info, njob + n);
    return NULL;
}

/* ---- the ranks ---- */

static pid_t start_rank(int rank, char **argv)
{
    pmix_proc_t proc;
    char **env;
    size_t n = 0;
    pid_t pid;

    while (environ[n] != NULL)
        n++;
    if ((env = calloc(n + 1, sizeof *env)) == NULL)
        return -1;
    for (size_t i = 0; i < n; i++)
        env[i] = strdup(environ[i]);
    PMIx_Load_procid(&proc, H.nspace, (pmix_rank_t)rank);
    if (PMIx_server_setup_fork(&proc, &env) != PMIX_SUCCESS) {
        fprintf(stderr, "stdhost: PMIx_server_setup_fork failed for rank %d\n", rank);
        pid = -1;
        goto out;
    }
    /* The mutex: the pid is what client_connected2 checks. */
    pthread_mutex_lock(&H.mu);
    pid = fork();
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setpgid(0, 0);
        environ = env;
        execvp(argv[0], argv);
        fprintf(stderr, "stdhost: cannot execute %s: %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    if (pid > 0)
        H.ranks[rank].pid = pid;
    pthread_mutex_unlock(&H.mu);
out:
    for (size_t i = 0; env[i] != NULL; i++)
        free(env[i]);
    free(env);
    return pid;
}

static void signal_ranks(int sig)
{
    pthread_mutex_lock(&H.mu);
    for (int i = 0; i < H.n; i++)
        if (H.ranks[i].pid > 0 && !H.ranks[i].reaped)
            kill(-H.ranks[i].pid, sig);
    pthread_mutex_unlock(&H.mu);
}

/* Reap what has ended; a rank that failed is deregistered, so that its
 * peers' fences fail. Returns how many are still running, and sets
 * *failed when one failed. */
static int reap(int started, bool *failed)
{
    int st, live = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        pthread_mutex_lock(&H.mu);
        for (int i = 0; i < H.n; i++) {
            rank_st *r = &H.ranks[i];
            if (r->pid != pid || r->reaped)
                continue;
            r->reaped = true;
            r->code = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
            bool bad = WIFSIGNALED(st) || (r->connected && !r->finalized) ||
                       (!r->connected && r->code != 0);
            pthread_mutex_unlock(&H.mu);
            if (bad) {
                pmix_proc_t p;
                PMIx_Load_procid(&p, H.nspace, (pmix_rank_t)i);
                PMIx_server_deregister_client(&p, NULL, NULL);
                *failed = true;
            }
            pthread_mutex_lock(&H.mu);
            break;
        }
        pthread_mutex_unlock(&H.mu);
    }
    pthread_mutex_lock(&H.mu);
    for (int i = 0; i < started; i++)
        live += !H.ranks[i].reaped;
    pthread_mutex_unlock(&H.mu);
    return live;
}

static int usage(void)
{
    fprintf(stderr, "usage: stdhost [-n N] [--timeout S] [--] program [args...]\n");
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    int n = 1, i, calls = 0, started = 0, status = 0;
    double timeout = 0, stop_at = 0, kill_at = 0;
    bool failed = false, timed_out = false;
    char host[256] = "localhost";
    pmix_status_t rc;
    sigset_t chld;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            n = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            timeout = atof(argv[++i]);
        } else {
            return usage();
        }
    }
    if (i >= argc || n < 1 || n > 1024)
        return usage();
    gethostname(host, sizeof host - 1);
    snprintf(H.nspace, sizeof H.nspace, "stdhost.%ld", (long)getpid());
    H.n = n;
    if ((H.ranks = calloc((size_t)n, sizeof *H.ranks)) == NULL)
        return EXIT_SETUP;

    /* SIGCHLD is taken by sigtimedwait: blocked before the library's
     * thread exists, so that it inherits the mask. */
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    if ((rc = PMIx_server_init(&module, NULL, 0)) != PMIX_SUCCESS) {
        fprintf(stderr, "stdhost: PMIx_server_init: %s\n", PMIx_Error_string(rc));
        return EXIT_SETUP;
    }
    size_t ninfo = 0;
    pmix_info_t *info = job_info(host, &ninfo);
    rc = info == NULL
             ? PMIX_ERR_NOMEM
             : waited(PMIx_server_register_nspace(H.nspace, n, info, ninfo, op_done, NULL), &calls);
    PMIx_Info_free(info, ninfo);
    for (int r = 0; rc == PMIX_SUCCESS && r < n; r++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, H.nspace, (pmix_rank_t)r);
        rc = waited(PMIx_server_register_client(&p, getuid(), getgid(), &H.ranks[r], op_done, NULL),
                    &calls);
    }
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "stdhost: registering the job: %s\n", PMIx_Error_string(rc));
        PMIx_server_finalize();
        return EXIT_SETUP;
    }
    for (; started < n; started++)
        if (start_rank(started, &argv[i]) < 0)
            break;
    if (started < n)
        failed = true;

    double deadline = timeout > 0 ? now_s() + timeout : 0;
    struct timespec tick = {0, 50 * 1000 * 1000};
    while (reap(started, &failed) > 0) {
        double t = now_s();
        pthread_mutex_lock(&H.mu);
        bool aborted = H.aborted;
        pthread_mutex_unlock(&H.mu);
        if (!timed_out && deadline > 0 && t >= deadline) {
            fprintf(stderr, "stdhost: the job did not finish within %g s; stopping it\n", timeout);
            timed_out = true;
        }
        if ((aborted || timed_out) && stop_at == 0)
            stop_at = t; /* at once */
        else if (failed && stop_at == 0)
            stop_at = t + STOP_AFTER_S;
        if (stop_at > 0 && t >= stop_at && kill_at == 0) {
            signal_ranks(SIGTERM);
            kill_at = t + KILL_AFTER_S;
        }
        if (kill_at > 0 && t >= kill_at)
            signal_ranks(SIGKILL);
        sigtimedwait(&chld, NULL, &tick);
    }

    /* Every rank is gone: PMIx_Abort may return now. */
    pthread_mutex_lock(&H.mu);
    abort_req *a = H.aborts;
    H.aborts = NULL;
    pthread_mutex_unlock(&H.mu);
    while (a != NULL) {
        abort_req *next = a->next;
        a->cbfunc(PMIX_SUCCESS, a->cbdata);
        free(a);
        a = next;
    }
    for (int r = 0; r < n; r++) {
        pmix_proc_t p;
        PMIx_Load_procid(&p, H.nspace, (pmix_rank_t)r);
        PMIx_server_deregister_client(&p, NULL, NULL);
        if (H.ranks[r].reaped && H.ranks[r].code > status)
            status = H.ranks[r].code;
    }
    PMIx_server_deregister_nspace(H.nspace, op_done, NULL);
    wait_done(++calls);
    PMIx_server_finalize();
    free(H.ranks);
    if (timed_out)
        return EXIT_TIMEOUT;
    if (H.aborted)
        return H.abort_status & 0xff;
    if (failed && status == 0)
        status = EXIT_SETUP;
    return status > 255 ? 255 : status;
}
