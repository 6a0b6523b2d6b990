/*
 * px_page.h - the fence page: memory a server shares read-write with the
 * local clients of one namespace, so that a barrier among them needs no
 * message at all.
 *
 * Why. A barrier through the server costs every client a request, a sleep
 * and a reply, and the server a wake-up and 2N socket calls; on a node
 * with more processes than cores that is mostly scheduler time. Through a
 * shared counter it costs each process one atomic operation and one sleep,
 * and the last to arrive wakes the others (client/fence.c).
 *
 * When. The server makes a page for a namespace whose processes are all on
 * this node (PMIX_JOB_SIZE equals the local count, 2 to PX_PAGE_MAX of
 * them) when the platform can share memory (posix: a memfd passed with
 * WELCOME); pmixsim and the in-process tests have none. It covers only
 * the fence whose participants are the whole namespace, written as NULL or
 * as the namespace's wildcard (repeated or not: the server drops
 * duplicates): the set of every fence on the page is the same, so its
 * arrivals can be counted in one word.
 *
 * The word: arrivals (low 16 bits), SERVER, BROKEN, COLLECT, and a
 * generation (the high 13 bits, wrapping). Every fence of that set, by
 * every local participant, arrives in the word with one compare-and-swap:
 *   - a plain barrier (a blocking PMIx_Fence, no directive but
 *     PMIX_COLLECT_DATA=false) that is not the last sleeps until the
 *     generation moves; the last one starts the next generation, records
 *     mode[gen & 1] = DONE and wakes them;
 *   - a blocking fence whose only directive is PMIX_COLLECT_DATA arrives
 *     with COLLECT; if every participant wrote its record into the page
 *     (below: collects the clients write themselves) the last arrival
 *     ends it, mode SLOTS. Otherwise the last arrival of a COLLECT
 *     generation leaves the word full (all arrived) and sends the server
 *     PCOLLECT. The server,
 *     once it has read every participant's commits, writes their records
 *     into one of the page's two data halves, the result into
 *     res[gen & 1], mode DATA, and moves the generation on; the sleepers
 *     index the records where they lie (no copy). When it cannot (the
 *     half is still held, the data does not fit) it moves the generation
 *     on with mode SERVER instead, and everyone asks the server;
 *   - anything else (a timeout, a host directive, a non-blocking fence,
 *     or a process whose frames are still queued with no progress thread
 *     to write them: only the server's path drives its connection while
 *     it waits) arrives with SERVER set and goes to the server as before;
 *     whoever sets SERVER wakes the sleepers, who go too, so that every
 *     participant of that fence asks the server and the server's tracker
 *     sees all of them, whatever each one passed. A generation completed
 *     with SERVER set records mode SERVER, for sleepers that look only
 *     after it moved on.
 * A waiter looks at the generation first: a generation that moved on is
 * finished, whatever happened to the page since.
 *
 * Collects the clients write themselves. Before the server is asked, a
 * collect fence tries to finish without it: every COLLECT arrival first
 * copies its own record (as it stood at its last commit, cut for local
 * readers: what the server would write for it) into the data half of the
 * next collect k, at a place it takes from fill[k & 1] (a compare-and-swap
 * that counts cache lines, started again at 0 by the first writer of
 * collect k), writes where and how long into its slot_off and slot_len and
 * then the tag of collect k in the current generation into slot_tag
 * (release), all before its arrival's compare-and-swap. The records lie one
 * after another: a reader touches as few pages as the server's writing
 * would give it (one slot per 2 MiB made every record a TLB miss, about 19
 * us of CPU more per process and collect at 64 in a profile). The last
 * arrival, seeing every slot_tag of that half at the tag of this collect
 * and generation, ends the generation itself: res[gen & 1] (off: the half),
 * mode SLOTS, next generation, wake, then cseq = k; every process then
 * indexes each participant's record where it lies, after checking that
 * slot q holds exactly one record, rank q's of this namespace (a
 * participant that wrote another's record fails the collect for everyone
 * with PMIX_ERR_UNPACK_FAILURE and turns the page off). If any is missing (its
 * writer arrived as a plain barrier, never committed, found the half still
 * held or no room left) it sends PCOLLECT as above. No message, no server
 * wake-up: the collect costs what a barrier costs, plus the copy and the
 * indexing. The generation in the tag makes a slot count only in the fence
 * it was written for: a collect that went through the server without data
 * leaves its number to the next one, and a slot of that earlier try (an
 * older record, or bytes the server has written over since) must not serve
 * it. The first writer of a collect folds what the half's previous one took
 * into hw[half], so that whoever next ends a collect in that half can give
 * back what lies past that collect's data: the server when it writes the
 * half (page_trim; hw[half] then holds the server's own extent), or the
 * last arrival of a collect the clients wrote (page_discard through its
 * mapping; hw[half] = 0 if all of it went, else the server's next write
 * trims the rest). Either does so before it moves the generation on,
 * since after that the clients may write the half again.
 *
 * The data halves: collect number k (cseq) goes into half k & 1. A client
 * that no longer holds the records of collect k (its store dropped them:
 * newer ones replaced every one) writes k into released[rank]; the server
 * writes collect k only when every released[] is at least k - 2. The file
 * is sparse: only what was written takes memory, and after writing
 * collect k the server gives back (page_trim) what an older, larger
 * collect left in that half past the new data.
 *
 * BROKEN is set by the server, for good, when the page can no longer be
 * trusted: a participant died, finalized or could not map the page, a
 * fence on it failed, the namespace was registered again, or a FENCE of
 * the page's set came without having arrived on the page (FENCE carries
 * that flag: a guard against client and server ever disagreeing on the
 * set). A client sets it too when it cannot keep the count right (two of
 * its fences of the set open at once, a fence it arrived for that could
 * not be sent, collected data it cannot use), and when its connection to
 * the server closes (sleepers with no deadline hear of it that way).
 * Sleepers wake and go to the server, which answers as it always did (a
 * dead participant fails the fence at once with
 * PMIX_ERR_PROC_TERM_WO_SYNC); later fences go straight there.
 *
 * Commits. A barrier through the server kept commits ahead of it on each
 * client's socket, so a Get answered after the barrier saw them. Without a
 * message that order is gone, so every client counts the commits it has
 * sent in commits[rank], and the server holds a Get of a local process's
 * data until it has received that many commits from it (server/get.c).
 *
 * Both sides use C11 atomics on the mapping; 32-bit lock-free atomics do
 * not depend on the address they are mapped at.
 */
