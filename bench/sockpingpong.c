/*
 * sockpingpong - the round trips of this machine that every PMIx figure
 * stands on: a message from one process to another over a Unix socket and
 * back, and a hand-off from one thread to another and back.
 *
 *     sockpingpong [--iters N]
 *
 * A local PMIx fence is at least one request from each client to the server
 * and one answer back, over Unix sockets; inside each process a call may
 * also hop to a progress thread and back. This program measures those
 * pieces alone, with no PMIx at all, so that fence_bench's figures can be
 * read against them:
 *
 *   unix      a parent and a forked child exchange a message of SIZE bytes
 *             over an AF_UNIX stream socketpair, blocking in read();
 *   unix+epoll the same, each side waiting in epoll_wait() before it reads,
 *             as an event loop (libevent) does;
 *   thread    two threads of one process hand a token back and forth with a
 *             mutex and a condition variable (a progress-thread hop);
 *   futexbar-P P forked processes run a barrier in shared memory: one
 *             atomic increment each, a futex sleep, and the last one wakes
 *             everyone (what pmixlab's fence page does; P = 2, 8, 16, 64,
 *             placement free only). Its figure is a barrier, not a round
 *             trip: each process's median over the timed barriers, then the
 *             median across processes, as fence_bench reports it;
 *
 * each in three placements: free (the scheduler places both sides), same
 * (both pinned to CPU 0: every hop is a context switch on one core, as it
 * mostly is when 64 processes share 2 cores) and split (one side on CPU 0,
 * the other on CPU 1: every hop wakes the other core, which on a virtual
 * machine may first have to leave its idle state). The split case needs 2
 * CPUs and is skipped on one.
 *
 * Output: one line per case, `sockpingpong what=unix size=1 placement=free
 * iters=N rt_median_us=... rt_mean_us=...`; rt is one full round trip
 * (there and back), the median and the mean over N timed round trips after
 * N/10 untimed ones.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Where the two sides run. */
typedef enum {
    FREE,
    SAME,
    SPLIT
} placement;

static const char *placement_name(placement p)
{
    return p == SAME ? "same" : p == SPLIT ? "split" : "free";
}

static void report(const char *what, size_t size, placement pl, double *rt, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += rt[i];
    qsort(rt, (size_t)n, sizeof *rt, cmp_double);
    double med = n % 2 ? rt[n / 2] : (rt[n / 2 - 1] + rt[n / 2]) / 2;
    printf("sockpingpong what=%s size=%zu placement=%s iters=%d rt_median_us=%.2f "
           "rt_mean_us=%.2f\n",
           what, size, placement_name(pl), n, med, sum / n);
    fflush(stdout);
}

/* Pin the calling thread for side `side` (0 or 1) of a case. */
static void pin(placement pl, int side)
{
    if (pl == FREE)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(pl == SPLIT ? side : 0, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        perror("sockpingpong: sched_setaffinity");
}

static void unpin(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* Move exactly `len` bytes; waits in epoll_wait first if `ep` >= 0. */
static int read_all(int fd, int ep, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        if (ep >= 0) {
            struct epoll_event ev;
            if (epoll_wait(ep, &ev, 1, -1) < 0 && errno != EINTR)
                return -1;
        }
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
    size_t put = 0;
    while (put < len) {
        ssize_t w = write(fd, buf + put, len - put);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w < 0)
            return -1;
        put += (size_t)w;
    }
    return 0;
}

static int epoll_on(int fd)
{
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
        perror("sockpingpong: epoll");
        exit(1);
    }
    return ep;
}

/* Parent and child bounce `size` bytes over a socketpair. */
static int socket_case(size_t size, bool use_epoll, placement pl, int iters)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        perror("sockpingpong: socketpair");
        return -1;
    }
    int bufsz = (int)(size * 2 > 65536 ? size * 2 : 65536);
    for (int i = 0; i < 2; i++) {
        setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof bufsz);
        setsockopt(sv[i], SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof bufsz);
    }
    char *buf = calloc(1, size);
    int warm = iters / 10, total = warm + iters;
    if (buf == NULL)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        perror("sockpingpong: fork");
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        pin(pl, 1);
        int ep = use_epoll ? epoll_on(sv[1]) : -1;
        for (int i = 0; i < total; i++)
            if (read_all(sv[1], ep, buf, size) != 0 || write_all(sv[1], buf, size) != 0)
                _exit(1);
        _exit(0);
    }
    close(sv[1]);
    pin(pl, 0);
    int ep = use_epoll ? epoll_on(sv[0]) : -1;
    double *rt = calloc((size_t)iters, sizeof(double));
    int rc = rt != NULL ? 0 : -1;
    for (int i = 0; rc == 0 && i < total; i++) {
        double t0 = now_us();
        if (write_all(sv[0], buf, size) != 0 || read_all(sv[0], ep, buf, size) != 0)
            rc = -1;
        else if (i >= warm)
            rt[i - warm] = now_us() - t0;
    }
    close(sv[0]);
    if (ep >= 0)
        close(ep);
    int st;
    waitpid(pid, &st, 0);
    if (rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
        report(use_epoll ? "unix+epoll" : "unix", size, pl, rt, iters);
    else
        fprintf(stderr, "sockpingpong: the socket case of %zu bytes failed\n", size);
    free(rt);
    free(buf);
    unpin();
    return rc;
}

