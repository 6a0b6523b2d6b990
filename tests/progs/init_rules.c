/*
 * init_rules - rules of PMIx_Init, PMIx_Finalize, PMIx_Initialized,
 * PMIx_Get_version and PMIx_Progress (Standard, "Client Initialization and
 * Finalization").
 *
 * Modes run under pmixrun:
 *   nested         Init twice: the second call returns the same proc, the
 *                  library is reference counted (PMIx_Initialized stays 1 and
 *                  the library keeps working after the inner Finalize; 0 after
 *                  the outer one). This is what Open MPI 4.1 does.
 *   conflict       Init with PMIX_EXTERNAL_PROGRESS=true, again with the same
 *                  directive (accepted), then with false: a conflicting
 *                  directive is rejected, and the rejected call leaves the
 *                  reference count unchanged.
 *   version        PMIx_Get_version() works before Init and starts with a
 *                  character >= '3' (Open MPI refuses anything older).
 *   progress       PMIx_Progress is callable with the progress thread, and a
 *                  library initialized with PMIX_EXTERNAL_PROGRESS completes
 *                  blocking calls and, driven by PMIx_Progress, callbacks.
 *   embed_barrier  PMIx_Finalize with PMIX_EMBED_BARRIER=true waits for every
 *                  process: rank r enters it r*0.3 s late, so rank 0's
 *                  Finalize must last about (N-1)*0.3 s.
 * Modes run directly, without pmixrun:
 *   noserver       no PMIx environment at all: Init returns an error (no hang,
 *                  no crash), Initialized stays 0, a second attempt fails too.
 *   badserver      a PMIx environment whose server URI leads nowhere, then a
 *                  malformed URI: Init fails promptly.
 *   mute_server    (robustness, beyond the Standard's text) a server socket
 *                  that accepts and never answers, then one that accepts and
 *                  closes at once: Init fails within a bound instead of hanging.
 */
#include "ptest.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static bool same_proc(const pmix_proc_t *a, const pmix_proc_t *b)
{
    return a->rank == b->rank && strncmp(a->nspace, b->nspace, PMIX_MAX_NSLEN) == 0;
}

static void mode_nested(void)
{
    pmix_proc_t p1, p2;
    pt.prog = "init_rules";
    pt.mode = "nested";
    if (PMIx_Initialized() != 0)
        pt_fail("PMIx_Initialized() is %d before PMIx_Init, expected 0", PMIx_Initialized());

    pt_phase("first PMIx_Init");
    pmix_status_t rc = PMIx_Init(&p1, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        pt_fail("first PMIx_Init failed: %s", pt_err(rc));
        exit(1);
    }
    pt.me = p1;
    pt.initialized = true;
    pt.have_id = true;
    if (PMIx_Initialized() != 1)
        pt_fail("PMIx_Initialized() is %d after PMIx_Init, expected 1", PMIx_Initialized());

    pt_phase("second PMIx_Init");
    rc = PMIx_Init(&p2, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        pt_fail("second (nested) PMIx_Init failed: %s", pt_err(rc));
        exit(1);
    }
    if (!same_proc(&p1, &p2))
        pt_fail("nested PMIx_Init returned %s:%u, first returned %s:%u", p2.nspace,
                (unsigned)p2.rank, p1.nspace, (unsigned)p1.rank);

    /* A third Init with a NULL proc is allowed too. */
    rc = PMIx_Init(NULL, NULL, 0);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Init(NULL proc) failed: %s", pt_err(rc));
    else if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
        pt_fail("Finalize balancing Init(NULL) failed: %s", pt_err(rc));

    pt_phase("inner PMIx_Finalize");
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS)
        pt_fail("inner PMIx_Finalize failed: %s", pt_err(rc));
    if (PMIx_Initialized() != 1)
        pt_fail("PMIx_Initialized() is %d after the inner Finalize, expected 1 (reference count)",
                PMIx_Initialized());
    PMIx_Progress(); /* callable with the internal progress thread */

    /* The library must still work: job data and a fence with every peer. */
    pt_proc(&pt.wild, pt.me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = pt_get_typed(&pt.wild, PMIX_JOB_SIZE, NULL, 0, PMIX_UINT32);
    if (v != NULL) {
        pt.size = v->data.uint32;
        pt_value_free(v);
    }
    pt_barrier("PMIx_Fence after the inner Finalize");

    pt_phase("outer PMIx_Finalize");
    rc = PMIx_Finalize(NULL, 0);
    pt.initialized = false;
    if (rc != PMIX_SUCCESS)
        pt_fail("outer PMIx_Finalize failed: %s", pt_err(rc));
    if (PMIx_Initialized() != 0)
        pt_fail("PMIx_Initialized() is %d after the last Finalize, expected 0", PMIx_Initialized());

    /* Calls after the last Finalize fail cleanly: no crash, no hang. */
    pt_phase("calls after the last Finalize");
    pmix_value_t *after = NULL;
    rc = PMIx_Get(&pt.wild, PMIX_JOB_SIZE, NULL, 0, &after);
    if (rc == PMIX_SUCCESS) {
        pt_fail("PMIx_Get after the last Finalize succeeded");
        pt_value_free(after);
    }
    if ((rc = pt_put_u32(PMIX_GLOBAL, "init.after", 1)) == PMIX_SUCCESS)
        pt_fail("PMIx_Put after the last Finalize succeeded");
    if ((rc = PMIx_Commit()) == PMIX_SUCCESS)
        pt_fail("PMIx_Commit after the last Finalize succeeded");
    if ((rc = PMIx_Fence(NULL, 0, NULL, 0)) == PMIX_SUCCESS)
        pt_fail("PMIx_Fence after the last Finalize succeeded");
    else
        pt_note("PMIx_Fence after the last Finalize: %s", pt_err(rc));
    if ((rc = PMIx_Finalize(NULL, 0)) == PMIX_SUCCESS)
        pt_fail("an extra PMIx_Finalize succeeded; the reference count went below zero");
}

