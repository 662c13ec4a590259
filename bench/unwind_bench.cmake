# unwind_bench: the user-stack helper (get_stack) over a 16-frame stack,
# by frame pointers and by CFI rows (runtime/unwind), side by side.
if(TARGET unwind_bench)
  return()
endif()
add_library(unwind_chain_fp OBJECT ${PROJECT_SOURCE_DIR}/bench/unwind_chain.c)
target_compile_definitions(unwind_chain_fp PRIVATE CHAIN_PREFIX=fp_)
target_compile_options(unwind_chain_fp PRIVATE -O2 -fno-omit-frame-pointer
  -fno-optimize-sibling-calls -fno-inline)
add_library(unwind_chain_nofp OBJECT ${PROJECT_SOURCE_DIR}/bench/unwind_chain.c)
target_compile_definitions(unwind_chain_nofp PRIVATE CHAIN_PREFIX=nofp_)
target_compile_options(unwind_chain_nofp PRIVATE -O2 -fomit-frame-pointer
  -fno-optimize-sibling-calls -fno-inline)
add_executable(unwind_bench ${PROJECT_SOURCE_DIR}/bench/unwind_bench.cpp
  $<TARGET_OBJECTS:unwind_chain_fp> $<TARGET_OBJECTS:unwind_chain_nofp>)
ubt_layer(unwind_bench runtime)
target_link_libraries(unwind_bench PRIVATE ubtrace_helpers ubtrace_unwind
  benchmark::benchmark)
