/*
 * tcppingpong - the Hockney alpha and beta of this machine's TCP loopback,
 * the link that pmixd's daemons use between each other.
 *
 *     tcppingpong [--iters N] [--big-iters N] [--small BYTES] [--max BYTES]
 *                 [--placement free|same|split]
 *
 * A parent and a forked child connect over TCP on 127.0.0.1 (TCP_NODELAY on
 * both ends, kernel buffer sizes left to autotuning) and bounce a message:
 * the parent writes SIZE bytes, the child reads them all and writes SIZE
 * bytes back, both blocking in read() and write(). One sample is half of a
 * full round trip, the time of one message in one direction.
 *
 *   alpha  the median half round trip of a small message (--small, 64 B by
 *          default) over --iters round trips (20000) after --iters/10
 *          untimed ones;
 *   beta   seconds per byte: the slope of a least-squares line through the
 *          median half round trips of 64 KiB, 256 KiB, 1 MiB and 4 MiB (up
 *          to --max), --big-iters round trips each (200) after a tenth of
 *          that untimed. The line's intercept is printed too; alpha is the
 *          small-message figure, not the intercept.
 *
 * Output: one line per size, then the summary (keys stable):
 *
 *   tcppingpong size=65536 iters=200 half_rt_median_us=... half_rt_mean_us=...
 *   tcppingpong alpha_us=... beta_ns_per_byte=... bw_MBps=... intercept_us=...
 *     placement=free
 *
 * bw_MBps is 1/beta in 10^6 bytes per second. --placement: free (the
 * default) leaves both sides to the scheduler, as pmixd's daemons are; same
 * pins both to CPU 0, split one to CPU 0 and the other to CPU 1 (as in
 * sockpingpong: on a virtual machine a wake-up of the other CPU can cost
 * several times a wake-up on the same one, and alpha with it). The summary
 * line then ends with placement=NAME. Exit status 0, 1 if a transfer
 * failed, 2 for bad arguments.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_POINTS 16

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

static int read_all(int fd, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
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
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        put += (size_t)w;
    }
    return 0;
}

static void nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        perror("tcppingpong: TCP_NODELAY");
}

/* One size's work for both sides: the number of round trips to make. */
typedef struct plan {
    size_t size;
    int warm;
    int iters;
} plan;

/* The child: echo every message of every plan, in order. */
static int echo(int fd, const plan *plans, int nplans, char *buf)
{
    for (int p = 0; p < nplans; p++)
        for (int i = 0; i < plans[p].warm + plans[p].iters; i++)
            if (read_all(fd, buf, plans[p].size) != 0 || write_all(fd, buf, plans[p].size) != 0)
                return -1;
    return 0;
}

/* The parent: time the round trips of one plan; median and mean halves. */
static int bounce(int fd, const plan *pl, char *buf, double *med, double *mean)
{
    double *rt = calloc((size_t)pl->iters, sizeof(double));
    if (rt == NULL)
        return -1;
    double sum = 0;
    for (int i = 0; i < pl->warm + pl->iters; i++) {
        double t0 = now_us();
        if (write_all(fd, buf, pl->size) != 0 || read_all(fd, buf, pl->size) != 0) {
            free(rt);
            return -1;
        }
        if (i >= pl->warm) {
            rt[i - pl->warm] = (now_us() - t0) / 2;
            sum += rt[i - pl->warm];
        }
    }
    int n = pl->iters;
    qsort(rt, (size_t)n, sizeof *rt, cmp_double);
    *med = n % 2 ? rt[n / 2] : (rt[n / 2 - 1] + rt[n / 2]) / 2;
    *mean = sum / n;
    free(rt);
    return 0;
}

