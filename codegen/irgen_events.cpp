// Events: printf and friends, print, exit, clear/zero, time, join, signal.
// An event is built in the per-slot scratch area and sent through the
// events ring buffer (abi::EventHeader, then its payload).
#include "codegen/irgen.h"
#include "codegen/value_types.h"

#include <csignal>
#include <cstring>
#include <linux/bpf.h>

namespace ubtrace::codegen {

using namespace ast;

llvm::Value *IRGen::scratch(uint32_t size) {
  scratch_size_ = std::max(scratch_size_, size);
  auto &sm = map_of(abi::kScratchMap);
  auto *key = entry_alloca(4, "skey");
  b_.CreateAlignedStore(b_.getInt32(0), key, llvm::Align(4));
  auto *p = helper(BPF_FUNC_map_lookup_elem, ptrt(), {sm.gv, key});
  auto *bail = block("scratch.none");
  auto *ok = block("scratch.ok");
  b_.CreateCondBr(b_.CreateIsNull(p), bail, ok);
  b_.SetInsertPoint(bail);
  gen_return();
  b_.SetInsertPoint(ok);
  return p;
}

std::vector<runtime::SourceSite> IRGen::sites_of(const ast::Location &loc) {
  std::vector<runtime::SourceSite> out;
  for (const ast::Location *at = &loc; at; at = at->expanded_from)
    out.push_back({at->str(), at->file ? at->file->name : "",
                   static_cast<uint64_t>(at->begin.line),
                   static_cast<uint64_t>(at->begin.column), at->context()});
  return out;
}

runtime::FormatSpec IRGen::located_format(const Location &loc,
                                          std::string format) {
  runtime::FormatSpec spec;
  spec.format = std::move(format);
  spec.where = sites_of(loc);
  return spec;
}

void IRGen::emit_event(llvm::Value *buf, uint32_t size) {
  auto &em = map_of(abi::kEventsMap);
  helper(BPF_FUNC_ringbuf_output, i64t(), {em.gv, buf, i64(size), i64(0)});
}

void IRGen::gen_simple_event(abi::EventType type, uint64_t id,
                             std::vector<llvm::Value *> extra) {
  uint32_t size = sizeof(abi::EventHeader) + 8 * extra.size();
  auto *buf = entry_alloca(size, "event");
  b_.CreateAlignedStore(i64(static_cast<uint64_t>(type)), buf, llvm::Align(8));
  b_.CreateAlignedStore(i64(id), byte_ptr(buf, 8), llvm::Align(8));
  for (size_t i = 0; i < extra.size(); i++)
    b_.CreateAlignedStore(extra[i], byte_ptr(buf, 16 + 8 * i), llvm::Align(8));
  emit_event(buf, size);
}

void IRGen::gen_format_event(abi::EventType type,
                             std::vector<runtime::FormatSpec> &table, Call &c) {
  runtime::FormatSpec spec =
      located_format(c.loc, static_cast<String *>(c.args[0])->value);
  // Evaluate first: an argument may itself use the scratch area.
  std::vector<Val> vals;
  std::vector<Type> types;
  uint32_t offset = 0;
  for (size_t i = 1; i < c.args.size(); i++) {
    // Stored as its storage type (integers widened to 64 bits), printed as
    // its own type (a probe id prints as the probe's name).
    const Type &orig = c.args[i]->type;
    Type t = storage_type(orig);
    if (t.is_int() || t.kind == TypeKind::Boolean)
      t = make_int(8, t.is_int() ? t.is_signed : false);
    if (orig.is_enum())
      t.name = orig.name; // printed by name where %s asks
    vals.push_back(gen(c.args[i]));
    uint32_t align = std::min<uint32_t>(8, type_alignment(t));
    offset = (offset + align - 1) / align * align;
    runtime::ValueType::Field f;
    f.offset = offset;
    // A bool stays a bool (8 bytes stored): %s prints "true", %d prints 1.
    f.type = to_value_type(orig.is_int() ? t : orig, &ast_.c_types.enums);
    f.type.size = t.size;
    spec.args.push_back(f);
    types.push_back(t);
    offset += t.size;
  }
  uint64_t id = table.size();
  table.push_back(spec);
  uint32_t size = sizeof(abi::EventHeader) + (offset + 7) / 8 * 8;
  auto *buf = scratch(size);
  b_.CreateAlignedStore(i64(static_cast<uint64_t>(type)), buf, llvm::Align(8));
  b_.CreateAlignedStore(i64(id), byte_ptr(buf, 8), llvm::Align(8));
  for (size_t i = 0; i < vals.size(); i++)
    store_value(byte_ptr(buf, 16 + spec.args[i].offset), types[i], vals[i],
                c.args[i + 1]->type);
  emit_event(buf, size);
}

Val IRGen::gen_print(Call &c) {
  auto *m = dyn_cast<Map>(c.args[0]);
  if (m && !m->subscripted) {
    MapGen &mg = map_of(m->name);
    llvm::Value *top = c.args.size() > 1 ? gen_scalar(c.args[1]) : i64(0);
    llvm::Value *div = c.args.size() > 2 ? gen_scalar(c.args[2]) : i64(0);
    gen_simple_event(abi::EventType::PrintMap, mg.id, {top, div});
    return {i64(0), false};
  }
  const Type &orig = c.args[0]->type;
  Type t = storage_type(orig);
  if (t.is_int())
    t = make_int(8, t.is_signed);
  if (orig.is_enum())
    t.name = orig.name;
  Val v = gen(c.args[0]);
  uint64_t id = bundle_.print_types.size();
  runtime::ValueType vt =
      to_value_type(orig.is_int() ? t : orig, &ast_.c_types.enums);
  vt.size = t.size;
  bundle_.print_types.push_back(vt);
  uint32_t size =
      sizeof(abi::EventHeader) + (std::max<uint32_t>(t.size, 1) + 7) / 8 * 8;
  auto *buf = scratch(size);
  b_.CreateAlignedStore(i64(static_cast<uint64_t>(abi::EventType::PrintValue)),
                        buf, llvm::Align(8));
  b_.CreateAlignedStore(i64(id), byte_ptr(buf, 8), llvm::Align(8));
  store_value(byte_ptr(buf, 16), t, v, c.args[0]->type);
  emit_event(buf, size);
  return {i64(0), false};
}

Val IRGen::gen_join(Call &c) {
  // join(argv [, sep]): reads up to kJoinMaxArgs strings through the array
  // of pointers at argv, stopping at a NULL pointer.
  const uint32_t strlen_max = ast_.config.max_strlen;
  std::string sep = " ";
  if (c.args.size() > 1)
    sep = static_cast<String *>(c.args[1])->value;
  uint64_t id = bundle_.join_separators.size();
  bundle_.join_separators.push_back(sep);
  auto *argv = gen_scalar(c.args[0]);
  uint32_t size = sizeof(abi::EventHeader) + 8 + abi::kJoinMaxArgs * strlen_max;
  auto *buf = scratch(size);
  b_.CreateAlignedStore(i64(static_cast<uint64_t>(abi::EventType::Join)), buf,
                        llvm::Align(8));
  b_.CreateAlignedStore(i64(id), byte_ptr(buf, 8), llvm::Align(8));
  auto *count = entry_alloca(8, "join.n");
  b_.CreateAlignedStore(i64(0), count, llvm::Align(8));
  auto *ptr = entry_alloca(8, "join.p");
  auto *done = block("join.done");
  for (uint32_t i = 0; i < abi::kJoinMaxArgs; i++) {
    auto *addr = b_.CreateAdd(argv, i64(8 * i));
    probe_read(ptr, 8, b_.CreateIntToPtr(addr, ptrt()));
    auto *p = b_.CreateAlignedLoad(i64t(), ptr, llvm::Align(8));
    auto *next = block("join.arg");
    b_.CreateCondBr(b_.CreateICmpEQ(p, i64(0)), done, next);
    b_.SetInsertPoint(next);
    auto *dst = byte_ptr(buf, 24 + i * strlen_max);
    b_.CreateStore(b_.getInt8(0), dst);
    helper(BPF_FUNC_probe_read_user_str, i64t(),
           {dst, i64(strlen_max), b_.CreateIntToPtr(p, ptrt())});
    b_.CreateAlignedStore(i64(i + 1), count, llvm::Align(8));
  }
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  b_.CreateAlignedStore(b_.CreateAlignedLoad(i64t(), count, llvm::Align(8)),
                        byte_ptr(buf, 16), llvm::Align(8));
  emit_event(buf, size);
  return {i64(0), false};
}

} // namespace ubtrace::codegen