/* Two threads pass a token: turn 0 is the main thread's, 1 the other's. */
typedef struct handoff {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn;
    int rounds;
    placement pl;
} handoff;

static void *echo_thread(void *arg)
{
    handoff *h = arg;
    pin(h->pl, 1);
    pthread_mutex_lock(&h->mu);
    for (int i = 0; i < h->rounds; i++) {
        while (h->turn != 1)
            pthread_cond_wait(&h->cv, &h->mu);
        h->turn = 0;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

static int thread_case(placement pl, int iters)
{
    handoff h = {.turn = 0, .rounds = iters + iters / 10, .pl = pl};
    pthread_mutex_init(&h.mu, NULL);
    pthread_cond_init(&h.cv, NULL);
    double *rt = calloc((size_t)iters, sizeof(double));
    pthread_t t;
    if (rt == NULL || pthread_create(&t, NULL, echo_thread, &h) != 0) {
        free(rt);
        return -1;
    }
    pin(pl, 0);
    int warm = iters / 10;
    for (int i = 0; i < h.rounds; i++) {
        double t0 = now_us();
        pthread_mutex_lock(&h.mu);
        h.turn = 1;
        pthread_cond_broadcast(&h.cv);
        while (h.turn != 0)
            pthread_cond_wait(&h.cv, &h.mu);
        pthread_mutex_unlock(&h.mu);
        if (i >= warm)
            rt[i - warm] = now_us() - t0;
    }
    pthread_join(t, NULL);
    report("thread", 0, pl, rt, iters);
    unpin();
    free(rt);
    pthread_mutex_destroy(&h.mu);
    pthread_cond_destroy(&h.cv);
    return 0;
}

/* ---- futexbar: the barrier with no server at all ---- */

typedef struct fbar {
    _Atomic uint32_t gen;
    _Atomic uint32_t arrived;
    double med[]; /* one per process */
} fbar;

static void fbar_wait(fbar *b, uint32_t nprocs)
{
    uint32_t g = atomic_load(&b->gen);
    if (atomic_fetch_add(&b->arrived, 1) + 1 == nprocs) {
        atomic_store(&b->arrived, 0);
        atomic_store(&b->gen, g + 1);
        syscall(SYS_futex, &b->gen, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
        return;
    }
    while (atomic_load(&b->gen) == g)
        syscall(SYS_futex, &b->gen, FUTEX_WAIT, g, NULL, NULL, 0);
}

static int futexbar_case(int nprocs, int iters)
{
    size_t len = sizeof(fbar) + (size_t)nprocs * sizeof(double);
    fbar *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int rc = 0;

    if (b == MAP_FAILED) {
        perror("sockpingpong: mmap");
        return 1;
    }
    for (int r = 0; r < nprocs; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("sockpingpong: fork");
            return 1; /* the children started wait for ever: the caller exits */
        }
        if (pid == 0) {
            double *t = malloc((size_t)iters * sizeof(*t));
            if (t == NULL)
                _exit(1);
            for (int i = 0; i < iters / 10; i++)
                fbar_wait(b, (uint32_t)nprocs);
            for (int i = 0; i < iters; i++) {
                double t0 = now_us();
                fbar_wait(b, (uint32_t)nprocs);
                t[i] = now_us() - t0;
            }
            qsort(t, (size_t)iters, sizeof(*t), cmp_double);
            b->med[r] = t[iters / 2];
            _exit(0);
        }
    }
    for (int r = 0; r < nprocs; r++) {
        int st;
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            rc = 1;
    }
    if (rc == 0) {
        double sum = 0;
        for (int r = 0; r < nprocs; r++)
            sum += b->med[r];
        qsort(b->med, (size_t)nprocs, sizeof(double), cmp_double);
        printf("sockpingpong what=futexbar-%d size=0 placement=free iters=%d rt_median_us=%.2f "
               "rt_mean_us=%.2f\n",
               nprocs, iters, b->med[nprocs / 2], sum / nprocs);
        fflush(stdout);
    }
    munmap(b, len);
    return rc;
}

int main(int argc, char **argv)
{
    int iters = 20000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: sockpingpong [--iters N]\n");
            return 2;
        }
    }
    if (iters < 10) {
        fprintf(stderr, "sockpingpong: --iters needs at least 10\n");
        return 2;
    }
    static const size_t sizes[] = {1, 1024, 65536};
    int rc = 0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (placement pl = FREE; pl <= SPLIT; pl++) {
        if (pl == SPLIT && ncpu < 2)
            continue;
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int n = sizes[s] > 4096 ? iters / 10 : iters;
            rc |= socket_case(sizes[s], false, pl, n);
            rc |= socket_case(sizes[s], true, pl, n);
        }
        rc |= thread_case(pl, iters);
    }
    static const int bars[] = {2, 8, 16, 64};
    for (size_t i = 0; i < sizeof bars / sizeof bars[0]; i++)
        rc |= futexbar_case(bars[i], iters / 100 > 100 ? iters / 100 : 100);
    return rc == 0 ? 0 : 1;
}
