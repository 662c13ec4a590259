// A snapshot of a process's address space: its mappings (from
// /proc/PID/maps) and the identity of each mapped file, taken while the
// process lives, so that addresses it produced can be turned into
// file + offset (and then symbols) after it has exited.
//
// The arithmetic, for an address A inside mapping M of file F:
//   file offset = A - M.start + M.offset
//   vaddr       = the link-time address F's loadable segments give that
//                 file offset (ElfFile::offset_to_vaddr)
//   load bias   = A - vaddr (0 for a non-PIE executable)
// and the other way, a probe at file offset O runs at M.start + O -
// M.offset for the executable mapping M of F that covers O.
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/file_identity.h"
#include "runtime/symbols/proc_maps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::symbols {

class AddressSpace {
public:
  // Reads /proc/PID/maps and stats every mapped file.
  static Result<AddressSpace> snapshot(pid_t pid);
  // From mappings read elsewhere; file identities are taken from the
  // current files when they still carry the mapped inode.
  // `root`: where the process's paths are from here (see root()).
  static AddressSpace from_mappings(pid_t pid, std::vector<Mapping> mappings,
                                    const std::string &root = "");

  pid_t pid() const { return pid_; }
  // Sorted by start address.
  const std::vector<Mapping> &mappings() const { return mappings_; }
  // /proc/PID/exe at the time of the snapshot ("" when unreadable).
  const std::string &executable() const { return exe_; }
  // "/proc/PID/root" for a process whose root is not ours (a container, a
  // chroot), else "".
  const std::string &root() const { return root_; }
  // Where the file of `m` opens from here. The kernel writes a mapping's
  // path as the reader sees it where it can (a chroot's files have our
  // paths); a file in another mount namespace has the path its process
  // sees, found under root().
  std::string open_path(const Mapping &m) const;

  const Mapping *mapping_at(uint64_t addr) const;
  // The identity the file of `m` had at snapshot time, if it was stat-able
  // and still the mapped inode.
  const FileIdentity *identity_of(const Mapping &m) const;

  // The run-time address of file offset `file_offset` of `path` (matched by
  // device and inode, else by path), if an executable mapping covers it;
  // any mapping when no executable one does.
  std::optional<uint64_t> runtime_address(const std::string &path,
                                          uint64_t file_offset) const;
  // runtime = bias + vaddr for `file` (the ELF of `path`), from a mapping
  // that holds the start of one of its loadable segments.
  std::optional<uint64_t> load_bias(const std::string &path,
                                    const class ElfFile &file) const;
  // Every mapping of `path` (by device and inode, else by path).
  std::vector<const Mapping *> mappings_of(const std::string &path) const;

private:
  pid_t pid_ = 0;
  std::string root_;
  std::vector<Mapping> mappings_;
  std::vector<bool> under_root_; // per mapping: found under root_
  std::vector<std::optional<FileIdentity>> identities_; // per mapping
  std::string exe_;
};

} // namespace ubtrace::runtime::symbols
