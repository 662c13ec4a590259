// BTF-defined maps: each map is a global in ".maps" whose debug type spells
// its parameters the way libbpf reads them (`int (*type)[BPF_MAP_TYPE]`,
// `int (*max_entries)[N]`, `KEY *key`, `VALUE *value`). LLVM's BPF backend
// turns the debug info into .BTF.
#include "codegen/irgen.h"

#include <linux/bpf.h>

namespace ubtrace::codegen {

llvm::DIType *IRGen::di_int() {
  return di_->createBasicType("int", 32, llvm::dwarf::DW_ATE_signed);
}

llvm::DIType *IRGen::di_bytes(uint32_t size) {
  // Array maps want an integer key; 4 and 8 bytes read as integers anyway.
  if (size == 4)
    return di_->createBasicType("unsigned int", 32,
                                llvm::dwarf::DW_ATE_unsigned);
  if (size == 8)
    return di_->createBasicType("unsigned long", 64,
                                llvm::dwarf::DW_ATE_unsigned);
  auto *u8 = di_->createBasicType("unsigned char", 8,
                                  llvm::dwarf::DW_ATE_unsigned_char);
  if (size == 1)
    return u8;
  return di_->createArrayType(
      size * 8, 8, u8,
      di_->getOrCreateArray({di_->getOrCreateSubrange(0, size)}));
}

void IRGen::define_map_global(MapGen &mg) {
  auto number = [&](uint64_t n) -> llvm::DIType * {
    auto *arr = di_->createArrayType(
        n * 32, 32, di_int(),
        di_->getOrCreateArray({di_->getOrCreateSubrange(0, n)}));
    return di_->createPointerType(arr, 64);
  };
  struct Member {
    const char *name;
    llvm::DIType *type;
  };
  std::vector<Member> members = {{"type", number(mg.bpf_type)},
                                 {"max_entries", number(mg.spec.max_entries)}};
  if (mg.bpf_type != BPF_MAP_TYPE_RINGBUF) {
    members.push_back(
        {"key", di_->createPointerType(di_bytes(mg.spec.key_size), 64)});
    members.push_back(
        {"value", di_->createPointerType(di_bytes(mg.spec.value_size), 64)});
  }
  std::vector<llvm::Metadata *> elems;
  uint64_t offset = 0;
  for (const auto &m : members) {
    elems.push_back(di_->createMemberType(cu_, m.name, difile_, 0, 64, 64,
                                          offset, llvm::DINode::FlagZero,
                                          m.type));
    offset += 64;
  }
  auto *st = di_->createStructType(cu_, "", difile_, 0, offset, 64,
                                   llvm::DINode::FlagZero, nullptr,
                                   di_->getOrCreateArray(elems));
  auto *gve = di_->createGlobalVariableExpression(
      cu_, mg.spec.object_name, mg.spec.object_name, difile_, 0, st, false);
  mg.gv->addDebugInfo(gve);
}

} // namespace ubtrace::codegen
