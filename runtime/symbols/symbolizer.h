// Addresses of a traced process back to names: the address-space snapshot
// says which file (and file offset) an address belongs to, the file's ELF
// symbols say which function, DWARF optionally adds file:line and inlined
// frames. Snapshots are taken while the process lives (at attach time, and
// again when the CLI learns of new mappings); symbolisation works from
// them after it exits, as long as the files are still on disk.
//
// Frames follow bpftrace's stack output (v0.26): innermost inlined
// function first, marked `inlined`, the containing function last with its
// offset. An address no symbol covers yields no frame: the caller prints
// it in hex ("0x7f3a..."), as bpftrace does.
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/binary_cache.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::symbols {

struct SymbolizedFrame {
  std::string name;    // demangled when SymbolizerOptions::demangle
  uint64_t offset = 0; // address - function start (0 for inlined frames)
  std::string module;  // the mapped file (perf stack mode prints it)
  std::string file;    // source file: "" without DWARF or when disabled
  uint32_t line = 0;
  bool inlined = false;
};

struct SymbolizerOptions {
  bool demangle = true;      // bpftrace's config cpp_demangle (default on)
  bool source_lines = false; // DWARF file:line and inlined frames
};

// Where an address is in its file: for build_id stacks and for callers
// that symbolise elsewhere.
struct FileLocation {
  std::string path;
  uint64_t file_offset = 0;
  std::optional<uint64_t> vaddr; // when the ELF maps that offset
  std::vector<uint8_t> build_id;
};

class Symbolizer {
public:
  explicit Symbolizer(SymbolizerOptions options = {},
                      std::shared_ptr<BinaryCache> cache = nullptr);

  // Records a snapshot of `pid` (replacing an older one).
  void add_snapshot(AddressSpace snapshot);
  // Takes and records a snapshot of a live process.
  Result<void> snapshot(pid_t pid);
  bool has_snapshot(pid_t pid) const;

  // The frames for `addr` in process `pid`; a process without a snapshot
  // is snapshotted now if it still lives. Empty: unknown address.
  std::vector<SymbolizedFrame> symbolize(pid_t pid, uint64_t addr);
  // The frames for a link-time address of one file (no process needed:
  // non-PIE executables, or addresses already made file-relative).
  std::vector<SymbolizedFrame> symbolize_file_vaddr(const std::string &path,
                                                    uint64_t vaddr);
  std::optional<FileLocation> locate(pid_t pid, uint64_t addr);

  const SymbolizerOptions &options() const { return options_; }
  void set_options(const SymbolizerOptions &options) { options_ = options; }

private:
  std::vector<SymbolizedFrame> frames_for(const BinaryInfo &binary,
                                          const std::string &module,
                                          uint64_t vaddr) const;
  std::shared_ptr<const AddressSpace> space_of(pid_t pid);

  SymbolizerOptions options_;
  std::shared_ptr<BinaryCache> cache_;
  mutable std::mutex mutex_;
  // Shared so that a snapshot replaced while another thread symbolises
  // with it stays alive until that thread is done.
  std::map<pid_t, std::shared_ptr<const AddressSpace>> spaces_;
};

} // namespace ubtrace::runtime::symbols
