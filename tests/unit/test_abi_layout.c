/*
 * test_abi_layout.c: the public structs have the Standard ABI's layout.
 *
 * Every size, alignment and member offset below is a measured fact from
 * the project's ABI notes, abi/README.md (x86-64, Standard v5.0 ABI,
 * identical to OpenPMIx 4.2.2). A program built against another standard
 * pmix.h passes these structs to us by pointer, so any difference here is a
 * memory-corruption bug, not a style issue. The one intended deviation,
 * pmix_coord_t (our specification adds fabric and plane), is checked against
 * our own layout. The server module's member order is checked by offset.
 */
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#define SIZE_ALIGN(T, sz, al)               \
    do {                                    \
        assert_int_equal(sizeof(T), (sz));  \
        assert_int_equal(alignof(T), (al)); \
    } while (0)
#define MEMBER(T, m, off, sz)                        \
    do {                                             \
        assert_int_equal(offsetof(T, m), (off));     \
        assert_int_equal(sizeof(((T *)0)->m), (sz)); \
    } while (0)

static void test_scalar_types(void **state)
{
    (void)state;
    assert_int_equal(PMIX_MAX_NSLEN, 255);
    assert_int_equal(PMIX_MAX_KEYLEN, 511);
    assert_int_equal(sizeof(pmix_nspace_t), 256);
    assert_int_equal(sizeof(pmix_key_t), 512);
    assert_int_equal(sizeof(pmix_rank_t), 4);
    assert_int_equal(sizeof(pmix_status_t), sizeof(int));
    assert_int_equal(sizeof(pmix_data_type_t), 2);
    assert_int_equal(sizeof(pmix_info_directives_t), 4);
    assert_int_equal(sizeof(pmix_scope_t), 1);
    assert_int_equal(sizeof(pmix_data_range_t), 1);
    assert_int_equal(sizeof(pmix_persistence_t), 1);
    assert_int_equal(sizeof(pmix_proc_state_t), 1);
    assert_int_equal(sizeof(pmix_coord_view_t), 1);
    assert_int_equal(sizeof(pmix_job_state_t), 1);
    assert_int_equal(sizeof(pmix_link_state_t), 1);
    assert_int_equal(sizeof(pmix_alloc_directive_t), 1);
    assert_int_equal(sizeof(pmix_iof_channel_t), 2);
    assert_int_equal(sizeof(pmix_locality_t), 2);
    assert_int_equal(sizeof(pmix_device_type_t), 8);
    /* Unsigned, as the Standard's typedefs. */
    assert_true((pmix_rank_t)-1 > 0);
    assert_true((pmix_data_type_t)-1 > 0);
}

static void test_proc(void **state)
{
    (void)state;
    SIZE_ALIGN(pmix_proc_t, 260, 4);
    MEMBER(pmix_proc_t, nspace, 0, 256);
    MEMBER(pmix_proc_t, rank, 256, 4);
}

static void test_value(void **state)
{
    (void)state;
    SIZE_ALIGN(pmix_value_t, 32, 8);
    MEMBER(pmix_value_t, type, 0, 2);
    MEMBER(pmix_value_t, data, 8, 24);
    /* Every union member starts at the union's start. */
    assert_int_equal(offsetof(pmix_value_t, data.bo.size), 16);
    assert_int_equal(offsetof(pmix_value_t, data.envar.separator), 24);
    assert_int_equal(offsetof(pmix_value_t, data.tv), 8);
    assert_int_equal(sizeof(((pmix_value_t *)0)->data.tv), 16);
    assert_int_equal(sizeof(((pmix_value_t *)0)->data.envar), 24);
}

static void test_info(void **state)
{
    (void)state;
    SIZE_ALIGN(pmix_info_t, 552, 8);
    MEMBER(pmix_info_t, key, 0, 512);
    MEMBER(pmix_info_t, flags, 512, 4);
    MEMBER(pmix_info_t, value, 520, 32);
}

static void test_data_array_bo_envar(void **state)
{
    (void)state;
    SIZE_ALIGN(pmix_data_array_t, 24, 8);
    MEMBER(pmix_data_array_t, type, 0, 2);
    MEMBER(pmix_data_array_t, size, 8, 8);
    MEMBER(pmix_data_array_t, array, 16, 8);

    SIZE_ALIGN(pmix_byte_object_t, 16, 8);
    MEMBER(pmix_byte_object_t, bytes, 0, 8);
    MEMBER(pmix_byte_object_t, size, 8, 8);

    SIZE_ALIGN(pmix_envar_t, 24, 8);
    MEMBER(pmix_envar_t, envar, 0, 8);
    MEMBER(pmix_envar_t, value, 8, 8);
    MEMBER(pmix_envar_t, separator, 16, 1);
}

