/*
 * posix_region.c - shared regions for the posix platform (px_platform.h).
 *
 * A server keeps a pool of slabs. A slab is a memfd sealed against
 * shrinking (F_SEAL_SHRINK | F_SEAL_SEAL): it can grow, never shrink, and
 * nobody can add seals to it. A region is one slab while it is in use: the
 * server writes the collected data into it with pwrite from offset 0, and
 * sends it with frames. Once every delivery of it has been released, the
 * slab is free and the next region is written into the same pages.
 *
 * Why a pool: a fresh memfd per fence made every reader map it, fault its
 * pages in and unmap it again a fence later, and made the server allocate
 * and clear new pages; with 64 readers of 4 MiB that was most of the
 * fence's time. A reader maps a slab once and keeps the mapping: the pages
 * stay mapped from fence to fence and the server writes over them.
 *
 * The contract that makes this safe (a reader never sees bytes change
 * under it): the server writes into a slab only while its `refs` is 0,
 * i.e. no delivery of it is still held. A reader holds a delivery from the
 * moment the frame is queued for it until the server has read its
 * PX_PLAT_RELEASE entry for it; the reader sends that entry only after its
 * engine called the release function, and no longer reads the bytes after
 * that. Readers get a read-only descriptor (reopened through
 * /proc/self/fd; the read-write one if that fails) and map it PROT_READ;
 * F_SEAL_SHRINK means their mapping can never lose pages under it. A
 * connection that goes away releases everything it held.
 *
 * On the wire (posix_int.h): a PX_PLAT_REGION frame in front of the frame
 * that carries the region, in the same sendmsg, says which slab and how
 * many bytes; the slab's fd rides on it the first time a connection gets
 * that slab. Releases travel in a PX_PLAT_RELEASE frame in front of the
 * reader's next frame to the server: no message of their own.
 *
 * Memory: the pool holds as many slabs as regions were held at once (two
 * in a loop of fences, where the previous fence's data is released once
 * the next one's arrives). A slab's file is as large as the largest region
 * it held (it cannot shrink), but when a region leaves at least TRIM_MIN
 * bytes of older data past its end, those pages go back (a hole punched
 * in the memfd: nobody reads them, for nobody holds the slab while the
 * server writes it). A slab lives while some connection that knows it is
 * open.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_int.h"

/* Older data past a new region's end worth giving back (one 100 MiB fence
 * then small ones kept 100 MiB resident for the job's life). */
#define TRIM_MIN ((size_t)1 << 20)

/* ---- the server's pool ---- */

/* Give back the pages past the current region that older, larger ones
 * left, if there are enough of them to matter. Called when the region is
 * complete: as it is sealed for its first delivery (lock held). */
void px_posix_region_trim(px_posix *p, struct px_region *r)
{
    size_t keep = (r->len + 4095) & ~(size_t)4095;

    if (r->dirty < keep + TRIM_MIN)
        return;
    if (fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)keep,
                  (off_t)(r->dirty - keep)) != 0) {
        px_posix_logf(p, PX_LOG_DEBUG, "cannot free %zu bytes of a region's slab (%s)",
                      r->dirty - keep, strerror(errno));
        return;
    }
    r->dirty = keep;
}

static void slab_free(px_posix *p, struct px_region *r)
{
    for (struct px_region **pp = &p->slabs; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == r) {
            *pp = r->next;
            break;
        }
    }
    if (r->rofd != r->fd)
        close(r->rofd);
    close(r->fd);
    free(r);
}

static struct px_region *slab_new(px_posix *p)
{
    struct px_region *r = calloc(1, sizeof(*r));
    char path[64];

    if (r == NULL)
        return NULL;
    r->fd = memfd_create("pmix-collected", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (r->fd < 0) {
        px_posix_logf(p, PX_LOG_DEBUG, "memfd_create failed (%s): sending copies", strerror(errno));
        free(r);
        return NULL;
    }
    if (fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
        px_posix_logf(p, PX_LOG_DEBUG, "cannot seal a memfd (%s): sending copies", strerror(errno));
        close(r->fd);
        free(r);
        return NULL;
    }
    snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
    r->rofd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->rofd < 0)
        r->rofd = r->fd; /* no /proc: readers still map it read-only */
    r->id = p->next_slab++;
    r->next = p->slabs;
    p->slabs = r;
    return r;
}