static void mode_conflict(void)
{
    pmix_info_t on, off;
    pmix_proc_t p2;
    pt_info_bool(&on, PMIX_EXTERNAL_PROGRESS, true);
    pt_info_bool(&off, PMIX_EXTERNAL_PROGRESS, false);
    pt_start("init_rules", "conflict", &on, 1);

    pt_phase("PMIx_Init with the same directive");
    pmix_status_t rc = PMIx_Init(&p2, &on, 1);
    if (rc != PMIX_SUCCESS)
        pt_fail("second PMIx_Init with the same PMIX_EXTERNAL_PROGRESS=true was rejected: %s",
                pt_err(rc));
    else if ((rc = PMIx_Finalize(NULL, 0)) != PMIX_SUCCESS)
        pt_fail("Finalize balancing the second Init failed: %s", pt_err(rc));

    pt_phase("PMIx_Init with a conflicting directive");
    rc = PMIx_Init(&p2, &off, 1);
    if (rc == PMIX_SUCCESS) {
        pt_fail("PMIx_Init with PMIX_EXTERNAL_PROGRESS=false after =true succeeded; the Standard "
                "requires an error for conflicting directives");
        PMIx_Finalize(NULL, 0); /* balance it so the rest of the test is meaningful */
    } else {
        pt_note("conflicting PMIx_Init rejected as required: %s", pt_err(rc));
    }
    if (PMIx_Initialized() != 1)
        pt_fail("PMIx_Initialized() is %d after the rejected Init, expected 1", PMIx_Initialized());

    /* Still usable (external progress: blocking calls progress by themselves). */
    pt_barrier("PMIx_Fence after the rejected Init");

    pt_phase("PMIx_Finalize");
    rc = PMIx_Finalize(NULL, 0);
    pt.initialized = false;
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Finalize failed: %s", pt_err(rc));
    if (PMIx_Initialized() != 0)
        pt_fail("PMIx_Initialized() is %d after the only balancing Finalize: the rejected Init "
                "changed the reference count",
                PMIx_Initialized());
    pt_info_free(&on, 1);
    pt_info_free(&off, 1);
}

static void mode_version(void)
{
    pt.prog = "init_rules";
    pt.mode = "version";
    const char *v = PMIx_Get_version();
    if (v == NULL || v[0] == '\0') {
        pt_fail("PMIx_Get_version() before Init returned %s", v ? "an empty string" : "NULL");
    } else {
        pt_note("PMIx_Get_version() = \"%s\"", v);
        if ((unsigned char)v[0] < (unsigned char)'3')
            pt_fail("version string starts with '%c' (< '3'): Open MPI 4.1 would refuse it", v[0]);
    }
    pt_start("init_rules", "version", NULL, 0);
    const char *v2 = PMIx_Get_version();
    if (v2 == NULL || (v != NULL && strcmp(v, v2) != 0))
        pt_fail("PMIx_Get_version() after Init differs: \"%s\"", v2 ? v2 : "(null)");
}

