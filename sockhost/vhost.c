/* vhost.c - a virtual node that looks like a host of its own (see vhost.h).
 *
 * The daemon of a virtual node calls vhost_isolate() first thing, while it
 * has one thread, so that unshare(CLONE_NEWNS) is allowed. The namespaces
 * are made as follows:
 *
 *   UTS    unshare(CLONE_NEWUTS); the host name is set once the job names
 *          the node (vhost_set_hostname).
 *   mount  unshare(CLONE_NEWNS) and every mount made private, so nothing
 *          done here reaches the machine's own mount table. /dev/shm is a new
 *          empty tmpfs. /tmp is an overlay: the machine's /tmp below, read
 *          through, and a private tmpfs above that takes every write; so a
 *          program or job directory that was in /tmp before the node started
 *          is still there, while what the node's processes create (Open MPI's
 *          session directory, sockets, rendezvous files) is the node's alone.
 *          The overlay's upper and work directories live on a scratch tmpfs
 *          mounted on /dev/shm first and then covered by the node's /dev/shm.
 *
 * The mounts go away with the last process of the namespace: nothing is
 * left to clean up on the machine. */
#define _GNU_SOURCE
#include "vhost.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCRATCH "/dev/shm"
#define UPPER SCRATCH "/upper"
#define WORK SCRATCH "/work"

int vhost_parse(const char *s, vhost_mode *mode)
{
    if (strcmp(s, "none") == 0)
        *mode = VHOST_NONE;
    else if (strcmp(s, "host") == 0)
        *mode = VHOST_HOST;
    else if (strcmp(s, "net") == 0)
        *mode = VHOST_NET;
    else if (strcmp(s, "auto") == 0)
        *mode = VHOST_AUTO;
    else
        return -1;
    return 0;
}

/* A fresh tmpfs on DIR with mode 1777, as /tmp and /dev/shm have. */
static int fresh_tmpfs(const char *dir)
{
    return mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
}

int vhost_isolate(int *tmp_private, char *err, size_t errlen)
{
    *tmp_private = 0;
    if (geteuid() != 0) {
        snprintf(err, errlen, "not root");
        return -1;
    }
    if (unshare(CLONE_NEWUTS | CLONE_NEWNS) != 0) {
        snprintf(err, errlen, "unshare of the UTS and mount namespaces failed: %s",
                 strerror(errno));
        return -1;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        snprintf(err, errlen, "cannot make the mounts private: %s", strerror(errno));
        return -1;
    }
    /* The scratch tmpfs for the overlay of /tmp; if the overlay cannot be
     * made, /tmp stays the machine's and only /dev/shm is private. */
    if (mount("tmpfs", SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0) {
        snprintf(err, errlen, "cannot mount a tmpfs on /dev/shm: %s", strerror(errno));
        return -1;
    }
    if (mkdir(UPPER, 01777) == 0 && chmod(UPPER, 01777) == 0 && mkdir(WORK, 0700) == 0 &&
        mount("overlay", "/tmp", "overlay", MS_NOSUID | MS_NODEV,
              "lowerdir=/tmp,upperdir=" UPPER ",workdir=" WORK) == 0)
        *tmp_private = 1;
    if (fresh_tmpfs(SCRATCH) != 0) {
        snprintf(err, errlen, "cannot mount a tmpfs on /dev/shm: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int vhost_isolate_net(char *err, size_t errlen)
{
    if (unshare(CLONE_NEWNET) != 0) {
        snprintf(err, errlen, "unshare of the network namespace failed: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int vhost_set_hostname(const char *name, char *err, size_t errlen)
{
    if (sethostname(name, strlen(name)) != 0) {
        snprintf(err, errlen, "cannot set the host name to %s: %s", name, strerror(errno));
        return -1;
    }
    return 0;
}
