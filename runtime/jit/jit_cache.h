// Compiled programs by what determines their code: the instructions, the
// map constants, and the helper addresses they call. The CLI compiles a
// program once however many probes run it (and again only if it is bound
// to other maps or helpers).
#pragma once

#include "runtime/jit/orc_jit.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace ubtrace::jit {

class JitCache {
public:
  explicit JitCache(JitEngine &engine) : engine_(engine) {}

  // The cached program, or a fresh compile (which the cache keeps). Safe to
  // call from several threads; a program is compiled at most once.
  Result<std::shared_ptr<JittedProgram>>
  get(const vm::VerifiedProgram &program, std::span<const vm::MapBinding> maps,
      const vm::HelperImpls &helpers);

  size_t size() const;
  uint64_t hits() const;
  uint64_t misses() const;
  void clear();

private:
  JitEngine &engine_;
  mutable std::mutex lock_;
  std::unordered_map<std::string, std::shared_ptr<JittedProgram>> programs_;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

// The cache key: the bytes every input to the compile contributes.
std::string cache_key(const vm::VerifiedProgram &program,
                      std::span<const vm::MapBinding> maps,
                      const vm::HelperImpls &helpers);

} // namespace ubtrace::jit
