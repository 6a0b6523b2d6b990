/*
 * nomain - a shared object with PMIx calls but no main, for pmixsim's tests
 * (simtest.sh program-errors): pmixsim refuses it.
 */
#include <pmix.h>

int start(void);

int start(void)
{
    pmix_proc_t me;

    return PMIx_Init(&me, NULL, 0);
}
