#include "backends/output/time_format.h"

#include <cstdio>
#include <vector>

namespace ubtrace::output {

static void replace_all(std::string &s, std::string_view from,
                        std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

Result<std::string> format_time(std::string_view fmt, std::time_t now) {
  struct tm tm;
  if (!localtime_r(&now, &tm))
    return make_error("unable to get localtime");
  char buf[64];
  std::string f(fmt);
  size_t n = std::strftime(buf, sizeof(buf), f.c_str(), &tm);
  if (n == 0)
    return make_error("strftime returned zero");
  return std::string(buf, n);
}

std::string format_strftime(std::string_view fmt, int64_t epoch_ns,
                            size_t max_len, bool utc) {
  constexpr int64_t ns_per_s = 1000000000;
  int64_t secs = epoch_ns / ns_per_s;
  int64_t ns = epoch_ns % ns_per_s;
  if (ns < 0) {
    ns += ns_per_s;
    secs -= 1;
  }
  if (secs == 0)
    return "(?)";
  std::time_t t = static_cast<std::time_t>(secs);
  struct tm tm;
  if (!(utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)))
    return "(?)";

  char us[8], nsec[12], ms[8];
  std::snprintf(us, sizeof(us), "%06lld", static_cast<long long>(ns / 1000));
  std::snprintf(nsec, sizeof(nsec), "%09lld", static_cast<long long>(ns));
  std::snprintf(ms, sizeof(ms), "%03lld", static_cast<long long>(ns / 1000000));
  std::string f(fmt);
  replace_all(f, "%f", us);
  replace_all(f, "%k", nsec);
  replace_all(f, "%l", ms);

  if (max_len == 0)
    return "(?)";
  std::vector<char> buf(max_len);
  size_t n = std::strftime(buf.data(), buf.size(), f.c_str(), &tm);
  if (n == 0)
    return "(?)";
  return std::string(buf.data(), n);
}

} // namespace ubtrace::output
