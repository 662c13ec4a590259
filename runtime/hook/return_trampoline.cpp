#include "runtime/hook/return_trampoline.h"

#include "runtime/hook/code_buffer.h"
#include "runtime/hook/code_memory.h"
#include "runtime/hook/site.h"
#include "runtime/hook/trampoline.h"
#include "runtime/hook/trap_bytes.h"
#include "runtime/hook/unwind_info.h"

#include <vector>

namespace ubtrace::runtime::hook {

ReturnCode g_return_code;

namespace {

// Leading padding: the first launch code, and the unwinder looks up the FDE
// of a return address minus one, so the first stub's row starts one byte
// before it.
constexpr uint32_t kLeadPad = 16;
static_assert(kLeadPad >= kLaunchBytes + 1);
constexpr uint32_t kStubBytes = 2 * kShadowDepth * kStubStride;

void emit_common(CodeBuffer &c, const CpuFeatures &cpu, bool save_vectors) {
  // rsp = (caller's rsp after the return) - 8, [rsp] = k.
  emit_frame_save(c, cpu, 0, 8);
  if (save_vectors)
    emit_vector_save(c, cpu, VectorSaveKind::ReturnValues);
  x86::cld(c);
  x86::and_rsp_imm8(c, -16);
  x86::mov(c, Reg::Rdi, Reg::Rbx);
  // k sits above the registers and their tail room.
  x86::load_from(c, Reg::Rsi, Reg::Rbx, kPtRegsSize + kRegsTailRoom);
  x86::mov_imm32(c, Reg::Rdx, save_vectors ? 1 : 0);
  x86::mov_imm64(c, Reg::Rax,
                 reinterpret_cast<uint64_t>(&ubt_hook_dispatch_return));
  x86::call(c, Reg::Rax);
  x86::store_to(c, Reg::Rbx, kPtRegsSize + kRegsTailRoom,
                Reg::Rax); // the real address
  if (save_vectors)
    emit_vector_restore(c, cpu, VectorSaveKind::ReturnValues);
  emit_frame_restore(c, cpu, 0);
  x86::ret(c);
}

// Calls the displaced instructions the entry trampoline left below the
// entry rsp (return_stubs.h), in place of the real return address.
void emit_launch(CodeBuffer &c) {
  x86::lea_rsp(c, 8);
  x86::call_rsp(c, static_cast<int8_t>(-(kLaunchBodyBelowRsp + 8)));
}

} // namespace

Result<void> init_return_code(const CpuFeatures &cpu, const MemoryMap &map) {
  if (g_return_code.stubs)
    return {};
  // Measure the common parts, then place everything in one block.
  CodeBuffer probe(0);
  emit_common(probe, cpu, true);
  emit_common(probe, cpu, false);
  if (!probe.ok())
    return make_error("return trampoline does not fit its buffer");
  CodeRequest req;
  req.size = kLeadPad + kStubBytes + static_cast<uint32_t>(probe.size()) + 64;
  Result<uint64_t> block = allocate_code(req, map);
  if (!block)
    return std::move(block).take_error();

  uint64_t stubs = *block + kLeadPad;
  uint64_t common_at = stubs + kStubBytes;
  CodeBuffer common(common_at);
  uint64_t common_save = common.here();
  emit_common(common, cpu, true);
  common.align(16, kInt3);
  uint64_t common_plain = common.here();
  emit_common(common, cpu, false);
  if (!common.ok())
    return make_error("return trampoline does not fit its buffer");

  std::vector<uint8_t> image(kLeadPad + kStubBytes, kInt3);
  for (uint32_t set = 0; set < 2; ++set) {
    for (uint32_t k = 0; k < kShadowDepth; ++k) {
      uint64_t at = stubs + (set * kShadowDepth + k) * kStubStride;
      CodeBuffer launch(launch_of(at));
      emit_launch(launch);
      CodeBuffer stub(at);
      x86::push_imm(stub, static_cast<int32_t>(0x100)); // force imm32 form
      stub.patch_u32(1, k);
      x86::jmp(stub, set == 0 ? common_save : common_plain);
      if (!launch.ok() || launch.size() != kLaunchBytes || !stub.ok() ||
          stub.size() + kLaunchBytes > kStubStride)
        return make_error("return stub and launch code do not fit a cell");
      for (size_t i = 0; i < launch.size(); ++i)
        image[kLeadPad + (at - stubs) - kLaunchBytes + i] = launch.data()[i];
      for (size_t i = 0; i < stub.size(); ++i)
        image[kLeadPad + (at - stubs) + i] = stub.data()[i];
    }
  }
  image.insert(image.end(), common.data(), common.data() + common.size());
  Result<void> written = write_code(*block, image.data(), image.size());
  if (!written)
    return written;

  g_return_code.stubs = stubs;
  g_return_code.stubs_end = stubs + kStubBytes;
  g_return_code.common[0] = common_save;
  g_return_code.common[1] = common_plain;
  return register_return_unwind_info(stubs, kStubBytes);
}

} // namespace ubtrace::runtime::hook
