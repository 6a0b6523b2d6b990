/*
 * test_posix.c - unit tests of the posix platform (platform/posix*.c).
 *
 * Each test makes its own platform instances in a fresh private directory
 * under $TMPDIR: a "server" that listens and a "client" that connects, each
 * with a recording sink. Frames are built by hand (header per px_wire.h,
 * payload byte i of a frame with tag t is (t + i) & 0xff) so the test checks
 * that every byte arrives in order. Waiting for asynchronous results polls
 * under the engine lock with a deadline (and drives the loop with
 * px_posix_progress in external-progress mode). Teardown destroys the
 * platforms and checks that the socket and the directory are gone; ASan
 * checks that nothing leaked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/sockios.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "platform/posix_int.h" /* a slab's memfd, to count its pages */
#include "platform/px_posix.h"
#include "wire/px_wire.h"

/* ---- helpers ---- */

typedef struct rec {
    px_posix *p;
    pmix_status_t opened_rc;  /* what `opened` answers */
    pmix_status_t deliver_rc; /* what `deliver` answers */
    bool echo;                /* send every frame back */
    bool close_in_deliver;    /* close the connection from inside deliver */
    int opened;
    uint64_t conn;
    uint32_t uid, gid;
    int frames;
    size_t bytes;
    int bad_frames;
    uint32_t last_tag;
    int closed;
    uint64_t closed_conn;
    pmix_status_t why;
    int regions; /* frames delivered with a region */
    size_t region_bytes;
    int bad_regions;
} rec;

static const px_platform_ops *ops;

static pmix_status_t rec_opened(void *sctx, uint64_t conn, uint32_t uid, uint32_t gid)
{
    rec *r = sctx;
    r->opened++;
    r->conn = conn;
    r->uid = uid;
    r->gid = gid;
    return r->opened_rc;
}

static bool frame_ok(const uint8_t *f, size_t len)
{
    uint32_t tag =
        (uint32_t)f[8] | (uint32_t)f[9] << 8 | (uint32_t)f[10] << 16 | (uint32_t)f[11] << 24;
    for (size_t i = PX_FRAME_HDR; i < len; i++)
        if (f[i] != (uint8_t)(tag + (i - PX_FRAME_HDR)))
            return false;
    return true;
}

static pmix_status_t rec_deliver(void *sctx, uint64_t conn, const void *frame, size_t len)
{
    rec *r = sctx;
    const uint8_t *f = frame;
    r->frames++;
    r->bytes += len;
    r->last_tag =
        (uint32_t)f[8] | (uint32_t)f[9] << 8 | (uint32_t)f[10] << 16 | (uint32_t)f[11] << 24;
    if (!frame_ok(f, len))
        r->bad_frames++;
    if (r->echo) {
        void *copy = malloc(len);
        assert_non_null(copy);
        memcpy(copy, frame, len);
        ops->send(r->p, conn, copy, len);
    }
    if (r->close_in_deliver)
        ops->close(r->p, conn);
    return r->deliver_rc;
}

/* A frame with a region: the region's bytes must be (tag + i) too, and
 * stay readable until released (the last one is kept to check that). */
static pmix_status_t rec_deliver_region(void *sctx, uint64_t conn, const void *frame, size_t flen,
                                        const void *data, size_t len, void (*release)(void *),
                                        void *release_arg)
{
    rec *r = sctx;
    const uint8_t *f = frame, *d = data;
    uint32_t tag =
        (uint32_t)f[8] | (uint32_t)f[9] << 8 | (uint32_t)f[10] << 16 | (uint32_t)f[11] << 24;
    r->regions++;
    r->region_bytes += len;
    if ((f[7] & 0x80) != 0) /* the platform clears its bit before delivery */
        r->bad_frames++;
    for (size_t i = 0; i < len; i++)
        if (d[i] != (uint8_t)(tag * 3 + i))
            r->bad_regions++;
    release(release_arg);
    return PMIX_SUCCESS;
}

static void rec_closed(void *sctx, uint64_t conn, pmix_status_t why)
{
    rec *r = sctx;
    r->closed++;
    r->closed_conn = conn;
    r->why = why;
}

static const px_sink rec_sink = {rec_opened, rec_deliver, rec_closed, rec_deliver_region};

