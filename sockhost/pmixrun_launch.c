/*
 * pmixrun_launch.c - finding the program and starting the ranks.
 *
 * Each app's program is looked up once, before anything starts, the way a
 * shell does (a name with a '/' is a path, from the app's --wdir if it has
 * one; otherwise each PATH entry is tried),
 * so that a typo gives one clear message and exit status 127 (126 when the
 * file exists but cannot be executed).
 *
 * Each rank is forked from the main thread. Between fork and exec the child
 * only makes async-signal-safe calls: its own process group (so that the
 * whole group can be signalled), PR_SET_PDEATHSIG (it dies if pmixrun is
 * killed, even with SIGKILL), stdin from /dev/null or from a pipe pmixrun
 * writes (--stdin), stdout and stderr into pipes read by pmixrun (one pipe
 * for both with --merge-stderr-to-stdout), default signal dispositions and
 * an empty mask, its binding (sched_setaffinity), its app's --wdir (chdir)
 * and execve of its app's program. If chdir or execve fails, the child writes
 * errno into a close-on-exec pipe, which pmixrun reads: an empty read means
 * the exec succeeded. While it waits for that, the job's loop turns
 * (wait_exec), so the server answers the ranks started before; the rank's
 * pipes become watches on the loop (pmixrun_iof.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmixrun.h"

extern char **environ;

static int check_exec(const char *path, int *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        *err = errno;
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        *err = EISDIR;
        return -1;
    }
    if (access(path, X_OK) != 0) {
        *err = errno;
        return -1;
    }
    return 0;
}

/* Resolve one app's program: a name with a '/' is a path (relative to
 * the app's --wdir, if it has one), other names are looked up in PATH. */
static int resolve_app(job_app *app)
{
    const char *name = app->argv[0];
    int err = ENOENT;
    if (strchr(name, '/') != NULL) {
        char *path = NULL;
        if (name[0] != '/' && app->wdir != NULL) {
            if (asprintf(&path, "%s/%s", app->wdir, name) < 0)
                return 1;
        } else if ((path = strdup(name)) == NULL) {
            return 1;
        }
        if (check_exec(path, &err) == 0) {
            app->prog = path;
            return 0;
        }
        free(path);
    } else {
        const char *path = getenv("PATH");
        if (path == NULL || *path == '\0')
            path = "/usr/local/bin:/usr/bin:/bin";
        int first_err = 0;
        for (const char *p = path;;) {
            const char *end = strchr(p, ':');
            size_t l = end != NULL ? (size_t)(end - p) : strlen(p);
            char *cand = NULL;
            if (asprintf(&cand, "%.*s/%s", (int)l, l > 0 ? p : ".", name) < 0)
                return 1;
            int e = 0;
            if (check_exec(cand, &e) == 0) {
                app->prog = cand;
                return 0;
            }
            free(cand);
            if (e != ENOENT && e != ENOTDIR && first_err == 0)
                first_err = e; /* found, but not usable: say so */
            if (end == NULL)
                break;
            p = end + 1;
        }
        err = first_err != 0 ? first_err : ENOENT;
    }
    if (err == ENOENT || err == ENOTDIR) {
        if (strchr(name, '/') != NULL)
            fprintf(stderr, "pmixrun: %s: no such file; check the path\n", name);
        else
            fprintf(stderr,
                    "pmixrun: %s: command not found in PATH; check the name, or give its path "
                    "(e.g. ./%s)\n",
                    name, name);
        return PMIXRUN_EXIT_NOTFOUND;
    }
    fprintf(stderr, "pmixrun: %s: cannot be executed: %s%s\n", name, strerror(err),
            err == EACCES ? " (is it executable? chmod +x)" : "");
    return PMIXRUN_EXIT_NOEXEC;
}

