/*
 * test_compat.c: what the public headers give programs written for OpenPMIx
 * 4.2 beyond the Standard: the inline helpers of pmix_common.h (pmix_argv_*,
 * pmix_setenv, pmix_strncpy, pmix_keylen, pmix_check_true, ...) and the
 * macros (PMIX_VALUE_GET_NUMBER with a C type, PMIX_INFO_SET_*, the
 * statistics families, PMIX_INFO_LIST_INSERT, ...).
 *
 * Each test states the meaning OpenPMIx's headers give a name and checks
 * ours has it, edge cases included (empty strings, a trailing delimiter,
 * NULL). Under AddressSanitizer the same tests prove the FREE and RELEASE
 * macros free what they should and nothing twice.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <pmix.h>
#include <pmix_deprecated.h>
#include <pmix_version.h>

static void test_argv_helpers(void **state)
{
    (void)state;
    char **v = NULL;
    pmix_status_t rc;

    assert_int_equal(pmix_argv_count(NULL), 0);
    assert_int_equal(pmix_argv_append_nosize(&v, "b"), PMIX_SUCCESS);
    assert_int_equal(pmix_argv_prepend_nosize(&v, "a"), PMIX_SUCCESS);
    assert_int_equal(pmix_argv_append_unique_nosize(&v, "b"), PMIX_SUCCESS);
    assert_int_equal(pmix_argv_append_unique_nosize(&v, "c"), PMIX_SUCCESS);
    assert_int_equal(pmix_argv_count(v), 3);
    char *s = pmix_argv_join(v, ',');
    assert_string_equal(s, "a,b,c");
    free(s);
    char **c = pmix_argv_copy(v);
    assert_int_equal(pmix_argv_count(c), 3);
    assert_ptr_not_equal(c[0], v[0]);
    assert_string_equal(c[2], "c");
    pmix_argv_free(c);
    pmix_argv_free(v);

    /* The macros: PMIX_ARGV_APPEND takes the array, PMIX_ARGV_APPEND_UNIQUE
     * its address. */
    v = NULL;
    PMIX_ARGV_APPEND(rc, v, "x");
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_ARGV_APPEND_UNIQUE(rc, &v, "x");
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_ARGV_APPEND_UNIQUE(rc, &v, "y");
    int n;
    PMIX_ARGV_COUNT(n, v);
    assert_int_equal(n, 2);
    PMIX_ARGV_JOIN(s, v, ':');
    assert_string_equal(s, "x:y");
    free(s);
    PMIX_ARGV_FREE(v);

    /* Joining nothing gives an empty string; copying NULL gives NULL, an
     * empty array an empty array. */
    s = pmix_argv_join(NULL, ',');
    assert_string_equal(s, "");
    free(s);
    assert_null(pmix_argv_copy(NULL));
    char *none[] = {NULL};
    c = pmix_argv_copy(none);
    assert_non_null(c);
    assert_null(c[0]);
    pmix_argv_free(c);
    pmix_argv_free(NULL);
}

static void test_argv_split(void **state)
{
    (void)state;
    char **v = pmix_argv_split("a,,b,", ',');
    assert_int_equal(pmix_argv_count(v), 2);
    assert_string_equal(v[0], "a");
    assert_string_equal(v[1], "b");
    pmix_argv_free(v);

    /* Empty fields are kept, but not one after a final delimiter. */
    v = pmix_argv_split_with_empty("a,,b,", ',');
    assert_int_equal(pmix_argv_count(v), 3);
    assert_string_equal(v[1], "");
    assert_string_equal(v[2], "b");
    pmix_argv_free(v);
    v = pmix_argv_split_with_empty(",", ',');
    assert_int_equal(pmix_argv_count(v), 1);
    assert_string_equal(v[0], "");
    pmix_argv_free(v);
    assert_null(pmix_argv_split_with_empty("", ','));
    assert_null(pmix_argv_split("", ','));
    assert_null(pmix_argv_split(NULL, ','));

    PMIX_ARGV_SPLIT(v, "p q", ' ');
    assert_int_equal(pmix_argv_count(v), 2);
    pmix_argv_free(v);
}