struct px_region *px_posix_region_create(void *pctx, const void *data, size_t len)
{
    px_posix *p = pctx;
    struct px_region *r = NULL;

    pthread_mutex_lock(&p->lock);
    /* a free slab, the largest: the most likely to hold it without growing */
    for (struct px_region *s = p->slabs; s != NULL; s = s->next)
        if (s->refs == 0 && (r == NULL || s->cap > r->cap))
            r = s;
    if (r == NULL)
        r = slab_new(p);
    if (r != NULL) {
        r->refs = 1;
        r->len = 0;
        r->sealed = false;
        if (px_posix_region_append(p, r, data, len) != PMIX_SUCCESS) {
            px_posix_region_unref(p, r);
            r = NULL;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

pmix_status_t px_posix_region_append(void *pctx, struct px_region *r, const void *data, size_t len)
{
    px_posix *p = pctx;
    size_t off = 0;

    if (r->sealed)
        return PMIX_ERR_BAD_PARAM; /* already sent: readers may be reading it */
    while (off < len) {
        ssize_t n = pwrite(r->fd, (const char *)data + off, len - off, (off_t)(r->len + off));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            /* The region stays as it was: the bytes after `len` are not part
             * of it. Those written may hold pages: the next trim frees them. */
            if (r->len + off > r->dirty)
                r->dirty = r->len + off;
            px_posix_logf(p, PX_LOG_DEBUG, "writing %zu bytes into a region failed (%s)", len,
                          n < 0 ? strerror(errno) : "short write");
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        off += (size_t)n;
    }
    r->len += len;
    if (r->len > r->cap)
        r->cap = r->len;
    if (r->len > r->dirty)
        r->dirty = r->len;
    return PMIX_SUCCESS;
}

void px_posix_region_unref(px_posix *p, struct px_region *r)
{
    if (r == NULL || --r->refs > 0)
        return;
    r->len = 0;
    r->sealed = false;
    if (r->known_by == 0)
        slab_free(p, r); /* no reader has it: nothing to keep it for */
}

void px_posix_region_release(void *pctx, struct px_region *r)
{
    px_posix *p = pctx;

    pthread_mutex_lock(&p->lock);
    px_posix_region_unref(p, r);
    pthread_mutex_unlock(&p->lock);
}

/* ---- a reader's mappings ---- */

static void rmap_free(px_rmap *m)
{
    if (m->p != NULL) {
        for (px_rmap **pp = &m->p->rmaps; *pp != NULL; pp = &(*pp)->next) {
            if (*pp == m) {
                *pp = m->next;
                break;
            }
        }
    }
    if (m->addr != NULL)
        munmap(m->addr, m->maplen);
    if (m->fd >= 0)
        close(m->fd);
    free(m);
}

/* Map `m->fd` anew for at least `need` bytes. The mapping reaches past
 * the file's end (never read there) so that the slab can grow a little
 * without a new mapping. */
static bool rmap_map(px_rmap *m, size_t need)
{
    size_t len = need < ((size_t)1 << 20) ? ((size_t)2 << 20) : need * 2;
    void *a = mmap(NULL, len, PROT_READ, MAP_SHARED, m->fd, 0);

    if (a == MAP_FAILED)
        return false;
    m->addr = a;
    m->maplen = len;
    return true;
}

/* The current mapping of slab `id` on connection `conn`, or NULL. */
static px_rmap *rmap_find(px_posix *p, uint64_t conn, uint32_t id)
{
    for (px_rmap *m = p->rmaps; m != NULL; m = m->next)
        if (m->current && m->conn == conn && m->id == id)
            return m;
    return NULL;
}

static void rmap_release(void *arg)
{
    px_rmap *m = arg;
    px_posix *p = m->p;

    if (p != NULL)
        pthread_mutex_lock(&p->lock);
    m->holders--;
    if (p != NULL)
        px_posix_conn_note_release(p, m->conn, m->id); /* no-op if the connection is gone */
    if (m->holders == 0 && !m->current)
        rmap_free(m);
    if (p != NULL)
        pthread_mutex_unlock(&p->lock);
}

/* Stop using `m` for new deliveries: it goes with its last holder. */
static void rmap_retire(px_rmap *m)
{
    m->current = false;
    if (m->fd >= 0)
        close(m->fd);
    m->fd = -1;
    if (m->holders == 0)
        rmap_free(m);
}

static pmix_status_t map_region(px_conn *c, uint32_t id, uint64_t len, int fd, px_rmap **out)
{
    px_posix *p = c->p;
    px_rmap *m = rmap_find(p, c->id, id);
    struct stat st;

    if (fd >= 0) {
        int seals = fcntl(fd, F_GET_SEALS);
        /* a slab's fd comes once per connection; it must never shrink */
        if (m != NULL || seals < 0 || (seals & F_SEAL_SHRINK) == 0 || fstat(fd, &st) != 0 ||
            (uint64_t)st.st_size < len || (m = calloc(1, sizeof(*m))) == NULL) {
            close(fd);
            return PMIX_ERR_UNPACK_FAILURE;
        }
        m->p = p;
        m->conn = c->id;
        m->id = id;
        m->fd = fd;
        m->size = (size_t)st.st_size;
        m->current = true;
        if (!rmap_map(m, m->size)) {
            close(fd);
            free(m);
            return PMIX_ERR_NOMEM;
        }
        m->next = p->rmaps;
        p->rmaps = m;
    } else if (m == NULL) {
        return PMIX_ERR_UNPACK_FAILURE; /* a slab this connection never got */
    }
    if (len > m->size) {
        /* the slab grew since we looked */
        if (fstat(m->fd, &st) != 0 || (uint64_t)st.st_size < len)
            return PMIX_ERR_UNPACK_FAILURE;
        m->size = (size_t)st.st_size;
    }
    if (len > m->maplen) {
        /* a larger mapping; the old one stays while deliveries hold it */
        px_rmap *n = calloc(1, sizeof(*n));
        if (n == NULL)
            return PMIX_ERR_NOMEM;
        *n = *m;
        if (!rmap_map(n, m->size)) {
            free(n);
            return PMIX_ERR_NOMEM;
        }
        n->holders = 0;
        n->next = p->rmaps;
        p->rmaps = n;
        m->fd = -1; /* n has it now */
        rmap_retire(m);
        m = n;
    }
    *out = m;
    return PMIX_SUCCESS;
}

pmix_status_t px_posix_deliver_region(px_conn *c, const void *frame, size_t flen, bool *reached)
{
    uint32_t id = c->pend_id;
    uint64_t len = c->pend_len;
    int fd = c->pend_fd;
    px_rmap *m = NULL;
    pmix_status_t rc;

    c->pend = false;
    c->pend_fd = -1;
    *reached = false;
    if (c->sink->deliver_region == NULL) {
        if (fd >= 0)
            close(fd);
        return PMIX_ERR_UNPACK_FAILURE;
    }
    rc = map_region(c, id, len, fd, &m);
    if (rc != PMIX_SUCCESS)
        return rc;
    m->holders++;
    *reached = true;
    return c->sink->deliver_region(c->sctx, c->id, frame, flen, len > 0 ? m->addr : NULL,
                                   (size_t)len, rmap_release, m);
}

void px_posix_region_conn_gone(px_conn *c)
{
    px_posix *p = c->p;

    for (size_t i = 0; i < c->nheld; i++)
        px_posix_region_unref(p, c->held[i]);
    for (size_t i = 0; i < c->nknown; i++) {
        struct px_region *r = c->known[i];
        if (--r->known_by == 0 && r->refs == 0)
            slab_free(p, r);
    }
    free(c->held);
    free(c->known);
    free(c->rel);
    c->held = c->known = NULL;
    c->rel = NULL;
    c->nheld = c->capheld = c->nknown = c->capknown = c->nrel = c->caprel = 0;
    if (c->pend_fd >= 0)
        close(c->pend_fd);
    c->pend_fd = -1;
    c->pend = false;
    for (px_rmap *m = p->rmaps, *next; m != NULL; m = next) {
        next = m->next;
        if (m->conn == c->id && m->current)
            rmap_retire(m);
    }
}

void px_posix_regions_destroy(px_posix *p)
{
    while (p->slabs != NULL)
        slab_free(p, p->slabs);
    while (p->rmaps != NULL) {
        px_rmap *m = p->rmaps;
        p->rmaps = m->next;
        m->p = NULL; /* a holder may still read it: it goes with the last one */
        m->current = false;
        if (m->fd >= 0)
            close(m->fd);
        m->fd = -1;
        if (m->holders == 0)
            rmap_free(m);
    }
}
