// ubtrace -l: the probes a pattern matches, and for 'kernel:BIN:PATTERN'
// the CUDA kernels in a binary's fatbins.
#include "backends/cli/listing.h"

#include "ast/perf_events.h"
#include "ast/syscalls.h"
#include "backends/cli/debug_types.h"
#include "runtime/file_text.h"
#include "runtime/gpu/elf_fatbins.h"
#include "runtime/gpu/fatbin_decompress.h"
#include "runtime/gpu/kernel_match.h"
#include "runtime/gpu/ptx_module.h"
#include "runtime/symbols/binary_resolver.h"
#include "runtime/symbols/probe_resolver.h"
#include "runtime/symbols/wildcard.h"

#include <cstring>
#include <elf.h>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>

namespace ubtrace::cli {
namespace {

// Kernels of a cubin (SASS): function symbols marked as entries
// (STO_CUDA_ENTRY in st_other), read straight from the ELF bytes.
void cubin_kernels(const std::vector<uint8_t> &cubin,
                   std::set<std::string> &out) {
  constexpr unsigned char kCudaEntry = 0x10;
  if (cubin.size() < sizeof(Elf64_Ehdr))
    return;
  Elf64_Ehdr eh;
  std::memcpy(&eh, cubin.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > cubin.size())
    return;
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, cubin.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  for (size_t i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= eh.e_shnum ||
        sh.sh_entsize != sizeof(Elf64_Sym) ||
        sh.sh_offset + sh.sh_size > cubin.size())
      continue;
    Elf64_Shdr strtab = section(sh.sh_link);
    if (strtab.sh_offset + strtab.sh_size > cubin.size())
      continue;
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size;
         off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, cubin.data() + sh.sh_offset + off, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC ||
          !(sym.st_other & kCudaEntry) || sym.st_name >= strtab.sh_size)
        continue;
      const char *name = reinterpret_cast<const char *>(
          cubin.data() + strtab.sh_offset + sym.st_name);
      size_t len = strnlen(name, strtab.sh_size - sym.st_name);
      out.insert(std::string(name, len));
    }
  }
}

} // namespace

Result<std::vector<std::string>> list_kernels(const std::string &type,
                                              const std::string &binary,
                                              const std::string &pattern) {
  auto files = runtime::symbols::resolve_binary(binary);
  if (!files)
    return make_error(files.error());
  const std::string path = files->front().path;
  auto bytes = read_file(path);
  if (!bytes)
    return make_error(bytes.error());
  auto found = runtime::gpu::find_elf_fatbins(
      runtime::gpu::as_bytes(bytes->data(), bytes->size()));
  if (!found)
    return make_error(path + ": " + found.error());
  if (found->fatbins.empty())
    return make_error(path + ": no CUDA fatbin (no GPU code in this file)");
  std::set<std::string> kernels;
  for (const auto &f : found->fatbins)
    for (const auto &entry : f.fatbin.entries) {
      if (entry.kind == runtime::gpu::EntryKind::Ptx) {
        auto text = runtime::gpu::entry_ptx(entry);
        if (!text)
          continue;
        auto module = runtime::gpu::parse_ptx(*text);
        if (!module)
          continue;
        for (const auto &fn : module->functions)
          if (fn.is_entry)
            kernels.insert(std::string(fn.name));
      } else if (entry.kind == runtime::gpu::EntryKind::Cubin) {
        auto contents = runtime::gpu::entry_contents(entry);
        if (contents)
          cubin_kernels(*contents, kernels);
      }
    }
  std::vector<std::string> out;
  const std::string pat = pattern.empty() ? "*" : pattern;
  for (const auto &k : kernels)
    if (runtime::gpu::kernel_matches(pat, runtime::gpu::kernel_names(k)))
      out.push_back(type + ":" + path + ":" + k);
  return out;
}

