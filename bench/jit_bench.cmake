# jit_bench: JIT'd vs interpreted probe bodies on the real shared-memory maps,
# and compile latency (Google Benchmark). Needs the front end to compile its
# one-liners. Included from tests/unit/jit (and, if the lead wishes,
# bench/CMakeLists.txt): defined once.
if(TARGET jit_bench OR NOT TARGET ubtrace_codegen OR NOT TARGET ubt_jit_harness)
  return()
endif()
add_executable(jit_bench ${PROJECT_SOURCE_DIR}/bench/jit_bench.cpp
               ${PROJECT_SOURCE_DIR}/tests/unit/jit/script_bundle.cpp)
ubt_layer(jit_bench runtime tests parser ast codegen)
target_link_libraries(jit_bench PRIVATE ubt_jit_harness ubtrace_jit
  ubtrace_parser ubtrace_ast ubtrace_codegen benchmark::benchmark)