/* A listening socket on 127.0.0.1, any port; its port in *port. */
static int listen_loopback(unsigned short *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        perror("tcppingpong: listen");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static int connect_loopback(unsigned short port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        perror("tcppingpong: connect");
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Pin the calling process for side `side` (0 or 1): placement 1 same, 2 split. */
static void pin(int placement, int side)
{
    if (placement == 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(placement == 2 ? side : 0, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        perror("tcppingpong: sched_setaffinity");
}

static int parse_count(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v <= 0)
        return -1;
    *out = v;
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: tcppingpong [--iters N] [--big-iters N] [--small BYTES] [--max BYTES]\n"
                    "                   [--placement free|same|split]\n");
    return 2;
}

int main(int argc, char **argv)
{
    long iters = 20000, big_iters = 200, small = 64, max = 4L * 1024 * 1024;
    static const char *const placements[] = {"free", "same", "split"};
    int placement = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--placement") == 0 && i + 1 < argc) {
            i++;
            placement = -1;
            for (int p = 0; p < 3; p++)
                if (strcmp(argv[i], placements[p]) == 0)
                    placement = p;
            if (placement < 0)
                return usage();
            continue;
        }
        long *dst = strcmp(argv[i], "--iters") == 0       ? &iters
                    : strcmp(argv[i], "--big-iters") == 0 ? &big_iters
                    : strcmp(argv[i], "--small") == 0     ? &small
                    : strcmp(argv[i], "--max") == 0       ? &max
                                                          : NULL;
        if (dst == NULL || i + 1 >= argc || parse_count(argv[++i], dst) != 0)
            return usage();
    }
    if (iters < 10 || big_iters < 10 || max < 65536 || max > 1L << 30 || small > 65536) {
        fprintf(stderr, "tcppingpong: --iters and --big-iters need at least 10, --max "
                        "64 KiB..1 GiB, --small at most 64 KiB\n");
        return 2;
    }

    plan plans[MAX_POINTS];
    int nplans = 0;
    plans[nplans++] = (plan){(size_t)small, (int)(iters / 10), (int)iters};
    for (long s = 65536; s <= max && nplans < MAX_POINTS; s *= 4)
        plans[nplans++] = (plan){(size_t)s, (int)(big_iters / 10), (int)big_iters};

    char *buf = calloc(1, (size_t)max);
    unsigned short port;
    int lfd = buf != NULL ? listen_loopback(&port) : -1;
    if (lfd < 0)
        return 1;
    pid_t pid = fork();
    if (pid < 0) {
        perror("tcppingpong: fork");
        return 1;
    }
    if (pid == 0) {
        close(lfd);
        pin(placement, 1);
        int fd = connect_loopback(port);
        if (fd < 0)
            _exit(1);
        nodelay(fd);
        _exit(echo(fd, plans, nplans, buf) == 0 ? 0 : 1);
    }
    pin(placement, 0);
    int fd = accept(lfd, NULL, NULL);
    close(lfd);
    if (fd < 0) {
        perror("tcppingpong: accept");
        return 1;
    }
    nodelay(fd);

    double med[MAX_POINTS], mean;
    int rc = 0;
    for (int p = 0; rc == 0 && p < nplans; p++) {
        rc = bounce(fd, &plans[p], buf, &med[p], &mean);
        if (rc == 0) {
            printf("tcppingpong size=%zu iters=%d half_rt_median_us=%.2f half_rt_mean_us=%.2f\n",
                   plans[p].size, plans[p].iters, med[p], mean);
            fflush(stdout);
        }
    }
    close(fd);
    int st;
    waitpid(pid, &st, 0);
    free(buf);
    if (rc != 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "tcppingpong: a transfer failed\n");
        return 1;
    }

    /* Least squares t = a + b s over the large sizes (plans 1..). */
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int n = nplans - 1;
    for (int p = 1; p < nplans; p++) {
        double x = (double)plans[p].size, y = med[p];
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    double den = n * sxx - sx * sx;
    double b = n > 1 && den > 0 ? (n * sxy - sx * sy) / den
                                : (med[nplans - 1] - med[0]) / (double)plans[nplans - 1].size;
    double a = (sy - b * sx) / n;
    /* b is in microseconds per byte: *1000 for ns, 1/b is bytes per us = MB/s. */
    printf("tcppingpong alpha_us=%.2f beta_ns_per_byte=%.5f bw_MBps=%.1f intercept_us=%.2f "
           "placement=%s\n",
           med[0], b * 1e3, b > 0 ? 1.0 / b : 0.0, a, placements[placement]);
    return 0;
}
