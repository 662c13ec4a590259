// The CLI's end of one agent session, driven message by message over the
// real agent protocol (runtime/agent/protocol.h) so a test can hook and
// unhook many times in one session: what backends/userspace/target.cpp
// does for `ubtrace -p PID`, minus USDT, libraries loaded later and
// wildcards. The agent library is injected for real (runtime/inject) into
// a real process; the probes run as native code compiled for that process
// (runtime/jit), as the CLI compiles them.
#pragma once

#include "backends/program_set.h"
#include "runtime/agent/protocol.h"
#include "runtime/bundle.h"
#include "runtime/maps/region.h"
#include "runtime/result.h"

#include <cstdint>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::session_test {

class AgentSession {
public:
  // Injects `agent_library` into `pid` (or finds it loaded) and starts a
  // session: the maps region, the native code and the programs of every
  // uprobe/uretprobe of `bundle`, whose attach points are resolved in the
  // process once. `region` and `programs` must outlive the session.
  static Result<AgentSession> open(pid_t pid, const std::string &agent_library,
                                   const runtime::Bundle &bundle,
                                   const backends::ProgramSet &programs,
                                   runtime::maps::Region &region);
  ~AgentSession();
  AgentSession(AgentSession &&other) noexcept;
  AgentSession &operator=(AgentSession &&) = delete;

  struct Hooked {
    size_t jumps = 0;
    size_t traps = 0;
  };
  // Hooks every probe, in the bundle's order.
  Result<Hooked> hook_all();
  // Removes every hook; the agent answers once no thread can enter them.
  Result<void> detach();
  // Hangs up: the agent ends the session (removes what is left, frees
  // the code, the programs and its mapping of the region).
  void close();

private:
  AgentSession() = default;
  Result<uint64_t> call(const agent::Message &m);
  Result<void> load_native(const runtime::Bundle &bundle,
                           const backends::ProgramSet &programs,
                           uint64_t cli_region_base,
                           uint64_t agent_region_base);

  int sock_ = -1;
  pid_t pid_ = 0;
  std::vector<agent::HookMsg> hooks_;              // one per resolved probe
  std::map<std::string, uint64_t> native_entries_; // section -> entry
};

} // namespace ubtrace::session_test
