# Differential tests: each scripts/*.bt runs under Debian's bpftrace and under
# ubtrace and their outputs are compared (differential.py). They report SKIP
# (exit 77) where bpftrace cannot run. Included from tests/runtime and from
# this folder's CMakeLists.txt; registers the tests once.
get_property(ubt_differential_done GLOBAL PROPERTY UBT_DIFFERENTIAL_REGISTERED)
if(ubt_differential_done)
  return()
endif()
set_property(GLOBAL PROPERTY UBT_DIFFERENTIAL_REGISTERED TRUE)

find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(ubt_differential_dir ${CMAKE_CURRENT_LIST_DIR})
file(GLOB ubt_differential_scripts CONFIGURE_DEPENDS ${ubt_differential_dir}/scripts/*.bt)
foreach(script IN LISTS ubt_differential_scripts)
  get_filename_component(name ${script} NAME_WE)
  add_test(NAME differential.${name}
    COMMAND ${Python3_EXECUTABLE} ${ubt_differential_dir}/differential.py
            ${CMAKE_BINARY_DIR} ${script})
  set_tests_properties(differential.${name} PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 60 LABELS differential)
endforeach()
# The normaliser's own rules, checked without bpftrace.
add_test(NAME differential.normaliser
  COMMAND ${Python3_EXECUTABLE} ${ubt_differential_dir}/normalise_test.py)
