/*
 * job_rules - how a job ends: PMIx_Abort, processes that die or leave without
 * PMIx_Finalize, exit statuses, output, and a job interrupted from outside.
 * Most checks are made by the integration test that runs this program under
 * pmixrun (tests/integration/expect.sh): pmixrun's exit status, its duration
 * and its output. The processes print what they observed.
 *
 * Modes:
 *   abort S [R]      rank R (default 0) calls PMIx_Abort(S, msg, NULL, 0) while
 *                    the others wait in a fence. PMIx_Abort must not return;
 *                    pmixrun must end the job and exit with status S. Survivors
 *                    whose fence returns wait to be killed (so a launcher that
 *                    does not kill them is caught by the duration bound).
 *   kill             the last rank kills itself (SIGKILL) while the others are
 *                    in a fence: their fence must fail within 10 s, not hang.
 *                    They print "fence failed as expected" and exit 0.
 *   exit_nofinalize  the same with a last rank that exits(0) without finalizing.
 *   jctrl            PMIx_Job_control (on every node of pmixrun --nodes): a
 *                    directive the host does not offer (PMIX_JOB_CTRL_PREEMPTIBLE)
 *                    is refused with PMIX_ERR_NOT_SUPPORTED, a target outside the
 *                    job with PMIX_ERR_NOT_FOUND / PMIX_ERR_BAD_PARAM;
 *                    PMIX_JOB_CTRL_SIGNAL SIGUSR1 to the last rank reaches it
 *                    alone, SIGUSR2 with no target reaches every rank; then
 *                    rank 0 kills the last rank (PMIX_JOB_CTRL_KILL): the
 *                    others' fence fails and pmixrun names it as killed by
 *                    signal 9.
 *   kill_daemon      (pmixrun --nodes only) the last rank kills its parent, its
 *                    node's daemon pmixd, with SIGKILL while the others are in
 *                    a fence: that node's processes die with it, and the
 *                    others' fence must fail within 10 s.
 *   stop_daemon      (pmixrun --nodes only) the same with SIGSTOP: the daemon
 *                    stays, silent, with its connections open; the others
 *                    must see their fence fail by the daemons' heartbeat
 *                    (PMIXLAB_PMIXD_HEARTBEAT), within 10 s.
 *   fence_loop       (pmixrun --nodes only; bench/pmixd_kill_trials.sh) collecting
 *                    fences back to back, each checking a peer's value of the
 *                    round, until one fails (a test kills a daemon meanwhile):
 *                    it must fail within 1 s of its start; no failure within
 *                    30 s is a failure.
 *   exitcode         after Finalize, rank 1 exits 3 at once and rank 2 exits 5
 *                    a little later: pmixrun's status is the highest, 5 (3 with
 *                    two processes).
 *   sleep MARKER     prints its PMIx directories, then sleeps 60 s: the Ctrl-C
 *                    test interrupts pmixrun and checks nothing is left behind.
 *   output           every rank prints a line on stdout and one on stderr, for
 *                    the --tag-output test.
 *   server_killed DIR  (3 processes; tests/integration/server_killed.sh) rank 0
 *                    never arrives at the fence that ranks 1 and 2 sleep in on
 *                    the fence page, and the test kills pmixrun, their server,
 *                    with SIGKILL. Ranks 0 and 2 die with it (pmixrun starts
 *                    them with PR_SET_PDEATHSIG SIGKILL: their page sleeps have
 *                    no deadline). Rank 1 cleared that signal before PMIx_Init,
 *                    so it outlives the server: it must see it gone and its
 *                    fence fail, and writes what happened to DIR/result.1.
 *                    Each rank writes its pid to DIR/ready.R once it is where
 *                    the test wants it.
 *   cleanup DIR      rank 0 fills DIR (a, sub/b, sub/deep/c, keep/d, and a
 *                    link to a file outside DIR, which it makes in DIR.out)
 *                    and registers DIR for cleanup (PMIx_Job_control with
 *                    PMIX_REGISTER_CLEANUP_DIR, PMIX_CLEANUP_RECURSIVE and
 *                    PMIX_CLEANUP_IGNORE "keep"), and DIR.file alone
 *                    (PMIX_REGISTER_CLEANUP). The test checks, once the job is
 *                    over, that only DIR/keep/d, DIR itself (it is not empty)
 *                    and the link's target are left.
 */
#include "ptest.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

