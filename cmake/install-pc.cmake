# cmake/install-pc.cmake: run by `cmake --install` (an install(CODE) of
# cmake/install.cmake) to write the pkg-config files for the prefix being
# installed to, which is only known then: `cmake --install --prefix DIR`
# and CPack (/usr) choose it after configure time.
#
# In: PC_TEMPLATE (pmixlab.pc.in), PC_OUT_DIR (a scratch directory of the
# build tree), PC_DIR (where .pc files go), PC_LIBDIR and PC_INCLUDEDIR
# (relative to the prefix, or absolute), PC_SYSTEM_LIBDIRS (directories
# the linker searches anyway: no RUNPATH is added for them), PC_NAMES (a
# list of NAME=VERSION: pmixlab=0.1.0, and pmix=4.2.0 when it is wanted).
# It installs NAME.pc for each, through file(INSTALL), which honours
# DESTDIR and records the file in install_manifest.txt.

foreach(kind LIBDIR INCLUDEDIR DIR)
  if(IS_ABSOLUTE "${PC_${kind}}")
    set(abs_${kind} "${PC_${kind}}")
  else()
    set(abs_${kind} "${CMAKE_INSTALL_PREFIX}/${PC_${kind}}")
  endif()
endforeach()

set(PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
if(IS_ABSOLUTE "${PC_LIBDIR}")
  set(PC_LIBDIR "${PC_LIBDIR}")
else()
  set(PC_LIBDIR "\${prefix}/${PC_LIBDIR}")
endif()
if(IS_ABSOLUTE "${PC_INCLUDEDIR}")
  set(PC_INCLUDEDIR "${PC_INCLUDEDIR}")
else()
  set(PC_INCLUDEDIR "\${prefix}/${PC_INCLUDEDIR}")
endif()

# A program linked with -lpmix from a directory the loader does not search
# must find libpmix.so.2 there at run time, not another implementation's
# libpmix.so.2 in the system directories (Debian's OpenPMIx has one):
# RUNPATH, as OpenPMIx's own pmix.pc does. LD_LIBRARY_PATH still wins.
set(PC_RPATH "-Wl,-rpath,\${libdir} -Wl,--enable-new-dtags ")
foreach(dir ${PC_SYSTEM_LIBDIRS})
  if("${abs_LIBDIR}" STREQUAL "${dir}")
    set(PC_RPATH "")
  endif()
endforeach()

foreach(entry ${PC_NAMES})
  string(REPLACE "=" ";" entry "${entry}")
  list(GET entry 0 PC_NAME)
  list(GET entry 1 PC_VERSION)
  if(PC_NAME STREQUAL "pmix")
    set(PC_WHAT "in place of OpenPMIx; PMIx Standard version ${PC_VERSION}")
  else()
    set(PC_WHAT "include <pmix.h>, link -lpmix")
  endif()
  configure_file("${PC_TEMPLATE}" "${PC_OUT_DIR}/${PC_NAME}.pc" @ONLY)
  file(INSTALL DESTINATION "${abs_DIR}" TYPE FILE FILES "${PC_OUT_DIR}/${PC_NAME}.pc")
endforeach()
