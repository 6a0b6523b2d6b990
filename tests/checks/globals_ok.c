/*
 * globals_ok.c - a fixture for check_globals_selftest: only read-only data,
 * which tests/check-globals.sh must accept. The ops table holds function
 * pointers, so position-independent code places it in .data.rel.ro, which
 * nm shows as `d` although it is read-only after relocation.
 */
#include "globals_fixture.h"

static int add_one(int x)
{
    return x + 1;
}

static int twice(int x)
{
    return 2 * x;
}

static const globals_fixture_ops ok_ops = {
    .version = 1,
    .first = add_one,
    .second = twice,
};

static const char *const ok_names[] = {"first", "second"};
static const int ok_table[4] = {1, 2, 3, 4};
const int ok_public_constant = 5;

const globals_fixture_ops *globals_ok_ops(void)
{
    return &ok_ops;
}

int globals_ok_lookup(int i)
{
    return ok_table[i & 3] + (int)ok_names[i & 1][0] + ok_public_constant;
}
