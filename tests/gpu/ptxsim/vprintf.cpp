// Device printf: CUDA's vprintf(format, args) gets the arguments packed in
// one buffer, each at its natural alignment (int 4, long/double/pointer 8;
// float arrives promoted to double). Formatted here with the host's
// snprintf, one conversion at a time.
#include "tests/gpu/ptxsim/exec.h"

#include <cstdio>
#include <cstring>

namespace ubtrace::ptxsim {
namespace {

constexpr uintptr_t kLowestValidAddress = 65536;

bool is_flag(char c) {
  return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0';
}

} // namespace

std::string format_vprintf(const char *format, const uint8_t *args,
                           int *arg_count) {
  std::string out;
  size_t at = 0; // offset in args
  int count = 0;
  auto take = [&](size_t size) -> uint64_t {
    at = (at + size - 1) / size * size;
    uint64_t v = 0;
    std::memcpy(&v, args + at, size);
    at += size;
    ++count;
    return v;
  };
  char buf[512];
  for (const char *p = format; *p;) {
    if (*p != '%') {
      out.push_back(*p++);
      continue;
    }
    const char *start = p++;
    if (*p == '%') {
      out.push_back('%');
      ++p;
      continue;
    }
    std::string spec = "%";
    while (is_flag(*p))
      spec.push_back(*p++);
    while (*p >= '0' && *p <= '9')
      spec.push_back(*p++);
    if (*p == '.') {
      spec.push_back(*p++);
      while (*p >= '0' && *p <= '9')
        spec.push_back(*p++);
    }
    int longs = 0;
    bool size_t_like = false;
    while (*p == 'l' || *p == 'h' || *p == 'L' || *p == 'z' || *p == 'j' ||
           *p == 't') {
      if (*p == 'l' || *p == 'L')
        ++longs;
      else if (*p != 'h')
        size_t_like = true;
      ++p;
    }
    char conv = *p;
    if (!conv)
      break;
    ++p;
    bool wide = longs > 0 || size_t_like;
    if (!args && conv != 'n') {
      out.append(start, p);
      continue;
    }
    switch (conv) {
    case 'd':
    case 'i': {
      long long v = wide ? static_cast<long long>(take(8))
                         : static_cast<int32_t>(take(4));
      std::snprintf(buf, sizeof buf, (spec + "lld").c_str(), v);
      out += buf;
      break;
    }
    case 'u':
    case 'x':
    case 'X':
    case 'o': {
      unsigned long long v = wide ? take(8) : static_cast<uint32_t>(take(4));
      std::snprintf(buf, sizeof buf, (spec + "ll" + conv).c_str(), v);
      out += buf;
      break;
    }
    case 'c': {
      int v = static_cast<int32_t>(take(4));
      std::snprintf(buf, sizeof buf, (spec + "c").c_str(), v);
      out += buf;
      break;
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A': {
      uint64_t bits = take(8);
      double v;
      std::memcpy(&v, &bits, 8);
      std::snprintf(buf, sizeof buf, (spec + conv).c_str(), v);
      out += buf;
      break;
    }
    case 's': {
      uintptr_t ptr = take(8);
      const char *s = ptr < kLowestValidAddress
                          ? "(null)"
                          : reinterpret_cast<const char *>(ptr);
      int need = std::snprintf(nullptr, 0, (spec + "s").c_str(), s);
      std::string tmp(static_cast<size_t>(need > 0 ? need : 0) + 1, '\0');
      std::snprintf(tmp.data(), tmp.size(), (spec + "s").c_str(), s);
      tmp.resize(static_cast<size_t>(need > 0 ? need : 0));
      out += tmp;
      break;
    }
    case 'p': {
      uint64_t v = take(8);
      std::snprintf(buf, sizeof buf, (spec + "p").c_str(),
                    reinterpret_cast<void *>(v));
      out += buf;
      break;
    }
    default:
      out.append(start, p); // unknown conversion: printed as written
      break;
    }
  }
  if (arg_count)
    *arg_count = count;
  return out;
}

} // namespace ubtrace::ptxsim
