#include "runtime/inject/thread_stack.h"

#include "runtime/inject/hex.h"

namespace ubtrace::runtime::inject {
namespace {

Error unbounded(const std::string &why) {
  return make_error("runs on a stack the injector cannot bound (" + why + ")");
}

} // namespace

Result<void> check_stack_room(const std::vector<MappedRegion> &maps,
                              const user_regs_struct &regs,
                              uint64_t frame_low) {
  const uint64_t rsp = regs.rsp;
  if (rsp < 8 || frame_low >= rsp)
    return unbounded("rsp " + hex(rsp));
  const MappedRegion *stack = find_region(maps, rsp - 8);
  if (!stack || !stack->readable || !stack->writable)
    return unbounded("rsp " + hex(rsp) + " is not in writable memory");
  if (stack->path == "[stack]") {
    if (frame_low < stack->start)
      return unbounded("the main stack is mapped down to " + hex(stack->start) +
                       " only");
    return {};
  }
  if (!stack->path.empty())
    return unbounded("rsp " + hex(rsp) + " is in " + stack->path);
  if (regs.fs_base < rsp || !stack->contains(regs.fs_base))
    return unbounded("rsp " + hex(rsp) +
                     " is in an anonymous mapping that does not hold the "
                     "thread's TCB");
  const MappedRegion *guard = find_region(maps, stack->start - 1);
  if (!guard || guard->end != stack->start || guard->readable ||
      guard->writable || guard->executable)
    return unbounded("no guard page under the mapping at " + hex(stack->start));
  if (frame_low < stack->start + kStackMargin)
    return make_error("has too little stack left (" +
                      std::to_string(rsp - stack->start) + " bytes)");
  return {};
}

} // namespace ubtrace::runtime::inject
