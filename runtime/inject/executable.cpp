#include "runtime/inject/executable.h"

#include "runtime/inject/sys_error.h"
#include "runtime/inject/unique_fd.h"

#include <cerrno>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <vector>

namespace ubtrace::runtime::inject {
namespace {

bool is_executable_file(const std::string &path, int *err) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    *err = errno;
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *err = EACCES;
    return false;
  }
  if (::access(path.c_str(), X_OK) != 0) {
    *err = errno;
    return false;
  }
  return true;
}

Result<std::vector<char>> read_head(const std::string &path, size_t size) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return sys_error("cannot open " + path, errno);
  std::vector<char> head(size);
  ssize_t n = ::pread(fd.get(), head.data(), head.size(), 0);
  if (n < 0)
    return sys_error("cannot read " + path, errno);
  head.resize(static_cast<size_t>(n));
  return head;
}

Result<void> check_secure_mode(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return sys_error("cannot stat " + path, errno);
  bool setuid = (st.st_mode & S_ISUID) && st.st_uid != ::geteuid();
  bool setgid = (st.st_mode & S_ISGID) && st.st_gid != ::getegid();
  if (setuid || setgid)
    return make_error(path + " is set-user/group-ID: the dynamic loader "
                             "ignores LD_PRELOAD for it, so the agent "
                             "cannot be loaded (attach with -p instead)");
  if (::getxattr(path.c_str(), "security.capability", nullptr, 0) > 0)
    return make_error(path + " has file capabilities: the dynamic loader "
                             "ignores LD_PRELOAD for it, so the agent "
                             "cannot be loaded (attach with -p instead)");
  return {};
}

Result<std::vector<Elf64_Phdr>> read_program_headers(const std::string &path,
                                                     const Elf64_Ehdr &ehdr) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return sys_error("cannot open " + path, errno);
  if (ehdr.e_phentsize != sizeof(Elf64_Phdr))
    return make_error(path + ": unexpected program header size");
  std::vector<Elf64_Phdr> phdrs(ehdr.e_phnum);
  size_t bytes = phdrs.size() * sizeof(Elf64_Phdr);
  if (::pread(fd.get(), phdrs.data(), bytes,
              static_cast<off_t>(ehdr.e_phoff)) != static_cast<ssize_t>(bytes))
    return make_error(path + ": truncated program headers");
  return phdrs;
}

Result<void> check_elf(const std::string &path, const std::vector<char> &head) {
  if (head.size() < sizeof(Elf64_Ehdr) || head[EI_CLASS] != ELFCLASS64)
    return make_error(path + " is not a 64-bit ELF program: ubtrace traces "
                             "x86-64 programs only");
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, head.data(), sizeof ehdr);
  if (ehdr.e_machine != EM_X86_64)
    return make_error(path + " is not an x86-64 program");
  if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN)
    return make_error(path + " is not an executable ELF file");

  auto phdrs = read_program_headers(path, ehdr);
  if (!phdrs)
    return std::move(phdrs).take_error();
  for (const Elf64_Phdr &ph : *phdrs)
    if (ph.p_type == PT_INTERP)
      return check_secure_mode(path);
  return make_error(path + " is statically linked: the agent is loaded with "
                           "LD_PRELOAD, which needs the dynamic loader");
}

Result<void> check_program(const std::string &path, int depth) {
  if (depth > 4)
    return make_error(path + ": too many levels of #! interpreters");
  auto head = read_head(path, 256);
  if (!head)
    return std::move(head).take_error();
  const std::vector<char> &bytes = *head;
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0)
    return check_elf(path, bytes);
  if (bytes.size() >= 2 && bytes[0] == '#' && bytes[1] == '!') {
    std::string line(bytes.begin() + 2, bytes.end());
    line = line.substr(0, line.find('\n'));
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos)
      return make_error(path + ": empty #! line");
    size_t end = line.find_first_of(" \t\r", start);
    std::string interpreter = line.substr(start, end - start);
    if (auto secure = check_secure_mode(path); !secure)
      return secure;
    return check_program(interpreter, depth + 1);
  }
  return make_error(path + ": exec format error (neither an ELF program nor "
                           "a #! script)");
}

} // namespace

