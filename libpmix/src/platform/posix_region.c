/*
 * posix_region.c - shared regions for the posix platform (px_platform.h).
 *
 * A region is a memfd holding one copy of collected data, written in one
 * or more appends and sealed against any change before it is first sent. The server sends its fd
 * once per client, with SCM_RIGHTS on the first bytes of the frame that announces it (the frame
 * header's PX_FRAME_REGION bit); each client maps it read-only. The data
 * thus exists once per node however many clients read it, and a client's
 * store indexes the mapping in place.
 *
 * Lifetime: the engine holds one reference until region_release; every
 * queued frame holds one until its fd has been passed (the kernel then
 * holds the file for the receiver). The last reference closes the fd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_int.h"

struct px_region *px_posix_region_create(void *pctx, const void *data, size_t len)
{
    px_posix *p = pctx;
    struct px_region *r = malloc(sizeof(*r));
    int fd;

    if (r == NULL)
        return NULL;
    fd = memfd_create("pmix-collected", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        px_posix_logf(p, PX_LOG_DEBUG, "memfd_create failed (%s): sending copies", strerror(errno));
        free(r);
        return NULL;
    }
    r->refs = 1;
    r->fd = fd;
    r->len = 0;
    r->sealed = false;
    if (px_posix_region_append(p, r, data, len) != PMIX_SUCCESS) {
        close(fd);
        free(r);
        return NULL;
    }
    return r;
}

pmix_status_t px_posix_region_append(void *pctx, struct px_region *r, const void *data, size_t len)
{
    px_posix *p = pctx;
    size_t off = 0;

    if (r->sealed)
        return PMIX_ERR_BAD_PARAM; /* already sent: readers may have mapped it */
    while (off < len) {
        ssize_t n = pwrite(r->fd, (const char *)data + off, len - off, (off_t)(r->len + off));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            px_posix_logf(p, PX_LOG_DEBUG, "writing %zu bytes into a region failed (%s)", len,
                          n < 0 ? strerror(errno) : "short write");
            if (ftruncate(r->fd, (off_t)r->len) != 0) /* back to what it was */
                px_posix_logf(p, PX_LOG_DEBUG, "and truncating it back failed too");
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        off += (size_t)n;
    }
    r->len += len;
    return PMIX_SUCCESS;
}

bool px_posix_region_seal(struct px_region *r)
{
    /* readers may trust that nothing changes under their mapping */
    if (!r->sealed &&
        fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
        return false;
    r->sealed = true;
    return true;
}

void px_posix_region_unref(struct px_region *r)
{
    if (r != NULL && --r->refs == 0) {
        close(r->fd);
        free(r);
    }
}

void px_posix_region_release(void *pctx, struct px_region *r)
{
    px_posix *p = pctx;

    pthread_mutex_lock(&p->lock);
    px_posix_region_unref(r);
    pthread_mutex_unlock(&p->lock);
}

typedef struct mapping {
    void *addr;
    size_t len;
} mapping;

static void unmap(void *arg)
{
    mapping *m = arg;

    if (m->addr != NULL)
        munmap(m->addr, m->len);
    free(m);
}

pmix_status_t px_posix_deliver_region(const px_sink *sink, void *sctx, uint64_t conn,
                                      const void *frame, size_t flen, int fd, bool *reached)
{
    struct stat st;
    mapping *m;
    int seals;

    *reached = false;
    /* only a sealed memfd: nothing can shrink or change under the mapping */
    seals = fcntl(fd, F_GET_SEALS);
    if (sink->deliver_region == NULL || seals < 0 ||
        (seals & (F_SEAL_SHRINK | F_SEAL_WRITE)) != (F_SEAL_SHRINK | F_SEAL_WRITE) ||
        fstat(fd, &st) != 0 || st.st_size < 0 || (m = calloc(1, sizeof(*m))) == NULL) {
        close(fd);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    m->len = (size_t)st.st_size;
    if (m->len > 0) {
        m->addr = mmap(NULL, m->len, PROT_READ, MAP_SHARED, fd, 0);
        if (m->addr == MAP_FAILED) {
            close(fd);
            free(m);
            return PMIX_ERR_NOMEM;
        }
    }
    close(fd); /* the mapping keeps the file */
    *reached = true;
    return sink->deliver_region(sctx, conn, frame, flen, m->addr, m->len, unmap, m);
}
