// What formatting needs from the world outside the bytes: symbols, probe
// names, strftime formats, users and cgroups. The caller (the CLI) provides
// it; every part is optional and has a documented fallback, so tests and
// tools can format values without a live process.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::output {

// One symbolised frame. A single address yields several frames when code
// was inlined: innermost first, the containing function last.
struct SymbolFrame {
  std::string name;
  uint64_t offset = 0; // address - symbol start
  std::string module;  // the binary, shown in perf stack mode
  std::string file;    // source file (debug info); empty when unknown
  uint32_t line = 0;
  bool inlined = false;
};

// A frame of a build_id stack: the ELF build id and the file offset.
struct BuildIdFrame {
  std::vector<uint8_t> build_id;
  uint64_t offset = 0;
};

// The file mapping an address lies in: the file, where it is mapped and
// from which offset, its ELF build id (empty when it has none).
struct MappingInfo {
  std::string path;
  uint64_t start = 0;
  uint64_t limit = 0; // one past the end
  uint64_t file_offset = 0;
  std::vector<uint8_t> build_id;
};

// Turns addresses into symbols. Frames are returned in the order they are
// printed; an empty vector means the address is unknown (printed in hex).
class Symbolizer {
public:
  virtual ~Symbolizer() = default;
  virtual std::vector<SymbolFrame> user(uint64_t addr, int64_t pid) = 0;
  virtual std::vector<SymbolFrame> kernel(uint64_t addr) = 0;
  virtual std::optional<BuildIdFrame> build_id(uint64_t addr, int64_t pid) {
    return std::nullopt;
  }
  virtual std::optional<MappingInfo> mapping(uint64_t addr, int64_t pid) {
    return std::nullopt;
  }
};

// Facts about the host that some values print: usernames and cgroup paths.
class SystemInfo {
public:
  virtual ~SystemInfo() = default;
  // The name of user `uid`, or "" when there is none (as bpftrace prints).
  virtual std::string username(uint64_t uid) = 0;
  // "unified:/a/b,cpu:/a" for cgroup `id` in every hierarchy that holds it:
  // cgroup2 first, then cgroup1 hierarchies sorted by name.
  virtual std::string cgroup_path(uint64_t id) = 0;
};

struct FormatContext {
  Symbolizer *symbolizer = nullptr; // null: addresses print in hex
  SystemInfo *system = nullptr;     // null: usernames and cgroups print ""
  // Probe names by id (ValueType::Kind::Probe).
  const std::vector<std::string> *probe_names = nullptr;
  // strftime() formats by id (ValueType::Kind::Timestamp).
  const std::vector<std::string> *strftime_formats = nullptr;
  // Added to a strftime() timestamp to get nanoseconds since the Unix
  // epoch (the wall-clock time of boot when the program stores boot time).
  int64_t timestamp_offset_ns = 0;
  // strftime() output is formatted into a buffer this big, like bpftrace's
  // max_strlen; what does not fit prints "(?)".
  size_t max_strlen = 1024;
  // Appended to a string that fills its whole buffer (likely truncated).
  std::string str_trunc_trailer = "..";
  // Source file and line in stack frames (bpftrace stack mode).
  bool show_debug_info = true;
  // The process of user addresses when the value does not record one.
  int64_t default_pid = -1;
  // GPU kernels' names by kernel id (runtime/gpu/probe_abi.h: FNV-1a 64 of
  // the mangled name). `func` in a GPU probe is a usym whose pid is
  // runtime::gpu::kGpuFuncPid and whose address is the kernel id; it prints
  // the name found here, or the id in hex (null: always in hex).
  const std::map<uint64_t, std::string> *gpu_kernel_names = nullptr;
  // Called once when a kernel id is not in gpu_kernel_names, before the id
  // is printed in hex: the session reads the names the agent reported since
  // (a module loaded after the CLI started).
  std::function<void()> refresh_gpu_kernel_names;
  // The name of a probe id past probe_names (a GPU probe's late id, for a
  // kernel loaded after the CLI compiled); unset or "": the empty string.
  std::function<std::string(uint64_t)> name_unknown_probe;
};

} // namespace ubtrace::output
