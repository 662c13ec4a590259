#include "runtime/symbols/elf_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

namespace ubtrace::runtime::symbols {
namespace {

void init_libelf() {
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

std::string elf_message() {
  return elf_errmsg(-1) ? elf_errmsg(-1) : "?";
}

} // namespace

Result<ElfFile> ElfFile::open(const std::string &path) {
  init_libelf();
  ElfFile file;
  file.path_ = path;
  file.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd_ < 0)
    return make_error("cannot open '" + path + "': " + std::strerror(errno));
  file.elf_ = elf_begin(file.fd_, ELF_C_READ_MMAP, nullptr);
  if (!file.elf_)
    return make_error("cannot read '" + path + "': " + elf_message());
  if (elf_kind(file.elf_) != ELF_K_ELF)
    return make_error("'" + path + "' is not an ELF file");
  if (auto ok = file.load_headers(); !ok)
    return std::move(ok).take_error();
  return file;
}

Result<ElfFile> ElfFile::from_memory(std::vector<uint8_t> image,
                                     std::string name) {
  init_libelf();
  ElfFile file;
  file.path_ = std::move(name);
  file.image_ = std::move(image);
  file.elf_ = elf_memory(reinterpret_cast<char *>(file.image_.data()),
                         file.image_.size());
  if (!file.elf_ || elf_kind(file.elf_) != ELF_K_ELF)
    return make_error("'" + file.path_ + "' is not an ELF image");
  if (auto ok = file.load_headers(); !ok)
    return std::move(ok).take_error();
  return file;
}

ElfFile::ElfFile(ElfFile &&o) noexcept {
  *this = std::move(o);
}

ElfFile &ElfFile::operator=(ElfFile &&o) noexcept {
  if (this == &o)
    return *this;
  close();
  path_ = std::move(o.path_);
  fd_ = o.fd_;
  elf_ = o.elf_;
  // A vector's heap buffer survives the move, so elf_memory's pointer
  // stays valid.
  image_ = std::move(o.image_);
  kind_ = o.kind_;
  machine_ = o.machine_;
  entry_ = o.entry_;
  is_64bit_ = o.is_64bit_;
  segments_ = std::move(o.segments_);
  sections_ = std::move(o.sections_);
  build_id_ = std::move(o.build_id_);
  o.fd_ = -1;
  o.elf_ = nullptr;
  return *this;
}

ElfFile::~ElfFile() {
  close();
}

void ElfFile::close() {
  if (elf_)
    elf_end(elf_);
  if (fd_ >= 0)
    ::close(fd_);
  elf_ = nullptr;
  fd_ = -1;
}

Result<void> ElfFile::load_headers() {
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf_, &ehdr))
    return make_error("'" + path_ + "': bad ELF header: " + elf_message());
  kind_ = ehdr.e_type == ET_EXEC  ? ElfKind::Executable
          : ehdr.e_type == ET_DYN ? ElfKind::SharedObject
                                  : ElfKind::Other;
  machine_ = ehdr.e_machine;
  entry_ = ehdr.e_entry;
  is_64bit_ = gelf_getclass(elf_) == ELFCLASS64;

  size_t phnum = 0;
  if (elf_getphdrnum(elf_, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr ph;
      if (!gelf_getphdr(elf_, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD)
        continue;
      segments_.push_back(LoadSegment{
          .vaddr = ph.p_vaddr,
          .memsz = ph.p_memsz,
          .offset = ph.p_offset,
          .filesz = ph.p_filesz,
          .readable = (ph.p_flags & PF_R) != 0,
          .writable = (ph.p_flags & PF_W) != 0,
          .executable = (ph.p_flags & PF_X) != 0,
      });
    }
  }

  size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf_, &shstrndx) != 0)
    return {}; // no section headers: segments are all there is
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf_, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    const char *name = elf_strptr(elf_, shstrndx, sh.sh_name);
    Section s{
        .name = name ? name : "",
        .type = sh.sh_type,
        .flags = sh.sh_flags,
        .vaddr = sh.sh_addr,
        .offset = sh.sh_offset,
        .size = sh.sh_size,
        .index = elf_ndxscn(scn),
    };
    if (s.type == SHT_NOTE && build_id_.empty()) {
      Elf_Data *data = elf_getdata(scn, nullptr);
      size_t off = 0, name_off = 0, desc_off = 0;
      GElf_Nhdr nh;
      while (data &&
             (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        const char *base = static_cast<const char *>(data->d_buf);
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            std::memcmp(base + name_off, "GNU", 4) == 0) {
          const auto *desc = reinterpret_cast<const uint8_t *>(base + desc_off);
          build_id_.assign(desc, desc + nh.n_descsz);
          break;
        }
      }
    }
    sections_.push_back(std::move(s));
  }
  return {};
}

