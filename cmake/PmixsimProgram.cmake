# PmixsimProgram.cmake - build a PMIx program as a shared object that pmixsim
# loads and runs as every simulated process (docs/simulation.md, "Your own
# program"):
#
#   include(<pmixlab>/cmake/PmixsimProgram.cmake)
#   pmixsim_add_program(myprog myprog.c util.c)
#   # then: pmixsim --nodes 64 --ppn 4 ./myprog.so ARGS...
#
# pmixsim_add_program(NAME SOURCES...) adds a MODULE library target NAME,
# the file NAME.so in the current binary directory (set the target's
# OUTPUT_NAME or LIBRARY_OUTPUT_DIRECTORY to change them). It is compiled as
# position-independent code with pmixlab's headers and linked against
# nothing: its PMIx_* calls resolve, when pmixsim loads it, to the library
# inside pmixsim. Do not link it to any libpmix (pmixsim refuses a program
# that needs libpmix.so: its calls would reach a second copy of the library,
# outside the simulation), and do not add -Wl,--no-undefined or -z defs to
# it: the PMIx_* functions are undefined until pmixsim loads it.
#
# The headers: PMIXSIM_INCLUDE_DIR if it is set; inside pmixlab's own build,
# libpmix/include (PMIXLAB_INCLUDE_DIR); else libpmix/include next to this
# file's directory, in a pmixlab source tree.
set(_PMIXSIM_PROGRAM_DIR ${CMAKE_CURRENT_LIST_DIR})

function(pmixsim_add_program name)
  if(ARGC LESS 2)
    message(FATAL_ERROR "pmixsim_add_program(${name}): give the program's source files")
  endif()
  if(DEFINED PMIXSIM_INCLUDE_DIR)
    set(inc ${PMIXSIM_INCLUDE_DIR})
  elseif(DEFINED PMIXLAB_INCLUDE_DIR)
    set(inc ${PMIXLAB_INCLUDE_DIR})
  else()
    get_filename_component(inc ${_PMIXSIM_PROGRAM_DIR}/../libpmix/include ABSOLUTE)
  endif()
  if(NOT EXISTS ${inc}/pmix.h)
    message(FATAL_ERROR "pmixsim_add_program(${name}): no pmix.h in ${inc}; set "
                        "PMIXSIM_INCLUDE_DIR to pmixlab's include directory")
  endif()
  add_library(${name} MODULE ${ARGN})
  set_target_properties(${name} PROPERTIES PREFIX "" SUFFIX ".so" POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PRIVATE ${inc})
endfunction()
