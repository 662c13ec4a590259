// Decoding a stored value (its ValueType and raw bytes, laid out as
// bundle.h describes) into a Value. Everything that needs the outside world
// (symbols, users, cgroups, probe names, strftime formats) is resolved here,
// through the FormatContext, so printers only deal with Values.
#pragma once

#include "backends/output/bytes.h"
#include "backends/output/context.h"
#include "backends/output/value.h"
#include "runtime/bundle.h"

namespace ubtrace::output {

// `div` divides integers (print(@m, top, div)); it reaches the integers
// nested in tuples, records and arrays too, as in bpftrace. 0 means 1.
Value decode(const runtime::ValueType &type, Bytes bytes,
             const FormatContext &ctx, uint32_t div = 1);

// An integer of `size` bytes divided the way bpftrace divides it: in the
// stored width and signedness (so a signed 32-bit value divides as int32).
Value divided_integer(Bytes bytes, uint32_t size, bool is_signed, uint32_t div);

} // namespace ubtrace::output