static void test_setenv(void **state)
{
    (void)state;
    char **env = NULL;
    pmix_status_t rc;

    assert_int_equal(pmix_setenv("A", "1", false, &env), PMIX_SUCCESS);
    assert_int_equal(pmix_setenv("A", "2", false, &env), PMIX_ERR_EXISTS);
    assert_string_equal(env[0], "A=1");
    assert_int_equal(pmix_setenv("A", "2", true, &env), PMIX_SUCCESS);
    assert_string_equal(env[0], "A=2");
    assert_int_equal(pmix_setenv("B", NULL, true, &env), PMIX_SUCCESS);
    assert_string_equal(env[1], "B=");
    PMIX_SETENV(rc, "A", "3", &env);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_string_equal(env[0], "A=3");
    assert_int_equal(pmix_argv_count(env), 2);
    pmix_argv_free(env);
    assert_int_equal(pmix_setenv("A", "1", true, NULL), PMIX_ERR_BAD_PARAM);

    /* The process's own environment goes through setenv. */
    extern char **environ;
    assert_int_equal(pmix_setenv("PMIXLAB_TEST_COMPAT", "yes", true, &environ), PMIX_SUCCESS);
    assert_string_equal(getenv("PMIXLAB_TEST_COMPAT"), "yes");
    assert_int_equal(pmix_setenv("PMIXLAB_TEST_COMPAT", NULL, true, &environ), PMIX_SUCCESS);
    assert_null(getenv("PMIXLAB_TEST_COMPAT"));
}

static void test_strings(void **state)
{
    (void)state;
    char buf[8];
    memset(buf, 'z', sizeof(buf));
    pmix_strncpy(buf, "abcdefghij", 4);
    assert_string_equal(buf, "abcd");
    pmix_strncpy(buf, "ab", 4);
    assert_string_equal(buf, "ab");

    char longkey[PMIX_MAX_KEYLEN + 10];
    memset(longkey, 'k', sizeof(longkey));
    assert_int_equal(pmix_keylen(longkey), PMIX_MAX_KEYLEN + 1);
    assert_int_equal(pmix_keylen("pmix.rank"), 9);
    assert_int_equal(pmix_keylen(NULL), 0);
    char longns[PMIX_MAX_NSLEN + 10];
    memset(longns, 'n', sizeof(longns));
    assert_int_equal(pmix_nslen(longns), PMIX_MAX_NSLEN + 1);
    assert_int_equal(pmix_nslen(""), 0);

    void *p = pmix_calloc(2, 8);
    assert_non_null(p);
    assert_int_equal(((char *)p)[15], 0);
    pmix_free(p);
    p = pmix_malloc(4);
    assert_non_null(p);
    pmix_free(p);
}

static pmix_boolean_t truth_of_string(const char *s)
{
    pmix_value_t v;
    PMIx_Value_construct(&v);
    v.type = PMIX_STRING;
    v.data.string = (char *)s;
    return pmix_check_true(&v);
}

static void test_check_true(void **state)
{
    (void)state;
    pmix_value_t v;
    PMIx_Value_construct(&v);
    assert_int_equal(pmix_check_true(&v), PMIX_BOOL_TRUE); /* PMIX_UNDEF */
    bool f = false;
    PMIx_Value_load(&v, &f, PMIX_BOOL);
    assert_int_equal(pmix_check_true(&v), PMIX_BOOL_FALSE);
    assert_false(PMIX_CHECK_TRUE(&v));
    assert_true(PMIX_CHECK_BOOL(&v));
    int i = 1;
    PMIx_Value_load(&v, &i, PMIX_INT);
    assert_int_equal(pmix_check_true(&v), PMIX_NON_BOOL);
    assert_false(PMIX_CHECK_BOOL(&v));

    assert_int_equal(truth_of_string(NULL), PMIX_BOOL_TRUE);
    assert_int_equal(truth_of_string("   "), PMIX_BOOL_TRUE);
    assert_int_equal(truth_of_string("Yes"), PMIX_BOOL_TRUE);
    assert_int_equal(truth_of_string(" TRUE"), PMIX_BOOL_TRUE);
    assert_int_equal(truth_of_string("12"), PMIX_BOOL_TRUE);
    assert_int_equal(truth_of_string("0"), PMIX_BOOL_FALSE);
    assert_int_equal(truth_of_string("no"), PMIX_BOOL_FALSE);
    assert_int_equal(truth_of_string("False"), PMIX_BOOL_FALSE);
    assert_int_equal(truth_of_string("maybe"), PMIX_NON_BOOL);

    pmix_info_t info;
    PMIx_Info_construct(&info);
    PMIx_Info_load(&info, PMIX_TIMEOUT, "true", PMIX_STRING);
    /* PMIX_INFO_TRUE keeps the Standard's meaning (a bool or no value);
     * OpenPMIx's also reads strings, as PMIX_CHECK_TRUE does. */
    assert_false(PMIX_INFO_TRUE(&info));
    assert_true(PMIX_CHECK_TRUE(&info.value));
    PMIx_Info_destruct(&info);
}

