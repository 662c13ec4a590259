# The layering of docs/DESIGN.md ("The layers"), enforced by the build.
#
# No target sees the source root. Each target gets an include directory of its
# own that holds links to exactly the top-level directories it may include
# from, so `#include "ast/ast.h"` in runtime/ fails to compile instead of
# quietly coupling the runtime to the front end.
#
#   ubt_layer(<target> <dir>...)
#
# A <dir> may be a directory below the top level (runtime/config): the
# target sees that one and nothing else of its parent. A target that sees
# ast/ sees runtime/config/ too: the AST context holds the typed config
# (runtime/config/config.h), the one runtime contract the front end shares,
# and runtime/syscalls/, the system call table both the front end (the
# tracepoints, their fields) and the output (syscall_name()) read.
function(ubt_layer target)
  set(inc ${CMAKE_BINARY_DIR}/layers/${target})
  file(MAKE_DIRECTORY ${inc})
  set(dirs ${ARGN})
  if("ast" IN_LIST dirs AND NOT "runtime" IN_LIST dirs)
    list(APPEND dirs runtime/config runtime/syscalls)
  endif()
  foreach(dir IN LISTS dirs)
    get_filename_component(parent ${inc}/${dir} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    if(NOT IS_SYMLINK ${inc}/${dir})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${dir} ${inc}/${dir} SYMBOLIC)
    endif()
  endforeach()
  target_include_directories(${target} PRIVATE ${inc} ${CMAKE_BINARY_DIR}/gen)
  # Every target of the project's own code comes through here: it is
  # where a sanitizer build instruments it (cmake/Sanitizers.cmake).
  ubt_instrument(${target})
endfunction()
