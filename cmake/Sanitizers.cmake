# Sanitizer builds: -DUBTRACE_SANITIZE=ON (ASan and UBSan) or
# -DUBTRACE_FUZZ=ON (the same plus libFuzzer's coverage), each in a build
# directory of its own. Nothing here changes an ordinary build.
#
# What is instrumented: every target of the project's own code that runs in
# a process of ours, i.e. every target that goes through ubt_layer
# (cmake/Layers.cmake): the libraries, the CLI, the gtests, the fuzzers,
# the benchmarks.
#
# What is not: code that runs inside the programs ubtrace traces. ASan's
# runtime has to be the first library a process loads and owns its whole
# address space; a program we trace never arranges that, so an
# instrumented agent could not even load into it. Such targets are marked
# with ubt_in_target(): the agent, the preload library, and the test
# fixtures loaded into traced programs. The static libraries they link
# (the VM, the maps, the hooks, ...) are built a second time without
# instrumentation, as <lib>_in_target (ubt_in_target_copy), and linked in
# their place. So in a sanitizer build the gtests exercise those libraries
# instrumented, and the DSL and fault tests trace real programs with the
# same agent a release build has.
#
# Test fixtures that do not go through ubt_layer (the programs in
# tests/testprogs, tests/faults/*/progs, ...) are plain programs and stay
# uninstrumented.

