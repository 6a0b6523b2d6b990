/*
 * globals_fixture.h - declarations shared by the two fixtures of
 * check_globals_selftest (globals_bad.c, globals_ok.c).
 */
#ifndef GLOBALS_FIXTURE_H
#define GLOBALS_FIXTURE_H

typedef struct globals_fixture_ops {
    unsigned version;
    int (*first)(int x);
    int (*second)(int x);
} globals_fixture_ops;

extern const char *bad_names[];
int globals_bad_bump(int i);
const globals_fixture_ops *globals_ok_ops(void);
int globals_ok_lookup(int i);

#endif /* GLOBALS_FIXTURE_H */
