/*
 * launchtree.c - the launch tree over a launch agent (launchtree.h).
 *
 * Starting: fork, and in the child (async-signal-safe calls only) its own
 * process group, PR_SET_PDEATHSIG (the agent dies with its starter, and
 * ssh then closes its session), signals unblocked, stdin from a pipe,
 * exec of the agent. The parent writes the secret and the share to the
 * pipe and closes it (ssh forwards the end of input). The text is made
 * before the fork, so the child does no allocation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "launchtree.h"

int lt_nruns(int n, int fanout)
{
    if (n <= 0)
        return 0;
    return n < fanout ? n : fanout;
}

void lt_run(int n, int fanout, int c, int *first, int *count)
{
    int runs = lt_nruns(n, fanout);
    int base = runs > 0 ? n / runs : 0, extra = runs > 0 ? n % runs : 0;
    *first = c * base + (c < extra ? c : extra);
    *count = base + (c < extra);
}

/* Append printf output to a growing string; -1 on no memory. */
static int cat(char **s, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int cat(char **s, size_t *len, const char *fmt, ...)
{
    va_list ap;
    char *more = NULL;
    va_start(ap, fmt);
    int l = vasprintf(&more, fmt, ap);
    va_end(ap);
    if (l < 0)
        return -1;
    char *n = realloc(*s, *len + (size_t)l + 1);
    if (n == NULL) {
        free(more);
        return -1;
    }
    memcpy(n + *len, more, (size_t)l + 1);
    *s = n;
    *len += (size_t)l;
    free(more);
    return 0;
}

pid_t lt_start(const lt_conf *c, const lt_share *share, int first, int count, const char *keyhex)
{
    char nodearg[16];
    char *words = strdup(c->agent), *text = NULL;
    char *argv[76]; /* 64 agent words, then at most 9 and NULL */
    int argc = 0, in[2] = {-1, -1};
    size_t tlen = 0;
    int saved;
    snprintf(nodearg, sizeof nodearg, "%d", share->node[first]);
    if (words == NULL)
        return -1;
    for (char *save = NULL, *w = strtok_r(words, " \t", &save); w != NULL && argc < 64;
         w = strtok_r(NULL, " \t", &save))
        argv[argc++] = w;
    if (argc == 0) {
        free(words);
        errno = EINVAL;
        return -1;
    }
    argv[argc++] = share->host[first];
    argv[argc++] = c->pmixd;
    argv[argc++] = "--connect";
    argv[argc++] = c->connect;
    argv[argc++] = "--node";
    argv[argc++] = nodearg;
    argv[argc++] = "--key-stdin";
    if (c->ifinclude != NULL) {
        argv[argc++] = "--if-include";
        argv[argc++] = c->ifinclude;
    }
    argv[argc] = NULL;
    int bad = cat(&text, &tlen, "%s\nagent %s\npmixd %s\nfanout %d\n", keyhex, c->agent, c->pmixd,
                  c->fanout);
    for (int i = first + 1; bad == 0 && i < first + count; i++)
        bad = cat(&text, &tlen, "host %d %s\n", share->node[i], share->host[i]);
    if (bad == 0)
        bad = cat(&text, &tlen, "end\n");
    if (bad != 0 || pipe2(in, O_CLOEXEC) != 0) {
        saved = bad != 0 ? ENOMEM : errno;
        goto fail;
    }
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        sigset_t none;
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != me)
            _exit(1); /* the starter died meanwhile */
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (dup2(in[0], 0) < 0)
            _exit(1);
        execvp(argv[0], argv);
        /* stderr is the starter's: one line says why */
        dprintf(2, "cannot run the launch agent %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    saved = errno;
    close(in[0]);
    if (pid > 0) {
        setpgid(pid, pid);
        /* A few hundred bytes per node: within a pipe's buffer for
         * thousands of nodes; an agent that exits early makes it EPIPE. */
        size_t off = 0;
        while (off < tlen) {
            ssize_t w = write(in[1], text + off, tlen - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
    }
    close(in[1]);
    explicit_bzero(text, tlen);
    free(text);
    free(words);
    if (pid < 0)
        errno = saved;
    return pid;
fail:
    if (text != NULL)
        explicit_bzero(text, tlen);
    free(text);
    free(words);
    errno = saved;
    return -1;
}

/* One line of fd without its newline, byte by byte (nothing past it is
 * consumed). 1 with a line, 0 at the end of input, -1 if too long. */
static int read_line(int fd, char *buf, size_t cap)
{
    size_t got = 0;
    for (;;) {
        char ch;
        ssize_t r = read(fd, &ch, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            buf[got] = '\0';
            return got > 0 ? 1 : 0;
        }
        if (ch == '\n') {
            buf[got] = '\0';
            return 1;
        }
        if (got + 1 >= cap)
            return -1;
        buf[got++] = ch;
    }
}

int lt_read(int fd, lt_conf *c, lt_share *share, char *err, size_t errlen)
{
    char line[4096];
    int rc;
    while ((rc = read_line(fd, line, sizeof line)) == 1) {
        if (strcmp(line, "end") == 0)
            break;
        if (strncmp(line, "agent ", 6) == 0) {
            free(c->agent);
            if ((c->agent = strdup(line + 6)) == NULL)
                goto nomem;
        } else if (strncmp(line, "pmixd ", 6) == 0) {
            free(c->pmixd);
            if ((c->pmixd = strdup(line + 6)) == NULL)
                goto nomem;
        } else if (strncmp(line, "fanout ", 7) == 0) {
            c->fanout = atoi(line + 7);
            if (c->fanout < 1 || c->fanout > LT_FANOUT_MAX) {
                snprintf(err, errlen, "launch tree: bad fan-out '%s'", line + 7);
                return -1;
            }
        } else if (strncmp(line, "host ", 5) == 0) {
            int id = -1, off = 0;
            if (sscanf(line + 5, "%d %n", &id, &off) != 1 || id < 0 || off <= 0 ||
                line[5 + off] == '\0') {
                snprintf(err, errlen, "launch tree: bad line '%.200s'", line);
                return -1;
            }
            int *nn = realloc(share->node, (size_t)(share->n + 1) * sizeof *nn);
            if (nn != NULL)
                share->node = nn;
            char **nh = realloc(share->host, (size_t)(share->n + 1) * sizeof *nh);
            if (nh != NULL)
                share->host = nh;
            if (nn == NULL || nh == NULL || (nh[share->n] = strdup(line + 5 + off)) == NULL)
                goto nomem;
            nn[share->n++] = id;
        } else {
            snprintf(err, errlen, "launch tree: unknown line '%.200s'", line);
            return -1;
        }
    }
    if (rc < 0) {
        snprintf(err, errlen, "launch tree: a line of its input is too long");
        return -1;
    }
    if (share->n > 0 && (c->agent == NULL || c->pmixd == NULL || c->fanout < 1)) {
        snprintf(err, errlen, "launch tree: a share of nodes without agent, pmixd or fan-out");
        return -1;
    }
    return 0;
nomem:
    snprintf(err, errlen, "launch tree: out of memory");
    return -1;
}

void lt_conf_free(lt_conf *c)
{
    free(c->agent);
    free(c->pmixd);
    free(c->connect);
    free(c->ifinclude);
    *c = (lt_conf){0};
}

void lt_share_free(lt_share *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->host[i]);
    free(s->host);
    free(s->node);
    *s = (lt_share){0};
}