set(UBTRACE_SANITIZING OFF)
set(UBTRACE_SANITIZER_NAMES none) # what `ubtrace --info` says
set(ubt_sanitize_compile)
set(ubt_sanitize_link)
if(UBTRACE_FUZZ)
  set(UBTRACE_SANITIZING ON)
  set(UBTRACE_SANITIZER_NAMES "address, undefined, fuzzer coverage")
  set(ubt_sanitize_compile -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  set(ubt_sanitize_link -fsanitize=address,undefined)
elseif(UBTRACE_SANITIZE)
  set(UBTRACE_SANITIZING ON)
  set(UBTRACE_SANITIZER_NAMES "address, undefined")
  set(ubt_sanitize_compile -fsanitize=address,undefined -fno-omit-frame-pointer)
  set(ubt_sanitize_link -fsanitize=address,undefined)
endif()
if(UBTRACE_SANITIZING AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "sanitizer and fuzz builds need clang (-DCMAKE_CXX_COMPILER=clang++-19)")
endif()
if(UBTRACE_SANITIZING)
  # Every finding stops the process, whatever UBSAN_OPTIONS says: a test
  # that hits undefined behaviour fails.
  list(APPEND ubt_sanitize_compile -fno-sanitize-recover=all)
  # UBSan's function check reads a type hash from the 8 bytes before the
  # callee of every indirect call; code the JIT emits (and a hook's
  # trampoline) has none there, and at the start of a page the read
  # faults.
  list(APPEND ubt_sanitize_compile -fno-sanitize=function)
endif()
# The build type sanitizer builds default to (CMakeLists.txt): ASan's
# recommended -O1, line tables for its stacks (half the compile time of
# -O2 -g), and assertions on.
set(CMAKE_C_FLAGS_SANITIZE "-O1 -gline-tables-only" CACHE STRING "C flags of the Sanitize build type")
set(CMAKE_CXX_FLAGS_SANITIZE "-O1 -gline-tables-only" CACHE STRING "C++ flags of the Sanitize build type")

# In-target code is built as a release build builds it (RelWithDebInfo's
# -O2), whatever the build type: what a probe's path calls, and so the
# faults.hooks.probe_path_calls check, depends on the optimisation level
# (at -O1 a loop that shifts an array becomes a call to memmove).
set(ubt_in_target_compile -O2)

# ubt_instrument(<target>): the sanitizer flags, unless <target> is marked
# in-target (evaluated when the build is generated, so marking may come
# later). Called by ubt_layer.
function(ubt_instrument target)
  if(NOT UBTRACE_SANITIZING)
    return()
  endif()
  set(mine "$<NOT:$<BOOL:$<TARGET_PROPERTY:UBT_IN_TARGET>>>")
  target_compile_options(${target} PRIVATE "$<${mine}:${ubt_sanitize_compile}>")
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE" OR type MATCHES "SHARED_LIBRARY|MODULE_LIBRARY")
    target_link_options(${target} PRIVATE "$<${mine}:${ubt_sanitize_link}>")
  endif()
endfunction()

# The project targets linked in place of <item> by an in-target target: its
# uninstrumented copy where there is one (decided when the build is
# generated, so copies may be defined in any order).
function(ubt_in_target_items out)
  set(items)
  foreach(item IN LISTS ARGN)
    if(item MATCHES "^[A-Za-z0-9_]+$")
      list(APPEND items "$<IF:$<TARGET_EXISTS:${item}_in_target>,${item}_in_target,${item}>")
    elseif(item MATCHES "^\\$<LINK_ONLY:([A-Za-z0-9_]+)>$")
      set(inner ${CMAKE_MATCH_1})
      list(APPEND items
        "$<LINK_ONLY:$<IF:$<TARGET_EXISTS:${inner}_in_target>,${inner}_in_target,${inner}>>")
    else()
      list(APPEND items "${item}")
    endif()
  endforeach()
  set(${out} "${items}" PARENT_SCOPE)
endfunction()

# <to> links the in-target copies of what <from> links.
function(ubt_in_target_links from to)
  foreach(prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(items ${from} ${prop})
    if(items)
      ubt_in_target_items(items ${items})
      set_property(TARGET ${to} PROPERTY ${prop} "${items}")
    endif()
  endforeach()
endfunction()

# The properties <prop>... that <from> has, set on <to>.
function(ubt_copy_properties from to)
  foreach(prop IN LISTS ARGN)
    get_target_property(value ${from} ${prop})
    if(NOT value STREQUAL "value-NOTFOUND")
      set_property(TARGET ${to} PROPERTY ${prop} "${value}")
    endif()
  endforeach()
endfunction()

# ubt_in_target(<target>...): <target> runs inside traced programs. In a
# sanitizer build it is not instrumented and links the in-target copies of
# the project's libraries. Call it after the target's target_link_libraries.
function(ubt_in_target)
  foreach(target IN LISTS ARGN)
    set_target_properties(${target} PROPERTIES UBT_IN_TARGET ON)
    if(UBTRACE_SANITIZING)
      target_compile_options(${target} PRIVATE ${ubt_in_target_compile})
      ubt_in_target_links(${target} ${target})
    endif()
  endforeach()
endfunction()

# ubt_in_target_copy(<lib>...): in a sanitizer build, <lib>_in_target, the
# same library built uninstrumented for ubt_in_target() targets. Call it in
# <lib>'s own CMakeLists.txt after everything that sets <lib>'s properties
# (its sources' properties are per directory).
function(ubt_in_target_copy)
  if(NOT UBTRACE_SANITIZING)
    return()
  endif()
  foreach(lib IN LISTS ARGN)
    set(copy ${lib}_in_target)
    get_target_property(type ${lib} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY")
      add_library(${copy} INTERFACE)
    else()
      string(REPLACE "_LIBRARY" "" kind ${type})
      get_target_property(sources ${lib} SOURCES)
      add_library(${copy} ${kind} ${sources})
      ubt_copy_properties(${lib} ${copy} COMPILE_OPTIONS COMPILE_DEFINITIONS
        INCLUDE_DIRECTORIES COMPILE_FEATURES POSITION_INDEPENDENT_CODE
        C_VISIBILITY_PRESET CXX_VISIBILITY_PRESET VISIBILITY_INLINES_HIDDEN)
      target_compile_options(${copy} PRIVATE ${ubt_in_target_compile})
    endif()
    ubt_copy_properties(${lib} ${copy} INTERFACE_COMPILE_OPTIONS
      INTERFACE_COMPILE_DEFINITIONS INTERFACE_INCLUDE_DIRECTORIES
      INTERFACE_SYSTEM_INCLUDE_DIRECTORIES INTERFACE_COMPILE_FEATURES)
    get_target_property(deps ${lib} MANUALLY_ADDED_DEPENDENCIES)
    if(deps)
      add_dependencies(${copy} ${deps})
    endif()
    set_target_properties(${copy} PROPERTIES UBT_IN_TARGET ON)
    ubt_in_target_links(${lib} ${copy})
  endforeach()
endfunction()
