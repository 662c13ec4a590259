// What ubtrace knows about one binary, read once and shared: its ELF
// headers, symbols, USDT probes and (lazily) DWARF. The cache keys by path
// and re-reads a file whose identity (device, inode, size, mtime) changed.
#pragma once

#include "runtime/result.h"
#include "runtime/symbols/dwarf_info.h"
#include "runtime/symbols/elf_file.h"
#include "runtime/symbols/elf_symbols.h"
#include "runtime/symbols/file_identity.h"
#include "runtime/symbols/usdt_notes.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ubtrace::runtime::symbols {

class BinaryInfo {
public:
  static Result<std::shared_ptr<BinaryInfo>>
  open(const std::string &path, const SymbolLoadOptions &options = {});

  const std::string &path() const { return elf_.path(); }
  const ElfFile &elf() const { return elf_; }
  const FileIdentity &identity() const { return identity_; }

  // Loaded on first use; a file whose symbols cannot be read has none.
  const SymbolTable &symbols() const;
  const Result<std::vector<UsdtProbe>> &usdt_probes() const;
  // Opened on first use, from the separate debug file when there is one;
  // nullptr without DWARF.
  const DwarfInfo *dwarf() const;

private:
  BinaryInfo(ElfFile elf, FileIdentity identity, SymbolLoadOptions options)
      : elf_(std::move(elf)), identity_(identity),
        options_(std::move(options)) {}

  ElfFile elf_;
  FileIdentity identity_;
  SymbolLoadOptions options_;
  mutable std::once_flag symbols_once_, usdt_once_, dwarf_once_;
  mutable std::optional<SymbolTable> symbols_;
  mutable std::optional<Result<std::vector<UsdtProbe>>> usdt_;
  mutable std::unique_ptr<DwarfInfo> dwarf_;
};

class BinaryCache {
public:
  explicit BinaryCache(SymbolLoadOptions options = {})
      : options_(std::move(options)) {}

  // The binary at `path` as it is now.
  Result<std::shared_ptr<BinaryInfo>> get(const std::string &path);
  // The binary at `path` only if it is still the file with this device
  // and inode (a snapshot's mapping): symbols of a replaced file would lie.
  Result<std::shared_ptr<BinaryInfo>> get_mapped(const std::string &path,
                                                 uint32_t dev_major,
                                                 uint32_t dev_minor,
                                                 uint64_t inode);

  const SymbolLoadOptions &options() const { return options_; }

private:
  SymbolLoadOptions options_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<BinaryInfo>> by_path_;
};

} // namespace ubtrace::runtime::symbols
