// time() and strftime() as bpftrace formats them.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

namespace ubtrace::output {

// time(fmt): `now` in local time through strftime(3) into bpftrace's 64-byte
// buffer. An empty result (or one that does not fit) is an error, as in
// bpftrace. The front end supplies the default format "%H:%M:%S\n".
Result<std::string> format_time(std::string_view fmt, std::time_t now);

// strftime(fmt, ns) with bpftrace's extensions, replaced before strftime(3)
// sees the format: %f microseconds (6 digits), %k nanoseconds (9), %l
// milliseconds (3) of the second. The text is formatted into a buffer of
// `max_len` bytes; a timestamp at second 0 of the epoch, an empty result or
// one that does not fit print "(?)" as in bpftrace.
std::string format_strftime(std::string_view fmt, int64_t epoch_ns,
                            size_t max_len = 1024, bool utc = false);

} // namespace ubtrace::output
