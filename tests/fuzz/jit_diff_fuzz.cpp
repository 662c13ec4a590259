// libFuzzer: interpreter vs JIT on programs made from the fuzz input.
//   byte 0, bit 0 clear: the VM's generator (pure computation), run on two
//                        ctxs taken from the input's tail;
//   bit 0 set:           the JIT's generator (helpers, maps, callbacks).
// Any difference (r0, ctx, maps, events, helper arguments) aborts with the
// program's listing. A libFuzzer binary with -DUBTRACE_FUZZ=ON, else a
// replay executable; see README-jit.md.
#include "tests/fuzz/jit_program_gen.h"
#include "tests/fuzz/vm_program_gen.h"
#include "tests/unit/jit/diff_harness.h"
#include "tests/unit/jit/gen_diff.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace ubtrace;

namespace {

std::vector<uint8_t> ctx_from(const uint8_t *data, size_t size, size_t bytes,
                              uint8_t salt) {
  std::vector<uint8_t> ctx(bytes);
  for (size_t i = 0; i < bytes; ++i)
    ctx[i] = size ? uint8_t(data[(i * 7 + salt) % size] ^ (i * salt)) : 0;
  return ctx;
}

[[noreturn]] void report(const std::string &diff) {
  std::fprintf(stderr, "interpreter and JIT differ:\n%s\n", diff.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  std::span<const uint8_t> body(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    vm::fuzz::GenOptions options;
    options.isa_v4 = (data[0] & 2) == 0;
    std::vector<vm::Insn> prog = vm::fuzz::generate_program(body, options);
    std::vector<std::vector<uint8_t>> ctxs = {
        ctx_from(data, size, options.ctx_size, 3),
        ctx_from(data, size, options.ctx_size, 101)};
    std::string diff = jit::test::diff_plain(prog, ctxs, false);
    if (!diff.empty())
      report(diff);
    return 0;
  }
  jit::fuzz::JitGenOptions options;
  std::vector<vm::Insn> prog = jit::fuzz::generate_jit_program(body, options);
  std::string diff = jit::test::diff_generated(
      prog, ctx_from(data, size, options.ctx_size, 17));
  if (!diff.empty())
    report(diff);
  return 0;
}

#ifndef UBTRACE_LIBFUZZER
// jit_diff_fuzz_replay PATH...: every file given, and every file under every
// directory given, through the fuzz entry point once (ctest runs the saved
// corpus this way in every build).
#include <filesystem>
#include <fstream>
#include <iterator>

int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto &e : fs::recursive_directory_iterator(argv[i], ec))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else {
      files.emplace_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path &file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", file.c_str());
      return 1;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("%zu inputs replayed, interpreter and JIT agree\n", files.size());
  return files.empty() ? 1 : 0;
}
#endif
