#include "runtime/inject/inject_steps.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

struct Hook {
  int step = 0;
  bool pause = false;
  int trace_fd = -1;
};

Hook read_hook() {
  Hook hook;
  if (const char *fd = std::getenv("UBTRACE_TEST_INJECT_TRACE_FD"))
    hook.trace_fd = std::atoi(fd);
  const char *text = std::getenv("UBTRACE_TEST_INJECT_STOP");
  if (!text || !*text)
    return hook;
  char *end = nullptr;
  long step = std::strtol(text, &end, 10);
  if (step < 1 || step > kInjectSteps)
    return hook;
  hook.step = static_cast<int>(step);
  hook.pause = end && std::strcmp(end, ":pause") == 0;
  return hook;
}

} // namespace

std::string_view inject_step_name(InjectStep step) {
  switch (step) {
  case InjectStep::Located:
    return "located";
  case InjectStep::Seized:
    return "seized";
  case InjectStep::Stopped:
    return "stopped";
  case InjectStep::Chosen:
    return "chosen";
  case InjectStep::CaveWritten:
    return "cave-written";
  case InjectStep::FrameWritten:
    return "frame-written";
  case InjectStep::Committed:
    return "committed";
  case InjectStep::Detached:
    return "detached";
  case InjectStep::RegionSeen:
    return "region-seen";
  case InjectStep::ResultSeen:
    return "result-seen";
  case InjectStep::Acked:
    return "acked";
  }
  return "?";
}

void reached(InjectStep step) {
  static const Hook hook = read_hook();
  if (hook.trace_fd >= 0) {
    char byte = static_cast<char>(step);
    (void)!::write(hook.trace_fd, &byte, 1);
  }
  if (hook.step != static_cast<int>(step))
    return;
  ::kill(::getpid(), hook.pause ? SIGSTOP : SIGKILL);
}

std::optional<uint64_t> test_region_address() {
  const char *text = std::getenv("UBTRACE_TEST_INJECT_REGION");
  if (!text || !*text)
    return std::nullopt;
  return std::strtoull(text, nullptr, 16);
}

} // namespace ubtrace::runtime::inject
