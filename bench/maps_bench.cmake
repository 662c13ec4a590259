# maps_bench: lookup+increment on per-slot and plain hash maps, 1 and 2
# threads (Google Benchmark). Included from tests/unit/maps (and, if the lead
# wishes, bench/CMakeLists.txt): defined once.
if(TARGET maps_bench)
  return()
endif()
add_executable(maps_bench ${PROJECT_SOURCE_DIR}/bench/maps_bench.cpp)
ubt_layer(maps_bench runtime)
target_link_libraries(maps_bench PRIVATE ubtrace_maps benchmark::benchmark)
