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
//
// Processes nobody snapshotted (children the traced process forked, which
// often are gone by the time their addresses print) are snapshotted at
// their first lookup if they still live and are still the traced program
// (add_lineage's test: a child that exec'd another program, or a new
// process under a reused pid, is not); otherwise their addresses resolve
// through the traced process's snapshot, which a fork copies. Each process
// keeps what its snapshots showed over time (the traced process's as it
// loads and unloads libraries): its first snapshot, then each later one's
// file mappings that none before had. An address resolves through the
// newest that maps it to a file, so addresses of a library unloaded since,
// or loaded at another place each time, still print.
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/address_space.h"
#include "runtime/symbols/binary_cache.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <sys/types.h>
#include <tuple>
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
  // The mapping holding the address: [map_start, map_end) from map_offset.
  uint64_t map_start = 0, map_end = 0, map_offset = 0;
  std::optional<uint64_t> vaddr; // when the ELF maps that offset
  std::vector<uint8_t> build_id;
};

class Symbolizer {
public:
  explicit Symbolizer(SymbolizerOptions options = {},
                      std::shared_ptr<BinaryCache> cache = nullptr);

  // Records a snapshot of `pid`: what it maps that earlier ones did not.
  void add_snapshot(AddressSpace snapshot);
  // Processes without a snapshot of their own resolve through `parent`'s,
  // unless a snapshot taken at their first lookup passes `own`. With
  // several parents (one per traced process), a process resolves through
  // the one it descends from, as /proc tells at its first lookup, else
  // through the first.
  void add_lineage(pid_t parent, std::function<bool(const AddressSpace &)> own);
  // Takes and records a snapshot of a live process (as often as wanted:
  // an unchanged one adds nothing).
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
  // Whether `pid`'s snapshots map `addr` to a file (no file is read).
  bool maps_file(pid_t pid, uint64_t addr);

  const SymbolizerOptions &options() const { return options_; }
  void set_options(const SymbolizerOptions &options) { options_ = options; }

private:
  std::vector<SymbolizedFrame> frames_for(const BinaryInfo &binary,
                                          const std::string &module,
                                          uint64_t vaddr) const;
  using Space = std::shared_ptr<const AddressSpace>;
  // add_snapshot's work, under mutex_.
  void record(AddressSpace snapshot);
  // The snapshots `pid` resolves through, newest first (`addr`: the
  // address asked for, which picks the lineage parent of a process gone).
  std::vector<Space> spaces_of(pid_t pid, uint64_t addr);
  // The newest file mapping of `addr` among them.
  std::pair<Space, const Mapping *> file_mapping(pid_t pid, uint64_t addr);

  SymbolizerOptions options_;
  std::shared_ptr<BinaryCache> cache_;
  mutable std::mutex mutex_;
  // Oldest first: the first snapshot, then the new file mappings of each
  // later one. Shared so that one read by another thread stays alive.
  std::map<pid_t, std::vector<Space>> spaces_;
  // The file mappings each process's list holds: (start, end, offset,
  // inode).
  std::map<pid_t, std::set<std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>>>
      seen_;
  // Processes that resolve through the lineage parent's snapshots.
  std::map<pid_t, pid_t> through_parent_;
  std::vector<pid_t> lineage_parents_;
  // The lineage parent `pid` descends from. When its /proc is gone (a
  // child that ended): the first parent whose snapshots map `addr` to a
  // file (a fork maps what its parent did, at the same addresses; another
  // program's files are elsewhere), else the first.
  pid_t lineage_parent_of(pid_t pid, uint64_t addr) const;
  std::function<bool(const AddressSpace &)> own_;
};

} // namespace ubtrace::runtime::symbols
