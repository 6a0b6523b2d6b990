/*
 * rendezvous.c - writing and finding rendezvous files (px_rndz.h).
 *
 * Reading is careful because the directories may be shared (/tmp): a
 * file is opened with O_NOFOLLOW and checked through its descriptor
 * (regular, owner, mode) before a byte is read; only the first line is
 * read, at most PATH_MAX bytes; and a directory is entered only when it
 * is ours and private, so another user can neither plant a file there
 * nor swap one in.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/px_rndz.h"

static void dir_from_env(const char *var, char *buf, size_t len)
{
    const char *d = getenv(var);

    if (d == NULL || *d == '\0')
        d = getenv("TMPDIR");
    if (d == NULL || *d == '\0')
        d = "/tmp";
    snprintf(buf, len, "%s", d);
}

void px_rndz_session_dir(char *buf, size_t len)
{
    dir_from_env("PMIX_SERVER_TMPDIR", buf, len);
}

void px_rndz_system_dir(char *buf, size_t len)
{
    dir_from_env("PMIX_SYSTEM_TMPDIR", buf, len);
}

static void host_name(char *buf, size_t len)
{
    if (gethostname(buf, len - 1) != 0)
        snprintf(buf, len, "localhost");
    buf[len - 1] = '\0';
}

void px_rndz_name(const char *key, char *buf, size_t len)
{
    char host[256];

    host_name(host, sizeof(host));
    if (key == NULL)
        snprintf(buf, len, "pmix.sys.%s", host);
    else
        snprintf(buf, len, "pmix.%s.tool.%s", host, key);
}

int px_rndz_write(const char *dir, const char *name, const char *uri, mode_t mode)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    int fd, err;
    size_t n = strlen(uri);

    if (snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= (int)sizeof(tmp) ||
        snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) /* 0600, a name nobody had */
        return -1;
    if (write(fd, uri, n) != (ssize_t)n || write(fd, "\n", 1) != 1 || fchmod(fd, mode) != 0 ||
        close(fd) != 0) {
        err = errno;
        close(fd);
        unlink(tmp);
        errno = err;
        return -1;
    }
    if (rename(tmp, path) != 0) {
        err = errno;
        unlink(tmp);
        errno = err;
        return -1;
    }
    return 0;
}

void px_rndz_remove(const char *dir, const char *name)
{
    char path[PATH_MAX];

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path))
        (void)unlink(path);
}

/* Read the URI in dir/name if the file is one to trust. */
static bool read_uri(const char *dir, const char *name, bool root_ok, char *uri, size_t len)
{
    char path[PATH_MAX], buf[PATH_MAX + 8];
    struct stat st;
    ssize_t n;
    int fd;
    char *nl;

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return false;
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (st.st_uid != getuid() && !(root_ok && st.st_uid == 0)) || (st.st_mode & 022) != 0) {
        close(fd);
        return false;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    if ((nl = strchr(buf, '\n')) != NULL)
        *nl = '\0';
    if (strncmp(buf, "unix:", 5) != 0 || strlen(buf) >= len)
        return false;
    snprintf(uri, len, "%s", buf);
    return true;
}

/* A directory right under base that a tool may look in: ours, private,
 * not a link. */
static bool private_dir(int basefd, const char *name)
{
    struct stat st;

    if (name[0] == '.')
        return false;
    return fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
           st.st_uid == getuid() && (st.st_mode & 077) == 0;
}

pmix_status_t px_rndz_find(const char *base, const char *name, bool root_ok, char *uri, size_t len)
{
    char sub[PATH_MAX];
    struct dirent *e;
    DIR *d;
    bool found = false;

    if (read_uri(base, name, root_ok, uri, len))
        return PMIX_SUCCESS;
    if ((d = opendir(base)) == NULL)
        return PMIX_ERR_NOT_FOUND;
    while (!found && (e = readdir(d)) != NULL) {
        if (!private_dir(dirfd(d), e->d_name))
            continue;
        if (snprintf(sub, sizeof(sub), "%s/%s", base, e->d_name) >= (int)sizeof(sub))
            continue;
        found = read_uri(sub, name, false, uri, len);
    }
    closedir(d);
    return found ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
}

/* A pid file's name: "pmix.<host>.tool.<digits>". */
static bool pid_file(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);

    if (strncmp(name, prefix, n) != 0 || name[n] == '\0')
        return false;
    for (const char *p = name + n; *p != '\0'; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

typedef struct cand {
    char uri[PATH_MAX];
    time_t mtime;
} cand;

static int newest_first(const void *a, const void *b)
{
    const cand *x = a, *y = b;

    return x->mtime < y->mtime ? 1 : x->mtime > y->mtime ? -1 : 0;
}

/* At most this many servers are tried by a search without attributes. */
#define MAX_CANDS 64

pmix_status_t px_rndz_each(const char *base, bool (*fn)(const char *uri, void *arg), void *arg)
{
    char prefix[300], sub[PATH_MAX];
    cand *c = calloc(MAX_CANDS, sizeof(*c));
    size_t nc = 0;
    struct dirent *e, *f;
    DIR *d, *sd;
    bool done = false;

    if (c == NULL)
        return PMIX_ERR_NOMEM;
    px_rndz_name("", prefix, sizeof(prefix));
    if ((d = opendir(base)) == NULL) {
        free(c);
        return PMIX_ERR_NOT_FOUND;
    }
    while (nc < MAX_CANDS && (e = readdir(d)) != NULL) {
        if (!private_dir(dirfd(d), e->d_name))
            continue;
        if (snprintf(sub, sizeof(sub), "%s/%s", base, e->d_name) >= (int)sizeof(sub) ||
            (sd = opendir(sub)) == NULL)
            continue;
        while (nc < MAX_CANDS && (f = readdir(sd)) != NULL) {
            struct stat st;
            if (!pid_file(f->d_name, prefix) ||
                fstatat(dirfd(sd), f->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            if (read_uri(sub, f->d_name, false, c[nc].uri, sizeof(c[nc].uri))) {
                c[nc].mtime = st.st_mtime;
                nc++;
            }
        }
        closedir(sd);
    }
    closedir(d);
    qsort(c, nc, sizeof(*c), newest_first);
    for (size_t i = 0; i < nc && !done; i++)
        done = fn(c[i].uri, arg);
    free(c);
    return done ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND;
}
