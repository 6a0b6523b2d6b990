/*
 * sock_rules - the server's socket must survive clients that are not PMIx
 * clients at all, and must refuse other users.
 *
 * The PMIx job itself is ordinary: every rank initializes, fences, exchanges
 * a value and finalizes. Rank 0 additionally starts a helper process (fork +
 * exec of this program in a helper mode) that is not a member of the job: it
 * never calls PMIx, it reads the server's address from PMIX_SERVER_URI
 * ("unix:<path>", pmixlab's rendezvous) and attacks the socket directly. The
 * helper reports through its exit status; rank 0 turns that into the test
 * result after the rest of the job has shown it still works.
 *
 * Modes (run by every rank under pmixrun):
 *   garbage      the helper keeps one connection open with half a frame
 *                header while the ranks fence (the server must not stall on
 *                it), then sends 4 KiB of random bytes on a second connection
 *                and a frame header announcing a 4 GiB payload on a third: the
 *                server must drop both (EOF or reset within 5 s).
 *   foreign_uid  the helper becomes user nobody (65534) and connects: the
 *                connection must be refused (the socket's directory is 0700)
 *                or closed by the server's credential check within 5 s.
 *                Exits 77 (skipped) unless run as root.
 * Helper modes (started by rank 0, not by hand): helper-garbage URI,
 * helper-foreign URI.
 */
#include "ptest.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

/* ---- the helper (no PMIx) --------------------------------------------------- */

static int connect_uri(const char *uri, int *err)
{
    *err = 0;
    if (strncmp(uri, "unix:", 5) != 0) {
        *err = EINVAL;
        return -1;
    }
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", uri + 5);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        *err = errno;
        close(fd);
        return -1;
    }
    return fd;
}

/* Did the server close `fd` within `seconds`? Data it sends is read and
 * counted; true on EOF or a reset. */
static bool dropped_within(int fd, double seconds, size_t *received)
{
    double end = pt_now() + seconds;
    *received = 0;
    for (;;) {
        double left = end - pt_now();
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, (int)(left * 1000) + 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        char buf[4096];
        ssize_t r = read(fd, buf, sizeof buf);
        if (r == 0)
            return true;
        if (r < 0)
            return errno == ECONNRESET || errno == EPIPE;
        *received += (size_t)r;
    }
}

/* Send, tolerating the server hanging up on us half-way. */
static void send_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        len -= (size_t)w;
    }
}

static void put_le32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static int helper_garbage(const char *uri)
{
    int fails = 0, err;
    size_t got;

    /* 1. Half a frame header, held open while the job fences. */
    int slow = connect_uri(uri, &err);
    if (slow < 0) {
        printf("[garbage helper] cannot connect to %s: %s\n", uri, strerror(err));
        return 4;
    }
    send_all(slow, "PMX", 3);

    /* 2. Random bytes. */
    int fd = connect_uri(uri, &err);
    if (fd < 0) {
        printf("[garbage helper] second connection refused: %s\n", strerror(err));
        return 4;
    }
    unsigned char junk[4096];
    unsigned seed = (unsigned)getpid();
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)rand_r(&seed);
    send_all(fd, junk, sizeof junk);
    if (dropped_within(fd, 5.0, &got)) {
        printf("[garbage helper] random bytes: server dropped the connection (%zu bytes back)\n",
               got);
    } else {
        printf("[garbage helper] FAIL: server kept a connection that sent 4 KiB of random bytes\n");
        fails |= 1;
    }
    close(fd);

    /* 3. A well-formed header (pmixlab frame: magic "PMX1", version 1) that
     * announces a payload of 4 GiB - 1. */
    fd = connect_uri(uri, &err);
    if (fd < 0) {
        printf("[garbage helper] third connection refused: %s\n", strerror(err));
        return 4;
    }
    unsigned char hdr[16];
    memcpy(hdr, "PMX1", 4);
    hdr[4] = 1;
    hdr[5] = 0; /* version 1 */
    hdr[6] = 0x01;
    hdr[7] = 0x00; /* some message type */
    put_le32(hdr + 8, 1);
    put_le32(hdr + 12, 0xffffffffu);
    send_all(fd, hdr, sizeof hdr);
    send_all(fd, junk, 1024);
    if (dropped_within(fd, 5.0, &got)) {
        printf("[garbage helper] 4 GiB frame header: server dropped the connection\n");
    } else {
        printf("[garbage helper] FAIL: server kept a connection announcing a 4 GiB frame\n");
        fails |= 2;
    }
    close(fd);

    /* Keep the half-open connection a little longer, then go. */
    pt_sleep(2.0);
    close(slow);
    fflush(stdout);
    return fails;
}