static void *make_frame(uint32_t tag, size_t payload, size_t *len)
{
    uint8_t *f = malloc(PX_FRAME_HDR + payload);
    assert_non_null(f);
    uint32_t magic = PX_WIRE_MAGIC;
    for (int i = 0; i < 4; i++) {
        f[i] = (uint8_t)(magic >> (8 * i));
        f[8 + i] = (uint8_t)(tag >> (8 * i));
        f[12 + i] = (uint8_t)((uint32_t)payload >> (8 * i));
    }
    f[4] = PX_WIRE_VERSION & 0xff;
    f[5] = PX_WIRE_VERSION >> 8;
    f[6] = 7;
    f[7] = 0;
    for (size_t i = 0; i < payload; i++)
        f[PX_FRAME_HDR + i] = (uint8_t)(tag + i);
    *len = PX_FRAME_HDR + payload;
    return f;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Poll until *counter >= want (read under p's lock), for up to 10 s. */
static bool wait_count(px_posix *p, bool external, const int *counter, int want)
{
    double deadline = now_s() + 10.0;
    for (;;) {
        if (external)
            px_posix_progress(p);
        ops->lock(p);
        int v = *counter;
        ops->unlock(p);
        if (v >= want)
            return true;
        if (now_s() > deadline)
            return false;
        sleep_ms(1);
    }
}

/* Two platforms (possibly external-progress) in a private directory. */
typedef struct fixture {
    char base[256]; /* private temporary directory */
    char dir[300];  /* base/sock: created by px_posix_listen */
    px_posix *srv, *cli;
    bool ext_srv, ext_cli;
    rec rs, rc;
    char *uri;
} fixture;

static int fx_setup_mode(void **state, bool ext_srv, bool ext_cli)
{
    fixture *fx = calloc(1, sizeof *fx);
    char err[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(fx->base, sizeof fx->base, "%s/test_posix.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(fx->base) == NULL)
        return -1;
    snprintf(fx->dir, sizeof fx->dir, "%s/sock", fx->base);
    fx->ext_srv = ext_srv;
    fx->ext_cli = ext_cli;
    fx->srv = px_posix_create(ext_srv, err, sizeof err);
    fx->cli = px_posix_create(ext_cli, err, sizeof err);
    if (fx->srv == NULL || fx->cli == NULL)
        return -1;
    fx->rs.p = fx->srv;
    fx->rc.p = fx->cli;
    *state = fx;
    return 0;
}

static int fx_setup(void **state)
{
    return fx_setup_mode(state, false, false);
}

static int fx_setup_ext(void **state)
{
    return fx_setup_mode(state, true, true);
}

static void fx_listen_connect(fixture *fx)
{
    char err[256] = "";
    pmix_status_t rc =
        px_posix_listen(fx->srv, fx->dir, &rec_sink, &fx->rs, &fx->uri, err, sizeof err);
    if (rc != PMIX_SUCCESS)
        fail_msg("listen: %s", err);
    assert_non_null(fx->uri);
    assert_int_equal(strncmp(fx->uri, "unix:", 5), 0);
    rc = px_posix_connect(fx->cli, fx->uri, 5.0, &rec_sink, &fx->rc, err, sizeof err);
    if (rc != PMIX_SUCCESS)
        fail_msg("connect: %s", err);
    assert_true(wait_count(fx->srv, fx->ext_srv, &fx->rs.opened, 1));
    /* as an engine does once the handshake is done: the limits on
     * connections before it (test_limit_*) are lifted */
    ops->lock(fx->srv);
    uint64_t conn = fx->rs.conn;
    ops->unlock(fx->srv);
    ops->conn_accepted(fx->srv, conn);
}

static int fx_teardown(void **state)
{
    fixture *fx = *state;
    struct stat st;
    char sock[400];
    snprintf(sock, sizeof sock, "%s/pmix.sock", fx->dir);
    px_posix_destroy(fx->cli);
    px_posix_destroy(fx->srv);
    /* The socket and the directory listen created are gone. */
    assert_int_not_equal(lstat(sock, &st), 0);
    assert_int_not_equal(lstat(fx->dir, &st), 0);
    rmdir(fx->base);
    free(fx->uri);
    free(fx);
    return 0;
}

/* ---- tests ---- */

static void test_create_destroy(void **state)
{
    char err[128];
    px_posix *a = px_posix_create(false, err, sizeof err);
    px_posix *b = px_posix_create(true, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    px_posix_destroy(a);
    px_posix_destroy(b);
    px_posix_destroy(NULL);
    assert_int_equal(px_posix_ops()->version, PX_PLATFORM_OPS_VERSION);
}

/* The fence page: page_write puts bytes where the mapping sees them, and
 * page_trim (through the fd) and page_discard (through a mapping) give back
 * the memory of a range (not resident any more, reads as zeros) and
 * nothing else. */
static void test_page_write_trim(void **state)
{
    const size_t len = 4 << 20, at = 1 << 20, n = 1 << 20;
    char err[128], *data = malloc(n);
    px_posix *p = px_posix_create(false, err, sizeof err);
    void *mem = NULL;
    unsigned char vec[128];

    assert_non_null(p);
    assert_non_null(data);
    px_page *pg = ops->page_create(p, len, &mem);
    assert_non_null(pg);
    memset(data, 0x5a, n);
    assert_int_equal(ops->page_write(p, pg, at, data, n), PMIX_SUCCESS);
    assert_int_equal(ops->page_write(p, pg, len - 10, data, 11), PMIX_ERR_BAD_PARAM);
    assert_int_equal(((unsigned char *)mem)[at + n - 1], 0x5a);
    assert_int_equal(mincore((char *)mem + at + n / 2, n / 2, vec), 0);
    assert_int_equal(vec[0] & 1, 1); /* written: in memory */
    ops->page_trim(p, pg, at + n / 2, n / 2);
    ops->page_trim(p, pg, len, 4096); /* past the end: nothing */
    assert_int_equal(mincore((char *)mem + at + n / 2, n / 2, vec), 0);
    for (size_t i = 0; i < n / 2 / 4096; i++)
        assert_int_equal(vec[i] & 1, 0);
    assert_int_equal(((unsigned char *)mem)[at + n / 2 - 1], 0x5a); /* before: kept */
    assert_int_equal(((unsigned char *)mem)[at + n / 2], 0);
    assert_int_equal(((unsigned char *)mem)[at + n - 1], 0);

    /* page_discard: the same through a mapping (a client's, in life); a
     * second mapping of the file sees the hole too */
    size_t flen = 0;
    int fd = px_posix_page_fd(pg, &flen);
    unsigned char *other = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    assert_true(other != MAP_FAILED);
    memset((char *)mem + at, 0x5a, n);
    assert_true(ops->page_discard(p, (char *)mem + at + n / 2, n / 4));
    assert_int_equal(mincore((char *)mem + at + n / 2, n / 4, vec), 0);
    for (size_t i = 0; i < n / 4 / 4096; i++)
        assert_int_equal(vec[i] & 1, 0);
    assert_int_equal(((unsigned char *)mem)[at + n / 2 - 1], 0x5a); /* before: kept */
    assert_int_equal(other[at + n / 2], 0);
    assert_int_equal(other[at + n / 2 + n / 4 - 1], 0);
    assert_int_equal(other[at + n / 2 + n / 4], 0x5a); /* after: kept */
    /* a range that is not whole pages: only the whole pages inside it go */
    long ps = sysconf(_SC_PAGESIZE);
    size_t start = at + n / 4 + 100;
    assert_false(ops->page_discard(p, (char *)mem + start, 2 * (size_t)ps));
    assert_int_equal(other[start], 0x5a);
    assert_int_equal(other[at + n / 4 + (size_t)ps], 0);
    assert_int_equal(other[start + 2 * (size_t)ps], 0x5a);
    assert_int_equal(other[at + n / 4 + 2 * (size_t)ps + 99], 0x5a);
    munmap(other, len);
    ops->page_destroy(p, pg);
    px_posix_destroy(p);
    free(data);
}

/* Put the process at its open-file limit: lower it to 128 and take every
 * free descriptor number. Returns the errno that stopped it (EMFILE when
 * it worked); fd_limit_end gives everything back and must run before any
 * check, so that a failed one does not leave the process without fds. */
typedef struct fd_limit {
    struct rlimit old;
    int src, fds[512], n;
} fd_limit;

static int fd_limit_begin(fd_limit *l)
{
    struct rlimit low;
    int fd;

    l->src = open("/dev/null", O_RDONLY);
    assert_true(l->src >= 0);
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &l->old), 0);
    low = l->old;
    low.rlim_cur = 128;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    l->n = 0;
    while (l->n < 512 && (fd = dup(l->src)) >= 0)
        l->fds[l->n++] = fd;
    return errno;
}

static void fd_limit_end(fd_limit *l)
{
    while (l->n > 0)
        close(l->fds[--l->n]);
    close(l->src);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &l->old), 0);
}

/* A fence page whose file descriptor the client cannot receive (it is at
 * its open-file limit: the kernel drops the fd and says MSG_CTRUNC): the
 * frame that came with it is delivered, there is no page (the engine then
 * does barriers through the server), and the connection stays. */
/* Connect the fixture's client and make a 1 MiB page on its server. */
static px_page *fx_page(fixture *fx, void **mem)
{
    fx_listen_connect(fx);
    ops->lock(fx->srv);
    px_page *pg = ops->page_create(fx->srv, 1 << 20, mem);
    ops->unlock(fx->srv);
    assert_non_null(pg);
    return pg;
}

static void test_page_fd_dropped(void **state)
{
    fixture *fx = *state;
    fd_limit lim;
    int err, closed, bad;
    void *mem = NULL, *f, *page;
    size_t len, plen = 0;
    bool came;
    px_page *pg = fx_page(fx, &mem);

    err = fd_limit_begin(&lim);
    f = make_frame(21, 32, &len);
    ops->lock(fx->srv);
    pmix_status_t rc = ops->page_send(fx->srv, fx->rs.conn, f, len, pg);
    ops->unlock(fx->srv);
    came = rc == PMIX_SUCCESS && wait_count(fx->cli, false, &fx->rc.frames, 1);
    fd_limit_end(&lim);
    assert_int_equal(err, EMFILE);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_true(came);
    ops->lock(fx->cli);
    page = ops->page_get(fx->cli, &plen);
    bad = fx->rc.bad_frames;
    closed = fx->rc.closed;
    ops->unlock(fx->cli);
    assert_null(page);
    assert_int_equal(bad, 0);
    assert_int_equal(closed, 0);
    /* the connection still carries frames both ways */
    f = make_frame(22, 32, &len);
    ops->lock(fx->srv);
    assert_int_equal(ops->send(fx->srv, fx->rs.conn, f, len), PMIX_SUCCESS);
    ops->unlock(fx->srv);
    assert_true(wait_count(fx->cli, false, &fx->rc.frames, 2));
    ops->lock(fx->srv);
    ops->page_destroy(fx->srv, pg);
    ops->unlock(fx->srv);
}

/* A page that reached a client in the server's own process: the server
 * is not the client's parent, so its sleeps keep their deadline
 * (page_bound false). page_wait with a negative time sleeps until woken,
 * and returns at once when the word has moved already. */
typedef struct page_sleeper {
    px_posix *p;
    _Atomic uint32_t *word;
} page_sleeper;

/* Sleeps with no limit until the word leaves 0. */
static void *page_sleeper_main(void *arg)
{
    page_sleeper *sl = arg;
    while (atomic_load(sl->word) == 0)
        (void)ops->page_wait(sl->p, (uint32_t *)sl->word, 0, -1);
    return NULL;
}

static void test_page_bound(void **state)
{
    fixture *fx = *state;
    void *mem = NULL, *f;
    size_t len, plen = 0;
    pthread_t t;
    px_page *pg = fx_page(fx, &mem);

    f = make_frame(23, 32, &len);
    ops->lock(fx->srv);
    assert_int_equal(ops->page_send(fx->srv, fx->rs.conn, f, len, pg), PMIX_SUCCESS);
    ops->unlock(fx->srv);
    assert_true(wait_count(fx->cli, false, &fx->rc.frames, 1));
    ops->lock(fx->cli);
    _Atomic uint32_t *word = ops->page_get(fx->cli, &plen);
    ops->unlock(fx->cli);
    assert_non_null(word);
    assert_int_equal(fx->cli->server_pid, getpid()); /* SO_PEERCRED at connect */
    assert_false(ops->page_bound(fx->cli));

    /* the client's mapping is the server's memory: a wake through it
     * reaches a sleeper on the server's. The sleeper is a thread joined
     * with a deadline, so that a missed wake fails instead of hanging. */
    assert_true(ops->page_wait(fx->cli, (uint32_t *)word, 7, -1)); /* 0 != 7: at once */
    page_sleeper sl = {fx->srv, (_Atomic uint32_t *)mem};
    struct timespec pause = {0, 50 * 1000 * 1000}, deadline;
    assert_int_equal(pthread_create(&t, NULL, page_sleeper_main, &sl), 0);
    nanosleep(&pause, NULL);
    atomic_store(word, 1);
    ops->page_wake(fx->cli, (uint32_t *)word);
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    int joined = pthread_timedjoin_np(t, NULL, &deadline);
    if (joined != 0) { /* let it go before failing */
        ops->page_wake(fx->srv, (uint32_t *)mem);
        pthread_join(t, NULL);
    }
    assert_int_equal(joined, 0);
    ops->lock(fx->srv);
    ops->page_destroy(fx->srv, pg);
    ops->unlock(fx->srv);
}

/* px_posix_bound_to, in a child: `sig` its parent-death signal, asked
 * about its parent (or, with ask_self, about itself). Exit 0: bound. */
static int bound_child(int sig, bool ask_self)
{
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, sig);
        _exit(px_posix_bound_to(ask_self ? getpid() : getppid()) ? 0 : 1);
    }
    int status = -1;
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Bound only to a parent that kills it with SIGKILL: a catchable signal
 * may be handled and the process live on. */
static void test_bound_to(void **state)
{
    (void)state;
    assert_int_equal(bound_child(SIGKILL, false), 0);
    assert_int_equal(bound_child(0, false), 1);
    assert_int_equal(bound_child(SIGTERM, false), 1);
    assert_int_equal(bound_child(SIGKILL, true), 1); /* not its parent */
    assert_false(px_posix_bound_to(0));
}