static void survivors_fence(const char *why_peer_fails)
{
    pt_phase("fence while a peer fails");
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    double dt = pt_now() - t0;
    if (rc == PMIX_SUCCESS) {
        pt_fail("fence succeeded although the last rank %s", why_peer_fails);
    } else {
        pt_note("fence failed as expected after %.2f s: %s", dt, pt_err(rc));
        if (dt > 10.0)
            pt_fail("the failed fence took %.2f s (bound 10 s)", dt);
    }
}

static int mode_abort(int argc, char **argv)
{
    if (argc < 3)
        pt_usage(argv[0], "abort STATUS [RANK]");
    int status = atoi(argv[2]);
    pmix_rank_t who = argc > 3 ? (pmix_rank_t)atoi(argv[3]) : 0;
    pt_start("job_rules", "abort", NULL, 0);
    pt_barrier("fence before the abort");
    if (pt.me.rank == who) {
        pt_sleep(0.5); /* let the others enter their fence */
        char msg[128];
        snprintf(msg, sizeof msg, "job_rules: deliberate abort by rank %u with status %d",
                 (unsigned)pt.me.rank, status);
        pt_note("calling PMIx_Abort(%d)", status);
        pt_phase("PMIx_Abort");
        pmix_status_t rc = PMIx_Abort(status, msg, NULL, 0);
        pt_fail("PMIx_Abort returned (%s); it must not return when the caller is a target",
                pt_err(rc));
        return 99;
    }
    pt_phase("fence while a peer aborts");
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    pt_note("fence returned %s during the abort; waiting to be terminated", pt_err(rc));
    pt_phase("waiting to be terminated after the abort");
    pt_sleep(30.0);
    pt_fail("still alive 30 s after rank %u called PMIx_Abort", (unsigned)who);
    return 98;
}

static volatile sig_atomic_t got_usr1, got_usr2;

static void on_usr(int sig)
{
    if (sig == SIGUSR1)
        got_usr1++;
    else
        got_usr2++;
}

/* Wait up to `seconds` for *flag to become non-zero. */
static bool wait_flag(volatile sig_atomic_t *flag, double seconds)
{
    double end = pt_now() + seconds;
    while (*flag == 0 && pt_now() < end)
        pt_sleep(0.01);
    return *flag != 0;
}

static pmix_status_t jctrl(const pmix_proc_t *targets, size_t n, const char *key, const void *v,
                           pmix_data_type_t type)
{
    pmix_info_t d;
    pmix_info_t *res = NULL;
    size_t nres = 0;
    PMIx_Info_load(&d, key, v, type);
    pmix_status_t rc = PMIx_Job_control(targets, n, &d, 1, &res, &nres);
    PMIx_Info_destruct(&d);
    PMIx_Info_free(res, nres);
    return rc;
}

