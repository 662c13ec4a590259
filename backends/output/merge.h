// Merging the per-slot (per CPU / per thread) values of one map entry into
// the one value the printer reads. The merged value has the layout of a
// single slot (bundle.h, AggKind).
#pragma once

#include "backends/output/bytes.h"
#include "runtime/bundle.h"

#include <cstdint>
#include <vector>

namespace ubtrace::output {

// `slots` holds `nslots` values of spec.value_size bytes back to back.
//   Count, Sum     the sum (wrapping, as the kernel's adds do)
//   Min, Max       the least/greatest over the slots that are set, compared
//                  signed or unsigned as spec.value.is_signed says; unset
//                  when no slot is
//   Avg, Stats     totals and counts added
//   Hist, LHist    bucketwise sums
//   None           the first slot (plain values are not split in slots)
std::vector<uint8_t> merge_slots(const runtime::MapSpec &spec, Bytes slots,
                                 size_t nslots);

} // namespace ubtrace::output