static void test_peercred(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.uid, (uint32_t)getuid());
    assert_int_equal(fx->rs.gid, (uint32_t)getgid());
    assert_true(fx->rs.conn >= 1);
    ops->unlock(fx->srv);
}

static void test_conn_ids(void **state)
{
    fixture *fx = *state;
    char err[256];
    fx_listen_connect(fx);
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.conn, 1);
    ops->unlock(fx->srv);
    /* A second client platform gets id 2. */
    rec r2 = {0};
    px_posix *c2 = px_posix_create(false, err, sizeof err);
    r2.p = c2;
    assert_int_equal(px_posix_connect(c2, fx->uri, 0, &rec_sink, &r2, err, sizeof err),
                     PMIX_SUCCESS);
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 2));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.conn, 2);
    ops->unlock(fx->srv);
    /* A client platform has one server connection only. */
    assert_int_equal(px_posix_connect(c2, fx->uri, 0, &rec_sink, &r2, err, sizeof err),
                     PMIX_ERR_BAD_PARAM);
    px_posix_destroy(c2);
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.closed_conn, 2);
    assert_int_equal(fx->rs.why, PMIX_ERR_LOST_CONNECTION);
    ops->unlock(fx->srv);
}

static void exchange(fixture *fx, int nframes, size_t payload)
{
    fx_listen_connect(fx);
    fx->rs.echo = true;
    for (int i = 0; i < nframes; i++) {
        size_t len;
        void *f = make_frame((uint32_t)(1000 + i), payload, &len);
        ops->lock(fx->cli);
        assert_int_equal(ops->send(fx->cli, PX_CONN_SERVER, f, len), PMIX_SUCCESS);
        ops->unlock(fx->cli);
    }
    /* Drive both sides when external. */
    double deadline = now_s() + 20.0;
    for (;;) {
        if (fx->ext_srv)
            px_posix_progress(fx->srv);
        if (fx->ext_cli)
            px_posix_progress(fx->cli);
        ops->lock(fx->cli);
        int got = fx->rc.frames;
        ops->unlock(fx->cli);
        if (got >= nframes)
            break;
        if (now_s() > deadline)
            fail_msg("only %d of %d frames came back", got, nframes);
        if (!fx->ext_srv && !fx->ext_cli)
            sleep_ms(1);
    }
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.frames, nframes);
    assert_int_equal(fx->rs.bad_frames, 0);
    assert_int_equal(fx->rs.bytes, (size_t)nframes * (PX_FRAME_HDR + payload));
    ops->unlock(fx->srv);
    ops->lock(fx->cli);
    assert_int_equal(fx->rc.bad_frames, 0);
    assert_int_equal(fx->rc.bytes, (size_t)nframes * (PX_FRAME_HDR + payload));
    assert_int_equal(fx->rc.last_tag, (uint32_t)(1000 + nframes - 1));
    assert_int_equal(fx->rc.closed, 0);
    ops->unlock(fx->cli);
}

static void test_small_frames(void **state)
{
    exchange(*state, 2000, 37);
}

static void test_empty_payload(void **state)
{
    exchange(*state, 10, 0);
}

static void test_big_frames(void **state)
{
    /* 1 MiB is far more than a Unix socket buffer: partial writes, queues,
     * EV_WRITE on both sides (the echo is sent from the loop). */
    exchange(*state, 8, (size_t)1 << 20);
}

static void test_big_frames_external(void **state)
{
    exchange(*state, 4, (size_t)1 << 20);
}

/* Raw client socket (no platform) to send garbage. */
static int raw_connect(const char *uri)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", uri + 5);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

static void test_garbage_header(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    int fd = raw_connect(fx->uri);
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 2));
    ops->lock(fx->srv);
    uint64_t conn = fx->rs.conn;
    ops->unlock(fx->srv);
    const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    assert_int_equal(write(fd, junk, sizeof junk), (ssize_t)sizeof junk);
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.closed_conn, conn);
    assert_int_equal(fx->rs.why, PMIX_ERR_BAD_PARAM);
    assert_int_equal(fx->rs.frames, 0);
    ops->unlock(fx->srv);
    /* The peer sees EOF. */
    char b[16];
    assert_int_equal(read(fd, b, sizeof b), 0);
    close(fd);
    /* The good connection still works. */
    size_t len;
    void *f = make_frame(5, 100, &len);
    ops->lock(fx->cli);
    assert_int_equal(ops->send(fx->cli, PX_CONN_SERVER, f, len), PMIX_SUCCESS);
    ops->unlock(fx->cli);
    assert_true(wait_count(fx->srv, false, &fx->rs.frames, 1));
}

/* One region sent to one client several times, appended in pieces first:
 * every frame arrives with the whole region, mapped read-only. */
static void test_regions(void **state)
{
    fixture *fx = *state;
    const uint32_t tag = 9;
    size_t big = ((size_t)1 << 20) + 123, len;
    uint8_t *data = malloc(big);

    assert_non_null(data);
    for (size_t i = 0; i < big; i++)
        data[i] = (uint8_t)(tag * 3 + i);
    fx_listen_connect(fx);
    ops->lock(fx->srv);
    px_region *r = ops->region_create(fx->srv, data, 1000);
    assert_non_null(r);
    assert_int_equal(ops->region_append(fx->srv, r, data + 1000, big - 1000), PMIX_SUCCESS);
    for (int k = 0; k < 3; k++) {
        void *f = make_frame(tag, 64, &len);
        assert_int_equal(ops->send_region(fx->srv, fx->rs.conn, f, len, r), PMIX_SUCCESS);
    }
    /* sent: no more appends */
    assert_int_not_equal(ops->region_append(fx->srv, r, data, 1), PMIX_SUCCESS);
    ops->region_release(fx->srv, r);
    ops->unlock(fx->srv);
    assert_true(wait_count(fx->cli, false, &fx->rc.regions, 3));
    ops->lock(fx->cli);
    assert_int_equal(fx->rc.region_bytes, 3 * big);
    assert_int_equal(fx->rc.bad_regions, 0);
    assert_int_equal(fx->rc.bad_frames, 0);
    assert_int_equal(fx->rc.frames, 0); /* none came through plain deliver */
    ops->unlock(fx->cli);
    free(data);
}

/* Fill `n` bytes as rec_deliver_region expects for frames of `tag`. */
static uint8_t *region_bytes(uint32_t tag, size_t n)
{
    uint8_t *d = malloc(n);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        d[i] = (uint8_t)(tag * 3 + i);
    return d;
}

/* Deliver region `r` to the client with a frame tagged `tag` (its bytes
 * must be region_bytes(tag, ...)) and drop the server's own hold (server
 * lock held). */
static void deliver(fixture *fx, px_region *r, uint32_t tag)
{
    size_t len;
    void *f = make_frame(tag, 32, &len);
    assert_int_equal(ops->send_region(fx->srv, fx->rs.conn, f, len, r), PMIX_SUCCESS);
    ops->region_release(fx->srv, r);
}

/* The client's next frame carries its releases: returns once the server
 * has read it, its `nframes`-th frame. */
static void client_releases(fixture *fx, int nframes)
{
    size_t len;
    ops->lock(fx->cli);
    void *f = make_frame(7, 10, &len);
    assert_int_equal(ops->send(fx->cli, PX_CONN_SERVER, f, len), PMIX_SUCCESS);
    ops->unlock(fx->cli);
    assert_true(wait_count(fx->srv, false, &fx->rs.frames, nframes));
}

/* The client got `n` regions of `bytes` in all, every byte right. */
static void client_got(fixture *fx, int n, size_t bytes)
{
    assert_true(wait_count(fx->cli, false, &fx->rc.regions, n));
    ops->lock(fx->cli);
    assert_int_equal(fx->rc.region_bytes, bytes);
    assert_int_equal(fx->rc.bad_regions, 0);
    assert_int_equal(fx->rc.bad_frames, 0);
    ops->unlock(fx->cli);
}

/* A region's slab is written again once the client has released it (its
 * release rides on its next frame), and the client reads the new bytes;
 * while a delivery is not released, a new region takes another slab. */
static void test_region_reuse(void **state)
{
    fixture *fx = *state;
    size_t n1 = 300000, n2 = 200000;
    uint8_t *d1 = region_bytes(4, n1), *d2 = region_bytes(5, n2), *d3 = region_bytes(6, n2);

    fx_listen_connect(fx);
    ops->lock(fx->srv);
    px_region *r1 = ops->region_create(fx->srv, d1, n1);
    assert_non_null(r1);
    deliver(fx, r1, 4);
    /* the client has not released it yet: a new region needs a new slab */
    px_region *busy = ops->region_create(fx->srv, d3, n2);
    assert_non_null(busy);
    assert_ptr_not_equal(busy, r1);
    ops->region_release(fx->srv, busy);
    ops->unlock(fx->srv);
    assert_true(wait_count(fx->cli, false, &fx->rc.regions, 1));
    client_releases(fx, 1);

    ops->lock(fx->srv);
    px_region *r2 = ops->region_create(fx->srv, d2, n2);
    assert_ptr_equal(r2, r1); /* its slab, written again (busy, never sent, is gone) */
    deliver(fx, r2, 5);
    ops->unlock(fx->srv);
    client_got(fx, 2, n1 + n2);
    free(d1);
    free(d2);
    free(d3);
}

