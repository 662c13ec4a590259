#include "ast/int_literal.h"

#include <cctype>
#include <cstdint>

namespace ubtrace::ast {

namespace {

int digit_value(char c, int base) {
  int d;
  if (c >= '0' && c <= '9')
    d = c - '0';
  else if (c >= 'a' && c <= 'f')
    d = c - 'a' + 10;
  else if (c >= 'A' && c <= 'F')
    d = c - 'A' + 10;
  else
    return -1;
  return d < base ? d : -1;
}

struct Suffix {
  const char *text;
  uint64_t max; // largest value before scaling
  uint64_t scale;
  bool hex_ok;
};

// The limits follow C's types (u is 32 bits, l and ll are signed).
constexpr Suffix suffixes[] = {
    {"", UINT64_MAX, 1, true},
    {"u", UINT32_MAX, 1, true},
    {"ul", UINT64_MAX, 1, true},
    {"lu", UINT64_MAX, 1, true},
    {"ull", UINT64_MAX, 1, true},
    {"llu", UINT64_MAX, 1, true},
    {"l", INT64_MAX, 1, true},
    {"ll", INT64_MAX, 1, true},
    {"ns", UINT64_MAX, 1, false},
    {"us", UINT64_MAX, 1000ull, false},
    {"ms", UINT64_MAX, 1000000ull, false},
    {"s", UINT64_MAX, 1000000000ull, false},
    {"m", UINT64_MAX, 60ull * 1000000000ull, false},
    {"h", UINT64_MAX, 3600ull * 1000000000ull, false},
    {"d", UINT64_MAX, 86400ull * 1000000000ull, false},
};

} // namespace

bool parse_int_literal(std::string_view text, uint64_t &value,
                       std::string &error) {
  auto fail = [&](const std::string &why) {
    error = why + ": " + std::string(text);
    return false;
  };
  auto overflow = [&](uint64_t max) {
    return fail("overflow error, maximum value is " + std::to_string(max));
  };
  std::string s;
  for (char c : text)
    if (c != '_')
      s += c;
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])))
    return fail("invalid integer");

  int base = 10;
  size_t i = 0;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  } else if (s.size() >= 2 && s[0] == '0' && s[1] >= '0' && s[1] <= '7') {
    base = 8;
    i = 1;
  }
  const size_t first_digit = i;
  uint64_t v = 0;
  bool too_big = false;
  for (; i < s.size(); i++) {
    int d = digit_value(s[i], base);
    if (d < 0)
      break;
    if (v > (UINT64_MAX - static_cast<uint64_t>(d)) / base)
      too_big = true;
    else
      v = v * base + static_cast<uint64_t>(d);
  }
  if (i == first_digit)
    return fail("invalid integer");
  if (too_big)
    return overflow(UINT64_MAX);

  if (base == 10 && i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E') &&
      std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
    if (v < 1 || v > 9)
      return fail("coefficient part of scientific literal must be 1-9");
    uint64_t exponent = 0;
    for (i++; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
         i++)
      exponent = exponent > 100 ? exponent : exponent * 10 + (s[i] - '0');
    for (uint64_t k = 0; k < exponent; k++) {
      if (v > UINT64_MAX / 10)
        return overflow(UINT64_MAX);
      v *= 10;
    }
  }

  // C suffixes in any case, durations in lower case only.
  const std::string suffix = s.substr(i);
  std::string lower;
  for (char c : suffix)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto &sfx : suffixes) {
    if ((sfx.hex_ok ? lower : suffix) != sfx.text)
      continue;
    if (base == 16 && !sfx.hex_ok)
      break;
    if (v > sfx.max / sfx.scale)
      return overflow(sfx.max);
    value = v * sfx.scale;
    return true;
  }
  return fail("invalid trailing bytes");
}

} // namespace ubtrace::ast