static void mode_progress(void)
{
    pmix_info_t ext;
    pt_info_bool(&ext, PMIX_EXTERNAL_PROGRESS, true);
    pt_start("init_rules", "progress", &ext, 1);
    pt_info_free(&ext, 1);
    for (int i = 0; i < 10; i++)
        PMIx_Progress();

    /* Blocking calls make progress by themselves. */
    pt_barrier("blocking PMIx_Fence with external progress");
    pmix_proc_t peer;
    pt_proc(&peer, pt.me.nspace, (pt.me.rank + 1) % pt.size);
    pmix_value_t *v = pt_get_typed(&peer, PMIX_LOCAL_RANK, NULL, 0, PMIX_UINT16);
    pt_value_free(v);

    /* A non-blocking fence completes when we drive the library. */
    pt_waiter w;
    pt_waiter_init(&w);
    pt_phase("PMIx_Fence_nb driven by PMIx_Progress");
    pmix_status_t rc = PMIx_Fence_nb(NULL, 0, NULL, 0, pt_op_cb, &w);
    if (rc == PMIX_OPERATION_SUCCEEDED) {
        pt_waiter_signal(&w, PMIX_SUCCESS);
    } else if (rc != PMIX_SUCCESS) {
        pt_fail("PMIx_Fence_nb failed: %s", pt_err(rc));
        pt_waiter_signal(&w, rc);
    }
    if (!pt_waiter_wait_n(&w, 1, 20.0, true))
        pt_fail("PMIx_Fence_nb callback never ran while the caller drove PMIx_Progress for 20 s");
    else if (w.status != PMIX_SUCCESS)
        pt_fail("PMIx_Fence_nb completed with %s", pt_err(w.status));
}

static void mode_embed_barrier(void)
{
    pt_start("init_rules", "embed_barrier", NULL, 0);
    const double delay = 0.3;
    pt_barrier("PMIx_Fence before the staggered finalize");
    pt_sleep(delay * pt.me.rank);
    pmix_info_t eb;
    pt_info_bool(&eb, PMIX_EMBED_BARRIER, true);
    pt_phase("PMIx_Finalize with PMIX_EMBED_BARRIER");
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Finalize(&eb, 1);
    double dt = pt_now() - t0;
    pt.initialized = false;
    pt_info_free(&eb, 1);
    if (rc != PMIX_SUCCESS)
        pt_fail("PMIx_Finalize(PMIX_EMBED_BARRIER) failed: %s", pt_err(rc));
    /* The last rank enters (N-1)*delay after rank r; r waits that long minus slack. */
    double expect = delay * (double)(pt.size - 1 - pt.me.rank) - 0.15;
    pt_note("Finalize with embedded barrier took %.3f s (expected >= %.3f s)", dt,
            expect > 0 ? expect : 0.0);
    if (expect > 0 && dt < expect)
        pt_fail("PMIx_Finalize(PMIX_EMBED_BARRIER) returned after %.3f s, before the last process "
                "entered it (%.3f s): no barrier",
                dt, expect);
}

/* ---- modes without pmixrun -------------------------------------------------- */

extern char **environ;