const Section *ElfFile::section(std::string_view name) const {
  for (const Section &s : sections_)
    if (s.name == name)
      return &s;
  return nullptr;
}

Result<std::vector<uint8_t>>
ElfFile::section_bytes(const Section &section) const {
  Elf_Scn *scn = elf_getscn(elf_, section.index);
  if (!scn)
    return make_error("'" + path_ + "': no section " + section.name);
  std::vector<uint8_t> out;
  if (section.type == SHT_NOBITS)
    return out;
  Elf_Data *data = nullptr;
  while ((data = elf_rawdata(scn, data)) != nullptr) {
    if (!data->d_buf)
      continue;
    const auto *p = static_cast<const uint8_t *>(data->d_buf);
    out.insert(out.end(), p, p + data->d_size);
  }
  return out;
}

std::optional<uint64_t> ElfFile::vaddr_to_offset(uint64_t vaddr) const {
  for (const LoadSegment &s : segments_)
    if (vaddr >= s.vaddr && vaddr < s.vaddr + s.filesz)
      return vaddr - s.vaddr + s.offset;
  return std::nullopt;
}

std::optional<uint64_t> ElfFile::offset_to_vaddr(uint64_t offset) const {
  for (const LoadSegment &s : segments_)
    if (offset >= s.offset && offset < s.offset + s.filesz)
      return offset - s.offset + s.vaddr;
  return std::nullopt;
}

const LoadSegment *ElfFile::segment_of(uint64_t vaddr) const {
  for (const LoadSegment &s : segments_)
    if (vaddr >= s.vaddr && vaddr < s.vaddr + s.memsz)
      return &s;
  return nullptr;
}

Result<std::vector<uint8_t>> ElfFile::read_at_vaddr(uint64_t vaddr,
                                                    size_t size) const {
  auto offset = vaddr_to_offset(vaddr);
  if (!offset)
    return make_error("'" + path_ + "': address is not stored in the file");
  size_t avail = 0;
  char *raw = elf_rawfile(elf_, &avail);
  if (!raw || *offset >= avail)
    return make_error("'" + path_ + "': cannot read file contents");
  size = std::min<size_t>(size, avail - *offset);
  const auto *p = reinterpret_cast<const uint8_t *>(raw) + *offset;
  return std::vector<uint8_t>(p, p + size);
}

std::optional<ElfFile::DebugLink> ElfFile::debug_link() const {
  const Section *s = section(".gnu_debuglink");
  if (!s)
    return std::nullopt;
  auto bytes = section_bytes(*s);
  if (!bytes || bytes->empty())
    return std::nullopt;
  const auto &b = *bytes;
  size_t len = strnlen(reinterpret_cast<const char *>(b.data()), b.size());
  // The name, NUL padding to a 4-byte boundary, then the CRC.
  size_t crc_off = (len + 4) & ~size_t{3};
  if (len == 0 || crc_off + 4 > b.size())
    return std::nullopt;
  DebugLink link;
  link.name.assign(reinterpret_cast<const char *>(b.data()), len);
  std::memcpy(&link.crc, b.data() + crc_off, 4);
  return link;
}

bool is_probeable_elf(const std::string &path) {
  auto file = ElfFile::open(path);
  if (!file)
    return false;
  if (file->kind() == ElfKind::SharedObject)
    return true;
  if (file->kind() != ElfKind::Executable)
    return false;
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IXUSR);
}

std::string build_id_hex(const std::vector<uint8_t> &build_id) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : build_id) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

} // namespace ubtrace::runtime::symbols
