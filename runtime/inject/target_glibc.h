// glibc as mapped in a target process: where its functions are (dlopen &
// co., read from the libc file's .dynsym plus the load address from
// /proc/PID/maps), which executable ranges belong to glibc (libc, the
// dynamic loader, libpthread and libdl of older releases), and two code
// addresses the injector uses: a `syscall` instruction and the sigreturn
// trampoline signal handlers return through.
//
// Files are opened as the target sees them (/proc/PID/root/PATH), checked
// against the inode in the maps; a libc replaced on disk since the target
// started is read through /proc/PID/map_files.
#pragma once

#include "runtime/inject/elf_dynsym.h"
#include "runtime/inject/proc_maps.h"
#include "runtime/inject/unique_fd.h"
#include "runtime/result.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::inject {

enum class GlibcPart : uint8_t { Libc, Loader, Libpthread, Libdl };

// One glibc object mapped in the target.
struct GlibcObject {
  GlibcPart part = GlibcPart::Libc;
  std::string path;  // as the target names it
  uint64_t bias = 0; // runtime address = link-time address + bias
  std::vector<std::pair<uint64_t, uint64_t>> text;  // executable [start, end)
  std::shared_ptr<const ElfDynamicSymbols> symbols; // null for the loader
  std::shared_ptr<const UniqueFd>
      file; // the file as mapped; null for the loader
};

// Which glibc object a mapped file is, by its name (libc.so.6,
// libc-2.31.so, ld-linux-x86-64.so.2, ...); nullopt for anything else.
std::optional<GlibcPart> classify_glibc_path(std::string_view path);

class TargetGlibc {
public:
  static Result<TargetGlibc> locate(pid_t pid);

  // The runtime address of the exported function `name` in libc, then in
  // libdl and libpthread (glibc < 2.34 keeps dlopen and pthread_create
  // there); nullopt if none of the mapped objects exports it.
  std::optional<uint64_t> function(std::string_view name) const;

  // Whether `address` is code of glibc.
  bool in_glibc_code(uint64_t address) const;
  // The exported names of the libc function holding `address` (empty when
  // it is not in an exported function, e.g. internal code).
  std::vector<std::string_view> libc_names_at(uint64_t address) const;
  // The same in whichever glibc object (libc, libpthread, libdl) holds it.
  std::vector<std::string_view> names_at(uint64_t address) const;
  // "libc.so.6+0x1234" style label for messages.
  std::string describe(uint64_t address) const;

  // A `syscall` (0f 05) instruction in libc's code.
  uint64_t syscall_instruction() const { return syscall_instruction_; }
  // The sigreturn trampoline (mov $15, %rax; syscall) signal handlers
  // return through, if found.
  std::optional<uint64_t> sigreturn_trampoline() const { return sigreturn_; }

  const GlibcObject &libc() const { return objects_.front(); }
  const std::vector<GlibcObject> &objects() const { return objects_; }

private:
  std::vector<GlibcObject> objects_; // libc first
  uint64_t syscall_instruction_ = 0;
  std::optional<uint64_t> sigreturn_;
};

} // namespace ubtrace::runtime::inject
