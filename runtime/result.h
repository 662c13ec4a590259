// Result<T>: a value or an error message, for recoverable failures (a file
// that will not open, a process that refuses ptrace). Bugs assert instead.
// Header only, no exceptions, so the agent can use it too.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace ubtrace {

struct Error {
  std::string message;
};

inline Error make_error(std::string message) {
  return Error{std::move(message)};
}

template <class T> class [[nodiscard]] Result {
public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T &value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T &value() const & {
    assert(ok());
    return std::get<0>(v_);
  }
  T &&value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }

  const std::string &error() const {
    assert(!ok());
    return std::get<1>(v_).message;
  }
  Error take_error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

private:
  std::variant<T, Error> v_;
};

template <> class [[nodiscard]] Result<void> {
public:
  Result() = default;
  Result(Error error) : error_(std::move(error.message)), failed_(true) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const std::string &error() const {
    assert(failed_);
    return error_;
  }
  Error take_error() && { return Error{std::move(error_)}; }

private:
  std::string error_;
  bool failed_ = false;
};

} // namespace ubtrace
