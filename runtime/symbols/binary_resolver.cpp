#include "runtime/symbols/binary_resolver.h"

#include "runtime/symbols/elf_file.h"
#include "runtime/symbols/proc_maps.h"
#include "runtime/symbols/wildcard.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <dirent.h>
#include <filesystem>
#include <glob.h>
#include <set>
#include <sys/stat.h>

namespace ubtrace::runtime::symbols {
namespace {

std::vector<std::string> split_path_list(const std::string &list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t colon = list.find(':', start);
    if (colon == std::string::npos)
      colon = list.size();
    // An empty element means the current directory, as for execvp.
    std::string dir = list.substr(start, colon - start);
    out.push_back(dir.empty() ? "." : dir);
    start = colon + 1;
  }
  return out;
}

// "/proc/PID/root/...": a path through a process's root, already ours
// (how bpftrace's users name a container's files from the host).
bool through_proc_root(const std::string &path) {
  if (path.rfind("/proc/", 0) != 0)
    return false;
  size_t i = 6;
  while (i < path.size() && path[i] >= '0' && path[i] <= '9')
    ++i;
  return i > 6 && path.compare(i, 6, "/root/") == 0;
}

// An absolute path as the process sees it, for us to open.
std::string under_root(const BinaryResolveOptions &options,
                       const std::string &path) {
  return !options.root.empty() && !path.empty() && path[0] == '/' &&
                 !through_proc_root(path)
             ? options.root + path
             : path;
}

std::string env_or(const std::optional<std::string> &given, const char *var) {
  if (given)
    return *given;
  const char *v = std::getenv(var);
  return v ? v : "";
}

// Collects probeable files once each (by device and inode).
class Collector {
public:
  bool add(const std::string &path, BinarySource source) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
      return false;
    if (!is_probeable_elf(path))
      return false;
    if (!seen_.insert({st.st_dev, st.st_ino}).second)
      return true;
    out_.push_back(ResolvedBinary{path, source});
    return true;
  }
  bool empty() const { return out_.empty(); }
  std::vector<ResolvedBinary> take() { return std::move(out_); }

private:
  std::set<std::pair<dev_t, ino_t>> seen_;
  std::vector<ResolvedBinary> out_;
};

std::vector<std::string> glob_paths(const std::string &pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i)
      out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

// Library files in `dir` that `name` designates, shortest name first (the
// soname before longer versioned names).
std::vector<std::string> library_files_in(const std::string &dir,
                                          std::string_view name) {
  std::vector<std::string> names;
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return {};
  while (struct dirent *e = ::readdir(d))
    if (library_name_matches(name, e->d_name))
      names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end(),
            [](const std::string &a, const std::string &b) {
              return a.size() != b.size() ? a.size() < b.size() : a < b;
            });
  for (auto &n : names)
    n = dir + "/" + n;
  return names;
}

Result<std::vector<Mapping>> maps_of_all_processes() {
  std::vector<Mapping> all;
  DIR *d = ::opendir("/proc");
  if (!d)
    return make_error("cannot read /proc");
  while (struct dirent *e = ::readdir(d)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0])))
      continue;
    auto maps = read_proc_maps(static_cast<pid_t>(std::atoi(e->d_name)));
    if (maps)
      all.insert(all.end(), maps->begin(), maps->end());
  }
  ::closedir(d);
  return all;
}

} // namespace

std::vector<std::string> BinaryResolveOptions::default_library_dirs() {
#if defined(__x86_64__)
  const char *triple = "x86_64-linux-gnu";
#elif defined(__aarch64__)
  const char *triple = "aarch64-linux-gnu";
#else
  const char *triple = "";
#endif
  std::vector<std::string> dirs;
  if (*triple) {
    dirs.push_back(std::string("/lib/") + triple);
    dirs.push_back(std::string("/usr/lib/") + triple);
  }
  for (const char *d :
       {"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib"})
    dirs.emplace_back(d);
  return dirs;
}

