/*
 * globals - a PMIx program with writable globals, for pmixsim's tests
 * (simtest.sh program-globals). pmixsim refuses it and names them; with
 * --privatize every simulated process has its own copy of them, and each
 * prints "rank R: calls 1 total 1 start 7 depth 1". Were they shared, the
 * counts would grow from process to process: every process increments
 * them before the fence and prints them after it.
 */
#include <stdio.h>

#include <pmix.h>

int total;        /* .bss, exported */
int start = 7;    /* .data */
static int calls; /* .bss, static */

static int enter(void)
{
    static int depth; /* a static in a function */

    return ++depth;
}

int main(void)
{
    pmix_proc_t me;
    pmix_status_t rc;
    int depth;

    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS)
        return 1;
    calls++;
    total++;
    depth = enter();
    rc = PMIx_Fence(NULL, 0, NULL, 0);
    printf("rank %u: calls %d total %d start %d depth %d\n", me.rank, calls, total, start, depth);
    start++;
    PMIx_Finalize(NULL, 0);
    return rc == PMIX_SUCCESS ? 0 : 1;
}
