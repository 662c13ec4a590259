#include "runtime/jit/jit_cache.h"

#include <cstring>

namespace ubtrace::jit {
namespace {

template <class T> void append(std::string &key, const T &v) {
  key.append(reinterpret_cast<const char *>(&v), sizeof(T));
}

} // namespace

std::string cache_key(const vm::VerifiedProgram &program,
                      std::span<const vm::MapBinding> maps,
                      const vm::HelperImpls &helpers) {
  std::string key;
  key.reserve(program.insns.size() * sizeof(vm::Insn) + 64);
  append(key, uint64_t(program.insns.size()));
  key.append(reinterpret_cast<const char *>(program.insns.data()),
             program.insns.size() * sizeof(vm::Insn));
  for (uint32_t index : program.maps_used) {
    const vm::MapBinding &m =
        index < maps.size() ? maps[index] : vm::MapBinding{};
    append(key, index);
    append(key, m.handle);
    append(key, reinterpret_cast<uint64_t>(m.value_base));
    append(key, reinterpret_cast<uint64_t>(m.for_each));
  }
  for (const vm::HelperCallSite &site : program.helper_calls) {
    append(key, site.helper);
    append(key, reinterpret_cast<uint64_t>(helpers.get(site.helper)));
    if (site.map >= 0 && size_t(site.map) < maps.size())
      append(key, reinterpret_cast<uint64_t>(maps[size_t(site.map)].for_each));
  }
  return key;
}

Result<std::shared_ptr<JittedProgram>>
JitCache::get(const vm::VerifiedProgram &program,
              std::span<const vm::MapBinding> maps,
              const vm::HelperImpls &helpers) {
  std::string key = cache_key(program, maps, helpers);
  // Compiling under the lock keeps "at most once" simple; compiles are
  // milliseconds and happen at startup.
  std::lock_guard<std::mutex> guard(lock_);
  if (auto it = programs_.find(key); it != programs_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  auto compiled = engine_.compile(program, maps, helpers);
  if (!compiled)
    return compiled;
  programs_.emplace(std::move(key), *compiled);
  return compiled;
}

size_t JitCache::size() const {
  std::lock_guard<std::mutex> guard(lock_);
  return programs_.size();
}

uint64_t JitCache::hits() const {
  std::lock_guard<std::mutex> guard(lock_);
  return hits_;
}

uint64_t JitCache::misses() const {
  std::lock_guard<std::mutex> guard(lock_);
  return misses_;
}

void JitCache::clear() {
  std::lock_guard<std::mutex> guard(lock_);
  programs_.clear();
}

} // namespace ubtrace::jit