static int mode_jctrl(void)
{
    pt_start("job_rules", "jctrl", NULL, 0);
    signal(SIGUSR1, on_usr);
    signal(SIGUSR2, on_usr);
    if (pt.size < 3) {
        pt_note("needs at least 3 processes");
        return pt_result();
    }
    pmix_rank_t last = pt.size - 1;
    pmix_proc_t p;
    bool yes = true;
    int sig;
    pmix_status_t rc;

    pt_phase("PMIX_JOB_CTRL_PREEMPTIBLE");
    rc = jctrl(NULL, 0, PMIX_JOB_CTRL_PREEMPTIBLE, &yes, PMIX_BOOL);
    if (rc != PMIX_ERR_NOT_SUPPORTED)
        pt_fail("PMIX_JOB_CTRL_PREEMPTIBLE returned %s, expected PMIX_ERR_NOT_SUPPORTED",
                pt_err(rc));
    sig = SIGUSR1;
    pt_proc(&p, "no-such-namespace", 0);
    if ((rc = jctrl(&p, 1, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT)) != PMIX_ERR_NOT_FOUND)
        pt_fail("a signal to another namespace returned %s, expected PMIX_ERR_NOT_FOUND",
                pt_err(rc));
    pt_proc(&p, pt.me.nspace, pt.size);
    if ((rc = jctrl(&p, 1, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT)) != PMIX_ERR_BAD_PARAM)
        pt_fail("a signal to rank %u of %u returned %s, expected PMIX_ERR_BAD_PARAM",
                (unsigned)pt.size, (unsigned)pt.size, pt_err(rc));
    if (got_usr1 != 0)
        pt_fail("a refused signal request was delivered");
    pt_barrier("fence after the refusals");

    pt_phase("SIGUSR1 to the last rank");
    if (pt.me.rank == 0) {
        pt_proc(&p, pt.me.nspace, last);
        if ((rc = jctrl(&p, 1, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT)) != PMIX_SUCCESS)
            pt_fail("PMIX_JOB_CTRL_SIGNAL to rank %u failed: %s", (unsigned)last, pt_err(rc));
    }
    if (pt.me.rank == last && !wait_flag(&got_usr1, 10.0))
        pt_fail("rank 0's SIGUSR1 did not arrive within 10 s");
    pt_sleep(0.5);
    pt_barrier("fence after SIGUSR1");
    if (pt.me.rank != last && got_usr1 != 0)
        pt_fail("rank 0's SIGUSR1 for rank %u alone reached rank %u", (unsigned)last,
                (unsigned)pt.me.rank);

    pt_phase("SIGUSR2 to the namespace");
    if (pt.me.rank == 0) {
        sig = SIGUSR2;
        if ((rc = jctrl(NULL, 0, PMIX_JOB_CTRL_SIGNAL, &sig, PMIX_INT)) != PMIX_SUCCESS)
            pt_fail("PMIX_JOB_CTRL_SIGNAL to the namespace failed: %s", pt_err(rc));
    }
    if (!wait_flag(&got_usr2, 10.0))
        pt_fail("rank 0's SIGUSR2 to the namespace did not arrive within 10 s");
    pt_barrier("fence after SIGUSR2");

    pt_phase("PMIX_JOB_CTRL_KILL of the last rank");
    if (pt.me.rank == last) {
        pt_sleep(30.0);
        pt_fail("still alive 30 s after rank 0 asked for it to be killed");
        return 1;
    }
    if (pt.me.rank == 0) {
        pt_proc(&p, pt.me.nspace, last);
        if ((rc = jctrl(&p, 1, PMIX_JOB_CTRL_KILL, &yes, PMIX_BOOL)) != PMIX_SUCCESS)
            pt_fail("PMIX_JOB_CTRL_KILL of rank %u failed: %s", (unsigned)last, pt_err(rc));
    }
    survivors_fence("was killed by job control");
    pt_watchdog(15);
    return pt_result();
}

static int mode_die(bool kill_self)
{
    pt_start("job_rules", kill_self ? "kill" : "exit_nofinalize", NULL, 0);
    if (pt.size < 2) {
        pt_note("needs at least 2 processes");
        return pt_result();
    }
    pt_barrier("fence before the failure");
    if (pt.me.rank == pt.size - 1) {
        pt_sleep(0.5);
        if (kill_self) {
            pt_note("killing myself with SIGKILL");
            raise(SIGKILL);
        }
        pt_note("exiting without PMIx_Finalize");
        exit(0);
    }
    survivors_fence(kill_self ? "was killed" : "exited without finalizing");
    /* Finalize must not hang after the failure either. */
    pt_watchdog(15);
    return pt_result();
}

static int mode_kill_daemon(int sig)
{
    pt_start("job_rules", sig == SIGKILL ? "kill_daemon" : "stop_daemon", NULL, 0);
    pt_barrier("fence before the failure");
    if (pt.me.rank == pt.size - 1) {
        pt_sleep(0.5);
        pt_note("sending %s to my node's daemon (pid %d)", sig == SIGKILL ? "SIGKILL" : "SIGSTOP",
                (int)getppid());
        kill(getppid(), sig);
        pt_sleep(30.0); /* dies with its daemon */
        return 1;
    }
    survivors_fence(sig == SIGKILL ? "killed its node's daemon" : "stopped its node's daemon");
    pt_watchdog(15);
    return pt_result();
}

static int mode_fence_loop(void)
{
    pt_start("job_rules", "fence_loop", NULL, 0);
    alarm(0);
    pmix_info_t c;
    pt_info_bool(&c, PMIX_COLLECT_DATA, true);
    pmix_proc_t peer;
    pt_proc(&peer, pt.me.nspace, (pt.me.rank + 1) % pt.size);
    double start = pt_now();
    for (uint32_t round = 0;; round++) {
        if (pt_now() - start > 30.0) {
            pt_fail("no fence failed within 30 s (%u rounds)", round);
            break;
        }
        pmix_status_t rc = pt_put_u32(PMIX_GLOBAL, "jr.round", round);
        if (rc == PMIX_SUCCESS)
            rc = PMIx_Commit();
        if (rc != PMIX_SUCCESS) {
            pt_fail("put/commit of round %u failed: %s", round, pt_err(rc));
            break;
        }
        double t0 = pt_now();
        rc = PMIx_Fence(NULL, 0, &c, 1);
        double dt = pt_now() - t0;
        if (rc != PMIX_SUCCESS) {
            pt_note("fence failed as expected after %.3f s (round %u): %s", dt, round, pt_err(rc));
            if (dt > 1.0)
                pt_fail("the failed fence took %.3f s (bound 1 s)", dt);
            break;
        }
        pmix_value_t *v = pt_get_typed(&peer, "jr.round", NULL, 0, PMIX_UINT32);
        if (v != NULL && v->data.uint32 != round)
            pt_fail("round %u: the peer's value is of round %u", round, v->data.uint32);
        pt_value_free(v);
        if (v == NULL)
            break;
    }
    pt_info_free(&c, 1);
    pt_watchdog(15);
    return pt_result();
}