#ifndef PX_PAGE_H
#define PX_PAGE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PX_PAGE_MAGIC 0x50465850u /* "PXFP" */
#define PX_PAGE_MAX 0xffffu       /* participants the arrival count can hold */

#define PX_PG_COUNT 0xffffu
#define PX_PG_SERVER (1u << 16)
#define PX_PG_BROKEN (1u << 17)
#define PX_PG_COLLECT (1u << 18)
#define PX_PG_GEN_SHIFT 19
#define PX_PG_GEN(w) ((w) >> PX_PG_GEN_SHIFT)

/* mode[gen & 1] of a finished generation */
#define PX_PG_MODE_DONE 0   /* a barrier, complete */
#define PX_PG_MODE_SERVER 1 /* everyone asks the server */
#define PX_PG_MODE_DATA 2   /* collected: res[gen & 1] */
#define PX_PG_MODE_SLOTS 3  /* collected, each record in its writer's slot */

/* Room for one collect's records in each data half (more goes through the server). */
#define PX_PAGE_HALF ((uint64_t)128 << 20)

typedef struct px_page_res {
    uint32_t cseq; /* collect number */
    uint32_t pad;
    uint64_t off; /* from the start of the page */
    uint64_t len;
} px_page_res;

typedef struct px_page_hdr {
    uint32_t magic;  /* PX_PAGE_MAGIC, written before the page is sent */
    uint32_t nprocs; /* participants: ranks 0 .. nprocs-1 (written once, read once: see
                        px_page_released) */
    alignas(64) _Atomic uint32_t word;
    _Atomic uint32_t mode[2]; /* PX_PG_MODE_*, by generation & 1 */
    px_page_res res[2];       /* by generation & 1, written before the generation moves */
    _Atomic uint32_t cseq;    /* the last collect finished with data (DATA or SLOTS) */
    _Atomic uint32_t fill[2]; /* by half: PX_PG_FILL, for SLOTS */
    _Atomic uint32_t hw[2];   /* by half: the most lines earlier collects took there */
    /* per rank: commits sent to the server, then (px_page_released) the
     * last collect whose records it no longer holds, then, by half, the
     * collect and generation its slot holds a record for (px_page_slot_tag), that
     * record's length (px_page_slot_len) and where it starts in the half
     * (px_page_slot_off) */
    alignas(64) _Atomic uint32_t commits[];
} px_page_hdr;

