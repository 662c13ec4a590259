// What the verifier knows about helpers: for each allowed helper id, the kind
// of each argument and of the result. The caller decides which helpers a
// program may call by the table it passes; standard_helpers() describes the
// kernel helpers ubtrace implements (ids from <linux/bpf.h>).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ubtrace::vm {

enum class ArgKind : uint8_t {
  None,              // argument not used; the register may be uninitialised
  Anything,          // any initialised value
  Scalar,            // a number (flags, ids); pointers are rejected
  MapPtr,            // a key/value map reference (hash, array, lru, percpu)
  RingbufMapPtr,     // a BPF_MAP_TYPE_RINGBUF reference
  PerfEventMapPtr,   // a BPF_MAP_TYPE_PERF_EVENT_ARRAY reference
  StackTraceMapPtr,  // a BPF_MAP_TYPE_STACK_TRACE reference
  MapKey,            // key_size readable bytes of the map in an earlier arg
  MapValue,          // value_size readable bytes of that map
  ReadableMem,       // readable bytes; the size is the next argument
  ReadableMemOrNull, // the same, or NULL (then the size may be 0)
  WritableMem,       // bytes the helper fills (may be uninitialised);
                     // the size is the next argument
  Size,              // size > 0 of the previous memory argument
  SizeOrZero,        // size >= 0 of the previous memory argument
  ConstAllocSize,    // a constant size of memory the helper allocates
  ConstString,       // a readable NUL-terminated string (format strings)
  Ctx,               // the program's context pointer, unmodified
  Callback,          // a callback (ld_imm64 BPF_PSEUDO_FUNC)
  CallbackCtx,       // any value, handed to the callback unchanged
  RingbufMem,        // memory from ringbuf_reserve; the call releases it
};

enum class RetKind : uint8_t {
  Integer,          // a number
  MapValueOrNull,   // value of the map in the first arg, or NULL
  RingbufMemOrNull, // ConstAllocSize bytes to release later, or NULL
};

// How the VM calls a helper's callback, and what the callback receives.
enum class CallbackKind : uint8_t {
  None,
  Loop,           // bpf_loop: cb(u32 index, void *ctx)
  ForEachMapElem, // bpf_for_each_map_elem: cb(map, key, value, ctx)
};

struct HelperProto {
  int32_t id = 0;
  std::string name; // without the bpf_ prefix, as in <linux/bpf.h>
  RetKind ret = RetKind::Integer;
  std::array<ArgKind, 5> args{};
  CallbackKind callback = CallbackKind::None;
};

class HelperTable {
public:
  HelperTable() = default;
  explicit HelperTable(std::vector<HelperProto> protos);

  void add(HelperProto proto); // replaces a proto with the same id
  const HelperProto *find(int32_t id) const;
  const std::vector<HelperProto> &protos() const { return protos_; }

private:
  std::vector<HelperProto> protos_;
  std::vector<int32_t> index_by_id_; // -1 where no proto
};

// The kernel helpers ubtrace's runtime provides, with kernel semantics.
const HelperTable &standard_helpers();

} // namespace ubtrace::vm