static void clear_pmix_env(void)
{
    /* Collect first: unsetenv changes environ. */
    char *names[256];
    size_t n = 0;
    for (char **e = environ; *e != NULL && n < 256; e++) {
        if (strncmp(*e, "PMIX", 4) == 0) {
            const char *eq = strchr(*e, '=');
            size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
            names[n] = strndup(*e, len);
            if (names[n] != NULL)
                n++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        unsetenv(names[i]);
        free(names[i]);
    }
}

/* Init must fail within `bound` seconds; report what it said. */
static void expect_init_fails(const char *situation, double bound)
{
    pmix_proc_t p;
    pt_phase(situation);
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Init(&p, NULL, 0);
    double dt = pt_now() - t0;
    if (rc == PMIX_SUCCESS) {
        pt_fail("%s: PMIx_Init succeeded (proc %s:%u)", situation, p.nspace, (unsigned)p.rank);
        PMIx_Finalize(NULL, 0);
        return;
    }
    pt_note("%s: PMIx_Init failed as expected after %.2f s: %s (%d)", situation, dt, pt_err(rc),
            rc);
    if (dt > bound)
        pt_fail("%s: PMIx_Init took %.2f s to fail (bound %.0f s)", situation, dt, bound);
    if (PMIx_Initialized() != 0)
        pt_fail("%s: PMIx_Initialized() is %d after a failed Init", situation, PMIx_Initialized());
}

static void mode_noserver(void)
{
    pt.prog = "init_rules";
    pt.mode = "noserver";
    clear_pmix_env();
    pt_watchdog(40);
    expect_init_fails("no PMIx server in the environment", 10.0);
    expect_init_fails("second attempt without a server", 10.0);
    /* Finalize without Init must not crash; its status is informational. */
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    pt_note("PMIx_Finalize without a successful Init returned %s", pt_err(rc));
}

static void mode_badserver(void)
{
    pt.prog = "init_rules";
    pt.mode = "badserver";
    clear_pmix_env();
    pt_watchdog(40);
    setenv("PMIX_NAMESPACE", "init_rules-bogus-nspace", 1);
    setenv("PMIX_RANK", "0", 1);
    setenv("PMIX_SERVER_URI", "unix:/nonexistent-init_rules-dir/pmix.sock", 1);
    expect_init_fails("server URI points to a missing socket", 12.0);
    setenv("PMIX_SERVER_URI", "this is not a uri", 1);
    expect_init_fails("malformed server URI", 12.0);
    unsetenv("PMIX_SERVER_URI");
    expect_init_fails("namespace and rank but no server URI", 12.0);
}

struct fake_server {
    int fd;
    bool close_at_once;
    volatile bool stop;
};

static void *fake_server_run(void *arg)
{
    struct fake_server *fs = arg;
    int held[64];
    int nheld = 0;
    while (!fs->stop) {
        int c = accept(fs->fd, NULL, NULL);
        if (c < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
                pt_sleep(0.01);
                continue;
            }
            break;
        }
        if (fs->close_at_once || nheld == 64)
            close(c);
        else
            held[nheld++] = c; /* accept and never answer */
    }
    for (int i = 0; i < nheld; i++)
        close(held[i]);
    return NULL;
}

static void mute_case(bool close_at_once, const char *situation, double bound)
{
    const char *base = getenv("TMPDIR");
    char dir[96];
    snprintf(dir, sizeof dir, "%s/init_rules.XXXXXX",
             base != NULL && strlen(base) < 60 ? base : "/tmp");
    if (mkdtemp(dir) == NULL) {
        pt_fail("mkdtemp: %s", strerror(errno));
        return;
    }
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s/pmix.sock", dir);
    struct fake_server fs = {.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0),
                             .close_at_once = close_at_once};
    if (fs.fd < 0 || bind(fs.fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(fs.fd, 16) != 0) {
        pt_fail("cannot set up the fake server socket: %s", strerror(errno));
        return;
    }
    pthread_t th;
    pthread_create(&th, NULL, fake_server_run, &fs);
    char uri[200];
    snprintf(uri, sizeof uri, "unix:%s", sa.sun_path);
    setenv("PMIX_NAMESPACE", "init_rules-fake-nspace", 1);
    setenv("PMIX_RANK", "0", 1);
    setenv("PMIX_SERVER_URI", uri, 1);
    expect_init_fails(situation, bound);
    fs.stop = true;
    pthread_join(th, NULL);
    close(fs.fd);
    unlink(sa.sun_path);
    rmdir(dir);
}

static void mode_mute_server(void)
{
    pt.prog = "init_rules";
    pt.mode = "mute_server";
    clear_pmix_env();
    pt_watchdog(40);
    mute_case(true, "server closes the connection at once", 10.0);
    mute_case(false, "server accepts and never answers the handshake", 20.0);
}

int main(int argc, char **argv)
{
    const char *modes =
        "nested conflict version progress embed_barrier noserver badserver mute_server";
    if (argc < 2)
        pt_usage(argv[0], modes);
    const char *m = argv[1];
    pt.prog = "init_rules";
    pt.mode = m;
    pt_watchdog(45);
    if (strcmp(m, "nested") == 0)
        mode_nested();
    else if (strcmp(m, "conflict") == 0)
        mode_conflict();
    else if (strcmp(m, "version") == 0)
        mode_version();
    else if (strcmp(m, "progress") == 0)
        mode_progress();
    else if (strcmp(m, "embed_barrier") == 0)
        mode_embed_barrier();
    else if (strcmp(m, "noserver") == 0)
        mode_noserver();
    else if (strcmp(m, "badserver") == 0)
        mode_badserver();
    else if (strcmp(m, "mute_server") == 0)
        mode_mute_server();
    else
        pt_usage(argv[0], modes);
    return pt_result();
}