/* The per-rank arrays. `n` is the participant count as the caller knows
 * it, never pg->nprocs read again: every participant can write the page,
 * and a count changed under a reader would move these arrays out of the
 * mapping. The client keeps the count it checked when the page came
 * (px_client.page_n), the server the one it wrote (px_nspace.pg_n). */
static inline _Atomic uint32_t *px_page_released(px_page_hdr *pg, uint32_t n)
{
    return pg->commits + n;
}

static inline _Atomic uint32_t *px_page_slot_tag(px_page_hdr *pg, uint32_t n, uint32_t half)
{
    return pg->commits + (2 + (size_t)(half & 1)) * n;
}

static inline _Atomic uint32_t *px_page_slot_len(px_page_hdr *pg, uint32_t n, uint32_t half)
{
    return pg->commits + (4 + (size_t)(half & 1)) * n;
}

static inline _Atomic uint32_t *px_page_slot_off(px_page_hdr *pg, uint32_t n, uint32_t half)
{
    return pg->commits + (6 + (size_t)(half & 1)) * n;
}

/* True if the data half of collect `cseq` may be written: every
 * participant let go of collect cseq - 2, the last one there. Both the
 * clients (their slots) and the server (its records) ask before writing. */
static inline bool px_page_half_free(px_page_hdr *pg, uint32_t n, uint32_t cseq)
{
    _Atomic uint32_t *rel = px_page_released(pg, n);

    for (uint32_t r = 0; r < n && cseq > 2; r++)
        if ((int32_t)(atomic_load_explicit(&rel[r], memory_order_acquire) - (cseq - 2)) < 0)
            return false;
    return true;
}

/* The header with its per-rank arrays. */
static inline size_t px_page_size(uint32_t nprocs)
{
    return offsetof(px_page_hdr, commits) + 8 * (size_t)nprocs * sizeof(uint32_t);
}

/* fill[half]: the low 10 bits of the collect whose records are being
 * written there (the high bits), and how much of the half they take, in
 * cache lines (the low 22). */
#define PX_PG_FILL_LINE 64u
#define PX_PG_FILL_SHIFT 22
#define PX_PG_FILL_UNITS 0x3fffffu /* a half is 2^21 lines */
#define PX_PG_FILL_TAG(cseq) ((cseq)&0x3ffu)
#define PX_PG_FILL(cseq, units) ((PX_PG_FILL_TAG(cseq) << PX_PG_FILL_SHIFT) | (units))

/* slot_tag[half][rank]: the collect and the generation a record was
 * written in; 0 is never a tag (that collect goes to the server). */
#define PX_PG_SLOT_TAG(cseq, gen) (((cseq) << 13) | ((gen)&0x1fffu))

/* Where data half 0 starts (page-aligned; half 1 is PX_PAGE_HALF later),
 * and the whole file. */
static inline uint64_t px_page_data_off(uint32_t nprocs)
{
    return ((uint64_t)px_page_size(nprocs) + 4095) & ~(uint64_t)4095;
}

static inline uint64_t px_page_total(uint32_t nprocs)
{
    return px_page_data_off(nprocs) + 2 * PX_PAGE_HALF;
}

/* Bytes of a data half in whole 4 KiB pages (what writing them took, and
 * where giving back starts). */
static inline uint64_t px_page_round(uint64_t n)
{
    return (n + 4095) & ~(uint64_t)4095;
}

/* Bytes that `lines` fill lines (fill[], hw[]) take of a half, in whole
 * pages; never past the half, whatever a client wrote there. */
static inline uint64_t px_page_lines_extent(uint32_t lines)
{
    uint64_t n = px_page_round((uint64_t)lines * PX_PG_FILL_LINE);
    return n < PX_PAGE_HALF ? n : PX_PAGE_HALF;
}

#endif /* PX_PAGE_H */
