/*
 * globals_bad.c - a fixture for check_globals_selftest: one of each kind of
 * writable data that tests/check-globals.sh must report (a static in .bss,
 * an initialized global in .data, a common symbol -- compiled with -fcommon
 * --, a thread-local, a table of writable pointers in .data.rel.local, and a
 * function-local static). It is compiled but never linked into anything.
 * checks/check-globals-selftest.sh lists the same names.
 */
#include "globals_fixture.h"

static int bad_counter;
int bad_public = 1;
int bad_common;
__thread int bad_tls;
const char *bad_names[] = {"first", "second"}; /* the pointers are writable */

int globals_bad_bump(int i)
{
    static int bad_calls;

    bad_calls++;
    bad_tls++;
    bad_common++;
    return ++bad_counter + bad_public + bad_calls + (int)bad_names[i & 1][0];
}
