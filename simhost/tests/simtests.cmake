# pmixsim's tests (label `sim`, a few seconds each): simulated fence times
# against the formulas, example programs against pmixrun, reproducibility
# and argument checking. Included from simhost/CMakeLists.txt.
set(SIMTEST ${CMAKE_CURRENT_SOURCE_DIR}/tests/simtest.sh)
set(PMIXSIM_TESTS)

# Under the sanitizers every actor is a thread (see main.c) and the ring's
# P^2 messages at 256 nodes take a minute: it stops at 64 nodes there.
foreach(nodes 64 256)
  add_test(NAME sim_formula_dissemination_${nodes}
           COMMAND ${SIMTEST} formula $<TARGET_FILE:pmixsim> ${nodes} dissemination 0)
  set(algos recdbl bruck ring)
  if(PMIXLAB_SANITIZE AND nodes GREATER 64)
    set(algos recdbl bruck)
  endif()
  foreach(algo ${algos})
    add_test(NAME sim_formula_${algo}_${nodes}
             COMMAND ${SIMTEST} formula $<TARGET_FILE:pmixsim> ${nodes} ${algo} 256)
    list(APPEND PMIXSIM_TESTS sim_formula_${algo}_${nodes})
  endforeach()
  list(APPEND PMIXSIM_TESTS sim_formula_dissemination_${nodes})
endforeach()

# Spawn and events across nodes (simspawn.c): start time and delivery
# against their formulas.
add_test(NAME sim_spawn_formula COMMAND ${SIMTEST} spawn $<TARGET_FILE:pmixsim>)
add_test(NAME sim_events_nodes COMMAND ${SIMTEST} events $<TARGET_FILE:pmixsim>)
list(APPEND PMIXSIM_TESTS sim_spawn_formula sim_events_nodes)
# Groups across nodes: invitations, a connect of a parent and its spawned
# job, a member killed during the constructs.
add_test(NAME sim_group_invite COMMAND ${SIMTEST} invite $<TARGET_FILE:pmixsim>)
add_test(NAME sim_connect_spawned COMMAND ${SIMTEST} connect $<TARGET_FILE:pmixsim>)
add_test(NAME sim_group_member_killed COMMAND ${SIMTEST} group-fault $<TARGET_FILE:pmixsim>)
list(APPEND PMIXSIM_TESTS sim_group_invite sim_connect_spawned sim_group_member_killed)

# examples/ is added after simhost/: test for its presence, not its targets.
if(TARGET pmixrun AND EXISTS ${CMAKE_SOURCE_DIR}/examples/CMakeLists.txt)
  add_test(NAME sim_pubsub_as_pmixrun
           COMMAND ${SIMTEST} pubsub $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun>
                   $<TARGET_FILE:pmixsim_pubsub>)
  list(APPEND PMIXSIM_TESTS sim_pubsub_as_pmixrun)
  add_test(NAME sim_invite_as_pmixrun
           COMMAND ${SIMTEST} invite-pmixrun $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun>
                   $<TARGET_FILE:pmixsim_invite>)
  list(APPEND PMIXSIM_TESTS sim_invite_as_pmixrun)
  add_test(NAME sim_jobkeys_as_pmixrun
           COMMAND ${SIMTEST} jobkeys $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun>
                   $<TARGET_FILE:jobkeys>)
  list(APPEND PMIXSIM_TESTS sim_jobkeys_as_pmixrun)
  add_test(NAME sim_hello_as_pmixrun
           COMMAND ${SIMTEST} same-as-pmixrun $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun>
                   $<TARGET_FILE:hello>)
  add_test(NAME sim_bizcard_full_as_pmixrun
           COMMAND ${SIMTEST} same-as-pmixrun $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun>
                   $<TARGET_FILE:bizcard> full)
  add_test(NAME sim_bizcard_sparse_as_pmixrun
           COMMAND ${SIMTEST} same-as-pmixrun $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun>
                   $<TARGET_FILE:bizcard> sparse)
  # One app and no process set: the same app keys, and the set queries
  # answered by the simulated servers as by pmixrun's.
  add_test(NAME sim_psets_as_pmixrun
           COMMAND ${SIMTEST} same-as-pmixrun $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun>
                   $<TARGET_FILE:psets>)
  list(APPEND PMIXSIM_TESTS sim_hello_as_pmixrun sim_bizcard_full_as_pmixrun
       sim_bizcard_sparse_as_pmixrun sim_psets_as_pmixrun)
