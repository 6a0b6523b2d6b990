/*
 * pmixrun_files.c - the job's private directory, and the files and
 * directories that ranks register for cleanup.
 *
 * Layout, under $TMPDIR (or /tmp):
 *
 *     pmixrun.<uid>.<pid>.XXXXXX/   mode 0700 (mkdtemp); PMIX_TMPDIR; the socket
 *         pmix.sock
 *         <nspace>/                 PMIX_NSDIR
 *             <rank>/               PMIX_PROCDIR of each rank
 *
 * The random end of the name is what makes it safe in a directory that
 * everyone can write to: another user cannot create it first (a name made
 * of the uid and pid alone could be, and pmixrun then could not start).
 * Clients find the socket through PMIX_SERVER_URI, never by its name. The
 * uid and pid in the name say whose it is: the whole tree is removed when
 * pmixrun (or pmixd) exits, on every path but SIGKILL, and a tree of this
 * user whose process is gone (killed so, or a crash) is removed by the
 * next pmixrun or pmixd of the user that starts in the same $TMPDIR.
 *
 * Cleanup registrations (PMIX_REGISTER_CLEANUP / _DIR from PMIx_Job_control)
 * are carried out at job end, after the ranks are gone. Only paths owned by
 * the user are touched, symbolic links are never followed, other file
 * systems are not entered, an ignored entry (PMIX_CLEANUP_IGNORE) is
 * kept with all it holds, and "/", the home directory and its ancestors
 * are refused.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmixrun.h"

int files_make_dir(const char *path)
{
    if (mkdir(path, 0700) != 0)
        return -1;
    return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP || flag == FTW_D)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void files_remove_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* If `name` (in `base`) is a job directory of this user whose pmixrun or
 * pmixd is gone, remove it. Names: pmixrun.<uid>.<pid>.XXXXXX, or
 * pmixrun.<uid>.<pid> as older versions made them. Only a private
 * directory of ours, never followed through a link, and only when no
 * process has that pid (kill says ESRCH; a pid in use, even by another
 * program, keeps it). */
static void remove_if_stale(const char *base, const char *name)
{
    unsigned uid;
    long pid;
    int end = 0;
    if (sscanf(name, "pmixrun.%u.%ld%n", &uid, &pid, &end) != 2 || uid != (unsigned)getuid() ||
        pid <= 0 || pid == (long)getpid())
        return;
    if (name[end] != '\0' && (name[end] != '.' || strlen(name + end + 1) != 6))
        return;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
        return;
    char *path;
    if (asprintf(&path, "%s/%s", base, name) < 0)
        return;
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
        (st.st_mode & 077) == 0)
        files_remove_tree(path);
    free(path);
}

void files_remove_stale(void)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || *base == '\0')
        base = "/tmp";
    DIR *d = opendir(base);
    if (d == NULL)
        return;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, "pmixrun.", 8) == 0)
            remove_if_stale(base, e->d_name);
    closedir(d);
}

int files_make_topdir(job *j)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || *base == '\0')
        base = "/tmp";
    files_remove_stale();
    if (asprintf(&j->topdir, "%s/pmixrun.%u.%ld.XXXXXX", base, (unsigned)getuid(), (long)getpid()) <
        0) {
        j->topdir = NULL;
        return -1;
    }
    if (mkdtemp(j->topdir) == NULL) {
        fprintf(stderr,
                "pmixrun: cannot create the job directory %s: %s (set TMPDIR to a "
                "writable directory)\n",
                j->topdir, strerror(errno));
        free(j->topdir);
        j->topdir = NULL;
        return -1;
    }
    if (asprintf(&j->nsdir, "%s/%s", j->topdir, j->nspace) < 0 || files_make_dir(j->nsdir) != 0) {
        fprintf(stderr, "pmixrun: cannot create the job directory %s/%s: %s\n", j->topdir,
                j->nspace, strerror(errno));
        files_remove_topdir(j);
        return -1;
    }
    return 0;
}

