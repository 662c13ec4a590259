// Deadline: a point on the monotonic clock that waits give up at.
#pragma once

#include <chrono>

namespace ubtrace::runtime::inject {

class Deadline {
public:
  using Clock = std::chrono::steady_clock;

  explicit Deadline(std::chrono::milliseconds budget)
      : at_(Clock::now() + budget) {}

  bool expired() const { return Clock::now() >= at_; }
  // Milliseconds left, at least 0 (for poll()).
  int remaining_ms() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        at_ - Clock::now());
    return left.count() < 0 ? 0 : static_cast<int>(left.count());
  }

private:
  Clock::time_point at_;
};

} // namespace ubtrace::runtime::inject