static void test_coord_spec_layout(void **state)
{
    (void)state;
    /* Our specification's layout, not the ABI's 24-byte {view, coord, dims}:
     * the ABI members keep their order after fabric and plane. */
    SIZE_ALIGN(pmix_coord_t, 40, 8);
    MEMBER(pmix_coord_t, fabric, 0, 8);
    MEMBER(pmix_coord_t, plane, 8, 8);
    MEMBER(pmix_coord_t, view, 16, 1);
    MEMBER(pmix_coord_t, coord, 24, 8);
    MEMBER(pmix_coord_t, dims, 32, 8);
}

static void test_pdata_app_query(void **state)
{
    (void)state;
    SIZE_ALIGN(pmix_pdata_t, 808, 8);
    MEMBER(pmix_pdata_t, proc, 0, 260);
    MEMBER(pmix_pdata_t, key, 260, 512);
    MEMBER(pmix_pdata_t, value, 776, 32);

    SIZE_ALIGN(pmix_app_t, 56, 8);
    MEMBER(pmix_app_t, cmd, 0, 8);
    MEMBER(pmix_app_t, argv, 8, 8);
    MEMBER(pmix_app_t, env, 16, 8);
    MEMBER(pmix_app_t, cwd, 24, 8);
    MEMBER(pmix_app_t, maxprocs, 32, 4);
    MEMBER(pmix_app_t, info, 40, 8);
    MEMBER(pmix_app_t, ninfo, 48, 8);

    SIZE_ALIGN(pmix_query_t, 24, 8);
    MEMBER(pmix_query_t, keys, 0, 8);
    MEMBER(pmix_query_t, qualifiers, 8, 8);
    MEMBER(pmix_query_t, nqual, 16, 8);
}

static void test_other_structs(void **state)
{
    (void)state;
    SIZE_ALIGN(pmix_proc_info_t, 296, 8);
    SIZE_ALIGN(pmix_topology_t, 16, 8);
    SIZE_ALIGN(pmix_cpuset_t, 16, 8);
    SIZE_ALIGN(pmix_geometry_t, 40, 8);
    SIZE_ALIGN(pmix_endpoint_t, 32, 8);
    SIZE_ALIGN(pmix_device_distance_t, 32, 8);
    SIZE_ALIGN(pmix_data_buffer_t, 40, 8);
    SIZE_ALIGN(pmix_regattr_t, 536, 8);
    SIZE_ALIGN(pmix_fabric_t, 40, 8);
    MEMBER(pmix_proc_info_t, proc, 0, 260);
    MEMBER(pmix_proc_info_t, hostname, 264, 8);
    MEMBER(pmix_proc_info_t, executable_name, 272, 8);
    MEMBER(pmix_proc_info_t, pid, 280, 4);
    MEMBER(pmix_proc_info_t, exit_code, 284, 4);
    MEMBER(pmix_proc_info_t, state, 288, 1);
    MEMBER(pmix_regattr_t, string, 8, 512);
    MEMBER(pmix_regattr_t, type, 520, 2);
    MEMBER(pmix_regattr_t, description, 528, 8);
}

static void test_special_values(void **state)
{
    (void)state;
    assert_true(PMIX_RANK_UNDEF == 4294967295u);
    assert_true(PMIX_RANK_WILDCARD == 4294967294u);
    assert_true(PMIX_RANK_LOCAL_NODE == 4294967293u);
    assert_true(PMIX_RANK_INVALID == 4294967292u);
    assert_true(PMIX_RANK_LOCAL_PEERS == 4294967291u);
    assert_true(PMIX_RANK_VALID == 4294967245u);
    assert_int_equal(PMIX_INFO_REQD, 0x1);
    assert_int_equal(PMIX_INFO_ARRAY_END, 0x2);
    assert_int_equal(PMIX_INFO_REQD_PROCESSED, 0x4);
    assert_int_equal(PMIX_VERSION_MAJOR, 4);
    assert_int_equal(PMIX_VERSION_MINOR, 2);
    assert_int_equal(PMIX_VERSION_RELEASE, 0);
    assert_int_equal(PMIX_NUMERIC_VERSION, 0x00040200);
}

static void test_server_module_order(void **state)
{
    (void)state;
    /* Standard v5.0 order: 28 function pointers, client_connected2 last. */
    assert_int_equal(sizeof(pmix_server_module_t), 28 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, client_connected), 0 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, fence_nb), 3 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, direct_modex), 4 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, listener), 13 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, notify_event), 14 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, tool_connected), 16 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, job_control), 19 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, get_credential), 21 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, push_stdin), 24 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, group), 25 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, fabric), 26 * sizeof(void *));
    assert_int_equal(offsetof(pmix_server_module_t, client_connected2), 27 * sizeof(void *));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_types),
        cmocka_unit_test(test_proc),
        cmocka_unit_test(test_value),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_data_array_bo_envar),
        cmocka_unit_test(test_coord_spec_layout),
        cmocka_unit_test(test_pdata_app_query),
        cmocka_unit_test(test_other_structs),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_server_module_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
