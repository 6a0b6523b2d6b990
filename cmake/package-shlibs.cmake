# cmake/package-shlibs.cmake: run by CPack after it has staged the
# components and before it makes the packages (CPACK_PRE_BUILD_SCRIPTS of
# cmake/package.cmake).
#
# dpkg-shlibdeps computes the Depends of pmixlab-bin from the libraries
# its programs need. For libpmix.so.2 it must answer libpmixlab; but it
# only believes a library that some package's shlibs file describes, and
# otherwise falls back to the next libpmix.so.2 it finds, Debian's
# OpenPMIx (libpmix2). So this script makes a package tree of its own
# (CPACK_PMIXLAB_SHLIBS_ROOT, handed to dpkg-shlibdeps with -l) holding a
# copy of the staged libpmix.so.2 and a DEBIAN/shlibs saying that
# libpmixlab, at this exact version, provides it.

set(root "${CPACK_PMIXLAB_SHLIBS_ROOT}")
set(rel "usr/${CPACK_PMIXLAB_LIBDIR}/libpmix.so.2")
set(staged "")
foreach(dir "${CPACK_TEMPORARY_DIRECTORY}/lib" "${CPACK_TEMPORARY_DIRECTORY}")
  if(EXISTS "${dir}/${rel}")
    set(staged "${dir}/${rel}")
    break()
  endif()
endforeach()
if(NOT staged)
  message(FATAL_ERROR "package-shlibs: no ${rel} staged under ${CPACK_TEMPORARY_DIRECTORY}")
endif()

file(REMOVE_RECURSE "${root}")
configure_file("${staged}" "${root}/${rel}" COPYONLY)
file(WRITE "${root}/DEBIAN/shlibs" "libpmix 2 ${CPACK_DEBIAN_LIB_PACKAGE_NAME} (= ${CPACK_PMIXLAB_DEB_VERSION})\n")
