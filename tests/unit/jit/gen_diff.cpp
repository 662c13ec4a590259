#include "tests/unit/jit/gen_diff.h"

#include "tests/fuzz/jit_program_gen.h"
#include "tests/unit/jit/diff_harness.h"
#include "tests/unit/jit/region_maps.h"

namespace ubtrace::jit::test {

std::string diff_generated(std::span<const vm::Insn> insns,
                           const std::vector<uint8_t> &ctx,
                           GenDiffStats *stats) {
  vm::Object object;
  object.maps = fuzz::gen_maps();
  vm::Program program;
  program.name = "gen";
  program.insns.assign(insns.begin(), insns.end());
  auto verified = vm::verify(program, object.maps, fuzz::gen_helper_protos(),
                             vm::ContextInfo{uint32_t(ctx.size()), true});
  if (!verified)
    return "generator bug, the verifier refuses: " + verified.error() + "\n" +
           listing(insns);
  auto interp_maps = RegionMaps::for_object(object);
  auto jit_maps = RegionMaps::for_object(object);
  if (!interp_maps || !jit_maps)
    return "cannot create maps";
  vm::HelperImpls helpers = fuzz::gen_helper_impls(region_helpers());

  fuzz::record_log().clear();
  auto a = interpret(*verified, interp_maps->bindings(), helpers, ctx);
  std::vector<uint64_t> interp_log = std::move(fuzz::record_log());
  fuzz::record_log().clear();
  if (!a)
    return a.error() + "\n" + listing(insns);
  auto b = jit_run(*verified, jit_maps->bindings(), helpers, ctx);
  std::vector<uint64_t> jit_log = std::move(fuzz::record_log());
  fuzz::record_log().clear();
  if (!b)
    return b.error() + "\n" + listing(insns);

  std::string diff;
  if (a->r0 != b->r0)
    diff +=
        "r0: interpreter " + hex_u64(a->r0) + ", jit " + hex_u64(b->r0) + "\n";
  if (a->ctx != b->ctx)
    diff += "ctx: interpreter " + hex_bytes(a->ctx) + ", jit " +
            hex_bytes(b->ctx) + "\n";
  if (interp_log != jit_log)
    diff += "record(): " + std::to_string(interp_log.size() / 5) +
            " calls in the interpreter, " + std::to_string(jit_log.size() / 5) +
            " in the jit, or other arguments\n";
  std::string want = interp_maps->dump(), got = jit_maps->dump();
  if (want != got)
    diff += "maps:\ninterpreter:\n" + want + "jit:\n" + got;
  if (stats) {
    ++stats->programs;
    stats->helper_calls += interp_log.size() / 5;
  }
  return diff.empty()
             ? diff
             : diff + "on ctx " + hex_bytes(ctx) + "\n" + listing(insns);
}

} // namespace ubtrace::jit::test