/* Bytes of the file behind `fd` that hold pages. */
static size_t file_resident(int fd)
{
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    return (size_t)st.st_blocks * 512;
}

/* A slab that once held a large region gives those pages back when a
 * much smaller region is written into it (before, a 3 MiB collect kept
 * 3 MiB for the job's life). */
static void test_region_slab_trim(void **state)
{
    fixture *fx = *state;
    size_t big = 3 << 20, small = 100000;
    uint8_t *d1 = region_bytes(4, big), *d2 = region_bytes(5, small);

    fx_listen_connect(fx);
    ops->lock(fx->srv);
    px_region *r1 = ops->region_create(fx->srv, d1, big);
    assert_non_null(r1);
    int fd = ((struct px_region *)r1)->fd;
    deliver(fx, r1, 4);
    ops->unlock(fx->srv);
    assert_true(file_resident(fd) >= big);
    assert_true(wait_count(fx->cli, false, &fx->rc.regions, 1));
    client_releases(fx, 1); /* the slab is free */

    ops->lock(fx->srv);
    px_region *r2 = ops->region_create(fx->srv, d2, small);
    assert_ptr_equal(r2, r1); /* the same slab */
    deliver(fx, r2, 5);
    ops->unlock(fx->srv);
    /* its file keeps its size, but only the small region's pages */
    assert_true(file_resident(fd) <= small + 4096);
    client_got(fx, 2, big + small);
    free(d1);
    free(d2);
}

/* An append whose write fails partway (here at the file size limit)
 * fails and leaves the region as it was, but the pages it wrote are not
 * forgotten: sealing the region gives them back (before, 2 MiB written
 * past the region's end stayed resident until some later trim). */
static void test_region_append_partial(void **state)
{
    fixture *fx = *state;
    size_t first = 100000, more = 3 << 20;
    uint8_t *d1 = region_bytes(4, first), *d2 = region_bytes(9, more);
    struct rlimit old, low;
    void (*oldsig)(int);

    fx_listen_connect(fx);
    ops->lock(fx->srv);
    px_region *r = ops->region_create(fx->srv, d1, first);
    assert_non_null(r);
    int fd = ((struct px_region *)r)->fd;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    low = old;
    low.rlim_cur = 2 << 20;
    oldsig = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &low), 0);
    pmix_status_t rc = ops->region_append(fx->srv, r, d2, more);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, oldsig);
    assert_int_equal(rc, PMIX_ERR_OUT_OF_RESOURCE);
    assert_true(file_resident(fd) >= (2 << 20) - 4096); /* the write went partway */
    deliver(fx, r, 4);
    ops->unlock(fx->srv);
    assert_true(file_resident(fd) <= first + 4096);
    client_got(fx, 1, first);
    free(d1);
    free(d2);
}

/* Send `len` bytes on a raw socket in one message, with `pass` (>= 0)
 * as SCM_RIGHTS. */
static void raw_sendmsg(int fd, const void *b, size_t len, int pass)
{
    struct iovec iov = {(void *)b, len};
    union {
        struct cmsghdr hdr;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr msg = {0};

    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (pass >= 0) {
        memset(&ctl, 0, sizeof(ctl));
        msg.msg_control = ctl.buf;
        msg.msg_controllen = sizeof(ctl.buf);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &pass, sizeof(int));
    }
    assert_int_equal(sendmsg(fd, &msg, MSG_NOSIGNAL), (ssize_t)len);
}

/* Wait (up to 10 s) until the peer has read all that was sent on `fd`. */
static bool raw_drained(int fd)
{
    double deadline = now_s() + 10.0;
    int queued = 1;
    while (ioctl(fd, SIOCOUTQ, &queued) == 0 && queued > 0 && now_s() < deadline)
        sleep_ms(1);
    return queued == 0;
}

/* A platform frame's header: type 0x7fXX, `len` bytes of payload. */
static void plat_hdr(uint8_t *f, uint16_t type, uint32_t len)
{
    memset(f, 0, PX_FRAME_HDR);
    for (int i = 0; i < 4; i++) {
        f[i] = (uint8_t)(PX_WIRE_MAGIC >> (8 * i));
        f[12 + i] = (uint8_t)(len >> (8 * i));
    }
    f[4] = PX_WIRE_VERSION & 0xff;
    f[5] = PX_WIRE_VERSION >> 8;
    f[6] = (uint8_t)type;
    f[7] = (uint8_t)(type >> 8);
}

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A raw server (no platform) for the fixture's client platform: the
 * accepted end, to send what a server sends (pages, regions, fds). */
static int raw_serve(fixture *fx)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char uri[sizeof sa.sun_path + 8], err[256];
    assert_true(strlen(fx->base) + sizeof "/raw.sock" <= sizeof sa.sun_path);
    memcpy(sa.sun_path, fx->base, strlen(fx->base));
    memcpy(sa.sun_path + strlen(fx->base), "/raw.sock", sizeof "/raw.sock");
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(lfd >= 0);
    assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(lfd, 1), 0);
    snprintf(uri, sizeof uri, "unix:%s", sa.sun_path);
    assert_int_equal(px_posix_connect(fx->cli, uri, 5.0, &rec_sink, &fx->rc, err, sizeof err),
                     PMIX_SUCCESS);
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    assert_true(fd >= 0);
    close(lfd);
    unlink(sa.sun_path);
    return fd;
}

/* File descriptors go with the frames they came with, by place in the
 * stream. A page frame whose fd the kernel dropped (the client is at its
 * open-file limit) arrives in two reads, and the second read also brings
 * a region frame with the region's fd. The page is done without; the
 * region is delivered with its own fd. (Before, the page frame took the
 * region's fd, and the region failed and closed the connection.) */
static void test_fd_matched_by_place(void **state)
{
    fixture *fx = *state;
    fd_limit lim;
    int err;
    size_t n = 5000, dlen;
    uint8_t page[PX_FRAME_HDR + 8], more[256], *data = region_bytes(4, n);
    uint8_t *df = make_frame(4, 32, &dlen);
    bool drained;

    int fd = raw_serve(fx);
    int pfd = memfd_create("test-page", MFD_CLOEXEC);
    int rfd = memfd_create("test-region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_true(pfd >= 0 && rfd >= 0);
    assert_int_equal(ftruncate(pfd, 4096), 0);
    assert_int_equal(write(rfd, data, n), (ssize_t)n);
    assert_int_equal(fcntl(rfd, F_ADD_SEALS, F_SEAL_SHRINK), 0);

    plat_hdr(page, 0x7f03, 8);
    put_le(page + PX_FRAME_HDR, 4096, 8);
    /* the rest of the page frame, a region frame, the frame it goes with */
    size_t m = sizeof(page) - 10;
    memcpy(more, page + 10, m);
    plat_hdr(more + m, 0x7f01, 16);
    put_le(more + m + PX_FRAME_HDR, 1, 4);     /* slab id */
    put_le(more + m + PX_FRAME_HDR + 4, 1, 4); /* its fd comes along */
    put_le(more + m + PX_FRAME_HDR + 8, n, 8);
    m += PX_FRAME_HDR + 16;
    df[7] |= 0x80;
    memcpy(more + m, df, dlen);
    m += dlen;

    err = fd_limit_begin(&lim);
    raw_sendmsg(fd, page, 10, pfd);
    drained = raw_drained(fd);
    fd_limit_end(&lim);
    assert_int_equal(err, EMFILE);
    assert_true(drained);

    raw_sendmsg(fd, more, m, rfd);
    assert_true(wait_count(fx->cli, false, &fx->rc.regions, 1));
    ops->lock(fx->cli);
    assert_int_equal(fx->rc.region_bytes, n);
    assert_int_equal(fx->rc.bad_regions, 0);
    assert_int_equal(fx->rc.bad_frames, 0);
    assert_int_equal(fx->rc.closed, 0);
    ops->unlock(fx->cli);
    close(fd);
    close(pfd);
    close(rfd);
    free(data);
    free(df);
}

/* An fd that comes with a frame that announces none belongs to no frame:
 * the peer broke the protocol, and the connection is closed as soon as
 * that frame is read, not when a later frame might have claimed it. The
 * fd is closed (the peer sees EOF on the pipe it passed). */
static void test_fd_stray(void **state)
{
    fixture *fx = *state;
    size_t dlen;
    uint8_t *df = make_frame(6, 16, &dlen);
    int pp[2];
    char c;

    int fd = raw_serve(fx);
    assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
    raw_sendmsg(fd, df, dlen, pp[1]); /* an ordinary frame, with an fd */
    close(pp[1]);
    assert_true(wait_count(fx->cli, false, &fx->rc.closed, 1));
    ops->lock(fx->cli);
    assert_int_equal(fx->rc.frames, 1);
    assert_int_equal(fx->rc.why, PMIX_ERR_UNPACK_FAILURE);
    ops->unlock(fx->cli);
    assert_int_equal(read(pp[0], &c, 1), 0);
    close(pp[0]);
    close(fd);
    free(df);
}

/* A release of a region the peer does not hold breaks the protocol. */
static void test_region_bad_release(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    int fd = raw_connect(fx->uri);
    uint8_t f[24] = {0x50, 0x4d, 0x58, 0x31, 1, 0, 0x02, 0x7f, 0, 0, 0, 0,
                     8,    0,    0,    0,    1, 0, 0,    0,    9, 0, 0, 0};
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 2));
    assert_int_equal(write(fd, f, sizeof(f)), (ssize_t)sizeof(f));
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.why, PMIX_ERR_UNPACK_FAILURE);
    ops->unlock(fx->srv);
    close(fd);
}