endif()

# Programs loaded from a shared object (`pmixsim ./prog.so`, program.c),
# built with the users' CMake function: the examples as .so files, and two
# programs of the tests' own, one with writable globals and one without
# main; hello linked against libpmix.so.2, which pmixsim refuses.
include(${CMAKE_SOURCE_DIR}/cmake/PmixsimProgram.cmake)
set(SIMPROG_DIR ${CMAKE_CURRENT_BINARY_DIR}/progs)
foreach(prog hello jobkeys bizcard sessions)
  pmixsim_add_program(simprog_${prog} ${CMAKE_SOURCE_DIR}/examples/${prog}.c)
  set_target_properties(simprog_${prog} PROPERTIES OUTPUT_NAME ${prog} LIBRARY_OUTPUT_DIRECTORY
                                                                        ${SIMPROG_DIR})
endforeach()
foreach(prog globals nomain)
  pmixsim_add_program(simprog_${prog} ${CMAKE_CURRENT_SOURCE_DIR}/tests/progs/${prog}.c)
  set_target_properties(simprog_${prog} PROPERTIES OUTPUT_NAME ${prog} LIBRARY_OUTPUT_DIRECTORY
                                                                        ${SIMPROG_DIR})
endforeach()
add_library(simprog_linked MODULE ${CMAKE_SOURCE_DIR}/examples/hello.c)
target_link_libraries(simprog_linked PRIVATE pmix)
set_target_properties(simprog_linked PROPERTIES PREFIX "" OUTPUT_NAME linked LIBRARY_OUTPUT_DIRECTORY
                                                                             ${SIMPROG_DIR})
if(TARGET pmixrun AND EXISTS ${CMAKE_SOURCE_DIR}/examples/CMakeLists.txt)
  add_test(NAME sim_hello_so
           COMMAND ${SIMTEST} program-same $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun> "1 2"
                   $<TARGET_FILE:hello> $<TARGET_FILE:simprog_hello>)
  add_test(NAME sim_bizcard_so
           COMMAND ${SIMTEST} program-same $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun> 2
                   $<TARGET_FILE:bizcard> $<TARGET_FILE:simprog_bizcard> full --size 64)
  add_test(NAME sim_jobkeys_so_as_pmixrun
           COMMAND ${SIMTEST} jobkeys $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun>
                   $<TARGET_FILE:jobkeys> $<TARGET_FILE:simprog_jobkeys>)
  add_test(NAME sim_program_errors
           COMMAND ${SIMTEST} program-errors $<TARGET_FILE:pmixsim> $<TARGET_FILE:simprog_nomain>
                   $<TARGET_FILE:simprog_linked> $<TARGET_FILE:hello>)
  list(APPEND PMIXSIM_TESTS sim_hello_so sim_bizcard_so sim_jobkeys_so_as_pmixrun
       sim_program_errors)
endif()
# MPI Sessions' steps with two process sets (--pset): the lines of
# pmixrun's run with `-n 2 --pset ocean : -n 2 --pset ice`.
if(TARGET pmixrun AND EXISTS ${CMAKE_SOURCE_DIR}/examples/CMakeLists.txt)
  add_test(NAME sim_sessions_as_pmixrun
           COMMAND ${SIMTEST} sessions $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmixrun>
                   $<TARGET_FILE:sessions> $<TARGET_FILE:simprog_sessions>)
  list(APPEND PMIXSIM_TESTS sim_sessions_as_pmixrun)
endif()
add_test(NAME sim_program_globals
         COMMAND ${SIMTEST} program-globals $<TARGET_FILE:pmixsim> $<TARGET_FILE:simprog_globals>)
add_test(NAME sim_program_exports
         COMMAND ${SIMTEST} program-exports $<TARGET_FILE:pmixsim> $<TARGET_FILE:pmix>)
list(APPEND PMIXSIM_TESTS sim_program_globals sim_program_exports)

