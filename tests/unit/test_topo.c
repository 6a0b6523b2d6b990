/*
 * test_topo.c - topology helpers (common/topo.c): cpuset strings,
 * locality strings, relative locality, and ownership of the hwloc objects
 * (every copy owns its own; ASan's leak check proves each is freed once).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <pmix_server.h>

static void test_cpuset_string_round_trip(void **state)
{
    pmix_cpuset_t cs, copy;
    char *str = NULL;

    PMIx_Cpuset_construct(&cs);
    assert_int_equal(PMIx_Parse_cpuset_string("hwloc:0-1", &cs), PMIX_SUCCESS);
    assert_non_null(cs.bitmap);
    assert_int_equal(PMIx_server_generate_cpuset_string(&cs, &str), PMIX_SUCCESS);
    assert_string_equal(str, "hwloc:0-1");
    free(str);

    /* a value holding the cpuset is copied with its own bitmap */
    pmix_value_t v, w;
    PMIx_Value_construct(&v);
    PMIx_Value_construct(&w);
    assert_int_equal(PMIx_Value_load(&v, &cs, PMIX_PROC_CPUSET), PMIX_SUCCESS);
    assert_int_equal(PMIx_Value_xfer(&w, &v), PMIX_SUCCESS);
    assert_ptr_not_equal(w.data.cpuset->bitmap, cs.bitmap);
    PMIx_Value_destruct(&v);
    PMIx_Value_destruct(&w);

    PMIx_Cpuset_construct(&copy);
    PMIx_Cpuset_destruct(&cs);
    PMIx_Cpuset_destruct(&copy); /* an empty one is fine too */
    assert_null(cs.bitmap);
}

static void test_bad_cpuset_string(void **state)
{
    pmix_cpuset_t cs;

    PMIx_Cpuset_construct(&cs);
    assert_int_not_equal(PMIx_Parse_cpuset_string("hwloc:x-y", &cs), PMIX_SUCCESS);
    assert_null(cs.bitmap);
}

static void test_own_cpuset_and_locality(void **state)
{
    pmix_cpuset_t cs;
    char *loc = NULL;
    pmix_locality_t rel = 0;

    PMIx_Cpuset_construct(&cs);
    assert_int_equal(PMIx_Get_cpuset(&cs, PMIX_CPUBIND_PROCESS), PMIX_SUCCESS);
    assert_int_equal(PMIx_server_generate_locality_string(&cs, &loc), PMIX_SUCCESS);
    assert_non_null(loc);
    assert_true(strlen(loc) > 0);
    /* a process shares at least its node with itself */
    assert_int_equal(PMIx_Get_relative_locality(loc, loc, &rel), PMIX_SUCCESS);
    assert_true(rel & PMIX_LOCALITY_SHARE_NODE);
    free(loc);
    PMIx_Cpuset_destruct(&cs);
}

static void test_topology_load_and_copy(void **state)
{
    pmix_topology_t topo;
    pmix_value_t v, w;

    PMIx_Topology_construct(&topo);
    assert_int_equal(PMIx_Load_topology(&topo), PMIX_SUCCESS);
    assert_non_null(topo.topology);
    PMIx_Value_construct(&v);
    PMIx_Value_construct(&w);
    assert_int_equal(PMIx_Value_load(&v, &topo, PMIX_TOPO), PMIX_SUCCESS);
    assert_int_equal(PMIx_Value_xfer(&w, &v), PMIX_SUCCESS);
    assert_ptr_not_equal(w.data.topo->topology, topo.topology);
    PMIx_Value_destruct(&v);
    PMIx_Value_destruct(&w);
    PMIx_Topology_destruct(&topo);
    assert_null(topo.topology);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpuset_string_round_trip),
        cmocka_unit_test(test_bad_cpuset_string),
        cmocka_unit_test(test_own_cpuset_and_locality),
        cmocka_unit_test(test_topology_load_and_copy),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
