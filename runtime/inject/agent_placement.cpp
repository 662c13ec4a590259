#include "runtime/inject/agent_placement.h"

#include "runtime/file_text.h"
#include "runtime/inject/channel.h"
#include "runtime/inject/elf_dynsym.h"
#include "runtime/inject/proc_maps.h"
#include "runtime/inject/sys_error.h"
#include "runtime/inject/unique_fd.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fcntl.h>
#include <optional>
#include <sstream>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace ubtrace::runtime::inject {
namespace {

// Where a copy may go, in the target's view, best first.
constexpr const char *kCopyDirs[] = {"/tmp", "/dev/shm", "/var/tmp", "/run"};
constexpr const char *kCopyPrefix = "/.ubtrace-agent-";
// Where the loader looks after RUNPATH and its cache (Debian's multiarch
// folders first): for the agent's dependencies, here and in the target.
constexpr const char *kLibraryDirs[] = {"/lib/x86_64-linux-gnu",
                                        "/usr/lib/x86_64-linux-gnu",
                                        "/lib64",
                                        "/usr/lib64",
                                        "/lib",
                                        "/usr/lib"};

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string &field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' &&
        field[i + 1] <= '3') {
      out += static_cast<char>((field[i + 1] - '0') * 64 +
                               (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

// The rest of `path` below folder `dir` ("" for the folder itself), if it
// is inside it (a whole-component prefix).
std::optional<std::string> below(const std::string &dir,
                                 const std::string &path) {
  if (dir == "/")
    return path.size() > 1 ? path.substr(1) : std::string();
  if (path.compare(0, dir.size(), dir) != 0)
    return std::nullopt;
  if (path.size() == dir.size())
    return std::string();
  if (path[dir.size()] != '/')
    return std::nullopt;
  return path.substr(dir.size() + 1);
}

std::string join(const std::string &dir, const std::string &rest) {
  if (rest.empty())
    return dir;
  return dir == "/" ? "/" + rest : dir + "/" + rest;
}

bool same_file(const struct stat &file, const std::string &path) {
  struct stat other{};
  return ::stat(path.c_str(), &other) == 0 && other.st_dev == file.st_dev &&
         other.st_ino == file.st_ino;
}

std::string base_name(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool has_option(const std::string &options, const std::string &name) {
  std::stringstream in(options);
  std::string option;
  while (std::getline(in, option, ','))
    if (option == name)
      return true;
  return false;
}

// glibc's own parts: the process's are loaded already and must serve.
bool part_of_glibc(const std::string &soname) {
  for (const char *part :
       {"libc.so.", "ld-linux", "libm.so.", "libpthread.so.", "libdl.so.",
        "librt.so.", "libresolv.so.", "libutil.so."})
    if (soname.rfind(part, 0) == 0)
      return true;
  return false;
}

// 1. The name a copy made by an earlier trace was loaded under.
std::optional<std::string> loaded_copy(pid_t pid, const std::string &base) {
  auto maps = read_maps(pid);
  if (!maps)
    return std::nullopt;
  for (const MappedRegion &region : *maps) {
    if (base_name(region.path) != base)
      continue;
    size_t at = region.path.rfind(kCopyPrefix);
    if (at == std::string::npos)
      continue;
    std::string before = region.path.substr(0, at);
    for (const char *dir : kCopyDirs) {
      std::string d(dir);
      if (before.size() >= d.size() &&
          before.compare(before.size() - d.size(), d.size(), d) == 0)
        return d + region.path.substr(at);
    }
  }
  return std::nullopt;
}

// 2. The agent's file under another name in the target's mounts.
std::optional<std::string> through_mounts(pid_t pid, const std::string &agent,
                                          const struct stat &file,
                                          const std::string &root) {
  auto ours = read_file("/proc/self/mountinfo");
  auto theirs = read_file("/proc/" + std::to_string(pid) + "/mountinfo");
  if (!ours || !theirs)
    return std::nullopt;
  auto own_mounts = parse_mountinfo(*ours);
  const MountEntry *own = mount_of(own_mounts, agent);
  if (!own)
    return std::nullopt;
  auto rest = below(own->mount_point, agent);
  if (!rest)
    return std::nullopt;
  const std::string in_fs = join(own->root, *rest);
  auto mounts = parse_mountinfo(*theirs);
  for (auto it = mounts.rbegin(); it != mounts.rend(); ++it) {
    if (it->major != own->major || it->minor != own->minor)
      continue;
    auto inside = below(it->root, in_fs);
    if (!inside)
      continue;
    std::string candidate = join(it->mount_point, *inside);
    if (same_file(file, root + candidate))
      return candidate;
  }
  return std::nullopt;
}

// The host's file for library `soname` needed by `from`.
std::optional<std::string> host_library(const std::string &soname,
                                        const std::string &from) {
  std::string next_to = from.substr(0, from.rfind('/')) + "/" + soname;
  if (::access(next_to.c_str(), R_OK) == 0)
    return next_to;
  for (const char *dir : kLibraryDirs) {
    std::string path = std::string(dir) + "/" + soname;
    if (::access(path.c_str(), R_OK) == 0)
      return path;
  }
  return std::nullopt;
}

// Whether the target's loader finds `soname` (ours at `host`) too.
bool target_has_library(const std::string &root, const std::string &soname,
                        const std::string &host) {
  if (::access((root + host).c_str(), F_OK) == 0)
    return true;
  for (const char *dir : kLibraryDirs)
    if (::access((root + dir + "/" + soname).c_str(), F_OK) == 0)
      return true;
  return false;
}

// The files a copy needs: the agent, then what it needs that the target
// lacks (what ships with the agent always: it is found next to it).
Result<std::vector<std::string>> files_to_copy(const std::string &agent,
                                               const std::string &root) {
  std::vector<std::string> files{agent};
  const std::string home = agent.substr(0, agent.rfind('/'));
  for (size_t i = 0; i < files.size(); ++i) {
    UniqueFd fd(::open(files[i].c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid())
      return sys_error("cannot read " + files[i], errno);
    auto elf = ElfDynamicSymbols::read(fd.get(), files[i]);
    if (!elf)
      return std::move(elf).take_error();
    for (const std::string &soname : elf->needed()) {
      if (part_of_glibc(soname))
        continue;
      auto host = host_library(soname, files[i]);
      if (!host)
        return make_error("cannot find " + soname + ", needed by " + files[i]);
      bool ships_with_agent = host->rfind(home + "/", 0) == 0;
      if (!ships_with_agent && target_has_library(root, soname, *host))
        continue;
      bool listed = false;
      for (const std::string &f : files)
        listed = listed || base_name(f) == soname;
      if (!listed)
        files.push_back(*host);
    }
  }
  return files;
}

Result<void> copy_file(const std::string &from, const std::string &to) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid())
    return sys_error("cannot read " + from, errno);
  struct stat st{};
  if (::fstat(in.get(), &st) != 0)
    return sys_error("cannot read " + from, errno);
  UniqueFd out(
      ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755));
  if (!out.valid())
    return sys_error("cannot create " + to, errno);
  off_t offset = 0;
  while (offset < st.st_size) {
    ssize_t n = ::sendfile(out.get(), in.get(), &offset,
                           static_cast<size_t>(st.st_size - offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return sys_error("cannot write " + to, n < 0 ? errno : EIO);
  }
  return {};
}

} // namespace

std::vector<MountEntry> parse_mountinfo(const std::string &text) {
  std::vector<MountEntry> mounts;
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::stringstream fields(line);
    std::string id, parent, device, root, mount_point, options;
    if (!(fields >> id >> parent >> device >> root >> mount_point >> options))
      continue;
    MountEntry m;
    if (std::sscanf(device.c_str(), "%u:%u", &m.major, &m.minor) != 2)
      continue;
    m.root = unescape(root);
    m.mount_point = unescape(mount_point);
    m.options = options;
    mounts.push_back(std::move(m));
  }
  return mounts;
}

const MountEntry *mount_of(const std::vector<MountEntry> &mounts,
                           const std::string &path) {
  const MountEntry *found = nullptr;
  size_t longest = 0;
  for (const MountEntry &m : mounts) {
    if (!below(m.mount_point, path))
      continue;
    // Deeper wins; among equals, the later one is on top.
    if (!found || m.mount_point.size() >= longest) {
      found = &m;
      longest = m.mount_point.size();
    }
  }
  return found;
}

Result<PlacedAgent> PlacedAgent::place(pid_t pid, const std::string &agent) {
  char resolved_buf[PATH_MAX];
  if (!::realpath(agent.c_str(), resolved_buf))
    return sys_error("agent " + agent, errno);
  const std::string resolved(resolved_buf);
  struct stat file{};
  if (::stat(resolved.c_str(), &file) != 0)
    return sys_error("agent " + resolved, errno);
  const std::string root = "/proc/" + std::to_string(pid) + "/root";

  PlacedAgent placed;
  if (auto name = loaded_copy(pid, base_name(resolved))) {
    placed.path_ = *name;
    placed.how_ = "already loaded as " + *name;
    return placed;
  }
  if (same_file(file, root + resolved)) {
    placed.path_ = resolved;
    placed.how_ = "the same path";
    return placed;
  }
  if (::access(root.c_str(), X_OK) != 0)
    return sys_error("cannot see the files of process " + std::to_string(pid),
                     errno);
  auto files = files_to_copy(resolved, root);
  if (!files)
    return std::move(files).take_error();
  // Visible through a mount, and so is every library it needs (those
  // shipped with it are next to it there too).
  const std::string home = resolved.substr(0, resolved.rfind('/') + 1);
  bool needs_none = true;
  for (const std::string &f : *files)
    needs_none = needs_none && f.rfind(home, 0) == 0;
  if (auto name = through_mounts(pid, resolved, file, root);
      name && needs_none) {
    placed.path_ = *name;
    placed.how_ = "as " + *name + " in its mounts";
    return placed;
  }

  auto theirs = read_file("/proc/" + std::to_string(pid) + "/mountinfo");
  auto mounts = theirs ? parse_mountinfo(*theirs) : std::vector<MountEntry>{};
  auto suffix = random_hex128();
  if (!suffix)
    return std::move(suffix).take_error();
  std::string tried;
  for (const char *dir : kCopyDirs) {
    const MountEntry *m = mount_of(mounts, dir);
    struct stat st{};
    std::string host_dir = root + dir;
    if (::stat(host_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        (m && has_option(m->options, "noexec")) ||
        (m && has_option(m->options, "ro")))
      continue;
    std::string name = std::string(dir) + kCopyPrefix + std::to_string(pid) +
                       "-" + suffix->substr(0, 12);
    if (::mkdir((root + name).c_str(), 0755) != 0) {
      tried += std::string(tried.empty() ? "" : ", ") + dir + ": " +
               std::strerror(errno);
      continue;
    }
    // Not subject to our umask: the target may run as another user.
    ::chmod((root + name).c_str(), 0755);
    placed.copy_dir_ = root + name;
    for (const std::string &f : *files) {
      std::string to = placed.copy_dir_ + "/" + base_name(f);
      placed.copied_.push_back(to);
      auto ok = copy_file(f, to);
      if (!ok)
        return std::move(ok).take_error(); // the destructor cleans up
      ::chmod(to.c_str(), 0755);
    }
    placed.path_ = name + "/" + base_name(resolved);
    placed.how_ = "copied into " + name;
    return placed;
  }
  return make_error(
      "agent " + resolved + " is not visible to process " +
      std::to_string(pid) +
      " (another mount namespace or root), and no folder of its own "
      "(/tmp, /dev/shm, /var/tmp, /run: writable, not noexec) can take a "
      "copy" +
      (tried.empty() ? std::string() : " (" + tried + ")"));
}

PlacedAgent::PlacedAgent(PlacedAgent &&other) noexcept
    : path_(std::move(other.path_)), how_(std::move(other.how_)),
      copy_dir_(std::exchange(other.copy_dir_, std::string())),
      copied_(std::move(other.copied_)) {
  other.copied_.clear();
}

PlacedAgent::~PlacedAgent() {
  if (copy_dir_.empty())
    return;
  for (const std::string &f : copied_)
    ::unlink(f.c_str());
  ::rmdir(copy_dir_.c_str());
}

} // namespace ubtrace::runtime::inject
