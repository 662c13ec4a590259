// An ELF file opened read-only with libelf: its type, loadable segments,
// sections, notes and build id, and the arithmetic between link-time
// virtual addresses and file offsets.
//
// Addresses in this library are link-time virtual addresses ("vaddr", what
// the symbol table says) unless named otherwise. A process maps a file at a
// load bias: runtime address = bias + vaddr, with bias 0 for a non-PIE
// executable. The kernel and the agent locate code by file offset instead
// (the offset of the byte in the file, which /proc/PID/maps relates to a
// runtime address), so every probe carries both.
#pragma once

#include "runtime/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

typedef struct Elf Elf; // libelf's handle

namespace ubtrace::runtime::symbols {

enum class ElfKind : uint8_t {
  Executable,   // ET_EXEC: fixed addresses (non-PIE)
  SharedObject, // ET_DYN: a library or a PIE executable
  Other,        // relocatable objects, core files
};

struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t offset = 0; // file offset of the first byte
  uint64_t filesz = 0;
  bool readable = false;
  bool writable = false;
  bool executable = false;
};

struct Section {
  std::string name;
  uint32_t type = 0;  // SHT_*
  uint64_t flags = 0; // SHF_*
  uint64_t vaddr = 0; // sh_addr
  uint64_t offset = 0;
  uint64_t size = 0;
  size_t index = 0;
};

class ElfFile {
public:
  // Opens `path`; fails with a message naming it when it is not a readable
  // ELF file.
  static Result<ElfFile> open(const std::string &path);
  // Parses an ELF image held in memory (a decompressed .gnu_debugdata).
  static Result<ElfFile> from_memory(std::vector<uint8_t> image,
                                     std::string name);

  ElfFile(ElfFile &&other) noexcept;
  ElfFile &operator=(ElfFile &&other) noexcept;
  ElfFile(const ElfFile &) = delete;
  ElfFile &operator=(const ElfFile &) = delete;
  ~ElfFile();

  const std::string &path() const { return path_; }
  // The descriptor the file is read through (-1 for an image in memory).
  int fd() const { return fd_; }
  ElfKind kind() const { return kind_; }
  uint16_t machine() const { return machine_; }
  // e_entry: where the program starts when the file is executed (0: none).
  uint64_t entry() const { return entry_; }
  bool is_64bit() const { return is_64bit_; }
  const std::vector<LoadSegment> &segments() const { return segments_; }
  const std::vector<Section> &sections() const { return sections_; }
  // The GNU build id (NT_GNU_BUILD_ID), empty when the file has none.
  const std::vector<uint8_t> &build_id() const { return build_id_; }

  const Section *section(std::string_view name) const;
  // The bytes of a section as stored in the file (SHT_NOBITS: empty).
  Result<std::vector<uint8_t>> section_bytes(const Section &section) const;

  // The file offset that holds `vaddr`, if a loadable segment stores it.
  std::optional<uint64_t> vaddr_to_offset(uint64_t vaddr) const;
  // The vaddr a file offset is loaded at, if a loadable segment maps it.
  std::optional<uint64_t> offset_to_vaddr(uint64_t offset) const;
  // The loadable segment containing `vaddr` (in memory, not only on disk).
  const LoadSegment *segment_of(uint64_t vaddr) const;
  // `size` bytes of loaded content at `vaddr` (for instruction checks).
  Result<std::vector<uint8_t>> read_at_vaddr(uint64_t vaddr, size_t size) const;

  // The `.gnu_debuglink` file name and CRC, when present.
  struct DebugLink {
    std::string name;
    uint32_t crc = 0;
  };
  std::optional<DebugLink> debug_link() const;

  Elf *handle() const { return elf_; }

private:
  ElfFile() = default;
  Result<void> load_headers();
  void close();

  std::string path_;
  int fd_ = -1;
  Elf *elf_ = nullptr;
  std::vector<uint8_t> image_; // backing store of from_memory()
  ElfKind kind_ = ElfKind::Other;
  uint16_t machine_ = 0;
  uint64_t entry_ = 0;
  bool is_64bit_ = false;
  std::vector<LoadSegment> segments_;
  std::vector<Section> sections_;
  std::vector<uint8_t> build_id_;
};

// Whether `path` is an ELF file a uprobe may target, as bpftrace decides:
// a shared object, or an executable with its owner-execute bit set.
bool is_probeable_elf(const std::string &path);

// The build id as lowercase hex.
std::string build_id_hex(const std::vector<uint8_t> &build_id);

} // namespace ubtrace::runtime::symbols