/* A frame that announces a region without a descriptor breaks the
 * protocol: the connection is closed, with a clear log line. */
static void test_region_without_fd(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    int fd = raw_connect(fx->uri);
    size_t len;
    uint8_t *f = make_frame(3, 16, &len);
    f[7] |= 0x80;
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 2));
    assert_int_equal(write(fd, f, len), (ssize_t)len);
    free(f);
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.why, PMIX_ERR_UNPACK_FAILURE);
    assert_int_equal(fx->rs.regions, 0);
    ops->unlock(fx->srv);
    close(fd);
}

/* ---- limits on accepted connections (px_posix_limits) ---- */

/* Set the server's limits (zero fields keep their defaults). */
static void fx_limits(fixture *fx, double handshake_s, size_t max_pending, size_t max_queued)
{
    px_posix_limits lim;
    px_posix_get_limits(fx->srv, &lim);
    lim.handshake_s = handshake_s;
    lim.max_pending = max_pending;
    lim.max_queued = max_queued;
    px_posix_set_limits(fx->srv, &lim);
}

/* True if `fd` reads EOF (or a reset) within 10 s. */
static bool raw_eof(int fd)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    double deadline = now_s() + 10.0;
    char b[256];
    while (now_s() < deadline) {
        if (poll(&pfd, 1, 100) <= 0)
            continue;
        ssize_t n = read(fd, b, sizeof b);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
            return true;
    }
    return false;
}

/* The defaults, and PMIXLAB_HANDSHAKE_TIMEOUT. */
static void test_limit_defaults(void **state)
{
    char err[256];
    px_posix_limits lim;
    const char *vals[] = {NULL, "2.5", "0", "soon"};
    double want[] = {10.0, 2.5, 0.0, 10.0};

    for (int i = 0; i < 4; i++) {
        if (vals[i] == NULL)
            unsetenv("PMIXLAB_HANDSHAKE_TIMEOUT");
        else
            setenv("PMIXLAB_HANDSHAKE_TIMEOUT", vals[i], 1);
        px_posix *p = px_posix_create(true, err, sizeof err);
        assert_non_null(p);
        px_posix_get_limits(p, &lim);
        assert_true(lim.handshake_s == want[i]);
        assert_int_equal(lim.handshake_frame, 4096);
        assert_int_equal(lim.max_pending, 64);
        assert_int_equal(lim.max_queued, (size_t)64 << 20);
        px_posix_destroy(p);
    }
    unsetenv("PMIXLAB_HANDSHAKE_TIMEOUT");
}

/* A connection that never completes its handshake is closed when its
 * deadline runs out (the sink hears PMIX_ERR_TIMEOUT, the peer EOF); one
 * whose handshake is done is not. */
static void test_limit_handshake_deadline(void **state)
{
    fixture *fx = *state;
    fx_limits(fx, 0.5, 0, 0);
    fx_listen_connect(fx); /* connection 1: accepted by the "engine" */
    int fd = raw_connect(fx->uri);
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 2));
    assert_true(raw_eof(fd));
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    sleep_ms(600); /* connection 1's deadline would be over too */
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.closed, 1);
    assert_int_equal(fx->rs.closed_conn, 2);
    assert_int_equal(fx->rs.why, PMIX_ERR_TIMEOUT);
    ops->unlock(fx->srv);
    size_t len;
    void *f = make_frame(9, 100, &len);
    ops->lock(fx->cli);
    assert_int_equal(ops->send(fx->cli, PX_CONN_SERVER, f, len), PMIX_SUCCESS);
    ops->unlock(fx->cli);
    assert_true(wait_count(fx->srv, false, &fx->rs.frames, 1));
    close(fd);
}

/* Before its handshake a peer may send frames of handshake_frame bytes
 * and no more: a header that announces 200 MiB closes the connection at
 * once, without a buffer of that size. */
static void test_limit_handshake_frame(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    int fd = raw_connect(fx->uri);
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 2));
    size_t len;
    uint8_t *f = make_frame(5, 4096, &len);
    assert_int_equal(write(fd, f, len), (ssize_t)len);
    free(f);
    assert_true(wait_count(fx->srv, false, &fx->rs.frames, 1));
    f = make_frame(6, 1000, &len);
    for (int i = 0; i < 4; i++) /* announce 200 MiB, send 1000 bytes */
        f[12 + i] = (uint8_t)(((uint32_t)200 << 20) >> (8 * i));
    assert_int_equal(write(fd, f, len), (ssize_t)len);
    free(f);
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.closed_conn, 2);
    assert_int_equal(fx->rs.why, PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(fx->rs.frames, 1);
    ops->unlock(fx->srv);
    assert_true(raw_eof(fd));
    close(fd);
}

/* A client passes the server no descriptor: one that does is dropped at
 * once, and the descriptor is closed (the write end of a pipe: its read
 * end sees EOF). Nor a page or a region frame, without descriptors. */
static void test_limit_client_fds(void **state)
{
    fixture *fx = *state;
    int pp[2];
    char c;
    size_t len;
    uint8_t *f = make_frame(7, 16, &len);
    uint8_t page[PX_FRAME_HDR + 8], region[PX_FRAME_HDR + 16];

    fx_listen_connect(fx);
    int fd = raw_connect(fx->uri);
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 2));
    assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
    raw_sendmsg(fd, f, len, pp[1]);
    close(pp[1]);
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    assert_int_equal(read(pp[0], &c, 1), 0);
    close(pp[0]);
    close(fd);

    plat_hdr(page, 0x7f03, 8);
    put_le(page + PX_FRAME_HDR, 4096, 8);
    plat_hdr(region, 0x7f01, 16);
    memset(region + PX_FRAME_HDR, 0, 16); /* a known slab, no fd */
    put_le(region + PX_FRAME_HDR + 8, 64, 8);
    const uint8_t *bad[] = {page, region};
    size_t badlen[] = {sizeof page, sizeof region};
    for (int i = 0; i < 2; i++) {
        fd = raw_connect(fx->uri);
        assert_true(wait_count(fx->srv, false, &fx->rs.opened, 3 + i));
        assert_int_equal(write(fd, bad[i], badlen[i]), (ssize_t)badlen[i]);
        assert_true(wait_count(fx->srv, false, &fx->rs.closed, 2 + i));
        ops->lock(fx->srv);
        assert_int_equal(fx->rs.why, PMIX_ERR_UNPACK_FAILURE);
        ops->unlock(fx->srv);
        close(fd);
    }
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.frames, 0);
    ops->unlock(fx->srv);
    free(f);
}

/* At max_pending connections before their handshake, later ones wait in
 * the backlog: accepted when one of those closes, or completes its
 * handshake. */
static void test_limit_pending(void **state)
{
    fixture *fx = *state;
    char err[256] = "";
    fx_limits(fx, 0, 2, 0);
    assert_int_equal(
        px_posix_listen(fx->srv, fx->dir, &rec_sink, &fx->rs, &fx->uri, err, sizeof err),
        PMIX_SUCCESS);
    int a = raw_connect(fx->uri), b = raw_connect(fx->uri), c = raw_connect(fx->uri);
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 2));
    sleep_ms(300);
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.opened, 2);
    ops->unlock(fx->srv);
    close(a); /* connection 1 */
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 3));
    ops->conn_accepted(fx->srv, 2); /* b's handshake is done */
    int d = raw_connect(fx->uri);
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 4));
    int e = raw_connect(fx->uri);
    sleep_ms(300);
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.opened, 4);
    assert_int_equal(fx->rs.conn, 4);
    ops->unlock(fx->srv);
    close(b);
    close(c);
    close(d);
    close(e);
}

/* A peer that does not read: a frame of any size is queued when nothing
 * waits; one that would take the queue past max_queued drops the peer. */
static void test_limit_queued(void **state)
{
    fixture *fx = *state;
    size_t len;
    fx_limits(fx, 0, 0, (size_t)64 << 10);
    fx_listen_connect(fx);
    int fd = raw_connect(fx->uri);
    assert_true(wait_count(fx->srv, false, &fx->rs.opened, 2));
    ops->conn_accepted(fx->srv, 2);
    void *big = make_frame(1, (size_t)4 << 20, &len);
    ops->lock(fx->srv);
    assert_int_equal(ops->send(fx->srv, 2, big, len), PMIX_SUCCESS);
    ops->unlock(fx->srv);
    void *small = make_frame(2, 16, &len);
    ops->lock(fx->srv);
    assert_int_equal(ops->send(fx->srv, 2, small, len), PMIX_ERR_UNREACH);
    ops->unlock(fx->srv);
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.closed_conn, 2);
    assert_int_equal(fx->rs.why, PMIX_ERR_LOST_CONNECTION);
    ops->unlock(fx->srv);
    /* the client that reads is not concerned */
    small = make_frame(3, 16, &len);
    ops->lock(fx->srv);
    assert_int_equal(ops->send(fx->srv, 1, small, len), PMIX_SUCCESS);
    ops->unlock(fx->srv);
    assert_true(wait_count(fx->cli, false, &fx->rc.frames, 1));
    close(fd);
}

