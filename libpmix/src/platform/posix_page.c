/*
 * posix_page.c - the fence page of the posix platform (px_page.h): a
 * memfd the server maps read-write and passes, with WELCOME, to each local
 * client of the namespace, which maps it read-write too; sleeping and
 * waking on its words with futexes (shared, not private: the sleepers are
 * in other processes).
 *
 * On the wire (posix_int.h): a PX_PLAT_PAGE frame in front of the frame it
 * comes with, in the same sendmsg, with the memfd riding on its first
 * bytes. The client's platform maps it when it reads that frame, before
 * the frame after it reaches the engine, and keeps the mapping until the
 * platform is destroyed. A client that cannot map it has no page: its
 * engine tells the server, which then stops using the page for everyone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h> /* fallocate */
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "posix_int.h"

struct px_page {
    int fd;
    void *mem;
    size_t len;
};

px_page *px_posix_page_create(void *pctx, size_t len, void **mem)
{
    px_posix *p = pctx;
    px_page *pg = calloc(1, sizeof(*pg));

    if (pg == NULL)
        return NULL;
    pg->fd = memfd_create("pmix-fence-page", MFD_CLOEXEC);
    if (pg->fd < 0 || ftruncate(pg->fd, (off_t)len) != 0) {
        px_posix_logf(p, PX_LOG_DEBUG, "no fence page (%s): barriers go through the server",
                      strerror(errno));
        goto fail;
    }
    pg->mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, pg->fd, 0);
    if (pg->mem == MAP_FAILED) {
        px_posix_logf(p, PX_LOG_DEBUG, "cannot map the fence page (%s)", strerror(errno));
        goto fail;
    }
    pg->len = len;
    *mem = pg->mem;
    return pg;
fail:
    if (pg->fd >= 0)
        close(pg->fd);
    free(pg);
    return NULL;
}

pmix_status_t px_posix_page_write(void *pctx, px_page *pg, uint64_t off, const void *data,
                                  size_t len)
{
    const char *p = data;

    if (off > pg->len || len > pg->len - off)
        return PMIX_ERR_BAD_PARAM;
    while (len > 0) {
        ssize_t n = pwrite(pg->fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            px_posix_logf(pctx, PX_LOG_WARN, "cannot write the fence page (%s)",
                          n < 0 ? strerror(errno) : "no progress");
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return PMIX_SUCCESS;
}

void px_posix_page_trim(void *pctx, px_page *pg, uint64_t off, uint64_t len)
{
    if (off > pg->len || len > pg->len - off || len == 0)
        return;
    /* a hole in the memfd: its pages go back, in every process mapping it */
    if (fallocate(pg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) != 0)
        px_posix_logf(pctx, PX_LOG_DEBUG, "cannot free %llu bytes of the fence page (%s)",
                      (unsigned long long)len, strerror(errno));
}

bool px_posix_page_discard(void *pctx, void *addr, size_t len)
{
    /* a hole in the memfd behind the shared mapping, as page_trim's; but
     * madvise works in whole system pages (16 or 64 KiB on some kernels),
     * and rounds the length up: only the whole pages inside the range */
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096, a = (uintptr_t)addr, end = a + len;
    uintptr_t from = (a + page - 1) / page * page, to = end / page * page;

    if (to <= from)
        return len == 0;
    if (madvise((void *)from, to - from, MADV_REMOVE) != 0) {
        px_posix_logf(pctx, PX_LOG_DEBUG, "cannot free %zu bytes of the fence page (%s)", len,
                      strerror(errno));
        return false;
    }
    return from == a && to == end;
}

void px_posix_page_destroy(void *pctx, px_page *pg)
{
    if (pg == NULL)
        return;
    munmap(pg->mem, pg->len);
    close(pg->fd);
    free(pg);
}

int px_posix_page_fd(const px_page *pg, size_t *len)
{
    *len = pg->len;
    return pg->fd;
}

bool px_posix_page_map(px_posix *p, int fd, size_t len)
{
    struct stat st;
    void *mem;

    if (p->page != NULL) {
        close(fd);
        return false; /* one per connection: the peer broke the protocol */
    }
    if (len == 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size < len) {
        px_posix_logf(p, PX_LOG_WARN,
                      "the server's fence page is not what it announced; "
                      "barriers go through the server");
        close(fd);
        return true;
    }
    mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mem == MAP_FAILED) {
        px_posix_logf(p, PX_LOG_WARN,
                      "cannot map the server's fence page (%s); barriers go "
                      "through the server",
                      strerror(errno));
        return true;
    }
    p->page = mem;
    p->page_len = len;
    p->page_bound = px_posix_bound_to(p->server_pid);
    return true;
}

bool px_posix_bound_to(pid_t server)
{
    int sig = 0;

    /* read the signal first: a parent that dies after getppid() matched
     * still kills this process */
    if (server <= 0 || prctl(PR_GET_PDEATHSIG, &sig) != 0 || sig != SIGKILL)
        return false;
    return getppid() == server;
}

bool px_posix_page_bound(void *pctx)
{
    px_posix *p = pctx;
    bool bound;

    pthread_mutex_lock(&p->lock);
    bound = p->page != NULL && p->page_bound;
    pthread_mutex_unlock(&p->lock);
    return bound;
}

void *px_posix_page_get(void *pctx, size_t *len)
{
    px_posix *p = pctx;
    void *mem;

    pthread_mutex_lock(&p->lock);
    mem = p->page;
    *len = p->page_len;
    pthread_mutex_unlock(&p->lock);
    return mem;
}

bool px_posix_page_wait(void *pctx, uint32_t *word, uint32_t val, double seconds)
{
    struct timespec ts;

    (void)pctx;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    if (syscall(SYS_futex, word, FUTEX_WAIT, val, seconds < 0 ? NULL : &ts, NULL, 0) != 0)
        return errno != ETIMEDOUT;
    return true;
}

void px_posix_page_wake(void *pctx, uint32_t *word)
{
    (void)pctx;
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void px_posix_page_unmap(px_posix *p)
{
    if (p->page != NULL)
        munmap(p->page, p->page_len);
    p->page = NULL;
    p->page_len = 0;
}
