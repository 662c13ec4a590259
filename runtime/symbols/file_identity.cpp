#include "runtime/symbols/file_identity.h"

#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace ubtrace::runtime::symbols {

Result<FileIdentity> identify_file(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return make_error("cannot stat '" + path + "': " + std::strerror(errno));
  return FileIdentity{
      .dev_major = major(st.st_dev),
      .dev_minor = minor(st.st_dev),
      .inode = st.st_ino,
      .size = static_cast<uint64_t>(st.st_size),
      .mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec,
  };
}

} // namespace ubtrace::runtime::symbols
