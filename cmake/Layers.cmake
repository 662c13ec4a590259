# The layering of docs/DESIGN.md ("The layers"), enforced by the build.
#
# No target sees the source root. Each target gets an include directory of its
# own that holds links to exactly the top-level directories it may include
# from, so `#include "ast/ast.h"` in runtime/ fails to compile instead of
# quietly coupling the runtime to the front end.
#
#   ubt_layer(<target> <dir>...)
function(ubt_layer target)
  set(inc ${CMAKE_BINARY_DIR}/layers/${target})
  file(MAKE_DIRECTORY ${inc})
  foreach(dir IN LISTS ARGN)
    if(NOT IS_SYMLINK ${inc}/${dir})
      file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${dir} ${inc}/${dir} SYMBOLIC)
    endif()
  endforeach()
  target_include_directories(${target} PRIVATE ${inc} ${CMAKE_BINARY_DIR}/gen)
endfunction()
