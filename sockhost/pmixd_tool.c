/*
 * pmixd_tool.c - a daemon's side of tools (pmixrun_ntool.c has pmixrun's
 * and the frames): it answers pmixrun's PD_TOOL about this node's ranks.
 *
 * A table (op 1) is answered at once from the daemon's own records: its
 * host name (gethostname, the node's name under --isolate host), and per
 * local rank the pid it forked, its state (tool_rank_state), exit code
 * and executable (what /proc says it runs while it lives, else the
 * program its application names).
 *
 * Stacks (op 2) take a while, so they never block the loop: the daemon
 * forks a collector, `sh -c` running, for each living local rank in turn,
 * `echo @rank R` and gdb in batch mode on its pid (`thread apply all bt`,
 * killed after the request's seconds by timeout(1)), as pmixstack does on
 * one node, with its output on a pipe that the loop watches. The collector
 * runs in the daemon's namespaces, where its ranks are (their files, their
 * /tmp), and inherits nothing else. At the pipe's end of file the daemon
 * sends the table and the text in one PD_TOOL_REP. The collector is its
 * own process group, killed at teardown; reap() in pmixd.c reaps it with
 * every other child (it is no rank, so nothing is reported).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmixd.h"
#include "pmixd_proto.h"

struct dtool_collector {
    struct dtool_collector *next;
    pmixd_ctx *d;
    uint32_t id;
    pid_t pid;
    int fd;
    px_posix_watch *w;
    char *text;
    size_t len, cap;
};

/* The reply's header and this node's ranks. */
static void put_table(pmixd_ctx *d, tl_buf *b, uint32_t id)
{
    job *j = &d->j;
    char host[256];

    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "%s", j->hostname);
    host[sizeof host - 1] = '\0';
    tl_put_u32(b, id);
    tl_put_str(b, host);
    tl_put_u32(b, (uint32_t)j->nlocal);
    for (int i = 0; i < j->nlocal; i++) {
        rank_proc *r = &j->ranks[i];
        job_app *app = job_app_of(j, r->rank);
        const char *exe = app == NULL         ? ""
                          : app->prog != NULL ? app->prog
                          : app->argv != NULL ? app->argv[0]
                                              : "";
        tl_put_u32(b, (uint32_t)r->rank);
        tl_put_u32(b, (uint32_t)r->pid);
        tl_put_u32(b, (uint32_t)tool_rank_state(r, r->pid));
        tl_put_u32(b, (uint32_t)(r->reaped ? r->code : 0));
        tl_put_str(b, exe);
    }
}

static void reply(pmixd_ctx *d, uint32_t id, const char *text)
{
    tl_buf b = {0};
    put_table(d, &b, id);
    tl_put_u8(&b, text != NULL);
    if (text != NULL)
        tl_put_str(&b, text);
    tl_send(&d->parent, PD_TOOL_REP, &b);
    tl_buf_free(&b);
}

static void collector_free(pmixd_ctx *d, struct dtool_collector *c)
{
    for (struct dtool_collector **p = &d->tools; *p != NULL; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    px_posix_watch_destroy(c->w);
    if (c->fd >= 0)
        close(c->fd);
    free(c->text);
    free(c);
}

static void collector_ready(void *arg, unsigned what)
{
    struct dtool_collector *c = arg;
    char buf[65536];
    (void)what;
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0)
            break; /* end of file (or an error): what came is the answer */
        if (c->len + (size_t)n + 1 > c->cap) {
            size_t cap = (c->len + (size_t)n + 1) * 2;
            char *t = realloc(c->text, cap);
            if (t == NULL)
                break;
            c->text = t;
            c->cap = cap;
        }
        memcpy(c->text + c->len, buf, (size_t)n);
        c->len += (size_t)n;
        c->text[c->len] = '\0';
    }
    reply(c->d, c->id, c->text != NULL ? c->text : "");
    collector_free(c->d, c);
}

/* Start the collector for request `id`: 0, or -1 (then answered without
 * stacks). */
static int collect(pmixd_ctx *d, uint32_t id, uint32_t secs)
{
    job *j = &d->j;
    char *script = NULL;
    size_t slen = 0;
    FILE *f = open_memstream(&script, &slen);
    int p[2];

    if (f == NULL)
        return -1;
    for (int i = 0; i < j->nlocal; i++) {
        rank_proc *r = &j->ranks[i];
        if (r->pid <= 0 || r->reaped)
            continue;
        fprintf(f,
                "echo '@rank %d'; timeout -s KILL %u gdb -nx -batch -p %ld -ex 'set width 0' "
                "-ex 'set print frame-arguments none' -ex 'thread apply all bt' "
                "</dev/null 2>/dev/null; ",
                r->rank, secs, (long)r->pid);
    }
    fputs("exit 0", f);
    if (fclose(f) != 0 || pipe2(p, O_CLOEXEC) != 0) {
        free(script);
        return -1;
    }
    struct dtool_collector *c = calloc(1, sizeof *c);
    pid_t pid = c != NULL ? fork() : -1;
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setpgid(0, 0);
        int null = open("/dev/null", O_RDWR);
        if (dup2(p[1], 1) < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 2) < 0)
            _exit(127);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    free(script);
    close(p[1]);
    if (pid < 0) {
        free(c);
        close(p[0]);
        return -1;
    }
    *c = (struct dtool_collector){.d = d, .id = id, .pid = pid, .fd = p[0]};
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    c->w = px_posix_watch_create(j->plat, c->fd, PX_POSIX_READ, collector_ready, c);
    c->next = d->tools;
    d->tools = c;
    if (c->w == NULL) {
        kill(-pid, SIGKILL);
        collector_free(d, c);
        return -1;
    }
    return 0;
}

void dtool_frame(pmixd_ctx *d, const uint8_t *p, size_t len)
{
    tl_reader r = {.p = p, .left = len};
    uint32_t id = tl_get_u32(&r);
    uint8_t op = tl_get_u8(&r);
    uint32_t secs = tl_get_u32(&r);

    if (r.bad || !d->job_read || (op != 1 && op != 2))
        return;
    if (op == 2 && secs > 0 && secs <= 3600 && collect(d, id, secs) == 0)
        return; /* answered at the collector's end */
    reply(d, id, op == 2 ? "" : NULL);
}

void dtool_fini(pmixd_ctx *d)
{
    while (d->tools != NULL) {
        kill(-d->tools->pid, SIGKILL);
        collector_free(d, d->tools);
    }
}