static void test_value_get_number(void **state)
{
    (void)state;
    pmix_value_t v;
    pmix_status_t rc;
    size_t sz = 0;
    double d = 0;
    int i = 0;

    PMIx_Value_construct(&v);
    uint16_t u16 = 300;
    PMIx_Value_load(&v, &u16, PMIX_UINT16);
    PMIX_VALUE_GET_NUMBER(rc, &v, sz, size_t);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_int_equal(sz, 300);
    PMIX_VALUE_GET_NUMBER(rc, &v, d, double);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_true(d == 300.0);

    int64_t neg = -7;
    PMIx_Value_load(&v, &neg, PMIX_INT64);
    PMIX_VALUE_GET_NUMBER(rc, &v, i, int);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_int_equal(i, -7);

    double half = 2.5;
    PMIx_Value_load(&v, &half, PMIX_DOUBLE);
    PMIX_VALUE_GET_NUMBER(rc, &v, i, int);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_int_equal(i, 2);

    uint64_t big = UINT64_MAX;
    uint64_t got = 0;
    PMIx_Value_load(&v, &big, PMIX_UINT64);
    PMIX_VALUE_GET_NUMBER(rc, &v, got, uint64_t);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_true(got == UINT64_MAX);

    pmix_rank_t r = 5;
    PMIx_Value_load(&v, &r, PMIX_PROC_RANK);
    PMIX_VALUE_GET_NUMBER(rc, &v, sz, size_t);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_int_equal(sz, 5);

    /* Not a number: an error, the variable unchanged. */
    PMIx_Value_load(&v, "12", PMIX_STRING);
    i = 99;
    PMIX_VALUE_GET_NUMBER(rc, &v, i, int);
    assert_int_equal(rc, PMIX_ERR_BAD_PARAM);
    assert_int_equal(i, 99);
    PMIx_Value_destruct(&v);
}

static void test_info_flags(void **state)
{
    (void)state;
    pmix_info_t info;
    PMIx_Info_construct(&info);
    PMIX_INFO_SET_QUALIFIER(&info);
    assert_true(PMIX_INFO_IS_QUALIFIER(&info));
    PMIX_INFO_SET_PERSISTENT(&info);
    assert_true(PMIX_INFO_IS_PERSISTENT(&info));
    PMIX_INFO_SET_END(&info);
    assert_true(PMIX_INFO_IS_END(&info));
    assert_true(info.flags & PMIX_INFO_ARRAY_END);

    assert_true(PMIX_SYSTEM_EVENT(PMIX_EVENT_SYS_BASE));
    assert_true(PMIX_SYSTEM_EVENT(PMIX_EVENT_SYS_OTHER));
    assert_false(PMIX_SYSTEM_EVENT(PMIX_ERR_NOT_FOUND));

    pmix_proc_t a, b;
    PMIx_Load_procid(&a, "ns", 3);
    PMIX_XFER_PROCID(&b, &a);
    assert_true(PMIx_Check_procid(&a, &b));

    pmix_value_t src, dst;
    PMIx_Value_construct(&dst);
    PMIx_Value_construct(&src);
    PMIx_Value_load(&src, "text", PMIX_STRING);
    pmix_status_t rc;
    PMIX_VALUE_XFER_DIRECT(rc, &dst, &src);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_string_equal(dst.data.string, "text");
    PMIx_Value_destruct(&src);
    PMIx_Value_destruct(&dst);
}

static void test_info_create_end(void **state)
{
    (void)state;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, 3);
    assert_non_null(info);
    assert_false(PMIX_INFO_IS_END(&info[0]));
    assert_false(PMIX_INFO_IS_END(&info[1]));
    assert_true(PMIX_INFO_IS_END(&info[2]));
    size_t n = 0;
    while (!PMIX_INFO_IS_END(&info[n]))
        n++;
    assert_int_equal(n, 2);
    PMIX_INFO_FREE(info, 3);
    PMIX_INFO_CREATE(info, 0);
    assert_null(info);
}

static void test_info_list_insert(void **state)
{
    (void)state;
    pmix_info_t mine;
    pmix_status_t rc;
    void *list;

    PMIx_Info_construct(&mine);
    PMIx_Info_load(&mine, "my.key", "shared", PMIX_STRING);
    PMIX_INFO_LIST_START(list);
    PMIX_INFO_LIST_ADD(rc, list, "first", "copied", PMIX_STRING);
    assert_int_equal(rc, PMIX_SUCCESS);
    PMIX_INFO_LIST_INSERT(rc, list, &mine);
    assert_int_equal(rc, PMIX_SUCCESS);

    /* The inserted element shares the caller's string. */
    void *next = NULL;
    pmix_info_t *first = PMIx_Info_list_get_info(list, NULL, &next);
    pmix_info_t *second = PMIx_Info_list_get_info(list, next, &next);
    assert_string_equal(first->key, "first");
    assert_ptr_equal(second->value.data.string, mine.value.data.string);
    assert_true(PMIX_INFO_IS_PERSISTENT(second));

    /* Converting copies it; releasing the list leaves it alone. */
    pmix_data_array_t arr;
    PMIX_INFO_LIST_CONVERT(rc, list, &arr);
    assert_int_equal(rc, PMIX_SUCCESS);
    assert_int_equal(arr.size, 2);
    pmix_info_t *out = arr.array;
    assert_string_equal(out[1].value.data.string, "shared");
    assert_ptr_not_equal(out[1].value.data.string, mine.value.data.string);
    PMIX_INFO_LIST_RELEASE(list);
    assert_string_equal(mine.value.data.string, "shared");
    PMIx_Data_array_destruct(&arr);
    PMIx_Info_destruct(&mine);

    assert_int_equal(PMIx_Info_list_insert(NULL, &mine), PMIX_ERR_BAD_PARAM);
}