# Network planes and coordinates (docs/simulation.md).
add_test(NAME sim_formula_bruck_64_2planes
         COMMAND ${SIMTEST} formula $<TARGET_FILE:pmixsim> 64 bruck 256 --planes 2)
add_test(NAME sim_fence_sets COMMAND ${SIMTEST} fence-sets $<TARGET_FILE:pmixsim>)
add_test(NAME sim_coords_torus COMMAND ${SIMTEST} coords $<TARGET_FILE:pmixsim> torus)
add_test(NAME sim_coords_fattree COMMAND ${SIMTEST} coords $<TARGET_FILE:pmixsim> fattree)
add_test(NAME sim_coords_dragonfly COMMAND ${SIMTEST} coords $<TARGET_FILE:pmixsim> dragonfly)
# A platform's hosts by name: SimGrid lists node-10 third of node-0..11.
add_test(NAME sim_coords_platform_hosts
         COMMAND ${SIMTEST} coords-hosts $<TARGET_FILE:pmixsim>
                 ${CMAKE_SOURCE_DIR}/tests/integration/topology/fattree.xml
                 "rank 2: rank 2 coord logical plane0:(2,2)" "rank 2: rank 2 endpt node-10"
                 "rank 2: rank 2 nic plane0=node-10.nic0" "rank 11: rank 11 coord logical plane0:(2,1)")
add_test(NAME sim_dragonfly_groups COMMAND ${SIMTEST} dragonfly-groups $<TARGET_FILE:pmixsim>)
add_test(NAME sim_plane_down COMMAND ${SIMTEST} plane-down $<TARGET_FILE:pmixsim>)
add_test(NAME sim_hier_groups COMMAND ${SIMTEST} hier-groups $<TARGET_FILE:pmixsim>)
list(APPEND PMIXSIM_TESTS sim_formula_bruck_64_2planes sim_fence_sets sim_coords_torus sim_coords_fattree
     sim_coords_platform_hosts
     sim_coords_dragonfly sim_dragonfly_groups
     sim_plane_down sim_hier_groups)