namespace {

Result<std::vector<ResolvedBinary>>
resolve_all_mapped(const BinaryResolveOptions &options) {
  Collector found;
  auto maps =
      options.pid ? read_proc_maps(*options.pid) : maps_of_all_processes();
  if (!maps)
    return make_error(maps.error());
  for (const auto &path : mapped_file_paths(*maps))
    found.add(options.pid ? under_root(options, path) : path,
              BinarySource::ProcessMaps);
  if (found.empty())
    return make_error("no probeable file is mapped by " +
                      (options.pid ? "process " + std::to_string(*options.pid)
                                   : std::string("any process")));
  return found.take();
}

Result<std::vector<ResolvedBinary>>
resolve_glob(const std::string &bin, const BinaryResolveOptions &options) {
  Collector found;
  std::vector<std::string> patterns{under_root(options, bin)};
  if (bin.find('/') == std::string::npos)
    for (const auto &dir : split_path_list(env_or(options.path_env, "PATH")))
      patterns.push_back(under_root(options, dir + "/" + bin));
  for (const auto &pattern : patterns)
    for (const auto &path : glob_paths(pattern))
      found.add(path, BinarySource::Glob);
  if (found.empty())
    return make_error("no executable or library matches '" + bin + "'");
  return found.take();
}

// The library ld.so would load for `name` (in the process when there is
// one), recording where it looked.
Result<void> find_library(const std::string &name,
                          const BinaryResolveOptions &options, Collector &found,
                          std::vector<std::string> &searched) {
  if (options.pid) {
    searched.push_back("/proc/" + std::to_string(*options.pid) + "/maps");
    auto maps = read_proc_maps(*options.pid);
    if (!maps)
      return make_error(maps.error());
    // What the process maps is what ld.so picked.
    for (const auto &path : mapped_file_paths(*maps))
      if (library_name_matches(name, path))
        found.add(path, BinarySource::ProcessMaps);
    if (!found.empty())
      return {};
    // Not loaded (yet: it may be dlopen()ed later): ld.so's answer.
  }
  std::string ld_path = env_or(options.ld_library_path, "LD_LIBRARY_PATH");
  if (!ld_path.empty()) {
    searched.push_back("LD_LIBRARY_PATH");
    for (const auto &dir : split_path_list(ld_path))
      for (const auto &path : library_files_in(under_root(options, dir), name))
        if (found.add(path, BinarySource::LdLibraryPath))
          return {};
  }
  searched.push_back(under_root(options, options.ld_cache));
  if (auto cache = read_ld_cache(under_root(options, options.ld_cache)))
    for (const auto &entry : *cache)
      if (ld_cache_entry_is_native(entry) &&
          library_name_matches(name, entry.soname) &&
          found.add(under_root(options, entry.path), BinarySource::LdCache))
        return {};
  for (const auto &dir : options.default_dirs) {
    searched.push_back(under_root(options, dir));
    for (const auto &path : library_files_in(under_root(options, dir), name))
      if (found.add(path, BinarySource::DefaultDir))
        return {};
  }
  return {};
}

// A program: the current directory first (bpftrace tries BIN as given),
// then PATH.
void find_program(const std::string &name, const BinaryResolveOptions &options,
                  Collector &found, std::vector<std::string> &searched) {
  searched.push_back("./" + name);
  found.add(name, BinarySource::CurrentDir);
  searched.push_back("PATH");
  for (const auto &dir : split_path_list(env_or(options.path_env, "PATH")))
    found.add(under_root(options, dir + "/" + name), BinarySource::SearchPath);
}

} // namespace

std::string process_root(pid_t pid) {
  std::string proc = "/proc/" + std::to_string(pid);
  std::string root = proc + "/root";
  struct stat theirs, ours;
  if (::stat(root.c_str(), &theirs) != 0 || ::stat("/", &ours) != 0)
    return "";
  if (theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino)
    return root;
  // The same root directory in another mount namespace (unshare -m) may
  // have other files mounted below it: looked up through its root too.
  struct stat their_ns, our_ns;
  if (::stat((proc + "/ns/mnt").c_str(), &their_ns) == 0 &&
      ::stat("/proc/self/ns/mnt", &our_ns) == 0 &&
      (their_ns.st_dev != our_ns.st_dev || their_ns.st_ino != our_ns.st_ino))
    return root;
  return "";
}

Result<std::vector<ResolvedBinary>>
resolve_binary(std::string_view bin_view, const BinaryResolveOptions &options) {
  const std::string bin(bin_view);
  if (bin.empty())
    return make_error("no binary given");
  if (bin == "*")
    return resolve_all_mapped(options);
  if (has_wildcard(bin))
    return resolve_glob(bin, options);

  Collector found;
  if (bin.find('/') != std::string::npos) {
    if (!found.add(under_root(options, bin), BinarySource::GivenPath))
      return make_error(
          "'" + bin + "' does not exist or is not an executable or library" +
          (options.root.empty() ? "" : " (in " + options.root + ")"));
    return found.take();
  }

  std::vector<std::string> searched;
  if (looks_like_library(bin)) {
    if (auto ok = find_library(bin, options, found, searched); !ok)
      return std::move(ok).take_error();
    if (!found.empty())
      return found.take();
  }
  find_program(bin, options, found, searched);
  if (!found.empty())
    return found.take();

  std::string list;
  for (const auto &s : searched)
    list += (list.empty() ? "" : ", ") + s;
  return make_error("no binary or library named '" + bin + "' (searched " +
                    list + ")");
}

} // namespace ubtrace::runtime::symbols
