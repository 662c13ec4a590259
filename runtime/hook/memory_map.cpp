#include "runtime/hook/memory_map.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <string>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace ubtrace::runtime::hook {
namespace {

bool parse_hex(const char *&p, const char *end, uint64_t &out) {
  uint64_t v = 0;
  const char *start = p;
  for (; p < end; ++p) {
    char c = *p;
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else
      break;
    v = (v << 4) | static_cast<uint64_t>(digit);
  }
  out = v;
  return p != start;
}

} // namespace

namespace {
std::atomic<int> g_procfs{-1};
} // namespace

void MemoryMap::use_procfs(int dirfd) {
  g_procfs.store(dirfd, std::memory_order_release);
}

int MemoryMap::open_self(const char *relative, int flags) {
  std::string path = std::string("self/") + relative;
  int procfs = g_procfs.load(std::memory_order_acquire);
  int fd = procfs >= 0 ? openat(procfs, path.c_str(), flags | O_CLOEXEC) : -1;
  // The program may have closed that descriptor and reused its number: only
  // a procfs file is ours.
  struct statfs fs{};
  if (fd >= 0 && (fstatfs(fd, &fs) != 0 || fs.f_type != PROC_SUPER_MAGIC)) {
    close(fd);
    fd = -1;
  }
  if (fd < 0)
    fd = open(("/proc/" + path).c_str(), flags | O_CLOEXEC);
  return fd;
}

Result<MemoryMap> MemoryMap::read_self() {
  int fd = open_self("maps", O_RDONLY);
  if (fd < 0)
    return make_error(std::string("cannot open /proc/self/maps: ") +
                      strerror(errno));
  std::string text;
  char buf[16384];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return make_error(std::string("cannot read /proc/self/maps: ") +
                        strerror(err));
    }
    if (n == 0)
      break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return parse(text.data(), text.size());
}

Result<MemoryMap> MemoryMap::parse(const char *text, size_t size) {
  MemoryMap map;
  const char *p = text;
  const char *end = text + size;
  while (p < end) {
    const char *eol = static_cast<const char *>(memchr(p, '\n', end - p));
    if (!eol)
      eol = end;
    MemoryRegion r;
    const char *q = p;
    if (!parse_hex(q, eol, r.start) || q >= eol || *q != '-')
      return make_error("malformed line in /proc/self/maps");
    ++q;
    if (!parse_hex(q, eol, r.end) || q + 4 >= eol || *q != ' ')
      return make_error("malformed line in /proc/self/maps");
    ++q;
    if (q[0] == 'r')
      r.prot |= PROT_READ;
    if (q[1] == 'w')
      r.prot |= PROT_WRITE;
    if (q[2] == 'x')
      r.prot |= PROT_EXEC;
    map.regions_.push_back(r);
    p = eol + 1;
  }
  std::sort(map.regions_.begin(), map.regions_.end(),
            [](const MemoryRegion &a, const MemoryRegion &b) {
              return a.start < b.start;
            });
  return map;
}

const MemoryRegion *MemoryMap::find(uint64_t addr) const {
  auto it = std::upper_bound(
      regions_.begin(), regions_.end(), addr,
      [](uint64_t a, const MemoryRegion &r) { return a < r.start; });
  if (it == regions_.begin())
    return nullptr;
  --it;
  return addr < it->end ? &*it : nullptr;
}

std::vector<AddressRange> MemoryMap::free_ranges(uint64_t lo,
                                                 uint64_t hi) const {
  std::vector<AddressRange> out;
  lo = std::max(lo, kLowestMappable);
  hi = std::min(hi, kUserSpaceEnd);
  uint64_t cursor = lo;
  for (const MemoryRegion &r : regions_) {
    if (r.end <= cursor)
      continue;
    if (r.start >= hi)
      break;
    if (r.start > cursor)
      out.push_back({cursor, r.start});
    cursor = std::max(cursor, r.end);
    if (cursor >= hi)
      break;
  }
  if (cursor < hi)
    out.push_back({cursor, hi});
  return out;
}

} // namespace ubtrace::runtime::hook
