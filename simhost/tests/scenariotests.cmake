# The scenario files of scenarios/ as tests (label `sim`, seconds each), and
# the tests of `pmixsim run` / `pmixsim suite` themselves
# (scenario_test.sh). Included from simhost/CMakeLists.txt. The at-scale
# scenarios of scenarios/nightly/ are not tests: `./run nightly` runs them.
# A scenario that needs what pmixsim does not offer yet (`requires = ...`,
# e.g. --fault) exits 77 and shows as skipped, with the reason in its output.
set(SCENARIO_DIR ${CMAKE_SOURCE_DIR}/scenarios)
set(SCENARIO_TESTS)
file(GLOB SCENARIO_FILES CONFIGURE_DEPENDS ${SCENARIO_DIR}/*.scn)
foreach(file ${SCENARIO_FILES})
  get_filename_component(name ${file} NAME_WE)
  string(REPLACE "-" "_" tname ${name})
  add_test(NAME sim_scenario_${tname} COMMAND $<TARGET_FILE:pmixsim> run ${file})
  list(APPEND SCENARIO_TESTS sim_scenario_${tname})
endforeach()

# Small scenarios on the socket host too: the same program under
# pmixrun --nodes K -n N prints the same lines.
if(TARGET pmixrun AND EXISTS ${CMAKE_SOURCE_DIR}/examples/CMakeLists.txt)
  add_test(NAME sim_scenario_hello_sockhost
           COMMAND $<TARGET_FILE:pmixsim> run ${SCENARIO_DIR}/hello.scn
                   --also-pmixrun $<TARGET_FILE:pmixrun> --program $<TARGET_FILE:hello>)
  add_test(NAME sim_scenario_bizcard_full_sockhost
           COMMAND $<TARGET_FILE:pmixsim> run ${SCENARIO_DIR}/bizcard-full.scn
                   --also-pmixrun $<TARGET_FILE:pmixrun> --program $<TARGET_FILE:bizcard>)
  add_test(NAME sim_scenario_seq_sockhost
           COMMAND $<TARGET_FILE:pmixsim> run ${SCENARIO_DIR}/seq-steps.scn
                   --also-pmixrun $<TARGET_FILE:pmixrun> --program $<TARGET_FILE:pmixsim_seq>)
  add_test(NAME sim_scenario_fence_algo_disagree_sockhost
           COMMAND $<TARGET_FILE:pmixsim> run ${SCENARIO_DIR}/fence-algo-disagree.scn
                   --also-pmixrun $<TARGET_FILE:pmixrun> --program $<TARGET_FILE:pmixsim_seq>)
  list(APPEND SCENARIO_TESTS sim_scenario_hello_sockhost sim_scenario_bizcard_full_sockhost
       sim_scenario_seq_sockhost sim_scenario_fence_algo_disagree_sockhost)
endif()

add_test(NAME sim_scenario_runner
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/scenario_test.sh $<TARGET_FILE:pmixsim>
                 ${SCENARIO_DIR})
list(APPEND SCENARIO_TESTS sim_scenario_runner)

set_tests_properties(${SCENARIO_TESTS} PROPERTIES LABELS sim TIMEOUT 180 SKIP_RETURN_CODE 77)

# The scale stage (label `scale`, about two minutes, several GB): the
# simulator at 4,096 x 16, 65,536 x 1 and 16,384 x 1 against bare SimGrid,
# with memory bounds, and memory per process against the job's size
# (scale_stage.sh). `./run test` runs it alone, after the suite, so that
# nothing else competes for memory or cores; the suite itself leaves it
# out (`ctest -LE scale`). Not under the sanitizers, whose shadow memory
# and threads make these sizes meaningless.
if(NOT PMIXLAB_SANITIZE AND EXISTS ${CMAKE_SOURCE_DIR}/bench/CMakeLists.txt)
  add_test(NAME sim_scale_stage
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/scale_stage.sh $<TARGET_FILE:pmixsim>
                   $<TARGET_FILE:sgbare> ${SCENARIO_DIR}/scale ${CMAKE_BINARY_DIR}/scale)
  set_tests_properties(sim_scale_stage PROPERTIES LABELS "sim;scale" TIMEOUT 900 RUN_SERIAL TRUE)
endif()

# Label `long` (tests/integration/CMakeLists.txt says what it means): the
# largest simulations, whose code the smaller ones run under the sanitizers.
foreach(t sim_scenario_hier_taper sim_scenario_flat_taper sim_scenario_hier_fattree
          sim_scenario_allgather_formula sim_scenario_depart_1024
          sim_scenario_group_formula sim_dragonfly_groups sim_hier_groups)
  if(TEST ${t})
    set_property(TEST ${t} APPEND PROPERTY LABELS long)
  endif()
endforeach()
