#include "backends/userspace/ifunc_placement.h"

#include "runtime/symbols/ifunc.h"

#include <fcntl.h>
#include <unistd.h>

namespace ubtrace::backends {

runtime::symbols::ResolvedProbe
place_ifunc(const runtime::symbols::ResolvedProbe &probe,
            const runtime::symbols::AddressSpace &space,
            runtime::symbols::BinaryCache &cache, std::string &why) {
  if (!probe.ifunc)
    return probe;
  auto binary = cache.get(probe.binary);
  if (!binary) {
    why = binary.error();
    return probe;
  }
  // The traced process's memory, read as its tracer may (-c: our child;
  // -p: we injected into it).
  int mem = ::open(("/proc/" + std::to_string(space.pid()) + "/mem").c_str(),
                   O_RDONLY | O_CLOEXEC);
  auto read = [mem](uint64_t address) -> std::optional<uint64_t> {
    uint64_t v = 0;
    if (mem < 0 ||
        ::pread(mem, &v, sizeof v, static_cast<off_t>(address)) != sizeof v)
      return std::nullopt;
    return v;
  };
  std::vector<std::string> names = {probe.function};
  names.insert(names.end(), probe.aliases.begin(), probe.aliases.end());
  auto impl = runtime::symbols::ifunc_implementation(
      **binary, names, probe.function_vaddr, space, read);
  if (mem >= 0)
    ::close(mem);
  if (!impl) {
    why = impl.error();
    return probe;
  }
  auto moved = runtime::symbols::at_implementation(**binary, probe, *impl);
  if (!moved) {
    why = moved.error();
    return probe;
  }
  return *moved;
}

std::string unplaced_ifunc_warning(
    const std::string &attach_point, pid_t pid,
    const std::vector<std::pair<std::string, std::string>> &unplaced) {
  std::string out = attach_point + ": ";
  const std::string where =
      " the implementation process " + std::to_string(pid) +
      " calls is unknown, so the probe is on the resolver, "
      "which runs once per process";
  if (unplaced.size() == 1)
    return out + unplaced[0].first + " is an IFUNC and" + where + " (" +
           unplaced[0].second + ")";
  out += std::to_string(unplaced.size()) +
         " IFUNCs stay on their resolvers, which run once "
         "per process (their implementations are unknown):";
  for (size_t i = 0; i < unplaced.size(); i++)
    out +=
        (i ? ", " : " ") + unplaced[i].first + " (" + unplaced[i].second + ")";
  return out;
}

} // namespace ubtrace::backends
