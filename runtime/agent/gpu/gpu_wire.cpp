#include "runtime/agent/gpu/gpu_wire.h"

#include <cstring>
#include <type_traits>

namespace ubtrace::agent::gpu {
namespace {

constexpr uint32_t kSetupMagic = 0x75627447; // "Gtbu"

static_assert(std::is_trivially_copyable_v<runtime::gpu::DeviceMapLayout>);

struct Writer {
  std::vector<uint8_t> out;
  template <class T> void pod(const T &v) {
    size_t at = out.size();
    out.resize(at + sizeof v);
    std::memcpy(out.data() + at, &v, sizeof v);
  }
  void text(const std::string &s) {
    pod(uint64_t(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }
};

struct Reader {
  const std::vector<uint8_t> &in;
  size_t at = 0;
  bool ok = true;
  template <class T> T pod() {
    T v{};
    if (!ok || in.size() - at < sizeof v) {
      ok = false;
      return v;
    }
    std::memcpy(&v, in.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  std::string text() {
    uint64_t n = pod<uint64_t>();
    if (!ok || in.size() - at < n) {
      ok = false;
      return {};
    }
    std::string s(reinterpret_cast<const char *>(in.data() + at), n);
    at += n;
    return s;
  }
};

} // namespace

std::vector<uint8_t> encode_setup(const GpuSetup &setup) {
  Writer w;
  w.pod(kSetupMagic);
  w.pod(setup.map_table_entries);
  w.pod(setup.drain_interval_ms);
  w.pod(uint32_t(setup.maps.size()));
  for (const auto &m : setup.maps)
    w.pod(m);
  w.pod(uint32_t(setup.attachments.size()));
  for (const WireAttachment &a : setup.attachments) {
    w.pod(uint8_t(a.attachment.site));
    w.pod(a.attachment.arg_mask);
    w.text(a.attachment.kernel_pattern);
    w.text(a.attachment.function);
    w.text(a.binary);
  }
  w.text(setup.ptx);
  return std::move(w.out);
}

Result<GpuSetup> decode_setup(const std::vector<uint8_t> &bytes) {
  Reader r{bytes};
  if (r.pod<uint32_t>() != kSetupMagic)
    return make_error("not a GPU setup message");
  GpuSetup s;
  s.map_table_entries = r.pod<uint32_t>();
  s.drain_interval_ms = r.pod<uint32_t>();
  uint32_t maps = r.pod<uint32_t>();
  for (uint32_t i = 0; r.ok && i < maps && i < 65536; ++i)
    s.maps.push_back(r.pod<runtime::gpu::DeviceMapLayout>());
  uint32_t attachments = r.pod<uint32_t>();
  for (uint32_t i = 0; r.ok && i < attachments && i < 65536; ++i) {
    WireAttachment a;
    a.attachment.site = static_cast<runtime::gpu::ProbeSite>(r.pod<uint8_t>());
    a.attachment.arg_mask = r.pod<uint64_t>();
    a.attachment.kernel_pattern = r.text();
    a.attachment.function = r.text();
    a.binary = r.text();
    s.attachments.push_back(std::move(a));
  }
  s.ptx = r.text();
  if (!r.ok || r.at != bytes.size() || s.maps.size() != maps ||
      s.attachments.size() != attachments)
    return make_error("malformed GPU setup message");
  return s;
}

} // namespace ubtrace::agent::gpu
