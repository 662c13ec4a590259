#include "runtime/inject/rseq_check.h"

#include <cstdint>
#include <sys/ptrace.h>

namespace ubtrace::runtime::inject {
namespace {

constexpr long kGetRseqConfiguration = 0x420f;

struct RseqConfiguration {
  uint64_t rseq_abi_pointer;
  uint32_t rseq_abi_size, signature, flags, pad;
};

struct RseqCriticalSection {
  uint32_t version, flags;
  uint64_t start_ip, post_commit_offset, abort_ip;
};

constexpr uint64_t kRseqCsField =
    8; // struct rseq: cpu_id_start, cpu_id, rseq_cs

} // namespace

std::optional<std::string>
in_rseq_critical_section(pid_t tid, const user_regs_struct &regs,
                         const RemoteMemory &memory) {
  RseqConfiguration config{};
  if (::ptrace(static_cast<__ptrace_request>(kGetRseqConfiguration), tid,
               reinterpret_cast<void *>(sizeof config), &config) <= 0 ||
      config.rseq_abi_pointer == 0)
    return std::nullopt;
  auto cs = memory.read_value<uint64_t>(config.rseq_abi_pointer + kRseqCsField);
  if (!cs || *cs == 0)
    return std::nullopt;
  auto section = memory.read_value<RseqCriticalSection>(*cs);
  if (!section)
    return "inside a restartable sequence (its descriptor cannot be read)";
  if (regs.rip >= section->start_ip &&
      regs.rip - section->start_ip < section->post_commit_offset)
    return std::string("inside a restartable sequence's critical section");
  return std::nullopt;
}

} // namespace ubtrace::runtime::inject
