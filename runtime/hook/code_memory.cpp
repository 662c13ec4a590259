#include "runtime/hook/code_memory.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace ubtrace::runtime::hook {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kChunkSize = 64 * 1024;

struct Chunk {
  uint64_t start;
  uint64_t end;
  std::vector<AddressRange> free; // ascending, disjoint
};

std::vector<Chunk> &chunks() {
  // Installer-side only, under its lock; never destroyed (the agent's
  // thread may install while exit() runs the static destructors).
  static auto *all = new std::vector<Chunk>;
  return *all;
}
uint64_t g_mapped_bytes = 0;

uint64_t page_down(uint64_t v) {
  return v & ~(kPage - 1);
}
uint64_t page_up(uint64_t v) {
  return (v + kPage - 1) & ~(kPage - 1);
}

// The lowest address x in [lo, hi - size] satisfying the request's
// constraint, or 0.
uint64_t first_fit_any(const CodeRequest &req, uint64_t lo, uint64_t hi) {
  if (hi < lo || hi - lo < req.size)
    return 0;
  if (req.constraint.mask == 0)
    return lo;
  std::optional<int64_t> rel =
      req.constraint.next_at_or_above(static_cast<int64_t>(lo - req.rel_base));
  if (!rel)
    return 0;
  uint64_t x = req.rel_base + static_cast<uint64_t>(*rel);
  return (x >= lo && x + req.size <= hi) ? x : 0;
}

// The highest such address, or 0.
uint64_t last_fit_any(const CodeRequest &req, uint64_t lo, uint64_t hi) {
  if (hi < lo || hi - lo < req.size)
    return 0;
  uint64_t top = hi - req.size;
  if (req.constraint.mask == 0)
    return top;
  std::optional<int64_t> rel =
      req.constraint.next_at_or_below(static_cast<int64_t>(top - req.rel_base));
  if (!rel)
    return 0;
  uint64_t x = req.rel_base + static_cast<uint64_t>(*rel);
  return (x >= lo && x <= top) ? x : 0;
}

// Branch predictors index and tag by the low address bits only: a
// trampoline placed a multiple of a large power of two away from the code
// it serves (what the nearest fit under a rel32 constraint on the high byte
// gives: exactly 0x06000000 past the function) shares branch-target entries
// with the traced loop, and every hit mispredicts (measured: a 5-byte leaf
// function's uprobe 21.5 ns at that distance, 14.7 ns 40 KiB further).
// Fits whose distance to the code is within kAliasWindow of a multiple of
// kAliasPeriod are passed over for the next one.
constexpr uint64_t kAliasPeriod = 1 << 20;
constexpr uint64_t kAliasWindow = 16 << 10;

bool aliases(const CodeRequest &req, uint64_t x) {
  if (req.near == 0)
    return false;
  uint64_t d = (x - req.near) & (kAliasPeriod - 1);
  return d < kAliasWindow || d > kAliasPeriod - kAliasWindow;
}

// Fits that do not alias, searching up (first) or down (last) from the
// nearest; a constraint on the low rel32 bytes spaces fits 64 KiB or more
// apart, so a few steps always leave the window.
uint64_t first_fit(const CodeRequest &req, uint64_t lo, uint64_t hi) {
  for (int step = 0; step < 64; ++step) {
    uint64_t x = first_fit_any(req, lo, hi);
    if (!x || !aliases(req, x))
      return x;
    lo = x + kAliasWindow;
  }
  return 0;
}

uint64_t last_fit(const CodeRequest &req, uint64_t lo, uint64_t hi) {
  for (int step = 0; step < 64; ++step) {
    uint64_t x = last_fit_any(req, lo, hi);
    if (!x || !aliases(req, x))
      return x;
    if (x < lo + kAliasWindow)
      return 0;
    hi = x - kAliasWindow + req.size;
  }
  return 0;
}

void carve(Chunk &chunk, uint64_t at, uint64_t size) {
  for (size_t i = 0; i < chunk.free.size(); ++i) {
    AddressRange r = chunk.free[i];
    if (at < r.start || at + size > r.end)
      continue;
    chunk.free.erase(chunk.free.begin() + i);
    if (at + size < r.end)
      chunk.free.insert(chunk.free.begin() + i, {at + size, r.end});
    if (r.start < at)
      chunk.free.insert(chunk.free.begin() + i, {r.start, at});
    return;
  }
}