// ubtrace -l [PATTERN]: the user-space probes (or a binary's GPU kernels) a
// pattern matches, one per line, as bpftrace lists them.
int list_probes(const std::string &pattern, int pid, backends::Reporter &report,
                bool verbose) {
  if (pattern.empty() && pid) {
    int rc = list_probes("uprobe:*", pid, report, verbose);
    return rc ? rc : list_probes("usdt:*", pid, report, verbose);
  }
  if (pattern.empty()) {
    report.error("-l needs a pattern, e.g. -l 'uprobe:/bin/bash:read*' or "
                 "-l 'usdt:./app:*', or a process: -l -p PID");
    return 1;
  }
  // Watchpoints have no list: any address of the process is one.
  for (const char *type : {"watchpoint:", "w:", "asyncwatchpoint:", "aw:"})
    if (pattern.rfind(type, 0) == 0)
      return 0;
  // Interval and profile probes have no list of their own, only their
  // units.
  for (const char *type : {"interval", "profile"})
    if (pattern.rfind(std::string(type) + ":", 0) == 0 ||
        pattern.rfind(std::string(1, type[0]) + ":", 0) == 0) {
      runtime::symbols::Wildcard rest(pattern.substr(pattern.find(':') + 1));
      for (const char *unit : {"hz", "ms", "s", "us"})
        if (rest.matches(std::string(unit) + ":") || rest.matches(unit))
          std::cout << type << ":" << unit << ":\n";
      return 0;
    }
  // Software and hardware events (ast/perf_events.h): each name and alias;
  // the type may be a wildcard ("*ware:*").
  if (size_t colon = pattern.find(':'); colon != std::string::npos) {
    std::string type_part = pattern.substr(0, colon);
    std::string rest = pattern.substr(colon + 1);
    if (size_t end = rest.find(':'); end != std::string::npos)
      rest = rest.substr(0, end);
    runtime::symbols::Wildcard types(type_part);
    runtime::symbols::Wildcard want(rest.empty() ? "*" : rest);
    bool listed = false;
    for (const char *type : {"software", "hardware"}) {
      if (type_part != std::string(1, type[0]) && !types.matches(type))
        continue;
      listed = true;
      for (const auto &e :
           type[0] == 'h' ? ast::hardware_events() : ast::software_events())
        for (std::string_view name : {e.name, e.alias})
          if (!name.empty() && want.matches(std::string(name)))
            std::cout << type << ":" << name << ":\n";
    }
    // A type wildcard that names user-space probes too lists those below.
    if (listed && !types.matches("uprobe") && !types.matches("usdt"))
      return 0;
  }
  // System call tracepoints (ast/syscalls.h); -lv adds their fields.
  if (pattern.rfind("tracepoint:", 0) == 0 || pattern.rfind("t:", 0) == 0) {
    std::string rest = pattern.substr(pattern.find(':') + 1);
    size_t colon = rest.find(':');
    std::string category = rest.substr(0, colon);
    std::string event =
        colon == std::string::npos ? "*" : rest.substr(colon + 1);
    std::string why;
    auto events = ast::match_syscall_events(category, event, why);
    if (!why.empty()) {
      report.error(why);
      return 1;
    }
    for (const auto &e : events) {
      std::cout << ast::syscall_event_name(e) << "\n";
      if (verbose)
        for (const auto &decl : ast::syscall_arg_decls(e))
          std::cout << "    " << decl << "\n";
    }
    return 0;
  }
  if (pattern.rfind("kprobe", 0) == 0 || pattern.rfind("kfunc", 0) == 0 ||
      pattern.rfind("fentry", 0) == 0) {
    report.error("ubtrace lists uprobe, uretprobe, usdt and system call "
                 "tracepoint probes; kernel probes are not run by ubtrace");
    return 1;
  }
  // GPU kernels: kernel:BIN[:NAME] (NAME may hold "::").
  if (pattern.rfind("kernel:", 0) == 0 || pattern.rfind("kernelret:", 0) == 0) {
    size_t c1 = pattern.find(':');
    size_t c2 = pattern.find(':', c1 + 1);
    std::string bin = pattern.substr(
        c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
    if (bin.empty()) {
      std::string type = pattern.substr(0, c1);
      report.error("-l " + type + " needs a binary: -l '" + type + ":./app:*'");
      return 1;
    }
    auto kernels =
        list_kernels(pattern.substr(0, c1), bin,
                     c2 == std::string::npos ? "" : pattern.substr(c2 + 1));
    if (!kernels) {
      report.error(kernels.error());
      return 1;
    }
    for (const auto &k : *kernels)
      std::cout << k << "\n";
    return 0;
  }
  runtime::symbols::ProbeResolver resolver;
  std::optional<pid_t> in_pid;
  if (pid)
    in_pid = pid;
  auto lines = resolver.list(pattern, in_pid);
  if (!lines) {
    report.error(lines.error());
    return 1;
  }
  DwarfDebugTypes dwarf(pid); // -lv: read each binary's DWARF once
  for (const auto &l : *lines) {
    std::cout << l << "\n";
    // -lv: a uprobe's arguments, as its DWARF declares them; a
    // uretprobe's too (its args are the ones the function was entered
    // with).
    size_t kind_end = l.starts_with("uprobe:")      ? 7
                      : l.starts_with("uretprobe:") ? 10
                                                    : 0;
    if (!verbose || !kind_end)
      continue;
    size_t colon = l.find(':', kind_end);
    if (colon == std::string::npos)
      continue;
    std::string func = l.substr(colon + 1);
    // C++ names are listed demangled and quoted: cpp:"ns::f(int)".
    if (func.starts_with("cpp:\"") && func.ends_with("\"") && func.size() > 5)
      func = func.substr(5, func.size() - 6);
    for (const auto &param :
         dwarf.declared_params(l.substr(kind_end, colon - kind_end), func))
      std::cout << "    " << param << "\n";
  }
  return 0;
}

} // namespace ubtrace::cli