static int mode_exitcode(void)
{
    pt_start("job_rules", "exitcode", NULL, 0);
    pt_barrier("fence before finalize");
    int code = pt_result();
    if (code != 0)
        return code;
    if (pt.me.rank == 1)
        return 3;
    if (pt.me.rank == 2) {
        pt_sleep(0.3);
        return 5;
    }
    return 0;
}

static int mode_sleep(void)
{
    pt_start("job_rules", "sleep", NULL, 0);
    const char *keys[] = {PMIX_TMPDIR, PMIX_NSDIR};
    for (int i = 0; i < 2; i++) {
        pmix_value_t *v = NULL;
        if (PMIx_Get(&pt.wild, keys[i], NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_STRING)
            printf("dir %s=%s\n", keys[i], v->data.string);
        pt_value_free(v);
    }
    pmix_value_t *v = NULL;
    if (PMIx_Get(&pt.me, PMIX_PROCDIR, NULL, 0, &v) == PMIX_SUCCESS && v->type == PMIX_STRING)
        printf("dir %s=%s\n", PMIX_PROCDIR, v->data.string);
    pt_value_free(v);
    const char *uri = getenv("PMIX_SERVER_URI");
    if (uri != NULL)
        printf("uri %s\n", uri);
    pt_barrier("fence before sleeping");
    printf("rank %u sleeping\n", (unsigned)pt.me.rank);
    fflush(stdout);
    alarm(0); /* the test interrupts us; no watchdog */
    pt_sleep(60.0);
    printf("rank %u woke up: nobody interrupted the job\n", (unsigned)pt.me.rank);
    pt_result();
    return 1; /* nobody interrupted us: the test failed */
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        pt_fail("cannot write %s", path);
        return;
    }
    fputs(text, f);
    fclose(f);
}

static int mode_server_killed(int argc, char **argv)
{
    if (argc < 3)
        pt_usage(argv[0], "server_killed DIR");
    const char *dir = argv[2];
    const char *env_rank = getenv("PMIX_RANK");
    bool outlive = env_rank != NULL && strcmp(env_rank, "1") == 0;
    if (outlive) {
        /* before PMIx_Init: the library decides at connection time
         * whether the server's death ends this process */
        prctl(PR_SET_PDEATHSIG, 0);
        signal(SIGPIPE, SIG_IGN); /* pmixrun, our stdout's reader, goes */
    }
    pt_start("job_rules", "server_killed", NULL, 0);
    pt_watchdog(20); /* the test bounds the time; this ends a rank it left */
    if (pt.size != 3) {
        pt_fail("needs 3 processes, not %u", (unsigned)pt.size);
        return pt_result();
    }
    pt_barrier("fence before the server is killed");
    char name[32], text[256];
    snprintf(name, sizeof name, "ready.%u", (unsigned)pt.me.rank);
    snprintf(text, sizeof text, "%ld\n", (long)getpid());
    write_file(dir, name, text);
    if (pt.me.rank == 0) {
        pt_sleep(30.0); /* never arrives; dies with pmixrun */
        return 1;
    }
    double t0 = pt_now();
    pmix_status_t rc = PMIx_Fence(NULL, 0, NULL, 0);
    double dt = pt_now() - t0;
    if (!outlive) {
        pt_fail("the fence ended (%s) and pmixrun's death did not end this rank", pt_err(rc));
        return 1;
    }
    snprintf(text, sizeof text, "%s after %.2f s: %s\n",
             rc == PMIX_SUCCESS ? "fence succeeded" : "fence failed", dt, PMIx_Error_string(rc));
    write_file(dir, "result.1", text);
    return rc == PMIX_SUCCESS ? 1 : 0;
}

