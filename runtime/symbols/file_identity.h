// Which file a path names right now (device, inode, size, modification
// time), to key caches and to notice a binary replaced on disk.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <string>

namespace ubtrace::runtime::symbols {

struct FileIdentity {
  uint32_t dev_major = 0;
  uint32_t dev_minor = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;

  bool operator==(const FileIdentity &) const = default;
  // The same file object (what /proc/PID/maps can tell: device and inode).
  bool same_inode(uint32_t major, uint32_t minor, uint64_t ino) const {
    return inode == ino && dev_major == major && dev_minor == minor;
  }
};

Result<FileIdentity> identify_file(const std::string &path);

} // namespace ubtrace::runtime::symbols
