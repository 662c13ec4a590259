#include "runtime/agent/program_wire.h"

#include <cstring>

namespace ubtrace::agent {

namespace {

struct Header {
  uint32_t insns, subprogs, calls, maps_used, region_map, ctx_size, name_len,
      flags;
};
struct WireSubprog {
  uint32_t start, end, stack_depth, is_callback;
};
struct WireCall {
  uint32_t pc;
  int32_t helper, map, callback;
};

template <class T> void put(std::vector<uint8_t> &out, const T &v) {
  size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

struct Reader {
  const std::vector<uint8_t> &in;
  size_t at = 0;
  template <class T> bool get(T &v) {
    if (in.size() - at < sizeof(T))
      return false;
    std::memcpy(&v, in.data() + at, sizeof(T));
    at += sizeof(T);
    return true;
  }
};

} // namespace

std::vector<uint8_t> encode_program(const WireProgram &p) {
  const auto &v = p.program;
  std::vector<uint8_t> out;
  Header h{uint32_t(v.insns.size()),
           uint32_t(v.subprogs.size()),
           uint32_t(v.helper_calls.size()),
           uint32_t(v.maps_used.size()),
           uint32_t(p.region_map.size()),
           v.ctx.size,
           uint32_t(v.name.size()),
           uint32_t((v.ctx.writable ? 1 : 0) |
                    (v.ctx.allow_variable_offset ? 2 : 0))};
  put(out, h);
  for (const auto &i : v.insns)
    put(out, i);
  for (const auto &s : v.subprogs)
    put(out,
        WireSubprog{s.start, s.end, s.stack_depth, s.is_callback ? 1u : 0u});
  for (const auto &c : v.helper_calls)
    put(out, WireCall{c.pc, c.helper, c.map, c.callback});
  for (uint32_t m : v.maps_used)
    put(out, m);
  for (uint32_t m : p.region_map)
    put(out, m);
  out.insert(out.end(), v.name.begin(), v.name.end());
  return out;
}

Result<WireProgram> decode_program(const std::vector<uint8_t> &bytes) {
  Reader r{bytes};
  Header h{};
  if (!r.get(h) || h.insns > (1u << 20) || h.subprogs > 4096 ||
      h.calls > (1u << 20))
    return make_error("malformed program message");
  WireProgram p;
  auto &v = p.program;
  v.insns.resize(h.insns);
  for (auto &i : v.insns)
    if (!r.get(i))
      return make_error("truncated program message");
  for (uint32_t i = 0; i < h.subprogs; i++) {
    WireSubprog s{};
    if (!r.get(s))
      return make_error("truncated program message");
    v.subprogs.push_back({s.start, s.end, s.stack_depth, s.is_callback != 0});
  }
  for (uint32_t i = 0; i < h.calls; i++) {
    WireCall c{};
    if (!r.get(c))
      return make_error("truncated program message");
    v.helper_calls.push_back({c.pc, c.helper, c.map, c.callback});
  }
  v.maps_used.resize(h.maps_used);
  for (auto &m : v.maps_used)
    if (!r.get(m))
      return make_error("truncated program message");
  p.region_map.resize(h.region_map);
  for (auto &m : p.region_map)
    if (!r.get(m))
      return make_error("truncated program message");
  if (bytes.size() - r.at < h.name_len)
    return make_error("truncated program message");
  v.name.assign(bytes.begin() + r.at, bytes.begin() + r.at + h.name_len);
  v.ctx.size = h.ctx_size;
  v.ctx.writable = h.flags & 1;
  v.ctx.allow_variable_offset = h.flags & 2;
  return p;
}

} // namespace ubtrace::agent