if(TARGET pmixrun AND EXISTS ${CMAKE_SOURCE_DIR}/examples/CMakeLists.txt)
  add_test(NAME sim_coords_under_pmixrun
           COMMAND ${SIMTEST} coords-pmixrun $<TARGET_FILE:pmixrun> $<TARGET_FILE:coords>)
  # One description, both hosts (hostcore/px_netmap.h): a Slurm
  # topology.conf of two switches, and a SimGrid platform's torus.
  set(topodir ${CMAKE_SOURCE_DIR}/tests/integration/topology)
  add_test(NAME sim_coords_topology_conf_as_pmixrun
           COMMAND ${SIMTEST} coords-same $<TARGET_FILE:pmixrun> $<TARGET_FILE:pmixsim>
                   $<TARGET_FILE:coords> ${topodir}/two-switch.conf 4
                   "rank 0: shape plane0 logical 2x2" "rank 1: rank 2 coord logical plane0:(1,0)"
                   "rank 3: rank 3 coord physical plane0:p(1,1)")
  add_test(NAME sim_coords_platform_as_pmixrun
           COMMAND ${SIMTEST} coords-same $<TARGET_FILE:pmixrun> $<TARGET_FILE:pmixsim>
                   $<TARGET_FILE:coords> ${topodir}/torus.xml 8
                   "rank 0: shape plane0 logical 2x2x2" "rank 5: rank 5 coord logical plane0:(1,0,1)")
  # pmixsim --platform FILE (the file is the simulated platform): the
  # coordinates pmixrun --topology FILE gives, a 2-level fat tree.
  add_test(NAME sim_coords_platform_file_as_pmixrun
           COMMAND ${SIMTEST} coords-platform $<TARGET_FILE:pmixrun> $<TARGET_FILE:pmixsim>
                   $<TARGET_FILE:coords> ${topodir}/fattree8.xml 8
                   "rank 0: shape plane0 logical 2x4" "rank 5: rank 5 coord logical plane0:(1,1)"
                   "rank 7: rank 7 coord physical plane0:p(1,3)")
  # Planes in a platform file (px_netmap.h): two plane clusters, named
  # by the pmixlab.plane property, give both hosts the same planes and
  # coordinates (pmixrun's NICs are two HCAs, from two-hca.xml), and in
  # pmixsim every plane carries messages.
  add_test(NAME sim_coords_platform_planes_as_pmixrun
           COMMAND ${SIMTEST} coords-platform $<TARGET_FILE:pmixrun> $<TARGET_FILE:pmixsim>
                   $<TARGET_FILE:coords> ${topodir}/two-rail-fattree.xml 4
                   "rank 0: planes rail0 rail1" "rank 0: shape rail1 logical 2x2"
                   "rank 1: rank 2 coord logical rail0:(1,0) rail1:(1,0)"
                   "rank 3: rank 3 coord physical rail0:p(1,1) rail1:p(1,1)")
  set_tests_properties(sim_coords_platform_planes_as_pmixrun PROPERTIES
                       ENVIRONMENT SIMTEST_NICS=two-hca.xml)
  add_test(NAME sim_coords_topology_planes_as_pmixrun
           COMMAND ${SIMTEST} coords-same $<TARGET_FILE:pmixrun> $<TARGET_FILE:pmixsim>
                   $<TARGET_FILE:coords> ${topodir}/two-rail-fattree.xml 4
                   "rank 2: planes rail0 rail1" "rank 0: rank 1 coord rail1 rail1:(0,1)")
  add_test(NAME sim_coords_topology_conf_planes_as_pmixrun
           COMMAND ${SIMTEST} coords-same $<TARGET_FILE:pmixrun> $<TARGET_FILE:pmixsim>
                   $<TARGET_FILE:coords> ${topodir}/two-rail.conf 4
                   "rank 2: planes rail0 rail1" "rank 3: rank 3 coord physical rail0:p(1,1) rail1:p(1,1)")
  set_tests_properties(sim_coords_topology_planes_as_pmixrun
                       sim_coords_topology_conf_planes_as_pmixrun PROPERTIES
                       ENVIRONMENT SIMTEST_NICS=two-hca.xml)
  add_test(NAME sim_platform_planes_traffic
           COMMAND ${SIMTEST} platform-planes $<TARGET_FILE:pmixsim>
                   ${topodir}/two-rail-fattree.xml 2)
  list(APPEND PMIXSIM_TESTS sim_coords_under_pmixrun sim_coords_topology_conf_as_pmixrun
       sim_coords_platform_as_pmixrun sim_coords_platform_file_as_pmixrun
       sim_coords_platform_planes_as_pmixrun sim_coords_topology_planes_as_pmixrun
       sim_coords_topology_conf_planes_as_pmixrun sim_platform_planes_traffic)
endif()

add_test(NAME sim_repeat_seeded
         COMMAND ${SIMTEST} repeat $<TARGET_FILE:pmixsim> --seed 7 --nodes 16 --ppn 2 --algo all
                 fence --iters 2 --size 100 --check)
add_test(NAME sim_bad_args COMMAND ${SIMTEST} bad-args $<TARGET_FILE:pmixsim>)
add_test(NAME sim_fault_replay COMMAND ${SIMTEST} replay $<TARGET_FILE:pmixsim>)
add_test(NAME sim_cpu_model COMMAND ${SIMTEST} cpu-model $<TARGET_FILE:pmixsim>)
add_test(NAME sim_depart COMMAND ${SIMTEST} depart $<TARGET_FILE:pmixsim>)
add_test(NAME sim_depart_end COMMAND ${SIMTEST} depart-end $<TARGET_FILE:pmixsim>)
add_test(NAME sim_one_actor_per_node COMMAND ${SIMTEST} one-actor $<TARGET_FILE:pmixsim>)
list(APPEND PMIXSIM_TESTS sim_repeat_seeded sim_bad_args sim_fault_replay sim_cpu_model sim_depart
     sim_depart_end sim_one_actor_per_node)
# A sanitized build does not measure its stacks (its actors are threads).
if(NOT PMIXLAB_SANITIZE)
  add_test(NAME sim_stack_max COMMAND ${SIMTEST} stack $<TARGET_FILE:pmixsim>)
  list(APPEND PMIXSIM_TESTS sim_stack_max)
endif()

set_tests_properties(${PMIXSIM_TESTS} PROPERTIES LABELS sim TIMEOUT 120)
