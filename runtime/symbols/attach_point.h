// An attach point of a userspace probe, as the CLI hands it over
// (uprobe:BIN:FUNC, uprobe:BIN:cpp:FUNC, uprobe:BIN:FUNC+OFFSET,
// uprobe:BIN:ADDRESS, uretprobe:..., usdt:BIN:[PROVIDER:]NAME), and a
// concrete probe it expands to.
#pragma once

#include "runtime/symbols/elf_file.h"
#include "runtime/symbols/usdt_notes.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace ubtrace::runtime::symbols {

enum class UserProbeType : uint8_t { Uprobe, Uretprobe, Usdt };

std::string_view user_probe_type_name(UserProbeType type);

struct AttachRequest {
  UserProbeType type = UserProbeType::Uprobe;
  std::string target;   // BIN as written: path, library, program, glob, "*"
  std::string function; // FUNC or USDT name; may hold wildcards
  std::string provider; // USDT provider; empty: any
  bool cpp = false;     // uprobe:BIN:cpp:FUNC (match demangled names)
  std::optional<uint64_t> offset;  // FUNC+OFFSET
  std::optional<uint64_t> address; // BIN:ADDRESS (a link-time vaddr)
  std::optional<pid_t> pid;        // -p PID: resolve against its mappings
};

struct ResolvedProbe {
  UserProbeType type = UserProbeType::Uprobe;
  std::string binary; // the resolved file ("/usr/lib/.../libc.so.6")
  ElfKind binary_kind = ElfKind::Other; // Executable: bias is 0
  std::string function; // the symbol as stored (mangled), or USDT name;
                        // empty for an address outside any symbol
  std::string provider; // USDT
  // Other symbols at the same address, merged into this probe.
  std::vector<std::string> aliases;
  bool cpp = false;
  uint64_t vaddr = 0;          // the probed instruction, link-time
  uint64_t file_offset = 0;    // the same byte, in the file
  uint64_t function_vaddr = 0; // start of the containing symbol
  uint64_t function_size = 0;  // 0: unknown
  uint64_t offset = 0;         // vaddr - function_vaddr (FUNC+OFFSET)
  // An IFUNC (ifunc.h): vaddr is its resolver's until the probe is moved
  // to the implementation the traced process uses.
  bool ifunc = false;
  // USDT: this site's arguments and the probe's semaphore.
  std::vector<UsdtArg> usdt_args;
  std::string usdt_args_error;
  std::optional<UsdtSemaphore> semaphore;
  // As bpftrace's `probe` prints the expanded attach point:
  // "uprobe:/bin/bash:readline", "uprobe:/app:cpp:_ZN2ns3fooEv",
  // "uprobe:/app:main+4", "uprobe:/app:4198688", "usdt:/app:prov:name".
  std::string name;
};

// The `probe` text of a resolved probe (see ResolvedProbe::name).
std::string probe_name(const ResolvedProbe &probe, bool by_address);

} // namespace ubtrace::runtime::symbols
