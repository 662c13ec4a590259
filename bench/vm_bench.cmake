# vm_bench: interpreter speed and verifier time (Google Benchmark). Included
# from tests/unit/vm (and, if the lead wishes, bench/CMakeLists.txt):
# defined once.
if(TARGET vm_bench)
  return()
endif()
add_executable(vm_bench ${PROJECT_SOURCE_DIR}/bench/vm_bench.cpp)
ubt_layer(vm_bench runtime)
target_link_libraries(vm_bench PRIVATE ubtrace_vm benchmark::benchmark)