int launch_resolve(job *j)
{
    for (int a = 0; a < j->napps; a++) {
        int rc = resolve_app(&j->apps[a]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* True if the environment entry `e` sets a variable that `set` (VAR=VAL
 * entries) sets too. */
static bool env_overridden(const char *e, char **set)
{
    size_t l = strcspn(e, "=");
    for (size_t i = 0; set != NULL && set[i] != NULL; i++)
        if (strncmp(set[i], e, l) == 0 && set[i][l] == '=')
            return true;
    return false;
}

/* The rank's environment: ours without a previous job's PMIx identity, with
 * its app's -x variables, OMPI_MCA_mpi_yield_when_idle=1 when the node has more
 * processes than cores (as mpirun sets it, unless the user did: an Open MPI
 * process then yields its core when it waits instead of spinning), plus
 * what the server adds (namespace, rank, server URI). malloc'd strings. */
static char **rank_env(job *j, int rank)
{
    static const char yield[] = "OMPI_MCA_mpi_yield_when_idle=";
    char **env_set = job_app_of(j, rank)->env_set;
    size_t n = 0, nset = 0;
    for (char **e = environ; *e != NULL; e++)
        n++;
    while (env_set != NULL && env_set[nset] != NULL)
        nset++;
    char **env = calloc(n + nset + 2, sizeof *env);
    if (env == NULL)
        return NULL;
    size_t k = 0;
    bool has_yield = false;
    for (char **e = environ; *e != NULL; e++) {
        if (strncmp(*e, "PMIX_NAMESPACE=", 15) == 0 || strncmp(*e, "PMIX_RANK=", 10) == 0 ||
            strncmp(*e, "PMIX_SERVER_", 12) == 0 || env_overridden(*e, env_set))
            continue;
        env[k] = strdup(*e);
        if (env[k] == NULL)
            goto fail;
        k++;
    }
    for (size_t i = 0; i < nset; i++) {
        if (env_overridden(env_set[i], &env_set[i + 1]))
            continue; /* a later -x of the same variable wins */
        env[k] = strdup(env_set[i]);
        if (env[k] == NULL)
            goto fail;
        k++;
    }
    for (size_t i = 0; i < k; i++)
        if (strncmp(env[i], yield, sizeof yield - 1) == 0)
            has_yield = true;
    if (!has_yield && j->ncores > 0 && j->nlocal > j->ncores) {
        env[k] = strdup("OMPI_MCA_mpi_yield_when_idle=1");
        if (env[k] == NULL)
            goto fail;
        k++;
    }
    env[k] = NULL;
    pmix_status_t rc = job_setup_fork(j, rank, &env);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixrun: cannot prepare the environment of rank %d: %s\n", rank,
                PMIx_Error_string(rc));
        goto fail;
    }
    return env;
fail:
    for (size_t i = 0; env[i] != NULL; i++)
        free(env[i]);
    free(env);
    return NULL;
}

static void free_env(char **env)
{
    for (size_t i = 0; env[i] != NULL; i++)
        free(env[i]);
    free(env);
}

/* In the child: report errno to the parent and exit. */
static _Noreturn void child_fail(int fd, int err)
{
    ssize_t w = write(fd, &err, sizeof err);
    (void)w;
    _exit(PMIXRUN_EXIT_NOEXEC);
}

static void exec_done(void *arg, unsigned what)
{
    *(bool *)arg = true;
}

/* Until the child has exec'd (its end of the CLOEXEC pipe closes) or
 * failed to (it writes errno there), the loop goes on: the ranks started
 * before it connect meanwhile, and their PMIx_Init does not wait for the
 * whole launch. Callbacks may run here (signals, output, upcalls), as in
 * any turn of the loop. Without a watch, or when called from inside a
 * turn (which cannot turn the loop again), the read that follows blocks. */
static void wait_exec(job *j, int fd)
{
    bool ready = false, nested;
    px_posix_ops()->lock(j->plat);
    nested = px_posix_ops()->in_callback(j->plat); /* inside a turn: no turn of our own */
    px_posix_ops()->unlock(j->plat);
    if (nested)
        return;
    px_posix_watch *w = px_posix_watch_create(j->plat, fd, PX_POSIX_READ, exec_done, &ready);
    while (w != NULL && !ready)
        px_posix_run_once(j->plat, -1.0);
    px_posix_watch_destroy(w);
}

int launch_rank(job *j, rank_proc *r)
{
    const job_app *app = job_app_of(j, r->rank);
    int outp[2] = {-1, -1}, errp[2] = {-1, -1}, exep[2] = {-1, -1}, inp[2] = {-1, -1};
    bool wants_in = j->in_open && (j->stdin_to == STDIN_ALL || j->stdin_to == r->rank);
    r->in_fd = -1;
    r->files[0].fd = r->files[1].fd = -1;
    char **env = rank_env(j, r->rank);
    if (env == NULL)
        return 1;
    if (pipe2(outp, O_CLOEXEC) != 0 || (!j->merge_stderr && pipe2(errp, O_CLOEXEC) != 0) ||
        pipe2(exep, O_CLOEXEC) != 0 || (wants_in && pipe2(inp, O_CLOEXEC) != 0)) {
        fprintf(stderr,
                "pmixrun: cannot create pipes for rank %d: %s (too many processes for "
                "the open-file limit? see ulimit -n)\n",
                r->rank, strerror(errno));
        goto fail;
    }
    if (j->output_dir != NULL && iof_open_files(j, r) != 0)
        goto fail;
    int errw = j->merge_stderr ? outp[1] : errp[1];
    int inr = wants_in ? inp[0] : j->devnull;
    pid_t parent = getpid();
    /* The rank's pid is known to the server's client_connected2
     * (pmixrun_job.c) before the loop runs again, and so before the rank's
     * HELLO can be read. */
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "pmixrun: cannot start rank %d: fork: %s\n", r->rank, strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        /* The child: async-signal-safe calls only. */
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(PMIXRUN_EXIT_NOEXEC); /* pmixrun died meanwhile */
        if (dup2(inr, 0) < 0 || dup2(outp[1], 1) < 0 || dup2(errw, 2) < 0)
            child_fail(exep[1], errno);
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        for (int s = 1; s < NSIG; s++)
            if (s != SIGKILL && s != SIGSTOP)
                sigaction(s, &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (r->bound)
            sched_setaffinity(0, sizeof r->affinity, &r->affinity);
        if (app->wdir != NULL && chdir(app->wdir) != 0)
            child_fail(exep[1], errno);
        execve(app->prog, app->argv, env);
        child_fail(exep[1], errno);
    }
    /* The parent. Set the group here too: no race with the first kill. */
    r->pid = pid;
    setpgid(pid, pid);
    j->nstarted++;
    close(outp[1]);
    if (errp[1] >= 0)
        close(errp[1]);
    close(exep[1]);
    if (inp[0] >= 0) {
        close(inp[0]);
        r->in_fd = inp[1];
        fcntl(inp[1], F_SETFL, O_NONBLOCK);
    }
    free_env(env);
    fcntl(outp[0], F_SETFL, O_NONBLOCK);
    iof_stream_init(&r->out, outp[0], j->output_copy || j->output_dir == NULL ? &j->outs[1] : NULL);
    if (errp[0] >= 0) {
        fcntl(errp[0], F_SETFL, O_NONBLOCK);
        iof_stream_init(&r->err, errp[0],
                        j->output_copy || j->output_dir == NULL ? &j->outs[2] : NULL);
    }
    if (j->srv != NULL) {
        iof_stream_deliver(&r->out, j->srv, j->plat, j->nspace, r->rank, PMIX_FWD_STDOUT_CHANNEL);
        iof_stream_deliver(&r->err, j->srv, j->plat, j->nspace, r->rank, PMIX_FWD_STDERR_CHANNEL);
        r->out.relay = r->err.relay = j->relay;
        r->out.hold = r->err.hold = &j->hold;
    }
    if (r->files[0].fd >= 0)
        r->out.file = &r->files[0];
    if (r->files[1].fd >= 0)
        r->err.file = &r->files[1];
    /* Its pipes go on the job's loop (their descriptors close with the
     * streams at teardown if this fails). */
    if (iof_stream_watch(&r->out, j->plat, r->rank, j->tag_output) != 0 ||
        (r->err.fd >= 0 && iof_stream_watch(&r->err, j->plat, r->rank, j->tag_output) != 0) ||
        (r->in_fd >= 0 && iof_stdin_watch_rank(j, r) != 0)) {
        fprintf(stderr, "pmixrun: cannot watch the pipes of rank %d: out of memory\n", r->rank);
        close(exep[0]);
        return 1;
    }

    int cerr = 0;
    ssize_t n;
    wait_exec(j, exep[0]);
    do
        n = read(exep[0], &cerr, sizeof cerr);
    while (n < 0 && errno == EINTR);
    close(exep[0]);
    if (n == (ssize_t)sizeof cerr) {
        fprintf(stderr, "pmixrun: cannot execute %s for rank %d: %s\n", app->prog, r->rank,
                strerror(cerr));
        return cerr == ENOENT ? PMIXRUN_EXIT_NOTFOUND : PMIXRUN_EXIT_NOEXEC;
    }
    return 0;

fail:
    for (int i = 0; i < 2; i++) {
        if (outp[i] >= 0)
            close(outp[i]);
        if (errp[i] >= 0)
            close(errp[i]);
        if (exep[i] >= 0)
            close(exep[i]);
        if (inp[i] >= 0)
            close(inp[i]);
    }
    iof_close_files(r);
    free_env(env);
    return 1;
}
