# cmake/manpages.cmake: the man pages of the commands, made at build time
# from the built commands' --help (man/help2roff.sh), so that the page and
# the help never drift apart. tests/check-manpages.sh checks that every
# option a command's --help lists is in its page. Defines
# PMIXLAB_MAN_PAGES, the pages, for cmake/install.cmake.

set(PMIXLAB_MAN_DIR ${CMAKE_BINARY_DIR}/man)
set(PMIXLAB_MAN_PAGES "")

# pmixlab_man_page(TARGET SUMMARY [SUBCOMMAND...]): TARGET.1, from
# `TARGET --help` and `TARGET SUBCOMMAND --help` for each SUBCOMMAND.
function(pmixlab_man_page target summary)
  if(NOT TARGET ${target})
    return()
  endif()
  set(also "")
  foreach(sub ${ARGN})
    list(APPEND also --also ${sub})
  endforeach()
  set(page ${PMIXLAB_MAN_DIR}/${target}.1)
  add_custom_command(OUTPUT ${page}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PMIXLAB_MAN_DIR}
    COMMAND bash ${CMAKE_SOURCE_DIR}/man/help2roff.sh ${page} ${target} 1 ${PROJECT_VERSION}
            "${summary}" ${also} -- $<TARGET_FILE:${target}>
    DEPENDS ${target} ${CMAKE_SOURCE_DIR}/man/help2roff.sh
    COMMENT "Writing the man page ${target}.1 from ${target} --help"
    VERBATIM)
  set(PMIXLAB_MAN_PAGES ${PMIXLAB_MAN_PAGES} ${page} PARENT_SCOPE)
endfunction()

pmixlab_man_page(pmixrun "start a PMIx job on this node or over node daemons")
pmixlab_man_page(pmixd "the node daemon of a pmixrun --nodes job")
pmixlab_man_page(pmixps "list the jobs of a running PMIx server and their processes")
pmixlab_man_page(pmixstack "print the merged call stacks of a running job's processes")
pmixlab_man_page(pmixsim "run PMIx programs on a simulated cluster (SimGrid)" run)

add_custom_target(pmixlab_man_pages ALL DEPENDS ${PMIXLAB_MAN_PAGES})