Result<std::string>
find_executable(const std::string &name,
                const std::optional<std::string> &path_env) {
  if (name.empty())
    return make_error("command not found: empty program name");
  int err = 0;
  if (name.find('/') != std::string::npos) {
    if (is_executable_file(name, &err))
      return name;
    if (err == ENOENT || err == ENOTDIR)
      return make_error("command not found: " + name);
    return sys_error("cannot execute " + name, err);
  }

  std::string search = path_env ? *path_env : "/bin:/usr/bin";
  std::string denied;
  size_t start = 0;
  for (;;) {
    size_t colon = search.find(':', start);
    std::string dir = search.substr(
        start, colon == std::string::npos ? std::string::npos : colon - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (is_executable_file(candidate, &err))
      return candidate;
    if (err == EACCES && denied.empty())
      denied = candidate;
    if (colon == std::string::npos)
      break;
    start = colon + 1;
  }
  if (!denied.empty())
    return make_error("permission denied: " + denied);
  return make_error("command not found: " + name);
}

Result<void> check_preloadable(const std::string &path) {
  return check_program(path, 0);
}

namespace {

struct ElfHeaders {
  Elf64_Ehdr ehdr;
  std::vector<Elf64_Phdr> phdrs;
};

Result<ElfHeaders> read_headers(const std::string &path) {
  auto head = read_head(path, sizeof(Elf64_Ehdr));
  if (!head)
    return std::move(head).take_error();
  if (head->size() < sizeof(Elf64_Ehdr) ||
      std::memcmp(head->data(), ELFMAG, SELFMAG) != 0)
    return make_error(path + " is not an ELF file");
  ElfHeaders h;
  std::memcpy(&h.ehdr, head->data(), sizeof h.ehdr);
  auto phdrs = read_program_headers(path, h.ehdr);
  if (!phdrs)
    return std::move(phdrs).take_error();
  h.phdrs = std::move(*phdrs);
  return h;
}

} // namespace

Result<bool> elf_shared_library(const std::string &path) {
  auto h = read_headers(path);
  if (!h)
    return std::move(h).take_error();
  if (h->ehdr.e_type != ET_DYN)
    return false;
  bool interp = false;
  const Elf64_Phdr *dynamic = nullptr;
  for (const Elf64_Phdr &ph : h->phdrs) {
    interp = interp || ph.p_type == PT_INTERP;
    if (ph.p_type == PT_DYNAMIC)
      dynamic = &ph;
  }
  if (!interp)
    return true;
  if (!dynamic || dynamic->p_filesz > (1u << 20))
    return false;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  std::vector<Elf64_Dyn> entries(dynamic->p_filesz / sizeof(Elf64_Dyn));
  size_t bytes = entries.size() * sizeof(Elf64_Dyn);
  if (!fd.valid() || ::pread(fd.get(), entries.data(), bytes,
                             static_cast<off_t>(dynamic->p_offset)) !=
                         static_cast<ssize_t>(bytes))
    return make_error(path + ": cannot read its dynamic section");
  for (const Elf64_Dyn &d : entries) {
    if (d.d_tag == DT_NULL)
      break;
    if (d.d_tag == DT_SONAME)
      return true;
  }
  return false;
}

Result<std::optional<std::string>> elf_interpreter(const std::string &path) {
  auto headers = read_headers(path);
  if (!headers)
    return std::move(headers).take_error();
  for (const Elf64_Phdr &ph : headers->phdrs) {
    if (ph.p_type != PT_INTERP)
      continue;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    std::string interp(ph.p_filesz, '\0');
    if (!fd.valid() || ::pread(fd.get(), interp.data(), interp.size(),
                               static_cast<off_t>(ph.p_offset)) !=
                           static_cast<ssize_t>(interp.size()))
      return make_error(path + ": cannot read its interpreter");
    interp.resize(strnlen(interp.c_str(), interp.size()));
    return std::optional<std::string>(interp);
  }
  return std::optional<std::string>();
}

} // namespace ubtrace::runtime::inject