static void test_stats(void **state)
{
    (void)state;
    pmix_proc_stats_t *ps;
    PMIX_PROC_STATS_CREATE(ps, 2);
    assert_non_null(ps);
    ps[0].node = strdup("n0");
    ps[1].cmd = strdup("a.out");
    PMIX_PROC_STATS_FREE(ps, 2);
    assert_null(ps);
    PMIX_PROC_STATS_CREATE(ps, 0);
    assert_null(ps);

    pmix_proc_stats_t one = PMIX_PROC_STATS_STATIC_INIT;
    assert_null(one.node);
    one.cmd = strdup("x");
    PMIX_PROC_STATS_DESTRUCT(&one);
    assert_null(one.cmd);
    PMIX_PROC_STATS_CONSTRUCT(&one);

    pmix_node_stats_t *nd;
    PMIX_NODE_STATS_CREATE(nd, 1);
    nd->node = strdup("n1");
    PMIX_DISK_STATS_CREATE(nd->diskstats, 2);
    nd->ndiskstats = 2;
    nd->diskstats[1].disk = strdup("sda");
    PMIX_NET_STATS_CREATE(nd->netstats, 1);
    nd->nnetstats = 1;
    nd->netstats[0].net_interface = strdup("eth0");
    PMIX_NODE_STATS_RELEASE(nd);
    assert_null(nd);

    pmix_disk_stats_t *dk;
    PMIX_DISK_STATS_CREATE(dk, 1);
    dk->disk = strdup("sdb");
    PMIX_DISK_STATS_RELEASE(dk);
    assert_null(dk);
    pmix_net_stats_t *net;
    PMIX_NET_STATS_CREATE(net, 1);
    net->net_interface = strdup("lo");
    PMIX_NET_STATS_RELEASE(net);
    assert_null(net);
    pmix_net_stats_t ns = PMIX_NET_STATS_STATIC_INIT;
    PMIX_NET_STATS_CONSTRUCT(&ns);
    pmix_disk_stats_t ds = PMIX_DISK_STATS_STATIC_INIT;
    PMIX_DISK_STATS_CONSTRUCT(&ds);
    pmix_node_stats_t nds = PMIX_NODE_STATS_STATIC_INIT;
    PMIX_NODE_STATS_CONSTRUCT(&nds);
    PMIX_NODE_STATS_DESTRUCT(&nds);
}

static void test_app_pdata_loops(void **state)
{
    (void)state;
    /* pmix_app_free and pmix_pdata_free destruct the elements only. */
    pmix_app_t *apps = PMIx_App_create(2);
    apps[0].cmd = strdup("prog");
    pmix_app_free(apps, 2);
    assert_null(apps[0].cmd);
    free(apps);
    PMIX_APP_CREATE(apps, 1);
    apps[0].cmd = strdup("prog");
    PMIX_APP_FREE(apps, 1);
    assert_null(apps);

    pmix_pdata_t *pd = PMIx_Pdata_create(1);
    PMIx_Value_load(&pd[0].value, "v", PMIX_STRING);
    pmix_pdata_free(pd, 1);
    assert_int_equal(pd[0].value.type, PMIX_UNDEF);
    free(pd);
}

static void test_names(void **state)
{
    (void)state;
    /* The header guards OpenPMIx programs may test, and the version. */
#if !defined(PMIx_H) || !defined(PMIx_COMMON_H) || !defined(PMIx_DEPRECATED_H) || \
    !defined(PMIx_VERSION_H)
    fail_msg("an OpenPMIx header guard name is missing");
#endif
    assert_true(PMIX_NUMERIC_VERSION >= 0x00040000);
    assert_int_equal(PMIX_VERSION_MAJOR, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_argv_helpers),     cmocka_unit_test(test_argv_split),
        cmocka_unit_test(test_setenv),           cmocka_unit_test(test_strings),
        cmocka_unit_test(test_check_true),       cmocka_unit_test(test_value_get_number),
        cmocka_unit_test(test_info_flags),       cmocka_unit_test(test_info_create_end),
        cmocka_unit_test(test_info_list_insert), cmocka_unit_test(test_stats),
        cmocka_unit_test(test_app_pdata_loops),  cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
