#include "backends/cli/c_headers.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace ubtrace::cli {

namespace {

// A temporary file removed with this object.
struct TempFile {
  std::string path;
  TempFile() {
    char name[] = "/tmp/ubtrace-cpp-XXXXXX";
    int fd = mkstemp(name);
    if (fd >= 0) {
      ::close(fd);
      path = name;
    }
  }
  ~TempFile() {
    if (!path.empty())
      ::unlink(path.c_str());
  }
};

std::string read_all(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "#define NAME BODY" lines of cpp -dM; function-like macros left out.
std::map<std::string, std::string> parse_defines(const std::string &text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("#define "))
      continue;
    size_t name_end = line.find_first_of(" (", 8);
    if (name_end == std::string::npos) {
      out[line.substr(8)] = "";
      continue;
    }
    if (line[name_end] == '(')
      continue;
    out[line.substr(8, name_end - 8)] = line.substr(name_end + 1);
  }
  return out;
}

// cpp's first error, without the temporary file's name: "lol/no.h: No
// such file or directory".
std::string first_error(const std::string &text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    for (const char *mark : {"fatal error: ", "error: "})
      if (size_t at = line.find(mark); at != std::string::npos)
        return line.substr(at + std::strlen(mark));
  }
  return text.empty() ? "the C preprocessor failed" : text;
}

} // namespace

std::optional<std::map<std::string, std::string>>
SystemHeaders::run_cpp(const std::string &source,
                       const std::vector<std::string> &forced,
                       std::string &error) const {
  TempFile in, out, err;
  if (in.path.empty() || out.path.empty() || err.path.empty()) {
    error =
        std::string("cannot create a temporary file: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::ofstream(in.path) << source;
  std::vector<std::string> args = {"cpp", "-dM", "-x", "c"};
  // "x.h" from the current directory (the temporary file's is /tmp).
  args.push_back("-iquote.");
  for (const auto &d : dirs_)
    args.push_back("-I" + d);
  for (const auto &f : forced) {
    args.push_back("-include");
    args.push_back(f);
  }
  args.push_back(in.path);
  std::vector<char *> argv;
  for (auto &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out.path.c_str(),
                                   O_WRONLY | O_TRUNC, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err.path.c_str(),
                                   O_WRONLY | O_TRUNC, 0);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "cpp", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    error = "#include needs the C preprocessor (cpp), which cannot be run: " +
            std::string(std::strerror(rc));
    return std::nullopt;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = first_error(read_all(err.path));
    return std::nullopt;
  }
  return parse_defines(read_all(out.path));
}

bool SystemHeaders::macros(const std::vector<std::string> &headers,
                           std::map<std::string, std::string> &out,
                           std::string &error) {
  // `<x>` and `"x"` as the script wrote them; a bare name or path is an
  // --include FILE, found as cpp -include finds it (the current directory
  // first).
  std::string source;
  std::vector<std::string> forced;
  for (const auto &h : headers)
    if (h.starts_with("<") || h.starts_with("\""))
      source += "#include " + h + "\n";
    else
      forced.push_back(h);
  auto all = run_cpp(source, forced, error);
  if (!all)
    return false;
  // The preprocessor's own macros (linux, unix, __x86_64__) are not the
  // headers'.
  auto predefined = run_cpp("", {}, error);
  if (!predefined)
    return false;
  for (auto &[name, body] : *all)
    if (!predefined->count(name))
      out[name] = std::move(body);
  return true;
}

std::vector<std::string> SystemHeaders::forced() const {
  return files_;
}

} // namespace ubtrace::cli
