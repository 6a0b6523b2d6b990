/*
 * test_regex.c - PMIx_generate_regex / PMIx_generate_ppn and their
 * expansion give back exactly what went in.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <pmix_server.h>

#include "common/px_regex.h"

static void nodes_round_trip(const char *in, const char *expect_regex)
{
    char *re = NULL, *back = NULL;

    assert_int_equal(PMIx_generate_regex(in, &re), PMIX_SUCCESS);
    if (expect_regex != NULL)
        assert_string_equal(re, expect_regex);
    assert_int_equal(px_regex_expand_nodes(re, &back), PMIX_SUCCESS);
    assert_string_equal(back, in);
    free(re);
    free(back);
}

static void test_nodes(void **state)
{
    nodes_round_trip("n01,n02,n03,n07,login", "pmixlab:n[2:1-3.7],login");
    nodes_round_trip("node1,node2,node10,node11", "pmixlab:node[1:1-2],node[2:10-11]");
    nodes_round_trip("localhost", "pmixlab:localhost");
    nodes_round_trip("a5,a4,a3", NULL); /* descending order is kept */
    nodes_round_trip("x[1],y", "pmixlab-raw:x[1],y");
    nodes_round_trip("", "pmixlab:");
}

static void test_ppn(void **state)
{
    char *re = NULL, *back = NULL;

    assert_int_equal(PMIx_generate_ppn("0,1,2,3;4,5,6,7;9,11", &re), PMIX_SUCCESS);
    assert_string_equal(re, "pmixlab:0-3;4-7;9,11");
    assert_int_equal(px_regex_expand_ppn(re, &back), PMIX_SUCCESS);
    assert_string_equal(back, "0,1,2,3;4,5,6,7;9,11");
    free(re);
    free(back);
    assert_int_equal(PMIx_generate_ppn("0,x", &re), PMIX_ERR_BAD_PARAM);
}

static void test_malformed(void **state)
{
    char *out = NULL;

    assert_int_equal(px_regex_expand_nodes("n[2:1-3]", &out), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_regex_expand_nodes("pmixlab:n[2:3-1]", &out), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_regex_expand_nodes("pmixlab:n[2:1-", &out), PMIX_ERR_BAD_PARAM);
    assert_int_equal(px_regex_expand_ppn("pmixlab:0-a", &out), PMIX_ERR_BAD_PARAM);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_ppn),
        cmocka_unit_test(test_malformed),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