static int helper_foreign(const char *uri)
{
    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
        printf("[foreign helper] cannot become nobody: %s\n", strerror(errno));
        return 4;
    }
    int err;
    int fd = connect_uri(uri, &err);
    if (fd < 0) {
        printf("[foreign helper] connection as uid 65534 refused: %s\n", strerror(err));
        return 0;
    }
    /* Connected: the server must hang up on us (credential check). */
    unsigned char hello[16] = {'P', 'M', 'X', '1', 1, 0};
    send_all(fd, hello, sizeof hello);
    size_t got;
    if (dropped_within(fd, 5.0, &got)) {
        printf("[foreign helper] connected as uid 65534 but the server closed the connection "
               "(%zu bytes back)\n",
               got);
        close(fd);
        return 0;
    }
    printf("[foreign helper] FAIL: uid 65534 connected and the server kept the connection\n");
    close(fd);
    return 1;
}

/* ---- the job ---------------------------------------------------------------- */

static pid_t start_helper(const char *mode, const char *uri)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char *args[] = {(char *)"sock_rules", (char *)mode, (char *)uri, NULL};
        execv("/proc/self/exe", args);
        _exit(127);
    }
    return pid;
}

/* Wait up to `seconds` for the helper; returns its exit status or -1. */
static int wait_helper(pid_t pid, double seconds)
{
    double end = pt_now() + seconds;
    int st;
    while (pt_now() < end) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        pt_sleep(0.05);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* The ordinary part of the job: fences and a small exchange. */
static void job_work(void)
{
    for (int i = 0; i < 3; i++)
        pt_barrier("fence while the helper works");
    pmix_status_t rc = pt_put_u32(PMIX_GLOBAL, "sock.v", 40 + pt.me.rank);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS)
        pt_fail("put/commit failed: %s", pt_err(rc));
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, true);
    pt_phase("collecting fence while the helper works");
    if ((rc = PMIx_Fence(NULL, 0, &c, 1)) != PMIX_SUCCESS)
        pt_fail("collecting fence failed: %s", pt_err(rc));
    pmix_proc_t peer;
    pt_proc(&peer, pt.me.nspace, (pt.me.rank + 1) % pt.size);
    pmix_value_t *v = pt_get_typed(&peer, "sock.v", NULL, 0, PMIX_UINT32);
    if (v != NULL && v->data.uint32 != 40 + peer.rank)
        pt_fail("rank %u's value is %u", (unsigned)peer.rank, v->data.uint32);
    pt_value_free(v);
}

static int run_job(const char *mode)
{
    bool foreign = strcmp(mode, "foreign_uid") == 0;
    pt_start("sock_rules", mode, NULL, 0);
    pid_t helper = -1;
    bool skip = false;
    if (pt.me.rank == 0) {
        const char *uri = getenv("PMIX_SERVER_URI");
        if (uri == NULL || strncmp(uri, "unix:", 5) != 0) {
            pt_fail("PMIX_SERVER_URI is %s; expected \"unix:<path>\"", uri ? uri : "not set");
        } else if (foreign && geteuid() != 0) {
            pt_note("SKIP: the foreign-uid test needs root to become another user");
            skip = true;
        } else {
            helper = start_helper(foreign ? "helper-foreign" : "helper-garbage", uri);
            if (helper < 0)
                pt_fail("fork: %s", strerror(errno));
        }
    }
    job_work();
    if (helper > 0) {
        pt_phase("waiting for the helper");
        int st = wait_helper(helper, 20.0);
        if (st == 0)
            pt_note("helper: the server dropped / refused every bad connection");
        else if (st < 0)
            pt_fail("the helper did not finish within 20 s (the server holds its connections?)");
        else if (st == 4 || st == 127)
            pt_fail("the helper could not run its checks (status %d)", st);
        else
            pt_fail("the server accepted what it should have refused (helper status %d, see "
                    "its lines above)",
                    st);
    }
    pt_barrier("final fence");
    int code = pt_result();
    return code == 0 && skip ? 77 : code;
}

int main(int argc, char **argv)
{
    const char *modes = "garbage foreign_uid";
    if (argc < 2)
        pt_usage(argv[0], modes);
    const char *m = argv[1];
    pt.prog = "sock_rules";
    pt.mode = m;
    if (strcmp(m, "helper-garbage") == 0 && argc > 2)
        return helper_garbage(argv[2]);
    if (strcmp(m, "helper-foreign") == 0 && argc > 2)
        return helper_foreign(argv[2]);
    pt_watchdog(50);
    if (strcmp(m, "garbage") == 0 || strcmp(m, "foreign_uid") == 0)
        return run_job(m);
    pt_usage(argv[0], modes);
    return 2;
}
