# cmake/install.cmake: what `cmake --install` installs, in the GNU layout
# (GNUInstallDirs) under CMAKE_INSTALL_PREFIX, split into the three
# components CPack makes Debian packages of (cmake/package.cmake):
#
#   lib  libpmix.so.2 (with its SONAME link)      LIBDIR/pmixlab/
#   dev  the public headers                       INCLUDEDIR/pmixlab/
#        libpmix.so (the link-time name), libpmix.a   LIBDIR/pmixlab/
#        pmixlab.pc (pmix.pc if asked for)         LIBDIR/pkgconfig/
#        pmixlabConfig.cmake, PmixsimProgram.cmake LIBDIR/cmake/pmixlab/
#        the examples' sources                    DOCDIR/examples/
#   bin  pmixrun, pmixd, pmixsim, pmixps, pmixstack         BINDIR/
#        their man pages                          MANDIR/man1/
#        the scenarios                            DATADIR/pmixlab/scenarios/
#        README.md and docs/                      DOCDIR/ (share/doc/pmixlab)
#
# The library and the headers live in directories of their own so that
# they never shadow another PMIx's: Debian's OpenPMIx has a libpmix.so.2
# in the system library directory and pmix.h in its own include directory.
# The commands find the installed library through a RUNPATH relative to
# their own directory ($ORIGIN), so an installed tree can be moved, and
# never through the build tree. pmixrun starts the pmixd of its own
# directory (sockhost/pmixrun_nodes.c), so both go to BINDIR.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PMIXLAB_INSTALL_LIBDIR "" CACHE STRING
  "Where libpmix.so.2 and libpmix.a go (default: LIBDIR/pmixlab, e.g. lib/pmixlab)")
set(PMIXLAB_INSTALL_INCLUDEDIR "" CACHE STRING
  "Where the public headers go (default: INCLUDEDIR/pmixlab)")
option(PMIXLAB_INSTALL_PMIX_PC
  "Also install pmix.pc, for sites where pmixlab replaces OpenPMIx (it clashes with libpmix-dev's)" OFF)
if(PMIXLAB_INSTALL_LIBDIR STREQUAL "")
  set(PMIXLAB_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR}/pmixlab)
endif()
if(PMIXLAB_INSTALL_INCLUDEDIR STREQUAL "")
  set(PMIXLAB_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/pmixlab)
endif()
set(PMIXLAB_INSTALL_PCDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
set(PMIXLAB_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/pmixlab)

# ---- lib and dev: the library, its headers, pkg-config and CMake files
install(TARGETS pmix
  LIBRARY DESTINATION ${PMIXLAB_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev)
install(TARGETS pmix_static ARCHIVE DESTINATION ${PMIXLAB_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${PMIXLAB_INCLUDE_DIR}/ DESTINATION ${PMIXLAB_INSTALL_INCLUDEDIR}
  COMPONENT dev FILES_MATCHING PATTERN "*.h")

# The PMIx Standard version the headers declare, for pmix.pc.
set(PMIXLAB_PMIX_VERSION ${PROJECT_VERSION})
file(GLOB _pmixlab_headers ${PMIXLAB_INCLUDE_DIR}/*.h)
foreach(header ${_pmixlab_headers})
  file(STRINGS ${header} _lines REGEX "^#define PMIX_VERSION_(MAJOR|MINOR|RELEASE) ")
  foreach(line ${_lines})
    if(line MATCHES "PMIX_VERSION_([A-Z]+) +([0-9]+)")
      set(_pmix_${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
    endif()
  endforeach()
endforeach()
if(DEFINED _pmix_MAJOR AND DEFINED _pmix_MINOR AND DEFINED _pmix_RELEASE)
  set(PMIXLAB_PMIX_VERSION ${_pmix_MAJOR}.${_pmix_MINOR}.${_pmix_RELEASE})
endif()

set(_pmixlab_pc_names pmixlab=${PROJECT_VERSION})
if(PMIXLAB_INSTALL_PMIX_PC)
  list(APPEND _pmixlab_pc_names pmix=${PMIXLAB_PMIX_VERSION})
endif()
install(CODE "
  set(PC_TEMPLATE \"${CMAKE_SOURCE_DIR}/cmake/pmixlab.pc.in\")
  set(PC_OUT_DIR \"${CMAKE_BINARY_DIR}/pkgconfig\")
  set(PC_DIR \"${PMIXLAB_INSTALL_PCDIR}\")
  set(PC_LIBDIR \"${PMIXLAB_INSTALL_LIBDIR}\")
  set(PC_INCLUDEDIR \"${PMIXLAB_INSTALL_INCLUDEDIR}\")
  set(PC_SYSTEM_LIBDIRS \"${CMAKE_C_IMPLICIT_LINK_DIRECTORIES}\")
  set(PC_NAMES \"${_pmixlab_pc_names}\")
  include(\"${CMAKE_SOURCE_DIR}/cmake/install-pc.cmake\")
  " COMPONENT dev)

configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/pmixlabConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/pmixlabConfig.cmake
  INSTALL_DESTINATION ${PMIXLAB_INSTALL_CMAKEDIR}
  PATH_VARS PMIXLAB_INSTALL_LIBDIR PMIXLAB_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/pmixlabConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/pmixlabConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/pmixlabConfigVersion.cmake
  DESTINATION ${PMIXLAB_INSTALL_CMAKEDIR} COMPONENT dev)

# pmixsim_add_program(), to build programs for the installed pmixsim; the
# CMake package includes it (pmixlabConfig.cmake.in).
if(TARGET pmixsim AND EXISTS ${CMAKE_SOURCE_DIR}/cmake/PmixsimProgram.cmake)
  install(FILES ${CMAKE_SOURCE_DIR}/cmake/PmixsimProgram.cmake
    DESTINATION ${PMIXLAB_INSTALL_CMAKEDIR} COMPONENT dev)
endif()

if(PMIXLAB_HAVE_examples)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
    COMPONENT dev FILES_MATCHING PATTERN "*.c")
endif()

# ---- bin: the commands, their man pages, the scenarios, the documentation
set(PMIXLAB_COMMANDS "")
foreach(cmd pmixrun pmixd pmixsim pmixps pmixstack)
  if(TARGET ${cmd})
    list(APPEND PMIXLAB_COMMANDS ${cmd})
  endif()
endforeach()

if(IS_ABSOLUTE "${PMIXLAB_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_BINDIR}")
  set(_pmixlab_rpath "${PMIXLAB_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH _rel "/p/${CMAKE_INSTALL_BINDIR}" "/p/${PMIXLAB_INSTALL_LIBDIR}")
  set(_pmixlab_rpath "$ORIGIN/${_rel}")
endif()
if(PMIXLAB_COMMANDS)
  set_target_properties(${PMIXLAB_COMMANDS} PROPERTIES INSTALL_RPATH "${_pmixlab_rpath}")
  install(TARGETS ${PMIXLAB_COMMANDS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT bin)
endif()

include(${CMAKE_SOURCE_DIR}/cmake/manpages.cmake)
install(FILES ${PMIXLAB_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT bin)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/scenarios/ DESTINATION ${CMAKE_INSTALL_DATADIR}/pmixlab/scenarios
  COMPONENT bin)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT bin)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT bin)