static void test_oversized_frame(void **state)
{
    fixture *fx = *state;
    px_posix_set_max_frame(fx->srv, 4096);
    fx_listen_connect(fx);
    size_t len;
    void *ok = make_frame(1, 4096, &len);
    ops->lock(fx->cli);
    assert_int_equal(ops->send(fx->cli, PX_CONN_SERVER, ok, len), PMIX_SUCCESS);
    ops->unlock(fx->cli);
    assert_true(wait_count(fx->srv, false, &fx->rs.frames, 1));
    void *big = make_frame(2, 4097, &len);
    ops->lock(fx->cli);
    assert_int_equal(ops->send(fx->cli, PX_CONN_SERVER, big, len), PMIX_SUCCESS);
    ops->unlock(fx->cli);
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.why, PMIX_ERR_OUT_OF_RESOURCE);
    assert_int_equal(fx->rs.frames, 1);
    ops->unlock(fx->srv);
    /* The client hears that its server went away. */
    assert_true(wait_count(fx->cli, false, &fx->rc.closed, 1));
    ops->lock(fx->cli);
    assert_int_equal(fx->rc.closed_conn, PX_CONN_SERVER);
    assert_int_equal(fx->rc.why, PMIX_ERR_LOST_CONNECTION);
    ops->unlock(fx->cli);
    /* Sending on a closed connection fails and frees the frame. */
    void *f = make_frame(3, 10, &len);
    ops->lock(fx->cli);
    assert_int_equal(ops->send(fx->cli, PX_CONN_SERVER, f, len), PMIX_ERR_UNREACH);
    ops->unlock(fx->cli);
}

