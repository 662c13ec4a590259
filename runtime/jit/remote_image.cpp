// Remote images: lift every program into one module, compile it to an ELF
// relocatable with LLVM's code generator, and link that with elf_link.
#include "runtime/jit/remote_image.h"

#include "runtime/jit/codegen_level.h"
#include "runtime/jit/elf_link.h"

#include <algorithm>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

namespace ubtrace::jit {
namespace {

std::string host_features() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  std::string out;
  for (const auto &f : features)
    out += (out.empty() ? "" : ",") + std::string(f.second ? "+" : "-") +
           f.first().str();
  return out;
}

Result<std::unique_ptr<llvm::TargetMachine>>
target_machine(const RemoteOptions &options, llvm::CodeGenOptLevel level) {
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(options.triple, error);
  if (!target)
    return make_error("no LLVM target for " + options.triple + ": " + error);
  bool host = options.cpu.empty();
  std::string cpu = host ? llvm::sys::getHostCPUName().str() : options.cpu;
  std::string features = host ? host_features() : options.features;
  llvm::TargetOptions to;
  auto *tm = target->createTargetMachine(options.triple, cpu, features, to,
                                         options.pic ? llvm::Reloc::PIC_
                                                     : llvm::Reloc::Static,
                                         llvm::CodeModel::Small, level);
  if (!tm)
    return make_error("cannot create a target machine for " + options.triple);
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

} // namespace

Result<RemoteObject>
compile_remote_object(std::span<const RemoteProgram> programs,
                      std::span<const MapConstants> maps,
                      const RemoteOptions &options) {
  initialize_llvm_targets();
  size_t largest = 0;
  for (const RemoteProgram &p : programs)
    largest = std::max(largest, p.program->insns.size());
  Pipeline pipeline = pipeline_for(options.level, largest);
  auto tm = target_machine(options, pipeline.codegen);
  if (!tm)
    return std::move(tm).take_error();
  RemoteObject out;
  uint64_t t0 = steady_now_ns();
  llvm::LLVMContext context;
  llvm::Module module("ubt_remote", context);
  module.setDataLayout((*tm)->createDataLayout());
  module.setTargetTriple(options.triple);
  SymbolHelpers helpers(options.helpers);
  for (const RemoteProgram &p : programs) {
    auto lifted =
        lift_program(module, *p.program, maps, helpers, p.entry, options.lift);
    if (!lifted)
      return make_error(p.program->name + ": " + lifted.error());
    out.entries.push_back(p.entry);
  }
  std::string broken;
  llvm::raw_string_ostream broken_out(broken);
  if (llvm::verifyModule(module, &broken_out))
    return make_error("BUG: lifted IR is invalid: " + broken);
  uint64_t t1 = steady_now_ns();
  optimize_module(module, tm->get(), pipeline.ir);
  uint64_t t2 = steady_now_ns();

  llvm::SmallVector<char, 0> elf;
  llvm::raw_svector_ostream elf_out(elf);
  llvm::legacy::PassManager codegen;
  if ((*tm)->addPassesToEmitFile(codegen, elf_out, nullptr,
                                 llvm::CodeGenFileType::ObjectFile))
    return make_error(options.triple + " cannot emit object files");
  codegen.run(module);
  out.elf.assign(elf.begin(), elf.end());
  out.times = {t1 - t0, t2 - t1, steady_now_ns() - t2};

  auto object = elf::parse(out.elf);
  if (!object)
    return make_error("BUG: LLVM's object: " + object.error());
  auto plan = elf::plan(*object);
  if (!plan)
    return std::move(plan).take_error();
  out.image_size = plan->size;
  out.alignment = plan->align;
  out.required_symbols = plan->undefined;
  return out;
}

std::vector<MapConstants> rebase_maps(std::span<const vm::MapBinding> cli_maps,
                                      uint64_t cli_region_base,
                                      uint64_t target_region_base) {
  std::vector<MapConstants> out = map_constants(cli_maps);
  for (MapConstants &m : out) {
    m.handle = m.handle - cli_region_base + target_region_base;
    if (m.value_base)
      m.value_base = m.value_base - cli_region_base + target_region_base;
  }
  return out;
}

uint64_t RemoteImage::offset_of(const std::string &entry) const {
  for (const auto &[name, offset] : entries)
    if (name == entry)
      return offset;
  return UINT64_MAX;
}

Result<RemoteImage> link_remote_image(const RemoteObject &object,
                                      uint64_t load_address,
                                      const SymbolTable &symbols) {
  auto parsed = elf::parse(object.elf);
  if (!parsed)
    return std::move(parsed).take_error();
  auto plan = elf::plan(*parsed);
  if (!plan)
    return std::move(plan).take_error();
  auto bytes = elf::link(*parsed, *plan, load_address, symbols);
  if (!bytes)
    return std::move(bytes).take_error();
  RemoteImage image;
  image.load_address = load_address;
  image.bytes = std::move(*bytes);
  for (const std::string &entry : object.entries) {
    uint64_t offset = elf::symbol_offset(*parsed, *plan, entry);
    if (offset == elf::kNotPlaced)
      return make_error("entry point " + entry + " is not in the image");
    image.entries.emplace_back(entry, offset);
  }
  return image;
}

} // namespace ubtrace::jit
