# Every dependency comes from Debian's packages (.ci/install-deps installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

find_package(BISON 3.8 REQUIRED)
find_package(FLEX 2.6 REQUIRED)

find_package(LLVM REQUIRED CONFIG
  HINTS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "LLVM 19 is required, found ${LLVM_PACKAGE_VERSION}")
endif()
message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
# One shared libLLVM keeps links fast; components are checked here so a
# missing target is a configure error, not a link error.
foreach(target BPF NVPTX X86)
  if(NOT "${target}" IN_LIST LLVM_TARGETS_TO_BUILD)
    message(FATAL_ERROR "LLVM lacks the ${target} target")
  endif()
endforeach()
# Static LLVM (only the components ubtrace uses) starts in a fraction of the
# time and memory of the shared libLLVM, whose relocations and constructors
# for every target run at each start; the shared library links faster
# while developing.
option(UBTRACE_LLVM_STATIC "Link only the LLVM components ubtrace uses, statically" ON)
add_library(ubt_llvm INTERFACE)
target_include_directories(ubt_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_compile_definitions(ubt_llvm INTERFACE ${LLVM_DEFINITIONS})
if(UBTRACE_LLVM_STATIC)
  llvm_map_components_to_libnames(ubt_llvm_libs
    bpfcodegen bpfdesc bpfinfo bpfdisassembler
    x86codegen x86desc x86info x86disassembler
    nvptxcodegen nvptxdesc nvptxinfo
    orcjit passes mcdisassembler object)
  target_link_libraries(ubt_llvm INTERFACE ${ubt_llvm_libs})
  message(STATUS "LLVM: static components")
else()
  target_link_libraries(ubt_llvm INTERFACE LLVM)
  message(STATUS "LLVM: shared libLLVM")
endif()
set(UBTRACE_LLVM_BIN /usr/lib/llvm-19/bin)

pkg_check_modules(LIBBPF REQUIRED IMPORTED_TARGET libbpf)
pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
find_package(ZLIB REQUIRED)
# pprof profiles (backends/output/pprof.h): protobuf's runtime, and the
# schema as pprof ships it (Debian's golang-github-google-pprof-dev).
find_package(Protobuf REQUIRED)
find_library(UBTRACE_PROTOBUF_LITE_STATIC NAMES libprotobuf-lite.a REQUIRED)
find_file(UBTRACE_PPROF_PROTO profile.proto
  PATHS /usr/share/gocode/src/github.com/google/pprof/proto NO_DEFAULT_PATH)
if(NOT UBTRACE_PPROF_PROTO)
  message(FATAL_ERROR "pprof's profile.proto was not found: "
                      "install golang-github-google-pprof-dev")
endif()
find_package(zydis REQUIRED CONFIG)
find_package(cereal REQUIRED CONFIG)
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)

find_program(UBTRACE_CLANG_BPF NAMES clang-19 HINTS ${UBTRACE_LLVM_BIN} REQUIRED)
find_program(UBTRACE_FILECHECK NAMES FileCheck-19 FileCheck HINTS ${UBTRACE_LLVM_BIN})
find_program(UBTRACE_BPFTRACE NAMES bpftrace)

# CUDA is optional: without it the GPU parts that need nvcc/ptxas are skipped.
set(UBTRACE_CUDA_ROOT /usr/local/cuda CACHE PATH "CUDA toolkit")
if(EXISTS ${UBTRACE_CUDA_ROOT}/bin/nvcc AND EXISTS ${UBTRACE_CUDA_ROOT}/bin/ptxas)
  set(UBTRACE_HAVE_CUDA ON)
  message(STATUS "CUDA toolkit: ${UBTRACE_CUDA_ROOT} (GPU offline tests enabled)")
else()
  set(UBTRACE_HAVE_CUDA OFF)
  message(STATUS "CUDA toolkit not found at ${UBTRACE_CUDA_ROOT}: "
                 "GPU offline tests (nvcc sample apps, ptxas checks) are skipped")
endif()