static int mode_output(void)
{
    pt_start("job_rules", "output", NULL, 0);
    printf("output-line stdout rank %u\n", (unsigned)pt.me.rank);
    fflush(stdout);
    fprintf(stderr, "output-line stderr rank %u\n", (unsigned)pt.me.rank);
    pt_barrier("fence after printing");
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    return rc == PMIX_SUCCESS && pt.failures == 0 ? 0 : 1;
}

static void make_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        pt_fail("cannot create %s: %s", path, strerror(errno));
        return;
    }
    fputs("x\n", f);
    fclose(f);
}

static int mode_cleanup(int argc, char **argv)
{
    pt_start("job_rules", "cleanup", NULL, 0);
    if (argc < 3)
        pt_usage(argv[0], "cleanup DIR");
    const char *dir = argv[2];
    if (pt.me.rank == 0) {
        char path[4096], out[4096];
        const char *subdirs[] = {"sub", "sub/deep", "keep"};
        for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, subdirs[i]);
            if (mkdir(path, 0700) != 0)
                pt_fail("cannot create %s: %s", path, strerror(errno));
        }
        make_file(dir, "a");
        make_file(dir, "sub/b");
        make_file(dir, "sub/deep/c");
        make_file(dir, "keep/d");
        snprintf(out, sizeof out, "%s.out", dir);
        if (mkdir(out, 0700) != 0)
            pt_fail("cannot create %s: %s", out, strerror(errno));
        make_file(out, "target");
        snprintf(out, sizeof out, "%s.out/target", dir);
        snprintf(path, sizeof path, "%s/sub/link", dir);
        if (symlink(out, path) != 0)
            pt_fail("cannot link %s: %s", path, strerror(errno));
        pmix_info_t di[4];
        pt_info_str(&di[0], PMIX_REGISTER_CLEANUP_DIR, dir);
        pt_info_bool(&di[1], PMIX_CLEANUP_RECURSIVE, true);
        pt_info_str(&di[2], PMIX_CLEANUP_IGNORE, "keep");
        pmix_info_t *res = NULL;
        size_t nres = 0;
        pmix_status_t rc = PMIx_Job_control(&pt.me, 1, di, 3, &res, &nres);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            pt_fail("PMIx_Job_control(PMIX_REGISTER_CLEANUP_DIR): %s", pt_err(rc));
        if (res != NULL)
            PMIx_Info_free(res, nres);
        snprintf(path, sizeof path, "%s.file", dir);
        FILE *f = fopen(path, "w");
        if (f != NULL)
            fclose(f);
        pt_info_str(&di[3], PMIX_REGISTER_CLEANUP, path);
        res = NULL;
        rc = PMIx_Job_control(&pt.me, 1, &di[3], 1, &res, &nres);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            pt_fail("PMIx_Job_control(PMIX_REGISTER_CLEANUP): %s", pt_err(rc));
        if (res != NULL)
            PMIx_Info_free(res, nres);
        pt_info_free(di, 4);
    }
    pt_barrier("fence after the registrations");
    return pt_result(); /* finalizes */
}

int main(int argc, char **argv)
{
    const char *modes = "abort STATUS [RANK] | kill | exit_nofinalize | jctrl | kill_daemon | "
                        "stop_daemon | fence_loop | exitcode | sleep MARKER | output | "
                        "server_killed DIR | cleanup DIR";
    if (argc < 2)
        pt_usage(argv[0], modes);
    pt_watchdog(40);
    const char *m = argv[1];
    pt.prog = "job_rules";
    pt.mode = m;
    if (strcmp(m, "abort") == 0)
        return mode_abort(argc, argv);
    if (strcmp(m, "kill") == 0)
        return mode_die(true);
    if (strcmp(m, "exit_nofinalize") == 0)
        return mode_die(false);
    if (strcmp(m, "jctrl") == 0)
        return mode_jctrl();
    if (strcmp(m, "kill_daemon") == 0)
        return mode_kill_daemon(SIGKILL);
    if (strcmp(m, "stop_daemon") == 0)
        return mode_kill_daemon(SIGSTOP);
    if (strcmp(m, "fence_loop") == 0)
        return mode_fence_loop();
    if (strcmp(m, "exitcode") == 0)
        return mode_exitcode();
    if (strcmp(m, "sleep") == 0)
        return mode_sleep();
    if (strcmp(m, "output") == 0)
        return mode_output();
    if (strcmp(m, "server_killed") == 0)
        return mode_server_killed(argc, argv);
    if (strcmp(m, "cleanup") == 0)
        return mode_cleanup(argc, argv);
    pt_usage(argv[0], modes);
    return 2;
}
