# hook_bench: per-call cost of entry and return hooks (Google Benchmark).
# Included from tests/unit/hook (and, if the lead wishes,
# bench/CMakeLists.txt): defined once.
if(TARGET hook_bench)
  return()
endif()
add_executable(hook_bench ${PROJECT_SOURCE_DIR}/bench/hook_bench.cpp
                          ${PROJECT_SOURCE_DIR}/bench/hook_bench_targets.S)
set_source_files_properties(${PROJECT_SOURCE_DIR}/bench/hook_bench_targets.S
  PROPERTIES LANGUAGE C COMPILE_OPTIONS "-x;assembler-with-cpp")
ubt_layer(hook_bench runtime)
target_link_libraries(hook_bench PRIVATE ubtrace_hook benchmark::benchmark)
