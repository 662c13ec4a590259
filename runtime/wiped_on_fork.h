// A word the kernel zeroes in every child a fork makes
// (madvise(MADV_WIPEONFORK), Linux 4.14): how code running in a child, before
// any atfork handler ran or where none runs (a raw fork or clone system
// call), tells that it is not in the process that set the word. The maps'
// per-thread slots (maps/thread_slot.h) and the helpers' thread ids
// (helpers/process_facts.cpp) each keep one.
//
// Until place(), and where the kernel cannot wipe, the word is the static
// copy, which fork copies: a child is then not noticed that way.
#pragma once

#include <atomic>
#include <cstdint>
#include <new>
#include <sys/mman.h>

namespace ubtrace::runtime {

class WipedOnFork {
public:
  constexpr explicit WipedOnFork(uint32_t initial) : copy_(initial) {}
  WipedOnFork(const WipedOnFork &) = delete;
  WipedOnFork &operator=(const WipedOnFork &) = delete;

  // Once, off the probe path: moves the word, with its value, to a page of
  // its own. False where the kernel refuses (the word stays the copy).
  bool place() {
    if (wipes())
      return true;
    void *page = mmap(nullptr, kPage, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
      return false;
    if (madvise(page, kPage, MADV_WIPEONFORK) != 0) {
      munmap(page, kPage);
      return false;
    }
    word_ =
        new (page) std::atomic<uint32_t>(copy_.load(std::memory_order_relaxed));
    return true;
  }

  bool wipes() const { return word_ != &copy_; }

  // 0 in a child of a wiping fork (until something there stores).
  std::atomic<uint32_t> &word() const { return *word_; }

  // The value store() gave last, which fork copies: the number a child's
  // own may follow. Where the word is the copy, read it before marking the
  // word with a value of passage.
  uint32_t last() const { return copy_.load(std::memory_order_relaxed); }

  void store(uint32_t value) {
    if (wipes())
      copy_.store(value, std::memory_order_relaxed);
    word_->store(value, std::memory_order_release);
  }

private:
  static constexpr size_t kPage = 4096;
  std::atomic<uint32_t> copy_;
  std::atomic<uint32_t> *word_ = &copy_;
};

} // namespace ubtrace::runtime