static void test_refused_by_opened(void **state)
{
    fixture *fx = *state;
    fx->rs.opened_rc = PMIX_ERR_NO_PERMISSIONS;
    fx_listen_connect(fx);
    assert_true(wait_count(fx->cli, false, &fx->rc.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.closed, 0); /* a refusal is not reported back */
    ops->unlock(fx->srv);
}

static void test_engine_close(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    /* deliver refuses: the platform closes without calling `closed`. */
    fx->rs.deliver_rc = PMIX_ERR_BAD_PARAM;
    size_t len;
    void *f = make_frame(1, 10, &len);
    ops->lock(fx->cli);
    ops->send(fx->cli, PX_CONN_SERVER, f, len);
    ops->unlock(fx->cli);
    assert_true(wait_count(fx->cli, false, &fx->rc.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.frames, 1);
    assert_int_equal(fx->rs.closed, 0);
    ops->unlock(fx->srv);
    /* Closing from the client side: no callback; twice is a no-op. */
    ops->lock(fx->cli);
    ops->close(fx->cli, PX_CONN_SERVER);
    ops->close(fx->cli, PX_CONN_SERVER);
    ops->close(fx->cli, 12345);
    ops->unlock(fx->cli);
}

static void test_close_in_deliver(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    fx->rs.close_in_deliver = true;
    fx->rs.echo = true; /* queued, then flushed or dropped by the close */
    for (int i = 0; i < 3; i++) {
        size_t len;
        void *f = make_frame((uint32_t)i, 200000, &len);
        ops->lock(fx->cli);
        ops->send(fx->cli, PX_CONN_SERVER, f, len);
        ops->unlock(fx->cli);
    }
    assert_true(wait_count(fx->cli, false, &fx->rc.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.frames, 1); /* nothing delivered after the close */
    assert_int_equal(fx->rs.closed, 0);
    ops->unlock(fx->srv);
}

static void test_client_close_reported(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    ops->lock(fx->cli);
    ops->close(fx->cli, PX_CONN_SERVER);
    ops->unlock(fx->cli);
    assert_true(wait_count(fx->srv, false, &fx->rs.closed, 1));
    ops->lock(fx->srv);
    assert_int_equal(fx->rs.why, PMIX_ERR_LOST_CONNECTION);
    ops->unlock(fx->srv);
    ops->lock(fx->cli);
    assert_int_equal(fx->rc.closed, 0);
    ops->unlock(fx->cli);
}

static void test_destroy_with_queued_data(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    /* The server never reads fast enough to drain 16 MiB before destroy. */
    for (int i = 0; i < 16; i++) {
        size_t len;
        void *f = make_frame((uint32_t)i, (size_t)1 << 20, &len);
        ops->lock(fx->cli);
        ops->send(fx->cli, PX_CONN_SERVER, f, len);
        ops->unlock(fx->cli);
    }
    /* teardown destroys both with data in flight; ASan checks the frees. */
}

static void test_connect_errors(void **state)
{
    fixture *fx = *state;
    char err[256] = "";
    assert_int_equal(
        px_posix_connect(fx->cli, "tcp://1.2.3.4:5", 1, &rec_sink, &fx->rc, err, sizeof err),
        PMIX_ERR_BAD_PARAM);
    assert_true(strlen(err) > 0);
    err[0] = '\0';
    char uri[400];
    snprintf(uri, sizeof uri, "unix:%s/nothing/pmix.sock", fx->base);
    assert_int_equal(px_posix_connect(fx->cli, uri, 1, &rec_sink, &fx->rc, err, sizeof err),
                     PMIX_ERR_UNREACH);
    assert_non_null(strstr(err, "no PMIx server listens"));
    /* fx->dir was never made: teardown still checks it is absent. */
}

static void test_listen_dir_checks(void **state)
{
    fixture *fx = *state;
    char err[512] = "";
    char *uri = NULL;
    /* An existing directory with a looser mode is refused. */
    assert_int_equal(mkdir(fx->dir, 0700), 0);
    assert_int_equal(chmod(fx->dir, 0755), 0);
    assert_int_equal(px_posix_listen(fx->srv, fx->dir, &rec_sink, &fx->rs, &uri, err, sizeof err),
                     PMIX_ERR_NO_PERMISSIONS);
    assert_null(uri);
    assert_non_null(strstr(err, "chmod 700"));
    /* A private one is accepted and left in place at destroy. */
    assert_int_equal(chmod(fx->dir, 0700), 0);
    assert_int_equal(px_posix_listen(fx->srv, fx->dir, &rec_sink, &fx->rs, &uri, err, sizeof err),
                     PMIX_SUCCESS);
    /* A second server on the same directory is refused: one answers there. */
    char err2[512] = "";
    char *uri2 = NULL;
    char e3[64];
    px_posix *other = px_posix_create(false, e3, sizeof e3);
    assert_int_equal(px_posix_listen(other, fx->dir, &rec_sink, &fx->rs, &uri2, err2, sizeof err2),
                     PMIX_ERR_EXISTS);
    px_posix_destroy(other);
    /* A stale socket (its server gone without cleanup) is replaced. */
    char sock[400];
    snprintf(sock, sizeof sock, "%s/pmix.sock", fx->dir);
    px_posix_destroy(fx->srv);
    fx->srv = px_posix_create(false, e3, sizeof e3);
    fx->rs.p = fx->srv;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    assert_true(strlen(sock) < sizeof sa.sun_path);
    memcpy(sa.sun_path, sock, strlen(sock) + 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    close(fd); /* bound, never listened: connect is refused */
    free(uri);
    uri = NULL;
    assert_int_equal(px_posix_listen(fx->srv, fx->dir, &rec_sink, &fx->rs, &uri, err, sizeof err),
                     PMIX_SUCCESS);
    free(uri);
    px_posix_destroy(fx->srv);
    fx->srv = px_posix_create(false, e3, sizeof e3);
    struct stat st;
    assert_int_not_equal(lstat(sock, &st), 0);
    /* We did not create the directory, so destroy left it. */
    assert_int_equal(lstat(fx->dir, &st), 0);
    assert_int_equal(rmdir(fx->dir), 0);
}

/* ---- timers ---- */

typedef struct tstate {
    px_posix *p;
    int fired[8];
    int order[8];
    int n;
    px_wait w;
} tstate;

typedef struct targ {
    tstate *ts;
    int idx;
} targ;

static void timer_cb(void *arg)
{
    targ *a = arg;
    a->ts->fired[a->idx]++;
    a->ts->order[a->ts->n++] = a->idx;
    ops->wake(a->ts->p, &a->ts->w);
}

static void run_timers(bool external)
{
    char err[64];
    tstate ts = {0};
    targ a[4];
    ts.p = px_posix_create(external, err, sizeof err);
    assert_non_null(ts.p);
    for (int i = 0; i < 4; i++)
        a[i] = (targ){&ts, i};
    ops->lock(ts.p);
    double t0 = ops->now(ts.p);
    px_timer *t1 = ops->timer_start(ts.p, 0.10, timer_cb, &a[1]);
    px_timer *t0_ = ops->timer_start(ts.p, 0.02, timer_cb, &a[0]);
    px_timer *t2 = ops->timer_start(ts.p, 0.05, timer_cb, &a[2]);
    px_timer *t3 = ops->timer_start(ts.p, 30.0, timer_cb, &a[3]); /* left for destroy */
    assert_non_null(t0_);
    assert_non_null(t1);
    assert_non_null(t2);
    assert_non_null(t3);
    ops->timer_cancel(ts.p, t2);
    ops->unlock(ts.p);
    /* Wait for the last expected one (t1); the wait drives the loop when
     * external. */
    for (;;) {
        ts.w = (px_wait){0};
        ops->wait(ts.p, &ts.w);
        ops->lock(ts.p);
        bool done = ts.fired[1] > 0;
        ops->unlock(ts.p);
        if (done)
            break;
    }
    double elapsed = ops->now(ts.p) - t0;
    assert_true(elapsed >= 0.099);
    assert_true(elapsed < 5.0);
    assert_int_equal(ts.fired[0], 1);
    assert_int_equal(ts.fired[1], 1);
    assert_int_equal(ts.fired[2], 0);
    assert_int_equal(ts.fired[3], 0);
    assert_int_equal(ts.order[0], 0);
    assert_int_equal(ts.order[1], 1);
    px_posix_destroy(ts.p);
}

static void test_timers(void **state)
{
    run_timers(false);
}

static void test_timers_external(void **state)
{
    run_timers(true);
}

static void noop_cb(void *arg)
{
    (*(int *)arg)++;
}

static void test_timer_cancel_race(void **state)
{
    /* Timers due now, cancelled while the progress thread may already be
     * in their callback waiting for the lock: never run after cancel, no
     * leak, no use after free. */
    char err[64];
    px_posix *p = px_posix_create(false, err, sizeof err);
    int count = 0;
    for (int i = 0; i < 2000; i++) {
        ops->lock(p);
        px_timer *t = ops->timer_start(p, 0.0, noop_cb, &count);
        int before = count;
        ops->unlock(p);
        if (i % 3 == 0)
            sched_yield();
        ops->lock(p);
        if (count == before) /* not fired yet: the engine may cancel it */
            ops->timer_cancel(p, t);
        ops->unlock(p);
    }
    px_posix_destroy(p);
}

static void test_stop_then_cancel(void **state)
{
    /* After px_posix_stop nothing fires, and an engine being destroyed can
     * still cancel its timers: the platform is freed only afterwards. */
    char err[64];
    px_posix *p = px_posix_create(false, err, sizeof err);
    int count = 0;
    assert_non_null(p);
    ops->lock(p);
    px_timer *soon = ops->timer_start(p, 0.02, noop_cb, &count);
    px_timer *late = ops->timer_start(p, 30.0, noop_cb, &count);
    ops->unlock(p);
    assert_non_null(soon);
    assert_non_null(late);
    assert_true(px_posix_stop(p));
    sleep_ms(50); /* `soon` is due: with the thread stopped it stays put */
    ops->lock(p);
    ops->timer_cancel(p, soon);
    ops->timer_cancel(p, late);
    ops->unlock(p);
    assert_int_equal(count, 0);
    assert_true(px_posix_stop(p)); /* again: nothing to do */
    px_posix_destroy(p);
}

/* ---- wait / wake ---- */

typedef struct waker {
    px_posix *p;
    px_wait *w;
    int delay_ms;
} waker;

static void *waker_main(void *arg)
{
    waker *k = arg;
    sleep_ms(k->delay_ms);
    ops->lock(k->p);
    ops->wake(k->p, k->w);
    ops->unlock(k->p);
    return NULL;
}

static void run_wait_wake(bool external)
{
    char err[64];
    px_posix *p = px_posix_create(external, err, sizeof err);
    /* wake before wait */
    px_wait w = {0};
    ops->lock(p);
    ops->wake(p, &w);
    ops->unlock(p);
    ops->wait(p, &w);
    assert_true(w.done);
    /* wake from another thread while we wait (in external mode this thread
     * drives the loop and must be nudged out of it) */
    for (int i = 0; i < 20; i++) {
        px_wait w2 = {0};
        waker k = {p, &w2, i % 4};
        pthread_t th;
        pthread_create(&th, NULL, waker_main, &k);
        ops->wait(p, &w2);
        assert_true(w2.done);
        pthread_join(th, NULL);
    }
    px_posix_destroy(p);
}

static void test_wait_wake(void **state)
{
    run_wait_wake(false);
}

static void test_wait_wake_external(void **state)
{
    run_wait_wake(true);
}

/* Two threads wait at once under external progress: one drives the loop,
 * the other sleeps until its own timer's callback wakes it. */
typedef struct twoway {
    px_posix *p;
    px_wait w;
} twoway;

static void wake_cb(void *arg)
{
    twoway *t = arg;
    ops->wake(t->p, &t->w);
}

static void *waiter_main(void *arg)
{
    twoway *t = arg;
    ops->lock(t->p);
    ops->timer_start(t->p, 0.05, wake_cb, t);
    ops->unlock(t->p);
    ops->wait(t->p, &t->w);
    return NULL;
}

static void test_external_two_waiters(void **state)
{
    char err[64];
    px_posix *p = px_posix_create(true, err, sizeof err);
    twoway a = {p, {0}}, b = {p, {0}};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, waiter_main, &a);
    pthread_create(&tb, NULL, waiter_main, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_true(a.w.done);
    assert_true(b.w.done);
    px_posix_destroy(p);
}

/* Under external progress, a frame arrives during `wait`. */
static void test_external_deliver_in_wait(void **state)
{
    fixture *fx = *state;
    fx_listen_connect(fx);
    size_t len;
    void *f = make_frame(9, 1000, &len);
    fx->rs.echo = true;
    ops->lock(fx->cli);
    ops->send(fx->cli, PX_CONN_SERVER, f, len);
    ops->unlock(fx->cli);
    assert_true(wait_count(fx->srv, true, &fx->rs.frames, 1));
    assert_true(wait_count(fx->cli, true, &fx->rc.frames, 1));
    ops->lock(fx->cli);
    assert_int_equal(fx->rc.bad_frames, 0);
    ops->unlock(fx->cli);
}

/* ---- a host on the loop: watches and px_posix_run_once ---- */

typedef struct wrec {
    px_posix *p;
    int fd;
    int reads, writes;
    px_posix_watch *self;   /* destroyed from its own callback when set */
    px_posix_watch *victim; /* destroyed by this callback when set */
    bool locked;            /* ran as the loop's driver (inside px_posix_run_once) */
} wrec;

static void wrec_cb(void *arg, unsigned what)
{
    wrec *w = arg;
    char buf[64];

    ops->lock(w->p); /* recursive: the callback runs with it held */
    w->locked = ops->in_callback(w->p);
    ops->unlock(w->p);
    if (what & PX_POSIX_READ) {
        w->reads++;
        if (read(w->fd, buf, sizeof buf) < 0 && errno != EAGAIN)
            w->reads += 1000;
    }
    if (what & PX_POSIX_WRITE)
        w->writes++;
    if (w->self != NULL) {
        px_posix_watch_destroy(w->self);
        w->self = NULL;
    }
    if (w->victim != NULL) {
        px_posix_watch_destroy(w->victim);
        w->victim = NULL;
    }
}

/* A pipe's read end: the callback runs inside px_posix_run_once, with the
 * engine lock held, only while the watch wants reading; a turn with
 * nothing ready returns at its timeout, not before and not much after. */
static void test_watch_pipe(void **state)
{
    char err[128];
    int fds[2];
    px_posix *p = px_posix_create(true, err, sizeof err);
    wrec w = {0};

    assert_non_null(p);
    assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    w.p = p;
    w.fd = fds[0];
    px_posix_watch *pw = px_posix_watch_create(p, fds[0], PX_POSIX_READ, wrec_cb, &w);
    assert_non_null(pw);
    px_posix_run_once(p, 0);
    assert_int_equal(w.reads, 0);
    assert_int_equal(write(fds[1], "x", 1), 1);
    px_posix_run_once(p, 5.0);
    assert_int_equal(w.reads, 1);
    assert_true(w.locked);

    /* not wanted: no call; the turn lasts its timeout */
    assert_int_equal(px_posix_watch_set(pw, 0), 0);
    assert_int_equal(write(fds[1], "y", 1), 1);
    double t0 = now_s();
    px_posix_run_once(p, 0.2);
    double took = now_s() - t0;
    assert_int_equal(w.reads, 1);
    assert_true(took >= 0.19);
    assert_true(took < 2.0);
    assert_int_equal(px_posix_watch_set(pw, PX_POSIX_READ), 0);
    px_posix_run_once(p, 5.0);
    assert_int_equal(w.reads, 2);

    /* the write end is writable at once; a watch that destroys itself in
     * its callback is not called again */
    wrec ww = {.p = p, .fd = fds[1]};
    ww.self = px_posix_watch_create(p, fds[1], PX_POSIX_WRITE, wrec_cb, &ww);
    assert_non_null(ww.self);
    px_posix_run_once(p, 5.0);
    assert_int_equal(ww.writes, 1);
    assert_null(ww.self);
    px_posix_run_once(p, 0);
    assert_int_equal(ww.writes, 1);

    px_posix_watch_destroy(pw);
    px_posix_watch_destroy(NULL);
    close(fds[0]);
    close(fds[1]);
    px_posix_destroy(p);
}

/* Two watches ready in the same turn: the first destroys the second,
 * whose callback then never runs. */
static void test_watch_destroy_other(void **state)
{
    char err[128];
    int a[2], b[2];
    px_posix *p = px_posix_create(true, err, sizeof err);
    wrec wa = {0}, wb = {0};

    assert_non_null(p);
    assert_int_equal(pipe2(a, O_NONBLOCK | O_CLOEXEC), 0);
    assert_int_equal(pipe2(b, O_NONBLOCK | O_CLOEXEC), 0);
    wa.p = wb.p = p;
    wa.fd = a[0];
    wb.fd = b[0];
    px_posix_watch *x = px_posix_watch_create(p, a[0], PX_POSIX_READ, wrec_cb, &wa);
    px_posix_watch *y = px_posix_watch_create(p, b[0], PX_POSIX_READ, wrec_cb, &wb);
    assert_non_null(x);
    assert_non_null(y);
    wa.victim = y;
    wb.victim = x;
    assert_int_equal(write(a[1], "x", 1), 1);
    assert_int_equal(write(b[1], "x", 1), 1);
    px_posix_run_once(p, 5.0);
    assert_int_equal(wa.reads + wb.reads, 1); /* whichever ran first freed the other */
    px_posix_watch_destroy(wa.reads == 1 ? x : y);
    for (int i = 0; i < 2; i++) {
        close(a[i]);
        close(b[i]);
    }
    px_posix_destroy(p);
}

/* A regular file and /dev/null cannot be watched by epoll: they are always
 * ready, as poll() says, and a turn with one wanting does not sleep. */
static void test_watch_always_ready(void **state)
{
    char err[128], path[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/test_posix_watch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    px_posix *p = px_posix_create(true, err, sizeof err);
    int fd = mkstemp(path), dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
    wrec w = {0}, wn = {0};

    assert_non_null(p);
    assert_true(fd >= 0);
    assert_true(dn >= 0);
    unlink(path);
    w.p = wn.p = p;
    w.fd = fd;
    wn.fd = dn;
    px_posix_watch *pw = px_posix_watch_create(p, fd, PX_POSIX_READ, wrec_cb, &w);
    px_posix_watch *pn = px_posix_watch_create(p, dn, PX_POSIX_READ, wrec_cb, &wn);
    assert_non_null(pw);
    assert_non_null(pn);
    double t0 = now_s();
    px_posix_run_once(p, 10.0);
    px_posix_run_once(p, 10.0);
    assert_true(now_s() - t0 < 5.0);
    assert_int_equal(w.reads, 2);
    assert_int_equal(wn.reads, 2);
    assert_int_equal(px_posix_watch_set(pw, 0), 0);
    px_posix_watch_destroy(pn);
    px_posix_run_once(p, 0.05);
    assert_int_equal(w.reads, 2);
    assert_int_equal(wn.reads, 2);
    px_posix_watch_destroy(pw);
    /* a closed descriptor cannot be watched; nor can anything on a
     * platform with a progress thread */
    close(fd);
    close(dn);
    assert_null(px_posix_watch_create(p, fd, PX_POSIX_READ, wrec_cb, &w));
    px_posix *t = px_posix_create(false, err, sizeof err);
    int fds[2];
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    assert_null(px_posix_watch_create(t, fds[0], PX_POSIX_READ, wrec_cb, &w));
    close(fds[0]);
    close(fds[1]);
    px_posix_destroy(t);
    px_posix_destroy(p);
}

/* A host's watch that only notes readiness (pmixrun's loop reads after the
 * turn): on a pipe left unread beside an always-ready watch, one turn calls
 * each callback once and returns. It stops wanting after many calls, so a
 * loop that ran it again and again fails the count instead of hanging. */
typedef struct noter {
    px_posix_watch *w;
    int calls;
} noter;

static void noter_cb(void *arg, unsigned what)
{
    noter *n = arg;
    (void)what;
    if (++n->calls >= 1000)
        px_posix_watch_set(n->w, 0);
}

static void test_watch_unread_beside_always(void **state)
{
    char err[128];
    int fds[2], dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
    px_posix *p = px_posix_create(true, err, sizeof err);
    noter np = {0}, nn = {0};

    (void)state;
    assert_non_null(p);
    assert_true(dn >= 0);
    assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    assert_int_equal(write(fds[1], "x", 1), 1);
    np.w = px_posix_watch_create(p, fds[0], PX_POSIX_READ, noter_cb, &np);
    nn.w = px_posix_watch_create(p, dn, PX_POSIX_READ, noter_cb, &nn);
    assert_non_null(np.w);
    assert_non_null(nn.w);
    px_posix_run_once(p, 5.0);
    assert_int_equal(np.calls, 1);
    assert_int_equal(nn.calls, 1);
    px_posix_run_once(p, 0);
    assert_int_equal(np.calls, 2);
    assert_int_equal(nn.calls, 2);
    px_posix_watch_destroy(np.w);
    px_posix_watch_destroy(nn.w);
    close(fds[0]);
    close(fds[1]);
    close(dn);
    px_posix_destroy(p);
}

/* The engines' side of one loop: a listener and a timer of a platform
 * made for external progress are served by px_posix_run_once alone, with
 * a host's watch beside them. */
static void timer_count(void *arg)
{
    (*(int *)arg)++;
}

static void test_run_once_serves_engines(void **state)
{
    fixture *fx = *state;
    char err[256] = "";
    int fired = 0, fds[2];
    wrec w = {0};

    assert_int_equal(
        px_posix_listen(fx->srv, fx->dir, &rec_sink, &fx->rs, &fx->uri, err, sizeof err),
        PMIX_SUCCESS);
    assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
    w.p = fx->srv;
    w.fd = fds[0];
    px_posix_watch *pw = px_posix_watch_create(fx->srv, fds[0], PX_POSIX_READ, wrec_cb, &w);
    assert_non_null(pw);
    assert_int_equal(px_posix_connect(fx->cli, fx->uri, 5.0, &rec_sink, &fx->rc, err, sizeof err),
                     PMIX_SUCCESS);
    size_t len;
    void *f = make_frame(42, 100, &len);
    assert_int_equal(ops->send(fx->cli, PX_CONN_SERVER, f, len), PMIX_SUCCESS);
    ops->timer_start(fx->srv, 0.05, timer_count, &fired);
    assert_int_equal(write(fds[1], "x", 1), 1);
    double deadline = now_s() + 10.0;
    for (;;) {
        px_posix_progress(fx->cli); /* the client's side of the exchange */
        px_posix_run_once(fx->srv, 0.01);
        ops->lock(fx->srv);
        bool done = fx->rs.frames == 1 && fired == 1 && w.reads == 1;
        ops->unlock(fx->srv);
        if (done || now_s() > deadline)
            break;
    }
    assert_int_equal(fx->rs.opened, 1);
    assert_int_equal(fx->rs.frames, 1);
    assert_int_equal(fx->rs.bad_frames, 0);
    assert_int_equal(fired, 1);
    assert_int_equal(w.reads, 1);
    px_posix_watch_destroy(pw);
    close(fds[0]);
    close(fds[1]);
}

static void test_log(void **state)
{
    char err[64];
    px_posix *p = px_posix_create(true, err, sizeof err);
    assert_non_null(ops->log);
    ops->log(p, PX_LOG_ERROR, "test_posix: this error line is expected");
    ops->log(p, PX_LOG_DEBUG, "test_posix: this debug line must not appear by default");
    px_posix_destroy(p);
}

int main(void)
{
    ops = px_posix_ops();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_destroy),
        cmocka_unit_test(test_page_write_trim),
        cmocka_unit_test_setup_teardown(test_peercred, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_conn_ids, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_small_frames, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_empty_payload, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_big_frames, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_big_frames_external, fx_setup_ext, fx_teardown),
        cmocka_unit_test_setup_teardown(test_garbage_header, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_oversized_frame, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_page_fd_dropped, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_page_bound, fx_setup, fx_teardown),
        cmocka_unit_test(test_bound_to),
        cmocka_unit_test_setup_teardown(test_regions, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_region_without_fd, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_region_reuse, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_region_slab_trim, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_region_append_partial, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_fd_matched_by_place, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_fd_stray, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_region_bad_release, fx_setup, fx_teardown),
        cmocka_unit_test(test_limit_defaults),
        cmocka_unit_test_setup_teardown(test_limit_handshake_deadline, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_limit_handshake_frame, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_limit_client_fds, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_limit_pending, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_limit_queued, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_refused_by_opened, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_engine_close, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_close_in_deliver, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_client_close_reported, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_destroy_with_queued_data, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_connect_errors, fx_setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_listen_dir_checks, fx_setup, fx_teardown),
        cmocka_unit_test(test_timers),
        cmocka_unit_test(test_timers_external),
        cmocka_unit_test(test_timer_cancel_race),
        cmocka_unit_test(test_stop_then_cancel),
        cmocka_unit_test(test_wait_wake),
        cmocka_unit_test(test_wait_wake_external),
        cmocka_unit_test(test_external_two_waiters),
        cmocka_unit_test_setup_teardown(test_external_deliver_in_wait, fx_setup_ext, fx_teardown),
        cmocka_unit_test(test_watch_pipe),
        cmocka_unit_test(test_watch_destroy_other),
        cmocka_unit_test(test_watch_always_ready),
        cmocka_unit_test(test_watch_unread_beside_always),
        cmocka_unit_test_setup_teardown(test_run_once_serves_engines, fx_setup_ext, fx_teardown),
        cmocka_unit_test(test_log),
    };
    return cmocka_run_group_tests_name("posix", tests, NULL, NULL);
}
