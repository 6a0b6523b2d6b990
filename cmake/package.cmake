# cmake/package.cmake: Debian packages of the install components
# (cmake/install.cmake), made by CPack: `./run package`, or by hand
#   cmake -S . -B build-package -DCMAKE_INSTALL_PREFIX=/usr -DPMIXLAB_TESTS=OFF
#   cmake --build build-package && (cd build-package && cpack -G DEB)
#
#   libpmixlab   component lib: libpmix.so.2 in /usr/lib/<arch>/pmixlab
#   pmixlab-dev  component dev: headers, libpmix.so, libpmix.a, pmixlab.pc,
#                the CMake package
#   pmixlab-bin  component bin: pmixrun, pmixd, pmixsim, man pages,
#                scenarios, documentation
#
# The files are named pmixlab-VERSION-ARCH-COMPONENT.deb. The run-time
# dependencies (libevent, hwloc, SimGrid...) come from dpkg-shlibdeps; the
# packages depend on one another at the exact version. No file of these
# packages is a file of Debian's OpenPMIx (libpmix2, libpmix-dev), so both
# can be installed together, except with PMIXLAB_INSTALL_PMIX_PC, whose
# pmix.pc is also libpmix-dev's: pmixlab-dev then conflicts with it.

# The packages install under /usr; GNUInstallDirs chooses the Debian
# layout (lib/<multiarch>) only when the build is configured for /usr.
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_pmixlab_package_note "configure with -DCMAKE_INSTALL_PREFIX=/usr (./run package does)")
endif()

set(PMIXLAB_PACKAGE_CONTACT "pmixlab developers" CACHE STRING
  "The Maintainer field of the Debian packages")
set(PMIXLAB_PACKAGE_RELEASE 1 CACHE STRING "The Debian revision of the packages")

find_program(PMIXLAB_DPKG dpkg)
if(PMIXLAB_DPKG)
  execute_process(COMMAND ${PMIXLAB_DPKG} --print-architecture
    OUTPUT_VARIABLE _pmixlab_arch OUTPUT_STRIP_TRAILING_WHITESPACE)
else()
  set(_pmixlab_arch ${CMAKE_SYSTEM_PROCESSOR})
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME pmixlab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${PMIXLAB_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_FILE_NAME pmixlab-${PROJECT_VERSION}-${_pmixlab_arch})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL lib dev bin)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${PMIXLAB_PACKAGE_RELEASE})
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${_pmixlab_arch})
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps must see the commands' libpmix.so.2 as libpmixlab's, not
# as Debian's OpenPMIx's (cmake/package-shlibs.cmake says why and how).
set(CPACK_PMIXLAB_SHLIBS_ROOT ${CMAKE_BINARY_DIR}/_pmixlab_shlibs)
set(CPACK_PMIXLAB_LIBDIR ${PMIXLAB_INSTALL_LIBDIR})
set(CPACK_PMIXLAB_DEB_VERSION ${PROJECT_VERSION}-${PMIXLAB_PACKAGE_RELEASE})
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_SOURCE_DIR}/cmake/package-shlibs.cmake)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CPACK_PMIXLAB_SHLIBS_ROOT}/usr/${PMIXLAB_INSTALL_LIBDIR})
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(_pmixlab_exact "(= ${CPACK_PMIXLAB_DEB_VERSION})")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME libpmixlab)
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_DESCRIPTION
  "pmixlab's libpmix, an implementation of the PMIx Standard\n\
The shared library libpmix.so.2, with the PMIx Standard's binary interface,\n\
in a directory of its own (/usr/${PMIXLAB_INSTALL_LIBDIR}): it does not\n\
replace OpenPMIx's libpmix.so.2 (libpmix2) for programs built against that.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME pmixlab-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libpmixlab ${_pmixlab_exact}, libevent-dev, libhwloc-dev")
if(PMIXLAB_INSTALL_PMIX_PC)
  set(CPACK_DEBIAN_DEV_PACKAGE_CONFLICTS "libpmix-dev")
endif()
set(CPACK_DEBIAN_DEV_DESCRIPTION
  "pmixlab's libpmix: development files\n\
The PMIx headers (/usr/include/pmixlab), libpmix.so and libpmix.a, the\n\
pkg-config file pmixlab.pc and the CMake package (find_package(pmixlab),\n\
target pmixlab::pmix).")

set(CPACK_DEBIAN_BIN_PACKAGE_NAME pmixlab-bin)
set(CPACK_DEBIAN_BIN_PACKAGE_SECTION utils)
# pmixrun and pmixd hold the library's objects (sockhost/CMakeLists.txt), so
# dpkg-shlibdeps finds no libpmix.so.2 in them; the programs they run need
# the same library.
set(CPACK_DEBIAN_BIN_PACKAGE_DEPENDS "libpmixlab ${_pmixlab_exact}")
set(CPACK_DEBIAN_BIN_DESCRIPTION
  "pmixlab's commands: pmixrun, pmixd, pmixsim\n\
pmixrun starts PMIx jobs on this node or over node daemons (pmixd); pmixsim\n\
runs PMIx programs on a simulated cluster (SimGrid).")

include(CPack)
