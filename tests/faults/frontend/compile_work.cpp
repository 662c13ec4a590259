// compile_work SCRIPT: everything ubtrace does to a script before it touches
// a process, in one process and nothing else: parse, semantic passes, BPF
// code generation, load and verify, and the x86-64 compile of the agent's
// image (jit::compile_remote_object, as `-c`/`-p` run it). Prints the size
// of the result. linear_compile.py runs it under valgrind to count the
// instructions that costs at two script sizes: the work must grow linearly.
#include "ast/context.h"
#include "ast/pass_manager.h"
#include "backends/program_set.h"
#include "codegen/codegen.h"
#include "parser/driver.h"
#include "runtime/jit/remote_image.h"
#include "runtime/maps/spec_layout.h"

#include <fstream>
#include <iostream>
#include <sstream>

using namespace ubtrace;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: compile_work SCRIPT\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  ast::ASTContext ctx(argv[1], text.str());
  bool ok = parser::parse(ctx) && ast::run_passes(ctx, ast::semantic_passes());
  ctx.diags().emit(std::cerr, false);
  if (!ok)
    return 1;
  ctx.diags() = ast::Diagnostics();
  auto out = codegen::generate(ctx, codegen::Options{});
  ctx.diags().emit(std::cerr, false);
  if (!out) {
    std::cerr << "codegen: " << out.error() << "\n";
    return 1;
  }
  const runtime::Bundle &bundle = out->bundle;
  auto layouts = runtime::maps::layouts_for(bundle.maps);
  if (!layouts) {
    std::cerr << "layouts: " << layouts.error() << "\n";
    return 1;
  }
  auto region = runtime::maps::Region::create(*layouts);
  if (!region) {
    std::cerr << "region: " << region.error() << "\n";
    return 1;
  }
  auto programs = backends::ProgramSet::load(bundle, *region);
  if (!programs) {
    std::cerr << "load: " << programs.error() << "\n";
    return 1;
  }
  std::vector<jit::RemoteProgram> remote;
  size_t insns = 0;
  for (const auto &p : bundle.probes) {
    const vm::VerifiedProgram *vp = programs->verified(p.section);
    if (!vp)
      continue;
    insns += vp->insns.size();
    remote.push_back({vp, "entry_" + std::to_string(remote.size())});
  }
  auto maps = jit::rebase_maps(programs->bindings(), 0, 0);
  auto object = jit::compile_remote_object(remote, maps);
  if (!object) {
    std::cerr << "jit: " << object.error() << "\n";
    return 1;
  }
  std::cout << "bpf_insns " << insns << " object_bytes " << object->elf.size() << "\n";
  return 0;
}