uint64_t distance(uint64_t a, uint64_t b) {
  return a > b ? a - b : b - a;
}

// A fit in the chunks already mapped, nearest to the request's target.
uint64_t fit_in_chunks(const CodeRequest &req) {
  uint64_t best = 0;
  for (Chunk &chunk : chunks()) {
    for (const AddressRange &r : chunk.free) {
      uint64_t lo = std::max(r.start, req.lo);
      uint64_t hi = std::min(r.end, req.hi);
      uint64_t x = first_fit(req, lo, hi);
      if (x && (!best || distance(x, req.near) < distance(best, req.near)))
        best = x;
    }
  }
  return best;
}

Chunk *chunk_of(uint64_t address) {
  for (Chunk &chunk : chunks())
    if (address >= chunk.start && address < chunk.end)
      return &chunk;
  return nullptr;
}

Result<uint64_t> map_anywhere(uint32_t size) {
  uint64_t length = std::max(page_up(size), kChunkSize);
  void *p = mmap(nullptr, length, PROT_READ | PROT_EXEC,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return make_error(std::string("cannot map trampoline memory: ") +
                      strerror(errno));
  uint64_t start = reinterpret_cast<uint64_t>(p);
  chunks().push_back({start, start + length, {{start, start + length}}});
  g_mapped_bytes += length;
  carve(chunks().back(), start, size);
  return start;
}

} // namespace

Result<uint64_t> allocate_code(const CodeRequest &req, const MemoryMap &map) {
  if (req.near == 0)
    return map_anywhere(req.size);
  if (uint64_t x = fit_in_chunks(req)) {
    carve(*chunk_of(x), x, req.size);
    return x;
  }
  // Candidates in the free address ranges, nearest first.
  struct Candidate {
    uint64_t at;
    AddressRange range;
  };
  std::vector<Candidate> candidates;
  for (AddressRange r : map.free_ranges(req.lo, req.hi)) {
    r.start = page_up(r.start);
    r.end = page_down(r.end);
    if (r.end <= r.start)
      continue;
    // The nearest fits above and below the target, within this range.
    if (req.near <= r.start) {
      if (uint64_t x = first_fit(req, r.start, r.end))
        candidates.push_back({x, r});
    } else if (req.near >= r.end) {
      if (uint64_t x = last_fit(req, r.start, r.end))
        candidates.push_back({x, r});
    } else {
      if (uint64_t x = first_fit(req, req.near, r.end))
        candidates.push_back({x, r});
      if (uint64_t x =
              last_fit(req, r.start, std::min(r.end, req.near + req.size)))
        candidates.push_back({x, r});
    }
  }
  std::sort(candidates.begin(), candidates.end(),
            [&](const Candidate &a, const Candidate &b) {
              return distance(a.at, req.near) < distance(b.at, req.near);
            });
  for (const Candidate &c : candidates) {
    uint64_t start = page_down(c.at);
    uint64_t end = std::min(start + kChunkSize, c.range.end);
    end = std::max(end, page_up(c.at + req.size));
    if (start < c.range.start || end > c.range.end)
      continue;
    void *p = mmap(reinterpret_cast<void *>(start), end - start,
                   PROT_READ | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)
      continue; // taken since the snapshot: try the next
    if (reinterpret_cast<uint64_t>(p) != start) {
      munmap(p, end - start); // a kernel that took it as a hint
      continue;
    }
    chunks().push_back({start, end, {{start, end}}});
    g_mapped_bytes += end - start;
    carve(chunks().back(), c.at, req.size);
    return c.at;
  }
  return make_error("no free address within reach of a rel32 jump satisfies "
                    "the trap-byte constraint");
}

Result<void> write_code(uint64_t address, const uint8_t *bytes, size_t size) {
  Chunk *chunk = chunk_of(address);
  if (!chunk || address + size > chunk->end)
    return make_error("write_code outside trampoline memory");
  uint64_t start = page_down(address);
  uint64_t end = page_up(address + size);
  void *pages = reinterpret_cast<void *>(start);
  if (mprotect(pages, end - start, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
    return make_error(std::string("cannot make trampoline memory writable: ") +
                      strerror(errno));
  memcpy(reinterpret_cast<void *>(address), bytes, size);
  mprotect(pages, end - start, PROT_READ | PROT_EXEC);
  return {};
}

uint64_t code_memory_mapped_bytes() {
  return g_mapped_bytes;
}

} // namespace ubtrace::runtime::hook
