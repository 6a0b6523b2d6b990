/*
 * test_launchtree.c - the launch tree's split of the hosts and a daemon's
 * reading of its share (sockhost/launchtree.c).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launchtree.h"

/* Start the share [lo, lo+n) as a daemon does, counting each start and
 * the depth of each node; returns the deepest level. */
static int walk(int lo, int n, int fanout, int level, int *started, int *depth)
{
    int deepest = level - 1;
    for (int c = 0; c < lt_nruns(n, fanout); c++) {
        int first, count, d;
        lt_run(n, fanout, c, &first, &count);
        started[lo + first]++;
        depth[lo + first] = level;
        d = walk(lo + first + 1, count - 1, fanout, level + 1, started, depth);
        if (d > deepest)
            deepest = d;
    }
    return deepest;
}

static void test_runs_cover(void **state)
{
    (void)state;
    for (int n = 0; n <= 64; n++) {
        for (int f = 1; f <= 9; f++) {
            int runs = lt_nruns(n, f), next = 0, min = n, max = 0;
            assert_int_equal(runs, n < f ? n : f);
            for (int c = 0; c < runs; c++) {
                int first, count;
                lt_run(n, f, c, &first, &count);
                assert_int_equal(first, next); /* consecutive, in order */
                assert_true(count >= 1);
                next += count;
                min = count < min ? count : min;
                max = count > max ? count : max;
            }
            assert_int_equal(next, n);
            assert_true(n == 0 || max - min <= 1); /* even */
        }
    }
}

static void test_tree_starts_each_once(void **state)
{
    (void)state;
    int started[300], depth[300];
    for (int k = 1; k <= 300; k += 7) {
        for (int f = 1; f <= 5; f++) {
            memset(started, 0, sizeof started);
            int deepest = walk(0, k, f, 0, started, depth);
            for (int i = 0; i < k; i++)
                assert_int_equal(started[i], 1);
            /* at most F started by pmixrun; depth about log_F(K) */
            int top = 0, levels = 0;
            for (int i = 0; i < k; i++)
                top += depth[i] == 0;
            assert_true(top <= f);
            if (f >= 2) {
                /* levels + 1 levels of the tree reach f + f^2 + ... nodes */
                for (long reach = f; reach < k; reach = reach * f + f)
                    levels++;
                assert_true(deepest <= levels + 1);
            }
        }
    }
    /* the documented example: 5 hosts, fan-out 2 */
    memset(started, 0, sizeof started);
    walk(0, 5, 2, 0, started, depth);
    assert_int_equal(depth[0], 0);
    assert_int_equal(depth[3], 0);
    assert_int_equal(depth[1], 1);
    assert_int_equal(depth[2], 1);
    assert_int_equal(depth[4], 1);
}

/* lt_read from a pipe holding `text`. */
static int read_text(const char *text, lt_conf *c, lt_share *s, char *err, size_t len)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], text, strlen(text)), (ssize_t)strlen(text));
    close(p[1]);
    int rc = lt_read(p[0], c, s, err, len);
    close(p[0]);
    return rc;
}

static void test_read_share(void **state)
{
    (void)state;
    lt_conf c = {0};
    lt_share s = {0};
    char err[256] = "";
    assert_int_equal(read_text("agent ssh -F cfg\npmixd /opt/pmixd\nfanout 2\nhost 4 emu4\n"
                               "host 7 a.b.c\nend\nnot read\n",
                               &c, &s, err, sizeof err),
                     0);
    assert_string_equal(c.agent, "ssh -F cfg");
    assert_string_equal(c.pmixd, "/opt/pmixd");
    assert_int_equal(c.fanout, 2);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.node[0], 4);
    assert_string_equal(s.host[0], "emu4");
    assert_int_equal(s.node[1], 7);
    assert_string_equal(s.host[1], "a.b.c");
    lt_conf_free(&c);
    lt_share_free(&s);

    /* nothing after the key (a daemon pmixrun started alone): no share */
    assert_int_equal(read_text("", &c, &s, err, sizeof err), 0);
    assert_int_equal(s.n, 0);
    assert_null(c.agent);

    static const char *const bad[] = {
        "fanout 0\nend\n",       "fanout 2000\nend\n", "host x emu\nend\n", "host 3\nend\n",
        "launch rockets\nend\n", "host 1 emu1\nend\n", /* a share without agent, pmixd and fan-out
                                                        */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        assert_int_equal(read_text(bad[i], &c, &s, err, sizeof err), -1);
        assert_true(strncmp(err, "launch tree: ", 13) == 0);
        lt_conf_free(&c);
        lt_share_free(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_cover),
        cmocka_unit_test(test_tree_starts_each_once),
        cmocka_unit_test(test_read_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
