#include "backends/output/snapshot_output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace ubtrace::output {

void SnapshotOutput::map(const PrintedMap &map) {
  if (!takes(map)) {
    text_.map(map);
    return;
  }
  last_[map.name] = map;
  if (to_file())
    write_file();
}

void SnapshotOutput::end() {
  if (to_file())
    write_file();
  else if (!last_.empty())
    out_ << render(kept());
  out_.flush();
}

std::vector<const PrintedMap *> SnapshotOutput::kept() const {
  std::vector<const PrintedMap *> maps;
  for (const auto &[name, map] : last_)
    maps.push_back(&map);
  return maps;
}

void SnapshotOutput::write_file() {
  std::string doc = render(kept());
  // Written whole next to the file, then renamed over it: a reader gets
  // the old document or the new one, never a part.
  std::string tmp = file_ + ".tmp";
  bool ok = false;
  {
    std::ofstream f(tmp, std::ios::trunc | std::ios::binary);
    f << doc;
    f.flush();
    ok = static_cast<bool>(f);
  }
  if (ok && std::rename(tmp.c_str(), file_.c_str()) == 0)
    return;
  int err = errno;
  std::remove(tmp.c_str());
  if (!write_failed_)
    text_.runtime_error("cannot write " + file_ + ": " + std::strerror(err),
                        {});
  write_failed_ = true;
}

} // namespace ubtrace::output
