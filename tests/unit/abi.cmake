# abi.cmake: the generated test of the public headers' constants (included by
# tests/unit/CMakeLists.txt).
#
# tests/abi/gen-constants-test.sh turns the ABI tables (tests/abi/constants.tsv,
# tests/abi/seed-network.tsv) into test_abi_constants.c, which checks every
# integer constant's value and every attribute string against pmix_common.h.
# A missing name fails the build of the test; a wrong value fails the test.

set(pmixlab_abi_dir ${CMAKE_SOURCE_DIR}/tests/abi)
set(pmixlab_abi_tables ${pmixlab_abi_dir}/constants.tsv ${pmixlab_abi_dir}/seed-network.tsv)
set(pmixlab_abi_test_c ${CMAKE_CURRENT_BINARY_DIR}/test_abi_constants.c)

add_custom_command(
  OUTPUT ${pmixlab_abi_test_c}
  COMMAND sh ${pmixlab_abi_dir}/gen-constants-test.sh -o ${pmixlab_abi_test_c} ${pmixlab_abi_tables}
  DEPENDS ${pmixlab_abi_dir}/gen-constants-test.sh ${pmixlab_abi_tables}
  COMMENT "Generating the ABI constants test"
  VERBATIM)

add_executable(test_abi_constants ${pmixlab_abi_test_c})
target_include_directories(test_abi_constants PRIVATE ${PMIXLAB_INCLUDE_DIR})
target_link_libraries(test_abi_constants PRIVATE PkgConfig::CMOCKA)
add_test(NAME test_abi_constants COMMAND test_abi_constants)
set_tests_properties(test_abi_constants PROPERTIES LABELS unit TIMEOUT ${PMIXLAB_TEST_TIMEOUT})
