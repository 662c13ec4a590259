// Fuzzes the front end: arbitrary bytes are parsed as a script and, when
// they parse, run through every semantic pass and printed with types, and
// the diagnostics are rendered. Nothing may crash, hang, leak or hit
// undefined behaviour, whatever the input.
//
// Built two ways (tests/fuzz/CMakeLists.txt):
//  - parser_fuzz: with libFuzzer (-DUBTRACE_FUZZ=ON), which supplies main;
//  - parser_fuzz_replay: a plain executable whose main() below replays
//    files and directories (the script corpus and the crash reproducers in
//    tests/fuzz/regressions/parser) through the same entry point, so that
//    fixed crashes stay fixed in every build.
#include "ast/context.h"
#include "ast/pass_manager.h"
#include "ast/printer.h"
#include "parser/driver.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ubtrace;
  ast::ASTContext ctx("fuzz.bt",
                      std::string(reinterpret_cast<const char *>(data), size));
  // Positional parameters and --unsafe reach more of the checks.
  ctx.positional = {"1", "/bin/true", "main"};
  ctx.unsafe = true;
  std::ostringstream sink;
  if (parser::parse(ctx)) {
    ast::print_ast(sink, *ctx.root, false);
    if (ast::run_passes(ctx, ast::semantic_passes()))
      ast::print_ast(sink, *ctx.root, true);
  }
  ctx.diags().emit(sink);
  return 0;
}

#ifndef UBTRACE_LIBFUZZER
namespace {

bool replay(const std::filesystem::path &file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", file.c_str());
    return false;
  }
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                         bytes.size());
  return true;
}

} // namespace

// parser_fuzz_replay PATH...: every file given, and every file under every
// directory given, goes through the fuzz entry point once.
int main(int argc, char **argv) {
  namespace fs = std::filesystem;
  size_t count = 0;
  bool ok = true;
  for (int i = 1; i < argc; i++) {
    fs::path p(argv[i]);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const auto &e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file())
          files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto &f : files) {
        ok &= replay(f);
        count++;
      }
    } else {
      ok &= replay(p);
      count++;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return ok && count > 0 ? 0 : 1;
}
#endif
