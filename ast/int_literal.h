// Integer literals as bpftrace reads them, shared by the lexer and the
// attach point pass (interval rates, offsets and addresses are literals too).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ubtrace::ast {

// Parses `text` as one integer literal: decimal, hexadecimal (0x), octal
// (a leading 0 followed by an octal digit), scientific (M e N, with M in
// 1..9), `_` separators anywhere after the first digit, a C suffix (u, l,
// ul, ll, ull, lu, llu in any case; hexadecimal literals take these only)
// or a duration suffix (ns, us, ms, s, m, h, d: scaled to nanoseconds).
// On failure returns false and sets `error` to bpftrace's message, e.g.
// "overflow error, maximum value is 4294967295: 5000000000u".
bool parse_int_literal(std::string_view text, uint64_t &value,
                       std::string &error);

} // namespace ubtrace::ast