void files_remove_topdir(job *j)
{
    if (j->topdir != NULL)
        files_remove_tree(j->topdir);
    free(j->topdir);
    free(j->nsdir);
    j->topdir = NULL;
    j->nsdir = NULL;
}

/* ---- registered cleanups ---- */

void files_register_cleanup(job *j, const char *list, bool is_dir, bool recursive, bool leave_top,
                            const char *ignore)
{
    char *copy = strdup(list);
    if (copy == NULL)
        return;
    char *save = NULL;
    for (char *p = strtok_r(copy, ",", &save); p != NULL; p = strtok_r(NULL, ",", &save)) {
        if (*p != '/')
            continue; /* relative paths would depend on the rank's cwd */
        cleanup_item *c = calloc(1, sizeof *c);
        if (c == NULL)
            break;
        c->path = strdup(p);
        c->ignore = ignore != NULL ? strdup(ignore) : NULL;
        if (c->path == NULL) {
            free(c->ignore);
            free(c);
            break;
        }
        c->is_dir = is_dir;
        c->recursive = recursive;
        c->leave_top = leave_top;
        c->next = j->cleanups;
        j->cleanups = c;
    }
    free(copy);
}

/* Never wipe "/", the home directory or anything above it. */
static bool too_precious(const char *path)
{
    char real[PATH_MAX], home[PATH_MAX];
    if (realpath(path, real) == NULL)
        return true;
    if (strcmp(real, "/") == 0)
        return true;
    const char *h = getenv("HOME");
    if (h != NULL && realpath(h, home) != NULL) {
        size_t rl = strlen(real);
        if (strncmp(home, real, rl) == 0 && (home[rl] == '\0' || home[rl] == '/'))
            return true;
    }
    return false;
}

static bool ignored(const char *name, const char *ignore)
{
    if (ignore == NULL)
        return false;
    size_t nl = strlen(name);
    for (const char *p = ignore; *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t l = end != NULL ? (size_t)(end - p) : strlen(p);
        if (l == nl && strncmp(p, name, l) == 0)
            return true;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return false;
}

#define CLEAN_DEPTH 256 /* deeper trees are left where they are */

/* Clean the entries of the open directory `dfd` (taken and closed here),
 * `level` below the registered one, as cleanup `c` says: each entry the
 * user owns and `c` does not ignore goes (files at the first level only,
 * unless recursive; directories emptied and removed only when recursive).
 * An ignored or foreign entry is kept whole; symbolic links are removed,
 * never followed; other file systems (st_dev) and unreadable directories
 * are not entered. */
static void clean_dir(int dfd, const cleanup_item *c, int level, dev_t dev)
{
    DIR *dir = fdopendir(dfd);
    if (dir == NULL) {
        close(dfd);
        return;
    }
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        const char *name = e->d_name;
        struct stat st;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        if (ignored(name, c->ignore) || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            st.st_uid != getuid())
            continue;
        if (!S_ISDIR(st.st_mode)) {
            if (c->recursive || level == 1)
                unlinkat(dfd, name, 0);
            continue;
        }
        if (!c->recursive || st.st_dev != dev || level >= CLEAN_DEPTH)
            continue;
        int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub < 0)
            continue;
        clean_dir(sub, c, level + 1, dev);
        unlinkat(dfd, name, AT_REMOVEDIR);
    }
    closedir(dir);
}

void files_run_cleanups(job *j)
{
    cleanup_item *list = j->cleanups;
    j->cleanups = NULL;
    while (list != NULL) {
        cleanup_item *c = list;
        list = c->next;
        struct stat st;
        if (lstat(c->path, &st) == 0 && st.st_uid == getuid()) {
            if (!c->is_dir) {
                if (!S_ISDIR(st.st_mode))
                    unlink(c->path);
            } else if (S_ISDIR(st.st_mode) && !too_precious(c->path)) {
                int dfd = open(c->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (dfd >= 0)
                    clean_dir(dfd, c, 1, st.st_dev);
                if (!c->leave_top)
                    rmdir(c->path); /* if it is empty now */
            }
        }
        free(c->path);
        free(c->ignore);
        free(c);
    }
}
